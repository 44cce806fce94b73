#!/bin/bash
# tests/ops/man-lint.sh: `mandoc -T lint -W warning` is silent on every man
# page in man/; a page with a known defect must be reported (negative control).
. "$top_srcdir/tests/ops/lib.sh"

need_tool mandoc mandoc
n=0
for page in "$top_srcdir"/man/*.[1-8]; do
	[ -e "$page" ] || continue
	out=$(mandoc -T lint -W warning "$page" 2>&1) || fail "mandoc -T lint: $out"
	[ -z "$out" ] || fail "mandoc -T lint: $out"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n man pages found in $top_srcdir/man"
note "$n man pages lint-clean"

# Negative control: an unknown section reference and a missing .Nd.
bad=$ops_tmp/bad.8
sed -e '/^\.Nd /d' "$top_srcdir/man/dmlockd.8" >"$bad"
mandoc -T lint -W warning "$bad" >/dev/null 2>&1 && fail "negative control: mandoc accepted a page without .Nd"
exit 0
