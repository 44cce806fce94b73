/*
 * check_engine_roster.c: the roster protocols of RA §7 on the harness:
 * sponsor insertion with Highest_Sequence_Number method 1, graceful leave,
 * failure detection with ARE_YOU_THERE / YES_I_AM_HERE, paper and majority
 * removal, rejoin of a removed node, restart of a peer.
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"
#include "dm_engine_private.h"	/* dm_roster_digest */

/* Three members under the majority policy with node2 down: node0's request
 * for lock (handle 1) is granted within 10 s (node2 voted out). */
static void
node0_granted_without_node2(const char *lock)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(1, 100);
}

START_TEST(test_join_through_sponsor)
{
	size_t before;

	h_init(&C, 3, (enum dm_failure_policy)_i, 0);
	/* Push sequence numbers up so a careless joiner would start too low. */
	for (uint64_t h = 1; h <= 5; h++) {
		h_acquire(&C, 0, h, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		h_release(&C, 0, h);
		h_pump(&C);
	}
	h_join(&C, 3, 1, (enum dm_failure_policy)_i, 7);
	ck_assert(!h_ready(&C, 3));
	h_pump(&C);
	ck_assert(h_ready(&C, 3));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_NODE_ADD], 2);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_SEQ_QUERY], 3);
	/* The joiner's first request: 2(N-1) messages, token above every earlier one. */
	before = C.sent_algo;
	h_acquire(&C, 3, 10, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 0, 11, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(10) != granted(11));
	/* 2 x 3 REQUESTs, 3 REPLYs to the winner, 2 to the loser (1 deferred) */
	ck_assert_uint_eq(C.sent_algo - before, 11);
	uint64_t first = granted(10) ? 10 : 11;
	uint64_t second = first == 10 ? 11 : 10;
	int fnode = first == 10 ? 3 : 0;
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, first)->token, h_find(&C, DM_FX_GRANT, 5)->token);
	h_release(&C, fnode, first);
	h_pump(&C);
	ck_assert(granted(second));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, second)->token,
	    h_find(&C, DM_FX_GRANT, first)->token);
}
END_TEST

START_TEST(test_graceful_leave)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	h_acquire(&C, 2, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1) && !granted(2));
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	ck_assert_int_eq(h_find(&C, DM_FX_LOST, 1)->error, -ESHUTDOWN);
	h_pump(&C);
	ck_assert(granted(2));
	ck_assert_uint_eq(h_count(&C, DM_FX_LEFT), 1);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	/* A left node refuses clients. */
	h_acquire(&C, 2, 3, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 3)->error, -EAGAIN);
	ck_assert_int_eq(h_step(&C, 2, &leave), -EALREADY);
}
END_TEST

/* The roster digest (the record's and the lease's "same roster?") is kept
 * as slots are taken and freed: after node2 leaves, node0 and node1 hold
 * the digest of a cluster formed of node0 and node1 alone. */
START_TEST(test_roster_digest_follows_a_leave)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };
	struct h_cluster two;
	uint64_t three;

	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	three = dm_roster_digest(C.e[0]);
	ck_assert_uint_eq(dm_roster_digest(C.e[2]), three);
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	h_pump(&C);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_ne(dm_roster_digest(C.e[0]), three);
	ck_assert_uint_eq(dm_roster_digest(C.e[1]), dm_roster_digest(C.e[0]));
	h_init(&two, 2, DM_FAILURE_PAPER, 0);
	ck_assert_uint_eq(dm_roster_digest(two.e[0]), dm_roster_digest(C.e[0]));
	h_fini(&two);
}
END_TEST

START_TEST(test_failure_paper)
{
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(1));
	h_advance(&C, C.now + 4999);
	ck_assert_uint_eq(C.sent_kind[DM_RA_ARE_YOU_THERE], 0);
	h_advance(&C, C.now + 1);
	ck_assert_uint_eq(C.sent_kind[DM_RA_ARE_YOU_THERE], 1);
	h_advance(&C, C.now + 2000);
	ck_assert(granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_NODE_FAILED], 1);
}
END_TEST

