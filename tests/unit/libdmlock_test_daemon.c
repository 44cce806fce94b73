/*
 * libdmlock_test_daemon.c: start/stop a real dmlockd for the libdmlock
 * tests, and raw protocol helpers.  Every wait is on a real event (a
 * connect that succeeds, a line read, a process exit) with a bounded
 * timeout; the daemon is always stopped by its PID.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libdmlock_test_daemon.h"

unsigned long long
test_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
}

static void
pause_ms(int ms)
{
	poll(NULL, 0, ms);
}

int
test_raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
test_raw_read_line(int fd, char *buf, size_t size, int timeout_ms)
{
	size_t n = 0;
	unsigned long long until = test_now_ms() + (unsigned long long)timeout_ms;
	while (n + 1 < size) {
		unsigned long long now = test_now_ms();
		if (now >= until)
			return -1;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)(until - now)) <= 0)
			continue;
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r <= 0)
			return -1;
		if (c == '\n') {
			buf[n] = '\0';
			return (int)n;
		}
		buf[n++] = c;
	}
	return -1;
}

bool
test_raw_read_until_eof(int fd, const char *want, bool *ret_seen, int timeout_ms)
{
	char buf[2048];
	size_t len = 0;
	unsigned long long until = test_now_ms() + (unsigned long long)timeout_ms;
	*ret_seen = false;
	for (;;) {
		unsigned long long now = test_now_ms();
		if (now >= until)
			return false;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)(until - now)) <= 0)
			continue;
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (r < 0 && errno == ECONNRESET)
			return true;
		if (r <= 0)
			return r == 0;
		len += (size_t)r;
		buf[len] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			if (strncmp(line, want, strlen(want)) == 0)
				*ret_seen = true;
			line = nl + 1;
		}
		len = strlen(line);
		memmove(buf, line, len + 1);
		if (len >= sizeof(buf) - 1)
			len = 0;
	}
}

void
test_daemon_start(struct test_daemon *d)
{
	const char *builddir = getenv("top_builddir");
	char prog[4096], state[128];

	snprintf(prog, sizeof(prog), "%s/dmlockd/dmlockd", builddir != NULL ? builddir : ".");
	snprintf(d->dir, sizeof(d->dir), "/tmp/dmlock-test-XXXXXX");
	if (mkdtemp(d->dir) == NULL) {
		perror("mkdtemp");
		exit(99);
	}
	snprintf(d->socket, sizeof(d->socket), "%s/dmlockd.sock", d->dir);
	snprintf(state, sizeof(state), "%s/state", d->dir);
	d->pid = fork();
	if (d->pid < 0) {
		perror("fork");
		exit(99);
	}
	if (d->pid == 0) {
		execl(prog, prog, "-S", d->socket, "--state-dir", state, "--log-level", "warning",
		    (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	/* Wait until it accepts a connection (and reads its greeting). */
	for (int i = 0; i < 1000; i++) {
		int fd = test_raw_connect(d->socket);
		if (fd >= 0) {
			char line[256];
			int n = test_raw_read_line(fd, line, sizeof(line), 5000);
			close(fd);
			if (n > 0 && strncmp(line, "DMLOCK 1 ", 9) == 0)
				return;
		}
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			fprintf(stderr, "dmlockd exited at start\n");
			exit(99);
		}
		pause_ms(10);
	}
	fprintf(stderr, "dmlockd did not come up on %s\n", d->socket);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	exit(99);
}

bool
test_daemon_stop(struct test_daemon *d)
{
	int status = 0;
	bool clean = false;
	char path[128];
	if (d->pid <= 0)
		return false;
	kill(d->pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			d->pid = 0;
			break;
		}
		pause_ms(10);
	}
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
	struct stat st;
	bool socket_gone = lstat(d->socket, &st) < 0;
	unlink(d->socket);
	snprintf(path, sizeof(path), "%s/state/epoch-floor", d->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state", d->dir);
	rmdir(path);
	rmdir(d->dir);
	return clean && socket_gone;
}
