/*
 * check_engine_static.c: restarts from a static roster (a daemon with
 * peers= that systemd starts again after a crash, a stop or a halt) --
 * which roster the new process starts from by its membership record
 * (dm_record_start_kind()), the record a leaver or a removed node keeps,
 * a static process told to rejoin when the members list another
 * incarnation under its name (DM_MSG_F_STATIC), and the epoch it joins at
 * (epoch_heard).  dmlock-sim --static-restarts exercises the same at
 * random; each test here is one case it found.
 */
#define H_FILE_CLUSTER	/* engine_harness.h: one cluster C, teardown(), short names on C */
#include "engine_harness.h"

/* The algorithm restart_static() configures (NULL: the default; reset
 * before every test). */
static const char *restart_algorithm;

static void
setup(void)
{
	restart_algorithm = NULL;
}

/* Start node i again from the static peers node0..node{n-1} (n = C.n),
 * incarnation inc, epoch floor floor; from_disk: with its last record. */
static void
restart_static(int i, uint64_t inc, uint64_t floor, bool from_disk)
{
	struct dm_peer_spec peers[H_NODES];
	struct dm_engine_config cfg;
	const char *names[H_RECORD_MAX];
	struct dm_agreed_removal removals[H_RECORD_MAX];

	for (int k = 0; k < C.n; k++) {
		peers[k].name = C.names[k];
		peers[k].address = "127.0.0.1:2";
	}
	C.e[i] = dm_engine_free(C.e[i]);
	C.down[i] = false;
	h_config(&cfg, C.names[i], peers, (size_t)C.n);
	cfg.incarnation = inc;
	cfg.epoch_floor = floor;
	if (restart_algorithm != NULL)
		cfg.algorithm = restart_algorithm;
	if (from_disk)
		cfg.last_record = h_record_config(&C, i, names, removals);
	ck_assert_int_eq(dm_engine_new(&cfg, &C.e[i]), 0);
	struct dm_event tick = { .type = DM_EV_TICK };
	ck_assert_int_eq(h_step(&C, i, &tick), 0);
}

/* The transport of node and peer sees their link come up (a restarted
 * daemon connects to its peers). */
static void
link_up(int node, int peer)
{
	struct dm_event a = { .type = DM_EV_LINK_UP, .u.link.peer = C.names[peer] };
	struct dm_event b = { .type = DM_EV_LINK_UP, .u.link.peer = C.names[node] };

	ck_assert_int_eq(h_step(&C, node, &a), 0);
	ck_assert_int_eq(h_step(&C, peer, &b), 0);
}

static uint64_t
label_of(int node)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(C.e[node], &st);
	return st.roster_label;
}

/* Advance in 100 ms steps until every node of 0..n-1 is ready with a
 * roster of n, at most rounds steps; true if they are. */
static bool
await_cluster(int n, int rounds)
{
	for (int k = 0; k <= rounds; k++) {
		bool all = true;

		for (int i = 0; i < n && all; i++)
			all = h_ready(&C, i) && h_roster(&C, i) == (size_t)n;
		if (all)
			return true;
		h_advance(&C, C.now + 100);
	}
	return false;
}

