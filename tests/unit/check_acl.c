/*
 * check_acl.c: the [access] matcher (dmlockd/acl.c): rule syntax, first
 * match wins, prefixes, modes, groups, the open default, roster checks and
 * the sentence naming the deciding rule; a local connection's groups read
 * from the socket (SO_PEERGROUPS), not from the group database.
 */
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dmlockd/acl.h"

static struct dmd_acl *
acl_of(const char *const *rules)
{
	struct dmd_acl *acl;
	char msg[256];
	ck_assert_int_eq(acl_new(&acl), 0);
	for (size_t i = 0; rules[i] != NULL; i++) {
		char source[32];
		snprintf(source, sizeof(source), "test line %zu", i + 1);
		int r = acl_add_lock_rule(acl, rules[i], source, msg, sizeof(msg));
		ck_assert_msg(r == 0, "rule %s: %s", rules[i], msg);
	}
	return acl;
}

static int
check(const struct dmd_acl *acl, uid_t uid, gid_t gid, const char *lock, enum dm_mode mode,
    char *why, size_t whylen)
{
	struct acl_subject who = { .uid = uid, .gid = gid };
	return acl_check_lock(acl, &who, lock, strlen(lock), mode, why, whylen);
}

START_TEST(no_rules_allow_everything)
{
	struct dmd_acl *acl;
	ck_assert_int_eq(acl_new(&acl), 0);
	ck_assert_int_eq(check(NULL, 1000, 1000, "anything", DM_MODE_EXCLUSIVE, NULL, 0), 0);
	ck_assert_int_eq(check(acl, 1000, 1000, "anything", DM_MODE_EXCLUSIVE, NULL, 0), 0);
	ck_assert_int_eq(check(acl, 65534, 65534, "x", DM_MODE_SHARED, NULL, 0), 0);
	ck_assert(!acl_needs_groups(acl));
	acl_free(acl);
}
END_TEST

START_TEST(first_match_decides_and_names_the_rule)
{
	static const char *const rules[] = { "1000:ex:backup/", "*:sh:backup/", "*:none:secret/",
	    "*:ex:*", NULL };
	struct dmd_acl *acl = acl_of(rules);
	char why[300] = "";

	ck_assert_int_eq(check(acl, 1000, 1000, "backup/db", DM_MODE_EXCLUSIVE, why, sizeof(why)), 0);
	ck_assert_int_eq(check(acl, 1000, 1000, "backup/db", DM_MODE_SHARED, why, sizeof(why)), 0);
	/* Another user: shared only under backup/. */
	ck_assert_int_eq(check(acl, 1001, 1001, "backup/db", DM_MODE_SHARED, why, sizeof(why)), 0);
	ck_assert_int_eq(check(acl, 1001, 1001, "backup/db", DM_MODE_EXCLUSIVE, why, sizeof(why)),
	    -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "*:sh:backup/"));
	ck_assert_ptr_nonnull(strstr(why, "test line 2"));
	ck_assert_ptr_nonnull(strstr(why, "shared only"));
	/* none: even uid 1000 and even shared. */
	ck_assert_int_eq(check(acl, 1000, 1000, "secret/x", DM_MODE_SHARED, why, sizeof(why)), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "*:none:secret/"));
	/* The catch-all. */
	ck_assert_int_eq(check(acl, 4242, 4242, "other", DM_MODE_EXCLUSIVE, why, sizeof(why)), 0);
	/* Prefixes are plain byte prefixes: "backup" alone is not under "backup/". */
	ck_assert_int_eq(check(acl, 1001, 1001, "backup", DM_MODE_EXCLUSIVE, why, sizeof(why)), 0);
	acl_free(acl);
}
END_TEST

START_TEST(unmatched_request_is_refused_once_rules_exist)
{
	static const char *const rules[] = { "*:ex:jobs/", NULL };
	struct dmd_acl *acl = acl_of(rules);
	char why[300] = "";

	ck_assert_int_eq(check(acl, 1000, 1000, "jobs/a", DM_MODE_EXCLUSIVE, why, sizeof(why)), 0);
	ck_assert_int_eq(check(acl, 1000, 1000, "job", DM_MODE_EXCLUSIVE, why, sizeof(why)), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "no [access] lock rule matches"));
	ck_assert_uint_eq(acl_n_lock_rules(acl), 1);
	acl_clear_lock_rules(acl);
	ck_assert_int_eq(check(acl, 1000, 1000, "job", DM_MODE_EXCLUSIVE, why, sizeof(why)), 0);
	acl_free(acl);
}
END_TEST

