/*
 * libdmlock_test_daemon.h: helpers for the libdmlock tests: start the built
 * dmlockd on a socket in a fresh temporary directory, wait (bounded) until
 * it accepts connections, stop it by PID; and small raw-socket helpers for
 * talking the protocol without the library.
 */
#ifndef LIBDMLOCK_TEST_DAEMON_H
#define LIBDMLOCK_TEST_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct test_daemon {
	pid_t	pid;
	char	dir[64];
	char	socket[128];
};

/* Start $top_builddir/dmlockd/dmlockd -S <tmp>/dmlockd.sock; aborts the
 * test program if it is not accepting connections within 10 s. */
void test_daemon_start(struct test_daemon *d);
/* SIGTERM, wait for exit (SIGKILL after 10 s); returns true if it exited
 * cleanly and removed its socket. */
bool test_daemon_stop(struct test_daemon *d);

/* Raw client: connect (blocking fd), read one line into buf (without the
 * newline) with a timeout; -1 on EOF/timeout. */
int test_raw_connect(const char *path);
int test_raw_read_line(int fd, char *buf, size_t size, int timeout_ms);
/* Read lines until EOF (returns true) or timeout (false); remembers whether
 * a line starting with want was seen. */
bool test_raw_read_until_eof(int fd, const char *want, bool *ret_seen, int timeout_ms);

/* CLOCK_BOOTTIME in ms. */
unsigned long long test_now_ms(void);

#endif /* LIBDMLOCK_TEST_DAEMON_H */
