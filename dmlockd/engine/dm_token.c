/*
 * dm_token.c: what the token algorithms share (see dm_token.h): the epoch
 * cut and regeneration through the election, tokens lent at a cut and
 * returned, per-lock lifetime (a lock in its epoch's initial state has no
 * state), the waiting watchdog, and the struct dm_algorithm functions that
 * wrap each algorithm's ops.
 */
#include <errno.h>
#include <string.h>

#include "dm_token.h"

struct dm_token_node *
dm_token_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

const struct dm_token_node *
dm_token_node_const(const struct dm_engine *e)
{
	return dm_algo_node_state_const(e);
}

bool
dm_token_i_coordinate(const struct dm_engine *e)
{
	return dm_election_i_coordinate(e, &dm_token_node_const(e)->el);
}

dm_slot_t
dm_token_coordinator(const struct dm_engine *e)
{
	return dm_election_coordinator(e, &dm_token_node_const(e)->el);
}

static bool
token_live(const struct dm_engine *e)
{
	const struct dm_election *el = &dm_token_node_const(e)->el;

	return el->status == DM_EL_NORMAL || el->status == DM_EL_REORGANIZATION;
}

struct dm_msg *
dm_token_msg(struct dm_engine *e, uint8_t kind, const struct dm_lock *l)
{
	struct dm_msg *m = dm_msg_begin(e, kind, l);

	dm_election_stamp(&dm_token_node(e)->el, m);
	return m;
}

struct dm_msg *
dm_token_msg_name(struct dm_engine *e, uint8_t kind, const struct dm_msg *about)
{
	struct dm_msg *m = dm_token_msg(e, kind, NULL);

	m->lock_len = about->lock_len;
	memcpy(m->lock, about->lock, about->lock_len);
	m->lock[about->lock_len] = '\0';
	return m;
}

static void
link_lock(struct dm_token_node *tn, struct dm_tlock *t)
{
	if (t->linked)
		return;
	t->linked = true;
	t->prev = NULL;
	t->next = tn->active;
	if (tn->active != NULL)
		tn->active->prev = t;
	tn->active = t;
}

static void
unlink_lock(struct dm_token_node *tn, struct dm_tlock *t)
{
	if (!t->linked || t->wanting || t->in_cs || t->proxy)
		return;
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		tn->active = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	t->linked = false;
}

static void
reset_lock(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	struct dm_token_node *tn = dm_token_node(e);

	t->lock = l;
	t->gen = tn->gen;
	tn->ops->reset(e, l, token_live(e) && dm_token_i_coordinate(e));
}

struct dm_tlock *
dm_token_lock(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_tlock *t = dm_lock_state(l);

	if (t->gen != dm_token_node(e)->gen || t->lock == NULL)
		reset_lock(e, l, t);
	return t;
}

/*
 * The waiter's watchdog: T_fail without the token, and the token or the
 * request may be lost (dm_token_timer() starts a new epoch).  A waiter
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
 * epoch asks again).  One long critical section therefore costs probes,
 * N - 1 messages and one answer per T_fail, and no epoch.  Each epoch a
 * wait started doubles its next wait, up to 2^DM_TOKEN_OVERDUE_MAX T_fail.
 * A grant, a withdrawal or a new request starts again at T_fail.
 */
#define DM_TOKEN_OVERDUE_MAX	3
#define DM_TOKEN_USERS_MAX	3

static void
watchdog(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	dm_msec_t t_fail = dm_request_timeout(e) + dm_probe_timeout(e);

	t->probing = false;
	if (t->wanting && !t->in_cs)
		dm_lock_timer_arm(e, l, dm_now(e) + (t_fail << t->overdue));
	else
		dm_lock_timer_stop(e, l);
}

/* A wait starts afresh: no probe out, no entries seen. */
static void
wait_afresh(struct dm_tlock *t)
{
	t->overdue = 0;
	t->probing = false;
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
		dm_send(e, j, dm_token_msg(e, DM_TK_PROBE, l));
		any = true;
	}
	if (!any)
		return false;
	tn->probes++;
	t->probing = true;
	dm_lock_timer_arm(e, l, dm_now(e) + dm_probe_timeout(e));
	return true;
}

