/*
 * algo_rcv_roster.c: the engine's locks (".dmlock/...", i.e. the roster
 * lock) under algorithm = rcv, run as Ricart-Agrawala (every member's
 * permission) instead of relative consensus voting.
 *
 * Why not RCV: RCV ranks nodes by the roster and so only works between
 * members of one generation with one roster fingerprint; a message of
 * another roster is dropped or answered STALE.  The roster lock is the
 * one lock that must work *while* rosters differ: it is how they converge
 * (a sponsor needs it to add or re-add a node).  After a partition healed,
 * or a sponsor crashed mid-add, members whose rosters differed answered
 * each other's roster-lock RMs STALE for ever and nobody could sponsor
 * anyone again (seed 289/4 partition, 68/7 crash, 264/7 pause:
 * `dmlock-sim --algorithm rcv --seed 289 --nodes 4 --fault-mask 4
 * --no-shared`).  A REPLY here does not depend on the replier's roster,
 * generation or ranks: names are compared for the tie-break, so every
 * member decides alike.
 *
 *   "A node enters its critical section after all other nodes have been
 *    notified of the request and have sent a reply granting their
 *    permission." (Ricart and Agrawala, CACM 1981, §2.1)
 *
 * Safety: two requesters that list each other each ask the other, and the
 * deferral rule on (number, name) -- a total order all members share --
 * lets only one through (§3.1).  A node in the CS defers every request
 * (stricter than the paper, which relies on the numbers for that).  A
 * requester that is not listed by a member it asks is told to rejoin by
 * the engine, so a one-sided view ends the asker's claim.  A joining node
 * never wants the lock and answers at once (the engine hands it these
 * messages: a sponsor that already counts it needs its permission).
 * Failures: RA §7.4 -- after request_timeout the request is sent again as
 * a probe; members that neither reply nor say they defer within
 * probe_timeout are suspected through the roster; a removed member's reply
 * is taken as given (peer_gone).
 */
#include <errno.h>
#include <string.h>

#include "algo_rcv.h"

#define RCV_RESERVED	".dmlock/"	/* the engine's own locks */

enum rcv_rl_phase {
	RCV_RL_TIMER_NONE = 0,
	RCV_RL_TIMER_WAIT,	/* replies awaited */
	RCV_RL_TIMER_PROBE,	/* probe answers awaited */
};

bool
rcv_rl_name(const char *name, size_t len)
{
	return len >= strlen(RCV_RESERVED) && memcmp(name, RCV_RESERVED, strlen(RCV_RESERVED)) == 0;
}

/* An answer naming the request's lock (l may be NULL: no state here). */
static void
rl_answer(struct dm_engine *e, const struct dm_msg *req, uint8_t kind, dm_slot_t to, uint64_t seq)
{
	struct dm_msg *m = dm_msg_begin(e, kind, NULL);

	m->lock_len = req->lock_len;
	memcpy(m->lock, req->lock, req->lock_len);
	m->lock[req->lock_len] = '\0';
	m->seq = seq;
	dm_send(e, to, m);
}

static void
rl_arm(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s, uint8_t phase)
{
	s->timer_phase = phase;
	dm_lock_timer_arm(e, l, dm_now(e) +
	    (phase == RCV_RL_TIMER_WAIT ? dm_request_timeout(e) : dm_probe_timeout(e)));
}

static void
rl_enter(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s)
{
	s->in_cs = true;
	s->timer_phase = RCV_RL_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	dm_lock_permitted(e, l);
}

static void
rl_send_all(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s, uint8_t kind)
{
	struct dm_msg *m = dm_msg_begin(e, kind, l);

	m->seq = s->seq;
	for (size_t j = 0; j < RCV_NODES_MAX; j++)
		if (dm_bit_get(s->awaiting, j))
			dm_send(e, (dm_slot_t)j, m);
}

void
rcv_rl_request(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s, uint64_t *clock)
{
	/* "Our_Sequence_Number := Highest_Sequence_Number + 1; ...
	 *  Send_Message(REQUEST(Our_Sequence_Number, me), j)" for all j != me. */
	dm_slot_t self = dm_roster_self(e);

	/* (A request still out is given up first: the requests we deferred
	 * behind it may precede the new one, and they must not wait for us.) */
	if (s->requesting)
		rcv_rl_release(e, l, s);
	s->requesting = true;
	s->in_cs = false;
	s->seq = ++*clock;
	s->outstanding = 0;
	memset(s->awaiting, 0, sizeof(s->awaiting));
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self)
			continue;
		dm_bit_set(s->awaiting, j, true);
		s->outstanding++;
	}
	if (s->outstanding == 0) {
		rl_enter(e, l, s);
		return;
	}
	rl_send_all(e, l, s, RCV_MSG_RL_REQUEST);
	rl_arm(e, l, s, RCV_RL_TIMER_WAIT);
}

void
rcv_rl_release(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s)
{
	/* "Requesting_Critical_Section := FALSE; FOR j ... IF Reply_Deferred[j]
	 *  THEN ... Send_Message(REPLY, j)" */
	struct dm_msg *m;

	s->requesting = false;
	s->in_cs = false;
	s->timer_phase = RCV_RL_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	for (size_t j = 0; j < RCV_NODES_MAX; j++) {
		if (!dm_bit_get(s->deferred, j))
			continue;
		dm_bit_set(s->deferred, j, false);
		m = dm_msg_begin(e, RCV_MSG_RL_REPLY, l);
		m->seq = s->deferred_seq[j];
		dm_send(e, (dm_slot_t)j, m);
	}
}

