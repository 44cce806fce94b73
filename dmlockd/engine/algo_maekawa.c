/*
 * algo_maekawa.c: Maekawa's sqrt(N) mutual exclusion, one instance per lock
 * name.  M. Maekawa, "A sqrt(N) Algorithm for Mutual Exclusion in
 * Decentralized Systems", ACM TOCS 3(2), 1985, §4; request sets from
 * dm_quorum.c (§3).  Every node is both a requester and an arbiter.
 *
 *   "(1) When node i invokes mutual exclusion, it sends a REQUEST message to
 *    every member of S_i ... given a sequence number greater than any
 *    REQUEST message sent, received, or observed at this node."
 *   "REQUEST A is said to precede REQUEST B if (the sequence number of A <
 *    the sequence number of B) or (equal and the node number of A < B)."
 *
 * What this file adds to the paper (see NOTES-permission.md):
 *  - Deadlock fixes (Sanders 1987): an arbiter sends FAILED to *every*
 *    queued request that some other request precedes, whenever that becomes
 *    true (on arrival of a more preceding request and on every relock), not
 *    only on arrival; an INQUIRE that arrives before the outcome is known is
 *    deferred until a FAILED or the last LOCKED; INQUIRE carries the seq of
 *    the locking request and is ignored when stale; a relinquished arbiter
 *    counts as failed for the requester.
 *  - Stale grants: a LOCKED for a request we no longer make is answered by
 *    RELEASE(seq) so the arbiter's vote is never stuck.
 *  - Roster changes.  The sets are a function of the *view*: the set of
 *    member names (a fingerprint).  A request carries its view; an arbiter
 *    grants only requests of its own view.  On a view change a request not
 *    yet in its critical section is withdrawn (RELEASE to the old set) and
 *    re-issued with a new seq under the new sets; a critical section in
 *    progress finishes under the old view and its votes stay locked until
 *    its RELEASE.  Because a new-view set need not meet an old-view set,
 *    a node uses the set of ALL members (which meets every S_i, since i is
 *    in S_i and holds its own vote while in its critical section) until
 *    every member has reported, in this view, that it is "clean": none of
 *    its requests or votes belongs to an older view.  Only then the small
 *    sets are used.  A clean report counts only in an answer (LOCKED,
 *    FAILED, BUSY, STALE) to a request we made in this view: a member that
 *    left and came back under the same name restores the old fingerprint,
 *    and an older message would vouch for a state that no longer holds.
 *    For the same reason the cached S_i (slot numbers) is recomputed on
 *    every view change.  Failed members leave through the roster rules and
 *    peer_gone(): their votes and queue entries are dropped, and requests
 *    that counted on them are re-issued under the new sets.
 *  - The engine's roster lock always asks every member, and a node that is
 *    not yet an active member votes for it at once without keeping state
 *    (the engine passes it only roster-lock messages while it joins).
 *  - Try-once: an arbiter that cannot vote at once answers BUSY.
 *  - Failure detection as in RA §7.4: after the request timeout, arbiters
 *    that have not voted are probed (the probe carries the request, so a
 *    REQUEST the engine dropped while the arbiter was joining is
 *    recovered), and an arbiter whose vote a requester holds while others
 *    wait probes it (a requester that no longer makes that request gives
 *    the vote back); the silent are suspected after the probe timeout.
 *  - Leases (majority policy): the REQUEST opens a lease round, arbiters
 *    acknowledge it in LOCKED/FAILED/BUSY, members outside S_i get the
 *    engine's HEARTBEAT of the same round: no extra round trip at grant.
 *  - Exclusive mode only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm_algorithm.h"
#include "dm_quorum.h"

#define MK_CLEAN	0x1u	/* serial bit: the sender has no older-view state */
#define MK_RESERVED	".dmlock/"	/* the engine's own locks (the roster lock) */
#define MK_SELFQ_MAX	64

/* ARE_YOU_THERE: who probes whom, in serial bits 1-2 (shifted by MK_SUB_SHIFT). */
#define MK_SUB_SHIFT		1
/* Serial bits 3..: the lease round a REQUEST opens (dm_lease_round), echoed
 * by LOCKED/FAILED/BUSY as the arbiter's lease acknowledgement. */
#define MK_LEASE_SHIFT		3
#define MK_PROBE_REQUESTER	1	/* a requester probes an arbiter: seq = its request */
#define MK_PROBE_ARBITER	2	/* an arbiter probes its vote holder: seq = the vote */

struct mk_self_msg {
	struct dm_lock	*l;
	uint8_t		 kind;
	bool		 try_once;
	uint64_t	 seq;
	uint64_t	 view;
};

