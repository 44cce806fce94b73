/*
 * check_engine_membership.c: roster rules found with the simulator's crash
 * and pause faults (round 4), one test per root cause, each named after
 * the replay that found it (dmlock-sim --seed S --nodes N --fault-mask M):
 * removal of a restarted member's old incarnation by majority, votes of a
 * new incarnation for its old slot, NODE_ADDs that overtake a joiner's
 * roster snapshot, messages of dead incarnations and stale announcements,
 * and votes that could split the roster in two.
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"
#include "dm_engine_private.h"	/* dm_roster_find: the incarnation a joiner lists */
#include "dm_membership_private.h"	/* dm_join_retry */

/* Deliver node from's SUSPECT (removal vote serial, ballot epoch) about
 * subject's incarnation inc to node to. */
static void
suspect(int from, int to, const char *subject, uint64_t inc, uint64_t serial, uint64_t ballot)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_SUSPECT, subject, inc);
	m.serial = serial;
	m.arg = ballot;
	h_inject(&C, from, to, &m);
}

/* from sends to a NODE_ADD of name's incarnation inc (serial, epoch). */
static void
node_add(int from, int to, const char *name, uint64_t inc, uint64_t serial, uint64_t epoch)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_NODE_ADD, name, inc);
	m.serial = serial;
	m.epoch = epoch;
	h_inject(&C, from, to, &m);
}

/* Deliver a NODE_FAILED about subject's incarnation inc, at epoch, arg
 * (1: a sponsor's cancel of its own NODE_ADD), from node from to node to. */
static void
node_failed(int from, int to, const char *subject, uint64_t inc, uint64_t epoch,
    uint64_t arg)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_NODE_FAILED, subject, inc);
	m.epoch = epoch;
	m.arg = arg;
	h_inject(&C, from, to, &m);
}

/* Deliver a lease HEARTBEAT (serial, the sender's incarnation, epoch) from
 * node from to node to; how many acks it drew (a refusal is none).  The
 * sender's roster is taken to be that epoch's (its roster label). */
static size_t
heartbeat_acks(int from, int to, uint64_t serial, uint64_t incarnation, uint64_t epoch)
{
	struct dm_msg m;
	size_t acks = C.sent_kind[DM_MSG_HEARTBEAT_ACK];

	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.serial = serial;
	m.incarnation = incarnation;
	m.epoch = epoch;
	m.roster_epoch = epoch;
	h_inject(&C, from, to, &m);
	return C.sent_kind[DM_MSG_HEARTBEAT_ACK] - acks;
}

/* The SUSPECT_VOTE queued from -> to: present, and agreeing (arg 1) or
 * refusing (arg 0) as expected. */
static const struct dm_msg *
vote_queued(int from, int to, uint64_t agrees)
{
	const struct dm_msg *v = queued(from, to, DM_MSG_SUSPECT_VOTE);

	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->arg, agrees);
	return v;
}

/* node0 agrees to node1's vote (serial 1, ballot 3) to remove subject's
 * incarnation 1. */
static void
node0_agrees_to_node1s_vote(const char *subject)
{
	suspect(1, 0, subject, 1, 1, 3);
	ck_assert_uint_eq(queued(0, 1, DM_MSG_SUSPECT_VOTE)->arg, 1);
}

/* A cluster of n with the majority policy in which node has been silent
 * past T_fail (so members agree to remove it), and is up again. */
static void
init_with_silent_node(int n, int node)
{
	init_acquainted(n);
	C.down[node] = true;
	h_advance(&C, C.now + 8000);
	C.down[node] = false;
}

/* Three members that know each other's incarnations: node1 holds x
 * (handle 1) and node0 waits for it (handle 2). */
static void
node0_waits_for_node1s_x(void)
{
	init_acquainted(3);
	h_acquire(&C, 1, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);					/* node1 defers, node2 replies */
	ck_assert(!granted(2));
}

/* n members; node0 asks for lock (handle 1) and every other member has
 * taken its REQUEST; their REPLYs stay queued. */
static void
node0_request_delivered(int n, const char *lock)
{
	h_init(&C, n, DM_FAILURE_MAJORITY, 0);
	h_acquire(&C, 0, 1, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int j = 1; j < n; j++)
		deliver(0, j, DM_RA_REQUEST);
}

/* Three members; node3 (incarnation 1) joins through node0, which adds it
 * while node0's roster to node3 stays queued (node3 cut off).  Its JOIN. */
static struct h_packet
node0_adds_node3_roster_held(void)
{
	struct h_packet join;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	join = unqueue(3, 0, DM_MSG_JOIN);
	C.cut[3] = true;				/* node0's roster to node3 waits */
	inject(join.from, join.to, &join.msg);
	h_pump(&C);
	ck_assert_ptr_nonnull(queued(0, 3, DM_MSG_ROSTER_END));
	return join;
}

/* Three members; node3 (incarnation 5) asks node1 (its JOIN taken out of
 * the queue) and node0 takes node1's NODE_ADD of it (serial 7), left in m. */
static void
node0_takes_node1s_add_of_node3(struct dm_msg *m)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 1, DM_FAILURE_MAJORITY, 5);
	(void)unqueue(3, 1, DM_MSG_JOIN);
	h_subject_msg(m, DM_MSG_NODE_ADD, "node3", 5);
	m->serial = 7;
	inject(1, 0, m);
}

START_TEST(test_restart_removal_needs_majority)
{
	/* 8000988/8 (crash): node0 condemned node3's old incarnation (node3
	 * restarted and asks node0 to sponsor it) and T_fail later erased it
	 * on its own at an epoch nobody had promised; another member removing
	 * something at the same epoch repeated a fencing token.  Now it is a
	 * majority vote like any removal: with node1 and node2 unreachable
	 * (node0 and node3's new incarnation are 2 of 4) nothing is removed. */
	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	C.down[1] = C.down[2] = true;
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 2);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_FAILED], 0);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	ck_assert_uint_gt(C.sent_kind[DM_MSG_SUSPECT], 0);
	/* node1 is back: node0, node1 and node3's new incarnation (for its
	 * old slot) are a majority. */
	C.down[1] = false;
	for (int k = 0; k < 200 && h_roster(&C, 0) == 4; k++)
		h_advance(&C, C.now + 100);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert_uint_gt(C.sent_kind[DM_MSG_NODE_FAILED], 0);
}
END_TEST

START_TEST(test_two_members_restarted_peer_removed)
{
	/* Two members, node1 restarts: a majority is both slots, and node1's
	 * new incarnation votes for its old one, so the dead entry is removed
	 * automatically and node1 rejoins (before, only a lone removal or the
	 * operator could do it). */
	init_acquainted(2);
	h_join(&C, 1, 0, DM_FAILURE_MAJORITY, 2);
	h_pump(&C);
	await_ready(1, 300);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	h_acquire(&C, 1, 1, "t", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 1);
}
END_TEST

START_TEST(test_restarted_votes_only_to_its_sponsor)
{
	/* 2147/4, 2090/3 (mixed faults): a node cut off and removed meanwhile
	 * gathered votes from restarted nodes of its stale roster and formed a
	 * second cluster.  A joiner votes only to the sponsor it asks now, and
	 * about another node only if that one restarted too (mode 1). */
	struct dm_msg m;

	init_acquainted(3);
	h_join(&C, 2, 0, DM_FAILURE_MAJORITY, 2);	/* node2 asks node0 */
	(void)unqueue(2, 0, DM_MSG_JOIN);
	C.now += 8000;					/* more than T_fail since it began */
	/* About its old incarnation, from node1 (not its sponsor): no. */
	suspect(1, 2, "node2", 1, 1, 5);
	vote_queued(2, 1, 0);
	/* About a live node (mode 0), from its sponsor: no. */
	suspect(0, 2, "node1", 1, 2, 6);
	vote_queued(2, 0, 0);
	/* About its old incarnation, from its sponsor: yes. */
	suspect(0, 2, "node2", 1, 3, 7);
	ck_assert_uint_eq(vote_queued(2, 0, 1)->serial, 3);
	/* About another restarted node (mode 1), from its sponsor: yes. */
	h_subject_msg(&m, DM_MSG_SUSPECT, "node1", 1);
	m.mode = 1;
	m.serial = 4;
	m.arg = 8;
	inject(0, 2, &m);
	ck_assert_uint_eq(vote_queued(2, 0, 1)->serial, 4);
}
END_TEST

START_TEST(test_joiner_keeps_node_add_newer_than_snapshot)
{
	/* PERM-4, 2486/7 (crash): node1 sponsors node4 right after node0 sent
	 * node3 its roster; node1's NODE_ADD(node4) reaches the joining node3
	 * before node0's snapshot (which lacks node4).  node3 acknowledged
	 * node4, so it must keep it: dropping it left node3 answering node4
	 * with REJOIN (ignored) and node4 waiting for node3 for ever. */
	node0_adds_node3_roster_held();
	h_join(&C, 4, 1, DM_FAILURE_MAJORITY, 1);
	deliver(4, 1, DM_MSG_JOIN);			/* node1 asks for the roster lock */
	deliver(1, 3, DM_RA_REQUEST);			/* the joiner grants it */
	deliver(3, 1, DM_RA_REPLY);
	h_pump(&C);					/* node0, node2 answer */
	deliver(1, 3, DM_MSG_NODE_ADD);			/* overtakes node0's snapshot */
	C.cut[3] = false;
	h_pump(&C);
	for (int k = 0; k < 100 && !(h_ready(&C, 3) && h_ready(&C, 4)); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 3));
	ck_assert(h_ready(&C, 4));
	for (int i = 0; i < 5; i++)
		ck_assert_msg(h_roster(&C, i) == 5, "node%d lists %zu nodes", i, h_roster(&C, i));
	h_acquire(&C, 4, 1, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
}
END_TEST

START_TEST(test_cancel_only_by_the_adding_sponsor)
{
	/* 1715/4 (pause): a sponsor removed while it was sponsoring node3
	 * cancelled its NODE_ADD (NODE_FAILED arg 1) long after node3 had
	 * joined through another member; the late cancel erased the live
	 * node3.  Only the sponsor whose add we took may cancel it. */
	struct dm_msg m;

	node0_takes_node1s_add_of_node3(&m);		/* node1's add */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node3", 5);
	m.arg = 1;
	m.serial = 7;
	inject(2, 0, &m);				/* node2 cancels: not its add */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	m.serial = 6;
	inject(1, 0, &m);				/* node1, an older add */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	m.serial = 7;
	inject(1, 0, &m);				/* node1's own add */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
}
END_TEST

START_TEST(test_cancel_ignored_once_two_sponsors_added)
{
	/* rcv 2341/6 (leave): node2 sponsored node3, sent its NODE_ADD and
	 * left (cancel); node3 retried through node1, which finished the
	 * join.  At node0 node1's add came first, then node2's late add and
	 * its cancel: node0 erased the live node3 and listed it no more, for
	 * good (rosters differed; rcv stalled).  Once two sponsors' adds of
	 * one incarnation were taken, no single cancel erases the entry. */
	struct dm_msg m;

	node0_takes_node1s_add_of_node3(&m);		/* node1's add (finishes) */
	m.serial = 4;
	inject(2, 0, &m);				/* node2's, late */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node3", 5);
	m.arg = 1;
	m.serial = 4;
	inject(2, 0, &m);				/* node2 gave up */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
}
END_TEST

