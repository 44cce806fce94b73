/*
 * sim_check.c: the oracle behind sim_check.h.  Small linear tables: a run
 * has a handful of lock names and a few dozen clients, and simplicity is
 * worth more here than asymptotics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_check.h"

struct sim_request {
	uint64_t	 handle;
	int		 node;
	size_t		 lock;		/* index into ck->locks */
	enum dm_mode	 mode;
	sim_time_t	 issued;
};

struct sim_claim {
	uint64_t	 handle;
	int		 node;
	size_t		 lock;
	enum dm_mode	 mode;
	uint64_t	 token;
	sim_time_t	 since, expiry;	/* expiry 0: none */
	bool		 active;	/* the client believes it holds */
};

struct sim_lockstate {
	char		 name[DM_LOCK_NAME_MAX + 1];
	bool		 any_grant, any_excl;
	uint64_t	 max_token, max_excl_token;
	uint64_t	 max_token_handle;
	unsigned	 holders[SIM_NODES_MAX];	/* engine-level holders per node */
	bool		 tracked[SIM_NODES_MAX];
	sim_time_t	 net_since[SIM_NODES_MAX];
	unsigned	 others[SIM_NODES_MAX];		/* other entries since */
	/* Of a tracked (waiting) node m: the mode it asks for (exclusive once
	 * any REQUEST of the round was), its first REQUEST's number, and the
	 * nodes that have received a REQUEST of this round (bit j). */
	enum dm_mode	 wait_mode[SIM_NODES_MAX];
	uint64_t	 wait_seq[SIM_NODES_MAX];
	uint64_t	 seen_by[SIM_NODES_MAX];
	/* Of node j's current entry: when it began, the waiters tracked then
	 * (bit m), and the waiters it has been counted against. */
	sim_time_t	 entry_at[SIM_NODES_MAX];
	uint64_t	 entry_waiters[SIM_NODES_MAX];
	uint64_t	 entry_counted[SIM_NODES_MAX];
	sim_time_t	 last_end[SIM_NODES_MAX];	/* node's last holder ended */
	bool		 ended[SIM_NODES_MAX];
};

static const char *const violation_names[] = {
	[SIM_OK] = "none",
	[SIM_V_EXCLUSION] = "mutual-exclusion",
	[SIM_V_TOKEN] = "fencing-token-order",
	[SIM_V_LIVENESS] = "liveness",
	[SIM_V_BOUND] = "grants-between-bound",
	[SIM_V_PROTOCOL] = "client-protocol",
	[SIM_V_MESSAGES] = "messages-per-entry",
	[SIM_V_NONDETERMINISM] = "nondeterminism",
};

const char *
sim_violation_name(enum sim_violation v)
{
	if ((size_t)v < sizeof(violation_names) / sizeof(violation_names[0]))
		return violation_names[v];
	return "unknown";
}

void
sim_check_init(struct sim_checker *ck)
{
	memset(ck, 0, sizeof(*ck));
}

void
sim_check_fini(struct sim_checker *ck)
{
	free(ck->claims);
	free(ck->reqs);
	free(ck->locks);
	memset(ck, 0, sizeof(*ck));
}

int
sim_check_fail(struct sim_checker *ck, enum sim_violation v, const char *fmt, ...)
{
	va_list ap;

	if (ck->violation != SIM_OK)
		return -1;
	ck->violation = v;
	va_start(ap, fmt);
	vsnprintf(ck->what, sizeof(ck->what), fmt, ap);
	va_end(ap);
	return -1;
}

static int
grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static long
lock_find(struct sim_checker *ck, const char *lock, bool create)
{
	struct sim_lockstate *ls;

	for (size_t i = 0; i < ck->n_locks; i++)
		if (strcmp(ck->locks[i].name, lock) == 0)
			return (long)i;
	if (!create || strlen(lock) > DM_LOCK_NAME_MAX)
		return -1;
	if (grow((void **)&ck->locks, &ck->cap_locks, ck->n_locks, sizeof(*ck->locks)) < 0)
		return -1;
	ls = &ck->locks[ck->n_locks];
	memset(ls, 0, sizeof(*ls));
	strcpy(ls->name, lock);
	return (long)ck->n_locks++;
}

