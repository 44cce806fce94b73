/*
 * dm_local.c: local clients of one node and the node's phase per lock.
 *
 * Each lock has a FIFO of local waiters and a list of local holders.  The
 * node asks the algorithm for permission in the mode of the FIFO's head,
 * and once permitted grants waiters in order: one exclusive, or a run of
 * shared ones.  A later local waiter may take over without a network round
 * only if the algorithm says no other node waits behind us
 * (may_handoff); otherwise the node releases to the network and asks
 * again, so remote waiters are not starved.  A shared waiter never
 * overtakes an earlier exclusive one (writers are not starved by readers).
 * Owns no protocol decision beyond that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine_private.h"

static void
list_push(struct dm_client_list *q, struct dm_client *c)
{
	c->next = NULL;
	c->prev = q->tail;
	if (q->tail != NULL)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->n++;
}

static void
list_unlink(struct dm_client_list *q, struct dm_client *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		q->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		q->tail = c->prev;
	c->next = c->prev = NULL;
	q->n--;
}

static uint64_t
token_next(struct dm_engine *e)
{
	uint64_t floor = e->epoch << DM_TOKEN_EPOCH_SHIFT;
	uint64_t t = (e->token_hw > floor ? e->token_hw : floor) + 1;

	e->token_hw = t;
	dm_floor_persist(e);	/* before the GRANT that carries t */
	return t;
}

static dm_msec_t
grant_deadline(const struct dm_engine *e)
{
	return dm_lease_needed(e) ? e->lease_until : 0;
}

static void
client_free(struct dm_engine *e, struct dm_client *c)
{
	struct dm_lock *l = c->lock;

	dm_timer_stop(e, &c->wait);
	if (c->granted) {
		list_unlink(&l->holders, c);
		e->held_local--;
	} else {
		list_unlink(&l->waiters, c);
		e->waiting_local--;
	}
	dm_table_client_remove(e, c);
	free(c);
}

static void
client_deny(struct dm_engine *e, struct dm_client *c, int error)
{
	struct dm_effect fx = { .type = DM_FX_DENY,
	    .u.deny = { .handle = c->handle, .error = error } };

	client_free(e, c);
	dm_emit(e, &fx);
}

static void
client_grant(struct dm_engine *e, struct dm_client *c)
{
	struct dm_lock *l = c->lock;
	struct dm_effect fx = { .type = DM_FX_GRANT };

	dm_timer_stop(e, &c->wait);
	list_unlink(&l->waiters, c);
	e->waiting_local--;
	c->granted = true;
	c->token = token_next(e);
	c->since = e->now;
	list_push(&l->holders, c);
	e->held_local++;
	fx.u.grant.handle = c->handle;
	fx.u.grant.token = c->token;
	fx.u.grant.deadline = grant_deadline(e);
	dm_emit(e, &fx);
	/* A holder needs the lease kept up.  The heartbeats stop while
	 * nothing is held or waited for here (dm_lease_heartbeat_timer()),
	 * and a grant made on a lease still running from before, with no
	 * round of the algorithm's own (a token or rcv's roaming request
	 * already here: only Ricart-Agrawala, Lamport and Maekawa open one
	 * per request, dm_lease_round()), started none: the holder lost its
	 * lock a lease after the last round, on a healthy cluster
	 * (tests/cluster/60-algorithms.sh, rcv; 61, raymond; NOTES.md,
	 * "Session 39"). */
	dm_lease_activity(e);
}

/* May waiter c join the current local holders under the node's mode? */
static bool
compatible(const struct dm_lock *l, const struct dm_client *c)
{
	if (l->node_mode == DM_MODE_SHARED && c->mode != DM_MODE_SHARED)
		return false;
	if (l->holders.n == 0)
		return true;
	return c->mode == DM_MODE_SHARED && l->holders.head->mode == DM_MODE_SHARED;
}

/* Grant waiters from the head while the rules allow; fresh: permission was
 * just obtained, so the first batch needs no handoff check. */
static void
grant_from_head(struct dm_engine *e, struct dm_lock *l, bool fresh)
{
	struct dm_client *c;

	while ((c = l->waiters.head) != NULL && compatible(l, c)) {
		if (!fresh && !e->algo->may_handoff(e, l, c->mode))
			break;
		client_grant(e, c);
		if (c->mode == DM_MODE_EXCLUSIVE)
			break;
	}
}

