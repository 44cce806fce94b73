#!/bin/bash
# 11-mutual-exclusion: many concurrent `dmlock run --name x` critical
# sections never overlap, checked on their log by a checker that is itself
# shown to catch a faked overlap.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

WORKERS=${WORKERS:-8}
ITERATIONS=${ITERATIONS:-25}
log="$TEST_DIR/critical.log"

# The checker must catch what it is there to catch.
printf 'enter 1\nexit 1\nenter 2\nexit 2\n' > "$TEST_DIR/good.log"
check_no_overlap "$TEST_DIR/good.log" 2 >/dev/null || fail "checker rejects a good log"
printf 'enter 1\nenter 2\nexit 2\nexit 1\n' > "$TEST_DIR/overlap.log"
check_no_overlap "$TEST_DIR/overlap.log" 2 >/dev/null && fail "checker misses an overlap"
printf 'enter 1\nexit 2\n' > "$TEST_DIR/crossed.log"
check_no_overlap "$TEST_DIR/crossed.log" 1 >/dev/null && fail "checker misses a crossed exit"
printf 'enter 1\nexit 1\n' > "$TEST_DIR/short.log"
check_no_overlap "$TEST_DIR/short.log" 2 >/dev/null && fail "checker misses a lost section"
pass "the overlap checker catches faked overlaps"

start_daemon

# The critical section: log entry, some work that widens the window an
# overlap would need, log exit.
critical='echo "enter $$" >> "$1"; i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; echo "exit $$" >> "$1"'

worker()
{
	local i

	for ((i = 0; i < ITERATIONS; i++)); do
		"$DMLOCK" run --name x -- sh -c "$critical" sh "$log" || exit 1
	done
}

pids=()
for ((w = 0; w < WORKERS; w++)); do
	worker &
	pids+=($!)
	track_pid $!
done
for pid in "${pids[@]}"; do
	WAIT_LIMIT=120 wait_status "$pid"
	[ "$STATUS" -eq 0 ] || fail "a worker failed (status $STATUS)"
done
check_no_overlap "$log" $((WORKERS * ITERATIONS)) || fail "critical sections overlapped"
pass "$((WORKERS * ITERATIONS)) critical sections of $WORKERS concurrent workers never overlapped"

stop_daemon
