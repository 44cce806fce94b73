/*
 * check_state_file.c: the state directory, its epoch floor file and its
 * membership file (dmlockd/state_file.c): the parsers' accepted and
 * refused forms, the membership formatter, a stored floor and a stored
 * record read back after "restart", the directory created when missing
 * (with its missing parents, 0700 for the XDG default), one daemon per
 * directory (flock), a file that is not a floor or not a record refused
 * rather than guessed, and a floor or a record stored by a process out of
 * descriptors.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm_types.h"
#include "dmlockd/state_file.h"

static char base[64];

static void
setup(void)
{
	snprintf(base, sizeof(base), "/tmp/dmlock-state-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static int
remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void
teardown(void)
{
	nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static mode_t
mode_of(const char *fmt, const char *arg)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), fmt, base, arg);
	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(S_ISDIR(st.st_mode), "%s is not a directory", path);
	return st.st_mode & 07777;
}

START_TEST(parse_forms)
{
	uint64_t v = 99;

	ck_assert_int_eq(state_floor_parse("0\n", 2, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(state_floor_parse("8388607\n", 8, &v), 0);
	ck_assert_uint_eq(v, 8388607);
	ck_assert_int_eq(state_floor_parse("7", 1, &v), -EBADMSG);		/* no newline */
	ck_assert_int_eq(state_floor_parse("\n", 1, &v), -EBADMSG);		/* no digits */
	ck_assert_int_eq(state_floor_parse(" 7\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("7\n\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("-1\n", 3, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("99999999999999999999\n", 21, &v), -EBADMSG);
	ck_assert_int_eq(state_floor_parse("", 0, &v), -EBADMSG);
}
END_TEST

START_TEST(store_then_load)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);	/* created */
	ck_assert_uint_eq(floor, 0);					/* nothing stored */
	ck_assert_int_eq(state_dir_store_floor(&sd, 5), 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 12), 0);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 12);
	state_dir_close(&sd);
}
END_TEST

START_TEST(one_daemon_per_directory)
{
	struct state_dir a, b;
	uint64_t floor;
	char path[128];

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &a, &floor), 0);
	ck_assert_int_eq(state_dir_open(path, 0755, &b, &floor), -EBUSY);
	state_dir_close(&a);
	ck_assert_int_eq(state_dir_open(path, 0755, &b, &floor), 0);	/* free again */
	state_dir_close(&b);
}
END_TEST

START_TEST(corrupt_floor_is_refused)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128], file[160];
	int fd;

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	state_dir_close(&sd);
	snprintf(file, sizeof(file), "%s/" STATE_FLOOR_FILE, path);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1x\n", 3), 3);
	close(fd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), -EBADMSG);
	ck_assert_int_eq(sd.fd, -1);
}
END_TEST

/* A fresh account: no ~/.local/state.  The default state directory is
 * made with every missing parent, the parents 0700 (XDG), the directory
 * itself 0750; existing directories keep their modes. */
START_TEST(missing_parents_created)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[192];
	mode_t old = umask(022);

	snprintf(path, sizeof(path), "%s/home/.local/state/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 7), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "home"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local/state"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "home/.local/state/dmlock"), 0750);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 7);
	state_dir_close(&sd);

	/* ~/.local exists (0755): only state/ and dmlock/ are made; a trailing
	 * slash is fine. */
	snprintf(path, sizeof(path), "%s/h2/.local", base);
	ck_assert_int_eq(mkdir(path, 0755), -1);	/* h2 is missing */
	snprintf(path, sizeof(path), "%s/h2", base);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/h2/.local", base);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/h2/.local/state/dmlock/", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local"), 0755);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local/state"), 0700);
	ck_assert_uint_eq(mode_of("%s/%s", "h2/.local/state/dmlock"), 0750);

	/* Other paths: parents with the mode the caller asks. */
	snprintf(path, sizeof(path), "%s/srv/a/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	state_dir_close(&sd);
	ck_assert_uint_eq(mode_of("%s/%s", "srv"), 0755);
	ck_assert_uint_eq(mode_of("%s/%s", "srv/a"), 0755);
	umask(old);
}
END_TEST

