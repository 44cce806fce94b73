/*
 * peer_transport.c: the peer transport object: listeners, the table of
 * peers with their sessions, dialing with exponential backoff and jitter,
 * the periodic tick (keepalives, silent peers, handshake timeouts, write
 * buffer limits), the reaper that frees closed links, and the callbacks to
 * the daemon.  One connection's protocol lives in peer_link.c.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "dm_types.h"
#include "dmlockd/accept_guard.h"
#include "dmlockd/config_file.h"
#include "dmlockd/log.h"
#include "dmlockd/peer_internal.h"

#define DRAIN_TIMEOUT_MS 2000

dm_msec_t
peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (dm_msec_t)ts.tv_sec * 1000 + (dm_msec_t)ts.tv_nsec / 1000000;
}

uint64_t
peer_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static struct timeval
ms_to_timeval(dm_msec_t ms)
{
	return (struct timeval){ .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };
}

/* splitmix64: the jitter source, seeded by the caller or getrandom(). */
static uint64_t
rng_next(struct peer_transport *t)
{
	uint64_t z = t->rng;

	t->rng += DM_MIX64_GAMMA;
	return dm_mix64(z);
}

void
peer_refused(struct peer_transport *t, const char *peer, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = peer }, "%s", text);
	if (t->cb.on_refused != NULL && !t->freeing)
		t->cb.on_refused(t->ctx, peer, text);
}

void
peer_transport_reap_later(struct peer_transport *t)
{
	if (!t->freeing)
		event_active(t->reaper, 0, 0);
}

static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer_transport *t = arg;
	struct peer_link *link, *next;

	for (link = TAILQ_FIRST(&t->links); link != NULL; link = next) {
		next = TAILQ_NEXT(link, entry);
		if (link->state == LINK_DEAD)
			peer_link_free(link);
	}
}

static void
ack_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer_transport *t = arg;
	struct peer_link *link;

	TAILQ_FOREACH(link, &t->links, entry)
		peer_link_send_ack(link);
}

void
peer_transport_ack_later(struct peer_transport *t)
{
	struct timeval tv = ms_to_timeval(ACK_DELAY_MS);

	if (!t->freeing && !evtimer_pending(t->ack_timer, NULL))
		evtimer_add(t->ack_timer, &tv);
}

struct peer *
peer_find(const struct peer_transport *t, const char *name)
{
	struct peer *p;

	TAILQ_FOREACH(p, &t->peers, entry)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static void
dial_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer *p = arg;

	if (p->active != NULL || p->dialing != NULL || p->address == NULL)
		return;
	log_full(LOG_LEVEL_DEBUG, &(struct log_fields){ .peer = p->name }, "dialing %s at %s",
	    p->name, p->address);
	p->dialing = peer_link_new_outbound(p->t, p);
	if (p->dialing == NULL) {
		p->dial_failures++;
		peer_schedule_dial(p);
	}
}

void
peer_schedule_dial(struct peer *p)
{
	struct peer_transport *t = p->t;
	dm_msec_t delay, base;
	struct timeval tv;

	if (t->freeing || p->address == NULL || p->active != NULL || p->dialing != NULL ||
	    evtimer_pending(p->dial_timer, NULL))
		return;
	if (p->dial_failures == 0) {
		delay = rng_next(t) % (t->limits.reconnect_min_ms + 1);
	} else {
		uint32_t shift = p->dial_failures - 1 < 20 ? p->dial_failures - 1 : 20;
		base = t->limits.reconnect_min_ms << shift;
		if (base > t->limits.reconnect_max_ms)
			base = t->limits.reconnect_max_ms;
		delay = base / 2 + rng_next(t) % (base / 2 + 1);
	}
	tv = ms_to_timeval(delay);
	evtimer_add(p->dial_timer, &tv);
}

