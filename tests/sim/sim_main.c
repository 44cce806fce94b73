/*
 * sim_main.c: dmlock-sim, the command-line driver of the deterministic
 * simulator: runs any range of seeds and cluster sizes, prints a violation
 * report (DMSIM_SEED=..., the invariant, a readable trace) for every
 * failing seed, and per-size statistics: messages per critical-section
 * entry, response time and synchronisation delay in units of the simulated
 * message delay D.  Exit status: 0 all seeds passed, 1 a violation, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_world.h"

struct size_stats {
	uint64_t runs, violations, grants, entries, algo_messages, faults, events;
	double response_sum, sync_sum, sync_max;
	uint64_t response_n, sync_n;
	uint64_t stale_storms, stale_at_heal;
};

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: dmlock-sim [options]\n"
	    "  --seed S             run one seed (replay)\n"
	    "  --seeds A..B | N     run seeds A..B, or 1..N (default 1..100)\n"
	    "  --nodes N | A-B      cluster size; with a range, seed s uses A + s mod (B-A+1)\n"
	    "  --algorithm NAME     default ricart-agrawala\n"
	    "  --policy majority|paper\n"
	    "  --election bully|invitation|both   coordinator election (default bully);\n"
	    "                       both: a hash of the seed picks one, half the seeds each\n"
	    "  --group-size N       hierarchical group size (default 0: the engine's)\n"
	    "  --faults / --no-faults   inject faults (default) or not\n"
	    "  --fault-mask HEX     subset of faults: 1 crash, 2 pause, 4 partition, 8 link,\n"
	    "                       10 leave, 20 join, 40 clock drift (default 7f); 80 the\n"
	    "                       stale-roster storm (one node cut off long enough to be\n"
	    "                       removed while the others crash and restart), only when\n"
	    "                       asked for\n"
	    "  --rotate-faults      one kind of the mask per seed, rotating as the make-check\n"
	    "                       gate does (every tenth seed fault-free, exact counts)\n"

	    "  --partition-any      partitions may cut off a majority, not only minorities\n"
	    "  --restarts sponsor|static|both  how crashed or departed initial members\n"
	    "                       restart: through a sponsor (default), from the static\n"
	    "                       roster (dmlockd with peers= under systemd), or a hash\n"
	    "                       of the seed picks one, half the seeds each\n"
	    "  --static-restarts    the same as --restarts static\n"
	    "  --safety-only        check safety only, not liveness (for runs that mix\n"
	    "                       fault kinds, which fail liveness at a known rate)\n"
	    "  --workload random|forever|light|heavy\n"
	    "  --no-shared          exclusive requests only\n"
	    "  --break never-defer|probe-bare-reply|stale-token|no-lease|greedy-handoff|\n"
	    "          stale-roster|late-grant (negative control)\n"
	    "  --metrics            RA section 5 figures: fault-free light and heavy load\n"
	    "  --trace              print every event of the run\n"
	    "  --fingerprints       print each seed's event count and trace hash (two\n"
	    "                       builds run a seed identically iff these match)\n"
	    "  --fault-ms MS, --calm-ms MS, --delay-us US (D, default 1000)\n"
	    "  --constant-delay     every message takes exactly D\n"
	    "  --max-reports K      full reports for the first K failing seeds (default 3)\n"
	    "  --quiet              only the summary\n");
}

static int
parse_range(const char *s, uint64_t *lo, uint64_t *hi, const char *sep)
{
	char *end;
	const char *p = strstr(s, sep);

	errno = 0;
	*lo = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (!p) {
		if (*end)
			return -EINVAL;
		*hi = *lo;
		return 1;
	}
	if (end != p)
		return -EINVAL;
	*hi = strtoull(p + strlen(sep), &end, 10);
	if (errno || *end || *hi < *lo)
		return -EINVAL;
	return 2;
}

static uint32_t
breakage_flag(const char *s)
{
	if (strcmp(s, "never-defer") == 0)
		return DM_BREAK_NEVER_DEFER;
	if (strcmp(s, "probe-bare-reply") == 0)
		return DM_BREAK_PROBE_BARE_REPLY;
	if (strcmp(s, "stale-token") == 0)
		return DM_BREAK_STALE_TOKEN;
	if (strcmp(s, "no-lease") == 0)
		return DM_BREAK_NO_LEASE;
	if (strcmp(s, "greedy-handoff") == 0)
		return DM_BREAK_GREEDY_HANDOFF;
	if (strcmp(s, "stale-roster") == 0)
		return DM_BREAK_STALE_ROSTER;
	if (strcmp(s, "late-grant") == 0)
		return DM_BREAK_LATE_GRANT;
	return 0;
}

static void
account(struct size_stats *st, const struct sim_result *res, int r)
{
	st->runs++;
	st->violations += r != 0;
	st->grants += res->grants;
	st->entries += res->entries;
	st->algo_messages += res->algo_messages;
	st->faults += res->faults_injected;
	st->stale_storms += res->stale_storms;
	st->stale_at_heal += res->stale_at_heal;
	st->events += res->events;
	st->response_sum += res->response_sum_d;
	st->response_n += res->response_n;
	st->sync_sum += res->sync_sum_d;
	st->sync_n += res->sync_n;
	if (res->sync_max_d > st->sync_max)
		st->sync_max = res->sync_max_d;
}

static void
print_stats(unsigned n, const struct size_stats *st, const char *algorithm)
{
	printf("N=%-3u runs=%-8" PRIu64 " violations=%-4" PRIu64 " grants=%-9" PRIu64
	    " entries=%-9" PRIu64 " msgs/entry=", n, st->runs, st->violations,
	    st->grants, st->entries);
	if (st->entries)
		printf("%.3f", (double)st->algo_messages / (double)st->entries);
	else
		printf("-");
	/* The fault-free figure of the paper, where it is one formula (faults
	 * and the roster's own traffic add to it; tools/sim-report measures
	 * every algorithm under the papers' settings). */
	if (algorithm == NULL || strcmp(algorithm, "ricart-agrawala") == 0)
		printf(" (RA: 2(N-1)=%u)", 2 * (n - 1));
	else if (strcmp(algorithm, "lamport") == 0)
		printf(" (Lamport: 3(N-1)=%u)", 3 * (n - 1));
	printf(" response=");
	if (st->response_n)
		printf("%.3fD", st->response_sum / (double)st->response_n);
	else
		printf("-");
	printf(" sync-delay=");
	if (st->sync_n)
		printf("%.3fD(max %.3fD)", st->sync_sum / (double)st->sync_n, st->sync_max);
	else
		printf("-");
	printf(" faults=%" PRIu64, st->faults);
	if (st->stale_storms)
		printf(" storms=%" PRIu64 " stale-at-heal=%" PRIu64, st->stale_storms, st->stale_at_heal);
	printf("\n");
}

