/*
 * dm_engine.c: the engine's entry points (new/free/step), event dispatch,
 * timers dispatch, lock state lifetime and the services algorithms call
 * (messages, tokens, time).  Local clients live in dm_local.c, the roster
 * and leases in dm_roster.c.  Never reads a clock, a socket or random().
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine_private.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

/* --- Effects and messages --- */

void
dm_emit(struct dm_engine *e, const struct dm_effect *fx)
{
	if (e->emit != NULL)
		e->emit(e->emit_ctx, fx);
}

struct dm_msg *
dm_msg_begin(struct dm_engine *e, uint8_t kind, const struct dm_lock *l)
{
	struct dm_msg *m = &e->scratch;

	m->kind = kind;
	m->mode = 0;
	/* (Algorithms add their flags to this one.) */
	m->flags = e->static_member ? DM_MSG_F_STATIC : 0;
	m->node_len = 0;
	m->address_len = 0;
	m->payload_len = 0;
	m->seq = 0;
	dm_floor_persist(e);	/* before a message shows token_hw */
	m->token = e->token_hw;
	if (kind >= DM_MSG_ALGO_BASE && (e->breakage & DM_BREAK_STALE_TOKEN))
		m->token = 0;
	m->epoch = e->epoch;
	m->roster_epoch = e->roster_epoch;
	m->incarnation = e->incarnation;
	m->serial = 0;
	m->arg = 0;
	m->node[0] = '\0';
	m->address[0] = '\0';
	if (l != NULL) {
		m->lock_len = l->name_len;
		memcpy(m->lock, l->name, l->name_len + 1u);
	} else {
		m->lock_len = 0;
		m->lock[0] = '\0';
	}
	return m;
}

void
dm_send(struct dm_engine *e, dm_slot_t to, const struct dm_msg *m)
{
	struct dm_effect fx = { .type = DM_FX_SEND };

	if (to >= DM_NODES_MAX || !e->nodes[to].used || to == e->self)
		return;
	fx.u.send.peer = e->nodes[to].name;
	fx.u.send.msg = m;
	dm_emit(e, &fx);
}

void
dm_log(struct dm_engine *e, enum dm_log_level level, const char *text,
    const struct dm_lock *l, dm_slot_t peer)
{
	struct dm_effect fx = { .type = DM_FX_LOG };

	fx.u.log.level = level;
	fx.u.log.text = text;
	fx.u.log.lock = l != NULL ? l->name : NULL;
	fx.u.log.peer = peer < DM_NODES_MAX && e->nodes[peer].used ? e->nodes[peer].name : NULL;
	dm_emit(e, &fx);
}

/* --- Tokens and time --- */

/* A token above DM_TOKEN_LIMIT (epoch 2^23, far beyond any roster's life)
 * can only come from a corrupt peer; believing it would make the next
 * grants wrap around 2^64 and break the strict order (found by
 * tests/fuzz/fuzz_engine.c), so it is ignored. */
void
dm_token_observe(struct dm_engine *e, uint64_t token)
{
	if (token > e->token_hw && token <= DM_TOKEN_LIMIT)
		e->token_hw = token;
}

/* The epoch floor on disk: 1 + the highest epoch this node has granted in
 * or seen (the roster's, or the one in a token's high bits).  It is stored
 * before any message or grant can show a token of a higher epoch, so no
 * token leaves this process above what its successor starts from
 * (floor << DM_TOKEN_EPOCH_SHIFT, dm_engine_new).  It grows only when the
 * roster's epoch does, a peer's token carries a higher one, or the
 * process starts: rarely. */
void
dm_floor_persist(struct dm_engine *e)
{
	uint64_t floor = e->token_hw >> DM_TOKEN_EPOCH_SHIFT;
	struct dm_effect fx = { .type = DM_FX_PERSIST };

	if (e->epoch > floor)
		floor = e->epoch;
	floor++;
	if (floor <= e->floor_stored || e->emit == NULL)
		return;
	e->floor_stored = floor;
	fx.u.persist.floor = floor;
	dm_emit(e, &fx);
}

dm_msec_t
dm_now(const struct dm_engine *e)
{
	return e->now;
}

dm_msec_t
dm_request_timeout(const struct dm_engine *e)
{
	return e->request_timeout_ms;
}

dm_msec_t
dm_probe_timeout(const struct dm_engine *e)
{
	return e->probe_timeout_ms;
}

bool
dm_broken(const struct dm_engine *e, uint32_t flag)
{
	return (e->breakage & flag) != 0;
}

