/*
 * dm_membership_sponsor.c: insertion (RA §7.2) as the sponsor runs it --
 * JOIN, the roster lock, NODE_ADD to every member and its acks, the roster
 * snapshot sent to the joiner -- and giving a join up when the sponsor
 * leaves, restarts or learns that the JOIN is stale.
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

/* Give the roster lock back: released if we hold it, withdrawn if we
 * still ask for it. */
static void
roster_lock_give_back(struct dm_engine *e, struct dm_lock *l)
{
	if (l == NULL || l->phase == DM_PHASE_IDLE)
		return;
	if (l->phase == DM_PHASE_HOLDING)
		e->algo->release(e, l);
	else
		e->algo->withdraw(e, l);
	l->phase = DM_PHASE_IDLE;
	dm_lock_maybe_free(e, l);
}

/* Our NODE_ADD went out: cancel it, members must not wait on a joiner
 * that will never get its roster from us. */
static void
sponsor_cancel_add(struct dm_engine *e)
{
	struct dm_msg *c = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);

	c->node_len = (uint8_t)strlen(e->joiner);
	memcpy(c->node, e->joiner, c->node_len + 1u);
	c->incarnation = e->joiner_incarnation;
	c->arg = 1;			/* a cancel: only of our own add */
	c->serial = e->join_serial;
	set_sender(e, c);
	broadcast(e, c);
}

/* Stop sponsoring a joiner (we leave or restart): refuse it, give the
 * roster lock back. */
void
dm_membership_sponsor_abort(struct dm_engine *e)
{
	struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);
	struct dm_msg *r;

	if (!e->sponsoring)
		return;
	if (e->add_out && l != NULL && l->phase == DM_PHASE_HOLDING &&
	    dm_roster_find(e, e->joiner, strlen(e->joiner)) == DM_SLOT_NONE)
		/* (Had another sponsor finished, its NODE_ADD would have needed
		 * our ack and the joiner would be in our roster.)  Also when
		 * every member acked: a join that waits for us to be level
		 * (dm_membership_sponsor_finish()) may be given up then, and the
		 * members list the joiner. */
		sponsor_cancel_add(e);
	r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);
	r->arg = EAGAIN;
	flag_member(e, r);
	hint_other_member(e, r, e->joiner);
	send_to_name(e, e->joiner, r);
	e->sponsoring = false;
	e->add_out = false;
	e->joiner[0] = '\0';
	roster_lock_give_back(e, l);
}

/* Give our join up after erasing slot, an entry under the joiner's name:
 * erased first (with no finish from the erase), so the abort cancels a
 * NODE_ADD of ours already out. */
void
dm_membership_sponsor_abort_erasing(struct dm_engine *e, dm_slot_t slot)
{
	e->sponsoring = false;
	dm_roster_erase(e, slot);
	e->sponsoring = true;
	dm_membership_sponsor_abort(e);
}

/*
 * The joiner we sponsor was answered for the incarnation of its JOIN.  If
 * its name then speaks with another incarnation (heartbeats, requests: it
 * restarted and joined through another sponsor), or a member's NODE_ADD
 * names another incarnation of it, our JOIN may be stale, and a NODE_ADD
 * from us would make every member (and us, at the finish) erase the live
 * entry, i.e. take its replies as given (seed 8000024/8: a member entered
 * while the live node, whose request had priority, held the lock).
 * Incarnations are random, so nothing says which one is newer: the join
 * is given up before any NODE_ADD goes out (JOIN_REFUSED).  A live joiner
 * retries; its JOIN then condemns the other entry, which is erased only
 * after T_fail + D_lock.  (JOIN is judged in dm_membership_on_join;
 * messages with a subject carry the subject's incarnation, so only these
 * kinds count.)
 */
