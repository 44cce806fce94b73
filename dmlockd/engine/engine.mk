# dmlockd/engine/engine.mk: the pure protocol engine (libdmengine.la, links only libc),
# its unit tests, the wire fuzzer, the purity check and the engine benchmark.
noinst_LTLIBRARIES += libdmengine.la
libdmengine_la_SOURCES = \
	dmlockd/engine/dm_types.h dmlockd/engine/dm_types.c \
	dmlockd/engine/dm_engine.h \
	dmlockd/engine/dm_msg.h \
	dmlockd/engine/dm_wire.h dmlockd/engine/dm_wire.c \
	dmlockd/engine/dm_algorithm.h dmlockd/engine/dm_algorithm_registry.c \
	dmlockd/engine/dm_engine_private.h \
	dmlockd/engine/dm_engine.c \
	dmlockd/engine/dm_local.c \
	dmlockd/engine/dm_table.c \
	dmlockd/engine/dm_timer.c \
	dmlockd/engine/dm_roster.c \
	dmlockd/engine/dm_membership_private.h dmlockd/engine/dm_membership.c \
	dmlockd/engine/dm_membership_join.c dmlockd/engine/dm_membership_sponsor.c \
	dmlockd/engine/dm_membership_leave.c dmlockd/engine/dm_membership_failure.c \
	dmlockd/engine/dm_membership_vote.c dmlockd/engine/dm_member_record.c \
	dmlockd/engine/dm_static_hello.c \
	dmlockd/engine/dm_lease.c \
	dmlockd/engine/dm_lease_election.c \
	dmlockd/engine/dm_describe.c \
	dmlockd/engine/algo_ricart.c
# Per-target flags give the objects their own names (others compile dm_types.c too).
libdmengine_la_CFLAGS = $(AM_CFLAGS)
EXTRA_DIST += dmlockd/engine/NOTES.md

# Unit tests (Check).
ENGINE_CHECK_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
ENGINE_CHECK_LDADD = libdmengine.la $(CHECK_LIBS)
check_PROGRAMS += tests/unit/check_engine
TESTS += tests/unit/check_engine
tests_unit_check_engine_SOURCES = tests/unit/check_engine.c tests/unit/engine_harness.h
tests_unit_check_engine_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_ra
TESTS += tests/unit/check_engine_ra
tests_unit_check_engine_ra_SOURCES = tests/unit/check_engine_ra.c tests/unit/engine_harness.h
tests_unit_check_engine_ra_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_ra_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_roster
TESTS += tests/unit/check_engine_roster
tests_unit_check_engine_roster_SOURCES = tests/unit/check_engine_roster.c tests/unit/engine_harness.h
tests_unit_check_engine_roster_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_roster_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_membership
TESTS += tests/unit/check_engine_membership
tests_unit_check_engine_membership_SOURCES = tests/unit/check_engine_membership.c \
	tests/unit/engine_harness.h
tests_unit_check_engine_membership_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_membership_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_pending_removals
TESTS += tests/unit/check_engine_pending_removals
tests_unit_check_engine_pending_removals_SOURCES = tests/unit/check_engine_pending_removals.c \
	tests/unit/engine_harness.h
tests_unit_check_engine_pending_removals_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_pending_removals_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_roster_split
TESTS += tests/unit/check_engine_roster_split
tests_unit_check_engine_roster_split_SOURCES = tests/unit/check_engine_roster_split.c \
	tests/unit/engine_harness.h
tests_unit_check_engine_roster_split_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_roster_split_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_record
TESTS += tests/unit/check_engine_record
tests_unit_check_engine_record_SOURCES = tests/unit/check_engine_record.c tests/unit/engine_harness.h
tests_unit_check_engine_record_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_record_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_static
TESTS += tests/unit/check_engine_static
tests_unit_check_engine_static_SOURCES = tests/unit/check_engine_static.c tests/unit/engine_harness.h
tests_unit_check_engine_static_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_static_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_engine_floor
TESTS += tests/unit/check_engine_floor
tests_unit_check_engine_floor_SOURCES = tests/unit/check_engine_floor.c tests/unit/engine_harness.h
tests_unit_check_engine_floor_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_engine_floor_LDADD = $(ENGINE_CHECK_LDADD)
check_PROGRAMS += tests/unit/check_wire tests/unit/check_types
TESTS += tests/unit/check_wire tests/unit/check_types
tests_unit_check_wire_SOURCES = tests/unit/check_wire.c
tests_unit_check_wire_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_wire_LDADD = $(ENGINE_CHECK_LDADD)
tests_unit_check_types_SOURCES = tests/unit/check_types.c
tests_unit_check_types_CFLAGS = $(ENGINE_CHECK_CFLAGS)
tests_unit_check_types_LDADD = $(ENGINE_CHECK_LDADD)

# The engine boundary (no I/O headers, no clock/random/socket calls).
TESTS += tests/purity.sh
dist_noinst_SCRIPTS += tests/purity.sh

# Wire decoder fuzzing: corpus replay in make check; libFuzzer with --enable-fuzzing.
check_PROGRAMS += tests/fuzz/replay_wire
TESTS += tests/fuzz/replay_wire
tests_fuzz_replay_wire_SOURCES = tests/fuzz/replay_wire.c tests/fuzz/fuzz_wire.c
tests_fuzz_replay_wire_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_wire_LDADD = libdmengine.la
EXTRA_DIST += tests/fuzz/corpus/wire
if FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_wire
tests_fuzz_fuzz_wire_SOURCES = tests/fuzz/fuzz_wire.c dmlockd/engine/dm_wire.c \
	dmlockd/engine/dm_types.c
tests_fuzz_fuzz_wire_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_wire_LDFLAGS = -fsanitize=fuzzer,address,undefined
endif

# Benchmark (not a test): events per second, bytes per active lock.
noinst_PROGRAMS += bench/engine_bench
bench_engine_bench_SOURCES = bench/engine_bench.c
bench_engine_bench_LDADD = libdmengine.la
