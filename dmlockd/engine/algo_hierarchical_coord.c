/*
 * algo_hierarchical_coord.c: the group coordinator (the thesis's second,
 * fourth and sixth procedures, Tables 6.4, 6.6, 6.8) and the system
 * coordinator (third, seventh and eighth, Tables 6.5, 6.9, 6.10) of the
 * hierarchical algorithm, with the message-loss recovery of chapter 6
 * ("NREQREL", resent GREPLY/NREPLY).  J. Bisque, 1992.
 *
 * Additions to the thesis (see NOTES-hierarchical.md):
 *  - Group requests carry an id (per group coordinator and lock), so a
 *    late or resent GREPLY can be told from the current one: a GREPLY for
 *    an id we are not waiting for and do not hold is answered GRELEASE.
 *  - The system coordinator's lgrep remembers the coordinator *slot* it
 *    granted, and accepts a release only from it; the group coordinator's
 *    lnrep likewise.  So two nodes with different views of the groups
 *    (rosters converge one message at a time) still never hold two grants.
 *  - A grant known from an epoch cut (HELD) has id 0 and names its holder.
 *  - Withdrawals (not in the thesis): NRELEASE for a request not granted
 *    drops it; GRELEASE for a group request not granted drops it.
 *  - Try-once: NREQUEST/GREQUEST flagged TRY are refused (NBUSY/GBUSY)
 *    instead of queued when someone holds or waits.
 */
#include <errno.h>
#include <string.h>

#include "algo_hierarchical.h"

void
hr_coord_reset(struct hr_lock *t)
{
	for (size_t i = 0; i < HR_GROUP_MAX; i++)
		t->nreq[i].slot = DM_SLOT_NONE;
	for (size_t i = 0; i < HR_GREQ_MAX; i++)
		t->greq[i].slot = DM_SLOT_NONE;
	t->lnrep = DM_SLOT_NONE;
	t->lnrep_ts = 0;
	t->have_grant = false;
	t->grant_id = 0;
	t->greq_id = 0;
	t->gprobe_out = false;
	t->lgrep = DM_SLOT_NONE;
	t->lgrep_id = 0;
	t->lgrep_holder = DM_SLOT_NONE;
	t->cut_unplaced = false;
}

bool
hr_coord_idle(const struct hr_lock *t)
{
	for (size_t i = 0; i < HR_GROUP_MAX; i++)
		if (t->nreq[i].slot != DM_SLOT_NONE)
			return false;
	for (size_t i = 0; i < HR_GREQ_MAX; i++)
		if (t->greq[i].slot != DM_SLOT_NONE)
			return false;
	return t->lnrep == DM_SLOT_NONE && !t->have_grant && t->greq_id == 0 &&
	    t->lgrep == DM_SLOT_NONE;
}

/* (ts, name) order: "earliest timestamp first", ties by node number. */
static bool
earlier(const struct dm_engine *e, uint64_t ts_a, dm_slot_t a, uint64_t ts_b, dm_slot_t b)
{
	if (ts_a != ts_b)
		return ts_a < ts_b;
	return dm_roster_compare(e, a, b) < 0;
}

/* --- Group coordinator --- */

static struct hr_nreq *
nreq_find(struct hr_lock *t, dm_slot_t slot)
{
	for (size_t i = 0; i < HR_GROUP_MAX; i++)
		if (t->nreq[i].slot == slot)
			return &t->nreq[i];
	return NULL;
}

static struct hr_nreq *
nreq_earliest(const struct dm_engine *e, struct hr_lock *t, bool *all_try)
{
	struct hr_nreq *best = NULL;

	*all_try = true;
	for (size_t i = 0; i < HR_GROUP_MAX; i++) {
		struct hr_nreq *q = &t->nreq[i];
		if (q->slot == DM_SLOT_NONE)
			continue;
		*all_try = *all_try && q->try_once;
		if (best == NULL || earlier(e, q->ts, q->slot, best->ts, best->slot))
			best = q;
	}
	return best;
}

static size_t
nreq_count(const struct hr_lock *t)
{
	size_t n = 0;

	for (size_t i = 0; i < HR_GROUP_MAX; i++)
		n += t->nreq[i].slot != DM_SLOT_NONE;
	return n;
}

