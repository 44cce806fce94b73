# systemd/systemd.mk: the systemd glue (dmlockd/sd_glue.[ch], part of
# libdmshell.la), the service/socket units and the sysusers.d/tmpfiles.d
# entries (generated from *.in with the configured paths), the usage
# examples, and the operations tests in tests/ops/ that concern them.

libdmshell_la_SOURCES += dmlockd/sd_glue.h dmlockd/sd_glue.c

# --- units and system configuration ---------------------------------------
# sed instead of AC_CONFIG_FILES so that paths follow make-time overrides
# (make prefix=..., distcheck's --prefix) and stay fully expanded.  The local
# socket is always /run/dmlock/dmlockd.sock (as in libdmlock/socket_path.h
# and systemd's RuntimeDirectory=), whatever runstatedir is; the state
# directory always /var/lib/dmlock (StateDirectory=).
ops_subst = $(SED) \
	-e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g'

ops_unit_files = systemd/dmlockd.service systemd/dmlockd.socket
systemdsystemunit_DATA = $(ops_unit_files)
# Installed under the names sysusers.d(5) and tmpfiles.d(5) require.
sysusers_DATA = systemd/sysusers.d/dmlock.conf
tmpfiles_DATA = systemd/tmpfiles.d/dmlock.conf

systemd/dmlockd.service: $(top_srcdir)/systemd/dmlockd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(ops_subst) $(top_srcdir)/systemd/dmlockd.service.in >$@.tmp && mv $@.tmp $@
systemd/dmlockd.socket: $(top_srcdir)/systemd/dmlockd.socket.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(ops_subst) $(top_srcdir)/systemd/dmlockd.socket.in >$@.tmp && mv $@.tmp $@
systemd/sysusers.d/dmlock.conf: $(top_srcdir)/systemd/dmlock.sysusers.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(ops_subst) $(top_srcdir)/systemd/dmlock.sysusers.in >$@.tmp && mv $@.tmp $@
systemd/tmpfiles.d/dmlock.conf: $(top_srcdir)/systemd/dmlock.tmpfiles.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(ops_subst) $(top_srcdir)/systemd/dmlock.tmpfiles.in >$@.tmp && mv $@.tmp $@

CLEANFILES += $(ops_unit_files) $(sysusers_DATA) $(tmpfiles_DATA)
EXTRA_DIST += systemd/dmlockd.service.in systemd/dmlockd.socket.in \
	systemd/dmlock.sysusers.in systemd/dmlock.tmpfiles.in \
	systemd/SECURITY.md systemd/WIRING.md

# Usage examples (a crontab serialised across hosts, a singleton service
# under `dmlock run`), installed as documentation.
opsexamplesdir = $(docdir)/examples
dist_opsexamples_DATA = systemd/examples/crontab.example systemd/examples/dmlock-singleton@.service

# --- tests ------------------------------------------------------------------
# Daemon-level tests that need sd_glue wired into dmlockd (see WIRING.md);
# the lead enables them with "TESTS += $(OPS_DAEMON_TESTS)" once wired.
OPS_DAEMON_TESTS = tests/ops/notify.sh tests/ops/socket-activation.sh \
	tests/ops/reload-notify.sh tests/ops/fd-exhaustion.sh tests/ops/acl-groups.sh \
	tests/ops/client-caps.sh
# Need the whole tree to build (dmlockd main(), every installed file).
OPS_PENDING_TESTS = tests/ops/units-verify.sh tests/ops/install.sh
EXTRA_DIST += $(OPS_PENDING_TESTS) tests/ops/lib.sh \
	$(OPS_DAEMON_TESTS) tests/ops/notify-listener.py tests/ops/fd-clients.py

# Unit tests of the glue against a fake service manager (environment + sockets).
check_PROGRAMS += tests/ops/check_sd_glue
TESTS += tests/ops/check_sd_glue
tests_ops_check_sd_glue_SOURCES = tests/ops/check_sd_glue.c
tests_ops_check_sd_glue_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
tests_ops_check_sd_glue_LDADD = libdmshell.la $(CHECK_LIBS) $(LIBEVENT_LIBS)

# Wired into dmlockd (main.c): run them.
TESTS += $(OPS_DAEMON_TESTS) $(OPS_PENDING_TESTS)
