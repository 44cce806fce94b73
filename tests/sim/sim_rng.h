/*
 * sim_rng.h: the simulator's only source of randomness, a seeded
 * xoshiro256** generator (seeded through splitmix64).  Never rand():
 * the same seed must replay the same run on every libc.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *rng, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *rng);
/* Uniform in [0, bound); 0 when bound is 0. */
uint64_t sim_rng_below(struct sim_rng *rng, uint64_t bound);
/* Uniform in [lo, hi]. */
uint64_t sim_rng_range(struct sim_rng *rng, uint64_t lo, uint64_t hi);
/* True with probability per_mille / 1000. */
bool sim_rng_chance(struct sim_rng *rng, unsigned per_mille);
/* Derive an independent 64-bit seed (for engines, sub-streams). */
uint64_t sim_rng_fork(struct sim_rng *rng);

#endif /* SIM_RNG_H */
