/*
 * dm_lease.c: the holder lease of failure_policy = majority.
 *
 * While this node requests or holds any lock it sends HEARTBEAT(serial) to
 * every member each heartbeat_ms.  When a strict majority of the roster
 * (self included) has acknowledged the heartbeat sent at time t, the lease
 * runs until t + lease_ms: counted from the *send* time, so no delay in the
 * network can stretch it.  Local grants carry the lease end as their
 * deadline and are extended with DM_FX_EXTEND; when the lease runs out
 * every local holder gets DM_FX_LOST before any peer may act, because a
 * member that agreed to remove this node stops acknowledging its
 * heartbeats and waits T_fail before agreeing (see NOTES.md for the
 * inequality).  Under failure_policy = paper, in a one-node roster, or with
 * DM_BREAK_NO_LEASE, there is no lease and grants carry no deadline.
 *
 * With an election (token algorithms, hierarchical), the lease also fences
 * election epochs: dm_lease_election.c.
 *
 * Refused by a majority: an active member that holds an agreement to
 * remove this node for good (the prober was removed before the outcome
 * reached it: dm_membership_refuses_for_good()) answers its heartbeats
 * with a refusal; every other refusal is silent, as it ends by itself (a
 * joiner's, a running vote's: counted, they made a node restart while the
 * others were rejoining through it, Ricart-Agrawala 4595/4, crashes).  If
 * the members refusing leave too few others for a majority for 2 T_fail (a
 * removal that is going to commit has by then), no lease can ever hold
 * here: the voters wait for a removal the others, who hear us, refuse (a
 * vote whose prober was removed before its outcome: dmlock-sim --algorithm
 * raymond --election invitation --seed 302194 --nodes 14 --fault-mask 4).
 * The node then leaves and rejoins under a new incarnation, as if told it
 * was removed (dm_membership_restart_refused()); its holders had no lease
 * anyway.  A refusal stands only while its sender is heard (a refuser
 * silent for T_fail may have crashed, and its agreement with it), and the
 * restart happens when a refusal arrives, through its sender, alive a
 * message delay earlier.  Restarting on older news could take away the last member: hierarchical
 * 161045/6 (crashes): n1 held n4 refused in a roster of the two, crashed,
 * restarted and asked n4 to sponsor it; n4, still counting the dead
 * incarnation's refusal, restarted to rejoin through n1, and neither was
 * a member any more.
 */
#include <errno.h>
#include <string.h>

#include "dm_engine_private.h"

bool
dm_lease_needed(const struct dm_engine *e)
{
	return e->policy == DM_FAILURE_MAJORITY && e->n_nodes > 1 &&
	    !(e->breakage & DM_BREAK_NO_LEASE);
}

/*
 * May a new grant rely on the lease?  Besides running, it must come from a
 * round sent at our current epoch: the members that acknowledged it know
 * that epoch, so after a removal a majority knows the new epoch before any
 * token of it is handed out, and a later removal decided without us (we
 * may crash right after granting, and lose the epoch) still picks a
 * higher one.  Seed 3000124/3 (crashes): a member removed a dead entry
 * at epoch 23, granted at once and crashed; its announcement was lost,
 * and the survivor later removed at epoch 20 and granted a lower token.
 * Holders already granted keep being extended by any round.
 */
bool
dm_lease_valid(const struct dm_engine *e)
{
	return e->now < e->lease_until && e->lease_epoch >= e->epoch;
}

/*
 * May a new local grant be made now?  The lease must be valid and have
 * more than one heartbeat period left: the heartbeats stop while the node
 * is idle, so a grant can come on the last moments of a lease renewed long
 * before, and the round the grant starts (client_grant()) must have the
 * period it is given to come back before the deadline passes.  Otherwise
 * the grant waits for that round (dm_local_reconcile()).  Raymond seed 4
 * (--no-faults --nodes 3): n1 was granted with 49 us of its lease left and
 * lost the lock before the round it started returned, on a healthy
 * cluster (NOTES.md, "Session 40").  A holder renewed by running
 * heartbeats has lease_ms - heartbeat_ms - one round trip left at worst.
 */
bool
dm_lease_grantable(const struct dm_engine *e)
{
	dm_msec_t margin = (e->breakage & DM_BREAK_LATE_GRANT) ? 0 : e->heartbeat_ms;

	return !dm_lease_needed(e) || (dm_lease_valid(e) && e->lease_until - e->now > margin);
}

