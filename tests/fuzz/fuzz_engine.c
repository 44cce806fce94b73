/*
 * fuzz_engine.c: libFuzzer target for everything that reads a peer
 * message after the wire codec: the engine's roster and lease handlers and
 * every algorithm's message handlers, including the payload decoders
 * (token queues, RCV tables, election state, coordinator tables).
 *
 * One engine "n0" with peers "n1" and "n2" (the simulator's names, so its
 * recorded traffic makes a good seed corpus) runs the algorithm chosen by
 * the input's first byte.  The rest of the input is a script of operations:
 * messages from a peer (wire bytes, decoded with dm_wire_decode), time
 * passing, local acquire/release/cancel, links going down and up.  Peers
 * are authenticated members, so the engine may believe them; what it must
 * never do, whatever they send, is crash, read out of bounds, grant one
 * lock exclusively to two local clients at once, or hand out a fencing
 * token that is not above the previous one for that name on this node.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine.h"
#include "dm_msg.h"
#include "dm_wire.h"

#include "fuzz_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CLIENTS	8
#define FZ_LOCKS	2

static const char *const fz_peers[] = { "n1", "n2" };
static const char *const fz_locks[FZ_LOCKS] = { "lock/a", "lock/b" };

struct fz_client {
	uint64_t	 handle;	/* fresh for every request: handles are never reused */
	bool		 used, waiting, holding;
	unsigned	 lock;
	enum dm_mode	 mode;
};

struct fz_state {
	struct fz_client clients[FZ_CLIENTS];
	uint64_t	 last_token[FZ_LOCKS];
	uint64_t	 next_handle;
};

static struct fz_client *
fz_client(struct fz_state *st, uint64_t handle)
{
	for (unsigned i = 0; i < FZ_CLIENTS; i++)
		if (st->clients[i].used && st->clients[i].handle == handle)
			return &st->clients[i];
	return NULL;
}

/* The local invariants, checked on every grant. */
static void
fz_granted(struct fz_state *st, uint64_t handle, uint64_t token)
{
	struct fz_client *c = fz_client(st, handle);

	if (!c || !c->waiting)
		abort();	/* a grant for nobody who was waiting */
	for (unsigned i = 0; i < FZ_CLIENTS; i++) {
		const struct fz_client *o = &st->clients[i];

		if (o != c && o->holding && o->lock == c->lock &&
		    (o->mode == DM_MODE_EXCLUSIVE || c->mode == DM_MODE_EXCLUSIVE))
			abort();	/* two incompatible local holders */
	}
	if (token <= st->last_token[c->lock])
		abort();	/* fencing token did not increase */
	st->last_token[c->lock] = token;
	c->waiting = false;
	c->holding = true;
}

static void
fz_effect(void *ctx, const struct dm_effect *fx)
{
	struct fz_state *st = ctx;
	struct fz_client *c;

	switch (fx->type) {
	case DM_FX_GRANT:
		fz_granted(st, fx->u.grant.handle, fx->u.grant.token);
		break;
	case DM_FX_DENY:
		if ((c = fz_client(st, fx->u.deny.handle)) != NULL)
			c->used = c->waiting = c->holding = false;
		break;
	case DM_FX_LOST:
		if ((c = fz_client(st, fx->u.lost.handle)) != NULL)
			c->used = c->waiting = c->holding = false;
		break;
	case DM_FX_PERSIST_RECORD:
		/* What the daemon stores must read back at the next start:
		 * dm_engine_new() refuses invalid names and oversized lists. */
		if (fx->u.record.n_names > DM_NODES_MAX || fx->u.record.n_removals > DM_NODES_MAX)
			abort();
		for (size_t i = 0; i < fx->u.record.n_names; i++)
			if (!dm_node_name_valid(fx->u.record.names[i], strlen(fx->u.record.names[i])))
				abort();
		for (size_t i = 0; i < fx->u.record.n_removals; i++)
			if (!dm_node_name_valid(fx->u.record.removals[i].name,
			    strlen(fx->u.record.removals[i].name)))
				abort();
		break;
	default:
		break;
	}
}

static void
fz_step(struct dm_engine *e, struct fz_state *st, struct dm_event *ev, dm_msec_t now)
{
	int r;

	ev->now = now;
	r = dm_engine_step(e, ev, fz_effect, st);
	/* Errors are answers (-EPROTO for a message it refuses, -EINVAL for a
	 * release of a request still waiting); anything positive is not. */
	if (r > 0)
		abort();
}

/* Take n bytes of the script, or NULL when it has run out. */
static const uint8_t *
take(const uint8_t **p, const uint8_t *end, size_t n)
{
	const uint8_t *at = *p;

	if ((size_t)(end - at) < n)
		return NULL;
	*p = at + n;
	return at;
}

