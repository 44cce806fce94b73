/*
 * algo_naimi_trehel.c: path compression (Naimi-Trehel; "Li and Hudak
 * modified" in the lecture), one instance per lock name.  M. Naimi,
 * M. Trehel, A. Arnold, "A log(N) distributed mutual exclusion algorithm
 * based on path reversal", JPDC 34, 1996; sync-and-election-lecture.txt,
 * "Path compression".
 *
 *   "Request_CS: send a REQUEST carrying your id to the current_dir
 *    pointer, set your next pointer to null, set your current_dir to
 *    yourself (add yourself at the end of SW), then wait for the token."
 *   "On the receipt of REQUEST(id): if you are in SW and you are not at the
 *    end of SW, forward REQUEST(id) to your current_dir; if you are at the
 *    end of SW, set your next pointer to id; if you have the token but you
 *    are not using it, send the token to id.  In either case, set your
 *    current_dir to id."
 *   "Exit_CS: if you are not the last processor in SW, send the token to
 *    your next, set your next pointer to NIL."
 *
 * current_dir == self stands for the lecture's "points to itself" (the end
 * of SW).  The epoch's initial state (dm_token.c) is: the coordinator holds
 * the token and is the end of SW; everybody's current_dir points to it.  A
 * name without state here means exactly that.  O(log N) messages per entry
 * on average, 0 when the token is here.
 */
#include <errno.h>
#include <string.h>

#include "dm_token.h"

struct nt_lock {
	struct dm_tlock	 t;
	bool		 has_token;	/* Token_hldr */
	bool		 asked;		/* our REQUEST is out: the token will come */
	dm_slot_t	 current_dir;
	dm_slot_t	 next;
};

static dm_slot_t
nt_initial_dir(const struct dm_engine *e, bool token_here)
{
	return token_here ? dm_roster_self(e) : dm_token_coordinator(e);
}

static void
nt_reset(struct dm_engine *e, struct dm_lock *l, bool token_here)
{
	struct nt_lock *s = dm_lock_state(l);

	s->has_token = token_here;
	s->asked = false;
	s->current_dir = nt_initial_dir(e, token_here);
	s->next = DM_SLOT_NONE;
}

/* IsRequesting: from Request_CS until Release_CS (or the proxy's use), and
 * while a request of ours is out although its client withdrew (see nt_ask). */
static bool
nt_requesting(const struct nt_lock *s)
{
	return s->t.wanting || s->t.in_cs || s->t.proxy || s->asked;
}

static void
nt_send_token(struct dm_engine *e, struct dm_lock *l, struct nt_lock *s, dm_slot_t to)
{
	s->has_token = false;
	dm_send(e, to, dm_token_msg(e, DM_TK_TOKEN, l));
}

static void
nt_send_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t to, const char *requester)
{
	struct dm_msg *m = dm_token_msg(e, DM_TK_REQUEST, l);

	m->payload_len = (uint16_t)strlen(requester);
	memcpy(m->payload, requester, m->payload_len);
	dm_send(e, to, m);
}

static void
nt_ask(struct dm_engine *e, struct dm_lock *l)
{
	/* "IsRequesting := True; if not Token_hldr then send(current_dir,
	 *  REQUEST self); current_dir := self; next := NIL" */
	struct nt_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);

	if (s->has_token) {
		dm_token_enter(e, l);
		return;
	}
	/* Our earlier REQUEST is still out (its client withdrew, which the
	 * lecture's algorithm has no word for): we stay where it put us at
	 * the end of SW, and the token comes.  Asking again would reset next
	 * and lose the request queued behind ours (naimi-trehel --election
	 * invitation --seeds 114..114 --nodes 1-16 --rotate-faults: n2
	 * waited for good). */
	if (s->asked)
		return;
	if (s->current_dir == DM_SLOT_NONE || s->current_dir == self ||
	    dm_roster_name(e, s->current_dir) == NULL)
		return;		/* no way to the token: the watchdog elects */
	nt_send_request(e, l, s->current_dir, dm_roster_name(e, self));
	s->asked = true;
	s->current_dir = self;
	s->next = DM_SLOT_NONE;
}

