/*
 * dm_membership.c: roster change protocols of RA §7: insertion through a
 * sponsor (§7.2), graceful removal (§7.3), failure (§7.4) with the
 * majority-confirmed removal of failure_policy = majority, and "restart and
 * rejoin" for a removed node that keeps talking.  One handler per engine
 * message kind, dispatched from dm_roster_receive().
 */
#include <errno.h>
#include <string.h>

#include "dm_engine_private.h"

static void lease_on_growth(struct dm_engine *e);
static void note_removed(struct dm_engine *e, dm_slot_t slot);

/* Retries of JOIN, NODE_ADD and SEQ_QUERY: a round trip plus processing,
 * like the probe timeout (footnote 5). */
static dm_msec_t
dm_join_retry(const struct dm_engine *e)
{
	return e->probe_timeout_ms;
}

static void
membership_ready(struct dm_engine *e)
{
	struct dm_effect fx = { .type = DM_FX_READY };

	e->membership = DM_MEMBER_ACTIVE;
	if (e->epoch_at_ready > e->epoch)
		e->epoch = e->epoch_at_ready;	/* (dm_engine_new) */
	e->epoch_at_ready = 0;
	dm_emit(e, &fx);
}

static void
send_simple(struct dm_engine *e, dm_slot_t to, uint8_t kind, uint64_t serial, uint64_t arg)
{
	struct dm_msg *m = dm_msg_begin(e, kind, NULL);

	m->serial = serial;
	m->arg = arg;
	dm_send(e, to, m);
}

/* Send to a node by name, member or not (REJOIN, join replies). */
static void
send_to_name(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	struct dm_effect fx = { .type = DM_FX_SEND };

	fx.u.send.peer = peer;
	fx.u.send.msg = m;
	dm_emit(e, &fx);
}

static void
broadcast(struct dm_engine *e, const struct dm_msg *m)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		dm_send(e, j, m);
}

static void
set_subject(struct dm_msg *m, const struct dm_node *n)
{
	m->node_len = n->name_len;
	memcpy(m->node, n->name, n->name_len + 1u);
	m->address_len = (uint8_t)strlen(n->address);
	memcpy(m->address, n->address, m->address_len + 1u);
	m->incarnation = n->incarnation;
}

/* Messages about a subject carry the subject's incarnation; the sender's
 * goes in seq (unused by these kinds), so a receiver can tell a dead
 * incarnation's delayed NODE_ADD/NODE_FAILED/SUSPECT from its successor's. */
static void
set_sender(struct dm_engine *e, struct dm_msg *m)
{
	m->seq = e->incarnation;
}

/* A refusal from an active member says so: its epoch is a roster that
 * lives (see the member_epoch rule in on_suspect()). */
static void
flag_member(const struct dm_engine *e, struct dm_msg *m)
{
	if (e->membership == DM_MEMBER_ACTIVE)
		m->flags |= DM_MSG_F_MEMBER;
}

/* A JOIN_REFUSED from a member names another member the joiner may ask
 * instead (not us, not the joiner). */
static void
hint_other_member(struct dm_engine *e, struct dm_msg *r, const char *joiner)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || strcmp(e->nodes[j].name, joiner) == 0)
			continue;
		set_subject(r, &e->nodes[j]);
		break;
	}
}

/* Stop sponsoring a joiner (we leave or restart): refuse it, give the
 * roster lock back. */
static void
sponsor_abort(struct dm_engine *e)
{
	struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);
	struct dm_msg *r;

	if (!e->sponsoring)
		return;
	if (e->ack_waiting_n > 0 && l != NULL && l->phase == DM_PHASE_HOLDING &&
	    dm_roster_find(e, e->joiner, strlen(e->joiner)) == DM_SLOT_NONE) {
		/* (Had another sponsor finished, its NODE_ADD would have needed
		 * our ack and the joiner would be in our roster.) */
		/* NODE_ADD went out: cancel it, members must not wait on a joiner
		 * that will never get its roster from us. */
		struct dm_msg *c = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);
		c->node_len = (uint8_t)strlen(e->joiner);
		memcpy(c->node, e->joiner, c->node_len + 1u);
		c->incarnation = e->joiner_incarnation;
		c->arg = 1;			/* a cancel: only of our own add */
		c->serial = e->join_serial;
		set_sender(e, c);
		broadcast(e, c);
	}
	r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);
	r->arg = EAGAIN;
	flag_member(e, r);
	hint_other_member(e, r, e->joiner);
	send_to_name(e, e->joiner, r);
	e->sponsoring = false;
	e->joiner[0] = '\0';
	if (l != NULL && l->phase != DM_PHASE_IDLE) {
		if (l->phase == DM_PHASE_HOLDING)
			e->algo->release(e, l);
		else
			e->algo->withdraw(e, l);
		l->phase = DM_PHASE_IDLE;
		dm_lock_maybe_free(e, l);
	}
}

/* Give our join up after erasing slot, an entry under the joiner's name:
 * erased first (with no finish from the erase), so the abort cancels a
 * NODE_ADD of ours already out. */
static void
sponsor_abort_erasing(struct dm_engine *e, dm_slot_t slot)
{
	e->sponsoring = false;
	dm_roster_erase(e, slot);
	e->sponsoring = true;
	sponsor_abort(e);
}

/* --- Failure (§7.4) --- */

/* The next epoch this node may use on its own (no vote): above every epoch
 * it has seen or promised to a removal vote. */
static uint64_t
epoch_next(const struct dm_engine *e)
{
	return (e->epoch > e->promised_epoch ? e->epoch : e->promised_epoch) + 1;
}

/* Announce the removal of slot at epoch (majority: the epoch the voters
 * accepted; otherwise epoch_next()). */
static void
announce_failure_at(struct dm_engine *e, dm_slot_t slot, uint64_t epoch)
{
	/* "When it has been determined that node j has failed, this can be
	 *  broadcast by the node detecting the failure." */
	struct dm_msg *m;

	if (epoch > e->epoch)
		e->epoch = epoch;
	else
		e->epoch = epoch_next(e);
	if (e->epoch > e->promised_epoch)
		e->promised_epoch = e->epoch;
	m = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);
	set_subject(m, &e->nodes[slot]);
	set_sender(e, m);
	dm_log(e, DM_LOG_WARNING, "member failed: removing it", NULL, slot);
	note_removed(e, slot);
	e->nodes[slot].departing = true;
	broadcast(e, m);
	if (e->sponsoring && strcmp(e->nodes[slot].name, e->joiner) == 0) {
		/* We remove an entry under the name we are adding: members that
		 * took our NODE_ADD may erase the new entry with it, and a
		 * finished join would then be a member here only (2975/8,
		 * pause).  Give the join up (cancelling our NODE_ADD once the
		 * name is out of our roster); the joiner retries. */
		sponsor_abort_erasing(e, slot);
		return;
	}
	dm_roster_erase(e, slot);
}

static void
announce_failure(struct dm_engine *e, dm_slot_t slot)
{
	announce_failure_at(e, slot, epoch_next(e));
}

void
dm_roster_suspect(struct dm_engine *e, dm_slot_t slot)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used || slot == e->self)
		return;
	if (e->policy == DM_FAILURE_PAPER) {
		announce_failure(e, slot);
		return;
	}
	dm_membership_vote_start(e, slot);
}

/* --- Dispatch --- */

int
dm_roster_receive(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	e->rx_epoch_before = e->epoch;
	if ((m->kind == DM_MSG_JOIN_REFUSED || m->kind == DM_MSG_REJOIN) &&
	    (m->flags & DM_MSG_F_MEMBER) && m->epoch >= e->member_epoch) {
		e->member_epoch = m->epoch;
		e->member_epoch_at = e->now;
	}
	if (e->membership == DM_MEMBER_JOINING && m->epoch > e->epoch)
		e->epoch = m->epoch;	/* rosters older than this are stale */
	if (from != DM_SLOT_NONE && e->rx_other_incarnation) {
		dm_membership_other_incarnation(e, from, m);
		/* Another incarnation than the one we list under that name
		 * (e.g. messages of a dead incarnation, delayed past its
		 * successor's join): it speaks for no member.  Kinds that a new
		 * incarnation sends about itself are judged by their handlers;
		 * a REJOIN from it is news (its epoch tells whether it is stale:
		 * seed 715/4), and an abort can only release a vote.
		 * Seed 1715/4 (pause): a removed sponsor's NODE_ADD and its
		 * cancel, delayed past the joiner's join through another member
		 * and the sponsor's own rejoin, erased the live joiner. */
		switch (m->kind) {
		case DM_MSG_HEARTBEAT_ACK:
			return 0;	/* (acknowledges no lease of ours) */
		case DM_MSG_LEAVE:
		case DM_MSG_LEAVE_ACK:
		case DM_MSG_NODE_ADD:
		case DM_MSG_NODE_FAILED:
		case DM_MSG_SUSPECT:
			from = DM_SLOT_NONE;
			break;
		default:
			break;
		}
	}
	if (from != DM_SLOT_NONE && from != e->self) {
		/* (Learn a static peer's incarnation from the sender's own,
		 * never from a subject's.) */
		if (e->nodes[from].incarnation == 0 && m->kind != DM_MSG_JOIN &&
		    !e->nodes[from].condemned)
			e->nodes[from].incarnation = dm_msg_sender_incarnation(m);
		/* Only the incarnation we list is news about that entry: a new
		 * incarnation's JOIN or vote says the listed one is gone.  And a
		 * JOIN, even from the listed incarnation, says it does not act
		 * as a member (its roster never reached it): not a sign of life
		 * that should stop its removal (hierarchical bully 29/6,
		 * partition: a listed joiner was the roster lock's group
		 * coordinator, its JOINs aborted every vote to remove it, and
		 * its sponsor waited for the lock for ever). */
		if (!e->rx_other_incarnation && m->kind != DM_MSG_JOIN)
			dm_membership_heard(e, from);
		dm_token_observe(e, m->token);
		/* (Not from a JOIN: a joiner's epoch is what some member told
		 * it, not a roster change we applied.  Taken over, it hid from
		 * the restarted nodes that our roster is older than one they
		 * had heard of: seed 1533/6, see the member_epoch rule in
		 * on_suspect().) */
		if (m->epoch > e->epoch && m->kind != DM_MSG_JOIN)
			e->epoch = m->epoch;
	}
	if (m->kind >= DM_MSG_ALGO_BASE)
		return dm_membership_on_stranger(e, peer, m);
	switch (m->kind) {
	case DM_MSG_HEARTBEAT:
		return from == DM_SLOT_NONE ? dm_membership_on_stranger(e, peer, m) :
		    dm_lease_on_heartbeat(e, from, m);
	case DM_MSG_HEARTBEAT_ACK:
		return from == DM_SLOT_NONE ? 0 : dm_lease_on_heartbeat_ack(e, from, m);
	default:
		return dm_membership_receive(e, from, peer, m);
	}
}

/* --- Majority-confirmed removal --- */

static dm_msec_t
fail_silence(const struct dm_engine *e)
{
	return e->request_timeout_ms + e->probe_timeout_ms;	/* T_fail */
}

