/*
 * check_sim_algo_hierarchical.c: the simulator sweep for the hierarchical
 * group/system coordinator algorithm (algo_hierarchical.c), under both
 * elections.  Seeds rotate through: fault-free runs (with the message
 * count per critical-section entry asserted <= 6, the thesis's bound),
 * crashes of coordinators and holders, frozen coordinators (pauses),
 * partitions that split coordinators, link resets and joins (each join is
 * an election: the coordinator tables are rebuilt from the members), and
 * group sizes 1..5.
 * 2,000 seeds by default (DMSIM_SEEDS overrides); every fourth seed uses
 * the invitation election, with every fault kind of the rotation (pauses
 * too since the invitation fixes of issue #8).  Faults the sweep leaves
 * out are listed in dmlockd/engine/NOTES-hierarchical.md.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_gate.h"
#include "sim_world.h"

#define SEEDS_DEFAULT 2000

/* The gate: fault kinds with zero violations in
 * dmlock-sim --algorithm hierarchical --seeds 3000 --nodes 1-8 --fault-mask K
 * --no-shared (crash since the election fixes of issue #8; leave since
 * session 3: 0 in 2,000 with either election after the LEAVE-before-roster
 * fix; it rides with the join seeds so the other seeds stay as they were). */
static uint32_t
faults_for(uint64_t seed)
{
	switch (seed % 6) {
	case 0:
		return 0;					/* fault-free */
	case 1:
		return SIM_F_PAUSE | SIM_F_DRIFT;		/* frozen coordinators */
	case 2:
		return SIM_F_PARTITION | SIM_F_LINK;		/* split coordinators */
	case 3:
		return SIM_F_JOIN | SIM_F_LINK | SIM_F_DRIFT | SIM_F_LEAVE;	/* elections on joins, leaves */
	case 4:
		return SIM_F_CRASH;				/* dead coordinators, holders */
	default:
		return SIM_F_PAUSE | SIM_F_PARTITION;
	}
}

START_TEST(seed_sweep)
{
	uint64_t seed = (uint64_t)_i + 1;
	struct sim_config cfg = {
		.seed = seed,
		.nodes = 1 + (unsigned)(seed % 8),
		.algorithm = "hierarchical",
		.shared = false,
		.faults = faults_for(seed),
		.election = seed % 4 == 3 ? "invitation" : "bully",
		.group_size = (uint32_t)(seed % 7 < 5 ? 0 : 1 + seed % 5),
		.report = stderr,
	};
	struct sim_result res;

	if (cfg.faults == 0)
		cfg.workload = seed % 3 == 0 ? SIM_W_FOREVER : SIM_W_LIGHT;
	sim_gate_run(&cfg, &res);
	if (cfg.faults == 0 && res.entries > 0)
		ck_assert_msg(res.algo_messages <= 6 * res.entries,
		    "seed %llu: %llu algorithm messages for %llu entries (> 6 per entry)",
		    (unsigned long long)seed, (unsigned long long)res.algo_messages,
		    (unsigned long long)res.entries);
}
END_TEST

#define REPLAY_STATIC		1u	/* --restarts static */
#define REPLAY_SAFETY_ONLY	2u	/* runs mixing fault kinds fail liveness at a known rate */
#define REPLAY_LONG		4u	/* a 6 s fault phase (--fault-ms 6000) */

/* Seeds that failed before the fixes of issue #8: crash (bully election),
 * then pause and partition (invitation election). */
