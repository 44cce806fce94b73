/*
 * dm_membership.c: the roster change protocols of RA §7 -- insertion
 * through a sponsor (§7.2), graceful removal (§7.3), failure (§7.4) with
 * the majority-confirmed removal of failure_policy = majority, and
 * "restart and rejoin" for a removed node that keeps talking.  This file
 * receives every roster message (incarnation checks, epoch learning) and
 * hands it to its handler; it also runs the roster's timers.  The
 * handlers live in dm_membership_{join,sponsor,leave,failure,vote}.c.
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

int
dm_roster_receive(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	e->rx_epoch_before = e->epoch;
	if ((m->kind == DM_MSG_JOIN_REFUSED || m->kind == DM_MSG_REJOIN) &&
	    (m->flags & DM_MSG_F_MEMBER)) {
		if (m->epoch >= e->member_epoch) {
			e->member_epoch = m->epoch;
			e->member_epoch_at = e->now;
		}
		if (m->roster_epoch >= e->member_label) {
			e->member_label = m->roster_epoch;
			e->member_label_at = e->now;
		}
	}
	if (e->membership == DM_MEMBER_JOINING)
		dm_epoch_learn(e, m->epoch);	/* rosters older than this are stale */
	if (from != DM_SLOT_NONE && e->rx_other_incarnation) {
		dm_membership_other_incarnation(e, from, m);
		/* Started from the static roster under the name of a member we
		 * list: it must rejoin (see dm_engine_receive). */
		if (m->flags & DM_MSG_F_STATIC)
			return dm_membership_on_stranger(e, peer, m);
		/* Another incarnation than the one we list under that name
		 * (e.g. messages of a dead incarnation, delayed past its
		 * successor's join): it speaks for no member.  Kinds that a new
		 * incarnation sends about itself are judged by their handlers;
		 * a REJOIN from it is news (its epoch tells whether it is stale:
		 * seed 715/4), and an abort can only release a vote.
		 * Seed 1715/4 (pause): a removed sponsor's NODE_ADD and its
		 * cancel, delayed past the joiner's join through another member
		 * and the sponsor's own rejoin, erased the live joiner. */
		switch (m->kind) {
		case DM_MSG_HEARTBEAT_ACK:
			return 0;	/* (acknowledges no lease of ours) */
		case DM_MSG_LEAVE:
		case DM_MSG_LEAVE_ACK:
		case DM_MSG_NODE_ADD:
		case DM_MSG_NODE_FAILED:
		case DM_MSG_SUSPECT:
			from = DM_SLOT_NONE;
			break;
		default:
			break;
		}
	}
	if (from != DM_SLOT_NONE && from != e->self) {
		/* (Learn a static peer's incarnation from the sender's own,
		 * never from a subject's.) */
		if (e->nodes[from].incarnation == 0 && m->kind != DM_MSG_JOIN &&
		    !e->nodes[from].condemned)
			e->nodes[from].incarnation = dm_msg_sender_incarnation(m);
		/* Only the incarnation we list is news about that entry: a new
		 * incarnation's JOIN or vote says the listed one is gone.  And a
		 * JOIN, even from the listed incarnation, says it does not act
		 * as a member (its roster never reached it): not a sign of life
		 * that should stop its removal (hierarchical bully 29/6,
		 * partition: a listed joiner was the roster lock's group
		 * coordinator, its JOINs aborted every vote to remove it, and
		 * its sponsor waited for the lock for ever). */
		if (!e->rx_other_incarnation && m->kind != DM_MSG_JOIN)
			dm_membership_heard(e, from);
		/* (The token was taken in dm_engine_receive, from any sender.) */
		/* (Not from a JOIN: a joiner's epoch is what some member told
		 * it, not a roster change we applied.  Taken over, it hid from
		 * the restarted nodes that our roster is older than one they
		 * had heard of: seed 1533/6, see the member_epoch rule in
		 * dm_membership_on_suspect().) */
		if (m->kind != DM_MSG_JOIN)
			dm_epoch_learn(e, m->epoch);
	}
	if (m->kind >= DM_MSG_ALGO_BASE)
		return dm_membership_on_stranger(e, peer, m);
	switch (m->kind) {
	case DM_MSG_HEARTBEAT:
		return from == DM_SLOT_NONE ? dm_membership_on_stranger(e, peer, m) :
		    dm_lease_on_heartbeat(e, from, m);
	case DM_MSG_HEARTBEAT_ACK:
		return from == DM_SLOT_NONE ? 0 : dm_lease_on_heartbeat_ack(e, from, m);
	default:
		return dm_membership_receive(e, from, peer, m);
	}
}

