#!/bin/bash
# 24-kill-holder-group: kill -9 of `dmlock run` kills the command's whole
# process group, not only its first process: a grandchild the command
# started (rsync inside backup.sh) must not run on without the lock.  A
# guard process leads the group and kills it when dmlock dies.  When the
# command ends normally, what it left in the background runs on and the
# guard is gone.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon

# comm of a process, or nothing once it is gone.
comm_of()
{
	cat "/proc/$1/comm" 2>/dev/null
}

"$DMLOCK" run --name group -- sh -c \
	'echo $$ > "$1/pids/child"; sleep 300 & echo $! > "$1/pids/grandchild"; wait' sh "$TEST_DIR" &
runner=$!
track_pid $runner
read_pid "$TEST_DIR/pids/child"
child=$PID
read_pid "$TEST_DIR/pids/grandchild"
grandchild=$PID
wait_until "the grandchild to exec sleep" sh -c '[ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]' sh "$grandchild"
expect_status 75 "the lock is held while the command runs" "$DMLOCK" run -n --name group -- true

kill -KILL $runner
wait_status $runner
[ "$STATUS" -eq 137 ] || fail "dmlock exited $STATUS after SIGKILL"
wait_for_exit "$child"
pass "the command died with dmlock"
wait_for_exit "$grandchild"
pass "the command's grandchild died with dmlock (the guard killed the group)"
wait_until "the lock to be free" "$DMLOCK" run -n --name group -- true

# Normal end: a background process the command left behind runs on (as
# before the guard), and the guard itself is gone.
expect_status 0 "command leaving a background process" "$DMLOCK" run --name group -- sh -c \
	'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1/pids/left"' sh "$TEST_DIR"
read_pid "$TEST_DIR/pids/left"
left=$PID
[ "$(comm_of "$left")" = sleep ] || fail "the background process of a finished command was killed"
read -r -a stat < "/proc/$left/stat"
pgid=${stat[4]}
[ "$pgid" != "$left" ] || fail "the background process leads its own group ($pgid)"
! pid_alive "$pgid" || [ "$(comm_of "$pgid")" != dmlock-guard ] ||
	fail "the guard $pgid outlived dmlock"
pass "after a normal end the background process runs on and the guard is gone"
kill -KILL "$left"

stop_daemon
