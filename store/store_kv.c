/*
 * store_kv.c - key-value parts and directory entries, each change noted
 * in the change log, and catching a copy up by the changes it missed (see
 * store.h, changelog.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "store/changelog.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/replaced.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- key-value parts and directory entries ----------------------------- */

struct kvop_args {
	struct ofs_oid oid;
	const void *k;
	size_t kn;
	const void *v;           /* put: value */
	size_t vn;
	void *out;               /* get: malloc'd copy */
	size_t outn;
	uint8_t need_type;       /* 0: any type */
	bool refuse_dirdata;
	/* dirents */
	const struct ofs_dirent *d;
	uint32_t flags;
	bool present;
	bool unchanged;          /* dirent create: the entry was already this */
	struct ofs_dirent old;
	struct ofs_attr *a;      /* scratch */
};

/* Fetch the object, check its type, and (for changes) bump its version. */
static int kvop_object(struct kv_txn *t, struct kvop_args *ka, bool change)
{
	int rc = st_get_object(t, ka->oid, ka->a);

	if (rc)
		return rc;
	if (ka->need_type && ka->a->type != ka->need_type)
		return -OFS_ETYPE;
	if (ka->refuse_dirdata && ka->a->type == OFS_OBJ_DIRDATA)
		return -OFS_ETYPE;
	if (!change)
		return 0;
	ka->a->version++;
	ka->a->mtime_ns = st_now_ns();
	return st_put_object(t, ka->oid, ka->a);
}

static int kvget_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	const void *v;
	size_t vn;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = kv_get(t, KV_KEYVAL, key, kn, &v, &vn);
	if (rc)
		return rc;
	ka->out = malloc(vn ? vn : 1);
	if (!ka->out)
		return -ENOMEM;
	memcpy(ka->out, v, vn);
	ka->outn = vn;
	return 0;
}

static int kvput_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (!rc)
		rc = kv_put(t, KV_KEYVAL, key, kn, ka->v, ka->vn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, ka->v, ka->vn, false);
	return rc;
}

static int kvdel_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (!rc)
		rc = kv_del(t, KV_KEYVAL, key, kn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, NULL, 0, true);
	return rc;
}

static int kv_key_ok(size_t kn)
{
	return kn > 0 && kn <= OFS_MAX_KEY ? 0 : -EINVAL;
}

static int kvop(struct store *s, kv_fn fn, struct kvop_args *ka, bool update)
{
	int rc;

	ka->a = malloc(sizeof(*ka->a));
	if (!ka->a)
		return -ENOMEM;
	rc = update ? kv_update(s->kv, fn, ka) : kv_view(s->kv, fn, ka);
	free(ka->a);
	ka->a = NULL;
	return rc;
}

int store_kv_get(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 void **v, size_t *vn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn };
	int rc = kv_key_ok(kn);

	if (rc)
		return rc;
	rc = kvop(s, kvget_txn, &ka, false);
	if (rc) {
		free(ka.out);
		return rc;
	}
	*v = ka.out;
	*vn = ka.outn;
	return 0;
}

int store_kv_put(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 const void *v, size_t vn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn, .v = v, .vn = vn,
				.refuse_dirdata = true };
	int rc = kv_key_ok(kn);

	if (s->read_only)
		return -EROFS;
	if (rc)
		return rc;
	if (vn > OFS_MAX_VALUE)
		return -OFS_ETOOBIG;
	return kvop(s, kvput_txn, &ka, true);
}

int store_kv_del(struct store *s, struct ofs_oid oid, const void *k, size_t kn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn, .refuse_dirdata = true };
	int rc = kv_key_ok(kn);

	if (s->read_only)
		return -EROFS;
	if (rc)
		return rc;
	return kvop(s, kvdel_txn, &ka, true);
}

struct list_args {
	struct kvop_args ka;
	const void *after;
	size_t an;
	uint32_t max, count;
	size_t bytes;                 /* of the keys and values listed so far */
	bool more;
	bool dirents;
	store_kv_fn kfn;
	store_dirent_fn dfn;
	void *arg;
};

static int list_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct list_args *la = arg;
	const uint8_t *key = (const uint8_t *)k + OFS_OID_LEN;
	size_t keyn = kn - OFS_OID_LEN;

	if (la->count == la->max ||
	    (la->count > 0 && la->bytes + kn + vn > STORE_LIST_BYTES_MAX)) {
		la->more = true;        /* (the next page starts here) */
		return 1;
	}
	la->count++;
	la->bytes += kn + vn;
	if (la->dirents) {
		char name[OFS_NAME_MAX + 1];
		struct ofs_dirent d;
		if (keyn == 0 || keyn > OFS_NAME_MAX || memchr(key, '\0', keyn))
			return -OFS_ECORRUPT;
		memcpy(name, key, keyn);
		name[keyn] = '\0';
		if (rec_decode_dirent(v, vn, &d))
			return -OFS_ECORRUPT;
		return la->dfn(name, &d, la->arg);
	}
	return la->kfn(key, keyn, v, vn, la->arg);
}

