/*
 * algo_ricart.c: Ricart-Agrawala mutual exclusion, one instance per lock
 * name.  G. Ricart and A. K. Agrawala, "An Optimal Algorithm for Mutual
 * Exclusion in Computer Networks", CACM 24(1), 1981.
 *
 *   "A node enters its critical section after all other nodes have been
 *    notified of the request and have sent a reply granting their
 *    permission." (§2.1)
 *   "Defer_it := Requesting_Critical_Section AND ((k > Our_Sequence_Number)
 *    OR (k = Our_Sequence_Number AND j > me))" (§2.2)
 *   "readers never defer a REQUEST for another reader" (§6.6)
 *
 * What this file adds to the paper, and why it is safe:
 *  - One node-global Highest_Sequence_Number for all lock names (a Lamport
 *    clock).  The proofs of §3 use only two facts about sequence numbers:
 *    a node chooses Our_Sequence_Number greater than every sequence number
 *    it has seen in a REQUEST for this lock, and (seq, node name) is a total
 *    order.  A global maximum over all names is >= the per-name maximum, so
 *    the chosen number is still greater than required; the order is still
 *    total.  Mutual exclusion (§3.1), deadlock freedom (§3.2), starvation
 *    freedom (§3.3) and the FIFO bound of the Appendix carry over.  Numbers
 *    are 64-bit, so the modulus of §6.4 is not needed.
 *  - Node numbers are names compared bytewise (§7.1 NAMES table), so the
 *    tie-break does not change when the roster does.
 *  - REPLY, BUSY and YES_I_AM_HERE echo the sequence number of the request
 *    they answer: a node that withdrew a request (client cancel, wait
 *    timeout, try refused) ignores late answers to it.
 *  - Try-once: a REQUEST flagged TRY is never deferred; a node that would
 *    defer it answers BUSY and the requester withdraws with -EBUSY.
 *  - ARE_YOU_THERE carries the prober's request and is judged by the normal
 *    deferral rule (a bare REPLY, as §7.4 reads literally, could let the
 *    prober enter while we are in our critical section).
 *  - REPLY carries the replier's highest fencing token (the engine fills
 *    msg.token), so the next holder's token exceeds every earlier one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm_algorithm.h"

enum ra_timer_phase {
	RA_TIMER_NONE = 0,
	RA_TIMER_WAIT,		/* §7.4 first timeout: replies awaited */
	RA_TIMER_PROBE,		/* §7.4 second timeout: probe answers awaited */
};

struct ra_deferred {
	uint64_t	seq;
	uint64_t	lease_serial;	/* echoed in the REPLY as a lease ack */
	dm_slot_t	slot;
};

struct ra_node {
	uint64_t	highest_seq;	/* Highest_Sequence_Number (node-global) */
};

struct ra_lock {
	uint64_t	 our_seq;		/* Our_Sequence_Number */
	uint64_t	 lease_serial;		/* our request doubles as a lease round */
	bool		 requesting;		/* Requesting_Critical_Section */
	bool		 in_cs;
	bool		 try_once;
	uint8_t		 mode;
	uint8_t		 timer_phase;
	uint16_t	 outstanding;		/* Outstanding_Reply_Count */
	uint16_t	 n_deferred, cap_deferred;
	uint8_t		 awaiting[DM_NODES_MAX / 8];	/* Awaiting_Reply */
	uint8_t		 answered[DM_NODES_MAX / 8];	/* probe answers this round */
	struct ra_deferred *deferred;		/* Reply_Deferred, with the seq to echo */
};

static struct ra_node *
ra_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

static void
ra_answer(struct dm_engine *e, struct dm_lock *l, uint8_t kind, dm_slot_t to, uint64_t seq,
    uint64_t lease_serial)
{
	struct dm_msg *m = dm_msg_begin(e, kind, l);

	m->seq = seq;
	m->serial = lease_serial;
	m->arg = lease_serial != 0 && dm_lease_may_ack(e, to) ? 1 : 0;
	dm_send(e, to, m);
}

/* Same, for a lock that has no state here (nothing to defer). */
static void
ra_answer_name(struct dm_engine *e, const struct dm_msg *req, uint8_t kind, dm_slot_t to)
{
	struct dm_msg *m = dm_msg_begin(e, kind, NULL);

	m->lock_len = req->lock_len;
	memcpy(m->lock, req->lock, req->lock_len);
	m->lock[req->lock_len] = '\0';
	m->seq = req->seq;
	m->serial = req->serial;
	m->arg = req->serial != 0 && dm_lease_may_ack(e, to) ? 1 : 0;
	dm_send(e, to, m);
}

