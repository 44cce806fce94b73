/*
 * check_engine_pending_removals.c: lease acks and the removals their
 * senders stand by but have not seen applied (dm_lease.c, "pending
 * removals"): a heartbeat ack names them, an answer of the algorithm
 * carries no lease ack while there are any, and a lease round counts no
 * ack of a node that an acker of the round, or the holder, named.
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"
#include "dm_engine_private.h"	/* dm_lease_valid, dm_roster_find, dm_roster_digest */

/* node `to` agrees to node `from`'s removal vote (serial, ballot) on
 * subject, silent there past T_fail. */
static void
agrees_to_remove(int to, int from, const char *subject, uint64_t serial, uint64_t ballot)
{
	struct dm_msg m;
	int s = h_index(&C, subject);

	h_subject_msg(&m, DM_MSG_SUSPECT, subject, C.e[s]->incarnation);
	m.serial = serial;
	m.arg = ballot;
	inject(from, to, &m);
	ck_assert_ptr_nonnull(queued(to, from, DM_MSG_SUSPECT_VOTE));
	ck_assert_uint_eq(queued(to, from, DM_MSG_SUSPECT_VOTE)->arg, 1);
}

/* node from's HEARTBEAT (serial) to node to; the ack queued, or NULL. */
static const struct dm_msg *
heartbeat(int from, int to, uint64_t serial)
{
	struct dm_msg m;

	h_pump(&C);	/* (so that the ack found is this one) */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.serial = serial;
	m.incarnation = C.e[from]->incarnation;
	m.roster_epoch = C.e[from]->roster_epoch;
	m.arg = dm_roster_digest(C.e[from]);
	inject(from, to, &m);
	return queued(to, from, DM_MSG_HEARTBEAT_ACK);
}

/* Node from acknowledges node to's lease round serial, naming `pending`
 * (a node's name, or NULL for none) as a removal it stands by. */
/* A HEARTBEAT_ACK of round serial as node from would send it, naming
 * nobody. */
static void
heartbeat_ack_of(struct dm_msg *m, int from, uint64_t serial)
{
	memset(m, 0, sizeof(*m));
	m->kind = DM_MSG_HEARTBEAT_ACK;
	m->serial = serial;
	m->incarnation = C.e[from]->incarnation;
	m->roster_epoch = C.e[from]->roster_epoch;
	m->epoch = C.e[from]->epoch;
}

static void
lease_ack(int from, int to, uint64_t serial, const char *pending)
{
	struct dm_msg m;

	heartbeat_ack_of(&m, from, serial);
	if (pending != NULL) {
		m.payload[0] = (uint8_t)strlen(pending);
		memcpy(m.payload + 1, pending, m.payload[0]);
		m.payload_len = (uint16_t)(1 + m.payload[0]);
	}
	inject(from, to, &m);
}

/* node0's lease has run out; it asks for x, and nobody hears the request
 * (every other node is down): the number of its lease round. */
static uint64_t
node0_opens_a_round_nobody_hears(void)
{
	h_advance(&C, C.now + 10000);
	ck_assert(!dm_lease_valid(C.e[0]));
	for (int j = 1; j < C.n; j++)
		C.down[j] = true;
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!dm_lease_valid(C.e[0]));
	return C.e[0]->heartbeat_serial;
}

static bool
may_ack(int acker, int holder)
{
	dm_slot_t s = dm_roster_find(C.e[acker], C.names[holder], strlen(C.names[holder]));

	return dm_lease_may_ack(C.e[acker], s);
}

START_TEST(test_ack_names_the_removals_its_sender_stands_by)
{
	/* node4 agrees that node1 remove node3 (silent): its acks of node0's
	 * heartbeats name node3, and its answers carry no lease ack; once
	 * node1 withdraws the vote, neither. */
	const struct dm_msg *ack;
	struct dm_msg m;

	init_acquainted(5);
	C.down[3] = true;
	h_advance(&C, C.now + 8000);
	C.down[3] = false;
	ck_assert(may_ack(4, 0));
	agrees_to_remove(4, 1, "node3", 41, 50);
	ack = heartbeat(0, 4, 9001);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_ne(ack->arg, DM_HEARTBEAT_REFUSED);
	ck_assert_uint_eq(ack->payload_len, 6);
	ck_assert_mem_eq(ack->payload, "\x05node3", 6);
	ck_assert(!may_ack(4, 0));
	ck_assert(may_ack(2, 0));	/* (a node that agreed to nothing) */
	ack = heartbeat(0, 2, 9002);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_eq(ack->payload_len, 0);
	/* node1 withdraws its vote. */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_SUSPECT_ABORT;
	m.serial = 41;
	inject(1, 4, &m);
	ack = heartbeat(0, 4, 9003);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_eq(ack->payload_len, 0);
	ck_assert(may_ack(4, 0));
}
END_TEST

