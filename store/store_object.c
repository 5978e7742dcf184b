/*
 * store_object.c - objects and their attributes: create, remove, move
 * notes, dropping a copy, getattr and setattr (see store.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/changelog.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/removed.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- objects ---------------------------------------------------------- */

struct create_args {
	struct ofs_oid oid;
	const struct ofs_attr *a;
	bool inl;                    /* a dfile made inline (empty value) */
};

static int create_txn(struct kv_txn *t, void *arg)
{
	struct create_args *ca = arg;
	const void *v;
	size_t vn;
	int rc;

	if (kv_get(t, KV_OBJECTS, ca->oid.b, sizeof(ca->oid.b), &v, &vn) == 0)
		return -EEXIST;
	if (ca->inl && (rc = st_inline_put(t, ca->oid, NULL, 0)) != 0)
		return rc;
	return st_put_object(t, ca->oid, ca->a);
}

static bool layout_valid(const struct ofs_attr *a)
{
	if (a->nparts > OFS_MAX_STRIPES)
		return false;
	for (uint16_t i = 0; i < a->nparts; i++)
		if (a->parts[i].nsids > OFS_MAX_REPLICAS || oid_is_zero(a->parts[i].oid))
			return false;
	if (a->nsids > OFS_MAX_REPLICAS || a->nstale > OFS_MAX_REPLICAS)
		return false;
	if (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA)
		return a->nparts == 0;
	if (a->type == OFS_OBJ_METAFILE &&
	    (a->replicas > OFS_MAX_REPLICAS || a->confidence > OFS_MAX_REPLICAS ||
	     (a->strip_size && (a->strip_size < OFS_STRIP_MIN || a->strip_size > OFS_STRIP_MAX))))
		return false;
	return true;
}

/* A metafile's size past what its dfiles can hold (docs/design.md,
 * "Limits"): each at most OFS_DFILE_MAX bytes. */
static bool size_too_big(const struct ofs_attr *a)
{
	return a->type == OFS_OBJ_METAFILE &&
	       a->size > (uint64_t)(a->nparts ? a->nparts : 1) * OFS_DFILE_MAX;
}

/* The same parts, in the same order? */
static bool same_parts(const struct ofs_attr *x, const struct ofs_attr *y)
{
	if (x->nparts != y->nparts)
		return false;
	for (uint16_t i = 0; i < x->nparts; i++)
		if (!oid_eq(x->parts[i].oid, y->parts[i].oid))
			return false;
	return true;
}

/* Does oid exist as the create of a would make it, untouched since - the
 * same owner, mode, place and layout? (A create that differs in any of
 * them is another caller's, or another object: EEXIST.) */
static bool same_create(struct store *s, struct ofs_oid oid, const struct ofs_attr *a)
{
	struct ofs_attr *have = malloc(sizeof(*have));
	bool same;

	if (!have)
		return false;
	same = store_getattr(s, oid, have) == 0 && have->version == 1 &&
	       have->type == a->type && have->nsids == a->nsids &&
	       !memcmp(have->sids, a->sids, sizeof(a->sids[0]) * a->nsids) &&
	       have->uid == a->uid && have->gid == a->gid && have->mode == a->mode &&
	       oid_eq(have->backref.owner, a->backref.owner) &&
	       have->backref.stripe == a->backref.stripe &&
	       !strcmp(have->backref.name, a->backref.name) && same_parts(have, a);
	free(have);
	return same;
}

int store_create(struct store *s, const struct ofs_attr *init, struct ofs_oid *oid)
{
	return store_create_oid(s, init, (struct ofs_oid){ { 0 } }, oid);
}

