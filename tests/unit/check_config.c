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

#include "dmlockd/config_file.h"

static char fixture_dir[4096];
static char err[1024];

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
	{ "bad-mode.conf", 2, "'0999' is not an octal mode" },
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
	tcase_add_test(tc, access_rules);
	tcase_add_test(tc, algorithm_list_from_caller);
	tcase_add_test(tc, peers_without_node_name);
	tcase_add_test(tc, missing_file);
	tcase_add_loop_test(tc, bad_file_refused, 0, (int)(sizeof(bad_files) / sizeof(bad_files[0])));
	tcase_add_test(tc, durations);
	tcase_add_test(tc, addresses_and_peers);
	tcase_add_test(tc, example_documents_every_key);
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
