/* scrub_copies.c - the copies of an object compared, with the batch's
 * summaries asked ahead (see scrub_impl.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scrubber/scrub_impl.h"

/* Is me the copy that reports a problem between copies: the first SID in
 * the handle that is neither the copy at fault nor one that did not
 * answer? */
static bool reporter(const struct ofs_attr *a, struct ofs_sid me, const struct ofs_sid *skip,
		     size_t nskip)
{
	for (uint8_t i = 0; i < a->nsids; i++) {
		bool skipped = false;
		for (size_t j = 0; j < nskip; j++)
			skipped |= sid_eq(a->sids[i], skip[j]);
		if (!skipped)
			return sid_eq(a->sids[i], me);
	}
	return false;
}

/*
 * One question each to up to OFS_MAX_REPLICAS servers, asked at once:
 * fill(y) writes the OIDs to ask sid[y] into oids and returns their count
 * (SUMMARY_MANY; 0: only whether it answers, PING); take(y) gets its
 * answers, in that order, when it gave them all. alive[y]: it answered.
 */
typedef uint32_t (*ask_fill_fn)(size_t y, uint8_t *oids, void *arg);
typedef void (*ask_take_fn)(size_t y, const struct ofs_summary *got, uint32_t n, void *arg);
static void ask_servers(struct scrub_task *k, const struct ofs_sid *sid, size_t m, ask_fill_fn fill,
			ask_take_fn take, void *arg, bool *alive)
{
	struct replica_sent sent[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	uint32_t cnt[OFS_MAX_REPLICAS];
	uint8_t *oids = malloc((size_t)OFS_SUMMARY_MANY_MAX * OFS_OID_LEN);
	struct ofs_summary *got = malloc(OFS_SUMMARY_MANY_MAX * sizeof(*got));

	for (size_t y = 0; y < m; y++) {
		struct ofs_req q;
		struct wbuf body;
		alive[y] = false;
		sent[y].n = 0;
		memset(&res[y], 0, sizeof(res[y]));
		if (!oids || !got)
			continue;
		memset(&q, 0, sizeof(q));
		cnt[y] = fill(y, oids, arg);
		q.op = cnt[y] ? OFS_OP_SUMMARY_MANY : OFS_OP_PING;
		q.data = oids;
		q.data_len = (size_t)cnt[y] * OFS_OID_LEN;
		wbuf_init(&body);
		if (proto_encode_req(&body, &q) == 0)
			replica_send(k->sc->r, q.op, body.data, body.len, &sid[y], 1, &sent[y], &res[y]);
		wbuf_free(&body);
	}
	for (size_t y = 0; y < m; y++) {
		if (!sent[y].n)
			continue;
		replica_collect(k->sc->r, &sent[y], &res[y]);
		alive[y] = !res[y].rc;
		if (alive[y] && cnt[y] && proto_decode_summaries(res[y].body, res[y].len, got, cnt[y]) == 0)
			take(y, got, cnt[y], arg);
		free(res[y].body);
	}
	free(got);
	free(oids);
}

/* The server table's states for the batch's first looks (one lock, not
 * one per object copy); the table changes rarely, and a second look reads
 * it afresh. */
void scrub_take_states(struct scrub_task *k)
{
	struct ofs_server *e = NULL;
	struct server_state *v;
	size_t n = 0;

	k->nstates = 0;
	if (sidtab_snapshot(k->sc->t, &e, &n) != 0 || n == 0 ||
	    !(v = realloc(k->states, n * sizeof(*v)))) {
		free(e);
		return;
	}
	k->states = v;
	for (size_t i = 0; i < n; i++) {
		v[i].sid = e[i].sid;
		v[i].state = e[i].state;
	}
	k->nstates = n;
	free(e);
}

/* A server's state: from the batch's table (batch, and it was read), else
 * asked of the table. */
int scrub_server_state(const struct scrub_task *k, struct ofs_sid sid, bool batch, uint8_t *state)
{
	if (!batch || !k->nstates)
		return sidtab_state(k->sc->t, sid, state);
	for (size_t i = 0; i < k->nstates; i++)
		if (sid_eq(k->states[i].sid, sid)) {
			*state = k->states[i].state;
			return 0;
		}
	return -ENOENT;
}

/* The copy that compares an object's copies: the first of its servers in
 * service (its primary, unless that one is out). */
bool scrub_lead_of(const struct scrub_task *k, const struct ofs_attr *a, struct ofs_sid *lead)
{
	for (uint8_t j = 0; j < a->nsids && j < OFS_MAX_REPLICAS; j++) {
		uint8_t st;
		if (scrub_server_state(k, a->sids[j], true, &st) == 0 && st != OFS_SERVER_OUT) {
			*lead = a->sids[j];
			return true;
		}
	}
	return false;
}

/* prefetch's questions: for sibling server x, the batch's objects this
 * server leads that x holds a copy of (none: x leads some, only PING). */
struct batch_ask {
	struct scrub_task *k;
	const struct task_obj *w;
	size_t lo, hi;                   /* the window of the batch asked about */
	const struct ofs_sid *sid;       /* the servers asked, this round's first */
	const struct ofs_sid *lead;      /* each object's lead ... */
	const bool *has_lead;            /* ... when it has one */
	const bool *asks;                /* per server: summaries (else PING) */
};

static bool led_here(const struct batch_ask *ba, size_t i)
{
	return ba->has_lead[i] && sid_eq(ba->lead[i], store_sid(ba->k->sc->s));
}

static uint32_t batch_fill(size_t y, uint8_t *oids, void *arg)
{
	const struct batch_ask *ba = arg;
	uint32_t c = 0;

	for (size_t i = ba->lo; ba->asks[y] && i < ba->hi; i++)
		for (uint8_t j = 0; led_here(ba, i) && j < ba->w[i].a.nsids; j++)
			if (sid_eq(ba->w[i].a.sids[j], ba->sid[y]))
				memcpy(oids + OFS_OID_LEN * c++, ba->w[i].oid.b, OFS_OID_LEN);
	return c;
}

static void batch_take(size_t y, const struct ofs_summary *got, uint32_t n, void *arg)
{
	const struct batch_ask *ba = arg;
	uint32_t c = 0;

	for (size_t i = ba->lo; i < ba->hi; i++)
		for (uint8_t j = 0; led_here(ba, i) && j < ba->w[i].a.nsids; j++)
			if (sid_eq(ba->w[i].a.sids[j], ba->sid[y]) && c < n) {
				ba->k->pre->sm[i][j] = got[c++];
				ba->k->pre->ok[i][j] = true;
			}
}

/*
 * Ahead of the batch's first looks. The copies of an object are compared
 * by its lead copy (lead_of): for the batch's objects this server leads,
 * every sibling server is asked once for the summaries of all of them it
 * holds (SUMMARY_MANY, all servers at once), and this server's own copies
 * are read in one transaction at the same moment. For the objects another
 * server leads, that server is only asked whether it answers (PING); when
 * it does, it compares them (nothing is asked of this copy's summary
 * twice), and when it does not, this copy compares them itself, the old
 * way. A server that does not answer SUMMARY_MANY leaves its entries
 * unset: those objects are asked one by one.
 */
void scrub_prefetch(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct scrubber *sc = k->sc;
	struct ofs_sid me = store_sid(sc->s);
	struct ofs_sid sid[TASKHOST_BATCH * OFS_MAX_REPLICAS], lead[TASKHOST_BATCH];
	bool has_lead[TASKHOST_BATCH], asks[TASKHOST_BATCH * OFS_MAX_REPLICAS], alive[TASKHOST_BATCH * OFS_MAX_REPLICAS];
	struct batch_ask ba = { .k = k, .w = w, .lead = lead, .has_lead = has_lead };
	struct ofs_summary *got;
	size_t nsid = 0;

	if (!k->pre)
		return;
	scrub_take_states(k);
	memset(k->pre->ok, 0, sizeof(k->pre->ok));
	memset(k->pre->mine_ok, 0, sizeof(k->pre->mine_ok));
	memset(k->pre->lead_alive, 0, sizeof(k->pre->lead_alive));
	memset(asks, 0, sizeof(asks));
	/* the servers to ask: siblings of what this server leads (summaries),
	 * leads of the rest (alive?) */
	for (size_t i = 0; i < nw; i++) {
		has_lead[i] = !w[i].decode_rc && scrub_lead_of(k, &w[i].a, &lead[i]);
		if (!has_lead[i])
			continue;
		for (uint8_t j = 0; j < w[i].a.nsids; j++) {
			struct ofs_sid t = w[i].a.sids[j];
			bool mine = sid_eq(lead[i], me);
			size_t x = 0;
			if (sid_eq(t, me) || (!mine && !sid_eq(t, lead[i])))
				continue;
			while (x < nsid && !sid_eq(sid[x], t))
				x++;
			if (x == nsid)
				sid[nsid++] = t;
			asks[x] |= mine;
		}
	}
	/* this server's own copies of what it leads, read at one moment */
	if ((got = malloc(TASKHOST_BATCH * sizeof(*got))) != NULL) {
		struct ofs_oid o[TASKHOST_BATCH];
		size_t at[TASKHOST_BATCH], n = 0;
		for (size_t i = 0; i < nw; i++)
			if (led_here(&ba, i)) {
				at[n] = i;
				o[n++] = w[i].oid;
			}
		if (n && store_summary_many(sc->s, o, n, got) == 0)
			for (size_t x = 0; x < n; x++) {
				k->pre->mine[at[x]] = got[x];
				k->pre->mine_ok[at[x]] = true;
			}
		free(got);
	}
	/* (a window of the batch per question: at most OFS_SUMMARY_MANY_MAX
	 * objects are asked of a server at once) */
	for (ba.lo = 0; ba.lo < nw; ba.lo = ba.hi) {
		ba.hi = nw - ba.lo < OFS_SUMMARY_MANY_MAX ? nw : ba.lo + OFS_SUMMARY_MANY_MAX;
		for (size_t x0 = 0; x0 < nsid; x0 += OFS_MAX_REPLICAS) {
			ba.sid = sid + x0;
			ba.asks = asks + x0;
			ask_servers(k, sid + x0,
				    nsid - x0 < OFS_MAX_REPLICAS ? nsid - x0 : OFS_MAX_REPLICAS,
				    batch_fill, batch_take, &ba, alive + x0);
		}
		for (size_t i = ba.lo; i < ba.hi; i++) {
			if (!has_lead[i] || sid_eq(lead[i], me))
				continue;
			for (size_t x = 0; x < nsid; x++)
				if (sid_eq(sid[x], lead[i]))
					k->pre->lead_alive[i] = alive[x];
		}
	}
}

/* The batch index of the object being scrubbed, when its first look may
 * use what prefetch asked (-1: ask now). */
long scrub_first_look(const struct scrub_task *k)
{
	return k->pre && k->phase == PH_FIRST ? k->pre_at : -1;
}

/* The prefetched summaries of the object being scrubbed from each of the
 * n servers in others, if the batch has them all (first look only). */
static bool prefetched_for(const struct scrub_task *k, const struct task_obj *w,
			   const struct ofs_sid *others, size_t n, struct ofs_summary *theirs)
{
	long at = scrub_first_look(k);

	if (at < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t j = 0;
		while (j < w->a.nsids && !sid_eq(w->a.sids[j], others[i]))
			j++;
		if (j == w->a.nsids || !k->pre->ok[at][j])
			return false;
		theirs[i] = k->pre->sm[at][j];
	}
	return true;
}

static int cmp_kid(const void *a, const void *b)
{
	return memcmp(((const struct kid *)a)->oid.b, ((const struct kid *)b)->oid.b, OFS_OID_LEN);
}

/* prefetch_kids' questions: for server y, the children in which[y]. */
struct kids_ask {
	const struct ofs_handle *h;
	struct kidtab *kt;
	const struct ofs_sid *sid;
	size_t *which[OFS_MAX_REPLICAS];
	uint32_t cnt[OFS_MAX_REPLICAS];
};

static uint32_t kids_fill(size_t y, uint8_t *oids, void *arg)
{
	const struct kids_ask *ka = arg;

	for (uint32_t c = 0; c < ka->cnt[y]; c++)
		memcpy(oids + OFS_OID_LEN * c, ka->h[ka->which[y][c]].oid.b, OFS_OID_LEN);
	return ka->cnt[y];
}

static void kids_take(size_t y, const struct ofs_summary *got, uint32_t n, void *arg)
{
	struct kids_ask *ka = arg;
	struct kidtab *kt = ka->kt;

	for (uint32_t c = 0; c < n; c++) {
		if (!got[c].present || got[c].corrupt)
			continue;
		kt->v[kt->n].oid = ka->h[ka->which[y][c]].oid;
		kt->v[kt->n].from = ka->sid[y];
		kt->v[kt->n].sm = got[c];
		kt->n++;
	}
}

/*
 * Ask the primaries of the n children in h (those not on this server: the
 * caller looks at its own copies) for their summaries, one SUMMARY_MANY
 * per server, OFS_MAX_REPLICAS servers at a time, into kt (replacing what
 * it held). A child whose primary does not answer, or does not hold it,
 * is not in kt: it is located the old way.
 */
void scrub_prefetch_kids(struct scrub_task *k, struct kidtab *kt, const struct ofs_handle *h, size_t n)
{
	struct ofs_sid me = store_sid(k->sc->s), sid[OFS_MAX_REPLICAS];
	struct kids_ask ka = { .h = h, .kt = kt, .sid = sid };
	bool alive[OFS_MAX_REPLICAS], ok;
	size_t *todo = NULL, ntodo = 0;

	kt->n = 0;
	if (!k->pre || n == 0)
		return;
	ok = (todo = malloc(n * sizeof(*todo))) != NULL;
	for (size_t y = 0; y < OFS_MAX_REPLICAS; y++)
		ok &= (ka.which[y] = malloc(OFS_SUMMARY_MANY_MAX * sizeof(size_t))) != NULL;
	if (ok && kt->cap < n) {
		struct kid *v = realloc(kt->v, n * sizeof(*v));
		ok = v != NULL;
		if (ok) {
			kt->v = v;
			kt->cap = n;
		}
	}
	if (!ok)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (h[i].nsids && !sid_eq(h[i].sids[0], me))
			todo[ntodo++] = i;
	while (ntodo) {
		size_t m = 0, left = 0;
		/* up to OFS_MAX_REPLICAS servers, up to the most one asks */
		for (size_t t = 0; t < ntodo; t++) {
			const struct ofs_sid *p = &h[todo[t]].sids[0];
			size_t y = 0;
			while (y < m && !sid_eq(sid[y], *p))
				y++;
			if (y == m && m < OFS_MAX_REPLICAS) {
				sid[m] = *p;
				ka.cnt[m++] = 0;
			}
			if (y < m && ka.cnt[y] < OFS_SUMMARY_MANY_MAX)
				ka.which[y][ka.cnt[y]++] = todo[t];
			else
				todo[left++] = todo[t];   /* the next round */
		}
		ntodo = left;
		ask_servers(k, sid, m, kids_fill, kids_take, &ka, alive);
	}
	qsort(kt->v, kt->n, sizeof(*kt->v), cmp_kid);
out:
	for (size_t y = 0; y < OFS_MAX_REPLICAS; y++)
		free(ka.which[y]);
	free(todo);
}

/* The parts (stripes, dirdata) of the batch's metafiles and directories
 * this server checks (it is their primary), asked ahead. */
void scrub_prefetch_parts(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct ofs_sid me = store_sid(k->sc->s);
	struct ofs_handle *h;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < nw; i++)
		if (!w[i].decode_rc && w[i].a.nsids && sid_eq(w[i].a.sids[0], me) &&
		    (w[i].a.type == OFS_OBJ_METAFILE || w[i].a.type == OFS_OBJ_DIRECTORY))
			cap += w[i].a.nparts;
	k->kids.n = 0;
	if (cap == 0 || !(h = malloc(cap * sizeof(*h))))
		return;
	for (size_t i = 0; i < nw; i++)
		if (!w[i].decode_rc && w[i].a.nsids && sid_eq(w[i].a.sids[0], me) &&
		    (w[i].a.type == OFS_OBJ_METAFILE || w[i].a.type == OFS_OBJ_DIRECTORY))
			for (uint16_t j = 0; j < w[i].a.nparts && n < cap; j++)
				h[n++] = w[i].a.parts[j];
	scrub_prefetch_kids(k, &k->kids, h, n);
	free(h);
}