START_TEST(test_long_critical_section_probe)
{
	/* §7.4: "If critical section processing exceeds the timeout, all nodes
	 * will respond with YES_I_AM_HERE" and nobody is removed. */
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	h_acquire(&C, 0, 1, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 1, 2, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 30000);
	ck_assert(!granted(2));
	ck_assert_uint_ge(C.sent_kind[DM_RA_YES_I_AM_HERE], 3);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_FAILED], 0);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	h_release(&C, 0, 1);
	h_pump(&C);
	ck_assert(granted(2));
}
END_TEST

START_TEST(test_probe_bare_reply_breakage)
{
	h_init(&C, 2, DM_FAILURE_PAPER, DM_BREAK_PROBE_BARE_REPLY);
	h_acquire(&C, 0, 1, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_acquire(&C, 1, 2, "p", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 6000);
	ck_assert(granted(1) && granted(2));	/* broken on purpose: two holders */
}
END_TEST

START_TEST(test_removed_node_rejoins)
{
	h_init(&C, 3, DM_FAILURE_PAPER, 0);
	C.cut[2] = true;
	h_acquire(&C, 0, 1, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 7000);
	ck_assert(granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	h_release(&C, 0, 1);
	h_pump(&C);
	/* Heal: node2 still thinks it is a member and asks for a lock. */
	C.cut[2] = false;
	h_acquire(&C, 2, 2, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_REJOIN], 1);
	ck_assert(!h_ready(&C, 2));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 2)->error, -ESHUTDOWN);
	/* After the restart interval it rejoins through a sponsor. */
	h_advance(&C, C.now + 10000);
	h_pump(&C);
	ck_assert(h_ready(&C, 2));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 3, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(3));
}
END_TEST

START_TEST(test_failure_majority_epoch)
{
	node0_granted_without_node2("m");
	ck_assert_uint_ge(C.sent_kind[DM_MSG_SUSPECT], 1);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_SUSPECT_VOTE], 1);
	ck_assert_uint_eq(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 1);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
}
END_TEST

START_TEST(test_majority_two_nodes_never_removes)
{
	/* With two members a majority needs both: the survivor waits. */
	h_init(&C, 2, DM_FAILURE_MAJORITY, 0);
	C.down[1] = true;
	h_acquire(&C, 0, 1, "m", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	h_advance(&C, C.now + 60000);
	ck_assert(!granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	/* The operator removes it. */
	struct dm_event rm = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node1" };
	ck_assert_int_eq(h_step(&C, 0, &rm), 0);
	ck_assert(granted(1));
}
END_TEST

START_TEST(test_peer_restarted)
{
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 2, 0, DM_FAILURE_MAJORITY, 2);	/* node2 crashed and came back */
	h_pump(&C);
	/* The old incarnation is erased only T_fail (+ D_lock) later. */
	ck_assert(!h_ready(&C, 2));
	ck_assert_uint_ge(C.sent_kind[DM_MSG_JOIN_REFUSED], 1);
	h_advance(&C, C.now + 6900);
	ck_assert(!h_ready(&C, 2));
	h_advance(&C, C.now + 3000);
	ck_assert(h_ready(&C, 2));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 1, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 1);
}
END_TEST

START_TEST(test_grow_from_standalone_gets_deadline)
{
	/* A grant made alone has no deadline; once a second node joins, the
	 * holder is covered by a lease and gets EXTEND deadlines. */
	h_init(&C, 1, DM_FAILURE_MAJORITY, 0);
	h_acquire(&C, 0, 1, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_uint_eq(h_find(&C, DM_FX_GRANT, 1)->deadline, 0);
	h_join(&C, 1, 0, DM_FAILURE_MAJORITY, 1);
	h_pump(&C);
	ck_assert(h_ready(&C, 1));
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_EXTEND, 1));
	ck_assert_uint_gt(h_find(&C, DM_FX_EXTEND, 1)->deadline, C.now);
	/* The newcomer waits for the holder. */
	h_acquire(&C, 1, 2, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));
	h_release(&C, 0, 1);
	h_pump(&C);
	ck_assert(granted(2));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 2)->token, h_find(&C, DM_FX_GRANT, 1)->token);
}
END_TEST

