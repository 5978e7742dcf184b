/*
 * placement.c - choosing the servers for an object's copies.
 *
 * DESIGN
 * A placement function here is a score: a number per (OID, server) pair;
 * the higher, the better that server suits the object. Every function
 * shares one chooser, place_greedy(), which walks the servers in score
 * order (ties broken by SID bytes, so the order is total and the same on
 * every host) and fills the slots: the fixed server first if any, then one
 * server per not-yet-used failure domain, then anyone left. A site adds its
 * own function by writing a score and adding a row to place_table.
 *
 * "hrw" is weighted rendezvous hashing (Schindelhauer and Schomaker's
 * logarithmic method): h = XXH3_64bits(OID bytes || SID bytes), u = h's top
 * 53 bits as a fraction in (0,1), score = -weight / ln(u). A server of
 * weight w wins the top rank with probability w / (sum of weights), and
 * since a server's score does not depend on the others, adding a server
 * moves only the objects it now wins.
 *
 * The chooser allocates nothing: instead of sorting, it scans the array
 * once per slot for the best server that fits, computing scores as it goes.
 * That is O(n * copies) score evaluations, copies <= OFS_MAX_REPLICAS,
 * which is cheaper than a sort for the few dozen servers of a site.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <xxhash.h>

#include "lib/placement.h"

/* A score for server s holding oid; higher is better. s is eligible. */
typedef double (*place_score_fn)(struct ofs_oid oid,
				 const struct place_server *s);

struct place_fn {
	const char *name;       /* what place_choose() is called with */
	place_score_fn score;   /* ranks servers for one OID */
};

static double hrw_score(struct ofs_oid oid, const struct place_server *s)
{
	uint8_t buf[2 * OFS_OID_LEN];
	uint64_t h, m;
	double u;

	memcpy(buf, oid.b, OFS_OID_LEN);
	memcpy(buf + OFS_OID_LEN, s->sid.b, OFS_OID_LEN);
	h = XXH3_64bits(buf, sizeof(buf));
	/* The top 53 bits fill a double's mantissa exactly, so u is in
	 * [0, 1 - 2^-53]; 0 is moved to 2^-54 so ln(u) is finite and < 0. */
	m = h >> 11;
	u = m ? (double)m * 0x1p-53 : 0x1p-54;
	return -s->weight / log(u);
}

/* The built-in functions; the first is PLACE_DEFAULT. */
static const struct place_fn place_table[] = {
	{ "hrw", hrw_score },
};

#define PLACE_NFN (sizeof(place_table) / sizeof(place_table[0]))

static bool eligible(const struct place_server *s)
{
	/* "> 0" is false for NaN too. */
	return s->state == PLACE_IN && s->weight > 0;
}

static bool domain_eq(const char *a, const char *b)
{
	return strncmp(a, b, PLACE_DOMAIN_LEN) == 0;
}

/* Is (sa, a) ranked before (sb, b)? Higher score first, then lower SID. */
static bool ranks_before(double sa, const struct ofs_sid *a,
			 double sb, const struct ofs_sid *b)
{
	if (sa != sb)
		return sa > sb;
	return memcmp(a->b, b->b, OFS_OID_LEN) < 0;
}

/* Find the best-ranked eligible server not in chosen[0..nchosen-1] and, if
 * distinct_domain, whose domain no chosen server has. Returns its index, or
 * n if there is none. */
static size_t best_fit(const struct place_fn *fn, struct ofs_oid oid,
		       const struct place_server *servers, size_t n,
		       const struct place_server *const *chosen,
		       unsigned nchosen, bool distinct_domain)
{
	size_t best = n;
	double best_score = 0;

	for (size_t i = 0; i < n; i++) {
		const struct place_server *s = &servers[i];
		bool taken = false;
		double score;

		if (!eligible(s))
			continue;
		for (unsigned j = 0; j < nchosen && !taken; j++)
			taken = sid_eq(chosen[j]->sid, s->sid) ||
				(distinct_domain &&
				 domain_eq(chosen[j]->domain, s->domain));
		if (taken)
			continue;
		score = fn->score(oid, s);
		if (best == n || ranks_before(score, &s->sid, best_score,
					      &servers[best].sid)) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

static unsigned place_greedy(const struct place_fn *fn, struct ofs_oid oid,
			     const struct place_server *servers, size_t n,
			     unsigned copies, const struct ofs_sid *fixed,
			     const struct place_server **chosen)
{
	unsigned k = 0;

	if (fixed) {
		for (size_t i = 0; i < n; i++) {
			if (sid_eq(servers[i].sid, *fixed)) {
				if (eligible(&servers[i]))
					chosen[k++] = &servers[i];
				break;
			}
		}
	}
	while (k < copies) {
		size_t i = best_fit(fn, oid, servers, n, chosen, k, true);
		if (i == n)
			break;
		chosen[k++] = &servers[i];
	}
	while (k < copies) {
		size_t i = best_fit(fn, oid, servers, n, chosen, k, false);
		if (i == n)
			break;
		chosen[k++] = &servers[i];
	}
	return k;
}

int place_choose(const char *name, struct ofs_oid oid,
		 const struct place_server *servers, size_t n, unsigned copies,
		 const struct ofs_sid *fixed, struct ofs_sid *out)
{
	const struct place_server *chosen[OFS_MAX_REPLICAS];
	const struct place_fn *fn = NULL;
	unsigned k;

	if (!name || !servers || !out || n == 0 || copies == 0 ||
	    copies > OFS_MAX_REPLICAS)
		return -EINVAL;
	for (size_t i = 0; i < PLACE_NFN; i++) {
		if (strcmp(place_table[i].name, name) == 0) {
			fn = &place_table[i];
			break;
		}
	}
	if (!fn)
		return -ENOENT;

	k = place_greedy(fn, oid, servers, n, copies, fixed, chosen);
	for (unsigned j = 0; j < k; j++)
		out[j] = chosen[j]->sid;
	return (int)k;
}

const char *place_name(size_t i)
{
	return i < PLACE_NFN ? place_table[i].name : NULL;
}
