/*
 * status_report.c: splitting and printing the daemon's STATUS block (see
 * status_report.h).  Unknown line kinds and extra fields are ignored, as
 * the protocol asks, so a newer daemon does not break an older dmlock.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "status_report.h"

/* Fields each kind needs (its own word included). */
#define NODE_FIELDS 6
#define PEER_FIELDS 4
#define LOCK_FIELDS 9
#define CAPS_FIELDS 3
#define PEER_LINK_FIELDS 6	/* with last contact and round trip */
#define PEER_COUNTER_FIELDS 8	/* with DATA frames sent and received */
#define LOCKS_FIELDS 10		/* LOCKS answer: with the node */

int status_report_parse(const char *text, struct status_report *ret)
{
	struct status_report r = { 0 };
	size_t n_lines = 0;
	char *p;

	for (const char *q = text; *q; q++)
		if (*q == '\n')
			n_lines++;
	n_lines++;
	if (n_lines > STATUS_LINES_MAX)
		return -E2BIG;
	r.text = strdup(text);
	r.lines = calloc(n_lines, sizeof(*r.lines));
	if (!r.text || !r.lines)
		goto fail;

	p = r.text;
	while (*p) {
		char *end = strchr(p, '\n');
		struct status_line *line = &r.lines[r.n_lines];

		if (end)
			*end = '\0';
		while (*p && line->n_fields < STATUS_FIELDS_MAX) {
			line->field[line->n_fields++] = p;
			p = strchr(p, ' ');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (line->n_fields > 0)
			r.n_lines++;
		if (!end)
			break;
		p = end + 1;
	}
	*ret = r;
	return 0;
fail:
	free(r.text);
	free(r.lines);
	return -ENOMEM;
}

void status_report_done(struct status_report *report)
{
	free(report->text);
	free(report->lines);
	report->text = NULL;
	report->lines = NULL;
	report->n_lines = 0;
}

static bool is_kind(const struct status_line *l, const char *kind, unsigned min_fields)
{
	return l->n_fields >= min_fields && strcmp(l->field[0], kind) == 0;
}

static bool is_decimal(const char *s)
{
	if (*s == '\0' || strlen(s) > 20)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static const char *mode_word(const char *m)
{
	return strcmp(m, "sh") == 0 ? "shared" : strcmp(m, "ex") == 0 ? "exclusive" : m;
}

/* Age of a CLOCK_BOOTTIME stamp in ms, or -1 if unknown. */
static int64_t age_ms(const char *since, uint64_t now_ms)
{
	uint64_t t;

	if (!is_decimal(since))
		return -1;
	t = strtoull(since, NULL, 10);
	if (t == 0 || t > now_ms)
		return t > now_ms ? 0 : -1;
	return (int64_t)(now_ms - t);
}

/* "1.2s ago" / "-" from a LOCK line's since field. */
static void since_text(const struct status_line *l, uint64_t now_ms, char *buf, size_t size)
{
	int64_t age = age_ms(l->field[5], now_ms);

	if (age >= 0)
		snprintf(buf, size, "%" PRId64 ".%01" PRId64 "s ago", age / 1000, (age % 1000) / 100);
	else
		snprintf(buf, size, "-");
}

static size_t count_kind(const struct status_report *r, const char *kind, unsigned min_fields)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_lines; i++)
		n += is_kind(&r->lines[i], kind, min_fields);
	return n;
}

/* "1.2s ago" / "-" from a PEER line's contact field (ms). */
static void peer_contact_text(const struct status_line *l, char *buf, size_t size)
{
	snprintf(buf, size, "-");
	if (l->n_fields >= PEER_LINK_FIELDS && is_decimal(l->field[4])) {
		uint64_t ms = strtoull(l->field[4], NULL, 10);
		snprintf(buf, size, "%" PRIu64 ".%01" PRIu64 "s ago", ms / 1000, (ms % 1000) / 100);
	}
}

/* "0.345 ms" / "-" from a PEER line's round-trip field (us). */
static void peer_rtt_text(const struct status_line *l, char *buf, size_t size)
{
	snprintf(buf, size, "-");
	if (l->n_fields >= PEER_LINK_FIELDS && is_decimal(l->field[5])) {
		uint64_t us = strtoull(l->field[5], NULL, 10);
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " ms", us / 1000, us % 1000);
	}
}

