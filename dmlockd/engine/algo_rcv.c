/*
 * algo_rcv.c: relative consensus voting (RCV), one instance per lock name:
 * the MPM algorithm of §4.1 (request, RM/EM/IM handlers, release) on top of
 * the SI table of algo_rcv_table.c.  J. Cao, J. Zhou, D. Chen, J. Wu, "An
 * Efficient Distributed Mutual Exclusion Algorithm Based on Relative
 * Consensus Voting", IPDPS 2004.
 *
 *   "A node requesting the CS sends out the request message which will roam
 *    in the network ... until the requesting node obtains enough
 *    permissions to decide its order to enter the CS." (Abstract)
 *   "If the MPM finds that a tuple has the highest rank, it immediately
 *    sends an EM message to the tuple's home node.  If the tuple hasn't the
 *    highest rank, its immediate preceding tuple's home node will be
 *    informed by an IM ... After a node finishes executing the CS, it will
 *    send an EM message to its successor." (§4)
 *
 * What this file adds to the paper (which assumes no failures), and why it
 * is safe -- the full argument is in NOTES-rcv.md:
 *  - Generations.  Every roster change this node sees (removal, leave, join,
 *    restart) starts a new generation of the SI: a number above every one
 *    seen, with a fingerprint of the roster.  Messages carry both (serial,
 *    arg); one of another generation is discarded (an older one is answered
 *    STALE so its sender catches up).  On entering a generation a lock's SI
 *    restarts empty; a pending request is issued again as a new tuple; a
 *    node inside its CS registers a HOLDER tuple; a withdrawn request is
 *    dropped.  The first decision of a generation needs every member's row
 *    of that generation, and orders a HOLDER first: so every member has left
 *    the old generation (and will never enter through it) and whoever is
 *    still in its CS from before is ordered ahead of everyone.
 *  - Timeouts (the lock's algorithm timer): a request neither entered nor
 *    known to be ordered probes every member; members that stay silent are
 *    suspected through the roster (majority confirmation, removal, new
 *    generation); then the RM is sent out again, so a request lost with a
 *    failed node is regenerated.  Duplicate RMs, EMs and IMs are harmless:
 *    each names the tuple it is about.
 *  - The engine's locks (".dmlock/...", the roster lock) are not run by
 *    RCV but by every member's permission (algo_rcv_roster.c): they must
 *    be granted while members' rosters differ -- they are how rosters
 *    converge -- and RCV needs one roster (seed 289/4).
 *  - Joining members take no part: only the roster lock's messages reach
 *    a node still joining, and RCV does not run that lock.  (An earlier
 *    ABSENT answer for rows of joining nodes went with the roster lock's
 *    move out of RCV; its message number stays retired.)
 *  - Forwarding: the RM goes to an unvisited node whose row casts no vote
 *    yet (§4.1 line 51 allows any unvisited node; see rcv_rm_candidates).
 *  - Withdraw (client gave up) and try-once: the tuple cannot be taken back
 *    from the MNLs it reached, so it becomes a ghost that passes the CS on
 *    at once when its EM comes.  A try-once RM ordered behind another tuple
 *    is answered BUSY (one extra message) and becomes a ghost.
 *  - Node ids are ranks in the name-sorted roster (identical on every member
 *    of one generation); the SI travels in the payload (algo_rcv_table.c).
 *  - Shared mode is not offered (DM_CAP_SHARED unset).
 */
#include <errno.h>
#include <string.h>

#include "algo_rcv.h"
#include "dm_algorithm.h"

#define RCV_F_MSG_ORDERED	(DM_MSG_F_TRY | DM_MSG_F_MEMBER)	/* PROBE_ACK: your tuple is in our NONL */

enum rcv_timer_phase {
	RCV_TIMER_NONE = 0,
	RCV_TIMER_WAIT,		/* waiting to be ordered and entered */
	RCV_TIMER_PROBE,	/* probe answers awaited */
};

struct rcv_node {
	uint64_t	 gen;		/* current generation; 0 before the first sync */
	uint64_t	 gen_seen;	/* highest generation seen in any message */
	uint64_t	 fp;		/* fingerprint of the roster of gen */
	uint64_t	 clock;		/* timestamps of tuples and row versions */
	bool		 joined;	/* took part in a generation others started */
	bool		 was_out;	/* was not a member (joining) since the last sync */
	uint64_t	 slots_sig;	/* roster names with their local slots (not sent) */
	uint64_t	 inc_of[RCV_NODES_MAX];	/* incarnation of each rank seen in gen */
	uint16_t	 n, self_rank;
	dm_slot_t	 slot_of[RCV_NODES_MAX];	/* rank -> local slot */
	uint16_t	 rank_of[DM_NODES_MAX];		/* local slot -> rank */
	struct rcv_table scratch;	/* the SI of the message being handled */
	struct rcv_table_space scratch_space;
};