/* Would this node agree that slot failed?  Only after T_fail of silence,
 * or if it has acknowledged nothing of slot's since it agreed to a removal
 * whose outcome it cannot learn any more (vote_orphaned): either way, no
 * lease ack of ours to slot is younger than T_fail. */
static bool
silent_long_enough(const struct dm_engine *e, dm_slot_t slot)
{
	return e->nodes[slot].departing || e->nodes[slot].vote_orphaned ||
	    e->now >= e->nodes[slot].last_heard + fail_silence(e);
}

/*
 * Another incarnation speaks under a listed member's name, not as a joiner
 * (its JOIN condemns the listed one in on_join), while the listed one has
 * been silent for T_fail: the listed one is dead and nothing else may ever
 * ask about it -- failure detection runs on demand, and this node drops
 * every message of the live one.  Suspect it; the majority vote decides as
 * for any silent member (voters that list the live incarnation agree at
 * once).  Hierarchical bully 1527/8 and 2364/5, crashes: a joining node
 * kept a restarted peer's old incarnation (the new one's NODE_ADD came from
 * a sender it did not list yet, and the snapshot did not name the peer);
 * once READY it ignored the live incarnation's Enter_Election for ever.
 */
void
dm_membership_other_incarnation(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (from == DM_SLOT_NONE || from == e->self || m->kind == DM_MSG_JOIN ||
	    e->membership != DM_MEMBER_ACTIVE || e->policy != DM_FAILURE_MAJORITY ||
	    e->vote_subject == from || !silent_long_enough(e, from))
		return;
	dm_membership_vote_start(e, from);
}

static void
vote_commit(struct dm_engine *e)
{
	dm_slot_t s = e->vote_subject;

	e->vote_subject = DM_SLOT_NONE;
	if (s < DM_NODES_MAX && e->nodes[s].used)
		announce_failure_at(e, s, e->vote_epoch);
}

static void
vote_check(struct dm_engine *e)
{
	if (e->vote_subject == DM_SLOT_NONE || (size_t)e->vote_yes * 2 <= e->n_nodes)
		return;
	if (e->lock_delay_ms > 0) {
		/* D_lock: wait a little longer before anyone may use the removal. */
		if (e->vote_timer.heap_index == 0)
			dm_timer_arm(e, &e->vote_timer, e->now + e->lock_delay_ms);
		return;
	}
	vote_commit(e);
}

void
dm_membership_vote_start(struct dm_engine *e, dm_slot_t slot)
{
	struct dm_msg *m;

	if (e->vote_subject != DM_SLOT_NONE && e->vote_subject != slot &&
	    e->nodes[e->vote_subject].used)
		return;	/* one removal at a time; the next probe round asks again */
	if (!silent_long_enough(e, slot))
		return;
	/* We agreed to another prober's vote on this subject a moment ago:
	 * let it finish, or two probers outbid each other's ballots for
	 * ever (seed 8000988/8). */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self && e->nodes[j].joined_vote_subject == slot &&
		    e->now < e->nodes[j].joined_vote_at + 2 * e->probe_timeout_ms)
			return;
	e->vote_subject = slot;	/* from now on: no lease acks for it */
	e->nodes[slot].vote_started_at = e->now;
	e->vote_serial++;
	/* Our own ballot: promise it ourselves, so we never agree to another
	 * removal at this epoch. */
	e->vote_epoch = epoch_next(e);
	e->promised_epoch = e->vote_epoch;
	e->vote_yes = 1;
	e->vote_no = 0;
	memset(e->voted, 0, sizeof(e->voted));
	dm_bit_set(e->voted, e->self, true);
	m = dm_msg_begin(e, DM_MSG_SUSPECT, NULL);
	set_subject(m, &e->nodes[slot]);
	set_sender(e, m);
	/* mode 1: the subject restarted (its new incarnation's JOIN reached
	 * us), not merely silent. */
	m->mode = e->nodes[slot].condemned ? 1 : 0;
	m->serial = e->vote_serial;
	m->arg = e->vote_epoch;
	/* A restarted (condemned) subject is asked too: its new incarnation
	 * votes for its old slot (see on_suspect), so a two-member roster,
	 * or one where several members restarted, can still remove the dead
	 * entries by majority. */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != slot || e->nodes[slot].condemned)
			dm_send(e, j, m);
	vote_check(e);
}

/* Give up our running vote (another prober's ballot wins): voters that
 * agreed to it may acknowledge the subject's lease again. */
static void
vote_abandon(struct dm_engine *e)
{
	struct dm_msg *m;

	e->vote_subject = DM_SLOT_NONE;
	dm_timer_stop(e, &e->vote_timer);
	m = dm_msg_begin(e, DM_MSG_SUSPECT_ABORT, NULL);
	m->serial = e->vote_serial;
	broadcast(e, m);
}

/* Is peer the sponsor we ask now or one of the candidates we try in turn? */
static bool
is_sponsor_candidate(const struct dm_engine *e, const char *peer)
{
	if (strcmp(peer, e->sponsor) == 0)
		return true;
	for (size_t i = 0; i < e->n_sponsors; i++)
		if (strcmp(peer, e->sponsors[i].name) == 0)
			return true;
	return false;
}

static int
on_suspect(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	/* Majority policy: agree only after T_fail without a word from the
	 * suspect, and from then on refuse its heartbeats. */
	dm_slot_t s = dm_roster_find(e, m->node, m->node_len);
	bool agree = s == DM_SLOT_NONE || (s != e->self && silent_long_enough(e, s));
	struct dm_msg *v;

	/* About an incarnation we have already replaced: that one is gone
	 * (and our entry, the live one, is not what the vote is about). */
	bool replaced = s != DM_SLOT_NONE && s != e->self && m->incarnation != 0 &&
	    e->nodes[s].incarnation != 0 && m->incarnation != e->nodes[s].incarnation;
	if (replaced)
		agree = true;

	bool member = e->membership == DM_MEMBER_ACTIVE || e->membership == DM_MEMBER_SYNCING ||
	    e->membership == DM_MEMBER_LEAVING;

	if (s == e->self || !member) {
		/* The prober lists an earlier incarnation of ours (we restarted,
		 * or we were removed and are rejoining) and we vote for that
		 * slot, under the same ballot rule; it counts our vote only if
		 * it knows we restarted (see on_suspect_vote).
		 *  - About ourselves: yes if the listed incarnation is another
		 *    (gone) one.
		 *  - About another node (only while not a member), and only if
		 *    that node restarted too (mode 1): our roster is gone or
		 *    provisional, so we cannot judge anyone's silence; what we
		 *    can promise is that no lease ack of ours is younger than
		 *    T_fail (every ack of an earlier incarnation was sent before
		 *    this one began).  Without this a roster whose other
		 *    members all restarted could never remove anyone (e.g.
		 *    seeds 3/4 and 2588/5, crashes alone).  Never about a live
		 *    node: our old incarnation may have agreed to remove the
		 *    prober, and we do not remember (seed 2090/3: a node cut
		 *    off and removed gathered such a vote against a live member
		 *    and formed a second cluster).
		 * Only to the cluster we belong to or are joining (a member,
		 * or a sponsor we ask: we rotate through the candidates, so the
		 * one asked at this instant would be too few when most members
		 * restarted, seed 119/8): seed 2147/4, a node removed while
		 * paused gathered such votes from the restarted members of its
		 * stale roster (joining elsewhere). */
		bool ours = member ? from != DM_SLOT_NONE : is_sponsor_candidate(e, peer);
		if (s == e->self)
			/* (0: the prober never heard the listed one; whatever
			 * ran under our name before this process is gone.) */
			agree = m->incarnation != e->incarnation;
		else
			agree = m->mode == 1 && e->now >= e->incarnation_since + fail_silence(e);
		if (!ours || m->arg <= e->epoch || m->arg <= e->promised_epoch)
			agree = false;
		/* A prober whose roster is older than the epoch a live member
		 * of some roster told us of lately may be a removed node that
		 * never learned it, whose listed members all restarted or
		 * left: with our votes it would rebuild a second cluster
		 * beside the one that removed it (seed 1533/6, every fault
		 * kind: n5, removed at epoch 13 while cut off, removed n0's
		 * and n1's old incarnations by the votes of their new ones
		 * and granted beside n4's cluster, which kept refusing n0's
		 * JOINs at epoch 13).  We cannot tell; refuse while that
		 * member was heard within T_fail.  (Not for good: a lagging
		 * survivor whose newer-epoch peers all crashed must still be
		 * able to remove them, seed 2947/4, crashes.) */
		if (m->epoch < e->member_epoch && e->now < e->member_epoch_at + fail_silence(e))
			agree = false;
		if (agree) {
			e->promised_epoch = m->arg;
			if (e->vote_subject != DM_SLOT_NONE)
				vote_abandon(e);
		}
		v = dm_msg_begin(e, DM_MSG_SUSPECT_VOTE, NULL);
		v->serial = m->serial;
		v->arg = agree ? 1 : 0;
		v->seq = e->epoch > e->promised_epoch ? e->epoch : e->promised_epoch;
		send_to_name(e, peer, v);
		return 0;
	}
	if (from == DM_SLOT_NONE)
		return 0;
	/* Ballot: agree only to an epoch above all we have seen or promised;
	 * otherwise say which epoch the prober must exceed.  Two probers that
	 * propose the same epoch at once would refuse each other for ever:
	 * the one with the smaller name gives way (it drops its own vote, so
	 * it can never decide that epoch itself). */
	bool tie = m->arg == e->promised_epoch && m->arg > e->epoch &&
	    e->vote_subject != DM_SLOT_NONE && e->vote_epoch == m->arg &&
	    dm_roster_compare(e, from, e->self) > 0;
	if ((m->arg <= e->epoch || m->arg <= e->promised_epoch) && !tie)
		agree = false;
	/* Never help a node remove others while we stand by a vote to
	 * remove it (ours or another prober's): the two removals could each
	 * reach a majority through us and split the roster in two clusters
	 * (seed 1810/3: n2 agreed that n1 remove the partitioned n0, then,
	 * before n1's announcement reached it, that n0 remove n1).  Not a
	 * ballot refusal: the prober must not retry at once (seq 0). */
	bool veto = e->vote_subject == from || e->nodes[from].vote_orphaned;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != from && e->nodes[j].joined_vote_subject == from)
			veto = true;
	if (veto)
		agree = false;
	if (agree) {
		e->promised_epoch = m->arg;
		if (e->vote_subject != DM_SLOT_NONE)
			vote_abandon(e);	/* ours can no longer win a majority */
	}
	/* The prober runs one vote at a time: this one replaces its last.
	 * (Never against the live successor of the incarnation voted on:
	 * seed 230/7, pause: voters refused a rejoined node's lease acks for
	 * ever, so it held permission without a lease and deadlocked.) */
	e->nodes[from].joined_vote_subject = agree && !replaced ? s : DM_SLOT_NONE;
	e->nodes[from].joined_vote_serial = m->serial;
	e->nodes[from].joined_vote_at = e->now;
	v = dm_msg_begin(e, DM_MSG_SUSPECT_VOTE, NULL);
	v->serial = m->serial;
	v->arg = agree ? 1 : 0;
	v->seq = veto ? 0 : e->epoch > e->promised_epoch ? e->epoch : e->promised_epoch;
	dm_send(e, from, v);
	return 0;
}

