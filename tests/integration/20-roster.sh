#!/bin/bash
# 20-roster: roster operations on a one-node daemon: removing an unknown
# node or this node is a clear usage error, join says how to join instead,
# and `dmlock leave` makes the daemon leave (its lock holders lose their
# locks: exit 80) and exit 0, with `dmlock leave` waiting for that.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon
node=$("$DMLOCK" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["node"]["name"])')

expect_status 64 "remove unknown node" "$DMLOCK" remove ghost-node
expect_stderr "no node 'ghost-node' in the roster of $node"
expect_status 64 "remove this node" "$DMLOCK" remove "$node"
expect_stderr "use dmlock leave"
expect_status 64 "remove a bad name" "$DMLOCK" remove 'bad@name'
expect_stderr "not a valid node name"
expect_status 64 "remove without NODE" "$DMLOCK" remove
pass "remove: unknown node, this node and bad names are clear usage errors"

expect_status 69 "join" "$DMLOCK" join peer-a@127.0.0.1:7411
expect_stderr "[cluster] sponsor = peer-a@127.0.0.1:7411"
expect_status 64 "join bad sponsor" "$DMLOCK" join no-port@host
pass "join explains how to join instead"

start_holder A roster/held
holder=$HOLDER_PID_A
expect_status 0 "leave" "$DMLOCK" leave
grep -q "is leaving the cluster" "$TEST_DIR/last.out" || fail "leave: $(cat "$TEST_DIR/last.out")"
grep -q "has left the cluster and stopped" "$TEST_DIR/last.out" ||
	fail "leave did not wait for dmlockd: $(cat "$TEST_DIR/last.out")"
wait_status "$DAEMON_PID"
[ "$STATUS" -eq 0 ] || fail "dmlockd exited $STATUS after leave"
DAEMON_PID=
wait_status "$holder"
[ "$STATUS" -eq 80 ] || fail "the holder exited $STATUS, expected 80 (lock lost)"
grep -q "left the cluster" "$TEST_DIR/dmlockd.log" || fail "no log line for the leave"
pass "leave: holders lose their locks, dmlockd exits 0"
