/*
 * dm_membership_vote.c: the majority-confirmed removal of failure_policy
 * = majority -- SUSPECT ballots at an epoch above every one promised,
 * SUSPECT_VOTE and SUSPECT_ABORT, which members' leases a vote condemns,
 * and the removal votes on restarted (condemned) incarnations.
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

/*
 * Another incarnation speaks under a listed member's name, not as a joiner
 * (its JOIN condemns the listed one in dm_membership_on_join), while the
 * listed one has been silent for T_fail: the listed one is dead and nothing
 * else may ever ask about it -- failure detection runs on demand, and this
 * node drops every message of the live one.  Suspect it; the majority vote
 * decides as for any silent member (voters that list the live incarnation
 * agree at once).  Hierarchical bully 1527/8 and 2364/5, crashes: a joining
 * node kept a restarted peer's old incarnation (the new one's NODE_ADD came
 * from a sender it did not list yet, and the snapshot did not name the
 * peer); once READY it ignored the live incarnation's Enter_Election for
 * ever.
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
		dm_membership_announce_failure_at(e, s, e->vote_epoch);
}

/* D_lock has passed since our vote won: commit it. */
void
dm_membership_vote_timer(struct dm_engine *e)
{
	if (e->vote_subject != DM_SLOT_NONE && (size_t)e->vote_yes * 2 > e->n_nodes)
		vote_commit(e);
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
	 * votes for its old slot (see dm_membership_on_suspect), so a
	 * two-member roster, or one where several members restarted, can
	 * still remove the dead entries by majority. */
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

/*
 * Two probers proposed removal ballots at the same epoch: which of a and b
 * wins (the other gives way)?  Both must answer alike, and the answer must
 * change from one epoch to the next.  It used to be the larger name at
 * every epoch; probers whose timers run in step tie round after round, and
 * when the larger one could never win (its roster listed more silent
 * members than the other's: an add by a sponsor removed mid-add reached it
 * alone) the smaller, which could, gave way for ever (hierarchical
 * 776716/13; test_probers_in_step_let_the_one_that_can_win_win).  Now the
 * epoch's hash picks the larger or the smaller name, so among several tied
 * probers one order holds at each epoch and either wins within a few
 * rounds.
 */
static dm_slot_t
tie_goes_to(const struct dm_engine *e, uint64_t epoch, dm_slot_t a, dm_slot_t b)
{
	bool larger = dm_roster_compare(e, a, b) > 0;

	return (dm_mix64(epoch) & 1) == larger ? a : b;
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

int
dm_membership_on_suspect(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
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

	bool member = dm_membership_holds_roster(e);

	if (s == e->self || !member) {
		/* The prober lists an earlier incarnation of ours (we restarted,
		 * or we were removed and are rejoining) and we vote for that
		 * slot, under the same ballot rule; it counts our vote only if
		 * it knows we restarted (see dm_membership_on_suspect_vote).
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
		/* The three refusals below guard against a stale prober
		 * (DM_BREAK_STALE_ROSTER turns them off for a negative
		 * control). */
		bool guarded = !dm_broken(e, DM_BREAK_STALE_ROSTER);
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
		if (guarded && m->epoch < e->member_epoch && e->now < e->member_epoch_at + fail_silence(e))
			agree = false;
		/* The same by roster label (rule 9): a removed node learns the
		 * cluster's epoch from any message that reaches it (tokens
		 * must never go back), so its epoch can match the cluster's
		 * while its roster is the stale one (raymond 101734/7, crash
		 * and partition: n4, removed at label 13 while cut off, learned
		 * epoch 13 from a member's messages, then removed its label-2
		 * roster's restarted members by their new incarnations' votes
		 * beside n5's label-13 cluster, and the two granted one token). */
		if (guarded && m->roster_epoch < e->member_label && e->now < e->member_label_at + fail_silence(e))
			agree = false;
		/* The membership record (dm_member_record.c): never help a
		 * prober that an earlier process of ours saw removed (or
		 * agreed to remove) rebuild its stale roster, seed 1952/5. */
		if (guarded && dm_record_saw_removed(e, peer, dm_msg_sender_incarnation(m), m->roster_epoch)) {
			agree = false;
			dm_record_warn_refusal(e, peer);
		}
		/* The self-vote promise (dm_member_record.c): an earlier
		 * self-vote of ours let a prober at a roster label this one
		 * has not passed go on without our old incarnation, so we vote
		 * on no other slot for it (4982/5, 19161/6).  Our own slot we
		 * still give up to anyone: that vote agrees with the promise,
		 * and refusing it left a roster whose prober crashed before
		 * its commit with no way on (2637/6, crashes alone).  Ours, if
		 * we agree, goes on disk before it leaves. */
		if (guarded && s != e->self && dm_record_promise_refuses(e, peer, m->roster_epoch))
			agree = false;
		if (agree && s == e->self)
			dm_record_self_vote(e, peer, m->roster_epoch);
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
	 * one gives way (it drops its own vote, so it can never decide that
	 * epoch itself), chosen by tie_goes_to() from the epoch and the two
	 * names, the same at both ends. */
	bool tie = m->arg == e->promised_epoch && m->arg > e->epoch &&
	    e->vote_subject != DM_SLOT_NONE && e->vote_epoch == m->arg &&
	    tie_goes_to(e, m->arg, from, e->self) == from;
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
	/* Our agreement goes on disk before the vote leaves: a later process
	 * of ours must not help the subject rebuild the roster it is being
	 * removed from (dm_member_record.c).  (Not about an incarnation
	 * already replaced: its name now belongs to a live member.) */
	if (agree && s != DM_SLOT_NONE && !replaced && dm_record_agree(e, e->nodes[s].name, m->arg) < 0)
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

int
dm_membership_on_suspect_abort(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
{
	if (from != DM_SLOT_NONE && e->nodes[from].joined_vote_serial == m->serial)
		e->nodes[from].joined_vote_subject = DM_SLOT_NONE;
	/* It will never commit the vote: a self-vote we gave it no longer
	 * holds a prober at its roster label off (dm_record_promise_void()).
	 * A prober gives way to a rival's ballot, and the rival is often at
	 * the same label; held off, it waited for the first prober's next
	 * vote (for good if that one crashed: raymond 1213/6 and 367/8, crash
	 * and leave, when every vote of a restarted process made a promise,
	 * NOTES.md "Session 29"). */
	dm_record_promise_void(e, peer);
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

/* Has this node promised not to extend slot's lease? */
bool
dm_membership_condemned(const struct dm_engine *e, dm_slot_t slot)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used)
		return true;
	/* Only a member acknowledges leases: a joiner's roster is provisional
	 * (and a restarting node's is gone), so it cannot know whether the
	 * majority removed the requester. */
	if (!dm_membership_holds_roster(e))
		return true;
	if (e->nodes[slot].condemned || e->nodes[slot].vote_orphaned || e->vote_subject == slot)
		return true;
	for (size_t i = 0; i < e->slot_limit; i++)
		if (e->nodes[i].used && e->nodes[i].joined_vote_subject == slot)
			return true;
	return false;
}

/* The entries whose removal this node stands by and has not seen applied:
 * a vote it runs, a prober's vote it agreed to, an orphaned agreement, a
 * restarted incarnation condemned.  Each may have been removed elsewhere
 * already, so its lease acks are no longer trusted here, and our own lease
 * acks name them (dm_lease.c, "pending removals").  Sets their bits; the
 * count. */
size_t
dm_membership_pending_removals(const struct dm_engine *e, uint8_t bits[DM_NODES_MAX / 8])
{
	size_t n = 0;

	memset(bits, 0, DM_NODES_MAX / 8);
	for (size_t i = 0; i < e->slot_limit; i++) {
		const struct dm_node *nd = &e->nodes[i];
		dm_slot_t s = nd->joined_vote_subject;

		if (!nd->used)
			continue;
		if ((nd->condemned || nd->vote_orphaned) && !dm_bit_get(bits, i)) {
			dm_bit_set(bits, i, true);
			n++;
		}
		if (s < DM_NODES_MAX && e->nodes[s].used && !dm_bit_get(bits, s)) {
			dm_bit_set(bits, s, true);
			n++;
		}
	}
	if (e->vote_subject < DM_NODES_MAX && e->nodes[e->vote_subject].used &&
	    !dm_bit_get(bits, e->vote_subject)) {
		dm_bit_set(bits, e->vote_subject, true);
		n++;
	}
	return n;
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
	    dm_membership_holds_roster(e);
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

int
dm_membership_on_suspect_vote(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
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

/*
 * A member came back with a new incarnation, so the old one is dead.  Its
 * clients may still be stopping (D_stop) under a grant whose deadline runs
 * to its lease end, so under the majority policy the old incarnation is
 * condemned at once (no more lease acks) and erased only T_fail + D_lock
 * later, the same wait a majority removal implies.
 */
void
dm_membership_condemn_restarted(struct dm_engine *e, dm_slot_t s)
{
	if (e->policy == DM_FAILURE_PAPER) {
		dm_membership_announce_failure(e, s);
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

void
dm_membership_restart_timer(struct dm_engine *e)
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
