/*
 * check_sim_algo_rcv.c (also built as check_sim_algo_rcv_large, N = 8):
 * relative consensus voting in the deterministic simulator.  A sweep of
 * seeds with the fault kinds of gate_faults() below on N = 1, 2, 3, 5 (8 in
 * the large half), exclusive clients (rcv offers no shared mode), every
 * tenth seed fault-free with waiting-forever clients.  The small half also
 * measures the paper's claims with a constant message delay D (light load
 * within floor(N/2)+2 messages per entry, heavy load hands the CS over in
 * one message delay, and Cao et al.'s 6.2 setting at N = 30 with fewer
 * messages than Maekawa); the large half replays fault seeds that used to
 * fail, with every fault kind they need.
 *
 * DMSIM_RCV_SEEDS overrides the number of seeds per size (default 400:
 * 2,000 seeds in all).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_rcv.h"
#include "sim_world.h"
#ifndef RCV_NO_METRICS
#include "sim_report_measure.h"
#endif

#ifndef RCV_SIZES
#define RCV_SIZES 1, 2, 3, 5, 8
#endif
static const unsigned sizes[] = { RCV_SIZES };
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned seeds_per_size;
static unsigned liveness_failures, safety_failures, runs;

/*
 * Fault kinds in the make-check sweep: link resets and clock drift on
 * every faulty seed, plus one kind per seed in rotation, as the
 * permission gate does.  Join: 0 violations in 4,000 seeds of `dmlock-sim
 * --algorithm rcv --nodes 1-8 --fault-mask HEX`.  Crash, pause, partition
 * and leave joined in session 3, once the roster lock stopped being run by
 * RCV (algo_rcv_roster.c; they stalled when members' rosters differed):
 * 0 in 1,000 seeds each at N = 2-8 (`--no-shared`; before: 4, 7, 17, 0)
 * and 0 in seeds 1001-4000 at N = 1-8 except leave seeds that are not
 * rcv's (2796/5 `--no-shared`, 3430/7: the joiner's only sponsor left for
 * good and its refusal, naming another sponsor, was lost with the link).
 * `dmlock-sim --algorithm rcv --fault-mask 7f` (every kind in one run)
 * still fails 0.45 % of seeds (was 1.05 %), liveness only (Ricart-Agrawala:
 * 0.15 %).
 * Every kind that runs here is checked strictly: safety and liveness.
 */
static const uint32_t rcv_kinds[] = {
	SIM_F_JOIN, SIM_F_CRASH, SIM_F_PAUSE, SIM_F_PARTITION, SIM_F_LEAVE,
};

static uint32_t
gate_faults(uint64_t seed)
{
	return SIM_F_LINK | SIM_F_DRIFT | rcv_kinds[seed % (sizeof(rcv_kinds) / sizeof(rcv_kinds[0]))];
}

START_TEST(seed_sweep)
{
	unsigned size = sizes[(unsigned)_i % N_SIZES];
	uint64_t seed = (uint64_t)_i / N_SIZES + 1 + 7000000ull * size;
	struct sim_config cfg = {
		.seed = seed,
		.nodes = size,
		.algorithm = "rcv",
		.faults = gate_faults(seed),
		.report = stderr,
	};
	struct sim_result res;
	int r;

	if (seed % 10 == 0) {
		cfg.faults = 0;
		cfg.workload = SIM_W_FOREVER;
	}
	if (seed % 10 != 0)
		cfg.report = NULL;	/* liveness reports are tallied below */
	r = sim_run(&cfg, &res);
	runs++;
	ck_assert_msg(r >= 0, "seed %llu: setup failed: %d", (unsigned long long)seed, r);
	if (r != 0 && res.violation != SIM_V_LIVENESS)
		safety_failures++;
	/* Safety, always: mutual exclusion, fencing tokens, protocol. */
	ck_assert_msg(r == 0 || res.violation == SIM_V_LIVENESS,
	    "DMSIM_SEED=%llu nodes=%u algorithm=rcv: %s: %s",
	    (unsigned long long)seed, size, sim_violation_name(res.violation), res.what);
	if (r != 0 && res.violation == SIM_V_LIVENESS)
		liveness_failures++;
	/* Liveness too, with the fault kinds above. */
	ck_assert_msg(r == 0, "DMSIM_SEED=%llu nodes=%u algorithm=rcv: liveness: %s",
	    (unsigned long long)seed, size, res.what);
	ck_assert_uint_gt(res.grants, 0);
}
END_TEST

