#!/bin/bash
# 01-usage: usage errors exit 64 with a hint, help and version exit 0,
# `dmlock name` derives the documented name.  Needs no daemon: the socket
# points nowhere, so any attempt to connect would exit 69, not 64.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

export DMLOCK_SOCKET="$TEST_DIR/no-daemon.sock"

expect_status 64 "no subcommand" "$DMLOCK"
expect_status 64 "unknown subcommand" "$DMLOCK" frobnicate
expect_stderr "unknown command 'frobnicate'"
expect_status 64 "unknown global option" "$DMLOCK" --frob
expect_status 64 "run without a command" "$DMLOCK" run
expect_stderr "no command given"
expect_status 64 "run -- without a command" "$DMLOCK" run --
expect_status 64 "-n with -w" "$DMLOCK" run -n -w 3 -- true
expect_stderr "-n and -w exclude each other"
expect_status 64 "unknown run option" "$DMLOCK" run --bogus -- true
expect_stderr "dmlock help run"
expect_status 64 "-w without a value" "$DMLOCK" run -w
expect_status 64 "-w not a number" "$DMLOCK" run -w soon -- true
expect_status 64 "-w negative" "$DMLOCK" run -w -1 -- true
expect_status 64 "-w infinite" "$DMLOCK" run -w inf -- true
expect_status 64 "-E out of range" "$DMLOCK" run -E 256 -- true
expect_status 64 "-E not a number" "$DMLOCK" run -E x -- true
expect_status 64 "bad --on-lost" "$DMLOCK" run --on-lost=maybe -- true
expect_stderr "use term, kill or ignore"
expect_status 64 "bad --kill-after" "$DMLOCK" run --kill-after=-3 -- true
expect_status 64 "lock name with a space" "$DMLOCK" run --name 'a b' -- true
expect_stderr "invalid lock name 'a b': byte 2 is a space"
expect_status 64 "empty lock name" "$DMLOCK" run --name '' -- true
expect_stderr "invalid lock name '': it is empty"
expect_status 64 "lock name of 256 bytes" "$DMLOCK" run --name "$(printf 'x%.0s' $(seq 256))" -- true
# A long name is named by its first 40 bytes, not echoed whole.
expect_stderr "invalid lock name '$(printf 'x%.0s' $(seq 40))...': it is 256 bytes long"
# A name with control characters is shown escaped: none reaches the terminal.
expect_status 64 "lock name with an escape sequence" "$DMLOCK" run --name $'red\e[31mX' -- true
expect_stderr "invalid lock name 'red\x1b[31mX': byte 4 is 0x1b"
! grep -q $'\e' "$TEST_DIR/last.err" || fail "a lock name's ESC byte reached stderr unescaped"
expect_status 64 "status with an argument" "$DMLOCK" status extra
expect_status 64 "status with a ping option" "$DMLOCK" status -c 3
expect_status 64 "ping -c 0" "$DMLOCK" ping -c 0
expect_status 64 "help for an unknown command" "$DMLOCK" help frob
expect_status 64 "name without a command" "$DMLOCK" name
pass "usage errors exit 64"

# A valid 255-byte name passes option checking: it fails later, at connecting.
expect_status 69 "lock name of 255 bytes" "$DMLOCK" run --name "$(printf 'x%.0s' $(seq 255))" -- true

expect_status 0 "--help" "$DMLOCK" --help
grep -q '^Usage: dmlock' "$TEST_DIR/last.out" || fail "--help prints no usage"
expect_status 0 "help run" "$DMLOCK" help run
grep -q -- '--on-lost' "$TEST_DIR/last.out" || fail "help run does not list --on-lost"
expect_status 0 "run --help" "$DMLOCK" run --help
grep -q -- '--kill-after' "$TEST_DIR/last.out" || fail "run --help does not list --kill-after"
expect_status 0 "--version" "$DMLOCK" --version
grep -q '^dmlock [0-9]' "$TEST_DIR/last.out" || fail "--version prints $(cat "$TEST_DIR/last.out")"
expect_status 0 "-V" "$DMLOCK" -V
grep -q '^dmlock [0-9]' "$TEST_DIR/last.out" || fail "-V prints $(cat "$TEST_DIR/last.out")"
# dmlockd names both protocols; the peer one is the transport's (an
# upgrade across a change of it is a whole-cluster restart: dmlockd(8)).
expect_status 0 "dmlockd --version" "$DMLOCKD" --version
peer=$(grep -oE 'define FRAME_PROTOCOL_VERSION[[:space:]]+[0-9]+' "$top_srcdir/dmlockd/frame.h" | grep -oE '[0-9]+$')
grep -q "^dmlockd [0-9].*(local protocol 1, peer protocol $peer)\$" "$TEST_DIR/last.out" ||
	fail "dmlockd --version prints $(cat "$TEST_DIR/last.out"), not peer protocol $peer"
pass "help and version"

# The derived name is the documented one, computable with sha256sum.
check_name()
{
	local want got

	want="cmd/$(printf '%s\0' "$@" | sha256sum | cut -c1-32)"
	got=$("$DMLOCK" name -- "$@") || fail "dmlock name -- $* failed"
	[ "$got" = "$want" ] || fail "dmlock name -- $*: got $got, want $want"
}
check_name /usr/local/bin/backup.sh
check_name sh -c 'echo "a b"; exit 3'
check_name ''
check_name "$(printf 'y%.0s' $(seq 3000))" tail
a=$("$DMLOCK" name -- echo ab)
b=$("$DMLOCK" name -- echo a b)
[ "$a" != "$b" ] || fail "'echo ab' and 'echo a b' derive the same name"
pass "derived lock names"
