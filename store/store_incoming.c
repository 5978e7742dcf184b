/*
 * store_incoming.c - whole copies received from a sibling (repair, moves),
 * swapped in atomically, and finishing at open an install a crash
 * interrupted (see store.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/changelog.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/removed.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- receiving a copy from a sibling (repair, moves) ---------------------- */

struct in_kv {
	uint8_t *k, *v;
	size_t kn, vn;
};

struct store_incoming {
	struct store *s;
	struct ofs_oid oid;
	struct ofs_attr a;               /* the copy's attributes, as its source has them */
	int fd;                          /* DATA/incoming/OIDHEX (dfile), else -1 */
	uint8_t *inl;                    /* a small dfile's bytes, installed inline */
	uint64_t written;
	struct checksum_stream *chunk;   /* the chunk being written */
	uint64_t chunk_fill;
	struct ofs_digest *d;            /* digests of the chunks finished, */
	uint64_t *di;                    /* their chunk indexes (whole zero chunks: */
	size_t nd, capd;                 /* none, holes, docs/design.md "Holes") */
	uint64_t nchunks;                /* chunks finished */
	struct in_kv *kvs;
	size_t nkv, capkv;
	size_t kv_bytes;                 /* keys and values held, and their slots */
	int before;                      /* local state at begin: -ENOENT, -OFS_ECORRUPT or 0 */
	uint64_t before_version;
	uint64_t removed_at;             /* removed_seq at begin */
};

static int incoming_state(struct store *s, struct ofs_oid oid, int *state, uint64_t *version)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, oid, a);
	*version = rc == 0 ? a->version : 0;
	free(a);
	if (rc == 0 || rc == -ENOENT || rc == -OFS_ECORRUPT) {
		*state = rc;
		return 0;
	}
	return rc;
}

int store_incoming_begin(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
			 struct store_incoming **out)
{
	struct store_incoming *in;
	int rc;

	if (s->read_only)
		return -EROFS;
	if (a->type < OFS_OBJ_METAFILE || a->type > OFS_OBJ_DIRDATA)
		return -EINVAL;
	if (a->type == OFS_OBJ_DFILE &&
	    (!st_is_pow2(a->chunk_size) || a->chunk_size < STORE_MIN_CHUNK ||
	     a->chunk_size > STORE_MAX_CHUNK || a->size > STORE_MAX_STREAM))
		return -EINVAL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->s = s;
	in->oid = oid;
	in->a = *a;
	in->fd = -1;
	in->removed_at = removed_seq(s->removed);     /* (before the state is read) */
	rc = incoming_state(s, oid, &in->before, &in->before_version);
	if (!rc && a->type == OFS_OBJ_DFILE) {
		in->chunk = checksum_stream_new();
		/* (the incoming file also says a fetch of it runs: a second
		 * one is refused, -EBUSY; a small one's bytes wait in memory,
		 * to be installed inline) */
		rc = in->chunk ? bstream_incoming_create(s->datadir, oid, &in->fd) : -ENOMEM;
		if (!rc && a->size <= s->inline_max &&
		    !(in->inl = malloc(a->size ? (size_t)a->size : 1)))
			rc = -ENOMEM;
	}
	if (rc) {
		store_incoming_free(in);
		return rc;
	}
	*out = in;
	return 0;
}