struct mk_node {
	uint64_t	highest_seq;
	uint64_t	in_lease;		/* lease round of the message being handled */
	uint64_t	view;			/* fingerprint of the member names */
	uint32_t	gen;			/* local count of view changes */
	uint32_t	act_total, act_old;	/* requests and votes; those of older views */
	uint16_t	n_clean;
	uint8_t		clean[DM_NODES_MAX / 8];	/* reported clean in this view */
	/* My request set for this view (slots). */
	uint64_t	set_view;
	uint16_t	set_n;
	dm_slot_t	set[DM_NODES_MAX];
	/* Messages to self, delivered after the current handler. */
	unsigned	selfq_n;
	bool		draining;
	struct mk_self_msg selfq[MK_SELFQ_MAX];
};

struct mk_wait {
	uint64_t	seq;
	uint64_t	view;
	dm_slot_t	slot;
	bool		failed_sent;
	bool		stale_sent;
	uint64_t	lease;		/* the request's lease round, echoed */
};

struct mk_lock {
	/* Requester. */
	bool		requesting, in_cs, try_once, all_mode, timer_on;
	bool		probing;	/* timer phase: probes out (else: waiting) */
	uint32_t	req_gen;
	uint64_t	lease_serial;			/* our request doubles as a lease round */
	uint64_t	our_seq, req_view;
	uint16_t	n_members, n_locked;
	uint8_t		member[DM_NODES_MAX / 8];	/* sent our REQUEST */
	uint8_t		locked[DM_NODES_MAX / 8];	/* LOCKED received */
	uint8_t		failed[DM_NODES_MAX / 8];	/* FAILED received / relinquished */
	uint8_t		inquired[DM_NODES_MAX / 8];	/* deferred INQUIREs */
	uint8_t		probed[DM_NODES_MAX / 8];
	uint8_t		answered[DM_NODES_MAX / 8];
	/* Arbiter. */
	bool		voted, inquire_sent;
	uint32_t	vote_gen;
	struct mk_wait	vote;				/* the locking REQUEST */
	uint16_t	n_wait, cap_wait;
	struct mk_wait	*wait;				/* WAITING QUEUE */
};

static struct mk_node *
mk_node(struct dm_engine *e)
{
	return dm_algo_node_state(e);
}

/* The engine's locks (".dmlock/roster") always use the set of all members:
 * a node that is still joining answers them without being an arbiter (see
 * mk_receive), so their sets must not rely on any single node. */
static bool
name_reserved(const char *name, size_t len)
{
	return len >= strlen(MK_RESERVED) && memcmp(name, MK_RESERVED, strlen(MK_RESERVED)) == 0;
}

/* The view an arbiter grants in.  The roster lock's requests are granted
 * whatever view they were made in: it asks every member anyway, and it is
 * how views converge -- members that disagree about one node (its sponsor
 * crashed after some members took its NODE_ADD) answered each other STALE
 * for ever, so no sponsor could add or retry anyone (seed 101/6, crashes). */
#define MK_ANY_VIEW	0

static uint64_t
arb_view(const struct dm_lock *l, uint64_t view)
{
	const char *name = dm_lock_name(l);

	return name_reserved(name, strlen(name)) ? MK_ANY_VIEW : view;
}

/* --- Views and sets --- */

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static bool
mk_member(const struct dm_engine *e, dm_slot_t j)
{
	return !dm_roster_departing(e, j);
}

static uint64_t
view_of_roster(const struct dm_engine *e)
{
	uint64_t sum = 0, n = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j)) {
			sum += name_hash(dm_roster_name(e, j));
			n++;
		}
	return (sum ^ (n * 0x9e3779b97f4a7c15ull)) | 1u;	/* never 0 */
}

static bool
node_clean(const struct mk_node *n)
{
	return n->act_old == 0;
}

/* Note a roster change: every request and vote so far is now "old". */
static void
mk_sync_view(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);
	uint64_t v = view_of_roster(e);

	if (v == n->view)
		return;
	n->view = v;
	n->gen++;
	n->set_n = 0;	/* slots may have moved even if the names come back */
	n->act_old = n->act_total;
	memset(n->clean, 0, sizeof(n->clean));
	n->n_clean = 0;
}

static void
mk_note_clean(struct dm_engine *e, dm_slot_t j, uint64_t view, bool clean)
{
	struct mk_node *n = mk_node(e);

	if (!clean || view != n->view || j >= DM_NODES_MAX || dm_bit_get(n->clean, j))
		return;
	dm_bit_set(n->clean, j, true);
	n->n_clean++;
}

static bool
all_clean(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);

	mk_note_clean(e, dm_roster_self(e), n->view, node_clean(n));
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j) && !dm_bit_get(n->clean, j))
			return false;
	return true;
}

static int
cmp_slot_names(const struct dm_engine *e, dm_slot_t a, dm_slot_t b)
{
	return dm_roster_compare(e, a, b);
}