/* A parent that is a file: refused with the errno, nothing made past it. */
START_TEST(parent_not_a_directory)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[192];
	int fd;

	snprintf(path, sizeof(path), "%s/file", base);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/file/x/dmlock", base);
	ck_assert_int_eq(state_dir_open(path, 0700, &sd, &floor), -ENOTDIR);
	ck_assert_int_eq(sd.fd, -1);
}
END_TEST

/* A daemon out of descriptors (local clients, peer links: EMFILE) still
 * stores its floor, with the spare descriptor the directory keeps; the
 * daemon used to exit then.  And the spare is back for the next time. */
/* Open the state directory path (into *sd) with at most 64 descriptors,
 * then open /dev/null until none is left (EMFILE), keeping them in fds;
 * how many. */
static int
open_state_out_of_descriptors(const char *path, struct state_dir *sd, int fds[64])
{
	struct rlimit rl = { 64, 64 };
	uint64_t floor;
	int n = 0, fd;

	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_int_eq(state_dir_open(path, 0755, sd, &floor), 0);
	ck_assert_int_ge(sd->spare_fd, 0);
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		ck_assert_int_lt(n, 64);
		fds[n++] = fd;
	}
	ck_assert_int_eq(errno, EMFILE);
	return n;
}

START_TEST(store_floor_out_of_descriptors)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];
	int fds[64], n;

	snprintf(path, sizeof(path), "%s/s", base);
	n = open_state_out_of_descriptors(path, &sd, fds);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(state_dir_store_floor(&sd, 41 + (uint64_t)round), 0);
		ck_assert_int_ge(sd.spare_fd, 0);
		ck_assert_int_lt(open("/dev/null", O_RDONLY), 0);	/* still exhausted */
	}
	while (n > 0)
		close(fds[--n]);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 42);
	state_dir_close(&sd);
}
END_TEST

/* ---- the membership file ---- */

static struct state_record rec, rec2;
static char big[STATE_RECORD_TEXT_MAX + 128];

static int
parse_str(const char *text)
{
	return state_record_parse(text, strlen(text), &rec);
}

/* "label 9", n members m0.., k removals r0.. with ballots 100+i. */
static size_t
make_text(size_t n, size_t k)
{
	size_t at = (size_t)snprintf(big, sizeof(big), "label 9\n");

	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "member m%zu\n", i);
	for (size_t i = 0; i < k; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "removed r%zu %zu\n", i, 100 + i);
	ck_assert_uint_lt(at, sizeof(big) - 1);
	return at;
}

START_TEST(record_parse_accepts)
{
	struct dm_member_record v;

	ck_assert_int_eq(parse_str("label 17\nmember n0\nmember n1\nremoved n3 18\n"), 0);
	ck_assert_uint_eq(rec.label, 17);
	ck_assert_uint_eq(rec.n_names, 2);
	ck_assert_uint_eq(rec.n_removals, 1);
	state_record_view(&rec, &v);
	ck_assert_uint_eq(v.label, 17);
	ck_assert_uint_eq(v.n_names, 2);
	ck_assert_str_eq(v.names[0], "n0");
	ck_assert_str_eq(v.names[1], "n1");
	ck_assert_uint_eq(v.n_removals, 1);
	ck_assert_str_eq(v.removals[0].name, "n3");
	ck_assert_uint_eq(v.removals[0].ballot, 18);

	/* No roster, nothing agreed: the all-zero view. */
	ck_assert_int_eq(parse_str("label 0\n"), 0);
	state_record_view(&rec, &v);
	ck_assert_uint_eq(v.label, 0);
	ck_assert_uint_eq(v.n_names, 0);
	ck_assert_ptr_null(v.names);
	ck_assert_uint_eq(v.n_removals, 0);
	ck_assert_ptr_null(v.removals);

	/* Members only; removals only; every name character; the largest
	 * decimals; a ballot of 0. */
	ck_assert_int_eq(parse_str("label 5\nmember a.b_c-1\nmember Z9\n"), 0);
	ck_assert_uint_eq(rec.n_names, 2);
	ck_assert_str_eq(rec.names[0], "a.b_c-1");
	ck_assert_int_eq(parse_str("label 3\nremoved x 0\nremoved y 18446744073709551615\n"), 0);
	ck_assert_uint_eq(rec.n_names, 0);
	ck_assert_uint_eq(rec.n_removals, 2);
	ck_assert_uint_eq(rec.ballots[0], 0);
	ck_assert_uint_eq(rec.ballots[1], UINT64_MAX);
	ck_assert_int_eq(parse_str("label 18446744073709551615\n"), 0);
	ck_assert_uint_eq(rec.label, UINT64_MAX);

	/* One name both a member and removed (different lists): allowed. */
	ck_assert_int_eq(parse_str("label 4\nmember n1\nremoved n1 5\n"), 0);

	/* A 63-byte name. */
	char name[DM_NODE_NAME_MAX + 1], text[256];
	memset(name, 'a', DM_NODE_NAME_MAX);
	name[DM_NODE_NAME_MAX] = '\0';
	snprintf(text, sizeof(text), "label 1\nmember %s\nremoved %s 2\n", name, name);
	ck_assert_int_eq(parse_str(text), 0);
	ck_assert_str_eq(rec.names[0], name);
	ck_assert_str_eq(rec.removed[0], name);
}
END_TEST

