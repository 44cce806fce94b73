/*
 * check_engine_record.c: the membership record (dm_member_record.c):
 * what a node's processes agreed to about membership, on disk
 * (DM_FX_PERSIST_RECORD) and read back by the next process
 * (dm_engine_config.last_record), so that a restarted node never helps a
 * node its earlier process saw removed rebuild a cluster beside the one
 * that removed it (dmlock-sim --seed 1952 --nodes 5, every fault kind).
 * The harness keeps each node's last record as its disk; h_join_from(...,
 * true) restarts a node from it.
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"
#include "dm_engine_private.h"	/* the epoch, label, membership and incarnation */

/* The digest an announcer with node to's roster sends for the removal of
 * subject (to's digest without it). */
static uint64_t
announcer_digest(int to, const char *subject)
{
	dm_slot_t s = dm_roster_find(C.e[to], subject, strlen(subject));

	return s == DM_SLOT_NONE ? dm_roster_digest(C.e[to]) : dm_roster_digest_without(C.e[to], s);
}

/* node0 tells node1 that node2's incarnation 1 was removed, at roster
 * label epoch (a NODE_FAILED, delivered at once). */
static void
node0_tells_node1_node2_failed(uint64_t epoch)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node2", 1);
	m.epoch = epoch;
	h_removal_digest(&m, announcer_digest(1, "node2"));
	inject(0, 1, &m);
}

/* Deliver node from's SUSPECT (serial, ballot) about subject's incarnation
 * inc to node to, sent with from's roster at label; mode 1: the subject
 * restarted too (a restarted process votes on another's old slot only
 * then). */
static void
suspect_in_mode(int from, int to, const char *subject, uint64_t inc, uint64_t serial,
    uint64_t ballot, uint64_t label, uint8_t mode)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_SUSPECT, subject, inc);
	m.mode = mode;
	m.serial = serial;
	m.arg = ballot;
	m.epoch = label;
	m.roster_epoch = label;
	inject(from, to, &m);
}

static void
suspect(int from, int to, const char *subject, uint64_t inc, uint64_t serial, uint64_t ballot,
    uint64_t label)
{
	suspect_in_mode(from, to, subject, inc, serial, ballot, label, 0);
}

/* The vote node from sent to node to last, for serial: 1 yes, 0 no. */
static uint64_t
vote(int from, int to, uint64_t serial)
{
	const struct dm_msg *v = queued(from, to, DM_MSG_SUSPECT_VOTE);

	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->serial, serial);
	return v->arg;
}

/* The ballot of node's disk's agreed removal of name (0 if none). */
static uint64_t
disk_removal(int node, const char *name)
{
	for (size_t i = 0; i < C.record[node].n_removals; i++)
		if (strcmp(C.record[node].removed[i], name) == 0)
			return C.record[node].ballot[i];
	return 0;
}

/* How many records node stored among the effects before index n_fx. */
static size_t
records_before(int node, size_t n_fx)
{
	size_t k = 0;

	for (size_t i = 0; i < n_fx; i++)
		k += C.fx[i].type == DM_FX_PERSIST_RECORD && C.fx[i].node == node;
	return k;
}

/* The effects recorded before the last SUSPECT_VOTE from -> to was sent. */
static size_t
fx_before_vote(int from, int to)
{
	for (size_t i = C.qtail; i-- > C.qhead;) {
		const struct h_packet *p = &C.q[i % H_QUEUE];

		if (p->from == from && p->to == to && p->msg.kind == DM_MSG_SUSPECT_VOTE)
			return p->fx_before;
	}
	ck_abort_msg("no SUSPECT_VOTE from node%d to node%d", from, to);
	return 0;
}

/* node2 stops; T_fail later the others may agree to remove it. */
static void
node2_silent_for_t_fail(void)
{
	C.down[2] = true;
	h_advance(&C, C.now + 7001);
}

