#!/bin/bash
# tests/transport/two_process.sh: two real processes (tests/transport/
# peer_node) linked over TLS on loopback (IPv6 ::1 when available, else
# 127.0.0.1): 5000 messages each way arrive in order; beta is killed with
# SIGKILL and started again with a new incarnation: alpha reports "down",
# then "restarted beta 2", and the new beta's 5000 messages arrive in order.
set -euo pipefail
: "${top_srcdir:?}" "${top_builddir:?}"
node="$top_builddir/tests/transport/peer_node"
tmp=$(mktemp -d /tmp/dmlock-two-process-XXXXXX)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
fail() { echo "FAIL: $*" >&2; for f in "$tmp"/*.out "$tmp"/*.err; do echo "--- $f"; cat "$f"; done >&2; exit 1; }

# wait_for FILE REGEX [COUNT]: until FILE has COUNT lines matching (10 s).
wait_for() {
	local file=$1 re=$2 want=${3:-1}
	for ((i = 0; i < 200; i++)); do
		[[ $(grep -cE -- "$re" "$file" 2>/dev/null || true) -ge $want ]] && return 0
		sleep 0.05
	done
	fail "timed out waiting for '$re' x$want in $file"
}

"$top_srcdir/tools/mkcerts" -d "$tmp/certs" alpha beta

listen=127.0.0.1:0
if grep -q '^0*1 ' /proc/net/if_inet6 2>/dev/null; then
	listen='[::1]:0'
fi
"$node" --name alpha --certs "$tmp/certs" --listen "$listen" --count 5000 >"$tmp/alpha.out" 2>"$tmp/alpha.err" &
alpha=$!
pids+=($alpha)
wait_for "$tmp/alpha.out" '^listening '
addr=$(sed -n 's/^listening //p' "$tmp/alpha.out" | head -1)

"$node" --name beta --certs "$tmp/certs" --peer "alpha@$addr" --count 5000 --incarnation 1 \
	>"$tmp/beta1.out" 2>"$tmp/beta1.err" &
beta=$!
pids+=($beta)
wait_for "$tmp/alpha.out" '^received beta 5000$'
wait_for "$tmp/beta1.out" '^received alpha 5000$'
! grep -q order-error "$tmp/alpha.out" "$tmp/beta1.out" || fail "messages out of order"

kill -9 "$beta"
wait "$beta" 2>/dev/null || true
wait_for "$tmp/alpha.out" '^down beta$'

"$node" --name beta --certs "$tmp/certs" --peer "alpha@$addr" --count 5000 --incarnation 2 \
	>"$tmp/beta2.out" 2>"$tmp/beta2.err" &
beta=$!
pids+=($beta)
wait_for "$tmp/alpha.out" '^restarted beta 2$'
wait_for "$tmp/alpha.out" '^received beta 5000$' 2
wait_for "$tmp/beta2.out" '^received alpha 5000$'
! grep -q order-error "$tmp/alpha.out" "$tmp/beta2.out" || fail "messages out of order after restart"
! grep -q '^restarted' "$tmp/beta2.out" || fail "the new beta saw a restart on first contact"

# Both stop cleanly on SIGTERM (and, in a sanitizer build, without reports).
for pid in "$alpha" "$beta"; do
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[[ $status -eq 0 ]] || { cat "$tmp"/*.err >&2; fail "a node exited with status $status"; }
done
echo "two_process: ok over $listen"