static int
ra_deferred_find(const struct ra_lock *s, dm_slot_t slot)
{
	for (int i = 0; i < s->n_deferred; i++)
		if (s->deferred[i].slot == slot)
			return i;
	return -1;
}

static void
ra_deferred_drop(struct ra_lock *s, int i)
{
	s->deferred[i] = s->deferred[--s->n_deferred];
	if (s->n_deferred == 0) {
		free(s->deferred);
		s->deferred = NULL;
		s->cap_deferred = 0;
	}
}

static int
ra_deferred_add(struct dm_engine *e, struct ra_lock *s, dm_slot_t slot, uint64_t seq,
    uint64_t lease_serial)
{
	int i = ra_deferred_find(s, slot);

	if (i >= 0) {
		/* A newer request replaces a withdrawn one (never the reverse). */
		if (seq >= s->deferred[i].seq) {
			s->deferred[i].seq = seq;
			s->deferred[i].lease_serial = lease_serial;
		}
		return 0;
	}
	if (s->n_deferred == s->cap_deferred) {
		size_t cap = s->cap_deferred ? s->cap_deferred * 2u : 4u;
		struct ra_deferred *d;
		if (cap > DM_NODES_MAX)
			cap = DM_NODES_MAX;
		d = realloc(s->deferred, cap * sizeof(*d));
		if (d == NULL)
			return -ENOMEM;
		s->deferred = d;
		s->cap_deferred = (uint16_t)cap;
	}
	s->deferred[s->n_deferred].slot = slot;
	s->deferred[s->n_deferred].seq = seq;
	s->deferred[s->n_deferred].lease_serial = lease_serial;
	s->n_deferred++;
	return 0;
}

/* "FOR j := 1 STEP 1 UNTIL N DO IF Reply_Deferred[j] THEN ... Send_Message(REPLY, j)" */
static void
ra_send_deferred(struct dm_engine *e, struct dm_lock *l, struct ra_lock *s)
{
	while (s->n_deferred > 0) {
		struct ra_deferred d = s->deferred[s->n_deferred - 1];
		ra_deferred_drop(s, s->n_deferred - 1);
		ra_answer(e, l, DM_RA_REPLY, d.slot, d.seq, d.lease_serial);
	}
}

static void
ra_stop(struct dm_engine *e, struct dm_lock *l, struct ra_lock *s)
{
	s->requesting = false;
	s->in_cs = false;
	s->timer_phase = RA_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	ra_send_deferred(e, l, s);
}

static void
ra_enter(struct dm_engine *e, struct dm_lock *l, struct ra_lock *s)
{
	/* "The timer should be ... cancelled when the critical section processing begins." */
	s->in_cs = true;
	s->timer_phase = RA_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	dm_lock_permitted(e, l);
}

static void
ra_arm(struct dm_engine *e, struct dm_lock *l, struct ra_lock *s, uint8_t phase)
{
	s->timer_phase = phase;
	dm_lock_timer_arm(e, l, dm_now(e) +
	    (phase == RA_TIMER_WAIT ? dm_request_timeout(e) : dm_probe_timeout(e)));
}

static int
ra_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	/* "Requesting_Critical_Section := TRUE;
	 *  Our_Sequence_Number := Highest_Sequence_Number + 1; ...
	 *  Send_Message(REQUEST(Our_Sequence_Number, me), j)" for all j != me. */
	struct ra_lock *s = dm_lock_state(l);
	struct ra_node *n = ra_node(e);
	struct dm_msg *m;
	dm_slot_t self = dm_roster_self(e);

	s->requesting = true;
	s->in_cs = false;
	s->try_once = try_once;
	s->mode = (uint8_t)mode;
	s->our_seq = ++n->highest_seq;
	s->outstanding = 0;
	memset(s->awaiting, 0, sizeof(s->awaiting));
	s->lease_serial = dm_lease_round(e);
	m = dm_msg_begin(e, DM_RA_REQUEST, l);
	m->seq = s->our_seq;
	m->serial = s->lease_serial;
	m->mode = (uint8_t)mode;
	m->flags |= try_once ? DM_MSG_F_TRY : 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self)
			continue;
		dm_bit_set(s->awaiting, j, true);
		s->outstanding++;
		dm_send(e, j, m);
	}
	if (s->outstanding == 0)
		ra_enter(e, l, s);
	else
		ra_arm(e, l, s, RA_TIMER_WAIT);
	return 0;
}

static void
ra_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	/* Not in the paper: give up a request.  Answers still owed to us are
	 * recognised by their sequence number and ignored. */
	ra_stop(e, l, dm_lock_state(l));
}

