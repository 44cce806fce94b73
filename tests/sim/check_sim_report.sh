#!/bin/bash
# tests/sim/check_sim_report.sh: the side-by-side algorithm report at a
# small scale (N = 5 and 13, short runs): every algorithm's figures must be
# within its paper's bound or a documented reason (exit 0), and the report
# must be able to fail: with every bound scaled by 0.9 (a deliberately
# wrong claim) and with Ricart-Agrawala's deferral broken (--break
# never-defer) it must exit 1.
set -u
bin="${top_builddir:-.}/tests/sim/dmlock-sim-report"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

# 1. The report itself: all eight algorithms, both sizes, all loads, and a
# crashed coordinator that stays down, with both elections, under the
# hierarchical algorithm and under raymond (token regeneration).
"$bin" --nodes 5,13 --calm-ms 100 --no-paper-setting \
    --election-algorithms hierarchical,raymond >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "the report found an unexplained difference or a violation (exit $rc)"
for a in ricart-agrawala lamport maekawa rcv hierarchical suzuki-kasami raymond naimi-trehel; do
	for n in 5 13; do
		grep -Eq "^$n +(light|heavy) +$a " "$out" || fail "no row for $a at N=$n"
	done
done
grep -Eq '^5 +light +ricart-agrawala +8\.000 ' "$out" ||
	fail "RA at N=5 light does not show 2(N-1) = 8 messages per entry"
for a in hierarchical raymond; do
	grep -Eq "^$a +bully +13 +n1 .* PASS\$" "$out" ||
		fail "$a: bully did not make n1 the new coordinator"
	grep -Eq "^$a +invitation +13 +n[0-9]+ .* PASS\$" "$out" ||
		fail "$a: invitation elected nobody"
done

# RCV against Maekawa in Cao et al.'s setting at N = 30 (section 6.2): rcv
# must send fewer messages at every load from 1 up.  The default 400 ms
# window: at load 1 the margin is thin (19.05 against 19.51), and a 100 ms
# window puts maekawa's 19.04 below it (NOTES-report.md).
"$bin" --nodes 5 --algorithms rcv --loads light --paper-nodes 30 --no-elections >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "paper setting: an unexplained difference or a violation (exit $rc)"
for load in 1.00 3.00 30.00 inf; do
	grep -Eq "^[0-9]+ +$load .* rcv < maekawa +PASS\$" "$out" ||
		fail "paper setting, N = 30, load $load: rcv does not send fewer messages than maekawa"
done

# 2. Negative control: a wrong claim (every bound x 0.9) must be reported.
"$bin" --nodes 5 --calm-ms 100 --algorithms ricart-agrawala,lamport --loads light \
    --no-paper-setting --no-elections --claim-scale 0.9 >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "bounds x 0.9: exit $rc, expected 1"
grep -q 'DIFFERS UNEXPLAINED msgs = 8.000, paper 2(N-1)=7' "$out" ||
	fail "bounds x 0.9: RA's 8 messages not reported against the wrong claim 7.2"

# 3. Negative control: RA without deferral is caught (a violation, exit 1).
"$bin" --nodes 5 --calm-ms 100 --algorithms ricart-agrawala --loads heavy \
    --no-paper-setting --no-elections --break never-defer >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "--break never-defer: exit $rc, expected 1"
grep -q 'VIOLATION' "$out" || fail "--break never-defer: no VIOLATION row"
echo "PASS: report within bounds; both negative controls fail as they must"
