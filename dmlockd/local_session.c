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

#include "dmlockd/acl.h"
#include "dmlockd/config_file.h"
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
	gid_t			*groups;	/* gid and supplementary groups, read once */
	size_t			 n_groups;
	unsigned		 n_denials;	/* access denials (only the first few logged) */
};

/* Denials logged per connection; later ones are only counted. */
#define SESSION_DENIALS_LOGGED	10

static void session_on_read(struct bufferevent *bev, void *arg);

/* ---- output -------------------------------------------------------------- */

/* An answer with nothing queued before it goes out with send(2) in this
 * event-loop pass, rather than through an EV_WRITE and a write in the next
 * pass: the GRANTED of an uncontended entry and its RELEASED each save a
 * loop pass and an epoll_ctl pair.  What the socket does not take at once,
 * and every answer behind queued ones, goes through the bufferevent, which
 * also finds a dead peer's error (send errors are left to it). */
static void
session_send(struct local_session *s, const char *line, size_t n)
{
	if (!s->closing && evbuffer_get_length(bufferevent_get_output(s->bev)) == 0) {
		ssize_t w = send(bufferevent_getfd(s->bev), line, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			line += w;
			n -= (size_t)w;
		}
		if (n == 0)
			return;
	}
	bufferevent_write(s->bev, line, n);
}

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
	session_send(s, line, (size_t)n);
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

/* ---- access control ------------------------------------------------------ */

/* The client's groups, read once on first need: from the socket
 * (SO_PEERGROUPS, the groups the client really has, without NSS, which
 * can block the event loop for a directory server's timeout); from the
 * group database only on kernels without SO_PEERGROUPS. */
static void
session_load_groups(struct local_session *s)
{
	gid_t *groups = calloc(ACL_GROUPS_MAX, sizeof(*groups));
	int n;

	if (groups == NULL)
		return;
	n = acl_socket_groups(bufferevent_getfd(s->bev), s->cred.gid, groups, ACL_GROUPS_MAX);
	if (n == -ENOPROTOOPT) {
		n = (int)acl_lookup_groups(s->cred.uid, s->cred.gid, groups, ACL_GROUPS_MAX);
	} else if (n < 0) {
		log_warning_errno(n, "cannot read the groups of local client pid %ld; "
		    "using its primary group %ld only", (long)s->cred.pid, (long)s->cred.gid);
		groups[0] = s->cred.gid;
		n = 1;
	}
	gid_t *fit = realloc(groups, (size_t)n * sizeof(*groups));
	s->groups = fit != NULL ? fit : groups;
	s->n_groups = (size_t)n;
}

/* The client as the ACL sees it; groups are read on first need. */
static void
session_subject(struct local_session *s, struct acl_subject *ret)
{
	const struct dmd_acl *acl = local_server_acl(s->server);
	if (s->groups == NULL && acl_needs_groups(acl))
		session_load_groups(s);
	*ret = (struct acl_subject){ .uid = s->cred.uid, .gid = s->cred.gid,
	    .groups = s->groups, .n_groups = s->n_groups };
}

static void
session_log_denial(struct local_session *s, const char *lock, const char *what, const char *why)
{
	if (++s->n_denials > SESSION_DENIALS_LOGGED) {
		if (s->n_denials == SESSION_DENIALS_LOGGED + 1)
			log_notice("local client pid %ld uid %ld: further denials on this "
			    "connection are not logged", (long)s->cred.pid, (long)s->cred.uid);
		return;
	}
	log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .lock = lock },
	    "denied %s to pid %ld uid %ld: %s", what, (long)s->cred.pid, (long)s->cred.uid, why);
}

/* Refuse an ACQUIRE the [access] rules do not allow.  true if refused. */
static bool
session_acquire_denied(struct local_session *s, const struct lp_request *lr)
{
	struct acl_subject who;
	char why[LP_TEXT_MAX + 1];

	session_subject(s, &who);
	if (acl_check_lock(local_server_acl(s->server), &who, lr->lock, lr->lock_len, lr->mode,
	    why, sizeof(why)) == 0)
		return false;
	struct lp_reply rep = { .type = LP_R_DENIED, .error = -EACCES, .text = why,
	    .text_len = strlen(why) };
	memcpy(rep.id, lr->id, sizeof(rep.id));
	session_write_reply(s, &rep);
	session_log_denial(s, lr->lock, lr->mode == DM_MODE_SHARED ? "shared lock" :
	    "exclusive lock", why);
	return true;
}

