/*
 * check_libdmlock.c: libdmlock against a real dmlockd (started by the
 * fixture on a temporary socket, stopped by PID): blocking and
 * non-blocking acquire/release, try/timeout, shared and exclusive modes,
 * fencing tokens, release when the holder's connection or process dies,
 * status/ping, and a misbehaving client (flood, oversized line) that must
 * not disturb another client's locks.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dmlock.h"
#include "libdmlock_test_daemon.h"

static struct test_daemon daemon_under_test;

static void
daemon_setup(void)
{
	test_daemon_start(&daemon_under_test);
}

static void
daemon_teardown(void)
{
	bool clean = test_daemon_stop(&daemon_under_test);
	if (!clean) {
		fprintf(stderr, "dmlockd did not exit cleanly (status or socket left)\n");
		exit(1);
	}
}

static struct dmlock_conn *
connect_ok(void)
{
	struct dmlock_conn *c = NULL;
	int r = dmlock_connect(daemon_under_test.socket, &c);
	ck_assert_msg(r == 0, "connect: %s", dmlock_strerror(r));
	return c;
}

static struct dmlock_lock *
acquire_ok(struct dmlock_conn *c, const char *name, enum dmlock_mode mode, int64_t timeout)
{
	struct dmlock_lock *l = NULL;
	int r = dmlock_acquire(c, name, mode, timeout, &l);
	ck_assert_msg(r == 0, "acquire %s: %s", name, dmlock_strerror(r));
	ck_assert_ptr_nonnull(l);
	return l;
}

/* Drive conn until lock leaves PENDING or timeout_ms passes. */
static void
wait_not_pending(struct dmlock_conn *c, struct dmlock_lock *l, int timeout_ms)
{
	unsigned long long until = test_now_ms() + (unsigned long long)timeout_ms;
	while (dmlock_lock_state(l) == DMLOCK_STATE_PENDING && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, 100);
		ck_assert_int_eq(dmlock_process(c), 0);
	}
}

