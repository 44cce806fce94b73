/*
 * algo_maekawa_view.c: Maekawa's request sets under a changing roster.  A
 * view is a fingerprint of the member names; S_i for a view comes from
 * dm_quorum.c (§3) over the members sorted by name.  Until every member has
 * reported itself clean in the current view (no request or vote of an
 * older one), requests go to every member (see algo_maekawa.c's top
 * comment).  The engine's own locks always ask every member.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algo_maekawa.h"
#include "dm_quorum.h"

/* The engine's locks (".dmlock/roster") always use the set of all members:
 * a node that is still joining answers them without being an arbiter (see
 * mk_receive), so their sets must not rely on any single node. */
bool
mk_name_reserved(const char *name, size_t len)
{
	return len >= strlen(MK_RESERVED) && memcmp(name, MK_RESERVED, strlen(MK_RESERVED)) == 0;
}

/* The view an arbiter grants in.  The roster lock's requests are granted
 * whatever view they were made in: it asks every member anyway, and it is
 * how views converge -- members that disagree about one node (its sponsor
 * crashed after some members took its NODE_ADD) answered each other STALE
 * for ever, so no sponsor could add or retry anyone (seed 101/6, crashes). */
#define MK_ANY_VIEW	0

uint64_t
mk_arb_view(const struct dm_lock *l, uint64_t view)
{
	const char *name = dm_lock_name(l);

	return mk_name_reserved(name, strlen(name)) ? MK_ANY_VIEW : view;
}

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static uint64_t
view_of_roster(const struct dm_engine *e)
{
	uint64_t sum = 0, n = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j)) {
			sum += name_hash(dm_roster_name(e, j));
			n++;
		}
	return (sum ^ (n * 0x9e3779b97f4a7c15ull)) | 1u;	/* never 0 */
}

/* Note a roster change: every request and vote so far is now "old". */
void
mk_sync_view(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);
	uint64_t v = view_of_roster(e);

	if (v == n->view)
		return;
	n->view = v;
	n->gen++;
	n->set_n = 0;	/* slots may have moved even if the names come back */
	n->act_old = n->act_total;
	memset(n->clean, 0, sizeof(n->clean));
	n->n_clean = 0;
}

void
mk_note_clean(struct dm_engine *e, dm_slot_t j, uint64_t view, bool clean)
{
	struct mk_node *n = mk_node(e);

	if (!clean || view != n->view || j >= DM_NODES_MAX || dm_bit_get(n->clean, j))
		return;
	dm_bit_set(n->clean, j, true);
	n->n_clean++;
}

bool
mk_all_clean(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);

	mk_note_clean(e, dm_roster_self(e), n->view, node_clean(n));
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j) && !dm_bit_get(n->clean, j))
			return false;
	return true;
}

static int
cmp_slot_names(const struct dm_engine *e, dm_slot_t a, dm_slot_t b)
{
	return dm_roster_compare(e, a, b);
}

/* S_self for the current view (members sorted by name, dm_quorum.c). */
int
mk_compute_set(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);
	dm_slot_t sorted[DM_NODES_MAX];
	unsigned count = 0, me = 0;
	struct dm_quorum *q = NULL;
	const uint16_t *s;
	size_t k;
	int r;

	if (n->set_view == n->view && n->set_n > 0)
		return 0;	/* computed in this very view (reset by mk_sync_view) */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j)) {
			/* insertion sort by name: small n, deterministic */
			unsigned at = count++;
			while (at > 0 && cmp_slot_names(e, sorted[at - 1], j) > 0) {
				sorted[at] = sorted[at - 1];
				at--;
			}
			sorted[at] = j;
		}
	for (unsigned i = 0; i < count; i++)
		if (sorted[i] == dm_roster_self(e))
			me = i;
	if ((r = dm_quorum_build(count, &q)) < 0)
		return r;
	s = dm_quorum_set(q, me, &k);
	for (size_t i = 0; i < k; i++)
		n->set[i] = sorted[s[i]];
	n->set_n = (uint16_t)k;
	n->set_view = n->view;
	dm_quorum_free(q);
	return 0;
}
