/*
 * sim_rng.c: xoshiro256** (Blackman and Vigna) seeded by splitmix64.
 * Owns nothing but the four words of state in struct sim_rng.
 */
#include "sim_rng.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
sim_rng_seed(struct sim_rng *rng, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

uint64_t
sim_rng_next(struct sim_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t
sim_rng_below(struct sim_rng *rng, uint64_t bound)
{
	uint64_t threshold, r;

	if (bound == 0)
		return 0;
	/* Rejection sampling: no modulo bias. */
	threshold = -bound % bound;
	do
		r = sim_rng_next(rng);
	while (r < threshold);
	return r % bound;
}

uint64_t
sim_rng_range(struct sim_rng *rng, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	if (hi - lo == UINT64_MAX)
		return sim_rng_next(rng);
	return lo + sim_rng_below(rng, hi - lo + 1);
}

bool
sim_rng_chance(struct sim_rng *rng, unsigned per_mille)
{
	return sim_rng_below(rng, 1000) < per_mille;
}

uint64_t
sim_rng_fork(struct sim_rng *rng)
{
	uint64_t x = sim_rng_next(rng);

	return splitmix64(&x);
}
