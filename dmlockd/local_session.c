/*
 * local_session.c: one local client connection.  Cuts the byte stream into
 * bounded lines, decodes them with local_proto.c, keeps the client's
 * requests (id <-> engine handle), turns requests into engine events and
 * engine effects into answer lines, and enforces the per-connection limits
 * (line length, requests outstanding, error count, unread output).  Every
 * decision about locks is the engine's; this file only translates.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "dmlockd/daemon.h"
#include "dmlockd/local_server.h"
#include "dmlockd/local_session.h"
#include "dmlockd/log.h"

_Static_assert(LP_WAIT_TRY == DM_WAIT_TRY, "wait encodings differ");
_Static_assert(LP_WAIT_FOREVER == DM_WAIT_FOREVER, "wait encodings differ");

/* Stop reading a client's requests while this much output is unread. */
#define SESSION_OUTPUT_PAUSE	(64 * 1024)
#define SESSION_OUTPUT_RESUME	(16 * 1024)

struct local_session {
	struct local_server	*server;
	struct dmd_daemon	*daemon;
	struct bufferevent	*bev;
	struct local_session_cred cred;
	struct dmd_request	*requests;
	size_t			 n_requests;
	unsigned		 n_errors;
	bool			 closing;
	bool			 paused;	/* reading stopped for backpressure */
};

static void session_on_read(struct bufferevent *bev, void *arg);

/* ---- output -------------------------------------------------------------- */

static void
session_write_reply(struct local_session *s, const struct lp_reply *rep)
{
	char line[LP_REPLY_MAX + 1];
	int n = lp_reply_format(line, sizeof(line), rep);
	if (n < 0) {
		log_error_errno(n, "cannot format reply type %d", (int)rep->type);
		return;
	}
	struct evbuffer *out = bufferevent_get_output(s->bev);
	if (evbuffer_get_length(out) + (size_t)n > LP_OUTPUT_MAX) {
		if (!s->closing)
			log_warning("local client pid %ld: does not read its answers, closing",
			    (long)s->cred.pid);
		local_session_close_later(s);
		return;
	}
	bufferevent_write(s->bev, line, (size_t)n);
}

static void
session_write_error(struct local_session *s, const char *id, enum lp_error code,
    const char *text)
{
	struct lp_reply rep = { .type = LP_R_ERROR, .code = code, .text = text,
	    .text_len = strlen(text) };
	if (id != NULL && lp_id_valid(id, strlen(id)))
		snprintf(rep.id, sizeof(rep.id), "%s", id);
	session_write_reply(s, &rep);
}

/* An ERROR answer that counts against the client's error budget. */
static void
session_fail_line(struct local_session *s, const char *id, enum lp_error code,
    const char *text)
{
	session_write_error(s, id, code, text);
	if (++s->n_errors >= LP_ERRORS_MAX) {
		session_write_error(s, NULL, LP_E_TOO_MANY_ERRORS,
		    "too many errors on this connection, closing it");
		log_warning("local client pid %ld uid %ld: %u protocol errors, closing",
		    (long)s->cred.pid, (long)s->cred.uid, s->n_errors);
		local_session_close_later(s);
	}
}

static void
session_write_id(struct local_session *s, enum lp_reply_type type, const char *id)
{
	struct lp_reply rep = { .type = type };
	snprintf(rep.id, sizeof(rep.id), "%s", id);
	session_write_reply(s, &rep);
}

/* ---- requests ------------------------------------------------------------ */

