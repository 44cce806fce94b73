# tests/integration/lib.sh: shared helpers of the single-node integration
# tests (sourced, not run).  Every test gets its own temporary directory;
# every process a test starts is recorded and killed by PID in the EXIT
# trap; every wait is a bounded polling loop on a real event (a file or
# socket appearing, a process exiting), never a bare sleep.
#
# Environment: top_builddir / top_srcdir (exported by `make check`),
# DMLOCK and DMLOCKD to override the binaries under test.

set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
DMLOCK=${DMLOCK:-$top_builddir/dmlock}
if [ -z "${DMLOCKD:-}" ]; then
	DMLOCKD=$top_builddir/dmlockd/dmlockd
	[ -x "$DMLOCKD" ] || [ ! -x "$top_builddir/dmlockd" ] || DMLOCKD=$top_builddir/dmlockd
fi

# Seconds any single wait may take before the test fails.
WAIT_LIMIT=${WAIT_LIMIT:-20}

TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dmlock-$TEST_NAME.XXXXXX") || exit 99
mkdir -p "$TEST_DIR/pids"

TRACKED_PIDS=()
DAEMON_PID=
export DMLOCK_SOCKET="$TEST_DIR/dmlockd.sock"

# Kill every process we started: the recorded PIDs and every PID a
# command wrote into $TEST_DIR/pids/ (children and grandchildren).
cleanup()
{
	local rc=$? pid f

	for f in "$TEST_DIR"/pids/*; do
		[ -f "$f" ] || continue
		read -r pid < "$f" 2>/dev/null || continue
		case $pid in '' | *[!0-9]*) continue ;; esac
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${TRACKED_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${TRACKED_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ "$rc" -ne 0 ] && [ -f "$TEST_DIR/dmlockd.log" ]; then
		echo "--- dmlockd log ---" >&2
		tail -n 50 "$TEST_DIR/dmlockd.log" >&2
	fi
	rm -rf "$TEST_DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail()
{
	echo "FAIL ($TEST_NAME): $*" >&2
	exit 1
}

pass()
{
	echo "ok - $*"
}

# Remember a background process so the EXIT trap kills it: track_pid $!
track_pid()
{
	TRACKED_PIDS+=("$1")
}

# Sleep a poll interval (not synchronisation: only between checks).
poll_pause()
{
	sleep 0.02
}

# wait_until DESCRIPTION COMMAND...: poll COMMAND until it succeeds, at
# most WAIT_LIMIT seconds.
wait_until()
{
	local what=$1 i limit=$((WAIT_LIMIT * 50))

	shift
	for ((i = 0; i < limit; i++)); do
		"$@" && return 0
		poll_pause
	done
	fail "timed out after ${WAIT_LIMIT}s waiting for $what"
}

wait_for_file()
{
	wait_until "file $1" test -e "$1"
}

pid_alive()
{
	kill -0 "$1" 2>/dev/null
}

# Gone: no such process, or a zombie (its parent may not reap it soon).
pid_gone()
{
	pid_exited "$1"
}

# read_pid FILE: wait for a PID a command wrote (echo $$ > FILE); sets PID.
read_pid()
{
	wait_for_file "$1"
	wait_until "a PID in $1" grep -q '^[0-9][0-9]*$' "$1"
	read -r PID < "$1"
}

# wait_for_exit PID: wait until a process we did not start is gone.
wait_for_exit()
{
	wait_until "process $1 to exit" pid_gone "$1"
}

# wait_status PID: bounded wait for a child of this shell; sets STATUS.
wait_status()
{
	wait_until "process $1 to exit" pid_exited "$1"
	wait "$1"
	STATUS=$?
}

# True once a child of this shell has exited (a zombie counts as exited).
pid_exited()
{
	local stat

	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	case $stat in Z* | X*) return 0 ;; esac
	return 1
}

# Start dmlockd as a one-node service on $DMLOCK_SOCKET and wait for it;
# extra arguments go to dmlockd (e.g. -c CONFIG).
start_daemon()
{
	[ -x "${DMLOCKD%% *}" ] || command -v "${DMLOCKD%% *}" >/dev/null ||
		{ echo "ERROR: dmlockd not found at $DMLOCKD (build it first)" >&2; exit 99; }
	rm -f "$DMLOCK_SOCKET"
	# shellcheck disable=SC2086
	$DMLOCKD -S "$DMLOCK_SOCKET" --state-dir "$TEST_DIR/state" "$@" >>"$TEST_DIR/dmlockd.log" 2>&1 &
	DAEMON_PID=$!
	track_pid "$DAEMON_PID"
	wait_until "dmlockd's socket $DMLOCK_SOCKET" daemon_answers
}

daemon_answers()
{
	pid_alive "$DAEMON_PID" || fail "dmlockd exited at start (log: $(tail -n 5 "$TEST_DIR/dmlockd.log"))"
	[ -S "$DMLOCK_SOCKET" ] && "$DMLOCK" ping >/dev/null 2>&1
}

# Stop the daemon: SIGTERM, then SIGKILL if it lingers past WAIT_LIMIT.
stop_daemon()
{
	local i

	[ -n "$DAEMON_PID" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	for ((i = 0; i < WAIT_LIMIT * 50; i++)); do
		pid_exited "$DAEMON_PID" && break
		poll_pause
	done
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# Kill the daemon with SIGKILL and reap it.
kill_daemon()
{
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# expect_status WANT DESCRIPTION COMMAND...: run COMMAND (bounded) and check
# its exit status; its stderr is left in $TEST_DIR/last.err.
expect_status()
{
	local want=$1 what=$2 rc

	shift 2
	timeout -k 5 "$WAIT_LIMIT" "$@" >"$TEST_DIR/last.out" 2>"$TEST_DIR/last.err"
	rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "$what: exit status $rc, expected $want (stderr: $(cat "$TEST_DIR/last.err"))"
}

# Fail unless the last command's stderr contains TEXT.
expect_stderr()
{
	grep -qF -- "$1" "$TEST_DIR/last.err" ||
		fail "stderr lacks '$1': $(cat "$TEST_DIR/last.err")"
}

# A lock holder that keeps NAME until release_holder TAG: its command
# blocks reading a fifo.  Extra dmlock run options may follow the tag.
# Waits until the command runs (the lock is granted).
start_holder()
{
	local tag=$1 name=$2

	shift 2
	mkfifo "$TEST_DIR/$tag.fifo"
	"$DMLOCK" run --name "$name" "$@" -- sh -c \
		'echo $$ > "$1/pids/$2.child"; read -r line < "$1/$2.fifo"; echo released > "$1/$2.done"' \
		sh "$TEST_DIR" "$tag" 2>"$TEST_DIR/$tag.err" &
	eval "HOLDER_PID_$tag=$!"
	track_pid "$!"
	wait_for_file "$TEST_DIR/pids/$tag.child"
}

# Let the holder's command finish (bounded: the writer gives up after
# WAIT_LIMIT seconds if nobody reads).
release_holder()
{
	timeout "$WAIT_LIMIT" sh -c 'echo go > "$1"' sh "$TEST_DIR/$1.fifo" ||
		fail "holder $1 is not reading its fifo"
}

# check_no_overlap LOG COUNT: LOG holds "enter ID"/"exit ID" lines from
# critical sections; fail unless they never overlap and COUNT completed.
check_no_overlap()
{
	awk -v want="$2" '
		$1 == "enter" {
			if (inside != "") { print "overlap: " $2 " entered while " inside " inside (line " NR ")"; bad = 1; exit }
			inside = $2; next
		}
		$1 == "exit" {
			if (inside != $2) { print "exit of " $2 " while " (inside == "" ? "nobody" : inside) " inside (line " NR ")"; bad = 1; exit }
			inside = ""; done++; next
		}
		{ print "bad line " NR ": " $0; bad = 1; exit }
		END {
			if (bad) exit 1
			if (inside != "") { print inside " never exited"; exit 1 }
			if (done != want) { print done " critical sections, expected " want; exit 1 }
		}' "$1"
}

# $AS_NOBODY COMMAND...: run COMMAND as uid/gid 65534 without supplementary
# groups (a plain word list, so it also works under timeout and
# expect_status).  Only as root: check can_drop_privileges first.
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
can_drop_privileges()
{
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
		$AS_NOBODY test -x "$DMLOCK"
}