static void
send_nreply(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	struct dm_msg *m = hr_msg(e, DM_HR_NREPLY, l);

	m->seq = t->lnrep_ts;
	hr_send(e, l, t->lnrep, m);
}

static void
send_grequest(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	bool all_try;
	struct hr_nreq *q = nreq_earliest(e, t, &all_try);
	struct dm_msg *m;

	if (q == NULL)
		return;
	m = hr_msg(e, DM_HR_GREQUEST, l);
	m->seq = q->ts;
	m->arg = t->greq_id;
	m->flags |= all_try ? DM_MSG_F_TRY : 0;
	hr_send(e, l, hr_system_coordinator(e), m);
}

/* A member's retry: resend our GREQUEST (same id: idempotent at the
 * system).  If the previous resend got neither GQUEUED nor GREPLY within
 * the probe timeout, the system coordinator is gone (RA §7.4's second
 * timeout): the majority vote removes it and the removal starts the
 * election. */
static void
resend_grequest(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	dm_slot_t sc = hr_system_coordinator(e);

	if (t->gprobe_out && sc != DM_SLOT_NONE && sc != dm_roster_self(e) &&
	    dm_now(e) >= t->gprobe_at + dm_probe_timeout(e))
		dm_roster_suspect(e, sc);
	if (!t->gprobe_out) {
		t->gprobe_out = true;
		t->gprobe_at = dm_now(e);
	}
	send_grequest(e, l, t);
}

static void
send_nbusy(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint64_t ts)
{
	struct dm_msg *m = hr_msg(e, DM_HR_NBUSY, l);

	m->seq = ts;
	hr_send(e, l, to, m);
}

/* Table 6.6: "set j to the number of the node that made the earliest
 * request; send an NREPLY message to node j; record j in lnrep". */
static void
grant_in_group(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	bool all_try;
	struct hr_nreq *q = nreq_earliest(e, t, &all_try);
	struct dm_msg *m;

	if (q == NULL) {
		/* Nobody left to grant (withdrawn meanwhile): give it back. */
		m = hr_msg(e, DM_HR_GRELEASE, l);
		m->arg = t->grant_id;
		t->have_grant = false;
		hr_send(e, l, hr_system_coordinator(e), m);
		return;
	}
	t->lnrep = q->slot;
	t->lnrep_ts = q->ts;
	send_nreply(e, l, t);
}

/* Ask the system coordinator for the group if we hold nothing, wait for
 * nothing, and a member waits (Table 6.4's "only active request"). */
static void
group_progress(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	if (t->have_grant || t->greq_id != 0 || nreq_count(t) == 0)
		return;
	t->greq_id = ++hr_node(e)->next_gid;
	send_grequest(e, l, t);
}

static int
gc_on_nrequest(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* Table 6.4: "record the time-stamp from the NREQUEST message in
	 * nreq[j MOD 4] ... IF node j has the only active request in the
	 * group send a GREQUEST message ... to syscoord". */
	struct hr_nreq *q = nreq_find(t, from);
	bool try_once = (m->flags & DM_MSG_F_TRY) != 0;

	if (m->arg == 1) {
		/* Held across an epoch cut: the system coordinator knows it
		 * (HELD) and counts it as our group's grant, id 0. */
		if (t->lnrep != DM_SLOT_NONE && t->lnrep != from) {
			dm_log(e, DM_LOG_ERR, "hierarchical: two holders announced", l, from);
			return 0;
		}
		if (q == NULL)
			q = nreq_find(t, DM_SLOT_NONE);
		if (q != NULL) {
			q->slot = from;
			q->ts = m->seq;
			q->try_once = false;
		}
		if (!t->have_grant) {
			t->have_grant = true;
			t->grant_id = 0;
		}
		t->lnrep = from;
		t->lnrep_ts = m->seq;
		return 0;
	}
	if (q != NULL && q->ts >= m->seq) {
		/* Known already (a retry): nothing new. */
	} else {
		if (q == NULL)
			q = nreq_find(t, DM_SLOT_NONE);
		if (q == NULL)
			return 0;	/* table full (views differ): the retry comes back */
		if (try_once && (t->lnrep != DM_SLOT_NONE || t->greq_id != 0 ||
		    nreq_count(t) > (q->slot == from ? 1u : 0u))) {
			send_nbusy(e, l, from, m->seq);
			if (q->slot == from)
				q->slot = DM_SLOT_NONE;
			return 0;
		}
		q->slot = from;
		q->ts = m->seq;
		q->try_once = try_once;
	}
	if (t->have_grant && t->lnrep == DM_SLOT_NONE)
		grant_in_group(e, l, t);
	else
		group_progress(e, l, t);
	return 0;
}

