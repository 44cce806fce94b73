/*
 * sim_heap.c: the simulator's event queue: a 4-ary min-heap of small keys
 * (time, insertion number, pool slot) over a pool of struct sim_event.
 * Sifting moves 24-byte keys instead of whole events; an event stays in
 * its pool slot from push to pop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim_heap.h"

/* A key's slot field: the pool slot, and whether that event is tracked
 * (its owner keeps its heap index: only then is the pool touched when the
 * key moves). */
#define TRACKED	UINT32_C(0x80000000)
#define SLOT(k)	((k)->slot & ~TRACKED)

static int
before(const struct sim_heap_key *x, const struct sim_heap_key *y)
{
	if (x->at != y->at)
		return x->at < y->at;
	return x->order < y->order;
}

/* Put key k at heap index i, keeping its tracker up to date. */
static void
place(struct sim_heap *h, size_t i, const struct sim_heap_key *k)
{
	h->key[i] = *k;
	if (k->slot & TRACKED)
		*h->ev[SLOT(k)].track = i;
}

/* A 4-ary heap (half the levels of a binary one), sifted by moving a
 * hole: one key copy per level. */
#define ARITY 4

static size_t
sift_up(struct sim_heap *h, size_t i)
{
	struct sim_heap_key k = h->key[i];

	while (i > 0 && before(&k, &h->key[(i - 1) / ARITY])) {
		place(h, i, &h->key[(i - 1) / ARITY]);
		i = (i - 1) / ARITY;
	}
	place(h, i, &k);
	return i;
}

static void
sift_down(struct sim_heap *h, size_t i)
{
	struct sim_heap_key k = h->key[i];

	for (;;) {
		size_t first = ARITY * i + 1, end = first + ARITY, m = first;

		if (first >= h->n)
			break;
		if (end > h->n)
			end = h->n;
		for (size_t c = first + 1; c < end; c++)
			if (before(&h->key[c], &h->key[m]))
				m = c;
		if (!before(&h->key[m], &k))
			break;
		place(h, i, &h->key[m]);
		i = m;
	}
	place(h, i, &k);
}

void
sim_heap_init(struct sim_heap *h)
{
	h->ev = NULL;
	h->key = NULL;
	h->free_slot = NULL;
	h->n = h->cap = h->n_free = 0;
	h->next_order = 0;
}

void
sim_heap_fini(struct sim_heap *h)
{
	free(h->ev);
	free(h->key);
	free(h->free_slot);
	sim_heap_init(h);
}

static int
grow(struct sim_heap *h)
{
	size_t cap = h->cap ? h->cap * 2 : 64;
	struct sim_event *ev;
	struct sim_heap_key *key;
	uint32_t *fs;

	if (cap >= TRACKED)
		return -ENOMEM;
	ev = realloc(h->ev, cap * sizeof(*ev));
	if (ev == NULL)
		return -ENOMEM;
	h->ev = ev;
	key = realloc(h->key, cap * sizeof(*key));
	if (key == NULL)
		return -ENOMEM;
	h->key = key;
	fs = realloc(h->free_slot, cap * sizeof(*fs));
	if (fs == NULL)
		return -ENOMEM;
	h->free_slot = fs;
	/* The new slots are free (taken lowest first). */
	for (size_t s = cap; s-- > h->cap;)
		h->free_slot[h->n_free++] = (uint32_t)s;
	h->cap = cap;
	return 0;
}

/* Store ev in a free pool slot under a fresh insertion number; the key. */
static struct sim_heap_key
store(struct sim_heap *h, const struct sim_event *ev)
{
	uint32_t s = h->free_slot[--h->n_free];
	struct sim_heap_key k = { .at = ev->at, .order = h->next_order++, .slot = s };

	h->ev[s] = *ev;
	h->ev[s].order = k.order;
	if (ev->track != NULL)
		k.slot |= TRACKED;
	return k;
}

int
sim_heap_push(struct sim_heap *h, const struct sim_event *ev)
{
	size_t i;

	if (h->n == h->cap && grow(h) < 0)
		return -ENOMEM;
	i = h->n++;
	h->key[i] = store(h, ev);
	sift_up(h, i);
	return 0;
}

const struct sim_event *
sim_heap_peek(const struct sim_heap *h)
{
	return h->n ? &h->ev[SLOT(&h->key[0])] : NULL;
}

/* Take the event at heap index i out of the pool (its slot is free). */
static void
release(struct sim_heap *h, size_t i, struct sim_event *ret)
{
	uint32_t s = SLOT(&h->key[i]);

	if (ret != NULL)
		*ret = h->ev[s];
	if (h->ev[s].track != NULL)
		*h->ev[s].track = SIZE_MAX;
	h->free_slot[h->n_free++] = s;
}

int
sim_heap_pop(struct sim_heap *h, struct sim_event *ret)
{
	if (h->n == 0)
		return -ENOENT;
	release(h, 0, ret);
	if (--h->n > 0) {
		place(h, 0, &h->key[h->n]);
		sift_down(h, 0);
	}
	return 0;
}

void
sim_heap_remove(struct sim_heap *h, size_t i)
{
	if (i >= h->n)
		return;
	release(h, i, NULL);
	if (i == --h->n)
		return;
	place(h, i, &h->key[h->n]);
	if (sift_up(h, i) == i)
		sift_down(h, i);
}

void
sim_heap_replace(struct sim_heap *h, size_t i, const struct sim_event *ev)
{
	uint32_t s = SLOT(&h->key[i]);

	if (h->ev[s].track != NULL && h->ev[s].track != ev->track)
		*h->ev[s].track = SIZE_MAX;
	h->free_slot[h->n_free++] = s;
	h->key[i] = store(h, ev);	/* (the same slot again) */
	if (sift_up(h, i) == i)
		sift_down(h, i);
}

void
sim_heap_visit(struct sim_heap *h, void (*fn)(void *ctx, const struct sim_event *ev), void *ctx)
{
	for (size_t i = 0; i < h->n; i++)
		fn(ctx, &h->ev[SLOT(&h->key[i])]);
}
