#!/bin/bash
# 12-busy: while a holder keeps the lock (its command blocks on a fifo),
# -n exits 75 and -w exits 79 (or -E CODE) without running the command; a
# plain waiter is granted as soon as the holder releases.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ran="$TEST_DIR/ran"

start_daemon
start_holder A busy

expect_status 75 "-n on a held lock" "$DMLOCK" run -n --name busy -- touch "$ran"
expect_stderr "lock busy is busy"
expect_status 75 "--nonblock on a held lock" "$DMLOCK" run --nonblock --name busy -- touch "$ran"
expect_status 42 "-n -E 42" "$DMLOCK" run -n -E 42 --name busy -- touch "$ran"
expect_status 0 "-n -E 0" "$DMLOCK" run -n -E 0 --name busy -- touch "$ran"
expect_status 79 "-w 0.3 expires" "$DMLOCK" run -w 0.3 --name busy -- touch "$ran"
expect_stderr "still busy after waiting 0.300 s"
expect_status 79 "-w 0 expires at once" "$DMLOCK" run -w 0 --name busy -- touch "$ran"
expect_status 9 "-w with -E 9" "$DMLOCK" run -w 0.2 -E 9 --name busy -- touch "$ran"
expect_status 75 "-s -n on an exclusively held lock" "$DMLOCK" run -s -n --name busy -- touch "$ran"
[ ! -e "$ran" ] || fail "a command ran while the lock was held"
# Other names are not affected.
expect_status 0 "-n on another lock" "$DMLOCK" run -n --name other -- true
pass "busy 75, wait expired 79, -E overrides both"

# A waiter without -n is granted once the holder lets go.
"$DMLOCK" run --name busy -- touch "$ran" &
waiter=$!
track_pid $waiter
# The waiter must really be waiting: status shows it before we release.
wait_until "the waiter to queue" sh -c '"$1" status | grep -q "waiting"' sh "$DMLOCK"
[ ! -e "$ran" ] || fail "the waiter ran while the lock was held"
release_holder A
wait_status "$HOLDER_PID_A"
[ "$STATUS" -eq 0 ] || fail "holder exited $STATUS"
wait_status $waiter
[ "$STATUS" -eq 0 ] || fail "waiter exited $STATUS"
[ -e "$ran" ] || fail "the waiter's command did not run"
expect_status 0 "-n after release" "$DMLOCK" run -n --name busy -- true
pass "a waiter is granted when the holder exits"

stop_daemon
