#!/bin/bash
# tests/ops/man-coverage.sh: every option printed by `dmlock --help`,
# `dmlock run --help` and `dmlockd --help` is documented in dmlock(1) /
# dmlockd(8), and every configuration key the config parser knows
# (`dmlockd --list-config-keys`) is documented in dmlockd.conf(5).  Negative
# controls: a copy of each page with one item removed must fail the check.
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
check=$top_srcdir/tests/ops/man-coverage.py
man=$top_srcdir/man
dmlock=$(find_built dmlock)
dmlockd=$(find_built dmlockd)

# Help texts (stdout and stderr: some print usage to stderr).
"$dmlock" --help >"$ops_tmp/dmlock.help" 2>&1 || true
"$dmlock" run --help >>"$ops_tmp/dmlock.help" 2>&1 || true
"$dmlockd" --help >"$ops_tmp/dmlockd.help" 2>&1 || true
grep -q -- '--name' "$ops_tmp/dmlock.help" || fail "dmlock run --help does not mention --name"
grep -q -- '--check-config' "$ops_tmp/dmlockd.help" || fail "dmlockd --help does not mention --check-config"

# Keys from the example config ("[section]" then ";key = default" lines).
sed -n -e 's/^\[\([a-z_]*\)\].*/S \1/p' -e 's/^[;#]\{0,1\}\([a-z_][a-z_]*\) *=.*/K \1/p' \
	"$top_srcdir/conf/dmlockd.conf.example" |
	awk '$1 == "S" { s = $2 } $1 == "K" && s != "" { print s "." $2 }' | sort -u >"$ops_tmp/example.keys"
[ -s "$ops_tmp/example.keys" ] || fail "no keys found in conf/dmlockd.conf.example"
# Keys from the parser's own table, when dmlockd can list them; the example
# must then name exactly the same keys.
if "$dmlockd" --list-config-keys >"$ops_tmp/keys.out" 2>"$ops_tmp/keys.err"; then
	awk '/^[a-z_]+\.[a-z_]+/ { print $1 }' "$ops_tmp/keys.out" | sort -u >"$ops_tmp/keys"
	[ -s "$ops_tmp/keys" ] || fail "dmlockd --list-config-keys printed no keys"
	diff -u "$ops_tmp/keys" "$ops_tmp/example.keys" >"$ops_tmp/keys.diff" ||
		fail "conf/dmlockd.conf.example and the parser disagree on keys: $(cat "$ops_tmp/keys.diff")"
else
	note "dmlockd --list-config-keys unavailable: using the keys of conf/dmlockd.conf.example"
	cp "$ops_tmp/example.keys" "$ops_tmp/keys"
fi

rc=0
python3 "$check" options "$man/dmlock.1" "$ops_tmp/dmlock.help" || rc=1
python3 "$check" options "$man/dmlockd.8" "$ops_tmp/dmlockd.help" || rc=1
python3 "$check" keys "$man/dmlockd.conf.5" "$ops_tmp/keys" || rc=1
[ $rc = 0 ] || fail "man pages are missing options or keys (listed above)"

# Negative controls: drop one documented item and the check must fail,
# naming it.
drop_and_expect_failure() {
	local mode=$1 page=$2 item=$3 pattern=$4 input=$5
	local copy=$ops_tmp/$(basename "$page").mutant
	grep -v -E -- "$pattern" "$page" >"$copy"
	cmp -s "$page" "$copy" && fail "negative control: pattern '$pattern' removed nothing from $page"
	if out=$(python3 "$check" "$mode" "$copy" "$input"); then
		fail "negative control: the check passed with $item removed from $(basename "$page")"
	fi
	echo "$out" | grep -q -- " $item is not documented" ||
		fail "negative control: missing $item not reported: $out"
	note "negative control ok: $item removed from $(basename "$page") is reported"
}
drop_and_expect_failure options "$man/dmlockd.8" --check-config 'Fl -check-config' "$ops_tmp/dmlockd.help"
drop_and_expect_failure options "$man/dmlock.1" --name 'Fl -name' "$ops_tmp/dmlock.help"
drop_and_expect_failure keys "$man/dmlockd.conf.5" cluster.lease '^\.It Cm lease$' "$ops_tmp/keys"
exit 0
