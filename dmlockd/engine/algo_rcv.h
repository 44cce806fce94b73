/*
 * algo_rcv.h: private interface between algo_rcv.c (the message handlers of
 * relative consensus voting) and algo_rcv_table.c (the system-information
 * table SI: NONL, NSIT, and the Exchange and Order procedures, plus its
 * wire form).  Exposed for tests/unit/check_algo_rcv.c.
 *
 * J. Cao, J. Zhou, D. Chen, J. Wu, "An Efficient Distributed Mutual
 * Exclusion Algorithm Based on Relative Consensus Voting", IPDPS 2004.
 *
 * Nodes are named by their *rank*: the index of the member's name in the
 * roster sorted by name.  Ranks agree between nodes that agree on the
 * roster, and every message carries a roster fingerprint, so ranks can go
 * on the wire (a local dm_slot_t cannot: slots differ between nodes).
 */
#ifndef ALGO_RCV_H
#define ALGO_RCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dm_algorithm.h"
#include "dm_msg.h"

/* Message kinds (the codec treats algorithm kinds as opaque). */
enum rcv_kind {
	RCV_MSG_RM = 0xB0,	/* roaming request: seq = host tuple ts; payload host, UL, SI */
	RCV_MSG_EM,		/* enter: seq = the receiver's tuple ts; payload SI */
	RCV_MSG_IM,		/* inform: seq = the receiver's tuple ts; payload successor, SI */
	RCV_MSG_BUSY,		/* try-once request ordered behind another: seq = tuple ts */
	RCV_MSG_PROBE,		/* requester -> members after a timeout: are you there? */
	RCV_MSG_PROBE_ACK,	/* flags bit 0 = ORDERED: the prober's tuple is in our NONL */
	RCV_MSG_STALE,		/* "your generation is old": carries ours */
	RCV_MSG_ABSENT,		/* retired (its number stays reserved) */
	/* The engine's locks (".dmlock/..."): every member's permission,
	 * Ricart-Agrawala style (algo_rcv_roster.c); no generation. */
	RCV_MSG_RL_REQUEST,	/* seq = request number (Lamport clock) */
	RCV_MSG_RL_REPLY,	/* permission: seq echoed */
	RCV_MSG_RL_PROBE,	/* request again after a timeout: seq = the request's */
	RCV_MSG_RL_HERE,	/* "alive, deferring you": seq echoed */
	RCV_MSG_KIND_MAX_,
};

#define RCV_NODES_MAX	DM_NODES_MAX
#define RCV_RANK_NONE	0xffffu

/* Tuple flags (per node's latest tuple). */
#define RCV_F_DONE	0x01u	/* the tuple's critical section is over */
#define RCV_F_HOLDER	0x02u	/* registered by a node already in its CS at a generation change */
#define RCV_F_MASK	0x03u

/*
 * The SI of one lock in one generation.  A tuple <j, t> is identified by
 * its node j and stored as j alone: only j's latest tuple latest[j] can be
 * pending (one outstanding request per node), so every older tuple of j is
 * finished.  Rows are the MNLs of the NSIT, in arrival order at that node.
 */
struct rcv_table {
	uint16_t	 n;			/* N: members of the generation */
	uint16_t	 cap;			/* N the arrays below have room for */
	bool		 started;		/* some tuple of this generation was ordered */
	uint16_t	 n_nonl;
	uint64_t	*latest;		/* [cap] latest tuple ts of node j; 0: none known */
	uint8_t		*flags;			/* [cap] RCV_F_* of latest[j] */
	uint64_t	*row_ts;		/* [cap] NSIT[j].TS; 0: row unknown */
	uint16_t	*row_len;		/* [cap] */
	uint8_t		*nonl;			/* [cap] NONL: ordered nodes, first = next in CS */
	uint8_t		*rows;			/* [cap][cap] NSIT[j].MNL (rcv_row()); row r's
						 * entries past row_len[r] are garbage */
	void		*block;			/* what rcv_table_reserve() allocated, or NULL */
};

/* Room for an SI of RCV_NODES_MAX members without an allocation (the
 * node's one table for the message being handled, and tests). */
struct rcv_table_space {
	uint64_t	 latest[RCV_NODES_MAX];
	uint64_t	 row_ts[RCV_NODES_MAX];
	uint16_t	 row_len[RCV_NODES_MAX];
	uint8_t		 flags[RCV_NODES_MAX];
	uint8_t		 nonl[RCV_NODES_MAX];
	uint8_t		 rows[RCV_NODES_MAX * RCV_NODES_MAX];
};

/* Row r of the NSIT (cap entries, row_len[r] of them in use). */
static inline uint8_t *
rcv_row(const struct rcv_table *t, uint16_t r)
{
	return t->rows + (size_t)r * t->cap;
}