START_TEST(test_members_store_the_roster_they_apply)
{
	/* Every member stores its roster at start; a removal stores the new
	 * one (label = the removal's epoch) without the removed node. */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(C.record[i].n_names, 3);
		ck_assert_uint_eq(C.record[i].label, 0);
	}
	node0_tells_node1_node2_failed(3);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	ck_assert_uint_eq(C.record[1].label, 3);
	ck_assert_uint_eq(C.record[1].n_names, 2);
	ck_assert(disk_lists(1, "node0") && disk_lists(1, "node1") && !disk_lists(1, "node2"));
}
END_TEST

START_TEST(test_voter_stores_its_agreement_before_the_vote_leaves)
{
	/* A voter that agrees to remove node2 at ballot 3 stores (node2, 3)
	 * before its SUSPECT_VOTE is sent; the roster that shows the removal
	 * (label 3) makes the entry redundant and drops it. */
	size_t stored;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	node2_silent_for_t_fail();
	suspect(1, 0, "node2", 1, 1, 3, 0);
	ck_assert_uint_eq(vote(0, 1, 1), 1);
	ck_assert_uint_eq(disk_removal(0, "node2"), 3);
	stored = records_before(0, fx_before_vote(0, 1));
	ck_assert_uint_eq(stored, 2);			/* the start's, then the agreement */
	suspect(1, 0, "node2", 1, 2, 5, 0);		/* a later ballot raises it */
	ck_assert_uint_eq(vote(0, 1, 2), 1);
	ck_assert_uint_eq(disk_removal(0, "node2"), 5);

	struct dm_msg m;
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node2", 1);
	m.epoch = 5;
	h_removal_digest(&m, announcer_digest(0, "node2"));
	inject(1, 0, &m);
	ck_assert_uint_eq(C.record[0].label, 5);
	ck_assert_uint_eq(C.record[0].n_removals, 0);
	ck_assert(!disk_lists(0, "node2"));
}
END_TEST

/* 1952/5's shape, the voter crashing before the removal reached it:
 * node1 agrees that node0 remove node2 (ballot 3), then crashes; its new
 * incarnation (from its disk or not) joins through node2, which never
 * learnt of its removal and, T_fail later, asks (serial 7, roster label
 * 0) to remove node1's old slot.  node1's answer: 1 yes, 0 no. */
static uint64_t
removed_node2_asks_restarted_node1(bool from_disk)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	node2_silent_for_t_fail();
	suspect(0, 1, "node2", 1, 1, 3, 0);
	ck_assert_uint_eq(vote(1, 0, 1), 1);
	C.down[1] = true;				/* crashed before the commit */
	h_join_from(&C, 1, 2, DM_FAILURE_MAJORITY, 2, from_disk);
	h_advance(&C, C.now + 7001);			/* T_fail after its start */
	C.cut[1] = true;				/* its JOINs stay queued */
	suspect(2, 1, "node1", 1, 7, 20, 0);
	return vote(1, 2, 7);
}

START_TEST(test_restart_refuses_the_node_it_agreed_to_remove)
{
	/* The old node1 would have refused; the new one must too. */
	ck_assert_uint_eq(removed_node2_asks_restarted_node1(true), 0);
	/* A prober whose roster shows the outcome (label 3 or above) is not
	 * the removed one, or was admitted again since: yes. */
	suspect(2, 1, "node1", 1, 8, 21, 3);
	ck_assert_uint_eq(vote(1, 2, 8), 1);
}
END_TEST

START_TEST(test_restart_without_record_helps_the_removed_node)
{
	/* The negative control of the test above: the same restart without
	 * its disk votes for the removed node -- the hole 1952/5 went
	 * through, so the test above would catch a record not read back. */
	ck_assert_uint_eq(removed_node2_asks_restarted_node1(false), 1);
}
END_TEST

/* Three members; node1 applies the roster without node2 (label 3). */
static void
node1_records_node2_removed(void)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	node0_tells_node1_node2_failed(3);
	ck_assert_uint_eq(C.record[1].label, 3);
}

