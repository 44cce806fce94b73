/*
 * dm_election.c: what every election implementation shares: the reserved
 * election lock, epochs (counter, coordinator name) and their stamping on
 * algorithm messages, priorities, and HELD reports at the epoch cut.
 */
#include <errno.h>
#include <string.h>

#include "dm_election.h"

void
dm_election_init(struct dm_engine *e, struct dm_election *el,
    const struct dm_election_hooks *hooks)
{
	dm_slot_t best = dm_roster_self(e);

	memset(el, 0, sizeof(*el));
	el->hooks = hooks;
	el->impl = dm_election_impl_for(dm_election_name(e));
	/* A configured cluster starts in epoch 1 led by its highest-priority
	 * member: every member computes the same from the same peer list.  A
	 * node that joins through a sponsor has a roster of one here and finds
	 * out on its first request that the roster grew (an election). */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (dm_election_outranks(e, j, best) > 0)
			best = j;
	el->k = el->k_seen = 1;
	el->status = DM_EL_NORMAL;
	el->members_at_epoch = dm_roster_size(e);
	strcpy(el->coord, dm_roster_name(e, best));
	/* The election lock lives as long as the engine: it gives the
	 * algorithm a node-level peer_gone and timer. */
	(void)dm_election_lock(e);
	/* A process restarted from the static roster (its record says an
	 * earlier one was a member) computes the same epoch 1 and the same
	 * coordinator as the cluster's first start, but epoch 1's state was
	 * its earlier process's: as the coordinator it would hold every idle
	 * token again beside the ones it had handed out (dmlock-sim
	 * --restarts static: a TOKEN arrived at a coordinator that held the
	 * lock's token already).  It takes part in nothing until an election
	 * starts a new epoch, the path that regenerates a lost token: older
	 * epochs' tokens are discarded wherever they reappear. */
	if (dm_record_restarted_static(e)) {
		el->status = DM_EL_ELECTION;
		el->deferred = true;
		dm_lock_timer_arm(e, dm_election_lock(e), dm_now(e) + 1);
	}
}

struct dm_lock *
dm_election_lock(struct dm_engine *e)
{
	return dm_lock_get(e, DM_ELECTION_LOCK, strlen(DM_ELECTION_LOCK), true);
}

bool
dm_election_is_lock(const struct dm_lock *l)
{
	return l != NULL && strcmp(dm_lock_name(l), DM_ELECTION_LOCK) == 0;
}

bool
dm_election_owns_kind(uint8_t kind)
{
	return kind >= DM_EL_ARE_YOU_UP && kind < DM_EL_KIND_MAX_;
}

dm_slot_t
dm_election_slot_by_name(const struct dm_engine *e, const char *name, size_t len)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		const char *n = dm_roster_name(e, j);
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return j;
	}
	return DM_SLOT_NONE;
}

dm_slot_t
dm_election_coordinator(const struct dm_engine *e, const struct dm_election *el)
{
	return dm_election_slot_by_name(e, el->coord, strlen(el->coord));
}

bool
dm_election_i_coordinate(const struct dm_engine *e, const struct dm_election *el)
{
	return strcmp(el->coord, dm_roster_name(e, dm_roster_self(e))) == 0;
}

int
dm_election_outranks(const struct dm_engine *e, dm_slot_t a, dm_slot_t b)
{
	return -dm_roster_compare(e, a, b);
}

void
dm_election_stamp(const struct dm_election *el, struct dm_msg *m)
{
	size_t n = strlen(el->coord);

	m->serial = el->k;
	m->node_len = (uint8_t)n;
	memcpy(m->node, el->coord, n + 1);
}

bool
dm_election_current(const struct dm_election *el, const struct dm_msg *m)
{
	return (el->status == DM_EL_NORMAL || el->status == DM_EL_REORGANIZATION) &&
	    m->serial == el->k && m->node_len == strlen(el->coord) &&
	    memcmp(m->node, el->coord, m->node_len) == 0;
}

size_t
dm_election_members(const struct dm_engine *e)
{
	size_t n = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		n += !dm_roster_departing(e, j);
	return n;
}

bool
dm_election_roster_stale(const struct dm_engine *e, const struct dm_election *el)
{
	return dm_election_members(e) != el->members_at_epoch ||
	    dm_election_coordinator(e, el) == DM_SLOT_NONE;
}

size_t
dm_election_epoch_members(const struct dm_engine *e, uint64_t coordinator_count)
{
	/* The epoch's roster size is the coordinator's when it announced the
	 * epoch, not ours when the announcement arrived: a member added to
	 * our roster in between took no part in the election, yet counting it
	 * would make the roster look current, and it may be our group
	 * coordinator by name alone (hierarchical -g2 --election invitation
	 * --seed 379598 --nodes 15: n9's READY arrived after n8's NODE_ADD,
	 * and n9 sent NREQREL to n8, which knew no group, for ever).  0: a
	 * peer that does not send it; our own count as before. */
	if (coordinator_count == 0 || coordinator_count > DM_NODES_MAX)
		return dm_election_members(e);
	return (size_t)coordinator_count;
}

bool
dm_election_renew_if_stale(struct dm_engine *e, struct dm_election *el)
{
	if (el->status != DM_EL_NORMAL || !dm_election_roster_stale(e, el))
		return false;
	dm_election_start(e, el, "the roster changed since the epoch began");
	return true;
}

void
dm_election_start_new_epoch(struct dm_engine *e, struct dm_election *el, const char *why)
{
	if (el->impl != NULL && el->impl->start_new_epoch != NULL && dm_roster_joined(e))
		el->impl->start_new_epoch(e, el, why);
	else
		dm_election_start(e, el, why);
}