static int list_txn(struct kv_txn *t, void *arg)
{
	struct list_args *la = arg;
	uint8_t after[REC_KV_KEY_MAX];
	size_t an = la->an ? rec_kv_key(la->ka.oid, la->after, la->an, after) : 0;
	int rc = kvop_object(t, &la->ka, false);

	if (rc)
		return rc;
	return kv_scan(t, KV_KEYVAL, la->ka.oid.b, OFS_OID_LEN, an ? after : NULL, an,
		       list_scan, la);
}

int store_kv_list(struct store *s, struct ofs_oid oid, const void *after, size_t an,
		  uint32_t max, store_kv_fn fn, void *arg, bool *more)
{
	struct list_args la = { .ka = { .oid = oid }, .after = after, .an = an,
				.max = max, .kfn = fn, .arg = arg };
	int rc;

	if (an > OFS_MAX_KEY || max == 0)
		return -EINVAL;
	/* kvop hands list_txn &la.ka, which is la's first member. */
	rc = kvop(s, list_txn, &la.ka, false);
	if (rc)
		return rc;
	*more = la.more;
	return 0;
}

int store_dirent_list(struct store *s, struct ofs_oid dirdata, const char *after,
		      uint32_t max, store_dirent_fn fn, void *arg, bool *more)
{
	struct list_args la = { .ka = { .oid = dirdata, .need_type = OFS_OBJ_DIRDATA },
				.after = after, .an = after ? strlen(after) : 0,
				.max = max, .dirents = true, .dfn = fn, .arg = arg };
	int rc;

	if (la.an > OFS_NAME_MAX || max == 0)
		return -EINVAL;
	rc = kvop(s, list_txn, &la.ka, false);
	if (rc)
		return rc;
	*more = la.more;
	return 0;
}

static int dirent_get(struct kv_txn *t, struct kvop_args *ka, bool *present, struct ofs_dirent *d)
{
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_KEYVAL, key, kn, &v, &vn);

	if (rc == -ENOENT) {
		*present = false;
		return 0;
	}
	if (rc)
		return rc;
	*present = true;
	return rec_decode_dirent(v, vn, d);
}

static int dirent_create_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	struct wbuf w;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	/* Replacing an entry with itself changes nothing, not even the
	 * version: a move that sets it again on every copy (after one copy
	 * missed the first time) leaves the copies at one version. */
	if (ka->present && (ka->flags & OFS_DIRENT_REPLACE) && ka->old.type == ka->d->type &&
	    st_same_handle(&ka->old.handle, &ka->d->handle)) {
		ka->unchanged = true;
		return 0;
	}
	rc = kvop_object(t, ka, true);
	if (rc)
		return rc;
	if (ka->present) {
		if (!(ka->flags & OFS_DIRENT_REPLACE))
			return -EEXIST;
		/* The same object with a new handle (a copy moved), or its
		 * type set right (repair, from the object's own record): any
		 * type. */
		bool same = oid_eq(ka->old.handle.oid, ka->d->handle.oid);
		if (!same && ka->old.type != OFS_OBJ_METAFILE)
			return -EISDIR;
		if (!same && ka->d->type != OFS_OBJ_METAFILE)
			return -ENOTDIR;
	}
	wbuf_init(&w);
	rc = rec_encode_dirent(&w, ka->d);
	if (!rc)
		rc = kv_put(t, KV_KEYVAL, key, kn, w.data, w.len);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, w.data, w.len,
				    false);
	wbuf_free(&w);
	return rc;
}

static int dirent_remove_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	if (!ka->present)
		return -ENOENT;
	rc = kv_del(t, KV_KEYVAL, key, kn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, NULL, 0, true);
	return rc;
}

static int dirent_lookup_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	return ka->present ? 0 : -ENOENT;
}

