/*
 * dm_election_invitation.c: the invitation election (Garcia-Molina 1982)
 * as in the lecture (sync-and-election-lecture.txt, "The Invitation
 * algorithm"), behind the same interface as the bully election
 * (dm_election.h; selected with config election = invitation).
 *
 *   "Instead of looking for a global coordinator, tie the coordinator to
 *    the group that it coordinates ... use of sequence numbers to make
 *    unambiguous the group identity."
 *   "When you want to establish yourself as the coordinator you create a
 *    new group ... suggesting the potential participants to join the new
 *    group with you as the leader ... When the group is formed, you send
 *    the new definition to all the participants in the group."
 *   "A participant accepts a new definition only from its current group
 *    coordinator and when the participant is in the Reorganization state."
 *   "Let the competing coordinators agree to merge their groups into a
 *    single group."
 *
 * Group identifier = the epoch (counter k, coordinator name): unique
 * because a coordinator never reuses a counter.  What we do (see
 * NOTES-hierarchical.md):
 *  - Recovery + Merge in one: a node that wants a new group invites every
 *    roster member (INVITATION), not only the coordinators it found; a
 *    member that still belongs to a group joins the higher group id.
 *  - Priority settles competition instead of random delays: a coordinator
 *    invited by a lower-priority node refuses and invites everyone itself
 *    with a higher counter (the lecture's "wait inversely proportional to
 *    your priority", made deterministic).
 *  - Token/lock safety: accepting is the epoch cut (HELD reports precede
 *    ACCEPT on the FIFO link) and a group becomes Normal only when every
 *    roster member accepted; silent invitees are suspected to the engine
 *    (majority removal).  In a minority partition a group therefore never
 *    reaches Normal (it keeps inviting), so it never serves locks; after
 *    the partition heals the groups merge.
 *  - When every member accepted, the coordinator waits one lease
 *    (dm_lease_fence_ms(), INV_FENCE) before READY: members that accepted
 *    acknowledge no heartbeat of an older group any more, so every lease
 *    renewed under an older group has run out before anything of ours is
 *    used (as in dm_election_bully.c).
 *  - Timeout(): a member that suspects its coordinator first asks it
 *    ARE_YOU_THERE(group); only "no" or silence makes it form a group.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dm_election.h"

enum inv_step {
	INV_NONE = 0,
	INV_INVITING,	/* our group: invitations out, ACCEPTs awaited */
	INV_WAIT_READY,	/* accepted someone's invitation: READY awaited */
	INV_AYT,	/* ARE_YOU_THERE sent to our coordinator */
	INV_YIELD,	/* a higher-priority node refused us: await its invitation */
	INV_FENCE,	/* our group: everyone accepted; older leases run out */
};

/* Our group is being formed (invitations out, or everyone in and the
 * fence running). */
static bool
forming(const struct dm_election *el)
{
	return el->step == INV_INVITING || el->step == INV_FENCE;
}

static dm_msec_t
step_time(const struct dm_engine *e)
{
	return dm_probe_timeout(e);	/* the lecture's T */
}

static void
arm(struct dm_engine *e, dm_msec_t after)
{
	dm_lock_timer_arm(e, dm_election_lock(e), dm_now(e) + after);
}

static void
inv_send(struct dm_engine *e, struct dm_election *el, uint8_t kind, dm_slot_t to,
    uint64_t serial, const char *group_coord, uint64_t arg)
{
	struct dm_msg *m = dm_msg_begin(e, kind, dm_election_lock(e));
	size_t n = strlen(group_coord);

	m->serial = serial;
	m->node_len = (uint8_t)n;
	memcpy(m->node, group_coord, n + 1);
	m->arg = arg;
	m->seq = dm_roster_incarnation(e, to);	/* whom we count (dm_election_joining_receive) */
	el->inv_messages++;
	dm_send(e, to, m);
}

static void
note(struct dm_engine *e, struct dm_election *el, const char *what, dm_slot_t peer)
{
	char text[192];

	snprintf(text, sizeof(text), "election (invitation): %s (group %llu/%s)", what,
	    (unsigned long long)el->k, el->coord);
	dm_log(e, DM_LOG_NOTICE, text, NULL, peer);
}

static const char *
self_name(const struct dm_engine *e)
{
	return dm_roster_name(e, dm_roster_self(e));
}

/* Group ids compare by counter, then priority (the lower name outranks). */
static int
group_cmp(uint64_t ka, const char *ca, uint64_t kb, const char *cb)
{
	if (ka != kb)
		return ka > kb ? 1 : -1;
	return -strcmp(ca, cb);
}