/* --- Lock state --- */

void *
dm_lock_state(struct dm_lock *l)
{
	return l->algo_state;
}

const void *
dm_lock_state_const(const struct dm_lock *l)
{
	return l->algo_state;
}

const char *
dm_lock_name(const struct dm_lock *l)
{
	return l->name;
}

void *
dm_algo_node_state(struct dm_engine *e)
{
	return e->algo_node;
}

const void *
dm_algo_node_state_const(const struct dm_engine *e)
{
	return e->algo_node;
}

struct dm_lock *
dm_lock_get(struct dm_engine *e, const char *name, size_t len, bool create)
{
	struct dm_lock *l = dm_table_lock_find(e, name, len);

	if (l != NULL || !create || len == 0 || len > DM_LOCK_NAME_MAX)
		return l;
	l = calloc(1, sizeof(*l) + e->algo->lock_state_size);
	if (l == NULL)
		return NULL;
	memcpy(l->name, name, len);
	l->name[len] = '\0';
	l->name_len = (uint8_t)len;
	l->timer.kind = DM_TIMER_LOCK;
	dm_table_lock_insert(e, l);
	return l;
}

static bool
lock_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	return l->phase == DM_PHASE_IDLE && l->holders.n == 0 && l->waiters.n == 0 &&
	    l->timer.heap_index == 0 && !l->in_reconcile && e->algo->idle(e, l);
}

void
dm_lock_maybe_free(struct dm_engine *e, struct dm_lock *l)
{
	if (l == NULL || l->free_pending || !lock_idle(e, l))
		return;
	l->free_pending = true;
	l->fnext = e->free_list;
	e->free_list = l;
}

static void
free_idle_locks(struct dm_engine *e)
{
	struct dm_lock *l;

	while ((l = e->free_list) != NULL) {
		e->free_list = l->fnext;
		l->free_pending = false;
		if (lock_idle(e, l)) {
			dm_table_lock_remove(e, l);
			if (e->algo->lock_fini != NULL)
				e->algo->lock_fini(e, l);
			free(l);
		}
	}
}

void
dm_lock_timer_arm(struct dm_engine *e, struct dm_lock *l, dm_msec_t at)
{
	dm_timer_arm(e, &l->timer, at);
}

void
dm_lock_timer_stop(struct dm_engine *e, struct dm_lock *l)
{
	dm_timer_stop(e, &l->timer);
}

/* --- Construction --- */

static int
config_check_timing(const struct dm_engine *e)
{
	/* L/(1-rho) + D_stop < (T_fail + D_lock)/(1+rho); see NOTES.md. */
	double rho = (double)e->drift_ppm / 1e6;
	double t_fail = (double)e->request_timeout_ms + (double)e->probe_timeout_ms;
	double left = (double)e->lease_ms / (1.0 - rho) + (double)e->stop_ms;
	double right = (t_fail + (double)e->lock_delay_ms) / (1.0 + rho);

	if (e->drift_ppm >= 500000 || e->heartbeat_ms == 0 || e->heartbeat_ms >= e->lease_ms)
		return -EINVAL;
	if (e->policy == DM_FAILURE_MAJORITY && !(left < right))
		return -EINVAL;
	return 0;
}

static dm_msec_t
or_default(dm_msec_t v, dm_msec_t def)
{
	return v != 0 ? v : def;
}

