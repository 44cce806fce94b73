#!/bin/bash
# 14-signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to `dmlock run` reach
# the command's whole process group, grandchildren included, and dmlock
# exits with the command's status.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# Background jobs of a script start with SIGINT and SIGQUIT ignored, and an
# ignored signal cannot be forwarded: start dmlock with default handling.
if env --default-signal=INT true 2>/dev/null; then
	DEFAULT_SIGNALS=(env --default-signal=INT,QUIT,TERM,HUP)
	SIGNALS="INT TERM HUP QUIT"
else
	echo "# env --default-signal missing: SIGINT and SIGQUIT not tested"
	DEFAULT_SIGNALS=()
	SIGNALS="TERM HUP"
fi

start_daemon
mkfifo "$TEST_DIR/never"

# The command is a shell that traps SIGTERM and waits for a grandchild
# blocked on a fifo nobody writes.  SIGTERM to dmlock must reach both: the
# grandchild dies of it (143) and the shell's trap runs.
"$DMLOCK" run --name sig -- sh -c '
	trap "echo child-got-TERM >> \"$1/events\"" TERM
	sh -c "echo \$\$ > \"$1/pids/grandchild\"; exec cat \"$1/never\""
	echo "grandchild-status $?" >> "$1/events"
	exit 5' sh "$TEST_DIR" &
runner=$!
track_pid $runner
read_pid "$TEST_DIR/pids/grandchild"
grandchild=$PID
# Wait until the grandchild is really blocked in cat (not between fork and exec).
wait_until "the grandchild to exec cat" sh -c 'grep -q "^cat" "/proc/$1/comm"' sh "$grandchild"

kill -TERM $runner
wait_status $runner
[ "$STATUS" -eq 5 ] || fail "dmlock exited $STATUS, expected the command's 5"
grep -q '^grandchild-status 143$' "$TEST_DIR/events" || fail "grandchild was not killed by SIGTERM: $(cat "$TEST_DIR/events")"
grep -q '^child-got-TERM$' "$TEST_DIR/events" || fail "the command did not get SIGTERM: $(cat "$TEST_DIR/events")"
wait_for_exit "$grandchild"
pass "SIGTERM reached the command and its grandchild"

# Each forwarded signal kills a plain command; dmlock exits 128+N.
for sig in $SIGNALS; do
	rm -f "$TEST_DIR/pids/child"
	"${DEFAULT_SIGNALS[@]}" "$DMLOCK" run --name "sig-$sig" -- \
		sh -c 'echo $$ > "$1/pids/child"; exec cat "$1/never"' sh "$TEST_DIR" &
	runner=$!
	track_pid $runner
	read_pid "$TEST_DIR/pids/child"
	child=$PID
	wait_until "the command to exec cat" sh -c 'grep -q "^cat" "/proc/$1/comm"' sh "$child"
	kill -"$sig" $runner
	wait_status $runner
	want=$((128 + $(kill -l "$sig")))
	[ "$STATUS" -eq "$want" ] || fail "SIG$sig: dmlock exited $STATUS, expected $want"
	expect_status 0 "lock sig-$sig free again" "$DMLOCK" run -n --name "sig-$sig" -- true
done
pass "SIGINT, SIGTERM, SIGHUP, SIGQUIT forwarded (exit 128+N)"

stop_daemon
