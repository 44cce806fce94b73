#!/bin/bash
# 10-run-basic: dmlock run passes the command's exit status through
# exactly, sets DMLOCK_NAME and DMLOCK_TOKEN (strictly increasing), does not
# leak the daemon connection into the command, and reports exec failures.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon

expect_status 0 "true" "$DMLOCK" run -- true
expect_status 1 "false" "$DMLOCK" run -- false
expect_status 3 "exit 3" "$DMLOCK" run -- sh -c 'exit 3'
expect_status 255 "exit 255" "$DMLOCK" run --name basic -- sh -c 'exit 255'
expect_status 143 "killed by SIGTERM" "$DMLOCK" run -- sh -c 'kill -TERM $$'
expect_status 137 "killed by SIGKILL" "$DMLOCK" run -- sh -c 'kill -KILL $$'
expect_status 129 "killed by SIGHUP" "$DMLOCK" run -- sh -c 'kill -HUP $$'
pass "exit status passthrough (0, 1, 3, 255, 128+signal)"

out=$("$DMLOCK" run -- echo hello) || fail "echo under dmlock failed"
[ "$out" = hello ] || fail "output '$out', expected hello"
echo input | "$DMLOCK" run -- cat > "$TEST_DIR/cat.out" || fail "cat under dmlock failed"
[ "$(cat "$TEST_DIR/cat.out")" = input ] || fail "stdin was not passed to the command"
pass "stdin and stdout reach the command"

# The command is executed directly, not through a shell.
expect_status 0 "argument with shell syntax" "$DMLOCK" run -- test 'a;b' = 'a;b'
pass "no shell between dmlock and the command"

# DMLOCK_NAME: the --name, or the derived name.
name=$("$DMLOCK" run --name team/job-1 -- sh -c 'echo "$DMLOCK_NAME"')
[ "$name" = team/job-1 ] || fail "DMLOCK_NAME is '$name', expected team/job-1"
derived=$("$DMLOCK" name -- sh -c 'echo "$DMLOCK_NAME"')
name=$("$DMLOCK" run -- sh -c 'echo "$DMLOCK_NAME"')
[ "$name" = "$derived" ] || fail "DMLOCK_NAME is '$name', expected the derived $derived"
pass "DMLOCK_NAME"

# DMLOCK_TOKEN: a positive decimal that strictly increases per grant.
prev=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	token=$("$DMLOCK" run --name tokens -- sh -c 'echo "$DMLOCK_TOKEN"') || fail "run $i failed"
	case $token in '' | *[!0-9]*) fail "DMLOCK_TOKEN is '$token'" ;; esac
	[ "$token" -gt "$prev" ] || fail "token $token after $prev does not increase"
	prev=$token
done
# Also for a derived name.
t1=$("$DMLOCK" run -- sh -c 'echo "$DMLOCK_TOKEN"')
t2=$("$DMLOCK" run -- sh -c 'echo "$DMLOCK_TOKEN"')
[ "$t2" -gt "$t1" ] || fail "derived-name token $t2 after $t1 does not increase"
pass "DMLOCK_TOKEN strictly increasing"

# The command does not inherit the daemon connection (close-on-exec): it
# has no more sockets than the same command started without dmlock.
count_sockets='n=0; for f in /proc/self/fd/*; do case $(readlink "$f") in socket:*) n=$((n+1));; esac; done; echo $n'
plain=$(sh -c "$count_sockets")
under=$("$DMLOCK" run -- sh -c "$count_sockets")
[ "$under" = "$plain" ] || fail "the command has $under sockets under dmlock, $plain without"
pass "daemon connection is close-on-exec"

expect_status 127 "command not found" "$DMLOCK" run -- dmlock-no-such-command-here
expect_stderr "cannot execute dmlock-no-such-command-here"
expect_stderr "not found in \$PATH"
printf 'not a program\n' > "$TEST_DIR/not-executable"
chmod 0644 "$TEST_DIR/not-executable"
if [ "$(id -u)" -ne 0 ] || [ ! -x "$TEST_DIR/not-executable" ]; then
	expect_status 126 "not executable" "$DMLOCK" run -- "$TEST_DIR/not-executable"
	expect_stderr "Permission denied"
fi
# A failed exec releases the lock at once.
expect_status 0 "lock free after a failed exec" "$DMLOCK" run -n --name execfail -- true
expect_status 127 "failed exec under a name" "$DMLOCK" run --name execfail -- /nonexistent/cmd
expect_status 0 "lock free after a failed exec" "$DMLOCK" run -n --name execfail -- true
pass "exec failures exit 127/126 and release the lock"

expect_status 0 "ping" "$DMLOCK" ping -c 2
grep -q 'pong from dmlockd' "$TEST_DIR/last.out" || fail "ping printed: $(cat "$TEST_DIR/last.out")"
pass "ping"

stop_daemon
