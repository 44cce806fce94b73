/*
 * sim_world_faults.c: the simulated network's links going down and up,
 * and the faults of the fault phase: crash and restart, pause, partition,
 * one link down, graceful leave, a new node joining, the stale-roster
 * storm; then the heal that ends them all.
 */
#include "sim_world_priv.h"

static void
link_schedule_all(struct sim_world *w, int from, int to)
{
	struct sim_link *l = sim_net_link(&w->net, (unsigned)from, (unsigned)to);
	sim_time_t prev = w->now;

	l->epoch++;
	for (struct sim_msg *m = l->head; m; m = m->next) {
		sim_time_t at = w->now + sw_msg_delay(w);

		m->at = at > prev ? at : prev;
		prev = m->at;
		sw_push(w, m->at, EV_DELIVER, to, (uint64_t)from, l->epoch, 0);
	}
	l->last_at = prev;
}

/* Tell node n (if it keeps a link to peer) that the link is up/down. */
void
sw_link_notify(struct sim_world *w, int n, int peer, bool up)
{
	struct sim_node *nd = &w->nodes[n];

	if (!nd->exists || !nd->wants[peer])
		return;
	sw_push(w, w->now + w->cfg.delay_us, up ? EV_LINK_UP : EV_LINK_DOWN, n,
	    (uint64_t)peer, nd->incarnation, 0);
}

static void
cut(struct sim_world *w, int a, int b)
{
	struct sim_link *ab = sim_net_link(&w->net, (unsigned)a, (unsigned)b);
	struct sim_link *ba = sim_net_link(&w->net, (unsigned)b, (unsigned)a);

	if (ab->cut++ == 0) {
		ab->epoch++;
		ba->epoch++;
		/* The transport notices sooner or later, or not at all. */
		if (!sim_rng_chance(&w->rng, 300)) {
			sw_link_notify(w, a, b, false);
			sw_link_notify(w, b, a, false);
		}
	}
	ba->cut++;
}

void
sw_uncut(struct sim_world *w, int a, int b)
{
	struct sim_link *ab = sim_net_link(&w->net, (unsigned)a, (unsigned)b);
	struct sim_link *ba = sim_net_link(&w->net, (unsigned)b, (unsigned)a);

	if (ab->cut == 0)
		return;
	ba->cut--;
	if (--ab->cut > 0)
		return;
	TRACE(w, "net: link %s <-> %s healed (%zu + %zu messages held)",
	    w->nodes[a].name, w->nodes[b].name, ab->n, ba->n);
	link_schedule_all(w, a, b);
	link_schedule_all(w, b, a);
	sw_link_notify(w, a, b, true);
	sw_link_notify(w, b, a, true);
}

static int
pick_node(struct sim_world *w, bool want_exists)
{
	int cand[SIM_NODES_MAX], nc = 0;

	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		if (want_exists ? (nd->exists && !nd->paused && !nd->leaving) :
		    (!nd->exists && i < w->cfg.nodes + SIM_EXTRA_SLOTS))
			cand[nc++] = (int)i;
	}
	return nc ? cand[sim_rng_below(&w->rng, (uint64_t)nc)] : -1;
}

static unsigned
live_count(const struct sim_world *w)
{
	unsigned k = 0;

	for (unsigned i = 0; i < w->n_slots; i++)
		k += w->nodes[i].exists;
	return k;
}

struct roster_search {
	const char	*name;
	bool		 found;
};

static void
roster_search_visit(void *ctx, const char *name, const char *address, bool is_self, bool link_up)
{
	struct roster_search *rs = ctx;

	(void)address, (void)is_self, (void)link_up;
	if (strcmp(name, rs->name) == 0)
		rs->found = true;
}

/* Does ready node i's roster list name? */
static bool
roster_lists(const struct sim_world *w, unsigned i, const char *name)
{
	struct roster_search rs = { .name = name };

	dm_engine_visit_roster(w->nodes[i].eng, roster_search_visit, &rs);
	return rs.found;
}

static uint64_t
roster_label(const struct sim_node *nd)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(nd->eng, &st);
	return st.roster_label;
}

/* Is ready node i a member of the cluster, not only in its own eyes?  Not
 * if a ready node with a newer roster (a higher label) no longer lists it:
 * removed while cut off or paused, it has not heard of it yet. */
static bool
current_member(const struct sim_world *w, unsigned i)
{
	uint64_t label = roster_label(&w->nodes[i]);

	for (unsigned j = 0; j < w->n_slots; j++)
		if (j != i && w->nodes[j].exists && w->nodes[j].ready &&
		    roster_label(&w->nodes[j]) > label && !roster_lists(w, j, w->nodes[i].name))
			return false;
	return true;
}

/* A static restart that is still a member in its own eyes only: no member
 * has told it to rejoin yet, or none lists the old incarnation (the whole
 * cluster restarted).  Not counted as the member a crash or leave must
 * leave: it may be told to rejoin next. */
