/*
 * check_algo_token.c: unit tests of the token algorithms (suzuki-kasami,
 * raymond, naimi-trehel), their shared epoch bookkeeping (dm_token.c) and
 * the bully election (dm_election_bully.c), on the in-test cluster of
 * engine_harness.h.  Each test loops over the three algorithms.
 */
#include "engine_harness.h"
#include "dm_token.h"
#include "dm_engine_private.h"	/* lease_ms, heartbeat_ms, dm_lease_valid */

static const char *const algos[] = { "suzuki-kasami", "raymond", "naimi-trehel" };

static void
t_init(struct h_cluster *c, int n, const char *algo)
{
	h_init_with(c, n, &(struct dm_engine_config){ .algorithm = algo,
	    .failure_policy = DM_FAILURE_MAJORITY });
}

static size_t
token_msgs(const struct h_cluster *c)
{
	return c->sent_kind[DM_TK_REQUEST] + c->sent_kind[DM_TK_TOKEN] +
	    c->sent_kind[DM_TK_RETURN];
}

/* Acquire on node, pump, advance a little for lease rounds; granted? */
static const struct h_fx *
acquire_pumped(struct h_cluster *c, int node, uint64_t handle, const char *lock)
{
	h_acquire(c, node, handle, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(c);
	h_advance(c, c->now + 5);
	return h_find(c, DM_FX_GRANT, handle);
}

START_TEST(registered)
{
	const char *const *names = dm_algorithm_names();
	size_t found = 0;

	for (size_t i = 0; names[i] != NULL; i++)
		for (size_t a = 0; a < 3; a++)
			found += strcmp(names[i], algos[a]) == 0;
	ck_assert_uint_eq(found, 3);
}
END_TEST

START_TEST(repeat_costs_nothing)
{
	/* A node that keeps the token re-enters with zero network messages. */
	struct h_cluster c;
	const struct h_fx *g;
	size_t before;

	t_init(&c, 4, algos[_i]);
	g = acquire_pumped(&c, 3, 1, "a");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(h_release(&c, 3, 1), 0);
	h_pump(&c);
	before = token_msgs(&c);
	ck_assert_uint_gt(before, 0);		/* the first entry fetched the token */
	for (uint64_t h = 2; h < 10; h++) {
		g = acquire_pumped(&c, 3, h, "a");
		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(h_release(&c, 3, h), 0);
		h_pump(&c);
	}
	ck_assert_uint_eq(token_msgs(&c), before);
	h_fini(&c);
}
END_TEST

START_TEST(holder_keeps_the_lease_after_idle)
{
	/* tests/cluster/60-algorithms.sh (rcv) and 61 (raymond, suzuki-kasami)
	 * lost locks on a healthy cluster (session 39): the heartbeats stop
	 * while nothing is held or waited for, and a re-entry on the token
	 * already here, granted on the lease still running from before,
	 * started none; the holder lost its lock a lease after the last
	 * round. */
	struct h_cluster c;
	dm_msec_t lease, beat;

	t_init(&c, 3, algos[_i]);
	lease = c.e[0]->lease_ms;
	beat = c.e[0]->heartbeat_ms;
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "a"));
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_pump(&c);
	h_advance(&c, c.now + 2 * beat);	/* idle: the heartbeats stop */
	ck_assert(dm_lease_valid(c.e[0]));	/* (the lease still runs) */
	size_t tokens = token_msgs(&c);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 2, "a"));
	ck_assert_uint_eq(token_msgs(&c), tokens);	/* the token was here */
	h_advance(&c, c.now + 3 * lease);	/* held for three leases */
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 2));
	ck_assert(dm_lease_valid(c.e[0]));
	ck_assert_int_eq(h_release(&c, 0, 2), 0);
	h_fini(&c);
}
END_TEST

START_TEST(grant_waits_for_a_fresh_lease)
{
	/* Raymond seed 4 (--no-faults --nodes 3, session 40): after an idle
	 * spell a re-entry was granted with 49 us of the lease left, and the
	 * holder lost its lock before the round its grant started came back.
	 * A grant needs more than a heartbeat period of lease left; otherwise
	 * it waits for the round. */
	struct h_cluster c;
	dm_msec_t beat;
	const struct h_fx *g;

	t_init(&c, 3, algos[_i]);
	beat = c.e[0]->heartbeat_ms;
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "a"));
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_pump(&c);
	h_advance(&c, c.e[0]->lease_until - beat / 2);	/* idle: the heartbeats stop */
	ck_assert(dm_lease_valid(c.e[0]));		/* (the lease still runs) */
	h_acquire(&c, 0, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_msg(h_find(&c, DM_FX_GRANT, 2) == NULL,
	    "%s: granted with %u ms of the lease left", algos[_i],
	    (unsigned)(c.e[0]->lease_until - c.now));
	h_pump(&c);					/* the round comes back */
	g = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_gt(g->deadline, c.now + beat);
	h_fini(&c);
}
END_TEST

