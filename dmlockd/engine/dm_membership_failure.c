/*
 * dm_membership_failure.c: failure (RA §7.4) -- announcing a removal
 * (NODE_FAILED) and applying one, the memory of removed incarnations, and
 * "restart and rejoin" for a node told it is no longer a member (REJOIN,
 * its own removal, members that refuse its lease for good).
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

/*
 * A roster label names one roster.  A removal's announcement carries the
 * digest of the announcer's roster once the subject is out (8 bytes, big
 * endian, in the payload), and a member that applies it takes its label
 * only if its own roster then lists the same names.  Taken over other
 * names, one label stood for two rosters: rcv 83366/7 (partitions), n1 at
 * label 13 (n3 removed, n1 admitted) and n3 at label 4 (still listing
 * itself, not n1) both applied n4's removal of n5 at label 22.  At one
 * label the lease counted each one's acks, the digest catch-up could level
 * neither, and each then admitted a node under its own roster that the
 * other never heard of: two members that do not list each other, each
 * with a lease -- which an algorithm that asks only the members it lists
 * (Ricart-Agrawala) cannot tell from a free lock.  A member that does not
 * take the label applies the removal all the same (its voters committed
 * to it), stays behind with its old label, and is level again by the
 * digest catch-up (dm_lease.c) once it lists the announcer's names.
 */
static void
removal_digest_put(struct dm_msg *m, uint64_t digest)
{
	for (size_t i = 0; i < 8; i++)
		m->payload[i] = (uint8_t)(digest >> (56 - 8 * i));
	m->payload_len = 8;
}

/* Is ours, the digest of our roster once the removal m announces is
 * applied, the announcer's?  An announcement without a digest (malformed)
 * does not say, and its label is not taken. */
static bool
removal_roster_ours(struct dm_engine *e, const struct dm_msg *m, uint64_t ours)
{
	uint64_t digest = 0;

	if (m->payload_len != 8)
		return false;
	for (size_t i = 0; i < 8; i++)
		digest = digest << 8 | m->payload[i];
	return dm_membership_digest_agrees(e, ours, digest);
}

/* Take the label of the removal m announces if our roster, once it is
 * applied, is the announcer's (ours: its digest then; above). */
static void
removal_label_take(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m, uint64_t ours)
{
	if (m->epoch <= e->roster_epoch)
		return;
	if (!removal_roster_ours(e, m, ours)) {
		dm_log(e, DM_LOG_INFO, "removal applied; its roster label not taken: "
		    "our names differ from the announcer's", NULL, from);
		if (m->epoch > e->roster_applied)
			e->roster_applied = m->epoch;	/* unsettled (dm_engine_private.h) */
		return;
	}
	dm_membership_roster_label(e, m->epoch);
}

/* Announce the removal of slot at epoch (majority: the epoch the voters
 * accepted; otherwise epoch_next()). */
void
dm_membership_announce_failure_at(struct dm_engine *e, dm_slot_t slot, uint64_t epoch)
{
	/* "When it has been determined that node j has failed, this can be
	 *  broadcast by the node detecting the failure." */
	struct dm_msg *m;

	dm_epoch_learn(e, epoch > e->epoch ? epoch : epoch_next(e));
	if (e->epoch > e->promised_epoch)
		e->promised_epoch = e->epoch;
	dm_membership_roster_label(e, e->epoch);
	m = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);
	set_subject(m, &e->nodes[slot]);
	set_sender(e, m);
	removal_digest_put(m, dm_membership_digest_claimed(e, dm_roster_digest_without(e, slot)));
	dm_log(e, DM_LOG_WARNING, "member failed: removing it", NULL, slot);
	dm_membership_note_removed(e, slot);
	e->nodes[slot].departing = true;
	broadcast(e, m);
	if (e->sponsoring && strcmp(e->nodes[slot].name, e->joiner) == 0) {
		/* We remove an entry under the name we are adding: members that
		 * took our NODE_ADD may erase the new entry with it, and a
		 * finished join would then be a member here only (2975/8,
		 * pause).  Give the join up (cancelling our NODE_ADD once the
		 * name is out of our roster); the joiner retries. */
		dm_membership_sponsor_abort_erasing(e, slot);
		return;
	}
	dm_roster_erase(e, slot);
}