static void
nt_pass(struct dm_engine *e, struct dm_lock *l)
{
	/* "if next != NIL then Token_hldr := False; send(next, TOKEN); next := NIL" */
	struct nt_lock *s = dm_lock_state(l);

	if (!s->has_token || s->next == DM_SLOT_NONE)
		return;
	if (dm_roster_name(e, s->next) != NULL)
		nt_send_token(e, l, s, s->next);
	s->next = DM_SLOT_NONE;
}

static int
nt_on_request(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	struct nt_lock *s = dm_lock_state(l);
	dm_slot_t self = dm_roster_self(e);
	dm_slot_t r;

	if (m->payload_len == 0 || m->payload_len > DM_NODE_NAME_MAX)
		return -EPROTO;
	r = dm_election_slot_by_name(e, (const char *)m->payload, m->payload_len);
	if (r == DM_SLOT_NONE || r == self)
		return 0;	/* a removed requester: the election redoes it */
	if (s->current_dir != self) {
		/* Not the end of SW: "forward REQUEST(id) to your current_dir". */
		if (s->current_dir != DM_SLOT_NONE)
			nt_send_request(e, l, s->current_dir, dm_roster_name(e, r));
	} else if (nt_requesting(s) || !s->has_token) {
		/* The end of SW: "set your next pointer to id". */
		s->next = r;
	} else {
		/* "if you have the token but you are not using it, send the token" */
		nt_send_token(e, l, s, r);
	}
	/* "In either case, set your current_dir to id." */
	s->current_dir = r;
	return 0;
}

static int
nt_on_token(struct dm_engine *e, struct dm_lock *l, dm_slot_t from, const struct dm_msg *m)
{
	/* "on the receipt of TOKEN do Token_hldr := True" */
	struct nt_lock *s = dm_lock_state(l);

	if (s->has_token)
		return -EPROTO;
	s->has_token = true;
	s->asked = false;
	dm_token_arrived(e, l);
	return 0;
}

static bool
nt_others_waiting(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct nt_lock *s = dm_lock_state_const(l);

	return s->next != DM_SLOT_NONE;
}

static bool
nt_initial(const struct dm_engine *e, const struct dm_lock *l)
{
	const struct nt_lock *s = dm_lock_state_const(l);
	bool coord = dm_token_i_coordinate(e);

	return s->has_token == coord && !s->asked && s->next == DM_SLOT_NONE &&
	    s->current_dir == nt_initial_dir(e, coord);
}

/* Status: Token_hldr, current_dir (the probable owner) and next. */
static size_t
nt_describe(const struct dm_engine *e, const struct dm_lock *l, char *buf, size_t size,
    size_t len)
{
	const struct nt_lock *s = dm_lock_state_const(l);

	if (s->has_token)
		len = dm_describe_add(buf, size, len, "token=here");
	else
		len = dm_describe_add(buf, size, len, "token=away toward=%s",
		    s->current_dir != DM_SLOT_NONE ? dm_roster_name(e, s->current_dir) : "-");
	return dm_describe_add(buf, size, len, "next=%s",
	    s->next != DM_SLOT_NONE ? dm_roster_name(e, s->next) : "-");
}

static const struct dm_token_ops nt_ops = {
	.describe = nt_describe,
	.reset = nt_reset,
	.ask = nt_ask,
	.pass = nt_pass,
	.others_waiting = nt_others_waiting,
	.initial = nt_initial,
	.on_request = nt_on_request,
	.on_token = nt_on_token,
};

DM_TOKEN_ALGORITHM(dm_algo_naimi_trehel, "naimi-trehel", struct nt_lock, nt_ops);
