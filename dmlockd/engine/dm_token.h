/*
 * dm_token.h: token-holder bookkeeping shared by the token algorithms
 * (algo_suzuki_kasami.c, algo_raymond.c, algo_naimi_trehel.c).
 *
 * Token safety by epochs (see NOTES-token.md):
 *  - Every token-algorithm message carries the epoch (serial = counter,
 *    node = coordinator name); a message of any other epoch is dropped, so
 *    a token of an older epoch is discarded wherever it reappears.
 *  - The initial state of every lock in an epoch is "the token is at the
 *    coordinator, nobody waits": a name without state costs nothing, and
 *    means exactly that.  An election (dm_election.h) is the epoch cut:
 *    each node reports the locks it is using (HELD); the coordinator holds
 *    those tokens "by proxy" until the user's RETURN, and regenerates every
 *    other token simply by starting the epoch.  Waiting nodes ask again.
 *  - The fencing counter travels in every message (msg.token, filled by the
 *    engine); regenerated tokens are fenced above the old ones by the roster
 *    epoch the engine bumps on a majority-confirmed removal.
 *  - A node waiting longer than T_fail for a token first asks every member
 *    whether it uses the lock (PROBE); an answer means a critical section
 *    is running and the wait is not overdue.  No answer within the probe
 *    timeout, or probes that keep finding other entries while we still
 *    wait, start an election when it is Normal (tokens lost in flight are
 *    regenerated; dm_token.c, "The waiter's watchdog").
 */
#ifndef DM_TOKEN_H
#define DM_TOKEN_H

#include "dm_election.h"

/* Token-algorithm message kinds (one range for the three algorithms). */
enum dm_token_kind {
	DM_TK_REQUEST = 96,	/* SK: seq = RN; NT: node = requester; Raymond: bare */
	DM_TK_TOKEN,		/* payload: algorithm's token contents */
	DM_TK_RETURN,		/* user -> coordinator: a token lent at the cut is free */
	DM_TK_PROBE,		/* overdue waiter -> members: who uses this lock? */
	DM_TK_PROBE_ANSWER,	/* the user -> the waiter: arg = its entry's id,
				 * | DM_TK_PROBE_KNOWN */
	DM_TK_KIND_MAX_,
};

/* PROBE_ANSWER's arg: the entry id in the low 32 bits, and this bit when
 * the user knows the prober's request (dm_token_ops.knows_waiter). */
#define DM_TK_PROBE_KNOWN	(UINT64_C(1) << 32)

/* Common per-lock state: the first member of each algorithm's lock state. */
struct dm_tlock {
	struct dm_tlock	*next, *prev;	/* node's active list */
	struct dm_lock	*lock;
	uint64_t	 gen;		/* node cut generation the state belongs to */
	bool		 linked;	/* on the active list (wanting, in_cs or proxy) */
	bool		 wanting;	/* the engine asked and was not yet permitted */
	bool		 in_cs;		/* permitted: the node uses the lock */
	bool		 proxy;		/* coordinator: token lent to a user of an old epoch */
	bool		 old_user;	/* in use across a cut: RETURN to the coordinator */
	uint8_t		 overdue;	/* epochs this wait started as overdue (dm_token.c) */
	bool		 try_once;	/* the request is try-once: it never waits */
	bool		 probing;	/* a PROBE is out: the timer is its timeout */
	uint8_t		 users_seen;	/* other entries a probe found while we waited */
	dm_slot_t	 proxy_for;
	dm_slot_t	 user_from;	/* the last entry a probe found: its node, */
	uint32_t	 user_id;	/* and its id there (0: none yet) */
	uint32_t	 entry_id;	/* in_cs: this entry's id at this node */
};

