/*
 * client.c: libdmlock's connection and lock objects: connect, buffered
 * non-blocking I/O on the Unix socket, dispatch of daemon lines to lock
 * objects and callbacks, self-detected expiry of grant deadlines, and the
 * blocking calls built on top of dmlock_process().  Speaks the protocol only
 * through local_proto.h.  Never logs, never touches signals.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dmlock.h"
#include "internal.h"
#include "local_proto.h"
#include "socket_path.h"

#define CONN_INBUF_SIZE		4096
#define CONN_OUTBUF_MAX		(64 * 1024)
#define GREETING_TIMEOUT_MS	10000
/* How long a blocking call waits for the daemon beyond the wait it asked
 * for before giving up on a silent daemon. */
#define DAEMON_GRACE_MS		10000
#define STATUS_MAX		(4 * 1024 * 1024)

struct dmlock_conn {
	int		 fd;
	int		 broken;	/* 0, or the error that broke the connection */
	char		 node[DM_NODE_NAME_MAX + 1];
	char		 algorithm[DM_ALGORITHM_NAME_MAX + 1];

	char		 in[CONN_INBUF_SIZE];
	size_t		 in_len;
	char		*out;
	size_t		 out_len;
	size_t		 out_cap;

	struct dmlock_lock *locks;	/* live lock objects of this connection */
	size_t		 n_daemon;	/* ids the daemon still tracks */
	uint64_t	 next_id;

	unsigned	 pongs;		/* PONG lines received */
	bool		 status_active;	/* collecting a status block */
	bool		 status_done;
	char		*status;
	size_t		 status_len;
	int		 status_error;	/* ERROR - answered the query instead */
	char		 message[LP_TEXT_MAX + 1];	/* text of the last DENIED/LOST */
};

struct dmlock_lock {
	struct dmlock_conn *conn;	/* NULL once the connection is closed */
	struct dmlock_lock *prev, *next;
	uint64_t	 id;
	char		 name[DM_LOCK_NAME_MAX + 1];
	enum dmlock_mode mode;
	enum dmlock_state state;
	int		 error;
	uint64_t	 token;
	uint64_t	 deadline;
	bool		 was_lost;	/* lost before a release was asked */
	char		 message[LP_TEXT_MAX + 1];	/* text of DENIED/LOST */
	dmlock_callback_fn *cb;
	void		*userdata;
};

static int conn_flush(struct dmlock_conn *c);

/* ---- small helpers ---------------------------------------------------- */

static void
lock_link(struct dmlock_conn *c, struct dmlock_lock *l)
{
	l->conn = c;
	l->prev = NULL;
	l->next = c->locks;
	if (c->locks != NULL)
		c->locks->prev = l;
	c->locks = l;
}

static void
lock_unlink(struct dmlock_lock *l)
{
	struct dmlock_conn *c = l->conn;
	if (c == NULL)
		return;
	if (l->prev != NULL)
		l->prev->next = l->next;
	else
		c->locks = l->next;
	if (l->next != NULL)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	l->conn = NULL;
}

static struct dmlock_lock *
lock_find(struct dmlock_conn *c, const char *id)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(id, &end, 10);
	if (errno != 0 || *end != '\0')
		return NULL;
	for (struct dmlock_lock *l = c->locks; l != NULL; l = l->next)
		if (l->id == v)
			return l;
	return NULL;
}

/* Change state and tell the callback; l must not be used afterwards. */
static void
lock_event(struct dmlock_lock *l, enum dmlock_state state, enum dmlock_event ev, int error)
{
	l->state = state;
	if (error != 0)
		l->error = error;
	if (l->cb != NULL)
		l->cb(l, ev, error, l->userdata);
}

static int
conn_queue(struct dmlock_conn *c, const char *line, size_t len)
{
	if (c->broken != 0)
		return c->broken;
	if (c->out_len + len > CONN_OUTBUF_MAX)
		return -ENOBUFS;
	if (c->out_len + len > c->out_cap) {
		size_t cap = c->out_cap == 0 ? 1024 : c->out_cap;
		while (cap < c->out_len + len)
			cap *= 2;
		char *p = realloc(c->out, cap);
		if (p == NULL)
			return -ENOMEM;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, line, len);
	c->out_len += len;
	return 0;
}

static int
conn_send_request(struct dmlock_conn *c, const struct lp_request *req)
{
	char line[LP_LINE_MAX];
	int n = lp_request_format(line, sizeof(line), req);
	if (n < 0)
		return n;
	int r = conn_queue(c, line, (size_t)n);
	if (r < 0)
		return r;
	r = conn_flush(c);
	return r == -EAGAIN ? 0 : r;
}

