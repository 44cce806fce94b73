/*
 * sim_world.c: the simulated cluster behind sim_world.h, one run from
 * start to verdict: the world's setup and teardown, the discrete-event
 * loop and its fingerprint, the early end once the cluster is quiet, the
 * final liveness checks and the violation report; and the clock and delay
 * helpers the other parts use.  The parts: sim_world_events.c (what each
 * event does), sim_world_nodes.c (engine processes), sim_world_effects.c
 * (engine effects, checked by the oracle), sim_world_clients.c (the
 * workload) and sim_world_faults.c (links, faults, the heal).  The engine
 * is used only through dm_engine.h; messages are encoded with
 * dm_wire_encode() when sent and decoded with dm_wire_decode() when
 * delivered.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sim_world_priv.h"

/* Earliest real instant >= now at which node's clock reads at least ms. */
sim_time_t
sw_real_when(const struct sim_world *w, const struct sim_node *nd, dm_msec_t ms)
{
	uint64_t target = ms * MS, cur = sw_host_clock_us(nd, w->now);
	sim_time_t t;

	if (ms >= UINT64_MAX / MS / 2)
		return UINT64_MAX / 2;
	if (target <= cur)
		return w->now;
	t = w->now + (sim_time_t)((target - cur) * 1000000 / (uint64_t)(1000000 + nd->ppm));
	while (sw_host_clock_us(nd, t) < target)
		t++;
	while (t > w->now && sw_host_clock_us(nd, t - 1) >= target)
		t--;
	return t;
}

sim_time_t
sw_msg_delay(struct sim_world *w)
{
	uint64_t d = w->cfg.delay_us;

	if (w->cfg.constant_delay)
		return d;
	if (sim_rng_chance(&w->rng, 20))	/* a slow message now and then */
		return sim_rng_range(&w->rng, d, 15 * d);
	return sim_rng_range(&w->rng, d / 5, 2 * d);
}

