/*
 * peer_transport.h: links to the other dmlockd daemons of the cluster over
 * mutual TLS 1.3 (libevent bufferevent_openssl).  Carries opaque payloads
 * (encoded engine messages) between named peers, exactly once and in order
 * per peer while both processes live, whatever happens to the TCP
 * connections in between.  Makes no protocol decision: it reports links
 * going up and down, peers restarting and refusals; the engine decides.
 * Wire format, handshake and resend rules: TRANSPORT-NOTES.md.
 *
 * All functions must be called from the thread running the event_base.
 * Callbacks may call peer_transport_send(), _add_peer(), _remove_peer() and
 * _cut_link(), but never peer_transport_free().
 */
#ifndef DMD_PEER_TRANSPORT_H
#define DMD_PEER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "dm_types.h"

struct event_base;
struct peer_transport;

/* Every limit; 0 selects the default shown. */
struct peer_transport_limits {
	dm_msec_t	 keepalive_ms;		/* 1000: KEEPALIVE on a link idle this long */
	uint32_t	 keepalive_misses;	/* 5: cut a link silent this many periods */
	dm_msec_t	 reconnect_min_ms;	/* 100: first redial delay, doubling */
	dm_msec_t	 reconnect_max_ms;	/* 5000: largest redial delay */
	dm_msec_t	 handshake_timeout_ms;	/* 10000: TLS + HELLO must finish within */
	uint32_t	 max_handshakes;	/* 64: inbound connections in handshake */
	uint32_t	 send_queue_limit;	/* 65536: unacknowledged messages per peer */
	size_t		 write_buffer_limit;	/* 16 MiB: a link's output buffer */
	size_t		 max_payload;		/* FRAME_PAYLOAD_MAX (64 KiB) */
};

struct peer_transport_config {
	const char		*self;		/* this node's name (= its certificate's) */
	const char		*cluster;	/* must match the peers' */
	const char		*algorithm;	/* must match the peers' */
	uint64_t		 incarnation;	/* nonzero, different on every start */
	const char *const	*listen;	/* "host:port" / "[v6]:port"; port 0 = any */
	size_t			 n_listen;
	SSL_CTX			*tls;		/* tls_context_new(); the transport takes a reference */
	uint64_t		 seed;		/* backoff jitter; 0: from getrandom() */
	bool			 refuse_unknown_peers;	/* else HELLO from any certified name is accepted (joins) */
	struct peer_transport_limits limits;
};

/* Every callback may be NULL.  Strings and payloads are valid during the
 * call only. */
struct peer_transport_callbacks {
	/* One DATA payload from peer, in order, exactly once per session. */
	void (*on_message)(void *ctx, const char *peer, const uint8_t *payload, size_t len);
	/* The peer has a working link (first one after none). */
	void (*on_link_up)(void *ctx, const char *peer);
	/* The peer's last working link broke; queued messages wait for the next. */
	void (*on_link_down)(void *ctx, const char *peer);
	/* The peer came back with a new incarnation: the session was reset (its
	 * old process's messages and ours to it are dropped).  Called before the
	 * on_link_up of the new link. */
	void (*on_peer_restarted)(void *ctx, const char *peer, uint64_t incarnation);
	/* A connection was refused, by us or by the peer (peer NULL if unknown):
	 * TLS failure, cluster/algorithm/name mismatch, limits. */
	void (*on_refused)(void *ctx, const char *peer, const char *reason);
	/* peer_transport_send() refused a message to peer: unacked messages
	 * (send_queue_limit) wait for its acknowledgement.  Called on every
	 * refused message, after the link was cut and before the send returns
	 * -ENOBUFS.  The message is lost to this session, which will resume
	 * without it and without any sign of the gap: the caller's protocol
	 * can no longer rely on in-order, exactly-once delivery to that peer
	 * (dmlockd exits so that its successor is a new incarnation). */
	void (*on_send_overflow)(void *ctx, const char *peer, size_t unacked);
	/* The two ends of the session with peer disagreed (a gap, an ACK or a
	 * resume point beyond what was sent: peer_resync() in
	 * TRANSPORT-NOTES.md) and the session was started over: the dropped
	 * messages queued to peer are lost, and the peer drops what it queued
	 * to us when it sees the new session.  Called before on_link_down. */
	void (*on_session_lost)(void *ctx, const char *peer, size_t dropped, const char *why);
};

