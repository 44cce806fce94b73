/*
 * fuzz_local_proto.c: libFuzzer target for the local protocol codec.  The
 * input is cut into lines; each is parsed as a client request and as a
 * daemon line.  Oracles: no crash or sanitizer report, and every accepted
 * line formats back to a line that parses to the same value (round trip),
 * never longer than the protocol's limits.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "local_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_request(const char *line, size_t len)
{
	struct lp_request a, b;
	enum lp_error code;
	char out[LP_LINE_MAX + 1];

	if (lp_request_parse(line, len, &a, &code) < 0) {
		if (lp_error_name(code) == NULL)
			abort();
		return;
	}
	int n = lp_request_format(out, sizeof(out), &a);
	if (n <= 0 || n > LP_LINE_MAX || out[n - 1] != '\n')
		abort();
	if (lp_request_parse(out, (size_t)n - 1, &b, &code) < 0)
		abort();
	if (a.verb != b.verb || strcmp(a.id, b.id) != 0 || a.lock_len != b.lock_len ||
	    memcmp(a.lock, b.lock, a.lock_len) != 0 || a.mode != b.mode || a.wait_ms != b.wait_ms ||
	    strcmp(a.arg, b.arg) != 0)
		abort();
}

static void
check_reply(const char *line, size_t len)
{
	struct lp_reply a, b;
	char out[LP_REPLY_MAX + 2];

	if (lp_reply_parse(line, len, &a) < 0)
		return;
	int n = lp_reply_format(out, sizeof(out), &a);
	if (n < 0) {
		/* Only over-long texts may fail to format; they cannot parse. */
		abort();
	}
	if (lp_reply_parse(out, (size_t)n - 1, &b) < 0)
		abort();
	if (a.type != b.type || strcmp(a.id, b.id) != 0 || a.token != b.token ||
	    a.deadline != b.deadline || a.version != b.version)
		abort();
	if ((a.type == LP_R_DENIED || a.type == LP_R_LOST) && a.error != b.error)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		check_request(p, len);
		check_reply(p, len);
		p += len + 1;
	}
	return 0;
}