static int
gc_on_nreqrel(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* "If there is no such request, an NREQUEST message was lost ... If
	 *  there is a node in this group that currently has mutual exclusion
	 *  permission ... sends another NREPLY message to this node ...
	 *  [else] sends a GREQREL message to the system coordinator". */
	struct hr_nreq *q = nreq_find(t, from);
	int r = 0;

	if (q == NULL || q->ts != m->seq)
		r = gc_on_nrequest(e, l, t, from, m);
	else if (t->lnrep != DM_SLOT_NONE)
		send_nreply(e, l, t);
	else if (t->greq_id != 0)
		resend_grequest(e, l, t);
	else if (t->have_grant)
		grant_in_group(e, l, t);
	else
		group_progress(e, l, t);
	/* Still queued here: say so, so the member does not take our silence
	 * for death (hr_timer). */
	q = nreq_find(t, from);
	if (r == 0 && from != dm_roster_self(e) && q != NULL && q->ts == m->seq &&
	    t->lnrep != from) {
		struct dm_msg *a = hr_msg(e, DM_HR_NQUEUED, l);

		a->seq = m->seq;
		hr_send(e, l, from, a);
	}
	return r;
}

static void
release_group(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	/* Table 6.8: "IF there are no active requests in nreq send a GRELEASE
	 * message to syscoord ELSE send a GREQREL message containing min_ts". */
	uint64_t released = t->grant_id;
	bool all_try;
	struct hr_nreq *q = nreq_earliest(e, t, &all_try);
	struct dm_msg *m;

	t->have_grant = false;
	t->lnrep = DM_SLOT_NONE;
	t->lnrep_ts = 0;
	if (q == NULL) {
		m = hr_msg(e, DM_HR_GRELEASE, l);
		m->arg = released;
		hr_send(e, l, hr_system_coordinator(e), m);
		return;
	}
	t->greq_id = ++hr_node(e)->next_gid;
	m = hr_msg(e, DM_HR_GREQREL, l);
	m->seq = q->ts;
	m->arg = t->greq_id;
	m->flags |= all_try ? DM_MSG_F_TRY : 0;
	m->payload_len = 8;
	for (int i = 0; i < 8; i++)
		m->payload[i] = (uint8_t)(released >> (8 * i));
	hr_send(e, l, hr_system_coordinator(e), m);
}

static int
gc_on_nrelease(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	struct hr_nreq *q = nreq_find(t, from);
	struct dm_msg *r;

	/* A release with seq 0 answers an NREPLY of a grant known from a cut
	 * (seq 0, gc_on_greply()): it ends that grant only.  Once the holder's
	 * grant has a timestamp (its own request, or its NREQUEST "held"), a
	 * late seq-0 NRELEASE is about the older grant and must not end the
	 * newer one (dmlock-sim --algorithm hierarchical --election invitation
	 * --seed 541 --nodes 6 --fault-mask 2: n1, paused, answered n0's
	 * seq-0 NREPLY with NRELEASE 0 after n0 had granted it request 39,
	 * and n0 then granted n3 while n1 was inside). */
	if (t->lnrep == from && (t->lnrep_ts == m->seq || t->lnrep_ts == 0)) {
		/* Table 6.8: "IF lnrep = j ... record a -1 in nreq[j MOD 4]". */
		if (q != NULL && q->ts <= m->seq)
			q->slot = DM_SLOT_NONE;
		else if (q != NULL && t->lnrep_ts == 0)
			q->slot = DM_SLOT_NONE;
		release_group(e, l, t);
		return 0;
	}
	/* A withdrawal (or an old release): drop the request it names. */
	if (q != NULL && q->ts == m->seq)
		q->slot = DM_SLOT_NONE;
	if (nreq_count(t) == 0 && t->greq_id != 0 && !t->have_grant) {
		r = hr_msg(e, DM_HR_GRELEASE, l);
		r->arg = t->greq_id;
		t->greq_id = 0;
		hr_send(e, l, hr_system_coordinator(e), r);
	}
	return 0;
}

