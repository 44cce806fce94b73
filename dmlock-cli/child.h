/*
 * child.h: the command `dmlock run` executes: spawning it directly (no
 * shell) in its own process group, handing it the terminal when we have it,
 * signalling the whole group, and turning its wait status into ours.
 * Knows nothing about locks or the daemon.
 */
#ifndef DMLOCK_CLI_CHILD_H
#define DMLOCK_CLI_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t	pid;		/* also the id of its process group */
	int	tty_fd;		/* terminal handed to the child's group, or -1 */
	bool	exited;		/* the leader has exited (not yet reaped) */
	bool	reaped;
	int	wait_status;	/* valid once exited */
};

/*
 * Fork and exec argv[0] (PATH search, no shell) in a new process group.
 * The caller has blocked the signals it watches; the child gets
 * child_sigmask back and default dispositions.  The child is made the
 * terminal's foreground group when stdin is a terminal and we are in the
 * foreground, gets PR_SET_PDEATHSIG(SIGKILL) (so it dies with us), and
 * inherits no descriptor marked close-on-exec.
 * Returns 0, or -errno when fork failed or the exec failed (then the child
 * is already reaped and *exec_failed is set).
 */
int child_spawn(struct child *c, char *const argv[], const sigset_t *child_sigmask, bool *exec_failed);

/* Send sig to the child's whole process group (0 if it is already gone). */
int child_signal_group(const struct child *c, int sig);

/*
 * Check, without blocking and without reaping, whether the leader exited;
 * a stop of the leader while it owns the terminal stops us too, the way a
 * shell job stops, and resumes it when we are continued.  Returns true once
 * it exited.
 */
bool child_poll_exit(struct child *c);

/* Reap the exited leader and give the terminal back to our process group. */
void child_reap(struct child *c);

/* Our exit status for a wait status: the exit code, or 128+N for signal N. */
int child_exit_code(int wait_status);

#endif /* DMLOCK_CLI_CHILD_H */