void
dm_membership_announce_failure(struct dm_engine *e, dm_slot_t slot)
{
	dm_membership_announce_failure_at(e, slot, epoch_next(e));
}

void
dm_roster_suspect(struct dm_engine *e, dm_slot_t slot)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used || slot == e->self)
		return;
	if (e->policy == DM_FAILURE_PAPER) {
		dm_membership_announce_failure(e, slot);
		return;
	}
	dm_membership_vote_start(e, slot);
}

bool
dm_membership_incarnation_removed(const struct dm_engine *e, const char *name, uint64_t incarnation)
{
	if (incarnation == 0)
		return false;
	for (size_t i = 0; i < DM_REMOVED_MEMORY; i++)
		if (e->removed[i].incarnation == incarnation && strcmp(e->removed[i].name, name) == 0)
			return true;
	return false;
}

/* Did we remove some incarnation of this name (the last DM_REMOVED_MEMORY)? */
bool
dm_membership_name_removed(const struct dm_engine *e, const char *name)
{
	for (size_t i = 0; i < DM_REMOVED_MEMORY; i++)
		if (e->removed[i].incarnation != 0 && strcmp(e->removed[i].name, name) == 0)
			return true;
	return false;
}

/*
 * slot is being erased by a majority removal (or took its leave,
 * dm_membership_on_leave): that incarnation is dead for good.  A NODE_ADD
 * of it at the same epoch (a sponsor acting on a stale JOIN, or finishing
 * a join concurrently with the removal: the two are not ordered) is
 * acknowledged but not applied (dm_membership_on_node_add).  Re-added, the
 * fresh entry carried none of the voters' agreements and got lease acks
 * again: seed 4927/16 (partition), n7 removed n15 at epoch 47, n13 re-added
 * the same incarnation from a stale JOIN, and n15, never told, renewed its
 * lease and held lock/c while n1, which had taken the erase as n15's
 * REPLY, granted.  A joiner of a dead incarnation that still finishes (its
 * sponsor had not heard) is answered REJOIN for it and restarts.
 */
void
dm_membership_note_removed(struct dm_engine *e, dm_slot_t slot)
{
	struct dm_removed *r;

	if (e->nodes[slot].incarnation == 0 ||
	    dm_membership_incarnation_removed(e, e->nodes[slot].name, e->nodes[slot].incarnation))
		return;
	r = &e->removed[e->removed_next++ % DM_REMOVED_MEMORY];
	memcpy(r->name, e->nodes[slot].name, sizeof(r->name));
	r->incarnation = e->nodes[slot].incarnation;
	dm_record_note_dead(e, r->name, r->incarnation);
}

/* Our roster has applied the removal decided at epoch: the roster label
 * (dm_engine_private.h) says so; it is never lowered but by a restart. */
void
dm_membership_roster_label(struct dm_engine *e, uint64_t epoch)
{
	if (epoch > e->roster_epoch)
		e->roster_epoch = epoch;
	if (epoch > e->roster_applied)
		e->roster_applied = epoch;
}