/*
 * How many rounds the ring keeps.  A round can still extend the lease
 * while an ack arrives within lease_ms of its send, and rounds open at most
 * every heartbeat_ms / 4 (dm_lease_round() shares them) plus one per
 * heartbeat: so 4 * lease / heartbeat + 4 covers a lease.  A fixed ring of
 * 16 dropped acks later than about 4 heartbeats (2 s with the defaults)
 * under load.
 */
size_t
dm_lease_ring_size(const struct dm_engine *e)
{
	size_t per_lease = (size_t)((e->lease_ms + e->heartbeat_ms - 1) / e->heartbeat_ms);
	size_t n = 4 * per_lease + 4;

	return n < DM_HEARTBEATS_MIN ? DM_HEARTBEATS_MIN : n;
}

/* Open a new lease round sent now. */
static uint64_t
lease_round_open(struct dm_engine *e)
{
	uint64_t serial = ++e->heartbeat_serial;
	struct dm_heartbeat *hb = &e->heartbeats[serial % e->heartbeats_n];

	memset(hb, 0, sizeof(*hb));
	hb->serial = serial;
	hb->epoch = e->epoch;
	hb->label = e->roster_epoch;
	hb->sent_at = e->now;
	hb->acks = 1;	/* self */
	dm_bit_set(hb->acked, e->self, true);
	return serial;
}

uint64_t
dm_lease_round(struct dm_engine *e)
{
	const struct dm_heartbeat *last;

	if (!dm_lease_needed(e))
		return 0;
	if (e->heartbeat_timer.heap_index == 0)
		dm_timer_arm(e, &e->heartbeat_timer, e->now + e->heartbeat_ms);
	/* Requests in quick succession share a round (its lease counts from
	 * a little earlier, which is only more conservative). */
	last = &e->heartbeats[e->heartbeat_serial % e->heartbeats_n];
	if (e->heartbeat_serial != 0 && last->serial == e->heartbeat_serial &&
	    e->now - last->sent_at < e->heartbeat_ms / 4 && last->epoch == e->epoch)
		return last->serial;
	return lease_round_open(e);
}

/*
 * Stale rosters.  A node that missed removals still lists the removed
 * nodes, and they, cut off with it, may not know they were removed: its
 * "majority" of that old, larger roster can be made of them and miss
 * every majority of the roster that removes it next.  Lamport 950329/10
 * (partitions): n2 and n6 were removed at epochs 18 and 19 while cut
 * off with n9; n9, which had applied no removal since epoch 12 but had
 * heard the number 19, renewed its lease with their acks and n8's (4 of
 * the 7 it listed) and granted at epoch 19, while n7, n3 and n5 (3 of the
 * 5 members left) had removed n9 at epoch 21 and n3 held the lock.
 * So a member acknowledges no lease of a node whose roster label (the
 * epoch of the newest removal its roster applied, carried by every
 * message) is behind its own, and says so on a heartbeat: a node left
 * without a majority by such refusals restarts and rejoins through a
 * refuser (see the top), which brings it a current roster.  (Labels that
 * differ the other way: "stale ackers", below.)  (A removal we agreed
 * to but have not seen applied: "pending removals", below.)
 *
 * Stale ackers.  The label alone does not say which removals a roster
 * applied: a holder that missed the announcements of two removals but
 * applied a later one lists both removed nodes, and they, cut off with it
 * and unaware, acknowledge it from behind.  So a holder counts only acks
 * whose label equals its own, and none at all while its roster is
 * unsettled: since session 38 such a holder does not take the later
 * removal's label (its names differ from the announcer's: a label names
 * one roster, dm_membership_failure.c), so its label alone would let the
 * removed nodes' acks count; roster_applied remembers the removal.  (Taken over other names, the
 * label let a removed node that had applied a later removal count the ack
 * of a member that never heard of its removal: rcv 83366/7, NOTES.md
 * "Session 38".)  A member that merely lags (an announcement still on its
 * way) is level again one message later; one that missed an announcement
 * for good takes the label of a heartbeat whose sender lists exactly its
 * names (the digest in the HEARTBEAT's arg), as a refused holder does.
 */
static bool
lease_roster_behind(const struct dm_engine *e, dm_slot_t j)
{
	/* (Not roster_applied: refusing holders behind a removal applied
	 * without its label made whole clusters restart -- lamport 20568/9
	 * and 509087/16 on ac4dcfa; NOTES.md, "Session 38".) */
	return e->nodes[j].roster_epoch < e->roster_epoch;
}

