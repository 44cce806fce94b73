/*
 * frame.h: the peer transport's framing layer.  A pure codec: turns frames
 * into bytes and bytes into frames, strictly and bounds-checked.  It knows
 * nothing about sockets, TLS or sessions (see peer_link.c for those).
 *
 * Wire format (all integers big-endian), see TRANSPORT-NOTES.md:
 *   header  u32 body_len | u8 type | u8 flags (0) | u16 reserved (0)
 *   HELLO   "DMLK" | u16 version | u16 reserved (0) | u64 incarnation |
 *           u64 your_incarnation | u64 last_received |
 *           u8 len + node name | u8 len + cluster name | u8 len + algorithm |
 *           (version >= 2 only) u64 epoch (>= 1) | u64 your_epoch
 *   DATA    u64 seq (>= 1) | payload (1..FRAME_PAYLOAD_MAX bytes)
 *   ACK     u64 seq
 *   KEEPALIVE (empty body)
 *   BYE     u8 reason | u8 len + text (printable ASCII)
 */
#ifndef DMD_FRAME_H
#define DMD_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dm_types.h"
#include "dm_wire.h"

/* Version 2 added the record epochs to HELLO (sessions that survive a peer
 * being removed and added again).  Version 1 HELLOs still decode (epochs 0)
 * so that a link can refuse them with a clear message.  Version 3 (same
 * HELLO) is a change of meaning in the engine's messages: a HEARTBEAT_ACK
 * may refuse (DM_HEARTBEAT_REFUSED), and a version-2 node would count the
 * refusal as an acknowledgement of its lease.  Version 4 (same HELLO):
 * every engine message carries the sender's roster label (dm_wire.c,
 * DM_WIRE_VERSION 2), by which members refuse the leases of stale
 * rosters; a version-3 node could neither decode nor honour it.  Version 5
 * (same HELLO, same engine encoding): a HEARTBEAT_ACK names in its payload
 * the removals its sender stands by, and a lease round counts no ack of a
 * node so named (dm_lease.c, "pending removals"), only acks at the holder's
 * own roster label count, and a HEARTBEAT carries its sender's roster
 * digest ("stale ackers"); a version-4 node would do none of it.  Version 6
 * (same HELLO): engine messages may carry DM_MSG_F_STATIC (the sender
 * started from the static roster), which a version-5 node refuses to
 * decode, and a member answers REJOIN to such a sender when it lists
 * another incarnation under its name.  Version 7 (same HELLO, same
 * encoding): a HEARTBEAT_ACK echoes in seq the incarnation of the
 * HEARTBEAT it answers, and a Maekawa voter restarted from the static
 * roster gives no vote until every member has so answered its hello
 * (dm_static_hello.c); with a version-6 member it would wait for ever.
 * Version 8 (same HELLO, same encoding): a NODE_FAILED that announces a
 * removal carries in its payload the digest of the announcer's roster
 * after it, and a member takes the removal's roster label only over the
 * same names (dm_membership_failure.c); a version-7 announcer sends none,
 * and a version-8 member would stay unsettled after every removal it
 * announced until a heartbeat's digest levelled it.  Version 9 (same HELLO,
 * same encoding): the token algorithms' waiters send PROBE (kind 99) and
 * the lock's user answers PROBE_ANSWER (100) (dm_token.c), kinds a
 * version-8 node takes for a protocol error. */
#define FRAME_PROTOCOL_VERSION	9
#define FRAME_HEADER_LEN	8
#define FRAME_DATA_PREFIX_LEN	(FRAME_HEADER_LEN + 8)	/* header + seq */
#define FRAME_PAYLOAD_MAX	DM_WIRE_MSG_MAX
#define FRAME_BODY_MAX		(FRAME_PAYLOAD_MAX + 8)
#define FRAME_MAX		(FRAME_HEADER_LEN + FRAME_BODY_MAX)
#define FRAME_CLUSTER_NAME_MAX	63
#define FRAME_BYE_TEXT_MAX	200