static void complete(struct dm_engine *e, struct dm_election *el);

/* Working members that outrank us. */
static dm_msec_t
priority_rank(const struct dm_engine *e)
{
	dm_slot_t self = dm_roster_self(e);
	dm_msec_t n = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		n += j != self && !dm_roster_departing(e, j) && dm_election_outranks(e, j, self) > 0;
	return n;
}

/* "Recovery()" and "Merge(Coordinator_set)": a new group led by us,
 * every roster member invited. */
static void
form(struct dm_engine *e, struct dm_election *el, const char *why)
{
	dm_slot_t self = dm_roster_self(e);

	el->status = DM_EL_REORGANIZATION;
	el->step = INV_INVITING;
	el->elections_started++;
	if (el->k > el->k_seen)
		el->k_seen = el->k;
	el->k_try = ++el->k_seen;
	el->k = el->k_try;
	strcpy(el->coord, self_name(e));
	el->halted[0] = '\0';
	memset(el->waiting, 0, sizeof(el->waiting));
	memset(el->inv_up, 0, sizeof(el->inv_up));
	dm_election_joiners_clear(el);
	el->waiting_n = 0;
	note(e, el, why, DM_SLOT_NONE);
	/* Our own epoch cut first: HELD reports of the invitees land here. */
	dm_election_cut(e, el);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self || dm_roster_departing(e, j))
			continue;
		dm_bit_set(el->waiting, j, true);
		el->waiting_n++;
		inv_send(e, el, DM_EL_INVITATION, j, el->k, el->coord, 0);
	}
	if (el->waiting_n == 0) {
		complete(e, el);
		return;
	}
	arm(e, step_time(e));
}

/* Members added to the roster after our invitations went out (a sponsor's
 * NODE_ADD, or our own roster refilled as we rejoined) have not accepted:
 * invite them too.  Completing without them would count them as working
 * members of a group they never joined (dmlock-sim --algorithm hierarchical
 * --election invitation --seed 117 --nodes 6 --fault-mask 2: n2 formed its
 * group as it resumed from a pause, then took NODE_ADD n0; n0, still
 * joining, became n2's group coordinator and lock/c was asked of it for
 * ever).  Returns whether any was invited. */
static bool
invite_late_members(struct dm_engine *e, struct dm_election *el)
{
	bool any = false;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == dm_roster_self(e) || dm_roster_departing(e, j) || dm_bit_get(el->inv_up, j) ||
		    dm_bit_get(el->waiting, j))
			continue;
		dm_bit_set(el->waiting, j, true);
		el->waiting_n++;
		inv_send(e, el, DM_EL_INVITATION, j, el->k, el->coord, 0);
		any = true;
	}
	return any;
}

static void
complete(struct dm_engine *e, struct dm_election *el)
{
	/* "for each p in Up send(p, Ready Group, Definition)"; Normal. */
	size_t n = 1;
	dm_msec_t fence;

	if (invite_late_members(e, el)) {
		el->step = INV_INVITING;
		arm(e, step_time(e));
		return;
	}
	fence = dm_lease_fence_ms(e);
	if (el->step == INV_INVITING && fence != 0) {
		el->step = INV_FENCE;	/* READY when older leases ran out */
		arm(e, fence);
		note(e, el, "every member accepted: READY once older leases ran out",
		    DM_SLOT_NONE);
		return;
	}
	dm_lock_timer_stop(e, dm_election_lock(e));
	dm_election_joiners_fix(e, el);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		n += dm_bit_get(el->inv_up, j);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		struct dm_msg *m;
		if (!dm_bit_get(el->inv_up, j))
			continue;
		/* inv_send() with the joiners of the group as payload. */
		m = dm_msg_begin(e, DM_EL_READY, dm_election_lock(e));
		m->serial = el->k;
		m->node_len = (uint8_t)strlen(el->coord);
		memcpy(m->node, el->coord, m->node_len + 1u);
		m->seq = dm_roster_incarnation(e, j);
		m->payload_len = (uint16_t)dm_election_joiners_put(el, m->payload,
		    DM_MSG_PAYLOAD_MAX);
		/* The group's size: the members' members_at_epoch (on_ready). */
		m->arg = n;
		el->inv_messages++;
		dm_send(e, j, m);
	}
	el->status = DM_EL_NORMAL;
	el->step = INV_NONE;
	el->parent[0] = '\0';
	el->members_at_epoch = n;
	el->elections_won++;
	el->epochs++;
	dm_lease_election_led(e);
	note(e, el, "this node is the new coordinator", DM_SLOT_NONE);
	el->hooks->normal(e);
}

