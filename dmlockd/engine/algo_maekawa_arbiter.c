/*
 * algo_maekawa_arbiter.c: Maekawa's arbiter (§4 steps 2, 4, 7): the vote
 * (the locking REQUEST), the WAITING QUEUE in precedence order, FAILED to
 * every queued request another precedes, one INQUIRE to the holder of our
 * vote when a preceding request waits, and RELEASE/RELINQUISH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algo_maekawa.h"

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

void
mk_wait_drop(struct mk_lock *s, int i)
{
	memmove(&s->wait[i], &s->wait[i + 1], (size_t)(s->n_wait - i - 1) * sizeof(s->wait[0]));
	if (--s->n_wait == 0) {
		free(s->wait);
		s->wait = NULL;
		s->cap_wait = 0;
	}
}

int
mk_wait_find(const struct mk_lock *s, dm_slot_t j)
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

/* A process restarted from the static roster gives no vote until no
 * member can still hold one of its earlier process (dm_static_hello.c):
 * requests wait in the queue, told FAILED.  Not the engine's roster lock,
 * whose requests ask every member: the holder of an earlier vote holds its
 * own vote too, and the restarted process's own join votes must go. */
static bool
votes_held(const struct dm_engine *e, const struct dm_lock *l)
{
	const char *name = dm_lock_name(l);

	return dm_votes_held_back(e) && !mk_name_reserved(name, strlen(name));
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

void
mk_arb_unlock(struct dm_engine *e, struct mk_lock *s)
{
	s->voted = false;
	s->inquire_sent = false;
	act_end(mk_node(e), s->vote_gen);
}

/* Restore the arbiter's invariants after any change:
 *  - unlocked and a grantable request waits: lock for the most preceding;
 *  - every queued request that another precedes has been sent FAILED;
 *  - a queued request precedes the locking one: one INQUIRE is out. */
void
mk_arb_settle(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s)
{
	uint64_t view = mk_arb_view(l, mk_node(e)->view);
	int best = wait_most_preceding(e, s, view);
	bool held = votes_held(e, l);

	if (!s->voted && best >= 0 && !held) {
		struct mk_wait w = s->wait[best];
		mk_wait_drop(s, best);
		arb_lock(e, l, s, &w);
		best = wait_most_preceding(e, s, view);
	}
	for (int i = 0; i < s->n_wait; i++) {
		struct mk_wait *w = &s->wait[i];
		bool preceded = (s->voted && precedes(e, s->vote.seq, s->vote.slot, w->seq, w->slot)) ||
		    (best >= 0 && best != i) || held;
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

void
mk_arb_on_request(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t j,
    uint64_t seq, uint64_t view, bool try_once)
{
	/* "(2) Upon receiving a REQUEST, a member node of S_i marks itself locked
	 *  for the REQUEST if it is not currently locked for another REQUEST ...
	 *  Otherwise the REQUEST is placed in the WAITING QUEUE." */
	struct mk_node *n = mk_node(e);
	struct mk_wait w = { .seq = seq, .view = mk_arb_view(l, view), .slot = j, .lease = n->in_lease };
	int i;

	if ((i = mk_wait_find(s, j)) >= 0) {
		if (s->wait[i].seq >= seq)
			return;			/* duplicate */
		mk_wait_drop(s, i);		/* an older, withdrawn request */
	}
	if (s->voted && s->vote.slot == j) {
		if (s->vote.seq >= seq) {
			mk_send(e, l, j, DM_MK_LOCKED, s->vote.seq, false);	/* duplicate */
			return;
		}
		mk_arb_unlock(e, s);		/* FIFO: the old one was given up */
	}
	if (try_once) {
		if (!s->voted && !votes_held(e, l) && w.view == mk_arb_view(l, n->view) &&
		    wait_most_preceding(e, s, w.view) < 0)
			arb_lock(e, l, s, &w);
		else
			mk_answer(e, l, &w, DM_MK_BUSY);
		mk_arb_settle(e, l, s);
		return;
	}
	if (wait_add(s, &w) < 0) {
		dm_log(e, DM_LOG_ERR, "maekawa: out of memory queueing a request", l, j);
		return;
	}
	mk_arb_settle(e, l, s);
}

/* RELEASE or RELINQUISH of (j, seq); relinquish puts it back in the queue. */
void
mk_arb_on_give_back(struct dm_engine *e, struct dm_lock *l, struct mk_lock *s, dm_slot_t j,
    uint64_t seq, bool relinquish)
{
	/* "(4) ... relieves itself of the current locking REQUEST and then locks
	 *  itself for the most preceding REQUEST in the WAITING QUEUE."
	 * "(7) ... deletes this locking REQUEST and then relocks itself ..." */
	int i;

	if (s->voted && s->vote.slot == j && s->vote.seq == seq) {
		struct mk_wait back = s->vote;
		mk_arb_unlock(e, s);
		if (relinquish) {
			back.failed_sent = true;	/* the requester knows */
			if (wait_add(s, &back) < 0)
				dm_log(e, DM_LOG_ERR, "maekawa: out of memory", l, j);
		}
	} else if (!relinquish && (i = mk_wait_find(s, j)) >= 0 && s->wait[i].seq == seq) {
		mk_wait_drop(s, i);
	}
	mk_arb_settle(e, l, s);
}

/* Has this arbiter no record of j's request seq nor of a newer one? */
bool
mk_arb_unknown(const struct mk_lock *s, dm_slot_t j, uint64_t seq)
{
	int i = mk_wait_find(s, j);

	if (s->voted && s->vote.slot == j && s->vote.seq >= seq)
		return false;
	return i < 0 || s->wait[i].seq < seq;
}
