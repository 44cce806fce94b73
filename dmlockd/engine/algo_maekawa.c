/*
 * algo_maekawa.c: Maekawa's sqrt(N) mutual exclusion, one instance per lock
 * name.  M. Maekawa, "A sqrt(N) Algorithm for Mutual Exclusion in
 * Decentralized Systems", ACM TOCS 3(2), 1985, §4; request sets from
 * dm_quorum.c (§3).  Every node is both a requester and an arbiter.
 *
 *   "(1) When node i invokes mutual exclusion, it sends a REQUEST message to
 *    every member of S_i ... given a sequence number greater than any
 *    REQUEST message sent, received, or observed at this node."
 *   "REQUEST A is said to precede REQUEST B if (the sequence number of A <
 *    the sequence number of B) or (equal and the node number of A < B)."
 *
 * What this file adds to the paper (see NOTES-permission.md):
 *  - Deadlock fixes (Sanders 1987): an arbiter sends FAILED to *every*
 *    queued request that some other request precedes, whenever that becomes
 *    true (on arrival of a more preceding request and on every relock), not
 *    only on arrival; an INQUIRE that arrives before the outcome is known is
 *    deferred until a FAILED or the last LOCKED; INQUIRE carries the seq of
 *    the locking request and is ignored when stale; a relinquished arbiter
 *    counts as failed for the requester.
 *  - Stale grants: a LOCKED for a request we no longer make is answered by
 *    RELEASE(seq) so the arbiter's vote is never stuck.
 *  - Roster changes.  The sets are a function of the *view*: the set of
 *    member names (a fingerprint).  A request carries its view; an arbiter
 *    grants only requests of its own view.  On a view change a request not
 *    yet in its critical section is withdrawn (RELEASE to the old set) and
 *    re-issued with a new seq under the new sets; a critical section in
 *    progress finishes under the old view and its votes stay locked until
 *    its RELEASE.  Because a new-view set need not meet an old-view set,
 *    a node uses the set of ALL members (which meets every S_i, since i is
 *    in S_i and holds its own vote while in its critical section) until
 *    every member has reported, in this view, that it is "clean": none of
 *    its requests or votes belongs to an older view.  Only then the small
 *    sets are used.  A clean report counts only in an answer (LOCKED,
 *    FAILED, BUSY, STALE) to a request we made in this view: a member that
 *    left and came back under the same name restores the old fingerprint,
 *    and an older message would vouch for a state that no longer holds.
 *    For the same reason the cached S_i (slot numbers) is recomputed on
 *    every view change.  Failed members leave through the roster rules and
 *    peer_gone(): their votes and queue entries are dropped, and requests
 *    that counted on them are re-issued under the new sets.
 *  - The engine's roster lock always asks every member, and a node that is
 *    not yet an active member votes for it at once without keeping state
 *    (the engine passes it only roster-lock messages while it joins).
 *  - Try-once: an arbiter that cannot vote at once answers BUSY.
 *  - Failure detection as in RA §7.4: after the request timeout, arbiters
 *    that have not voted are probed (the probe carries the request, so a
 *    REQUEST the engine dropped while the arbiter was joining is
 *    recovered), and an arbiter whose vote a requester holds while others
 *    wait probes it (a requester that no longer makes that request gives
 *    the vote back); the silent are suspected after the probe timeout.
 *  - Leases (majority policy): the REQUEST opens a lease round, arbiters
 *    acknowledge it in LOCKED/FAILED/BUSY, members outside S_i get the
 *    engine's HEARTBEAT of the same round: no extra round trip at grant.
 *  - Restarts from the static roster: a restarted process votes only once
 *    every member has answered its hello (dm_static_hello.c), since a
 *    requester that never heard from its earlier process would take the
 *    new vote beside the earlier one's.
 *  - Exclusive mode only.
 *
 * This file: messages (the queue of messages to self), dispatch and the
 * algorithm entry points.  Views and sets: algo_maekawa_view.c; the
 * arbiter: algo_maekawa_arbiter.c; the requester: algo_maekawa_requester.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algo_maekawa.h"

static void mk_dispatch(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
    uint8_t kind, uint64_t seq, uint64_t view, bool try_once, bool clean, uint8_t sub);

void
mk_send_full(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once, uint8_t sub, uint64_t lease)
{
	struct mk_node *n = mk_node(e);
	struct dm_msg *m;

	if (to == dm_roster_self(e)) {
		if (n->selfq_n < MK_SELFQ_MAX) {
			struct mk_self_msg *q = &n->selfq[n->selfq_n++];
			q->l = l;
			q->kind = kind;
			q->seq = seq;
			q->view = n->view;
			q->try_once = try_once;
		} else {
			dm_log(e, DM_LOG_ERR, "maekawa: self-message queue full", l, to);
		}
		return;
	}
	if (!mk_member(e, to))
		return;
	m = dm_msg_begin(e, kind, l);
	m->seq = seq;
	m->arg = n->view;
	m->serial = (node_clean(n) ? MK_CLEAN : 0) | ((uint64_t)sub << MK_SUB_SHIFT) |
	    (lease << MK_LEASE_SHIFT);
	m->flags |= try_once ? DM_MSG_F_TRY : 0;
	dm_send(e, to, m);
}

static void
mk_send_sub(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once, uint8_t sub)
{
	mk_send_full(e, l, to, kind, seq, try_once, sub, 0);
}

/* An arbiter's answer to w, acknowledging its lease round if we may. */
void
mk_answer(struct dm_engine *e, struct dm_lock *l, const struct mk_wait *w, uint8_t kind)
{
	uint64_t lease = w->lease != 0 && dm_lease_may_ack(e, w->slot) ? w->lease : 0;

	mk_send_full(e, l, w->slot, kind, w->seq, false, 0, lease);
}

