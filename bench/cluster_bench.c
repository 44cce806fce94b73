/*
 * cluster_bench.c: latency and throughput of a running dmlock cluster
 * through libdmlock (a benchmark, not a test; bench/cluster_bench.sh starts
 * a 3-node loopback cluster and runs it).  Measures, in one run:
 *   floor       one Unix-socket round trip (dmlock_ping) + one TLS 1.3
 *               round trip over loopback (a 1-byte echo between two sockets
 *               of this process, with the cluster's certificates)
 *   uncontended acquire+release on node 1, p50/p99
 *   handoff     release on one node -> grant on another, two waiters
 *   throughput  8 clients spread over the nodes on one lock
 *   msgs/entry  peer DATA frames (engine messages) every daemon wrote during
 *               the uncontended phase, from the PEER lines of each node's
 *               STATUS, per acquire+release (less the idle rate: heartbeats)
 * and prints each figure with its ratio to the floor.
 *
 * usage: cluster_bench -s SOCK1,SOCK2,SOCK3 -c CERT -k KEY -a CA [-n N] [-d SEC]
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "dmlock.h"

#define BENCH_NODES_MAX	8
#define BENCH_SAMPLES_MAX 100000

struct bench {
	char		*socks[BENCH_NODES_MAX];
	int		 n_socks;
	const char	*cert, *key, *ca;
	int		 iterations;
	int		 seconds;
};

static double
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double
percentile(double *v, int n, double p)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	int i = (int)(p * (n - 1) + 0.5);
	return v[i];
}

static void
die(const char *what, int r)
{
	fprintf(stderr, "cluster_bench: %s: %s\n", what, r < 0 ? dmlock_strerror(r) : "failed");
	exit(1);
}

static struct dmlock_conn *
connect_or_die(const char *sock)
{
	struct dmlock_conn *c = NULL;
	int r = dmlock_connect(sock, &c);
	if (r < 0)
		die(sock, r);
	return c;
}

/* ---- floor: Unix round trip + TLS round trip --------------------------- */

static double
unix_rtt_us(const struct bench *b)
{
	static double v[BENCH_SAMPLES_MAX];
	struct dmlock_conn *c = connect_or_die(b->socks[0]);
	int n = b->iterations;
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		int r = dmlock_ping(c, NULL);
		if (r < 0)
			die("ping", r);
		v[i] = now_us() - t0;
	}
	dmlock_close(c);
	return percentile(v, n, 0.5);
}

struct tls_echo {
	SSL_CTX	*ctx;
	int	 listen_fd;
	int	 rounds;
};

static SSL_CTX *
tls_ctx(const struct bench *b, bool server)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_use_certificate_file(ctx, b->cert, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, b->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, b->ca, NULL) != 1) {
		ERR_print_errors_fp(stderr);
		die("TLS context", 0);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return ctx;
}

static void
nodelay(int fd)
{
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void *
tls_echo_server(void *arg)
{
	struct tls_echo *e = arg;
	int fd = accept(e->listen_fd, NULL, NULL);
	if (fd < 0)
		return NULL;
	nodelay(fd);
	SSL *ssl = SSL_new(e->ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) == 1) {
		char byte;
		for (int i = 0; i < e->rounds; i++)
			if (SSL_read(ssl, &byte, 1) != 1 || SSL_write(ssl, &byte, 1) != 1)
				break;
	}
	SSL_free(ssl);
	close(fd);
	return NULL;
}

static double
tls_rtt_us(const struct bench *b)
{
	static double v[BENCH_SAMPLES_MAX];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	struct tls_echo e = { .ctx = tls_ctx(b, true), .rounds = b->iterations };
	pthread_t server;

	e.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (e.listen_fd < 0 || bind(e.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(e.listen_fd, 1) < 0 || getsockname(e.listen_fd, (struct sockaddr *)&sa, &len) < 0)
		die("TLS echo listen", -errno);
	pthread_create(&server, NULL, tls_echo_server, &e);
	SSL_CTX *cctx = tls_ctx(b, false);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("TLS echo connect", -errno);
	nodelay(fd);
	SSL *ssl = SSL_new(cctx);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		ERR_print_errors_fp(stderr);
		die("TLS handshake", 0);
	}
	char byte = 'x';
	for (int i = 0; i < b->iterations; i++) {
		double t0 = now_us();
		if (SSL_write(ssl, &byte, 1) != 1 || SSL_read(ssl, &byte, 1) != 1)
			die("TLS echo", 0);
		v[i] = now_us() - t0;
	}
	SSL_shutdown(ssl);
	SSL_free(ssl);
	close(fd);
	pthread_join(server, NULL);
	close(e.listen_fd);
	SSL_CTX_free(cctx);
	SSL_CTX_free(e.ctx);
	return percentile(v, b->iterations, 0.5);
}