struct rcv_lock {
	uint64_t	 gen;		/* generation of t; 0: none */
	uint64_t	 own_ts;	/* our current tuple */
	uint64_t	 next_ts;
	uint16_t	 next;		/* SI.Next: rank, or RCV_RANK_NONE */
	bool		 requesting;	/* our tuple is pending (not entered yet) */
	bool		 in_cs;
	bool		 ghost;		/* withdrawn: pass the CS on when it comes */
	bool		 try_once;
	bool		 ordered_hint;	/* a probe answer: our tuple is ordered */
	uint8_t		 timer_phase;
	uint8_t		 rounds;	/* probe rounds that found us ordered */
	uint8_t		 answered[DM_NODES_MAX / 8];
	struct rcv_table t;		/* sized for its generation (rcv_lock_sync()) */
	struct rcv_rl	 rl;		/* the engine's locks only (algo_rcv_roster.c) */
};

/* The engine's locks (the roster lock) are not run by RCV: see
 * algo_rcv_roster.c (seed 289/4). */
static bool
rcv_reserved(const struct dm_lock *l)
{
	const char *name = dm_lock_name(l);

	return rcv_rl_name(name, strlen(name));
}

/* --- Roster and generations --- */

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix64(h);
}

static uint64_t
roster_fingerprint(const struct dm_engine *e)
{
	uint64_t fp = mix64(dm_roster_size(e) + 1);

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		fp += name_hash(dm_roster_name(e, j));
	return fp;
}

static void
rcv_build_ranks(struct dm_engine *e, struct rcv_node *n)
{
	uint16_t k = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE && k < RCV_NODES_MAX;
	    j = dm_roster_next(e, j)) {
		/* insertion sort by name */
		uint16_t i = k++;
		while (i > 0 && dm_roster_compare(e, n->slot_of[i - 1], j) > 0) {
			n->slot_of[i] = n->slot_of[i - 1];
			i--;
		}
		n->slot_of[i] = j;
	}
	n->n = k;
	for (size_t s = 0; s < DM_NODES_MAX; s++)
		n->rank_of[s] = RCV_RANK_NONE;
	for (uint16_t r = 0; r < k; r++)
		n->rank_of[n->slot_of[r]] = r;
	n->self_rank = n->rank_of[dm_roster_self(e)];
}

/* A generation begins here: no member's incarnation is known in it yet. */
static void
rcv_gen_begin(struct rcv_node *n)
{
	memset(n->inc_of, 0, sizeof(n->inc_of));
}

/* The local slots of the roster's names: the same names may come back in
 * other slots (a member removed and added again, or we rejoined), and the
 * rank -> slot map must follow. */
static uint64_t
roster_slots_signature(const struct dm_engine *e)
{
	uint64_t sig = 0;

	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		sig += mix64(name_hash(dm_roster_name(e, j)) + j + 1u);
	return sig;
}

/* A roster change starts a new generation above every one seen; so does
 * coming back as a member after a spell outside (joining again): the
 * names may be the same, but the slots may not be. */
static struct rcv_node *
rcv_sync(struct dm_engine *e)
{
	struct rcv_node *n = dm_algo_node_state(e);
	uint64_t fp = roster_fingerprint(e), sig = roster_slots_signature(e);
	bool joined = dm_roster_joined(e);

	if (!joined)
		n->was_out = true;
	if (n->gen == 0 || fp != n->fp || sig != n->slots_sig || (joined && n->was_out)) {
		n->gen = (n->gen > n->gen_seen ? n->gen : n->gen_seen) + 1;
		n->gen_seen = n->gen;
		n->fp = fp;
		n->slots_sig = sig;
		if (joined)
			n->was_out = false;
		rcv_build_ranks(e, n);
		rcv_gen_begin(n);
	}
	return n;
}

/* Start a generation above every one seen, same roster (a member restarted). */
static void
rcv_new_generation(struct dm_engine *e, struct rcv_node *n)
{
	n->gen = (n->gen > n->gen_seen ? n->gen : n->gen_seen) + 1;
	n->gen_seen = n->gen;
	rcv_gen_begin(n);
}

/* --- Messages --- */

static struct dm_msg *
rcv_begin(struct dm_engine *e, const struct rcv_node *n, uint8_t kind, const struct dm_lock *l)
{
	struct dm_msg *m = dm_msg_begin(e, kind, l);

	m->serial = n->gen;
	m->arg = n->fp;
	return m;
}

