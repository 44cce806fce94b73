/*
 * dm_wire.c: binary codec of struct dm_msg.  Owns the byte layout only;
 * knows nothing of the protocol's meaning.
 *
 * Layout (all integers big-endian):
 *   u8 version (DM_WIRE_VERSION) | u8 kind | u8 mode | u8 flags
 *   u64 seq | u64 token | u64 epoch | u64 incarnation | u64 serial | u64 arg
 *   u64 roster_epoch
 *   u8 lock_len  | lock bytes
 *   u8 node_len  | node bytes
 *   u8 addr_len  | address bytes
 *   u16 payload_len | payload bytes
 * The buffer must end exactly after the payload.  The decoder checks every
 * length against the remaining bytes and against the field's limit, and
 * validates names, so a decoded message is always well-formed.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "dm_msg.h"
#include "dm_wire.h"

#define WIRE_FIXED	(4 + 7 * 8)

struct wire_reader {
	const uint8_t	*p;
	size_t		 left;
};

static void
put_u64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static bool
kind_known(uint8_t kind)
{
	return (kind >= DM_MSG_JOIN && kind < DM_MSG_ENGINE_MAX_) || kind >= DM_MSG_ALGO_BASE;
}

static bool
address_valid(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* Encoded size of msg, or 0 if msg itself breaks a limit. */
static size_t
wire_size(const struct dm_msg *msg)
{
	if (msg->node_len > DM_NODE_NAME_MAX ||
	    msg->address_len > DM_ADDRESS_MAX || msg->payload_len > DM_MSG_PAYLOAD_MAX)
		return 0;
	return WIRE_FIXED + 1 + msg->lock_len + 1 + msg->node_len + 1 + msg->address_len +
	    2 + msg->payload_len;
}

int
dm_wire_encode(const struct dm_msg *msg, uint8_t *buf, size_t cap, size_t *ret_len)
{
	size_t need = wire_size(msg);
	uint8_t *p = buf;

	if (need == 0)
		return -EINVAL;
	if (need > cap)
		return -ENOBUFS;
	*p++ = DM_WIRE_VERSION;
	*p++ = msg->kind;
	*p++ = msg->mode;
	*p++ = msg->flags;
	const uint64_t ints[7] = { msg->seq, msg->token, msg->epoch, msg->incarnation,
	    msg->serial, msg->arg, msg->roster_epoch };
	for (size_t i = 0; i < 7; i++, p += 8)
		put_u64(p, ints[i]);
	*p++ = msg->lock_len;
	memcpy(p, msg->lock, msg->lock_len);
	p += msg->lock_len;
	*p++ = msg->node_len;
	memcpy(p, msg->node, msg->node_len);
	p += msg->node_len;
	*p++ = msg->address_len;
	memcpy(p, msg->address, msg->address_len);
	p += msg->address_len;
	*p++ = (uint8_t)(msg->payload_len >> 8);
	*p++ = (uint8_t)(msg->payload_len & 0xff);
	memcpy(p, msg->payload, msg->payload_len);
	p += msg->payload_len;
	*ret_len = (size_t)(p - buf);
	return 0;
}

/* Take n bytes, or fail if fewer remain. */
static const uint8_t *
wire_take(struct wire_reader *r, size_t n)
{
	const uint8_t *p = r->p;

	if (n > r->left)
		return NULL;
	r->p += n;
	r->left -= n;
	return p;
}

/* A u8-length-prefixed string of at most max bytes into dst (NUL-terminated). */
static int
wire_take_string(struct wire_reader *r, size_t max, char *dst, uint8_t *ret_len)
{
	const uint8_t *lp = wire_take(r, 1), *s;

	if (lp == NULL || *lp > max)
		return -EPROTO;
	s = wire_take(r, *lp);
	if (s == NULL)
		return -EPROTO;
	memcpy(dst, s, *lp);
	dst[*lp] = '\0';
	*ret_len = *lp;
	return 0;
}

int
dm_wire_decode(const uint8_t *buf, size_t len, struct dm_msg *ret)
{
	struct wire_reader r = { .p = buf, .left = len };
	const uint8_t *fixed, *pl;
	uint16_t payload_len;

	if (buf == NULL || ret == NULL)
		return -EINVAL;
	if (len > DM_WIRE_MSG_MAX)
		return -EMSGSIZE;
	fixed = wire_take(&r, WIRE_FIXED);
	if (fixed == NULL || fixed[0] != DM_WIRE_VERSION || !kind_known(fixed[1]) ||
	    fixed[2] > DM_MODE_SHARED || (fixed[3] & ~DM_MSG_F_ALL) != 0)
		return -EPROTO;
	ret->kind = fixed[1];
	ret->mode = fixed[2];
	ret->flags = fixed[3];
	ret->seq = get_u64(fixed + 4);
	ret->token = get_u64(fixed + 12);
	ret->epoch = get_u64(fixed + 20);
	ret->incarnation = get_u64(fixed + 28);
	ret->serial = get_u64(fixed + 36);
	ret->arg = get_u64(fixed + 44);
	ret->roster_epoch = get_u64(fixed + 52);
	if (wire_take_string(&r, DM_LOCK_NAME_MAX, ret->lock, &ret->lock_len) < 0 ||
	    wire_take_string(&r, DM_NODE_NAME_MAX, ret->node, &ret->node_len) < 0 ||
	    wire_take_string(&r, DM_ADDRESS_MAX, ret->address, &ret->address_len) < 0)
		return -EPROTO;
	if (ret->lock_len > 0 && !dm_lock_name_valid(ret->lock, ret->lock_len))
		return -EPROTO;
	if (ret->node_len > 0 && !dm_node_name_valid(ret->node, ret->node_len))
		return -EPROTO;
	if (!address_valid(ret->address, ret->address_len))
		return -EPROTO;
	pl = wire_take(&r, 2);
	if (pl == NULL)
		return -EPROTO;
	payload_len = (uint16_t)((pl[0] << 8) | pl[1]);
	if (payload_len > DM_MSG_PAYLOAD_MAX)
		return -EPROTO;
	pl = wire_take(&r, payload_len);
	if (pl == NULL || r.left != 0)
		return -EPROTO;
	memcpy(ret->payload, pl, payload_len);
	ret->payload_len = payload_len;
	return 0;
}