/* ---- DATA frames sent, from the daemons' STATUS ------------------------- */

/* The sum over every node of the DATA frames it wrote to its peers (field
 * <sent> of the PEER lines), or -1 if a daemon does not report them. */
static long long
data_frames_sent(const struct bench *b)
{
	long long total = 0;

	for (int i = 0; i < b->n_socks; i++) {
		struct dmlock_conn *c = connect_or_die(b->socks[i]);
		char *text = NULL, *save = NULL;
		int r = dmlock_status(c, &text);
		if (r < 0)
			die("status", r);
		for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
			char state[16], sent[24];
			if (strncmp(line, "PEER ", 5) != 0)
				continue;
			if (sscanf(line, "PEER %*s %*s %15s %*s %*s %23s", state, sent) != 2) {
				if (sscanf(line, "PEER %*s %*s %15s", state) == 1 && strcmp(state, "self") == 0)
					continue;
				total = -1;	/* an older daemon: no counters */
				break;
			}
			if (strcmp(state, "self") != 0 && strcmp(sent, "-") != 0)
				total += strtoll(sent, NULL, 10);
		}
		free(text);
		dmlock_close(c);
		if (total < 0)
			return -1;
	}
	return total;
}

/* ---- uncontended -------------------------------------------------------- */

static void
uncontended(const struct bench *b, double *p50, double *p99)
{
	static double v[BENCH_SAMPLES_MAX];
	struct dmlock_conn *c = connect_or_die(b->socks[0]);
	for (int i = 0; i < b->iterations; i++) {
		struct dmlock_lock *l = NULL;
		double t0 = now_us();
		int r = dmlock_acquire(c, "bench/uncontended", DMLOCK_EXCLUSIVE, DMLOCK_FOREVER, &l);
		if (r < 0)
			die("acquire", r);
		r = dmlock_release(l);
		if (r < 0)
			die("release", r);
		v[i] = now_us() - t0;
	}
	dmlock_close(c);
	*p50 = percentile(v, b->iterations, 0.5);
	*p99 = percentile(v, b->iterations, 0.99);
}

/* ---- handoff ------------------------------------------------------------ */

struct handoff {
	const struct bench	*b;
	_Atomic double		 last_release;
	atomic_int		 last_holder;
	atomic_int		 samples;
	double			 v[BENCH_SAMPLES_MAX];
	int			 rounds;
};

struct handoff_arg {
	struct handoff	*h;
	int		 id;
};

static void *
handoff_thread(void *arg)
{
	struct handoff_arg *a = arg;
	struct handoff *h = a->h;
	struct dmlock_conn *c = connect_or_die(h->b->socks[a->id % h->b->n_socks]);
	for (int i = 0; i < h->rounds; i++) {
		struct dmlock_lock *l = NULL;
		int r = dmlock_acquire(c, "bench/handoff", DMLOCK_EXCLUSIVE, DMLOCK_FOREVER, &l);
		if (r < 0)
			die("acquire", r);
		double t = now_us();
		int prev = atomic_exchange(&h->last_holder, a->id);
		if (prev >= 0 && prev != a->id) {
			int k = atomic_fetch_add(&h->samples, 1);
			if (k < BENCH_SAMPLES_MAX)
				h->v[k] = t - atomic_load(&h->last_release);
		}
		atomic_store(&h->last_release, now_us());
		r = dmlock_release(l);
		if (r < 0)
			die("release", r);
	}
	dmlock_close(c);
	return NULL;
}