static void
ra_release(struct dm_engine *e, struct dm_lock *l)
{
	/* "Requesting_Critical_Section := FALSE; FOR j ... IF Reply_Deferred[j]
	 *  THEN BEGIN Reply_Deferred[j] := FALSE; Send_Message(REPLY, j) END" */
	ra_stop(e, l, dm_lock_state(l));
}

static bool
ra_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	const struct ra_lock *s = dm_lock_state_const(l);

	if (dm_broken(e, DM_BREAK_GREEDY_HANDOFF))
		return s->in_cs;
	return s->in_cs && s->n_deferred == 0;
}

/* Would we defer a request (k, j, mode) right now? */
static bool
ra_would_defer(struct dm_engine *e, const struct ra_lock *s, dm_slot_t j, uint64_t k,
    uint8_t mode)
{
	if (s == NULL || !s->requesting || dm_broken(e, DM_BREAK_NEVER_DEFER))
		return false;
	/* §6.6: "readers never defer a REQUEST for another reader" */
	if (s->mode == DM_MODE_SHARED && mode == DM_MODE_SHARED)
		return false;
	return k > s->our_seq ||
	    (k == s->our_seq && dm_roster_compare(e, j, dm_roster_self(e)) > 0);
}

static int
ra_on_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m,
    bool probe)
{
	/* "Highest_Sequence_Number := Maximum(Highest_Sequence_Number, k); ...
	 *  IF Defer_it THEN Reply_Deferred[j] := TRUE ELSE Send_Message(REPLY, j)" */
	struct ra_node *n = ra_node(e);
	struct ra_lock *s = l != NULL ? dm_lock_state(l) : NULL;
	int i;

	if (m->seq > n->highest_seq)
		n->highest_seq = m->seq;
	if (probe && dm_broken(e, DM_BREAK_PROBE_BARE_REPLY)) {
		/* Negative control: the probe is answered "REPLY(me)" without
		 * judging the request it carries. */
		ra_answer_name(e, m, DM_RA_REPLY, j);
		return 0;
	}
	if (!ra_would_defer(e, s, j, m->seq, m->mode)) {
		if (s != NULL && (i = ra_deferred_find(s, j)) >= 0 && s->deferred[i].seq < m->seq)
			ra_deferred_drop(s, i);	/* an older, withdrawn request */
		ra_answer_name(e, m, DM_RA_REPLY, j);
		return 0;
	}
	if (m->flags & DM_MSG_F_TRY) {
		/* Try-once: never deferred, refused instead. */
		if ((i = ra_deferred_find(s, j)) >= 0 && s->deferred[i].seq < m->seq)
			ra_deferred_drop(s, i);
		ra_answer(e, l, DM_RA_BUSY, j, m->seq, 0);
		return 0;
	}
	if (ra_deferred_add(e, s, j, m->seq, m->serial) < 0) {
		/* Out of memory: refusing to answer would stall j forever; the
		 * only safe choice left is to wait, so ask j to probe us again. */
		dm_log(e, DM_LOG_ERR, "out of memory deferring a request", l, j);
		return -ENOMEM;
	}
	/* §7.4: "If Reply_Deferred[j] is TRUE, a YES_I_AM_HERE message should be sent" */
	if (probe)
		ra_answer(e, l, DM_RA_YES_I_AM_HERE, j, m->seq, 0);
	return 0;
}

static int
ra_on_reply(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* "Outstanding_Reply_Count := Outstanding_Reply_Count - 1";
	 * "The timer should be restarted when a REPLY is received" (§7.4). */
	struct ra_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (m->arg == 1)
		dm_lease_ack(e, j, m->serial);	/* the REPLY acknowledges our lease round */
	if (s == NULL || !s->requesting || s->in_cs || m->seq != s->our_seq ||
	    !dm_bit_get(s->awaiting, j))
		return 0;	/* late answer to a withdrawn request, or a duplicate */
	dm_bit_set(s->awaiting, j, false);
	s->outstanding--;
	if (s->outstanding == 0)
		ra_enter(e, l, s);
	else
		ra_arm(e, l, s, RA_TIMER_WAIT);
	return 0;
}

static int
ra_on_busy(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* Not in the paper: a try-once request met a node that would defer it. */
	struct ra_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (s == NULL || !s->requesting || s->in_cs || !s->try_once || m->seq != s->our_seq)
		return 0;
	ra_stop(e, l, s);
	dm_lock_refused(e, l, -EBUSY);
	return 0;
}

