/*
 * local_server.c: the listening Unix socket of dmlockd.  Binds it safely
 * (refusing to steal a live daemon's socket, removing a stale one), accepts
 * clients with their SO_PEERCRED credentials, caps the number of sessions
 * (in total, per user as [local] clients_per_user says, with a few kept for
 * root),
 * and closes finished sessions from a deferred event so that no session is
 * freed while one of its own callbacks or an engine step is running.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "dmlockd/accept_guard.h"
#include "dmlockd/acl.h"
#include "dmlockd/daemon.h"
#include "dmlockd/local_server.h"
#include "dmlockd/local_session.h"
#include "dmlockd/log.h"

struct local_server {
	struct dmd_daemon	*daemon;
	struct evconnlistener	*listener;
	struct accept_guard	*guard;		/* pauses accepts when out of fds */
	struct event		*reap;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool			 bound;		/* we created the file: unlink it */
	struct dmd_acl		*acl;		/* [access] rules, NULL: none */
	size_t			 per_uid;	/* [local] clients_per_user */
	struct local_session	*sessions[LP_CLIENTS_MAX];
	size_t			 n_sessions;
	/* Refusals logged, per reason (enum refusal): one line a second each. */
	time_t			 refusal_logged_at[3];	/* CLOCK_MONOTONIC s; 0: never */
	unsigned		 refusals_unlogged[3];
};

enum refusal {
	REFUSAL_NONE = -1,
	REFUSAL_TOTAL,		/* LP_CLIENTS_MAX reached */
	REFUSAL_ROOT_RESERVE,	/* only root's reserved slots are left */
	REFUSAL_PER_UID,	/* this user holds per_uid ([local] clients_per_user) */
};

static int
make_sockaddr(const char *path, struct sockaddr_un *sa)
{
	size_t len = strlen(path);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, len + 1);
	return 0;
}

/* Is a daemon answering on path?  1 yes, 0 no (stale or absent). */
static int
socket_is_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int err = errno;
	close(fd);
	if (r == 0 || err == EAGAIN)
		return 1;
	return 0;
}

/* mkdir -p of the socket's parent directory, mode 0755. */
static int
make_parent_dirs(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int
bind_socket(const char *path, mode_t mode, int *ret_fd)
{
	struct sockaddr_un sa;
	int r = make_sockaddr(path, &sa);
	if (r < 0)
		return r;
	r = make_parent_dirs(path);
	if (r < 0)
		return log_error_errno(r, "cannot create the directory of %s", path);

	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_error("%s exists and is not a socket; not touching it", path);
			return -EEXIST;
		}
		if (socket_is_live(&sa) > 0) {
			log_error("another dmlockd is already serving %s", path);
			return -EADDRINUSE;
		}
		log_notice("removing stale socket %s", path);
		if (unlink(path) < 0 && errno != ENOENT)
			return log_error_errno(errno, "cannot remove stale socket %s", path);
	}

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Create the file with no access, then open it up: no window in which
	 * someone else could connect with a wider mode than intended. */
	mode_t old = umask(0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	int err = errno;
	umask(old);
	if (r < 0) {
		close(fd);
		return log_error_errno(err, "cannot bind %s", path);
	}
	if (chmod(path, mode) < 0 || listen(fd, 128) < 0) {
		err = errno;
		unlink(path);
		close(fd);
		return log_error_errno(err, "cannot set up %s", path);
	}
	*ret_fd = fd;
	return 0;
}

/* May one more client of uid connect?  The total is capped at
 * LP_CLIENTS_MAX; a user other than root may hold srv->per_uid of them
 * ([local] clients_per_user, LOCAL_CLIENTS_PER_UID by default), and never
 * the last LOCAL_CLIENTS_ROOT_RESERVED: one user cannot lock root's
 * `dmlock status` or `leave` out. */
static enum refusal
server_admits(const struct local_server *srv, uid_t uid, char *why, size_t len)
{
	size_t same = 0;

	if (srv->n_sessions >= LP_CLIENTS_MAX) {
		snprintf(why, len, "too many local clients (%d)", LP_CLIENTS_MAX);
		return REFUSAL_TOTAL;
	}
	if (uid == 0)
		return REFUSAL_NONE;
	if (srv->n_sessions >= LP_CLIENTS_MAX - LOCAL_CLIENTS_ROOT_RESERVED) {
		snprintf(why, len, "too many local clients (%zu; the last %d are kept for root)",
		    srv->n_sessions, LOCAL_CLIENTS_ROOT_RESERVED);
		return REFUSAL_ROOT_RESERVE;
	}
	for (size_t i = 0; i < srv->n_sessions; i++)
		if (local_session_cred(srv->sessions[i])->uid == uid)
			same++;
	if (same >= srv->per_uid) {
		snprintf(why, len, "uid %ld has %zu local connections, the most one user may have",
		    (long)uid, srv->per_uid);
		return REFUSAL_PER_UID;
	}
	return REFUSAL_NONE;
}

/* One warning a second at most per reason: a client looping on connect()
 * at its cap would otherwise write a line per attempt. */