void status_report_print_text(const struct status_report *r, const char *socket_path,
    uint64_t now_ms, FILE *out)
{
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (is_kind(l, "NODE", NODE_FIELDS)) {
			fprintf(out, "node:      %s (%s)\n", l->field[1], l->field[3]);
			fprintf(out, "algorithm: %s\n", l->field[2]);
			fprintf(out, "roster:    %s node(s), epoch %s\n", l->field[4], l->field[5]);
		}
		if (is_kind(l, "CAPS", CAPS_FIELDS))
			fprintf(out, "modes:     %s\n", strcmp(l->field[2], "shared") == 0 ?
				"exclusive and shared" : strcmp(l->field[2], "exclusive-only") == 0 ?
				"exclusive only (shared requests are refused)" :
				"unknown (this dmlockd cannot tell whether shared locks are supported)");
	}
	fprintf(out, "socket:    %s\n", socket_path);

	fprintf(out, "\npeers (%zu):\n", count_kind(r, "PEER", PEER_FIELDS));
	if (count_kind(r, "PEER", PEER_FIELDS) > 0)
		fprintf(out, "  %-24s %-32s %-5s %14s %10s\n", "NAME", "ADDRESS", "LINK",
			"LAST CONTACT", "RTT");
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];
		char contact[32], rtt[32];

		if (!is_kind(l, "PEER", PEER_FIELDS))
			continue;
		peer_contact_text(l, contact, sizeof(contact));
		peer_rtt_text(l, rtt, sizeof(rtt));
		fprintf(out, "  %-24s %-32s %-5s %14s %10s\n", l->field[1], l->field[2], l->field[3],
			contact, rtt);
	}

	fprintf(out, "\nlocks on this node (%zu):\n", count_kind(r, "LOCK", LOCK_FIELDS));
	if (count_kind(r, "LOCK", LOCK_FIELDS) > 0)
		fprintf(out, "  %-32s %-9s %-7s %10s %10s %8s %6s\n", "NAME", "MODE", "STATE", "TOKEN",
			"SINCE", "PID", "UID");
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];
		char since[32];

		if (!is_kind(l, "LOCK", LOCK_FIELDS))
			continue;
		since_text(l, now_ms, since, sizeof(since));
		fprintf(out, "  %-32s %-9s %-7s %10s %10s %8s %6s\n", l->field[1], mode_word(l->field[2]),
			l->field[3], strcmp(l->field[4], "0") == 0 ? "-" : l->field[4], since, l->field[6],
			l->field[7]);
	}
	status_algorithm_print_text(r, out);
}

/* Lock and node names are printable ASCII; escape what JSON requires, and
 * any other byte a daemon should not have sent as \u00XX, so that the
 * output is always valid ASCII JSON. */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fputc('\\', out);
		if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void status_report_json_string(FILE *out, const char *s)
{
	json_string(out, s);
}

/* A decimal field as a JSON number; null when the daemon sent none ("-")
 * or something that is not a canonical decimal (JSON has no leading zeros). */
static void json_number(FILE *out, const char *s)
{
	if (is_decimal(s) && (s[0] != '0' || s[1] == '\0'))
		fputs(s, out);
	else
		fputs("null", out);
}

/* One LOCK line as a JSON object; with_node: a LOCKS answer's line (its
 * tenth field, the node, follows the state). */
static void lock_json(const struct status_line *l, bool with_node, uint64_t now_ms, FILE *out)
{
	int64_t age = age_ms(l->field[5], now_ms);

	fputs("{\"name\":", out);
	json_string(out, l->field[1]);
	fputs(",\"mode\":", out);
	json_string(out, mode_word(l->field[2]));
	fputs(",\"state\":", out);
	json_string(out, l->field[3]);
	if (with_node) {
		fputs(",\"node\":", out);
		json_string(out, l->field[9]);
	}
	fputs(",\"token\":", out);
	json_number(out, l->field[4]);
	fputs(",\"since_boottime_ms\":", out);
	json_number(out, l->field[5]);
	if (age >= 0)
		fprintf(out, ",\"age_ms\":%" PRId64, age);
	else
		fputs(",\"age_ms\":null", out);
	fputs(",\"pid\":", out);
	json_number(out, l->field[6]);
	fputs(",\"uid\":", out);
	json_number(out, l->field[7]);
	fputs(",\"request_id\":", out);
	json_string(out, l->field[8]);
	fputc('}', out);
}

