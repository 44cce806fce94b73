# dmlockd/dmlockd.mk: the daemon's I/O shells and main().
noinst_LTLIBRARIES += libdmshell.la
libdmshell_la_SOURCES = dmlockd/log.h dmlockd/log.c dmlockd/acl.h dmlockd/acl.c \
	dmlockd/state_file.h dmlockd/state_file.c \
	dmlockd/accept_guard.h dmlockd/accept_guard.c
libdmshell_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(SYSTEMD_CFLAGS)
libdmshell_la_LIBADD = $(LIBEVENT_LIBS) $(SYSTEMD_LIBS)

# The daemon: main() and the local side (Unix socket server, sessions,
# engine host).  The peer transport plugs into daemon.c's transport hook.
sbin_PROGRAMS += dmlockd/dmlockd
dmlockd_dmlockd_SOURCES = \
	dmlockd/main.c \
	dmlockd/daemon.h dmlockd/daemon.c \
	dmlockd/local_server.h dmlockd/local_server.c \
	dmlockd/local_session.h dmlockd/local_session.c \
	dmlockd/cluster_glue.h dmlockd/cluster_glue.c
dmlockd_dmlockd_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(INIH_CFLAGS)
dmlockd_dmlockd_LDADD = libdmtransport.la libdmshell.la liblocalproto.la libdmengine.la \
	$(LIBEVENT_LIBS) $(OPENSSL_LIBS) $(INIH_LIBS) $(SYSTEMD_LIBS)

# The state directory, its epoch floor and membership files
# (state_file.c; names checked with the engine's dm_types.c), and the two
# parsers' fuzz targets (corpora replayed in make check).
check_PROGRAMS += tests/unit/check_state_file
TESTS += tests/unit/check_state_file
tests_unit_check_state_file_SOURCES = tests/unit/check_state_file.c
tests_unit_check_state_file_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_state_file_LDADD = libdmshell.la libdmengine.la $(CHECK_LIBS)
check_PROGRAMS += tests/fuzz/replay_state_floor
TESTS += tests/fuzz/replay_state_floor
tests_fuzz_replay_state_floor_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_state_floor.c
tests_fuzz_replay_state_floor_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"state_floor"'
tests_fuzz_replay_state_floor_LDADD = libdmshell.la libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/state_floor
check_PROGRAMS += tests/fuzz/replay_state_record
TESTS += tests/fuzz/replay_state_record
tests_fuzz_replay_state_record_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_state_record.c
tests_fuzz_replay_state_record_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"state_record"'
tests_fuzz_replay_state_record_LDADD = libdmshell.la libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/state_record
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_state_floor
tests_fuzz_fuzz_state_floor_SOURCES = tests/fuzz/fuzz_state_floor.c dmlockd/state_file.c \
	dmlockd/log.c dmlockd/engine/dm_types.c
tests_fuzz_fuzz_state_floor_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_state_floor_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_state_floor_LDADD = $(SYSTEMD_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_state_record
tests_fuzz_fuzz_state_record_SOURCES = tests/fuzz/fuzz_state_record.c dmlockd/state_file.c \
	dmlockd/log.c dmlockd/engine/dm_types.c
tests_fuzz_fuzz_state_record_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_state_record_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_state_record_LDADD = $(SYSTEMD_LIBS)
endif

# The [access] rule matcher (acl.c).
check_PROGRAMS += tests/unit/check_acl
TESTS += tests/unit/check_acl
tests_unit_check_acl_SOURCES = tests/unit/check_acl.c
tests_unit_check_acl_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_acl_LDADD = libdmshell.la libdmengine.la $(CHECK_LIBS)
