/*
 * peer_session.h: the per-peer session state that survives reconnects:
 * numbering of outgoing DATA messages, the bounded queue of messages not
 * yet acknowledged (resent on a new link), in-order, exactly-once
 * acceptance of incoming sequence numbers, and the HELLO rules that decide
 * whether a new link resumes the session or starts a new one.  Pure: no
 * sockets, no clocks.
 *
 * A session is named by four numbers: each side's incarnation (new on
 * every process start) and each side's record epoch (new every time the
 * transport creates its record of that peer, e.g. when the peer is removed
 * and added again).  Each side knows its own two numbers and learns the
 * other's from HELLOs.  Both only move forward, so a HELLO is never
 * misread, whatever the order in which crossing links deliver them: an
 * older epoch is stale and ignored; a newer epoch or another incarnation
 * means the peer's state for us is fresh, so ours is reset to match.
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
	uint64_t	  epoch;		/* this record's epoch (>= 1), fixed */
	uint64_t	  peer_incarnation;	/* 0: never talked to it */
	uint64_t	  peer_epoch;		/* the peer's record epoch for us, 0: unknown */
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

/* epoch: this record's epoch, >= 1, larger than any earlier record's for
 * the same peer in this process. */
void peer_session_init(struct peer_session *s, size_t limit, uint64_t epoch);
/* Drop all state except the limit and our epoch: queued messages, both
 * numberings, what we know of the peer. */
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

/* The session fields of a HELLO, as sent or received. */
struct peer_hello_view {
	uint64_t	incarnation;		/* the sender's */
	uint64_t	epoch;			/* the sender's record epoch */
	uint64_t	your_incarnation;	/* the receiver's, as the sender knows it; 0 none */
	uint64_t	your_epoch;		/* the receiver's record epoch, as known; 0 none */
	uint64_t	last_received;		/* in the session named by the four above */
};

/* The HELLO we send on a new link. */
void peer_session_hello_out(const struct peer_session *s, uint64_t self_incarnation,
    struct peer_hello_view *ret);

enum peer_hello_verdict {
	PEER_HELLO_RESUME,	/* same session (or first contact): rewind to *their_last */
	PEER_HELLO_RESTARTED,	/* new incarnation: session reset, then as RESUME */
	PEER_HELLO_NEW_EPOCH,	/* same process, new record of us: session reset, then as RESUME */
	PEER_HELLO_STALE,	/* from an older record of the peer than one seen: ignore it */
	PEER_HELLO_BAD_RESUME,	/* claims messages we never sent: protocol error */
};

/*
 * Apply a received HELLO.  On RESTARTED and NEW_EPOCH the session was reset
 * (every other link to the peer carries the old session and must be
 * closed); on RESUME, RESTARTED and NEW_EPOCH *their_last is what the peer
 * received of our current numbering (pass it to peer_session_rewind()
 * when the link becomes the active one).  STALE and BAD_RESUME change
 * nothing; after BAD_RESUME (the two ends are out of step, which the
 * rules above prevent unless a dead process's HELLO is read after its
 * successor's) call peer_session_new_epoch().
 */
enum peer_hello_verdict peer_session_hello_in(struct peer_session *s, uint64_t self_incarnation,
    const struct peer_hello_view *h, uint64_t *their_last);

/* Start over as a new record (epoch larger than every earlier one): the
 * peer resets its side when it sees it.  The way out of any disagreement
 * (a gap, a resume point or ACK beyond what we sent); loses what was
 * queued. */
void peer_session_new_epoch(struct peer_session *s, uint64_t epoch);
const char *peer_hello_verdict_name(enum peer_hello_verdict v);

#endif /* DMD_PEER_SESSION_H */
