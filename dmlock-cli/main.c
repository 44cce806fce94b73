/*
 * main.c: the dmlock command: global options and the subcommand table.
 * Start-up stays cheap (no configuration file, no TLS): `dmlock run -- true`
 * should cost about what `flock FILE true` costs.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "exit_codes.h"

static int cmd_help(int argc, char *argv[]);

static const struct subcommand {
	const char	*name;
	int		(*fn)(int argc, char *argv[]);
} subcommands[] = {
	{ "run",	cmd_run },
	{ "status",	cmd_status },
	{ "ping",	cmd_ping },
	{ "name",	cmd_name },
	{ "locks",	cmd_locks },
	{ "leave",	cmd_leave },
	{ "remove",	cmd_remove },
	{ "join",	cmd_join },
	{ "help",	cmd_help },
};

static int cmd_help(int argc, char *argv[])
{
	const char *text;

	if (argc < 2) {
		usage_print_main(stdout);
		return DMLOCK_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_error("help", "help takes one command name");
	text = usage_for(argv[1]);
	if (!text)
		return cli_usage_error(NULL, "no such command '%s'", argv[1]);
	fputs(text, stdout);
	return DMLOCK_EXIT_OK;
}

int main(int argc, char *argv[])
{
	const char *name;

	if (argc < 2) {
		usage_print_main(stderr);
		return DMLOCK_EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
		usage_print_main(stdout);
		return DMLOCK_EXIT_OK;
	}
	if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
		printf("dmlock %s (local protocol v%d)\n", PACKAGE_VERSION, DMLOCK_PROTOCOL_VERSION);
		return DMLOCK_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(subcommands[i].name, name) == 0)
			return subcommands[i].fn(argc - 1, argv + 1);
	if (name[0] == '-')
		return cli_usage_error(NULL, "unknown option '%s'", name);
	return cli_usage_error(NULL, "unknown command '%s'", name);
}
