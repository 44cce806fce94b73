/*
 * dm_token_watchdog.c: the token algorithms' waiter watchdog (dm_token.h):
 * a wait of T_fail, the probe that asks who uses the lock before anything
 * drastic, its answers, and the epoch an overdue wait starts.
 */
#include <stdint.h>

#include "dm_token.h"

/*
 * The waiter's watchdog: T_fail without the token, and the token or the
 * request may be lost (dm_token_watchdog_fired()).  A waiter
 * queued behind a long critical section cannot tell that wait from a lost
 * token by time alone, and every epoch stops every token for its fence
 * (bench/election_stall.sh; NOTES-token.md, "Elections on a healthy
 * cluster").  So at T_fail it first asks every member whether it uses the
 * lock (PROBE); the node in its critical section answers with that
 * entry's id (PROBE_ANSWER), and the wait goes on for another T_fail.  An
 * epoch starts when no answer comes within the probe timeout (nobody uses
 * the lock: the token or our request is lost), or when probes have found
 * DM_TOKEN_USERS_MAX other entries while we still wait (the token moves,
 * but perhaps never towards us: our request may be lost, and only an
 * epoch asks again), unless the user answers that it knows our request
 * (DM_TK_PROBE_KNOWN: Suzuki-Kasami's holder can tell; the token will come
 * to us).  One long critical section therefore costs probes,
 * N - 1 messages and one answer per T_fail, and no epoch.  Each epoch a
 * wait started doubles its next wait, up to 2^DM_TOKEN_OVERDUE_MAX T_fail.
 * A grant, a withdrawal or a new request starts again at T_fail.
 */
#define DM_TOKEN_OVERDUE_MAX	3
#define DM_TOKEN_USERS_MAX	3

void
dm_token_watchdog(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	dm_msec_t t_fail = dm_request_timeout(e) + dm_probe_timeout(e);

	t->probing = false;
	if (t->wanting && !t->in_cs)
		dm_lock_timer_arm(e, l, dm_now(e) + (t_fail << t->overdue));
	else
		dm_lock_timer_stop(e, l);
}

void
dm_token_wait_afresh(struct dm_tlock *t)
{
	t->overdue = 0;
	t->probing = false;
	dm_token_forget_users(t);
}

void
dm_token_forget_users(struct dm_tlock *t)
{
	t->users_seen = 0;
	t->user_id = 0;
	t->user_from = DM_SLOT_NONE;
}

/* Ask every other member whether it uses l; false if there is nobody. */
static bool
probe(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	struct dm_token_node *tn = dm_token_node(e);
	bool any = false;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == dm_roster_self(e) || dm_roster_departing(e, j))
			continue;
		struct dm_msg *m = dm_token_msg(e, DM_TK_PROBE, l);
		if (tn->ops->probe_stamp != NULL)
			m->seq = tn->ops->probe_stamp(e, l);
		dm_send(e, j, m);
		any = true;
	}
	if (!any)
		return false;
	tn->probes++;
	t->probing = true;
	dm_lock_timer_arm(e, l, dm_now(e) + dm_probe_timeout(e));
	return true;
}

/* The wait is overdue: elect (Normal only; see dm_token_watchdog_fired()). */
static void
overdue(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	struct dm_token_node *tn = dm_token_node(e);

	if (tn->el.status == DM_EL_NORMAL && t->overdue < DM_TOKEN_OVERDUE_MAX)
		t->overdue++;
	dm_token_forget_users(t);
	dm_token_watchdog(e, l, t);
	if (tn->el.status == DM_EL_NORMAL)
		dm_election_start_new_epoch(e, &tn->el, "a token is overdue");
}

void
dm_token_watchdog_fired(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	/* Waited T_fail: the token or our request may be lost.  Nothing while
	 * an election runs or we await New_State: it has its own timers, and
	 * a second election would refuse the first one's Set_Coordinator. */
	if (dm_token_node(e)->el.status != DM_EL_NORMAL) {
		dm_token_watchdog(e, l, t);
		return;
	}
	/* First ask who uses the lock; its silence (the probe's timeout) or
	 * nobody to ask: overdue. */
	if (t->probing || !probe(e, l, t))
		overdue(e, l, t);
}

/* An overdue waiter asks whether we use l: answer only if we do (its
 * timeout stands for "nobody"), naming this entry. */
int
dm_token_on_probe(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
    const struct dm_msg *m)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t;
	struct dm_msg *a;
	bool known;

	if (l == NULL)
		return 0;	/* unknown here: not in use (no state made for it) */
	t = dm_token_lock(e, l);
	if (!t->in_cs || t->entry_id == 0)
		return 0;
	known = m->seq != 0 && tn->ops->knows_waiter != NULL &&
	    tn->ops->knows_waiter(e, l, from, m->seq);
	a = dm_token_msg_name(e, DM_TK_PROBE_ANSWER, m);
	a->arg = t->entry_id | (known ? DM_TK_PROBE_KNOWN : 0);
	dm_send(e, from, a);
	return 0;
}

/* Someone uses the lock we wait for: not overdue, unless probes keep
 * finding other entries (the token moves, but not to us). */
int
dm_token_on_probe_answer(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
    const struct dm_msg *m)
{
	struct dm_token_node *tn = dm_token_node(e);
	uint32_t id = (uint32_t)m->arg;
	struct dm_tlock *t;

	if (l == NULL || id == 0 || (m->arg & ~(DM_TK_PROBE_KNOWN | UINT32_MAX)) != 0)
		return 0;
	t = dm_token_lock(e, l);
	if (!t->probing || !t->wanting || t->in_cs)
		return 0;	/* late, or a second answer: one entry runs at a time */
	tn->probes_busy++;
	if ((m->arg & DM_TK_PROBE_KNOWN) != 0)
		t->users_seen = 0;	/* our request is queued: the token comes */
	else if (t->user_id != 0 && (t->user_from != from || t->user_id != id))
		t->users_seen++;
	t->user_from = from;
	t->user_id = id;
	if (t->users_seen >= DM_TOKEN_USERS_MAX) {
		overdue(e, l, t);
		return 0;
	}
	dm_token_watchdog(e, l, t);
	return 0;
}
