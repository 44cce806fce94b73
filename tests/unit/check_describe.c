/*
 * check_describe.c: the algorithms' status view (dm_engine_visit_algorithm_state,
 * the ALGO lines of `dmlock status`): where each token is, the election and
 * the coordinators, on the in-test cluster of engine_harness.h.
 */
#include "engine_harness.h"
#include "dm_algorithm.h"

struct seen {
	char	node[DM_DESCRIBE_MAX];
	char	lock[DM_DESCRIBE_MAX];
	int	lines;
};

static void
collect(void *ctx, const char *lock, const char *text)
{
	struct seen *s = ctx;

	ck_assert_uint_lt(strlen(text), DM_DESCRIBE_MAX);
	ck_assert_ptr_null(strchr(text, '\n'));
	if (lock == NULL)
		snprintf(s->node, sizeof(s->node), "%s", text);
	else if (strcmp(lock, "a") == 0)
		snprintf(s->lock, sizeof(s->lock), "%s", text);
	s->lines++;
}

static struct seen
view(struct h_cluster *c, int node)
{
	struct seen s = { 0 };

	dm_engine_visit_algorithm_state(c->e[node], collect, &s);
	return s;
}

static void
start(struct h_cluster *c, const char *algo)
{
	h_init_with(c, 3, &(struct dm_engine_config){ .algorithm = algo,
	    .failure_policy = DM_FAILURE_MAJORITY });
	h_pump(c);
	h_advance(c, c->now + 50);
}

static const char *const token_algos[] = { "suzuki-kasami", "raymond", "naimi-trehel" };

START_TEST(token_is_shown_where_it_is)
{
	/* node2 takes the lock: its view says the token is here and in use,
	 * the coordinator node0's view no longer says "here". */
	struct h_cluster c;
	struct seen v0, v2;

	start(&c, token_algos[_i]);
	h_acquire(&c, 2, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 50);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	v2 = view(&c, 2);
	ck_assert_msg(strstr(v2.lock, "token=here") && strstr(v2.lock, "in_use"),
	    "%s: node2 holding: '%s'", token_algos[_i], v2.lock);
	ck_assert_msg(strstr(v2.node, "election=bully") && strstr(v2.node, "coordinator=node0") &&
	    strstr(v2.node, "state=normal"), "%s: node line '%s'", token_algos[_i], v2.node);
	v0 = view(&c, 0);
	ck_assert_msg(strstr(v0.lock, "token=here") == NULL,
	    "%s: node0 claims the token node2 holds: '%s'", token_algos[_i], v0.lock);
	h_fini(&c);
}
END_TEST

START_TEST(hierarchical_shows_coordinators_and_grants)
{
	struct h_cluster c;
	struct seen v0, v1;

	start(&c, "hierarchical");
	h_acquire(&c, 1, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 50);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	v1 = view(&c, 1);
	ck_assert_msg(strstr(v1.node, "group_coordinator=node0") &&
	    strstr(v1.node, "system_coordinator=node0"), "node1: '%s'", v1.node);
	ck_assert_msg(strstr(v1.lock, "in_use") != NULL, "node1 lock: '%s'", v1.lock);
	v0 = view(&c, 0);
	ck_assert_msg(strstr(v0.lock, "group_holder=node1") &&
	    strstr(v0.lock, "system_grant_to=node0"), "node0 lock: '%s'", v0.lock);
	h_fini(&c);
}
END_TEST

START_TEST(words_never_overflow)
{
	char buf[16];
	size_t len = 0;

	len = dm_describe_add(buf, sizeof(buf), len, "a=%d", 1);
	len = dm_describe_add(buf, sizeof(buf), len, "bb=%s", "xyz");
	ck_assert_str_eq(buf, "a=1 bb=xyz");
	/* Does not fit: left out whole, the rest kept. */
	len = dm_describe_add(buf, sizeof(buf), len, "long=%s", "0123456789");
	ck_assert_str_eq(buf, "a=1 bb=xyz");
	ck_assert_uint_eq(len, strlen(buf));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("describe");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, token_is_shown_where_it_is, 0,
	    (int)(sizeof(token_algos) / sizeof(token_algos[0])));
	tcase_add_test(tc, hierarchical_shows_coordinators_and_grants);
	tcase_add_test(tc, words_never_overflow);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
