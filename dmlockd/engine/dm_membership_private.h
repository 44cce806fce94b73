/*
 * dm_membership_private.h: what the roster change protocols of RA §7
 * share between their files: dm_membership.c (dispatch and timers),
 * dm_membership_join.c and dm_membership_sponsor.c (insertion, §7.2),
 * dm_membership_leave.c (graceful removal, §7.3), dm_membership_failure.c
 * (failure announcements and restart, §7.4) and dm_membership_vote.c
 * (the majority-confirmed removal of failure_policy = majority).  The
 * engine's other files use the dm_membership_* calls in
 * dm_engine_private.h.
 */
#ifndef DM_MEMBERSHIP_PRIVATE_H
#define DM_MEMBERSHIP_PRIVATE_H

#include <string.h>

#include "dm_engine_private.h"

/* Retries of JOIN, NODE_ADD and SEQ_QUERY: a round trip plus processing,
 * like the probe timeout (footnote 5). */
static inline dm_msec_t
dm_join_retry(const struct dm_engine *e)
{
	return e->probe_timeout_ms;
}

/* Send to a node by name, member or not (REJOIN, join replies). */
static inline void
send_to_name(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	struct dm_effect fx = { .type = DM_FX_SEND };

	fx.u.send.peer = peer;
	fx.u.send.msg = m;
	dm_emit(e, &fx);
}

/* To every other member of our roster (dm_send skips ourselves). */
static inline void
broadcast(struct dm_engine *e, const struct dm_msg *m)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		dm_send(e, j, m);
}

static inline void
set_subject(struct dm_msg *m, const struct dm_node *n)
{
	m->node_len = n->name_len;
	memcpy(m->node, n->name, n->name_len + 1u);
	m->address_len = (uint8_t)strlen(n->address);
	memcpy(m->address, n->address, m->address_len + 1u);
	m->incarnation = n->incarnation;
}

/* Messages about a subject carry the subject's incarnation; the sender's
 * goes in seq (unused by these kinds), so a receiver can tell a dead
 * incarnation's delayed NODE_ADD/NODE_FAILED/SUSPECT from its successor's. */
static inline void
set_sender(struct dm_engine *e, struct dm_msg *m)
{
	m->seq = e->incarnation;
}

/* A refusal from an active member says so: its epoch is a roster that
 * lives (see the member_epoch rule in dm_membership_on_suspect()). */
static inline void
flag_member(const struct dm_engine *e, struct dm_msg *m)
{
	if (e->membership == DM_MEMBER_ACTIVE)
		m->flags |= DM_MSG_F_MEMBER;
}

/* A JOIN_REFUSED from a member names another member the joiner may ask
 * instead (not us, not the joiner). */
static inline void
hint_other_member(struct dm_engine *e, struct dm_msg *r, const char *joiner)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || strcmp(e->nodes[j].name, joiner) == 0)
			continue;
		set_subject(r, &e->nodes[j]);
		break;
	}
}

/* The next epoch this node may use on its own (no vote): above every epoch
 * it has seen or promised to a removal vote. */
static inline uint64_t
epoch_next(const struct dm_engine *e)
{
	return (e->epoch > e->promised_epoch ? e->epoch : e->promised_epoch) + 1;
}

/* T_fail: how long a member stays silent before we agree it failed. */
static inline dm_msec_t
fail_silence(const struct dm_engine *e)
{
	return e->request_timeout_ms + e->probe_timeout_ms;	/* T_fail */
}

/* Would this node agree that slot failed?  Only after T_fail of silence,
 * or if it has acknowledged nothing of slot's since it agreed to a removal
 * whose outcome it cannot learn any more (vote_orphaned): either way, no
 * lease ack of ours to slot is younger than T_fail. */
static inline bool
silent_long_enough(const struct dm_engine *e, dm_slot_t slot)
{
	return e->nodes[slot].departing || e->nodes[slot].vote_orphaned ||
	    e->now >= e->nodes[slot].last_heard + fail_silence(e);
}

/* Is our roster provisional: we are no member, waiting to (re)join?  A
 * NODE_ADD taken then (via_add) may be superseded by a newer one or
 * cancelled; a snapshot or the members' word settles it.  RESTARTING
 * counts: a node told to rejoin still takes NODE_ADDs while it waits, and
 * such an entry outlived its incarnation (hierarchical 830035/4). */
static inline bool
roster_provisional(const struct dm_engine *e)
{
	return e->membership == DM_MEMBER_JOINING || e->membership == DM_MEMBER_RESTARTING;
}

/* dm_membership_join.c: the joining node's side of insertion, and every
 * node's answer to NODE_ADD and SEQ_QUERY. */
void	 dm_membership_ready(struct dm_engine *e);
void	 dm_membership_sync_retry(struct dm_engine *e);
int	 dm_membership_on_join_refused(struct dm_engine *e, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_node_add(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_roster_entry(struct dm_engine *e, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_roster_end(struct dm_engine *e, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_seq_query(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *q);
int	 dm_membership_on_seq_answer(struct dm_engine *e, dm_slot_t from,
	    const struct dm_msg *m);

/* dm_membership_sponsor.c: the sponsor's side of insertion. */
void	 dm_membership_sponsor_abort(struct dm_engine *e);
void	 dm_membership_sponsor_abort_erasing(struct dm_engine *e, dm_slot_t slot);
void	 dm_membership_sponsor_finish(struct dm_engine *e);
void	 dm_membership_sponsor_retry(struct dm_engine *e);
int	 dm_membership_on_join(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_node_add_ack(struct dm_engine *e, dm_slot_t from,
	    const struct dm_msg *m);

/* dm_membership_leave.c: graceful removal. */
void	 dm_membership_note_node(struct dm_noted_node *ring, size_t *n, size_t *next,
	    const char *peer, uint64_t incarnation);
void	 dm_membership_departed_erase(struct dm_engine *e);
void	 dm_membership_left(struct dm_engine *e);
int	 dm_membership_on_leave(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_leave_ack(struct dm_engine *e, dm_slot_t from);

/* dm_membership_failure.c: failure announcements, removed incarnations,
 * restart and rejoin. */
void	 dm_membership_announce_failure_at(struct dm_engine *e, dm_slot_t slot,
	    uint64_t epoch);
void	 dm_membership_announce_failure(struct dm_engine *e, dm_slot_t slot);
bool	 dm_membership_incarnation_removed(const struct dm_engine *e, const char *name,
	    uint64_t incarnation);
bool	 dm_membership_name_removed(const struct dm_engine *e, const char *name);
void	 dm_membership_note_removed(struct dm_engine *e, dm_slot_t slot);
void	 dm_membership_roster_label(struct dm_engine *e, uint64_t epoch);
int	 dm_membership_on_node_failed(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_rejoin(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);

/* dm_membership_vote.c: majority-confirmed removal. */
void	 dm_membership_condemn_restarted(struct dm_engine *e, dm_slot_t s);
void	 dm_membership_restart_timer(struct dm_engine *e);
void	 dm_membership_vote_timer(struct dm_engine *e);
int	 dm_membership_on_suspect(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_suspect_abort(struct dm_engine *e, dm_slot_t from, const char *peer,
	    const struct dm_msg *m);
int	 dm_membership_on_suspect_vote(struct dm_engine *e, dm_slot_t from,
	    const struct dm_msg *m);

#endif /* DM_MEMBERSHIP_PRIVATE_H */
