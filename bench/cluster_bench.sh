#!/bin/bash
# bench/cluster_bench.sh: start a 3-node dmlock cluster on 127.0.0.1 (the
# cluster tests' helpers, default timeouts) and run bench/cluster_bench on
# it.  Run from the build directory: top_srcdir=/path/to/src bench/cluster_bench.sh
# or via `make` then `bash $srcdir/bench/cluster_bench.sh`.  Not a test.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
export top_srcdir top_builddir
. "$top_srcdir/tests/cluster/lib-cluster.sh"
CLUSTER_REQUEST_TIMEOUT=5s CLUSTER_PROBE_TIMEOUT=2s CLUSTER_LEASE=3s CLUSTER_HEARTBEAT=500ms
CONF_LOG_LEVEL=warning
start_cluster 3
"$top_builddir/bench/cluster_bench" -s "$(node_sock 1),$(node_sock 2),$(node_sock 3)" \
	-c "$CERTS/node1.crt" -k "$CERTS/node1.key" -a "$CERTS/ca.crt" "$@" || fail "cluster_bench failed"
stop_cluster