START_TEST(record_parse_refuses)
{
	static const char *const bad[] = {
		"",					/* empty */
		"label 17",				/* no newline */
		"label 17\nmember n0",			/* no newline on the last line */
		"label\n",				/* no number */
		"label \n",
		"label 017\n",				/* leading zero */
		"label 00\n",
		"label +1\n",				/* sign */
		"label -1\n",
		"label 1x\n",
		"label 18446744073709551616\n",		/* 2^64 */
		"label 99999999999999999999\n",
		"label  1\n",				/* two spaces */
		" label 1\n",
		"label 1 \n",				/* trailing space */
		"label 1\r\n",				/* CRLF */
		"Label 1\n",
		"label 1\n\n",				/* blank line */
		"member n0\nlabel 1\n",			/* label first */
		"label 1\nlabel 2\n",			/* twice */
		"label 1\nmember n0\nmember n0\n",	/* duplicate member */
		"label 1\nremoved n3 1\nremoved n3 2\n",	/* duplicate removal */
		"label 1\nremoved n3 1\nmember n0\n",	/* wrong order */
		"label 1\nmember -n0\n",		/* bad name */
		"label 1\nmember n/0\n",
		"label 1\nmember \n",			/* empty name */
		"label 1\nmember n0 n1\n",
		"label 1\nmember  n0\n",
		"label 1\nremoved n3\n",		/* no ballot */
		"label 1\nremoved n3 \n",
		"label 1\nremoved n3  1\n",
		"label 1\nremoved n3 01\n",		/* leading zero */
		"label 1\nremoved n3 18446744073709551616\n",	/* overflow */
		"label 1\nremoved -x 1\n",
		"label 1\nmembers n0\n",
		"label 1\nremove n3 1\n",
		"label 1\nmember n0\nextra\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_str(bad[i]) == -EBADMSG, "accepted: \"%s\"", bad[i]);

	/* A NUL inside a name or after the last newline. */
	ck_assert_int_eq(state_record_parse("label 1\nmember n\0" "0\n", 17, &rec), -EBADMSG);
	ck_assert_int_eq(state_record_parse("label 1\n\0", 9, &rec), -EBADMSG);
	ck_assert_int_eq(state_record_parse("label 1\n", 8, &rec), 0);	/* the control */

	/* A 64-byte name. */
	char name[DM_NODE_NAME_MAX + 2], text[256];
	memset(name, 'a', DM_NODE_NAME_MAX + 1);
	name[DM_NODE_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof(text), "label 1\nmember %s\n", name);
	ck_assert_int_eq(parse_str(text), -EBADMSG);
	snprintf(text, sizeof(text), "label 1\nremoved %s 1\n", name);
	ck_assert_int_eq(parse_str(text), -EBADMSG);
}
END_TEST