START_TEST(acquire_release)
{
	struct dmlock_conn *c = connect_ok();
	ck_assert_ptr_nonnull(dmlock_conn_node(c));
	ck_assert_str_eq(dmlock_conn_algorithm(c), "ricart-agrawala");
	struct dmlock_lock *l = acquire_ok(c, "t/basic", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	ck_assert_int_eq(dmlock_lock_state(l), DMLOCK_STATE_HELD);
	ck_assert_uint_gt(dmlock_lock_token(l), 0);
	ck_assert_str_eq(dmlock_lock_name(l), "t/basic");
	ck_assert_int_eq(dmlock_lock_mode(l), DMLOCK_EXCLUSIVE);
	ck_assert_int_eq(dmlock_lock_check(l), 0);
	ck_assert_int_eq(dmlock_release(l), 0);
	/* Released: taking it again succeeds at once. */
	l = acquire_ok(c, "t/basic", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(c);
}
END_TEST

START_TEST(try_busy_and_timeout)
{
	struct dmlock_conn *a = connect_ok(), *b = connect_ok();
	struct dmlock_lock *held = acquire_ok(a, "t/busy", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	struct dmlock_lock *l = NULL;
	ck_assert_int_eq(dmlock_acquire(b, "t/busy", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &l), -EBUSY);
	ck_assert_ptr_null(l);
	unsigned long long t0 = test_now_ms();
	ck_assert_int_eq(dmlock_acquire(b, "t/busy", DMLOCK_EXCLUSIVE, 300, &l), -ETIMEDOUT);
	unsigned long long waited = test_now_ms() - t0;
	ck_assert_msg(waited >= 250 && waited < 5000, "waited %llu ms", waited);
	ck_assert_int_eq(dmlock_lock_check(held), 0);	/* a's lock unaffected */
	ck_assert_int_eq(dmlock_release(held), 0);
	l = acquire_ok(b, "t/busy", DMLOCK_EXCLUSIVE, 300);
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(a);
	dmlock_close(b);
}
END_TEST

START_TEST(shared_and_exclusive)
{
	struct dmlock_conn *a = connect_ok(), *b = connect_ok(), *c = connect_ok();
	struct dmlock_lock *ra = acquire_ok(a, "t/rw", DMLOCK_SHARED, DMLOCK_TRY);
	struct dmlock_lock *rb = acquire_ok(b, "t/rw", DMLOCK_SHARED, DMLOCK_TRY);
	struct dmlock_lock *w = NULL;
	ck_assert_int_eq(dmlock_acquire(c, "t/rw", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &w), -EBUSY);
	ck_assert_int_eq(dmlock_release(ra), 0);
	ck_assert_int_eq(dmlock_acquire(c, "t/rw", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &w), -EBUSY);
	ck_assert_int_eq(dmlock_release(rb), 0);
	w = acquire_ok(c, "t/rw", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	/* An exclusive holder keeps readers out too. */
	struct dmlock_lock *r = NULL;
	ck_assert_int_eq(dmlock_acquire(a, "t/rw", DMLOCK_SHARED, DMLOCK_TRY, &r), -EBUSY);
	ck_assert_int_eq(dmlock_release(w), 0);
	r = acquire_ok(a, "t/rw", DMLOCK_SHARED, DMLOCK_TRY);
	ck_assert_int_eq(dmlock_release(r), 0);
	dmlock_close(a);
	dmlock_close(b);
	dmlock_close(c);
}
END_TEST

START_TEST(tokens_increase)
{
	struct dmlock_conn *a = connect_ok(), *b = connect_ok();
	uint64_t last = 0;
	for (int i = 0; i < 20; i++) {
		struct dmlock_lock *l = acquire_ok(i % 2 ? a : b, "t/token", DMLOCK_EXCLUSIVE,
		    1000);
		uint64_t t = dmlock_lock_token(l);
		ck_assert_msg(t > last, "token %llu after %llu", (unsigned long long)t,
		    (unsigned long long)last);
		last = t;
		ck_assert_int_eq(dmlock_release(l), 0);
	}
	dmlock_close(a);
	dmlock_close(b);
}
END_TEST

START_TEST(released_when_connection_closes)
{
	struct dmlock_conn *a = connect_ok(), *b = connect_ok();
	struct dmlock_lock *held = acquire_ok(a, "t/close", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	struct dmlock_lock *waiter = NULL;
	ck_assert_int_eq(dmlock_submit_acquire(b, "t/close", DMLOCK_EXCLUSIVE, DMLOCK_FOREVER,
	    NULL, NULL, &waiter), 0);
	ck_assert_int_eq(dmlock_process(b), 0);
	ck_assert_int_eq(dmlock_lock_state(waiter), DMLOCK_STATE_PENDING);
	dmlock_close(a);	/* no release: the daemon must release on close */
	ck_assert_int_eq(dmlock_lock_state(held), DMLOCK_STATE_LOST);
	ck_assert_int_eq(dmlock_release(held), -ENOLCK);
	wait_not_pending(b, waiter, 5000);
	ck_assert_int_eq(dmlock_lock_state(waiter), DMLOCK_STATE_HELD);
	ck_assert_int_eq(dmlock_release(waiter), 0);
	dmlock_close(b);
}
END_TEST

START_TEST(released_when_holder_killed)
{
	int pipefd[2];
	ck_assert_int_eq(pipe(pipefd), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct dmlock_conn *c;
		struct dmlock_lock *l;
		if (dmlock_connect(daemon_under_test.socket, &c) < 0 ||
		    dmlock_acquire(c, "t/kill", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &l) < 0)
			_exit(1);
		(void)!write(pipefd[1], "H", 1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	char ch = 0;
	struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	ck_assert_int_eq(read(pipefd[0], &ch, 1), 1);
	ck_assert_int_eq(ch, 'H');

	struct dmlock_conn *b = connect_ok();
	struct dmlock_lock *l = NULL;
	ck_assert_int_eq(dmlock_acquire(b, "t/kill", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &l), -EBUSY);
	ck_assert_int_eq(dmlock_submit_acquire(b, "t/kill", DMLOCK_EXCLUSIVE, DMLOCK_FOREVER,
	    NULL, NULL, &l), 0);
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	wait_not_pending(b, l, 5000);
	ck_assert_int_eq(dmlock_lock_state(l), DMLOCK_STATE_HELD);
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(b);
	close(pipefd[0]);
}
END_TEST

struct cb_log {
	int granted, denied, released;
	int last_error;
};

static void
record(struct dmlock_lock *lock, enum dmlock_event ev, int error, void *userdata)
{
	struct cb_log *log = userdata;
	ck_assert_ptr_eq(dmlock_lock_userdata(lock), userdata);
	if (ev == DMLOCK_EVENT_GRANTED)
		log->granted++;
	else if (ev == DMLOCK_EVENT_DENIED)
		log->denied++;
	else if (ev == DMLOCK_EVENT_RELEASED)
		log->released++;
	log->last_error = error;
}

START_TEST(nonblocking_callbacks)
{
	struct dmlock_conn *c = connect_ok();
	struct cb_log log = { 0 };
	struct dmlock_lock *one, *two;
	ck_assert_int_eq(dmlock_submit_acquire(c, "t/nb", DMLOCK_EXCLUSIVE, DMLOCK_TRY, record,
	    &log, &one), 0);
	ck_assert_int_eq(dmlock_submit_acquire(c, "t/nb", DMLOCK_EXCLUSIVE, DMLOCK_TRY, record,
	    &log, &two), 0);
	unsigned long long until = test_now_ms() + 5000;
	while (log.granted + log.denied < 2 && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, dmlock_timeout(c) < 0 ? 100 : dmlock_timeout(c));
		ck_assert_int_eq(dmlock_process(c), 0);
	}
	ck_assert_int_eq(log.granted, 1);
	ck_assert_int_eq(log.denied, 1);
	ck_assert_int_eq(log.last_error, -EBUSY);
	ck_assert_int_eq(dmlock_lock_state(one), DMLOCK_STATE_HELD);
	ck_assert_int_eq(dmlock_lock_state(two), DMLOCK_STATE_DENIED);
	ck_assert_int_eq(dmlock_lock_error(two), -EBUSY);
	ck_assert_int_eq(dmlock_submit_release(one), 0);
	ck_assert_int_eq(dmlock_submit_release(two), -ENOLCK);
	until = test_now_ms() + 5000;
	while (log.released < 1 && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, 100);
		ck_assert_int_eq(dmlock_process(c), 0);
	}
	ck_assert_int_eq(dmlock_lock_state(one), DMLOCK_STATE_RELEASED);
	dmlock_lock_free(one);
	dmlock_lock_free(two);
	dmlock_close(c);
}
END_TEST

START_TEST(status_and_ping)
{
	struct dmlock_conn *c = connect_ok();
	struct dmlock_lock *l = acquire_ok(c, "t/status", DMLOCK_SHARED, DMLOCK_TRY);
	int64_t rtt = -1;
	ck_assert_int_eq(dmlock_ping(c, &rtt), 0);
	ck_assert_int_ge(rtt, 0);
	char *text = NULL;
	ck_assert_int_eq(dmlock_status(c, &text), 0);
	ck_assert_ptr_nonnull(text);
	char want[128];
	ck_assert_msg(strncmp(text, "NODE ", 5) == 0, "status: %s", text);
	snprintf(want, sizeof(want), "LOCK t/status sh held %llu ",
	    (unsigned long long)dmlock_lock_token(l));
	ck_assert_msg(strstr(text, want) != NULL, "no '%s' in: %s", want, text);
	snprintf(want, sizeof(want), " %ld %ld 1\n", (long)getpid(), (long)getuid());
	ck_assert_msg(strstr(text, want) != NULL, "no pid/uid '%s' in: %s", want, text);
	free(text);
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(c);
}
END_TEST

START_TEST(admin_queries)
{
	struct dmlock_conn *c = connect_ok();
	struct dmlock_lock *l = acquire_ok(c, "t/query", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	char *text = NULL, want[160];

	/* LOCKS: the lock with this node's name as the tenth field. */
	ck_assert_int_eq(dmlock_query(c, "LOCKS\n", &text), 0);
	snprintf(want, sizeof(want), "LOCK t/query ex held %llu ",
	    (unsigned long long)dmlock_lock_token(l));
	ck_assert_msg(strstr(text, want) != NULL, "no '%s' in: %s", want, text);
	snprintf(want, sizeof(want), " %s\n", dmlock_conn_node(c));
	ck_assert_msg(strstr(text, want) != NULL, "no node '%s' in: %s", want, text);
	free(text);
	/* STATUS through the same call, with the capability line. */
	ck_assert_int_eq(dmlock_query(c, "STATUS", &text), 0);
	ck_assert_msg(strstr(text, "\nCAPS ") != NULL, "no CAPS in: %s", text);
	free(text);
	/* A refusal comes back as an error with the daemon's sentence. */
	ck_assert_int_eq(dmlock_query(c, "REMOVE ghost", &text), -ENOENT);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "no node 'ghost'") != NULL, "text: %s", text);
	free(text);
	ck_assert_int_eq(dmlock_query(c, "JOIN a@127.0.0.1:9", &text), -EOPNOTSUPP);
	free(text);
	/* Not an administrative request: refused by the library, *ret NULL. */
	text = (char *)"untouched";
	ck_assert_int_eq(dmlock_query(c, "PING", &text), -EINVAL);
	ck_assert_int_eq(dmlock_query(c, "ACQUIRE 9 x ex try", &text), -EINVAL);
	ck_assert_int_eq(dmlock_query(c, "REMOVE bad name", &text), -EINVAL);
	/* The connection still works. */
	ck_assert_int_eq(dmlock_ping(c, NULL), 0);
	ck_assert_str_eq(dmlock_conn_message(c), "");
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(c);
}
END_TEST

START_TEST(denial_message)
{
	/* The test daemon runs the default algorithm: take a try-once lock
	 * twice and read the busy denial's text. */
	struct dmlock_conn *a = connect_ok(), *b = connect_ok();
	struct dmlock_lock *l = acquire_ok(a, "t/message", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	struct dmlock_lock *l2 = NULL;
	ck_assert_int_eq(dmlock_acquire(b, "t/message", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &l2), -EBUSY);
	ck_assert_ptr_null(l2);
	ck_assert_str_eq(dmlock_conn_message(b), "the lock is held");
	ck_assert_str_eq(dmlock_lock_message(l), "");
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(a);
	dmlock_close(b);
}
END_TEST

START_TEST(bad_arguments)
{
	struct dmlock_conn *c = connect_ok(), *none = NULL;
	struct dmlock_lock *l = NULL;
	ck_assert_int_eq(dmlock_acquire(c, "", DMLOCK_EXCLUSIVE, 0, &l), -EINVAL);
	ck_assert_int_eq(dmlock_acquire(c, "a b", DMLOCK_EXCLUSIVE, 0, &l), -EINVAL);
	ck_assert_int_eq(dmlock_acquire(c, "x", (enum dmlock_mode)5, 0, &l), -EINVAL);
	ck_assert_int_eq(dmlock_acquire(c, "x", DMLOCK_EXCLUSIVE, -2, &l), -EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_int_eq(dmlock_connect("/nonexistent/dmlockd.sock", &none), -ENOENT);
	ck_assert_ptr_null(none);
	ck_assert_str_eq(dmlock_strerror(-EBUSY), "lock is held by someone else");
	ck_assert_ptr_nonnull(dmlock_strerror(-12345));
	/* The connection still works after refused arguments. */
	l = acquire_ok(c, "x", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	ck_assert_int_eq(dmlock_release(l), 0);
	dmlock_close(c);
}
END_TEST

START_TEST(flood_does_not_disturb_others)
{
	struct dmlock_conn *good = connect_ok();
	struct dmlock_lock *kept = acquire_ok(good, "t/flood-kept", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	int bad = test_raw_connect(daemon_under_test.socket);
	ck_assert_int_ge(bad, 0);
	char line[256];
	ck_assert_int_gt(test_raw_read_line(bad, line, sizeof(line), 5000), 0);

	/* 10,000 bogus lines, interleaved with the good client's work. */
	static const char *const bogus[] = { "BOGUS\n", "ACQUIRE\n", "RELEASE 1/2\n",
	    "ACQUIRE 1 a b c d\n", "CANCEL nope\n", "\n", "ACQUIRE 1 x ex 05\n" };
	int sent = 0, cycles = 0;
	for (int i = 0; i < 10000; i++) {
		const char *s = bogus[i % 7];
		if (send(bad, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
			sent++;
		if (i % 500 == 0) {
			struct dmlock_lock *l = acquire_ok(good, "t/flood", DMLOCK_EXCLUSIVE, 2000);
			ck_assert_int_eq(dmlock_release(l), 0);
			cycles++;
		}
	}
	ck_assert_int_gt(sent, 0);
	ck_assert_int_eq(cycles, 20);
	/* The flooder is cut off after its error budget... */
	bool seen = false;
	ck_assert(test_raw_read_until_eof(bad, "ERROR - too-many-errors", &seen, 10000));
	ck_assert(seen);
	close(bad);
	/* ...and the good client still holds its lock and works. */
	ck_assert_int_eq(dmlock_lock_check(kept), 0);
	ck_assert_int_eq(dmlock_ping(good, NULL), 0);
	struct dmlock_conn *other = connect_ok();
	struct dmlock_lock *l = NULL;
	ck_assert_int_eq(dmlock_acquire(other, "t/flood-kept", DMLOCK_EXCLUSIVE, DMLOCK_TRY, &l),
	    -EBUSY);
	ck_assert_int_eq(dmlock_release(kept), 0);
	dmlock_close(other);
	dmlock_close(good);
}
END_TEST

START_TEST(oversized_line_disconnects_only_that_client)
{
	struct dmlock_conn *good = connect_ok();
	struct dmlock_lock *kept = acquire_ok(good, "t/big-kept", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	int bad = test_raw_connect(daemon_under_test.socket);
	ck_assert_int_ge(bad, 0);
	char line[4096];
	ck_assert_int_gt(test_raw_read_line(bad, line, sizeof(line), 5000), 0);
	/* The bad client takes a lock too: it must be released with it. */
	const char *acq = "ACQUIRE 1 t/big-bad ex try\n";
	ck_assert_int_eq(write(bad, acq, strlen(acq)), (ssize_t)strlen(acq));
	ck_assert_int_gt(test_raw_read_line(bad, line, sizeof(line), 5000), 0);
	ck_assert_msg(strncmp(line, "GRANTED 1 ", 10) == 0, "got '%s'", line);

	memset(line, 'A', 2000);
	(void)!send(bad, line, 2000, MSG_NOSIGNAL);
	bool seen = false;
	ck_assert(test_raw_read_until_eof(bad, "ERROR - too-long", &seen, 10000));
	ck_assert(seen);
	close(bad);

	ck_assert_int_eq(dmlock_lock_check(kept), 0);
	ck_assert_int_eq(dmlock_ping(good, NULL), 0);
	struct dmlock_lock *l = acquire_ok(good, "t/big-bad", DMLOCK_EXCLUSIVE, 5000);
	ck_assert_int_eq(dmlock_release(l), 0);
	ck_assert_int_eq(dmlock_release(kept), 0);
	dmlock_close(good);
}
END_TEST

START_TEST(raw_protocol_answers)
{
	int fd = test_raw_connect(daemon_under_test.socket);
	ck_assert_int_ge(fd, 0);
	char line[1024];
	ck_assert_int_gt(test_raw_read_line(fd, line, sizeof(line), 5000), 0);
	ck_assert_int_eq(strncmp(line, "DMLOCK 1 ", 9), 0);
	static const struct {
		const char *send, *expect;
	} steps[] = {
		{ "PING\n", "PONG" },
		{ "ACQUIRE a t/raw ex try\n", "GRANTED a " },
		{ "ACQUIRE a t/raw2 ex try\n", "ERROR a id-in-use " },
		{ "ACQUIRE b t/raw ex try\n", "DENIED b busy " },
		{ "ACQUIRE c t/raw ex forever\n", NULL },
		{ "RELEASE c\n", "ERROR c not-held " },
		{ "CANCEL c\n", "RELEASED c" },
		{ "RELEASE zz\n", "ERROR zz unknown-id " },
		{ "FROB\n", "ERROR - unknown-verb " },
		{ "ACQUIRE d bad\x01name ex try\n", "ERROR - syntax " },
		{ "ACQUIRE d x xx try\n", "ERROR d bad-mode " },
		{ "RELEASE a\r\n", "RELEASED a" },
		{ "ACQUIRE a t/raw sh 10\n", "GRANTED a " },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ck_assert_int_eq(write(fd, steps[i].send, strlen(steps[i].send)),
		    (ssize_t)strlen(steps[i].send));
		if (steps[i].expect == NULL)
			continue;
		ck_assert_int_ge(test_raw_read_line(fd, line, sizeof(line), 5000), 0);
		ck_assert_msg(strncmp(line, steps[i].expect, strlen(steps[i].expect)) == 0,
		    "sent %s got '%s', want '%s'", steps[i].send, line, steps[i].expect);
	}
	close(fd);
}
END_TEST

/* ---- the library's own deadline check, against a fake daemon -------- */

START_TEST(deadline_passes_without_extend)
{
	char dir[] = "/tmp/dmlock-fake-XXXXXX", path[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fake.sock", dir);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	int report[2];
	ck_assert_int_eq(pipe(report), 0);

	pid_t fake = fork();
	ck_assert_int_ge(fake, 0);
	if (fake == 0) {
		/* A daemon that grants with a deadline 300 ms ahead, then goes
		 * silent: no EXTEND.  It reports the next line it gets. */
		char buf[512], out[600];
		int fd = accept(lfd, NULL, NULL);
		(void)!write(fd, "DMLOCK 1 fake ricart-agrawala\n", 30);
		if (test_raw_read_line(fd, buf, sizeof(buf), 5000) < 0)
			_exit(1);
		int n = snprintf(out, sizeof(out), "GRANTED 1 7 %llu\n", test_now_ms() + 300);
		(void)!write(fd, out, (size_t)n);
		if (test_raw_read_line(fd, buf, sizeof(buf), 5000) < 0)
			_exit(2);
		(void)!write(report[1], buf, strlen(buf));
		_exit(0);
	}
	close(report[1]);

	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(path, &c), 0);
	struct dmlock_lock *l = acquire_ok(c, "t/deadline", DMLOCK_EXCLUSIVE, DMLOCK_TRY);
	ck_assert_uint_gt(dmlock_lock_deadline(l), 0);
	ck_assert_int_eq(dmlock_lock_check(l), 0);
	int timeout = dmlock_timeout(c);
	ck_assert_int_ge(timeout, 0);
	ck_assert_int_le(timeout, 300);
	unsigned long long until = test_now_ms() + 5000;
	while (dmlock_lock_state(l) == DMLOCK_STATE_HELD && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, dmlock_timeout(c));
		ck_assert_int_eq(dmlock_process(c), 0);
	}
	ck_assert_int_eq(dmlock_lock_state(l), DMLOCK_STATE_LOST);
	ck_assert_int_eq(dmlock_lock_error(l), -ETIMEDOUT);
	ck_assert_int_eq(dmlock_lock_check(l), -ENOLCK);
	ck_assert_uint_ge(test_now_ms() + 50, dmlock_lock_deadline(l) + 0);
	/* The library told the daemon it no longer holds the lock. */
	char buf[128] = "";
	struct pollfd p = { .fd = report[0], .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	ck_assert_int_gt(read(report[0], buf, sizeof(buf) - 1), 0);
	ck_assert_str_eq(buf, "CANCEL 1");
	ck_assert_int_eq(waitpid(fake, NULL, 0), fake);
	dmlock_lock_free(l);
	dmlock_close(c);
	close(lfd);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* ---- fake daemons: one connection, a scripted conversation -------------- */

struct fake_daemon {
	pid_t	pid;
	int	lfd;
	char	dir[32];
	char	path[64];
};

typedef void fake_script_fn(int fd, void *arg);

/* Listen on a fresh socket and fork a process that accepts one connection,
 * runs script on it and then waits (keeping the connection open) until
 * fake_daemon_stop() kills it by PID. */
static void
fake_daemon_start(struct fake_daemon *f, fake_script_fn *script, void *arg)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/dmlock-fake-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/fake.sock", f->dir);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(f->lfd, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f->lfd, 1), 0);
	f->pid = fork();
	ck_assert_int_ge(f->pid, 0);
	if (f->pid == 0) {
		int fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			_exit(1);
		script(fd, arg);
		for (;;)
			pause();
	}
}

static void
fake_daemon_stop(struct fake_daemon *f)
{
	kill(f->pid, SIGKILL);
	ck_assert_int_eq(waitpid(f->pid, NULL, 0), f->pid);
	close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
}

static void
fake_write(int fd, const char *text)
{
	(void)!write(fd, text, strlen(text));
}

/* Greet, read the ACQUIRE, stop reading (the client's next send fails with
 * EPIPE, as to a dead daemon) and grant it with a deadline arg ms ahead. */
static void
script_grant_then_deaf(int fd, void *arg)
{
	char buf[512], out[128];
	fake_write(fd, "DMLOCK 1 fake ricart-agrawala\n");
	if (test_raw_read_line(fd, buf, sizeof(buf), 5000) < 0)
		_exit(1);
	shutdown(fd, SHUT_RD);
	snprintf(out, sizeof(out), "GRANTED 1 7 %llu\n", test_now_ms() + *(unsigned *)arg);
	fake_write(fd, out);
}

/* What a callback saw; free_on_lost makes it free the lock on LOST, as
 * dmlock.h allows. */
struct cb_count {
	int	granted, lost, released, denied;
	int	lost_error;
	bool	free_on_lost;
};

static void
count_events(struct dmlock_lock *lock, enum dmlock_event ev, int error, void *userdata)
{
	struct cb_count *n = userdata;
	switch (ev) {
	case DMLOCK_EVENT_GRANTED:
		n->granted++;
		break;
	case DMLOCK_EVENT_LOST:
		n->lost++;
		n->lost_error = error;
		if (n->free_on_lost)
			dmlock_lock_free(lock);
		break;
	case DMLOCK_EVENT_RELEASED:
		n->released++;
		break;
	case DMLOCK_EVENT_DENIED:
		n->denied++;
		break;
	default:
		break;
	}
}

/* Submit an acquire with count_events and drive conn until it is granted. */
static struct dmlock_lock *
acquire_with_callback(struct dmlock_conn *c, const char *name, struct cb_count *n)
{
	struct dmlock_lock *l = NULL;
	ck_assert_int_eq(dmlock_submit_acquire(c, name, DMLOCK_EXCLUSIVE, DMLOCK_TRY, count_events, n,
	    &l), 0);
	wait_not_pending(c, l, 5000);
	ck_assert_int_eq(dmlock_lock_state(l), DMLOCK_STATE_HELD);
	ck_assert_int_eq(n->granted, 1);
	return l;
}

/* dmlock_lock_free() of a held lock whose daemon died: the CANCEL fails
 * (EPIPE) and the connection breaks.  The lock being freed must not get a
 * LOST callback: a callback that frees it (allowed) freed it twice. */
START_TEST(free_when_daemon_died_runs_no_callback)
{
	struct test_daemon d = { 0 };
	test_daemon_start(&d);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(d.socket, &c), 0);
	struct cb_count n = { .free_on_lost = true };
	struct dmlock_lock *l = acquire_with_callback(c, "t/free-dead", &n);
	ck_assert(test_daemon_stop(&d));
	dmlock_lock_free(l);
	ck_assert_int_eq(n.lost, 0);
	ck_assert_int_lt(dmlock_process(c), 0);	/* the connection is broken */
	dmlock_close(c);
}
END_TEST

/* The same for dmlock_release(): it returns the connection's error and
 * frees the lock once, without a callback. */
START_TEST(release_when_daemon_died_runs_no_callback)
{
	struct test_daemon d = { 0 };
	test_daemon_start(&d);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(d.socket, &c), 0);
	struct cb_count n = { .free_on_lost = true };
	struct dmlock_lock *l = acquire_with_callback(c, "t/release-dead", &n);
	ck_assert(test_daemon_stop(&d));
	int r = dmlock_release(l);
	ck_assert_msg(r == -EPIPE || r == -ECONNRESET, "release: %s", dmlock_strerror(r));
	ck_assert_int_eq(n.lost, 0);
	ck_assert_int_eq(n.released, 0);
	dmlock_close(c);
}
END_TEST

/* A grant deadline passes and the CANCEL that tells the daemon fails: the
 * lock is LOST once (-ETIMEDOUT), not a second time by the broken
 * connection. */
START_TEST(expired_lock_lost_once_when_cancel_fails)
{
	struct fake_daemon f;
	unsigned ahead_ms = 200;
	fake_daemon_start(&f, script_grant_then_deaf, &ahead_ms);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), 0);
	struct cb_count n = { 0 };
	struct dmlock_lock *l = acquire_with_callback(c, "t/expire", &n);
	ck_assert_uint_gt(dmlock_lock_deadline(l), 0);
	unsigned long long until = test_now_ms() + 5000;
	while (dmlock_lock_state(l) == DMLOCK_STATE_HELD && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, dmlock_timeout(c));
		(void)dmlock_process(c);
	}
	ck_assert_int_eq(dmlock_lock_state(l), DMLOCK_STATE_LOST);
	ck_assert_int_eq(n.lost, 1);
	ck_assert_int_eq(n.lost_error, -ETIMEDOUT);
	ck_assert_int_eq(dmlock_lock_error(l), -ETIMEDOUT);
	dmlock_lock_free(l);
	ck_assert_int_eq(n.lost, 1);
	dmlock_close(c);
	fake_daemon_stop(&f);
}
END_TEST

/* The same with a callback that frees the lock on LOST: nothing may touch
 * it afterwards (ASan/valgrind). */
START_TEST(expired_lock_freed_by_callback)
{
	struct fake_daemon f;
	unsigned ahead_ms = 200;
	fake_daemon_start(&f, script_grant_then_deaf, &ahead_ms);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), 0);
	struct cb_count n = { .free_on_lost = true };
	(void)acquire_with_callback(c, "t/expire-free", &n);
	unsigned long long until = test_now_ms() + 5000;
	while (n.lost == 0 && test_now_ms() < until) {
		struct pollfd p = { .fd = dmlock_fd(c), .events = dmlock_events(c) };
		poll(&p, 1, dmlock_timeout(c));
		(void)dmlock_process(c);
	}
	ck_assert_int_eq(n.lost, 1);
	ck_assert_int_eq(n.lost_error, -ETIMEDOUT);
	(void)dmlock_process(c);
	ck_assert_int_eq(n.lost, 1);
	dmlock_close(c);
	fake_daemon_stop(&f);
}
END_TEST

/* A daemon at its client limit answers the connect with an ERROR line
 * instead of the greeting, then closes. */
static void
script_refuse(int fd, void *arg)
{
	fake_write(fd, arg);
	close(fd);
}

START_TEST(connect_refused_too_many_clients)
{
	struct fake_daemon f;
	fake_daemon_start(&f, script_refuse, "ERROR - too-many-clients too many clients, try later\n");
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), -EUSERS);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(dmlock_strerror(-EUSERS), "dmlockd has too many clients (try again later)");
	fake_daemon_stop(&f);
}
END_TEST

START_TEST(connect_refused_other_error)
{
	struct fake_daemon f;
	fake_daemon_start(&f, script_refuse, "ERROR - frobnicated a reason this library does not know\n");
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), -EIO);
	ck_assert_ptr_null(c);
	fake_daemon_stop(&f);
}
END_TEST

