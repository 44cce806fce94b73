/*
 * config_file.c: loading dmlockd.conf.  Owns the settings table (one row
 * per key: section, key, parser, default, doc), the inih-driven parse with
 * line tracking, and the cross-checks run after the whole file is read.
 * Never logs: the first error is returned as "FILE:LINE: message".  The
 * per-setting parsers are in config_fields.c, the reload comparison in
 * config_reload.c.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "dmlockd/config_private.h"
#include "dmlockd/local_server.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

#define CONFIG_LINE_MAX 4096

/* [local] clients_per_user: the default as text for the table, and the
 * numbers its doc line states, kept equal to local_server.h's. */
#define CLIENTS_PER_USER_DEFAULT "256"
_Static_assert(LOCAL_CLIENTS_PER_UID == 256, "CLIENTS_PER_USER_DEFAULT is LOCAL_CLIENTS_PER_UID");
_Static_assert(LOCAL_CLIENTS_PER_UID_MAX == 1008 && LP_CLIENTS_MAX == 1024 &&
    LOCAL_CLIENTS_ROOT_RESERVED == 16, "the doc of local.clients_per_user states these");

const char *const config_default_algorithms[] = { "ricart-agrawala", NULL };

#define SETTING(sec, k, fn, field, d, l, text) \
	{ sec, k, sec "." k, fn, offsetof(struct dmd_config, field), d, l, text }

const struct config_setting config_settings[] = {
	SETTING("node", "name", config_field_node_name, node_name, NULL, false,
	    "this node's roster name, also the DNS name in its certificate (default: the hostname)"),
	SETTING("node", "listen", config_field_listen, listen, "", true,
	    "addresses to accept peer links on, host:port or [v6]:port, comma separated (default: none, standalone)"),
	SETTING("node", "cluster", config_field_cluster, cluster, "dmlock",
	    false, "cluster name; peers with another cluster name are refused"),
	SETTING("node", "state_directory", config_field_path, state_dir, NULL, false,
	    "durable state (the epoch floor that keeps fencing tokens increasing across restarts), one directory per daemon (default: $STATE_DIRECTORY, else /var/lib/dmlock as root, else $XDG_STATE_HOME/dmlock)"),
	SETTING("cluster", "peers", config_field_peers, peers, "", true,
	    "initial roster, name@host:port, comma separated, this node included or not"),
	SETTING("cluster", "sponsor", config_field_sponsor, sponsor, "", false,
	    "join an existing cluster through this member, name@host:port (instead of peers)"),
	SETTING("cluster", "algorithm", config_field_algorithm, algorithm, "ricart-agrawala", false,
	    "mutual-exclusion algorithm; every node of a cluster must use the same"),
	SETTING("cluster", "election", config_field_election, election, "bully", false,
	    "leader election for the coordinator and token algorithms: bully or invitation"),
	SETTING("cluster", "group_size", config_field_group_size, group_size, "4", false,
	    "nodes per group of the hierarchical algorithm (1 to 64)"),
	SETTING("cluster", "failure_policy", config_field_policy, failure_policy, "majority", false,
	    "majority (removal needs a strict majority, leases) or paper (RA section 7.4 as written)"),
	SETTING("cluster", "request_timeout", config_field_duration, request_timeout_ms, "5s", false,
	    "wait this long for a REPLY before probing the silent peer"),
	SETTING("cluster", "probe_timeout", config_field_duration, probe_timeout_ms, "2s", false,
	    "wait this long for a probe answer before declaring the peer failed"),
	SETTING("cluster", "lease", config_field_duration, lease_ms, "3s", false,
	    "a holder that cannot renew within this long loses its locks"),
	SETTING("cluster", "heartbeat", config_field_duration, heartbeat_ms, "500ms", false,
	    "lease renewal period; must be shorter than lease"),
	SETTING("cluster", "restart_interval", config_field_duration, restart_interval_ms, "10s", false,
	    "a restarted node waits this long before taking part (RA section 7.2.1)"),
	SETTING("tls", "ca", config_field_path, tls_ca, SYSCONFDIR "/dmlock/ca.crt", false,
	    "cluster CA certificate (PEM); peers must present a certificate it signed"),
	SETTING("tls", "cert", config_field_path, tls_cert, SYSCONFDIR "/dmlock/node.crt", false,
	    "this node's certificate (PEM), SAN DNS = node name"),
	SETTING("tls", "key", config_field_path, tls_key, SYSCONFDIR "/dmlock/node.key", false,
	    "this node's private key (PEM)"),
	SETTING("tls", "crl", config_field_optional_string, tls_crl, "", false,
	    "certificate revocation list (PEM), optional"),
	SETTING("transport", "keepalive", config_field_duration, keepalive_ms, "1s", false,
	    "send a KEEPALIVE frame on a link idle this long"),
	SETTING("transport", "keepalive_misses", config_field_count, keepalive_misses, "5", false,
	    "cut a link after this many keepalive periods without a frame from the peer"),
	SETTING("transport", "reconnect_min", config_field_duration, reconnect_min_ms, "100ms", false,
	    "first reconnect delay; doubles per failure (with jitter)"),
	SETTING("transport", "reconnect_max", config_field_duration, reconnect_max_ms, "5s", false,
	    "largest reconnect delay"),
	SETTING("transport", "handshake_timeout", config_field_duration, handshake_timeout_ms, "10s",
	    false,
	    "a connection must finish TLS and HELLO within this long"),
	SETTING("transport", "max_handshakes", config_field_count, max_handshakes, "64", false,
	    "connections in TLS/HELLO handshake at once; more are closed at accept"),
	SETTING("transport", "send_queue_limit", config_field_count, send_queue_limit, "65536", false,
	    "messages queued (unacknowledged) per peer; past it a message is lost and dmlockd exits 75 to restart as a new incarnation"),
	SETTING("transport", "write_buffer_limit", config_field_bytes, write_buffer_limit, "16M", false,
	    "bytes a link may hold in its write buffer before it is cut as too slow"),
	SETTING("local", "socket", config_field_path, local_socket, RUNSTATEDIR "/dmlock/dmlockd.sock",
	    false,
	    "Unix socket for local clients (dmlock, libdmlock)"),
	SETTING("local", "socket_mode", config_field_mode, socket_mode, "0660", false,
	    "permissions of the socket, octal"),
	SETTING("local", "socket_group", config_field_optional_string, socket_group, "", false,
	    "group owning the socket (default: dmlock if that group exists and dmlockd runs as root, else the daemon's group)"),
	SETTING("local", "clients_per_user", config_field_clients_per_user, clients_per_user,
	    CLIENTS_PER_USER_DEFAULT, false,
	    "local connections one user other than root may hold at once (1 to 1008; of 1024, the last 16 are kept for root)"),
	SETTING("access", "lock", config_field_access_lock, acl, "", true,
	    "lock rules WHO:MODE:PREFIX, first match decides; WHO * user uid @group @gid, MODE ex sh none, PREFIX * or a name prefix (default: none, everyone may lock anything)"),
	SETTING("access", "roster", config_field_access_roster, acl, "", true,
	    "users (name, uid) and @groups allowed to run join, leave and remove besides root (default: none)"),
	SETTING("log", "level", config_field_log_level, log_level, "info", false,
	    "err, warning, notice, info or debug"),
};
#define N_SETTINGS (sizeof(config_settings) / sizeof(config_settings[0]))
_Static_assert(N_SETTINGS == CONFIG_N_SETTINGS,
    "CONFIG_N_SETTINGS (config_private.h) counts the rows of config_settings");

