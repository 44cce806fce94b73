/*
 * sim_world_nodes.c: the simulated dmlockd processes: starting an engine
 * (with the static roster or through a sponsor, on its drifting host
 * clock), stepping it and keeping its one timer in the event queue, and
 * its end (crash, or exit after leaving) with every trace of it.
 */
#include "sim_world_priv.h"

/* Forget the node's pending deadline: a new generation, and its event
 * leaves the queue at once (stale timers would otherwise pile up in the
 * heap, one per engine step, and dominate a sweep's run time). */
static void
timer_drop(struct sim_world *w, struct sim_node *nd)
{
	nd->timer_gen++;
	if (nd->timer_pos != SIZE_MAX)
		sim_heap_remove(&w->heap, nd->timer_pos);
}

static void
timer_rearm(struct sim_world *w, int n)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_event ev = { .kind = EV_TIMER, .node = n, .track = &nd->timer_pos };
	dm_msec_t d;

	if (!nd->eng)
		return;
	d = dm_engine_next_deadline(nd->eng);
	if (d == 0) {
		timer_drop(w, nd);
		return;
	}
	ev.at = sw_real_when(w, nd, d);
	ev.a = ++nd->timer_gen;
	ev.b = nd->incarnation;
	if (nd->timer_pos != SIZE_MAX)
		sim_heap_replace(&w->heap, nd->timer_pos, &ev);	/* = drop + push */
	else if (sim_heap_push(&w->heap, &ev) < 0)
		w->fatal = -ENOMEM;
}

/* After the heal, node n left for good (it does not come back): a node still
 * joining through it alone is restarted with another sponsor by the operator
 * if it has not joined after a generous wait (a JOIN that reached n while it
 * was leaving was refused with a hint to another member: given time, the
 * engine finds its way; a JOIN that arrived after n exited found nobody). */
static void
sponsor_left(struct sim_world *w, int n)
{
	for (unsigned j = 0; j < w->n_slots; j++) {
		struct sim_node *jd = &w->nodes[j];

		if ((int)j != n && jd->exists && !jd->member_now && jd->sponsor == n)
			sw_push(w, w->now + SIM_OPERATOR_WAIT_MS * MS, EV_SPONSOR_GONE, (int)j, 0,
			    jd->incarnation, 0);
	}
}

void
sw_node_step(struct sim_world *w, int n, struct dm_event *ev)
{
	struct sim_node *nd = &w->nodes[n];
	int r;

	if (!nd->eng)
		return;
	ev->now = sw_host_clock_ms(nd, w->now);
	if (ev->now < nd->last_now)
		ev->now = nd->last_now;
	nd->last_now = ev->now;
	w->stepping = n;
	if (w->cfg.observe_event)
		w->cfg.observe_event(w->cfg.hook_ctx, w->now, n, ev);
	r = dm_engine_step(nd->eng, ev, sw_on_effect, w);
	w->res->events++;
	if (r == -EPROTO)
		w->res->engine_errors++;
	if (r < 0)
		TRACE(w, "%s: step(type %d) returned %d", nd->name, ev->type, r);
	if (!nd->left) {
		struct dm_engine_stats st;

		/* An engine that resets itself to rejoin says so only here. */
		dm_engine_get_stats(nd->eng, &st);
		if (nd->ready && !st.ready)
			TRACE(w, "%s: no longer ready", nd->name);
		nd->ready = st.ready;
		nd->ever |= st.ready;
	}
	if (nd->left) {
		if (w->healed)
			sponsor_left(w, n);
		sw_node_gone(w, n, "left");
		/* Comes back later as a new incarnation through a sponsor. */
		if (!w->healed)
			sw_push(w, w->now + sim_rng_range(&w->rng, 20 * MS, 300 * MS), EV_RESTART,
			    n, 0, 0, 0);
		return;
	}
	timer_rearm(w, n);
}

