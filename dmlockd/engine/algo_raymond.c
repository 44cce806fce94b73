/*
 * algo_raymond.c: Raymond's tree-based token algorithm, one instance per
 * lock name.  K. Raymond, "A Tree-Based Algorithm for Distributed Mutual
 * Exclusion", ACM TOCS 7(1), 1989; sync-and-election-lecture.txt,
 * "Token-based algorithms on Tree topology (Raymond's algorithm)".
 *
 *   "each processor maintains a pointer to the neighbor (called parent)
 *    that is closest to the token [HOLDER] and a request queue the head of
 *    which defines the return path."
 *   "Request: insert yourself in your queue, send a request to your parent
 *    if you have not yet sent a request to it [ASKED].  On receiving a
 *    request insert the requester in your queue ... If you have the token
 *    but you are not using it, remove the first processor of your queue,
 *    send the token to that processor."
 *   "On receiving/releasing the token: remove the first processor (if any)
 *    of your queue, send the token to that processor and set your parent
 *    pointer to that processor.  If your queue is not empty, send a request
 *    to the processor you have just sent the token."
 *
 * The tree: heap-shaped over the members in priority order with the
 * coordinator at the root, given to every node by the election's New_State
 * (dm_election_bully.c), so it is rebuilt at every roster change (every
 * change causes an election).  Epoch initial state: HOLDER = parent, the
 * root holds the token; a name without state here means exactly that.
 */
#include <errno.h>
#include <string.h>

#include "dm_token.h"

struct ry_lock {
	struct dm_tlock	 t;
	dm_slot_t	 holder;	/* HOLDER: self when the token is here */
	bool		 asked;		/* ASKED */
	uint16_t	 nq;
	dm_slot_t	 q[DM_NODES_MAX];	/* REQUEST_Q (FIFO, no duplicates) */
};

static dm_slot_t
ry_initial_holder(const struct dm_engine *e, bool token_here)
{
	const struct dm_election *el = &dm_token_node_const(e)->el;
	dm_slot_t p;

	if (token_here)
		return dm_roster_self(e);
	p = dm_election_slot_by_name(e, el->parent, strlen(el->parent));
	/* Before New_State, or if the parent is gone: straight to the root
	 * (still a tree: every pointer goes up the coordinator's order). */
	return p != DM_SLOT_NONE ? p : dm_token_coordinator(e);
}

static void
ry_reset(struct dm_engine *e, struct dm_lock *l, bool token_here)
{
	struct ry_lock *s = dm_lock_state(l);

	s->holder = ry_initial_holder(e, token_here);
	s->asked = false;
	s->nq = 0;
}

static bool
ry_using(const struct ry_lock *s)
{
	return s->t.in_cs || s->t.proxy;
}

static void
ry_enqueue(struct ry_lock *s, dm_slot_t j)
{
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i] == j)
			return;
	if (s->nq < DM_NODES_MAX)
		s->q[s->nq++] = j;
}

static void
ry_assign_privilege(struct dm_engine *e, struct dm_lock *l, struct ry_lock *s)
{
	/* "IF HOLDER = self AND NOT USING AND REQUEST_Q not empty THEN
	 *  HOLDER := dequeue(REQUEST_Q); ASKED := false; IF HOLDER = self THEN
	 *  USING := true ELSE send PRIVILEGE to HOLDER" */
	dm_slot_t self = dm_roster_self(e);

	while (s->holder == self && !ry_using(s) && s->nq > 0) {
		dm_slot_t head = s->q[0];
		memmove(s->q, s->q + 1, (size_t)(s->nq - 1) * sizeof(s->q[0]));
		s->nq--;
		s->asked = false;
		if (head == self) {
			if (s->t.wanting)
				dm_token_enter(e, l);
			continue;	/* withdrawn: next in line */
		}
		if (dm_roster_name(e, head) == NULL)
			continue;
		s->holder = head;
		dm_send(e, head, dm_token_msg(e, DM_TK_TOKEN, l));
	}
}

static void
ry_make_request(struct dm_engine *e, struct dm_lock *l, struct ry_lock *s)
{
	/* "IF HOLDER != self AND REQUEST_Q not empty AND NOT ASKED THEN send
	 *  REQUEST to HOLDER; ASKED := true" */
	if (s->holder == dm_roster_self(e) || s->nq == 0 || s->asked ||
	    s->holder == DM_SLOT_NONE || dm_roster_name(e, s->holder) == NULL)
		return;
	dm_send(e, s->holder, dm_token_msg(e, DM_TK_REQUEST, l));
	s->asked = true;
}

static void
ry_ask(struct dm_engine *e, struct dm_lock *l)
{
	struct ry_lock *s = dm_lock_state(l);

	ry_enqueue(s, dm_roster_self(e));
	ry_assign_privilege(e, l, s);
	ry_make_request(e, l, s);
}

static void
ry_pass(struct dm_engine *e, struct dm_lock *l)
{
	struct ry_lock *s = dm_lock_state(l);

	ry_assign_privilege(e, l, s);
	ry_make_request(e, l, s);
}

static int
ry_on_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	/* "On receiving a request insert the requester in your queue", then
	 * ASSIGN_PRIVILEGE and MAKE_REQUEST. */
	ry_enqueue(dm_lock_state(l), from);
	ry_pass(e, l);
	return 0;
}

static int
ry_on_token(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	/* "On receiving the token": HOLDER := self, then ASSIGN_PRIVILEGE and
	 * MAKE_REQUEST. */
	struct ry_lock *s = dm_lock_state(l);

	if (s->holder == dm_roster_self(e))
		return -EPROTO;
	s->holder = dm_roster_self(e);
	ry_pass(e, l);
	return 0;
}

static bool
ry_others_waiting(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct ry_lock *s = dm_lock_state_const(l);

	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i] != dm_roster_self(e))
			return true;
	return false;
}

static bool
ry_initial(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct ry_lock *s = dm_lock_state_const(l);

	return s->nq == 0 && !s->asked &&
	    s->holder == ry_initial_holder(e, dm_token_i_coordinate(e));
}

/* Status: HOLDER (self: the token is here) and the request queue. */
static size_t
ry_describe(const struct dm_engine *e, const struct dm_lock *l, char *buf, size_t size,
    size_t len)
{
	const struct ry_lock *s = dm_lock_state_const(l);

	if (s->holder == dm_roster_self(e))
		len = dm_describe_add(buf, size, len, "token=here");
	else
		len = dm_describe_add(buf, size, len, "token=away toward=%s",
		    s->holder != DM_SLOT_NONE ? dm_roster_name(e, s->holder) : "-");
	len = dm_describe_add(buf, size, len, "queue=%u", (unsigned)s->nq);
	return s->asked ? dm_describe_add(buf, size, len, "asked") : len;
}

static const struct dm_token_ops ry_ops = {
	.describe = ry_describe,
	.reset = ry_reset,
	.ask = ry_ask,
	.pass = ry_pass,
	.others_waiting = ry_others_waiting,
	.initial = ry_initial,
	.on_request = ry_on_request,
	.on_token = ry_on_token,
};

DM_TOKEN_ALGORITHM(dm_algo_raymond, "raymond", struct ry_lock, ry_ops);
