/*
 * config_file.c: loading dmlockd.conf.  Owns the settings table (one row
 * per key: section, key, parser, default, doc), the inih-driven parse with
 * line tracking, and the cross-checks run after the whole file is read.
 * Never logs: the first error is returned as "FILE:LINE: message".
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "dmlockd/config_file.h"
#include "dmlockd/frame.h"
#include "dmlockd/local_server.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

#define CONFIG_LINE_MAX 4096
#define CONFIG_LIST_SEPARATORS ", \t"

/* [local] clients_per_user: the default as text for the table, and the
 * numbers its doc line states, kept equal to local_server.h's. */
#define CLIENTS_PER_USER_DEFAULT "256"
_Static_assert(LOCAL_CLIENTS_PER_UID == 256, "CLIENTS_PER_USER_DEFAULT is LOCAL_CLIENTS_PER_UID");
_Static_assert(LOCAL_CLIENTS_PER_UID_MAX == 1008 && LP_CLIENTS_MAX == 1024 &&
    LOCAL_CLIENTS_ROOT_RESERVED == 16, "the doc of local.clients_per_user states these");

const char *const config_default_algorithms[] = { "ricart-agrawala", NULL };

struct config_state;
typedef int config_parse_fn(struct config_state *st, void *field, const char *value,
    char *msg, size_t msglen);

struct config_setting {
	const char	*section;
	const char	*key;
	const char	*full_name;	/* "section.key" */
	config_parse_fn	*parse;
	size_t		 offset;
	const char	*def;		/* parsed like a value from the file; NULL: computed */
	bool		 list;		/* repeated keys and continuation lines append */
	const char	*doc;
};

static config_parse_fn parse_node_name, parse_listen, parse_cluster, parse_peers, parse_sponsor,
    parse_algorithm, parse_policy, parse_duration, parse_count, parse_bytes, parse_path,
    parse_optional_string, parse_mode, parse_log_level, parse_access_lock, parse_access_roster,
    parse_election, parse_group_size, parse_clients_per_user;

static int parse_unsigned(const char *value, uint64_t max, uint64_t *ret);

#define SETTING(sec, k, fn, field, d, l, text) \
	{ sec, k, sec "." k, fn, offsetof(struct dmd_config, field), d, l, text }