/* The wait is overdue: elect (Normal only; see dm_token_timer()). */
static void
overdue(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	struct dm_token_node *tn = dm_token_node(e);

	if (tn->el.status == DM_EL_NORMAL && t->overdue < DM_TOKEN_OVERDUE_MAX)
		t->overdue++;
	t->users_seen = 0;
	t->user_id = 0;
	t->user_from = DM_SLOT_NONE;
	watchdog(e, l, t);
	if (tn->el.status == DM_EL_NORMAL)
		dm_election_start_new_epoch(e, &tn->el, "a token is overdue");
}

void
dm_token_enter(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_tlock *t = dm_lock_state(l);

	if (!t->wanting || t->in_cs)
		return;
	t->wanting = false;
	t->in_cs = true;
	wait_afresh(t);
	t->entry_id = ++dm_token_node(e)->entries;
	if (t->entry_id == 0)
		t->entry_id = ++dm_token_node(e)->entries;	/* 0 means none */
	dm_lock_timer_stop(e, l);
	dm_lock_permitted(e, l);
}

void
dm_token_arrived(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_tlock *t = dm_lock_state(l);

	if (t->wanting)
		dm_token_enter(e, l);
	else
		dm_token_node(e)->ops->pass(e, l);
}

/* The node may act in its epoch: ask for the token now. */
static void
ask_now(struct dm_engine *e, struct dm_lock *l, struct dm_tlock *t)
{
	struct dm_token_node *tn = dm_token_node(e);

	if (t->proxy)
		return;		/* the coordinator's own turn comes at RETURN */
	tn->ops->ask(e, l);
}

/* --- Epoch cut and regeneration (election hooks) --- */

static void
hook_cut(struct dm_engine *e)
{
	/* Acceptance: adopt the epoch; report what we use; all else resets. */
	struct dm_token_node *tn = dm_token_node(e);
	bool coord = dm_token_i_coordinate(e);

	tn->gen++;
	for (struct dm_tlock *t = tn->active, *n; t != NULL; t = n) {
		n = t->next;
		t->proxy = false;
		t->users_seen = 0;
		t->user_id = 0;
		t->user_from = DM_SLOT_NONE;
		reset_lock(e, t->lock, t);
		if (t->in_cs && dm_lock_unpermit(e, t->lock)) {
			/* Permitted in the old epoch but not granted yet (no
			 * valid lease): ask again in the new one.  Kept, it
			 * turned into a grant once a lease held, beside the
			 * holder of a token regenerated by an epoch we missed
			 * (raymond --election invitation 419/4, partition).
			 * A try-once request is refused instead: asked again,
			 * it would wait for the token like any other. */
			t->in_cs = false;
			if (t->try_once) {
				wait_afresh(t);
				dm_lock_timer_stop(e, t->lock);
				dm_lock_refused(e, t->lock, -EBUSY);
			} else {
				t->wanting = true;
				watchdog(e, t->lock, t);
			}
		}
		if (t->in_cs && !coord) {
			t->old_user = true;
			dm_election_report_held(e, &tn->el, t->lock);
		} else if (t->in_cs) {
			t->old_user = false;	/* the coordinator's token is here */
		}
		unlink_lock(tn, t);
	}
}

static void
hook_held(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	/* The coordinator keeps a token lent to 'from' until its RETURN. */
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_lock *l = dm_lock_get(e, m->lock, m->lock_len, true);
	struct dm_tlock *t;

	if (l == NULL) {
		dm_log(e, DM_LOG_ERR, "out of memory recording a lent token", NULL, from);
		return;
	}
	t = dm_token_lock(e, l);
	t->proxy = true;
	t->proxy_for = from;
	tn->lent++;
	link_lock(tn, t);
}

static void
hook_normal(struct dm_engine *e)
{
	/* Waiting nodes ask again in the new epoch. */
	struct dm_token_node *tn = dm_token_node(e);

	for (struct dm_tlock *t = tn->active, *n; t != NULL; t = n) {
		n = t->next;
		(void)dm_token_lock(e, t->lock);
		if (t->wanting && !t->in_cs) {
			watchdog(e, t->lock, t);
			ask_now(e, t->lock, t);
		}
	}
}

static const struct dm_election_hooks token_hooks = {
	.cut = hook_cut,
	.held = hook_held,
	.normal = hook_normal,
};

/* --- struct dm_algorithm --- */

int
dm_token_node_init(struct dm_engine *e, void *node_state, const struct dm_token_ops *ops)
{
	struct dm_token_node *tn = node_state;

	tn->ops = ops;
	tn->gen = 1;
	dm_election_init(e, &tn->el, &token_hooks);
	return dm_election_lock(e) != NULL ? 0 : -ENOMEM;
}