START_TEST(exclusion_and_fencing)
{
	/* Two waiters behind a holder: exactly one enters at each release,
	 * each with a higher fencing token. */
	struct h_cluster c;
	const struct h_fx *g1, *g2, *g3;
	int first_node, second_node;
	uint64_t first, second;

	t_init(&c, 5, algos[_i]);
	g1 = acquire_pumped(&c, 1, 1, "x");
	ck_assert_ptr_nonnull(g1);
	ck_assert_ptr_null(acquire_pumped(&c, 4, 2, "x"));
	ck_assert_ptr_null(acquire_pumped(&c, 2, 3, "x"));
	ck_assert_int_eq(h_release(&c, 1, 1), 0);
	h_pump(&c);
	h_advance(&c, c.now + 5);
	ck_assert((h_find(&c, DM_FX_GRANT, 2) != NULL) != (h_find(&c, DM_FX_GRANT, 3) != NULL));
	first = h_find(&c, DM_FX_GRANT, 2) != NULL ? 2 : 3;
	second = first == 2 ? 3 : 2;
	first_node = first == 2 ? 4 : 2;
	second_node = first == 2 ? 2 : 4;
	g2 = h_find(&c, DM_FX_GRANT, first);
	ck_assert_uint_gt(g2->token, g1->token);
	ck_assert_int_eq(h_release(&c, first_node, first), 0);
	h_pump(&c);
	h_advance(&c, c.now + 5);
	g3 = h_find(&c, DM_FX_GRANT, second);
	ck_assert_ptr_nonnull(g3);
	ck_assert_int_eq(g3->node, second_node);
	ck_assert_uint_gt(g3->token, g2->token);
	h_fini(&c);
}
END_TEST

START_TEST(suzuki_kasami_n_messages)
{
	/* Cold entry: N-1 REQUESTs and one TOKEN. */
	struct h_cluster c;

	t_init(&c, 6, "suzuki-kasami");
	ck_assert_ptr_nonnull(acquire_pumped(&c, 5, 1, "sk"));
	ck_assert_uint_eq(c.sent_kind[DM_TK_REQUEST], 5);
	ck_assert_uint_eq(c.sent_kind[DM_TK_TOKEN], 1);
	h_fini(&c);
}
END_TEST

START_TEST(old_epoch_token_discarded)
{
	/* A TOKEN of another epoch never grants (a frozen node's old token). */
	struct h_cluster c;
	struct dm_msg m;

	t_init(&c, 3, algos[_i]);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "z"));	/* node0 uses it */
	h_acquire(&c, 2, 2, "z", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	memset(&m, 0, sizeof(m));
	m.kind = DM_TK_TOKEN;
	m.lock_len = 1;
	strcpy(m.lock, "z");
	m.serial = 0;			/* epoch 0 < the current 1 */
	m.node_len = 5;
	strcpy(m.node, "node0");
	m.payload_len = 4;		/* an empty Suzuki-Kasami token */
	struct dm_event ev = { .type = DM_EV_RECEIVE,
	    .u.receive = { .peer = "node1", .msg = &m } };
	ck_assert_int_eq(h_step(&c, 2, &ev), 0);
	h_pump(&c);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	h_fini(&c);
}
END_TEST

