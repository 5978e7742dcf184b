/*
 * store_impl.h - what the parts of the storage engine share. Private to
 * store/store*.c: everyone else uses store.h.
 *
 *   store.c           init, open and close; the root; the server table;
 *                     statistics; the helpers below
 *   store_object.c    objects and their attributes
 *   store_bytes.c     byte streams: reads, writes, unstable writes, COMMIT,
 *                     chunk digests, the scrub's reads
 *   store_inline.c    small dfiles whose bytes live in the key-value store
 *   store_kv.c        key-value parts and directory entries; catching a
 *                     copy up by the changes it missed
 *   store_stale.c     stale records and behind marks
 *   store_walk.c      walks and summaries (scrub, repair, namespace check)
 *   store_incoming.c  whole copies from a sibling; recovery at open
 *   store_tool.c      the object tool's surgery
 *
 * Order of durable steps, so that a crash at any instant leaves no record
 * pointing at bytes that do not exist:
 *   create dfile: byte stream created and fsync'd, then its record committed
 *   write:        bytes pwritten and fdatasync'd, then digests, size and
 *                 version committed
 *   remove:       records deleted and committed, then the byte stream
 *                 unlinked (a crash in between leaves an unreferenced file,
 *                 which scrub reports; never a record without bytes)
 * Records are committed through kv_update, which group-commits.
 *
 * Inline dfiles. A dfile made while the store's inline limit is not 0 has
 * no stream: its bytes are one KV_INLINE value (empty at first), its
 * chunk digests in KV_CHUNKS as for a stream, so everything that reads
 * records - summaries, scrub's comparisons, repair - sees no difference.
 * Writes that keep it within the limit replace the value, digests, size
 * and version in one commit (no file, no fsync of its own). A write past
 * the limit first moves it to a stream (st_promote: the stream written
 * and synced, then the value deleted in one commit - the same bytes
 * either way, so a crash in between leaves the value counting and a
 * stray stream that the next move empties). A dfile with a KV_INLINE
 * value is inline; one without is a stream.
 *
 * Locks: locks[] are per-object reader/writer locks picked by OID hash.
 * Writes and removes of a dfile hold it exclusively, reads shared, so a
 * reader never sees bytes and digests from different writes. No other
 * lock is held while one is taken; kv.c's own lock is taken inside.
 */
#ifndef OFS_STORE_IMPL_H
#define OFS_STORE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/checksum.h"
#include "store/kv.h"
#include "store/store.h"

#define STORE_NLOCKS 1024
#define STORE_PREFETCH_MIN (1u << 20)   /* reads this large prefetch the next */
#define STORE_MAX_PENDING 1024          /* objects with unstable writes */

struct store {
	char *datadir;                      /* owned */
	struct kv *kv;
	bool read_only;
	_Atomic bool held;                  /* store_hold: down until caught up */
	uint64_t capacity;                  /* bytes it may hold; 0: its disk's size */
	int lock_fd;                        /* DATA/lock, flock'd; -1 read-only */
	struct ofs_sid sid;
	uint32_t chunk_size;
	size_t nattrs;
	char *attrs[STORE_MAX_ATTRS];       /* "key=value", owned */
	pthread_rwlock_t locks[STORE_NLOCKS];
	pthread_mutex_t pend_mu;            /* guards which pend[] are in use */
	struct pending *pend;               /* STORE_MAX_PENDING slots */
	atomic_bool behind_any;             /* some copy here is marked behind */
	struct replaced *replaced;          /* recent entry replacements */
	struct removed *removed;            /* recent removals (store_remove) */
	uint32_t inline_max;                /* dfiles up to this many bytes inline */
	atomic_bool holes;                  /* DATA/format says holes may be */
	pthread_mutex_t holes_mu;           /* (taken to say so) */
};


/*
 * Unstable writes of one dfile not yet committed (see OFS_WRITE_UNSTABLE).
 * A slot is taken and released under store.pend_mu; its contents are
 * read and changed only by a thread holding the object's lock
 * exclusively.
 */
struct pending {
	bool used;
	struct ofs_oid oid;
	uint64_t base;               /* the recorded size when it began */
	uint64_t end;                /* one past the last byte written */
	uint64_t first;              /* chunk index of base */
	size_t cap;                  /* entries in d and known */
	struct ofs_digest *d;        /* digest of chunk first + i */
	bool *known;                 /* d[i] is valid (else read back) */
	uint8_t *inl;                /* inline dfile: bytes [base, end) so far */
	size_t inl_cap;
	bool inl_mode;               /* (the bytes wait here, not in a stream) */
};

/* The wall clock in ns (mtimes). */
int64_t st_now_ns(void);
/* The per-object lock of oid. */
pthread_rwlock_t *st_obj_lock(struct store *s, struct ofs_oid oid);

static inline bool st_is_pow2(uint32_t v)
{
	return v && (v & (v - 1)) == 0;
}

/* An object's record in a transaction: 0, -ENOENT or -OFS_ECORRUPT. */
int st_get_object(struct kv_txn *t, struct ofs_oid oid, struct ofs_attr *a);
int st_put_object(struct kv_txn *t, struct ofs_oid oid, const struct ofs_attr *a);

/* Same OID and copies in the same order. */
bool st_same_handle(const struct ofs_handle *a, const struct ofs_handle *b);

