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