/* S_self for the current view (members sorted by name, dm_quorum.c). */
static int
mk_compute_set(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);
	dm_slot_t sorted[DM_NODES_MAX];
	unsigned count = 0, me = 0;
	struct dm_quorum *q = NULL;
	const uint16_t *s;
	size_t k;
	int r;

	if (n->set_view == n->view && n->set_n > 0)
		return 0;	/* computed in this very view (reset by mk_sync_view) */
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (mk_member(e, j)) {
			/* insertion sort by name: small n, deterministic */
			unsigned at = count++;
			while (at > 0 && cmp_slot_names(e, sorted[at - 1], j) > 0) {
				sorted[at] = sorted[at - 1];
				at--;
			}
			sorted[at] = j;
		}
	for (unsigned i = 0; i < count; i++)
		if (sorted[i] == dm_roster_self(e))
			me = i;
	if ((r = dm_quorum_build(count, &q)) < 0)
		return r;
	s = dm_quorum_set(q, me, &k);
	for (size_t i = 0; i < k; i++)
		n->set[i] = sorted[s[i]];
	n->set_n = (uint16_t)k;
	n->set_view = n->view;
	dm_quorum_free(q);
	return 0;
}

/* --- Messages (to self through a queue drained after each handler) --- */

static void mk_ensure_timer(struct dm_engine *e, struct dm_lock *l);
static void mk_dispatch(struct dm_engine *e, struct dm_lock *l, dm_slot_t from,
    uint8_t kind, uint64_t seq, uint64_t view, bool try_once, bool clean, uint8_t sub);

static void
mk_send_full(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once, uint8_t sub, uint64_t lease)
{
	struct mk_node *n = mk_node(e);
	struct dm_msg *m;

	if (to == dm_roster_self(e)) {
		if (n->selfq_n < MK_SELFQ_MAX) {
			struct mk_self_msg *q = &n->selfq[n->selfq_n++];
			q->l = l;
			q->kind = kind;
			q->seq = seq;
			q->view = n->view;
			q->try_once = try_once;
		} else {
			dm_log(e, DM_LOG_ERR, "maekawa: self-message queue full", l, to);
		}
		return;
	}
	if (!mk_member(e, to))
		return;
	m = dm_msg_begin(e, kind, l);
	m->seq = seq;
	m->arg = n->view;
	m->serial = (node_clean(n) ? MK_CLEAN : 0) | ((uint64_t)sub << MK_SUB_SHIFT) |
	    (lease << MK_LEASE_SHIFT);
	m->flags = try_once ? DM_MSG_F_TRY : 0;
	dm_send(e, to, m);
}

static void
mk_send_sub(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once, uint8_t sub)
{
	mk_send_full(e, l, to, kind, seq, try_once, sub, 0);
}

/* An arbiter's answer to w, acknowledging its lease round if we may. */
static void
mk_answer(struct dm_engine *e, struct dm_lock *l, const struct mk_wait *w, uint8_t kind)
{
	uint64_t lease = w->lease != 0 && dm_lease_may_ack(e, w->slot) ? w->lease : 0;

	mk_send_full(e, l, w->slot, kind, w->seq, false, 0, lease);
}

static void
mk_send(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, uint8_t kind, uint64_t seq,
    bool try_once)
{
	mk_send_sub(e, l, to, kind, seq, try_once, 0);
}

static void
mk_drain(struct dm_engine *e)
{
	struct mk_node *n = mk_node(e);

	if (n->draining)
		return;
	n->draining = true;
	while (n->selfq_n > 0) {
		struct mk_self_msg q = n->selfq[0];
		memmove(&n->selfq[0], &n->selfq[1], (n->selfq_n - 1) * sizeof(n->selfq[0]));
		n->selfq_n--;
		mk_dispatch(e, q.l, dm_roster_self(e), q.kind, q.seq, q.view, q.try_once,
		    node_clean(n), 0);
	}
	n->draining = false;
}

/* --- Activity accounting (what makes a node "unclean") --- */

static void
act_begin(struct mk_node *n, uint32_t *gen)
{
	*gen = n->gen;
	n->act_total++;
}

static void
act_end(struct mk_node *n, uint32_t gen)
{
	n->act_total--;
	if (gen != n->gen)
		n->act_old--;
}

/* --- Arbiter --- */

/* Does (seq a, slot ja) precede (seq b, slot jb)? */
static bool
precedes(struct dm_engine *e, uint64_t a, dm_slot_t ja, uint64_t b, dm_slot_t jb)
{
	return a < b || (a == b && dm_roster_compare(e, ja, jb) < 0);
}

static int
wait_most_preceding(struct dm_engine *e, const struct mk_lock *s, uint64_t view)
{
	int best = -1;

	for (int i = 0; i < s->n_wait; i++) {
		if (s->wait[i].view != view)
			continue;	/* another view: not grantable here */
		if (best < 0 || precedes(e, s->wait[i].seq, s->wait[i].slot,
		    s->wait[best].seq, s->wait[best].slot))
			best = i;
	}
	return best;
}

static void
wait_drop(struct mk_lock *s, int i)
{
	memmove(&s->wait[i], &s->wait[i + 1], (size_t)(s->n_wait - i - 1) * sizeof(s->wait[0]));
	if (--s->n_wait == 0) {
		free(s->wait);
		s->wait = NULL;
		s->cap_wait = 0;
	}
}

