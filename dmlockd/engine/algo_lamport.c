/*
 * algo_lamport.c: Lamport's timestamp mutual exclusion as modified in the
 * lecture "Synchronisation and election" (sync-and-election-lecture.txt,
 * slides 9-16), one instance per lock name.  L. Lamport, "Time, Clocks, and
 * the Ordering of Events in a Distributed System", CACM 21(7), 1978.
 *
 *   "A processor p requests the CS by sending Request(t) to every other
 *    processor.  A processor q replies by sending Reply(t) to p where t =
 *    null if q is not competing or the request of q is later, t = the time
 *    when q made the request, if q's request was earlier." (slide 9)
 *   "p can enter CS only if p has received a Reply(t) from every other
 *    processor and head(my_Q) = p." (slide 10)
 *   "Release_CS(): for each processor k != self do send(k, Release)" (slide 13)
 *   "3(M-1) messages might be sent in order for p to enter its CS" (slide 16)
 *
 * my_Q holds only requests earlier than ours (Reply(t != null)), so "head
 * = p" once every reply is in means "my_Q holds nobody but p": a set of
 * (slot, timestamp) suffices.  Timestamps are (seq, node name) pairs, a
 * total order that does not change with the roster.  Needs FIFO links: a
 * RELEASE must not overtake the Reply(t) that put its sender in my_Q.
 *
 * What this file adds to the lecture (which assumes no failures):
 *  - Exclusive mode only (no DM_CAP_SHARED): the engine refuses shared
 *    requests with -EOPNOTSUPP before they reach us.
 *  - Try-once: a REQUEST flagged TRY is answered BUSY instead of Reply(t);
 *    the requester withdraws (RELEASE to all) and refuses with -EBUSY.
 *  - Replies, BUSY and probe answers echo the request's timestamp, so late
 *    answers to a withdrawn request are ignored.  Reply(t) carries t in
 *    arg (0 = null: timestamps start at 1).
 *  - Leases (failure_policy = majority): the REQUEST doubles as a lease
 *    round (serial = dm_lease_round()); every Reply echoes it as an ack
 *    unless we agreed to remove the requester, so N-1 Replies are a
 *    majority and a grant needs no extra heartbeat round (2T, as RA).
 *  - Failure: as in RA §7.4 - after the request timeout the nodes we still
 *    wait for (a Reply, or the RELEASE of an earlier requester) are probed
 *    (ARE_YOU_THERE); those silent for another probe timeout are suspected
 *    and the engine's roster rules (majority confirmation) remove them;
 *    peer_gone() then counts the missing Reply as received and drops the
 *    node from my_Q.  A RELEASE from a queued node restarts the timeout
 *    ("a new timeout period may begin"), so long queues cost no probes.
 *  - The probe carries our request and is answered exactly like it (Reply):
 *    the engine drops algorithm messages to a node that is still joining,
 *    so a REQUEST sent right after NODE_ADD may be lost; the probe's Reply
 *    recovers it.  A null Reply to a probe from a node in my_Q means its
 *    RELEASE (sent before, FIFO) is in: it leaves my_Q.
 *  - A joining node is ordered by its synchronised clock (RA §7.2.3): our
 *    earlier request answers its REQUEST with Reply(t).
 */
#include <errno.h>
#include <string.h>

#include "dm_algorithm.h"

enum lp_timer_phase {
	LP_TIMER_NONE = 0,
	LP_TIMER_WAIT,
	LP_TIMER_PROBE,
};

struct lp_node {
	uint64_t	highest_seq;	/* the Lamport clock, node-global */
};

struct lp_lock {
	uint64_t	our_seq;		/* my_timestamp */
	uint64_t	lease_serial;		/* our request doubles as a lease round */
	bool		requesting;		/* is_requesting */
	bool		in_cs;
	bool		try_once;
	uint8_t		timer_phase;
	uint16_t	outstanding;		/* reply_needed */
	uint16_t	n_queue;		/* others in my_Q */
	uint16_t	n_told;			/* nodes told "mine is earlier" */
	uint8_t		awaiting[DM_NODES_MAX / 8];	/* Reply still needed from */
	uint8_t		queued[DM_NODES_MAX / 8];	/* in my_Q (earlier request) */
	uint8_t		told[DM_NODES_MAX / 8];		/* we answered Reply(t != null) */
	uint8_t		probed[DM_NODES_MAX / 8];
	uint8_t		answered[DM_NODES_MAX / 8];
	uint64_t	queue_seq[DM_NODES_MAX];	/* my_Q[j] */
};

