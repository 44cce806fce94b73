/*
 * hier_harness.h: engine_harness.h's in-test cluster started with the
 * hierarchical algorithm, an election and a group size (shared by
 * check_algo_hierarchical.c and check_election_invitation.c).
 */
#ifndef HIER_HARNESS_H
#define HIER_HARNESS_H

#include "engine_harness.h"

static inline void
hh_init(struct h_cluster *c, int n, const char *election, uint32_t group_size)
{
	h_init_with(c, n, &(struct dm_engine_config){ .algorithm = "hierarchical",
	    .election = election, .group_size = group_size,
	    .failure_policy = DM_FAILURE_MAJORITY });
	h_pump(c);
}

/* Operator removal of node 'gone' at every other live node (immediate). */
static inline void
hh_remove(struct h_cluster *c, int gone)
{
	c->down[gone] = true;
	for (int i = 0; i < c->n; i++) {
		if (i == gone || c->down[i])
			continue;
		struct dm_event ev = { .type = DM_EV_REMOVE_NODE,
		    .u.remove.peer = c->names[gone] };
		ck_assert_int_eq(h_step(c, i, &ev), 0);
	}
	h_pump(c);
}

/* Node 'node' asks for an exclusive lock as handle h and the cluster runs
 * settle_ms: the grant, or NULL while the request waits. */
static inline const struct h_fx *
hh_ask(struct h_cluster *c, int node, uint64_t h, const char *lock, dm_msec_t settle_ms)
{
	h_acquire(c, node, h, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(c);
	h_advance(c, c->now + settle_ms);
	return h_find(c, DM_FX_GRANT, h);
}

/* Handle h at node releases and the cluster runs settle_ms. */
static inline void
hh_release(struct h_cluster *c, int node, uint64_t h, dm_msec_t settle_ms)
{
	ck_assert_int_eq(h_release(c, node, h), 0);
	h_pump(c);
	h_advance(c, c->now + settle_ms);
}

static inline size_t
hh_kind(const struct h_cluster *c, unsigned kind)
{
	return c->sent_kind[kind];
}

#endif /* HIER_HARNESS_H */
