/*
 * dm_election_bully.c: the bully election (Garcia-Molina 1982) in the four
 * steps of the lecture (sync-and-election-lecture.txt, "The Bully
 * algorithm"):
 *
 *   "Step 1 Check step: a processor checks if there is a non-failed
 *    higher-priority processor ... If no answer within T, processor p goes
 *    to Step 2.  Otherwise processor p gives up the idea that it can be the
 *    leader."
 *   "Step 2 Bully step: p attempts to establish itself as the leader
 *    (Enter_Election) ... Every processor that replies in time is added in
 *    the set Up."
 *   "Step 3 Acceptation step: p asks every processor in its Up to accept it
 *    as the leader (Set_Coordinator)."
 *   "Step 4 Views synchronization step: p asks every processor in Up to
 *    accept its definition as the correct one (New_State)."
 *
 * Priority: the lower node name outranks (a stable total order).
 * Where we depart from the lecture, for token safety:
 *  - Enter_Election and Set_Coordinator go to every member, not only to
 *    lower-priority ones, and the coordinator waits for an answer from
 *    every member of its roster (a member silent past T is suspected with
 *    dm_roster_suspect() and the step goes on once the engine removes it):
 *    a member still using a token must report it before a regenerated
 *    token may exist.  A higher-priority member answering Enter_Election
 *    says "I outrank you" and holds its own election.
 *  - Acceptance is the epoch cut: the accepting node adopts the new epoch,
 *    reports (HELD, before SC_ANSWER on the same FIFO link) every lock it
 *    is using, and from then on ignores algorithm messages of other epochs.
 *  - Between the last answer to Set_Coordinator and New_State the
 *    coordinator waits one lease (dm_lease_fence_ms()): a member that
 *    accepted stops acknowledging heartbeats of older epochs, so by then
 *    no node can still hold a lease renewed under an older epoch (an old
 *    coordinator cut off by a partition kept granting from its idle tokens:
 *    raymond 590936/9, NOTES-token.md).  Members wait for New_State that
 *    much longer.
 *  - The coordinator enters Normal when it sends New_State (it has every
 *    report by then); NS answers are only counted.
 *  - The epoch counter proposed is one more than the highest seen, and
 *    epochs compare as (counter, coordinator name), so concurrent
 *    coordinators with the same counter are still ordered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dm_election.h"

enum bully_step {
	STEP_NONE = 0,
	STEP_CHECK,	/* AreYouUp sent to higher-priority members */
	STEP_WAIT,	/* gave up: waiting for someone's Set_Coordinator */
	STEP_BULLY,	/* Enter_Election sent; answers awaited */
	STEP_ACCEPT,	/* Set_Coordinator sent; reports and answers awaited */
	STEP_FENCE,	/* everyone accepted: older epochs' leases run out */
};

/* EE_ANSWER arg: 1 = "I outrank you"; this = "your counter is not above my
 * epoch's" (seq = the highest counter the member saw). */
#define EE_EPOCH_TOO_LOW	2

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
el_send(struct dm_engine *e, struct dm_election *el, uint8_t kind, dm_slot_t to,
    uint64_t serial, uint64_t arg)
{
	struct dm_msg *m = dm_msg_begin(e, kind, dm_election_lock(e));

	m->serial = serial;
	m->arg = arg;
	m->seq = dm_roster_incarnation(e, to);	/* whom we count (dm_election_joining_receive) */
	dm_send(e, to, m);
}

static void
note(struct dm_engine *e, struct dm_election *el, const char *what, dm_slot_t peer)
{
	char text[224];

	snprintf(text, sizeof(text), "election: %s (epoch %llu, coordinator %s)", what,
	    (unsigned long long)el->k, el->coord);
	dm_log(e, DM_LOG_NOTICE, text, NULL, peer);
}

static void
wait_all_others(struct dm_engine *e, struct dm_election *el, uint8_t kind, uint64_t serial)
{
	dm_slot_t self = dm_roster_self(e);

	memset(el->waiting, 0, sizeof(el->waiting));
	el->waiting_n = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self || dm_roster_departing(e, j))
			continue;
		el->waiting[j / 8] |= (uint8_t)(1u << (j % 8));
		el->waiting_n++;
		el_send(e, el, kind, j, serial, 0);
	}
}

static bool
waiting_get(const struct dm_election *el, dm_slot_t j)
{
	return j < DM_NODES_MAX && (el->waiting[j / 8] >> (j % 8)) & 1u;
}

