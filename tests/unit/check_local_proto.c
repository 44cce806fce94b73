/*
 * check_local_proto.c: unit tests of the local protocol codec
 * (libdmlock/local_proto.c) and the socket path rules (socket_path.c):
 * round trips of every line kind, every malformed request with the ERROR
 * code it must get, malformed daemon lines, and the limits.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "local_proto.h"
#include "socket_path.h"

/* Parse line, format the result, expect the same line back. */
static void
request_round_trip(const char *line)
{
	struct lp_request req;
	enum lp_error code = 0;
	char out[LP_LINE_MAX + 1];
	int r = lp_request_parse(line, strlen(line), &req, &code);
	ck_assert_msg(r == 0, "'%s' rejected with code %d", line, (int)code);
	int n = lp_request_format(out, sizeof(out), &req);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(out[n - 1], '\n');
	out[n - 1] = '\0';
	ck_assert_str_eq(out, line);
}

START_TEST(request_round_trips)
{
	request_round_trip("ACQUIRE 1 backup ex try");
	request_round_trip("ACQUIRE a.b_c-D orders/rebalance sh forever");
	request_round_trip("ACQUIRE 9 x ex 5000");
	request_round_trip("ACQUIRE 9 x ex 999999999999");
	request_round_trip("ACQUIRE 12345678901234567890123456789012 x ex 1");
	request_round_trip("RELEASE 7");
	request_round_trip("CANCEL req-7");
	request_round_trip("STATUS");
	request_round_trip("PING");
}
END_TEST

START_TEST(request_fields)
{
	struct lp_request req;
	enum lp_error code;
	const char *line = "ACQUIRE r1 db/main sh 250";
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), 0);
	ck_assert_int_eq(req.verb, LP_ACQUIRE);
	ck_assert_str_eq(req.id, "r1");
	ck_assert_str_eq(req.lock, "db/main");
	ck_assert_uint_eq(req.lock_len, 7);
	ck_assert_int_eq(req.mode, DM_MODE_SHARED);
	ck_assert_uint_eq(req.wait_ms, 250);

	line = "ACQUIRE r1 x ex 0";		/* "0" means try */
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), 0);
	ck_assert_uint_eq(req.wait_ms, LP_WAIT_TRY);
	line = "ACQUIRE r1 x ex forever";
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), 0);
	ck_assert_uint_eq(req.wait_ms, LP_WAIT_FOREVER);
	ck_assert_int_eq(req.mode, DM_MODE_EXCLUSIVE);

	line = "PING\r";			/* socat crlf */
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), 0);
	ck_assert_int_eq(req.verb, LP_PING);
}
END_TEST

