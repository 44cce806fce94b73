/*
 * dm_membership_leave.c: graceful removal (RA §7.3) -- LEAVE and its acks
 * for the leaver, the members' erase of the leaver, and the LEAVEs a
 * joiner hears before its roster arrives.
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

static void
send_simple(struct dm_engine *e, dm_slot_t to, uint8_t kind, uint64_t serial, uint64_t arg)
{
	struct dm_msg *m = dm_msg_begin(e, kind, NULL);

	m->serial = serial;
	m->arg = arg;
	dm_send(e, to, m);
}

/* Add (name, incarnation) to a ring of DM_NODES_MAX noted nodes. */
void
dm_membership_note_node(struct dm_noted_node *ring, size_t *n, size_t *next, const char *peer,
    uint64_t incarnation)
{
	struct dm_noted_node *d = NULL;

	for (size_t i = 0; i < *n && d == NULL; i++)
		if (strcmp(ring[i].name, peer) == 0 && ring[i].incarnation == incarnation)
			d = &ring[i];
	if (d == NULL) {
		d = &ring[*next];
		*next = (*next + 1) % DM_NODES_MAX;
		if (*n < DM_NODES_MAX)
			(*n)++;
	}
	memset(d, 0, sizeof(*d));
	memcpy(d->name, peer, strnlen(peer, DM_NODE_NAME_MAX));
	d->incarnation = incarnation;
}

/* The roster arrived: erase the entries of members that left meanwhile. */
void
dm_membership_departed_erase(struct dm_engine *e)
{
	for (size_t i = 0; i < e->n_departed; i++) {
		const struct dm_noted_node *d = &e->departed[i];
		dm_slot_t s = dm_roster_find(e, d->name, strlen(d->name));

		if (s != DM_SLOT_NONE && s != e->self && e->nodes[s].incarnation == d->incarnation)
			dm_roster_erase(e, s);
	}
	e->n_departed = 0;
	e->departed_next = 0;
}

/*
 * Leaving: joiners we refused while sponsoring another may know no member
 * but us; name another member to each.  Seed 101/6 (naimi-trehel, leave):
 * a sponsor busy with another join refused n0 (its only candidate), then
 * left; n0 asked the departed sponsor for ever ("n0 never became ready").
 * (Naming another member in every busy refusal fixed it too, but changed
 * joins under crashes and partitions; this changes only leaves.)
 */
static void
tell_refused_joiners(struct dm_engine *e)
{
	for (size_t i = 0; i < e->n_refused; i++) {
		struct dm_msg *r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);

		r->arg = EAGAIN;
		hint_other_member(e, r, e->refused[i].name);
		send_to_name(e, e->refused[i].name, r);
	}
	e->n_refused = 0;
	e->refused_next = 0;
}

void
dm_membership_left(struct dm_engine *e)
{
	struct dm_effect fx = { .type = DM_FX_LEFT };

	/* Members that never acknowledged our LEAVE (cut off, paused or
	 * crashed; we gave up on them after T_fail) still list us and never
	 * applied the roster we leave behind.  A later process of ours must
	 * not help one of them, from that roster, remove our old entry: with
	 * other leavers that timed out on it too it would rebuild a majority
	 * of the roster we left, beside the members that went on without us
	 * and may have removed it.  The membership record keeps them, at a
	 * label above every one we knew of them (dm_member_record.c), and
	 * above our epoch too: every roster label this process heard of is at
	 * most its epoch, and its own label can be older than the cluster's
	 * (suzuki-kasami 3289/4, static restarts, crash, partition, leave and
	 * storms: n3, restarted from the static roster at label 0 while the
	 * cluster was at label 1, left without n0's acknowledgement; its entry
	 * for n0 at label 1 let its next process help n0, removed meanwhile
	 * and still at label 1, remove n3's old entry, and n0 granted beside
	 * the cluster that had removed it). */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE && e->ack_waiting_n > 0;
	    j = dm_roster_next(e, j)) {
		uint64_t label = e->nodes[j].roster_epoch > e->roster_epoch ?
		    e->nodes[j].roster_epoch : e->roster_epoch;

		if (e->epoch > label)
			label = e->epoch;

		if (j != e->self && dm_bit_get(e->ack_waiting, j) &&
		    dm_record_agree(e, e->nodes[j].name, label + 1) < 0)
			dm_log(e, DM_LOG_WARNING, "membership record full: a member that did not "
			    "acknowledge our leave is not kept", NULL, j);
	}
	dm_record_left(e);
	e->membership = DM_MEMBER_LEFT;
	dm_timer_stop(e, &e->roster_timer);
	dm_timer_stop(e, &e->heartbeat_timer);
	dm_timer_stop(e, &e->lease_timer);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self) {
			struct dm_effect rm = { .type = DM_FX_PEER_REMOVE,
			    .u.peer = { .name = e->nodes[j].name, .address = e->nodes[j].address } };
			dm_emit(e, &rm);
		}
	dm_emit(e, &fx);
}

