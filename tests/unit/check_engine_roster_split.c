/*
 * check_engine_roster_split.c: two guards against members whose rosters
 * differ for good (NOTES.md, "Session 38"): a removal's announcement
 * carries the digest of the announcer's roster, and a member takes its
 * label only over the same names (dm_membership_failure.c), and until a
 * member's digest levels it a roster so left unsettled counts no lease
 * acks (dm_lease.c); a sponsor sends the roster to its joiner only if no
 * member acked its NODE_ADD from a label above its own
 * (dm_membership_sponsor.c).
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"
#include "dm_engine_private.h"	/* roster_epoch, dm_roster_digest*, dm_roster_find */

/* Node from announces the removal of subject (incarnation 1) at label to
 * node to, its roster then of digest `digest`. */
static void
announce_removal(int from, int to, const char *subject, uint64_t label, uint64_t digest)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_NODE_FAILED, subject, 1);
	m.epoch = label;
	m.seq = C.e[from]->incarnation;
	h_removal_digest(&m, digest);
	inject(from, to, &m);
}

static bool
lists(int node, const char *name)
{
	return dm_roster_find(C.e[node], name, strlen(name)) != DM_SLOT_NONE;
}

/* The digest node's roster has without name and with `extra` (NULL:
 * none): an announcer's roster, made from node's. */
static uint64_t
digest_of(int node, const char *without, const char *extra)
{
	const struct dm_engine *e = C.e[node];
	uint64_t d = dm_roster_digest_without(e, dm_roster_find(e, without, strlen(without)));

	if (extra != NULL)
		d += dm_roster_digest_share(e, extra);
	return d;
}

START_TEST(test_removal_label_taken_only_over_the_announcers_names)
{
	/* rcv 83366/7 (partitions): n1 (label 13, n3 removed, n1 admitted)
	 * and n3 (label 4, listing itself and not n1) both applied n4's
	 * removal of n5 at label 22, and one label stood for two rosters. */
	h_init_acquainted(&C, 5);
	announce_removal(1, 0, "node4", 5, digest_of(0, "node4", NULL));
	ck_assert(!lists(0, "node4"));
	ck_assert_uint_eq(C.e[0]->roster_epoch, 5);		/* the same names: taken */
	/* node1's roster lists a node7 that node0 never heard of. */
	announce_removal(1, 0, "node3", 9, digest_of(0, "node3", "node7"));
	ck_assert(!lists(0, "node3"));				/* applied all the same */
	ck_assert_uint_eq(C.e[0]->roster_epoch, 5);		/* but not its label */
	ck_assert_uint_eq(C.e[0]->roster_applied, 9);		/* unsettled */
	/* A removal of a node we no longer list: the label only over the
	 * same names as well. */
	announce_removal(2, 0, "node3", 12, dm_roster_digest(C.e[0]) +
	    dm_roster_digest_share(C.e[0], "node7"));
	ck_assert_uint_eq(C.e[0]->roster_epoch, 5);
	announce_removal(2, 0, "node3", 12, dm_roster_digest(C.e[0]));
	ck_assert_uint_eq(C.e[0]->roster_epoch, 12);
	ck_assert_uint_eq(C.e[0]->roster_applied, 12);		/* settled again */
}
END_TEST

START_TEST(test_unsettled_roster_counts_no_lease)
{
	/* pending-removals' two missed removals, since labels name one
	 * roster: node0 misses node1's removals of node3 and node4 and
	 * applies its removal of node2; its names differ from node1's, so
	 * it keeps label 0 -- the label of node3 and node4, removed, cut off
	 * with it and unaware.  Their acks must not count (3 of the 4 node0
	 * lists).  (node0 does not refuse their heartbeats: refusing holders
	 * behind a removal applied without its label made whole clusters
	 * restart, lamport 20568/9 and 509087/16.) */
	struct dm_msg hb;
	uint64_t serial;

	h_init_acquainted(&C, 5);
	announce_removal(1, 0, "node2", 7, digest_of(0, "node2", "node7"));	/* (other names) */
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[0]->roster_applied, 7);
	C.cut[1] = true;
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	serial = C.e[0]->heartbeat_serial;
	for (int j = 3; j <= 4; j++) {
		memset(&hb, 0, sizeof(hb));
		hb.kind = DM_MSG_HEARTBEAT_ACK;
		hb.serial = serial;
		hb.incarnation = C.e[j]->incarnation;
		hb.epoch = C.e[j]->epoch;
		inject(j, 0, &hb);				/* (label 0, as node0's) */
	}
	ck_assert(!dm_lease_valid(C.e[0]));
	ck_assert(!h_granted(&C, 1));
}
END_TEST