static void
waiting_clear(struct dm_election *el, dm_slot_t j)
{
	el->waiting[j / 8] &= (uint8_t)~(1u << (j % 8));
	el->waiting_n--;
}

static void step_bully(struct dm_engine *e, struct dm_election *el);
static void step_accept(struct dm_engine *e, struct dm_election *el);
static void step_new_state(struct dm_engine *e, struct dm_election *el);
static void step_fence(struct dm_engine *e, struct dm_election *el);

/* An election is under way here: ours (CHECK, BULLY, ACCEPT) or a
 * higher-priority member's that we wait for (WAIT: its Set_Coordinator is
 * due; the WAIT timer restarts us if it never comes).  Starting another one
 * now would refuse that Set_Coordinator and restart the winner: a livelock
 * while lower members keep asking AreYouUp or their tokens stay overdue. */
static bool
running(const struct dm_election *el)
{
	return el->status == DM_EL_ELECTION &&
	    (el->step == STEP_CHECK || el->step == STEP_BULLY || el->step == STEP_ACCEPT ||
	    el->step == STEP_WAIT);
}

void
dm_election_start(struct dm_engine *e, struct dm_election *el, const char *why)
{
	/* "An election process is initiated either on Timeout ... on Recovery
	 *  ... on Detection of a change in the group." */
	dm_slot_t self = dm_roster_self(e);

	if (!dm_roster_joined(e)) {
		/* Not a member (yet): our roster is partial and our answers
		 * come through dm_election_joining_receive(); never lead. */
		el->deferred = true;
		el->status = DM_EL_ELECTION;
		arm(e, step_time(e));
		return;
	}
	if (el->impl != NULL) { el->impl->start(e, el, why); return; }	/* invitation */
	if (running(el))
		return;
	el->status = DM_EL_ELECTION;
	el->elections_started++;
	if (el->k > el->k_seen)
		el->k_seen = el->k;
	el->k_try = el->k_seen + 1;
	note(e, el, why, DM_SLOT_NONE);
	/* Step 1: "AreYouUp?" to every higher-priority member. */
	memset(el->waiting, 0, sizeof(el->waiting));
	el->waiting_n = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == self || dm_roster_departing(e, j) || dm_election_outranks(e, j, self) <= 0)
			continue;
		el->waiting[j / 8] |= (uint8_t)(1u << (j % 8));
		el->waiting_n++;
		el_send(e, el, DM_EL_ARE_YOU_UP, j, el->k_try, 0);
	}
	if (el->waiting_n == 0) {
		step_bully(e, el);
		return;
	}
	el->step = STEP_CHECK;
	arm(e, step_time(e));
}

static void
give_up(struct dm_engine *e, struct dm_election *el)
{
	/* "Otherwise processor p gives up the idea that it can be the leader";
	 * if no Set_Coordinator comes, we try again. */
	el->status = DM_EL_ELECTION;
	el->step = STEP_WAIT;
	arm(e, 4 * step_time(e));
}

static void
step_bully(struct dm_engine *e, struct dm_election *el)
{
	/* Step 2: "Enter_Election?" (to every member here, see the top). */
	el->step = STEP_BULLY;
	wait_all_others(e, el, DM_EL_ENTER_ELECTION, el->k_try);
	if (el->waiting_n == 0) {
		step_accept(e, el);
		return;
	}
	arm(e, step_time(e));
}

static void
step_accept(struct dm_engine *e, struct dm_election *el)
{
	/* Step 3: "Set_Coordinator?" -- and the epoch cut, here first. */
	const char *me = dm_roster_name(e, dm_roster_self(e));

	el->step = STEP_ACCEPT;
	el->status = DM_EL_REORGANIZATION;
	dm_election_joiners_clear(el);
	el->k = el->k_try;
	el->k_seen = el->k;
	strcpy(el->coord, me);
	dm_election_cut(e, el);
	wait_all_others(e, el, DM_EL_SET_COORDINATOR, el->k);
	if (el->waiting_n == 0) {
		step_fence(e, el);
		return;
	}
	arm(e, step_time(e));
}

static void
step_fence(struct dm_engine *e, struct dm_election *el)
{
	/* Every member accepted: wait until no lease of an older epoch can
	 * run any more, then start the epoch (see the top). */
	dm_msec_t wait = dm_lease_fence_ms(e);

	if (wait == 0) {
		step_new_state(e, el);
		return;
	}
	el->step = STEP_FENCE;
	arm(e, wait);
	note(e, el, "every member accepted: the epoch starts once older leases ran out",
	    DM_SLOT_NONE);
}