/* Send kind to rank with header hdr and our SI after it. */
static void
rcv_send_si(struct dm_engine *e, struct dm_lock *l, uint8_t kind, uint16_t to, uint64_t seq,
    uint8_t flags, const uint8_t *hdr, size_t hdr_len, uint16_t prefer)
{
	struct rcv_node *n = dm_algo_node_state(e);
	struct rcv_lock *s = dm_lock_state(l);
	struct dm_msg *m = rcv_begin(e, n, kind, l);
	int r;

	m->seq = seq;
	m->flags |= flags;
	if (hdr_len > 0)
		memcpy(m->payload, hdr, hdr_len);
	r = rcv_table_encode(&s->t, prefer, m->payload + hdr_len, DM_MSG_PAYLOAD_MAX - hdr_len);
	if (r < 0) {
		dm_log(e, DM_LOG_ERR, "rcv: system information does not fit a message", l,
		    n->slot_of[to]);
		return;
	}
	m->payload_len = (uint16_t)(hdr_len + (size_t)r);
	dm_send(e, n->slot_of[to], m);
}

static void
rcv_send_em(struct dm_engine *e, struct dm_lock *l, uint16_t to, uint64_t ts)
{
	rcv_send_si(e, l, RCV_MSG_EM, to, ts, 0, NULL, 0, RCV_RANK_NONE);
}

/* RM for host's tuple; ul: unvisited ranks (bitmap). */
static void
rcv_send_rm(struct dm_engine *e, struct dm_lock *l, uint16_t host, uint64_t host_ts,
    uint8_t *ul, bool try_once)
{
	struct rcv_node *n = dm_algo_node_state(e);
	const struct rcv_lock *s = dm_lock_state(l);
	uint8_t hdr[1 + RCV_NODES_MAX / 8];
	uint8_t pref[RCV_NODES_MAX / 8];
	size_t ul_len = (n->n + 7u) / 8u;
	uint16_t count = 0, pick;
	uint64_t h;

	ul[n->self_rank / 8] &= (uint8_t)~(1u << (n->self_rank % 8));
	ul[host / 8] &= (uint8_t)~(1u << (host % 8));
	/* "choose one unvisited node ... from the UL of RM" -- the paper lets
	 * the forwarder pick any; pick among those whose row (as known here)
	 * casts no vote yet: there the host's tuple becomes a vote and the
	 * open rows (N - sum S_h) shrink, each hop moving the decision by
	 * two.  A row already voting for another tuple gains nothing now. */
	rcv_rm_candidates(&s->t, ul, n->n, pref, &count);
	if (count == 0) {
		/* Every node visited and still not ordered (rows dropped for
		 * size, or a generation's first decision): roam again. */
		memset(ul, 0, ul_len);
		for (uint16_t r = 0; r < n->n; r++)
			if (r != host && r != n->self_rank)
				ul[r / 8] |= (uint8_t)(1u << (r % 8));
		rcv_rm_candidates(&s->t, ul, n->n, pref, &count);
		if (count == 0)
			return;
	}
	/* "Select an unvisited node randomly" (deterministically seeded). */
	h = mix64(host_ts ^ (n->gen << 20) ^ ((uint64_t)n->self_rank << 8) ^ n->clock);
	pick = (uint16_t)(h % count);
	for (uint16_t r = 0; r < n->n; r++) {
		if (!((pref[r / 8] >> (r % 8)) & 1u))
			continue;
		if (pick-- == 0) {
			ul[r / 8] &= (uint8_t)~(1u << (r % 8));	/* "delete id from UL" */
			hdr[0] = (uint8_t)host;
			memcpy(hdr + 1, ul, ul_len);
			rcv_send_si(e, l, RCV_MSG_RM, r, host_ts, try_once ? DM_MSG_F_TRY : 0,
			    hdr, 1 + ul_len, host);
			return;
		}
	}
}

static void
rcv_send_own_rm(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s)
{
	struct rcv_node *n = dm_algo_node_state(e);
	uint8_t ul[RCV_NODES_MAX / 8];

	/* "UL = {N_x | 0 <= x <= N-1} - N_i" */
	memset(ul, 0, sizeof(ul));
	for (uint16_t r = 0; r < n->n; r++)
		ul[r / 8] |= (uint8_t)(1u << (r % 8));
	rcv_send_rm(e, l, n->self_rank, s->own_ts, ul, s->try_once);
}

/* --- Own request --- */

static void
rcv_arm(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s, uint8_t phase)
{
	s->timer_phase = phase;
	dm_lock_timer_arm(e, l, dm_now(e) +
	    (phase == RCV_TIMER_WAIT ? dm_request_timeout(e) : dm_probe_timeout(e)));
}

static void rcv_after_order(struct dm_engine *e, struct dm_lock *l, uint16_t k, bool try_once);