int
dm_engine_new(const struct dm_engine_config *cfg, struct dm_engine **ret)
{
	struct dm_engine *e;
	int r;

	if (cfg == NULL || ret == NULL || cfg->self == NULL ||
	    !dm_node_name_valid(cfg->self, strlen(cfg->self)) ||
	    (cfg->failure_policy != DM_FAILURE_MAJORITY && cfg->failure_policy != DM_FAILURE_PAPER))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->algo = dm_algorithm_find(cfg->algorithm != NULL ? cfg->algorithm : "ricart-agrawala");
	r = -EINVAL;
	if (e->algo == NULL)
		goto fail;
	if (cfg->cluster != NULL) {
		if (strlen(cfg->cluster) > DM_NODE_NAME_MAX)
			goto fail;
		memcpy(e->cluster, cfg->cluster, strlen(cfg->cluster) + 1);
	}
	e->policy = cfg->failure_policy;
	e->incarnation = cfg->incarnation;
	e->seed = cfg->seed;
	e->breakage = cfg->test_breakage;
	if (cfg->epoch_floor >= DM_TOKEN_LIMIT >> DM_TOKEN_EPOCH_SHIFT) {
		r = -ERANGE;
		goto fail;
	}
	/* The floor is an epoch this node has never seen: starting in it puts
	 * every token of this process above every earlier one, and the lease
	 * round at the current epoch makes a majority know it before the
	 * first grant, so a later removal's epoch is above it too.  A joiner
	 * takes it only once it is a member (membership_ready): while it
	 * joins, its epoch says which roster snapshots are too old, and the
	 * cluster's may well be below our floor (a lone member after we
	 * left: nothing would ever raise it).  Its ballots count at once,
	 * though: as the new incarnation it votes on its old one's removal,
	 * which must take an epoch above every epoch that one saw
	 * (dmlock-sim --seed 1440 --nodes 1: the removal reused epoch 17,
	 * in which the old incarnation had granted higher tokens). */
	e->floor_stored = cfg->epoch_floor;
	r = dm_record_load(e, &cfg->last_record);
	if (r < 0)
		goto fail;
	r = -EINVAL;
	if (cfg->sponsor == NULL) {
		enum dm_record_start kind = dm_record_start_kind(e, cfg);

		e->join_from_peers = kind == DM_START_JOIN;
		e->start_recorded = kind == DM_START_RECORDED;
	}
	if (cfg->sponsor == NULL && !e->join_from_peers) {
		e->epoch = cfg->epoch_floor;
		e->static_member = true;
		e->static_restart = e->record.n_names > 0;
	} else {
		e->epoch_at_ready = cfg->epoch_floor;
		e->promised_epoch = cfg->epoch_floor;
	}
	e->request_timeout_ms = or_default(cfg->request_timeout_ms, DM_DEFAULT_REQUEST_TIMEOUT_MS);
	e->probe_timeout_ms = or_default(cfg->probe_timeout_ms, DM_DEFAULT_PROBE_TIMEOUT_MS);
	e->lease_ms = or_default(cfg->lease_ms, DM_DEFAULT_LEASE_MS);
	e->heartbeat_ms = or_default(cfg->heartbeat_ms, DM_DEFAULT_HEARTBEAT_MS);
	e->restart_interval_ms = or_default(cfg->restart_interval_ms,
	    DM_DEFAULT_RESTART_INTERVAL_MS);
	e->stop_ms = or_default(cfg->stop_ms, DM_DEFAULT_STOP_MS);
	e->lock_delay_ms = cfg->lock_delay_ms;
	e->drift_ppm = cfg->clock_drift_ppm != 0 ? cfg->clock_drift_ppm : DM_DEFAULT_DRIFT_PPM;
	if (config_check_timing(e) < 0)
		goto fail;
	if (cfg->election != NULL && cfg->election[0] != '\0' &&
	    strcmp(cfg->election, "bully") != 0 && strcmp(cfg->election, "invitation") != 0)
		goto fail;
	strcpy(e->election, cfg->election != NULL && cfg->election[0] != '\0' ?
	    cfg->election : "bully");
	e->group_size = cfg->group_size;
	r = -ENOMEM;
	if (e->algo->node_state_size > 0) {
		e->algo_node = calloc(1, e->algo->node_state_size);
		if (e->algo_node == NULL)
			goto fail;
	}
	e->sponsors = calloc(DM_NODES_MAX, sizeof(*e->sponsors));
	if (e->sponsors == NULL)
		goto fail;
	e->departed = calloc(DM_NODES_MAX, sizeof(*e->departed));
	e->refused = calloc(DM_NODES_MAX, sizeof(*e->refused));
	if (e->departed == NULL || e->refused == NULL)
		goto fail;
	e->heap = calloc(256, sizeof(*e->heap));
	if (e->heap == NULL)
		goto fail;
	e->heartbeats_n = dm_lease_ring_size(e);
	e->heartbeats = calloc(e->heartbeats_n, sizeof(*e->heartbeats));
	if (e->heartbeats == NULL)
		goto fail;
	e->heap_cap = 256;
	r = dm_table_init(e);
	if (r < 0)
		goto fail;
	e->heartbeat_timer.kind = DM_TIMER_HEARTBEAT;
	e->lease_timer.kind = DM_TIMER_LEASE;
	e->roster_timer.kind = DM_TIMER_ROSTER;
	e->vote_timer.kind = DM_TIMER_VOTE;
	e->restart_timer.kind = DM_TIMER_RESTART;
	e->vote_subject = DM_SLOT_NONE;
	r = dm_roster_init(e, cfg);
	if (r < 0)
		goto fail;
	dm_static_hello_init(e);
	if (e->algo->node_init != NULL) {
		r = e->algo->node_init(e, e->algo_node);
		if (r < 0)
			goto fail;
	}
	*ret = e;
	return 0;
fail:
	dm_engine_free(e);
	return r;
}