/* Unstable writes (store_bytes.c): oid's slot or NULL; give a slot back.
 * Called with the object's lock held exclusively. */
struct pending *st_pending_find(struct store *s, struct ofs_oid oid);
void st_pending_drop(struct store *s, struct pending *p);

/*
 * Holes (docs/design.md, "Holes"): a chunk inside a dfile's size with no
 * digest record is a hole and reads as zeros. Where digests are read for
 * a range, a hole's is all zero bytes (st_is_hole; no XXH3-128 digest is
 * expected to be that). st_chunk_ok: n bytes b match d (a hole: all
 * zero). st_zero_digest: the digest of a whole chunk of cs zero bytes,
 * which a summary counts as a hole (so a copy with the record and one
 * without agree).
 */
/* Before the first hole is recorded: DATA/format moved to the format
 * that has holes (durably; a no-op once it has). */
int st_allow_holes(struct store *s);
struct ofs_digest st_zero_digest(uint32_t cs);
/* A chunk record (vn bytes at v) that is the digest of a whole chunk of
 * zeros, of any chunk size a store allows: a summary leaves it out, as it
 * leaves out a hole, and an incoming copy does not store it. */
bool st_zero_chunk_record(const void *v, size_t vn);
bool st_is_hole(const struct ofs_digest *d);
bool st_chunk_ok(const uint8_t *b, size_t n, const struct ofs_digest *d);

/* A dfile's record and the digests of chunks [first, last] in one view
 * (store_bytes.c); without want_digests, the record alone. A chunk inside
 * the size without a record is a hole (its digest all zero bytes). */
struct st_chunkview {
	struct ofs_oid oid;
	struct ofs_attr *a;
	uint64_t first, last;       /* in: wanted chunks (set after attr) */
	struct ofs_digest *digests; /* out: last-first+1 entries */
	bool want_digests;
	bool is_inline;             /* out: its bytes are in KV_INLINE */
};
int st_chunkview_txn(struct kv_txn *t, void *arg);

/* A write's commit (store_bytes.c): digests of chunks [first, first +
 * nchunks), the size if it grew, version + 1, mtime; with inl_set the
 * inline value becomes inl (inl_len bytes). */
struct st_write_args {
	struct ofs_oid oid;
	uint64_t first;              /* first chunk whose digest changes */
	uint64_t nchunks;            /* digests to store */
	struct ofs_digest *digests;
	bool has_edge;               /* and chunk edge's digest (a gap follows it) */
	uint64_t edge;
	struct ofs_digest edge_digest;
	uint64_t new_size;
	struct ofs_attr *a;          /* scratch; result */
	bool inl_set;
	const uint8_t *inl;
	size_t inl_len;
};
int st_write_txn(struct kv_txn *t, void *arg);

/* Inline dfiles (store_inline.c). In a transaction: the value (-ENOENT:
 * not inline), set it, delete it (none is fine). */
int st_inline_get(struct kv_txn *t, struct ofs_oid oid, const void **v, size_t *vn);
int st_inline_put(struct kv_txn *t, struct ofs_oid oid, const void *v, size_t vn);
int st_inline_del(struct kv_txn *t, struct ofs_oid oid);
/* A malloc'd copy of oid's inline bytes; -ENOENT when it has none. */
int st_inline_copy(struct store *s, struct ofs_oid oid, uint8_t **b, size_t *n);
/* Write [off, off+len) of inline dfile oid (recorded as a) and commit:
 * the recorded bytes must match their digests, the result must stay
 * within the limit (-EFBIG). The caller holds the lock exclusively. */
int st_inline_write(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
		    uint64_t off, const void *buf, size_t len, uint64_t *version,
		    uint64_t *size);
/* Move inline dfile oid to a byte stream (nothing when it is one). The
 * caller holds the lock exclusively. */
int st_promote(struct store *s, struct ofs_oid oid);
/* Keep oid's bytes aside in DATA/quarantine (either kind; none: nothing). */
int st_quarantine(struct store *s, struct ofs_oid oid, uint64_t version, const char *tag);

/* A dfile's bytes to read: its stream (fd), or a copy of its inline bytes
 * (fd -1). st_bytes_open: -ENOENT when it has neither. */
struct st_bytes {
	int fd;
	uint8_t *inl;
	size_t len;
};
int st_bytes_open(struct store *s, struct ofs_oid oid, bool rw, struct st_bytes *b);
int st_bytes_pread(const struct st_bytes *b, void *buf, size_t n, uint64_t off, size_t *got);
int st_bytes_close(struct st_bytes *b);

/* Finish or drop the installs a crash interrupted (store_incoming.c). */
int st_recover(struct store *s);

/* Digest of an object's content as recorded: its size, its chunk digests
 * (dfile; those of whole zero chunks left out: st_zero_chunk_record) and
 * its key-value part, in key order (store_walk.c). Fill oid,
 * a (scratch) and cs (a fresh stream); seq NULL or zeroed for a batch. */
struct st_summary_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
	struct checksum_stream *cs;
	bool dirdata, corrupt;
	bool chunks;                     /* (scanning chunk records) */
	struct kv_seq *seq;              /* many in OID order: [0] chunks, [1] key-values */
};
int st_summary_txn(struct kv_txn *t, void *arg);

#endif
