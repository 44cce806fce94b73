/*
 * sim_world.c: the simulated cluster behind sim_world.h: nodes (engine,
 * drifting host clock, pause state, clients), the discrete-event loop,
 * fault injection, and the glue from engine effects to the oracle.  The
 * engine is used only through dm_engine.h; messages are encoded with
 * dm_wire_encode() when sent and decoded with dm_wire_decode() when
 * delivered.  Must not call rand(), read a clock or touch the file system.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dm_msg.h"
#include "dm_wire.h"
#include "sim_heap.h"
#include "sim_net.h"
#include "sim_rng.h"
#include "sim_trace.h"
#include "sim_world.h"

#define SIM_CLIENTS_MAX		4
#define SIM_LOCKS_MAX		4
#define SIM_EXTRA_SLOTS		2	/* slots for nodes that join later */
#define MS			1000ull	/* microseconds per millisecond */

/* Engine timing used by the simulator (ms on each node's own clock).
 * Inequality (majority policy), rho = 1%:
 *   L/(1-rho) + D_stop = 40/0.99 + 5 = 45.4 < (T_fail + 0)/(1+rho) = 90/1.01 = 89.1 */
#define SIM_REQUEST_TIMEOUT_MS	60
#define SIM_PROBE_TIMEOUT_MS	30
#define SIM_LEASE_MS		40
#define SIM_HEARTBEAT_MS	10
#define SIM_RESTART_MS		100
#define SIM_STOP_MS		5
#define SIM_OPERATOR_WAIT_MS	200	/* a joiner stranded by its sponsor's exit */
/* Quiet time that ends a run early (quiet_long_enough): several failure
 * detection rounds (request timeout + probe timeout) and lease periods. */
#define SIM_QUIET_MS		(4 * (SIM_REQUEST_TIMEOUT_MS + SIM_PROBE_TIMEOUT_MS) + 2 * SIM_LEASE_MS)
#define SIM_DRIFT_PPM		10000

enum ev_kind {
	EV_START = 1,		/* first step of a new engine */
	EV_DELIVER,		/* head of link a -> node, epoch b */
	EV_TIMER,		/* engine deadline, gen a, incarnation b */
	EV_LINK_UP,		/* node learns link to a is up; incarnation b */
	EV_LINK_DOWN,
	EV_RESTARTED,		/* node learns a restarted; incarnation b */
	EV_INPUT,		/* client request to the engine: c = type, a = handle, b = wait, ptr-free */
	EV_CLIENT,		/* client a's next action, generation b */
	EV_EXPIRY,		/* client a's deadline passed, generation b */
	EV_FAULT,		/* inject a fault */
	EV_RESUME,		/* paused node resumes; incarnation b */
	EV_RESTART,		/* crashed/left node starts again */
	EV_SPONSOR_GONE,	/* node's sponsor left for good; incarnation b */
	EV_UNCUT,		/* heal cut a <-> b */
	EV_HEAL,		/* end of the fault phase */
	EV_SETTLE,		/* cluster settled: arm the Appendix bound */
	EV_STOP,		/* clients stop asking */
	EV_PROGRESS,		/* periodic liveness check */
	EV_END,
};

enum input_type { IN_ACQUIRE = 1, IN_RELEASE, IN_CANCEL, IN_LEAVE };

enum client_state { C_IDLE = 0, C_WAITING, C_HOLDING };

struct sim_client {
	enum client_state state;
	uint64_t	 handle;
	uint32_t	 gen;		/* invalidates scheduled EV_CLIENT */
	uint32_t	 expiry_gen;	/* invalidates scheduled EV_EXPIRY */
	unsigned	 lock;
	enum dm_mode	 mode;
	sim_time_t	 issued;
	uint64_t	 counter;
};

struct sim_node {
	char		 name[16];
	char		 address[32];
	struct dm_engine *eng;
	bool		 exists;	/* a process runs (maybe paused) */
	bool		 ready;
	bool		 paused;
	bool		 leaving, left;
	bool		 ever;		/* was ever a member */
	bool		 member_now;	/* this incarnation has been a member */
	int		 sponsor;	/* the sponsor it was started with, -1 none */
	uint64_t	 incarnation;
	uint64_t	 disk_floor;	/* last DM_FX_PERSIST: the disk survives crashes */
	sim_time_t	 resume_at;
	/* Host clock (CLOCK_BOOTTIME): local_us = base_local + (t - base_real)(1 + ppm/1e6). */
	int64_t		 ppm;
	sim_time_t	 base_real;
	uint64_t	 base_local;
	uint32_t	 timer_gen;
	size_t		 timer_pos;	/* heap index of the live EV_TIMER, SIZE_MAX none */
	dm_msec_t	 last_now;
	bool		 wants[SIM_NODES_MAX];	/* PEER_ADD seen */
	struct sim_client clients[SIM_CLIENTS_MAX];
	unsigned	 n_clients;
	sim_time_t	 net_since[SIM_LOCKS_MAX];	/* first REQUEST of a round, 0 none */
	unsigned	 holders[SIM_LOCKS_MAX];
	uint64_t	 cancelled[16];	/* handles whose CANCEL the engine processed */
	unsigned	 cancelled_next;
};

struct sim_world {
	struct sim_config cfg;
	struct sim_rng	 rng;
	struct sim_heap	 heap;
	struct sim_net	 net;
	struct sim_trace trace;
	struct sim_checker ck;
	struct sim_result *res;
	sim_time_t	 now;
	unsigned	 n_slots;
	struct sim_node	 nodes[SIM_NODES_MAX];
	char		 lock_names[SIM_LOCKS_MAX][16];
	unsigned	 n_locks;
	bool		 healed, settled, stopped;
	sim_time_t	 quiet_since;	/* after stop: quiet since (0: not quiet) */
	sim_time_t	 heal_at, stop_at, end_at;
	sim_time_t	 liveness_bound;
	/* RA §5 synchronisation delay: the last exit per lock. */
	sim_time_t	 last_exit[SIM_LOCKS_MAX];
	int		 last_exit_node[SIM_LOCKS_MAX];
	unsigned	 light_turn;	/* SIM_W_LIGHT: whose turn */
	bool		 light_busy;
	unsigned	 tick_spin;
	sim_time_t	 tick_spin_at;
	struct dm_msg	 msg;		/* decode scratch */
	uint8_t		 buf[DM_WIRE_MSG_MAX];
	int		 stepping;	/* node whose effects are being handled */
	int		 fatal;		/* setup error (negative errno) */
};

static void node_step(struct sim_world *w, int n, struct dm_event *ev);
static void client_schedule(struct sim_world *w, int n, unsigned c, sim_time_t after);
static bool quiet_long_enough(struct sim_world *w);

/* Arguments are evaluated only when the run keeps a trace (see sim_run). */
#define TRACE(w, ...) do {						\
		if ((w)->trace.enabled)					\
			sim_trace_line(&(w)->trace, (w)->now, __VA_ARGS__); \
	} while (0)

/* ---- small helpers ---------------------------------------------------- */

static void
push(struct sim_world *w, sim_time_t at, int kind, int node, uint64_t a, uint64_t b, uint64_t c)
{
	struct sim_event ev = { .at = at, .kind = kind, .node = node, .a = a, .b = b, .c = c };

	if (sim_heap_push(&w->heap, &ev) < 0 && !w->fatal)
		w->fatal = -ENOMEM;
}

static bool
violated(const struct sim_world *w)
{
	return w->ck.violation != SIM_OK;
}

