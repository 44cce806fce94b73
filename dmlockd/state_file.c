/*
 * state_file.c: the state directory, its epoch floor file and its
 * membership file (see state_file.h): creating and locking the directory,
 * the two parsers and the membership formatter, reading at start, and the
 * one atomic, durable store both files go through.  Anything that is not
 * exactly a floor or a membership record is refused at start, never
 * guessed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm_types.h"
#include "log.h"
#include "state_file.h"

#define STATE_FLOOR_TMP		STATE_FLOOR_FILE ".tmp"
#define STATE_RECORD_TMP	STATE_RECORD_FILE ".tmp"

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

/* The membership file's parser: a cursor over text[0, len). */
struct cursor {
	const char	*p;
	const char	*end;
};

/* Take the literal lit (no NUL inside the text) if it comes next. */
static bool
take_literal(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* A decimal below 2^64, no sign, no leading zero (but "0"). */
static bool
take_decimal(struct cursor *c, uint64_t *ret)
{
	const char *start = c->p;
	uint64_t v = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (c->p > start && *start == '0')
			return false;			/* leading zero */
		if (v > (UINT64_MAX - d) / 10)
			return false;			/* 2^64 or more */
		v = v * 10 + d;
		c->p++;
	}
	*ret = v;
	return c->p > start;
}

/* A valid node name up to the next space or newline, copied to buf. */
static bool
take_name(struct cursor *c, char buf[DM_NODE_NAME_MAX + 1])
{
	const char *start = c->p;
	size_t n;

	while (c->p < c->end && *c->p != ' ' && *c->p != '\n')
		c->p++;
	n = (size_t)(c->p - start);
	if (!dm_node_name_valid(start, n))
		return false;
	memcpy(buf, start, n);
	buf[n] = '\0';
	return true;
}

static bool
name_among(const char names[][DM_NODE_NAME_MAX + 1], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

int
state_record_parse(const char *text, size_t len, struct state_record *ret)
{
	struct cursor c = { .p = text, .end = text + len };
	struct dm_member_record view;

	ret->n_names = 0;
	ret->n_removals = 0;
	ret->promised = false;
	ret->n_dead = 0;
	if (!take_literal(&c, "label ") || !take_decimal(&c, &ret->label) ||
	    !take_literal(&c, "\n"))
		return -EBADMSG;
	while (c.p < c.end) {
		if (take_literal(&c, "member ")) {
			char *name = ret->names[ret->n_names];
			if (ret->n_removals > 0 || ret->n_dead > 0 || ret->promised ||
			    ret->n_names == DM_NODES_MAX ||
			    !take_name(&c, name) || !take_literal(&c, "\n") ||
			    name_among(ret->names, ret->n_names, name))
				return -EBADMSG;
			ret->n_names++;
		} else if (take_literal(&c, "promise ")) {
			/* At most one, after every other line. */
			if (ret->promised || !take_decimal(&c, &ret->promise_label) ||
			    !take_literal(&c, " ") || !take_name(&c, ret->promise_prober) ||
			    !take_literal(&c, "\n"))
				return -EBADMSG;
			ret->promised = true;
		} else if (take_literal(&c, "removed ")) {
			char *name = ret->removed[ret->n_removals];
			if (ret->n_dead > 0 || ret->promised || ret->n_removals == DM_NODES_MAX ||
			    !take_name(&c, name) ||
			    !take_literal(&c, " ") ||
			    !take_decimal(&c, &ret->ballots[ret->n_removals]) ||
			    !take_literal(&c, "\n") ||
			    name_among(ret->removed, ret->n_removals, name))
				return -EBADMSG;
			ret->n_removals++;
		} else if (take_literal(&c, "dead ")) {
			/* One per name, none of incarnation 0 (never noted). */
			char *name = ret->dead_names[ret->n_dead];
			uint64_t *incarnation = &ret->dead_incarnations[ret->n_dead];
			if (ret->promised || ret->n_dead == DM_NODES_MAX || !take_name(&c, name) ||
			    !take_literal(&c, " ") || !take_decimal(&c, incarnation) ||
			    *incarnation == 0 || !take_literal(&c, "\n") ||
			    name_among(ret->dead_names, ret->n_dead, name))
				return -EBADMSG;
			ret->n_dead++;
		} else {
			return -EBADMSG;
		}
	}
	state_record_view(ret, &view);
	return 0;
}

void
state_record_view(struct state_record *sr, struct dm_member_record *ret)
{
	for (size_t i = 0; i < sr->n_names; i++)
		sr->name_ptrs[i] = sr->names[i];
	for (size_t i = 0; i < sr->n_removals; i++)
		sr->removals[i] = (struct dm_agreed_removal){
			.name = sr->removed[i], .ballot = sr->ballots[i] };
	for (size_t i = 0; i < sr->n_dead; i++)
		sr->dead[i] = (struct dm_dead_incarnation){
			.name = sr->dead_names[i], .incarnation = sr->dead_incarnations[i] };
	*ret = (struct dm_member_record){
		.label = sr->label,
		.names = sr->n_names > 0 ? sr->name_ptrs : NULL,
		.n_names = sr->n_names,
		.removals = sr->n_removals > 0 ? sr->removals : NULL,
		.n_removals = sr->n_removals,
		.promise_prober = sr->promised ? sr->promise_prober : NULL,
		.promise_label = sr->promised ? sr->promise_label : 0,
		.dead = sr->n_dead > 0 ? sr->dead : NULL,
		.n_dead = sr->n_dead,
	};
}


/* Append to buf at *at what fmt prints; false if it does not fit. */
static bool __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *at)
		return false;
	*at += (size_t)n;
	return true;
}

