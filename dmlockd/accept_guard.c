/*
 * accept_guard.c: pause a listener that ran out of file descriptors and
 * resume it by timer, logging once per burst (see accept_guard.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "dmlockd/accept_guard.h"
#include "dmlockd/log.h"

struct accept_guard {
	struct evconnlistener	*lev;
	struct event		*resume;
	char			 what[96];
	unsigned		 pauses;	/* in this burst; 0: none */
	int			 first_err;
	bool			 logged;	/* this burst's warning was logged */
	struct timespec		 last_warning;	/* CLOCK_MONOTONIC; 0: never */
};

/* A burst that starts within this long of the last logged one is not
 * logged again: a daemon hovering at its limit writes a line pair at
 * most this often. */
#define ACCEPT_GUARD_LOG_INTERVAL_S	10

static bool
warning_due(struct accept_guard *g)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return true;
	if (g->last_warning.tv_sec != 0 &&
	    now.tv_sec - g->last_warning.tv_sec < ACCEPT_GUARD_LOG_INTERVAL_S)
		return false;
	g->last_warning = now;
	return true;
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct accept_guard *g = arg;
	evconnlistener_enable(g->lev);
}

int
accept_guard_new(struct event_base *base, struct evconnlistener *lev, const char *what,
    struct accept_guard **ret)
{
	struct accept_guard *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return -ENOMEM;
	g->lev = lev;
	snprintf(g->what, sizeof(g->what), "%s", what);
	g->resume = evtimer_new(base, resume_cb, g);
	if (g->resume == NULL) {
		free(g);
		return -ENOMEM;
	}
	*ret = g;
	return 0;
}

struct accept_guard *
accept_guard_free(struct accept_guard *g)
{
	if (g == NULL)
		return NULL;
	event_free(g->resume);
	free(g);
	return NULL;
}

static bool
out_of_descriptors(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

bool
accept_guard_on_error(struct accept_guard *g, int err)
{
	struct timeval tv = { 0, ACCEPT_GUARD_PAUSE_MS * 1000 };

	if (!out_of_descriptors(err))
		return false;
	evconnlistener_disable(g->lev);
	evtimer_add(g->resume, &tv);
	if (g->pauses++ == 0) {
		g->first_err = err;
		g->logged = warning_due(g);
		if (g->logged)
			log_warning("%s: cannot accept: %s; pausing accepts for %d ms at a time "
			    "until descriptors are free (raise LimitNOFILE= or ulimit -n)", g->what,
			    strerror(err), ACCEPT_GUARD_PAUSE_MS);
	}
	return true;
}

void
accept_guard_on_accept(struct accept_guard *g)
{
	if (g->pauses == 0)
		return;
	if (g->logged)
		log_notice("%s: accepting again after %u pause(s) for %s", g->what, g->pauses,
	    strerror(g->first_err));
	g->pauses = 0;
}

unsigned
accept_guard_pauses(const struct accept_guard *g)
{
	return g->pauses;
}
