/*
 * dm_lease_election.c: how the holder lease fences election epochs, for the
 * algorithms with an election (token algorithms, hierarchical;
 * NOTES-token.md, "Two coordinators in one roster epoch"):
 *  - a heartbeat carries the epoch its sender's holdings are accounted in:
 *    a follower's is the epoch it accepted (it reported what it holds to
 *    that coordinator first); a coordinator's stays the epoch it worked in
 *    before until its own epoch starts, since what it holds was never
 *    reported to anyone;
 *  - a node that accepted epoch E acknowledges no heartbeat of an older
 *    epoch, except its coordinator's labelled with an epoch not older than
 *    the one this node accepted before E (the usual election: coordinator
 *    and members leave the same epoch together).  An epoch of E's own
 *    coordinator that never started here does not count as "before": a
 *    coordinator that leads a second election before its first epoch
 *    started still labels its heartbeats with the epoch it worked in, and
 *    nobody held anything of the epoch that never started (Raymond seed
 *    16, --no-faults --nodes 3: n0 led epochs 6 and 8 back to back, its
 *    members refused its heartbeats labelled 4, and its holder lost its
 *    lock on a healthy cluster; NOTES-token.md, "Nested elections");
 *  - a follower that wants a lease renews it under a label it takes at
 *    once, not a heartbeat period later (NOTES.md, "Session 40");
 *  - the new coordinator waits dm_lease_fence_ms() after the last
 *    acceptance before its epoch starts, so every lease renewed under an
 *    older epoch has run out by then.
 */
#include <string.h>

#include "dm_engine_private.h"

static int
epoch_cmp(const struct dm_msg *m, const struct dm_el_epoch *b)
{
	return dm_lease_epoch_cmp(m->seq, m->node, b->k, b->coord);
}

/* May we acknowledge a heartbeat labelled with election epoch (m->seq,
 * m->node)?  See the top. */
bool
dm_lease_election_label_acceptable(const struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	const char *sender = dm_roster_name(e, from);

	if (e->el_accepted.k == 0 || epoch_cmp(m, &e->el_accepted) >= 0)
		return true;
	return sender != NULL && strcmp(sender, e->el_accepted.coord) == 0 &&
	    epoch_cmp(m, &e->el_before) >= 0;
}

int
dm_lease_epoch_cmp(uint64_t ka, const char *ca, uint64_t kb, const char *cb)
{
	if (ka != kb)
		return ka > kb ? 1 : -1;
	return -strcmp(ca, cb);
}

void
dm_lease_election_epoch(struct dm_engine *e, uint64_t k, const char *coord, bool leading)
{
	size_t n = strnlen(coord, DM_NODE_NAME_MAX);

	if (e->el_accepted.k != 0 &&
	    dm_lease_epoch_cmp(k, coord, e->el_accepted.k, e->el_accepted.coord) <= 0)
		return;		/* the same again (epochs only grow here) */
	if (e->el_started || strcmp(e->el_accepted.coord, coord) != 0)
		e->el_before = e->el_accepted;
	e->el_started = false;
	e->el_accepted.k = k;
	memcpy(e->el_accepted.coord, coord, n);
	e->el_accepted.coord[n] = '\0';
	if (leading)
		return;
	e->el_label = e->el_accepted;
	/* The members that accepted the epoch before us acknowledge no
	 * heartbeat of the one we labelled until now: renew under the new
	 * label at once rather than a heartbeat period later.  Otherwise a
	 * second election a period after the first leaves every heartbeat of
	 * ours one epoch behind a majority, and a holder here loses its lock
	 * on a healthy cluster (raymond 11913/10, --no-faults; NOTES.md,
	 * "Session 40"). */
	dm_lease_renew_if_wanted(e);
}

void
dm_lease_election_led(struct dm_engine *e)
{
	e->el_label = e->el_accepted;
	e->el_started = true;
}

void
dm_lease_election_followed(struct dm_engine *e)
{
	e->el_started = true;
}

dm_msec_t
dm_lease_fence_ms(const struct dm_engine *e)
{
	double rho = (double)e->drift_ppm / 1e6;
	double wait = ((double)e->lease_ms / (1.0 - rho) + (double)e->stop_ms) * (1.0 + rho);
	dm_msec_t ms = (dm_msec_t)wait;

	if (!dm_lease_needed(e))
		return 0;
	return ms + 1;	/* (rounded up, and then some) */
}
