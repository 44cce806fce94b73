/*
 * sim_world_effects.c: what an engine's effects do in the simulated world
 * and what the oracle (sim_check.h) makes of them: messages onto the
 * simulated network as wire bytes, grants, denials, extensions and losses
 * to the clients, peer links wanted or dropped, readiness, the persisted
 * epoch floor; and the RA section 5 metrics of entry and exit.
 */
#include "sim_world_priv.h"

static int
node_by_name(const struct sim_world *w, const char *name)
{
	/* Names are "n<slot>" (sim_run): read the number, check the name. */
	if (name[0] == 'n' && name[1] >= '0' && name[1] <= '9') {
		unsigned i = 0;

		for (const char *p = name + 1; *p >= '0' && *p <= '9' && i < 100000; p++)
			i = i * 10 + (unsigned)(*p - '0');
		if (i < w->n_slots && strcmp(w->nodes[i].name, name) == 0)
			return (int)i;
	}
	for (unsigned i = 0; i < w->n_slots; i++)
		if (strcmp(w->nodes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int
lock_index(const struct sim_world *w, const char *name)
{
	for (unsigned i = 0; i < w->n_locks; i++)
		if (strcmp(w->lock_names[i], name) == 0)
			return (int)i;
	return -1;
}

struct sim_client *
sw_client_of(struct sim_world *w, int n, uint64_t handle, unsigned *ret_c)
{
	unsigned c = (unsigned)((handle >> 40) & 0xff);
	int hn = (int)(handle >> 48);

	if (hn != n || c >= w->nodes[n].n_clients)
		return NULL;
	if (w->nodes[n].clients[c].handle != handle)
		return NULL;
	*ret_c = c;
	return &w->nodes[n].clients[c];
}

/* A GRANT or DENY for a request its client already withdrew (the CANCEL is
 * still on its way to the engine) is a race, not a bug; after the engine
 * processed the CANCEL it is a bug. */
static bool
late_effect(struct sim_world *w, int n, uint64_t handle, const char *what)
{
	struct sim_node *nd = &w->nodes[n];
	unsigned c = (unsigned)((handle >> 40) & 0xff);

	for (unsigned i = 0; i < 16; i++)
		if (nd->cancelled[i] == handle) {
			sw_fail(w, SIM_V_PROTOCOL, "n%d: %s to client %#" PRIx64 " after the engine"
			    " processed its CANCEL", n, what, handle);
			return false;
		}
	if ((int)(handle >> 48) != n || c >= nd->n_clients ||
	    (handle & 0xffffffffffull) > (nd->clients[c].counter & 0xffffffffffull))
		return false;
	TRACE(w, "%s: late %s for withdrawn client %#" PRIx64 " ignored", nd->name, what, handle);
	return true;
}

static void
fx_send(struct sim_world *w, int n, const struct dm_effect *fx)
{
	const struct dm_msg *m = fx->u.send.msg;
	int to = node_by_name(w, fx->u.send.peer);
	struct sim_link *l;
	sim_time_t at;
	size_t len;
	int li;

	if (dm_wire_encode(m, w->buf, sizeof(w->buf), &len) < 0) {
		sw_fail(w, SIM_V_PROTOCOL, "n%d: dm_wire_encode failed for %s", n, sw_kind_name(m->kind));
		return;
	}
	w->res->all_messages++;
	if (m->kind >= DM_MSG_ALGO_BASE)
		w->res->algo_messages++;
	if (m->kind == DM_RA_REQUEST || m->kind == DM_RA_REPLY)
		w->res->ra_messages++;
	TRACE(w, "%s > %s %s lock=%s seq=%" PRIu64 " tok=%#" PRIx64 " ep=%" PRIu64
	    " node=%s inc=%#" PRIx64 " serial=%" PRIu64 " arg=%" PRIu64 "%s", w->nodes[n].name,
	    fx->u.send.peer, sw_kind_name(m->kind), m->lock_len ? m->lock : "-", m->seq, m->token,
	    m->epoch, m->node_len ? m->node : "-", m->incarnation, m->serial, m->arg,
	    m->mode == DM_MODE_SHARED ? " shared" : "");
	li = m->lock_len ? lock_index(w, m->lock) : -1;
	if (w->cfg.request_kind != 0 && m->kind == w->cfg.request_kind && li >= 0) {
		if (w->nodes[n].net_since[li] == 0)
			w->nodes[n].net_since[li] = w->now ? w->now : 1;
		sim_check_net_request(&w->ck, w->now, n, m->lock, (enum dm_mode)m->mode, m->seq);
	}
	if (to < 0 || !w->nodes[to].exists)
		return;		/* nobody listens there: the transport drops it */
	l = sim_net_link(&w->net, (unsigned)n, (unsigned)to);
	if (sim_net_enqueue(&w->net, l, w->now + sw_msg_delay(w), w->buf, len, &at) < 0) {
		w->fatal = -ENOMEM;
		return;
	}
	if (l->cut == 0)
		sw_push(w, at, EV_DELIVER, to, (uint64_t)n, l->epoch, 0);
}

static void
client_expiry_arm(struct sim_world *w, int n, unsigned c, dm_msec_t deadline)
{
	struct sim_client *cl = &w->nodes[n].clients[c];

	cl->expiry_gen++;
	if (deadline == 0)
		return;
	sw_push(w, sw_real_when(w, &w->nodes[n], deadline), EV_EXPIRY, n, c, cl->expiry_gen, 0);
}

static sim_time_t
expiry_real(struct sim_world *w, int n, dm_msec_t deadline)
{
	sim_time_t t;

	if (deadline == 0)
		return 0;
	t = sw_real_when(w, &w->nodes[n], deadline);
	return t > w->now ? t : w->now;
}

static sim_time_t
hold_time(struct sim_world *w)
{
	uint64_t d = w->cfg.delay_us;

	if (w->cfg.hold_time && w->cfg.workload == SIM_W_HEAVY)
		return w->cfg.hold_time(w->cfg.hook_ctx, w->stepping, sim_rng_next(&w->rng));
	switch (w->cfg.workload) {
	case SIM_W_LIGHT:
		return 2 * d;
	case SIM_W_HEAVY:
		return 4 * d;
	case SIM_W_FOREVER:	/* short: no probes, so messages can be counted exactly */
		return sim_rng_range(&w->rng, d / 2, 8 * d);
	default:
		if (sim_rng_chance(&w->rng, 30))	/* longer than the request timeout */
			return sim_rng_range(&w->rng, 60 * MS, 150 * MS);
		return sim_rng_range(&w->rng, d / 2, 8 * d);
	}
}

/* A node's entry/exit for the RA §5 metrics. */
void
sw_note_holders(struct sim_world *w, int n, unsigned li, int delta, sim_time_t issued)
{
	struct sim_node *nd = &w->nodes[n];

	if (delta > 0 && nd->holders[li]++ == 0) {
		/* Entry: synchronisation delay if another node's exit released
		 * us and our request had been waiting for it (Case A of §5.4). */
		if (w->last_exit_node[li] >= 0 && w->last_exit_node[li] != n &&
		    nd->net_since[li] != 0 &&
		    nd->net_since[li] + 2 * (sim_time_t)w->cfg.delay_us <= w->last_exit[li] &&
		    issued + 2 * (sim_time_t)w->cfg.delay_us <= w->last_exit[li]) {
			double d = (double)(w->now - w->last_exit[li]) / w->cfg.delay_us;

			w->res->sync_sum_d += d;
			w->res->sync_n++;
			if (d > w->res->sync_max_d)
				w->res->sync_max_d = d;
		}
		nd->net_since[li] = 0;
	} else if (delta < 0 && nd->holders[li] > 0 && --nd->holders[li] == 0) {
		w->last_exit[li] = w->now;
		w->last_exit_node[li] = n;
	}
}

static void
fx_grant(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = sw_client_of(w, n, fx->u.grant.handle, &c);

	TRACE(w, "%s: GRANT client %#" PRIx64 " token %#" PRIx64 " deadline %" PRIu64,
	    w->nodes[n].name, fx->u.grant.handle, fx->u.grant.token, fx->u.grant.deadline);
	if (!cl || cl->state != C_WAITING) {
		if (!late_effect(w, n, fx->u.grant.handle, "GRANT"))
			sw_fail(w, SIM_V_PROTOCOL, "n%d: GRANT to client %#" PRIx64
			    " that is not waiting", n, fx->u.grant.handle);
		return;
	}
	if (sim_check_grant(&w->ck, w->now, n, cl->handle, fx->u.grant.token,
	    expiry_real(w, n, fx->u.grant.deadline)) < 0)
		return;
	cl->state = C_HOLDING;
	w->res->response_sum_d += (double)(w->now - cl->issued) / w->cfg.delay_us;
	w->res->response_n++;
	sw_note_holders(w, n, cl->lock, +1, cl->issued);
	client_expiry_arm(w, n, c, fx->u.grant.deadline);
	cl->gen++;
	sw_push(w, w->now + hold_time(w), EV_CLIENT, n, c, cl->gen, 0);
}

static void
fx_deny(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = sw_client_of(w, n, fx->u.deny.handle, &c);

	TRACE(w, "%s: DENY client %#" PRIx64 " error %d", w->nodes[n].name,
	    fx->u.deny.handle, fx->u.deny.error);
	if (!cl || cl->state != C_WAITING) {
		if (!late_effect(w, n, fx->u.deny.handle, "DENY"))
			sw_fail(w, SIM_V_PROTOCOL, "n%d: DENY to client %#" PRIx64
			    " that is not waiting", n, fx->u.deny.handle);
		return;
	}
	if (sim_check_deny(&w->ck, w->now, cl->handle) < 0)
		return;
	sim_check_untrack(&w->ck, n, w->lock_names[cl->lock]);
	w->nodes[n].net_since[cl->lock] = 0;
	sw_client_done(w, n, c);
}

static void
fx_extend(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = sw_client_of(w, n, fx->u.extend.handle, &c);

	if (!cl || cl->state != C_HOLDING)
		return;		/* the client already gave the lock up */
	if (sim_check_expiry(&w->ck, w->now, cl->handle,
	    expiry_real(w, n, fx->u.extend.deadline)) < 0)
		return;
	client_expiry_arm(w, n, c, fx->u.extend.deadline);
}

static void
fx_lost(struct sim_world *w, int n, const struct dm_effect *fx)
{
	unsigned c;
	struct sim_client *cl = sw_client_of(w, n, fx->u.lost.handle, &c);

	TRACE(w, "%s: LOST client %#" PRIx64 " reason %d", w->nodes[n].name,
	    fx->u.lost.handle, fx->u.lost.reason);
	if (!cl || cl->state != C_HOLDING)
		return;		/* already released or expired on its own */
	sw_holder_lost(w, n, cl, "LOST");
	if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
		return;
	sw_note_holders(w, n, cl->lock, -1, 0);
	sw_client_done(w, n, c);
}

void
sw_on_effect(void *ctx, const struct dm_effect *fx)
{
	struct sim_world *w = ctx;
	int n = w->stepping, peer;
	struct sim_node *nd = &w->nodes[n];

	if (w->cfg.observe_effect)
		w->cfg.observe_effect(w->cfg.hook_ctx, w->now, n, fx);
	switch (fx->type) {
	case DM_FX_SEND:
		fx_send(w, n, fx);
		break;
	case DM_FX_GRANT:
		fx_grant(w, n, fx);
		break;
	case DM_FX_DENY:
		fx_deny(w, n, fx);
		break;
	case DM_FX_EXTEND:
		fx_extend(w, n, fx);
		break;
	case DM_FX_LOST:
		fx_lost(w, n, fx);
		break;
	case DM_FX_PEER_ADD:
		peer = node_by_name(w, fx->u.peer.name);
		TRACE(w, "%s: PEER_ADD %s", nd->name, fx->u.peer.name);
		if (peer < 0 || peer == n)
			break;
		nd->wants[peer] = true;
		if (w->nodes[peer].exists && !sw_link_cut(w, n, peer))
			sw_push(w, w->now + w->cfg.delay_us, EV_LINK_UP, n, (uint64_t)peer,
			    nd->incarnation, 0);
		break;
	case DM_FX_PEER_REMOVE:
		peer = node_by_name(w, fx->u.peer.name);
		TRACE(w, "%s: PEER_REMOVE %s", nd->name, fx->u.peer.name);
		if (peer >= 0)
			nd->wants[peer] = false;
		break;
	case DM_FX_READY:
		TRACE(w, "%s: READY", nd->name);
		nd->ready = true;
		nd->ever = nd->member_now = true;
		if (w->settled) {	/* a late rejoin: N for the bound may grow */
			unsigned members = 0;

			for (unsigned i = 0; i < w->n_slots; i++)
				members += w->nodes[i].exists && w->nodes[i].ready;
			if (w->cfg.appendix_bound && members > w->ck.bound_nodes)
				w->ck.bound_nodes = members;
		}
		break;
	case DM_FX_PERSIST:
		TRACE(w, "%s: PERSIST floor %" PRIu64, nd->name, fx->u.persist.floor);
		if (fx->u.persist.floor > nd->disk_floor)
			nd->disk_floor = fx->u.persist.floor;
		break;
	case DM_FX_PERSIST_RECORD: {
		const struct dm_member_record *r = &fx->u.record;

		TRACE(w, "%s: PERSIST record label %" PRIu64 ", %zu names, %zu removals", nd->name,
		    r->label, r->n_names, r->n_removals);
		/* Every name is one of the world's: a record longer than the
		 * world is an engine bug, not something to cut short. */
		if (r->n_names > SIM_NODES_MAX || r->n_removals > SIM_NODES_MAX ||
		    r->n_dead > SIM_NODES_MAX)
			abort();
		nd->disk_label = r->label;
		nd->disk_n_names = r->n_names;
		for (size_t i = 0; i < r->n_names; i++)
			snprintf(nd->disk_names[i], sizeof(nd->disk_names[i]), "%s", r->names[i]);
		nd->disk_n_removals = r->n_removals;
		for (size_t i = 0; i < r->n_removals; i++) {
			snprintf(nd->disk_removed[i], sizeof(nd->disk_removed[i]), "%s",
			    r->removals[i].name);
			nd->disk_ballot[i] = r->removals[i].ballot;
		}
		snprintf(nd->disk_promise_prober, sizeof(nd->disk_promise_prober), "%s",
		    r->promise_prober != NULL ? r->promise_prober : "");
		nd->disk_promise_label = r->promise_label;
		nd->disk_n_dead = r->n_dead;
		for (size_t i = 0; i < r->n_dead; i++) {
			snprintf(nd->disk_dead[i], sizeof(nd->disk_dead[i]), "%s", r->dead[i].name);
			nd->disk_dead_incarnation[i] = r->dead[i].incarnation;
		}
		break;
	}
	case DM_FX_LEFT:
		TRACE(w, "%s: LEFT", nd->name);
		nd->left = true;
		break;
	case DM_FX_LOG:
		if (fx->u.log.level <= DM_LOG_NOTICE)
			TRACE(w, "%s: log<%d> %s%s%s", nd->name, fx->u.log.level, fx->u.log.text,
			    fx->u.log.lock ? " lock=" : "", fx->u.log.lock ? fx->u.log.lock : "");
		break;
	}
}