/* Working members in priority order, coordinator first (the tree of
 * algo_raymond.c is heap-shaped over this order; joiners are left out: no
 * request may have to pass through a node that answers nothing). */
static size_t
priority_order(const struct dm_engine *e, const struct dm_election *el, dm_slot_t first,
    dm_slot_t *order)
{
	size_t n = 0;

	order[n++] = first;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		size_t i;
		if (j == first || dm_roster_departing(e, j) || dm_election_is_joiner(e, el, j))
			continue;
		for (i = n; i > 1 && dm_election_outranks(e, j, order[i - 1]) > 0; i--)
			order[i] = order[i - 1];
		order[i] = j;
		n++;
	}
	return n;
}

static void
step_new_state(struct dm_engine *e, struct dm_election *el)
{
	/* Step 4: "New_State?": every member's view of the task -- the epoch
	 * and, for tree algorithms, its parent on the way to the token. */
	dm_slot_t order[DM_NODES_MAX];
	size_t n;

	dm_election_joiners_fix(e, el);
	n = priority_order(e, el, dm_roster_self(e), order);
	dm_lock_timer_stop(e, dm_election_lock(e));
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		/* Payload: parent name (tree algorithms), '\0', the joiners. */
		const char *parent = dm_roster_name(e, order[0]);
		struct dm_msg *m;
		size_t off;
		if (j == dm_roster_self(e) || dm_roster_departing(e, j))
			continue;
		for (size_t i = 1; i < n; i++)
			if (order[i] == j)
				parent = dm_roster_name(e, order[(i - 1) / 2]);
		m = dm_msg_begin(e, DM_EL_NEW_STATE, dm_election_lock(e));
		m->serial = el->k;
		m->arg = dm_election_members(e);	/* our members_at_epoch: on_new_state */
		off = strlen(parent) + 1;
		memcpy(m->payload, parent, off);
		off += dm_election_joiners_put(el, m->payload + off, DM_MSG_PAYLOAD_MAX - off);
		m->payload_len = (uint16_t)off;
		dm_send(e, j, m);
	}
	el->status = DM_EL_NORMAL;
	el->step = STEP_NONE;
	el->parent[0] = '\0';
	el->members_at_epoch = dm_election_members(e);	/* joiners too: the roster */
	el->elections_won++;
	el->epochs++;
	dm_lease_election_led(e);
	note(e, el, "this node is the new coordinator", DM_SLOT_NONE);
	el->hooks->normal(e);
}

/* --- Responses --- */

static int
on_are_you_up(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	/* "Reaction on receiving AreYouUp: reply by sending AYU_answer"; as in
	 * Garcia-Molina's paper the higher node then holds its own election. */
	if (m->serial > el->k_seen)
		el->k_seen = m->serial;
	el_send(e, el, DM_EL_AYU_ANSWER, from, m->serial, 0);
	dm_election_start(e, el, "a lower-priority member asked: holding my own");
	return 0;
}

static int
on_ayu_answer(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (el->status != DM_EL_ELECTION || el->step != STEP_CHECK || m->serial != el->k_try)
		return 0;
	give_up(e, el);
	return 0;
}

static int
on_enter_election(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	/* "Enter_Election: stop your current activity, enter the Election
	 *  state, record the name of the sender, reply by sending EE_answer." */
	dm_slot_t self = dm_roster_self(e);

	if (m->serial <= el->k) {
		/* Epochs only grow here (an old token must never match a new
		 * epoch): tell the candidate the highest counter we saw. */
		struct dm_msg *r = dm_msg_begin(e, DM_EL_EE_ANSWER, dm_election_lock(e));
		r->serial = m->serial;
		r->arg = EE_EPOCH_TOO_LOW;
		r->seq = el->k_seen;
		dm_send(e, from, r);
		return 0;
	}
	if (m->serial > el->k_seen)
		el->k_seen = m->serial;
	if (dm_election_outranks(e, self, from) > 0) {
		el_send(e, el, DM_EL_EE_ANSWER, from, m->serial, 1);
		dm_election_start(e, el, "a lower-priority member tried to lead");
		return 0;
	}
	if (el->status == DM_EL_NORMAL || el->status == DM_EL_REORGANIZATION)
		note(e, el, "entering an election", from);
	el->status = DM_EL_ELECTION;
	el->step = STEP_WAIT;
	el->k_try = m->serial;
	strcpy(el->halted, dm_roster_name(e, from));
	arm(e, 4 * step_time(e));
	el_send(e, el, DM_EL_EE_ANSWER, from, m->serial, 0);
	return 0;
}