START_TEST(test_leaving_member_points_joiner_elsewhere)
{
	/* rcv 1140/5 (leave): node2 restarted through node0 just before
	 * node0 left for good; node0 refused its JOIN (EAGAIN) naming nobody,
	 * and node2, knowing no one else, asked node0 to the end.  A leaving
	 * member's refusal names a member that stays. */
	struct dm_event ev = { .type = DM_EV_LEAVE };
	struct h_packet p;
	const struct dm_msg *r;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	ck_assert_int_eq(h_step(&C, 0, &ev), 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 5);
	p = unqueue(3, 0, DM_MSG_JOIN);
	inject(3, 0, &p.msg);
	r = queued(0, 3, DM_MSG_JOIN_REFUSED);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_gt(r->node_len, 0);
	ck_assert(strcmp(r->node, "node1") == 0 || strcmp(r->node, "node2") == 0);
}
END_TEST

START_TEST(test_stale_epoch_announcement_ignored)
{
	/* 2398/7 (pause): a prober frozen right after its vote completed
	 * announced the removal on resuming, two epochs late; its voters had
	 * been released meanwhile (the prober itself was removed), the
	 * subject held a fresh lease, and the members erased it: two holders.
	 * A removal decided at an epoch older than one we know is ignored. */
	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	node_failed(1, 0, "node3", 0, 5, 0);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	node_failed(2, 0, "node1", 0, 3, 0);		/* decided before epoch 5 */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	node_failed(2, 0, "node1", 0, 6, 0);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
}
END_TEST

START_TEST(test_dead_incarnation_speaks_for_no_member)
{
	/* 1715/4: messages about a subject carry the subject's incarnation;
	 * the sender's is in seq.  A NODE_FAILED from another incarnation of
	 * node1 than the one listed (a dead one's, delayed) erases nothing. */
	struct dm_msg m;

	init_acquainted(3);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node2", 1);
	m.epoch = 1;
	m.seq = 99;					/* not node1's incarnation (1) */
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	m.seq = 1;
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
}
END_TEST

START_TEST(test_vote_on_replaced_incarnation_keeps_lease)
{
	/* 230/7 (pause): a SUSPECT about node2's old incarnation arrived after
	 * the voter had replaced it with the new one; the voter agreed and
	 * then refused the live node2's lease acks for ever (node2 held
	 * permission without a lease: deadlock). */
	init_acquainted(3);
	suspect(1, 0, "node2", 77, 1, 3);		/* an older incarnation */
	ck_assert_uint_eq(queued(0, 1, DM_MSG_SUSPECT_VOTE)->arg, 1);
	ck_assert_uint_eq(heartbeat_acks(2, 0, 5, 1, 0), 1);
}
END_TEST

START_TEST(test_no_votes_for_a_node_being_removed)
{
	/* 1810/3 (mixed): node2 agreed that node1 remove the partitioned
	 * node0, then, before node1's announcement reached it, that node0
	 * remove node1: both removals had a majority, two clusters.  A voter
	 * that stands by a vote to remove P refuses P's own votes (seq 0: not
	 * a ballot refusal, P must not retry at once). */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[0] = true;
	h_advance(&C, C.now + 8000);			/* node0 silent past T_fail */
	C.down[0] = false;
	suspect(1, 2, "node0", 0, 1, 1);
	ck_assert_uint_eq(queued(2, 1, DM_MSG_SUSPECT_VOTE)->arg, 1);
	suspect(0, 2, "node1", 0, 1, 2);
	ck_assert_uint_eq(vote_queued(2, 0, 0)->seq, 0);
	/* node1 gives its vote up: node0 may be heard again. */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_SUSPECT_ABORT;
	m.serial = 1;
	inject(1, 2, &m);
	h_subject_msg(&m, DM_MSG_SUSPECT, "node1", 0);
	m.serial = 2;
	m.arg = 3;
	C.now += 8000;
	inject(0, 2, &m);
	ck_assert_uint_eq(queued(2, 0, DM_MSG_SUSPECT_VOTE)->arg, 1);
}
END_TEST

START_TEST(test_erased_member_ack_not_counted)
{
	/* 1862/7 (pause): erasing a member cleared its lease-ack bit but not
	 * the round's count, so a node removed while frozen renewed its lease
	 * with an erased member's ack counted and granted with a stale fencing
	 * token.  Here node0's request round is acknowledged by node1 (then
	 * erased), node4, and not by node2, node3 (condemning it): 2 of 4, no
	 * lease, no grant yet. */
	struct h_packet p;

	node0_request_delivered(5, "q");
	p = unqueue(1, 0, DM_RA_REPLY);
	ck_assert_uint_eq(p.msg.arg, 1);
	inject(p.from, p.to, &p.msg);
	node_failed(2, 0, "node1", 0, 1, 0);	/* node1 erased */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	for (int j = 2; j <= 3; j++) {
		p = unqueue(j, 0, DM_RA_REPLY);
		p.msg.arg = 0;				/* no lease ack */
		inject(p.from, p.to, &p.msg);
	}
	deliver(4, 0, DM_RA_REPLY);
	ck_assert_msg(!granted(1), "granted on a lease acknowledged by 2 of 4");
}
END_TEST

START_TEST(test_sponsor_gives_up_joiner_the_members_removed)
{
	/* 1556/5 (mixed): the members removed the joiner a sponsor had
	 * NODE_ADDed (it is silent until its roster arrives); the sponsor
	 * finished anyway, so the joiner became a member at the sponsor only
	 * and granted beside the others with a repeated fencing token.  The
	 * sponsor gives the join up instead (the joiner retries). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 4);
	deliver(3, 0, DM_MSG_JOIN);
	for (int j = 1; j <= 2; j++) {
		deliver(0, j, DM_RA_REQUEST);		/* the roster lock */
		deliver(j, 0, DM_RA_REPLY);
	}
	deliver(0, 1, DM_MSG_NODE_ADD);			/* node1 adds node3 ... */
	node_failed(1, 0, "node3", 4, 1, 0);	/* ... and removes it */
	ck_assert_ptr_nonnull(queued(0, 3, DM_MSG_JOIN_REFUSED));
	h_pump(&C);					/* node2's ack arrives */
	ck_assert_uint_eq(C.sent_kind[DM_MSG_ROSTER_END], 0);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert(!h_ready(&C, 3));
}
END_TEST

START_TEST(test_new_epoch_grant_needs_fresh_lease_round)
{
	/* 3000124/3 (crashes): a member removed a dead entry at epoch 23,
	 * granted at once and crashed; its announcement was lost, and the
	 * survivor later removed another at epoch 20 and granted a lower
	 * token.  A grant at a new epoch now waits for a lease round sent at
	 * that epoch and acknowledged by a majority, who then know it. */
	struct h_packet p;
	struct dm_msg m;

	node0_request_delivered(3, "e");
	deliver(1, 0, DM_RA_REPLY);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;			/* node1 is at epoch 5 */
	m.epoch = 5;
	m.serial = 1;
	m.incarnation = 1;
	inject(1, 0, &m);
	p = unqueue(2, 0, DM_RA_REPLY);
	ck_assert_uint_eq(p.msg.arg, 1);
	inject(p.from, p.to, &p.msg);			/* permission, lease from epoch 0 */
	ck_assert(!granted(1));
	await_grant(1, 20);
	ck_assert_uint_eq(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 5);
}
END_TEST

START_TEST(test_joiner_points_joiners_at_its_sponsor)
{
	/* 798/7 (crashes): restarted nodes whose only candidate sponsor was
	 * another restarted (joining) node were refused for ever.  A joiner
	 * that refuses a JOIN names the sponsor it asks itself. */
	const struct dm_msg *r;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 2);	/* node3 asks node0 */
	(void)unqueue(3, 0, DM_MSG_JOIN);
	h_join(&C, 4, 3, DM_FAILURE_MAJORITY, 1);	/* node4 asks node3 */
	deliver(4, 3, DM_MSG_JOIN);
	r = queued(3, 4, DM_MSG_JOIN_REFUSED);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->node, "node0");
	/* node4 follows the hint and gets in. */
	h_pump(&C);
	for (int k = 0; k < 100 && !(h_ready(&C, 3) && h_ready(&C, 4)); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 4));
	ck_assert_uint_eq(h_roster(&C, 4), 5);
}
END_TEST

START_TEST(test_announcement_ends_joined_vote)
{
	/* Hierarchical 181/6 (pause): members agreed to node1's vote on the
	 * paused node0, then ignored node1's announcement (one was sponsoring
	 * node0's rejoin); their agreement stood for ever and the rejoined
	 * node0 never got a lease ack again.  The prober's announcement ends
	 * the vote whatever the member makes of it -- here it is ignored as
	 * being about another incarnation than the one listed. */
	init_with_silent_node(3, 2);
	node0_agrees_to_node1s_vote("node2");
	ck_assert_uint_eq(heartbeat_acks(2, 0, 5, 1, 0), 0);	/* the vote holds */
	node_failed(1, 0, "node2", 77, 3, 0);		/* not the listed incarnation */
	ck_assert_int_ge(h_index(&C, "node2"), 0);
	ck_assert_uint_eq(heartbeat_acks(2, 0, 6, 1, 0), 1);
}
END_TEST

START_TEST(test_removed_prober_vote_still_stands)
{
	/* 123285/6 (partition): node3 agreed to node1's vote on the cut-off
	 * node4; node1 committed it, but its NODE_FAILED to node3 was held by
	 * the partition, and node3 later removed node1 itself.  Erasing the
	 * prober released node3's agreement, node3 acknowledged node4's lease
	 * again, and node4 (removed, unaware) granted beside the members with
	 * a repeated fencing token.  A prober that leaves our roster may have
	 * committed before it went: its subject's listed incarnation gets no
	 * lease ack from us any more. */
	struct dm_msg m;

	init_with_silent_node(5, 4);
	node0_agrees_to_node1s_vote("node4");
	node_failed(2, 0, "node1", 1, 4, 0);		/* the prober goes */
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	ck_assert_msg(heartbeat_acks(4, 0, 5, 1, 4) == 0,
	    "lease ack to a node whose removal may have been committed");
	/* A new incarnation in that slot is another node: acknowledged. */
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node4", 2);
	m.serial = 7;
	m.seq = 1;					/* the sponsor's incarnation */
	m.epoch = 4;
	inject(2, 0, &m);
	ck_assert_uint_eq(heartbeat_acks(4, 0, 6, 2, 4), 1);
}
END_TEST

START_TEST(test_late_announcement_of_joined_vote_stands)
{
	/* 1822/7 (partition): node0 removed node4 at epoch 5 with the votes
	 * of others; its announcement reached them only after they had moved
	 * to epoch 8 (another removal), so they ignored it as stale -- and
	 * released their agreement with it.  node4, removed but unaware,
	 * renewed its lease with their acks and granted beside node0.  A
	 * stale announcement of a vote we agreed to leaves the agreement
	 * standing, and we remove the subject ourselves at a current epoch. */
	struct dm_msg m;

	init_with_silent_node(5, 4);
	node0_agrees_to_node1s_vote("node4");
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node3", 1);	/* a later removal */
	m.seq = 1;
	m.epoch = 8;
	inject(2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node4", 1);	/* node1's, late */
	m.seq = 1;
	m.epoch = 3;
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);		/* (stale: not applied) */
	ck_assert_msg(heartbeat_acks(4, 0, 5, 1, 8) == 0,
	    "lease ack to a node whose removal we agreed to and saw announced");
	ck_assert_ptr_nonnull(queued(0, 2, DM_MSG_SUSPECT));	/* ours, about node4 */
	ck_assert_uint_gt(queued(0, 2, DM_MSG_SUSPECT)->arg, 8);
}
END_TEST

