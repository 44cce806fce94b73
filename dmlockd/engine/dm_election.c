/*
 * dm_election.c: what every election implementation shares: the reserved
 * election lock, epochs (counter, coordinator name) and their stamping on
 * algorithm messages, priorities, and HELD reports at the epoch cut.
 */
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