static void
suspect_msg(struct dm_msg *m, const char *subject, uint64_t serial, uint64_t epoch)
{
	memset(m, 0, sizeof(*m));
	m->kind = DM_MSG_SUSPECT;
	m->node_len = (uint8_t)strlen(subject);
	memcpy(m->node, subject, m->node_len + 1u);
	m->serial = serial;
	m->arg = epoch;	/* the ballot: the epoch the removal would start */
	m->incarnation = 1;
}

static void
link_event(int node, int peer, bool up)
{
	struct dm_event ev = { .type = up ? DM_EV_LINK_UP : DM_EV_LINK_DOWN,
	    .u.link.peer = C.names[peer] };

	ck_assert_int_eq(h_step(&C, node, &ev), 0);
}

START_TEST(test_removal_epoch_is_a_ballot)
{
	/* Two probers propose removals at the same epoch: a voter promises
	 * that epoch to the first and refuses the second, naming the epoch to
	 * exceed, so two decisions can never produce equal fencing tokens. */
	struct dm_msg m;
	const struct dm_msg *v;

	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	C.down[3] = true;
	h_advance(&C, C.now + 8000);	/* node3 silent for more than T_fail */
	suspect_msg(&m, "node3", 1, 1);
	inject(0, 1, &m);
	v = queued(1, 0, DM_MSG_SUSPECT_VOTE);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->arg, 1);
	suspect_msg(&m, "node3", 1, 1);
	inject(2, 1, &m);
	v = queued(1, 2, DM_MSG_SUSPECT_VOTE);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->arg, 0);
	ck_assert_uint_ge(v->seq, 1);
	/* A higher ballot is accepted. */
	suspect_msg(&m, "node3", 2, 2);
	inject(2, 1, &m);
	ck_assert_uint_eq(queued(1, 2, DM_MSG_SUSPECT_VOTE)->arg, 1);
}
END_TEST

START_TEST(test_probers_in_step_let_the_one_that_can_win_win)
{
	/* Hierarchical 776716/13 (partitions): the last two members suspect
	 * the same silent node at the same instant, so they propose the same
	 * ballot epoch, round after round.  A tie went to the larger name
	 * every time, but that one's roster also listed a node added by a
	 * sponsor removed mid-add, which never answers: it could never win,
	 * and the smaller one, which could, always gave way.  Here node0's
	 * NODE_ADD of node3 reaches node2 only, then node0 crashes and node3
	 * never comes: node2 (four listed, two silent) cannot remove anyone
	 * before node1 (three listed) removes node0. */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.n = 4;			/* node3: addressable, no process */
	snprintf(C.names[3], sizeof(C.names[3]), "node3");
	C.down[3] = true;
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node3", 1);
	m.serial = 1;
	inject(0, 2, &m);		/* reaches node2 only */
	ck_assert_uint_eq(h_roster(&C, 2), 4);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	C.down[0] = true;
	/* Failure detection runs on demand: both want a lock. */
	h_acquire(&C, 1, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 2, 2, "y", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int k = 0; k < 600 && (h_roster(&C, 1) != 2 || h_roster(&C, 2) != 2); k++)
		h_advance(&C, C.now + 100);
	ck_assert_msg(h_roster(&C, 1) == 2 && h_roster(&C, 2) == 2,
	    "60 s on, node1 lists %zu and node2 %zu", h_roster(&C, 1), h_roster(&C, 2));
	await_grant(1, 100);
	await_grant(2, 100);
}
END_TEST

START_TEST(test_prober_retries_above_refused_ballot)
{
	/* A voter that promised a higher epoch elsewhere refuses; the prober
	 * asks again above it and the removal commits at that epoch. */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[2] = true;
	h_advance(&C, C.now + 8000);
	suspect_msg(&m, "node2", 9, 5);	/* a vote from some other prober at 5 */
	inject(0, 1, &m);
	C.qhead = C.qtail;		/* (its answer is lost) */
	h_acquire(&C, 0, 1, "b", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(1, 100);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 1)->token >> 40, 6);
}
END_TEST

