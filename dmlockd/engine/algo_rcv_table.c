/*
 * algo_rcv_table.c: the system information (SI) of relative consensus
 * voting for one lock -- NONL and NSIT -- with the paper's Exchange (§4.3)
 * and Order (§4.2) procedures and the SI's compact wire form.  Pure
 * functions on struct rcv_table: no engine calls.
 *
 * Reading of the paper used here (see NOTES-rcv.md for the argument):
 *  - Each MNL (row of node r) is r's arrival order of request messages; only
 *    r appends to it, and its version NSIT[r].TS grows with each append, so
 *    of two copies of a row the one with the higher TS is the newer.
 *  - Row r "votes" for its first tuple that is neither ordered nor finished.
 *    A vote read from a known row is exact; an empty or unknown row may
 *    still vote for anyone (the paper's N - sum S_h).
 *  - A tuple <j, t> is finished once j's own record says so (RCV_F_DONE) or
 *    once a newer tuple of j is known (one outstanding request per node).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "algo_rcv.h"

void
rcv_table_attach(struct rcv_table *t, struct rcv_table_space *space)
{
	memset(t, 0, sizeof(*t));
	t->cap = RCV_NODES_MAX;
	t->latest = space->latest;
	t->flags = space->flags;
	t->row_ts = space->row_ts;
	t->row_len = space->row_len;
	t->nonl = space->nonl;
	t->rows = space->rows;
}

int
rcv_table_reserve(struct rcv_table *t, uint16_t n)
{
	/* One block: the 8-byte arrays first, then the 2-byte one, then bytes. */
	size_t cap = n > 0 ? n : 1;
	size_t size = cap * (2 * sizeof(uint64_t) + sizeof(uint16_t) + 2) + cap * cap;
	uint8_t *b;

	if (n <= t->cap && t->latest != NULL)
		return 0;
	b = malloc(size);
	if (b == NULL)
		return -ENOMEM;
	free(t->block);
	t->block = b;
	t->cap = (uint16_t)cap;
	t->latest = (uint64_t *)(void *)b;
	t->row_ts = t->latest + cap;
	t->row_len = (uint16_t *)(void *)(t->row_ts + cap);
	t->flags = (uint8_t *)(t->row_len + cap);
	t->nonl = t->flags + cap;
	t->rows = t->nonl + cap;
	t->n = 0;		/* (empty until rcv_table_init()) */
	t->n_nonl = 0;
	t->started = false;
	return 0;
}

void
rcv_table_release(struct rcv_table *t)
{
	free(t->block);
	memset(t, 0, sizeof(*t));
}

/* Everything but the rows: no entry of row r past row_len[r] is ever read,
 * so the rows need no clearing.  This runs for the SI of every message
 * received. */
void
rcv_table_init(struct rcv_table *t, uint16_t n)
{
	t->n = n;
	t->started = false;
	t->n_nonl = 0;
	memset(t->latest, 0, n * sizeof(*t->latest));
	memset(t->row_ts, 0, n * sizeof(*t->row_ts));
	memset(t->row_len, 0, n * sizeof(*t->row_len));
	memset(t->flags, 0, n);
}

int
rcv_nonl_find(const struct rcv_table *t, uint16_t j)
{
	for (int i = 0; i < t->n_nonl; i++)
		if (t->nonl[i] == j)
			return i;
	return -1;
}

bool
rcv_row_has(const struct rcv_table *t, uint16_t row, uint16_t j)
{
	for (uint16_t i = 0; i < t->row_len[row]; i++)
		if (rcv_row(t, row)[i] == j)
			return true;
	return false;
}

bool
rcv_pending(const struct rcv_table *t, uint16_t j)
{
	return j < t->n && t->latest[j] != 0 && !(t->flags[j] & RCV_F_DONE);
}

static void
row_remove(struct rcv_table *t, uint16_t row, uint16_t j)
{
	uint16_t w = 0;

	for (uint16_t i = 0; i < t->row_len[row]; i++)
		if (rcv_row(t, row)[i] != j)
			rcv_row(t, row)[w++] = rcv_row(t, row)[i];
	t->row_len[row] = w;
}

static void
nonl_remove(struct rcv_table *t, uint16_t j)
{
	uint16_t w = 0;

	for (uint16_t i = 0; i < t->n_nonl; i++)
		if (t->nonl[i] != j)
			t->nonl[w++] = t->nonl[i];
	t->n_nonl = w;
}

