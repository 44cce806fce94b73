/*
 * peer_internal.h: structures shared by the peer transport's files
 * (peer_transport.c: peers, listeners, dialing, timers; peer_link.c: one
 * connection's handshake and frames).  Not for use outside peer_*.c.
 */
#ifndef DMD_PEER_INTERNAL_H
#define DMD_PEER_INTERNAL_H

#include <sys/queue.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "dmlockd/frame.h"
#include "dmlockd/peer_session.h"
#include "dmlockd/peer_transport.h"

enum link_state {
	LINK_TLS,		/* TCP connect and TLS handshake */
	LINK_HELLO,		/* TLS up, HELLO exchange */
	LINK_ACTIVE,		/* carrying DATA for its peer */
	LINK_DRAINING,		/* BYE queued; freed when written (or on timeout) */
	LINK_DEAD,		/* waiting for the reaper */
};

struct peer;

struct peer_link {
	struct peer_transport	*t;
	struct peer		*peer;		/* outbound: from the start; inbound: after HELLO */
	struct bufferevent	*bev;
	SSL			*ssl;		/* owned by bev */
	enum link_state		 state;
	bool			 outbound;
	char			 remote[DM_ADDRESS_MAX + 1];
	dm_msec_t		 started_ms, last_rx_ms, last_tx_ms;
	dm_msec_t		 last_ack_ms;	/* when an ACK was last written */
	TAILQ_ENTRY(peer_link)	 entry;
};

struct peer {
	struct peer_transport	*t;
	char			 name[DM_NODE_NAME_MAX + 1];
	char			*address;	/* NULL: accept only */
	struct peer_session	 session;
	struct peer_link	*active;	/* the working link, or NULL */
	struct peer_link	*dialing;	/* our outbound attempt, or NULL */
	struct event		*dial_timer;
	uint32_t		 dial_failures;
	bool			 down_deferred;	/* active link lost while our dial was in HELLO */
	bool			 flush_held;	/* sent while held: flush at the release */
	uint64_t		 links_established;
	uint64_t		 data_frames_sent;
	uint64_t		 data_frames_resent;
	uint64_t		 data_frames_received;	/* including duplicates dropped */
	uint64_t		 highest_written;	/* newest seq ever written (resend stats) */
	/* Round trip: one DATA frame at a time is timed to its ACK. */
	uint64_t		 rtt_probe_seq;		/* 0: none in flight */
	uint64_t		 rtt_probe_sent_us;
	int64_t			 rtt_us;		/* last sample, -1: none yet */
	dm_msec_t		 last_contact_ms;	/* peer_now_ms() of its last frame, 0: never */
	TAILQ_ENTRY(peer)	 entry;
};

struct peer_listener {
	struct evconnlistener	*lev;
	struct accept_guard	*guard;		/* pauses accepts when out of fds */
	struct peer_transport	*t;
};

struct peer_transport {
	struct event_base	*base;
	char			 self[DM_NODE_NAME_MAX + 1];
	char			 cluster[FRAME_CLUSTER_NAME_MAX + 1];
	char			 algorithm[DM_ALGORITHM_NAME_MAX + 1];
	uint64_t		 incarnation;
	uint64_t		 last_epoch;	/* of the newest peer record (peer_session.h) */
	SSL_CTX			*tls;
	bool			 refuse_unknown_peers;
	struct peer_transport_limits limits;
	struct peer_transport_callbacks cb;
	void			*ctx;
	uint64_t		 rng;
	struct peer_listener	 listeners[16];
	size_t			 n_listeners;
	TAILQ_HEAD(, peer)	 peers;
	size_t			 n_peers;
	TAILQ_HEAD(, peer_link)	 links;
	struct event		*tick;
	struct event		*reaper;
	struct event		*ack_timer;	/* writes ACKs not carried by DATA yet */
	bool			 freeing;
	unsigned		 held;		/* peer_transport_hold() depth */
};

/* peer_transport.c */
dm_msec_t peer_now_ms(void);
uint64_t peer_now_us(void);	/* the same clock in microseconds */
struct peer *peer_find(const struct peer_transport *t, const char *name);
struct peer *peer_create(struct peer_transport *t, const char *name, const char *address);
void peer_schedule_dial(struct peer *p);
void peer_link_became_active(struct peer_link *link, bool restarted, bool was_up);
/* link stopped being p's active link (was_active) or dial attempt. */
void peer_link_detached(struct peer *p, bool was_active);
/* The two ends of p's session disagree: start a new record epoch, drop
 * the session and every link (logged with why). */
void peer_resync(struct peer *p, const char *why);
/* Close p's links other than keep, without callbacks. */
void peer_drop_links_except(struct peer *p, struct peer_link *keep);
int peer_resolve_address(const char *address, bool passive, struct sockaddr_storage *ss, int *len);
void peer_refused(struct peer_transport *t, const char *peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void peer_transport_reap_later(struct peer_transport *t);

/* peer_link.c */
struct peer_link *peer_link_new_inbound(struct peer_transport *t, evutil_socket_t fd,
    const struct sockaddr *sa, int salen);
struct peer_link *peer_link_new_outbound(struct peer_transport *t, struct peer *p);
/* Close: send_bye queues a BYE (reason, text) and drains; else at once. */
void peer_link_close(struct peer_link *link, bool send_bye, enum frame_bye_reason reason,
    const char *text);
void peer_link_free(struct peer_link *link);
void peer_link_flush(struct peer_link *link);
void peer_link_send_keepalive(struct peer_link *link);
/* Write the ACK for what the peer sent, if not written yet. */
void peer_link_send_ack(struct peer_link *link);
/* How long an ACK may wait for DATA to ride with on a busy link. */
#define ACK_DELAY_MS 5
/* Arm the ACK timer (peer_transport.c). */
void peer_transport_ack_later(struct peer_transport *t);
size_t peer_link_output_length(const struct peer_link *link);

/* Disable Nagle on a peer socket (peer_transport.c). */
void peer_socket_set_nodelay(evutil_socket_t fd);

#endif /* DMD_PEER_INTERNAL_H */