void
dm_local_reconcile(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_client *head;
	int r;

	if (l->in_reconcile)
		return;
	l->in_reconcile = true;
	for (;;) {
		head = l->waiters.head;
		if (l->phase == DM_PHASE_IDLE) {
			if (head == NULL)
				break;
			l->phase = DM_PHASE_REQUESTING;
			l->node_mode = head->mode;
			l->try_request = head->try_once;
			l->fresh = false;
			r = e->algo->request(e, l, head->mode, head->try_once);
			if (r < 0) {
				l->phase = DM_PHASE_IDLE;
				while (l->waiters.head != NULL)
					client_deny(e, l->waiters.head, r);
				break;
			}
			continue;
		}
		if (l->phase == DM_PHASE_REQUESTING) {
			if (head == NULL ||
			    (l->node_mode == DM_MODE_SHARED && head->mode != DM_MODE_SHARED)) {
				e->algo->withdraw(e, l);
				l->phase = DM_PHASE_IDLE;
				continue;
			}
			break;
		}
		/* DM_PHASE_HOLDING */
		if (!dm_lease_grantable(e) && l->holders.n == 0 && head != NULL && !l->lost) {
			dm_lease_activity(e);	/* a heartbeat round will call us back */
			break;
		}
		if (!l->lost && dm_lease_grantable(e))
			grant_from_head(e, l, l->fresh);
		l->fresh = false;
		if (l->holders.n == 0) {
			e->algo->release(e, l);
			l->phase = DM_PHASE_IDLE;
			l->lost = false;
			continue;
		}
		break;
	}
	l->in_reconcile = false;
	dm_lock_maybe_free(e, l);
}

/* Permission from the algorithm (may come from inside request()). */
void
dm_lock_permitted(struct dm_engine *e, struct dm_lock *l)
{
	if (l->phase != DM_PHASE_REQUESTING)
		return;
	l->phase = DM_PHASE_HOLDING;
	l->fresh = true;
	if (strcmp(l->name, DM_ROSTER_LOCK) == 0) {
		dm_roster_lock_permitted(e, l);
		return;
	}
	if (!l->in_reconcile)
		dm_local_reconcile(e, l);
}

bool
dm_lock_unpermit(struct dm_engine *e, struct dm_lock *l)
{
	(void)e;
	if (l->phase != DM_PHASE_HOLDING || l->holders.n != 0 ||
	    strcmp(l->name, DM_ROSTER_LOCK) == 0)
		return false;
	l->phase = DM_PHASE_REQUESTING;
	l->fresh = false;
	return true;
}

void
dm_lock_refused(struct dm_engine *e, struct dm_lock *l, int error)
{
	if (l->phase != DM_PHASE_REQUESTING)
		return;
	l->phase = DM_PHASE_IDLE;
	for (struct dm_client *c = l->waiters.head, *n; c != NULL; c = n) {
		n = c->next;
		if (error != -EBUSY || c->try_once)
			client_deny(e, c, error);
	}
	if (!l->in_reconcile)
		dm_local_reconcile(e, l);
}