START_TEST(test_orphaned_vote_removes_live_subject)
{
	/* 275/4 (pause): node1 and node3 agreed to node0's vote on the
	 * paused node2; node0 froze before it could commit and was removed.
	 * Standing by the orphaned agreement (see the test above) they
	 * refused node2's lease acks for ever, and the live node2, two
	 * refusals in a roster of three, never granted again.  The voters
	 * remove such a subject themselves by a majority vote: it rejoins. */
	struct dm_msg m;

	init_with_silent_node(4, 3);
	suspect(1, 0, "node3", 1, 1, 3);
	suspect(1, 2, "node3", 1, 1, 3);
	ck_assert_uint_eq(queued(0, 1, DM_MSG_SUSPECT_VOTE)->arg, 1);
	ck_assert_uint_eq(queued(2, 1, DM_MSG_SUSPECT_VOTE)->arg, 1);
	C.down[1] = true;				/* the prober is gone */
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node1", 1);
	m.seq = 1;
	m.epoch = 4;
	inject(2, 0, &m);
	inject(0, 2, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert_uint_eq(h_roster(&C, 2), 3);
	h_pump(&C);
	h_advance(&C, C.now + 1000);
	ck_assert_uint_eq(h_roster(&C, 0), 2);		/* node3 removed by 2 of 3 */
	ck_assert_uint_eq(h_roster(&C, 2), 2);
	ck_assert(!h_ready(&C, 3));			/* and rejoining */
}
END_TEST

START_TEST(test_lost_vote_lets_another_removal_run)
{
	/* suzuki-kasami --election invitation 798/15 (partition): n12 had
	 * agreed to a vote on n2 whose prober then left its roster, so it
	 * kept asking to remove n2, which every other member heard and
	 * refused; that vote never ended, and "one removal at a time" kept
	 * n12 from removing n7 and n10, old entries only it still listed.
	 * Here node4 is orphaned at node0 (node1 probed it, then was
	 * removed) and alive to the others; node5 is down and removed by
	 * everyone but node0.  node0's request needs node5 gone: the vote on
	 * node4, refused by the others, must give way to the vote on node5. */
	init_acquainted(6);
	C.down[4] = true;
	C.down[5] = true;
	h_advance(&C, C.now + 8000);			/* both silent past T_fail */
	C.down[4] = false;
	node0_agrees_to_node1s_vote("node4");
	C.down[1] = true;				/* the prober is gone */
	/* node4 takes a lock: everyone hears it, and its lease heartbeats
	 * keep it heard. */
	h_acquire(&C, 4, 2, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	for (int i = 0; i < 6; i++) {
		if (i == 1 || i == 5)
			continue;
		node_failed(i == 2 ? 3 : 2, i, "node1", 1, 4, 0);
		if (i != 0)				/* node0 never hears of it */
			node_failed(2, i, "node5", 1, 5, 0);
	}
	ck_assert_uint_eq(h_roster(&C, 0), 5);		/* node0 still lists node5 */
	ck_assert_uint_eq(h_roster(&C, 2), 4);
	h_pump(&C);
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 20000);
	ck_assert(granted(2));
	ck_assert_ptr_null(h_find(&C, DM_FX_LOST, 2));	/* node4 stayed a member */
	ck_assert_uint_eq(h_roster(&C, 0), 4);		/* node5 removed by node0 too */
	ck_assert(granted(1));
}
END_TEST

START_TEST(test_vote_not_asked_again_releases_voters)
{
	/* Seed 703833/10 (partition), the million seeds: n0's vote on n4 had
	 * five agreements when a voter refused with a higher ballot; n0 would
	 * ask again above it, but its link to n4 had come up meanwhile (no
	 * longer silent), so it did not, and the vote ended without a word.
	 * The members that had agreed never acknowledged n4's lease again.
	 * Here node0 votes on the silent node3; node1 agrees, node2's answer
	 * is held back; node3's link comes up at node0; node2 refuses above
	 * the ballot.  node0 must release node1, which then acks node3. */
	const struct dm_msg *held;
	struct dm_msg m;
	uint64_t serial, ballot;

	init_acquainted(4);
	C.down[3] = true;
	h_advance(&C, C.now + 8000);			/* node3 silent past T_fail */
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);					/* node1 and node2 reply */
	C.cut[2] = true;				/* node2's traffic held back */
	h_advance(&C, C.now + 8000);			/* node0 probes node3, then votes */
	held = queued(0, 2, DM_MSG_SUSPECT);
	ck_assert_ptr_nonnull(held);
	ck_assert_str_eq(held->node, "node3");
	serial = held->serial;
	ballot = held->arg;
	ck_assert_uint_eq(h_roster(&C, 0), 4);		/* node0 + node1: no majority yet */

	ck_assert_uint_eq(heartbeat_acks(3, 1, 5, 1, 0), 0);	/* node1 stands by the vote */

	struct dm_event up = { .type = DM_EV_LINK_UP, .u.link.peer = C.names[3] };
	ck_assert_int_eq(h_step(&C, 0, &up), 0);	/* node3 no longer silent at node0 */
	memset(&m, 0, sizeof(m));			/* node2 refuses above the ballot */
	m.kind = DM_MSG_SUSPECT_VOTE;
	m.serial = serial;
	m.arg = 0;
	m.seq = ballot;
	m.incarnation = 1;
	inject(2, 0, &m);
	held = queued(0, 1, DM_MSG_SUSPECT_ABORT);
	ck_assert_ptr_nonnull(held);
	ck_assert_uint_eq(held->serial, serial);
	ck_assert_ptr_null(queued(0, 1, DM_MSG_NODE_FAILED));
	C.cut[2] = false;
	h_pump(&C);
	ck_assert_uint_gt(heartbeat_acks(3, 1, 6, 1, 0), 0);
	ck_assert_uint_eq(h_roster(&C, 1), 4);		/* node3 was never removed */
}
END_TEST

START_TEST(test_member_added_again_is_asked_again)
{
	/* 416189/14 (crashes): n7 listed n4's dead incarnation 2, removed it
	 * and took its reply for lock/b as given; n4's live incarnation 3 had
	 * received that REQUEST and deferred it behind its own; the NODE_ADD
	 * of incarnation 3 reached n7 next, and n7 entered while n4 held
	 * lock/b.  A member added under a name we removed an incarnation of
	 * may be deferring a request of ours: every request out is asked
	 * again, of it too. */
	struct dm_msg m;

	init_acquainted(4);
	C.down[3] = true;
	node_failed(2, 0, "node3", 1, 5, 0);		/* node3's incarnation 1 removed */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_ptr_nonnull(queued(0, 1, DM_RA_REQUEST));
	ck_assert_ptr_null(queued(0, 3, DM_RA_REQUEST));
	C.down[3] = false;
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node3", 2);	/* its next incarnation */
	m.serial = 7;
	m.seq = 1;					/* the sponsor's incarnation */
	m.epoch = 5;
	inject(2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	ck_assert_msg(queued(0, 3, DM_RA_REQUEST) != NULL,
	    "the request was not asked of the member added again");
	ck_assert(!granted(1));
}
END_TEST

START_TEST(test_rejoin_at_join_epoch_for_this_incarnation)
{
	/* 112187/12 (partition): n1 finished n8's join at epoch 34 and then
	 * applied n7's removal of that very incarnation, decided at epoch 34
	 * too (n8 had been listed, and fell silent, while it was joining).
	 * n8 ignored n1's REJOINs (epoch not above its join epoch) and went on
	 * as a member: it held lock/a while n1, which no longer counted it,
	 * granted too.  A REJOIN at the join epoch that answers this very
	 * incarnation (serial) is honoured; one naming no incarnation, or
	 * another (a previous membership), is still stale. */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_REJOIN;
	m.incarnation = 1;				/* node1's own */
	m.epoch = 0;					/* node0 joined at epoch 0 */
	m.serial = 0;
	inject(1, 0, &m);
	ck_assert(h_ready(&C, 0));
	m.serial = 99;					/* another incarnation of node0 */
	inject(1, 0, &m);
	ck_assert(h_ready(&C, 0));
	m.serial = 1;					/* node0's current one */
	inject(1, 0, &m);
	ck_assert_msg(!h_ready(&C, 0), "REJOIN for this incarnation ignored");
	/* The same for an announcement of our removal naming us. */
	h_fini(&C);
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node0", 99);
	m.seq = 1;
	m.epoch = 0;
	inject(1, 0, &m);
	ck_assert(h_ready(&C, 0));
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node0", 1);
	m.seq = 1;
	m.epoch = 0;
	inject(1, 0, &m);
	ck_assert_msg(!h_ready(&C, 0), "removal of this incarnation at the join epoch ignored");
}
END_TEST

START_TEST(test_removed_incarnation_not_re_added)
{
	/* 4927/16 (partition): n7's majority removed n15 at epoch 47; n13,
	 * acting on a stale JOIN of n15's same incarnation, then added it
	 * again at epoch 47.  Members that had taken the removal re-added a
	 * fresh entry (none of the voters' agreements on it), acknowledged
	 * n15's lease, and n15, never told, held lock/c while n1, which had
	 * taken the erase as n15's REPLY, granted.  An incarnation removed by
	 * a majority is dead: its NODE_ADD is acknowledged, not applied. */
	struct dm_msg m;
	const struct dm_msg *ack;

	init_acquainted(4);
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node3", 1);
	m.seq = 1;
	m.epoch = 2;
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node3", 1);	/* the same incarnation */
	m.seq = 1;
	m.serial = 7;
	m.epoch = 2;
	inject(2, 0, &m);
	ck_assert_msg(h_roster(&C, 0) == 3, "a removed incarnation added again");
	ack = queued(0, 2, DM_MSG_NODE_ADD_ACK);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_eq(ack->serial, 7);
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node3", 5);	/* a new incarnation */
	m.seq = 1;
	m.serial = 8;
	m.epoch = 2;
	inject(2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
}
END_TEST

START_TEST(test_runtime_join_through_a_sponsor)
{
	/* DM_EV_JOIN (dmlock join): node2 ran alone and granted a token;
	 * refused while it holds a lock, then joins node0+node1 through node0,
	 * serves, and its fencing tokens keep growing. */
	struct dm_engine_config cfg;
	struct dm_event ev = { .type = DM_EV_JOIN,
	    .u.join = { .sponsor = "node0", .address = "127.0.0.1:2" } };
	const struct h_fx *g;
	uint64_t alone;

	h_init(&C, 2, DM_FAILURE_MAJORITY, 0);
	C.n = 3;
	snprintf(C.names[2], sizeof(C.names[2]), "node2");
	h_config(&cfg, "node2", NULL, 0);
	ck_assert_int_eq(dm_engine_new(&cfg, &C.e[2]), 0);
	ck_assert_int_eq(h_step(&C, 2, &(struct dm_event){ .type = DM_EV_TICK }), 0);
	h_acquire(&C, 2, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	alone = h_find(&C, DM_FX_GRANT, 1)->token;
	ck_assert_int_eq(h_step(&C, 2, &ev), -EBUSY);		/* a lock is held here */
	ck_assert_int_eq(h_release(&C, 2, 1), 0);
	ck_assert_int_eq(h_step(&C, 0, &ev), -EINVAL);		/* itself */
	ev.u.join.sponsor = "node1";
	ck_assert_int_eq(h_step(&C, 0, &ev), -EISCONN);	/* already in a cluster */
	ev.u.join.address = "";
	ck_assert_int_eq(h_step(&C, 2, &ev), -EINVAL);
	ev.u.join.sponsor = "node0";
	ev.u.join.address = "127.0.0.1:2";
	ck_assert_int_eq(h_step(&C, 2, &ev), 0);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	ck_assert(h_ready(&C, 2));
	ck_assert_int_eq(h_step(&C, 2, &ev), -EISCONN);	/* joined now */
	h_acquire(&C, 2, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 100);
	g = h_find(&C, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_gt(g->token, alone);
	ck_assert_int_eq(h_release(&C, 2, 2), 0);
	h_pump(&C);
	h_acquire(&C, 1, 3, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 100);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_GRANT, 3));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 3)->token, g->token);
}
END_TEST

