/*
 * daemon.c: the engine's host inside dmlockd.  Owns the engine, the one
 * evtimer that wakes it at dm_engine_next_deadline(), the handle -> request
 * map, and the routing of effects: client effects to local_session.c, peer
 * effects to the transport hook, logs to log.c.  The only place the daemon
 * reads the clock.  Makes no protocol decision of its own.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "daemon.h"
#include "dm_msg.h"
#include "dmlockd/local_session.h"
#include "dmlockd/log.h"
#include "dmlockd/state_file.h"

#define HANDLE_BUCKETS 4096	/* power of two */

struct dmd_daemon {
	struct event_base	*base;
	struct dm_engine	*engine;
	struct event		*timer;
	uint64_t		 next_handle;
	struct dmd_request	*buckets[HANDLE_BUCKETS];
	char			 node[DM_NODE_NAME_MAX + 1];
	char			 algorithm[DM_ALGORITHM_NAME_MAX + 1];

	const struct dmd_transport_ops *transport;
	void			*transport_ctx;
	void			(*state_hook)(void *ctx, enum dm_effect_type type);
	void			*state_ctx;
	struct state_dir	*state_dir;	/* NULL: floors and records are not stored */
	dm_msec_t		 last_now;
	int			 halt_status;	/* > 0: dmd_daemon_halt() was called */

	/* Events that arrived while a step was running (a transport callback
	 * fired synchronously from inside an effect): stepped right after. */
	bool			 in_step;
	struct deferred_event	*deferred_head, **deferred_tail;
	size_t			 n_deferred;
};

/* A copy of an event and everything it points to. */
struct deferred_event {
	struct deferred_event	*next;
	struct dm_event		 ev;
	char			 peer[DM_NODE_NAME_MAX + 1];
	struct dm_msg		 msg;
};

#define DEFERRED_MAX 65536	/* a bound; past it the event is dropped and logged */

/* CLOCK_BOOTTIME in ms, never going backwards for the engine. */
static dm_msec_t
daemon_now(struct dmd_daemon *d)
{
	struct timespec ts;
	dm_msec_t now = d->last_now;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		now = (dm_msec_t)ts.tv_sec * 1000u + (dm_msec_t)ts.tv_nsec / 1000000u;
	if (now < d->last_now)
		now = d->last_now;
	d->last_now = now;
	return now;
}

static size_t
bucket_of(uint64_t handle)
{
	return (size_t)((handle * 0x9E3779B97F4A7C15ull) >> 52) & (HANDLE_BUCKETS - 1);
}

struct dmd_request *
dmd_daemon_lookup(const struct dmd_daemon *d, uint64_t handle)
{
	for (struct dmd_request *r = d->buckets[bucket_of(handle)]; r != NULL; r = r->hnext)
		if (r->handle == handle)
			return r;
	return NULL;
}

void
dmd_daemon_register(struct dmd_daemon *d, struct dmd_request *req)
{
	size_t b = bucket_of(req->handle);
	req->hnext = d->buckets[b];
	d->buckets[b] = req;
}

void
dmd_daemon_unregister(struct dmd_daemon *d, struct dmd_request *req)
{
	for (struct dmd_request **p = &d->buckets[bucket_of(req->handle)]; *p != NULL;
	    p = &(*p)->hnext) {
		if (*p == req) {
			*p = req->hnext;
			req->hnext = NULL;
			return;
		}
	}
}

uint64_t
dmd_daemon_new_handle(struct dmd_daemon *d)
{
	return ++d->next_handle;
}

