/*
 * connect.c: reaching dmlockd and turning library errors into messages
 * that say what went wrong and what to do, and into exit statuses.
 * Shared by every subcommand that talks to the daemon.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exit_codes.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dmlock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *subcommand, const char *fmt, ...)
{
	va_list ap;

	fputs("dmlock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (subcommand)
		fprintf(stderr, " (see 'dmlock help %s')\n", subcommand);
	else
		fputs(" (see 'dmlock --help')\n", stderr);
	return DMLOCK_EXIT_USAGE;
}

const char *cli_socket_path(const char *socket_path, char *buf, size_t size)
{
	if (socket_path)
		return socket_path;
	if (dmlock_socket_path(buf, size) < 0)
		return "$DMLOCK_SOCKET (too long)";
	return buf;
}

int cli_connect(const char *socket_path, struct dmlock_conn **ret)
{
	char buf[DMLOCK_PATH_MAX];
	const char *path;
	int r;

	r = dmlock_connect(socket_path, ret);
	if (r >= 0)
		return 0;
	path = cli_socket_path(socket_path, buf, sizeof(buf));
	switch (r) {
	case -ENOENT:
	case -ECONNREFUSED:
	case -ENOTSOCK:
	case -ENOTDIR:
		cli_error("cannot reach dmlockd at %s: %s (is dmlockd running? systemctl status dmlockd; "
			  "or point -S or DMLOCK_SOCKET at its socket)", path, strerror(-r));
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EACCES:
	case -EPERM:
		cli_error("cannot connect to dmlockd at %s: %s (is your user in the dmlock group? "
			  "id -nG; log in again after adding it)", path, strerror(-r));
		return DMLOCK_EXIT_NOPERM;
	case -EPROTO:
		cli_error("%s does not speak dmlock protocol v%d (is it a dmlockd socket, and is dmlockd "
			  "the same version as this dmlock?)", path, DMLOCK_PROTOCOL_VERSION);
		return DMLOCK_EXIT_PROTOCOL;
	case -ETIMEDOUT:
		cli_error("dmlockd at %s did not greet us in time (is it stopped or overloaded? "
			  "systemctl status dmlockd)", path);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EUSERS:
		cli_error("dmlockd at %s has too many clients; try again later", path);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -ENAMETOOLONG:
		cli_error("socket path %s is too long (at most %d bytes)", path, DMLOCK_PATH_MAX - 1);
		return DMLOCK_EXIT_USAGE;
	default:
		cli_error("cannot connect to dmlockd at %s: %s", path, dmlock_strerror(r));
		return DMLOCK_EXIT_UNAVAILABLE;
	}
}

int cli_daemon_error(int err, const char *doing)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		cli_error("%s: permission denied by dmlockd (ask the administrator to allow this user "
			  "the lock name in dmlockd.conf)", doing);
		return DMLOCK_EXIT_NOPERM;
	case -ECONNRESET:
	case -EPIPE:
		cli_error("%s: the connection to dmlockd broke (did it stop? systemctl status dmlockd)", doing);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -ESHUTDOWN:
		cli_error("%s: dmlockd is shutting down (try again when it is back)", doing);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -ETIMEDOUT:
	case -ETIME:
		cli_error("%s: dmlockd did not answer in time (is it overloaded? systemctl status dmlockd)",
			  doing);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EPROTO:
		cli_error("%s: dmlockd sent a reply this dmlock does not understand (are both the same "
			  "version?)", doing);
		return DMLOCK_EXIT_PROTOCOL;
	case -EOPNOTSUPP:
		cli_error("%s: not supported by dmlockd's lock algorithm (see dmlock status)", doing);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EINVAL:
		cli_error("%s: dmlockd rejected the request as invalid", doing);
		return DMLOCK_EXIT_USAGE;
	default:
		cli_error("%s: %s", doing, dmlock_strerror(err));
		return DMLOCK_EXIT_SOFTWARE;
	}
}

int cli_parse_seconds(const char *text, double max_seconds, int64_t *ret_ms)
{
	char *end;
	double seconds;
	int64_t ms;

	errno = 0;
	seconds = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !isfinite(seconds) || seconds < 0 ||
	    seconds > max_seconds)
		return -EINVAL;
	/* Round up, so a short wait never turns into "do not wait". */
	ms = (int64_t)(seconds * 1000.0);
	if ((double)ms < seconds * 1000.0)
		ms++;
	*ret_ms = ms;
	return 0;
}
