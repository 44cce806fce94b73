#!/bin/bash
# tests/ops/acl-groups.sh: an [access] rule for a group applies to the
# groups a client process really has, read from its connection
# (SO_PEERGROUPS), not looked up in the group database (getgrouplist(3)
# through NSS, which could block the event loop for an LDAP timeout).
# Needs root (setpriv gives the clients their uid and groups; skipped
# otherwise): uid nobody with supplementary group 3999902, which no group
# database lists for nobody, is granted a lock that only @3999902 may
# take; the same uid without that group is denied.
. "$top_srcdir/tests/ops/lib.sh"

need_tool python3 python3
dmlockd=$(find_built dmlockd)
need_root_and_setpriv
nobody=$(id -u nobody 2>/dev/null || echo 65534)
py=$(python_for_uid "$nobody") || { echo "# no python3 that uid $nobody can run: skipped"; exit 77; }

# The clients run as nobody: let them reach the socket.
chmod 0711 "$ops_tmp"
sock=$ops_tmp/dmlockd.sock
cat >"$ops_tmp/dmlockd.conf" <<CONF
[node]
name = acl-groups
state_directory = $ops_tmp/state
[local]
socket = $sock
socket_mode = 0666
[access]
lock = @3999902:ex:grp/
CONF
dlog=$ops_tmp/dmlockd.log
start_daemon_on "$ops_tmp/dmlockd.conf" "$dlog"
dpid=$DAEMON_PID

# acquire SETPRIV-GROUP-OPTION: as nobody, try grp/x exclusively; prints
# the daemon's answer line.
acquire() {
	timeout 20 setpriv --reuid="$nobody" --regid="$nobody" "$1" "$py" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rw")
greeting = f.readline()
if not greeting.startswith("DMLOCK "):
    sys.exit("no greeting: %r" % greeting)
f.write("ACQUIRE a grp/x ex try\n")
f.flush()
print(f.readline().strip())
' "$sock"
}

answer=$(acquire --groups=3999902) || fail "client with group 3999902 failed: $answer"
case $answer in
"GRANTED a "*) ;;
*) fail "uid $nobody with supplementary group 3999902 was not granted: '$answer' ($(tail -n 3 "$dlog"))" ;;
esac
note "with group 3999902: $answer"
answer=$(acquire --clear-groups) || fail "client without groups failed: $answer"
case $answer in
"DENIED a "*) ;;
*) fail "uid $nobody without group 3999902 was not denied: '$answer'" ;;
esac
note "without it: $answer"
kill -0 "$dpid" || fail "dmlockd died: $(cat "$dlog")"
exit 0
