/*
 * dm_election.h: leader election with epochs, for the algorithms that need
 * a coordinator or token regeneration (algo_suzuki_kasami.c, algo_raymond.c,
 * algo_naimi_trehel.c through dm_token.c).  Owns the node-level election
 * state: status (Down, Election, Reorganization, Normal), the current epoch
 * (counter, coordinator name) and one election in progress.
 *
 * An implementation (dm_election_bully.c; an invitation election can
 * provide the same four functions) talks on the reserved lock
 * DM_ELECTION_LOCK and calls the user's hooks at the epoch cut (acceptance),
 * for every HELD report at the coordinator, and when the node enters Normal.
 * Epochs are totally ordered by (counter, coordinator name) and strictly
 * increase at every node.
 */
#ifndef DM_ELECTION_H
#define DM_ELECTION_H

#include "dm_algorithm.h"

#define DM_ELECTION_LOCK	".dmlock/election"

/* Election message kinds (algorithm range; opaque to the codec). */
enum dm_election_kind {
	DM_EL_ARE_YOU_UP = 112,		/* step 1: check a higher-priority node */
	DM_EL_AYU_ANSWER,
	DM_EL_ENTER_ELECTION,		/* step 2: serial = proposed epoch counter */
	DM_EL_EE_ANSWER,		/* arg 1: "I outrank you" (the sender gives up); arg 2: counter
					 * not above my epoch (seq = highest seen) */
	DM_EL_SET_COORDINATOR,		/* step 3: accept me; epoch cut */
	DM_EL_HELD,			/* report: lock (named) is in use here */
	DM_EL_SC_ANSWER,		/* arg 1: refused */
	DM_EL_NEW_STATE,		/* step 4: payload = parent name (tree algorithms) */
	DM_EL_NS_ANSWER,
	/* The invitation election (dm_election_invitation.c); group id =
	 * (serial = counter, node = coordinator), the epoch. */
	DM_EL_ARE_YOU_COORDINATOR,	/* coordinator -> others: arg 1 in answer = "I lead a group" */
	DM_EL_AYC_ANSWER,
	DM_EL_ARE_YOU_THERE,		/* member -> its coordinator: group id in serial/node */
	DM_EL_AYT_ANSWER,		/* arg 1: "yes, I lead that group" */
	DM_EL_INVITATION,		/* coordinator -> others: join my new group (serial, node) */
	DM_EL_ACCEPT,			/* invitee -> coordinator (HELD reports precede it) */
	DM_EL_ACCEPT_ANSWER,		/* arg 1: refused (too late) */
	DM_EL_READY,			/* coordinator -> members: the group is formed */
	DM_EL_READY_ANSWER,		/* arg 1: "in group" */
	DM_EL_KIND_MAX_,
};

enum dm_election_status {
	DM_EL_DOWN = 0,		/* no epoch yet (joined through a sponsor) */
	DM_EL_ELECTION,
	DM_EL_REORGANIZATION,	/* accepted a coordinator; waiting for its state */
	DM_EL_NORMAL,
};

struct dm_election_hooks {
	/* Epoch cut: this node adopts the new epoch (el->k, el->coord); report
	 * every lock it is using with dm_election_report_held(). */
	void	(*cut)(struct dm_engine *e);
	/* At the coordinator: member 'from' uses lock m->lock (a HELD report). */
	void	(*held)(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m);
	/* The node enters Normal in the current epoch. */
	void	(*normal)(struct dm_engine *e);
};

/* An election implementation (NULL impl in struct dm_election: bully). */
struct dm_election;
struct dm_election_impl {
	const char *name;
	void	(*start)(struct dm_engine *e, struct dm_election *el, const char *why);
	int	(*receive)(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
		    const struct dm_msg *m);
	void	(*timer)(struct dm_engine *e, struct dm_election *el);
	void	(*peer_gone)(struct dm_engine *e, struct dm_election *el, dm_slot_t slot);
	/* Optional: like start, but the election must end in a new epoch
	 * even when the coordinator lives (dm_election_start_new_epoch()). */
	void	(*start_new_epoch)(struct dm_engine *e, struct dm_election *el, const char *why);
};
extern const struct dm_election_impl dm_election_invitation_impl;
/* SC_ANSWER / ACCEPT arg of a node still joining: accepted, holding
 * nothing, not working in the epoch (dm_election_joining_receive()). */
#define DM_EL_ANSWER_JOINING	3

/* The implementation for a config name (NULL: bully, the default). */
const struct dm_election_impl *dm_election_impl_for(const char *name);

struct dm_election {
	const struct dm_election_hooks *hooks;
	uint8_t		 status;		/* enum dm_election_status */
	uint8_t		 step;			/* implementation's */
	uint16_t	 waiting_n;
	uint64_t	 k;			/* current epoch counter */
	uint64_t	 k_seen;		/* highest counter seen anywhere */
	uint64_t	 k_try;			/* counter proposed by our election */
	char		 coord[DM_NODE_NAME_MAX + 1];	/* current coordinator */
	char		 halted[DM_NODE_NAME_MAX + 1];	/* who made us enter Election */
	size_t		 members_at_epoch;	/* roster size when the epoch began */
	char		 parent[DM_NODE_NAME_MAX + 1];	/* tree parent given by NEW_STATE */
	uint8_t		 waiting[DM_NODES_MAX / 8];	/* answers awaited this step */
	/* Statistics (status output, simulator reports). */
	uint64_t	 elections_started, elections_won, epochs;
	const struct dm_election_impl *impl;	/* NULL: bully (dm_election_bully.c) */
	/* Invitation election's own state (dm_election_invitation.c). */
	uint8_t		 inv_up[DM_NODES_MAX / 8];	/* members that accepted our group */
	uint64_t	 inv_messages;			/* election messages sent */
	/* An election was due while this node was not a member (joining or
	 * restarting): it starts on the first timer after the node joined. */
	bool		 deferred;
	/* Members that answered as joiners (DM_EL_ANSWER_JOINING): not working
	 * in the epoch (no group coordinator, no tree node).  joining_up: this
	 * election's, by slot (coordinator); joiners: the epoch's, by name,
	 * '\0'-separated (sent with New_State / READY). */
	uint8_t		 joining_up[DM_NODES_MAX / 8];
	uint16_t	 joiners_len;
	char		 joiners[DM_MSG_PAYLOAD_MAX];
};

