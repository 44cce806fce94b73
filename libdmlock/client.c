/*
 * client.c: libdmlock's connection object: connect and close, buffered
 * non-blocking I/O on the Unix socket, dispatch of daemon lines to lock
 * objects and callbacks, self-detected expiry of grant deadlines,
 * dmlock_process() and the connection's accessors.  The lock calls are in
 * client_lock.c, the daemon queries in client_query.c; what the three share
 * is in internal.h.  Speaks the protocol only through local_proto.h.  Never
 * logs, never touches signals.
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

#define CONN_OUTBUF_MAX		(64 * 1024)
#define GREETING_TIMEOUT_MS	10000
#define STATUS_MAX		(4 * 1024 * 1024)

static int conn_flush(struct dmlock_conn *c);

/* ---- small helpers ---------------------------------------------------- */

void
lock_link(struct dmlock_conn *c, struct dmlock_lock *l)
{
	l->conn = c;
	l->prev = NULL;
	l->next = c->locks;
	if (c->locks != NULL)
		c->locks->prev = l;
	c->locks = l;
}

void
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

int
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

int
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

int
conn_status_append(struct dmlock_conn *c, const char *text, size_t len)
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
				int r = conn_status_append(c, rep.text, rep.text_len);
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
		return conn_status_append(c, rep.text, rep.text_len);
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
int
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

DMLOCK_EXPORT const char *
dmlock_conn_message(const struct dmlock_conn *conn)
{
	return conn != NULL ? conn->message : "";
}