static struct dmd_request *
session_find(struct local_session *s, const char *id)
{
	for (struct dmd_request *r = s->requests; r != NULL; r = r->next)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

/* Forget a request: out of the daemon's map, out of the list, freed. */
static void
session_remove(struct local_session *s, struct dmd_request *req)
{
	dmd_daemon_unregister(s->daemon, req);
	for (struct dmd_request **p = &s->requests; *p != NULL; p = &(*p)->next) {
		if (*p == req) {
			*p = req->next;
			s->n_requests--;
			break;
		}
	}
	free(req);
}

static void
session_acquire(struct local_session *s, const struct lp_request *lr)
{
	if (session_find(s, lr->id) != NULL) {
		session_fail_line(s, lr->id, LP_E_ID_IN_USE, "a request with this id is active");
		return;
	}
	if (s->n_requests >= LP_REQUESTS_MAX) {
		session_write_error(s, lr->id, LP_E_TOO_MANY_REQUESTS,
		    "too many requests on this connection, closing it");
		log_warning("local client pid %ld: more than %d requests, closing",
		    (long)s->cred.pid, LP_REQUESTS_MAX);
		local_session_close_later(s);
		return;
	}
	struct dmd_request *req = calloc(1, sizeof(*req));
	if (req == NULL) {
		session_write_error(s, lr->id, LP_E_INTERNAL, "out of memory");
		return;
	}
	req->session = s;
	req->handle = dmd_daemon_new_handle(s->daemon);
	memcpy(req->id, lr->id, sizeof(req->id));
	memcpy(req->lock, lr->lock, lr->lock_len + 1);
	req->mode = lr->mode;
	req->state = DMD_REQ_WAITING;
	req->next = s->requests;
	s->requests = req;
	s->n_requests++;
	dmd_daemon_register(s->daemon, req);

	uint64_t handle = req->handle;
	struct dm_event ev = { .type = DM_EV_ACQUIRE };
	ev.u.acquire.handle = handle;
	ev.u.acquire.lock = lr->lock;
	ev.u.acquire.lock_len = lr->lock_len;
	ev.u.acquire.mode = lr->mode;
	ev.u.acquire.wait_ms = lr->wait_ms;
	int r = dmd_daemon_step(s->daemon, &ev);
	/* The engine answers a bad request with DENY; if it failed without
	 * one, answer for it so the client is never left waiting. */
	req = dmd_daemon_lookup(s->daemon, handle);
	if (r < 0 && req != NULL && req->state == DMD_REQ_WAITING) {
		struct lp_reply rep = { .type = LP_R_DENIED, .error = r,
		    .text = strerror(-r), .text_len = strlen(strerror(-r)) };
		memcpy(rep.id, req->id, sizeof(rep.id));
		session_write_reply(s, &rep);
		session_remove(s, req);
	}
}

/* RELEASE (held only) and CANCEL (waiting or held). */
static void
session_end(struct local_session *s, const struct lp_request *lr)
{
	struct dmd_request *req = session_find(s, lr->id);
	if (req == NULL) {
		session_fail_line(s, lr->id, LP_E_UNKNOWN_ID, "no such request");
		return;
	}
	if (lr->verb == LP_RELEASE && req->state != DMD_REQ_HELD) {
		session_fail_line(s, lr->id, LP_E_NOT_HELD, "not granted yet, use CANCEL");
		return;
	}
	bool held = req->state == DMD_REQ_HELD;
	req->state = DMD_REQ_ENDING;	/* mute its effects during the step */
	struct dm_event ev = { .type = held && lr->verb == LP_RELEASE ? DM_EV_RELEASE
	    : DM_EV_CANCEL };
	if (ev.type == DM_EV_RELEASE)
		ev.u.release.handle = req->handle;
	else
		ev.u.cancel.handle = req->handle;
	int r = dmd_daemon_step(s->daemon, &ev);
	if (r < 0 && r != -ENOENT)
		log_warning_errno(r, "engine refused to end request %s of pid %ld", lr->id,
		    (long)s->cred.pid);
	session_remove(s, req);
	session_write_id(s, LP_R_RELEASED, lr->id);
}

/* ---- STATUS ------------------------------------------------------------- */

static void
status_line(struct local_session *s, const char *text, int len)
{
	if (len <= 0 || len >= LP_REPLY_MAX)
		return;
	struct lp_reply rep = { .type = LP_R_STATUS_LINE, .text = text, .text_len = (size_t)len };
	session_write_reply(s, &rep);
}

static void
status_visit_peer(void *ctx, const char *name, const char *address, bool is_self,
    bool link_up)
{
	struct local_session *s = ctx;
	char line[LP_REPLY_MAX];
	int n = snprintf(line, sizeof(line), "PEER %s %s %s", name,
	    address != NULL && address[0] != '\0' ? address : "-",
	    is_self ? "self" : link_up ? "up" : "down");
	status_line(s, line, n);
}

static void
status_visit_lock(void *ctx, const char *lock, uint64_t handle, enum dm_mode mode,
    bool granted, uint64_t token, dm_msec_t since)
{
	struct local_session *s = ctx;
	struct dmd_request *req = dmd_daemon_lookup(s->daemon, handle);
	const struct local_session_cred *cred = req != NULL ? &req->session->cred : NULL;
	char line[LP_REPLY_MAX];
	int n = snprintf(line, sizeof(line), "LOCK %s %s %s %llu %llu %ld %ld %s", lock,
	    mode == DM_MODE_SHARED ? "sh" : "ex", granted ? "held" : "waiting",
	    (unsigned long long)(granted ? token : 0), (unsigned long long)since,
	    cred != NULL ? (long)cred->pid : 0L, cred != NULL ? (long)cred->uid : -1L,
	    req != NULL ? req->id : "-");
	status_line(s, line, n);
}

static void
session_status(struct local_session *s)
{
	const struct dm_engine *engine = dmd_daemon_engine(s->daemon);
	struct dm_engine_stats st;
	char line[LP_REPLY_MAX];

	dm_engine_get_stats(engine, &st);
	int n = snprintf(line, sizeof(line), "NODE %s %s %s %zu %llu", dmd_daemon_node(s->daemon),
	    dmd_daemon_algorithm(s->daemon), st.ready ? "ready" : "starting", st.roster_size,
	    (unsigned long long)st.epoch);
	status_line(s, line, n);
	dm_engine_visit_roster(engine, status_visit_peer, s);
	dm_engine_visit_local_locks(engine, status_visit_lock, s);
	session_write_reply(s, &(struct lp_reply){ .type = LP_R_END });
}

/* ---- input --------------------------------------------------------------- */

static void
session_line(struct local_session *s, const char *line, size_t len)
{
	struct lp_request req;
	enum lp_error code;

	if (lp_request_parse(line, len, &req, &code) < 0) {
		session_fail_line(s, req.id[0] != '\0' ? req.id : NULL, code,
		    code == LP_E_UNKNOWN_VERB ? "unknown verb" : "malformed request");
		return;
	}
	switch (req.verb) {
	case LP_ACQUIRE:
		session_acquire(s, &req);
		break;
	case LP_RELEASE:
	case LP_CANCEL:
		session_end(s, &req);
		break;
	case LP_STATUS:
		session_status(s);
		break;
	case LP_PING:
		session_write_reply(s, &(struct lp_reply){ .type = LP_R_PONG });
		break;
	}
}

static void
session_too_long(struct local_session *s)
{
	session_write_error(s, NULL, LP_E_TOO_LONG, "line longer than 1024 bytes, closing");
	log_warning("local client pid %ld uid %ld: oversized line, closing", (long)s->cred.pid,
	    (long)s->cred.uid);
	local_session_close_later(s);
}

static void
session_on_read(struct bufferevent *bev, void *arg)
{
	struct local_session *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer *out = bufferevent_get_output(bev);
	char line[LP_LINE_MAX];

	while (!s->closing) {
		if (evbuffer_get_length(out) >= SESSION_OUTPUT_PAUSE) {
			/* Backpressure: resume from the write callback. */
			s->paused = true;
			bufferevent_disable(bev, EV_READ);
			return;
		}
		size_t eol_len = 0;
		struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			if (evbuffer_get_length(in) >= LP_LINE_MAX)
				session_too_long(s);
			return;
		}
		size_t len = (size_t)eol.pos;
		if (len + 1 > LP_LINE_MAX) {
			session_too_long(s);
			return;
		}
		evbuffer_remove(in, line, len + 1);
		session_line(s, line, len);
	}
}

