#!/bin/bash
# 16-shared: two shared (-s) holders hold the lock together (each waits
# for the other through fifos, bounded), while an exclusive request is
# excluded; a shared request is excluded by an exclusive holder.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon
mkfifo "$TEST_DIR/a-to-b" "$TEST_DIR/b-to-a" "$TEST_DIR/a-go" "$TEST_DIR/b-go"

# Each reader greets the other and waits for the greeting back: this can
# only finish if both run at the same time.  Then both stay inside until
# told to go, so the exclusive request below meets two shared holders.
reader_a='timeout "$2" sh -c "echo a > \"$1/a-to-b\"" && timeout "$2" sh -c "read -r x < \"$1/b-to-a\"" &&
	echo met > "$1/a-met" && read -r x < "$1/a-go"'
reader_b='timeout "$2" sh -c "read -r x < \"$1/a-to-b\"" && timeout "$2" sh -c "echo b > \"$1/b-to-a\"" &&
	echo met > "$1/b-met" && read -r x < "$1/b-go"'

"$DMLOCK" run -s --name shared -- sh -c "$reader_a" sh "$TEST_DIR" "$WAIT_LIMIT" &
a=$!
track_pid $a
"$DMLOCK" run -s --name shared -- sh -c "$reader_b" sh "$TEST_DIR" "$WAIT_LIMIT" &
b=$!
track_pid $b
wait_for_file "$TEST_DIR/a-met"
wait_for_file "$TEST_DIR/b-met"
pass "two shared holders ran together"

expect_status 75 "exclusive -n while shared held" "$DMLOCK" run -n --name shared -- true
expect_status 79 "exclusive -w while shared held" "$DMLOCK" run -w 0.2 --name shared -- true
expect_status 0 "a third shared -n joins" "$DMLOCK" run -s -n --name shared -- true
pass "an exclusive request is excluded by shared holders"

timeout "$WAIT_LIMIT" sh -c 'echo go > "$1"' sh "$TEST_DIR/a-go" || fail "reader a not waiting"
timeout "$WAIT_LIMIT" sh -c 'echo go > "$1"' sh "$TEST_DIR/b-go" || fail "reader b not waiting"
wait_status $a
[ "$STATUS" -eq 0 ] || fail "reader a exited $STATUS"
wait_status $b
[ "$STATUS" -eq 0 ] || fail "reader b exited $STATUS"

start_holder W shared
expect_status 75 "shared -n while exclusive held" "$DMLOCK" run -s -n --name shared -- true
release_holder W
wait_status "$HOLDER_PID_W"
[ "$STATUS" -eq 0 ] || fail "exclusive holder exited $STATUS"
expect_status 0 "exclusive -n when free" "$DMLOCK" run -n --name shared -- true
pass "a shared request is excluded by an exclusive holder"

stop_daemon