/* Every node takes lock "x" once: each learns the others' incarnations. */
static void
learn_incarnations(void)
{
	for (int i = 0; i < C.n; i++) {
		h_acquire(&C, i, 100 + (uint64_t)i, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		await_grant(100 + (uint64_t)i, 100);
		h_release(&C, i, 100 + (uint64_t)i);
		h_pump(&C);
	}
}

/* Every node, one after another, takes lock "f" (each within 100 s
 * simulated) and releases it: the cluster serves all of them. */
static void
each_node_takes_f(void)
{
	for (int i = 0; i < C.n; i++) {
		h_acquire(&C, i, 1 + (uint64_t)i, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		await_grant(1 + (uint64_t)i, 1000);
		h_release(&C, i, 1 + (uint64_t)i);
		h_pump(&C);
	}
}

START_TEST(test_restarts_listed_under_old_incarnations_rejoin)
{
	/* node1 and node2 crash and their daemons come back from the static
	 * peers before node0 noticed: node0 lists both old incarnations, a
	 * majority of its roster it can never remove (their successors' votes
	 * are another incarnation's), and drops the successors' requests.
	 * Their messages say they started from the static roster: node0 tells
	 * them to rejoin, and they join through it (dmlock-sim
	 * --static-restarts, seed 15/3). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	learn_incarnations();
	C.down[1] = C.down[2] = true;
	h_advance(&C, C.now + 50);
	restart_static(1, 2, 1, true);
	restart_static(2, 2, 1, true);
	link_up(1, 0);
	link_up(2, 0);
	link_up(1, 2);
	/* Their first requests reach node0: told to rejoin, both join (each
	 * once node0 removed its old incarnation, T_fail later). */
	h_acquire(&C, 1, 50, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&C, 2, 51, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!h_ready(&C, 1) && !h_ready(&C, 2));
	await_ready(1, 1000);
	await_ready(2, 1000);
	each_node_takes_f();
	for (int i = 0; i < 3; i++)
		ck_assert(h_ready(&C, i) && h_roster(&C, i) == 3);
}
END_TEST

START_TEST(test_static_restart_above_the_cluster_epoch_rejoins)
{
	/* node2 stops; node0 and node1 remove it.  Its daemon comes back from
	 * the static peers at its epoch floor, far above the cluster's (its
	 * earlier process saw many epochs; the two survivors' epoch never
	 * rises on its own).  Told to rejoin, it must take the survivors'
	 * roster, older than its own floor: it joins at the epoch the others
	 * told it, and its floor comes back once it is a member (dmlock-sim
	 * --static-restarts, seed 7/2). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(1, 100);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
	h_release(&C, 0, 1);
	h_pump(&C);
	restart_static(2, 2, 1000, false);
	link_up(2, 0);
	link_up(2, 1);
	ck_assert(await_cluster(3, 300));
	h_acquire(&C, 2, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(2, 100);
	/* Its tokens start at its floor: above everything granted before. */
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 2)->token >> 40, 1000);	/* (DM_TOKEN_EPOCH_SHIFT) */
}
END_TEST

START_TEST(test_member_tells_a_static_restart_of_a_listed_node_to_rejoin)
{
	/* node2 crashes and its daemon comes back from the static peers at
	 * once: node0 still lists the old incarnation.  The new one's request
	 * says it started from the static roster: node0 answers REJOIN at
	 * once (without the flag it dropped the message, and left alone it
	 * could only wait for the old incarnation's removal), and node2
	 * joins through it. */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	learn_incarnations();
	C.down[2] = true;
	h_advance(&C, C.now + 50);
	restart_static(2, 2, 1, true);
	ck_assert(h_ready(&C, 2));		/* a member in its own eyes */
	link_up(2, 0);
	link_up(2, 1);
	h_acquire(&C, 2, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	deliver(2, 0, DM_RA_REQUEST);
	ck_assert_ptr_nonnull(queued(0, 2, DM_MSG_REJOIN));
	ck_assert_uint_eq(h_roster(&C, 0), 3);	/* no removal needed */
	h_pump(&C);
	ck_assert(!h_ready(&C, 2));		/* rejoining */
	ck_assert(await_cluster(3, 300));
}
END_TEST

START_TEST(test_static_restart_obeys_a_rejoin_from_behind_its_record)
{
	/* Naimi-Trehel 1814/7 and 1241/10 (crashes, static restarts): n4's
	 * daemon came back from the static peers and its record, at label 6;
	 * n3, which had not applied every removal n4 had, still listed n4's
	 * earlier incarnation and answered REJOIN from label 5.  A member
	 * ignores a REJOIN from a roster behind its own (rcv 150133/6), but
	 * not a restarted process from a member that has not acknowledged it:
	 * nobody lists the new incarnation, whatever the member's label.
	 * Here node1 removes node3 and node0 never hears of it; node2, at
	 * node1's label, restarts from its record and node0 (label 0, listing
	 * node2's first incarnation) tells it to rejoin. */
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = "node3" };
	struct dm_engine_stats st;

	h_init(&C, 4, DM_FAILURE_MAJORITY, 0);
	learn_incarnations();
	ck_assert_int_eq(h_step(&C, 1, &ev), 0);
	h_unqueue(&C, 1, 0, DM_MSG_NODE_FAILED);
	h_unqueue(&C, 1, 3, DM_MSG_NODE_FAILED);
	h_pump(&C);
	ck_assert_uint_gt(label_of(2), 0);
	ck_assert_uint_eq(label_of(0), 0);
	dm_engine_get_stats(C.e[2], &st);
	C.down[2] = true;
	restart_static(2, 2, st.epoch + 1, true);
	ck_assert(h_ready(&C, 2));		/* a member of its record's roster */
	ck_assert_uint_gt(label_of(2), label_of(0));
	link_up(2, 0);
	deliver(2, 0, DM_MSG_HEARTBEAT);	/* its hello */
	deliver(0, 2, DM_MSG_REJOIN);
	ck_assert_msg(!h_ready(&C, 2),
	    "a restarted process ignored the REJOIN of a member that lists its earlier incarnation");
}
END_TEST

