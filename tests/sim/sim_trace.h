/*
 * sim_trace.h: the readable trace of a simulated run.  Keeps the last
 * lines in a ring (printed when a checker fires) and, with --trace, echoes
 * every line to a stream as it is written.  Owns its ring only.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "sim_heap.h"

#define SIM_TRACE_LINE_MAX	200

struct sim_trace {
	char	(*ring)[SIM_TRACE_LINE_MAX];
	size_t	  cap, next, count;
	FILE	 *echo;		/* NULL: keep in the ring only */
	int	  enabled;	/* 0: drop lines (sim_run keeps them only for --trace and for the replay of a failing seed) */
	uint64_t  hash;		/* FNV-1a of every line: replay fingerprint */
};

/* Returns 0 or -ENOMEM.  cap lines are kept. */
int sim_trace_init(struct sim_trace *tr, size_t cap, FILE *echo);
void sim_trace_fini(struct sim_trace *tr);
void sim_trace_line(struct sim_trace *tr, sim_time_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Print the kept lines, oldest first. */
void sim_trace_dump(const struct sim_trace *tr, FILE *out);

#endif /* SIM_TRACE_H */
