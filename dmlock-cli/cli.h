/*
 * cli.h: what the parts of the dmlock command share: the subcommands'
 * entry points, error printing, and connecting to dmlockd with errors a
 * person can act on.  Every subcommand returns its exit status
 * (exit_codes.h).
 */
#ifndef DMLOCK_CLI_H
#define DMLOCK_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dmlock.h"

/* Subcommands; argv[0] is the subcommand's name. */
int cmd_run(int argc, char *argv[]);
int cmd_status(int argc, char *argv[]);
int cmd_ping(int argc, char *argv[]);
int cmd_name(int argc, char *argv[]);
int cmd_locks(int argc, char *argv[]);
int cmd_leave(int argc, char *argv[]);
int cmd_remove(int argc, char *argv[]);
int cmd_join(int argc, char *argv[]);

/* Help texts (usage.c).  usage_for() returns NULL for an unknown name. */
const char *usage_for(const char *subcommand);
void usage_print_main(FILE *out);

/* "dmlock: " + message + newline, to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: message, a hint where to find help; returns EX_USAGE. */
int cli_usage_error(const char *subcommand, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Connect to dmlockd at socket_path (NULL: DMLOCK_SOCKET or the default).
 * Returns 0, or prints what went wrong and what to do and returns the exit
 * status to use (69 unreachable, 77 permission, 76 protocol, 64 bad path).
 */
int cli_connect(const char *socket_path, struct dmlock_conn **ret);

/* The socket path a connect would use, for messages (always a string). */
const char *cli_socket_path(const char *socket_path, char *buf, size_t size);

/*
 * After connecting: report err, an error from a request to the daemon
 * ("acquiring lock X", "asking for status"), and return the exit status
 * that fits it.
 */
int cli_daemon_error(int err, const char *doing);

/* Parse a duration in seconds ("5", "0.25"); 0..max_seconds -> ms. */
int cli_parse_seconds(const char *text, double max_seconds, int64_t *ret_ms);

#endif /* DMLOCK_CLI_H */
