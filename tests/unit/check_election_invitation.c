/*
 * check_election_invitation.c: the invitation election
 * (dm_election_invitation.c) behind the dm_election interface, driven by
 * the hierarchical algorithm on the in-test cluster: selection by config,
 * a new group with a unique id after the coordinator's removal (only
 * invitation kinds on the wire), the epoch cut keeping a held lock, and a
 * group that cannot cover its roster (partition) never serving, and a
 * member that a group counts as a joiner although it accepted as a member,
 * and a HELD report placed in the groups of the epoch it starts.
 */
#include "hier_harness.h"

enum {
	EL_ARE_YOU_UP = 112,	/* bully's first kind */
	EL_NEW_STATE = 119,
	EL_INVITATION = 125,
	EL_ACCEPT = 126,
	EL_READY = 128,
	EL_ANSWER_JOINING = 3,	/* DM_EL_ANSWER_JOINING */
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
	g1 = hh_ask(&c, 4, 1, "a", 50);
	ck_assert_ptr_nonnull(g1);
	hh_remove(&c, 0);
	h_advance(&c, c.now + 200);
	/* Everyone accepted; READY waits for older leases to run out. */
	ck_assert_uint_eq(hh_kind(&c, EL_ACCEPT), 3);
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 0);
	h_advance(&c, c.now + h_fence_ms(&c));
	/* Invitation, not bully, formed the group: node1 invited the three
	 * others, each accepted, node1 sent READY. */
	ck_assert_uint_eq(bully_kinds(&c), 0);
	ck_assert_uint_eq(hh_kind(&c, EL_INVITATION), 3);
	ck_assert_uint_eq(hh_kind(&c, EL_ACCEPT), 3);
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 3);
	/* node4 kept its lock across the cut; node2 waits for it. */
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	ck_assert_ptr_null(hh_ask(&c, 2, 2, "a", 100));
	hh_release(&c, 4, 1, 100);
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
	ck_assert_ptr_null(hh_ask(&c, 2, 1, "a", 20));
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 0);
	c.cut[3] = false;
	h_pump(&c);
	h_advance(&c, c.now + 30000);
	ck_assert_uint_gt(hh_kind(&c, EL_READY), 0);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	h_fini(&c);
}
END_TEST

START_TEST(member_counted_as_joiner_forms_a_group)
{
	/* dmlock-sim --algorithm hierarchical --election invitation --seed 455
	 * --nodes 8 --fault-mask 6: n6, rejoining, resumed from a pause and
	 * found the coordinator's invitation (resent while it was silent)
	 * twice in its queue: the first answered passively while still
	 * JOINING (ACCEPT arg JOINING), the second as a member after its
	 * roster came.  The coordinator completed on the first, so its READY
	 * listed n6 as a joiner: n6 went Normal with no group coordinator
	 * (joiners are not working) and its request was never sent.  Here:
	 * node0 forms a group (node3 removed); node2's passive ACCEPT reaches
	 * node0 before its member ACCEPT. */
	struct h_cluster c;
	struct h_packet inv, acc;
	struct dm_msg joining;

	hh_init(&c, 4, "invitation", 0);
	c.down[3] = true;
	for (int i = 0; i < 3; i++) {
		struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = c.names[3] };
		ck_assert_int_eq(h_step(&c, i, &ev), 0);
	}
	inv = h_unqueue(&c, 0, 2, EL_INVITATION);
	joining = inv.msg;
	joining.kind = EL_ACCEPT;
	joining.arg = EL_ANSWER_JOINING;
	joining.seq = 0;
	h_inject(&c, 2, 0, &joining);	/* the answer node2 gave while joining */
	h_inject(&c, 0, 2, &inv.msg);	/* node2, a member now, accepts again */
	acc = h_unqueue(&c, 2, 0, EL_ACCEPT);
	h_pump(&c);			/* node1 accepts: node0 completes, READY */
	h_advance(&c, c.now + h_fence_ms(&c));
	ck_assert_uint_ge(hh_kind(&c, EL_READY), 2);
	h_inject(&c, 2, 0, &acc.msg);	/* too late to count */
	h_pump(&c);
	h_advance(&c, c.now + 100);
	h_acquire(&c, 2, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 30000);
	/* Without the fix node2 is Normal in a group that leaves it out: its
	 * NREQUEST has no group coordinator to go to. */
	ck_assert(h_granted(&c, 1));
	h_fini(&c);
}
END_TEST