static int
ra_on_yes_i_am_here(struct dm_engine *e, struct dm_lock *l, dm_slot_t j,
    const struct dm_msg *m)
{
	/* "If critical section processing exceeds the timeout, all nodes will
	 *  respond with YES_I_AM_HERE messages and a new timeout period may begin." */
	struct ra_lock *s = l != NULL ? dm_lock_state(l) : NULL;

	if (s == NULL || !s->requesting || s->in_cs || m->seq != s->our_seq)
		return 0;
	dm_bit_set(s->answered, j, true);
	return 0;
}

static int
ra_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	switch (m->kind) {
	case DM_RA_REQUEST:
		return ra_on_request(e, l, from, m, false);
	case DM_RA_ARE_YOU_THERE:
		return ra_on_request(e, l, from, m, true);
	case DM_RA_REPLY:
		return ra_on_reply(e, l, from, m);
	case DM_RA_BUSY:
		return ra_on_busy(e, l, from, m);
	case DM_RA_YES_I_AM_HERE:
		return ra_on_yes_i_am_here(e, l, from, m);
	default:
		return -EPROTO;
	}
}

static void
ra_timer(struct dm_engine *e, struct dm_lock *l)
{
	/* "If the timer expires, all nodes for which Awaiting_Reply is TRUE are
	 *  suspected of having failed.  A probing message, ARE_YOU_THERE(me),
	 *  should be sent to each suspect node.  If no answer is received during
	 *  a second timeout period, the suspect node has failed." */
	struct ra_lock *s = dm_lock_state(l);
	uint8_t suspects[DM_NODES_MAX / 8];
	struct dm_msg *m;

	if (!s->requesting || s->in_cs)
		return;
	if (s->timer_phase == RA_TIMER_WAIT) {
		memset(s->answered, 0, sizeof(s->answered));
		m = dm_msg_begin(e, DM_RA_ARE_YOU_THERE, l);
		m->seq = s->our_seq;
		m->serial = s->lease_serial;
		m->mode = s->mode;
		m->flags |= s->try_once ? DM_MSG_F_TRY : 0;
		for (size_t j = 0; j < DM_NODES_MAX; j++)
			if (dm_bit_get(s->awaiting, j))
				dm_send(e, (dm_slot_t)j, m);
		ra_arm(e, l, s, RA_TIMER_PROBE);
		return;
	}
	for (size_t i = 0; i < sizeof(suspects); i++)
		suspects[i] = (uint8_t)(s->awaiting[i] & ~s->answered[i]);
	ra_arm(e, l, s, RA_TIMER_WAIT);
	/* May remove nodes and so re-enter peer_gone for this lock. */
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(suspects, j))
			dm_roster_suspect(e, (dm_slot_t)j);
}

static void
ra_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* §7.3/§7.4: "Any node which is awaiting a REPLY message from the failed
	 *  node should pretend that a REPLY was received." */
	struct ra_lock *s = dm_lock_state(l);
	int i = ra_deferred_find(s, slot);

	if (i >= 0)
		ra_deferred_drop(s, i);
	dm_bit_set(s->answered, slot, false);
	if (!s->requesting || s->in_cs || !dm_bit_get(s->awaiting, slot))
		return;
	dm_bit_set(s->awaiting, slot, false);
	s->outstanding--;
	if (s->outstanding == 0)
		ra_enter(e, l, s);
}

static void
ra_lock_fini(struct dm_engine *e, struct dm_lock *l)
{
	struct ra_lock *s = dm_lock_state(l);

	free(s->deferred);
	s->deferred = NULL;
	s->n_deferred = s->cap_deferred = 0;
}

static bool
ra_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct ra_lock *s = dm_lock_state_const(l);

	return !s->requesting && s->n_deferred == 0;
}

static uint64_t
ra_clock_get(const struct dm_engine *e)
{
	const struct ra_node *n = dm_algo_node_state_const(e);

	return n->highest_seq;
}

static void
ra_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct ra_node *n = ra_node(e);

	if (seq > n->highest_seq)
		n->highest_seq = seq;
}

const struct dm_algorithm dm_algo_ricart_agrawala = {
	.name = "ricart-agrawala",
	.caps = DM_CAP_SHARED | DM_CAP_SURVIVES_FAILURE | DM_CAP_NEEDS_FIFO,
	.lock_state_size = sizeof(struct ra_lock),
	.node_state_size = sizeof(struct ra_node),
	.request = ra_request,
	.withdraw = ra_withdraw,
	.release = ra_release,
	.may_handoff = ra_may_handoff,
	.receive = ra_receive,
	.timer = ra_timer,
	.peer_gone = ra_peer_gone,
	.lock_fini = ra_lock_fini,
	.idle = ra_idle,
	.clock_get = ra_clock_get,
	.clock_merge = ra_clock_merge,
};