/* ARE_YOU_THERE's arg: 0 "do you still lead our group?"; AYT_NEW_EPOCH
 * also "if so, form a new group": a lock's token is lost although
 * everyone is up, and only a new epoch regenerates it. */
#define AYT_NEW_EPOCH	1

static void
ask_or_form(struct dm_engine *e, struct dm_election *el, const char *why, uint64_t ayt_arg)
{
	dm_slot_t c = dm_election_coordinator(e, el);

	if (forming(el) || el->step == INV_AYT || el->step == INV_YIELD)
		return;
	/* "Timeout(): if Coordinator = self then return(); send(Coordinator,
	 *  AreYouThere, group)" -- a member asks before breaking away. */
	if (el->status == DM_EL_NORMAL && !dm_election_i_coordinate(e, el) &&
	    c != DM_SLOT_NONE && !dm_roster_departing(e, c) && !dm_election_roster_stale(e, el)) {
		el->step = INV_AYT;
		inv_send(e, el, DM_EL_ARE_YOU_THERE, c, el->k, el->coord, ayt_arg);
		arm(e, step_time(e));
		return;
	}
	form(e, el, why);
}

static void
inv_start(struct dm_engine *e, struct dm_election *el, const char *why)
{
	ask_or_form(e, el, why, 0);
}

/* A token overdue with the coordinator alive: the coordinator (asked) or
 * we (no answer, or we coordinate) form a new group: its epoch
 * regenerates every token not reported HELD. */
static void
inv_start_new_epoch(struct dm_engine *e, struct dm_election *el, const char *why)
{
	ask_or_form(e, el, why, AYT_NEW_EPOCH);
}

/* --- Responses --- */

static int
on_invitation(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	const char *inviter = dm_roster_name(e, from);
	dm_slot_t self = dm_roster_self(e);
	bool coordinator = dm_election_i_coordinate(e, el) && el->status != DM_EL_DOWN;

	if (m->serial > el->k_seen)
		el->k_seen = m->serial;
	if (m->node_len != strlen(inviter) || memcmp(m->node, inviter, m->node_len) != 0)
		return -EPROTO;		/* one invites only into its own group */
	if (m->serial == el->k && strcmp(el->coord, inviter) == 0) {
		/* The same group again (our ACCEPT or its HELD reports may be
		 * lost): cut and report again, accept again. */
		if (el->step == INV_WAIT_READY || el->status == DM_EL_NORMAL) {
			if (el->status != DM_EL_NORMAL)
				dm_election_cut(e, el);
			inv_send(e, el, DM_EL_ACCEPT, from, m->serial, inviter, 0);
		}
		return 0;
	}
	if (coordinator && dm_election_outranks(e, self, from) > 0) {
		/* A lower-priority node tries to lead: we merge instead. */
		inv_send(e, el, DM_EL_ACCEPT, from, el->k_seen, el->coord, 1);
		if (!forming(el) || el->k <= m->serial)
			form(e, el, "a lower-priority node invited us: merging under us");
		return 0;
	}
	if (group_cmp(m->serial, inviter, el->k, el->coord) <= 0) {
		/* An older group id than ours: refuse, tell the counter. */
		inv_send(e, el, DM_EL_ACCEPT, from, el->k_seen, el->coord, 1);
		return 0;
	}
	/* "Invitation: stop_processing(); Coordinator = sender; Group = ..."
	 * Accepting is the epoch cut: HELD reports go out before ACCEPT. */
	el->status = DM_EL_REORGANIZATION;
	el->step = INV_WAIT_READY;
	el->k = el->k_try = m->serial;
	strcpy(el->coord, inviter);
	strcpy(el->halted, inviter);
	memset(el->waiting, 0, sizeof(el->waiting));
	el->waiting_n = 0;
	/* READY overdue: Recovery() (it comes a lease after the last ACCEPT). */
	arm(e, 4 * step_time(e) + dm_lease_fence_ms(e));
	dm_election_cut(e, el);
	inv_send(e, el, DM_EL_ACCEPT, from, m->serial, inviter, 0);
	return 0;
}