static void
daemon_log_effect(const struct dm_effect *fx)
{
	struct log_fields f = {
		.lock = fx->u.log.lock,
		.peer = fx->u.log.peer,
		.token = fx->u.log.token,
	};
	enum log_level level = (enum log_level)fx->u.log.level;
	if (level < LOG_LEVEL_ERR || level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_NOTICE;
	log_full(level, &f, "%s", fx->u.log.text != NULL ? fx->u.log.text : "");
}

static void
daemon_client_effect(struct dmd_daemon *d, uint64_t handle, const struct dm_effect *fx)
{
	struct dmd_request *req = dmd_daemon_lookup(d, handle);
	if (req == NULL) {
		log_debug("effect %d for unknown handle %llu", (int)fx->type,
		    (unsigned long long)handle);
		return;
	}
	local_session_deliver(req, fx);
}

/* The engine needs the floor on disk before the effects that follow it
 * (a grant, a message showing a token of a new epoch).  If it cannot be
 * stored, a later process could repeat fencing tokens: stop now, before
 * any of those effects leaves this process. */
static void
daemon_persist_floor(struct dmd_daemon *d, uint64_t floor)
{
	if (d->state_dir == NULL) {
		log_debug("no state directory: epoch floor %llu not stored",
		    (unsigned long long)floor);
		return;
	}
	if (state_dir_store_floor(d->state_dir, floor) < 0) {
		log_error("cannot store the epoch floor in %s: stopping, so that no fencing"
		    " token of this process can be repeated after a restart", d->state_dir->path);
		exit(EXIT_FAILURE);
	}
	log_debug("epoch floor %llu stored", (unsigned long long)floor);
}

/* The engine needs its membership record on disk before the effects that
 * follow it (a vote for a removal, a roster applied).  If it cannot be
 * stored, a later process could help a node this one saw removed rebuild
 * its old roster: stop now, like daemon_persist_floor(). */
static void
daemon_persist_record(struct dmd_daemon *d, const struct dm_member_record *record)
{
	if (d->state_dir == NULL) {
		log_debug("no state directory: membership record (label %llu) not stored",
		    (unsigned long long)record->label);
		return;
	}
	if (state_dir_store_record(d->state_dir, record) < 0) {
		log_error("cannot store the membership record in %s: stopping, so that a restarted"
		    " process cannot help a node this one saw removed rebuild its old roster",
		    d->state_dir->path);
		exit(EXIT_FAILURE);
	}
	log_debug("membership record stored (label %llu, %zu members, %zu agreed removals)",
	    (unsigned long long)record->label, record->n_names, record->n_removals);
}

/* The effect callback: runs inside dm_engine_step(), never steps. */
static void
daemon_effect(void *ctx, const struct dm_effect *fx)
{
	struct dmd_daemon *d = ctx;
	const struct dmd_transport_ops *t = d->transport;

	/* Halted in this step: the process is as good as dead, nothing it
	 * would still say may leave it.  A floor is stored anyway (a higher
	 * floor is always safe), and so is a membership record (what the
	 * engine has agreed to must be remembered by the next process). */
	if (d->halt_status != 0 && fx->type != DM_FX_LOG && fx->type != DM_FX_PERSIST &&
	    fx->type != DM_FX_PERSIST_RECORD) {
		log_debug("halted: engine effect %d not applied", (int)fx->type);
		return;
	}
	switch (fx->type) {
	case DM_FX_GRANT:
		daemon_client_effect(d, fx->u.grant.handle, fx);
		break;
	case DM_FX_DENY:
		daemon_client_effect(d, fx->u.deny.handle, fx);
		break;
	case DM_FX_EXTEND:
		daemon_client_effect(d, fx->u.extend.handle, fx);
		break;
	case DM_FX_LOST:
		daemon_client_effect(d, fx->u.lost.handle, fx);
		break;
	case DM_FX_SEND:
		if (t != NULL && t->send != NULL)
			t->send(d->transport_ctx, fx->u.send.peer, fx->u.send.msg);
		else
			log_debug("no transport: message to %s dropped", fx->u.send.peer);
		break;
	case DM_FX_PEER_ADD:
		if (t != NULL && t->peer_add != NULL)
			t->peer_add(d->transport_ctx, fx->u.peer.name, fx->u.peer.address);
		else
			log_debug("no transport: peer %s not linked", fx->u.peer.name);
		break;
	case DM_FX_PEER_REMOVE:
		if (t != NULL && t->peer_remove != NULL)
			t->peer_remove(d->transport_ctx, fx->u.peer.name);
		break;
	case DM_FX_READY:
	case DM_FX_LEFT:
		if (d->state_hook != NULL)
			d->state_hook(d->state_ctx, fx->type);
		break;
	case DM_FX_LOG:
		daemon_log_effect(fx);
		break;
	case DM_FX_PERSIST:
		daemon_persist_floor(d, fx->u.persist.floor);
		break;
	case DM_FX_PERSIST_RECORD:
		daemon_persist_record(d, &fx->u.record);
		break;
	default:
		log_warning("unknown engine effect %d", (int)fx->type);
		break;
	}
}

static void
daemon_rearm(struct dmd_daemon *d)
{
	dm_msec_t due = dm_engine_next_deadline(d->engine);
	if (due == 0) {
		evtimer_del(d->timer);
		return;
	}
	dm_msec_t now = d->last_now;
	dm_msec_t wait = due > now ? due - now : 0;
	struct timeval tv = {
		.tv_sec = (time_t)(wait / 1000),
		.tv_usec = (suseconds_t)((wait % 1000) * 1000),
	};
	evtimer_add(d->timer, &tv);
}

/* Copy ev (and the peer name and message it borrows) for later. */
static int
daemon_defer(struct dmd_daemon *d, const struct dm_event *ev)
{
	if (d->n_deferred >= DEFERRED_MAX)
		return log_error_errno(ENOBUFS, "too many events deferred; event %d dropped",
		    (int)ev->type);
	struct deferred_event *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return log_error_errno(ENOMEM, "cannot defer event %d", (int)ev->type);
	q->ev = *ev;
	const char **peer = NULL;
	switch (ev->type) {
	case DM_EV_RECEIVE:
		peer = &q->ev.u.receive.peer;
		q->msg = *ev->u.receive.msg;
		q->ev.u.receive.msg = &q->msg;
		break;
	case DM_EV_LINK_UP:
	case DM_EV_LINK_DOWN:
		peer = &q->ev.u.link.peer;
		break;
	case DM_EV_PEER_RESTARTED:
		peer = &q->ev.u.restarted.peer;
		break;
	case DM_EV_REMOVE_NODE:
		peer = &q->ev.u.remove.peer;
		break;
	default:
		break;
	}
	if (peer != NULL && *peer != NULL) {
		snprintf(q->peer, sizeof(q->peer), "%s", *peer);
		*peer = q->peer;
	}
	*d->deferred_tail = q;
	d->deferred_tail = &q->next;
	d->n_deferred++;
	return 0;
}

static int
daemon_step_now(struct dmd_daemon *d, struct dm_event *ev)
{
	const struct dmd_transport_ops *t = d->transport;

	ev->now = daemon_now(d);
	d->in_step = true;
	if (t != NULL && t->hold != NULL)
		t->hold(d->transport_ctx);
	int r = dm_engine_step(d->engine, ev, daemon_effect, d);
	if (t != NULL && t->release != NULL)
		t->release(d->transport_ctx);
	d->in_step = false;
	return r;
}

int
dmd_daemon_step(struct dmd_daemon *d, struct dm_event *ev)
{
	if (d->halt_status != 0)
		return -ESHUTDOWN;
	if (d->in_step)
		return daemon_defer(d, ev);
	int r = daemon_step_now(d, ev);
	while (d->deferred_head != NULL) {
		struct deferred_event *q = d->deferred_head;
		d->deferred_head = q->next;
		if (d->deferred_head == NULL)
			d->deferred_tail = &d->deferred_head;
		d->n_deferred--;
		int r2 = d->halt_status != 0 ? 0 : daemon_step_now(d, &q->ev);
		if (r2 < 0)
			log_warning_errno(r2, "deferred engine event %d failed", (int)q->ev.type);
		free(q);
	}
	if (d->halt_status != 0)
		evtimer_del(d->timer);
	else
		daemon_rearm(d);
	return r;
}

bool
dmd_daemon_in_step(const struct dmd_daemon *d)
{
	return d->in_step;
}

void
dmd_daemon_halt(struct dmd_daemon *d, int status)
{
	if (d->halt_status != 0)
		return;
	d->halt_status = status > 0 ? status : 1;
	evtimer_del(d->timer);
	event_base_loopbreak(d->base);
}

int
dmd_daemon_halt_status(const struct dmd_daemon *d)
{
	return d->halt_status;
}

static void
daemon_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct dmd_daemon *d = arg;
	struct dm_event ev = { .type = DM_EV_TICK };
	int r = dmd_daemon_step(d, &ev);
	if (r < 0)
		log_warning_errno(r, "engine tick failed");
}

