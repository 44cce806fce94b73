/*
 * check_json_check.c: the strict JSON checker that is fuzz_status's oracle
 * (tests/fuzz/json_check.c) accepts valid documents and catches each kind
 * of invalid one a broken printer could write.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "tests/fuzz/json_check.h"

static bool
ok(const char *s)
{
	return json_check_line(s, strlen(s));
}

START_TEST(accepts_valid_json)
{
	ck_assert(ok("{}\n"));
	ck_assert(ok("[]\n"));
	ck_assert(ok("0\n"));
	ck_assert(ok("{\"a\":[1,-0.5e+3,10E2,true,false,null,\"x\\u00e9\\n\\\"\\\\\\/\"]}\n"));
	ck_assert(ok(" { \"a\" : { \"b\" : [ ] } }\n"));
	ck_assert(ok("{\"socket\":\"/run/dmlock/dmlockd.sock\",\"node\":null,\"peers\":[],\"locks\":[]}\n"));
}
END_TEST

START_TEST(rejects_invalid_json)
{
	static const char *const bad[] = {
		"{\"token\":007}\n",	/* leading zero */
		"{\"a\":1}",		/* no newline */
		"{\"a\":1}\n\n",	/* more than one newline */
		"{\"a\":1}\n{}\n",	/* two values */
		"{\"a\":1,}\n",		/* trailing comma */
		"[1,]\n",
		"[1 2]\n",		/* missing comma */
		"{\"a\" 1}\n",		/* missing colon */
		"{a:1}\n",		/* unquoted key */
		"\"caf\xe9\"\n",	/* not ASCII */
		"\"a\x01\"\n",		/* raw control byte */
		"\"\\x\"\n",		/* bad escape */
		"\"\\u12g4\"\n",	/* bad \\u */
		"\"open\n",		/* unterminated string */
		"tru\n", "nul\n", "-\n", "1.\n", "1e\n", ".5\n", "+1\n",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!ok(bad[i]), "accepted: %s", bad[i]);
	/* A NUL inside the text: the length does not match. */
	ck_assert(!json_check_line("{}\n\0{}\n", 6));
}
END_TEST

START_TEST(limits_nesting)
{
	char deep[200];
	size_t n = 0;

	for (int i = 0; i < 65; i++)
		deep[n++] = '[';
	for (int i = 0; i < 65; i++)
		deep[n++] = ']';
	deep[n++] = '\n';
	deep[n] = '\0';
	ck_assert(ok(deep));		/* 65 levels: depth 0..64 */
	memmove(deep + 1, deep, n + 1);
	deep[0] = '[';
	memmove(deep + n, deep + n - 1, 3);
	deep[n - 1] = ']';
	ck_assert(!ok(deep));		/* 66 levels */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("json_check");
	TCase *tc = tcase_create("check");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, accepts_valid_json);
	tcase_add_test(tc, rejects_invalid_json);
	tcase_add_test(tc, limits_nesting);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