void
mk_send(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once)
{
	mk_send_sub(e, l, to, kind, seq, try_once, 0);
}

static void
mk_drain(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);

	if (n->draining)
		return;
	n->draining = true;
	while (n->selfq_n > 0) {
		struct mk_self_msg q = n->selfq[0];
		memmove(&n->selfq[0], &n->selfq[1], (n->selfq_n - 1) * sizeof(n->selfq[0]));
		n->selfq_n--;
		mk_dispatch(e, q.l, dm_roster_self(e), q.kind, q.seq, q.view, q.try_once,
		    node_clean(n), 0);
	}
	n->draining = false;
}

static void
mk_dispatch(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, uint8_t kind, uint64_t seq,
    uint64_t view, bool try_once, bool clean, uint8_t sub)
{
	struct mk_lock *s = dm_lock_state(l);
	struct mk_node *n = mk_node(e);

	dm_bit_set(s->answered, from, true);
	/* A clean report counts only if it answers a request we made in this
	 * view (sent after our last view change): a message sent before a
	 * member left and came back under the same name carries the same
	 * view fingerprint but says nothing about the member's state now. */
	if ((kind == DM_MK_LOCKED || kind == DM_MK_FAILED || kind == DM_MK_BUSY ||
	    kind == DM_MK_STALE) && s->requesting && seq == s->our_seq && s->req_gen == n->gen)
		mk_note_clean(e, from, view, clean);
	mk_req_reissue_if_stale(e, l, s);
	switch (kind) {
	case DM_MK_REQUEST:
		if (seq > n->highest_seq)
			n->highest_seq = seq;
		mk_arb_on_request(e, l, s, from, seq, view, try_once);
		break;
	case DM_MK_RELEASE:
		mk_arb_on_give_back(e, l, s, from, seq, false);
		break;
	case DM_MK_RELINQUISH:
		mk_arb_on_give_back(e, l, s, from, seq, true);
		break;
	case DM_MK_LOCKED:
		if (!mk_req_current(s, from, seq)) {
			/* A vote we no longer want (withdrawn, re-issued, or we
			 * are in the CS and this is a duplicate): give it back. */
			if (!(s->requesting && seq == s->our_seq && dm_bit_get(s->locked, from)))
				mk_send(e, l, from, DM_MK_RELEASE, seq, false);
			break;
		}
		dm_bit_set(s->failed, from, false);
		if (!dm_bit_get(s->locked, from)) {
			dm_bit_set(s->locked, from, true);
			s->n_locked++;
		}
		mk_req_enter_if_done(e, l, s);
		break;
	case DM_MK_FAILED:
		if (!mk_req_current(s, from, seq))
			break;
		dm_bit_set(s->failed, from, true);
		mk_req_answer_inquiries(e, l, s);
		break;
	case DM_MK_INQUIRE:
		/* "(3) ... returns a RELINQUISH message if it knows that it will
		 *  not succeed ... If an INQUIRE message has arrived before it is
		 *  known whether the node will succeed or fail, a reply is
		 *  deferred until this becomes known.  If an INQUIRE message has
		 *  arrived after the node has sent a RELEASE message, it is
		 *  simply ignored." */
		if (!mk_req_current(s, from, seq) || !dm_bit_get(s->locked, from))
			break;
		if (mk_req_knows_it_fails(s))
			mk_req_relinquish(e, l, s, from);
		else
			dm_bit_set(s->inquired, from, true);
		break;
	case DM_MK_BUSY:
		if (!mk_req_current(s, from, seq) || !s->try_once)
			break;
		mk_req_give_up(e, l, s);
		dm_lock_refused(e, l, -EBUSY);
		break;
	case DM_MK_STALE:
		/* The arbiter sees another view: if ours is the old one,
		 * mk_req_reissue_if_stale() above has re-issued; else wait for it. */
		break;
	case DM_MK_ARE_YOU_THERE:
		mk_send(e, l, from, DM_MK_YES_I_AM_HERE, seq, false);
		if (sub == MK_PROBE_REQUESTER && mk_arb_unknown(s, from, seq)) {
			/* Its REQUEST never reached us (the engine drops what
			 * arrives while we are still joining): the probe
			 * carries it. */
			if (seq > n->highest_seq)
				n->highest_seq = seq;
			mk_arb_on_request(e, l, s, from, seq, view, try_once);
		} else if (sub == MK_PROBE_ARBITER &&
		    !(s->requesting && seq == s->our_seq && dm_bit_get(s->member, from))) {
			/* It counts us as holding its vote for a request we no
			 * longer make: give it back (idempotent). */
			mk_send(e, l, from, DM_MK_RELEASE, seq, false);
		}
		if (s->voted || s->n_wait > 0)
			mk_arb_settle(e, l, s);	/* view may have changed: re-evaluate */
		break;
	default:
		break;
	}
}