static struct lp_node *
lp_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

static void
lp_merge(struct dm_engine *e, uint64_t seq)
{
	struct lp_node *n = lp_node(e);

	if (seq > n->highest_seq)
		n->highest_seq = seq;
}

/* An answer naming the lock of req, whether or not we keep state for it.
 * arg: our timestamp for Reply(t), 0 for Reply(null).  serial: the
 * request's lease round echoed as an acknowledgement, or 0 if we may not
 * acknowledge (we agreed to remove the requester). */
static void
lp_answer(struct dm_engine *e, const struct dm_msg *req, uint8_t kind, dm_slot_t to,
    uint64_t arg)
{
	uint64_t serial = req->serial != 0 && dm_lease_may_ack(e, to) ? req->serial : 0;

	struct dm_msg *m = dm_msg_begin(e, kind, NULL);

	m->lock_len = req->lock_len;
	memcpy(m->lock, req->lock, req->lock_len);
	m->lock[req->lock_len] = '\0';
	m->seq = req->seq;
	m->arg = arg;
	m->serial = serial;
	dm_send(e, to, m);
}

static void
lp_broadcast(struct dm_engine *e, const struct dm_msg *m)
{
	dm_slot_t self = dm_roster_self(e);

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != self && !dm_roster_departing(e, j))
			dm_send(e, j, m);
}

static void
lp_arm(struct dm_engine *e, struct dm_lock *l, struct lp_lock *s, uint8_t phase)
{
	s->timer_phase = phase;
	dm_lock_timer_arm(e, l, dm_now(e) +
	    (phase == LP_TIMER_WAIT ? dm_request_timeout(e) : dm_probe_timeout(e)));
}

static void
lp_drop_queued(struct lp_lock *s, dm_slot_t j)
{
	if (dm_bit_get(s->queued, j)) {
		dm_bit_set(s->queued, j, false);
		s->n_queue--;
	}
}

/* "wait until reply_needed = 0 and head(my_PQ) = self" */
static void
lp_try_enter(struct dm_engine *e, struct dm_lock *l, struct lp_lock *s)
{
	if (!s->requesting || s->in_cs || s->outstanding > 0 || s->n_queue > 0)
		return;
	s->in_cs = true;
	s->timer_phase = LP_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	dm_lock_permitted(e, l);
}

/* "Release_CS(): for each processor k != self do send(k, Release);
 *  is_requesting := False; my_PQ := empty" */
static void
lp_stop(struct dm_engine *e, struct dm_lock *l, struct lp_lock *s)
{
	struct dm_msg *m;

	if (!s->requesting)
		return;
	m = dm_msg_begin(e, DM_LP_RELEASE, l);
	m->seq = s->our_seq;
	lp_broadcast(e, m);
	s->requesting = false;
	s->in_cs = false;
	s->outstanding = 0;
	s->n_queue = 0;
	s->n_told = 0;
	memset(s->awaiting, 0, sizeof(s->awaiting));
	memset(s->queued, 0, sizeof(s->queued));
	memset(s->told, 0, sizeof(s->told));
	s->timer_phase = LP_TIMER_NONE;
	dm_lock_timer_stop(e, l);
}

static int
lp_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	/* "my_timestamp := my_current_Lamport_time; for each processor k != self
	 *  do send(k, m)" */
	struct lp_lock *s = dm_lock_state(l);
	struct dm_msg *m;
	dm_slot_t self = dm_roster_self(e);

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	memset(s, 0, sizeof(*s));
	s->requesting = true;
	s->try_once = try_once;
	s->our_seq = ++lp_node(e)->highest_seq;
	s->lease_serial = dm_lease_round(e);
	m = dm_msg_begin(e, DM_LP_REQUEST, l);
	m->seq = s->our_seq;
	m->serial = s->lease_serial;
	m->flags |= try_once ? DM_MSG_F_TRY : 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self || dm_roster_departing(e, j))
			continue;
		dm_bit_set(s->awaiting, j, true);
		s->outstanding++;
		dm_send(e, j, m);
	}
	if (s->outstanding == 0)
		lp_try_enter(e, l, s);
	else
		lp_arm(e, l, s, LP_TIMER_WAIT);
	return 0;
}