static struct sim_request *
req_find(struct sim_checker *ck, uint64_t handle)
{
	for (size_t i = 0; i < ck->n_reqs; i++)
		if (ck->reqs[i].handle == handle)
			return &ck->reqs[i];
	return NULL;
}

static void
req_remove(struct sim_checker *ck, struct sim_request *r)
{
	*r = ck->reqs[--ck->n_reqs];
}

static struct sim_claim *
claim_find(struct sim_checker *ck, uint64_t handle)
{
	for (size_t i = 0; i < ck->n_claims; i++)
		if (ck->claims[i].handle == handle)
			return &ck->claims[i];
	return NULL;
}

static const char *
mode_name(enum dm_mode m)
{
	return m == DM_MODE_SHARED ? "shared" : "exclusive";
}

int
sim_check_request(struct sim_checker *ck, sim_time_t t, int node,
    uint64_t handle, const char *lock, enum dm_mode mode)
{
	struct sim_request *r;
	long li;

	if (ck->violation)
		return -1;
	if (node < 0 || node >= SIM_NODES_MAX)
		return sim_check_fail(ck, SIM_V_PROTOCOL, "node %d out of range", node);
	if (req_find(ck, handle) || claim_find(ck, handle))
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "handle %#" PRIx64 " reused while in use", handle);
	li = lock_find(ck, lock, true);
	if (li < 0 || grow((void **)&ck->reqs, &ck->cap_reqs, ck->n_reqs, sizeof(*ck->reqs)) < 0)
		return sim_check_fail(ck, SIM_V_PROTOCOL, "checker out of memory");
	r = &ck->reqs[ck->n_reqs++];
	r->handle = handle;
	r->node = node;
	r->lock = (size_t)li;
	r->mode = mode;
	r->issued = t;
	return 0;
}

static void
claim_expire(struct sim_claim *c, sim_time_t t)
{
	if (c->active && c->expiry != 0 && c->expiry <= t)
		c->active = false;
}

static int
check_exclusion(struct sim_checker *ck, sim_time_t t, const struct sim_claim *g)
{
	struct sim_lockstate *ls = &ck->locks[g->lock];

	for (size_t i = 0; i < ck->n_claims; i++) {
		struct sim_claim *c = &ck->claims[i];

		if (c == g || c->lock != g->lock)
			continue;
		claim_expire(c, t);
		if (!c->active)
			continue;
		if (c->mode == DM_MODE_SHARED && g->mode == DM_MODE_SHARED)
			continue;
		return sim_check_fail(ck, SIM_V_EXCLUSION,
		    "lock '%s': n%d client %#" PRIx64 " granted %s (token %" PRIu64
		    ") at %" PRIu64 "us while n%d client %#" PRIx64 " holds it %s"
		    " (token %" PRIu64 ", since %" PRIu64 "us, expiry %" PRIu64 "us)",
		    ls->name, g->node, g->handle, mode_name(g->mode), g->token, t,
		    c->node, c->handle, mode_name(c->mode), c->token, c->since, c->expiry);
	}
	return 0;
}

static int
check_token(struct sim_checker *ck, const struct sim_claim *g)
{
	struct sim_lockstate *ls = &ck->locks[g->lock];

	if (g->mode == DM_MODE_EXCLUSIVE && ls->any_grant && g->token <= ls->max_token)
		return sim_check_fail(ck, SIM_V_TOKEN,
		    "lock '%s': n%d client %#" PRIx64 " granted exclusive with token %"
		    PRIu64 ", not above earlier token %" PRIu64 " (client %#" PRIx64 ")",
		    ls->name, g->node, g->handle, g->token, ls->max_token,
		    ls->max_token_handle);
	if (g->mode == DM_MODE_SHARED && ls->any_excl && g->token <= ls->max_excl_token)
		return sim_check_fail(ck, SIM_V_TOKEN,
		    "lock '%s': n%d client %#" PRIx64 " granted shared with token %"
		    PRIu64 ", not above earlier exclusive token %" PRIu64,
		    ls->name, g->node, g->handle, g->token, ls->max_excl_token);
	if (!ls->any_grant || g->token > ls->max_token) {
		ls->max_token = g->token;
		ls->max_token_handle = g->handle;
	}
	ls->any_grant = true;
	if (g->mode == DM_MODE_EXCLUSIVE && (!ls->any_excl || g->token > ls->max_excl_token)) {
		ls->max_excl_token = g->token;
		ls->any_excl = true;
	}
	return 0;
}

