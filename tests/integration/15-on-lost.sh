#!/bin/bash
# 15-on-lost: when dmlockd is SIGKILLed under a running command, dmlock
# sees the lock lost and acts as --on-lost says: term (SIGTERM to the
# group, SIGKILL after --kill-after), kill, or ignore; it always exits 80.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

mkfifo "$TEST_DIR/never"

# A command that records SIGTERM and then exits 0; it waits (interruptibly)
# on a background cat blocked on a fifo nobody writes.
polite='trap "echo got-TERM > \"$1/term-$2\"; exit 0" TERM
	echo $$ > "$1/pids/$2"
	cat "$1/never" &
	wait'
# A command that survives SIGTERM: only SIGKILL ends it.
stubborn='trap "echo got-TERM > \"$1/term-$2\"" TERM
	echo $$ > "$1/pids/$2"
	while :; do cat "$1/never" & wait; done'

# run_until_lost TAG SCRIPT OPTIONS...: start dmlock run with SCRIPT, kill
# the daemon once the command runs; leaves the runner's PID in RUNNER.
run_until_lost()
{
	local tag=$1 script=$2

	shift 2
	start_daemon
	"$DMLOCK" run --name lost "$@" -- sh -c "$script" sh "$TEST_DIR" "$tag" 2>"$TEST_DIR/$tag.err" &
	RUNNER=$!
	track_pid $RUNNER
	read_pid "$TEST_DIR/pids/$tag"
	CHILD=$PID
	kill_daemon
}

# term (the default): SIGTERM, the command exits, dmlock exits 80.
run_until_lost term "$polite"
wait_status $RUNNER
[ "$STATUS" -eq 80 ] || fail "term: dmlock exited $STATUS, expected 80"
[ -e "$TEST_DIR/term-term" ] || fail "term: the command did not get SIGTERM"
grep -q "lost lock lost" "$TEST_DIR/term.err" || fail "term: no message: $(cat "$TEST_DIR/term.err")"
wait_for_exit "$CHILD"
pass "--on-lost=term (default): SIGTERM, exit 80"

# term with a command that ignores SIGTERM: SIGKILL after --kill-after.
run_until_lost stubborn "$stubborn" --on-lost=term --kill-after 0.2
wait_status $RUNNER
[ "$STATUS" -eq 80 ] || fail "stubborn: dmlock exited $STATUS, expected 80"
[ -e "$TEST_DIR/term-stubborn" ] || fail "stubborn: the command did not get SIGTERM first"
wait_for_exit "$CHILD"
pass "--kill-after: SIGKILL follows SIGTERM"

# kill: SIGKILL at once, so the SIGTERM trap never runs.
run_until_lost kill "$polite" --on-lost=kill
wait_status $RUNNER
[ "$STATUS" -eq 80 ] || fail "kill: dmlock exited $STATUS, expected 80"
[ ! -e "$TEST_DIR/term-kill" ] || fail "kill: the command got SIGTERM instead of SIGKILL"
wait_for_exit "$CHILD"
pass "--on-lost=kill: SIGKILL, exit 80"

# ignore: the command runs on; dmlock exits 80 once it finishes.
mkfifo "$TEST_DIR/go"
run_until_lost ignore 'echo $$ > "$1/pids/$2"; read -r x < "$1/go"; echo finished > "$1/finished"' \
	--on-lost=ignore
wait_until "dmlock to report the loss" grep -q "lost lock lost" "$TEST_DIR/ignore.err"
pid_alive "$CHILD" || fail "ignore: the command was stopped"
pid_alive "$RUNNER" || fail "ignore: dmlock exited before its command"
timeout "$WAIT_LIMIT" sh -c 'echo go > "$1"' sh "$TEST_DIR/go" || fail "ignore: command not reading"
wait_status $RUNNER
[ "$STATUS" -eq 80 ] || fail "ignore: dmlock exited $STATUS, expected 80"
[ -e "$TEST_DIR/finished" ] || fail "ignore: the command did not finish"
pass "--on-lost=ignore: the command runs on, exit 80"

# The grant's deadline passes without an extension (a frozen daemon): the
# library declares the lock lost by itself.  A one-node dmlockd sends no
# deadline, so a stand-in daemon grants with a deadline 300 ms ahead and
# then never extends it, keeping the connection open.
if command -v socat >/dev/null; then
	cat > "$TEST_DIR/frozen.sh" <<'FROZEN'
echo "DMLOCK 1 frozen test"
read -r verb id rest
uptime=$(cut -d' ' -f1 /proc/uptime)	# CLOCK_BOOTTIME, 10 ms steps
now_ms=$(( ${uptime%.*} * 1000 + 10#${uptime#*.} * 10 ))
echo "GRANTED $id 1 $((now_ms + 300))"
exec cat >/dev/null
FROZEN
	socat UNIX-LISTEN:"$TEST_DIR/frozen.sock",fork EXEC:"bash $TEST_DIR/frozen.sh" 2>/dev/null &
	track_pid $!
	wait_for_file "$TEST_DIR/frozen.sock"
	"$DMLOCK" run -S "$TEST_DIR/frozen.sock" --name lost -- sh -c "$polite" sh "$TEST_DIR" frozen \
		2>"$TEST_DIR/frozen.err" &
	RUNNER=$!
	track_pid $RUNNER
	read_pid "$TEST_DIR/pids/frozen"
	CHILD=$PID
	wait_status $RUNNER
	[ "$STATUS" -eq 80 ] || fail "frozen: dmlock exited $STATUS, expected 80 ($(cat "$TEST_DIR/frozen.err"))"
	[ -e "$TEST_DIR/term-frozen" ] || fail "frozen: the command did not get SIGTERM"
	grep -q "lease ran out" "$TEST_DIR/frozen.err" || fail "frozen: no message: $(cat "$TEST_DIR/frozen.err")"
	wait_for_exit "$CHILD"
	pass "a grant deadline that passes without extension: lost, SIGTERM, exit 80"
else
	echo "# socat not installed: deadline expiry not tested"
fi
