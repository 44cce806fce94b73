/*
 * check_election_invitation.c: the invitation election
 * (dm_election_invitation.c) behind the dm_election interface, driven by
 * the hierarchical algorithm on the in-test cluster: selection by config,
 * a new group with a unique id after the coordinator's removal (only
 * invitation kinds on the wire), the epoch cut keeping a held lock, and a
 * group that cannot cover its roster (partition) never serving.
 */
#include "hier_harness.h"

enum {
	EL_ARE_YOU_UP = 112,	/* bully's first kind */
	EL_NEW_STATE = 119,
	EL_INVITATION = 125,
	EL_ACCEPT = 126,
	EL_READY = 128,
};

static size_t
bully_kinds(const struct h_cluster *c)
{
	size_t n = 0;

	for (unsigned k = EL_ARE_YOU_UP; k <= EL_NEW_STATE + 1; k++)
		if (k != 117)	/* HELD is shared */
			n += c->sent_kind[k];
	return n;
}

START_TEST(unknown_election_is_rejected)
{
	struct dm_engine_config cfg;
	struct dm_engine *e = NULL;

	h_config(&cfg, "node0", NULL, 0);
	cfg.algorithm = "hierarchical";
	cfg.election = "ring";
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	cfg.election = "invitation";
	ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
	dm_engine_free(e);
}
END_TEST

START_TEST(new_group_after_coordinator_removal)
{
	struct h_cluster c;
	const struct h_fx *g1, *g2;

	hh_init(&c, 5, "invitation", 0);
	h_acquire(&c, 4, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 50);
	g1 = h_find(&c, DM_FX_GRANT, 1);
	ck_assert_ptr_nonnull(g1);
	hh_remove(&c, 0);
	h_advance(&c, c.now + 200);
	/* Invitation, not bully, formed the group: node1 invited the three
	 * others, each accepted, node1 sent READY. */
	ck_assert_uint_eq(bully_kinds(&c), 0);
	ck_assert_uint_eq(hh_kind(&c, EL_INVITATION), 3);
	ck_assert_uint_eq(hh_kind(&c, EL_ACCEPT), 3);
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 3);
	/* node4 kept its lock across the cut; node2 waits for it. */
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	h_acquire(&c, 2, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 100);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	ck_assert_int_eq(h_release(&c, 4, 1), 0);
	h_pump(&c);
	h_advance(&c, c.now + 100);
	g2 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_uint_gt(g2->token, h_find(&c, DM_FX_GRANT, 1)->token);
	h_fini(&c);
}
END_TEST

START_TEST(partitioned_group_does_not_serve_then_merges)
{
	/* node0 (coordinator) removed while node3 is cut off: node1's group
	 * cannot include node3, so it keeps inviting and never serves; node3
	 * cannot be removed by a majority here (operator removal only), and
	 * once the partition heals node3 accepts and the group serves. */
	struct h_cluster c;

	hh_init(&c, 4, "invitation", 0);
	c.cut[3] = true;
	c.down[0] = true;
	for (int i = 1; i < 4; i++) {
		struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = c.names[0] };
		ck_assert_int_eq(h_step(&c, i, &ev), 0);
	}
	h_pump(&c);
	h_acquire(&c, 2, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 20);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 1));
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 0);
	c.cut[3] = false;
	h_pump(&c);
	h_advance(&c, c.now + 30000);
	ck_assert_uint_gt(hh_kind(&c, EL_READY), 0);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	h_fini(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("election_invitation");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, unknown_election_is_rejected);
	tcase_add_test(tc, new_group_after_coordinator_removal);
	tcase_add_test(tc, partitioned_group_does_not_serve_then_merges);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
