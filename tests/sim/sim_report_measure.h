/*
 * sim_report_measure.h: measurements for the side-by-side algorithm report
 * (sim_report.c, tools/sim-report).  Runs fault-free simulations through
 * the simulator's observer hooks (sim_world.h) and counts, for any
 * algorithm, the messages of algorithm kinds (>= DM_MSG_ALGO_BASE; the
 * election's kinds and the failure detector's probes separately), the
 * response time (acquire to grant) and the synchronisation delay (a
 * release to the next grant of the same lock to another node whose request
 * was waiting at the release), all in units of the message delay T.
 */
#ifndef SIM_REPORT_MEASURE_H
#define SIM_REPORT_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_world.h"

enum report_load {
	LOAD_LIGHT = 0,		/* one request at a time in the cluster (SIM_W_LIGHT), nodes in turn */
	LOAD_SPARSE,		/* light load in random order: Poisson, think 20 N T, hold 2T */
	LOAD_HEAVY,		/* every node always waiting (SIM_W_HEAVY) */
	LOAD_REPEAT,		/* only node 0 asks, again and again (token stays there) */
	LOAD_POISSON,		/* Cao et al. 6.2: T_n = 5, T_c = 10, Poisson arrivals */
};

struct report_setup {
	const char	*algorithm;
	unsigned	 nodes;
	enum report_load load;
	uint64_t	 seed;
	uint32_t	 delay_us;	/* T */
	uint32_t	 calm_ms;	/* length of the shorter of the two runs */
	uint32_t	 breakage;	/* DM_BREAK_* (negative control) */
	double		 think_mean_units;	/* LOAD_POISSON: 1/lambda in units of T/5 */
};

/* Accumulated over one run. */
struct report_counts {
	uint64_t	 algo, probes, election, entries;
	double		 resp_sum, sync_sum, sync_max;
	uint64_t	 resp_n, sync_n;
	uint64_t	 by_kind[256];	/* algorithm messages by kind */
};

/* One cell of the table: whole run, and steady state (the difference of a
 * run of calm_ms and one of 2 x calm_ms with the same seed: both share
 * their first calm_ms event for event, so warm-up and drain cancel). */
struct report_cell {
	int		 violation;	/* sim_run: 0, 1 (a checker failed) or -errno */
	char		 what[SIM_CHECK_WHAT_MAX + 64];
	struct report_counts whole, steady;
	double		 msgs, probes, response, sync, sync_max;	/* steady, per entry / in T */
	/* sync_max: over the longer run's samples after the shorter run's end */
};

int	report_measure(const struct report_setup *s, struct report_cell *cell);

/* Coordinator crash under light load: node n0 (the system coordinator)
 * crashes and stays down; measured from the crash to the first survivor
 * announcing itself coordinator. */
struct report_election {
	int		 violation;
	char		 what[SIM_CHECK_WHAT_MAX + 64];
	char		 coordinator[32];	/* the new one ("" none) */
	double		 first_ms;	/* crash -> first election message, ms */
	double		 removal_ms;	/* crash -> first survivor removing the victim, ms */
	double		 elect_t;	/* that removal -> new coordinator, in T */
	double		 total_ms;	/* crash -> new coordinator, ms */
	double		 all_ms;	/* crash -> last survivor's last epoch change, ms */
	uint64_t	 messages;	/* election-kind messages after the crash */
	uint64_t	 held;		/* of which HELD reports */
};

int	report_election(const char *algorithm, const char *election, unsigned nodes,
	    uint64_t seed, uint32_t delay_us, struct report_election *out);

#endif /* SIM_REPORT_MEASURE_H */
