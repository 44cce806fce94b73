/*
 * check_algo_hierarchical.c: unit tests of the hierarchical group/system
 * coordinator algorithm (algo_hierarchical*.c) on the in-test cluster:
 * the thesis's six messages per entry, earliest-timestamp order across
 * groups, fencing tokens through the coordinator chain, try-once, the
 * group size, and a coordinator removal (bully election, tables rebuilt
 * from the members before anything is granted), and a late NRELEASE of a
 * grant known from a cut (seq 0) that must not end a newer grant, a
 * member added mid-epoch that is elected before anyone asks it (also when
 * it was added before the epoch's announcement arrived), and a
 * grant reported at a cut that the epoch's start places in its groups
 * even after the coordinator's own client gave the lock up.
 */
#include "hier_harness.h"

#define NREQUEST 0xc0
#define GREQUEST 0xc1
#define GREPLY	 0xc2
#define NREPLY	 0xc3
#define NRELEASE 0xc4
#define GRELEASE 0xc5
#define GREQREL	 0xc6
#define NREQREL	 0xc7
#define ARE_YOU_UP 112	/* the election's first message (dm_election.h) */
#define NEW_STATE  119	/* the bully's epoch announcement */
#define INVITATION 125
#define READY	   128	/* the invitation's epoch announcement */

static size_t
algo_msgs(const struct h_cluster *c)
{
	size_t n = 0;

	for (unsigned k = NREQUEST; k <= 0xc9; k++)
		n += c->sent_kind[k];
	return n;
}

START_TEST(six_messages_per_entry)
{
	/* "the maximum number of messages ... is six: an NREQUEST, a GREQUEST,
	 *  a GREPLY, an NREPLY, an NRELEASE, and a GRELEASE message." */
	struct h_cluster c;

	hh_init(&c, 8, NULL, 0);
	ck_assert_ptr_nonnull(hh_ask(&c, 5, 1, "a", 100));
	ck_assert_int_eq(h_release(&c, 5, 1), 0);
	h_pump(&c);
	ck_assert_uint_eq(hh_kind(&c, NREQUEST), 1);
	ck_assert_uint_eq(hh_kind(&c, GREQUEST), 1);
	ck_assert_uint_eq(hh_kind(&c, GREPLY), 1);
	ck_assert_uint_eq(hh_kind(&c, NREPLY), 1);
	ck_assert_uint_eq(hh_kind(&c, NRELEASE), 1);
	ck_assert_uint_eq(hh_kind(&c, GRELEASE), 1);
	ck_assert_uint_eq(algo_msgs(&c), 6);
	/* The group coordinator's own request costs only the group level. */
	memset(c.sent_kind, 0, sizeof(c.sent_kind));
	ck_assert_ptr_nonnull(hh_ask(&c, 4, 2, "a", 100));
	ck_assert_int_eq(h_release(&c, 4, 2), 0);
	h_pump(&c);
	ck_assert_uint_eq(algo_msgs(&c), 3);	/* GREQUEST, GREPLY, GRELEASE */
	h_fini(&c);
}
END_TEST

START_TEST(mutual_exclusion_order_and_tokens)
{
	struct h_cluster c;
	const struct h_fx *g1, *g2, *g3;

	hh_init(&c, 8, NULL, 0);
	g1 = hh_ask(&c, 6, 1, "a", 50);
	ck_assert_ptr_nonnull(g1);
	/* Two more wait: node2 (group 0) asks before node7 (group 1). */
	h_acquire(&c, 2, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_acquire(&c, 7, 3, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 50);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 3));
	hh_release(&c, 6, 1, 50);
	/* Earliest timestamp first: node2, although node7 shares node6's group. */
	g2 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 3));
	ck_assert_uint_gt(g2->token, h_find(&c, DM_FX_GRANT, 1)->token);
	hh_release(&c, 2, 2, 50);
	g3 = h_find(&c, DM_FX_GRANT, 3);
	ck_assert_ptr_nonnull(g3);
	ck_assert_uint_gt(g3->token, h_find(&c, DM_FX_GRANT, 2)->token);
	h_fini(&c);
}
END_TEST