void
dm_membership_note_sender(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	bool senders_own = m->kind >= DM_MSG_ALGO_BASE || m->kind == DM_MSG_HEARTBEAT ||
	    m->kind == DM_MSG_HEARTBEAT_ACK || m->kind == DM_MSG_SEQ_QUERY ||
	    m->kind == DM_MSG_NODE_ADD_ACK;

	if (e->sponsoring && senders_own && m->incarnation != 0 &&
	    m->incarnation != e->joiner_incarnation && strcmp(peer, e->joiner) == 0)
		e->joiner_superseded = true;
}

static void
sponsor_send_roster(struct dm_engine *e)
{
	/* "initialize the new node's participant list from its own" */
	struct dm_msg *m;
	uint64_t count = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (e->nodes[j].name_len == strlen(e->joiner) &&
		    memcmp(e->nodes[j].name, e->joiner, e->nodes[j].name_len) == 0)
			continue;
		m = dm_msg_begin(e, DM_MSG_ROSTER_ENTRY, NULL);
		set_subject(m, &e->nodes[j]);
		send_to_name(e, e->joiner, m);
		count++;
	}
	m = dm_msg_begin(e, DM_MSG_ROSTER_END, NULL);
	m->arg = count;
	m->serial = e->joiner_incarnation;	/* for that incarnation only */
	m->seq = e->algo->clock_get(e);
	send_to_name(e, e->joiner, m);
}

/* The roster grows past one node: grants made alone carried no deadline.
 * Nobody can agree to remove us before T_fail of silence counted from now
 * (members start counting when they add us), so a lease to now + L is safe;
 * heartbeats extend it from here. */
static void
lease_on_growth(struct dm_engine *e)
{
	if (e->n_nodes != 2 || e->policy != DM_FAILURE_MAJORITY || e->held_local == 0 ||
	    (e->breakage & DM_BREAK_NO_LEASE) || e->lease_until >= e->now + e->lease_ms)
		return;
	e->lease_until = e->now + e->lease_ms;
	e->lease_epoch = e->epoch;
	dm_timer_arm(e, &e->lease_timer, e->lease_until);
	dm_local_extend_all(e);
	dm_lease_activity(e);
}

void
dm_membership_sponsor_finish(struct dm_engine *e)
{
	struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);

	/* Only a member holding the roster lock granted by the current
	 * members may hand out the roster. */
	if (e->membership != DM_MEMBER_ACTIVE || l == NULL || l->phase != DM_PHASE_HOLDING)
		return;
	if (e->joiner_superseded) {
		dm_membership_sponsor_abort(e);	/* (see dm_membership_note_sender()) */
		return;
	}
	if (dm_membership_acker_ahead(e)) {
		/*
		 * Every member we list took the NODE_ADD, but one of them acked
		 * from a roster label above ours: it applied removals we have
		 * not taken, and members we do not list may never hear of the
		 * joiner.  rcv 83366/7 (partitions): n3, removed at label 13
		 * while cut off and not yet told, applied removals announced by
		 * n4 (label 22 and on) over other names than n4's, down to a
		 * roster of itself and n4; with n4's permission alone it took
		 * the roster lock and admitted n0, and n1, a member n3 did not
		 * list, never heard of n0 -- two members that do not list each
		 * other, which an algorithm that asks only the members it lists
		 * (Ricart-Agrawala) cannot tell from a free lock.  The roster
		 * goes out once we are level (an announcement still on its way,
		 * or a member's digest: lease_label_catch_up(); heartbeats go
		 * out meanwhile), or the join is given up
		 * (dm_membership_sponsor_retry()).  Two stricter rules failed:
		 * a lease to finish a join stalled every join through a member
		 * whose roster still counted a dead incarnation of the joiner
		 * (a two-member roster: ricart-agrawala 1012/5), and no join
		 * from an unsettled roster stalled a last member that no one
		 * could level any more (ricart-agrawala 23102/15, partitions,
		 * static restarts).  NOTES.md, "Session 38".
		 */
		dm_lease_activity(e);
		dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
		return;
	}

	{
		dm_slot_t old = dm_roster_find(e, e->joiner, strlen(e->joiner));
		if (old != DM_SLOT_NONE && e->nodes[old].incarnation != e->joiner_incarnation) {
			/* Our entry is an older incarnation (another sponsor added
			 * it from a stale JOIN, or it is condemned): replace it
			 * as every member did on our NODE_ADD, or its pending
			 * restart removal would later erase the live joiner here
			 * alone. */
			e->sponsoring = false;	/* (no nested finish from the erase) */
			dm_roster_erase(e, old);
			e->sponsoring = true;
			old = DM_SLOT_NONE;
		}
		if (old == DM_SLOT_NONE) {
			dm_roster_add_member(e, e->joiner, e->joiner_address,
			    e->joiner_incarnation, true);
			lease_on_growth(e);
		}
	}
	sponsor_send_roster(e);
	memcpy(e->last_joined, e->joiner, sizeof(e->last_joined));
	e->last_joined_incarnation = e->joiner_incarnation;
	e->sponsoring = false;
	e->joiner[0] = '\0';
	dm_timer_stop(e, &e->roster_timer);
	roster_lock_give_back(e, l);	/* "... before releasing mutual exclusion." */
}

