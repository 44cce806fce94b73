/*
 * check_sim_algo_token.c: the simulator sweep for the token algorithms
 * (suzuki-kasami, raymond, naimi-trehel), built once per algorithm
 * (SIM_ALGO).  2,000 seeds per algorithm on N = 1..8, one fault kind per
 * seed from the algorithm's gate (the kinds that passed >= 3,000 seeds with
 * zero violations; see dmlockd/engine/NOTES-token.md for the commands and
 * for the kinds left out with their replays), every tenth seed fault-free.
 * Crashes and pauses kill or freeze token holders and coordinators (the
 * election regenerates the token in a higher epoch; a frozen node's old
 * token is discarded), partitions split coordinators from members, joins
 * cause elections (tokens are lent, returned and regenerated), graceful
 * leaves take members (and sponsors) out while others join.
 * A second test case runs 500 of those seeds under the invitation election;
 * a third replays seeds that failed before the fixes they name.
 * DMSIM_SEEDS overrides the seed count.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "sim_gate.h"
#include "sim_world.h"

#ifndef SIM_ALGO
#define SIM_ALGO "suzuki-kasami"
#endif
#define SEEDS_DEFAULT 2000

/* One fault kind per seed in turn; an entry with a kind outside the
 * algorithm's gate is replaced by link resets + joins + clock drift (always
 * in the gate).  Leave rides with the join entries (members leave while
 * others join), so the crash, pause and partition seeds stay what they were
 * before leave joined the gate. */
static const uint32_t rotation[] = {
	SIM_F_CRASH,
	SIM_F_PAUSE,
	SIM_F_PARTITION,
	SIM_F_CRASH,
	SIM_F_PAUSE,
	SIM_F_PARTITION,
	SIM_F_LINK | SIM_F_JOIN | SIM_F_DRIFT | SIM_F_LEAVE,
	SIM_F_CRASH | SIM_F_DRIFT,
	SIM_F_JOIN | SIM_F_LINK | SIM_F_LEAVE,
};
#define ALWAYS	(SIM_F_LINK | SIM_F_JOIN | SIM_F_DRIFT)

/* The gate: fault kinds with zero violations in
 * dmlock-sim --algorithm A --seeds 3000 --nodes 1-8 --fault-mask K --no-shared
 * (NOTES-token.md has the table and the replays of the kinds left out). */
static uint32_t
gate(void)
{
	/* Every kind for all three since session 3 (Suzuki-Kasami partition:
	 * 0 in 3,000, the old TOKEN-1 replay 1614/7 passes). */
	return ALWAYS | SIM_F_CRASH | SIM_F_PAUSE | SIM_F_PARTITION | SIM_F_LEAVE;
}

static uint32_t
faults_for(uint64_t seed)
{
	uint32_t f = rotation[seed % (sizeof(rotation) / sizeof(rotation[0]))];

	if (seed % 10 == 0)
		return 0;
	return (f & ~gate()) != 0 ? ALWAYS : f;
}

static void
run_election(uint64_t seed, unsigned nodes, uint32_t faults, const char *election)
{
	struct sim_config cfg = {
		.seed = seed,
		.nodes = nodes,
		.algorithm = SIM_ALGO,
		.shared = false,
		.faults = faults,
		.election = election,
		.report = stderr,
	};
	struct sim_result res;

	sim_gate_run(&cfg, &res);
}

static void
run_one(uint64_t seed, unsigned nodes, uint32_t faults)
{
	run_election(seed, nodes, faults, NULL);
}

START_TEST(seed_sweep)
{
	uint64_t seed = (uint64_t)_i + 1;

	run_one(seed, 1 + (unsigned)(seed % 8), faults_for(seed));
}
END_TEST

/* The same rotation under the invitation election: the seeds where
 * Suzuki-Kasami and Naimi-Trehel lost a withdrawn client's queue (a member
 * whose token is overdue only asks its coordinator AreYouThere here, so
 * nothing regenerated the token: check_algo_token's
 * withdrawn_request_loses_nobody). */
#define INVITATION_SEEDS 500

START_TEST(invitation_sweep)
{
	uint64_t seed = (uint64_t)_i + 1;

	run_election(seed, 1 + (unsigned)(seed % 8), faults_for(seed), "invitation");
}
END_TEST

/* Seeds that failed before a fix (same simulator, same engine at the time;
 * they keep guarding the paths even if the engine later moves them). */
