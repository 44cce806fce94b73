/*
 * sim_world.h: one deterministic simulated run.  N engines (libdmengine,
 * public API only) in one process over a simulated network; every message
 * crosses it as bytes through the wire codec.  A seeded PRNG drives
 * message delays, reordering between links (FIFO within a link, as the
 * peer transport guarantees), faults (crash and restart with a new
 * incarnation rejoining through a sponsor, pauses longer than the failure
 * timeout, per-node clock-rate error within +-rho, graceful leave, new
 * nodes joining, partitions that heal, link down/up) and client workloads.
 * The oracle (sim_check.h) runs after every step in real simulated time.
 *
 * Run shape: a fault phase (faults injected at random) of fault_ms, then
 * every fault is healed (paused nodes resume, crashed nodes restart,
 * partitions heal) and the workload continues for calm_ms with the
 * liveness and Appendix-bound checkers armed; then clients stop asking and
 * every pending request must be resolved within the liveness bound.
 *
 * Same config + seed => the same run, event for event.
 */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dm_engine.h"
#include "sim_check.h"

/* Fault kinds (bit mask in sim_config.faults). */
#define SIM_F_CRASH	(1u << 0)	/* crash + restart with new incarnation, rejoin */
#define SIM_F_PAUSE	(1u << 1)	/* freeze a daemon longer than T_fail */
#define SIM_F_PARTITION	(1u << 2)	/* cut a minority (or any subset) off, heal later */
#define SIM_F_LINK	(1u << 3)	/* one link down, then up (transport resumes) */
#define SIM_F_LEAVE	(1u << 4)	/* graceful leave (DM_EV_LEAVE), later rejoin */
#define SIM_F_JOIN	(1u << 5)	/* a new node joins through a sponsor */
#define SIM_F_DRIFT	(1u << 6)	/* per-node clock rate within +-rho */
#define SIM_F_ALL	0x7fu
/* Not in SIM_F_ALL (the campaigns' default mask): a directed storm of the
 * stale-roster shape.  One node is cut off long enough to be removed, and
 * the others crash and restart around the cut and its heal. */
#define SIM_F_STALE	(1u << 7)
#define SIM_F_KNOWN	(SIM_F_ALL | SIM_F_STALE)

/* Workload shapes. */
enum sim_workload {
	SIM_W_RANDOM = 0,	/* acquire/try/timeout/cancel/release, both modes */
	SIM_W_FOREVER,		/* random, but only waiting-forever acquires (exact message counts) */
	SIM_W_LIGHT,		/* one request at a time in the whole cluster (RA §5 response time) */
	SIM_W_HEAVY,		/* every node always wants one lock (RA §5 synchronisation delay) */
};

struct sim_config {
	uint64_t	 seed;
	unsigned	 nodes;			/* initial members, 1..SIM_NODES_MAX/2 */
	const char	*algorithm;		/* NULL: "ricart-agrawala" */
	enum dm_failure_policy policy;
	uint32_t	 faults;		/* SIM_F_* mask; 0 = fault-free */
	uint32_t	 breakage;		/* DM_BREAK_* for negative controls */
	enum sim_workload workload;
	unsigned	 clients_per_node;	/* 0: random 1..3 */
	unsigned	 lock_names;		/* 0: random 1..3 */
	bool		 shared;		/* allow shared mode in random workloads */
	bool		 partition_any;		/* partitions may cut any subset (not only minorities) */

	/* Timing, simulated milliseconds (0: defaults below). */
	uint32_t	 delay_us;		/* D: mean message delay (default 1000) */
	bool		 constant_delay;	/* every message takes exactly D */
	uint32_t	 fault_ms;		/* fault phase length (default 1500) */
	uint32_t	 calm_ms;		/* healed phase with workload (default 800) */