struct owner_q {
	struct store_points_q q;
	size_t at;                       /* its object's batch index */
};

static int cmp_owner_q(const void *a, const void *b)
{
	const struct owner_q *x = a, *y = b;
	int c = memcmp(x->q.owner.b, y->q.owner.b, OFS_OID_LEN);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Whether the owners of the batch's objects this server checks (it is
 * their primary) point back, as this server's records show it: one read
 * transaction, the questions in owner order (a directory's record is
 * decoded once for all its files in the batch). An answer this server
 * cannot give alone is left UNSURE, and check_owner asks the full way. */
void scrub_prefetch_owners(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct ofs_sid me = store_sid(k->sc->s);
	struct owner_q *oq;
	uint8_t *ans;
	size_t n = 0;

	if (!k->pre)
		return;
	memset(k->pre->owner, STORE_POINTS_UNSURE, sizeof(k->pre->owner));
	oq = malloc(nw * sizeof(*oq));
	ans = malloc(nw);
	for (size_t i = 0; oq && ans && i < nw; i++) {
		if (w[i].decode_rc || !w[i].a.nsids || !sid_eq(w[i].a.sids[0], me) ||
		    oid_is_zero(w[i].a.backref.owner))
			continue;
		oq[n].q.owner = w[i].a.backref.owner;
		oq[n].q.child = w[i].oid;
		oq[n].q.stripe = w[i].a.backref.stripe;
		oq[n].q.name = w[i].a.backref.name;
		oq[n++].at = i;
	}
	if (n) {
		struct store_points_q *q = malloc(n * sizeof(*q));
		qsort(oq, n, sizeof(*oq), cmp_owner_q);
		for (size_t x = 0; q && x < n; x++)
			q[x] = oq[x].q;
		if (q && store_points_many(k->sc->s, q, n, br_points, ans) == 0)
			for (size_t x = 0; x < n; x++)
				k->pre->owner[oq[x].at] = ans[x];
		free(q);
	}
	free(ans);
	free(oq);
}

