#!/bin/bash
# 34-maekawa-static-restart: under Maekawa a daemon started again from its
# peers gives no vote until every member has answered its hello (a
# HEARTBEAT_ACK echoing its incarnation; dmlockd(8), RECOVERY): a member
# that still held a vote of its earlier process tells it to rejoin instead.
# - every node is killed at once and started again: none lists an earlier
#   incarnation of another, each answers the others' hellos, and each logs
#   that its votes go before the cluster serves, with mutual exclusion
#   (a waiter on another node is granted only after the holder releases);
# - one node is killed and started again at once: the others still list
#   its old incarnation and tell it to rejoin; it rejoins and serves.
CLUSTER_ALGORITHM=maekawa
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
: >"$log"
released='every member has answered this restarted process: its votes go'

# lines I: how many lines node I's log has now.
lines() { wc -l <"$(node_log "$1")"; }

# logged_since I N PATTERN: node I logged PATTERN after its first N lines.
logged_since() { tail -n +$(($2 + 1)) "$(node_log "$1")" | grep -qE -- "$3"; }

start_cluster 3
holder_then_waiter r1 "$log"
pass "a Maekawa cluster of three serves"

declare -a before
for i in 1 2 3; do
	kill_node "$i" KILL
done
for i in 1 2 3; do
	before[$i]=$(lines "$i")
	start_node "$i"
done
for i in 1 2 3; do
	wait_until "node$i to hear every member answer its hello" \
		logged_since "$i" "${before[$i]}" "$released"
	wait_until "node$i to serve after the restart" node_serves "$i"
done
holder_then_waiter r2 "$log"
pass "every node killed and started again: each voted once all had answered, and the cluster serves"

n3=$(lines 3)
kill_node 3 KILL
start_node 3
wait_until "restarted node3 to be told to rejoin" \
	logged_since 3 "$n3" 'removed from the roster: restarting and rejoining'
wait_until "node3 to rejoin" eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
wait_until "restarted node3 to serve a lock" node_serves 3
holder_then_waiter r3 "$log"
pass "node3 killed and started again: told to rejoin, rejoined, the cluster serves"

check_mutex "$log" min_nodes=2
stop_cluster
