/*
 * algo_maekawa.h: what the files of Maekawa's algorithm share: the wire
 * conventions (serial bits), the per-node and per-lock state, and the
 * calls between the message layer and dispatch (algo_maekawa.c), views and
 * request sets (algo_maekawa_view.c), the arbiter (algo_maekawa_arbiter.c)
 * and the requester (algo_maekawa_requester.c).  Nothing outside these
 * files includes it; the engine sees only dm_algo_maekawa.
 */
#ifndef ALGO_MAEKAWA_H
#define ALGO_MAEKAWA_H

#include <stdbool.h>
#include <stdint.h>

#include "dm_algorithm.h"

#define MK_CLEAN	0x1u	/* serial bit: the sender has no older-view state */
#define MK_RESERVED	".dmlock/"	/* the engine's own locks (the roster lock) */
#define MK_SELFQ_MAX	64

/* ARE_YOU_THERE: who probes whom, in serial bits 1-2 (shifted by MK_SUB_SHIFT). */
#define MK_SUB_SHIFT		1
/* Serial bits 3..: the lease round a REQUEST opens (dm_lease_round), echoed
 * by LOCKED/FAILED/BUSY as the arbiter's lease acknowledgement. */
#define MK_LEASE_SHIFT		3
#define MK_PROBE_REQUESTER	1	/* a requester probes an arbiter: seq = its request */
#define MK_PROBE_ARBITER	2	/* an arbiter probes its vote holder: seq = the vote */

struct mk_self_msg {
	struct dm_lock	*l;
	uint8_t		 kind;
	bool		 try_once;
	uint64_t	 seq;
	uint64_t	 view;
};

struct mk_node {
	uint64_t	highest_seq;
	uint64_t	in_lease;		/* lease round of the message being handled */
	uint64_t	view;			/* fingerprint of the member names */
	uint32_t	gen;			/* local count of view changes */
	uint32_t	act_total, act_old;	/* requests and votes; those of older views */
	uint16_t	n_clean;
	uint8_t		clean[DM_NODES_MAX / 8];	/* reported clean in this view */
	/* My request set for this view (slots). */
	uint64_t	set_view;
	uint16_t	set_n;
	dm_slot_t	set[DM_NODES_MAX];
	/* Messages to self, delivered after the current handler. */
	unsigned	selfq_n;
	bool		draining;
	struct mk_self_msg selfq[MK_SELFQ_MAX];
};

struct mk_wait {
	uint64_t	seq;
	uint64_t	view;
	dm_slot_t	slot;
	bool		failed_sent;
	bool		stale_sent;
	uint64_t	lease;		/* the request's lease round, echoed */
};

struct mk_lock {
	/* Requester. */
	bool		requesting, in_cs, try_once, all_mode, timer_on;
	bool		probing;	/* timer phase: probes out (else: waiting) */
	uint32_t	req_gen;
	uint64_t	lease_serial;			/* our request doubles as a lease round */
	uint64_t	our_seq, req_view;
	uint16_t	n_members, n_locked;
	uint8_t		member[DM_NODES_MAX / 8];	/* sent our REQUEST */
	uint8_t		locked[DM_NODES_MAX / 8];	/* LOCKED received */
	uint8_t		failed[DM_NODES_MAX / 8];	/* FAILED received / relinquished */
	uint8_t		inquired[DM_NODES_MAX / 8];	/* deferred INQUIREs */
	uint8_t		probed[DM_NODES_MAX / 8];
	uint8_t		answered[DM_NODES_MAX / 8];
	/* Arbiter. */
	bool		voted, inquire_sent;
	uint32_t	vote_gen;
	struct mk_wait	vote;				/* the locking REQUEST */
	uint16_t	n_wait, cap_wait;
	struct mk_wait	*wait;				/* WAITING QUEUE */
};

static inline struct mk_node *
mk_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

/* No request or vote of ours belongs to an older view. */
static inline bool
node_clean(const struct mk_node *n)
{
	return n->act_old == 0;
}

static inline bool
mk_member(const struct dm_engine *e, dm_slot_t j)
{
	return !dm_roster_departing(e, j);
}

/* Activity accounting (what makes a node "unclean"): each request and vote
 * counts from its start to its end, as old once the view changed since. */
static inline void
act_begin(struct mk_node *n, uint32_t *gen)
{
	*gen = n->gen;
	n->act_total++;
}

static inline void
act_end(struct mk_node *n, uint32_t gen)
{
	n->act_total--;
	if (gen != n->gen)
		n->act_old--;
}

/* algo_maekawa.c: messages (to self through a queue drained after each
 * handler). */
void	 mk_send_full(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind,
	    uint64_t seq, bool try_once, uint8_t sub, uint64_t lease);
void	 mk_send(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind,
	    uint64_t seq, bool try_once);
void	 mk_answer(struct dm_engine *e, struct dm_lock *l, const struct mk_wait *w,
	    uint8_t kind);

/* algo_maekawa_view.c: views (fingerprints of the member names), clean
 * reports, request sets. */
bool	 mk_name_reserved(const char *name, size_t len);
uint64_t mk_arb_view(const struct dm_lock *l, uint64_t view);
void	 mk_sync_view(struct dm_engine *e);
void	 mk_note_clean(struct dm_engine *e, dm_slot_t j, uint64_t view, bool clean);
bool	 mk_all_clean(struct dm_engine *e);
int	 mk_compute_set(struct dm_engine *e);

/* algo_maekawa_arbiter.c: the arbiter's vote and WAITING QUEUE. */
int	 mk_wait_find(const struct mk_lock *s, dm_slot_t j);
void	 mk_wait_drop(struct mk_lock *s, int i);
void	 mk_arb_unlock(struct dm_engine *e, struct mk_lock *s);
void	 mk_arb_settle(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
void	 mk_arb_on_request(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s,
	    dm_slot_t j, uint64_t seq, uint64_t view, bool try_once);
void	 mk_arb_on_give_back(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s,
	    dm_slot_t j, uint64_t seq, bool relinquish);
bool	 mk_arb_unknown(const struct mk_lock *s, dm_slot_t j, uint64_t seq);

/* algo_maekawa_requester.c: a node's own request. */
void	 mk_ensure_timer(struct dm_engine *e, struct dm_lock *l);
int	 mk_req_issue(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
void	 mk_req_give_up(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
void	 mk_req_reissue_if_stale(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
void	 mk_req_enter_if_done(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
void	 mk_req_relinquish(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s,
	    dm_slot_t x);
bool	 mk_req_knows_it_fails(const struct mk_lock *s);
void	 mk_req_answer_inquiries(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s);
bool	 mk_req_current(const struct mk_lock *s, dm_slot_t x, uint64_t seq);

#endif /* ALGO_MAEKAWA_H */