static bool
modes_conflict(enum dm_mode a, enum dm_mode b)
{
	return a == DM_MODE_EXCLUSIVE || b == DM_MODE_EXCLUSIVE;
}

/*
 * Node `node` is granted lock in mode; entry: it had no local holder before
 * (a grant in the same instant as its last holder ended, or next to other
 * holders, continues the current entry).  Count the grant against every
 * other tracked (waiting) node m, then, on an entry, check node's own count.
 *
 * What is counted against m (the Appendix's "critical section entries
 * before A"), given the two additions the engine makes to the paper:
 *  - Readers (section 6.6): only grants that conflict with m's request
 *    count.  A reader replies at once to every other reader whatever its
 *    sequence number, so the Appendix argument (m defers every later request
 *    of j) does not apply between readers, and nothing bounds the readers
 *    that enter while a reader waits (seed 28690/3: a shared request was
 *    passed by 2 exclusive and 3 shared entries).  They do not delay it
 *    either: they hold in a mode compatible with it.  Between a reader and a
 *    writer, or two writers, the argument holds unchanged.
 *  - Local handoff: j may hand the lock to another local client (or let one
 *    join its holders) without a network round only while no other node's
 *    request is deferred, i.e. until m's REQUEST reaches it; that is the
 *    same node-level critical section and counts once, against the waiters
 *    tracked when it began, as soon as one of its grants conflicts.  A
 *    conflicting grant continuing j's entry after m's REQUEST of this round
 *    reached j (and after the entry's first instant) is an overtaking of m
 *    and counts as one more entry each time.
 */
static int
note_grant(struct sim_checker *ck, sim_time_t t, int node, size_t lock,
    enum dm_mode mode, bool entry)
{
	struct sim_lockstate *ls = &ck->locks[lock];
	unsigned bound;

	if (entry) {
		ck->entries++;
		ls->entry_at[node] = t;
		ls->entry_waiters[node] = 0;
		ls->entry_counted[node] = 0;
	}
	for (int m = 0; m < SIM_NODES_MAX; m++) {
		uint64_t bit = UINT64_C(1) << m;

		if (m == node || !ls->tracked[m])
			continue;
		if (entry)
			ls->entry_waiters[node] |= bit;
		if (!modes_conflict(mode, ls->wait_mode[m]))
			continue;
		if ((ls->entry_waiters[node] & bit) && !(ls->entry_counted[node] & bit)) {
			ls->entry_counted[node] |= bit;
			ls->others[m]++;
		} else if ((ls->seen_by[m] & (UINT64_C(1) << node)) && t != ls->entry_at[node]) {
			ls->others[m]++;
		}
	}
	if (!entry || !ls->tracked[node])
		return 0;
	ls->tracked[node] = false;
	if (ck->bound_nodes == 0)
		return 0;
	bound = 2 * (ck->bound_nodes - 1);
	if (ls->others[node] > bound)
		return sim_check_fail(ck, SIM_V_BOUND,
		    "lock '%s': n%d entered %s at %" PRIu64 "us after %u conflicting entries"
		    " of other nodes since its REQUEST at %" PRIu64 "us (bound 2(N-1) = %u,"
		    " N = %u)", ls->name, node, mode_name(ls->wait_mode[node]), t,
		    ls->others[node], ls->net_since[node], bound, ck->bound_nodes);
	return 0;
}

