/*
 * peer_session.h: the per-peer session state that survives reconnects:
 * numbering of outgoing DATA messages, the bounded queue of messages not
 * yet acknowledged (resent on a new link), and in-order, exactly-once
 * acceptance of incoming sequence numbers.  Pure: no sockets, no clocks.
 */
#ifndef DMD_PEER_SESSION_H
#define DMD_PEER_SESSION_H

#include <stddef.h>
#include <stdint.h>

struct peer_msg {
	uint64_t	seq;
	size_t		len;
	uint8_t		data[];
};

struct peer_session {
	uint64_t	  peer_incarnation;	/* 0: never talked to it */
	uint64_t	  last_queued;		/* seq of the newest queued message */
	uint64_t	  last_acked;		/* everything <= this is trimmed */
	uint64_t	  last_received;	/* last in-order DATA seq accepted */
	uint64_t	  last_ack_sent;	/* last_received we have acknowledged */
	struct peer_msg	**ring;			/* unacknowledged messages, oldest first */
	size_t		  cap, head, count;
	size_t		  unsent;		/* index (from head) of the first message not written on this link */
	size_t		  limit;		/* most messages queued */
	size_t		  bytes;		/* payload bytes queued */
};

void peer_session_init(struct peer_session *s, size_t limit);
/* Drop all state: the peer restarted (or was removed). */
void peer_session_reset(struct peer_session *s);

/* Queue a copy of payload with the next sequence number.  0, -ENOBUFS when
 * limit messages are queued, -ENOMEM. */
int peer_session_queue(struct peer_session *s, const uint8_t *payload, size_t len);

/* The peer acknowledged everything <= seq.  0, or -EPROTO if seq names a
 * message never sent. */
int peer_session_ack(struct peer_session *s, uint64_t seq);

/* A new link: the peer last received seq (0: nothing).  Trims like an ACK
 * and makes every remaining message unsent again.  0 or -EPROTO. */
int peer_session_rewind(struct peer_session *s, uint64_t seq);

/* The next message to write on the current link, or NULL. */
const struct peer_msg *peer_session_peek_unsent(const struct peer_session *s);
void peer_session_mark_sent(struct peer_session *s);

/* An incoming DATA seq: 1 deliver it, 0 a duplicate (drop), -EPROTO a gap. */
int peer_session_accept(struct peer_session *s, uint64_t seq);

#endif /* DMD_PEER_SESSION_H */