START_TEST(holder_crash_regenerates)
{
	/* The token holder dies: the survivors remove it, elect, and the
	 * waiting node gets a regenerated token fenced above the old one. */
	struct h_cluster c;
	const struct h_fx *g1, *g2;
	size_t elections;

	t_init(&c, 3, algos[_i]);
	g1 = acquire_pumped(&c, 2, 1, "r");	/* node2 fetches the token ... */
	ck_assert_ptr_nonnull(g1);
	ck_assert_int_eq(h_release(&c, 2, 1), 0);	/* ... and keeps it idle */
	h_pump(&c);
	c.down[2] = true;
	h_acquire(&c, 1, 2, "r", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	elections = c.sent_kind[DM_EL_ENTER_ELECTION];
	h_advance(&c, c.now + 60000);
	g2 = h_find(&c, DM_FX_GRANT, 2);
	ck_assert_ptr_nonnull(g2);
	ck_assert_uint_gt(g2->token, g1->token);
	ck_assert_uint_gt(c.sent_kind[DM_EL_ENTER_ELECTION], elections);
	ck_assert_uint_gt(c.sent_kind[DM_EL_NEW_STATE], 0);
	h_fini(&c);
}
END_TEST

/* Deliver an election message from peer 'from' to node 'to' directly. */
static void
el_inject(struct h_cluster *c, int to, int from, uint8_t kind, uint64_t serial)
{
	struct dm_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.lock_len = (uint16_t)strlen(DM_ELECTION_LOCK);
	strcpy(m.lock, DM_ELECTION_LOCK);
	m.serial = serial;
	struct dm_event ev = { .type = DM_EV_RECEIVE,
	    .u.receive = { .peer = c->names[from], .msg = &m } };
	ck_assert_int_eq(h_step(c, to, &ev), 0);
}

/* The last message of kind sent by node 'from' still queued, or NULL. */
static const struct dm_msg *
last_sent(const struct h_cluster *c, int from, uint8_t kind)
{
	const struct dm_msg *found = NULL;

	for (size_t i = c->qhead; i < c->qtail; i++) {
		const struct h_packet *p = &c->q[i % H_QUEUE];
		if (p->from == from && p->msg.kind == kind)
			found = &p->msg;
	}
	return found;
}

START_TEST(waiting_member_accepts_its_leader)
{
	/* node1 entered node0's election (WAIT).  A lower member asking it
	 * AreYouUp (its token is overdue) gets an answer, but node1 must not
	 * start an election of its own: that would refuse node0's
	 * Set_Coordinator and restart the winner (a livelock under faults). */
	struct h_cluster c;
	const struct dm_msg *a;
	size_t ayu, ee;

	t_init(&c, 3, algos[_i]);
	el_inject(&c, 1, 0, DM_EL_ENTER_ELECTION, 5);
	a = last_sent(&c, 1, DM_EL_EE_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, 0);
	ayu = c.sent_kind[DM_EL_ARE_YOU_UP];
	ee = c.sent_kind[DM_EL_ENTER_ELECTION];
	el_inject(&c, 1, 2, DM_EL_ARE_YOU_UP, 6);
	ck_assert_ptr_nonnull(last_sent(&c, 1, DM_EL_AYU_ANSWER));
	ck_assert_uint_eq(c.sent_kind[DM_EL_ARE_YOU_UP], ayu);
	ck_assert_uint_eq(c.sent_kind[DM_EL_ENTER_ELECTION], ee);
	el_inject(&c, 1, 0, DM_EL_SET_COORDINATOR, 5);
	a = last_sent(&c, 1, DM_EL_SC_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, 0);		/* accepted */
	h_fini(&c);
}
END_TEST

START_TEST(epoch_counter_only_grows)
{
	/* A candidate proposing a counter not above the member's epoch is
	 * told the highest counter seen (EE answer arg 2), and the member
	 * does not enter that election: an epoch is never reused. */
	struct h_cluster c;
	const struct dm_msg *a;

	t_init(&c, 3, algos[_i]);
	el_inject(&c, 1, 0, DM_EL_ENTER_ELECTION, 1);	/* the current epoch is 1 */
	a = last_sent(&c, 1, DM_EL_EE_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, 2);
	ck_assert_uint_ge(a->seq, 1);
	el_inject(&c, 1, 0, DM_EL_SET_COORDINATOR, 1);
	a = last_sent(&c, 1, DM_EL_SC_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, 1);		/* refused: not waiting for it */
	h_fini(&c);
}
END_TEST

START_TEST(candidate_retries_above_a_higher_epoch)
{
	/* node0's election runs into a member that saw counter 40: it starts
	 * again above it, and the cluster settles in an epoch > 40 whose
	 * regenerated token still grants. */
	struct h_cluster c;
	struct dm_msg m;
	const struct dm_msg *ee;

	t_init(&c, 3, algos[_i]);
	el_inject(&c, 0, 2, DM_EL_ARE_YOU_UP, 2);	/* node0 holds its own election */
	ee = last_sent(&c, 0, DM_EL_ENTER_ELECTION);
	ck_assert_ptr_nonnull(ee);
	m = *ee;
	m.kind = DM_EL_EE_ANSWER;
	m.arg = 2;
	m.seq = 40;
	m.lock_len = (uint16_t)strlen(DM_ELECTION_LOCK);
	struct dm_event ev = { .type = DM_EV_RECEIVE, .u.receive = { .peer = c.names[1], .msg = &m } };
	ck_assert_int_eq(h_step(&c, 0, &ev), 0);
	ee = last_sent(&c, 0, DM_EL_ENTER_ELECTION);
	ck_assert_ptr_nonnull(ee);
	ck_assert_uint_gt(ee->serial, 40);
	h_pump(&c);
	h_advance(&c, c.now + 100 + h_fence_ms(&c));
	ck_assert_ptr_nonnull(acquire_pumped(&c, 2, 1, "g"));
	h_fini(&c);
}
END_TEST

START_TEST(joining_node_answers_elections_passively)
{
	/* A node still JOINING that a member already lists must answer that
	 * member's election (else the election, the roster lock and the join
	 * wait on each other), but only passively -- it never leads -- and
	 * only for its current incarnation (never for a dead predecessor,
	 * whose removal would be skipped). */
	struct h_cluster c;
	struct dm_engine_config cfg;
	struct dm_peer_spec sp;
	struct dm_msg m;
	const struct dm_msg *a;
	size_t answers, led;

	t_init(&c, 3, algos[_i]);
	c.n = 4;
	snprintf(c.names[3], sizeof(c.names[3]), "node%d", 3);
	sp.name = c.names[0];
	sp.address = "127.0.0.1:2";
	h_config(&cfg, c.names[3], NULL, 0);
	cfg.algorithm = algos[_i];
	cfg.incarnation = 7;
	cfg.sponsor = &sp;
	ck_assert_int_eq(dm_engine_new(&cfg, &c.e[3]), 0);
	struct dm_event tick = { .type = DM_EV_TICK };
	ck_assert_int_eq(h_step(&c, 3, &tick), 0);

	memset(&m, 0, sizeof(m));
	m.kind = DM_EL_ENTER_ELECTION;
	m.lock_len = (uint16_t)strlen(DM_ELECTION_LOCK);
	strcpy(m.lock, DM_ELECTION_LOCK);
	m.serial = 9;
	m.seq = 7;			/* node0 lists our incarnation 7 */
	struct dm_event ev = { .type = DM_EV_RECEIVE, .u.receive = { .peer = c.names[0], .msg = &m } };
	led = c.sent_kind[DM_EL_ENTER_ELECTION] + c.sent_kind[DM_EL_ARE_YOU_UP];
	ck_assert_int_eq(h_step(&c, 3, &ev), 0);
	a = last_sent(&c, 3, DM_EL_EE_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, 0);
	ck_assert_uint_eq(a->serial, 9);
	m.kind = DM_EL_SET_COORDINATOR;
	ck_assert_int_eq(h_step(&c, 3, &ev), 0);
	a = last_sent(&c, 3, DM_EL_SC_ANSWER);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->arg, DM_EL_ANSWER_JOINING);	/* accepted, nothing held, not working */
	ck_assert_uint_eq(c.sent_kind[DM_EL_HELD], 0);
	answers = c.sent_kind[DM_EL_EE_ANSWER] + c.sent_kind[DM_EL_SC_ANSWER] +
	    c.sent_kind[DM_EL_AYU_ANSWER];
	m.kind = DM_EL_ENTER_ELECTION;
	m.seq = 6;			/* counts our dead predecessor */
	ck_assert_int_eq(h_step(&c, 3, &ev), 0);
	m.kind = DM_EL_ARE_YOU_UP;	/* silence: nobody waits for us to lead */
	m.seq = 7;
	ck_assert_int_eq(h_step(&c, 3, &ev), 0);
	ck_assert_uint_eq(c.sent_kind[DM_EL_EE_ANSWER] + c.sent_kind[DM_EL_SC_ANSWER] +
	    c.sent_kind[DM_EL_AYU_ANSWER], answers);
	ck_assert_uint_eq(c.sent_kind[DM_EL_ENTER_ELECTION] + c.sent_kind[DM_EL_ARE_YOU_UP], led);
	/* The join completes, and the newcomer's first request goes through
	 * an election of the full roster. */
	h_pump(&c);
	h_advance(&c, c.now + 200);
	ck_assert(h_ready(&c, 3));
	h_acquire(&c, 3, 1, "j", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 200 + h_fence_ms(&c));
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	h_fini(&c);
}
END_TEST