static void
session_on_write(struct bufferevent *bev, void *arg)
{
	struct local_session *s = arg;
	if (s->paused && !s->closing) {
		s->paused = false;
		bufferevent_enable(bev, EV_READ);
		session_on_read(bev, s);
	}
}

static void
session_on_event(struct bufferevent *bev, short what, void *arg)
{
	struct local_session *s = arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		log_debug("local client pid %ld disconnected", (long)s->cred.pid);
		local_session_close_later(s);
	}
}

/* ---- life cycle ------------------------------------------------------------ */

int
local_session_new(struct local_server *server, struct dmd_daemon *daemon, int fd,
    const struct local_session_cred *cred, struct local_session **ret)
{
	struct local_session *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		close(fd);
		return -ENOMEM;
	}
	s->server = server;
	s->daemon = daemon;
	s->cred = *cred;
	s->bev = bufferevent_socket_new(dmd_daemon_base(daemon), fd, BEV_OPT_CLOSE_ON_FREE);
	if (s->bev == NULL) {
		close(fd);
		free(s);
		return -ENOMEM;
	}
	bufferevent_setcb(s->bev, session_on_read, session_on_write, session_on_event, s);
	bufferevent_setwatermark(s->bev, EV_READ, 0, 64 * 1024);
	bufferevent_setwatermark(s->bev, EV_WRITE, SESSION_OUTPUT_RESUME, 0);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);

	struct lp_reply greet = { .type = LP_R_GREETING, .version = LP_VERSION };
	snprintf(greet.node, sizeof(greet.node), "%s", dmd_daemon_node(daemon));
	snprintf(greet.algorithm, sizeof(greet.algorithm), "%s", dmd_daemon_algorithm(daemon));
	session_write_reply(s, &greet);
	log_debug("local client connected: pid %ld uid %ld gid %ld", (long)cred->pid,
	    (long)cred->uid, (long)cred->gid);
	*ret = s;
	return 0;
}

