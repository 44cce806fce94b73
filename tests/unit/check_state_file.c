/*
 * check_state_file.c: the state directory and its epoch floor file
 * (dmlockd/state_file.c): the parser's accepted and refused forms, a
 * stored floor read back after "restart", the directory created when
 * missing (with its missing parents, 0700 for the XDG default), one
 * daemon per directory (flock), a file that is not a floor refused
 * rather than guessed, and a floor stored by a process out of descriptors.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dmlockd/state_file.h"

static char base[64];

static void
setup(void)
{
	snprintf(base, sizeof(base), "/tmp/dmlock-state-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static int
remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void
teardown(void)
{
	nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static mode_t
mode_of(const char *fmt, const char *arg)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), fmt, base, arg);
	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(S_ISDIR(st.st_mode), "%s is not a directory", path);
	return st.st_mode & 07777;
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
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);	/* created */
	ck_assert_uint_eq(floor, 0);					/* nothing stored */
	ck_assert_int_eq(state_dir_store_floor(&sd, 5), 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 12), 0);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
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
	ck_assert_int_eq(state_dir_open(path, 0755, &a, &floor), 0);
	ck_assert_int_eq(state_dir_open(path, 0755, &b, &floor), -EBUSY);
	state_dir_close(&a);
	ck_assert_int_eq(state_dir_open(path, 0755, &b, &floor), 0);	/* free again */
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
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	state_dir_close(&sd);
	snprintf(file, sizeof(file), "%s/" STATE_FLOOR_FILE, path);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1x\n", 3), 3);
	close(fd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), -EBADMSG);
	ck_assert_int_eq(sd.fd, -1);
}
END_TEST

/* A fresh account: no ~/.local/state.  The default state directory is
 * made with every missing parent, the parents 0700 (XDG), the directory
 * itself 0750; existing directories keep their modes. */
START_TEST(missing_parents_created)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[192];
	mode_t old = umask(022);

	snprintf(path, sizeof(path), "%s/home/.local/state/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 7), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "home"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local/state"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local/state/dmlock"), 0750);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 7);
	state_dir_close(&sd);

	/* ~/.local exists (0755): only state/ and dmlock/ are made; a trailing
	 * slash is fine. */
	snprintf(path, sizeof(path), "%s/h2/.local", base);
	ck_assert_int_eq(mkdir(path, 0755), -1);	/* h2 is missing */
	snprintf(path, sizeof(path), "%s/h2", base);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/h2/.local", base);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/h2/.local/state/dmlock/", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local"), 0755);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local/state"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local/state/dmlock"), 0750);

	/* Other paths: parents with the mode the caller asks. */
	snprintf(path, sizeof(path), "%s/srv/a/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "srv"), 0755);
	ck_assert_uint_eq(mode_of("%s/%s", "srv/a"), 0755);
	umask(old);
}
END_TEST

/* A parent that is a file: refused with the errno, nothing made past it. */
START_TEST(parent_not_a_directory)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[192];
	int fd;

	snprintf(path, sizeof(path), "%s/file", base);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/file/x/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), -ENOTDIR);
	ck_assert_int_eq(sd.fd, -1);
}
END_TEST

/* A daemon out of descriptors (local clients, peer links: EMFILE) still
 * stores its floor, with the spare descriptor the directory keeps; the
 * daemon used to exit then.  And the spare is back for the next time. */
START_TEST(store_floor_out_of_descriptors)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];
	struct rlimit rl = { 64, 64 };
	int fds[64], n = 0, fd;

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_int_ge(sd.spare_fd, 0);
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		ck_assert_int_lt(n, 64);
		fds[n++] = fd;
	}
	ck_assert_int_eq(errno, EMFILE);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(state_dir_store_floor(&sd, 41 + (uint64_t)round), 0);
		ck_assert_int_ge(sd.spare_fd, 0);
		ck_assert_int_lt(open("/dev/null", O_RDONLY), 0);	/* still exhausted */
	}
	while (n > 0)
		close(fds[--n]);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 42);
	state_dir_close(&sd);
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
	tcase_add_test(tc, missing_parents_created);
	tcase_add_test(tc, parent_not_a_directory);
	tcase_add_test(tc, store_floor_out_of_descriptors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
