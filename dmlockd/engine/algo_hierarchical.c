/*
 * algo_hierarchical.c: the group/system coordinator mutual exclusion of
 * J. Bisque, "Hypercube distributed system" thesis (1992), chapter 6, with
 * the coordinators chosen by an election (chapter 7; dm_election.h: bully
 * or invitation).  This file: the requesting node (first and fifth
 * procedures, NREQREL retries), the topology (groups, coordinators), the
 * epoch cut and the struct dm_algorithm glue.  The coordinators' tables are
 * in algo_hierarchical_coord.c.
 *
 *   "The smallest numbered working node in the system is the system
 *    coordinator ... The smallest numbered working node in each group is
 *    the group coordinator for that group."
 *   "send an NREQUEST message to grpcoord[mygrp]" (Table 6.3)
 *   "execute critical section; send an NRELEASE message to grpcoord[mygrp]"
 *    (Table 6.7)
 *   "If an NREPLY message is not received by the node within this amount
 *    of time, the node sends an NREQREL message to its group coordinator
 *    ... at predetermined intervals until the NREPLY message is received."
 *
 * Node numbers are roster names in byte order; a node's group is its rank
 * among the working (non-departing) members divided by the group size
 * (config group_size, default 4; larger when N/64 groups would not fit).
 * The system coordinator is the election's coordinator (the bully elects
 * the smallest name, as the thesis asks).  Every roster change causes an
 * election: its epoch cut discards every coordinator table; nodes in
 * their critical section report it (HELD) to the new system coordinator
 * before it may grant anything, and re-announce it and their waiting
 * requests to their group coordinator when the epoch starts.  See
 * NOTES-hierarchical.md.
 */
#include <errno.h>
#include <string.h>

#include "algo_hierarchical.h"

struct hr_node *
hr_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

static const struct hr_node *
hr_node_const(const struct dm_engine *e)
{
	return dm_algo_node_state_const(e);
}

/* --- Topology --- */

static bool
working(const struct dm_engine *e, dm_slot_t j)
{
	/* Departing members, and members that answered the epoch's election
	 * while still joining (they answer nothing else: never a group
	 * coordinator; they get a group when they join and elect). */
	return !dm_roster_departing(e, j) &&
	    !dm_election_is_joiner(e, &hr_node_const(e)->el, j);
}

/* Working members in name order ("node numbers"); returns the count. */
static size_t
members_in_order(const struct dm_engine *e, dm_slot_t *order)
{
	size_t n = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		size_t i;
		if (!working(e, j))
			continue;
		for (i = n; i > 0 && dm_roster_compare(e, j, order[i - 1]) < 0; i--)
			order[i] = order[i - 1];
		order[i] = j;
		n++;
	}
	return n;
}

static size_t
group_size(const struct dm_engine *e, size_t n)
{
	size_t g = dm_group_size(e);

	if (g == 0)
		g = HR_GROUP_SIZE_DEFAULT;
	if (g > HR_GROUP_MAX)
		g = HR_GROUP_MAX;
	while (g < HR_GROUP_MAX && (n + g - 1) / g > HR_GREQ_MAX)
		g++;
	return g;
}

dm_slot_t
hr_group_coordinator_of(const struct dm_engine *e, dm_slot_t member)
{
	dm_slot_t order[DM_NODES_MAX];
	size_t n = members_in_order(e, order), g = group_size(e, n);

	for (size_t i = 0; i < n; i++)
		if (order[i] == member)
			return order[i - i % g];
	return DM_SLOT_NONE;
}

dm_slot_t
hr_system_coordinator(const struct dm_engine *e)
{
	return dm_election_coordinator(e, &hr_node_const(e)->el);
}

/* --- Lock state --- */

struct hr_lock *
hr_lock(struct dm_engine *e, struct dm_lock *l)
{
	struct hr_lock *t = dm_lock_state(l);
	struct hr_node *hn = hr_node(e);

	if (t->lock == NULL) {
		t->lock = l;
		t->granter = DM_SLOT_NONE;
		t->gen = 0;
	}
	if (t->gen != hn->gen) {
		t->gen = hn->gen;
		hr_coord_reset(t);
	}
	return t;
}

static void
link_lock(struct hr_node *hn, struct hr_lock *t)
{
	if (t->linked)
		return;
	t->linked = true;
	t->prev = NULL;
	t->next = hn->active;
	if (hn->active != NULL)
		hn->active->prev = t;
	hn->active = t;
}