START_TEST(test_stale_epoch_node_add_ignored)
{
	/* RCV-E2 (rcv 190/7, pause): a removed sponsor's NODE_ADD, delayed
	 * past later removals, added a node only some members then listed.
	 * A NODE_ADD older than an epoch we know is neither applied nor
	 * acknowledged (the answer, serial 0, carries our epoch); the
	 * sponsor's retry at the current epoch is. */
	struct dm_msg m;
	const struct dm_msg *a;

	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 4, 1, DM_FAILURE_MAJORITY, 3);
	(void)unqueue(4, 1, DM_MSG_JOIN);
	node_failed(2, 0, "node3", 0, 5, 0);	/* node0 is at epoch 5 */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node4", 3);
	m.serial = 9;
	m.epoch = 4;
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	a = queued(0, 1, DM_MSG_NODE_ADD_ACK);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->serial, 0);
	ck_assert_uint_eq(a->epoch, 5);
	m.epoch = 5;
	inject(1, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 4);
	ck_assert_uint_eq(queued(0, 1, DM_MSG_NODE_ADD_ACK)->serial, 9);
}
END_TEST

START_TEST(test_replaced_entry_is_asked_again)
{
	/* 9629/14 (crash): node0 listed an old incarnation of node1 while
	 * node1's new incarnation held lock x and deferred node0's request.
	 * A late NODE_ADD replaced the entry; the erase took node1's reply as
	 * given and node0 entered beside the holder.  A replacement keeps
	 * the name a member: node0 asks again and waits for its answer. */
	struct dm_msg m;
	size_t requests;

	node0_waits_for_node1s_x();
	requests = C.sent_kind[DM_RA_REQUEST];
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node1", 77);	/* node1's "new" incarnation */
	m.serial = 4;
	inject(2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert(!granted(2));
	ck_assert_ptr_nonnull(queued(0, 1, DM_RA_REQUEST));
	ck_assert_uint_eq(C.sent_kind[DM_RA_REQUEST], requests + 2);
}
END_TEST

START_TEST(test_cancelled_replacement_restores_entry)
{
	/* 618871/8 (pause): a sponsor's NODE_ADD of node1's dead incarnation
	 * and its cancel, both delayed, reached node0 after node1's live
	 * incarnation had joined and deferred node0's request.  The add
	 * replaced the live entry (asking again: fine); the cancel erased it,
	 * node0 took the live node1's reply as given, and both held lock x.
	 * A cancel of an add that replaced an entry puts the replaced entry
	 * back (asking again) instead of removing the name. */
	struct dm_msg m;

	node0_waits_for_node1s_x();
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node1", 77);	/* a stale incarnation */
	m.serial = 4;
	inject(2, 0, &m);
	ck_assert(!granted(2));
	h_subject_msg(&m, DM_MSG_NODE_FAILED, "node1", 77);	/* its sponsor's cancel */
	m.serial = 4;
	m.arg = 1;
	inject(2, 0, &m);
	ck_assert_uint_eq(h_roster(&C, 0), 3);		/* node1 is still a member */
	ck_assert(!granted(2));
	h_pump(&C);
	ck_assert(!granted(2));				/* node1 still holds x */
	ck_assert_int_eq(h_release(&C, 1, 1), 0);
	h_pump(&C);
	ck_assert(granted(2));				/* node1's own answer */
}
END_TEST

/* node3 restarted and joining through node0 (its JOINs held back), told
 * by node1, an active member, of its epoch and roster label. */
static void
restarted_node3_told_by_a_member(uint64_t epoch, uint64_t label)
{
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 4);
	C.cut[3] = true;				/* its JOINs stay queued */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_JOIN_REFUSED;
	m.arg = 11;
	m.epoch = epoch;
	m.roster_epoch = label;
	m.flags = DM_MSG_F_MEMBER;
	inject(1, 3, &m);				/* a live member */
}

/* node0 probes node3 about node3's old incarnation, its roster at that
 * epoch and label, at that ballot: the answer waits in node3's queue to
 * node0 (vote_queued()). */
static void
probe_node3(uint64_t epoch, uint64_t label, uint64_t ballot, uint64_t serial)
{
	struct dm_msg m;

	h_subject_msg(&m, DM_MSG_SUSPECT, "node3", 2);	/* our old incarnation */
	m.epoch = epoch;
	m.roster_epoch = label;
	m.arg = ballot;
	m.serial = serial;
	inject(0, 3, &m);
}

START_TEST(test_restarted_node_refuses_older_roster)
{
	/* 1533/6 (every fault kind): n5, removed at epoch 13 while cut off,
	 * never learned it; every member it listed crashed or left, and
	 * their new incarnations, joining through it, voted that it remove
	 * their old ones: n5 rebuilt a second cluster beside n4's, which
	 * kept refusing those joiners at epoch 13.  A restarted node told by
	 * an active member of epoch 9 votes for no prober whose roster is
	 * older, while that member was heard within T_fail; later it does
	 * (a lagging survivor must still be able to remove the dead). */
	restarted_node3_told_by_a_member(9, 0);
	probe_node3(5, 0, 20, 7);			/* an older roster */
	ck_assert_uint_eq(vote_queued(3, 0, 0)->serial, 7);
	probe_node3(9, 0, 21, 8);			/* not older: yes */
	ck_assert_uint_eq(vote_queued(3, 0, 1)->serial, 8);
	h_advance(&C, C.now + 7001);			/* that member silent for T_fail */
	probe_node3(5, 0, 22, 9);
	ck_assert_uint_eq(vote_queued(3, 0, 1)->serial, 9);
}
END_TEST

START_TEST(test_restarted_node_refuses_older_roster_label)
{
	/* Raymond 101734/7 (crash and partition): n4, removed at label 13
	 * while cut off, learned epoch 13 from a member's messages (tokens
	 * never go back, so any message spreads the epoch), and its probes
	 * passed the epoch rule above; with the votes of its label-2
	 * roster's restarted members it removed their old incarnations and
	 * granted beside n5's label-13 cluster.  The same rule by roster
	 * label: a prober whose roster label is below the one a live member
	 * carried gets no vote while that member was heard within T_fail. */
	restarted_node3_told_by_a_member(13, 13);
	probe_node3(13, 2, 20, 7);			/* the epoch, not the label */
	ck_assert_uint_eq(vote_queued(3, 0, 0)->serial, 7);
	probe_node3(13, 13, 21, 8);			/* not older: yes */
	ck_assert_uint_eq(vote_queued(3, 0, 1)->serial, 8);
	h_advance(&C, C.now + 7001);			/* that member silent for T_fail */
	probe_node3(13, 2, 22, 9);
	ck_assert_uint_eq(vote_queued(3, 0, 1)->serial, 9);
}
END_TEST

START_TEST(test_join_epoch_not_taken_over)
{
	/* 1533/6: the zombie took the joiners' epoch (hearsay of another
	 * roster) as its own, and its probes no longer looked older than
	 * what the joiners had heard.  A member keeps its epoch on a JOIN. */
	struct dm_msg m;
	struct dm_engine_stats st;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_subject_msg(&m, DM_MSG_JOIN, "node1", 3);	/* node1 restarted */
	m.epoch = 9;
	inject(1, 0, &m);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert_uint_eq(st.epoch, 0);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT_ACK;			/* a member's epoch is news */
	m.epoch = 9;
	m.incarnation = 1;
	inject(2, 0, &m);
	dm_engine_get_stats(C.e[0], &st);
	ck_assert_uint_eq(st.epoch, 9);
}
END_TEST

START_TEST(test_removal_by_removed_prober_obeyed)
{
	/* 643989/6 (pauses): n5 removed n4 at epoch 8 with a majority; n4,
	 * unaware, removed n5 at epoch 11 before n5's announcement reached
	 * it, and then ignored it as coming from a non-member.  The voters,
	 * bound by their agreement, never acknowledged n4's lease again: n4
	 * never entered and deferred everyone for ever.  A removal naming
	 * exactly our incarnation, after our join, is obeyed whoever sends
	 * it; a sponsor's cancel (arg 1) or one without an incarnation from
	 * a non-member is not. */
	init_acquainted(4);
	node_failed(1, 0, "node3", 1, 11, 0);		/* node0 removes node3 */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	node_failed(3, 0, "node0", 1, 8, 1);		/* a cancel: not us */
	ck_assert(h_ready(&C, 0));
	node_failed(3, 0, "node0", 0, 8, 0);		/* no incarnation */
	ck_assert(h_ready(&C, 0));
	node_failed(3, 0, "node0", 1, 8, 0);		/* node3's removal of us */
	ck_assert(!h_ready(&C, 0));
}
END_TEST

START_TEST(test_listed_joiner_join_does_not_stop_removal)
{
	/* Hierarchical bully 29/6 (partition): the members listed n0 (the add
	 * had reached them, the roster never reached n0), n0 kept sending
	 * JOINs under that very incarnation, and each one counted as a sign
	 * of life that aborted the vote to remove it; n0 was the roster
	 * lock's group coordinator and never served, so no join or removal
	 * could ever finish.  A JOIN says the node does not act as a member:
	 * the vote goes on. */
	struct dm_msg m;

	init_acquainted(3);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);					/* node1 replies */
	C.cut[1] = true;				/* node0's vote stays open */
	h_advance(&C, C.now + 8000);			/* request and probe timeouts */
	ck_assert_ptr_nonnull(queued(0, 1, DM_MSG_SUSPECT));
	ck_assert_ptr_null(queued(0, 1, DM_MSG_SUSPECT_ABORT));
	C.down[2] = false;
	h_subject_msg(&m, DM_MSG_JOIN, "node2", 1);	/* the listed incarnation */
	inject(2, 0, &m);
	ck_assert_ptr_null(queued(0, 1, DM_MSG_SUSPECT_ABORT));
	memset(&m, 0, sizeof(m));			/* a member's message is life */
	m.kind = DM_MSG_HEARTBEAT_ACK;
	m.incarnation = 1;
	inject(2, 0, &m);
	ck_assert_ptr_nonnull(queued(0, 1, DM_MSG_SUSPECT_ABORT));
}
END_TEST

START_TEST(test_other_incarnation_books_nothing)
{
	/* 9629/14: requests of an incarnation we do not list were deferred
	 * under the listed entry, and a replacement forgot them.  Only the
	 * listed incarnation speaks for the entry on a user lock: node0,
	 * holding x, neither defers nor answers a REQUEST from node1's
	 * incarnation 77, and after the release owes node1 nothing. */
	struct dm_msg m;
	size_t replies;

	init_acquainted(3);
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	memset(&m, 0, sizeof(m));
	m.kind = DM_RA_REQUEST;
	m.lock_len = 1;
	memcpy(m.lock, "x", 2);
	m.seq = 1000;					/* above every request so far */
	m.incarnation = 77;
	inject(1, 0, &m);
	replies = C.sent_kind[DM_RA_REPLY];
	ck_assert_int_eq(h_release(&C, 0, 1), 0);
	ck_assert_ptr_null(queued(0, 1, DM_RA_REPLY));
	ck_assert_uint_eq(C.sent_kind[DM_RA_REPLY], replies);
	m.incarnation = 1;				/* the listed one is deferred as usual */
	m.seq = 2000;
	h_acquire(&C, 0, 3, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(3));
	inject(1, 0, &m);
	ck_assert_ptr_null(queued(0, 1, DM_RA_REPLY));
	ck_assert_int_eq(h_release(&C, 0, 3), 0);
	ck_assert_ptr_nonnull(queued(0, 1, DM_RA_REPLY));
}
END_TEST