static int
on_suspect_abort(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (from != DM_SLOT_NONE && e->nodes[from].joined_vote_serial == m->serial)
		e->nodes[from].joined_vote_subject = DM_SLOT_NONE;
	return 0;
}

/* Our running vote's subject left the roster without our commit (another
 * removal, a leave, a replacement by a new incarnation): release the
 * voters that agreed, or they would refuse lease acks to whatever takes
 * that name or slot next. */
void
dm_membership_vote_dropped(struct dm_engine *e)
{
	vote_abandon(e);
}

/*
 * The prober whose vote to remove subject we agreed to left our roster
 * (removed, replaced, left) before its outcome reached us.  It may have
 * committed just before, its NODE_FAILED lost with it: releasing our
 * agreement then let us acknowledge the removed subject's lease again, and
 * the subject, unaware, granted beside the members (seed 123285/6,
 * partition: node n3 agreed that n1 remove n4, n1 committed at epoch 15
 * but its announcement to n3 was held by the partition, n3 later removed
 * n1, acked n4's lease again, and n4 and n2 granted with the same fencing
 * token).  So the agreement stands for that incarnation for good, and as
 * we cannot learn whether the subject is still a member elsewhere, we
 * remove it ourselves by a majority vote like any removal (those of the
 * prober's voters that share our doubt agree at once, those that took the
 * announcement no longer list it), asked again every probe_timeout until
 * the entry is gone: a live subject rejoins.  Standing alone, the refusal
 * starved a live subject whose prober never committed (seed 275/4, pause).
 */
void
dm_membership_vote_orphaned(struct dm_engine *e, dm_slot_t subject)
{
	if (subject >= DM_NODES_MAX || subject == e->self || !e->nodes[subject].used)
		return;
	e->nodes[subject].vote_orphaned = true;
	if (e->policy != DM_FAILURE_MAJORITY)
		return;
	if (e->restart_timer.heap_index == 0 || e->restart_timer.at > e->now)
		dm_timer_arm(e, &e->restart_timer, e->now);
}

static bool
incarnation_removed(const struct dm_engine *e, const char *name, uint64_t incarnation)
{
	if (incarnation == 0)
		return false;
	for (size_t i = 0; i < DM_REMOVED_MEMORY; i++)
		if (e->removed[i].incarnation == incarnation && strcmp(e->removed[i].name, name) == 0)
			return true;
	return false;
}

/* Did we remove some incarnation of this name (the last DM_REMOVED_MEMORY)? */
static bool
name_removed(const struct dm_engine *e, const char *name)
{
	for (size_t i = 0; i < DM_REMOVED_MEMORY; i++)
		if (e->removed[i].incarnation != 0 && strcmp(e->removed[i].name, name) == 0)
			return true;
	return false;
}

/*
 * slot is being erased by a majority removal (or took its leave,
 * on_leave): that incarnation is dead for good.  A NODE_ADD of it at the same epoch (a sponsor acting on a stale
 * JOIN, or finishing a join concurrently with the removal: the two are not
 * ordered) is acknowledged but not applied (on_node_add).  Re-added, the
 * fresh entry carried none of the voters' agreements and got lease acks
 * again: seed 4927/16 (partition), n7 removed n15 at epoch 47, n13 re-added
 * the same incarnation from a stale JOIN, and n15, never told, renewed its
 * lease and held lock/c while n1, which had taken the erase as n15's
 * REPLY, granted.  A joiner of a dead incarnation that still finishes (its
 * sponsor had not heard) is answered REJOIN for it and restarts.
 */
static void
note_removed(struct dm_engine *e, dm_slot_t slot)
{
	struct dm_removed *r;

	if (e->nodes[slot].incarnation == 0 ||
	    incarnation_removed(e, e->nodes[slot].name, e->nodes[slot].incarnation))
		return;
	r = &e->removed[e->removed_next++ % DM_REMOVED_MEMORY];
	memcpy(r->name, e->nodes[slot].name, sizeof(r->name));
	r->incarnation = e->nodes[slot].incarnation;
}

/* Has this node promised not to extend slot's lease? */
bool
dm_membership_condemned(const struct dm_engine *e, dm_slot_t slot)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used)
		return true;
	/* Only a member acknowledges leases: a joiner's roster is provisional
	 * (and a restarting node's is gone), so it cannot know whether the
	 * majority removed the requester. */
	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_SYNCING &&
	    e->membership != DM_MEMBER_LEAVING)
		return true;
	if (e->nodes[slot].condemned || e->nodes[slot].vote_orphaned || e->vote_subject == slot)
		return true;
	for (size_t i = 0; i < e->slot_limit; i++)
		if (e->nodes[i].used && e->nodes[i].joined_vote_subject == slot)
			return true;
	return false;
}

/* Do we, an active member, refuse slot's lease for good: we agreed to a
 * removal whose outcome we can no longer learn (vote_orphaned)?  Every
 * other refusal ends by itself: a running vote commits or is withdrawn,
 * a condemned entry is removed or speaks again, a joiner becomes a
 * member.  Only this one is said to the subject (dm_lease.c). */
bool
dm_membership_refuses_for_good(const struct dm_engine *e, dm_slot_t slot)
{
	return slot < DM_NODES_MAX && e->nodes[slot].used && e->nodes[slot].vote_orphaned &&
	    (e->membership == DM_MEMBER_ACTIVE || e->membership == DM_MEMBER_SYNCING ||
	    e->membership == DM_MEMBER_LEAVING);
}

/* A message from a member.  If we were voting to remove it, it is alive
 * after all: withdraw the vote (never committed) so that the members that
 * agreed may acknowledge its lease again.  Likewise if another
 * incarnation's JOIN condemned it: the listed incarnation still speaks (not
 * a JOIN), so that JOIN may have been a dead incarnation's late one.  Seed
 * 332229/6 (partition), the million-seed campaign: n1 restarted twice; the
 * JOINs of its middle incarnation, held by the partition, reached n2, n4
 * and n5 after they had added the live one, condemned it for good (no
 * lease acks, a removal vote the others refused), and n1, holding every
 * REPLY without a lease, deferred everyone.  Had the listed incarnation
 * really restarted, its new JOIN condemns it again once its late messages
 * stop, and the removal waits T_fail + D_lock from then. */
void
dm_membership_heard(struct dm_engine *e, dm_slot_t from)
{
	struct dm_msg *m;

	e->nodes[from].last_heard = e->now;
	if (e->nodes[from].condemned && e->nodes[from].incarnation != 0) {
		e->nodes[from].condemned = false;
		e->nodes[from].remove_at = 0;
	}
	if (e->vote_subject != from || e->nodes[from].vote_orphaned)
		return;	/* (an orphaned agreement is no judgement of silence) */
	e->vote_subject = DM_SLOT_NONE;
	dm_timer_stop(e, &e->vote_timer);
	m = dm_msg_begin(e, DM_MSG_SUSPECT_ABORT, NULL);
	m->serial = e->vote_serial;
	broadcast(e, m);
}

/*
 * So many voters refused that no majority can agree any more (the listed
 * incarnation of the subject never votes): give the vote up.  Kept, it
 * blocked every other removal ("one at a time") until some later round
 * won, and one never does when the subject is alive to everyone else but
 * orphaned here: suzuki-kasami --election invitation, seed 798/15,
 * partition.  n12 had agreed to a vote on n2 whose prober then left its
 * roster, so it kept asking to remove n2, which every other member heard;
 * meanwhile it could not remove n7 and n10, old incarnations that only it
 * still listed, and its election waited for them for good.  Giving up is
 * safe: only we could have committed this vote.  (An orphaned subject
 * still gets no lease acks from us: that is the orphan flag's doing.)
 */
static void
vote_check_lost(struct dm_engine *e)
{
	size_t out = e->vote_no + (e->nodes[e->vote_subject].condemned ? 0 : 1);

	if (out < e->n_nodes && (e->n_nodes - out) * 2 > e->n_nodes)
		return;
	dm_log(e, DM_LOG_INFO, "removal vote refused by the others: given up", NULL,
	    e->vote_subject);
	vote_abandon(e);
}

static int
on_suspect_vote(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (from == DM_SLOT_NONE || m->serial != e->vote_serial ||
	    e->vote_subject == DM_SLOT_NONE || dm_bit_get(e->voted, from))
		return 0;
	/* A slot votes through a new incarnation only if we know it
	 * restarted (condemned at its JOIN: for the subject, T_fail + D_lock
	 * before the vote, so its old lease has run out).  The listed
	 * incarnation of the subject never votes for its own removal. */
	if (e->rx_other_incarnation && !e->nodes[from].condemned)
		return 0;
	if (from == e->vote_subject && !e->rx_other_incarnation)
		return 0;
	if (m->arg != 1) {
		/* Refused because our ballot is too low?  Ask again above it
		 * (the refusal names the highest epoch the voter knows). */
		if (m->seq >= e->vote_epoch) {
			dm_slot_t subject = e->vote_subject;
			if (m->seq > e->promised_epoch)
				e->promised_epoch = m->seq;
			e->vote_subject = DM_SLOT_NONE;
			dm_timer_stop(e, &e->vote_timer);
			dm_membership_vote_start(e, subject);
			/* Not asked again (the subject is no longer silent here, or
			 * another prober's vote on it runs): this vote is over, so
			 * release the voters that agreed to it, as any other end
			 * of a vote does.  Seed 703833/10 (partition), the million
			 * seeds: n0's link to n4 came up (no longer silent), a
			 * higher ballot came back, and the vote ended unannounced;
			 * the five members that had agreed never acknowledged n4's
			 * lease again, and n4, READY and first in lock/c's queue,
			 * deferred everyone for good. */
			if (e->vote_subject == DM_SLOT_NONE)
				vote_abandon(e);
			return 0;
		}
		dm_bit_set(e->voted, from, true);
		e->vote_no++;
		vote_check_lost(e);
		return 0;
	}
	dm_bit_set(e->voted, from, true);
	e->vote_yes++;
	vote_check(e);
	return 0;
}

