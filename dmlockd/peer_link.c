/*
 * peer_link.c: one TLS connection to a peer: TCP connect or accept, the TLS
 * handshake, the HELLO exchange (identity, cluster, algorithm, incarnation,
 * resume point), then framed DATA/ACK/KEEPALIVE/BYE in both directions.
 * Decides nothing about peers beyond this link: peer_transport.c owns the
 * roster, dialing, timers and callbacks to the daemon.
 *
 * Links are never freed inside a callback: closing marks them DEAD (or
 * DRAINING while a BYE is written) and the transport's reaper frees them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>

#include "dmlockd/config_file.h"
#include "dmlockd/log.h"
#include "dmlockd/peer_internal.h"
#include "dmlockd/tls.h"

/* Keep at most this much queued DATA in a link's output buffer; refill when
 * it drains below FLUSH_LOW. */
#define FLUSH_HIGH	(256 * 1024)
#define FLUSH_LOW	(64 * 1024)

/* On a busy link (an ACK written less than ACK_DELAY_MS ago) ACKs wait for
 * the next DATA to the peer (they go out in the same TLS record), for this
 * many unacknowledged messages, or for the transport's ACK timer: an ACK
 * written on its own costs a record and a write(2) on the path of whatever
 * the message caused (a grant, a reply).  On a quiet link they go at once,
 * so that the round trip measured (rtt_us) is the network's. */
#define ACK_BATCH	64

static void link_read_cb(struct bufferevent *bev, void *arg);
static void link_write_cb(struct bufferevent *bev, void *arg);
static void link_event_cb(struct bufferevent *bev, short what, void *arg);

static const char *
link_peer_name(const struct peer_link *link)
{
	return link->peer != NULL ? link->peer->name : NULL;
}

static void
format_remote(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "?");
	}
}

/* Resolve "host:port" / "[v6]:port".  Numeric addresses are parsed; names
 * go through getaddrinfo(), which blocks (addresses in dmlockd.conf are
 * normally numeric). */
int
peer_resolve_address(const char *address, bool passive, struct sockaddr_storage *ss, int *len)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	char host[DM_ADDRESS_MAX + 1];
	const char *port;
	uint16_t p;
	int r;

	if (strlen(address) > DM_ADDRESS_MAX)
		return -EINVAL;
	if (passive && strlen(address) > 2 && strcmp(address + strlen(address) - 2, ":0") == 0) {
		/* port 0: any free port (tests); check the rest with port 1 */
		char probe[DM_ADDRESS_MAX + 2];
		snprintf(probe, sizeof(probe), "%.*s:1", (int)(strlen(address) - 2), address);
		if (config_parse_address(probe, host, sizeof(host), &p) < 0)
			return -EINVAL;
		port = "0";
	} else {
		if (config_parse_address(address, host, sizeof(host), &p) < 0)
			return -EINVAL;
		port = strrchr(address, ':') + 1;
	}
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_NUMERICHOST | (passive ? AI_PASSIVE : 0);
	r = getaddrinfo(host, port, &hints, &res);
	if (r == EAI_NONAME) {
		hints.ai_flags &= ~AI_NUMERICHOST;
		r = getaddrinfo(host, port, &hints, &res);
	}
	if (r != 0 || res == NULL)
		return -EHOSTUNREACH;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = (int)res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static struct peer_link *
