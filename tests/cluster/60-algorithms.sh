#!/bin/bash
# 60-algorithms: the mutual-exclusion test on a 3-node cluster once per
# algorithm of the daemon's registry (read from
# dmlockd/engine/dm_algorithm_registry.c at test time, so every newly
# registered algorithm is covered without editing this test).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"
# Load only, no faults: the documented default timeouts, so a busy machine
# (make -j) cannot expire a lease.
CLUSTER_REQUEST_TIMEOUT=5s CLUSTER_PROBE_TIMEOUT=2s CLUSTER_LEASE=3s CLUSTER_HEARTBEAT=500ms

algorithms=$(cluster_algorithms)
[ -n "$algorithms" ] || fail "no algorithm names found in dm_algorithm_registry.c"
grep -qx ricart-agrawala <<<"$algorithms" || fail "the registry parse lost ricart-agrawala: $algorithms"
echo "# algorithms: $(echo $algorithms)"
base=$TEST_DIR
for algorithm in $algorithms; do
	CLUSTER_ALGORITHM=$algorithm
	start_cluster 3
	status=$(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" status --json) || fail "status on node1"
	grep -qF "\"algorithm\":\"$algorithm\"" <<<"$status" || fail "node1 does not run $algorithm: $status"
	mutex_load "$TEST_DIR/cs-$algorithm.log" "${CLI_WORKERS:-1}" "${CLI_COUNT:-15}" \
		"${LIB_WORKERS:-2}" "${LIB_COUNT:-60}"
	pass "$algorithm: $MUTEX_SECTIONS critical sections on 3 nodes never overlapped"
	# The algorithm's own view in dmlock status (ALGO lines): algorithms
	# with an election show it and the coordinator, the lowest name.
	case $algorithm in
	suzuki-kasami|raymond|naimi-trehel|hierarchical)
		status=$(DMLOCK_SOCKET=$(node_sock 2) "$DMLOCK" status --json) || fail "status on node2"
		grep -qF '"algorithm_state":{"node":{"election":"bully","state":"normal","coordinator":"node1"' \
			<<<"$status" || fail "$algorithm: no election state in dmlock status: $status"
		DMLOCK_SOCKET=$(node_sock 2) "$DMLOCK" status | grep -q '^algorithm state:' ||
			fail "$algorithm: no 'algorithm state' section in dmlock status"
		pass "$algorithm: dmlock status shows the election and coordinator node1"
		;;
	esac
	stop_cluster_keeping_logs "$algorithm"
done
