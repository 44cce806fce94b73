/*
 * socket_path.h: where dmlockd's Unix socket lives, decided in one place for
 * the daemon, libdmlock and the dmlock CLI.  Not installed.
 *
 * Client side (libdmlock, CLI): $DMLOCK_SOCKET if set and non-empty; else,
 * for a non-root user with an absolute $XDG_RUNTIME_DIR, a per-user daemon's
 * $XDG_RUNTIME_DIR/dmlock/dmlockd.sock if that socket exists; else the
 * system daemon's /run/dmlock/dmlockd.sock.
 * Daemon side (dmlockd without -S): /run/dmlock/dmlockd.sock as root,
 * $XDG_RUNTIME_DIR/dmlock/dmlockd.sock otherwise (error if that variable is
 * unset: use -S).  $DMLOCK_SOCKET is not read by the daemon.
 */
#ifndef DMLOCK_SOCKET_PATH_H
#define DMLOCK_SOCKET_PATH_H

#include <stddef.h>

#define DMLOCK_SYSTEM_SOCKET_DIR	"/run/dmlock"
#define DMLOCK_SOCKET_NAME		"dmlockd.sock"
#define DMLOCK_SYSTEM_SOCKET		DMLOCK_SYSTEM_SOCKET_DIR "/" DMLOCK_SOCKET_NAME
#define DMLOCK_SOCKET_ENV		"DMLOCK_SOCKET"

/* Client default into buf; 0 or -ENAMETOOLONG (longer than a sun_path). */
int lp_socket_path_client(char *buf, size_t size);

/* Daemon default into buf; 0, -ENAMETOOLONG, or -ENOENT when not root and
 * $XDG_RUNTIME_DIR is unset or not absolute. */
int lp_socket_path_daemon(char *buf, size_t size);

#endif /* DMLOCK_SOCKET_PATH_H */