static void
restart_and_rejoin_why(struct dm_engine *e, const char *told_by, const char *why)
{
	/* §7.4: "the node should restart itself and use the insertion protocol";
	 * §7.2.1: wait the restart interval first. */
	dm_slot_t by = dm_roster_find(e, told_by, strlen(told_by));

	dm_log(e, DM_LOG_ERR, why, NULL, by);
	/* Sponsors to try: the node that told us first, then the old roster. */
	memset(&e->sponsors[0], 0, sizeof(e->sponsors[0]));
	memcpy(e->sponsors[0].name, told_by, strlen(told_by) + 1);
	if (by != DM_SLOT_NONE)
		memcpy(e->sponsors[0].address, e->nodes[by].address, sizeof(e->nodes[by].address));
	e->n_sponsors = 1;
	e->sponsor_next = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || j == by || e->n_sponsors >= DM_NODES_MAX)
			continue;
		memcpy(e->sponsors[e->n_sponsors].name, e->nodes[j].name, sizeof(e->nodes[j].name));
		memcpy(e->sponsors[e->n_sponsors].address, e->nodes[j].address,
		    sizeof(e->nodes[j].address));
		e->n_sponsors++;
	}
	/* The members went on without us: a later process started from the
	 * static peers must join too (dm_record_moved_on()), not form that
	 * roster again (dmlock-sim --static-restarts, seed 1135/4: a node
	 * told to rejoin crashed while joining, came back as a member of the
	 * static roster, and the other restarted peers joined it beside the
	 * member that had gone on). */
	dm_record_left(e);
	e->membership = DM_MEMBER_RESTARTING;
	e->static_member = false;	/* (we join through a sponsor now) */
	e->n_departed = 0;
	e->departed_next = 0;
	dm_membership_sponsor_abort(e);	/* never answer a JOIN from a roster we throw away */
	dm_local_lose_all(e, -ESHUTDOWN, true);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self)
			dm_roster_erase(e, j);
	/* A new identity for the new membership that cannot collide with the
	 * shell's numbering of daemon starts (1, 2, 3... or a clock). */
	e->incarnation += (uint64_t)1 << 48;
	e->nodes[e->self].incarnation = e->incarnation;
	e->incarnation_since = e->now;
	e->roster_epoch = 0;	/* (the sponsor's snapshot brings its label) */
	e->roster_applied = 0;
	/* Back to the epoch the others told us, as a joiner started with a
	 * sponsor has: while we join, our epoch says how old a roster we may
	 * take, and this process's floor may be above every member's (a
	 * static member restarted at its floor after the others removed it:
	 * a lone survivor's epoch never rises, and its roster was refused
	 * for ever -- dmlock-sim --static-restarts, seed 7/2).  The floor
	 * comes back when we are a member (dm_membership_ready()), and our
	 * ballots stay above it meanwhile. */
	if (e->epoch > e->epoch_at_ready)
		e->epoch_at_ready = e->epoch;
	if (e->epoch > e->promised_epoch)
		e->promised_epoch = e->epoch;
	e->epoch = e->epoch_heard;
	e->vote_subject = DM_SLOT_NONE;
	dm_timer_stop(e, &e->heartbeat_timer);
	dm_timer_stop(e, &e->lease_timer);
	e->lease_until = 0;
	dm_timer_arm(e, &e->roster_timer, e->now + e->restart_interval_ms);
}

static void
restart_and_rejoin(struct dm_engine *e, const char *told_by)
{
	restart_and_rejoin_why(e, told_by, "removed from the roster: restarting and rejoining");
}

/*
 * A removal (not a sponsor's cancel, arg 1) of exactly our incarnation,
 * while we are still joining: the members had added it (a NODE_ADD made it
 * a member there) and removed it since, e.g. while we were frozen or cut
 * off.  That incarnation is spent; joining on under it, a sponsor that had
 * not heard of the removal adds it again, and members take that add and
 * the removal in either order (seed 1115/12, pause: n9 became READY at the
 * removal's epoch, listed by all but n5, which answered REJOIN, and its
 * request, first in lock/b's queue, stalled every other for ever).  We
 * start again under a new incarnation at once (a joiner holds nothing).
 */
static bool
spent_incarnation(const struct dm_engine *e, const struct dm_msg *m)
{
	return m->arg != 1 && m->incarnation != 0 && m->incarnation == e->incarnation;
}

