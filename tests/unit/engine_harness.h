/*
 * engine_harness.h: a tiny in-test cluster for the engine unit tests:
 * N engines, one global FIFO message queue (so every link is FIFO),
 * recorded client effects, helpers to acquire/release and pump messages.
 * Header-only so each check_engine*.c stays self-contained.
 */
#ifndef ENGINE_HARNESS_H
#define ENGINE_HARNESS_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine.h"
#include "dm_msg.h"
#include "dm_algorithm.h"

#define H_NODES		8
#define H_QUEUE		4096
#define H_FX		1024

struct h_fx {
	enum dm_effect_type type;
	int		node;
	uint64_t	handle;
	uint64_t	token;
	int		error;
	dm_msec_t	deadline;
	char		peer[DM_NODE_NAME_MAX + 1];
	uint8_t		kind;
};

/* A node's disk: its last DM_FX_PERSIST_RECORD. */
#define H_RECORD_MAX	16
struct h_record {
	uint64_t	label;
	size_t		n_names, n_removals;
	char		names[H_RECORD_MAX][DM_NODE_NAME_MAX + 1];
	char		removed[H_RECORD_MAX][DM_NODE_NAME_MAX + 1];
	uint64_t	ballot[H_RECORD_MAX];
	char		promise_prober[DM_NODE_NAME_MAX + 1];	/* "": none */
	uint64_t	promise_label;
	size_t		n_dead;
	char		dead_names[H_RECORD_MAX][DM_NODE_NAME_MAX + 1];
	struct dm_dead_incarnation dead[H_RECORD_MAX];	/* names point into dead_names */
};

struct h_packet {
	int		from, to;
	struct dm_msg	msg;
	size_t		fx_before;	/* effects recorded before it was sent */
};

struct h_cluster {
	int		 n;
	struct dm_engine *e[H_NODES];
	char		 names[H_NODES][16];
	bool		 down[H_NODES];		/* crashed: drops everything */
	bool		 cut[H_NODES];		/* partitioned: messages held back */
	/* If set, messages it returns true for are held back too. */
	bool		(*hold)(const struct h_packet *p);
	dm_msec_t	 now;
	struct h_packet	*q;
	size_t		 qhead, qtail;
	struct h_fx	 fx[H_FX];
	size_t		 nfx;
	int		 stepping;		/* node whose effects we record */
	size_t		 sent_algo;		/* algorithm messages sent */
	/* By kind; a HEARTBEAT_ACK that refuses (DM_HEARTBEAT_REFUSED) counts
	 * in sent_lease_refusals instead: sent_kind[] counts acks given. */
	size_t		 sent_kind[256];
	size_t		 sent_lease_refusals;
	struct h_record	 record[H_NODES];	/* survives h_join's restarts */
};

static inline int
h_index(const struct h_cluster *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->names[i], name) == 0)
			return i;
	return -1;
}