link_new(struct peer_transport *t, evutil_socket_t fd, enum bufferevent_ssl_state state)
{
	struct peer_link *link = calloc(1, sizeof(*link));

	if (link == NULL)
		return NULL;
	link->t = t;
	link->ssl = SSL_new(t->tls);
	if (link->ssl == NULL)
		goto fail;
	link->bev = bufferevent_openssl_socket_new(t->base, fd, link->ssl, state,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (link->bev == NULL)
		goto fail;	/* libevent freed nothing: SSL is still ours */
	bufferevent_openssl_set_allow_dirty_shutdown(link->bev, 1);
	bufferevent_setcb(link->bev, link_read_cb, link_write_cb, link_event_cb, link);
	bufferevent_setwatermark(link->bev, EV_READ, 0, FRAME_MAX + FRAME_HEADER_LEN);
	bufferevent_setwatermark(link->bev, EV_WRITE, FLUSH_LOW, 0);
	link->state = LINK_TLS;
	link->started_ms = link->last_rx_ms = link->last_tx_ms = peer_now_ms();
	TAILQ_INSERT_TAIL(&t->links, link, entry);
	return link;
fail:
	if (link->ssl != NULL)
		SSL_free(link->ssl);
	free(link);
	return NULL;
}

struct peer_link *
peer_link_new_inbound(struct peer_transport *t, evutil_socket_t fd, const struct sockaddr *sa,
    int salen)
{
	struct peer_link *link = link_new(t, fd, BUFFEREVENT_SSL_ACCEPTING);

	if (link == NULL) {
		evutil_closesocket(fd);
		return NULL;
	}
	format_remote(sa, link->remote, sizeof(link->remote));
	bufferevent_enable(link->bev, EV_READ | EV_WRITE);
	return link;
}

struct peer_link *
peer_link_new_outbound(struct peer_transport *t, struct peer *p)
{
	struct sockaddr_storage ss;
	struct peer_link *link;
	int len;

	if (peer_resolve_address(p->address, false, &ss, &len) < 0) {
		log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = p->name },
		    "cannot resolve address %s of peer %s", p->address, p->name);
		return NULL;
	}
	link = link_new(t, -1, BUFFEREVENT_SSL_CONNECTING);
	if (link == NULL)
		return NULL;
	link->outbound = true;
	link->peer = p;
	snprintf(link->remote, sizeof(link->remote), "%s", p->address);
	if (tls_expect_peer_name(link->ssl, p->name) < 0 ||
	    bufferevent_socket_connect(link->bev, (struct sockaddr *)&ss, len) < 0) {
		link->peer = NULL;
		link->state = LINK_DEAD;
		peer_transport_reap_later(t);
		return NULL;
	}
	peer_socket_set_nodelay(bufferevent_getfd(link->bev));
	bufferevent_enable(link->bev, EV_READ | EV_WRITE);
	return link;
}

void
peer_link_free(struct peer_link *link)
{
	TAILQ_REMOVE(&link->t->links, link, entry);
	bufferevent_free(link->bev);	/* frees the SSL and closes the fd */
	free(link);
}

size_t
peer_link_output_length(const struct peer_link *link)
{
	return evbuffer_get_length(bufferevent_get_output(link->bev));
}

static void
link_write_frame(struct peer_link *link, const struct frame *f)
{
	uint8_t buf[FRAME_HEADER_LEN + 512];
	size_t n;

	if (frame_encode(f, buf, sizeof(buf), &n) == 0) {
		bufferevent_write(link->bev, buf, n);
		link->last_tx_ms = peer_now_ms();
	}
}

void
peer_link_send_keepalive(struct peer_link *link)
{
	link_write_frame(link, &(struct frame){ .type = FRAME_KEEPALIVE });
}

static uint64_t
link_acks_pending(const struct peer_link *link)
{
	const struct peer *p = link->peer;

	if (link->state != LINK_ACTIVE || p == NULL)
		return 0;
	return p->session.last_received - p->session.last_ack_sent;
}

void
peer_link_send_ack(struct peer_link *link)
{
	struct peer *p = link->peer;

	if (link_acks_pending(link) == 0)
		return;
	p->session.last_ack_sent = p->session.last_received;
	link_write_frame(link, &(struct frame){ .type = FRAME_ACK, .u.ack.seq = p->session.last_received });
	link->last_ack_ms = link->last_tx_ms;
}

static void
link_send_hello(struct peer_link *link, const struct peer *p)
{
	struct peer_transport *t = link->t;
	struct frame f = { .type = FRAME_HELLO };
	struct peer_hello_view v;

	peer_session_hello_out(&p->session, t->incarnation, &v);
	f.u.hello.version = FRAME_PROTOCOL_VERSION;
	f.u.hello.incarnation = v.incarnation;
	f.u.hello.epoch = v.epoch;
	f.u.hello.your_incarnation = v.your_incarnation;
	f.u.hello.your_epoch = v.your_epoch;
	f.u.hello.last_received = v.last_received;
	snprintf(f.u.hello.name, sizeof(f.u.hello.name), "%s", t->self);
	snprintf(f.u.hello.cluster, sizeof(f.u.hello.cluster), "%s", t->cluster);
	snprintf(f.u.hello.algorithm, sizeof(f.u.hello.algorithm), "%s", t->algorithm);
	link_write_frame(link, &f);
}

