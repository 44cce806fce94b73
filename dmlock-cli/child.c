/*
 * child.c: spawning and tracking the command of `dmlock run` (see child.h).
 * Owns the process group and its guard, the terminal hand-over and the wait
 * status; the lock and the signal loop live in run.c.
 *
 * The guard.  PR_SET_PDEATHSIG covers only the command's first process
 * (and a set-user-ID exec clears it), so a grandchild such as the rsync of
 * a backup script would run on without the lock after `kill -9` of dmlock.
 * The command's process group therefore starts with a guard: a process
 * forked first as the group's leader, before the command joins the group.
 * It holds nothing but the read end of a pipe whose only write end is
 * dmlock's (close-on-exec), ignores the signals dmlock forwards and the
 * terminal sends, and blocks in read().  EOF means dmlock died: the guard
 * kills its whole group with SIGKILL.  A byte means the command ended
 * normally and was reaped: the guard exits without killing anything, so
 * what a finished command left in the background runs on as before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "exit_codes.h"

/* What the command's side of the spawn reports when it cannot exec. */
enum spawn_stage {
	STAGE_GROUP = 1,	/* could not join the guard's process group */
	STAGE_EXEC,		/* execvp failed */
};

struct spawn_error {
	int	stage;
	int	err;
};

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

/* Close every descriptor from lo up except keep (lo <= keep; async-signal-safe). */
static void close_from(int lo, int keep)
{
	long max;

#ifdef SYS_close_range
	if ((keep == lo || syscall(SYS_close_range, (unsigned)lo, (unsigned)keep - 1, 0) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0) == 0)
		return;
#endif
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lo; fd < max; fd++)
		if (fd != keep)
			(void)close(fd);
}

/*
 * The guard (forked, never execs; only async-signal-safe calls).  Signals
 * it must survive: those dmlock forwards to the group, those the terminal
 * sends to the foreground group, and those a command may send to its own
 * group (`kill 0` in a script's trap).  It stays killable by SIGKILL, and
 * the fault signals keep their defaults.
 */
static void __attribute__((noreturn)) guard_main(int rd)
{
	static const int keep_default[] = {
		SIGKILL, SIGSTOP, SIGCONT, SIGCHLD, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
	};
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigset_t none;
	char byte;
	ssize_t n;
	int fd, nul;

	(void)setpgid(0, 0);
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		bool skip = false;

		for (size_t i = 0; i < sizeof(keep_default) / sizeof(keep_default[0]); i++)
			skip = skip || keep_default[i] == sig;
		if (!skip)
			(void)sigaction(sig, &ignore, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_NAME, "dmlock-guard", 0, 0, 0);

	/* Nothing but the pipe: no terminal, no daemon connection. */
	fd = rd;
	if (fd <= STDERR_FILENO) {
		fd = fcntl(rd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		if (fd < 0)
			fd = rd;
	}
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = STDIN_FILENO; i <= STDERR_FILENO; i++) {
		if (i == fd)
			continue;
		if (nul >= 0 && nul != i)
			(void)dup2(nul, i);
		else if (nul < 0)
			(void)close(i);
	}
	close_from(STDERR_FILENO + 1, fd);

	do
		n = read(fd, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		_exit(0);	/* normal end: the command was reaped */
	/* EOF: dmlock died and the lock went with it.  Nothing may run on. */
	(void)kill(0, SIGKILL);
	_exit(1);
}

/* Fork the guard as the leader of a new process group (c->pgid). */
static int guard_spawn(struct child *c)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0)
		guard_main(p[0]);
	close(p[0]);
	/* Both sides set the group, so it exists before the command forks. */
	(void)setpgid(pid, pid);
	c->pgid = pid;
	c->guard_fd = p[1];
	return 0;
}

/* Tell the guard the command ended normally and reap it. */
static void guard_release(struct child *c)
{
	char byte = 0;
	pid_t r;

	if (c->pgid <= 0 || c->guard_reaped)
		return;
	if (c->guard_fd >= 0) {
		/* EPIPE if the group was killed; run.c blocks SIGPIPE. */
		(void)!write(c->guard_fd, &byte, 1);
		close(c->guard_fd);
		c->guard_fd = -1;
	}
	(void)kill(c->pgid, SIGCONT);	/* a stopped guard could not read */
	do
		r = waitpid(c->pgid, NULL, 0);
	while (r < 0 && errno == EINTR);
	c->guard_reaped = true;
}

