/*
 * check_algo_rcv.c: relative consensus voting (algo_rcv*.c).  The Order
 * and Exchange procedures on hand-made SI tables, where an RM is forwarded, the SI's wire form, and
 * small message-pump scenarios on engines running "rcv" (light-load
 * message count floor(N/2)+1, ordered hand-over by one EM, withdraw, try,
 * shared refused).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algo_rcv.h"
#include "engine_harness.h"

static struct rcv_table ta, tb;
static struct rcv_table_space ta_space, tb_space;

/* A pending tuple of node j registered in the given rows, in order. */
static void
put(struct rcv_table *t, uint16_t j, uint64_t ts, const uint16_t *rows, size_t n_rows)
{
	if (t->latest[j] != ts)
		rcv_set_latest(t, j, ts, 0);
	for (size_t i = 0; i < n_rows; i++)
		ck_assert(rcv_register(t, rows[i], j, t->row_ts[rows[i]] + 1));
}

static void
know_rows(struct rcv_table *t)
{
	for (uint16_t r = 0; r < t->n; r++)
		if (t->row_ts[r] == 0)
			t->row_ts[r] = 1;
}

/* --- Order --- */

START_TEST(order_light_load_majority)
{
	/* N = 5, one request: ordered once it tops floor(N/2)+1 = 3 rows. */
	rcv_table_init(&ta, 5);
	ta.started = true;
	put(&ta, 2, 10, (const uint16_t[]){ 2, 0 }, 2);
	ck_assert(!rcv_order(&ta, 2));		/* S1 = 2, U = 3 */
	ck_assert_int_eq(ta.n_nonl, 0);
	put(&ta, 2, 10, (const uint16_t[]){ 4 }, 1);
	ck_assert(rcv_order(&ta, 2));		/* S1 = 3 > U = 2 */
	ck_assert_int_eq(ta.n_nonl, 1);
	ck_assert_int_eq(ta.nonl[0], 2);
	for (uint16_t r = 0; r < 5; r++)
		ck_assert(!rcv_row_has(&ta, r, 2));	/* deleted from every MNL */
}
END_TEST

START_TEST(order_tie_smaller_id_wins)
{
	/* N = 4, every row known: 2 votes each, S1 - S2 = 0 = U: smaller id. */
	rcv_table_init(&ta, 4);
	ta.started = true;
	put(&ta, 3, 5, (const uint16_t[]){ 3, 2 }, 2);
	put(&ta, 1, 6, (const uint16_t[]){ 1, 0 }, 2);
	put(&ta, 1, 6, (const uint16_t[]){ 3, 2 }, 2);
	put(&ta, 3, 5, (const uint16_t[]){ 1, 0 }, 2);
	ck_assert(rcv_order(&ta, 3));
	/* 1 first (tie, smaller id), then 3 tops every row. */
	ck_assert_int_eq(ta.n_nonl, 2);
	ck_assert_int_eq(ta.nonl[0], 1);
	ck_assert_int_eq(ta.nonl[1], 3);
}
END_TEST

START_TEST(order_open_rows_block)
{
	/* N = 5: 2 vs 1 votes with 2 rows open: S1 - S2 = 1 < U = 2. */
	rcv_table_init(&ta, 5);
	ta.started = true;
	put(&ta, 0, 5, (const uint16_t[]){ 0, 1 }, 2);
	put(&ta, 4, 7, (const uint16_t[]){ 4 }, 1);
	ck_assert(!rcv_order(&ta, 0));
	ck_assert(!rcv_order(&ta, 4));
	/* One more vote for 0 decides it (3 - 1 > 1), and only it. */
	put(&ta, 0, 5, (const uint16_t[]){ 2 }, 1);
	ck_assert(!rcv_order(&ta, 4));
	ck_assert_int_eq(ta.n_nonl, 1);
	ck_assert_int_eq(ta.nonl[0], 0);
}
END_TEST