static int
mk_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	struct mk_lock *s = dm_lock_state(l);
	int r;

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	mk_sync_view(e);
	s->requesting = true;
	s->in_cs = false;
	s->try_once = try_once;
	r = mk_req_issue(e, l, s);
	if (r < 0) {
		s->requesting = false;
		return r;
	}
	mk_drain(e);
	mk_ensure_timer(e, l);
	return 0;
}

static void
mk_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	mk_sync_view(e);
	mk_req_give_up(e, l, dm_lock_state(l));
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static void
mk_release(struct dm_engine *e, struct dm_lock *l)
{
	mk_sync_view(e);
	mk_req_give_up(e, l, dm_lock_state(l));
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static bool
mk_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	/* Only the arbiters know who waits; hand over locally only when our own
	 * vote has no queue and nobody inquired (a remote waiter elsewhere is
	 * bounded by the next full round). */
	return false;
}

/* A node that is not (yet) an active member is asked for the roster lock by
 * a sponsor that already counts it (the engine passes only these messages
 * on while we join).  It never wants that lock: vote at once and keep no
 * state, like a Ricart-Agrawala REPLY.  Safe because roster-lock requests
 * ask every member, so two of them still meet at every active member. */
static void
mk_not_member_answer(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m, uint8_t kind,
    uint64_t arg)
{
	struct dm_msg *a = dm_msg_begin(e, kind, NULL);

	a->lock_len = m->lock_len;
	memcpy(a->lock, m->lock, m->lock_len + 1u);
	a->seq = m->seq;
	a->arg = arg;
	dm_send(e, from, a);
}