static const struct {
	uint64_t seed;
	unsigned nodes;
	uint32_t faults;
	const char *what;
	const char *election;	/* NULL: bully */
} replays[] = {
	/* A joining node listed by a member did not answer its election: the
	 * roster lock (needed to finish the join) waited for the election. */
	{ 154, 3, SIM_F_CRASH, "joiner deadlock", NULL },
	{ 19, 4, SIM_F_PARTITION, "joiner deadlock", NULL },
	{ 12, 5, SIM_F_PAUSE, "joiner deadlock", NULL },
	/* A restarted node answered for its dead predecessor: no removal, no
	 * roster-epoch bump, a regenerated token repeated a fencing token. */
	{ 21, 6, SIM_F_CRASH, "fencing order", NULL },
	/* A joining node led an election with its partial roster and later
	 * granted as the coordinator of an epoch the others had left. */
	{ 1, 2, SIM_F_CRASH, "mutual exclusion", NULL },
	{ 2435, 4, SIM_F_CRASH, "joiner led an election", NULL },
	/* Lower members starting elections while waiting for a higher one's
	 * Set_Coordinator (livelock), and the watchdog electing during a
	 * reorganisation. */
	{ 39, 8, SIM_F_PAUSE, "election livelock", NULL },
	/* Graceful leave (NOTES.md, "Leave"): a LEAVE that reached a joiner
	 * before its roster was dropped, and the roster kept the leaver
	 * (suzuki-kasami 517/6: the next join waited for the leaver's
	 * NODE_ADD_ACK; raymond 2285/6); a busy sponsor refused a JOIN
	 * without naming another member, then left (naimi-trehel 101/6,
	 * raymond 1171/4 with the first fix alone). */
	{ 517, 6, SIM_F_LEAVE, "leaver kept by a joiner", NULL },
	{ 2285, 6, SIM_F_LEAVE, "leaver kept by a joiner", NULL },
	{ 101, 6, SIM_F_LEAVE, "joiner asked a departed sponsor", NULL },
	{ 1171, 4, SIM_F_LEAVE, "joiner asked a departed sponsor", NULL },
	/* Raymond's million (session 8): a member that accepted a new
	 * coordinator kept acknowledging the old one's lease heartbeats, so
	 * two coordinators of one roster epoch both granted (NOTES-token.md,
	 * "Two coordinators in one roster epoch"); and the liveness failures
	 * of the invitation election found beside them. */
	{ 398754, 3, SIM_F_PARTITION, "two coordinators", NULL },
	{ 425284, 5, SIM_F_PARTITION, "two coordinators", NULL },
	{ 590936, 9, SIM_F_PARTITION, "two coordinators", NULL },
	{ 937124, 5, SIM_F_PARTITION, "two coordinators", NULL },
	{ 459896, 9, SIM_F_PARTITION, "two coordinators: fencing order", "invitation" },
	{ 995332, 5, SIM_F_PARTITION, "two coordinators: fencing order", "invitation" },
	{ 154651, 12, SIM_F_PARTITION, "liveness", "invitation" },
	{ 226179, 4, SIM_F_PARTITION, "liveness", "invitation" },
	{ 280211, 4, SIM_F_PAUSE, "liveness", "invitation" },
	{ 332744, 9, SIM_F_PARTITION, "liveness", "invitation" },
	{ 381254, 7, SIM_F_PARTITION, "liveness", "invitation" },
	/* Found by the invitation sweep once the fence was in: a coordinator
	 * cut off formed a group above the majority's, and its heartbeats,
	 * labelled with that group at once, turned a permission it had kept
	 * into a grant (check_algo_token's
	 * permission_without_grant_does_not_cross_a_cut). */
	{ 419, 4, SIM_F_PARTITION, "old permission granted under a new label", "invitation" },
	/* Liveness: a node held condemned for good by voters of a removal
	 * whose prober was removed before its outcome, who could not win a
	 * removal of their own (NOTES.md, "Session 9" and "Session 10"):
	 * found on 53c2041's engine, the first by a partition sweep, the
	 * others by raymond's million. */
	{ 302194, 14, SIM_F_PARTITION, "refused by a stuck minority", "invitation" },
	{ 120179, 4, SIM_F_PAUSE, "refused by a stuck minority", NULL },
	{ 328646, 7, SIM_F_PARTITION, "refused by a stuck minority", "invitation" },
	/* Raymond's million on 53c2041, two membership liveness bugs
	 * (NOTES.md, "Session 10"): a joiner took two sponsors' snapshots
	 * for one roster; a sponsor re-added a joiner that had joined
	 * through another sponsor and left. */
	{ 725767, 8, SIM_F_CRASH, "roster mixed from two snapshots", "invitation" },
	{ 762126, 15, SIM_F_LEAVE, "sponsor re-added a node that left", "invitation" },
	/* Naimi-Trehel's millions (NOTES.md, "Session 12"): on 0df15be a
	 * member added a node that had just left back from a sponsor's late
	 * NODE_ADD; on 0162ac7 a joiner kept a dead incarnation's NODE_ADD
	 * and ignored the live one's. */
	{ 126138, 11, SIM_F_LEAVE, "leaver added back by a late NODE_ADD", "invitation" },
	{ 778808, 9, SIM_F_CRASH, "joiner kept a dead incarnation's entry", NULL },
	/* Session 20 (NOTES.md, "Session 20"): with pending removals left
	 * out of a lease, a node that held an orphaned agreement on a live
	 * member and was refused for good by one other had no lease and no
	 * refusing majority: it held suzuki-kasami's tokens for good. */
	{ 1019, 4, SIM_F_PARTITION, "own pending removal and one refuser", NULL },
};

