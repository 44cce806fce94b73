#!/bin/bash
# 20-kill-holder-node: the node whose client holds a lock is killed with
# SIGKILL while a client on another node waits for the lock.  The cluster
# must not grant it before the dead node's lease could have run out, must
# grant it within the documented failure-detection time, with a larger
# fencing token, and must keep serving locks (checked by the checker).
# The killed node is then restarted (new incarnation, joining through a
# sponsor) and serves again.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
start_cluster 3
start_hold a 1 "$log"
spawn_hold b 2 "$log" -w 60
wait_until "node2's request to be waiting" node_has_waiter 2
token_a=$(hold_token a)

t0=$(ms_now)
kill_node 1 KILL
wait_for_file "$TEST_DIR/pids/b.sleep"
elapsed=$(($(ms_now) - t0))
token_b=$(hold_token b)
[ "$token_b" -gt "$token_a" ] || fail "token after recovery $token_b is not above $token_a"
# Lease 1 s: granting earlier could overlap a holder that is only frozen.
[ "$elapsed" -ge 1000 ] || fail "the lock was granted ${elapsed} ms after the kill, before the lease (1 s) ran out"
# request_timeout 1.5 s + probe_timeout 1 s, plus a generous margin.
[ "$elapsed" -le 10000 ] || fail "recovery took ${elapsed} ms"
pass "node1 killed holding token $token_a; node2 granted token $token_b ${elapsed} ms later"
wait_status "$HOLD_PID_a"
status_a=$STATUS
release_hold b
wait_status "$HOLD_PID_b"
[ "$STATUS" -eq 0 ] || fail "node2's holder exited $STATUS"
wait_until "node2 and node3 to drop node1 from the roster" \
	eval 'roster_size_is 2 2 && roster_size_is 3 2'
# Each survivor stored the roster without node1 (STATE/membership): a label
# above the static roster's 0, both survivors as members, node1 not, and
# node1's dead process as a dead incarnation (its next process is refused
# nothing by it; the killed one, were it only cut off, everything).
for i in 2 3; do
	rec=$(cat "$(node_dir $i)/state/membership") || fail "node$i stored no membership record"
	grep -q '^label [1-9]' <<<"$rec" || fail "node$i's record kept label 0: $rec"
	grep -q '^member node1$' <<<"$rec" && fail "node$i's record still lists node1: $rec"
	[ "$(grep -c '^member node[23]$' <<<"$rec")" = 2 ] || fail "node$i's record: $rec"
	grep -q '^dead node1 [1-9][0-9]*$' <<<"$rec" || fail "node$i's record has no dead node1: $rec"
done
pass "the survivors' membership records no longer list node1, and keep its dead incarnation"

# Node1's client saw its daemon connection die: dmlock run stopped the
# command (which logged "lost"), before anyone else was granted the lock
# (the checker verifies the order).
grep -q "^lost $token_a node1 a" "$log" || fail "node1's command was not stopped: $(cat "$log")"
[ "$status_a" -eq 80 ] || fail "dmlock run on the dead node exited $status_a, expected 80 (lock lost)"

# Two survivors keep serving.
CLUSTER_SIZE=3
mutex_load "$log" 1 10 2 40
pass "the two survivors served $MUTEX_SECTIONS more sections"

# The killed node comes back as a new incarnation, joining through a
# sponsor (DESIGN.md: a restarted daemon rejoins through a sponsor), and
# serves again.
write_conf 1 "sponsor = $(roster_of 2)"
start_node 1
wait_until "restarted node1 to rejoin" eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
wait_until "restarted node1 to serve a lock" node_serves 1
mutex_load "$log" 1 5 1 30
pass "node1 restarted, rejoined and served; $MUTEX_SECTIONS sections checked in the last round"
stop_cluster
