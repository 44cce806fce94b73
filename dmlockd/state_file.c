/*
 * state_file.c: the state directory and its epoch floor file (see
 * state_file.h).  Format: the floor in decimal and a newline; anything else
 * is refused at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "state_file.h"

#define STATE_FLOOR_TMP	STATE_FLOOR_FILE ".tmp"

int
state_floor_parse(const char *text, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len < 2 || text[len - 1] != '\n')
		return -EBADMSG;
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] < '0' || text[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(text[i] - '0');
	}
	*ret = v;
	return 0;
}

static int
read_floor(const struct state_dir *sd, uint64_t *ret)
{
	char text[32];
	ssize_t n;
	int fd, r;

	fd = openat(sd->fd, STATE_FLOOR_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 :
		    log_error_errno(errno, "cannot read %s/%s", sd->path, STATE_FLOOR_FILE);
	n = read(fd, text, sizeof(text));
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return log_error_errno(r, "cannot read %s/%s", sd->path, STATE_FLOOR_FILE);
	r = state_floor_parse(text, (size_t)n, ret);
	if (r < 0)
		log_error_errno(r, "%s/%s is not an epoch floor (one decimal number and a newline);"
		    " restore it, or remove it only if no fencing token this node ever granted"
		    " or saw matters any more", sd->path, STATE_FLOOR_FILE);
	return r;
}

int
state_dir_open(const char *path, struct state_dir *ret, uint64_t *floor)
{
	struct state_dir sd = { .fd = -1, .path = path };
	int r;

	*floor = 0;
	*ret = sd;
	if (mkdir(path, 0750) < 0 && errno != EEXIST)
		return log_error_errno(errno, "cannot create the state directory %s", path);
	sd.fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sd.fd < 0)
		return log_error_errno(errno, "cannot open the state directory %s", path);
	if (flock(sd.fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ?
		    log_error_errno(EBUSY, "the state directory %s is in use by another dmlockd"
		    " (each daemon needs its own: --state-dir, [node] state_directory)", path) :
		    log_error_errno(errno, "cannot lock the state directory %s", path);
		goto fail;
	}
	if (faccessat(sd.fd, ".", W_OK, AT_EACCESS) < 0) {
		r = log_error_errno(errno, "cannot write to the state directory %s", path);
		goto fail;
	}
	r = read_floor(&sd, floor);
	if (r < 0)
		goto fail;
	*ret = sd;
	return 0;
fail:
	close(sd.fd);
	return r;
}

int
state_dir_store_floor(const struct state_dir *sd, uint64_t floor)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", floor);
	int fd, r = 0;

	fd = openat(sd->fd, STATE_FLOOR_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0640);
	if (fd < 0)
		return log_error_errno(errno, "cannot create %s/%s", sd->path, STATE_FLOOR_TMP);
	errno = 0;
	if (write(fd, text, (size_t)len) != len || fsync(fd) < 0)
		r = log_error_errno(errno != 0 ? errno : EIO, "cannot write %s/%s", sd->path,
		    STATE_FLOOR_TMP);
	if (close(fd) < 0 && r == 0)
		r = log_error_errno(errno, "cannot write %s/%s", sd->path, STATE_FLOOR_TMP);
	if (r == 0 && renameat(sd->fd, STATE_FLOOR_TMP, sd->fd, STATE_FLOOR_FILE) < 0)
		r = log_error_errno(errno, "cannot rename %s/%s", sd->path, STATE_FLOOR_TMP);
	if (r == 0 && fsync(sd->fd) < 0)
		r = log_error_errno(errno, "cannot sync the state directory %s", sd->path);
	return r;
}

void
state_dir_close(struct state_dir *sd)
{
	if (sd->fd >= 0)
		close(sd->fd);
	sd->fd = -1;
}
