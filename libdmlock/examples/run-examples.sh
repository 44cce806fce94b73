#!/bin/bash
# run-examples.sh: make check test: start a dmlockd on a temporary socket,
# run both libdmlock examples against it and check what they print.
set -eu
builddir=${top_builddir:?}
tmp=$(mktemp -d /tmp/dmlock-examples-XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
export DMLOCK_SOCKET=$tmp/dmlockd.sock
# A state directory of its own: the default one may belong to a dmlockd
# already running on this host (tools/quickstart leaves one).
"$builddir/dmlockd/dmlockd" -S "$DMLOCK_SOCKET" --state-dir "$tmp/state" --log-level warning &
pid=$!
for _ in $(seq 1 500); do
	if [ -S "$DMLOCK_SOCKET" ] && "$builddir/libdmlock/examples/blocking" probe >/dev/null 2>&1; then
		break
	fi
	kill -0 "$pid"
	sleep 0.02	# polling for the socket to appear, bounded to 10 s
done

out=$("$builddir/libdmlock/examples/blocking" example/x)
echo "$out"
grep -Eq '^acquired example/x token [1-9][0-9]*$' <<<"$out"
grep -q '^working, step 2$' <<<"$out"
grep -q '^released example/x$' <<<"$out"

out=$("$builddir/libdmlock/examples/poll" example/y)
echo "$out"
grep -Eq '^granted example/y token [1-9][0-9]*$' <<<"$out"
grep -q '^denied example/y: lock is held by someone else$' <<<"$out"
grep -q '^released example/y$' <<<"$out"
echo "examples OK"