static int
on_ee_answer(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (el->status != DM_EL_ELECTION || el->step != STEP_BULLY || m->serial != el->k_try ||
	    !waiting_get(el, from))
		return 0;
	if (m->arg == EE_EPOCH_TOO_LOW) {
		if (m->seq > el->k_seen)
			el->k_seen = m->seq;
		el->step = STEP_NONE;
		dm_election_start(e, el, "a member has seen a higher epoch");
		return 0;
	}
	if (m->arg == 1) {
		give_up(e, el);
		return 0;
	}
	waiting_clear(el, from);
	if (el->waiting_n == 0)
		step_accept(e, el);
	return 0;
}

static int
on_set_coordinator(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	/* "If (your state is Election and the sender is the processor that
	 *  made you enter the Election state) then accept it as the
	 *  coordinator, enter the Reorganization state, and reply." */
	const char *sender = dm_roster_name(e, from);

	if (el->status != DM_EL_ELECTION || el->step != STEP_WAIT ||
	    strcmp(el->halted, sender) != 0 || m->serial != el->k_try) {
		el_send(e, el, DM_EL_SC_ANSWER, from, m->serial, 1);
		return 0;
	}
	el->status = DM_EL_REORGANIZATION;
	el->step = STEP_NONE;
	el->k = m->serial;
	if (el->k > el->k_seen)
		el->k_seen = el->k;
	strcpy(el->coord, sender);
	/* New_State overdue: elect again (it comes a lease after the last
	 * acceptance, see the top). */
	arm(e, 4 * step_time(e) + dm_lease_fence_ms(e));
	dm_election_cut(e, el);		/* HELD reports go out first (FIFO) */
	el_send(e, el, DM_EL_SC_ANSWER, from, m->serial, 0);
	return 0;
}

static int
on_held(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (el->step != STEP_ACCEPT || !dm_election_current(el, m) ||
	    !dm_election_i_coordinate(e, el))
		return 0;
	el->hooks->held(e, from, m);
	return 0;
}

static int
on_sc_answer(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	if (el->step != STEP_ACCEPT || m->serial != el->k || !waiting_get(el, from))
		return 0;
	if (m->arg == 1) {
		/* "Otherwise, processor p initiates a new election process." */
		el->step = STEP_NONE;
		dm_election_start(e, el, "a member refused our coordination");
		return 0;
	}
	if (m->arg == DM_EL_ANSWER_JOINING)
		dm_election_joiner_note(el, from);
	waiting_clear(el, from);
	if (el->waiting_n == 0)
		step_fence(e, el);
	return 0;
}

static int
on_new_state(struct dm_engine *e, struct dm_election *el, dm_slot_t from, const struct dm_msg *m)
{
	/* "If (your state is Reorganization and the sender is the processor
	 *  you think is the coordinator) then enter the Normal state,
	 *  synchronize your view ... reply by sending NS_answer." */
	if (el->status != DM_EL_REORGANIZATION || m->serial != el->k ||
	    strcmp(el->coord, dm_roster_name(e, from)) != 0)
		return 0;
	{
		const uint8_t *z = memchr(m->payload, '\0', m->payload_len);
		size_t plen = z != NULL ? (size_t)(z - m->payload) : m->payload_len;
		if (plen > DM_NODE_NAME_MAX)
			return -EPROTO;
		memcpy(el->parent, m->payload, plen);
		el->parent[plen] = '\0';
		if (dm_election_joiners_set(el, z != NULL ? z + 1 : m->payload + plen,
		    z != NULL ? m->payload_len - plen - 1 : 0) < 0)
			return -EPROTO;
	}
	el->status = DM_EL_NORMAL;
	el->members_at_epoch = dm_election_epoch_members(e, m->arg);
	el->epochs++;
	dm_lease_election_followed(e);
	dm_lock_timer_stop(e, dm_election_lock(e));
	el_send(e, el, DM_EL_NS_ANSWER, from, m->serial, 0);
	note(e, el, "new epoch", from);
	el->hooks->normal(e);
	return 0;
}