static const struct {
	const char	*line;
	enum lp_error	 code;
	const char	*id;	/* id to echo in the ERROR, "" for "-" */
} bad_requests[] = {
	{ "", LP_E_SYNTAX, "" },
	{ " ", LP_E_SYNTAX, "" },
	{ " PING", LP_E_SYNTAX, "" },
	{ "PING ", LP_E_SYNTAX, "" },
	{ "PING x", LP_E_SYNTAX, "" },
	{ "STATUS now", LP_E_SYNTAX, "" },
	{ "ping", LP_E_UNKNOWN_VERB, "" },
	{ "LOCK 1 x ex try", LP_E_UNKNOWN_VERB, "" },
	{ "GRANTED 1 1 0", LP_E_UNKNOWN_VERB, "" },
	{ "ACQUIRE", LP_E_BAD_ID, "" },
	{ "ACQUIRE  1 x ex try", LP_E_BAD_ID, "" },
	{ "ACQUIRE 1/2 x ex try", LP_E_BAD_ID, "" },
	{ "ACQUIRE 123456789012345678901234567890123 x ex try", LP_E_BAD_ID, "" },
	{ "RELEASE", LP_E_BAD_ID, "" },
	{ "RELEASE a:b", LP_E_BAD_ID, "" },
	{ "CANCEL ", LP_E_BAD_ID, "" },
	{ "ACQUIRE 1", LP_E_BAD_NAME, "1" },
	{ "ACQUIRE 1 ", LP_E_BAD_NAME, "1" },
	{ "ACQUIRE 1  ex try", LP_E_BAD_NAME, "1" },
	{ "ACQUIRE 1 x", LP_E_BAD_MODE, "1" },
	{ "ACQUIRE 1 x EX try", LP_E_BAD_MODE, "1" },
	{ "ACQUIRE 1 x rw try", LP_E_BAD_MODE, "1" },
	{ "ACQUIRE 1 x ex", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex -1", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex +5", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex 05", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex 1000000000000", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex 99999999999999999999999", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex 5s", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex Forever", LP_E_BAD_WAIT, "1" },
	{ "ACQUIRE 1 x ex try ", LP_E_SYNTAX, "1" },
	{ "ACQUIRE 1 x ex try extra", LP_E_SYNTAX, "1" },
	{ "RELEASE 1 x", LP_E_SYNTAX, "1" },
	{ "CANCEL 1 ", LP_E_SYNTAX, "1" },
	{ "PING\t", LP_E_SYNTAX, "" },
	{ "PING\r\r", LP_E_SYNTAX, "" },
};

START_TEST(request_malformed)
{
	struct lp_request req;
	enum lp_error code = 0;
	const char *line = bad_requests[_i].line;
	int r = lp_request_parse(line, strlen(line), &req, &code);
	ck_assert_msg(r == -EINVAL, "'%s' accepted", line);
	ck_assert_msg(code == bad_requests[_i].code, "'%s': code %d, want %d", line, (int)code,
	    (int)bad_requests[_i].code);
	ck_assert_str_eq(req.id, bad_requests[_i].id);
	ck_assert_ptr_nonnull(lp_error_name(code));
}
END_TEST

START_TEST(request_bad_bytes)
{
	/* Control bytes, NUL, DEL and 8-bit bytes anywhere are syntax errors;
	 * a space inside a name splits it into too many fields. */
	char line[64];
	struct lp_request req;
	enum lp_error code;
	for (int c = 0; c < 256; c++) {
		if (c >= 0x20 && c <= 0x7e)
			continue;
		if (c == '\r')
			continue;	/* only dropped at the very end, tested above */
		int n = snprintf(line, sizeof(line), "ACQUIRE 1 ab ex try");
		line[9] = (char)c;
		ck_assert_int_eq(lp_request_parse(line, (size_t)n, &req, &code), -EINVAL);
		ck_assert_int_eq(code, LP_E_SYNTAX);
	}
	/* A lock name with a space is a syntax error (one field too many). */
	const char *sp = "ACQUIRE 1 a b ex try";
	ck_assert_int_eq(lp_request_parse(sp, strlen(sp), &req, &code), -EINVAL);
}
END_TEST

START_TEST(request_name_limits)
{
	char line[LP_LINE_MAX + 16];
	char name[DM_LOCK_NAME_MAX + 2];
	struct lp_request req;
	enum lp_error code;

	memset(name, 'n', DM_LOCK_NAME_MAX);
	name[DM_LOCK_NAME_MAX] = '\0';
	snprintf(line, sizeof(line), "ACQUIRE 1 %s ex try", name);
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), 0);
	ck_assert_uint_eq(req.lock_len, DM_LOCK_NAME_MAX);

	name[DM_LOCK_NAME_MAX] = 'n';
	name[DM_LOCK_NAME_MAX + 1] = '\0';
	snprintf(line, sizeof(line), "ACQUIRE 1 %s ex try", name);
	ck_assert_int_eq(lp_request_parse(line, strlen(line), &req, &code), -EINVAL);
	ck_assert_int_eq(code, LP_E_BAD_NAME);
	ck_assert_str_eq(req.id, "1");

	/* A line of LP_LINE_MAX bytes without its newline is too long. */
	memset(line, 'A', LP_LINE_MAX);
	ck_assert_int_eq(lp_request_parse(line, LP_LINE_MAX, &req, &code), -EINVAL);
	ck_assert_int_eq(code, LP_E_TOO_LONG);
	ck_assert_int_eq(lp_request_parse(line, LP_LINE_MAX - 1, &req, &code), -EINVAL);
	ck_assert_int_eq(code, LP_E_UNKNOWN_VERB);
}
END_TEST

