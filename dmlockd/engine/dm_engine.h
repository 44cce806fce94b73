/*
 * dm_engine.h: the public face of the protocol engine, the only header the
 * I/O shells (dmlockd/main.c, the peer transport, the local server) and the
 * simulator include.
 *
 * The engine is a deterministic state machine.  It never reads a clock,
 * opens a socket, allocates a libevent object or calls random(): everything
 * comes in as a struct dm_event (with the current time) and goes out through
 * the caller's effect callback as a struct dm_effect.  Given the same config,
 * seed and events, it produces the same effects, byte for byte.
 *
 * Ownership: every pointer inside an event is borrowed for the call; every
 * pointer inside an effect is valid only until the effect callback returns.
 * The effect callback must not call back into the engine.
 */
#ifndef DM_ENGINE_H
#define DM_ENGINE_H

#include "dm_types.h"

struct dm_engine;
struct dm_msg;		/* typed peer message, see dm_msg.h */

enum dm_failure_policy {
	DM_FAILURE_MAJORITY = 0,	/* removal needs a strict majority; leases */
	DM_FAILURE_PAPER = 1,		/* RA §7.4 as written: unsafe under partition */
};

struct dm_peer_spec {
	const char	*name;		/* roster name, also its TLS certificate name */
	const char	*address;	/* opaque to the engine: "host:port" */
};

/*
 * What a node's earlier processes agreed to about membership, kept on disk
 * (DM_FX_PERSIST_RECORD) so that a restarted process, which remembers
 * nothing else, never helps a node that its earlier process saw removed
 * rebuild a cluster beside the one that removed it (dm_membership_vote.c,
 * "the membership record"):
 *  - the last roster it applied as an active member: its label (the epoch
 *    of its newest removal) and its member names;
 *  - the removals it agreed to as a voter whose outcome that roster does
 *    not show yet: the subject's name and the ballot epoch; and, the same
 *    way, the members that never acknowledged its graceful leave, at a
 *    label above every one it knew of them (they never applied the roster
 *    it left behind);
 *  - the self-vote promise: a process that voted, as a restarted process,
 *    that a prober remove its own earlier incarnation keeps the prober's
 *    roster label and name; its later processes vote on no other node's
 *    slot for another prober whose roster is not newer than that
 *    (dm_record_self_vote());
 *  - the dead incarnations: for each node name, the last incarnation
 *    this node saw removed from its roster (or leave it); its later
 *    processes give that incarnation no removal vote, whatever roster
 *    label it shows (dm_record_dead()).
 */
struct dm_agreed_removal {
	const char	*name;
	uint64_t	 ballot;
};

/* A node incarnation this node saw removed (or leave): dead for good. */
struct dm_dead_incarnation {
	const char	*name;
	uint64_t	 incarnation;
};

struct dm_member_record {
	uint64_t	 label;			/* 0 with no names: no roster */
	const char *const *names;
	size_t		 n_names;
	const struct dm_agreed_removal *removals;
	size_t		 n_removals;
	const char	*promise_prober;	/* NULL: no self-vote promise */
	uint64_t	 promise_label;		/* the prober's roster label */
	const struct dm_dead_incarnation *dead;
	size_t		 n_dead;
};

struct dm_engine_config {
	const char	*self;			/* this node's roster name */
	const char	*self_address;		/* how peers reach this node */
	const char	*cluster;		/* cluster name, checked at handshake */
	const char	*algorithm;		/* registry name, "ricart-agrawala" */
	enum dm_failure_policy failure_policy;
	uint64_t	 incarnation;		/* new on every daemon start */
	uint64_t	 seed;			/* the engine's only randomness */

	/* Initial roster, self included or not (it is added).  Empty with no
	 * sponsor: a one-node cluster. */
	const struct dm_peer_spec *peers;
	size_t		 n_peers;
	/* Join an existing cluster through this member instead (RA §7.2). */
	const struct dm_peer_spec *sponsor;

