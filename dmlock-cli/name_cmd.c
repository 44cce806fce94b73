/*
 * name_cmd.c: `dmlock name -- COMMAND [ARGS...]` prints the lock name that
 * `dmlock run` without --name would use for that command line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "exit_codes.h"
#include "lock_name.h"

int cmd_name(int argc, char *argv[])
{
	char name[LOCK_NAME_DERIVED_SIZE];
	int first = 1;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage_for("name"), stdout);
		return DMLOCK_EXIT_OK;
	}
	if (argc > 1 && strcmp(argv[1], "--") == 0)
		first = 2;
	else if (argc > 1 && argv[1][0] == '-')
		return cli_usage_error("name", "unknown option '%s'", argv[1]);
	if (first >= argc)
		return cli_usage_error("name", "no command given: dmlock name -- COMMAND [ARGS...]");
	lock_name_from_argv(argc - first, argv + first, name);
	puts(name);
	return fflush(stdout) == 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_FAILURE;
}