static void
sponsor_broadcast_add(struct dm_engine *e)
{
	struct dm_msg *m = dm_msg_begin(e, DM_MSG_NODE_ADD, NULL);

	m->node_len = (uint8_t)strlen(e->joiner);
	memcpy(m->node, e->joiner, m->node_len + 1u);
	m->address_len = (uint8_t)strlen(e->joiner_address);
	memcpy(m->address, e->joiner_address, m->address_len + 1u);
	m->incarnation = e->joiner_incarnation;
	m->serial = e->join_serial;
	set_sender(e, m);
	e->add_out = true;
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(e->ack_waiting, j))
			dm_send(e, (dm_slot_t)j, m);
}

/*
 * Roster digests while we add a joiner.  The members list it from our
 * NODE_ADD on, we only once the join finishes; a label is taken only over
 * the same names (dm_membership_failure.c, lease_label_catch_up()).  So
 * the digest we send (a removal's announcement, a heartbeat, a refusal)
 * is the one our roster has with the joiner in it, and a digest is ours
 * if it is our roster's with or without it.  Without that, a sponsor that
 * announced a removal while its NODE_ADD was out left every member
 * unsettled (they listed the joiner, it did not) until the join finished:
 * raymond 1967/16 (crashes) on a first draft of this engine, which also
 * made the sponsor wait for a lease, stalled for good.
 */
static uint64_t
joiner_share(struct dm_engine *e)
{
	if (!e->sponsoring || !e->add_out)
		return 0;	/* (no NODE_ADD out yet) */
	return dm_roster_digest_share(e, e->joiner);
}

/* The digest to send for a roster of digest `digest`: with our joiner. */
uint64_t
dm_membership_digest_claimed(struct dm_engine *e, uint64_t digest)
{
	return digest + joiner_share(e);
}

/* Does a member's digest, theirs, name our roster of digest ours? */
bool
dm_membership_digest_agrees(struct dm_engine *e, uint64_t ours, uint64_t theirs)
{
	return theirs == ours || theirs == ours + joiner_share(e);
}

/* Our roster is unsettled (dm_engine_private.h, roster_applied). */
bool
dm_membership_unsettled(const struct dm_engine *e)
{
	return e->roster_applied > e->roster_epoch;
}

/* Did a member that acked our NODE_ADD do so from a roster label above
 * ours?  (Its label when it acked: a member that no longer speaks, or
 * whose name a restarted process answers for, does not count.) */
bool
dm_membership_acker_ahead(const struct dm_engine *e)
{
	return e->add_acked_label > e->roster_epoch;
}

/* How many retries a join whose acks are all in waits for us to be level
 * with the members before it is given up (the roster lock is not held
 * for ever). */
#define LEVEL_RETRIES	8