struct peer *
peer_create(struct peer_transport *t, const char *name, const char *address)
{
	struct peer *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->t = t;
	p->rtt_us = -1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (address != NULL && (p->address = strdup(address)) == NULL)
		goto fail;
	p->dial_timer = evtimer_new(t->base, dial_cb, p);
	if (p->dial_timer == NULL)
		goto fail;
	peer_session_init(&p->session, t->limits.send_queue_limit, ++t->last_epoch);
	TAILQ_INSERT_TAIL(&t->peers, p, entry);
	t->n_peers++;
	peer_schedule_dial(p);
	return p;
fail:
	free(p->address);
	free(p);
	return NULL;
}

void
peer_drop_links_except(struct peer *p, struct peer_link *keep)
{
	struct peer_link *link;

	TAILQ_FOREACH(link, &p->t->links, entry) {
		if (link == keep || link->peer != p)
			continue;
		if (p->active == link)
			p->active = NULL;
		if (p->dialing == link)
			p->dialing = NULL;
		link->peer = NULL;
		peer_link_close(link, true, FRAME_BYE_NORMAL, NULL);
	}
}

void
peer_resync(struct peer *p, const char *why)
{
	struct peer_transport *t = p->t;
	bool was_up = p->active != NULL || p->down_deferred;
	size_t dropped = p->session.count;
	char name[DM_NODE_NAME_MAX + 1];

	snprintf(name, sizeof(name), "%s", p->name);
	log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = p->name },
	    "session with %s out of step (%s): dropping %zu queued messages, new session", p->name,
	    why, dropped);
	peer_drop_links_except(p, NULL);
	peer_session_new_epoch(&p->session, ++t->last_epoch);
	p->highest_written = 0;
	p->rtt_probe_seq = 0;
	p->down_deferred = false;
	p->dial_failures++;
	peer_schedule_dial(p);
	/* Both ends lost messages without their users knowing (ours here, the
	 * peer's when it sees the new epoch): say so before the link-down. */
	if (t->cb.on_session_lost != NULL && !t->freeing)
		t->cb.on_session_lost(t->ctx, name, dropped, why);
	if (was_up && t->cb.on_link_down != NULL && !t->freeing)
		t->cb.on_link_down(t->ctx, name);
}

static void
peer_destroy(struct peer *p)
{
	struct peer_transport *t = p->t;

	peer_drop_links_except(p, NULL);
	event_free(p->dial_timer);
	peer_session_reset(&p->session);
	TAILQ_REMOVE(&t->peers, p, entry);
	t->n_peers--;
	free(p->address);
	free(p);
}

void
peer_link_became_active(struct peer_link *link, bool restarted, bool was_up)
{
	struct peer_transport *t = link->t;
	struct peer *p = link->peer;
	char name[DM_NODE_NAME_MAX + 1];
	uint64_t incarnation = p->session.peer_incarnation;

	snprintf(name, sizeof(name), "%s", p->name);
	p->dial_failures = 0;
	evtimer_del(p->dial_timer);
	log_full(LOG_LEVEL_INFO, &(struct log_fields){ .peer = name },
	    "link with %s up (%s, %s, incarnation %" PRIu64 ", %zu messages to resend)", name,
	    link->remote, link->outbound ? "dialed" : "accepted", incarnation, p->session.count);
	if (restarted && t->cb.on_peer_restarted != NULL)
		t->cb.on_peer_restarted(t->ctx, name, incarnation);
	if (!was_up && link->state == LINK_ACTIVE && t->cb.on_link_up != NULL)
		t->cb.on_link_up(t->ctx, name);
}

void
peer_link_detached(struct peer *p, bool was_active)
{
	struct peer_transport *t = p->t;
	char name[DM_NODE_NAME_MAX + 1];

	snprintf(name, sizeof(name), "%s", p->name);
	if (!was_active)
		p->dial_failures++;
	if (p->active != NULL)
		return;		/* another link took over */
	if (was_active && p->dialing != NULL && p->dialing->state == LINK_HELLO) {
		/* Typically the peer closed its duplicate of the link we are
		 * completing: report "down" only if that one fails too. */
		p->down_deferred = true;
		return;
	}
	if (!was_active && !p->down_deferred)
		return peer_schedule_dial(p);
	p->down_deferred = false;
	peer_schedule_dial(p);
	if (t->cb.on_link_down != NULL && !t->freeing)
		t->cb.on_link_down(t->ctx, name);
}

