/*
 * dm_engine_private.h: the engine's internal structures, shared by the
 * engine's own files (dm_engine.c, dm_local.c, dm_roster.c, dm_table.c,
 * dm_timer.c).  Algorithms use dm_algorithm.h instead.
 */
#ifndef DM_ENGINE_PRIVATE_H
#define DM_ENGINE_PRIVATE_H

#include <stdalign.h>

#include "dm_algorithm.h"
#include "dm_engine.h"
#include "dm_msg.h"

/* Fencing tokens: roster epoch in the high bits, a counter below. */
#define DM_TOKEN_EPOCH_SHIFT	40
/* Highest fencing token the engine believes from a peer (dm_token_observe). */
#define DM_TOKEN_LIMIT		(UINT64_C(1) << 63)

/* Reserved lock used for roster changes (RA §7.2.2); clients may not name
 * anything under DM_RESERVED_PREFIX. */
#define DM_RESERVED_PREFIX	".dmlock/"
#define DM_ROSTER_LOCK		".dmlock/roster"

/* Documented defaults (NOTES.md). */
#define DM_DEFAULT_REQUEST_TIMEOUT_MS	5000
#define DM_DEFAULT_PROBE_TIMEOUT_MS	2000
#define DM_DEFAULT_LEASE_MS		3000
#define DM_DEFAULT_HEARTBEAT_MS		500
#define DM_DEFAULT_RESTART_INTERVAL_MS	10000
#define DM_DEFAULT_STOP_MS		1000
#define DM_DEFAULT_DRIFT_PPM		10000


enum dm_timer_kind {
	DM_TIMER_WAIT = 1,	/* a local waiter's wait bound (struct dm_client) */
	DM_TIMER_LOCK,		/* the algorithm's per-lock timer (struct dm_lock) */
	DM_TIMER_HEARTBEAT,	/* engine: send the next lease heartbeat */
	DM_TIMER_LEASE,		/* engine: the lease runs out */
	DM_TIMER_ROSTER,	/* engine: join/leave/vote retries, restart interval */
	DM_TIMER_VOTE,		/* engine: lock delay after a majority removal */
	DM_TIMER_RESTART,	/* engine: a restarted member's old incarnation is erased */
	DM_TIMER_HELLO,		/* engine: a static restart's hello again (dm_static_hello.c) */
};

struct dm_timer {
	dm_msec_t	at;
	uint32_t	heap_index;	/* 1-based position in the heap; 0 = not armed */
	uint8_t		kind;		/* enum dm_timer_kind */
};

/* A local client's request or grant. */
struct dm_client {
	struct dm_client *hnext;	/* handle hash chain */
	struct dm_client *next, *prev;	/* lock's holder list or waiter FIFO */
	struct dm_lock	*lock;
	uint64_t	 handle;
	uint64_t	 token;
	dm_msec_t	 since;
	struct dm_timer	 wait;
	uint8_t		 mode;
	bool		 granted;
	bool		 try_once;
};

/* The node's cluster-level state for one lock. */
enum dm_phase {
	DM_PHASE_IDLE = 0,
	DM_PHASE_REQUESTING,
	DM_PHASE_HOLDING,
};

struct dm_client_list {
	struct dm_client *head, *tail;
	uint32_t	 n;
};

struct dm_lock {
	struct dm_lock	*hnext;
	uint32_t	 hash;
	uint8_t		 name_len;
	uint8_t		 phase;		/* enum dm_phase */
	uint8_t		 node_mode;	/* mode requested/held by this node */
	bool		 try_request;	/* the pending request is try-once */
	bool		 lost;		/* being torn down: no local handoff */
	bool		 fresh;		/* permission just obtained: grant the head */
	bool		 in_reconcile;
	bool		 free_pending;	/* on the engine's free list */
	struct dm_lock	*fnext;		/* free list: checked and freed after the step */
	struct dm_client_list holders;
	struct dm_client_list waiters;
	struct dm_timer	 timer;		/* the algorithm's */
	char		 name[DM_LOCK_NAME_MAX + 1];
	alignas(8) unsigned char algo_state[];
};