START_TEST(request_format_rejects)
{
	char buf[LP_LINE_MAX];
	struct lp_request req = { .verb = LP_ACQUIRE, .id = "1", .lock = "a b", .lock_len = 3 };
	ck_assert_int_eq(lp_request_format(buf, sizeof(buf), &req), -EINVAL);
	req = (struct lp_request){ .verb = LP_RELEASE, .id = "" };
	ck_assert_int_eq(lp_request_format(buf, sizeof(buf), &req), -EINVAL);
	req = (struct lp_request){ .verb = LP_ACQUIRE, .id = "1", .lock = "x", .lock_len = 1,
	    .wait_ms = LP_WAIT_MS_MAX + 1 };
	ck_assert_int_eq(lp_request_format(buf, sizeof(buf), &req), -EINVAL);
	req.wait_ms = 5;
	ck_assert_int_eq(lp_request_format(buf, 5, &req), -ENOBUFS);
	req.mode = (enum dm_mode)7;
	ck_assert_int_eq(lp_request_format(buf, sizeof(buf), &req), -EINVAL);
	req = (struct lp_request){ .verb = (enum lp_verb)99 };
	ck_assert_int_eq(lp_request_format(buf, sizeof(buf), &req), -EINVAL);
}
END_TEST

/* Parse a daemon line, format it, expect the same line back. */
static struct lp_reply
reply_round_trip(const char *line)
{
	struct lp_reply rep;
	char out[LP_REPLY_MAX + 2];
	ck_assert_msg(lp_reply_parse(line, strlen(line), &rep) == 0, "'%s' rejected", line);
	int n = lp_reply_format(out, sizeof(out), &rep);
	ck_assert_int_gt(n, 0);
	out[n - 1] = '\0';
	ck_assert_str_eq(out, line);
	return rep;
}

START_TEST(reply_round_trips)
{
	struct lp_reply r;

	r = reply_round_trip("DMLOCK 1 host-a ricart-agrawala");
	ck_assert_int_eq(r.type, LP_R_GREETING);
	ck_assert_uint_eq(r.version, 1);
	ck_assert_str_eq(r.node, "host-a");
	ck_assert_str_eq(r.algorithm, "ricart-agrawala");

	r = reply_round_trip("GRANTED 1 18446744073709551615 123456");
	ck_assert_int_eq(r.type, LP_R_GRANTED);
	ck_assert_uint_eq(r.token, UINT64_MAX);
	ck_assert_uint_eq(r.deadline, 123456);
	r = reply_round_trip("GRANTED x 1 0");
	ck_assert_uint_eq(r.deadline, 0);

	r = reply_round_trip("EXTEND 1 99");
	ck_assert_int_eq(r.type, LP_R_EXTEND);
	ck_assert_uint_eq(r.deadline, 99);

	r = reply_round_trip("RELEASED r-1");
	ck_assert_int_eq(r.type, LP_R_RELEASED);
	ck_assert_str_eq(r.id, "r-1");

	r = reply_round_trip("DENIED 1 busy lock is held by someone else");
	ck_assert_int_eq(r.error, -EBUSY);
	ck_assert_uint_eq(r.text_len, strlen("lock is held by someone else"));
	ck_assert_int_eq(reply_round_trip("DENIED 1 timeout ").error, -ETIMEDOUT);
	ck_assert_int_eq(reply_round_trip("DENIED 1 unsupported x").error, -EOPNOTSUPP);
	ck_assert_int_eq(reply_round_trip("DENIED 1 invalid x").error, -EINVAL);
	ck_assert_int_eq(reply_round_trip("DENIED 1 denied x").error, -EACCES);
	ck_assert_int_eq(reply_round_trip("DENIED 1 shutdown x").error, -ESHUTDOWN);
	ck_assert_int_eq(reply_round_trip("DENIED 1 error x").error, -EIO);

	ck_assert_int_eq(reply_round_trip("LOST 1 lease lease expired").error, -ETIMEDOUT);
	ck_assert_int_eq(reply_round_trip("LOST 1 shutdown x").error, -ESHUTDOWN);
	ck_assert_int_eq(reply_round_trip("LOST 1 removed x").error, -EIDRM);
	ck_assert_int_eq(reply_round_trip("LOST 1 error x").error, -EIO);

	r = reply_round_trip("ERROR - too-long line longer than 1024 bytes");
	ck_assert_int_eq(r.type, LP_R_ERROR);
	ck_assert_str_eq(r.id, "");
	ck_assert_int_eq(r.code, LP_E_TOO_LONG);
	r = reply_round_trip("ERROR 7 unknown-id no such request");
	ck_assert_str_eq(r.id, "7");
	ck_assert_int_eq(r.code, LP_E_UNKNOWN_ID);

	ck_assert_int_eq(reply_round_trip("PONG").type, LP_R_PONG);
	ck_assert_int_eq(reply_round_trip("END").type, LP_R_END);
	r = reply_round_trip("NODE host-a ricart-agrawala ready 1 0");
	ck_assert_int_eq(r.type, LP_R_STATUS_LINE);
	ck_assert_uint_eq(r.text_len, strlen("NODE host-a ricart-agrawala ready 1 0"));
	reply_round_trip("PEER host-a - self");
	reply_round_trip("LOCK db ex held 3 1000 42 1000 7");
}
END_TEST