/* Figures read back from the run's trace (the simulator counts only RA's
 * kinds and times synchronisation from RA's REQUEST): rcv messages sent,
 * and for each entry that follows another node's exit while it waited,
 * the gap in units of D. */
struct figures {
	double		 msgs_per_entry, response_d, sync_d;
	uint64_t	 rcv_msgs, entries, sync_n;
};

#define MAX_HANDLES 4096

static void
measure(unsigned nodes, enum sim_workload wl, struct figures *f)
{
	struct sim_config cfg = {
		.seed = 1, .nodes = nodes, .algorithm = "rcv", .workload = wl,
		.constant_delay = true, .report = stderr,
	};
	struct sim_result res;
	static unsigned long long handles[MAX_HANDLES];
	static char locks[MAX_HANDLES][32];
	char line[512], last_lock[8][32];
	double last_exit[8], d_ms;
	int last_node[8], n_locks = 0, n_handles = 0;
	double sync_sum = 0;
	FILE *tr = tmpfile();

	ck_assert_ptr_nonnull(tr);
	cfg.trace = tr;
	ck_assert_int_eq(sim_run(&cfg, &res), 0);
	ck_assert_uint_gt(res.entries, 0);
	memset(f, 0, sizeof(*f));
	d_ms = (cfg.delay_us ? cfg.delay_us : 1000) / 1000.0;
	rewind(tr);
	while (fgets(line, sizeof(line), tr) != NULL) {
		double t;
		int node, k;
		unsigned long long h;
		char lock[32];

		if (sscanf(line, "[ %lf] n%d", &t, &node) != 2)
			continue;
		if (strstr(line, " > ") != NULL && strstr(line, " RCV_") != NULL) {
			f->rcv_msgs++;
			continue;
		}
		if (sscanf(line, "[ %*f] n%*d: client %llx acquire %31s", &h, lock) == 2 &&
		    n_handles < MAX_HANDLES) {
			handles[n_handles] = h;
			snprintf(locks[n_handles++], sizeof(locks[0]), "%s", lock);
			continue;
		}
		if (sscanf(line, "[ %*f] n%*d: client %llx releases", &h) == 1 ||
		    sscanf(line, "[ %*f] n%*d: GRANT client %llx", &h) == 1) {
			bool grant = strstr(line, "GRANT") != NULL;
			const char *lk = NULL;
			for (k = n_handles; k-- > 0;)
				if (handles[k] == h) {
					lk = locks[k];
					break;
				}
			if (lk == NULL)
				continue;
			for (k = 0; k < n_locks && strcmp(last_lock[k], lk) != 0; k++)
				;
			if (k == n_locks) {
				if (n_locks == 8)
					continue;
				snprintf(last_lock[n_locks++], sizeof(last_lock[0]), "%s", lk);
				last_node[k] = -1;
			}
			if (!grant) {
				last_exit[k] = t;
				last_node[k] = node;
			} else if (last_node[k] >= 0 && last_node[k] != node) {
				sync_sum += (t - last_exit[k]) / d_ms;
				f->sync_n++;
				last_node[k] = -1;
			}
		}
	}
	fclose(tr);
	f->entries = res.entries;
	f->msgs_per_entry = (double)f->rcv_msgs / (double)res.entries;
	f->response_d = res.response_n ? res.response_sum_d / (double)res.response_n : 0;
	f->sync_d = f->sync_n ? sync_sum / (double)f->sync_n : 0;
}

