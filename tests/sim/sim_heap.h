/*
 * sim_heap.h: the discrete-event queue, a min-heap of events keyed by
 * (real time, insertion number) so events at the same instant run in the
 * order they were scheduled and every run is reproducible.  The heap owns
 * its arrays (a pool of events and the heap of their keys); event payloads
 * are plain values.
 */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Real simulated time in microseconds. */
typedef uint64_t sim_time_t;

struct sim_event {
	sim_time_t	 at;
	uint64_t	 order;		/* set by sim_heap_push */
	int		 kind;		/* owner-defined */
	int		 node;
	uint64_t	 a, b, c;	/* owner-defined arguments */
	void		*ptr;		/* owner-defined, owned by the owner */
	size_t		*track;		/* NULL, or kept = the event's heap index
					 * (SIZE_MAX once popped or removed) */
};

/* A heap entry: an event's key and its pool slot (sim_heap.c). */
struct sim_heap_key {
	sim_time_t	 at;
	uint64_t	 order;
	uint32_t	 slot;
};

struct sim_heap {
	struct sim_event *ev;		/* pool, cap slots */
	struct sim_heap_key *key;	/* the heap, n keys */
	uint32_t	 *free_slot;	/* stack of n_free free pool slots */
	size_t		  n, cap, n_free;
	uint64_t	  next_order;
};

void sim_heap_init(struct sim_heap *h);
void sim_heap_fini(struct sim_heap *h);
/* Returns 0 or -ENOMEM. */
int sim_heap_push(struct sim_heap *h, const struct sim_event *ev);
/* Returns 0 and the earliest event, or -ENOENT when empty. */
int sim_heap_pop(struct sim_heap *h, struct sim_event *ret);
const struct sim_event *sim_heap_peek(const struct sim_heap *h);
/* Drop the tracked event at heap index i (from its track field). */
void sim_heap_remove(struct sim_heap *h, size_t i);
/* Replace the event at heap index i by ev, which takes a fresh insertion
 * number: the same as sim_heap_remove() then sim_heap_push(), and since
 * (at, order) keys are unique the pops come out in the same order, with
 * one sift instead of two.  i must be the index of a queued event. */
void sim_heap_replace(struct sim_heap *h, size_t i, const struct sim_event *ev);
/* Call fn on every queued event (in heap order, not time order). */
void sim_heap_visit(struct sim_heap *h, void (*fn)(void *ctx, const struct sim_event *ev),
    void *ctx);

#endif /* SIM_HEAP_H */