int
dm_membership_on_node_failed(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	/* "Any node which is awaiting a REPLY message from the failed node should
	 *  pretend that a REPLY was received.  In addition the node should be
	 *  erased from the NAMES array." */
	dm_slot_t s = dm_roster_find(e, m->node, m->node_len);

	/* The prober whose vote on s we joined announces its outcome: that
	 * vote is over, whatever we make of the announcement below (erase s,
	 * give up sponsoring it, or ignore it as about an incarnation we no
	 * longer list, or as superseded).  Left standing, it denied lease acks
	 * to s's live entry for ever (hierarchical seed 181/6, pause: the
	 * rejoined node became system coordinator, granted its own group, and
	 * never got a lease). */
	bool joined = from != DM_SLOT_NONE && s != DM_SLOT_NONE &&
	    e->nodes[from].joined_vote_subject == s;
	if (joined)
		e->nodes[from].joined_vote_subject = DM_SLOT_NONE;
	if (s != DM_SLOT_NONE && from == DM_SLOT_NONE && roster_provisional(e) &&
	    e->nodes[s].via_add && m->incarnation == e->nodes[s].incarnation) {
		/* A NODE_ADD we took while joining was cancelled (its sponsor
		 * gave up) or the node failed since. */
		dm_roster_erase(e, s);
		return 0;
	}
	if (from != DM_SLOT_NONE && e->sponsoring && strcmp(m->node, e->joiner) == 0 &&
	    m->incarnation == e->joiner_incarnation && m->arg != 1 &&
	    m->epoch >= e->rx_epoch_before) {
		/* The members removed the joiner we are adding (our NODE_ADD
		 * made it a member there, and it stays silent until its roster
		 * arrives): finishing would make it a member here only.  Seed
		 * 1556/5: that joiner then granted beside the others with a
		 * repeated fencing token.  It retries its JOIN.  (Asking every
		 * member to add it again instead helped Maekawa under pauses
		 * but broke Naimi-Trehel seeds: NOTES.md, round 4.) */
		dm_membership_sponsor_abort(e);
		/* If we list it already (it joined before and asks again), the
		 * removal is about our entry as well: go on and erase it.
		 * Raymond --election invitation 419/4 (partition): n3 agreed to
		 * remove n0, took the announcement as about the join only,
		 * released its vote and kept n0 listed; it acknowledged n0's
		 * lease again while n1 had erased n0. */
		if (s == DM_SLOT_NONE)
			return 0;
	}
	if (s == e->self && e->membership == DM_MEMBER_JOINING && spent_incarnation(e, m)) {
		/* From anyone: a joiner's roster is provisional. */
		restart_and_rejoin(e, peer);
		return 0;
	}
	if (s == e->self && s != DM_SLOT_NONE) {
		/* We were removed (perhaps while paused): stop serving at once.
		 * Also when the announcer is no longer in our roster, if it
		 * names exactly this incarnation after our join: a removal
		 * committed before its prober was removed in turn still
		 * stands (seed 643989/6, pauses: n5 removed n4 at epoch 8, n4
		 * removed n5 at 11 before the announcement arrived and ignored
		 * it; n0 and n3, bound by their agreement, never acknowledged
		 * n4's lease again, n4 never entered and deferred everyone for
		 * good).  A removed node's own later votes reach no majority
		 * (members ignore a stranger's SUSPECT), so such a message is
		 * no forgery of a stale roster. */
		bool named = from != DM_SLOT_NONE ?
		    (m->incarnation == 0 || m->incarnation == e->incarnation) :
		    (m->incarnation != 0 && m->incarnation == e->incarnation && m->arg != 1);
		if (named && (m->epoch > e->join_epoch ||
		    (m->epoch == e->join_epoch && m->incarnation == e->incarnation)) &&
		    (e->membership == DM_MEMBER_ACTIVE || e->membership == DM_MEMBER_SYNCING))
			restart_and_rejoin(e, peer);
		return 0;
	}
	if (from == DM_SLOT_NONE)
		return 0;
	if (s == DM_SLOT_NONE) {
		/* A removal a member applied of a node we no longer list (we
		 * removed it ourselves, under another ballot): our roster is
		 * the one that removal made, as far as that node goes -- if it
		 * lists the announcer's names (removal_label_take()). */
		if (m->arg != 1)
			removal_label_take(e, from, m, dm_roster_digest(e));
		return 0;
	}
	if (m->incarnation != 0 && e->nodes[s].incarnation != 0 &&
	    m->incarnation != e->nodes[s].incarnation)
		return 0;	/* about an older incarnation already gone */
	if (m->arg != 1 && m->epoch < e->rx_epoch_before) {
		/* Decided at an epoch older than one we know: a later removal
		 * (ballot) superseded it, and the voters of this one may have
		 * been released since (e.g. its prober was removed), so the
		 * subject may hold a fresh lease.  Seed 2398/7 (pause): a
		 * prober frozen right after its vote completed announced on
		 * resuming, two epochs late; members erased a live holder.
		 * But if we agreed to this very vote, it was committed and we
		 * may not acknowledge the subject's lease again (seed 1822/7,
		 * partition: the late announcement released its voters, and
		 * the removed node renewed its lease with their acks and
		 * granted beside its prober): we remove it ourselves at a
		 * current epoch, as for a prober gone before its outcome. */
		if (joined)
			dm_membership_vote_orphaned(e, s);
		return 0;
	}
	if (m->arg == 1 && (e->nodes[s].added_by != from || e->nodes[s].added_serial != m->serial ||
	    e->nodes[s].added_twice))
		/* A sponsor cancels its NODE_ADD, but our entry came from
		 * another add (or our roster): the node joined through another
		 * sponsor since.  Seed 1715/4 (pause): a removed sponsor's
		 * cancel, delayed past the joiner's join through another
		 * member, erased the live joiner. */
		return 0;
	if (m->arg == 1 && e->nodes[s].replaced_incarnation != 0 &&
	    !dm_membership_incarnation_removed(e, e->nodes[s].name, e->nodes[s].replaced_incarnation)) {
		/* The cancelled add had replaced another incarnation of the
		 * name.  The cancel undoes that add; it says nothing about the
		 * one replaced, which may be live and deferring our requests
		 * (they reached whichever incarnation answers the name).  Seed
		 * 618871/8 (pause): a dead incarnation's add and its cancel,
		 * both delayed, replaced and then erased the entry of a live
		 * member; its reply taken as given, we entered beside it.  Put
		 * the replaced entry back, asking again (a dead one is removed
		 * by failure detection as usual). */
		char name[DM_NODE_NAME_MAX + 1], address[DM_ADDRESS_MAX + 1];

		memcpy(name, e->nodes[s].name, sizeof(name));
		memcpy(address, e->nodes[s].address, sizeof(address));
		dm_log(e, DM_LOG_INFO, "a cancelled add gives the member's entry back", NULL, s);
		return dm_roster_replace(e, s, name, address, e->nodes[s].replaced_incarnation);
	}
	dm_log(e, DM_LOG_WARNING, "member removed by a failure announcement", NULL, s);
	if (m->arg != 1) {
		dm_membership_note_removed(e, s);
		removal_label_take(e, from, m, dm_roster_digest_without(e, s));
	}
	dm_roster_erase(e, s);
	return 0;
}