static const struct config_setting settings[] = {
	SETTING("node", "name", parse_node_name, node_name, NULL, false,
	    "this node's roster name, also the DNS name in its certificate (default: the hostname)"),
	SETTING("node", "listen", parse_listen, listen, "", true,
	    "addresses to accept peer links on, host:port or [v6]:port, comma separated (default: none, standalone)"),
	SETTING("node", "cluster", parse_cluster, cluster, "dmlock",
	    false, "cluster name; peers with another cluster name are refused"),
	SETTING("node", "state_directory", parse_path, state_dir, NULL, false,
	    "durable state (the epoch floor that keeps fencing tokens increasing across restarts), one directory per daemon (default: $STATE_DIRECTORY, else /var/lib/dmlock as root, else $XDG_STATE_HOME/dmlock)"),
	SETTING("cluster", "peers", parse_peers, peers, "", true,
	    "initial roster, name@host:port, comma separated, this node included or not"),
	SETTING("cluster", "sponsor", parse_sponsor, sponsor, "", false,
	    "join an existing cluster through this member, name@host:port (instead of peers)"),
	SETTING("cluster", "algorithm", parse_algorithm, algorithm, "ricart-agrawala", false,
	    "mutual-exclusion algorithm; every node of a cluster must use the same"),
	SETTING("cluster", "election", parse_election, election, "bully", false,
	    "leader election for the coordinator and token algorithms: bully or invitation"),
	SETTING("cluster", "group_size", parse_group_size, group_size, "4", false,
	    "nodes per group of the hierarchical algorithm (1 to 64)"),
	SETTING("cluster", "failure_policy", parse_policy, failure_policy, "majority", false,
	    "majority (removal needs a strict majority, leases) or paper (RA section 7.4 as written)"),
	SETTING("cluster", "request_timeout", parse_duration, request_timeout_ms, "5s", false,
	    "wait this long for a REPLY before probing the silent peer"),
	SETTING("cluster", "probe_timeout", parse_duration, probe_timeout_ms, "2s", false,
	    "wait this long for a probe answer before declaring the peer failed"),
	SETTING("cluster", "lease", parse_duration, lease_ms, "3s", false,
	    "a holder that cannot renew within this long loses its locks"),
	SETTING("cluster", "heartbeat", parse_duration, heartbeat_ms, "500ms", false,
	    "lease renewal period; must be shorter than lease"),
	SETTING("cluster", "restart_interval", parse_duration, restart_interval_ms, "10s", false,
	    "a restarted node waits this long before taking part (RA section 7.2.1)"),
	SETTING("tls", "ca", parse_path, tls_ca, SYSCONFDIR "/dmlock/ca.crt", false,
	    "cluster CA certificate (PEM); peers must present a certificate it signed"),
	SETTING("tls", "cert", parse_path, tls_cert, SYSCONFDIR "/dmlock/node.crt", false,
	    "this node's certificate (PEM), SAN DNS = node name"),
	SETTING("tls", "key", parse_path, tls_key, SYSCONFDIR "/dmlock/node.key", false,
	    "this node's private key (PEM)"),
	SETTING("tls", "crl", parse_optional_string, tls_crl, "", false,
	    "certificate revocation list (PEM), optional"),
	SETTING("transport", "keepalive", parse_duration, keepalive_ms, "1s", false,
	    "send a KEEPALIVE frame on a link idle this long"),
	SETTING("transport", "keepalive_misses", parse_count, keepalive_misses, "5", false,
	    "cut a link after this many keepalive periods without a frame from the peer"),
	SETTING("transport", "reconnect_min", parse_duration, reconnect_min_ms, "100ms", false,
	    "first reconnect delay; doubles per failure (with jitter)"),
	SETTING("transport", "reconnect_max", parse_duration, reconnect_max_ms, "5s", false,
	    "largest reconnect delay"),
	SETTING("transport", "handshake_timeout", parse_duration, handshake_timeout_ms, "10s", false,
	    "a connection must finish TLS and HELLO within this long"),
	SETTING("transport", "max_handshakes", parse_count, max_handshakes, "64", false,
	    "connections in TLS/HELLO handshake at once; more are closed at accept"),
	SETTING("transport", "send_queue_limit", parse_count, send_queue_limit, "65536", false,
	    "messages queued (unacknowledged) per peer; past it a message is lost and dmlockd exits 75 to restart as a new incarnation"),
	SETTING("transport", "write_buffer_limit", parse_bytes, write_buffer_limit, "16M", false,
	    "bytes a link may hold in its write buffer before it is cut as too slow"),
	SETTING("local", "socket", parse_path, local_socket, RUNSTATEDIR "/dmlock/dmlockd.sock", false,
	    "Unix socket for local clients (dmlock, libdmlock)"),
	SETTING("local", "socket_mode", parse_mode, socket_mode, "0660", false,
	    "permissions of the socket, octal"),
	SETTING("local", "socket_group", parse_optional_string, socket_group, "", false,
	    "group owning the socket (default: dmlock if that group exists and dmlockd runs as root, else the daemon's group)"),
	SETTING("local", "clients_per_user", parse_clients_per_user, clients_per_user,
	    CLIENTS_PER_USER_DEFAULT, false,
	    "local connections one user other than root may hold at once (1 to 1008; of 1024, the last 16 are kept for root)"),
	SETTING("access", "lock", parse_access_lock, acl, "", true,
	    "lock rules WHO:MODE:PREFIX, first match decides; WHO * user uid @group @gid, MODE ex sh none, PREFIX * or a name prefix (default: none, everyone may lock anything)"),
	SETTING("access", "roster", parse_access_roster, acl, "", true,
	    "users (name, uid) and @groups allowed to run join, leave and remove besides root (default: none)"),
	SETTING("log", "level", parse_log_level, log_level, "info", false,
	    "err, warning, notice, info or debug"),
};
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static const char *const sections[] = { "node", "cluster", "tls", "transport", "local", "access",
    "log", NULL };

struct config_state {
	struct dmd_config	*c;
	const char		*path;
	const char *const	*algorithms;
	FILE			*file;
	int			 lineno;
	bool			 in_defaults;
	int			 err_line;	/* 0: none; -1: error without a line */
	int			 err_code;
	char			 err[512];
	bool			 seen[N_SETTINGS];
	int			 line_of[N_SETTINGS];
};

