/*
 * run.c: `dmlock run`: take the lock, run the command under it, watch both
 * the command and the lock, and exit with the command's status (or with
 * dmlock's own code when the lock could not be taken or was lost).
 * Process details live in child.c, option parsing in run_options.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"
#include "exit_codes.h"
#include "run_options.h"

/* Signals we pass on to the command's whole process group. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

struct run_state {
	const struct run_options *opts;
	struct dmlock_conn	*conn;
	struct dmlock_lock	*lock;
	struct child		 child;
	int			 signal_fd;
	int			 lost;		/* the lock was lost while the command ran */
	int64_t			 kill_at_ms;	/* monotonic ms for the SIGKILL, or 0 */
};

static int64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Exit status and message for a failed acquire. */
static int acquire_failed(const struct run_options *o, struct dmlock_conn *conn, int err)
{
	char doing[DMLOCK_NAME_MAX + 64];
	const char *why = dmlock_conn_message(conn);

	switch (err) {
	case -EBUSY:
	case -EWOULDBLOCK:
		if (o->wait_given)
			goto expired;
		cli_error("lock %s is busy (held by another process; without -n dmlock waits for it)",
			  o->name);
		return o->conflict_code >= 0 ? o->conflict_code : DMLOCK_EXIT_BUSY;
	case -ETIMEDOUT:
		if (!o->wait_given)
			break;
	expired:
		cli_error("lock %s is still busy after waiting %" PRId64 ".%03" PRId64 " s (-w); not running %s",
			  o->name, o->timeout_ms / 1000, o->timeout_ms % 1000, o->command_argv[0]);
		return o->conflict_code >= 0 ? o->conflict_code : DMLOCK_EXIT_WAIT_EXPIRED;
	case -ETIME:
		/* The library gave up on a silent daemon (the wait plus its
		 * grace): not a busy lock, whatever -w and -E say. */
		cli_error("acquiring lock %s: dmlockd did not answer in time (is it frozen or overloaded? "
			  "systemctl status dmlockd); not running %s", o->name, o->command_argv[0]);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -ENOLCK:
		cli_error("lock %s was granted but lost again at once: %s; not running %s", o->name,
			  why[0] != '\0' ? why : "its lease had already run out (dmlockd frozen or cut off?)",
			  o->command_argv[0]);
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EINVAL:
		cli_error("dmlockd rejected lock name %s as invalid (use 1 to %d printable ASCII characters "
			  "without spaces)", o->name, DMLOCK_NAME_MAX);
		return DMLOCK_EXIT_USAGE;
	case -EOPNOTSUPP:
		cli_error("dmlockd's lock algorithm %s does not support %s locks (drop -s, or choose "
			  "another algorithm in dmlockd.conf)", dmlock_conn_algorithm(conn),
			  o->mode == DMLOCK_SHARED ? "shared" : "exclusive");
		return DMLOCK_EXIT_UNAVAILABLE;
	case -EACCES:
		cli_error("dmlockd denied %s lock %s to this user: %s", o->mode == DMLOCK_SHARED ?
			  "shared" : "exclusive", o->name, why[0] != '\0' ? why : "permission denied");
		return DMLOCK_EXIT_NOPERM;
	default:
		break;
	}
	snprintf(doing, sizeof(doing), "acquiring lock %s", o->name);
	return cli_daemon_error(err, doing);
}

/* Block the signals we watch (the command gets *ret_old_mask back). */
static int signals_setup(struct run_state *s, sigset_t *ret_old_mask)
{
	sigset_t watched, blocked;

	sigemptyset(&watched);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
		sigaddset(&watched, forwarded_signals[i]);
	sigaddset(&watched, SIGCHLD);
	blocked = watched;
	/* A write to a dead daemon gives EPIPE, never kills us. */
	sigaddset(&blocked, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &blocked, ret_old_mask) < 0)
		return -errno;
	s->signal_fd = signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->signal_fd < 0)
		return -errno;
	return 0;
}