START_TEST(reply_unknown_words)
{
	/* Later versions may add reason and code words: mapped, not refused. */
	struct lp_reply r;
	const char *l = "DENIED 1 quota too many";
	ck_assert_int_eq(lp_reply_parse(l, strlen(l), &r), 0);
	ck_assert_int_eq(r.error, -EIO);
	l = "LOST 1 evicted x";
	ck_assert_int_eq(lp_reply_parse(l, strlen(l), &r), 0);
	ck_assert_int_eq(r.error, -EIO);
	l = "ERROR - new-code x";
	ck_assert_int_eq(lp_reply_parse(l, strlen(l), &r), 0);
	ck_assert_int_eq(r.code, LP_E_OTHER);
}
END_TEST

static const char *const bad_replies[] = {
	"", "HELLO", "granted 1 1 0", "GRANTED", "GRANTED 1", "GRANTED 1 1",
	"GRANTED 1 0 0",		/* token 0 is never granted */
	"GRANTED 1 1 0 extra", "GRANTED 1 -1 0", "GRANTED 1 18446744073709551616 0",
	"GRANTED 1 01 0", "GRANTED a/b 1 0", "GRANTED  1 1 0",
	"EXTEND 1", "EXTEND 1 x", "RELEASED", "RELEASED 1 2",
	"DENIED 1", "DENIED 1 BUSY x", "DENIED 1 busy!", "LOST 1",
	"ERROR", "ERROR -", "ERROR 1/2 syntax x", "ERROR - SYNTAX x",
	"PONG x", "END x", "DMLOCK", "DMLOCK 1", "DMLOCK 1 host", "DMLOCK x host algo",
	"DMLOCK 1 -bad algo", "DMLOCK 1 host algo extra", "PONG\x01", "PONG\x80",
};

START_TEST(reply_malformed)
{
	struct lp_reply r;
	const char *l = bad_replies[_i];
	ck_assert_msg(lp_reply_parse(l, strlen(l), &r) == -EPROTO, "'%s' accepted", l);
}
END_TEST

START_TEST(reply_format_sanitizes)
{
	char out[LP_REPLY_MAX + 2];
	char text[400];
	memset(text, 'x', sizeof(text));
	text[3] = '\n';
	text[4] = (char)0xff;
	struct lp_reply rep = { .type = LP_R_DENIED, .id = "1", .error = -ENOSPC,
	    .text = text, .text_len = sizeof(text) };
	int n = lp_reply_format(out, sizeof(out), &rep);
	ck_assert_int_gt(n, 0);
	/* Unknown errno -> "error"; text cut to LP_TEXT_MAX, bytes replaced. */
	ck_assert_int_eq(strncmp(out, "DENIED 1 error xxx??x", 21), 0);
	ck_assert_int_eq(n, (int)strlen("DENIED 1 error ") + LP_TEXT_MAX + 1);
	ck_assert_ptr_null(memchr(out, '\n', (size_t)n - 1));

	struct lp_reply bad = { .type = LP_R_GRANTED, .id = "1", .token = 0 };
	ck_assert_int_eq(lp_reply_format(out, sizeof(out), &bad), -EINVAL);
	bad = (struct lp_reply){ .type = LP_R_RELEASED, .id = "a b" };
	ck_assert_int_eq(lp_reply_format(out, sizeof(out), &bad), -EINVAL);
	bad = (struct lp_reply){ .type = LP_R_ERROR, .code = 0 };
	ck_assert_int_eq(lp_reply_format(out, sizeof(out), &bad), -EINVAL);
	bad = (struct lp_reply){ .type = LP_R_STATUS_LINE, .text = "A\nB", .text_len = 3 };
	ck_assert_int_eq(lp_reply_format(out, sizeof(out), &bad), -EINVAL);
	bad = (struct lp_reply){ .type = LP_R_PONG };
	ck_assert_int_eq(lp_reply_format(out, 4, &bad), -ENOBUFS);
}
END_TEST