START_TEST(test_joiner_acks_no_lease)
{
	/* A joiner answers a sponsor's roster-lock REQUEST (it never wants the
	 * lock) but must not acknowledge the sponsor's lease: its roster is
	 * provisional, it cannot know whether the majority removed the
	 * requester. */
	struct dm_msg m;
	const struct dm_msg *r;

	h_init(&C, 2, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 2, 0, DM_FAILURE_MAJORITY, 1);
	C.qhead = C.qtail;
	memset(&m, 0, sizeof(m));
	m.kind = DM_RA_REQUEST;
	m.mode = DM_MODE_EXCLUSIVE;
	m.lock_len = (uint8_t)strlen(".dmlock/roster");
	memcpy(m.lock, ".dmlock/roster", m.lock_len + 1u);
	m.seq = 50;
	m.serial = 7;	/* the requester's lease round */
	m.incarnation = 1;
	inject(1, 2, &m);
	r = queued(2, 1, DM_RA_REPLY);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->serial, 7);
	ck_assert_uint_eq(r->arg, 0);
}
END_TEST

START_TEST(test_link_up_twice_is_noop)
{
	/* A replayed LINK_UP for a peer already up is not news from it: it
	 * must not reset the failure detector's silence clock. */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	link_event(1, 2, true);
	C.down[2] = true;
	h_advance(&C, C.now + 8000);
	link_event(1, 2, true);		/* replay */
	link_event(1, 0, true);	/* and one for another member */
	suspect_msg(&m, "node2", 1, 1);
	inject(0, 1, &m);
	ck_assert_uint_eq(queued(1, 0, DM_MSG_SUSPECT_VOTE)->arg, 1);
}
END_TEST

/* node2 misses its own removal (frozen, messages lost), then resumes. */
static void
remove_node2_behind_its_back(void)
{
	node0_granted_without_node2("f");
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	ck_assert_uint_eq(h_roster(&C, 1), 2);
	h_release(&C, 0, 1);
	h_pump(&C);
}

START_TEST(test_link_up_from_removed_node_rejoin)
{
	/* CLUSTER-2: the frozen node resumes, its links come back up, it
	 * sends nothing; the members must tell it it was removed. */
	remove_node2_behind_its_back();
	C.down[2] = false;
	ck_assert(h_ready(&C, 2));		/* still believes it is a member */
	ck_assert_uint_eq(h_roster(&C, 2), 3);
	link_event(0, 2, false);
	link_event(0, 2, true);
	link_event(2, 0, true);
	h_pump(&C);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_REJOIN], 1);
	ck_assert(!h_ready(&C, 2));
	h_advance(&C, C.now + 10000);
	h_pump(&C);
	await_ready(2, 100);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(2));
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 2)->token, h_find(&C, DM_FX_GRANT, 1)->token);
}
END_TEST

START_TEST(test_static_restart_rejoins)
{
	/* CLUSTER-3: node2 crashed, was removed, and restarts from its static
	 * peers config (no sponsor) with a new incarnation.  It must rejoin
	 * through one of its peers and then serve clients. */
	struct dm_peer_spec peers[3];
	struct dm_engine_config cfg;

	remove_node2_behind_its_back();
	for (int i = 0; i < 3; i++) {
		peers[i].name = C.names[i];
		peers[i].address = "127.0.0.1:2";
	}
	C.e[2] = dm_engine_free(C.e[2]);
	C.down[2] = false;
	h_config(&cfg, C.names[2], peers, 3);
	cfg.incarnation = 2;
	ck_assert_int_eq(dm_engine_new(&cfg, &C.e[2]), 0);
	struct dm_event tick = { .type = DM_EV_TICK };
	ck_assert_int_eq(h_step(&C, 2, &tick), 0);
	link_event(2, 0, true);
	link_event(0, 2, true);
	link_event(2, 1, true);
	link_event(1, 2, true);
	h_pump(&C);
	for (int k = 0; k < 300 && !(h_ready(&C, 2) && h_roster(&C, 0) == 3); k++)
		h_advance(&C, C.now + 100);
	ck_assert(h_ready(&C, 2));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(h_roster(&C, i), 3);
	h_acquire(&C, 2, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(2, 100);
	ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, 2)->token, h_find(&C, DM_FX_GRANT, 1)->token);
}
END_TEST