START_TEST(order_single_candidate_strict)
{
	/* N = 4, one candidate with 2 votes and 2 open rows: an unseen
	 * tuple could still tie it, so no decision. */
	rcv_table_init(&ta, 4);
	ta.started = true;
	put(&ta, 0, 5, (const uint16_t[]){ 0, 1 }, 2);
	ck_assert(!rcv_order(&ta, 0));
}
END_TEST

START_TEST(order_first_decision_needs_all_rows_holder_first)
{
	rcv_table_init(&ta, 3);
	put(&ta, 0, 5, (const uint16_t[]){ 0, 1 }, 2);
	ck_assert(!rcv_order(&ta, 0));		/* row 2 of this generation unknown */
	/* Node 2 joins the generation while in its CS: HOLDER tuple. */
	rcv_set_latest(&ta, 2, 9, RCV_F_HOLDER);
	ck_assert(rcv_register(&ta, 2, 2, 3));
	ck_assert(rcv_order(&ta, 0));
	ck_assert_int_eq(ta.n_nonl, 2);
	ck_assert_int_eq(ta.nonl[0], 2);	/* the holder goes first */
	ck_assert_int_eq(ta.nonl[1], 0);
}
END_TEST

START_TEST(order_finished_tuples_do_not_vote)
{
	rcv_table_init(&ta, 3);
	ta.started = true;
	put(&ta, 1, 4, (const uint16_t[]){ 1, 0, 2 }, 3);
	ta.flags[1] |= RCV_F_DONE;
	put(&ta, 2, 8, (const uint16_t[]){ 2, 0 }, 2);
	ck_assert(rcv_order(&ta, 2));
	ck_assert_int_eq(ta.n_nonl, 1);
	ck_assert_int_eq(ta.nonl[0], 2);
}
END_TEST

/* --- Forwarding choice --- */

static void
ul_set(uint8_t *ul, const uint16_t *ranks, size_t n)
{
	memset(ul, 0, RCV_NODES_MAX / 8);
	for (size_t i = 0; i < n; i++)
		ul[ranks[i] / 8] |= (uint8_t)(1u << (ranks[i] % 8));
}

static bool
ul_has(const uint8_t *ul, uint16_t r)
{
	return (ul[r / 8] >> (r % 8)) & 1u;
}

START_TEST(forward_prefers_rows_without_a_vote)
{
	uint8_t ul[RCV_NODES_MAX / 8], pref[RCV_NODES_MAX / 8];
	uint16_t count;

	/* N = 7, host 0.  Rows 1, 2 vote for 3's tuple; node 3 itself is
	 * pending and not ordered (its own row votes, though unknown here);
	 * rows 4, 5 are known and empty; row 6 is unknown. */
	rcv_table_init(&ta, 7);
	ta.started = true;
	know_rows(&ta);
	ta.row_ts[6] = 0;
	ta.row_ts[3] = 0;
	put(&ta, 0, 9, (const uint16_t[]){ 0 }, 1);
	put(&ta, 3, 4, (const uint16_t[]){ 1, 2 }, 2);
	ul_set(ul, (const uint16_t[]){ 1, 2, 3, 4, 5, 6 }, 6);
	rcv_rm_candidates(&ta, ul, 7, pref, &count);
	/* Only there does the host's tuple become a vote at once. */
	ck_assert_uint_eq(count, 3);
	ck_assert(ul_has(pref, 4) && ul_has(pref, 5) && ul_has(pref, 6));
	ck_assert(!ul_has(pref, 1) && !ul_has(pref, 2) && !ul_has(pref, 3));
	/* No open row left unvisited: any unvisited one. */
	ul_set(ul, (const uint16_t[]){ 1, 3 }, 2);
	rcv_rm_candidates(&ta, ul, 7, pref, &count);
	ck_assert_uint_eq(count, 2);
	ck_assert(ul_has(pref, 1) && ul_has(pref, 3));
	/* Nothing unvisited: nowhere to go. */
	memset(ul, 0, sizeof(ul));
	rcv_rm_candidates(&ta, ul, 7, pref, &count);
	ck_assert_uint_eq(count, 0);
}
END_TEST

/* --- Exchange --- */

