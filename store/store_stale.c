/*
 * store_stale.c - stale records of other servers' copies and this
 * server's own behind marks (see store.h, behind.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- stale copies --------------------------------------------------------- */

struct stale_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	const char *reason;
	struct ofs_attr *a;
};

static int stale_txn(struct kv_txn *t, void *arg)
{
	struct stale_args *sa = arg;
	uint8_t key[REC_STALE_KEY];
	bool listed = false;
	const void *v;
	size_t vn;
	int rc = st_get_object(t, sa->oid, sa->a);

	if (rc)
		return rc;
	rec_stale_key(sa->oid, sa->sid, key);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* the first reason is the one that explains it */
	/* (the record, not the list, says whether it is known: a cleared
	 * record may have left the SID listed) */
	for (uint8_t i = 0; i < sa->a->nstale; i++)
		listed |= sid_eq(sa->a->stale[i], sa->sid);
	if (!listed && sa->a->nstale < OFS_MAX_REPLICAS) {
		sa->a->stale[sa->a->nstale++] = sa->sid;
		rc = st_put_object(t, sa->oid, sa->a);
		if (rc)
			return rc;
	}
	return kv_put(t, KV_STALE, key, sizeof(key), sa->reason, strlen(sa->reason));
}

int store_stale_add(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct stale_args sa = { .oid = oid, .sid = sid, .reason = reason };
	int rc;

	if (s->read_only)
		return -EROFS;
	sa.a = malloc(sizeof(*sa.a));
	if (!sa.a)
		return -ENOMEM;
	rc = kv_update(s->kv, stale_txn, &sa);
	free(sa.a);
	return rc;
}

static int stale_note_txn(struct kv_txn *t, void *arg)
{
	struct stale_args *sa = arg;
	uint8_t key[REC_STALE_KEY];
	const void *v;
	size_t vn;

	rec_stale_key(sa->oid, sa->sid, key);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* the first reason stays */
	return kv_put(t, KV_STALE, key, sizeof(key), sa->reason, strlen(sa->reason));
}

int store_stale_note(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct stale_args sa = { .oid = oid, .sid = sid, .reason = reason };

	if (s->read_only)
		return -EROFS;
	return kv_update(s->kv, stale_note_txn, &sa);
}

int store_drop_removed(struct store *s, struct ofs_oid oid)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, oid, a);
	if (rc == -ENOENT) {
		free(a);             /* never held here: only the mark goes */
		return store_stale_del(s, oid, s->sid, UINT64_MAX);
	}
	if (!rc && a->type == OFS_OBJ_DFILE)
		rc = st_quarantine(s, oid, a->version, "removed-elsewhere");
	free(a);
	if (!rc || rc == -OFS_ECORRUPT)
		rc = store_drop_copy(s, oid);
	return rc;
}

struct stale_list_args {
	struct ofs_oid oid;
	store_stale_fn fn;
	void *arg;
};

static int stale_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct stale_list_args *sl = arg;
	char reason[REC_REASON_LEN];
	struct ofs_oid oid;
	struct ofs_sid sid;
	int rc = rec_decode_stale_key(k, kn, &oid, &sid);

	if (rc)
		return rc;
	rec_decode_stale(v, vn, reason);
	return sl->fn(sid, reason, sl->arg);
}

static int stale_list_txn(struct kv_txn *t, void *arg)
{
	struct stale_list_args *sl = arg;

	return kv_scan(t, KV_STALE, sl->oid.b, OFS_OID_LEN, NULL, 0, stale_scan, sl);
}

int store_stale_list(struct store *s, struct ofs_oid oid, store_stale_fn fn, void *arg)
{
	struct stale_list_args sl = { .oid = oid, .fn = fn, .arg = arg };

	return kv_view(s->kv, stale_list_txn, &sl);
}

/* ---- copies known to be behind -------------------------------------------- */

struct behind_args {
	struct ofs_oid oid;
	struct ofs_sid self;
	const char *reason;
};

static int behind_mark_txn(struct kv_txn *t, void *arg)
{
	struct behind_args *ba = arg;
	uint8_t key[REC_STALE_KEY];
	const void *v;
	size_t vn;

	rec_stale_key(ba->oid, ba->self, key);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* already marked: the first reason stays */
	return kv_put(t, KV_STALE, key, sizeof(key), ba->reason, strlen(ba->reason));
}

int store_behind_mark(struct store *s, struct ofs_oid oid, const char *reason)
{
	struct behind_args ba = { .oid = oid, .self = s->sid, .reason = reason };
	int rc;

	if (s->read_only)
		return -EROFS;
	rc = kv_update(s->kv, behind_mark_txn, &ba);
	if (!rc)
		atomic_store(&s->behind_any, true);
	return rc;
}

struct behind_many_args {
	const struct ofs_oid *oids;
	const char *const *reasons;
	size_t n;
	struct ofs_sid self;
};

static int behind_many_txn(struct kv_txn *t, void *arg)
{
	struct behind_many_args *bm = arg;

	for (size_t i = 0; i < bm->n; i++) {
		struct behind_args ba = { .oid = bm->oids[i], .self = bm->self,
					  .reason = bm->reasons[i] };
		int rc = behind_mark_txn(t, &ba);
		if (rc)
			return rc;
	}
	return 0;
}