static size_t
inbound_handshakes(const struct peer_transport *t)
{
	const struct peer_link *link;
	size_t n = 0;

	TAILQ_FOREACH(link, &t->links, entry)
		if (!link->outbound && (link->state == LINK_TLS || link->state == LINK_HELLO))
			n++;
	return n;
}

static void
accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct peer_listener *l = arg;
	struct peer_transport *t = l->t;

	accept_guard_on_accept(l->guard);

	if (inbound_handshakes(t) >= t->limits.max_handshakes) {
		evutil_closesocket(fd);
		peer_refused(t, NULL, "too many handshakes in progress (limit %" PRIu32 "): connection closed",
		    t->limits.max_handshakes);
		return;
	}
	evutil_make_socket_nonblocking(fd);
	peer_socket_set_nodelay(fd);
	peer_link_new_inbound(t, fd, sa, salen);
}

/* Engine messages are small and latency-bound: no Nagle delay behind the
 * peer's delayed ACK (40 ms per round on Linux). */
void
peer_socket_set_nodelay(evutil_socket_t fd)
{
	int one = 1;
	if (fd >= 0 && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		log_debug("cannot set TCP_NODELAY on fd %d: %s", (int)fd, strerror(errno));
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer_transport *t = arg;
	const struct peer_transport_limits *l = &t->limits;
	dm_msec_t now = peer_now_ms();
	struct peer_link *link;

	TAILQ_FOREACH(link, &t->links, entry) {
		const char *name = link->peer != NULL ? link->peer->name : NULL;
		switch (link->state) {
		case LINK_DEAD:
			break;
		case LINK_DRAINING:
			if (now - link->last_tx_ms > DRAIN_TIMEOUT_MS) {
				link->state = LINK_DEAD;
				peer_transport_reap_later(t);
			}
			break;
		case LINK_TLS:
		case LINK_HELLO:
			if (now - link->started_ms <= l->handshake_timeout_ms)
				break;
			if (link->outbound) {
				log_full(LOG_LEVEL_DEBUG, &(struct log_fields){ .peer = name },
				    "connecting to %s timed out", link->remote);
				peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
			} else {
				peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
				peer_refused(t, NULL, "handshake with %s timed out after %" PRIu64 " ms",
				    link->remote, (uint64_t)l->handshake_timeout_ms);
			}
			break;
		case LINK_ACTIVE:
			if (now - link->last_rx_ms > l->keepalive_ms * l->keepalive_misses) {
				log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = name },
				    "peer %s silent for %" PRIu64 " ms: cutting the link", name,
				    (uint64_t)(now - link->last_rx_ms));
				peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
			} else if (peer_link_output_length(link) > l->write_buffer_limit) {
				log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = name },
				    "peer %s too slow: %zu bytes waiting to be written (limit %zu): cutting the link",
				    name, peer_link_output_length(link), l->write_buffer_limit);
				peer_link_close(link, true, FRAME_BYE_OVERLOAD, "write buffer over limit");
			} else if (now - link->last_tx_ms >= l->keepalive_ms) {
				peer_link_send_keepalive(link);
			}
			break;
		}
	}
}

static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct peer_listener *l = arg;
	int err = EVUTIL_SOCKET_ERROR();

	if (!accept_guard_on_error(l->guard, err))
		log_warning_errno(err, "accept on a peer listener failed");
}