static void
state_error(struct config_state *st, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
state_error(struct config_state *st, int line, int code, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (st->err_line != 0)
		return;	/* keep the first */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(st->err, sizeof(st->err), "%s:%d: %s", st->path, line, msg);
	else
		snprintf(st->err, sizeof(st->err), "%s: %s", st->path, msg);
	st->err_line = line > 0 ? line : -1;
	st->err_code = code;
}

static bool
str_differs(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") != 0;
}

/* ---- value parsers: fill *field from value, or write a message ---- */

static int
set_string(void *field, const char *value)
{
	char **p = field, *copy = strdup(value);
	if (copy == NULL)
		return -ENOMEM;
	free(*p);
	*p = copy;
	return 0;
}

static int
parse_node_name(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (!dm_node_name_valid(value, strlen(value))) {
		snprintf(msg, n, "'%s' is not a valid node name (1-63 of A-Z a-z 0-9 . _ -, "
		    "starting with a letter or digit)", value);
		return -EINVAL;
	}
	return set_string(field, value);
}

static int
parse_cluster(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (!frame_cluster_name_valid(value, strlen(value))) {
		snprintf(msg, n, "'%s' is not a valid cluster name (1-63 of A-Z a-z 0-9 . _ -)", value);
		return -EINVAL;
	}
	return set_string(field, value);
}

/* Split value on CONFIG_LIST_SEPARATORS and call fn for each item. */
static int
for_each_item(struct config_state *st, const char *value, char *msg, size_t n,
    int (*fn)(struct config_state *, const char *, char *, size_t))
{
	char *copy = strdup(value), *save = NULL;
	int r = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (char *item = strtok_r(copy, CONFIG_LIST_SEPARATORS, &save); item != NULL && r == 0;
	    item = strtok_r(NULL, CONFIG_LIST_SEPARATORS, &save))
		r = fn(st, item, msg, n);
	free(copy);
	return r;
}

static int
add_listen(struct config_state *st, const char *item, char *msg, size_t n)
{
	struct dmd_config *c = st->c;

	if (config_parse_address(item, NULL, 0, NULL) < 0) {
		snprintf(msg, n, "'%s' is not an address (host:port or [v6]:port)", item);
		return -EINVAL;
	}
	if (c->n_listen >= CONFIG_LISTEN_MAX) {
		snprintf(msg, n, "more than %d listen addresses", CONFIG_LISTEN_MAX);
		return -EINVAL;
	}
	c->listen[c->n_listen] = strdup(item);
	if (c->listen[c->n_listen] == NULL)
		return -ENOMEM;
	c->n_listen++;
	return 0;
}

static int
parse_listen(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_listen);
}

static int
add_peer(struct config_state *st, const char *item, char *msg, size_t n)
{
	struct dmd_config *c = st->c;
	struct dm_peer_spec *grown;
	char *name, *address;
	int r;

	r = config_parse_peer(item, &name, &address);
	if (r == -EINVAL)
		snprintf(msg, n, "'%s' is not a peer (name@host:port)", item);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_peers; i++) {
		if (strcmp(c->peers[i].name, name) == 0) {
			snprintf(msg, n, "peer '%s' is listed twice", name);
			r = -EINVAL;
			goto fail;
		}
	}
	if (c->n_peers >= DM_NODES_MAX) {
		snprintf(msg, n, "more than %d peers", DM_NODES_MAX);
		r = -EINVAL;
		goto fail;
	}
	grown = realloc(c->peers, (c->n_peers + 1) * sizeof(*grown));
	if (grown == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	c->peers = grown;
	c->peers[c->n_peers++] = (struct dm_peer_spec){ name, address };
	return 0;
fail:
	free(name);
	free(address);
	return r;
}

static int
parse_peers(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_peer);
}

static int
parse_sponsor(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	struct dm_peer_spec *s = field;
	char *name, *address;
	int r;

	if (*value == '\0')
		return 0;
	r = config_parse_peer(value, &name, &address);
	if (r == -EINVAL)
		snprintf(msg, n, "'%s' is not a peer (name@host:port)", value);
	if (r < 0)
		return r;
	free((char *)s->name);
	free((char *)s->address);
	s->name = name;
	s->address = address;
	return 0;
}

