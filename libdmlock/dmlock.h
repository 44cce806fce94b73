/*
 * dmlock.h: the public API of libdmlock, the client library of dmlock, the
 * cluster-wide lock service.  This is the only installed header; every type
 * is opaque and every symbol is prefixed dmlock_ / DMLOCK_.
 *
 * Conventions
 *   - Fallible functions return 0 (or a non-negative value where stated) on
 *     success and a negative errno-style code on failure; dmlock_strerror()
 *     turns a code into text.  ret_ out-parameters are untouched on failure.
 *   - Times are milliseconds.  Deadlines are absolute values of
 *     CLOCK_BOOTTIME (clock_gettime(CLOCK_BOOTTIME) in ms), 0 meaning none.
 *   - The library never logs, never installs signal handlers and opens
 *     every file descriptor close-on-exec, so a child process never inherits
 *     the daemon connection (and cannot keep a lock alive).
 *
 * Thread safety
 *   A struct dmlock_conn and every struct dmlock_lock made on it must be used
 *   by one thread at a time (one connection per thread is the simple rule;
 *   otherwise serialise all calls on a connection with your own mutex).
 *   Distinct connections are fully independent.  dmlock_strerror() and
 *   dmlock_socket_path() are thread-safe.
 *
 * Lifetime of a lock
 *   A lock closes when its connection closes: if the process dies (even by
 *   SIGKILL), the daemon releases every lock of that connection at once.
 *   A grant carries a deadline; the daemon keeps moving it forward while the
 *   lock is safely held.  If the deadline passes without an extension (the
 *   daemon froze, died or was cut off), the library itself declares the lock
 *   lost, so a client never believes it holds a lock it may not hold.
 *
 * Blocking use
 *	struct dmlock_conn *c;  struct dmlock_lock *l;
 *	if (dmlock_connect(NULL, &c) < 0) ...
 *	r = dmlock_acquire(c, "orders/rebalance", DMLOCK_EXCLUSIVE, 5000, &l);
 *	if (r == -EBUSY || r == -ETIMEDOUT) ... not acquired
 *	... critical section; dmlock_lock_check(l) == 0 while still held ...
 *	dmlock_release(l);
 *	dmlock_close(c);
 *
 * Event-loop use: poll dmlock_fd() for dmlock_events() with a timeout of
 * dmlock_timeout(), then call dmlock_process(); results arrive through the
 * callback given to dmlock_submit_acquire() and through dmlock_lock_state().
 */
#ifndef DMLOCK_H
#define DMLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DMLOCK_PROTOCOL_VERSION	1

/* Limits, mirrored from the daemon. */
#define DMLOCK_NAME_MAX		255	/* bytes in a lock name */
#define DMLOCK_PATH_MAX		108	/* bytes in a socket path, incl. NUL */

struct dmlock_conn;	/* one connection to dmlockd */
struct dmlock_lock;	/* one acquire request, then the grant it became */

enum dmlock_mode {
	DMLOCK_EXCLUSIVE = 0,
	DMLOCK_SHARED = 1,
};

/* timeout_ms values for acquire besides a positive number of ms. */
#define DMLOCK_TRY	  ((int64_t)0)	/* fail with -EBUSY at once if not free */
#define DMLOCK_FOREVER	  ((int64_t)-1)	/* wait without bound */

/* Where a lock object stands. */
enum dmlock_state {
	DMLOCK_STATE_PENDING = 1,	/* submitted, no answer yet */
	DMLOCK_STATE_HELD,		/* granted and not known lost */
	DMLOCK_STATE_RELEASING,		/* release sent, not yet confirmed */
	DMLOCK_STATE_RELEASED,		/* released or cancelled: done */
	DMLOCK_STATE_DENIED,		/* request failed, see dmlock_lock_error() */
	DMLOCK_STATE_LOST,		/* was held, no longer is, see dmlock_lock_error() */
};

/* What a callback is told about. */
enum dmlock_event {
	DMLOCK_EVENT_GRANTED = 1,	/* now HELD; token and deadline are set */
	DMLOCK_EVENT_DENIED,		/* now DENIED; error says why */
	DMLOCK_EVENT_EXTENDED,		/* still HELD; the deadline moved */
	DMLOCK_EVENT_LOST,		/* now LOST; error says why */
	DMLOCK_EVENT_RELEASED,		/* now RELEASED */
};

/*
 * Callback for the non-blocking API, called from inside dmlock_process()
 * (and from the blocking calls, which process input too).  error is 0 for
 * GRANTED/EXTENDED/RELEASED, else the negative code that
 * dmlock_lock_error() returns.  The callback may call dmlock_lock_free() or
 * dmlock_submit_release() on this lock and may submit new requests; it must
 * not call dmlock_close() or any blocking function.  A lost lock gets one
 * LOST event; a lock given to dmlock_lock_free() or dmlock_release() gets no
 * callback any more, even if the connection breaks during that call.
 */
