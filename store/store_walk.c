/*
 * store_walk.c - walks and summaries for scrub, repair and the namespace
 * check (see store.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- scrub support ------------------------------------------------------- */

struct walk_args {
	const struct ofs_oid *after;
	uint32_t max, n;
	store_walk_fn fn;
	void *arg;
	bool more;
	struct ofs_attr *a;
};

static int walk_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct walk_args *wa = arg;
	struct ofs_oid oid;
	int rc;

	if (kn != OFS_OID_LEN)
		return 0;             /* not an object key: not ours to judge here */
	memcpy(oid.b, k, OFS_OID_LEN);
	if (wa->n == wa->max) {
		wa->more = true;
		return 1;
	}
	rc = rec_decode_object(v, vn, wa->a);
	rc = wa->fn(oid, rc ? NULL : wa->a, rc, wa->arg);
	if (rc)
		return rc;
	wa->n++;
	return 0;
}

static int walk_txn(struct kv_txn *t, void *arg)
{
	struct walk_args *wa = arg;

	wa->n = 0;
	wa->more = false;
	return kv_scan(t, KV_OBJECTS, NULL, 0, wa->after ? wa->after->b : NULL,
		       wa->after ? OFS_OID_LEN : 0, walk_scan, wa);
}

int store_walk(struct store *s, const struct ofs_oid *after, uint32_t max,
	       store_walk_fn fn, void *arg, bool *more)
{
	struct walk_args wa = { .after = after, .max = max, .fn = fn, .arg = arg };
	int rc;

	if (max == 0)
		return -EINVAL;
	wa.a = malloc(sizeof(*wa.a));
	if (!wa.a)
		return -ENOMEM;
	rc = kv_view(s->kv, walk_txn, &wa);
	free(wa.a);
	if (!rc && more)
		*more = wa.more;
	return rc;
}

static int sum_chunk(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct st_summary_args *sa = arg;
	struct ofs_dirent d;

	/* A chunk of zeros counts as a hole, recorded or not (docs/design.md,
	 * "Holes"): a copy written with a gap and one fetched whole agree. */
	if (sa->chunks && st_zero_chunk_record(v, vn))
		return 0;
	checksum_stream_update(sa->cs, k, kn);
	checksum_stream_update(sa->cs, v, vn);
	if (sa->dirdata && rec_decode_dirent(v, vn, &d) != 0)
		sa->corrupt = true;
	return 0;
}

/* The content digest of sa->oid, given its size and type: the size, then
 * its chunk digests and key-value part (a dirdata's entries must decode). */
static int content_txn(struct kv_txn *t, struct st_summary_args *sa, uint64_t size, uint8_t type)
{
	uint8_t sz[8];
	int rc;

	for (int i = 0; i < 8; i++)
		sz[i] = (uint8_t)(size >> (56 - 8 * i));
	checksum_stream_update(sa->cs, sz, sizeof(sz));
	sa->dirdata = false;
	sa->chunks = true;
	rc = sa->seq ? kv_scan_seq(t, KV_CHUNKS, &sa->seq[0], sa->oid.b, OFS_OID_LEN, sum_chunk, sa)
		     : kv_scan(t, KV_CHUNKS, sa->oid.b, OFS_OID_LEN, NULL, 0, sum_chunk, sa);
	sa->chunks = false;
	sa->dirdata = type == OFS_OBJ_DIRDATA;
	if (!rc)
		rc = sa->seq ? kv_scan_seq(t, KV_KEYVAL, &sa->seq[1], sa->oid.b, OFS_OID_LEN,
					   sum_chunk, sa)
			     : kv_scan(t, KV_KEYVAL, sa->oid.b, OFS_OID_LEN, NULL, 0, sum_chunk, sa);
	return rc;
}

int st_summary_txn(struct kv_txn *t, void *arg)
{
	struct st_summary_args *sa = arg;
	int rc = st_get_object(t, sa->oid, sa->a);

	return rc ? rc : content_txn(t, sa, sa->a->size, sa->a->type);
}