static void
server_log_refusal(struct local_server *srv, enum refusal kind,
    const struct local_session_cred *cred, const char *why)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (srv->refusal_logged_at[kind] != 0 && now.tv_sec == srv->refusal_logged_at[kind]) {
		srv->refusals_unlogged[kind]++;
		return;
	}
	if (srv->refusals_unlogged[kind] > 0)
		log_warning("%s; refusing pid %ld uid %ld (and %u more since the last such line)",
		    why, (long)cred->pid, (long)cred->uid, srv->refusals_unlogged[kind]);
	else
		log_warning("%s; refusing pid %ld uid %ld", why, (long)cred->pid, (long)cred->uid);
	srv->refusal_logged_at[kind] = now.tv_sec;
	srv->refusals_unlogged[kind] = 0;
}

static void
server_on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *addr,
    int socklen, void *arg)
{
	struct local_server *srv = arg;
	struct local_session_cred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	struct ucred uc;
	socklen_t len = sizeof(uc);

	accept_guard_on_accept(srv->guard);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0) {
		cred.pid = uc.pid;
		cred.uid = uc.uid;
		cred.gid = uc.gid;
	}
	char why[128];
	enum refusal refused = server_admits(srv, cred.uid, why, sizeof(why));
	if (refused != REFUSAL_NONE) {
		server_log_refusal(srv, refused, &cred, why);
		local_session_reject(fd);
		return;
	}
	struct local_session *s;
	int r = local_session_new(srv, srv->daemon, fd, &cred, &s);
	if (r < 0) {
		log_warning_errno(r, "cannot serve local client pid %ld", (long)cred.pid);
		return;
	}
	srv->sessions[srv->n_sessions++] = s;
}

static void
server_on_accept_error(struct evconnlistener *listener, void *arg)
{
	struct local_server *srv = arg;
	int err = EVUTIL_SOCKET_ERROR();

	if (!accept_guard_on_error(srv->guard, err))
		log_warning_errno(err, "accept on the local socket failed");
}

static void
server_on_reap(evutil_socket_t fd, short what, void *arg)
{
	struct local_server *srv = arg;
	/* Closing one session may make others close (never in practice, but
	 * the loop is bounded by the number of sessions either way). */
	for (size_t round = 0; round <= LP_CLIENTS_MAX; round++) {
		struct local_session *victim = NULL;
		for (size_t i = 0; i < srv->n_sessions; i++)
			if (local_session_closing(srv->sessions[i])) {
				victim = srv->sessions[i];
				break;
			}
		if (victim == NULL)
			return;
		local_session_close(victim);
	}
}

void
local_server_schedule_reap(struct local_server *srv)
{
	event_active(srv->reap, EV_TIMEOUT, 0);
}

void
local_server_detach(struct local_server *srv, struct local_session *s)
{
	for (size_t i = 0; i < srv->n_sessions; i++) {
		if (srv->sessions[i] == s) {
			srv->sessions[i] = srv->sessions[--srv->n_sessions];
			return;
		}
	}
}

void
local_server_set_acl(struct local_server *srv, struct dmd_acl *acl)
{
	acl_free(srv->acl);
	srv->acl = acl;
	log_info("access control: %zu lock rule(s)%s", acl_n_lock_rules(acl),
	    acl_n_lock_rules(acl) == 0 ? " (everyone who can open the socket may lock anything)" : "");
}

const struct dmd_acl *
local_server_acl(const struct local_server *srv)
{
	return srv->acl;
}

size_t
local_server_n_sessions(const struct local_server *srv)
{
	return srv->n_sessions;
}

int
local_server_new(struct dmd_daemon *daemon, const char *path, mode_t mode, int listen_fd,
    size_t per_uid, struct local_server **ret)
{
	struct local_server *srv;
	int fd = listen_fd, r;

	if (per_uid < 1 || per_uid > LOCAL_CLIENTS_PER_UID_MAX)
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return -ENOMEM;
	srv->daemon = daemon;
	srv->per_uid = per_uid;
	if (path != NULL)
		snprintf(srv->path, sizeof(srv->path), "%s", path);
	if (fd < 0) {
		r = bind_socket(path, mode, &fd);
		if (r < 0)
			goto fail;
		srv->bound = true;
	} else {
		evutil_make_socket_nonblocking(fd);
		evutil_make_socket_closeonexec(fd);
	}
	srv->listener = evconnlistener_new(dmd_daemon_base(daemon), server_on_accept, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (srv->listener == NULL) {
		close(fd);
		r = -ENOMEM;
		goto fail;
	}
	evconnlistener_set_error_cb(srv->listener, server_on_accept_error);
	r = accept_guard_new(dmd_daemon_base(daemon), srv->listener, "the local socket",
	    &srv->guard);
	if (r < 0)
		goto fail;
	srv->reap = event_new(dmd_daemon_base(daemon), -1, 0, server_on_reap, srv);
	if (srv->reap == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = srv;
	return 0;
fail:
	local_server_free(srv);
	return r;
}

struct local_server *
local_server_free(struct local_server *srv)
{
	if (srv == NULL)
		return NULL;
	while (srv->n_sessions > 0)
		local_session_free(srv->sessions[--srv->n_sessions]);
	if (srv->reap != NULL)
		event_free(srv->reap);
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	accept_guard_free(srv->guard);
	if (srv->bound)
		unlink(srv->path);
	acl_free(srv->acl);
	free(srv);
	return NULL;
}
