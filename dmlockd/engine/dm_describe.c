/*
 * dm_describe.c: the read-only view of the algorithm's own state for
 * status output (dm_engine_visit_algorithm_state in dm_engine.h): one line
 * for the node and one per lock with state, each written by the
 * algorithm's optional describe hooks (dm_algorithm.h) as key=value words.
 * Owns nothing; never changes the engine.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dm_algorithm.h"
#include "dm_engine_private.h"

struct describe_visit {
	dm_algo_state_visit_fn	*fn;
	void			*ctx;
};

static void
describe_one_lock(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	struct describe_visit *v = arg;
	char text[DM_DESCRIBE_MAX];

	if (l->name[0] == '\0' || strncmp(l->name, DM_RESERVED_PREFIX,
	    strlen(DM_RESERVED_PREFIX)) == 0)
		return;		/* the roster lock and other internal names */
	if (e->algo->describe_lock(e, l, text, sizeof(text)) > 0)
		v->fn(v->ctx, l->name, text);
}

void
dm_engine_visit_algorithm_state(const struct dm_engine *engine, dm_algo_state_visit_fn *fn,
    void *ctx)
{
	/* The lock walk takes a mutable engine; the hooks get it const. */
	struct dm_engine *e = (struct dm_engine *)engine;
	struct describe_visit v = { .fn = fn, .ctx = ctx };
	char text[DM_DESCRIBE_MAX];

	if (e->algo->describe_node != NULL &&
	    e->algo->describe_node(e, text, sizeof(text)) > 0)
		fn(ctx, NULL, text);
	if (e->algo->describe_lock != NULL)
		dm_table_lock_foreach(e, describe_one_lock, &v);
}

size_t
dm_describe_add(char *buf, size_t size, size_t len, const char *fmt, ...)
{
	char word[DM_DESCRIBE_MAX];
	va_list ap;
	int n;

	if (size == 0 || len >= size)
		return len;
	va_start(ap, fmt);
	n = vsnprintf(word, sizeof(word), fmt, ap);
	va_end(ap);
	if (n <= 0 || (size_t)n >= sizeof(word) || len + (len > 0) + (size_t)n >= size)
		return len;
	if (len > 0)
		buf[len++] = ' ';
	memcpy(buf + len, word, (size_t)n + 1);
	return len + (size_t)n;
}
