/*
 * check_algo_lamport.c: Lamport's algorithm (algo_lamport.c) across N
 * engines over the harness's FIFO pump: exactly 3(N-1) messages per entry,
 * timestamp order with name tie-break, mutual exclusion under contention
 * with rising fencing tokens, try-once, shared mode refused, cancel, and a
 * failed holder removed through the roster so the others proceed.
 */
#include "engine_harness.h"
#include "check_algo_common.h"

START_TEST(test_three_n_minus_one)
{
	int n = _i + 1;

	p_init(n, DM_FAILURE_PAPER, "lamport");
	for (uint64_t k = 0; k < 5; k++) {
		size_t before = C.sent_algo;
		int node = (int)(k % (uint64_t)n);
		h_acquire(&C, node, 100 + k, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		ck_assert(granted(100 + k));
		ck_assert_uint_eq(C.sent_algo - before, 2u * (size_t)(n - 1));
		ck_assert_int_eq(h_release(&C, node, 100 + k), 0);
		h_pump(&C);
		ck_assert_uint_eq(C.sent_algo - before, 3u * (size_t)(n - 1));
	}
	ck_assert_uint_eq(C.sent_kind[DM_LP_RELEASE], 5u * (size_t)(n - 1));
	assert_all_idle();
}
END_TEST

START_TEST(test_timestamp_order)
{
	p_init(3, DM_FAILURE_MAJORITY, "lamport");
	/* Equal timestamps: node0 < node1 < node2 by name. */
	h_acquire(&C, 2, 1, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 1, 2, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 3, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(3) && !granted(2) && !granted(1));
	h_release(&C, 0, 3);
	h_pump(&C);
	ck_assert(granted(2) && !granted(1));
	h_release(&C, 1, 2);
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 1)->token, h_find(&C, DM_FX_GRANT, 2)->token);
	h_release(&C, 2, 1);
	h_pump(&C);
	assert_all_idle();
}
END_TEST

START_TEST(test_contention_all_nodes)
{
	contention_rounds("lamport", H_NODES, 3);
}
END_TEST

START_TEST(test_shared_refused)
{
	shared_refused("lamport");
}
END_TEST

START_TEST(test_try_and_cancel)
{
	try_and_cancel("lamport", 3, DM_LP_BUSY, 1);
}
END_TEST

START_TEST(test_failed_holder_removed)
{
	failed_holder_granted("lamport", 3, "f", 1, 20000);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	h_release(&C, 1, 2);
	h_pump(&C);
}
END_TEST

START_TEST(test_lost_request_probe)
{
	lost_request_recovered("lamport");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_lamport");
	TCase *tc = tcase_create("lamport");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_three_n_minus_one, 0, H_NODES);
	tcase_add_test(tc, test_timestamp_order);
	tcase_add_test(tc, test_contention_all_nodes);
	tcase_add_test(tc, test_shared_refused);
	tcase_add_test(tc, test_lost_request_probe);
	tcase_add_test(tc, test_try_and_cancel);
	tcase_add_test(tc, test_failed_holder_removed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
