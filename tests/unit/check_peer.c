/*
 * check_peer.c: the peer transport over real TLS on 127.0.0.1, with
 * certificates made by tools/mkcerts into a temporary directory at start:
 * 10,000 messages each way in order; links cut mid-stream (every message
 * still arrives exactly once, in order); a restarted peer (new incarnation)
 * reported and its stale messages dropped; a silent peer noticed by
 * keepalives; the send-queue limit and its overflow callback (fired
 * exactly when a send finds the limit unacknowledged); a resync (a dead
 * process's HELLO read after its successor's) reported as a lost
 * session; the handshake
 * limit and timeout; TLS
 * reload (every link closed and verified again: the session survives, a
 * peer revoked by the new CRL stays out); and the negative suite:
 * plaintext, wrong CA, expired, revoked, name mismatch, wrong cluster,
 * wrong algorithm, each refused with an observable reason; node names
 * shaped like IPv4 addresses link up (checked as DNS names both ways).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dmlockd/log.h"
#include "dmlockd/peer_transport.h"
#include "dmlockd/tls.h"

#define MESSAGES 10000

static char certdir[256];

struct node {
	const char		*name;
	struct peer_transport	*t;
	char			 addr[64];
	uint64_t		 received;	/* messages accepted */
	uint64_t		 expect;	/* next index expected */
	bool			 order_ok;
	int			 ups, downs, restarts, refusals;
	uint64_t		 restart_incarnation;
	char			 refusal[1024];
	uint64_t		 cut_at;	/* cut the link to cut_peer after this many */
	const char		*cut_peer;
	int			 cuts;
	int			 overflows;	/* on_send_overflow calls */
	size_t			 overflow_unacked;
	char			 overflow_peer[64];
	int			 sessions_lost;	/* on_session_lost calls */
	size_t			 lost_dropped;
	char			 lost_why[256];
};

static struct event_base *bases[2];
static size_t n_bases;

static dm_msec_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (dm_msec_t)ts.tv_sec * 1000 + (dm_msec_t)ts.tv_nsec / 1000000;
}

/* Run the event loop(s) until pred holds or timeout_ms pass. */
static bool
run_until(bool (*pred)(void *), void *arg, dm_msec_t timeout_ms)
{
	dm_msec_t deadline = now_ms() + timeout_ms;

	while (!pred(arg)) {
		if (now_ms() > deadline)
			return false;
		for (size_t i = 0; i < n_bases; i++) {
			struct timeval tv = { 0, n_bases > 1 ? 5000 : 20000 };
			event_base_loopexit(bases[i], &tv);
			event_base_dispatch(bases[i]);
		}
	}
	return true;
}

static void
on_message(void *ctx, const char *peer, const uint8_t *payload, size_t len)
{
	struct node *n = ctx;
	uint64_t index = 0;

	ck_assert_uint_ge(len, 8);
	for (int i = 0; i < 8; i++)
		index = (index << 8) | payload[i];
	for (size_t i = 8; i < len; i++)
		if (payload[i] != (uint8_t)(index + i))
			n->order_ok = false;	/* corrupted payload */
	if (index != n->expect)
		n->order_ok = false;
	n->expect = index + 1;
	n->received++;
	if (n->cut_peer != NULL && n->received == n->cut_at) {
		ck_assert_int_eq(peer_transport_cut_link(n->t, n->cut_peer), 0);
		n->cuts++;
	}
}

static void
on_link_up(void *ctx, const char *peer)
{
	((struct node *)ctx)->ups++;
}

static void
on_link_down(void *ctx, const char *peer)
{
	((struct node *)ctx)->downs++;
}

static void
on_peer_restarted(void *ctx, const char *peer, uint64_t incarnation)
{
	struct node *n = ctx;
	n->restarts++;
	n->restart_incarnation = incarnation;
}

static void
on_refused(void *ctx, const char *peer, const char *reason)
{
	struct node *n = ctx;
	n->refusals++;
	snprintf(n->refusal, sizeof(n->refusal), "%s", reason);
}

static void
on_send_overflow(void *ctx, const char *peer, size_t unacked)
{
	struct node *n = ctx;
	n->overflows++;
	n->overflow_unacked = unacked;
	snprintf(n->overflow_peer, sizeof(n->overflow_peer), "%s", peer);
}

static void
on_session_lost(void *ctx, const char *peer, size_t dropped, const char *why)
{
	struct node *n = ctx;
	n->sessions_lost++;
	n->lost_dropped = dropped;
	snprintf(n->lost_why, sizeof(n->lost_why), "%s: %s", peer, why);
}