static int
parse_algorithm(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	size_t used = 0;

	for (const char *const *a = st->algorithms; *a != NULL; a++)
		if (strcmp(*a, value) == 0)
			return set_string(field, value);
	used = (size_t)snprintf(msg, n, "unknown algorithm '%s' (known:", value);
	for (const char *const *a = st->algorithms; *a != NULL && used < n; a++)
		used += (size_t)snprintf(msg + used, n - used, " %s", *a);
	if (used < n)
		snprintf(msg + used, n - used, ")");
	return -EINVAL;
}

static int
parse_policy(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	enum dm_failure_policy *p = field;

	if (strcmp(value, "majority") == 0)
		*p = DM_FAILURE_MAJORITY;
	else if (strcmp(value, "paper") == 0)
		*p = DM_FAILURE_PAPER;
	else {
		snprintf(msg, n, "'%s' is not a failure policy (majority or paper)", value);
		return -EINVAL;
	}
	return 0;
}

static int
parse_election(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	char **p = field;

	if (strcmp(value, "bully") != 0 && strcmp(value, "invitation") != 0) {
		snprintf(msg, n, "'%s' is not an election (bully or invitation)", value);
		return -EINVAL;
	}
	char *copy = strdup(value);
	if (copy == NULL)
		return -ENOMEM;
	free(*p);
	*p = copy;
	return 0;
}