/* Greet, read the ACQUIRE and never answer it (a frozen daemon). */
static void
script_silent(int fd, void *arg)
{
	char buf[512];
	fake_write(fd, "DMLOCK 1 fake ricart-agrawala\n");
	(void)test_raw_read_line(fd, buf, sizeof(buf), 5000);
}

/* A wait whose daemon never answers (the library gives up after the wait
 * plus its grace of 10 s) is not a wait that expired: -ETIME, not
 * -ETIMEDOUT. */
START_TEST(acquire_daemon_never_answers)
{
	struct fake_daemon f;
	fake_daemon_start(&f, script_silent, NULL);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), 0);
	struct dmlock_lock *l = NULL;
	unsigned long long t0 = test_now_ms();
	ck_assert_int_eq(dmlock_acquire(c, "t/silent", DMLOCK_EXCLUSIVE, 100, &l), -ETIME);
	ck_assert_ptr_null(l);
	ck_assert_uint_ge(test_now_ms() - t0, 10000);
	ck_assert_str_eq(dmlock_strerror(-ETIME), "dmlockd did not answer in time");
	dmlock_close(c);
	fake_daemon_stop(&f);
}
END_TEST

/* Greet, read the ACQUIRE and grant it, then take it back at once (arg
 * "lost": LOST in the same write) or with a deadline already past
 * ("expired"). */