/* The same, then node1 crashes. */
static void
node1_records_node2_removed_and_crashes(void)
{
	node1_records_node2_removed();
	C.down[1] = true;
}

/* node0 tells node1 to rejoin (REJOIN, a removal at epoch: node0's
 * roster label is that epoch, and a REJOIN from a roster behind node1's
 * would be ignored). */
static void
node0_tells_node1_to_rejoin(uint64_t epoch)
{
	struct dm_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_REJOIN;
	m.incarnation = 1;
	m.epoch = epoch;
	m.roster_epoch = epoch;
	inject(0, 1, &m);
}

START_TEST(test_restart_refuses_a_prober_its_last_roster_dropped)
{
	/* node1 applied the roster without node2 (label 3), then crashed.
	 * Restarted, it refuses node2's probes from the older roster, but
	 * still helps node0, whom that roster lists, even from an older
	 * label: a survivor whose peers all crashed may lag behind (2947/4). */
	node1_records_node2_removed_and_crashes();
	h_join_from(&C, 1, 2, DM_FAILURE_MAJORITY, 2, true);
	h_advance(&C, C.now + 7001);
	C.cut[1] = true;
	suspect(2, 1, "node1", 1, 7, 20, 0);
	ck_assert_uint_eq(vote(1, 2, 7), 0);
	h_join_from(&C, 1, 0, DM_FAILURE_MAJORITY, 3, true);	/* again, through node0 */
	ck_assert_uint_eq(C.record[1].label, 3);		/* a joiner stores nothing */
	h_advance(&C, C.now + 7001);
	suspect(0, 1, "node1", 2, 9, 22, 0);
	ck_assert_uint_eq(vote(1, 0, 9), 1);
}
END_TEST

/* node2 (incarnation 1), from a roster at label, asks node1 for what a
 * sponsor needs: an ack of its NODE_ADD (serial 5) and a permission for
 * the roster lock.  Returns how many of the two node1 gave. */
static int
node2_asks_node1_for_sponsor_help(uint64_t label)
{
	struct dm_msg m;
	int helped = 0;

	h_subject_msg(&m, DM_MSG_NODE_ADD, "node5", 9);
	m.serial = 5;
	m.seq = 1;		/* (a NODE_ADD's sender incarnation) */
	m.epoch = label;
	m.roster_epoch = label;
	inject(2, 1, &m);
	helped += queued(1, 2, DM_MSG_NODE_ADD_ACK) != NULL;
	memset(&m, 0, sizeof(m));
	m.kind = DM_RA_REQUEST;
	m.mode = DM_MODE_EXCLUSIVE;
	m.seq = 7;
	m.incarnation = 1;
	m.epoch = label;
	m.roster_epoch = label;
	m.lock_len = (uint8_t)strlen(".dmlock/roster");
	memcpy(m.lock, ".dmlock/roster", m.lock_len + 1u);
	inject(2, 1, &m);
	helped += queued(1, 2, DM_RA_REPLY) != NULL;
	return helped;
}

/* node1 applied the roster without node2 (label 3) and crashed; its next
 * process (from its disk or not) joins through node0, cut off.  node2,
 * still at label 0, asks it for a stale sponsor's help. */
static int
joiner_helps_node2(bool from_disk)
{
	node1_records_node2_removed_and_crashes();
	h_join_from(&C, 1, 0, DM_FAILURE_MAJORITY, 2, from_disk);
	C.cut[1] = true;				/* its JOINs stay queued */
	return node2_asks_node1_for_sponsor_help(0);
}

START_TEST(test_joiner_refuses_a_stale_sponsor)
{
	/* A removed node restarted from its stale record lists its peers
	 * with no incarnation and takes the joiners' answers for theirs: with
	 * their NODE_ADD acks and roster-lock permissions it rebuilt its old
	 * roster beside the cluster that removed it (dmlock-sim --restarts
	 * static --fault-mask 5: seed 16773/4, two holders; 18999/6, maekawa,
	 * token order).  A joiner whose record shows it removed helps it in
	 * nothing. */
	ck_assert_int_eq(joiner_helps_node2(true), 0);
	ck_assert(!h_ready(&C, 1));
}
END_TEST