static int
conn_send_id(struct dmlock_conn *c, enum lp_verb verb, uint64_t id)
{
	struct lp_request req = { .verb = verb };
	snprintf(req.id, sizeof(req.id), "%" PRIu64, id);
	return conn_send_request(c, &req);
}

/* The connection broke: fail every live lock (callbacks run). */
static int
conn_fail(struct dmlock_conn *c, int error)
{
	if (c->broken != 0)
		return c->broken;
	c->broken = error;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->out_len = 0;
	c->n_daemon = 0;
	bool again = true;
	while (again) {
		again = false;
		for (struct dmlock_lock *l = c->locks; l != NULL; l = l->next) {
			if (l->state == DMLOCK_STATE_PENDING)
				lock_event(l, DMLOCK_STATE_DENIED, DMLOCK_EVENT_DENIED, error);
			else if (l->state == DMLOCK_STATE_HELD) {
				l->was_lost = true;
				lock_event(l, DMLOCK_STATE_LOST, DMLOCK_EVENT_LOST, error);
			} else if (l->state == DMLOCK_STATE_RELEASING) {
				l->error = error;
				lock_event(l, DMLOCK_STATE_RELEASED, DMLOCK_EVENT_RELEASED, 0);
			} else
				continue;
			again = true;	/* the callback may have changed the list */
			break;
		}
	}
	return error;
}

static int
conn_flush(struct dmlock_conn *c)
{
	if (c->broken != 0)
		return c->broken;
	while (c->out_len > 0) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -EAGAIN;
			return conn_fail(c, errno == EPIPE ? -EPIPE : -ECONNRESET);
		}
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
	return 0;
}

/* ---- dispatch of daemon lines ---------------------------------------- */

static int
status_append(struct dmlock_conn *c, const char *text, size_t len)
{
	if (c->status_len + len + 2 > STATUS_MAX)
		return -EPROTO;
	char *p = realloc(c->status, c->status_len + len + 2);
	if (p == NULL)
		return -ENOMEM;
	c->status = p;
	memcpy(c->status + c->status_len, text, len);
	c->status_len += len;
	c->status[c->status_len++] = '\n';
	c->status[c->status_len] = '\0';
	return 0;
}

static void
dispatch_terminal(struct dmlock_conn *c, const struct lp_reply *rep, struct dmlock_lock *l)
{
	if (c->n_daemon > 0)
		c->n_daemon--;
	if (l == NULL)
		return;		/* a lock the caller freed already */
	if (rep->type == LP_R_DENIED || rep->type == LP_R_LOST) {
		size_t n = rep->text_len < LP_TEXT_MAX ? rep->text_len : LP_TEXT_MAX;
		memcpy(l->message, rep->text, n);
		l->message[n] = '\0';
		memcpy(c->message, l->message, n + 1);
	}
	switch (rep->type) {
	case LP_R_DENIED:
		if (l->state == DMLOCK_STATE_PENDING)
			lock_event(l, DMLOCK_STATE_DENIED, DMLOCK_EVENT_DENIED, rep->error);
		else if (l->state == DMLOCK_STATE_RELEASING)
			lock_event(l, DMLOCK_STATE_RELEASED, DMLOCK_EVENT_RELEASED, 0);
		break;
	case LP_R_LOST:
		if (l->state == DMLOCK_STATE_HELD) {
			l->was_lost = true;
			lock_event(l, DMLOCK_STATE_LOST, DMLOCK_EVENT_LOST, rep->error);
		} else if (l->state == DMLOCK_STATE_RELEASING) {
			l->was_lost = true;
			l->error = rep->error;
			lock_event(l, DMLOCK_STATE_RELEASED, DMLOCK_EVENT_RELEASED, 0);
		}
		break;
	default: /* RELEASED */
		if (l->state == DMLOCK_STATE_RELEASING || l->state == DMLOCK_STATE_PENDING ||
		    l->state == DMLOCK_STATE_HELD)
			lock_event(l, DMLOCK_STATE_RELEASED, DMLOCK_EVENT_RELEASED, 0);
		break;
	}
}