/* Give t the room of space (cap RCV_NODES_MAX); t owns no allocation. */
void	 rcv_table_attach(struct rcv_table *t, struct rcv_table_space *space);
/* Make room for n members (a lock's SI, sized for its generation's N: a
 * few hundred bytes instead of the 70 KB of RCV_NODES_MAX).  Whatever t
 * held is lost (rcv_table_init() follows).  0, or -ENOMEM with t as it
 * was. */
int	 rcv_table_reserve(struct rcv_table *t, uint16_t n);
/* Free what rcv_table_reserve() allocated. */
void	 rcv_table_release(struct rcv_table *t);
/* An empty SI of n members (n <= t->cap). */
void	 rcv_table_init(struct rcv_table *t, uint16_t n);
/* Position of j in NONL or -1. */
int	 rcv_nonl_find(const struct rcv_table *t, uint16_t j);
bool	 rcv_row_has(const struct rcv_table *t, uint16_t row, uint16_t j);
/* Is j's latest tuple pending (known, not finished)? */
bool	 rcv_pending(const struct rcv_table *t, uint16_t j);
/* A new latest tuple for j (drops every trace of j's older tuple). */
void	 rcv_set_latest(struct rcv_table *t, uint16_t j, uint64_t ts, uint8_t flags);
/* Append j's tuple to row (MNL of node row) unless present, ordered or
 * finished; the row's version becomes ts.  Returns true if appended. */
bool	 rcv_register(struct rcv_table *t, uint16_t row, uint16_t j, uint64_t ts);
/* Delete finished and ordered tuples from rows, finished ones from NONL. */
void	 rcv_prune(struct rcv_table *t);

/* Exchange: merge the SI carried by a message into the local one.
 * Returns 0, or -EPROTO if the two NONLs are not ordered alike (which the
 * algorithm guarantees never happens; the message is then ignored). */
int	 rcv_exchange(struct rcv_table *local, const struct rcv_table *msg);

/* Order: rank competing tuples by relative consensus voting and append
 * those that can be decided to NONL, until host is ordered.  Returns true
 * if host is ordered (BeOrdered). */
bool	 rcv_order(struct rcv_table *t, uint16_t host);

/* Where to forward an RM: the unvisited ranks (bitmap ul, n ranks) whose
 * row casts no vote yet, or every unvisited rank if none.  pref gets the bitmap (RCV_NODES_MAX/8 bytes), count its
 * population (0: nowhere to go). */
void	 rcv_rm_candidates(const struct rcv_table *t, const uint8_t *ul, uint16_t n,
	    uint8_t *pref, uint16_t *count);

/* Wire form of the SI.  Encoding drops whole rows (never parts of one)
 * when the payload would overflow, rows holding prefer_j first; returns
 * the bytes written or -EMSGSIZE.  Decoding checks every count and rank. */
int	 rcv_table_encode(const struct rcv_table *t, uint16_t prefer_j, uint8_t *buf, size_t cap);
int	 rcv_table_decode(struct rcv_table *t, uint16_t n, const uint8_t *buf, size_t len,
	    size_t *used);

/*
 * The engine's locks (names under ".dmlock/", the roster lock) run apart
 * from RCV: a requester needs every member's permission (Ricart-Agrawala's
 * REQUEST/REPLY and its timeout probe), answered whatever the answerer's
 * roster or generation.  algo_rcv_roster.c; state in struct rcv_lock.
 */
struct rcv_rl {
	uint64_t	 seq;		/* our request's number */
	bool		 requesting;	/* from request to release (in the CS too) */
	bool		 in_cs;
	uint8_t		 timer_phase;
	uint16_t	 outstanding;	/* replies awaited */
	uint8_t		 awaiting[RCV_NODES_MAX / 8];
	uint8_t		 answered[RCV_NODES_MAX / 8];	/* probe answers this round */
	uint8_t		 deferred[RCV_NODES_MAX / 8];
	uint64_t	 deferred_seq[RCV_NODES_MAX];	/* echoed in the deferred REPLY */
};

bool	 rcv_rl_name(const char *name, size_t len);
/* clock: the node's Lamport clock (request numbers above every one seen). */
void	 rcv_rl_request(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s,
	    uint64_t *clock);
/* Release, or withdraw a request: deferred replies go out. */
void	 rcv_rl_release(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s);
bool	 rcv_rl_may_handoff(const struct rcv_rl *s);
/* l and s may be NULL (no state here: nothing to defer). */
int	 rcv_rl_receive(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s,
	    dm_slot_t from, const struct dm_msg *m, uint64_t *clock);
void	 rcv_rl_timer(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s);
void	 rcv_rl_peer_gone(struct dm_engine *e, struct dm_lock *l, struct rcv_rl *s,
	    dm_slot_t slot);
bool	 rcv_rl_idle(const struct rcv_rl *s);

#endif /* ALGO_RCV_H */