void
peer_link_close(struct peer_link *link, bool send_bye, enum frame_bye_reason reason, const char *text)
{
	struct peer *p = link->peer;
	bool was_active, was_dialing, can_write;

	if (link->state == LINK_DEAD || link->state == LINK_DRAINING)
		return;
	was_active = p != NULL && p->active == link;
	was_dialing = p != NULL && p->dialing == link;
	if (was_active)
		p->active = NULL;
	if (was_dialing)
		p->dialing = NULL;
	link->peer = NULL;
	can_write = link->state == LINK_HELLO || link->state == LINK_ACTIVE;
	if (send_bye && can_write) {
		struct frame f = { .type = FRAME_BYE, .u.bye.reason = reason };
		size_t i;
		for (i = 0; text != NULL && text[i] != '\0' && i < FRAME_BYE_TEXT_MAX; i++)
			f.u.bye.text[i] = text[i] >= 0x20 && text[i] <= 0x7e ? text[i] : '?';
		link_write_frame(link, &f);
		bufferevent_disable(link->bev, EV_READ);
		bufferevent_setwatermark(link->bev, EV_WRITE, 0, 0);
		link->state = LINK_DRAINING;	/* link_write_cb finishes it */
	} else {
		bufferevent_disable(link->bev, EV_READ | EV_WRITE);
		link->state = LINK_DEAD;
		peer_transport_reap_later(link->t);
	}
	if (was_active || was_dialing)
		peer_link_detached(p, was_active);
}

void
peer_link_flush(struct peer_link *link)
{
	struct peer *p = link->peer;
	const struct peer_msg *m;
	uint8_t prefix[FRAME_DATA_PREFIX_LEN];

	if (link->state != LINK_ACTIVE || p == NULL)
		return;
	if (peer_session_peek_unsent(&p->session) != NULL)
		peer_link_send_ack(link);	/* rides in the same TLS record */
	while (peer_link_output_length(link) < FLUSH_HIGH &&
	    (m = peer_session_peek_unsent(&p->session)) != NULL) {
		if (frame_encode_data_prefix(prefix, m->seq, m->len) < 0)
			break;	/* cannot happen: lengths are checked at send */
		bufferevent_write(link->bev, prefix, sizeof(prefix));
		bufferevent_write(link->bev, m->data, m->len);
		peer_session_mark_sent(&p->session);
		p->data_frames_sent++;
		if (m->seq <= p->highest_written) {
			p->data_frames_resent++;
			if (m->seq == p->rtt_probe_seq)
				p->rtt_probe_seq = 0;	/* a resend: no clean sample */
		} else {
			p->highest_written = m->seq;
			if (p->rtt_probe_seq == 0) {
				p->rtt_probe_seq = m->seq;
				p->rtt_probe_sent_us = peer_now_us();
			}
		}
		link->last_tx_ms = peer_now_ms();
	}
}

