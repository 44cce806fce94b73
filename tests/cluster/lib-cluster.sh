# tests/cluster/lib-cluster.sh: helpers of the multi-daemon tests (sourced).
# Builds on tests/integration/lib.sh (temp dir, PID tracking, bounded
# waits, EXIT trap) and adds: development certificates, free loopback
# ports, per-node configs with short timeouts, starting/stopping nodes and
# waiting until their links are up, and the mutual-exclusion checker.
#
# Node I lives in $TEST_DIR/nodeI/ (dmlockd.conf, dmlockd.log, dmlockd.sock)
# and listens on 127.0.0.1:${PORT[I]}; its PID is ${NODE_PID[I]}.

# The dmlock CLI without its libtool wrapper script (which costs a shell
# start per call; the tests make thousands of calls).
_cluster_top=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ -z "${DMLOCK:-}" ] && [ -x "$_cluster_top/.libs/dmlock" ] &&
	head -c 2 "$_cluster_top/dmlock" 2>/dev/null | grep -q '#!'; then
	DMLOCK=$_cluster_top/.libs/dmlock
	export LD_LIBRARY_PATH="$_cluster_top/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

LOCKER=${LOCKER:-$top_builddir/tests/cluster/cluster_locker}
CHECKER=$top_srcdir/tests/cluster/check-mutex.awk
CERTS=$TEST_DIR/certs

# Short timeouts so fault tests finish in seconds.  They keep the engine's
# inequality L/(1-rho) + D_stop < T_fail/(1+rho) with D_stop = 1 s,
# rho = 1%: 1000/0.99 + 1000 = 2010 < (1500 + 1000)/1.01 = 2475.
CLUSTER_REQUEST_TIMEOUT=${CLUSTER_REQUEST_TIMEOUT:-1500ms}
CLUSTER_PROBE_TIMEOUT=${CLUSTER_PROBE_TIMEOUT:-1s}
CLUSTER_LEASE=${CLUSTER_LEASE:-1s}
CLUSTER_HEARTBEAT=${CLUSTER_HEARTBEAT:-200ms}
CLUSTER_RESTART_INTERVAL=${CLUSTER_RESTART_INTERVAL:-1s}
CLUSTER_ALGORITHM=${CLUSTER_ALGORITHM:-ricart-agrawala}
CLUSTER_ELECTION=${CLUSTER_ELECTION:-bully}
CLUSTER_NAME=${CLUSTER_NAME:-test}

declare -a PORT NODE_PID
# CONF_EXTRA[I]: lines appended to node I's config when write_conf gets
# none (so start_cluster can give one node a setting of its own).
declare -a CONF_EXTRA
CLUSTER_SIZE=0

