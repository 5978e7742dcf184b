/*
 * store_bytes.c - byte streams: reads that verify, writes, unstable writes
 * and COMMIT, chunk digests, and the scrub's reads (see store.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_impl.h"

/* ---- unstable writes ---------------------------------------------------- */

struct pending *st_pending_find(struct store *s, struct ofs_oid oid)
{
	struct pending *p = NULL;

	pthread_mutex_lock(&s->pend_mu);
	for (int i = 0; i < STORE_MAX_PENDING && !p; i++)
		if (s->pend[i].used && oid_eq(s->pend[i].oid, oid))
			p = &s->pend[i];
	pthread_mutex_unlock(&s->pend_mu);
	return p;
}

/* A free slot for oid, or NULL when every slot is taken. */
static struct pending *pending_take(struct store *s, struct ofs_oid oid, uint64_t base,
				    uint32_t cs)
{
	struct pending *p = NULL;

	pthread_mutex_lock(&s->pend_mu);
	for (int i = 0; i < STORE_MAX_PENDING && !p; i++)
		if (!s->pend[i].used)
			p = &s->pend[i];
	if (p) {
		p->used = true;
		p->oid = oid;
		p->base = p->end = base;
		p->first = base / cs;
		p->inl_mode = false;
		if (p->cap)
			memset(p->known, 0, p->cap * sizeof(*p->known));
	}
	pthread_mutex_unlock(&s->pend_mu);
	return p;
}

static int commit_locked(struct store *s, struct ofs_oid oid, struct pending *p,
			 uint32_t cs, uint64_t *version, uint64_t *size);

void st_pending_drop(struct store *s, struct pending *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&s->pend_mu);
	p->used = false;
	pthread_mutex_unlock(&s->pend_mu);
}