static int
node_by_name(const struct sim_world *w, const char *name)
{
	/* Names are "n<slot>" (sim_run): read the number, check the name. */
	if (name[0] == 'n' && name[1] >= '0' && name[1] <= '9') {
		unsigned i = 0;

		for (const char *p = name + 1; *p >= '0' && *p <= '9' && i < 100000; p++)
			i = i * 10 + (unsigned)(*p - '0');
		if (i < w->n_slots && strcmp(w->nodes[i].name, name) == 0)
			return (int)i;
	}
	for (unsigned i = 0; i < w->n_slots; i++)
		if (strcmp(w->nodes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static uint64_t
host_clock_us(const struct sim_node *nd, sim_time_t t)
{
	int64_t dt = (int64_t)(t - nd->base_real);

	return nd->base_local + (uint64_t)(dt + dt * nd->ppm / 1000000);
}

static dm_msec_t
host_clock_ms(const struct sim_node *nd, sim_time_t t)
{
	return host_clock_us(nd, t) / MS;
}

/* Earliest real instant >= now at which node's clock reads at least ms. */
static sim_time_t
real_when(const struct sim_world *w, const struct sim_node *nd, dm_msec_t ms)
{
	uint64_t target = ms * MS, cur = host_clock_us(nd, w->now);
	sim_time_t t;

	if (ms >= UINT64_MAX / MS / 2)
		return UINT64_MAX / 2;
	if (target <= cur)
		return w->now;
	t = w->now + (sim_time_t)((target - cur) * 1000000 / (uint64_t)(1000000 + nd->ppm));
	while (host_clock_us(nd, t) < target)
		t++;
	while (t > w->now && host_clock_us(nd, t - 1) >= target)
		t--;
	return t;
}

static sim_time_t
msg_delay(struct sim_world *w)
{
	uint64_t d = w->cfg.delay_us;

	if (w->cfg.constant_delay)
		return d;
	if (sim_rng_chance(&w->rng, 20))	/* a slow message now and then */
		return sim_rng_range(&w->rng, d, 15 * d);
	return sim_rng_range(&w->rng, d / 5, 2 * d);
}

static const char *
kind_name(uint8_t kind)
{
	const char *s = dm_msg_kind_name(kind);

	return s ? s : "?";
}

static const char *
mode_name(enum dm_mode m)
{
	return m == DM_MODE_SHARED ? "shared" : "exclusive";
}

static void
fail(struct sim_world *w, enum sim_violation v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(struct sim_world *w, enum sim_violation v, const char *fmt, ...)
{
	char what[SIM_CHECK_WHAT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	sim_check_fail(&w->ck, v, "%s", what);
}

static void sponsor_left(struct sim_world *w, int n);

/* ---- links --------------------------------------------------------------- */

static bool
link_cut(struct sim_world *w, int a, int b)
{
	return sim_net_link(&w->net, (unsigned)a, (unsigned)b)->cut > 0;
}

static void
link_schedule_all(struct sim_world *w, int from, int to)
{
	struct sim_link *l = sim_net_link(&w->net, (unsigned)from, (unsigned)to);
	sim_time_t prev = w->now;

	l->epoch++;
	for (struct sim_msg *m = l->head; m; m = m->next) {
		sim_time_t at = w->now + msg_delay(w);

		m->at = at > prev ? at : prev;
		prev = m->at;
		push(w, m->at, EV_DELIVER, to, (uint64_t)from, l->epoch, 0);
	}
	l->last_at = prev;
}

/* Tell node n (if it keeps a link to peer) that the link is up/down. */
static void
link_notify(struct sim_world *w, int n, int peer, bool up)
{
	struct sim_node *nd = &w->nodes[n];

	if (!nd->exists || !nd->wants[peer])
		return;
	push(w, w->now + w->cfg.delay_us, up ? EV_LINK_UP : EV_LINK_DOWN, n,
	    (uint64_t)peer, nd->incarnation, 0);
}

static void
cut(struct sim_world *w, int a, int b)
{
	struct sim_link *ab = sim_net_link(&w->net, (unsigned)a, (unsigned)b);
	struct sim_link *ba = sim_net_link(&w->net, (unsigned)b, (unsigned)a);

	if (ab->cut++ == 0) {
		ab->epoch++;
		ba->epoch++;
		/* The transport notices sooner or later, or not at all. */
		if (!sim_rng_chance(&w->rng, 300)) {
			link_notify(w, a, b, false);
			link_notify(w, b, a, false);
		}
	}
	ba->cut++;
}

static void
uncut(struct sim_world *w, int a, int b)
{
	struct sim_link *ab = sim_net_link(&w->net, (unsigned)a, (unsigned)b);
	struct sim_link *ba = sim_net_link(&w->net, (unsigned)b, (unsigned)a);

	if (ab->cut == 0)
		return;
	ba->cut--;
	if (--ab->cut > 0)
		return;
	TRACE(w, "net: link %s <-> %s healed (%zu + %zu messages held)",
	    w->nodes[a].name, w->nodes[b].name, ab->n, ba->n);
	link_schedule_all(w, a, b);
	link_schedule_all(w, b, a);
	link_notify(w, a, b, true);
	link_notify(w, b, a, true);
}

/* ---- engine effects ------------------------------------------------------ */

static int
lock_index(const struct sim_world *w, const char *name)
{
	for (unsigned i = 0; i < w->n_locks; i++)
		if (strcmp(w->lock_names[i], name) == 0)
			return (int)i;
	return -1;
}

static struct sim_client *
client_of(struct sim_world *w, int n, uint64_t handle, unsigned *ret_c)
{
	unsigned c = (unsigned)((handle >> 40) & 0xff);
	int hn = (int)(handle >> 48);

	if (hn != n || c >= w->nodes[n].n_clients)
		return NULL;
	if (w->nodes[n].clients[c].handle != handle)
		return NULL;
	*ret_c = c;
	return &w->nodes[n].clients[c];
}

/* A GRANT or DENY for a request its client already withdrew (the CANCEL is
 * still on its way to the engine) is a race, not a bug; after the engine
 * processed the CANCEL it is a bug. */
static bool
late_effect(struct sim_world *w, int n, uint64_t handle, const char *what)
{
	struct sim_node *nd = &w->nodes[n];
	unsigned c = (unsigned)((handle >> 40) & 0xff);

	for (unsigned i = 0; i < 16; i++)
		if (nd->cancelled[i] == handle) {
			fail(w, SIM_V_PROTOCOL, "n%d: %s to client %#" PRIx64 " after the engine"
			    " processed its CANCEL", n, what, handle);
			return false;
		}
	if ((int)(handle >> 48) != n || c >= nd->n_clients ||
	    (handle & 0xffffffffffull) > (nd->clients[c].counter & 0xffffffffffull))
		return false;
	TRACE(w, "%s: late %s for withdrawn client %#" PRIx64 " ignored", nd->name, what, handle);
	return true;
}

static void
fx_send(struct sim_world *w, int n, const struct dm_effect *fx)
{
	const struct dm_msg *m = fx->u.send.msg;
	int to = node_by_name(w, fx->u.send.peer);
	struct sim_link *l;
	sim_time_t at;
	size_t len;
	int li;

	if (dm_wire_encode(m, w->buf, sizeof(w->buf), &len) < 0) {
		fail(w, SIM_V_PROTOCOL, "n%d: dm_wire_encode failed for %s", n, kind_name(m->kind));
		return;
	}
	w->res->all_messages++;
	if (m->kind >= DM_MSG_ALGO_BASE)
		w->res->algo_messages++;
	if (m->kind == DM_RA_REQUEST || m->kind == DM_RA_REPLY)
		w->res->ra_messages++;
	TRACE(w, "%s > %s %s lock=%s seq=%" PRIu64 " tok=%#" PRIx64 " ep=%" PRIu64
	    " node=%s inc=%#" PRIx64 " serial=%" PRIu64 " arg=%" PRIu64 "%s", w->nodes[n].name,
	    fx->u.send.peer, kind_name(m->kind), m->lock_len ? m->lock : "-", m->seq, m->token,
	    m->epoch, m->node_len ? m->node : "-", m->incarnation, m->serial, m->arg,
	    m->mode == DM_MODE_SHARED ? " shared" : "");
	li = m->lock_len ? lock_index(w, m->lock) : -1;
	if (w->cfg.request_kind != 0 && m->kind == w->cfg.request_kind && li >= 0) {
		if (w->nodes[n].net_since[li] == 0)
			w->nodes[n].net_since[li] = w->now ? w->now : 1;
		sim_check_net_request(&w->ck, w->now, n, m->lock, (enum dm_mode)m->mode, m->seq);
	}
	if (to < 0 || !w->nodes[to].exists)
		return;		/* nobody listens there: the transport drops it */
	l = sim_net_link(&w->net, (unsigned)n, (unsigned)to);
	if (sim_net_enqueue(l, w->now + msg_delay(w), w->buf, len, &at) < 0) {
		w->fatal = -ENOMEM;
		return;
	}
	if (l->cut == 0)
		push(w, at, EV_DELIVER, to, (uint64_t)n, l->epoch, 0);
}

static void
client_expiry_arm(struct sim_world *w, int n, unsigned c, dm_msec_t deadline)
{
	struct sim_client *cl = &w->nodes[n].clients[c];

	cl->expiry_gen++;
	if (deadline == 0)
		return;
	push(w, real_when(w, &w->nodes[n], deadline), EV_EXPIRY, n, c, cl->expiry_gen, 0);
}

static sim_time_t
expiry_real(struct sim_world *w, int n, dm_msec_t deadline)
{
	sim_time_t t;

	if (deadline == 0)
		return 0;
	t = real_when(w, &w->nodes[n], deadline);
	return t > w->now ? t : w->now;
}

static sim_time_t
hold_time(struct sim_world *w)
{
	uint64_t d = w->cfg.delay_us;

	if (w->cfg.hold_time && w->cfg.workload == SIM_W_HEAVY)
		return w->cfg.hold_time(w->cfg.hook_ctx, w->stepping, sim_rng_next(&w->rng));
	switch (w->cfg.workload) {
	case SIM_W_LIGHT:
		return 2 * d;
	case SIM_W_HEAVY:
		return 4 * d;
	case SIM_W_FOREVER:	/* short: no probes, so messages can be counted exactly */
		return sim_rng_range(&w->rng, d / 2, 8 * d);
	default:
		if (sim_rng_chance(&w->rng, 30))	/* longer than the request timeout */
			return sim_rng_range(&w->rng, 60 * MS, 150 * MS);
		return sim_rng_range(&w->rng, d / 2, 8 * d);
	}
}

/* A node's entry/exit for the RA §5 metrics. */
static void
note_holders(struct sim_world *w, int n, unsigned li, int delta, sim_time_t issued)
{
	struct sim_node *nd = &w->nodes[n];

	if (delta > 0 && nd->holders[li]++ == 0) {
		/* Entry: synchronisation delay if another node's exit released
		 * us and our request had been waiting for it (Case A of §5.4). */
		if (w->last_exit_node[li] >= 0 && w->last_exit_node[li] != n &&
		    nd->net_since[li] != 0 &&
		    nd->net_since[li] + 2 * (sim_time_t)w->cfg.delay_us <= w->last_exit[li] &&
		    issued + 2 * (sim_time_t)w->cfg.delay_us <= w->last_exit[li]) {
			double d = (double)(w->now - w->last_exit[li]) / w->cfg.delay_us;

			w->res->sync_sum_d += d;
			w->res->sync_n++;
			if (d > w->res->sync_max_d)
				w->res->sync_max_d = d;
		}
		nd->net_since[li] = 0;
	} else if (delta < 0 && nd->holders[li] > 0 && --nd->holders[li] == 0) {
		w->last_exit[li] = w->now;
		w->last_exit_node[li] = n;
	}
}

static void
fx_grant(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = client_of(w, n, fx->u.grant.handle, &c);

	TRACE(w, "%s: GRANT client %#" PRIx64 " token %#" PRIx64 " deadline %" PRIu64,
	    w->nodes[n].name, fx->u.grant.handle, fx->u.grant.token, fx->u.grant.deadline);
	if (!cl || cl->state != C_WAITING) {
		if (!late_effect(w, n, fx->u.grant.handle, "GRANT"))
			fail(w, SIM_V_PROTOCOL, "n%d: GRANT to client %#" PRIx64
			    " that is not waiting", n, fx->u.grant.handle);
		return;
	}
	if (sim_check_grant(&w->ck, w->now, n, cl->handle, fx->u.grant.token,
	    expiry_real(w, n, fx->u.grant.deadline)) < 0)
		return;
	cl->state = C_HOLDING;
	w->res->response_sum_d += (double)(w->now - cl->issued) / w->cfg.delay_us;
	w->res->response_n++;
	note_holders(w, n, cl->lock, +1, cl->issued);
	client_expiry_arm(w, n, c, fx->u.grant.deadline);
	cl->gen++;
	push(w, w->now + hold_time(w), EV_CLIENT, n, c, cl->gen, 0);
}

static void
client_done(struct sim_world *w, int n, unsigned c)
{
	struct sim_client *cl = &w->nodes[n].clients[c];

	cl->state = C_IDLE;
	cl->handle = 0;
	cl->gen++;
	cl->expiry_gen++;
	if (w->cfg.workload == SIM_W_LIGHT)
		w->light_busy = false;
	client_schedule(w, n, c, 0);
}

static void
fx_deny(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = client_of(w, n, fx->u.deny.handle, &c);

	TRACE(w, "%s: DENY client %#" PRIx64 " error %d", w->nodes[n].name,
	    fx->u.deny.handle, fx->u.deny.error);
	if (!cl || cl->state != C_WAITING) {
		if (!late_effect(w, n, fx->u.deny.handle, "DENY"))
			fail(w, SIM_V_PROTOCOL, "n%d: DENY to client %#" PRIx64
			    " that is not waiting", n, fx->u.deny.handle);
		return;
	}
	if (sim_check_deny(&w->ck, w->now, cl->handle) < 0)
		return;
	sim_check_untrack(&w->ck, n, w->lock_names[cl->lock]);
	w->nodes[n].net_since[cl->lock] = 0;
	client_done(w, n, c);
}

static void
fx_extend(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = client_of(w, n, fx->u.extend.handle, &c);

	if (!cl || cl->state != C_HOLDING)
		return;		/* the client already gave the lock up */
	if (sim_check_expiry(&w->ck, w->now, cl->handle,
	    expiry_real(w, n, fx->u.extend.deadline)) < 0)
		return;
	client_expiry_arm(w, n, c, fx->u.extend.deadline);
}

static void
fx_lost(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = client_of(w, n, fx->u.lost.handle, &c);

	TRACE(w, "%s: LOST client %#" PRIx64 " reason %d", w->nodes[n].name,
	    fx->u.lost.handle, fx->u.lost.reason);
	if (!cl || cl->state != C_HOLDING)
		return;		/* already released or expired on its own */
	if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
		return;
	note_holders(w, n, cl->lock, -1, 0);
	client_done(w, n, c);
}

static void
on_effect(void *ctx, const struct dm_effect *fx)
{
	struct sim_world *w = ctx;
	int n = w->stepping, peer;
	struct sim_node *nd = &w->nodes[n];

	if (w->cfg.observe_effect)
		w->cfg.observe_effect(w->cfg.hook_ctx, w->now, n, fx);
	switch (fx->type) {
	case DM_FX_SEND:
		fx_send(w, n, fx);
		break;
	case DM_FX_GRANT:
		fx_grant(w, n, fx);
		break;
	case DM_FX_DENY:
		fx_deny(w, n, fx);
		break;
	case DM_FX_EXTEND:
		fx_extend(w, n, fx);
		break;
	case DM_FX_LOST:
		fx_lost(w, n, fx);
		break;
	case DM_FX_PEER_ADD:
		peer = node_by_name(w, fx->u.peer.name);
		TRACE(w, "%s: PEER_ADD %s", nd->name, fx->u.peer.name);
		if (peer < 0 || peer == n)
			break;
		nd->wants[peer] = true;
		if (w->nodes[peer].exists && !link_cut(w, n, peer))
			push(w, w->now + w->cfg.delay_us, EV_LINK_UP, n, (uint64_t)peer,
			    nd->incarnation, 0);
		break;
	case DM_FX_PEER_REMOVE:
		peer = node_by_name(w, fx->u.peer.name);
		TRACE(w, "%s: PEER_REMOVE %s", nd->name, fx->u.peer.name);
		if (peer >= 0)
			nd->wants[peer] = false;
		break;
	case DM_FX_READY:
		TRACE(w, "%s: READY", nd->name);
		nd->ready = true;
		nd->ever = nd->member_now = true;
		if (w->settled) {	/* a late rejoin: N for the bound may grow */
			unsigned members = 0;

			for (unsigned i = 0; i < w->n_slots; i++)
				members += w->nodes[i].exists && w->nodes[i].ready;
			if (w->cfg.appendix_bound && members > w->ck.bound_nodes)
				w->ck.bound_nodes = members;
		}
		break;
	case DM_FX_PERSIST:
		TRACE(w, "%s: PERSIST floor %" PRIu64, nd->name, fx->u.persist.floor);
		if (fx->u.persist.floor > nd->disk_floor)
			nd->disk_floor = fx->u.persist.floor;
		break;
	case DM_FX_LEFT:
		TRACE(w, "%s: LEFT", nd->name);
		nd->left = true;
		break;
	case DM_FX_LOG:
		if (fx->u.log.level <= DM_LOG_NOTICE)
			TRACE(w, "%s: log<%d> %s%s%s", nd->name, fx->u.log.level, fx->u.log.text,
			    fx->u.log.lock ? " lock=" : "", fx->u.log.lock ? fx->u.log.lock : "");
		break;
	}
}

/* ---- nodes --------------------------------------------------------------- */

/* Forget the node's pending deadline: a new generation, and its event
 * leaves the queue at once (stale timers would otherwise pile up in the
 * heap, one per engine step, and dominate a sweep's run time). */
static void
timer_drop(struct sim_world *w, struct sim_node *nd)
{
	nd->timer_gen++;
	if (nd->timer_pos != SIZE_MAX)
		sim_heap_remove(&w->heap, nd->timer_pos);
}

static void
timer_rearm(struct sim_world *w, int n)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_event ev = { .kind = EV_TIMER, .node = n, .track = &nd->timer_pos };
	dm_msec_t d;

	if (!nd->eng)
		return;
	d = dm_engine_next_deadline(nd->eng);
	if (d == 0) {
		timer_drop(w, nd);
		return;
	}
	ev.at = real_when(w, nd, d);
	ev.a = ++nd->timer_gen;
	ev.b = nd->incarnation;
	if (nd->timer_pos != SIZE_MAX)
		sim_heap_replace(&w->heap, nd->timer_pos, &ev);	/* = drop + push */
	else if (sim_heap_push(&w->heap, &ev) < 0)
		w->fatal = -ENOMEM;
}

static void node_gone(struct sim_world *w, int n, const char *why);

static void
node_step(struct sim_world *w, int n, struct dm_event *ev)
{
	struct sim_node *nd = &w->nodes[n];
	int r;

	if (!nd->eng)
		return;
	ev->now = host_clock_ms(nd, w->now);
	if (ev->now < nd->last_now)
		ev->now = nd->last_now;
	nd->last_now = ev->now;
	w->stepping = n;
	if (w->cfg.observe_event)
		w->cfg.observe_event(w->cfg.hook_ctx, w->now, n, ev);
	r = dm_engine_step(nd->eng, ev, on_effect, w);
	w->res->events++;
	if (r == -EPROTO)
		w->res->engine_errors++;
	if (r < 0)
		TRACE(w, "%s: step(type %d) returned %d", nd->name, ev->type, r);
	if (!nd->left) {
		struct dm_engine_stats st;

		/* An engine that resets itself to rejoin says so only here. */
		dm_engine_get_stats(nd->eng, &st);
		if (nd->ready && !st.ready)
			TRACE(w, "%s: no longer ready", nd->name);
		nd->ready = st.ready;
		nd->ever |= st.ready;
	}
	if (nd->left) {
		if (w->healed)
			sponsor_left(w, n);
		node_gone(w, n, "left");
		/* Comes back later as a new incarnation through a sponsor. */
		if (!w->healed)
			push(w, w->now + sim_rng_range(&w->rng, 20 * MS, 300 * MS), EV_RESTART,
			    n, 0, 0, 0);
		return;
	}
	timer_rearm(w, n);
}

static int
node_start(struct sim_world *w, int n, bool initial)
{
	struct sim_node *nd = &w->nodes[n];
	struct dm_peer_spec peers[SIM_NODES_MAX], sponsor;
	struct dm_engine_config cfg = {
		.self = nd->name,
		.self_address = nd->address,
		.cluster = "sim",
		.algorithm = w->cfg.algorithm,
		.failure_policy = w->cfg.policy,
		.incarnation = ++nd->incarnation,
		.seed = sim_rng_fork(&w->rng),
		.request_timeout_ms = SIM_REQUEST_TIMEOUT_MS,
		.probe_timeout_ms = SIM_PROBE_TIMEOUT_MS,
		.lease_ms = SIM_LEASE_MS,
		.heartbeat_ms = SIM_HEARTBEAT_MS,
		.restart_interval_ms = SIM_RESTART_MS,
		.stop_ms = SIM_STOP_MS,
		.clock_drift_ppm = SIM_DRIFT_PPM,
		.test_breakage = w->cfg.breakage,
		.election = w->cfg.election,
		.group_size = w->cfg.group_size,
		.epoch_floor = nd->disk_floor,
	};
	size_t np = 0;
	int sponsor_index = -1;
	int r;

	if (initial) {
		for (unsigned i = 0; i < w->cfg.nodes; i++) {
			peers[np].name = w->nodes[i].name;
			peers[np].address = w->nodes[i].address;
			np++;
		}
		cfg.peers = peers;
		cfg.n_peers = np;
	} else {
		int candidates[SIM_NODES_MAX], nc = 0;

		for (unsigned i = 0; i < w->n_slots; i++)
			if ((int)i != n && w->nodes[i].exists && w->nodes[i].ready &&
			    !w->nodes[i].leaving)
				candidates[nc++] = (int)i;
		if (nc == 0)
			return -EAGAIN;
		sponsor_index = candidates[sim_rng_below(&w->rng, (uint64_t)nc)];
		sponsor.name = w->nodes[sponsor_index].name;
		sponsor.address = w->nodes[sponsor_index].address;
		cfg.sponsor = &sponsor;
	}
	r = dm_engine_new(&cfg, &nd->eng);
	if (r < 0) {
		nd->incarnation--;
		return r;
	}
	nd->exists = true;
	nd->ready = nd->paused = nd->leaving = nd->left = nd->member_now = false;
	nd->sponsor = sponsor_index;
	memset(nd->wants, 0, sizeof(nd->wants));
	memset(nd->net_since, 0, sizeof(nd->net_since));
	memset(nd->holders, 0, sizeof(nd->holders));
	TRACE(w, "%s: start incarnation %" PRIu64 " %s%s", nd->name, nd->incarnation,
	    initial ? "with the static roster" : "joining through ",
	    initial ? "" : cfg.sponsor->name);
	push(w, w->now, EV_START, n, 0, nd->incarnation, 0);
	/* Peers that keep a link to this name see the new incarnation. */
	if (!initial)
		for (unsigned i = 0; i < w->n_slots; i++)
			if ((int)i != n && w->nodes[i].exists && w->nodes[i].wants[n] &&
			    !link_cut(w, (int)i, n))
				push(w, w->now + w->cfg.delay_us, EV_RESTARTED, (int)i,
				    (uint64_t)n, w->nodes[i].incarnation, 0);
	return 0;
}

/* After the heal, node n left for good (it does not come back): a node still
 * joining through it alone is restarted with another sponsor by the operator
 * if it has not joined after a generous wait (a JOIN that reached n while it
 * was leaving was refused with a hint to another member: given time, the
 * engine finds its way; a JOIN that arrived after n exited found nobody). */
static void
sponsor_left(struct sim_world *w, int n)
{
	for (unsigned j = 0; j < w->n_slots; j++) {
		struct sim_node *jd = &w->nodes[j];

		if ((int)j != n && jd->exists && !jd->member_now && jd->sponsor == n)
			push(w, w->now + SIM_OPERATOR_WAIT_MS * MS, EV_SPONSOR_GONE, (int)j, 0,
			    jd->incarnation, 0);
	}
}

/* The process is gone (crash, or exit after leaving): state lost. */
static void
node_gone(struct sim_world *w, int n, const char *why)
{
	struct sim_node *nd = &w->nodes[n];

	TRACE(w, "%s: %s (incarnation %" PRIu64 ")", nd->name, why, nd->incarnation);
	dm_engine_free(nd->eng);
	nd->eng = NULL;
	nd->exists = nd->ready = nd->paused = false;
	timer_drop(w, nd);
	sim_check_forget_node(&w->ck, w->now, n);
	for (unsigned i = 0; i < w->n_slots; i++) {
		sim_net_flush(sim_net_link(&w->net, (unsigned)n, i));
		sim_net_flush(sim_net_link(&w->net, i, (unsigned)n));
		/* The kernel closes the sockets: peers see the link drop. */
		if ((int)i != n && !link_cut(w, (int)i, n))
			link_notify(w, (int)i, n, false);
	}
	for (unsigned c = 0; c < nd->n_clients; c++) {
		struct sim_client *cl = &nd->clients[c];

		if (w->cfg.workload == SIM_W_LIGHT && cl->state != C_IDLE)
			w->light_busy = false;
		cl->state = C_IDLE;
		cl->handle = 0;
		cl->gen++;
		cl->expiry_gen++;
		client_schedule(w, n, c, 10 * MS);
	}
	for (unsigned li = 0; li < SIM_LOCKS_MAX; li++)
		if (nd->holders[li] > 0) {
			nd->holders[li] = 0;
			w->last_exit[li] = w->now;
			w->last_exit_node[li] = n;
		}
}

/* Events addressed to a paused node wait for it. */
static bool
defer_if_paused(struct sim_world *w, const struct sim_event *ev)
{
	struct sim_node *nd = &w->nodes[ev->node];
	struct sim_event again = *ev;

	if (!nd->paused)
		return false;
	again.at = nd->resume_at;
	if (sim_heap_push(&w->heap, &again) < 0)
		w->fatal = -ENOMEM;
	return true;
}

/* ---- clients --------------------------------------------------------------- */

static void
client_schedule(struct sim_world *w, int n, unsigned c, sim_time_t after)
{
	struct sim_client *cl = &w->nodes[n].clients[c];
	uint64_t d = w->cfg.delay_us;
	sim_time_t think;

	if (w->stopped)
		return;
	switch (w->cfg.workload) {
	case SIM_W_LIGHT:
		think = 20 * d;
		break;
	case SIM_W_HEAVY:
		think = w->cfg.think_time ? w->cfg.think_time(w->cfg.hook_ctx, n,
		    sim_rng_next(&w->rng)) : 0;
		break;
	default:
		think = sim_rng_range(&w->rng, 0, 10 * d);
		break;
	}
	cl->gen++;
	push(w, w->now + after + think, EV_CLIENT, n, c, cl->gen, 0);
}

static void
input(struct sim_world *w, int n, enum input_type type, uint64_t handle, uint64_t arg)
{
	push(w, w->now, EV_INPUT, n, handle, arg, type);
}

static void
client_acquire(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];
	uint64_t wait = DM_WAIT_FOREVER, d = w->cfg.delay_us;

	if (w->cfg.workload == SIM_W_LIGHT) {
		unsigned turn = w->light_turn % w->n_slots;

		/* Skip a turn whose node cannot serve. */
		if (!w->nodes[turn].exists || !w->nodes[turn].ready)
			w->light_turn++;
		if (w->light_busy || w->light_turn % w->n_slots != (unsigned)n) {
			client_schedule(w, n, c, 5 * d);
			return;
		}
		w->light_busy = true;
		w->light_turn++;
	}
	cl->lock = w->cfg.workload == SIM_W_RANDOM || w->cfg.workload == SIM_W_FOREVER ?
	    (unsigned)sim_rng_below(&w->rng, w->n_locks) : 0;
	cl->mode = w->cfg.shared && sim_rng_chance(&w->rng, 300) ?
	    DM_MODE_SHARED : DM_MODE_EXCLUSIVE;
	if (w->cfg.workload == SIM_W_RANDOM) {
		unsigned r = (unsigned)sim_rng_below(&w->rng, 100);

		if (r < 10)
			wait = DM_WAIT_TRY;
		else if (r < 30)
			wait = sim_rng_range(&w->rng, 1, 100);	/* ms */
	}
	cl->handle = ((uint64_t)n << 48) | ((uint64_t)c << 40) | (++cl->counter & 0xffffffffffull);
	cl->state = C_WAITING;
	cl->issued = w->now;
	if (wait == DM_WAIT_FOREVER)
		TRACE(w, "%s: client %#" PRIx64 " acquire %s %s, wait forever", nd->name,
		    cl->handle, w->lock_names[cl->lock], mode_name(cl->mode));
	else
		TRACE(w, "%s: client %#" PRIx64 " acquire %s %s, wait %" PRIu64 "ms", nd->name,
		    cl->handle, w->lock_names[cl->lock], mode_name(cl->mode), wait);
	if (sim_check_request(&w->ck, w->now, n, cl->handle, w->lock_names[cl->lock],
	    cl->mode) < 0)
		return;
	input(w, n, IN_ACQUIRE, cl->handle, wait);
	cl->gen++;
	/* Now and then the client disconnects while it waits. */
	if (w->cfg.workload == SIM_W_RANDOM && sim_rng_chance(&w->rng, 60))
		push(w, w->now + sim_rng_range(&w->rng, 0, 30 * d), EV_CLIENT, n, c, cl->gen, 0);
}

static void
client_action(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];

	switch (cl->state) {
	case C_IDLE:
		if (w->stopped)
			return;
		if (!nd->exists || !nd->ready || nd->leaving) {
			client_schedule(w, n, c, 5 * MS);
			return;
		}
		client_acquire(w, n, c);
		return;
	case C_WAITING:		/* gives up: disconnect */
		TRACE(w, "%s: client %#" PRIx64 " cancels its wait", nd->name, cl->handle);
		sim_check_withdraw(&w->ck, w->now, cl->handle);
		sim_check_untrack(&w->ck, n, w->lock_names[cl->lock]);
		nd->net_since[cl->lock] = 0;
		input(w, n, IN_CANCEL, cl->handle, 0);
		client_done(w, n, c);
		return;
	case C_HOLDING: {
		bool disconnect = w->cfg.workload == SIM_W_RANDOM && sim_rng_chance(&w->rng, 50);

		TRACE(w, "%s: client %#" PRIx64 " %s", nd->name, cl->handle,
		    disconnect ? "disconnects while holding" : "releases");
		if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
			return;
		note_holders(w, n, cl->lock, -1, 0);
		input(w, n, disconnect ? IN_CANCEL : IN_RELEASE, cl->handle, 0);
		client_done(w, n, c);
		return;
	}
	}
}

static void
client_expired(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];

	if (cl->state != C_HOLDING)
		return;
	TRACE(w, "%s: client %#" PRIx64 " deadline passed: treats the lock as lost",
	    nd->name, cl->handle);
	if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
		return;
	note_holders(w, n, cl->lock, -1, 0);
	input(w, n, IN_CANCEL, cl->handle, 0);
	client_done(w, n, c);
}

static void
do_input(struct sim_world *w, const struct sim_event *sev)
{
	int n = sev->node;
	struct sim_node *nd = &w->nodes[n];
	struct dm_event ev = { 0 };
	unsigned c;
	struct sim_client *cl;

	if (!nd->eng)
		return;
	switch ((enum input_type)sev->c) {
	case IN_ACQUIRE:
		cl = client_of(w, n, sev->a, &c);
		if (!cl || cl->state != C_WAITING)
			return;		/* cancelled before the daemon saw it */
		ev.type = DM_EV_ACQUIRE;
		ev.u.acquire.handle = sev->a;
		ev.u.acquire.lock = w->lock_names[cl->lock];
		ev.u.acquire.lock_len = strlen(w->lock_names[cl->lock]);
		ev.u.acquire.mode = cl->mode;
		ev.u.acquire.wait_ms = sev->b;
		break;
	case IN_RELEASE:
		ev.type = DM_EV_RELEASE;
		ev.u.release.handle = sev->a;
		break;
	case IN_CANCEL:
		ev.type = DM_EV_CANCEL;
		ev.u.cancel.handle = sev->a;
		node_step(w, n, &ev);
		nd->cancelled[nd->cancelled_next++ % 16] = sev->a;
		return;
	case IN_LEAVE:
		ev.type = DM_EV_LEAVE;
		break;
	}
	node_step(w, n, &ev);
}

/* ---- faults ---------------------------------------------------------------- */

static int
pick_node(struct sim_world *w, bool want_exists)
{
	int cand[SIM_NODES_MAX], nc = 0;

	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		if (want_exists ? (nd->exists && !nd->paused && !nd->leaving) :
		    (!nd->exists && i < w->cfg.nodes + SIM_EXTRA_SLOTS))
			cand[nc++] = (int)i;
	}
	return nc ? cand[sim_rng_below(&w->rng, (uint64_t)nc)] : -1;
}