void status_report_print_json(const struct status_report *r, const char *socket_path,
    uint64_t now_ms, FILE *out)
{
	const char *sep = "";

	fputs("{\"socket\":", out);
	json_string(out, socket_path);
	fputs(",\"node\":", out);
	sep = "null";
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (!is_kind(l, "NODE", NODE_FIELDS))
			continue;
		fputs("{\"name\":", out);
		json_string(out, l->field[1]);
		fputs(",\"algorithm\":", out);
		json_string(out, l->field[2]);
		fputs(",\"state\":", out);
		json_string(out, l->field[3]);
		fputs(",\"roster_size\":", out);
		json_number(out, l->field[4]);
		fputs(",\"epoch\":", out);
		json_number(out, l->field[5]);
		fputc('}', out);
		sep = "";
		break;
	}
	fputs(sep, out);

	fputs(",\"shared_supported\":", out);
	sep = "null";
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (!is_kind(l, "CAPS", CAPS_FIELDS))
			continue;
		sep = strcmp(l->field[2], "shared") == 0 ? "true" :
		      strcmp(l->field[2], "exclusive-only") == 0 ? "false" : "null";
	}
	fputs(sep, out);

	fputs(",\"peers\":[", out);
	sep = "";
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (!is_kind(l, "PEER", PEER_FIELDS))
			continue;
		fprintf(out, "%s{\"name\":", sep);
		json_string(out, l->field[1]);
		fputs(",\"address\":", out);
		if (strcmp(l->field[2], "-") == 0)
			fputs("null", out);
		else
			json_string(out, l->field[2]);
		fputs(",\"link\":", out);
		json_string(out, l->field[3]);
		fputs(",\"last_contact_ms\":", out);
		json_number(out, l->n_fields >= PEER_LINK_FIELDS ? l->field[4] : "-");
		fputs(",\"rtt_us\":", out);
		json_number(out, l->n_fields >= PEER_LINK_FIELDS ? l->field[5] : "-");
		fputs(",\"data_sent\":", out);
		json_number(out, l->n_fields >= PEER_COUNTER_FIELDS ? l->field[6] : "-");
		fputs(",\"data_received\":", out);
		json_number(out, l->n_fields >= PEER_COUNTER_FIELDS ? l->field[7] : "-");
		fputc('}', out);
		sep = ",";
	}

	fputs("],\"locks\":[", out);
	sep = "";
	for (size_t i = 0; i < r->n_lines; i++) {
		if (!is_kind(&r->lines[i], "LOCK", LOCK_FIELDS))
			continue;
		fputs(sep, out);
		lock_json(&r->lines[i], false, now_ms, out);
		sep = ",";
	}
	fputc(']', out);
	status_algorithm_print_json(r, out);
	fputs("}\n", out);
}

void status_report_print_locks_text(const struct status_report *r, const char *node,
    uint64_t now_ms, FILE *out)
{
	size_t n = count_kind(r, "LOCK", LOCKS_FIELDS);

	fprintf(out, "locks known to node %s (%zu; this dmlockd sees only its own node's requests):\n",
		node, n);
	if (n > 0)
		fprintf(out, "  %-32s %-9s %-7s %-16s %10s %12s %8s %6s\n", "NAME", "MODE", "STATE",
			"NODE", "TOKEN", "SINCE", "PID", "UID");
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];
		char since[32];

		if (!is_kind(l, "LOCK", LOCKS_FIELDS))
			continue;
		since_text(l, now_ms, since, sizeof(since));
		fprintf(out, "  %-32s %-9s %-7s %-16s %10s %12s %8s %6s\n", l->field[1],
			mode_word(l->field[2]), l->field[3], l->field[9],
			strcmp(l->field[4], "0") == 0 ? "-" : l->field[4], since, l->field[6], l->field[7]);
	}
}

void status_report_print_locks_json(const struct status_report *r, const char *node,
    uint64_t now_ms, FILE *out)
{
	const char *sep = "";

	fputs("{\"node\":", out);
	json_string(out, node);
	fputs(",\"scope\":\"local\",\"locks\":[", out);
	for (size_t i = 0; i < r->n_lines; i++) {
		if (!is_kind(&r->lines[i], "LOCK", LOCKS_FIELDS))
			continue;
		fputs(sep, out);
		lock_json(&r->lines[i], true, now_ms, out);
		sep = ",";
	}
	fputs("]}\n", out);
}

size_t status_report_print_peer_pings(const struct status_report *r, FILE *out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];
		char contact[32], rtt[32];

		if (!is_kind(l, "PEER", PEER_FIELDS) || strcmp(l->field[3], "self") == 0)
			continue;
		peer_contact_text(l, contact, sizeof(contact));
		peer_rtt_text(l, rtt, sizeof(rtt));
		fprintf(out, "peer %s (%s): link %s, last contact %s, round trip %s\n", l->field[1],
			l->field[2], l->field[3], contact, rtt);
		n++;
	}
	return n;
}