/* Has node i a JOIN queued (held back) under an incarnation other than inc? */
static bool
joins_as_other_than(int i, uint64_t inc)
{
	for (size_t k = C.qhead; k < C.qtail; k++) {
		const struct h_packet *q = &C.q[k % H_QUEUE];

		if (q->from == i && q->msg.kind == DM_MSG_JOIN && q->msg.incarnation != inc)
			return true;
	}
	return false;
}

START_TEST(test_joiner_removed_incarnation_starts_again)
{
	/* 1115/12 (pause): the members removed joiner n9's incarnation (a
	 * NODE_ADD had made it a member there) while it was frozen; on
	 * resuming it kept joining under it, a sponsor added it again, and
	 * one member took that add before the removal: n9 became READY at
	 * the removal's epoch, listed by all but that member, ignored its
	 * REJOIN (not newer than its join epoch), and its request stalled
	 * every other for ever.  A joiner told that its very incarnation was
	 * removed starts again under a new one; other incarnations and a
	 * sponsor's cancel (arg 1) change nothing. */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 4);
	C.cut[3] = true;				/* its JOINs stay queued */
	ck_assert_ptr_nonnull(queued(3, 0, DM_MSG_JOIN));
	node_failed(0, 3, "node3", 3, 2, 0);	/* another incarnation */
	node_failed(0, 3, "node3", 4, 2, 1);	/* a cancel */
	h_advance(&C, C.now + 30000);			/* join retries */
	ck_assert(!joins_as_other_than(3, 4));
	node_failed(0, 3, "node3", 4, 2, 0);	/* removed */
	h_advance(&C, C.now + 30000);			/* restart interval */
	ck_assert(joins_as_other_than(3, 4));
	ck_assert(!h_ready(&C, 3));
}
END_TEST

START_TEST(test_removed_at_join_epoch_starts_again)
{
	/* 6296/9 and 8332/13 (partition): the same, the removal reaching the
	 * joiner once it had its roster, at the very epoch that roster had:
	 * honoured (the join-epoch rule of on_node_failed's self case). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 4);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	ck_assert(h_ready(&C, 3));
	ck_assert_uint_eq(h_roster(&C, 3), 4);
	C.cut[3] = true;
	node_failed(1, 3, "node3", 4, 0, 0);	/* the join epoch */
	ck_assert(!h_ready(&C, 3));
	h_advance(&C, C.now + 30000);
	ck_assert(joins_as_other_than(3, 4));
}
END_TEST

START_TEST(test_leave_before_roster_is_not_lost)
{
	/* 517/6 (suzuki-kasami, leave): node2 acknowledged node0's NODE_ADD
	 * of node3, then left; its LEAVE reached the joining node3 before
	 * node0's roster snapshot, which still listed node2.  node3 dropped
	 * the LEAVE (node2 was not listed yet), became READY listing node2
	 * for ever, and as the sponsor of the next joiner waited for node2's
	 * NODE_ADD_ACK for ever, holding the roster lock.  The joiner must
	 * acknowledge such a LEAVE and erase the leaver when its roster
	 * comes. */
	struct dm_event leave = { .type = DM_EV_LEAVE };

	node0_adds_node3_roster_held();
	ck_assert_uint_eq(h_roster(&C, 2), 4);		/* node2 lists node3 */
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	deliver(2, 3, DM_MSG_LEAVE);			/* before the roster */
	ck_assert_ptr_nonnull(queued(3, 2, DM_MSG_LEAVE_ACK));
	for (int k = 0; k < 3; k++)			/* then the roster */
		deliver(0, 3, DM_MSG_ROSTER_ENTRY);
	deliver(0, 3, DM_MSG_ROSTER_END);
	C.cut[3] = false;
	h_pump(&C);
	ck_assert(h_ready(&C, 3));
	for (int i = 0; i < 4; i++)
		if (i != 2)
			ck_assert_msg(h_roster(&C, i) == 3, "node%d lists %zu nodes", i,
			    h_roster(&C, i));
	ck_assert_uint_eq(h_count(&C, DM_FX_LEFT), 1);	/* every ack came */
	C.down[2] = true;				/* the process exits */
	/* node3 can sponsor the next joiner. */
	h_join(&C, 4, 3, DM_FAILURE_MAJORITY, 1);
	await_ready(4, 300);
	ck_assert_uint_eq(h_roster(&C, 4), 4);
}
END_TEST

START_TEST(test_leaving_sponsor_redirects_refused_joiner)
{
	/* 101/6 (naimi-trehel, leave): node4 asked node0, its only candidate,
	 * while node0 sponsored node3; node0 refused without naming anyone,
	 * then left, and node4 asked the departed node0 for ever.  A member
	 * that leaves names another member to every joiner it refused while
	 * busy (and a leaving member's own refusals name one). */
	struct dm_event leave = { .type = DM_EV_LEAVE };
	const struct dm_msg *r;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	deliver(3, 0, DM_MSG_JOIN);			/* node0 sponsors node3 */
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 1);
	deliver(4, 0, DM_MSG_JOIN);			/* busy: refused */
	ck_assert_ptr_nonnull(queued(0, 4, DM_MSG_JOIN_REFUSED));
	h_pump(&C);
	ck_assert(h_ready(&C, 3));
	ck_assert_int_eq(h_step(&C, 0, &leave), 0);	/* before node4 retries */
	r = queued(0, 4, DM_MSG_JOIN_REFUSED);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_gt(r->node_len, 0);
	ck_assert_str_ne(r->node, "node0");
	ck_assert_str_ne(r->node, "node4");
	h_pump(&C);
	ck_assert_uint_eq(h_count(&C, DM_FX_LEFT), 1);
	C.down[0] = true;				/* the process exits */
	await_ready(4, 600);
	for (int i = 1; i < 5; i++)
		ck_assert_msg(h_roster(&C, i) == 4, "node%d lists %zu nodes", i,
		    h_roster(&C, i));
}
END_TEST

START_TEST(test_silent_entry_suspected_when_another_incarnation_speaks)
{
	/* Hierarchical bully 1527/8 (crashes): a node listed a restarted
	 * peer's dead incarnation while the live one was a member everywhere
	 * else; it dropped every message of the live one and, failure
	 * detection running on demand only, never asked about the dead one.
	 * Here node0 lists node2 at 1, node1 at 2.  Once node2's listed
	 * incarnation has been silent for T_fail, a message of the other one
	 * makes node0 suspect it, and node1's vote (it lists another
	 * incarnation) removes it.  While the listed one is heard, a message
	 * of another incarnation (a dead one's late message) changes nothing. */
	struct dm_msg m, add;

	init_acquainted(3);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.incarnation = 2;
	m.serial = 1;
	inject(2, 0, &m);
	h_pump(&C);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_SUSPECT], 0);
	/* node2's listed incarnation dies; node1 learns of incarnation 2. */
	C.down[2] = true;
	h_subject_msg(&add, DM_MSG_NODE_ADD, "node2", 2);
	add.serial = 7;
	add.seq = 1;
	inject(0, 1, &add);
	C.qtail = C.qhead;			/* (node1's ack: not node0's add) */
	h_advance(&C, C.now + 30000);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_SUSPECT], 0);	/* idle: nobody asked */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	m.serial = 2;
	inject(2, 0, &m);
	ck_assert_uint_gt(C.sent_kind[DM_MSG_SUSPECT], 0);
	h_pump(&C);
	for (int k = 0; k < 200 && h_roster(&C, 0) == 3; k++)
		h_advance(&C, C.now + 100);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_gt(C.sent_kind[DM_MSG_NODE_FAILED], 0);
}
END_TEST

START_TEST(test_stale_join_does_not_condemn_live_member)
{
	/* 332229/6 (partition), found by the million-seed campaign: JOINs of
	 * a dead incarnation of node2, delivered late, condemned the live one
	 * at node0 and node1 (no lease acks, a removal vote nobody could win),
	 * and node2, holding every REPLY but no lease, never granted.  The
	 * listed incarnation speaking again lifts the condemnation. */
	struct dm_msg j;

	init_acquainted(3);
	h_subject_msg(&j, DM_MSG_JOIN, "node2", 7);
	inject(2, 0, &j);
	inject(2, 1, &j);
	h_pump(&C);
	/* node2's lease of the warm-up runs out (L = 3 s); T_fail (7 s), when
	 * the condemnation would ask for a removal vote, is still ahead. */
	h_advance(&C, C.now + 4000);
	h_acquire(&C, 2, 1, "s", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	for (int k = 0; k < 40 && !granted(1); k++)
		h_advance(&C, C.now + 50);
	ck_assert_msg(granted(1), "the live member was never granted");
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
}
END_TEST

START_TEST(test_sponsor_applies_removal_of_listed_joiner)
{
	/* Raymond --election invitation 419/4 (partition; the path is the
	 * engine's, any algorithm): n3, sponsoring again the join of n0, which
	 * it still listed under the same incarnation, agreed to n1's vote to
	 * remove n0, then took the announcement as about the join only: it
	 * gave the join up, released its vote and kept n0 listed, so it
	 * acknowledged n0's lease again while n1 had erased n0 -- the lease a
	 * removal must end.  The announcement erases the listed entry too. */
	struct dm_msg m;

	init_with_silent_node(3, 2);
	h_subject_msg(&m, DM_MSG_JOIN, "node2", 1);	/* the listed incarnation asks again */
	inject(2, 0, &m);
	ck_assert_ptr_nonnull(queued(0, 1, DM_RA_REQUEST));	/* node0 sponsors: roster lock */
	node0_agrees_to_node1s_vote("node2");
	node_failed(1, 0, "node2", 1, 3, 0);
	ck_assert_ptr_nonnull(queued(0, 2, DM_MSG_JOIN_REFUSED));	/* the join is given up */
	ck_assert_uint_eq(h_roster(&C, 0), 2);		/* and the entry erased */
	ck_assert_uint_eq(heartbeat_acks(2, 0, 9, 1, 0), 0);
}
END_TEST

/* node3, READY, leaves gracefully (every ack comes) and its process exits. */
static void
node3_leaves_and_exits(void)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };

	ck_assert(h_ready(&C, 3));
	ck_assert_int_eq(h_step(&C, 3, &leave), 0);
	h_pump(&C);
	ck_assert_uint_eq(h_count(&C, DM_FX_LEFT), 1);
	C.down[3] = true;
}

START_TEST(test_sponsor_drops_joiner_that_joined_and_left)
{
	/* Raymond 762126/15 (leaves): n11 took n14's JOIN and asked for the
	 * roster lock; n14 joined through n5 meanwhile, became READY and left.
	 * When n11 got the lock it added n14 again: every member listed a
	 * node that was gone, and n11, sponsoring the next joiner, waited for
	 * n14's NODE_ADD_ACK for ever while holding the roster lock.  Here
	 * node0 adds node3; node1 takes node3's JOIN too and waits for the
	 * lock (node2's REPLY held back); node3 becomes READY and leaves;
	 * then node1 gets the lock: it must not add node3 again, and the
	 * next joiner must get in. */
	struct h_packet join, held;

	join = node0_adds_node3_roster_held();
	ck_assert_uint_eq(h_roster(&C, 1), 4);		/* node1 lists node3 */
	inject(3, 1, &join.msg);			/* node1 sponsors it too */
	held = unqueue(1, 2, DM_MSG_ALGO_BASE);		/* its REQUEST to node2 */
	ck_assert_uint_eq(held.msg.kind, DM_MSG_ALGO_BASE);
	h_pump(&C);
	C.cut[3] = false;
	h_pump(&C);
	node3_leaves_and_exits();
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	inject(held.from, held.to, &held.msg);		/* node1 may get the lock */
	h_pump(&C);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(h_roster(&C, i) == 3, "node%d lists %zu nodes: node3 added again",
		    i, h_roster(&C, i));
	h_join(&C, 4, 1, DM_FAILURE_MAJORITY, 1);
	await_ready(4, 300);
	ck_assert_uint_eq(h_roster(&C, 4), 4);
}
END_TEST