static unsigned
live_count(const struct sim_world *w)
{
	unsigned k = 0;

	for (unsigned i = 0; i < w->n_slots; i++)
		k += w->nodes[i].exists;
	return k;
}

/* Ready members other than n: a crash or leave must leave one to sponsor
 * the others' rejoin (losing every member is a cluster-wide outage, outside
 * the failure model; nobody would be left to admit anyone). */
static unsigned
other_ready(const struct sim_world *w, int n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < w->n_slots; i++)
		k += (int)i != n && w->nodes[i].exists && w->nodes[i].ready &&
		    !w->nodes[i].leaving;
	return k;
}

static void
fault_inject(struct sim_world *w)
{
	uint32_t f = w->cfg.faults & ~SIM_F_DRIFT;
	uint32_t kinds[8];
	unsigned nk = 0;
	int n;

	for (unsigned b = 0; b < 8; b++)
		if (f & (1u << b))
			kinds[nk++] = 1u << b;
	if (nk == 0)
		return;
	w->res->faults_injected++;
	switch (kinds[sim_rng_below(&w->rng, nk)]) {
	case SIM_F_CRASH:
		n = w->cfg.crash_victim ? (int)w->cfg.crash_victim - 1 : pick_node(w, true);
		if (n < 0 || other_ready(w, n) == 0 || !w->nodes[n].exists)
			return;
		node_gone(w, n, "CRASH");
		if (!w->cfg.crash_victim)	/* a measured victim stays down */
			push(w, w->now + sim_rng_range(&w->rng, 5 * MS, 200 * MS), EV_RESTART, n, 0, 0, 0);
		return;
	case SIM_F_PAUSE:
		n = pick_node(w, true);
		if (n < 0)
			return;
		w->nodes[n].paused = true;
		w->nodes[n].resume_at = w->now + sim_rng_range(&w->rng, 20 * MS, 300 * MS);
		TRACE(w, "%s: PAUSE until %" PRIu64 "us", w->nodes[n].name, w->nodes[n].resume_at);
		push(w, w->nodes[n].resume_at, EV_RESUME, n, 0, w->nodes[n].incarnation, 0);
		return;
	case SIM_F_PARTITION: {
		bool side[SIM_NODES_MAX] = { false };
		unsigned live = live_count(w), k, max_k;
		sim_time_t until = w->now + sim_rng_range(&w->rng, 30 * MS, 400 * MS);

		if (live < 2)
			return;
		max_k = w->cfg.partition_any ? live - 1 : (live - 1) / 2;
		if (max_k == 0)
			max_k = 1;
		k = (unsigned)sim_rng_range(&w->rng, 1, max_k);
		for (unsigned i = 0; i < k; i++) {
			n = pick_node(w, true);
			if (n >= 0)
				side[n] = true;
		}
		TRACE(w, "net: PARTITION of %u node(s) until %" PRIu64 "us", k, until);
		for (unsigned a = 0; a < w->n_slots; a++)
			for (unsigned b = a + 1; b < w->n_slots; b++)
				if (side[a] != side[b]) {
					cut(w, (int)a, (int)b);
					push(w, until, EV_UNCUT, -1, a, b, 0);
				}
		return;
	}
	case SIM_F_LINK: {
		int a = pick_node(w, true), b = pick_node(w, true);

		if (a < 0 || b < 0 || a == b)
			return;
		TRACE(w, "net: LINK %s <-> %s down", w->nodes[a].name, w->nodes[b].name);
		cut(w, a, b);
		push(w, w->now + sim_rng_range(&w->rng, 1 * MS, 50 * MS), EV_UNCUT, -1,
		    (uint64_t)a, (uint64_t)b, 0);
		return;
	}
	case SIM_F_LEAVE:
		n = pick_node(w, true);
		if (n < 0 || other_ready(w, n) == 0 || !w->nodes[n].ready)
			return;
		TRACE(w, "%s: LEAVE", w->nodes[n].name);
		w->nodes[n].leaving = true;
		input(w, n, IN_LEAVE, 0, 0);
		return;
	case SIM_F_JOIN:
		n = pick_node(w, false);
		if (n < 0 || w->nodes[n].ever)
			return;		/* crashed/left members come back via EV_RESTART */
		if (node_start(w, n, false) < 0)
			return;
		return;
	}
}

