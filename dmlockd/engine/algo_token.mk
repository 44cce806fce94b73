# dmlockd/engine/algo_token.mk: the token algorithms (Suzuki-Kasami, Raymond,
# Naimi-Trehel), their shared token bookkeeping and the bully election, with
# unit tests and the simulator sweeps (see dmlockd/engine/NOTES-token.md).
libdmengine_la_SOURCES += \
	dmlockd/engine/dm_election.h dmlockd/engine/dm_election.c \
	dmlockd/engine/dm_election_bully.c \
	dmlockd/engine/dm_token.h dmlockd/engine/dm_token.c dmlockd/engine/dm_token_watchdog.c \
	dmlockd/engine/algo_suzuki_kasami.c \
	dmlockd/engine/algo_raymond.c \
	dmlockd/engine/algo_naimi_trehel.c
EXTRA_DIST += dmlockd/engine/NOTES-token.md

check_PROGRAMS += tests/unit/check_algo_token
TESTS += tests/unit/check_algo_token
tests_unit_check_algo_token_SOURCES = tests/unit/check_algo_token.c tests/unit/engine_harness.h
tests_unit_check_algo_token_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_algo_token_LDADD = libdmengine.la $(CHECK_LIBS)

# Simulator sweeps, one binary per algorithm (they run in parallel under -j).
TOKEN_SIM_TESTS = \
	tests/sim/check_sim_algo_suzuki_kasami \
	tests/sim/check_sim_algo_raymond \
	tests/sim/check_sim_algo_naimi_trehel
check_PROGRAMS += $(TOKEN_SIM_TESTS)
TESTS += $(TOKEN_SIM_TESTS)
tests_sim_check_sim_algo_suzuki_kasami_SOURCES = tests/sim/check_sim_algo_token.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_suzuki_kasami_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_ALGO='"suzuki-kasami"'
tests_sim_check_sim_algo_suzuki_kasami_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_sim_check_sim_algo_suzuki_kasami_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm
tests_sim_check_sim_algo_raymond_SOURCES = tests/sim/check_sim_algo_token.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_raymond_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_ALGO='"raymond"'
tests_sim_check_sim_algo_raymond_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_sim_check_sim_algo_raymond_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm
tests_sim_check_sim_algo_naimi_trehel_SOURCES = tests/sim/check_sim_algo_token.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_naimi_trehel_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_ALGO='"naimi-trehel"'
tests_sim_check_sim_algo_naimi_trehel_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_sim_check_sim_algo_naimi_trehel_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm

# The algorithms' status view (ALGO lines of dmlock status): token
# whereabouts, elections, coordinators.
check_PROGRAMS += tests/unit/check_describe
TESTS += tests/unit/check_describe
tests_unit_check_describe_SOURCES = tests/unit/check_describe.c tests/unit/engine_harness.h
tests_unit_check_describe_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_describe_LDADD = libdmengine.la $(CHECK_LIBS)
