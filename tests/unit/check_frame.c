/*
 * check_frame.c: unit tests for the peer-transport frame codec
 * (dmlockd/frame.c): round trips of every frame type, partial input, and
 * refusal of every malformed shape the decoder is meant to catch.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/frame.h"

static uint8_t buf[FRAME_MAX + 64];

static struct frame
sample_hello(void)
{
	struct frame f = { .type = FRAME_HELLO };
	f.u.hello.version = FRAME_PROTOCOL_VERSION;
	f.u.hello.incarnation = 0x1122334455667788ULL;
	f.u.hello.your_incarnation = 7;
	f.u.hello.last_received = 42;
	f.u.hello.epoch = 3;
	f.u.hello.your_epoch = 9;
	strcpy(f.u.hello.name, "node-1.example");
	strcpy(f.u.hello.cluster, "prod");
	strcpy(f.u.hello.algorithm, "ricart-agrawala");
	return f;
}

static size_t
encode(const struct frame *f)
{
	size_t n = 0;
	ck_assert_int_eq(frame_encode(f, buf, sizeof(buf), &n), 0);
	ck_assert_uint_ge(n, FRAME_HEADER_LEN);
	return n;
}

START_TEST(hello_round_trip)
{
	struct frame f = sample_hello(), g;
	size_t n = encode(&f);

	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(g.type, FRAME_HELLO);
	ck_assert_uint_eq(g.u.hello.version, FRAME_PROTOCOL_VERSION);
	ck_assert_uint_eq(g.u.hello.incarnation, 0x1122334455667788ULL);
	ck_assert_uint_eq(g.u.hello.your_incarnation, 7);
	ck_assert_uint_eq(g.u.hello.last_received, 42);
	ck_assert_str_eq(g.u.hello.name, "node-1.example");
	ck_assert_str_eq(g.u.hello.cluster, "prod");
	ck_assert_str_eq(g.u.hello.algorithm, "ricart-agrawala");
	ck_assert_uint_eq(g.u.hello.epoch, 3);
	ck_assert_uint_eq(g.u.hello.your_epoch, 9);
}
END_TEST

/* Version 1 HELLOs (no epochs) still decode, so that a link can refuse
 * them by version; version 2 needs a nonzero epoch. */
START_TEST(hello_versions)
{
	struct frame f = sample_hello(), g;
	size_t n2 = encode(&f), n1;

	f.u.hello.version = 1;
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n1), -EINVAL);	/* v1 has no epochs */
	f.u.hello.epoch = f.u.hello.your_epoch = 0;
	n1 = encode(&f);
	ck_assert_uint_eq(n1 + 16, n2);
	ck_assert_int_eq(frame_decode(buf, n1, 0, &g), (ssize_t)n1);
	ck_assert_uint_eq(g.u.hello.version, 1);
	ck_assert_uint_eq(g.u.hello.epoch, 0);
	ck_assert_str_eq(g.u.hello.algorithm, "ricart-agrawala");
	/* The same bytes claiming version 2 lack the epochs. */
	buf[FRAME_HEADER_LEN + 5] = 2;
	ck_assert_int_eq(frame_decode(buf, n1, 0, &g), -EPROTO);
	f = sample_hello();
	f.u.hello.epoch = 0;
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n1), -EINVAL);
	f = sample_hello();
	n2 = encode(&f);
	memset(buf + n2 - 16, 0, 8);	/* epoch 0 on the wire */
	ck_assert_int_eq(frame_decode(buf, n2, 0, &g), -EPROTO);
}
END_TEST

START_TEST(data_ack_keepalive_bye_round_trip)
{
	static const uint8_t payload[] = "some opaque engine message";
	struct frame f = { .type = FRAME_DATA }, g;
	size_t n;

	f.u.data.seq = 9;
	f.u.data.payload = payload;
	f.u.data.len = sizeof(payload);
	n = encode(&f);
	ck_assert_uint_eq(n, FRAME_DATA_PREFIX_LEN + sizeof(payload));
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(g.type, FRAME_DATA);
	ck_assert_uint_eq(g.u.data.seq, 9);
	ck_assert_uint_eq(g.u.data.len, sizeof(payload));
	ck_assert_mem_eq(g.u.data.payload, payload, sizeof(payload));

	f = (struct frame){ .type = FRAME_ACK, .u.ack.seq = UINT64_MAX };
	n = encode(&f);
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(g.type, FRAME_ACK);
	ck_assert_uint_eq(g.u.ack.seq, UINT64_MAX);

	f = (struct frame){ .type = FRAME_KEEPALIVE };
	n = encode(&f);
	ck_assert_uint_eq(n, FRAME_HEADER_LEN);
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(g.type, FRAME_KEEPALIVE);

	f = (struct frame){ .type = FRAME_BYE, .u.bye.reason = FRAME_BYE_CLUSTER };
	strcpy(f.u.bye.text, "cluster mismatch: mine 'a', yours 'b'");
	n = encode(&f);
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(g.u.bye.reason, FRAME_BYE_CLUSTER);
	ck_assert_str_eq(g.u.bye.text, "cluster mismatch: mine 'a', yours 'b'");
}
END_TEST