/* ---- the loop -------------------------------------------------------------- */

static void
heal_all(struct sim_world *w)
{
	TRACE(w, "sim: HEAL: faults stop, partitions heal, nodes resume or restart");
	w->healed = true;
	w->heal_at = w->now;
	for (unsigned a = 0; a < w->n_slots; a++)
		for (unsigned b = 0; b < w->n_slots; b++)
			while (a < b && sim_net_link(&w->net, a, b)->cut > 0)
				uncut(w, (int)a, (int)b);
	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		if (nd->paused) {
			nd->resume_at = w->now;
			push(w, w->now, EV_RESUME, (int)i, 0, nd->incarnation, 0);
		}
	}
	sim_check_heal(&w->ck, w->now);
}

static void
handle(struct sim_world *w, const struct sim_event *sev)
{
	int n = sev->node;
	struct sim_node *nd = n >= 0 ? &w->nodes[n] : NULL;
	struct dm_event ev = { 0 };

	switch ((enum ev_kind)sev->kind) {
	case EV_START:
		if (sev->b != nd->incarnation || defer_if_paused(w, sev))
			return;
		ev.type = DM_EV_TICK;
		node_step(w, n, &ev);
		return;
	case EV_DELIVER: {
		int from = (int)sev->a;
		struct sim_link *l = sim_net_link(&w->net, (unsigned)from, (unsigned)n);
		struct sim_msg *m;
		int r;

		if (sev->b != l->epoch || l->cut || !l->head || !nd->exists)
			return;
		if (defer_if_paused(w, sev))
			return;
		m = sim_net_pop(l);
		r = dm_wire_decode(m->bytes, m->len, &w->msg);
		if (r < 0) {
			fail(w, SIM_V_PROTOCOL, "%s: dm_wire_decode of a message encoded by"
			    " dm_wire_encode failed: %d", nd->name, r);
			free(m);
			return;
		}
		free(m);
		TRACE(w, "%s < %s %s lock=%s seq=%" PRIu64 " tok=%#" PRIx64 " ep=%" PRIu64
		    " node=%s inc=%#" PRIx64 " serial=%" PRIu64 " arg=%" PRIu64 "%s", nd->name,
		    w->nodes[from].name, kind_name(w->msg.kind),
		    w->msg.lock_len ? w->msg.lock : "-", w->msg.seq, w->msg.token, w->msg.epoch,
		    w->msg.node_len ? w->msg.node : "-", w->msg.incarnation, w->msg.serial,
		    w->msg.arg, w->msg.mode == DM_MODE_SHARED ? " shared" : "");
		if (w->cfg.request_kind != 0 && w->msg.kind == w->cfg.request_kind &&
		    w->msg.lock_len)
			sim_check_net_deliver(&w->ck, n, from, w->msg.lock, w->msg.seq);
		ev.type = DM_EV_RECEIVE;
		ev.u.receive.peer = w->nodes[from].name;
		ev.u.receive.msg = &w->msg;
		node_step(w, n, &ev);
		return;
	}
	case EV_TIMER:
		if (sev->b != nd->incarnation || sev->a != nd->timer_gen || !nd->eng)
			return;
		if (defer_if_paused(w, sev))
			return;
		if (w->now == w->tick_spin_at) {
			if (++w->tick_spin > 10000) {
				fail(w, SIM_V_PROTOCOL, "%s: engine deadline never advances"
				    " (timer loop)", nd->name);
				return;
			}
		} else {
			w->tick_spin_at = w->now;
			w->tick_spin = 0;
		}
		ev.type = DM_EV_TICK;
		node_step(w, n, &ev);
		return;
	case EV_LINK_UP:
	case EV_LINK_DOWN:
		if (sev->b != nd->incarnation || !nd->eng || defer_if_paused(w, sev))
			return;
		if (sev->kind == EV_LINK_UP && (!w->nodes[sev->a].exists || link_cut(w, n, (int)sev->a)))
			return;
		TRACE(w, "%s: link to %s %s", nd->name, w->nodes[sev->a].name,
		    sev->kind == EV_LINK_UP ? "UP" : "DOWN");
		ev.type = sev->kind == EV_LINK_UP ? DM_EV_LINK_UP : DM_EV_LINK_DOWN;
		ev.u.link.peer = w->nodes[sev->a].name;
		node_step(w, n, &ev);
		return;
	case EV_RESTARTED:
		if (sev->b != nd->incarnation || !nd->eng || defer_if_paused(w, sev))
			return;
		TRACE(w, "%s: peer %s restarted", nd->name, w->nodes[sev->a].name);
		ev.type = DM_EV_PEER_RESTARTED;
		ev.u.restarted.peer = w->nodes[sev->a].name;
		node_step(w, n, &ev);
		if (nd->eng && nd->wants[sev->a])
			push(w, w->now, EV_LINK_UP, n, sev->a, nd->incarnation, 0);
		return;
	case EV_INPUT:
		if (defer_if_paused(w, sev))
			return;
		do_input(w, sev);
		return;
	case EV_CLIENT:
		if (sev->b != nd->clients[sev->a].gen)
			return;
		client_action(w, n, (unsigned)sev->a);
		return;
	case EV_EXPIRY:
		if (sev->b != nd->clients[sev->a].expiry_gen)
			return;
		client_expired(w, n, (unsigned)sev->a);
		return;
	case EV_FAULT:
		if (w->healed)
			return;
		fault_inject(w);
		push(w, w->now + sim_rng_range(&w->rng, 5 * MS, 150 * MS), EV_FAULT, -1, 0, 0, 0);
		return;
	case EV_RESUME:
		if (sev->b != nd->incarnation || !nd->paused || w->now < nd->resume_at)
			return;
		TRACE(w, "%s: RESUME", nd->name);
		nd->paused = false;
		ev.type = DM_EV_TICK;
		node_step(w, n, &ev);
		return;
	case EV_RESTART:
		if (nd->exists)
			return;
		if (node_start(w, n, false) < 0)
			push(w, w->now + 20 * MS, EV_RESTART, n, 0, 0, 0);
		return;
	case EV_SPONSOR_GONE:
		if (!nd->exists || nd->incarnation != sev->b || nd->member_now)
			return;
		/* Its only contact left the cluster for good before answering:
		 * no protocol can find the cluster from there (one sponsor per
		 * config, RA 7.2).  The operator restarts it pointing at a
		 * member, as dmlockd's log tells them to. */
		TRACE(w, "%s: the operator restarts it: sponsor %s left before it joined",
		    nd->name, w->nodes[nd->sponsor].name);
		node_gone(w, n, "stopped by the operator");
		if (node_start(w, n, false) < 0)
			push(w, w->now + 20 * MS, EV_RESTART, n, 0, 0, 0);
		return;
	case EV_UNCUT:
		uncut(w, (int)sev->a, (int)sev->b);
		return;
	case EV_HEAL:
		heal_all(w);
		return;
	case EV_SETTLE: {
		unsigned members = 0;

		for (unsigned i = 0; i < w->n_slots; i++)
			members += w->nodes[i].exists && w->nodes[i].ready;
		w->settled = true;
		sim_check_untrack_all(&w->ck);
		w->ck.bound_nodes = w->cfg.appendix_bound ? members : 0;
		TRACE(w, "sim: settled with %u members: Appendix bound armed", members);
		return;
	}
	case EV_STOP:
		TRACE(w, "sim: clients stop asking");
		w->stopped = true;
		return;
	case EV_PROGRESS:
		sim_check_progress(&w->ck, w->now, w->liveness_bound);
		if (quiet_long_enough(w)) {
			TRACE(w, "sim: quiet since %" PRIu64 "us: the run ends", w->quiet_since);
			w->end_at = w->now;
			push(w, w->now, EV_END, -1, 0, 0, 0);
		} else if (w->now + 50 * MS < w->end_at) {
			push(w, w->now + 50 * MS, EV_PROGRESS, -1, 0, 0, 0);
		}
		return;
	case EV_END:
		return;
	}
}

