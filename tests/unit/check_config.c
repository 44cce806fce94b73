/*
 * check_config.c: unit tests for dmlockd.conf loading (dmlockd/config_*.c):
 * fixture files in tests/unit/conf/ for a full, a minimal and a sponsor
 * config and one file per error class (each must be refused with the right
 * FILE:LINE and message), the value parsers, and the example file's
 * coverage of every key.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmlockd/config_file.h"

static char fixture_dir[4096];
static char err[1024];

static struct dmd_config *load_text(const char *text);
static const char *restart_changes(const struct dmd_config *a, const struct dmd_config *b);

static const char *
fixture(const char *name)
{
	static char path[8192];
	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	return path;
}

START_TEST(full_config_values)
{
	struct dmd_config *c = NULL;
	struct dm_engine_config ec;

	ck_assert_msg(config_load(fixture("good-full.conf"), NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c->node_name, "alpha");
	ck_assert_uint_eq(c->n_listen, 3);
	ck_assert_str_eq(c->listen[0], "127.0.0.1:7411");
	ck_assert_str_eq(c->listen[1], "[::1]:7411");
	ck_assert_str_eq(c->listen[2], "localhost:7412");
	ck_assert_str_eq(c->cluster, "test-cluster");
	ck_assert_uint_eq(c->n_peers, 3);
	ck_assert_str_eq(c->peers[2].name, "gamma");
	ck_assert_str_eq(c->peers[2].address, "[::1]:7431");
	ck_assert_ptr_null(c->sponsor.name);
	ck_assert_str_eq(c->algorithm, "ricart-agrawala");
	ck_assert_int_eq(c->failure_policy, DM_FAILURE_PAPER);
	ck_assert_uint_eq(c->request_timeout_ms, 1500);
	ck_assert_uint_eq(c->probe_timeout_ms, 2000);
	ck_assert_uint_eq(c->lease_ms, 60000);
	ck_assert_uint_eq(c->heartbeat_ms, 10000);
	ck_assert_uint_eq(c->restart_interval_ms, 3600000);
	ck_assert_ptr_nonnull(strstr(c->tls_ca, "/conf/tls/ca.pem"));
	ck_assert_ptr_nonnull(strstr(c->tls_crl, "/conf/tls/crl.pem"));
	ck_assert_uint_eq(c->keepalive_ms, 250);
	ck_assert_uint_eq(c->keepalive_misses, 3);
	ck_assert_uint_eq(c->reconnect_min_ms, 10);
	ck_assert_uint_eq(c->reconnect_max_ms, 2000);
	ck_assert_uint_eq(c->handshake_timeout_ms, 3000);
	ck_assert_uint_eq(c->max_handshakes, 8);
	ck_assert_uint_eq(c->send_queue_limit, 1000);
	ck_assert_uint_eq(c->write_buffer_limit, 2 * 1024 * 1024);
	ck_assert_str_eq(c->local_socket, "/tmp/dmlock-test.sock");
	ck_assert_uint_eq(c->socket_mode, 0600);
	ck_assert_str_eq(c->socket_group, "wheel");
	ck_assert_int_eq(c->log_level, LOG_LEVEL_DEBUG);

	config_to_engine(c, 77, 99, &ec);
	ck_assert_str_eq(ec.self, "alpha");
	ck_assert_str_eq(ec.self_address, "127.0.0.1:7411");
	ck_assert_str_eq(ec.cluster, "test-cluster");
	ck_assert_uint_eq(ec.incarnation, 77);
	ck_assert_uint_eq(ec.seed, 99);
	ck_assert_uint_eq(ec.n_peers, 3);
	ck_assert_ptr_null(ec.sponsor);
	ck_assert_uint_eq(ec.lease_ms, 60000);
	ck_assert_int_eq(ec.failure_policy, DM_FAILURE_PAPER);
	config_free(c);
}
END_TEST

START_TEST(minimal_config_defaults)
{
	struct dmd_config *c = NULL;

	ck_assert_msg(config_load(fixture("good-minimal.conf"), NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c->node_name, "solo");
	ck_assert_uint_eq(c->n_listen, 0);
	ck_assert_uint_eq(c->n_peers, 0);
	ck_assert_str_eq(c->cluster, "dmlock");
	ck_assert_str_eq(c->algorithm, "ricart-agrawala");
	ck_assert_int_eq(c->failure_policy, DM_FAILURE_MAJORITY);
	ck_assert_uint_eq(c->request_timeout_ms, 5000);
	ck_assert_uint_eq(c->lease_ms, 3000);
	ck_assert_uint_eq(c->heartbeat_ms, 500);
	ck_assert_uint_eq(c->probe_timeout_ms, 2000);
	ck_assert_uint_eq(c->keepalive_ms, 1000);
	ck_assert_uint_eq(c->keepalive_misses, 5);
	ck_assert_uint_eq(c->write_buffer_limit, 16 * 1024 * 1024);
	ck_assert_ptr_null(c->tls_crl);
	ck_assert_ptr_null(c->socket_group);
	ck_assert_uint_eq(c->socket_mode, 0660);
	ck_assert_uint_eq(c->clients_per_user, 256);
	ck_assert_int_eq(c->log_level, LOG_LEVEL_INFO);
	ck_assert_ptr_nonnull(strstr(c->local_socket, "/dmlock/dmlockd.sock"));
	ck_assert_ptr_null(config_self_address(c));
	config_free(c);
}
END_TEST

START_TEST(access_rules)
{
	struct dmd_config *c = NULL;
	struct acl_subject root = { .uid = 0, .gid = 0 }, other = { .uid = 4242, .gid = 4242 };
	struct acl_subject nobody = { .uid = 65534, .gid = 65534 };
	char why[300] = "";

	ck_assert_msg(config_load(fixture("good-access.conf"), NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(c->acl);
	ck_assert_uint_eq(acl_n_lock_rules(c->acl), 3);
	ck_assert_int_eq(acl_check_lock(c->acl, &root, "backup/x", 8, DM_MODE_EXCLUSIVE, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(acl_check_lock(c->acl, &other, "backup/x", 8, DM_MODE_SHARED, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(acl_check_lock(c->acl, &other, "backup/x", 8, DM_MODE_EXCLUSIVE, why,
	    sizeof(why)), -EACCES);
	/* The denial names the rule and where it is. */
	ck_assert_ptr_nonnull(strstr(why, "*:sh:backup/ (good-access.conf line 6)"));
	ck_assert_int_eq(acl_check_lock(c->acl, &root, "secret/x", 8, DM_MODE_SHARED, why,
	    sizeof(why)), -EACCES);
	ck_assert_int_eq(acl_check_lock(c->acl, &root, "other", 5, DM_MODE_SHARED, why,
	    sizeof(why)), -EACCES);
	ck_assert_int_eq(acl_check_roster(c->acl, &nobody, why, sizeof(why)), 0);
	ck_assert_int_eq(acl_check_roster(c->acl, &other, why, sizeof(why)), -EACCES);
	struct dmd_acl *acl = config_take_acl(c);
	ck_assert_ptr_nonnull(acl);
	ck_assert_ptr_null(c->acl);
	config_free(c);
	acl_free(acl);

	/* No [access] section: no ACL at all. */
	ck_assert_msg(config_load(fixture("good-minimal.conf"), NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_null(config_take_acl(c));
	config_free(c);
}
END_TEST

START_TEST(sponsor_config)
{
	struct dmd_config *c = NULL;
	struct dm_engine_config ec;

	ck_assert_msg(config_load(fixture("good-sponsor.conf"), NULL, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c->sponsor.name, "alpha");
	ck_assert_str_eq(c->sponsor.address, "127.0.0.1:7411");
	config_to_engine(c, 1, 2, &ec);
	ck_assert_ptr_nonnull(ec.sponsor);
	ck_assert_str_eq(ec.sponsor->name, "alpha");
	ck_assert_str_eq(ec.self_address, "127.0.0.1:7441");
	config_free(c);
}
END_TEST

/* [local] clients_per_user: 256 by default (minimal_config_defaults), any
 * count from 1 to 1008 (1024 less the 16 kept for root); 0 and 1009 are
 * refused with key, value and line (bad_files).  It is read at start
 * only: a change is reported as needing a restart, never applied. */
START_TEST(local_clients_per_user)
{
	struct dmd_config *c = NULL;

	ck_assert_msg(config_load(fixture("good-clients-per-user.conf"), NULL, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(c->clients_per_user, 500);
	config_free(c);
	c = load_text("[node]\nname = solo\n[local]\nclients_per_user = 1\n");
	ck_assert_uint_eq(c->clients_per_user, 1);
	config_free(c);
	c = load_text("[node]\nname = solo\n[local]\nclients_per_user = 1008\n");
	ck_assert_uint_eq(c->clients_per_user, 1008);

	struct dmd_config *dflt = load_text("[node]\nname = solo\n");
	struct dmd_config *same = load_text("[node]\nname = solo\n[local]\nclients_per_user = 256\n");
	ck_assert_uint_eq(dflt->clients_per_user, 256);
	ck_assert_str_eq(restart_changes(dflt, same), "");
	ck_assert_str_eq(restart_changes(dflt, c), "local.clients_per_user");
	ck_assert_str_eq(restart_changes(c, dflt), "local.clients_per_user");
	config_free(c);
	config_free(dflt);
	config_free(same);
}
END_TEST

START_TEST(algorithm_list_from_caller)
{
	static const char *const algs[] = { "maekawa", NULL };
	struct dmd_config *c = NULL;

	/* The default "ricart-agrawala" is not in this list: refused. */
	ck_assert_int_eq(config_load(fixture("good-minimal.conf"), algs, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "unknown algorithm 'ricart-agrawala' (known: maekawa)"));
}
END_TEST

/* Peers but no [node] name: the name defaults to the hostname before the
 * loader asks whether this node is one of the peers (it used to compare
 * with the unset name and crash).  With two other peers and no listen
 * address, the load must be refused for that, or for a hostname that is no
 * valid node name on an unusual machine. */
START_TEST(peers_without_node_name)
{
	struct dmd_config *c = NULL;
	int r = config_load(fixture("bad-peers-no-name.conf"), NULL, &c, err, sizeof(err));

	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "[node] listen is required when the cluster has other members") ||
	    strstr(err, "[node] name is not set and the hostname"), "%s", err);
}
END_TEST

START_TEST(missing_file)
{
	struct dmd_config *c = NULL;

	ck_assert_int_eq(config_load(fixture("does-not-exist.conf"), NULL, &c, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "does-not-exist.conf: cannot open: No such file"));
}
END_TEST

static const struct {
	const char	*file;
	int		 line;		/* 0: no line number expected */
	const char	*message;
} bad_files[] = {
	{ "bad-unknown-key.conf", 3, "unknown key 'nmae' in section [node]" },
	{ "bad-unknown-section.conf", 3, "unknown section [nodes]" },
	{ "bad-empty-unknown-section.conf", 4, "unknown section [bogus]" },
	{ "bad-unclosed-section.conf", 3, "section header '[cluster' has no closing ']'" },
	{ "bad-outside-section.conf", 1, "'name' is outside any [section]" },
	{ "bad-syntax.conf", 3, "syntax error" },
	{ "bad-duplicate.conf", 4, "[node] name is set twice (first on line 2)" },
	{ "bad-name.conf", 2, "'-leading-dash' is not a valid node name" },
	{ "bad-cluster.conf", 2, "'has space' is not a valid cluster name" },
	{ "bad-listen.conf", 3, "'::1:7411' is not an address" },
	{ "bad-port.conf", 3, "'127.0.0.1:70000' is not an address" },
	{ "bad-peer.conf", 4, "'c127.0.0.1:2' is not a peer" },
	{ "bad-duplicate-peer.conf", 5, "peer 'b' is listed twice" },
	{ "bad-sponsor.conf", 2, "'alpha' is not a peer" },
	{ "bad-algorithm.conf", 2, "unknown algorithm 'raft'" },
	{ "bad-policy.conf", 2, "'hope' is not a failure policy" },
	{ "bad-duration.conf", 2, "[cluster] lease: '10' is not a duration" },
	{ "bad-duration-zero.conf", 2, "'0s' is not a duration" },
	{ "bad-count.conf", 2, "'many' is not a count" },
	{ "bad-bytes.conf", 2, "'12X' is not a size" },
	{ "bad-bytes-overflow.conf", 3, "[transport] write_buffer_limit: '17179869185G' is too large" },
	{ "bad-bytes-large.conf", 3, "[transport] write_buffer_limit: '1025G' is too large" },
	{ "bad-mode.conf", 2, "'0999' is not an octal mode" },
	{ "bad-clients-per-user-zero.conf", 4,
	    "[local] clients_per_user: '0' is not a number of connections (1 to 1008" },
	{ "bad-clients-per-user-large.conf", 5,
	    "[local] clients_per_user: '1009' is not a number of connections (1 to 1008" },
	{ "bad-level.conf", 2, "'loud' is not a log level" },
	{ "bad-heartbeat.conf", 3, "heartbeat (5000 ms) must be shorter than lease (5000 ms)" },
	{ "bad-reconnect.conf", 2, "reconnect_min must not exceed reconnect_max" },
	{ "bad-peers-and-sponsor.conf", 6, "peers and sponsor are mutually exclusive" },
	{ "bad-sponsor-self.conf", 5, "sponsor 'a' is this node" },
	{ "bad-listen-required.conf", 4, "listen is required" },
	{ "bad-tls-missing.conf", 6, "[tls] cert: cannot read" },
	{ "bad-crl-missing.conf", 4, "[tls] crl: cannot read" },
	{ "bad-long-line.conf", 3, "line longer than" },
	{ "bad-access-mode.conf", 3, "[access] lock: 'rw' in '*:rw:x/' is not a mode" },
	{ "bad-access-user.conf", 4, "[access] roster: unknown user 'no-such-user-dmlock-test'" },
};

START_TEST(bad_file_refused)
{
	struct dmd_config *c = NULL;
	char prefix[8400];
	int r;

	r = config_load(fixture(bad_files[_i].file), NULL, &c, err, sizeof(err));
	ck_assert_msg(r < 0, "%s was accepted", bad_files[_i].file);
	ck_assert_ptr_null(c);
	if (bad_files[_i].line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", fixture(bad_files[_i].file), bad_files[_i].line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", fixture(bad_files[_i].file));
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "got '%s', want prefix '%s'", err, prefix);
	ck_assert_msg(strstr(err, bad_files[_i].message) != NULL, "got '%s', want '%s'", err,
	    bad_files[_i].message);
}
END_TEST

START_TEST(durations)
{
	dm_msec_t ms = 0;

	ck_assert_int_eq(config_parse_duration("500ms", &ms), 0);
	ck_assert_uint_eq(ms, 500);
	ck_assert_int_eq(config_parse_duration("5s", &ms), 0);
	ck_assert_uint_eq(ms, 5000);
	ck_assert_int_eq(config_parse_duration("2m", &ms), 0);
	ck_assert_uint_eq(ms, 120000);
	ck_assert_int_eq(config_parse_duration("1h", &ms), 0);
	ck_assert_uint_eq(ms, 3600000);
	ck_assert_int_eq(config_parse_duration("5", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("s", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("-5s", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("5 s", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("1.5s", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("99999999999999999999s", &ms), -EINVAL);
	ck_assert_int_eq(config_parse_duration("200h", &ms), -EINVAL);
}
END_TEST

START_TEST(addresses_and_peers)
{
	char host[128], *name = NULL, *address = NULL;
	uint16_t port = 0;

	ck_assert_int_eq(config_parse_address("127.0.0.1:7411", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_uint_eq(port, 7411);
	ck_assert_int_eq(config_parse_address("[::1]:9", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 9);
	ck_assert_int_eq(config_parse_address("node-1.example.com:1", host, sizeof(host), &port), 0);
	ck_assert_int_eq(config_parse_address("::1:9", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("[::1]9", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("[zz]:9", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("host:0", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("host:", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address(":80", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("host:80x", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_address("ho st:80", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(config_parse_peer("n1@[::1]:7411", &name, &address), 0);
	ck_assert_str_eq(name, "n1");
	ck_assert_str_eq(address, "[::1]:7411");
	free(name);
	free(address);
	ck_assert_int_eq(config_parse_peer("@[::1]:7411", &name, &address), -EINVAL);
	ck_assert_int_eq(config_parse_peer("n1", &name, &address), -EINVAL);
	ck_assert_int_eq(config_parse_peer("n 1@h:1", &name, &address), -EINVAL);
}
END_TEST

/* Sizes up to 2^40 bytes, with or without a suffix; anything larger is
 * refused as too large, never wrapped (17179869185G * 2^30 is 2^64 + 2^30,
 * which 64-bit arithmetic made 1 GiB). */
static int
load_size(const char *size, uint64_t *ret)
{
	char path[] = "/tmp/check_config.XXXXXX";
	struct dmd_config *c = NULL;
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[transport]\nwrite_buffer_limit = %s\n", size);
	ck_assert_int_eq(fclose(f), 0);
	int r = config_load(path, NULL, &c, err, sizeof(err));
	unlink(path);
	if (r == 0)
		*ret = c->write_buffer_limit;
	config_free(c);
	return r;
}

START_TEST(sizes_bounded_without_overflow)
{
	static const char *const too_large[] = { "17179869185G", "17179869184G", "1025G",
	    "1048577M", "1073741825K", "1099511627777", "18446744073709551617",
	    "99999999999999999999G" };
	uint64_t v = 0;

	ck_assert_int_eq(load_size("1024G", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(1) << 40);
	ck_assert_int_eq(load_size("1048576M", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(1) << 40);
	ck_assert_int_eq(load_size("1099511627776", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(1) << 40);
	ck_assert_int_eq(load_size("1G", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(1) << 30);
	ck_assert_int_eq(load_size("64k", &v), -EINVAL);	/* below one frame */
	ck_assert_ptr_nonnull(strstr(err, "is not a size"));
	ck_assert_int_eq(load_size("0G", &v), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "is not a size"));
	for (size_t i = 0; i < sizeof(too_large) / sizeof(too_large[0]); i++) {
		ck_assert_msg(load_size(too_large[i], &v) == -EINVAL, "%s accepted as %llu",
		    too_large[i], (unsigned long long)v);
		ck_assert_msg(strstr(err, ":2: [transport] write_buffer_limit: '") != NULL &&
		    strstr(err, "' is too large (at most 2^40 bytes") != NULL, "%s: %s", too_large[i], err);
	}
}
END_TEST

/* ---- reload: config_restart_changes() ---- */

/* Load a config written from text into a temp file (TLS paths point at the
 * fixtures); fails the test if it is refused. */
static struct dmd_config *
load_text(const char *text)
{
	char path[] = "/tmp/check_config.XXXXXX";
	struct dmd_config *c = NULL;
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n[tls]\nca = %s/tls/ca.pem\ncert = %s/tls/node.pem\nkey = %s/tls/node.key\n",
	    text, fixture_dir, fixture_dir, fixture_dir);
	ck_assert_int_eq(fclose(f), 0);
	int r = config_load(path, NULL, &c, err, sizeof(err));
	unlink(path);
	ck_assert_msg(r == 0, "%s", err);
	return c;
}

/* The names config_restart_changes() reports, space separated. */
static const char *
restart_changes(const struct dmd_config *a, const struct dmd_config *b)
{
	static char out[2048];
	const char *keys[64];
	size_t n = config_restart_changes(a, b, keys, 64), used = 0;

	ck_assert_uint_le(n, 64);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s", i ? " " : "", keys[i]);
	return out;
}

#define RELOAD_BASE \
	"[node]\nname = alpha\nlisten = 127.0.0.1:7411, [::1]:7411\ncluster = c1\n" \
	"state_directory = /tmp/st1\n" \
	"[cluster]\npeers = alpha@127.0.0.1:7411, beta@127.0.0.1:7421, gamma@127.0.0.1:7431\n" \
	"algorithm = ricart-agrawala\nelection = bully\ngroup_size = 4\nfailure_policy = majority\n" \
	"request_timeout = 5s\nprobe_timeout = 2s\nlease = 3s\nheartbeat = 500ms\n" \
	"restart_interval = 10s\n" \
	"[transport]\nkeepalive = 1s\nkeepalive_misses = 5\nreconnect_min = 100ms\n" \
	"reconnect_max = 5s\nhandshake_timeout = 10s\nmax_handshakes = 64\n" \
	"send_queue_limit = 65536\nwrite_buffer_limit = 16M\n" \
	"[local]\nsocket = /tmp/s1.sock\nsocket_mode = 0660\nsocket_group = g1\n" \
	"clients_per_user = 256\n"

/* A config compared with itself (every fixture, every key's parser): no
 * change; an unknown parser would count as one. */
START_TEST(reload_same_config_no_change)
{
	static const char *const files[] = { "good-full.conf", "good-minimal.conf",
	    "good-sponsor.conf", "good-access.conf" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct dmd_config *a = NULL, *b = NULL;
		ck_assert_msg(config_load(fixture(files[i]), NULL, &a, err, sizeof(err)) == 0, "%s", err);
		ck_assert_msg(config_load(fixture(files[i]), NULL, &b, err, sizeof(err)) == 0, "%s", err);
		ck_assert_msg(config_restart_changes(a, b, NULL, 0) == 0, "%s: %s", files[i],
		    restart_changes(a, b));
		config_free(a);
		config_free(b);
	}
	struct dmd_config *a = load_text(RELOAD_BASE), *b = load_text(RELOAD_BASE);
	ck_assert_str_eq(restart_changes(a, b), "");
	config_free(b);
	/* Peers listed in another order are the same roster. */
	b = load_text("[node]\nname = alpha\nlisten = 127.0.0.1:7411, [::1]:7411\ncluster = c1\n"
	    "state_directory = /tmp/st1\n"
	    "[cluster]\npeers = gamma@127.0.0.1:7431, alpha@127.0.0.1:7411, beta@127.0.0.1:7421\n"
	    "[local]\nsocket = /tmp/s1.sock\nsocket_group = g1\n");
	ck_assert_str_eq(restart_changes(a, b), "");
	config_free(a);
	config_free(b);
}
END_TEST

/* What SIGHUP applies ([tls] files, [access], [log]) is no restart change. */
START_TEST(reload_reloadable_keys_not_reported)
{
	struct dmd_config *a = load_text(RELOAD_BASE "[log]\nlevel = info\n");
	struct dmd_config *b = load_text(RELOAD_BASE "[log]\nlevel = debug\n"
	    "[access]\nlock = *:sh:x/\nroster = 0\n");

	ck_assert_str_eq(restart_changes(a, b), "");
	free(b->tls_crl);
	b->tls_crl = strdup("/elsewhere/crl.pem");
	free(b->tls_ca);
	b->tls_ca = strdup("/elsewhere/ca.pem");
	ck_assert_str_eq(restart_changes(a, b), "");
	config_free(a);
	config_free(b);
}
END_TEST

/* Every other setting is reported when it changes, counts unchanged: an
 * address of listen or peers, the sponsor, timeouts, election, group size,
 * [transport], socket mode and group. */
START_TEST(reload_every_restart_key_reported)
{
	struct dmd_config *a = load_text(RELOAD_BASE);
	struct dmd_config *b = load_text(
	    "[node]\nname = alpha2\nlisten = 127.0.0.1:7412, [::1]:7411\ncluster = c2\n"
	    "state_directory = /tmp/st2\n"
	    "[cluster]\npeers = alpha2@127.0.0.1:7412, beta@127.0.0.2:7421, gamma@127.0.0.1:7431\n"
	    "algorithm = ricart-agrawala\nelection = invitation\ngroup_size = 5\n"
	    "failure_policy = paper\nrequest_timeout = 6s\nprobe_timeout = 3s\nlease = 4s\n"
	    "heartbeat = 400ms\nrestart_interval = 11s\n"
	    "[transport]\nkeepalive = 2s\nkeepalive_misses = 6\nreconnect_min = 200ms\n"
	    "reconnect_max = 6s\nhandshake_timeout = 9s\nmax_handshakes = 63\n"
	    "send_queue_limit = 65535\nwrite_buffer_limit = 15M\n"
	    "[local]\nsocket = /tmp/s2.sock\nsocket_mode = 0600\nsocket_group = g2\n"
	    "clients_per_user = 255\n");

	ck_assert_str_eq(restart_changes(a, b), "node.name node.listen node.cluster "
	    "node.state_directory cluster.peers cluster.election cluster.group_size "
	    "cluster.failure_policy cluster.request_timeout cluster.probe_timeout cluster.lease "
	    "cluster.heartbeat cluster.restart_interval transport.keepalive "
	    "transport.keepalive_misses transport.reconnect_min transport.reconnect_max "
	    "transport.handshake_timeout transport.max_handshakes transport.send_queue_limit "
	    "transport.write_buffer_limit local.socket local.socket_mode local.socket_group "
	    "local.clients_per_user");
	/* Only the count is bounded by max; the return value says how many. */
	const char *two[2];
	ck_assert_uint_eq(config_restart_changes(a, b, two, 2), 25);
	ck_assert_str_eq(two[0], "node.name");
	ck_assert_str_eq(two[1], "node.listen");
	config_free(b);

	/* One peer's address alone. */
	b = load_text("[node]\nname = alpha\nlisten = 127.0.0.1:7411, [::1]:7411\ncluster = c1\n"
	    "state_directory = /tmp/st1\n"
	    "[cluster]\npeers = alpha@127.0.0.1:7411, beta@127.0.0.1:7421, gamma@127.0.0.1:7432\n"
	    "[local]\nsocket = /tmp/s1.sock\nsocket_group = g1\n");
	ck_assert_str_eq(restart_changes(a, b), "cluster.peers");
	config_free(b);
	/* A peer renamed, same address, same count. */
	b = load_text("[node]\nname = alpha\nlisten = 127.0.0.1:7411, [::1]:7411\ncluster = c1\n"
	    "state_directory = /tmp/st1\n"
	    "[cluster]\npeers = alpha@127.0.0.1:7411, beta@127.0.0.1:7421, delta@127.0.0.1:7431\n"
	    "[local]\nsocket = /tmp/s1.sock\nsocket_group = g1\n");
	ck_assert_str_eq(restart_changes(a, b), "cluster.peers");
	config_free(a);
	config_free(b);

	/* The sponsor: address, then name; and the algorithm. */
	a = load_text("[node]\nname = delta\nlisten = 127.0.0.1:7441\n"
	    "[cluster]\nsponsor = alpha@127.0.0.1:7411\n");
	b = load_text("[node]\nname = delta\nlisten = 127.0.0.1:7441\n"
	    "[cluster]\nsponsor = alpha@127.0.0.1:7499\n");
	ck_assert_str_eq(restart_changes(a, b), "cluster.sponsor");
	config_free(b);
	b = load_text("[node]\nname = delta\nlisten = 127.0.0.1:7441\n"
	    "[cluster]\nsponsor = beta@127.0.0.1:7411\n");
	ck_assert_str_eq(restart_changes(a, b), "cluster.sponsor");
	config_free(b);
	static const char *const algs[] = { "ricart-agrawala", "lamport", NULL };
	ck_assert_int_eq(config_load(fixture("good-sponsor.conf"), algs, &b, err, sizeof(err)), 0);
	free(b->algorithm);
	b->algorithm = strdup("lamport");
	free((char *)b->sponsor.address);
	b->sponsor.address = strdup("127.0.0.1:7499");
	ck_assert_str_eq(restart_changes(a, b), "cluster.sponsor cluster.algorithm");
	config_free(a);
	config_free(b);
}
END_TEST

/* Every key of the table is documented in conf/dmlockd.conf.example, in
 * its section, as a commented default line ";key = ". */
START_TEST(example_documents_every_key)
{
	const char *srcdir = getenv("top_srcdir");
	char path[4096], line[512], section[64] = "";
	const char *const *keys = config_key_names();
	size_t n_keys = 0, found = 0;
	bool seen[64] = { false };
	FILE *f;

	snprintf(path, sizeof(path), "%s/conf/dmlockd.conf.example", srcdir != NULL ? srcdir : "..");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	for (n_keys = 0; keys[n_keys] != NULL; n_keys++)
		;
	ck_assert_uint_le(n_keys, 64);
	while (fgets(line, sizeof(line), f) != NULL) {
		char key[64];
		if (sscanf(line, "[%63[a-z]]", section) == 1)
			continue;
		if (sscanf(line, ";%63[a-z_] =", key) != 1)
			continue;
		for (size_t i = 0; i < n_keys; i++) {
			char full[160];
			snprintf(full, sizeof(full), "%s.%s", section, key);
			if (strcmp(full, keys[i]) == 0 && !seen[i]) {
				seen[i] = true;
				found++;
			}
		}
	}
	fclose(f);
	for (size_t i = 0; i < n_keys; i++)
		ck_assert_msg(seen[i], "%s is not documented in %s", keys[i], path);
	ck_assert_uint_eq(found, n_keys);
	ck_assert_uint_ge(n_keys, 25);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, full_config_values);
	tcase_add_test(tc, minimal_config_defaults);
	tcase_add_test(tc, sponsor_config);
	tcase_add_test(tc, local_clients_per_user);
	tcase_add_test(tc, access_rules);
	tcase_add_test(tc, algorithm_list_from_caller);
	tcase_add_test(tc, peers_without_node_name);
	tcase_add_test(tc, missing_file);
	tcase_add_loop_test(tc, bad_file_refused, 0, (int)(sizeof(bad_files) / sizeof(bad_files[0])));
	tcase_add_test(tc, durations);
	tcase_add_test(tc, addresses_and_peers);
	tcase_add_test(tc, example_documents_every_key);
	tcase_add_test(tc, sizes_bounded_without_overflow);
	tcase_add_test(tc, reload_same_config_no_change);
	tcase_add_test(tc, reload_reloadable_keys_not_reported);
	tcase_add_test(tc, reload_every_restart_key_reported);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	const char *srcdir = getenv("top_srcdir");
	SRunner *sr;
	int failed;

	snprintf(fixture_dir, sizeof(fixture_dir), "%s/tests/unit/conf", srcdir != NULL ? srcdir : "..");
	sr = srunner_create(config_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