/* Our tuple is finished: pass the CS to Next. */
static void
rcv_finish(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s)
{
	struct rcv_node *n = dm_algo_node_state(e);

	/* "SI_i.NSIT[i].TS++; Delete i from SI_i.NONL_i; If (SI_i.Next <> NULL)
	 *  then ... Send the EM to the SI_i.Next; SI_i.Next = NULL" */
	if (s->next == RCV_RANK_NONE) {
		/* Not in the paper: our NONL may already name our successor. */
		int i = rcv_nonl_find(&s->t, n->self_rank);
		if (i >= 0 && i + 1 < s->t.n_nonl) {
			s->next = s->t.nonl[i + 1];
			s->next_ts = s->t.latest[s->next];
		}
	}
	s->t.flags[n->self_rank] |= RCV_F_DONE;
	rcv_prune(&s->t);
	s->requesting = false;
	s->in_cs = false;
	s->ghost = false;
	s->timer_phase = RCV_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	if (s->next != RCV_RANK_NONE) {
		uint16_t to = s->next;
		s->next = RCV_RANK_NONE;
		rcv_send_em(e, l, to, s->next_ts);
	}
}

/* "Upon receiving the EM: ... Enter the CS" */
static void
rcv_enter(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s)
{
	if (!s->requesting || s->in_cs)
		return;
	if (s->ghost) {
		rcv_finish(e, l, s);
		return;
	}
	s->requesting = false;
	s->in_cs = true;
	s->timer_phase = RCV_TIMER_NONE;
	dm_lock_timer_stop(e, l);
	dm_lock_permitted(e, l);
}

/* We precede succ (an IM, or our own Order decided it). */
static void
rcv_inform(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s, uint64_t our_ts,
    uint16_t succ, uint64_t succ_ts)
{
	struct rcv_node *n = dm_algo_node_state(e);

	/* "If (tuple <i, t_i> which is immediate precedes tuple <j, t_j> is not
	 *  in the list of SI_i.NONL) then ... send the EM to node j; else set
	 *  SI_i.Next = j" -- our own record decides whether we are done. */
	if (our_ts == s->own_ts && (s->in_cs || s->requesting) &&
	    !(s->t.flags[n->self_rank] & RCV_F_DONE)) {
		s->next = succ;
		s->next_ts = succ_ts;
		return;
	}
	/* Pass the CS on only for a tuple we know is over. */
	if (our_ts < s->own_ts || (our_ts == s->own_ts && !s->in_cs && !s->requesting))
		rcv_send_em(e, l, succ, succ_ts);
}

static void
rcv_refuse_try(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s)
{
	if (!s->requesting || s->in_cs || s->ghost || !s->try_once)
		return;
	s->ghost = true;
	dm_lock_refused(e, l, -EBUSY);
}