/* Shared helpers (dm_election.c). */
void		 dm_election_init(struct dm_engine *e, struct dm_election *el,
		    const struct dm_election_hooks *hooks);
struct dm_lock	*dm_election_lock(struct dm_engine *e);
bool		 dm_election_is_lock(const struct dm_lock *l);
/* For struct dm_algorithm.joining_receive: a node still JOINING answers a
 * member's election passively (it holds no token and uses no lock of any
 * epoch of the cluster's): it accepts Enter_Election, Set_Coordinator and
 * invitations without leading, adopting or cutting anything, and stays
 * silent to AreYouUp (so nobody waits for it to lead).  Then a member that
 * already counts it can finish the election and grant the roster lock the
 * join waits for.  Other messages are dropped. */
int		 dm_election_joining_receive(struct dm_engine *e, struct dm_election *el,
		    dm_slot_t from, const struct dm_msg *m);
bool		 dm_election_owns_kind(uint8_t kind);
/* Status words (dm_algorithm.h describe hooks) appended to buf of len
 * bytes: election=NAME state=normal|election|reorganization|down
 * coordinator=NODE|- epoch=K elections_started=N elections_won=N.
 * Returns the new length. */
size_t		 dm_election_describe(const struct dm_engine *e, const struct dm_election *el,
		    char *buf, size_t size, size_t len);
dm_slot_t	 dm_election_slot_by_name(const struct dm_engine *e, const char *name, size_t len);
dm_slot_t	 dm_election_coordinator(const struct dm_engine *e, const struct dm_election *el);
bool		 dm_election_i_coordinate(const struct dm_engine *e, const struct dm_election *el);
/* Priority: the lower name outranks.  >0 if a outranks b. */
int		 dm_election_outranks(const struct dm_engine *e, dm_slot_t a, dm_slot_t b);
/* Stamp an algorithm message with the current epoch (serial, node). */
void		 dm_election_stamp(const struct dm_election *el, struct dm_msg *m);
/* Is an algorithm message of the current epoch (and may it be acted on)? */
bool		 dm_election_current(const struct dm_election *el, const struct dm_msg *m);
/* Joiners of the epoch (see struct dm_election): the coordinator notes
 * them during its election, fixes the list when it enters Normal and
 * sends it (put: returns the bytes written, at most room); members take
 * it from New_State / READY (set: -EPROTO if malformed). */
void		 dm_election_joiners_clear(struct dm_election *el);
void		 dm_election_joiner_note(struct dm_election *el, dm_slot_t slot);
void		 dm_election_joiners_fix(const struct dm_engine *e, struct dm_election *el);
size_t		 dm_election_joiners_put(const struct dm_election *el, uint8_t *p, size_t room);
int		 dm_election_joiners_set(struct dm_election *el, const uint8_t *p, size_t len);
/* Did member j answer the current epoch's election as a joiner? */
bool		 dm_election_is_joiner(const struct dm_engine *e, const struct dm_election *el,
		    dm_slot_t j);
/* Members not departing. */
size_t		 dm_election_members(const struct dm_engine *e);
/* members_at_epoch at a member entering an epoch: the coordinator's count
 * from its announcement (READY, NEW_STATE arg), or ours if it sent none. */
size_t		 dm_election_epoch_members(const struct dm_engine *e, uint64_t coordinator_count);
/* Does the roster still look like the one the epoch began with? */
bool		 dm_election_roster_stale(const struct dm_engine *e, const struct dm_election *el);
/* In Normal with a roster changed since the epoch began: start an election
 * (true).  Algorithms call it before they ask anyone by the epoch's view. */
bool		 dm_election_renew_if_stale(struct dm_engine *e, struct dm_election *el);
/* A lock's state is lost with every node up (a token lost in flight):
 * start an election that ends in a new epoch, which regenerates it.  Bully
 * always does; invitation asks its coordinator to form a new group. */
void		 dm_election_start_new_epoch(struct dm_engine *e, struct dm_election *el,
		    const char *why);
/* The epoch cut: this node adopts (el->k, el->coord), which it set just
 * before.  The lease stops acknowledging heartbeats of older epochs
 * (dm_lease_election_epoch()), then the user's cut hook runs. */
void		 dm_election_cut(struct dm_engine *e, struct dm_election *el);
/* During the cut hook: tell the coordinator that lock l is in use here. */
void		 dm_election_report_held(struct dm_engine *e, struct dm_election *el,
		    const struct dm_lock *l);

/* The implementation (dm_election_bully.c). */
void		 dm_election_start(struct dm_engine *e, struct dm_election *el, const char *why);
int		 dm_election_receive(struct dm_engine *e, struct dm_election *el, dm_slot_t from,
		    const struct dm_msg *m);
void		 dm_election_timer(struct dm_engine *e, struct dm_election *el);
void		 dm_election_peer_gone(struct dm_engine *e, struct dm_election *el, dm_slot_t slot);

#endif /* DM_ELECTION_H */