/* After the clients stop, the run may end early once the cluster has been
 * quiet for SIM_QUIET_MS: every request resolved, nobody holding, every
 * process serving.  That is exactly what final_checks() demands at the end,
 * and the quiet time covers several rounds of failure detection, so a node
 * wrongly suspected or removed in an idle cluster is still seen.  Without
 * it a sweep spends most of its time simulating heartbeats until the
 * liveness bound. */
static bool
quiet_long_enough(struct sim_world *w)
{
	if (!w->stopped || sim_check_pending(&w->ck) > 0)
		goto noisy;
	for (unsigned i = 0; i < w->n_slots; i++) {
		const struct sim_node *nd = &w->nodes[i];

		if (nd->exists && (nd->paused || nd->leaving || !nd->ready))
			goto noisy;
		for (unsigned c = 0; c < nd->n_clients && nd->exists; c++)
			if (nd->clients[c].state != C_IDLE)
				goto noisy;
	}
	if (w->quiet_since == 0)
		w->quiet_since = w->now;
	return w->now - w->quiet_since >= SIM_QUIET_MS * MS;
noisy:
	w->quiet_since = 0;
	return false;
}

/* After the run: every request resolved, every process serving. */
static void
final_checks(struct sim_world *w)
{
	sim_check_progress(&w->ck, w->now, w->liveness_bound);
	if (violated(w))
		return;
	if (sim_check_pending(&w->ck) > 0)
		fail(w, SIM_V_LIVENESS, "%zu request(s) still pending at the end",
		    sim_check_pending(&w->ck));
	for (unsigned i = 0; i < w->n_slots && !violated(w); i++) {
		struct sim_node *nd = &w->nodes[i];

		if (nd->exists && !nd->ready && !nd->leaving)
			fail(w, SIM_V_LIVENESS, "%s (incarnation %" PRIu64 ") never became"
			    " ready after healing", nd->name, nd->incarnation);
		for (unsigned c = 0; c < nd->n_clients && nd->exists; c++)
			if (nd->clients[c].state == C_HOLDING)
				fail(w, SIM_V_LIVENESS, "%s client %#" PRIx64 " still holds at"
				    " the end", nd->name, nd->clients[c].handle);
	}
	if (!violated(w) && w->cfg.faults == 0 && w->cfg.workload != SIM_W_RANDOM &&
	    w->cfg.msgs_per_peer != 0)
		sim_check_messages(&w->ck, w->res->algo_messages, w->ck.entries, w->cfg.nodes,
		    w->cfg.msgs_per_peer);
}