struct dm_engine *
dm_engine_free(struct dm_engine *e)
{
	if (e == NULL)
		return NULL;
	if (e->locks != NULL) {
		if (e->algo->lock_fini != NULL)
			for (size_t i = 0; i < e->locks_buckets; i++)
				for (struct dm_lock *l = e->locks[i]; l != NULL; l = l->hnext)
					e->algo->lock_fini(e, l);
		dm_table_fini(e);
	}
	free(e->heap);
	free(e->heartbeats);
	free(e->sponsors);
	free(e->departed);
	free(e->refused);
	free(e->algo_node);
	free(e);
	return NULL;
}

/* --- Stepping --- */

/* Does m->incarnation name the message's subject rather than its sender? */
static bool
msg_has_subject(const struct dm_msg *m)
{
	switch (m->kind) {
	case DM_MSG_NODE_ADD:
	case DM_MSG_NODE_FAILED:
	case DM_MSG_SUSPECT:
	case DM_MSG_ROSTER_ENTRY:
	case DM_MSG_JOIN_REFUSED:
		return true;
	default:
		return false;
	}
}

/* The sender's incarnation, 0 if the message does not say. */
uint64_t
dm_msg_sender_incarnation(const struct dm_msg *m)
{
	return msg_has_subject(m) ? m->seq : m->incarnation;
}

static bool
msg_is_roster_lock(const struct dm_msg *m)
{
	return m->lock_len == strlen(DM_ROSTER_LOCK) &&
	    memcmp(m->lock, DM_ROSTER_LOCK, m->lock_len) == 0;
}

