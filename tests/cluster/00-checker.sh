#!/bin/bash
# 00-checker: the mutual-exclusion checker of the cluster tests accepts a
# correct log and catches every fault it is there to catch (negative
# controls): an overlap, a token that does not increase, a crossed exit, a
# section left open, a lost section, a malformed line.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

good=$TEST_DIR/good.log
printf '%s\n' 'enter 3 node1 a 100' 'exit 3 node1 a 101' 'enter 7 node2 b 102' \
	'lost 7 node2 b 103' 'enter 8 node1 a 104' 'exit 8 node1 a 105' >"$good"
out=$(awk -v want=3 -v min_nodes=2 -f "$CHECKER" "$good") || fail "checker rejects a good log: $out"
grep -q 'verified 3 critical sections (1 ended by lost)' <<<"$out" || fail "checker does not count: $out"
pass "a correct log is accepted: $out"

# expect_rejected NAME WANT TEXT LINE...: the log made of LINEs is rejected
# with a message containing TEXT.
expect_rejected()
{
	local name=$1 want=$2 text=$3 out

	shift 3
	printf '%s\n' "$@" >"$TEST_DIR/$name.log"
	if out=$(awk -v want="$want" -f "$CHECKER" "$TEST_DIR/$name.log"); then
		fail "checker accepts a log with $name: $out"
	fi
	grep -qF -- "$text" <<<"$out" || fail "checker's message for $name lacks '$text': $out"
	pass "checker catches $name"
}

expect_rejected overlap 2 'overlap' 'enter 1 node1 a' 'enter 2 node2 b' 'exit 2 node2 b' 'exit 1 node1 a'
expect_rejected equal-token 2 'does not increase' 'enter 5 node1 a' 'exit 5 node1 a' 'enter 5 node2 b' 'exit 5 node2 b'
expect_rejected decreasing-token 2 'does not increase' 'enter 5 node1 a' 'exit 5 node1 a' 'enter 4 node2 b' 'exit 4 node2 b'
expect_rejected crossed-exit 1 'while a@node1' 'enter 1 node1 a' 'exit 1 node2 b'
expect_rejected wrong-token-exit 1 'while a@node1 (token 1)' 'enter 1 node1 a' 'exit 2 node1 a'
expect_rejected left-open 1 'never left' 'enter 1 node1 a' 'exit 1 node1 a' 'enter 2 node1 a'
expect_rejected lost-section 3 'expected 3' 'enter 1 node1 a' 'exit 1 node1 a' 'enter 2 node1 a' 'exit 2 node1 a'
expect_rejected malformed 1 'malformed' 'enter x node1 a'
expect_rejected lost-while-nobody 1 'while nobody' 'lost 1 node1 a'
printf '%s\n' 'enter 1 node1 a' 'exit 1 node1 a' >"$TEST_DIR/one-node.log"
awk -v min_nodes=2 -f "$CHECKER" "$TEST_DIR/one-node.log" >/dev/null &&
	fail "checker accepts sections from one node when two are required"
pass "checker enforces min_nodes"