START_TEST(withdrawn_request_loses_nobody)
{
	/* A client withdraws while its node's request is out, then asks
	 * again; another node queued meanwhile.  Both must enter long before
	 * T_fail (no "token overdue" election needed).  Suzuki-Kasami: the
	 * withdrawn number stayed counted, so RN = LN + 2 was never served;
	 * Naimi-Trehel: the second ask reset next and lost the request queued
	 * behind the first (naimi-trehel --election invitation --seeds
	 * 114..114 --nodes 1-16 --rotate-faults; suzuki-kasami likewise,
	 * 241..241). */
	struct h_cluster c;
	bool released3 = false, released4 = false;

	t_init(&c, 3, algos[_i]);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 1, 1, "w"));
	ck_assert_ptr_null(acquire_pumped(&c, 2, 2, "w"));
	ck_assert_int_eq(h_cancel(&c, 2, 2), 0);
	h_pump(&c);
	ck_assert_ptr_null(acquire_pumped(&c, 0, 3, "w"));
	ck_assert_ptr_null(acquire_pumped(&c, 2, 4, "w"));
	ck_assert_int_eq(h_release(&c, 1, 1), 0);
	h_pump(&c);
	/* Each holder keeps the lock 5 ms; 200 ms is far below T_fail. */
	for (int step = 0; step < 40 && !(h_granted(&c, 3) && h_granted(&c, 4)); step++) {
		h_advance(&c, c.now + 5);
		if (h_granted(&c, 3) && !released3) {
			ck_assert_int_eq(h_release(&c, 0, 3), 0);
			released3 = true;
		}
		if (h_granted(&c, 4) && !released4) {
			ck_assert_int_eq(h_release(&c, 2, 4), 0);
			released4 = true;
		}
		h_pump(&c);
	}
	ck_assert_msg(h_granted(&c, 3), "%s: node0's request was lost", algos[_i]);
	ck_assert_msg(h_granted(&c, 4), "%s: node2's second request was lost", algos[_i]);
	ck_assert_uint_eq(c.sent_kind[DM_EL_SET_COORDINATOR], 0);	/* no election */
	h_fini(&c);
}
END_TEST

/* Deliver a HEARTBEAT(serial) of election epoch (k, coord) from node
 * 'from' to node 'to'; did 'to' acknowledge it? */
static bool
heartbeat_acked(struct h_cluster *c, int to, int from, uint64_t k, const char *coord,
    uint64_t serial)
{
	struct dm_msg m;
	const struct dm_msg *ack;

	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_HEARTBEAT;
	m.incarnation = 1;
	m.serial = serial;
	m.seq = k;
	m.node_len = (uint8_t)strlen(coord);
	strcpy(m.node, coord);
	h_inject(c, from, to, &m);
	ack = h_queued(c, to, from, DM_MSG_HEARTBEAT_ACK);
	return ack != NULL && ack->serial == serial && ack->arg != DM_HEARTBEAT_REFUSED;
}

/* Node accepts election epoch k with coordinator coord (both on the
 * simulated wire), and says so. */
static void
accept_epoch(struct h_cluster *c, int node, int coord, uint64_t k)
{
	el_inject(c, node, coord, DM_EL_ENTER_ELECTION, k);
	el_inject(c, node, coord, DM_EL_SET_COORDINATOR, k);
	ck_assert_uint_eq(last_sent(c, node, DM_EL_SC_ANSWER)->arg, 0);	/* accepted */
}