START_TEST(groups_primary_and_supplementary)
{
	static const char *const rules[] = { "@500:ex:ops/", "*:none:ops/", "*:ex:*", NULL };
	struct dmd_acl *acl = acl_of(rules);
	gid_t groups[] = { 100, 500 };
	struct acl_subject member = { .uid = 1000, .gid = 100, .groups = groups, .n_groups = 2 };
	struct acl_subject primary = { .uid = 1001, .gid = 500 };
	struct acl_subject outsider = { .uid = 1002, .gid = 100, .groups = groups, .n_groups = 1 };

	ck_assert(acl_needs_groups(acl));
	ck_assert_int_eq(acl_check_lock(acl, &member, "ops/x", 5, DM_MODE_EXCLUSIVE, NULL, 0), 0);
	ck_assert_int_eq(acl_check_lock(acl, &primary, "ops/x", 5, DM_MODE_EXCLUSIVE, NULL, 0), 0);
	ck_assert_int_eq(acl_check_lock(acl, &outsider, "ops/x", 5, DM_MODE_SHARED, NULL, 0),
	    -EACCES);
	acl_free(acl);
}
END_TEST

START_TEST(bad_rules_are_refused_with_a_message)
{
	static const char *const bad[] = { "nocolon", "*:ex", "*:rw:x/", "*:ex:", "*::x",
	    ":ex:x", "@:ex:x", "no-such-user-dmlock-test:ex:x", "@no-such-group-dmlock-test:ex:x",
	    "*:ex:has space", "4294967295:ex:x", NULL };
	struct dmd_acl *acl;
	char msg[256];

	ck_assert_int_eq(acl_new(&acl), 0);
	for (size_t i = 0; bad[i] != NULL; i++) {
		msg[0] = '\0';
		ck_assert_msg(acl_add_lock_rule(acl, bad[i], "t", msg, sizeof(msg)) == -EINVAL,
		    "accepted '%s'", bad[i]);
		ck_assert_msg(msg[0] != '\0', "no message for '%s'", bad[i]);
	}
	ck_assert_uint_eq(acl_n_lock_rules(acl), 0);
	/* Names resolve: root is uid 0 everywhere. */
	ck_assert_int_eq(acl_add_lock_rule(acl, "root:sh:x", "t", msg, sizeof(msg)), 0);
	ck_assert_int_eq(check(acl, 0, 0, "x", DM_MODE_SHARED, NULL, 0), 0);
	ck_assert_int_eq(check(acl, 0, 0, "x", DM_MODE_EXCLUSIVE, NULL, 0), -EACCES);
	/* A prefix may hold colons: only the first two separate fields. */
	ck_assert_int_eq(acl_add_lock_rule(acl, "*:ex:a:b", "t", msg, sizeof(msg)), 0);
	ck_assert_int_eq(check(acl, 7, 7, "a:b/c", DM_MODE_EXCLUSIVE, NULL, 0), 0);
	acl_free(acl);
}
END_TEST

START_TEST(roster_root_and_principals)
{
	struct dmd_acl *acl;
	char msg[256], why[300] = "";
	struct acl_subject root = { .uid = 0, .gid = 0 };
	struct acl_subject alice = { .uid = 1000, .gid = 1000 };
	gid_t g[] = { 1000, 4000 };
	struct acl_subject admin = { .uid = 1001, .gid = 1001, .groups = g, .n_groups = 2 };

	ck_assert_int_eq(acl_check_roster(NULL, &root, why, sizeof(why)), 0);
	ck_assert_int_eq(acl_check_roster(NULL, &alice, why, sizeof(why)), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "only root"));
	ck_assert_int_eq(acl_new(&acl), 0);
	ck_assert_int_eq(acl_add_roster_principal(acl, "@4000", "t", msg, sizeof(msg)), 0);
	ck_assert_int_eq(acl_check_roster(acl, &admin, why, sizeof(why)), 0);
	ck_assert_int_eq(acl_check_roster(acl, &alice, why, sizeof(why)), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "[access] roster"));
	ck_assert_int_eq(acl_add_roster_principal(acl, "1000", "t", msg, sizeof(msg)), 0);
	ck_assert_int_eq(acl_check_roster(acl, &alice, why, sizeof(why)), 0);
	acl_clear_roster(acl);
	ck_assert_int_eq(acl_check_roster(acl, &alice, why, sizeof(why)), -EACCES);
	ck_assert_int_eq(acl_check_roster(acl, &root, why, sizeof(why)), 0);
	ck_assert_int_eq(acl_add_roster_principal(acl, "x:y", "t", msg, sizeof(msg)), -EINVAL);
	acl_free(acl);
}
END_TEST

START_TEST(rule_count_is_bounded)
{
	struct dmd_acl *acl;
	char msg[256];
	int r = 0;
	size_t i;

	ck_assert_int_eq(acl_new(&acl), 0);
	for (i = 0; i < ACL_RULES_MAX + 10 && r == 0; i++)
		r = acl_add_lock_rule(acl, "*:ex:*", "t", msg, sizeof(msg));
	ck_assert_int_eq(r, -E2BIG);
	ck_assert_uint_eq(acl_n_lock_rules(acl), ACL_RULES_MAX);
	acl_free(acl);
}
END_TEST

