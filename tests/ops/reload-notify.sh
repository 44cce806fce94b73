#!/bin/bash
# tests/ops/reload-notify.sh: SIGHUP tells systemd RELOADING=1/READY=1 only
# when the node is ready and not leaving, and names every setting it did
# not apply.  A listener (notify-listener.py) stands in for the service
# manager.  Checks:
#  - a node still joining (its sponsor is not there) sends neither
#    RELOADING=1 nor READY=1 on SIGHUP (READY=1 would start the units
#    ordered after dmlockd before it can serve), and logs each changed
#    setting that needs a restart (a listen address, the heartbeat, the
#    socket mode: the counts of listen addresses and peers stay the same);
#  - a leaving node (SIGTERM sent, its peer absent, so the leave waits)
#    sends no READY=1 after STOPPING=1 on SIGHUP.
# (tests/ops/notify.sh checks RELOADING=1 then READY=1 on a ready node.)
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
need_tool openssl openssl
dmlockd=$(find_built dmlockd)

nsock=$ops_tmp/notify.sock
nlog=$ops_tmp/notify.log
python3 "$top_srcdir/tests/ops/notify-listener.py" "$nsock" "$nlog" &
track_pid $!
wait_for 10 "the notify listener socket" test -S "$nsock"

"$top_srcdir/tools/mkcerts" -d "$ops_tmp/certs" a b j >/dev/null || fail "tools/mkcerts failed"
# Four ports on 127.0.0.1 free just now; nothing will listen on the sponsor's
# or on b's, so the joiner never joins and a's leave never completes.
read -r p_a p_b p_j p_j2 < <(python3 "$top_srcdir/tests/cluster/free-ports.py" 4)
[ -n "$p_j2" ] || fail "could not pick ports"

# write_conf NAME LISTEN-PORT ROSTER-LINE HEARTBEAT SOCKET-MODE
write_conf() {
	cat >"$ops_tmp/$1.conf" <<CONF
[node]
name = $1
listen = 127.0.0.1:$2
state_directory = $ops_tmp/state-$1
[cluster]
$3
lease = 1s
heartbeat = $4
request_timeout = 1500ms
probe_timeout = 1s
restart_interval = 1s
[tls]
ca = $ops_tmp/certs/ca.crt
cert = $ops_tmp/certs/$1.crt
key = $ops_tmp/certs/$1.key
[transport]
reconnect_min = 50ms
reconnect_max = 500ms
[local]
socket = $ops_tmp/$1.sock
socket_mode = $5
CONF
}

start() {
	NOTIFY_SOCKET=$nsock "$dmlockd" -c "$ops_tmp/$1.conf" 2>"$ops_tmp/$1.log" &
	dpid=$!
	track_pid $dpid
}
in_log() { grep -q -- "$2" "$ops_tmp/$1.log"; }
count_log() { grep -c -- "$2" "$ops_tmp/$1.log"; }
alive() { kill -0 "$dpid" 2>/dev/null; }
stop() {
	kill -KILL "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
}

# --- a joining node: no RELOADING=1, no READY=1 ---------------------------
write_conf j "$p_j" "sponsor = a@127.0.0.1:$p_a" 200ms 0600
start j
wait_for 10 "the joining node to listen" in_log j "listening on"
in_log j "ready:" && fail "the joiner is ready without its sponsor: $(cat "$ops_tmp/j.log")"
write_conf j "$p_j2" "sponsor = a@127.0.0.1:$p_a" 300ms 0660
kill -HUP "$dpid"
# Each changed setting has its own line; the summary comes last.
wait_for 10 "the reload to finish" in_log j "3 setting(s) not reloaded"
for key in node.listen cluster.heartbeat local.socket_mode; do
	in_log j "$key changed: not reloaded: needs a restart" ||
		fail "no 'needs a restart' line for $key: $(cat "$ops_tmp/j.log")"
done
[ "$(count_log j 'not reloaded: needs a restart')" = 3 ] ||
	fail "other settings reported as changed: $(cat "$ops_tmp/j.log")"
alive || fail "the joiner died on SIGHUP: $(cat "$ops_tmp/j.log")"
in_log j "ready:" && fail "the joiner became ready: $(cat "$ops_tmp/j.log")"
grep -q -x 'READY=1' "$nlog" && fail "READY=1 sent by a joining node on SIGHUP: $(cat "$nlog")"
grep -q -x 'RELOADING=1' "$nlog" && fail "RELOADING=1 sent by a joining node: $(cat "$nlog")"
stop
note "joining node: SIGHUP sent nothing to systemd and named the 3 settings"

# --- a leaving node: nothing after STOPPING=1 -------------------------------
: >"$nlog"
write_conf a "$p_a" "peers = a@127.0.0.1:$p_a, b@127.0.0.1:$p_b" 200ms 0600
start a
ready_sent() { grep -q -x 'READY=1' "$nlog"; }
wait_for 10 "READY=1 from a" ready_sent
kill -TERM "$dpid"
stopping_sent() { grep -q -x 'STOPPING=1' "$nlog"; }
wait_for 10 "STOPPING=1 after SIGTERM" stopping_sent
write_conf a "$p_a" "peers = a@127.0.0.1:$p_a, b@127.0.0.1:$p_b" 300ms 0600
kill -HUP "$dpid"
wait_for 10 "the reload while leaving" in_log a "1 setting(s) not reloaded"
in_log a "cluster.heartbeat changed: not reloaded" || fail "heartbeat change not logged"
stop_line=$(grep -n -x STOPPING=1 "$nlog" | head -n 1 | cut -d: -f1)
tail -n "+$stop_line" "$nlog" | grep -q -x -e READY=1 -e RELOADING=1 &&
	fail "RELOADING=1/READY=1 after STOPPING=1: $(cat "$nlog")"
in_log a "left the cluster" && fail "the leave finished before the test could reload"
stop
note "leaving node: SIGHUP after STOPPING=1 sent no READY=1"
exit 0
