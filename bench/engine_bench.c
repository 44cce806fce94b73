/*
 * bench/engine_bench.c: engine throughput and memory, measured (not a
 * test).  Runs N engines in one process with an in-memory FIFO pump and
 * reports engine events (dm_engine_step calls) per second under a
 * contended workload, then the heap bytes per active lock (a lock held by
 * one local client while every other node has a request deferred on it).
 *
 *   bench/engine_bench [nodes] [entries] [active-locks] [paper|majority] [algorithm]
 *
 * The failure policy defaults to paper (no leases: the algorithm alone);
 * majority, the daemon's default, adds the lease: a round per request,
 * acks riding on the answers, the pending-removal bookkeeping.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dm_engine.h"
#include "dm_msg.h"

#define BENCH_NODES_MAX	16
#define BENCH_QUEUE	(1u << 16)

struct packet {
	int		from, to;
	struct dm_msg	msg;
};

static struct {
	int		 n;
	struct dm_engine *e[BENCH_NODES_MAX];
	char		 names[BENCH_NODES_MAX][16];
	struct packet	*q;
	size_t		 head, tail;
	int		 stepping;
	uint64_t	 steps, grants;
	dm_msec_t	 now;
} B;

static int
node_index(const char *name)
{
	return atoi(name + 1);
}

static void
emit(void *ctx, const struct dm_effect *fx)
{
	if (fx->type == DM_FX_SEND) {
		struct packet *p = &B.q[B.tail++ % BENCH_QUEUE];
		p->from = B.stepping;
		p->to = node_index(fx->u.send.peer);
		/* Copy only the used part of the message (the header, and the
		 * payload some algorithms send: rcv's SI, a token's queue). */
		memcpy(&p->msg, fx->u.send.msg, offsetof(struct dm_msg, payload));
		memcpy(p->msg.payload, fx->u.send.msg->payload, fx->u.send.msg->payload_len);
	} else if (fx->type == DM_FX_GRANT) {
		B.grants++;
	}
}

static void
step(int node, struct dm_event *ev)
{
	ev->now = B.now;
	B.stepping = node;
	B.steps++;
	if (dm_engine_step(B.e[node], ev, emit, NULL) < 0) {
		fprintf(stderr, "step failed: node %d event %d\n", node, ev->type);
		exit(1);
	}
}

static void
pump(void)
{
	while (B.head < B.tail) {
		struct packet *p = &B.q[B.head++ % BENCH_QUEUE];
		struct dm_event ev = { .type = DM_EV_RECEIVE,
		    .u.receive = { .peer = B.names[p->from], .msg = &p->msg } };
		step(p->to, &ev);
	}
}

static void
acquire(int node, uint64_t handle, const char *lock)
{
	struct dm_event ev = { .type = DM_EV_ACQUIRE,
	    .u.acquire = { .handle = handle, .lock = lock, .lock_len = strlen(lock),
		.mode = DM_MODE_EXCLUSIVE, .wait_ms = DM_WAIT_FOREVER } };
	step(node, &ev);
}

static void
release(int node, uint64_t handle)
{
	struct dm_event ev = { .type = DM_EV_RELEASE, .u.release.handle = handle };
	step(node, &ev);
}

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	long entries = argc > 2 ? atol(argv[2]) : 200000;
	long active = argc > 3 ? atol(argv[3]) : 20000;
	const char *policy = argc > 4 ? argv[4] : "paper";
	const char *algorithm = argc > 5 ? argv[5] : "ricart-agrawala";
	struct dm_peer_spec peers[BENCH_NODES_MAX];
	char lock[32];
	double t0, t1;

	bool majority = strcmp(policy, "majority") == 0;

	if (n < 1 || n > BENCH_NODES_MAX || entries < 1 || active < 1 ||
	    (!majority && strcmp(policy, "paper") != 0))
		return 2;
	B.n = n;
	B.now = 1;
	B.q = calloc(BENCH_QUEUE, sizeof(*B.q));
	for (int i = 0; i < n; i++) {
		snprintf(B.names[i], sizeof(B.names[i]), "n%d", i);
		peers[i].name = B.names[i];
		peers[i].address = "127.0.0.1:1";
	}
	for (int i = 0; i < n; i++) {
		struct dm_engine_config cfg = { .self = B.names[i], .cluster = "bench",
		    .algorithm = algorithm, .failure_policy = majority ? DM_FAILURE_MAJORITY : DM_FAILURE_PAPER,
		    .incarnation = 1, .peers = peers, .n_peers = (size_t)n };
		if (dm_engine_new(&cfg, &B.e[i]) != 0)
			return 1;
		struct dm_event ev = { .type = DM_EV_TICK };
		step(i, &ev);
	}

	/* Throughput: every node asks for one of 64 names, round after round. */
	uint64_t handle = 1;
	B.steps = 0;
	t0 = seconds();
	for (long k = 0; k < entries; k += n) {
		uint64_t first = handle;
		for (int i = 0; i < n; i++) {
			snprintf(lock, sizeof(lock), "lock/%ld", (k / n + (long)i) % 64);
			acquire(i, handle++, lock);
		}
		pump();
		for (int i = 0; i < n; i++)
			release(i, first + (uint64_t)i);
		pump();
		B.now++;
	}
	t1 = seconds();
	printf("engine_bench: nodes=%d algorithm=%s policy=%s entries=%ld grants=%lu events=%lu "
	    "time=%.3fs events/s=%.0f entries/s=%.0f\n", n, algorithm, policy, entries, (unsigned long)B.grants,
	    (unsigned long)B.steps, t1 - t0, (double)B.steps / (t1 - t0),
	    (double)B.grants / (t1 - t0));

	/* Memory: node 0 holds `active` locks; every other node waits on each
	 * (so node 0 defers n-1 requests per lock: the worst steady state). */
	struct mallinfo2 before = mallinfo2();
	for (long k = 0; k < active; k++) {
		snprintf(lock, sizeof(lock), "active/%ld", k);
		acquire(0, handle++, lock);
		pump();
		for (int i = 1; i < n; i++)
			acquire(i, handle++, lock);
		pump();
	}
	struct mallinfo2 after = mallinfo2();
	struct dm_engine_stats st;
	dm_engine_get_stats(B.e[0], &st);
	printf("engine_bench: active locks=%zu on node 0, heap bytes per active lock "
	    "(node 0 holding, %d deferred each, plus %d waiting nodes' state)=%.0f\n",
	    st.locks_active, n - 1, n - 1,
	    (double)(after.uordblks - before.uordblks) / (double)active);
	printf("engine_bench: per node ~%.0f bytes per active lock\n",
	    (double)(after.uordblks - before.uordblks) / (double)active / n);
	for (int i = 0; i < n; i++)
		dm_engine_free(B.e[i]);
	free(B.q);
	return 0;
}