static inline void
h_emit(void *ctx, const struct dm_effect *fx)
{
	struct h_cluster *c = ctx;
	struct h_fx *r;

	if (fx->type == DM_FX_SEND) {
		int to = h_index(c, fx->u.send.peer);
		ck_assert_int_ge(to, 0);
		ck_assert_uint_lt(c->qtail - c->qhead, H_QUEUE);
		struct h_packet *p = &c->q[c->qtail++ % H_QUEUE];
		p->from = c->stepping;
		p->to = to;
		p->msg = *fx->u.send.msg;
		p->fx_before = c->nfx;
		if (fx->u.send.msg->kind == DM_MSG_HEARTBEAT_ACK &&
		    fx->u.send.msg->arg == DM_HEARTBEAT_REFUSED)
			c->sent_lease_refusals++;
		else
			c->sent_kind[fx->u.send.msg->kind]++;
		if (fx->u.send.msg->kind >= DM_MSG_ALGO_BASE)
			c->sent_algo++;
		return;
	}
	if (fx->type == DM_FX_LOG)
		return;
	ck_assert_uint_lt(c->nfx, H_FX);
	r = &c->fx[c->nfx++];
	memset(r, 0, sizeof(*r));
	r->type = fx->type;
	r->node = c->stepping;
	switch (fx->type) {
	case DM_FX_GRANT:
		r->handle = fx->u.grant.handle;
		r->token = fx->u.grant.token;
		r->deadline = fx->u.grant.deadline;
		break;
	case DM_FX_DENY:
		r->handle = fx->u.deny.handle;
		r->error = fx->u.deny.error;
		break;
	case DM_FX_EXTEND:
		r->handle = fx->u.extend.handle;
		r->deadline = fx->u.extend.deadline;
		break;
	case DM_FX_LOST:
		r->handle = fx->u.lost.handle;
		r->error = fx->u.lost.reason;
		break;
	case DM_FX_PEER_ADD:
	case DM_FX_PEER_REMOVE:
		snprintf(r->peer, sizeof(r->peer), "%s", fx->u.peer.name);
		break;
	case DM_FX_PERSIST:
		r->token = fx->u.persist.floor;
		break;
	case DM_FX_PERSIST_RECORD: {
		struct h_record *d = &c->record[c->stepping];
		const struct dm_member_record *rec = &fx->u.record;

		ck_assert_uint_le(rec->n_names, H_RECORD_MAX);
		ck_assert_uint_le(rec->n_removals, H_RECORD_MAX);
		ck_assert_uint_le(rec->n_dead, H_RECORD_MAX);
		d->label = rec->label;
		d->n_dead = rec->n_dead;
		for (size_t i = 0; i < rec->n_dead; i++) {
			snprintf(d->dead_names[i], sizeof(d->dead_names[i]), "%s", rec->dead[i].name);
			d->dead[i] = (struct dm_dead_incarnation){ d->dead_names[i],
			    rec->dead[i].incarnation };
		}
		d->n_names = rec->n_names;
		for (size_t i = 0; i < rec->n_names; i++)
			snprintf(d->names[i], sizeof(d->names[i]), "%s", rec->names[i]);
		d->n_removals = rec->n_removals;
		for (size_t i = 0; i < rec->n_removals; i++) {
			snprintf(d->removed[i], sizeof(d->removed[i]), "%s", rec->removals[i].name);
			d->ballot[i] = rec->removals[i].ballot;
		}
		snprintf(d->promise_prober, sizeof(d->promise_prober), "%s",
		    rec->promise_prober != NULL ? rec->promise_prober : "");
		d->promise_label = rec->promise_label;
		break;
	}
	default:
		break;
	}
}

static inline int
h_step(struct h_cluster *c, int node, struct dm_event *ev)
{
	ev->now = c->now;
	c->stepping = node;
	return dm_engine_step(c->e[node], ev, h_emit, c);
}

static inline void
h_config(struct dm_engine_config *cfg, const char *self, const struct dm_peer_spec *peers,
    size_t n_peers)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->self = self;
	cfg->self_address = "127.0.0.1:1";
	cfg->cluster = "test";
	cfg->algorithm = "ricart-agrawala";
	cfg->failure_policy = DM_FAILURE_MAJORITY;
	cfg->incarnation = 1;
	cfg->peers = peers;
	cfg->n_peers = n_peers;
}

/* How long an election's coordinator waits, once every member accepted,
 * before the new epoch starts (dm_lease_fence_ms(): one lease plus the
 * stop time, with drift), under the harness's configuration. */
static inline dm_msec_t
h_fence_ms(const struct h_cluster *c)
{
	return dm_lease_fence_ms(c->e[0]);
}

/* n static members node0..node{n-1}, each configured like tmpl (algorithm,
 * election, group size, policy, breakage, timeouts; names and roster
 * filled in). */
static inline void
h_init_with(struct h_cluster *c, int n, const struct dm_engine_config *tmpl)
{
	struct dm_peer_spec peers[H_NODES];
	struct dm_engine_config cfg;

	memset(c, 0, sizeof(*c));
	c->q = calloc(H_QUEUE, sizeof(*c->q));
	ck_assert_ptr_nonnull(c->q);
	c->n = n;
	c->now = 1000;
	for (int i = 0; i < n; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "node%d", i);
		peers[i].name = c->names[i];
		peers[i].address = "127.0.0.1:2";
	}
	for (int i = 0; i < n; i++) {
		h_config(&cfg, c->names[i], peers, (size_t)n);
		if (tmpl->algorithm != NULL)
			cfg.algorithm = tmpl->algorithm;
		cfg.election = tmpl->election;
		cfg.group_size = tmpl->group_size;
		cfg.failure_policy = tmpl->failure_policy;
		cfg.test_breakage = tmpl->test_breakage;
		cfg.request_timeout_ms = tmpl->request_timeout_ms;
		cfg.probe_timeout_ms = tmpl->probe_timeout_ms;
		cfg.last_record = tmpl->last_record;
		ck_assert_int_eq(dm_engine_new(&cfg, &c->e[i]), 0);
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(c, i, &ev), 0);
	}
}

