#!/bin/bash
# tests/ops/units-verify.sh: the built systemd units pass `systemd-analyze
# verify` (Documentation= man pages resolved from man/, ExecStart= the
# built dmlockd), with a negative control; `systemd-analyze security`
# exposure stays at or below 2.0; the sysusers.d and tmpfiles.d entries
# create the dmlock user/group and directories in a scratch root.
. "$top_srcdir/tests/ops/lib.sh"

need_tool systemd-analyze systemd
need_tool systemd-sysusers systemd
need_tool systemd-tmpfiles systemd
need_tool man man-db

dmlockd=$(find_built dmlockd)
dmlock=$(find_built dmlock)
for f in dmlockd.service dmlockd.socket sysusers.d/dmlock.conf tmpfiles.d/dmlock.conf; do
	[ -f "$top_builddir/systemd/$f" ] || fail "systemd/$f was not generated"
done
grep -q '@[a-z]*dir@' "$top_builddir"/systemd/dmlockd.* && fail "unsubstituted @...dir@ left in units"

units=$ops_tmp/units
mkdir -p "$units"
# ExecStart= points at the built daemon so verify can check it is executable.
sed -e "s|^ExecStart=[^ ]*/dmlockd|ExecStart=$(readlink -f "$dmlockd")|" \
	"$top_builddir/systemd/dmlockd.service" >"$units/dmlockd.service"
cp "$top_builddir/systemd/dmlockd.socket" "$units/dmlockd.socket"
grep -q "^ExecStart=$(readlink -f "$dmlockd")\$" "$units/dmlockd.service" || fail "could not retarget ExecStart="
# The singleton example (a template) as an instance, run by the built dmlock.
sed -e "s|^ExecStart=/usr/bin/dmlock |ExecStart=$(readlink -f "$dmlock") |" \
	-e "s|/usr/local/bin/%i|/bin/true|" \
	"$top_srcdir/systemd/examples/dmlock-singleton@.service" >"$units/dmlock-singleton@test.service"
grep -q "^ExecStart=$(readlink -f "$dmlock") run " "$units/dmlock-singleton@test.service" ||
	fail "could not retarget the example's ExecStart="

# Documentation=man:... must resolve: a man tree built from our sources.
mantree=$ops_tmp/man
for page in "$top_srcdir"/man/*.[1-8]; do
	[ -e "$page" ] || continue
	sec=${page##*.}
	mkdir -p "$mantree/man$sec"
	ln -s "$page" "$mantree/man$sec/"
done

verify() {
	(cd "$1" && MANPATH=$mantree SYSTEMD_LOG_COLOR=0 systemd-analyze verify ./*.service ./*.socket)
}

out=$(verify "$units" 2>&1) || fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed warnings: $out"
note "systemd-analyze verify: clean"

# Negative control: a unit whose ExecStart= binary is missing must fail.
bad=$ops_tmp/bad
mkdir -p "$bad"
sed -e "s|^ExecStart=[^ ]*|ExecStart=$ops_tmp/no-such-dmlockd|" "$units/dmlockd.service" >"$bad/dmlockd.service"
cp "$units/dmlockd.socket" "$units/dmlock-singleton@test.service" "$bad/"
verify "$bad" >/dev/null 2>&1 && fail "negative control: verify accepted a missing ExecStart binary"

# Security exposure (offline analysis of the unit file, no running manager).
sec=$(cd "$units" && SYSTEMD_LOG_COLOR=0 systemd-analyze security --offline=true --no-pager dmlockd.service 2>&1) ||
	fail "systemd-analyze security failed or reported exposure over the threshold: $sec"
echo "$sec" | tail -n 1
(cd "$units" && systemd-analyze security --offline=true --threshold=20 dmlockd.service >/dev/null 2>&1) ||
	fail "dmlockd.service exposure is above 2.0: $(echo "$sec" | tail -n 1)"

# sysusers.d and tmpfiles.d entries, applied to a scratch root.
root=$ops_tmp/root
mkdir -p "$root/etc" "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d"
cp "$top_builddir/systemd/sysusers.d/dmlock.conf" "$root/usr/lib/sysusers.d/"
cp "$top_builddir/systemd/tmpfiles.d/dmlock.conf" "$root/usr/lib/tmpfiles.d/"
systemd-sysusers --root="$root" >/dev/null 2>&1 || fail "systemd-sysusers rejected sysusers.d/dmlock.conf"
grep -q '^dmlock:' "$root/etc/passwd" || fail "sysusers did not create user dmlock"
grep -q '^dmlock:' "$root/etc/group" || fail "sysusers did not create group dmlock"
if [ "$(id -u)" = 0 ]; then
	systemd-tmpfiles --root="$root" --create >/dev/null 2>&1 || fail "systemd-tmpfiles rejected tmpfiles.d/dmlock.conf"
	uid=$(awk -F: '$1 == "dmlock" { print $3 }' "$root/etc/passwd")
	while read -r type path mode user group _; do
		case $type in \#*|'') continue ;; esac
		[ -d "$root$path" ] || fail "tmpfiles did not create $path"
		[ "$(stat -c %a:%u "$root$path")" = "${mode#0}:$uid" ] ||
			fail "$path is $(stat -c %a:%u "$root$path"), want ${mode#0}:$uid"
	done <"$top_builddir/systemd/tmpfiles.d/dmlock.conf"
else
	note "not root: tmpfiles.d ownership not applied (chown needs root)"
fi
note "sysusers.d/tmpfiles.d: applied"
exit 0