static void
restart_and_rejoin_why(struct dm_engine *e, const char *told_by, const char *why)
{
	/* §7.4: "the node should restart itself and use the insertion protocol";
	 * §7.2.1: wait the restart interval first. */
	dm_slot_t by = dm_roster_find(e, told_by, strlen(told_by));

	dm_log(e, DM_LOG_ERR, why, NULL, by);
	/* Sponsors to try: the node that told us first, then the old roster. */
	memset(&e->sponsors[0], 0, sizeof(e->sponsors[0]));
	memcpy(e->sponsors[0].name, told_by, strlen(told_by) + 1);
	if (by != DM_SLOT_NONE)
		memcpy(e->sponsors[0].address, e->nodes[by].address, sizeof(e->nodes[by].address));
	e->n_sponsors = 1;
	e->sponsor_next = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || j == by || e->n_sponsors >= DM_NODES_MAX)
			continue;
		memcpy(e->sponsors[e->n_sponsors].name, e->nodes[j].name, sizeof(e->nodes[j].name));
		memcpy(e->sponsors[e->n_sponsors].address, e->nodes[j].address,
		    sizeof(e->nodes[j].address));
		e->n_sponsors++;
	}
	e->membership = DM_MEMBER_RESTARTING;
	e->n_departed = 0;
	e->departed_next = 0;
	sponsor_abort(e);	/* never answer a JOIN from a roster we throw away */
	dm_local_lose_all(e, -ESHUTDOWN, true);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self)
			dm_roster_erase(e, j);
	/* A new identity for the new membership that cannot collide with the
	 * shell's numbering of daemon starts (1, 2, 3... or a clock). */
	e->incarnation += (uint64_t)1 << 48;
	e->nodes[e->self].incarnation = e->incarnation;
	e->incarnation_since = e->now;
	e->vote_subject = DM_SLOT_NONE;
	dm_timer_stop(e, &e->heartbeat_timer);
	dm_timer_stop(e, &e->lease_timer);
	e->lease_until = 0;
	dm_timer_arm(e, &e->roster_timer, e->now + e->restart_interval_ms);
}

static void
restart_and_rejoin(struct dm_engine *e, const char *told_by)
{
	restart_and_rejoin_why(e, told_by, "removed from the roster: restarting and rejoining");
}

/*
 * A removal (not a sponsor's cancel, arg 1) of exactly our incarnation,
 * while we are still joining: the members had added it (a NODE_ADD made it
 * a member there) and removed it since, e.g. while we were frozen or cut
 * off.  That incarnation is spent; joining on under it, a sponsor that had
 * not heard of the removal adds it again, and members take that add and
 * the removal in either order (seed 1115/12, pause: n9 became READY at the
 * removal's epoch, listed by all but n5, which answered REJOIN, and its
 * request, first in lock/b's queue, stalled every other for ever).  We
 * start again under a new incarnation at once (a joiner holds nothing).
 */
static bool
spent_incarnation(const struct dm_engine *e, const struct dm_msg *m)
{
	return m->arg != 1 && m->incarnation != 0 && m->incarnation == e->incarnation;
}

static int
on_node_failed(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	/* "Any node which is awaiting a REPLY message from the failed node should
	 *  pretend that a REPLY was received.  In addition the node should be
	 *  erased from the NAMES array." */
	dm_slot_t s = dm_roster_find(e, m->node, m->node_len);

	/* The prober whose vote on s we joined announces its outcome: that
	 * vote is over, whatever we make of the announcement below (erase s,
	 * give up sponsoring it, or ignore it as about an incarnation we no
	 * longer list, or as superseded).  Left standing, it denied lease acks
	 * to s's live entry for ever (hierarchical seed 181/6, pause: the
	 * rejoined node became system coordinator, granted its own group, and
	 * never got a lease). */
	bool joined = from != DM_SLOT_NONE && s != DM_SLOT_NONE &&
	    e->nodes[from].joined_vote_subject == s;
	if (joined)
		e->nodes[from].joined_vote_subject = DM_SLOT_NONE;
	if (s != DM_SLOT_NONE && from == DM_SLOT_NONE && e->membership == DM_MEMBER_JOINING &&
	    e->nodes[s].via_add && m->incarnation == e->nodes[s].incarnation) {
		/* A NODE_ADD we took while joining was cancelled (its sponsor
		 * gave up) or the node failed since. */
		dm_roster_erase(e, s);
		return 0;
	}
	if (from != DM_SLOT_NONE && e->sponsoring && strcmp(m->node, e->joiner) == 0 &&
	    m->incarnation == e->joiner_incarnation && m->arg != 1 &&
	    m->epoch >= e->rx_epoch_before) {
		/* The members removed the joiner we are adding (our NODE_ADD
		 * made it a member there, and it stays silent until its roster
		 * arrives): finishing would make it a member here only.  Seed
		 * 1556/5: that joiner then granted beside the others with a
		 * repeated fencing token.  It retries its JOIN.  (Asking every
		 * member to add it again instead helped Maekawa under pauses
		 * but broke Naimi-Trehel seeds: NOTES.md, round 4.) */
		sponsor_abort(e);
		/* If we list it already (it joined before and asks again), the
		 * removal is about our entry as well: go on and erase it.
		 * Raymond --election invitation 419/4 (partition): n3 agreed to
		 * remove n0, took the announcement as about the join only,
		 * released its vote and kept n0 listed; it acknowledged n0's
		 * lease again while n1 had erased n0. */
		if (s == DM_SLOT_NONE)
			return 0;
	}
	if (s == e->self && e->membership == DM_MEMBER_JOINING && spent_incarnation(e, m)) {
		/* From anyone: a joiner's roster is provisional. */
		restart_and_rejoin(e, peer);
		return 0;
	}
	if (s == e->self && s != DM_SLOT_NONE) {
		/* We were removed (perhaps while paused): stop serving at once.
		 * Also when the announcer is no longer in our roster, if it
		 * names exactly this incarnation after our join: a removal
		 * committed before its prober was removed in turn still
		 * stands (seed 643989/6, pauses: n5 removed n4 at epoch 8, n4
		 * removed n5 at 11 before the announcement arrived and ignored
		 * it; n0 and n3, bound by their agreement, never acknowledged
		 * n4's lease again, n4 never entered and deferred everyone for
		 * good).  A removed node's own later votes reach no majority
		 * (members ignore a stranger's SUSPECT), so such a message is
		 * no forgery of a stale roster. */
		bool named = from != DM_SLOT_NONE ?
		    (m->incarnation == 0 || m->incarnation == e->incarnation) :
		    (m->incarnation != 0 && m->incarnation == e->incarnation && m->arg != 1);
		if (named && (m->epoch > e->join_epoch ||
		    (m->epoch == e->join_epoch && m->incarnation == e->incarnation)) &&
		    (e->membership == DM_MEMBER_ACTIVE || e->membership == DM_MEMBER_SYNCING))
			restart_and_rejoin(e, peer);
		return 0;
	}
	if (from == DM_SLOT_NONE || s == DM_SLOT_NONE)
		return 0;
	if (m->incarnation != 0 && e->nodes[s].incarnation != 0 &&
	    m->incarnation != e->nodes[s].incarnation)
		return 0;	/* about an older incarnation already gone */
	if (m->arg != 1 && m->epoch < e->rx_epoch_before) {
		/* Decided at an epoch older than one we know: a later removal
		 * (ballot) superseded it, and the voters of this one may have
		 * been released since (e.g. its prober was removed), so the
		 * subject may hold a fresh lease.  Seed 2398/7 (pause): a
		 * prober frozen right after its vote completed announced on
		 * resuming, two epochs late; members erased a live holder.
		 * But if we agreed to this very vote, it was committed and we
		 * may not acknowledge the subject's lease again (seed 1822/7,
		 * partition: the late announcement released its voters, and
		 * the removed node renewed its lease with their acks and
		 * granted beside its prober): we remove it ourselves at a
		 * current epoch, as for a prober gone before its outcome. */
		if (joined)
			dm_membership_vote_orphaned(e, s);
		return 0;
	}
	if (m->arg == 1 && (e->nodes[s].added_by != from || e->nodes[s].added_serial != m->serial ||
	    e->nodes[s].added_twice))
		/* A sponsor cancels its NODE_ADD, but our entry came from
		 * another add (or our roster): the node joined through another
		 * sponsor since.  Seed 1715/4 (pause): a removed sponsor's
		 * cancel, delayed past the joiner's join through another
		 * member, erased the live joiner. */
		return 0;
	if (m->arg == 1 && e->nodes[s].replaced_incarnation != 0 &&
	    !incarnation_removed(e, e->nodes[s].name, e->nodes[s].replaced_incarnation)) {
		/* The cancelled add had replaced another incarnation of the
		 * name.  The cancel undoes that add; it says nothing about the
		 * one replaced, which may be live and deferring our requests
		 * (they reached whichever incarnation answers the name).  Seed
		 * 618871/8 (pause): a dead incarnation's add and its cancel,
		 * both delayed, replaced and then erased the entry of a live
		 * member; its reply taken as given, we entered beside it.  Put
		 * the replaced entry back, asking again (a dead one is removed
		 * by failure detection as usual). */
		char name[DM_NODE_NAME_MAX + 1], address[DM_ADDRESS_MAX + 1];

		memcpy(name, e->nodes[s].name, sizeof(name));
		memcpy(address, e->nodes[s].address, sizeof(address));
		dm_log(e, DM_LOG_INFO, "a cancelled add gives the member's entry back", NULL, s);
		return dm_roster_replace(e, s, name, address, e->nodes[s].replaced_incarnation);
	}
	dm_log(e, DM_LOG_WARNING, "member removed by a failure announcement", NULL, s);
	if (m->arg != 1)
		note_removed(e, s);
	dm_roster_erase(e, s);
	return 0;
}

void
dm_membership_restart_refused(struct dm_engine *e)
{
	dm_slot_t by = DM_SLOT_NONE;

	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_SYNCING)
		return;
	/* Rejoin first through a member that still acknowledges us. */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self)
			continue;
		if (by == DM_SLOT_NONE ||
		    (e->nodes[by].refuses_our_lease && !e->nodes[j].refuses_our_lease))
			by = j;
	}
	if (by == DM_SLOT_NONE)
		return;
	restart_and_rejoin_why(e, e->nodes[by].name, "members that agreed to remove us refuse "
	    "our lease and cannot be outvoted: restarting and rejoining");
}

static int
on_rejoin(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_SYNCING)
		return 0;	/* leaving, left, or already rejoining */
	/* Only a member may tell us, and only about a removal after our join
	 * (a late REJOIN aimed at our previous membership is stale) -- or at
	 * the epoch of our join if it answers this very incarnation (serial):
	 * our removal was decided at that epoch, concurrently with our join
	 * (seed 112187/12, partition: n1 finished n8's join at epoch 34, then
	 * applied n7's removal of that incarnation at epoch 34; n8 ignored
	 * n1's REJOINs to its requests, and later held lock/a while n1, which
	 * no longer counted it, granted too).  A previous membership had
	 * another incarnation (a restart takes a new one). */
	if (from == DM_SLOT_NONE || m->epoch < e->join_epoch ||
	    (m->epoch == e->join_epoch && (m->serial == 0 || m->serial != e->incarnation)))
		return 0;
	restart_and_rejoin(e, peer);
	return 0;
}

/* A non-member talks to us as if it were one (§7.4, last paragraph). */
int
dm_membership_on_stranger(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	struct dm_msg *r;

	if (e->membership != DM_MEMBER_ACTIVE && e->membership != DM_MEMBER_LEAVING)
		return 0;
	r = dm_msg_begin(e, DM_MSG_REJOIN, NULL);
	flag_member(e, r);
	r->serial = m != NULL ? dm_msg_sender_incarnation(m) : 0;	/* the one we answer */
	send_to_name(e, peer, r);
	return 0;
}