/*
 * Pending removals.  The label closes the hole for removals an acker has
 * applied; one it agreed to and has not seen applied yet leaves it on the
 * old roster, and its ack then counts the same way.  Five nodes: n4 agrees
 * that n3 be removed, n0 that n4 be, n1 and n2 apply both and remove n0;
 * n0, which applied neither, renews its lease with n3's and n4's acks (3
 * of the 5 it lists), all three at the old label.  Refusing every lease
 * while an agreement is pending was tried and starved clusters whose votes
 * kept running (NOTES.md, "Session 19").  What is done instead: an ack
 * names the entries whose removal its sender stands by
 * (dm_membership_pending_removals()), and a round counts no ack of a node
 * that an acker of the round, or the holder itself, named.  A dead or cut
 * off subject's ack is missing anyway, so a lease costs nothing more
 * unless the suspect is alive and acking.  Why it is enough, for a holder
 * H on a roster R removed at the end of a chain of removals d1, d2, ...
 * applied after H's label: H's counted ackers A are a majority of R, and
 * none of them applied d1 (they would be ahead of H's label).  Take the
 * first removed node d_i in A; its voters V_i are a majority of R minus
 * d1..d_(i-1), which holds all of A, so some v is in both.  v agreed
 * before acking (else the removal waited D_lock after v's ack, and with it
 * every later one: H's lease ran out first), had not applied the removal
 * (its label), and so named d_i in the same ack: d_i's ack did not count.
 * So A holds no removed node, and a majority of R without removed nodes
 * meets the voters that remove H, who refuse its lease.  Acks that ride on
 * an algorithm's answers carry no names: a node with a pending removal
 * gives none (dm_lease_may_ack()), only heartbeat acks.
 */
static bool
lease_any_pending_removal(const struct dm_engine *e)
{
	uint8_t pending[DM_NODES_MAX / 8];

	return dm_membership_pending_removals(e, pending) != 0;
}

bool
dm_lease_may_ack(const struct dm_engine *e, dm_slot_t to)
{
	return to < DM_NODES_MAX && e->nodes[to].used && !dm_membership_condemned(e, to) &&
	    !lease_roster_behind(e, to) && !lease_any_pending_removal(e);
}

/* Put the names of our pending removals in an ack's payload: a length
 * byte and the name, each.  False if they do not fit (no ack then). */
static bool
lease_report_pending(const struct dm_engine *e, struct dm_msg *ack)
{
	uint8_t pending[DM_NODES_MAX / 8];
	size_t len = 0;

	if (dm_membership_pending_removals(e, pending) == 0)
		return true;
	for (size_t i = 0; i < e->slot_limit; i++) {
		const struct dm_node *nd = &e->nodes[i];

		if (!dm_bit_get(pending, i))
			continue;
		if (len + 1 + nd->name_len > sizeof(ack->payload))
			return false;
		ack->payload[len++] = nd->name_len;
		memcpy(ack->payload + len, nd->name, nd->name_len);
		len += nd->name_len;
	}
	ack->payload_len = (uint16_t)len;
	return true;
}

/* Take the names an ack's payload reports into the round's exclusions.
 * False if the payload is malformed (the ack is not counted then). */
static bool
lease_take_report(struct dm_engine *e, struct dm_heartbeat *hb, const struct dm_msg *m)
{
	uint8_t excluded[DM_NODES_MAX / 8];
	size_t at = 0;

	memcpy(excluded, hb->excluded, sizeof(excluded));
	while (at < m->payload_len) {
		size_t n = m->payload[at++];
		dm_slot_t s;

		if (n == 0 || n > DM_NODE_NAME_MAX || n > m->payload_len - at)
			return false;
		s = dm_roster_find(e, (const char *)m->payload + at, n);
		if (s != DM_SLOT_NONE) {
			dm_bit_set(excluded, s, true);
			e->nodes[s].named_pending_at = e->now;
		}
		at += n;
	}
	memcpy(hb->excluded, excluded, sizeof(excluded));
	return true;
}

/* Do the round's acks make a majority, leaving out every member an acker
 * or we ourselves hold as a pending removal? */