static int
dispatch_line(struct dmlock_conn *c, const char *line, size_t len)
{
	struct lp_reply rep;
	struct dmlock_lock *l;

	if (lp_reply_parse(line, len, &rep) < 0)
		return -EPROTO;
	switch (rep.type) {
	case LP_R_GRANTED:
		l = lock_find(c, rep.id);
		if (l == NULL || l->state != DMLOCK_STATE_PENDING)
			return 0;
		l->token = rep.token;
		l->deadline = rep.deadline;
		lock_event(l, DMLOCK_STATE_HELD, DMLOCK_EVENT_GRANTED, 0);
		return 0;
	case LP_R_EXTEND:
		l = lock_find(c, rep.id);
		if (l == NULL || l->state != DMLOCK_STATE_HELD)
			return 0;
		l->deadline = rep.deadline;
		lock_event(l, DMLOCK_STATE_HELD, DMLOCK_EVENT_EXTENDED, 0);
		return 0;
	case LP_R_DENIED:
	case LP_R_LOST:
	case LP_R_RELEASED:
		dispatch_terminal(c, &rep, lock_find(c, rep.id));
		return 0;
	case LP_R_ERROR:
		/* The library sends only valid lines, so an ERROR names a request
		 * the daemon refused (limits) or no longer knows (a race with
		 * LOST); an ERROR without id is about the connection. */
		if (rep.id[0] == '\0') {
			/* The answer to a query (admin request refused). */
			if (c->status_active) {
				c->status_active = false;
				c->status_done = true;
				c->status_error = lp_error_errno(rep.code);
				c->status_len = 0;
				int r = status_append(c, rep.text, rep.text_len);
				if (r < 0)
					return r;
			}
			return 0;
		}
		l = lock_find(c, rep.id);
		if (l != NULL && l->state == DMLOCK_STATE_PENDING) {
			if (c->n_daemon > 0)
				c->n_daemon--;
			lock_event(l, DMLOCK_STATE_DENIED, DMLOCK_EVENT_DENIED,
			    rep.code == LP_E_TOO_MANY_REQUESTS ? -ENOBUFS : -EINVAL);
		} else if (l != NULL && l->state == DMLOCK_STATE_RELEASING)
			lock_event(l, DMLOCK_STATE_RELEASED, DMLOCK_EVENT_RELEASED, 0);
		return 0;
	case LP_R_PONG:
		c->pongs++;
		return 0;
	case LP_R_STATUS_LINE:
		if (!c->status_active)
			return 0;
		return status_append(c, rep.text, rep.text_len);
	case LP_R_END:
		if (c->status_active) {
			c->status_active = false;
			c->status_done = true;
		}
		return 0;
	default:
		return -EPROTO;	/* a second greeting */
	}
}

/* Declare held locks whose deadline passed lost, and tell the daemon. */
static void
conn_expire(struct dmlock_conn *c)
{
	uint64_t now = dmlock_now_ms();
	bool again = true;
	while (again && c->broken == 0) {
		again = false;
		for (struct dmlock_lock *l = c->locks; l != NULL; l = l->next) {
			if (l->state != DMLOCK_STATE_HELD || l->deadline == 0 || now < l->deadline)
				continue;
			/* LOST first, once: a CANCEL that fails breaks the connection,
			 * which would declare the lock lost a second time.  The
			 * callback may free l, so remember its id. */
			uint64_t id = l->id;
			l->was_lost = true;
			lock_event(l, DMLOCK_STATE_LOST, DMLOCK_EVENT_LOST, -ETIMEDOUT);
			if (c->broken == 0)
				(void)conn_send_id(c, LP_CANCEL, id);
			again = true;
			break;
		}
	}
}

/* Read what is there (never blocks) and dispatch complete lines. */
static int
conn_read(struct dmlock_conn *c)
{
	for (int round = 0; round < 64 && c->broken == 0; round++) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return conn_fail(c, -ECONNRESET);
		}
		if (n == 0)
			return conn_fail(c, -ECONNRESET);
		c->in_len += (size_t)n;
		size_t start = 0;
		for (;;) {
			char *nl = memchr(c->in + start, '\n', c->in_len - start);
			if (nl == NULL)
				break;
			size_t len = (size_t)(nl - (c->in + start));
			int r = dispatch_line(c, c->in + start, len);
			if (r < 0)
				return conn_fail(c, r);
			if (c->broken != 0)
				return c->broken;
			start += len + 1;
		}
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
		if (c->in_len == sizeof(c->in))
			return conn_fail(c, -EPROTO);	/* a line longer than any reply */
	}
	return c->broken;
}

DMLOCK_EXPORT int
dmlock_process(struct dmlock_conn *conn)
{
	if (conn == NULL)
		return -EINVAL;
	if (conn->broken != 0)
		return conn->broken;
	int r = conn_flush(conn);
	if (r < 0 && r != -EAGAIN)
		return r;
	r = conn_read(conn);
	if (r < 0)
		return r;
	conn_expire(conn);
	r = conn_flush(conn);
	if (r < 0 && r != -EAGAIN)
		return r;
	return 0;
}