/* Roster entry (the paper's NAMES table). */
struct dm_node {
	bool		 used;
	uint32_t	 name_hash;	/* dm_hash_bytes(name): dm_roster_find looks at it first */
	bool		 link_up;
	bool		 departing;	/* LEAVE received / removal in progress */
	bool		 condemned;	/* restarted: old incarnation gets no more lease acks */
	/* Joining only: the entry came from the sponsor's roster snapshot, or
	 * from a NODE_ADD that may be newer than the snapshot. */
	bool		 from_snapshot;
	bool		 via_add;
	uint64_t	 via_add_epoch;	/* the roster epoch of that NODE_ADD */
	/* The sponsor whose NODE_ADD (serial) we took last for this entry:
	 * only it may cancel the add (NODE_FAILED arg 1). */
	dm_slot_t	 added_by;
	uint64_t	 added_serial;
	/* Another sponsor's NODE_ADD of this incarnation was taken too: no
	 * single sponsor's cancel erases the entry (one of the adds may have
	 * finished the join). */
	bool		 added_twice;
	/* This entry replaced another incarnation of the name (a NODE_ADD,
	 * dm_roster_replace): a cancel of that add puts the replaced one
	 * back rather than removing the name (0: it replaced nothing). */
	uint64_t	 replaced_incarnation;
	/* The removal vote of this member (as prober) that we agreed to: the
	 * subject gets no lease acks from us until the prober aborts the vote,
	 * the subject is erased, or the prober leaves the roster. */
	dm_slot_t	 joined_vote_subject;
	uint64_t	 joined_vote_serial;
	dm_msec_t	 joined_vote_at;	/* when we agreed (we let that vote finish) */
	/* We agreed to a prober's vote to remove this entry, and the prober
	 * left our roster before its outcome reached us, or its announcement
	 * came too late to apply: the removal may stand elsewhere, so no more
	 * lease acks for this incarnation; we remove it ourselves
	 * (dm_membership_vote_orphaned). */
	bool		 vote_orphaned;
	/* When our last removal vote on this entry began: of the entries
	 * waiting for one, the least recently voted on goes first. */
	dm_msec_t	 vote_started_at;
	uint8_t		 name_len;
	char		 name[DM_NODE_NAME_MAX + 1];
	char		 address[DM_ADDRESS_MAX + 1];
	uint64_t	 incarnation;
	dm_msec_t	 last_heard;	/* last message received from it */
	dm_msec_t	 remove_at;	/* restarted: erase the old incarnation then (0 = no) */
	/* It answered our last lease heartbeat with a refusal: it holds us
	 * condemned (dm_lease.c, "refused by a majority"). */
	bool		 refuses_our_lease;
	/* When an acker of our lease last named it as a pending removal
	 * (0: never): its ack does not count, so it does not count toward a
	 * reachable majority either (dm_lease.c, "refused by a majority"). */
	dm_msec_t	 named_pending_at;
	/* The roster label of its latest message (its roster_epoch then):
	 * dm_lease.c acknowledges its lease only if it is not behind ours. */
	uint64_t	 roster_epoch;
};

/* Lease rounds kept for acknowledgements (majority policy): at least
 * this many, and enough for every round one lease can open
 * (dm_lease_ring_size()). */
#define DM_HEARTBEATS_MIN	16
/* An election epoch: counter, coordinator name. */
struct dm_el_epoch {
	uint64_t	 k;
	char		 coord[DM_NODE_NAME_MAX + 1];
};

struct dm_heartbeat {
	uint64_t	serial;
	uint64_t	epoch;		/* our epoch when the round went out */
	uint64_t	label;		/* our roster label then (a refusal of an older one is stale) */
	dm_msec_t	sent_at;
	uint16_t	acks;
	uint8_t		acked[DM_NODES_MAX / 8];
	/* Members an acker named as pending removals: their acks do not
	 * count in this round (dm_lease.c, "pending removals"). */
	uint8_t		excluded[DM_NODES_MAX / 8];
};

enum dm_membership {
	DM_MEMBER_STANDALONE_START = 0,	/* before the first step */
	DM_MEMBER_JOINING,		/* waiting for a sponsor (RA §7.2) */
	DM_MEMBER_SYNCING,		/* roster known; collecting sequence numbers */
	DM_MEMBER_ACTIVE,
	DM_MEMBER_LEAVING,		/* LEAVE sent, awaiting acks (RA §7.3) */
	DM_MEMBER_LEFT,
	DM_MEMBER_RESTARTING,		/* told to rejoin: waiting the restart interval */
};

struct dm_engine {
	const struct dm_algorithm *algo;
	void		*algo_node;