	/* Timeouts in ms; 0 selects the documented default. */
	dm_msec_t	 request_timeout_ms;	/* RA §7.4 first timeout */
	dm_msec_t	 probe_timeout_ms;	/* RA §7.4 second timeout */
	dm_msec_t	 lease_ms;		/* holder lease L (majority policy) */
	dm_msec_t	 heartbeat_ms;		/* lease renewal period */
	dm_msec_t	 restart_interval_ms;	/* RA §7.2.1 */
	/* Timing inequality inputs (majority policy), checked by dm_engine_new():
	 *   L/(1-rho) + D_stop < (T_fail + D_lock)/(1+rho),
	 * L = lease_ms, T_fail = request_timeout_ms + probe_timeout_ms,
	 * D_stop = stop_ms, D_lock = lock_delay_ms, rho = clock_drift_ppm/1e6. */
	dm_msec_t	 stop_ms;		/* time to stop a client's work (default 1000) */
	dm_msec_t	 lock_delay_ms;		/* extra wait before using a removal (default 0) */
	uint32_t	 clock_drift_ppm;	/* rho in parts per million (default 10000) */

	/* Deliberate bugs for the simulator's negative controls (DM_BREAK_*);
	 * always 0 in the daemon. */
	uint32_t	 test_breakage;

	/* Election for the algorithms that use one (dm_election.h): "bully"
	 * (NULL or "": the default) or "invitation". */
	const char	*election;
	/* hierarchical: nodes per group (0 selects 4). */
	uint32_t	 group_size;
	/* The last DM_FX_PERSIST floor of an earlier process on this node (0:
	 * none): the engine starts in that roster epoch, so every token of this
	 * process is above floor << 40, above every token an earlier process
	 * granted or saw: fencing tokens never go backwards across a restart,
	 * even of the whole cluster.  -ERANGE from 2^23 up. */
	uint64_t	 epoch_floor;
	/* The last DM_FX_PERSIST_RECORD of an earlier process on this node
	 * (all zero: none), its membership record: see struct
	 * dm_member_record.  -EINVAL for an invalid name, -E2BIG for more
	 * than DM_NODES_MAX names or removals. */
	struct dm_member_record last_record;
};

/* Negative controls: each makes the engine wrong in one known way so a test
 * can show that the simulator's checkers catch it. */
#define DM_BREAK_NEVER_DEFER		(1u << 0) /* REPLY at once, never defer */
#define DM_BREAK_PROBE_BARE_REPLY	(1u << 1) /* answer every ARE_YOU_THERE with a bare REPLY */
#define DM_BREAK_STALE_TOKEN		(1u << 2) /* don't carry tokens in REPLY */
#define DM_BREAK_NO_LEASE		(1u << 3) /* holders never lose the lock on lease expiry */
#define DM_BREAK_GREEDY_HANDOFF		(1u << 4) /* RA: hand off locally even past a deferred request */
#define DM_BREAK_STALE_ROSTER		(1u << 5) /* a restarted node helps any prober rebuild a stale
						   * roster: no epoch, label or record refusals */
#define DM_BREAK_LATE_GRANT		(1u << 6) /* grant on any valid lease, however little of it
						   * is left (dm_lease_grantable()) */

enum dm_event_type {
	DM_EV_TICK = 1,		/* only time passed: a deadline may be due */
	DM_EV_ACQUIRE,		/* a local client asks for a lock */
	DM_EV_RELEASE,		/* a local holder leaves its critical section (-EINVAL if
				 * the handle is still waiting); no effect for the handle */
	DM_EV_CANCEL,		/* a local client withdraws (disconnect): waiting or holding;
				 * no effect for the handle */
	DM_EV_RECEIVE,		/* a decoded message from a peer */
	DM_EV_LINK_UP,		/* the transport session to a peer is established */
	DM_EV_LINK_DOWN,	/* ...is broken (the session may resume later) */
	DM_EV_PEER_RESTARTED,	/* a peer came back with a new incarnation */
	DM_EV_LEAVE,		/* leave the cluster gracefully (RA §7.3) */
	DM_EV_REMOVE_NODE,	/* administrative removal of a (dead) node */
	DM_EV_JOIN,		/* a node alone in its roster joins a cluster through
				 * u.join's sponsor (RA §7.2), as if it had been started
				 * with that sponsor: 0, -EINVAL bad name or address,
				 * -EISCONN already in a cluster (or joining, leaving),
				 * -EBUSY a local lock is held or waited for */
};

