/*
 * check_wire.c: dm_wire round trips for every message kind, and the strict
 * decoder's refusal of malformed input (truncation at every length, bad
 * version/kind/mode/flags, bad names, over-long lengths, trailing bytes).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm_msg.h"
#include "dm_wire.h"

static uint8_t buf[DM_WIRE_MSG_MAX + 16];

static void
fill(struct dm_msg *m, uint8_t kind, unsigned variant)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->mode = variant & 1;
	m->flags = ((variant & 2) ? DM_MSG_F_TRY : 0) | ((variant & 4) ? DM_MSG_F_MEMBER : 0);
	m->seq = 0x0102030405060708ULL + variant;
	m->token = UINT64_MAX - variant;
	m->epoch = variant;
	m->roster_epoch = 0x0102030405060708ull + variant;
	m->incarnation = 42;
	m->serial = 7 * variant;
	m->arg = 1;
	if (variant % 3 != 0) {
		m->lock_len = (uint8_t)(variant % 3 == 1 ? 2 : DM_LOCK_NAME_MAX);
		memset(m->lock, 'a' + (int)(variant % 26), m->lock_len);
		m->lock[m->lock_len] = '\0';
	}
	if (variant & 4) {
		m->node_len = 5;
		memcpy(m->node, "node7", 6);
		m->address_len = 14;
		memcpy(m->address, "127.0.0.1:7000", 15);
	}
	if (variant & 8) {
		m->payload_len = (uint16_t)(variant == 15 ? DM_MSG_PAYLOAD_MAX : 3);
		memset(m->payload, 0xab, m->payload_len);
	}
}

static void
assert_same(const struct dm_msg *a, const struct dm_msg *b)
{
	ck_assert_uint_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->mode, b->mode);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->token, b->token);
	ck_assert_uint_eq(a->epoch, b->epoch);
	ck_assert_uint_eq(a->roster_epoch, b->roster_epoch);
	ck_assert_uint_eq(a->incarnation, b->incarnation);
	ck_assert_uint_eq(a->serial, b->serial);
	ck_assert_uint_eq(a->arg, b->arg);
	ck_assert_uint_eq(a->lock_len, b->lock_len);
	ck_assert_mem_eq(a->lock, b->lock, a->lock_len);
	ck_assert_uint_eq(b->lock[b->lock_len], 0);
	ck_assert_uint_eq(a->node_len, b->node_len);
	ck_assert_mem_eq(a->node, b->node, a->node_len);
	ck_assert_uint_eq(a->address_len, b->address_len);
	ck_assert_mem_eq(a->address, b->address, a->address_len);
	ck_assert_uint_eq(a->payload_len, b->payload_len);
	ck_assert_mem_eq(a->payload, b->payload, a->payload_len);
}

static const uint8_t kinds[] = {
	DM_MSG_JOIN, DM_MSG_ROSTER_ENTRY, DM_MSG_ROSTER_END, DM_MSG_NODE_ADD, DM_MSG_NODE_ADD_ACK,
	DM_MSG_SEQ_QUERY, DM_MSG_SEQ_ANSWER, DM_MSG_LEAVE, DM_MSG_LEAVE_ACK, DM_MSG_SUSPECT,
	DM_MSG_SUSPECT_VOTE, DM_MSG_NODE_FAILED, DM_MSG_REJOIN, DM_MSG_HEARTBEAT,
	DM_MSG_HEARTBEAT_ACK, DM_MSG_JOIN_REFUSED, DM_MSG_SUSPECT_ABORT, DM_RA_REQUEST, DM_RA_REPLY, DM_RA_BUSY,
	DM_RA_ARE_YOU_THERE, DM_RA_YES_I_AM_HERE, 200, 255,
};

START_TEST(test_round_trip_every_kind)
{
	static struct dm_msg in, out;
	size_t len;

	for (size_t k = 0; k < sizeof(kinds); k++)
		for (unsigned v = 0; v < 16; v++) {
			fill(&in, kinds[k], v);
			ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
			ck_assert_uint_le(len, DM_WIRE_MSG_MAX);
			ck_assert_uint_eq(buf[0], DM_WIRE_VERSION);
			memset(&out, 0x5a, sizeof(out));
			ck_assert_int_eq(dm_wire_decode(buf, len, &out), 0);
			assert_same(&in, &out);
			ck_assert_str_ne(dm_msg_kind_name(kinds[k]), "");
		}
	ck_assert_str_eq(dm_msg_kind_name(DM_RA_REQUEST), "REQUEST");
	ck_assert_str_eq(dm_msg_kind_name(DM_MSG_NODE_FAILED), "NODE_FAILED");
	ck_assert_str_eq(dm_msg_kind_name(0), "?");
}
END_TEST

START_TEST(test_truncation_and_trailing)
{
	static struct dm_msg in, out;
	size_t len;

	fill(&in, DM_RA_REQUEST, 15);
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(dm_wire_decode(buf, cut, &out), -EPROTO);
	buf[len] = 0;
	ck_assert_int_eq(dm_wire_decode(buf, len + 1, &out), -EPROTO);
	ck_assert_int_eq(dm_wire_decode(buf, DM_WIRE_MSG_MAX + 1, &out), -EMSGSIZE);
	ck_assert_int_eq(dm_wire_decode(NULL, 0, &out), -EINVAL);
}
END_TEST

/* Offsets in the layout (see dm_wire.c). */
#define OFF_VERSION	0
#define OFF_KIND	1
#define OFF_MODE	2
#define OFF_FLAGS	3
#define OFF_LOCKLEN	60