/* RA §5: light load (one request at a time) gives the response time, heavy
 * load (everybody always waiting) the synchronisation delay. */
static int
run_metrics(struct sim_config *base, uint64_t nlo, uint64_t nhi)
{
	int failed = 0;

	printf("RA section 5 metrics, fault-free, constant message delay D:\n");
	for (uint64_t n = nlo; n <= nhi; n++) {
		struct sim_config cfg = *base;
		struct sim_result light, heavy;
		int r1, r2;

		cfg.nodes = (unsigned)n;
		cfg.faults = 0;
		cfg.constant_delay = true;
		cfg.shared = false;
		cfg.workload = SIM_W_LIGHT;
		r1 = sim_run(&cfg, &light);
		cfg.workload = SIM_W_HEAVY;
		r2 = sim_run(&cfg, &heavy);
		if (r1 < 0 || r2 < 0) {
			fprintf(stderr, "dmlock-sim: setup failed: %s\n", strerror(-(r1 < 0 ? r1 : r2)));
			return 2;
		}
		failed |= r1 | r2;
		printf("N=%-3" PRIu64 " msgs/entry=%.3f (2(N-1)=%" PRIu64 ") light-load response=%.3fD"
		    " (one round trip = 2D) heavy-load sync-delay=%.3fD max %.3fD (one message = 1D)"
		    " entries=%" PRIu64 "+%" PRIu64 "%s\n", n,
		    light.entries + heavy.entries ?
		    (double)(light.algo_messages + heavy.algo_messages) /
		    (double)(light.entries + heavy.entries) : 0.0, 2 * (n - 1),
		    light.response_n ? light.response_sum_d / (double)light.response_n : 0.0,
		    heavy.sync_n ? heavy.sync_sum_d / (double)heavy.sync_n : 0.0,
		    heavy.sync_max_d, light.entries, heavy.entries,
		    r1 || r2 ? "  VIOLATION" : "");
	}
	return failed ? 1 : 0;
}