static const struct peer_transport_callbacks callbacks = {
	.on_message = on_message, .on_link_up = on_link_up, .on_link_down = on_link_down,
	.on_peer_restarted = on_peer_restarted, .on_refused = on_refused,
	.on_send_overflow = on_send_overflow, .on_session_lost = on_session_lost,
};

static SSL_CTX *
make_tls(const char *cert, const char *ca, const char *crl)
{
	char c[512], k[512], a[512], r[512], err[512];
	struct tls_files files = { a, c, k, NULL };
	SSL_CTX *ctx = NULL;

	snprintf(c, sizeof(c), "%s/%s.crt", certdir, cert);
	snprintf(k, sizeof(k), "%s/%s.key", certdir, cert);
	snprintf(a, sizeof(a), "%s/%s.crt", certdir, ca);
	if (crl != NULL) {
		snprintf(r, sizeof(r), "%s/%s", certdir, crl);
		files.crl = r;
	}
	ck_assert_msg(tls_context_new(&files, &ctx, err, sizeof(err)) == 0, "%s", err);
	return ctx;
}

struct node_options {
	const char	*cert;		/* default: the node name */
	const char	*ca;		/* default: "ca" */
	const char	*crl;
	const char	*cluster;	/* default: "test" */
	const char	*algorithm;	/* default: "ricart-agrawala" */
	uint64_t	 incarnation;	/* default: 1 */
	struct event_base *base;	/* default: bases[0] */
	struct peer_transport_limits limits;
};

static void
node_start(struct node *n, const char *name, const struct node_options *o)
{
	static const char *const listen[] = { "127.0.0.1:0" };
	SSL_CTX *tls = make_tls(o->cert != NULL ? o->cert : name, o->ca != NULL ? o->ca : "ca", o->crl);
	struct peer_transport_config cfg = {
		.self = name,
		.cluster = o->cluster != NULL ? o->cluster : "test",
		.algorithm = o->algorithm != NULL ? o->algorithm : "ricart-agrawala",
		.incarnation = o->incarnation != 0 ? o->incarnation : 1,
		.listen = listen,
		.n_listen = 1,
		.tls = tls,
		.seed = 42,
		.limits = o->limits,
	};

	memset(n, 0, sizeof(*n));
	n->name = name;
	n->order_ok = true;
	if (cfg.limits.keepalive_ms == 0)
		cfg.limits.keepalive_ms = 100;
	if (cfg.limits.reconnect_min_ms == 0)
		cfg.limits.reconnect_min_ms = 10;
	if (cfg.limits.reconnect_max_ms == 0)
		cfg.limits.reconnect_max_ms = 200;
	if (cfg.limits.handshake_timeout_ms == 0)
		cfg.limits.handshake_timeout_ms = 2000;
	ck_assert_int_eq(peer_transport_new(o->base != NULL ? o->base : bases[0], &cfg, &callbacks, n,
	    &n->t), 0);
	SSL_CTX_free(tls);
	ck_assert_int_eq(peer_transport_listen_address(n->t, 0, n->addr, sizeof(n->addr)), 0);
}

static void
send_indexed(struct node *from, const char *to, uint64_t index)
{
	uint8_t payload[8 + 256];
	size_t len = 8 + (size_t)(index * 7 % 200);

	for (int i = 0; i < 8; i++)
		payload[i] = (uint8_t)(index >> (56 - 8 * i));
	for (size_t i = 8; i < len; i++)
		payload[i] = (uint8_t)(index + i);
	ck_assert_int_eq(peer_transport_send(from->t, to, payload, len), 0);
}

static void
setup(void)
{
	log_set_max_level(LOG_LEVEL_WARNING);
	bases[0] = event_base_new();
	bases[1] = NULL;
	n_bases = 1;
}

static void
teardown(void)
{
	for (size_t i = 0; i < 2; i++) {
		if (bases[i] == NULL)
			continue;
		event_base_loop(bases[i], EVLOOP_NONBLOCK);	/* finish freeing bufferevents */
		event_base_free(bases[i]);
	}
}

struct pair {
	struct node *a, *b;
	uint64_t want;
};

static bool
both_received(void *arg)
{
	struct pair *p = arg;
	return p->a->received >= p->want && p->b->received >= p->want;
}

static bool
both_drained(void *arg)
{
	struct pair *p = arg;
	struct peer_transport_peer_info ia, ib;
	return peer_transport_peer_info(p->a->t, p->b->name, &ia) == 0 &&
	    peer_transport_peer_info(p->b->t, p->a->name, &ib) == 0 && ia.queued == 0 && ib.queued == 0;
}