/* "delete TP from any row of NSIT" */
static void
rows_remove(struct rcv_table *t, uint16_t j)
{
	for (uint16_t r = 0; r < t->n; r++)
		row_remove(t, r, j);
}

void
rcv_set_latest(struct rcv_table *t, uint16_t j, uint64_t ts, uint8_t flags)
{
	if (ts != t->latest[j]) {
		/* Every trace of j refers to its older tuple, which is finished. */
		rows_remove(t, j);
		nonl_remove(t, j);
	}
	t->latest[j] = ts;
	t->flags[j] = flags & RCV_F_MASK;
}

bool
rcv_register(struct rcv_table *t, uint16_t row, uint16_t j, uint64_t ts)
{
	if (row >= t->n || j >= t->n || !rcv_pending(t, j) || rcv_nonl_find(t, j) >= 0 ||
	    rcv_row_has(t, row, j))
		return false;
	rcv_row(t, row)[t->row_len[row]++] = (uint8_t)j;
	if (ts > t->row_ts[row])
		t->row_ts[row] = ts;
	return true;
}

void
rcv_prune(struct rcv_table *t)
{
	uint16_t w = 0;

	for (uint16_t i = 0; i < t->n_nonl; i++)
		if (rcv_pending(t, t->nonl[i]))
			t->nonl[w++] = t->nonl[i];
	t->n_nonl = w;
	for (uint16_t r = 0; r < t->n; r++) {
		w = 0;
		for (uint16_t i = 0; i < t->row_len[r]; i++) {
			uint16_t j = rcv_row(t, r)[i];
			if (rcv_pending(t, j) && rcv_nonl_find(t, j) < 0)
				rcv_row(t, r)[w++] = (uint8_t)j;
		}
		t->row_len[r] = w;
	}
}

/* Is a (after pruning) a prefix of b? */
static bool
nonl_prefix(const uint8_t *a, uint16_t na, const uint8_t *b, uint16_t nb)
{
	return na <= nb && memcmp(a, b, na) == 0;
}

int
rcv_exchange(struct rcv_table *l, const struct rcv_table *m)
{
	uint8_t mn[RCV_NODES_MAX];
	uint16_t n_mn = 0;

	if (m->n != l->n)
		return -EPROTO;
	/* Tuples: the newer tuple of each node wins; flags of one tuple only grow. */
	for (uint16_t j = 0; j < l->n; j++) {
		if (m->latest[j] > l->latest[j])
			rcv_set_latest(l, j, m->latest[j], m->flags[j]);
		else if (m->latest[j] == l->latest[j])
			l->flags[j] |= m->flags[j] & RCV_F_MASK;
	}
	rcv_prune(l);
	/* Lines 1-12: drop outdated (finished) tuples from both lists; what is
	 * left of one is a prefix of the other; keep the longer. */
	for (uint16_t i = 0; i < m->n_nonl; i++) {
		uint16_t j = m->nonl[i];
		if (m->latest[j] == l->latest[j] && rcv_pending(l, j))
			mn[n_mn++] = (uint8_t)j;
	}
	if (n_mn > l->n_nonl) {
		if (!nonl_prefix(l->nonl, l->n_nonl, mn, n_mn))
			return -EPROTO;
		memcpy(l->nonl, mn, n_mn);
		l->n_nonl = n_mn;
	} else if (!nonl_prefix(mn, n_mn, l->nonl, l->n_nonl)) {
		return -EPROTO;
	}
	if (m->started || l->n_nonl > 0)
		l->started = true;
	/* Lines 13-22: "set SI_i.NSIT[k] = MSIT[k]" where the message's TS is
	 * greater, keeping only entries that name the same (pending) tuple. */
	for (uint16_t r = 0; r < l->n; r++) {
		uint16_t w = 0;
		if (m->row_ts[r] <= l->row_ts[r])
			continue;
		for (uint16_t i = 0; i < m->row_len[r]; i++) {
			uint16_t j = rcv_row(m, r)[i];
			if (m->latest[j] == l->latest[j])
				rcv_row(l, r)[w++] = (uint8_t)j;
		}
		l->row_len[r] = w;
		l->row_ts[r] = m->row_ts[r];
	}
	rcv_prune(l);
	return 0;
}

/* Is every row of the generation known (each member has joined it)? */
static bool
all_rows_known(const struct rcv_table *t)
{
	for (uint16_t r = 0; r < t->n; r++)
		if (t->row_ts[r] == 0)
			return false;
	return true;
}