void
dm_membership_stranger_linked(struct dm_engine *e, const char *peer)
{
	if (e->sponsoring && strcmp(peer, e->joiner) == 0)
		return;	/* our joiner: it gets its roster soon */
	dm_membership_on_stranger(e, peer, NULL);
}

/* --- Graceful removal (§7.3) --- */

/* Add (name, incarnation) to a ring of DM_NODES_MAX noted nodes. */
static void
note_node(struct dm_noted_node *ring, size_t *n, size_t *next, const char *peer,
    uint64_t incarnation)
{
	struct dm_noted_node *d = NULL;

	for (size_t i = 0; i < *n && d == NULL; i++)
		if (strcmp(ring[i].name, peer) == 0 && ring[i].incarnation == incarnation)
			d = &ring[i];
	if (d == NULL) {
		d = &ring[*next];
		*next = (*next + 1) % DM_NODES_MAX;
		if (*n < DM_NODES_MAX)
			(*n)++;
	}
	memset(d, 0, sizeof(*d));
	memcpy(d->name, peer, strnlen(peer, DM_NODE_NAME_MAX));
	d->incarnation = incarnation;
}

/* The roster arrived: erase the entries of members that left meanwhile. */
static void
departed_erase(struct dm_engine *e)
{
	for (size_t i = 0; i < e->n_departed; i++) {
		const struct dm_noted_node *d = &e->departed[i];
		dm_slot_t s = dm_roster_find(e, d->name, strlen(d->name));

		if (s != DM_SLOT_NONE && s != e->self && e->nodes[s].incarnation == d->incarnation)
			dm_roster_erase(e, s);
	}
	e->n_departed = 0;
	e->departed_next = 0;
}

/*
 * Leaving: joiners we refused while sponsoring another may know no member
 * but us; name another member to each.  Seed 101/6 (naimi-trehel, leave):
 * a sponsor busy with another join refused n0 (its only candidate), then
 * left; n0 asked the departed sponsor for ever ("n0 never became ready").
 * (Naming another member in every busy refusal fixed it too, but changed
 * joins under crashes and partitions; this changes only leaves.)
 */
static void
tell_refused_joiners(struct dm_engine *e)
{
	for (size_t i = 0; i < e->n_refused; i++) {
		struct dm_msg *r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);

		r->arg = EAGAIN;
		hint_other_member(e, r, e->refused[i].name);
		send_to_name(e, e->refused[i].name, r);
	}
	e->n_refused = 0;
	e->refused_next = 0;
}

static void
left(struct dm_engine *e)
{
	struct dm_effect fx = { .type = DM_FX_LEFT };

	e->membership = DM_MEMBER_LEFT;
	dm_timer_stop(e, &e->roster_timer);
	dm_timer_stop(e, &e->heartbeat_timer);
	dm_timer_stop(e, &e->lease_timer);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self) {
			struct dm_effect rm = { .type = DM_FX_PEER_REMOVE,
			    .u.peer = { .name = e->nodes[j].name, .address = e->nodes[j].address } };
			dm_emit(e, &rm);
		}
	dm_emit(e, &fx);
}

int
dm_roster_leave(struct dm_engine *e)
{
	/* "A node wishing to leave the group may do so by notifying all other
	 *  nodes of its intention.  The other nodes should acknowledge." */
	struct dm_msg *m;

	if (e->membership != DM_MEMBER_ACTIVE)
		return -EALREADY;
	e->membership = DM_MEMBER_LEAVING;
	sponsor_abort(e);	/* the joiner will ask another member */
	tell_refused_joiners(e);
	dm_local_lose_all(e, -ESHUTDOWN, true);
	memset(e->ack_waiting, 0, sizeof(e->ack_waiting));
	e->ack_waiting_n = 0;
	m = dm_msg_begin(e, DM_MSG_LEAVE, NULL);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self)
			continue;
		dm_bit_set(e->ack_waiting, j, true);
		e->ack_waiting_n++;
		dm_send(e, j, m);
	}
	if (e->ack_waiting_n == 0)
		left(e);
	else
		dm_timer_arm(e, &e->roster_timer, e->now + fail_silence(e));
	return 0;
}

static int
on_leave(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	/* "Each node checks to see if the departing node is listed in its NAMES
	 *  array, and if so, removes it ... a node awaiting a REPLY message from
	 *  a departing node should pretend the REPLY was received." */
	if (e->membership == DM_MEMBER_JOINING || e->membership == DM_MEMBER_RESTARTING) {
		/* Joining (or waiting to rejoin): the LEAVE of a member may
		 * come before our roster does, and the sponsor's snapshot,
		 * taken before it heard the LEAVE, may still list the leaver.
		 * Nobody would tell us again (a leave takes no new epoch, so
		 * the snapshot is not recognisably stale).  Acknowledge it as a
		 * member would, and erase the leaver when the roster arrives.
		 * Seed 517/6 (suzuki-kasami, leave): the LEAVE was dropped (the
		 * leaver was not listed yet); the joiner became READY listing
		 * it, and as the sponsor of the next join waited for its
		 * NODE_ADD_ACK for ever, holding the roster lock. */
		note_node(e->departed, &e->n_departed, &e->departed_next, peer,
		    dm_msg_sender_incarnation(m));
		if (from == DM_SLOT_NONE) {
			struct dm_msg *ack = dm_msg_begin(e, DM_MSG_LEAVE_ACK, NULL);
			send_to_name(e, peer, ack);
			return 0;
		}
	}
	if (from == DM_SLOT_NONE)
		return 0;
	send_simple(e, from, DM_MSG_LEAVE_ACK, 0, 0);
	/* The incarnation that left is gone for good (a leaver's process
	 * exits; it comes back only as a new incarnation): a sponsor's
	 * NODE_ADD of it sent again after this (its first copy's ack not yet
	 * in) must not add it back.  Naimi-Trehel 126138/11 (leaves): it
	 * did, and this node, as the next sponsor, sent NODE_ADD to the
	 * departed node for ever, holding the roster lock. */
	note_removed(e, from);
	if (e->sponsoring && strcmp(e->joiner, peer) == 0 &&
	    e->joiner_incarnation == e->nodes[from].incarnation) {
		/* The node we sponsor joined through another sponsor and now
		 * leaves.  Our join must not go on: with the roster lock it
		 * would add the leaver again, every member would list a node
		 * that is gone, and the next sponsor would wait for its
		 * NODE_ADD_ACK for ever, holding the roster lock (raymond
		 * 762126/15, leaves: no join finished again).  Erase first, so
		 * the abort cancels a NODE_ADD of ours already out. */
		sponsor_abort_erasing(e, from);
		return 0;
	}
	dm_roster_erase(e, from);
	return 0;
}

static int
on_leave_ack(struct dm_engine *e, dm_slot_t from)
{
	if (e->membership != DM_MEMBER_LEAVING || from == DM_SLOT_NONE ||
	    !dm_bit_get(e->ack_waiting, from))
		return 0;
	dm_bit_set(e->ack_waiting, from, false);
	if (--e->ack_waiting_n == 0)
		left(e);
	return 0;
}

/*
 * A member came back with a new incarnation, so the old one is dead.  Its
 * clients may still be stopping (D_stop) under a grant whose deadline runs
 * to its lease end, so under the majority policy the old incarnation is
 * condemned at once (no more lease acks) and erased only T_fail + D_lock
 * later, the same wait a majority removal implies.
 */
static void
condemn_restarted(struct dm_engine *e, dm_slot_t s)
{
	if (e->policy == DM_FAILURE_PAPER) {
		announce_failure(e, s);
		return;
	}
	if (e->nodes[s].remove_at != 0)
		return;
	e->nodes[s].condemned = true;
	e->nodes[s].remove_at = e->now + fail_silence(e) + e->lock_delay_ms;
	if (e->restart_timer.heap_index == 0 || e->restart_timer.at > e->nodes[s].remove_at)
		dm_timer_arm(e, &e->restart_timer, e->nodes[s].remove_at);
}

/* Start (or ask again) the removal votes due, one at a time: the entry
 * least recently voted on first, so one whose votes keep failing (alive to
 * the others) does not starve the rest. */
static void
start_due_votes(struct dm_engine *e, dm_slot_t *due, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && e->nodes[due[k]].vote_started_at <
		    e->nodes[due[k - 1]].vote_started_at; k--) {
			dm_slot_t t = due[k];
			due[k] = due[k - 1];
			due[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++)
		if (e->nodes[due[i]].used)
			dm_membership_vote_start(e, due[i]);
}

static void
restart_timer_fired(struct dm_engine *e)
{
	dm_slot_t due[DM_NODES_MAX];
	size_t n_due = 0;
	dm_msec_t next = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		dm_msec_t at = e->nodes[j].remove_at;
		if (at == 0 && e->nodes[j].vote_orphaned)
			at = e->now;	/* (see dm_membership_vote_orphaned) */
		if (at == 0)
			continue;
		if (at <= e->now && e->resumed_at != 0 &&
		    e->now < e->resumed_at + fail_silence(e)) {
			/* Just resumed from a freeze: the others may have removed
			 * us meanwhile (their word is on its way), so decide
			 * nothing alone for T_fail (seed 3000358/3). */
			at = e->resumed_at + fail_silence(e);
		} else if (at <= e->now) {
			/* A majority vote like any removal (the new incarnation
			 * votes for its old slot): a removal decided here alone
			 * took an epoch nobody had promised, and two members
			 * removing the same old incarnation (or a later vote)
			 * could pick the same epoch: a repeated fencing token
			 * (seed 8000988/8).  Asked again until erased. */
			if (e->membership == DM_MEMBER_ACTIVE)
				due[n_due++] = j;
			at = e->now + e->probe_timeout_ms;
		}
		if (next == 0 || at < next)
			next = at;
	}
	start_due_votes(e, due, n_due);
	if (next != 0)
		dm_timer_arm(e, &e->restart_timer, next);
}

int
dm_roster_remove_admin(struct dm_engine *e, const char *peer)
{
	dm_slot_t s = dm_roster_find(e, peer, strlen(peer));

	if (s == DM_SLOT_NONE)
		return -ENOENT;
	if (s == e->self)
		return -EINVAL;
	announce_failure(e, s);
	return 0;
}

void
dm_roster_restarted(struct dm_engine *e, const char *peer)
{
	/* The event does not say which incarnation came back, and our record
	 * may already be the new one (added by another sponsor), so it is only
	 * a hint: the restarted node's JOIN carries its incarnation and is
	 * judged exactly in on_join(). */
	dm_slot_t s = dm_roster_find(e, peer, strlen(peer));

	if (s != DM_SLOT_NONE && s != e->self)
		dm_log(e, DM_LOG_INFO, "peer restarted; its JOIN will replace it", NULL, s);
}

/* --- Insertion through a sponsor (§7.2) --- */

static void sponsor_candidate_add(struct dm_engine *e, const char *name, const char *address);

void
dm_membership_sponsor_hint(struct dm_engine *e, const char *peer)
{
	sponsor_candidate_add(e, peer, NULL);
}

