/*
 * check_sim_negative.c: negative controls.  Each test makes the engine (or
 * its configuration) wrong in one known way and asserts that the matching
 * checker DOES report a violation for some seed in a bounded range, so the
 * checkers are known to be able to fail:
 *   DM_BREAK_NEVER_DEFER       -> mutual exclusion
 *   DM_BREAK_PROBE_BARE_REPLY  -> mutual exclusion (probe answered while in CS)
 *   DM_BREAK_STALE_TOKEN       -> fencing-token order
 *   DM_BREAK_NO_LEASE          -> mutual exclusion under partition (majority)
 *   DM_BREAK_GREEDY_HANDOFF    -> Appendix bound (local handoff past a
 *                                 deferred request: unfair but safe)
 *   DM_BREAK_LATE_GRANT        -> liveness: a holder loses its lock on a
 *                                 healthy cluster (Raymond, no faults)
 *   failure_policy = paper     -> mutual exclusion under partition,
 *                                 while majority passes the same seeds.
 *   safety_only (dmlock-sim --safety-only, for campaigns that mix fault
 *   kinds) still reports DM_BREAK_NEVER_DEFER's mutual-exclusion violation,
 *   and passes a seed whose only failure is liveness.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_world.h"

#define SEEDS_MAX 300

/* First seed in [1, SEEDS_MAX] whose run reports violation v, or 0. */
static uint64_t
find_violation(struct sim_config cfg, enum sim_violation v)
{
	for (uint64_t seed = 1; seed <= SEEDS_MAX; seed++) {
		struct sim_result res;
		int r;

		cfg.seed = seed;
		r = sim_run(&cfg, &res);
		ck_assert_int_ge(r, 0);
		if (r == 1 && res.violation == v) {
			fprintf(stderr, "negative control found at DMSIM_SEED=%llu: %s: %s\n",
			    (unsigned long long)seed, sim_violation_name(v), res.what);
			/* The breakage, not something else, made it fail: the
			 * same seed passes with the engine intact. */
			if (cfg.breakage) {
				cfg.breakage = 0;
				cfg.report = stderr;
				ck_assert_int_eq(sim_run(&cfg, &res), 0);
			}
			return seed;
		}
	}
	return 0;
}

START_TEST(never_defer_breaks_exclusion)
{
	struct sim_config cfg = {
		.nodes = 3, .workload = SIM_W_FOREVER, .breakage = DM_BREAK_NEVER_DEFER,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_EXCLUSION), 0);
}
END_TEST

START_TEST(probe_bare_reply_breaks_exclusion)
{
	/* Long critical sections make waiters probe the holder (RA §7.4). */
	struct sim_config cfg = {
		.nodes = 3, .workload = SIM_W_RANDOM, .breakage = DM_BREAK_PROBE_BARE_REPLY,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_EXCLUSION), 0);
}
END_TEST

START_TEST(stale_token_breaks_token_order)
{
	struct sim_config cfg = {
		.nodes = 3, .workload = SIM_W_FOREVER, .breakage = DM_BREAK_STALE_TOKEN,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_TOKEN), 0);
}
END_TEST

START_TEST(greedy_handoff_breaks_appendix_bound)
{
	/* Safe but unfair: a holder keeps handing the lock to its own
	 * clients while another node's request waits deferred. */
	struct sim_config cfg = {
		.nodes = 3, .workload = SIM_W_FOREVER, .breakage = DM_BREAK_GREEDY_HANDOFF,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_BOUND), 0);
}
END_TEST

START_TEST(late_grant_loses_locks_on_a_healthy_cluster)
{
	/* A grant on the last moments of a lease renewed before an idle
	 * spell: the holder loses its lock before the round the grant
	 * starts comes back (Raymond seed 4, session 40). */
	struct sim_config cfg = {
		.nodes = 3, .algorithm = "raymond",
		.breakage = DM_BREAK_LATE_GRANT,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_LIVENESS), 0);
}
END_TEST

START_TEST(no_lease_breaks_exclusion_under_partition)
{
	struct sim_config cfg = {
		.nodes = 3, .faults = SIM_F_PARTITION | SIM_F_PAUSE,
		.breakage = DM_BREAK_NO_LEASE,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_EXCLUSION), 0);
}
END_TEST

START_TEST(paper_policy_fails_under_partition_majority_holds)
{
	struct sim_config cfg = {
		.nodes = 3, .faults = SIM_F_PARTITION, .policy = DM_FAILURE_PAPER,
	};
	uint64_t seed = find_violation(cfg, SIM_V_EXCLUSION);
	struct sim_result res;

	ck_assert_uint_ne(seed, 0);
	/* The same partitions under the majority policy: no violation. */
	cfg.policy = DM_FAILURE_MAJORITY;
	for (uint64_t s = 1; s <= seed; s++) {
		cfg.seed = s;
		cfg.report = stderr;
		ck_assert_int_eq(sim_run(&cfg, &res), 0);
	}
}
END_TEST

START_TEST(safety_only_still_checks_safety)
{
	struct sim_config cfg = {
		.nodes = 3, .workload = SIM_W_FOREVER, .breakage = DM_BREAK_NEVER_DEFER,
		.safety_only = true,
	};

	ck_assert_uint_ne(find_violation(cfg, SIM_V_EXCLUSION), 0);
}
END_TEST

START_TEST(safety_only_ignores_liveness)
{
	/* Crashes and partitions in one run, restarts from the static roster:
	 * some seed fails liveness only; with safety_only the same run passes
	 * (and reports no violation of any other kind). */
	struct sim_config cfg = {
		.nodes = 3, .faults = SIM_F_CRASH | SIM_F_PARTITION, .static_restarts = true,
	};
	uint64_t seed = find_violation(cfg, SIM_V_LIVENESS);
	struct sim_result res;

	ck_assert_uint_ne(seed, 0);
	cfg.seed = seed;
	cfg.safety_only = true;
	cfg.report = stderr;
	ck_assert_int_eq(sim_run(&cfg, &res), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sim_negative");
	TCase *tc = tcase_create("controls");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, never_defer_breaks_exclusion);
	tcase_add_test(tc, probe_bare_reply_breaks_exclusion);
	tcase_add_test(tc, stale_token_breaks_token_order);
	tcase_add_test(tc, greedy_handoff_breaks_appendix_bound);
	tcase_add_test(tc, late_grant_loses_locks_on_a_healthy_cluster);
	tcase_add_test(tc, no_lease_breaks_exclusion_under_partition);
	tcase_add_test(tc, paper_policy_fails_under_partition_majority_holds);
	tcase_add_test(tc, safety_only_still_checks_safety);
	tcase_add_test(tc, safety_only_ignores_liveness);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