START_TEST(record_parse_limits)
{
	size_t len;

	len = make_text(DM_NODES_MAX, DM_NODES_MAX);
	ck_assert_int_eq(state_record_parse(big, len, &rec), 0);
	ck_assert_uint_eq(rec.n_names, DM_NODES_MAX);
	ck_assert_uint_eq(rec.n_removals, DM_NODES_MAX);
	ck_assert_str_eq(rec.names[DM_NODES_MAX - 1], "m255");
	ck_assert_uint_eq(rec.ballots[DM_NODES_MAX - 1], 355);
	len = make_text(DM_NODES_MAX + 1, 0);
	ck_assert_int_eq(state_record_parse(big, len, &rec), -EBADMSG);
	len = make_text(0, DM_NODES_MAX + 1);
	ck_assert_int_eq(state_record_parse(big, len, &rec), -EBADMSG);
}
END_TEST

START_TEST(record_format)
{
	const char *names[] = { "n0", "n1" };
	struct dm_agreed_removal removals[] = { { "n3", 18 } };
	struct dm_member_record r = { 17, names, 2, removals, 1, NULL, 0, NULL, 0 };
	char buf[128];
	struct dm_member_record v;

	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), 43);
	ck_assert_str_eq(buf, "label 17\nmember n0\nmember n1\nremoved n3 18\n");
	ck_assert_int_eq(state_record_format(&r, buf, 43), -ENOSPC);	/* no room for the NUL */
	ck_assert_int_eq(state_record_format(&r, buf, 44), 43);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 0 }, buf, sizeof(buf)), 8);
	ck_assert_str_eq(buf, "label 0\n");

	/* What the file could not hold, or could not read back, is refused. */
	const char *dup[] = { "n0", "n0" };
	const char *invalid[] = { "n 0" };
	const char *null_name[] = { NULL };
	struct dm_agreed_removal dup_removals[] = { { "n3", 1 }, { "n3", 2 } };
	struct dm_agreed_removal bad_removal[] = { { "-n3", 1 } };
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, dup, 2, NULL, 0,
	    NULL, 0, NULL, 0 },
	    buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, invalid, 1, NULL, 0,
	    NULL, 0, NULL, 0 },
	    buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, null_name, 1, NULL, 0,
	    NULL, 0, NULL, 0 },
	    buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, NULL, 0,
	    dup_removals, 2, NULL, 0, NULL, 0 }, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, NULL, 0,
	    bad_removal, 1, NULL, 0, NULL, 0 }, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(state_record_format(&(struct dm_member_record){ 1, names,
	    DM_NODES_MAX + 1, NULL, 0, NULL, 0, NULL, 0 }, buf, sizeof(buf)), -EINVAL);

	/* The largest record fits in STATE_RECORD_TEXT_MAX and round-trips. */
	static char maxnames[DM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	static const char *maxptrs[DM_NODES_MAX];
	static struct dm_agreed_removal maxrem[DM_NODES_MAX];
	static struct dm_dead_incarnation maxdead[DM_NODES_MAX];
	for (size_t i = 0; i < DM_NODES_MAX; i++) {
		memset(maxnames[i], 'x', DM_NODE_NAME_MAX);
		snprintf(maxnames[i], sizeof(maxnames[i]), "%03zu", i);
		maxnames[i][3] = 'x';			/* 63 bytes, unique */
		maxptrs[i] = maxnames[i];
		maxrem[i] = (struct dm_agreed_removal){ maxnames[i], UINT64_MAX };
		maxdead[i] = (struct dm_dead_incarnation){ maxnames[i], UINT64_MAX };
	}
	r = (struct dm_member_record){ UINT64_MAX, maxptrs, DM_NODES_MAX, maxrem, DM_NODES_MAX,
	    maxnames[9], UINT64_MAX, maxdead, DM_NODES_MAX };
	int len = state_record_format(&r, big, STATE_RECORD_TEXT_MAX + 1);
	ck_assert_int_eq(len, STATE_RECORD_TEXT_MAX);
	ck_assert_int_eq(state_record_parse(big, (size_t)len, &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_uint_eq(v.n_names, DM_NODES_MAX);
	ck_assert_uint_eq(v.n_removals, DM_NODES_MAX);
	ck_assert_str_eq(v.names[7], maxnames[7]);
	ck_assert_uint_eq(v.removals[200].ballot, UINT64_MAX);
	ck_assert_str_eq(v.promise_prober, maxnames[9]);
	ck_assert_uint_eq(v.promise_label, UINT64_MAX);
	ck_assert_uint_eq(v.n_dead, DM_NODES_MAX);
	ck_assert_str_eq(v.dead[255].name, maxnames[255]);
	ck_assert_uint_eq(v.dead[255].incarnation, UINT64_MAX);
}
END_TEST

START_TEST(record_dead)
{
	/* Dead incarnations: "dead NAME INCARNATION" lines after the
	 * removals, before the promise. */
	const char *names[] = { "n0" };
	struct dm_agreed_removal removals[] = { { "n3", 18 } };
	struct dm_dead_incarnation dead[] = { { "n2", 7 }, { "n5", 281474976710657 } };
	struct dm_member_record r = { 17, names, 1, removals, 1, "n4", 12, dead, 2 };
	const char *text = "label 17\nmember n0\nremoved n3 18\ndead n2 7\n"
	    "dead n5 281474976710657\npromise 12 n4\n";
	struct dm_member_record v;
	char buf[160];

	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), (int)strlen(text));
	ck_assert_str_eq(buf, text);
	ck_assert_int_eq(state_record_parse(buf, strlen(buf), &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_uint_eq(v.n_dead, 2);
	ck_assert_str_eq(v.dead[0].name, "n2");
	ck_assert_uint_eq(v.dead[0].incarnation, 7);
	ck_assert_str_eq(v.dead[1].name, "n5");
	ck_assert_uint_eq(v.dead[1].incarnation, 281474976710657);
	ck_assert_uint_eq(v.n_removals, 1);
	ck_assert_str_eq(v.promise_prober, "n4");
	/* None: no line, and the view says none. */
	ck_assert_int_eq(state_record_parse("label 3\n", 8, &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_uint_eq(v.n_dead, 0);
	ck_assert_ptr_null(v.dead);
	/* What the file could not read back is refused when formatted. */
	struct dm_dead_incarnation twice[] = { { "n2", 7 }, { "n2", 8 } };
	struct dm_dead_incarnation zero[] = { { "n2", 0 } };
	struct dm_dead_incarnation bad_name[] = { { "n/2", 7 } };
	r = (struct dm_member_record){ 1, NULL, 0, NULL, 0, NULL, 0, twice, 2 };
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), -EINVAL);
	r.dead = zero;
	r.n_dead = 1;
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), -EINVAL);
	r.dead = bad_name;
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), -EINVAL);
	r.dead = NULL;
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), -EINVAL);
	/* Out of order, twice for a name, incarnation 0 or malformed. */
	static const char *const bad[] = {
		"label 1\ndead n2 7\nmember n0\n",
		"label 1\ndead n2 7\nremoved n3 2\n",
		"label 1\npromise 1 n4\ndead n2 7\n",
		"label 1\ndead n2 7\ndead n2 8\n",
		"label 1\ndead n2 0\n",
		"label 1\ndead n2 07\n",
		"label 1\ndead n2\n",
		"label 1\ndead 7 n2x\n",
		"label 1\ndead -n2 7\n",
		"label 1\ndead n2 7",
		"label 1\ndead n2 18446744073709551616\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(state_record_parse(bad[i], strlen(bad[i]), &rec) == -EBADMSG,
		    "accepted: %s", bad[i]);
}
END_TEST

