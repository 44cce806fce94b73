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

static int
open_spare(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* The last '/' of dir before its last component (trailing slashes
 * skipped), or NULL if there is none. */
static char *
last_separator(char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	for (size_t i = len; i-- > 0;)
		if (dir[i] == '/')
			return &dir[i];
	return NULL;
}

/* fsync the directory that holds dir, so that a directory just made there
 * survives a crash.  dir is modified during the call and restored. */
static int
sync_parent(char *dir)
{
	char *slash = last_separator(dir);
	int fd, r = 0;

	if (slash == NULL) {
		fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else if (slash == dir) {
		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		*slash = '\0';
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*slash = '/';
	}
	if (fd < 0 || fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	return r;
}

/* Where make_dirs() failed, for the message. */
struct mkdir_failure {
	const char	*what;		/* "create" or "sync the directory holding" */
	char		 dir[512];
};

static int
mkdir_failed(struct mkdir_failure *f, const char *what, const char *dir, int r)
{
	f->what = what;
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	return r;
}

/* mkdir dir with mode, its missing parents with parent_mode (like mkdir
 * -p), each followed by an fsync of the directory it was made in.  dir is
 * modified during the call and restored.  0, or -errno and *f. */
static int
make_dirs(char *dir, mode_t mode, mode_t parent_mode, unsigned depth, struct mkdir_failure *f)
{
	int r;

	if (mkdir(dir, mode) == 0) {
		r = sync_parent(dir);
		return r < 0 ? mkdir_failed(f, "sync the directory holding", dir, r) : 0;
	}
	if (errno == EEXIST)
		return 0;
	if (errno != ENOENT || depth > 64)
		return mkdir_failed(f, "create", dir, -errno);
	/* A parent is missing: make it first. */
	char *slash = last_separator(dir);
	if (slash == NULL || slash == dir)
		return mkdir_failed(f, "create", dir, -ENOENT);
	*slash = '\0';
	r = make_dirs(dir, parent_mode, parent_mode, depth + 1, f);
	*slash = '/';
	if (r < 0)
		return r;
	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		return mkdir_failed(f, "create", dir, -errno);
	r = sync_parent(dir);
	return r < 0 ? mkdir_failed(f, "sync the directory holding", dir, r) : 0;
}

int
state_dir_open(const char *path, mode_t parent_mode, struct state_dir *ret, uint64_t *floor)
{
	struct state_dir sd = { .fd = -1, .path = path, .spare_fd = -1 };
	char *dir;
	int r;

	*floor = 0;
	*ret = sd;
	dir = strdup(path);
	if (dir == NULL)
		return log_error_errno(ENOMEM, "cannot create the state directory %s", path);
	struct mkdir_failure f;
	r = make_dirs(dir, 0750, parent_mode, 0, &f);
	free(dir);
	if (r < 0 && strcmp(f.dir, path) == 0)
		return log_error_errno(r, "cannot %s the state directory %s", f.what, path);
	if (r < 0)
		return log_error_errno(r, "cannot %s %s for the state directory %s", f.what, f.dir,
		    path);
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
	sd.spare_fd = open_spare();
	if (sd.spare_fd < 0) {
		r = log_error_errno(errno, "cannot open /dev/null");
		goto fail;
	}
	*ret = sd;
	return 0;
fail:
	close(sd.fd);
	return r;
}

static int
open_floor_tmp(const struct state_dir *sd)
{
	return openat(sd->fd, STATE_FLOOR_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0640);
}

int
state_dir_store_floor(struct state_dir *sd, uint64_t floor)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", floor);
	int fd, r = 0;

	fd = open_floor_tmp(sd);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && sd->spare_fd >= 0) {
		/* Out of descriptors (clients, peers): use the spare one.  The
		 * floor must be stored, or the daemon has to stop. */
		close(sd->spare_fd);
		sd->spare_fd = -1;
		fd = open_floor_tmp(sd);
	}
	if (fd < 0) {
		r = log_error_errno(errno, "cannot create %s/%s", sd->path, STATE_FLOOR_TMP);
		if (sd->spare_fd < 0)
			sd->spare_fd = open_spare();
		return r;
	}
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
	if (sd->spare_fd < 0)
		sd->spare_fd = open_spare();	/* the file's descriptor is free again */
	return r;
}

void
state_dir_close(struct state_dir *sd)
{
	if (sd->fd >= 0) {
		close(sd->fd);
		if (sd->spare_fd >= 0)
			close(sd->spare_fd);
	}
	sd->fd = -1;
	sd->spare_fd = -1;
}
