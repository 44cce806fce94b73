/*
 * local_proto.c: strict parser and formatter of local protocol v1 lines
 * (see local_proto.h for the protocol text).  Pure: no I/O, no allocation;
 * every length is checked against the limits before it is copied.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "local_proto.h"

/* A cursor over the fields of one line. */
struct fields {
	const char	*p;
	const char	*end;
};

struct word_errno {
	const char	*word;
	int		 error;
};

static const struct word_errno denied_reasons[] = {
	{ "busy", -EBUSY },
	{ "timeout", -ETIMEDOUT },
	{ "unsupported", -EOPNOTSUPP },
	{ "invalid", -EINVAL },
	{ "denied", -EACCES },
	{ "shutdown", -ESHUTDOWN },
	{ "error", -EIO },
};

static const struct word_errno lost_reasons[] = {
	{ "lease", -ETIMEDOUT },
	{ "shutdown", -ESHUTDOWN },
	{ "removed", -EIDRM },
	{ "error", -EIO },
};

static const char *const error_names[_LP_E_MAX] = {
	[LP_E_SYNTAX] = "syntax",
	[LP_E_UNKNOWN_VERB] = "unknown-verb",
	[LP_E_BAD_ID] = "bad-id",
	[LP_E_BAD_NAME] = "bad-name",
	[LP_E_BAD_MODE] = "bad-mode",
	[LP_E_BAD_WAIT] = "bad-wait",
	[LP_E_ID_IN_USE] = "id-in-use",
	[LP_E_UNKNOWN_ID] = "unknown-id",
	[LP_E_NOT_HELD] = "not-held",
	[LP_E_TOO_LONG] = "too-long",
	[LP_E_TOO_MANY_REQUESTS] = "too-many-requests",
	[LP_E_TOO_MANY_ERRORS] = "too-many-errors",
	[LP_E_TOO_MANY_CLIENTS] = "too-many-clients",
	[LP_E_INTERNAL] = "internal",
	[LP_E_DENIED] = "denied",
	[LP_E_BAD_NODE] = "bad-node",
	[LP_E_UNKNOWN_NODE] = "unknown-node",
	[LP_E_BAD_STATE] = "bad-state",
	[LP_E_UNSUPPORTED] = "unsupported",
	[LP_E_OTHER] = "error",
};

static bool
word_is(const char *w, size_t len, const char *literal)
{
	return strlen(literal) == len && memcmp(w, literal, len) == 0;
}

/* Take the next space-separated field: non-empty, followed by one space or
 * the end of the line.  Returns false if there is none. */
static bool
field_next(struct fields *f, const char **ret, size_t *ret_len)
{
	if (f->p == NULL || f->p >= f->end)
		return false;
	const char *start = f->p;
	const char *sp = memchr(start, ' ', (size_t)(f->end - start));
	const char *stop = sp != NULL ? sp : f->end;
	if (stop == start)
		return false;	/* empty field: two spaces, or a leading one */
	*ret = start;
	*ret_len = (size_t)(stop - start);
	/* After a trailing space p == end: the next field_next() fails and
	 * fields_done() is false, so the line is refused either way. */
	f->p = sp != NULL ? sp + 1 : NULL;
	return true;
}

static bool
fields_done(const struct fields *f)
{
	return f->p == NULL;
}

/* The rest of the line after the last field, as <text> (may be empty). */
static void
fields_rest(struct fields *f, const char **ret, size_t *ret_len)
{
	if (f->p == NULL) {
		*ret = f->end;
		*ret_len = 0;
	} else {
		*ret = f->p;
		*ret_len = (size_t)(f->end - f->p);
	}
	f->p = NULL;
}

/* Decimal without sign or leading zero, at most max. */
static bool
parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v > max)
		return false;
	*ret = v;
	return true;
}

bool
lp_sponsor_valid(const char *s, size_t len)
{
	const char *at = s != NULL ? memchr(s, '@', len) : NULL;
	if (at == NULL || !dm_node_name_valid(s, (size_t)(at - s)))
		return false;
	const char *addr = at + 1;
	size_t alen = len - (size_t)(addr - s);
	if (alen < 3 || alen > DM_ADDRESS_MAX)
		return false;
	const char *colon = NULL;
	for (size_t i = 0; i < alen; i++) {
		unsigned char c = (unsigned char)addr[i];
		if (c <= 0x20 || c > 0x7e || c == '@')
			return false;
		if (c == ':')
			colon = addr + i;
	}
	/* host:port or [v6]:port: a non-empty host and 1..5 digits of port. */
	if (colon == NULL || colon == addr)
		return false;
	size_t plen = alen - (size_t)(colon + 1 - addr);
	uint64_t port;
	return plen >= 1 && plen <= 5 && parse_u64(colon + 1, plen, 65535, &port) && port > 0;
}

