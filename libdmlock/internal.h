/*
 * internal.h: private definitions of libdmlock (not installed): the export
 * macro, the clock, and what client.c, client_lock.c and client_query.c
 * share: the connection and lock objects and the connection's calls.  The
 * library is built with -fvisibility=hidden; only functions marked
 * DMLOCK_EXPORT (and listed in libdmlock.sym) are public, so the shared
 * conn_ and lock_ functions below stay inside the library.
 */
#ifndef DMLOCK_INTERNAL_H
#define DMLOCK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dmlock.h"
#include "local_proto.h"

#define DMLOCK_EXPORT __attribute__((visibility("default")))

/* CLOCK_BOOTTIME in ms: the clock grant deadlines are measured on. */
static inline uint64_t
dmlock_now_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define CONN_INBUF_SIZE		4096
/* How long a blocking call waits for the daemon beyond the wait it asked
 * for before giving up on a silent daemon. */
#define DAEMON_GRACE_MS		10000

struct dmlock_conn {
	int		 fd;
	int		 broken;	/* 0, or the error that broke the connection */
	char		 node[DM_NODE_NAME_MAX + 1];
	char		 algorithm[DM_ALGORITHM_NAME_MAX + 1];

	char		 in[CONN_INBUF_SIZE];
	size_t		 in_len;
	char		*out;
	size_t		 out_len;
	size_t		 out_cap;

	struct dmlock_lock *locks;	/* live lock objects of this connection */
	size_t		 n_daemon;	/* ids the daemon still tracks */
	uint64_t	 next_id;

	unsigned	 pongs;		/* PONG lines received */
	bool		 status_active;	/* collecting a status block */
	bool		 status_done;
	char		*status;
	size_t		 status_len;
	int		 status_error;	/* ERROR - answered the query instead */
	char		 message[LP_TEXT_MAX + 1];	/* text of the last DENIED/LOST */
};

struct dmlock_lock {
	struct dmlock_conn *conn;	/* NULL once the connection is closed */
	struct dmlock_lock *prev, *next;
	uint64_t	 id;
	char		 name[DM_LOCK_NAME_MAX + 1];
	enum dmlock_mode mode;
	enum dmlock_state state;
	int		 error;
	uint64_t	 token;
	uint64_t	 deadline;
	bool		 was_lost;	/* lost before a release was asked */
	char		 message[LP_TEXT_MAX + 1];	/* text of DENIED/LOST */
	dmlock_callback_fn *cb;
	void		*userdata;
};

/* client.c: the connection's list of lock objects, sending, waiting, and the
 * block a query collects. */
void lock_link(struct dmlock_conn *c, struct dmlock_lock *l);
void lock_unlink(struct dmlock_lock *l);
int conn_send_request(struct dmlock_conn *c, const struct lp_request *req);
int conn_send_id(struct dmlock_conn *c, enum lp_verb verb, uint64_t id);
int conn_status_append(struct dmlock_conn *c, const char *text, size_t len);
int conn_wait(struct dmlock_conn *c, uint64_t until_ms);

#endif /* DMLOCK_INTERNAL_H */
