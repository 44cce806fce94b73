/*
 * usage.c: the help texts of dmlock and its subcommands (man/dmlock.1 is
 * the full reference; keep the two in step).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_main[] =
	"Usage: dmlock COMMAND [OPTIONS]\n"
	"Take cluster-wide locks from dmlockd.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] -- CMD [ARGS...]  run CMD while holding a lock\n"
	"  status [--json]                 show this node, its peers and its locks\n"
	"  locks [--json]                  list the locks this node knows about\n"
	"  ping [-c COUNT]                 round trip to dmlockd; each peer's link\n"
	"  name -- CMD [ARGS...]           print the lock name run would derive\n"
	"  leave [--no-wait]               leave the cluster and stop dmlockd (root)\n"
	"  remove NODE                     remove a dead NODE from the roster (root)\n"
	"  join NAME@HOST:PORT             join a cluster through a sponsor (root)\n"
	"  help [COMMAND]                  show help for COMMAND\n"
	"\n"
	"Options:\n"
	"  -h, --help      show this help\n"
	"  -V, --version   show the version\n"
	"\n"
	"The daemon socket is -S PATH, else $DMLOCK_SOCKET, else\n"
	"$XDG_RUNTIME_DIR/dmlock/dmlockd.sock (non-root, if it exists), else\n"
	"/run/dmlock/dmlockd.sock.  See dmlock(1).\n";

static const char usage_run[] =
	"Usage: dmlock run [OPTIONS] [--] COMMAND [ARGS...]\n"
	"Take a lock, run COMMAND (no shell) while holding it, release it when COMMAND\n"
	"exits, and exit with COMMAND's status (128+N if killed by signal N).\n"
	"\n"
	"Options:\n"
	"      --name NAME        lock NAME (default: cmd/ + first 32 hex digits of the\n"
	"                         SHA-256 of the arguments, each followed by a NUL byte;\n"
	"                         see 'dmlock name')\n"
	"  -n, --nonblock         fail at once if the lock is taken (exit 75)\n"
	"  -w, --wait SECONDS     wait at most SECONDS for the lock (else exit 79)\n"
	"  -s, --shared           take a shared lock (readers); -x exclusive is default\n"
	"  -x, --exclusive        take an exclusive lock\n"
	"  -E, --conflict-exit-code CODE\n"
	"                         exit with CODE instead of 75/79 when not acquired\n"
	"      --on-lost ACTION   if the lock is lost while COMMAND runs: term (SIGTERM\n"
	"                         to its process group, then SIGKILL; default), kill, or\n"
	"                         ignore; dmlock then exits 80\n"
	"      --kill-after SECONDS  SIGKILL this long after SIGTERM (default 5)\n"
	"  -S, --socket PATH      dmlockd's socket\n"
	"  -h, --help             show this help\n"
	"\n"
	"COMMAND gets DMLOCK_NAME and DMLOCK_TOKEN (the fencing token) in its\n"
	"environment.  SIGINT, SIGTERM, SIGHUP and SIGQUIT go to its whole group.\n"
	"\n"
	"Exit status: COMMAND's own, or 64 usage, 69 dmlockd unreachable, 70\n"
	"internal error, 71 system error, 75 busy (-n), 76 protocol mismatch, 77\n"
	"permission denied, 79 wait expired (-w), 80 lock lost, 126 COMMAND not\n"
	"executable, 127 COMMAND not found.\n";

static const char usage_status[] =
	"Usage: dmlock status [--json] [-S PATH]\n"
	"Show this node, its algorithm and whether it supports shared locks, the\n"
	"roster with each peer's link state, last contact and round trip, and the\n"
	"locks held and waited for on this node.\n"
	"\n"
	"  -j, --json          print one JSON object\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_locks[] =
	"Usage: dmlock locks [--json] [-S PATH]\n"
	"List the locks this node knows about: name, mode, state, node, token, holder.\n"
	"This dmlockd reports only requests made on its own node.\n"
	"\n"
	"  -j, --json          print one JSON object\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_leave[] =
	"Usage: dmlock leave [--no-wait] [-S PATH]\n"
	"Make this node leave the cluster gracefully; dmlockd stops when the other\n"
	"members have acknowledged.  Locks held on this node are lost.  Needs root or\n"
	"an [access] roster entry in dmlockd.conf.\n"
	"\n"
	"      --no-wait       do not wait for dmlockd to stop\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_remove[] =
	"Usage: dmlock remove [-S PATH] NODE\n"
	"Remove NODE (a dead member) from the cluster's roster.  Needs root or an\n"
	"[access] roster entry in dmlockd.conf.\n"
	"\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_join[] =
	"Usage: dmlock join [-S PATH] NAME@HOST:PORT\n"
	"Join a running cluster through the member NAME at HOST:PORT.  Needs root or an\n"
	"[access] roster entry.  Only a node alone in its roster, with a listen address\n"
	"and TLS files, and holding no lock, can join; `dmlock status` shows when it\n"
	"is a member.\n"
	"\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_ping[] =
	"Usage: dmlock ping [-c COUNT] [-S PATH]\n"
	"Measure the round trip to dmlockd COUNT times (default 1), then show each\n"
	"peer's link state, last contact and round trip as dmlockd measured them.\n"
	"\n"
	"  -c, --count COUNT   pings to send\n"
	"  -S, --socket PATH   dmlockd's socket\n";

static const char usage_name[] =
	"Usage: dmlock name [--] COMMAND [ARGS...]\n"
	"Print the lock name 'dmlock run' uses for COMMAND when --name is not given:\n"
	"  cmd/ + the first 32 hex digits of the SHA-256 of every argument followed by\n"
	"  a NUL byte, the same as\n"
	"  printf 'cmd/%s\\n' \"$(printf '%s\\0' COMMAND ARGS... | sha256sum | cut -c1-32)\"\n";

static const char usage_help[] =
	"Usage: dmlock help [COMMAND]\n"
	"Show help for COMMAND (run, status, locks, ping, name, leave, remove, join),\n"
	"or the overview.\n";

const char *usage_for(const char *subcommand)
{
	static const struct {
		const char *name;
		const char *text;
	} texts[] = {
		{ "run", usage_run },
		{ "status", usage_status },
		{ "ping", usage_ping },
		{ "name", usage_name },
		{ "locks", usage_locks },
		{ "leave", usage_leave },
		{ "remove", usage_remove },
		{ "join", usage_join },
		{ "help", usage_help },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (strcmp(texts[i].name, subcommand) == 0)
			return texts[i].text;
	return NULL;
}

void usage_print_main(FILE *out)
{
	fputs(usage_main, out);
}