int store_create_oid(struct store *s, const struct ofs_attr *init, struct ofs_oid want,
		     struct ofs_oid *oid)
{
	struct ofs_attr *a;
	struct create_args ca;
	int64_t now = st_now_ns();
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_type_valid(init->type) || !layout_valid(init))
		return -EINVAL;
	if (size_too_big(init))
		return -EFBIG;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = *init;
	a->version = 1;
	a->ctime_ns = a->mtime_ns = now;
	a->nstale = 0;
	if (a->type == OFS_OBJ_DFILE) {
		a->size = 0;
		a->chunk_size = s->chunk_size;
	} else {
		a->chunk_size = 0;
	}
	if (a->nsids == 0) {
		a->nsids = 1;
		a->sids[0] = s->sid;
	}
	if (oid_is_zero(want)) {
		rc = oid_generate(&ca.oid);
		if (rc)
			goto out;
	} else {
		ca.oid = want;
		if (same_create(s, want, a)) {
			/* Made already by this very create, forwarded by a
			 * primary that died before it answered; the client asks
			 * again here: done. */
			*oid = want;
			rc = 0;
			goto out;
		}
	}
	ca.a = a;
	/* A dfile starts inline when the store keeps small ones so: no
	 * stream, no sync of its own (its record's commit is shared). */
	ca.inl = a->type == OFS_OBJ_DFILE && s->inline_max > 0;
	if (a->type == OFS_OBJ_DFILE && !ca.inl) {
		rc = bstream_create(s->datadir, ca.oid);
		if (rc)
			goto out;
	}
	rc = kv_update(s->kv, create_txn, &ca);
	if (rc && a->type == OFS_OBJ_DFILE && !ca.inl)
		bstream_remove(s->datadir, ca.oid);
	if (!rc)
		*oid = ca.oid;
out:
	free(a);
	return rc;
}


struct remove_args {
	struct ofs_oid oid;
	uint8_t type;          /* out: the removed object's type */
};

static int has_any(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	*(bool *)arg = true;
	return 1;
}

static int remove_txn(struct kv_txn *t, void *arg)
{
	struct remove_args *ra = arg;
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = st_get_object(t, ra->oid, a);
	if (rc)
		goto out;
	ra->type = a->type;
	if (a->type == OFS_OBJ_DIRDATA) {
		bool any = false;
		rc = kv_scan(t, KV_KEYVAL, ra->oid.b, sizeof(ra->oid.b), NULL, 0, has_any, &any);
		if (rc)
			goto out;
		if (any) {
			rc = -ENOTEMPTY;
			goto out;
		}
	}
	if ((rc = kv_del(t, KV_OBJECTS, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = st_inline_del(t, ra->oid)) ||
	    (rc = kv_del_prefix(t, KV_CHUNKS, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = kv_del_prefix(t, KV_STALE, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = changelog_forget(t, ra->oid)))
		goto out;
out:
	free(a);
	return rc;
}

int store_remove(struct store *s, struct ofs_oid oid)
{
	struct remove_args ra = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	int rc;

	if (s->read_only)
		return -EROFS;
	pthread_rwlock_wrlock(l);
	/* (noted whether held here or not: a copy of it incoming now must
	 * not be installed after this) */
	removed_note(s->removed, oid);
	rc = kv_update(s->kv, remove_txn, &ra);
	if (!rc && ra.type == OFS_OBJ_DFILE) {
		st_pending_drop(s, st_pending_find(s, oid));
		rc = bstream_remove(s->datadir, oid);
	}
	pthread_rwlock_unlock(l);
	return rc;
}

struct move_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	bool drop;                   /* store_drop_copy */
	uint8_t type;
};

static int move_note_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;

	return kv_put(t, KV_MOVES, ma->oid.b, OFS_OID_LEN, ma->sid.b, OFS_OID_LEN);
}

int store_move_note(struct store *s, struct ofs_oid oid, struct ofs_sid target)
{
	struct move_args ma = { .oid = oid, .sid = target };

	if (s->read_only)
		return -EROFS;
	return kv_update(s->kv, move_note_txn, &ma);
}

static int move_get_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_MOVES, ma->oid.b, OFS_OID_LEN, &v, &vn);

	if (rc)
		return rc;
	return rec_decode_move(v, vn, &ma->sid);
}

int store_move_get(struct store *s, struct ofs_oid oid, struct ofs_sid *target)
{
	struct move_args ma = { .oid = oid };
	int rc = kv_view(s->kv, move_get_txn, &ma);

	if (!rc)
		*target = ma.sid;
	return rc;
}