	/* Configuration (copied). */
	char		 cluster[DM_NODE_NAME_MAX + 1];
	enum dm_failure_policy policy;
	uint64_t	 incarnation;
	uint64_t	 seed;
	dm_msec_t	 request_timeout_ms, probe_timeout_ms, lease_ms, heartbeat_ms;
	dm_msec_t	 restart_interval_ms, stop_ms, lock_delay_ms;
	uint32_t	 drift_ppm;
	uint32_t	 breakage;
	char		 sponsor[DM_NODE_NAME_MAX + 1];	/* the one asked now */
	/* Joining: the sponsor whose snapshot the from_snapshot entries came
	 * from (a roster is one sponsor's, never a mixture). */
	char		 snapshot_from[DM_NODE_NAME_MAX + 1];
	char		 sponsor_address[DM_ADDRESS_MAX + 1];
	/* Sponsors to try in turn (the config's, or the old roster when told to
	 * rejoin), so two removed nodes never wait on each other forever. */
	struct dm_sponsor {
		char	name[DM_NODE_NAME_MAX + 1];
		char	address[DM_ADDRESS_MAX + 1];
	}		*sponsors;
	size_t		 n_sponsors, sponsor_next;
	/* Rings of DM_NODES_MAX names (graceful leave, dm_membership_leave.c).
	 * departed: joining, members whose LEAVE came before our roster did
	 * (the sponsor's snapshot may still list them), erased at ROSTER_END.
	 * refused: joiners we refused while sponsoring another, told to ask
	 * another member when we leave. */
	struct dm_noted_node {
		char		name[DM_NODE_NAME_MAX + 1];
		uint64_t	incarnation;
	}		*departed, *refused;
	size_t		 n_departed, departed_next, n_refused, refused_next;

	/* The current step. */
	dm_msec_t	 now;
	/* Last time a step arrived more than T_fail after a due timer: this
	 * node was frozen (or starved) and may have been removed meanwhile. */
	dm_msec_t	 resumed_at;
	/* When this incarnation began (first step, or an internal restart):
	 * every lease ack of an earlier incarnation was sent before then. */
	dm_msec_t	 incarnation_since;
	dm_effect_fn	*emit;
	void		*emit_ctx;
	bool		 started;
	int		 step_error;

