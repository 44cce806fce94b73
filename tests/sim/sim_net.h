/*
 * sim_net.h: the simulated network's links.  One directed link per ordered
 * pair of node slots, holding encoded messages in FIFO order (the peer
 * transport's contract: exactly-once FIFO delivery per link while both
 * processes live).  A link that is cut keeps its messages, like the
 * transport's resend queue, and delivers them after it heals; a crash
 * flushes both directions.  The epoch invalidates scheduled deliveries
 * whenever a link's schedule changes.  Owns the queued message buffers
 * and the spare ones.
 */
#ifndef SIM_NET_H
#define SIM_NET_H

#include <stddef.h>
#include <stdint.h>

#include "sim_heap.h"

/* Messages up to this long get a buffer of this size, kept for reuse once
 * delivered (nearly every engine message is far shorter; a longer one
 * gets a buffer of its own). */
#define SIM_MSG_POOLED	512

struct sim_msg {
	struct sim_msg	*next;
	sim_time_t	 at;		/* scheduled delivery */
	size_t		 len;
	size_t		 cap;		/* bytes[] holds this many */
	uint8_t		 bytes[];
};

struct sim_link {
	struct sim_msg	*head, *tail;
	size_t		 n;
	sim_time_t	 last_at;	/* FIFO: no message delivered before this */
	uint64_t	 epoch;
	unsigned	 cut;		/* >0: partitioned (nested cuts count) */
};

struct sim_net {
	unsigned	 n;
	struct sim_link	*links;		/* n * n */
	struct sim_msg	*spare;		/* delivered SIM_MSG_POOLED buffers, for reuse */
};

int sim_net_init(struct sim_net *net, unsigned n);
void sim_net_fini(struct sim_net *net);
struct sim_link *sim_net_link(struct sim_net *net, unsigned from, unsigned to);
/* Append a copy of bytes; its delivery time is max(at, last_at), returned
 * in *ret_at.  Returns 0 or -ENOMEM. */
int sim_net_enqueue(struct sim_net *net, struct sim_link *link, sim_time_t at,
    const uint8_t *bytes, size_t len, sim_time_t *ret_at);
/* Detach the head (the caller gives it back with sim_net_release()), NULL
 * when empty. */
struct sim_msg *sim_net_pop(struct sim_link *link);
void sim_net_release(struct sim_net *net, struct sim_msg *m);
/* Drop every queued message (an endpoint crashed) and bump the epoch. */
void sim_net_flush(struct sim_net *net, struct sim_link *link);

#endif /* SIM_NET_H */