static int
listen_on(struct peer_transport *t, const char *address)
{
	struct sockaddr_storage ss;
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC;
	struct evconnlistener *lev;
	int len, r;

	r = peer_resolve_address(address, true, &ss, &len);
	if (r < 0) {
		log_error("cannot listen on %s: not an address", address);
		return r;
	}
	if (ss.ss_family == AF_INET6)
		flags |= LEV_OPT_BIND_IPV6ONLY;
	struct peer_listener *l = &t->listeners[t->n_listeners];
	lev = evconnlistener_new_bind(t->base, accept_cb, l, flags, 64, (struct sockaddr *)&ss, len);
	if (lev == NULL) {
		r = errno != 0 ? -errno : -EADDRNOTAVAIL;
		return log_error_errno(r, "cannot listen on %s: %s", address, strerror(-r));
	}
	char what[96];
	snprintf(what, sizeof(what), "peer listener %s", address);
	r = accept_guard_new(t->base, lev, what, &l->guard);
	if (r < 0) {
		evconnlistener_free(lev);
		return log_error_errno(r, "cannot listen on %s", address);
	}
	l->lev = lev;
	l->t = t;
	evconnlistener_set_error_cb(lev, accept_error_cb);
	t->n_listeners++;
	return 0;
}

/* OpenSSL writes to sockets with write(2): a peer that vanished would kill
 * the process with SIGPIPE.  Ignore it unless the program installed a
 * handler of its own. */
static void
ignore_sigpipe(void)
{
	struct sigaction sa;

	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
}

static void
apply_limit_defaults(struct peer_transport_limits *l)
{
#define DEFAULT(field, value) do { if (l->field == 0) l->field = (value); } while (0)
	DEFAULT(keepalive_ms, 1000);
	DEFAULT(keepalive_misses, 5);
	DEFAULT(reconnect_min_ms, 100);
	DEFAULT(reconnect_max_ms, 5000);
	DEFAULT(handshake_timeout_ms, 10000);
	DEFAULT(max_handshakes, 64);
	DEFAULT(send_queue_limit, 65536);
	DEFAULT(write_buffer_limit, 16 * 1024 * 1024);
	DEFAULT(max_payload, FRAME_PAYLOAD_MAX);
#undef DEFAULT
}

int
peer_transport_new(struct event_base *base, const struct peer_transport_config *config,
    const struct peer_transport_callbacks *callbacks, void *ctx, struct peer_transport **ret)
{
	struct peer_transport *t;
	struct timeval tv;
	int r;

	if (config->self == NULL || !dm_node_name_valid(config->self, strlen(config->self)) ||
	    config->cluster == NULL || !frame_cluster_name_valid(config->cluster, strlen(config->cluster)) ||
	    config->algorithm == NULL ||
	    !frame_algorithm_name_valid(config->algorithm, strlen(config->algorithm)) ||
	    config->incarnation == 0 || config->tls == NULL ||
	    config->n_listen > sizeof(t->listeners) / sizeof(t->listeners[0]) ||
	    config->limits.max_payload > FRAME_PAYLOAD_MAX)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	ignore_sigpipe();
	t->base = base;
	snprintf(t->self, sizeof(t->self), "%s", config->self);
	snprintf(t->cluster, sizeof(t->cluster), "%s", config->cluster);
	snprintf(t->algorithm, sizeof(t->algorithm), "%s", config->algorithm);
	t->incarnation = config->incarnation;
	t->refuse_unknown_peers = config->refuse_unknown_peers;
	t->limits = config->limits;
	apply_limit_defaults(&t->limits);
	if (t->limits.reconnect_min_ms > t->limits.reconnect_max_ms)
		t->limits.reconnect_max_ms = t->limits.reconnect_min_ms;
	if (callbacks != NULL)
		t->cb = *callbacks;
	t->ctx = ctx;
	t->rng = config->seed;
	if (t->rng == 0 && getrandom(&t->rng, sizeof(t->rng), 0) != sizeof(t->rng))
		t->rng = (uint64_t)peer_now_ms() ^ (uint64_t)getpid();
	TAILQ_INIT(&t->peers);
	TAILQ_INIT(&t->links);
	SSL_CTX_up_ref(config->tls);
	t->tls = config->tls;
	t->reaper = event_new(base, -1, 0, reap_cb, t);
	t->tick = event_new(base, -1, EV_PERSIST, tick_cb, t);
	t->ack_timer = evtimer_new(base, ack_cb, t);
	if (t->reaper == NULL || t->tick == NULL || t->ack_timer == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < config->n_listen; i++) {
		r = listen_on(t, config->listen[i]);
		if (r < 0)
			goto fail;
	}
	tv = ms_to_timeval(t->limits.keepalive_ms / 2 > 10 ? t->limits.keepalive_ms / 2 : 10);
	event_add(t->tick, &tv);
	*ret = t;
	return 0;
fail:
	peer_transport_free(t);
	return r;
}