START_TEST(test_joiner_without_record_helps_a_stale_sponsor)
{
	/* The negative control: without its disk, node1 answers both. */
	ck_assert_int_eq(joiner_helps_node2(false), 2);
}
END_TEST

START_TEST(test_node_told_to_rejoin_refuses_a_stale_sponsor)
{
	/* Hierarchical 107933/8 (crash and partition, groups of 5): n1 had
	 * removed n0 at label 22 while n0 was cut off; told to rejoin, n1
	 * waited its restart interval and acked a NODE_ADD from n0, still at
	 * label 10, which took the ack for that of the n1 it listed, admitted
	 * a node, rebuilt its old roster and granted beside the label-22
	 * cluster.  Waiting to rejoin, a node answers as a joiner does: no
	 * help to a sponsor its record dropped; a sponsor it lists gets it. */
	struct dm_msg m;

	node1_records_node2_removed();
	node0_tells_node1_to_rejoin(4);			/* node0 removed node1 */
	ck_assert(!h_ready(&C, 1));
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node5", 9);
	m.epoch = 4;					/* the epoch it heard of */
	m.roster_epoch = 0;				/* its roster, without the removal */
	m.serial = 5;
	inject(2, 1, &m);
	ck_assert_ptr_null(queued(1, 2, DM_MSG_NODE_ADD_ACK));
	m.roster_epoch = 4;				/* node0, which its record lists */
	m.serial = 6;
	inject(0, 1, &m);
	ck_assert_ptr_nonnull(queued(1, 0, DM_MSG_NODE_ADD_ACK));
	ck_assert_uint_eq(queued(1, 0, DM_MSG_NODE_ADD_ACK)->serial, 6);
}
END_TEST

/* node2 leaves while node0 is cut off: node1 acknowledges, node0 never
 * does, and node2 gives up on it after T_fail (the others would detect its
 * absence).  node2 restarts (from its disk or not) joining through
 * prober, which asks it, T_fail later, to remove node2's old entry
 * (serial 7, roster label 0): node2's answer, 1 yes, 0 no. */
static uint64_t
leaver_restarted_asked_by(int prober, bool from_disk)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.cut[0] = true;
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	h_pump(&C);					/* node1's LEAVE_ACK */
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 0);
	h_advance(&C, C.now + 7001);
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 1);	/* without node0's */
	h_join_from(&C, 2, prober, DM_FAILURE_MAJORITY, 2, from_disk);
	h_advance(&C, C.now + 7001);
	C.cut[2] = true;				/* its JOINs stay queued */
	suspect(prober, 2, "node2", 1, 7, 20, 0);
	return vote(2, prober, 7);
}

START_TEST(test_leaver_refuses_a_member_that_missed_its_leave)
{
	/* node0 never applied the roster node2 left behind: with the votes
	 * of restarted leavers that gave up on it, a node removed meanwhile
	 * could rebuild a majority of the roster they left (five members,
	 * two leaving while node0 is cut off, the other two removing it). */
	ck_assert_uint_eq(leaver_restarted_asked_by(0, true), 0);
}
END_TEST

START_TEST(test_leaver_without_record_helps_a_member_that_missed_its_leave)
{
	/* The negative control: without its disk, the hole. */
	ck_assert_uint_eq(leaver_restarted_asked_by(0, false), 1);
}
END_TEST

START_TEST(test_leaver_helps_a_member_that_acknowledged)
{
	ck_assert_uint_eq(leaver_restarted_asked_by(1, true), 1);
}
END_TEST

