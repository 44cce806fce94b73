/*
 * cluster_locker.c: a load client for the multi-daemon tests.  Through
 * libdmlock it takes one lock COUNT times in a row and, inside each
 * critical section, appends an "enter" and an "exit" line carrying the
 * fencing token, this node's name and a client id to a shared log (one
 * O_APPEND write per line, so lines of concurrent clients never mix).
 * The log is judged by tests/cluster/check-mutex.awk, not here: this
 * program only reports its own failures (acquire, release or a lock that
 * was not held any more when the section ended).
 *
 * usage: cluster_locker -S SOCKET -l LOG -n NAME -c COUNT -i ID [-w USEC]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dmlock.h"

#define LOCKER_COUNT_MAX 1000000L
#define LOCKER_WORK_MAX	 1000000L

struct locker_options {
	const char	*socket;
	const char	*log;
	const char	*name;
	const char	*id;
	long		 count;
	long		 work_us;
};

static void
usage(void)
{
	fprintf(stderr, "usage: cluster_locker -S SOCKET -l LOG -n NAME -c COUNT -i ID [-w USEC]\n");
}

static int
parse_long(const char *s, long max, long *ret)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int
parse_options(int argc, char **argv, struct locker_options *o)
{
	int c;
	while ((c = getopt(argc, argv, "S:l:n:c:i:w:")) != -1) {
		switch (c) {
		case 'S': o->socket = optarg; break;
		case 'l': o->log = optarg; break;
		case 'n': o->name = optarg; break;
		case 'i': o->id = optarg; break;
		case 'c':
			if (parse_long(optarg, LOCKER_COUNT_MAX, &o->count) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_long(optarg, LOCKER_WORK_MAX, &o->work_us) < 0)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || o->socket == NULL || o->log == NULL || o->name == NULL ||
	    o->id == NULL || o->count <= 0)
		return -EINVAL;
	return 0;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One line, one write(2) on an O_APPEND descriptor. */
static int
log_line(int fd, const char *what, uint64_t token, const char *node, const char *id)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s %" PRIu64 " %s %s %" PRIu64 "\n", what, token,
	    node, id, now_ns());
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EOVERFLOW;
	ssize_t w = write(fd, line, (size_t)n);
	if (w != n)
		return w < 0 ? -errno : -EIO;
	return 0;
}

static int
one_section(struct dmlock_conn *conn, int fd, const struct locker_options *o)
{
	struct dmlock_lock *lock = NULL;
	const char *node = dmlock_conn_node(conn);
	int r = dmlock_acquire(conn, o->name, DMLOCK_EXCLUSIVE, DMLOCK_FOREVER, &lock);
	if (r < 0) {
		fprintf(stderr, "cluster_locker %s: acquire %s: %s\n", o->id, o->name,
		    dmlock_strerror(r));
		return r;
	}
	uint64_t token = dmlock_lock_token(lock);
	r = log_line(fd, "enter", token, node, o->id);
	if (r == 0 && o->work_us > 0)
		usleep((useconds_t)o->work_us);
	if (r == 0 && dmlock_lock_check(lock) < 0) {
		fprintf(stderr, "cluster_locker %s: lock %s (token %" PRIu64 ") lost inside "
		    "the critical section\n", o->id, o->name, token);
		r = -ENOLCK;
	}
	if (r == 0)
		r = log_line(fd, "exit", token, node, o->id);
	int rr = dmlock_release(lock);
	if (r == 0 && rr < 0) {
		fprintf(stderr, "cluster_locker %s: release %s: %s\n", o->id, o->name,
		    dmlock_strerror(rr));
		r = rr;
	}
	return r;
}

int
main(int argc, char **argv)
{
	struct locker_options o = { 0 };
	struct dmlock_conn *conn = NULL;
	int fd = -1, r;

	if (parse_options(argc, argv, &o) < 0) {
		usage();
		return 64;
	}
	fd = open(o.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "cluster_locker: %s: %s\n", o.log, strerror(errno));
		return 1;
	}
	r = dmlock_connect(o.socket, &conn);
	if (r < 0) {
		fprintf(stderr, "cluster_locker: connect %s: %s\n", o.socket, dmlock_strerror(r));
		goto out;
	}
	for (long i = 0; i < o.count && r == 0; i++)
		r = one_section(conn, fd, &o);
out:
	dmlock_close(conn);
	close(fd);
	return r < 0 ? 1 : 0;
}