static int
wait_find(const struct mk_lock *s, dm_slot_t j)
{
	for (int i = 0; i < s->n_wait; i++)
		if (s->wait[i].slot == j)
			return i;
	return -1;
}

static int
wait_add(struct mk_lock *s, const struct mk_wait *w)
{
	if (s->n_wait == s->cap_wait) {
		size_t cap = s->cap_wait ? s->cap_wait * 2u : 4u;
		struct mk_wait *p;
		if (cap > DM_NODES_MAX)
			cap = DM_NODES_MAX;
		if (s->n_wait >= cap)
			return -ENOSPC;
		p = realloc(s->wait, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		s->wait = p;
		s->cap_wait = (uint16_t)cap;
	}
	s->wait[s->n_wait++] = *w;
	return 0;
}

static void
arb_lock(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, const struct mk_wait *w)
{
	s->voted = true;
	s->inquire_sent = false;
	s->vote = *w;
	act_begin(mk_node(e), &s->vote_gen);
	mk_answer(e, l, w, DM_MK_LOCKED);
}

static void
arb_unlock(struct dm_engine *e, struct mk_lock *s)
{
	s->voted = false;
	s->inquire_sent = false;
	act_end(mk_node(e), s->vote_gen);
}

/* Restore the arbiter's invariants after any change:
 *  - unlocked and a grantable request waits: lock for the most preceding;
 *  - every queued request that another precedes has been sent FAILED;
 *  - a queued request precedes the locking one: one INQUIRE is out. */
static void
arb_settle(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	uint64_t view = arb_view(l, mk_node(e)->view);
	int best = wait_most_preceding(e, s, view);

	if (!s->voted && best >= 0) {
		struct mk_wait w = s->wait[best];
		wait_drop(s, best);
		arb_lock(e, l, s, &w);
		best = wait_most_preceding(e, s, view);
	}
	for (int i = 0; i < s->n_wait; i++) {
		struct mk_wait *w = &s->wait[i];
		bool preceded = (s->voted && precedes(e, s->vote.seq, s->vote.slot, w->seq, w->slot)) ||
		    (best >= 0 && best != i);
		if (w->view != view) {
			if (!w->stale_sent) {
				w->stale_sent = true;
				mk_send(e, l, w->slot, DM_MK_STALE, w->seq, false);
			}
			continue;
		}
		if (preceded && !w->failed_sent) {
			w->failed_sent = true;
			mk_answer(e, l, w, DM_MK_FAILED);
		}
	}
	if (s->voted && !s->inquire_sent &&
	    ((best >= 0 && precedes(e, s->wait[best].seq, s->wait[best].slot, s->vote.seq,
	    s->vote.slot)) || (s->vote.view != view && s->n_wait > 0))) {
		s->inquire_sent = true;
		mk_send(e, l, s->vote.slot, DM_MK_INQUIRE, s->vote.seq, false);
	}
}

static void
arb_on_request(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t j,
    uint64_t seq, uint64_t view, bool try_once)
{
	/* "(2) Upon receiving a REQUEST, a member node of S_i marks itself locked
	 *  for the REQUEST if it is not currently locked for another REQUEST ...
	 *  Otherwise the REQUEST is placed in the WAITING QUEUE." */
	struct mk_node *n = mk_node(e);
	struct mk_wait w = { .seq = seq, .view = arb_view(l, view), .slot = j, .lease = n->in_lease };
	int i;

	if ((i = wait_find(s, j)) >= 0) {
		if (s->wait[i].seq >= seq)
			return;			/* duplicate */
		wait_drop(s, i);		/* an older, withdrawn request */
	}
	if (s->voted && s->vote.slot == j) {
		if (s->vote.seq >= seq) {
			mk_send(e, l, j, DM_MK_LOCKED, s->vote.seq, false);	/* duplicate */
			return;
		}
		arb_unlock(e, s);		/* FIFO: the old one was given up */
	}
	if (try_once) {
		if (!s->voted && w.view == arb_view(l, n->view) &&
		    wait_most_preceding(e, s, w.view) < 0)
			arb_lock(e, l, s, &w);
		else
			mk_answer(e, l, &w, DM_MK_BUSY);
		arb_settle(e, l, s);
		return;
	}
	if (wait_add(s, &w) < 0) {
		dm_log(e, DM_LOG_ERR, "maekawa: out of memory queueing a request", l, j);
		return;
	}
	arb_settle(e, l, s);
}

/* RELEASE or RELINQUISH of (j, seq); relinquish puts it back in the queue. */
static void
arb_on_give_back(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t j,
    uint64_t seq, bool relinquish)
{
	/* "(4) ... relieves itself of the current locking REQUEST and then locks
	 *  itself for the most preceding REQUEST in the WAITING QUEUE."
	 * "(7) ... deletes this locking REQUEST and then relocks itself ..." */
	int i;

	if (s->voted && s->vote.slot == j && s->vote.seq == seq) {
		struct mk_wait back = s->vote;
		arb_unlock(e, s);
		if (relinquish) {
			back.failed_sent = true;	/* the requester knows */
			if (wait_add(s, &back) < 0)
				dm_log(e, DM_LOG_ERR, "maekawa: out of memory", l, j);
		}
	} else if (!relinquish && (i = wait_find(s, j)) >= 0 && s->wait[i].seq == seq) {
		wait_drop(s, i);
	}
	arb_settle(e, l, s);
}

/* Has this arbiter no record of j's request seq nor of a newer one? */
static bool
arb_unknown(const struct mk_lock *s, dm_slot_t j, uint64_t seq)
{
	int i = wait_find(s, j);

	if (s->voted && s->vote.slot == j && s->vote.seq >= seq)
		return false;
	return i < 0 || s->wait[i].seq < seq;
}

/* --- Requester --- */

static void
req_enter_if_done(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	/* "(5) If all members of S_i have returned a LOCKED message, node i
	 *  enters its critical section." */
	if (!s->requesting || s->in_cs || s->n_locked < s->n_members)
		return;
	s->in_cs = true;
	memset(s->inquired, 0, sizeof(s->inquired));	/* answered by RELEASE */
	mk_ensure_timer(e, l);
	dm_lock_permitted(e, l);
}

static void
req_arm(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);

	s->timer_on = true;
	s->probing = false;
	dm_lock_timer_arm(e, l, dm_now(e) + dm_request_timeout(e));
}

