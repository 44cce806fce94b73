/*
 * check_algo_token.c: unit tests of the token algorithms (suzuki-kasami,
 * raymond, naimi-trehel), their shared epoch bookkeeping (dm_token.c) and
 * the bully election (dm_election_bully.c), on the in-test cluster of
 * engine_harness.h.  Each test loops over the three algorithms.
 */
#include "engine_harness.h"
#include "dm_token.h"

static const char *const algos[] = { "suzuki-kasami", "raymond", "naimi-trehel" };

static void
t_init(struct h_cluster *c, int n, const char *algo)
{
	struct dm_peer_spec peers[H_NODES];
	struct dm_engine_config cfg;

	memset(c, 0, sizeof(*c));
	c->q = calloc(H_QUEUE, sizeof(*c->q));
	ck_assert_ptr_nonnull(c->q);
	c->n = n;
	c->now = 1000;
	for (int i = 0; i < n; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "node%d", i);
		peers[i].name = c->names[i];
		peers[i].address = "127.0.0.1:2";
	}
	for (int i = 0; i < n; i++) {
		h_config(&cfg, c->names[i], peers, (size_t)n);
		cfg.algorithm = algo;
		ck_assert_int_eq(dm_engine_new(&cfg, &c->e[i]), 0);
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(c, i, &ev), 0);
	}
}

static size_t
token_msgs(const struct h_cluster *c)
{
	return c->sent_kind[DM_TK_REQUEST] + c->sent_kind[DM_TK_TOKEN] +
	    c->sent_kind[DM_TK_RETURN];
}

