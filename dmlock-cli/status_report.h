/*
 * status_report.h: the daemon's STATUS block (dmlock-protocol(7): NODE,
 * PEER, LOCK and ALGO lines) split into fields, and printed for people or as
 * JSON.  Pure formatting: the query itself is in status.c.
 */
#ifndef DMLOCK_CLI_STATUS_REPORT_H
#define DMLOCK_CLI_STATUS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#define STATUS_FIELDS_MAX 12
#define STATUS_LINES_MAX 100000

struct status_line {
	unsigned	 n_fields;
	char		*field[STATUS_FIELDS_MAX];	/* field[0] is the kind */
};

struct status_report {
	char			*text;		/* owned copy, cut into fields */
	struct status_line	*lines;
	size_t			 n_lines;
};

/* Split text (the block without END); lines of unknown kinds are kept and
 * ignored by the printers.  Returns 0, -ENOMEM, -E2BIG. */
int status_report_parse(const char *text, struct status_report *ret);
void status_report_done(struct status_report *report);

/* now_ms: CLOCK_BOOTTIME in ms, to show how long ago a lock changed. */
void status_report_print_text(const struct status_report *r, const char *socket_path,
    uint64_t now_ms, FILE *out);
void status_report_print_json(const struct status_report *r, const char *socket_path,
    uint64_t now_ms, FILE *out);

/* The answer to LOCKS (LOCK lines with a node field); node is this
 * daemon's node name (for the text header). */
void status_report_print_locks_text(const struct status_report *r, const char *node,
    uint64_t now_ms, FILE *out);
void status_report_print_locks_json(const struct status_report *r, const char *node,
    uint64_t now_ms, FILE *out);

/* A JSON string with the escapes JSON requires. */
void status_report_json_string(FILE *out, const char *s);

/* status_algorithm.c: the ALGO lines (the algorithm's own view) as an
 * "algorithm state" section, or as the JSON member ,"algorithm_state":{...}. */
void status_algorithm_print_text(const struct status_report *r, FILE *out);
void status_algorithm_print_json(const struct status_report *r, FILE *out);

/* `dmlock ping`'s per-peer lines from a STATUS block: link state, last
 * contact and round trip of each peer (self left out).  Returns the number
 * of peers printed. */
size_t status_report_print_peer_pings(const struct status_report *r, FILE *out);

#endif /* DMLOCK_CLI_STATUS_REPORT_H */
