/*
 * local_server.h: the daemon's listening Unix socket: bind (with stale-
 * socket detection) or adopt a passed fd, accept with SO_PEERCRED, keep the
 * list of sessions, enforce the client limit, and reap closed sessions from
 * the event loop (never from inside an engine step).
 */
#ifndef DMD_LOCAL_SERVER_H
#define DMD_LOCAL_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "local_proto.h"

/* Of the LP_CLIENTS_MAX local connections, one user other than root may
 * hold [local] clients_per_user (by default a quarter, at most all but the
 * reserve), and the last few are kept for root (dmlock status, leave,
 * remove must get through when users take every slot).  A client past a
 * cap is sent ERROR - too-many-clients and closed. */
#define LOCAL_CLIENTS_PER_UID		(LP_CLIENTS_MAX / 4)	/* the default */
#define LOCAL_CLIENTS_ROOT_RESERVED	16
#define LOCAL_CLIENTS_PER_UID_MAX	(LP_CLIENTS_MAX - LOCAL_CLIENTS_ROOT_RESERVED)

struct dmd_acl;
struct dmd_daemon;
struct local_server;
struct local_session;

/*
 * Listen on path: create its directory (0755) if missing, refuse with
 * -EADDRINUSE if a live daemon answers there, remove a stale socket file,
 * bind, chmod to mode.  Or, with listen_fd >= 0, adopt that listening
 * socket (socket activation; path is then only remembered, never
 * unlinked).  A user other than root may hold per_uid connections, 1 to
 * LOCAL_CLIENTS_PER_UID_MAX ([local] clients_per_user; fixed for the
 * server's life).  Returns 0, -EINVAL (per_uid out of range), -EADDRINUSE,
 * -ENAMETOOLONG, or another -errno.
 */
int local_server_new(struct dmd_daemon *daemon, const char *path, mode_t mode, int listen_fd,
    size_t per_uid, struct local_server **ret);

/* Close every session (without engine events), stop listening and unlink
 * the socket it bound.  NULL-safe. */
struct local_server *local_server_free(struct local_server *server);

/*
 * Use acl (taken: the server frees it) for every request from now on,
 * replacing and freeing the previous one; NULL: no [access] rules (anyone
 * who can open the socket may lock anything; only root may run roster
 * operations).  For start-up and SIGHUP: config_take_acl(config).
 */
void local_server_set_acl(struct local_server *server, struct dmd_acl *acl);
const struct dmd_acl *local_server_acl(const struct local_server *server);

/* Sessions call these. */
void local_server_detach(struct local_server *server, struct local_session *s);
void local_server_schedule_reap(struct local_server *server);
size_t local_server_n_sessions(const struct local_server *server);

#endif /* DMD_LOCAL_SERVER_H */
