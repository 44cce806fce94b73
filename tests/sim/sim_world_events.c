/*
 * sim_world_events.c: what each event of the simulated run does when the
 * loop (sim_world.c) pops it: engine inputs (start, delivery, timer, link
 * and restart news, client input) held back while their node is paused,
 * client actions, faults, heal, settle, stop and the periodic progress
 * check that may end the run early.
 */
#include "sim_world_priv.h"

/* Events addressed to a paused node wait for it. */
static bool
defer_if_paused(struct sim_world *w, const struct sim_event *ev)
{
	struct sim_node *nd = &w->nodes[ev->node];
	struct sim_event again = *ev;

	if (!nd->paused)
		return false;
	again.at = nd->resume_at;
	if (sim_heap_push(&w->heap, &again) < 0)
		w->fatal = -ENOMEM;
	return true;
}

void
sw_handle(struct sim_world *w, const struct sim_event *sev)
{
	int n = sev->node;
	struct sim_node *nd = n >= 0 ? &w->nodes[n] : NULL;
	struct dm_event ev = { 0 };

	switch ((enum ev_kind)sev->kind) {
	case EV_START:
		if (sev->b != nd->incarnation || defer_if_paused(w, sev))
			return;
		ev.type = DM_EV_TICK;
		sw_node_step(w, n, &ev);
		return;
	case EV_DELIVER: {
		int from = (int)sev->a;
		struct sim_link *l = sim_net_link(&w->net, (unsigned)from, (unsigned)n);
		struct sim_msg *m;
		int r;

		if (sev->b != l->epoch || l->cut || !l->head || !nd->exists)
			return;
		if (defer_if_paused(w, sev))
			return;
		m = sim_net_pop(l);
		r = dm_wire_decode(m->bytes, m->len, &w->msg);
		if (r < 0) {
			sw_fail(w, SIM_V_PROTOCOL, "%s: dm_wire_decode of a message encoded by"
			    " dm_wire_encode failed: %d", nd->name, r);
			sim_net_release(&w->net, m);
			return;
		}
		sim_net_release(&w->net, m);
		TRACE(w, "%s < %s %s lock=%s seq=%" PRIu64 " tok=%#" PRIx64 " ep=%" PRIu64
		    " node=%s inc=%#" PRIx64 " serial=%" PRIu64 " arg=%" PRIu64 "%s", nd->name,
		    w->nodes[from].name, sw_kind_name(w->msg.kind),
		    w->msg.lock_len ? w->msg.lock : "-", w->msg.seq, w->msg.token, w->msg.epoch,
		    w->msg.node_len ? w->msg.node : "-", w->msg.incarnation, w->msg.serial,
		    w->msg.arg, w->msg.mode == DM_MODE_SHARED ? " shared" : "");
		if (w->cfg.request_kind != 0 && w->msg.kind == w->cfg.request_kind &&
		    w->msg.lock_len)
			sim_check_net_deliver(&w->ck, n, from, w->msg.lock, w->msg.seq);
		ev.type = DM_EV_RECEIVE;
		ev.u.receive.peer = w->nodes[from].name;
		ev.u.receive.msg = &w->msg;
		sw_node_step(w, n, &ev);
		return;
	}
	case EV_TIMER:
		if (sev->b != nd->incarnation || sev->a != nd->timer_gen || !nd->eng)
			return;
		if (defer_if_paused(w, sev))
			return;
		if (w->now == w->tick_spin_at) {
			if (++w->tick_spin > 10000) {
				sw_fail(w, SIM_V_PROTOCOL, "%s: engine deadline never advances"
				    " (timer loop)", nd->name);
				return;
			}
		} else {
			w->tick_spin_at = w->now;
			w->tick_spin = 0;
		}
		ev.type = DM_EV_TICK;
		sw_node_step(w, n, &ev);
		return;
	case EV_LINK_UP:
	case EV_LINK_DOWN:
		if (sev->b != nd->incarnation || !nd->eng || defer_if_paused(w, sev))
			return;
		if (sev->kind == EV_LINK_UP && (!w->nodes[sev->a].exists || sw_link_cut(w, n, (int)sev->a)))
			return;
		TRACE(w, "%s: link to %s %s", nd->name, w->nodes[sev->a].name,
		    sev->kind == EV_LINK_UP ? "UP" : "DOWN");
		ev.type = sev->kind == EV_LINK_UP ? DM_EV_LINK_UP : DM_EV_LINK_DOWN;
		ev.u.link.peer = w->nodes[sev->a].name;
		sw_node_step(w, n, &ev);
		return;
	case EV_RESTARTED:
		if (sev->b != nd->incarnation || !nd->eng || defer_if_paused(w, sev))
			return;
		TRACE(w, "%s: peer %s restarted", nd->name, w->nodes[sev->a].name);
		ev.type = DM_EV_PEER_RESTARTED;
		ev.u.restarted.peer = w->nodes[sev->a].name;
		sw_node_step(w, n, &ev);
		if (nd->eng && nd->wants[sev->a])
			sw_push(w, w->now, EV_LINK_UP, n, sev->a, nd->incarnation, 0);
		return;
	case EV_INPUT:
		if (defer_if_paused(w, sev))
			return;
		sw_do_input(w, sev);
		return;
	case EV_CLIENT:
		if (sev->b != nd->clients[sev->a].gen)
			return;
		sw_client_action(w, n, (unsigned)sev->a);
		return;
	case EV_EXPIRY:
		if (sev->b != nd->clients[sev->a].expiry_gen)
			return;
		sw_client_expired(w, n, (unsigned)sev->a);
		return;
	case EV_FAULT:
		if (w->healed)
			return;
		sw_fault_inject(w);
		sw_push(w, w->now + sim_rng_range(&w->rng, 5 * MS, 150 * MS), EV_FAULT, -1, 0, 0, 0);
		return;
	case EV_CRASH:
		if (!w->healed)
			sw_crash(w, n);
		return;
	case EV_STALE_CUT:
		if (!w->healed)
			sw_stale_cut(w, n, (int)sev->a, (unsigned)sev->b);
		return;
	case EV_STALE_HEALED:
		sw_stale_healed(w, n, sev->a);
		return;
	case EV_RESUME:
		if (sev->b != nd->incarnation || !nd->paused || w->now < nd->resume_at)
			return;
		TRACE(w, "%s: RESUME", nd->name);
		nd->paused = false;
		ev.type = DM_EV_TICK;
		sw_node_step(w, n, &ev);
		return;
	case EV_RESTART:
		if (nd->exists)
			return;
		if (sw_node_start(w, n, false) < 0)
			sw_push(w, w->now + 20 * MS, EV_RESTART, n, 0, 0, 0);
		return;
	case EV_SPONSOR_GONE:
		if (!nd->exists || nd->incarnation != sev->b || nd->member_now)
			return;
		/* Its only contact left the cluster for good before answering:
		 * no protocol can find the cluster from there (one sponsor per
		 * config, RA 7.2).  The operator restarts it pointing at a
		 * member, as dmlockd's log tells them to. */
		TRACE(w, "%s: the operator restarts it: sponsor %s left before it joined",
		    nd->name, w->nodes[nd->sponsor].name);
		sw_node_gone(w, n, "stopped by the operator");
		if (sw_node_start(w, n, false) < 0)
			sw_push(w, w->now + 20 * MS, EV_RESTART, n, 0, 0, 0);
		return;
	case EV_STATIC_STRANDED:
		if (!nd->exists || nd->incarnation != sev->b || nd->ready || nd->member_now)
			return;
		if (sw_static_peer_member(w, n)) {
			sw_push(w, w->now + SIM_OPERATOR_WAIT_MS * MS, EV_STATIC_STRANDED, n, 0,
			    nd->incarnation, 0);
			return;
		}
		TRACE(w, "%s: the operator restarts it with a sponsor: none of its static peers "
		    "is a member", nd->name);
		sw_node_gone(w, n, "stopped by the operator");
		nd->sponsor_config = true;
		if (sw_node_start(w, n, false) < 0)
			sw_push(w, w->now + 20 * MS, EV_RESTART, n, 0, 0, 0);
		return;
	case EV_UNCUT:
		sw_uncut(w, (int)sev->a, (int)sev->b);
		return;
	case EV_HEAL:
		sw_heal_all(w);
		return;
	case EV_SETTLE: {
		unsigned members = 0;

		for (unsigned i = 0; i < w->n_slots; i++)
			members += w->nodes[i].exists && w->nodes[i].ready;
		w->settled = true;
		sim_check_untrack_all(&w->ck);
		w->ck.bound_nodes = w->cfg.appendix_bound ? members : 0;
		TRACE(w, "sim: settled with %u members: Appendix bound armed", members);
		return;
	}
	case EV_STOP:
		TRACE(w, "sim: clients stop asking");
		w->stopped = true;
		return;
	case EV_PROGRESS:
		if (!w->cfg.safety_only)
			sim_check_progress(&w->ck, w->now, w->liveness_bound);
		if (sw_quiet_long_enough(w)) {
			TRACE(w, "sim: quiet since %" PRIu64 "us: the run ends", w->quiet_since);
			w->end_at = w->now;
			sw_push(w, w->now, EV_END, -1, 0, 0, 0);
		} else if (w->now + 50 * MS < w->end_at) {
			sw_push(w, w->now + 50 * MS, EV_PROGRESS, -1, 0, 0, 0);
		}
		return;
	case EV_END:
		return;
	}
}
