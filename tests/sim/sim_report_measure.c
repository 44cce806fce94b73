/*
 * sim_report_measure.c: the measuring half of the side-by-side algorithm
 * report (see sim_report_measure.h): observer callbacks on the simulator's
 * engine inputs and effects, the workloads of the report (light, heavy,
 * repeat, the RCV paper's Poisson setting) and the coordinator-crash
 * election run.  Counts every algorithm's messages generically by kind.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_rcv.h"
#include "dm_election.h"
#include "dm_msg.h"
#include "sim_report_measure.h"

#define OBS_CLIENTS	8
#define OBS_LOCKS	4
#define NEVER		(UINT64_MAX / 4)	/* a think time past every run's end */

struct obs_client {
	uint64_t	 handle;
	sim_time_t	 acquired;
	int		 lock;
};

struct obs {
	bool		 ra;		/* kinds 67/68 are RA's probes */
	uint32_t	 delay_us;
	enum report_load load;
	double		 think_mean_us;
	sim_time_t	 max_from;	/* sync_max counts samples from here on */
	struct report_counts c;
	struct obs_client cl[SIM_NODES_MAX][OBS_CLIENTS];
	char		 locks[OBS_LOCKS][DM_LOCK_NAME_MAX + 1];
	unsigned	 n_locks;
	struct {
		sim_time_t at;
		int	 node;
		bool	 pending;
	} rel[OBS_LOCKS];
	/* Election run. */
	bool		 crashed;
	sim_time_t	 crash_at, first_el, coord_at, last_el, removed_at;
	char		 coord[32];
	uint64_t	 el_after, held_after;
};

static bool
probe_kind(const struct obs *o, uint8_t kind)
{
	switch (kind) {
	case DM_LP_ARE_YOU_THERE:
	case DM_LP_YES_I_AM_HERE:
	case DM_MK_ARE_YOU_THERE:
	case DM_MK_YES_I_AM_HERE:
	case RCV_MSG_PROBE:
	case RCV_MSG_PROBE_ACK:
		return true;
	case DM_RA_ARE_YOU_THERE:
	case DM_RA_YES_I_AM_HERE:
		return o->ra;
	default:
		return false;
	}
}

static bool
election_kind(uint8_t kind)
{
	return kind >= DM_EL_ARE_YOU_UP && kind < DM_EL_KIND_MAX_;
}

static int
lock_slot(struct obs *o, const char *name, size_t len)
{
	for (unsigned i = 0; i < o->n_locks; i++)
		if (strlen(o->locks[i]) == len && memcmp(o->locks[i], name, len) == 0)
			return (int)i;
	if (o->n_locks == OBS_LOCKS || len > DM_LOCK_NAME_MAX)
		return -1;
	memcpy(o->locks[o->n_locks], name, len);
	o->locks[o->n_locks][len] = '\0';
	return (int)o->n_locks++;
}

static struct obs_client *
client_slot(struct obs *o, uint64_t handle)
{
	unsigned n = (unsigned)(handle >> 48), c = (unsigned)((handle >> 40) & 0xff);

	if (n >= SIM_NODES_MAX || c >= OBS_CLIENTS)
		return NULL;
	return &o->cl[n][c];
}

static double
in_t(const struct obs *o, sim_time_t dt)
{
	return (double)dt / (double)o->delay_us;
}

static void
observe_event(void *ctx, sim_time_t now, int node, const struct dm_event *ev)
{
	struct obs *o = ctx;
	struct obs_client *cl;

	switch (ev->type) {
	case DM_EV_ACQUIRE:
		if (!(cl = client_slot(o, ev->u.acquire.handle)))
			return;
		cl->handle = ev->u.acquire.handle;
		cl->acquired = now;
		cl->lock = lock_slot(o, ev->u.acquire.lock, ev->u.acquire.lock_len);
		return;
	case DM_EV_RELEASE:
		cl = client_slot(o, ev->u.release.handle);
		if (!cl || cl->handle != ev->u.release.handle || cl->lock < 0)
			return;
		o->rel[cl->lock].at = now;
		o->rel[cl->lock].node = node;
		o->rel[cl->lock].pending = true;
		return;
	case DM_EV_LINK_DOWN:
		/* The crashed node's peers see its link drop one T later. */
		if (!o->crashed && strcmp(ev->u.link.peer, "n0") == 0) {
			o->crashed = true;
			o->crash_at = now - o->delay_us;
		}
		return;
	default:
		return;
	}
}