/* Holds node0's NODE_ADD to node1 (test_node_add_after_leave_not_applied). */
static bool
hold_node_add_to_node1(const struct h_packet *p)
{
	return p->from == 0 && p->to == 1 && p->msg.kind == DM_MSG_NODE_ADD;
}

/* Holds the SEQ_QUERY to node2 (test_syncing_node_suspects_a_silent_member). */
static bool
hold_seq_query_to_node2(const struct h_packet *p)
{
	return p->to == 2 && p->msg.kind == DM_MSG_SEQ_QUERY;
}

START_TEST(test_syncing_node_suspects_a_silent_member)
{
	/* Every fault kind in one run, 5 of 5,000 seeds on 0df15be's engine
	 * (Ricart-Agrawala 105/6 and kin): a joiner's roster listed a member
	 * that crashed right after acknowledging the joiner's NODE_ADD.  The
	 * joiner asked it for its sequence number for ever and never became
	 * READY: nobody else had a reason to ask about the dead member.  A
	 * syncing node suspects a member it waits for that stays silent for
	 * T_fail; the majority removes it and the join ends. */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	C.hold = hold_seq_query_to_node2;
	h_pump(&C);
	ck_assert_ptr_nonnull(queued(3, 2, DM_MSG_SEQ_QUERY));	/* syncing */
	ck_assert(!h_ready(&C, 3));
	C.hold = NULL;
	C.down[2] = true;				/* node2 crashed */
	await_ready(3, 600);
	for (int i = 0; i < 4; i++)
		if (i != 2)
			ck_assert_msg(h_roster(&C, i) == 3, "node%d lists %zu nodes", i,
			    h_roster(&C, i));
}
END_TEST

/* The incarnation node lists for name (0: not listed). */
static uint64_t
listed_incarnation(int node, const char *name)
{
	dm_slot_t s = dm_roster_find(C.e[node], name, strlen(name));

	return s == DM_SLOT_NONE ? 0 : dm_roster_incarnation(C.e[node], s);
}

START_TEST(test_joiner_takes_newer_epoch_node_add)
{
	/* Naimi-Trehel 778808/9 (crashes): n5, joining for a long time, took
	 * a NODE_ADD of n0's incarnation 3 (epoch 5); that incarnation died
	 * and was removed without the joiner hearing; the NODE_ADD of n0's
	 * incarnation 5 (epoch 15) came from a sponsor the joiner did not
	 * list yet and was acknowledged but not applied.  n5 became a member
	 * listing the dead incarnation and ignored the live n0 for ever.  A
	 * joiner's entry from a NODE_ADD is replaced by a NODE_ADD of another
	 * incarnation at a higher epoch, whoever sends it; not by one at the
	 * same or a lower epoch (a dead incarnation's add, delayed). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);	/* its JOIN stays queued */
	ck_assert(!h_ready(&C, 3));
	ck_assert_uint_eq(listed_incarnation(3, "node1"), 0);
	node_add(1, 3, "node2", 3, 1, 5);	/* node1: not listed by node3 */
	ck_assert_uint_eq(listed_incarnation(3, "node2"), 3);
	node_add(1, 3, "node2", 5, 1, 15);
	ck_assert_msg(listed_incarnation(3, "node2") == 5,
	    "the joiner lists node2's incarnation %llu, not the newer epoch's 5",
	    (unsigned long long)listed_incarnation(3, "node2"));
	ck_assert_ptr_nonnull(queued(3, 1, DM_MSG_NODE_ADD_ACK));
	node_add(1, 3, "node2", 7, 2, 15);	/* same epoch: no */
	ck_assert_uint_eq(listed_incarnation(3, "node2"), 5);
	node_add(1, 3, "node2", 3, 2, 5);	/* the dead one's, late */
	ck_assert_uint_eq(listed_incarnation(3, "node2"), 5);
}
END_TEST

START_TEST(test_node_add_taken_while_restarting_is_provisional)
{
	/* Hierarchical 830035/4 and Raymond 904591/16 (crashes, static
	 * restarts, invitation): n3, told to rejoin, took a NODE_ADD of n2's
	 * incarnation 4 while it waited out the restart interval; n2 then
	 * restarted and was added again (incarnation 6, a higher epoch), but
	 * that NODE_ADD reached n3 while it joined, from a sender it did not
	 * list, and was acknowledged without being applied.  n3 became a
	 * member listing the dead incarnation, removed it at a roster label
	 * the others (listing the live one) never took, and counted no lease
	 * ack of theirs again: its grant never reached its client.  An entry
	 * taken while waiting to rejoin is as provisional as one taken while
	 * joining. */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_REJOIN;				/* node0: rejoin */
	m.incarnation = 1;
	m.epoch = 1;
	inject(0, 1, &m);
	ck_assert_int_eq(C.e[1]->membership, DM_MEMBER_RESTARTING);
	ck_assert_uint_eq(h_roster(&C, 1), 1);		/* itself alone */
	node_add(0, 1, "node3", 4, 1, 2);	/* not listed by node1 */
	ck_assert_uint_eq(listed_incarnation(1, "node3"), 4);
	C.cut[1] = true;				/* its JOINs stay queued */
	h_advance(&C, C.now + 10001);			/* the restart interval */
	ck_assert_int_eq(C.e[1]->membership, DM_MEMBER_JOINING);
	C.cut[1] = false;
	node_add(2, 1, "node3", 6, 1, 9);	/* not listed either */
	ck_assert_msg(listed_incarnation(1, "node3") == 6,
	    "the joiner lists node3's incarnation %llu, not the newer epoch's 6",
	    (unsigned long long)listed_incarnation(1, "node3"));
	ck_assert_ptr_nonnull(queued(1, 2, DM_MSG_NODE_ADD_ACK));
	node_add(0, 1, "node3", 4, 2, 2);	/* the dead one's, late */
	ck_assert_uint_eq(listed_incarnation(1, "node3"), 6);
}
END_TEST

START_TEST(test_node_add_after_leave_not_applied)
{
	/* Naimi-Trehel 126138/11 (leaves, invitation): node1 took node3's
	 * LEAVE and erased it; then node0's NODE_ADD of node3's incarnation,
	 * sent again for the join node3 had finished through it (the first
	 * copy's ack not yet in), reached node1 and added node3 back.  As the
	 * next sponsor node1 then sent NODE_ADD to the departed node3 for
	 * ever, holding the roster lock.  An incarnation that left is gone
	 * like one a majority removed: its NODE_ADD is acknowledged, not
	 * applied. */
	struct dm_msg add;
	const struct dm_msg *q, *ack;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	C.hold = hold_node_add_to_node1;
	h_pump(&C);
	q = queued(0, 1, DM_MSG_NODE_ADD);
	ck_assert_ptr_nonnull(q);
	add = *q;					/* the copy sent again later */
	C.hold = NULL;
	h_pump(&C);
	node3_leaves_and_exits();
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	add.serial += 100;				/* a later retry */
	inject(0, 1, &add);
	ck_assert_msg(h_roster(&C, 1) == 3, "node1 lists %zu nodes: node3 added back",
	    h_roster(&C, 1));
	ack = queued(1, 0, DM_MSG_NODE_ADD_ACK);
	ck_assert_ptr_nonnull(ack);
	ck_assert_uint_eq(ack->serial, add.serial);
	h_pump(&C);
	/* node1 can sponsor the next joiner. */
	h_join(&C, 4, 1, DM_FAILURE_MAJORITY, 1);
	await_ready(4, 300);
	ck_assert_uint_eq(h_roster(&C, 4), 4);
}
END_TEST

/* A member's JOIN_REFUSED that names node1 as another sponsor to try. */
static void
refusal_naming_node1(struct dm_msg *hint)
{
	memset(hint, 0, sizeof(*hint));
	hint->kind = DM_MSG_JOIN_REFUSED;
	hint->arg = EAGAIN;
	hint->flags = DM_MSG_F_MEMBER;
	strcpy(hint->node, "node1");
	hint->node_len = 5;
	strcpy(hint->address, "127.0.0.1:2");
	hint->address_len = (uint8_t)strlen(hint->address);
}

/* Holds the roster messages sent to node3 (test_roster_is_one_sponsors_snapshot). */
static bool
hold_rosters_to_node3(const struct h_packet *p)
{
	return p->to == 3 && (p->msg.kind == DM_MSG_ROSTER_ENTRY || p->msg.kind == DM_MSG_ROSTER_END);
}

/* Three members; node0 adds node3, whose snapshot (three ROSTER_ENTRYs and
 * the ROSTER_END) is held back and returned in snap, in order. */
static void
node0_adds_node3_holding_its_snapshot(struct h_packet snap[4])
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.hold = hold_rosters_to_node3;
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	h_pump(&C);					/* node0 adds node3 */
	ck_assert_uint_eq(h_roster(&C, 1), 4);
	for (int k = 0; k < 3; k++)
		snap[k] = unqueue(0, 3, DM_MSG_ROSTER_ENTRY);
	snap[3] = unqueue(0, 3, DM_MSG_ROSTER_END);
	ck_assert_uint_eq(snap[3].msg.arg, 3);
}

START_TEST(test_roster_is_one_sponsors_snapshot)
{
	/* Raymond 725767/8 (crashes): a joiner had taken entries of one
	 * sponsor's snapshot, moved on to another candidate in the middle of
	 * that one's snapshot (whose first entries it had dropped as not its
	 * sponsor's), and the second ROSTER_END counted the mixture as
	 * complete: it became a member listing a dead incarnation the first
	 * snapshot named.  Here node3 takes two of node0's three entries,
	 * moves on to node1 (node0 names it), and gets node1's last entry
	 * and its ROSTER_END: that is no roster; the next complete one is. */
	struct h_packet snap[4], f2, end1;
	struct dm_msg hint;

	node0_adds_node3_holding_its_snapshot(snap);
	inject(snap[0].from, snap[0].to, &snap[0].msg);
	inject(snap[1].from, snap[1].to, &snap[1].msg);
	refusal_naming_node1(&hint);
	inject(0, 3, &hint);				/* ask node1 next */
	for (int k = 0; k < 100 && h_queued(&C, 1, 3, DM_MSG_ROSTER_END) == NULL; k++)
		h_advance(&C, C.now + 50);		/* node1 sponsors it again */
	(void)unqueue(1, 3, DM_MSG_ROSTER_ENTRY);
	(void)unqueue(1, 3, DM_MSG_ROSTER_ENTRY);
	f2 = unqueue(1, 3, DM_MSG_ROSTER_ENTRY);
	end1 = unqueue(1, 3, DM_MSG_ROSTER_END);
	ck_assert_uint_eq(end1.msg.arg, 3);
	inject(f2.from, f2.to, &f2.msg);
	inject(end1.from, end1.to, &end1.msg);
	/* (Taken, it would ask the members for their sequence numbers.) */
	ck_assert_msg(h_queued(&C, 3, 0, DM_MSG_SEQ_QUERY) == NULL && !h_ready(&C, 3),
	    "node3 took two sponsors' entries for one roster");
	C.hold = NULL;
	await_ready(3, 300);
	ck_assert_uint_eq(h_roster(&C, 3), 4);
}
END_TEST

/* Holds node3's JOINs to node1 and the roster messages sent to node3
 * (test_candidate_snapshot_finishes_after_moving_on). */
static bool
hold_node3_joins_and_rosters(const struct h_packet *p)
{
	return hold_rosters_to_node3(p) ||
	    (p->from == 3 && p->to == 1 && p->msg.kind == DM_MSG_JOIN);
}