struct local_session *
local_session_free(struct local_session *s)
{
	if (s == NULL)
		return NULL;
	while (s->requests != NULL)
		session_remove(s, s->requests);
	if (s->bev != NULL) {
		/* Last words (an ERROR before closing) go out if the socket
		 * takes them at once; never wait for a client. */
		struct evbuffer *out = bufferevent_get_output(s->bev);
		size_t len = evbuffer_get_length(out);
		if (len > 0) {
			/* The socket bufferevent keeps its output frozen for
			 * evbuffer_write(): read the bytes and send them. */
			unsigned char *bytes = evbuffer_pullup(out, -1);
			if (bytes != NULL)
				(void)!send(bufferevent_getfd(s->bev), bytes, len,
				    MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		bufferevent_free(s->bev);
	}
	free(s);
	return NULL;
}

void
local_session_close(struct local_session *s)
{
	/* Every request of the connection ends now: held locks are released,
	 * waiters withdrawn.  Effects for them are muted (ENDING). */
	while (s->requests != NULL) {
		struct dmd_request *req = s->requests;
		req->state = DMD_REQ_ENDING;
		struct dm_event ev = { .type = DM_EV_CANCEL };
		ev.u.cancel.handle = req->handle;
		int r = dmd_daemon_step(s->daemon, &ev);
		if (r < 0 && r != -ENOENT)
			log_warning_errno(r, "cancel of request %s (pid %ld) failed", req->id,
			    (long)s->cred.pid);
		session_remove(s, req);
	}
	local_server_detach(s->server, s);
	local_session_free(s);
}

void
local_session_close_later(struct local_session *s)
{
	if (s->closing)
		return;
	s->closing = true;
	bufferevent_disable(s->bev, EV_READ);
	local_server_schedule_reap(s->server);
}

bool
local_session_closing(const struct local_session *s)
{
	return s->closing;
}

const struct local_session_cred *
local_session_cred(const struct local_session *s)
{
	return &s->cred;
}

void
local_session_deliver(struct dmd_request *req, const struct dm_effect *fx)
{
	struct local_session *s = req->session;
	struct lp_reply rep = { 0 };
	char text[LP_TEXT_MAX + 1];

	if (req->state == DMD_REQ_ENDING)
		return;
	memcpy(rep.id, req->id, sizeof(rep.id));
	switch (fx->type) {
	case DM_FX_GRANT:
		if (req->state != DMD_REQ_WAITING)
			return;
		req->state = DMD_REQ_HELD;
		req->token = fx->u.grant.token;
		rep.type = LP_R_GRANTED;
		rep.token = fx->u.grant.token;
		rep.deadline = fx->u.grant.deadline;
		log_full(LOG_LEVEL_DEBUG, &(struct log_fields){ .lock = req->lock,
		    .token = req->token }, "granted to pid %ld", (long)s->cred.pid);
		break;
	case DM_FX_EXTEND:
		if (req->state != DMD_REQ_HELD)
			return;
		rep.type = LP_R_EXTEND;
		rep.deadline = fx->u.extend.deadline;
		break;
	case DM_FX_DENY:
	case DM_FX_LOST: {
		int err = fx->type == DM_FX_DENY ? fx->u.deny.error : fx->u.lost.reason;
		rep.type = fx->type == DM_FX_DENY ? LP_R_DENIED : LP_R_LOST;
		rep.error = err;
		snprintf(text, sizeof(text), "%s", strerror(err < 0 ? -err : err));
		rep.text = text;
		rep.text_len = strlen(text);
		if (fx->type == DM_FX_LOST)
			log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .lock = req->lock,
			    .token = req->token }, "lock lost by pid %ld: %s", (long)s->cred.pid,
			    text);
		if (!s->closing)
			session_write_reply(s, &rep);
		session_remove(s, req);
		return;
	}
	default:
		return;
	}
	if (!s->closing)
		session_write_reply(s, &rep);
}

void
local_session_reject(int fd)
{
	static const char msg[] = "ERROR - too-many-clients too many clients, try later\n";
	(void)!write(fd, msg, sizeof(msg) - 1);
	close(fd);
}
