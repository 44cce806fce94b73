#!/bin/bash
# 11-mutex-5nodes: the 3-node mutual-exclusion test with five dmlockd:
# concurrent CLI and libdmlock clients on every node, checked for overlap
# and strictly increasing fencing tokens by the independent checker.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"
# Load only, no faults: the documented default timeouts, so a busy machine
# (make -j) cannot expire a lease.
CLUSTER_REQUEST_TIMEOUT=5s CLUSTER_PROBE_TIMEOUT=2s CLUSTER_LEASE=3s CLUSTER_HEARTBEAT=500ms

start_cluster 5
pass "5 nodes up, every node linked to the other four"
mutex_load "$TEST_DIR/cs.log" "${CLI_WORKERS:-1}" "${CLI_COUNT:-30}" "${LIB_WORKERS:-2}" "${LIB_COUNT:-100}"
pass "$MUTEX_SECTIONS critical sections from clients on 5 nodes never overlapped"
stop_cluster
