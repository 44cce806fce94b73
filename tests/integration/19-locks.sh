#!/bin/bash
# 19-locks: `dmlock locks` lists a held lock and a waiter with node, mode,
# token and holder, as text and as valid JSON; `dmlock status` has the
# capability line and per-peer link fields; `dmlock ping` speaks of the
# peers; a shared request on an exclusive-only algorithm is refused with
# the algorithm named.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

json_ok()
{
	python3 -m json.tool "$1" >/dev/null 2>&1 || fail "not valid JSON: $(cat "$1")"
}

start_daemon
start_holder A locks/one
holder=$HOLDER_PID_A
# A waiter behind it.
"$DMLOCK" run --name locks/one -- true 2>"$TEST_DIR/waiter.err" &
waiter=$!
track_pid "$waiter"
waiting()
{
	"$DMLOCK" locks >"$TEST_DIR/locks.out" 2>&1 && grep -q ' waiting ' "$TEST_DIR/locks.out"
}
wait_until "the waiter to queue" waiting

node=$("$DMLOCK" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["node"]["name"])')
[ -n "$node" ] || fail "no node name in status --json"
expect_status 0 "locks" "$DMLOCK" locks
out="$TEST_DIR/last.out"
grep -Eq "^  locks/one +exclusive +held +$node +[0-9]+ .* $holder " "$out" ||
	fail "locks does not show the held lock of $holder on $node: $(cat "$out")"
grep -Eq "^  locks/one +exclusive +waiting +$node +- " "$out" ||
	fail "locks does not show the waiter: $(cat "$out")"
grep -q "sees only its own node" "$out" || fail "locks does not say what it can see"
pass "locks lists holder and waiter"

expect_status 0 "locks --json" "$DMLOCK" locks --json
cp "$TEST_DIR/last.out" "$TEST_DIR/locks.json"
json_ok "$TEST_DIR/locks.json"
python3 - "$TEST_DIR/locks.json" "$holder" "$node" <<'PY' || fail "locks --json: $(cat "$TEST_DIR/locks.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["node"] == sys.argv[3] and doc["scope"] == "local", doc
held = [l for l in doc["locks"] if l["state"] == "held"]
waiting = [l for l in doc["locks"] if l["state"] == "waiting"]
assert len(held) == 1 and len(waiting) == 1, doc
assert held[0]["name"] == "locks/one" and held[0]["pid"] == int(sys.argv[2]), held
assert held[0]["token"] >= 1 and held[0]["node"] == sys.argv[3], held
assert waiting[0]["token"] == 0, waiting
PY
pass "locks --json"

expect_status 0 "status" "$DMLOCK" status
grep -q '^modes: ' "$TEST_DIR/last.out" || fail "status has no capability line: $(cat "$TEST_DIR/last.out")"
grep -q 'LAST CONTACT' "$TEST_DIR/last.out" || fail "status has no peer contact column"
expect_status 0 "status --json" "$DMLOCK" status --json
cp "$TEST_DIR/last.out" "$TEST_DIR/status.json"
json_ok "$TEST_DIR/status.json"
python3 - "$TEST_DIR/status.json" <<'PY' || fail "status --json: $(cat "$TEST_DIR/status.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["shared_supported"] in (True, False, None), doc
peers = doc["peers"]
assert len(peers) == 1 and peers[0]["link"] == "self", peers
assert "last_contact_ms" in peers[0] and "rtt_us" in peers[0], peers
PY
pass "status shows capabilities and peer link fields; JSON valid"

expect_status 0 "ping" "$DMLOCK" ping
grep -q "^pong from dmlockd" "$TEST_DIR/last.out" || fail "ping: $(cat "$TEST_DIR/last.out")"
grep -q "one-node cluster" "$TEST_DIR/last.out" || fail "ping does not report the (absent) peers"
pass "ping reports the daemon and its peers"

release_holder A
wait_status "$holder"
wait_status "$waiter"
[ "$STATUS" -eq 0 ] || fail "waiter exited $STATUS"
expect_status 0 "locks after release" "$DMLOCK" locks --json
grep -q 'locks/one' "$TEST_DIR/last.out" && fail "released lock still listed"
pass "released locks disappear"
stop_daemon

# An algorithm without shared mode: the refusal names it.
cat > "$TEST_DIR/lamport.conf" <<'CONF'
[node]
name = solo
[cluster]
algorithm = lamport
CONF
start_daemon -c "$TEST_DIR/lamport.conf"
expect_status 69 "shared lock on lamport" "$DMLOCK" run -s --name sh/x -- touch "$TEST_DIR/ran"
expect_stderr "lamport does not support shared locks"
[ -e "$TEST_DIR/ran" ] && fail "the command ran without its lock"
if command -v socat >/dev/null; then
	printf 'ACQUIRE s1 sh/x sh try\n' | timeout "$WAIT_LIMIT" socat -t 2 - \
		UNIX-CONNECT:"$DMLOCK_SOCKET" >"$TEST_DIR/raw.out" || fail "socat failed"
	grep -q '^DENIED s1 unsupported shared locks are not supported by algorithm lamport' \
		"$TEST_DIR/raw.out" || fail "DENIED text: $(cat "$TEST_DIR/raw.out")"
fi
expect_status 0 "exclusive lock on lamport" "$DMLOCK" run --name sh/x -- true
pass "shared refused with the algorithm named; exclusive works"
stop_daemon