static int
engine_receive(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	dm_slot_t from;
	struct dm_lock *l;
	int r;

	if (peer == NULL || m == NULL || !dm_node_name_valid(peer, strlen(peer)))
		return -EPROTO;
	if (m->node_len > DM_NODE_NAME_MAX ||
	    m->address_len > DM_ADDRESS_MAX || m->payload_len > DM_MSG_PAYLOAD_MAX)
		return -EPROTO;
	from = dm_roster_find(e, peer, strlen(peer));
	/* Any process's token is one some process granted or saw: taking it
	 * only raises ours.  From every sender, member or not, listed
	 * incarnation or not: a node that leaves or is removed may be the
	 * last to know the highest token, and its last messages reach the
	 * others as a non-member's (hierarchical 313/4, every fault kind: n1,
	 * which had seen token 9, told n3 only in election answers n3 took as
	 * a stranger's; then n1 left, and n3's coordinator granted 9 again). */
	dm_token_observe(e, m->token);
	dm_membership_note_sender(e, peer, m);
	{
		/* (Messages about a subject carry the subject's incarnation;
		 * the sender's, if at all, in seq.) */
		uint64_t sender = dm_msg_sender_incarnation(m);
		/* (An entry never heard from (incarnation 0) that a JOIN
		 * condemned: whoever speaks under that name now is another.) */
		e->rx_other_incarnation = from != DM_SLOT_NONE && sender != 0 &&
		    (e->nodes[from].incarnation != 0 ? sender != e->nodes[from].incarnation :
		    e->nodes[from].condemned);
	}
	/* The sender's roster label (dm_lease.c, "stale rosters"): said by
	 * the listed incarnation's own messages only. */
	if (from != DM_SLOT_NONE && from != e->self && !e->rx_other_incarnation)
		e->nodes[from].roster_epoch = m->roster_epoch;
	if (m->kind < DM_MSG_ALGO_BASE)
		return dm_roster_receive(e, from, peer, m);
	if (m->lock_len == 0 || !dm_lock_name_valid(m->lock, m->lock_len))
		return -EPROTO;
	/* Until our roster arrives we cannot tell a member that added our new
	 * incarnation from one that still counts on our old one (whose clients
	 * may still be stopping), so we stay silent; members that wait on us
	 * meanwhile are covered by the sponsor (it cancels the join if it gives
	 * up) or by failure detection.  From SYNCING on (§7.2.3) "incoming
	 * REQUEST messages are processed normally". */
	if (e->membership == DM_MEMBER_JOINING) {
		/* ... but whoever talks to us knows us: a sponsor worth asking;
		 * and its epoch tells how old a roster we may accept. */
		dm_membership_sponsor_hint(e, peer);
		dm_epoch_learn(e, m->epoch);
		/* The one exception: a sponsor that already counts us must get
		 * our permission for the roster lock (we never want it), or no
		 * sponsor could ever finish our join. */
		bool roster_lock = msg_is_roster_lock(m);
		if (dm_record_refuses_joiner_help(e, peer, m))
			return 0;	/* (a removed node's stale roster) */
		if (roster_lock || e->algo->joining_receive != NULL) {
			bool transient = from == DM_SLOT_NONE &&
			    dm_roster_add_member(e, peer, "", m->incarnation, false) == 0;
			if (transient)
				from = dm_roster_find(e, peer, strlen(peer));
			if (from == DM_SLOT_NONE)
				return 0;
			r = roster_lock ? e->algo->receive(e, dm_table_lock_find(e, m->lock,
			    m->lock_len), from, m) : e->algo->joining_receive(e, from, m);
			if (transient)
				dm_roster_erase_quiet(e, from);
			return r;
		}
		return 0;
	}
	if (e->membership == DM_MEMBER_RESTARTING || e->membership == DM_MEMBER_LEFT)
		return 0;
	if (from == DM_SLOT_NONE || from == e->self)
		return dm_roster_receive(e, from, peer, m);	/* tells it to rejoin */
	if (e->rx_other_incarnation)
		dm_membership_other_incarnation(e, from, m);
	if (e->rx_other_incarnation && (!msg_is_roster_lock(m) || (m->flags & DM_MSG_F_STATIC))) {
		/* Another incarnation than the one we list speaks under that
		 * name: a dead one's late message, or a new one whose NODE_ADD
		 * has not reached us yet.  Its requests and answers must not be
		 * booked under the listed entry: when the NODE_ADD replaces the
		 * entry, peer_gone() takes every reply owed as given and forgets
		 * the REPLY we deferred, while the live process is mid-request
		 * (seed 9629/14, crashes: two holders).  The new incarnation's
		 * sponsor retries until we have it, and its probes ask again.
		 * Not on the roster lock: a joiner's permission for a sponsor's
		 * roster lock (it never wants that lock itself) is what lets a
		 * sponsor that still lists the old incarnation finish at all
		 * (seeds 255/8, 84/13, crashes).
		 * A process started from the static roster (a daemon with
		 * peers= that crashed and came back before we removed its old
		 * incarnation) is not a joiner: it must rejoin, or it stays a
		 * member in its own eyes only, and once most listed
		 * incarnations are such ones nobody can remove them
		 * (dmlock-sim --static-restarts, seed 15/3). */
		if (m->flags & DM_MSG_F_STATIC)
			return dm_membership_on_stranger(e, peer, m);
		return 0;
	}
	if (!e->rx_other_incarnation)
		dm_membership_heard(e, from);	/* (news about the listed incarnation only) */
	if (e->nodes[from].incarnation == 0 && !e->nodes[from].condemned)
		e->nodes[from].incarnation = m->incarnation;
	dm_epoch_learn(e, m->epoch);
	l = dm_table_lock_find(e, m->lock, m->lock_len);
	r = e->algo->receive(e, l, from, m);
	l = dm_table_lock_find(e, m->lock, m->lock_len);
	if (l != NULL)
		dm_lock_maybe_free(e, l);
	return r;
}

static void
timer_fire(struct dm_engine *e, struct dm_timer *t)
{
	switch (t->kind) {
	case DM_TIMER_WAIT:
		dm_local_wait_expired(e, container_of(t, struct dm_client, wait));
		break;
	case DM_TIMER_LOCK: {
		struct dm_lock *l = container_of(t, struct dm_lock, timer);
		e->algo->timer(e, l);
		dm_lock_maybe_free(e, l);
		break;
	}
	default:
		dm_roster_timer(e, t);
		break;
	}
}

static void
run_timers(struct dm_engine *e)
{
	struct dm_timer *t;

	while ((t = dm_timer_due(e, e->now)) != NULL)
		timer_fire(e, t);
}