static void
unlink_lock(struct hr_node *hn, struct hr_lock *t)
{
	/* On the list while we want, hold or owe a release -- and while a
	 * grant reported at the cut waits on it for hook_normal() to
	 * place it in the epoch's groups, whatever our own client did
	 * meanwhile (hierarchical --group-size 5 --election invitation --seed
	 * 885513 --nodes 10 --fault-mask 1: a try-once refused during the
	 * election unlinked the lock, and the grant stayed with a node that
	 * was not in the epoch). */
	if (!t->linked || t->wanting || t->in_cs || t->release_owed ||
	    (t->cut_unplaced && t->gen == hn->gen))
		return;
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		hn->active = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	t->linked = false;
}

/* --- Messages --- */

struct dm_msg *
hr_msg(struct dm_engine *e, uint8_t kind, const struct dm_lock *l)
{
	struct dm_msg *m = dm_msg_begin(e, kind, l);

	dm_election_stamp(&hr_node(e)->el, m);
	return m;
}

void
hr_send(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, struct dm_msg *m)
{
	struct hr_node *hn = hr_node(e);
	struct dm_msg local;

	if (to == DM_SLOT_NONE)
		return;		/* no coordinator now: the retry or the epoch's start resends */
	if (m->kind >= DM_HR_NREQUEST && m->kind < DM_HR_KIND_MAX_)
		hn->sent[m->kind - DM_HR_NREQUEST] += to != dm_roster_self(e);
	if (to != dm_roster_self(e)) {
		dm_send(e, to, m);
		return;
	}
	/* To ourselves (a coordinator's own request): no message.  The
	 * scratch message is reused by what we call, so take a copy. */
	memcpy(&local, m, sizeof(local));
	if (local.kind == DM_HR_NREPLY || local.kind == DM_HR_NBUSY || local.kind == DM_HR_NQUEUED)
		(void)hr_requester_receive(e, l, to, &local);
	else
		(void)hr_coord_receive(e, l, to, &local);
}

static dm_msec_t
retry_period(const struct dm_engine *e)
{
	/* The thesis's "predetermined amount of time": T_fail, long enough
	 * that a fault-free entry never needs an NREQREL under light load. */
	return dm_request_timeout(e) + dm_probe_timeout(e);
}

/* "send an NREQUEST message to grpcoord[mygrp]" */
static void
ask_ts(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, uint8_t kind, bool held,
    uint64_t ts)
{
	dm_slot_t gc = hr_group_coordinator_of(e, dm_roster_self(e));
	struct dm_msg *m = hr_msg(e, kind, l);

	m->seq = ts;
	m->flags |= t->try_once ? DM_MSG_F_TRY : 0;
	m->arg = held ? 1 : 0;
	if (held) {
		t->granter = gc;
		t->granter_gen = hr_node(e)->gen;
	} else
		dm_lock_timer_arm(e, l, dm_now(e) + retry_period(e));
	hr_send(e, l, gc, m);
}

static void
ask(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, uint8_t kind, bool held)
{
	ask_ts(e, l, t, kind, held, t->my_ts);
}

/* --- Requester side --- */

static int
hr_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	struct hr_node *hn = hr_node(e);
	struct hr_lock *t = hr_lock(e, l);

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	t->wanting = true;
	t->in_cs = false;
	t->probe_out = false;
	t->try_once = try_once;
	t->my_ts = ++hn->clock;
	link_lock(hn, t);
	(void)dm_election_renew_if_stale(e, &hn->el);
	if (hn->el.status == DM_EL_NORMAL) {
		ask(e, l, t, DM_HR_NREQUEST, false);
		return 0;
	}
	if (try_once) {
		/* No coordinator now: never wait behind an election. */
		t->wanting = false;
		unlink_lock(hn, t);
		dm_lock_refused(e, l, -EBUSY);
	}
	return 0;	/* asks when the epoch starts (hook_normal) */
}

static void
send_release(struct dm_engine *e, struct dm_lock *l, uint64_t ts, dm_slot_t to)
{
	struct dm_msg *m = hr_msg(e, DM_HR_NRELEASE, l);

	m->seq = ts;
	if (to == DM_SLOT_NONE)
		to = hr_group_coordinator_of(e, dm_roster_self(e));
	hr_send(e, l, to, m);
}