int
lp_error_errno(enum lp_error code)
{
	switch (code) {
	case LP_E_DENIED:		return -EACCES;
	case LP_E_UNKNOWN_NODE:		return -ENOENT;
	case LP_E_BAD_NODE:		return -EINVAL;
	case LP_E_BAD_STATE:		return -EALREADY;
	case LP_E_UNSUPPORTED:		return -EOPNOTSUPP;
	case LP_E_TOO_MANY_REQUESTS:
	case LP_E_TOO_MANY_CLIENTS:	return -ENOBUFS;
	case LP_E_UNKNOWN_VERB:		return -EPROTO;
	default:			return -EIO;
	}
}

bool
lp_id_valid(const char *id, size_t len)
{
	if (id == NULL || len == 0 || len > LP_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)id[i];
		bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

static bool
line_printable(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
			return false;
	return true;
}

/* Drop one trailing "\r". */
static size_t
strip_cr(const char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	return len;
}

static bool
take_id(struct fields *f, char id[static LP_ID_MAX + 1])
{
	const char *w;
	size_t n;
	if (!field_next(f, &w, &n) || !lp_id_valid(w, n))
		return false;
	memcpy(id, w, n);
	id[n] = '\0';
	return true;
}

static int
parse_acquire(struct fields *f, struct lp_request *req, enum lp_error *ret_error)
{
	const char *w;
	size_t n;

	if (!field_next(f, &w, &n) || !dm_lock_name_valid(w, n)) {
		*ret_error = LP_E_BAD_NAME;
		return -EINVAL;
	}
	memcpy(req->lock, w, n);
	req->lock[n] = '\0';
	req->lock_len = n;

	if (!field_next(f, &w, &n)) {
		*ret_error = LP_E_BAD_MODE;
		return -EINVAL;
	}
	if (word_is(w, n, "ex"))
		req->mode = DM_MODE_EXCLUSIVE;
	else if (word_is(w, n, "sh"))
		req->mode = DM_MODE_SHARED;
	else {
		*ret_error = LP_E_BAD_MODE;
		return -EINVAL;
	}

	uint64_t ms;
	if (!field_next(f, &w, &n)) {
		*ret_error = LP_E_BAD_WAIT;
		return -EINVAL;
	}
	if (word_is(w, n, "try"))
		req->wait_ms = LP_WAIT_TRY;
	else if (word_is(w, n, "forever"))
		req->wait_ms = LP_WAIT_FOREVER;
	else if (parse_u64(w, n, LP_WAIT_MS_MAX, &ms))
		req->wait_ms = ms;
	else {
		*ret_error = LP_E_BAD_WAIT;
		return -EINVAL;
	}
	return 0;
}

int
lp_request_parse(const char *line, size_t len, struct lp_request *ret,
    enum lp_error *ret_error)
{
	struct lp_request req = { 0 };
	const char *w;
	size_t n;
	int r;

	*ret = req;
	len = strip_cr(line, len);
	if (len >= LP_LINE_MAX) {
		*ret_error = LP_E_TOO_LONG;
		return -EINVAL;
	}
	struct fields f = { .p = line, .end = line + len };
	if (!line_printable(line, len) || !field_next(&f, &w, &n)) {
		*ret_error = LP_E_SYNTAX;
		return -EINVAL;
	}

	if (word_is(w, n, "STATUS") || word_is(w, n, "PING") || word_is(w, n, "LOCKS") ||
	    word_is(w, n, "LEAVE")) {
		req.verb = word_is(w, n, "STATUS") ? LP_STATUS : word_is(w, n, "PING") ? LP_PING
		    : word_is(w, n, "LOCKS") ? LP_LOCKS : LP_LEAVE;
		if (!fields_done(&f)) {
			*ret_error = LP_E_SYNTAX;
			return -EINVAL;
		}
		*ret = req;
		return 0;
	}
	if (word_is(w, n, "REMOVE") || word_is(w, n, "JOIN")) {
		req.verb = word_is(w, n, "REMOVE") ? LP_REMOVE : LP_JOIN;
		ret->verb = req.verb;
		bool ok = field_next(&f, &w, &n) && fields_done(&f) &&
		    (req.verb == LP_REMOVE ? dm_node_name_valid(w, n) : lp_sponsor_valid(w, n));
		if (!ok) {
			*ret_error = LP_E_BAD_NODE;
			return -EINVAL;
		}
		memcpy(req.arg, w, n);
		req.arg[n] = '\0';
		*ret = req;
		return 0;
	}
	if (word_is(w, n, "ACQUIRE"))
		req.verb = LP_ACQUIRE;
	else if (word_is(w, n, "RELEASE"))
		req.verb = LP_RELEASE;
	else if (word_is(w, n, "CANCEL"))
		req.verb = LP_CANCEL;
	else {
		*ret_error = LP_E_UNKNOWN_VERB;
		return -EINVAL;
	}

	if (!take_id(&f, req.id)) {
		*ret_error = LP_E_BAD_ID;
		return -EINVAL;
	}
	/* From here on the id is known: report errors against it. */
	ret->verb = req.verb;
	memcpy(ret->id, req.id, sizeof(req.id));

	if (req.verb == LP_ACQUIRE) {
		r = parse_acquire(&f, &req, ret_error);
		if (r < 0)
			return r;
	}
	if (!fields_done(&f)) {
		*ret_error = LP_E_SYNTAX;
		return -EINVAL;
	}
	*ret = req;
	return 0;
}

int
lp_request_format(char *buf, size_t size, const struct lp_request *req)
{
	char wait[24];
	int n;

	switch (req->verb) {
	case LP_STATUS:
		n = snprintf(buf, size, "STATUS\n");
		break;
	case LP_PING:
		n = snprintf(buf, size, "PING\n");
		break;
	case LP_LOCKS:
		n = snprintf(buf, size, "LOCKS\n");
		break;
	case LP_LEAVE:
		n = snprintf(buf, size, "LEAVE\n");
		break;
	case LP_REMOVE:
	case LP_JOIN:
		if (req->verb == LP_REMOVE ? !dm_node_name_valid(req->arg, strlen(req->arg))
		    : !lp_sponsor_valid(req->arg, strlen(req->arg)))
			return -EINVAL;
		n = snprintf(buf, size, "%s %s\n", req->verb == LP_REMOVE ? "REMOVE" : "JOIN",
		    req->arg);
		break;
	case LP_RELEASE:
	case LP_CANCEL:
		if (!lp_id_valid(req->id, strlen(req->id)))
			return -EINVAL;
		n = snprintf(buf, size, "%s %s\n",
		    req->verb == LP_RELEASE ? "RELEASE" : "CANCEL", req->id);
		break;
	case LP_ACQUIRE:
		if (!lp_id_valid(req->id, strlen(req->id)) ||
		    !dm_lock_name_valid(req->lock, req->lock_len) ||
		    req->lock_len != strlen(req->lock) ||
		    (req->mode != DM_MODE_EXCLUSIVE && req->mode != DM_MODE_SHARED))
			return -EINVAL;
		if (req->wait_ms == LP_WAIT_TRY)
			snprintf(wait, sizeof(wait), "try");
		else if (req->wait_ms == LP_WAIT_FOREVER)
			snprintf(wait, sizeof(wait), "forever");
		else if (req->wait_ms <= LP_WAIT_MS_MAX)
			snprintf(wait, sizeof(wait), "%" PRIu64, req->wait_ms);
		else
			return -EINVAL;
		n = snprintf(buf, size, "ACQUIRE %s %s %s %s\n", req->id, req->lock,
		    req->mode == DM_MODE_SHARED ? "sh" : "ex", wait);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENOBUFS;
	return n;
}

static const char *
reason_name(const struct word_errno *table, size_t n, int error)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].error == error)
			return table[i].word;
	return "error";
}