START_TEST(test_leaver_keeps_a_missed_member_above_its_epoch)
{
	/* Suzuki-Kasami 3289/4 (static restarts; crash, partition, leave and
	 * storms): n3 restarted from the static roster at label 0 while the
	 * cluster was at label 1, then left without n0's acknowledgement.
	 * Its entry for n0 at label 1 (above the labels it knew) let its next
	 * process help n0 -- removed meanwhile, still at label 1 -- remove
	 * n3's old entry, and n0 granted beside the cluster.  The entry goes
	 * above the leaver's epoch, which is at least every label it heard
	 * of: here node1 told node2 of epoch 5 while node2's roster stayed at
	 * label 0, and node0 asks from label 5. */
	struct dm_event leave = { .type = DM_EV_LEAVE };
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.incarnation = 1;
	m.epoch = 5;
	inject(1, 2, &m);
	ck_assert_uint_eq(C.e[2]->epoch, 5);
	ck_assert_uint_eq(C.e[2]->roster_epoch, 0);
	C.cut[0] = true;
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	h_pump(&C);
	h_advance(&C, C.now + 7001);
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 1);	/* without node0's ack */
	ck_assert_uint_eq(disk_removal(2, "node0"), 6);
	ck_assert_uint_eq(disk_removal(2, "node1"), 0);	/* it acknowledged */
	h_join_from(&C, 2, 0, DM_FAILURE_MAJORITY, 2, true);
	h_advance(&C, C.now + 7001);
	C.cut[2] = true;
	suspect(0, 2, "node2", 1, 7, 20, 5);
	ck_assert_uint_eq(vote(2, 0, 7), 0);
	suspect(0, 2, "node2", 1, 8, 21, 6);		/* a roster that shows the leave */
	ck_assert_uint_eq(vote(2, 0, 8), 1);
}
END_TEST

START_TEST(test_joiner_told_to_rejoin_keeps_its_record)
{
	/* Hierarchical 505822/6 (static restarts, groups of 2, a 6 s fault
	 * phase): n5, told to rejoin, then named removed again while it
	 * joined, stored its provisional roster -- itself alone, label 0 --
	 * as its record.  That read as "the last member left", and its next
	 * process formed the static roster again at label 0 and voted for a
	 * removed node's stale roster.  Only a member's roster replaces the
	 * record; a joiner keeps the one it has, without its own name. */
	struct dm_msg m;

	node1_records_node2_removed();
	node0_tells_node1_to_rejoin(4);			/* a member told to rejoin */
	ck_assert_uint_eq(C.record[1].label, 3);
	ck_assert(disk_lists(1, "node0") && !disk_lists(1, "node1"));
	C.cut[1] = true;				/* its JOINs stay queued */
	h_advance(&C, C.now + 10001);			/* the restart interval */
	ck_assert_int_eq(C.e[1]->membership, DM_MEMBER_JOINING);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node1", C.e[1]->incarnation);
	m.epoch = 6;
	h_removal_digest(&m, announcer_digest(1, "node1"));
	C.cut[1] = false;
	inject(0, 1, &m);				/* removed again while joining */
	ck_assert_int_eq(C.e[1]->membership, DM_MEMBER_RESTARTING);
	ck_assert_uint_eq(C.record[1].label, 3);
	ck_assert_uint_eq(C.record[1].n_names, 1);
	ck_assert(disk_lists(1, "node0"));
}
END_TEST

/* The same, about another node that restarted too (mode 1): the votes a
 * restarted process gives about others' old slots. */
static void
suspect_restarted(int from, int to, const char *subject, uint64_t inc, uint64_t serial,
    uint64_t ballot, uint64_t label)
{
	suspect_in_mode(from, to, subject, inc, serial, ballot, label, 1);
}

/* The self-vote promise (dm_member_record.c, dm_record_self_vote()).
 * node1, told to rejoin, votes that node0 (roster label 3) remove its old
 * incarnation, then that node2 does (label 3, then 4); it crashes, and its
 * next process (from its disk or not; with node2's SUSPECT_ABORT
 * delivered first or not) joins through node0.  T_fail later, node0,
 * still at label 4, asks it to vote on node2's old slot: the answer, 1
 * yes, 0 no. */
