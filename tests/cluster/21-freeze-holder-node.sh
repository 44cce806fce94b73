#!/bin/bash
# 21-freeze-holder-node: the node whose client holds a lock is frozen with
# SIGSTOP past its lease while a client on another node waits.  The frozen
# node's client must be told the lock is lost (dmlock run exits 80, its
# command gets SIGTERM and logs "lost") before the other node's client is
# granted the lock (the shared log's order, checked by the checker, with a
# larger token).  After SIGCONT the removed node must not grant on its own
# and the two others keep serving; with FREEZE_REJOIN=1 (test 22) it must
# rejoin and all three serve again.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
start_cluster 3
start_hold a 1 "$log" --kill-after 10
spawn_hold b 2 "$log" -w 60
wait_until "node2's request to be waiting" node_has_waiter 2
token_a=$(hold_token a)

kill -STOP "${NODE_PID[1]}"
t0=$(ms_now)
wait_status "$HOLD_PID_a"
lost_ms=$(($(ms_now) - t0))
[ "$STATUS" -eq 80 ] || fail "dmlock run on the frozen node exited $STATUS, expected 80 (lock lost)"
grep -q "^lost $token_a node1 a" "$log" || fail "the frozen node's command did not get SIGTERM: $(cat "$log")"
pass "frozen node1's client was told the lock is lost after ${lost_ms} ms (exit 80, command got SIGTERM)"

wait_for_file "$TEST_DIR/pids/b.sleep"
granted_ms=$(($(ms_now) - t0))
token_b=$(hold_token b)
[ "$token_b" -gt "$token_a" ] || fail "token after recovery $token_b is not above $token_a"
# The order in the log is the order of the appends: "lost" of node1's
# client must come before node2's "enter".
lost_line=$(grep -n "^lost $token_a " "$log" | cut -d: -f1)
enter_line=$(grep -n "^enter $token_b " "$log" | cut -d: -f1)
[ "$lost_line" -lt "$enter_line" ] || fail "node2 entered (line $enter_line) before node1's client stopped (line $lost_line)"
pass "node2 was granted token $token_b after ${granted_ms} ms, after node1's client had stopped"
release_hold b
wait_status "$HOLD_PID_b"
[ "$STATUS" -eq 0 ] || fail "node2's holder exited $STATUS"

kill -CONT "${NODE_PID[1]}"
if [ -z "${FREEZE_REJOIN:-}" ]; then
	# The resumed node was removed: it must not grant the lock on its own
	# (its attempt is logged to the same log, so a grant that overlapped
	# would also fail the checker), and the two others keep serving.
	DMLOCK_SOCKET=$(node_sock 1) timeout -k 5 20 "$DMLOCK" run --name x -w 3 -- \
		sh -c "$CS_SCRIPT" sh "$log" node1 resumed 2>"$TEST_DIR/resumed.err"
	rc=$?
	[ "$rc" -ne 0 ] || fail "the removed node granted the lock after SIGCONT"
	pass "the resumed node did not grant the lock on its own (dmlock run exited $rc)"
	kill_node 1 KILL
	mutex_load "$log" 1 10 2 40
	pass "the two other nodes served $MUTEX_SECTIONS more sections"
	stop_cluster
	exit 0
fi
# FREEZE_REJOIN=1 (22-freeze-rejoin.sh): the resumed node rejoins.
wait_until "node1 to rejoin after SIGCONT" \
	eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
wait_until "node1 to serve a lock" node_serves 1
pass "node1 resumed and is a member again"
mutex_load "$log" 1 10 2 40
pass "the three nodes served $MUTEX_SECTIONS more sections after the freeze"
stop_cluster