static void
on_grant(struct obs *o, sim_time_t now, int node, uint64_t handle)
{
	struct obs_client *cl = client_slot(o, handle);

	o->c.entries++;
	if (!cl || cl->handle != handle)
		return;
	o->c.resp_sum += in_t(o, now - cl->acquired);
	o->c.resp_n++;
	if (cl->lock < 0 || !o->rel[cl->lock].pending)
		return;
	o->rel[cl->lock].pending = false;
	/* Synchronisation delay: another node, whose request was waiting. */
	if (o->rel[cl->lock].node != node && cl->acquired < o->rel[cl->lock].at) {
		double d = in_t(o, now - o->rel[cl->lock].at);

		o->c.sync_sum += d;
		o->c.sync_n++;
		if (d > o->c.sync_max && now >= o->max_from)
			o->c.sync_max = d;
	}
}

static void
on_log(struct obs *o, sim_time_t now, int node, const char *text)
{
	if (o->crashed && node != 0 && o->removed_at == 0 &&
	    (strstr(text, "member failed") || strstr(text, "member removed")))
		o->removed_at = now;
	/* "election: ..." (bully), "election (invitation): ..." */
	if (!o->crashed || node == 0 || strncmp(text, "election", 8) != 0)
		return;
	o->last_el = now;
	if (o->coord_at == 0 && strstr(text, "this node is the new coordinator")) {
		o->coord_at = now;
		snprintf(o->coord, sizeof(o->coord), "n%d", node);
	}
}

static void
observe_effect(void *ctx, sim_time_t now, int node, const struct dm_effect *fx)
{
	struct obs *o = ctx;
	uint8_t kind;

	switch (fx->type) {
	case DM_FX_SEND:
		kind = fx->u.send.msg->kind;
		if (election_kind(kind)) {
			o->c.election++;
			if (o->crashed) {
				if (o->el_after++ == 0)
					o->first_el = now;
				o->held_after += kind == DM_EL_HELD;
			}
		} else if (kind >= DM_MSG_ALGO_BASE) {
			o->c.algo++;
			o->c.by_kind[kind]++;
			o->c.probes += probe_kind(o, kind);
		}
		return;
	case DM_FX_GRANT:
		on_grant(o, now, node, fx->u.grant.handle);
		return;
	case DM_FX_LOG:
		on_log(o, now, node, fx->u.log.text);
		return;
	default:
		return;
	}
}

/* LOAD_REPEAT: node 0 asks at once, the others never.  LOAD_POISSON:
 * exponential think time (a Poisson arrival process per node while idle). */
static sim_time_t
think_time(void *ctx, int node, uint64_t random)
{
	const struct obs *o = ctx;
	double u;

	if (o->load == LOAD_REPEAT)
		return node == 0 ? 0 : NEVER;
	u = ((double)(random >> 11) + 0.5) / 9007199254740992.0;	/* (0, 1) */
	return (sim_time_t)(-log(u) * o->think_mean_us);
}

/* LOAD_POISSON: T_c = 10 units = 2 T (T_n = 5 units = T); LOAD_SPARSE: 2T. */
static sim_time_t
hold_time(void *ctx, int node, uint64_t random)
{
	const struct obs *o = ctx;

	(void)node;
	(void)random;
	return 2 * (sim_time_t)o->delay_us;
}

static int
run_one(const struct report_setup *s, uint32_t calm_ms, sim_time_t max_from,
    struct report_counts *out, char *what, size_t what_len)
{
	static struct obs o;	/* large (client table); one run at a time */
	struct sim_config cfg = {
		.seed = s->seed, .nodes = s->nodes, .algorithm = s->algorithm,
		.faults = 0, .breakage = s->breakage, .constant_delay = true,
		.shared = false, .delay_us = s->delay_us, .calm_ms = calm_ms,
		.workload = s->load == LOAD_LIGHT ? SIM_W_LIGHT : SIM_W_HEAVY,
		.observe_event = observe_event, .observe_effect = observe_effect,
		.hook_ctx = &o,
	};
	struct sim_result res;
	int r;

