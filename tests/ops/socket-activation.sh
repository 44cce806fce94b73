#!/bin/bash
# tests/ops/socket-activation.sh: dmlockd under systemd-socket-activate
# (the stand-in for dmlockd.socket) serves locks on the socket it was passed:
# `dmlock run` works through it, twice, and the socket file is never
# replaced (same inode), so the daemon did not bind a socket of its own.
. "$top_srcdir/tests/ops/lib.sh"

need_tool systemd-socket-activate systemd
dmlockd=$(find_built dmlockd)
dmlock=$(find_built dmlock)

sock=$ops_tmp/dmlockd.sock
systemd-socket-activate -l "$sock" --fdname=local -- \
	"$dmlockd" -S "$sock" --state-dir "$ops_tmp/state" 2>"$ops_tmp/dmlockd.log" &
apid=$!
track_pid $apid
wait_for 10 "the activation socket" test -S "$sock"
inode=$(stat -c %i "$sock")

out=$(DMLOCK_SOCKET=$sock timeout 20 "$dmlock" run --name ops/activation -- echo activated 2>&1) ||
	fail "dmlock run through the activated socket failed: $out; daemon log: $(cat "$ops_tmp/dmlockd.log")"
[ "$out" = activated ] || fail "unexpected output from dmlock run: $out"
out=$(DMLOCK_SOCKET=$sock timeout 20 "$dmlock" run --name ops/activation -- sh -c 'echo "$DMLOCK_TOKEN"' 2>&1) ||
	fail "second dmlock run failed: $out"
[ -n "$out" ] || fail "no fencing token exported on the second run"
[ "$(stat -c %i "$sock")" = "$inode" ] || fail "the socket file was replaced: dmlockd bound its own socket"

kill -TERM "$apid"
exited() { ! kill -0 "$apid" 2>/dev/null; }
wait_for 30 "dmlockd to exit after SIGTERM" exited
wait "$apid"
rc=$?
[ "$rc" = 0 ] || fail "dmlockd exited with $rc: $(cat "$ops_tmp/dmlockd.log")"
exit 0
