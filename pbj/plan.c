/* plan.c - the rebalance plan (see plan.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbj/plan.h"

struct side {
	size_t i;                      /* index into the servers */
	double amount;                 /* bytes to shed or to receive */
	double room;                   /* more it may shed or take, inside the lines */
	double frac;
};

static int by_amount_desc(const void *a, const void *b)
{
	const struct side *x = a, *y = b;

	if (x->amount != y->amount)
		return x->amount > y->amount ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int by_frac_desc(const void *a, const void *b)
{
	const struct side *x = a, *y = b;

	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int by_frac_asc(const void *a, const void *b)
{
	return -by_frac_desc(a, b);
}

/* Make the side's amounts add up to want, from the rooms, in order. */
static void top_up(struct side *s, size_t n, double want)
{
	double have = 0;

	for (size_t k = 0; k < n; k++)
		have += s[k].amount;
	for (size_t k = 0; k < n && have < want; k++) {
		double add = s[k].room < want - have ? s[k].room : want - have;
		if (add > 0) {
			s[k].amount += add;
			have += add;
		}
	}
}

int plan_rebalance(const struct plan_server *sv, size_t n, double threshold_pct, struct plan *out)
{
	struct side *src, *dst;
	double used = 0, cap = 0, t, ti, must_shed = 0, must_recv = 0, want;
	size_t ns = 0, nd = 0;

	if (!sv || !out || n == 0 || !(threshold_pct > 0 && threshold_pct <= 100))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (sv[i].in && sv[i].capacity) {
			used += (double)sv[i].used;
			cap += (double)sv[i].capacity;
		}
	t = threshold_pct / 100.0;
	out->threshold = t;
	out->balanced = true;
	if (cap <= 0)
		return 0;
	out->mean = used / cap;
	ti = t - (t / 4 < 0.02 ? t / 4 : 0.02);
	src = calloc(n, sizeof(*src));
	dst = calloc(n, sizeof(*dst));
	if (!src || !dst) {
		free(src);
		free(dst);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		double c, u, f, over, under;
		if (!sv[i].in || !sv[i].capacity)
			continue;
		c = (double)sv[i].capacity;
		u = (double)sv[i].used;
		f = u / c;
		over = u - (out->mean + t) * c;
		under = (out->mean - t) * c - u;
		if (over > 0)
			must_shed += over;
		if (under > 0)
			must_recv += under;
		if (over > 0 || under > 0)
			out->balanced = false;
		if (f > out->mean) {
			double lo = (out->mean - ti) * c;          /* never shed below this */
			double need = u - (out->mean + ti) * c;    /* shed at least this */
			src[ns].i = i;
			src[ns].frac = f;
			src[ns].amount = over > 0 && need > 0 ? need : 0;
			src[ns].room = u - lo - src[ns].amount;
			if (src[ns].room < 0)
				src[ns].room = 0;
			ns++;
		} else if (f < out->mean) {
			double hi = (out->mean + ti) * c;
			double need = (out->mean - ti) * c - u;
			dst[nd].i = i;
			dst[nd].frac = f;
			dst[nd].amount = under > 0 && need > 0 ? need : 0;
			dst[nd].room = hi - u - dst[nd].amount;
			if (dst[nd].room < 0)
				dst[nd].room = 0;
			nd++;
		}
	}
	out->min_bytes = (uint64_t)llround(must_shed > must_recv ? must_shed : must_recv);
	if (out->balanced) {
		free(src);
		free(dst);
		return 0;
	}
	{
		double s = 0, d = 0;
		for (size_t k = 0; k < ns; k++)
			s += src[k].amount;
		for (size_t k = 0; k < nd; k++)
			d += dst[k].amount;
		want = s > d ? s : d;
	}
	qsort(src, ns, sizeof(*src), by_frac_desc);    /* the fullest make up shedding */
	top_up(src, ns, want);
	qsort(dst, nd, sizeof(*dst), by_frac_asc);     /* the emptiest make up taking */
	top_up(dst, nd, want);
	qsort(src, ns, sizeof(*src), by_amount_desc);
	qsort(dst, nd, sizeof(*dst), by_amount_desc);
	for (size_t a = 0, b = 0; a < ns && b < nd && out->nmoves < PLAN_MAX_MOVES;) {
		double m = src[a].amount < dst[b].amount ? src[a].amount : dst[b].amount;
		if (m >= 1) {
			struct plan_move *mv = &out->moves[out->nmoves++];
			mv->from = sv[src[a].i].sid;
			mv->to = sv[dst[b].i].sid;
			mv->bytes = (uint64_t)llround(m);
			out->bytes += mv->bytes;
		}
		src[a].amount -= m;
		dst[b].amount -= m;
		if (src[a].amount < 1)
			a++;
		if (dst[b].amount < 1)
			b++;
	}
	free(src);
	free(dst);
	return 0;
}

size_t plan_moves_from(const struct plan *p, struct ofs_sid sid, struct plan_move *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nmoves && k < max; i++)
		if (sid_eq(p->moves[i].from, sid))
			out[k++] = p->moves[i];
	return k;
}