/* A member went away: an ack or answer we waited for may be all we need. */
void
dm_membership_progress(struct dm_engine *e)
{
	if (e->membership == DM_MEMBER_LEAVING && e->ack_waiting_n == 0)
		dm_membership_left(e);
	else if (e->membership == DM_MEMBER_SYNCING && e->seq_waiting_n == 0) {
		dm_timer_stop(e, &e->roster_timer);
		dm_membership_ready(e);
	} else if (e->membership == DM_MEMBER_ACTIVE && e->sponsoring && e->ack_waiting_n == 0) {
		struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);
		if (l != NULL && l->phase == DM_PHASE_HOLDING)
			dm_membership_sponsor_finish(e);
	}
}

int
dm_membership_receive(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	if (e->membership == DM_MEMBER_LEFT)
		return 0;
	if ((m->kind == DM_MSG_ROSTER_ENTRY || m->kind == DM_MSG_ROSTER_END ||
	    m->kind == DM_MSG_NODE_ADD) && dm_record_refuses_joiner_help(e, peer, m))
		return 0;	/* (a removed node's stale roster: dm_member_record.c) */
	switch (m->kind) {
	case DM_MSG_JOIN:
		return dm_membership_on_join(e, from, peer, m);
	case DM_MSG_ROSTER_ENTRY:
		return dm_membership_on_roster_entry(e, peer, m);
	case DM_MSG_ROSTER_END:
		return dm_membership_on_roster_end(e, peer, m);
	case DM_MSG_NODE_ADD:
		return dm_membership_on_node_add(e, from, peer, m);
	case DM_MSG_NODE_ADD_ACK:
		return dm_membership_on_node_add_ack(e, from, m);
	case DM_MSG_SEQ_QUERY:
		return dm_membership_on_seq_query(e, from, peer, m);
	case DM_MSG_SEQ_ANSWER:
		return dm_membership_on_seq_answer(e, from, m);
	case DM_MSG_LEAVE:
		return dm_membership_on_leave(e, from, peer, m);
	case DM_MSG_LEAVE_ACK:
		return dm_membership_on_leave_ack(e, from);
	case DM_MSG_SUSPECT:
		return dm_membership_on_suspect(e, from, peer, m);
	case DM_MSG_SUSPECT_VOTE:
		return dm_membership_on_suspect_vote(e, from, m);
	case DM_MSG_SUSPECT_ABORT:
		return dm_membership_on_suspect_abort(e, from, peer, m);
	case DM_MSG_NODE_FAILED:
		return dm_membership_on_node_failed(e, from, peer, m);
	case DM_MSG_REJOIN:
		return dm_membership_on_rejoin(e, from, peer, m);
	case DM_MSG_JOIN_REFUSED:
		return dm_membership_on_join_refused(e, peer, m);
	default:
		return -EPROTO;
	}
}

void
dm_roster_timer(struct dm_engine *e, struct dm_timer *t)
{
	if (t == &e->heartbeat_timer) {
		dm_lease_heartbeat_timer(e);
		return;
	}
	if (t == &e->lease_timer) {
		dm_lease_timer(e);
		return;
	}
	if (t == &e->restart_timer) {
		dm_membership_restart_timer(e);
		return;
	}
	if (t == &e->vote_timer) {
		dm_membership_vote_timer(e);
		return;
	}
	if (t == &e->hello_timer) {
		dm_static_hello_timer(e);
		return;
	}
	switch (e->membership) {
	case DM_MEMBER_RESTARTING:
	case DM_MEMBER_JOINING:
		dm_membership_join_start(e);
		break;
	case DM_MEMBER_SYNCING:
		dm_membership_sync_retry(e);
		break;
	case DM_MEMBER_LEAVING:
		dm_membership_left(e);	/* acks overdue: the others will detect our absence */
		break;
	case DM_MEMBER_ACTIVE:
		dm_membership_sponsor_retry(e);
		break;
	default:
		break;
	}
}
