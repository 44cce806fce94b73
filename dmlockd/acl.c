/*
 * acl.c: the [access] rules of dmlockd (see acl.h): parsing a rule into
 * ids, first-match checks of lock requests and roster operations, and a
 * client's groups: from its socket (SO_PEERGROUPS), or from the group
 * database on kernels without it.  Never logs; denials come back as a
 * sentence for the client and the log.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dmlockd/acl.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS	59	/* Linux 4.13; older headers lack the name */
#endif

#define ACL_SOURCE_MAX	96
#define ACL_TEXT_MAX	(DM_LOCK_NAME_MAX + 80)

enum acl_who_kind {
	WHO_ANYONE = 1,
	WHO_USER,
	WHO_GROUP,
};

enum acl_mode {
	ACL_NONE = 0,
	ACL_SHARED,
	ACL_EXCLUSIVE,		/* exclusive and shared */
};

struct acl_rule {
	enum acl_who_kind kind;
	unsigned	 id;		/* uid or gid */
	enum acl_mode	 mode;
	bool		 any_name;	/* PREFIX "*" */
	char		 prefix[DM_LOCK_NAME_MAX + 1];
	size_t		 prefix_len;
	char		 text[ACL_TEXT_MAX];	/* as written, for messages */
	char		 source[ACL_SOURCE_MAX];
};

struct dmd_acl {
	struct acl_rule	*locks;
	size_t		 n_locks;
	struct acl_rule	*roster;	/* only kind and id matter */
	size_t		 n_roster;
};

int
acl_new(struct dmd_acl **ret)
{
	struct dmd_acl *acl = calloc(1, sizeof(*acl));
	if (acl == NULL)
		return -ENOMEM;
	*ret = acl;
	return 0;
}

struct dmd_acl *
acl_free(struct dmd_acl *acl)
{
	if (acl == NULL)
		return NULL;
	free(acl->locks);
	free(acl->roster);
	free(acl);
	return NULL;
}

/* A decimal id without sign, at most 2^32-2 (uid -1 is "nobody set"). */
static bool
parse_id(const char *s, size_t len, unsigned *ret)
{
	unsigned long long v = 0;
	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v >= 0xffffffffULL)
		return false;
	*ret = (unsigned)v;
	return true;
}

/* WHO (len bytes) -> kind and id, resolving names. */
static int
parse_who(const char *who, size_t len, struct acl_rule *rule, char *msg, size_t msglen)
{
	char name[256];
	bool group = len > 0 && who[0] == '@';
	const char *p = group ? who + 1 : who;
	size_t n = group ? len - 1 : len;

	if (len == 1 && who[0] == '*') {
		rule->kind = WHO_ANYONE;
		return 0;
	}
	if (n == 0 || n >= sizeof(name)) {
		snprintf(msg, msglen, "'%.*s' is not a user or @group", (int)len, who);
		return -EINVAL;
	}
	rule->kind = group ? WHO_GROUP : WHO_USER;
	if (parse_id(p, n, &rule->id))
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	if (group) {
		struct group *g = getgrnam(name);
		if (g == NULL) {
			snprintf(msg, msglen, "unknown group '%s'", name);
			return -EINVAL;
		}
		rule->id = (unsigned)g->gr_gid;
	} else {
		struct passwd *pw = getpwnam(name);
		if (pw == NULL) {
			snprintf(msg, msglen, "unknown user '%s'", name);
			return -EINVAL;
		}
		rule->id = (unsigned)pw->pw_uid;
	}
	return 0;
}

static int
grow(struct acl_rule **rules, size_t n, const struct dmd_acl *acl)
{
	if (acl->n_locks + acl->n_roster >= ACL_RULES_MAX)
		return -E2BIG;
	struct acl_rule *grown = realloc(*rules, (n + 1) * sizeof(**rules));
	if (grown == NULL)
		return -ENOMEM;
	*rules = grown;
	return 0;
}

