/*
 * dm_static_hello.c: a process restarted from the static roster (a daemon
 * with peers= that systemd started again) says hello to every member, and
 * holds back the votes an algorithm keeps until each member present when
 * it started has answered that hello.
 *
 * Why: a member that lists an earlier incarnation under our name answers
 * our first message with REJOIN (DM_MSG_F_STATIC, dm_engine_receive()), but
 * a member that never heard from the earlier process lists the name with
 * no incarnation and takes us for it.  Under Maekawa the earlier process's
 * vote may still be held by a requester in its critical section; a
 * requester that never heard from it would collect our new vote beside it
 * (tests/unit/check_engine_static.c, "maekawa_restarted_voter"; two
 * holders, the holder's lease renewed by the third node).  The holder of
 * that vote heard from the earlier process, so it lists that incarnation
 * and answers our hello with REJOIN, never with an acknowledgement: once
 * every member has acknowledged (or left the roster) no member lists an
 * earlier incarnation of ours, and no vote of it is outstanding.
 *
 * The hello is a HEARTBEAT of round 0 (its acknowledgement counts for no
 * lease); the HEARTBEAT_ACK echoes in seq the incarnation it answers
 * (frame protocol 7), so an answer meant for an earlier process never
 * counts for this one.  Hellos go out when a link comes up and again
 * every heartbeat_ms to members that have not answered (a refusal of our
 * roster label, say, is answered by no acknowledgement).
 */
#include "dm_engine_private.h"

bool
dm_votes_held_back(const struct dm_engine *e)
{
	return e->static_member && e->unconfirmed_n > 0 && e->membership == DM_MEMBER_ACTIVE;
}

void
dm_static_hello_init(struct dm_engine *e)
{
	e->hello_timer.kind = DM_TIMER_HELLO;
	if (!e->static_member || !e->static_restart)
		return;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self)
			continue;
		dm_bit_set(e->unconfirmed, j, true);
		e->unconfirmed_n++;
	}
}

static void
say_hello(struct dm_engine *e, dm_slot_t s)
{
	struct dm_msg *m = dm_msg_begin(e, DM_MSG_HEARTBEAT, NULL);

	m->token = 0;
	m->serial = 0;
	m->arg = dm_roster_digest(e);
	dm_send(e, s, m);
}

static void
arm(struct dm_engine *e)
{
	if (dm_votes_held_back(e) && e->hello_timer.heap_index == 0)
		(void)dm_timer_arm(e, &e->hello_timer, e->now + e->heartbeat_ms);
}

/* The link to member s came up: a restarted static process says hello (a
 * member that lists an earlier incarnation answers REJOIN at once, not
 * only once a client of ours asks for a lock: tests/cluster/
 * 24-static-restart.sh, an idle restarted node was never told). */
void
dm_static_hello_link_up(struct dm_engine *e, dm_slot_t s)
{
	if (!e->static_member || !e->static_restart || e->membership != DM_MEMBER_ACTIVE)
		return;
	say_hello(e, s);
	arm(e);
}

void
dm_static_hello_timer(struct dm_engine *e)
{
	if (!dm_votes_held_back(e))
		return;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (dm_bit_get(e->unconfirmed, j) && e->nodes[j].link_up)
			say_hello(e, j);
	arm(e);
}

static void
release_lock(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	(void)arg;
	e->algo->votes_released(e, l);
	dm_lock_maybe_free(e, l);
}

/* Member s has not acknowledged this restarted process yet: it may list
 * an earlier incarnation of ours, and its REJOIN then means that nobody
 * knows this one, whatever its roster label (dm_membership_on_rejoin()). */
bool
dm_static_hello_awaited(const struct dm_engine *e, dm_slot_t s)
{
	return e->static_member && e->static_restart && s < DM_NODES_MAX &&
	    dm_bit_get(e->unconfirmed, s);
}

/* Member s answered, or is no longer one: one fewer to wait for. */
static void
confirmed(struct dm_engine *e, dm_slot_t s, bool erased)
{
	bool was = dm_votes_held_back(e);

	if (s >= DM_NODES_MAX || !dm_bit_get(e->unconfirmed, s))
		return;
	dm_bit_set(e->unconfirmed, s, false);
	e->unconfirmed_n--;
	if (!was || dm_votes_held_back(e))
		return;
	dm_timer_stop(e, &e->hello_timer);
	dm_log(e, DM_LOG_INFO, "every member has answered this restarted process: its votes go",
	    NULL, s);
	/* (on an erase, the algorithms re-evaluate every lock in peer_gone) */
	if (!erased && e->algo->votes_released != NULL)
		dm_table_lock_foreach(e, release_lock, NULL);
}

void
dm_static_hello_ack(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (m->serial != 0 || m->arg == DM_HEARTBEAT_REFUSED || m->seq != e->incarnation ||
	    e->rx_other_incarnation)
		return;
	confirmed(e, from, false);
}

void
dm_static_hello_erased(struct dm_engine *e, dm_slot_t s)
{
	confirmed(e, s, true);
}