/* Leave the critical section in the current epoch: NRELEASE to whoever
 * granted us here; a grant from an older epoch is first re-announced to
 * our group coordinator (it learns we hold the group's permission). */
static void
release_in_epoch(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	struct hr_node *hn = hr_node(e);

	if (hn->el.status != DM_EL_NORMAL) {
		t->release_owed = true;		/* sent when the epoch starts */
		t->owed_ts = t->my_ts;
		return;
	}
	if (!t->release_owed)
		t->owed_ts = t->my_ts;
	if (t->granter == DM_SLOT_NONE || t->granter_gen != hn->gen)
		ask_ts(e, l, t, DM_HR_NREQUEST, true, t->owed_ts);
	t->release_owed = false;
	send_release(e, l, t->owed_ts, t->granter);
	t->granter = DM_SLOT_NONE;
}

static void
hr_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	struct hr_node *hn = hr_node(e);
	struct hr_lock *t = hr_lock(e, l);

	if (!t->wanting)
		return;
	t->wanting = false;
	dm_lock_timer_stop(e, l);
	/* Not in the thesis: a withdrawn request is taken back with NRELEASE
	 * (the group coordinator drops it, or releases if it granted it). */
	if (hn->el.status == DM_EL_NORMAL)
		send_release(e, l, t->my_ts, DM_SLOT_NONE);
	unlink_lock(hn, t);
}

static void
hr_release(struct dm_engine *e, struct dm_lock *l)
{
	struct hr_node *hn = hr_node(e);
	struct hr_lock *t = hr_lock(e, l);

	if (!t->in_cs)
		return;
	t->in_cs = false;
	/* "send an NRELEASE message to grpcoord[mygrp]" */
	release_in_epoch(e, l, t);
	unlink_lock(hn, t);
}

static bool
hr_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	/* Only the group coordinator knows who waits: every local client
	 * takes its own turn (NREQUEST..NRELEASE). */
	(void)e;
	(void)l;
	(void)mode;
	return false;
}

int
hr_requester_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
    const struct dm_msg *m)
{
	struct hr_node *hn = hr_node(e);
	struct hr_lock *t = hr_lock(e, l);
	struct dm_msg *r;

	switch (m->kind) {
	case DM_HR_NREPLY:
		/* Table 6.7: "execute critical section". */
		if (t->wanting && !t->in_cs && m->seq == t->my_ts) {
			t->wanting = false;
			t->in_cs = true;
			t->probe_out = false;
			t->granter = from;
			t->granter_gen = hn->gen;
			hn->entries++;
			dm_lock_timer_stop(e, l);
			dm_lock_permitted(e, l);
			return 0;
		}
		if (t->in_cs && (m->seq == t->my_ts || m->seq == 0))
			return 0;	/* a resent NREPLY: we are still inside */
		/* Not ours (withdrawn, or an NRELEASE was lost): give it back. */
		r = hr_msg(e, DM_HR_NRELEASE, l);
		r->seq = m->seq;
		hr_send(e, l, from, r);
		return 0;
	case DM_HR_NQUEUED:
		/* The coordinator is alive and still has our request. */
		if (t->wanting && m->seq == t->my_ts)
			t->probe_out = false;
		return 0;
	case DM_HR_NBUSY:
		if (t->wanting && t->try_once && m->seq == t->my_ts) {
			t->wanting = false;
			dm_lock_timer_stop(e, l);
			unlink_lock(hn, t);
			dm_lock_refused(e, l, -EBUSY);
		}
		return 0;
	default:
		return -EPROTO;
	}
}

/* --- Epoch cut (election hooks) --- */

static void
hook_cut(struct dm_engine *e)
{
	/* Acceptance of a new coordinator: every table is discarded; what we
	 * use is reported to the new system coordinator (HELD, before our
	 * answer on the same link). */
	struct hr_node *hn = hr_node(e);
	bool coord = dm_election_i_coordinate(e, &hn->el);

	hn->gen++;
	for (struct hr_lock *t = hn->active; t != NULL; t = t->next) {
		(void)hr_lock(e, t->lock);
		dm_lock_timer_stop(e, t->lock);
		t->release_owed = false;	/* the new tables start clean */
		t->probe_out = false;		/* a new coordinator: ask it afresh */
		if (t->in_cs && dm_lock_unpermit(e, t->lock)) {
			/* Granted by the old epoch but not to a client yet (no
			 * valid lease): ask again in the new one (as in
			 * dm_token.c: an old permission must not become a
			 * grant beside what an epoch we missed gave out). */
			t->in_cs = false;
			t->wanting = true;
		}
		if (!t->in_cs)
			continue;
		if (coord)
			hr_coord_held(e, t->lock, dm_roster_self(e));
		else
			dm_election_report_held(e, &hn->el, t->lock);
	}
}