int
acl_add_lock_rule(struct dmd_acl *acl, const char *text, const char *source, char *msg,
    size_t msglen)
{
	struct acl_rule rule = { 0 };
	const char *c1 = strchr(text, ':');
	const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
	int r;

	if (c2 == NULL) {
		snprintf(msg, msglen, "'%s' is not a lock rule (WHO:MODE:PREFIX, e.g. "
		    "@backup:ex:backup/)", text);
		return -EINVAL;
	}
	r = parse_who(text, (size_t)(c1 - text), &rule, msg, msglen);
	if (r < 0)
		return r;
	size_t mlen = (size_t)(c2 - c1 - 1);
	if (mlen == 2 && memcmp(c1 + 1, "ex", 2) == 0)
		rule.mode = ACL_EXCLUSIVE;
	else if (mlen == 2 && memcmp(c1 + 1, "sh", 2) == 0)
		rule.mode = ACL_SHARED;
	else if (mlen == 4 && memcmp(c1 + 1, "none", 4) == 0)
		rule.mode = ACL_NONE;
	else {
		snprintf(msg, msglen, "'%.*s' in '%s' is not a mode (ex, sh or none)", (int)mlen,
		    c1 + 1, text);
		return -EINVAL;
	}
	const char *prefix = c2 + 1;
	size_t plen = strlen(prefix);
	if (plen == 1 && prefix[0] == '*')
		rule.any_name = true;
	else if (plen == 0 || plen > DM_LOCK_NAME_MAX || !dm_lock_name_valid(prefix, plen)) {
		snprintf(msg, msglen, "'%s' has no valid name prefix (\"*\" for every name)", text);
		return -EINVAL;
	} else {
		memcpy(rule.prefix, prefix, plen + 1);
		rule.prefix_len = plen;
	}
	snprintf(rule.text, sizeof(rule.text), "%s", text);
	snprintf(rule.source, sizeof(rule.source), "%s", source != NULL ? source : "");
	r = grow(&acl->locks, acl->n_locks, acl);
	if (r < 0) {
		snprintf(msg, msglen, "too many [access] rules (at most %d)", ACL_RULES_MAX);
		return r;
	}
	acl->locks[acl->n_locks++] = rule;
	return 0;
}

int
acl_add_roster_principal(struct dmd_acl *acl, const char *who, const char *source, char *msg,
    size_t msglen)
{
	struct acl_rule rule = { 0 };
	int r = parse_who(who, strlen(who), &rule, msg, msglen);
	if (r < 0)
		return r;
	snprintf(rule.text, sizeof(rule.text), "%s", who);
	snprintf(rule.source, sizeof(rule.source), "%s", source != NULL ? source : "");
	r = grow(&acl->roster, acl->n_roster, acl);
	if (r < 0) {
		snprintf(msg, msglen, "too many [access] rules (at most %d)", ACL_RULES_MAX);
		return r;
	}
	acl->roster[acl->n_roster++] = rule;
	return 0;
}

void
acl_clear_lock_rules(struct dmd_acl *acl)
{
	acl->n_locks = 0;
}

void
acl_clear_roster(struct dmd_acl *acl)
{
	acl->n_roster = 0;
}

bool
acl_needs_groups(const struct dmd_acl *acl)
{
	if (acl == NULL)
		return false;
	for (size_t i = 0; i < acl->n_locks; i++)
		if (acl->locks[i].kind == WHO_GROUP)
			return true;
	for (size_t i = 0; i < acl->n_roster; i++)
		if (acl->roster[i].kind == WHO_GROUP)
			return true;
	return false;
}

size_t
acl_n_lock_rules(const struct dmd_acl *acl)
{
	return acl != NULL ? acl->n_locks : 0;
}