struct peer_transport *
peer_transport_free(struct peer_transport *t)
{
	struct peer_link *link;
	struct peer *p;

	if (t == NULL)
		return NULL;
	t->freeing = true;
	while ((p = TAILQ_FIRST(&t->peers)) != NULL)
		peer_destroy(p);
	while ((link = TAILQ_FIRST(&t->links)) != NULL)
		peer_link_free(link);
	for (size_t i = 0; i < t->n_listeners; i++) {
		evconnlistener_free(t->listeners[i].lev);
		accept_guard_free(t->listeners[i].guard);
	}
	if (t->tick != NULL)
		event_free(t->tick);
	if (t->reaper != NULL)
		event_free(t->reaper);
	if (t->ack_timer != NULL)
		event_free(t->ack_timer);
	SSL_CTX_free(t->tls);
	free(t);
	return NULL;
}

int
peer_transport_add_peer(struct peer_transport *t, const char *name, const char *address)
{
	struct peer *p;

	if (name == NULL || !dm_node_name_valid(name, strlen(name)) || strcmp(name, t->self) == 0)
		return -EINVAL;
	if (address != NULL && config_parse_address(address, NULL, 0, NULL) < 0)
		return -EINVAL;
	p = peer_find(t, name);
	if (p == NULL) {
		if (t->n_peers >= DM_NODES_MAX)
			return -ENOSPC;
		return peer_create(t, name, address) != NULL ? 0 : -ENOMEM;
	}
	if (address != NULL && (p->address == NULL || strcmp(p->address, address) != 0)) {
		char *copy = strdup(address);
		if (copy == NULL)
			return -ENOMEM;
		free(p->address);
		p->address = copy;
		p->dial_failures = 0;
		peer_schedule_dial(p);
	}
	return 0;
}

bool
peer_transport_writing(const struct peer_transport *t)
{
	const struct peer_link *link;

	TAILQ_FOREACH(link, &t->links, entry)
		if (link->state == LINK_DRAINING ||
		    (link->state == LINK_ACTIVE && peer_link_output_length(link) > 0))
			return true;
	return false;
}

int
peer_transport_remove_peer(struct peer_transport *t, const char *name)
{
	struct peer *p = peer_find(t, name);

	if (p == NULL)
		return -ENOENT;
	log_full(LOG_LEVEL_INFO, &(struct log_fields){ .peer = name }, "forgetting peer %s", name);
	/* What was sent to it while held goes first, as it would have without
	 * the hold: the LEAVE_ACK of a step that also removes the node that
	 * left (the link drains its output before it closes). */
	if (p->flush_held && p->active != NULL)
		peer_link_flush(p->active);
	peer_destroy(p);
	return 0;
}