int
state_record_format(const struct dm_member_record *r, char *buf, size_t size)
{
	size_t at = 0;

	if (r->n_names > DM_NODES_MAX || r->n_removals > DM_NODES_MAX || r->n_dead > DM_NODES_MAX ||
	    (r->n_names > 0 && r->names == NULL) || (r->n_removals > 0 && r->removals == NULL) ||
	    (r->n_dead > 0 && r->dead == NULL))
		return -EINVAL;
	for (size_t i = 0; i < r->n_names; i++) {
		if (!dm_node_name_str_valid(r->names[i]))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(r->names[j], r->names[i]) == 0)
				return -EINVAL;
	}
	if (r->promise_prober != NULL && !dm_node_name_str_valid(r->promise_prober))
		return -EINVAL;
	for (size_t i = 0; i < r->n_removals; i++) {
		if (!dm_node_name_str_valid(r->removals[i].name))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(r->removals[j].name, r->removals[i].name) == 0)
				return -EINVAL;
	}
	for (size_t i = 0; i < r->n_dead; i++) {
		if (!dm_node_name_str_valid(r->dead[i].name) || r->dead[i].incarnation == 0)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(r->dead[j].name, r->dead[i].name) == 0)
				return -EINVAL;
	}
	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (!append(buf, size, &at, "label %" PRIu64 "\n", r->label))
		return -ENOSPC;
	for (size_t i = 0; i < r->n_names; i++)
		if (!append(buf, size, &at, "member %s\n", r->names[i]))
			return -ENOSPC;
	for (size_t i = 0; i < r->n_removals; i++)
		if (!append(buf, size, &at, "removed %s %" PRIu64 "\n", r->removals[i].name,
		    r->removals[i].ballot))
			return -ENOSPC;
	for (size_t i = 0; i < r->n_dead; i++)
		if (!append(buf, size, &at, "dead %s %" PRIu64 "\n", r->dead[i].name,
		    r->dead[i].incarnation))
			return -ENOSPC;
	if (r->promise_prober != NULL &&
	    !append(buf, size, &at, "promise %" PRIu64 " %s\n", r->promise_label, r->promise_prober))
		return -ENOSPC;
	return (int)at;
}

/* Read the file name of sd into buf: *len bytes (at most size; size
 * bytes read means the file may be longer).  0, -ENOENT (not logged), or
 * -errno (logged). */
