#!/bin/bash
# 17-status: `dmlock status` shows a held lock with its holder's PID and
# token; `--json` is valid JSON with the same facts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon
start_holder A status/lock-1
holder=$HOLDER_PID_A

expect_status 0 "status" "$DMLOCK" status
out="$TEST_DIR/last.out"
grep -q '^node:' "$out" || fail "status shows no node: $(cat "$out")"
grep -q '^algorithm:' "$out" || fail "status shows no algorithm"
grep -Eq "^  status/lock-1 +exclusive +held +[0-9]+ .* $holder " "$out" ||
	fail "status does not show the held lock of PID $holder: $(cat "$out")"
pass "status shows the held lock"

expect_status 0 "status --json" "$DMLOCK" status --json
cp "$TEST_DIR/last.out" "$TEST_DIR/status.json"
if command -v python3 >/dev/null; then
	python3 - "$TEST_DIR/status.json" "$holder" <<'PY' || fail "bad JSON: $(cat "$TEST_DIR/status.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert isinstance(doc["node"]["name"], str), "node name"
assert isinstance(doc["peers"], list), "peers"
locks = [l for l in doc["locks"] if l["name"] == "status/lock-1"]
assert len(locks) == 1, locks
assert locks[0]["state"] == "held" and locks[0]["mode"] == "exclusive", locks
assert locks[0]["pid"] == int(sys.argv[2]), locks
assert locks[0]["token"] >= 1, locks
PY
elif command -v jq >/dev/null; then
	jq -e --argjson pid "$holder" \
		'.locks[] | select(.name == "status/lock-1" and .state == "held" and .pid == $pid)' \
		"$TEST_DIR/status.json" >/dev/null || fail "bad JSON: $(cat "$TEST_DIR/status.json")"
else
	echo "# neither python3 nor jq: JSON not validated"
fi
pass "status --json"

release_holder A
wait_status "$holder"
expect_status 0 "status --json after release" "$DMLOCK" status --json
grep -q 'status/lock-1' "$TEST_DIR/last.out" && fail "released lock still listed"
pass "released lock disappears from status"

stop_daemon