/*
 * Two acks of node0's round, then a third from a node nobody names.  Five
 * nodes: node4 agreed to remove node3 and has not seen it applied, so
 * node0's round acknowledged by node3 and node4 is 3 of 5, but node3 may
 * be gone already (and, after one more removal, node4 too): no lease,
 * whichever ack came first; a third ack makes a majority without node3.
 * The contrast: the same two acks naming nobody make a lease.
 */
static const struct two_acks {
	int first;
	const char *first_names;
	int second;
	const char *second_names;
	bool lease_after_two;
} two_acks[] = {
	{ 3, NULL, 4, "node3", false },		/* the named ack came first */
	{ 4, "node3", 3, NULL, false },		/* it came after the naming */
	{ 3, NULL, 4, NULL, true },		/* nobody names anyone */
};

START_TEST(test_no_lease_on_the_ack_of_a_node_an_acker_removes)
{
	const struct two_acks *t = &two_acks[_i];
	uint64_t serial;

	init_acquainted(5);
	serial = node0_opens_a_round_nobody_hears();
	lease_ack(t->first, 0, serial, t->first_names);
	ck_assert(!dm_lease_valid(C.e[0]));
	lease_ack(t->second, 0, serial, t->second_names);
	ck_assert_msg(dm_lease_valid(C.e[0]) == t->lease_after_two,
	    "case %d: node0's lease after two acks: %d", _i, dm_lease_valid(C.e[0]));
	lease_ack(2, 0, serial, NULL);
	ck_assert(dm_lease_valid(C.e[0]));
}
END_TEST

START_TEST(test_no_lease_on_the_ack_of_a_node_the_holder_removes)
{
	/* node0 itself agreed that node1 remove node4: node4's ack does not
	 * count for node0 either. */
	uint64_t serial;

	init_acquainted(5);
	C.down[4] = true;
	h_advance(&C, C.now + 8000);
	C.down[4] = false;
	agrees_to_remove(0, 1, "node4", 42, 50);
	serial = node0_opens_a_round_nobody_hears();
	lease_ack(3, 0, serial, NULL);
	lease_ack(4, 0, serial, NULL);
	ck_assert_msg(!dm_lease_valid(C.e[0]),
	    "node0's lease counted the ack of a node it agreed to remove");
	lease_ack(2, 0, serial, NULL);
	ck_assert(dm_lease_valid(C.e[0]));
}
END_TEST

START_TEST(test_malformed_report_is_no_ack)
{
	/* A name length running past the payload: the ack is not counted
	 * (and nothing else is disturbed). */
	uint64_t serial;
	struct dm_msg m;

	init_acquainted(5);
	serial = node0_opens_a_round_nobody_hears();
	heartbeat_ack_of(&m, 4, serial);
	m.payload[0] = 9;
	memcpy(m.payload + 1, "node3", 5);
	m.payload_len = 6;
	inject(4, 0, &m);
	lease_ack(3, 0, serial, NULL);
	ck_assert(!dm_lease_valid(C.e[0]));	/* node0 and node3 only */
	lease_ack(2, 0, serial, NULL);
	ck_assert(dm_lease_valid(C.e[0]));
}
END_TEST

/* Node `node`, without a lease, asks for y: it must restart (not before
 * 2 T_fail), rejoin, and be served then. */
static void
restarts_and_is_served_again(int node)
{
	uint64_t incarnation = C.e[node]->incarnation;
	dm_msec_t since = C.now;

	h_acquire(&C, node, 1, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 120 && !granted(1) && h_find(&C, DM_FX_DENY, 1) == NULL; k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(1) || h_find(&C, DM_FX_DENY, 1) != NULL,
	    "node%d neither served nor told: stuck without a lease", node);
	ck_assert_uint_ne(C.e[node]->incarnation, incarnation);	/* it restarted */
	ck_assert_uint_ge(C.now - since, 14000);		/* not before 2 T_fail */
	for (int k = 0; k < 120 && !h_ready(&C, node); k++)
		h_advance(&C, C.now + 500);
	ck_assert(h_ready(&C, node));
	h_acquire(&C, node, 2, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 120 && !granted(2); k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(2), "node%d never served again", node);
}