static int
reason_from_name(const struct word_errno *table, size_t n, const char *word, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (word_is(word, len, table[i].word))
			return table[i].error;
	return -EIO;
}

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

const char *
lp_denied_reason_name(int error)
{
	return reason_name(denied_reasons, N_ELEMS(denied_reasons), error);
}

int
lp_denied_reason_from_name(const char *word, size_t len)
{
	return reason_from_name(denied_reasons, N_ELEMS(denied_reasons), word, len);
}

const char *
lp_lost_reason_name(int error)
{
	return reason_name(lost_reasons, N_ELEMS(lost_reasons), error);
}

int
lp_lost_reason_from_name(const char *word, size_t len)
{
	return reason_from_name(lost_reasons, N_ELEMS(lost_reasons), word, len);
}

const char *
lp_error_name(enum lp_error code)
{
	if ((int)code <= 0 || code >= _LP_E_MAX)
		return NULL;
	return error_names[code];
}

static enum lp_error
error_from_name(const char *w, size_t n)
{
	for (int c = 1; c < _LP_E_MAX; c++)
		if (c != LP_E_OTHER && word_is(w, n, error_names[c]))
			return (enum lp_error)c;
	return LP_E_OTHER;
}

/* A reason or code word: 1..32 bytes of [a-z-]. */
static bool
word_valid(const char *w, size_t n)
{
	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '-'))
			return false;
	return true;
}

