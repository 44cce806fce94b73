# tests/sim/sim.mk: the deterministic simulator.  libdmsim.la (network,
# event queue, PRNG, workload, faults, checkers, trace), the dmlock-sim
# driver for long campaigns (see tests/sim/README-sim.md and tools/sim), and
# the check_sim_* tests.  Links only libdmengine.la: no libevent, no OpenSSL.
noinst_LTLIBRARIES += tests/sim/libdmsim.la
tests_sim_libdmsim_la_SOURCES = \
	tests/sim/sim_rng.h tests/sim/sim_rng.c \
	tests/sim/sim_heap.h tests/sim/sim_heap.c \
	tests/sim/sim_trace.h tests/sim/sim_trace.c \
	tests/sim/sim_check.h tests/sim/sim_check.c \
	tests/sim/sim_net.h tests/sim/sim_net.c \
	tests/sim/sim_world.h tests/sim/sim_world_priv.h tests/sim/sim_world.c \
	tests/sim/sim_world_events.c tests/sim/sim_world_nodes.c \
	tests/sim/sim_world_effects.c tests/sim/sim_world_clients.c \
	tests/sim/sim_world_faults.c

noinst_PROGRAMS += tests/sim/dmlock-sim
tests_sim_dmlock_sim_SOURCES = tests/sim/sim_main.c
tests_sim_dmlock_sim_LDADD = tests/sim/libdmsim.la libdmengine.la

SIM_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
SIM_TEST_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm

# The seed sweep is built three times (cluster sizes split in parts) so that
# make -j2 check runs it on both cores: 400 seeds per size for N = 1, 2, 3,
# 5, 8 (2,000), and 200 each for N = 12 and 16.
SIM_TESTS = \
	tests/sim/check_sim_checker \
	tests/sim/check_sim_random_small \
	tests/sim/check_sim_random_large \
	tests/sim/check_sim_random_wide \
	tests/sim/check_sim_negative \
	tests/sim/check_sim_storm \
	tests/sim/check_sim_metrics \
	tests/sim/check_sim_static
check_PROGRAMS += $(SIM_TESTS)
TESTS += $(SIM_TESTS)

tests_sim_check_sim_static_SOURCES = tests/sim/check_sim_static.c tests/sim/sim_gate.h
tests_sim_check_sim_static_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_static_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_checker_SOURCES = tests/sim/check_sim_checker.c
tests_sim_check_sim_checker_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_checker_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_random_small_SOURCES = tests/sim/check_sim_random.c
tests_sim_check_sim_random_small_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_SIZES=1,2,3,8
tests_sim_check_sim_random_small_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_random_small_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_random_large_SOURCES = tests/sim/check_sim_random.c
tests_sim_check_sim_random_large_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_SIZES=5
tests_sim_check_sim_random_large_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_random_large_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_random_wide_SOURCES = tests/sim/check_sim_random.c
tests_sim_check_sim_random_wide_CPPFLAGS = $(AM_CPPFLAGS) -DSIM_SIZES=12,16 -DSEEDS_PER_SIZE_DEFAULT=200
tests_sim_check_sim_random_wide_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_random_wide_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_negative_SOURCES = tests/sim/check_sim_negative.c
tests_sim_check_sim_negative_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_negative_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_storm_SOURCES = tests/sim/check_sim_storm.c
tests_sim_check_sim_storm_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_storm_LDADD = $(SIM_TEST_LDADD)

tests_sim_check_sim_metrics_SOURCES = tests/sim/check_sim_metrics.c
tests_sim_check_sim_metrics_CFLAGS = $(SIM_TEST_CFLAGS)
tests_sim_check_sim_metrics_LDADD = $(SIM_TEST_LDADD)

dist_noinst_SCRIPTS += tools/sim

# tools/sim itself: totals, failure, --resume and its refusals.
TESTS += tests/sim/check_tools_sim.sh
EXTRA_DIST += tests/sim/check_tools_sim.sh

# tools/sim-queue: the campaigns kept in tests/sim/campaigns/ (their state
# is not part of a release).
dist_noinst_SCRIPTS += tools/sim-queue
TESTS += tests/sim/check_tools_sim_queue.sh
EXTRA_DIST += tests/sim/check_tools_sim_queue.sh tests/sim/campaigns/README.md \
	tests/sim/campaigns/HISTORY.md tests/sim/campaigns/QUEUE
EXTRA_DIST += tests/sim/README-sim.md

# tools/sim-sweep: what an engine change passes before it lands.
dist_noinst_SCRIPTS += tools/sim-sweep
TESTS += tests/sim/check_tools_sim_sweep.sh
EXTRA_DIST += tests/sim/check_tools_sim_sweep.sh

# tools/sim-pgo: the profile-guided dmlock-sim for campaigns.  Not run by
# make check (a whole build of its own); it checks its build itself, by
# the fingerprints of every QUEUE configuration against the default build.
dist_noinst_SCRIPTS += tools/sim-pgo