/*
 * Create a transport and start listening.  Sets SIGPIPE to SIG_IGN if it
 * is at its default (OpenSSL writes with write(2)).  Returns 0, -EINVAL (bad name,
 * address or limits), -EADDRINUSE or another -errno from bind, -ENOMEM.
 * *ret is untouched on failure.
 */
int peer_transport_new(struct event_base *base, const struct peer_transport_config *config,
    const struct peer_transport_callbacks *callbacks, void *ctx, struct peer_transport **ret);
/* Close every link (BYE to working ones, not flushed) and free.  libevent
 * may finish freeing a link's bufferevent from the loop: run
 * event_base_loop(base, EVLOOP_NONBLOCK) once before event_base_free(). */
struct peer_transport *peer_transport_free(struct peer_transport *t);

/*
 * Keep a link to name, dialing address ("host:port"; NULL: only accept its
 * connections).  Idempotent; a new address replaces the old one.  Returns
 * 0, -EINVAL (bad name or address, or self), -ENOSPC (DM_NODES_MAX peers).
 */
int peer_transport_add_peer(struct peer_transport *t, const char *name, const char *address);
/* Forget name: close its links and drop its session.  0 or -ENOENT.  No
 * on_link_down follows. */
int peer_transport_remove_peer(struct peer_transport *t, const char *name);

/*
 * Queue payload (1..max_payload bytes, copied) for name; it is written at
 * once if the link is up (and writes are not held), else when it comes up
 * (or at the release).  Returns 0, -ENOENT
 * (unknown peer), -EMSGSIZE, -ENOBUFS (send_queue_limit messages are
 * unacknowledged: the link is cut as too slow, the message is NOT queued,
 * and on_send_overflow was called), -ENOMEM.
 */
int peer_transport_send(struct peer_transport *t, const char *name, const uint8_t *payload,
    size_t len);

/* Hold the writes of peer_transport_send() (messages are queued, nothing
 * is written) until the matching release, which writes what was queued.
 * The daemon holds them while the engine steps: a step's effects that
 * must be on disk before its messages leave (the epoch floor, the
 * membership record) are then stored before any of them is written, even
 * where the effect comes after the message.  Nests.  Removing a peer
 * while held writes what was queued for it first. */
void peer_transport_hold(struct peer_transport *t);
void peer_transport_release(struct peer_transport *t);

/* Is a link still writing what was queued for it: one closing (BYE after
 * its last data) or an open one with output not written yet? */
bool peer_transport_writing(const struct peer_transport *t);

/* Use ctx (certificate/CA/CRL reload) and close every link, up or in its
 * handshake (BYE normal, "TLS configuration reloaded"): each was verified
 * against the old CA and CRL, so a peer revoked since would otherwise stay
 * connected.  Sessions survive as over any cut; both ends redial and
 * verify each other with the new context (a revoked peer is refused).
 * Returns the number of links closed.  The transport takes a reference. */
size_t peer_transport_set_tls(struct peer_transport *t, SSL_CTX *ctx);

/* Break name's working link abruptly (shutdown(2), no BYE), as a network
 * failure would; the session resumes on the next link.  0 or -ENOENT
 * (unknown peer or no link).  For tests and administrative resets. */
int peer_transport_cut_link(struct peer_transport *t, const char *name);

/* The bound address of listen socket i ("127.0.0.1:40123"): 0, -ENOENT. */
int peer_transport_listen_address(const struct peer_transport *t, size_t i, char *buf, size_t len);

struct peer_transport_peer_info {
	bool		 link_up;
	uint64_t	 incarnation;		/* the peer's, 0 if never seen */
	size_t		 queued;		/* messages not yet acknowledged */
	uint64_t	 last_sent_seq;		/* newest queued seq */
	uint64_t	 last_received_seq;
	uint64_t	 links_established;	/* HELLO exchanges completed */
	uint64_t	 data_frames_sent;	/* including resends */
	uint64_t	 data_frames_resent;
	uint64_t	 data_frames_received;	/* including duplicates dropped */
	int64_t		 last_contact_ms;	/* ms since its last frame arrived, -1: never */
	int64_t		 rtt_us;		/* last DATA -> ACK round trip, -1: none yet (on
						   a busy link an upper bound: ACKs wait up to 5 ms
						   for DATA to ride with) */
};
/* 0, -ENOENT. */
int peer_transport_peer_info(const struct peer_transport *t, const char *name,
    struct peer_transport_peer_info *ret);

#endif /* DMD_PEER_TRANSPORT_H */