static uint64_t
self_voter_restarted_asked_by_node0(bool from_disk, bool aborted)
{
	struct dm_msg m;
	size_t stored;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	node0_tells_node1_to_rejoin(1);
	ck_assert_int_eq(C.e[1]->membership, DM_MEMBER_RESTARTING);
	C.cut[1] = true;				/* its JOINs stay queued */
	h_advance(&C, C.now + 7001);			/* T_fail since its restart */
	suspect(0, 1, "node1", 1, 7, 20, 3);
	ck_assert_uint_eq(vote(1, 0, 7), 1);
	ck_assert_str_eq(C.record[1].promise_prober, "node0");
	ck_assert_uint_eq(C.record[1].promise_label, 3);
	stored = records_before(1, fx_before_vote(1, 0));
	ck_assert_uint_eq(stored, 3);	/* the start's, the rejoin's, then the promise */
	suspect_restarted(2, 1, "node0", 1, 8, 21, 3);	/* another prober, same roster */
	ck_assert_uint_eq(vote(1, 2, 8), 0);
	suspect_restarted(0, 1, "node2", 1, 9, 22, 3);	/* node0 goes on from it */
	ck_assert_uint_eq(vote(1, 0, 9), 1);
	suspect(2, 1, "node1", 1, 10, 23, 3);		/* a self-vote is never refused */
	ck_assert_uint_eq(vote(1, 2, 10), 1);
	suspect(2, 1, "node1", 1, 11, 24, 4);		/* a newer roster */
	ck_assert_uint_eq(vote(1, 2, 11), 1);
	ck_assert_str_eq(C.record[1].promise_prober, "node2");
	ck_assert_uint_eq(C.record[1].promise_label, 4);
	if (aborted) {
		memset(&m, 0, sizeof(m));
		m.kind = DM_MSG_SUSPECT_ABORT;
		m.serial = 11;
		inject(2, 1, &m);
		/* Below node2's label, every prober stays refused; at it, none. */
		ck_assert_str_eq(C.record[1].promise_prober, "node1");
		ck_assert_uint_eq(C.record[1].promise_label, 3);
	}
	C.down[1] = true;
	h_join_from(&C, 1, 0, DM_FAILURE_MAJORITY, 3, from_disk);
	C.cut[1] = true;
	h_advance(&C, C.now + 7001);
	if (aborted && from_disk) {
		suspect_restarted(0, 1, "node2", 1, 12, 25, 3);
		ck_assert_uint_eq(vote(1, 0, 12), 0);
	}
	suspect_restarted(0, 1, "node2", 1, 13, 26, 4);
	return vote(1, 0, 13);
}

START_TEST(test_self_vote_promise_refuses_an_older_prober)
{
	/* Naimi-Trehel 4982/5 and hierarchical 19161/6 (storms mixed with
	 * other faults): restarted processes that had voted their old
	 * incarnations out of the cluster's roster voted for a node the
	 * cluster had removed meanwhile, still at that roster, and it granted
	 * beside the cluster.  node1's next process votes on no other slot
	 * for node0 while node0's roster is no newer than the one node1 let
	 * node2 change; one newer gets the vote. */
	ck_assert_uint_eq(self_voter_restarted_asked_by_node0(true, false), 0);
	suspect_restarted(0, 1, "node2", 1, 14, 27, 5);
	ck_assert_uint_eq(vote(1, 0, 14), 1);
}
END_TEST

START_TEST(test_self_vote_without_record_helps_an_older_prober)
{
	/* The negative control: without its disk, the vote goes through. */
	ck_assert_uint_eq(self_voter_restarted_asked_by_node0(false, false), 1);
}
END_TEST

START_TEST(test_self_vote_promise_ends_with_its_probers_abort)
{
	/* node2 gave its vote up (SUSPECT_ABORT): it will never commit it, and
	 * the promise no longer holds node0, at node2's label, off; a prober
	 * below it still is. */
	ck_assert_uint_eq(self_voter_restarted_asked_by_node0(true, true), 1);
}
END_TEST