START_TEST(record_promise)
{
	/* The self-vote promise: one "promise LABEL PROBER" line, last. */
	const char *names[] = { "n0", "n1" };
	struct dm_agreed_removal removals[] = { { "n3", 18 } };
	struct dm_member_record r = { 17, names, 2, removals, 1, "n4", 12, NULL, 0 };
	const char *text = "label 17\nmember n0\nmember n1\nremoved n3 18\npromise 12 n4\n";
	struct dm_member_record v;
	char buf[128];

	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), (int)strlen(text));
	ck_assert_str_eq(buf, text);
	ck_assert_int_eq(state_record_parse(buf, strlen(buf), &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_str_eq(v.promise_prober, "n4");
	ck_assert_uint_eq(v.promise_label, 12);
	ck_assert_uint_eq(v.n_removals, 1);
	/* At label 0 too (a roster started from the static peers). */
	r = (struct dm_member_record){ 0, NULL, 0, NULL, 0, "n4", 0, NULL, 0 };
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), 21);
	ck_assert_str_eq(buf, "label 0\npromise 0 n4\n");
	ck_assert_int_eq(state_record_parse(buf, strlen(buf), &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_str_eq(v.promise_prober, "n4");
	ck_assert_uint_eq(v.promise_label, 0);
	/* No promise: no line, and the view says none. */
	ck_assert_int_eq(state_record_parse("label 3\n", 8, &rec), 0);
	state_record_view(&rec, &v);
	ck_assert_ptr_null(v.promise_prober);
	/* A prober name the file could not read back is refused. */
	r.promise_prober = "-n4";
	ck_assert_int_eq(state_record_format(&r, buf, sizeof(buf)), -EINVAL);
	/* Two promises, one before the roster, a bad name or label: refused. */
	static const char *const bad[] = {
		"label 1\npromise 1 n4\npromise 2 n4\n",
		"label 1\npromise 1 n4\nmember n0\n",
		"label 1\npromise 1 n4\nremoved n3 2\n",
		"label 1\npromise 1 -n4\n",
		"label 1\npromise 01 n4\n",
		"label 1\npromise 1\n",
		"label 1\npromise n4 1\n",
		"label 1\npromise 1 n4",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(state_record_parse(bad[i], strlen(bad[i]), &rec) == -EBADMSG,
		    "accepted: %s", bad[i]);
}
END_TEST

static void
assert_record(struct state_record *sr, uint64_t label, const char *const *names, size_t n,
    const struct dm_agreed_removal *removals, size_t k)
{
	struct dm_member_record v;

	state_record_view(sr, &v);
	ck_assert_uint_eq(v.label, label);
	ck_assert_uint_eq(v.n_names, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(v.names[i], names[i]);
	ck_assert_uint_eq(v.n_removals, k);
	for (size_t i = 0; i < k; i++) {
		ck_assert_str_eq(v.removals[i].name, removals[i].name);
		ck_assert_uint_eq(v.removals[i].ballot, removals[i].ballot);
	}
}

START_TEST(record_store_then_read)
{
	const char *names1[] = { "n0", "n1", "n2" };
	const char *names2[] = { "n0", "n2" };
	struct dm_agreed_removal removals[] = { { "n1", 7 }, { "n4", 9 } };
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	memset(&rec, 0xa5, sizeof(rec));
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), 0);		/* no file: none */
	assert_record(&rec, 0, NULL, 0, NULL, 0);
	ck_assert_int_eq(state_dir_store_record(&sd,
	    &(struct dm_member_record){ 3, names1, 3, NULL, 0, NULL, 0, NULL, 0 }), 0);
	ck_assert_int_eq(state_dir_store_record(&sd,
	    &(struct dm_member_record){ 7, names2, 2, removals, 2, NULL, 0, NULL, 0 }), 0);
	ck_assert_int_eq(state_dir_store_floor(&sd, 12), 0);
	state_dir_close(&sd);

	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_uint_eq(floor, 12);				/* the floor is its own file */
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), 0);
	assert_record(&rec, 7, names2, 2, removals, 2);

	/* The record just read stored again is the same record; and an
	 * invalid record is refused, the stored one left as it was. */
	struct dm_member_record v;
	state_record_view(&rec, &v);
	ck_assert_int_eq(state_dir_store_record(&sd, &v), 0);
	const char *dup[] = { "n0", "n0" };
	ck_assert_int_eq(state_dir_store_record(&sd,
	    &(struct dm_member_record){ 8, dup, 2, NULL, 0, NULL, 0, NULL, 0 }), -EINVAL);
	ck_assert_int_eq(state_dir_read_record(&sd, &rec2), 0);
	assert_record(&rec2, 7, names2, 2, removals, 2);

	/* Back to no roster: stored as such, read back as all zero. */
	ck_assert_int_eq(state_dir_store_record(&sd, &(struct dm_member_record){ 0 }), 0);
	state_dir_close(&sd);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), 0);
	assert_record(&rec, 0, NULL, 0, NULL, 0);
	state_dir_close(&sd);
}
END_TEST