static void
lp_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	/* Not in the lecture: give up.  RELEASE tells those we answered
	 * Reply(t) not to wait for us; late answers fail the seq check. */
	lp_stop(e, l, dm_lock_state(l));
}

static void
lp_release(struct dm_engine *e, struct dm_lock *l)
{
	lp_stop(e, l, dm_lock_state(l));
}

static bool
lp_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	/* Nobody was told to wait for our RELEASE: no other node is queued. */
	const struct lp_lock *s = dm_lock_state_const(l);

	return s->in_cs && s->n_told == 0 && mode == DM_MODE_EXCLUSIVE;
}

/* Is our request earlier than (k, j)? */
static bool
lp_ours_earlier(struct dm_engine *e, const struct lp_lock *s, dm_slot_t j, uint64_t k)
{
	return s->our_seq < k ||
	    (s->our_seq == k && dm_roster_compare(e, dm_roster_self(e), j) < 0);
}

static int
lp_on_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* "on the receipt of Request from p do m := Reply; if not(is_requesting)
	 *  or (my_timestamp > Request.timestamp) then m.timestamp := null else
	 *  m.timestamp := my_timestamp; send(p, m)" */
	struct lp_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	lp_merge(e, m->seq);
	if (s == NULL || !s->requesting || !lp_ours_earlier(e, s, j, m->seq)) {
		lp_answer(e, m, DM_LP_REPLY, j, 0);
		return 0;
	}
	if (m->flags & DM_MSG_F_TRY) {
		lp_answer(e, m, DM_LP_BUSY, j, 0);
		return 0;
	}
	if (!dm_bit_get(s->told, j)) {
		dm_bit_set(s->told, j, true);
		s->n_told++;
	}
	lp_answer(e, m, DM_LP_REPLY, j, s->our_seq);	/* timestamps start at 1 */
	return 0;
}

static int
lp_on_reply(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* "on the receipt of Reply from p do if Reply.timestamp != null then
	 *  insert p in my_PQ; reply_needed := reply_needed - 1" */
	struct lp_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	dm_lease_ack(e, j, m->serial);	/* the Reply acknowledges our lease round */
	lp_merge(e, m->arg);
	if (s != NULL && s->requesting && m->seq == s->our_seq && !dm_bit_get(s->awaiting, j) &&
	    m->arg == 0 && dm_bit_get(s->queued, j)) {
		/* An answer to our probe: j no longer has an earlier request (its
		 * RELEASE, sent before this on the FIFO link, is in). */
		lp_drop_queued(s, j);
		lp_try_enter(e, l, s);
		return 0;
	}
	if (s == NULL || !s->requesting || s->in_cs || m->seq != s->our_seq ||
	    !dm_bit_get(s->awaiting, j))
		return 0;	/* late answer to a withdrawn request, or a duplicate */
	dm_bit_set(s->awaiting, j, false);
	s->outstanding--;
	if (m->arg != 0 && !dm_bit_get(s->queued, j)) {
		dm_bit_set(s->queued, j, true);
		s->queue_seq[j] = m->arg;
		s->n_queue++;
	}
	lp_try_enter(e, l, s);
	if (s->requesting && !s->in_cs)
		lp_arm(e, l, s, LP_TIMER_WAIT);
	return 0;
}

static int
lp_on_release(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* "on the receipt of Release from p do if is_requesting then remove p
	 *  from my_PQ" */
	struct lp_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (s == NULL || !s->requesting || !dm_bit_get(s->queued, j) || s->queue_seq[j] != m->seq)
		return 0;
	lp_drop_queued(s, j);
	lp_try_enter(e, l, s);
	if (s->requesting && !s->in_cs && s->timer_phase == LP_TIMER_WAIT)
		lp_arm(e, l, s, LP_TIMER_WAIT);	/* progress: a new timeout period */
	return 0;
}

static int
lp_on_busy(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* Not in the lecture: a try-once request met an earlier one. */
	struct lp_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (s == NULL || !s->requesting || s->in_cs || !s->try_once || m->seq != s->our_seq)
		return 0;
	lp_stop(e, l, s);
	dm_lock_refused(e, l, -EBUSY);
	return 0;
}