static bool
unconfirmed_static(const struct sim_world *w, unsigned i)
{
	struct dm_engine_stats st;

	if (!w->nodes[i].static_restart)
		return false;
	dm_engine_get_stats(w->nodes[i].eng, &st);
	return st.static_member;
}

/* Ready members other than n: a crash or leave must leave one to sponsor
 * the others' rejoin (losing every member is a cluster-wide outage, outside
 * the failure model; nobody would be left to admit anyone).  A node removed
 * while cut off that has not heard of it yet is not one: the members that
 * removed it all crashing is such an outage too -- their restarted
 * processes refuse to let it rebuild its old roster (the membership
 * record, dmlockd/engine/dm_member_record.c), and nobody else can admit
 * them. */
static unsigned
other_ready(const struct sim_world *w, int n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < w->n_slots; i++)
		k += (int)i != n && w->nodes[i].exists && w->nodes[i].ready &&
		    !w->nodes[i].leaving && current_member(w, i) && !unconfirmed_static(w, i);
	return k;
}

/* Is one of node n's static peers (the initial members) a member of the
 * cluster now? */
bool
sw_static_peer_member(const struct sim_world *w, int n)
{
	for (unsigned i = 0; i < w->cfg.nodes && i < w->n_slots; i++)
		if ((int)i != n && w->nodes[i].exists && w->nodes[i].ready &&
		    !w->nodes[i].leaving && current_member(w, i))
			return true;
	return false;
}

/* Crash node n, unless no other ready member would be left; it restarts
 * 5 to 200 ms later (a measured --crash-victim stays down). */
void
sw_crash(struct sim_world *w, int n)
{
	if (n < 0 || other_ready(w, n) == 0 || !w->nodes[n].exists)
		return;
	sw_node_gone(w, n, "CRASH");
	if (!w->cfg.crash_victim)
		sw_push(w, w->now + sim_rng_range(&w->rng, 5 * MS, 200 * MS), EV_RESTART, n, 0, 0, 0);
}

/* The stale-roster storm (SIM_F_STALE): the shape of the two-clusters
 * holes of sessions 23 to 27 (1533/6, 1952/5, 101734/7, ...), aimed
 * at rather than waited for.  A node z crashes.  As soon as a node x has
 * applied z's removal, x is cut off from everyone for 150 to 400 ms, long
 * enough to be removed without hearing of it; its roster (without z) goes
 * stale while the cluster goes on with z's new process, which x does not
 * list.  Each node but x and z crashes with probability 7/8 at a time
 * drawn from the cut to 50 ms after its heal: before x's removal (its
 * record still lists x), after it, or after the heal, so x comes back to a
 * roster of restarted processes with records of every age, while a live
 * cluster it does not know runs beside it.  Each crash keeps a ready
 * member (sw_crash).  One storm at a time: storms on top of storms keep
 * every node restarting, and nothing is left to go stale. */
#define STALE_POLL_MS	5	/* how often the storm looks at x's roster */
#define STALE_POLLS	100	/* and for how long, before it gives up */

static void
stale_roster_storm(struct sim_world *w)
{
	int x = pick_node(w, true), z = pick_node(w, true);

	if (x < 0 || z < 0 || x == z || live_count(w) < 3 || w->now < w->storm_until)
		return;
	w->storm_until = w->now + (STALE_POLLS * STALE_POLL_MS + 400 + 50) * MS;
	TRACE(w, "net: STALE storm: %s crashes; %s is cut off once it removed it",
	    w->nodes[z].name, w->nodes[x].name);
	sw_crash(w, z);
	sw_push(w, w->now + STALE_POLL_MS * MS, EV_STALE_CUT, x, (uint64_t)z, 0, 0);
}

/* The storm's second step (poll number polls): once x has removed z, cut x
 * off, and crash the others but z from now to 50 ms after the heal. */
void
sw_stale_cut(struct sim_world *w, int x, int z, unsigned polls)
{
	sim_time_t heal;

	if (!w->nodes[x].exists || !w->nodes[x].ready)
		return;
	if (roster_lists(w, (unsigned)x, w->nodes[z].name)) {
		if (polls < STALE_POLLS)
			sw_push(w, w->now + STALE_POLL_MS * MS, EV_STALE_CUT, x, (uint64_t)z, polls + 1, 0);
		return;
	}
	heal = w->now + sim_rng_range(&w->rng, 150 * MS, 400 * MS);
	TRACE(w, "net: STALE storm: %s cut off until %" PRIu64 "us", w->nodes[x].name, heal);
	w->res->stale_storms++;
	for (unsigned i = 0; i < w->n_slots; i++) {
		if ((int)i == x)
			continue;
		cut(w, x, (int)i);
		sw_push(w, heal, EV_UNCUT, -1, (uint64_t)x, i, 0);
		if ((int)i != z && w->nodes[i].exists && sim_rng_chance(&w->rng, 875))
			sw_push(w, w->now + sim_rng_range(&w->rng, 0, heal - w->now + 50 * MS), EV_CRASH,
			    (int)i, 0, 0, 0);
	}
	/* After the EV_UNCUTs of the same instant (pushed first, popped first). */
	sw_push(w, heal, EV_STALE_HEALED, x, w->nodes[x].incarnation, 0, 0);
}