/* --rotate-faults: seed s runs one fault kind of mask, in the order and
 * rotation of tests/sim/check_sim_random.c's gate; every tenth seed is
 * fault-free (exact message counts). */
static uint32_t
rotated_faults(uint32_t mask, uint64_t s)
{
	static const uint32_t order[] = {
		SIM_F_CRASH, SIM_F_PAUSE, SIM_F_PARTITION, SIM_F_LINK, SIM_F_LEAVE, SIM_F_JOIN,
		SIM_F_DRIFT, SIM_F_STALE,
	};
	uint32_t kinds[sizeof(order) / sizeof(order[0])];
	size_t n = 0;

	if (s % 10 == 0)
		return 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (mask & order[i])
			kinds[n++] = order[i];
	return n == 0 ? 0 : kinds[(s / 10 + s) % n];
}

/* A hash of seed s (splitmix64): --election both and --restarts both
 * take a bit each (the seed's parity would tie them to the cluster size
 * and the fault kind, which are taken modulo small numbers). */
static uint64_t
seed_hash(uint64_t s)
{
	uint64_t z = s + UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static const char *
seed_election(uint64_t s)
{
	return (seed_hash(s) & 1) ? "invitation" : "bully";
}

static bool
seed_static_restarts(uint64_t s)
{
	return (seed_hash(s) & 2) != 0;
}

int
main(int argc, char **argv)
{
	enum {
		O_SEED = 256, O_SEEDS, O_NODES, O_ALGO, O_POLICY, O_FAULTS, O_NOFAULTS,
		O_MASK, O_PANY, O_WORKLOAD, O_NOSHARED, O_BREAK, O_METRICS, O_TRACE,
		O_FAULTMS, O_CALMMS, O_DELAY, O_MAXREP, O_QUIET, O_HELP, O_CONST, O_ROTATE,
		O_ELECTION, O_GROUPSIZE, O_FINGERPRINTS, O_STATIC, O_RESTARTS, O_SAFETY,
	};
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, O_SEED },
		{ "seeds", required_argument, NULL, O_SEEDS },
		{ "nodes", required_argument, NULL, O_NODES },
		{ "algorithm", required_argument, NULL, O_ALGO },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "election", required_argument, NULL, O_ELECTION },
		{ "group-size", required_argument, NULL, O_GROUPSIZE },
		{ "faults", no_argument, NULL, O_FAULTS },
		{ "no-faults", no_argument, NULL, O_NOFAULTS },
		{ "fault-mask", required_argument, NULL, O_MASK },
		{ "partition-any", no_argument, NULL, O_PANY },
		{ "static-restarts", no_argument, NULL, O_STATIC },
		{ "restarts", required_argument, NULL, O_RESTARTS },
		{ "safety-only", no_argument, NULL, O_SAFETY },
		{ "workload", required_argument, NULL, O_WORKLOAD },
		{ "no-shared", no_argument, NULL, O_NOSHARED },
		{ "break", required_argument, NULL, O_BREAK },
		{ "metrics", no_argument, NULL, O_METRICS },
		{ "trace", no_argument, NULL, O_TRACE },
		{ "fingerprints", no_argument, NULL, O_FINGERPRINTS },
		{ "fault-ms", required_argument, NULL, O_FAULTMS },
		{ "calm-ms", required_argument, NULL, O_CALMMS },
		{ "delay-us", required_argument, NULL, O_DELAY },
		{ "max-reports", required_argument, NULL, O_MAXREP },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "rotate-faults", no_argument, NULL, O_ROTATE },
		{ "constant-delay", no_argument, NULL, O_CONST },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct sim_config cfg = { .shared = true, .faults = SIM_F_ALL };
	uint64_t slo = 1, shi = 100, nlo = 3, nhi = 3, v;
	uint64_t max_reports = 3, reported = 0, failed = 0;
	bool metrics = false, quiet = false, rotate = false, fingerprints = false;
	bool both_elections = false, both_restarts = false;
	enum sim_workload workload;
	uint32_t mask;
	struct size_stats *stats;
	int o, r;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case O_SEED:
			if (parse_range(optarg, &slo, &shi, "..") != 1)
				goto bad;
			break;
		case O_SEEDS:
			r = parse_range(optarg, &slo, &shi, "..");
			if (r < 0)
				goto bad;
			if (r == 1) {	/* a count */
				if (slo == 0)
					goto bad;
				shi = slo;
				slo = 1;
			}
			break;
		case O_NODES:
			if (parse_range(optarg, &nlo, &nhi, "-") < 0 || nlo < 1 || nhi > 60)
				goto bad;
			break;
		case O_ALGO:
			cfg.algorithm = optarg;
			break;
		case O_POLICY:
			if (strcmp(optarg, "paper") == 0)
				cfg.policy = DM_FAILURE_PAPER;
			else if (strcmp(optarg, "majority") == 0)
				cfg.policy = DM_FAILURE_MAJORITY;
			else
				goto bad;
			break;
		case O_ELECTION:
			if (strcmp(optarg, "both") == 0)
				both_elections = true;
			else if (strcmp(optarg, "bully") != 0 && strcmp(optarg, "invitation") != 0)
				goto bad;
			cfg.election = optarg;
			break;
		case O_GROUPSIZE:
			if (parse_range(optarg, &v, &v, "-") != 1 || v > 16)
				goto bad;	/* the engine clamps to 1..16; 0: default */
			cfg.group_size = (uint32_t)v;
			break;
		case O_FAULTS:
			cfg.faults = cfg.faults ? cfg.faults : SIM_F_ALL;
			break;
		case O_NOFAULTS:
			cfg.faults = 0;
			break;
		case O_MASK:
			cfg.faults = (uint32_t)strtoul(optarg, NULL, 16) & SIM_F_KNOWN;
			break;
		case O_PANY:
			cfg.partition_any = true;
			break;
		case O_STATIC:
			cfg.static_restarts = true;
			break;
		case O_SAFETY:
			cfg.safety_only = true;
			break;
		case O_RESTARTS:
			both_restarts = strcmp(optarg, "both") == 0;
			if (!both_restarts && strcmp(optarg, "static") != 0 &&
			    strcmp(optarg, "sponsor") != 0)
				goto bad;
			cfg.static_restarts = strcmp(optarg, "static") == 0;
			break;
		case O_WORKLOAD:
			if (strcmp(optarg, "random") == 0)
				cfg.workload = SIM_W_RANDOM;
			else if (strcmp(optarg, "forever") == 0)
				cfg.workload = SIM_W_FOREVER;
			else if (strcmp(optarg, "light") == 0)
				cfg.workload = SIM_W_LIGHT;
			else if (strcmp(optarg, "heavy") == 0)
				cfg.workload = SIM_W_HEAVY;
			else
				goto bad;
			break;
		case O_NOSHARED:
			cfg.shared = false;
			break;
		case O_BREAK:
			if (!(cfg.breakage |= breakage_flag(optarg)))
				goto bad;
			break;
		case O_METRICS:
			metrics = true;
			break;
		case O_TRACE:
			cfg.trace = stdout;
			break;
		case O_FINGERPRINTS:
			fingerprints = true;
			break;
		case O_FAULTMS:
		case O_CALMMS:
		case O_DELAY:
		case O_MAXREP:
			v = strtoull(optarg, NULL, 10);
			if (o == O_FAULTMS)
				cfg.fault_ms = (uint32_t)v;
			else if (o == O_CALMMS)
				cfg.calm_ms = (uint32_t)v;
			else if (o == O_DELAY)
				cfg.delay_us = (uint32_t)v;
			else
				max_reports = v;
			break;
		case O_QUIET:
			quiet = true;
			break;
		case O_ROTATE:
			rotate = true;
			break;
		case O_CONST:
			cfg.constant_delay = true;
			break;
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	if (metrics)
		return run_metrics(&cfg, nlo, nhi);

	stats = calloc(nhi + 1, sizeof(*stats));
	if (!stats)
		return 2;
	mask = cfg.faults;
	workload = cfg.workload;
	for (uint64_t s = slo; s <= shi; s++) {
		struct sim_result res;

		cfg.seed = s;
		if (rotate) {
			cfg.faults = rotated_faults(mask, s);
			cfg.workload = cfg.faults == 0 ? SIM_W_FOREVER : workload;
		}
		cfg.nodes = (unsigned)(nlo + s % (nhi - nlo + 1));
		if (both_elections)
			cfg.election = seed_election(s);
		if (both_restarts)
			cfg.static_restarts = seed_static_restarts(s);
		cfg.report = reported < max_reports ? stderr : NULL;
		r = sim_run(&cfg, &res);
		if (r < 0) {
			fprintf(stderr, "dmlock-sim: seed %" PRIu64 ": setup failed: %s\n", s,
			    strerror(-r));
			free(stats);
			return 2;
		}
		if (r > 0) {
			failed++;
			if (reported++ >= max_reports)
				fprintf(stderr, "DMSIM_SEED=%" PRIu64 " nodes=%u%s%s%s VIOLATION %s: %s\n",
				    s, cfg.nodes, both_elections ? " election=" : "",
				    both_elections ? cfg.election : "",
				    cfg.static_restarts ? " restarts=static" : "",
				    sim_violation_name(res.violation), res.what);
		}
		account(&stats[cfg.nodes], &res, r);
		if (cfg.trace || fingerprints)
			printf("seed %" PRIu64 ": %s, %" PRIu64 " events, trace hash %016" PRIx64 "\n",
			    s, r ? "VIOLATION" : "ok", res.events, res.trace_hash);
		if (!quiet && (s - slo + 1) % 10000 == 0)
			fprintf(stderr, "dmlock-sim: %" PRIu64 " seeds done, %" PRIu64 " failed\n",
			    s - slo + 1, failed);
	}
	printf("dmlock-sim: seeds %" PRIu64 "..%" PRIu64 " nodes %" PRIu64 "-%" PRIu64
	    " algorithm %s%s%s policy %s faults %#x%s%s%s: %" PRIu64 " runs, %" PRIu64 " violations\n",
	    slo, shi, nlo, nhi, cfg.algorithm ? cfg.algorithm : "ricart-agrawala",
	    cfg.election ? " election " : "",
	    both_elections ? "both" : cfg.election ? cfg.election : "",
	    cfg.policy == DM_FAILURE_PAPER ? "paper" : "majority", mask,
	    rotate ? " (one kind per seed)" : "",
	    both_restarts ? " restarts both" : cfg.static_restarts ? " restarts static" : "",
	    cfg.safety_only ? " safety only" : "", shi - slo + 1, failed);
	for (uint64_t n = nlo; n <= nhi; n++)
		if (stats[n].runs)
			print_stats((unsigned)n, &stats[n], cfg.algorithm);
	free(stats);
	return failed ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
