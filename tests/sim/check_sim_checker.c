/*
 * check_sim_checker.c: the simulator's own building blocks, tested with
 * hand-made histories so that a checker that can never fire is caught:
 * each invariant checker must accept a correct history and reject a broken
 * one; the event heap must pop in (time, insertion) order; the PRNG must be
 * reproducible.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "sim_check.h"
#include "sim_heap.h"
#include "sim_rng.h"

static struct sim_checker ck;

static void
setup(void)
{
	sim_check_init(&ck);
}

static void
teardown(void)
{
	sim_check_fini(&ck);
}

START_TEST(exclusion_accepts_serial_history)
{
	ck_assert_int_eq(sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE), 0);
	ck_assert_int_eq(sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 0), 0);
	ck_assert_int_eq(sim_check_end(&ck, 20, 1), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 20, 1, 2, 2, 0), 0);
	ck_assert_int_eq(sim_check_end(&ck, 30, 2), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
	ck_assert_uint_eq(ck.grants, 2);
}
END_TEST

START_TEST(exclusion_catches_two_exclusive_holders)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 0), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 15, 1, 2, 2, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_EXCLUSION);
	ck_assert_ptr_nonnull(strstr(ck.what, "lock 'a'"));
}
END_TEST

START_TEST(exclusion_catches_shared_with_exclusive)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_SHARED);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 0), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 15, 1, 2, 2, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_EXCLUSION);
}
END_TEST

START_TEST(exclusion_allows_readers_and_other_names)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_SHARED);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_SHARED);
	sim_check_request(&ck, 0, 2, 3, "b", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 0), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 11, 1, 2, 1, 0), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 12, 2, 3, 1, 0), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

START_TEST(exclusion_honours_expiry)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	/* Client 1's grant expires at 100: a grant at 100 is fine... */
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 100), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 100, 1, 2, 2, 0), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

START_TEST(exclusion_extension_keeps_holder)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 100), 0);
	ck_assert_int_eq(sim_check_expiry(&ck, 50, 1, 200), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 150, 1, 2, 2, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_EXCLUSION);
}
END_TEST

START_TEST(exclusion_late_extension_does_not_revive)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 1, 100), 0);
	ck_assert_int_eq(sim_check_expiry(&ck, 120, 1, 200), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 150, 1, 2, 2, 0), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

START_TEST(token_catches_stale_exclusive)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 5, 0), 0);
	sim_check_end(&ck, 20, 1);
	ck_assert_int_eq(sim_check_grant(&ck, 30, 1, 2, 5, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_TOKEN);
}
END_TEST

START_TEST(token_shared_must_exceed_exclusive_only)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 1, 2, "a", DM_MODE_SHARED);
	sim_check_request(&ck, 0, 2, 3, "a", DM_MODE_SHARED);
	sim_check_request(&ck, 0, 0, 4, "a", DM_MODE_SHARED);
	ck_assert_int_eq(sim_check_grant(&ck, 10, 0, 1, 5, 0), 0);
	sim_check_end(&ck, 20, 1);
	ck_assert_int_eq(sim_check_grant(&ck, 30, 1, 2, 7, 0), 0);
	/* Concurrent readers need not be ordered among themselves... */
	ck_assert_int_eq(sim_check_grant(&ck, 31, 2, 3, 6, 0), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
	/* ...but must exceed every earlier writer. */
	ck_assert_int_eq(sim_check_grant(&ck, 32, 0, 4, 5, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_TOKEN);
}
END_TEST

START_TEST(liveness_after_heal)
{
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	/* Before healing nothing is due. */
	ck_assert_int_eq(sim_check_progress(&ck, 1000000, 10), 0);
	sim_check_heal(&ck, 1000000);
	ck_assert_int_eq(sim_check_progress(&ck, 1000010, 10), 0);
	ck_assert_int_eq(sim_check_progress(&ck, 1000011, 10), -1);
	ck_assert_int_eq(ck.violation, SIM_V_LIVENESS);
}
END_TEST

START_TEST(liveness_resolved_requests_are_fine)
{
	sim_check_heal(&ck, 0);
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 0, 2, "a", DM_MODE_EXCLUSIVE);
	sim_check_request(&ck, 0, 0, 3, "a", DM_MODE_EXCLUSIVE);
	ck_assert_int_eq(sim_check_deny(&ck, 5, 2), 0);
	ck_assert_int_eq(sim_check_withdraw(&ck, 5, 3), 0);
	ck_assert_int_eq(sim_check_grant(&ck, 5, 0, 1, 1, 0), 0);
	ck_assert_int_eq(sim_check_progress(&ck, 1000, 10), 0);
	ck_assert_uint_eq(sim_check_pending(&ck), 0);
}
END_TEST