int
dm_token_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t = dm_token_lock(e, l);

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	t->wanting = true;
	t->try_once = try_once;
	wait_afresh(t);
	link_lock(tn, t);
	(void)dm_election_renew_if_stale(e, &tn->el);
	if (tn->el.status == DM_EL_NORMAL && !try_once) {
		watchdog(e, l, t);
		ask_now(e, l, t);
		return 0;
	}
	if (try_once) {
		/* Never wait behind another node: only a token here and free. */
		if (tn->el.status == DM_EL_NORMAL && !t->proxy)
			tn->ops->ask(e, l);
		if (!t->in_cs) {
			dm_token_withdraw(e, l);
			dm_lock_refused(e, l, -EBUSY);
		}
		return 0;
	}
	watchdog(e, l, t);	/* asks when the election ends */
	return 0;
}

void
dm_token_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t = dm_token_lock(e, l);

	t->wanting = false;
	wait_afresh(t);
	dm_lock_timer_stop(e, l);
	unlink_lock(tn, t);
}

void
dm_token_release(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t = dm_token_lock(e, l);
	dm_slot_t c;

	if (!t->in_cs)
		return;
	t->in_cs = false;
	if (t->old_user) {
		/* Lent at a cut: the token goes back to the coordinator. */
		t->old_user = false;
		c = dm_token_coordinator(e);
		if (c != DM_SLOT_NONE)
			dm_send(e, c, dm_token_msg(e, DM_TK_RETURN, l));
	} else {
		tn->ops->pass(e, l);
	}
	unlink_lock(tn, t);
}

bool
dm_token_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	const struct dm_token_node *tn = dm_token_node_const(e);
	const struct dm_tlock *t = dm_lock_state_const(l);

	return t->in_cs && !t->old_user && t->gen == tn->gen && !tn->ops->others_waiting(e, l);
}

static int
on_return(struct dm_engine *e, struct dm_lock *l, dm_slot_t from)
{
	/* A token lent at the cut is free again at the coordinator. */
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t;

	if (l == NULL)
		return 0;
	t = dm_token_lock(e, l);
	if (!t->proxy || t->proxy_for != from)
		return 0;
	t->proxy = false;
	tn->returned++;
	tn->ops->pass(e, l);
	if (t->wanting && !t->in_cs && tn->el.status == DM_EL_NORMAL)
		ask_now(e, l, t);
	unlink_lock(tn, t);
	return 0;
}

/* An overdue waiter asks whether we use l: answer only if we do (its
 * timeout stands for "nobody"), naming this entry. */
static int
on_probe(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_tlock *t;
	struct dm_msg *a;

	if (l == NULL)
		return 0;	/* unknown here: not in use (no state made for it) */
	t = dm_token_lock(e, l);
	if (!t->in_cs || t->entry_id == 0)
		return 0;
	a = dm_token_msg_name(e, DM_TK_PROBE_ANSWER, m);
	a->arg = t->entry_id;
	dm_send(e, from, a);
	return 0;
}

/* Someone uses the lock we wait for: not overdue, unless probes keep
 * finding other entries (the token moves, but not to us). */
static int
on_probe_answer(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t;

	if (l == NULL || m->arg == 0 || m->arg > UINT32_MAX)
		return 0;
	t = dm_token_lock(e, l);
	if (!t->probing || !t->wanting || t->in_cs)
		return 0;	/* late, or a second answer: one entry runs at a time */
	tn->probes_busy++;
	if (t->user_id != 0 && (t->user_from != from || t->user_id != (uint32_t)m->arg))
		t->users_seen++;
	t->user_from = from;
	t->user_id = (uint32_t)m->arg;
	if (t->users_seen >= DM_TOKEN_USERS_MAX) {
		overdue(e, l, t);
		return 0;
	}
	watchdog(e, l, t);
	return 0;
}

int
dm_token_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_token_node *tn = dm_token_node(e);

	if (dm_election_owns_kind(m->kind))
		return dm_election_receive(e, &tn->el, from, m);
	if (m->kind < DM_TK_REQUEST || m->kind >= DM_TK_KIND_MAX_)
		return -EPROTO;
	if (dm_election_is_lock(l))
		return -EPROTO;
	if (!dm_election_current(&tn->el, m))
		return 0;	/* another epoch: an old token is discarded here */
	if (m->kind == DM_TK_PROBE)
		return on_probe(e, l, from, m);
	if (m->kind == DM_TK_PROBE_ANSWER)
		return on_probe_answer(e, l, from, m);
	if (l == NULL && m->kind != DM_TK_RETURN) {
		l = dm_lock_get(e, m->lock, m->lock_len, true);
		if (l == NULL)
			return -ENOMEM;
	}
	if (l != NULL)
		(void)dm_token_lock(e, l);
	switch (m->kind) {
	case DM_TK_REQUEST:
		return tn->ops->on_request(e, l, from, m);
	case DM_TK_TOKEN:
		return tn->ops->on_token(e, l, from, m);
	default:
		return on_return(e, l, from);
	}
}