static void set_child_environment(const struct run_options *o, uint64_t token)
{
	char token_text[24];

	snprintf(token_text, sizeof(token_text), "%" PRIu64, token);
	setenv("DMLOCK_NAME", o->name, 1);
	setenv("DMLOCK_TOKEN", token_text, 1);
}

static const char *lost_reason(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "its lease ran out without being extended (dmlockd frozen or cut off?)";
	case -ECONNRESET:
	case -EPIPE:
		return "the connection to dmlockd broke (did dmlockd stop?)";
	case -ESHUTDOWN:
		return "dmlockd is shutting down";
	case -EIDRM:
		return "this node was removed from the cluster";
	default:
		return dmlock_strerror(err);
	}
}

static void lock_lost(struct run_state *s)
{
	const struct run_options *o = s->opts;
	const char *reason = lost_reason(dmlock_lock_error(s->lock));

	s->lost = 1;
	switch (o->on_lost) {
	case ON_LOST_TERM:
		cli_error("lost lock %s: %s; stopping %s (SIGTERM, SIGKILL after %" PRId64 ".%03" PRId64 " s)",
			  o->name, reason, o->command_argv[0], o->kill_after_ms / 1000, o->kill_after_ms % 1000);
		child_signal_group(&s->child, SIGTERM);
		child_signal_group(&s->child, SIGCONT);
		s->kill_at_ms = monotonic_ms() + o->kill_after_ms;
		if (s->kill_at_ms == 0)
			s->kill_at_ms = 1;
		break;
	case ON_LOST_KILL:
		cli_error("lost lock %s: %s; killing %s (SIGKILL)", o->name, reason, o->command_argv[0]);
		child_signal_group(&s->child, SIGKILL);
		break;
	case ON_LOST_IGNORE:
		cli_error("lost lock %s: %s; letting %s run on (--on-lost=ignore)", o->name, reason,
			  o->command_argv[0]);
		break;
	}
}