static int drop_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = st_get_object(t, ma->oid, a);
	if (rc == -OFS_ECORRUPT)
		rc = 0;                  /* a record that does not decode goes too */
	else if (!rc)
		ma->type = a->type;
	free(a);
	if (rc)
		return rc;
	if ((rc = kv_del(t, KV_OBJECTS, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = st_inline_del(t, ma->oid)) ||
	    (rc = kv_del_prefix(t, KV_CHUNKS, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_STALE, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = changelog_forget(t, ma->oid)))
		return rc;
	rc = kv_del(t, KV_MOVES, ma->oid.b, OFS_OID_LEN);
	return rc == -ENOENT ? 0 : rc;
}

int store_drop_copy(struct store *s, struct ofs_oid oid)
{
	struct move_args ma = { .oid = oid, .drop = true };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	int rc;

	if (s->read_only)
		return -EROFS;
	pthread_rwlock_wrlock(l);
	rc = kv_update(s->kv, drop_txn, &ma);
	if (!rc) {
		/* Any type: a copy whose record was garbled may have bytes too. */
		st_pending_drop(s, st_pending_find(s, oid));
		rc = bstream_remove(s->datadir, oid);
		if (rc == -ENOENT)
			rc = 0;
	}
	pthread_rwlock_unlock(l);
	return rc;
}

struct getattr_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
};

static int getattr_txn(struct kv_txn *t, void *arg)
{
	struct getattr_args *ga = arg;

	return st_get_object(t, ga->oid, ga->a);
}

int store_getattr(struct store *s, struct ofs_oid oid, struct ofs_attr *a)
{
	struct getattr_args ga = { .oid = oid };
	int rc;

	ga.a = malloc(sizeof(*ga.a));
	if (!ga.a)
		return -ENOMEM;
	rc = kv_view(s->kv, getattr_txn, &ga);
	if (!rc)   /* (the parts in use: a whole attr is 5 KB; past nparts unspecified) */
		memcpy(a, ga.a, offsetof(struct ofs_attr, parts) +
				(size_t)ga.a->nparts * sizeof(ga.a->parts[0]));
	free(ga.a);
	return rc;
}

bool st_same_handle(const struct ofs_handle *a, const struct ofs_handle *b)
{
	if (!oid_eq(a->oid, b->oid) || a->nsids != b->nsids)
		return false;
	for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		if (!sid_eq(a->sids[i], b->sids[i]))
			return false;
	return true;
}

struct setattr_args {
	struct ofs_oid oid;
	uint32_t mask;
	const struct ofs_attr *in;
	struct ofs_attr *cur;      /* scratch, and the result */
	bool unchanged;            /* the change sets what is there: no-op */
	long part_at;              /* OFS_ATTR_PART: the slot it replaces */
};

