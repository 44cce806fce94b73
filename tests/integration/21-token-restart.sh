#!/bin/bash
# 21-token-restart: fencing tokens keep increasing across restarts of the
# daemon, clean (SIGTERM) or not (SIGKILL), through the epoch floor in the
# state directory; a second daemon on the same state directory, and a floor
# file that is not a floor, are refused with a clear message.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

token()
{
	"$DMLOCK" run --name tokens -- sh -c 'echo "$DMLOCK_TOKEN"' || fail "dmlock run failed"
}

start_daemon
t1=$(token)
t2=$(token)
[ "$t2" -gt "$t1" ] || fail "tokens $t1 then $t2"
[ -f "$TEST_DIR/state/epoch-floor" ] || fail "no epoch floor in the state directory"

# A second daemon may not share the state directory (the socket differs).
expect_status 1 "second daemon on the same state directory" \
	"$DMLOCKD" -S "$TEST_DIR/other.sock" --state-dir "$TEST_DIR/state"
expect_stderr "in use by another dmlockd"
pass "a state directory serves one daemon"

stop_daemon
start_daemon
t3=$(token)
[ "$t3" -gt "$t2" ] || fail "after a clean restart: token $t3, before $t2"
kill_daemon
start_daemon
t4=$(token)
[ "$t4" -gt "$t3" ] || fail "after SIGKILL: token $t4, before $t3"
pass "tokens increase across restarts ($t1 $t2 | $t3 | $t4)"

stop_daemon
echo "not a floor" > "$TEST_DIR/state/epoch-floor"
expect_status 1 "corrupt epoch floor" \
	"$DMLOCKD" -S "$DMLOCK_SOCKET" --state-dir "$TEST_DIR/state"
expect_stderr "is not an epoch floor"
pass "a corrupt floor file is refused, not guessed"