START_TEST(test_removal_without_digest_leaves_the_label)
{
	/* An announcement that does not say which roster it made (a
	 * malformed payload) is applied, and its label not taken. */
	struct dm_msg m;

	h_init_acquainted(&C, 4);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node3", 1);
	m.epoch = 6;
	m.seq = C.e[1]->incarnation;
	inject(1, 0, &m);
	ck_assert(!lists(0, "node3"));
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
}
END_TEST

START_TEST(test_announcement_carries_the_announcers_roster)
{
	/* What node0 sends when it removes node3 is what a member with
	 * node0's roster takes the label by. */
	const struct dm_msg *m;
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };
	uint64_t want, got = 0;

	h_init_acquainted(&C, 4);
	want = digest_of(0, "node3", NULL);
	C.down[3] = true;
	h_pump(&C);
	ck_assert_int_eq(h_step(&C, 0, &ev), 0);
	m = queued(0, 1, DM_MSG_NODE_FAILED);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->payload_len, 8);
	for (size_t i = 0; i < 8; i++)
		got = got << 8 | m->payload[i];
	ck_assert_uint_eq(got, want);
	ck_assert_uint_eq(got, dm_roster_digest(C.e[0]));	/* node3 is out here too */
	h_deliver(&C, 0, 1, DM_MSG_NODE_FAILED);
	ck_assert_uint_gt(C.e[0]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[1]->roster_epoch, C.e[0]->roster_epoch);
}
END_TEST

/* Nodes 1 and 2 remove node3 at label 5; node0 and node3 have not heard
 * (node0 still lists node3, at label 0).  node4 asks node0 to sponsor it. */
static void
sponsor_behind_the_others(void)
{
	h_init_acquainted(&C, 4);
	announce_removal(2, 1, "node3", 5, digest_of(1, "node3", NULL));
	announce_removal(1, 2, "node3", 5, digest_of(2, "node3", NULL));
	ck_assert_uint_eq(C.e[1]->roster_epoch, 5);
	ck_assert(lists(0, "node3"));
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 44);
}

START_TEST(test_sponsor_behind_an_acker_does_not_admit)
{
	/* rcv 83366/7 (partitions): n3, removed by the others at label 13
	 * while cut off and not yet told, applied removals announced by n4
	 * over other names than n4's, down to a roster of itself and n4; it
	 * took the roster lock with n4's permission alone and admitted n0,
	 * and n1, which n3 did not list, never heard of n0: two members that
	 * do not list each other.  Every member node0 lists acks its
	 * NODE_ADD, but nodes 1 and 2 from label 5, above node0's: the roster
	 * does not go out, and the join is given up in the end. */
	sponsor_behind_the_others();
	for (int k = 0; k < 300 && h_last_sent(&C, 0, 4, DM_MSG_JOIN_REFUSED) == NULL; k++) {
		ck_assert(!h_ready(&C, 4));
		h_advance(&C, C.now + 100);
	}
	ck_assert_ptr_nonnull(h_last_sent(&C, 0, 4, DM_MSG_JOIN_REFUSED));
	ck_assert(!h_ready(&C, 4));
	ck_assert(!lists(0, "node4"));
	ck_assert(!C.e[0]->sponsoring);				/* the roster lock is free */
	ck_assert_ptr_null(h_last_sent(&C, 0, 4, DM_MSG_ROSTER_END));	/* no roster from node0 */
	ck_assert(!lists(1, "node4") && !lists(2, "node4"));	/* the add cancelled */
}
END_TEST

