#!/bin/bash
# 51-handshake-mismatch: a daemon with a valid certificate but another
# cluster name, or another algorithm, is refused at the HELLO with a clear
# message naming both values, and no link comes up.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

start_cluster 2
pick_ports 1 3
make_certs node3

impostor_conf CONF_CLUSTER=other
expect_impostor_refused "another cluster name" "cluster name mismatch: this node \(node1\) is in cluster 'test', node3 is in cluster 'other'"

other=$(cluster_algorithms | grep -vx "$CLUSTER_ALGORITHM" | head -n 1)
if [ -n "$other" ]; then
	impostor_conf CONF_ALGORITHM="$other"
	expect_impostor_refused "another algorithm ($other)" "algorithm mismatch: this node \(node1\) runs '$CLUSTER_ALGORITHM', node3 runs '$other'"
else
	echo "# only one algorithm is registered: the algorithm mismatch case is not exercised"
fi
stop_cluster