int store_behind_mark_many(struct store *s, const struct ofs_oid *oids,
			   const char *const *reasons, size_t n)
{
	struct behind_many_args bm = { .oids = oids, .reasons = reasons, .n = n, .self = s->sid };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (n == 0)
		return 0;
	rc = kv_update(s->kv, behind_many_txn, &bm);
	if (!rc)
		atomic_store(&s->behind_any, true);
	return rc;
}

static int behind_get_txn(struct kv_txn *t, void *arg)
{
	struct behind_args *ba = arg;
	uint8_t key[REC_STALE_KEY];
	const void *v;
	size_t vn;

	rec_stale_key(ba->oid, ba->self, key);
	return kv_get(t, KV_STALE, key, sizeof(key), &v, &vn);
}

int store_behind(struct store *s, struct ofs_oid oid)
{
	struct behind_args ba = { .oid = oid, .self = s->sid };
	int rc;

	if (!atomic_load(&s->behind_any))
		return 0;
	rc = kv_view(s->kv, behind_get_txn, &ba);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

struct stale_for_args {
	struct ofs_sid sid;
	const struct ofs_oid *after;
	uint32_t max, n;
	store_stale_for_fn fn;
	void *arg;
	bool more;
};

static int stale_for_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct stale_for_args *sf = arg;
	char reason[REC_REASON_LEN];
	struct ofs_oid oid;
	struct ofs_sid sid;
	int rc = rec_decode_stale_key(k, kn, &oid, &sid);

	if (rc)
		return rc;
	if (!sid_eq(sid, sf->sid))
		return 0;
	if (sf->after && memcmp(oid.b, sf->after->b, OFS_OID_LEN) <= 0)
		return 0;
	if (sf->n == sf->max) {
		sf->more = true;
		return 1;
	}
	rec_decode_stale(v, vn, reason);
	rc = sf->fn(oid, reason, sf->arg);
	if (rc)
		return rc;
	sf->n++;
	return 0;
}

static int stale_for_txn(struct kv_txn *t, void *arg)
{
	struct stale_for_args *sf = arg;
	uint8_t after[OFS_OID_LEN * 2];

	sf->n = 0;
	sf->more = false;
	if (!sf->after)
		return kv_scan(t, KV_STALE, NULL, 0, NULL, 0, stale_for_scan, sf);
	memcpy(after, sf->after->b, OFS_OID_LEN);
	memset(after + OFS_OID_LEN, 0xff, OFS_OID_LEN);
	return kv_scan(t, KV_STALE, NULL, 0, after, sizeof(after), stale_for_scan, sf);
}

int store_stale_for(struct store *s, struct ofs_sid sid, const struct ofs_oid *after,
		    uint32_t max, store_stale_for_fn fn, void *arg, bool *more)
{
	struct stale_for_args sf = { .sid = sid, .after = after, .max = max, .fn = fn, .arg = arg };
	int rc;

	if (max == 0)
		return -EINVAL;
	rc = kv_view(s->kv, stale_for_txn, &sf);
	if (!rc && more)
		*more = sf.more;
	return rc;
}


struct stale_del_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	uint64_t version;
	struct ofs_attr *a;
};

static int stale_del_txn(struct kv_txn *t, void *arg)
{
	struct stale_del_args *sd = arg;
	uint8_t key[REC_STALE_KEY];
	int rc = st_get_object(t, sd->oid, sd->a);

	if (rc == 0 && sd->a->version > sd->version)
		return 0;                    /* newer here: that copy is still behind */
	if (rc == 0) {
		/* its SID leaves the object's stale list with the record */
		uint8_t n = 0;
		for (uint8_t i = 0; i < sd->a->nstale; i++)
			if (!sid_eq(sd->a->stale[i], sd->sid))
				sd->a->stale[n++] = sd->a->stale[i];
		if (n != sd->a->nstale) {
			sd->a->nstale = n;
			rc = st_put_object(t, sd->oid, sd->a);
			if (rc)
				return rc;
		}
	}
	rec_stale_key(sd->oid, sd->sid, key);
	rc = kv_del(t, KV_STALE, key, sizeof(key));
	return rc == -ENOENT ? 0 : rc;
}

int store_stale_del(struct store *s, struct ofs_oid oid, struct ofs_sid sid, uint64_t version)
{
	struct stale_del_args sd = { .oid = oid, .sid = sid, .version = version };
	int rc;

	if (s->read_only)
		return -EROFS;
	sd.a = malloc(sizeof(*sd.a));
	if (!sd.a)
		return -ENOMEM;
	rc = kv_update(s->kv, stale_del_txn, &sd);
	free(sd.a);
	return rc;
}

int store_stale_page_add(struct ofs_oid oid, const char *reason, void *arg)
{
	struct store_stale_page *pg = arg;

	if (pg->n >= pg->cap)
		return -OFS_ETOOBIG;
	pg->oids[pg->n] = oid;
	snprintf(pg->why[pg->n], sizeof(pg->why[pg->n]), "%s", reason);
	pg->n++;
	return 0;
}