START_TEST(test_candidate_snapshot_finishes_after_moving_on)
{
	/* Hierarchical 776716/13 (partitions, bully): the joiner's retry
	 * moved it on to the next candidate between two entries of the
	 * sponsor's snapshot.  The sponsor had already added it everywhere,
	 * but the rest of that snapshot was dropped ("another sponsor's
	 * roster": the joiner had entries, from this very sponsor), so the
	 * joiner stayed out while every member listed it as a member, its
	 * group coordinator: nobody could be granted.  Here node3 takes one
	 * of node0's three entries, moves on to node1 (node0 named it), and
	 * then gets the rest of node0's snapshot: that snapshot is whole, and
	 * node3 syncs with it at once. */
	struct h_packet snap[4];
	struct dm_msg hint;

	node0_adds_node3_holding_its_snapshot(snap);
	inject(snap[0].from, snap[0].to, &snap[0].msg);
	refusal_naming_node1(&hint);
	C.hold = hold_node3_joins_and_rosters;
	inject(0, 3, &hint);				/* node1 is a candidate too */
	for (int k = 0; k < 100 && h_queued(&C, 3, 1, DM_MSG_JOIN) == NULL; k++)
		h_advance(&C, C.now + 10);		/* the retry asks node1 */
	ck_assert_ptr_nonnull(h_queued(&C, 3, 1, DM_MSG_JOIN));
	ck_assert(!h_ready(&C, 3));
	for (int k = 1; k < 4; k++)
		inject(snap[k].from, snap[k].to, &snap[k].msg);
	/* Taken: it asks the members for their sequence numbers. */
	ck_assert_msg(h_queued(&C, 3, 0, DM_MSG_SEQ_QUERY) != NULL,
	    "node3 dropped the rest of the snapshot it had begun taking");
	C.hold = NULL;
	await_ready(3, 300);
	ck_assert_uint_eq(h_roster(&C, 3), 4);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
}
END_TEST

START_TEST(test_removed_incarnation_restarts_to_join)
{
	/* Ricart-Agrawala 276216/9 (partition): n6 had removed n3's
	 * incarnation; n2, which had not heard, added it again and finished
	 * the join; n6 answered n3's SEQ_QUERY without listing it, then asked
	 * everyone but n3 for lock/a; n3's request tied on the sequence number
	 * and won on the name: two holders.  A member that does not list the
	 * querier tells it to start again (REJOIN), and a JOIN of an
	 * incarnation it removed is not sponsored: the joiner is told of its
	 * removal (and so takes a new incarnation). */
	struct dm_msg m;
	size_t adds, algo;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 1);
	h_pump(&C);
	ck_assert(h_ready(&C, 3));
	node_failed(1, 0, "node3", 1, 5, 0);		/* node0 removes node3-1 */
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	/* Its JOIN, as node3 would send it still joining under incarnation 1. */
	h_subject_msg(&m, DM_MSG_JOIN, "node3", 1);
	adds = C.sent_kind[DM_MSG_NODE_ADD];
	algo = C.sent_algo;
	h_inject(&C, 3, 0, &m);
	const struct dm_msg *r = queued(0, 3, DM_MSG_NODE_FAILED);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->node, "node3");
	ck_assert_uint_eq(r->incarnation, 1);
	ck_assert_uint_eq(C.sent_algo, algo);		/* no roster lock asked for */
	h_unqueue(&C, 0, 3, DM_MSG_NODE_FAILED);
	h_pump(&C);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_ADD], adds);
	/* Its SEQ_QUERY, as node3 would send it with a roster from a sponsor
	 * that had not heard of the removal. */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_SEQ_QUERY;
	m.incarnation = 1;
	h_inject(&C, 3, 0, &m);
	ck_assert_ptr_nonnull(queued(0, 3, DM_MSG_REJOIN));
	ck_assert_ptr_null(queued(0, 3, DM_MSG_SEQ_ANSWER));
}
END_TEST

START_TEST(test_refused_by_a_stuck_minority_restarts)
{
	/* Raymond --election invitation 302194/14 (partition): seven of
	 * fourteen members had agreed to a vote on n1 whose prober was then
	 * removed; each asked to remove n1 itself, the others (who hear n1)
	 * refused, and n1 never had a lease majority again: its client waited
	 * for ever.  Here node0 and node1 agreed to node3's vote on node4,
	 * node3 is removed before its outcome, and node0 and node1 can
	 * neither remove node4 (node2 hears it) nor acknowledge it.  node4
	 * sees their refusals, leaves after 2 T_fail and rejoins under a new
	 * incarnation; then it is served again. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE };
	dm_msec_t removed_at;

	init_with_silent_node(5, 4);
	suspect(3, 0, "node4", 1, 1, 3);
	suspect(3, 1, "node4", 1, 1, 3);
	ck_assert_uint_eq(queued(0, 3, DM_MSG_SUSPECT_VOTE)->arg, 1);
	ck_assert_uint_eq(queued(1, 3, DM_MSG_SUSPECT_VOTE)->arg, 1);
	h_acquire(&C, 4, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));				/* node2, node3 and node4 */
	C.down[3] = true;
	ev.u.remove.peer = "node3";
	for (int i = 0; i < 5; i++)
		if (i != 3)
			ck_assert_int_eq(h_step(&C, i, &ev), 0);
	h_pump(&C);
	removed_at = C.now;
	ck_assert_uint_eq(h_roster(&C, 4), 4);
	/* node4 keeps asking (so node2 keeps hearing it and refuses to
	 * remove it), but only node2 acknowledges: 2 of 4. */
	h_acquire(&C, 4, 2, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 5000);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_LOST, 1));	/* no lease */
	ck_assert(!granted(2));
	ck_assert_uint_gt(C.sent_lease_refusals, 0);
	for (int k = 0; k < 120 && !granted(2) && h_find(&C, DM_FX_DENY, 2) == NULL; k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(2) || h_find(&C, DM_FX_DENY, 2) != NULL,
	    "node4 neither served nor told: stuck behind the voters");
	ck_assert_uint_ge(C.now - removed_at, 14000);	/* not before 2 T_fail */
	/* It rejoined under a new incarnation, and is served again. */
	for (int k = 0; k < 120 && !(h_ready(&C, 4) && h_roster(&C, 4) == 4); k++)
		h_advance(&C, C.now + 500);
	ck_assert(h_ready(&C, 4));
	h_acquire(&C, 4, 3, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 120 && !granted(3); k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(3), "node4 never served again");
}
END_TEST

