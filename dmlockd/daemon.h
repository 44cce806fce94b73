/*
 * daemon.h: the wiring of dmlockd: one libevent base, one engine, one timer.
 * dmd_daemon_step() is the only way into the engine: it reads the clock
 * (CLOCK_BOOTTIME ms, the one place the daemon reads it), steps the engine,
 * routes every effect (grants and losses to the local session that owns the
 * handle, peer messages to the transport hook) and re-arms the timer at
 * dm_engine_next_deadline().  No protocol decision is made here.
 */
#ifndef DMD_DAEMON_H
#define DMD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "dm_engine.h"

struct event_base;
struct dmd_daemon;
struct dmd_request;	/* a local client's request, see local_session.h */

/* What the transport knows about the link to one peer (status, ping). */
struct dmd_peer_link_info {
	bool		 link_up;
	int64_t		 last_contact_ms;	/* ms since the last frame from the peer; -1 never */
	int64_t		 rtt_us;		/* last message -> acknowledgement time; -1 unknown */
	int64_t		 data_sent;		/* DATA frames written (with resends); -1 unknown */
	int64_t		 data_received;		/* DATA frames read (with duplicates); -1 unknown */
};

/*
 * The seam for the peer transport.  Called from inside effect dispatch:
 * arguments are valid only for the call; the hooks must not step the
 * engine (queue an event for later instead).  Unset hooks: SEND is dropped
 * with a debug log line (a one-node cluster never sends).
 */
struct dmd_transport_ops {
	void	(*send)(void *ctx, const char *peer, const struct dm_msg *msg);
	void	(*peer_add)(void *ctx, const char *name, const char *address);
	void	(*peer_remove)(void *ctx, const char *name);
	/* Link facts for status output (may be NULL): 0 or -ENOENT. */
	int	(*peer_info)(void *ctx, const char *name, struct dmd_peer_link_info *ret);
	/* Around every engine step (may be NULL): hold the writes of send()
	 * until release, so that what the step stores (DM_FX_PERSIST,
	 * DM_FX_PERSIST_RECORD) is on disk before any of its messages leaves,
	 * whatever the order of its effects. */
	void	(*hold)(void *ctx);
	void	(*release)(void *ctx);
};

/*
 * Create the daemon around base and a new engine made from config (borrowed
 * for the call).  Returns 0, -EINVAL (engine refused the config), -ENOMEM.
 */
int dmd_daemon_new(struct event_base *base, const struct dm_engine_config *config,
    struct dmd_daemon **ret);
struct dmd_daemon *dmd_daemon_free(struct dmd_daemon *daemon);

/* Install the transport hooks (ops borrowed for the daemon's lifetime). */
void dmd_daemon_set_transport(struct dmd_daemon *daemon, const struct dmd_transport_ops *ops,
    void *ctx);

/* Called for DM_FX_READY and DM_FX_LEFT (may be NULL). */
void dmd_daemon_set_state_hook(struct dmd_daemon *daemon,
    void (*hook)(void *ctx, enum dm_effect_type type), void *ctx);

/* Where DM_FX_PERSIST stores the epoch floor and DM_FX_PERSIST_RECORD the
 * membership record (state_file.h), borrowed for the daemon's lifetime.
 * Unset (in-process tests), neither is stored. */
struct state_dir;
void dmd_daemon_set_state_dir(struct dmd_daemon *daemon, struct state_dir *dir);

/*
 * Step the engine with ev (its "now" is filled in here) and apply the
 * effects.  Returns dm_engine_step()'s result.  Called from inside an
 * effect (a transport callback that fired synchronously), the event is
 * copied and stepped right after the running step instead; 0 is returned.
 */
int dmd_daemon_step(struct dmd_daemon *daemon, struct dm_event *ev);
/* True while dmd_daemon_step() is applying effects. */
bool dmd_daemon_in_step(const struct dmd_daemon *daemon);

/* The exit status of a daemon that must come back as a new incarnation
 * (EX_TEMPFAIL, sysexits.h): systemd's Restart=on-failure starts it again. */
#define DMD_EXIT_RESTART 75

/*
 * Stop for good, as a crash at this point would: from now on no engine
 * effect leaves the process (no message, grant, loss, link change; the
 * rest of a step that is running is muted, only its log lines and epoch
 * floors go through), no event reaches the engine (dmd_daemon_step()
 * returns -ESHUTDOWN, deferred events are dropped), and the event loop
 * ends after the running callback (event_base_loopbreak).  main.c then
 * closes everything without the LEAVE protocol and exits with status
 * (> 0).  The first call's status stays.
 */
void dmd_daemon_halt(struct dmd_daemon *daemon, int status);
/* 0 while running, else the status given to dmd_daemon_halt(). */
int dmd_daemon_halt_status(const struct dmd_daemon *daemon);

/* A fresh engine handle (never reused) and the map handle -> request. */
uint64_t dmd_daemon_new_handle(struct dmd_daemon *daemon);
void dmd_daemon_register(struct dmd_daemon *daemon, struct dmd_request *req);
void dmd_daemon_unregister(struct dmd_daemon *daemon, struct dmd_request *req);

const struct dm_engine *dmd_daemon_engine(const struct dmd_daemon *daemon);
struct event_base *dmd_daemon_base(const struct dmd_daemon *daemon);
const char *dmd_daemon_node(const struct dmd_daemon *daemon);
/* Whether peer links are possible (a transport is attached): a daemon
 * without a [node] listen address and peers runs alone for good. */
bool dmd_daemon_has_transport(const struct dmd_daemon *daemon);
const char *dmd_daemon_algorithm(const struct dmd_daemon *daemon);
/* Ask the transport about the link to name: 0, or -ENOENT (no transport,
 * unknown peer). */
int dmd_daemon_peer_info(const struct dmd_daemon *daemon, const char *name,
    struct dmd_peer_link_info *ret);

/* The request registered under handle, or NULL. */
struct dmd_request *dmd_daemon_lookup(const struct dmd_daemon *daemon, uint64_t handle);

#endif /* DMD_DAEMON_H */