const char *
dm_msg_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[DM_MSG_JOIN] = "JOIN",
		[DM_MSG_ROSTER_ENTRY] = "ROSTER_ENTRY",
		[DM_MSG_ROSTER_END] = "ROSTER_END",
		[DM_MSG_NODE_ADD] = "NODE_ADD",
		[DM_MSG_NODE_ADD_ACK] = "NODE_ADD_ACK",
		[DM_MSG_SEQ_QUERY] = "SEQ_QUERY",
		[DM_MSG_SEQ_ANSWER] = "SEQ_ANSWER",
		[DM_MSG_LEAVE] = "LEAVE",
		[DM_MSG_LEAVE_ACK] = "LEAVE_ACK",
		[DM_MSG_SUSPECT] = "SUSPECT",
		[DM_MSG_SUSPECT_VOTE] = "SUSPECT_VOTE",
		[DM_MSG_NODE_FAILED] = "NODE_FAILED",
		[DM_MSG_REJOIN] = "REJOIN",
		[DM_MSG_HEARTBEAT] = "HEARTBEAT",
		[DM_MSG_HEARTBEAT_ACK] = "HEARTBEAT_ACK",
		[DM_MSG_JOIN_REFUSED] = "JOIN_REFUSED",
		[DM_MSG_SUSPECT_ABORT] = "SUSPECT_ABORT",
		[DM_RA_REQUEST] = "REQUEST",
		[DM_RA_REPLY] = "REPLY",
		[DM_RA_BUSY] = "BUSY",
		[DM_RA_ARE_YOU_THERE] = "ARE_YOU_THERE",
		[DM_RA_YES_I_AM_HERE] = "YES_I_AM_HERE",
		[DM_LP_REQUEST] = "LP_REQUEST",
		[DM_LP_REPLY] = "LP_REPLY",
		[DM_LP_RELEASE] = "LP_RELEASE",
		[DM_LP_BUSY] = "LP_BUSY",
		[DM_LP_ARE_YOU_THERE] = "LP_ARE_YOU_THERE",
		[DM_LP_YES_I_AM_HERE] = "LP_YES_I_AM_HERE",
		[DM_MK_REQUEST] = "MK_REQUEST",
		[DM_MK_LOCKED] = "MK_LOCKED",
		[DM_MK_FAILED] = "MK_FAILED",
		[DM_MK_INQUIRE] = "MK_INQUIRE",
		[DM_MK_RELINQUISH] = "MK_RELINQUISH",
		[DM_MK_RELEASE] = "MK_RELEASE",
		[DM_MK_BUSY] = "MK_BUSY",
		[DM_MK_STALE] = "MK_STALE",
		[DM_MK_ARE_YOU_THERE] = "MK_ARE_YOU_THERE",
		[DM_MK_YES_I_AM_HERE] = "MK_YES_I_AM_HERE",
		/* relative consensus voting (algo_rcv.h: RCV_MSG_*) */
		[0xB0] = "RCV_RM", [0xB1] = "RCV_EM", [0xB2] = "RCV_IM", [0xB3] = "RCV_BUSY",
		[0xB4] = "RCV_PROBE", [0xB5] = "RCV_PROBE_ACK", [0xB6] = "RCV_STALE",
		[0xB7] = "RCV_ABSENT", [0xB8] = "RCV_RL_REQUEST", [0xB9] = "RCV_RL_REPLY",
		[0xBA] = "RCV_RL_PROBE", [0xBB] = "RCV_RL_HERE",
		/* hierarchical (algo_hierarchical.h: DM_HR_*) */
		[0xC0] = "NREQUEST", [0xC1] = "GREQUEST", [0xC2] = "GREPLY", [0xC3] = "NREPLY",
		[0xC4] = "NRELEASE", [0xC5] = "GRELEASE", [0xC6] = "GREQREL", [0xC7] = "NREQREL",
		[0xC8] = "NBUSY", [0xC9] = "GBUSY", [0xCA] = "NQUEUED", [0xCB] = "GQUEUED",
		/* token algorithms (dm_token.h: DM_TK_*) and elections (dm_election.h: DM_EL_*) */
		[96] = "TK_REQUEST", [97] = "TK_TOKEN", [98] = "TK_RETURN", [99] = "TK_PROBE",
		[100] = "TK_PROBE_ANSWER",
		[112] = "EL_ARE_YOU_UP", [113] = "EL_AYU_ANSWER", [114] = "EL_ENTER_ELECTION",
		[115] = "EL_EE_ANSWER", [116] = "EL_SET_COORDINATOR", [117] = "EL_HELD",
		[118] = "EL_SC_ANSWER", [119] = "EL_NEW_STATE", [120] = "EL_NS_ANSWER",
		[121] = "EL_ARE_YOU_COORD", [122] = "EL_AYC_ANSWER", [123] = "EL_ARE_YOU_THERE",
		[124] = "EL_AYT_ANSWER", [125] = "EL_INVITATION", [126] = "EL_ACCEPT",
		[127] = "EL_ACCEPT_ANSWER", [128] = "EL_READY", [129] = "EL_READY_ANSWER",
	};

	if (kind < sizeof(names) / sizeof(names[0]) && names[kind] != NULL)
		return names[kind];
	return "?";
}