START_TEST(test_refused_and_own_pending_removals_leave_no_majority_restart)
{
	/* Suzuki-Kasami 1019/4 (bully, partitions): n3 held an orphaned
	 * agreement to remove n2 (alive to everyone else), and n1 refused
	 * n3 for good (an orphaned agreement to remove n3).  n3's lease could
	 * count n0's ack only: 2 of 4, and one refuser was too few to make it
	 * restart, so it held both tokens without a lease for good.  Here
	 * node0 holds an orphaned agreement on node4 and node4 one on node2
	 * (set directly: how they arise is check_engine_membership's
	 * business).  node4 has node1's ack only besides its own; counting
	 * node2 with the refusers, it restarts after 2 T_fail and rejoins,
	 * and is served then. */
	dm_slot_t s2, s4;

	init_acquainted(5);
	s4 = dm_roster_find(C.e[0], "node4", 5);
	s2 = dm_roster_find(C.e[4], "node2", 5);
	C.e[0]->nodes[s4].vote_orphaned = true;
	C.e[4]->nodes[s2].vote_orphaned = true;
	C.down[3] = true;
	restarts_and_is_served_again(4);
	ck_assert_uint_gt(C.sent_lease_refusals, 0);
}
END_TEST

START_TEST(test_refused_and_named_removals_leave_no_majority_restart)
{
	/* Lamport 597223/8 (partitions): three members held orphaned
	 * agreements to remove n1 and refused it for good, and n7 one to
	 * remove n2, which it named in every ack.  n1 counted 4 acks of 8
	 * and 3 refusers: neither a lease nor a refusing majority, and its
	 * request, first in every queue, held up the lock for good.  Here,
	 * six nodes: node0 and node1 refuse node5, and node2 names node3.
	 * node5 can count itself, node2 and node4: 3 of 6, never a majority;
	 * counting node3 with the refusers, it restarts after 2 T_fail and
	 * rejoins, and is served then. */
	init_acquainted(6);
	for (int j = 0; j < 2; j++)
		C.e[j]->nodes[dm_roster_find(C.e[j], "node5", 5)].vote_orphaned = true;
	C.e[2]->nodes[dm_roster_find(C.e[2], "node3", 5)].vote_orphaned = true;
	h_advance(&C, C.now + 10000);	/* (node5's lease runs out) */
	ck_assert(!dm_lease_valid(C.e[5]));
	restarts_and_is_served_again(5);
}
END_TEST

/* node1 removes subject (as an operator would: its announcement at once,
 * no vote) and only the nodes in `heard_by` (a bit per node) hear of it:
 * the announcements to everyone else are held for good. */
static void
node1_removes(const char *subject, unsigned heard_by)
{
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = subject };

	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	for (int j = 0; j < C.n; j++)
		if (j != 1 && !(heard_by & 1u << j) && h_queued(&C, 1, j, DM_MSG_NODE_FAILED) != NULL)
			h_unqueue(&C, 1, j, DM_MSG_NODE_FAILED);
	h_pump(&C);
}

#define node1_removes_heard_by_node2_only(subject)	node1_removes((subject), 1u << 2)

/* node from refuses node to's lease round serial (a refusal for good:
 * no roster digest to catch up with). */
static void
lease_refusal_from(int from, int to, uint64_t serial)
{
	struct dm_msg m;

	heartbeat_ack_of(&m, from, serial);
	m.arg = DM_HEARTBEAT_REFUSED;
	inject(from, to, &m);
}

