#!/bin/bash
# 23-send-queue-overflow: a peer that stays in the roster but acknowledges
# nothing (SIGSTOP) fills another node's send queue to it.  That node
# drops a message its engine counts on, so it must not go on under its
# incarnation: it logs why (peer, messages unacknowledged, restart, the
# link to look at), disconnects its local clients (a `dmlock run` holding
# a lock there stops its command: exit 80, "lost"), and exits with status
# 75 (EX_TEMPFAIL, what systemd's Restart=on-failure restarts).  The rest
# of the cluster keeps serving, and the restarted daemon (same config, a
# new incarnation) joins again and serves.
#
# Only node2 has a tiny [transport] send_queue_limit, so that it is the
# one node that overflows; node3 keeps the default and survives.  A longer
# request_timeout (failure detection only gets slower: the lease
# inequality of lib-cluster.sh still holds) keeps node2 from removing the
# frozen node1, which would drop its queue, before the requests fill it.
CLUSTER_REQUEST_TIMEOUT=${CLUSTER_REQUEST_TIMEOUT:-4s}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

LIMIT=${OVERFLOW_LIMIT:-16}
REQUESTS=$((LIMIT + 8))		# lock requests on node2, each a message to node1
log=$TEST_DIR/cs.log
held_log=$TEST_DIR/held.log

CONF_EXTRA[2]="[transport]
send_queue_limit = $LIMIT"
start_cluster 3

# A holder on node2 before the freeze: its lease goes on with node3's
# acknowledgements (a majority), and it must be told the lock is lost when
# node2 exits.
LOCK_NAME=held start_hold h 2 "$held_log"
token_h=$(hold_token h)

kill -STOP "${NODE_PID[1]}"
# Requests for distinct locks on node2: each one sends a REQUEST to the
# frozen node1, none can be granted while node1 is in node2's roster.
req_pids=()
for ((k = 0; k < REQUESTS; k++)); do
	DMLOCK_SOCKET=$(node_sock 2) "$DMLOCK" run --name "ov$k" -w 30 -- true \
		2>>"$TEST_DIR/requests.err" &
	req_pids+=($!)
	track_pid $!
done

wait_log 2 'err: send queue to peer node1 overflowed: [0-9]+ messages unacknowledged'
# node1 resumes at once, as the far end of a healed link would: with node2
# gone, node1 and node3 are the majority that goes on (node1 frozen for
# good as well would leave node3 alone, which no majority policy serves).
kill -CONT "${NODE_PID[1]}"
line=$(grep -E 'err: send queue to peer node1 overflowed' "$(node_log 2)" | head -n 1)
for want in "send_queue_limit $LIMIT" "exits with status 75" "new incarnation" \
	"network link between this node and node1"; do
	grep -qF -- "$want" <<<"$line" || fail "the overflow error does not say '$want': $line"
done
grep -qE "err: .*overflowed: $LIMIT messages unacknowledged" <<<"$line" ||
	fail "the overflow error does not count $LIMIT unacknowledged messages: $line"
wait_status "${NODE_PID[2]}"
[ "$STATUS" -eq 75 ] || fail "node2 exited $STATUS after the overflow, expected 75 (EX_TEMPFAIL)"
node_reap 2
leave='received SIG[A-Z]+: leaving the cluster|left the cluster'
grep -qE "$leave" "$(node_log 2)" && fail "node2 ran the graceful leave: $(grep -E "$leave" "$(node_log 2)")"
pass "node2 logged the overflow and exited 75: ${line#*err: }"

# Its local clients saw the connection close, like a crash.
wait_status "$HOLD_PID_h"
[ "$STATUS" -eq 80 ] || fail "dmlock run holding a lock on node2 exited $STATUS, expected 80 (lost)"
grep -q "^lost $token_h node2 h" "$held_log" || fail "node2's holder was not stopped: $(cat "$held_log")"
for pid in "${req_pids[@]}"; do
	wait_status "$pid"
	[ "$STATUS" -ne 0 ] || fail "a request on node2 was granted while node1 was frozen in its roster"
done
pass "node2's holder lost its lock (exit 80) and its $REQUESTS waiting requests ended"

# The rest of the cluster: node3 (never stopped) serves.  Its request
# waits while node2's crash is detected (a late REPLY, a probe, removal:
# request_timeout + probe_timeout) and is then granted.
t0=$(ms_now)
DMLOCK_SOCKET=$(node_sock 3) timeout -k 5 60 "$DMLOCK" run --name after-overflow -w 30 -- true ||
	fail "node3 could not take a lock after node2's exit (dmlock run exited $?)"
pass "node3 took a lock $(($(ms_now) - t0)) ms after node2's exit"

# The restarted daemon (as systemd would: same config) is a new
# incarnation and joins again.
mv "$(node_log 2)" "$(node_log 2).first"
start_node 2
wait_until "restarted node2 to join" \
	eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
wait_until "restarted node2 to serve a lock" node_serves 2
grep -q 'overflowed' "$(node_log 2)" && fail "the restarted node2 overflowed again"
incarnations=$(grep -oE 'link with node2 up \([^)]*incarnation [0-9]+' "$(node_log 3)" |
	grep -oE '[0-9]+$' | uniq)
[ "$(wc -l <<<"$incarnations")" -ge 2 ] ||
	fail "node3 did not see node2 come back as a new incarnation: $incarnations"
mutex_load "$log" 1 5 1 20
pass "node2 restarted, joined again; $MUTEX_SECTIONS sections checked on the three nodes"
stop_cluster
