#!/bin/bash
# 63-token-long-hold: for each token algorithm, node1 holds lock A while
# node2 waits for it, longer than the failure timeout (T_fail, 2.5 s in
# these tests) several times over.  node2's watchdog must not take the
# long wait for a lost token: it asks who uses A (dmlock status counts
# token_probes_in_use), node1 answers, and no election starts (each
# would stop every token of the cluster for the fence).  When node1
# lets go, node2 is granted A with a larger fencing token.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

# node I's count of probes its lock's user answered (0 if none shown).
probes_in_use() {
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" status --json 2>/dev/null |
		grep -oE '"token_probes_in_use":"[0-9]+"' | head -n1 | grep -oE '[0-9]+' || echo 0
}
# Epochs started by elections, over the three nodes' logs so far.
epochs_started() {
	cat "$(node_log 1)" "$(node_log 2)" "$(node_log 3)" 2>/dev/null |
		grep -c "election: this node is the new coordinator"
}

for algorithm in ${TOKEN_ALGORITHMS:-suzuki-kasami raymond naimi-trehel}; do
	CLUSTER_ALGORITHM=$algorithm
	CONF_LOG_LEVEL=notice
	log=$TEST_DIR/cs-$algorithm.log
	tag_a=a_${algorithm//-/_}
	tag_b=b_${algorithm//-/_}
	start_cluster 3
	LOCK_NAME=A start_hold "$tag_a" 1 "$log"
	LOCK_NAME=A spawn_hold "$tag_b" 2 "$log" -w 120
	wait_until "node2's request for A to be waiting ($algorithm)" node_has_waiter 2
	before=$(epochs_started)
	# Three answered probes: node2 has waited at least three T_fail.
	wait_until "node2's probes to find A in use three times ($algorithm)" \
		eval '[ "$(probes_in_use 2)" -ge 3 ]'
	after=$(epochs_started)
	[ "$after" -eq "$before" ] ||
		fail "$algorithm: $((after - before)) election(s) while node2 waited behind a live holder"
	[ ! -e "$TEST_DIR/$tag_b.token" ] || fail "$algorithm: node2 was granted while node1 held A"
	pass "$algorithm: node2 waited $(probes_in_use 2) T_fail behind node1's hold with no election"
	release_hold "$tag_a"
	wait_for_file "$TEST_DIR/pids/$tag_b.sleep"
	[ "$(hold_token "$tag_b")" -gt "$(hold_token "$tag_a")" ] ||
		fail "$algorithm: node2's token $(hold_token "$tag_b") is not above node1's $(hold_token "$tag_a")"
	release_hold "$tag_b"
	for t in "$tag_a" "$tag_b"; do
		eval "wait_status \$HOLD_PID_$t"
		[ "$STATUS" -eq 0 ] || fail "$algorithm: holder $t exited $STATUS"
	done
	pass "$algorithm: node2 was granted A after node1's release with a larger token"
	stop_cluster_keeping_logs "$algorithm"
done
