/*
 * dm_quorum.h: Maekawa request sets (M. Maekawa, "A sqrt(N) Algorithm for
 * Mutual Exclusion in Decentralized Systems", TOCS 3(2), 1985, §2-3).
 *
 * For n members numbered 0..n-1, dm_quorum_build() returns n sets S_i with
 *   (a) S_i and S_j intersect for every i, j;
 *   (b) i is in S_i;
 *   (c),(d) equal size K and equal load D = K when n = q^2+q+1 for a prime
 *       power q (a finite projective plane of order q, q <= 17);
 * otherwise the smaller of two constructions: the projective plane of the
 * next larger order folded onto n nodes (the paper's "degenerated" sets:
 * point p >= n stands for node p mod n), or the grid (row and column of a
 * ceil(sqrt(n)) wide grid).  Pure and deterministic: same n, same sets.
 */
#ifndef DM_QUORUM_H
#define DM_QUORUM_H

#include <stddef.h>
#include <stdint.h>

#define DM_QUORUM_N_MAX	307	/* largest n dm_quorum_build() accepts */

struct dm_quorum;

/* Build the sets for n members, 1 <= n <= DM_QUORUM_N_MAX.  Returns 0,
 * -EINVAL or -ENOMEM. */
int		 dm_quorum_build(unsigned n, struct dm_quorum **ret);
struct dm_quorum *dm_quorum_free(struct dm_quorum *q);

/* S_i as sorted member indices; *count gets its size.  i < n. */
const uint16_t	*dm_quorum_set(const struct dm_quorum *q, unsigned i, size_t *count);
unsigned	 dm_quorum_n(const struct dm_quorum *q);
/* Order of the projective plane used (0: grid). */
unsigned	 dm_quorum_order(const struct dm_quorum *q);

#endif /* DM_QUORUM_H */