static void
hook_held(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_lock *l = dm_lock_get(e, m->lock, m->lock_len, true);

	if (l == NULL) {
		dm_log(e, DM_LOG_ERR, "out of memory recording a held lock", NULL, from);
		return;
	}
	/* Linked until the epoch starts: hook_normal() places the grant in
	 * the epoch's groups (hr_coord_cut_grants()). */
	link_lock(hr_node(e), hr_lock(e, l));
	hr_coord_held(e, l, from);
}

static void
hook_normal(struct dm_engine *e)
{
	/* The epoch starts: holders tell their group coordinator, waiting
	 * nodes ask again with their original timestamp (fairness kept). */
	struct hr_node *hn = hr_node(e);

	for (struct hr_lock *t = hn->active; t != NULL; t = t->next)
		hr_coord_cut_grants(e, t->lock);
	for (struct hr_lock *t = hn->active, *n; t != NULL; t = n) {
		n = t->next;
		(void)hr_lock(e, t->lock);
		if (t->in_cs) {
			ask(e, t->lock, t, DM_HR_NREQUEST, true);
			continue;
		}
		if (t->release_owed)
			release_in_epoch(e, t->lock, t);
		if (t->wanting)
			ask(e, t->lock, t, DM_HR_NREQUEST, false);
		unlink_lock(hn, t);
	}
}

static const struct dm_election_hooks hr_hooks = {
	.cut = hook_cut,
	.held = hook_held,
	.normal = hook_normal,
};

/* --- struct dm_algorithm --- */

static int
hr_node_init(struct dm_engine *e, void *node_state)
{
	struct hr_node *hn = node_state;

	hn->gen = 1;
	dm_election_init(e, &hn->el, &hr_hooks);
	return dm_election_lock(e) != NULL ? 0 : -ENOMEM;
}

static int
hr_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct hr_node *hn = hr_node(e);

	if (dm_election_owns_kind(m->kind))
		return dm_election_receive(e, &hn->el, from, m);
	if (m->kind < DM_HR_NREQUEST || m->kind >= DM_HR_KIND_MAX_ || dm_election_is_lock(l))
		return -EPROTO;
	if (m->payload_len > DM_NODE_NAME_MAX + 8)
		return -EPROTO;
	if (!dm_election_current(&hn->el, m))
		return 0;	/* another epoch: its tables are gone */
	if (m->seq > hn->clock && (m->kind == DM_HR_NREQUEST || m->kind == DM_HR_GREQUEST ||
	    m->kind == DM_HR_GREQREL || m->kind == DM_HR_NREQREL))
		hn->clock = m->seq;
	if (l == NULL) {
		l = dm_lock_get(e, m->lock, m->lock_len, true);
		if (l == NULL)
			return -ENOMEM;
	}
	(void)hr_lock(e, l);
	if (m->kind == DM_HR_NREPLY || m->kind == DM_HR_NBUSY || m->kind == DM_HR_NQUEUED)
		return hr_requester_receive(e, l, from, m);
	return hr_coord_receive(e, l, from, m);
}

static void
hr_timer(struct dm_engine *e, struct dm_lock *l)
{
	struct hr_node *hn = hr_node(e);
	struct hr_lock *t;
	dm_slot_t gc;

	if (dm_election_is_lock(l)) {
		dm_election_timer(e, &hn->el);
		return;
	}
	t = hr_lock(e, l);
	if (!t->wanting || t->in_cs || hn->el.status != DM_EL_NORMAL)
		return;
	/* A member added since the epoch began took no part in its election
	 * and may be our group coordinator by name alone: elect again rather
	 * than wait on it (bully 1292/5, crashes: a sponsor crashed between
	 * NODE_ADD and the roster, so the joiner n1, listed but never given
	 * its roster, became the group coordinator of the roster lock's
	 * requester n3, which suspected it for ever in a roster too small to
	 * remove it without its own vote).  The new election counts it as a
	 * joiner, never a coordinator. */
	if (dm_election_renew_if_stale(e, &hn->el))
		return;
	/* The previous NREQREL got neither NQUEUED nor NREPLY in T_fail: the
	 * group coordinator is gone (RA §7.4's second timeout).  The majority
	 * vote removes it, and its removal starts the election. */
	gc = hr_group_coordinator_of(e, dm_roster_self(e));
	if (t->probe_out && gc != DM_SLOT_NONE && gc != dm_roster_self(e))
		dm_roster_suspect(e, gc);
	/* "the node sends an NREQREL message to its group coordinator" */
	t->probe_out = true;
	ask(e, l, t, DM_HR_NREQREL, false);
}