static bool
received_three(void *arg)
{
	return ((struct node *)arg)->received >= 3;
}

static bool
received_five(void *arg)
{
	return ((struct node *)arg)->received >= 5;
}

static bool
both_up(void *arg)
{
	struct pair *p = arg;
	return p->a->ups > p->a->downs && p->b->ups > p->b->downs;
}

static void
connect_pair(struct node *a, struct node *b)
{
	ck_assert_int_eq(peer_transport_add_peer(a->t, b->name, b->addr), 0);
	ck_assert_int_eq(peer_transport_add_peer(b->t, a->name, a->addr), 0);
}

static void
exchange_and_check(struct node *a, struct node *b, uint64_t count)
{
	struct pair p = { a, b, count };

	for (uint64_t i = 0; i < count; i++) {
		send_indexed(a, b->name, i);
		send_indexed(b, a->name, i);
	}
	ck_assert_msg(run_until(both_received, &p, 20000), "received %llu and %llu of %llu",
	    (unsigned long long)a->received, (unsigned long long)b->received, (unsigned long long)count);
	ck_assert_msg(run_until(both_drained, &p, 5000), "acknowledgements did not drain the queues");
	ck_assert_uint_eq(a->received, count);
	ck_assert_uint_eq(b->received, count);
	ck_assert(a->order_ok);
	ck_assert(b->order_ok);
}