START_TEST(test_self_vote_promise_ends_with_a_newer_roster)
{
	/* A roster applied as a member above the promised label covers it. */
	ck_assert_uint_eq(self_voter_restarted_asked_by_node0(true, false), 0);
	ck_assert_str_eq(C.record[1].promise_prober, "node2");
	C.cut[1] = false;
	h_pump(&C);
	h_await_ready(&C, 1, 400);			/* joined through node0 */
	node0_tells_node1_node2_failed(9);
	ck_assert_uint_eq(C.record[1].label, 9);
	ck_assert_str_eq(C.record[1].promise_prober, "");
}
END_TEST

/* Dead incarnations (dm_record_note_dead()).  Three acquainted members;
 * node1 applies the removal of node2's incarnation 1 (label 3), crashes,
 * and its next process (with that disk, or with it but no dead line)
 * joins through node2, cut off.  T_fail later, node2 -- its process
 * sender_incarnation -- asks it from a roster at label 20, higher than
 * the record's (a stale node's labels are its own ballots), to vote out
 * node1's old incarnation: the answer, 1 yes, 0 no. */
static uint64_t
restarted_asked_by_node2_at_label_20(uint64_t sender_incarnation, bool dead_on_disk)
{
	struct dm_msg m;

	h_init_acquainted(&C, 3);
	node0_tells_node1_node2_failed(3);
	ck_assert_uint_eq(C.record[1].label, 3);
	ck_assert_uint_eq(C.record[1].n_dead, 1);
	ck_assert_str_eq(C.record[1].dead[0].name, "node2");
	ck_assert_uint_eq(C.record[1].dead[0].incarnation, 1);
	C.down[1] = true;
	if (!dead_on_disk)
		C.record[1].n_dead = 0;
	h_join_from(&C, 1, 2, DM_FAILURE_MAJORITY, 2, true);
	C.cut[1] = true;
	h_advance(&C, C.now + 7001);
	h_subject_msg(&m, DM_MSG_SUSPECT, "node1", 1);
	m.serial = 7;
	m.arg = 30;
	m.epoch = 20;
	m.roster_epoch = 20;
	m.seq = sender_incarnation;	/* (a SUSPECT's sender incarnation) */
	inject(2, 1, &m);
	return vote(1, 2, 7);
}

START_TEST(test_restart_refuses_a_dead_incarnation_at_any_label)
{
	/* Naimi-Trehel 13365/6 and Raymond 2469/6 (storms): a node removed
	 * while cut off raised its roster label past the records of the
	 * restarted processes by its own ballots, and they voted their old
	 * incarnations out of its roster; it granted beside the cluster.  The
	 * process the record saw removed is refused whatever its label. */
	ck_assert_uint_eq(restarted_asked_by_node2_at_label_20(1, true), 0);
}
END_TEST

START_TEST(test_restart_without_dead_line_helps_a_higher_label)
{
	/* The negative control: the same disk without the dead line takes the
	 * higher label for a re-admission and votes. */
	ck_assert_uint_eq(restarted_asked_by_node2_at_label_20(1, false), 1);
}
END_TEST

START_TEST(test_restart_helps_a_new_incarnation_of_a_dead_node)
{
	/* A node removed and admitted again runs a new incarnation: the
	 * record's label escape still lets it through (raymond 12/5). */
	ck_assert_uint_eq(restarted_asked_by_node2_at_label_20(((uint64_t)1 << 48) + 1, true), 1);
}
END_TEST

/* node1 applies the removal of node2's incarnation 1 (label 3), crashes,
 * and its next process joins through node0, cut off.  node2's same
 * process, now at label 3 (the record's, so not dropped by it), asks it
 * for a NODE_ADD ack and a roster-lock permission.  Returns how many of
 * the two node1 gave. */
