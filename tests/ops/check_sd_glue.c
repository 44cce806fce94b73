/*
 * check_sd_glue.c: unit tests of dmlockd/sd_glue.c against a fake service
 * manager built from the environment variables systemd sets: LISTEN_PID/
 * LISTEN_FDS/LISTEN_FDNAMES with real sockets at fd 3.., NOTIFY_SOCKET
 * bound to a datagram socket we read back, WATCHDOG_USEC/WATCHDOG_PID, and
 * JOURNAL_STREAM.  Without libsystemd it checks the no-op fallbacks.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "dmlockd/sd_glue.h"

#ifdef HAVE_SYSTEMD

static char scratch[64];

static void
scratch_setup(void)
{
	strcpy(scratch, "/tmp/check_sd_glue.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	unsetenv("JOURNAL_STREAM");
}

static void
scratch_teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	ck_assert_int_eq(system(cmd), 0);
}

static void
unix_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", scratch, name);
}

/*
 * Socket activation puts fds at 3, 4, ... where Check keeps its own
 * messaging file, so those cases run in a forked child that reports
 * through its exit status (CHILD_EXPECT prints the failed condition).
 */
#define CHILD_EXPECT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
		return 1; \
	} \
} while (0)

static void
run_in_child(int (*fn)(void))
{
	int status;
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child check failed (see stderr)");
}

/* Move fd to exactly `target`; 0 or -1. */
static int
place_fd(int fd, int target)
{
	if (fd < 0)
		return -1;
	if (fd == target)
		return 0;
	if (dup2(fd, target) != target)
		return -1;
	close(fd);
	return 0;
}

/* A socket of the given type bound to scratch/name, listening if a stream,
 * placed at fd `target`; 0 or -1. */
static int
socket_at(int type, const char *name, int target)
{
	struct sockaddr_un sa;
	unix_addr(&sa, name);
	int fd = socket(AF_UNIX, type, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4) < 0))
		return -1;
	return place_fd(fd, target);
}

static void
set_listen_env(int n, const char *names)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	setenv("LISTEN_PID", buf, 1);
	snprintf(buf, sizeof(buf), "%d", n);
	setenv("LISTEN_FDS", buf, 1);
	if (names != NULL)
		setenv("LISTEN_FDNAMES", names, 1);
}

static bool
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

START_TEST(listen_fd_none_passed)
{
	ck_assert_int_eq(dmd_sd_listen_fd(), -ENOENT);
}
END_TEST

static int
picks_named_local_socket(void)
{
	/* fd 3: a listening Unix socket named "other"; fd 4: "local". */
	CHILD_EXPECT(socket_at(SOCK_STREAM, "a.sock", 3) == 0);
	CHILD_EXPECT(socket_at(SOCK_STREAM, "b.sock", 4) == 0);
	set_listen_env(2, "other:local");
	CHILD_EXPECT(dmd_sd_listen_fd() == 4);
	CHILD_EXPECT(fd_open(4));
	CHILD_EXPECT(!fd_open(3));	/* the unused one was closed */
	CHILD_EXPECT(getenv("LISTEN_FDS") == NULL);	/* not passed on to children */
	CHILD_EXPECT((fcntl(4, F_GETFD) & FD_CLOEXEC) != 0);
	return 0;
}

START_TEST(listen_fd_picks_named_local_socket)
{
	run_in_child(picks_named_local_socket);
}
END_TEST

static int
falls_back_to_first_unix_listener(void)
{
	/* fd 3: a datagram socket (not ours); fd 4: an unnamed listener. */
	CHILD_EXPECT(socket_at(SOCK_DGRAM, "d.sock", 3) == 0);
	CHILD_EXPECT(socket_at(SOCK_STREAM, "s.sock", 4) == 0);
	set_listen_env(2, NULL);
	CHILD_EXPECT(dmd_sd_listen_fd() == 4);
	CHILD_EXPECT(!fd_open(3));
	return 0;
}

START_TEST(listen_fd_falls_back_to_first_unix_listener)
{
	run_in_child(falls_back_to_first_unix_listener);
}
END_TEST

static int
rejects_when_no_unix_listener(void)
{
	CHILD_EXPECT(socket_at(SOCK_DGRAM, "d.sock", 3) == 0);
	set_listen_env(1, "local");
	CHILD_EXPECT(dmd_sd_listen_fd() == -ENOENT);
	CHILD_EXPECT(!fd_open(3));
	return 0;
}

START_TEST(listen_fd_rejects_when_no_unix_listener)
{
	run_in_child(rejects_when_no_unix_listener);
}
END_TEST

static int
ignores_other_pid(void)
{
	CHILD_EXPECT(socket_at(SOCK_STREAM, "s.sock", 3) == 0);
	set_listen_env(1, "local");
	setenv("LISTEN_PID", "1", 1);	/* meant for someone else */
	CHILD_EXPECT(dmd_sd_listen_fd() == -ENOENT);
	CHILD_EXPECT(fd_open(3));
	return 0;
}

START_TEST(listen_fd_ignores_other_pid)
{
	run_in_child(ignores_other_pid);
}
END_TEST

/* Bind a fake NOTIFY_SOCKET; returns the receiving fd. */
static int
notify_receiver(void)
{
	struct sockaddr_un sa;
	unix_addr(&sa, "notify");
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	return fd;
}

static void
expect_datagram(int fd, const char *want_prefix)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	ck_assert_msg(n > 0, "no datagram, wanted \"%s\"", want_prefix);
	buf[n] = '\0';
	ck_assert_msg(strncmp(buf, want_prefix, strlen(want_prefix)) == 0,
	    "got \"%s\", wanted \"%s...\"", buf, want_prefix);
}