/* The timer runs while we wait for votes, or hold a vote others wait for. */
static void
mk_ensure_timer(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);
	bool need = (s->requesting && !s->in_cs) || (s->voted && s->n_wait > 0);

	if (need && !s->timer_on)
		req_arm(e, l);
	else if (!need && s->timer_on) {
		s->timer_on = false;
		dm_lock_timer_stop(e, l);
	}
}

/* Send REQUEST(seq) to S_i (or to every member while not all are clean). */
static int
req_issue(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	struct mk_node *n = mk_node(e);
	int r;

	s->all_mode = !all_clean(e) || name_reserved(dm_lock_name(l), strlen(dm_lock_name(l)));
	if (!s->all_mode && (r = mk_compute_set(e)) < 0)
		return r;
	s->our_seq = ++n->highest_seq;
	s->req_view = n->view;
	act_begin(n, &s->req_gen);
	s->n_members = s->n_locked = 0;
	memset(s->member, 0, sizeof(s->member));
	memset(s->locked, 0, sizeof(s->locked));
	memset(s->failed, 0, sizeof(s->failed));
	memset(s->inquired, 0, sizeof(s->inquired));
	memset(s->probed, 0, sizeof(s->probed));
	if (s->all_mode) {
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (mk_member(e, j)) {
				dm_bit_set(s->member, j, true);
				s->n_members++;
			}
	} else {
		for (unsigned i = 0; i < n->set_n; i++) {
			dm_bit_set(s->member, n->set[i], true);
			s->n_members++;
		}
	}
	/* The REQUEST doubles as a lease round (majority policy); members
	 * outside S_i get the engine's own HEARTBEAT of the same round, so the
	 * lease needs no extra round trip after the last LOCKED. */
	s->lease_serial = dm_lease_round(e);
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->member, j))
			mk_send_full(e, l, (dm_slot_t)j, DM_MK_REQUEST, s->our_seq, s->try_once, 0,
			    s->lease_serial);
	if (s->lease_serial != 0 && !s->all_mode) {
		struct dm_msg *m = dm_msg_begin(e, DM_MSG_HEARTBEAT, NULL);
		m->token = 0;
		m->serial = s->lease_serial;
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (!dm_bit_get(s->member, j) && j != dm_roster_self(e))
				dm_send(e, j, m);
	}
	return 0;
}

/* "(6) Upon completing the critical section, node i sends a RELEASE message
 * to each member of S_i" - also to withdraw a request. */
static void
req_give_up(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	if (!s->requesting)
		return;
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->member, j))
			mk_send(e, l, (dm_slot_t)j, DM_MK_RELEASE, s->our_seq, false);
	act_end(mk_node(e), s->req_gen);
	s->requesting = false;
	s->in_cs = false;
	memset(s->member, 0, sizeof(s->member));
	s->n_members = s->n_locked = 0;
}

/* The view changed under a request not yet in its critical section. */
static void
req_reissue_if_stale(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	struct mk_node *n = mk_node(e);

	if (!s->requesting || s->in_cs || s->req_view == n->view)
		return;
	req_give_up(e, l, s);
	s->requesting = true;
	if (req_issue(e, l, s) < 0) {
		s->requesting = false;
		dm_lock_refused(e, l, -ENOMEM);
	}
}

