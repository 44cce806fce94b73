/*
 * check_quorum.c: Maekawa request sets (dm_quorum.c).  For EVERY n from 1
 * to 300: pairwise non-empty intersection (property (a)), i in S_i ((b)),
 * members in range, sorted and distinct; for the projective-plane sizes
 * n = q^2+q+1 (q a prime power): every |S_i| = q+1 and every node in
 * exactly q+1 sets ((c), (d)); and K stays close to sqrt(n) everywhere.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dm_quorum.h"

static bool
intersects(const uint16_t *a, size_t na, const uint16_t *b, size_t nb)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb) {
		if (a[i] == b[j])
			return true;
		if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return false;
}

static void
check_n(unsigned n)
{
	struct dm_quorum *q = NULL;
	size_t ci, cj, kmax = 0;

	ck_assert_int_eq(dm_quorum_build(n, &q), 0);
	ck_assert_uint_eq(dm_quorum_n(q), n);
	for (unsigned i = 0; i < n; i++) {
		const uint16_t *si = dm_quorum_set(q, i, &ci);
		bool self = false;
		ck_assert_uint_gt(ci, 0);
		for (size_t k = 0; k < ci; k++) {
			ck_assert_uint_lt(si[k], n);
			if (k > 0)
				ck_assert_uint_lt(si[k - 1], si[k]);
			self |= si[k] == i;
		}
		ck_assert_msg(self, "n=%u: %u not in its own set", n, i);
		if (ci > kmax)
			kmax = ci;
		for (unsigned j = i + 1; j < n; j++) {
			const uint16_t *sj = dm_quorum_set(q, j, &cj);
			ck_assert_msg(intersects(si, ci, sj, cj), "n=%u: S_%u and S_%u are disjoint",
			    n, i, j);
		}
	}
	/* Close to the optimum K ~ sqrt(n): never worse than the grid. */
	ck_assert_msg(kmax <= 2 * (size_t)ceil(sqrt((double)n)), "n=%u: K=%zu", n, kmax);
	dm_quorum_free(q);
}

START_TEST(every_n_1_to_300)
{
	for (unsigned n = 1; n <= DM_QUORUM_N_MAX; n++)
		check_n(n);
}
END_TEST

START_TEST(projective_planes_are_exact)
{
	static const unsigned orders[] = { 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17 };

	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		unsigned k = orders[o] + 1, n = k * (k - 1) + 1;
		unsigned *load = calloc(n, sizeof(*load));
		struct dm_quorum *q = NULL;
		size_t c;

		ck_assert_ptr_nonnull(load);
		ck_assert_int_eq(dm_quorum_build(n, &q), 0);
		ck_assert_uint_eq(dm_quorum_order(q), orders[o]);
		for (unsigned i = 0; i < n; i++) {
			const uint16_t *s = dm_quorum_set(q, i, &c);
			ck_assert_msg(c == k, "n=%u: |S_%u| = %zu, want K = %u", n, i, c, k);
			for (size_t m = 0; m < c; m++)
				load[s[m]]++;
		}
		for (unsigned i = 0; i < n; i++)
			ck_assert_msg(load[i] == k, "n=%u: node %u in %u sets, want D = %u", n, i,
			    load[i], k);
		/* In a plane two lines meet in exactly one point. */
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; j < n; j++) {
				size_t a, b, common = 0;
				const uint16_t *x = dm_quorum_set(q, i, &a), *y = dm_quorum_set(q, j, &b);
				for (size_t u = 0; u < a; u++)
					for (size_t v = 0; v < b; v++)
						common += x[u] == y[v];
				ck_assert_uint_eq(common, 1);
			}
		dm_quorum_free(q);
		free(load);
	}
}
END_TEST

START_TEST(paper_sizes)
{
	/* The paper's Figure 1: K = 3 for N = 7, K = 4 for 13, K = 5 for 21. */
	static const unsigned n[] = { 7, 13, 21 }, k[] = { 3, 4, 5 };

	for (size_t t = 0; t < 3; t++) {
		struct dm_quorum *q = NULL;
		size_t c;
		ck_assert_int_eq(dm_quorum_build(n[t], &q), 0);
		dm_quorum_set(q, 0, &c);
		ck_assert_uint_eq(c, k[t]);
		dm_quorum_free(q);
	}
}
END_TEST

START_TEST(bad_sizes_refused)
{
	struct dm_quorum *q = NULL;

	ck_assert_int_eq(dm_quorum_build(0, &q), -EINVAL);
	ck_assert_int_eq(dm_quorum_build(DM_QUORUM_N_MAX + 1, &q), -EINVAL);
	ck_assert_ptr_null(q);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("quorum");
	TCase *tc = tcase_create("sets");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_n_1_to_300);
	tcase_add_test(tc, projective_planes_are_exact);
	tcase_add_test(tc, paper_sizes);
	tcase_add_test(tc, bad_sizes_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
