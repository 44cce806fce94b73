# man/man.mk: the operations man pages (dmlockd(8), dmlockd.conf(5),
# dmlock-protocol(7); mdoc) and their tests.  dmlock(1) is listed by
# dmlock-cli/dmlock-cli.mk and libdmlock(3) by libdmlock/libdmlock.mk.
dist_man_MANS += man/dmlockd.8 man/dmlockd.conf.5 man/dmlock-protocol.7

# mandoc -T lint -W warning is silent on every page in man/.
TESTS += tests/ops/man-lint.sh
# Every --help option and config key is on its page.  Pending until
# dmlockd has a main() and dmlock(1) documents -V (see systemd/WIRING.md);
# the lead enables it with "TESTS += $(OPS_MAN_PENDING_TESTS)".
OPS_MAN_PENDING_TESTS = tests/ops/man-coverage.sh
EXTRA_DIST += tests/ops/man-lint.sh $(OPS_MAN_PENDING_TESTS) tests/ops/man-coverage.py
TESTS += $(OPS_MAN_PENDING_TESTS)