/* Roster operations: root or an [access] roster principal.  On refusal
 * answers ERROR - denied and returns false. */
static bool
session_roster_allowed(struct local_session *s, const char *what)
{
	struct acl_subject who;
	char why[LP_TEXT_MAX + 1];

	session_subject(s, &who);
	if (acl_check_roster(local_server_acl(s->server), &who, why, sizeof(why)) == 0)
		return true;
	session_write_error(s, NULL, LP_E_DENIED, why);
	session_log_denial(s, NULL, what, why);
	return false;
}

static void
session_acquire(struct local_session *s, const struct lp_request *lr)
{
	if (session_find(s, lr->id) != NULL) {
		session_fail_line(s, lr->id, LP_E_ID_IN_USE, "a request with this id is active");
		return;
	}
	if (session_acquire_denied(s, lr))
		return;
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
	struct dmd_peer_link_info info;
	char line[LP_REPLY_MAX], contact[24] = "-", rtt[24] = "-", sent[24] = "-", received[24] = "-";

	if (!is_self && dmd_daemon_peer_info(s->daemon, name, &info) == 0) {
		if (info.last_contact_ms >= 0)
			snprintf(contact, sizeof(contact), "%lld", (long long)info.last_contact_ms);
		if (info.rtt_us >= 0)
			snprintf(rtt, sizeof(rtt), "%lld", (long long)info.rtt_us);
		if (info.data_sent >= 0)
			snprintf(sent, sizeof(sent), "%lld", (long long)info.data_sent);
		if (info.data_received >= 0)
			snprintf(received, sizeof(received), "%lld", (long long)info.data_received);
	}
	int n = snprintf(line, sizeof(line), "PEER %s %s %s %s %s %s %s", name,
	    address != NULL && address[0] != '\0' ? address : "-",
	    is_self ? "self" : link_up ? "up" : "down", contact, rtt, sent, received);
	status_line(s, line, n);
}

/* Whether the running algorithm admits shared requests: "shared",
 * "exclusive-only", or "unknown" with an engine that cannot say. */
static const char *
session_shared_capability(const struct local_session *s)
{
#ifdef DM_ENGINE_CAP_SHARED
	return dm_engine_capabilities(dmd_daemon_engine(s->daemon)) & DM_ENGINE_CAP_SHARED
	    ? "shared" : "exclusive-only";
#else
	return "unknown";
#endif
}

struct lock_visit {
	struct local_session	*session;
	bool			 with_node;	/* LOCKS: a tenth field, the node */
};

