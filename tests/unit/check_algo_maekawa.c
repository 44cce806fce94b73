/*
 * check_algo_maekawa.c: Maekawa's algorithm (algo_maekawa.c) across N
 * engines over the harness's FIFO pump: after every member has reported
 * "clean" in the current view, an uncontended entry costs exactly 3(K-1)
 * messages with K = |S_i| from dm_quorum.c (REQUEST, LOCKED, RELEASE to the
 * other members of S_i); the first entry of a view asks every member;
 * mutual exclusion and freedom from deadlock when every node requests at
 * once (INQUIRE / RELINQUISH / FAILED at work), rising fencing tokens,
 * try-once, shared mode refused, a crashed arbiter removed through the
 * roster with requests re-issued under the new sets, and a join.
 */
#include "engine_harness.h"
#include "check_algo_common.h"
#include "dm_quorum.h"
#include "algo_maekawa.h"	/* MK_SUB_SHIFT, MK_PROBE_ARBITER */

static size_t
set_size(unsigned n, unsigned i)
{
	struct dm_quorum *q = NULL;
	size_t k;

	ck_assert_int_eq(dm_quorum_build(n, &q), 0);
	dm_quorum_set(q, i, &k);
	dm_quorum_free(q);
	return k;
}

static void
one_entry(int node, uint64_t h)
{
	h_acquire(&C, node, h, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(h));
	ck_assert_int_eq(h_release(&C, node, h), 0);
	h_pump(&C);
}

START_TEST(test_messages_per_entry)
{
	int n = _i + 1;

	p_init(n, DM_FAILURE_PAPER, "maekawa");
	/* Warm-up: a node asks every member until every other member has
	 * answered one of its own requests of this view with "clean" (older
	 * reports may predate a leave and rejoin under the same name). */
	for (int i = 0; i < n; i++) {
		size_t before = C.sent_algo;
		one_entry(i, 100 + (uint64_t)i);
		ck_assert_msg(C.sent_algo - before == 3u * (size_t)(n - 1), "warm-up N=%d node%d:"
		    " %zu messages", n, i, C.sent_algo - before);
	}
	for (int i = 0; i < n; i++) {
		size_t before = C.sent_algo, k = set_size((unsigned)n, (unsigned)i);
		one_entry(i, 200 + (uint64_t)i);
		ck_assert_msg(C.sent_algo - before == 3 * (k - 1), "N=%d node%d: %zu messages, K=%zu",
		    n, i, C.sent_algo - before, k);
	}
	assert_all_idle();
}
END_TEST

START_TEST(test_contention_no_deadlock)
{
	contention_rounds("maekawa", 3 + _i, 4);	/* 3..8 nodes */
}
END_TEST

START_TEST(test_shared_refused)
{
	shared_refused("maekawa");
}
END_TEST

START_TEST(test_try_and_cancel)
{
	try_and_cancel("maekawa", 4, -1, 3);
}
END_TEST

START_TEST(test_failed_arbiter)
{
	/* node1 holds; node2 waits; node0 (an arbiter for both) crashes; node1
	 * releases; node2 must still get the lock under the new sets. */
	p_init(4, DM_FAILURE_PAPER, "maekawa");
	hold_and_wait("f", 1, 2);
	C.down[0] = true;
	h_release(&C, 1, 1);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	ck_assert(granted(2));
	ck_assert_uint_eq(h_roster(&C, 2), 3);
	h_release(&C, 2, 2);
	h_pump(&C);
	serve_all(4, 5000);	/* the three live nodes */
}
END_TEST

START_TEST(test_failed_holder)
{
	failed_holder_granted("maekawa", 5, "g", 3, 30000);
	h_release(&C, 3, 2);
	h_pump(&C);
}
END_TEST

/* A fourth engine, node3, set to join through node1 (not started). */
static void
new_joiner_node3(void)
{
	struct dm_engine_config cfg;
	struct dm_peer_spec sp = { .name = C.names[1], .address = "127.0.0.1:2" };

	C.n = 4;
	snprintf(C.names[3], sizeof(C.names[3]), "node3");
	h_config(&cfg, C.names[3], NULL, 0);
	cfg.algorithm = "maekawa";
	cfg.failure_policy = DM_FAILURE_PAPER;
	cfg.sponsor = &sp;
	ck_assert_int_eq(dm_engine_new(&cfg, &C.e[3]), 0);
}

START_TEST(test_join_then_exclusion)
{
	p_init(3, DM_FAILURE_PAPER, "maekawa");
	h_acquire(&C, 0, 1, "j", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	/* node3 joins through node1 while node0 holds "j". */
	new_joiner_node3();
	{
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(&C, 3, &ev), 0);
	}
	h_pump(&C);
	h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 3));
	h_acquire(&C, 3, 2, "j", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));		/* node0 still holds under the old view */
	h_release(&C, 0, 1);
	h_pump(&C);
	ck_assert(granted(2));
	h_release(&C, 3, 2);
	h_pump(&C);
	serve_all(4, 7000);
	assert_all_idle();
}
END_TEST

START_TEST(test_lost_request_probe)
{
	lost_request_recovered("maekawa");
}
END_TEST