void
dm_membership_restart_refused(struct dm_engine *e, dm_slot_t refuser)
{
	dm_slot_t by = refuser;

	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_SYNCING)
		return;
	/* Rejoin first through a member that still acknowledges us and was
	 * heard within T_fail; else through the refuser just heard from. */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self && !e->nodes[j].refuses_our_lease &&
		    !silent_long_enough(e, j)) {
			by = j;
			break;
		}
	restart_and_rejoin_why(e, e->nodes[by].name, "members that agreed to remove us refuse "
	    "our lease and cannot be outvoted: restarting and rejoining");
}

int
dm_membership_on_rejoin(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_SYNCING)
		return 0;	/* leaving, left, or already rejoining */
	/* Only a member may tell us, and only about a removal after our join
	 * (a late REJOIN aimed at our previous membership is stale) -- or at
	 * the epoch of our join if it answers this very incarnation (serial):
	 * our removal was decided at that epoch, concurrently with our join
	 * (seed 112187/12, partition: n1 finished n8's join at epoch 34, then
	 * applied n7's removal of that incarnation at epoch 34; n8 ignored
	 * n1's REJOINs to its requests, and later held lock/a while n1, which
	 * no longer counted it, granted too).  A previous membership had
	 * another incarnation (a restart takes a new one). */
	if (from == DM_SLOT_NONE || m->epoch < e->join_epoch ||
	    (m->epoch == e->join_epoch && (m->serial == 0 || m->serial != e->incarnation)))
		return 0;
	/* Nor from a member whose roster is behind ours: it does not list us
	 * because it missed the changes we applied, not because a majority
	 * removed us (seed rcv 150133/6, partitions: n4, cut off at label 12,
	 * told n2 and n3, members at label 17, that they were strangers, and
	 * they left; so did everyone else, and the cluster ended with no
	 * member).  Ignoring it costs no safety -- a removal's voters refuse
	 * our lease, and a refused member restarts on its own
	 * (dm_membership_restart_refused()) -- and it is the rule the lease
	 * already keeps: no ack for a holder behind our label (dm_lease.c).
	 * Except for a process restarted from the static roster and its
	 * record, answered by a member that has not acknowledged it yet: that
	 * member lists an earlier incarnation of ours, and nobody lists this
	 * one, however old the member's roster (naimi-trehel 1814/7 and
	 * 1241/10, crashes: n4 restarted at its record's label 6 and ignored
	 * the REJOIN of n3, behind it, and waited as a member nobody knew). */
	if (m->roster_epoch < e->roster_epoch && !dm_static_hello_awaited(e, from))
		return 0;
	restart_and_rejoin(e, peer);
	return 0;
}