/* Room for chunk index idx. */
static int pending_grow(struct pending *p, uint64_t idx)
{
	size_t need = (size_t)(idx - p->first + 1), cap;
	struct ofs_digest *d;
	bool *k;

	if (need <= p->cap)
		return 0;
	cap = p->cap ? p->cap : 64;
	while (cap < need)
		cap *= 2;
	d = realloc(p->d, cap * sizeof(*d));
	if (!d)
		return -ENOMEM;
	p->d = d;
	k = realloc(p->known, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	memset(k + p->cap, 0, (cap - p->cap) * sizeof(*k));
	p->known = k;
	p->cap = cap;
	return 0;
}


/* An inline dfile's append [off, off+len), off == p->end: held in memory
 * until its COMMIT. */
static int pending_hold(struct pending *p, uint64_t off, const void *buf, size_t len)
{
	size_t need = (size_t)(off + len - p->base);

	if (need > p->inl_cap) {
		size_t cap = p->inl_cap ? p->inl_cap : 4096;
		uint8_t *b;
		while (cap < need)
			cap *= 2;
		b = realloc(p->inl, cap);
		if (!b)
			return -ENOMEM;
		p->inl = b;
		p->inl_cap = cap;
	}
	memcpy(p->inl + (off - p->base), buf, len);
	p->end = off + len;
	return 0;
}

/* The appends grow past the inline limit: the object moves to a stream,
 * and what waited in memory is written there (still unstable). */
static int pending_to_stream(struct store *s, struct ofs_oid oid, struct pending *p)
{
	int fd = -1, rc = st_promote(s, oid);

	if (!rc && p->end > p->base) {
		rc = bstream_open(s->datadir, oid, 1, &fd);
		if (!rc)
			rc = bstream_pwrite(fd, p->inl, (size_t)(p->end - p->base), p->base);
		if (fd >= 0 && close(fd) < 0 && !rc)
			rc = -errno;
	}
	p->inl_mode = false;             /* (every digest read back at COMMIT) */
	return rc;
}

/* ---- byte streams ------------------------------------------------------ */

int st_chunkview_txn(struct kv_txn *t, void *arg)
{
	struct st_chunkview *cv = arg;
	int rc = st_get_object(t, cv->oid, cv->a);

	if (rc)
		return rc;
	if (cv->a->type != OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	{
		const void *v;
		size_t vn;
		rc = st_inline_get(t, cv->oid, &v, &vn);
		if (rc && rc != -ENOENT)
			return rc;
		cv->is_inline = rc == 0;
	}
	if (!cv->want_digests)
		return 0;
	if (cv->a->chunk_size == 0)
		return -OFS_ECORRUPT;
	for (uint64_t i = cv->first; i <= cv->last; i++) {
		uint8_t key[REC_CHUNK_KEY];
		const void *v;
		size_t vn;

		rec_chunk_key(cv->oid, i, key);
		rc = kv_get(t, KV_CHUNKS, key, sizeof(key), &v, &vn);
		if (rc == -ENOENT && i * cv->a->chunk_size < cv->a->size) {
			/* A hole: it must read as zeros. */
			memset(&cv->digests[i - cv->first], 0, sizeof(cv->digests[0]));
			continue;
		}
		if (rc)
			return rc == -ENOENT ? -OFS_ECORRUPT : rc;
		rc = rec_decode_digest(v, vn, &cv->digests[i - cv->first]);
		if (rc)
			return rc;
	}
	return 0;
}

int store_read(struct store *s, struct ofs_oid oid, uint64_t off, void *buf,
	       size_t len, size_t *got)
{
	struct st_chunkview cv = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	uint8_t *span = NULL;
	uint64_t span_off, span_end, end;
	struct st_bytes b = { .fd = -1 };
	size_t n;
	int rc;
	uint32_t cs;

	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_rdlock(l);
	/* First the attributes alone, to learn the size and chunk size. */
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (rc)
		goto out;
	if (len == 0 || off >= cv.a->size) {
		*got = 0;
		goto out;
	}
	end = cv.a->size - off < len ? cv.a->size : off + len;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	checksum_chunk_span(off, end - off, cs, &cv.first, &cv.last);
	cv.digests = calloc((size_t)(cv.last - cv.first + 1), sizeof(*cv.digests));
	if (!cv.digests) {
		rc = -ENOMEM;
		goto out;
	}
	cv.want_digests = true;
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (rc)
		goto out;
	span_off = cv.first * cs;
	span_end = (cv.last + 1) * cs;
	if (span_end > cv.a->size)
		span_end = cv.a->size;
	/* Read whole chunks straight into buf when the range is aligned to
	 * them; otherwise into a span buffer first. */
	if (span_off == off && span_end == end) {
		span = buf;
	} else {
		span = malloc((size_t)(span_end - span_off));
		if (!span) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = st_bytes_open(s, oid, false, &b);
	if (rc) {
		rc = rc == -ENOENT ? -EIO : rc;
		goto out;
	}
	rc = st_bytes_pread(&b, span, (size_t)(span_end - span_off), span_off, &n);
	if (rc)
		goto out;
	/* A large read is most likely part of a sequential one: start
	 * reading the next piece from disk while this one is checked and
	 * sent (each request opens the stream afresh, so the kernel's own
	 * readahead cannot see the pattern). */
	if (b.fd >= 0 && span_end - span_off >= STORE_PREFETCH_MIN && span_end < cv.a->size)
		bstream_prefetch(b.fd, span_end, span_end - span_off);
	if (n != span_end - span_off) {
		rc = -OFS_ECHECKSUM;    /* the stream is shorter than recorded */
		goto out;
	}
	for (uint64_t i = cv.first; i <= cv.last; i++) {
		uint64_t c0 = i * cs - span_off;
		uint64_t c1 = (i + 1) * cs - span_off;
		if (c1 > span_end - span_off)
			c1 = span_end - span_off;
		if (!st_chunk_ok(span + c0, (size_t)(c1 - c0), &cv.digests[i - cv.first])) {
			rc = -OFS_ECHECKSUM;
			goto out;
		}
	}
	if (span != buf)
		memcpy(buf, span + (off - span_off), (size_t)(end - off));
	*got = (size_t)(end - off);
out:
	pthread_rwlock_unlock(l);
	st_bytes_close(&b);
	if (span != buf)
		free(span);
	free(cv.digests);
	free(cv.a);
	return rc;
}

int st_write_txn(struct kv_txn *t, void *arg)
{
	struct st_write_args *wa = arg;
	int rc = st_get_object(t, wa->oid, wa->a);

	if (rc)
		return rc;
	if (wa->a->type != OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	for (uint64_t i = 0; i < wa->nchunks; i++) {
		uint8_t key[REC_CHUNK_KEY];

		rec_chunk_key(wa->oid, wa->first + i, key);
		rc = kv_put(t, KV_CHUNKS, key, sizeof(key), wa->digests[i].b, OFS_DIGEST_LEN);
		if (rc)
			return rc;
	}
	if (wa->has_edge) {
		uint8_t key[REC_CHUNK_KEY];

		rec_chunk_key(wa->oid, wa->edge, key);
		rc = kv_put(t, KV_CHUNKS, key, sizeof(key), wa->edge_digest.b, OFS_DIGEST_LEN);
		if (rc)
			return rc;
	}
	if (wa->inl_set && (rc = st_inline_put(t, wa->oid, wa->inl, wa->inl_len)) != 0)
		return rc;
	if (wa->new_size > wa->a->size)
		wa->a->size = wa->new_size;
	wa->a->version++;
	wa->a->mtime_ns = st_now_ns();
	return st_put_object(t, wa->oid, wa->a);
}

/*
 * Read [off, off+len) of a stream (off on a chunk boundary, len within the
 * recorded size) into a malloc'd *out and check every chunk in it against
 * its stored digest: -OFS_ECHECKSUM when one does not match.
 */
static int read_verified(struct store *s, struct ofs_oid oid, int fd, uint32_t cs,
			 uint64_t off, uint64_t len, uint8_t **out)
{
	struct st_chunkview cv = { .oid = oid, .want_digests = true };
	const struct st_bytes by = { .fd = fd };
	uint8_t *b = malloc((size_t)len);
	size_t n;
	int rc;

	cv.a = malloc(sizeof(*cv.a));
	cv.first = off / cs;
	cv.last = (off + len - 1) / cs;
	cv.digests = calloc((size_t)(cv.last - cv.first + 1), sizeof(*cv.digests));
	if (!b || !cv.a || !cv.digests) {
		rc = -ENOMEM;
		goto out;
	}
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (!rc)
		rc = st_bytes_pread(&by, b, (size_t)len, off, &n);
	if (!rc && n != len)
		rc = -OFS_ECHECKSUM;
	for (uint64_t i = cv.first; !rc && i <= cv.last; i++) {
		uint64_t c0 = i * cs - off, c1 = c0 + cs > len ? len : c0 + cs;
		if (!st_chunk_ok(b + c0, (size_t)(c1 - c0), &cv.digests[i - cv.first]))
			rc = -OFS_ECHECKSUM;
	}
out:
	free(cv.digests);
	free(cv.a);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

/*
 * The digests of chunks [first, last] of a stream after a write of len
 * bytes at off took it to new_size bytes (the write synced, the stream
 * cut to its old size before it): from the written bytes where a chunk
 * lies inside them, else read back. (The whole chunks of a gap between
 * the old end and the write are holes: no digest, docs/design.md,
 * "Holes".)
 */
static int written_digests(int fd, uint32_t cs, uint64_t first, uint64_t last,
			   uint64_t new_size, uint64_t off, const void *buf,
			   size_t len, struct ofs_digest *d)
{
	uint8_t *chunk = malloc(cs);
	int rc = chunk ? 0 : -ENOMEM;

	for (uint64_t i = first; !rc && i <= last; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs > new_size ? new_size : c0 + cs;
		size_t n;
		if (c0 >= off && c1 <= off + len) {
			/* Entirely inside the written bytes: hash from memory. */
			d[i - first] = checksum_buf((const uint8_t *)buf + (c0 - off),
						    (size_t)(c1 - c0));
		} else {
			rc = bstream_pread(fd, chunk, (size_t)(c1 - c0), c0, &n);
			if (!rc && n != c1 - c0)
				rc = -EIO;
			if (!rc)
				d[i - first] = checksum_buf(chunk, n);
		}
	}
	free(chunk);
	return rc;
}

int store_write(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
		size_t len, uint64_t *version, uint64_t *size)
{
	struct st_chunkview cv = { .oid = oid };
	struct st_write_args wa = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	uint8_t *undo = NULL;
	uint64_t old_size, new_size, first, wfirst, last, undo_off = 0, undo_len = 0;
	uint32_t cs;
	int fd = -1, rc;

	if (s->read_only)
		return -EROFS;
	if (off > STORE_MAX_STREAM || len > STORE_MAX_STREAM - off)
		return -EFBIG;
	cv.a = malloc(sizeof(*cv.a));
	wa.a = malloc(sizeof(*wa.a));
	if (!cv.a || !wa.a) {
		rc = -ENOMEM;
		goto out_free;
	}
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (rc)
		goto out;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	/* Unstable writes before this one are committed first, so that the
	 * recorded state never skips over them. */
	{
		struct pending *p = st_pending_find(s, oid);
		uint64_t v, sz;
		if (p) {
			rc = commit_locked(s, oid, p, cs, &v, &sz);
			if (rc < 0)
				goto out;
			rc = kv_view(s->kv, st_chunkview_txn, &cv);
			if (rc)
				goto out;
		}
	}
	old_size = cv.a->size;
	if (len == 0) {
		*version = cv.a->version;
		*size = old_size;
		goto out;
	}
	new_size = off + len > old_size ? off + len : old_size;
	if (cv.is_inline) {
		/* Small enough to stay in the key-value store, or moved to a
		 * stream first. */
		if (new_size <= s->inline_max) {
			rc = st_inline_write(s, oid, cv.a, off, buf, len, version, size);
			goto out;
		}
		rc = st_promote(s, oid);
		if (rc)
			goto out;
	}
	rc = bstream_open(s->datadir, oid, 1, &fd);
	if (rc) {
		rc = rc == -ENOENT ? -EIO : rc;
		goto out;
	}
	/* Chunks whose digest changes: those the write touches, and the
	 * old last chunk when a gap follows it (it grows by zeros). The
	 * whole chunks of the gap are holes and get no record at all
	 * (docs/design.md, "Holes"): a write far past the end costs what
	 * its own bytes cost. */
	first = (off < old_size ? off : old_size) / cs;
	last = (off + len - 1) / cs;
	wfirst = off > old_size ? off / cs : first;
	wa.has_edge = first < wfirst && old_size % cs != 0;
	wa.edge = first;
	if (wfirst > (old_size + cs - 1) / cs && (rc = st_allow_holes(s)) != 0)
		goto out;

	/* The recorded bytes of those chunks are read first: they must match
	 * their digests (a write never blesses bytes that do not, such as
	 * those of an earlier write that failed), and they undo this write if
	 * it fails. */
	undo_off = first * cs;
	undo_len = (last + 1) * cs < old_size ? (last + 1) * cs - undo_off :
		   old_size > undo_off ? old_size - undo_off : 0;
	if (undo_len) {
		rc = read_verified(s, oid, fd, cs, undo_off, undo_len, &undo);
		if (rc)
			goto out;
	}
	/* Bytes past the recorded end (left by a write that was never
	 * recorded) must not show through a gap as old data. */
	if (off + len > old_size)
		rc = bstream_trim(fd, old_size);
	if (!rc)
		rc = bstream_pwrite(fd, buf, len, off);
	if (!rc)
		rc = bstream_datasync(fd);
	if (rc) {
		/* Put the recorded bytes back, as far as the disk lets us. */
		if (undo_len && bstream_pwrite(fd, undo, (size_t)undo_len, undo_off) == 0)
			(void)bstream_trim(fd, old_size);
		(void)bstream_datasync(fd);
		goto out;
	}
	wa.first = wfirst;
	wa.nchunks = last - wfirst + 1;
	wa.digests = calloc((size_t)wa.nchunks, sizeof(*wa.digests));
	rc = wa.digests ? written_digests(fd, cs, wfirst, last, new_size, off, buf, len,
					  wa.digests) : -ENOMEM;
	if (!rc && wa.has_edge)
		rc = written_digests(fd, cs, first, first, new_size, off, buf, len, &wa.edge_digest);
	if (rc)
		goto out;
	wa.new_size = new_size;
	rc = kv_update(s->kv, st_write_txn, &wa);
	if (!rc) {
		*version = wa.a->version;
		*size = wa.a->size;
	}
out:
	pthread_rwlock_unlock(l);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
out_free:
	free(undo);
	free(wa.digests);
	free(wa.a);
	free(cv.a);
	return rc;
}

/* An inline dfile's unstable writes, waiting in memory: one commit of the
 * value, digests, size and version. */
static int commit_inline(struct store *s, struct ofs_oid oid, const struct pending *p,
			 uint64_t *version, uint64_t *size)
{
	struct st_chunkview cv = { .oid = oid };
	int rc;

	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (!rc && (!cv.is_inline || cv.a->size != p->base))
		rc = -OFS_ECORRUPT;          /* (the lock is held: cannot be) */
	if (!rc)
		rc = st_inline_write(s, oid, cv.a, p->base, p->inl, (size_t)(p->end - p->base),
				     version, size);
	free(cv.a);
	return rc;
}

/* Make oid's unstable writes durable and visible: sync the stream, digest
 * the chunks not yet known, commit digests, size and version. The caller
 * holds the object's lock exclusively. */
static int commit_locked(struct store *s, struct ofs_oid oid, struct pending *p,
			 uint32_t cs, uint64_t *version, uint64_t *size)
{
	struct st_write_args wa = { .oid = oid };
	uint8_t *chunk = NULL;
	uint64_t last;
	int fd = -1, rc;

	if (p->end == p->base) {
		st_pending_drop(s, p);
		return 1;     /* nothing was written: nothing to commit */
	}
	if (p->inl_mode) {
		rc = commit_inline(s, oid, p, version, size);
		st_pending_drop(s, p);
		return rc;
	}
	rc = bstream_open(s->datadir, oid, 0, &fd);
	if (rc)
		goto out;
	rc = bstream_datasync(fd);
	if (rc)
		goto out;
	last = (p->end - 1) / cs;
	wa.first = p->first;
	wa.nchunks = last - p->first + 1;
	wa.digests = calloc((size_t)wa.nchunks, sizeof(*wa.digests));
	wa.a = malloc(sizeof(*wa.a));
	if (!wa.digests || !wa.a || (rc = pending_grow(p, last))) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	for (uint64_t i = p->first; i <= last; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs > p->end ? p->end : c0 + cs;
		size_t n;
		/* A chunk digested at write time is exact only if it was
		 * complete then; the last chunk may have been short. */
		if (p->known[i - p->first] && c1 == c0 + cs) {
			wa.digests[i - p->first] = p->d[i - p->first];
			continue;
		}
		/* (the buffer only when a chunk is read, and only as long as
		 * it: a small file's commit reads a few bytes, and a chunk-sized
		 * allocation per commit is most of what a small put costs) */
		if (!chunk && !(chunk = malloc(last > i ? cs : (size_t)(p->end - c0)))) {
			rc = -ENOMEM;
			goto out;
		}
		rc = bstream_pread(fd, chunk, (size_t)(c1 - c0), c0, &n);
		if (rc)
			goto out;
		if (n != c1 - c0) {
			rc = -EIO;
			goto out;
		}
		wa.digests[i - p->first] = checksum_buf(chunk, n);
	}
	wa.new_size = p->end;
	rc = kv_update(s->kv, st_write_txn, &wa);
	if (!rc) {
		*version = wa.a->version;
		*size = wa.a->size;
	}
out:
	/* Committed or failed, the unstable state is done with: on failure
	 * the object stays as it was recorded and the writer must start
	 * again. */
	st_pending_drop(s, p);
	if (fd >= 0)
		close(fd);
	free(chunk);
	free(wa.digests);
	free(wa.a);
	return rc;
}

int store_commit(struct store *s, struct ofs_oid oid, uint64_t *version, uint64_t *size)
{
	struct st_chunkview cv = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	struct pending *p;
	int rc;

	if (s->read_only)
		return -EROFS;
	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (rc)
		goto out;
	p = st_pending_find(s, oid);
	if (p && cv.a->chunk_size)
		rc = commit_locked(s, oid, p, cv.a->chunk_size, version, size);
	else
		rc = 1;
	if (rc == 1) {
		*version = cv.a->version;
		*size = cv.a->size;
		rc = 0;
	}
out:
	pthread_rwlock_unlock(l);
	free(cv.a);
	return rc;
}

int store_write_unstable(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
			 size_t len, uint64_t *version, uint64_t *size)
{
	struct st_chunkview cv = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	struct pending *p;
	uint32_t cs;
	int fd = -1, rc;
	bool stable = false;

	if (s->read_only)
		return -EROFS;
	if (off > STORE_MAX_STREAM || len > STORE_MAX_STREAM - off)
		return -EFBIG;
	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, st_chunkview_txn, &cv);
	if (rc)
		goto out;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	/* Only appends - each write starting where the last one ended, the
	 * first at the recorded end - may wait for a commit: an overwrite of
	 * recorded bytes would leave their digests wrong until then, and a
	 * gap would have to be read back. Other writes, and writes when every
	 * slot is taken, or past STORE_PENDING_MAX_BYTES unstable bytes, go
	 * stable (which commits what waited first). */
	p = st_pending_find(s, oid);
	if (off < cv.a->size || len == 0 || (p && off != p->end) ||
	    off + len - cv.a->size > STORE_PENDING_MAX_BYTES ||
	    (!p && (off != cv.a->size || !(p = pending_take(s, oid, cv.a->size, cs))))) {
		stable = true;
		goto out;
	}
	if (p->end == p->base && cv.is_inline)
		p->inl_mode = true;          /* (a fresh slot: its bytes wait here) */
	if (p->inl_mode) {
		if (off + len <= s->inline_max) {
			rc = pending_hold(p, off, buf, len);
			if (rc) {
				st_pending_drop(s, p);
				goto out;
			}
			*version = cv.a->version;
			*size = p->end;
			goto out;
		}
		rc = pending_to_stream(s, oid, p);
		if (rc) {
			st_pending_drop(s, p);
			goto out;
		}
	}
	rc = pending_grow(p, (off + len - 1) / cs);
	if (!rc)
		rc = bstream_open(s->datadir, oid, 1, &fd);
	if (!rc && p->end == p->base) {
		/* As in store_write: the recorded part of the chunk this
		 * append continues must verify, and nothing past it may
		 * linger. */
		if (p->base % cs) {
			uint8_t *old = NULL;
			rc = read_verified(s, oid, fd, cs, p->base / cs * cs, p->base % cs, &old);
			free(old);
		}
		if (!rc)
			rc = bstream_trim(fd, p->base);
	}
	if (!rc)
		rc = bstream_pwrite(fd, buf, len, off);
	if (rc) {
		st_pending_drop(s, p);
		goto out;
	}
	for (uint64_t i = off / cs; i <= (off + len - 1) / cs; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs;
		bool whole = c0 >= off && c1 <= off + len;
		if (i < p->first)
			continue;
		p->known[i - p->first] = whole;
		if (whole)
			p->d[i - p->first] = checksum_buf((const uint8_t *)buf + (c0 - off), cs);
	}
	if (off + len > p->end)
		p->end = off + len;
	*version = cv.a->version;
	*size = p->end;
out:
	pthread_rwlock_unlock(l);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	free(cv.a);
	if (stable && !rc)
		return store_write(s, oid, off, buf, len, version, size);
	return rc;
}

struct chunks_args {
	struct ofs_oid oid;
	store_chunk_fn fn;
	void *arg;
};

static int chunks_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct chunks_args *ca = arg;
	struct ofs_digest d;
	uint64_t idx;
	int rc;

	if ((rc = rec_chunk_key_index(k, kn, &idx)) || (rc = rec_decode_digest(v, vn, &d)))
		return rc;
	return ca->fn(idx, d, ca->arg);
}

static int chunks_txn(struct kv_txn *t, void *arg)
{
	struct chunks_args *ca = arg;

	return kv_scan(t, KV_CHUNKS, ca->oid.b, sizeof(ca->oid.b), NULL, 0, chunks_scan, ca);
}

int store_chunks(struct store *s, struct ofs_oid oid, store_chunk_fn fn, void *arg)
{
	struct chunks_args ca = { .oid = oid, .fn = fn, .arg = arg };

	return kv_view(s->kv, chunks_txn, &ca);
}

/* The attributes and the digests of chunks [first, last] of one dfile. */
struct piece_args {
	struct ofs_oid oid;
	uint64_t first, last;
	struct ofs_digest *d;
	struct ofs_attr *a;
};

/* The first chunk at or after from with a digest record (UINT64_MAX:
 * none). */
struct next_rec_args {
	struct ofs_oid oid;
	uint64_t from, found;
};

static int next_rec_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct next_rec_args *na = arg;
	int rc = rec_chunk_key_index(k, kn, &na->found);

	(void)v; (void)vn;
	return rc ? rc : 1;
}

static int next_rec_txn(struct kv_txn *t, void *arg)
{
	struct next_rec_args *na = arg;
	uint8_t after[REC_CHUNK_KEY];

	na->found = UINT64_MAX;
	if (na->from)
		rec_chunk_key(na->oid, na->from - 1, after);
	return kv_scan(t, KV_CHUNKS, na->oid.b, OFS_OID_LEN, na->from ? after : NULL,
		       na->from ? sizeof(after) : 0, next_rec_scan, na);
}

/*
 * Where a scrub of a stream goes on from chunk next: past the holes
 * (chunks without a record) that the file holds no data in, which read as
 * zeros without being read (lseek(2), SEEK_DATA). A chunk without a record
 * where the file has data is read and checked to be zeros. The caller
 * holds the object's lock.
 */
static uint64_t scrub_skip_holes(struct store *s, struct ofs_oid oid, int fd, uint32_t cs,
				 uint64_t next, uint64_t size)
{
	struct next_rec_args na = { .oid = oid, .from = next };
	uint64_t nchunks = (size + cs - 1) / cs, data;
	off_t d;

	if (kv_view(s->kv, next_rec_txn, &na) != 0 || na.found <= next)
		return next;
	d = lseek(fd, (off_t)(next * cs), SEEK_DATA);
	if (d < 0)
		data = errno == ENXIO ? nchunks : next;   /* (ENXIO: no data past it) */
	else
		data = (uint64_t)d / cs;
	if (data > na.found)
		data = na.found;
	return data > nchunks ? nchunks : data;
}

static int piece_txn(struct kv_txn *t, void *arg)
{
	struct piece_args *pa = arg;
	int rc = st_get_object(t, pa->oid, pa->a);

	if (rc)
		return rc;
	for (uint64_t i = pa->first; i <= pa->last; i++) {
		uint8_t key[REC_CHUNK_KEY];
		const void *v;
		size_t vn;

		rec_chunk_key(pa->oid, i, key);
		rc = kv_get(t, KV_CHUNKS, key, sizeof(key), &v, &vn);
		if (rc == -ENOENT) {
			/* A hole (or a lost record): its bytes must be zeros. */
			memset(&pa->d[i - pa->first], 0, sizeof(pa->d[0]));
			continue;
		}
		if (rc || (rc = rec_decode_digest(v, vn, &pa->d[i - pa->first])) != 0)
			return rc;
	}
	return 0;
}

#define SCRUB_PIECE_CHUNKS_BYTES (1u << 20)   /* read about this much at once */

/* The chunks pa.first..pa.last of one piece read at off (len bytes asked,
 * got arrived into buf) against their digests pa.d: each that does not
 * match (or, a hole, is not all zeros) and the stream's end short of the
 * piece reported through found. 0, or what found returned to stop. */
static int scrub_check_piece(const struct piece_args *pa, uint32_t cs, const uint8_t *buf,
			     uint64_t off, uint64_t len, uint64_t got, store_scrub_finding_fn found,
			     void *arg)
{
	char detail[256];
	int rc = 0;

	for (uint64_t i = pa->first; i <= pa->last; i++) {
		uint64_t c0 = (i - pa->first) * cs, c1 = c0 + cs;
		if (c1 > len)
			c1 = len;
		if (c1 > got) {
			snprintf(detail, sizeof(detail), "chunk %llu: byte stream ends at %llu",
				 (unsigned long long)i, (unsigned long long)(off + got));
			return found(OFS_FINDING_SIZE_MISMATCH, detail, arg);
		}
		if (!st_chunk_ok(buf + c0, (size_t)(c1 - c0), &pa->d[i - pa->first])) {
			snprintf(detail, sizeof(detail), st_is_hole(&pa->d[i - pa->first]) ?
				 "chunk %llu (bytes %llu-%llu) is a hole (no checksum recorded) and holds a byte that is not zero" :
				 "chunk %llu (bytes %llu-%llu) does not match its checksum",
				 (unsigned long long)i, (unsigned long long)(off + c0),
				 (unsigned long long)(off + c1 - 1));
			rc = found(OFS_FINDING_CHECKSUM_MISMATCH, detail, arg);
			if (rc)
				return rc;
		}
	}
	return rc;
}

int store_scrub_dfile(struct store *s, struct ofs_oid oid, store_scrub_finding_fn found,
		      store_scrub_throttle_fn throttle, void *arg, uint64_t *bytes_read)
{
	struct piece_args pa = { .oid = oid };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
	uint8_t *buf = NULL;
	uint64_t size, next = 0;
	uint32_t cs, per;
	char detail[256];
	struct st_bytes b = { .fd = -1 };
	struct stat st;
	bool stop = false;
	int rc;

	*bytes_read = 0;
	pa.a = malloc(sizeof(*pa.a));
	if (!pa.a)
		return -ENOMEM;
	pthread_rwlock_rdlock(l);
	pa.first = 1;
	pa.last = 0;                 /* no digests: the record alone */
	rc = kv_view(s->kv, piece_txn, &pa);
	if (rc == 0 && pa.a->type != OFS_OBJ_DFILE)
		rc = -OFS_ETYPE;
	if (rc == 0 && pa.a->chunk_size == 0)
		rc = -OFS_ECORRUPT;
	if (rc == 0) {
		rc = st_bytes_open(s, oid, false, &b);
		if (rc == -ENOENT && kv_view(s->kv, piece_txn, &pa) == -ENOENT)
			goto out_locked;      /* removed meanwhile (rc: -ENOENT) */
		if (rc == -ENOENT) {
			rc = found(OFS_FINDING_MISSING_REPLICA, "its bytes are missing (no byte stream file, no inline value)", arg);
			goto out_locked;
		}
		if (rc) {
			snprintf(detail, sizeof(detail), "cannot open the byte stream: %s",
				 ofs_strerror(rc));
			rc = found(OFS_FINDING_UNREADABLE, detail, arg);
			goto out_locked;
		}
		if (b.fd < 0)
			st.st_size = (off_t)b.len;
		else if (fstat(b.fd, &st) != 0)
			st.st_size = (off_t)pa.a->size;      /* (the reads will say) */
		if ((uint64_t)st.st_size < pa.a->size) {
			snprintf(detail, sizeof(detail), "%s holds %llu bytes, record says %llu",
				 b.fd < 0 ? "its inline value" : "byte stream",
				 (unsigned long long)st.st_size, (unsigned long long)pa.a->size);
			rc = found(OFS_FINDING_SIZE_MISMATCH, detail, arg);
			stop = true;      /* (the chunks past its end would say it again) */
			goto out_locked;
		}
	}
out_locked:
	pthread_rwlock_unlock(l);
	if (rc || (b.fd < 0 && !b.inl) || stop)
		goto out;
	size = pa.a->size;
	if (size == 0)
		goto out;             /* no chunks: nothing to read */
	/* The disk reads ahead while a piece is hashed: the kernel's own
	 * readahead, asynchronous and growing with a sequential reader, keeps
	 * reads in flight. (An explicit WILLNEED per piece was measured to
	 * halve the scrub rate from disk: it allocates and submits the pages
	 * in this thread, in small batches, and defeats the async window.) */
	if (b.fd >= 0)
		bstream_sequential(b.fd);
	cs = pa.a->chunk_size;
	per = cs >= SCRUB_PIECE_CHUNKS_BYTES ? 1 : SCRUB_PIECE_CHUNKS_BYTES / cs;
	/* A piece is never longer than the stream: a small file gets a small
	 * buffer (a megabyte per file scrubbed was most of a scrub's time in
	 * the allocator, and more under a sanitizer). */
	buf = malloc((size_t)((uint64_t)per * cs < size ? (uint64_t)per * cs : size));
	pa.d = calloc(per, sizeof(*pa.d));
	if (!buf || !pa.d) {
		rc = -ENOMEM;
		goto out;
	}
	/* Piece by piece, each under the object's read lock (a writer waits
	 * for one piece, not for the whole object). */
	while (next * (uint64_t)cs < size && !rc) {
		uint64_t off = next * (uint64_t)cs, len, got64;
		size_t got = 0;

		pa.first = next;
		pa.last = next + per - 1;
		if ((pa.last + 1) * (uint64_t)cs > size)
			pa.last = (size - 1) / cs;
		len = (pa.last + 1) * (uint64_t)cs > size ? size - off : (pa.last - pa.first + 1) * (uint64_t)cs;
		pthread_rwlock_rdlock(l);
		if (b.fd >= 0) {
			uint64_t to = scrub_skip_holes(s, oid, b.fd, cs, next, size);
			if (to != next) {
				pthread_rwlock_unlock(l);
				next = to;
				continue;
			}
		}
		pthread_rwlock_unlock(l);
		if (throttle && (rc = throttle(len, arg)) != 0)
			break;
		pthread_rwlock_rdlock(l);
		rc = kv_view(s->kv, piece_txn, &pa);
		if (!rc && pa.a->size < size)
			size = pa.a->size;    /* (shrunk meanwhile: check what is left) */
		if (!rc && b.fd < 0) {
			/* Inline: the value as of these digests (a write since
			 * the first look replaced both). */
			st_bytes_close(&b);
			rc = st_bytes_open(s, oid, false, &b);
		}
		if (!rc)
			rc = st_bytes_pread(&b, buf, (size_t)len, off, &got);
		else if (rc == -ENOENT)
			stop = true;          /* removed meanwhile: nothing to say */
		pthread_rwlock_unlock(l);
		if (stop)
			break;
		if (rc) {
			snprintf(detail, sizeof(detail), "read error at offset %llu: %s",
				 (unsigned long long)off, ofs_strerror(rc));
			rc = found(OFS_FINDING_UNREADABLE, detail, arg);
			break;
		}
		got64 = got;
		*bytes_read += got64;
		rc = scrub_check_piece(&pa, cs, buf, off, len, got64, found, arg);
		if (got64 < len)
			break;
		next = pa.last + 1;
	}
out:
	st_bytes_close(&b);
	free(buf);
	free(pa.d);
	free(pa.a);
	return rc == 1 ? 0 : rc;     /* 1: the caller had seen enough */
}