static int
gc_on_greply(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* Table 6.6, with the recovery rule: "If there is a node in this
	 * group that currently has mutual exclusion permission, the group
	 * coordinator ignores the GREPLY message, and it sends another NREPLY
	 * message to this node". */
	uint64_t id = m->arg;
	struct dm_msg *r;

	if (from != hr_system_coordinator(e))
		return 0;
	t->gprobe_out = false;
	if (m->payload_len > 0) {
		/* A grant known from the cut: its holder is named. */
		dm_slot_t holder = dm_election_slot_by_name(e, (const char *)m->payload,
		    m->payload_len);
		if (id != 0 || m->payload_len > DM_NODE_NAME_MAX)
			return -EPROTO;
		if (holder == DM_SLOT_NONE)
			return 0;
		if (!t->have_grant) {
			t->have_grant = true;
			t->grant_id = 0;
			t->lnrep = holder;
			t->lnrep_ts = 0;
		}
		if (t->lnrep != DM_SLOT_NONE && t->grant_id == 0)
			send_nreply(e, l, t);
		return 0;
	}
	if (t->have_grant && t->grant_id == id) {
		if (t->lnrep != DM_SLOT_NONE)
			send_nreply(e, l, t);
		else
			grant_in_group(e, l, t);
		return 0;
	}
	if (id == 0)
		return 0;	/* a cut's grant always names its holder */
	if (t->have_grant || id != t->greq_id) {
		/* Not a grant we wait for: whatever it is, we do not use it. */
		r = hr_msg(e, DM_HR_GRELEASE, l);
		r->arg = id;
		hr_send(e, l, from, r);
		return 0;
	}
	t->have_grant = true;
	t->grant_id = id;
	t->greq_id = 0;
	grant_in_group(e, l, t);
	return 0;
}

static int
gc_on_gbusy(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	if (from != hr_system_coordinator(e) || t->greq_id == 0 || m->arg != t->greq_id)
		return 0;
	t->greq_id = 0;
	for (size_t i = 0; i < HR_GROUP_MAX; i++) {
		struct hr_nreq *q = &t->nreq[i];
		if (q->slot == DM_SLOT_NONE || !q->try_once)
			continue;
		dm_slot_t to = q->slot;
		q->slot = DM_SLOT_NONE;
		send_nbusy(e, l, to, q->ts);
	}
	group_progress(e, l, t);
	return 0;
}

/* --- System coordinator --- */

static struct hr_greq *
greq_find(struct hr_lock *t, dm_slot_t slot)
{
	for (size_t i = 0; i < HR_GREQ_MAX; i++)
		if (t->greq[i].slot == slot)
			return &t->greq[i];
	return NULL;
}

static size_t
greq_count(const struct hr_lock *t)
{
	size_t n = 0;

	for (size_t i = 0; i < HR_GREQ_MAX; i++)
		n += t->greq[i].slot != DM_SLOT_NONE;
	return n;
}

static void
send_greply(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	struct dm_msg *m = hr_msg(e, DM_HR_GREPLY, l);

	m->arg = t->lgrep_id;
	if (t->lgrep_holder != DM_SLOT_NONE) {
		const char *name = dm_roster_name(e, t->lgrep_holder);
		if (name == NULL || name[0] == '\0')
			return;		/* holder removed: the coming epoch rebuilds */
		m->payload_len = (uint16_t)strlen(name);
		memcpy(m->payload, name, m->payload_len);
	}
	hr_send(e, l, t->lgrep, m);
}

/* Tables 6.9/6.10: "IF there are any active requests in greq set j to the
 * number of the group that made the earliest request; send a GREPLY
 * message to grpcoord[j]; record j in lgrep". */
static void
system_progress(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t)
{
	struct hr_greq *best = NULL;

	if (t->lgrep != DM_SLOT_NONE)
		return;
	for (size_t i = 0; i < HR_GREQ_MAX; i++) {
		struct hr_greq *g = &t->greq[i];
		if (g->slot == DM_SLOT_NONE)
			continue;
		if (best == NULL || earlier(e, g->ts, g->slot, best->ts, best->slot))
			best = g;
	}
	if (best == NULL)
		return;
	t->lgrep = best->slot;
	t->lgrep_id = best->id;
	t->lgrep_holder = DM_SLOT_NONE;
	best->slot = DM_SLOT_NONE;
	send_greply(e, l, t);
}