/* Wait for input or output readiness until until_ms (CLOCK_BOOTTIME ms, 0 for
 * no limit), then process.  Returns 0, -ETIMEDOUT if the time is up, or the
 * connection's error. */
static int
conn_wait(struct dmlock_conn *c, uint64_t until_ms)
{
	if (c->broken != 0)
		return c->broken;
	int timeout = dmlock_timeout(c);
	if (until_ms != 0) {
		uint64_t now = dmlock_now_ms();
		if (now >= until_ms)
			return -ETIMEDOUT;
		uint64_t left = until_ms - now;
		if (left > INT_MAX)
			left = INT_MAX;
		if (timeout < 0 || (uint64_t)timeout > left)
			timeout = (int)left;
	}
	struct pollfd p = { .fd = c->fd, .events = dmlock_events(c) };
	int n = poll(&p, 1, timeout);
	if (n < 0 && errno != EINTR)
		return conn_fail(c, -errno);
	return dmlock_process(c);
}

/* ---- connection ------------------------------------------------------- */

static int
conn_open_socket(const char *path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A connect on a non-blocking Unix socket completes at once or fails
	 * with EAGAIN when the backlog is full: retry that for a moment. */
	for (int tries = 0;; tries++) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		int err = errno;
		if ((err == EAGAIN || err == EINTR) && tries < 100) {
			struct pollfd p = { .fd = -1 };
			poll(&p, 0, 10);
			continue;
		}
		close(fd);
		return -err;
	}
	*ret_fd = fd;
	return 0;
}

static int
conn_read_greeting(struct dmlock_conn *c)
{
	uint64_t until = dmlock_now_ms() + GREETING_TIMEOUT_MS;
	for (;;) {
		char *nl = memchr(c->in, '\n', c->in_len);
		if (nl != NULL) {
			struct lp_reply rep;
			size_t len = (size_t)(nl - c->in);
			if (lp_reply_parse(c->in, len, &rep) < 0)
				return -EPROTO;
			/* A daemon that will not serve us says why instead of
			 * greeting (then closes): at its client limit, mostly. */
			if (rep.type == LP_R_ERROR) {
				if (rep.code == LP_E_TOO_MANY_CLIENTS)
					return -EUSERS;
				int r = lp_error_errno(rep.code);
				return r == -EPROTO || r == -ENOBUFS ? -EIO : r;
			}
			if (rep.type != LP_R_GREETING || rep.version != LP_VERSION)
				return -EPROTO;
			memcpy(c->node, rep.node, sizeof(c->node));
			memcpy(c->algorithm, rep.algorithm, sizeof(c->algorithm));
			memmove(c->in, nl + 1, c->in_len - len - 1);
			c->in_len -= len + 1;
			return 0;
		}
		if (c->in_len == sizeof(c->in))
			return -EPROTO;
		uint64_t now = dmlock_now_ms();
		if (now >= until)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int n = poll(&p, 1, (int)(until - now));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		ssize_t got = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (got == 0)
			return -ECONNRESET;
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (got > 0)
			c->in_len += (size_t)got;
	}
}

DMLOCK_EXPORT int
dmlock_socket_path(char *buf, size_t size)
{
	if (buf == NULL)
		return -EINVAL;
	return lp_socket_path_client(buf, size);
}