static void
link_protocol_error(struct peer_link *link, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
link_protocol_error(struct peer_link *link, const char *fmt, ...)
{
	char text[FRAME_BYE_TEXT_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_full(LOG_LEVEL_WARNING, &(struct log_fields){ .peer = link_peer_name(link) },
	    "protocol error on link with %s (%s): %s; closing it",
	    link_peer_name(link) != NULL ? link_peer_name(link) : "?", link->remote, text);
	peer_link_close(link, true, FRAME_BYE_PROTOCOL, text);
}

/* Refuse a HELLO: log, tell the daemon, BYE with the reason, close. */
static void
link_refuse(struct peer_link *link, const char *claimed, enum frame_bye_reason reason,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
link_refuse(struct peer_link *link, const char *claimed, enum frame_bye_reason reason,
    const char *fmt, ...)
{
	char text[FRAME_BYE_TEXT_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	peer_link_close(link, true, reason, text);
	peer_refused(link->t, claimed, "refused %s (%s): %s", claimed, link->remote, text);
}

static bool
new_link_wins(const struct peer_transport *t, const struct peer *p, const struct peer_link *old,
    const struct peer_link *new)
{
	bool self_is_lower = strcmp(t->self, p->name) < 0;

	if (old->outbound == new->outbound)
		return true;		/* the same side dialed again: the old one is stale */
	/* Both directions: keep the connection dialed by the lower name. */
	return new->outbound == self_is_lower;
}

static void
link_handle_hello(struct peer_link *link, const struct frame_hello *h)
{
	struct peer_transport *t = link->t;
	struct peer *p;
	bool restarted = false, was_up;
	uint64_t their_last;

	if (h->version != FRAME_PROTOCOL_VERSION)
		return link_refuse(link, h->name, FRAME_BYE_VERSION,
		    "protocol version mismatch: this node speaks %d, %s speaks %u",
		    FRAME_PROTOCOL_VERSION, h->name, h->version);
	if (strcmp(h->cluster, t->cluster) != 0)
		return link_refuse(link, h->name, FRAME_BYE_CLUSTER,
		    "cluster name mismatch: this node (%s) is in cluster '%s', %s is in cluster '%s'",
		    t->self, t->cluster, h->name, h->cluster);
	if (strcmp(h->algorithm, t->algorithm) != 0)
		return link_refuse(link, h->name, FRAME_BYE_ALGORITHM,
		    "algorithm mismatch: this node (%s) runs '%s', %s runs '%s'",
		    t->self, t->algorithm, h->name, h->algorithm);
	if (strcmp(h->name, t->self) == 0)
		return link_refuse(link, h->name, FRAME_BYE_NAME,
		    "the peer claims this node's own name '%s'", h->name);
	if (!tls_peer_has_name(link->ssl, h->name))
		return link_refuse(link, h->name, FRAME_BYE_NAME,
		    "name mismatch: the certificate presented is not for '%s'", h->name);
	if (link->outbound && strcmp(h->name, link->peer->name) != 0)
		return link_refuse(link, h->name, FRAME_BYE_NAME,
		    "name mismatch: dialed %s but the peer says it is '%s'", link->peer->name, h->name);

	p = link->outbound ? link->peer : peer_find(t, h->name);
	if (p == NULL) {
		if (t->refuse_unknown_peers)
			return link_refuse(link, h->name, FRAME_BYE_NAME,
			    "'%s' is not a known peer of %s", h->name, t->self);
		if (t->n_peers >= DM_NODES_MAX)
			return link_refuse(link, h->name, FRAME_BYE_OVERLOAD,
			    "too many peers (%d)", DM_NODES_MAX);
		p = peer_create(t, h->name, NULL);
		if (p == NULL)
			return link_refuse(link, h->name, FRAME_BYE_OVERLOAD, "out of memory");
	}

	struct peer_hello_view view = {
		.incarnation = h->incarnation, .epoch = h->epoch,
		.your_incarnation = h->your_incarnation, .your_epoch = h->your_epoch,
		.last_received = h->last_received,
	};
	uint64_t old_incarnation = p->session.peer_incarnation;
	size_t old_queued = p->session.count;
	bool had_active = p->active != NULL && p->active != link;
	enum peer_hello_verdict verdict = peer_session_hello_in(&p->session, t->incarnation, &view,
	    &their_last);

	switch (verdict) {
	case PEER_HELLO_STALE:
		/* Sent by a record of us the peer has replaced since: the link
		 * belongs to a session that is over. */
		log_full(LOG_LEVEL_INFO, &(struct log_fields){ .peer = p->name },
		    "stale link with %s (%s, incarnation %" PRIu64 " epoch %" PRIu64 ") closed", p->name,
		    link->remote, h->incarnation, h->epoch);
		if (p->dialing == link)
			p->dialing = NULL;
		link->peer = NULL;
		peer_link_close(link, true, FRAME_BYE_NORMAL, "stale session");
		if (p->active == NULL && p->dialing == NULL)
			peer_schedule_dial(p);
		return;
	case PEER_HELLO_BAD_RESUME: {
		char why[160];
		snprintf(why, sizeof(why), "it claims to have received message %" PRIu64 " but only %"
		    PRIu64 " were sent", h->last_received, p->session.last_queued);
		if (p->dialing == link)
			p->dialing = NULL;
		link->peer = NULL;
		peer_link_close(link, true, FRAME_BYE_PROTOCOL, why);
		peer_resync(p, why);
		return;
	}
	case PEER_HELLO_RESTARTED:
		/* The old process is gone: its links and both directions of the
		 * session with it are stale. */
		restarted = true;
		log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .peer = p->name },
		    "peer %s restarted (incarnation %" PRIu64 " -> %" PRIu64 "): dropping %zu queued messages",
		    p->name, old_incarnation, h->incarnation, old_queued);
		break;
	case PEER_HELLO_NEW_EPOCH:
		/* The same process made a new record of this node (it removed
		 * us and added us again): what either side queued or received
		 * for the old one is stale; both now number from 1. */
		log_full(LOG_LEVEL_NOTICE, &(struct log_fields){ .peer = p->name },
		    "peer %s started a new session with this node (it removed and re-added us): "
		    "dropping %zu queued messages", p->name, old_queued);
		break;
	case PEER_HELLO_RESUME:
		break;
	}
	if (verdict == PEER_HELLO_RESTARTED || verdict == PEER_HELLO_NEW_EPOCH) {
		/* Every other link carries the old session. */
		peer_drop_links_except(p, link);
		p->highest_written = 0;
		p->rtt_probe_seq = 0;
		if (verdict == PEER_HELLO_RESTARTED)
			p->down_deferred = false;
		else if (had_active)
			p->down_deferred = true;	/* still up for the engine: no second link-up */
	}

	if (p->active != NULL && p->active != link) {
		struct peer_link *old = p->active;
		if (!new_link_wins(t, p, old, link)) {
			log_full(LOG_LEVEL_DEBUG, &(struct log_fields){ .peer = p->name },
			    "duplicate link with %s (%s) closed; keeping %s", p->name, link->remote, old->remote);
			if (p->dialing == link)
				p->dialing = NULL;
			link->peer = NULL;
			peer_link_close(link, true, FRAME_BYE_DUPLICATE, "duplicate link");
			return;
		}
		p->active = NULL;
		old->peer = NULL;
		peer_link_close(old, true, FRAME_BYE_DUPLICATE, "duplicate link");
		was_up = true;
	} else {
		was_up = p->down_deferred;
	}
	p->down_deferred = false;
	if (p->dialing == link)
		p->dialing = NULL;
	link->peer = p;
	p->active = link;
	link->state = LINK_ACTIVE;
	p->links_established++;
	if (!link->outbound)
		link_send_hello(link, p);
	peer_session_rewind(&p->session, their_last);
	peer_link_flush(link);
	peer_link_became_active(link, restarted, was_up && !restarted);
}

static void
link_handle_bye(struct peer_link *link, const struct frame *f)
{
	char name[DM_NODE_NAME_MAX + 1] = "?";

	if (link->peer != NULL)
		snprintf(name, sizeof(name), "%s", link->peer->name);
	if (f->u.bye.reason == FRAME_BYE_NORMAL || f->u.bye.reason == FRAME_BYE_DUPLICATE) {
		log_full(LOG_LEVEL_INFO, &(struct log_fields){ .peer = link_peer_name(link) },
		    "peer %s (%s) closed the link: %s%s%s", name, link->remote,
		    frame_bye_reason_name(f->u.bye.reason), f->u.bye.text[0] != '\0' ? ": " : "",
		    f->u.bye.text);
		peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
		return;
	}
	peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
	peer_refused(link->t, name[0] != '?' ? name : NULL, "refused by %s (%s): %s: %s", name,
	    link->remote, frame_bye_reason_name(f->u.bye.reason), f->u.bye.text);
}

static void
link_handle_frame(struct peer_link *link, const struct frame *f)
{
	struct peer *p;
	char name[DM_NODE_NAME_MAX + 1];
	int r;

	if (f->type == FRAME_BYE)
		return link_handle_bye(link, f);
	if (f->type == FRAME_HELLO) {
		if (link->state != LINK_HELLO)
			return link_protocol_error(link, "second HELLO");
		return link_handle_hello(link, &f->u.hello);
	}
	if (link->state != LINK_ACTIVE)
		return link_protocol_error(link, "%s before HELLO", frame_type_name(f->type));
	p = link->peer;
	switch (f->type) {
	case FRAME_DATA:
		p->data_frames_received++;
		r = peer_session_accept(&p->session, f->u.data.seq);
		if (r < 0) {
			char why[80];
			snprintf(why, sizeof(why), "DATA %" PRIu64 " after %" PRIu64 " (gap)",
			    f->u.data.seq, p->session.last_received);
			link_protocol_error(link, "%s", why);
			return peer_resync(p, why);
		}
		if (r > 0 && link->t->cb.on_message != NULL) {
			snprintf(name, sizeof(name), "%s", p->name);
			link->t->cb.on_message(link->t->ctx, name, f->u.data.payload, f->u.data.len);
		}
		break;
	case FRAME_ACK:
		if (peer_session_ack(&p->session, f->u.ack.seq) < 0) {
			char why[80];
			snprintf(why, sizeof(why), "ACK %" PRIu64 " for a message never sent", f->u.ack.seq);
			link_protocol_error(link, "%s", why);
			return peer_resync(p, why);
		}
		if (p->rtt_probe_seq != 0 && f->u.ack.seq >= p->rtt_probe_seq) {
			p->rtt_us = (int64_t)(peer_now_us() - p->rtt_probe_sent_us);
			p->rtt_probe_seq = 0;
		}
		break;
	default:
		break;	/* KEEPALIVE: receiving it was the point */
	}
}

static void
link_read_cb(struct bufferevent *bev, void *arg)
{
	struct peer_link *link = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t max_body = link->t->limits.max_payload + 8;

	while (link->state == LINK_HELLO || link->state == LINK_ACTIVE) {
		uint8_t header[FRAME_HEADER_LEN];
		size_t total;
		struct frame f;
		ssize_t n;
		int r;

		if (evbuffer_copyout(in, header, sizeof(header)) < (ev_ssize_t)sizeof(header))
			break;
		r = frame_peek_length(header, max_body, &total);
		if (r < 0) {
			link_protocol_error(link, "%s frame header", r == -EMSGSIZE ? "oversized" : "malformed");
			break;
		}
		if (evbuffer_get_length(in) < total)
			break;
		n = frame_decode(evbuffer_pullup(in, (ev_ssize_t)total), total, max_body, &f);
		if (n <= 0) {
			link_protocol_error(link, "malformed %s frame", frame_type_name((enum frame_type)header[4]));
			break;
		}
		link->last_rx_ms = peer_now_ms();
		if (link->peer != NULL)
			link->peer->last_contact_ms = link->last_rx_ms;
		link_handle_frame(link, &f);
		evbuffer_drain(in, total);
	}
	if (link_acks_pending(link) >= ACK_BATCH ||
	    (link_acks_pending(link) > 0 && peer_now_ms() - link->last_ack_ms >= ACK_DELAY_MS))
		peer_link_send_ack(link);
	else if (link_acks_pending(link) > 0)
		peer_transport_ack_later(link->t);
}

static void
link_write_cb(struct bufferevent *bev, void *arg)
{
	struct peer_link *link = arg;

	if (link->state == LINK_DRAINING) {
		if (peer_link_output_length(link) == 0) {
			link->state = LINK_DEAD;
			peer_transport_reap_later(link->t);
		}
		return;
	}
	peer_link_flush(link);
}

static void
link_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct peer_link *link = arg;
	unsigned long e, first = 0;
	char why[300];
	const char *name = link_peer_name(link);
	char name_copy[DM_NODE_NAME_MAX + 1] = "";

	if (link->state == LINK_DEAD)
		return;		/* closed already; the reaper frees it */
	if (what & BEV_EVENT_CONNECTED) {
		if (link->state == LINK_TLS) {
			link->state = LINK_HELLO;
			link->last_rx_ms = peer_now_ms();
			if (link->outbound)
				link_send_hello(link, link->peer);
		}
		return;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
		return;
	/* libevent also reports plain socket errors (connection refused, reset)
	 * here, with no OpenSSL library code: those are not refusals. */
	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (first == 0 && ERR_GET_LIB(e) != 0 && ERR_GET_LIB(e) != ERR_LIB_SYS)
			first = e;
	if (name != NULL)
		snprintf(name_copy, sizeof(name_copy), "%s", name);
	if (link->state == LINK_DRAINING) {
		link->state = LINK_DEAD;
		peer_transport_reap_later(link->t);
		return;
	}
	if ((link->state == LINK_TLS || link->state == LINK_HELLO) &&
	    (first != 0 || SSL_get_verify_result(link->ssl) != X509_V_OK)) {
		tls_describe_failure(link->ssl, first, why, sizeof(why));
		peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
		peer_refused(link->t, name_copy[0] != '\0' ? name_copy : NULL,
		    "TLS handshake with %s%s%s failed: %s", name_copy, name_copy[0] != '\0' ? " at " : "",
		    link->remote, why);
		return;
	}
	if ((what & BEV_EVENT_ERROR) && EVUTIL_SOCKET_ERROR() != 0)
		snprintf(why, sizeof(why), "%s", evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	else if (what & BEV_EVENT_ERROR)
		snprintf(why, sizeof(why), "connection reset");
	else
		snprintf(why, sizeof(why), "connection closed");
	log_full(link->state == LINK_ACTIVE ? LOG_LEVEL_NOTICE : LOG_LEVEL_DEBUG,
	    &(struct log_fields){ .peer = name }, "link with %s (%s) lost: %s",
	    name != NULL ? name : "?", link->remote, why);
	peer_link_close(link, false, FRAME_BYE_NORMAL, NULL);
}
