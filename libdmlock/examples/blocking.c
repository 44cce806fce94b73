/*
 * blocking.c: the simplest use of libdmlock.  Takes a cluster-wide lock,
 * waiting at most 5 seconds, does its "work" while checking the lock is
 * still held, and releases it.
 *
 *   cc blocking.c $(pkg-config --cflags --libs libdmlock) -o blocking
 *   ./blocking [LOCK-NAME]        (socket: $DMLOCK_SOCKET or the default)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <dmlock.h>

int
main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "example/blocking";
	struct dmlock_conn *conn;
	struct dmlock_lock *lock;
	int r;

	r = dmlock_connect(NULL, &conn);
	if (r < 0) {
		fprintf(stderr, "blocking: cannot reach dmlockd: %s\n", dmlock_strerror(r));
		return 69;
	}
	r = dmlock_acquire(conn, name, DMLOCK_EXCLUSIVE, 5000, &lock);
	if (r == -EBUSY || r == -ETIMEDOUT) {
		fprintf(stderr, "blocking: %s is busy: %s\n", name, dmlock_strerror(r));
		dmlock_close(conn);
		return 75;
	}
	if (r < 0) {
		fprintf(stderr, "blocking: acquire %s: %s\n", name, dmlock_strerror(r));
		dmlock_close(conn);
		return 1;
	}
	printf("acquired %s token %" PRIu64 "\n", name, dmlock_lock_token(lock));

	/* The critical section.  Pass the token to resources that can check
	 * it, and check the lock before each step that needs it. */
	for (int step = 0; step < 3; step++) {
		r = dmlock_lock_check(lock);
		if (r < 0) {
			fprintf(stderr, "blocking: lock lost: %s\n",
			    dmlock_strerror(dmlock_lock_error(lock)));
			dmlock_release(lock);
			dmlock_close(conn);
			return 1;
		}
		printf("working, step %d\n", step);
	}

	r = dmlock_release(lock);
	if (r < 0) {
		fprintf(stderr, "blocking: release: %s\n", dmlock_strerror(r));
		dmlock_close(conn);
		return 1;
	}
	printf("released %s\n", name);
	dmlock_close(conn);
	return 0;
}