static int
parse_group_size(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, 64, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a group size (1 to 64)", value);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

static int
parse_clients_per_user(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, LOCAL_CLIENTS_PER_UID_MAX, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a number of connections (1 to %d: of %d, the last %d "
		    "are kept for root)", value, LOCAL_CLIENTS_PER_UID_MAX, LP_CLIENTS_MAX,
		    LOCAL_CLIENTS_ROOT_RESERVED);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

static int
parse_duration(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	dm_msec_t ms;

	if (config_parse_duration(value, &ms) < 0 || ms == 0) {
		snprintf(msg, n, "'%s' is not a duration (a positive number with ms, s, m or h)", value);
		return -EINVAL;
	}
	*(dm_msec_t *)field = ms;
	return 0;
}

static int
parse_unsigned(const char *value, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (*value == '\0')
		return -EINVAL;
	for (const char *p = value; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int
parse_count(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, 1000000000, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a count (1 to 1000000000)", value);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

static int
parse_bytes(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	const uint64_t max = UINT64_C(1) << 40;
	char digits[32];
	size_t len = strlen(value);
	uint64_t v, mult = 1;

	if (len > 0 && len < sizeof(digits)) {
		memcpy(digits, value, len + 1);
		switch (digits[len - 1]) {
		case 'k': case 'K': mult = 1024; break;
		case 'M': mult = 1024 * 1024; break;
		case 'G': mult = 1024 * 1024 * 1024; break;
		}
		if (mult != 1)
			digits[len - 1] = '\0';
		if (digits[0] != '\0' && strspn(digits, "0123456789") == strlen(digits)) {
			/* Bounded before multiplying: v * mult cannot wrap. */
			if (parse_unsigned(digits, max / mult, &v) < 0) {
				snprintf(msg, n, "'%s' is too large (at most 2^40 bytes: 1024G)", value);
				return -EINVAL;
			}
			if (v * mult >= FRAME_MAX) {
				*(uint64_t *)field = v * mult;
				return 0;
			}
		}
	}
	snprintf(msg, n, "'%s' is not a size (%d to 2^40 bytes, suffix K, M or G allowed)", value,
	    FRAME_MAX);
	return -EINVAL;
}

static int
parse_path(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (*value == '\0' || strlen(value) >= PATH_MAX) {
		snprintf(msg, n, "a path is required");
		return -EINVAL;
	}
	return set_string(field, value);
}

static int
parse_optional_string(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	char **p = field;

	if (*value == '\0') {
		free(*p);
		*p = NULL;
		return 0;
	}
	if (strlen(value) >= PATH_MAX) {
		snprintf(msg, n, "value too long");
		return -EINVAL;
	}
	return set_string(field, value);
}

static int
parse_mode(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(value, &end, 8);
	if (*value < '0' || *value > '7' || errno != 0 || *end != '\0' || v > 0777) {
		snprintf(msg, n, "'%s' is not an octal mode (0000 to 0777)", value);
		return -EINVAL;
	}
	*(mode_t *)field = (mode_t)v;
	return 0;
}

static int
parse_log_level(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (log_level_from_string(value, field) < 0) {
		snprintf(msg, n, "'%s' is not a log level (err, warning, notice, info, debug)", value);
		return -EINVAL;
	}
	return 0;
}

static int
acl_item(struct config_state *st, const char *item, char *msg, size_t n, bool lock_rule)
{
	char source[96];
	int r;

	if (st->c->acl == NULL) {
		r = acl_new(&st->c->acl);
		if (r < 0)
			return r;
	}
	const char *base = strrchr(st->path, '/');
	snprintf(source, sizeof(source), "%s line %d", base != NULL ? base + 1 : st->path,
	    st->lineno);
	return lock_rule ? acl_add_lock_rule(st->c->acl, item, source, msg, n)
	    : acl_add_roster_principal(st->c->acl, item, source, msg, n);
}

static int
add_access_lock(struct config_state *st, const char *item, char *msg, size_t n)
{
	return acl_item(st, item, msg, n, true);
}

static int
add_access_roster(struct config_state *st, const char *item, char *msg, size_t n)
{
	return acl_item(st, item, msg, n, false);
}

static int
parse_access_lock(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_access_lock);
}

static int
parse_access_roster(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_access_roster);
}

/* ---- the parse ---- */

static void
clear_list(struct dmd_config *c, const struct config_setting *s)
{
	if (s->parse == parse_listen) {
		for (size_t i = 0; i < c->n_listen; i++)
			free(c->listen[i]);
		c->n_listen = 0;
	} else if (s->parse == parse_peers) {
		for (size_t i = 0; i < c->n_peers; i++) {
			free((char *)c->peers[i].name);
			free((char *)c->peers[i].address);
		}
		c->n_peers = 0;
	} else if (s->parse == parse_access_lock && c->acl != NULL) {
		acl_clear_lock_rules(c->acl);
	} else if (s->parse == parse_access_roster && c->acl != NULL) {
		acl_clear_roster(c->acl);
	}
}

static const struct config_setting *
find_setting(const char *section, const char *key, size_t *ret_index)
{
	for (size_t i = 0; i < N_SETTINGS; i++) {
		if (strcmp(settings[i].section, section) == 0 && strcmp(settings[i].key, key) == 0) {
			*ret_index = i;
			return &settings[i];
		}
	}
	return NULL;
}

static bool
section_known(const char *section, size_t len)
{
	for (const char *const *s = sections; *s != NULL; s++)
		if (strlen(*s) == len && strncmp(*s, section, len) == 0)
			return true;
	return false;
}

static int
ini_handler_fn(void *user, const char *section, const char *key, const char *value)
{
	struct config_state *st = user;
	const struct config_setting *s;
	char msg[300] = "";
	size_t i;
	int r;

	if (st->err_line != 0)
		return 0;
	if (*section == '\0') {
		state_error(st, st->lineno, -EINVAL, "'%s' is outside any [section]", key);
		return 0;
	}
	s = find_setting(section, key, &i);
	if (s == NULL) {
		state_error(st, st->lineno, -EINVAL, "unknown key '%s' in section [%s]", key, section);
		return 0;
	}
	if (st->seen[i] && !s->list) {
		state_error(st, st->lineno, -EINVAL, "[%s] %s is set twice (first on line %d)", section,
		    key, st->line_of[i]);
		return 0;
	}
	if (!st->seen[i]) {
		if (s->list)
			clear_list(st->c, s);	/* the file replaces the default */
		st->seen[i] = true;
		st->line_of[i] = st->lineno;
	}
	r = s->parse(st, (char *)st->c + s->offset, value, msg, sizeof(msg));
	if (r < 0) {
		state_error(st, st->lineno, r, "[%s] %s: %s", section, key,
		    r == -ENOMEM ? "out of memory" : msg);
		return 0;
	}
	return 1;
}

/* Line reader for inih: counts lines, refuses over-long lines and unknown
 * [section] headers (inih would skip an empty unknown section silently). */
static char *
ini_reader_fn(char *str, int num, void *stream)
{
	struct config_state *st = stream;
	char line[CONFIG_LINE_MAX];
	const char *p;
	size_t len;

	if (fgets(line, sizeof(line), st->file) == NULL)
		return NULL;
	st->lineno++;
	len = strlen(line);
	if ((len > 0 && line[len - 1] != '\n' && !feof(st->file)) || len + 1 >= (size_t)num) {
		state_error(st, st->lineno, -EINVAL, "line longer than %d bytes",
		    (num < CONFIG_LINE_MAX ? num : CONFIG_LINE_MAX) - 3);
		/* skip the rest of the line, hand inih an empty one */
		if (len > 0 && line[len - 1] != '\n') {
			int ch;
			while ((ch = fgetc(st->file)) != EOF && ch != '\n')
				;
		}
		str[0] = '\0';
		return str;
	}
	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (close == NULL)
			state_error(st, st->lineno, -EINVAL, "section header '%.*s' has no "
			    "closing ']'", (int)strcspn(p, "\r\n"), p);
		else if (!section_known(p + 1, (size_t)(close - p - 1)))
			state_error(st, st->lineno, -EINVAL, "unknown section %.*s (known: [node] "
			    "[cluster] [tls] [transport] [local] [access] [log])",
			    (int)(close - p + 1), p);
	}
	memcpy(str, line, len + 1);
	return str;
}

static int
apply_defaults(struct config_state *st)
{
	char msg[300];

	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct config_setting *s = &settings[i];
		if (s->def == NULL)
			continue;
		int r = s->parse(st, (char *)st->c + s->offset, s->def, msg, sizeof(msg));
		if (r < 0) {
			state_error(st, 0, r, "default of [%s] %s: %s", s->section, s->key,
			    r == -ENOMEM ? "out of memory" : msg);
			return r;
		}
	}
	return 0;
}

static int
line_of(const struct config_state *st, const char *full_name)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (strcmp(settings[i].full_name, full_name) == 0)
			return st->seen[i] ? st->line_of[i] : 0;
	return 0;
}