static void
script_answer(int fd, void *arg)
{
	char buf[512], out[512], id[64];
	fake_write(fd, "DMLOCK 1 fake ricart-agrawala\n");
	if (test_raw_read_line(fd, buf, sizeof(buf), 5000) < 0 || sscanf(buf, "ACQUIRE %63s", id) != 1)
		_exit(1);
	if (strcmp(arg, "expired") == 0)
		snprintf(out, sizeof(out), "GRANTED %s 7 %llu\n", id, test_now_ms() - 1000);
	else
		snprintf(out, sizeof(out), "GRANTED %s 7 0\nLOST %s lease the lease ran out\n", id, id);
	fake_write(fd, out);
}

/* Granted and lost before dmlock_acquire() returns: -ENOLCK, not the
 * -ETIMEDOUT of a wait that expired. */
START_TEST(acquire_granted_and_lost_at_once)
{
	static const char *const how[] = { "lost", "expired" };
	for (size_t i = 0; i < 2; i++) {
		struct fake_daemon f;
		fake_daemon_start(&f, script_answer, (void *)how[i]);
		struct dmlock_conn *c = NULL;
		ck_assert_int_eq(dmlock_connect(f.path, &c), 0);
		struct dmlock_lock *l = NULL;
		int r = dmlock_acquire(c, "t/lost-at-once", DMLOCK_EXCLUSIVE, 5000, &l);
		ck_assert_msg(r == -ENOLCK, "%s: %s", how[i], dmlock_strerror(r));
		ck_assert_ptr_null(l);
		if (i == 0)
			ck_assert_str_eq(dmlock_conn_message(c), "the lease ran out");
		dmlock_close(c);
		fake_daemon_stop(&f);
	}
}
END_TEST