START_TEST(old_epoch_heartbeat_not_acked)
{
	/* dmlock-sim --algorithm raymond --election bully --seed 590936
	 * --nodes 9 --fault-mask 4: n7 and n8 accepted n5's epoch 14 but kept
	 * acknowledging the heartbeats of n2, coordinator of epoch 13 on the
	 * other side of a partition; n2's lease held, and it granted lock/b
	 * from the idle token it kept as coordinator while n5 granted the
	 * regenerated one: two holders.  A member that accepted an epoch
	 * acknowledges no heartbeat of an older one (by counter, then the
	 * coordinator's priority); the same or newer ones it does.  (Raymond
	 * --election invitation 419/4: n0 formed a group above the one n3
	 * had joined, labelled its heartbeats with it at once, and n3's acks
	 * turned an old permission of n0's into a grant.) */
	struct h_cluster c;

	t_init(&c, 3, algos[_i]);
	ck_assert(heartbeat_acked(&c, 1, 2, 1, "node0", 70));	/* nothing accepted yet */
	accept_epoch(&c, 1, 0, 5);	/* (5, node0) accepted */
	ck_assert(!heartbeat_acked(&c, 1, 2, 1, "node0", 71));
	ck_assert(!heartbeat_acked(&c, 1, 2, 4, "node0", 72));
	ck_assert(!heartbeat_acked(&c, 1, 2, 0, "", 73));		/* no epoch at all */
	ck_assert(!heartbeat_acked(&c, 1, 2, 5, "node2", 74));		/* node0 outranks node2 */
	ck_assert(heartbeat_acked(&c, 1, 2, 5, "node0", 75));
	ck_assert(heartbeat_acked(&c, 1, 2, 6, "node2", 76));
	/* The coordinator we accepted labels its heartbeats with the epoch it
	 * worked in before until its own starts (what it holds is accounted
	 * there): acknowledged unless older than our own previous epoch. */
	ck_assert(heartbeat_acked(&c, 1, 0, 1, "node0", 77));
	accept_epoch(&c, 1, 0, 7);	/* (7, node0) */
	/* (5, node0) never started here, and node0 leads 7 too: it counts
	 * for nothing, and node0 may still label the epoch it worked in. */
	ck_assert(heartbeat_acked(&c, 1, 0, 5, "node0", 78));
	ck_assert(heartbeat_acked(&c, 1, 0, 4, "node0", 79));
	ck_assert(!heartbeat_acked(&c, 1, 2, 5, "node0", 80));	/* not from our coordinator */
	/* Once (7, node0) started here, it is the epoch before the next. */
	el_inject(&c, 1, 0, DM_EL_NEW_STATE, 7);
	ck_assert_uint_gt(c.sent_kind[DM_EL_NS_ANSWER], 0);
	accept_epoch(&c, 1, 0, 9);	/* (9, node0) */
	ck_assert(heartbeat_acked(&c, 1, 0, 7, "node0", 81));
	ck_assert(!heartbeat_acked(&c, 1, 0, 5, "node0", 82));
	/* An epoch of another coordinator counts, started or not: node2
	 * accepts (5, node1), never started, then (7, node0). */
	accept_epoch(&c, 2, 1, 5);	/* (5, node1) */
	accept_epoch(&c, 2, 0, 7);	/* (7, node0) */
	ck_assert(heartbeat_acked(&c, 2, 0, 5, "node1", 83));
	ck_assert(!heartbeat_acked(&c, 2, 0, 4, "node0", 84));
	h_fini(&c);
}
END_TEST

START_TEST(follower_renews_under_a_new_epoch_at_once)
{
	/* Raymond 11913/10 (--no-faults): n4 held lock/c through two
	 * elections a few milliseconds apart.  The members that accepted
	 * each epoch before it acknowledged none of its heartbeats, which
	 * kept the label of the epoch before until its next period, and its
	 * holder lost the lock on a healthy cluster.  A follower with a
	 * holder sends a heartbeat under the new label as it accepts. */
	struct h_cluster c;
	const struct dm_msg *hb;

	t_init(&c, 3, algos[_i]);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 1, 1, "m"));
	ck_assert_ptr_null(last_sent(&c, 1, DM_MSG_HEARTBEAT));	/* (all delivered) */
	accept_epoch(&c, 1, 0, 5);	/* (5, node0) */
	hb = last_sent(&c, 1, DM_MSG_HEARTBEAT);
	ck_assert_msg(hb != NULL, "%s: no heartbeat under the accepted epoch", algos[_i]);
	ck_assert_uint_eq(hb->seq, 5);
	ck_assert_str_eq(hb->node, "node0");
	h_fini(&c);
}
END_TEST