START_TEST(test_bad_header_fields)
{
	static struct dm_msg in, out;
	size_t len;
	static const struct { size_t off; uint8_t val; } bad[] = {
		{ OFF_VERSION, 0 }, { OFF_VERSION, 1 }, { OFF_VERSION, 3 }, { OFF_KIND, 0 }, { OFF_KIND, DM_MSG_ENGINE_MAX_ },
		{ OFF_KIND, 63 }, { OFF_MODE, 2 }, { OFF_MODE, 255 }, { OFF_FLAGS, 8 },
		{ OFF_FLAGS, 0x80 },
	};

	fill(&in, DM_RA_REPLY, 1);
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t save = buf[bad[i].off];
		buf[bad[i].off] = bad[i].val;
		ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
		buf[bad[i].off] = save;
	}
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), 0);
}
END_TEST

START_TEST(test_bad_names_and_lengths)
{
	static struct dm_msg in, out;
	size_t len;

	fill(&in, DM_RA_REQUEST, 1);	/* lock "bb" */
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
	buf[OFF_LOCKLEN + 1] = ' ';		/* space in a lock name */
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
	buf[OFF_LOCKLEN + 1] = 0x7f;
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
	buf[OFF_LOCKLEN + 1] = 'b';
	buf[OFF_LOCKLEN] = 200;			/* length beyond the buffer */
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
	buf[OFF_LOCKLEN] = 2;
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), 0);

	fill(&in, DM_MSG_NODE_ADD, 12);		/* node "node7", no lock, 3-byte payload */
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
	buf[OFF_LOCKLEN + 1] = 64;		/* node_len over DM_NODE_NAME_MAX */
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
	buf[OFF_LOCKLEN + 1] = 5;
	buf[OFF_LOCKLEN + 2] = '-';		/* node name must start alphanumeric */
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
	buf[OFF_LOCKLEN + 2] = 'n';
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), 0);
	/* payload length over the limit */
	buf[len - 5] = 0xff;	/* u16 length before the 3 payload bytes */
	buf[len - 4] = 0xff;
	ck_assert_int_eq(dm_wire_decode(buf, len, &out), -EPROTO);
}
END_TEST

START_TEST(test_encode_limits)
{
	static struct dm_msg in;
	size_t len;

	fill(&in, DM_RA_REQUEST, 15);
	ck_assert_int_eq(dm_wire_encode(&in, buf, 10, &len), -ENOBUFS);
	in.node_len = DM_NODE_NAME_MAX + 1;
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), -EINVAL);
	in.node_len = 0;
	in.payload_len = DM_MSG_PAYLOAD_MAX + 1;
	ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), -EINVAL);
}
END_TEST

START_TEST(test_random_mutations_never_crash)
{
	static struct dm_msg in, out;
	static uint8_t again[DM_WIRE_MSG_MAX];
	uint64_t x = 88172645463325252ULL;
	size_t len, len2;

	for (int round = 0; round < 20000; round++) {
		fill(&in, kinds[round % sizeof(kinds)], (unsigned)round % 16);
		ck_assert_int_eq(dm_wire_encode(&in, buf, sizeof(buf), &len), 0);
		for (int f = 0; f < 3; f++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[x % len] ^= (uint8_t)(x >> 32);
		}
		size_t use = (x >> 20) % 4 == 0 ? (size_t)((x >> 40) % (len + 1)) : len;
		if (dm_wire_decode(buf, use, &out) == 0) {
			/* Whatever decodes re-encodes to the same bytes (canonical). */
			ck_assert_int_eq(dm_wire_encode(&out, again, sizeof(again), &len2), 0);
			ck_assert_uint_eq(len2, use);
			ck_assert_mem_eq(again, buf, use);
		}
	}
}
END_TEST

static Suite *
wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_round_trip_every_kind);
	tcase_add_test(tc, test_truncation_and_trailing);
	tcase_add_test(tc, test_bad_header_fields);
	tcase_add_test(tc, test_bad_names_and_lengths);
	tcase_add_test(tc, test_encode_limits);
	tcase_add_test(tc, test_random_mutations_never_crash);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