/* Greet; answer the first PING with two PONGs (a late one for an earlier
 * ping that timed out, then its own) and every later PING with one. */
static void
script_late_pong(int fd, void *arg)
{
	char buf[512];
	fake_write(fd, "DMLOCK 1 fake ricart-agrawala\n");
	for (int i = 0; test_raw_read_line(fd, buf, sizeof(buf), 5000) >= 0; i++)
		fake_write(fd, i == 0 ? "PONG\nPONG\n" : "PONG\n");
}

/* A late PONG that comes with the next one must not make that ping wait
 * for a count it has passed (it waited for the 10 s grace, -ETIMEDOUT). */
START_TEST(ping_after_late_pong)
{
	struct fake_daemon f;
	fake_daemon_start(&f, script_late_pong, NULL);
	struct dmlock_conn *c = NULL;
	ck_assert_int_eq(dmlock_connect(f.path, &c), 0);
	unsigned long long t0 = test_now_ms();
	ck_assert_int_eq(dmlock_ping(c, NULL), 0);
	ck_assert_int_eq(dmlock_ping(c, NULL), 0);
	ck_assert_uint_lt(test_now_ms() - t0, 5000);
	dmlock_close(c);
	fake_daemon_stop(&f);
}
END_TEST

/* ---- daemon start-up rules -------------------------------------------- */