/* Make a relative path relative to the config file's directory. */
static int
resolve_path(const char *config_path, char **p)
{
	const char *slash;
	char *joined;

	if (*p == NULL || (*p)[0] == '/')
		return 0;
	slash = strrchr(config_path, '/');
	if (slash == NULL)
		return 0;
	if (asprintf(&joined, "%.*s/%s", (int)(slash - config_path), config_path, *p) < 0)
		return -ENOMEM;
	free(*p);
	*p = joined;
	return 0;
}

static bool
self_in_peers(const struct dmd_config *c)
{
	for (size_t i = 0; i < c->n_peers; i++)
		if (strcmp(c->peers[i].name, c->node_name) == 0)
			return true;
	return false;
}

static void
check_file(struct config_state *st, const char *key, const char *path)
{
	if (path != NULL && access(path, R_OK) < 0)
		state_error(st, line_of(st, key), -errno, "[%s] %s: cannot read %s: %s",
		    strncmp(key, "tls.", 4) == 0 ? "tls" : "?", key + 4, path, strerror(errno));
}

static void
cross_check(struct config_state *st)
{
	struct dmd_config *c = st->c;
	size_t others;
	bool networked;

	/* The node name first: whether this node is one of the peers (and so
	 * whether the cluster has other members) depends on it. */
	if (c->node_name == NULL) {
		char host[256] = "";
		if (gethostname(host, sizeof(host) - 1) < 0 || !dm_node_name_valid(host, strlen(host))) {
			state_error(st, 0, -EINVAL, "[node] name is not set and the hostname '%s' is not "
			    "a valid node name", host);
			return;
		}
		c->node_name = strdup(host);
		if (c->node_name == NULL) {
			state_error(st, 0, -ENOMEM, "out of memory");
			return;
		}
	}
	others = c->n_peers - (self_in_peers(c) ? 1 : 0);
	networked = others > 0 || c->sponsor.name != NULL;
	if (c->sponsor.name != NULL && c->n_peers > 0)
		state_error(st, line_of(st, "cluster.sponsor"), -EINVAL,
		    "[cluster] peers and sponsor are mutually exclusive (peers on line %d)",
		    line_of(st, "cluster.peers"));
	if (c->sponsor.name != NULL && strcmp(c->sponsor.name, c->node_name) == 0)
		state_error(st, line_of(st, "cluster.sponsor"), -EINVAL,
		    "[cluster] sponsor '%s' is this node", c->sponsor.name);
	if (networked && c->n_listen == 0)
		state_error(st, line_of(st, c->sponsor.name != NULL ? "cluster.sponsor" : "cluster.peers"),
		    -EINVAL, "[node] listen is required when the cluster has other members");
	if (c->heartbeat_ms >= c->lease_ms)
		state_error(st, line_of(st, "cluster.heartbeat"), -EINVAL,
		    "[cluster] heartbeat (%llu ms) must be shorter than lease (%llu ms)",
		    (unsigned long long)c->heartbeat_ms, (unsigned long long)c->lease_ms);
	if (c->reconnect_min_ms > c->reconnect_max_ms)
		state_error(st, line_of(st, "transport.reconnect_min"), -EINVAL,
		    "[transport] reconnect_min must not exceed reconnect_max");
	if (resolve_path(st->path, &c->tls_ca) < 0 || resolve_path(st->path, &c->tls_cert) < 0 ||
	    resolve_path(st->path, &c->tls_key) < 0 || resolve_path(st->path, &c->tls_crl) < 0 ||
	    resolve_path(st->path, &c->state_dir) < 0) {
		state_error(st, 0, -ENOMEM, "out of memory");
		return;
	}
	if (networked || c->n_listen > 0) {
		check_file(st, "tls.ca", c->tls_ca);
		check_file(st, "tls.cert", c->tls_cert);
		check_file(st, "tls.key", c->tls_key);
	}
	check_file(st, "tls.crl", c->tls_crl);
}