int
dm_roster_leave(struct dm_engine *e)
{
	/* "A node wishing to leave the group may do so by notifying all other
	 *  nodes of its intention.  The other nodes should acknowledge." */
	struct dm_msg *m;

	if (e->membership != DM_MEMBER_ACTIVE)
		return -EALREADY;
	e->membership = DM_MEMBER_LEAVING;
	dm_membership_sponsor_abort(e);	/* the joiner will ask another member */
	tell_refused_joiners(e);
	dm_local_lose_all(e, -ESHUTDOWN, true);
	memset(e->ack_waiting, 0, sizeof(e->ack_waiting));
	e->ack_waiting_n = 0;
	m = dm_msg_begin(e, DM_MSG_LEAVE, NULL);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self)
			continue;
		dm_bit_set(e->ack_waiting, j, true);
		e->ack_waiting_n++;
		dm_send(e, j, m);
	}
	if (e->ack_waiting_n == 0)
		dm_membership_left(e);
	else
		dm_timer_arm(e, &e->roster_timer, e->now + fail_silence(e));
	return 0;
}

int
dm_membership_on_leave(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	/* "Each node checks to see if the departing node is listed in its NAMES
	 *  array, and if so, removes it ... a node awaiting a REPLY message from
	 *  a departing node should pretend the REPLY was received." */
	if (e->membership == DM_MEMBER_JOINING || e->membership == DM_MEMBER_RESTARTING) {
		/* Joining (or waiting to rejoin): the LEAVE of a member may
		 * come before our roster does, and the sponsor's snapshot,
		 * taken before it heard the LEAVE, may still list the leaver.
		 * Nobody would tell us again (a leave takes no new epoch, so
		 * the snapshot is not recognisably stale).  Acknowledge it as a
		 * member would, and erase the leaver when the roster arrives.
		 * Seed 517/6 (suzuki-kasami, leave): the LEAVE was dropped (the
		 * leaver was not listed yet); the joiner became READY listing
		 * it, and as the sponsor of the next join waited for its
		 * NODE_ADD_ACK for ever, holding the roster lock. */
		dm_membership_note_node(e->departed, &e->n_departed, &e->departed_next, peer,
		    dm_msg_sender_incarnation(m));
		if (from == DM_SLOT_NONE) {
			struct dm_msg *ack = dm_msg_begin(e, DM_MSG_LEAVE_ACK, NULL);
			send_to_name(e, peer, ack);
			return 0;
		}
	}
	if (from == DM_SLOT_NONE)
		return 0;
	send_simple(e, from, DM_MSG_LEAVE_ACK, 0, 0);
	/* The incarnation that left is gone for good (a leaver's process
	 * exits; it comes back only as a new incarnation): a sponsor's
	 * NODE_ADD of it sent again after this (its first copy's ack not yet
	 * in) must not add it back.  Naimi-Trehel 126138/11 (leaves): it
	 * did, and this node, as the next sponsor, sent NODE_ADD to the
	 * departed node for ever, holding the roster lock. */
	dm_membership_note_removed(e, from);
	if (e->sponsoring && strcmp(e->joiner, peer) == 0 &&
	    e->joiner_incarnation == e->nodes[from].incarnation) {
		/* The node we sponsor joined through another sponsor and now
		 * leaves.  Our join must not go on: with the roster lock it
		 * would add the leaver again, every member would list a node
		 * that is gone, and the next sponsor would wait for its
		 * NODE_ADD_ACK for ever, holding the roster lock (raymond
		 * 762126/15, leaves: no join finished again).  Erase first, so
		 * the abort cancels a NODE_ADD of ours already out. */
		dm_membership_sponsor_abort_erasing(e, from);
		return 0;
	}
	dm_roster_erase(e, from);
	return 0;
}

int
dm_membership_on_leave_ack(struct dm_engine *e, dm_slot_t from)
{
	if (e->membership != DM_MEMBER_LEAVING || from == DM_SLOT_NONE ||
	    !dm_bit_get(e->ack_waiting, from))
		return 0;
	dm_bit_set(e->ack_waiting, from, false);
	if (--e->ack_waiting_n == 0)
		dm_membership_left(e);
	return 0;
}