/* Node 0 requests; nodes 1 and 2 enter alternately. */
static int
entries_before_node0(unsigned others)
{
	uint64_t h = 100;

	ck.bound_nodes = 3;
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_net_request(&ck, 0, 0, "a", DM_MODE_EXCLUSIVE, 1);
	for (unsigned i = 0; i < others; i++, h++) {
		int node = 1 + (int)(i % 2);

		sim_check_request(&ck, 1 + i * 10, node, h, "a", DM_MODE_EXCLUSIVE);
		sim_check_grant(&ck, 2 + i * 10, node, h, 10 + i, 0);
		sim_check_end(&ck, 3 + i * 10, h);
	}
	return sim_check_grant(&ck, 1000, 0, 1, 1000, 0);
}

START_TEST(bound_accepts_2n_minus_2)
{
	ck_assert_int_eq(entries_before_node0(4), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

START_TEST(bound_catches_more)
{
	ck_assert_int_eq(entries_before_node0(5), -1);
	ck_assert_int_eq(ck.violation, SIM_V_BOUND);
}
END_TEST

START_TEST(local_handoff_is_one_entry)
{
	ck.bound_nodes = 2;
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_net_request(&ck, 0, 0, "a", DM_MODE_EXCLUSIVE, 1);
	/* Node 1 enters once and hands the lock over locally five times. */
	sim_check_request(&ck, 0, 1, 10, "a", DM_MODE_EXCLUSIVE);
	sim_check_grant(&ck, 1, 1, 10, 1, 0);
	for (uint64_t h = 11; h < 16; h++) {
		sim_check_request(&ck, h, 1, h, "a", DM_MODE_EXCLUSIVE);
		sim_check_end(&ck, h * 10, h - 1);
		sim_check_grant(&ck, h * 10, 1, h, h, 0);
	}
	sim_check_end(&ck, 500, 15);
	ck_assert_int_eq(sim_check_grant(&ck, 600, 0, 1, 100, 0), 0);
	ck_assert_uint_eq(ck.entries, 2);
}
END_TEST

/* Node 0 waits in mode wait; nodes 1 and 2 enter alternately in mode other. */
static int
mixed_entries_before_node0(enum dm_mode wait, enum dm_mode other, unsigned others)
{
	uint64_t h = 100;

	ck.bound_nodes = 3;
	sim_check_request(&ck, 0, 0, 1, "a", wait);
	sim_check_net_request(&ck, 0, 0, "a", wait, 1);
	for (unsigned i = 0; i < others; i++, h++) {
		int node = 1 + (int)(i % 2);

		sim_check_request(&ck, 1 + i * 10, node, h, "a", other);
		sim_check_grant(&ck, 2 + i * 10, node, h, 10 + i, 0);
		sim_check_end(&ck, 3 + i * 10, h);
	}
	return sim_check_grant(&ck, 1000, 0, 1, 1000, 0);
}

/* Seed 28690/3: RA section 6.6 readers answer readers at once, so readers
 * passing a waiting reader are not bounded and not counted... */
START_TEST(bound_ignores_readers_passing_a_reader)
{
	ck_assert_int_eq(mixed_entries_before_node0(DM_MODE_SHARED, DM_MODE_SHARED, 9), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

/* ...but writers passing a reader, and readers passing a writer, are. */
START_TEST(bound_counts_writers_passing_a_reader)
{
	ck_assert_int_eq(mixed_entries_before_node0(DM_MODE_SHARED, DM_MODE_EXCLUSIVE, 5), -1);
	ck_assert_int_eq(ck.violation, SIM_V_BOUND);
}
END_TEST

START_TEST(bound_counts_readers_passing_a_writer)
{
	ck_assert_int_eq(mixed_entries_before_node0(DM_MODE_EXCLUSIVE, DM_MODE_SHARED, 5), -1);
	ck_assert_int_eq(ck.violation, SIM_V_BOUND);
}
END_TEST

/* Node 1 enters, then hands the lock over locally n times; node 0's REQUEST
 * reaches node 1 after its entry if delivered. */
static int
handoffs_before_node0(bool delivered, unsigned n)
{
	ck.bound_nodes = 2;
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_net_request(&ck, 0, 0, "a", DM_MODE_EXCLUSIVE, 7);
	sim_check_request(&ck, 0, 1, 10, "a", DM_MODE_EXCLUSIVE);
	sim_check_grant(&ck, 1, 1, 10, 1, 0);
	/* A REQUEST of an earlier round of node 0 is no news. */
	sim_check_net_deliver(&ck, 1, 0, "a", 6);
	if (delivered)
		sim_check_net_deliver(&ck, 1, 0, "a", 7);
	for (uint64_t h = 11; h < 11 + n; h++) {
		sim_check_request(&ck, h, 1, h, "a", DM_MODE_EXCLUSIVE);
		sim_check_end(&ck, h * 10, h - 1);
		sim_check_grant(&ck, h * 10, 1, h, h, 0);
	}
	sim_check_end(&ck, 500, 10 + n);
	return sim_check_grant(&ck, 600, 0, 1, 100, 0);
}

/* A handoff after the waiter's REQUEST reached the holder is overtaking
 * (the holder must defer it and release to the network): each counts. */
START_TEST(bound_counts_handoffs_after_request_arrived)
{
	ck_assert_int_eq(handoffs_before_node0(true, 1), 0);
	sim_check_fini(&ck);
	sim_check_init(&ck);
	ck_assert_int_eq(handoffs_before_node0(true, 2), -1);
	ck_assert_int_eq(ck.violation, SIM_V_BOUND);
	sim_check_fini(&ck);
	sim_check_init(&ck);
	ck_assert_int_eq(handoffs_before_node0(false, 5), 0);
}
END_TEST

/* Nodes 1 and 2 enter n times in turn (exclusive), from time t on. */
static void
exclusive_entries(unsigned n, sim_time_t t, uint64_t *h)
{
	for (unsigned i = 0; i < n; i++, (*h)++) {
		int node = 1 + (int)(*h % 2);

		sim_check_request(&ck, t + i * 10, node, *h, "a", DM_MODE_EXCLUSIVE);
		sim_check_grant(&ck, t + 1 + i * 10, node, *h, *h, 0);
		sim_check_end(&ck, t + 2 + i * 10, *h);
	}
}

/* Seed 681916/13: the bound is per request.  A node that withdraws its
 * request and asks again under a new number (an exclusive head behind a
 * shared request) is counted from the new REQUEST; a resend of the same
 * request (a probe) changes nothing. */
START_TEST(bound_counts_from_a_new_request)
{
	uint64_t h = 100;

	ck.bound_nodes = 3;
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_net_request(&ck, 0, 0, "a", DM_MODE_SHARED, 1);
	exclusive_entries(4, 10, &h);
	sim_check_net_request(&ck, 500, 0, "a", DM_MODE_EXCLUSIVE, 7);	/* asked again */
	exclusive_entries(4, 510, &h);				/* 8 since the first */
	ck_assert_int_eq(sim_check_grant(&ck, 1000, 0, 1, 1000, 0), 0);
	ck_assert_int_eq(ck.violation, SIM_OK);
}
END_TEST

START_TEST(bound_resend_is_the_same_request)
{
	uint64_t h = 100;

	ck.bound_nodes = 3;
	sim_check_request(&ck, 0, 0, 1, "a", DM_MODE_EXCLUSIVE);
	sim_check_net_request(&ck, 0, 0, "a", DM_MODE_EXCLUSIVE, 7);
	exclusive_entries(4, 10, &h);
	sim_check_net_request(&ck, 500, 0, "a", DM_MODE_EXCLUSIVE, 7);	/* a probe's resend */
	exclusive_entries(1, 510, &h);
	ck_assert_int_eq(sim_check_grant(&ck, 1000, 0, 1, 1000, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_BOUND);
}
END_TEST

START_TEST(protocol_catches_grant_without_request)
{
	ck_assert_int_eq(sim_check_grant(&ck, 1, 0, 42, 1, 0), -1);
	ck_assert_int_eq(ck.violation, SIM_V_PROTOCOL);
}
END_TEST

START_TEST(messages_per_entry)
{
	ck_assert_int_eq(sim_check_messages(&ck, 40, 5, 5, 2), 0);
	ck_assert_int_eq(sim_check_messages(&ck, 41, 5, 5, 2), -1);
	ck_assert_int_eq(ck.violation, SIM_V_MESSAGES);
}
END_TEST

START_TEST(heap_orders_by_time_then_insertion)
{
	struct sim_heap h;
	struct sim_event ev = { 0 }, out;
	struct sim_rng rng;
	sim_time_t last_at = 0;
	uint64_t last_order = 0;

	sim_heap_init(&h);
	sim_rng_seed(&rng, 7);
	for (int i = 0; i < 1000; i++) {
		ev.at = sim_rng_below(&rng, 50);
		ck_assert_int_eq(sim_heap_push(&h, &ev), 0);
	}
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(sim_heap_pop(&h, &out), 0);
		ck_assert(out.at > last_at || (out.at == last_at && (i == 0 || out.order > last_order)));
		last_at = out.at;
		last_order = out.order;
	}
	ck_assert_int_eq(sim_heap_pop(&h, &out), -ENOENT);
	sim_heap_fini(&h);
}
END_TEST

/* The heap against a plain list under the simulator's use: pushes, pops,
 * and the tracked engine timers (one per "node") dropped or replaced in
 * place.  Every pop must be the list's earliest (time, insertion) event,
 * with its payload, and every tracker must hold its event's heap index. */
START_TEST(heap_matches_a_list_with_trackers)
{
	enum { TRACKERS = 8, MAXQ = 4096 };
	struct sim_heap h;
	struct sim_rng rng;
	struct { sim_time_t at; uint64_t seq; int tracker; } list[MAXQ];
	size_t n = 0, pos[TRACKERS];
	uint64_t seq = 0;
	sim_time_t now = 0;

	sim_heap_init(&h);
	sim_rng_seed(&rng, 11);
	for (int t = 0; t < TRACKERS; t++)
		pos[t] = SIZE_MAX;
	for (int step = 0; step < 200000; step++) {
		unsigned op = (unsigned)sim_rng_below(&rng, 10);
		int t = (int)sim_rng_below(&rng, TRACKERS);
		struct sim_event ev = { .at = now + sim_rng_below(&rng, 40), .a = ++seq };

		if (op < 3 && n < MAXQ) {		/* push, untracked */
			ck_assert_int_eq(sim_heap_push(&h, &ev), 0);
			list[n].at = ev.at, list[n].seq = ev.a, list[n].tracker = -1, n++;
		} else if (op >= 3 && op < 5) {		/* (re)arm tracker t */
			size_t k;
			ev.track = &pos[t];
			for (k = 0; k < n && list[k].tracker != t; k++)
				;
			if (pos[t] != SIZE_MAX) {
				/* Replaced: the old one goes, the new one is the
				 * latest inserted. */
				ck_assert_uint_lt(k, n);
				sim_heap_replace(&h, pos[t], &ev);
				memmove(&list[k], &list[k + 1], (n - k - 1) * sizeof(list[0]));
				list[n - 1].at = ev.at, list[n - 1].seq = ev.a, list[n - 1].tracker = t;
			} else if (n < MAXQ) {
				ck_assert_int_eq(sim_heap_push(&h, &ev), 0);
				list[n].at = ev.at, list[n].seq = ev.a, list[n].tracker = t, n++;
				ck_assert_uint_ne(pos[t], SIZE_MAX);	/* the tracker knows where */
			}
		} else if (op == 5 && pos[t] != SIZE_MAX) {	/* drop tracker t */
			size_t k;
			for (k = 0; k < n && list[k].tracker != t; k++)
				;
			ck_assert_uint_lt(k, n);
			sim_heap_remove(&h, pos[t]);
			ck_assert_uint_eq(pos[t], SIZE_MAX);
			memmove(&list[k], &list[k + 1], (n - k - 1) * sizeof(list[0]));
			n--;
		} else if (n > 0) {			/* pop */
			struct sim_event out;
			size_t best = 0;
			for (size_t k = 1; k < n; k++)
				if (list[k].at < list[best].at)
					best = k;	/* ties: the earlier inserted (list order) */
			ck_assert_int_eq(sim_heap_pop(&h, &out), 0);
			ck_assert_uint_eq(out.at, list[best].at);
			ck_assert_uint_eq(out.a, list[best].seq);
			if (list[best].tracker >= 0)
				ck_assert_uint_eq(pos[list[best].tracker], SIZE_MAX);
			now = out.at;
			memmove(&list[best], &list[best + 1], (n - best - 1) * sizeof(list[0]));
			n--;
		}
		ck_assert_uint_eq(h.n, n);
		for (int u = 0; u < TRACKERS; u++)
			if (pos[u] != SIZE_MAX) {
				ck_assert_uint_lt(pos[u], n);
				ck_assert_ptr_eq(h.ev[h.key[pos[u]].slot & 0x7fffffffu].track, &pos[u]);
			}
	}
	sim_heap_fini(&h);
}
END_TEST

START_TEST(rng_is_reproducible_and_bounded)
{
	struct sim_rng a, b;

	sim_rng_seed(&a, 12345);
	sim_rng_seed(&b, 12345);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = sim_rng_range(&a, 3, 9);

		ck_assert_uint_eq(x, sim_rng_range(&b, 3, 9));
		ck_assert(x >= 3 && x <= 9);
	}
	sim_rng_seed(&b, 12346);
	ck_assert_uint_ne(sim_rng_next(&a), sim_rng_next(&b));
}
END_TEST

static Suite *
checker_suite(void)
{
	Suite *s = suite_create("sim_checker");
	TCase *tc = tcase_create("oracle");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, exclusion_accepts_serial_history);
	tcase_add_test(tc, exclusion_catches_two_exclusive_holders);
	tcase_add_test(tc, exclusion_catches_shared_with_exclusive);
	tcase_add_test(tc, exclusion_allows_readers_and_other_names);
	tcase_add_test(tc, exclusion_honours_expiry);
	tcase_add_test(tc, exclusion_extension_keeps_holder);
	tcase_add_test(tc, exclusion_late_extension_does_not_revive);
	tcase_add_test(tc, token_catches_stale_exclusive);
	tcase_add_test(tc, token_shared_must_exceed_exclusive_only);
	tcase_add_test(tc, liveness_after_heal);
	tcase_add_test(tc, liveness_resolved_requests_are_fine);
	tcase_add_test(tc, bound_accepts_2n_minus_2);
	tcase_add_test(tc, bound_catches_more);
	tcase_add_test(tc, local_handoff_is_one_entry);
	tcase_add_test(tc, bound_ignores_readers_passing_a_reader);
	tcase_add_test(tc, bound_counts_writers_passing_a_reader);
	tcase_add_test(tc, bound_counts_readers_passing_a_writer);
	tcase_add_test(tc, bound_counts_handoffs_after_request_arrived);
	tcase_add_test(tc, bound_counts_from_a_new_request);
	tcase_add_test(tc, bound_resend_is_the_same_request);
	tcase_add_test(tc, protocol_catches_grant_without_request);
	tcase_add_test(tc, messages_per_entry);
	suite_add_tcase(s, tc);

	tc = tcase_create("parts");
	tcase_add_test(tc, heap_orders_by_time_then_insertion);
	tcase_add_test(tc, heap_matches_a_list_with_trackers);
	tcase_add_test(tc, rng_is_reproducible_and_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(checker_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