void
sim_config_defaults(struct sim_config *cfg)
{
	if (!cfg->algorithm)
		cfg->algorithm = "ricart-agrawala";
	if (cfg->nodes == 0)
		cfg->nodes = 3;
	if (cfg->delay_us == 0)
		cfg->delay_us = 1000;
	if (cfg->fault_ms == 0)
		cfg->fault_ms = 1500;
	if (cfg->calm_ms == 0)
		cfg->calm_ms = 800;
	if (cfg->trace_keep == 0)
		cfg->trace_keep = 400;
	if (!cfg->no_expectations && strcmp(cfg->algorithm, "ricart-agrawala") == 0) {
		if (cfg->msgs_per_peer == 0)
			cfg->msgs_per_peer = 2;
		if (cfg->request_kind == 0)
			cfg->request_kind = DM_RA_REQUEST;
		cfg->appendix_bound = true;
	}
	/* Lamport, Maekawa: arm the synchronisation-delay metric only
	 * (permission helper, SIM-REQUESTS.md). */
	if (!cfg->no_expectations && cfg->request_kind == 0) {
		if (strcmp(cfg->algorithm, "lamport") == 0)
			cfg->request_kind = DM_LP_REQUEST;
		else if (strcmp(cfg->algorithm, "maekawa") == 0)
			cfg->request_kind = DM_MK_REQUEST;
	}
}