static void
order_append(struct rcv_table *t, uint16_t j)
{
	/* "append the TP_1 to NONL_i; delete TP_1 from any row of NSIT_i" */
	t->nonl[t->n_nonl++] = (uint8_t)j;
	t->started = true;
	rows_remove(t, j);
}

/* Stage one of a generation: a node that was in its CS when it joined the
 * generation goes first (it is there already). */
static int
holder_pending(const struct rcv_table *t)
{
	for (uint16_t r = 0; r < t->n; r++)
		for (uint16_t i = 0; i < t->row_len[r]; i++)
			if (t->flags[rcv_row(t, r)[i]] & RCV_F_HOLDER)
				return rcv_row(t, r)[i];
	return -1;
}

bool
rcv_order(struct rcv_table *t, uint16_t host)
{
	uint16_t votes[RCV_NODES_MAX];

	rcv_prune(t);
	for (;;) {
		uint32_t sum = 0, s1 = 0, s2 = 0, u;
		int tp1 = -1, tp2 = -1, h;
		bool ok;

		if (rcv_nonl_find(t, host) >= 0)
			return true;	/* "already ordered when processing other RM" */
		/* Not in the paper: the first decision of a generation needs every
		 * member's row of that generation (NOTES-rcv.md, roster changes). */
		if (!t->started) {
			if (!all_rows_known(t))
				return false;
			if ((h = holder_pending(t)) >= 0) {
				order_append(t, (uint16_t)h);
				continue;
			}
		}
		/* "each TP_h reaches the top of S_h rows of MNL in NSIT" */
		memset(votes, 0, sizeof(votes[0]) * t->n);
		for (uint16_t r = 0; r < t->n; r++)
			if (t->row_ts[r] != 0 && t->row_len[r] > 0) {
				votes[rcv_row(t, r)[0]]++;
				sum++;
			}
		/* Sequence {TP_h}: more tops first, then the smaller id. */
		for (uint16_t j = 0; j < t->n; j++) {
			if (votes[j] == 0)
				continue;
			if (tp1 < 0 || votes[j] > s1) {
				tp2 = tp1;
				s2 = s1;
				tp1 = j;
				s1 = votes[j];
			} else if (tp2 < 0 || votes[j] > s2) {
				tp2 = j;
				s2 = votes[j];
			}
		}
		if (tp1 < 0)
			return false;
		/* N - sum S_h: rows whose vote is still open. */
		u = t->n - sum;
		/* "(S_1 - S_2 > N - sum S_h) or (S_1 - S_2 = N - sum S_h and
		 *  TP_1.NodeID < TP_2.NodeID)"; with one candidate, an unseen
		 *  tuple could take every open row, so the win must be strict. */
		if (tp2 < 0)
			ok = s1 > u;
		else
			ok = s1 - s2 > u || (s1 - s2 == u && tp1 < tp2);
		if (!ok)
			return false;
		order_append(t, (uint16_t)tp1);
		if (tp1 == host)
			return true;
	}
}

void
rcv_rm_candidates(const struct rcv_table *t, const uint8_t *ul, uint16_t n, uint8_t *pref,
    uint16_t *count)
{
	uint16_t c = 0;

	for (int any = 0; any < 2 && c == 0; any++) {
		memset(pref, 0, (RCV_NODES_MAX + 7u) / 8u);
		for (uint16_t r = 0; r < n && r < t->n; r++) {
			if (!((ul[r / 8] >> (r % 8)) & 1u))
				continue;
			/* A row votes already if a copy of it here does, or if its
			 * node has a request of its own not yet ordered (a home
			 * node puts its own tuple in its row first). */
			if (!any && ((t->row_ts[r] != 0 && t->row_len[r] > 0) ||
			    (rcv_pending(t, r) && rcv_nonl_find(t, r) < 0)))
				continue;
			pref[r / 8] |= (uint8_t)(1u << (r % 8));
			c++;
		}
	}
	*count = c;
}

/* --- Wire form --- */

struct wbuf {
	uint8_t	*p;
	size_t	 len, cap;
	bool	 over;
};

static void
put_u8(struct wbuf *w, uint8_t v)
{
	if (w->len >= w->cap) {
		w->over = true;
		return;
	}
	w->p[w->len++] = v;
}

