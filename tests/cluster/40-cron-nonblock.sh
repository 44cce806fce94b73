#!/bin/bash
# 40-cron-nonblock: two "hosts" (two daemons of one cluster) fire the same
# cron line, `dmlock run -n -- COMMAND`, at the same moment, 20 times: each
# time exactly one runs the command and the other exits 75 (busy).  The
# lock name is derived from the command line (no --name), so identical
# lines serialise across hosts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

ROUNDS=${ROUNDS:-20}
start_cluster 3
runs=$TEST_DIR/runs.log
mkfifo "$TEST_DIR/hold.fifo"
# The cron job: record that it ran, then hold the lock until the test
# lets it go (a blocking read on a fifo, so no timing is involved).
job=(sh -c 'echo "$DMLOCK_TOKEN $DMLOCK_NAME" >> "$1"; read -r go < "$2"' job "$runs" "$TEST_DIR/hold.fifo")
name1=$(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" name -- "${job[@]}")
name2=$(DMLOCK_SOCKET=$(node_sock 2) "$DMLOCK" name -- "${job[@]}")
[ -n "$name1" ] && [ "$name1" = "$name2" ] || fail "the derived lock names differ: '$name1' '$name2'"

wins1=0 wins2=0 last=0
for ((r = 1; r <= ROUNDS; r++)); do
	# A barrier: both "hosts" block reading a fifo (held open by the test)
	# until the test writes one line for each, then start together.
	mkfifo "$TEST_DIR/start.$r"
	exec 3<>"$TEST_DIR/start.$r"
	for i in 1 2; do
		( read -r _ <"$TEST_DIR/start.$r"
		  exec env DMLOCK_SOCKET="$(node_sock "$i")" "$DMLOCK" run -n -- "${job[@]}" ) \
			2>"$TEST_DIR/host$i.err" &
		eval "host$i=$!"
		track_pid $!
	done
	printf 'go\ngo\n' >&3
	# One of them is busy at once; the other runs the job and waits.
	wait_until "one host to give up (round $r)" eval 'pid_exited $host1 || pid_exited $host2'
	if pid_exited "$host1"; then loser=$host1 winner=$host2 w=2; else loser=$host2 winner=$host1 w=1; fi
	wait "$loser"; rc=$?
	[ "$rc" -eq 75 ] || fail "round $r: the host that did not run exited $rc, expected 75 ($(cat "$TEST_DIR"/host*.err))"
	wait_until "the job to run (round $r)" eval '[ "$(wc -l < "$runs")" -eq $r ]'
	pid_exited "$winner" && fail "round $r: the other host did not hold the lock"
	echo go >"$TEST_DIR/hold.fifo"
	wait_status "$winner"
	[ "$STATUS" -eq 0 ] || fail "round $r: the host that ran exited $STATUS"
	token=$(tail -n 1 "$runs" | cut -d' ' -f1)
	[ "$token" -gt "$last" ] || fail "round $r: token $token is not above $last"
	last=$token
	eval "wins$w=\$((wins$w + 1))"
	exec 3>&-
done
[ "$(wc -l <"$runs")" -eq "$ROUNDS" ] || fail "the job ran $(wc -l <"$runs") times in $ROUNDS rounds"
pass "$ROUNDS rounds: exactly one host ran the job each time (node1 $wins1, node2 $wins2), the other exited 75"
stop_cluster