int
dmd_daemon_new(struct event_base *base, const struct dm_engine_config *config,
    struct dmd_daemon **ret)
{
	struct dmd_daemon *d;
	int r;

	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	d->base = base;
	d->deferred_tail = &d->deferred_head;
	r = dm_engine_new(config, &d->engine);
	if (r < 0)
		goto fail;
	d->timer = evtimer_new(base, daemon_on_timer, d);
	if (d->timer == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	snprintf(d->node, sizeof(d->node), "%s", config->self);
	snprintf(d->algorithm, sizeof(d->algorithm), "%s", config->algorithm);
	*ret = d;
	return 0;
fail:
	dmd_daemon_free(d);
	return r;
}

struct dmd_daemon *
dmd_daemon_free(struct dmd_daemon *d)
{
	if (d == NULL)
		return NULL;
	if (d->timer != NULL)
		event_free(d->timer);
	while (d->deferred_head != NULL) {
		struct deferred_event *q = d->deferred_head;
		d->deferred_head = q->next;
		free(q);
	}
	dm_engine_free(d->engine);
	free(d);
	return NULL;
}

void
dmd_daemon_set_transport(struct dmd_daemon *d, const struct dmd_transport_ops *ops, void *ctx)
{
	d->transport = ops;
	d->transport_ctx = ctx;
}

void
dmd_daemon_set_state_hook(struct dmd_daemon *d,
    void (*hook)(void *ctx, enum dm_effect_type type), void *ctx)
{
	d->state_hook = hook;
	d->state_ctx = ctx;
}

void
dmd_daemon_set_state_dir(struct dmd_daemon *d, struct state_dir *dir)
{
	d->state_dir = dir;
}

const struct dm_engine *
dmd_daemon_engine(const struct dmd_daemon *d)
{
	return d->engine;
}

struct event_base *
dmd_daemon_base(const struct dmd_daemon *d)
{
	return d->base;
}

const char *
dmd_daemon_node(const struct dmd_daemon *d)
{
	return d->node;
}

const char *
dmd_daemon_algorithm(const struct dmd_daemon *d)
{
	return d->algorithm;
}

bool
dmd_daemon_has_transport(const struct dmd_daemon *d)
{
	return d->transport != NULL;
}

int
dmd_daemon_peer_info(const struct dmd_daemon *d, const char *name, struct dmd_peer_link_info *ret)
{
	if (d->transport == NULL || d->transport->peer_info == NULL)
		return -ENOENT;
	return d->transport->peer_info(d->transport_ctx, name, ret);
}