/* The child's summary asked ahead from its primary (first look only). */
const struct kid *scrub_kid_of(const struct scrub_task *k, const struct ofs_handle *child)
{
	const struct kidtab *tabs[2] = { &k->page_kids, &k->kids };

	if (k->phase != PH_FIRST || child->nsids == 0)
		return NULL;
	for (int t = 0; t < 2; t++) {
		struct kid key = { .oid = child->oid };
		const struct kid *f = tabs[t]->n ? bsearch(&key, tabs[t]->v, tabs[t]->n,
							   sizeof(key), cmp_kid) : NULL;
		if (f && sid_eq(f->from, child->sids[0]))
			return f;
	}
	return NULL;
}

int scrub_compare_siblings(struct scrub_task *k, const struct task_obj *w)
{
	struct scrubber *sc = k->sc;
	struct ofs_sid me = store_sid(sc->s), others[OFS_MAX_REPLICAS], quiet[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	struct ofs_summary mine, theirs[OFS_MAX_REPLICAS];
	bool ok[OFS_MAX_REPLICAS] = { false }, said_differ = false, lead;
	struct ofs_sid gone[OFS_MAX_REPLICAS];
	size_t n = 0, nquiet = 0, ngone = 0;
	long at;
	char detail[OFS_TASK_DETAIL_LEN], hex[OFS_OID_HEX], mehex[OFS_OID_HEX];
	struct wbuf body;
	int rc;

	/* A copy on a server out of service (or no longer in the table) is
	 * missing for the cluster: reported by the first copy in service. */
	{
		for (uint8_t i = 0; i < w->a.nsids && ngone < OFS_MAX_REPLICAS; i++) {
			uint8_t st = 0;
			int g = scrub_server_state(k, w->a.sids[i], scrub_first_look(k) >= 0, &st);
			if (g == -ENOENT || (g == 0 && st == OFS_SERVER_OUT))
				gone[ngone++] = w->a.sids[i];
		}
		for (size_t i = 0; i < ngone; i++) {
			struct ofs_server e;
			struct mend m = { .what = MEND_MOVE, .from = gone[i] };
			int g = sidtab_get(sc->t, gone[i], &e);
			if (!reporter(&w->a, me, gone, ngone))
				break;
			sid_to_hex(gone[i], hex);
			snprintf(detail, sizeof(detail), "the handle names %s, which is %s", hex,
				 g == -ENOENT ? "not in the server table" : "out of service");
			k->next_mend = &m;
			rc = scrub_add_finding(k, gone[i], w->oid, OFS_FINDING_MISSING_REPLICA, detail);
			k->next_mend = NULL;
			if (rc)
				return rc;
		}
		for (uint8_t i = 0; i < w->a.nsids && n < OFS_MAX_REPLICAS; i++) {
			bool out = false;
			for (size_t j = 0; j < ngone; j++)
				out |= sid_eq(w->a.sids[i], gone[j]);
			if (!sid_eq(w->a.sids[i], me) && !out)
				others[n++] = w->a.sids[i];
		}
	}
	if (n == 0)
		return 0;
	at = scrub_first_look(k);
	if (at >= 0 && k->pre->lead_alive[at])
		return 0;                    /* its lead copy compares them (it answers) */
	lead = reporter(&w->a, me, gone, ngone);
	if (at >= 0 && k->pre->mine_ok[at] && k->pre->mine[at].present && !k->pre->mine[at].corrupt) {
		mine = k->pre->mine[at];
	} else {
		rc = store_summary(sc->s, w->oid, &mine);
		if (rc == -ENOENT)
			return 0;            /* removed meanwhile */
		if (rc)
			return rc;
	}
	if (prefetched_for(k, w, others, n, theirs)) {
		for (size_t i = 0; i < n; i++) {
			if (theirs[i].corrupt || theirs[i].behind)
				quiet[nquiet++] = others[i];     /* it reports itself */
			else
				ok[i] = true;
		}
	} else {
		wbuf_init(&body);
		wbuf_oid(&body, w->oid);
		rc = wbuf_error(&body);
		if (!rc)
			rc = replica_forward(sc->r, OFS_OP_SUMMARY, body.data, body.len, others, n, res);
		wbuf_free(&body);
		if (rc)
			return rc;
		for (size_t i = 0; i < n; i++) {
			if (!res[i].rc && proto_decode_summary(res[i].body, res[i].len, &theirs[i]) == 0 &&
			    !theirs[i].corrupt && !theirs[i].behind)
				ok[i] = true;
			else
				quiet[nquiet++] = others[i];     /* no answer, or it reports itself */
			free(res[i].body);
		}
	}
	/* This copy behind a sibling: it says so itself. */
	for (size_t i = 0; i < n; i++) {
		if (ok[i] && theirs[i].present && theirs[i].version > mine.version) {
			sid_to_hex(others[i], hex);
			snprintf(detail, sizeof(detail), "version %llu here, %llu on %s",
				 (unsigned long long)mine.version,
				 (unsigned long long)theirs[i].version, hex);
			k->copies_differ = true;
			k->ev_lag = mine.version;
			k->ev_ahead = theirs[i].version;
			rc = scrub_add_finding(k, me, w->oid, OFS_FINDING_STALE_REPLICA, detail);
			k->ev_lag = k->ev_ahead = 0;
			return rc;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct ofs_sid skip[OFS_MAX_REPLICAS * 2];
		size_t ns = 0;
		if (!ok[i])
			continue;
		memcpy(skip, quiet, nquiet * sizeof(quiet[0]));
		ns = nquiet;
		skip[ns++] = others[i];
		sid_to_hex(others[i], hex);
		if (!theirs[i].present) {
			if (!reporter(&w->a, me, skip, ns))
				continue;
			snprintf(detail, sizeof(detail), "the handle names %s, which does not hold it", hex);
			rc = scrub_add_finding(k, others[i], w->oid, OFS_FINDING_MISSING_REPLICA, detail);
		} else if (theirs[i].version == mine.version &&
			   (theirs[i].size != mine.size || !digest_eq(theirs[i].digest, mine.digest))) {
			bool kv = w->a.type != OFS_OBJ_DFILE;
			k->copies_differ = true;
			/* (no copy can be shown at fault: the first that
			 * answers says it, once) */
			if (said_differ || !reporter(&w->a, me, quiet, nquiet))
				continue;
			said_differ = true;
			snprintf(detail, sizeof(detail),
				 kv ? "version %llu on both, key-value parts differ from %s's "
				      "(a value changed, a key lost or added)"
				    : "version %llu on both, recorded contents differ from %s",
				 (unsigned long long)mine.version, hex);
			rc = scrub_add_finding_other(k, me, w->oid, kv ? OFS_FINDING_KEYVAL_MISMATCH : OFS_FINDING_REPLICA_CONFLICT,
					       detail, others[i]);
		} else if (lead && theirs[i].version < mine.version) {
			/* A sibling behind: its lead says so, for it (the
			 * sibling does not compare while its lead answers). */
			sid_to_hex(me, mehex);
			snprintf(detail, sizeof(detail), "version %llu here, %llu on %s",
				 (unsigned long long)theirs[i].version,
				 (unsigned long long)mine.version, mehex);
			k->ev_lag = theirs[i].version;
			k->ev_ahead = mine.version;
			rc = scrub_add_finding(k, others[i], w->oid, OFS_FINDING_STALE_REPLICA, detail);
			k->ev_lag = k->ev_ahead = 0;
		}
		if (rc)
			return rc;
	}
	return 0;
}

struct dirent_check {
	struct scrub_task *k;
	char bad[OFS_NAME_MAX + 1];
	int nbad;
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
};

static int check_dirent(const void *key, size_t kn, const void *v, size_t vn, void *arg)
{
	struct dirent_check *dc = arg;
	struct ofs_dirent d;

	memcpy(dc->last, key, kn);
	dc->lastn = kn;
	if (rec_decode_dirent(v, vn, &d) != 0) {
		if (dc->nbad++ == 0)
			snprintf(dc->bad, sizeof(dc->bad), "%.*s", (int)kn, (const char *)key);
	}
	return 0;
}

/* A dirdata's entries must decode: record_corrupt otherwise (one finding
 * per object, naming the first bad entry and the count). */
int scrub_check_dirdata(struct scrub_task *k, const struct task_obj *w, bool *bad)
{
	struct dirent_check dc = { .k = k };
	char detail[OFS_TASK_DETAIL_LEN];
	bool more = true;
	int rc = 0;

	*bad = false;
	while (more && !rc)
		rc = store_kv_list(k->sc->s, w->oid, dc.lastn ? dc.last : NULL, dc.lastn,
				   OFS_MAX_LIST, check_dirent, &dc, &more);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	if (dc.nbad) {
		*bad = true;
		snprintf(detail, sizeof(detail), "directory entry '%s' does not decode (%d bad entr%s)",
			 dc.bad, dc.nbad, dc.nbad == 1 ? "y" : "ies");
		return scrub_local_finding(OFS_FINDING_RECORD_CORRUPT, detail, k);
	}
	return 0;
}
