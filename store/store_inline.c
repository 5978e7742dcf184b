/*
 * store_inline.c - small dfiles held in the key-value store (see
 * store_impl.h): their bytes, reading them like a stream, writing them in
 * one commit, and moving them to a byte stream when they grow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_impl.h"

int st_inline_get(struct kv_txn *t, struct ofs_oid oid, const void **v, size_t *vn)
{
	return kv_get(t, KV_INLINE, oid.b, OFS_OID_LEN, v, vn);
}

int st_inline_put(struct kv_txn *t, struct ofs_oid oid, const void *v, size_t vn)
{
	return kv_put(t, KV_INLINE, oid.b, OFS_OID_LEN, vn ? v : "", vn);
}

int st_inline_del(struct kv_txn *t, struct ofs_oid oid)
{
	int rc = kv_del(t, KV_INLINE, oid.b, OFS_OID_LEN);

	return rc == -ENOENT ? 0 : rc;
}

struct copy_args {
	struct ofs_oid oid;
	uint8_t *b;                  /* out: malloc'd copy (NULL for none) */
	size_t n;
};

static int copy_txn(struct kv_txn *t, void *arg)
{
	struct copy_args *ca = arg;
	const void *v;
	size_t vn;
	int rc = st_inline_get(t, ca->oid, &v, &vn);

	if (rc)
		return rc;
	if (vn > STORE_INLINE_MAX_LIMIT)
		return -OFS_ECORRUPT;
	ca->b = malloc(vn ? vn : 1);
	if (!ca->b)
		return -ENOMEM;
	memcpy(ca->b, v, vn);
	ca->n = vn;
	return 0;
}

int st_inline_copy(struct store *s, struct ofs_oid oid, uint8_t **b, size_t *n)
{
	struct copy_args ca = { .oid = oid };
	int rc = kv_view(s->kv, copy_txn, &ca);

	if (rc) {
		free(ca.b);
		return rc;
	}
	*b = ca.b;
	*n = ca.n;
	return 0;
}

int store_set_inline_max(struct store *s, uint32_t max)
{
	if (max > STORE_INLINE_MAX_LIMIT)
		return -EINVAL;
	s->inline_max = max;
	return 0;
}

static int is_inline_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	const void *v;
	size_t vn;

	return st_inline_get(t, *oid, &v, &vn);
}

int store_is_inline(struct store *s, struct ofs_oid oid)
{
	int rc = kv_view(s->kv, is_inline_txn, &oid);

	return rc == 0 ? 1 : rc == -ENOENT ? 0 : rc;
}

/* ---- reading either kind ------------------------------------------------ */

int st_bytes_open(struct store *s, struct ofs_oid oid, bool rw, struct st_bytes *b)
{
	int rc = st_inline_copy(s, oid, &b->inl, &b->len);

	b->fd = -1;
	if (rc == 0)
		return 0;
	b->inl = NULL;
	if (rc != -ENOENT)
		return rc;
	return bstream_open(s->datadir, oid, rw, &b->fd);
}

int st_bytes_pread(const struct st_bytes *b, void *buf, size_t n, uint64_t off, size_t *got)
{
	if (b->fd >= 0)
		return bstream_pread(b->fd, buf, n, off, got);
	*got = 0;
	if (off < b->len) {
		*got = b->len - off < n ? (size_t)(b->len - off) : n;
		memcpy(buf, b->inl + off, *got);
	}
	return 0;
}

int st_bytes_close(struct st_bytes *b)
{
	int rc = 0;

	if (b->fd >= 0 && close(b->fd) < 0)
		rc = -errno;
	b->fd = -1;
	free(b->inl);
	b->inl = NULL;
	return rc;
}

/* ---- writing ------------------------------------------------------------- */

/* Every chunk of content b (n bytes) against its digest: 0 or
 * -OFS_ECHECKSUM (a write never blesses bytes that do not match). */
