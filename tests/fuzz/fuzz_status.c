/*
 * fuzz_status.c: libFuzzer target for the CLI's decoder of the daemon's
 * STATUS and LOCKS blocks (dmlock-cli/status_report.c, status_algorithm.c).
 * The input is the block's text; it is split and printed every way `dmlock
 * status`, `dmlock locks` and `dmlock ping` print it.  Oracles: no crash or
 * sanitizer report, and both JSON printers always write one strict RFC 8259
 * JSON value, ASCII only, then a newline, whatever the daemon sent (scripts
 * pipe `dmlock status --json` into jq).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmlock-cli/status_report.h"
#include "tests/fuzz/json_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_json_line(const char *text, size_t len)
{
	if (!json_check_line(text, len)) {
		fprintf(stderr, "not one JSON value and a newline: %s\n", text);
		abort();
	}
}

/* ---- the target ------------------------------------------------------------ */

typedef void (*printer_fn)(const struct status_report *r, const char *who, uint64_t now_ms,
    FILE *out);

static void
print_to_memory(printer_fn fn, const struct status_report *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (out == NULL)
		abort();
	fn(r, "/run/dmlock/dmlockd.sock", 123456789, out);
	if (fclose(out) != 0)
		abort();
	if (json)
		check_json_line(buf, len);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct status_report r;
	char *text = malloc(size + 1);

	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	int rc = status_report_parse(text, &r);
	free(text);
	if (rc != 0)
		return 0;
	print_to_memory(status_report_print_text, &r, false);
	print_to_memory(status_report_print_json, &r, true);
	print_to_memory(status_report_print_locks_text, &r, false);
	print_to_memory(status_report_print_locks_json, &r, true);

	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (out == NULL)
		abort();
	(void)status_report_print_peer_pings(&r, out);
	fclose(out);
	free(buf);
	status_report_done(&r);
	return 0;
}