START_TEST(try_once_is_refused_while_held)
{
	struct h_cluster c;
	const struct h_fx *d;

	hh_init(&c, 6, NULL, 0);
	ck_assert_ptr_nonnull(hh_ask(&c, 1, 1, "a", 50));
	h_acquire(&c, 5, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_pump(&c);
	d = h_find(&c, DM_FX_DENY, 2);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->error, -EBUSY);
	/* Shared mode is not offered. */
	h_acquire(&c, 5, 3, "b", DM_MODE_SHARED, DM_WAIT_FOREVER);
	d = h_find(&c, DM_FX_DENY, 3);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->error, -EOPNOTSUPP);
	h_fini(&c);
}
END_TEST

START_TEST(group_size_is_configurable)
{
	/* group_size 2: node3's group coordinator is node2, so node3's
	 * NREQUEST is the only message node3 sends before its grant. */
	struct h_cluster c;

	hh_init(&c, 6, NULL, 2);
	ck_assert_ptr_nonnull(hh_ask(&c, 3, 1, "a", 50));
	ck_assert_uint_eq(algo_msgs(&c), 4);
	/* With groups of 4 node3 would be in node0's group: node0 is both
	 * coordinators and the entry costs NREQUEST + NREPLY only. */
	h_fini(&c);
	hh_init(&c, 6, NULL, 4);
	ck_assert_ptr_nonnull(hh_ask(&c, 3, 1, "a", 50));
	ck_assert_uint_eq(algo_msgs(&c), 2);
	h_fini(&c);
}
END_TEST

START_TEST(coordinator_removed_while_lock_held)
{
	/* node5 holds; the system coordinator node0 is removed.  The election
	 * rebuilds the tables from the members: node5's HELD report makes
	 * node1 (new system coordinator) keep the lock for node5's group, so
	 * node2 waits until node5 releases, and gets a higher token. */
	struct h_cluster c;
	const struct h_fx *g1, *g2;

	hh_init(&c, 8, NULL, 0);
	g1 = hh_ask(&c, 5, 1, "a", 50);
	ck_assert_ptr_nonnull(g1);
	hh_remove(&c, 0);
	h_advance(&c, c.now + 200 + h_fence_ms(&c));
	ck_assert_uint_gt(hh_kind(&c, 112 + 4), 0);	/* SET_COORDINATOR: an election ran */
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	ck_assert_ptr_null(hh_ask(&c, 2, 2, "a", 100));
	hh_release(&c, 5, 1, 100);
	g2 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_uint_gt(g2->token, h_find(&c, DM_FX_GRANT, 1)->token);
	h_fini(&c);
}
END_TEST