static void
req_relinquish(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t x)
{
	/* "(3) ... returns a RELINQUISH message ... The node cancels the LOCKED
	 *  message previously received from the member node." */
	dm_bit_set(s->inquired, x, false);
	if (!dm_bit_get(s->locked, x))
		return;
	dm_bit_set(s->locked, x, false);
	dm_bit_set(s->failed, x, true);
	s->n_locked--;
	mk_send(e, l, x, DM_MK_RELINQUISH, s->our_seq, false);
}

static bool
req_knows_it_fails(const struct mk_lock *s)
{
	for (size_t i = 0; i < sizeof(s->failed); i++)
		if (s->failed[i])
			return true;
	return false;
}

static void
req_answer_inquiries(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(s->inquired, j))
			req_relinquish(e, l, s, (dm_slot_t)j);
}

static bool
req_current(const struct mk_lock *s, dm_slot_t x, uint64_t seq)
{
	return s != NULL && s->requesting && !s->in_cs && seq == s->our_seq &&
	    dm_bit_get(s->member, x);
}

/* --- Dispatch --- */

static void
mk_dispatch(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, uint8_t kind, uint64_t seq,
    uint64_t view, bool try_once, bool clean, uint8_t sub)
{
	struct mk_lock *s = dm_lock_state(l);
	struct mk_node *n = mk_node(e);

	dm_bit_set(s->answered, from, true);
	/* A clean report counts only if it answers a request we made in this
	 * view (sent after our last view change): a message sent before a
	 * member left and came back under the same name carries the same
	 * view fingerprint but says nothing about the member's state now. */
	if ((kind == DM_MK_LOCKED || kind == DM_MK_FAILED || kind == DM_MK_BUSY ||
	    kind == DM_MK_STALE) && s->requesting && seq == s->our_seq && s->req_gen == n->gen)
		mk_note_clean(e, from, view, clean);
	req_reissue_if_stale(e, l, s);
	switch (kind) {
	case DM_MK_REQUEST:
		if (seq > n->highest_seq)
			n->highest_seq = seq;
		arb_on_request(e, l, s, from, seq, view, try_once);
		break;
	case DM_MK_RELEASE:
		arb_on_give_back(e, l, s, from, seq, false);
		break;
	case DM_MK_RELINQUISH:
		arb_on_give_back(e, l, s, from, seq, true);
		break;
	case DM_MK_LOCKED:
		if (!req_current(s, from, seq)) {
			/* A vote we no longer want (withdrawn, re-issued, or we
			 * are in the CS and this is a duplicate): give it back. */
			if (!(s->requesting && seq == s->our_seq && dm_bit_get(s->locked, from)))
				mk_send(e, l, from, DM_MK_RELEASE, seq, false);
			break;
		}
		dm_bit_set(s->failed, from, false);
		if (!dm_bit_get(s->locked, from)) {
			dm_bit_set(s->locked, from, true);
			s->n_locked++;
		}
		req_enter_if_done(e, l, s);
		break;
	case DM_MK_FAILED:
		if (!req_current(s, from, seq))
			break;
		dm_bit_set(s->failed, from, true);
		req_answer_inquiries(e, l, s);
		break;
	case DM_MK_INQUIRE:
		/* "(3) ... returns a RELINQUISH message if it knows that it will
		 *  not succeed ... If an INQUIRE message has arrived before it is
		 *  known whether the node will succeed or fail, a reply is
		 *  deferred until this becomes known.  If an INQUIRE message has
		 *  arrived after the node has sent a RELEASE message, it is
		 *  simply ignored." */
		if (!req_current(s, from, seq) || !dm_bit_get(s->locked, from))
			break;
		if (req_knows_it_fails(s))
			req_relinquish(e, l, s, from);
		else
			dm_bit_set(s->inquired, from, true);
		break;
	case DM_MK_BUSY:
		if (!req_current(s, from, seq) || !s->try_once)
			break;
		req_give_up(e, l, s);
		dm_lock_refused(e, l, -EBUSY);
		break;
	case DM_MK_STALE:
		/* The arbiter sees another view: if ours is the old one,
		 * req_reissue_if_stale() above has re-issued; else wait for it. */
		break;
	case DM_MK_ARE_YOU_THERE:
		mk_send(e, l, from, DM_MK_YES_I_AM_HERE, seq, false);
		if (sub == MK_PROBE_REQUESTER && arb_unknown(s, from, seq)) {
			/* Its REQUEST never reached us (the engine drops what
			 * arrives while we are still joining): the probe
			 * carries it. */
			if (seq > n->highest_seq)
				n->highest_seq = seq;
			arb_on_request(e, l, s, from, seq, view, try_once);
		} else if (sub == MK_PROBE_ARBITER &&
		    !(s->requesting && seq == s->our_seq && dm_bit_get(s->member, from))) {
			/* It counts us as holding its vote for a request we no
			 * longer make: give it back (idempotent). */
			mk_send(e, l, from, DM_MK_RELEASE, seq, false);
		}
		if (s->voted || s->n_wait > 0)
			arb_settle(e, l, s);	/* view may have changed: re-evaluate */
		break;
	default:
		break;
	}
}

