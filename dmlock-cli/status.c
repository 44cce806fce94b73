/*
 * status.c: `dmlock status [--json]` and `dmlock ping [-c COUNT]`: one
 * connection, one query, printed.  Formatting lives in status_report.c.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "exit_codes.h"
#include "status_report.h"

#define PING_COUNT_MAX 1000000

static uint64_t boottime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Parse [-S SOCKET] plus the subcommand's own flag (--json or -c). */
struct query_options {
	const char	*socket_path;
	int		 json;
	long		 count;
};

static int query_options_parse(int argc, char *argv[], struct query_options *o)
{
	static const struct option long_options[] = {
		{ "socket",	required_argument,	NULL, 'S' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub = argv[0];
	bool is_ping = strcmp(sub, "ping") == 0;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":S:jc:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->socket_path = optarg;
			break;
		case 'j':
			if (is_ping)
				goto unknown;
			o->json = 1;
			break;
		case 'c':
			if (!is_ping)
				goto unknown;
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->count < 1 || o->count > PING_COUNT_MAX)
				return cli_usage_error(sub, "invalid -c '%s': give a count from 1 to %d", optarg,
						       PING_COUNT_MAX);
			break;
		case 'h':
			fputs(usage_for(sub), stdout);
			return -1;
		case ':':
			return cli_usage_error(sub, "option '%s' needs an argument", argv[optind - 1]);
		default:
		unknown:
			return cli_usage_error(sub, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(sub, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cmd_status(int argc, char *argv[])
{
	struct query_options o;
	struct status_report report;
	struct dmlock_conn *conn = NULL;
	char path_buf[DMLOCK_PATH_MAX];
	char *text = NULL;
	int r;

	r = query_options_parse(argc, argv, &o);
	if (r != 0)
		return r < 0 ? DMLOCK_EXIT_OK : r;
	r = cli_connect(o.socket_path, &conn);
	if (r != 0)
		return r;
	r = dmlock_status(conn, &text);
	if (r < 0) {
		r = cli_daemon_error(r, "asking dmlockd for its status");
		goto out;
	}
	r = status_report_parse(text, &report);
	if (r < 0) {
		cli_error("cannot read dmlockd's status: %s", strerror(-r));
		r = DMLOCK_EXIT_SOFTWARE;
		goto out;
	}
	if (o.json)
		status_report_print_json(&report, cli_socket_path(o.socket_path, path_buf, sizeof(path_buf)),
					 boottime_ms(), stdout);
	else
		status_report_print_text(&report, cli_socket_path(o.socket_path, path_buf, sizeof(path_buf)),
					 boottime_ms(), stdout);
	status_report_done(&report);
	r = fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
out:
	free(text);
	dmlock_close(conn);
	return r;
}

/* Each peer's link as dmlockd sees it: state, last contact, round trip. */
static int print_peer_pings(struct dmlock_conn *conn)
{
	struct status_report report;
	char *text = NULL;
	int r;

	r = dmlock_status(conn, &text);
	if (r < 0)
		return cli_daemon_error(r, "asking dmlockd about its peers");
	r = status_report_parse(text, &report);
	free(text);
	if (r < 0) {
		cli_error("cannot read dmlockd's status: %s", strerror(-r));
		return DMLOCK_EXIT_SOFTWARE;
	}
	if (status_report_print_peer_pings(&report, stdout) == 0)
		printf("no peers: node %s is a one-node cluster\n", dmlock_conn_node(conn));
	status_report_done(&report);
	return 0;
}

int cmd_ping(int argc, char *argv[])
{
	struct query_options o;
	struct dmlock_conn *conn = NULL;
	char path_buf[DMLOCK_PATH_MAX];
	const char *path;
	int64_t best = INT64_MAX, worst = 0, total = 0;
	int r;

	r = query_options_parse(argc, argv, &o);
	if (r != 0)
		return r < 0 ? DMLOCK_EXIT_OK : r;
	r = cli_connect(o.socket_path, &conn);
	if (r != 0)
		return r;
	path = cli_socket_path(o.socket_path, path_buf, sizeof(path_buf));
	for (long i = 0; i < o.count; i++) {
		int64_t rtt_us = 0;

		r = dmlock_ping(conn, &rtt_us);
		if (r < 0) {
			r = cli_daemon_error(r, "pinging dmlockd");
			goto out;
		}
		printf("pong from dmlockd at %s (node %s, %s): time=%" PRId64 ".%03" PRId64 " ms\n", path,
		       dmlock_conn_node(conn), dmlock_conn_algorithm(conn), rtt_us / 1000, rtt_us % 1000);
		best = rtt_us < best ? rtt_us : best;
		worst = rtt_us > worst ? rtt_us : worst;
		total += rtt_us;
	}
	if (o.count > 1)
		printf("%ld pings: min/avg/max = %" PRId64 ".%03" PRId64 "/%" PRId64 ".%03" PRId64
		       "/%" PRId64 ".%03" PRId64 " ms\n", o.count, best / 1000, best % 1000,
		       total / o.count / 1000, total / o.count % 1000, worst / 1000, worst % 1000);
	r = print_peer_pings(conn);
	if (r != 0)
		goto out;
	r = fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
out:
	dmlock_close(conn);
	return r;
}