START_TEST(silent_coordinator_holding_is_suspected_and_replaced)
{
	/* node0, group and system coordinator of a 3-node cluster, holds the
	 * lock and dies silently (no removal by anyone).  node1 waits: its
	 * NREQREL retries go unanswered (no NQUEUED), so it suspects node0,
	 * node2 agrees (silent for T_fail), node0 is removed, an election
	 * makes node1 coordinator, and node1 is granted with a larger token
	 * -- not before node0's lease could have run out. */
	struct h_cluster c;
	const struct h_fx *g0, *g1;

	hh_init(&c, 3, NULL, 0);
	g0 = hh_ask(&c, 0, 1, "a", 50);
	ck_assert_ptr_nonnull(g0);
	h_acquire(&c, 1, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	/* A long hold by a live coordinator: node1's retries are answered
	 * NQUEUED, nobody is suspected, node1 keeps waiting. */
	h_advance(&c, c.now + 60000);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	ck_assert_uint_gt(hh_kind(&c, 0xca), 0);	/* NQUEUED */
	ck_assert_uint_eq(c.sent_kind[DM_MSG_SUSPECT], 0);	/* no DM_MSG_SUSPECT */
	c.down[0] = true;
	h_advance(&c, c.now + 20000);
	g1 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_msg(g1 != NULL, "node1 was never granted after node0 died");
	ck_assert_uint_gt(g1->token, g0->token);
	ck_assert_uint_gt(c.sent_kind[DM_MSG_SUSPECT], 0);	/* the removal vote ran */
	h_fini(&c);
}
END_TEST

START_TEST(withdrawn_request_does_not_block)
{
	struct h_cluster c;

	hh_init(&c, 8, NULL, 0);
	ck_assert_ptr_nonnull(hh_ask(&c, 1, 1, "a", 50));
	h_acquire(&c, 6, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_int_eq(h_cancel(&c, 6, 2), 0);
	h_pump(&c);
	h_acquire(&c, 7, 3, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	hh_release(&c, 1, 1, 100);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 3));
	h_fini(&c);
}
END_TEST

START_TEST(seq0_release_does_not_end_a_timestamped_grant)
{
	/* An NRELEASE with seq 0 answers an NREPLY of a cut's grant (seq 0);
	 * once the group coordinator has granted the same member a request
	 * with a timestamp, such a late answer must not end that grant
	 * (dmlock-sim --algorithm hierarchical --election invitation --seed
	 * 541 --nodes 6 --fault-mask 2: n0 then granted n3 while n1 was in
	 * its critical section). */
	struct h_cluster c;
	struct h_packet req;
	struct dm_msg late;

	hh_init(&c, 8, NULL, 0);
	/* node1's clock runs ahead, so node2's request (below) is earlier
	 * than node1's and would be granted next. */
	for (uint64_t h = 10; h < 13; h++) {
		ck_assert_ptr_nonnull(hh_ask(&c, 1, h, "a", 50));
		ck_assert_int_eq(h_release(&c, 1, h), 0);
		h_pump(&c);
	}
	h_acquire(&c, 1, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	req = h_unqueue(&c, 1, 0, NREQUEST);
	late = req.msg;
	h_inject(&c, 1, 0, &req.msg);
	h_pump(&c);
	h_advance(&c, c.now + 50);
	ck_assert(h_granted(&c, 1));
	h_acquire(&c, 2, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	late.kind = NRELEASE;
	late.seq = 0;
	late.arg = 0;
	late.flags = 0;
	h_inject(&c, 1, 0, &late);	/* answers an old seq-0 NREPLY */
	h_pump(&c);
	h_advance(&c, c.now + 100);
	ck_assert(!h_granted(&c, 2));
	hh_release(&c, 1, 1, 100);
	ck_assert(h_granted(&c, 2));
	h_fini(&c);
}
END_TEST

/* Queue position of the first held-back message of kind from -> to, or
 * SIZE_MAX (held-back messages keep their order in the queue). */
static size_t
held_at(const struct h_cluster *c, int from, int to, uint8_t kind)
{
	for (size_t i = c->qhead; i < c->qtail; i++) {
		const struct h_packet *p = &c->q[i % H_QUEUE];
		if (p->from == from && p->to == to && p->msg.kind == kind)
			return i;
	}
	return SIZE_MAX;
}

/* A node named "a" (sorting before every "nodeN") in the next slot, with
 * no engine: every message to it is held back.  from's NODE_ADD of it, at
 * roster epoch epoch, reaches to. */
static void
add_node_a(struct h_cluster *c, int from, int to, uint64_t epoch)
{
	struct dm_msg add;
	int slot = c->n++;

	snprintf(c->names[slot], sizeof(c->names[slot]), "a");
	c->cut[slot] = true;
	h_subject_msg(&add, DM_MSG_NODE_ADD, "a", 1);
	add.serial = 1;
	add.epoch = epoch;
	h_inject(c, from, to, &add);
	h_pump(c);
}

START_TEST(member_added_mid_epoch_is_elected_before_asked)
{
	/* A member added during an epoch took no part in its election, yet
	 * sorts first in its group: the waiting requester's retry must start
	 * an election, not ask (and then suspect) the newcomer by name alone
	 * (dmlock-sim --algorithm hierarchical --election bully --seed 1292
	 * --nodes 5 --fault-mask 1 --no-shared: the newcomer was a joiner
	 * that never got its roster, in a roster too small to remove it; an
	 * election would have found it answering as a joiner).  Here "a"
	 * (sorting before node0) is added at node2 only and its link is held
	 * back; node2 waits behind node0's grant. */
	struct h_cluster c;
	size_t ayu_at = SIZE_MAX, ask_at = SIZE_MAX;

	hh_init(&c, 3, "bully", 0);
	ck_assert_ptr_nonnull(hh_ask(&c, 0, 1, "x", 50));
	ck_assert_ptr_null(hh_ask(&c, 2, 2, "x", 50));
	add_node_a(&c, 0, 2, 0);
	/* Until node2 turns to the newcomer (bounded: 10 s of retries). */
	for (int step = 0; step < 200 && ayu_at == SIZE_MAX && ask_at == SIZE_MAX; step++) {
		h_advance(&c, c.now + 50);
		ayu_at = held_at(&c, 2, 3, ARE_YOU_UP);
		ask_at = held_at(&c, 2, 3, NREQREL);
		if (held_at(&c, 2, 3, NREQUEST) < ask_at)
			ask_at = held_at(&c, 2, 3, NREQUEST);
	}
	ck_assert_msg(ayu_at != SIZE_MAX, "node2 never started an election after its roster grew");
	ck_assert_msg(ayu_at < ask_at, "node2 asked the newcomer before electing");
	h_fini(&c);
}
END_TEST

/* Hold back the epoch's announcement (bully NEW_STATE, invitation READY)
 * to node2. */
static bool
hold_announcement_to_node2(const struct h_packet *p)
{
	return p->to == 2 && (p->msg.kind == NEW_STATE || p->msg.kind == READY);
}

START_TEST(member_added_before_the_announcement_arrives_is_elected)
{
	/* The coordinator announced an epoch of three members; node "a" was
	 * added to node2's roster before node2's announcement arrived.  node2
	 * must count the epoch's members as the coordinator did (three), so
	 * its next request elects again, rather than count its own roster
	 * (four) and take the epoch as current: "a" took no part in it and
	 * may be a group coordinator by name alone (dmlock-sim --algorithm
	 * hierarchical --group-size 2 --election invitation --seed 379598
	 * --nodes 15: n9's READY came after n8's NODE_ADD, and n9 sent
	 * NREQREL to n8, a member of no group, for ever). */
	static const char *const elections[] = { "invitation", "bully" };

	for (size_t k = 0; k < sizeof(elections) / sizeof(elections[0]); k++) {
		struct h_cluster c;
		struct dm_engine_stats st;
		size_t elect_at, ask_at;
		unsigned elect_kind = k == 1 ? ARE_YOU_UP : INVITATION;

		hh_init(&c, 4, elections[k], 0);
		c.hold = hold_announcement_to_node2;
		hh_remove(&c, 3);
		h_advance(&c, c.now + 2 * h_fence_ms(&c) + 1000);
		ck_assert_ptr_nonnull(h_queued(&c, 0, 2, k == 1 ? NEW_STATE : READY));
		ck_assert_uint_eq(h_queued(&c, 0, 2, k == 1 ? NEW_STATE : READY)->arg, 3);
		dm_engine_get_stats(c.e[0], &st);
		add_node_a(&c, 0, 2, st.roster_label);
		ck_assert_uint_eq(h_roster(&c, 2), 4);
		c.hold = NULL;
		h_pump(&c);
		h_acquire(&c, 2, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		elect_at = held_at(&c, 2, 4, (uint8_t)elect_kind);
		ask_at = held_at(&c, 2, 4, NREQUEST);
		for (int to = 0; to < 2; to++)
			if (held_at(&c, 2, to, NREQUEST) < ask_at)
				ask_at = held_at(&c, 2, to, NREQUEST);
		ck_assert_msg(elect_at != SIZE_MAX, "%s: node2 took the epoch as current",
		    elections[k]);
		ck_assert_msg(ask_at == SIZE_MAX, "%s: node2 asked by the epoch's view",
		    elections[k]);
		h_fini(&c);
	}
}
END_TEST

/* Node node's algorithm view of lock: "system_grant_to=NAME" and the like. */
struct grant_view {
	const char *lock;
	char text[DM_DESCRIBE_MAX];
};

static void
grant_view_of(void *ctx, const char *lock, const char *text)
{
	struct grant_view *v = ctx;

	if (lock != NULL && strcmp(lock, v->lock) == 0)
		snprintf(v->text, sizeof(v->text), "%s", text);
}

static const char *
lock_view(struct h_cluster *c, int node, struct grant_view *v)
{
	v->text[0] = '\0';
	dm_engine_visit_algorithm_state(c->e[node], grant_view_of, v);
	return v->text;
}

START_TEST(cut_grant_placed_in_the_epochs_groups_after_own_withdrawal)
{
	/* dmlock-sim --algorithm hierarchical --group-size 5 --no-shared
	 * --election invitation --seed 885513 --nodes 10 --fault-mask 1: a
	 * grant reported HELD during an election is placed in the groups the
	 * new system coordinator sees at the report, and placed again in the
	 * epoch's groups when the epoch starts -- but only for locks on the
	 * coordinator's active list, and a withdrawal of its own client's
	 * request had taken the lock off it; the grant stayed with a node
	 * outside the epoch and nobody was granted again.  Here: groups of
	 * two, node3 holds x, node0 is removed, node1 coordinates and takes
	 * node3's HELD (node3 is then its own group coordinator); node1's
	 * client tries x once and is refused (an election runs), and "a",
	 * sorting first, joins node1's roster before the epoch starts: in the
	 * epoch's groups {a, node1}, {node2, node3}, node2 has the grant. */
	struct h_cluster c;
	struct grant_view v = { .lock = "x" };
	struct dm_engine_stats st;
	int step;

	hh_init(&c, 4, "bully", 2);
	ck_assert_ptr_nonnull(hh_ask(&c, 3, 1, "x", 100));
	hh_remove(&c, 0);
	for (step = 0; step < 400 && strstr(lock_view(&c, 1, &v), "system_grant_to=") == NULL;
	    step++)
		h_advance(&c, c.now + 5);
	ck_assert_msg(strstr(v.text, "system_grant_to=node3") != NULL,
	    "node1 did not place node3's reported grant with node3: '%s'", v.text);
	/* Still before the epoch: node1's try-once is refused at once. */
	h_acquire(&c, 1, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_pump(&c);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_DENY, 2));
	/* "a" joins node1's roster. */
	dm_engine_get_stats(c.e[1], &st);
	add_node_a(&c, 2, 1, st.epoch + 1);
	ck_assert_uint_eq(h_roster(&c, 1), 4);
	h_advance(&c, c.now + 200 + h_fence_ms(&c));
	ck_assert_msg(strstr(lock_view(&c, 1, &v), "system_grant_to=node2") != NULL,
	    "the epoch started with x's grant placed outside its groups: '%s'", v.text);
	h_fini(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_hierarchical");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, six_messages_per_entry);
	tcase_add_test(tc, mutual_exclusion_order_and_tokens);
	tcase_add_test(tc, try_once_is_refused_while_held);
	tcase_add_test(tc, group_size_is_configurable);
	tcase_add_test(tc, coordinator_removed_while_lock_held);
	tcase_add_test(tc, withdrawn_request_does_not_block);
	tcase_add_test(tc, silent_coordinator_holding_is_suspected_and_replaced);
	tcase_add_test(tc, seq0_release_does_not_end_a_timestamped_grant);
	tcase_add_test(tc, member_added_mid_epoch_is_elected_before_asked);
	tcase_add_test(tc, member_added_before_the_announcement_arrives_is_elected);
	tcase_add_test(tc, cut_grant_placed_in_the_epochs_groups_after_own_withdrawal);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