/* Acquire on node, pump, advance a little for lease rounds; granted? */
static const struct h_fx *
acquire_pumped(struct h_cluster *c, int node, uint64_t handle, const char *lock)
{
	h_acquire(c, node, handle, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(c);
	h_advance(c, c->now + 5);
	return h_find(c, DM_FX_GRANT, handle);
}

START_TEST(registered)
{
	const char *const *names = dm_algorithm_names();
	size_t found = 0;

	for (size_t i = 0; names[i] != NULL; i++)
		for (size_t a = 0; a < 3; a++)
			found += strcmp(names[i], algos[a]) == 0;
	ck_assert_uint_eq(found, 3);
}
END_TEST

START_TEST(repeat_costs_nothing)
{
	/* A node that keeps the token re-enters with zero network messages. */
	struct h_cluster c;
	const struct h_fx *g;
	size_t before;

	t_init(&c, 4, algos[_i]);
	g = acquire_pumped(&c, 3, 1, "a");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(h_release(&c, 3, 1), 0);
	h_pump(&c);
	before = token_msgs(&c);
	ck_assert_uint_gt(before, 0);		/* the first entry fetched the token */
	for (uint64_t h = 2; h < 10; h++) {
		g = acquire_pumped(&c, 3, h, "a");
		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(h_release(&c, 3, h), 0);
		h_pump(&c);
	}
	ck_assert_uint_eq(token_msgs(&c), before);
	h_fini(&c);
}
END_TEST

START_TEST(exclusion_and_fencing)
{
	/* Two waiters behind a holder: exactly one enters at each release,
	 * each with a higher fencing token. */
	struct h_cluster c;
	const struct h_fx *g1, *g2, *g3;
	int first_node, second_node;
	uint64_t first, second;

	t_init(&c, 5, algos[_i]);
	g1 = acquire_pumped(&c, 1, 1, "x");
	ck_assert_ptr_nonnull(g1);
	ck_assert_ptr_null(acquire_pumped(&c, 4, 2, "x"));
	ck_assert_ptr_null(acquire_pumped(&c, 2, 3, "x"));
	ck_assert_int_eq(h_release(&c, 1, 1), 0);
	h_pump(&c);
	h_advance(&c, c.now + 5);
	ck_assert((h_find(&c, DM_FX_GRANT, 2) != NULL) != (h_find(&c, DM_FX_GRANT, 3) != NULL));
	first = h_find(&c, DM_FX_GRANT, 2) != NULL ? 2 : 3;
	second = first == 2 ? 3 : 2;
	first_node = first == 2 ? 4 : 2;
	second_node = first == 2 ? 2 : 4;
	g2 = h_find(&c, DM_FX_GRANT, first);
	ck_assert_uint_gt(g2->token, g1->token);
	ck_assert_int_eq(h_release(&c, first_node, first), 0);
	h_pump(&c);
	h_advance(&c, c.now + 5);
	g3 = h_find(&c, DM_FX_GRANT, second);
	ck_assert_ptr_nonnull(g3);
	ck_assert_int_eq(g3->node, second_node);
	ck_assert_uint_gt(g3->token, g2->token);
	h_fini(&c);
}
END_TEST

START_TEST(suzuki_kasami_n_messages)
{
	/* Cold entry: N-1 REQUESTs and one TOKEN. */
	struct h_cluster c;

	t_init(&c, 6, "suzuki-kasami");
	ck_assert_ptr_nonnull(acquire_pumped(&c, 5, 1, "sk"));
	ck_assert_uint_eq(c.sent_kind[DM_TK_REQUEST], 5);
	ck_assert_uint_eq(c.sent_kind[DM_TK_TOKEN], 1);
	h_fini(&c);
}
END_TEST

START_TEST(old_epoch_token_discarded)
{
	/* A TOKEN of another epoch never grants (a frozen node's old token). */
	struct h_cluster c;
	struct dm_msg m;

	t_init(&c, 3, algos[_i]);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "z"));	/* node0 uses it */
	h_acquire(&c, 2, 2, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	memset(&m, 0, sizeof(m));
	m.kind = DM_TK_TOKEN;
	m.lock_len = 1;
	strcpy(m.lock, "z");
	m.serial = 0;			/* epoch 0 < the current 1 */
	m.node_len = 5;
	strcpy(m.node, "node0");
	m.payload_len = 4;		/* an empty Suzuki-Kasami token */
	struct dm_event ev = { .type = DM_EV_RECEIVE,
	    .u.receive = { .peer = "node1", .msg = &m } };
	ck_assert_int_eq(h_step(&c, 2, &ev), 0);
	h_pump(&c);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	h_fini(&c);
}
END_TEST

START_TEST(holder_crash_regenerates)
{
	/* The token holder dies: the survivors remove it, elect, and the
	 * waiting node gets a regenerated token fenced above the old one. */
	struct h_cluster c;
	const struct h_fx *g1, *g2;
	size_t elections;

	t_init(&c, 3, algos[_i]);
	g1 = acquire_pumped(&c, 2, 1, "r");	/* node2 fetches the token ... */
	ck_assert_ptr_nonnull(g1);
	ck_assert_int_eq(h_release(&c, 2, 1), 0);	/* ... and keeps it idle */
	h_pump(&c);
	c.down[2] = true;
	h_acquire(&c, 1, 2, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	elections = c.sent_kind[DM_EL_ENTER_ELECTION];
	h_advance(&c, c.now + 60000);
	g2 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_uint_gt(g2->token, g1->token);
	ck_assert_uint_gt(c.sent_kind[DM_EL_ENTER_ELECTION], elections);
	ck_assert_uint_gt(c.sent_kind[DM_EL_NEW_STATE], 0);
	h_fini(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_token");
	TCase *tc = tcase_create("token");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, registered);
	tcase_add_loop_test(tc, repeat_costs_nothing, 0, 3);
	tcase_add_loop_test(tc, exclusion_and_fencing, 0, 3);
	tcase_add_test(tc, suzuki_kasami_n_messages);
	tcase_add_loop_test(tc, old_epoch_token_discarded, 0, 3);
	tcase_add_loop_test(tc, holder_crash_regenerates, 0, 3);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