/* Wait bounds for DM_EV_ACQUIRE. */
#define DM_WAIT_TRY	 ((dm_msec_t)0)		/* fail at once with -EBUSY */
#define DM_WAIT_FOREVER	 UINT64_MAX

struct dm_event {
	enum dm_event_type type;
	dm_msec_t	   now;
	union {
		struct {
			uint64_t	 handle;	/* chosen by the caller, unique */
			const char	*lock;
			size_t		 lock_len;
			enum dm_mode	 mode;
			dm_msec_t	 wait_ms;	/* DM_WAIT_TRY, ms, DM_WAIT_FOREVER */
		} acquire;
		struct {
			uint64_t	 handle;
		} release, cancel;
		struct {
			const char		*peer;
			const struct dm_msg	*msg;
		} receive;
		struct {
			const char	*peer;
		} link, restarted, remove;
		struct {
			const char	*sponsor;	/* roster name */
			const char	*address;	/* "host:port" */
		} join;
	} u;
};

enum dm_effect_type {
	DM_FX_SEND = 1,		/* send msg to peer over its FIFO link; the peer may be
				 * outside the roster (JOIN to the sponsor, roster to a
				 * joiner, REJOIN to a stranger) */
	DM_FX_GRANT,		/* client handle now holds the lock */
	DM_FX_DENY,		/* client handle's request ended unsuccessfully */
	DM_FX_EXTEND,		/* client handle's grant deadline moved */
	DM_FX_LOST,		/* client handle no longer holds the lock */
	DM_FX_PEER_ADD,		/* keep a link to this peer (roster grew) */
	DM_FX_PEER_REMOVE,	/* drop the link to this peer (roster shrank) */
	DM_FX_READY,		/* joined (or standalone): serve clients */
	DM_FX_LEFT,		/* graceful leave finished: the daemon may exit */
	DM_FX_LOG,		/* something worth telling the operator */
	DM_FX_PERSIST,		/* store u.persist.floor durably before handling the
				 * effects that follow; pass it back as
				 * dm_engine_config.epoch_floor at the next start */
	DM_FX_PERSIST_RECORD,	/* store u.record durably (replacing the last one)
				 * before handling the effects that follow; pass it
				 * back as dm_engine_config.last_record */
};

enum dm_log_level {
	DM_LOG_ERR = 3,
	DM_LOG_WARNING = 4,
	DM_LOG_NOTICE = 5,
	DM_LOG_INFO = 6,
	DM_LOG_DEBUG = 7,
};

struct dm_effect {
	enum dm_effect_type type;
	union {
		struct {
			const char		*peer;
			const struct dm_msg	*msg;
		} send;
		struct {
			uint64_t	 handle;
			uint64_t	 token;		/* fencing token, strictly increasing per name */
			dm_msec_t	 deadline;	/* CLOCK_BOOTTIME ms; 0 = none */
		} grant;
		struct {
			uint64_t	 handle;
			int		 error;		/* -EBUSY try refused, -ETIMEDOUT wait
							 * bound, -EINVAL bad name/mode/duplicate
							 * handle/reserved ".dmlock/" name,
							 * -EOPNOTSUPP shared unsupported, -EAGAIN
							 * not ready (joining, leaving), -ESHUTDOWN
							 * leaving or removed, -ENOMEM */
		} deny;
		struct {
			uint64_t	 handle;
			dm_msec_t	 deadline;
		} extend;
		struct {
			uint64_t	 handle;
			int		 reason;	/* -ETIMEDOUT lease ran out, -ESHUTDOWN
							 * leaving or removed from the roster */
		} lost;
		struct {
			const char	*name;
			const char	*address;
		} peer;
		struct {
			enum dm_log_level level;
			const char	*text;
			const char	*lock;		/* NULL if none */
			const char	*peer;		/* NULL if none */
			uint64_t	 token;		/* 0 if none */
		} log;
		struct {
			uint64_t	 floor;		/* 1 + the highest epoch this node
							 * has granted in or seen */
		} persist;
		struct dm_member_record record;	/* borrowed for the call */
	} u;
};

