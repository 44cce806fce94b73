/*
 * dm_quorum.c: construction of Maekawa's request sets (see dm_quorum.h).
 *
 * "The problem of finding a set of S_i's that satisfies these conditions is
 *  equivalent to finding a finite projective plane of N points ... a set of
 *  S_i's exists if (K-1) is a power of a prime." (Maekawa §3)
 *
 * The plane PG(2,q): points and lines are the normalised non-zero vectors
 * of GF(q)^3, point p lies on line L iff p.L = 0.  Every line has q+1
 * points, every point is on q+1 lines, two lines meet in exactly one point.
 * Node i gets a line through point i: a perfect matching between points and
 * lines of that (q+1)-regular incidence graph (Hall), so each line serves
 * exactly one node and the load D equals K = q+1.  For n below the plane's
 * size the points p >= n are folded onto node p mod n, which keeps (a) and
 * (b) (a common point maps to a common node) at the cost of (c) and (d).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dm_quorum.h"

#define GF_MAX	17

struct dm_quorum {
	unsigned	 n;
	unsigned	 order;		/* q of the plane, 0 for the grid */
	uint32_t	*start;		/* n+1 offsets into members */
	uint16_t	*members;
};

/* --- GF(q) for the prime powers q <= 17 --- */

struct gf {
	unsigned q;
	uint8_t	 add[GF_MAX][GF_MAX];
	uint8_t	 mul[GF_MAX][GF_MAX];
};

/* Irreducible polynomials, coefficients low to high, for q = p^m, m > 1. */
static const struct {
	unsigned q, p, m;
	uint8_t	 poly[5];
} gf_ext[] = {
	{ 4, 2, 2, { 1, 1, 1 } },		/* x^2 + x + 1 */
	{ 8, 2, 3, { 1, 1, 0, 1 } },		/* x^3 + x + 1 */
	{ 9, 3, 2, { 1, 0, 1 } },		/* x^2 + 1 */
	{ 16, 2, 4, { 1, 1, 0, 0, 1 } },	/* x^4 + x + 1 */
};

static const unsigned prime_powers[] = { 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17 };

static void
digits(unsigned v, unsigned p, unsigned m, unsigned *d)
{
	for (unsigned k = 0; k < m; k++, v /= p)
		d[k] = v % p;
}

static unsigned
undigits(const unsigned *d, unsigned p, unsigned m)
{
	unsigned v = 0;

	for (unsigned k = m; k-- > 0;)
		v = v * p + d[k];
	return v;
}

static void
gf_init(struct gf *f, unsigned q)
{
	unsigned p = q, m = 1;
	const uint8_t *poly = NULL;

	for (size_t i = 0; i < sizeof(gf_ext) / sizeof(gf_ext[0]); i++)
		if (gf_ext[i].q == q) {
			p = gf_ext[i].p;
			m = gf_ext[i].m;
			poly = gf_ext[i].poly;
		}
	f->q = q;
	for (unsigned a = 0; a < q; a++)
		for (unsigned b = 0; b < q; b++) {
			unsigned da[4], db[4], ds[4], prod[8] = { 0 };
			digits(a, p, m, da);
			digits(b, p, m, db);
			for (unsigned k = 0; k < m; k++)
				ds[k] = (da[k] + db[k]) % p;
			f->add[a][b] = (uint8_t)undigits(ds, p, m);
			for (unsigned i = 0; i < m; i++)
				for (unsigned j = 0; j < m; j++)
					prod[i + j] = (prod[i + j] + da[i] * db[j]) % p;
			/* Reduce modulo the monic polynomial of degree m. */
			for (int k = 2 * (int)m - 2; poly != NULL && k >= (int)m; k--) {
				unsigned c = prod[k];
				for (unsigned t = 0; t <= m && c != 0; t++)
					prod[(unsigned)k - m + t] =
					    (prod[(unsigned)k - m + t] + (p - c) * poly[t]) % p;
			}
			f->mul[a][b] = (uint8_t)(poly == NULL ? (a * b) % p : undigits(prod, p, m));
		}
}

/* --- The plane --- */

struct plane {
	unsigned  q, npts;
	uint8_t (*vec)[3];		/* normalised vectors, points = lines */
	uint16_t *inc;			/* npts * (q+1): lines through each point */
	uint16_t *line_pts;		/* npts * (q+1): points on each line */
};

static void
plane_free(struct plane *pl)
{
	free(pl->vec);
	free(pl->inc);
	free(pl->line_pts);
}

