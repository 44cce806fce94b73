/*
 * check_engine_roster.c: the roster protocols of RA §7 on the harness:
 * sponsor insertion with Highest_Sequence_Number method 1, graceful leave,
 * failure detection with ARE_YOU_THERE / YES_I_AM_HERE, paper and majority
 * removal, rejoin of a removed node, restart of a peer.
 */
#include "engine_harness.h"

static struct h_cluster C;

static void
teardown(void)
{
	h_fini(&C);
}

static bool
granted(uint64_t h)
{
	return h_find(&C, DM_FX_GRANT, h) != NULL;
}

START_TEST(test_join_through_sponsor)
{
	size_t before;

	h_init(&C, 3, (enum dm_failure_policy)_i, 0);
	/* Push sequence numbers up so a careless joiner would start too low. */
	for (uint64_t h = 1; h <= 5; h++) {
		h_acquire(&C, 0, h, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		h_release(&C, 0, h);
		h_pump(&C);
	}
	h_join(&C, 3, 1, (enum dm_failure_policy)_i, 7);
	ck_assert(!h_ready(&C, 3));
	h_pump(&C);
	ck_assert(h_ready(&C, 3));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_NODE_ADD], 2);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_SEQ_QUERY], 3);
	/* The joiner's first request: 2(N-1) messages, token above every earlier one. */
	before = C.sent_algo;
	h_acquire(&C, 3, 10, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 11, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(10) != granted(11));
	/* 2 x 3 REQUESTs, 3 REPLYs to the winner, 2 to the loser (1 deferred) */
	ck_assert_uint_eq(C.sent_algo - before, 11);
	uint64_t first = granted(10) ? 10 : 11;
	uint64_t second = first == 10 ? 11 : 10;
	int fnode = first == 10 ? 3 : 0;
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, first)->token, h_find(&C, DM_FX_GRANT, 5)->token);
	h_release(&C, fnode, first);
	h_pump(&C);
	ck_assert(granted(second));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, second)->token,
	    h_find(&C, DM_FX_GRANT, first)->token);
}
END_TEST

START_TEST(test_graceful_leave)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	h_acquire(&C, 2, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1) && !granted(2));
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	ck_assert_int_eq(h_find(&C, DM_FX_LOST, 1)->error, -ESHUTDOWN);
	h_pump(&C);
	ck_assert(granted(2));
	ck_assert_uint_eq(h_count(&C, DM_FX_LEFT), 1);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	/* A left node refuses clients. */
	h_acquire(&C, 2, 3, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 3)->error, -EAGAIN);
	ck_assert_int_eq(h_step(&C, 2, &leave), -EALREADY);
}
END_TEST

START_TEST(test_failure_paper)
{
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(1));
	h_advance(&C, C.now + 4999);
	ck_assert_uint_eq(C.sent_kind[DM_RA_ARE_YOU_THERE], 0);
	h_advance(&C, C.now + 1);
	ck_assert_uint_eq(C.sent_kind[DM_RA_ARE_YOU_THERE], 1);
	h_advance(&C, C.now + 2000);
	ck_assert(granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_NODE_FAILED], 1);
}
END_TEST

START_TEST(test_long_critical_section_probe)
{
	/* §7.4: "If critical section processing exceeds the timeout, all nodes
	 * will respond with YES_I_AM_HERE" and nobody is removed. */
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	h_acquire(&C, 0, 1, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 1, 2, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	ck_assert(!granted(2));
	ck_assert_uint_ge(C.sent_kind[DM_RA_YES_I_AM_HERE], 3);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_FAILED], 0);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	h_release(&C, 0, 1);
	h_pump(&C);
	ck_assert(granted(2));
}
END_TEST

START_TEST(test_probe_bare_reply_breakage)
{
	h_init(&C, 2, DM_FAILURE_PAPER, DM_BREAK_PROBE_BARE_REPLY);
	h_acquire(&C, 0, 1, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 1, 2, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 6000);
	ck_assert(granted(1) && granted(2));	/* broken on purpose: two holders */
}
END_TEST

