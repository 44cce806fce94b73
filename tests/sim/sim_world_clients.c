/*
 * sim_world_clients.c: the simulated workload: each node's clients think,
 * acquire (wait forever, try, or wait a while; now and then shared),
 * hold, release or disconnect, and treat a lock as lost at its deadline;
 * their requests reach the engine as inputs one event later.
 */
#include "sim_world_priv.h"

static const char *
mode_name(enum dm_mode m)
{
	return m == DM_MODE_SHARED ? "shared" : "exclusive";
}

void
sw_client_schedule(struct sim_world *w, int n, unsigned c, sim_time_t after)
{
	struct sim_client *cl = &w->nodes[n].clients[c];
	uint64_t d = w->cfg.delay_us;
	sim_time_t think;

	if (w->stopped)
		return;
	switch (w->cfg.workload) {
	case SIM_W_LIGHT:
		think = 20 * d;
		break;
	case SIM_W_HEAVY:
		think = w->cfg.think_time ? w->cfg.think_time(w->cfg.hook_ctx, n,
		    sim_rng_next(&w->rng)) : 0;
		break;
	default:
		think = sim_rng_range(&w->rng, 0, 10 * d);
		break;
	}
	cl->gen++;
	sw_push(w, w->now + after + think, EV_CLIENT, n, c, cl->gen, 0);
}

void
sw_input(struct sim_world *w, int n, enum input_type type, uint64_t handle, uint64_t arg)
{
	sw_push(w, w->now, EV_INPUT, n, handle, arg, type);
}

void
sw_client_done(struct sim_world *w, int n, unsigned c)
{
	struct sim_client *cl = &w->nodes[n].clients[c];

	cl->state = C_IDLE;
	cl->handle = 0;
	cl->gen++;
	cl->expiry_gen++;
	if (w->cfg.workload == SIM_W_LIGHT)
		w->light_busy = false;
	sw_client_schedule(w, n, c, 0);
}

static void
client_acquire(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];
	uint64_t wait = DM_WAIT_FOREVER, d = w->cfg.delay_us;

	if (w->cfg.workload == SIM_W_LIGHT) {
		unsigned turn = w->light_turn % w->n_slots;

		/* Skip a turn whose node cannot serve. */
		if (!w->nodes[turn].exists || !w->nodes[turn].ready)
			w->light_turn++;
		if (w->light_busy || w->light_turn % w->n_slots != (unsigned)n) {
			sw_client_schedule(w, n, c, 5 * d);
			return;
		}
		w->light_busy = true;
		w->light_turn++;
	}
	cl->lock = w->cfg.workload == SIM_W_RANDOM || w->cfg.workload == SIM_W_FOREVER ?
	    (unsigned)sim_rng_below(&w->rng, w->n_locks) : 0;
	cl->mode = w->cfg.shared && sim_rng_chance(&w->rng, 300) ?
	    DM_MODE_SHARED : DM_MODE_EXCLUSIVE;
	if (w->cfg.workload == SIM_W_RANDOM) {
		unsigned r = (unsigned)sim_rng_below(&w->rng, 100);

		if (r < 10)
			wait = DM_WAIT_TRY;
		else if (r < 30)
			wait = sim_rng_range(&w->rng, 1, 100);	/* ms */
	}
	cl->handle = ((uint64_t)n << 48) | ((uint64_t)c << 40) | (++cl->counter & 0xffffffffffull);
	cl->state = C_WAITING;
	cl->issued = w->now;
	if (wait == DM_WAIT_FOREVER)
		TRACE(w, "%s: client %#" PRIx64 " acquire %s %s, wait forever", nd->name,
		    cl->handle, w->lock_names[cl->lock], mode_name(cl->mode));
	else
		TRACE(w, "%s: client %#" PRIx64 " acquire %s %s, wait %" PRIu64 "ms", nd->name,
		    cl->handle, w->lock_names[cl->lock], mode_name(cl->mode), wait);
	if (sim_check_request(&w->ck, w->now, n, cl->handle, w->lock_names[cl->lock],
	    cl->mode) < 0)
		return;
	sw_input(w, n, IN_ACQUIRE, cl->handle, wait);
	cl->gen++;
	/* Now and then the client disconnects while it waits. */
	if (w->cfg.workload == SIM_W_RANDOM && sim_rng_chance(&w->rng, 60))
		sw_push(w, w->now + sim_rng_range(&w->rng, 0, 30 * d), EV_CLIENT, n, c, cl->gen, 0);
}

