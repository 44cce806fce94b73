# dmlock-cli/dmlock-cli.mk: the dmlock command (links only libdmlock: no
# OpenSSL, no libevent, no config parsing) and its bash completion.
bin_PROGRAMS += dmlock
dmlock_SOURCES = \
	dmlock-cli/main.c dmlock-cli/cli.h dmlock-cli/exit_codes.h dmlock-cli/usage.c \
	dmlock-cli/connect.c \
	dmlock-cli/run.c dmlock-cli/run_options.c dmlock-cli/run_options.h \
	dmlock-cli/child.c dmlock-cli/child.h \
	dmlock-cli/lock_name.c dmlock-cli/lock_name.h dmlock-cli/sha256.c dmlock-cli/sha256.h \
	dmlock-cli/name_cmd.c dmlock-cli/admin.c \
	dmlock-cli/status.c dmlock-cli/status_report.c dmlock-cli/status_report.h \
	dmlock-cli/status_algorithm.c
dmlock_LDADD = libdmlock.la

# Installed under the command's name, as bash-completion looks it up.
bashcompletion_DATA = dmlock-cli/completion/dmlock
CLEANFILES += dmlock-cli/completion/dmlock
EXTRA_DIST += dmlock-cli/dmlock.bash-completion
dmlock-cli/completion/dmlock: dmlock-cli/dmlock.bash-completion
	$(AM_V_GEN)$(MKDIR_P) dmlock-cli/completion && cp $(srcdir)/dmlock-cli/dmlock.bash-completion $@

dist_man_MANS += man/dmlock.1
EXTRA_DIST += bench/cli_vs_flock.sh

# The STATUS/LOCKS block decoder and printers: fuzz target (strict JSON
# output whatever the daemon sends); its corpus is replayed in make check.
check_PROGRAMS += tests/fuzz/replay_status
TESTS += tests/fuzz/replay_status
tests_fuzz_replay_status_SOURCES = tests/fuzz/replay_corpus.c tests/fuzz/fuzz_status.c \
	tests/fuzz/json_check.h tests/fuzz/json_check.c \
	dmlock-cli/status_report.c dmlock-cli/status_algorithm.c
tests_fuzz_replay_status_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"status"'
EXTRA_DIST += tests/fuzz/corpus/status
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_status
tests_fuzz_fuzz_status_SOURCES = tests/fuzz/fuzz_status.c tests/fuzz/json_check.c \
	dmlock-cli/status_report.c dmlock-cli/status_algorithm.c
tests_fuzz_fuzz_status_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_status_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif

# The fuzz target's JSON checker, shown catching each kind of invalid JSON.
check_PROGRAMS += tests/unit/check_json_check
TESTS += tests/unit/check_json_check
tests_unit_check_json_check_SOURCES = tests/unit/check_json_check.c tests/fuzz/json_check.c
tests_unit_check_json_check_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_json_check_LDADD = $(CHECK_LIBS)