static int verify_all(struct store *s, struct ofs_oid oid, uint32_t cs, const uint8_t *b,
		      size_t n)
{
	struct st_chunkview cv = { .oid = oid, .want_digests = true };
	int rc;

	if (n == 0)
		return 0;
	cv.a = malloc(sizeof(*cv.a));
	cv.first = 0;
	cv.last = (n - 1) / cs;
	cv.digests = calloc((size_t)cv.last + 1, sizeof(*cv.digests));
	rc = cv.a && cv.digests ? kv_view(s->kv, st_chunkview_txn, &cv) : -ENOMEM;
	for (uint64_t i = 0; !rc && i <= cv.last; i++) {
		size_t c0 = (size_t)(i * cs), c1 = c0 + cs > n ? n : c0 + cs;
		if (!digest_eq(checksum_buf(b + c0, c1 - c0), cv.digests[i]))
			rc = -OFS_ECHECKSUM;
	}
	free(cv.digests);
	free(cv.a);
	return rc;
}

int st_inline_write(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
		    uint64_t off, const void *buf, size_t len, uint64_t *version, uint64_t *size)
{
	struct st_write_args wa = { .oid = oid, .inl_set = true };
	uint8_t *old = NULL, *nw = NULL;
	uint64_t end = off + len > a->size ? off + len : a->size;
	uint32_t cs = a->chunk_size;
	size_t n = 0;
	int rc;

	if (end > s->inline_max)
		return -EFBIG;
	rc = st_inline_copy(s, oid, &old, &n);
	if (!rc && n != a->size)
		rc = -OFS_ECHECKSUM;         /* the record says another size */
	if (!rc)
		rc = verify_all(s, oid, cs, old, n);
	nw = rc ? NULL : calloc((size_t)end ? (size_t)end : 1, 1);
	if (!rc && !nw)
		rc = -ENOMEM;
	if (rc)
		goto out;
	memcpy(nw, old, n);
	memcpy(nw + off, buf, len);        /* (a gap between reads as zeros) */
	wa.first = 0;
	wa.nchunks = end ? (end - 1) / cs + 1 : 0;
	wa.digests = calloc((size_t)wa.nchunks + 1, sizeof(*wa.digests));
	wa.a = malloc(sizeof(*wa.a));
	if (!wa.digests || !wa.a) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < wa.nchunks; i++) {
		size_t c0 = (size_t)(i * cs), c1 = c0 + cs > end ? (size_t)end : c0 + cs;
		wa.digests[i] = checksum_buf(nw + c0, c1 - c0);
	}
	wa.new_size = end;
	wa.inl = nw;
	wa.inl_len = (size_t)end;
	rc = kv_update(s->kv, st_write_txn, &wa);
	if (!rc) {
		*version = wa.a->version;
		*size = wa.a->size;
	}
out:
	free(old);
	free(nw);
	free(wa.digests);
	free(wa.a);
	return rc;
}

/* The stream of oid, made afresh: a leftover of a move a crash cut short
 * (a stream beside inline bytes, which are what counts) is emptied. */