void
sw_client_action(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];

	switch (cl->state) {
	case C_IDLE:
		if (w->stopped)
			return;
		if (!nd->exists || !nd->ready || nd->leaving) {
			sw_client_schedule(w, n, c, 5 * MS);
			return;
		}
		client_acquire(w, n, c);
		return;
	case C_WAITING:		/* gives up: disconnect */
		TRACE(w, "%s: client %#" PRIx64 " cancels its wait", nd->name, cl->handle);
		sim_check_withdraw(&w->ck, w->now, cl->handle);
		sim_check_untrack(&w->ck, n, w->lock_names[cl->lock]);
		nd->net_since[cl->lock] = 0;
		sw_input(w, n, IN_CANCEL, cl->handle, 0);
		sw_client_done(w, n, c);
		return;
	case C_HOLDING: {
		bool disconnect = w->cfg.workload == SIM_W_RANDOM && sim_rng_chance(&w->rng, 50);

		TRACE(w, "%s: client %#" PRIx64 " %s", nd->name, cl->handle,
		    disconnect ? "disconnects while holding" : "releases");
		if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
			return;
		sw_note_holders(w, n, cl->lock, -1, 0);
		sw_input(w, n, disconnect ? IN_CANCEL : IN_RELEASE, cl->handle, 0);
		sw_client_done(w, n, c);
		return;
	}
	}
}

/*
 * A holder lost its lock (its deadline passed, or the engine said LOST).
 * With faults that is the lease doing its job; in a fault-free run it is a
 * healthy cluster dropping a holder, which a lock service must not do
 * (NOTES.md, "Session 40": grants on the last moments of a lease, and a
 * coordinator's members refusing its heartbeats after two elections).
 */
void
sw_holder_lost(struct sim_world *w, int n, const struct sim_client *cl, const char *how)
{
	if (w->cfg.faults != 0 || w->cfg.safety_only || sw_violated(w))
		return;
	sw_fail(w, SIM_V_LIVENESS, "%s client %#" PRIx64 " lost its lock on a healthy"
	    " cluster (%s)", w->nodes[n].name, cl->handle, how);
}

void
sw_client_expired(struct sim_world *w, int n, unsigned c)
{
	struct sim_node *nd = &w->nodes[n];
	struct sim_client *cl = &nd->clients[c];

	if (cl->state != C_HOLDING)
		return;
	TRACE(w, "%s: client %#" PRIx64 " deadline passed: treats the lock as lost",
	    nd->name, cl->handle);
	sw_holder_lost(w, n, cl, "its deadline passed");
	if (sim_check_end(&w->ck, w->now, cl->handle) < 0)
		return;
	sw_note_holders(w, n, cl->lock, -1, 0);
	sw_input(w, n, IN_CANCEL, cl->handle, 0);
	sw_client_done(w, n, c);
}

void
sw_do_input(struct sim_world *w, const struct sim_event *sev)
{
	int n = sev->node;
	struct sim_node *nd = &w->nodes[n];
	struct dm_event ev = { 0 };
	unsigned c;
	struct sim_client *cl;

	if (!nd->eng)
		return;
	switch ((enum input_type)sev->c) {
	case IN_ACQUIRE:
		cl = sw_client_of(w, n, sev->a, &c);
		if (!cl || cl->state != C_WAITING)
			return;		/* cancelled before the daemon saw it */
		ev.type = DM_EV_ACQUIRE;
		ev.u.acquire.handle = sev->a;
		ev.u.acquire.lock = w->lock_names[cl->lock];
		ev.u.acquire.lock_len = strlen(w->lock_names[cl->lock]);
		ev.u.acquire.mode = cl->mode;
		ev.u.acquire.wait_ms = sev->b;
		break;
	case IN_RELEASE:
		ev.type = DM_EV_RELEASE;
		ev.u.release.handle = sev->a;
		break;
	case IN_CANCEL:
		ev.type = DM_EV_CANCEL;
		ev.u.cancel.handle = sev->a;
		sw_node_step(w, n, &ev);
		nd->cancelled[nd->cancelled_next++ % 16] = sev->a;
		return;
	case IN_LEAVE:
		ev.type = DM_EV_LEAVE;
		break;
	}
	sw_node_step(w, n, &ev);
}
