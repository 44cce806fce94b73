/*
 * internal.h: private definitions of libdmlock (not installed): the export
 * macro and the clock.  The library is built with -fvisibility=hidden; only
 * functions marked DMLOCK_EXPORT (and listed in libdmlock.sym) are public.
 */
#ifndef DMLOCK_INTERNAL_H
#define DMLOCK_INTERNAL_H

#include <stdint.h>
#include <time.h>

#define DMLOCK_EXPORT __attribute__((visibility("default")))

/* CLOCK_BOOTTIME in ms: the clock grant deadlines are measured on. */
static inline uint64_t
dmlock_now_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif /* DMLOCK_INTERNAL_H */