static int
lp_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct lp_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (s != NULL)
		dm_bit_set(s->answered, from, true);	/* alive */
	switch (m->kind) {
	case DM_LP_REQUEST:
		return lp_on_request(e, l, from, m);
	case DM_LP_REPLY:
		return lp_on_reply(e, l, from, m);
	case DM_LP_RELEASE:
		return lp_on_release(e, l, from, m);
	case DM_LP_BUSY:
		return lp_on_busy(e, l, from, m);
	case DM_LP_ARE_YOU_THERE:
		/* The probe carries the prober's request and is answered like
		 * the REQUEST itself (a REQUEST sent to us while we were still
		 * joining was dropped by the engine; a Reply is idempotent). */
		return lp_on_request(e, l, from, m);
	case DM_LP_YES_I_AM_HERE:
		return 0;
	default:
		return -EPROTO;
	}
}

static void
lp_timer(struct dm_engine *e, struct dm_lock *l)
{
	/* RA §7.4 applied to Lamport: probe everyone we wait for (a Reply or
	 * the RELEASE of an earlier request), suspect those that stay silent. */
	struct lp_lock *s = dm_lock_state(l);
	uint8_t suspects[DM_NODES_MAX / 8];
	struct dm_msg *m;

	if (!s->requesting || s->in_cs)
		return;
	if (s->timer_phase == LP_TIMER_WAIT) {
		memset(s->answered, 0, sizeof(s->answered));
		m = dm_msg_begin(e, DM_LP_ARE_YOU_THERE, l);
		m->seq = s->our_seq;
		m->serial = s->lease_serial;
		m->flags |= s->try_once ? DM_MSG_F_TRY : 0;
		for (size_t j = 0; j < DM_NODES_MAX; j++) {
			bool wait = dm_bit_get(s->awaiting, j) || dm_bit_get(s->queued, j);
			dm_bit_set(s->probed, j, wait);
			if (wait)
				dm_send(e, (dm_slot_t)j, m);
		}
		lp_arm(e, l, s, LP_TIMER_PROBE);
		return;
	}
	for (size_t i = 0; i < sizeof(suspects); i++)
		suspects[i] = (uint8_t)(s->probed[i] & ~s->answered[i]);
	lp_arm(e, l, s, LP_TIMER_WAIT);
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(suspects, j))
			dm_roster_suspect(e, (dm_slot_t)j);
}

static void
lp_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* "Act as if every answer it owes arrived, forget what we owe it":
	 * its Reply counts as received (null), its RELEASE as received. */
	struct lp_lock *s = dm_lock_state(l);

	dm_bit_set(s->answered, slot, false);
	dm_bit_set(s->probed, slot, false);
	if (dm_bit_get(s->told, slot)) {
		dm_bit_set(s->told, slot, false);
		s->n_told--;
	}
	if (!s->requesting)
		return;
	lp_drop_queued(s, slot);
	if (dm_bit_get(s->awaiting, slot)) {
		dm_bit_set(s->awaiting, slot, false);
		s->outstanding--;
	}
	lp_try_enter(e, l, s);
}

static bool
lp_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct lp_lock *s = dm_lock_state_const(l);

	return !s->requesting;
}

static uint64_t
lp_clock_get(const struct dm_engine *e)
{
	const struct lp_node *n = dm_algo_node_state_const(e);

	return n->highest_seq;
}

static void
lp_clock_merge(struct dm_engine *e, uint64_t seq)
{
	lp_merge(e, seq);
}

const struct dm_algorithm dm_algo_lamport = {
	.name = "lamport",
	.caps = DM_CAP_SURVIVES_FAILURE | DM_CAP_NEEDS_FIFO,
	.lock_state_size = sizeof(struct lp_lock),
	.node_state_size = sizeof(struct lp_node),
	.request = lp_request,
	.withdraw = lp_withdraw,
	.release = lp_release,
	.may_handoff = lp_may_handoff,
	.receive = lp_receive,
	.timer = lp_timer,
	.peer_gone = lp_peer_gone,
	.idle = lp_idle,
	.clock_get = lp_clock_get,
	.clock_merge = lp_clock_merge,
};
