/*
 * check_engine_floor.c: the epoch floor on disk (DM_FX_PERSIST and
 * dm_engine_config.epoch_floor).  Fencing tokens must never go backwards,
 * even when every node that knew the highest epoch restarts: the engine
 * asks for a floor to be stored before any grant or message can show a
 * token above it, and a process started from that floor grants only above
 * it (dmlock-sim --seeds 1440..1440 --nodes 1, every fault kind: a
 * one-node cluster restarted at epoch 0 and repeated its tokens).
 */
#include "engine_harness.h"

static struct h_cluster C;

static void
teardown(void)
{
	h_fini(&C);
}

/* The highest floor node asked to store among its first n_fx effects. */
static uint64_t
floor_before(const struct h_cluster *c, int node, size_t n_fx)
{
	uint64_t floor = 0;

	for (size_t i = 0; i < n_fx; i++)
		if (c->fx[i].type == DM_FX_PERSIST && c->fx[i].node == node &&
		    c->fx[i].token > floor)
			floor = c->fx[i].token;
	return floor;
}

/* Every grant so far was covered by a floor stored before it: a process
 * started from that floor grants only above the token. */
static void
assert_grants_covered(const struct h_cluster *c)
{
	for (size_t i = 0; i < c->nfx; i++) {
		if (c->fx[i].type != DM_FX_GRANT)
			continue;
		ck_assert_msg(floor_before(c, c->fx[i].node, i) << 40 > c->fx[i].token,
		    "node%d granted token %#llx before storing a floor above it", c->fx[i].node,
		    (unsigned long long)c->fx[i].token);
	}
}

/* Acquire and release lock name on node as client handle; its token. */
static uint64_t
use_lock(int node, uint64_t handle, const char *name)
{
	const struct h_fx *g;

	h_acquire(&C, node, handle, name, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 50);
	g = h_find(&C, DM_FX_GRANT, handle);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(h_release(&C, node, handle), 0);
	h_pump(&C);
	return g->token;
}

/* Replace node0 of a one-node cluster by a new process started from floor. */
static void
restart_lone_node(uint64_t floor, uint64_t incarnation)
{
	struct dm_peer_spec self = { .name = "node0", .address = "127.0.0.1:2" };
	struct dm_engine_config cfg;
	struct dm_event ev = { .type = DM_EV_TICK };

	C.e[0] = dm_engine_free(C.e[0]);
	h_config(&cfg, "node0", &self, 1);
	cfg.incarnation = incarnation;
	cfg.epoch_floor = floor;
	ck_assert_int_eq(dm_engine_new(&cfg, &C.e[0]), 0);
	ck_assert_int_eq(h_step(&C, 0, &ev), 0);
}

START_TEST(lone_node_restart_continues_above_its_tokens)
{
	uint64_t last = 0, floor, t;

	h_init(&C, 1, DM_FAILURE_MAJORITY, 0);
	for (uint64_t h = 1; h <= 3; h++) {
		t = use_lock(0, h, "a");
		ck_assert_uint_gt(t, last);
		last = t;
	}
	assert_grants_covered(&C);
	floor = floor_before(&C, 0, C.nfx);
	ck_assert_uint_gt(floor, 0);
	/* The power of the test: a process that forgot the floor repeats
	 * the first process's tokens. */
	restart_lone_node(0, 2);
	ck_assert_uint_le(use_lock(0, 10, "a"), last);
	/* Started from the floor: above every earlier token, and again
	 * after a second restart from the floor the second process stored. */
	restart_lone_node(floor, 3);
	t = use_lock(0, 11, "a");
	ck_assert_uint_gt(t, last);
	last = t;
	floor = floor_before(&C, 0, C.nfx);
	restart_lone_node(floor, 4);
	ck_assert_uint_gt(use_lock(0, 12, "a"), last);
}
END_TEST

START_TEST(floor_is_stored_before_a_token_is_shown)
{
	/* node1 learns a token of epoch 5 from a peer: it stores floor 6
	 * before any message of its own carries that token, and its grants
	 * stay covered. */
	struct h_packet req;
	size_t before, shown = 0;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	use_lock(0, 1, "a");
	h_acquire(&C, 0, 3, "b", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	req = h_unqueue(&C, 0, 1, DM_RA_REQUEST);
	ck_assert_uint_eq(req.msg.kind, DM_RA_REQUEST);
	req.msg.token = (UINT64_C(5) << 40) + 3;
	before = C.nfx;
	h_inject(&C, 0, 1, &req.msg);
	ck_assert_uint_ge(floor_before(&C, 1, C.nfx), 6);
	ck_assert_uint_lt(floor_before(&C, 1, before), 6);
	/* Its answer carries the token, and went out after the floor. */
	ck_assert_uint_gt(C.qtail, C.qhead);
	for (size_t i = C.qhead; i < C.qtail; i++) {
		const struct h_packet *p = &C.q[i % H_QUEUE];
		if (p->from == 1 && p->msg.token >> 40 >= 5) {
			ck_assert_uint_gt(floor_before(&C, 1, p->fx_before) << 40, p->msg.token);
			shown++;
		}
	}
	ck_assert_uint_gt(shown, 0);			/* (the REPLY) */
	h_pump(&C);
	h_advance(&C, C.now + 50);
	ck_assert(h_granted(&C, 3));
	ck_assert_int_eq(h_release(&C, 0, 3), 0);
	h_pump(&C);
	ck_assert_uint_gt(use_lock(1, 2, "a"), UINT64_C(5) << 40);
	assert_grants_covered(&C);
}
END_TEST

START_TEST(floor_follows_the_roster_epoch)
{
	/* A removal starts a new epoch: the survivors store a floor above it
	 * before they grant in it. */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	use_lock(0, 1, "a");
	C.down[2] = true;
	h_acquire(&C, 0, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 30000);			/* node2 removed, then granted */
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert(h_granted(&C, 2));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 2)->token >> 40, 0);
	assert_grants_covered(&C);
}
END_TEST

START_TEST(floor_out_of_range_is_refused)
{
	struct dm_engine_config cfg;
	struct dm_engine *e = NULL;

	h_config(&cfg, "node0", NULL, 0);
	cfg.epoch_floor = UINT64_C(1) << 23;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -ERANGE);
	cfg.epoch_floor = (UINT64_C(1) << 23) - 1;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
	dm_engine_free(e);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("engine-floor");
	TCase *tc = tcase_create("floor");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, lone_node_restart_continues_above_its_tokens);
	tcase_add_test(tc, floor_is_stored_before_a_token_is_shown);
	tcase_add_test(tc, floor_follows_the_roster_epoch);
	tcase_add_test(tc, floor_out_of_range_is_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
