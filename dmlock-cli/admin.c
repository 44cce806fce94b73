/*
 * admin.c: `dmlock locks [--json]` and the roster operations `dmlock
 * leave`, `dmlock remove NODE` and `dmlock join SPONSOR`: one connection,
 * one administrative request (dmlock_query()), the answer printed.
 * Formatting of lock lists lives in status_report.c.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cli.h"
#include "exit_codes.h"
#include "status_report.h"

/* How long `dmlock leave` waits for dmlockd to finish leaving and exit. */
#define LEAVE_WAIT_MS 30000

struct admin_options {
	const char	*socket_path;
	int		 json;
	int		 no_wait;
	const char	*arg;		/* NODE or SPONSOR */
};

/* [-S PATH] [--json (locks)] [--no-wait (leave)] plus n_args operands. */
static int admin_options_parse(int argc, char *argv[], int n_args, struct admin_options *o)
{
	static const struct option long_options[] = {
		{ "socket",	required_argument,	NULL, 'S' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "no-wait",	no_argument,		NULL, 'W' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub = argv[0];
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":S:jh", long_options, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->socket_path = optarg;
			break;
		case 'j':
			if (strcmp(sub, "locks") != 0)
				goto unknown;
			o->json = 1;
			break;
		case 'W':
			if (strcmp(sub, "leave") != 0)
				goto unknown;
			o->no_wait = 1;
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
	if (argc - optind < n_args)
		return cli_usage_error(sub, "missing %s", strcmp(sub, "join") == 0 ?
				       "SPONSOR (NAME@HOST:PORT)" : "NODE");
	if (n_args > 0)
		o->arg = argv[optind++];
	if (optind < argc)
		return cli_usage_error(sub, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Exit status and message for a refused administrative request. */
static int admin_refused(int err, const char *doing, const char *why)
{
	if (why == NULL || why[0] == '\0')
		return cli_daemon_error(err, doing);
	cli_error("%s: %s", doing, why);
	switch (err) {
	case -EACCES:
		return DMLOCK_EXIT_NOPERM;
	case -ENOENT:
	case -EINVAL:
		return DMLOCK_EXIT_USAGE;
	case -EALREADY:
		return DMLOCK_EXIT_BUSY;
	case -EOPNOTSUPP:
		return DMLOCK_EXIT_UNAVAILABLE;
	default:
		return DMLOCK_EXIT_FAILURE;
	}
}

/* Send request; on success print the INFO lines of the answer. */
static int admin_request(const struct admin_options *o, const char *request, const char *doing,
    struct dmlock_conn **ret_conn, char **ret_text)
{
	struct dmlock_conn *conn = NULL;
	char *text = NULL;
	int r;

	r = cli_connect(o->socket_path, &conn);
	if (r != 0)
		return r;
	r = dmlock_query(conn, request, &text);
	if (r < 0) {
		r = admin_refused(r, doing, text);
		free(text);
		dmlock_close(conn);
		return r;
	}
	*ret_conn = conn;
	*ret_text = text;
	return 0;
}

static void print_info_lines(const char *text)
{
	for (const char *p = text; *p; ) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > 5 && strncmp(p, "INFO ", 5) == 0)
			printf("%.*s\n", (int)(len - 5), p + 5);
		p += len + (end ? 1 : 0);
	}
}

static uint64_t boottime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cmd_locks(int argc, char *argv[])
{
	struct admin_options o;
	struct status_report report;
	struct dmlock_conn *conn = NULL;
	char *text = NULL;
	int r;

	r = admin_options_parse(argc, argv, 0, &o);
	if (r != 0)
		return r < 0 ? DMLOCK_EXIT_OK : r;
	r = admin_request(&o, "LOCKS", "listing locks", &conn, &text);
	if (r != 0)
		return r;
	r = status_report_parse(text, &report);
	if (r < 0) {
		cli_error("cannot read dmlockd's lock list: %s", strerror(-r));
		r = DMLOCK_EXIT_SOFTWARE;
		goto out;
	}
	if (o.json)
		status_report_print_locks_json(&report, dmlock_conn_node(conn), boottime_ms(), stdout);
	else
		status_report_print_locks_text(&report, dmlock_conn_node(conn), boottime_ms(), stdout);
	status_report_done(&report);
	r = fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
out:
	free(text);
	dmlock_close(conn);
	return r;
}

/* Wait until dmlockd closes the connection (it exits after leaving). */
static int wait_for_exit(struct dmlock_conn *conn, int timeout_ms)
{
	int fd = dmlock_fd(conn);
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char byte;
		int64_t spent;

		clock_gettime(CLOCK_MONOTONIC, &now);
		spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= timeout_ms)
			return -ETIMEDOUT;
		if (fd < 0)
			return 0;
		int n = poll(&p, 1, (int)(timeout_ms - spent));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		ssize_t got = recv(fd, &byte, 1, MSG_DONTWAIT);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			return 0;	/* closed: dmlockd is gone */
		/* A LOST line for a lock of ours cannot come: we hold none. */
	}
}

