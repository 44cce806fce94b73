/*
 * algo_suzuki_kasami.c: Suzuki-Kasami broadcast token algorithm, one
 * instance per lock name.  I. Suzuki and T. Kasami, "A Distributed Mutual
 * Exclusion Algorithm", ACM TOCS 3(4), 1985.
 *
 *   "A node requesting the token increments RN[i] and broadcasts
 *    REQUEST(i, RN[i]).  On REQUEST(j, n): RN[j] := max(RN[j], n); if it
 *    holds the idle token and RN[j] = LN[j] + 1 it sends the token to j.
 *    On leaving the critical section: LN[i] := RN[i]; every j with
 *    RN[j] = LN[j] + 1 not in Q is appended to Q; if Q is not empty the
 *    token goes to its head."
 *
 * N-1 messages per entry (N-1 REQUESTs + 1 TOKEN = N), none when the token
 * is already here.  Nodes are identified by name in the token (slots are
 * local).  Epochs, regeneration and the token's home (the coordinator) are
 * dm_token.c's; a name without state here means RN = 0 and, at the
 * coordinator, "the token is here with LN = 0 and Q empty".
 */
#include <errno.h>
#include <string.h>

#include "dm_token.h"

struct sk_lock {
	struct dm_tlock	 t;
	bool		 has_token;
	uint16_t	 nq;
	uint32_t	 seen;			/* RN updates this epoch (0: initial) */
	uint64_t	 rn[DM_NODES_MAX];	/* RN: highest request number per node */
	uint64_t	 ln[DM_NODES_MAX];	/* token: LN, last request served */
	dm_slot_t	 q[DM_NODES_MAX];	/* token: Q */
};

static void
sk_reset(struct dm_engine *e, struct dm_lock *l, bool token_here)
{
	struct sk_lock *s = dm_lock_state(l);

	s->has_token = token_here;
	s->nq = 0;
	s->seen = 0;
	memset(s->rn, 0, sizeof(s->rn));
	memset(s->ln, 0, sizeof(s->ln));
}

static bool
sk_in_q(const struct sk_lock *s, dm_slot_t j)
{
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i] == j)
			return true;
	return false;
}

/* The paper's test is RN[j] = LN[j] + 1; ours is RN[j] > LN[j], because a
 * request here can be withdrawn (try-once, timeout, cancel) without a word
 * to the others: its number stays counted, and the node's next request
 * makes RN[j] = LN[j] + 2, which the paper's test would never serve
 * (suzuki-kasami --election invitation --seeds 241..241 --nodes 1-16
 * --rotate-faults: n1's try-once, refused at once, then its real request,
 * waited while n0 kept the token for its own clients).  A token that
 * reaches a node no longer asking serves all of its numbers (sk_pass sets
 * LN[i] := RN[i]) and moves on. */
static bool
sk_outstanding(const struct sk_lock *s, dm_slot_t j)
{
	return s->rn[j] > s->ln[j];
}

/* --- Token encoding: u16 nq, nq x (u8 len, name); u16 nln, nln x (u8 len,
 * name, u64 LN) for LN > 0.  Names, not slots: slots differ per node. --- */

static int
put_name(uint8_t *p, size_t *off, const char *name)
{
	size_t n = strlen(name);

	if (*off + 1 + n > DM_MSG_PAYLOAD_MAX)
		return -E2BIG;
	p[(*off)++] = (uint8_t)n;
	memcpy(p + *off, name, n);
	*off += n;
	return 0;
}

static int
sk_encode(struct dm_engine *e, const struct sk_lock *s, struct dm_msg *m)
{
	size_t off = 2, count_at;
	uint16_t nln = 0;

	uint16_t nq = 0;

	for (size_t i = 0; i < s->nq; i++) {
		if (dm_roster_name(e, s->q[i]) == NULL)
			continue;
		if (put_name(m->payload, &off, dm_roster_name(e, s->q[i])) < 0)
			return -E2BIG;
		nq++;
	}
	m->payload[0] = (uint8_t)(nq & 0xff);
	m->payload[1] = (uint8_t)(nq >> 8);
	count_at = off;
	off += 2;
	if (off > DM_MSG_PAYLOAD_MAX)
		return -E2BIG;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j)) {
		if (s->ln[j] == 0)
			continue;
		if (put_name(m->payload, &off, dm_roster_name(e, j)) < 0 ||
		    off + 8 > DM_MSG_PAYLOAD_MAX)
			return -E2BIG;
		for (int b = 0; b < 8; b++)
			m->payload[off++] = (uint8_t)(s->ln[j] >> (8 * b));
		nln++;
	}
	m->payload[count_at] = (uint8_t)(nln & 0xff);
	m->payload[count_at + 1] = (uint8_t)(nln >> 8);
	m->payload_len = (uint16_t)off;
	return 0;
}

