# dmlockd/engine/algo_rcv.mk: relative consensus voting (algo_rcv*.c) in the
# engine library, its unit tests and its simulator sweep.
libdmengine_la_SOURCES += \
	dmlockd/engine/algo_rcv.h \
	dmlockd/engine/algo_rcv.c \
	dmlockd/engine/algo_rcv_table.c \
	dmlockd/engine/algo_rcv_roster.c
EXTRA_DIST += dmlockd/engine/NOTES-rcv.md

# Unit tests: Exchange/Order on hand-made tables, wire form, message pumps.
check_PROGRAMS += tests/unit/check_algo_rcv
TESTS += tests/unit/check_algo_rcv
tests_unit_check_algo_rcv_SOURCES = tests/unit/check_algo_rcv.c tests/unit/engine_harness.h
tests_unit_check_algo_rcv_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_algo_rcv_LDADD = libdmengine.la $(CHECK_LIBS)

# Simulator: >= 2,000 faulty seeds (two halves for make -j2), the paper's
# figures (the small half, measured with tests/sim/sim_report_measure.c as
# tools/sim-report does) and replays of fixed fault seeds (the large half);
# links libdmsim like tests/sim/sim.mk.
RCV_SIM_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
RCV_SIM_LDADD = tests/sim/libdmsim.la libdmengine.la $(CHECK_LIBS) -lm
check_PROGRAMS += tests/sim/check_sim_algo_rcv tests/sim/check_sim_algo_rcv_large
TESTS += tests/sim/check_sim_algo_rcv tests/sim/check_sim_algo_rcv_large
tests_sim_check_sim_algo_rcv_SOURCES = tests/sim/check_sim_algo_rcv.c \
	tests/sim/sim_report_measure.h tests/sim/sim_report_measure.c
tests_sim_check_sim_algo_rcv_CPPFLAGS = $(AM_CPPFLAGS) -DRCV_SIZES=1,2,3,5
tests_sim_check_sim_algo_rcv_CFLAGS = $(RCV_SIM_CFLAGS)
tests_sim_check_sim_algo_rcv_LDADD = $(RCV_SIM_LDADD)
tests_sim_check_sim_algo_rcv_large_SOURCES = tests/sim/check_sim_algo_rcv.c
tests_sim_check_sim_algo_rcv_large_CPPFLAGS = $(AM_CPPFLAGS) -DRCV_SIZES=8 -DRCV_NO_METRICS
tests_sim_check_sim_algo_rcv_large_CFLAGS = $(RCV_SIM_CFLAGS)
tests_sim_check_sim_algo_rcv_large_LDADD = $(RCV_SIM_LDADD)
