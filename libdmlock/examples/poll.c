/*
 * poll.c: libdmlock from an event loop (plain poll(2) here; libevent or
 * glib work the same way: watch dmlock_fd() for dmlock_events(), wake up
 * after dmlock_timeout(), call dmlock_process()).
 *
 * It submits an exclusive acquire and, on the same name, a try-once
 * acquire that must be refused while the first is held; when both have an
 * answer it releases the first and exits once the daemon confirms.
 *
 *   cc poll.c $(pkg-config --cflags --libs libdmlock) -o poll
 *   ./poll [LOCK-NAME]
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <dmlock.h>

struct app {
	int	answers;	/* GRANTED or DENIED seen */
	bool	released;
	bool	lost;
};

static void
on_lock_event(struct dmlock_lock *lock, enum dmlock_event event, int error, void *userdata)
{
	struct app *app = userdata;
	const char *name = dmlock_lock_name(lock);

	switch (event) {
	case DMLOCK_EVENT_GRANTED:
		printf("granted %s token %" PRIu64 "\n", name, dmlock_lock_token(lock));
		app->answers++;
		break;
	case DMLOCK_EVENT_DENIED:
		printf("denied %s: %s\n", name, dmlock_strerror(error));
		app->answers++;
		break;
	case DMLOCK_EVENT_EXTENDED:
		break;
	case DMLOCK_EVENT_LOST:
		printf("lost %s: %s\n", name, dmlock_strerror(error));
		app->lost = true;
		break;
	case DMLOCK_EVENT_RELEASED:
		printf("released %s\n", name);
		app->released = true;
		break;
	}
}

/* One turn of the loop: wait for the socket or the next deadline. */
static int
loop_once(struct dmlock_conn *conn)
{
	struct pollfd pfd = { .fd = dmlock_fd(conn), .events = dmlock_events(conn) };
	int timeout = dmlock_timeout(conn);
	if (poll(&pfd, 1, timeout < 0 ? 10000 : timeout) < 0 && errno != EINTR)
		return -errno;
	return dmlock_process(conn);
}

int
main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "example/poll";
	struct app app = { 0 };
	struct dmlock_conn *conn;
	struct dmlock_lock *first, *second;
	int r;

	r = dmlock_connect(NULL, &conn);
	if (r < 0) {
		fprintf(stderr, "poll: cannot reach dmlockd: %s\n", dmlock_strerror(r));
		return 69;
	}
	r = dmlock_submit_acquire(conn, name, DMLOCK_EXCLUSIVE, 5000, on_lock_event, &app, &first);
	if (r == 0)
		r = dmlock_submit_acquire(conn, name, DMLOCK_EXCLUSIVE, DMLOCK_TRY, on_lock_event,
		    &app, &second);
	if (r < 0) {
		fprintf(stderr, "poll: submit: %s\n", dmlock_strerror(r));
		return 1;
	}

	for (int turns = 0; app.answers < 2 && r == 0 && turns < 100; turns++)
		r = loop_once(conn);
	if (r == 0 && dmlock_lock_state(first) == DMLOCK_STATE_HELD) {
		r = dmlock_submit_release(first);
		for (int turns = 0; !app.released && r == 0 && turns < 100; turns++)
			r = loop_once(conn);
	}
	if (r < 0)
		fprintf(stderr, "poll: %s\n", dmlock_strerror(r));

	bool ok = r == 0 && app.released && !app.lost &&
	    dmlock_lock_state(second) == DMLOCK_STATE_DENIED;
	dmlock_lock_free(first);
	dmlock_lock_free(second);
	dmlock_close(conn);
	return ok ? 0 : 1;
}