static int incoming_push_digest(struct store_incoming *in)
{
	struct ofs_digest d = checksum_stream_final(in->chunk);

	if (in->nd == in->capd) {
		size_t cap = in->capd ? in->capd * 2 : 64;
		struct ofs_digest *nd = realloc(in->d, cap * sizeof(*nd));
		uint64_t *ni;
		if (!nd)
			return -ENOMEM;
		in->d = nd;
		ni = realloc(in->di, cap * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		in->di = ni;
		in->capd = cap;
	}
	if (!st_zero_chunk_record(d.b, sizeof(d.b)) || in->chunk_fill != in->a.chunk_size) {
		in->d[in->nd] = d;
		in->di[in->nd++] = in->nchunks;
	}
	in->nchunks++;
	checksum_stream_free(in->chunk);
	in->chunk = checksum_stream_new();
	in->chunk_fill = 0;
	return in->chunk ? 0 : -ENOMEM;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

int store_incoming_write(struct store_incoming *in, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int rc;

	if (in->fd < 0)
		return -OFS_ETYPE;
	if (in->written + len > in->a.size)
		return -EFBIG;
	if (in->inl) {
		memcpy(in->inl + in->written, buf, len);
	} else if (!all_zero(p, len)) {
		/* (zeros are not written: the file stays sparse where its
		 * source's has holes, and is cut to its size at the end) */
		rc = bstream_pwrite(in->fd, buf, len, in->written);
		if (rc)
			return rc;
		bstream_writeback(in->fd, in->written, len);   /* the disk works during the fetch */
	}
	in->written += len;
	while (len) {
		size_t take = in->a.chunk_size - in->chunk_fill;
		if (take > len)
			take = len;
		checksum_stream_update(in->chunk, p, take);
		in->chunk_fill += take;
		p += take;
		len -= take;
		if (in->chunk_fill == in->a.chunk_size && (rc = incoming_push_digest(in)) != 0)
			return rc;
	}
	return 0;
}

int store_incoming_kv(struct store_incoming *in, const void *k, size_t kn, const void *v,
		      size_t vn)
{
	struct in_kv *e;

	if (kn == 0 || kn > OFS_MAX_KEY || vn > OFS_MAX_VALUE)
		return -EINVAL;
	if (kn + vn + sizeof(*e) > STORE_INCOMING_KV_MAX_BYTES - in->kv_bytes)
		return -EFBIG;           /* (store.h: it could not be installed) */
	if (in->nkv) {
		const struct in_kv *p = &in->kvs[in->nkv - 1];
		int c = memcmp(k, p->k, kn < p->kn ? kn : p->kn);
		if (c < 0 || (c == 0 && kn <= p->kn))
			return -EINVAL;      /* keys come in order, once each */
	}
	if (in->nkv == in->capkv) {
		size_t cap = in->capkv ? in->capkv * 2 : 16;
		struct in_kv *n = realloc(in->kvs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		in->kvs = n;
		in->capkv = cap;
	}
	e = &in->kvs[in->nkv];
	e->k = malloc(kn);
	e->v = malloc(vn ? vn : 1);
	if (!e->k || !e->v) {
		free(e->k);
		free(e->v);
		return -ENOMEM;
	}
	memcpy(e->k, k, kn);
	if (vn)
		memcpy(e->v, v, vn);
	e->kn = kn;
	e->vn = vn;
	in->nkv++;
	in->kv_bytes += kn + vn + sizeof(*e);
	return 0;
}

/* The last, partial chunk's digest once every byte is in. */
static int incoming_finish_bytes(struct store_incoming *in)
{
	if (in->a.type != OFS_OBJ_DFILE)
		return 0;
	if (in->written != in->a.size)
		return -EIO;                 /* short: the source sent less than its size */
	if (!in->inl && in->fd >= 0 && ftruncate(in->fd, (off_t)in->a.size) < 0)
		return -errno;               /* (its length, holes at the end included) */
	if (in->chunk_fill && in->nchunks * (uint64_t)in->a.chunk_size < in->a.size)
		return incoming_push_digest(in);
	return 0;
}

int store_incoming_summary(struct store_incoming *in, struct ofs_digest *d)
{
	struct checksum_stream *cs;
	uint8_t sz[8];
	int rc = incoming_finish_bytes(in);

	if (rc)
		return rc;
	cs = checksum_stream_new();
	if (!cs)
		return -ENOMEM;
	/* As store_summary hashes the records: size, chunk records, pairs. */
	for (int i = 0; i < 8; i++)
		sz[i] = (uint8_t)(in->a.size >> (56 - 8 * i));
	checksum_stream_update(cs, sz, sizeof(sz));
	for (size_t i = 0; i < in->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		if (st_zero_chunk_record(in->d[i].b, OFS_DIGEST_LEN))
			continue;            /* (as store_summary: a hole) */
		rec_chunk_key(in->oid, in->di[i], key);
		checksum_stream_update(cs, key, sizeof(key));
		checksum_stream_update(cs, in->d[i].b, OFS_DIGEST_LEN);
	}
	for (size_t i = 0; i < in->nkv; i++) {
		uint8_t key[REC_KV_KEY_MAX];
		size_t kn = rec_kv_key(in->oid, in->kvs[i].k, in->kvs[i].kn, key);
		checksum_stream_update(cs, key, kn);
		checksum_stream_update(cs, in->kvs[i].v, in->kvs[i].vn);
	}
	*d = checksum_stream_final(cs);
	checksum_stream_free(cs);
	return 0;
}

struct install_args {
	struct store_incoming *in;
	bool intent;
};

static int install_txn(struct kv_txn *t, void *arg)
{
	struct install_args *ia = arg;
	struct store_incoming *in = ia->in;
	uint8_t skey[OFS_OID_LEN * 2];
	int rc;

	if (ia->intent &&
	    (rc = kv_put(t, KV_INTENT, in->oid.b, OFS_OID_LEN, "install", 7)) != 0)
		return rc;
	/* Inline, or a stream (the rename after this commit) */
	rc = in->inl ? st_inline_put(t, in->oid, in->inl, (size_t)in->a.size)
		     : st_inline_del(t, in->oid);
	if (rc)
		return rc;
	if ((rc = kv_del_prefix(t, KV_CHUNKS, in->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, in->oid.b, OFS_OID_LEN)) ||
	    (rc = changelog_forget(t, in->oid)))
		return rc;
	for (size_t i = 0; i < in->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		rec_chunk_key(in->oid, in->di[i], key);
		if ((rc = kv_put(t, KV_CHUNKS, key, sizeof(key), in->d[i].b, OFS_DIGEST_LEN)))
			return rc;
	}
	for (size_t i = 0; i < in->nkv; i++) {
		uint8_t key[REC_KV_KEY_MAX];
		size_t kn = rec_kv_key(in->oid, in->kvs[i].k, in->kvs[i].kn, key);
		if ((rc = kv_put(t, KV_KEYVAL, key, kn, in->kvs[i].v, in->kvs[i].vn)))
			return rc;
	}
	/* This copy is current now: it is no longer behind. */
	memcpy(skey, in->oid.b, OFS_OID_LEN);
	memcpy(skey + OFS_OID_LEN, in->s->sid.b, OFS_OID_LEN);
	rc = kv_del(t, KV_STALE, skey, sizeof(skey));
	if (rc && rc != -ENOENT)
		return rc;
	return st_put_object(t, in->oid, &in->a);
}

static int intent_done_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	int rc = kv_del(t, KV_INTENT, oid->b, OFS_OID_LEN);

	return rc == -ENOENT ? 0 : rc;
}

int store_incoming_commit(struct store_incoming *in, const char *tag)
{
	struct store *s = in->s;
	pthread_rwlock_t *l = st_obj_lock(s, in->oid);
	struct install_args ia = { .in = in, .intent = in->fd >= 0 && !in->inl };
	int state, rc = incoming_finish_bytes(in);
	uint64_t version;

	if (rc)
		return rc;
	if (ia.intent) {
		if ((rc = bstream_datasync(in->fd)) || (rc = bstream_incoming_sync(s->datadir)))
			return rc;
	}
	pthread_rwlock_wrlock(l);
	/* The copy here must be as it was when the fetch began: a write that
	 * reached it meanwhile would be lost. */
	rc = incoming_state(s, in->oid, &state, &version);
	if (!rc && (state != in->before || version != in->before_version))
		rc = -EAGAIN;
	/* Nor may it bring back an object removed meanwhile: a client's
	 * remove that came here while the copy was on its way (removed.h). */
	if (!rc && removed_since(s->removed, in->oid, in->removed_at))
		rc = -EAGAIN;
	if (!rc && st_pending_find(s, in->oid))
		rc = -EBUSY;                 /* unstable writes wait for a commit */
	/* The old bytes are kept aside first (a wrong repair can be undone). */
	if (!rc && state != -ENOENT)
		rc = st_quarantine(s, in->oid, version, tag);
	if (!rc && in->a.type == OFS_OBJ_DFILE && in->nd < in->nchunks)
		rc = st_allow_holes(s);      /* (whole zero chunks left as holes) */
	if (!rc)
		rc = kv_update(s->kv, install_txn, &ia);
	if (!rc && in->inl)
		/* Installed inline: a stream the copy had before goes (the
		 * incoming file, which held nothing, goes when freed). */
		rc = bstream_remove(s->datadir, in->oid);
	if (!rc && ia.intent) {
		/* Records first, with the intent; a crash before the rename
		 * is finished by store_open, which installs the file. */
		rc = bstream_install(s->datadir, in->oid);
		if (!rc)
			rc = kv_update(s->kv, intent_done_txn, &in->oid);
		if (rc)
			log_error("installing the copy of an object failed: %s "
				  "(finished when the server next starts)", ofs_strerror(rc));
	}
	pthread_rwlock_unlock(l);
	if (!rc && in->fd >= 0) {
		close(in->fd);
		in->fd = -1;
		if (in->inl)                 /* (the marker: it held nothing) */
			(void)bstream_incoming_drop(s->datadir, in->oid);
		in->a.type = OFS_OBJ_NONE;   /* installed: nothing to drop */
	}
	return rc;
}

void store_incoming_free(struct store_incoming *in)
{
	if (!in)
		return;
	if (in->fd >= 0) {
		close(in->fd);
		bstream_incoming_drop(in->s->datadir, in->oid);
	}
	checksum_stream_free(in->chunk);
	free(in->inl);
	free(in->d);
	free(in->di);
	for (size_t i = 0; i < in->nkv; i++) {
		free(in->kvs[i].k);
		free(in->kvs[i].v);
	}
	free(in->kvs);
	free(in);
}

/* At open: finish installs a crash interrupted, drop incoming files that
 * never got an intent. */
struct recover_args {
	struct store *s;
	int rc;
};

static int intent_exists_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	const void *v;
	size_t vn;

	return kv_get(t, KV_INTENT, oid->b, OFS_OID_LEN, &v, &vn);
}

static int recover_one(struct ofs_oid oid, void *arg)
{
	struct recover_args *ra = arg;
	struct ofs_oid o = oid;
	int rc = kv_view(ra->s->kv, intent_exists_txn, &o);
	char hex[OFS_OID_HEX];

	oid_to_hex(oid, hex);
	if (rc == -ENOENT) {
		log_info("dropping an unfinished incoming copy of %s", hex);
		return bstream_incoming_drop(ra->s->datadir, oid);
	}
	if (rc)
		return rc;
	log_info("installing the incoming copy of %s (its records were committed)", hex);
	rc = bstream_install(ra->s->datadir, oid);
	return rc;
}

static int intents_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct ofs_oid *list = arg;
	(void)v;
	(void)vn;
	if (kn == OFS_OID_LEN && list[0].b[0] < 255) {
		memcpy(list[1 + list[0].b[0]].b, k, OFS_OID_LEN);
		list[0].b[0]++;
	}
	return 0;
}

static int intents_txn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_INTENT, NULL, 0, NULL, 0, intents_scan, arg);
}

int st_recover(struct store *s)
{
	struct recover_args ra = { .s = s };
	struct ofs_oid *list;
	int rc = bstream_incoming_list(s->datadir, recover_one, &ra);

	if (rc)
		return rc;
	/* Intents whose file is gone were installed: forget them. */
	list = calloc(256, sizeof(*list));
	if (!list)
		return -ENOMEM;
	do {
		list[0].b[0] = 0;
		rc = kv_view(s->kv, intents_txn, list);
		for (unsigned i = 0; !rc && i < list[0].b[0]; i++) {
			char hex[OFS_OID_HEX];
			oid_to_hex(list[1 + i], hex);
			log_info("finishing the install of the incoming copy of %s (it was in place)", hex);
			rc = kv_update(s->kv, intent_done_txn, &list[1 + i]);
		}
	} while (!rc && list[0].b[0] == 255);
	free(list);
	return rc;
}

int store_quarantine_purge(struct store *s, long long max_age_s, unsigned *purged)
{
	*purged = 0;
	if (s->read_only)
		return -EROFS;
	return bstream_quarantine_purge(s->datadir, max_age_s, purged);
}