/* The summary st_summary_txn read (present). */
static void summary_fill(const struct st_summary_args *sa, struct ofs_summary *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->present = true;
	sm->version = sa->a->version;
	sm->size = sa->a->size;
	sm->digest = checksum_stream_final(sa->cs);
	sm->corrupt = sa->corrupt;
	sm->type = sa->a->type;
	sm->backref = sa->a->backref;
}

int store_summary(struct store *s, struct ofs_oid oid, struct ofs_summary *sm)
{
	struct st_summary_args sa = { .oid = oid };
	int rc;

	sa.a = malloc(sizeof(*sa.a));
	sa.cs = checksum_stream_new();
	if (!sa.a || !sa.cs) {
		free(sa.a);
		checksum_stream_free(sa.cs);
		return -ENOMEM;
	}
	pthread_rwlock_rdlock(st_obj_lock(s, oid));
	rc = kv_view(s->kv, st_summary_txn, &sa);
	pthread_rwlock_unlock(st_obj_lock(s, oid));
	if (!rc)
		summary_fill(&sa, sm);
	checksum_stream_free(sa.cs);
	free(sa.a);
	return rc;
}


struct summary_many_args {
	const struct ofs_oid *oids;
	size_t n;
	struct ofs_summary *sm;
	struct st_summary_args sa;
	struct kv_seq seq[2];            /* (the OIDs come sorted: a batch's) */
};

static int summary_many_txn(struct kv_txn *t, void *arg)
{
	struct summary_many_args *ma = arg;

	memset(ma->seq, 0, sizeof(ma->seq));
	ma->sa.seq = ma->seq;

	for (size_t i = 0; i < ma->n; i++) {
		struct ofs_summary *sm = &ma->sm[i];
		int rc;
		memset(sm, 0, sizeof(*sm));
		ma->sa.oid = ma->oids[i];
		ma->sa.corrupt = false;
		checksum_stream_reset(ma->sa.cs);
		rc = st_summary_txn(t, &ma->sa);
		if (rc == -ENOENT)
			continue;            /* not here: not present */
		if (rc == -OFS_ECORRUPT) {
			sm->present = sm->corrupt = true;   /* its record does not decode */
			continue;
		}
		if (rc)
			return rc;
		summary_fill(&ma->sa, sm);
	}
	return 0;
}

int store_summary_many(struct store *s, const struct ofs_oid *oids, size_t n,
		       struct ofs_summary *sm)
{
	struct summary_many_args ma = { .oids = oids, .n = n, .sm = sm };
	int rc;

	ma.sa.a = malloc(sizeof(*ma.sa.a));
	ma.sa.cs = checksum_stream_new();
	if (!ma.sa.a || !ma.sa.cs)
		rc = -ENOMEM;
	else
		rc = kv_view(s->kv, summary_many_txn, &ma);
	for (size_t i = 0; !rc && i < n; i++) {
		if (!sm[i].present)
			continue;
		rc = store_behind(s, oids[i]);
		sm[i].behind = rc == 1;
		rc = rc < 0 ? rc : 0;
	}
	checksum_stream_free(ma.sa.cs);
	free(ma.sa.a);
	return rc;
}

struct content_many_args {
	const struct ofs_oid *oids;
	const uint64_t *size;
	const uint8_t *type;
	size_t n;
	struct ofs_digest *d;
	bool *corrupt;
	struct st_summary_args sa;
	struct kv_seq seq[2];
};

static int content_many_txn(struct kv_txn *t, void *arg)
{
	struct content_many_args *ca = arg;

	memset(ca->seq, 0, sizeof(ca->seq));
	ca->sa.seq = ca->seq;
	for (size_t i = 0; i < ca->n; i++) {
		int rc;
		ca->sa.oid = ca->oids[i];
		ca->sa.corrupt = false;
		checksum_stream_reset(ca->sa.cs);
		rc = content_txn(t, &ca->sa, ca->size[i], ca->type[i]);
		if (rc)
			return rc;
		ca->d[i] = checksum_stream_final(ca->sa.cs);
		ca->corrupt[i] = ca->sa.corrupt;
	}
	return 0;
}