typedef void dmlock_callback_fn(struct dmlock_lock *lock, enum dmlock_event event,
    int error, void *userdata);

/* ---- connection ---------------------------------------------------- */

/*
 * Resolve the default socket path into buf (size bytes): $DMLOCK_SOCKET if
 * set and non-empty; else, for a non-root user with $XDG_RUNTIME_DIR set,
 * $XDG_RUNTIME_DIR/dmlock/dmlockd.sock if that socket exists; else
 * /run/dmlock/dmlockd.sock.  Returns 0, or -ENAMETOOLONG.
 */
int dmlock_socket_path(char *buf, size_t size);

/*
 * Connect to dmlockd at path (NULL: dmlock_socket_path()) and read its
 * greeting.  Returns 0, -ENOENT / -ECONNREFUSED (no daemon there), -EACCES,
 * -ENAMETOOLONG, -EPROTO (not a dmlockd, or an unsupported protocol
 * version), -ETIMEDOUT (no greeting within 10 s), -EUSERS (the daemon is
 * at its limit of clients, in all or for this user, and refused the
 * connection; try again later), -EIO
 * (the daemon refused the connection for another reason), -ENOMEM.
 */
int dmlock_connect(const char *path, struct dmlock_conn **ret);

/*
 * Close the connection; the daemon releases every lock of it at once.  Lock
 * objects still alive become LOST (-ECONNRESET) without callbacks and must
 * still be freed with dmlock_lock_free() (or dmlock_release()), which is
 * allowed after dmlock_close().  NULL-safe; returns NULL.
 */
struct dmlock_conn *dmlock_close(struct dmlock_conn *conn);

/* The daemon's node name and algorithm from its greeting; valid until close. */
const char *dmlock_conn_node(const struct dmlock_conn *conn);
const char *dmlock_conn_algorithm(const struct dmlock_conn *conn);

/* ---- blocking API -------------------------------------------------- */

/*
 * Acquire lock name (1..255 printable ASCII bytes, no space) in mode.
 * timeout_ms: DMLOCK_TRY (0), DMLOCK_FOREVER (-1) or a wait in ms.
 * On success *ret is a HELD lock, to be given back to dmlock_release().
 * Returns 0, -EBUSY (try: the lock is taken), -ETIMEDOUT (the wait expired),
 * -ETIME (the daemon did not answer within the wait plus 10 s: frozen or
 * overloaded), -ENOLCK (granted but lost again before the call returned,
 * e.g. the grant's deadline had already passed), -EINVAL (bad name, mode
 * or timeout), -EACCES (refused by the daemon's access control),
 * -EOPNOTSUPP (mode not supported by the algorithm), -ESHUTDOWN (daemon
 * shutting down), -ENOBUFS (too many requests outstanding on this
 * connection), -ECONNRESET / -EPIPE (connection lost), -EPROTO, -ENOMEM,
 * -EIO.
 */
int dmlock_acquire(struct dmlock_conn *conn, const char *name, enum dmlock_mode mode,
    int64_t timeout_ms, struct dmlock_lock **ret);

/*
 * Release a held lock (or cancel a pending request), wait for the daemon's
 * confirmation and free the lock object in every case.  Returns 0; -ENOLCK
 * if the lock had already been lost (it was not held up to this call);
 * -ECONNRESET / -EPIPE if the connection broke (the daemon then released
 * the lock anyway).  NULL is allowed (returns 0).
 */
int dmlock_release(struct dmlock_lock *lock);

/*
 * Is the lock still held?  Processes input already waiting on the socket
 * (without blocking) and compares the grant deadline with CLOCK_BOOTTIME.
 * Returns 0 if HELD, -ENOLCK if it is lost, released or was never granted.
 */
int dmlock_lock_check(struct dmlock_lock *lock);

/* ---- non-blocking API ---------------------------------------------- */

/* The socket to poll; valid until dmlock_close().  -EBADF after a
 * connection error. */
int dmlock_fd(const struct dmlock_conn *conn);

/* poll(2) events to wait for on dmlock_fd(): POLLIN, plus POLLOUT while
 * requests are still buffered. */
short dmlock_events(const struct dmlock_conn *conn);

/* Milliseconds until dmlock_process() must run even without input (the
 * nearest grant deadline), for poll(2)'s timeout; -1 for none. */
int dmlock_timeout(const struct dmlock_conn *conn);

/*
 * Do the work that is ready: write buffered requests, read and dispatch
 * replies (callbacks run from here), declare locks whose deadline passed
 * lost.  Never blocks.  Returns 0, or -ECONNRESET / -EPIPE / -EPROTO when
 * the connection broke; then every PENDING lock becomes DENIED and every
 * HELD lock LOST with that code (callbacks run), and later calls on the
 * connection return the same code.
 */