int
config_load(const char *path, const char *const *algorithms, struct dmd_config **ret, char *err,
    size_t errlen)
{
	struct config_state st = { .path = path, .algorithms = algorithms };
	int r;

	if (st.algorithms == NULL)
		st.algorithms = config_default_algorithms;
	st.c = calloc(1, sizeof(*st.c));
	if (st.c == NULL) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	st.c->path = strdup(path);
	if (st.c->path == NULL) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	r = apply_defaults(&st);
	if (r < 0) {
		snprintf(err, errlen, "%s", st.err);
		goto fail;
	}
	st.file = fopen(path, "re");
	if (st.file == NULL) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	r = ini_parse_stream(ini_reader_fn, &st, ini_handler_fn, &st);
	fclose(st.file);
	if (r > 0 && (st.err_line <= 0 || r < st.err_line)) {
		st.err_line = 0;
		state_error(&st, r, -EINVAL, "syntax error (expected [section] or key = value)");
	} else if (r < 0 && st.err_line == 0) {
		state_error(&st, 0, -ENOMEM, "out of memory");
	}
	if (st.err_line == 0)
		cross_check(&st);
	if (st.err_line != 0) {
		r = st.err_code;
		snprintf(err, errlen, "%s", st.err);
		goto fail;
	}
	*ret = st.c;
	return 0;
fail:
	config_free(st.c);
	return r;
}

struct dmd_config *
config_free(struct dmd_config *c)
{
	if (c == NULL)
		return NULL;
	for (size_t i = 0; i < c->n_listen; i++)
		free(c->listen[i]);
	for (size_t i = 0; i < c->n_peers; i++) {
		free((char *)c->peers[i].name);
		free((char *)c->peers[i].address);
	}
	free(c->peers);
	free((char *)c->sponsor.name);
	free((char *)c->sponsor.address);
	free(c->path);
	free(c->node_name);
	free(c->cluster);
	free(c->state_dir);
	free(c->algorithm);
	free(c->election);
	free(c->tls_ca);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->tls_crl);
	free(c->local_socket);
	free(c->socket_group);
	acl_free(c->acl);
	free(c);
	return NULL;
}

struct dmd_acl *
config_take_acl(struct dmd_config *c)
{
	if (c == NULL)
		return NULL;
	struct dmd_acl *acl = c->acl;
	c->acl = NULL;
	return acl;
}

const char *
config_self_address(const struct dmd_config *c)
{
	for (size_t i = 0; i < c->n_peers; i++)
		if (strcmp(c->peers[i].name, c->node_name) == 0)
			return c->peers[i].address;
	return c->n_listen > 0 ? c->listen[0] : NULL;
}

void
config_to_engine(const struct dmd_config *c, uint64_t incarnation, uint64_t seed,
    struct dm_engine_config *ret)
{
	*ret = (struct dm_engine_config){
		.self = c->node_name,
		.self_address = config_self_address(c),
		.cluster = c->cluster,
		.algorithm = c->algorithm,
		.failure_policy = c->failure_policy,
		.incarnation = incarnation,
		.seed = seed,
		.peers = c->peers,
		.n_peers = c->n_peers,
		.sponsor = c->sponsor.name != NULL ? &c->sponsor : NULL,
		.request_timeout_ms = c->request_timeout_ms,
		.probe_timeout_ms = c->probe_timeout_ms,
		.lease_ms = c->lease_ms,
		.heartbeat_ms = c->heartbeat_ms,
		.restart_interval_ms = c->restart_interval_ms,
		.election = c->election,
		.group_size = c->group_size,
	};
}