START_TEST(ten_thousand_in_order)
{
	struct node a, b;
	struct peer_transport_peer_info info;

	node_start(&a, "alpha", &(struct node_options){ 0 });
	node_start(&b, "beta", &(struct node_options){ 0 });
	connect_pair(&a, &b);	/* both dial: duplicate links resolved by name */
	exchange_and_check(&a, &b, MESSAGES);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert(info.link_up);
	ck_assert_uint_eq(info.incarnation, 1);
	ck_assert_uint_eq(info.last_sent_seq, MESSAGES);
	ck_assert_uint_eq(info.last_received_seq, MESSAGES);
	ck_assert_uint_ge(info.data_frames_sent, MESSAGES);
	ck_assert_int_eq(a.downs, 0);	/* the duplicate-link race did not flap */
	ck_assert_int_eq(b.downs, 0);
	ck_assert_int_eq(a.ups, 1);
	ck_assert_int_eq(b.ups, 1);
	ck_assert_int_eq(a.refusals + b.refusals, 0);
	ck_assert_int_eq(a.overflows + b.overflows, 0);
	ck_assert_int_eq(a.sessions_lost + b.sessions_lost, 0);
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

/* Held writes (peer_transport_hold, as the daemon does around an engine
 * step): sends are queued, none is written until the release, which
 * writes them all at once; then they arrive in order. */
START_TEST(held_sends_written_at_release)
{
	struct node a, b;
	struct pair p = { &a, &b, 0 };
	struct peer_transport_peer_info info;
	uint64_t before;

	node_start(&a, "alpha", &(struct node_options){ 0 });
	node_start(&b, "beta", &(struct node_options){ 0 });
	connect_pair(&a, &b);
	ck_assert(run_until(both_up, &p, 5000));
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	before = info.data_frames_sent;
	peer_transport_hold(a.t);
	peer_transport_hold(a.t);		/* nested */
	for (uint64_t i = 0; i < 3; i++)
		send_indexed(&a, "beta", i);
	peer_transport_release(a.t);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert_uint_eq(info.data_frames_sent, before);	/* still held */
	ck_assert_uint_eq(info.queued, 3);
	peer_transport_release(a.t);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert_uint_eq(info.data_frames_sent, before + 3);	/* written at the release */
	p.want = 3;
	ck_assert(run_until(received_three, &b, 5000));
	ck_assert(b.order_ok);
	ck_assert(run_until(both_drained, &p, 5000));
	peer_transport_release(a.t);		/* unbalanced: ignored */
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	before = info.data_frames_sent;
	send_indexed(&a, "beta", 3);		/* not held: written at once */
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert_uint_eq(info.data_frames_sent, before + 1);
	/* Sent, then removed, in one held step (a LEAVE_ACK to the node that
	 * left): the message still goes out before the link closes. */
	peer_transport_hold(a.t);
	send_indexed(&a, "beta", 4);
	ck_assert_int_eq(peer_transport_remove_peer(a.t, "beta"), 0);
	peer_transport_release(a.t);
	ck_assert(run_until(received_five, &b, 5000));
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

START_TEST(cut_mid_stream_exactly_once)
{
	struct node a, b;
	struct peer_transport_peer_info ia, ib;

	node_start(&a, "alpha", &(struct node_options){ 0 });
	node_start(&b, "beta", &(struct node_options){ 0 });
	b.cut_peer = "alpha";
	b.cut_at = 3000;
	a.cut_peer = "beta";
	a.cut_at = 7000;
	connect_pair(&a, &b);
	exchange_and_check(&a, &b, MESSAGES);
	ck_assert_int_eq(a.cuts, 1);
	ck_assert_int_eq(b.cuts, 1);
	ck_assert_int_ge(a.downs, 1);
	ck_assert_int_ge(b.downs, 1);
	ck_assert_int_ge(a.ups, 2);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &ia), 0);
	ck_assert_int_eq(peer_transport_peer_info(b.t, "alpha", &ib), 0);
	ck_assert_uint_ge(ia.links_established, 2);
	/* Frames in flight at each cut were resent, and dropped as duplicates
	 * where they had arrived. */
	ck_assert_uint_gt(ia.data_frames_resent, 0);
	ck_assert_uint_gt(ib.data_frames_resent, 0);
	ck_assert_int_eq(a.restarts + b.restarts, 0);
	ck_assert_int_eq(a.overflows + b.overflows, 0);
	ck_assert_int_eq(a.sessions_lost + b.sessions_lost, 0);
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

static bool
restart_seen(void *arg)
{
	struct pair *p = arg;
	return p->b->restarts >= 1 && p->a->ups >= 1 && p->b->ups > p->b->downs;
}

static bool
received_one(void *arg)
{
	return ((struct node *)arg)->received >= 1;
}

static bool
link_down(void *arg)
{
	return ((struct node *)arg)->downs >= 1;
}

START_TEST(restart_reported_stale_dropped)
{
	struct node a, a2, b;
	struct peer_transport_peer_info info;
	struct pair p = { &a, &b, 0 };

	node_start(&a, "alpha", &(struct node_options){ .incarnation = 1 });
	node_start(&b, "beta", &(struct node_options){ 0 });
	connect_pair(&a, &b);
	exchange_and_check(&a, &b, 100);

	/* alpha dies; beta queues messages for the old process. */
	peer_transport_free(a.t);
	ck_assert(run_until(link_down, &b, 5000));
	for (uint64_t i = 100; i < 105; i++)
		send_indexed(&b, "alpha", i);

	/* alpha comes back on another port with a new incarnation and dials. */
	node_start(&a2, "alpha", &(struct node_options){ .incarnation = 2 });
	ck_assert_int_eq(peer_transport_add_peer(a2.t, "beta", b.addr), 0);
	p.a = &a2;
	ck_assert(run_until(restart_seen, &p, 5000));
	ck_assert_int_eq(b.restarts, 1);
	ck_assert_uint_eq(b.restart_incarnation, 2);
	ck_assert_int_eq(a2.restarts, 0);	/* first contact for the new process */
	ck_assert_int_eq(peer_transport_peer_info(b.t, "alpha", &info), 0);
	ck_assert_uint_eq(info.incarnation, 2);
	ck_assert_uint_eq(info.queued, 0);	/* stale messages dropped */

	/* The new session starts from scratch: index 0 is the first message. */
	send_indexed(&b, "alpha", 0);
	ck_assert(run_until(received_one, &a2, 5000));
	ck_assert_uint_eq(a2.received, 1);
	ck_assert(a2.order_ok);
	peer_transport_free(a2.t);
	peer_transport_free(b.t);
}
END_TEST

START_TEST(silent_peer_and_send_queue_limit)
{
	struct node a, b;
	struct pair p = { &a, &b, 0 };
	uint8_t payload[16] = { 0 };

	bases[1] = event_base_new();
	n_bases = 2;
	node_start(&a, "alpha", &(struct node_options){ .limits.send_queue_limit = 50 });
	node_start(&b, "beta", &(struct node_options){ .base = bases[1] });
	ck_assert_int_eq(peer_transport_add_peer(a.t, "beta", b.addr), 0);
	ck_assert_int_eq(peer_transport_add_peer(b.t, "alpha", NULL), 0);
	ck_assert(run_until(both_up, &p, 5000));
	ck_assert_int_eq(a.downs, 0);

	/* beta's loop stops running: it is frozen, its socket still open. */
	n_bases = 1;
	dm_msec_t start = now_ms();
	ck_assert(run_until(link_down, &a, 5000));
	ck_assert_uint_ge(now_ms() - start, 100 * 5 - 60);	/* keepalive x misses */

	/* At most 50 unacknowledged messages per peer, link down or not. */
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), 0);
	ck_assert_int_eq(a.overflows, 0);
	ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), -ENOBUFS);
	ck_assert_int_eq(a.overflows, 1);
	ck_assert_uint_eq(a.overflow_unacked, 50);
	ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, 0), -EMSGSIZE);
	ck_assert_int_eq(peer_transport_send(a.t, "nobody", payload, 1), -ENOENT);
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

