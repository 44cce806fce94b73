/*
 * check_state_file.c: the state directory and its epoch floor file
 * (dmlockd/state_file.c): the parser's accepted and refused forms, a
 * stored floor read back after "restart", the directory created when
 * missing, one daemon per directory (flock), and a file that is not a
 * floor refused rather than guessed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmlockd/state_file.h"

static char base[64];

static void
setup(void)
{
	snprintf(base, sizeof(base), "/tmp/dmlock-state-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void
teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/s/" STATE_FLOOR_FILE, base);
	unlink(path);
	snprintf(path, sizeof(path), "%s/s", base);
	rmdir(path);
	rmdir(base);
}

START_TEST(parse_forms)
{
	uint64_t v = 99;

	ck_assert_int_eq(state_floor_parse("0\n", 2, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(state_floor_parse("8388607\n", 8, &v), 0);
	ck_assert_uint_eq(v, 8388607);
	ck_assert_int_eq(state_floor_parse("7", 1, &v), -EBADMSG);		/* no newline */
	ck_assert_int_eq(state_floor_parse("\n", 1, &v), -EBADMSG);		/* no digits */
	ck_assert_int_eq(state_floor_parse(" 7\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("7\n\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("-1\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("99999999999999999999\n", 21, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("", 0, &v), -EBADMSG);
}
END_TEST

START_TEST(store_then_load)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, &sd, &floor), 0);	/* created */
	ck_assert_uint_eq(floor, 0);					/* nothing stored */
	ck_assert_int_eq(state_dir_store_floor(&sd, 5), 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 12), 0);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 12);
	state_dir_close(&sd);
}
END_TEST

START_TEST(one_daemon_per_directory)
{
	struct state_dir a, b;
	uint64_t floor;
	char path[128];

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, &a, &floor), 0);
	ck_assert_int_eq(state_dir_open(path, &b, &floor), -EBUSY);
	state_dir_close(&a);
	ck_assert_int_eq(state_dir_open(path, &b, &floor), 0);	/* free again */
	state_dir_close(&b);
}
END_TEST

START_TEST(corrupt_floor_is_refused)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128], file[160];
	int fd;

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, &sd, &floor), 0);
	state_dir_close(&sd);
	snprintf(file, sizeof(file), "%s/" STATE_FLOOR_FILE, path);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1x\n", 3), 3);
	close(fd);
	ck_assert_int_eq(state_dir_open(path, &sd, &floor), -EBADMSG);
	ck_assert_int_eq(sd.fd, -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("state_file");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parse_forms);
	tcase_add_test(tc, store_then_load);
	tcase_add_test(tc, one_daemon_per_directory);
	tcase_add_test(tc, corrupt_floor_is_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
