#!/bin/bash
# 13-kill-holder: kill -9 of a `dmlock run` holder releases its lock at
# once (a waiter is granted) and kills its command too (PR_SET_PDEATHSIG).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon
start_holder A victim
read_pid "$TEST_DIR/pids/A.child"
child=$PID
pid_alive "$child" || fail "holder's command is not running"

"$DMLOCK" run --name victim -- sh -c 'echo "$DMLOCK_TOKEN" > "$1"' sh "$TEST_DIR/granted" &
waiter=$!
track_pid $waiter
wait_until "the waiter to queue" sh -c '"$1" status | grep -q "waiting"' sh "$DMLOCK"
[ ! -e "$TEST_DIR/granted" ] || fail "the waiter was granted while the holder lived"

kill -KILL "$HOLDER_PID_A"
wait_for_file "$TEST_DIR/granted"
wait_status $waiter
[ "$STATUS" -eq 0 ] || fail "waiter exited $STATUS"
pass "killing the holder with SIGKILL released the lock to the waiter"

wait_for_exit "$child"
[ ! -e "$TEST_DIR/A.done" ] || fail "the holder's command ran on"
pass "the killed holder's command died with it"

stop_daemon