cluster_cleanup()
{
	local rc=$? f

	for f in "$TEST_DIR"/pids/node*.pid; do
		[ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
	done
	if [ "$rc" -ne 0 ] && [ -n "${CLUSTER_KEEP_LOGS:-}" ]; then
		mkdir -p "$CLUSTER_KEEP_LOGS/$TEST_NAME" &&
			cp -r "$TEST_DIR"/node* "$TEST_DIR"/*.log "$CLUSTER_KEEP_LOGS/$TEST_NAME/" 2>/dev/null
	fi
	if [ "$rc" -ne 0 ]; then
		for f in "$TEST_DIR"/node*/dmlockd.log; do
			[ -f "$f" ] || continue
			echo "--- $f (last 40 lines) ---" >&2
			tail -n 40 "$f" >&2
		done
	fi
	(exit "$rc")
	cleanup
}
trap cluster_cleanup EXIT

node_dir() { echo "$TEST_DIR/node$1"; }
node_sock() { echo "$TEST_DIR/node$1/dmlockd.sock"; }
node_log() { echo "$TEST_DIR/node$1/dmlockd.log"; }

# The algorithms the daemon knows, one name per line.
cluster_algorithms()
{
	$DMLOCKD --list-algorithms
}

# pick_ports N [FIRST]: N distinct TCP ports on 127.0.0.1 that could be
# bound just now, from below the usual ephemeral range; sets
# PORT[FIRST..FIRST+N-1] (FIRST defaults to 1).
pick_ports()
{
	local n=$1 first=${2:-1} i=${2:-1} p

	for p in $(python3 "$top_srcdir/tests/cluster/free-ports.py" "$n"); do
		PORT[i]=$p
		i=$((i + 1))
	done
	[ "$i" -eq $((first + n)) ] || fail "could not pick $n free ports"
}

# make_certs NAME...: certificates signed by the cluster CA in $CERTS.
make_certs()
{
	"$top_srcdir/tools/mkcerts" -d "$CERTS" "$@" >/dev/null ||
		fail "tools/mkcerts failed"
}

# roster_of I...: "nodeI@127.0.0.1:PORT, ..." for the given nodes.
roster_of()
{
	local i out=

	for i in "$@"; do out+="${out:+, }node$i@127.0.0.1:${PORT[i]}"; done
	echo "$out"
}

# write_conf I ROSTER-LINE [EXTRA-LINES]: node I's config; ROSTER-LINE is
# "peers = ..." or "sponsor = ...".  Variables CONF_* override the node's
# algorithm, cluster name and certificate/CA file names; EXTRA-LINES
# default to ${CONF_EXTRA[I]} (a section may appear twice).
write_conf()
{
	local i=$1 roster=$2 extra=${3:-${CONF_EXTRA[$1]:-}} d

	d=$(node_dir "$i")
	mkdir -p "$d"
	cat >"$d/dmlockd.conf" <<CONF
[node]
name = node$i
listen = 127.0.0.1:${PORT[i]}
cluster = ${CONF_CLUSTER:-$CLUSTER_NAME}
state_directory = $d/state

[cluster]
$roster
algorithm = ${CONF_ALGORITHM:-$CLUSTER_ALGORITHM}
election = $CLUSTER_ELECTION
request_timeout = $CLUSTER_REQUEST_TIMEOUT
probe_timeout = $CLUSTER_PROBE_TIMEOUT
lease = $CLUSTER_LEASE
heartbeat = $CLUSTER_HEARTBEAT
restart_interval = $CLUSTER_RESTART_INTERVAL

[tls]
ca = $CERTS/${CONF_CA:-ca}.crt
cert = $CERTS/${CONF_CERT:-node$i}.crt
key = $CERTS/${CONF_CERT:-node$i}.key

[transport]
keepalive = 200ms
reconnect_min = 50ms
reconnect_max = 500ms
handshake_timeout = 3s

[local]
socket = $(node_sock "$i")
socket_mode = 0600

[log]
level = ${CONF_LOG_LEVEL:-info}
$extra
CONF
}

# start_node I: start node I's daemon in the background (no waiting).
start_node()
{
	local i=$1

	rm -f "$(node_sock "$i")"
	# shellcheck disable=SC2086
	$DMLOCKD -c "$(node_dir "$i")/dmlockd.conf" >>"$(node_log "$i")" 2>&1 &
	NODE_PID[i]=$!
	echo "$!" >"$TEST_DIR/pids/node$i.pid"
	track_pid "$!"
}

# links_up I N: node I answers and reports N peer links up.
links_up()
{
	local i=$1 want=$2 json up

	json=$(DMLOCK_SOCKET=$(node_sock "$i") "$DMLOCK" status --json 2>/dev/null) || return 1
	up=$(grep -o '"link":"up"' <<<"$json" | wc -l)
	[ "$up" -eq "$want" ]
}

# node_ready I: node I says it is a member ("ready", not "starting": a
# node that starts again after leaving joins through its peers first).
node_ready()
{
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" status --json 2>/dev/null | grep -qF '"state":"ready"'
}

node_died_at_start()
{
	! pid_alive "${NODE_PID[$1]}" || pid_exited "${NODE_PID[$1]}"
}

# wait_links I N: bounded wait until node I has N links up; fails early if
# the daemon died.
wait_links()
{
	local i=$1 want=$2 k limit=$((WAIT_LIMIT * 50))

	for ((k = 0; k < limit; k++)); do
		links_up "$i" "$want" && return 0
		node_died_at_start "$i" && return 2
		poll_pause
	done
	return 1
}

# start_cluster N: certificates, ports and configs for nodes 1..N, start
# them and wait until every node has N-1 links up.  Retries with other
# ports if one was taken meanwhile.
start_cluster()
{
	local n=$1 attempt i rc ok

	CLUSTER_SIZE=$n
	make_certs $(for ((i = 1; i <= n; i++)); do echo "node$i"; done)
	for attempt in 1 2 3 4 5; do
		pick_ports "$n"
		for ((i = 1; i <= n; i++)); do
			write_conf "$i" "peers = $(roster_of $(seq 1 "$n"))"
			start_node "$i"
		done
		ok=1
		for ((i = 1; i <= n; i++)); do
			wait_links "$i" $((n - 1))
			rc=$?
			[ "$rc" -eq 0 ] && continue
			ok=0
			[ "$rc" -eq 2 ] && grep -q 'in use' "$(node_log "$i")" && break
			fail "node$i did not link to its $((n - 1)) peers (status $rc)"
		done
		if [ "$ok" -eq 1 ]; then
			for ((i = 1; i <= n; i++)); do
				wait_until "node$i to be a member (ready)" node_ready "$i"
			done
			return 0
		fi
		echo "# a port was taken; retrying with other ports" >&2
		for ((i = 1; i <= n; i++)); do kill_node "$i"; mv "$(node_log "$i")" "$(node_log "$i").try$attempt"; done
	done
	fail "could not start a $n-node cluster"
}

# kill_node I [SIGNAL]: signal node I (default KILL) and reap it.
kill_node()
{
	local i=$1 sig=${2:-KILL}

	[ -n "${NODE_PID[i]:-}" ] || return 0
	kill -"$sig" "${NODE_PID[i]}" 2>/dev/null
	# SIGCONT only to a stopped (SIGSTOP) node: a needless signal during
	# the exit of a sanitizer build can land in LeakSanitizer's
	# stop-the-world and hang it.
	node_stopped "$i" && kill -CONT "${NODE_PID[i]}" 2>/dev/null
	wait_until "node$i (pid ${NODE_PID[i]}) to exit" pid_exited "${NODE_PID[i]}"
	node_reap "$i"
}

# node_stopped I: node I's process is stopped (state T).
node_stopped()
{
	local stat

	stat=$(cat "/proc/${NODE_PID[$1]}/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	case $stat in T*) return 0 ;; esac
	return 1
}

node_reap()
{
	wait "${NODE_PID[$1]}" 2>/dev/null
	NODE_PID[$1]=
	rm -f "$TEST_DIR/pids/node$1.pid"
}

# stop_cluster: SIGTERM every node still running (each leaves the cluster
# gracefully, or gives up after dmlockd's 10 s leave timeout, and exits);
# a node still running after WAIT_LIMIT gets a second SIGTERM ("exit now")
# and must then exit within WAIT_LIMIT.
stop_cluster()
{
	local i k

	for ((i = 1; i <= CLUSTER_SIZE; i++)); do
		[ -n "${NODE_PID[i]:-}" ] && kill -TERM "${NODE_PID[i]}" 2>/dev/null
	done
	for ((i = 1; i <= CLUSTER_SIZE; i++)); do
		[ -n "${NODE_PID[i]:-}" ] || continue
		for ((k = 0; k < WAIT_LIMIT * 50; k++)); do
			pid_exited "${NODE_PID[i]}" && break
			poll_pause
		done
		if pid_exited "${NODE_PID[i]}"; then
			node_reap "$i"
		else
			kill_node "$i" TERM
		fi
	done
	return 0
}

# stop_cluster_keeping_logs SUFFIX: stop_cluster, keep each node's log as
# dmlockd.log.SUFFIX and drop the certificates, so that the next
# start_cluster of the same test begins afresh.
stop_cluster_keeping_logs()
{
	local i

	stop_cluster
	for ((i = 1; i <= CLUSTER_SIZE; i++)); do
		[ ! -f "$(node_log "$i")" ] || mv "$(node_log "$i")" "$(node_log "$i").$1"
	done
	rm -rf "$CERTS"
}

# wait_log I PATTERN: bounded wait until node I's log has a line matching
# the extended regular expression PATTERN.
wait_log()
{
	wait_until "node$1's log to match '$2'" grep -qE -- "$2" "$(node_log "$1")"
}

# check_mutex LOG [want=N] [min_nodes=K]: run the checker, show its verdict.
check_mutex()
{
	local log=$1 out

	shift
	out=$(awk "${@/#/-v}" -f "$CHECKER" "$log") || fail "checker: $out"
	echo "# $out"
}

# cs_script: the shell critical section for `dmlock run`: $1 log, $2 node,
# $3 client id.  Logs enter/exit with the fencing token; on SIGTERM (the
# lock was lost) logs "lost" and exits.
CS_SCRIPT='trap '\''echo "lost $DMLOCK_TOKEN $2 $3" >> "$1"; exit 143'\'' TERM
echo "enter $DMLOCK_TOKEN $2 $3" >> "$1"
i=0; while [ $i -lt 50 ]; do i=$((i+1)); done
echo "exit $DMLOCK_TOKEN $2 $3" >> "$1"'

# cli_worker I COUNT LOG ID: COUNT sections through `dmlock run` on node I.
cli_worker()
{
	local i=$1 count=$2 log=$3 id=$4 k

	for ((k = 0; k < count; k++)); do
		DMLOCK_SOCKET=$(node_sock "$i") "$DMLOCK" run --name "${LOCK_NAME:-x}" -- \
			sh -c "$CS_SCRIPT" sh "$log" "node$i" "$id.$k" || exit 1
	done
}

# lib_worker I COUNT LOG ID: COUNT sections through libdmlock on node I.
lib_worker()
{
	"$LOCKER" -S "$(node_sock "$1")" -l "$3" -n "${LOCK_NAME:-x}" -c "$2" -i "$4" -w "${LOCKER_WORK_US:-200}"
}

# mutex_load LOG CLI_WORKERS CLI_COUNT LIB_WORKERS LIB_COUNT: on every
# running node of 1..CLUSTER_SIZE, CLI_WORKERS `dmlock run` loops of
# CLI_COUNT sections and LIB_WORKERS libdmlock clients of LIB_COUNT
# sections, all on one lock at once; waits for all and checks the log.
# Sections already in LOG count towards the total the checker expects.
# Sets MUTEX_SECTIONS to the number of new sections.
mutex_load()
{
	local log=$1 cw=$2 cc=$3 lw=$4 lc=$5 i w pid nodes=0 before
	local -a pids=()

	MUTEX_SECTIONS=0
	before=$(grep -cE '^(exit|lost) ' "$log" 2>/dev/null)
	for ((i = 1; i <= CLUSTER_SIZE; i++)); do
		[ -n "${NODE_PID[i]:-}" ] || continue
		nodes=$((nodes + 1))
		for ((w = 0; w < cw; w++)); do
			cli_worker "$i" "$cc" "$log" "cli$w" 2>>"$TEST_DIR/workers.err" &
			pids+=($!); track_pid $!
			MUTEX_SECTIONS=$((MUTEX_SECTIONS + cc))
		done
		for ((w = 0; w < lw; w++)); do
			lib_worker "$i" "$lc" "$log" "lib$w" 2>>"$TEST_DIR/workers.err" &
			pids+=($!); track_pid $!
			MUTEX_SECTIONS=$((MUTEX_SECTIONS + lc))
		done
	done
	for pid in "${pids[@]}"; do
		WAIT_LIMIT=${LOAD_WAIT_LIMIT:-150} wait_status "$pid"
		[ "$STATUS" -eq 0 ] ||
			fail "a worker failed (status $STATUS): $(tail -n 5 "$TEST_DIR/workers.err")"
	done
	check_mutex "$log" want=$((before + MUTEX_SECTIONS)) min_nodes="$nodes"
}

# HOLD_SCRIPT: a `dmlock run` command that enters ($1 log, $2 node, $3 id),
# writes its token to $4.token, then waits until its sleep (PID in
# $5) is killed (release_hold) and exits; on SIGTERM (lock lost) it logs
# "lost" and exits 143.
HOLD_SCRIPT='trap '\''echo "lost $DMLOCK_TOKEN $2 $3" >> "$1"; exit 143'\'' TERM
echo "enter $DMLOCK_TOKEN $2 $3" >> "$1"
echo "$DMLOCK_TOKEN" > "$4.token"
sleep 1000 & echo $! > "$5"
wait $!
echo "exit $DMLOCK_TOKEN $2 $3" >> "$1"'

# start_hold TAG I LOG [dmlock run options]: node I's client TAG takes
# ${LOCK_NAME:-x} and keeps it until release_hold TAG; waits until it holds
# it.  HOLD_PID_TAG is the dmlock run PID.
start_hold()
{
	local tag=$1 i=$2 log=$3

	shift 3
	spawn_hold "$tag" "$i" "$log" "$@"
	wait_for_file "$TEST_DIR/pids/$tag.sleep"
}

# spawn_hold: start_hold without waiting for the grant.
spawn_hold()
{
	local tag=$1 i=$2 log=$3

	shift 3
	DMLOCK_SOCKET=$(node_sock "$i") "$DMLOCK" run --name "${LOCK_NAME:-x}" "$@" -- \
		sh -c "$HOLD_SCRIPT" sh "$log" "node$i" "$tag" "$TEST_DIR/$tag" "$TEST_DIR/pids/$tag.sleep" \
		2>"$TEST_DIR/$tag.err" &
	eval "HOLD_PID_$tag=$!"
	track_pid "$!"
}

release_hold()
{
	local pid

	read -r pid <"$TEST_DIR/pids/$1.sleep" || fail "no sleep PID for $1"
	kill "$pid"
}

hold_token()
{
	cat "$TEST_DIR/$1.token"
}

# holder_then_waiter TAG LOG: a holder on node1 (TAGa), a waiter on node2
# (TAGb) granted only after the release, its token above the holder's;
# both exit 0.
holder_then_waiter()
{
	local tag=$1 log=$2 t

	start_hold "${tag}a" 1 "$log"
	spawn_hold "${tag}b" 2 "$log" -w 60
	wait_until "node2's request to be waiting" node_has_waiter 2
	[ ! -e "$TEST_DIR/${tag}b.token" ] || fail "node2 was granted while node1 held the lock"
	release_hold "${tag}a"
	wait_for_file "$TEST_DIR/pids/${tag}b.sleep"
	[ "$(hold_token "${tag}b")" -gt "$(hold_token "${tag}a")" ] ||
		fail "the waiter's token $(hold_token "${tag}b") is not above the holder's $(hold_token "${tag}a")"
	release_hold "${tag}b"
	for t in "${tag}a" "${tag}b"; do
		eval "wait_status \$HOLD_PID_$t"
		[ "$STATUS" -eq 0 ] || fail "holder $t exited $STATUS"
	done
}

# node_has_waiter I: node I reports a local lock request still waiting.
node_has_waiter()
{
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" status --json 2>/dev/null | grep -q '"waiting"'
}

# roster_size_is I N: node I's roster has N members.
roster_size_is()
{
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" status --json 2>/dev/null | grep -q "\"roster_size\":$2,"
}

# ms_now: milliseconds of CLOCK_REALTIME.
ms_now()
{
	echo $(($(date +%s%N) / 1000000))
}

# start_loaders LOG I...: on each node I, one `dmlock run` client and one
# libdmlock client that take the lock over and over until stop_loaders
# (each loop iteration is complete sections; nothing is left open).
# LOADER_PIDS holds their PIDs.
LOADER_PIDS=()
start_loaders()
{
	local log=$1 i

	shift
	rm -f "$TEST_DIR/loaders.stop"
	for i in "$@"; do
		(
			k=0
			while [ ! -e "$TEST_DIR/loaders.stop" ]; do
				cli_worker "$i" 1 "$log" "loopcli.$k" || exit 1
				lib_worker "$i" 5 "$log" "looplib.$k" || exit 1
				k=$((k + 1))
			done
		) 2>>"$TEST_DIR/workers.err" &
		LOADER_PIDS+=($!)
		track_pid $!
	done
}

stop_loaders()
{
	local pid

	touch "$TEST_DIR/loaders.stop"
	for pid in "${LOADER_PIDS[@]}"; do
		WAIT_LIMIT=${LOAD_WAIT_LIMIT:-150} wait_status "$pid"
		[ "$STATUS" -eq 0 ] ||
			fail "a looping client failed (status $STATUS): $(tail -n 5 "$TEST_DIR/workers.err")"
	done
	LOADER_PIDS=()
}

# sections_in LOG: complete sections in LOG so far.
sections_in()
{
	grep -cE '^(exit|lost) ' "$1"
}

# sections_grow LOG N: LOG has at least N sections.
sections_reach()
{
	[ "$(sections_in "$1")" -ge "$2" ]
}

# REFUSAL: what a refusal looks like in a node's log (the transport's own
# warning, and the daemon's "peer connection refused" echo of it).
REFUSAL='warning: .*(refused|TLS handshake with .* failed)'

# refusals_in I: refusal lines in node I's log so far.
refusals_in()
{
	grep -cE "$REFUSAL" "$(node_log "$1")"
}

# expect_impostor_refused WHAT PATTERN: start node3 (its config written by
# the caller) against the running node1 and node2; wait until node1 logs a
# new refusal matching PATTERN (extended regexp); check that no link came
# up on either side; stop node3.
expect_impostor_refused()
{
	local what=$1 pattern=$2 before reason

	before=$(refusals_in 1)
	: >"$(node_log 3)"
	start_node 3
	wait_until "node1 to refuse $what" eval \
		'tail -n +$((before + 1)) <(grep -E "$REFUSAL" "$(node_log 1)") | grep -qE -- "$pattern"'
	reason=$(grep -E "$REFUSAL" "$(node_log 1)" | tail -n +$((before + 1)) | grep -E -- "$pattern" | head -n 1)
	links_up 1 1 || fail "$what: node1's links changed: $(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" status --json)"
	grep -q '"name":"node3"' <(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" status --json) &&
		fail "$what: node1 admitted node3 to its roster"
	grep -q 'link up' "$(node_log 3)" && fail "$what: the impostor got a link up: $(grep 'link up' "$(node_log 3)")"
	kill_node 3
	pass "$what refused: ${reason#*: warning: }"
}

# impostor_conf [VAR=VALUE...]: node3's config (roster node1..node3) with
# CONF_* overrides, for expect_impostor_refused.
impostor_conf()
{
	(
		for a in "$@"; do export "${a?}"; done
		write_conf 3 "peers = $(roster_of 1 2 3)"
	)
}

# node_serves I: node I grants a lock of its own (a fresh node may still be
# in its restart interval after it appears in every roster).
node_serves()
{
	DMLOCK_SOCKET=$(node_sock "$1") "$DMLOCK" run --name "serves-probe" -w 2 -- true 2>/dev/null
}