int
sim_check_grant(struct sim_checker *ck, sim_time_t t, int node,
    uint64_t handle, uint64_t token, sim_time_t expiry)
{
	struct sim_lockstate *ls;
	struct sim_request *r;
	struct sim_claim *g;
	bool entry;

	if (ck->violation)
		return -1;
	r = req_find(ck, handle);
	if (!r)
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "n%d: grant to client %#" PRIx64 " that has no pending request",
		    node, handle);
	if (r->node != node)
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "grant to client %#" PRIx64 " of n%d came from n%d", handle, r->node, node);
	if (grow((void **)&ck->claims, &ck->cap_claims, ck->n_claims, sizeof(*ck->claims)) < 0)
		return sim_check_fail(ck, SIM_V_PROTOCOL, "checker out of memory");
	g = &ck->claims[ck->n_claims++];
	g->handle = handle;
	g->node = node;
	g->lock = r->lock;
	g->mode = r->mode;
	g->token = token;
	g->since = t;
	g->expiry = expiry;
	g->active = expiry == 0 || expiry > t;
	req_remove(ck, r);
	ck->grants++;
	if (check_exclusion(ck, t, g) < 0 || check_token(ck, g) < 0)
		return -1;
	/* A grant in the same instant as the node's last holder ended is a
	 * local handoff: the same entry continues (messages take time). */
	ls = &ck->locks[g->lock];
	entry = ls->holders[node]++ == 0 && !(ls->ended[node] && ls->last_end[node] == t);
	return note_grant(ck, t, node, g->lock, g->mode, entry);
}

int
sim_check_deny(struct sim_checker *ck, sim_time_t t, uint64_t handle)
{
	struct sim_request *r;

	(void)t;
	if (ck->violation)
		return -1;
	r = req_find(ck, handle);
	if (!r)
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "denial to client %#" PRIx64 " that has no pending request", handle);
	req_remove(ck, r);
	ck->denials++;
	return 0;
}

int
sim_check_withdraw(struct sim_checker *ck, sim_time_t t, uint64_t handle)
{
	struct sim_request *r;

	(void)t;
	if (ck->violation)
		return -1;
	r = req_find(ck, handle);
	if (r)
		req_remove(ck, r);
	return 0;
}

int
sim_check_end(struct sim_checker *ck, sim_time_t t, uint64_t handle)
{
	struct sim_claim *c;
	struct sim_lockstate *ls;

	if (ck->violation)
		return -1;
	c = claim_find(ck, handle);
	if (!c)
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "end of client %#" PRIx64 " that holds nothing", handle);
	ls = &ck->locks[c->lock];
	if (ls->holders[c->node] > 0)
		ls->holders[c->node]--;
	ls->ended[c->node] = true;
	ls->last_end[c->node] = t;
	*c = ck->claims[--ck->n_claims];
	return 0;
}

int
sim_check_expiry(struct sim_checker *ck, sim_time_t t, uint64_t handle,
    sim_time_t expiry)
{
	struct sim_claim *c;

	if (ck->violation)
		return -1;
	c = claim_find(ck, handle);
	if (!c)
		return sim_check_fail(ck, SIM_V_PROTOCOL,
		    "extension for client %#" PRIx64 " that holds nothing", handle);
	/* An extension after the expiry passed does not revive the claim: the
	 * client has already given the lock up. */
	claim_expire(c, t);
	c->expiry = expiry;
	return 0;
}

int
sim_check_net_request(struct sim_checker *ck, sim_time_t t, int node, const char *lock,
    enum dm_mode mode, uint64_t seq)
{
	struct sim_lockstate *ls;
	long li;

	if (ck->violation)
		return -1;
	if (node < 0 || node >= SIM_NODES_MAX)
		return 0;
	li = lock_find(ck, lock, true);
	if (li < 0)
		return 0;
	ls = &ck->locks[li];
	if (ls->tracked[node] && seq == ls->wait_seq[node])
		return 0;	/* the same request again (a probe's resend) */
	if (ls->tracked[node]) {
		/* A new REQUEST while one was out: the node withdrew it (a
		 * shared request for an exclusive head, or a roster change
		 * that asks again) and asked under a new sequence number.  The
		 * Appendix bound is a bound per request: RA orders the new one
		 * by its own number, so the count starts again here.  Counting
		 * from the first made a withdrawn shared request's readers
		 * count as the writer's (seed 681916/13, pauses: 27 "conflicting"
		 * entries against a bound of 24, most of them shared entries
		 * while n1 itself asked only to read).  Starvation by repeated
		 * withdrawals is what the liveness bound catches. */
		ls->others[node] = 0;
		ls->net_since[node] = t;
		ls->wait_mode[node] = mode;
		ls->wait_seq[node] = seq;
		ls->seen_by[node] = 0;
		return 0;
	}
	if (ls->holders[node] > 0)
		return 0;
	ls->tracked[node] = true;
	ls->others[node] = 0;
	ls->net_since[node] = t;
	ls->wait_mode[node] = mode;
	ls->wait_seq[node] = seq;
	ls->seen_by[node] = 0;
	return 0;
}