START_TEST(test_sponsor_replaces_stale_incarnation)
{
	/* While node0 sponsors node3 (incarnation 5), another member's NODE_ADD
	 * for an older incarnation of node3 (a stale JOIN it answered) reaches
	 * node0.  When node0 finishes, its entry must be the joiner's
	 * incarnation: otherwise a retried JOIN later "restarts" node3 at node0
	 * alone and node0 erases a live member (seed 172/5: two holders). */
	struct dm_msg m;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 0, DM_FAILURE_MAJORITY, 5);
	h_subject_msg(&m, DM_MSG_NODE_ADD, "node3", 4);
	m.serial = 99;
	/* Deliver only the JOIN: node0 starts sponsoring (roster lock). */
	ck_assert_uint_eq(C.qtail - C.qhead, 1);
	struct h_packet join = C.q[C.qhead++ % H_QUEUE];
	ck_assert_uint_eq(join.msg.kind, DM_MSG_JOIN);
	inject(join.from, join.to, &join.msg);
	inject(1, 0, &m);
	h_pump(&C);
	await_ready(3, 100);
	/* A retried JOIN of the same incarnation arrives late. */
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_JOIN;
	m.node_len = 5;
	memcpy(m.node, "node3", 6);
	m.incarnation = 5;
	inject(3, 0, &m);
	h_pump(&C);
	h_advance(&C, C.now + 20000);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_FAILED], 0);
}
END_TEST

START_TEST(test_node_add_from_non_member_ignored)
{
	/* node3 is removed; later a NODE_ADD it sent for an older incarnation
	 * of node2 (from a join it sponsored before) arrives at node1.  node1
	 * must not replace (erase) its live node2 on a non-member's word
	 * (seed 2709/6: two holders). */
	struct dm_event rm = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };
	struct dm_msg m;

	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	h_acquire(&C, 2, 1, "n", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);	/* node1 hears node2 */
	h_pump(&C);
	ck_assert(granted(1));
	ck_assert_int_eq(h_step(&C, 0, &rm), 0);
	h_pump(&C);
	ck_assert_uint_eq(h_roster(&C, 1), 3);
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_NODE_ADD;
	m.node_len = 5;
	memcpy(m.node, "node2", 6);
	m.incarnation = 9;
	m.serial = 3;
	m.epoch = 5;	/* (not even behind) */
	size_t fx_before = C.nfx;
	inject(3, 1, &m);
	for (size_t i = fx_before; i < C.nfx; i++)
		ck_assert(!(C.fx[i].type == DM_FX_PEER_REMOVE && C.fx[i].node == 1));
	/* node2 still holds; node1 still waits for it. */
	h_pump(&C);
	h_acquire(&C, 1, 2, "n", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));
	h_release(&C, 2, 1);
	h_pump(&C);
	ck_assert(granted(2));
}
END_TEST

START_TEST(test_no_lone_decision_right_after_freeze)
{
	/* node0 condemned node2's old incarnation (node2 restarted) and would
	 * erase it alone T_fail later; node0 is frozen past that moment.  On
	 * resuming it must first wait T_fail for news (it may have been
	 * removed itself meanwhile) instead of deciding at once (3000358/3). */
	struct dm_event tick = { .type = DM_EV_TICK };
	size_t failed_before;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 2, 0, DM_FAILURE_MAJORITY, 2);
	h_pump(&C);
	ck_assert_uint_ge(C.sent_kind[DM_MSG_JOIN_REFUSED], 1);	/* condemned */
	C.down[0] = true;			/* frozen */
	h_advance(&C, C.now + 30000);
	C.down[0] = false;
	failed_before = C.sent_kind[DM_MSG_NODE_FAILED];
	ck_assert_int_eq(h_step(&C, 0, &tick), 0);	/* resumes, timers long overdue */
	ck_assert_uint_eq(C.sent_kind[DM_MSG_NODE_FAILED], failed_before);
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	h_pump(&C);
	h_advance(&C, C.now + 7100);		/* T_fail later it decides */
	ck_assert_uint_gt(C.sent_kind[DM_MSG_NODE_FAILED], failed_before);
}
END_TEST

