/*
 * dm_membership_join.c: insertion (RA §7.2) as the joining node sees it --
 * choosing and retrying sponsors, taking the sponsor's roster snapshot and
 * the NODE_ADDs that overtake it, asking every member for its highest
 * sequence number (§7.2.3) before READY -- and every node's answer to a
 * NODE_ADD or a joiner's SEQ_QUERY.
 */
#include <errno.h>
#include <string.h>

#include "dm_membership_private.h"

void
dm_membership_ready(struct dm_engine *e)
{
	struct dm_effect fx = { .type = DM_FX_READY };

	e->membership = DM_MEMBER_ACTIVE;
	if (e->epoch_at_ready > e->epoch)
		e->epoch = e->epoch_at_ready;	/* (dm_engine_new) */
	e->epoch_at_ready = 0;
	dm_emit(e, &fx);
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

void
dm_membership_sponsor_hint(struct dm_engine *e, const char *peer)
{
	sponsor_candidate_add(e, peer, NULL);
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
	e->static_member = false;
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
	return roster_provisional(e) && e->nodes[old].via_add &&
	    !e->nodes[old].from_snapshot && m->epoch > e->nodes[old].via_add_epoch;
}

int
dm_membership_on_node_add(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *m)
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
	    !dm_membership_incarnation_removed(e, m->node, m->incarnation)) {	/* (see note_removed) */
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
		} else if (old == DM_SLOT_NONE && dm_membership_name_removed(e, m->node)) {
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
			if (r == 0 && roster_provisional(e)) {
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
 * the live one, the coordinator, again.  The candidate whose snapshot we
 * had begun taking may finish it, though: the retry timer can move us on
 * between two of its entries, and that sponsor has added us everywhere
 * already (hierarchical 776716/13, partitions: the rest of the snapshot
 * was dropped, every member listed the joiner, which stayed out for good,
 * as its group coordinator). */
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
			if (snapshot_count(e) > 0 && strcmp(e->snapshot_from, peer) != 0)
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

int
dm_membership_on_roster_entry(struct dm_engine *e, const char *peer, const struct dm_msg *m)
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

int
dm_membership_on_roster_end(struct dm_engine *e, const char *peer, const struct dm_msg *m)
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
	dm_epoch_learn(e, m->epoch);
	e->join_epoch = e->epoch;
	e->roster_epoch = m->roster_epoch;	/* the sponsor's: its roster is ours now */
	e->roster_applied = e->roster_epoch;
	dm_membership_departed_erase(e);
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
		dm_membership_ready(e);
		return 0;
	}
	sync_query(e);
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
	return 0;
}

int
dm_membership_on_seq_query(struct dm_engine *e, dm_slot_t from, const char *peer,
    const struct dm_msg *q)
{
	struct dm_msg *m;

	/* §7.2.3: whoever answers a new node's Highest_Sequence_Number must
	 * count it in every request from then on, or the new node's first
	 * request may tie with one of ours that never asked it, win on the
	 * name, and both enter.  A member that does not list the querier
	 * (it acknowledged the NODE_ADD without taking it: an incarnation
	 * it had removed, dm_membership_note_removed()) tells it to start again instead.
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

int
dm_membership_on_seq_answer(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	if (e->membership != DM_MEMBER_SYNCING || from == DM_SLOT_NONE ||
	    !dm_bit_get(e->seq_waiting, from))
		return 0;
	e->algo->clock_merge(e, m->seq);
	dm_bit_set(e->seq_waiting, from, false);
	if (--e->seq_waiting_n == 0) {
		dm_timer_stop(e, &e->roster_timer);
		dm_membership_ready(e);
	}
	return 0;
}

/* JOIN_REFUSED: retried on the roster timer; a hint names another sponsor. */
int
dm_membership_on_join_refused(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	if (e->membership != DM_MEMBER_JOINING)
		return 0;
	if (m->node_len > 0 && strcmp(m->node, e->nodes[e->self].name) != 0)
		sponsor_candidate_add(e, m->node, m->address);
	if (e->n_sponsors > 1 && strcmp(peer, e->sponsor) == 0)
		dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e) / 4);
	return 0;
}

/* The roster timer while syncing: ask again, and suspect a member silent
 * for T_fail (sync_suspect_silent). */
void
dm_membership_sync_retry(struct dm_engine *e)
{
	sync_query(e);
	sync_suspect_silent(e);
	if (e->membership != DM_MEMBER_SYNCING)
		return;		/* (the removal ended the wait) */
	dm_timer_arm(e, &e->roster_timer, e->now + dm_join_retry(e));
}