START_TEST(reason_tables)
{
	ck_assert_str_eq(lp_denied_reason_name(-EBUSY), "busy");
	ck_assert_str_eq(lp_denied_reason_name(-ETIMEDOUT), "timeout");
	ck_assert_str_eq(lp_denied_reason_name(-EACCES), "denied");
	ck_assert_str_eq(lp_denied_reason_name(-E2BIG), "error");
	ck_assert_str_eq(lp_lost_reason_name(-ETIMEDOUT), "lease");
	ck_assert_str_eq(lp_lost_reason_name(-EIDRM), "removed");
	ck_assert_str_eq(lp_lost_reason_name(-EBUSY), "error");
	for (int c = 1; c < _LP_E_MAX; c++)
		ck_assert_ptr_nonnull(lp_error_name((enum lp_error)c));
	ck_assert_ptr_null(lp_error_name(0));
	ck_assert_ptr_null(lp_error_name(_LP_E_MAX));
}
END_TEST

START_TEST(admin_requests)
{
	struct lp_request req;
	enum lp_error code = 0;

	request_round_trip("LOCKS");
	request_round_trip("LEAVE");
	request_round_trip("REMOVE host-b");
	request_round_trip("JOIN host-a@127.0.0.1:7411");
	request_round_trip("JOIN host-a@[::1]:1");
	ck_assert_int_eq(lp_request_parse("REMOVE n1", 9, &req, &code), 0);
	ck_assert_int_eq(req.verb, LP_REMOVE);
	ck_assert_str_eq(req.arg, "n1");
	ck_assert_str_eq(req.id, "");
	ck_assert(LP_VERB_IS_ADMIN(req.verb));
	ck_assert(!LP_VERB_IS_ADMIN(LP_ACQUIRE) && !LP_VERB_IS_ADMIN(LP_PING));

	static const struct {
		const char	*line;
		enum lp_error	 code;
	} bad[] = {
		{ "LOCKS x", LP_E_SYNTAX }, { "LEAVE now", LP_E_SYNTAX },
		{ "REMOVE", LP_E_BAD_NODE }, { "REMOVE a b", LP_E_BAD_NODE },
		{ "REMOVE -x", LP_E_BAD_NODE }, { "REMOVE a@b:1", LP_E_BAD_NODE },
		{ "JOIN a", LP_E_BAD_NODE }, { "JOIN a@host", LP_E_BAD_NODE },
		{ "JOIN a@host:0", LP_E_BAD_NODE }, { "JOIN a@host:65536", LP_E_BAD_NODE },
		{ "JOIN a@:7", LP_E_BAD_NODE }, { "JOIN @h:7", LP_E_BAD_NODE },
		{ "JOIN a@h:7x", LP_E_BAD_NODE }, { "JOIN a@b@h:7", LP_E_BAD_NODE },
		{ "locks", LP_E_UNKNOWN_VERB },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		code = 0;
		ck_assert_msg(lp_request_parse(bad[i].line, strlen(bad[i].line), &req, &code) ==
		    -EINVAL, "'%s' accepted", bad[i].line);
		ck_assert_msg(code == bad[i].code, "'%s': code %d, want %d", bad[i].line,
		    (int)code, (int)bad[i].code);
	}
	/* The formatter refuses what the parser would. */
	char out[LP_LINE_MAX + 1];
	struct lp_request r2 = { .verb = LP_JOIN };
	snprintf(r2.arg, sizeof(r2.arg), "no-port@host");
	ck_assert_int_eq(lp_request_format(out, sizeof(out), &r2), -EINVAL);
	r2.verb = LP_REMOVE;
	snprintf(r2.arg, sizeof(r2.arg), "has space");
	ck_assert_int_eq(lp_request_format(out, sizeof(out), &r2), -EINVAL);
}
END_TEST