/* Lines 38-45: k was ordered here. */
static void
rcv_after_order(struct dm_engine *e, struct dm_lock *l, uint16_t k, bool try_once)
{
	struct rcv_node *n = dm_algo_node_state(e);
	struct rcv_lock *s = dm_lock_state(l);
	int i = rcv_nonl_find(&s->t, k);
	uint16_t p;

	if (i < 0)
		return;
	if (i == 0) {
		/* Highest_Priority: "send the EM to node k" */
		if (k == n->self_rank)
			rcv_enter(e, l, s);
		else
			rcv_send_em(e, l, k, s->t.latest[k]);
		return;
	}
	/* "send an IM to node k's immediate preceding node according to NONL" */
	p = s->t.nonl[i - 1];
	if (p == n->self_rank) {
		rcv_inform(e, l, s, s->t.latest[p], k, s->t.latest[k]);
	} else {
		uint8_t hdr[1 + 10];
		size_t len = 1;
		uint64_t v = s->t.latest[k];
		hdr[0] = (uint8_t)k;
		do {
			hdr[len++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
			v >>= 7;
		} while (v);
		rcv_send_si(e, l, RCV_MSG_IM, p, s->t.latest[p], 0, hdr, len, RCV_RANK_NONE);
	}
	if (try_once) {
		if (k == n->self_rank) {
			rcv_refuse_try(e, l, s);
		} else {
			struct dm_msg *m = rcv_begin(e, n, RCV_MSG_BUSY, l);
			m->seq = s->t.latest[k];
			dm_send(e, n->slot_of[k], m);
		}
	}
}

/* A new tuple for our request; Order locally (N = 1 needs no message),
 * else send the RM out. */
static void
rcv_issue(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s)
{
	struct rcv_node *n = dm_algo_node_state(e);
	uint16_t self = n->self_rank;

	/* "SI_i.NSIT[i].TS++; Append tuple <i, SI_i.NSIT[i].TS> to SI_i.NSIT[i].MNL" */
	s->own_ts = ++n->clock;
	s->requesting = true;
	s->in_cs = false;
	s->ghost = false;
	s->ordered_hint = false;
	s->rounds = 0;
	rcv_set_latest(&s->t, self, s->own_ts, 0);
	rcv_register(&s->t, self, self, ++n->clock);
	rcv_arm(e, l, s, RCV_TIMER_WAIT);
	if (rcv_order(&s->t, self)) {
		rcv_after_order(e, l, self, s->try_once);
		return;
	}
	rcv_send_own_rm(e, l, s);
}

/* Bring l's SI into the node's current generation.  NULL: no memory for
 * the generation's SI; l stays in its old generation, as if the messages
 * of the new one had not come yet (callers drop what they were doing and
 * the peers' probes come back). */
static struct rcv_lock *
rcv_lock_sync(struct dm_engine *e, struct dm_lock *l)
{
	struct rcv_node *n = rcv_sync(e);
	struct rcv_lock *s = dm_lock_state(l);
	bool pending;

	if (s->gen == n->gen)
		return s;
	if (rcv_table_reserve(&s->t, n->n) < 0) {
		dm_log(e, DM_LOG_ERR, "rcv: out of memory for a lock's system information", l,
		    DM_SLOT_NONE);
		return NULL;
	}
	pending = s->requesting && !s->ghost && !s->in_cs;
	if (s->requesting && s->ghost) {
		s->requesting = false;	/* a withdrawn request is simply dropped */
		s->ghost = false;
	}
	rcv_table_init(&s->t, n->n);
	s->gen = n->gen;
	s->next = RCV_RANK_NONE;
	s->ordered_hint = false;
	s->t.row_ts[n->self_rank] = ++n->clock;	/* our row of this generation */
	if (s->in_cs) {
		/* Not in the paper: we are in the CS; say so first in our row. */
		s->own_ts = ++n->clock;
		rcv_set_latest(&s->t, n->self_rank, s->own_ts, RCV_F_HOLDER);
		rcv_register(&s->t, n->self_rank, n->self_rank, ++n->clock);
	} else if (pending) {
		rcv_issue(e, l, s);
	} else if (!s->requesting) {
		s->timer_phase = RCV_TIMER_NONE;
		dm_lock_timer_stop(e, l);
	}
	return s;
}

static int
rcv_request(struct dm_engine *e, struct dm_lock *l, enum dm_mode mode, bool try_once)
{
	/* "Upon requesting the CS" (§4.1 lines 3-13) */
	struct rcv_lock *s;

	if (mode != DM_MODE_EXCLUSIVE)
		return -EOPNOTSUPP;
	if (rcv_reserved(l)) {
		struct rcv_node *n = dm_algo_node_state(e);
		rcv_rl_request(e, l, &((struct rcv_lock *)dm_lock_state(l))->rl, &n->clock);
		return 0;
	}
	s = rcv_lock_sync(e, l);
	if (s == NULL)
		return -ENOMEM;
	if (s->in_cs || (s->requesting && !s->ghost))
		return 0;
	if (s->requesting && s->ghost) {
		/* Our withdrawn tuple is still on its way: take it back. */
		if (try_once) {
			dm_lock_refused(e, l, -EBUSY);
			return 0;
		}
		s->ghost = false;
		s->try_once = false;
		return 0;
	}
	s->try_once = try_once;
	rcv_issue(e, l, s);
	return 0;
}

static void
rcv_withdraw(struct dm_engine *e, struct dm_lock *l)
{
	struct rcv_lock *s;

	if (rcv_reserved(l)) {
		rcv_rl_release(e, l, &((struct rcv_lock *)dm_lock_state(l))->rl);
		return;
	}
	s = rcv_lock_sync(e, l);
	if (s == NULL)
		s = dm_lock_state(l);	/* (dropped when it syncs) */
	if (s->requesting && !s->in_cs)
		s->ghost = true;
}

static void
rcv_release(struct dm_engine *e, struct dm_lock *l)
{
	/* "Upon releasing the CS" (§4.1 lines 17-24) */
	struct rcv_lock *s;

	if (rcv_reserved(l)) {
		rcv_rl_release(e, l, &((struct rcv_lock *)dm_lock_state(l))->rl);
		return;
	}
	s = rcv_lock_sync(e, l);
	if (s == NULL) {
		/* Out before the new generation begins: it starts without us. */
		s = dm_lock_state(l);
		s->in_cs = false;
		s->requesting = false;
		s->ghost = false;
		s->timer_phase = RCV_TIMER_NONE;
		dm_lock_timer_stop(e, l);
		return;
	}
	if (s->in_cs)
		rcv_finish(e, l, s);
}

static bool
rcv_may_handoff(const struct dm_engine *e, const struct dm_lock *l, enum dm_mode mode)
{
	const struct rcv_node *n = dm_algo_node_state_const(e);
	const struct rcv_lock *s = dm_lock_state_const(l);

	if (rcv_reserved(l))
		return rcv_rl_may_handoff(&s->rl);
	if (!s->in_cs || s->next != RCV_RANK_NONE || s->gen != n->gen)
		return false;
	for (uint16_t j = 0; j < s->t.n; j++)
		if (j != n->self_rank && rcv_pending(&s->t, j))
			return false;	/* another node is known to want it */
	return true;
}

/* --- Receiving --- */

static int
rcv_on_rm(struct dm_engine *e, struct dm_lock *l, struct rcv_lock *s, const struct dm_msg *m,
    uint16_t host, uint8_t *ul)
{
	/* "Upon receiving/processing a RM" (§4.1 lines 33-53) */
	struct rcv_node *n = dm_algo_node_state(e);

	if (host == n->self_rank || s->t.latest[host] != m->seq || !rcv_pending(&s->t, host))
		return 0;	/* our own, or its host has moved on: drop it */
	/* "Append tuple <k, t_k> to SI_i.NSIT[i].MNL" */
	rcv_register(&s->t, n->self_rank, host, ++n->clock);
	if (rcv_order(&s->t, host)) {
		rcv_after_order(e, l, host, (m->flags & DM_MSG_F_TRY) != 0);
		return 0;
	}
	/* "generate a new RM' ... MONL' = SI_i.NONL; MSIT' = SI_i.NSIT" */
	rcv_send_rm(e, l, host, m->seq, ul, (m->flags & DM_MSG_F_TRY) != 0);
	return 0;
}

static int
rcv_decode(struct dm_engine *e, struct rcv_node *n, const struct dm_msg *m, uint8_t *ul,
    uint16_t *rank, uint64_t *ts)
{
	const uint8_t *p = m->payload;
	size_t left = m->payload_len, used, ul_len = (n->n + 7u) / 8u;
	bool rm = m->kind == RCV_MSG_RM;

	if (rm || m->kind == RCV_MSG_IM) {
		if (left < 1 || p[0] >= n->n)
			return -EPROTO;
		*rank = p[0];
		p++;
		left--;
	}
	if (rm) {
		if (left < ul_len)
			return -EPROTO;
		memset(ul, 0, RCV_NODES_MAX / 8);
		memcpy(ul, p, ul_len);
		p += ul_len;
		left -= ul_len;
	}
	if (m->kind == RCV_MSG_IM) {
		uint64_t v = 0;
		unsigned shift = 0;
		for (;;) {
			if (left == 0 || shift >= 64)
				return -EPROTO;
			v |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
			left--;
			if (!(*p++ & 0x80))
				break;
		}
		*ts = v;
	}
	(void)e;
	if (rcv_table_decode(&n->scratch, n->n, p, left, &used) < 0 || used != left)
		return -EPROTO;
	return 0;
}

static int
rcv_receive(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct rcv_node *n;
	struct rcv_lock *s;
	uint8_t ul[RCV_NODES_MAX / 8];
	uint16_t rank = 0, from_rank;
	uint64_t ts = 0;

	if (m->kind < RCV_MSG_RM || m->kind >= RCV_MSG_KIND_MAX_)
		return -EPROTO;
	if (rcv_rl_name(m->lock, m->lock_len)) {
		/* The engine's locks: every member's permission, whatever the
		 * rosters (algo_rcv_roster.c; seed 289/4). */
		n = dm_algo_node_state(e);
		if (m->kind < RCV_MSG_RL_REQUEST)
			return 0;
		return rcv_rl_receive(e, l, l != NULL ? &((struct rcv_lock *)dm_lock_state(l))->rl :
		    NULL, from, m, &n->clock);
	}
	if (m->kind >= RCV_MSG_RL_REQUEST)
		return -EPROTO;
	if (!dm_roster_joined(e))
		return 0;	/* (only the roster lock reaches a joining node) */
	n = rcv_sync(e);
	if (m->serial > n->gen_seen)
		n->gen_seen = m->serial;
	if (m->kind == RCV_MSG_PROBE) {
		/* Liveness first: answer whatever the generation. */
		struct rcv_lock *q = l != NULL ? dm_lock_state(l) : NULL;
		uint16_t fr = n->rank_of[from];
		struct dm_msg *a = rcv_begin(e, n, RCV_MSG_PROBE_ACK, NULL);
		a->lock_len = m->lock_len;
		memcpy(a->lock, m->lock, m->lock_len + 1u);
		a->seq = m->seq;
		bool ordered = q != NULL && q->gen == n->gen && fr != RCV_RANK_NONE &&
		    m->serial == n->gen && m->arg == n->fp && q->t.latest[fr] == m->seq &&
		    rcv_nonl_find(&q->t, fr) >= 0;
		if (ordered)
			a->flags |= RCV_F_MSG_ORDERED;
		dm_send(e, from, a);
		/* Its RM may be lost after it was ordered (Order decides several
		 * tuples at once): its predecessor passes the CS on if it can. */
		if (ordered) {
			int i = rcv_nonl_find(&q->t, fr);
			if (i > 0 && q->t.nonl[i - 1] == n->self_rank)
				rcv_after_order(e, l, fr, false);
		}
		return 0;
	}
	if (m->kind == RCV_MSG_ABSENT)
		return 0;	/* (retired: sent by no version that ran) */
	if (m->arg == n->fp && n->rank_of[from] != RCV_RANK_NONE && m->serial >= n->gen) {
		uint64_t *inc = &n->inc_of[n->rank_of[from]];
		/* Not in the paper: a node new to the cluster (or restarted) must
		 * not join a generation that may hold its previous life's tuples,
		 * and a member that restarted makes ours stale: start a new one. */
		if (!n->joined || (*inc != 0 && *inc != m->incarnation)) {
			if (m->serial > n->gen_seen)
				n->gen_seen = m->serial;
			rcv_new_generation(e, n);
			n->joined = true;
			if (l != NULL)
				rcv_lock_sync(e, l);
		}
		if (m->serial == n->gen)
			*inc = m->incarnation;
	}
	if (m->serial != n->gen || m->arg != n->fp) {
		if (m->serial < n->gen) {
			/* Not in the paper: a message of an older roster. */
			struct dm_msg *a = rcv_begin(e, n, RCV_MSG_STALE, NULL);
			if (m->kind == RCV_MSG_STALE)
				return 0;
			a->lock_len = m->lock_len;
			memcpy(a->lock, m->lock, m->lock_len + 1u);
			dm_send(e, from, a);
			return 0;
		}
		if (m->serial > n->gen && m->arg == n->fp) {
			n->gen = m->serial;	/* same roster, newer generation: join it */
			rcv_gen_begin(n);
			n->inc_of[n->rank_of[from]] = m->incarnation;
			if (l != NULL)
				rcv_lock_sync(e, l);	/* re-issue a pending request now */
		} else
			return 0;	/* our rosters differ: wait for ours to change */
	}
	if (m->kind == RCV_MSG_STALE)
		return 0;
	if (l == NULL) {
		if (m->kind == RCV_MSG_PROBE_ACK || m->kind == RCV_MSG_BUSY)
			return 0;
		l = dm_lock_get(e, m->lock, m->lock_len, true);
		if (l == NULL) {
			dm_log(e, DM_LOG_ERR, "rcv: out of memory for a lock", NULL, from);
			return -ENOMEM;
		}
	}
	s = rcv_lock_sync(e, l);
	if (s == NULL)
		return -ENOMEM;
	from_rank = n->rank_of[from];
	if (from_rank == RCV_RANK_NONE)
		return 0;
	switch (m->kind) {
	case RCV_MSG_PROBE_ACK:
		if (s->requesting && !s->in_cs && m->seq == s->own_ts) {
			s->answered[from / 8] |= (uint8_t)(1u << (from % 8));
			if (m->flags & RCV_F_MSG_ORDERED)
				s->ordered_hint = true;
		}
		return 0;
	case RCV_MSG_BUSY:
		if (m->seq == s->own_ts)
			rcv_refuse_try(e, l, s);
		return 0;
	default:
		break;
	}
	if (rcv_decode(e, n, m, ul, &rank, &ts) < 0)
		return -EPROTO;
	/* Our own tuple is ours to describe: a message cannot know a newer one
	 * -- except one of our previous process's, when this one started from
	 * the static roster before the sender heard of the restart (it tells
	 * us to rejoin when we speak: DM_MSG_F_STATIC).  Stale: ignored. */
	if (n->scratch.latest[n->self_rank] > s->t.latest[n->self_rank]) {
		dm_log(e, DM_LOG_DEBUG, "rcv: a message about our previous process's request; "
		    "ignored", l, from);
		return 0;
	}
	/* "Call Exchange Procedure to update SI_i" */
	if (rcv_exchange(&s->t, &n->scratch) < 0) {
		dm_log(e, DM_LOG_ERR, "rcv: ordered lists disagree; message ignored", l, from);
		return 0;
	}
	switch (m->kind) {
	case RCV_MSG_RM:
		if (n->scratch.latest[rank] != m->seq)
			return -EPROTO;
		return rcv_on_rm(e, l, s, m, rank, ul);
	case RCV_MSG_EM:
		if (m->seq == s->own_ts)
			rcv_enter(e, l, s);
		return 0;
	case RCV_MSG_IM:
		/* "Upon receiving an IM" (§4.1 lines 25-32) */
		rcv_inform(e, l, s, m->seq, rank, ts);
		return 0;
	default:
		return -EPROTO;
	}
}

/* --- Timer, failures, bookkeeping --- */

static void
rcv_timer(struct dm_engine *e, struct dm_lock *l)
{
	/* Not in the paper (it assumes no failures). */
	struct rcv_lock *s = dm_lock_state(l);
	struct rcv_node *n = dm_algo_node_state(e);
	uint8_t suspects[DM_NODES_MAX / 8];
	uint64_t gen = s->gen;

	if (rcv_reserved(l)) {
		rcv_rl_timer(e, l, &s->rl);
		return;
	}
	if (rcv_lock_sync(e, l) == NULL) {
		dm_lock_timer_arm(e, l, dm_now(e) + dm_request_timeout(e));	/* try again */
		return;
	}
	if (!s->requesting || s->in_cs || s->gen != gen)
		return;	/* a new generation issued the request again */
	if (s->timer_phase != RCV_TIMER_PROBE) {
		struct dm_msg *m = rcv_begin(e, n, RCV_MSG_PROBE, l);
		memset(s->answered, 0, sizeof(s->answered));
		s->ordered_hint = false;
		m->seq = s->own_ts;
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (j != dm_roster_self(e))
				dm_send(e, j, m);
		rcv_arm(e, l, s, RCV_TIMER_PROBE);
		return;
	}
	memset(suspects, 0, sizeof(suspects));
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != dm_roster_self(e) && !((s->answered[j / 8] >> (j % 8)) & 1u))
			suspects[j / 8] |= (uint8_t)(1u << (j % 8));
	/* Regenerate the RM unless someone has seen us ordered: then we are
	 * merely queued; wait longer, and send the RM again only every
	 * fourth round (it makes a node that knows us ordered inform our
	 * predecessor, should that IM have been lost). */
	if (s->ordered_hint && s->rounds < 255)
		s->rounds++;
	if (!s->ordered_hint || s->rounds % 4 == 0)
		rcv_send_own_rm(e, l, s);
	s->timer_phase = RCV_TIMER_WAIT;
	dm_lock_timer_arm(e, l, dm_now(e) +
	    dm_request_timeout(e) * (s->ordered_hint ? 4u : 1u));
	for (size_t j = 0; j < DM_NODES_MAX; j++)
		if ((suspects[j / 8] >> (j % 8)) & 1u)
			dm_roster_suspect(e, (dm_slot_t)j);
}

