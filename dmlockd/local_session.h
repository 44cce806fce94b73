/*
 * local_session.h: one client connection on the local Unix socket: its
 * peer credentials, its line buffer, its requests (client id <-> engine
 * handle) and its limits.  Lines are decoded by local_proto.c and turned
 * into engine events through dmd_daemon_step(); effects come back through
 * local_session_deliver().  Closing a session cancels all its requests.
 */
#ifndef DMD_LOCAL_SESSION_H
#define DMD_LOCAL_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dm_engine.h"
#include "local_proto.h"

struct dmd_daemon;
struct local_server;
struct local_session;

enum dmd_request_state {
	DMD_REQ_WAITING = 1,
	DMD_REQ_HELD,
	DMD_REQ_ENDING,		/* RELEASE/CANCEL being stepped: effects muted */
};

/* A request of a session, registered with the daemon by handle. */
struct dmd_request {
	struct local_session *session;
	struct dmd_request *next;		/* in the session's list */
	struct dmd_request *hnext;		/* in the daemon's handle map */
	uint64_t	 handle;
	char		 id[LP_ID_MAX + 1];
	char		 lock[DM_LOCK_NAME_MAX + 1];
	enum dm_mode	 mode;
	enum dmd_request_state state;
	uint64_t	 token;
};

struct local_session_cred {
	pid_t	pid;
	uid_t	uid;
	gid_t	gid;
};

/*
 * Take ownership of the connected socket fd and greet the client.  The
 * session belongs to server.  Returns 0, -ENOMEM (fd closed).
 */
int local_session_new(struct local_server *server, struct dmd_daemon *daemon, int fd,
    const struct local_session_cred *cred, struct local_session **ret);

/* Free without touching the engine (daemon shutdown). */
struct local_session *local_session_free(struct local_session *s);

/* Cancel every request in the engine, then free: the connection is gone. */
void local_session_close(struct local_session *s);

/* Mark for closing at the next reap (safe from inside an effect). */
void local_session_close_later(struct local_session *s);
bool local_session_closing(const struct local_session *s);

/* An engine effect for one of this session's requests (GRANT, DENY,
 * EXTEND, LOST).  Never steps the engine. */
void local_session_deliver(struct dmd_request *req, const struct dm_effect *fx);

const struct local_session_cred *local_session_cred(const struct local_session *s);

/* Reject an extra client: write ERROR - too-many-clients and close fd. */
void local_session_reject(int fd);

#endif /* DMD_LOCAL_SESSION_H */
