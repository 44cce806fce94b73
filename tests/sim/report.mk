# tests/sim/report.mk: the side-by-side report of every algorithm against
# its paper (issues 7 and 8): dmlock-sim-report (tools/sim-report runs it at
# full scale, see tests/sim/README-sim.md) and its make-check test at a
# small scale with negative controls.
noinst_PROGRAMS += tests/sim/dmlock-sim-report
tests_sim_dmlock_sim_report_SOURCES = tests/sim/sim_report.c \
	tests/sim/sim_report_measure.h tests/sim/sim_report_measure.c
tests_sim_dmlock_sim_report_LDADD = tests/sim/libdmsim.la libdmengine.la -lm

TESTS += tests/sim/check_sim_report.sh
EXTRA_DIST += tests/sim/check_sim_report.sh
dist_noinst_SCRIPTS += tools/sim-report
