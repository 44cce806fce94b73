# dmlockd/engine/algo_permission.mk: the permission-based algorithms beside
# Ricart-Agrawala (Lamport, Maekawa with its request sets), their unit tests
# and their simulator sweeps.  Appends to libdmengine.la (engine.mk).
libdmengine_la_SOURCES += \
	dmlockd/engine/dm_quorum.h dmlockd/engine/dm_quorum.c
EXTRA_DIST += dmlockd/engine/NOTES-permission.md

check_PROGRAMS += tests/unit/check_quorum
TESTS += tests/unit/check_quorum
tests_unit_check_quorum_SOURCES = tests/unit/check_quorum.c
tests_unit_check_quorum_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_quorum_LDADD = libdmengine.la $(CHECK_LIBS) -lm
libdmengine_la_SOURCES += dmlockd/engine/algo_lamport.c
libdmengine_la_SOURCES += dmlockd/engine/algo_maekawa.h dmlockd/engine/algo_maekawa.c \
	dmlockd/engine/algo_maekawa_view.c dmlockd/engine/algo_maekawa_arbiter.c \
	dmlockd/engine/algo_maekawa_requester.c

PERM_CHECK_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
PERM_CHECK_LDADD = libdmengine.la $(CHECK_LIBS)
check_PROGRAMS += tests/unit/check_algo_lamport tests/unit/check_algo_maekawa
TESTS += tests/unit/check_algo_lamport tests/unit/check_algo_maekawa
tests_unit_check_algo_lamport_SOURCES = tests/unit/check_algo_lamport.c \
	tests/unit/engine_harness.h tests/unit/check_algo_common.h
tests_unit_check_algo_lamport_CFLAGS = $(PERM_CHECK_CFLAGS)
tests_unit_check_algo_lamport_LDADD = $(PERM_CHECK_LDADD)
tests_unit_check_algo_maekawa_SOURCES = tests/unit/check_algo_maekawa.c \
	tests/unit/engine_harness.h tests/unit/check_algo_common.h
tests_unit_check_algo_maekawa_CFLAGS = $(PERM_CHECK_CFLAGS)
tests_unit_check_algo_maekawa_LDADD = $(PERM_CHECK_LDADD)

# Simulator sweeps (2,000 seeds each, faults on): one source, built per algorithm.
PERM_SIM_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
PERM_SIM_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm
check_PROGRAMS += tests/sim/check_sim_algo_lamport tests/sim/check_sim_algo_maekawa
TESTS += tests/sim/check_sim_algo_lamport tests/sim/check_sim_algo_maekawa
tests_sim_check_sim_algo_lamport_SOURCES = tests/sim/check_sim_algo_perm.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_lamport_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_ALGO='"lamport"'
tests_sim_check_sim_algo_lamport_CFLAGS = $(PERM_SIM_CFLAGS)
tests_sim_check_sim_algo_lamport_LDADD = $(PERM_SIM_LDADD)
tests_sim_check_sim_algo_maekawa_SOURCES = tests/sim/check_sim_algo_perm.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_maekawa_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_ALGO='"maekawa"'
tests_sim_check_sim_algo_maekawa_CFLAGS = $(PERM_SIM_CFLAGS)
tests_sim_check_sim_algo_maekawa_LDADD = $(PERM_SIM_LDADD)
