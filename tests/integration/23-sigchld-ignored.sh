#!/bin/bash
# 23-sigchld-ignored: `dmlock run` started with SIGCHLD ignored (inherited
# SIG_IGN, as some supervisors leave it) still sees its command exit: it
# resets SIGCHLD to the default first, so the kernel does not reap the
# command behind its back.  It exits with the command's status in bounded
# time and releases the lock.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v perl >/dev/null || { echo "# perl not installed: SKIP"; exit 77; }
# exec keeps an ignored disposition, so dmlock starts with SIGCHLD ignored.
IGNORE_SIGCHLD=(perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die "exec: $!\n"')
# Make sure the wrapper does what it says.
"${IGNORE_SIGCHLD[@]}" grep -q '^SigIgn:.*[13579bdf]....$' /proc/self/status ||
	fail "perl did not leave SIGCHLD ignored"

start_daemon

expect_status 0 "true with SIGCHLD ignored" "${IGNORE_SIGCHLD[@]}" "$DMLOCK" run --name ign -- true
expect_status 3 "exit 3 with SIGCHLD ignored" "${IGNORE_SIGCHLD[@]}" "$DMLOCK" run --name ign -- sh -c 'exit 3'
expect_status 0 "lock ign free again" "$DMLOCK" run -n --name ign -- true
pass "dmlock run with SIGCHLD ignored exits with the command's status"

stop_daemon
