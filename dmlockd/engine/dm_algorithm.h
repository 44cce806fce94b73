/*
 * dm_algorithm.h: the contract between the engine and a mutual-exclusion
 * algorithm (private to dmlockd/engine; shells never include it).
 *
 * The engine owns what every algorithm shares: the lock table keyed by
 * name, the per-lock FIFO of local clients, the roster (slots, names,
 * liveness, epochs), fencing tokens, leases and timers.  For each lock the
 * engine asks the algorithm for *node-level* permission in one mode
 * (request), and tells it when the node leaves its critical section
 * (release) or gives up waiting (withdraw).  The algorithm answers through
 * dm_lock_permitted() / dm_lock_refused() and talks to peers with
 * dm_msg_begin() + dm_send().  Local clients, handoff between them,
 * try/timeout and grants are the engine's business.
 *
 * Fit for the algorithms to come:
 *  - permission based (Ricart-Agrawala, Lamport, Maekawa, RCV): request
 *    sends REQUESTs; receive() counts replies/votes; release() sends the
 *    deferred replies or RELEASE messages.
 *  - token based (Suzuki-Kasami, Raymond, Naimi-Trehel): request() may call
 *    dm_lock_permitted() at once when the node keeps the token (zero
 *    messages), may_handoff() says whether another node queued for it;
 *    the token travels in the message payload with the fencing counter.
 *  - coordinator based (hierarchical): messages go to the coordinator slot
 *    computed from the roster; roster_changed() triggers an election.
 * Per-lock algorithm state lives inline in struct dm_lock (lock_state_size
 * bytes, zeroed on creation); per-node state in one block of
 * node_state_size bytes.  The engine frees a lock's state when the lock is
 * idle locally and the algorithm's idle() agrees.
 */
#ifndef DM_ALGORITHM_H
#define DM_ALGORITHM_H

#include "dm_engine.h"
#include "dm_msg.h"

struct dm_lock;

/* Capabilities. */
#define DM_CAP_SHARED		(1u << 0)	/* shared (reader) mode supported */
#define DM_CAP_NEEDS_FIFO	(1u << 1)	/* correct only over FIFO links */
#define DM_CAP_SURVIVES_FAILURE	(1u << 2)	/* recovers from node failure via the roster */

/* Roster slot of a node: a stable small index while the node is a member. */
typedef uint16_t dm_slot_t;
#define DM_SLOT_NONE	((dm_slot_t)0xffff)

struct dm_algorithm {
	const char	*name;		/* config value, e.g. "ricart-agrawala" */
	uint32_t	 caps;		/* DM_CAP_* */
	size_t		 lock_state_size;
	size_t		 node_state_size;

	/* Node-level state created (zeroed) with the engine; may be NULL. */
	int	(*node_init)(struct dm_engine *e, void *node_state);