START_TEST(replay)
{
	/* (Only the kinds in this algorithm's gate: see gate().) */
	if ((replays[_i].faults & ~gate()) == 0)
		run_election(replays[_i].seed, replays[_i].nodes, replays[_i].faults,
		    replays[_i].election);
}
END_TEST

/* Seeds of one algorithm only, replayed in its binary alone: each needs
 * more than one fault kind in a run, or restarts from the static roster,
 * which the shared table above does not express. */
static const struct {
	const char *algorithm;
	uint64_t seed;
	unsigned nodes;
	uint32_t faults;
	const char *election;
	bool static_restarts;
	bool safety_only;	/* runs mixing fault kinds fail liveness at a known rate */
} own_replays[] = {
	/* Crashes and partitions in one run (the mixed-kind safety sweep,
	 * session 27): n4, removed at roster label 13 while cut off, had
	 * learned epoch 13 from a member's messages; with the votes of its
	 * label-2 roster's restarted members it removed their old
	 * incarnations and granted lock/c beside n5's label-13 cluster.
	 * Fixed by rule 9 (dm_membership_on_suspect(): a restarted node
	 * votes for no prober whose roster label is older than a live
	 * member's). */
	{ "raymond", 101734, 7, SIM_F_CRASH | SIM_F_PARTITION, "bully", false, false },
	/* Crashes, partitions, leaves and stale-roster storms, static
	 * restarts (the storm sweeps, session 28): n3, restarted from the
	 * static roster at label 0 while the cluster was at label 1, left
	 * without n0's acknowledgement and stored n0 at label 1, the labels
	 * it knew; n0, removed at label 2 while cut off and still at label 1,
	 * removed n3's old entry with the vote of n3's next process, and
	 * granted lock/b beside n2.  Fixed by storing such members above the
	 * leaver's epoch (dm_membership_left()). */
	{ "suzuki-kasami", 3289, 4, SIM_F_CRASH | SIM_F_PARTITION | SIM_F_LEAVE | SIM_F_STALE,
	    "invitation", true, true },
	/* Crashes, partitions, joins and stale-roster storms (the storm
	 * sweeps, session 28): n6's and n3's restarted processes voted their
	 * old incarnations out of the cluster's roster (labels 7 and 9), then
	 * voted that n2 -- removed at label 10 while cut off, and still at
	 * label 6 -- remove the members of its stale roster; n2 granted beside
	 * n0.  Fixed by the self-vote promise (dm_record_self_vote()). */
	{ "naimi-trehel", 4982, 5, SIM_F_CRASH | SIM_F_PARTITION | SIM_F_JOIN | SIM_F_STALE,
	    "invitation", false, true },
	/* Every fault kind and stale-roster storms (the storm sweeps,
	 * session 29): n2, removed at label 6 while cut off, raised its
	 * roster label to 13 with its own ballots (a stale member's votes);
	 * n4's and n7's restarted processes, whose records at label 6 had
	 * dropped it, took the higher label for a re-admission and voted
	 * their old incarnations out of its roster, and it granted lock/b
	 * beside n1.  Fixed by the record's dead incarnations
	 * (dm_record_note_dead()). */
	{ "naimi-trehel", 13365, 6, SIM_F_KNOWN, "bully", false, true },
	/* Stale-roster storms alone (the same sweeps): n3, cut off and
	 * removed, reached label 18 with restarted processes' votes, above
	 * the records (labels 12 and 10) of n5's and n0's restarted
	 * processes, which then voted their old incarnations out of its
	 * roster; it granted below n4's token.  The same fix. */
	{ "raymond", 2469, 6, SIM_F_STALE, "bully", false, true },
	/* Crashes, static restarts (ca245ed's million, session 31): n14,
	 * waiting to rejoin, took a NODE_ADD of n6's second incarnation and
	 * later dropped the NODE_ADD of its third; as a member it tried for
	 * 12 s to remove that dead entry and never won a majority, while the
	 * invitation election started again every 168 ms.  The fix of
	 * hierarchical 830035/4 (roster_provisional()). */
	{ "raymond", 904591, 16, SIM_F_CRASH, "invitation", true, false },
	/* Crashes (found by a sweep of a draft of session 38's engine): n0,
	 * sponsoring n8 with its NODE_ADD out, removed n7 at label 17; every
	 * other member listed n8 already, n0 did not yet, so none took the
	 * label over n0's names, and n0, which in that draft finished a join
	 * only under a lease, waited for one for ever.  The committed engine
	 * counts the joiner in the sponsor's digests
	 * (dm_membership_digest_claimed(); check_engine_roster_split.c) and
	 * needs no lease to finish; the seed stays as a replay of a removal
	 * announced while a NODE_ADD is out (dmlockd/engine/NOTES.md,
	 * "Session 38"). */
	{ "raymond", 1967, 16, SIM_F_CRASH, "bully", false, false },
	/* No faults at all (session 40's checker: a holder that loses its
	 * lock on a healthy cluster fails the run).  Seed 4: n1 granted with
	 * 49 us of its lease left, after an idle spell (dm_lease_grantable()).
	 * Seeds 16 and 58: the coordinator led a second election before its
	 * first epoch started, and its members refused the heartbeats of its
	 * holder (dm_lease_election_epoch(); NOTES-token.md, "Nested
	 * elections"). */
	{ "raymond", 4, 3, 0, "bully", false, false },
	{ "raymond", 16, 3, 0, "bully", false, false },
	{ "suzuki-kasami", 58, 3, 0, "bully", false, false },
	/* No faults, found by 3,000 fault-free seeds per algorithm on
	 * 6ff6a6a: a follower holding a lock through two elections a few
	 * milliseconds apart kept labelling its heartbeats with the epoch
	 * before until its next period, and the members that had accepted
	 * each epoch first acknowledged none of them (dm_lease_election_epoch()
	 * now renews under the new label at once; NOTES.md, "Session 40"). */
	{ "raymond", 11913, 10, 0, "bully", false, false },
	{ "suzuki-kasami", 11609, 10, 0, "bully", false, false },
	{ "naimi-trehel", 11167, 16, 0, "bully", false, false },
};