static void
write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char file[192];
	int fd;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

START_TEST(corrupt_record_is_refused)
{
	struct state_dir sd;
	uint64_t floor = 99;
	char path[128];
	size_t len;

	snprintf(path, sizeof(path), "%s/s", base);
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);

	write_file(path, STATE_RECORD_FILE, "label 1\nmember n0\n", 18);	/* the control */
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), 0);
	ck_assert_uint_eq(rec.n_names, 1);

	write_file(path, STATE_RECORD_FILE, "label 1\nmember n0", 17);	/* cut short */
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), -EBADMSG);
	write_file(path, STATE_RECORD_FILE, "", 0);			/* emptied */
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), -EBADMSG);
	write_file(path, STATE_RECORD_FILE, "label 1\nmember n0\nmember n0\n", 28);
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), -EBADMSG);

	/* Longer than any record: refused, not read in part. */
	len = make_text(DM_NODES_MAX, 0);
	memset(big + len, '\n', STATE_RECORD_TEXT_MAX + 1 - len);
	write_file(path, STATE_RECORD_FILE, big, STATE_RECORD_TEXT_MAX + 1);
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), -EBADMSG);
	state_dir_close(&sd);

	/* The floor file does not care. */
	ck_assert_int_eq(state_dir_open(path, 0755, &sd, &floor), 0);
	state_dir_close(&sd);
}
END_TEST