static bool
i_am_system(const struct dm_engine *e)
{
	return hr_system_coordinator(e) == dm_roster_self(e);
}

static void
record_group_request(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* Table 6.5: "record the data from the GREQUEST message in
	 * greq[kgroup]"; the recovery rule for a known request: "sends
	 * another GREPLY message to the group coordinator of the group that
	 * currently has mutual exclusion permission". */
	uint64_t id = m->arg;
	struct hr_greq *g = greq_find(t, from);
	struct dm_msg *r;

	if (id == 0)
		return;
	if ((g != NULL && g->id == id) || (t->lgrep == from && t->lgrep_id == id)) {
		if (t->lgrep != DM_SLOT_NONE)
			send_greply(e, l, t);
		if (from != dm_roster_self(e) && !(t->lgrep == from && t->lgrep_id == id)) {
			/* A retry of a request still queued: we are alive. */
			r = hr_msg(e, DM_HR_GQUEUED, l);
			r->arg = id;
			hr_send(e, l, from, r);
		}
		return;
	}
	if (g != NULL && g->id > id)
		return;		/* older than what we have */
	if ((m->flags & DM_MSG_F_TRY) &&
	    (t->lgrep != DM_SLOT_NONE || greq_count(t) > (g != NULL ? 1u : 0u))) {
		if (g != NULL)
			g->slot = DM_SLOT_NONE;
		r = hr_msg(e, DM_HR_GBUSY, l);
		r->arg = id;
		hr_send(e, l, from, r);
		return;
	}
	if (g == NULL)
		g = greq_find(t, DM_SLOT_NONE);
	if (g == NULL)
		return;		/* full: the group's retry comes back */
	g->slot = from;
	g->ts = m->seq;
	g->id = id;
	g->try_once = (m->flags & DM_MSG_F_TRY) != 0;
	system_progress(e, l, t);
}

static int
sc_on_grequest(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	if (!i_am_system(e))
		return 0;
	record_group_request(e, l, t, from, m);
	return 0;
}

static void
release_from(struct dm_lock *l, struct hr_lock *t, dm_slot_t from, uint64_t id)
{
	struct hr_greq *g;

	(void)l;
	if (t->lgrep == from && t->lgrep_id == id) {
		t->lgrep = DM_SLOT_NONE;
		t->lgrep_id = 0;
		t->lgrep_holder = DM_SLOT_NONE;
	}
	g = greq_find(t, from);
	if (g != NULL && g->id == id)
		g->slot = DM_SLOT_NONE;	/* a withdrawn group request */
}

static int
sc_on_grelease(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* Table 6.9: "IF lgrep = kgroup ... record a -1 in lgrep". */
	if (!i_am_system(e))
		return 0;
	release_from(l, t, from, m->arg);
	system_progress(e, l, t);
	return 0;
}

static int
sc_on_greqrel(struct dm_engine *e, struct dm_lock *l, struct hr_lock *t, dm_slot_t from,
    const struct dm_msg *m)
{
	/* Table 6.10: release and request in one message. */
	uint64_t released = 0;

	if (!i_am_system(e))
		return 0;
	if (m->payload_len != 8)
		return -EPROTO;
	for (int i = 0; i < 8; i++)
		released |= (uint64_t)m->payload[i] << (8 * i);
	release_from(l, t, from, released);
	record_group_request(e, l, t, from, m);
	system_progress(e, l, t);
	return 0;
}

/* Where a grant known from a cut is held: the holder's group coordinator,
 * or, while the holder is in no group (not working in the groups we see),
 * the holder itself, so that the lock never looks free while it is held. */
static dm_slot_t
cut_grant_to(const struct dm_engine *e, dm_slot_t holder)
{
	dm_slot_t gc = hr_group_coordinator_of(e, holder);

	return gc != DM_SLOT_NONE ? gc : holder;
}

