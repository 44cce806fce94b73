#!/bin/bash
# 03-unreachable: no daemon gives 69 and a message that says where dmlock
# looked and what to do; a socket that is not dmlockd gives 76; a socket
# this user may not open gives 77.  The command never runs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ran="$TEST_DIR/ran"

expect_status 69 "no socket" "$DMLOCK" run -S "$TEST_DIR/none.sock" -- touch "$ran"
expect_stderr "cannot reach dmlockd at $TEST_DIR/none.sock"
expect_stderr "is dmlockd running?"
[ ! -e "$ran" ] || fail "the command ran without the lock"

DMLOCK_SOCKET="$TEST_DIR/env.sock" expect_status 69 "DMLOCK_SOCKET honoured" "$DMLOCK" run -- touch "$ran"
expect_stderr "cannot reach dmlockd at $TEST_DIR/env.sock"

: > "$TEST_DIR/plain-file"
expect_status 69 "a plain file" "$DMLOCK" run -S "$TEST_DIR/plain-file" -- touch "$ran"
expect_status 69 "status without daemon" "$DMLOCK" status -S "$TEST_DIR/none.sock"
expect_status 69 "ping without daemon" "$DMLOCK" ping -S "$TEST_DIR/none.sock"
[ ! -e "$ran" ] || fail "the command ran without the lock"
pass "daemon unreachable exits 69 with a clear message"

# A listener that is not dmlockd: wrong greeting.
if command -v socat >/dev/null; then
	socat UNIX-LISTEN:"$TEST_DIR/other.sock",fork SYSTEM:'echo SSH-2.0-OpenSSH; cat >/dev/null' \
		2>/dev/null &
	track_pid $!
	wait_for_file "$TEST_DIR/other.sock"
	expect_status 76 "not a dmlockd" "$DMLOCK" run -S "$TEST_DIR/other.sock" -- touch "$ran"
	expect_stderr "does not speak dmlock protocol"
	[ ! -e "$ran" ] || fail "the command ran without the lock"
	pass "a socket that is not dmlockd exits 76"
else
	echo "# socat not installed: protocol mismatch not tested"
fi

# Permission denied on the socket: as root, test as an unprivileged user.
if command -v socat >/dev/null; then
	socat UNIX-LISTEN:"$TEST_DIR/private.sock",fork,mode=0600 SYSTEM:'echo DMLOCK 1 n a' 2>/dev/null &
	track_pid $!
	wait_for_file "$TEST_DIR/private.sock"
	if [ "$(id -u)" -ne 0 ]; then
		expect_status 77 "socket without permission" "$DMLOCK" run -S "$TEST_DIR/private.sock" -- true
		expect_stderr "dmlock group"
		pass "permission denied exits 77"
	elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$DMLOCK"; then
		chmod 0755 "$TEST_DIR"
		expect_status 77 "socket without permission" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$DMLOCK" run -S "$TEST_DIR/private.sock" -- true
		expect_stderr "dmlock group"
		pass "permission denied exits 77"
	else
		echo "# cannot drop privileges here: permission denied not tested"
	fi
fi