static void
status_visit_lock(void *ctx, const char *lock, uint64_t handle, enum dm_mode mode,
    bool granted, uint64_t token, dm_msec_t since)
{
	struct lock_visit *v = ctx;
	struct local_session *s = v->session;
	struct dmd_request *req = dmd_daemon_lookup(s->daemon, handle);
	const struct local_session_cred *cred = req != NULL ? &req->session->cred : NULL;
	char line[LP_REPLY_MAX];
	int n = snprintf(line, sizeof(line), "LOCK %s %s %s %llu %llu %ld %ld %s", lock,
	    mode == DM_MODE_SHARED ? "sh" : "ex", granted ? "held" : "waiting",
	    (unsigned long long)(granted ? token : 0), (unsigned long long)since,
	    cred != NULL ? (long)cred->pid : 0L, cred != NULL ? (long)cred->uid : -1L,
	    req != NULL ? req->id : "-");
	if (v->with_node && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s", dmd_daemon_node(s->daemon));
	status_line(s, line, n);
}

/* ALGO lines: the algorithm's own view (token whereabouts, coordinator,
 * elections); "-" names the node line. */
static void
status_visit_algorithm(void *ctx, const char *lock, const char *text)
{
	struct local_session *s = ctx;
	char line[LP_REPLY_MAX];
	int n = snprintf(line, sizeof(line), "ALGO %s %s", lock != NULL ? lock : "-", text);

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
	n = snprintf(line, sizeof(line), "CAPS %s %s", dmd_daemon_algorithm(s->daemon),
	    session_shared_capability(s));
	status_line(s, line, n);
	dm_engine_visit_roster(engine, status_visit_peer, s);
	dm_engine_visit_local_locks(engine, status_visit_lock,
	    &(struct lock_visit){ .session = s });
	dm_engine_visit_algorithm_state(engine, status_visit_algorithm, s);
	session_write_reply(s, &(struct lp_reply){ .type = LP_R_END });
}

/* ---- administrative requests -------------------------------------------- */

static void
session_info(struct local_session *s, const char *text)
{
	char line[LP_REPLY_MAX];
	int n = snprintf(line, sizeof(line), "INFO %s", text);
	status_line(s, line, n);
	session_write_reply(s, &(struct lp_reply){ .type = LP_R_END });
}

/* LOCKS: what this node knows.  The engine offers no view of remote
 * requests yet, so these are the requests made on this node. */
static void
session_locks(struct local_session *s)
{
	dm_engine_visit_local_locks(dmd_daemon_engine(s->daemon), status_visit_lock,
	    &(struct lock_visit){ .session = s, .with_node = true });
	session_write_reply(s, &(struct lp_reply){ .type = LP_R_END });
}

static void
session_leave(struct local_session *s)
{
	struct dm_engine_stats st;

	if (!session_roster_allowed(s, "leave"))
		return;
	dm_engine_get_stats(dmd_daemon_engine(s->daemon), &st);
	log_notice("local client pid %ld uid %ld asked this node to leave the cluster",
	    (long)s->cred.pid, (long)s->cred.uid);
	struct dm_event ev = { .type = DM_EV_LEAVE };
	int r = dmd_daemon_step(s->daemon, &ev);
	if (r == -EALREADY) {
		session_write_error(s, NULL, LP_E_BAD_STATE,
		    "this node is already leaving, or has not joined yet");
		return;
	}
	if (r < 0) {
		session_write_error(s, NULL, LP_E_INTERNAL, strerror(-r));
		return;
	}
	char text[LP_REPLY_MAX + LP_ARG_MAX];
	snprintf(text, sizeof(text), "node %s is leaving the cluster (%zu other member(s) to "
	    "acknowledge); dmlockd exits when done", dmd_daemon_node(s->daemon),
	    st.roster_size > 0 ? st.roster_size - 1 : 0);
	session_info(s, text);
}

static void
session_remove_node(struct local_session *s, const struct lp_request *lr)
{
	char text[LP_REPLY_MAX + LP_ARG_MAX];

	if (!session_roster_allowed(s, "remove"))
		return;
	struct dm_event ev = { .type = DM_EV_REMOVE_NODE, .u.remove.peer = lr->arg };
	int r = dmd_daemon_step(s->daemon, &ev);
	if (r == -ENOENT) {
		snprintf(text, sizeof(text), "no node '%s' in the roster of %s (see dmlock status)",
		    lr->arg, dmd_daemon_node(s->daemon));
		session_write_error(s, NULL, LP_E_UNKNOWN_NODE, text);
		return;
	}
	if (r == -EINVAL) {
		snprintf(text, sizeof(text), "'%s' is this node: use dmlock leave", lr->arg);
		session_write_error(s, NULL, LP_E_BAD_NODE, text);
		return;
	}
	if (r < 0) {
		session_write_error(s, NULL, LP_E_INTERNAL, strerror(-r));
		return;
	}
	log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .peer = lr->arg },
	    "local client pid %ld uid %ld removed the node from the roster", (long)s->cred.pid,
	    (long)s->cred.uid);
	snprintf(text, sizeof(text), "removal of node %s announced to the cluster", lr->arg);
	session_info(s, text);
}