void
dm_election_cut(struct dm_engine *e, struct dm_election *el)
{
	dm_lease_election_epoch(e, el->k, el->coord, dm_election_i_coordinate(e, el));
	el->hooks->cut(e);
}

void
dm_election_report_held(struct dm_engine *e, struct dm_election *el, const struct dm_lock *l)
{
	dm_slot_t c = dm_election_coordinator(e, el);
	struct dm_msg *m;

	if (c == DM_SLOT_NONE || c == dm_roster_self(e))
		return;
	m = dm_msg_begin(e, DM_EL_HELD, l);
	dm_election_stamp(el, m);
	dm_send(e, c, m);
}

static void
answer(struct dm_engine *e, dm_slot_t to, uint8_t kind, const struct dm_msg *about,
    uint64_t arg)
{
	struct dm_msg *m = dm_msg_begin(e, kind, dm_election_lock(e));

	m->serial = about->serial;
	m->node_len = about->node_len;
	memcpy(m->node, about->node, about->node_len);
	m->node[about->node_len] = '\0';
	m->arg = arg;
	dm_send(e, to, m);
}

int
dm_election_joining_receive(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
    const struct dm_msg *m)
{
	if (m->lock_len != strlen(DM_ELECTION_LOCK) ||
	    memcmp(m->lock, DM_ELECTION_LOCK, m->lock_len) != 0 || !dm_election_owns_kind(m->kind))
		return 0;
	if (m->node_len > DM_NODE_NAME_MAX)
		return -EPROTO;
	if (m->serial > el->k_seen)
		el->k_seen = m->serial;	/* our own next epoch goes above it */
	if (m->seq == 0 || m->seq != dm_roster_incarnation(e, dm_roster_self(e)))
		return 0;	/* it counts an older incarnation of ours: let it remove that */
	switch (m->kind) {
	case DM_EL_ENTER_ELECTION:
		answer(e, from, DM_EL_EE_ANSWER, m, 0);
		break;
	case DM_EL_SET_COORDINATOR:
		answer(e, from, DM_EL_SC_ANSWER, m, DM_EL_ANSWER_JOINING);
		break;
	case DM_EL_INVITATION:
		answer(e, from, DM_EL_ACCEPT, m, DM_EL_ANSWER_JOINING);
		break;
	case DM_EL_READY:
		answer(e, from, DM_EL_READY_ANSWER, m, 1);
		break;
	default:
		break;		/* AreYouUp and the rest: silence */
	}
	return 0;
}

void
dm_election_joiners_clear(struct dm_election *el)
{
	memset(el->joining_up, 0, sizeof(el->joining_up));
}

void
dm_election_joiner_note(struct dm_election *el, dm_slot_t slot)
{
	if (slot < DM_NODES_MAX)
		el->joining_up[slot / 8] |= (uint8_t)(1u << (slot % 8));
}

void
dm_election_joiners_fix(const struct dm_engine *e, struct dm_election *el)
{
	size_t off = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		const char *n = dm_roster_name(e, j);
		size_t len = strlen(n);
		if (!((el->joining_up[j / 8] >> (j % 8)) & 1u))
			continue;
		if (off + len + 1 > sizeof(el->joiners) - DM_NODE_NAME_MAX - 1)
			break;		/* (room for the parent name in New_State) */
		memcpy(el->joiners + off, n, len + 1);
		off += len + 1;
	}
	el->joiners_len = (uint16_t)off;
}

size_t
dm_election_joiners_put(const struct dm_election *el, uint8_t *p, size_t room)
{
	size_t n = el->joiners_len <= room ? el->joiners_len : 0;

	memcpy(p, el->joiners, n);
	return n;
}

int
dm_election_joiners_set(struct dm_election *el, const uint8_t *p, size_t len)
{
	if (len > sizeof(el->joiners) || (len > 0 && p[len - 1] != '\0')) {
		el->joiners_len = 0;
		return -EPROTO;
	}
	memcpy(el->joiners, p, len);
	el->joiners_len = (uint16_t)len;
	return 0;
}

bool
dm_election_is_joiner(const struct dm_engine *e, const struct dm_election *el, dm_slot_t j)
{
	const char *name = dm_roster_name(e, j);
	size_t off = 0;

	if (name == NULL)
		return false;
	while (off < el->joiners_len) {
		const char *n = el->joiners + off;
		if (strcmp(n, name) == 0)
			return true;
		off += strlen(n) + 1;
	}
	return false;
}

size_t
dm_election_describe(const struct dm_engine *e, const struct dm_election *el, char *buf,
    size_t size, size_t len)
{
	static const char *const states[] = {
		[DM_EL_DOWN] = "down", [DM_EL_ELECTION] = "election",
		[DM_EL_REORGANIZATION] = "reorganization", [DM_EL_NORMAL] = "normal",
	};
	const char *name = dm_election_name(e);

	len = dm_describe_add(buf, size, len, "election=%s", name && *name ? name : "bully");
	len = dm_describe_add(buf, size, len, "state=%s",
	    el->status < sizeof(states) / sizeof(states[0]) ? states[el->status] : "unknown");
	len = dm_describe_add(buf, size, len, "coordinator=%s", el->coord[0] ? el->coord : "-");
	len = dm_describe_add(buf, size, len, "epoch=%llu", (unsigned long long)el->k);
	len = dm_describe_add(buf, size, len, "elections_started=%llu",
	    (unsigned long long)el->elections_started);
	return dm_describe_add(buf, size, len, "elections_won=%llu",
	    (unsigned long long)el->elections_won);
}
