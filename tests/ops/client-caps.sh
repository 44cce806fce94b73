#!/bin/bash
# tests/ops/client-caps.sh: one local user cannot take every connection.
# Of the 1024 local connections, a uid other than root gets at most 256
# (a quarter) and the last 16 are kept for root; a client past a cap is
# sent "ERROR - too-many-clients" and closed.  Four users (uids 65531 to
# 65534, via setpriv) each try 300 connections: the first three get 256,
# the fourth only 240 (1008 in all); root still connects, up to the 16 kept
# for it; once the users leave, a user is served again.  Before, the cap
# was global: the first user took all 1024 and root was refused.  Then a
# second daemon with [local] clients_per_user = 100 serves a user 100
# connections and refuses the 101st, naming 100 in its log (before, the cap
# was a fixed 256 and the key did not exist).  Needs root and setpriv
# (skipped otherwise).
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
dmlockd=$(find_built dmlockd)
need_root_and_setpriv
clients=$top_srcdir/tests/ops/fd-clients.py
py=$(python_for_uid 65534) || { echo "# no python3 that uid 65534 can run: skipped"; exit 77; }
# The users reach the socket and the helper script through these.
chmod 0711 "$ops_tmp"
cp "$clients" "$ops_tmp/clients.py"
chmod 0644 "$ops_tmp/clients.py"
mkdir -m 0777 "$ops_tmp/out"

sock=$ops_tmp/dmlockd.sock
cat >"$ops_tmp/dmlockd.conf" <<CONF
[node]
name = caps
state_directory = $ops_tmp/state
[local]
socket = $sock
socket_mode = 0666
CONF
dlog=$ops_tmp/dmlockd.log
start_daemon_on "$ops_tmp/dmlockd.conf" "$dlog"
dpid=$DAEMON_PID
in_log() { log_has "$dlog" "$1"; }
nofile=$(awk '/^Max open files/ { print $4 }' "/proc/$dpid/limits")
if [ "$nofile" != unlimited ] && [ "$nofile" -lt 1100 ]; then
	echo "# dmlockd may open only $nofile files (needs 1100): skipped"
	exit 77
fi

# hold UID N: as UID, open N connections one by one and keep the greeted
# ones until $ops_tmp/out/release exists; result in $ops_tmp/out/UID.
hold() {
	setpriv --reuid="$1" --regid="$1" --clear-groups "$py" "$ops_tmp/clients.py" \
		unix-greet "$sock" "$2" "$ops_tmp/out/release" >"$ops_tmp/out/$1" 2>&1 &
	track_pid $!
	holders+=($!)
}
result() { head -n 1 "$ops_tmp/out/$1" 2>/dev/null; }
has_result() { [ -n "$(result "$1")" ]; }
holders=()

# One user alone: 256 of its 300, refused with the usual error.
hold 65534 300
wait_for 60 "uid 65534's connections" has_result 65534
[ "$(result 65534)" = "greeted 256 refused 44" ] ||
	fail "uid 65534: $(cat "$ops_tmp/out/65534")"
sed -n 2p "$ops_tmp/out/65534" | grep -q '^ERROR - too-many-clients ' ||
	fail "the refusal is not ERROR - too-many-clients: $(sed -n 2p "$ops_tmp/out/65534")"
in_log "uid 65534 has 256 local connections, the most one user may have" ||
	fail "the per-user cap is not logged: $(tail -n 5 "$dlog")"
# Root is not held back by another user's cap.
python3 "$clients" greet "$sock" >/dev/null || fail "root refused while uid 65534 is at its cap"
note "uid 65534: $(result 65534)"

# Three more users: 256, 256, then 240 (the total for users is 1024 - 16).
for uid in 65533 65532 65531; do
	hold "$uid" 300
	wait_for 60 "uid $uid's connections" has_result "$uid"
done
[ "$(result 65533)" = "greeted 256 refused 44" ] || fail "uid 65533: $(result 65533)"
[ "$(result 65532)" = "greeted 256 refused 44" ] || fail "uid 65532: $(result 65532)"
[ "$(result 65531)" = "greeted 240 refused 60" ] || fail "uid 65531: $(result 65531)"
in_log "the last 16 are kept for root" || fail "the root reserve is not logged: $(tail -n 5 "$dlog")"
note "uids 65533, 65532, 65531: $(result 65533); $(result 65532); $(result 65531)"

# The 16 kept slots serve root: 16 at once, and the 17th is refused.
python3 "$clients" unix-greet "$sock" 17 "$ops_tmp/out/root-release" >"$ops_tmp/out/root" &
track_pid $!
root_holder=$!
wait_for 30 "root's connections" has_result root
[ "$(result root)" = "greeted 16 refused 1" ] || fail "root: $(cat "$ops_tmp/out/root")"
note "root with 1008 user connections open: $(result root)"
touch "$ops_tmp/out/root-release"
wait "$root_holder"

# Logging is bounded: one refusal line a second at most.
n=$(grep -c 'refusing pid' "$dlog")
[ "$n" -le 20 ] || fail "$n refusal lines for 209 refusals"

# The users leave; a user is served again.
touch "$ops_tmp/out/release"
for pid in "${holders[@]}"; do wait "$pid"; done
served_again() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$py" "$ops_tmp/clients.py" greet "$sock" >/dev/null
}
wait_for 10 "uid 65534 to be served again" served_again
kill -0 "$dpid" || fail "dmlockd died: $(tail -n 20 "$dlog")"
note "$n refusal log line(s)"

# [local] clients_per_user = 100: a second daemon on its own socket serves
# uid 65534 100 connections and refuses the 101st; root is still served.
sock2=$ops_tmp/dmlockd-100.sock
cat >"$ops_tmp/dmlockd-100.conf" <<CONF
[node]
name = caps100
state_directory = $ops_tmp/state-100
[local]
socket = $sock2
socket_mode = 0666
clients_per_user = 100
CONF
dlog2=$ops_tmp/dmlockd-100.log
start_daemon_on "$ops_tmp/dmlockd-100.conf" "$dlog2"
dpid2=$DAEMON_PID
in_log2() { log_has "$dlog2" "$1"; }
setpriv --reuid=65534 --regid=65534 --clear-groups "$py" "$ops_tmp/clients.py" \
	unix-greet "$sock2" 101 "$ops_tmp/out/release-100" >"$ops_tmp/out/per-user-100" 2>&1 &
track_pid $!
holder2=$!
wait_for 30 "uid 65534's connections to the second daemon" has_result per-user-100
[ "$(result per-user-100)" = "greeted 100 refused 1" ] ||
	fail "clients_per_user = 100: $(cat "$ops_tmp/out/per-user-100") $(tail -n 5 "$dlog2")"
sed -n 2p "$ops_tmp/out/per-user-100" | grep -q '^ERROR - too-many-clients ' ||
	fail "the refusal is not ERROR - too-many-clients: $(sed -n 2p "$ops_tmp/out/per-user-100")"
in_log2 "uid 65534 has 100 local connections, the most one user may have" ||
	fail "the configured cap is not logged: $(tail -n 5 "$dlog2")"
python3 "$clients" greet "$sock2" >/dev/null || fail "root refused while uid 65534 is at 100"
note "clients_per_user = 100, uid 65534: $(result per-user-100)"
touch "$ops_tmp/out/release-100"
wait "$holder2"
exit 0