bool
rcv_rl_may_handoff(const struct rcv_rl *s)
{
	for (size_t i = 0; i < sizeof(s->deferred); i++)
		if (s->deferred[i] != 0)
			return false;
	return s->in_cs;
}

static bool
rl_would_defer(const struct dm_engine *e, const struct rcv_rl *s, dm_slot_t j, uint64_t k)
{
	if (s == NULL || !s->requesting || !dm_roster_joined(e))
		return false;	/* (a joining node never wants the lock) */
	if (s->in_cs)
		return true;
	return k > s->seq || (k == s->seq && dm_roster_compare(e, j, dm_roster_self(e)) > 0);
}

static void
rl_on_request(struct dm_engine *e, struct rcv_rl *s, dm_slot_t j, const struct dm_msg *m,
    bool probe)
{
	/* "IF Defer_it THEN Reply_Deferred[j] := TRUE ELSE Send_Message(REPLY, j)" */
	if (!rl_would_defer(e, s, j, m->seq)) {
		if (s != NULL && dm_bit_get(s->deferred, j) && s->deferred_seq[j] <= m->seq)
			dm_bit_set(s->deferred, j, false);	/* an older request, given up */
		rl_answer(e, m, RCV_MSG_RL_REPLY, j, m->seq);
		return;
	}
	/* A newer request replaces a given-up one (never the reverse). */
	if (!dm_bit_get(s->deferred, j) || s->deferred_seq[j] < m->seq)
		s->deferred_seq[j] = m->seq;
	dm_bit_set(s->deferred, j, true);
	if (probe)
		rl_answer(e, m, RCV_MSG_RL_HERE, j, m->seq);
}

int
rcv_rl_receive(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s, dm_slot_t from,
    const struct dm_msg *m, uint64_t *clock)
{
	if (from >= RCV_NODES_MAX)
		return -EPROTO;
	switch (m->kind) {
	case RCV_MSG_RL_REQUEST:
	case RCV_MSG_RL_PROBE:
		/* "Highest_Sequence_Number := Maximum(Highest_Sequence_Number, k)" */
		if (m->seq > *clock)
			*clock = m->seq;
		rl_on_request(e, s, from, m, m->kind == RCV_MSG_RL_PROBE);
		return 0;
	case RCV_MSG_RL_REPLY:
		if (s == NULL || !s->requesting || s->in_cs || m->seq != s->seq ||
		    !dm_bit_get(s->awaiting, from))
			return 0;	/* late answer to an earlier request, or a duplicate */
		dm_bit_set(s->awaiting, from, false);
		if (--s->outstanding == 0)
			rl_enter(e, l, s);
		else
			rl_arm(e, l, s, RCV_RL_TIMER_WAIT);	/* §7.4: restarted on a REPLY */
		return 0;
	case RCV_MSG_RL_HERE:
		if (s != NULL && s->requesting && !s->in_cs && m->seq == s->seq)
			dm_bit_set(s->answered, from, true);
		return 0;
	default:
		return -EPROTO;
	}
}

void
rcv_rl_timer(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s)
{
	/* RA §7.4: probe the members still awaited; suspect the silent ones. */
	uint8_t suspects[RCV_NODES_MAX / 8];

	if (!s->requesting || s->in_cs)
		return;
	if (s->timer_phase != RCV_RL_TIMER_PROBE) {
		memset(s->answered, 0, sizeof(s->answered));
		rl_send_all(e, l, s, RCV_MSG_RL_PROBE);
		rl_arm(e, l, s, RCV_RL_TIMER_PROBE);
		return;
	}
	for (size_t i = 0; i < sizeof(suspects); i++)
		suspects[i] = (uint8_t)(s->awaiting[i] & ~s->answered[i]);
	rl_arm(e, l, s, RCV_RL_TIMER_WAIT);
	/* May remove nodes and so re-enter peer_gone for this lock. */
	for (size_t j = 0; j < RCV_NODES_MAX; j++)
		if (dm_bit_get(suspects, j))
			dm_roster_suspect(e, (dm_slot_t)j);
}

void
rcv_rl_peer_gone(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s, dm_slot_t slot)
{
	/* "Any node which is awaiting a REPLY message from the failed node
	 *  should pretend that a REPLY was received." (RA §7.4) */
	if (slot >= RCV_NODES_MAX)
		return;
	dm_bit_set(s->deferred, slot, false);
	dm_bit_set(s->answered, slot, false);
	if (!s->requesting || s->in_cs || !dm_bit_get(s->awaiting, slot))
		return;
	dm_bit_set(s->awaiting, slot, false);
	if (--s->outstanding == 0)
		rl_enter(e, l, s);
}

bool
rcv_rl_idle(const struct rcv_rl *s)
{
	for (size_t i = 0; i < sizeof(s->deferred); i++)
		if (s->deferred[i] != 0)
			return false;
	return !s->requesting;
}
