# tests/integration/integration.mk: single-node integration tests of the
# real dmlock and dmlockd binaries (bash, run by `make check`; lib.sh holds
# the shared helpers).
integration_tests = \
	tests/integration/01-usage.sh \
	tests/integration/02-manpage.sh \
	tests/integration/03-unreachable.sh \
	tests/integration/10-run-basic.sh \
	tests/integration/11-mutual-exclusion.sh \
	tests/integration/12-busy.sh \
	tests/integration/13-kill-holder.sh \
	tests/integration/14-signals.sh \
	tests/integration/15-on-lost.sh \
	tests/integration/16-shared.sh \
	tests/integration/17-status.sh \
	tests/integration/18-access.sh \
	tests/integration/19-locks.sh \
	tests/integration/20-roster.sh \
	tests/integration/21-token-restart.sh \
	tests/integration/22-pipelined-answers.sh \
	tests/integration/23-sigchld-ignored.sh \
	tests/integration/24-kill-holder-group.sh \
	tests/integration/25-job-control.sh \
	tests/integration/26-daemon-refusals.sh \
	tests/integration/27-membership-record.sh
TESTS += $(integration_tests)
EXTRA_DIST += tests/integration/lib.sh $(integration_tests)
