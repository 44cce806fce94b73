#!/bin/bash
# tests/ops/fd-exhaustion.sh: dmlockd out of file descriptors.  A daemon
# started with a small RLIMIT_NOFILE (soft = hard, so it cannot raise it)
# warns at start that the limit is below what its limits need; then more
# clients connect than it has descriptors for.  accept(2) fails with
# EMFILE: the listener must pause (not spin on the error, once logged per
# burst), the daemon must stay up, and once the clients go away it must
# accept and serve again.  Both the local socket and a peer listener.  And
# a soft limit below the hard one is raised to it at start.
# (Before: the local listener logged every one of tens of thousands of
# failed accepts a second; the peer listener had no error callback at all.)
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
need_tool openssl openssl
dmlockd=$(find_built dmlockd)
clients=$top_srcdir/tests/ops/fd-clients.py
LIMIT=40

alive() { kill -0 "$dpid" 2>/dev/null; }
in_log() { grep -q -- "$1" "$dlog" 2>/dev/null; }
count_log() { grep -c -- "$1" "$dlog"; }
greets() { python3 "$clients" greet "$sock" >/dev/null; }
stop() {
	kill -KILL "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
}

# start_limited LOG ARGS...: dmlockd with soft = hard = $LIMIT descriptors.
start_limited() {
	dlog=$1
	shift
	( ulimit -n "$LIMIT" && exec "$dmlockd" "$@" ) 2>"$dlog" &
	dpid=$!
	track_pid $dpid
	wait_for 10 "dmlockd to listen" in_log "listening on"
	in_log "the open-file limit is $LIMIT (hard $LIMIT), below the" ||
		fail "no warning about the open-file limit: $(cat "$dlog")"
}

# exhaust KIND TARGET N: hold N connections open (in the background) until
# $ops_tmp/release-N exists.
exhaust() {
	python3 "$clients" "$1" "$2" "$3" "$ops_tmp/release-$3" >"$ops_tmp/clients-$3.out" &
	cpid=$!
	track_pid $cpid
}
release() {
	touch "$ops_tmp/release-$1"
	wait "$cpid" || fail "the client holder failed"
}

# --- a soft limit below the hard one is raised at start ---------------------
hard=$(ulimit -H -n)
if [ "$hard" != unlimited ] && [ "$hard" -gt 2000 ]; then
	dlog=$ops_tmp/raise.log
	( ulimit -S -n "$LIMIT" && exec "$dmlockd" -S "$ops_tmp/raise.sock" \
		--state-dir "$ops_tmp/state-raise" --log-level info ) 2>"$dlog" &
	dpid=$!
	track_pid $dpid
	wait_for 10 "dmlockd to listen" in_log "listening on"
	in_log "open-file limit raised from $LIMIT to $hard" ||
		fail "the soft limit was not raised to the hard one: $(cat "$dlog")"
	in_log "below the" && fail "warned although the hard limit is enough: $(cat "$dlog")"
	[ "$(awk '/^Max open files/ { print $4 }' "/proc/$dpid/limits")" = "$hard" ] ||
		fail "soft limit of the running daemon: $(grep 'open files' "/proc/$dpid/limits")"
	stop
	note "soft limit $LIMIT raised to the hard limit $hard"
else
	note "hard open-file limit $hard: not testing the raise"
fi

# --- the local socket ---------------------------------------------------
sock=$ops_tmp/local.sock
start_limited "$ops_tmp/local.log" -S "$sock" --state-dir "$ops_tmp/state-local"
greets || fail "no greeting before exhaustion"
exhaust unix "$sock" 100
wait_for 10 "the local socket to run out of descriptors" in_log "Too many open files"
# Give a spinning listener time to show itself: the daemon must still
# answer its signals (SIGUSR1 writes a state line) while exhausted.
kill -USR1 "$dpid"
wait_for 10 "the state dump while exhausted" in_log "state: node"
alive || fail "dmlockd died out of descriptors: $(tail -n 20 "$dlog")"
release 100
wait_for 10 "the daemon to serve again" greets
n=$(count_log "local socket")
[ "$n" -le 3 ] || fail "$n log lines about the local socket (flooding): $(grep -m 5 'local socket' "$dlog")"
in_log "the local socket: cannot accept: Too many open files" ||
	fail "exhaustion not reported as a paused accept: $(grep -m 5 'Too many' "$dlog")"
wait_for 10 "the end of the burst logged" in_log "the local socket: accepting again after"
alive || fail "dmlockd died: $(tail -n 20 "$dlog")"
note "local socket: paused and resumed, $n log line(s): $(grep 'accepting again' "$dlog" | sed 's/.*: accepting/accepting/')"
stop

# --- a peer listener --------------------------------------------------------
"$top_srcdir/tools/mkcerts" -d "$ops_tmp/certs" a b >/dev/null || fail "tools/mkcerts failed"
read -r p_a p_b < <(python3 "$top_srcdir/tests/cluster/free-ports.py" 2)
[ -n "$p_b" ] || fail "could not pick ports"
sock=$ops_tmp/peer.sock
cat >"$ops_tmp/a.conf" <<CONF
[node]
name = a
listen = 127.0.0.1:$p_a
state_directory = $ops_tmp/state-a
[cluster]
peers = a@127.0.0.1:$p_a, b@127.0.0.1:$p_b
[tls]
ca = $ops_tmp/certs/ca.crt
cert = $ops_tmp/certs/a.crt
key = $ops_tmp/certs/a.key
[transport]
reconnect_min = 50ms
reconnect_max = 500ms
[local]
socket = $sock
CONF
start_limited "$ops_tmp/peer.log" -c "$ops_tmp/a.conf"
# Local clients take the descriptors, then peers knock.
exhaust unix "$sock" 100
wait_for 10 "the local socket to run out of descriptors" in_log "Too many open files"
cpid_local=$cpid
exhaust tcp "127.0.0.1:$p_a" 30
peer_exhausted() { [ "$(grep -c -i -e "peer listener" -e "accept()" "$dlog")" -gt 0 ]; }
wait_for 10 "the peer listener to run out of descriptors" peer_exhausted
kill -USR1 "$dpid"
wait_for 10 "the state dump while exhausted" in_log "state: node"
alive || fail "dmlockd died out of descriptors: $(tail -n 20 "$dlog")"
release 30
cpid=$cpid_local
release 100
wait_for 10 "the daemon to serve again" greets
n=$(grep -c -i -e "peer listener" -e "accept()" "$dlog")
[ "$n" -le 3 ] || fail "$n log lines about the peer listener (flooding): $(grep -m 5 -i -e 'peer listener' -e 'accept()' "$dlog")"
in_log "peer listener 127.0.0.1:$p_a: cannot accept: Too many open files" ||
	fail "peer exhaustion not reported as a paused accept: $(grep -m 5 -i -e 'peer listener' -e 'accept()' "$dlog")"
# The backlog the holder left may be empty by now (connections that were
# still in SYN state when it closed them are gone): knock until a fresh
# connection is accepted and the end of the burst logged.
peer_accepts_again() {
	python3 "$clients" knock "127.0.0.1:$p_a" &&
		in_log "peer listener 127.0.0.1:$p_a: accepting again after"
}
wait_for 10 "the peer listener to accept again" peer_accepts_again
alive || fail "dmlockd died: $(tail -n 20 "$dlog")"
note "peer listener: paused and resumed, $n log line(s)"
stop
exit 0