int
dm_local_acquire(struct dm_engine *e, const struct dm_event *ev)
{
	const char *name = ev->u.acquire.lock;
	size_t len = ev->u.acquire.lock_len;
	enum dm_mode mode = ev->u.acquire.mode;
	bool try_once = ev->u.acquire.wait_ms == DM_WAIT_TRY;
	struct dm_effect deny = { .type = DM_FX_DENY, .u.deny.handle = ev->u.acquire.handle };
	struct dm_lock *l;
	struct dm_client *c;

	if (!dm_lock_name_valid(name, len) || (mode != DM_MODE_EXCLUSIVE && mode != DM_MODE_SHARED) ||
	    (len >= strlen(DM_RESERVED_PREFIX) &&
	    memcmp(name, DM_RESERVED_PREFIX, strlen(DM_RESERVED_PREFIX)) == 0) ||
	    dm_table_client_find(e, ev->u.acquire.handle) != NULL) {
		deny.u.deny.error = -EINVAL;
		dm_emit(e, &deny);
		return -EINVAL;
	}
	if (mode == DM_MODE_SHARED && !(e->algo->caps & DM_CAP_SHARED)) {
		deny.u.deny.error = -EOPNOTSUPP;
		dm_emit(e, &deny);
		return 0;
	}
	if (!dm_roster_ready(e)) {
		deny.u.deny.error = -EAGAIN;
		dm_emit(e, &deny);
		return 0;
	}
	l = dm_lock_get(e, name, len, true);
	c = calloc(1, sizeof(*c));
	if (l == NULL || c == NULL) {
		free(c);
		if (l != NULL)
			dm_lock_maybe_free(e, l);
		deny.u.deny.error = -ENOMEM;
		dm_emit(e, &deny);
		return -ENOMEM;
	}
	c->handle = ev->u.acquire.handle;
	c->lock = l;
	c->mode = (uint8_t)mode;
	c->try_once = try_once;
	c->wait.kind = DM_TIMER_WAIT;
	c->since = e->now;
	dm_table_client_insert(e, c);
	list_push(&l->waiters, c);
	e->waiting_local++;

	if (try_once) {
		/* Granted now, or asked of the cluster as a fresh try, or refused. */
		bool now_ok = l->phase == DM_PHASE_HOLDING && l->waiters.head == c && !l->lost &&
		    compatible(l, c) && e->algo->may_handoff(e, l, c->mode) &&
		    dm_lease_grantable(e);
		bool ask = l->phase == DM_PHASE_IDLE && l->waiters.head == c;
		if (now_ok) {
			client_grant(e, c);
			return 0;
		}
		if (!ask) {
			client_deny(e, c, -EBUSY);
			dm_lock_maybe_free(e, l);
			return 0;
		}
	} else if (ev->u.acquire.wait_ms != DM_WAIT_FOREVER) {
		dm_msec_t at = e->now + ev->u.acquire.wait_ms;
		if (at < e->now)
			at = UINT64_MAX;
		dm_timer_arm(e, &c->wait, at);
	}
	dm_local_reconcile(e, l);
	return 0;
}

int
dm_local_release(struct dm_engine *e, uint64_t handle, bool cancel)
{
	struct dm_client *c = dm_table_client_find(e, handle);
	struct dm_lock *l;

	if (c == NULL)
		return -ENOENT;
	if (!cancel && !c->granted)
		return -EINVAL;
	l = c->lock;
	client_free(e, c);
	dm_local_reconcile(e, l);
	return 0;
}

void
dm_local_wait_expired(struct dm_engine *e, struct dm_client *c)
{
	struct dm_lock *l = c->lock;

	client_deny(e, c, -ETIMEDOUT);
	dm_local_reconcile(e, l);
}

struct lose_args {
	int	reason;
	bool	deny_waiters;
};

static void
lose_lock(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	const struct lose_args *a = arg;

	if (strcmp(l->name, DM_ROSTER_LOCK) == 0)
		return;
	while (l->holders.head != NULL) {
		struct dm_effect fx = { .type = DM_FX_LOST,
		    .u.lost = { .handle = l->holders.head->handle, .reason = a->reason } };
		client_free(e, l->holders.head);
		dm_emit(e, &fx);
	}
	if (a->deny_waiters)
		while (l->waiters.head != NULL)
			client_deny(e, l->waiters.head, a->reason);
	if (l->phase == DM_PHASE_HOLDING)
		l->lost = true;
	dm_local_reconcile(e, l);
}

/* Every local holder loses its lock (lease ran out, node removed). */
void
dm_local_lose_all(struct dm_engine *e, int reason, bool deny_waiters)
{
	struct lose_args a = { .reason = reason, .deny_waiters = deny_waiters };

	dm_table_lock_foreach(e, lose_lock, &a);
}

static void
extend_lock(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	for (struct dm_client *c = l->holders.head; c != NULL && arg == NULL; c = c->next) {
		struct dm_effect fx = { .type = DM_FX_EXTEND,
		    .u.extend = { .handle = c->handle, .deadline = e->lease_until } };
		dm_emit(e, &fx);
	}
	/* Grants that waited for a valid lease. */
	if (l->phase == DM_PHASE_HOLDING && l->waiters.head != NULL)
		dm_local_reconcile(e, l);
}

/* The lease moved: extend every grant, serve grants that waited for it. */
void
dm_local_extend_all(struct dm_engine *e)
{
	dm_table_lock_foreach(e, extend_lock, NULL);
}

/* The roster changed: grants that waited for a lease may be due now. */
void
dm_local_kick_all(struct dm_engine *e)
{
	dm_table_lock_foreach(e, extend_lock, e);
}
