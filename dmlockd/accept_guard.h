/*
 * accept_guard.h: what a listening socket does when accept(2) runs out of
 * file descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM).  libevent leaves the
 * listener armed: the pending connection stays in the backlog, the socket
 * stays readable, and the loop spins on the error (tens of thousands of
 * callbacks a second, each one logged).  The guard disables the listener,
 * enables it again ACCEPT_GUARD_PAUSE_MS later, and logs once per burst: a
 * warning at the first pause, a notice with the number of pauses when an
 * accept succeeds again (a burst within 10 s of the last logged one is
 * not logged).  Used by the local socket (local_server.c) and the
 * peer listeners (peer_transport.c).
 */
#ifndef DMD_ACCEPT_GUARD_H
#define DMD_ACCEPT_GUARD_H

#include <stdbool.h>

#define ACCEPT_GUARD_PAUSE_MS	100

struct event_base;
struct evconnlistener;
struct accept_guard;

/* A guard for lev on base; what names the socket in logs ("the local
 * socket", "peer listener 127.0.0.1:7411"; copied).  0 or -ENOMEM. */
int accept_guard_new(struct event_base *base, struct evconnlistener *lev, const char *what,
    struct accept_guard **ret);
struct accept_guard *accept_guard_free(struct accept_guard *g);

/* From the listener's error callback with EVUTIL_SOCKET_ERROR(): pauses
 * the listener and returns true for descriptor exhaustion; false (nothing
 * done) for any other error. */
bool accept_guard_on_error(struct accept_guard *g, int err);
/* From the accept callback: a connection was accepted (ends a burst). */
void accept_guard_on_accept(struct accept_guard *g);
/* Pauses in the current burst (0: accepting normally), for tests. */
unsigned accept_guard_pauses(const struct accept_guard *g);

#endif /* DMD_ACCEPT_GUARD_H */
