/*
 * check_engine.c: unit tests of the engine on one node (standalone):
 * lock table, local FIFO, exclusive/shared, try, timeouts, cancel,
 * tokens, config validation.
 */
#include "engine_harness.h"

static struct h_cluster C;

static void
setup1(void)
{
	h_init(&C, 1, DM_FAILURE_MAJORITY, 0);
}

static void
teardown(void)
{
	h_fini(&C);
}

START_TEST(test_ready_first_step)
{
	struct dm_engine_stats st;

	ck_assert_uint_eq(h_count(&C, DM_FX_READY), 1);
	ck_assert_uint_eq(h_count(&C, DM_FX_PEER_ADD), 0);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert(st.ready);
	ck_assert_uint_eq(st.roster_size, 1);
	ck_assert_str_eq(st.algorithm, "ricart-agrawala");
	ck_assert_uint_eq(dm_engine_next_deadline(C.e[0]), 0);
}
END_TEST

START_TEST(test_exclusive_fifo)
{
	const struct h_fx *g1, *g2, *g3;

	h_acquire(&C, 0, 1, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 2, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 3, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	g1 = h_find(&C, DM_FX_GRANT, 1);
	ck_assert_ptr_nonnull(g1);
	ck_assert_uint_eq(g1->deadline, 0);
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 2));
	ck_assert_int_eq(h_release(&C, 0, 1), 0);
	g2 = h_find(&C, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 3));
	ck_assert_uint_gt(g2->token, g1->token);
	ck_assert_int_eq(h_release(&C, 0, 2), 0);
	g3 = h_find(&C, DM_FX_GRANT, 3);
	ck_assert_ptr_nonnull(g3);
	ck_assert_uint_gt(g3->token, g2->token);
	ck_assert_int_eq(h_release(&C, 0, 3), 0);
	/* released twice / unknown */
	ck_assert_int_eq(h_release(&C, 0, 3), -ENOENT);
}
END_TEST

START_TEST(test_shared_and_writer_fairness)
{
	h_acquire(&C, 0, 1, "r", DM_MODE_SHARED, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 2, "r", DM_MODE_SHARED, DM_WAIT_FOREVER);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 1));
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 2));
	/* A writer queues; a later reader must not overtake it. */
	h_acquire(&C, 0, 3, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 4, "r", DM_MODE_SHARED, DM_WAIT_FOREVER);
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 3));
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 4));
	h_release(&C, 0, 1);
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 3));
	h_release(&C, 0, 2);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 3));
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 4));
	h_release(&C, 0, 3);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 4));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 4)->token, h_find(&C, DM_FX_GRANT, 3)->token);
}
END_TEST

START_TEST(test_try)
{
	h_acquire(&C, 0, 1, "t", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 1));
	h_acquire(&C, 0, 2, "t", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_DENY, 2));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 2)->error, -EBUSY);
	h_acquire(&C, 0, 3, "t", DM_MODE_SHARED, DM_WAIT_TRY);
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 3)->error, -EBUSY);
	h_release(&C, 0, 1);
	h_acquire(&C, 0, 4, "t", DM_MODE_SHARED, DM_WAIT_TRY);
	h_acquire(&C, 0, 5, "t", DM_MODE_SHARED, DM_WAIT_TRY);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 4));
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 5));
}
END_TEST

START_TEST(test_wait_timeout)
{
	struct dm_engine_stats st;

	h_acquire(&C, 0, 1, "w", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 2, "w", DM_MODE_EXCLUSIVE, 500);
	ck_assert_uint_eq(dm_engine_next_deadline(C.e[0]), C.now + 500);
	h_advance(&C, C.now + 499);
	ck_assert_ptr_null(h_find(&C, DM_FX_DENY, 2));
	h_advance(&C, C.now + 1);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_DENY, 2));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 2)->error, -ETIMEDOUT);
	ck_assert_uint_eq(dm_engine_next_deadline(C.e[0]), 0);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert_uint_eq(st.waiters_local, 0);
	ck_assert_uint_eq(st.locks_held_local, 1);
}
END_TEST

START_TEST(test_cancel_and_idle_state_freed)
{
	struct dm_engine_stats st;

	h_acquire(&C, 0, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 3, "b", DM_MODE_SHARED, DM_WAIT_FOREVER);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert_uint_eq(st.locks_active, 2);
	ck_assert_uint_eq(st.waiters_local, 1);
	ck_assert_int_eq(h_cancel(&C, 0, 2), 0);	/* waiter withdraws */
	ck_assert_ptr_null(h_find(&C, DM_FX_GRANT, 2));
	ck_assert_int_eq(h_cancel(&C, 0, 1), 0);	/* holder disconnects */
	ck_assert_int_eq(h_release(&C, 0, 3), 0);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert_uint_eq(st.locks_active, 0);
	ck_assert_uint_eq(st.locks_held_local, 0);
	ck_assert_uint_eq(st.waiters_local, 0);
	ck_assert_int_eq(h_cancel(&C, 0, 1), -ENOENT);
}
END_TEST