typedef void dm_effect_fn(void *ctx, const struct dm_effect *fx);

/*
 * Create an engine.  Returns 0, -EINVAL for a bad config (unknown
 * algorithm, invalid name), or -ENOMEM.  *ret is untouched on failure.
 * Startup effects (PEER_ADD for the initial roster, READY when standalone)
 * come out of the first dm_engine_step().
 */
int dm_engine_new(const struct dm_engine_config *config, struct dm_engine **ret);
struct dm_engine *dm_engine_free(struct dm_engine *engine);

/*
 * Feed one event.  Effects are delivered synchronously through emit(ctx, fx)
 * before this returns.  Returns 0, or -EPROTO for a malformed or unexpected
 * peer message (the shell logs it and may reset that link), -EINVAL for a
 * bad local request (also answered by a DENY effect), -ENOENT for an
 * unknown handle.  Events must have non-decreasing "now".
 */
int dm_engine_step(struct dm_engine *engine, const struct dm_event *event,
    dm_effect_fn *emit, void *ctx);

/* The earliest time at which a DM_EV_TICK is due, or 0 for none. */
dm_msec_t dm_engine_next_deadline(const struct dm_engine *engine);

/* Read-only views for status output and tests. */
struct dm_engine_stats {
	const char	*algorithm;
	size_t		 roster_size;
	size_t		 locks_active;		/* names with engine state */
	size_t		 locks_held_local;	/* grants to local clients */
	size_t		 waiters_local;
	uint64_t	 epoch;			/* roster epoch */
	uint64_t	 roster_label;		/* the epoch of the roster's newest removal */
	bool		 ready;
	bool		 static_member;		/* started from the static roster (or the
						 * record), not joined through a sponsor since */
};
void dm_engine_get_stats(const struct dm_engine *engine, struct dm_engine_stats *ret);

typedef void dm_roster_visit_fn(void *ctx, const char *name, const char *address,
    bool is_self, bool link_up);
void dm_engine_visit_roster(const struct dm_engine *engine, dm_roster_visit_fn *fn, void *ctx);

typedef void dm_lock_visit_fn(void *ctx, const char *lock, uint64_t handle,
    enum dm_mode mode, bool granted, uint64_t token, dm_msec_t since);
void dm_engine_visit_local_locks(const struct dm_engine *engine, dm_lock_visit_fn *fn, void *ctx);

/* The algorithm's own view, for status output: fn(ctx, NULL, text) for
 * the node (election, coordinator, epoch), then fn(ctx, lock, text) for
 * each lock with state on this node (where its token is, ...).  text is
 * space-separated key=value words, at most DM_DESCRIBE_WORDS_MAX of them,
 * values without spaces.  Algorithms with nothing to say produce nothing. */
#define DM_DESCRIBE_MAX		256
#define DM_DESCRIBE_WORDS_MAX	10
typedef void dm_algo_state_visit_fn(void *ctx, const char *lock, const char *text);
void dm_engine_visit_algorithm_state(const struct dm_engine *engine,
    dm_algo_state_visit_fn *fn, void *ctx);

/* What the configured algorithm can do (same bits as dm_algorithm.h's
 * DM_CAP_*), for status output. */
#define DM_ENGINE_CAP_SHARED		(1u << 0)	/* shared (reader) mode */
#define DM_ENGINE_CAP_NEEDS_FIFO	(1u << 1)	/* correct only over FIFO links */
#define DM_ENGINE_CAP_SURVIVES_FAILURE	(1u << 2)	/* recovers through the roster rules */
uint32_t dm_engine_capabilities(const struct dm_engine *engine);

/* Names of the registered algorithms, NULL-terminated. */
const char *const *dm_algorithm_names(void);

#endif /* DM_ENGINE_H */