DMLOCK_EXPORT int
dmlock_connect(const char *path, struct dmlock_conn **ret)
{
	char def[DMLOCK_PATH_MAX];
	struct dmlock_conn *c = NULL;
	int r;

	if (ret == NULL)
		return -EINVAL;
	if (path == NULL) {
		r = lp_socket_path_client(def, sizeof(def));
		if (r < 0)
			return r;
		path = def;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->fd = -1;
	c->next_id = 1;
	r = conn_open_socket(path, &c->fd);
	if (r < 0)
		goto fail;
	r = conn_read_greeting(c);
	if (r < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return r;
}

DMLOCK_EXPORT struct dmlock_conn *
dmlock_close(struct dmlock_conn *conn)
{
	if (conn == NULL)
		return NULL;
	if (conn->fd >= 0)
		close(conn->fd);
	while (conn->locks != NULL) {
		struct dmlock_lock *l = conn->locks;
		if (l->state == DMLOCK_STATE_PENDING) {
			l->state = DMLOCK_STATE_DENIED;
			l->error = -ECONNRESET;
		} else if (l->state == DMLOCK_STATE_HELD) {
			l->state = DMLOCK_STATE_LOST;
			l->error = -ECONNRESET;
			l->was_lost = true;
		} else if (l->state == DMLOCK_STATE_RELEASING)
			l->state = DMLOCK_STATE_RELEASED;
		lock_unlink(l);
	}
	free(conn->out);
	free(conn->status);
	free(conn);
	return NULL;
}

DMLOCK_EXPORT const char *
dmlock_conn_node(const struct dmlock_conn *conn)
{
	return conn != NULL ? conn->node : NULL;
}

DMLOCK_EXPORT const char *
dmlock_conn_algorithm(const struct dmlock_conn *conn)
{
	return conn != NULL ? conn->algorithm : NULL;
}

DMLOCK_EXPORT int
dmlock_fd(const struct dmlock_conn *conn)
{
	if (conn == NULL || conn->fd < 0)
		return -EBADF;
	return conn->fd;
}

DMLOCK_EXPORT short
dmlock_events(const struct dmlock_conn *conn)
{
	if (conn == NULL || conn->fd < 0)
		return 0;
	return (short)(POLLIN | (conn->out_len > 0 ? POLLOUT : 0));
}

DMLOCK_EXPORT int
dmlock_timeout(const struct dmlock_conn *conn)
{
	if (conn == NULL || conn->broken != 0)
		return -1;
	uint64_t now = dmlock_now_ms(), best = UINT64_MAX;
	for (const struct dmlock_lock *l = conn->locks; l != NULL; l = l->next)
		if (l->state == DMLOCK_STATE_HELD && l->deadline != 0 && l->deadline < best)
			best = l->deadline;
	if (best == UINT64_MAX)
		return -1;
	if (best <= now)
		return 0;
	return best - now > INT_MAX ? INT_MAX : (int)(best - now);
}

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

/* ---- daemon queries ------------------------------------------------------ */

DMLOCK_EXPORT int
dmlock_ping(struct dmlock_conn *conn, int64_t *ret_rtt_us)
{
	struct timespec t0, t1;
	int r;

	if (conn == NULL)
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned want = conn->pongs + 1;
	r = conn_send_request(conn, &(struct lp_request){ .verb = LP_PING });
	if (r < 0)
		return r;
	uint64_t until = dmlock_now_ms() + DAEMON_GRACE_MS;
	/* <, not !=: a late PONG of an earlier ping that timed out may come
	 * in with ours and carry the count past want. */
	while (conn->pongs < want) {
		r = conn_wait(conn, until);
		if (r < 0)
			return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret_rtt_us != NULL)
		*ret_rtt_us = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000;
	return 0;
}

/* Send req and collect its answer block (or its ERROR - text). */
static int
conn_query(struct dmlock_conn *conn, const struct lp_request *req, char **ret)
{
	int r;

	if (conn == NULL || ret == NULL || conn->status_active)
		return -EINVAL;
	free(conn->status);
	conn->status = NULL;
	conn->status_len = 0;
	conn->status_done = false;
	conn->status_error = 0;
	r = status_append(conn, "", 0);	/* an empty string to start from */
	if (r < 0)
		return r;
	conn->status_len = 0;
	conn->status[0] = '\0';
	r = conn_send_request(conn, req);
	if (r < 0)
		return r;
	conn->status_active = true;
	uint64_t until = dmlock_now_ms() + DAEMON_GRACE_MS;
	while (!conn->status_done) {
		r = conn_wait(conn, until);
		/* The answer may have come in with the end of the connection
		 * (LEAVE: the daemon exits right after answering). */
		if (r < 0 && !conn->status_done) {
			conn->status_active = false;
			return r;
		}
	}
	*ret = conn->status;
	conn->status = NULL;
	conn->status_len = 0;
	conn->status_done = false;
	return conn->status_error;
}

DMLOCK_EXPORT int
dmlock_status(struct dmlock_conn *conn, char **ret)
{
	char *text = NULL;
	int r = conn_query(conn, &(struct lp_request){ .verb = LP_STATUS }, &text);
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}

DMLOCK_EXPORT int
dmlock_query(struct dmlock_conn *conn, const char *request, char **ret)
{
	struct lp_request req;
	enum lp_error code;

	if (conn == NULL || request == NULL || ret == NULL)
		return -EINVAL;
	size_t len = strlen(request);
	if (len > 0 && request[len - 1] == '\n')
		len--;
	if (lp_request_parse(request, len, &req, &code) < 0 || !LP_VERB_IS_ADMIN(req.verb))
		return -EINVAL;
	*ret = NULL;
	return conn_query(conn, &req, ret);
}

DMLOCK_EXPORT const char *
dmlock_conn_message(const struct dmlock_conn *conn)
{
	return conn != NULL ? conn->message : "";
}

DMLOCK_EXPORT const char *
dmlock_lock_message(const struct dmlock_lock *lock)
{
	return lock != NULL ? lock->message : "";
}