static int
plane_build(struct plane *pl, unsigned q)
{
	struct gf *f = calloc(1, sizeof(*f));
	unsigned k = 0, deg = q + 1;
	uint16_t *fill = NULL;
	int r = -ENOMEM;

	memset(pl, 0, sizeof(*pl));
	pl->q = q;
	pl->npts = q * q + q + 1;
	pl->vec = calloc(pl->npts, sizeof(*pl->vec));
	pl->inc = calloc((size_t)pl->npts * deg, sizeof(*pl->inc));
	pl->line_pts = calloc((size_t)pl->npts * deg, sizeof(*pl->line_pts));
	fill = calloc(pl->npts * 2u, sizeof(*fill));
	if (f == NULL || pl->vec == NULL || pl->inc == NULL || pl->line_pts == NULL || fill == NULL)
		goto fail;
	gf_init(f, q);
	pl->vec[k][0] = 0, pl->vec[k][1] = 0, pl->vec[k][2] = 1, k++;
	for (unsigned b = 0; b < q; b++)
		pl->vec[k][0] = 0, pl->vec[k][1] = 1, pl->vec[k][2] = (uint8_t)b, k++;
	for (unsigned a = 0; a < q; a++)
		for (unsigned b = 0; b < q; b++)
			pl->vec[k][0] = 1, pl->vec[k][1] = (uint8_t)a, pl->vec[k][2] = (uint8_t)b, k++;
	for (unsigned p = 0; p < pl->npts; p++)
		for (unsigned l = 0; l < pl->npts; l++) {
			const uint8_t *x = pl->vec[p], *y = pl->vec[l];
			unsigned dot = f->add[f->add[f->mul[x[0]][y[0]]][f->mul[x[1]][y[1]]]]
			    [f->mul[x[2]][y[2]]];
			if (dot != 0)
				continue;
			r = -EINVAL;	/* not a plane: a bug in the field tables */
			if (fill[p] >= deg || fill[pl->npts + l] >= deg)
				goto fail;
			pl->inc[p * deg + fill[p]++] = (uint16_t)l;
			pl->line_pts[l * deg + fill[pl->npts + l]++] = (uint16_t)p;
		}
	for (unsigned p = 0; p < pl->npts; p++)
		if (fill[p] != deg || fill[pl->npts + p] != deg) {
			r = -EINVAL;
			goto fail;
		}
	free(fill);
	free(f);
	return 0;
fail:
	free(fill);
	free(f);
	plane_free(pl);
	return r;
}

/* Kuhn's augmenting paths: point p tries line l; iterative with a stack. */
static bool
match_point(const struct plane *pl, unsigned p0, int *line_of, int *point_of, uint8_t *seen,
    unsigned *stack_p, unsigned *stack_i)
{
	unsigned deg = pl->q + 1, top = 0;

	stack_p[0] = p0;
	stack_i[0] = 0;
	while (true) {
		unsigned p = stack_p[top];
		bool pushed = false;

		while (stack_i[top] < deg) {
			unsigned l = pl->inc[p * deg + stack_i[top]++];
			if (seen[l])
				continue;
			seen[l] = 1;
			if (point_of[l] < 0) {
				/* Augment along the stack. */
				for (unsigned t = top + 1; t-- > 0;) {
					unsigned pp = stack_p[t];
					int prev = line_of[pp];
					line_of[pp] = (int)l;
					point_of[l] = (int)pp;
					if (prev < 0)
						break;
					l = (unsigned)prev;
				}
				return true;
			}
			stack_p[top + 1] = (unsigned)point_of[l];
			stack_i[top + 1] = 0;
			top++;
			pushed = true;
			break;
		}
		if (pushed)
			continue;
		if (top == 0)
			return false;
		top--;
	}
}

static int
plane_match(const struct plane *pl, int *line_of)
{
	int *point_of = malloc(pl->npts * sizeof(int));
	uint8_t *seen = malloc(pl->npts);
	unsigned *sp = malloc((pl->npts + 1) * sizeof(unsigned));
	unsigned *si = malloc((pl->npts + 1) * sizeof(unsigned));
	int r = -ENOMEM;

	if (point_of == NULL || seen == NULL || sp == NULL || si == NULL)
		goto out;
	for (unsigned i = 0; i < pl->npts; i++)
		line_of[i] = point_of[i] = -1;
	r = 0;
	for (unsigned p = 0; p < pl->npts && r == 0; p++) {
		memset(seen, 0, pl->npts);
		if (!match_point(pl, p, line_of, point_of, seen, sp, si))
			r = -EINVAL;
	}
out:
	free(point_of);
	free(seen);
	free(sp);
	free(si);
	return r;
}

/* --- Sets --- */

static int
cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* Sort and deduplicate v[0..n), return the new size. */
static size_t
sort_unique(uint16_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_u16);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