int
dm_engine_step(struct dm_engine *e, const struct dm_event *ev, dm_effect_fn *emit, void *ctx)
{
	int r = 0;

	if (e == NULL || ev == NULL)
		return -EINVAL;
	if (e->started) {
		/* A timer was due long before this step: we were frozen. */
		dm_msec_t due = dm_timer_next(e);
		if (due != 0 && ev->now > due + e->request_timeout_ms + e->probe_timeout_ms)
			e->resumed_at = ev->now;
	}
	if (ev->now > e->now)
		e->now = ev->now;
	e->emit = emit;
	e->emit_ctx = ctx;
	if (!e->started) {
		e->started = true;
		e->incarnation_since = e->now;
		dm_roster_start(e);
	}
	run_timers(e);
	switch (ev->type) {
	case DM_EV_TICK:
		break;
	case DM_EV_ACQUIRE:
		r = dm_local_acquire(e, ev);
		break;
	case DM_EV_RELEASE:
		r = dm_local_release(e, ev->u.release.handle, false);
		break;
	case DM_EV_CANCEL:
		r = dm_local_release(e, ev->u.cancel.handle, true);
		break;
	case DM_EV_RECEIVE:
		r = engine_receive(e, ev->u.receive.peer, ev->u.receive.msg);
		e->rx_other_incarnation = false;
		break;
	case DM_EV_LINK_UP:
	case DM_EV_LINK_DOWN:
		if (ev->u.link.peer == NULL) {
			r = -EINVAL;
			break;
		}
		dm_roster_link(e, ev->u.link.peer, ev->type == DM_EV_LINK_UP);
		break;
	case DM_EV_PEER_RESTARTED:
		if (ev->u.restarted.peer == NULL) {
			r = -EINVAL;
			break;
		}
		dm_roster_restarted(e, ev->u.restarted.peer);
		break;
	case DM_EV_LEAVE:
		r = dm_roster_leave(e);
		break;
	case DM_EV_REMOVE_NODE:
		r = ev->u.remove.peer != NULL ? dm_roster_remove_admin(e, ev->u.remove.peer) : -EINVAL;
		break;
	case DM_EV_JOIN:
		r = dm_membership_join_cluster(e, ev->u.join.sponsor, ev->u.join.address);
		break;
	default:
		r = -EINVAL;
		break;
	}
	run_timers(e);
	free_idle_locks(e);
	dm_floor_persist(e);
	dm_record_roster(e);
	e->emit = NULL;
	e->emit_ctx = NULL;
	return r;
}

dm_msec_t
dm_engine_next_deadline(const struct dm_engine *e)
{
	if (!e->started)
		return 0;
	return dm_timer_next(e);
}

/* --- Views --- */

void
dm_engine_get_stats(const struct dm_engine *e, struct dm_engine_stats *ret)
{
	ret->algorithm = e->algo->name;
	ret->roster_size = e->n_nodes;
	ret->locks_active = e->locks_n;
	ret->locks_held_local = e->held_local;
	ret->waiters_local = e->waiting_local;
	ret->epoch = e->epoch;
	ret->roster_label = e->roster_epoch;
	ret->static_member = e->static_member;
	ret->ready = dm_roster_ready(e);
}

uint32_t
dm_engine_capabilities(const struct dm_engine *e)
{
	_Static_assert(DM_ENGINE_CAP_SHARED == DM_CAP_SHARED &&
	    DM_ENGINE_CAP_NEEDS_FIFO == DM_CAP_NEEDS_FIFO &&
	    DM_ENGINE_CAP_SURVIVES_FAILURE == DM_CAP_SURVIVES_FAILURE,
	    "public capability bits follow dm_algorithm.h");
	return e->algo->caps;
}

void
dm_engine_visit_roster(const struct dm_engine *e, dm_roster_visit_fn *fn, void *ctx)
{
	for (size_t i = 0; i < DM_NODES_MAX; i++)
		if (e->nodes[i].used)
			fn(ctx, e->nodes[i].name, e->nodes[i].address, i == e->self,
			    i == e->self || e->nodes[i].link_up);
}

void
dm_engine_visit_local_locks(const struct dm_engine *e, dm_lock_visit_fn *fn, void *ctx)
{
	for (size_t i = 0; i < e->locks_buckets; i++)
		for (const struct dm_lock *l = e->locks[i]; l != NULL; l = l->hnext) {
			for (const struct dm_client *c = l->holders.head; c != NULL; c = c->next)
				fn(ctx, l->name, c->handle, c->mode, true, c->token, c->since);
			for (const struct dm_client *c = l->waiters.head; c != NULL; c = c->next)
				fn(ctx, l->name, c->handle, c->mode, false, 0, c->since);
		}
}

const char *
dm_election_name(const struct dm_engine *e)
{
	return e->election;
}

uint32_t
dm_group_size(const struct dm_engine *e)
{
	return e->group_size;
}