	/* Roster. */
	struct dm_node	 nodes[DM_NODES_MAX];
	size_t		 n_nodes;
	size_t		 slot_limit;	/* above every slot ever used: scans stop here */
	uint64_t	 roster_digest;	/* dm_roster_digest(), kept by roster_add() and the erases */
	dm_slot_t	 self;
	uint64_t	 epoch;
	uint64_t	 join_epoch;	/* epoch when we (re)joined: older removals are stale */
	/* The roster label: the epoch of the newest removal this roster has
	 * applied (0: the configured static roster), or the sponsor's label
	 * for a joiner's snapshot.  Unlike epoch, never learnt from gossip.
	 * A label names one roster: a removal's label is taken only over the
	 * announcer's names (dm_membership_failure.c).  A member acknowledges
	 * no lease of a node whose label is behind its own (dm_lease.c,
	 * "stale rosters"). */
	uint64_t	 roster_epoch;
	/* The newest label of a removal applied, taken or not (>= the label).
	 * Above the label our roster is unsettled -- it is no roster any
	 * label names -- and counts no lease acks until a member's digest
	 * levels it (lease_label_catch_up()). */
	uint64_t	 roster_applied;
	enum dm_membership membership;
	struct dm_timer	 roster_timer;
	/* Joining: sequence-number answers still awaited. */
	uint8_t		 seq_waiting[DM_NODES_MAX / 8];
	uint16_t	 seq_waiting_n;
	/* Sponsor side of a join, and leaving: acks awaited. */
	char		 joiner[DM_NODE_NAME_MAX + 1];
	char		 joiner_address[DM_ADDRESS_MAX + 1];
	uint64_t	 joiner_incarnation;
	uint64_t	 join_serial;
	uint8_t		 ack_waiting[DM_NODES_MAX / 8];
	uint16_t	 ack_waiting_n;
	bool		 sponsoring;	/* roster lock requested for a joiner */
	uint16_t	 level_retries;	/* a join's retries waiting for us to be level */
	uint64_t	 add_acked_label;	/* the highest label our NODE_ADD was acked from */
	bool		 add_out;	/* our NODE_ADD for this join went out */
	/* Started from the static roster, not joined through a sponsor since:
	 * every message says so (DM_MSG_F_STATIC), and a member that lists
	 * another incarnation under our name tells us to rejoin. */
	bool		 static_member;
	/* Configured with static peers, but the membership record shows a
	 * cluster that went on (dm_record_start_kind()): the peers are
	 * sponsors to join through, not members (join_from_peers), or only
	 * the recorded ones are members (start_recorded). */
	bool		 join_from_peers;
	bool		 start_recorded;
	/* Started a member from the static peers (or the record) after an
	 * earlier process had been one: dm_record_restarted_static(). */
	bool		 static_restart;
	/* A static restart: the members present when it started that have
	 * not yet acknowledged its hello (dm_static_hello.c); while any is
	 * left, dm_votes_held_back(). */
	uint8_t		 unconfirmed[DM_NODES_MAX / 8];
	uint16_t	 unconfirmed_n;
	struct dm_timer	 hello_timer;
	bool		 joiner_superseded;	/* its name spoke with another incarnation since */
	char		 last_joined[DM_NODE_NAME_MAX + 1];	/* last join we finished */
	uint64_t	 last_joined_incarnation;
	/* The last DM_REMOVED_MEMORY incarnations we saw removed (announced
	 * to us or decided here): dead for good, a NODE_ADD never brings one
	 * back (dm_membership_note_removed() in dm_membership_failure.c). */
#define DM_REMOVED_MEMORY	32
	struct dm_removed {
		char	 name[DM_NODE_NAME_MAX + 1];
		uint64_t incarnation;
	}		 removed[DM_REMOVED_MEMORY];
	size_t		 removed_next;
	/* Majority removal votes.  Each removal is decided at an epoch chosen
	 * like a Paxos ballot: a voter agrees only to an epoch above every
	 * epoch it has seen or promised (promised_epoch), so two removals
	 * decided by (intersecting) majorities never share an epoch. */
	dm_slot_t	 vote_subject;
	uint64_t	 vote_serial;
	uint64_t	 vote_epoch;	/* the epoch our running vote proposes */
	uint64_t	 promised_epoch;
	/* The highest epoch an active member told us while we were not one
	 * (JOIN_REFUSED or REJOIN flagged DM_MSG_F_MEMBER), and when: while
	 * fresh, our vote as a restarted node goes to no prober whose roster
	 * is older (see dm_membership_on_suspect()). */
	uint64_t	 member_epoch;
	dm_msec_t	 member_epoch_at;
	/* The same for the highest roster label such a member carried: the
	 * epoch spreads to stale nodes through any message, the label only
	 * through a roster change they applied. */
	uint64_t	 member_label;
	dm_msec_t	 member_label_at;
	uint16_t	 vote_yes;
	uint16_t	 vote_no;	/* refusals: a majority out of reach gives up */
	uint8_t		 voted[DM_NODES_MAX / 8];
	struct dm_timer	 vote_timer;	/* D_lock before a removal is used */
	struct dm_timer	 restart_timer;	/* erase restarted members' old incarnations */

	/* Fencing tokens. */
	uint64_t	 token_hw;	/* highest token granted or seen */
	uint64_t	 floor_stored;	/* the last DM_FX_PERSIST floor (or the config's) */
	/* The membership record (dm_member_record.c): the config's until this
	 * process is an active member (mine), then this process's own. */
	struct dm_record {
		uint64_t	 label;
		size_t		 n_names;
		char		 names[DM_NODES_MAX][DM_NODE_NAME_MAX + 1];
		size_t		 n_removals;
		struct {
			char	 name[DM_NODE_NAME_MAX + 1];
			uint64_t ballot;
		}		 removals[DM_NODES_MAX];
		/* The self-vote promise (dm_record_self_vote()); "": none. */
		char		 promise_prober[DM_NODE_NAME_MAX + 1];
		uint64_t	 promise_label;
		/* Dead incarnations, one per name (dm_record_note_dead()),
		 * the oldest overwritten first when all DM_NODES_MAX are
		 * taken; dead_changed: not stored yet. */
		size_t		 n_dead, dead_next;
		struct {
			char	 name[DM_NODE_NAME_MAX + 1];
			uint64_t incarnation;
		}		 dead[DM_NODES_MAX];
		bool		 dead_changed;
		uint64_t	 digest;	/* dm_roster_digest() of names, when mine */
		bool		 mine;
		dm_msec_t	 refusal_logged_at;	/* the last warning of a refusal */
		bool		 refusal_logged;
	}		 record;
	uint64_t	 epoch_at_ready;	/* a joiner's floor: its epoch once a member */
	/* epoch without this process's own floor: the highest epoch another
	 * node told us (dm_epoch_learn()) or a removal we announced.  A member
	 * told to rejoin goes back to it (restart_and_rejoin_why()). */
	uint64_t	 epoch_heard;