START_TEST(test_refused_node_stays_when_its_refuser_dies)
{
	/* Hierarchical 161045/6 (crashes): in a roster of two, n1 held n4
	 * refused for good; n1 crashed, restarted and asked n4 to sponsor
	 * it, and n4, counting the dead incarnation's refusal for 2 T_fail,
	 * restarted to rejoin through n1: neither was a member any more, for
	 * ever.  Here node1 agreed to node2's vote on node0, node2 is removed
	 * before its outcome, and node1 refuses node0's lease in a roster of
	 * the two.  node1 crashes and rejoins through node0 under a new
	 * incarnation: node0 must stay a member, admit it, and be served. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE };
	size_t refusals;

	init_with_silent_node(3, 0);
	suspect(2, 1, "node0", 1, 1, 3);
	ck_assert_uint_eq(queued(1, 2, DM_MSG_SUSPECT_VOTE)->arg, 1);
	C.down[2] = true;
	ev.u.remove.peer = "node2";
	ck_assert_int_eq(h_step(&C, 0, &ev), 0);
	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	h_pump(&C);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	refusals = C.sent_lease_refusals;
	h_advance(&C, C.now + 10000);
	ck_assert_uint_gt(C.sent_lease_refusals, refusals);	/* node1 refuses */
	ck_assert(!granted(1));
	ck_assert(h_ready(&C, 0));
	/* node1 dies just before node0's 2 T_fail of refusals are up, and
	 * comes back through node0. */
	C.down[1] = true;
	h_advance(&C, C.now + 3000);
	h_join(&C, 1, 0, DM_FAILURE_MAJORITY, 2);
	h_pump(&C);
	for (int k = 0; k < 200 && !(h_ready(&C, 1) && h_roster(&C, 0) == 2); k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(h_ready(&C, 0), "node0 gave its membership up");
	ck_assert_msg(h_ready(&C, 1), "node1 was never admitted again");
	ck_assert_ptr_null(h_find(&C, DM_FX_DENY, 1));
	for (int k = 0; k < 120 && !granted(1); k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(1), "node0's client never served");
}
END_TEST

/* A lease HEARTBEAT from node from to node to whose sender claims roster
 * label `label`: acknowledged (1), refused out loud (0), or neither (-1). */
static int
labelled_heartbeat_acked(int from, int to, uint64_t serial, uint64_t label)
{
	struct dm_msg m;
	const struct dm_msg *ack;

	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.serial = serial;
	m.incarnation = 1;
	m.roster_epoch = label;
	h_inject(&C, from, to, &m);
	ack = queued(to, from, DM_MSG_HEARTBEAT_ACK);
	if (ack == NULL || ack->serial != serial)
		return -1;
	return ack->arg == DM_HEARTBEAT_REFUSED ? 0 : 1;
}

/* Five acquainted nodes; node1 removes node4 (an operator's `dmlock
 * remove`): nodes 1-3 apply it, node0 and node4 never hear of it. */
static void
node1_removes_node4_behind_node0(void)
{
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node4" };

	init_acquainted(5);
	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	h_unqueue(&C, 1, 0, DM_MSG_NODE_FAILED);
	h_unqueue(&C, 1, 4, DM_MSG_NODE_FAILED);
	h_pump(&C);
}

START_TEST(test_stale_roster_gets_no_lease_acks)
{
	/* Lamport 950329/10 (partitions): n2 and n6 were removed at epochs
	 * 18 and 19 while cut off with n9, which had applied no removal since
	 * epoch 12 (it had heard the number 19); n9 renewed its lease with
	 * their acks and n8's, 4 of the 7 it listed, and granted beside the
	 * 3 of 5 members left that had removed it.  Here node1 removes node4
	 * (nodes 1-3 apply it; node0 and node4 never hear of it).  node0, on
	 * the old roster of five, has only node4's ack besides its own: no
	 * lease, no grant, however long it waits for the current members,
	 * which refuse it out loud; it restarts after 2 T_fail and rejoins,
	 * and is served then.  A current member is served at once, and a
	 * member behind us still counts for it. */
	const struct dm_engine *n1;
	dm_msec_t removed_at;

	node1_removes_node4_behind_node0();
	removed_at = C.now;
	n1 = C.e[1];
	ck_assert_uint_gt(n1->roster_epoch, 0);
	ck_assert_uint_eq(C.e[2]->roster_epoch, n1->roster_epoch);
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
	ck_assert_uint_eq(h_roster(&C, 0), 5);
	ck_assert_uint_eq(h_roster(&C, 2), 4);
	/* The rule itself: behind, refused; level or ahead, acknowledged. */
	ck_assert_int_eq(labelled_heartbeat_acked(0, 2, 9001, 0), 0);
	ck_assert_int_eq(labelled_heartbeat_acked(3, 2, 9002, n1->roster_epoch), 1);
	ck_assert_int_eq(labelled_heartbeat_acked(3, 2, 9003, n1->roster_epoch + 5), 1);
	h_pump(&C);
	/* A current member is served, node0's old label notwithstanding. */
	h_acquire(&C, 3, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_int_eq(h_release(&C, 3, 1), 0);
	h_pump(&C);
	/* The stale node is not. */
	h_acquire(&C, 0, 2, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 5000);
	ck_assert_msg(!granted(2), "node0 granted on the acks of a roster the members left");
	ck_assert_uint_gt(C.sent_lease_refusals, 0);
	for (int k = 0; k < 120 && !granted(2) && h_find(&C, DM_FX_DENY, 2) == NULL; k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(2) || h_find(&C, DM_FX_DENY, 2) != NULL,
	    "node0 neither served nor told: stuck behind the refusals");
	ck_assert_uint_ge(C.now - removed_at, 14000);	/* not before 2 T_fail */
	for (int k = 0; k < 120 && !(h_ready(&C, 0) && C.e[0]->roster_epoch == n1->roster_epoch); k++)
		h_advance(&C, C.now + 500);
	ck_assert(h_ready(&C, 0));
	ck_assert_uint_eq(C.e[0]->roster_epoch, n1->roster_epoch);	/* the sponsor's */
	h_acquire(&C, 0, 3, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 120 && !granted(3); k++)
		h_advance(&C, C.now + 500);
	ck_assert_msg(granted(3), "node0 never served again");
}
END_TEST

START_TEST(test_rejoin_from_a_roster_behind_ours_is_ignored)
{
	/* rcv 150133/6 (partitions): n4, cut off at label 12, answered the
	 * heartbeats of n2 and n3, members at label 17 that no longer listed
	 * n4's new incarnation, with REJOIN (epoch 16, above their join
	 * epoch); they restarted, as did every other member on such answers,
	 * and the cluster was left with no member at all.  A node whose
	 * roster is behind ours does not list us because it missed our
	 * changes, not because a majority removed us: its REJOIN is ignored.
	 * One from a roster level with ours is obeyed. */
	struct dm_msg m;
	uint64_t label;

	node1_removes_node4_behind_node0();
	label = C.e[2]->roster_epoch;
	ck_assert_uint_gt(label, 0);
	ck_assert_uint_eq(C.e[0]->roster_epoch, 0);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_REJOIN;
	m.flags = DM_MSG_F_MEMBER;
	m.incarnation = 1;
	m.epoch = C.e[2]->epoch;			/* after node2's join */
	m.roster_epoch = 0;				/* node0's label, behind */
	inject(0, 2, &m);
	ck_assert_msg(h_ready(&C, 2), "node2 left on a REJOIN from a roster behind its own");
	ck_assert_uint_eq(h_roster(&C, 2), 4);
	m.roster_epoch = label;				/* level: obeyed */
	inject(3, 2, &m);
	ck_assert_msg(!h_ready(&C, 2), "a REJOIN from a roster level with ours ignored");
}
END_TEST

START_TEST(test_stale_label_taken_from_a_member_with_the_same_roster)
{
	/* 7007/16 (lamport, crashes): a node missed one removal's
	 * announcement (it had replaced that incarnation already), so its
	 * roster was the members' but its label was not; every member
	 * refused it for good, it restarted, and the members' votes on its
	 * old incarnation outbid each other for the rest of the run.  A
	 * refusal carries the refuser's roster digest: with the same names
	 * listed, the node takes the refuser's label and is served at once,
	 * without restarting. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };
	uint64_t incarnation;

	init_acquainted(4);
	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	h_pump(&C);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert_uint_gt(C.e[1]->roster_epoch, 0);
	ck_assert_uint_eq(C.e[0]->roster_epoch, C.e[1]->roster_epoch);
	C.e[0]->roster_epoch = C.e[0]->roster_applied = 0;	/* an announcement it missed */
	incarnation = C.e[0]->incarnation;
	h_acquire(&C, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 30 && !granted(1); k++)
		h_advance(&C, C.now + 100);
	ck_assert_msg(granted(1), "node0 not served though its roster is the members'");
	ck_assert_uint_eq(C.e[0]->roster_epoch, C.e[1]->roster_epoch);
	ck_assert_uint_eq(C.e[0]->incarnation, incarnation);	/* no restart */
	ck_assert_uint_gt(C.sent_lease_refusals, 0);		/* it was refused first */
}
END_TEST

START_TEST(test_token_of_another_incarnation_raises_ours)
{
	/* A message's token is one some process granted or saw, whoever sent
	 * it: a node that leaves or is removed may be the last to know the
	 * highest token, and its last messages reach the others as a
	 * non-member's or another incarnation's (hierarchical 313/4, every
	 * fault kind: token 9 granted again).  Taking it only raises ours. */
	struct dm_msg m;
	uint64_t high;

	h_init_acquainted(&C, 3);
	high = h_find(&C, DM_FX_GRANT, 902)->token + 1000;
	memset(&m, 0, sizeof(m));
	m.kind = DM_RA_REQUEST;			/* an algorithm's message: not booked */
	m.mode = DM_MODE_EXCLUSIVE;
	m.seq = 1;
	m.lock_len = 1;
	memcpy(m.lock, "z", 2);
	m.incarnation = 12345;			/* not the incarnation node0 lists */
	m.token = high;
	inject(2, 0, &m);
	h_acquire(&C, 0, 50, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(h_granted(&C, 50));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 50)->token, high);
}
END_TEST

/* Held back for test_no_node_add_before_the_roster_lock: node2's acks of
 * NODE_ADDs, and, once roster_replies_held, the permissions node0 needs. */
static bool roster_replies_held;

static bool
hold_acks_and_roster_replies(const struct h_packet *p)
{
	return (p->from == 2 && p->msg.kind == DM_MSG_NODE_ADD_ACK) ||
	    (roster_replies_held && p->to == 0 && p->msg.kind == DM_RA_REPLY);
}

START_TEST(test_no_node_add_before_the_roster_lock)
{
	/* maekawa 13/14 (partitions): n12 gave a join up while its NODE_ADD
	 * waited for an ack; the roster timer that join had armed fired while
	 * n12's next join waited for the roster lock, and sent the new
	 * joiner's NODE_ADD to the old join's silent acker: a NODE_ADD
	 * without the roster lock, which a give-up before the lock came would
	 * not have cancelled. */
	h_init_acquainted(&C, 4);
	roster_replies_held = false;
	C.hold = hold_acks_and_roster_replies;
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 44);
	for (int k = 0; k < 100 && h_roster(&C, 1) < 5; k++)
		h_advance(&C, C.now + 10);
	ck_assert(C.e[0]->sponsoring && C.e[0]->add_out);	/* waiting for node2 */
	h_join(&C, 4, 0, DM_FAILURE_MAJORITY, 45);		/* restarted: given up */
	h_pump(&C);
	ck_assert(!C.e[0]->sponsoring);
	C.down[4] = true;
	roster_replies_held = true;
	h_join(&C, 5, 0, DM_FAILURE_MAJORITY, 55);
	h_pump(&C);
	ck_assert(C.e[0]->sponsoring);
	ck_assert_str_eq(C.e[0]->joiner, "node5");

	size_t adds = C.sent_kind[DM_MSG_NODE_ADD];
	dm_msec_t until = C.now + 4 * dm_join_retry(C.e[0]);

	while (C.now < until)
		h_advance(&C, C.now + 100);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_ADD], adds);	/* no lock, no NODE_ADD */
	for (int i = 1; i <= 3; i++)
		ck_assert_uint_eq(dm_roster_find(C.e[i], "node5", 5), DM_SLOT_NONE);
	/* The lock comes: the join goes through. */
	roster_replies_held = false;
	C.hold = NULL;
	for (int k = 0; k < 200 && !h_ready(&C, 5); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 5));
	ck_assert_uint_gt(C.sent_kind[DM_MSG_NODE_ADD], adds);
}
END_TEST

static Suite *
membership_suite(void)
{
	Suite *s = suite_create("engine-membership");
	TCase *tc = tcase_create("membership");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_restart_removal_needs_majority);
	tcase_add_test(tc, test_two_members_restarted_peer_removed);
	tcase_add_test(tc, test_restarted_votes_only_to_its_sponsor);
	tcase_add_test(tc, test_joiner_keeps_node_add_newer_than_snapshot);
	tcase_add_test(tc, test_cancel_only_by_the_adding_sponsor);
	tcase_add_test(tc, test_cancel_ignored_once_two_sponsors_added);
	tcase_add_test(tc, test_leaving_member_points_joiner_elsewhere);
	tcase_add_test(tc, test_stale_epoch_announcement_ignored);
	tcase_add_test(tc, test_dead_incarnation_speaks_for_no_member);
	tcase_add_test(tc, test_vote_on_replaced_incarnation_keeps_lease);
	tcase_add_test(tc, test_no_votes_for_a_node_being_removed);
	tcase_add_test(tc, test_erased_member_ack_not_counted);
	tcase_add_test(tc, test_sponsor_gives_up_joiner_the_members_removed);
	tcase_add_test(tc, test_new_epoch_grant_needs_fresh_lease_round);
	tcase_add_test(tc, test_joiner_points_joiners_at_its_sponsor);
	tcase_add_test(tc, test_stale_epoch_node_add_ignored);
	tcase_add_test(tc, test_replaced_entry_is_asked_again);
	tcase_add_test(tc, test_cancelled_replacement_restores_entry);
	tcase_add_test(tc, test_restarted_node_refuses_older_roster);
	tcase_add_test(tc, test_restarted_node_refuses_older_roster_label);
	tcase_add_test(tc, test_join_epoch_not_taken_over);
	tcase_add_test(tc, test_removal_by_removed_prober_obeyed);
	tcase_add_test(tc, test_listed_joiner_join_does_not_stop_removal);
	tcase_add_test(tc, test_other_incarnation_books_nothing);
	tcase_add_test(tc, test_announcement_ends_joined_vote);
	tcase_add_test(tc, test_removed_prober_vote_still_stands);
	tcase_add_test(tc, test_late_announcement_of_joined_vote_stands);
	tcase_add_test(tc, test_orphaned_vote_removes_live_subject);
	tcase_add_test(tc, test_lost_vote_lets_another_removal_run);
	tcase_add_test(tc, test_vote_not_asked_again_releases_voters);
	tcase_add_test(tc, test_member_added_again_is_asked_again);
	tcase_add_test(tc, test_rejoin_at_join_epoch_for_this_incarnation);
	tcase_add_test(tc, test_removed_incarnation_not_re_added);
	tcase_add_test(tc, test_runtime_join_through_a_sponsor);
	tcase_add_test(tc, test_joiner_removed_incarnation_starts_again);
	tcase_add_test(tc, test_removed_at_join_epoch_starts_again);
	tcase_add_test(tc, test_leave_before_roster_is_not_lost);
	tcase_add_test(tc, test_leaving_sponsor_redirects_refused_joiner);
	tcase_add_test(tc, test_silent_entry_suspected_when_another_incarnation_speaks);
	tcase_add_test(tc, test_stale_join_does_not_condemn_live_member);
	tcase_add_test(tc, test_sponsor_applies_removal_of_listed_joiner);
	tcase_add_test(tc, test_sponsor_drops_joiner_that_joined_and_left);
	tcase_add_test(tc, test_node_add_after_leave_not_applied);
	tcase_add_test(tc, test_syncing_node_suspects_a_silent_member);
	tcase_add_test(tc, test_joiner_takes_newer_epoch_node_add);
	tcase_add_test(tc, test_node_add_taken_while_restarting_is_provisional);
	tcase_add_test(tc, test_roster_is_one_sponsors_snapshot);
	tcase_add_test(tc, test_candidate_snapshot_finishes_after_moving_on);
	tcase_add_test(tc, test_removed_incarnation_restarts_to_join);
	tcase_add_test(tc, test_refused_by_a_stuck_minority_restarts);
	tcase_add_test(tc, test_refused_node_stays_when_its_refuser_dies);
	tcase_add_test(tc, test_stale_roster_gets_no_lease_acks);
	tcase_add_test(tc, test_stale_label_taken_from_a_member_with_the_same_roster);
	tcase_add_test(tc, test_rejoin_from_a_roster_behind_ours_is_ignored);
	tcase_add_test(tc, test_token_of_another_incarnation_raises_ours);
	tcase_add_test(tc, test_no_node_add_before_the_roster_lock);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(membership_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
