/*
 * sim_gate.h: the run-and-assert step the make-check simulator gates share
 * (check_sim_static.c, check_sim_algo_token.c, check_sim_algo_hierarchical.c,
 * check_sim_algo_perm.c): run one configuration and fail with the
 * dmlock-sim command line that replays it, built from the configuration
 * itself so that the line and the run cannot disagree.
 */
#ifndef SIM_GATE_H
#define SIM_GATE_H

#include <check.h>
#include <stdio.h>

#include "sim_world.h"

/* The dmlock-sim arguments that run cfg's seed the same way, in buf. */
static inline const char *
sim_gate_replay(const struct sim_config *cfg, char *buf, size_t size)
{
	static const char *const workloads[] = {
		[SIM_W_RANDOM] = "random", [SIM_W_FOREVER] = "forever",
		[SIM_W_LIGHT] = "light", [SIM_W_HEAVY] = "heavy",
	};
	size_t n = 0;

#define SIM_GATE_ADD(...)						\
	do {								\
		if (n < size)						\
			n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__); \
	} while (0)
	SIM_GATE_ADD("dmlock-sim --algorithm %s --seed %llu --nodes %u",
	    cfg->algorithm != NULL ? cfg->algorithm : "ricart-agrawala",
	    (unsigned long long)cfg->seed, cfg->nodes);
	if (cfg->election != NULL)
		SIM_GATE_ADD(" --election %s", cfg->election);
	if (cfg->group_size != 0)
		SIM_GATE_ADD(" --group-size %u", (unsigned)cfg->group_size);
	if (cfg->faults != 0)
		SIM_GATE_ADD(" --fault-mask %x", (unsigned)cfg->faults);
	else
		SIM_GATE_ADD(" --no-faults");
	if (!cfg->shared)
		SIM_GATE_ADD(" --no-shared");
	if (cfg->static_restarts)
		SIM_GATE_ADD(" --restarts static");
	if (cfg->policy == DM_FAILURE_PAPER)
		SIM_GATE_ADD(" --policy paper");
	if (cfg->workload != SIM_W_RANDOM)
		SIM_GATE_ADD(" --workload %s", workloads[cfg->workload]);
	if (cfg->fault_ms != 0)
		SIM_GATE_ADD(" --fault-ms %u", (unsigned)cfg->fault_ms);
	if (cfg->calm_ms != 0)
		SIM_GATE_ADD(" --calm-ms %u", (unsigned)cfg->calm_ms);
	if (cfg->safety_only)
		SIM_GATE_ADD(" --safety-only");
	SIM_GATE_ADD(" --trace");
#undef SIM_GATE_ADD
	return buf;
}

/* Run cfg: it must set up, break no invariant, grant at least once (a
 * silent simulator proves nothing) and see no engine error. */
static inline void
sim_gate_run(const struct sim_config *cfg, struct sim_result *res)
{
	char replay[256];
	int r = sim_run(cfg, res);

	ck_assert_msg(r >= 0, "seed %llu: setup failed: %d", (unsigned long long)cfg->seed, r);
	ck_assert_msg(r == 0, "replay: %s: %s: %s", sim_gate_replay(cfg, replay, sizeof(replay)),
	    sim_violation_name(res->violation), res->what);
	ck_assert_msg(res->grants > 0, "%s: no grant", sim_gate_replay(cfg, replay, sizeof(replay)));
	ck_assert_msg(res->engine_errors == 0, "%s: %llu engine errors",
	    sim_gate_replay(cfg, replay, sizeof(replay)), (unsigned long long)res->engine_errors);
}

#endif /* SIM_GATE_H */
