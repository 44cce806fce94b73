# tests/cluster/cluster.mk: multi-daemon integration tests (real dmlockd
# processes on 127.0.0.1 over mutual TLS, driven by the dmlock CLI and by
# libdmlock through cluster_locker), their independent checker, and the
# cluster benchmark (bench/cluster_bench, built by `make`, run by
# bench/cluster_bench.sh; not a test).

check_PROGRAMS += tests/cluster/cluster_locker
tests_cluster_cluster_locker_SOURCES = tests/cluster/cluster_locker.c
tests_cluster_cluster_locker_LDADD = libdmlock.la

cluster_tests = \
	tests/cluster/00-checker.sh \
	tests/cluster/10-mutex-3nodes.sh \
	tests/cluster/11-mutex-5nodes.sh \
	tests/cluster/20-kill-holder-node.sh \
	tests/cluster/21-freeze-holder-node.sh \
	tests/cluster/22-freeze-rejoin.sh \
	tests/cluster/23-send-queue-overflow.sh \
	tests/cluster/24-static-restart.sh \
	tests/cluster/30-sponsor-join.sh \
	tests/cluster/31-graceful-leave.sh \
	tests/cluster/32-runtime-join.sh \
	tests/cluster/33-whole-cluster-restart.sh \
	tests/cluster/34-maekawa-static-restart.sh \
	tests/cluster/40-cron-nonblock.sh \
	tests/cluster/50-tls-refusals.sh \
	tests/cluster/51-handshake-mismatch.sh \
	tests/cluster/52-crl-reload.sh \
	tests/cluster/60-algorithms.sh \
	tests/cluster/61-kill-holder-algorithms.sh \
	tests/cluster/62-kill-holder-invitation.sh \
	tests/cluster/63-token-long-hold.sh

# Tests held back while a known defect makes them fail; run by hand with
# make check TESTS='$(CLUSTER_PENDING_TESTS)'.  None at the moment
# (30-sponsor-join came back once the transport's sessions got record
# epochs: see peer_session.h).
CLUSTER_PENDING_TESTS =

TESTS += $(cluster_tests)
EXTRA_DIST += tests/cluster/lib-cluster.sh tests/cluster/free-ports.py tests/cluster/check-mutex.awk \
	$(cluster_tests) $(CLUSTER_PENDING_TESTS)

# The cluster benchmark (built by `make`; not a test): bench/cluster_bench.sh.
noinst_PROGRAMS += bench/cluster_bench
bench_cluster_bench_SOURCES = bench/cluster_bench.c
bench_cluster_bench_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS) -pthread
bench_cluster_bench_LDADD = libdmlock.la $(OPENSSL_LIBS) -lpthread
EXTRA_DIST += bench/cluster_bench.sh bench/election_stall.sh bench/README.md
