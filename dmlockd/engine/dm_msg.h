/*
 * dm_msg.h: the typed in-memory form of a peer message (struct dm_msg).
 *
 * A value type: fixed-size arrays, no pointers, every length bounded, so a
 * message can be copied with memcpy (the simulator queues copies) and the
 * codec (dm_wire.c) can check every field.  One struct serves all kinds;
 * unused fields are zero.  Kinds below DM_MSG_ALGO_BASE belong to the
 * engine (roster, liveness, lease); kinds from DM_MSG_ALGO_BASE on are
 * defined by the selected algorithm (see algo_*.c).
 */
#ifndef DM_MSG_H
#define DM_MSG_H

#include "dm_types.h"

/* Algorithm-defined opaque payload (e.g. a token's queue for Suzuki-Kasami). */
#define DM_MSG_PAYLOAD_MAX	2304

enum dm_msg_kind {
	/* Roster (RA §7.2-7.4) and leases: owned by the engine. */
	DM_MSG_JOIN = 1,	/* new node -> sponsor: node, address, incarnation */
	DM_MSG_ROSTER_ENTRY,	/* sponsor -> new node: one member (node, address, incarnation) */
	DM_MSG_ROSTER_END,	/* sponsor -> new node: arg = member count; join accepted */
	DM_MSG_NODE_ADD,	/* sponsor -> members: add node (serial = sponsor's join id) */
	DM_MSG_NODE_ADD_ACK,	/* member -> sponsor: serial echoed */
	DM_MSG_SEQ_QUERY,	/* new node -> members: your Highest_Sequence_Number? (§7.2.3 method 1) */
	DM_MSG_SEQ_ANSWER,	/* member -> new node: seq = its highest sequence number */
	DM_MSG_LEAVE,		/* leaving node -> members (§7.3) */
	DM_MSG_LEAVE_ACK,	/* member -> leaving node */
	DM_MSG_SUSPECT,		/* prober -> members: vote to remove node (majority policy) */
	DM_MSG_SUSPECT_VOTE,	/* member -> prober: arg 1 = agree, 0 = refuse; serial echoed */
	DM_MSG_NODE_FAILED,	/* announce removal of node (§7.4); epoch = new roster epoch */
	DM_MSG_REJOIN,		/* "you are not a member: restart and rejoin through a sponsor" */
	DM_MSG_HEARTBEAT,	/* holder -> members: lease renewal, serial; arg: the
				 * holder's roster digest (dm_lease.c) */
	DM_MSG_HEARTBEAT_ACK,	/* member -> holder: serial echoed; arg DM_HEARTBEAT_REFUSED:
				 * no ack, the member holds the holder condemned;
				 * else payload: the names (u8 len, bytes) of the
				 * member's pending removals (dm_lease.c) */
	DM_MSG_JOIN_REFUSED,	/* sponsor -> new node: arg = positive errno */
	DM_MSG_SUSPECT_ABORT,	/* prober -> members: vote serial withdrawn (suspect alive) */
	DM_MSG_ENGINE_MAX_,

	/* Kinds from here to 255 are the algorithm's. */
	DM_MSG_ALGO_BASE = 64,
};

/* Ricart-Agrawala's kinds (algo_ricart.c), listed here for traces and for
 * the simulator's message counting.  Other algorithms reuse the range. */
enum dm_ra_kind {
	DM_RA_REQUEST = DM_MSG_ALGO_BASE,	/* REQUEST(seq, node), mode, flags TRY */
	DM_RA_REPLY,				/* REPLY: seq echoes the request's */
	DM_RA_BUSY,				/* try-once refused: seq echoed */
	DM_RA_ARE_YOU_THERE,			/* probe carrying the prober's request */
	DM_RA_YES_I_AM_HERE,			/* "alive, deferring you": seq echoed */
	DM_RA_KIND_MAX_,
};

/* Lamport's kinds (algo_lamport.c) and Maekawa's (algo_maekawa.c): a range
 * of their own, 0x90-0xaf, so traces name them. */
enum dm_lamport_kind {
	DM_LP_REQUEST = 0x90,	/* REQUEST(ts): seq = timestamp, serial = lease round, flags TRY */
	DM_LP_REPLY,		/* REPLY: seq echoes; arg = my ts if earlier (0 = null), serial = lease ack */
	DM_LP_RELEASE,		/* RELEASE: seq = the released request's timestamp */
	DM_LP_BUSY,		/* try-once refused: seq echoed */
	DM_LP_ARE_YOU_THERE,	/* probe: seq = prober's request */
	DM_LP_YES_I_AM_HERE,	/* probe answer: seq echoed */
};
enum dm_maekawa_kind {
	DM_MK_REQUEST = 0xa0,	/* REQUEST(seq): arg = request set view, flags TRY */
	DM_MK_LOCKED,		/* vote granted: seq echoes the request */
	DM_MK_FAILED,		/* a preceding request holds or waits for the vote */
	DM_MK_INQUIRE,		/* arbiter wants its vote back: seq = locking request */
	DM_MK_RELINQUISH,	/* vote given back: seq = the request */
	DM_MK_RELEASE,		/* leave CS / withdraw: seq = the request */
	DM_MK_BUSY,		/* try-once refused */
	DM_MK_STALE,		/* request made under another view: re-check and re-issue */
	DM_MK_ARE_YOU_THERE,	/* probe */
	DM_MK_YES_I_AM_HERE,	/* probe answer */
};

/* flags */
#define DM_MSG_F_TRY	0x01u	/* a try-once request: answer "busy" instead of deferring */
#define DM_MSG_F_MEMBER	0x02u	/* JOIN_REFUSED, REJOIN: the sender is an active member */
#define DM_MSG_F_STATIC	0x04u	/* any message: the sender started from the static roster
				 * and has not joined through a sponsor since */
#define DM_MSG_F_ALL	0x07u

/* HEARTBEAT_ACK arg: the member refuses to acknowledge (it agreed to
 * remove the sender). */
#define DM_HEARTBEAT_REFUSED	1u

struct dm_msg {
	uint8_t		kind;		/* enum dm_msg_kind or an algorithm kind */
	uint8_t		mode;		/* enum dm_mode */
	uint8_t		flags;		/* DM_MSG_F_* */
	uint8_t		lock_len;	/* 0: the message names no lock */
	uint8_t		node_len;	/* 0: no subject node */
	uint8_t		address_len;
	uint16_t	payload_len;
	uint64_t	seq;		/* sequence number / Lamport clock of the request */
	uint64_t	token;		/* highest fencing token the sender has seen */
	uint64_t	epoch;		/* sender's roster epoch */
	uint64_t	roster_epoch;	/* sender's roster label (dm_engine_private.h) */
	uint64_t	incarnation;	/* sender's incarnation (or the subject node's) */
	uint64_t	serial;		/* correlates acks, votes, heartbeats */
	uint64_t	arg;		/* kind-specific */
	char		lock[DM_LOCK_NAME_MAX + 1];	/* NUL-terminated for convenience */
	char		node[DM_NODE_NAME_MAX + 1];	/* subject node of roster messages */
	char		address[DM_ADDRESS_MAX + 1];
	uint8_t		payload[DM_MSG_PAYLOAD_MAX];
};

/* Human-readable kind name for traces ("REQUEST", "NODE_ADD", ...).  Algorithm
 * kinds are named by the registered algorithms; unknown kinds give "?". */
const char *dm_msg_kind_name(uint8_t kind);

#endif /* DM_MSG_H */
