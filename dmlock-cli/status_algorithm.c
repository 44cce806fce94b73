/*
 * status_algorithm.c: the ALGO lines of a STATUS block (dmlock-protocol(7)):
 * the lock algorithm's own view of the node (election, coordinator, epoch)
 * and of each lock with state (where its token is), printed for people or
 * as the "algorithm_state" member of the JSON status.  Pure formatting.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "status_report.h"

#define ALGO_FIELDS 3	/* ALGO <lock|-> <key=value> */

static bool
is_algo(const struct status_line *l)
{
	return l->n_fields >= ALGO_FIELDS && strcmp(l->field[0], "ALGO") == 0;
}

static bool
is_node_line(const struct status_line *l)
{
	return strcmp(l->field[1], "-") == 0;
}

void
status_algorithm_print_text(const struct status_report *r, FILE *out)
{
	bool header = false;

	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (!is_algo(l))
			continue;
		if (!header) {
			fputs("\nalgorithm state:\n", out);
			header = true;
		}
		fprintf(out, "  %-32s", is_node_line(l) ? "(node)" : l->field[1]);
		for (unsigned f = 2; f < l->n_fields; f++)
			fprintf(out, " %s", l->field[f]);
		fputc('\n', out);
	}
}

/* {"key":"value",...} from the key=value words of l; a word without '='
 * becomes a key with the value true. */
static void
print_words_json(const struct status_line *l, FILE *out)
{
	const char *sep = "";

	fputc('{', out);
	for (unsigned f = 2; f < l->n_fields; f++) {
		const char *w = l->field[f], *eq = strchr(w, '=');
		char key[128];

		fputs(sep, out);
		sep = ",";
		if (eq == NULL) {
			status_report_json_string(out, w);
			fputs(":true", out);
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - w), w);
		status_report_json_string(out, key);
		fputc(':', out);
		status_report_json_string(out, eq + 1);
	}
	fputc('}', out);
}

void
status_algorithm_print_json(const struct status_report *r, FILE *out)
{
	const char *sep = "";
	bool node = false;

	fputs(",\"algorithm_state\":{\"node\":", out);
	for (size_t i = 0; i < r->n_lines && !node; i++) {
		const struct status_line *l = &r->lines[i];

		if (is_algo(l) && is_node_line(l)) {
			print_words_json(l, out);
			node = true;
		}
	}
	if (!node)
		fputs("null", out);
	fputs(",\"locks\":{", out);
	for (size_t i = 0; i < r->n_lines; i++) {
		const struct status_line *l = &r->lines[i];

		if (!is_algo(l) || is_node_line(l))
			continue;
		fputs(sep, out);
		sep = ",";
		status_report_json_string(out, l->field[1]);
		fputc(':', out);
		print_words_json(l, out);
	}
	fputs("}}", out);
}