	/* Leases (majority policy). */
	dm_msec_t	 lease_until;
	/* Epoch of the latest round a majority acknowledged: new grants need
	 * it to be the current epoch (see dm_lease_valid()). */
	uint64_t	 lease_epoch;
	/* The message being received comes from another incarnation than the
	 * roster's entry for its sender: it acknowledges no lease of ours. */
	bool		 rx_other_incarnation;
	/* Since when the members refusing our lease leave too few others
	 * for a majority (0: not so, or idle). */
	dm_msec_t	 lease_refused_since;
	/* Our epoch before the message being received raised it. */
	uint64_t	 rx_epoch_before;
	/* Algorithms with an election (dm_election.h), see dm_lease.c: the
	 * newest election epoch this node accepted and the one it accepted
	 * before (counter 0: none; an epoch of the same coordinator that never
	 * started here does not count), and the label its heartbeats carry
	 * (seq, node): the epoch its holdings are accounted in.  el_started:
	 * el_accepted started here. */
	struct dm_el_epoch el_accepted, el_before, el_label;
	bool		 el_started;
	struct dm_timer	 heartbeat_timer;
	struct dm_timer	 lease_timer;
	uint64_t	 heartbeat_serial;
	struct dm_heartbeat *heartbeats;	/* ring of heartbeats_n rounds */
	size_t		 heartbeats_n;

	/* Lock table (chained hash keyed by name) and handle table. */
	struct dm_lock	**locks;
	size_t		 locks_buckets, locks_n;
	struct dm_client **clients;
	size_t		 clients_buckets, clients_n;
	size_t		 held_local, waiting_local;
	struct dm_lock	*free_list;	/* idle candidates, freed at the end of a step */

	/* Timer heap. */
	struct dm_timer	**heap;
	size_t		 heap_n, heap_cap;

	/* Scratch for effects (valid during the emit callback only). */
	struct dm_msg	 scratch;

	/* Election name and hierarchical group size (config, copied). */
	char		 election[16];
	uint32_t	 group_size;
};

/* dm_table.c */
uint32_t	 dm_hash_bytes(const void *p, size_t len);
int		 dm_table_init(struct dm_engine *e);
void		 dm_table_fini(struct dm_engine *e);
struct dm_lock	*dm_table_lock_find(struct dm_engine *e, const char *name, size_t len);
int		 dm_table_lock_insert(struct dm_engine *e, struct dm_lock *l);
void		 dm_table_lock_remove(struct dm_engine *e, struct dm_lock *l);
struct dm_client *dm_table_client_find(struct dm_engine *e, uint64_t handle);
int		 dm_table_client_insert(struct dm_engine *e, struct dm_client *c);
void		 dm_table_client_remove(struct dm_engine *e, struct dm_client *c);
/* Call fn on every lock; fn may not free other locks but may free l. */
void		 dm_table_lock_foreach(struct dm_engine *e,
		    void (*fn)(struct dm_engine *, struct dm_lock *, void *), void *arg);

/* dm_timer.c */
int		 dm_timer_arm(struct dm_engine *e, struct dm_timer *t, dm_msec_t at);
void		 dm_timer_stop(struct dm_engine *e, struct dm_timer *t);
struct dm_timer	*dm_timer_due(struct dm_engine *e, dm_msec_t now);
dm_msec_t	 dm_timer_next(const struct dm_engine *e);

