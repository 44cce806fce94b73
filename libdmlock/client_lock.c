/*
 * client_lock.c: libdmlock's lock calls: submitting an acquire or a release,
 * freeing a lock object, the blocking dmlock_acquire() and dmlock_release()
 * built on top of dmlock_process(), dmlock_lock_check() and the lock
 * accessors.  The connection they run on (I/O, dispatch of daemon lines,
 * expiry) is client.c's.  Never logs, never touches signals.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmlock.h"
#include "internal.h"
#include "local_proto.h"

/* ---- locks: non-blocking ----------------------------------------------- */

DMLOCK_EXPORT int
dmlock_submit_acquire(struct dmlock_conn *conn, const char *name, enum dmlock_mode mode,
    int64_t timeout_ms, dmlock_callback_fn *cb, void *userdata, struct dmlock_lock **ret)
{
	struct lp_request req = { .verb = LP_ACQUIRE };
	struct dmlock_lock *l;
	int r;

	if (conn == NULL || name == NULL || ret == NULL)
		return -EINVAL;
	if (conn->broken != 0)
		return conn->broken;
	size_t len = strlen(name);
	if (!dm_lock_name_valid(name, len) ||
	    (mode != DMLOCK_EXCLUSIVE && mode != DMLOCK_SHARED) || timeout_ms < -1 ||
	    (timeout_ms > 0 && (uint64_t)timeout_ms > LP_WAIT_MS_MAX))
		return -EINVAL;
	if (conn->n_daemon >= LP_REQUESTS_MAX)
		return -ENOBUFS;

	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->id = conn->next_id++;
	memcpy(l->name, name, len + 1);
	l->mode = mode;
	l->state = DMLOCK_STATE_PENDING;
	l->cb = cb;
	l->userdata = userdata;

	snprintf(req.id, sizeof(req.id), "%" PRIu64, l->id);
	memcpy(req.lock, name, len + 1);
	req.lock_len = len;
	req.mode = mode == DMLOCK_SHARED ? DM_MODE_SHARED : DM_MODE_EXCLUSIVE;
	req.wait_ms = timeout_ms < 0 ? LP_WAIT_FOREVER : (uint64_t)timeout_ms;
	r = conn_send_request(conn, &req);
	if (r < 0)
		goto fail;
	conn->n_daemon++;
	lock_link(conn, l);
	*ret = l;
	return 0;
fail:
	free(l);
	return r;
}

DMLOCK_EXPORT int
dmlock_submit_release(struct dmlock_lock *lock)
{
	if (lock == NULL)
		return -EINVAL;
	if (lock->state != DMLOCK_STATE_PENDING && lock->state != DMLOCK_STATE_HELD)
		return -ENOLCK;
	if (lock->conn == NULL)
		return -ECONNRESET;
	int r = conn_send_id(lock->conn, LP_CANCEL, lock->id);
	if (r < 0)
		return r;
	lock->state = DMLOCK_STATE_RELEASING;
	return 0;
}

DMLOCK_EXPORT struct dmlock_lock *
dmlock_lock_free(struct dmlock_lock *lock)
{
	if (lock == NULL)
		return NULL;
	/* A CANCEL that fails breaks the connection, which calls the callbacks
	 * of live locks: not this one's, which might free it a second time. */
	lock->cb = NULL;
	if (lock->conn != NULL && lock->conn->broken == 0 &&
	    (lock->state == DMLOCK_STATE_PENDING || lock->state == DMLOCK_STATE_HELD))
		(void)conn_send_id(lock->conn, LP_CANCEL, lock->id);
	lock_unlink(lock);
	free(lock);
	return NULL;
}

/* ---- locks: blocking ----------------------------------------------------- */

