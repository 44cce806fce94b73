#!/bin/bash
# 26-daemon-refusals: stand-in daemons (socat) that do not serve: one at
# its client limit (ERROR - too-many-clients instead of the greeting), one
# that never answers, one that takes a grant back at once.  dmlock says
# what happened and exits 69 (EX_UNAVAILABLE); the command never runs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v socat >/dev/null || { echo "# socat not installed: SKIP"; exit 77; }

ran="$TEST_DIR/ran"

# serve NAME SCRIPT: a stand-in daemon on $TEST_DIR/NAME.sock running the
# bash SCRIPT for every connection.
serve()
{
	printf '%s\n' "$2" > "$TEST_DIR/$1.sh"
	socat UNIX-LISTEN:"$TEST_DIR/$1.sock",fork EXEC:"bash $TEST_DIR/$1.sh" 2>/dev/null &
	track_pid $!
	wait_for_file "$TEST_DIR/$1.sock"
}

# A daemon at its limit of clients (1024) refuses the connection.
serve full 'echo "ERROR - too-many-clients too many clients, try later"'
expect_status 69 "daemon at its client limit" "$DMLOCK" run -S "$TEST_DIR/full.sock" -- touch "$ran"
expect_stderr "dmlockd at $TEST_DIR/full.sock has too many clients; try again later"
expect_status 69 "status, daemon at its client limit" "$DMLOCK" status -S "$TEST_DIR/full.sock"
expect_stderr "has too many clients"
[ ! -e "$ran" ] || fail "the command ran without the lock"
pass "a daemon with too many clients: exit 69, 'too many clients; try again later'"

# A daemon that greets and then never answers: not a busy lock (79, or
# the -E code, so -E 0 would pass a frozen daemon off as success) but a
# daemon that cannot serve: 69, after the wait plus the library's 10 s.
serve silent 'echo "DMLOCK 1 silent ricart-agrawala"; exec cat >/dev/null'
expect_status 69 "a silent daemon, -w 0.1 -E 0" "$DMLOCK" run -S "$TEST_DIR/silent.sock" -w 0.1 -E 0 -- touch "$ran"
expect_stderr "dmlockd did not answer in time"
[ ! -e "$ran" ] || fail "the command ran without the lock"
pass "a daemon that never answers: exit 69 whatever -E says"

# A grant that is lost again at once (its deadline had already passed when
# it came): 69, not "still busy" and 79.  (A LOST right behind the GRANTED
# is tested in check_libdmlock, where both come in one write.)
serve lostatonce 'echo "DMLOCK 1 lost ricart-agrawala"
read -r verb id rest
uptime=$(cut -d" " -f1 /proc/uptime)	# CLOCK_BOOTTIME, 10 ms steps
now_ms=$(( ${uptime%.*} * 1000 + 10#${uptime#*.} * 10 ))
echo "GRANTED $id 7 $((now_ms - 1000))"
exec cat >/dev/null'
expect_status 69 "a grant lost at once, -w 5" "$DMLOCK" run -S "$TEST_DIR/lostatonce.sock" -w 5 -- touch "$ran"
expect_stderr "was granted but lost again at once: its lease had already run out"
[ ! -e "$ran" ] || fail "the command ran without the lock"
pass "a grant lost at once: exit 69"
