/*
 * sim_heap.c: binary min-heap of struct sim_event ordered by (at, order).
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

static void
swap(struct sim_heap *h, size_t i, size_t j)
{
	struct sim_event t = h->ev[i];

	place(h, i, &h->ev[j]);
	place(h, j, &t);
}

static size_t
sift_up(struct sim_heap *h, size_t i)
{
	while (i > 0 && before(&h->ev[i], &h->ev[(i - 1) / 2])) {
		swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return i;
}

static void
sift_down(struct sim_heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && before(&h->ev[l], &h->ev[m]))
			m = l;
		if (r < h->n && before(&h->ev[r], &h->ev[m]))
			m = r;
		if (m == i)
			break;
		swap(h, i, m);
		i = m;
	}
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
sim_heap_visit(struct sim_heap *h, void (*fn)(void *ctx, struct sim_event *ev), void *ctx)
{
	for (size_t i = 0; i < h->n; i++)
		fn(ctx, &h->ev[i]);
}