struct dm_token_ops {
	/* Reset the algorithm part to the epoch's initial state. */
	void	(*reset)(struct dm_engine *e, struct dm_lock *l, bool token_here);
	/* Ask for the token in the current epoch (the node is Normal). */
	void	(*ask)(struct dm_engine *e, struct dm_lock *l);
	/* The token is free again here (CS exit, RETURN, withdrawal with the
	 * token present): pass it on per the algorithm. */
	void	(*pass)(struct dm_engine *e, struct dm_lock *l);
	/* Does another node wait for the token (no local handoff then)? */
	bool	(*others_waiting)(const struct dm_engine *e, const struct dm_lock *l);
	/* Is the algorithm part in the epoch's initial state? */
	bool	(*initial)(const struct dm_engine *e, const struct dm_lock *l);
	/* Optional, for status: the algorithm's words about l's token
	 * (dm_describe_add), appended to buf of len bytes; the new length. */
	size_t	(*describe)(const struct dm_engine *e, const struct dm_lock *l, char *buf,
		    size_t size, size_t len);
	/* Optional: member slot is being removed. */
	void	(*forget)(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot);
	/* Optional, both or neither (dm_token_watchdog.c): what names our
	 * current request in a PROBE (nonzero), and, at the lock's user,
	 * whether that request of 'from' is known here so that the token
	 * will reach it without an epoch (its PROBE_ANSWER says so). */
	uint64_t (*probe_stamp)(const struct dm_engine *e, const struct dm_lock *l);
	bool	(*knows_waiter)(const struct dm_engine *e, const struct dm_lock *l,
		    dm_slot_t from, uint64_t stamp);
	/* The algorithm's REQUEST and TOKEN of the current epoch (l has its
	 * common state for this epoch).  Return 0 or -EPROTO. */
	int	(*on_request)(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
	int	(*on_token)(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
};

/* Node state of a token algorithm: first member of its node state. */
struct dm_token_node {
	struct dm_election el;
	const struct dm_token_ops *ops;
	struct dm_tlock	*active;
	uint64_t	 gen;		/* cut generation */
	uint64_t	 lent, returned;
	uint32_t	 entries;	/* entry ids (dm_tlock.entry_id) */
	uint64_t	 probes, probes_busy;	/* waiter probes sent, answered "in use" */
};

struct dm_token_node *dm_token_node(struct dm_engine *e);
const struct dm_token_node *dm_token_node_const(const struct dm_engine *e);
/* The common state of l, reset first if it belongs to an older epoch. */
struct dm_tlock	*dm_token_lock(struct dm_engine *e, struct dm_lock *l);
bool		 dm_token_i_coordinate(const struct dm_engine *e);
dm_slot_t	 dm_token_coordinator(const struct dm_engine *e);
/* Begin an algorithm message stamped with the epoch. */
struct dm_msg	*dm_token_msg(struct dm_engine *e, uint8_t kind, const struct dm_lock *l);
/* Begin a message for a lock named by a received message (no state here). */
struct dm_msg	*dm_token_msg_name(struct dm_engine *e, uint8_t kind, const struct dm_msg *about);
/* Enter the critical section now (token here and free). */
void		 dm_token_enter(struct dm_engine *e, struct dm_lock *l);
/* The token just arrived here: enter if we still want it, else pass it on
 * (we withdrew meanwhile). */
void		 dm_token_arrived(struct dm_engine *e, struct dm_lock *l);

/* The waiter's watchdog (dm_token_watchdog.c): arm it for a wait (or stop
 * it when there is none), start a wait afresh, forget the entries probes
 * found, the timer of a waiting lock fired, and the probe's two messages
 * of the current epoch. */
void		 dm_token_watchdog(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t);
void		 dm_token_wait_afresh(struct dm_tlock *t);
void		 dm_token_forget_users(struct dm_tlock *t);
void		 dm_token_watchdog_fired(struct dm_engine *e, struct dm_lock *l,
		    struct dm_tlock *t);
int		 dm_token_on_probe(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
int		 dm_token_on_probe_answer(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);

/* The struct dm_algorithm functions, shared by the three algorithms. */
int		 dm_token_node_init(struct dm_engine *e, void *node_state,
		    const struct dm_token_ops *ops);
int		 dm_token_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode,
		    bool try_once);
void		 dm_token_withdraw(struct dm_engine *e, struct dm_lock *l);
void		 dm_token_release(struct dm_engine *e, struct dm_lock *l);
bool		 dm_token_may_handoff(const struct dm_engine *e, const struct dm_lock *l,
		    enum dm_mode mode);
int		 dm_token_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
void		 dm_token_timer(struct dm_engine *e, struct dm_lock *l);
void		 dm_token_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot);
bool		 dm_token_idle(const struct dm_engine *e, const struct dm_lock *l);
uint64_t	 dm_token_clock_get(const struct dm_engine *e);
void		 dm_token_clock_merge(struct dm_engine *e, uint64_t seq);
int		 dm_token_joining_receive(struct dm_engine *e, dm_slot_t from,
		    const struct dm_msg *m);
/* Status (dm_algorithm.h describe hooks): the node's election; a lock's
 * use here (in_use, wanted, lent_to=NODE) and the algorithm's words. */
size_t		 dm_token_describe_node(const struct dm_engine *e, char *buf, size_t size);
size_t		 dm_token_describe_lock(const struct dm_engine *e, const struct dm_lock *l,
		    char *buf, size_t size);

/*
 * Define a token algorithm: its struct dm_algorithm 'sym' (named
 * algo_name) runs the dm_token_* functions above over 'ops'; lock_type is
 * its per-lock state, whose first member is a struct dm_tlock.  Node
 * state is a struct dm_token_node.  E.g.
 *	DM_TOKEN_ALGORITHM(dm_algo_raymond, "raymond", struct ry_lock, ry_ops);
 */
#define DM_TOKEN_ALGORITHM(sym, algo_name, lock_type, ops)			\
	static int								\
	sym##_node_init(struct dm_engine *e, void *node_state)		\
	{									\
		return dm_token_node_init(e, node_state, &(ops));		\
	}									\
	const struct dm_algorithm sym = {					\
		.name = algo_name,						\
		.caps = DM_CAP_SURVIVES_FAILURE,				\
		.lock_state_size = sizeof(lock_type),				\
		.node_state_size = sizeof(struct dm_token_node),		\
		.node_init = sym##_node_init,					\
		.request = dm_token_request,					\
		.withdraw = dm_token_withdraw,					\
		.release = dm_token_release,					\
		.may_handoff = dm_token_may_handoff,				\
		.receive = dm_token_receive,					\
		.timer = dm_token_timer,					\
		.peer_gone = dm_token_peer_gone,				\
		.idle = dm_token_idle,						\
		.clock_get = dm_token_clock_get,				\
		.clock_merge = dm_token_clock_merge,				\
		.joining_receive = dm_token_joining_receive,			\
		.describe_node = dm_token_describe_node,			\
		.describe_lock = dm_token_describe_lock,			\
	}

#endif /* DM_TOKEN_H */