static bool
lease_round_majority(const struct dm_engine *e, const struct dm_heartbeat *hb)
{
	uint8_t pending[DM_NODES_MAX / 8];
	size_t n = 0;

	if ((size_t)hb->acks * 2 <= e->n_nodes)
		return false;	/* (not even with every ack) */
	dm_membership_pending_removals(e, pending);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (dm_bit_get(hb->acked, j) && (j == e->self ||
		    (!dm_bit_get(hb->excluded, j) && !dm_bit_get(pending, j))))
			n++;
	return n * 2 > e->n_nodes;
}

static void lease_acked(struct dm_engine *e, dm_slot_t from, uint64_t serial,
    const struct dm_msg *report);

void
dm_lease_ack(struct dm_engine *e, dm_slot_t from, uint64_t serial)
{
	if (serial != 0 && from < DM_NODES_MAX && e->nodes[from].used)
		lease_acked(e, from, serial, NULL);
}

static void
lease_send_heartbeat(struct dm_engine *e)
{
	uint64_t serial = lease_round_open(e);
	struct dm_msg *m;

	m = dm_msg_begin(e, DM_MSG_HEARTBEAT, NULL);
	m->token = 0;
	m->serial = serial;
	m->arg = dm_membership_digest_claimed(e, dm_roster_digest(e));	/* (lease_label_catch_up, by the acker) */
	if (e->el_label.k != 0) {
		size_t n = strlen(e->el_label.coord);
		m->seq = e->el_label.k;
		m->node_len = (uint8_t)n;
		memcpy(m->node, e->el_label.coord, n + 1);
	}
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		dm_send(e, j, m);
	dm_timer_arm(e, &e->heartbeat_timer, e->now + e->heartbeat_ms);
}

/* A lock is being requested or held: keep heartbeats going. */
void
dm_lease_activity(struct dm_engine *e)
{
	if (!dm_lease_needed(e) || e->heartbeat_timer.heap_index != 0)
		return;
	lease_send_heartbeat(e);
}

/* T_fail: how long a member stays silent before it is taken for failed. */
static dm_msec_t
lease_fail_silence(const struct dm_engine *e)
{
	return e->request_timeout_ms + e->probe_timeout_ms;
}

/* Does this node want a lease: one is needed and a lock is requested or
 * held here? */
static bool
lease_wanted(const struct dm_engine *e)
{
	/* (A sponsor behind a member waits for a member's digest to level
	 * it: dm_membership_sponsor_finish().) */
	return dm_lease_needed(e) && (e->held_local != 0 || e->waiting_local != 0 ||
	    (e->sponsoring && dm_membership_acker_ahead(e)));
}

/* Does member j refuse our lease now: its last refusal stands, and it has
 * been heard within T_fail (see the top)? */
static bool
lease_refused_by(const struct dm_engine *e, dm_slot_t j)
{
	return e->nodes[j].refuses_our_lease &&
	    e->now < e->nodes[j].last_heard + lease_fail_silence(e);
}

/* Has an acker of ours named member j as a pending removal within
 * T_fail?  Its ack does not count then ("pending removals"). */
static bool
lease_named_pending(const struct dm_engine *e, dm_slot_t j)
{
	dm_msec_t at = e->nodes[j].named_pending_at;

	return at != 0 && e->now < at + lease_fail_silence(e);
}

/* Do the members refusing our lease leave too few others for a majority,
 * while we need one (local demand) and have none?  The members whose acks
 * cannot count count with the refusers ("pending removals"): those whose
 * removal we stand by, and those an acker names.  Suzuki-Kasami 1019/4
 * (bully, partitions): n3 held an orphaned agreement to remove n2, alive
 * to everyone else, and n1 refused n3 for good; n3, with only n0's acks
 * left, held both tokens without a lease for good.  Lamport 597223/8
 * (partitions): n0, n5 and n6 held orphaned agreements to remove n1 and
 * refused it for good, and n7 one to remove n2, which it named in every
 * ack; n1 counted 4 acks of 8 (itself, n3, n4, n7) and 3 refusers, had
 * neither a lease nor a refusing majority, and its request, first in
 * every queue, held up the lock for good. */
static bool
lease_refused_by_majority(const struct dm_engine *e)
{
	uint8_t pending[DM_NODES_MAX / 8];
	size_t others = 1;	/* self */

	if (!lease_wanted(e) || dm_lease_valid(e))
		return false;
	dm_membership_pending_removals(e, pending);
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		others += j != e->self && !lease_refused_by(e, j) && !dm_bit_get(pending, j) &&
		    !lease_named_pending(e, j);
	return others * 2 <= e->n_nodes;
}