/* The roster timer while our NODE_ADD waits for acks: send it again to the
 * members that have not answered; once all have, see whether our roster
 * has settled.  Nothing before our NODE_ADD went out: the timer may be
 * one a join we gave up armed, firing while the next join still waits
 * for the roster lock, and its ack_waiting is the old join's (maekawa
 * 13/14: a NODE_ADD went out without the roster lock, and a give-up
 * then sent no cancel for it). */
void
dm_membership_sponsor_retry(struct dm_engine *e)
{
	if (!e->sponsoring || !e->add_out)
		return;
	if (e->ack_waiting_n == 0) {
		if (!dm_membership_acker_ahead(e)) {
			dm_membership_progress(e);
		} else if (++e->level_retries >= LEVEL_RETRIES) {
			dm_log(e, DM_LOG_WARNING, "join given up: members are at a roster label "
			    "above ours", NULL, DM_SLOT_NONE);
			dm_membership_sponsor_abort(e);
		} else
			dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
		return;
	}
	sponsor_broadcast_add(e);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
}

/* The sponsor holds the roster lock: "broadcast the new node's identity". */
void
dm_roster_lock_permitted(struct dm_engine *e, struct dm_lock *l)
{
	if (!e->sponsoring || e->membership != DM_MEMBER_ACTIVE) {
		e->algo->release(e, l);
		l->phase = DM_PHASE_IDLE;
		dm_lock_maybe_free(e, l);
		return;
	}
	memset(e->ack_waiting, 0, sizeof(e->ack_waiting));
	e->ack_waiting_n = 0;
	e->add_acked_label = 0;
	e->add_out = false;
	if (e->joiner_superseded) {
		/* A stale JOIN: give it up before any NODE_ADD goes out; a live
		 * joiner retries (see dm_membership_note_sender()). */
		dm_membership_sponsor_abort(e);
		return;
	}
	/* Even if the joiner is already in our roster (another sponsor's
	 * NODE_ADD), every member must confirm it knows the joiner before the
	 * roster goes out; those that know it just acknowledge. */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || strcmp(e->nodes[j].name, e->joiner) == 0)
			continue;
		dm_bit_set(e->ack_waiting, j, true);
		e->ack_waiting_n++;
	}
	if (e->ack_waiting_n == 0) {
		dm_membership_sponsor_finish(e);
		return;
	}
	sponsor_broadcast_add(e);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
}

