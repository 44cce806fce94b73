/*
 * run_options.c: parsing `dmlock run` options (getopt_long, stopping at the
 * first word that is not an option, so the command's own options are left
 * alone even without "--").
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_options.h"

enum {
	OPT_ON_LOST = 0x100,
	OPT_KILL_AFTER,
	OPT_NAME,
};

static const struct option run_long_options[] = {
	{ "name",		required_argument,	NULL, OPT_NAME },
	{ "nonblock",		no_argument,		NULL, 'n' },
	{ "no-wait",		no_argument,		NULL, 'n' },
	{ "wait",		required_argument,	NULL, 'w' },
	{ "timeout",		required_argument,	NULL, 'w' },
	{ "shared",		no_argument,		NULL, 's' },
	{ "exclusive",		no_argument,		NULL, 'x' },
	{ "conflict-exit-code",	required_argument,	NULL, 'E' },
	{ "on-lost",		required_argument,	NULL, OPT_ON_LOST },
	{ "kill-after",		required_argument,	NULL, OPT_KILL_AFTER },
	{ "socket",		required_argument,	NULL, 'S' },
	{ "help",		no_argument,		NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_exit_code(const char *text, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 255)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

static int parse_on_lost(const char *text, enum on_lost_action *ret)
{
	if (strcmp(text, "term") == 0)
		*ret = ON_LOST_TERM;
	else if (strcmp(text, "kill") == 0)
		*ret = ON_LOST_KILL;
	else if (strcmp(text, "ignore") == 0)
		*ret = ON_LOST_IGNORE;
	else
		return -EINVAL;
	return 0;
}

int run_options_parse(int argc, char *argv[], struct run_options *o)
{
	char why[LOCK_NAME_WHY_SIZE], quoted[LOCK_NAME_QUOTED_SIZE];
	int nonblock = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->mode = DMLOCK_EXCLUSIVE;
	o->timeout_ms = DMLOCK_FOREVER;
	o->conflict_code = -1;
	o->on_lost = ON_LOST_TERM;
	o->kill_after_ms = RUN_DEFAULT_KILL_AFTER_MS;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:nw:sxE:S:h", run_long_options, NULL)) != -1) {
		switch (c) {
		case OPT_NAME:
			if (lock_name_check(optarg, why) < 0) {
				lock_name_quote(optarg, quoted);
				cli_usage_error("run", "invalid lock name '%s': %s; use 1 to %d printable "
						"ASCII characters without spaces", quoted, why, LOCK_NAME_MAX);
				return -EINVAL;
			}
			o->name = optarg;
			break;
		case 'n':
			nonblock = 1;
			break;
		case 'w':
			if (cli_parse_seconds(optarg, RUN_MAX_SECONDS, &o->timeout_ms) < 0) {
				cli_usage_error("run", "invalid -w '%s': give a number of seconds, e.g. -w 30",
						optarg);
				return -EINVAL;
			}
			o->wait_given = 1;
			break;
		case 's':
			o->mode = DMLOCK_SHARED;
			break;
		case 'x':
			o->mode = DMLOCK_EXCLUSIVE;
			break;
		case 'E':
			if (parse_exit_code(optarg, &o->conflict_code) < 0) {
				cli_usage_error("run", "invalid -E '%s': give an exit code from 0 to 255", optarg);
				return -EINVAL;
			}
			break;
		case OPT_ON_LOST:
			if (parse_on_lost(optarg, &o->on_lost) < 0) {
				cli_usage_error("run", "invalid --on-lost '%s': use term, kill or ignore", optarg);
				return -EINVAL;
			}
			break;
		case OPT_KILL_AFTER:
			if (cli_parse_seconds(optarg, RUN_MAX_SECONDS, &o->kill_after_ms) < 0) {
				cli_usage_error("run", "invalid --kill-after '%s': give a number of seconds, "
						"e.g. --kill-after 10", optarg);
				return -EINVAL;
			}
			break;
		case 'S':
			o->socket_path = optarg;
			break;
		case 'h':
			fputs(usage_for("run"), stdout);
			return 1;
		case ':':
			cli_usage_error("run", "option '%s' needs an argument", argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt)
				cli_usage_error("run", "unknown option '-%c'", optopt);
			else
				cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (nonblock && o->wait_given) {
		cli_usage_error("run", "-n and -w exclude each other: -n fails at once, -w waits");
		return -EINVAL;
	}
	if (nonblock)
		o->timeout_ms = DMLOCK_TRY;
	if (optind >= argc) {
		cli_usage_error("run", "no command given: dmlock run [OPTIONS] -- COMMAND [ARGS...]");
		return -EINVAL;
	}
	o->command_argc = argc - optind;
	o->command_argv = argv + optind;
	if (!o->name) {
		lock_name_from_argv(o->command_argc, o->command_argv, o->derived_name);
		o->name = o->derived_name;
	}
	return 0;
}