static void
sponsor_candidate_add(struct dm_engine *e, const char *name, const char *address)
{
	for (size_t i = 0; i < e->n_sponsors; i++)
		if (strcmp(e->sponsors[i].name, name) == 0)
			return;
	if (e->n_sponsors >= DM_NODES_MAX)
		return;
	memset(&e->sponsors[e->n_sponsors], 0, sizeof(e->sponsors[0]));
	memcpy(e->sponsors[e->n_sponsors].name, name, strlen(name) + 1);
	if (address != NULL)
		memcpy(e->sponsors[e->n_sponsors].address, address, strlen(address) + 1);
	e->n_sponsors++;
}


int
dm_membership_join_cluster(struct dm_engine *e, const char *sponsor, const char *address)
{
	size_t nlen = sponsor != NULL ? strlen(sponsor) : 0;
	size_t alen = address != NULL ? strlen(address) : 0;

	if (sponsor == NULL || !dm_node_name_valid(sponsor, nlen) || alen == 0 || alen > DM_ADDRESS_MAX ||
	    strcmp(sponsor, e->nodes[e->self].name) == 0)
		return -EINVAL;
	if (e->membership != DM_MEMBER_ACTIVE || dm_roster_size(e) > 1)
		return -EISCONN;
	if (e->held_local > 0 || e->waiting_local > 0)
		return -EBUSY;
	/* A new identity, as for a rejoin: whatever a cluster may remember of
	 * a node of this name (it was removed, then ran alone) is another
	 * incarnation.  Fencing tokens go on from this node's highest, so no
	 * resource sees one go backwards. */
	e->incarnation += (uint64_t)1 << 48;
	e->nodes[e->self].incarnation = e->incarnation;
	e->incarnation_since = e->now;
	e->n_sponsors = 0;
	e->sponsor_next = 0;
	sponsor_candidate_add(e, sponsor, address);
	dm_membership_join_start(e);
	return 0;
}

void
dm_membership_join_start(struct dm_engine *e)
{
	/* "A new node should contact a 'sponsor' node which is already
	 *  participating in the group." */
	struct dm_effect add = { .type = DM_FX_PEER_ADD,
	    .u.peer = { .name = e->sponsor, .address = e->sponsor_address } };
	struct dm_msg *m;

	if (e->n_sponsors > 0) {
		/* Each attempt asks the next candidate. */
		const struct dm_sponsor *sp = &e->sponsors[e->sponsor_next++ % e->n_sponsors];
		memcpy(e->sponsor, sp->name, sizeof(e->sponsor));
		memcpy(e->sponsor_address, sp->address, sizeof(e->sponsor_address));
	}
	e->membership = DM_MEMBER_JOINING;
	dm_emit(e, &add);
	m = dm_msg_begin(e, DM_MSG_JOIN, NULL);
	set_subject(m, &e->nodes[e->self]);
	send_to_name(e, e->sponsor, m);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
}

/*
 * The joiner we sponsor was answered for the incarnation of its JOIN.  If
 * its name then speaks with another incarnation (heartbeats, requests: it
 * restarted and joined through another sponsor), or a member's NODE_ADD
 * names another incarnation of it, our JOIN may be stale, and a NODE_ADD
 * from us would make every member (and us, at the finish) erase the live
 * entry, i.e. take its replies as given (seed 8000024/8: a member entered
 * while the live node, whose request had priority, held the lock).
 * Incarnations are random, so nothing says which one is newer: the join
 * is given up before any NODE_ADD goes out (JOIN_REFUSED).  A live joiner
 * retries; its JOIN then condemns the other entry, which is erased only
 * after T_fail + D_lock.  (JOIN is judged in on_join; messages with a
 * subject carry the subject's incarnation, so only these kinds count.)
 */
void
dm_membership_note_sender(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	bool senders_own = m->kind >= DM_MSG_ALGO_BASE || m->kind == DM_MSG_HEARTBEAT ||
	    m->kind == DM_MSG_HEARTBEAT_ACK || m->kind == DM_MSG_SEQ_QUERY ||
	    m->kind == DM_MSG_NODE_ADD_ACK;

	if (e->sponsoring && senders_own && m->incarnation != 0 &&
	    m->incarnation != e->joiner_incarnation && strcmp(peer, e->joiner) == 0)
		e->joiner_superseded = true;
}

static void
sponsor_send_roster(struct dm_engine *e)
{
	/* "initialize the new node's participant list from its own" */
	struct dm_msg *m;
	uint64_t count = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (e->nodes[j].name_len == strlen(e->joiner) &&
		    memcmp(e->nodes[j].name, e->joiner, e->nodes[j].name_len) == 0)
			continue;
		m = dm_msg_begin(e, DM_MSG_ROSTER_ENTRY, NULL);
		set_subject(m, &e->nodes[j]);
		send_to_name(e, e->joiner, m);
		count++;
	}
	m = dm_msg_begin(e, DM_MSG_ROSTER_END, NULL);
	m->arg = count;
	m->serial = e->joiner_incarnation;	/* for that incarnation only */
	m->seq = e->algo->clock_get(e);
	send_to_name(e, e->joiner, m);
}

static void
sponsor_finish(struct dm_engine *e)
{
	struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);

	/* Only a member holding the roster lock granted by the current
	 * members may hand out the roster. */
	if (e->membership != DM_MEMBER_ACTIVE || l == NULL || l->phase != DM_PHASE_HOLDING)
		return;
	if (e->joiner_superseded) {
		sponsor_abort(e);	/* (see dm_membership_note_sender()) */
		return;
	}

	{
		dm_slot_t old = dm_roster_find(e, e->joiner, strlen(e->joiner));
		if (old != DM_SLOT_NONE && e->nodes[old].incarnation != e->joiner_incarnation) {
			/* Our entry is an older incarnation (another sponsor added
			 * it from a stale JOIN, or it is condemned): replace it
			 * as every member did on our NODE_ADD, or its pending
			 * restart removal would later erase the live joiner here
			 * alone. */
			e->sponsoring = false;	/* (no nested finish from the erase) */
			dm_roster_erase(e, old);
			e->sponsoring = true;
			old = DM_SLOT_NONE;
		}
		if (old == DM_SLOT_NONE) {
			dm_roster_add_member(e, e->joiner, e->joiner_address,
			    e->joiner_incarnation, true);
			lease_on_growth(e);
		}
	}
	sponsor_send_roster(e);
	memcpy(e->last_joined, e->joiner, sizeof(e->last_joined));
	e->last_joined_incarnation = e->joiner_incarnation;
	e->sponsoring = false;
	e->joiner[0] = '\0';
	dm_timer_stop(e, &e->roster_timer);
	if (l != NULL && l->phase != DM_PHASE_IDLE) {
		/* "... before releasing mutual exclusion." */
		if (l->phase == DM_PHASE_HOLDING)
			e->algo->release(e, l);
		else
			e->algo->withdraw(e, l);
		l->phase = DM_PHASE_IDLE;
		dm_lock_maybe_free(e, l);
	}
}

static void
sponsor_broadcast_add(struct dm_engine *e)
{
	struct dm_msg *m = dm_msg_begin(e, DM_MSG_NODE_ADD, NULL);

	m->node_len = (uint8_t)strlen(e->joiner);
	memcpy(m->node, e->joiner, m->node_len + 1u);
	m->address_len = (uint8_t)strlen(e->joiner_address);
	memcpy(m->address, e->joiner_address, m->address_len + 1u);
	m->incarnation = e->joiner_incarnation;
	m->serial = e->join_serial;
	set_sender(e, m);
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(e->ack_waiting, j))
			dm_send(e, (dm_slot_t)j, m);
}

/* The sponsor holds the roster lock: "broadcast the new node's identity". */
void
dm_roster_lock_permitted(struct dm_engine *e, struct dm_lock *l)
{
	if (!e->sponsoring || e->membership != DM_MEMBER_ACTIVE) {
		e->algo->release(e, l);
		l->phase = DM_PHASE_IDLE;
		dm_lock_maybe_free(e, l);
		return;
	}
	memset(e->ack_waiting, 0, sizeof(e->ack_waiting));
	e->ack_waiting_n = 0;
	if (e->joiner_superseded) {
		/* A stale JOIN: give it up before any NODE_ADD goes out; a live
		 * joiner retries (see dm_membership_note_sender()). */
		sponsor_abort(e);
		return;
	}
	/* Even if the joiner is already in our roster (another sponsor's
	 * NODE_ADD), every member must confirm it knows the joiner before the
	 * roster goes out; those that know it just acknowledge. */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || strcmp(e->nodes[j].name, e->joiner) == 0)
			continue;
		dm_bit_set(e->ack_waiting, j, true);
		e->ack_waiting_n++;
	}
	if (e->ack_waiting_n == 0) {
		sponsor_finish(e);
		return;
	}
	sponsor_broadcast_add(e);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
}

/* The roster grows past one node: grants made alone carried no deadline.
 * Nobody can agree to remove us before T_fail of silence counted from now
 * (members start counting when they add us), so a lease to now + L is safe;
 * heartbeats extend it from here. */
static void
lease_on_growth(struct dm_engine *e)
{
	if (e->n_nodes != 2 || e->policy != DM_FAILURE_MAJORITY || e->held_local == 0 ||
	    (e->breakage & DM_BREAK_NO_LEASE) || e->lease_until >= e->now + e->lease_ms)
		return;
	e->lease_until = e->now + e->lease_ms;
	e->lease_epoch = e->epoch;
	dm_timer_arm(e, &e->lease_timer, e->lease_until);
	dm_local_extend_all(e);
	dm_lease_activity(e);
}

