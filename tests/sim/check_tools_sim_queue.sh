#!/bin/bash
# tests/sim/check_tools_sim_queue.sh: tools/sim-queue, the driver of the
# campaigns kept in the repository, on a queue of three tiny campaigns in a
# scratch campaigns directory.  A first run starts and finishes each in
# order and leaves its state (campaign, progress and fingerprint logs) in
# the campaigns directory; a finished campaign is skipped; one whose state
# shows a chunk unfinished is resumed from that state, only that chunk
# running; the reports of a failing campaign are kept in violations.txt;
# --list totals each campaign; --breadth takes every campaign to a number of
# seeds before it runs any to its end; an edit of the queue file while it
# runs changes nothing.
set -u
src="${top_srcdir:-.}"
sim_bin="${top_builddir:-.}/tests/sim/dmlock-sim"
tool="$src/tools/sim-queue"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
camps="$scratch/campaigns"
mkdir -p "$camps"
cat >"$camps/QUEUE" <<'EOF'
# test queue
a | 1..20 | --nodes 3 --rotate-faults --chunk 10
b | 101..120 | --nodes 2 --rotate-faults --chunk 10

c | 1..10 | --nodes 3 --no-faults --break never-defer --chunk 10
EOF
run() {
	DMLOCK_SIM="$sim_bin" DMLOCK_CAMPAIGNS="$camps" "$tool" --work "$scratch/work" \
	    --sync 1 --jobs 2 "$@" >"$scratch/out" 2>&1
	echo $?
}

# 1. First run: every campaign runs; c, broken on purpose, has violations.
rc=$(run)
cat "$scratch/out"
[ "$rc" -eq 1 ] || fail "first run (c has violations) exited $rc, not 1"
for n in a b c; do
	for f in campaign progress.log fingerprints.log; do
		[ -s "$camps/$n/$f" ] || fail "$n/$f not kept"
	done
done
[ "$(grep -c ' runs, ' "$camps/a/progress.log")" -eq 2 ] || fail "a: expected 2 chunk lines"
[ "$(grep -c '^seed ' "$camps/a/fingerprints.log")" -eq 2 ] || fail "a: expected 2 fingerprints"
grep -q '^DMSIM_SEED=[0-9]* nodes=3 VIOLATION mutual-exclusion' "$camps/c/violations.txt" ||
	fail "c's violations not kept"
[ ! -e "$camps/a/violations.txt" ] || fail "a has a violations.txt without violations"

# 2. --list totals them.
rc=$(run --list)
cat "$scratch/out"
[ "$rc" -eq 0 ] || fail "--list exited $rc"
grep -Eq '^a +20 of +20 seeds, 0 violations$' "$scratch/out" || fail "--list: a"
grep -Eq '^c +10 of +10 seeds, [1-9][0-9]* violations$' "$scratch/out" || fail "--list: c"

# 3. A second run skips what is done; with one chunk of b unfinished (its
# line gone from the kept progress log), it resumes b from the kept state
# and runs that chunk only.
grep -v 'seeds 111\.\.120$' "$camps/b/progress.log" >"$scratch/p" && mv "$scratch/p" "$camps/b/progress.log"
rm -rf "$scratch/work"
rc=$(run)
cat "$scratch/out"
[ "$rc" -eq 0 ] || fail "second run exited $rc"
grep -q 'tools/sim-queue: a: done (20 runs, 0 violations)' "$scratch/out" || fail "a not skipped"
grep -q '^tools/sim: resuming seeds 101..120' "$scratch/out" || fail "b not resumed"
[ "$(grep -c ' runs, [0-9]* violations seeds ' "$scratch/out")" -eq 1 ] || fail "the resume ran more than one chunk"
grep -q ' 10 runs, 0 violations seeds 111\.\.120$' "$scratch/out" || fail "the resume did not run 111..120"
[ "$(grep -c ' runs, ' "$camps/b/progress.log")" -eq 2 ] || fail "b's kept progress not complete again"

# 4. --breadth 20 on a fresh queue of two campaigns of 40 seeds (two
# processes, chunks of 10): first one chunk a process of d, then of e, and
# only then the rest of d, then of e.
camps="$scratch/breadth"
mkdir -p "$camps"
cat >"$camps/QUEUE" <<'EOF'
d | 1..40 | --nodes 3 --rotate-faults --chunk 10
e | 101..140 | --nodes 2 --rotate-faults --chunk 10
EOF
rm -rf "$scratch/work"
rc=$(run --breadth 20)
cat "$scratch/out"
[ "$rc" -eq 0 ] || fail "--breadth run exited $rc"
order=$(sed -n 's/^[0-9:]* 10 runs, 0 violations seeds \([0-9]*\)\.\.[0-9]*$/\1/p' "$scratch/out" |
    awk '{ c = $1 > 100 ? "e" : "d"; if (c != last) printf "%s", c; last = c }')
[ "$order" = "dede" ] || fail "--breadth ran the campaigns in the order '$order', not 'dede'"
for n in d e; do
	[ "$(grep -c ' runs, ' "$camps/$n/progress.log")" -eq 4 ] || fail "$n: not run to its end after the breadth pass"
done
camps="$scratch/campaigns"

# 5. The queue file edited in place while a campaign runs (comment lines
# added at its top, as a session does to note an engine) does not upset
# the campaigns after it: a wrapper of dmlock-sim makes the edit once.
camps="$scratch/edited"
mkdir -p "$camps"
cat >"$camps/QUEUE" <<'EOF'
f | 1..10 | --nodes 3 --rotate-faults --chunk 10
g | 101..110 | --nodes 2 --rotate-faults --chunk 10
EOF
cat >"$scratch/editing-sim" <<EOF
#!/bin/sh
if [ ! -e "$scratch/edited.mark" ]; then
	: >"$scratch/edited.mark"
	{ printf '# a note added while the queue runs,\n# two lines long\n'; cat "$camps/QUEUE"; } >"$scratch/q"
	cat "$scratch/q" >"$camps/QUEUE"
fi
exec "$sim_bin" "\$@"
EOF
chmod +x "$scratch/editing-sim"
rm -rf "$scratch/work"
DMLOCK_SIM="$scratch/editing-sim" DMLOCK_CAMPAIGNS="$camps" "$tool" --work "$scratch/work" \
    --sync 1 --jobs 1 >"$scratch/out" 2>&1
rc=$?
cat "$scratch/out"
[ -e "$scratch/edited.mark" ] || fail "the wrapper never edited the queue"
[ "$rc" -eq 0 ] || fail "a queue edited while it ran exited $rc"
for n in f g; do
	[ "$(grep -c ' runs, ' "$camps/$n/progress.log" 2>/dev/null)" = 1 ] || fail "$n did not run after the edit"
done
camps="$scratch/campaigns"

# 6. Misuse: no binary.
DMLOCK_SIM="$scratch/none" DMLOCK_CAMPAIGNS="$camps" "$tool" >"$scratch/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "a missing binary exited $rc, not 2"
echo "PASS"
