#!/bin/bash
# 18-access: [access] rules in dmlockd.conf.  Run as an unprivileged user
# (uid 65534): exclusive and shared requests are allowed or refused per
# name prefix, a refusal exits 77 with the rule in the message and leaves a
# log line, roster operations are refused to a non-admin and allowed once
# the [access] roster setting names the user, and SIGHUP reloads the rules.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck disable=SC2086 # $AS_NOBODY is a word list

if ! can_drop_privileges; then
	echo "# not root or no setpriv: access control needs a second user; skipped"
	exit 77
fi
chmod 0755 "$TEST_DIR"

cat > "$TEST_DIR/dmlockd.conf" <<'EOF'
[node]
name = acl-node

[local]
socket_mode = 0666

[access]
lock = 65534:ex:mine/, *:sh:docs/
lock = *:none:secret/
lock = root:ex:*
EOF
start_daemon -c "$TEST_DIR/dmlockd.conf"

# Exclusive under a prefix the user owns.
expect_status 0 "nobody, exclusive mine/a" $AS_NOBODY "$DMLOCK" run --name mine/a -- true
# Shared allowed, exclusive refused under docs/.
expect_status 0 "nobody, shared docs/a" $AS_NOBODY "$DMLOCK" run -s --name docs/a -- true
expect_status 77 "nobody, exclusive docs/a" $AS_NOBODY "$DMLOCK" run --name docs/a -- true
expect_stderr "denied exclusive lock docs/a"
expect_stderr "*:sh:docs/ (dmlockd.conf line 8)"
pass "per-prefix modes: shared allowed, exclusive refused with the rule named"

# none: refused even shared; the command never runs.
expect_status 77 "nobody, shared secret/x" $AS_NOBODY "$DMLOCK" run -s --name secret/x -- \
	touch "$TEST_DIR/ran"
expect_stderr "*:none:secret/ (dmlockd.conf line 9)"
[ -e "$TEST_DIR/ran" ] && fail "the command ran without its lock"
# No rule matches: refused, and the message says so.
expect_status 77 "nobody, unmatched name" $AS_NOBODY "$DMLOCK" run --name other -- true
expect_stderr "no [access] lock rule matches"
# root has its own catch-all rule.
expect_status 0 "root, exclusive other" "$DMLOCK" run --name other -- true
pass "none and unmatched names are refused; root's rule applies to root"

grep -q "denied exclusive lock to pid [0-9]* uid 65534: .*lock=docs/a" "$TEST_DIR/dmlockd.log" ||
	fail "no log line for the denial: $(cat "$TEST_DIR/dmlockd.log")"
pass "denials are logged with uid and lock"

# The raw protocol: DENIED <id> denied <text>, at once (no hang).
if command -v socat >/dev/null; then
	printf 'ACQUIRE r1 secret/y ex forever\n' |
		timeout "$WAIT_LIMIT" $AS_NOBODY socat -t 2 - UNIX-CONNECT:"$DMLOCK_SOCKET" \
		>"$TEST_DIR/raw.out" || fail "socat failed"
	grep -q '^DENIED r1 denied .*secret/' "$TEST_DIR/raw.out" ||
		fail "no DENIED line: $(cat "$TEST_DIR/raw.out")"
	pass "ACQUIRE forever is answered DENIED at once"
fi

# Roster operations: root only by default.
expect_status 77 "nobody, remove" $AS_NOBODY "$DMLOCK" remove ghost
expect_stderr "may not change the roster"
expect_status 77 "nobody, join" $AS_NOBODY "$DMLOCK" join a@127.0.0.1:7000
expect_status 77 "nobody, leave" $AS_NOBODY "$DMLOCK" leave
pid_alive "$DAEMON_PID" || fail "a refused leave stopped dmlockd"
grep -q "denied leave to pid [0-9]* uid 65534" "$TEST_DIR/dmlockd.log" ||
	fail "no log line for the refused leave"
pass "roster operations refused to a non-admin"

# SIGHUP: allow the user roster operations and open docs/ for writing.
cat > "$TEST_DIR/dmlockd.conf" <<'EOF'
[node]
name = acl-node

[local]
socket_mode = 0666

[access]
lock = *:ex:docs/
roster = 65534
EOF
lines=$(wc -l < "$TEST_DIR/dmlockd.log")
kill -HUP "$DAEMON_PID"
reloaded()
{
	tail -n +"$((lines + 1))" "$TEST_DIR/dmlockd.log" | grep -q "access control: 1 lock rule"
}
wait_until "the reload" reloaded
expect_status 0 "nobody, exclusive docs/a after reload" $AS_NOBODY "$DMLOCK" run --name docs/a -- true
expect_status 77 "nobody, mine/a after reload" $AS_NOBODY "$DMLOCK" run --name mine/a -- true
# Allowed now: the answer is about the node, not about permission.
expect_status 64 "nobody, remove after reload" $AS_NOBODY "$DMLOCK" remove ghost
expect_stderr "no node 'ghost' in the roster"
pass "SIGHUP reloads the rules"

stop_daemon
