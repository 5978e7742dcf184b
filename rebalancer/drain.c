/* drain.c - when stopping a server loses nothing (see drain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "rebalancer/drain.h"
#include "server/ops.h"
#include "server/service.h"

#define CHECK_BATCH 256

struct held {
	struct ofs_oid oid;
	struct ofs_attr a;
	bool ok;
};

struct batch {
	struct held *h;
	size_t n;
};

static int collect(struct ofs_oid oid, const struct ofs_attr *a, int decode_rc, void *arg)
{
	struct batch *b = arg;
	struct held *h = &b->h[b->n++];

	h->oid = oid;
	h->ok = decode_rc == 0 && a;
	if (h->ok)
		h->a = *a;
	return 0;
}

struct stale_ctx {
	struct ofs_sid sid;
	bool found;
};

static int stale_match(struct ofs_sid sid, const char *reason, void *arg)
{
	struct stale_ctx *sc = arg;

	(void)reason;
	if (sid_eq(sid, sc->sid))
		sc->found = true;
	return 0;
}

/* The good copies of h's object on servers other than this one. */
static int good_elsewhere(struct store *s, struct sidtab *t, struct replicator *r,
			  const struct held *h, unsigned *good)
{
	struct ofs_sid me = store_sid(s), to[OFS_MAX_REPLICAS];
	struct replica_result rr[OFS_MAX_REPLICAS];
	struct ofs_summary mine;
	struct wbuf body;
	size_t n = 0;
	int rc;

	*good = 0;
	memset(&mine, 0, sizeof(mine));
	rc = store_summary(s, h->oid, &mine);
	if (rc == -ENOENT)
		return 0;                /* removed meanwhile */
	if (rc)
		return rc;
	for (uint8_t i = 0; i < h->a.nsids && i < OFS_MAX_REPLICAS; i++) {
		struct ofs_server e;
		struct stale_ctx sc = { .sid = h->a.sids[i] };
		if (sid_eq(h->a.sids[i], me))
			continue;
		if (sidtab_get(t, h->a.sids[i], &e) != 0 || e.state == OFS_SERVER_OUT)
			continue;
		if (store_stale_list(s, h->oid, stale_match, &sc) == 0 && sc.found)
			continue;
		to[n++] = h->a.sids[i];
	}
	if (n == 0)
		return 0;
	wbuf_init(&body);
	wbuf_oid(&body, h->oid);
	rc = wbuf_error(&body);
	if (!rc)
		rc = replica_forward(r, OFS_OP_SUMMARY, body.data, body.len, to, n, rr);
	wbuf_free(&body);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct ofs_summary sm;
		if (rr[i].rc == 0 && proto_decode_summary(rr[i].body, rr[i].len, &sm) == 0 &&
		    sm.present && !sm.behind && !sm.corrupt && sm.version >= mine.version)
			(*good)++;
		free(rr[i].body);
	}
	return 0;
}

static unsigned deficit(const struct ofs_stop_short *x)
{
	return (unsigned)x->need - x->good;
}

/* Is (good, need) worse than x? Fewer good copies, then more missing. */
static bool worse(unsigned good, unsigned need, const struct ofs_stop_short *x)
{
	if (good != x->good)
		return good < x->good;
	return need - good > deficit(x);
}

static int cmp_short(const void *a, const void *b)
{
	const struct ofs_stop_short *x = a, *y = b;

	if (x->good != y->good)
		return x->good < y->good ? -1 : 1;     /* none left first: data lost */
	if (deficit(x) != deficit(y))
		return deficit(x) > deficit(y) ? -1 : 1;
	return oid_cmp(x->oid, y->oid);
}

int drain_stop_check(struct store *s, struct sidtab *t, struct replicator *r, uint32_t max,
		     struct ofs_stop_reply *out)
{
	struct batch b = { .h = calloc(CHECK_BATCH, sizeof(struct held)) };
	struct ofs_oid cursor;
	bool started = false, more = true;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!b.h)
		return -ENOMEM;
	if (max > OFS_STOP_LIST_MAX)
		max = OFS_STOP_LIST_MAX;
	while (more && !rc) {
		b.n = 0;
		rc = store_walk(s, started ? &cursor : NULL, CHECK_BATCH, collect, &b, &more);
		for (size_t i = 0; i < b.n && !rc; i++) {
			const struct held *h = &b.h[i];
			unsigned good = 0, need;
			cursor = h->oid;
			started = true;
			if (!h->ok)
				continue;
			out->objects++;
			need = h->a.confidence ? h->a.confidence : h->a.nsids;
			if (need > h->a.nsids)
				need = h->a.nsids;
			if (need == 0)
				need = 1;
			rc = good_elsewhere(s, t, r, h, &good);
			if (rc || good >= need)
				continue;
			/* The list keeps the worst: the most copies missing. */
			{
				uint32_t at = out->n;
				if (out->n >= max) {
					at = UINT32_MAX;
					for (uint32_t k = 0; k < out->n; k++)
						if (worse(good, need, &out->list[k]) &&
						    (at == UINT32_MAX || worse(out->list[at].good, out->list[at].need,
									       &out->list[k])))
							at = k;
				} else {
					out->n++;
				}
				if (at != UINT32_MAX && max) {
					out->list[at].oid = h->oid;
					out->list[at].good = (uint8_t)good;
					out->list[at].need = (uint8_t)need;
				}
			}
			out->nshort++;
		}
		if (b.n == 0)
			break;
	}
	free(b.h);
	qsort(out->list, out->n, sizeof(out->list[0]), cmp_short);
	return rc;
}

static int op_stop_check(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_stop_reply *sr = malloc(sizeof(*sr));
	int rc;

	if (!sr)
		return -ENOMEM;
	rc = drain_stop_check(sv->store, sv->tab, sv->rep, q->max, sr);
	if (!rc)
		proto_encode_stop_reply(reply, sr);
	free(sr);
	return rc;
}

int drain_register_ops(void)
{
	return ops_register(OFS_OP_STOP_CHECK, op_stop_check);
}