static int setattr_txn(struct kv_txn *t, void *arg)
{
	struct setattr_args *sa = arg;
	struct ofs_attr *a = sa->cur;
	const struct ofs_attr *in = sa->in;
	int rc = st_get_object(t, sa->oid, a);

	if (rc)
		return rc;
	if ((sa->mask & OFS_ATTR_SIZE) && a->type == OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	if ((sa->mask & (OFS_ATTR_LAYOUT | OFS_ATTR_PART)) &&
	    (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA))
		return -OFS_ETYPE;
	if (sa->mask & OFS_ATTR_PART) {
		/* (the slot is found here, under this copy's own write lock) */
		uint32_t hint = in->backref.stripe;
		long at = -1;
		if ((sa->mask & OFS_ATTR_LAYOUT) || in->nparts < 1 || in->nparts > 2)
			return -EINVAL;
		if (in->nparts == 2) {
			/* another object into slot hint, which must still
			 * hold the one parts[1] names */
			if (hint < a->nparts && oid_eq(a->parts[hint].oid, in->parts[1].oid))
				at = hint;
		} else if (hint < a->nparts && oid_eq(a->parts[hint].oid, in->parts[0].oid)) {
			at = hint;
		}
		for (uint16_t i = 0; in->nparts == 1 && at < 0 && i < a->nparts && i < OFS_MAX_STRIPES; i++)
			if (oid_eq(a->parts[i].oid, in->parts[0].oid))
				at = i;
		if (at < 0)
			return -ENOENT;
		sa->part_at = at;
	}
	/* Handles set to what they are already (a move's switch run again on
	 * every copy, after one missed it) change nothing, not even the
	 * version: the copies stay at one version. */
	sa->unchanged = !(sa->mask & ~(uint32_t)(OFS_ATTR_SIDS | OFS_ATTR_LAYOUT | OFS_ATTR_PART)) &&
			sa->mask;
	if (sa->unchanged && (sa->mask & OFS_ATTR_SIDS)) {
		struct ofs_handle x = { .nsids = a->nsids }, y = { .nsids = in->nsids };
		memcpy(x.sids, a->sids, sizeof(x.sids));
		memcpy(y.sids, in->sids, sizeof(y.sids));
		sa->unchanged = st_same_handle(&x, &y);
	}
	if (sa->unchanged && (sa->mask & OFS_ATTR_LAYOUT)) {
		sa->unchanged = strncmp(a->dist, in->dist, sizeof(a->dist)) == 0 &&
				a->strip_size == in->strip_size && a->replicas == in->replicas &&
				a->confidence == in->confidence && a->nparts == in->nparts;
		for (uint16_t i = 0; sa->unchanged && i < a->nparts && i < OFS_MAX_STRIPES; i++)
			sa->unchanged = st_same_handle(&a->parts[i], &in->parts[i]);
	}
	if (sa->unchanged && (sa->mask & OFS_ATTR_PART))
		sa->unchanged = st_same_handle(&a->parts[sa->part_at], &in->parts[0]);
	if (sa->unchanged)
		return 0;                /* (cur: the attributes as stored) */
	if (sa->mask & OFS_ATTR_SIZE)
		a->size = in->size;
	if (sa->mask & OFS_ATTR_MODE)
		a->mode = in->mode;
	if (sa->mask & OFS_ATTR_OWNER) {
		a->uid = in->uid;
		a->gid = in->gid;
	}
	a->mtime_ns = (sa->mask & OFS_ATTR_MTIME) ? in->mtime_ns : st_now_ns();
	if (sa->mask & OFS_ATTR_BACKREF)
		a->backref = in->backref;
	if (sa->mask & OFS_ATTR_SIDS) {
		a->nsids = in->nsids;
		memcpy(a->sids, in->sids, sizeof(a->sids));
	}
	if (sa->mask & OFS_ATTR_STALE) {
		a->nstale = in->nstale;
		memcpy(a->stale, in->stale, sizeof(a->stale));
	}
	if (sa->mask & OFS_ATTR_LAYOUT) {
		memcpy(a->dist, in->dist, sizeof(a->dist));
		a->strip_size = in->strip_size;
		a->replicas = in->replicas;
		a->confidence = in->confidence;
		a->nparts = in->nparts;
		memcpy(a->parts, in->parts, sizeof(a->parts));
	}
	if (sa->mask & OFS_ATTR_PART)
		a->parts[sa->part_at] = in->parts[0];
	if (!layout_valid(a))
		return -EINVAL;
	if ((sa->mask & OFS_ATTR_SIZE) && size_too_big(a))
		return -EFBIG;
	a->version++;
	return st_put_object(t, sa->oid, a);
}

int store_setattr(struct store *s, struct ofs_oid oid, uint32_t mask,
		  const struct ofs_attr *in, struct ofs_attr *out)
{
	struct setattr_args sa = { .oid = oid, .mask = mask, .in = in };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (mask & ~(uint32_t)OFS_ATTR_ALL)
		return -EINVAL;
	sa.cur = malloc(sizeof(*sa.cur));
	if (!sa.cur)
		return -ENOMEM;
	rc = kv_update(s->kv, setattr_txn, &sa);
	if (!rc && out)
		*out = *sa.cur;
	free(sa.cur);
	return rc;
}