void
dm_lease_heartbeat_timer(struct dm_engine *e)
{
	if (!lease_refused_by_majority(e))
		e->lease_refused_since = 0;
	else if (e->lease_refused_since == 0)
		e->lease_refused_since = e->now;
	if (!lease_wanted(e))
		return;	/* idle: let the lease lapse quietly */
	lease_send_heartbeat(e);
}

/* A refusal from member from: if the refusals have left us without a
 * majority for 2 T_fail, restart through from (see the top). */
static void
lease_refusal(struct dm_engine *e, dm_slot_t from)
{
	e->nodes[from].refuses_our_lease = true;
	if (e->lease_refused_since == 0 || !lease_refused_by_majority(e) ||
	    e->now - e->lease_refused_since < 2 * lease_fail_silence(e))
		return;
	e->lease_refused_since = 0;
	dm_membership_restart_refused(e, from);
}

void
dm_lease_timer(struct dm_engine *e)
{
	if (e->now < e->lease_until || e->held_local == 0)
		return;
	dm_log(e, DM_LOG_WARNING, "lease expired: local holders lose their locks", NULL,
	    DM_SLOT_NONE);
	dm_local_lose_all(e, -ETIMEDOUT, false);
}

static bool lease_label_catch_up(struct dm_engine *e, dm_slot_t from, uint64_t label,
    uint64_t digest);

int
dm_lease_on_heartbeat(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_msg *ack;

	if (dm_membership_condemned(e, from)) {
		/* We agreed to remove it: its lease must run out.  A refusal
		 * that only time or a vote ends stays silent; one held for good
		 * (an orphaned agreement) is said (see the top: refused by a
		 * majority). */
		if (!dm_membership_refuses_for_good(e, from))
			return 0;
		ack = dm_msg_begin(e, DM_MSG_HEARTBEAT_ACK, NULL);
		ack->token = 0;
		ack->serial = m->serial;
		ack->arg = DM_HEARTBEAT_REFUSED;
		dm_send(e, from, ack);
		return 0;
	}
	/* A holder ahead of us counts our acks only once we are level (see
	 * "stale ackers"): if we list the names it lists, take its label. */
	if (!e->rx_other_incarnation)
		(void)lease_label_catch_up(e, from, m->roster_epoch, m->arg);
	if (lease_roster_behind(e, from)) {
		/* Only a ready member refuses: a node still joining or syncing
		 * stays silent (no ack either way), since a refusal can make
		 * the holder give its membership up and rejoin through the
		 * refuser, which cannot sponsor anyone yet.  rcv 883623/8
		 * (crashes): n2, syncing from a sponsor that then crashed,
		 * refused n4, the last ready member, as behind its roster; n4
		 * rejoined through n2 and no member was left (NOTES.md,
		 * "Session 34"). */
		if (!dm_roster_ready(e))
			return 0;
		dm_log(e, DM_LOG_DEBUG, "heartbeat from a roster behind ours: refused",
		    NULL, from);
		ack = dm_msg_begin(e, DM_MSG_HEARTBEAT_ACK, NULL);
		ack->token = 0;
		ack->serial = m->serial;
		ack->arg = DM_HEARTBEAT_REFUSED;
		ack->seq = dm_membership_digest_claimed(e, dm_roster_digest(e));	/* (lease_label_catch_up) */
		dm_send(e, from, ack);
		return 0;
	}
	if (!dm_lease_election_label_acceptable(e, from, m)) {
		/* It still works in an election epoch older than the one we
		 * accepted: whatever it holds of that epoch must lapse before
		 * our coordinator's epoch starts. */
		dm_log(e, DM_LOG_DEBUG, "heartbeat of an older election epoch: not acknowledged",
		    NULL, from);
		return 0;
	}
	ack = dm_msg_begin(e, DM_MSG_HEARTBEAT_ACK, NULL);
	ack->token = 0;
	ack->serial = m->serial;
	ack->seq = m->incarnation;	/* (whose hello this answers: dm_static_hello.c) */
	if (!lease_report_pending(e, ack))
		return 0;	/* (too many to name: no ack) */
	dm_send(e, from, ack);
	return 0;
}