void
hr_coord_forget(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* A removal during our election's acceptance step starts no new
	 * election, so the table built from the HELD reports must follow the
	 * roster: the holder's group coordinator may be the node just gone. */
	struct hr_lock *t = dm_lock_state(l);

	if (t->lock == NULL || t->gen != hr_node(e)->gen || !i_am_system(e) ||
	    t->lgrep == DM_SLOT_NONE || t->lgrep_id != 0 || t->lgrep_holder == DM_SLOT_NONE)
		return;
	if (t->lgrep_holder == slot) {
		t->lgrep = DM_SLOT_NONE;	/* the holder is gone: its hold ends */
		t->lgrep_holder = DM_SLOT_NONE;
		system_progress(e, l, t);
	} else if (t->lgrep == slot) {
		t->lgrep = cut_grant_to(e, t->lgrep_holder);
	}
}

void
hr_coord_held(struct dm_engine *e, struct dm_lock *l, dm_slot_t holder)
{
	/* The cut's report: the holder's group has the permission (id 0).
	 * The groups are only final when the epoch starts (the joiners of
	 * this election are not known yet): hr_coord_cut_grants() places the
	 * grant again then. */
	struct hr_lock *t = hr_lock(e, l);

	if (t->lgrep != DM_SLOT_NONE && t->lgrep_holder != holder) {
		dm_log(e, DM_LOG_ERR, "hierarchical: two holders reported at a cut", l, holder);
		return;
	}
	t->lgrep = cut_grant_to(e, holder);
	t->lgrep_id = 0;
	t->lgrep_holder = holder;
	t->cut_unplaced = true;
}

void
hr_coord_cut_grants(struct dm_engine *e, struct dm_lock *l)
{
	/* The epoch starts at the system coordinator: the groups are those
	 * of the election's outcome now (its joiners are not working).  A
	 * grant known from a HELD report goes to the holder's group
	 * coordinator in these groups, not in the ones we saw when the report
	 * came (dmlock-sim --algorithm hierarchical --election invitation
	 * --seed 2110 --nodes 7 --fault-mask 2: n2 formed a group while its
	 * previous epoch listed n6 as a joiner, so n6's HELD lock/c counted
	 * for no group coordinator, the lock looked free and n2 granted it
	 * to itself while n6 held it). */
	struct hr_lock *t = hr_lock(e, l);

	if (i_am_system(e) && t->lgrep != DM_SLOT_NONE && t->lgrep_id == 0 &&
	    t->lgrep_holder != DM_SLOT_NONE)
		t->lgrep = cut_grant_to(e, t->lgrep_holder);
	t->cut_unplaced = false;
}

int
hr_coord_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct hr_lock *t = hr_lock(e, l);

	switch (m->kind) {
	case DM_HR_NREQUEST:
		return gc_on_nrequest(e, l, t, from, m);
	case DM_HR_NREQREL:
		return gc_on_nreqrel(e, l, t, from, m);
	case DM_HR_NRELEASE:
		return gc_on_nrelease(e, l, t, from, m);
	case DM_HR_GREPLY:
		return gc_on_greply(e, l, t, from, m);
	case DM_HR_GBUSY:
		return gc_on_gbusy(e, l, t, from, m);
	case DM_HR_GQUEUED:
		/* The system coordinator is alive and still has our request. */
		if (from == hr_system_coordinator(e) && m->arg == t->greq_id)
			t->gprobe_out = false;
		return 0;
	case DM_HR_GREQUEST:
		return sc_on_grequest(e, l, t, from, m);
	case DM_HR_GRELEASE:
		return sc_on_grelease(e, l, t, from, m);
	case DM_HR_GREQREL:
		return sc_on_greqrel(e, l, t, from, m);
	default:
		return -EPROTO;
	}
}

size_t
hr_coord_describe(const struct dm_engine *e, const struct hr_lock *t, char *buf, size_t size,
    size_t len)
{
	if (t->lnrep != DM_SLOT_NONE)
		len = dm_describe_add(buf, size, len, "group_holder=%s", dm_roster_name(e, t->lnrep));
	if (nreq_count(t) > 0)
		len = dm_describe_add(buf, size, len, "group_waiting=%zu", nreq_count(t));
	if (t->lgrep != DM_SLOT_NONE)
		len = dm_describe_add(buf, size, len, "system_grant_to=%s",
		    dm_roster_name(e, t->lgrep));
	if (greq_count(t) > 0)
		len = dm_describe_add(buf, size, len, "system_waiting=%zu", greq_count(t));
	return len;
}
