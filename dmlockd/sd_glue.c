/*
 * sd_glue.c: the systemd shell of dmlockd (see sd_glue.h): socket
 * activation, sd_notify() state, the watchdog timer and journal detection.
 * With HAVE_SYSTEMD undefined every entry point is a no-op that reports
 * "nothing from systemd".  It makes no protocol decision and keeps no state
 * but the watchdog timer.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "log.h"
#include "sd_glue.h"

#ifdef HAVE_SYSTEMD

/* Whether fd is a listening AF_UNIX stream socket. */
static bool
fd_is_local_listener(int fd)
{
	return sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0;
}

int
dmd_sd_listen_fd(void)
{
	char **names = NULL;
	int chosen = -ENOENT;

	int n = sd_listen_fds_with_names(1, &names);
	if (n < 0)
		return log_error_errno(n, "socket activation: bad LISTEN_FDS environment");
	if (n == 0)
		goto out;

	/* First pass: the fd carrying our name; second: any Unix listener. */
	for (int i = 0; i < n && chosen < 0; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		if (names != NULL && names[i] != NULL && strcmp(names[i], DMD_SD_LOCAL_FD_NAME) == 0 &&
		    fd_is_local_listener(fd))
			chosen = fd;
	}
	for (int i = 0; i < n && chosen < 0; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		if (fd_is_local_listener(fd))
			chosen = fd;
	}
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		if (fd == chosen)
			continue;
		log_warning("socket activation: ignoring passed fd %d (%s): not the local "
		    "listening Unix stream socket", fd,
		    names != NULL && names[i] != NULL ? names[i] : "unnamed");
		close(fd);
	}
	if (chosen < 0)
		log_warning("socket activation: %d fd(s) passed, none a listening Unix stream socket", n);
out:
	if (names != NULL) {
		for (char **p = names; *p != NULL; p++)
			free(*p);
		free(names);
	}
	return chosen;
}

void
dmd_sd_notify_ready(const char *status)
{
	if (status != NULL)
		sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	else
		sd_notify(0, "READY=1");
}

void
dmd_sd_notify_status(const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	int r = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	sd_notifyf(0, "STATUS=%s", text);
}

void
dmd_sd_notify_reloading(void)
{
	struct timespec ts;
	uint64_t usec = 0;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	sd_notifyf(0, "RELOADING=1\nSTATUS=reloading configuration\nMONOTONIC_USEC=%" PRIu64, usec);
}

void
dmd_sd_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=leaving the cluster and shutting down");
}

int
dmd_sd_watchdog_interval(uint64_t *ret_ping_usec)
{
	uint64_t usec = 0;

	int r = sd_watchdog_enabled(0, &usec);
	if (r <= 0)
		return r;
	if (usec < 2)
		return -EINVAL;
	*ret_ping_usec = usec / 2;
	return 1;
}

void
dmd_sd_watchdog_ping(void)
{
	sd_notify(0, "WATCHDOG=1");
}

bool
dmd_sd_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (e == NULL || sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

#else /* !HAVE_SYSTEMD: nothing comes from or goes to systemd */

int
dmd_sd_listen_fd(void)
{
	return -ENOENT;
}

void
dmd_sd_notify_ready(const char *status)
{
}

void
dmd_sd_notify_status(const char *fmt, ...)
{
}

void
dmd_sd_notify_reloading(void)
{
}

void
dmd_sd_notify_stopping(void)
{
}

int
dmd_sd_watchdog_interval(uint64_t *ret_ping_usec)
{
	return 0;
}

void
dmd_sd_watchdog_ping(void)
{
}

bool
dmd_sd_stderr_is_journal(void)
{
	return false;
}

#endif /* HAVE_SYSTEMD */

/* The watchdog timer, shared by both builds (never armed without systemd). */
static struct event *watchdog_timer;

static void
watchdog_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	dmd_sd_watchdog_ping();
}

int
dmd_sd_watchdog_start(struct event_base *base)
{
	uint64_t ping_usec;

	int r = dmd_sd_watchdog_interval(&ping_usec);
	if (r <= 0)
		return r;
	dmd_sd_watchdog_stop();
	watchdog_timer = event_new(base, -1, EV_PERSIST, watchdog_timer_fired, NULL);
	if (watchdog_timer == NULL)
		return -ENOMEM;
	struct timeval tv = {
		.tv_sec = (time_t)(ping_usec / 1000000u),
		.tv_usec = (suseconds_t)(ping_usec % 1000000u),
	};
	if (event_add(watchdog_timer, &tv) < 0) {
		dmd_sd_watchdog_stop();
		return -EIO;
	}
	dmd_sd_watchdog_ping();
	log_debug("watchdog: pinging every %" PRIu64 " ms", ping_usec / 1000u);
	return 1;
}

void
dmd_sd_watchdog_stop(void)
{
	if (watchdog_timer != NULL) {
		event_free(watchdog_timer);
		watchdog_timer = NULL;
	}
}
