#!/bin/bash
# tests/sim/check_tools_sim.sh: tools/sim, the campaign driver, on a small
# range.  A clean campaign totals every seed and exits 0; a broken engine
# (--break never-defer) makes it exit 1 and name the failing seeds; --resume
# runs only the chunks progress.log does not show finished and still totals
# the whole campaign; a campaign directory is not started over; a resume
# with other arguments is refused, and one with another binary unless it
# runs the campaign's fingerprinted seeds identically; SIGTERM stops the
# dmlock-sim processes with tools/sim.
set -u
src="${top_srcdir:-.}"
sim_bin="${top_builddir:-.}/tests/sim/dmlock-sim"
tool="$src/tools/sim"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
run() { DMLOCK_SIM="$sim_bin" "$tool" "$@" >"$work/out" 2>&1; echo $?; }
# finished chunks in a progress log
chunks() { grep -c ' runs, [0-9]* violations seeds ' "$1/progress.log"; }

# 1. A clean campaign: 40 seeds, chunks of 10, two processes.
c="$work/clean"
rc=$(run --seeds 1..40 --chunk 10 --jobs 2 --out "$c" --nodes 3 --rotate-faults)
cat "$work/out"
[ "$rc" -eq 0 ] || fail "clean campaign exited $rc"
grep -q '^tools/sim: 40 runs, 0 violations' "$work/out" || fail "clean campaign did not total 40 runs"
[ "$(chunks "$c")" -eq 4 ] || fail "expected 4 chunk lines in progress.log"

# 2. The same directory is not started over.
rc=$(run --seeds 1..40 --chunk 10 --out "$c" --nodes 3)
[ "$rc" -eq 2 ] || fail "a second campaign in the same directory exited $rc, not 2"
grep -q 'already holds a campaign' "$work/out" || fail "no clear message for a reused directory"

# 3. Resume after an interruption: chunk 21..30 never reported (its output
# may already be in job1.out; the totals must not count it twice).
grep -v 'seeds 21\.\.30$' "$c/progress.log" >"$work/p" && mv "$work/p" "$c/progress.log"
rc=$(run --resume "$c")
cat "$work/out"
[ "$rc" -eq 0 ] || fail "resume exited $rc"
grep -q '^tools/sim: resuming seeds 1..40' "$work/out" || fail "resume did not say it resumes"
[ "$(grep -c ' seeds [0-9]*\.\.[0-9]*$' "$work/out")" -eq 1 ] || fail "resume ran other chunks than 21..30"
grep -q ' 10 runs, 0 violations seeds 21\.\.30$' "$work/out" || fail "resume did not run chunk 21..30"
grep -q '^tools/sim: 40 runs, 0 violations' "$work/out" || fail "resume did not total the whole campaign"

# 4. A resume with nothing left runs nothing and still totals 40.
rc=$(run --resume "$c")
[ "$rc" -eq 0 ] || fail "resume of a finished campaign exited $rc"
! grep -q ' seeds [0-9]*\.\.[0-9]*$' "$work/out" || fail "resume of a finished campaign ran a chunk"
grep -q '^tools/sim: 40 runs, 0 violations' "$work/out" || fail "finished campaign's total is not 40"

# 5. Another binary: one whose runs differ (here: every message 1 us
# slower) is refused, naming a seed that runs differently; so is any other
# binary once there is no fingerprint to compare; one that runs the sampled
# seeds identically (another build of the same sources; here, the same
# binary with a byte appended) goes on.
[ "$(wc -l <"$c/fingerprints.log")" -eq 4 ] || fail "expected 4 fingerprints, one per chunk"
printf '#!/bin/sh\nexec "%s" "$@" --delay-us 1001\n' "$sim_bin" >"$work/slower-sim"
chmod +x "$work/slower-sim"
DMLOCK_SIM="$work/slower-sim" "$tool" --resume "$c" >"$work/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "resume with a binary that runs differently exited $rc, not 2"
grep -q 'not the dmlock-sim this campaign started with' "$work/out" || fail "no clear message for another binary"
grep -Eq 'runs differently: seed [0-9]+: campaign ' "$work/out" || fail "the differing seed is not named"
cp "$sim_bin" "$work/other-sim" && printf 'x' >>"$work/other-sim"
mv "$c/fingerprints.log" "$work/fp"
DMLOCK_SIM="$work/other-sim" "$tool" --resume "$c" >"$work/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "resume with another binary and no fingerprints exited $rc, not 2"
grep -q 'no seed to compare' "$work/out" || fail "no clear message for a campaign without fingerprints"
mv "$work/fp" "$c/fingerprints.log"
DMLOCK_SIM="$work/other-sim" "$tool" --resume "$c" >"$work/out" 2>&1
rc=$?
cat "$work/out"
[ "$rc" -eq 0 ] || fail "resume with another build that runs identically exited $rc"
grep -q 'runs the campaign.s 4 sampled seeds identically' "$work/out" || fail "no word on the sampled seeds"
grep -q '^tools/sim: 40 runs, 0 violations' "$work/out" || fail "other build's resume did not total 40"
rc=$(run --resume "$c" --nodes 5)
[ "$rc" -eq 2 ] || fail "resume with extra arguments exited $rc, not 2"
rc=$(run --resume "$work/nowhere")
[ "$rc" -eq 2 ] || fail "resume of a missing campaign exited $rc, not 2"

# 6. The campaign must be able to fail: Ricart-Agrawala without deferral.
b="$work/broken"
rc=$(run --seeds 1..20 --chunk 10 --jobs 2 --out "$b" --nodes 3 --no-faults --break never-defer)
cat "$work/out"
[ "$rc" -eq 1 ] || fail "a broken engine's campaign exited $rc, not 1"
grep -Eq '^tools/sim: 20 runs, [1-9][0-9]* violations' "$work/out" || fail "no violations counted"
grep -q '^DMSIM_SEED=[0-9]* nodes=3 VIOLATION mutual-exclusion' "$work/out" || fail "failing seeds not named"

# 7. Stopping tools/sim with SIGTERM stops the dmlock-sim it runs: a
# wrapper reports the process's PID through a FIFO (no polling), and once
# tools/sim has exited that process must be gone.
mkfifo "$work/started"
printf '#!/bin/sh\necho $$ >"%s"\nexec "%s" "$@"\n' "$work/started" "$sim_bin" >"$work/reporting-sim"
chmod +x "$work/reporting-sim"
DMLOCK_SIM="$work/reporting-sim" "$tool" --seeds 1..1000000 --chunk 1000000 --jobs 1 \
    --out "$work/stopped" --nodes 3 >"$work/out" 2>&1 &
tool_pid=$!
read -r sim_pid <"$work/started"
[ -n "$sim_pid" ] && kill -0 "$sim_pid" 2>/dev/null || fail "no dmlock-sim started"
kill -TERM "$tool_pid"
wait "$tool_pid"
if kill -0 "$sim_pid" 2>/dev/null; then
	kill "$sim_pid"
	fail "dmlock-sim $sim_pid outlived tools/sim stopped with SIGTERM"
fi
echo "PASS"