int
dm_membership_on_join(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	struct dm_msg *r;
	struct dm_lock *l;

	if (m->node_len == 0 || strcmp(m->node, peer) != 0)
		return -EPROTO;
	if (e->membership == DM_MEMBER_ACTIVE && from != DM_SLOT_NONE &&
	    e->nodes[from].incarnation != m->incarnation) {
		/* §7.2.1: the old incarnation failed; remove it first (whatever
		 * else we are doing: a join we sponsor may be waiting on it), and
		 * let the new one retry until then. */
		dm_membership_condemn_restarted(e, from);
		from = dm_roster_find(e, peer, strlen(peer));
	}
	if (e->membership == DM_MEMBER_ACTIVE && from == DM_SLOT_NONE &&
	    dm_membership_incarnation_removed(e, peer, m->incarnation)) {
		/* An incarnation we removed: it is dead for good here (see
		 * dm_membership_note_removed()), so we add it back neither as its sponsor nor
		 * on another's NODE_ADD.  Told of its removal, the joiner
		 * starts again under a new incarnation (spent_incarnation()). */
		r = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);
		r->node_len = m->node_len;
		memcpy(r->node, m->node, m->node_len + 1u);
		r->incarnation = m->incarnation;
		set_sender(e, r);
		send_to_name(e, peer, r);
		return 0;
	}
	if (e->membership == DM_MEMBER_ACTIVE && from != DM_SLOT_NONE &&
	    e->nodes[from].incarnation == m->incarnation && !e->sponsoring &&
	    strcmp(e->last_joined, peer) == 0 && e->last_joined_incarnation == m->incarnation) {
		/* A retry after we finished this join: every member had
		 * acknowledged it, so the roster may go out again.  (A member
		 * that merely acknowledged someone else's NODE_ADD cannot know
		 * that; it sponsors the join again below instead.) */
		memcpy(e->joiner, peer, strlen(peer) + 1);
		e->joiner_incarnation = m->incarnation;
		sponsor_send_roster(e);
		e->joiner[0] = '\0';
		return 0;
	}
	if (e->membership != DM_MEMBER_ACTIVE ||
	    (from != DM_SLOT_NONE && e->nodes[from].incarnation != m->incarnation) ||
	    (e->sponsoring && strcmp(e->joiner, peer) != 0)) {
		r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);
		r->arg = EAGAIN;
		flag_member(e, r);
		if (e->membership == DM_MEMBER_ACTIVE && e->sponsoring &&
		    strcmp(e->joiner, peer) != 0)
			dm_membership_note_node(e->refused, &e->n_refused, &e->refused_next, peer,
			    m->incarnation);	/* told where to go when we leave */
		if (e->membership == DM_MEMBER_LEAVING) {
			/* We are leaving for good: point at a member that stays,
			 * or a joiner that knows only us asks us for ever (rcv
			 * seed 1140/5, leave: it restarted through us just
			 * before we left).  Joiners refused earlier, while we
			 * were busy: tell_refused_joiners(). */
			hint_other_member(e, r, peer);
		} else if (e->membership != DM_MEMBER_ACTIVE && e->sponsor[0] != '\0' &&
		    strcmp(e->sponsor, peer) != 0) {
			/* Not a member (we are joining too, e.g. we restarted):
			 * point at the sponsor we ask, or joiners that only know
			 * us wait on each other for ever (seed 798/7, crashes). */
			r->node_len = (uint8_t)strlen(e->sponsor);
			memcpy(r->node, e->sponsor, r->node_len + 1u);
			r->address_len = (uint8_t)strlen(e->sponsor_address);
			memcpy(r->address, e->sponsor_address, r->address_len + 1u);
		}
		send_to_name(e, peer, r);
		return 0;
	}
	if (e->sponsoring) {
		/* Already working on it; but a JOIN from a newer incarnation of the
		 * same joiner (it restarted meanwhile) must not get the roster
		 * meant for the old one. */
		if (m->incarnation != e->joiner_incarnation) {
			struct dm_lock *rl = dm_lock_get(e, DM_ROSTER_LOCK,
			    strlen(DM_ROSTER_LOCK), false);
			if (rl != NULL && rl->phase == DM_PHASE_HOLDING)
				dm_membership_sponsor_abort(e);	/* NODE_ADD went out: start over */
			else {
				e->joiner_incarnation = m->incarnation;
				e->joiner_superseded = false;
			}
		}
		return 0;
	}
	memcpy(e->joiner, peer, strlen(peer) + 1);
	memcpy(e->joiner_address, m->address, m->address_len + 1u);
	e->joiner_incarnation = m->incarnation;
	e->joiner_superseded = false;
	e->join_serial++;
	e->sponsoring = true;
	e->level_retries = 0;
	e->add_out = false;
	/* "The sponsor should then invoke mutual exclusion" on the roster lock. */
	l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), true);
	if (l == NULL) {
		e->sponsoring = false;
		return -ENOMEM;
	}
	if (l->phase != DM_PHASE_IDLE)
		return 0;
	l->phase = DM_PHASE_REQUESTING;
	l->node_mode = DM_MODE_EXCLUSIVE;
	dm_lease_activity(e);
	return e->algo->request(e, l, DM_MODE_EXCLUSIVE, false);
}

int
dm_membership_on_node_add_ack(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (!e->sponsoring || from == DM_SLOT_NONE || m->serial != e->join_serial ||
	    !dm_bit_get(e->ack_waiting, from))
		return 0;
	dm_bit_set(e->ack_waiting, from, false);
	if (m->roster_epoch > e->add_acked_label)
		e->add_acked_label = m->roster_epoch;	/* (dm_membership_acker_ahead()) */
	if (--e->ack_waiting_n == 0)
		dm_membership_sponsor_finish(e);
	return 0;
}