static void
session_join(struct local_session *s, const struct lp_request *lr)
{
	char text[LP_REPLY_MAX + LP_ARG_MAX];

	char *name = NULL, *address = NULL;
	struct dm_engine_stats st;
	int r;

	if (!session_roster_allowed(s, "join"))
		return;
	if (!dmd_daemon_has_transport(s->daemon)) {
		snprintf(text, sizeof(text), "this dmlockd has no peer transport (no [node] listen "
		    "address in its configuration), so it cannot join a cluster: configure "
		    "listen and [tls], or set [cluster] sponsor = %s, and restart it", lr->arg);
		session_write_error(s, NULL, LP_E_UNSUPPORTED, text);
		return;
	}
	if (config_parse_peer(lr->arg, &name, &address) < 0) {
		snprintf(text, sizeof(text), "'%s' is not NAME@HOST:PORT", lr->arg);
		session_write_error(s, NULL, LP_E_BAD_NODE, text);
		return;
	}
	struct dm_event ev = { .type = DM_EV_JOIN, .u.join = { .sponsor = name, .address = address } };
	r = dmd_daemon_step(s->daemon, &ev);
	dm_engine_get_stats(dmd_daemon_engine(s->daemon), &st);
	if (r == -EISCONN)
		snprintf(text, sizeof(text), "this node is already in a cluster of %zu node(s), or "
		    "joining or leaving one: only a node alone in its roster can join", st.roster_size);
	else if (r == -EBUSY)
		snprintf(text, sizeof(text), "locks are held or waited for on this node: release "
		    "them before joining a cluster");
	else if (r == -EINVAL)
		snprintf(text, sizeof(text), "'%s' cannot sponsor this node (its own name, or a bad "
		    "name or address)", lr->arg);
	else if (r < 0)
		snprintf(text, sizeof(text), "cannot join: %s", strerror(-r));
	else
		snprintf(text, sizeof(text), "joining the cluster through %s at %s; `dmlock status` "
		    "says ready once this node is a member", name, address);
	if (r == 0) {
		log_notice("local client pid %ld uid %ld asked this node to join the cluster through %s",
		    (long)s->cred.pid, (long)s->cred.uid, lr->arg);
		session_info(s, text);
	} else {
		session_write_error(s, NULL, r == -EINVAL ? LP_E_BAD_NODE : LP_E_BAD_STATE, text);
	}
	free(name);
	free(address);
}

/* ---- input --------------------------------------------------------------- */

static void
session_line(struct local_session *s, const char *line, size_t len)
{
	struct lp_request req;
	enum lp_error code;

	if (lp_request_parse(line, len, &req, &code) < 0) {
		session_fail_line(s, req.id[0] != '\0' ? req.id : NULL, code,
		    code == LP_E_UNKNOWN_VERB ? "unknown verb" : code == LP_E_BAD_NODE ?
		    "expected REMOVE NODE or JOIN NODE@HOST:PORT" : "malformed request");
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
	case LP_LOCKS:
		session_locks(s);
		break;
	case LP_LEAVE:
		session_leave(s);
		break;
	case LP_REMOVE:
		session_remove_node(s, &req);
		break;
	case LP_JOIN:
		session_join(s, &req);
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

	/* A halted daemon (daemon.h) takes no more work: the lines wait
	 * unread until the connection closes at exit. */
	while (!s->closing && dmd_daemon_halt_status(s->daemon) == 0) {
		if (evbuffer_get_length(out) >= SESSION_OUTPUT_PAUSE) {
			/* Backpressure: resume from the write callback. */
			s->paused = true;
			log_debug("local client pid %ld: %zu bytes of answers unread, "
			    "pausing its requests", (long)s->cred.pid, evbuffer_get_length(out));
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
		log_debug("local client pid %ld: answers drained, reading its requests again",
		    (long)s->cred.pid);
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
	free(s->groups);
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

/* The sentence sent with DENIED: what happened and what to do. */
static void
session_deny_text(const struct local_session *s, const struct dmd_request *req, int err,
    char *text, size_t size)
{
	switch (err) {
	case -EOPNOTSUPP:
		snprintf(text, size, "%s locks are not supported by algorithm %s (use an "
		    "exclusive lock, or a cluster algorithm with shared mode)",
		    req->mode == DM_MODE_SHARED ? "shared" : "these",
		    dmd_daemon_algorithm(s->daemon));
		break;
	case -EAGAIN:
		snprintf(text, size, "node %s is not serving locks yet (joining the cluster); "
		    "retry later", dmd_daemon_node(s->daemon));
		break;
	case -ESHUTDOWN:
		snprintf(text, size, "node %s is leaving the cluster, or rejoining it (removed, "
		    "or refused by members that agreed to remove it)", dmd_daemon_node(s->daemon));
		break;
	case -EBUSY:
		snprintf(text, size, "the lock is held");
		break;
	case -ETIMEDOUT:
		snprintf(text, size, "the wait expired before the lock was granted");
		break;
	default:
		snprintf(text, size, "%s", strerror(err < 0 ? -err : err));
		break;
	}
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
		if (fx->type == DM_FX_DENY)
			session_deny_text(s, req, err, text, sizeof(text));
		else if (err == -ESHUTDOWN)
			snprintf(text, sizeof(text), "node %s left the cluster, or is rejoining it "
			    "(removed, or refused by members that agreed to remove it)",
			    dmd_daemon_node(s->daemon));
		else if (err == -ETIMEDOUT)
			snprintf(text, sizeof(text), "the lease of node %s ran out (cut off from "
			    "the cluster?)", dmd_daemon_node(s->daemon));
		else
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