static int
mk_receive_not_member(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	uint8_t sub = (uint8_t)((m->serial >> MK_SUB_SHIFT) & 3u);

	if (m->kind == DM_MK_ARE_YOU_THERE)
		mk_not_member_answer(e, from, m, DM_MK_YES_I_AM_HERE, 0);
	/* An arbiter counts us as holding its vote (LOCKED, INQUIRE, or its
	 * probe of the vote holder): a request of an earlier incarnation of
	 * ours, since we make none while not a member.  Give the vote back,
	 * as a member does for a request it no longer makes; else that
	 * arbiter's roster-lock vote stays pinned while our answers to its
	 * probes keep us from being suspected. */
	if (m->kind == DM_MK_LOCKED || m->kind == DM_MK_INQUIRE ||
	    (m->kind == DM_MK_ARE_YOU_THERE && sub == MK_PROBE_ARBITER)) {
		mk_not_member_answer(e, from, m, DM_MK_RELEASE, mk_node(e)->view);
		return 0;
	}
	if (m->kind == DM_MK_REQUEST ||
	    (m->kind == DM_MK_ARE_YOU_THERE && sub == MK_PROBE_REQUESTER))
		mk_not_member_answer(e, from, m, DM_MK_LOCKED, mk_node(e)->view);
	return 0;
}

static bool
mk_ready(const struct dm_engine *e)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(e, &st);
	return st.ready;
}

static int
mk_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct mk_node *n = mk_node(e);
	uint64_t lease;

	if (m->kind < DM_MK_REQUEST || m->kind > DM_MK_YES_I_AM_HERE)
		return -EPROTO;
	if (mk_name_reserved(m->lock, m->lock_len) && !mk_ready(e))
		return mk_receive_not_member(e, from, m);
	mk_sync_view(e);
	if (l == NULL) {
		if (m->kind == DM_MK_ARE_YOU_THERE || m->kind == DM_MK_REQUEST ||
		    m->kind == DM_MK_LOCKED)
			l = dm_lock_get(e, m->lock, m->lock_len, true);
		if (l == NULL)
			return 0;	/* nothing to forget, nothing owed */
	}
	lease = m->serial >> MK_LEASE_SHIFT;
	if (lease != 0 && (m->kind == DM_MK_LOCKED || m->kind == DM_MK_FAILED ||
	    m->kind == DM_MK_BUSY))
		dm_lease_ack(e, from, lease);	/* the answer acknowledges our lease round */
	n->in_lease = m->kind == DM_MK_REQUEST || m->kind == DM_MK_ARE_YOU_THERE ? lease : 0;
	mk_dispatch(e, l, from, m->kind, m->seq, m->arg, (m->flags & DM_MSG_F_TRY) != 0,
	    (m->serial & MK_CLEAN) != 0, (uint8_t)((m->serial >> MK_SUB_SHIFT) & 3u));
	n->in_lease = 0;
	mk_drain(e);
	mk_ensure_timer(e, l);
	return 0;
}

static void
mk_timer(struct dm_engine *e, struct dm_lock *l)
{
	/* RA §7.4: "If the timer expires, all nodes for which Awaiting_Reply is
	 * TRUE are suspected ... A probing message ... If no answer is received
	 * during a second timeout period, the suspect node has failed."  Here:
	 * after the request timeout probe the arbiters that have not voted
	 * (and, as an arbiter with waiters, the holder of our vote); after the
	 * probe timeout suspect the silent ones; then a new request timeout. */
	struct mk_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);
	uint8_t suspects[DM_NODES_MAX / 8];
	bool waiting, was_probing = s->probing;

	s->timer_on = false;
	s->probing = false;
	mk_sync_view(e);
	mk_req_reissue_if_stale(e, l, s);
	if (s->voted || s->n_wait > 0)
		mk_arb_settle(e, l, s);
	memset(suspects, 0, sizeof(suspects));
	if (was_probing) {
		for (size_t i = 0; i < sizeof(suspects); i++)
			suspects[i] = (uint8_t)(s->probed[i] & ~s->answered[i]);
		memset(s->probed, 0, sizeof(s->probed));
	} else {
		waiting = s->requesting && !s->in_cs;
		memset(s->answered, 0, sizeof(s->answered));
		memset(s->probed, 0, sizeof(s->probed));
		if (waiting)
			for (size_t j = 0; j < DM_NODES_MAX; j++)
				if (dm_bit_get(s->member, j) && !dm_bit_get(s->locked, j) && j != self) {
					dm_bit_set(s->probed, j, true);
					mk_send_full(e, l, (dm_slot_t)j, DM_MK_ARE_YOU_THERE,
					    s->our_seq, s->try_once, MK_PROBE_REQUESTER,
					    s->lease_serial);
				}
		if (s->voted && s->n_wait > 0 && s->vote.slot != self) {
			dm_bit_set(s->probed, s->vote.slot, true);
			mk_send_sub(e, l, s->vote.slot, DM_MK_ARE_YOU_THERE, s->vote.seq, false,
			    MK_PROBE_ARBITER);
		}
	}
	mk_drain(e);
	waiting = s->requesting && !s->in_cs;
	if (waiting || (s->voted && s->n_wait > 0)) {
		s->timer_on = true;
		s->probing = !was_probing;
		dm_lock_timer_arm(e, l, dm_now(e) +
		    (s->probing ? dm_probe_timeout(e) : dm_request_timeout(e)));
	}
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(suspects, j))
			dm_roster_suspect(e, (dm_slot_t)j);	/* may re-enter peer_gone */
}