static int stream_afresh(struct store *s, struct ofs_oid oid, int *fd)
{
	int rc = bstream_create(s->datadir, oid);

	if (rc && rc != -EEXIST)
		return rc;
	rc = bstream_open(s->datadir, oid, 1, fd);
	if (!rc && (rc = bstream_trim(*fd, 0)) != 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

/* oid's stream holding b (n bytes), synced: made (-EEXIST when there is
 * one), or afresh (one there is emptied first). */
static int stream_of(struct store *s, struct ofs_oid oid, const uint8_t *b, size_t n,
		     bool afresh)
{
	int fd = -1, rc = afresh ? stream_afresh(s, oid, &fd) : bstream_create(s->datadir, oid);

	if (!rc && !afresh)
		rc = bstream_open(s->datadir, oid, 1, &fd);
	if (!rc && n)
		rc = bstream_pwrite(fd, b, n, 0);
	if (!rc)
		rc = bstream_datasync(fd);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

static int drop_inline_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	const void *v;
	size_t vn;
	int rc = st_inline_get(t, *oid, &v, &vn);

	return rc ? rc : st_inline_del(t, *oid);
}

int st_promote(struct store *s, struct ofs_oid oid)
{
	uint8_t *b = NULL;
	size_t n = 0;
	int rc = st_inline_copy(s, oid, &b, &n);

	if (rc)
		return rc == -ENOENT ? 0 : rc;        /* a stream already */
	rc = stream_of(s, oid, b, n, true);
	/* The same bytes either way: once this commits, the stream counts. */
	if (!rc)
		rc = kv_update(s->kv, drop_inline_txn, &oid);
	free(b);
	return rc;
}

int st_quarantine(struct store *s, struct ofs_oid oid, uint64_t version, const char *tag)
{
	uint8_t *b = NULL;
	size_t n = 0;
	int rc = st_inline_copy(s, oid, &b, &n);

	if (rc == -ENOENT)
		return bstream_quarantine(s->datadir, oid, version, tag);
	if (rc == 0)
		rc = bstream_quarantine_bytes(s->datadir, oid, version, tag, b, n);
	free(b);
	return rc;
}

/* ---- a small file made whole ---------------------------------------------- */

struct small_args {
	struct ofs_oid mf, df;
	struct ofs_attr *ma, *da;        /* the records to store */
	const uint8_t *b;                /* the bytes, when inline */
	size_t n;
	struct ofs_digest *d;            /* their chunk digests */
	uint64_t nd;
};

/* Does the dfile hold the request's bytes (their chunk digests)? */
static bool same_digests(struct kv_txn *t, const struct small_args *sa)
{
	for (uint64_t i = 0; i < sa->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		const void *v;
		size_t vn;
		rec_chunk_key(sa->df, i, key);
		if (kv_get(t, KV_CHUNKS, key, sizeof(key), &v, &vn) != 0 || vn != OFS_DIGEST_LEN ||
		    memcmp(v, sa->d[i].b, OFS_DIGEST_LEN) != 0)
			return false;
	}
	return true;
}

/* Made already by this very request (a primary that forwarded it died
 * before it answered, and the client asks here again)? The same owner,
 * mode, name and bytes: a create that differs is another's (EEXIST). */
static bool same_small(struct kv_txn *t, const struct small_args *sa)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	bool same;

	if (!a)
		return false;
	same = st_get_object(t, sa->mf, a) == 0 && a->version == 1 &&
	       a->type == OFS_OBJ_METAFILE && a->nparts == 1 && oid_eq(a->parts[0].oid, sa->df) &&
	       a->uid == sa->ma->uid && a->gid == sa->ma->gid && a->mode == sa->ma->mode &&
	       oid_eq(a->backref.owner, sa->ma->backref.owner) &&
	       !strcmp(a->backref.name, sa->ma->backref.name) && a->size == sa->n &&
	       st_get_object(t, sa->df, a) == 0 && a->type == OFS_OBJ_DFILE && a->size == sa->n &&
	       a->version == 1 && same_digests(t, sa);
	free(a);
	return same;
}

/* 0 when neither object exists, 1 when this request made both, else
 * -EEXIST. */
static int small_exists_txn(struct kv_txn *t, void *arg)
{
	struct small_args *sa = arg;
	const void *v;
	size_t vn;

	if (kv_get(t, KV_OBJECTS, sa->mf.b, OFS_OID_LEN, &v, &vn) == 0 ||
	    kv_get(t, KV_OBJECTS, sa->df.b, OFS_OID_LEN, &v, &vn) == 0)
		return same_small(t, sa) ? 1 : -EEXIST;
	return 0;
}

static int small_txn(struct kv_txn *t, void *arg)
{
	struct small_args *sa = arg;
	int rc = small_exists_txn(t, arg);

	if (rc)
		return rc;
	if (sa->b && (rc = st_inline_put(t, sa->df, sa->b, sa->n)) != 0)
		return rc;
	for (uint64_t i = 0; i < sa->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		rec_chunk_key(sa->df, i, key);
		if ((rc = kv_put(t, KV_CHUNKS, key, sizeof(key), sa->d[i].b, OFS_DIGEST_LEN)))
			return rc;
	}
	if ((rc = st_put_object(t, sa->df, sa->da)))
		return rc;
	return st_put_object(t, sa->mf, sa->ma);
}

/* The records of a small file: the metafile as asked (its size the
 * bytes'), its dfile on the same servers. -EINVAL for a layout that is
 * not one dfile on the metafile's own servers. */
static int small_records(struct store *s, struct ofs_oid mf, const struct ofs_attr *init,
			 size_t n, struct ofs_attr *ma, struct ofs_attr *da)
{
	int64_t now = st_now_ns();

	if (init->type != OFS_OBJ_METAFILE || init->nparts != 1 || init->nsids == 0 ||
	    init->nsids > OFS_MAX_REPLICAS || init->replicas > OFS_MAX_REPLICAS ||
	    init->parts[0].nsids != init->nsids ||
	    memcmp(init->parts[0].sids, init->sids, init->nsids * sizeof(init->sids[0])) ||
	    init->size != n)
		return -EINVAL;
	*ma = *init;
	ma->version = 1;
	ma->ctime_ns = ma->mtime_ns = now;
	ma->nstale = 0;
	ma->chunk_size = 0;
	memset(da, 0, sizeof(*da));
	da->type = OFS_OBJ_DFILE;
	da->mode = init->mode;
	da->uid = init->uid;
	da->gid = init->gid;
	da->version = 1;
	da->ctime_ns = da->mtime_ns = now;
	da->size = n;
	da->chunk_size = s->chunk_size;
	da->nsids = init->nsids;
	memcpy(da->sids, init->sids, sizeof(da->sids));
	da->replicas = init->replicas;
	da->confidence = init->confidence;
	da->backref.owner = mf;
	da->backref.stripe = 0;
	return 0;
}

int store_create_small(struct store *s, struct ofs_oid mf, const struct ofs_attr *init,
		       const void *bytes, size_t n)
{
	struct small_args sa = { .mf = mf, .df = init->parts[0].oid, .n = n };
	uint32_t cs = s->chunk_size;
	bool inl = n <= s->inline_max;
	int rc;

	if (s->read_only)
		return -EROFS;
	if (oid_is_zero(mf) || init->nparts != 1 || oid_is_zero(sa.df) || oid_eq(mf, sa.df))
		return -EINVAL;
	sa.ma = malloc(sizeof(*sa.ma));
	sa.da = malloc(sizeof(*sa.da));
	sa.nd = n ? (n - 1) / cs + 1 : 0;
	sa.d = calloc((size_t)sa.nd + 1, sizeof(*sa.d));
	rc = sa.ma && sa.da && sa.d ? small_records(s, mf, init, n, sa.ma, sa.da) : -ENOMEM;
	for (uint64_t i = 0; !rc && i < sa.nd; i++) {
		size_t c0 = (size_t)(i * cs), c1 = c0 + cs > n ? n : c0 + cs;
		sa.d[i] = checksum_buf((const uint8_t *)bytes + c0, c1 - c0);
	}
	if (!rc)
		rc = kv_view(s->kv, small_exists_txn, &sa);   /* (before a stream is made) */
	if (!rc && inl)
		sa.b = bytes;
	else if (!rc)
		rc = stream_of(s, sa.df, bytes, n, false);   /* (not kept inline here) */
	if (!rc) {
		rc = kv_update(s->kv, small_txn, &sa);
		if (rc && rc != 1 && !inl)
			bstream_remove(s->datadir, sa.df);
	}
	if (rc == 1)
		rc = 0;                      /* (made already by this request) */
	free(sa.ma);
	free(sa.da);
	free(sa.d);
	return rc;
}
