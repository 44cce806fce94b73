#!/bin/bash
# 10-mutex-3nodes: three dmlockd over mutual TLS; concurrent clients on
# every node, through the dmlock CLI and through libdmlock, take one lock;
# the independent checker verifies on their shared log that no two
# critical sections overlapped and fencing tokens strictly increased.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"
# Load only, no faults: the documented default timeouts, so a busy machine
# (make -j) cannot expire a lease.
CLUSTER_REQUEST_TIMEOUT=5s CLUSTER_PROBE_TIMEOUT=2s CLUSTER_LEASE=3s CLUSTER_HEARTBEAT=500ms

start_cluster 3
pass "3 nodes up, every node linked to the other two"
mutex_load "$TEST_DIR/cs.log" "${CLI_WORKERS:-2}" "${CLI_COUNT:-40}" "${LIB_WORKERS:-3}" "${LIB_COUNT:-200}"
pass "$MUTEX_SECTIONS critical sections from clients on 3 nodes never overlapped"
stop_cluster