START_TEST(test_stale_join_never_erases_live_member)
{
	/* node0 answers a JOIN from an incarnation of node3 that is gone (4)
	 * and waits for the roster lock; meanwhile node3's live incarnation
	 * (5) joins through node1 and takes lock x, and node0 asks node3 for
	 * x.  When node0 finally gets the roster lock it must give the stale
	 * join up: a NODE_ADD for incarnation 4 would make node0 (and every
	 * member) erase the live node3, i.e. take its reply for x as given,
	 * and grant x while node3 holds it (seed 8000024/8). */
	struct dm_msg m;
	struct h_packet held;

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	h_join(&C, 3, 1, DM_FAILURE_MAJORITY, 5);
	deliver(3, 1, DM_MSG_JOIN);			/* node1 sponsors node3/5 */
	deliver(1, 0, DM_RA_REQUEST);			/* node0 replies: node1 first */
	h_subject_msg(&m, DM_MSG_JOIN, "node3", 4);
	inject(3, 0, &m);				/* the stale JOIN */
	held = unqueue(0, 2, DM_RA_REQUEST);		/* node0's roster lock waits */
	h_pump(&C);
	await_ready(3, 100);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
	h_acquire(&C, 3, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	h_acquire(&C, 0, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));				/* node3 defers node0 */
	size_t fx_before = C.nfx;
	inject(held.from, held.to, &held.msg);		/* node0 gets the roster lock */
	h_pump(&C);
	for (size_t i = fx_before; i < C.nfx; i++)
		ck_assert_msg(!(C.fx[i].type == DM_FX_PEER_REMOVE &&
		    strcmp(C.fx[i].peer, "node3") == 0), "node%d erased the live node3",
		    C.fx[i].node);
	ck_assert_msg(!granted(2), "node0 entered while node3 holds x");
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(h_roster(&C, i), 4);
	h_release(&C, 3, 1);
	h_pump(&C);
	ck_assert(granted(2));
}
END_TEST

static Suite *
roster_suite(void)
{
	Suite *s = suite_create("engine-roster");
	TCase *tc = tcase_create("roster");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_join_through_sponsor, 0, 2);
	tcase_add_test(tc, test_graceful_leave);
	tcase_add_test(tc, test_roster_digest_follows_a_leave);
	tcase_add_test(tc, test_failure_paper);
	tcase_add_test(tc, test_long_critical_section_probe);
	tcase_add_test(tc, test_probe_bare_reply_breakage);
	tcase_add_test(tc, test_removed_node_rejoins);
	tcase_add_test(tc, test_failure_majority_epoch);
	tcase_add_test(tc, test_majority_two_nodes_never_removes);
	tcase_add_test(tc, test_peer_restarted);
	tcase_add_test(tc, test_grow_from_standalone_gets_deadline);
	tcase_add_test(tc, test_removal_epoch_is_a_ballot);
	tcase_add_test(tc, test_prober_retries_above_refused_ballot);
	tcase_add_test(tc, test_joiner_acks_no_lease);
	tcase_add_test(tc, test_link_up_twice_is_noop);
	tcase_add_test(tc, test_link_up_from_removed_node_rejoin);
	tcase_add_test(tc, test_static_restart_rejoins);
	tcase_add_test(tc, test_sponsor_replaces_stale_incarnation);
	tcase_add_test(tc, test_node_add_from_non_member_ignored);
	tcase_add_test(tc, test_no_lone_decision_right_after_freeze);
	tcase_add_test(tc, test_stale_join_never_erases_live_member);
	tcase_add_test(tc, test_probers_in_step_let_the_one_that_can_win_win);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(roster_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
