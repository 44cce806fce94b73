/*
 * dm_timer.c: the engine's timers as data: a binary min-heap of struct
 * dm_timer embedded in their owners (clients, locks, the engine).  The
 * shell learns the earliest one through dm_engine_next_deadline() and
 * sends DM_EV_TICK; the engine never reads a clock.
 */
#include <errno.h>
#include <stdlib.h>

#include "dm_engine_private.h"

static void
heap_place(struct dm_engine *e, size_t i, struct dm_timer *t)
{
	e->heap[i] = t;
	t->heap_index = (uint32_t)(i + 1);
}

static bool
heap_before(const struct dm_timer *a, const struct dm_timer *b)
{
	return a->at < b->at;
}

static void
heap_up(struct dm_engine *e, size_t i)
{
	struct dm_timer *t = e->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!heap_before(t, e->heap[p]))
			break;
		heap_place(e, i, e->heap[p]);
		i = p;
	}
	heap_place(e, i, t);
}

static void
heap_down(struct dm_engine *e, size_t i)
{
	struct dm_timer *t = e->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= e->heap_n)
			break;
		if (c + 1 < e->heap_n && heap_before(e->heap[c + 1], e->heap[c]))
			c++;
		if (!heap_before(e->heap[c], t))
			break;
		heap_place(e, i, e->heap[c]);
		i = c;
	}
	heap_place(e, i, t);
}

int
dm_timer_arm(struct dm_engine *e, struct dm_timer *t, dm_msec_t at)
{
	if (t->heap_index != 0) {
		size_t i = t->heap_index - 1;
		t->at = at;
		heap_up(e, i);
		heap_down(e, t->heap_index - 1);
		return 0;
	}
	if (e->heap_n == e->heap_cap) {
		size_t cap = e->heap_cap ? e->heap_cap * 2 : 64;
		struct dm_timer **h = realloc(e->heap, cap * sizeof(*h));
		if (h == NULL)
			return -ENOMEM;
		e->heap = h;
		e->heap_cap = cap;
	}
	t->at = at;
	e->heap[e->heap_n] = t;
	e->heap_n++;
	heap_up(e, e->heap_n - 1);
	return 0;
}

void
dm_timer_stop(struct dm_engine *e, struct dm_timer *t)
{
	size_t i;
	struct dm_timer *last;

	if (t->heap_index == 0)
		return;
	i = t->heap_index - 1;
	t->heap_index = 0;
	last = e->heap[--e->heap_n];
	if (i == e->heap_n)
		return;
	heap_place(e, i, last);
	heap_up(e, i);
	heap_down(e, last->heap_index - 1);
}

/* Pop the earliest timer due at now, or NULL. */
struct dm_timer *
dm_timer_due(struct dm_engine *e, dm_msec_t now)
{
	struct dm_timer *t;

	if (e->heap_n == 0 || e->heap[0]->at > now)
		return NULL;
	t = e->heap[0];
	dm_timer_stop(e, t);
	return t;
}

dm_msec_t
dm_timer_next(const struct dm_engine *e)
{
	if (e->heap_n == 0)
		return 0;
	/* A deadline of 0 would read as "none": never ask for time 0. */
	return e->heap[0]->at ? e->heap[0]->at : 1;
}