	memset(&o, 0, sizeof(o));
	o.ra = strcmp(s->algorithm, "ricart-agrawala") == 0;
	o.delay_us = s->delay_us;
	o.load = s->load;
	o.max_from = max_from;
	o.think_mean_us = s->load == LOAD_SPARSE ? 20.0 * s->nodes * s->delay_us :
	    s->think_mean_units * s->delay_us / 5.0;
	if (s->load != LOAD_LIGHT && s->load != LOAD_HEAVY)
		cfg.think_time = think_time;
	if (s->load == LOAD_POISSON || s->load == LOAD_SPARSE)
		cfg.hold_time = hold_time;
	r = sim_run(&cfg, &res);
	*out = o.c;
	if (r != 0)
		snprintf(what, what_len, "%s: %s", r < 0 ? "setup failed" :
		    sim_violation_name(res.violation), r < 0 ? strerror(-r) : res.what);
	return r;
}

static double
ratio(double a, uint64_t n)
{
	return n ? a / (double)n : NAN;
}

int
report_measure(const struct report_setup *s, struct report_cell *cell)
{
	struct report_counts a, *b = &cell->whole, *d = &cell->steady;
	int r;

	memset(cell, 0, sizeof(*cell));
	r = run_one(s, s->calm_ms, 0, &a, cell->what, sizeof(cell->what));
	if (r == 0)
		r = run_one(s, 2 * s->calm_ms, (sim_time_t)s->calm_ms * 1000, b, cell->what,
		    sizeof(cell->what));
	cell->violation = r;
	if (r != 0)
		return r;
	d->algo = b->algo - a.algo;
	d->probes = b->probes - a.probes;
	d->election = b->election - a.election;
	d->entries = b->entries - a.entries;
	d->resp_sum = b->resp_sum - a.resp_sum;
	d->resp_n = b->resp_n - a.resp_n;
	d->sync_sum = b->sync_sum - a.sync_sum;
	d->sync_n = b->sync_n - a.sync_n;
	d->sync_max = b->sync_max;
	for (size_t k = 0; k < 256; k++)
		d->by_kind[k] = b->by_kind[k] - a.by_kind[k];
	cell->msgs = ratio((double)d->algo, d->entries);
	cell->probes = ratio((double)d->probes, d->entries);
	cell->response = ratio(d->resp_sum, d->resp_n);
	cell->sync = ratio(d->sync_sum, d->sync_n);
	cell->sync_max = d->sync_n ? d->sync_max : NAN;
	return 0;
}

int
report_election(const char *algorithm, const char *election, unsigned nodes,
    uint64_t seed, uint32_t delay_us, struct report_election *out)
{
	static struct obs o;
	/* The simulator's first fault comes at 20 ms; healing at 21 ms makes
	 * it the only one.  The victim n0 is the lowest-numbered node: the
	 * coordinator of every election here. */
	struct sim_config cfg = {
		.seed = seed, .nodes = nodes, .algorithm = algorithm, .election = election,
		.faults = SIM_F_CRASH, .crash_victim = 1, .fault_ms = 21, .calm_ms = 300,
		.constant_delay = true, .shared = false, .delay_us = delay_us,
		.workload = SIM_W_LIGHT, .observe_event = observe_event,
		.observe_effect = observe_effect, .hook_ctx = &o,
	};
	struct sim_result res;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&o, 0, sizeof(o));
	if (getenv("DMLOCK_SIM_REPORT_TRACE"))	/* debugging aid: the whole run */
		cfg.trace = stderr;
	o.delay_us = delay_us;
	o.load = LOAD_LIGHT;
	r = sim_run(&cfg, &res);
	out->violation = r;
	if (r != 0)
		snprintf(out->what, sizeof(out->what), "%s: %s", r < 0 ? "setup failed" :
		    sim_violation_name(res.violation), r < 0 ? strerror(-r) : res.what);
	if (r < 0)
		return r;
	if (!o.crashed) {
		snprintf(out->what, sizeof(out->what), "the coordinator did not crash");
		out->violation = -ESRCH;
		return -ESRCH;
	}
	memcpy(out->coordinator, o.coord, sizeof(out->coordinator));
	out->messages = o.el_after;
	out->held = o.held_after;
	if (o.el_after)
		out->first_ms = (double)(o.first_el - o.crash_at) / 1000.0;
	if (o.removed_at)
		out->removal_ms = (double)(o.removed_at - o.crash_at) / 1000.0;
	if (o.coord_at) {
		sim_time_t from = o.removed_at && o.removed_at <= o.coord_at ? o.removed_at :
		    o.crash_at;

		out->elect_t = (double)(o.coord_at - from) / delay_us;
		out->total_ms = (double)(o.coord_at - o.crash_at) / 1000.0;
	}
	if (o.last_el)
		out->all_ms = (double)(o.last_el - o.crash_at) / 1000.0;
	return r;
}