static int
read_state_file(const struct state_dir *sd, const char *name, char *buf, size_t size,
    size_t *len)
{
	size_t at = 0;
	ssize_t n;
	int fd, r = 0;

	fd = openat(sd->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT :
		    log_error_errno(errno, "cannot read %s/%s", sd->path, name);
	while (at < size) {
		n = read(fd, buf + at, size - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		at += (size_t)n;
	}
	close(fd);
	if (r < 0)
		return log_error_errno(r, "cannot read %s/%s", sd->path, name);
	*len = at;
	return 0;
}

static int
read_floor(const struct state_dir *sd, uint64_t *ret)
{
	char text[32];
	size_t n = 0;
	int r;

	r = read_state_file(sd, STATE_FLOOR_FILE, text, sizeof(text), &n);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = state_floor_parse(text, n, ret);
	if (r < 0)
		log_error_errno(r, "%s/%s is not an epoch floor (one decimal number and a newline);"
		    " restore it, or remove it only if no fencing token this node ever granted"
		    " or saw matters any more", sd->path, STATE_FLOOR_FILE);
	return r;
}

int
state_dir_read_record(const struct state_dir *sd, struct state_record *ret)
{
	const size_t size = STATE_RECORD_TEXT_MAX + 1;	/* one more: too long */
	char *text;
	size_t n = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	text = malloc(size);
	if (text == NULL)
		return log_error_errno(ENOMEM, "cannot read %s/%s", sd->path, STATE_RECORD_FILE);
	r = read_state_file(sd, STATE_RECORD_FILE, text, size, &n);
	if (r == 0)
		r = n < size ? state_record_parse(text, n, ret) : -EBADMSG;
	free(text);
	if (r == -ENOENT) {
		memset(ret, 0, sizeof(*ret));		/* no record stored */
		return 0;
	}
	if (r == -EBADMSG) {
		memset(ret, 0, sizeof(*ret));
		log_error_errno(r, "%s/%s is not a membership record (a \"label\" line, then"
		    " \"member\" lines, then \"removed\" lines, then \"dead\" lines, then a"
		    " \"promise\" line;"
		    " dmlockd(8), FILES): restore it;"
		    " remove it only as dmlockd(8), RECOVERY, describes", sd->path,
		    STATE_RECORD_FILE);
	}
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
open_tmp(const struct state_dir *sd, const char *tmp)
{
	return openat(sd->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
}

static int
write_all(int fd, const char *text, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Replace the file name of sd with text, atomically and durably: the
 * temporary file tmp, fsync, rename, fsync of the directory.  Out of
 * descriptors (clients, peers), the spare one is given up for the file and
 * taken back after: what the engine asks to store must be stored, or the
 * daemon has to stop.  Logged; -errno. */
static int
store_state_file(struct state_dir *sd, const char *name, const char *tmp, const char *text,
    size_t len)
{
	int fd, r = 0;

	fd = open_tmp(sd, tmp);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && sd->spare_fd >= 0) {
		close(sd->spare_fd);
		sd->spare_fd = -1;
		fd = open_tmp(sd, tmp);
	}
	if (fd < 0) {
		r = log_error_errno(errno, "cannot create %s/%s", sd->path, tmp);
		if (sd->spare_fd < 0)
			sd->spare_fd = open_spare();
		return r;
	}
	r = write_all(fd, text, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0)
		log_error_errno(r, "cannot write %s/%s", sd->path, tmp);
	if (close(fd) < 0 && r == 0)
		r = log_error_errno(errno, "cannot write %s/%s", sd->path, tmp);
	if (r == 0 && renameat(sd->fd, tmp, sd->fd, name) < 0)
		r = log_error_errno(errno, "cannot rename %s/%s", sd->path, tmp);
	if (r == 0 && fsync(sd->fd) < 0)
		r = log_error_errno(errno, "cannot sync the state directory %s", sd->path);
	if (sd->spare_fd < 0)
		sd->spare_fd = open_spare();	/* the file's descriptor is free again */
	return r;
}

int
state_dir_store_floor(struct state_dir *sd, uint64_t floor)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", floor);

	return store_state_file(sd, STATE_FLOOR_FILE, STATE_FLOOR_TMP, text, (size_t)len);
}

int
state_dir_store_record(struct state_dir *sd, const struct dm_member_record *r)
{
	char *text = malloc(STATE_RECORD_TEXT_MAX + 1);
	int len, ret;

	if (text == NULL)
		return log_error_errno(ENOMEM, "cannot store %s/%s", sd->path, STATE_RECORD_FILE);
	len = state_record_format(r, text, STATE_RECORD_TEXT_MAX + 1);
	if (len < 0) {
		ret = log_error_errno(len == -ENOSPC ? EINVAL : -len,
		    "cannot store %s/%s: the engine's membership record is invalid", sd->path,
		    STATE_RECORD_FILE);
	} else {
		ret = store_state_file(sd, STATE_RECORD_FILE, STATE_RECORD_TMP, text, (size_t)len);
	}
	free(text);
	return ret;
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