static int
world_init(struct sim_world *w, const struct sim_config *cfg, struct sim_result *res)
{
	uint64_t d;
	int r;

	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	sim_config_defaults(&w->cfg);
	if (w->cfg.nodes > SIM_NODES_MAX - SIM_EXTRA_SLOTS)
		return -EINVAL;
	w->res = res;
	sim_rng_seed(&w->rng, w->cfg.seed);
	sim_heap_init(&w->heap);
	sim_check_init(&w->ck);
	w->n_slots = w->cfg.nodes + ((w->cfg.faults & SIM_F_JOIN) ? SIM_EXTRA_SLOTS : 0);
	if ((r = sim_net_init(&w->net, w->n_slots)) < 0)
		return r;
	if ((r = sim_trace_init(&w->trace, w->cfg.trace_keep, w->cfg.trace)) < 0)
		return r;
	w->n_locks = w->cfg.lock_names ? w->cfg.lock_names :
	    (unsigned)sim_rng_range(&w->rng, 1, 3);
	if (w->n_locks > SIM_LOCKS_MAX)
		w->n_locks = SIM_LOCKS_MAX;
	for (unsigned i = 0; i < w->n_locks; i++) {
		snprintf(w->lock_names[i], sizeof(w->lock_names[i]), "lock/%c", 'a' + i);
		w->last_exit_node[i] = -1;
	}
	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		snprintf(nd->name, sizeof(nd->name), "n%u", i);
		nd->timer_pos = SIZE_MAX;
		snprintf(nd->address, sizeof(nd->address), "10.0.0.%u:7400", i + 1);
		nd->base_real = 0;
		nd->base_local = sim_rng_range(&w->rng, 1000, 1000000) * MS;
		if (w->cfg.faults & SIM_F_DRIFT)
			nd->ppm = (int64_t)sim_rng_range(&w->rng, 0, 2 * SIM_DRIFT_PPM) - SIM_DRIFT_PPM;
		nd->n_clients = w->cfg.workload == SIM_W_LIGHT || w->cfg.workload == SIM_W_HEAVY ? 1 :
		    w->cfg.clients_per_node ? w->cfg.clients_per_node :
		    (unsigned)sim_rng_range(&w->rng, 1, 3);
		if (nd->n_clients > SIM_CLIENTS_MAX)
			nd->n_clients = SIM_CLIENTS_MAX;
	}
	d = w->cfg.delay_us;
	/* Liveness bound after healing: failure detection and removal, a
	 * rejoin (restart interval), then every client of the cluster served
	 * once with its longest hold and a few message delays each. */
	w->liveness_bound = 4 * (SIM_REQUEST_TIMEOUT_MS + SIM_PROBE_TIMEOUT_MS) * MS +
	    2 * SIM_RESTART_MS * MS + 4 * SIM_LEASE_MS * MS +
	    (sim_time_t)w->n_slots * SIM_CLIENTS_MAX * (150 * MS + 40 * d);
	w->heal_at = w->cfg.faults ? (sim_time_t)w->cfg.fault_ms * MS : 0;
	w->stop_at = w->heal_at + (sim_time_t)w->cfg.calm_ms * MS;
	w->end_at = w->stop_at + w->liveness_bound + 10 * MS;
	return 0;
}