void
dm_token_timer(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_token_node *tn = dm_token_node(e);
	struct dm_tlock *t;

	if (dm_election_is_lock(l)) {
		dm_election_timer(e, &tn->el);
		return;
	}
	t = dm_token_lock(e, l);
	if (!t->wanting || t->in_cs)
		return;
	/* Waited T_fail: the token or our request may be lost.  Nothing while
	 * an election runs or we await New_State: it has its own timers, and
	 * a second election would refuse the first one's Set_Coordinator. */
	if (tn->el.status != DM_EL_NORMAL) {
		watchdog(e, l, t);
		return;
	}
	/* First ask who uses the lock; its silence (the probe's timeout) or
	 * nobody to ask: overdue. */
	if (t->probing || !probe(e, l, t))
		overdue(e, l, t);
}

void
dm_token_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	struct dm_token_node *tn = dm_token_node(e);

	if (dm_election_is_lock(l)) {
		dm_election_peer_gone(e, &tn->el, slot);
		return;
	}
	/* Per-lock state is rebuilt by the election the removal causes. */
	if (tn->ops->forget != NULL && ((struct dm_tlock *)dm_lock_state(l))->lock != NULL)
		tn->ops->forget(e, l, slot);
}

bool
dm_token_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct dm_token_node *tn = dm_token_node_const(e);
	const struct dm_tlock *t = dm_lock_state_const(l);

	if (dm_election_is_lock(l))
		return false;
	if (t->linked || t->wanting || t->in_cs || t->proxy)
		return false;
	return t->lock == NULL || t->gen != tn->gen || tn->ops->initial(e, l);
}

uint64_t
dm_token_clock_get(const struct dm_engine *e)
{
	return dm_token_node_const(e)->el.k_seen;
}

void
dm_token_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct dm_election *el = &dm_token_node(e)->el;

	if (seq > el->k_seen)
		el->k_seen = seq;
}

int
dm_token_joining_receive(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	/* Not a member yet: answer elections passively; tokens and requests of
	 * the cluster's epochs are none of ours. */
	return dm_election_joining_receive(e, &dm_token_node(e)->el, from, m);
}

/* --- Status --- */

size_t
dm_token_describe_node(const struct dm_engine *e, char *buf, size_t size)
{
	const struct dm_token_node *tn = dm_token_node_const(e);
	size_t len;

	buf[0] = '\0';
	len = dm_election_describe(e, &tn->el, buf, size, 0);
	/* Names without state here: their token waits at the coordinator. */
	len = dm_describe_add(buf, size, len, "idle_tokens_at=%s",
	    tn->el.coord[0] ? tn->el.coord : "-");
	/* Overdue waits asked about (PROBE), and found in use. */
	return dm_describe_add(buf, size, len, "token_probes=%llu token_probes_in_use=%llu",
	    (unsigned long long)tn->probes, (unsigned long long)tn->probes_busy);
}

size_t
dm_token_describe_lock(const struct dm_engine *e, const struct dm_lock *l, char *buf,
    size_t size)
{
	const struct dm_token_node *tn = dm_token_node_const(e);
	const struct dm_tlock *t = dm_lock_state_const(l);
	size_t len = 0;

	buf[0] = '\0';
	if (dm_election_is_lock(l) || t->lock == NULL)
		return 0;
	if (t->gen != tn->gen)	/* state of an older epoch: the epoch's initial one */
		return dm_describe_add(buf, size, len, "token=at_coordinator");
	if (tn->ops->describe != NULL)
		len = tn->ops->describe(e, l, buf, size, len);
	if (t->in_cs)
		len = dm_describe_add(buf, size, len, "in_use");
	if (t->wanting)
		len = dm_describe_add(buf, size, len, "wanted");
	if (t->proxy && t->proxy_for != DM_SLOT_NONE)
		len = dm_describe_add(buf, size, len, "lent_to=%s", dm_roster_name(e, t->proxy_for));
	return len;
}
