/*
 * check_sim_algo_perm.c: the simulator's seed sweep for one permission
 * algorithm (built twice: SIM_ALGO = "lamport" as check_sim_algo_lamport,
 * "maekawa" as check_sim_algo_maekawa).  400 seeds per cluster size, 2,000
 * in all, with the whole fault campaign (crash/restart/rejoin, pauses,
 * drift, leave, join, partitions, link resets) and random exclusive
 * clients; every tenth seed fault-free.  Checked by the oracle: mutual
 * exclusion, strictly increasing fencing tokens, no deadlock, no
 * starvation once faults stop.  DMSIM_SEEDS_PER_SIZE overrides the count.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_world.h"

#ifndef SIM_ALGO
#error "SIM_ALGO must name the algorithm"
#endif
#ifndef SIM_SIZES
#define SIM_SIZES 2, 3, 4, 5, 7
#endif
#define SEEDS_PER_SIZE_DEFAULT 400

static const unsigned sizes[] = { SIM_SIZES };
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

START_TEST(seed_sweep)
{
	unsigned size = sizes[(unsigned)_i % N_SIZES];
	uint64_t seed = (uint64_t)_i / N_SIZES + 1 + 1000000ull * size;
	struct sim_config cfg = {
		.seed = seed,
		.nodes = size,
		.algorithm = SIM_ALGO,
		.shared = false,	/* exclusive-only algorithms */
		.faults = seed % 10 == 0 ? 0 : SIM_F_ALL,
		.report = stderr,
	};
	struct sim_result res;
	int r = sim_run(&cfg, &res);

	ck_assert_msg(r >= 0, "seed %llu: setup failed: %d", (unsigned long long)seed, r);
	ck_assert_msg(r == 0, "DMSIM_SEED=%llu nodes=%u algorithm=%s: %s: %s",
	    (unsigned long long)seed, size, SIM_ALGO, sim_violation_name(res.violation), res.what);
	ck_assert_uint_gt(res.grants, 0);
}
END_TEST

int
main(void)
{
	const char *env = getenv("DMSIM_SEEDS_PER_SIZE");
	unsigned per = env && atoi(env) > 0 ? (unsigned)atoi(env) : SEEDS_PER_SIZE_DEFAULT;
	Suite *s = suite_create("sim_algo_" SIM_ALGO);
	TCase *tc = tcase_create("sweep");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, seed_sweep, 0, (int)(per * N_SIZES));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