static void
fz_acquire(struct dm_engine *e, struct fz_state *st, uint8_t arg, dm_msec_t now)
{
	struct fz_client *c = &st->clients[arg % FZ_CLIENTS];
	struct dm_event ev = { .type = DM_EV_ACQUIRE };

	if (c->used)
		return;		/* this client is busy */
	c->handle = ++st->next_handle;
	c->used = c->waiting = true;
	c->holding = false;
	c->lock = (arg >> 3) & 1;
	c->mode = (arg & 0x10) ? DM_MODE_SHARED : DM_MODE_EXCLUSIVE;
	ev.u.acquire.handle = c->handle;
	ev.u.acquire.lock = fz_locks[c->lock];
	ev.u.acquire.lock_len = strlen(fz_locks[c->lock]);
	ev.u.acquire.mode = c->mode;
	ev.u.acquire.wait_ms = (arg & 0x20) ? DM_WAIT_TRY :
	    (arg & 0x40) ? (dm_msec_t)200 : DM_WAIT_FOREVER;
	fz_step(e, st, &ev, now);
}

static void
fz_end(struct dm_engine *e, struct fz_state *st, uint8_t arg, bool cancel, dm_msec_t now)
{
	struct fz_client *c = &st->clients[arg % FZ_CLIENTS];
	struct dm_event ev = { .type = cancel ? DM_EV_CANCEL : DM_EV_RELEASE };

	if (!c->used || (!cancel && !c->holding))
		return;
	ev.u.release.handle = c->handle;
	c->used = c->waiting = c->holding = false;
	fz_step(e, st, &ev, now);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dm_peer_spec peers[] = {
		{ .name = "n0", .address = "10.0.0.1:7400" },
		{ .name = "n1", .address = "10.0.0.2:7400" },
		{ .name = "n2", .address = "10.0.0.3:7400" },
	};
	const char *const *names = dm_algorithm_names();
	const uint8_t *p = data, *end = data + size, *b;
	struct fz_state st;
	struct dm_engine_config cfg = {
		.self = "n0", .self_address = "10.0.0.1:7400", .cluster = "sim",
		.failure_policy = DM_FAILURE_MAJORITY, .incarnation = 1, .seed = 1,
		.peers = peers, .n_peers = 3,
		.request_timeout_ms = 60, .probe_timeout_ms = 30, .lease_ms = 40,
		.heartbeat_ms = 10, .restart_interval_ms = 100, .stop_ms = 5,
	};
	static struct dm_msg msg;
	struct dm_engine *e;
	struct dm_event ev;
	dm_msec_t now = 1000000;
	size_t n_names = 0;
	unsigned steps = 0;

	while (names[n_names])
		n_names++;
	if (n_names == 0 || !(b = take(&p, end, 1)))
		return 0;
	cfg.algorithm = names[b[0] % n_names];
	cfg.election = (b[0] & 0x80) ? "invitation" : NULL;
	memset(&st, 0, sizeof(st));
	if (dm_engine_new(&cfg, &e) != 0)
		abort();
	fz_step(e, &st, &(struct dm_event){ .type = DM_EV_TICK }, now);
	for (unsigned i = 0; i < 2; i++)
		fz_step(e, &st, &(struct dm_event){ .type = DM_EV_LINK_UP,
		    .u.link.peer = fz_peers[i] }, now);
	while (steps++ < FZ_STEPS_MAX && (b = take(&p, end, 2)) != NULL) {
		uint8_t op = b[0] % FZ_OP_COUNT_, arg = b[1];
		const uint8_t *bytes;
		size_t len;

		switch (op) {
		case FZ_OP_RECEIVE:
			/* arg: bit 0 the peer, bits 1-7 plus one more byte the length. */
			if (!(b = take(&p, end, 1)))
				break;
			len = ((size_t)(arg >> 1) << 8) | b[0];
			if (!(bytes = take(&p, end, len)))
				break;
			if (dm_wire_decode(bytes, len, &msg) != 0)
				break;
			ev = (struct dm_event){ .type = DM_EV_RECEIVE };
			ev.u.receive.peer = fz_peers[arg & 1];
			ev.u.receive.msg = &msg;
			fz_step(e, &st, &ev, now);
			break;
		case FZ_OP_TICK:
			now += (dm_msec_t)arg;
			fz_step(e, &st, &(struct dm_event){ .type = DM_EV_TICK }, now);
			break;
		case FZ_OP_ACQUIRE:
			fz_acquire(e, &st, arg, now);
			break;
		case FZ_OP_RELEASE:
			fz_end(e, &st, arg, false, now);
			break;
		case FZ_OP_CANCEL:
			fz_end(e, &st, arg, true, now);
			break;
		case FZ_OP_LINK:
			ev = (struct dm_event){ .type = (arg & 2) ? DM_EV_LINK_UP : DM_EV_LINK_DOWN };
			ev.u.link.peer = fz_peers[arg & 1];
			fz_step(e, &st, &ev, now);
			break;
		}
	}
	dm_engine_free(e);
	return 0;
}