int store_dirent_create(struct store *s, struct ofs_oid dirdata, const char *name,
			const struct ofs_dirent *d, uint32_t flags, bool *replaced,
			struct ofs_dirent *old)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name), .d = d,
				.flags = flags, .need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	if (d->type != OFS_OBJ_METAFILE && d->type != OFS_OBJ_DIRECTORY)
		return -EINVAL;
	rc = kvop(s, dirent_create_txn, &ka, true);
	if (rc)
		return rc;
	if (ka.unchanged) {
		/* (a create sent again: say what the first one replaced) */
		replaced_find(s->replaced, dirdata, name, d->handle.oid, &ka.old);
	} else if (ka.present && !oid_eq(ka.old.handle.oid, d->handle.oid)) {
		replaced_note(s->replaced, dirdata, name, d->handle.oid, &ka.old);
	}
	*replaced = ka.present;
	if (ka.present && old)
		*old = ka.old;
	return 0;
}

int store_dirent_remove(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *old)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name),
				.need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	rc = kvop(s, dirent_remove_txn, &ka, true);
	if (!rc && old)
		*old = ka.old;
	return rc;
}

int store_dirent_lookup(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *d)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name),
				.need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	rc = kvop(s, dirent_lookup_txn, &ka, false);
	if (!rc)
		*d = ka.old;
	return rc;
}


/* ---- catching up by changes ------------------------------------------------ */

struct changes_args {
	struct st_summary_args sa;
	uint64_t since, base, version;
	struct wbuf *w;
	const uint8_t *notes;
	size_t n;
	const struct ofs_digest *want;
	struct ofs_sid sid;              /* this server (its mark goes) */
	struct ofs_digest got;           /* the content digest read */
};

static int changes_txn(struct kv_txn *t, void *arg)
{
	struct changes_args *ca = arg;
	int rc = st_get_object(t, ca->sa.oid, ca->sa.a);

	if (rc)
		return rc;
	ca->version = ca->sa.a->version;
	if (ca->version < ca->since)
		return -ERANGE;
	rc = changelog_encode(t, ca->sa.oid, ca->since, ca->version, ca->w);
	if (!rc)
		rc = st_summary_txn(t, &ca->sa);
	if (!rc)
		ca->got = checksum_stream_final(ca->sa.cs);
	return rc;
}

static int changes_run(struct store *s, kv_fn fn, struct changes_args *ca, bool update)
{
	int rc;

	ca->sa.a = malloc(sizeof(*ca->sa.a));
	ca->sa.cs = checksum_stream_new();
	if (!ca->sa.a || !ca->sa.cs)
		rc = -ENOMEM;
	else
		rc = update ? kv_update(s->kv, fn, ca) : kv_view(s->kv, fn, ca);
	checksum_stream_free(ca->sa.cs);
	free(ca->sa.a);
	return rc;
}

int store_changes(struct store *s, struct ofs_oid oid, uint64_t since, struct wbuf *w,
		  uint64_t *version, struct ofs_digest *digest)
{
	struct changes_args ca = { .sa.oid = oid, .since = since, .w = w };
	size_t start = w->len;
	int rc = changes_run(s, changes_txn, &ca, false);

	if (rc) {
		w->len = start;
		return rc;
	}
	*version = ca.version;
	*digest = ca.got;
	return 0;
}

static int catch_up_txn(struct kv_txn *t, void *arg)
{
	struct changes_args *ca = arg;
	struct ofs_attr *a = ca->sa.a;
	uint8_t mark[OFS_OID_LEN * 2];
	int rc = st_get_object(t, ca->sa.oid, a);

	if (rc)
		return rc;
	if (a->version != ca->base)
		return -EAGAIN;
	rc = changelog_apply(t, ca->sa.oid, ca->since, ca->version, ca->notes, ca->n);
	if (rc)
		return rc;
	a->version = ca->version;
	if ((rc = st_put_object(t, ca->sa.oid, a)) || (rc = st_summary_txn(t, &ca->sa)))
		return rc;
	ca->got = checksum_stream_final(ca->sa.cs);
	if (!digest_eq(ca->got, *ca->want))
		return -ESTALE;              /* kv_update puts every write back */
	memcpy(mark, ca->sa.oid.b, OFS_OID_LEN);
	memcpy(mark + OFS_OID_LEN, ca->sid.b, OFS_OID_LEN);
	rc = kv_del(t, KV_STALE, mark, sizeof(mark));
	return rc == -ENOENT ? 0 : rc;
}

int store_catch_up_changes(struct store *s, struct ofs_oid oid, uint64_t base, uint64_t since,
			   const uint8_t *notes, size_t n, uint64_t version,
			   const struct ofs_digest *digest)
{
	struct changes_args ca = { .sa.oid = oid, .base = base, .since = since, .notes = notes,
				   .n = n, .version = version, .want = digest, .sid = s->sid };

	if (s->read_only)
		return -EROFS;
	return changes_run(s, catch_up_txn, &ca, true);
}

/* Many at once, in one read transaction (a snapshot: each summary is of
 * a committed state of its object). */
