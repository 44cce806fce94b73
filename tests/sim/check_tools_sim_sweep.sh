#!/bin/bash
# tests/sim/check_tools_sim_sweep.sh: tools/sim-sweep, the check an engine
# change passes before it lands, on a scratch queue of one line: it runs
# the line, its four storm sweeps and its four fault-free workloads (nine
# runs) and exits 0 when none has a violation; a line broken on purpose
# (--break never-defer) makes it exit 1 and keeps the failing run's
# report; misuse (no binary, an --out directory that holds something
# else) exits 2 and touches nothing.
set -u
src="${top_srcdir:-.}"
sim_bin="${top_builddir:-.}/tests/sim/dmlock-sim"
tool="$src/tools/sim-sweep"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch/good" "$scratch/bad"
echo 'e0-ok | 1..10 | --nodes 2-3 --rotate-faults --restarts both' > "$scratch/good/QUEUE"
echo 'e0-broken | 1..10 | --nodes 3 --no-faults --break never-defer' > "$scratch/bad/QUEUE"
sweep() {
	local camps="$1"; shift
	DMLOCK_SIM="$sim_bin" DMLOCK_CAMPAIGNS="$camps" "$tool" --seeds 4 --storm-seeds 2 \
	    --calm-seeds 2 --jobs 2 "$@" >"$scratch/out" 2>&1
	echo $?
}

# 1. A sound line: nine runs, 0 violations, exit 0.
rc=$(sweep "$scratch/good" --out "$scratch/s1")
cat "$scratch/out"
[ "$rc" -eq 0 ] || fail "a sound line exited $rc, not 0"
grep -q '^tools/sim-sweep: 9 runs, 0 violations, 0 without a summary$' "$scratch/out" ||
    fail "the total is not nine runs without violations"
for n in ok ok-storm-ff ok-storm-80 ok-storm-a5 ok-storm-95 ok-calm-random ok-calm-forever \
    ok-calm-light ok-calm-heavy; do
	grep -q "^$n  *[0-9]* runs, 0 violations$" "$scratch/out" || fail "no line for run $n"
	[ -s "$scratch/s1/$n.log" ] || fail "no log for run $n"
done
grep -q -- '--seeds 1..2 --safety-only --fault-mask 80 --nodes 3-8 --restarts both' \
    "$scratch/s1/tasks" || fail "the storm sweep does not run on 3-8 nodes, safety only"
grep -q -- '--rotate-faults' <(grep storm "$scratch/s1/tasks") &&
    fail "a storm sweep kept the line's --rotate-faults"

# 2. A broken line: violations, exit 1, the report kept.
rc=$(sweep "$scratch/bad" --out "$scratch/s2")
cat "$scratch/out"
[ "$rc" -eq 1 ] || fail "a broken line exited $rc, not 1"
grep -q '^broken  *4 runs, [1-4] violations$' "$scratch/out" ||
    fail "the broken line's violations are not counted"
grep -q 'VIOLATION' "$scratch/s2/broken.log" || fail "the failing run's report was not kept"

# 3. Misuse: an --out that holds no sweep is left alone; no binary.
mkdir -p "$scratch/precious" && echo keep > "$scratch/precious/file"
rc=$(sweep "$scratch/good" --out "$scratch/precious")
[ "$rc" -eq 2 ] || fail "an --out holding something else exited $rc, not 2"
[ -f "$scratch/precious/file" ] || fail "an --out holding something else was emptied"
rc=$(DMLOCK_SIM="$scratch/none" DMLOCK_CAMPAIGNS="$scratch/good" "$tool" --out "$scratch/s3" \
    >/dev/null 2>&1; echo $?)
[ "$rc" -eq 2 ] || fail "a missing binary exited $rc, not 2"
echo "PASS"
