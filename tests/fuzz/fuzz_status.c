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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- a strict JSON checker (RFC 8259), enough for the printers' output ---- */

static bool json_value(const char **p, int depth);

static void
skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static bool
json_string_ok(const char **p)
{
	const char *s = *p;

	if (*s++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*s++;

		if (c == '"')
			break;
		if (c < 0x20 || c >= 0x80)	/* control byte, or not ASCII */
			return false;
		if (c != '\\')
			continue;
		c = (unsigned char)*s++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, s++)
				if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
				    (*s >= 'A' && *s <= 'F')))
					return false;
		} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
			return false;
		}
	}
	*p = s;
	return true;
}

static bool
json_number_ok(const char **p)
{
	const char *s = *p;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	*p = s;
	return true;
}

static bool
json_container(const char **p, int depth, char close)
{
	(*p)++;
	skip_ws(p);
	if (**p == close) {
		(*p)++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			if (!json_string_ok(p))
				return false;
			skip_ws(p);
			if (*(*p)++ != ':')
				return false;
		}
		if (!json_value(p, depth + 1))
			return false;
		skip_ws(p);
		if (**p == close) {
			(*p)++;
			return true;
		}
		if (*(*p)++ != ',')
			return false;
		skip_ws(p);
	}
}

static bool
json_value(const char **p, int depth)
{
	if (depth > 64)
		return false;
	skip_ws(p);
	switch (**p) {
	case '{':
		return json_container(p, depth, '}');
	case '[':
		return json_container(p, depth, ']');
	case '"':
		return json_string_ok(p);
	case 't':
		return strncmp(*p, "true", 4) == 0 ? (*p += 4, true) : false;
	case 'f':
		return strncmp(*p, "false", 5) == 0 ? (*p += 5, true) : false;
	case 'n':
		return strncmp(*p, "null", 4) == 0 ? (*p += 4, true) : false;
	default:
		return json_number_ok(p);
	}
}

/* One value, then exactly one newline. */
static void
check_json_line(const char *text, size_t len)
{
	const char *p = text;

	if (strlen(text) != len || !json_value(&p, 0) || strcmp(p, "\n") != 0) {
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