START_TEST(own_replay)
{
	struct sim_config cfg = {
		.seed = own_replays[_i].seed,
		.nodes = own_replays[_i].nodes,
		.algorithm = own_replays[_i].algorithm,
		.shared = false,
		.faults = own_replays[_i].faults,
		.election = own_replays[_i].election,
		.static_restarts = own_replays[_i].static_restarts,
		.safety_only = own_replays[_i].safety_only,
		.report = stderr,
	};
	struct sim_result res;

	if (strcmp(own_replays[_i].algorithm, SIM_ALGO) == 0)
		sim_gate_run(&cfg, &res);
}
END_TEST

int
main(void)
{
	const char *env = getenv("DMSIM_SEEDS");
	int seeds = env && atoi(env) > 0 ? atoi(env) : SEEDS_DEFAULT;
	Suite *s = suite_create("sim_algo_" SIM_ALGO);
	TCase *tc = tcase_create("sweep");
	TCase *tr = tcase_create("replays");
	TCase *ti = tcase_create("invitation");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, seed_sweep, 0, seeds);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 300);
	tcase_add_loop_test(ti, invitation_sweep, 0, INVITATION_SEEDS);
	suite_add_tcase(s, ti);
	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, replay, 0, (int)(sizeof(replays) / sizeof(replays[0])));
	tcase_add_loop_test(tr, own_replay, 0, (int)(sizeof(own_replays) / sizeof(own_replays[0])));
	suite_add_tcase(s, tr);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
