/*
 * sd_glue.h: everything dmlockd says to or takes from systemd, behind one
 * small interface: socket activation (the local Unix socket passed in by
 * dmlockd.socket or systemd-socket-activate), sd_notify() state changes
 * (READY=1, STATUS=, RELOADING=1, STOPPING=1), the service watchdog, and
 * whether stderr is connected to the journal.
 *
 * Built with libsystemd when configure found it (HAVE_SYSTEMD); without it
 * every function is a harmless no-op: no activation fd, no notifications,
 * no watchdog, stderr logging.  None of these functions logs on its own
 * except dmd_sd_listen_fd(), which reports fds it ignores.
 */
#ifndef DMD_SD_GLUE_H
#define DMD_SD_GLUE_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;

/* The FileDescriptorName= dmlockd.socket gives the local socket. */
#define DMD_SD_LOCAL_FD_NAME "local"

/*
 * The listening local (AF_UNIX, SOCK_STREAM) socket passed by socket
 * activation, if any.  Prefers an fd named DMD_SD_LOCAL_FD_NAME, else the
 * first listening Unix stream socket.  Other passed fds are closed.  Clears
 * LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES from the environment so children do
 * not see them.  Returns the fd (>= 3, close-on-exec, caller owns it),
 * -ENOENT when nothing was passed, or another negative errno.
 */
int dmd_sd_listen_fd(void);

/* READY=1 with a STATUS= line (status may be NULL).  Call once the node has
 * joined its cluster or runs standalone, and again after a reload. */
void dmd_sd_notify_ready(const char *status);
/* STATUS=<printf text>, e.g. "roster 3 nodes, 2 locks held". */
void dmd_sd_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* RELOADING=1 (with MONOTONIC_USEC=) at the start of a SIGHUP reload;
 * follow it with dmd_sd_notify_ready() when the reload is done. */
void dmd_sd_notify_reloading(void);
/* STOPPING=1 at the start of a graceful shutdown. */
void dmd_sd_notify_stopping(void);

/*
 * The watchdog: if the service manager set WatchdogSec= for this process
 * (WATCHDOG_USEC, and WATCHDOG_PID matching or unset), store HALF the
 * interval in *ret_ping_usec and return 1; return 0 when no watchdog is
 * expected (*ret_ping_usec untouched); negative errno on a malformed
 * environment.  The event loop then calls dmd_sd_watchdog_ping() every
 * *ret_ping_usec.
 */
int dmd_sd_watchdog_interval(uint64_t *ret_ping_usec);
/* WATCHDOG=1. */
void dmd_sd_watchdog_ping(void);

/*
 * Convenience for libevent loops: arm a persistent timer on base that
 * calls dmd_sd_watchdog_ping() at half the watchdog interval (and pings
 * once at once).  Returns 1 when armed, 0 when no watchdog is expected,
 * negative errno on failure.  dmd_sd_watchdog_stop() frees the timer; it is
 * safe to call when nothing was armed.
 */
int dmd_sd_watchdog_start(struct event_base *base);
void dmd_sd_watchdog_stop(void);

/* True when stderr is the stream $JOURNAL_STREAM names (device:inode),
 * i.e. log lines should go to the journal with structured fields. */
bool dmd_sd_stderr_is_journal(void);

#endif /* DMD_SD_GLUE_H */
