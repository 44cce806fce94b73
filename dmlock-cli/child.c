/*
 * child.c: spawning and tracking the command of `dmlock run` (see child.h).
 * Owns the process group, the terminal hand-over and the wait status; the
 * lock and the signal loop live in run.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "exit_codes.h"

/* tcsetpgrp() from a background group raises SIGTTOU unless it is blocked. */
static void tty_set_foreground(int tty_fd, pid_t pgrp)
{
	sigset_t ttou, saved;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &saved);
	(void)tcsetpgrp(tty_fd, pgrp);
	sigprocmask(SIG_SETMASK, &saved, NULL);
}

static bool we_own_the_terminal(void)
{
	return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* Between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_exec(char *const argv[], const sigset_t *child_sigmask, bool take_tty, pid_t parent, int errpipe)
{
	int err;

	(void)setpgid(0, 0);
	if (take_tty)
		tty_set_foreground(STDIN_FILENO, getpid());
	/* A command must never run on without its lock: die with dmlock. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		raise(SIGKILL);
	sigprocmask(SIG_SETMASK, child_sigmask, NULL);
	execvp(argv[0], argv);
	err = errno;
	(void)!write(errpipe, &err, sizeof(err));
	_exit(DMLOCK_EXIT_NOT_FOUND);
}

int child_spawn(struct child *c, char *const argv[], const sigset_t *child_sigmask, bool *exec_failed)
{
	bool take_tty = we_own_the_terminal();
	pid_t parent = getpid();
	int errpipe[2];
	int exec_errno = 0;
	ssize_t n;

	*exec_failed = false;
	c->pid = -1;
	c->tty_fd = -1;
	c->exited = false;
	c->reaped = false;
	c->wait_status = 0;

	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0) {
		int r = -errno;

		close(errpipe[0]);
		close(errpipe[1]);
		return r;
	}
	if (c->pid == 0) {
		close(errpipe[0]);
		child_exec(argv, child_sigmask, take_tty, parent, errpipe[1]);
	}

	/* Both sides set the group and the terminal, so neither order races. */
	(void)setpgid(c->pid, c->pid);
	if (take_tty) {
		tty_set_foreground(STDIN_FILENO, c->pid);
		c->tty_fd = STDIN_FILENO;
	}
	close(errpipe[1]);
	do
		n = read(errpipe[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	if (n == (ssize_t)sizeof(exec_errno)) {
		*exec_failed = true;
		c->exited = true;
		child_reap(c);
		return -(exec_errno > 0 ? exec_errno : ENOEXEC);
	}
	return 0;
}

int child_signal_group(const struct child *c, int sig)
{
	if (c->pid <= 0 || c->reaped)
		return 0;
	if (kill(-c->pid, sig) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}

/* The leader stopped (^Z at the terminal): stop with it, like a shell job. */
static void child_follow_stop(struct child *c)
{
	tty_set_foreground(c->tty_fd, getpgrp());
	kill(getpid(), SIGSTOP);
	/* Continued (fg or bg): hand the terminal back if we are in front. */
	if (tcgetpgrp(c->tty_fd) == getpgrp())
		tty_set_foreground(c->tty_fd, c->pid);
	kill(-c->pid, SIGCONT);
}

bool child_poll_exit(struct child *c)
{
	siginfo_t info;

	if (c->exited)
		return true;
	info.si_pid = 0;
	if (waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == c->pid) {
		c->exited = true;
		return true;
	}
	if (c->tty_fd >= 0) {
		info.si_pid = 0;
		if (waitid(P_PID, (id_t)c->pid, &info, WSTOPPED | WNOHANG) == 0 && info.si_pid == c->pid)
			child_follow_stop(c);
	}
	return false;
}

void child_reap(struct child *c)
{
	int status = 0;
	pid_t r;

	if (c->reaped || c->pid <= 0)
		return;
	do
		r = waitpid(c->pid, &status, 0);
	while (r < 0 && errno == EINTR);
	c->wait_status = status;
	c->reaped = true;
	c->exited = true;
	if (c->tty_fd >= 0) {
		tty_set_foreground(c->tty_fd, getpgrp());
		c->tty_fd = -1;
	}
}

int child_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return DMLOCK_EXIT_SOFTWARE;
}
