#!/bin/bash
# 32-runtime-join: a node started alone (its own listen address and TLS
# files, no peers, no sponsor) serves locks by itself, is refused a join
# while one of its locks is held, then joins a running 2-node cluster with
# `dmlock join node1@HOST:PORT` while clients there keep taking a lock; it
# must become a member on every node and serve the same lock, with fencing
# tokens above the ones it granted alone; the checker verifies the log.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
: >"$log"
start_cluster 2
start_loaders "$log" 1 2
wait_until "the loaders to complete 10 sections" sections_reach "$log" 10

# Node 3: alone, with a listen address.
make_certs node3
pick_ports 1 3
write_conf 3 ""
start_node 3
wait_until "node3 to serve alone" node_serves 3
roster_size_is 3 1 || fail "node3 does not run alone"
alone=$(DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" run --name x -- sh -c 'echo $DMLOCK_TOKEN') ||
	fail "node3 alone did not grant x"

# Not while a lock is held here: a clear refusal, nothing changes.
LOCK_NAME=held start_hold h 3 "$TEST_DIR/held.log"
DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" join "$(roster_of 1)" 2>"$TEST_DIR/join.err" &&
	fail "join accepted while a lock is held"
grep -q "release them before joining" "$TEST_DIR/join.err" ||
	fail "unclear refusal: $(cat "$TEST_DIR/join.err")"
release_hold h
wait_status "$HOLD_PID_h"
roster_size_is 3 1 || fail "a refused join changed node3's roster"

# A bad sponsor is a usage error.
expect_status 64 "join without a port" env DMLOCK_SOCKET="$(node_sock 3)" "$DMLOCK" join node1@127.0.0.1

before=$(sections_in "$log")
DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" join "$(roster_of 1)" >"$TEST_DIR/join.out" ||
	fail "dmlock join failed: $(cat "$TEST_DIR/join.out")"
grep -q "joining the cluster through node1" "$TEST_DIR/join.out" ||
	fail "unexpected answer: $(cat "$TEST_DIR/join.out")"
CLUSTER_SIZE=3
wait_until "node3 to be a member everywhere" \
	eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
wait_until "node3 to serve a lock in the cluster" node_serves 3
pass "node3 joined at run time while $(( $(sections_in "$log") - before )) sections completed"

start_loaders "$log" 3
wait_until "node3's clients to complete sections" grep -q '^exit [0-9]* node3 ' "$log"
stop_loaders
check_mutex "$log" min_nodes=3
token=$(DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" run --name x -- sh -c 'echo $DMLOCK_TOKEN') ||
	fail "node3 did not grant x after joining"
[ "$token" -gt "$alone" ] || fail "token $token after the join is not above $alone granted alone"
DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" join "$(roster_of 2)" 2>"$TEST_DIR/join2.err" &&
	fail "a second join was accepted"
grep -q "already in a cluster" "$TEST_DIR/join2.err" ||
	fail "unclear refusal: $(cat "$TEST_DIR/join2.err")"
pass "node3 serves in the cluster (token $alone alone, $token after), a second join is refused"
stop_cluster