START_TEST(test_roster_lock_granted_across_views)
{
	/* 101/6 (crash): a sponsor crashed after node0 took its NODE_ADD and
	 * before node1 did.  Their views differ, so each answered the other's
	 * requests STALE -- also for the roster lock, the one lock that makes
	 * views converge: nobody could sponsor anyone again.  The roster lock
	 * is granted whatever the view (it asks every member anyway); a user
	 * lock still is not. */
	struct dm_msg m, req;
	struct h_packet p;

	p_init(3, DM_FAILURE_PAPER, "maekawa");
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_NODE_ADD;		/* a member only node0 knows */
	m.node_len = 5;
	memcpy(m.node, "node7", 6);
	m.address_len = 11;
	memcpy(m.address, "127.0.0.1:7", 12);
	m.incarnation = 5;
	m.serial = 1;
	h_inject(&C, 2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	C.qhead = C.qtail;			/* (node0's ack) */
	h_acquire(&C, 1, 1, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	p = h_unqueue(&C, 1, 0, DM_MK_REQUEST);	/* made in node1's view */
	ck_assert_uint_eq(p.msg.kind, DM_MK_REQUEST);
	req = p.msg;
	h_inject(&C, 1, 0, &req);
	ck_assert_ptr_nonnull(h_queued(&C, 0, 1, DM_MK_STALE));
	ck_assert_ptr_null(h_queued(&C, 0, 1, DM_MK_LOCKED));
	req.lock_len = (uint8_t)strlen(".dmlock/roster");
	memcpy(req.lock, ".dmlock/roster", req.lock_len + 1u);
	h_inject(&C, 1, 0, &req);
	ck_assert_ptr_nonnull(h_queued(&C, 0, 1, DM_MK_LOCKED));
}
END_TEST

/* Deliver a roster-lock message of kind (seq, serial) from node from to
 * node to. */
static void
roster_lock_msg(int from, int to, uint8_t kind, uint64_t seq, uint64_t serial)
{
	struct dm_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.seq = seq;
	m.serial = serial;
	m.incarnation = 1;
	m.lock_len = (uint8_t)strlen(".dmlock/roster");
	memcpy(m.lock, ".dmlock/roster", m.lock_len + 1u);
	h_inject(&C, from, to, &m);
}

START_TEST(test_joiner_gives_back_a_dead_incarnations_vote)
{
	/* 509462/7 (partition), a2aaf6e's million: n3's earlier incarnation
	 * had asked n2 for the roster lock; the REQUEST, held by a partition,
	 * reached n2 after n3 had restarted and, still joining, was listed
	 * by the members.  n2 granted it its vote; n3, not a member, dropped
	 * the LOCKED and answered n2's probes of the vote holder with "here"
	 * only: the vote stayed pinned, nobody could sponsor a joiner, and
	 * n3's answers kept it from being suspected.  A joiner never asks for
	 * the roster lock, so a vote counted as its own belongs to a dead
	 * incarnation: it gives it back, as a member does for a request it
	 * no longer makes. */
	const struct dm_msg *r;

	p_init(3, DM_FAILURE_PAPER, "maekawa");
	new_joiner_node3();
	ck_assert(!h_ready(&C, 3));
	roster_lock_msg(2, 3, DM_MK_LOCKED, 30, 0);
	r = h_queued(&C, 3, 2, DM_MK_RELEASE);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->seq, 30);
	C.qhead = C.qtail;
	roster_lock_msg(2, 3, DM_MK_ARE_YOU_THERE, 30, (uint64_t)MK_PROBE_ARBITER << MK_SUB_SHIFT);
	ck_assert_ptr_nonnull(h_queued(&C, 3, 2, DM_MK_YES_I_AM_HERE));
	r = h_queued(&C, 3, 2, DM_MK_RELEASE);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->seq, 30);
	C.qhead = C.qtail;
	roster_lock_msg(2, 3, DM_MK_INQUIRE, 31, 0);
	ck_assert_ptr_nonnull(h_queued(&C, 3, 2, DM_MK_RELEASE));
	C.qhead = C.qtail;
	/* A sponsor's REQUEST is still voted for at once. */
	roster_lock_msg(2, 3, DM_MK_REQUEST, 32, 0);
	ck_assert_ptr_nonnull(h_queued(&C, 3, 2, DM_MK_LOCKED));
	ck_assert_ptr_null(h_queued(&C, 3, 2, DM_MK_RELEASE));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_maekawa");
	TCase *tc = tcase_create("maekawa");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_messages_per_entry, 0, H_NODES);
	tcase_add_loop_test(tc, test_contention_no_deadlock, 0, H_NODES - 2);
	tcase_add_test(tc, test_shared_refused);
	tcase_add_test(tc, test_joiner_gives_back_a_dead_incarnations_vote);
	tcase_add_test(tc, test_lost_request_probe);
	tcase_add_test(tc, test_try_and_cancel);
	tcase_add_test(tc, test_failed_arbiter);
	tcase_add_test(tc, test_failed_holder);
	tcase_add_test(tc, test_join_then_exclusion);
	tcase_add_test(tc, test_roster_lock_granted_across_views);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
