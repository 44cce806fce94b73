#!/bin/bash
# 02-manpage: man/dmlock.1 is clean under `mandoc -T lint` and documents
# every exit code dmlock-cli/exit_codes.h defines and every run option.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

page="$top_srcdir/man/dmlock.1"
command -v mandoc >/dev/null || { echo "SKIP: mandoc not installed"; exit 77; }

mandoc -T lint "$page" >"$TEST_DIR/lint" 2>&1 || fail "mandoc -T lint: $(grep -v mandoc.db "$TEST_DIR/lint")"
pass "mandoc -T lint is clean"

codes=$(sed -n 's/.*DMLOCK_EXIT_[A-Z_]* = \([0-9]*\),.*/\1/p' "$top_srcdir/dmlock-cli/exit_codes.h")
[ -n "$codes" ] || fail "no exit codes found in exit_codes.h"
for code in $codes; do
	grep -q "^\.It $code\$" "$page" || fail "exit code $code is not documented in dmlock.1"
done
pass "every exit code is documented"

for opt in name nonblock wait shared exclusive conflict-exit-code on-lost kill-after socket json count; do
	grep -q -- "Fl -$opt" "$page" || fail "option --$opt is not documented in dmlock.1"
	grep -q -- "--$opt" "$top_srcdir/dmlock-cli/dmlock.bash-completion" ||
		fail "option --$opt is missing from the bash completion"
done
pass "every option is documented and completed"