static pid_t
spawn_dmlockd(const char *socket_path, const char *state_dir)
{
	const char *builddir = getenv("top_builddir");
	char prog[4096];
	snprintf(prog, sizeof(prog), "%s/dmlockd/dmlockd", builddir != NULL ? builddir : ".");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(prog, prog, "-S", socket_path, "--state-dir", state_dir, "--log-level", "err",
		    (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* waitpid with a bound; returns the exit status or -1 if still running. */
static int
wait_exit(pid_t pid, int timeout_ms)
{
	int status;
	unsigned long long until = test_now_ms() + (unsigned long long)timeout_ms;
	while (test_now_ms() < until) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		poll(NULL, 0, 10);
	}
	return -1;
}

START_TEST(refuses_live_socket)
{
	struct dmlock_conn *c = connect_ok();
	char state[] = "/tmp/dmlock-state-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(state));
	pid_t second = spawn_dmlockd(daemon_under_test.socket, state);
	int status = wait_exit(second, 10000);
	if (status < 0) {
		kill(second, SIGKILL);
		waitpid(second, NULL, 0);
	}
	ck_assert_int_eq(status, 1);
	ck_assert_int_eq(rmdir(state), 0);	/* (it stopped before storing anything) */
	/* The first daemon and its connection are untouched. */
	ck_assert_int_eq(dmlock_ping(c, NULL), 0);
	dmlock_close(c);
	c = connect_ok();
	dmlock_close(c);
}
END_TEST

START_TEST(removes_stale_socket)
{
	char dir[] = "/tmp/dmlock-stale-XXXXXX", path[64], state[64], floor[96];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/dmlockd.sock", dir);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);	/* a socket file nobody listens on: stale */

	snprintf(state, sizeof(state), "%s/state", dir);
	pid_t pid = spawn_dmlockd(path, state);
	struct dmlock_conn *c = NULL;
	int r = -1;
	for (int i = 0; i < 1000 && r < 0; i++) {
		r = dmlock_connect(path, &c);
		if (r < 0)
			poll(NULL, 0, 10);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(dmlock_ping(c, NULL), 0);
	dmlock_close(c);
	kill(pid, SIGTERM);
	ck_assert_int_eq(wait_exit(pid, 10000), 0);
	ck_assert_int_eq(access(path, F_OK), -1);	/* unlinked on SIGTERM */
	snprintf(floor, sizeof(floor), "%s/epoch-floor", state);
	unlink(floor);
	rmdir(state);
	rmdir(dir);
}
END_TEST

static Suite *
libdmlock_suite(void)
{
	Suite *s = suite_create("libdmlock");
	TCase *tc = tcase_create("daemon");
	tcase_add_unchecked_fixture(tc, daemon_setup, daemon_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, acquire_release);
	tcase_add_test(tc, try_busy_and_timeout);
	tcase_add_test(tc, shared_and_exclusive);
	tcase_add_test(tc, tokens_increase);
	tcase_add_test(tc, released_when_connection_closes);
	tcase_add_test(tc, released_when_holder_killed);
	tcase_add_test(tc, nonblocking_callbacks);
	tcase_add_test(tc, status_and_ping);
	tcase_add_test(tc, admin_queries);
	tcase_add_test(tc, denial_message);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, flood_does_not_disturb_others);
	tcase_add_test(tc, oversized_line_disconnects_only_that_client);
	tcase_add_test(tc, raw_protocol_answers);
	suite_add_tcase(s, tc);

	tc = tcase_create("startup");
	tcase_add_unchecked_fixture(tc, daemon_setup, daemon_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, refuses_live_socket);
	tcase_add_test(tc, removes_stale_socket);
	suite_add_tcase(s, tc);

	tc = tcase_create("fake_daemon");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, deadline_passes_without_extend);
	tcase_add_test(tc, free_when_daemon_died_runs_no_callback);
	tcase_add_test(tc, release_when_daemon_died_runs_no_callback);
	tcase_add_test(tc, expired_lock_lost_once_when_cancel_fails);
	tcase_add_test(tc, expired_lock_freed_by_callback);
	tcase_add_test(tc, connect_refused_too_many_clients);
	tcase_add_test(tc, connect_refused_other_error);
	tcase_add_test(tc, acquire_daemon_never_answers);
	tcase_add_test(tc, acquire_granted_and_lost_at_once);
	tcase_add_test(tc, ping_after_late_pong);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(libdmlock_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
