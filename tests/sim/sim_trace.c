/*
 * sim_trace.c: ring buffer of formatted trace lines with a real-time
 * stamp in milliseconds ("[   12.345] n2 ...").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "sim_trace.h"

int
sim_trace_init(struct sim_trace *tr, size_t cap, FILE *echo)
{
	tr->ring = calloc(cap ? cap : 1, sizeof(*tr->ring));
	if (!tr->ring)
		return -ENOMEM;
	tr->cap = cap ? cap : 1;
	tr->next = tr->count = 0;
	tr->echo = echo;
	tr->enabled = 1;
	tr->hash = UINT64_C(0xcbf29ce484222325);
	return 0;
}

void
sim_trace_fini(struct sim_trace *tr)
{
	free(tr->ring);
	tr->ring = NULL;
	tr->cap = tr->next = tr->count = 0;
}

void
sim_trace_line(struct sim_trace *tr, sim_time_t at, const char *fmt, ...)
{
	char *line;
	va_list ap;
	int n;

	if (!tr->enabled || !tr->ring)
		return;
	line = tr->ring[tr->next];
	n = snprintf(line, SIM_TRACE_LINE_MAX, "[%8llu.%03llu] ",
	    (unsigned long long)(at / 1000), (unsigned long long)(at % 1000));
	if (n < 0 || n >= SIM_TRACE_LINE_MAX)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, SIM_TRACE_LINE_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	for (const char *p = line; *p; p++)
		tr->hash = (tr->hash ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
	tr->next = (tr->next + 1) % tr->cap;
	if (tr->count < tr->cap)
		tr->count++;
	if (tr->echo)
		fprintf(tr->echo, "%s\n", line);
}

void
sim_trace_dump(const struct sim_trace *tr, FILE *out)
{
	size_t first = (tr->next + tr->cap - tr->count) % tr->cap;

	for (size_t i = 0; i < tr->count; i++)
		fprintf(out, "%s\n", tr->ring[(first + i) % tr->cap]);
}