static bool
who_matches(const struct acl_rule *rule, const struct acl_subject *who)
{
	switch (rule->kind) {
	case WHO_ANYONE:
		return true;
	case WHO_USER:
		return (unsigned)who->uid == rule->id;
	case WHO_GROUP:
		if ((unsigned)who->gid == rule->id)
			return true;
		for (size_t i = 0; i < who->n_groups; i++)
			if ((unsigned)who->groups[i] == rule->id)
				return true;
		return false;
	}
	return false;
}

static bool
name_matches(const struct acl_rule *rule, const char *lock, size_t len)
{
	return rule->any_name ||
	    (len >= rule->prefix_len && memcmp(lock, rule->prefix, rule->prefix_len) == 0);
}

static void
say(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

int
acl_check_lock(const struct dmd_acl *acl, const struct acl_subject *who, const char *lock,
    size_t len, enum dm_mode mode, char *why, size_t whylen)
{
	if (acl == NULL || acl->n_locks == 0)
		return 0;
	for (size_t i = 0; i < acl->n_locks; i++) {
		const struct acl_rule *rule = &acl->locks[i];
		if (!who_matches(rule, who) || !name_matches(rule, lock, len))
			continue;
		if (rule->mode == ACL_EXCLUSIVE ||
		    (rule->mode == ACL_SHARED && mode == DM_MODE_SHARED))
			return 0;
		say(why, whylen, "uid %ld may not take this lock %s: [access] lock = %s (%s)",
		    (long)who->uid, rule->mode == ACL_SHARED ? "exclusive (shared only)" :
		    mode == DM_MODE_SHARED ? "shared" : "exclusive", rule->text, rule->source);
		return -EACCES;
	}
	say(why, whylen, "uid %ld: no [access] lock rule matches this name (%zu rule(s); "
	    "add one to dmlockd.conf)", (long)who->uid, acl->n_locks);
	return -EACCES;
}

int
acl_check_roster(const struct dmd_acl *acl, const struct acl_subject *who, char *why,
    size_t whylen)
{
	if (who->uid == 0)
		return 0;
	for (size_t i = 0; acl != NULL && i < acl->n_roster; i++)
		if (who_matches(&acl->roster[i], who))
			return 0;
	say(why, whylen, "uid %ld may not change the roster: only root%s may (see [access] roster "
	    "in dmlockd.conf)", (long)who->uid,
	    acl != NULL && acl->n_roster > 0 ? " and the [access] roster principals" : "");
	return -EACCES;
}

size_t
acl_lookup_groups(uid_t uid, gid_t gid, gid_t *groups, size_t max)
{
	struct passwd pwbuf, *pw = NULL;
	char buf[4096];
	int n = (int)max;

	if (max == 0)
		return 0;
	groups[0] = gid;
	if (getpwuid_r(uid, &pwbuf, buf, sizeof(buf), &pw) != 0 || pw == NULL)
		return 1;
	if (getgrouplist(pw->pw_name, gid, groups, &n) < 0 || n < 1)
		return max;	/* more than max: the first max were filled */
	return (size_t)n;
}

int
acl_socket_groups(int fd, gid_t gid, gid_t *groups, size_t max)
{
	gid_t small[64], *buf = small;
	socklen_t len = sizeof(small);
	size_t n, out = 0;
	int r;

	if (max == 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, buf, &len) < 0) {
		if (errno != ERANGE)
			return -errno;
		/* More than 64 groups: len now says how many bytes; the kernel
		 * caps a process at NGROUPS_MAX (65536) groups. */
		if (len == 0 || len > 65536 * sizeof(gid_t))
			return -E2BIG;
		buf = malloc(len);
		if (buf == NULL)
			return -ENOMEM;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, buf, &len) < 0) {
			r = -errno;
			free(buf);
			return r;
		}
	}
	n = len / sizeof(gid_t);
	groups[out++] = gid;
	for (size_t i = 0; i < n && out < max; i++)
		if (buf[i] != gid)
			groups[out++] = buf[i];
	if (buf != small)
		free(buf);
	return (int)out;
}
