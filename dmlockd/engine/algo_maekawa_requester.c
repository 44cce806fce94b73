/*
 * algo_maekawa_requester.c: Maekawa's requester (§4 steps 1, 3, 5, 6):
 * REQUEST to S_i (or every member), counting LOCKED, RELINQUISH when an
 * INQUIRE arrives and we know we fail (deferred until we know), RELEASE on
 * leaving or withdrawing, re-issue under a new view, and the request timer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algo_maekawa.h"

void
mk_req_enter_if_done(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	/* "(5) If all members of S_i have returned a LOCKED message, node i
	 *  enters its critical section." */
	if (!s->requesting || s->in_cs || s->n_locked < s->n_members)
		return;
	s->in_cs = true;
	memset(s->inquired, 0, sizeof(s->inquired));	/* answered by RELEASE */
	mk_ensure_timer(e, l);
	dm_lock_permitted(e, l);
}

static void
req_arm(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);

	s->timer_on = true;
	s->probing = false;
	dm_lock_timer_arm(e, l, dm_now(e) + dm_request_timeout(e));
}

/* The timer runs while we wait for votes, or hold a vote others wait for. */
void
mk_ensure_timer(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);
	bool need = (s->requesting && !s->in_cs) || (s->voted && s->n_wait > 0);

	if (need && !s->timer_on)
		req_arm(e, l);
	else if (!need && s->timer_on) {
		s->timer_on = false;
		dm_lock_timer_stop(e, l);
	}
}

/* Send REQUEST(seq) to S_i (or to every member while not all are clean). */
int
mk_req_issue(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	struct mk_node *n = mk_node(e);
	int r;

	s->all_mode = !mk_all_clean(e) || mk_name_reserved(dm_lock_name(l), strlen(dm_lock_name(l)));
	if (!s->all_mode && (r = mk_compute_set(e)) < 0)
		return r;
	s->our_seq = ++n->highest_seq;
	s->req_view = n->view;
	act_begin(n, &s->req_gen);
	s->n_members = s->n_locked = 0;
	memset(s->member, 0, sizeof(s->member));
	memset(s->locked, 0, sizeof(s->locked));
	memset(s->failed, 0, sizeof(s->failed));
	memset(s->inquired, 0, sizeof(s->inquired));
	memset(s->probed, 0, sizeof(s->probed));
	if (s->all_mode) {
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (mk_member(e, j)) {
				dm_bit_set(s->member, j, true);
				s->n_members++;
			}
	} else {
		for (unsigned i = 0; i < n->set_n; i++) {
			dm_bit_set(s->member, n->set[i], true);
			s->n_members++;
		}
	}
	/* The REQUEST doubles as a lease round (majority policy); members
	 * outside S_i get the engine's own HEARTBEAT of the same round, so the
	 * lease needs no extra round trip after the last LOCKED. */
	s->lease_serial = dm_lease_round(e);
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->member, j))
			mk_send_full(e, l, (dm_slot_t)j, DM_MK_REQUEST, s->our_seq, s->try_once, 0,
			    s->lease_serial);
	if (s->lease_serial != 0 && !s->all_mode) {
		struct dm_msg *m = dm_msg_begin(e, DM_MSG_HEARTBEAT, NULL);
		m->token = 0;
		m->serial = s->lease_serial;
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (!dm_bit_get(s->member, j) && j != dm_roster_self(e))
				dm_send(e, j, m);
	}
	return 0;
}

/* "(6) Upon completing the critical section, node i sends a RELEASE message
 * to each member of S_i" - also to withdraw a request. */
void
mk_req_give_up(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	if (!s->requesting)
		return;
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->member, j))
			mk_send(e, l, (dm_slot_t)j, DM_MK_RELEASE, s->our_seq, false);
	act_end(mk_node(e), s->req_gen);
	s->requesting = false;
	s->in_cs = false;
	memset(s->member, 0, sizeof(s->member));
	s->n_members = s->n_locked = 0;
}

/* The view changed under a request not yet in its critical section. */
void
mk_req_reissue_if_stale(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	struct mk_node *n = mk_node(e);

	if (!s->requesting || s->in_cs || s->req_view == n->view)
		return;
	mk_req_give_up(e, l, s);
	s->requesting = true;
	if (mk_req_issue(e, l, s) < 0) {
		s->requesting = false;
		dm_lock_refused(e, l, -ENOMEM);
	}
}

void
mk_req_relinquish(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t x)
{
	/* "(3) ... returns a RELINQUISH message ... The node cancels the LOCKED
	 *  message previously received from the member node." */
	dm_bit_set(s->inquired, x, false);
	if (!dm_bit_get(s->locked, x))
		return;
	dm_bit_set(s->locked, x, false);
	dm_bit_set(s->failed, x, true);
	s->n_locked--;
	mk_send(e, l, x, DM_MK_RELINQUISH, s->our_seq, false);
}

bool
mk_req_knows_it_fails(const struct mk_lock *s)
{
	for (size_t i = 0; i < sizeof(s->failed); i++)
		if (s->failed[i])
			return true;
	return false;
}

void
mk_req_answer_inquiries(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->inquired, j))
			mk_req_relinquish(e, l, s, (dm_slot_t)j);
}

bool
mk_req_current(const struct mk_lock *s, dm_slot_t x, uint64_t seq)
{
	return s != NULL && s->requesting && !s->in_cs && seq == s->our_seq &&
	    dm_bit_get(s->member, x);
}