START_TEST(test_sponsor_admits_once_level)
{
	/* The same, but node1's announcement of node3's removal reaches
	 * node0 while it waits.  It names node1's roster, node4 in it (node1
	 * took node0's NODE_ADD), which node0 does not list yet; node0 counts
	 * the digest of its roster with its joiner as its own, takes label 5,
	 * and node4 gets in without the join being given up. */
	sponsor_behind_the_others();
	for (int k = 0; k < 30; k++)
		h_advance(&C, C.now + 100);
	ck_assert(!h_ready(&C, 4));
	ck_assert(C.e[0]->sponsoring && C.e[0]->ack_waiting_n == 0);
	ck_assert(lists(1, "node4") && !lists(0, "node4"));
	C.down[3] = true;
	announce_removal(1, 0, "node3", 5, dm_roster_digest(C.e[1]));	/* (node3 out, node4 in) */
	ck_assert_uint_eq(C.e[0]->roster_epoch, 5);
	for (int k = 0; k < 50 && !h_ready(&C, 4); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 4));
	ck_assert_ptr_null(h_last_sent(&C, 0, 4, DM_MSG_JOIN_REFUSED));	/* not given up */
	ck_assert_uint_eq(dm_roster_digest(C.e[0]), dm_roster_digest(C.e[1]));
	ck_assert_uint_eq(dm_roster_digest(C.e[0]), dm_roster_digest(C.e[4]));
}
END_TEST

START_TEST(test_unsettled_last_member_admits)
{
	/* ricart-agrawala 23102/15 (partitions, static restarts), on a draft
	 * that kept an unsettled roster from admitting anyone: the last
	 * member, unsettled, and no member left to level it, refused every
	 * join for good.  An unsettled sponsor whose ackers are at its label
	 * or below admits. */
	h_init_acquainted(&C, 4);
	announce_removal(1, 0, "node3", 5, digest_of(0, "node3", "node7"));
	ck_assert(dm_membership_unsettled(C.e[0]));
	C.down[3] = true;
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 44);
	for (int k = 0; k < 100 && !h_ready(&C, 4); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 4));
	ck_assert(lists(0, "node4") && lists(1, "node4") && lists(2, "node4"));
}
END_TEST

static bool
hold_node_add_ack_from_node2(const struct h_packet *p)
{
	return p->from == 2 && p->msg.kind == DM_MSG_NODE_ADD_ACK;
}

START_TEST(test_sponsor_digest_counts_its_joiner)
{
	/* raymond 1967/16 (crashes): n0, its NODE_ADD for n8 out, removed n7
	 * at label 17; every other member listed n8 already, n0 not yet, and
	 * none took the label over n0's names.  While a NODE_ADD of ours is
	 * out, the digest we announce counts the joiner. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };

	h_init_acquainted(&C, 4);
	C.hold = hold_node_add_ack_from_node2;	/* (the join does not finish) */
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 44);
	for (int k = 0; k < 100 && !lists(1, "node4"); k++)
		h_advance(&C, C.now + 10);
	ck_assert(lists(1, "node4") && !lists(0, "node4"));
	ck_assert(C.e[0]->sponsoring);
	/* node1's names are node0's with its joiner: they agree, and what
	 * node0 sends says so. */
	ck_assert_uint_ne(dm_roster_digest(C.e[0]), dm_roster_digest(C.e[1]));
	ck_assert(dm_membership_digest_agrees(C.e[0], dm_roster_digest(C.e[0]),
	    dm_roster_digest(C.e[1])));
	ck_assert_uint_eq(dm_membership_digest_claimed(C.e[0], dm_roster_digest(C.e[0])),
	    dm_roster_digest(C.e[1]));
	ck_assert(!dm_membership_digest_agrees(C.e[2], dm_roster_digest(C.e[2]) + 1,
	    dm_roster_digest(C.e[2])));		/* (a member not sponsoring: exact) */
	ck_assert_int_eq(h_step(&C, 0, &ev), 0);
	h_deliver(&C, 0, 1, DM_MSG_NODE_FAILED);
	ck_assert_uint_gt(C.e[0]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[1]->roster_epoch, C.e[0]->roster_epoch);
	ck_assert(!dm_membership_unsettled(C.e[1]));
}
END_TEST

static Suite *
roster_split_suite(void)
{
	Suite *s = suite_create("roster-split");
	TCase *tc = tcase_create("roster-split");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_removal_label_taken_only_over_the_announcers_names);
	tcase_add_test(tc, test_removal_without_digest_leaves_the_label);
	tcase_add_test(tc, test_unsettled_roster_counts_no_lease);
	tcase_add_test(tc, test_announcement_carries_the_announcers_roster);
	tcase_add_test(tc, test_sponsor_behind_an_acker_does_not_admit);
	tcase_add_test(tc, test_sponsor_admits_once_level);
	tcase_add_test(tc, test_unsettled_last_member_admits);
	tcase_add_test(tc, test_sponsor_digest_counts_its_joiner);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(roster_split_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