int dmlock_process(struct dmlock_conn *conn);

/*
 * Submit an acquire and return at once.  *ret is a PENDING lock owned by the
 * caller (free it with dmlock_lock_free() or dmlock_release()).  cb (may be
 * NULL) is called with userdata on every event of this lock.  Returns 0,
 * -EINVAL, -ENOBUFS (too many outstanding), -ECONNRESET / -EPIPE, -ENOMEM.
 */
int dmlock_submit_acquire(struct dmlock_conn *conn, const char *name,
    enum dmlock_mode mode, int64_t timeout_ms, dmlock_callback_fn *cb,
    void *userdata, struct dmlock_lock **ret);

/*
 * Ask the daemon to release a HELD lock or to cancel a PENDING one, without
 * waiting.  The lock turns RELEASING, then RELEASED with a
 * DMLOCK_EVENT_RELEASED callback.  Returns 0, -ENOLCK if the lock is not
 * PENDING or HELD, -ECONNRESET / -EPIPE.
 */
int dmlock_submit_release(struct dmlock_lock *lock);

/*
 * Free a lock object.  If it is still PENDING or HELD, a cancel is sent
 * (best effort, no wait): the daemon releases it.  NULL-safe; returns NULL.
 */
struct dmlock_lock *dmlock_lock_free(struct dmlock_lock *lock);

/* ---- lock attributes ----------------------------------------------- */

enum dmlock_state dmlock_lock_state(const struct dmlock_lock *lock);
/* 0, or why the lock was DENIED or LOST: a negative code as for
 * dmlock_acquire(); for LOST: -ETIMEDOUT (lease or deadline expired
 * without extension), -ESHUTDOWN, -EIDRM (this node was removed from the
 * cluster), -ECONNRESET / -EPIPE (connection lost), -EIO. */
int dmlock_lock_error(const struct dmlock_lock *lock);
/* Fencing token of the grant (strictly increasing per lock name across the
 * cluster); 0 before the grant. */
uint64_t dmlock_lock_token(const struct dmlock_lock *lock);
/* Current grant deadline, CLOCK_BOOTTIME ms; 0 = none (or not granted). */
uint64_t dmlock_lock_deadline(const struct dmlock_lock *lock);
/* The daemon's explanation of the last DENIED or LOST of lock (e.g. the
 * access rule that refused it), "" if none; valid while lock lives
 * (since 1.1). */
const char *dmlock_lock_message(const struct dmlock_lock *lock);
/* The same for the most recent DENIED or LOST of any lock of conn, which
 * outlives the lock (dmlock_acquire() frees a refused lock) (since 1.1). */
const char *dmlock_conn_message(const struct dmlock_conn *conn);
const char *dmlock_lock_name(const struct dmlock_lock *lock);
enum dmlock_mode dmlock_lock_mode(const struct dmlock_lock *lock);
void *dmlock_lock_userdata(const struct dmlock_lock *lock);

/* ---- daemon queries (blocking) -------------------------------------- */

/*
 * Round trip to the daemon.  Returns 0 or a negative code; *ret_rtt_us
 * (may be NULL) gets the round-trip time in microseconds.
 */
int dmlock_ping(struct dmlock_conn *conn, int64_t *ret_rtt_us);

/*
 * The daemon's STATUS report as text: the lines of dmlock-protocol(7)
 * between "STATUS" and "END" (NODE, PEER, LOCK, ... each ending in '\n'),
 * NUL-terminated, in *ret which the caller frees with free(3).
 * Returns 0, -ENOMEM, -EPROTO, -ECONNRESET / -EPIPE, -ETIMEDOUT.
 */
int dmlock_status(struct dmlock_conn *conn, char **ret);

/*
 * Send one administrative request of dmlock-protocol(7) -- "STATUS",
 * "LOCKS", "LEAVE", "REMOVE NODE" or "JOIN NODE@HOST:PORT", with or
 * without a trailing newline -- and wait for its answer (since 1.1).
 * Returns 0 with the answer block's lines (each ending in '\n') in *ret;
 * or, when the daemon refused it, a negative code with the daemon's
 * explanation (one line, no newline) in *ret: -EACCES (access control),
 * -ENOENT (unknown node), -EINVAL (bad node name), -EALREADY (wrong state,
 * e.g. already leaving), -EOPNOTSUPP (not supported by this daemon),
 * -EIO (other).  In both cases the caller frees *ret with free(3).  On
 * other errors (-EINVAL for a request that is not one of these, -ENOMEM,
 * -EPROTO, -ECONNRESET / -EPIPE, -ETIMEDOUT) *ret is NULL.
 */
int dmlock_query(struct dmlock_conn *conn, const char *request, char **ret);

/* ---- errors --------------------------------------------------------- */

/* A static description of err (negative or positive errno); never NULL. */
const char *dmlock_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* DMLOCK_H */
