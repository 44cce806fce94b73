# dmlockd/transport.mk: the peer transport (frames, TLS, peer links), the
# daemon config file, and their tests.  Owner: transport.
noinst_LTLIBRARIES += libdmtransport.la
libdmtransport_la_SOURCES = \
	dmlockd/frame.h dmlockd/frame.c \
	dmlockd/config_file.h dmlockd/config_private.h dmlockd/config_file.c \
	dmlockd/config_fields.c dmlockd/config_reload.c dmlockd/config_values.c \
	dmlockd/tls.h dmlockd/tls.c \
	dmlockd/peer_session.h dmlockd/peer_session.c \
	dmlockd/peer_transport.h dmlockd/peer_internal.h dmlockd/peer_transport.c dmlockd/peer_link.c
libdmtransport_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(INIH_CFLAGS)
libdmtransport_la_LIBADD = $(LIBEVENT_LIBS) $(OPENSSL_LIBS) $(INIH_LIBS)

# Programs using the transport link: libdmtransport.la libdmshell.la libdmengine.la
TRANSPORT_TEST_LIBS = libdmtransport.la libdmshell.la libdmengine.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_frame
TESTS += tests/unit/check_frame
tests_unit_check_frame_SOURCES = tests/unit/check_frame.c
tests_unit_check_frame_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_frame_LDADD = $(TRANSPORT_TEST_LIBS)

# Frame decoder fuzzing: the corpus replay runs in make check everywhere;
# the libFuzzer binary only with --enable-fuzzing (CC=clang).
check_PROGRAMS += tests/fuzz/replay_frame
TESTS += tests/fuzz/replay_frame
tests_fuzz_replay_frame_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_frame.c
tests_fuzz_replay_frame_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"frame"'
tests_fuzz_replay_frame_LDADD = libdmtransport.la libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/frame
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_frame
# The decoder's sources are compiled into the target so libFuzzer's
# coverage instrumentation sees them.
tests_fuzz_fuzz_frame_SOURCES = tests/fuzz/fuzz_frame.c dmlockd/frame.c dmlockd/engine/dm_types.c
tests_fuzz_fuzz_frame_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_frame_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif

check_PROGRAMS += tests/unit/check_config
TESTS += tests/unit/check_config
tests_unit_check_config_SOURCES = tests/unit/check_config.c
tests_unit_check_config_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_config_LDADD = $(TRANSPORT_TEST_LIBS)
EXTRA_DIST += tests/unit/conf

# Config file loader fuzzing, as for frames: the corpus replay (the unit
# tests' good and bad files, and inputs the fuzzer found) runs in make check.
check_PROGRAMS += tests/fuzz/replay_config
TESTS += tests/fuzz/replay_config
tests_fuzz_replay_config_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_config.c
tests_fuzz_replay_config_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"config"'
tests_fuzz_replay_config_LDADD = libdmtransport.la libdmshell.la libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/config
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_config
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz_config.c dmlockd/config_file.c \
	dmlockd/config_fields.c dmlockd/config_reload.c dmlockd/config_values.c \
	dmlockd/acl.c dmlockd/frame.c dmlockd/log.c dmlockd/engine/dm_types.c
tests_fuzz_fuzz_config_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS) $(SYSTEMD_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_config_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_config_LDADD = $(INIH_LIBS) $(SYSTEMD_LIBS)
endif

check_PROGRAMS += tests/unit/check_peer
TESTS += tests/unit/check_peer
tests_unit_check_peer_SOURCES = tests/unit/check_peer.c
tests_unit_check_peer_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_check_peer_LDADD = $(TRANSPORT_TEST_LIBS) $(LIBEVENT_LIBS) $(OPENSSL_LIBS)
dist_noinst_SCRIPTS += tools/mkcerts

check_PROGRAMS += tests/unit/check_peer_session
TESTS += tests/unit/check_peer_session
tests_unit_check_peer_session_SOURCES = tests/unit/check_peer_session.c
tests_unit_check_peer_session_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_peer_session_LDADD = $(TRANSPORT_TEST_LIBS)

TESTS += tests/transport/mkcerts.sh
EXTRA_DIST += tests/transport/mkcerts.sh

check_PROGRAMS += tests/transport/peer_node
tests_transport_peer_node_SOURCES = tests/transport/peer_node.c
tests_transport_peer_node_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_transport_peer_node_LDADD = libdmtransport.la libdmshell.la libdmengine.la $(LIBEVENT_LIBS) $(OPENSSL_LIBS)
TESTS += tests/transport/two_process.sh
EXTRA_DIST += tests/transport/two_process.sh
