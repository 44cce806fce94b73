/*
 * algo_hierarchical.h: private to the hierarchical group/system coordinator
 * algorithm (algo_hierarchical.c: requester side, epochs, glue;
 * algo_hierarchical_coord.c: the group and system coordinators' tables).
 */
#ifndef ALGO_HIERARCHICAL_H
#define ALGO_HIERARCHICAL_H

#include "dm_election.h"

/* Message kinds (algorithm range, opaque to the codec).  Every message is
 * stamped with the election epoch (serial = counter, node = coordinator). */
enum dm_hier_kind {
	DM_HR_NREQUEST = 0xc0,	/* node -> group coord: seq = ts, flags TRY, arg 1 = held across a cut */
	DM_HR_GREQUEST,		/* group coord -> system coord: seq = earliest ts, arg = group request id */
	DM_HR_GREPLY,		/* system -> group coord: arg = id; payload = holder name (id 0 only) */
	DM_HR_NREPLY,		/* group coord -> node: seq = the granted request's ts (0: any) */
	DM_HR_NRELEASE,		/* node -> group coord: seq = ts (release, or withdrawal) */
	DM_HR_GRELEASE,		/* group -> system: arg = id released or withdrawn */
	DM_HR_GREQREL,		/* group -> system: arg = new id, seq = its ts, payload = released id */
	DM_HR_NREQREL,		/* node -> group coord: retry ("NREQREL"), seq = ts */
	DM_HR_NBUSY,		/* group coord -> node: try-once refused, seq echoed */
	DM_HR_GBUSY,		/* system -> group coord: try-once refused, arg = id */
	/* Liveness answers (not in the thesis; NOTES-hierarchical.md): a
	 * coordinator that gets a retry for a request it still queues says so,
	 * so a retry that stays unanswered means the coordinator is gone. */
	DM_HR_NQUEUED,		/* group coord -> node: NREQREL's request is queued, seq echoed */
	DM_HR_GQUEUED,		/* system -> group coord: GREQUEST's id is queued, arg = id */
	DM_HR_KIND_MAX_,
};

#define HR_GROUP_SIZE_DEFAULT	4
#define HR_GROUP_MAX		16	/* largest configurable group */
#define HR_GREQ_MAX		64	/* groups: the group size grows past N/64 */

struct hr_nreq {			/* group coordinator: a member's request */
	uint64_t	 ts;
	dm_slot_t	 slot;		/* DM_SLOT_NONE: free entry */
	bool		 try_once;
};

struct hr_greq {			/* system coordinator: a group's request */
	uint64_t	 ts;
	uint64_t	 id;
	dm_slot_t	 slot;		/* the group coordinator; DM_SLOT_NONE: free */
	bool		 try_once;
};

struct hr_lock {
	struct hr_lock	*next, *prev;	/* node's active list (see unlink_lock) */
	struct dm_lock	*lock;
	bool		 linked;
	/* Requester: survives epoch cuts. */
	bool		 wanting, in_cs, try_once;
	uint64_t	 my_ts;
	bool		 probe_out;	/* our NREQREL awaits NQUEUED or NREPLY */
	bool		 release_owed;	/* left the CS during an election */
	uint64_t	 owed_ts;	/* ... the timestamp of that grant */
	dm_slot_t	 granter;	/* who sent our NREPLY: NRELEASE goes there */
	uint64_t	 granter_gen;	/* the epoch (cut generation) of that grant */
	/* Coordinator parts: valid while gen equals the node's. */
	uint64_t	 gen;
	/* Group coordinator ("nreq", "lnrep"). */
	struct hr_nreq	 nreq[HR_GROUP_MAX];
	dm_slot_t	 lnrep;		/* member holding the group's permission */
	uint64_t	 lnrep_ts;	/* 0: any (known from a cut) */
	bool		 have_grant;	/* the system coordinator's GREPLY is ours */
	uint64_t	 grant_id;
	uint64_t	 greq_id;	/* our outstanding GREQUEST, 0: none */
	bool		 gprobe_out;	/* our resent GREQUEST awaits GQUEUED or GREPLY */
	dm_msec_t	 gprobe_at;	/* ... sent then */
	/* System coordinator ("greq", "lgrep"). */
	struct hr_greq	 greq[HR_GREQ_MAX];
	dm_slot_t	 lgrep;		/* group coordinator holding permission */
	uint64_t	 lgrep_id;
	dm_slot_t	 lgrep_holder;	/* known holder (from a cut), else NONE */
	bool		 cut_unplaced;	/* lgrep from a HELD report, in the groups seen
					 * then: placed again when the epoch starts,
					 * so the lock stays on the active list */
};

struct hr_node {
	struct dm_election el;
	uint64_t	 gen;		/* epoch cut generation */
	uint64_t	 clock;		/* Lamport clock for request timestamps */
	uint64_t	 next_gid;	/* group request ids: unique per node, all locks */
	struct hr_lock	*active;
	/* Statistics (tests, NOTES). */
	uint64_t	 entries, sent[DM_HR_KIND_MAX_ - DM_HR_NREQUEST];
};

/* algo_hierarchical.c */
struct hr_node	*hr_node(struct dm_engine *e);
/* l's state, coordinator parts reset if they belong to an older epoch. */
struct hr_lock	*hr_lock(struct dm_engine *e, struct dm_lock *l);
/* Send (or deliver locally when to is this node) a stamped message. */
struct dm_msg	*hr_msg(struct dm_engine *e, uint8_t kind, const struct dm_lock *l);
void		 hr_send(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, struct dm_msg *m);
dm_slot_t	 hr_system_coordinator(const struct dm_engine *e);
dm_slot_t	 hr_group_coordinator_of(const struct dm_engine *e, dm_slot_t member);
int		 hr_requester_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);

/* algo_hierarchical_coord.c */
void		 hr_coord_reset(struct hr_lock *t);
bool		 hr_coord_idle(const struct hr_lock *t);
/* Status words of the coordinator parts (group_holder=, group_waiting=,
 * system_grant_to=, system_waiting=) appended to buf; the new length. */
size_t		 hr_coord_describe(const struct dm_engine *e, const struct hr_lock *t, char *buf,
		    size_t size, size_t len);
int		 hr_coord_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
		    const struct dm_msg *m);
/* At the system coordinator: 'holder' was in its critical section at the cut. */
/* Member slot is being removed (the slot is already out of the roster):
 * a grant derived from a cut report follows its holder's new group
 * coordinator, or ends with its holder. */
void		 hr_coord_forget(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot);
void		 hr_coord_held(struct dm_engine *e, struct dm_lock *l, dm_slot_t holder);
/* At the system coordinator entering Normal: the grants of HELD reports
 * go to the holders' group coordinators of the new epoch's groups. */
void		 hr_coord_cut_grants(struct dm_engine *e, struct dm_lock *l);

#endif /* ALGO_HIERARCHICAL_H */