static int
get_name(struct dm_engine *e, const struct dm_msg *m, size_t *off, dm_slot_t *slot)
{
	size_t n;

	if (*off + 1 > m->payload_len)
		return -EPROTO;
	n = m->payload[(*off)++];
	if (n == 0 || n > DM_NODE_NAME_MAX || *off + n > m->payload_len)
		return -EPROTO;
	*slot = dm_election_slot_by_name(e, (const char *)m->payload + *off, n);
	*off += n;
	return 0;
}

static int
sk_decode(struct dm_engine *e, struct sk_lock *s, const struct dm_msg *m)
{
	size_t off = 0, count;
	dm_slot_t j;

	if (m->payload_len < 4)
		return -EPROTO;
	count = (size_t)m->payload[0] | (size_t)m->payload[1] << 8;
	off = 2;
	if (count > DM_NODES_MAX)
		return -EPROTO;
	s->nq = 0;
	memset(s->ln, 0, sizeof(s->ln));
	for (size_t i = 0; i < count; i++) {
		if (get_name(e, m, &off, &j) < 0)
			return -EPROTO;
		if (j != DM_SLOT_NONE && !sk_in_q(s, j))
			s->q[s->nq++] = j;	/* members only: a removed one is skipped */
	}
	if (off + 2 > m->payload_len)
		return -EPROTO;
	count = (size_t)m->payload[off] | (size_t)m->payload[off + 1] << 8;
	off += 2;
	if (count > DM_NODES_MAX)
		return -EPROTO;
	for (size_t i = 0; i < count; i++) {
		uint64_t v = 0;
		if (get_name(e, m, &off, &j) < 0 || off + 8 > m->payload_len)
			return -EPROTO;
		for (int b = 0; b < 8; b++)
			v |= (uint64_t)m->payload[off++] << (8 * b);
		if (j != DM_SLOT_NONE)
			s->ln[j] = v;
	}
	return off == m->payload_len ? 0 : -EPROTO;
}

static void
sk_send_token(struct dm_engine *e, struct dm_lock *l, struct sk_lock *s, dm_slot_t to)
{
	struct dm_msg *m = dm_token_msg(e, DM_TK_TOKEN, l);

	if (sk_encode(e, s, m) < 0) {
		/* Cannot happen for names <= 16 bytes and N <= 100; the token is
		 * kept and the waiter's watchdog elects (NOTES-token.md). */
		dm_log(e, DM_LOG_ERR, "token too large for one message", l, to);
		return;
	}
	s->has_token = false;
	dm_send(e, to, m);
}

static void
sk_pass(struct dm_engine *e, struct dm_lock *l)
{
	/* "LN[i] := RN[i]; for every j with RN[j] = LN[j] + 1 not in Q: append
	 *  j; if Q is nonempty: send the token to head(Q), delete it."  (RN[j]
	 *  > LN[j] here: see sk_outstanding.) */
	struct sk_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);

	if (!s->has_token)
		return;
	s->ln[self] = s->rn[self];
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != self && sk_outstanding(s, j) && !sk_in_q(s, j) &&
		    !dm_roster_departing(e, j))
			s->q[s->nq++] = j;
	while (s->nq > 0) {
		dm_slot_t head = s->q[0];
		memmove(s->q, s->q + 1, (size_t)(s->nq - 1) * sizeof(s->q[0]));
		s->nq--;
		if (dm_roster_name(e, head) == NULL || dm_roster_departing(e, head) || head == self)
			continue;
		sk_send_token(e, l, s, head);
		return;
	}
}