int
dm_election_receive(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	if (el->impl != NULL)
		return el->impl->receive(e, el, from, m);	/* invitation */
	switch (m->kind) {
	case DM_EL_ARE_YOU_UP:
		return on_are_you_up(e, el, from, m);
	case DM_EL_AYU_ANSWER:
		return on_ayu_answer(e, el, from, m);
	case DM_EL_ENTER_ELECTION:
		return on_enter_election(e, el, from, m);
	case DM_EL_EE_ANSWER:
		return on_ee_answer(e, el, from, m);
	case DM_EL_SET_COORDINATOR:
		return on_set_coordinator(e, el, from, m);
	case DM_EL_HELD:
		return on_held(e, el, from, m);
	case DM_EL_SC_ANSWER:
		return on_sc_answer(e, el, from, m);
	case DM_EL_NEW_STATE:
		return on_new_state(e, el, from, m);
	case DM_EL_NS_ANSWER:
		return 0;
	default:
		return -EPROTO;
	}
}

static void
suspect_silent(struct dm_engine *e, struct dm_election *el, uint8_t kind, uint64_t serial)
{
	uint8_t silent[DM_NODES_MAX / 8];

	memcpy(silent, el->waiting, sizeof(silent));
	arm(e, step_time(e));
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if ((silent[j / 8] >> (j % 8)) & 1u)
			el_send(e, el, kind, (dm_slot_t)j, serial, 0);
	/* May remove members and re-enter dm_election_peer_gone(). */
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if ((silent[j / 8] >> (j % 8)) & 1u)
			dm_roster_suspect(e, (dm_slot_t)j);
}

void
dm_election_timer(struct dm_engine *e, struct dm_election *el)
{
	if (!dm_roster_joined(e)) {
		arm(e, step_time(e));	/* poll until we are a member */
		return;
	}
	if (el->deferred) {
		el->deferred = false;
		el->step = STEP_NONE;	/* (INV_NONE for the invitation election) */
		dm_election_start(e, el, "joined the cluster: the election that was due");
		return;
	}
	if (el->impl != NULL) { el->impl->timer(e, el); return; }	/* invitation */
	switch (el->status == DM_EL_NORMAL ? STEP_NONE : el->step) {
	case STEP_CHECK:
		step_bully(e, el);	/* no higher-priority member answered */
		break;
	case STEP_BULLY:
		suspect_silent(e, el, DM_EL_ENTER_ELECTION, el->k_try);
		break;
	case STEP_ACCEPT:
		suspect_silent(e, el, DM_EL_SET_COORDINATOR, el->k);
		break;
	case STEP_FENCE:
		step_new_state(e, el);
		break;
	case STEP_WAIT:
	default:
		if (el->status != DM_EL_NORMAL) {
			el->step = STEP_NONE;
			dm_election_start(e, el, "no coordinator came forward");
		}
		break;
	}
}

void
dm_election_peer_gone(struct dm_engine *e, struct dm_election *el, dm_slot_t slot)
{
	/* The engine erases the member from the roster before this call, so
	 * its name no longer resolves: a coordinator (or halter) that was named
	 * and no longer is a member is the one just gone. */
	(void)slot;
	bool was_coord = el->coord[0] != '\0' &&
	    dm_election_slot_by_name(e, el->coord, strlen(el->coord)) == DM_SLOT_NONE;
	bool was_halted = el->halted[0] != '\0' &&
	    dm_election_slot_by_name(e, el->halted, strlen(el->halted)) == DM_SLOT_NONE;

	if (el->impl != NULL) { el->impl->peer_gone(e, el, slot); return; }	/* invitation */

	if (waiting_get(el, slot)) {
		waiting_clear(el, slot);
		if (el->waiting_n == 0 && el->status == DM_EL_ELECTION) {
			if (el->step == STEP_CHECK)
				step_bully(e, el);
			else if (el->step == STEP_BULLY)
				step_accept(e, el);
			return;
		}
		if (el->waiting_n == 0 && el->step == STEP_ACCEPT) {
			step_fence(e, el);
			return;
		}
	}
	if (el->status == DM_EL_ELECTION && el->step == STEP_WAIT) {
		/* Waiting for a Set_Coordinator: only its sender's removal
		 * matters (the WAIT timer covers one that never comes). */
		if (was_halted) {
			el->step = STEP_NONE;
			dm_election_start(e, el, "the member leading the election left");
		}
		return;
	}
	if (running(el))
		return;
	/* "on Detection of a change in the group (by the coordinator)", or the
	 * coordinator itself is gone; tokens it held are regenerated. */
	if (was_coord || dm_election_i_coordinate(e, el) ||
	    (el->status == DM_EL_ELECTION && was_halted)) {
		el->step = STEP_NONE;
		dm_election_start(e, el, "a member left the group");
	}
}