START_TEST(test_bad_requests)
{
	struct dm_event ev = { .type = DM_EV_ACQUIRE,
	    .u.acquire = { .handle = 9, .lock = "bad name", .lock_len = 8,
		.mode = DM_MODE_EXCLUSIVE, .wait_ms = DM_WAIT_FOREVER } };

	ck_assert_int_eq(h_step(&C, 0, &ev), -EINVAL);
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 9)->error, -EINVAL);
	ev.u.acquire.handle = 10;
	ev.u.acquire.lock = ".dmlock/roster";
	ev.u.acquire.lock_len = strlen(".dmlock/roster");
	ck_assert_int_eq(h_step(&C, 0, &ev), -EINVAL);
	h_acquire(&C, 0, 11, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ev.u.acquire.handle = 11;	/* duplicate handle */
	ev.u.acquire.lock = "y";
	ev.u.acquire.lock_len = 1;
	ck_assert_int_eq(h_step(&C, 0, &ev), -EINVAL);
	/* release of a waiter is refused; cancel works */
	h_acquire(&C, 0, 12, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_int_eq(h_release(&C, 0, 12), -EINVAL);
	ck_assert_int_eq(h_cancel(&C, 0, 12), 0);
}
END_TEST

START_TEST(test_tokens_increase_across_names)
{
	uint64_t last = 0;

	for (uint64_t h = 1; h <= 50; h++) {
		char name[16];
		snprintf(name, sizeof(name), "n%u", (unsigned)(h % 7));
		h_acquire(&C, 0, h, name, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, h)->token, last);
		last = h_find(&C, DM_FX_GRANT, h)->token;
		h_release(&C, 0, h);
	}
}
END_TEST

START_TEST(test_config_validation)
{
	struct dm_engine_config cfg;
	struct dm_engine *e = NULL;
	struct dm_peer_spec dup[2] = { { "a", "x" }, { "a", "y" } };

	h_config(&cfg, "self", NULL, 0);
	cfg.algorithm = "no-such-algorithm";
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	ck_assert_ptr_null(e);
	h_config(&cfg, "bad name", NULL, 0);
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	h_config(&cfg, "self", dup, 2);
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	/* L/(1-rho) + D_stop < T_fail/(1+rho) violated: lease too long */
	h_config(&cfg, "self", NULL, 0);
	cfg.lease_ms = 20000;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	/* ... but accepted under the paper's policy */
	cfg.failure_policy = DM_FAILURE_PAPER;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
	e = dm_engine_free(e);
	/* boundary: rho = 0, L + D_stop must be < T_fail */
	h_config(&cfg, "self", NULL, 0);
	cfg.clock_drift_ppm = 1;
	cfg.request_timeout_ms = 3000;
	cfg.probe_timeout_ms = 1000;
	cfg.lease_ms = 3000;
	cfg.stop_ms = 1000;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	cfg.lease_ms = 2900;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
	e = dm_engine_free(e);
	ck_assert_ptr_null(dm_engine_free(NULL));
	ck_assert_str_eq(dm_algorithm_names()[0], "ricart-agrawala");	/* the default */
	{
		/* Every listed name makes an engine; the list is NULL-terminated. */
		const char *const *names = dm_algorithm_names();
		size_t i;
		for (i = 0; names[i] != NULL && i < 64; i++) {
			h_config(&cfg, "self", NULL, 0);
			cfg.algorithm = names[i];
			ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
			e = dm_engine_free(e);
		}
		ck_assert_uint_lt(i, 64);
	}
}
END_TEST

static Suite *
engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("standalone");

	tcase_add_checked_fixture(tc, setup1, teardown);
	tcase_add_test(tc, test_ready_first_step);
	tcase_add_test(tc, test_exclusive_fifo);
	tcase_add_test(tc, test_shared_and_writer_fairness);
	tcase_add_test(tc, test_try);
	tcase_add_test(tc, test_wait_timeout);
	tcase_add_test(tc, test_cancel_and_idle_state_freed);
	tcase_add_test(tc, test_bad_requests);
	tcase_add_test(tc, test_tokens_increase_across_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("config");
	tcase_add_test(tc, test_config_validation);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