static int
on_join(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	struct dm_msg *r;
	struct dm_lock *l;

	if (m->node_len == 0 || strcmp(m->node, peer) != 0)
		return -EPROTO;
	if (e->membership == DM_MEMBER_ACTIVE && from != DM_SLOT_NONE &&
	    e->nodes[from].incarnation != m->incarnation) {
		/* §7.2.1: the old incarnation failed; remove it first (whatever
		 * else we are doing: a join we sponsor may be waiting on it), and
		 * let the new one retry until then. */
		condemn_restarted(e, from);
		from = dm_roster_find(e, peer, strlen(peer));
	}
	if (e->membership == DM_MEMBER_ACTIVE && from == DM_SLOT_NONE &&
	    incarnation_removed(e, peer, m->incarnation)) {
		/* An incarnation we removed: it is dead for good here (see
		 * note_removed()), so we add it back neither as its sponsor nor
		 * on another's NODE_ADD.  Told of its removal, the joiner
		 * starts again under a new incarnation (spent_incarnation()). */
		r = dm_msg_begin(e, DM_MSG_NODE_FAILED, NULL);
		r->node_len = m->node_len;
		memcpy(r->node, m->node, m->node_len + 1u);
		r->incarnation = m->incarnation;
		set_sender(e, r);
		send_to_name(e, peer, r);
		return 0;
	}
	if (e->membership == DM_MEMBER_ACTIVE && from != DM_SLOT_NONE &&
	    e->nodes[from].incarnation == m->incarnation && !e->sponsoring &&
	    strcmp(e->last_joined, peer) == 0 && e->last_joined_incarnation == m->incarnation) {
		/* A retry after we finished this join: every member had
		 * acknowledged it, so the roster may go out again.  (A member
		 * that merely acknowledged someone else's NODE_ADD cannot know
		 * that; it sponsors the join again below instead.) */
		memcpy(e->joiner, peer, strlen(peer) + 1);
		e->joiner_incarnation = m->incarnation;
		sponsor_send_roster(e);
		e->joiner[0] = '\0';
		return 0;
	}
	if (e->membership != DM_MEMBER_ACTIVE ||
	    (from != DM_SLOT_NONE && e->nodes[from].incarnation != m->incarnation) ||
	    (e->sponsoring && strcmp(e->joiner, peer) != 0)) {
		r = dm_msg_begin(e, DM_MSG_JOIN_REFUSED, NULL);
		r->arg = EAGAIN;
		flag_member(e, r);
		if (e->membership == DM_MEMBER_ACTIVE && e->sponsoring &&
		    strcmp(e->joiner, peer) != 0)
			note_node(e->refused, &e->n_refused, &e->refused_next, peer,
			    m->incarnation);	/* told where to go when we leave */
		if (e->membership == DM_MEMBER_LEAVING) {
			/* We are leaving for good: point at a member that stays,
			 * or a joiner that knows only us asks us for ever (rcv
			 * seed 1140/5, leave: it restarted through us just
			 * before we left).  Joiners refused earlier, while we
			 * were busy: tell_refused_joiners(). */
			hint_other_member(e, r, peer);
		} else if (e->membership != DM_MEMBER_ACTIVE && e->sponsor[0] != '\0' &&
		    strcmp(e->sponsor, peer) != 0) {
			/* Not a member (we are joining too, e.g. we restarted):
			 * point at the sponsor we ask, or joiners that only know
			 * us wait on each other for ever (seed 798/7, crashes). */
			r->node_len = (uint8_t)strlen(e->sponsor);
			memcpy(r->node, e->sponsor, r->node_len + 1u);
			r->address_len = (uint8_t)strlen(e->sponsor_address);
			memcpy(r->address, e->sponsor_address, r->address_len + 1u);
		}
		send_to_name(e, peer, r);
		return 0;
	}
	if (e->sponsoring) {
		/* Already working on it; but a JOIN from a newer incarnation of the
		 * same joiner (it restarted meanwhile) must not get the roster
		 * meant for the old one. */
		if (m->incarnation != e->joiner_incarnation) {
			struct dm_lock *rl = dm_lock_get(e, DM_ROSTER_LOCK,
			    strlen(DM_ROSTER_LOCK), false);
			if (rl != NULL && rl->phase == DM_PHASE_HOLDING)
				sponsor_abort(e);	/* NODE_ADD went out: start over */
			else {
				e->joiner_incarnation = m->incarnation;
				e->joiner_superseded = false;
			}
		}
		return 0;
	}
	memcpy(e->joiner, peer, strlen(peer) + 1);
	memcpy(e->joiner_address, m->address, m->address_len + 1u);
	e->joiner_incarnation = m->incarnation;
	e->joiner_superseded = false;
	e->join_serial++;
	e->sponsoring = true;
	/* "The sponsor should then invoke mutual exclusion" on the roster lock. */
	l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), true);
	if (l == NULL) {
		e->sponsoring = false;
		return -ENOMEM;
	}
	if (l->phase != DM_PHASE_IDLE)
		return 0;
	l->phase = DM_PHASE_REQUESTING;
	l->node_mode = DM_MODE_EXCLUSIVE;
	dm_lease_activity(e);
	return e->algo->request(e, l, DM_MODE_EXCLUSIVE, false);
}

/*
 * Joining: does NODE_ADD m of another incarnation replace entry old, whose
 * sender we do not list yet?  Only an entry no snapshot confirmed (an
 * earlier NODE_ADD's: a joiner's roster is provisional, the rule against
 * unlisted senders protects members' entries) and only for an add made at
 * a higher roster epoch: the old incarnation's removal lies in between.
 * (Incarnations are not ordered; a dead one's NODE_ADD delayed past the
 * live one's carries the older epoch and changes nothing.)  Naimi-Trehel
 * 778808/9 (crashes): n5, joining for 875 ms, took n1's NODE_ADD of n0
 * inc 3 (epoch 5); n0 inc 3 died and was removed, no NODE_FAILED reached
 * the joiner; n3's NODE_ADD of n0 inc 5 (epoch 15) came before n5 listed
 * n3 and was acknowledged but not applied.  n5 became a member listing the
 * dead inc 3, dropped every message of the live n0 as another
 * incarnation's, and in the two-member roster left later nobody could
 * remove the dead entry: n0's lock request waited for ever.
 */
static bool
joiner_entry_superseded(const struct dm_engine *e, dm_slot_t old, const struct dm_msg *m)
{
	return e->membership == DM_MEMBER_JOINING && e->nodes[old].via_add &&
	    !e->nodes[old].from_snapshot && m->epoch > e->nodes[old].via_add_epoch;
}

static int
on_node_add(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *m)
{
	/* "Each node receiving this notification adds the new node number to its
	 *  NAMES array and increments N." */
	int r;

	if (m->node_len == 0)
		return -EPROTO;
	if (m->epoch < e->rx_epoch_before) {
		/* The sponsor's roster is older than a removal we know of (e.g.
		 * a removed sponsor's NODE_ADD delayed by a pause: RCV-E2, rcv
		 * seed 190/7).  Not applied and not acknowledged; the answer
		 * (serial 0) carries our epoch, so a live sponsor catches up
		 * and its retry is taken. */
		struct dm_msg *nack = dm_msg_begin(e, DM_MSG_NODE_ADD_ACK, NULL);
		nack->serial = 0;
		send_to_name(e, peer, nack);
		return 0;
	}
	if (strcmp(m->node, e->nodes[e->self].name) != 0 &&
	    !incarnation_removed(e, m->node, m->incarnation)) {	/* (see note_removed) */
		dm_slot_t old = dm_roster_find(e, m->node, m->node_len);

		if (from != DM_SLOT_NONE && e->sponsoring && strcmp(e->joiner, m->node) == 0 &&
		    m->incarnation != e->joiner_incarnation)
			e->joiner_superseded = true;	/* which one lives?  Give ours up */
		/* A non-member (e.g. removed while it was sponsoring) may not
		 * make us erase a member's entry (seed 2709/6: two holders); it
		 * still gets its ack, or it would wait for it for ever. */
		if (old != DM_SLOT_NONE && e->nodes[old].incarnation != m->incarnation &&
		    from == DM_SLOT_NONE && !joiner_entry_superseded(e, old, m))
			old = DM_SLOT_NONE;	/* (the add below finds it: EEXIST) */
		if (old != DM_SLOT_NONE && e->nodes[old].incarnation != m->incarnation) {
			/* A new incarnation: the sponsor already removed the old one
			 * (after the restart wait); we may not have heard yet.  The
			 * live one may hold what we ask for (dm_roster_replace). */
			r = dm_roster_replace(e, old, m->node, m->address, m->incarnation);
		} else if (old == DM_SLOT_NONE && name_removed(e, m->node)) {
			r = dm_roster_add_returning(e, m->node, m->address, m->incarnation);
		} else
			r = dm_roster_add_member(e, m->node, m->address, m->incarnation, true);
		if (r < 0 && r != -EEXIST)
			return r;
		dm_slot_t added = dm_roster_find(e, m->node, m->node_len);
		if (added != DM_SLOT_NONE && e->nodes[added].incarnation == m->incarnation) {
			/* The latest add of this incarnation; only its sponsor
			 * may cancel it -- and none may once two sponsors added
			 * it: a sponsor that gave up (left) may have its add and
			 * cancel arrive after another sponsor's add that finished
			 * the join (rcv seed 2341/6, leave: the joiner erased at
			 * one member only, rosters differ for good).  Should no
			 * add finish, the joiner's retry or failure detection
			 * settles the entry. */
			if (e->nodes[added].added_by != DM_SLOT_NONE && e->nodes[added].added_by != from)
				e->nodes[added].added_twice = true;
			e->nodes[added].added_by = from;
			e->nodes[added].added_serial = m->serial;
			if (r == 0 && e->membership == DM_MEMBER_JOINING) {
				e->nodes[added].via_add = true;	/* newer than the snapshot */
				e->nodes[added].via_add_epoch = m->epoch;
			}
		}
	}
	{
		struct dm_msg *ack = dm_msg_begin(e, DM_MSG_NODE_ADD_ACK, NULL);
		ack->serial = m->serial;
		send_to_name(e, peer, ack);
	}
	return 0;
}

static int
on_node_add_ack(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (!e->sponsoring || from == DM_SLOT_NONE || m->serial != e->join_serial ||
	    !dm_bit_get(e->ack_waiting, from))
		return 0;
	dm_bit_set(e->ack_waiting, from, false);
	if (--e->ack_waiting_n == 0)
		sponsor_finish(e);
	return 0;
}

/* Joining: entries taken from the sponsor's roster snapshot so far. */
static size_t
snapshot_count(const struct dm_engine *e)
{
	size_t n = 0;

	for (size_t i = 0; i < DM_NODES_MAX; i++)
		n += e->nodes[i].used && e->nodes[i].from_snapshot;
	return n;
}

/* Joining: drop the snapshot entries taken so far, or (all) every entry
 * but ours; those a NODE_ADD also told us stay (their sponsors counted our
 * ack). */
static void
snapshot_discard(struct dm_engine *e, bool all)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self || (!all && !e->nodes[j].from_snapshot))
			continue;
		if (e->nodes[j].via_add)
			e->nodes[j].from_snapshot = false;
		else
			dm_roster_erase(e, j);
	}
	e->snapshot_from[0] = '\0';
}

/* Roster messages are taken from the sponsor asked last, or from an earlier
 * candidate that is answering an earlier JOIN (it becomes the sponsor).
 * Entries of another sponsor's snapshot taken before we moved on to this
 * one are dropped: raymond 725767/8 (crashes), n3 had taken n0's entry for
 * n0's dead incarnation from an earlier snapshot, moved on to n6 in the
 * middle of n6's snapshot (whose entries for n6 and n0 it had dropped as
 * not its sponsor's), and n6's ROSTER_END counted the mixture as complete:
 * n3 became a member listing n0's dead incarnation and never acknowledged
 * the live one, the coordinator, again. */
static bool
roster_from_sponsor(struct dm_engine *e, const char *peer)
{
	if (strcmp(peer, e->sponsor) == 0) {
		if (e->snapshot_from[0] != '\0' && strcmp(e->snapshot_from, peer) != 0)
			snapshot_discard(e, false);
		return true;
	}
	for (size_t i = 0; i < e->n_sponsors; i++)
		if (strcmp(peer, e->sponsors[i].name) == 0) {
			if (snapshot_count(e) > 0)
				return false;	/* already taking another sponsor's roster */
			memcpy(e->sponsor, e->sponsors[i].name, sizeof(e->sponsor));
			memcpy(e->sponsor_address, e->sponsors[i].address,
			    sizeof(e->sponsor_address));
			return true;
		}
	return false;
}