static int
on_accept(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (m->arg == 1) {
		/* Refused: we learn a higher counter; the timer retries above
		 * it -- unless a higher-priority node refused: it merges us. */
		if (m->serial > el->k_seen)
			el->k_seen = m->serial;
		if (el->step == INV_INVITING &&
		    dm_election_outranks(e, from, dm_roster_self(e)) > 0) {
			el->step = INV_YIELD;
			el->status = DM_EL_ELECTION;
			arm(e, 4 * step_time(e));
		}
		return 0;
	}
	if (el->step != INV_INVITING || m->serial != el->k || from >= DM_NODES_MAX ||
	    !dm_bit_get(el->waiting, from))
		return 0;
	dm_bit_set(el->waiting, from, false);
	el->waiting_n--;
	dm_bit_set(el->inv_up, from, true);
	if (m->arg == DM_EL_ANSWER_JOINING)
		dm_election_joiner_note(el, from);
	inv_send(e, el, DM_EL_ACCEPT_ANSWER, from, m->serial, el->coord, 0);
	if (el->waiting_n == 0)
		complete(e, el);
	return 0;
}

static int
on_held(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (el->step != INV_INVITING || !dm_election_current(el, m) ||
	    !dm_election_i_coordinate(e, el))
		return 0;
	el->hooks->held(e, from, m);
	return 0;
}

static int
on_ready(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	/* "A participant accepts a new definition only from its current group
	 *  coordinator and when the participant is in the Reorganization
	 *  state." */
	if (el->status != DM_EL_REORGANIZATION || el->step != INV_WAIT_READY ||
	    m->serial != el->k || strcmp(el->coord, dm_roster_name(e, from)) != 0)
		return 0;
	if (dm_election_joiners_set(el, m->payload, m->payload_len) < 0)
		return -EPROTO;
	if (dm_election_is_joiner(e, el, dm_roster_self(e))) {
		/* The group counts us as a joiner: an invitation reached us
		 * while we were still joining (passive ACCEPT, arg JOINING),
		 * we joined, and a resent invitation of the same group made us
		 * accept again as a member after the coordinator had completed
		 * on our first answer.  Normal in this group, no group
		 * coordinator would ever be ours (working() leaves joiners out)
		 * and our requests would go nowhere: form a group that counts
		 * us instead (hierarchical --election invitation --seed 455
		 * --nodes 8 --fault-mask 6: n6 resumed from a pause during its
		 * rejoin, lock/a never requested). */
		el->step = INV_NONE;
		form(e, el, "the group counts us as a joiner, but we have joined");
		return 0;
	}
	el->status = DM_EL_NORMAL;
	el->step = INV_NONE;
	el->parent[0] = '\0';
	el->members_at_epoch = dm_election_epoch_members(e, m->arg);
	el->epochs++;
	dm_lease_election_followed(e);
	dm_lock_timer_stop(e, dm_election_lock(e));
	inv_send(e, el, DM_EL_READY_ANSWER, from, m->serial, el->coord, 1);
	note(e, el, "joined the group", from);
	el->hooks->normal(e);
	return 0;
}

static int
on_are_you_there(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	bool mine = m->serial == el->k && m->node_len == strlen(el->coord) &&
	    memcmp(m->node, el->coord, m->node_len) == 0 && dm_election_i_coordinate(e, el) &&
	    el->status != DM_EL_ELECTION && el->status != DM_EL_DOWN;

	inv_send(e, el, DM_EL_AYT_ANSWER, from, m->serial, el->coord, mine ? 1 : 0);
	if (mine && el->status == DM_EL_NORMAL && dm_election_roster_stale(e, el))
		form(e, el, "the roster changed since the group formed");
	else if (mine && el->status == DM_EL_NORMAL && m->arg == AYT_NEW_EPOCH)
		form(e, el, "a member's token is overdue: a new group regenerates it");
	return 0;
}

static int
on_ayt_answer(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	(void)from;
	if (el->step != INV_AYT || m->serial != el->k)
		return 0;
	if (m->arg == 1) {
		el->step = INV_NONE;	/* the group lives: nothing to do */
		dm_lock_timer_stop(e, dm_election_lock(e));
		return 0;
	}
	el->step = INV_NONE;
	form(e, el, "our coordinator no longer leads our group");
	return 0;
}

static int
on_are_you_coordinator(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	(void)m;
	inv_send(e, el, DM_EL_AYC_ANSWER, from, el->k, el->coord,
	    dm_election_i_coordinate(e, el) && el->status == DM_EL_NORMAL ? 1 : 0);
	return 0;
}