static const char *const sections[] = { "node", "cluster", "tls", "transport", "local", "access",
    "log", NULL };

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

/* ---- the parse ---- */

static void
clear_list(struct dmd_config *c, const struct config_setting *s)
{
	if (s->parse == config_field_listen) {
		for (size_t i = 0; i < c->n_listen; i++)
			free(c->listen[i]);
		c->n_listen = 0;
	} else if (s->parse == config_field_peers) {
		for (size_t i = 0; i < c->n_peers; i++) {
			free((char *)c->peers[i].name);
			free((char *)c->peers[i].address);
		}
		c->n_peers = 0;
	} else if (s->parse == config_field_access_lock && c->acl != NULL) {
		acl_clear_lock_rules(c->acl);
	} else if (s->parse == config_field_access_roster && c->acl != NULL) {
		acl_clear_roster(c->acl);
	}
}

static const struct config_setting *
find_setting(const char *section, const char *key, size_t *ret_index)
{
	for (size_t i = 0; i < N_SETTINGS; i++) {
		if (strcmp(config_settings[i].section, section) == 0 &&
		    strcmp(config_settings[i].key, key) == 0) {
			*ret_index = i;
			return &config_settings[i];
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
		const struct config_setting *s = &config_settings[i];
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
		if (strcmp(config_settings[i].full_name, full_name) == 0)
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

const char *const *
config_key_names(void)
{
	static const char *names[N_SETTINGS + 1];

	for (size_t i = 0; i < N_SETTINGS; i++)
		names[i] = config_settings[i].full_name;
	names[N_SETTINGS] = NULL;
	return names;
}

void
config_print_keys(FILE *out)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		fprintf(out, "%s = %s ; %s\n", config_settings[i].full_name,
		    config_settings[i].def != NULL ? config_settings[i].def : "(computed)",
		    config_settings[i].doc);
}