/* n static Ricart-Agrawala members; policy and tweak applied to all. */
static inline void
h_init(struct h_cluster *c, int n, enum dm_failure_policy policy, uint32_t breakage)
{
	h_init_with(c, n, &(struct dm_engine_config){ .failure_policy = policy,
	    .test_breakage = breakage });
}

/* Node i's last stored membership record as a config's last_record,
 * pointing into names and removals (H_RECORD_MAX each). */
static inline struct dm_member_record
h_record_config(const struct h_cluster *c, int i, const char **names,
    struct dm_agreed_removal *removals)
{
	const struct h_record *d = &c->record[i];

	for (size_t j = 0; j < d->n_names; j++)
		names[j] = d->names[j];
	for (size_t j = 0; j < d->n_removals; j++)
		removals[j] = (struct dm_agreed_removal){ d->removed[j], d->ballot[j] };
	return (struct dm_member_record){ .label = d->label, .names = names,
	    .n_names = d->n_names, .removals = removals, .n_removals = d->n_removals,
	    .promise_prober = d->promise_prober[0] != '\0' ? d->promise_prober : NULL,
	    .promise_label = d->promise_label, .dead = d->dead, .n_dead = d->n_dead };
}

/* Does node's last stored record list name as a member? */
static inline bool
h_disk_lists(const struct h_cluster *c, int node, const char *name)
{
	for (size_t i = 0; i < c->record[node].n_names; i++)
		if (strcmp(c->record[node].names[i], name) == 0)
			return true;
	return false;
}

/* Start (or restart with a new incarnation) node i as a joiner through
 * sponsor; from_disk: with the membership record node i stored last. */
static inline void
h_join_from(struct h_cluster *c, int i, int sponsor, enum dm_failure_policy policy,
    uint64_t incarnation, bool from_disk)
{
	struct dm_engine_config cfg;
	struct dm_peer_spec sp = { .name = c->names[sponsor], .address = "127.0.0.1:2" };
	const char *names[H_RECORD_MAX];
	struct dm_agreed_removal removals[H_RECORD_MAX];

	if (i >= c->n) {
		c->n = i + 1;
		snprintf(c->names[i], sizeof(c->names[i]), "node%d", i);
	}
	c->e[i] = dm_engine_free(c->e[i]);
	c->down[i] = false;
	h_config(&cfg, c->names[i], NULL, 0);
	cfg.failure_policy = policy;
	cfg.incarnation = incarnation;
	cfg.sponsor = &sp;
	if (from_disk)
		cfg.last_record = h_record_config(c, i, names, removals);
	ck_assert_int_eq(dm_engine_new(&cfg, &c->e[i]), 0);
	struct dm_event ev = { .type = DM_EV_TICK };
	ck_assert_int_eq(h_step(c, i, &ev), 0);
}

static inline void
h_join(struct h_cluster *c, int i, int sponsor, enum dm_failure_policy policy,
    uint64_t incarnation)
{
	h_join_from(c, i, sponsor, policy, incarnation, false);
}

static inline size_t
h_roster(const struct h_cluster *c, int i)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(c->e[i], &st);
	return st.roster_size;
}

static inline bool
h_ready(const struct h_cluster *c, int i)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(c->e[i], &st);
	return st.ready;
}

static inline void
h_fini(struct h_cluster *c)
{
	for (int i = 0; i < c->n; i++)
		c->e[i] = dm_engine_free(c->e[i]);
	free(c->q);
}

/* Deliver queued messages in FIFO order until none is left (bounded). */
static inline size_t
h_pump(struct h_cluster *c)
{
	size_t delivered = 0;
	size_t held = 0;

	while (c->qhead < c->qtail) {
		struct h_packet p = c->q[c->qhead++ % H_QUEUE];
		ck_assert_uint_lt(delivered, 100000);
		if (c->down[p.to] || c->down[p.from])
			continue;
		if (c->cut[p.to] || c->cut[p.from] || (c->hold != NULL && c->hold(&p))) {
			/* Held back: put at the end; stop when only held ones
			 * remain, after exactly one full turn, so they keep
			 * their order (one turn more would rotate them). */
			c->q[c->qtail++ % H_QUEUE] = p;
			if (++held >= c->qtail - c->qhead)
				break;
			continue;
		}
		held = 0;
		struct dm_event ev = { .type = DM_EV_RECEIVE,
		    .u.receive = { .peer = c->names[p.from], .msg = &p.msg } };
		ck_assert_int_eq(h_step(c, p.to, &ev), 0);
		delivered++;
	}
	return delivered;
}