DMLOCK_EXPORT int
dmlock_acquire(struct dmlock_conn *conn, const char *name, enum dmlock_mode mode,
    int64_t timeout_ms, struct dmlock_lock **ret)
{
	struct dmlock_lock *l;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dmlock_submit_acquire(conn, name, mode, timeout_ms, NULL, NULL, &l);
	if (r < 0)
		return r;
	uint64_t until = 0;
	if (timeout_ms >= 0)
		until = dmlock_now_ms() + (uint64_t)timeout_ms + DAEMON_GRACE_MS;
	while (l->state == DMLOCK_STATE_PENDING) {
		r = conn_wait(conn, until);
		if (r < 0 && l->state == DMLOCK_STATE_PENDING) {
			dmlock_lock_free(l);	/* cancels it */
			/* Our own give-up on a silent daemon is not the daemon
			 * saying the wait expired (-ETIMEDOUT). */
			return r == -ETIMEDOUT ? -ETIME : r;
		}
	}
	if (l->state != DMLOCK_STATE_HELD) {
		/* Granted and lost before we return (its LOST came with the
		 * grant, or the grant's deadline had passed): not held, and
		 * not a wait that expired either. */
		if (l->state == DMLOCK_STATE_LOST)
			r = -ENOLCK;
		else
			r = l->error < 0 ? l->error : -EIO;
		dmlock_lock_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

DMLOCK_EXPORT int
dmlock_release(struct dmlock_lock *lock)
{
	int r = 0;

	if (lock == NULL)
		return 0;
	/* The lock is freed here in every case: no callback of it may run (one
	 * that frees it, as callbacks may, would free it twice). */
	lock->cb = NULL;
	struct dmlock_conn *c = lock->conn;
	if (lock->state == DMLOCK_STATE_PENDING || lock->state == DMLOCK_STATE_HELD) {
		r = dmlock_submit_release(lock);
		uint64_t until = dmlock_now_ms() + DAEMON_GRACE_MS;
		while (r == 0 && lock->state == DMLOCK_STATE_RELEASING)
			r = conn_wait(c, until);
		if (r == 0 && lock->was_lost)
			r = -ENOLCK;
		else if (r == 0 && lock->error < 0 && c->broken != 0)
			r = lock->error;
	} else if (lock->was_lost || lock->state == DMLOCK_STATE_DENIED)
		r = -ENOLCK;
	dmlock_lock_free(lock);
	return r;
}

DMLOCK_EXPORT int
dmlock_lock_check(struct dmlock_lock *lock)
{
	if (lock == NULL)
		return -EINVAL;
	if (lock->conn != NULL && lock->state == DMLOCK_STATE_HELD)
		(void)dmlock_process(lock->conn);
	return lock->state == DMLOCK_STATE_HELD ? 0 : -ENOLCK;
}

DMLOCK_EXPORT enum dmlock_state
dmlock_lock_state(const struct dmlock_lock *lock)
{
	return lock->state;
}

DMLOCK_EXPORT int
dmlock_lock_error(const struct dmlock_lock *lock)
{
	return lock->error;
}

DMLOCK_EXPORT uint64_t
dmlock_lock_token(const struct dmlock_lock *lock)
{
	return lock != NULL ? lock->token : 0;
}

DMLOCK_EXPORT uint64_t
dmlock_lock_deadline(const struct dmlock_lock *lock)
{
	return lock != NULL && lock->state == DMLOCK_STATE_HELD ? lock->deadline : 0;
}

DMLOCK_EXPORT const char *
dmlock_lock_name(const struct dmlock_lock *lock)
{
	return lock != NULL ? lock->name : NULL;
}

DMLOCK_EXPORT enum dmlock_mode
dmlock_lock_mode(const struct dmlock_lock *lock)
{
	return lock->mode;
}

DMLOCK_EXPORT void *
dmlock_lock_userdata(const struct dmlock_lock *lock)
{
	return lock != NULL ? lock->userdata : NULL;
}

DMLOCK_EXPORT const char *
dmlock_lock_message(const struct dmlock_lock *lock)
{
	return lock != NULL ? lock->message : "";
}
