/*
 * check_types.c: lock and node name validation (dm_types.c), the rules
 * every name from a client, a peer or the config goes through.
 */
#include <check.h>
#include <string.h>

#include "dm_types.h"

START_TEST(test_lock_names)
{
	char big[DM_LOCK_NAME_MAX + 2];

	ck_assert(dm_lock_name_valid("db", 2));
	ck_assert(dm_lock_name_valid("orders/rebalance", 16));
	ck_assert(dm_lock_name_valid("!~", 2));
	ck_assert(!dm_lock_name_valid("", 0));
	ck_assert(!dm_lock_name_valid(NULL, 3));
	ck_assert(!dm_lock_name_valid("a b", 3));
	ck_assert(!dm_lock_name_valid("a\nb", 3));
	ck_assert(!dm_lock_name_valid("a\x7f", 2));
	ck_assert(!dm_lock_name_valid("\xc3\xa9", 2));
	ck_assert(!dm_lock_name_valid("a\0b", 3));
	memset(big, 'x', sizeof(big));
	ck_assert(dm_lock_name_valid(big, DM_LOCK_NAME_MAX));
	ck_assert(!dm_lock_name_valid(big, DM_LOCK_NAME_MAX + 1));
}
END_TEST

START_TEST(test_node_names)
{
	char big[DM_NODE_NAME_MAX + 2];

	ck_assert(dm_node_name_valid("node1", 5));
	ck_assert(dm_node_name_valid("db-01.example_x", 15));
	ck_assert(dm_node_name_valid("9", 1));
	ck_assert(!dm_node_name_valid("-node", 5));
	ck_assert(!dm_node_name_valid(".node", 5));
	ck_assert(!dm_node_name_valid("no/de", 5));
	ck_assert(!dm_node_name_valid("no de", 5));
	ck_assert(!dm_node_name_valid("", 0));
	ck_assert(!dm_node_name_valid(NULL, 1));
	memset(big, 'n', sizeof(big));
	ck_assert(dm_node_name_valid(big, DM_NODE_NAME_MAX));
	ck_assert(!dm_node_name_valid(big, DM_NODE_NAME_MAX + 1));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("types");
	TCase *tc = tcase_create("names");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_lock_names);
	tcase_add_test(tc, test_node_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