/* ---- reload: which settings a running daemon cannot apply ---- */

/* Applied on SIGHUP (main.c): the TLS files, the [access] rules, the log
 * level.  Everything else is read once at start. */
static bool
setting_reloadable(const struct config_setting *s)
{
	return strcmp(s->section, "tls") == 0 || strcmp(s->section, "access") == 0 ||
	    strcmp(s->section, "log") == 0;
}

static bool
spec_equal(const struct dm_peer_spec *a, const struct dm_peer_spec *b)
{
	return !str_differs(a->name, b->name) && !str_differs(a->address, b->address);
}

/* The same peers with the same addresses, in any order (names are unique). */
static bool
peers_equal(const struct dmd_config *a, const struct dmd_config *b)
{
	if (a->n_peers != b->n_peers)
		return false;
	for (size_t i = 0; i < a->n_peers; i++) {
		size_t j;
		for (j = 0; j < b->n_peers; j++)
			if (!str_differs(a->peers[i].name, b->peers[j].name))
				break;
		if (j == b->n_peers || !spec_equal(&a->peers[i], &b->peers[j]))
			return false;
	}
	return true;
}

static bool
listen_equal(const struct dmd_config *a, const struct dmd_config *b)
{
	if (a->n_listen != b->n_listen)
		return false;
	for (size_t i = 0; i < a->n_listen; i++)
		if (str_differs(a->listen[i], b->listen[i]))
			return false;
	return true;
}

/* Whether setting s has the same value in a and b, by the type its parser
 * fills.  An unknown parser counts as a change (check_config compares every
 * key of a config with itself, so a new parser without a case here fails). */
static bool
setting_equal(const struct config_setting *s, const struct dmd_config *a, const struct dmd_config *b)
{
	const void *fa = (const char *)a + s->offset, *fb = (const char *)b + s->offset;

	if (s->parse == parse_node_name || s->parse == parse_cluster || s->parse == parse_path ||
	    s->parse == parse_optional_string || s->parse == parse_algorithm ||
	    s->parse == parse_election)
		return !str_differs(*(char *const *)fa, *(char *const *)fb);
	if (s->parse == parse_listen)
		return listen_equal(a, b);
	if (s->parse == parse_peers)
		return peers_equal(a, b);
	if (s->parse == parse_sponsor)
		return spec_equal(fa, fb);
	if (s->parse == parse_policy)
		return *(const enum dm_failure_policy *)fa == *(const enum dm_failure_policy *)fb;
	if (s->parse == parse_duration)
		return *(const dm_msec_t *)fa == *(const dm_msec_t *)fb;
	if (s->parse == parse_count || s->parse == parse_group_size ||
	    s->parse == parse_clients_per_user)
		return *(const uint32_t *)fa == *(const uint32_t *)fb;
	if (s->parse == parse_bytes)
		return *(const uint64_t *)fa == *(const uint64_t *)fb;
	if (s->parse == parse_mode)
		return *(const mode_t *)fa == *(const mode_t *)fb;
	if (s->parse == parse_log_level)
		return *(const enum log_level *)fa == *(const enum log_level *)fb;
	return false;
}

size_t
config_restart_changes(const struct dmd_config *running, const struct dmd_config *fresh,
    const char **keys, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct config_setting *s = &settings[i];
		if (setting_reloadable(s) || setting_equal(s, running, fresh))
			continue;
		if (n < max)
			keys[n] = s->full_name;
		n++;
	}
	return n;
}

const char *const *
config_key_names(void)
{
	static const char *names[N_SETTINGS + 1];

	for (size_t i = 0; i < N_SETTINGS; i++)
		names[i] = settings[i].full_name;
	names[N_SETTINGS] = NULL;
	return names;
}

void
config_print_keys(FILE *out)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		fprintf(out, "%s = %s ; %s\n", settings[i].full_name,
		    settings[i].def != NULL ? settings[i].def : "(computed)", settings[i].doc);
}