/*
 * A member refused our heartbeat, its roster label ahead of ours.  If it
 * lists exactly the names we list (the digest it sent), our roster is the
 * one its label stands for, whatever announcement we missed (one about an
 * incarnation we had replaced already, or one sent before we joined):
 * take its label.  Otherwise the refusals stand, and 2 T_fail of them
 * make us restart and rejoin (see "stale rosters").  Seed 7007/16
 * (lamport, crashes): a node that missed one announcement was refused by
 * every member for good, restarted, and the members' votes on its old
 * incarnation outbid each other for the rest of the run.
 */
static bool
lease_label_catch_up(struct dm_engine *e, dm_slot_t from, uint64_t label, uint64_t digest)
{
	if (label <= e->roster_epoch || !dm_membership_digest_agrees(e, dm_roster_digest(e), digest))
		return false;
	dm_log(e, DM_LOG_INFO, "roster label taken from a member with the same roster", NULL, from);
	e->roster_epoch = label;
	if (label > e->roster_applied)
		e->roster_applied = label;
	if (e->sponsoring)
		dm_membership_progress(e);	/* a join that waited for us to be level */
	return true;
}

/*
 * Does this refusal answer a round that is no longer one of our recent
 * ones, or one sent under an older roster label than ours now?  The
 * refuser judged a roster we no longer have: a label refusal may be
 * answered already (we applied the announcement we lacked), and one for
 * good comes again with the next round.  Counting it anyway can restart
 * the last member.  Lamport 194596/5 (partitions): n1, at label 6,
 * applied n0's announcement of label 18 and, the same instant, took fifty
 * refusals of its label-6 heartbeats that the partition had held; on
 * {n0, n1} they were a majority, and n1 restarted through n0 -- which had
 * itself restarted three seconds before, refused for good by n1 -- and no
 * member was left to admit either.
 */
static bool
lease_refusal_stale(const struct dm_engine *e, uint64_t serial)
{
	const struct dm_heartbeat *hb = &e->heartbeats[serial % e->heartbeats_n];

	return hb->serial != serial || hb->label < e->roster_epoch;
}

int
dm_lease_on_heartbeat_ack(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (m->arg == DM_HEARTBEAT_REFUSED) {
		/* (caught up, now or since the round went out: the next round
		 * asks again, no refusal counted) */
		if (from < DM_NODES_MAX && e->nodes[from].used && !e->rx_other_incarnation &&
		    !lease_refusal_stale(e, m->serial) &&
		    !lease_label_catch_up(e, from, m->roster_epoch, m->seq))
			lease_refusal(e, from);
		return 0;
	}
	if (m->serial == 0)
		dm_static_hello_ack(e, from, m);
	lease_acked(e, from, m->serial, m);
	return 0;
}

/* An ack of round serial from member from; report: the HEARTBEAT_ACK
 * naming its sender's pending removals (NULL for an ack on an algorithm's
 * answer, which names none). */
static void
lease_acked(struct dm_engine *e, dm_slot_t from, uint64_t serial, const struct dm_msg *report)
{
	struct dm_heartbeat *hb = &e->heartbeats[serial % e->heartbeats_n];
	dm_msec_t until;

	if (serial == 0 || e->rx_other_incarnation)
		return;
	if (e->nodes[from].roster_epoch > e->roster_epoch)
		return;	/* (we are the one behind: see "stale rosters") */
	e->nodes[from].refuses_our_lease = false;
	if (e->nodes[from].roster_epoch < e->roster_epoch)
		return;	/* (it is behind: see "stale ackers") */
	if (e->roster_applied > e->roster_epoch)
		return;	/* (our roster is unsettled: see "stale ackers") */
	if (hb->serial != serial || dm_bit_get(hb->acked, from))
		return;
	if (report != NULL && !lease_take_report(e, hb, report))
		return;
	dm_bit_set(hb->acked, from, true);
	hb->acks++;
	until = hb->sent_at + e->lease_ms;
	if (until <= e->lease_until && hb->epoch <= e->lease_epoch)
		return;		/* (this round has nothing to add: no need to count) */
	if (!lease_round_majority(e, hb))
		return;
	if (hb->epoch > e->lease_epoch)
		e->lease_epoch = hb->epoch;
	if (until > e->lease_until) {
		e->lease_until = until;
		dm_timer_arm(e, &e->lease_timer, until);
	}
	dm_local_extend_all(e);
}

/* Renew now if a lease is wanted here (a new election label: see
 * dm_lease_election_epoch()). */
void
dm_lease_renew_if_wanted(struct dm_engine *e)
{
	if (lease_wanted(e))
		lease_send_heartbeat(e);
}