static void
mk_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* "Act as if every answer it owes arrived, forget what we owe it."  As
	 * an arbiter: its request and its hold on our vote are forgotten.  As
	 * a requester: the gone node may have been an arbiter holding our vote;
	 * the view changes with it, so a request not yet in its critical
	 * section is re-issued under the new sets (never counted as granted). */
	struct mk_lock *s = dm_lock_state(l);
	int i;

	mk_sync_view(e);	/* the departing slot is no longer a member */
	dm_bit_set(s->answered, slot, false);
	dm_bit_set(s->probed, slot, false);
	dm_bit_set(s->inquired, slot, false);
	if ((i = mk_wait_find(s, slot)) >= 0)
		mk_wait_drop(s, i);
	if (s->voted && s->vote.slot == slot)
		mk_arb_unlock(e, s);
	if (dm_bit_get(s->member, slot)) {
		dm_bit_set(s->member, slot, false);
		if (dm_bit_get(s->locked, slot)) {
			dm_bit_set(s->locked, slot, false);
			s->n_locked--;
		}
		s->n_members--;
	}
	mk_req_reissue_if_stale(e, l, s);
	mk_arb_settle(e, l, s);
	mk_drain(e);
	mk_ensure_timer(e, l);
}

/* Restarted from the static roster, every member has answered our hello:
 * the requests we held back get their votes (dm_static_hello.c). */
static void
mk_votes_released(struct dm_engine *e, struct dm_lock *l)
{
	mk_arb_settle(e, l, dm_lock_state(l));
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static void
mk_lock_fini(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);
	struct mk_node *n = mk_node(e);

	free(s->wait);
	s->wait = NULL;
	s->n_wait = s->cap_wait = 0;
	/* Self-messages for this lock must not outlive it. */
	for (unsigned i = 0; i < n->selfq_n;)
		if (n->selfq[i].l == l) {
			memmove(&n->selfq[i], &n->selfq[i + 1],
			    (n->selfq_n - i - 1) * sizeof(n->selfq[0]));
			n->selfq_n--;
		} else {
			i++;
		}
}

static bool
mk_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct mk_lock *s = dm_lock_state_const(l);

	return !s->requesting && !s->voted && s->n_wait == 0;
}

static uint64_t
mk_clock_get(const struct dm_engine *e)
{
	const struct mk_node *n = dm_algo_node_state_const(e);

	return n->highest_seq;
}

static void
mk_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct mk_node *n = mk_node(e);

	if (seq > n->highest_seq)
		n->highest_seq = seq;
}

const struct dm_algorithm dm_algo_maekawa = {
	.name = "maekawa",
	.caps = DM_CAP_SURVIVES_FAILURE | DM_CAP_NEEDS_FIFO,
	.lock_state_size = sizeof(struct mk_lock),
	.node_state_size = sizeof(struct mk_node),
	.request = mk_request,
	.withdraw = mk_withdraw,
	.release = mk_release,
	.may_handoff = mk_may_handoff,
	.receive = mk_receive,
	.timer = mk_timer,
	.peer_gone = mk_peer_gone,
	.lock_fini = mk_lock_fini,
	.idle = mk_idle,
	.clock_get = mk_clock_get,
	.clock_merge = mk_clock_merge,
	.votes_released = mk_votes_released,
};