static bool
take_name(struct fields *f, char *dst, size_t max, bool (*valid)(const char *, size_t))
{
	const char *w;
	size_t n;
	if (!field_next(f, &w, &n) || n > max || !valid(w, n))
		return false;
	memcpy(dst, w, n);
	dst[n] = '\0';
	return true;
}

static bool
algorithm_name_valid(const char *w, size_t n)
{
	return word_valid(w, n) || dm_node_name_valid(w, n);
}

static int
parse_reply_rest(enum lp_reply_type type, struct fields *f, struct lp_reply *rep)
{
	const char *w;
	size_t n;

	switch (type) {
	case LP_R_GRANTED:
		if (!take_id(f, rep->id) || !field_next(f, &w, &n) ||
		    !parse_u64(w, n, UINT64_MAX, &rep->token) || rep->token == 0 ||
		    !field_next(f, &w, &n) || !parse_u64(w, n, UINT64_MAX, &rep->deadline))
			return -EPROTO;
		break;
	case LP_R_EXTEND:
		if (!take_id(f, rep->id) || !field_next(f, &w, &n) ||
		    !parse_u64(w, n, UINT64_MAX, &rep->deadline))
			return -EPROTO;
		break;
	case LP_R_RELEASED:
		if (!take_id(f, rep->id))
			return -EPROTO;
		break;
	case LP_R_DENIED:
	case LP_R_LOST:
		if (!take_id(f, rep->id) || !field_next(f, &w, &n) || !word_valid(w, n))
			return -EPROTO;
		rep->error = type == LP_R_DENIED ? lp_denied_reason_from_name(w, n)
		    : lp_lost_reason_from_name(w, n);
		fields_rest(f, &rep->text, &rep->text_len);
		break;
	case LP_R_ERROR:
		if (!field_next(f, &w, &n))
			return -EPROTO;
		if (word_is(w, n, "-"))
			rep->id[0] = '\0';
		else if (lp_id_valid(w, n)) {
			memcpy(rep->id, w, n);
			rep->id[n] = '\0';
		} else
			return -EPROTO;
		if (!field_next(f, &w, &n) || !word_valid(w, n))
			return -EPROTO;
		rep->code = error_from_name(w, n);
		fields_rest(f, &rep->text, &rep->text_len);
		break;
	case LP_R_GREETING: {
		uint64_t v;
		if (!field_next(f, &w, &n) || !parse_u64(w, n, 1000000, &v))
			return -EPROTO;
		rep->version = (unsigned)v;
		if (!take_name(f, rep->node, DM_NODE_NAME_MAX, dm_node_name_valid) ||
		    !take_name(f, rep->algorithm, DM_ALGORITHM_NAME_MAX, algorithm_name_valid))
			return -EPROTO;
		break;
	}
	default:
		break;
	}
	return fields_done(f) ? 0 : -EPROTO;
}