	/* Obtain cluster permission for l in mode.  try_once: never wait
	 * behind another node; refuse with -EBUSY instead.  May call
	 * dm_lock_permitted() before returning. */
	int	(*request)(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode,
		    bool try_once);
	/* Give up a request not yet permitted. */
	void	(*withdraw)(struct dm_engine *e, struct dm_lock *l);
	/* The node leaves its critical section for l. */
	void	(*release)(struct dm_engine *e, struct dm_lock *l);
	/* While the node holds l: may a local client in mode take over
	 * without a network round (no other node is waiting behind us)? */
	bool	(*may_handoff)(const struct dm_engine *e, const struct dm_lock *l,
		    enum dm_mode mode);
	/* A message of an algorithm kind from member slot.  l is the named lock
	 * if it has state, else NULL (use dm_lock_get() to create it).
	 * Returns 0 or -EPROTO. */
	int	(*receive)(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
	/* l's algorithm timer (dm_lock_timer_arm) expired. */
	void	(*timer)(struct dm_engine *e, struct dm_lock *l);
	/* A member left or was declared failed: act as if every answer it owes
	 * for l arrived, forget what we owe it.  Called for every lock with
	 * state, before the slot is cleared. */
	void	(*peer_gone)(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot);
	/* Free what the algorithm allocated for l (optional; called before the
	 * engine frees l, also from dm_engine_free()). */
	void	(*lock_fini)(struct dm_engine *e, struct dm_lock *l);
	/* May the engine free l's state (nothing owed, nothing awaited)? */
	bool	(*idle)(const struct dm_engine *e, const struct dm_lock *l);
	/* Highest sequence number / logical clock of this node (RA §7.2.3),
	 * and merge one learned from another node. */
	uint64_t (*clock_get)(const struct dm_engine *e);
	void	(*clock_merge)(struct dm_engine *e, uint64_t seq);
	/* Optional: a message of an algorithm kind, not for the roster lock,
	 * while this node is still JOINING (from: a slot valid during the call
	 * only).  The node holds nothing of the cluster's yet; it may answer
	 * what a member that already counts it needs to go on (an election
	 * must finish before that member can grant the roster lock our join
	 * waits for).  Returns 0 or -EPROTO. */
	int	(*joining_receive)(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m);
	/* Optional: dm_votes_held_back() just became false; called for
	 * every lock, so that votes held back may be given now. */
	void	(*votes_released)(struct dm_engine *e, struct dm_lock *l);
	/* Optional, for status output (dm_engine_visit_algorithm_state): the
	 * node's (describe_node) or l's (describe_lock) algorithm state as
	 * space-separated key=value words (values without spaces) in buf of
	 * size bytes, NUL-terminated.  Return the length (0: nothing to say). */
	size_t	(*describe_node)(const struct dm_engine *e, char *buf, size_t size);
	size_t	(*describe_lock)(const struct dm_engine *e, const struct dm_lock *l, char *buf,
		    size_t size);
};

/* Registry (dm_algorithm_registry.c): NULL if unknown. */
const struct dm_algorithm *dm_algorithm_find(const char *name);

/* --- Engine services for algorithms (dm_engine.c, dm_roster.c) --- */

void		*dm_lock_state(struct dm_lock *l);
const void	*dm_lock_state_const(const struct dm_lock *l);
const char	*dm_lock_name(const struct dm_lock *l);
void		*dm_algo_node_state(struct dm_engine *e);
const void	*dm_algo_node_state_const(const struct dm_engine *e);

/* Find a lock by name, creating its state if create (NULL on -ENOMEM). */
struct dm_lock	*dm_lock_get(struct dm_engine *e, const char *name, size_t len, bool create);

/* Permission obtained / request refused (-EBUSY) or lost. */
void		 dm_lock_permitted(struct dm_engine *e, struct dm_lock *l);
/* Take back a permission that no local client was granted yet (it waits
 * for a valid lease): the lock is requested again, and the algorithm asks
 * anew when it can.  False (nothing changes) if a client holds l, if l was
 * not permitted, or for the roster lock.  For an election's epoch cut: a
 * permission of an older epoch must not turn into a grant later. */
bool		 dm_lock_unpermit(struct dm_engine *e, struct dm_lock *l);
void		 dm_lock_refused(struct dm_engine *e, struct dm_lock *l, int error);

/* The lock's one algorithm timer. */
void		 dm_lock_timer_arm(struct dm_engine *e, struct dm_lock *l, dm_msec_t at);
void		 dm_lock_timer_stop(struct dm_engine *e, struct dm_lock *l);

/* Messages: fill the engine's scratch message (header fields, lock name,
 * token, epoch set) and send it; the same scratch may be sent to several
 * slots in turn. */
struct dm_msg	*dm_msg_begin(struct dm_engine *e, uint8_t kind, const struct dm_lock *l);
void		 dm_send(struct dm_engine *e, dm_slot_t to, const struct dm_msg *m);

/* Roster. */
dm_slot_t	 dm_roster_self(const struct dm_engine *e);
size_t		 dm_roster_size(const struct dm_engine *e);
/* Next member slot after 'after' (DM_SLOT_NONE to start), DM_SLOT_NONE at end. */
dm_slot_t	 dm_roster_next(const struct dm_engine *e, dm_slot_t after);
/* Compare two members by name (RA §7.1): <0, 0, >0.  Invariant under roster change. */
int		 dm_roster_compare(const struct dm_engine *e, dm_slot_t a, dm_slot_t b);
const char	*dm_roster_name(const struct dm_engine *e, dm_slot_t slot);
/* The incarnation this node lists for slot (its own for self; 0 unknown). */
uint64_t	 dm_roster_incarnation(const struct dm_engine *e, dm_slot_t slot);
/* Is this node a member (not joining, restarting to rejoin, or gone)? */
bool		 dm_roster_joined(const struct dm_engine *e);
/* Started as a member from the static peers after an earlier process of
 * this node had been one (its membership record): a restart, not the
 * cluster's first start. */
bool		 dm_record_restarted_static(const struct dm_engine *e);
/* Restarted from the static roster, and some member present then has not
 * yet answered our hello (dm_static_hello.c): an algorithm whose votes
 * outlive a request (Maekawa's) gives none, as the earlier process's may
 * still be held. */
bool		 dm_votes_held_back(const struct dm_engine *e);
/* The algorithm suspects slot of having failed (RA §7.4 second timeout). */
void		 dm_roster_suspect(struct dm_engine *e, dm_slot_t slot);
/* True while the member is leaving (RA §7.3) or being removed. */
bool		 dm_roster_departing(const struct dm_engine *e, dm_slot_t slot);

/* Leases (majority policy).  A request doubles as a lease heartbeat: put
 * dm_lease_round() in its serial; whoever answers echoes the serial with
 * arg = dm_lease_may_ack() ? 1 : 0, and the requester passes acks to
 * dm_lease_ack() before counting the answer.  So a grant needs no extra
 * round trip for its lease.  dm_lease_round() returns 0 when no lease is
 * needed. */
uint64_t	 dm_lease_round(struct dm_engine *e);
bool		 dm_lease_may_ack(const struct dm_engine *e, dm_slot_t to);
void		 dm_lease_ack(struct dm_engine *e, dm_slot_t from, uint64_t serial);
/* Algorithms with an election: this node accepted election epoch
 * (k, coord) at the epoch cut, as its coordinator when 'leading'.  From now
 * on it acknowledges no heartbeat of an older epoch (but its coordinator's
 * of the epoch it accepted before, skipping epochs of the same coordinator
 * that never started here: dm_lease.c).  Its heartbeats carry the new epoch at
 * once if it follows; if it leads, from dm_lease_election_led() on. */
void		 dm_lease_election_epoch(struct dm_engine *e, uint64_t k, const char *coord,
		    bool leading);
/* The epoch this node leads starts (every member accepted, fence over). */
void		 dm_lease_election_led(struct dm_engine *e);
/* The epoch this node follows starts (its coordinator said so). */
void		 dm_lease_election_followed(struct dm_engine *e);
/* Election epochs compare by counter, then coordinator priority (the lower
 * name outranks): >0 if (ka, ca) is newer than (kb, cb). */
int		 dm_lease_epoch_cmp(uint64_t ka, const char *ca, uint64_t kb, const char *cb);
/* How long a new coordinator waits, after the last member accepted its
 * epoch, before anything of the epoch is used: every lease renewed under
 * an older epoch has run out by then and its holders have stopped
 * ((L/(1-rho) + D_stop) * (1+rho), rounded up).  0 when there is no lease. */
dm_msec_t	 dm_lease_fence_ms(const struct dm_engine *e);

/* Time and configuration. */
dm_msec_t	 dm_now(const struct dm_engine *e);
dm_msec_t	 dm_request_timeout(const struct dm_engine *e);
dm_msec_t	 dm_probe_timeout(const struct dm_engine *e);
bool		 dm_broken(const struct dm_engine *e, uint32_t flag);
void		 dm_log(struct dm_engine *e, enum dm_log_level level, const char *text,
		    const struct dm_lock *l, dm_slot_t peer);
/* Config: the election ("bully" or "invitation") and the hierarchical
 * group size (0 = the algorithm's default). */
const char	*dm_election_name(const struct dm_engine *e);
/* For the describe hooks: append one key=value word (printf format) to buf
 * holding len bytes, with a separating space; returns the new length,
 * never past size - 1 (a word that does not fit is left out). */
size_t		 dm_describe_add(char *buf, size_t size, size_t len, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
uint32_t	 dm_group_size(const struct dm_engine *e);

/* Per-slot bit sets (uint8_t[DM_NODES_MAX / 8]): awaiting, voted, ... */
static inline bool
dm_bit_get(const uint8_t *bits, size_t i)
{
	return (bits[i / 8] >> (i % 8)) & 1u;
}

static inline void
dm_bit_set(uint8_t *bits, size_t i, bool v)
{
	if (v)
		bits[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		bits[i / 8] &= (uint8_t)~(1u << (i % 8));
}

#endif /* DM_ALGORITHM_H */
