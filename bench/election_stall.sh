#!/bin/bash
# bench/election_stall.sh: what a waiter queued behind a long critical
# section costs the other locks of a cluster.  Three dmlockd on 127.0.0.1
# (the cluster tests' helpers and short timeouts: T_fail 2.5 s, lease 1 s);
# node1 holds lock A for SECONDS (default 15), node2 waits for A, and
# node3 runs `dmlock run --name B -- true` back to back meanwhile.  Prints
# B's entries, median and worst latency, and how many election epochs
# started.  A token algorithm's waiter takes the long wait for a lost
# token and starts an epoch every T_fail, each stopping every token for
# the fence (NOTES-token.md, "Other known gaps"), until session 41's probe
# (the holder answers, no epoch); Ricart-Agrawala has no
# such watchdog.  Run from the build directory:
#   top_srcdir=/path/to/src bash /path/to/src/bench/election_stall.sh [ALGORITHM] [SECONDS]
# Not a test.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
export top_srcdir top_builddir
. "$top_srcdir/tests/cluster/lib-cluster.sh"
CLUSTER_ALGORITHM=${1:-raymond}
seconds=${2:-15}
CONF_LOG_LEVEL=notice
start_cluster 3
LOCK_NAME=A start_hold h1 1 "$TEST_DIR/cs.log"
LOCK_NAME=A spawn_hold h2 2 "$TEST_DIR/cs.log" -w $((seconds + 60))
wait_until "node2's request for A to be waiting" node_has_waiter 2
lat=()
end=$(($(ms_now) + seconds * 1000))
while [ "$(ms_now)" -lt "$end" ]; do
	t0=$(ms_now)
	DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" run --name B -- true || fail "node3 could not take B"
	lat+=($(($(ms_now) - t0)))
done
n=${#lat[@]}
sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
p50=$(sed -n "$(((n + 1) / 2))p" <<<"$sorted")
worst=$(tail -1 <<<"$sorted")
epochs=$(cat "$TEST_DIR"/node*/dmlockd.log | grep -c "election: this node is the new coordinator")
echo "$CLUSTER_ALGORITHM: ${seconds}s of a waiter behind A's holder: B entered $n times," \
	"median ${p50} ms, worst ${worst} ms; election epochs started: $epochs"
release_hold h1
wait_for_file "$TEST_DIR/pids/h2.sleep"
release_hold h2
stop_cluster