START_TEST(test_lone_survivor_takes_back_a_static_restart_above_its_epoch)
{
	/* Two members; node0 leaves, and its daemon comes back from the static
	 * peers without its state directory's record, at its epoch floor 5:
	 * a member of the static roster in its own eyes.  node1, alone, never
	 * saw an epoch above 0 and nothing raises it.  Told to rejoin, node0
	 * must accept node1's roster at epoch 0: it joins at the epoch the
	 * members told it, not its floor (dmlock-sim --static-restarts, seed
	 * 7/2, before leavers kept a record: its roster was refused for
	 * ever). */
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 2, DM_FAILURE_MAJORITY, 0);
	ck_assert_int_eq(h_step(&C, 0, &leave), 0);
	h_pump(&C);
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 1);
	restart_static(0, 2, 5, false);
	ck_assert(h_ready(&C, 0));
	link_up(0, 1);
	h_acquire(&C, 0, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(await_cluster(2, 300));
	h_acquire(&C, 0, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(2, 100);
	ck_assert_uint_ge(h_find(&C, DM_FX_GRANT, 2)->token >> 40, 5);	/* the floor, back */
}
END_TEST

/* node2 leaves gracefully (every member acknowledges). */
static void
node2_leaves(void)
{
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	ck_assert_int_eq(h_step(&C, 2, &leave), 0);
	h_pump(&C);
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 1);
	ck_assert_uint_eq(h_roster(&C, 0), 2);
}

START_TEST(test_leaver_records_the_roster_without_itself)
{
	node2_leaves();
	ck_assert_uint_eq(C.record[2].n_names, 2);
	ck_assert(disk_lists(2, "node0") && disk_lists(2, "node1") && !disk_lists(2, "node2"));
}
END_TEST

START_TEST(test_static_restart_after_leaving_joins)
{
	/* Restarted from the static peers, the leaver does not start as a
	 * member of the static roster (beside members that may have gone on
	 * without it: dmlock-sim --static-restarts, seed 156/3) but joins
	 * through its peers. */
	node2_leaves();
	restart_static(2, 2, 1, true);
	ck_assert(!h_ready(&C, 2));
	ck_assert_ptr_nonnull(queued(2, 0, DM_MSG_JOIN));
	link_up(2, 0);
	link_up(2, 1);
	ck_assert(await_cluster(3, 300));
}
END_TEST

START_TEST(test_static_restart_without_record_is_a_member_at_once)
{
	/* The control: the same restart without its record starts as a
	 * member of the static roster, as on the first start. */
	node2_leaves();
	restart_static(2, 2, 1, false);
	ck_assert(h_ready(&C, 2));
	ck_assert_uint_eq(h_roster(&C, 2), 3);
}
END_TEST

