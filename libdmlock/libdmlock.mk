# libdmlock/libdmlock.mk: the client library libdmlock.la (installed, with
# dmlock.h and libdmlock.pc), the local protocol codec liblocalproto.la
# (shared with dmlockd and the dmlock CLI), the examples and their tests.

# Codec and socket path rules, pure; whoever links it also links dm_types.c
# (libdmengine.la, or libdmlock.la which compiles it in).
noinst_LTLIBRARIES += liblocalproto.la
liblocalproto_la_SOURCES = \
	libdmlock/local_proto.h libdmlock/local_proto.c \
	libdmlock/socket_path.h libdmlock/socket_path.c
liblocalproto_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden

lib_LTLIBRARIES += libdmlock.la
include_HEADERS += libdmlock/dmlock.h
libdmlock_la_SOURCES = \
	libdmlock/internal.h libdmlock/client.c libdmlock/client_lock.c \
	libdmlock/client_query.c libdmlock/errors.c dmlockd/engine/dm_types.c
libdmlock_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libdmlock_la_LIBADD = liblocalproto.la
libdmlock_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(LIBDMLOCK_LT_VERSION) \
	-Wl,--version-script=$(top_srcdir)/libdmlock/libdmlock.sym -no-undefined
EXTRA_libdmlock_la_DEPENDENCIES = libdmlock/libdmlock.sym
EXTRA_DIST += libdmlock/libdmlock.sym libdmlock/libdmlock.pc.in
pkgconfig_DATA = libdmlock/libdmlock.pc
DISTCLEANFILES += libdmlock/libdmlock.pc

# Codec unit tests, and the codec's fuzz target: corpus replay in make
# check, the libFuzzer binary with --enable-fuzzing (CC=clang).
check_PROGRAMS += tests/unit/check_local_proto
TESTS += tests/unit/check_local_proto
tests_unit_check_local_proto_SOURCES = tests/unit/check_local_proto.c dmlockd/engine/dm_types.c
tests_unit_check_local_proto_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_local_proto_LDADD = liblocalproto.la $(CHECK_LIBS)

check_PROGRAMS += tests/fuzz/replay_local_proto
TESTS += tests/fuzz/replay_local_proto
tests_fuzz_replay_local_proto_SOURCES = tests/fuzz/replay_corpus.c \
	tests/fuzz/fuzz_local_proto.c dmlockd/engine/dm_types.c
tests_fuzz_replay_local_proto_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_local_proto_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"local_proto"'
tests_fuzz_replay_local_proto_LDADD = liblocalproto.la
EXTRA_DIST += tests/fuzz/corpus/local_proto
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_local_proto
tests_fuzz_fuzz_local_proto_SOURCES = tests/fuzz/fuzz_local_proto.c dmlockd/engine/dm_types.c \
	libdmlock/local_proto.c
tests_fuzz_fuzz_local_proto_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_local_proto_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif

# The library against a real dmlockd (started by the test on a temporary
# socket), plus a fake daemon for the library's own deadline check.
check_PROGRAMS += tests/unit/check_libdmlock
TESTS += tests/unit/check_libdmlock
tests_unit_check_libdmlock_SOURCES = tests/unit/check_libdmlock.c \
	tests/unit/libdmlock_test_daemon.h tests/unit/libdmlock_test_daemon.c
tests_unit_check_libdmlock_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_libdmlock_LDADD = libdmlock.la $(CHECK_LIBS)
EXTRA_tests_unit_check_libdmlock_DEPENDENCIES = dmlockd/dmlockd

# The examples, built and run against a real dmlockd in make check.
check_PROGRAMS += libdmlock/examples/blocking libdmlock/examples/poll
libdmlock_examples_blocking_SOURCES = libdmlock/examples/blocking.c
libdmlock_examples_blocking_LDADD = libdmlock.la
libdmlock_examples_poll_SOURCES = libdmlock/examples/poll.c
libdmlock_examples_poll_LDADD = libdmlock.la
TESTS += libdmlock/examples/run-examples.sh
EXTRA_DIST += libdmlock/examples/run-examples.sh
dist_man_MANS += man/libdmlock.3