void
sw_fail(struct sim_world *w, enum sim_violation v, const char *fmt, ...)
{
	char what[SIM_CHECK_WHAT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	sim_check_fail(&w->ck, v, "%s", what);
}

/* After the clients stop, the run may end early once the cluster has been
 * quiet for SIM_QUIET_MS: every request resolved, nobody holding, every
 * process serving.  That is exactly what final_checks() demands at the end,
 * and the quiet time covers several rounds of failure detection, so a node
 * wrongly suspected or removed in an idle cluster is still seen.  Without
 * it a sweep spends most of its time simulating heartbeats until the
 * liveness bound. */
bool
sw_quiet_long_enough(struct sim_world *w)
{
	if (!w->stopped || sim_check_pending(&w->ck) > 0)
		goto noisy;
	for (unsigned i = 0; i < w->n_slots; i++) {
		const struct sim_node *nd = &w->nodes[i];

		if (nd->exists && (nd->paused || nd->leaving || !nd->ready))
			goto noisy;
		for (unsigned c = 0; c < nd->n_clients && nd->exists; c++)
			if (nd->clients[c].state != C_IDLE)
				goto noisy;
	}
	if (w->quiet_since == 0)
		w->quiet_since = w->now;
	return w->now - w->quiet_since >= SIM_QUIET_MS * MS;
noisy:
	w->quiet_since = 0;
	return false;
}

/* After the run: every request resolved, every process serving. */
static void
final_checks(struct sim_world *w)
{
	if (w->cfg.safety_only)
		return;		/* (the fault-free message counts are liveness too) */
	sim_check_progress(&w->ck, w->now, w->liveness_bound);
	if (sw_violated(w))
		return;
	if (sim_check_pending(&w->ck) > 0)
		sw_fail(w, SIM_V_LIVENESS, "%zu request(s) still pending at the end",
		    sim_check_pending(&w->ck));
	for (unsigned i = 0; i < w->n_slots && !sw_violated(w); i++) {
		struct sim_node *nd = &w->nodes[i];

		if (nd->exists && !nd->ready && !nd->leaving)
			sw_fail(w, SIM_V_LIVENESS, "%s (incarnation %" PRIu64 ") never became"
			    " ready after healing", nd->name, nd->incarnation);
		for (unsigned c = 0; c < nd->n_clients && nd->exists; c++)
			if (nd->clients[c].state == C_HOLDING)
				sw_fail(w, SIM_V_LIVENESS, "%s client %#" PRIx64 " still holds at"
				    " the end", nd->name, nd->clients[c].handle);
	}
	if (!sw_violated(w) && w->cfg.faults == 0 && w->cfg.workload != SIM_W_RANDOM &&
	    w->cfg.msgs_per_peer != 0)
		sim_check_messages(&w->ck, w->res->algo_messages, w->ck.entries, w->cfg.nodes,
		    w->cfg.msgs_per_peer);
}

void
sim_config_defaults(struct sim_config *cfg)
{
	if (!cfg->algorithm)
		cfg->algorithm = "ricart-agrawala";
	if (cfg->nodes == 0)
		cfg->nodes = 3;
	if (cfg->delay_us == 0)
		cfg->delay_us = 1000;
	if (cfg->fault_ms == 0)
		cfg->fault_ms = 1500;
	if (cfg->calm_ms == 0)
		cfg->calm_ms = 800;
	if (cfg->trace_keep == 0)
		cfg->trace_keep = 400;
	if (!cfg->no_expectations && strcmp(cfg->algorithm, "ricart-agrawala") == 0) {
		if (cfg->msgs_per_peer == 0)
			cfg->msgs_per_peer = 2;
		if (cfg->request_kind == 0)
			cfg->request_kind = DM_RA_REQUEST;
		cfg->appendix_bound = true;
	}
	/* Lamport, Maekawa: arm the synchronisation-delay metric only
	 * (permission helper, SIM-REQUESTS.md). */
	if (!cfg->no_expectations && cfg->request_kind == 0) {
		if (strcmp(cfg->algorithm, "lamport") == 0)
			cfg->request_kind = DM_LP_REQUEST;
		else if (strcmp(cfg->algorithm, "maekawa") == 0)
			cfg->request_kind = DM_MK_REQUEST;
	}
}

static int
world_init(struct sim_world *w, const struct sim_config *cfg, struct sim_result *res)
{
	uint64_t d;
	int r;

	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	sim_config_defaults(&w->cfg);
	if (w->cfg.nodes > SIM_NODES_MAX - SIM_EXTRA_SLOTS)
		return -EINVAL;
	w->res = res;
	sim_rng_seed(&w->rng, w->cfg.seed);
	sim_heap_init(&w->heap);
	sim_check_init(&w->ck);
	w->n_slots = w->cfg.nodes + ((w->cfg.faults & SIM_F_JOIN) ? SIM_EXTRA_SLOTS : 0);
	if ((r = sim_net_init(&w->net, w->n_slots)) < 0)
		return r;
	if ((r = sim_trace_init(&w->trace, w->cfg.trace_keep, w->cfg.trace)) < 0)
		return r;
	w->n_locks = w->cfg.lock_names ? w->cfg.lock_names :
	    (unsigned)sim_rng_range(&w->rng, 1, 3);
	if (w->n_locks > SIM_LOCKS_MAX)
		w->n_locks = SIM_LOCKS_MAX;
	for (unsigned i = 0; i < w->n_locks; i++) {
		snprintf(w->lock_names[i], sizeof(w->lock_names[i]), "lock/%c", 'a' + i);
		w->last_exit_node[i] = -1;
	}
	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		snprintf(nd->name, sizeof(nd->name), "n%u", i);
		nd->timer_pos = SIZE_MAX;
		snprintf(nd->address, sizeof(nd->address), "10.0.0.%u:7400", i + 1);
		nd->base_real = 0;
		nd->base_local = sim_rng_range(&w->rng, 1000, 1000000) * MS;
		if (w->cfg.faults & SIM_F_DRIFT)
			nd->ppm = (int64_t)sim_rng_range(&w->rng, 0, 2 * SIM_DRIFT_PPM) - SIM_DRIFT_PPM;
		nd->n_clients = w->cfg.workload == SIM_W_LIGHT || w->cfg.workload == SIM_W_HEAVY ? 1 :
		    w->cfg.clients_per_node ? w->cfg.clients_per_node :
		    (unsigned)sim_rng_range(&w->rng, 1, 3);
		if (nd->n_clients > SIM_CLIENTS_MAX)
			nd->n_clients = SIM_CLIENTS_MAX;
	}
	d = w->cfg.delay_us;
	/* Liveness bound after healing: failure detection and removal, a
	 * rejoin (restart interval), then every client of the cluster served
	 * once with its longest hold and a few message delays each. */
	w->liveness_bound = 4 * (SIM_REQUEST_TIMEOUT_MS + SIM_PROBE_TIMEOUT_MS) * MS +
	    2 * SIM_RESTART_MS * MS + 4 * SIM_LEASE_MS * MS +
	    (sim_time_t)w->n_slots * SIM_CLIENTS_MAX * (150 * MS + 40 * d);
	w->heal_at = w->cfg.faults ? (sim_time_t)w->cfg.fault_ms * MS : 0;
	w->stop_at = w->heal_at + (sim_time_t)w->cfg.calm_ms * MS;
	w->end_at = w->stop_at + w->liveness_bound + 10 * MS;
	return 0;
}