START_TEST(notify_messages)
{
	int fd = notify_receiver();

	dmd_sd_notify_ready("standalone, 0 locks held");
	expect_datagram(fd, "READY=1\nSTATUS=standalone, 0 locks held");
	dmd_sd_notify_ready(NULL);
	expect_datagram(fd, "READY=1");
	dmd_sd_notify_status("roster %d nodes, %d locks held", 3, 2);
	expect_datagram(fd, "STATUS=roster 3 nodes, 2 locks held");
	dmd_sd_notify_reloading();
	expect_datagram(fd, "RELOADING=1\n");
	dmd_sd_notify_stopping();
	expect_datagram(fd, "STOPPING=1");
	dmd_sd_watchdog_ping();
	expect_datagram(fd, "WATCHDOG=1");
	close(fd);
}
END_TEST

START_TEST(watchdog_interval_is_half)
{
	char pid[32];
	uint64_t usec = 7;

	ck_assert_int_eq(dmd_sd_watchdog_interval(&usec), 0);
	ck_assert_uint_eq(usec, 7);	/* untouched when disabled */

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_USEC", "30000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_int_eq(dmd_sd_watchdog_interval(&usec), 1);
	ck_assert_uint_eq(usec, 15000000);

	setenv("WATCHDOG_PID", "1", 1);	/* another process's watchdog */
	usec = 7;
	ck_assert_int_eq(dmd_sd_watchdog_interval(&usec), 0);
	ck_assert_uint_eq(usec, 7);
}
END_TEST

static void
stop_loop(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

START_TEST(watchdog_timer_pings_from_loop)
{
	char pid[32];
	int fd = notify_receiver();
	struct event_base *base = event_base_new();
	ck_assert_ptr_nonnull(base);

	ck_assert_int_eq(dmd_sd_watchdog_start(base), 0);	/* no watchdog set */

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_USEC", "40000", 1);	/* ping every 20 ms */
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_int_eq(dmd_sd_watchdog_start(base), 1);
	expect_datagram(fd, "WATCHDOG=1");	/* the immediate ping */

	/* Run the loop until 3 periodic pings are readable (bounded). */
	struct event *rd = event_new(base, fd, EV_READ | EV_PERSIST, stop_loop, base);
	ck_assert_ptr_nonnull(rd);
	ck_assert_int_eq(event_add(rd, NULL), 0);
	for (int pings = 0; pings < 3; pings++) {
		struct timeval limit = { .tv_sec = 5 };
		ck_assert_int_eq(event_base_loopexit(base, &limit), 0);
		ck_assert_int_eq(event_base_dispatch(base), 0);
		ck_assert_msg(event_base_got_break(base), "no watchdog ping within 5 s");
		expect_datagram(fd, "WATCHDOG=1");
	}
	event_free(rd);
	dmd_sd_watchdog_stop();
	dmd_sd_watchdog_stop();	/* idempotent */
	event_base_free(base);
	close(fd);
}
END_TEST

START_TEST(journal_stream_detection)
{
	struct stat st;
	char buf[64];
	int fd = open(scratch, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);

	ck_assert(!dmd_sd_stderr_is_journal());	/* unset */
	snprintf(buf, sizeof(buf), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", buf, 1);
	bool matched = dmd_sd_stderr_is_journal();
	snprintf(buf, sizeof(buf), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", buf, 1);
	bool other_inode = dmd_sd_stderr_is_journal();
	setenv("JOURNAL_STREAM", "garbage", 1);
	bool garbage = dmd_sd_stderr_is_journal();

	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fd);
	ck_assert(matched);
	ck_assert(!other_inode);
	ck_assert(!garbage);
}
END_TEST

static Suite *
sd_glue_suite(void)
{
	Suite *s = suite_create("sd_glue");
	TCase *tc = tcase_create("systemd");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, listen_fd_none_passed);
	tcase_add_test(tc, listen_fd_picks_named_local_socket);
	tcase_add_test(tc, listen_fd_falls_back_to_first_unix_listener);
	tcase_add_test(tc, listen_fd_rejects_when_no_unix_listener);
	tcase_add_test(tc, listen_fd_ignores_other_pid);
	tcase_add_test(tc, notify_messages);
	tcase_add_test(tc, watchdog_interval_is_half);
	tcase_add_test(tc, watchdog_timer_pings_from_loop);
	tcase_add_test(tc, journal_stream_detection);
	suite_add_tcase(s, tc);
	return s;
}

#else /* !HAVE_SYSTEMD */

START_TEST(fallbacks_are_noops)
{
	uint64_t usec = 7;
	setenv("LISTEN_PID", "1", 1);
	ck_assert_int_eq(dmd_sd_listen_fd(), -ENOENT);
	ck_assert_int_eq(dmd_sd_watchdog_interval(&usec), 0);
	ck_assert_uint_eq(usec, 7);
	ck_assert(!dmd_sd_stderr_is_journal());
	struct event_base *base = event_base_new();
	ck_assert_int_eq(dmd_sd_watchdog_start(base), 0);
	dmd_sd_watchdog_stop();
	event_base_free(base);
	dmd_sd_notify_ready("x");
	dmd_sd_notify_status("%d", 1);
	dmd_sd_notify_reloading();
	dmd_sd_notify_stopping();
	dmd_sd_watchdog_ping();
}
END_TEST

static Suite *
sd_glue_suite(void)
{
	Suite *s = suite_create("sd_glue");
	TCase *tc = tcase_create("fallback");
	tcase_add_test(tc, fallbacks_are_noops);
	suite_add_tcase(s, tc);
	return s;
}

#endif /* HAVE_SYSTEMD */

int
main(void)
{
	SRunner *sr = srunner_create(sd_glue_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