/* A non-member talks to us as if it were one (§7.4, last paragraph). */
int
dm_membership_on_stranger(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	struct dm_msg *r;

	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_LEAVING)
		return 0;
	r = dm_msg_begin(e, DM_MSG_REJOIN, NULL);
	flag_member(e, r);
	r->serial = m != NULL ? dm_msg_sender_incarnation(m) : 0;	/* the one we answer */
	send_to_name(e, peer, r);
	return 0;
}

void
dm_membership_stranger_linked(struct dm_engine *e, const char *peer)
{
	if (e->sponsoring && strcmp(peer, e->joiner) == 0)
		return;	/* our joiner: it gets its roster soon */
	dm_membership_on_stranger(e, peer, NULL);
}

int
dm_roster_remove_admin(struct dm_engine *e, const char *peer)
{
	dm_slot_t s = dm_roster_find(e, peer, strlen(peer));

	if (s == DM_SLOT_NONE)
		return -ENOENT;
	if (s == e->self)
		return -EINVAL;
	dm_membership_announce_failure(e, s);
	return 0;
}

void
dm_roster_restarted(struct dm_engine *e, const char *peer)
{
	/* The event does not say which incarnation came back, and our record
	 * may already be the new one (added by another sponsor), so it is only
	 * a hint: the restarted node's JOIN carries its incarnation and is
	 * judged exactly in dm_membership_on_join(). */
	dm_slot_t s = dm_roster_find(e, peer, strlen(peer));

	if (s != DM_SLOT_NONE && s != e->self)
		dm_log(e, DM_LOG_INFO, "peer restarted; its JOIN will replace it", NULL, s);
}