START_TEST(test_stale_refusals_restart_nobody)
{
	/* Lamport 194596/5 (partitions): on {n0, n1}, n1 stood by removing
	 * n0 (so n0 counted with its refusers, no majority left), applied an
	 * announcement that raised its label and, the same instant, took
	 * fifty refusals of its older heartbeats that the partition had held;
	 * it restarted through n0, which had restarted already, and no member
	 * was left.  A refusal of a round sent under an older label, or of
	 * one no longer among the recent rounds, judged a roster we no longer
	 * have: it counts for nothing.  The refusal of a current round still
	 * restarts node0 (the contrast). */
	uint64_t incarnation, old_round, recent_round;

	init_acquainted(2);
	C.e[0]->nodes[dm_roster_find(C.e[0], "node1", 5)].vote_orphaned = true;
	C.down[1] = true;
	h_advance(&C, C.now + 10000);	/* (node0's lease runs out) */
	incarnation = C.e[0]->incarnation;
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	old_round = C.e[0]->heartbeat_serial;
	for (int k = 0; k < 40; k++)	/* past 2 T_fail, refused all along */
		h_advance(&C, C.now + 500);
	ck_assert_uint_gt(C.e[0]->heartbeat_serial, old_round + C.e[0]->heartbeats_n);
	recent_round = C.e[0]->heartbeat_serial;
	C.e[0]->roster_epoch++;		/* (an announcement applied: set directly) */
	lease_refusal_from(1, 0, recent_round);
	ck_assert_msg(C.e[0]->incarnation == incarnation,
	    "node0 restarted on the refusal of a round sent under its older label");
	lease_refusal_from(1, 0, old_round);
	ck_assert_msg(C.e[0]->incarnation == incarnation,
	    "node0 restarted on the refusal of a round long gone");
	h_advance(&C, C.now + C.e[0]->heartbeat_ms);	/* a round at the new label */
	ck_assert_uint_gt(C.e[0]->heartbeat_serial, recent_round);
	lease_refusal_from(1, 0, C.e[0]->heartbeat_serial);
	ck_assert_msg(C.e[0]->incarnation != incarnation,
	    "node0, refused now with no majority left for 2 T_fail, did not restart");
}
END_TEST

START_TEST(test_three_removals_deep_no_second_holder)
{
	/* The hole itself, on real engines.  Five nodes, all idle past
	 * T_fail.  node4 agrees that node1 remove node3, node0 that node1
	 * remove node4; node1 removes node3, node4 and then node0, and only
	 * node2 hears of it.  node1 and node2, on {node1, node2}, grant.
	 * node0, cut off from them with node3 and node4 -- all three at
	 * label 0, none condemned by the others -- must not get a lease: on
	 * 5ee18ec's engine node3's and node4's acks made 3 of the 5 it
	 * lists. */
	init_acquainted(5);
	h_advance(&C, C.now + 8000);
	agrees_to_remove(4, 1, "node3", 41, 50);
	agrees_to_remove(0, 1, "node4", 42, 60);
	h_pump(&C);
	node1_removes_heard_by_node2_only("node3");
	node1_removes_heard_by_node2_only("node4");
	node1_removes_heard_by_node2_only("node0");
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	ck_assert_uint_eq(h_roster(&C, 2), 2);
	ck_assert_uint_eq(h_roster(&C, 0), 5);
	ck_assert_uint_eq(h_roster(&C, 4), 5);
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[3]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[4]->roster_epoch, 0);
	/* The members left grant. */
	h_acquire(&C, 1, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	/* node0, with node3 and node4 only, asks for a lease round after
	 * round for a while (short of T_fail, so no new vote starts). */
	C.cut[1] = C.cut[2] = true;
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 20; k++) {
		h_advance(&C, C.now + 100);
		ck_assert_msg(!dm_lease_valid(C.e[0]),
		    "node0 has a lease from the acks of two removed nodes (at %llu ms)",
		    (unsigned long long)C.now);
	}
	ck_assert_uint_gt(C.sent_kind[DM_MSG_HEARTBEAT_ACK], 0);	/* (acks were given) */
	ck_assert(!granted(2));
}
END_TEST

START_TEST(test_two_missed_removals_under_one_label_no_lease)
{
	/* Stale ackers (dm_lease.c): node1 removes node3 and node4, and
	 * node0 misses both announcements; then node1 removes node2 and node0
	 * hears of that one: its label is node1's, but it still lists node3
	 * and node4, which, cut off with it and unaware, acknowledge it from
	 * behind (label 0).  node1 removes node0 too and is alone.  On
	 * 5ee18ec's engine node0 counted them: 3 of the 4 it lists. */
	init_acquainted(5);
	node1_removes("node3", 1u << 2);
	node1_removes("node4", 1u << 2);
	node1_removes("node2", 1u << 0 | 1u << 2);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	/* Since session 38 node0 takes that label only over node1's names
	 * (dm_membership_failure.c), and they differ: it stays behind, and
	 * node1's next removal is decided without it.  On 25299df's engine
	 * node0 took node1's label here, and the stale-acker rule alone
	 * kept node3's and node4's acks out of its lease. */
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
	ck_assert_uint_gt(C.e[1]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[3]->roster_epoch, 0);
	node1_removes("node0", 0);
	ck_assert_uint_eq(h_roster(&C, 1), 1);
	h_acquire(&C, 1, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	C.cut[1] = C.cut[2] = true;
	h_advance(&C, C.now + 10000);	/* (node0's last lease has run out) */
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 20; k++) {
		h_advance(&C, C.now + 100);
		ck_assert_msg(!dm_lease_valid(C.e[0]),
		    "node0 has a lease from the acks of two removed nodes (at %llu ms)",
		    (unsigned long long)C.now);
	}
	ck_assert_uint_gt(C.sent_kind[DM_MSG_HEARTBEAT_ACK], 0);	/* (acks were given) */
	ck_assert(!granted(2));
}
END_TEST