static void
hr_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	struct hr_lock *t;

	if (dm_election_is_lock(l)) {
		struct dm_election *el = &hr_node(e)->el;
		dm_election_peer_gone(e, el, slot);
		/* The engine clears the slot before this call, so an election
		 * may not recognise its coordinator's name: check here. */
		if (el->status == DM_EL_NORMAL && dm_election_coordinator(e, el) == DM_SLOT_NONE)
			dm_election_start(e, el, "the coordinator left the roster");
		return;
	}
	/* Tables are rebuilt by the election the removal causes; a grant we
	 * got from the gone node is re-announced to our new group
	 * coordinator then. */
	t = dm_lock_state(l);
	if (t->lock != NULL && t->granter == slot)
		t->granter = DM_SLOT_NONE;
	hr_coord_forget(e, l, slot);
}

static bool
hr_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct hr_lock *t = dm_lock_state_const(l);

	if (dm_election_is_lock(l))
		return false;
	if (t->lock == NULL)
		return true;
	if (t->linked || t->wanting || t->in_cs || t->release_owed)
		return false;
	return t->gen != hr_node_const(e)->gen || hr_coord_idle(t);
}

static uint64_t
hr_clock_get(const struct dm_engine *e)
{
	return hr_node_const(e)->clock;
}

static void
hr_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct hr_node *hn = hr_node(e);

	if (seq > hn->clock)
		hn->clock = seq;
}

static int
hr_joining_receive(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	/* Not a member yet: answer elections passively (dm_election.h). */
	return dm_election_joining_receive(e, &hr_node(e)->el, from, m);
}

/* --- Status --- */

static size_t
hr_describe_node(const struct dm_engine *e, char *buf, size_t size)
{
	const struct hr_node *hn = hr_node_const(e);
	dm_slot_t gc = hr_group_coordinator_of(e, dm_roster_self(e));
	dm_slot_t sc = hr_system_coordinator(e);
	size_t len;

	buf[0] = '\0';
	len = dm_election_describe(e, &hn->el, buf, size, 0);
	len = dm_describe_add(buf, size, len, "group_coordinator=%s",
	    gc != DM_SLOT_NONE ? dm_roster_name(e, gc) : "-");
	return dm_describe_add(buf, size, len, "system_coordinator=%s",
	    sc != DM_SLOT_NONE ? dm_roster_name(e, sc) : "-");
}

static size_t
hr_describe_lock(const struct dm_engine *e, const struct dm_lock *l, char *buf, size_t size)
{
	const struct hr_lock *t = dm_lock_state_const(l);
	size_t len = 0;

	buf[0] = '\0';
	if (dm_election_is_lock(l) || t->lock == NULL)
		return 0;
	if (t->in_cs)
		len = dm_describe_add(buf, size, len, "in_use");
	if (t->wanting)
		len = dm_describe_add(buf, size, len, "wanted");
	if (t->gen == hr_node_const(e)->gen)	/* coordinator parts of this epoch */
		len = hr_coord_describe(e, t, buf, size, len);
	return len;
}

const struct dm_algorithm dm_algo_hierarchical = {
	.name = "hierarchical",
	.caps = DM_CAP_SURVIVES_FAILURE | DM_CAP_NEEDS_FIFO,
	.lock_state_size = sizeof(struct hr_lock),
	.node_state_size = sizeof(struct hr_node),
	.node_init = hr_node_init,
	.request = hr_request,
	.withdraw = hr_withdraw,
	.release = hr_release,
	.may_handoff = hr_may_handoff,
	.receive = hr_receive,
	.timer = hr_timer,
	.peer_gone = hr_peer_gone,
	.idle = hr_idle,
	.clock_get = hr_clock_get,
	.clock_merge = hr_clock_merge,
	.joining_receive = hr_joining_receive,
	.describe_node = hr_describe_node,
	.describe_lock = hr_describe_lock,
};