static int
joiner_helps_dead_node2_at_label_3(void)
{
	h_init_acquainted(&C, 3);
	node0_tells_node1_node2_failed(3);
	ck_assert_uint_eq(C.record[1].n_dead, 1);
	C.down[1] = true;
	h_join_from(&C, 1, 0, DM_FAILURE_MAJORITY, 2, true);
	C.cut[1] = true;				/* its JOINs stay queued */
	return node2_asks_node1_for_sponsor_help(3);
}

START_TEST(test_joiner_helps_a_sponsor_it_holds_dead)
{
	/* Hierarchical 513274/11 (partitions, groups of 3): a stale minority
	 * removed a live member's incarnation, and a node of it, noting that
	 * incarnation dead and then told to rejoin, refused its roster for
	 * ever.  A dead incarnation is refused a removal vote only; a joiner
	 * helps it as the label rule says (here: not dropped). */
	ck_assert_int_eq(joiner_helps_dead_node2_at_label_3(), 2);
	ck_assert_uint_eq(C.record[1].n_dead, 1);	/* (still held dead) */
}
END_TEST

START_TEST(test_record_refused_when_invalid)
{
	struct dm_engine_config cfg;
	struct dm_engine *e = NULL;
	const char *names[] = { "node0", "bad name" };
	struct dm_agreed_removal removals[] = { { "node2", 4 } };

	h_config(&cfg, "node0", NULL, 0);
	cfg.last_record = (struct dm_member_record){ .label = 3, .names = names, .n_names = 2 };
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
	cfg.last_record.n_names = 1;
	cfg.last_record.removals = removals;
	cfg.last_record.n_removals = 1;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), 0);
	e = dm_engine_free(e);
	cfg.last_record.n_removals = DM_NODES_MAX + 1;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -E2BIG);
	cfg.last_record.n_removals = 1;
	cfg.last_record.removals = NULL;
	ck_assert_int_eq(dm_engine_new(&cfg, &e), -EINVAL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("engine_record");
	TCase *tc = tcase_create("record");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_members_store_the_roster_they_apply);
	tcase_add_test(tc, test_voter_stores_its_agreement_before_the_vote_leaves);
	tcase_add_test(tc, test_restart_refuses_the_node_it_agreed_to_remove);
	tcase_add_test(tc, test_restart_without_record_helps_the_removed_node);
	tcase_add_test(tc, test_restart_refuses_a_prober_its_last_roster_dropped);
	tcase_add_test(tc, test_joiner_refuses_a_stale_sponsor);
	tcase_add_test(tc, test_node_told_to_rejoin_refuses_a_stale_sponsor);
	tcase_add_test(tc, test_joiner_without_record_helps_a_stale_sponsor);
	tcase_add_test(tc, test_leaver_refuses_a_member_that_missed_its_leave);
	tcase_add_test(tc, test_leaver_without_record_helps_a_member_that_missed_its_leave);
	tcase_add_test(tc, test_leaver_helps_a_member_that_acknowledged);
	tcase_add_test(tc, test_leaver_keeps_a_missed_member_above_its_epoch);
	tcase_add_test(tc, test_joiner_told_to_rejoin_keeps_its_record);
	tcase_add_test(tc, test_self_vote_promise_refuses_an_older_prober);
	tcase_add_test(tc, test_self_vote_without_record_helps_an_older_prober);
	tcase_add_test(tc, test_self_vote_promise_ends_with_its_probers_abort);
	tcase_add_test(tc, test_self_vote_promise_ends_with_a_newer_roster);
	tcase_add_test(tc, test_restart_refuses_a_dead_incarnation_at_any_label);
	tcase_add_test(tc, test_restart_without_dead_line_helps_a_higher_label);
	tcase_add_test(tc, test_restart_helps_a_new_incarnation_of_a_dead_node);
	tcase_add_test(tc, test_joiner_helps_a_sponsor_it_holds_dead);
	tcase_add_test(tc, test_record_refused_when_invalid);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
