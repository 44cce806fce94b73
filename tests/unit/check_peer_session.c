/*
 * check_peer_session.c: unit tests for the transport's session state
 * (dmlockd/peer_session.c): numbering, the bounded resend queue, ACK
 * trimming, rewind on a new link, and duplicate/gap detection.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/peer_session.h"

static void
queue_n(struct peer_session *s, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t b = (uint8_t)i;
		ck_assert_int_eq(peer_session_queue(s, &b, 1), 0);
	}
}

START_TEST(numbering_and_send_order)
{
	struct peer_session s;
	const struct peer_msg *m;

	peer_session_init(&s, 1000);
	queue_n(&s, 3);
	ck_assert_uint_eq(s.last_queued, 3);
	for (uint64_t seq = 1; seq <= 3; seq++) {
		m = peer_session_peek_unsent(&s);
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(m->seq, seq);
		ck_assert_uint_eq(m->data[0], seq - 1);
		peer_session_mark_sent(&s);
	}
	ck_assert_ptr_null(peer_session_peek_unsent(&s));
	ck_assert_uint_eq(s.count, 3);
	peer_session_reset(&s);
}
END_TEST

START_TEST(ack_trims_and_rewind_resends)
{
	struct peer_session s;

	peer_session_init(&s, 1000);
	queue_n(&s, 300);	/* grows the ring several times */
	for (int i = 0; i < 200; i++)
		peer_session_mark_sent(&s);
	ck_assert_int_eq(peer_session_ack(&s, 150), 0);
	ck_assert_uint_eq(s.count, 150);
	ck_assert_uint_eq(peer_session_peek_unsent(&s)->seq, 201);
	/* A new link: the peer got up to 170; resend from 171. */
	ck_assert_int_eq(peer_session_rewind(&s, 170), 0);
	ck_assert_uint_eq(s.count, 130);
	ck_assert_uint_eq(peer_session_peek_unsent(&s)->seq, 171);
	/* An old ACK changes nothing; one beyond what was sent is an error. */
	ck_assert_int_eq(peer_session_ack(&s, 100), 0);
	ck_assert_uint_eq(s.count, 130);
	ck_assert_int_eq(peer_session_ack(&s, 301), -EPROTO);
	ck_assert_int_eq(peer_session_rewind(&s, 301), -EPROTO);
	ck_assert_int_eq(peer_session_ack(&s, 300), 0);
	ck_assert_uint_eq(s.count, 0);
	ck_assert_uint_eq(s.bytes, 0);
	ck_assert_ptr_null(peer_session_peek_unsent(&s));
	peer_session_reset(&s);
}
END_TEST

START_TEST(queue_is_bounded)
{
	struct peer_session s;
	uint8_t b = 0;

	peer_session_init(&s, 10);
	queue_n(&s, 10);
	ck_assert_int_eq(peer_session_queue(&s, &b, 1), -ENOBUFS);
	ck_assert_uint_eq(s.last_queued, 10);	/* the refused one got no number */
	ck_assert_int_eq(peer_session_ack(&s, 4), 0);
	ck_assert_int_eq(peer_session_queue(&s, &b, 1), 0);
	ck_assert_uint_eq(s.last_queued, 11);
	peer_session_reset(&s);
	ck_assert_uint_eq(s.last_queued, 0);
	ck_assert_uint_eq(s.limit, 10);
}
END_TEST

START_TEST(accept_in_order_exactly_once)
{
	struct peer_session s;

	peer_session_init(&s, 10);
	ck_assert_int_eq(peer_session_accept(&s, 1), 1);
	ck_assert_int_eq(peer_session_accept(&s, 2), 1);
	ck_assert_int_eq(peer_session_accept(&s, 1), 0);	/* resent duplicate */
	ck_assert_int_eq(peer_session_accept(&s, 2), 0);
	ck_assert_int_eq(peer_session_accept(&s, 4), -EPROTO);	/* gap */
	ck_assert_uint_eq(s.last_received, 2);
	ck_assert_int_eq(peer_session_accept(&s, 3), 1);
	peer_session_reset(&s);
	ck_assert_int_eq(peer_session_accept(&s, 1), 1);	/* a new session starts at 1 */
	peer_session_reset(&s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("peer_session");
	TCase *tc = tcase_create("session");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, numbering_and_send_order);
	tcase_add_test(tc, ack_trims_and_rewind_resends);
	tcase_add_test(tc, queue_is_bounded);
	tcase_add_test(tc, accept_in_order_exactly_once);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