static void
rcv_peer_gone(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* The roster has already lost slot: a new generation. */
	struct rcv_lock *s = dm_lock_state(l);

	if (rcv_reserved(l)) {
		rcv_rl_peer_gone(e, l, &s->rl, slot);
		return;
	}
	s->answered[slot / 8] &= (uint8_t)~(1u << (slot % 8));
	rcv_lock_sync(e, l);
}

static bool
rcv_idle(const struct dm_engine *e, const struct dm_lock *l)
{
	/* The SI of the current generation is knowledge others rely on (our
	 * row's versions): keep it; an older generation's is worthless. */
	const struct rcv_node *n = dm_algo_node_state_const(e);
	const struct rcv_lock *s = dm_lock_state_const(l);

	if (rcv_reserved(l))
		return rcv_rl_idle(&s->rl);
	return !s->requesting && !s->in_cs && (s->gen == 0 || s->gen != n->gen);
}

static int
rcv_node_init(struct dm_engine *e, void *node_state)
{
	struct rcv_node *n = node_state;

	/* Started with the cluster's static roster: nobody can hold knowledge
	 * of an earlier life of ours.  A node joining through a sponsor (a new
	 * or restarted one) starts a generation of its own instead. */
	n->joined = dm_roster_size(e) > 1;
	rcv_table_attach(&n->scratch, &n->scratch_space);
	return 0;
}