/* --- Algorithm entry points --- */

static int
mk_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	struct mk_lock *s = dm_lock_state(l);
	int r;

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	mk_sync_view(e);
	s->requesting = true;
	s->in_cs = false;
	s->try_once = try_once;
	r = req_issue(e, l, s);
	if (r < 0) {
		s->requesting = false;
		return r;
	}
	mk_drain(e);
	mk_ensure_timer(e, l);
	return 0;
}

static void
mk_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	mk_sync_view(e);
	req_give_up(e, l, dm_lock_state(l));
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static void
mk_release(struct dm_engine *e, struct dm_lock *l)
{
	mk_sync_view(e);
	req_give_up(e, l, dm_lock_state(l));
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static bool
mk_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	/* Only the arbiters know who waits; hand over locally only when our own
	 * vote has no queue and nobody inquired (a remote waiter elsewhere is
	 * bounded by the next full round). */
	return false;
}

/* A node that is not (yet) an active member is asked for the roster lock by
 * a sponsor that already counts it (the engine passes only these messages
 * on while we join).  It never wants that lock: vote at once and keep no
 * state, like a Ricart-Agrawala REPLY.  Safe because roster-lock requests
 * ask every member, so two of them still meet at every active member. */
static int
mk_receive_not_member(struct dm_engine *e, dm_slot_t from, const struct dm_msg *m)
{
	struct dm_msg *a;
	uint8_t sub = (uint8_t)((m->serial >> MK_SUB_SHIFT) & 3u);

	if (m->kind == DM_MK_ARE_YOU_THERE) {
		a = dm_msg_begin(e, DM_MK_YES_I_AM_HERE, NULL);
		a->lock_len = m->lock_len;
		memcpy(a->lock, m->lock, m->lock_len + 1u);
		a->seq = m->seq;
		dm_send(e, from, a);
	}
	if (m->kind != DM_MK_REQUEST &&
	    !(m->kind == DM_MK_ARE_YOU_THERE && sub == MK_PROBE_REQUESTER))
		return 0;
	a = dm_msg_begin(e, DM_MK_LOCKED, NULL);
	a->lock_len = m->lock_len;
	memcpy(a->lock, m->lock, m->lock_len + 1u);
	a->seq = m->seq;
	a->arg = mk_node(e)->view;
	dm_send(e, from, a);
	return 0;
}

static bool
mk_ready(const struct dm_engine *e)
{
	struct dm_engine_stats st;

	dm_engine_get_stats(e, &st);
	return st.ready;
}

static int
mk_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct mk_node *n = mk_node(e);
	uint64_t lease;

	if (m->kind < DM_MK_REQUEST || m->kind > DM_MK_YES_I_AM_HERE)
		return -EPROTO;
	if (name_reserved(m->lock, m->lock_len) && !mk_ready(e))
		return mk_receive_not_member(e, from, m);
	mk_sync_view(e);
	if (l == NULL) {
		if (m->kind == DM_MK_ARE_YOU_THERE || m->kind == DM_MK_REQUEST ||
		    m->kind == DM_MK_LOCKED)
			l = dm_lock_get(e, m->lock, m->lock_len, true);
		if (l == NULL)
			return 0;	/* nothing to forget, nothing owed */
	}
	lease = m->serial >> MK_LEASE_SHIFT;
	if (lease != 0 && (m->kind == DM_MK_LOCKED || m->kind == DM_MK_FAILED ||
	    m->kind == DM_MK_BUSY))
		dm_lease_ack(e, from, lease);	/* the answer acknowledges our lease round */
	n->in_lease = m->kind == DM_MK_REQUEST || m->kind == DM_MK_ARE_YOU_THERE ? lease : 0;
	mk_dispatch(e, l, from, m->kind, m->seq, m->arg, (m->flags & DM_MSG_F_TRY) != 0,
	    (m->serial & MK_CLEAN) != 0, (uint8_t)((m->serial >> MK_SUB_SHIFT) & 3u));
	n->in_lease = 0;
	mk_drain(e);
	mk_ensure_timer(e, l);
	return 0;
}