static int
quorum_alloc(struct dm_quorum *qu, unsigned n, size_t per_set)
{
	qu->n = n;
	qu->start = calloc(n + 1u, sizeof(*qu->start));
	qu->members = calloc((size_t)n * per_set, sizeof(*qu->members));
	return qu->start != NULL && qu->members != NULL ? 0 : -ENOMEM;
}

static void
quorum_release(struct dm_quorum *qu)
{
	free(qu->start);
	free(qu->members);
	qu->start = NULL;
	qu->members = NULL;
}

static int
build_grid(struct dm_quorum *qu, unsigned n)
{
	unsigned c = 1, rows;
	size_t at = 0;
	int r;

	while (c * c < n)
		c++;
	rows = (n + c - 1) / c;
	if ((r = quorum_alloc(qu, n, (size_t)c + rows)) < 0)
		return r;
	qu->order = 0;
	for (unsigned i = 0; i < n; i++) {
		uint16_t *v = qu->members + at;
		size_t k = 0;
		unsigned row = i / c, col = i % c;
		for (unsigned j = 0; j < c && row * c + j < n; j++)
			v[k++] = (uint16_t)(row * c + j);
		for (unsigned rr = 0; rr < rows && rr * c + col < n; rr++)
			v[k++] = (uint16_t)(rr * c + col);
		k = sort_unique(v, k);
		qu->start[i] = (uint32_t)at;
		at += k;
	}
	qu->start[n] = (uint32_t)at;
	return 0;
}

static int
build_plane(struct dm_quorum *qu, unsigned n, unsigned q)
{
	struct plane pl;
	int *line_of = NULL;
	size_t at = 0;
	unsigned deg = q + 1;
	int r;

	if ((r = plane_build(&pl, q)) < 0)
		return r;
	r = -ENOMEM;
	line_of = malloc(pl.npts * sizeof(int));
	if (line_of == NULL)
		goto out;
	if ((r = plane_match(&pl, line_of)) < 0)
		goto out;
	if ((r = quorum_alloc(qu, n, deg)) < 0)
		goto out;
	qu->order = q;
	for (unsigned i = 0; i < n; i++) {
		uint16_t *v = qu->members + at;
		const uint16_t *pts = pl.line_pts + (size_t)line_of[i] * deg;
		size_t k;
		for (k = 0; k < deg; k++)
			v[k] = (uint16_t)(pts[k] % n);	/* fold points >= n */
		k = sort_unique(v, k);
		qu->start[i] = (uint32_t)at;
		at += k;
	}
	qu->start[n] = (uint32_t)at;
	r = 0;
out:
	free(line_of);
	plane_free(&pl);
	return r;
}

static size_t
max_set(const struct dm_quorum *qu)
{
	size_t m = 0;

	for (unsigned i = 0; i < qu->n; i++)
		if (qu->start[i + 1] - qu->start[i] > m)
			m = qu->start[i + 1] - qu->start[i];
	return m;
}

int
dm_quorum_build(unsigned n, struct dm_quorum **ret)
{
	struct dm_quorum *qu, grid = { 0 };
	unsigned q = 0;
	int r;

	if (n == 0 || n > DM_QUORUM_N_MAX || ret == NULL)
		return -EINVAL;
	qu = calloc(1, sizeof(*qu));
	if (qu == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(prime_powers) / sizeof(prime_powers[0]); i++)
		if (prime_powers[i] * prime_powers[i] + prime_powers[i] + 1 >= n) {
			q = prime_powers[i];
			break;
		}
	if ((r = build_grid(&grid, n)) < 0)
		goto fail;
	if (q != 0 && (r = build_plane(qu, n, q)) < 0)
		goto fail;
	if (q == 0 || max_set(&grid) < max_set(qu)) {
		quorum_release(qu);
		*qu = grid;
	} else {
		quorum_release(&grid);
	}
	*ret = qu;
	return 0;
fail:
	quorum_release(&grid);
	quorum_release(qu);
	free(qu);
	return r;
}

struct dm_quorum *
dm_quorum_free(struct dm_quorum *qu)
{
	if (qu != NULL) {
		quorum_release(qu);
		free(qu);
	}
	return NULL;
}

const uint16_t *
dm_quorum_set(const struct dm_quorum *qu, unsigned i, size_t *count)
{
	if (i >= qu->n) {
		*count = 0;
		return NULL;
	}
	*count = qu->start[i + 1] - qu->start[i];
	return qu->members + qu->start[i];
}

unsigned
dm_quorum_n(const struct dm_quorum *qu)
{
	return qu->n;
}

unsigned
dm_quorum_order(const struct dm_quorum *qu)
{
	return qu->order;
}