static void
handoff(const struct bench *b, double *p50, double *p99)
{
	static struct handoff h;
	struct handoff_arg args[2];
	pthread_t t[2];

	h.b = b;
	h.rounds = b->iterations;
	atomic_store(&h.last_holder, -1);
	for (int i = 0; i < 2; i++) {
		args[i] = (struct handoff_arg){ .h = &h, .id = i };
		pthread_create(&t[i], NULL, handoff_thread, &args[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int n = atomic_load(&h.samples);
	n = n < BENCH_SAMPLES_MAX ? n : BENCH_SAMPLES_MAX;
	*p50 = percentile(h.v, n, 0.5);
	*p99 = percentile(h.v, n, 0.99);
}

/* ---- throughput --------------------------------------------------------- */

struct tput_arg {
	const struct bench	*b;
	int			 id;
	double			 until;
	long			 count;
};

static void *
tput_thread(void *arg)
{
	struct tput_arg *a = arg;
	struct dmlock_conn *c = connect_or_die(a->b->socks[a->id % a->b->n_socks]);
	while (now_us() < a->until) {
		struct dmlock_lock *l = NULL;
		int r = dmlock_acquire(c, "bench/throughput", DMLOCK_EXCLUSIVE, DMLOCK_FOREVER, &l);
		if (r < 0)
			die("acquire", r);
		if ((r = dmlock_release(l)) < 0)
			die("release", r);
		a->count++;
	}
	dmlock_close(c);
	return NULL;
}

static double
throughput(const struct bench *b, int clients)
{
	struct tput_arg args[8];
	pthread_t t[8];
	double t0 = now_us(), until = t0 + b->seconds * 1e6;
	long total = 0;

	for (int i = 0; i < clients; i++) {
		args[i] = (struct tput_arg){ .b = b, .id = i, .until = until };
		pthread_create(&t[i], NULL, tput_thread, &args[i]);
	}
	for (int i = 0; i < clients; i++) {
		pthread_join(t[i], NULL);
		total += args[i].count;
	}
	return (double)total / ((now_us() - t0) / 1e6);
}

static int
parse_args(int argc, char **argv, struct bench *b)
{
	char *socks = NULL;
	int c;
	b->iterations = 2000;
	b->seconds = 5;
	while ((c = getopt(argc, argv, "s:c:k:a:n:d:")) != -1) {
		switch (c) {
		case 's': socks = optarg; break;
		case 'c': b->cert = optarg; break;
		case 'k': b->key = optarg; break;
		case 'a': b->ca = optarg; break;
		case 'n': b->iterations = atoi(optarg); break;
		case 'd': b->seconds = atoi(optarg); break;
		default: return -EINVAL;
		}
	}
	if (socks == NULL || b->cert == NULL || b->key == NULL || b->ca == NULL ||
	    b->iterations <= 0 || b->iterations > BENCH_SAMPLES_MAX || b->seconds <= 0 ||
	    b->seconds > 3600)
		return -EINVAL;
	for (char *save = NULL, *s = strtok_r(socks, ",", &save); s != NULL && b->n_socks < BENCH_NODES_MAX;
	    s = strtok_r(NULL, ",", &save))
		b->socks[b->n_socks++] = s;
	return b->n_socks >= 2 ? 0 : -EINVAL;
}

int
main(int argc, char **argv)
{
	struct bench b = { 0 };
	double u50, u99, h50, h99;

	if (parse_args(argc, argv, &b) < 0) {
		fprintf(stderr, "usage: cluster_bench -s SOCK1,SOCK2[,...] -c CERT -k KEY -a CA "
		    "[-n ITERATIONS] [-d SECONDS]\n");
		return 64;
	}
	long long sent0, sent1, idle0, idle1;
	double t0, elapsed_us;
	double unix_rtt = unix_rtt_us(&b);
	double tls_rtt = tls_rtt_us(&b);
	double floor_us = unix_rtt + tls_rtt;
	printf("floor: unix round trip %.1f us + TLS round trip %.1f us = %.1f us (p50)\n",
	    unix_rtt, tls_rtt, floor_us);
	sent0 = data_frames_sent(&b);
	t0 = now_us();
	uncontended(&b, &u50, &u99);
	elapsed_us = now_us() - t0;
	sent1 = data_frames_sent(&b);
	printf("uncontended acquire+release (node 1, %d nodes): p50 %.1f us (%.2fx floor), "
	    "p99 %.1f us (%.2fx floor)\n", b.n_socks, u50, u50 / floor_us, u99, u99 / floor_us);
	/* The idle rate (heartbeats, lease renewals) over as long again, at most 5 s. */
	idle0 = data_frames_sent(&b);
	double idle_us = elapsed_us < 5e6 ? elapsed_us : 5e6, i0 = now_us();
	usleep((useconds_t)idle_us);
	idle1 = data_frames_sent(&b);
	idle_us = now_us() - i0;
	if (sent0 >= 0 && sent1 >= 0 && idle0 >= 0 && idle1 >= 0) {
		double raw = (double)(sent1 - sent0), background = (double)(idle1 - idle0) * elapsed_us / idle_us;
		printf("messages per entry (uncontended, DATA frames sent by all %d nodes): %.2f "
		    "(%lld frames / %d entries, less %.0f idle-rate frames; raw %.2f); "
		    "Ricart-Agrawala 2(N-1) = %d\n", b.n_socks, (raw - background) / b.iterations,
		    sent1 - sent0, b.iterations, background, raw / b.iterations, 2 * (b.n_socks - 1));
	} else {
		printf("messages per entry: not reported (a daemon without DATA frame counters)\n");
	}
	handoff(&b, &h50, &h99);
	printf("handoff release->grant on another node: p50 %.1f us (%.2fx floor, %.2fx one-way "
	    "TLS), p99 %.1f us (%.2fx floor)\n", h50, h50 / floor_us, h50 / (tls_rtt / 2), h99,
	    h99 / floor_us);
	double tput = throughput(&b, 8);
	printf("throughput, 8 clients over %d nodes, one lock: %.0f acquire+release/s "
	    "(%.1f us each, %.2fx floor)\n", b.n_socks, tput, 1e6 / tput, (1e6 / tput) / floor_us);
	return 0;
}