/* The storm's cut healed: did it do what it is for, leave x removed
 * without knowing it (a newer roster of a ready node does not list it)? */
void
sw_stale_healed(struct sim_world *w, int x, uint64_t incarnation)
{
	const struct sim_node *nd = &w->nodes[x];

	if (nd->exists && nd->incarnation == incarnation && nd->ready && !current_member(w, (unsigned)x)) {
		w->res->stale_at_heal++;
		TRACE(w, "net: STALE storm: %s is back with a stale roster", nd->name);
	}
}

void
sw_fault_inject(struct sim_world *w)
{
	uint32_t f = w->cfg.faults & ~SIM_F_DRIFT;
	uint32_t kinds[8];
	unsigned nk = 0;
	int n;

	for (unsigned b = 0; b < 8; b++)
		if (f & (1u << b))
			kinds[nk++] = 1u << b;
	if (nk == 0)
		return;
	w->res->faults_injected++;
	switch (kinds[sim_rng_below(&w->rng, nk)]) {
	case SIM_F_CRASH:
		sw_crash(w, w->cfg.crash_victim ? (int)w->cfg.crash_victim - 1 : pick_node(w, true));
		return;
	case SIM_F_PAUSE:
		n = pick_node(w, true);
		if (n < 0)
			return;
		w->nodes[n].paused = true;
		w->nodes[n].resume_at = w->now + sim_rng_range(&w->rng, 20 * MS, 300 * MS);
		TRACE(w, "%s: PAUSE until %" PRIu64 "us", w->nodes[n].name, w->nodes[n].resume_at);
		sw_push(w, w->nodes[n].resume_at, EV_RESUME, n, 0, w->nodes[n].incarnation, 0);
		return;
	case SIM_F_PARTITION: {
		bool side[SIM_NODES_MAX] = { false };
		unsigned live = live_count(w), k, max_k;
		sim_time_t until = w->now + sim_rng_range(&w->rng, 30 * MS, 400 * MS);

		if (live < 2)
			return;
		max_k = w->cfg.partition_any ? live - 1 : (live - 1) / 2;
		if (max_k == 0)
			max_k = 1;
		k = (unsigned)sim_rng_range(&w->rng, 1, max_k);
		for (unsigned i = 0; i < k; i++) {
			n = pick_node(w, true);
			if (n >= 0)
				side[n] = true;
		}
		TRACE(w, "net: PARTITION of %u node(s) until %" PRIu64 "us", k, until);
		for (unsigned a = 0; a < w->n_slots; a++)
			for (unsigned b = a + 1; b < w->n_slots; b++)
				if (side[a] != side[b]) {
					cut(w, (int)a, (int)b);
					sw_push(w, until, EV_UNCUT, -1, a, b, 0);
				}
		return;
	}
	case SIM_F_LINK: {
		int a = pick_node(w, true), b = pick_node(w, true);

		if (a < 0 || b < 0 || a == b)
			return;
		TRACE(w, "net: LINK %s <-> %s down", w->nodes[a].name, w->nodes[b].name);
		cut(w, a, b);
		sw_push(w, w->now + sim_rng_range(&w->rng, 1 * MS, 50 * MS), EV_UNCUT, -1,
		    (uint64_t)a, (uint64_t)b, 0);
		return;
	}
	case SIM_F_STALE:
		stale_roster_storm(w);
		return;
	case SIM_F_LEAVE:
		n = pick_node(w, true);
		if (n < 0 || other_ready(w, n) == 0 || !w->nodes[n].ready)
			return;
		TRACE(w, "%s: LEAVE", w->nodes[n].name);
		w->nodes[n].leaving = true;
		sw_input(w, n, IN_LEAVE, 0, 0);
		return;
	case SIM_F_JOIN:
		n = pick_node(w, false);
		if (n < 0 || w->nodes[n].ever)
			return;		/* crashed/left members come back via EV_RESTART */
		if (sw_node_start(w, n, false) < 0)
			return;
		return;
	}
}

void
sw_heal_all(struct sim_world *w)
{
	TRACE(w, "sim: HEAL: faults stop, partitions heal, nodes resume or restart");
	w->healed = true;
	w->heal_at = w->now;
	for (unsigned a = 0; a < w->n_slots; a++)
		for (unsigned b = 0; b < w->n_slots; b++)
			while (a < b && sim_net_link(&w->net, a, b)->cut > 0)
				sw_uncut(w, (int)a, (int)b);
	for (unsigned i = 0; i < w->n_slots; i++) {
		struct sim_node *nd = &w->nodes[i];

		if (nd->paused) {
			nd->resume_at = w->now;
			sw_push(w, w->now, EV_RESUME, (int)i, 0, nd->incarnation, 0);
		}
	}
	sim_check_heal(&w->ck, w->now);
}
