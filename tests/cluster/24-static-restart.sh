#!/bin/bash
# 24-static-restart: a daemon configured with peers= comes back from the
# same configuration, as systemd restarts it (Restart=on-failure), not
# through a sponsor.
# - node3 is killed with SIGKILL and started again at once, before the
#   others noticed: they still list its old incarnation, answer its first
#   messages (which say it started from the static roster) by telling it to
#   rejoin, and it joins through one of them.
# - node2 leaves gracefully (SIGTERM) and is started again from the same
#   peers: its membership record no longer lists it, so it joins through
#   its peers instead of forming the static roster beside the others.
# Each time the three serve again with mutual exclusion (the checker) and
# every fencing token above the ones before (dmlockd(8), RECOVERY).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

log=$TEST_DIR/cs.log
: >"$log"
start_cluster 3
mutex_load "$log" 1 5 0 0
pass "three static members served $MUTEX_SECTIONS sections"

# lines I: how many lines node I's log has now.
lines() { wc -l <"$(node_log "$1")"; }

# logged_since I N PATTERN: node I logged PATTERN after its first N lines.
logged_since() { tail -n +$(($2 + 1)) "$(node_log "$1")" | grep -qE -- "$3"; }

# max_token: the highest fencing token in the log (integers above 2^32:
# sort, not awk arithmetic).
max_token()
{
	grep -oE '^(exit|lost) [0-9]+' "$log" | cut -d' ' -f2 | sort -n | tail -n 1
}

# back_and_serving I BEFORE: node I is in every roster again, serves a
# lock, and the three serve with every token above BEFORE; sets AFTER.
back_and_serving()
{
	wait_until "node$1 to rejoin" eval 'roster_size_is 1 3 && roster_size_is 2 3 && roster_size_is 3 3'
	wait_until "restarted node$1 to serve a lock" node_serves "$1"
	mutex_load "$log" 1 5 0 0
	AFTER=$(max_token)
	[ "$AFTER" -gt "$2" ] || fail "tokens after node$1's restart ($AFTER) not above $2"
}

before=$(max_token)
kill_node 3 KILL
n3=$(lines 3)
start_node 3
wait_until "restarted node3 to be told to rejoin" \
	logged_since 3 "$n3" 'removed from the roster: restarting and rejoining'
logged_since 3 "$n3" 'joining it through them' &&
	fail "node3's record lists the static roster: it must not have joined from its record"
back_and_serving 3 "$before"
pass "node3 killed and restarted from its peers: told to rejoin, rejoined, served ($MUTEX_SECTIONS sections)"

before=$AFTER
kill_node 2 TERM
rec=$(cat "$(node_dir 2)/state/membership") || fail "node2 stored no membership record"
grep -q '^member node2$' <<<"$rec" && fail "node2 left but its record still lists it: $rec"
[ "$(grep -c '^member node[13]$' <<<"$rec")" = 2 ] || fail "node2's record after leaving: $rec"
n2=$(lines 2)
start_node 2
wait_until "node2 to join through its peers" logged_since 2 "$n2" 'joining it through them'
back_and_serving 2 "$before"
pass "node2 left and started again from its peers: joined through them, served ($MUTEX_SECTIONS sections)"
stop_cluster