enum frame_type {
	FRAME_HELLO = 1,
	FRAME_DATA = 2,
	FRAME_ACK = 3,
	FRAME_KEEPALIVE = 4,
	FRAME_BYE = 5,
};

/* Why a link is closed, carried in BYE. */
enum frame_bye_reason {
	FRAME_BYE_NORMAL = 0,		/* orderly close (shutdown, peer removed) */
	FRAME_BYE_VERSION = 1,		/* protocol version not supported */
	FRAME_BYE_CLUSTER = 2,		/* cluster name mismatch */
	FRAME_BYE_ALGORITHM = 3,	/* algorithm mismatch */
	FRAME_BYE_NAME = 4,		/* claimed name not in certificate / not expected */
	FRAME_BYE_PROTOCOL = 5,		/* malformed or unexpected frame */
	FRAME_BYE_DUPLICATE = 6,	/* another connection to the same peer wins */
	FRAME_BYE_OVERLOAD = 7,		/* limits exceeded (queue, buffers, handshakes) */
	FRAME_BYE_REASON_MAX = FRAME_BYE_OVERLOAD,
};

struct frame_hello {
	uint16_t	version;
	uint64_t	incarnation;		/* the sender's */
	uint64_t	your_incarnation;	/* the receiver's, as the sender knows it; 0 = none */
	uint64_t	last_received;		/* last DATA seq the sender got in that session */
	uint64_t	epoch;			/* the sender's record of the receiver (v2; v1: 0) */
	uint64_t	your_epoch;		/* the receiver's record of the sender, as known; 0 = none */
	char		name[DM_NODE_NAME_MAX + 1];
	char		cluster[FRAME_CLUSTER_NAME_MAX + 1];
	char		algorithm[DM_ALGORITHM_NAME_MAX + 1];
};

struct frame {
	enum frame_type type;
	union {
		struct frame_hello hello;
		struct {
			uint64_t	 seq;
			const uint8_t	*payload;	/* borrowed from the decoded buffer */
			size_t		 len;
		} data;
		struct {
			uint64_t	 seq;
		} ack;
		struct {
			enum frame_bye_reason reason;
			char		 text[FRAME_BYE_TEXT_MAX + 1];
		} bye;
	} u;
};

/*
 * Look at the first FRAME_HEADER_LEN bytes of a frame.  Returns 0 and the
 * whole frame's length (header + body) in *ret_total, -EPROTO for an unknown
 * type or nonzero flags/reserved bits, -EMSGSIZE for a body longer than
 * max_body (which is clamped to FRAME_BODY_MAX).
 */
int frame_peek_length(const uint8_t *header, size_t max_body, size_t *ret_total);

/*
 * Decode the first frame in buf[0..len).  Returns the number of bytes it
 * occupies (> 0) and fills *ret, 0 if buf holds only part of a frame, or
 * -EPROTO / -EMSGSIZE for malformed input.  DATA payload points into buf.
 */
ssize_t frame_decode(const uint8_t *buf, size_t len, size_t max_body, struct frame *ret);

/*
 * Encode f into buf[0..cap).  Returns 0 and the length in *ret_len,
 * -ENOBUFS if it does not fit, -EINVAL for a frame that frame_decode would
 * refuse (bad name, empty payload, ...).
 */
int frame_encode(const struct frame *f, uint8_t *buf, size_t cap, size_t *ret_len);

/* The first FRAME_DATA_PREFIX_LEN bytes of a DATA frame; the payload
 * follows.  Returns -EINVAL for seq 0 or a payload length out of range. */
int frame_encode_data_prefix(uint8_t *out, uint64_t seq, size_t payload_len);

const char *frame_type_name(enum frame_type type);
const char *frame_bye_reason_name(enum frame_bye_reason reason);

/* Cluster names: 1..63 bytes of [A-Za-z0-9._-]; algorithm names 1..31
 * bytes of [a-z0-9-]. */
int frame_cluster_name_valid(const char *s, size_t len);
int frame_algorithm_name_valid(const char *s, size_t len);

#endif /* DMD_FRAME_H */