static void
world_fini(struct sim_world *w)
{
	for (unsigned i = 0; i < w->n_slots; i++)
		dm_engine_free(w->nodes[i].eng);
	sim_heap_fini(&w->heap);
	sim_net_fini(&w->net);
	sim_check_fini(&w->ck);
	sim_trace_fini(&w->trace);
}

static void
report_name(void *ctx, const char *name, const char *address, bool is_self, bool link_up)
{
	(void)address;
	(void)is_self;
	(void)link_up;
	fprintf(ctx, " %s", name);
}

/* Each live process's roster when the run stopped: a split roster (two
 * members that do not list each other) is read here, not rebuilt from the
 * trace. */
static void
report_rosters(struct sim_world *w, FILE *out)
{
	fprintf(out, "--- rosters at the end ---\n");
	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];
		struct dm_engine_stats st;

		if (!nd->exists || nd->eng == NULL)
			continue;
		dm_engine_get_stats(nd->eng, &st);
		fprintf(out, "%s: %s, label %" PRIu64 ", %zu names:", nd->name,
		    st.ready ? "ready" : "not ready", st.roster_label, st.roster_size);
		dm_engine_visit_roster(nd->eng, report_name, out);
		fputc('\n', out);
	}
}

static void
report(struct sim_world *w)
{
	FILE *out = w->cfg.report;

	if (!out)
		return;
	fprintf(out, "DMSIM_SEED=%" PRIu64 " nodes=%u algorithm=%s election=%s group_size=%u"
	    " policy=%s faults=%#x workload=%d breakage=%#x restarts=%s\n", w->cfg.seed,
	    w->cfg.nodes, w->cfg.algorithm, w->cfg.election ? w->cfg.election : "bully",
	    w->cfg.group_size, w->cfg.policy == DM_FAILURE_PAPER ? "paper" : "majority",
	    w->cfg.faults, (int)w->cfg.workload, w->cfg.breakage,
	    w->cfg.static_restarts ? "static" : "sponsor");
	fprintf(out, "VIOLATION %s at %" PRIu64 "us: %s\n", sim_violation_name(w->ck.violation),
	    w->now, w->ck.what);
	fprintf(out, "--- last %zu trace lines ---\n", w->trace.count);
	sim_trace_dump(&w->trace, out);
	report_rosters(w, out);
	fprintf(out, "--- end of trace (replay: dmlock-sim --seed %" PRIu64 " --nodes %u%s%s%s --trace) ---\n",
	    w->cfg.seed, w->cfg.nodes, w->cfg.faults ? "" : " --no-faults",
	    w->cfg.policy == DM_FAILURE_PAPER ? " --policy paper" : "",
	    w->cfg.static_restarts ? " --restarts static" : "");
}

/* Fold one handled event into the run's fingerprint (FNV-1a over its
 * fields): cheap enough for every run, and two runs of one config differ
 * in it as soon as they differ in any event. */