/* dm_engine.c */
void		 dm_emit(struct dm_engine *e, const struct dm_effect *fx);
void		 dm_lock_maybe_free(struct dm_engine *e, struct dm_lock *l);
void		 dm_token_observe(struct dm_engine *e, uint64_t token);
/* Emit DM_FX_PERSIST if max(epoch, token_hw's epoch) grew past the stored floor. */
void		 dm_floor_persist(struct dm_engine *e);
int		 dm_record_load(struct dm_engine *e, const struct dm_member_record *r);
void		 dm_record_roster(struct dm_engine *e);
int		 dm_record_agree(struct dm_engine *e, const char *subject, uint64_t ballot);
void		 dm_record_left(struct dm_engine *e);
enum dm_record_start {
	DM_START_STATIC,	/* a member of the configured static roster */
	DM_START_RECORDED,	/* a member of the recorded roster (a subset of it) */
	DM_START_JOIN,		/* join through the static peers */
};
bool		 dm_record_lists(const struct dm_engine *e, const char *name);
enum dm_record_start dm_record_start_kind(const struct dm_engine *e,
		    const struct dm_engine_config *cfg);
void		 dm_record_warn_refusal(struct dm_engine *e, const char *peer);
bool		 dm_record_refuses_joiner_help(struct dm_engine *e, const char *peer,
		    const struct dm_msg *m);
void		 dm_record_self_vote(struct dm_engine *e, const char *prober, uint64_t label);
bool		 dm_record_promise_refuses(const struct dm_engine *e, const char *prober, uint64_t label);
void		 dm_record_promise_void(struct dm_engine *e, const char *prober);
void		 dm_record_note_dead(struct dm_engine *e, const char *name, uint64_t incarnation);
bool		 dm_record_dead(const struct dm_engine *e, const char *name, uint64_t incarnation);
bool		 dm_record_saw_removed(const struct dm_engine *e, const char *peer,
		    uint64_t incarnation, uint64_t label);
uint64_t	 dm_msg_sender_incarnation(const struct dm_msg *m);
bool		 dm_lease_needed(const struct dm_engine *e);
bool		 dm_lease_valid(const struct dm_engine *e);
bool		 dm_lease_grantable(const struct dm_engine *e);
void		 dm_lease_renew_if_wanted(struct dm_engine *e);
/* dm_lease_election.c: may a heartbeat with this election label be
 * acknowledged? */
bool		 dm_lease_election_label_acceptable(const struct dm_engine *e, dm_slot_t from,
		    const struct dm_msg *m);
size_t		 dm_lease_ring_size(const struct dm_engine *e);

/* dm_local.c: local clients and the node's phase per lock. */
int		 dm_local_acquire(struct dm_engine *e, const struct dm_event *ev);
int		 dm_local_release(struct dm_engine *e, uint64_t handle, bool cancel);
void		 dm_local_wait_expired(struct dm_engine *e, struct dm_client *c);
void		 dm_local_reconcile(struct dm_engine *e, struct dm_lock *l);
void		 dm_local_lose_all(struct dm_engine *e, int reason, bool deny_waiters);
void		 dm_local_extend_all(struct dm_engine *e);
void		 dm_local_kick_all(struct dm_engine *e);

/* dm_roster.c */
int		 dm_roster_init(struct dm_engine *e, const struct dm_engine_config *cfg);
void		 dm_roster_start(struct dm_engine *e);
dm_slot_t	 dm_roster_find(const struct dm_engine *e, const char *name, size_t len);
int		 dm_roster_receive(struct dm_engine *e, dm_slot_t from, const char *peer,
		    const struct dm_msg *m);
/* dm_static_hello.c */
void		 dm_static_hello_init(struct dm_engine *e);
void		 dm_static_hello_link_up(struct dm_engine *e, dm_slot_t s);
void		 dm_static_hello_timer(struct dm_engine *e);
void		 dm_static_hello_ack(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m);
void		 dm_static_hello_erased(struct dm_engine *e, dm_slot_t s);
bool		 dm_static_hello_awaited(const struct dm_engine *e, dm_slot_t s);
void		 dm_roster_timer(struct dm_engine *e, struct dm_timer *t);
void		 dm_roster_link(struct dm_engine *e, const char *peer, bool up);
void		 dm_roster_restarted(struct dm_engine *e, const char *peer);
int		 dm_roster_leave(struct dm_engine *e);
int		 dm_roster_remove_admin(struct dm_engine *e, const char *peer);
void		 dm_roster_lock_permitted(struct dm_engine *e, struct dm_lock *l);
bool		 dm_roster_ready(const struct dm_engine *e);
void		 dm_roster_erase(struct dm_engine *e, dm_slot_t slot);
int		 dm_roster_replace(struct dm_engine *e, dm_slot_t slot, const char *name,
		    const char *address, uint64_t incarnation);