START_TEST(light_load_messages)
{
	unsigned n = sizes[_i];
	struct figures f;

	measure(n, SIM_W_LIGHT, &f);
	fprintf(stderr, "rcv light N=%u: %.3f messages/entry (paper floor(N/2)+2 = %u),"
	    " response %.2fD\n", n, f.msgs_per_entry, n / 2 + 2, f.response_d);
	/* The paper: floor(N/2)+2 once the first request of a lock name (which
	 * visits every node: a generation's first decision) is amortised. */
	ck_assert_double_le(f.msgs_per_entry, (double)(n / 2 + 2) + 0.5);
}
END_TEST

START_TEST(heavy_load_sync_delay)
{
	unsigned n = sizes[_i];
	struct figures f;

	measure(n, SIM_W_HEAVY, &f);
	fprintf(stderr, "rcv heavy N=%u: %.3f messages/entry, sync delay %.2fD over %llu"
	    " hand-overs\n", n, f.msgs_per_entry, f.sync_d, (unsigned long long)f.sync_n);
	/* "only one enter message is needed between two successive executions" */
	ck_assert_uint_gt(f.sync_n, 0);
	ck_assert_double_le(f.sync_d, 1.2);
}
END_TEST

#ifdef RCV_NO_METRICS
/* Fault seeds that used to fail, replayed strictly (safety and liveness).
 * All were a member counted by the others but still joining (its sponsor
 * gave up, it rejoined after a removal, or its roster snapshot came from a
 * sponsor it had left): it dropped the roster lock's RMs, so the first
 * decision of the generation -- which needs every row -- never came and
 * nobody could sponsor it again.  Fixed then by ABSENT and the slot
 * signature (a rejoined node's rank -> slot map was stale); since then the
 * roster lock runs outside RCV (algo_rcv_roster.c) and ABSENT is gone. */
static const struct { uint64_t seed; unsigned nodes; uint32_t faults; } replays[] = {
	{ 589, 6, SIM_F_JOIN },		/* joiner took a late snapshot from a sponsor it left */
	{ 1975, 8, SIM_F_JOIN },
	{ 20, 5, SIM_F_PAUSE },		/* paused member removed, rejoining */
	{ 6, 7, SIM_F_CRASH },		/* absent row must not count as an open vote */
	{ 53, 6, SIM_F_CRASH },
	{ 74, 3, SIM_F_PARTITION },	/* rejoined node sent an EM to a stale slot */
	{ 56000313, 8, SIM_F_JOIN | SIM_F_DRIFT },	/* NOTES-rcv.md's old open replay */
	/* Rosters differed after the fault, and the roster lock -- then run
	 * by RCV, which needs one roster -- stalled for ever (session 3;
	 * fixed by algo_rcv_roster.c). */
	{ 289, 4, SIM_F_PARTITION },
	{ 891, 4, SIM_F_PARTITION },
	{ 353, 5, SIM_F_PARTITION },
	{ 68, 7, SIM_F_CRASH },
	{ 264, 7, SIM_F_PAUSE },
	{ 843, 5, SIM_F_PAUSE },
	/* 8feb5c1's million (session 34): n2, still syncing, refused the
	 * heartbeats of n4, the last ready member, as from a roster behind
	 * its own; n4 gave its membership up to rejoin through n2, which
	 * could admit nobody, and no member was left (dmlockd/engine/NOTES.md,
	 * "Session 34"; check_engine_pending_removals.c,
	 * test_only_a_ready_member_refuses_a_heartbeat_from_behind). */
	{ 883623, 8, SIM_F_CRASH },
	/* 25299df's million (session 37): n3, removed by the others at label
	 * 13 while cut off and not yet told, had applied removals down to a
	 * roster of itself and n4; it took the roster lock with n4's
	 * permission alone and admitted n0, which n1 never heard of.  Members
	 * that did not list each other kept lock/b's generations apart for
	 * good.  Fixed by the sponsor's lease (dm_membership_sponsor_finish();
	 * dmlockd/engine/NOTES.md, "Session 38"; check_engine_roster_split.c). */
	{ 83366, 7, SIM_F_PARTITION },
	/* ac34294's million (session 41): at the heal n4, cut off at label
	 * 12, answered n2 and n3 (members at label 17) with REJOIN, and they
	 * left; every other member left the same way or on removals, and the
	 * cluster settled with no member.  A REJOIN from a roster behind ours
	 * is ignored since (dm_membership_on_rejoin(); check_engine_membership.c,
	 * test_rejoin_from_a_roster_behind_ours_is_ignored). */
	{ 150133, 6, SIM_F_PARTITION },
};

