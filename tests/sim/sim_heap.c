/*
 * sim_heap.c: min-heap (4-ary) of struct sim_event ordered by (at, order).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim_heap.h"

static int
before(const struct sim_event *x, const struct sim_event *y)
{
	if (x->at != y->at)
		return x->at < y->at;
	return x->order < y->order;
}

/* Put ev at index i, keeping its tracker up to date. */
static void
place(struct sim_heap *h, size_t i, const struct sim_event *ev)
{
	h->ev[i] = *ev;
	if (ev->track)
		*ev->track = i;
}

/* A 4-ary heap (half the levels of a binary one: the heap holds thousands
 * of in-flight messages), sifted by moving a hole: one copy per level. */
#define ARITY 4

static size_t
sift_up(struct sim_heap *h, size_t i)
{
	struct sim_event ev = h->ev[i];

	while (i > 0 && before(&ev, &h->ev[(i - 1) / ARITY])) {
		place(h, i, &h->ev[(i - 1) / ARITY]);
		i = (i - 1) / ARITY;
	}
	place(h, i, &ev);
	return i;
}

static void
sift_down(struct sim_heap *h, size_t i)
{
	struct sim_event ev = h->ev[i];

	for (;;) {
		size_t first = ARITY * i + 1, end = first + ARITY, m = first;

		if (first >= h->n)
			break;
		if (end > h->n)
			end = h->n;
		for (size_t c = first + 1; c < end; c++)
			if (before(&h->ev[c], &h->ev[m]))
				m = c;
		if (!before(&h->ev[m], &ev))
			break;
		place(h, i, &h->ev[m]);
		i = m;
	}
	place(h, i, &ev);
}

void
sim_heap_init(struct sim_heap *h)
{
	h->ev = NULL;
	h->n = h->cap = 0;
	h->next_order = 0;
}

void
sim_heap_fini(struct sim_heap *h)
{
	free(h->ev);
	sim_heap_init(h);
}

int
sim_heap_push(struct sim_heap *h, const struct sim_event *ev)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct sim_event *p = realloc(h->ev, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		h->ev = p;
		h->cap = cap;
	}
	i = h->n++;
	place(h, i, ev);
	h->ev[i].order = h->next_order++;
	sift_up(h, i);
	return 0;
}

const struct sim_event *
sim_heap_peek(const struct sim_heap *h)
{
	return h->n ? &h->ev[0] : NULL;
}

int
sim_heap_pop(struct sim_heap *h, struct sim_event *ret)
{
	if (h->n == 0)
		return -ENOENT;
	*ret = h->ev[0];
	if (ret->track)
		*ret->track = SIZE_MAX;
	if (--h->n > 0) {
		place(h, 0, &h->ev[h->n]);
		sift_down(h, 0);
	}
	return 0;
}

void
sim_heap_remove(struct sim_heap *h, size_t i)
{
	if (i >= h->n)
		return;
	if (h->ev[i].track)
		*h->ev[i].track = SIZE_MAX;
	if (i == --h->n)
		return;
	place(h, i, &h->ev[h->n]);
	if (sift_up(h, i) == i)
		sift_down(h, i);
}

void
sim_heap_replace(struct sim_heap *h, size_t i, const struct sim_event *ev)
{
	if (h->ev[i].track && h->ev[i].track != ev->track)
		*h->ev[i].track = SIZE_MAX;
	place(h, i, ev);
	h->ev[i].order = h->next_order++;
	if (sift_up(h, i) == i)
		sift_down(h, i);
}

void
sim_heap_visit(struct sim_heap *h, void (*fn)(void *ctx, struct sim_event *ev), void *ctx)
{
	for (size_t i = 0; i < h->n; i++)
		fn(ctx, &h->ev[i]);
}