static bool
queue_empty(void *arg)
{
	struct node *n = arg;
	struct peer_transport_peer_info info;
	return peer_transport_peer_info(n->t, "beta", &info) == 0 && info.queued == 0;
}

static bool
never(void *arg)
{
	return false;
}

/* The overflow callback fires exactly when a send finds send_queue_limit
 * messages unacknowledged (with the link up: only the peer's silence fills
 * the queue), on every refused message, and never while acknowledgements
 * keep the queue under the limit. */
START_TEST(send_overflow_reported_past_the_limit)
{
	struct node a, b;
	struct pair p = { &a, &b, 0 };
	struct peer_transport_peer_info info;
	uint8_t payload[16] = { 0 };
	const uint32_t limit = 5;

	bases[1] = event_base_new();
	n_bases = 2;
	node_start(&a, "alpha", &(struct node_options){ .limits.send_queue_limit = limit });
	node_start(&b, "beta", &(struct node_options){ .base = bases[1] });
	ck_assert_int_eq(peer_transport_add_peer(a.t, "beta", b.addr), 0);
	ck_assert_int_eq(peer_transport_add_peer(b.t, "alpha", NULL), 0);
	ck_assert(run_until(both_up, &p, 5000));

	/* Acknowledged traffic: many times the limit, never an overflow. */
	for (int round = 0; round < 4; round++) {
		for (uint32_t i = 0; i < limit; i++)
			ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), 0);
		ck_assert(run_until(queue_empty, &a, 5000));
	}
	ck_assert_int_eq(a.overflows, 0);

	/* beta stops reading (its loop no longer runs): limit messages are
	 * accepted and written, none acknowledged. */
	n_bases = 1;
	for (uint32_t i = 0; i < limit; i++) {
		ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), 0);
		ck_assert_int_eq(a.overflows, 0);
	}
	(void)run_until(never, NULL, 100);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert(info.link_up);
	ck_assert_uint_eq(info.queued, limit);
	ck_assert_int_eq(a.overflows, 0);
	ck_assert_int_eq(a.downs, 0);

	/* The next one is refused, and reported before the send returns. */
	ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), -ENOBUFS);
	ck_assert_int_eq(a.overflows, 1);
	ck_assert_uint_eq(a.overflow_unacked, limit);
	ck_assert_str_eq(a.overflow_peer, "beta");
	ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), -ENOBUFS);
	ck_assert_int_eq(a.overflows, 2);
	ck_assert_int_eq(peer_transport_peer_info(a.t, "beta", &info), 0);
	ck_assert_uint_eq(info.queued, limit);	/* the refused messages were not queued */
	ck_assert(run_until(link_down, &a, 5000));	/* and the link was cut */
	ck_assert_int_eq(a.sessions_lost + b.sessions_lost, 0);
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

static bool
session_lost(void *arg)
{
	return ((struct node *)arg)->sessions_lost >= 1;
}

/* The one way the two ends of a session disagree (peer_resync): a dead
 * process's HELLO read after its successor's.  alpha's successor links to
 * beta while the old process still runs; beta starts a session with the
 * successor and closes the old link; the old process redials with a HELLO
 * claiming 100 (101) messages of beta's session, which the new one never
 * sent.
 * beta starts over (new epoch) and reports the lost session. */
START_TEST(resync_reported_as_session_lost)
{
	struct node a1, a2, b;
	uint8_t payload[16] = { 0 };

	node_start(&a1, "alpha", &(struct node_options){ .incarnation = 1 });
	node_start(&b, "beta", &(struct node_options){ .incarnation = 7 });
	ck_assert_int_eq(peer_transport_add_peer(a1.t, "beta", b.addr), 0);
	ck_assert_int_eq(peer_transport_add_peer(b.t, "alpha", NULL), 0);
	exchange_and_check(&a1, &b, 100);
	ck_assert_int_eq(a1.sessions_lost + b.sessions_lost, 0);

	node_start(&a2, "alpha", &(struct node_options){ .incarnation = 2 });
	ck_assert_int_eq(peer_transport_add_peer(a2.t, "beta", b.addr), 0);
	/* Goes to the old process if its link is still up (then it claims
	 * 101), else to the successor: dropped or acknowledged by the resync. */
	ck_assert_int_eq(peer_transport_send(b.t, "alpha", payload, sizeof(payload)), 0);
	ck_assert(run_until(session_lost, &b, 5000));
	ck_assert_msg(strstr(b.lost_why, "alpha: it claims to have received message 10") != NULL,
	    "why: %s", b.lost_why);
	ck_assert_uint_le(b.lost_dropped, 1);
	ck_assert_int_eq(b.overflows, 0);
	peer_transport_free(a1.t);
	peer_transport_free(a2.t);
	peer_transport_free(b.t);
}
END_TEST

