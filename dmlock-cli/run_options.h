/*
 * run_options.h: the command line of `dmlock run`, parsed and checked.
 * Parsing only: nothing here talks to the daemon or starts a process.
 */
#ifndef DMLOCK_CLI_RUN_OPTIONS_H
#define DMLOCK_CLI_RUN_OPTIONS_H

#include <stdint.h>

#include "dmlock.h"
#include "lock_name.h"

enum on_lost_action {
	ON_LOST_TERM = 0,	/* SIGTERM to the group, SIGKILL after --kill-after */
	ON_LOST_KILL,		/* SIGKILL to the group at once */
	ON_LOST_IGNORE,		/* let the command run on; still exit 80 */
};

#define RUN_DEFAULT_KILL_AFTER_MS 5000
#define RUN_MAX_SECONDS 31536000.0	/* -w and --kill-after: at most a year */

struct run_options {
	const char		*name;		/* --name, or points into derived_name */
	char			 derived_name[LOCK_NAME_DERIVED_SIZE];
	enum dmlock_mode	 mode;		/* -s shared, -x exclusive (default) */
	int64_t			 timeout_ms;	/* DMLOCK_FOREVER, DMLOCK_TRY or -w */
	int			 wait_given;	/* -w was given */
	int			 conflict_code;	/* -E CODE, or -1 */
	enum on_lost_action	 on_lost;
	int64_t			 kill_after_ms;
	const char		*socket_path;	/* -S, or NULL */
	int			 command_argc;
	char			**command_argv;	/* NULL-terminated, points into argv */
};

/*
 * Parse argv (argv[0] == "run").  Returns 0, or prints a usage error and
 * returns -EINVAL; for --help prints the help and returns 1.
 */
int run_options_parse(int argc, char *argv[], struct run_options *ret);

#endif /* DMLOCK_CLI_RUN_OPTIONS_H */