START_TEST(test_removed_node_rejoins)
{
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	C.cut[2] = true;
	h_acquire(&C, 0, 1, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 7000);
	ck_assert(granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	h_release(&C, 0, 1);
	h_pump(&C);
	/* Heal: node2 still thinks it is a member and asks for a lock. */
	C.cut[2] = false;
	h_acquire(&C, 2, 2, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_REJOIN], 1);
	ck_assert(!h_ready(&C, 2));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 2)->error, -ESHUTDOWN);
	/* After the restart interval it rejoins through a sponsor. */
	h_advance(&C, C.now + 10000);
	h_pump(&C);
	ck_assert(h_ready(&C, 2));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 3, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(3));
}
END_TEST

START_TEST(test_failure_majority_epoch)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "m", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	for (int k = 0; k < 100 && !granted(1); k++)
		h_advance(&C, C.now + 100);
	ck_assert(granted(1));
	ck_assert_uint_ge(C.sent_kind[DM_MSG_SUSPECT], 1);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_SUSPECT_VOTE], 1);
	ck_assert_uint_eq(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 1);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
}
END_TEST

START_TEST(test_majority_two_nodes_never_removes)
{
	/* With two members a majority needs both: the survivor waits. */
	h_init(&C, 2, DM_FAILURE_MAJORITY, 0);
	C.down[1] = true;
	h_acquire(&C, 0, 1, "m", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 60000);
	ck_assert(!granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	/* The operator removes it. */
	struct dm_event rm = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node1" };
	ck_assert_int_eq(h_step(&C, 0, &rm), 0);
	ck_assert(granted(1));
}
END_TEST

START_TEST(test_peer_restarted)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 2, 0, DM_FAILURE_MAJORITY, 2);	/* node2 crashed and came back */
	h_pump(&C);
	/* The old incarnation is erased only T_fail (+ D_lock) later. */
	ck_assert(!h_ready(&C, 2));
	ck_assert_uint_ge(C.sent_kind[DM_MSG_JOIN_REFUSED], 1);
	h_advance(&C, C.now + 6900);
	ck_assert(!h_ready(&C, 2));
	h_advance(&C, C.now + 3000);
	ck_assert(h_ready(&C, 2));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 1, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 1);
}
END_TEST

START_TEST(test_grow_from_standalone_gets_deadline)
{
	/* A grant made alone has no deadline; once a second node joins, the
	 * holder is covered by a lease and gets EXTEND deadlines. */
	h_init(&C, 1, DM_FAILURE_MAJORITY, 0);
	h_acquire(&C, 0, 1, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_uint_eq(h_find(&C, DM_FX_GRANT, 1)->deadline, 0);
	h_join(&C, 1, 0, DM_FAILURE_MAJORITY, 1);
	h_pump(&C);
	ck_assert(h_ready(&C, 1));
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_EXTEND, 1));
	ck_assert_uint_gt(h_find(&C, DM_FX_EXTEND, 1)->deadline, C.now);
	/* The newcomer waits for the holder. */
	h_acquire(&C, 1, 2, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));
	h_release(&C, 0, 1);
	h_pump(&C);
	ck_assert(granted(2));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 2)->token, h_find(&C, DM_FX_GRANT, 1)->token);
}
END_TEST

static Suite *
roster_suite(void)
{
	Suite *s = suite_create("engine-roster");
	TCase *tc = tcase_create("roster");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_join_through_sponsor, 0, 2);
	tcase_add_test(tc, test_graceful_leave);
	tcase_add_test(tc, test_failure_paper);
	tcase_add_test(tc, test_long_critical_section_probe);
	tcase_add_test(tc, test_probe_bare_reply_breakage);
	tcase_add_test(tc, test_removed_node_rejoins);
	tcase_add_test(tc, test_failure_majority_epoch);
	tcase_add_test(tc, test_majority_two_nodes_never_removes);
	tcase_add_test(tc, test_peer_restarted);
	tcase_add_test(tc, test_grow_from_standalone_gets_deadline);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(roster_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