static const struct {
	uint64_t seed;
	unsigned nodes;
	uint32_t faults;
	const char *election;
	uint32_t group_size;	/* 0: the engine's */
	unsigned how;		/* REPLAY_STATIC, REPLAY_SAFETY_ONLY, REPLAY_LONG */
} replays[] = {
	{ 499, 4, SIM_F_CRASH, "bully", 0, 0 },	/* a joining node was its group's coordinator */
	{ 244, 5, SIM_F_CRASH, "bully", 0, 0 },	/* the same, every JOIN refused meanwhile */
	{ 2430, 7, SIM_F_CRASH, "bully", 0, 0 },	/* a HELD grant kept a removed group coordinator */
	{ 455, 8, SIM_F_PAUSE | SIM_F_PARTITION, "invitation", 0, 0 },	/* member counted as joiner */
	{ 2110, 7, SIM_F_PAUSE, "invitation", 0, 0 },	/* HELD placed in an old epoch's groups */
	{ 541, 6, SIM_F_PAUSE, "invitation", 0, 0 },	/* late seq-0 NRELEASE ended a newer grant */
	{ 117, 6, SIM_F_PAUSE, "invitation", 0, 0 },	/* member added mid-election never invited */
	{ 93, 6, SIM_F_PAUSE | SIM_F_PARTITION, "invitation", 0, 0 },	/* rejoining node led a group */
	{ 29, 6, SIM_F_PARTITION, "bully", 0, 0 },	/* a listed joiner's JOINs aborted its removal */
	{ 415, 8, SIM_F_PARTITION, "bully", 0, 0 }, { 829, 6, SIM_F_PARTITION, "bully", 0, 0 },
	{ 1292, 5, SIM_F_CRASH, "bully", 0, 0 },	/* a member added mid-epoch led a group unelected */
	{ 1527, 8, SIM_F_CRASH, "bully", 0, 0 },	/* a joiner listed a restarted peer's dead incarnation */
	{ 2364, 5, SIM_F_CRASH, "bully", 0, 0 },
	/* 87bc098's million: a member refused for 2 T_fail restarted on a dead
	 * refuser's word, and nobody was left to admit anyone */
	{ 161045, 6, SIM_F_CRASH, "bully", 0, 0 },
	/* b3aff3a's groups of five: a grant reported HELD at the cut stayed
	 * placed in the groups seen before the epoch's joiners were known (its
	 * lock had left the coordinator's active list) */
	{ 885513, 10, SIM_F_CRASH, "invitation", 5, 0 },
	/* The same pass: a joiner's retry moved it on to the next candidate in
	 * the middle of its sponsor's snapshot, which it then dropped; every
	 * member listed it as their group coordinator (the membership layer) */
	{ 776716, 13, SIM_F_PARTITION, "bully", 5, 0 },
	/* Every fault kind in one run (the mixed-kind safety sweep, session
	 * 26): the highest token was known only to nodes that then left, and
	 * their last messages reached the others as a stranger's; the new
	 * coordinator granted the same token again.  Fixed by taking every
	 * sender's token (dm_engine_receive).  Safety only: the run then fails
	 * liveness, as such runs do at a known rate (NOTES.md). */
	{ 313, 4, SIM_F_ALL, "invitation", 0, REPLAY_SAFETY_ONLY },
	/* Crashes and partitions in one run, static restarts (the same sweep,
	 * session 27): n1, told to rejoin, acked the NODE_ADD of n0, which it
	 * had removed while n0 was cut off; n0 rebuilt its old roster with it
	 * and granted beside the cluster that removed it.  Fixed by rule 10 (a
	 * node waiting to rejoin helps no sponsor its record dropped). */
	{ 107933, 8, SIM_F_CRASH | SIM_F_PARTITION, "bully", 5, REPLAY_STATIC },
	/* Partitions, groups of 3 (2faf6e4's breadth pass, session 30): a
	 * label-34 minority removed n0's rejoined incarnation, which the
	 * cluster kept; n2, noting it dead there and then told to rejoin,
	 * refused n0's roster for ever and never became ready.  Fixed by
	 * keeping dead incarnations out of the joiner's refusals
	 * (dm_record_refuses_joiner_help()). */
	{ 513274, 11, SIM_F_PARTITION, "bully", 3, 0 },
	/* Crashes, partitions and stale-roster storms, static restarts, a
	 * 6 s fault phase (the storm sweeps, session 28): n5, named removed
	 * twice, the second time while it joined, stored its provisional
	 * roster (itself alone) as its record; its next process took that
	 * for "the last member left" and formed the static roster at label
	 * 0, and as a member of it voted that n3, removed and unaware, shrink
	 * its stale roster to itself.  n3 granted beside the cluster.  Fixed
	 * by letting only a member's roster replace the record
	 * (dm_record_left()). */
	{ 505822, 6, SIM_F_CRASH | SIM_F_PARTITION | SIM_F_STALE, "invitation", 2,
	    REPLAY_STATIC | REPLAY_SAFETY_ONLY | REPLAY_LONG },
	/* Every kind and stale-roster storms (the storm sweeps, session 28):
	 * n5's and n7's restarted processes voted their old incarnations out
	 * of n4's roster, then voted that n3 -- removed at label 7 while cut
	 * off, and still at label 2 -- shrink its stale roster; n3 formed a
	 * cluster with n1 and n5 beside n0's.  Fixed by the self-vote promise
	 * (dm_record_self_vote()). */
	{ 19161, 6, SIM_F_ALL | SIM_F_STALE, "invitation", 5, REPLAY_SAFETY_ONLY },
	/* Crashes, static restarts, groups of 5 (ca245ed's quarter, session
	 * 31): n3, told to rejoin, took a NODE_ADD of n2's incarnation 4
	 * while it waited out the restart interval, and later dropped the
	 * NODE_ADD of n2's next incarnation as not newer than a joiner's
	 * entry; as a member it removed the dead entry at a roster label the
	 * others never took, and counted none of their lease acks again: its
	 * grant never reached its client, and the lock's queue waited behind
	 * it.  Fixed by taking such an entry as provisional
	 * (roster_provisional()). */
	{ 830035, 4, SIM_F_CRASH, "invitation", 5, REPLAY_STATIC },
	/* Crashes, groups of 2 (ac34294's breadth pass, session 40): n9's
	 * READY of group 72 arrived after the NODE_ADD of n8, restarted and
	 * in no group; n9 counted its own roster as the epoch's, took the
	 * epoch as current and sent NREQREL to n8, its group coordinator by
	 * name, for ever.  Fixed by counting the coordinator's members
	 * (READY's and NEW_STATE's arg; dm_election_epoch_members()). */
	{ 379598, 15, SIM_F_CRASH, "invitation", 2, 0 },
};

START_TEST(replay)
{
	struct sim_config cfg = {
		.seed = replays[_i].seed,
		.nodes = replays[_i].nodes,
		.algorithm = "hierarchical",
		.shared = false,
		.faults = replays[_i].faults,
		.election = replays[_i].election,
		.group_size = replays[_i].group_size,
		.static_restarts = (replays[_i].how & REPLAY_STATIC) != 0,
		.safety_only = (replays[_i].how & REPLAY_SAFETY_ONLY) != 0,
		.fault_ms = (replays[_i].how & REPLAY_LONG) != 0 ? 6000 : 0,
		.report = stderr,
	};
	struct sim_result res;

	sim_gate_run(&cfg, &res);
}
END_TEST

int
main(void)
{
	const char *env = getenv("DMSIM_SEEDS");
	int seeds = env && atoi(env) > 0 ? atoi(env) : SEEDS_DEFAULT;
	Suite *s = suite_create("sim_algo_hierarchical");
	TCase *tc = tcase_create("sweep");
	TCase *tr;
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, seed_sweep, 0, seeds);
	suite_add_tcase(s, tc);
	tr = tcase_create("replays");
	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, replay, 0, (int)(sizeof(replays) / sizeof(replays[0])));
	suite_add_tcase(s, tr);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