static void
sk_ask(struct dm_engine *e, struct dm_lock *l)
{
	/* "RN[i] := RN[i] + 1; send REQUEST(i, RN[i]) to all other nodes"; none
	 * when the token is here. */
	struct sk_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);
	struct dm_msg *m;

	if (s->has_token) {
		dm_token_enter(e, l);
		return;
	}
	s->rn[self]++;
	s->seen++;
	m = dm_token_msg(e, DM_TK_REQUEST, l);
	m->seq = s->rn[self];
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != self && !dm_roster_departing(e, j))
			dm_send(e, j, m);
}

static int
sk_on_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t j, const struct dm_msg *m)
{
	/* "RN[j] := max(RN[j], n); if holding the idle token and
	 *  RN[j] = LN[j] + 1 then send the token to j."  (RN[j] > LN[j]: see
	 *  sk_outstanding.) */
	struct sk_lock *s = dm_lock_state(l);

	if (m->seq > s->rn[j]) {
		s->rn[j] = m->seq;
		s->seen++;
	}
	if (s->has_token && !s->t.in_cs && !s->t.proxy && !s->t.wanting && sk_outstanding(s, j))
		sk_send_token(e, l, s, j);
	return 0;
}

static int
sk_on_token(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct sk_lock *s = dm_lock_state(l);

	if (s->has_token)
		return -EPROTO;	/* two tokens in one epoch: a peer is wrong */
	if (sk_decode(e, s, m) < 0)
		return -EPROTO;
	s->has_token = true;
	s->seen++;
	dm_token_arrived(e, l);
	return 0;
}

static bool
sk_others_waiting(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct sk_lock *s = dm_lock_state_const(l);
	dm_slot_t self = dm_roster_self(e);

	if (s->nq > 0)
		return true;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		if (j != self && sk_outstanding(s, j))
			return true;
	return false;
}

static bool
sk_initial(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct sk_lock *s = dm_lock_state_const(l);

	return s->seen == 0 && s->nq == 0 && s->has_token == dm_token_i_coordinate(e);
}

static void
sk_forget(struct dm_engine *e, struct dm_lock *l, dm_slot_t slot)
{
	/* The slot may be reused by a newcomer: forget its numbers. */
	struct sk_lock *s = dm_lock_state(l);
	size_t k = 0;

	s->rn[slot] = 0;
	s->ln[slot] = 0;
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i] != slot)
			s->q[k++] = s->q[i];
	s->nq = (uint16_t)k;
}

/* Status: token here or not, and the token's queue when here. */
static size_t
sk_describe(const struct dm_engine *e, const struct dm_lock *l, char *buf, size_t size,
    size_t len)
{
	const struct sk_lock *s = dm_lock_state_const(l);

	(void)e;
	len = dm_describe_add(buf, size, len, "token=%s", s->has_token ? "here" : "away");
	if (s->has_token)
		len = dm_describe_add(buf, size, len, "queue=%u", (unsigned)s->nq);
	return len;
}

/* The token waiter's probe (dm_token_watchdog.c): our request's number;
 * at the holder, whether j's request n is counted and unserved, so that
 * its release queues j (RN[j] >= n > LN[j]: the holder has the token's
 * LN).  Exact, unlike the tree algorithms, whose holder sees only the
 * neighbour a request came through. */
static uint64_t
sk_probe_stamp(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct sk_lock *s = dm_lock_state_const(l);

	return s->rn[dm_roster_self(e)];
}

static bool
sk_knows_waiter(const struct dm_engine *e, const struct dm_lock *l, dm_slot_t j,
    uint64_t n)
{
	const struct sk_lock *s = dm_lock_state_const(l);

	(void)e;
	return s->has_token && s->rn[j] >= n && s->ln[j] < n;
}

static const struct dm_token_ops sk_ops = {
	.describe = sk_describe,
	.forget = sk_forget,
	.reset = sk_reset,
	.ask = sk_ask,
	.pass = sk_pass,
	.others_waiting = sk_others_waiting,
	.initial = sk_initial,
	.on_request = sk_on_request,
	.on_token = sk_on_token,
	.probe_stamp = sk_probe_stamp,
	.knows_waiter = sk_knows_waiter,
};

DM_TOKEN_ALGORITHM(dm_algo_suzuki_kasami, "suzuki-kasami", struct sk_lock, sk_ops);