START_TEST(fault_replay)
{
	struct sim_config cfg = {
		.seed = replays[_i].seed, .nodes = replays[_i].nodes, .algorithm = "rcv",
		.faults = replays[_i].faults, .report = stderr,
	};
	struct sim_result res;

	ck_assert_int_eq(sim_run(&cfg, &res), 0);
	ck_assert_uint_gt(res.grants, 0);
}
END_TEST
#else

/* Cao et al. 6.2 at saturation (N = 30, T_c = 2 T_n, every node always
 * asking again): rcv sends fewer messages per entry than Maekawa.  Before
 * the forwarding choice (rcv_rm_candidates) the RM went to a random
 * unvisited node and was forwarded 19.4 times per entry (21.4 messages vs
 * Maekawa's 21.3); now about 17 (19.0). */
START_TEST(paper_setting_beats_maekawa)
{
	struct report_setup s = {
		.nodes = 30, .load = LOAD_POISSON, .seed = 1, .delay_us = 100, .calm_ms = 100,
		.think_mean_units = 0,
	};
	struct report_cell rc, mk;
	double rm;

	s.algorithm = "rcv";
	ck_assert_int_eq(report_measure(&s, &rc), 0);
	s.algorithm = "maekawa";
	ck_assert_int_eq(report_measure(&s, &mk), 0);
	ck_assert_uint_gt(rc.steady.entries, 100);
	rm = (double)rc.steady.by_kind[RCV_MSG_RM] / (double)rc.steady.entries;
	fprintf(stderr, "paper setting N=30 saturated: rcv %.3f msgs/entry (RM %.2f),"
	    " maekawa %.3f\n", rc.msgs, rm, mk.msgs);
	ck_assert_double_lt(rc.msgs, mk.msgs);
	ck_assert_double_lt(rm, 18.0);
	ck_assert_double_le(rc.sync_max, 1.0 + 1e-9);
}
END_TEST
#endif

int
main(void)
{
	const char *env = getenv("DMSIM_RCV_SEEDS");
	Suite *s = suite_create("sim_algo_rcv");
	TCase *tc = tcase_create("sweep");
	SRunner *sr;
	int failed;

	seeds_per_size = env && atoi(env) > 0 ? (unsigned)atoi(env) : 400;
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, seed_sweep, 0, (int)(seeds_per_size * N_SIZES));
	suite_add_tcase(s, tc);
#ifndef RCV_NO_METRICS
	TCase *tm = tcase_create("metrics");
	tcase_set_timeout(tm, 120);
	tcase_add_loop_test(tm, light_load_messages, 2, (int)N_SIZES);
	tcase_add_loop_test(tm, heavy_load_sync_delay, 2, (int)N_SIZES);
	tcase_add_test(tm, paper_setting_beats_maekawa);
	suite_add_tcase(s, tm);
#else
	(void)light_load_messages;
	(void)heavy_load_sync_delay;
	TCase *tr = tcase_create("replays");
	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, fault_replay, 0, (int)(sizeof(replays) / sizeof(replays[0])));
	suite_add_tcase(s, tr);
#endif
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	fprintf(stderr, "rcv sweep: %u runs, %u safety violations, %u liveness failures\n",
	    runs, safety_failures, liveness_failures);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