	/* Algorithm-specific expectations.  All zero: chosen by algorithm name
	 * (ricart-agrawala: exactly 2 algorithm messages per entry and peer in
	 * fault-free FOREVER/LIGHT/HEAVY runs, DM_RA_REQUEST starts a request,
	 * the Appendix bound is checked; other algorithms: none of these). */
	unsigned	 msgs_per_peer;		/* exact algorithm messages per entry / (N-1) */
	uint8_t		 request_kind;		/* kind of the message that starts a request */
	bool		 appendix_bound;	/* <= 2(N-1) other entries before ours */
	bool		 no_expectations;	/* turn the by-name defaults off */

	FILE		*trace;			/* echo every trace line here; NULL: none */
	FILE		*report;		/* violation report (seed, invariant, trace); NULL: none */
	size_t		 trace_keep;		/* lines kept for the report (default 400) */

	const char	*election;		/* dm_engine_config.election (NULL: bully) */
	uint32_t	 group_size;		/* dm_engine_config.group_size (0: default) */

	/* Measurement hooks (tests/sim/sim_report.c); NULL/0: none.  The
	 * observers see every engine input and effect; think_time/hold_time
	 * replace the HEAVY workload's think (0) and hold (4D) times, given a
	 * random number drawn from the run's PRNG; crash_victim > 0 makes
	 * SIM_F_CRASH crash node crash_victim - 1, which then stays down. */
	void		(*observe_event)(void *ctx, sim_time_t now, int node, const struct dm_event *ev);
	void		(*observe_effect)(void *ctx, sim_time_t now, int node, const struct dm_effect *fx);
	sim_time_t	(*think_time)(void *ctx, int node, uint64_t random);
	sim_time_t	(*hold_time)(void *ctx, int node, uint64_t random);
	void		*hook_ctx;
	unsigned	 crash_victim;
	/* Restart the initial members (crashed or left) from the static
	 * roster, as dmlockd with `peers=` under systemd does, instead of
	 * through a sponsor; nodes that joined later still rejoin through one. */
	bool		 static_restarts;
	/* Check safety only (mutual exclusion, fencing order, grants): no
	 * liveness bound during the run and no liveness checks at its end.
	 * Runs that mix fault kinds fail liveness at a known rate (clusters
	 * every member of which crashed, left or was removed); their safety is
	 * what a campaign of them asks, and a liveness failure would otherwise
	 * end the run before the rest of it is checked. */
	bool		 safety_only;
};

struct sim_result {
	enum sim_violation violation;
	char		 what[SIM_CHECK_WHAT_MAX];
	uint64_t	 events, grants, denials, entries;
	uint64_t	 ra_messages;		/* DM_RA_REQUEST + DM_RA_REPLY sends */
	uint64_t	 algo_messages;		/* sends of algorithm kinds (>= DM_MSG_ALGO_BASE) */
	uint64_t	 all_messages;
	uint64_t	 faults_injected;
	uint64_t	 stale_storms;		/* SIM_F_STALE storms that cut their node off */
	uint64_t	 stale_at_heal;		/* ...whose node was removed by the heal, unaware */
	uint64_t	 engine_errors;		/* -EPROTO answers to peer messages */
	/* RA §5 metrics in units of D (only meaningful with constant_delay). */
	double		 response_sum_d;	/* sum over grants of (grant - request) / D */
	uint64_t	 response_n;
	double		 sync_sum_d, sync_max_d;/* entry after another node's exit */
	uint64_t	 sync_n;
	sim_time_t	 end_time;
	uint64_t	 trace_hash;		/* fingerprint of the whole trace */
};

/* Fill defaults for unset fields. */
void sim_config_defaults(struct sim_config *cfg);

/* Run one seed.  Returns 0 if every check passed, 1 if a checker reported
 * a violation (res->violation, res->what; the report went to cfg->report),
 * or a negative errno for a setup failure (-EINVAL bad config, -ENOMEM). */
int sim_run(const struct sim_config *cfg, struct sim_result *res);

#endif /* SIM_WORLD_H */
