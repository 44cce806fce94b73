# tests/ops/lib.sh: shared helpers for the operations tests (sourced, not
# run): failure reporting, a scratch directory removed on exit, processes
# killed by PID on exit, bounded waits on real events, and locating the
# built binaries.
set -u

: "${top_srcdir:?top_srcdir must be set (make check exports it)}"
: "${top_builddir:?top_builddir must be set (make check exports it)}"

ops_pids=()
ops_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmlock-ops.XXXXXX")

ops_cleanup() {
	local pid
	for pid in "${ops_pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$ops_tmp"
}
trap ops_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() {
	echo "# $*"
}

# Remember a background PID so the EXIT trap kills it.
track_pid() {
	ops_pids+=("$1")
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 50 ms until it
# succeeds; fail after SECONDS.  Polls a real condition, never a fixed sleep.
wait_for() {
	local limit=$1 what=$2
	shift 2
	local tries=$((limit * 20)) i
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	fail "timed out after ${limit}s waiting for $what"
}

# The built dmlockd / dmlock (libtool wrappers or binaries), or fail.
find_built() {
	local name=$1 c
	for c in "$top_builddir/$name" "$top_builddir/dmlockd/$name" "$top_builddir/dmlock-cli/$name"; do
		if [ -f "$c" ] && [ -x "$c" ]; then
			echo "$c"
			return 0
		fi
	done
	fail "$name is not built under $top_builddir"
}

need_tool() {
	command -v "$1" >/dev/null 2>&1 || fail "$1 not found (install the Debian package $2)"
}

# For the tests that run clients under other uids and groups: root and
# setpriv(1), or the test is skipped.
need_root_and_setpriv() {
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
		echo "# needs root and setpriv (util-linux): skipped"
		exit 77
	fi
}

# python_for_uid UID: print a python3 that UID may run (not one under
# root's home); fails if there is none.
python_for_uid() {
	local c
	for c in $(type -a -p python3) /usr/bin/python3; do
		if setpriv --reuid="$1" --regid="$1" --clear-groups "$c" -c pass 2>/dev/null; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# log_has LOG TEXT: the daemon log LOG has a line containing TEXT.
log_has() { grep -q -- "$2" "$1" 2>/dev/null; }

# start_daemon_on CONF LOG: start $dmlockd on CONF, stderr to LOG, track it
# and wait until it listens; DAEMON_PID is its PID.
start_daemon_on() {
	"$dmlockd" -c "$1" 2>"$2" &
	DAEMON_PID=$!
	track_pid "$DAEMON_PID"
	wait_for 10 "dmlockd ($1) to listen" log_has "$2" "listening on"
}