static inline void
h_acquire(struct h_cluster *c, int node, uint64_t handle, const char *lock, enum dm_mode mode,
    dm_msec_t wait_ms)
{
	struct dm_event ev = { .type = DM_EV_ACQUIRE,
	    .u.acquire = { .handle = handle, .lock = lock, .lock_len = strlen(lock),
		.mode = mode, .wait_ms = wait_ms } };

	ck_assert_int_eq(h_step(c, node, &ev), 0);
}

static inline int
h_release(struct h_cluster *c, int node, uint64_t handle)
{
	struct dm_event ev = { .type = DM_EV_RELEASE, .u.release.handle = handle };

	return h_step(c, node, &ev);
}

static inline int
h_cancel(struct h_cluster *c, int node, uint64_t handle)
{
	struct dm_event ev = { .type = DM_EV_CANCEL, .u.cancel.handle = handle };

	return h_step(c, node, &ev);
}

/* Advance time to t, ticking every node at each due deadline (bounded). */
static inline void
h_advance(struct h_cluster *c, dm_msec_t t)
{
	for (int guard = 0; guard < 100000; guard++) {
		dm_msec_t next = t;
		int who = -1;
		for (int i = 0; i < c->n; i++) {
			dm_msec_t d;
			if (c->down[i] || c->e[i] == NULL)
				continue;
			d = dm_engine_next_deadline(c->e[i]);
			if (d != 0 && d <= next) {
				next = d;
				who = i;
			}
		}
		if (next > c->now)
			c->now = next;
		if (who < 0)
			return;
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(c, who, &ev), 0);
		h_pump(c);
	}
	ck_abort_msg("h_advance did not converge");
}

/* The last effect of a type for handle, or NULL. */
static inline const struct h_fx *
h_find(const struct h_cluster *c, enum dm_effect_type type, uint64_t handle)
{
	for (size_t i = c->nfx; i-- > 0;)
		if (c->fx[i].type == type && c->fx[i].handle == handle)
			return &c->fx[i];
	return NULL;
}

static inline size_t
h_count(const struct h_cluster *c, enum dm_effect_type type)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nfx; i++)
		n += c->fx[i].type == type;
	return n;
}

/* Whether client handle h was granted (at any time). */
static inline bool
h_granted(const struct h_cluster *c, uint64_t h)
{
	return h_find(c, DM_FX_GRANT, h) != NULL;
}

/* n members under the majority policy; one lock round on every node
 * (handles 900 + i), so that all learn each other's incarnation. */
static inline void
h_init_acquainted(struct h_cluster *c, int n)
{
	h_init(c, n, DM_FAILURE_MAJORITY, 0);
	for (int i = 0; i < c->n; i++) {
		h_acquire(c, i, 900 + (uint64_t)i, "warmup", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(c);
		ck_assert(h_granted(c, 900 + (uint64_t)i));
		ck_assert_int_eq(h_release(c, i, 900 + (uint64_t)i), 0);
		h_pump(c);
	}
}

/* Deliver one hand-made message from node `from` to node `to`. */
static inline void
h_inject(struct h_cluster *c, int from, int to, struct dm_msg *m)
{
	struct dm_event ev = { .type = DM_EV_RECEIVE,
	    .u.receive = { .peer = c->names[from], .msg = m } };

	ck_assert_int_eq(h_step(c, to, &ev), 0);
}

/* Zero *m, then make it a message of kind about subject's incarnation
 * (its address 127.0.0.1:2). */
static inline void
h_subject_msg(struct dm_msg *m, uint8_t kind, const char *subject, uint64_t incarnation)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->node_len = (uint8_t)strlen(subject);
	memcpy(m->node, subject, m->node_len + 1u);
	m->address_len = 11;
	memcpy(m->address, "127.0.0.1:2", 12);
	m->incarnation = incarnation;
}

/* Put in a NODE_FAILED the digest of the announcer's roster once its
 * subject is out (dm_membership_failure.c: a member takes the removal's
 * label only over the same names). */
