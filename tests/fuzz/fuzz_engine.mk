# tests/fuzz/fuzz_engine.mk: the engine fuzz target (every peer-message
# handler and payload decoder of every algorithm, behind the wire codec),
# its seed-corpus generator (runs the simulator; rerun it by hand with
# `tests/fuzz/gen_engine_corpus $(top_srcdir)/tests/fuzz/corpus/engine`
# after adding an algorithm or a message kind), and the corpus replay that
# make check runs everywhere.  The libFuzzer binary is built with
# --enable-fuzzing (CC=clang); HACKING.md has the command.
check_PROGRAMS += tests/fuzz/replay_engine
TESTS += tests/fuzz/replay_engine
tests_fuzz_replay_engine_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_engine.c \
	tests/fuzz/fuzz_engine.h
tests_fuzz_replay_engine_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"engine"'
tests_fuzz_replay_engine_LDADD = libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/engine

check_PROGRAMS += tests/fuzz/gen_engine_corpus
tests_fuzz_gen_engine_corpus_SOURCES = tests/fuzz/gen_engine_corpus.c tests/fuzz/fuzz_engine.h
tests_fuzz_gen_engine_corpus_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/sim
tests_fuzz_gen_engine_corpus_LDADD = tests/sim/libdmsim.la libdmengine.la -lm

if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_engine
# The engine's sources are compiled into the target so libFuzzer's
# coverage instrumentation sees them.
tests_fuzz_fuzz_engine_SOURCES = tests/fuzz/fuzz_engine.c tests/fuzz/fuzz_engine.h \
	$(libdmengine_la_SOURCES)
tests_fuzz_fuzz_engine_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_engine_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif
