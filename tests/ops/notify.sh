#!/bin/bash
# tests/ops/notify.sh: dmlockd speaks the sd_notify protocol.  A listener
# (notify-listener.py) stands in for the service manager; dmlockd runs
# standalone with NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID set.  Checks:
# READY=1 with a STATUS= line, repeated WATCHDOG=1 pings, RELOADING=1 then a
# new READY=1 on SIGHUP, and STOPPING=1 followed by a clean exit on SIGTERM.
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
dmlockd=$(find_built dmlockd)

nsock=$ops_tmp/notify.sock
nlog=$ops_tmp/notify.log
python3 "$top_srcdir/tests/ops/notify-listener.py" "$nsock" "$nlog" &
track_pid $!
wait_for 10 "the notify listener socket" test -S "$nsock"

count() { grep -c -x -- "$1" "$nlog"; }
has_at_least() { [ "$(count "$1")" -ge "$2" ]; }
alive() { kill -0 "$dpid" 2>/dev/null; }

# 400 ms watchdog: the daemon must ping every 200 ms.  WATCHDOG_PID is the
# daemon's own PID (exec keeps the shell's PID).
NOTIFY_SOCKET=$nsock WATCHDOG_USEC=400000 \
	bash -c 'export WATCHDOG_PID=$$; exec "$@"' dmlockd \
	"$dmlockd" -S "$ops_tmp/dmlockd.sock" --state-dir "$ops_tmp/state" 2>"$ops_tmp/dmlockd.log" &
dpid=$!
track_pid $dpid

wait_for 10 "READY=1" has_at_least READY=1 1
grep -q '^STATUS=.' "$nlog" || fail "no STATUS= line sent: $(cat "$nlog")"
# Two pings after READY=1 show the loop pings periodically, not just once.
ready_line=$(grep -n -x READY=1 "$nlog" | head -n 1 | cut -d: -f1)
pings_after_ready() { [ "$(tail -n "+$ready_line" "$nlog" | grep -c -x WATCHDOG=1)" -ge 2 ]; }
wait_for 10 "two WATCHDOG=1 pings after READY=1" pings_after_ready
alive || fail "dmlockd exited early: $(cat "$ops_tmp/dmlockd.log")"

# Reload: RELOADING=1, then READY=1 again.
kill -HUP "$dpid"
wait_for 10 "RELOADING=1 after SIGHUP" has_at_least RELOADING=1 1
reload_line=$(grep -n -x RELOADING=1 "$nlog" | head -n 1 | cut -d: -f1)
ready_after_reload() { tail -n "+$reload_line" "$nlog" | grep -q -x READY=1; }
wait_for 10 "READY=1 after RELOADING=1" ready_after_reload
alive || fail "dmlockd died on SIGHUP: $(cat "$ops_tmp/dmlockd.log")"

# Graceful stop: STOPPING=1 and exit status 0.
kill -TERM "$dpid"
wait_for 10 "STOPPING=1 after SIGTERM" has_at_least STOPPING=1 1
exited() { ! alive; }
wait_for 30 "dmlockd to exit after SIGTERM" exited
wait "$dpid"
rc=$?
[ "$rc" = 0 ] || fail "dmlockd exited with $rc after SIGTERM: $(cat "$ops_tmp/dmlockd.log")"
note "notifications: $(grep -v -x -- -- "$nlog" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
exit 0
