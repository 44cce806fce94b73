#!/bin/bash
# tests/ops/install.sh: `make install DESTDIR=...` lays out every file an
# administrator needs (binaries, library, header, pkg-config file, units,
# sysusers.d/tmpfiles.d entries, example config, bash completion, man
# pages, usage examples) at the configured paths, with the units' paths
# substituted; `make uninstall` removes them all again.
. "$top_srcdir/tests/ops/lib.sh"

dest=$ops_tmp/dest
# Ask the build tree's Makefile for its installation directories.
cat >"$ops_tmp/dirs.mk" <<'MK'
ops-print-dirs:
	@echo "bindir='$(bindir)' sbindir='$(sbindir)' libdir='$(libdir)' includedir='$(includedir)'"
	@echo "pkgconfigdir='$(pkgconfigdir)' mandir='$(mandir)' docdir='$(docdir)' sysconfdir='$(sysconfdir)'"
	@echo "systemdsystemunitdir='$(systemdsystemunitdir)' sysusersdir='$(sysusersdir)'"
	@echo "tmpfilesdir='$(tmpfilesdir)' bashcompletiondir='$(bashcompletiondir)'"
MK
dirs=$(make -s --no-print-directory -C "$top_builddir" -f Makefile -f "$ops_tmp/dirs.mk" ops-print-dirs) ||
	fail "cannot read installation directories from $top_builddir/Makefile"
eval "$dirs"

make -s --no-print-directory -C "$top_builddir" install DESTDIR="$dest" >"$ops_tmp/install.log" 2>&1 ||
	fail "make install DESTDIR failed: $(tail -n 20 "$ops_tmp/install.log")"

want=(
	"$bindir/dmlock"
	"$sbindir/dmlockd"
	"$includedir/dmlock.h"
	"$pkgconfigdir/libdmlock.pc"
	"$systemdsystemunitdir/dmlockd.service"
	"$systemdsystemunitdir/dmlockd.socket"
	"$sysusersdir/dmlock.conf"
	"$tmpfilesdir/dmlock.conf"
	"$bashcompletiondir/dmlock"
	"$mandir/man1/dmlock.1"
	"$mandir/man3/libdmlock.3"
	"$mandir/man5/dmlockd.conf.5"
	"$mandir/man7/dmlock-protocol.7"
	"$mandir/man8/dmlockd.8"
	"$docdir/examples/crontab.example"
	"$docdir/examples/dmlock-singleton@.service"
)
missing=0
for f in "${want[@]}"; do
	[ -f "$dest$f" ] || { echo "missing: $f" >&2; missing=1; }
done
[ -x "$dest$bindir/dmlock" ] && [ -x "$dest$sbindir/dmlockd" ] || { echo "binaries not executable" >&2; missing=1; }
ls "$dest$libdir"/libdmlock.so.* >/dev/null 2>&1 || { echo "missing: $libdir/libdmlock.so.N" >&2; missing=1; }
# The example configuration: wherever conf/conf.mk installs it.
example=$(find "$dest" -name 'dmlockd.conf.example' -type f | head -n 1)
[ -n "$example" ] || { echo "missing: dmlockd.conf.example" >&2; missing=1; }
[ $missing = 0 ] || fail "make install left out files (above); installed: $(cd "$dest" && find . -type f | sort | tr '\n' ' ')"

# Units carry the configured paths, fully expanded.
grep -q "^ExecStart=$sbindir/dmlockd\$" "$dest$systemdsystemunitdir/dmlockd.service" ||
	fail "dmlockd.service ExecStart= does not name $sbindir/dmlockd"
grep -q '[@$]{\{0,1\}[a-z_]*dir' "$dest$systemdsystemunitdir"/dmlockd.* &&
	fail "unexpanded directory variable left in the installed units"
# The pkg-config file describes the installed library.
PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$dest$pkgconfigdir pkg-config --libs libdmlock | grep -q -- -ldmlock ||
	fail "libdmlock.pc does not give -ldmlock"

make -s --no-print-directory -C "$top_builddir" uninstall DESTDIR="$dest" >"$ops_tmp/uninstall.log" 2>&1 ||
	fail "make uninstall failed: $(tail -n 20 "$ops_tmp/uninstall.log")"
left=$(find "$dest" -type f | sed "s|^$dest||")
[ -z "$left" ] || fail "make uninstall left files behind: $left"
note "installed and uninstalled ${#want[@]}+ files under DESTDIR"
exit 0