static void
rcv_lock_fini(struct dm_engine *e, struct dm_lock *l)
{
	(void)e;
	rcv_table_release(&((struct rcv_lock *)dm_lock_state(l))->t);
}

static uint64_t
rcv_clock_get(const struct dm_engine *e)
{
	const struct rcv_node *n = dm_algo_node_state_const(e);

	return n->clock;
}

static void
rcv_clock_merge(struct dm_engine *e, uint64_t seq)
{
	struct rcv_node *n = dm_algo_node_state(e);

	if (seq > n->clock)
		n->clock = seq;
}

const struct dm_algorithm dm_algo_rcv = {
	.name = "rcv",
	.caps = DM_CAP_SURVIVES_FAILURE,
	.lock_state_size = sizeof(struct rcv_lock),
	.node_state_size = sizeof(struct rcv_node),
	.node_init = rcv_node_init,
	.request = rcv_request,
	.withdraw = rcv_withdraw,
	.release = rcv_release,
	.may_handoff = rcv_may_handoff,
	.receive = rcv_receive,
	.timer = rcv_timer,
	.peer_gone = rcv_peer_gone,
	.lock_fini = rcv_lock_fini,
	.idle = rcv_idle,
	.clock_get = rcv_clock_get,
	.clock_merge = rcv_clock_merge,
};
