#!/bin/bash
# 27-membership-record: the membership file in the state directory
# (STATE/membership, state_file.c) is read at start: a record in the
# file's format is accepted, anything else (a cut-short file, a repeated
# member, a leading zero, a member after a removal) stops the start with a
# message naming the file, never guessed; the epoch floor is not touched.
# A record that shows this node a member of a larger cluster stops a start
# whose configuration names neither peers nor a sponsor.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

state="$TEST_DIR/state"
mkdir -p "$state"

# A record of no roster: the daemon starts and serves.
printf 'label 0\n' > "$state/membership"
start_daemon
"$DMLOCK" run --name m -- true || fail "dmlock run failed with an empty record"
stop_daemon
pass "a membership file in the right format is accepted"
# The running member stored its own roster over it (DM_FX_PERSIST_RECORD):
# the standalone node's one-member roster at label 0.
[ "$(head -n 1 "$state/membership")" = "label 0" ] || fail "membership: $(cat "$state/membership")"
[ "$(grep -c '^member ' "$state/membership")" = 1 ] ||
	fail "the member did not store its roster: $(cat "$state/membership")"
pass "a member stores the roster it applies"
self=$(sed -n 's/^member //p' "$state/membership")

# A member of a larger roster when it stopped (joined with `dmlock join`,
# then killed), started again from a configuration naming neither peers nor
# a sponsor: alone it would grant beside that cluster; refused with the way
# on, the record kept.
printf 'label 4\nmember %s\nmember zz-other\n' "$self" > "$state/membership"
expect_status 1 "a cluster member's record with no peers or sponsor" \
	"$DMLOCKD" -S "$DMLOCK_SOCKET" --state-dir "$state"
expect_stderr "names neither peers nor a sponsor"
expect_stderr "lists zz-other"
grep -q '^member zz-other$' "$state/membership" || fail "the refused start changed the record"
pass "a node that was a cluster member does not start alone"
# One that left (its record lists the others, not itself) starts alone.
printf 'label 4\nmember zz-other\n' > "$state/membership"
start_daemon
"$DMLOCK" run --name m -- true || fail "dmlock run failed after a recorded leave"
stop_daemon
pass "a node that left its cluster starts alone"

floor=$(cat "$state/epoch-floor") || fail "no epoch floor"
for bad in 'label 0' 'label 1\nmember n0\nmember n0\n' 'label 01\n' \
    'label 1\nremoved n3 2\nmember n0\n' 'not a record\n'; do
	printf %b "$bad" > "$state/membership"
	expect_status 1 "corrupt membership file ($bad)" \
		"$DMLOCKD" -S "$DMLOCK_SOCKET" --state-dir "$state"
	expect_stderr "$state/membership is not a membership record"
done
[ "$(cat "$state/epoch-floor")" = "$floor" ] || fail "the epoch floor changed"
pass "a corrupt membership file is refused with its path, not guessed"

# Removed (the documented recovery): the daemon starts again.
rm "$state/membership"
start_daemon
stop_daemon
pass "without a membership file the daemon starts (no record)"