int
sw_node_start(struct sim_world *w, int n, bool initial)
{
	struct sim_node *nd = &w->nodes[n];
	struct dm_peer_spec peers[SIM_NODES_MAX], sponsor;
	struct dm_engine_config cfg = {
		.self = nd->name,
		.self_address = nd->address,
		.cluster = "sim",
		.algorithm = w->cfg.algorithm,
		.failure_policy = w->cfg.policy,
		.incarnation = ++nd->incarnation,
		.seed = sim_rng_fork(&w->rng),
		.request_timeout_ms = SIM_REQUEST_TIMEOUT_MS,
		.probe_timeout_ms = SIM_PROBE_TIMEOUT_MS,
		.lease_ms = SIM_LEASE_MS,
		.heartbeat_ms = SIM_HEARTBEAT_MS,
		.restart_interval_ms = SIM_RESTART_MS,
		.stop_ms = SIM_STOP_MS,
		.clock_drift_ppm = SIM_DRIFT_PPM,
		.test_breakage = w->cfg.breakage,
		.election = w->cfg.election,
		.group_size = w->cfg.group_size,
		.epoch_floor = nd->disk_floor,
	};
	const char *disk_names[SIM_NODES_MAX];
	struct dm_agreed_removal disk_removals[SIM_NODES_MAX];
	struct dm_dead_incarnation disk_dead[SIM_NODES_MAX];
	size_t np = 0;
	int sponsor_index = -1;
	bool static_roster;
	int r;

	for (size_t i = 0; i < nd->disk_n_names; i++)
		disk_names[i] = nd->disk_names[i];
	for (size_t i = 0; i < nd->disk_n_removals; i++)
		disk_removals[i] = (struct dm_agreed_removal){ nd->disk_removed[i], nd->disk_ballot[i] };
	for (size_t i = 0; i < nd->disk_n_dead; i++)
		disk_dead[i] = (struct dm_dead_incarnation){ nd->disk_dead[i],
		    nd->disk_dead_incarnation[i] };
	cfg.last_record = (struct dm_member_record){
		.label = nd->disk_label,
		.names = disk_names,
		.n_names = nd->disk_n_names,
		.removals = disk_removals,
		.n_removals = nd->disk_n_removals,
		.promise_prober = nd->disk_promise_prober[0] != '\0' ? nd->disk_promise_prober : NULL,
		.promise_label = nd->disk_promise_label,
		.dead = disk_dead,
		.n_dead = nd->disk_n_dead,
	};

	/* An initial member always has the static roster in its config:
	 * with static_restarts it starts from it again. */
	static_roster = initial || (w->cfg.static_restarts && (unsigned)n < w->cfg.nodes &&
	    !nd->sponsor_config);
	if (static_roster) {
		for (unsigned i = 0; i < w->cfg.nodes; i++) {
			peers[np].name = w->nodes[i].name;
			peers[np].address = w->nodes[i].address;
			np++;
		}
		cfg.peers = peers;
		cfg.n_peers = np;
	} else {
		int candidates[SIM_NODES_MAX], nc = 0;

		for (unsigned i = 0; i < w->n_slots; i++)
			if ((int)i != n && w->nodes[i].exists && w->nodes[i].ready &&
			    !w->nodes[i].leaving)
				candidates[nc++] = (int)i;
		if (nc == 0)
			return -EAGAIN;
		sponsor_index = candidates[sim_rng_below(&w->rng, (uint64_t)nc)];
		sponsor.name = w->nodes[sponsor_index].name;
		sponsor.address = w->nodes[sponsor_index].address;
		cfg.sponsor = &sponsor;
	}
	r = dm_engine_new(&cfg, &nd->eng);
	if (r < 0) {
		nd->incarnation--;
		return r;
	}
	nd->exists = true;
	nd->ready = nd->paused = nd->leaving = nd->left = nd->member_now = false;
	nd->sponsor = sponsor_index;
	nd->static_restart = static_roster && !initial;
	memset(nd->wants, 0, sizeof(nd->wants));
	memset(nd->net_since, 0, sizeof(nd->net_since));
	memset(nd->holders, 0, sizeof(nd->holders));
	TRACE(w, "%s: start incarnation %" PRIu64 " %s%s", nd->name, nd->incarnation,
	    static_roster ? "with the static roster" : "joining through ",
	    static_roster ? "" : cfg.sponsor->name);
	sw_push(w, w->now, EV_START, n, 0, nd->incarnation, 0);
	/* A static restart that its record makes join through its peers is
	 * stranded when none of them is a member (the cluster went on with
	 * nodes that joined later): the operator gives it a sponsor, as
	 * dmlockd's log asks. */
	if (static_roster && !initial)
		sw_push(w, w->now + SIM_OPERATOR_WAIT_MS * MS, EV_STATIC_STRANDED, n, 0,
		    nd->incarnation, 0);
	/* Peers that keep a link to this name see the new incarnation. */
	if (!initial)
		for (unsigned i = 0; i < w->n_slots; i++)
			if ((int)i != n && w->nodes[i].exists && w->nodes[i].wants[n] &&
			    !sw_link_cut(w, (int)i, n))
				sw_push(w, w->now + w->cfg.delay_us, EV_RESTARTED, (int)i,
				    (uint64_t)n, w->nodes[i].incarnation, 0);
	return 0;
}

/* The process is gone (crash, or exit after leaving): state lost. */
void
sw_node_gone(struct sim_world *w, int n, const char *why)
{
	struct sim_node *nd = &w->nodes[n];

	TRACE(w, "%s: %s (incarnation %" PRIu64 ")", nd->name, why, nd->incarnation);
	dm_engine_free(nd->eng);
	nd->eng = NULL;
	nd->exists = nd->ready = nd->paused = false;
	timer_drop(w, nd);
	sim_check_forget_node(&w->ck, w->now, n);
	for (unsigned i = 0; i < w->n_slots; i++) {
		sim_net_flush(&w->net, sim_net_link(&w->net, (unsigned)n, i));
		sim_net_flush(&w->net, sim_net_link(&w->net, i, (unsigned)n));
		/* The kernel closes the sockets: peers see the link drop. */
		if ((int)i != n && !sw_link_cut(w, (int)i, n))
			sw_link_notify(w, (int)i, n, false);
	}
	for (unsigned c = 0; c < nd->n_clients; c++) {
		struct sim_client *cl = &nd->clients[c];

		if (w->cfg.workload == SIM_W_LIGHT && cl->state != C_IDLE)
			w->light_busy = false;
		cl->state = C_IDLE;
		cl->handle = 0;
		cl->gen++;
		cl->expiry_gen++;
		sw_client_schedule(w, n, c, 10 * MS);
	}
	for (unsigned li = 0; li < SIM_LOCKS_MAX; li++)
		if (nd->holders[li] > 0) {
			nd->holders[li] = 0;
			w->last_exit[li] = w->now;
			w->last_exit_node[li] = n;
		}
}