int
lp_reply_parse(const char *line, size_t len, struct lp_reply *ret)
{
	static const struct {
		const char		*verb;
		enum lp_reply_type	 type;
	} verbs[] = {
		{ "DMLOCK", LP_R_GREETING }, { "GRANTED", LP_R_GRANTED },
		{ "DENIED", LP_R_DENIED }, { "EXTEND", LP_R_EXTEND },
		{ "LOST", LP_R_LOST }, { "RELEASED", LP_R_RELEASED },
		{ "PONG", LP_R_PONG }, { "ERROR", LP_R_ERROR }, { "END", LP_R_END },
		{ "NODE", LP_R_STATUS_LINE }, { "PEER", LP_R_STATUS_LINE },
		{ "LOCK", LP_R_STATUS_LINE }, { "CAPS", LP_R_STATUS_LINE },
		{ "INFO", LP_R_STATUS_LINE }, { "ALGO", LP_R_STATUS_LINE },
	};
	struct lp_reply rep = { 0 };
	const char *w;
	size_t n;

	len = strip_cr(line, len);
	if (len > LP_REPLY_MAX || !line_printable(line, len))
		return -EPROTO;
	struct fields f = { .p = line, .end = line + len };
	if (!field_next(&f, &w, &n))
		return -EPROTO;
	for (size_t i = 0; i < N_ELEMS(verbs); i++) {
		if (!word_is(w, n, verbs[i].verb))
			continue;
		rep.type = verbs[i].type;
		if (rep.type == LP_R_STATUS_LINE) {
			rep.text = line;
			rep.text_len = len;
			*ret = rep;
			return 0;
		}
		int r = parse_reply_rest(rep.type, &f, &rep);
		if (r < 0)
			return r;
		*ret = rep;
		return 0;
	}
	return -EPROTO;
}

/* Copy text, cut to LP_TEXT_MAX, non-printable bytes replaced by '?'. */
static void
sanitize_text(const char *text, size_t len, char out[static LP_TEXT_MAX + 1])
{
	if (text == NULL)
		len = 0;
	if (len > LP_TEXT_MAX)
		len = LP_TEXT_MAX;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		out[i] = c < 0x20 || c > 0x7e ? '?' : (char)c;
	}
	out[len] = '\0';
}

int
lp_reply_format(char *buf, size_t size, const struct lp_reply *rep)
{
	char text[LP_TEXT_MAX + 1];
	bool id_ok = lp_id_valid(rep->id, strlen(rep->id));
	int n;

	switch (rep->type) {
	case LP_R_GREETING:
		if (!dm_node_name_valid(rep->node, strlen(rep->node)) ||
		    !algorithm_name_valid(rep->algorithm, strlen(rep->algorithm)))
			return -EINVAL;
		n = snprintf(buf, size, "DMLOCK %u %s %s\n", rep->version, rep->node,
		    rep->algorithm);
		break;
	case LP_R_GRANTED:
		if (!id_ok || rep->token == 0)
			return -EINVAL;
		n = snprintf(buf, size, "GRANTED %s %" PRIu64 " %" PRIu64 "\n", rep->id,
		    rep->token, rep->deadline);
		break;
	case LP_R_EXTEND:
		if (!id_ok)
			return -EINVAL;
		n = snprintf(buf, size, "EXTEND %s %" PRIu64 "\n", rep->id, rep->deadline);
		break;
	case LP_R_RELEASED:
		if (!id_ok)
			return -EINVAL;
		n = snprintf(buf, size, "RELEASED %s\n", rep->id);
		break;
	case LP_R_DENIED:
	case LP_R_LOST:
		if (!id_ok)
			return -EINVAL;
		sanitize_text(rep->text, rep->text_len, text);
		n = snprintf(buf, size, "%s %s %s %s\n",
		    rep->type == LP_R_DENIED ? "DENIED" : "LOST", rep->id,
		    rep->type == LP_R_DENIED ? lp_denied_reason_name(rep->error)
		    : lp_lost_reason_name(rep->error), text);
		break;
	case LP_R_ERROR:
		if (lp_error_name(rep->code) == NULL || (rep->id[0] != '\0' && !id_ok))
			return -EINVAL;
		sanitize_text(rep->text, rep->text_len, text);
		n = snprintf(buf, size, "ERROR %s %s %s\n", rep->id[0] != '\0' ? rep->id : "-",
		    lp_error_name(rep->code), text);
		break;
	case LP_R_PONG:
		n = snprintf(buf, size, "PONG\n");
		break;
	case LP_R_END:
		n = snprintf(buf, size, "END\n");
		break;
	case LP_R_STATUS_LINE:
		if (rep->text == NULL || rep->text_len == 0 || rep->text_len >= LP_REPLY_MAX ||
		    !line_printable(rep->text, rep->text_len))
			return -EINVAL;
		n = snprintf(buf, size, "%.*s\n", (int)rep->text_len, rep->text);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENOBUFS;
	return n;
}
