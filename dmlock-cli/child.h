/*
 * child.h: the command `dmlock run` executes: spawning it directly (no
 * shell) in its own process group under a guard, handing it the terminal
 * when we have it, signalling the whole group, and turning its wait status
 * into ours.
 * Knows nothing about locks or the daemon.
 */
#ifndef DMLOCK_CLI_CHILD_H
#define DMLOCK_CLI_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t	pid;		/* the command (the process we exec) */
	pid_t	pgid;		/* its process group: the guard's pid */
	int	guard_fd;	/* write end of the guard's pipe, or -1 */
	bool	guard_reaped;	/* the guard is reaped: pgid may be reused */
	int	tty_fd;		/* terminal handed to the child's group, or -1 */
	bool	exited;		/* the command has exited (not yet reaped) */
	bool	reaped;
	bool	status_unknown;	/* reaped by someone else: no wait status */
	int	wait_status;	/* valid once reaped (unless status_unknown) */
};

/*
 * Fork and exec argv[0] (PATH search, no shell) in a new process group.
 * The group is made first, led by a guard process that kills the whole
 * group with SIGKILL if we die (even by SIGKILL) and exits quietly when
 * child_reap() tells it the command ended (child.c's top comment).
 * The caller has blocked the signals it watches, SIGPIPE included; the
 * child gets child_sigmask back and default dispositions.  The group is
 * made the terminal's foreground group when stdin is a terminal and we are
 * in the foreground; the command gets PR_SET_PDEATHSIG(SIGKILL) too and
 * inherits no descriptor marked close-on-exec.
 * Returns 0, or -errno when a fork failed or the command could not be
 * started (then the command and the guard are already reaped, and
 * *exec_failed is set if it was the exec that failed).
 */
int child_spawn(struct child *c, char *const argv[], const sigset_t *child_sigmask, bool *exec_failed);

/* Send sig to the command's whole process group, the guard included (which
 * ignores all but SIGKILL); 0 if it is already gone. */
int child_signal_group(const struct child *c, int sig);

/*
 * Check, without blocking and without reaping, whether the command exited;
 * a stop of the command while it owns the terminal stops us too, the way a
 * shell job stops, and resumes it when we are continued.  Returns true once
 * it exited.
 */
bool child_poll_exit(struct child *c);

/* Reap the exited command, take the terminal back to our process group if
 * the command's group holds it (after `bg` the shell does), then let the guard go (it kills nothing) and reap it: after this the
 * group is no longer signalled. */
void child_reap(struct child *c);

/* Our exit status for a wait status: the exit code, or 128+N for signal N. */
int child_exit_code(int wait_status);

#endif /* DMLOCK_CLI_CHILD_H */