START_TEST(test_every_node_stopped_forms_again)
{
	/* Every node stops: node0 and node1 leave (node1's ack from node2 is
	 * lost: node2, the last member, stopped before it went out; the daemon
	 * now drains its links before it exits, dmd_cluster_drain()), node2
	 * just stops.  Started again from the static peers, the leavers join
	 * (their records no longer list them) through node2, which starts a
	 * member of its recorded roster, and all three serve
	 * (tests/cluster/60-algorithms.sh stops and starts every node). */
	struct dm_event leave = { .type = DM_EV_LEAVE };

	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	learn_incarnations();
	ck_assert_int_eq(h_step(&C, 0, &leave), 0);
	h_pump(&C);
	ck_assert_int_eq(h_step(&C, 1, &leave), 0);
	deliver(1, 2, DM_MSG_LEAVE);
	ck_assert_uint_eq(unqueue(2, 1, DM_MSG_LEAVE_ACK).msg.kind, DM_MSG_LEAVE_ACK);	/* lost */
	C.down[2] = true;
	h_advance(&C, C.now + 7001);			/* node1 gives up on it */
	ck_assert_int_eq(h_count(&C, DM_FX_LEFT), 2);
	for (int i = 0; i < 3; i++)
		restart_static(i, 2, 1, true);
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			link_up(i, j);
	ck_assert(!h_ready(&C, 0) && !h_ready(&C, 1));	/* they join */
	for (int i = 0; i < 3; i++)
		await_ready(i, 1000);
	each_node_takes_f();
	ck_assert(await_cluster(3, 300));
}
END_TEST

/* Messages between node0 and node1 are held back (a partition). */
static bool
hold_0_1(const struct h_packet *p)
{
	return (p->from == 0 && p->to == 1) || (p->from == 1 && p->to == 0);
}

/* The index of the first effect of type on handle h, or -1. */
static int
fx_index(enum dm_effect_type type, uint64_t h)
{
	for (size_t i = 0; i < C.nfx; i++)
		if (C.fx[i].type == type && C.fx[i].handle == h)
			return (int)i;
	return -1;
}

/* Node holder holds lock f (handle 1); node victim crashes and its daemon
 * comes back at once from the static peers, its link to holder held back
 * (a partition), its link to node2 up. */