int cmd_leave(int argc, char *argv[])
{
	struct admin_options o;
	struct dmlock_conn *conn = NULL;
	char *text = NULL;
	int r;

	r = admin_options_parse(argc, argv, 0, &o);
	if (r != 0)
		return r < 0 ? DMLOCK_EXIT_OK : r;
	r = admin_request(&o, "LEAVE", "leaving the cluster", &conn, &text);
	if (r != 0)
		return r;
	print_info_lines(text);
	if (!o.no_wait) {
		r = wait_for_exit(conn, LEAVE_WAIT_MS);
		if (r < 0) {
			cli_error("dmlockd has not finished leaving after %d s (see its log: "
				  "journalctl -u dmlockd)", LEAVE_WAIT_MS / 1000);
			r = DMLOCK_EXIT_FAILURE;
			goto out;
		}
		printf("dmlockd has left the cluster and stopped\n");
	}
	r = fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
out:
	free(text);
	dmlock_close(conn);
	return r;
}

/* REMOVE NODE and JOIN SPONSOR. */
static int roster_change(int argc, char *argv[], const char *verb, const char *doing_fmt)
{
	struct admin_options o;
	struct dmlock_conn *conn = NULL;
	char request[512], doing[400];
	char *text = NULL;
	int r;

	r = admin_options_parse(argc, argv, 1, &o);
	if (r != 0)
		return r < 0 ? DMLOCK_EXIT_OK : r;
	if (snprintf(request, sizeof(request), "%s %s", verb, o.arg) >= (int)sizeof(request) ||
	    strchr(o.arg, ' ') != NULL || strchr(o.arg, '\n') != NULL)
		return cli_usage_error(argv[0], "'%s' is not a valid %s", o.arg,
				       strcmp(verb, "JOIN") == 0 ? "sponsor (NAME@HOST:PORT)" : "node name");
	snprintf(doing, sizeof(doing), doing_fmt, o.arg);
	r = cli_connect(o.socket_path, &conn);
	if (r != 0)
		return r;
	r = dmlock_query(conn, request, &text);
	if (r == -EINVAL && text == NULL) {
		/* The library refused the line itself: a bad name. */
		r = cli_usage_error(argv[0], "'%s' is not a valid %s", o.arg,
				    strcmp(verb, "JOIN") == 0 ? "sponsor (NAME@HOST:PORT)" : "node name");
		goto out;
	}
	if (r < 0) {
		r = admin_refused(r, doing, text);
		goto out;
	}
	print_info_lines(text);
	r = fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
out:
	free(text);
	dmlock_close(conn);
	return r;
}

int cmd_remove(int argc, char *argv[])
{
	return roster_change(argc, argv, "REMOVE", "removing node %s");
}

int cmd_join(int argc, char *argv[])
{
	return roster_change(argc, argv, "JOIN", "joining the cluster through %s");
}