START_TEST(new_epoch_waits_one_lease)
{
	/* The other half of the fix for 590936/9: once every member accepted,
	 * the coordinator sends New_State only after one lease (plus the stop
	 * time, with drift): by then no lease renewed under an older epoch
	 * runs anywhere, so nothing regenerated is used beside it.  And a
	 * member waits for New_State that much longer before it gives up on
	 * the coordinator: with a probe timeout far below the lease (4 T <
	 * the fence) it would otherwise elect again for ever. */
	struct h_cluster c;
	dm_msec_t t0, fence;
	size_t ee;

	h_init_with(&c, 3, &(struct dm_engine_config){ .algorithm = algos[_i],
	    .failure_policy = DM_FAILURE_MAJORITY, .request_timeout_ms = 8000,
	    .probe_timeout_ms = 100 });
	fence = h_fence_ms(&c);
	ck_assert_uint_gt(fence, 4 * 100);
	el_inject(&c, 0, 2, DM_EL_ARE_YOU_UP, 2);	/* node0 holds an election */
	h_pump(&c);
	ck_assert_uint_gt(c.sent_kind[DM_EL_SC_ANSWER], 0);
	ee = c.sent_kind[DM_EL_ENTER_ELECTION];
	t0 = c.now;
	ck_assert_uint_eq(c.sent_kind[DM_EL_NEW_STATE], 0);
	h_advance(&c, t0 + fence - 1);
	ck_assert_uint_eq(c.sent_kind[DM_EL_NEW_STATE], 0);
	h_advance(&c, t0 + fence);
	ck_assert_uint_gt(c.sent_kind[DM_EL_NEW_STATE], 0);
	ck_assert_uint_eq(c.sent_kind[DM_EL_ENTER_ELECTION], ee);	/* nobody gave up */
	ck_assert_ptr_nonnull(acquire_pumped(&c, 2, 1, "n"));
	/* The coordinator takes a lock with its own token: its lease round
	 * carries the epoch it leads. */
	h_acquire(&c, 0, 2, "m", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	{
		const struct dm_msg *hb = h_queued(&c, 0, 1, DM_MSG_HEARTBEAT);
		ck_assert_ptr_nonnull(hb);
		ck_assert_uint_gt(hb->seq, 2);
		ck_assert_str_eq(hb->node, "node0");
	}
	h_fini(&c);
}
END_TEST

/*
 * The coordinator's own holder lives through an election it leads (fence
 * included, longer than a lease): its heartbeats keep the label of the
 * epoch it worked in before until its own starts, and members that
 * accepted it acknowledge them because that epoch is the one they left
 * too.  Then the label moves to the new epoch.  nested: a second election
 * before the first epoch started (Raymond seed 16, --no-faults --nodes 3):
 * the members took the first new epoch for the one they accepted before
 * the second, acknowledged nothing, and the holder lost its lock on a
 * healthy cluster; an epoch of the same coordinator that never started
 * does not count as "before".
 */
static void
coordinator_keeps_its_lock(const char *algo, bool nested)
{
	struct h_cluster c;
	const struct dm_msg *hb;
	dm_msec_t t0, fence;
	size_t answers;

	t_init(&c, 3, algo);
	fence = h_fence_ms(&c);
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "m"));
	el_inject(&c, 0, 2, DM_EL_ARE_YOU_UP, 2);	/* node0 leads an election */
	h_pump(&c);
	answers = c.sent_kind[DM_EL_SC_ANSWER];
	ck_assert_uint_gt(answers, 0);
	if (nested) {
		h_advance(&c, c.now + fence / 2);
		ck_assert_uint_eq(c.sent_kind[DM_EL_NEW_STATE], 0);
		el_inject(&c, 0, 1, DM_EL_ARE_YOU_UP, 3);	/* a second before it starts */
		h_pump(&c);
		ck_assert_uint_gt(c.sent_kind[DM_EL_SC_ANSWER], answers);
	}
	t0 = c.now;
	h_advance(&c, t0 + fence - 10);
	ck_assert_uint_eq(c.sent_kind[DM_EL_NEW_STATE], 0);
	hb = h_last_sent(&c, 0, 1, DM_MSG_HEARTBEAT);
	ck_assert_ptr_nonnull(hb);
	ck_assert_uint_eq(hb->seq, 0);		/* still the epoch it worked in */
	ck_assert_msg(h_find(&c, DM_FX_LOST, 1) == NULL,
	    "%s: the coordinator's holder lost its lock during its election%s", algo,
	    nested ? "s" : "");
	h_advance(&c, t0 + fence + 1000);
	ck_assert_uint_gt(c.sent_kind[DM_EL_NEW_STATE], 0);
	hb = h_last_sent(&c, 0, 1, DM_MSG_HEARTBEAT);
	ck_assert_ptr_nonnull(hb);
	ck_assert_uint_gt(hb->seq, 2);
	ck_assert_str_eq(hb->node, "node0");
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	h_fini(&c);
}

START_TEST(coordinator_keeps_its_lock_across_its_election)
{
	coordinator_keeps_its_lock(algos[_i], false);
}
END_TEST

START_TEST(coordinator_keeps_its_lock_across_nested_elections)
{
	coordinator_keeps_its_lock(algos[_i], true);
}
END_TEST

/* node2's invitation of group 2 reaches node0 (cut off from the others):
 * node0 accepts it and, outranking node2, invites everyone itself under a
 * group of its own: the epoch cut. */
static void
invite_node0_from_node2(struct h_cluster *c)
{
	struct dm_msg inv;

	memset(&inv, 0, sizeof(inv));
	inv.kind = DM_EL_INVITATION;
	inv.lock_len = (uint16_t)strlen(DM_ELECTION_LOCK);
	strcpy(inv.lock, DM_ELECTION_LOCK);
	inv.incarnation = 1;
	inv.serial = 2;
	inv.node_len = 5;
	strcpy(inv.node, "node2");
	h_inject(c, 2, 0, &inv);
}