void
sim_check_net_deliver(struct sim_checker *ck, int node, int from, const char *lock,
    uint64_t seq)
{
	long li = lock_find(ck, lock, false);
	struct sim_lockstate *ls;

	if (li < 0 || node < 0 || node >= SIM_NODES_MAX || from < 0 || from >= SIM_NODES_MAX)
		return;
	ls = &ck->locks[li];
	if (ls->tracked[from] && seq >= ls->wait_seq[from])
		ls->seen_by[from] |= UINT64_C(1) << node;
}

void
sim_check_untrack(struct sim_checker *ck, int node, const char *lock)
{
	long li = lock_find(ck, lock, false);

	if (li >= 0 && node >= 0 && node < SIM_NODES_MAX)
		ck->locks[li].tracked[node] = false;
}

void
sim_check_untrack_all(struct sim_checker *ck)
{
	for (size_t i = 0; i < ck->n_locks; i++)
		memset(ck->locks[i].tracked, 0, sizeof(ck->locks[i].tracked));
}

int
sim_check_forget_node(struct sim_checker *ck, sim_time_t t, int node)
{
	(void)t;
	if (ck->violation)
		return -1;
	for (size_t i = 0; i < ck->n_reqs;)
		if (ck->reqs[i].node == node)
			req_remove(ck, &ck->reqs[i]);
		else
			i++;
	for (size_t i = 0; i < ck->n_claims;)
		if (ck->claims[i].node == node)
			ck->claims[i] = ck->claims[--ck->n_claims];
		else
			i++;
	for (size_t i = 0; i < ck->n_locks; i++) {
		ck->locks[i].holders[node] = 0;
		ck->locks[i].tracked[node] = false;
	}
	return 0;
}

void
sim_check_heal(struct sim_checker *ck, sim_time_t t)
{
	ck->healed = true;
	ck->healed_at = t;
}

int
sim_check_progress(struct sim_checker *ck, sim_time_t t, sim_time_t bound)
{
	if (ck->violation)
		return -1;
	if (!ck->healed)
		return 0;
	for (size_t i = 0; i < ck->n_reqs; i++) {
		const struct sim_request *r = &ck->reqs[i];
		sim_time_t since = r->issued > ck->healed_at ? r->issued : ck->healed_at;

		if (t > since && t - since > bound)
			return sim_check_fail(ck, SIM_V_LIVENESS,
			    "lock '%s': n%d client %#" PRIx64 " (%s) requested at %"
			    PRIu64 "us is still pending at %" PRIu64 "us, %" PRIu64
			    "us after healing at %" PRIu64 "us (bound %" PRIu64 "us)",
			    ck->locks[r->lock].name, r->node, r->handle, mode_name(r->mode),
			    r->issued, t, t - since, ck->healed_at, bound);
	}
	return 0;
}

int
sim_check_messages(struct sim_checker *ck, uint64_t messages, uint64_t entries,
    unsigned n_nodes, unsigned per_peer)
{
	uint64_t want = per_peer * (uint64_t)(n_nodes ? n_nodes - 1 : 0);

	if (ck->violation)
		return -1;
	if (messages != want * entries)
		return sim_check_fail(ck, SIM_V_MESSAGES,
		    "%" PRIu64 " algorithm messages for %" PRIu64 " entries with N = %u:"
		    " expected exactly %u(N-1) = %" PRIu64 " per entry", messages, entries,
		    n_nodes, per_peer, want);
	return 0;
}

size_t
sim_check_pending(const struct sim_checker *ck)
{
	return ck->n_reqs;
}
