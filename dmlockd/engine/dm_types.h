/*
 * dm_types.h: basic types, limits and name validation shared by the whole
 * protocol engine.  Pure: includes only the C library; no I/O, no clocks.
 */
#ifndef DM_TYPES_H
#define DM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds on the caller's CLOCK_BOOTTIME (suspend counts).  The engine
 * never reads a clock: every event carries "now". */
typedef uint64_t dm_msec_t;

/* Limits: every size a peer or client controls is bounded. */
#define DM_LOCK_NAME_MAX	255	/* bytes in a lock name */
#define DM_NODE_NAME_MAX	63	/* bytes in a node name */
#define DM_ADDRESS_MAX		127	/* bytes in a peer address ("host:port") */
#define DM_NODES_MAX		256	/* nodes in a roster */
#define DM_ALGORITHM_NAME_MAX	31

/* Lock modes.  Shared is the readers/writers extension (RA §6.6). */
enum dm_mode {
	DM_MODE_EXCLUSIVE = 0,
	DM_MODE_SHARED = 1,
};

/*
 * Lock names: 1..255 bytes of printable ASCII other than space
 * (0x21..0x7e), so they travel in text lines and logs unquoted.
 * Node names: 1..63 bytes of [A-Za-z0-9._-], starting with an alphanumeric
 * (they double as TLS certificate names).
 */
bool dm_lock_name_valid(const char *name, size_t len);
bool dm_node_name_valid(const char *name, size_t len);
/* The same for a C string (NULL: not valid). */
bool dm_node_name_str_valid(const char *name);

/* splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", 2014) on x + its gamma: a well-mixed
 * 64-bit hash of x.  dm_mix64(s) with s stepping by the gamma is the
 * splitmix64 generator. */
#define DM_MIX64_GAMMA	UINT64_C(0x9e3779b97f4a7c15)
static inline uint64_t
dm_mix64(uint64_t x)
{
	x += DM_MIX64_GAMMA;
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

#endif /* DM_TYPES_H */