static void
fingerprint(uint64_t *fp, const struct sim_event *ev)
{
	const uint64_t words[] = { ev->at, (uint64_t)(uint32_t)ev->kind,
	    (uint64_t)(uint32_t)ev->node, ev->a, ev->b, ev->c };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		*fp = (*fp ^ words[i]) * UINT64_C(0x100000001b3);
}

/* One run.  With tracing off the trace lines are never formatted, which is
 * most of the cost of a seed sweep; the violation report then comes from a
 * traced replay of the same seed (sim_run). */
static int
run_once(const struct sim_config *cfg, struct sim_result *res, bool tracing)
{
	struct sim_world *w = calloc(1, sizeof(*w));
	struct sim_event ev;
	uint64_t fp = UINT64_C(0xcbf29ce484222325);
	int r;

	memset(res, 0, sizeof(*res));
	if (!w)
		return -ENOMEM;
	if ((r = world_init(w, cfg, res)) < 0)
		goto fail;
	w->trace.enabled = tracing;
	for (unsigned i = 0; i < w->cfg.nodes; i++)
		if ((r = sw_node_start(w, (int)i, true)) < 0)
			goto fail;
	for (unsigned i = 0; i < w->n_slots; i++)
		for (unsigned c = 0; c < w->nodes[i].n_clients; c++)
			sw_client_schedule(w, (int)i, c, 0);
	if (w->cfg.faults & ~SIM_F_DRIFT) {
		sw_push(w, 20 * MS, EV_FAULT, -1, 0, 0, 0);
		sw_push(w, w->heal_at, EV_HEAL, -1, 0, 0, 0);
	} else {
		w->healed = true;
		sim_check_heal(&w->ck, 0);
	}
	sw_push(w, w->heal_at + (w->cfg.faults ? SIM_RESTART_MS * MS +
	    2 * (SIM_REQUEST_TIMEOUT_MS + SIM_PROBE_TIMEOUT_MS) * MS : 0), EV_SETTLE, -1, 0, 0, 0);
	sw_push(w, w->stop_at, EV_STOP, -1, 0, 0, 0);
	sw_push(w, w->heal_at + 50 * MS, EV_PROGRESS, -1, 0, 0, 0);
	sw_push(w, w->end_at, EV_END, -1, 0, 0, 0);
	while (!sw_violated(w) && !w->fatal && sim_heap_pop(&w->heap, &ev) == 0) {
		if (ev.at > w->end_at)
			break;
		w->now = ev.at;
		fingerprint(&fp, &ev);
		sw_handle(w, &ev);
		if (ev.kind == EV_END)
			break;
	}
	if (w->fatal) {
		r = w->fatal;
		goto fail;
	}
	if (!sw_violated(w))
		final_checks(w);
	res->violation = w->ck.violation;
	memcpy(res->what, w->ck.what, sizeof(res->what));
	res->grants = w->ck.grants;
	res->denials = w->ck.denials;
	res->entries = w->ck.entries;
	res->end_time = w->now;
	res->trace_hash = fp;
	if (sw_violated(w) && tracing)
		report(w);
	r = sw_violated(w) ? 1 : 0;
fail:
	world_fini(w);
	free(w);
	return r;
}

int
sim_run(const struct sim_config *cfg, struct sim_result *res)
{
	struct sim_result traced;
	bool tracing = cfg->trace != NULL;
	int r = run_once(cfg, res, tracing);

	if (r != 1 || tracing || !cfg->report)
		return r;
	/* Replay the seed with its trace kept, for the report.  The run is
	 * deterministic, so the replay must fail the same way. */
	if (run_once(cfg, &traced, true) == 1 && traced.violation == res->violation &&
	    traced.trace_hash == res->trace_hash)
		return r;
	fprintf(cfg->report, "DMSIM_SEED=%" PRIu64 ": the traced replay did not reproduce"
	    " the violation (%s): the simulation is not deterministic\n", cfg->seed, res->what);
	res->violation = SIM_V_NONDETERMINISM;
	return r;
}
