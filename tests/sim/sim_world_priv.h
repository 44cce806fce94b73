/*
 * sim_world_priv.h: the inside of one simulated run (sim_world.h is its
 * public face), shared by the sim_world*.c files and nothing else: the
 * engine timing the simulator uses, the event kinds, the node, client and
 * world structures, and the sw_* functions one part calls in another.
 * None of these files may call rand(), read a clock or touch the file
 * system: a run is a function of its config and seed.
 */
#ifndef SIM_WORLD_PRIV_H
#define SIM_WORLD_PRIV_H

#include <errno.h>
#include <inttypes.h>
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
/* Quiet time that ends a run early (sw_quiet_long_enough): several failure
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
	EV_STATIC_STRANDED,	/* static restart still joining? incarnation b */
	EV_UNCUT,		/* heal cut a <-> b */
	EV_HEAL,		/* end of the fault phase */
	EV_SETTLE,		/* cluster settled: arm the Appendix bound */
	EV_STOP,		/* clients stop asking */
	EV_PROGRESS,		/* periodic liveness check */
	EV_END,
	EV_CRASH,		/* a crash the stale-roster storm scheduled */
	EV_STALE_CUT,		/* the storm cuts node off once it removed a; poll b */
	EV_STALE_HEALED,	/* the storm's cut healed; node's incarnation a */
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
	bool		 sponsor_config;	/* the operator gave it a sponsor= config */
	bool		 static_restart;	/* this incarnation restarted from the static roster */
	uint64_t	 incarnation;
	uint64_t	 disk_floor;	/* last DM_FX_PERSIST: the disk survives crashes */
	/* last DM_FX_PERSIST_RECORD (names are the world's node names) */
	uint64_t	 disk_label;
	size_t		 disk_n_names, disk_n_removals;
	char		 disk_names[SIM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	char		 disk_removed[SIM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	uint64_t	 disk_ballot[SIM_NODES_MAX];
	char		 disk_promise_prober[DM_NODE_NAME_MAX + 1];	/* "": none */
	uint64_t	 disk_promise_label;
	size_t		 disk_n_dead;
	char		 disk_dead[SIM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	uint64_t	 disk_dead_incarnation[SIM_NODES_MAX];
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
	sim_time_t	 storm_until;	/* the stale-roster storm's end: one at a time */
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

/* Arguments are evaluated only when the run keeps a trace (see sim_run). */
#define TRACE(w, ...) do {						\
		if ((w)->trace.enabled)					\
			sim_trace_line(&(w)->trace, (w)->now, __VA_ARGS__); \
	} while (0)

/* sim_world.c: the helpers every part uses, and the run's end. */
sim_time_t sw_real_when(const struct sim_world *w, const struct sim_node *nd, dm_msec_t ms);
sim_time_t sw_msg_delay(struct sim_world *w);
void sw_fail(struct sim_world *w, enum sim_violation v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool sw_quiet_long_enough(struct sim_world *w);

/* sim_world_events.c: what each simulated event does. */
void sw_handle(struct sim_world *w, const struct sim_event *sev);

/* sim_world_nodes.c: engine processes start, step and go. */
int sw_node_start(struct sim_world *w, int n, bool initial);
void sw_node_step(struct sim_world *w, int n, struct dm_event *ev);
void sw_node_gone(struct sim_world *w, int n, const char *why);

/* sim_world_effects.c: an engine's effects, checked by the oracle. */
void sw_on_effect(void *ctx, const struct dm_effect *fx);
struct sim_client *sw_client_of(struct sim_world *w, int n, uint64_t handle, unsigned *ret_c);
void sw_note_holders(struct sim_world *w, int n, unsigned li, int delta, sim_time_t issued);

/* sim_world_clients.c: the workload. */
void sw_client_schedule(struct sim_world *w, int n, unsigned c, sim_time_t after);
void sw_client_done(struct sim_world *w, int n, unsigned c);
void sw_client_action(struct sim_world *w, int n, unsigned c);
void sw_client_expired(struct sim_world *w, int n, unsigned c);
void sw_holder_lost(struct sim_world *w, int n, const struct sim_client *cl, const char *how);
void sw_input(struct sim_world *w, int n, enum input_type type, uint64_t handle, uint64_t arg);
void sw_do_input(struct sim_world *w, const struct sim_event *sev);

/* sim_world_faults.c: links, fault injection, the heal. */
void sw_link_notify(struct sim_world *w, int n, int peer, bool up);
void sw_uncut(struct sim_world *w, int a, int b);
void sw_fault_inject(struct sim_world *w);
void sw_crash(struct sim_world *w, int n);
void sw_stale_cut(struct sim_world *w, int x, int z, unsigned polls);
void sw_stale_healed(struct sim_world *w, int x, uint64_t incarnation);
bool sw_static_peer_member(const struct sim_world *w, int n);
void sw_heal_all(struct sim_world *w);

/* Small and hot: inlined where used. */

static inline void
sw_push(struct sim_world *w, sim_time_t at, int kind, int node, uint64_t a, uint64_t b, uint64_t c)
{
	struct sim_event ev = { .at = at, .kind = kind, .node = node, .a = a, .b = b, .c = c };

	if (sim_heap_push(&w->heap, &ev) < 0 && !w->fatal)
		w->fatal = -ENOMEM;
}

static inline bool
sw_violated(const struct sim_world *w)
{
	return w->ck.violation != SIM_OK;
}

static inline uint64_t
sw_host_clock_us(const struct sim_node *nd, sim_time_t t)
{
	int64_t dt = (int64_t)(t - nd->base_real);

	return nd->base_local + (uint64_t)(dt + dt * nd->ppm / 1000000);
}

static inline dm_msec_t
sw_host_clock_ms(const struct sim_node *nd, sim_time_t t)
{
	return sw_host_clock_us(nd, t) / MS;
}

static inline bool
sw_link_cut(struct sim_world *w, int a, int b)
{
	return sim_net_link(&w->net, (unsigned)a, (unsigned)b)->cut > 0;
}

static inline const char *
sw_kind_name(uint8_t kind)
{
	const char *s = dm_msg_kind_name(kind);

	return s ? s : "?";
}

#endif /* SIM_WORLD_PRIV_H */