void		 dm_roster_erase_quiet(struct dm_engine *e, dm_slot_t slot);
int		 dm_roster_add_member(struct dm_engine *e, const char *name, const char *address,
		    uint64_t incarnation, bool announce);
/* Add a member under a name that had another incarnation removed: every
 * request we have out is withdrawn and asked again (see dm_roster.c). */
int		 dm_roster_add_returning(struct dm_engine *e, const char *name,
		    const char *address, uint64_t incarnation);

/* dm_membership*.c: join (RA §7.2), leave (§7.3), failure (§7.4); their
 * shared helpers are in dm_membership_private.h. */
void		 dm_membership_join_start(struct dm_engine *e);
void		 dm_membership_progress(struct dm_engine *e);
void		 dm_membership_sponsor_hint(struct dm_engine *e, const char *peer);
void		 dm_membership_note_sender(struct dm_engine *e, const char *peer,
		    const struct dm_msg *m);
void		 dm_membership_vote_start(struct dm_engine *e, dm_slot_t slot);
/* DM_EV_JOIN: a node alone joins a cluster through sponsor at address. */
int		 dm_membership_join_cluster(struct dm_engine *e, const char *sponsor,
		    const char *address);
int		 dm_membership_on_stranger(struct dm_engine *e, const char *peer,
		    const struct dm_msg *m);
void		 dm_membership_stranger_linked(struct dm_engine *e, const char *peer);
int		 dm_membership_receive(struct dm_engine *e, dm_slot_t from, const char *peer,
		    const struct dm_msg *m);

bool		 dm_membership_condemned(const struct dm_engine *e, dm_slot_t slot);
uint64_t	 dm_roster_digest(const struct dm_engine *e);
uint64_t	 dm_roster_digest_without(const struct dm_engine *e, dm_slot_t slot);
uint64_t	 dm_roster_digest_share(const struct dm_engine *e, const char *name);
uint64_t	 dm_membership_digest_claimed(struct dm_engine *e, uint64_t digest);
bool		 dm_membership_digest_agrees(struct dm_engine *e, uint64_t ours,
		    uint64_t theirs);
bool		 dm_membership_unsettled(const struct dm_engine *e);
bool		 dm_membership_acker_ahead(const struct dm_engine *e);
bool		 dm_membership_refuses_for_good(const struct dm_engine *e, dm_slot_t slot);
size_t		 dm_membership_pending_removals(const struct dm_engine *e,
		    uint8_t bits[DM_NODES_MAX / 8]);
void		 dm_membership_vote_dropped(struct dm_engine *e);
void		 dm_membership_vote_orphaned(struct dm_engine *e, dm_slot_t subject);
/* Members that agreed to remove us refuse our lease and cannot be
 * outvoted: leave and rejoin under a new incarnation (dm_lease.c). */
void		 dm_membership_restart_refused(struct dm_engine *e, dm_slot_t refuser);
void		 dm_membership_heard(struct dm_engine *e, dm_slot_t from);
/* A message from another incarnation than the one listed for from. */
void		 dm_membership_other_incarnation(struct dm_engine *e, dm_slot_t from,
		    const struct dm_msg *m);

/* dm_lease.c */
void		 dm_lease_activity(struct dm_engine *e);
void		 dm_lease_heartbeat_timer(struct dm_engine *e);
void		 dm_lease_timer(struct dm_engine *e);
int		 dm_lease_on_heartbeat(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m);
int		 dm_lease_on_heartbeat_ack(struct dm_engine *e, dm_slot_t from,
		    const struct dm_msg *m);

/* Take an epoch another node told us (or one a removal we made decided):
 * our own rises to it, and so does epoch_heard. */
/* Is this process a member with a roster of its own (ACTIVE, SYNCING or
 * LEAVING), not a joiner, whose roster is provisional, or a node told to
 * rejoin, whose roster is gone? */
static inline bool
dm_membership_holds_roster(const struct dm_engine *e)
{
	return e->membership == DM_MEMBER_ACTIVE || e->membership == DM_MEMBER_SYNCING ||
	    e->membership == DM_MEMBER_LEAVING;
}

static inline void
dm_epoch_learn(struct dm_engine *e, uint64_t epoch)
{
	if (epoch > e->epoch)
		e->epoch = epoch;
	if (epoch > e->epoch_heard)
		e->epoch_heard = epoch;
}

#endif /* DM_ENGINE_PRIVATE_H */