/* Between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_exec(char *const argv[], const sigset_t *child_sigmask, bool take_tty, pid_t parent, pid_t pgid,
	   int errpipe)
{
	struct spawn_error e = { .stage = STAGE_GROUP };

	if (setpgid(0, pgid) < 0)
		goto fail;
	if (take_tty)
		tty_set_foreground(STDIN_FILENO, pgid);
	/* A command must never run on without its lock: die with dmlock (the
	 * guard covers the rest of the group). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		raise(SIGKILL);
	sigprocmask(SIG_SETMASK, child_sigmask, NULL);
	execvp(argv[0], argv);
	e.stage = STAGE_EXEC;
fail:
	e.err = errno;
	(void)!write(errpipe, &e, sizeof(e));
	_exit(DMLOCK_EXIT_NOT_FOUND);
}

int child_spawn(struct child *c, char *const argv[], const sigset_t *child_sigmask, bool *exec_failed)
{
	bool take_tty = we_own_the_terminal();
	pid_t parent = getpid();
	struct spawn_error e = { 0 };
	int errpipe[2];
	ssize_t n;
	int r;

	*exec_failed = false;
	c->pid = -1;
	c->pgid = -1;
	c->guard_fd = -1;
	c->guard_reaped = false;
	c->tty_fd = -1;
	c->exited = false;
	c->reaped = false;
	c->status_unknown = false;
	c->wait_status = 0;

	r = guard_spawn(c);
	if (r < 0)
		return r;
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		r = -errno;
		guard_release(c);
		return r;
	}
	c->pid = fork();
	if (c->pid < 0) {
		r = -errno;
		close(errpipe[0]);
		close(errpipe[1]);
		guard_release(c);
		return r;
	}
	if (c->pid == 0) {
		close(errpipe[0]);
		child_exec(argv, child_sigmask, take_tty, parent, c->pgid, errpipe[1]);
	}

	/* Both sides set the group and the terminal, so neither order races. */
	(void)setpgid(c->pid, c->pgid);
	if (take_tty) {
		tty_set_foreground(STDIN_FILENO, c->pgid);
		c->tty_fd = STDIN_FILENO;
	}
	close(errpipe[1]);
	do
		n = read(errpipe[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	if (n == (ssize_t)sizeof(e)) {
		*exec_failed = e.stage == STAGE_EXEC;
		c->exited = true;
		child_reap(c);
		return -(e.err > 0 ? e.err : ENOEXEC);
	}
	return 0;
}

int child_signal_group(const struct child *c, int sig)
{
	if (c->pgid <= 0 || c->guard_reaped)
		return 0;
	if (kill(-c->pgid, sig) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}

/* The command stopped (^Z at the terminal): stop with it, like a shell job. */
static void child_follow_stop(struct child *c)
{
	/* Take the terminal back only from the command: after `bg` the shell
	 * holds it, and a stop in the background must leave it there. */
	if (tcgetpgrp(c->tty_fd) == c->pgid)
		tty_set_foreground(c->tty_fd, getpgrp());
	kill(getpid(), SIGSTOP);
	/* Continued (fg or bg): hand the terminal back if we are in front. */
	if (tcgetpgrp(c->tty_fd) == getpgrp())
		tty_set_foreground(c->tty_fd, c->pgid);
	kill(-c->pgid, SIGCONT);
}

bool child_poll_exit(struct child *c)
{
	siginfo_t info;
	int r;

	if (c->exited)
		return true;
	info.si_pid = 0;
	r = waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT);
	/* ECHILD: the kernel reaped it for us (SIGCHLD ignored, which cmd_run
	 * undoes first); it is gone all the same. */
	if ((r == 0 && info.si_pid == c->pid) || (r < 0 && errno == ECHILD)) {
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

	if (c->reaped || c->pid <= 0) {
		guard_release(c);
		return;
	}
	do
		r = waitpid(c->pid, &status, 0);
	while (r < 0 && errno == EINTR);
	c->status_unknown = r < 0;
	c->wait_status = r < 0 ? 0 : status;
	c->reaped = true;
	c->exited = true;
	/* The same: after `bg` the terminal is the shell's, not ours to take
	 * (the guard still pins the group id here). */
	if (c->tty_fd >= 0) {
		if (tcgetpgrp(c->tty_fd) == c->pgid)
			tty_set_foreground(c->tty_fd, getpgrp());
		c->tty_fd = -1;
	}
	guard_release(c);
}

int child_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return DMLOCK_EXIT_SOFTWARE;
}