static void
mk_timer(struct dm_engine *e, struct dm_lock *l)
{
	/* RA §7.4: "If the timer expires, all nodes for which Awaiting_Reply is
	 * TRUE are suspected ... A probing message ... If no answer is received
	 * during a second timeout period, the suspect node has failed."  Here:
	 * after the request timeout probe the arbiters that have not voted
	 * (and, as an arbiter with waiters, the holder of our vote); after the
	 * probe timeout suspect the silent ones; then a new request timeout. */
	struct mk_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);
	uint8_t suspects[DM_NODES_MAX / 8];
	bool waiting, was_probing = s->probing;

	s->timer_on = false;
	s->probing = false;
	mk_sync_view(e);
	req_reissue_if_stale(e, l, s);
	if (s->voted || s->n_wait > 0)
		arb_settle(e, l, s);
	memset(suspects, 0, sizeof(suspects));
	if (was_probing) {
		for (size_t i = 0; i < sizeof(suspects); i++)
			suspects[i] = (uint8_t)(s->probed[i] & ~s->answered[i]);
		memset(s->probed, 0, sizeof(s->probed));
	} else {
		waiting = s->requesting && !s->in_cs;
		memset(s->answered, 0, sizeof(s->answered));
		memset(s->probed, 0, sizeof(s->probed));
		if (waiting)
			for (size_t j = 0; j < DM_NODES_MAX; j++)
				if (dm_bit_get(s->member, j) && !dm_bit_get(s->locked, j) && j != self) {
					dm_bit_set(s->probed, j, true);
					mk_send_full(e, l, (dm_slot_t)j, DM_MK_ARE_YOU_THERE,
					    s->our_seq, s->try_once, MK_PROBE_REQUESTER,
					    s->lease_serial);
				}
		if (s->voted && s->n_wait > 0 && s->vote.slot != self) {
			dm_bit_set(s->probed, s->vote.slot, true);
			mk_send_sub(e, l, s->vote.slot, DM_MK_ARE_YOU_THERE, s->vote.seq, false,
			    MK_PROBE_ARBITER);
		}
	}
	mk_drain(e);
	waiting = s->requesting && !s->in_cs;
	if (waiting || (s->voted && s->n_wait > 0)) {
		s->timer_on = true;
		s->probing = !was_probing;
		dm_lock_timer_arm(e, l, dm_now(e) +
		    (s->probing ? dm_probe_timeout(e) : dm_request_timeout(e)));
	}
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if (dm_bit_get(suspects, j))
			dm_roster_suspect(e, (dm_slot_t)j);	/* may re-enter peer_gone */
}

static void
mk_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* "Act as if every answer it owes arrived, forget what we owe it."  As
	 * an arbiter: its request and its hold on our vote are forgotten.  As
	 * a requester: the gone node may have been an arbiter holding our vote;
	 * the view changes with it, so a request not yet in its critical
	 * section is re-issued under the new sets (never counted as granted). */
	struct mk_lock *s = dm_lock_state(l);
	int i;

	mk_sync_view(e);	/* the departing slot is no longer a member */
	dm_bit_set(s->answered, slot, false);
	dm_bit_set(s->probed, slot, false);
	dm_bit_set(s->inquired, slot, false);
	if ((i = wait_find(s, slot)) >= 0)
		wait_drop(s, i);
	if (s->voted && s->vote.slot == slot)
		arb_unlock(e, s);
	if (dm_bit_get(s->member, slot)) {
		dm_bit_set(s->member, slot, false);
		if (dm_bit_get(s->locked, slot)) {
			dm_bit_set(s->locked, slot, false);
			s->n_locked--;
		}
		s->n_members--;
	}
	req_reissue_if_stale(e, l, s);
	arb_settle(e, l, s);
	mk_drain(e);
	mk_ensure_timer(e, l);
}

static void
mk_lock_fini(struct dm_engine *e, struct dm_lock *l)
{
	struct mk_lock *s = dm_lock_state(l);
	struct mk_node *n = mk_node(e);

	free(s->wait);
	s->wait = NULL;
	s->n_wait = s->cap_wait = 0;
	/* Self-messages for this lock must not outlive it. */
	for (unsigned i = 0; i < n->selfq_n;)
		if (n->selfq[i].l == l) {
			memmove(&n->selfq[i], &n->selfq[i + 1],
			    (n->selfq_n - i - 1) * sizeof(n->selfq[0]));
			n->selfq_n--;
		} else {
			i++;
		}
}

static bool
mk_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct mk_lock *s = dm_lock_state_const(l);

	return !s->requesting && !s->voted && s->n_wait == 0;
}

static uint64_t
mk_clock_get(const struct dm_engine *e)
{
	const struct mk_node *n = dm_algo_node_state_const(e);

	return n->highest_seq;
}

static void
mk_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct mk_node *n = mk_node(e);

	if (seq > n->highest_seq)
		n->highest_seq = seq;
}

const struct dm_algorithm dm_algo_maekawa = {
	.name = "maekawa",
	.caps = DM_CAP_SURVIVES_FAILURE | DM_CAP_NEEDS_FIFO,
	.lock_state_size = sizeof(struct mk_lock),
	.node_state_size = sizeof(struct mk_node),
	.request = mk_request,
	.withdraw = mk_withdraw,
	.release = mk_release,
	.may_handoff = mk_may_handoff,
	.receive = mk_receive,
	.timer = mk_timer,
	.peer_gone = mk_peer_gone,
	.lock_fini = mk_lock_fini,
	.idle = mk_idle,
	.clock_get = mk_clock_get,
	.clock_merge = mk_clock_merge,
};