START_TEST(permission_without_grant_does_not_cross_a_cut)
{
	/* Raymond --election invitation 419/4 (partition): n0, coordinator
	 * of its group and so holding every token, was cut off; its client's
	 * request was permitted at once but not granted (no lease).  n0 then
	 * formed a new group, and the first acknowledgements its heartbeats
	 * got turned that old permission into a grant, beside the holder of
	 * the token that the majority's newer group had regenerated.  At an
	 * epoch cut a permission no client was granted yet is taken back and
	 * asked for again in the new epoch. */
	struct h_cluster c;

	h_init_with(&c, 3, &(struct dm_engine_config){ .algorithm = algos[_i],
	    .election = "invitation", .failure_policy = DM_FAILURE_MAJORITY });
	c.cut[1] = c.cut[2] = true;		/* node0 alone */
	h_acquire(&c, 0, 1, "c", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_advance(&c, c.now + 100);
	ck_assert(!h_granted(&c, 1));		/* permitted, but no lease */
	invite_node0_from_node2(&c);		/* node0 merges node2 under a group of its own */
	ck_assert_uint_gt(c.sent_kind[DM_EL_INVITATION], 0);
	c.cut[1] = c.cut[2] = false;		/* heal: heartbeats get acknowledged */
	h_pump(&c);
	h_advance(&c, c.now + 100);
	ck_assert_uint_eq(c.sent_kind[DM_EL_READY], 0);
	ck_assert_msg(!h_granted(&c, 1), "%s: granted from a permission of the old epoch",
	    algos[_i]);
	h_advance(&c, c.now + h_fence_ms(&c) + 100);
	ck_assert_uint_gt(c.sent_kind[DM_EL_READY], 0);
	ck_assert(h_granted(&c, 1));		/* asked again in the new group */
	h_fini(&c);
}
END_TEST

START_TEST(try_once_permitted_at_a_cut_is_refused)
{
	/* The same cut as above for a try-once request: permitted at once
	 * (the token was here) but not granted (no lease), then taken back at
	 * the cut.  Asked again in the new epoch it would wait for the token,
	 * which a try-once never does: it is refused, busy. */
	struct h_cluster c;
	const struct h_fx *deny;

	h_init_with(&c, 3, &(struct dm_engine_config){ .algorithm = algos[_i],
	    .election = "invitation", .failure_policy = DM_FAILURE_MAJORITY });
	c.cut[1] = c.cut[2] = true;		/* node0 alone */
	h_acquire(&c, 0, 1, "c", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_advance(&c, c.now + 100);
	ck_assert(!h_granted(&c, 1));		/* permitted, but no lease */
	ck_assert_ptr_null(h_find(&c, DM_FX_DENY, 1));
	invite_node0_from_node2(&c);		/* the cut */
	deny = h_find(&c, DM_FX_DENY, 1);
	ck_assert_msg(deny != NULL, "%s: a try-once went on waiting across a cut", algos[_i]);
	ck_assert_int_eq(deny->error, -EBUSY);
	c.cut[1] = c.cut[2] = false;
	h_pump(&c);
	h_advance(&c, c.now + h_fence_ms(&c) + 100);
	ck_assert_uint_gt(c.sent_kind[DM_EL_READY], 0);
	ck_assert(!h_granted(&c, 1));
	ck_assert_ptr_nonnull(acquire_pumped(&c, 2, 2, "c"));	/* the lock is free */
	h_fini(&c);
}
END_TEST

START_TEST(waiter_behind_a_long_holder_probes_instead_of_electing)
{
	/* A waiter queued behind a long critical section took the wait for a
	 * lost token and started an epoch every T_fail, each stopping every
	 * token for its fence (bench/election_stall.sh: 3 epochs in 15 s with
	 * T_fail 2.5 s).  Now at T_fail it asks who uses the lock; the holder
	 * answers, and over 16 T_fail no epoch starts at all.  The holder
	 * keeps its lock throughout, and the waiter is served when it
	 * leaves. */
	struct h_cluster c;
	dm_msec_t t_fail;

	t_init(&c, 3, algos[_i]);
	t_fail = c.e[1]->request_timeout_ms + c.e[1]->probe_timeout_ms;
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 1, "a"));
	h_acquire(&c, 1, 2, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	h_advance(&c, c.now + 16 * t_fail);
	ck_assert_msg(c.sent_kind[DM_TK_PROBE] >= 2 * 8, "%s: %zu probes in 16 T_fail",
	    algos[_i], c.sent_kind[DM_TK_PROBE]);
	ck_assert_uint_ge(c.sent_kind[DM_TK_PROBE_ANSWER], 8);
	ck_assert_msg(c.sent_kind[DM_EL_SET_COORDINATOR] == 0,
	    "%s: an epoch behind one live holder", algos[_i]);
	ck_assert_ptr_null(h_find(&c, DM_FX_LOST, 1));
	ck_assert(!h_granted(&c, 2));
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_advance(&c, c.now + 1000);
	ck_assert(h_granted(&c, 2));
	h_fini(&c);
}
END_TEST

START_TEST(lost_request_behind_busy_holders_still_elects)
{
	/* The waiter's request is lost, and node0 keeps re-entering the lock
	 * (nobody waits, as far as it knows): every probe finds the lock in
	 * use.  Probes that find ever other entries while we wait end in an
	 * epoch all the same, which asks again; answered probes alone would
	 * starve the waiter for as long as node0 keeps at it. */
	struct h_cluster c;
	dm_msec_t t_fail;
	uint64_t h = 10;

	t_init(&c, 3, algos[_i]);
	t_fail = c.e[1]->request_timeout_ms + c.e[1]->probe_timeout_ms;
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, h, "a"));
	h_acquire(&c, 1, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	for (int to = 0; to < 3; to++)
		while (h_queued(&c, 1, to, DM_TK_REQUEST) != NULL)
			(void)h_unqueue(&c, 1, to, DM_TK_REQUEST);	/* lost */
	h_pump(&c);
	for (int k = 0; k < 12 && !h_granted(&c, 1); k++) {
		h_advance(&c, c.now + t_fail);
		if (h_granted(&c, h)) {
			ck_assert_int_eq(h_release(&c, 0, h), 0);
			h_pump(&c);
			h_acquire(&c, 0, ++h, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
			h_pump(&c);
		}
	}
	ck_assert_msg(c.sent_kind[DM_TK_PROBE_ANSWER] >= 3, "%s: probes found no entries",
	    algos[_i]);
	ck_assert_msg(c.sent_kind[DM_EL_SET_COORDINATOR] > 0,
	    "%s: no epoch while the lost request starved", algos[_i]);
	if (!h_granted(&c, 1) && h_granted(&c, h))
		ck_assert_int_eq(h_release(&c, 0, h), 0);
	h_advance(&c, c.now + 20 * t_fail);
	ck_assert_msg(h_granted(&c, 1), "%s: the waiter starved", algos[_i]);
	h_fini(&c);
}
END_TEST

START_TEST(suzuki_kasami_waiter_known_to_each_holder_never_elects)
{
	/* node1 waits behind four entries of other nodes, each longer than
	 * T_fail: its probes find four different users.  Under Suzuki-Kasami
	 * each holder has the token's LN and the RN of node1's request, so it
	 * answers that node1 is queued (DM_TK_PROBE_KNOWN), and node1 starts
	 * no epoch; counting the entries alone would have elected at the
	 * fourth. */
	struct h_cluster c;
	dm_msec_t t_fail;

	t_init(&c, 6, "suzuki-kasami");
	t_fail = c.e[1]->request_timeout_ms + c.e[1]->probe_timeout_ms;
	ck_assert_ptr_nonnull(acquire_pumped(&c, 0, 10, "a"));
	for (int k = 2; k <= 5; k++) {
		h_acquire(&c, k, (uint64_t)k, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&c);
	}
	ck_assert_int_eq(h_release(&c, 0, 10), 0);
	h_pump(&c);
	h_advance(&c, c.now + 5);
	ck_assert(h_granted(&c, 2));
	h_acquire(&c, 1, 1, "a", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	for (int k = 2; k <= 5; k++) {
		ck_assert_msg(h_granted(&c, (uint64_t)k), "node%d was not served in turn", k);
		h_advance(&c, c.now + t_fail + t_fail / 2);
		ck_assert(!h_granted(&c, 1));
		ck_assert_int_eq(h_release(&c, k, (uint64_t)k), 0);
		h_pump(&c);
		h_advance(&c, c.now + 5);
	}
	ck_assert(h_granted(&c, 1));
	ck_assert_uint_ge(c.sent_kind[DM_TK_PROBE_ANSWER], 4);
	ck_assert_msg(c.sent_kind[DM_EL_SET_COORDINATOR] == 0,
	    "an epoch although every holder knew the waiter");
	h_fini(&c);
}
END_TEST

START_TEST(lost_token_is_regenerated_under_invitation)
{
	/* The token is lost in flight while every node, the coordinator too,
	 * stays up and answers.  The waiting node's watchdog must end in a new
	 * epoch, which regenerates the token.  Under the invitation election
	 * such a member only asked its coordinator AreYouThere; the
	 * coordinator said yes and nothing regenerated the token, so the
	 * client waited for ever (session 5's open issue). */
	struct h_cluster c;
	struct h_packet req, tok;

	h_init_with(&c, 3, &(struct dm_engine_config){ .algorithm = algos[_i],
	    .election = "invitation", .failure_policy = DM_FAILURE_MAJORITY });
	h_acquire(&c, 2, 1, "t", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	req = h_unqueue(&c, 2, 0, DM_TK_REQUEST);
	ck_assert_uint_eq(req.msg.kind, DM_TK_REQUEST);
	h_inject(&c, 2, 0, &req.msg);
	tok = h_unqueue(&c, 0, 2, DM_TK_TOKEN);	/* lost */
	ck_assert_uint_eq(tok.msg.kind, DM_TK_TOKEN);
	h_pump(&c);
	h_advance(&c, c.now + 100);
	ck_assert(!h_granted(&c, 1));
	/* Far beyond T_fail plus an election's steps. */
	h_advance(&c, c.now + 30000);
	ck_assert_msg(h_granted(&c, 1), "%s: the lost token was never regenerated", algos[_i]);
	ck_assert_uint_gt(c.sent_kind[DM_EL_INVITATION], 0);
	h_fini(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_token");
	TCase *tc = tcase_create("token");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, registered);
	tcase_add_loop_test(tc, repeat_costs_nothing, 0, 3);
	tcase_add_loop_test(tc, holder_keeps_the_lease_after_idle, 0, 3);
	tcase_add_loop_test(tc, grant_waits_for_a_fresh_lease, 0, 3);
	tcase_add_loop_test(tc, withdrawn_request_loses_nobody, 0, 3);
	tcase_add_loop_test(tc, lost_token_is_regenerated_under_invitation, 0, 3);
	tcase_add_loop_test(tc, waiter_behind_a_long_holder_probes_instead_of_electing, 0, 3);
	tcase_add_loop_test(tc, lost_request_behind_busy_holders_still_elects, 0, 3);
	tcase_add_test(tc, suzuki_kasami_waiter_known_to_each_holder_never_elects);
	tcase_add_loop_test(tc, exclusion_and_fencing, 0, 3);
	tcase_add_test(tc, suzuki_kasami_n_messages);
	tcase_add_loop_test(tc, old_epoch_token_discarded, 0, 3);
	tcase_add_loop_test(tc, holder_crash_regenerates, 0, 3);
	tcase_add_loop_test(tc, waiting_member_accepts_its_leader, 0, 3);
	tcase_add_loop_test(tc, epoch_counter_only_grows, 0, 3);
	tcase_add_loop_test(tc, candidate_retries_above_a_higher_epoch, 0, 3);
	tcase_add_loop_test(tc, joining_node_answers_elections_passively, 0, 3);
	tcase_add_loop_test(tc, old_epoch_heartbeat_not_acked, 0, 3);
	tcase_add_loop_test(tc, new_epoch_waits_one_lease, 0, 3);
	tcase_add_loop_test(tc, follower_renews_under_a_new_epoch_at_once, 0, 3);
	tcase_add_loop_test(tc, permission_without_grant_does_not_cross_a_cut, 0, 3);
	tcase_add_loop_test(tc, try_once_permitted_at_a_cut_is_refused, 0, 3);
	tcase_add_loop_test(tc, coordinator_keeps_its_lock_across_its_election, 0, 3);
	tcase_add_loop_test(tc, coordinator_keeps_its_lock_across_nested_elections, 0, 3);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