int
peer_transport_send(struct peer_transport *t, const char *name, const uint8_t *payload, size_t len)
{
	struct peer *p = peer_find(t, name);
	int r;

	if (p == NULL)
		return -ENOENT;
	if (len == 0 || len > t->limits.max_payload)
		return -EMSGSIZE;
	r = peer_session_queue(&p->session, payload, len);
	if (r == -ENOBUFS) {
		size_t unacked = p->session.count;
		char peer[DM_NODE_NAME_MAX + 1];

		snprintf(peer, sizeof(peer), "%s", p->name);
		log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = peer },
		    "send queue to %s full (%zu messages unacknowledged): message dropped, "
		    "cutting the link", peer, unacked);
		if (p->active != NULL)
			peer_link_close(p->active, true, FRAME_BYE_OVERLOAD, "send queue over limit");
		/* The session now misses a message: only the user can decide
		 * what that means (dmlockd exits, TRANSPORT-NOTES.md). */
		if (t->cb.on_send_overflow != NULL && !t->freeing)
			t->cb.on_send_overflow(t->ctx, peer, unacked);
		return r;
	}
	if (r < 0)
		return r;
	if (t->held > 0)
		p->flush_held = true;
	else if (p->active != NULL)
		peer_link_flush(p->active);
	return 0;
}

void
peer_transport_hold(struct peer_transport *t)
{
	t->held++;
}

void
peer_transport_release(struct peer_transport *t)
{
	struct peer *p;

	if (t->held == 0 || --t->held > 0)
		return;
	TAILQ_FOREACH(p, &t->peers, entry) {
		if (!p->flush_held)
			continue;
		p->flush_held = false;
		if (p->active != NULL)
			peer_link_flush(p->active);
	}
}

size_t
peer_transport_set_tls(struct peer_transport *t, SSL_CTX *ctx)
{
	struct peer_link *link;
	size_t cut = 0;

	SSL_CTX_up_ref(ctx);
	SSL_CTX_free(t->tls);
	t->tls = ctx;
	/* Every link was verified against the old CA/CRL (a peer revoked
	 * since would stay connected for good): close them all.  Sessions
	 * survive; both ends redial and handshake with the new context.
	 * Closing marks a link dead or draining, the reaper frees it later,
	 * so the walk is safe. */
	TAILQ_FOREACH(link, &t->links, entry) {
		if (link->state == LINK_DEAD || link->state == LINK_DRAINING)
			continue;
		peer_link_close(link, true, FRAME_BYE_NORMAL, "TLS configuration reloaded");
		cut++;
	}
	log_info("TLS context replaced: %zu peer link(s) closed to handshake again with the new "
	    "certificates, CA and CRL", cut);
	return cut;
}

int
peer_transport_cut_link(struct peer_transport *t, const char *name)
{
	struct peer *p = peer_find(t, name);
	evutil_socket_t fd;

	if (p == NULL || p->active == NULL)
		return -ENOENT;
	fd = bufferevent_getfd(p->active->bev);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .peer = name }, "cutting link with %s", name);
	peer_link_close(p->active, false, FRAME_BYE_NORMAL, NULL);
	return 0;
}

int
peer_transport_listen_address(const struct peer_transport *t, size_t i, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64];

	if (i >= t->n_listeners ||
	    getsockname(evconnlistener_get_fd(t->listeners[i].lev), (struct sockaddr *)&ss, &sl) < 0)
		return -ENOENT;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		evutil_inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		evutil_inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	}
	return 0;
}

int
peer_transport_peer_info(const struct peer_transport *t, const char *name,
    struct peer_transport_peer_info *ret)
{
	const struct peer *p = peer_find(t, name);

	if (p == NULL)
		return -ENOENT;
	*ret = (struct peer_transport_peer_info){
		.link_up = p->active != NULL,
		.incarnation = p->session.peer_incarnation,
		.queued = p->session.count,
		.last_sent_seq = p->session.last_queued,
		.last_received_seq = p->session.last_received,
		.links_established = p->links_established,
		.data_frames_sent = p->data_frames_sent,
		.data_frames_resent = p->data_frames_resent,
		.data_frames_received = p->data_frames_received,
		.last_contact_ms = p->last_contact_ms != 0 ? (int64_t)(peer_now_ms() -
		    p->last_contact_ms) : -1,
		.rtt_us = p->rtt_us,
	};
	return 0;
}
