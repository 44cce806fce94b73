# dmlockd/engine/algo_hierarchical.mk: the hierarchical group/system
# coordinator algorithm (Bisque 1992, ch. 6) and the invitation election,
# with unit tests and the simulator sweep (see NOTES-hierarchical.md).
libdmengine_la_SOURCES += \
	dmlockd/engine/algo_hierarchical.h \
	dmlockd/engine/algo_hierarchical.c \
	dmlockd/engine/algo_hierarchical_coord.c \
	dmlockd/engine/dm_election_invitation.c
EXTRA_DIST += dmlockd/engine/NOTES-hierarchical.md

check_PROGRAMS += tests/sim/check_sim_algo_hierarchical
TESTS += tests/sim/check_sim_algo_hierarchical
tests_sim_check_sim_algo_hierarchical_SOURCES = tests/sim/check_sim_algo_hierarchical.c tests/sim/sim_gate.h
tests_sim_check_sim_algo_hierarchical_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_sim_check_sim_algo_hierarchical_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm

check_PROGRAMS += tests/unit/check_algo_hierarchical tests/unit/check_election_invitation
TESTS += tests/unit/check_algo_hierarchical tests/unit/check_election_invitation
tests_unit_check_algo_hierarchical_SOURCES = tests/unit/check_algo_hierarchical.c \
	tests/unit/hier_harness.h tests/unit/engine_harness.h
tests_unit_check_algo_hierarchical_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_algo_hierarchical_LDADD = libdmengine.la $(CHECK_LIBS)
tests_unit_check_election_invitation_SOURCES = tests/unit/check_election_invitation.c \
	tests/unit/hier_harness.h tests/unit/engine_harness.h
tests_unit_check_election_invitation_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_election_invitation_LDADD = libdmengine.la $(CHECK_LIBS)