static void
world_fini(struct sim_world *w)
{
	for (unsigned i = 0; i < w->n_slots; i++)
		dm_engine_free(w->nodes[i].eng);
	sim_heap_fini(&w->heap);
	sim_net_fini(&w->net);
	sim_check_fini(&w->ck);
	sim_trace_fini(&w->trace);
}

static void
report(struct sim_world *w)
{
	FILE *out = w->cfg.report;

	if (!out)
		return;
	fprintf(out, "DMSIM_SEED=%" PRIu64 " nodes=%u algorithm=%s election=%s group_size=%u"
	    " policy=%s faults=%#x workload=%d breakage=%#x\n", w->cfg.seed, w->cfg.nodes,
	    w->cfg.algorithm, w->cfg.election ? w->cfg.election : "bully", w->cfg.group_size,
	    w->cfg.policy == DM_FAILURE_PAPER ? "paper" : "majority", w->cfg.faults,
	    (int)w->cfg.workload, w->cfg.breakage);
	fprintf(out, "VIOLATION %s at %" PRIu64 "us: %s\n", sim_violation_name(w->ck.violation),
	    w->now, w->ck.what);
	fprintf(out, "--- last %zu trace lines ---\n", w->trace.count);
	sim_trace_dump(&w->trace, out);
	fprintf(out, "--- end of trace (replay: dmlock-sim --seed %" PRIu64 " --nodes %u%s%s --trace) ---\n",
	    w->cfg.seed, w->cfg.nodes, w->cfg.faults ? "" : " --no-faults",
	    w->cfg.policy == DM_FAILURE_PAPER ? " --policy paper" : "");
}

/* Fold one handled event into the run's fingerprint (FNV-1a over its
 * fields): cheap enough for every run, and two runs of one config differ
 * in it as soon as they differ in any event. */
static void
fingerprint(uint64_t *fp, const struct sim_event *ev)
{
	const uint64_t words[] = { ev->at, (uint64_t)(uint32_t)ev->kind,
	    (uint64_t)(uint32_t)ev->node, ev->a, ev->b, ev->c };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		*fp = (*fp ^ words[i]) * UINT64_C(0x100000001b3);
}

/* One run.  With tracing off the trace lines are never formatted, which is
 * most of the cost of a seed sweep; the violation report then comes from a
 * traced replay of the same seed (sim_run). */
static int
run_once(const struct sim_config *cfg, struct sim_result *res, bool tracing)
{
	struct sim_world *w = calloc(1, sizeof(*w));
	struct sim_event ev;
	uint64_t fp = UINT64_C(0xcbf29ce484222325);
	int r;

	memset(res, 0, sizeof(*res));
	if (!w)
		return -ENOMEM;
	if ((r = world_init(w, cfg, res)) < 0)
		goto fail;
	w->trace.enabled = tracing;
	for (unsigned i = 0; i < w->cfg.nodes; i++)
		if ((r = node_start(w, (int)i, true)) < 0)
			goto fail;
	for (unsigned i = 0; i < w->n_slots; i++)
		for (unsigned c = 0; c < w->nodes[i].n_clients; c++)
			client_schedule(w, (int)i, c, 0);
	if (w->cfg.faults & ~SIM_F_DRIFT) {
		push(w, 20 * MS, EV_FAULT, -1, 0, 0, 0);
		push(w, w->heal_at, EV_HEAL, -1, 0, 0, 0);
	} else {
		w->healed = true;
		sim_check_heal(&w->ck, 0);
	}
	push(w, w->heal_at + (w->cfg.faults ? SIM_RESTART_MS * MS +
	    2 * (SIM_REQUEST_TIMEOUT_MS + SIM_PROBE_TIMEOUT_MS) * MS : 0), EV_SETTLE, -1, 0, 0, 0);
	push(w, w->stop_at, EV_STOP, -1, 0, 0, 0);
	push(w, w->heal_at + 50 * MS, EV_PROGRESS, -1, 0, 0, 0);
	push(w, w->end_at, EV_END, -1, 0, 0, 0);
	while (!violated(w) && !w->fatal && sim_heap_pop(&w->heap, &ev) == 0) {
		if (ev.at > w->end_at)
			break;
		w->now = ev.at;
		fingerprint(&fp, &ev);
		handle(w, &ev);
		if (ev.kind == EV_END)
			break;
	}
	if (w->fatal) {
		r = w->fatal;
		goto fail;
	}
	if (!violated(w))
		final_checks(w);
	res->violation = w->ck.violation;
	memcpy(res->what, w->ck.what, sizeof(res->what));
	res->grants = w->ck.grants;
	res->denials = w->ck.denials;
	res->entries = w->ck.entries;
	res->end_time = w->now;
	res->trace_hash = fp;
	if (violated(w) && tracing)
		report(w);
	r = violated(w) ? 1 : 0;
fail:
	world_fini(w);
	free(w);
	return r;
}

int
sim_run(const struct sim_config *cfg, struct sim_result *res)
{
	struct sim_result traced;
	bool tracing = cfg->trace != NULL;
	int r = run_once(cfg, res, tracing);

	if (r != 1 || tracing || !cfg->report)
		return r;
	/* Replay the seed with its trace kept, for the report.  The run is
	 * deterministic, so the replay must fail the same way. */
	if (run_once(cfg, &traced, true) == 1 && traced.violation == res->violation &&
	    traced.trace_hash == res->trace_hash)
		return r;
	fprintf(cfg->report, "DMSIM_SEED=%" PRIu64 ": the traced replay did not reproduce"
	    " the violation (%s): the simulation is not deterministic\n", cfg->seed, res->what);
	res->violation = SIM_V_NONDETERMINISM;
	return r;
}