static void
restarted_cut_off_from_the_holder(int holder, int victim)
{
	h_acquire(&C, holder, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(1, 100);
	C.down[victim] = true;
	h_advance(&C, C.now + 50);
	C.hold = hold_0_1;
	restart_static(victim, 2, 1, true);
	link_up(victim, 2);
}

START_TEST(test_restarted_coordinator_holds_no_token_twice)
{
	/* Suzuki-Kasami: node0, the coordinator of epoch 1, holds every idle
	 * token; it hands lock f's to node1, which holds it.  node2 never
	 * heard from node0 (requests are broadcast, the token goes to the
	 * requester only).  node0 crashes and comes back from the static
	 * peers, cut off from node1 (which would tell it to rejoin): the same
	 * epoch 1, the same coordinator -- and, without the rule, f's token
	 * again, granted with node2's lease ack beside node1.  Restarted, it
	 * takes part in nothing until an election starts a new epoch, whose
	 * cut ends node1's hold first. */
	restart_algorithm = "suzuki-kasami";
	h_init_with(&C, 3, &(struct dm_engine_config){ .algorithm = "suzuki-kasami",
	    .failure_policy = DM_FAILURE_MAJORITY });
	restarted_cut_off_from_the_holder(1, 0);
	h_acquire(&C, 0, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	for (int k = 0; k < 300 && !granted(2); k++)
		h_advance(&C, C.now + 100);
	/* Granted or not: never while node1 still held it. */
	if (granted(2)) {
		ck_assert_int_ge(fx_index(DM_FX_LOST, 1), 0);
		ck_assert_int_lt(fx_index(DM_FX_LOST, 1), fx_index(DM_FX_GRANT, 2));
	}
	C.hold = NULL;
}
END_TEST


START_TEST(test_maekawa_restarted_voter_gives_no_second_vote)
{
	/* Maekawa, S0 = {0, 1}, S2 = {1, 2}: node0 holds f with node1's vote.
	 * node1 crashes and comes back from the static peers, cut off from
	 * node0 (which lists its old incarnation and would tell it to
	 * rejoin); node2 never heard from the old process, so it takes the
	 * new one for the member it lists.  Without the rule, node2's lock g
	 * (asking every member: node2 has no clean reports yet) gets node1's
	 * vote, which makes node2's view clean, and f then asks S2 alone:
	 * node1 votes again and node2 holds f beside node0, whose lease
	 * node2's acks renew.  With it, node1 gives no vote until every
	 * member has answered its hello (dm_static_hello.c); node0's answer,
	 * once the partition ends, is REJOIN. */
	restart_algorithm = "maekawa";
	h_init_with(&C, 3, &(struct dm_engine_config){ .algorithm = "maekawa",
	    .failure_policy = DM_FAILURE_MAJORITY });
	for (uint64_t h = 10; h < 13; h++) {		/* node0's view becomes clean */
		h_acquire(&C, 0, h, "w", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&C);
		await_grant(h, 100);
		h_release(&C, 0, h);
		h_pump(&C);
	}
	restarted_cut_off_from_the_holder(0, 1);
	h_acquire(&C, 2, 3, "g", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	bool asked_f = false;
	for (int k = 0; k < 300 && !granted(2); k++) {
		if (!asked_f && granted(3)) {
			h_release(&C, 2, 3);
			h_acquire(&C, 2, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
			h_pump(&C);
			asked_f = true;
		}
		h_advance(&C, C.now + 100);
	}
	ck_assert_msg(!granted(2) || (fx_index(DM_FX_LOST, 1) >= 0 &&
	    fx_index(DM_FX_LOST, 1) < fx_index(DM_FX_GRANT, 2)),
	    "node2 holds f beside node0 with a second vote of node1");
	ck_assert(!granted(3));		/* held back while node0 has not answered */
	/* The partition ends: node0 tells node1 to rejoin (node1's old
	 * incarnation goes, and with the roster node0's lease may end); g
	 * goes, and f once node0 no longer holds it. */
	C.hold = NULL;
	h_pump(&C);
	await_grant(3, 1000);
	h_release(&C, 2, 3);
	h_acquire(&C, 2, 2, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	for (int k = 0; k < 30 && !granted(2) && fx_index(DM_FX_LOST, 1) < 0; k++)
		h_advance(&C, C.now + 100);
	ck_assert(!granted(2) || (fx_index(DM_FX_LOST, 1) >= 0 &&
	    fx_index(DM_FX_LOST, 1) < fx_index(DM_FX_GRANT, 2)));
	if (fx_index(DM_FX_LOST, 1) < 0) {
		h_release(&C, 0, 1);
		h_pump(&C);
	}
	await_grant(2, 1000);
}
END_TEST

START_TEST(test_told_to_rejoin_records_the_roster_without_itself)
{
	/* node2 was removed while frozen; the REJOIN it gets makes its record
	 * say so, so that its next process joins too (dmlock-sim
	 * --static-restarts, seed 1135/4: a removed node crashed while joining
	 * and came back as a member of the static roster). */
	h_init(&C, 3, DM_FAILURE_MAJORITY, 0);
	C.down[2] = true;
	h_acquire(&C, 0, 1, "f", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	await_grant(1, 100);
	C.down[2] = false;
	ck_assert(disk_lists(2, "node2"));
	link_up(0, 2);
	h_pump(&C);
	ck_assert(!h_ready(&C, 2));
	ck_assert(!disk_lists(2, "node2"));
	ck_assert(disk_lists(2, "node0") && disk_lists(2, "node1"));
	restart_static(2, 2, 1, true);
	ck_assert(!h_ready(&C, 2));
}
END_TEST

START_TEST(test_static_start_from_a_smaller_record_keeps_it)
{
	/* Every daemon of a static roster restarts; their earlier processes
	 * removed node2 at label 5 (it never came back).  node0 and node1
	 * start as members of the recorded roster at its label, not of the
	 * static one that would take node2 back; node2's process (whose
	 * record does not list it) joins through its peers. */
	const char *names[] = { "node0", "node1" };

	h_init_with(&C, 3, &(struct dm_engine_config){ .failure_policy = DM_FAILURE_MAJORITY,
	    .last_record = { .label = 5, .names = names, .n_names = 2 } });
	for (int i = 0; i < 2; i++) {
		ck_assert(h_ready(&C, i));
		ck_assert_uint_eq(h_roster(&C, i), 2);
		ck_assert_uint_eq(label_of(i), 5);
		ck_assert_uint_eq(C.record[i].label, 5);
		ck_assert_uint_eq(C.record[i].n_names, 2);
	}
	ck_assert(!h_ready(&C, 2));
	ck_assert(await_cluster(3, 300));
}
END_TEST

START_TEST(test_static_start_with_a_later_member_joins)
{
	/* The record lists node5, which joined after the static roster was
	 * written (its address is not known here): the cluster went on, so
	 * node0 joins through its peers instead of forming the old roster. */
	const char *names[] = { "node0", "node1", "node2", "node5" };

	h_init_with(&C, 3, &(struct dm_engine_config){ .failure_policy = DM_FAILURE_MAJORITY,
	    .last_record = { .label = 0, .names = names, .n_names = 4 } });
	for (int i = 0; i < 3; i++) {
		ck_assert(!h_ready(&C, i));
		ck_assert_uint_eq(h_roster(&C, i), 1);
	}
}
END_TEST

START_TEST(test_static_start_with_the_same_record_is_a_member)
{
	const char *names[] = { "node2", "node0", "node1" };

	h_init_with(&C, 3, &(struct dm_engine_config){ .failure_policy = DM_FAILURE_MAJORITY,
	    .last_record = { .label = 4, .names = names, .n_names = 3 } });
	for (int i = 0; i < 3; i++) {
		ck_assert(h_ready(&C, i));
		ck_assert_uint_eq(h_roster(&C, i), 3);
	}
}
END_TEST

static Suite *
static_suite(void)
{
	Suite *s = suite_create("engine_static");
	TCase *tc = tcase_create("static restarts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_restarts_listed_under_old_incarnations_rejoin);
	tcase_add_test(tc, test_static_restart_above_the_cluster_epoch_rejoins);
	tcase_add_test(tc, test_member_tells_a_static_restart_of_a_listed_node_to_rejoin);
	tcase_add_test(tc, test_lone_survivor_takes_back_a_static_restart_above_its_epoch);
	tcase_add_test(tc, test_leaver_records_the_roster_without_itself);
	tcase_add_test(tc, test_static_restart_after_leaving_joins);
	tcase_add_test(tc, test_static_restart_without_record_is_a_member_at_once);
	tcase_add_test(tc, test_every_node_stopped_forms_again);
	tcase_add_test(tc, test_restarted_coordinator_holds_no_token_twice);
	tcase_add_test(tc, test_maekawa_restarted_voter_gives_no_second_vote);
	tcase_add_test(tc, test_told_to_rejoin_records_the_roster_without_itself);
	tcase_add_test(tc, test_static_start_from_a_smaller_record_keeps_it);
	tcase_add_test(tc, test_static_start_with_a_later_member_joins);
	tcase_add_test(tc, test_static_start_with_the_same_record_is_a_member);
	tcase_add_test(tc, test_static_restart_obeys_a_rejoin_from_behind_its_record);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(static_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
