#!/bin/bash
# 61-kill-holder-algorithms: for every algorithm of the registry, node1
# holds a lock while node2 waits for it, and node1 is killed with SIGKILL.
# Node1 is also the lowest-numbered node, so for the token algorithms it
# kills the token holder and for the hierarchical scheme the group and
# system coordinator; the survivors must detect the failure, regenerate
# the token or elect a new coordinator, and grant node2's request with a
# larger fencing token, not before the dead holder's lease ran out; then
# both survivors keep serving (checked by the mutual-exclusion checker).
# The election is CLUSTER_ELECTION (bully unless set; 62 sets invitation).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

# The coordinator node I names in dmlock status under ELECTION, in a
# normal state, or nothing.
coordinator_of() {
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" status --json 2>/dev/null |
		grep -oE "\"election\":\"$2\",\"state\":\"normal\",\"coordinator\":\"node[0-9]+\"" |
		head -n1 | sed -E 's/.*"coordinator":"(node[0-9]+)"/\1/'
}
# True when both survivors name the same survivor as coordinator.
survivors_agree_on_coordinator() {
	local c2 c3
	c2=$(coordinator_of 2 "$1")
	c3=$(coordinator_of 3 "$1")
	SURVIVOR_COORDINATOR=$c2
	[ -n "$c2" ] && [ "$c2" = "$c3" ] && { [ "$c2" = node2 ] || [ "$c2" = node3 ]; }
}

algorithms=$(cluster_algorithms)
[ -n "$algorithms" ] || fail "no algorithm names found in dm_algorithm_registry.c"
echo "# algorithms: $(echo $algorithms)"
for algorithm in ${KILL_ALGORITHMS:-$algorithms}; do
	CLUSTER_ALGORITHM=$algorithm
	log=$TEST_DIR/cs-$algorithm.log
	start_cluster 3
	start_hold "a_${algorithm//-/_}" 1 "$log"
	tag_a=a_${algorithm//-/_}
	tag_b=b_${algorithm//-/_}
	spawn_hold "$tag_b" 2 "$log" -w 60
	wait_until "node2's request to be waiting ($algorithm)" node_has_waiter 2
	token_a=$(hold_token "$tag_a")

	t0=$(ms_now)
	kill_node 1 KILL
	wait_for_file "$TEST_DIR/pids/$tag_b.sleep"
	elapsed=$(($(ms_now) - t0))
	token_b=$(hold_token "$tag_b")
	[ "$token_b" -gt "$token_a" ] ||
		fail "$algorithm: token after recovery $token_b is not above $token_a"
	# Lease 1 s: granting earlier could overlap a holder that is only frozen.
	[ "$elapsed" -ge 1000 ] ||
		fail "$algorithm: granted ${elapsed} ms after the kill, before the lease (1 s) ran out"
	[ "$elapsed" -le 20000 ] || fail "$algorithm: recovery took ${elapsed} ms"
	pass "$algorithm: holder node1 killed with token $token_a; node2 granted token $token_b ${elapsed} ms later"
	eval "wait_status \"\$HOLD_PID_$tag_a\""
	[ "$STATUS" -eq 80 ] || fail "$algorithm: dmlock run on the dead node exited $STATUS, expected 80 (lock lost)"
	release_hold "$tag_b"
	eval "wait_status \"\$HOLD_PID_$tag_b\""
	[ "$STATUS" -eq 0 ] || fail "$algorithm: node2's holder exited $STATUS"
	wait_until "node2 and node3 to drop node1 from the roster ($algorithm)" \
		eval 'roster_size_is 2 2 && roster_size_is 3 2'

	# Elections are visible in dmlock status.  Under bully node2, now the
	# lowest name, coordinates; under invitation either survivor may, as
	# long as both name the same one.
	case $algorithm in
	suzuki-kasami|raymond|naimi-trehel|hierarchical)
		if [ "$CLUSTER_ELECTION" = bully ]; then
			wait_until "node2 to show itself as coordinator ($algorithm)" \
				eval '[ "$(coordinator_of 2 bully)" = node2 ]'
			pass "$algorithm: dmlock status on node2 shows node2 elected coordinator"
		else
			wait_until "node2 and node3 to agree on a coordinator under $CLUSTER_ELECTION ($algorithm)" \
				survivors_agree_on_coordinator "$CLUSTER_ELECTION"
			pass "$algorithm: node2 and node3 both show $SURVIVOR_COORDINATOR elected coordinator under $CLUSTER_ELECTION"
		fi
		;;
	esac

	# The two survivors keep serving, with every section checked.
	mutex_load "$log" 1 8 1 30
	pass "$algorithm: the two survivors served $MUTEX_SECTIONS more sections"
	stop_cluster_keeping_logs "$algorithm"
done
