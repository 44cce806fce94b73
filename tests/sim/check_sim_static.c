/*
 * check_sim_static.c: the make-check sweep of restarts from the static
 * roster (dmlock-sim --restarts static): a crashed or departed initial
 * member comes back as a daemon with peers= under systemd does, not
 * through a sponsor.  Every algorithm, crash and leave seeds in turn (the
 * faults that restart nodes) at N = 2..8; then replays of the seeds that
 * found the holes of engine b33a5e6 (two clusters from a static roster
 * that the members had left behind; a majority of listed incarnations
 * restarted).  Runs that mix every fault kind fail liveness more often
 * with static restarts than through sponsors (NOTES.md, "Session 25"):
 * the campaigns (--restarts both) count them, this gate does not.
 *
 * DMSIM_STATIC_SEEDS overrides the number of seeds per algorithm
 * (default 250).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_gate.h"
#include "sim_world.h"

static const char *const algorithms[] = {
	"ricart-agrawala", "lamport", "maekawa", "rcv", "hierarchical",
	"suzuki-kasami", "raymond", "naimi-trehel",
};
#define N_ALGORITHMS (sizeof(algorithms) / sizeof(algorithms[0]))

static unsigned seeds_per_algorithm;

static void
run(uint64_t seed, unsigned nodes, const char *algorithm, uint32_t faults)
{
	struct sim_config cfg = {
		.seed = seed,
		.nodes = nodes,
		.algorithm = algorithm,
		.shared = strcmp(algorithm, "ricart-agrawala") == 0,
		.faults = faults,
		.election = seed % 2 ? "invitation" : "bully",
		.static_restarts = true,
	};
	struct sim_result res;

	sim_gate_run(&cfg, &res);
}

START_TEST(static_sweep)
{
	const char *algorithm = algorithms[(unsigned)_i % N_ALGORITHMS];
	uint64_t k = (uint64_t)_i / N_ALGORITHMS;
	uint64_t seed = 9000000 + k + 1;
	uint32_t faults = k % 2 ? SIM_F_LEAVE : SIM_F_CRASH;

	run(seed, 2 + (unsigned)(k % 7), algorithm, faults);
}
END_TEST

/* Seeds that failed on b33a5e6 with --restarts static (and --fault-mask
 * 7f unless named), fixed by the static-restart rules of
 * dm_member_record.c and DM_MSG_F_STATIC; then one of d278d38 (crashes and
 * partitions together), fixed by rule 7 (dm_record_refuses_joiner_help():
 * joiners whose records show a stale sponsor removed no longer rebuild its
 * roster).  algorithm NULL: Ricart-Agrawala, shared locks. */
static const struct replay {
	uint64_t seed;
	unsigned nodes;
	uint32_t faults;
	const char *algorithm;
} replays[] = {
	{ 15, 3, SIM_F_CRASH, NULL },	/* old incarnations listed by the last member */
	{ 78, 3, SIM_F_ALL, NULL },	/* fencing token order */
	{ 145, 4, SIM_F_ALL, NULL },	/* two holders */
	{ 156, 3, SIM_F_ALL, NULL },	/* leavers formed the static roster again */
	{ 276, 3, SIM_F_ALL, NULL }, { 2282, 5, SIM_F_ALL, NULL }, { 2712, 3, SIM_F_ALL, NULL },
	{ 18999, 6, SIM_F_CRASH | SIM_F_PARTITION, "maekawa" },	/* token order */
	/* cf7b53f's breadth pass (session 38), partitions: the last member,
	 * its roster unsettled and no member left to level it, refused every
	 * join for good on that engine, which kept an unsettled sponsor from
	 * admitting (dmlockd/engine/NOTES.md, "Session 38"). */
	{ 23102, 15, SIM_F_PARTITION, NULL },
	/* Session 42's first draft of the rule that a member ignores a REJOIN
	 * from a roster behind its own (rcv 150133/6), crashes: a process
	 * restarted from its record ignored the REJOIN of a member behind the
	 * record that listed its earlier incarnation, and waited for ever as
	 * a member nobody knew (dm_static_hello_awaited()). */
	{ 1814, 7, SIM_F_CRASH, "naimi-trehel" },
	{ 1241, 10, SIM_F_CRASH, "naimi-trehel" },
};
#define N_REPLAYS (sizeof(replays) / sizeof(replays[0]))

START_TEST(static_replay)
{
	const struct replay *p = &replays[_i];
	struct sim_config cfg = {
		.seed = p->seed,
		.nodes = p->nodes,
		.algorithm = p->algorithm,
		.shared = p->algorithm == NULL,
		.faults = p->faults,
		.static_restarts = true,
	};
	struct sim_result res;

	sim_gate_run(&cfg, &res);
}
END_TEST

int
main(void)
{
	const char *env = getenv("DMSIM_STATIC_SEEDS");
	Suite *s = suite_create("sim_static");
	TCase *tc = tcase_create("static restarts");
	SRunner *sr;
	int failed;

	seeds_per_algorithm = env && atoi(env) > 0 ? (unsigned)atoi(env) : 250;
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, static_replay, 0, (int)N_REPLAYS);
	tcase_add_loop_test(tc, static_sweep, 0, (int)(seeds_per_algorithm * N_ALGORITHMS));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
