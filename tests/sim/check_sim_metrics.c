/*
 * check_sim_metrics.c: the figures of Ricart and Agrawala's sections 4 and
 * 5, measured in fault-free runs with a constant message delay D:
 *   - exactly 2(N-1) REQUEST/REPLY messages per critical-section entry;
 *   - light load: response time of one round trip, 2D;
 *   - heavy load: synchronisation delay of one message delay, 1D.
 * Under both failure policies: the majority policy's lease rides on the
 * REQUEST/REPLY round itself, so it costs no extra round trip.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "sim_world.h"

static const unsigned sizes[] = { 1, 2, 3, 5, 8 };

static void
run(unsigned nodes, enum sim_workload wl, enum dm_failure_policy policy,
    struct sim_result *res)
{
	struct sim_config cfg = {
		.seed = 1, .nodes = nodes, .workload = wl, .constant_delay = true,
		.policy = policy, .report = stderr,
	};

	ck_assert_int_eq(sim_run(&cfg, res), 0);
	ck_assert_uint_gt(res->grants, 10);
	ck_assert_uint_eq(res->ra_messages, 2 * (uint64_t)(nodes - 1) * res->entries);
}

START_TEST(light_load_response_is_one_round_trip)
{
	unsigned n = sizes[_i];
	struct sim_result res;

	for (int p = DM_FAILURE_MAJORITY; p <= DM_FAILURE_PAPER; p++) {
		double resp;

		run(n, SIM_W_LIGHT, (enum dm_failure_policy)p, &res);
		ck_assert_uint_gt(res.response_n, 0);
		resp = res.response_sum_d / (double)res.response_n;
		ck_assert_msg(fabs(resp - (n > 1 ? 2.0 : 0.0)) < 1e-9,
		    "N=%u policy %d: response %.3fD", n, p, resp);
	}
}
END_TEST

START_TEST(heavy_load_sync_delay_is_one_message)
{
	unsigned n = sizes[_i];
	struct sim_result res;

	for (int p = DM_FAILURE_MAJORITY; p <= DM_FAILURE_PAPER; p++) {
		run(n, SIM_W_HEAVY, (enum dm_failure_policy)p, &res);
		if (n == 1)
			continue;
		ck_assert_uint_gt(res.sync_n, 10);
		ck_assert_msg(fabs(res.sync_sum_d / (double)res.sync_n - 1.0) < 1e-9 &&
		    fabs(res.sync_max_d - 1.0) < 1e-9, "N=%u policy %d: sync delay %.3fD"
		    " (max %.3fD)", n, p, res.sync_sum_d / (double)res.sync_n, res.sync_max_d);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sim_metrics");
	TCase *tc = tcase_create("ra_section_5");
	SRunner *sr;
	int failed;
	int n = (int)(sizeof(sizes) / sizeof(sizes[0]));

	tcase_add_loop_test(tc, light_load_response_is_one_round_trip, 0, n);
	tcase_add_loop_test(tc, heavy_load_sync_delay_is_one_message, 0, n);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