START_TEST(held_report_counts_in_the_new_epochs_groups)
{
	/* dmlock-sim --algorithm hierarchical --election invitation --seed 2110
	 * --nodes 7 --fault-mask 2: n2 formed a group while the last epoch it
	 * had seen listed n6 as a joiner; n6 (working since) reported HELD
	 * lock/c, which n2 placed in the groups of that old epoch: no group
	 * coordinator, so the lock looked free and n2 granted it again.
	 * Here node1's epoch lists node3 as a joiner (its READY said so),
	 * node3 takes "a", node0 is removed, node1 forms a group; with groups
	 * of two node3 is then its own group coordinator and node2 asks
	 * through node1. */
	struct h_cluster c;
	struct h_packet ready;

	hh_init(&c, 5, "invitation", 2);
	c.down[4] = true;
	for (int i = 0; i < 4; i++) {
		struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = c.names[4] };
		ck_assert_int_eq(h_step(&c, i, &ev), 0);
	}
	/* node0 forms a group; its READY to node1 names node3 as a joiner. */
	ready = h_unqueue(&c, 0, 1, EL_INVITATION);
	h_inject(&c, 0, 1, &ready.msg);
	ready = h_unqueue(&c, 1, 0, EL_ACCEPT);
	h_inject(&c, 1, 0, &ready.msg);
	c.cut[1] = true;
	h_pump(&c);
	h_advance(&c, c.now + h_fence_ms(&c));
	c.cut[1] = false;
	ready = h_unqueue(&c, 0, 1, EL_READY);
	memcpy(ready.msg.payload, "node3", 6);
	ready.msg.payload_len = 6;
	h_inject(&c, 0, 1, &ready.msg);
	h_pump(&c);
	ck_assert_ptr_nonnull(hh_ask(&c, 3, 1, "a", 100));
	hh_remove(&c, 0);
	h_advance(&c, c.now + 100 + h_fence_ms(&c));
	h_acquire(&c, 2, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 100);
	/* Without the fix node1 granted node2 while node3 held the lock. */
	ck_assert(!h_granted(&c, 2));
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	hh_release(&c, 3, 1, 100);
	ck_assert(h_granted(&c, 2));
	h_fini(&c);
}
END_TEST

START_TEST(permission_without_grant_does_not_cross_a_cut)
{
	/* As check_algo_token's test of the same name (raymond --election
	 * invitation 419/4): node0, system and group coordinator, is cut off
	 * and grants its own client's request, which waits for a lease; node0
	 * then forms a new group.  The old grant must not turn into a client
	 * grant once heartbeats are acknowledged again: it is asked for anew
	 * in the new group. */
	struct h_cluster c;
	struct dm_msg inv;

	hh_init(&c, 3, "invitation", 0);
	c.cut[1] = c.cut[2] = true;
	h_acquire(&c, 0, 1, "c", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_advance(&c, c.now + 100);
	ck_assert(!h_granted(&c, 1));
	memset(&inv, 0, sizeof(inv));
	inv.kind = EL_INVITATION;
	inv.lock_len = (uint16_t)strlen(".dmlock/election");
	strcpy(inv.lock, ".dmlock/election");
	inv.incarnation = 1;
	inv.serial = 2;
	inv.node_len = 5;
	strcpy(inv.node, "node2");
	h_inject(&c, 2, 0, &inv);
	c.cut[1] = c.cut[2] = false;
	h_pump(&c);
	h_advance(&c, c.now + 100);
	ck_assert_uint_eq(hh_kind(&c, EL_READY), 0);
	ck_assert_msg(!h_granted(&c, 1), "granted from a permission of the old epoch");
	h_advance(&c, c.now + h_fence_ms(&c) + 100);
	ck_assert_uint_gt(hh_kind(&c, EL_READY), 0);
	ck_assert(h_granted(&c, 1));
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
	tcase_add_test(tc, member_counted_as_joiner_forms_a_group);
	tcase_add_test(tc, held_report_counts_in_the_new_epochs_groups);
	tcase_add_test(tc, permission_without_grant_does_not_cross_a_cut);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