START_TEST(admin_replies)
{
	struct lp_reply rep;
	static const char *const lines[] = { "CAPS lamport exclusive-only", "INFO leaving now",
	    "LOCK a ex held 3 100 12 0 r1 host-a", "PEER b 127.0.0.1:1 up 12 345" };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		ck_assert_int_eq(lp_reply_parse(lines[i], strlen(lines[i]), &rep), 0);
		ck_assert_int_eq(rep.type, LP_R_STATUS_LINE);
	}
	static const struct {
		const char	*word;
		enum lp_error	 code;
		int		 error;
	} codes[] = {
		{ "denied", LP_E_DENIED, -EACCES }, { "unknown-node", LP_E_UNKNOWN_NODE, -ENOENT },
		{ "bad-node", LP_E_BAD_NODE, -EINVAL }, { "bad-state", LP_E_BAD_STATE, -EALREADY },
		{ "unsupported", LP_E_UNSUPPORTED, -EOPNOTSUPP }, { "no-such-code", LP_E_OTHER, -EIO },
	};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		char line[128];
		int n = snprintf(line, sizeof(line), "ERROR - %s some text", codes[i].word);
		ck_assert_int_eq(lp_reply_parse(line, (size_t)n, &rep), 0);
		ck_assert_int_eq(rep.code, codes[i].code);
		ck_assert_int_eq(lp_error_errno(rep.code), codes[i].error);
		ck_assert_int_eq(rep.text_len, 9);
	}
}
END_TEST

START_TEST(socket_paths)
{
	char buf[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char dir[] = "/tmp/check-lp-XXXXXX";
	char want[256];

	setenv("DMLOCK_SOCKET", "/x/y.sock", 1);
	ck_assert_int_eq(lp_socket_path_client(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/y.sock");

	unsetenv("DMLOCK_SOCKET");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("XDG_RUNTIME_DIR", dir, 1);
	ck_assert_int_eq(lp_socket_path_daemon(buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s", geteuid() == 0 ? DMLOCK_SYSTEM_SOCKET : "");
	if (geteuid() != 0) {
		snprintf(want, sizeof(want), "%s/dmlock/dmlockd.sock", dir);
		ck_assert_str_eq(buf, want);
		/* No per-user daemon socket yet: the client uses the system one. */
		ck_assert_int_eq(lp_socket_path_client(buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, DMLOCK_SYSTEM_SOCKET);
		unsetenv("XDG_RUNTIME_DIR");
		ck_assert_int_eq(lp_socket_path_daemon(buf, sizeof(buf)), -ENOENT);
	} else {
		ck_assert_str_eq(buf, want);
	}
	setenv("DMLOCK_SOCKET", "", 1);
	ck_assert_int_eq(lp_socket_path_client(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, geteuid() == 0 ? DMLOCK_SYSTEM_SOCKET : DMLOCK_SYSTEM_SOCKET);

	char longp[300];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	setenv("DMLOCK_SOCKET", longp, 1);
	ck_assert_int_eq(lp_socket_path_client(buf, sizeof(buf)), -ENAMETOOLONG);
	unsetenv("DMLOCK_SOCKET");
	rmdir(dir);
}
END_TEST

static Suite *
local_proto_suite(void)
{
	Suite *s = suite_create("local_proto");
	TCase *tc = tcase_create("requests");
	tcase_add_test(tc, request_round_trips);
	tcase_add_test(tc, request_fields);
	tcase_add_loop_test(tc, request_malformed, 0,
	    (int)(sizeof(bad_requests) / sizeof(bad_requests[0])));
	tcase_add_test(tc, request_bad_bytes);
	tcase_add_test(tc, request_name_limits);
	tcase_add_test(tc, request_format_rejects);
	tcase_add_test(tc, admin_requests);
	tcase_add_test(tc, admin_replies);
	suite_add_tcase(s, tc);

	tc = tcase_create("replies");
	tcase_add_test(tc, reply_round_trips);
	tcase_add_test(tc, reply_unknown_words);
	tcase_add_loop_test(tc, reply_malformed, 0,
	    (int)(sizeof(bad_replies) / sizeof(bad_replies[0])));
	tcase_add_test(tc, reply_format_sanitizes);
	tcase_add_test(tc, reason_tables);
	suite_add_tcase(s, tc);

	tc = tcase_create("socket_path");
	tcase_add_test(tc, socket_paths);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(local_proto_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