int store_content_many(struct store *s, const struct ofs_oid *oids, const uint64_t *size,
		       const uint8_t *type, size_t n, struct ofs_digest *d, bool *corrupt)
{
	struct content_many_args ca = { .oids = oids, .size = size, .type = type, .n = n, .d = d,
					.corrupt = corrupt };
	int rc;

	ca.sa.cs = checksum_stream_new();
	if (!ca.sa.cs)
		return -ENOMEM;
	rc = kv_view(s->kv, content_many_txn, &ca);
	checksum_stream_free(ca.sa.cs);
	return rc;
}

struct points_many_args {
	const struct store_points_q *q;
	size_t n;
	uint8_t *ans;
	store_points_fn judge;           /* the rule: backref/rules.h */
	struct ofs_attr *a;              /* the owner last decoded ... */
	struct ofs_oid at;               /* ... this one (zero: none) */
	struct ofs_attr *da;             /* a dirdata's record */
	bool have;                       /* it is here and decoded */
	struct ofs_oid dd_at;            /* the dirdata last looked at ... */
	bool dd_ok;                      /* ... is here, and is one */
};

/* Is name -> child in the local dirdata dd (an object of that type)? */
static bool dirdata_names(struct kv_txn *t, struct points_many_args *pm,
			  const struct ofs_handle *dd, const char *name, struct ofs_oid child)
{
	uint8_t key[REC_KV_KEY_MAX];
	struct ofs_dirent d;
	const void *v;
	size_t vn, kn;

	if (oid_is_zero(pm->dd_at) || !oid_eq(pm->dd_at, dd->oid)) {
		/* (a directory's files in a batch share its few dirdata) */
		pm->dd_at = dd->oid;
		pm->dd_ok = st_get_object(t, dd->oid, pm->da) == 0 && pm->da->type == OFS_OBJ_DIRDATA;
	}
	if (!pm->dd_ok)
		return false;
	kn = rec_kv_key(dd->oid, name, strlen(name), key);
	return kv_get(t, KV_KEYVAL, key, kn, &v, &vn) == 0 && rec_decode_dirent(v, vn, &d) == 0 &&
	       oid_eq(d.handle.oid, child);
}

static int points_many_txn(struct kv_txn *t, void *arg)
{
	struct points_many_args *pm = arg;

	for (size_t i = 0; i < pm->n; i++) {
		const struct store_points_q *q = &pm->q[i];
		const struct ofs_attr *a = pm->a;
		uint8_t ans = STORE_POINTS_UNSURE;

		if (!oid_eq(q->owner, pm->at) || oid_is_zero(pm->at)) {
			pm->at = q->owner;
			pm->have = st_get_object(t, q->owner, pm->a) == 0;
		}
		if (pm->have && (a->type == OFS_OBJ_METAFILE || a->type == OFS_OBJ_DIRECTORY))
			ans = pm->judge(a, q->child, a->type == OFS_OBJ_METAFILE ? (long)q->stripe : -1);
		/* (a directory that does not name it as a dirdata: an entry of
		 * the dirdata its name hashes to, when that one is here) */
		if (pm->have && a->type == OFS_OBJ_DIRECTORY && ans == STORE_POINTS_UNSURE &&
		    a->nparts > 0 && q->name && q->name[0] && ofs_name_valid(q->name) &&
		    dirdata_names(t, pm, &a->parts[ofs_name_hash(q->name) % a->nparts], q->name,
				  q->child))
			ans = STORE_POINTS_YES;
		pm->ans[i] = ans;
	}
	return 0;
}

int store_points_many(struct store *s, const struct store_points_q *q, size_t n,
		      store_points_fn judge, uint8_t *ans)
{
	struct points_many_args pm = { .q = q, .n = n, .ans = ans, .judge = judge };
	int rc;

	memset(ans, STORE_POINTS_UNSURE, n);
	pm.a = malloc(sizeof(*pm.a));
	pm.da = malloc(sizeof(*pm.da));
	rc = pm.a && pm.da ? kv_view(s->kv, points_many_txn, &pm) : -ENOMEM;
	free(pm.a);
	free(pm.da);
	return rc;
}