static void drain_signals(struct run_state *s)
{
	struct signalfd_siginfo info;

	while (read(s->signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
		if ((int)info.ssi_signo != SIGCHLD)
			child_signal_group(&s->child, (int)info.ssi_signo);
	}
}

static int poll_timeout(const struct run_state *s)
{
	int timeout = -1;

	if (!s->lost)
		timeout = dmlock_timeout(s->conn);
	if (s->kill_at_ms > 0) {
		int64_t left = s->kill_at_ms - monotonic_ms();

		if (left < 0)
			left = 0;
		/* --kill-after goes up to a year, poll() takes an int: past
		 * INT_MAX ms (24.8 days) it must wake early, not wrap negative
		 * (for ever) and never send the SIGKILL. */
		if (left > INT_MAX)
			left = INT_MAX;
		if (timeout < 0 || left < timeout)
			timeout = (int)left;
	}
	return timeout;
}

/* Watch the command and the lock until the command exits. */
static int supervise(struct run_state *s)
{
	while (!child_poll_exit(&s->child)) {
		struct pollfd fds[2] = {
			{ .fd = s->signal_fd, .events = POLLIN },
			{ .fd = -1 },
		};

		if (!s->lost) {
			fds[1].fd = dmlock_fd(s->conn);
			fds[1].events = dmlock_events(s->conn);
		}
		if (poll(fds, 2, poll_timeout(s)) < 0 && errno != EINTR)
			return -errno;
		drain_signals(s);
		if (!s->lost) {
			(void)dmlock_process(s->conn);
			if (dmlock_lock_check(s->lock) < 0)
				lock_lost(s);
		}
		if (s->kill_at_ms > 0 && monotonic_ms() >= s->kill_at_ms) {
			child_signal_group(&s->child, SIGKILL);
			s->kill_at_ms = 0;
		}
	}
	return 0;
}

/* The command exited: give the lock back and choose our exit status. */
static int finish(struct run_state *s)
{
	int r;

	if (!s->lost && dmlock_lock_check(s->lock) < 0) {
		s->lost = 1;
		cli_error("lost lock %s before %s finished: %s", s->opts->name, s->opts->command_argv[0],
			  lost_reason(dmlock_lock_error(s->lock)));
	}
	/* After a loss nothing of the group may run on: kill what the command
	 * left behind while the guard still pins the process group id. */
	if (s->lost && s->opts->on_lost != ON_LOST_IGNORE)
		child_signal_group(&s->child, SIGKILL);
	child_reap(&s->child);

	r = dmlock_release(s->lock);
	s->lock = NULL;
	if (r == -ENOLCK && !s->lost) {
		s->lost = 1;
		cli_error("lost lock %s just before %s finished", s->opts->name, s->opts->command_argv[0]);
	}
	if (s->lost)
		return DMLOCK_EXIT_LOCK_LOST;
	if (s->child.status_unknown) {
		cli_error("%s exited but its exit status was lost (something reaped it behind dmlock's back)",
			  s->opts->command_argv[0]);
		return DMLOCK_EXIT_SOFTWARE;
	}
	return child_exit_code(s->child.wait_status);
}

static int run_command(struct run_state *s)
{
	const struct run_options *o = s->opts;
	sigset_t child_mask;
	bool exec_failed;
	int r;

	set_child_environment(o, dmlock_lock_token(s->lock));
	r = signals_setup(s, &child_mask);
	if (r < 0) {
		cli_error("cannot set up signal handling: %s", strerror(-r));
		return DMLOCK_EXIT_OSERR;
	}
	r = child_spawn(&s->child, o->command_argv, &child_mask, &exec_failed);
	if (r < 0 && exec_failed) {
		bool searched = strchr(o->command_argv[0], '/') == NULL;

		cli_error("cannot execute %s: %s%s", o->command_argv[0], strerror(-r),
			  r == -ENOENT && searched ? " (not found in $PATH; dmlock runs the command without "
						     "a shell: use sh -c '...' for shell syntax)" : "");
		return r == -ENOENT ? DMLOCK_EXIT_NOT_FOUND : DMLOCK_EXIT_CANNOT_EXECUTE;
	}
	if (r < 0) {
		cli_error("cannot start %s: %s", o->command_argv[0], strerror(-r));
		return DMLOCK_EXIT_OSERR;
	}
	r = supervise(s);
	if (r < 0) {
		cli_error("waiting for %s failed: %s; killing it", o->command_argv[0], strerror(-r));
		child_signal_group(&s->child, SIGKILL);
		child_reap(&s->child);
		return DMLOCK_EXIT_OSERR;
	}
	return finish(s);
}

int cmd_run(int argc, char *argv[])
{
	struct run_options opts;
	struct run_state s = { .opts = &opts, .signal_fd = -1 };
	int r;

	r = run_options_parse(argc, argv, &opts);
	if (r != 0)
		return r > 0 ? DMLOCK_EXIT_OK : DMLOCK_EXIT_USAGE;

	/* An inherited SIG_IGN for SIGCHLD (some supervisors leave it) makes
	 * the kernel reap the command itself: we would never see it exit and
	 * would hold the lock for ever.  The command inherits the default too,
	 * as under flock(1). */
	signal(SIGCHLD, SIG_DFL);

	r = cli_connect(opts.socket_path, &s.conn);
	if (r != 0)
		return r;
	r = dmlock_acquire(s.conn, opts.name, opts.mode, opts.timeout_ms, &s.lock);
	if (r < 0) {
		r = acquire_failed(&opts, s.conn, r);
		goto out;
	}
	r = run_command(&s);
out:
	dmlock_release(s.lock);
	dmlock_close(s.conn);
	if (s.signal_fd >= 0)
		close(s.signal_fd);
	return r;
}