static void
put_varint(struct wbuf *w, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		put_u8(w, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static size_t
varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

/* Layout: varint N | u8 started | per node: varint latest, [u8 flags if
 * latest] | varint n_nonl, ranks | per row: varint TS, [varint len, ranks]. */
int
rcv_table_encode(const struct rcv_table *t, uint16_t prefer_j, uint8_t *buf, size_t cap)
{
	struct wbuf w = { .p = buf, .cap = cap };
	bool include[RCV_NODES_MAX];
	size_t need, rows_min = 0;

	put_varint(&w, t->n);
	put_u8(&w, t->started ? 1 : 0);
	for (uint16_t j = 0; j < t->n; j++) {
		put_varint(&w, t->latest[j]);
		if (t->latest[j] != 0)
			put_u8(&w, t->flags[j]);
	}
	put_varint(&w, t->n_nonl);
	for (uint16_t i = 0; i < t->n_nonl; i++)
		put_u8(&w, t->nonl[i]);
	if (w.over)
		return -EMSGSIZE;
	/* Every row costs at least one byte (TS 0 = not included). */
	rows_min = t->n;
	need = w.len + rows_min;
	if (need > cap)
		return -EMSGSIZE;
	/* Choose rows: those holding prefer_j (the roaming host's votes) first,
	 * then the rest in slot order, while they fit. */
	memset(include, 0, sizeof(include));
	for (int pass = 0; pass < 2; pass++)
		for (uint16_t r = 0; r < t->n; r++) {
			size_t cost;
			bool has = prefer_j < t->n && rcv_row_has(t, r, prefer_j);
			if (include[r] || t->row_ts[r] == 0 || (pass == 0 && !has))
				continue;
			cost = varint_len(t->row_ts[r]) + varint_len(t->row_len[r]) +
			    t->row_len[r] - 1;
			if (need + cost <= cap) {
				include[r] = true;
				need += cost;
			}
		}
	for (uint16_t r = 0; r < t->n; r++) {
		if (!include[r]) {
			put_varint(&w, 0);
			continue;
		}
		put_varint(&w, t->row_ts[r]);
		put_varint(&w, t->row_len[r]);
		for (uint16_t i = 0; i < t->row_len[r]; i++)
			put_u8(&w, rcv_row(t, r)[i]);
	}
	return w.over ? -EMSGSIZE : (int)w.len;
}

struct rbuf {
	const uint8_t	*p;
	size_t		 left;
	bool		 bad;
};

static uint8_t
get_u8(struct rbuf *r)
{
	if (r->left == 0) {
		r->bad = true;
		return 0;
	}
	r->left--;
	return *r->p++;
}

static uint64_t
get_varint(struct rbuf *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = get_u8(r);
		if (r->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

int
rcv_table_decode(struct rcv_table *t, uint16_t n, const uint8_t *buf, size_t len, size_t *used)
{
	struct rbuf r = { .p = buf, .left = len };
	bool seen[RCV_NODES_MAX];
	uint64_t v;

	if (n == 0 || n > t->cap || get_varint(&r) != n || r.bad)
		return -EPROTO;
	rcv_table_init(t, n);
	v = get_u8(&r);
	if (v > 1)
		return -EPROTO;
	t->started = v == 1;
	for (uint16_t j = 0; j < n; j++) {
		t->latest[j] = get_varint(&r);
		if (t->latest[j] != 0) {
			t->flags[j] = get_u8(&r);
			if (t->flags[j] & ~RCV_F_MASK)
				return -EPROTO;
		}
	}
	v = get_varint(&r);
	if (r.bad || v > n)
		return -EPROTO;
	t->n_nonl = (uint16_t)v;
	memset(seen, 0, sizeof(seen));
	for (uint16_t i = 0; i < t->n_nonl; i++) {
		uint8_t j = get_u8(&r);
		if (j >= n || seen[j] || t->latest[j] == 0)
			return -EPROTO;
		seen[j] = true;
		t->nonl[i] = j;
	}
	for (uint16_t row = 0; row < n; row++) {
		t->row_ts[row] = get_varint(&r);
		if (t->row_ts[row] == 0)
			continue;
		v = get_varint(&r);
		if (r.bad || v > n)
			return -EPROTO;
		t->row_len[row] = (uint16_t)v;
		memset(seen, 0, sizeof(seen));
		for (uint16_t i = 0; i < t->row_len[row]; i++) {
			uint8_t j = get_u8(&r);
			if (j >= n || seen[j] || t->latest[j] == 0)
				return -EPROTO;
			seen[j] = true;
			rcv_row(t, row)[i] = j;
		}
	}
	if (r.bad)
		return -EPROTO;
	*used = len - r.left;
	return 0;
}
