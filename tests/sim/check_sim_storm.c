/*
 * check_sim_storm.c: the stale-roster storm (SIM_F_STALE, dmlock-sim
 * --fault-mask 80), the simulator's directed fault for the two-clusters
 * shape of sessions 23 to 27: a node cut off and removed without knowing
 * it, while the members of its old roster crash and restart.
 *   - storms do what they are for: their node comes back from the cut with
 *     a roster a newer one has dropped it from, and no run has two holders;
 *   - the campaigns' default mask never raises one (their runs stay those
 *     of the engine's millions);
 *   - a gate: every algorithm (the eleven configurations of the campaigns)
 *     under storms, 100 seeds each at N = 3-8, half of them restarting from
 *     the static roster, safety checked (with DM_BREAK_STALE_ROSTER, 11 of
 *     its 1,100 runs fail, in seven configurations);
 *   - negative control: with the engine's refusals of a stale prober turned
 *     off (DM_BREAK_STALE_ROSTER: the epoch and label rules, the
 *     membership record), storms find two holders or a fencing token that
 *     went back, and the same seed passes with the engine intact.
 */
#include <check.h>
#include <stdio.h>

#include "sim_gate.h"
#include "sim_world.h"

#define STORM_SEEDS	300
#define GATE_SEEDS	100	/* per configuration */

/* The campaigns' configurations (tests/sim/campaigns/QUEUE). */
static const struct gate_config {
	const char	*algorithm;
	const char	*election;
	uint32_t	 group_size;
} gate_configs[] = {
	{ "ricart-agrawala", NULL, 0 },
	{ "lamport", NULL, 0 },
	{ "maekawa", NULL, 0 },
	{ "rcv", NULL, 0 },
	{ "raymond", "bully", 0 },
	{ "suzuki-kasami", "invitation", 0 },
	{ "naimi-trehel", "bully", 0 },
	{ "hierarchical", "invitation", 2 },
	{ "hierarchical", "bully", 3 },
	{ "hierarchical", "invitation", 4 },
	{ "hierarchical", "bully", 5 },
};
#define N_GATE_CONFIGS	(sizeof(gate_configs) / sizeof(gate_configs[0]))

static struct sim_config
storm_config(uint64_t seed)
{
	struct sim_config cfg = {
		.seed = seed, .nodes = 5, .algorithm = "raymond", .shared = false,
		.faults = SIM_F_STALE, .safety_only = true,
	};

	return cfg;
}

START_TEST(storms_leave_a_removed_node_unaware)
{
	uint64_t storms = 0, stale = 0;

	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct sim_config cfg = storm_config(seed);
		struct sim_result res;

		cfg.report = stderr;
		ck_assert_int_eq(sim_run(&cfg, &res), 0);
		ck_assert_uint_le(res.stale_at_heal, res.stale_storms);
		storms += res.stale_storms;
		stale += res.stale_at_heal;
	}
	/* Measured: 80 storms, 17 of them leave their node stale. */
	ck_assert_uint_ge(storms, 40);
	ck_assert_uint_ge(stale, 10);
}
END_TEST

START_TEST(default_mask_raises_no_storm)
{
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct sim_config cfg = storm_config(seed);
		struct sim_result res;

		cfg.faults = SIM_F_ALL;
		ck_assert_int_ge(sim_run(&cfg, &res), 0);
		ck_assert_uint_eq(res.stale_storms, 0);
		ck_assert_uint_gt(res.faults_injected, 0);
	}
}
END_TEST

START_TEST(storms_catch_a_node_that_helps_a_stale_prober)
{
	for (uint64_t seed = 1; seed <= STORM_SEEDS; seed++) {
		struct sim_config cfg = storm_config(seed);
		struct sim_result res;

		cfg.breakage = DM_BREAK_STALE_ROSTER;
		if (sim_run(&cfg, &res) != 1)
			continue;
		ck_assert_msg(res.violation == SIM_V_EXCLUSION || res.violation == SIM_V_TOKEN,
		    "seed %llu: %s: %s", (unsigned long long)seed,
		    sim_violation_name(res.violation), res.what);
		fprintf(stderr, "negative control found at DMSIM_SEED=%llu: %s: %s\n",
		    (unsigned long long)seed, sim_violation_name(res.violation), res.what);
		/* The breakage, not the storm, made it fail. */
		cfg.breakage = 0;
		cfg.report = stderr;
		ck_assert_int_eq(sim_run(&cfg, &res), 0);
		return;
	}
	ck_abort_msg("no violation in seeds 1..%d with DM_BREAK_STALE_ROSTER", STORM_SEEDS);
}
END_TEST

START_TEST(storm_gate)
{
	const struct gate_config *g = &gate_configs[(size_t)_i / GATE_SEEDS];
	struct sim_config cfg = storm_config(1 + (uint64_t)_i % GATE_SEEDS);
	struct sim_result res;

	cfg.nodes = (unsigned)(3 + cfg.seed % 6);
	cfg.algorithm = g->algorithm;
	cfg.election = g->election;
	cfg.group_size = g->group_size;
	cfg.static_restarts = cfg.seed % 2 == 0;
	sim_gate_run(&cfg, &res);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sim_storm");
	TCase *tc = tcase_create("storm");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, storms_leave_a_removed_node_unaware);
	tcase_add_test(tc, default_mask_raises_no_storm);
	tcase_add_test(tc, storms_catch_a_node_that_helps_a_stale_prober);
	tcase_add_loop_test(tc, storm_gate, 0, (int)(N_GATE_CONFIGS * GATE_SEEDS));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