START_TEST(partial_input_needs_more)
{
	struct frame f = sample_hello(), g;
	size_t n = encode(&f);

	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(frame_decode(buf, i, 0, &g), 0);
	/* Two frames back to back: the first is consumed alone. */
	memcpy(buf + n, buf, n);
	ck_assert_int_eq(frame_decode(buf, 2 * n, 0, &g), (ssize_t)n);
}
END_TEST

START_TEST(header_refusals)
{
	struct frame f = { .type = FRAME_KEEPALIVE }, g;
	size_t n = encode(&f), total;

	buf[4] = 0;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	buf[4] = 6;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	buf[4] = FRAME_KEEPALIVE;
	buf[5] = 1;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	buf[5] = 0;
	buf[7] = 1;
	ck_assert_int_eq(frame_peek_length(buf, 0, &total), -EPROTO);
	buf[7] = 0;
	/* Keepalive with a body. */
	buf[3] = 1;
	ck_assert_int_eq(frame_decode(buf, n + 1, 0, &g), -EPROTO);
	/* Oversized body is refused from the header alone. */
	buf[0] = 0xff;
	ck_assert_int_eq(frame_peek_length(buf, 0, &total), -EMSGSIZE);
	ck_assert_int_eq(frame_decode(buf, FRAME_HEADER_LEN, 0, &g), -EMSGSIZE);
	buf[0] = 0;
	buf[3] = 100;
	ck_assert_int_eq(frame_peek_length(buf, 99, &total), -EMSGSIZE);
	ck_assert_int_eq(frame_peek_length(buf, 100, &total), 0);
	ck_assert_uint_eq(total, FRAME_HEADER_LEN + 100);
}
END_TEST

START_TEST(body_refusals)
{
	struct frame f = sample_hello(), g;
	uint8_t payload[FRAME_PAYLOAD_MAX + 1];
	size_t n = encode(&f);

	/* Bad magic, zero version, zero incarnation, trailing byte. */
	buf[FRAME_HEADER_LEN] = 'X';
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	n = encode(&f);
	buf[FRAME_HEADER_LEN + 5] = 0;
	buf[FRAME_HEADER_LEN + 4] = 0;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	f.u.hello.incarnation = 0;
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n), -EINVAL);
	f = sample_hello();
	n = encode(&f);
	buf[3]++;
	buf[n] = 0;
	ck_assert_int_eq(frame_decode(buf, n + 1, 0, &g), -EPROTO);
	/* A name length running past the body. */
	n = encode(&f);
	buf[FRAME_HEADER_LEN + 32] = 200;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	/* Invalid characters in the node name. */
	n = encode(&f);
	buf[FRAME_HEADER_LEN + 33] = '/';
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	strcpy(f.u.hello.name, "bad name");
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n), -EINVAL);

	/* DATA: seq 0, empty payload, payload over the limit. */
	memset(payload, 'p', sizeof(payload));
	f = (struct frame){ .type = FRAME_DATA, .u.data = { 0, payload, 1 } };
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n), -EINVAL);
	f.u.data.seq = 1;
	f.u.data.len = 0;
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n), -EINVAL);
	f.u.data.len = sizeof(payload);
	ck_assert_int_eq(frame_encode(&f, buf, sizeof(buf), &n), -EINVAL);
	f.u.data.len = FRAME_PAYLOAD_MAX;
	n = encode(&f);
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), (ssize_t)n);
	ck_assert_int_eq(frame_decode(buf, n, 100, &g), -EMSGSIZE);
	ck_assert_int_eq(frame_encode(&f, buf, 100, &n), -ENOBUFS);
	f.u.data.len = 1;
	n = encode(&f);
	memset(buf + FRAME_HEADER_LEN, 0, 8);
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);

	/* ACK with a short body; BYE with an unknown reason or control chars. */
	f = (struct frame){ .type = FRAME_ACK, .u.ack.seq = 1 };
	n = encode(&f);
	buf[3] = 7;
	ck_assert_int_eq(frame_decode(buf, n - 1, 0, &g), -EPROTO);
	f = (struct frame){ .type = FRAME_BYE, .u.bye.reason = FRAME_BYE_NORMAL };
	strcpy(f.u.bye.text, "bye");
	n = encode(&f);
	buf[FRAME_HEADER_LEN] = FRAME_BYE_REASON_MAX + 1;
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
	n = encode(&f);
	buf[FRAME_HEADER_LEN + 2] = '\n';
	ck_assert_int_eq(frame_decode(buf, n, 0, &g), -EPROTO);
}
END_TEST

START_TEST(random_bytes_never_crash)
{
	struct frame g;
	unsigned seed = 12345;

	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand_r(&seed) % 96);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand_r(&seed);
		if (len > 4)
			buf[4] = (uint8_t)(1 + rand_r(&seed) % 5);
		if (len > 7)
			buf[0] = buf[1] = buf[5] = buf[6] = buf[7] = 0;
		ssize_t r = frame_decode(buf, len, 0, &g);
		ck_assert(r == 0 || r == -EPROTO || r == -EMSGSIZE || (r > 0 && (size_t)r <= len));
	}
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, hello_round_trip);
	tcase_add_test(tc, hello_versions);
	tcase_add_test(tc, data_ack_keepalive_bye_round_trip);
	tcase_add_test(tc, partial_input_needs_more);
	tcase_add_test(tc, header_refusals);
	tcase_add_test(tc, body_refusals);
	tcase_add_test(tc, random_bytes_never_crash);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(frame_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