static int
inv_receive(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (m->node_len > DM_NODE_NAME_MAX)
		return -EPROTO;
	switch (m->kind) {
	case DM_EL_INVITATION:
		return on_invitation(e, el, from, m);
	case DM_EL_ACCEPT:
		return on_accept(e, el, from, m);
	case DM_EL_HELD:
		return on_held(e, el, from, m);
	case DM_EL_READY:
		return on_ready(e, el, from, m);
	case DM_EL_ARE_YOU_THERE:
		return on_are_you_there(e, el, from, m);
	case DM_EL_AYT_ANSWER:
		return on_ayt_answer(e, el, from, m);
	case DM_EL_ARE_YOU_COORDINATOR:
		return on_are_you_coordinator(e, el, from, m);
	case DM_EL_AYC_ANSWER:
	case DM_EL_ACCEPT_ANSWER:
	case DM_EL_READY_ANSWER:
		return 0;
	default:
		/* Bully's kinds: another node runs another election. */
		return -EPROTO;
	}
}

static void
inv_timer(struct dm_engine *e, struct dm_election *el)
{
	uint8_t silent[DM_NODES_MAX / 8];

	switch (el->step) {
	case INV_INVITING:
		if (el->k_seen > el->k) {
			/* Someone refused with a higher counter: try above it. */
			form(e, el, "invitation refused: retrying with a higher group id");
			return;
		}
		/* Resend to the silent ones and suspect them; the step goes
		 * on when the engine removes them (peer_gone). */
		memcpy(silent, el->waiting, sizeof(silent));
		arm(e, step_time(e));
		for (size_t j = 0; j < DM_NODES_MAX; j++)
			if (dm_bit_get(silent, (dm_slot_t)j))
				inv_send(e, el, DM_EL_INVITATION, (dm_slot_t)j, el->k, el->coord, 0);
		for (size_t j = 0; j < DM_NODES_MAX; j++)
			if (dm_bit_get(silent, (dm_slot_t)j))
				dm_roster_suspect(e, (dm_slot_t)j);
		break;
	case INV_FENCE:
		complete(e, el);
		break;
	case INV_WAIT_READY:
		el->step = INV_NONE;
		form(e, el, "READY overdue: forming a new group");
		break;
	case INV_AYT:
		el->step = INV_NONE;
		form(e, el, "our coordinator did not answer");
		break;
	case INV_YIELD:
		el->step = INV_NONE;
		form(e, el, "no invitation came from the node we yielded to");
		break;
	default:
		break;
	}
}

static void
inv_peer_gone(struct dm_engine *e, struct dm_election *el, dm_slot_t slot)
{
	/* The engine erases the slot before calling us: the coordinator is
	 * gone when its name is no longer in the roster. */
	bool was_coord = dm_election_coordinator(e, el) == DM_SLOT_NONE;

	dm_bit_set(el->inv_up, slot, false);
	if (!dm_roster_joined(e)) {
		/* Our roster is rebuilt while we (re)join: never lead a group
		 * from it (dm_election_start() defers until we joined).  Before,
		 * a rejoining node formed a group here, its roster then
		 * refilled, and the group completed with the one member it had
		 * left to wait for: two groups served at once (--seed 93
		 * --nodes 6 --fault-mask 6, n1 and n3 beside n0's group). */
		if (was_coord || dm_election_i_coordinate(e, el) || forming(el))
			dm_election_start(e, el, "the group changed while we join");
		return;
	}
	if (forming(el)) {
		if (dm_bit_get(el->waiting, slot)) {
			dm_bit_set(el->waiting, slot, false);
			el->waiting_n--;
			if (el->waiting_n == 0)
				complete(e, el);
		}
		return;
	}
	/* The coordinator is gone, or (as coordinator) the group changed:
	 * a new group, so whatever the gone node held is regenerated. */
	if (was_coord && priority_rank(e) > 0) {
		/* Everyone saw it: "wait for a time inversely proportional to
		 * your priority" -- the highest-priority survivor invites first
		 * and we simply accept. */
		el->step = INV_YIELD;
		el->status = DM_EL_ELECTION;
		arm(e, priority_rank(e) * step_time(e));
		note(e, el, "our coordinator left the roster: waiting for an invitation",
		    DM_SLOT_NONE);
		return;
	}
	if (was_coord || dm_election_i_coordinate(e, el)) {
		el->step = INV_NONE;
		form(e, el, was_coord ? "our coordinator left the roster" :
		    "a member left the group");
	}
}

const struct dm_election_impl dm_election_invitation_impl = {
	.name = "invitation",
	.start = inv_start,
	.receive = inv_receive,
	.timer = inv_timer,
	.peer_gone = inv_peer_gone,
	.start_new_epoch = inv_start_new_epoch,
};

const struct dm_election_impl *
dm_election_impl_for(const char *name)
{
	if (name != NULL && strcmp(name, "invitation") == 0)
		return &dm_election_invitation_impl;
	return NULL;
}