static inline void
h_removal_digest(struct dm_msg *m, uint64_t digest)
{
	for (size_t i = 0; i < 8; i++)
		m->payload[i] = (uint8_t)(digest >> (56 - 8 * i));
	m->payload_len = 8;
}

/* Let time pass, 100 ms at a time, until node is READY (at most rounds). */
static inline void
h_await_ready(struct h_cluster *c, int node, int rounds)
{
	for (int k = 0; k < rounds && !h_ready(c, node); k++)
		h_advance(c, c->now + 100);
	ck_assert_msg(h_ready(c, node), "node%d not READY after %d ms", node, rounds * 100);
}

/* Let time pass, 100 ms at a time, until handle h is granted (at most rounds). */
static inline void
h_await_grant(struct h_cluster *c, uint64_t h, int rounds)
{
	for (int k = 0; k < rounds && !h_granted(c, h); k++)
		h_advance(c, c->now + 100);
	ck_assert_msg(h_granted(c, h), "handle %llu not granted after %d ms",
	    (unsigned long long)h, rounds * 100);
}

/* The last queued (undelivered) message of kind from -> to, or NULL. */
static inline const struct dm_msg *
h_queued(const struct h_cluster *c, int from, int to, uint8_t kind)
{
	for (size_t i = c->qtail; i-- > c->qhead;) {
		const struct h_packet *p = &c->q[i % H_QUEUE];
		if (p->from == from && p->to == to && p->msg.kind == kind)
			return &p->msg;
	}
	return NULL;
}

/* The last message of kind sent from -> to, delivered or not, while the
 * ring still keeps it; NULL if none. */
static inline const struct dm_msg *
h_last_sent(const struct h_cluster *c, int from, int to, uint8_t kind)
{
	size_t oldest = c->qtail > H_QUEUE ? c->qtail - H_QUEUE : 0;

	for (size_t i = c->qtail; i-- > oldest;) {
		const struct h_packet *p = &c->q[i % H_QUEUE];
		if (p->from == from && p->to == to && p->msg.kind == kind)
			return &p->msg;
	}
	return NULL;
}

/* Take the first queued message of kind from -> to out of the queue. */
static inline struct h_packet
h_unqueue(struct h_cluster *c, int from, int to, uint8_t kind)
{
	struct h_packet p;

	memset(&p, 0, sizeof(p));
	for (size_t i = c->qhead; i < c->qtail; i++) {
		if (c->q[i % H_QUEUE].from != from || c->q[i % H_QUEUE].to != to ||
		    c->q[i % H_QUEUE].msg.kind != kind)
			continue;
		p = c->q[i % H_QUEUE];
		for (size_t j = i; j + 1 < c->qtail; j++)
			c->q[j % H_QUEUE] = c->q[(j + 1) % H_QUEUE];
		c->qtail--;
		return p;
	}
	ck_abort_msg("no queued message of kind %u from %d to %d", kind, from, to);
	return p;
}

/* Take the first queued message of kind from -> to out of the queue and
 * deliver it now, ahead of the others. */
static inline void
h_deliver(struct h_cluster *c, int from, int to, uint8_t kind)
{
	struct h_packet p = h_unqueue(c, from, to, kind);

	h_inject(c, p.from, p.to, &p.msg);
}

#ifdef H_FILE_CLUSTER
/* For a file whose tests all run on one cluster, C: the fixture's teardown
 * and the harness's helpers on C under short names. */
static struct h_cluster C;

/* Free C's engines and queue after each test (the checked fixture's teardown). */
static void
teardown(void)
{
	h_fini(&C);
}

#define inject(from, to, m)		h_inject(&C, (from), (to), (m))
#define queued(from, to, kind)		h_queued(&C, (from), (to), (kind))
#define unqueue(from, to, kind)		h_unqueue(&C, (from), (to), (kind))
#define deliver(from, to, kind)		h_deliver(&C, (from), (to), (kind))
#define granted(h)			h_granted(&C, (h))
#define await_ready(node, rounds)	h_await_ready(&C, (node), (rounds))
#define await_grant(h, rounds)		h_await_grant(&C, (h), (rounds))
#define init_acquainted(n)		h_init_acquainted(&C, (n))
#define disk_lists(node, name)		h_disk_lists(&C, (node), (name))
#endif /* H_FILE_CLUSTER */

#endif /* ENGINE_HARNESS_H */