START_TEST(group_lookup_includes_primary)
{
	gid_t groups[ACL_GROUPS_MAX];
	size_t n = acl_lookup_groups(0, 0, groups, ACL_GROUPS_MAX);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_eq(groups[0], 0);
	/* A uid without a passwd entry has only its primary group. */
	n = acl_lookup_groups(3999999, 4242, groups, ACL_GROUPS_MAX);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(groups[0], 4242);
}
END_TEST

/* A connection to a Unix socket as dmlockd gets it: listen, connect,
 * accept; returns the accepted end, *client the connecting one. */
static int
accepted_connection(int *client)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), fd;

	ck_assert_int_ge(lfd, 0);
	/* An abstract name: no file to clean up. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "dmlock-check-acl-%ld", (long)getpid());
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(sa.sun_path + 1));
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, len), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	*client = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(*client, 0);
	ck_assert_int_eq(connect(*client, (struct sockaddr *)&sa, len), 0);
	fd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(fd, 0);
	close(lfd);
	return fd;
}

static bool
has_group(const gid_t *groups, size_t n, gid_t g)
{
	for (size_t i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

/* The groups of the connecting process come from the socket: as root the
 * test process takes supplementary groups that no group database lists
 * for it (getgrouplist() for root would not give them), connects, and the
 * accepted socket reports exactly them, the primary gid first; an [access]
 * rule for one of them then allows the lock.  Unprivileged: the socket
 * reports the process's own groups. */
START_TEST(connection_groups_from_the_socket)
{
	static const gid_t mine[] = { 3999901, 3999902, 3999903 };
	gid_t groups[ACL_GROUPS_MAX], own[256];
	bool root = geteuid() == 0 && setgroups(3, mine) == 0;
	int client, fd = accepted_connection(&client);
	int n = acl_socket_groups(fd, getegid(), groups, ACL_GROUPS_MAX);

	ck_assert_msg(n >= 1, "acl_socket_groups: %s", strerror(-n));
	ck_assert_uint_eq(groups[0], getegid());
	int n_own = getgroups(256, own);
	ck_assert_int_ge(n_own, 0);
	for (int i = 0; i < n_own; i++)
		ck_assert_msg(has_group(groups, (size_t)n, own[i]), "group %ld missing", (long)own[i]);
	for (int i = 1; i < n; i++)
		ck_assert_msg(has_group(own, (size_t)n_own, groups[i]), "extra group %ld",
		    (long)groups[i]);
	if (root) {
		ck_assert_int_eq(n, 4);
		const char *const rules[] = { "@3999902:ex:backup/", NULL };
		struct dmd_acl *acl = acl_of(rules);
		struct acl_subject who = { .uid = 4242, .gid = getegid(), .groups = groups,
		    .n_groups = (size_t)n };
		char why[256] = "";
		ck_assert_int_eq(acl_check_lock(acl, &who, "backup/db", 9, DM_MODE_EXCLUSIVE, why,
		    sizeof(why)), 0);
		/* The group database does not know these groups for root: the
		 * old NSS lookup would have refused. */
		gid_t nss[ACL_GROUPS_MAX];
		size_t n_nss = acl_lookup_groups(0, getegid(), nss, ACL_GROUPS_MAX);
		ck_assert(!has_group(nss, n_nss, 3999902));
		acl_free(acl);
	}
	close(fd);
	close(client);
}
END_TEST

/* More groups than the first getsockopt() buffer holds, and a capacity
 * smaller than the list. */
START_TEST(connection_groups_many_and_bounded)
{
	gid_t many[200], groups[ACL_GROUPS_MAX];

	if (geteuid() != 0)
		return;	/* setgroups needs root; covered by the test above */
	for (size_t i = 0; i < 200; i++)
		many[i] = (gid_t)(3998000 + i);
	ck_assert_int_eq(setgroups(200, many), 0);
	int client, fd = accepted_connection(&client);
	int n = acl_socket_groups(fd, 7, groups, ACL_GROUPS_MAX);
	ck_assert_int_eq(n, 201);
	ck_assert_uint_eq(groups[0], 7);
	for (size_t i = 0; i < 200; i++)
		ck_assert(has_group(groups, 201, many[i]));
	ck_assert_int_eq(acl_socket_groups(fd, 7, groups, 10), 10);
	ck_assert_uint_eq(groups[0], 7);
	close(fd);
	close(client);
}
END_TEST

static Suite *
acl_suite(void)
{
	Suite *s = suite_create("acl");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, no_rules_allow_everything);
	tcase_add_test(tc, first_match_decides_and_names_the_rule);
	tcase_add_test(tc, unmatched_request_is_refused_once_rules_exist);
	tcase_add_test(tc, groups_primary_and_supplementary);
	tcase_add_test(tc, bad_rules_are_refused_with_a_message);
	tcase_add_test(tc, roster_root_and_principals);
	tcase_add_test(tc, rule_count_is_bounded);
	tcase_add_test(tc, group_lookup_includes_primary);
	tcase_add_test(tc, connection_groups_from_the_socket);
	tcase_add_test(tc, connection_groups_many_and_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(acl_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
