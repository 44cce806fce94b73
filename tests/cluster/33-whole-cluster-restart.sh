#!/bin/bash
# 33-whole-cluster-restart: every node of a 3-node cluster stops, first
# gracefully (SIGTERM, one after another: each leaves, the last one leaves
# a cluster of none), then all at once by SIGKILL; each time every node
# starts again from the same configuration (the static peers) and the
# cluster forms again: every node links to the others and serves, mutual
# exclusion holds (a waiter on another node is granted only after the
# holder releases) and every fencing token is above every token granted
# before (the epoch floor on disk).
# This is also the operator's way out of a cluster whose members all left
# or were removed (HACKING.md, "How far each part is proven"); a node left
# joining through a sponsor that is gone says so in its log.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
: >"$log"

# token_on I: one grant of the lock on node I; prints its fencing token
# (a failure here is caught by the caller's comparison: no number).
token_on()
{
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" run -w 30 --name "${LOCK_NAME:-x}" -- sh -c 'echo "$DMLOCK_TOKEN"' ||
		fail "no grant on node$1"
}

# serve_round TAG: a holder on node1, a waiter on node2 granted only after
# the release, and one grant on each node, every token above the one
# before, the first above ROUND_MAX; sets ROUND_MAX to the last (highest).
# (Not in a $(...) subshell: a failure must end the test, and the holders
# it starts must stay tracked for the cleanup.)
serve_round()
{
	local tag=$1 above=$ROUND_MAX t max i

	holder_then_waiter "$tag" "$log"
	[ "$(hold_token "${tag}a")" -gt "$above" ] ||
		fail "the first token of round $tag, $(hold_token "${tag}a"), is not above $above"
	max=$(hold_token "${tag}b")
	for i in 1 2 3; do
		t=$(token_on "$i")
		[ "$t" -gt "$max" ] || fail "node$i granted token $t after $max"
		max=$t
	done
	ROUND_MAX=$max
}

# restart_all: start every node again from its configuration and wait
# until each has its two links up and serves.
restart_all()
{
	local i

	for i in 1 2 3; do
		start_node "$i"
	done
	for i in 1 2 3; do
		wait_links "$i" 2 || fail "node$i did not link to its peers after the restart"
	done
	for i in 1 2 3; do
		wait_until "node$i to serve after the restart" node_serves "$i"
	done
}

start_cluster 3
ROUND_MAX=0
serve_round r1
before=$ROUND_MAX
pass "the cluster serves; highest token $before"

# One after another (SIGTERM, then wait for the exit): two leave, the last
# one says the cluster ends with it.  (stop_cluster signals every node at
# once: each then leaves while the others are still members, and how many
# find themselves last depends on timing -- all three left, none last, in
# a loaded distcheck.)
for i in 1 2 3; do
	kill_node "$i" TERM
done
left=$(cat "$(node_log 1)" "$(node_log 2)" "$(node_log 3)" | grep -c 'left the cluster')
last=$(cat "$(node_log 1)" "$(node_log 2)" "$(node_log 3)" | grep -c "this node was the cluster's last member")
[ "$left" -eq 2 ] && [ "$last" -eq 1 ] || fail "$left nodes left and $last was the last member (want 2 and 1)"
restart_all
serve_round r2
after=$ROUND_MAX
pass "every node left, all started again: the cluster formed again, tokens above $before"

for i in 1 2 3; do
	kill_node "$i" KILL
done
restart_all
serve_round r3
pass "every node killed at once, all started again: tokens above $after"

check_mutex "$log" min_nodes=2
stop_cluster

# A node that joins through a sponsor that is gone is never admitted; after
# 3 T_fail (here 7.5 s) its log says so and what to do, and its SIGTERM
# says it was not a member yet.
make_certs node4
pick_ports 1 4
write_conf 4 "sponsor = $(roster_of 1)"
start_node 4
wait_log 4 'not a member of the cluster after [0-9]+ s: no sponsor has admitted this node yet'
kill_node 4 TERM
grep -q 'received SIGTERM: stopping (not a member of the cluster yet)' "$(node_log 4)" ||
	fail "node4's stop: $(tail -n 3 "$(node_log 4)")"
pass "a node whose sponsor is gone says it has not been admitted"