START_TEST(exchange_newer_row_and_longer_nonl_win)
{
	rcv_table_init(&ta, 4);
	rcv_table_init(&tb, 4);
	put(&ta, 1, 3, (const uint16_t[]){ 1 }, 1);
	put(&tb, 1, 3, (const uint16_t[]){ 1, 2 }, 2);
	put(&tb, 3, 7, (const uint16_t[]){ 3, 2 }, 2);
	tb.row_ts[2] = 50;
	ck_assert_int_eq(rcv_exchange(&ta, &tb), 0);
	ck_assert_uint_eq(ta.row_ts[2], 50);
	ck_assert_int_eq(ta.row_len[2], 2);
	ck_assert_int_eq(rcv_row(&ta, 2)[0], 1);
	ck_assert_int_eq(rcv_row(&ta, 2)[1], 3);
	ck_assert_uint_eq(ta.latest[3], 7);
	/* b orders 1; a learns it and drops 1 from its rows. */
	tb.started = true;
	ck_assert(!rcv_order(&tb, 3) || tb.n_nonl > 0);
	tb.nonl[0] = 1;
	tb.n_nonl = 1;
	ck_assert_int_eq(rcv_exchange(&ta, &tb), 0);
	ck_assert_int_eq(ta.n_nonl, 1);
	ck_assert(!rcv_row_has(&ta, 1, 1));
	ck_assert(ta.started);
}
END_TEST

START_TEST(exchange_newer_tuple_purges_older)
{
	rcv_table_init(&ta, 3);
	rcv_table_init(&tb, 3);
	put(&ta, 2, 5, (const uint16_t[]){ 0, 1 }, 2);
	ta.nonl[0] = 2;
	ta.n_nonl = 1;
	rcv_set_latest(&tb, 2, 9, 0);	/* node 2 moved on: tuple 5 is over */
	ck_assert_int_eq(rcv_exchange(&ta, &tb), 0);
	ck_assert_uint_eq(ta.latest[2], 9);
	ck_assert_int_eq(ta.n_nonl, 0);
	ck_assert(!rcv_row_has(&ta, 0, 2));
}
END_TEST

START_TEST(exchange_conflicting_orders_refused)
{
	rcv_table_init(&ta, 3);
	rcv_table_init(&tb, 3);
	rcv_set_latest(&ta, 0, 1, 0);
	rcv_set_latest(&ta, 1, 1, 0);
	rcv_set_latest(&tb, 0, 1, 0);
	rcv_set_latest(&tb, 1, 1, 0);
	ta.nonl[0] = 0, ta.nonl[1] = 1, ta.n_nonl = 2;
	tb.nonl[0] = 1, tb.nonl[1] = 0, tb.n_nonl = 2;
	ck_assert_int_eq(rcv_exchange(&ta, &tb), -EPROTO);
}
END_TEST

/* --- Wire form --- */