/* Like the floor: a daemon out of descriptors still stores its record. */
START_TEST(store_record_out_of_descriptors)
{
	const char *names[] = { "n0", "n1" };
	struct dm_agreed_removal removals[] = { { "n2", 5 } };
	struct state_dir sd;
	char path[128];
	int fds[64], n;

	snprintf(path, sizeof(path), "%s/s", base);
	n = open_state_out_of_descriptors(path, &sd, fds);
	for (uint64_t round = 0; round < 2; round++) {
		ck_assert_int_eq(state_dir_store_record(&sd,
		    &(struct dm_member_record){ 4 + round, names, 2, removals, 1, NULL, 0, NULL, 0 }), 0);
		ck_assert_int_ge(sd.spare_fd, 0);
		ck_assert_int_lt(open("/dev/null", O_RDONLY), 0);	/* still exhausted */
	}
	while (n > 0)
		close(fds[--n]);
	ck_assert_int_eq(state_dir_read_record(&sd, &rec), 0);
	assert_record(&rec, 5, names, 2, removals, 1);
	state_dir_close(&sd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("state_file");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parse_forms);
	tcase_add_test(tc, store_then_load);
	tcase_add_test(tc, one_daemon_per_directory);
	tcase_add_test(tc, corrupt_floor_is_refused);
	tcase_add_test(tc, missing_parents_created);
	tcase_add_test(tc, parent_not_a_directory);
	tcase_add_test(tc, store_floor_out_of_descriptors);
	tcase_add_test(tc, record_parse_accepts);
	tcase_add_test(tc, record_parse_refuses);
	tcase_add_test(tc, record_parse_limits);
	tcase_add_test(tc, record_format);
	tcase_add_test(tc, record_promise);
	tcase_add_test(tc, record_dead);
	tcase_add_test(tc, record_store_then_read);
	tcase_add_test(tc, corrupt_record_is_refused);
	tcase_add_test(tc, store_record_out_of_descriptors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