START_TEST(test_lagging_acker_takes_the_label_of_a_heartbeat_with_its_roster)
{
	/* A member that missed an announcement for good but lists the same
	 * names (as in 7007/16) would help no lease of the members ahead:
	 * a heartbeat from one of them carries its roster digest, and the
	 * member takes its label; its acks count again. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };
	uint64_t serial;

	init_acquainted(4);
	C.down[3] = true;	/* (crashed: it does not come back) */
	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	h_pump(&C);
	ck_assert_uint_gt(C.e[1]->roster_epoch, 0);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	C.e[2]->roster_epoch = C.e[2]->roster_applied = 0;	/* (an announcement it missed) */
	/* node0's round: node2 is behind, so its ack does not count. */
	serial = node0_opens_a_round_nobody_hears();
	lease_ack(2, 0, serial, NULL);
	ck_assert(!dm_lease_valid(C.e[0]));
	/* A heartbeat of node0's reaches node2: level again. */
	C.down[2] = false;
	ck_assert_ptr_nonnull(heartbeat(0, 2, 9001));
	ck_assert_uint_eq(C.e[2]->roster_epoch, C.e[0]->roster_epoch);
	lease_ack(2, 0, serial, NULL);
	ck_assert(dm_lease_valid(C.e[0]));
}
END_TEST

START_TEST(test_only_a_ready_member_refuses_a_heartbeat_from_behind)
{
	/* rcv 883623/8 (crashes): a node still syncing from a sponsor that
	 * had crashed refused the last ready member's heartbeats as from a
	 * roster behind its own; the member gave its membership up to rejoin
	 * through it, and no member was left.  A ready member ahead refuses;
	 * a syncing or joining node ahead stays silent (no ack either). */
	const struct dm_msg *ack;

	init_acquainted(4);
	C.e[2]->roster_epoch = C.e[2]->roster_applied = C.e[0]->roster_epoch + 1;	/* (ahead) */
	ack = heartbeat(0, 2, 9001);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_eq(ack->arg, DM_HEARTBEAT_REFUSED);
	C.e[2]->membership = DM_MEMBER_SYNCING;	/* (set directly) */
	ck_assert_ptr_null(heartbeat(0, 2, 9002));
	C.e[2]->membership = DM_MEMBER_JOINING;
	ck_assert_ptr_null(heartbeat(0, 2, 9003));
}
END_TEST

static Suite *
pending_removals_suite(void)
{
	Suite *s = suite_create("engine-pending-removals");
	TCase *tc = tcase_create("pending-removals");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_ack_names_the_removals_its_sender_stands_by);
	tcase_add_loop_test(tc, test_no_lease_on_the_ack_of_a_node_an_acker_removes, 0,
	    (int)(sizeof(two_acks) / sizeof(two_acks[0])));
	tcase_add_test(tc, test_no_lease_on_the_ack_of_a_node_the_holder_removes);
	tcase_add_test(tc, test_malformed_report_is_no_ack);
	tcase_add_test(tc, test_refused_and_own_pending_removals_leave_no_majority_restart);
	tcase_add_test(tc, test_refused_and_named_removals_leave_no_majority_restart);
	tcase_add_test(tc, test_stale_refusals_restart_nobody);
	tcase_add_test(tc, test_three_removals_deep_no_second_holder);
	tcase_add_test(tc, test_two_missed_removals_under_one_label_no_lease);
	tcase_add_test(tc, test_lagging_acker_takes_the_label_of_a_heartbeat_with_its_roster);
	tcase_add_test(tc, test_only_a_ready_member_refuses_a_heartbeat_from_behind);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pending_removals_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