START_TEST(wire_round_trip_and_checks)
{
	uint8_t buf[DM_MSG_PAYLOAD_MAX];
	size_t used;
	int len;

	rcv_table_init(&ta, 6);
	know_rows(&ta);
	put(&ta, 4, 300, (const uint16_t[]){ 4, 0, 1 }, 3);
	put(&ta, 5, 70000, (const uint16_t[]){ 5, 0 }, 2);
	ta.started = true;
	rcv_set_latest(&ta, 2, 11, RCV_F_DONE);
	ta.nonl[0] = 4;
	ta.n_nonl = 1;
	rcv_prune(&ta);
	len = rcv_table_encode(&ta, 5, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(rcv_table_decode(&tb, 6, buf, (size_t)len, &used), 0);
	ck_assert_uint_eq(used, (size_t)len);
	ck_assert_int_eq(memcmp(tb.latest, ta.latest, 6 * sizeof(*ta.latest)), 0);
	ck_assert_int_eq(memcmp(tb.row_ts, ta.row_ts, 6 * sizeof(*ta.row_ts)), 0);
	ck_assert_int_eq(tb.n_nonl, 1);
	ck_assert_int_eq(tb.flags[2], RCV_F_DONE);
	ck_assert_int_eq(tb.row_len[0], 1);
	ck_assert_int_eq(rcv_row(&tb, 0)[0], 5);
	/* Wrong N, truncation and a bad rank are refused. */
	ck_assert_int_eq(rcv_table_decode(&tb, 5, buf, (size_t)len, &used), -EPROTO);
	ck_assert_int_eq(rcv_table_decode(&tb, 6, buf, (size_t)len - 1, &used), -EPROTO);
	buf[len - 1] = 0xff;
	ck_assert_int_eq(rcv_table_decode(&tb, 6, buf, (size_t)len, &used), -EPROTO);
}
END_TEST

START_TEST(wire_drops_whole_rows_keeps_preferred)
{
	uint8_t buf[DM_MSG_PAYLOAD_MAX];
	size_t used;
	int len;

	/* N = 256 under load: every row holds 40 tuples (far over the payload). */
	rcv_table_init(&ta, 256);
	for (uint16_t j = 0; j < 40; j++)
		rcv_set_latest(&ta, j, 1000 + j, 0);
	for (uint16_t r = 0; r < 256; r++)
		for (uint16_t j = 0; j < 40; j++)
			ck_assert(rcv_register(&ta, r, (uint16_t)((j + r) % 40), 5 + r));
	len = rcv_table_encode(&ta, 7, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_le(len, (int)sizeof(buf));
	ck_assert_int_eq(rcv_table_decode(&tb, 256, buf, (size_t)len, &used), 0);
	for (uint16_t r = 0; r < 256; r++)
		ck_assert(tb.row_ts[r] == 0 || tb.row_len[r] == 40);	/* never a partial row */
	ck_assert_uint_ne(tb.row_ts[0], 0);	/* rows with the preferred tuple first */
	/* The light-load table of N = 256 fits whole. */
	rcv_table_init(&ta, 256);
	know_rows(&ta);
	put(&ta, 3, 100000, (const uint16_t[]){ 3, 4, 5, 6 }, 4);
	len = rcv_table_encode(&ta, 3, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(rcv_table_decode(&tb, 256, buf, (size_t)len, &used), 0);
	for (uint16_t r = 0; r < 256; r++)
		ck_assert_uint_eq(tb.row_ts[r], ta.row_ts[r]);
}
END_TEST

/* --- A lock's SI: sized for its generation --- */

START_TEST(table_sized_for_its_generation)
{
	/* A lock's SI holds its generation's N members, not RCV_NODES_MAX:
	 * a few hundred bytes at N = 16 instead of 70 KB.  It grows with N,
	 * never shrinks, and computes what a full-size table does. */
	struct rcv_table t;
	uint8_t buf[DM_MSG_PAYLOAD_MAX], buf2[DM_MSG_PAYLOAD_MAX];
	int len, len2;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(rcv_table_reserve(&t, 5), 0);
	ck_assert_uint_eq(t.cap, 5);
	ck_assert_int_eq(rcv_table_reserve(&t, 3), 0);
	ck_assert_uint_eq(t.cap, 5);			/* never shrinks */
	/* The same tuples in this table and a full-size one: the same SI. */
	rcv_table_init(&t, 5);
	rcv_table_init(&ta, 5);
	t.started = ta.started = true;
	put(&t, 2, 10, (const uint16_t[]){ 2, 0 }, 2);
	put(&ta, 2, 10, (const uint16_t[]){ 2, 0 }, 2);
	put(&t, 4, 11, (const uint16_t[]){ 4, 3 }, 2);
	put(&ta, 4, 11, (const uint16_t[]){ 4, 3 }, 2);
	len = rcv_table_encode(&t, 2, buf, sizeof(buf));
	len2 = rcv_table_encode(&ta, 2, buf2, sizeof(buf2));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(len, len2);
	ck_assert_mem_eq(buf, buf2, (size_t)len);
	ck_assert_int_eq(rcv_row(&t, 3)[0], 4);
	ck_assert_int_eq(rcv_row(&t, 2)[0], 2);		/* rows apart at cap 5 */
	/* A message of a larger N does not fit: refused, not written past. */
	ck_assert_int_eq(rcv_table_reserve(&tb, 6), 0);	/* (attached: room) */
	rcv_table_init(&tb, 6);
	len = rcv_table_encode(&tb, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	{
		size_t used;
		ck_assert_int_eq(rcv_table_decode(&t, 6, buf, (size_t)len, &used), -EPROTO);
	}
	ck_assert_int_eq(rcv_table_reserve(&t, 16), 0);	/* grows */
	ck_assert_uint_eq(t.cap, 16);
	rcv_table_init(&t, 16);
	for (uint16_t j = 0; j < 16; j++)
		rcv_set_latest(&t, j, 100 + j, 0);
	for (uint16_t r = 0; r < 16; r++)
		for (uint16_t j = 0; j < 16; j++)
			ck_assert(rcv_register(&t, r, (uint16_t)((j + r) % 16), 1 + j));
	for (uint16_t r = 0; r < 16; r++)
		ck_assert_int_eq(rcv_row(&t, r)[15], (r + 15) % 16);
	rcv_table_release(&t);
	ck_assert_ptr_null(t.block);
}
END_TEST

/* --- Message pump on engines --- */

static void
rcv_cluster(struct h_cluster *c, int n)
{
	struct dm_peer_spec peers[H_NODES];
	struct dm_engine_config cfg;

	memset(c, 0, sizeof(*c));
	c->q = calloc(H_QUEUE, sizeof(*c->q));
	ck_assert_ptr_nonnull(c->q);
	c->n = n;
	c->now = 1000;
	for (int i = 0; i < n; i++) {
		snprintf(c->names[i], sizeof(c->names[i]), "node%d", i);
		peers[i].name = c->names[i];
		peers[i].address = "127.0.0.1:2";
	}
	for (int i = 0; i < n; i++) {
		h_config(&cfg, c->names[i], peers, (size_t)n);
		cfg.algorithm = "rcv";
		ck_assert_int_eq(dm_engine_new(&cfg, &c->e[i]), 0);
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(c, i, &ev), 0);
	}
}

static size_t
rcv_sent(const struct h_cluster *c, uint8_t kind)
{
	return c->sent_kind[kind];
}

START_TEST(pump_light_load_message_count)
{
	static struct h_cluster c;
	int n = _i;

	rcv_cluster(&c, n);
	/* Warm up: the first request of a generation visits every node. */
	h_acquire(&c, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_pump(&c);
	for (int k = 0; k < 3; k++) {
		int node = (k + 1) % n;
		size_t rm = rcv_sent(&c, RCV_MSG_RM), em = rcv_sent(&c, RCV_MSG_EM),
		    im = rcv_sent(&c, RCV_MSG_IM), all = c.sent_algo;
		uint64_t h = 10 + (uint64_t)k;
		h_acquire(&c, node, h, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
		h_pump(&c);
		ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, h));
		/* floor(N/2) RM hops and one EM, plus one IM when the deciding
		 * node still lists the previous (finished) holder: the paper's
		 * floor(N/2)+2 at most. */
		ck_assert_uint_eq(rcv_sent(&c, RCV_MSG_RM) - rm, (size_t)(n / 2));
		ck_assert_uint_eq(rcv_sent(&c, RCV_MSG_EM) - em, 1);
		ck_assert_uint_le(rcv_sent(&c, RCV_MSG_IM) - im, 1);
		ck_assert_uint_le(c.sent_algo - all, (size_t)(n / 2 + 2));
		ck_assert_int_eq(h_release(&c, node, h), 0);
		h_pump(&c);
	}
	h_fini(&c);
}
END_TEST

START_TEST(pump_queue_hands_over_by_one_em)
{
	static struct h_cluster c;
	size_t em;

	rcv_cluster(&c, 5);
	h_acquire(&c, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	h_acquire(&c, 1, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&c, 2, 3, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 3));
	/* Releasing hands the CS to the next node with one message. */
	em = rcv_sent(&c, RCV_MSG_EM);
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	ck_assert_uint_eq(rcv_sent(&c, RCV_MSG_EM) - em, 1);
	h_pump(&c);
	ck_assert_uint_eq(h_count(&c, DM_FX_GRANT), 2);
	{
		uint64_t first = h_find(&c, DM_FX_GRANT, 2) != NULL ? 2 : 3;
		int node = first == 2 ? 1 : 2;
		ck_assert_int_eq(h_release(&c, node, first), 0);
		h_pump(&c);
		ck_assert_uint_eq(h_count(&c, DM_FX_GRANT), 3);
		ck_assert_int_eq(h_release(&c, first == 2 ? 2 : 1, first == 2 ? 3 : 2), 0);
	}
	h_fini(&c);
}
END_TEST

START_TEST(pump_withdraw_passes_through_and_try_refused)
{
	static struct h_cluster c;
	const struct h_fx *d;

	rcv_cluster(&c, 3);
	h_acquire(&c, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	/* Node 1 waits, then its client leaves: the ghost passes the CS on. */
	h_acquire(&c, 1, 2, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_acquire(&c, 2, 3, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert_int_eq(h_cancel(&c, 1, 2), 0);
	/* A try-once on a busy lock is refused with EBUSY. */
	h_acquire(&c, 1, 4, "x", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_pump(&c);
	d = h_find(&c, DM_FX_DENY, 4);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->error, -EBUSY);
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_pump(&c);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 3));
	ck_assert_ptr_null(h_find(&c, DM_FX_GRANT, 2));
	/* Shared mode is not offered by rcv. */
	h_acquire(&c, 1, 5, "y", DM_MODE_SHARED, DM_WAIT_FOREVER);
	d = h_find(&c, DM_FX_DENY, 5);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->error, -EOPNOTSUPP);
	h_fini(&c);
}
END_TEST

START_TEST(pump_single_node_no_messages)
{
	static struct h_cluster c;

	rcv_cluster(&c, 1);
	h_acquire(&c, 0, 1, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	ck_assert_ptr_nonnull(h_find(&c, DM_FX_GRANT, 1));
	ck_assert_uint_eq(c.sent_algo, 0);
	ck_assert_int_eq(h_release(&c, 0, 1), 0);
	h_fini(&c);
}
END_TEST

/* A node joining through sponsor, running rcv. */
static void
rcv_join(struct h_cluster *c, int i, int sponsor)
{
	struct dm_engine_config cfg;
	struct dm_peer_spec sp = { .name = c->names[sponsor], .address = "127.0.0.1:2" };

	if (i >= c->n)
		c->n = i + 1;
	snprintf(c->names[i], sizeof(c->names[i]), "node%d", i);
	h_config(&cfg, c->names[i], NULL, 0);
	cfg.algorithm = "rcv";
	cfg.incarnation = 1;
	cfg.sponsor = &sp;
	ck_assert_int_eq(dm_engine_new(&cfg, &c->e[i]), 0);
	struct dm_event ev = { .type = DM_EV_TICK };
	ck_assert_int_eq(h_step(c, i, &ev), 0);
}

START_TEST(roster_lock_granted_across_rosters)
{
	/* Seed 289/4 (partition; also 68/7 crash, 264/7 pause): members whose
	 * rosters differ (here node2 crashed mid-add: only node0 took its
	 * NODE_ADD of node3) answered each other's RMs STALE or dropped them
	 * ("our rosters differ") -- also those of the roster lock, the one
	 * lock that makes rosters converge: no sponsor could add anyone.  The
	 * engine's locks now need every member's permission, which does not
	 * depend on the answerer's roster: node1 sponsors node4 at once, no
	 * timer needed.  A user lock is still refused across rosters. */
	static struct h_cluster c;
	struct dm_msg m;

	rcv_cluster(&c, 3);
	c.n = 4;				/* node3: the joiner, never started */
	snprintf(c.names[3], sizeof(c.names[3]), "node3");
	c.down[3] = true;
	memset(&m, 0, sizeof(m));
	m.kind = DM_MSG_NODE_ADD;
	m.node_len = 5;
	memcpy(m.node, "node3", 6);
	m.address_len = 11;
	memcpy(m.address, "127.0.0.1:3", 12);
	m.incarnation = 5;
	m.serial = 1;
	h_inject(&c, 2, 0, &m);
	ck_assert_uint_eq(h_roster(&c, 0), 4);
	ck_assert_uint_eq(h_roster(&c, 1), 3);
	c.qhead = c.qtail;			/* (node0's ack: node2 is gone) */
	/* A user lock: node1's RM is not taken by node0 (other roster). */
	h_acquire(&c, 1, 1, "db", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&c);
	ck_assert(!h_granted(&c, 1));
	/* The roster lock: node4 asks node1 to sponsor it. */
	rcv_join(&c, 4, 1);
	h_pump(&c);
	ck_assert_uint_gt(rcv_sent(&c, RCV_MSG_RL_REPLY), 0);
	ck_assert(h_ready(&c, 4));
	ck_assert_uint_eq(h_roster(&c, 1), 4);	/* node0, node1, node2, node4 */
	ck_assert_uint_eq(h_roster(&c, 0), 5);	/* and node3 */
	h_fini(&c);
}
END_TEST

START_TEST(roster_lock_one_sponsor_at_a_time)
{
	/* The roster lock's deferral rule: two sponsors asking at once, one
	 * of them answers the other and the other waits (two sponsors at once
	 * could split the roster); then both joins finish, one after the
	 * other, and every roster agrees. */
	static struct h_cluster c;
	struct h_packet p, q01, q10;
	int replies;

	rcv_cluster(&c, 3);
	rcv_join(&c, 3, 0);
	rcv_join(&c, 4, 1);
	p = h_unqueue(&c, 3, 0, DM_MSG_JOIN);
	h_inject(&c, 3, 0, &p.msg);
	p = h_unqueue(&c, 4, 1, DM_MSG_JOIN);
	h_inject(&c, 4, 1, &p.msg);
	q01 = h_unqueue(&c, 0, 1, RCV_MSG_RL_REQUEST);
	q10 = h_unqueue(&c, 1, 0, RCV_MSG_RL_REQUEST);
	h_inject(&c, 0, 1, &q01.msg);
	h_inject(&c, 1, 0, &q10.msg);
	replies = (h_queued(&c, 0, 1, RCV_MSG_RL_REPLY) != NULL) +
	    (h_queued(&c, 1, 0, RCV_MSG_RL_REPLY) != NULL);
	ck_assert_int_eq(replies, 1);
	h_pump(&c);
	ck_assert(h_ready(&c, 3));
	ck_assert(h_ready(&c, 4));
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(h_roster(&c, i), 5);
	h_fini(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("algo_rcv");
	TCase *tc = tcase_create("table");
	TCase *tp = tcase_create("pump");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, order_light_load_majority);
	tcase_add_test(tc, order_tie_smaller_id_wins);
	tcase_add_test(tc, order_open_rows_block);
	tcase_add_test(tc, order_single_candidate_strict);
	tcase_add_test(tc, order_first_decision_needs_all_rows_holder_first);
	tcase_add_test(tc, order_finished_tuples_do_not_vote);
	tcase_add_test(tc, forward_prefers_rows_without_a_vote);
	tcase_add_test(tc, exchange_newer_row_and_longer_nonl_win);
	tcase_add_test(tc, exchange_newer_tuple_purges_older);
	tcase_add_test(tc, exchange_conflicting_orders_refused);
	tcase_add_test(tc, wire_round_trip_and_checks);
	tcase_add_test(tc, wire_drops_whole_rows_keeps_preferred);
	tcase_add_test(tc, table_sized_for_its_generation);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tp, 60);
	tcase_add_loop_test(tp, pump_light_load_message_count, 2, 8);
	tcase_add_test(tp, pump_queue_hands_over_by_one_em);
	tcase_add_test(tp, pump_withdraw_passes_through_and_try_refused);
	tcase_add_test(tp, pump_single_node_no_messages);
	tcase_add_test(tp, roster_lock_granted_across_rosters);
	tcase_add_test(tp, roster_lock_one_sponsor_at_a_time);
	suite_add_tcase(s, tp);
	rcv_table_attach(&ta, &ta_space);
	rcv_table_attach(&tb, &tb_space);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