static void
snapshot_note_sponsor(struct dm_engine *e, const char *peer)
{
	memcpy(e->snapshot_from, peer, strnlen(peer, DM_NODE_NAME_MAX));
	e->snapshot_from[strnlen(peer, DM_NODE_NAME_MAX)] = '\0';
}

static int
on_roster_entry(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	dm_slot_t s;

	if ((e->membership != DM_MEMBER_JOINING) || !roster_from_sponsor(e, peer))
		return 0;
	if (m->node_len == 0)
		return -EPROTO;
	if (m->epoch < e->epoch)
		return 0;	/* a roster from before a removal we have heard of */
	if (strcmp(m->node, e->nodes[e->self].name) == 0)
		return 0;
	s = dm_roster_find(e, m->node, m->node_len);
	if (s != DM_SLOT_NONE) {
		/* Known provisionally (it talked to us first), or from a
		 * NODE_ADD: complete it.  The snapshot's incarnation wins
		 * (nothing says which of two incarnations is newer, and the
		 * snapshot is what every member acknowledged). */
		bool had_address = e->nodes[s].address[0] != '\0';
		memcpy(e->nodes[s].address, m->address, m->address_len + 1u);
		if (e->nodes[s].incarnation != m->incarnation)
			e->nodes[s].via_add = false;
		e->nodes[s].incarnation = m->incarnation;
		e->nodes[s].from_snapshot = true;
		snapshot_note_sponsor(e, peer);
		if (!had_address && m->address_len > 0) {
			struct dm_effect fx = { .type = DM_FX_PEER_ADD,
			    .u.peer = { .name = e->nodes[s].name, .address = e->nodes[s].address } };
			dm_emit(e, &fx);
		}
		return 0;
	}
	if (dm_roster_add_member(e, m->node, m->address, m->incarnation, true) == -ENOSPC)
		return -EPROTO;
	s = dm_roster_find(e, m->node, m->node_len);
	if (s != DM_SLOT_NONE) {
		e->nodes[s].from_snapshot = true;
		snapshot_note_sponsor(e, peer);
	}
	return 0;
}

static void
sync_query(struct dm_engine *e)
{
	struct dm_msg *m = dm_msg_begin(e, DM_MSG_SEQ_QUERY, NULL);

	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(e->seq_waiting, j))
			dm_send(e, (dm_slot_t)j, m);
}

/*
 * Still syncing: a member we wait for has said nothing for T_fail since we
 * listed it (or last heard it).  It may have left or crashed before our
 * roster came (a snapshot or NODE_ADD can list a node that is gone, and a
 * LEAVE sent before it listed us never reaches us), and nobody else has a
 * reason to ask about it: failure detection runs on demand.  Suspect it
 * as a member would; the majority decides, and its removal (or the answer
 * it still gives) ends our wait.  Every fault kind in one run, 5 of 5,000
 * seeds on 0df15be's engine (RA 105/6 and kin): a joiner asked a departed
 * member for its sequence number for ever and never became READY.
 */
static void
sync_suspect_silent(struct dm_engine *e)
{
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != e->self && dm_bit_get(e->seq_waiting, j) && silent_long_enough(e, j)) {
			dm_roster_suspect(e, j);
			return;		/* one removal at a time */
		}
}

static int
on_roster_end(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	/* §7.2.3 method 1: "Ask all other nodes for their Highest_Sequence_Number
	 *  and use the largest." */
	if (e->membership != DM_MEMBER_JOINING || !roster_from_sponsor(e, peer))
		return 0;
	if (m->serial != e->incarnation || m->epoch < e->epoch ||
	    snapshot_count(e) != m->arg ||
	    (m->arg > 0 && strcmp(e->snapshot_from, peer) != 0)) {
		/* (or some entries were not taken: e.g. they came from a
		 * candidate before we moved on to another) */
		/* Meant for an earlier incarnation of ours, or older than a
		 * removal we have heard of: start over, keeping what NODE_ADDs
		 * told us. */
		snapshot_discard(e, true);
		return 0;
	}
	e->snapshot_from[0] = '\0';
	/* Members added by NODE_ADDs that overtook the snapshot (a sponsor
	 * that got the roster lock after ours released it) stay: we
	 * acknowledged them, so their sponsors count on us knowing them
	 * (PERM-4: dropping them left us answering their requests with
	 * REJOIN, which they ignore, for ever). */
	for (size_t j = 0; j < DM_NODES_MAX; j++) {
		e->nodes[j].from_snapshot = false;
		e->nodes[j].via_add = false;
	}
	e->algo->clock_merge(e, m->seq);
	if (m->epoch > e->epoch)
		e->epoch = m->epoch;
	e->join_epoch = e->epoch;
	departed_erase(e);
	e->membership = DM_MEMBER_SYNCING;
	memset(e->seq_waiting, 0, sizeof(e->seq_waiting));
	e->seq_waiting_n = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (j == e->self)
			continue;
		dm_bit_set(e->seq_waiting, j, true);
		e->seq_waiting_n++;
	}
	if (e->seq_waiting_n == 0) {
		dm_timer_stop(e, &e->roster_timer);
		membership_ready(e);
		return 0;
	}
	sync_query(e);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
	return 0;
}

static int
on_seq_query(struct dm_engine *e, dm_slot_t from, const char *peer, const struct dm_msg *q)
{
	struct dm_msg *m;

	/* §7.2.3: whoever answers a new node's Highest_Sequence_Number must
	 * count it in every request from then on, or the new node's first
	 * request may tie with one of ours that never asked it, win on the
	 * name, and both enter.  A member that does not list the querier
	 * (it acknowledged the NODE_ADD without taking it: an incarnation
	 * it had removed, note_removed()) tells it to start again instead.
	 * Ricart-Agrawala 276216/9 (partition): n6 had removed n3's
	 * incarnation, n2 (which had not heard) added it again and finished
	 * the join; n6 answered n3's query, then asked n0-n2 only for
	 * lock/a; n3's shared request tied its sequence number and won on
	 * the name: two holders with the same fencing token. */
	if (from == DM_SLOT_NONE && e->membership != DM_MEMBER_JOINING &&
	    e->membership != DM_MEMBER_RESTARTING)
		return dm_membership_on_stranger(e, peer, q);
	m = dm_msg_begin(e, DM_MSG_SEQ_ANSWER, NULL);
	m->seq = e->algo->clock_get(e);
	send_to_name(e, peer, m);
	return 0;
}

static int
on_seq_answer(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (e->membership != DM_MEMBER_SYNCING || from == DM_SLOT_NONE ||
	    !dm_bit_get(e->seq_waiting, from))
		return 0;
	e->algo->clock_merge(e, m->seq);
	dm_bit_set(e->seq_waiting, from, false);
	if (--e->seq_waiting_n == 0) {
		dm_timer_stop(e, &e->roster_timer);
		membership_ready(e);
	}
	return 0;
}

/* A member went away: an ack or answer we waited for may be all we need. */
void
dm_membership_progress(struct dm_engine *e)
{
	if (e->membership == DM_MEMBER_LEAVING && e->ack_waiting_n == 0)
		left(e);
	else if (e->membership == DM_MEMBER_SYNCING && e->seq_waiting_n == 0) {
		dm_timer_stop(e, &e->roster_timer);
		membership_ready(e);
	} else if (e->membership == DM_MEMBER_ACTIVE && e->sponsoring && e->ack_waiting_n == 0) {
		struct dm_lock *l = dm_lock_get(e, DM_ROSTER_LOCK, strlen(DM_ROSTER_LOCK), false);
		if (l != NULL && l->phase == DM_PHASE_HOLDING)
			sponsor_finish(e);
	}
}

int
dm_membership_receive(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	if (e->membership == DM_MEMBER_LEFT)
		return 0;
	switch (m->kind) {
	case DM_MSG_JOIN:
		return on_join(e, from, peer, m);
	case DM_MSG_ROSTER_ENTRY:
		return on_roster_entry(e, peer, m);
	case DM_MSG_ROSTER_END:
		return on_roster_end(e, peer, m);
	case DM_MSG_NODE_ADD:
		return on_node_add(e, from, peer, m);
	case DM_MSG_NODE_ADD_ACK:
		return on_node_add_ack(e, from, m);
	case DM_MSG_SEQ_QUERY:
		return on_seq_query(e, from, peer, m);
	case DM_MSG_SEQ_ANSWER:
		return on_seq_answer(e, from, m);
	case DM_MSG_LEAVE:
		return on_leave(e, from, peer, m);
	case DM_MSG_LEAVE_ACK:
		return on_leave_ack(e, from);
	case DM_MSG_SUSPECT:
		return on_suspect(e, from, peer, m);
	case DM_MSG_SUSPECT_VOTE:
		return on_suspect_vote(e, from, m);
	case DM_MSG_SUSPECT_ABORT:
		return on_suspect_abort(e, from, m);
	case DM_MSG_NODE_FAILED:
		return on_node_failed(e, from, peer, m);
	case DM_MSG_REJOIN:
		return on_rejoin(e, from, peer, m);
	case DM_MSG_JOIN_REFUSED:
		/* Retried on the roster timer; a hint names another sponsor. */
		if (e->membership != DM_MEMBER_JOINING)
			return 0;
		if (m->node_len > 0 && strcmp(m->node, e->nodes[e->self].name) != 0)
			sponsor_candidate_add(e, m->node, m->address);
		if (e->n_sponsors > 1 && strcmp(peer, e->sponsor) == 0)
			dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e) / 4);
		return 0;
	default:
		return -EPROTO;
	}
}

void
dm_roster_timer(struct dm_engine *e, struct dm_timer *t)
{
	if (t == &e->heartbeat_timer) {
		dm_lease_heartbeat_timer(e);
		return;
	}
	if (t == &e->lease_timer) {
		dm_lease_timer(e);
		return;
	}
	if (t == &e->restart_timer) {
		restart_timer_fired(e);
		return;
	}
	if (t == &e->vote_timer) {
		if (e->vote_subject != DM_SLOT_NONE && (size_t)e->vote_yes * 2 > e->n_nodes)
			vote_commit(e);
		return;
	}
	switch (e->membership) {
	case DM_MEMBER_RESTARTING:
		dm_membership_join_start(e);
		break;
	case DM_MEMBER_JOINING:
		dm_membership_join_start(e);
		break;
	case DM_MEMBER_SYNCING:
		sync_query(e);
		sync_suspect_silent(e);
		if (e->membership != DM_MEMBER_SYNCING)
			break;		/* (the removal ended the wait) */
		dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
		break;
	case DM_MEMBER_LEAVING:
		left(e);	/* acks overdue: the others will detect our absence */
		break;
	case DM_MEMBER_ACTIVE:
		if (e->sponsoring && e->ack_waiting_n > 0) {
			sponsor_broadcast_add(e);
			dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
		}
		break;
	default:
		break;
	}
}