static int
raw_connect(const char *addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *colon = strrchr(addr, ':');
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	sin.sin_port = htons((uint16_t)atoi(colon + 1));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static bool
refused_twice(void *arg)
{
	return ((struct node *)arg)->refusals >= 3;
}

static bool
refused_once(void *arg)
{
	return ((struct node *)arg)->refusals >= 1;
}

START_TEST(handshake_limit_and_timeout)
{
	struct node b;
	int fds[3];

	node_start(&b, "beta", &(struct node_options){
	    .limits = { .max_handshakes = 2, .handshake_timeout_ms = 300 } });
	for (int i = 0; i < 3; i++)
		fds[i] = raw_connect(b.addr);	/* say nothing */
	ck_assert(run_until(refused_once, &b, 5000));
	ck_assert_msg(strstr(b.refusal, "too many handshakes") != NULL, "%s", b.refusal);
	ck_assert(run_until(refused_twice, &b, 5000));
	ck_assert_msg(strstr(b.refusal, "timed out") != NULL, "%s", b.refusal);
	ck_assert_int_eq(b.ups, 0);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	peer_transport_free(b.t);
}
END_TEST

static bool
both_up_and_received(void *arg)
{
	return both_up(arg) && both_received(arg);
}

/* A TLS reload closes every link (each was verified with the old CA and
 * CRL); with the same trust the links come back and the session goes on:
 * messages sent before, across and after the reload arrive once, in order. */
START_TEST(tls_reload_cuts_links_session_survives)
{
	struct node a, b;
	struct pair p = { &a, &b, 200 };
	SSL_CTX *fresh;

	node_start(&a, "alpha", &(struct node_options){ 0 });
	node_start(&b, "beta", &(struct node_options){ 0 });
	connect_pair(&a, &b);
	for (uint64_t i = 0; i < 100; i++) {
		send_indexed(&a, "beta", i);
		send_indexed(&b, "alpha", i);
	}
	p.want = 100;
	ck_assert(run_until(both_up_and_received, &p, 10000));
	ck_assert_int_eq(a.downs + b.downs, 0);

	fresh = make_tls("alpha", "ca", NULL);
	ck_assert_uint_eq(peer_transport_set_tls(a.t, fresh), 1);
	SSL_CTX_free(fresh);
	ck_assert_int_eq(a.downs, 1);		/* at once, from the reload */
	for (uint64_t i = 100; i < 200; i++) {
		send_indexed(&a, "beta", i);
		send_indexed(&b, "alpha", i);
	}
	p.want = 200;
	ck_assert_msg(run_until(both_up_and_received, &p, 10000), "received %llu and %llu",
	    (unsigned long long)a.received, (unsigned long long)b.received);
	ck_assert_uint_eq(a.received, 200);
	ck_assert_uint_eq(b.received, 200);
	ck_assert(a.order_ok);
	ck_assert(b.order_ok);
	ck_assert_int_ge(b.downs, 1);		/* beta saw the link go too */
	ck_assert_int_eq(a.restarts + b.restarts, 0);
	ck_assert_int_eq(a.refusals + b.refusals, 0);
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

static bool
refused_three_times(void *arg)
{
	return ((struct node *)arg)->refusals >= 3;
}

/* A peer revoked in the CRL loaded by a reload loses its established link
 * and stays out: it used to keep the link verified before the revocation
 * for as long as the link lived. */
START_TEST(tls_reload_crl_drops_revoked_peer)
{
	struct node c, d;
	struct pair p = { &c, &d, 10 };
	struct peer_transport_peer_info info;
	SSL_CTX *with_crl;

	node_start(&c, "carol", &(struct node_options){ .ca = "ca2" });
	node_start(&d, "dave", &(struct node_options){ .ca = "ca2" });
	connect_pair(&c, &d);
	exchange_and_check(&c, &d, 10);
	ck_assert(both_up(&p));

	with_crl = make_tls("carol", "ca2", "ca2.crl");		/* revokes dave */
	ck_assert_uint_eq(peer_transport_set_tls(c.t, with_crl), 1);
	SSL_CTX_free(with_crl);
	int ups = c.ups;
	/* dave redials and is refused, carol's dials fail on dave's
	 * certificate: several times, and no link comes up meanwhile. */
	ck_assert_msg(run_until(refused_three_times, &c, 10000), "carol refused %d time(s)",
	    c.refusals);
	ck_assert_msg(strstr(c.refusal, "revoked") != NULL, "reason '%s'", c.refusal);
	ck_assert_int_eq(c.ups, ups);
	ck_assert_int_eq(peer_transport_peer_info(c.t, "dave", &info), 0);
	ck_assert(!info.link_up);
	ck_assert_int_eq(d.ups - d.downs, 0);
	peer_transport_free(c.t);
	peer_transport_free(d.t);
}
END_TEST

/* Node names shaped like IPv4 addresses (valid node names, and DNS names
 * in their certificates: mkcerts writes SAN DNS:NAME).  The dialer must
 * check the DNS name as the acceptor's X509_check_host does; SSL_set1_host
 * took such a name for an IP address on OpenSSL 3 and looked for a SAN IP,
 * so the link never came up. */
START_TEST(address_shaped_names_link_up)
{
	struct node a, b;
	struct pair p = { &a, &b, 0 };

	node_start(&a, "10.0.0.1", &(struct node_options){ 0 });
	node_start(&b, "127.0.0.2", &(struct node_options){ 0 });
	connect_pair(&a, &b);	/* both dial: both ends check a name */
	ck_assert_msg(run_until(both_up, &p, 5000), "no link: refusals %d/%d: '%s' '%s'",
	    a.refusals, b.refusals, a.refusal, b.refusal);
	exchange_and_check(&a, &b, 100);
	ck_assert_int_eq(a.refusals + b.refusals, 0);
	peer_transport_free(a.t);
	peer_transport_free(b.t);

	/* Only b dials, then only a: each direction on its own. */
	for (int dialer = 0; dialer < 2; dialer++) {
		node_start(&a, "10.0.0.1", &(struct node_options){ 0 });
		node_start(&b, "127.0.0.2", &(struct node_options){ 0 });
		struct node *d = dialer == 0 ? &b : &a, *l = dialer == 0 ? &a : &b;
		ck_assert_int_eq(peer_transport_add_peer(d->t, l->name, l->addr), 0);
		ck_assert_int_eq(peer_transport_add_peer(l->t, d->name, NULL), 0);
		ck_assert_msg(run_until(both_up, &p, 5000), "dialer %s: no link: '%s' '%s'", d->name,
		    a.refusal, b.refusal);
		ck_assert_int_eq(a.refusals + b.refusals, 0);
		peer_transport_free(a.t);
		peer_transport_free(b.t);
	}
}
END_TEST

/* A certificate for another address-shaped name is still refused by the
 * dialer inside TLS (hostname mismatch), not accepted. */
START_TEST(address_shaped_name_mismatch_refused)
{
	struct node a, b;
	struct pair p = { &a, &b, 0 };

	/* "127.0.0.2" presents 10.0.0.1's certificate; "10.0.0.1" dials it. */
	node_start(&a, "10.0.0.1", &(struct node_options){ 0 });
	node_start(&b, "127.0.0.2", &(struct node_options){ .cert = "10.0.0.1" });
	ck_assert_int_eq(peer_transport_add_peer(a.t, "127.0.0.2", b.addr), 0);
	ck_assert(run_until(refused_once, &a, 5000));
	ck_assert_msg(strstr(a.refusal, "hostname mismatch") != NULL, "reason '%s'", a.refusal);
	ck_assert(!both_up(&p));
	peer_transport_free(a.t);
	peer_transport_free(b.t);
}
END_TEST

/* The negative suite: a client "alpha" with something wrong dials a
 * correct server "beta"; the server must refuse, with this in the reason. */
static const struct {
	const char	*what;
	struct node_options client;
	const char	*server_crl;
	const char	*server_reason;
	const char	*server_reason2;	/* also required, or NULL */
} negatives[] = {
	{ "plaintext", { 0 }, NULL, "TLS handshake", NULL },
	{ "wrong CA", { .cert = "alpha-rogue" }, NULL, "certificate verify failed", NULL },
	{ "expired", { .cert = "alpha-expired" }, NULL, "expired", NULL },
	{ "revoked", { .cert = "alpha-revoked" }, "ca.crl", "revoked", NULL },
	{ "name mismatch", { .cert = "gamma" }, NULL, "name mismatch", "'alpha'" },
	{ "wrong cluster", { .cluster = "other" }, NULL, "cluster name mismatch", "'test', alpha is in cluster 'other'" },
	{ "wrong algorithm", { .algorithm = "maekawa" }, NULL, "algorithm mismatch", "runs 'ricart-agrawala', alpha runs 'maekawa'" },
};

START_TEST(negative_refused)
{
	struct node a, b;
	int fd = -1;

	node_start(&b, "beta", &(struct node_options){ .crl = negatives[_i].server_crl });
	if (_i == 0) {
		static const char junk[] = "GET / HTTP/1.0\r\n\r\nplaintext is not TLS";
		fd = raw_connect(b.addr);
		ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
		memset(&a, 0, sizeof(a));
	} else {
		uint8_t payload[8] = { 0 };
		node_start(&a, "alpha", &negatives[_i].client);
		ck_assert_int_eq(peer_transport_add_peer(a.t, "beta", b.addr), 0);
		ck_assert_int_eq(peer_transport_send(a.t, "beta", payload, sizeof(payload)), 0);
	}
	ck_assert_msg(run_until(refused_once, &b, 5000), "%s: not refused", negatives[_i].what);
	ck_assert_msg(strstr(b.refusal, negatives[_i].server_reason) != NULL, "%s: reason '%s'",
	    negatives[_i].what, b.refusal);
	if (negatives[_i].server_reason2 != NULL)
		ck_assert_msg(strstr(b.refusal, negatives[_i].server_reason2) != NULL, "%s: reason '%s'",
		    negatives[_i].what, b.refusal);
	if (_i != 0) {
		/* The client is told too (by TLS alert or BYE) and keeps failing. */
		ck_assert_msg(run_until(refused_once, &a, 5000), "%s: client not told", negatives[_i].what);
		ck_assert_int_eq(a.ups, 0);
		peer_transport_free(a.t);
	} else {
		close(fd);
	}
	ck_assert_int_eq(b.ups, 0);
	ck_assert_uint_eq(b.received, 0);
	peer_transport_free(b.t);
}
END_TEST

static Suite *
peer_suite(void)
{
	Suite *s = suite_create("peer_transport");
	TCase *tc = tcase_create("tls-loopback");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ten_thousand_in_order);
	tcase_add_test(tc, held_sends_written_at_release);
	tcase_add_test(tc, cut_mid_stream_exactly_once);
	tcase_add_test(tc, restart_reported_stale_dropped);
	tcase_add_test(tc, silent_peer_and_send_queue_limit);
	tcase_add_test(tc, send_overflow_reported_past_the_limit);
	tcase_add_test(tc, resync_reported_as_session_lost);
	tcase_add_test(tc, handshake_limit_and_timeout);
	tcase_add_test(tc, tls_reload_cuts_links_session_survives);
	tcase_add_test(tc, tls_reload_crl_drops_revoked_peer);
	tcase_add_test(tc, address_shaped_names_link_up);
	tcase_add_test(tc, address_shaped_name_mismatch_refused);
	tcase_add_loop_test(tc, negative_refused, 0, (int)(sizeof(negatives) / sizeof(negatives[0])));
	suite_add_tcase(s, tc);
	return s;
}

static int
make_certs(void)
{
	const char *srcdir = getenv("top_srcdir");
	char cmd[2048];
	static const char *const steps[] = {
		"alpha beta gamma",
		"10.0.0.1 127.0.0.2",
		"--ca ca2 carol dave",
		"--ca ca2 --crl dave",
		"--expired --out alpha-expired alpha",
		"--ca rogue --out alpha-rogue alpha",
		"--out alpha-revoked alpha",
		"--crl --out alpha-revoked alpha",
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s/tools/mkcerts -d %s %s", srcdir != NULL ? srcdir : "..",
		    certdir, steps[i]);
		if (system(cmd) != 0) {
			fprintf(stderr, "check_peer: '%s' failed\n", cmd);
			return -1;
		}
	}
	return 0;
}

int
main(void)
{
	SRunner *sr;
	int failed;
	char cmd[512];

	snprintf(certdir, sizeof(certdir), "/tmp/dmlock-check-peer-XXXXXX");
	if (mkdtemp(certdir) == NULL)
		return 99;	/* hard error */
	if (make_certs() < 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", certdir);
		if (system(cmd) != 0)
			fprintf(stderr, "check_peer: could not remove %s\n", certdir);
		return 99;
	}
	sr = srunner_create(peer_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", certdir);
	if (system(cmd) != 0)
		fprintf(stderr, "check_peer: could not remove %s\n", certdir);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
