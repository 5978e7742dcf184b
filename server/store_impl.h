/*
 * store_impl.h - what the parts of the storage engine share. Private to
 * server/store*.c: everyone else uses store.h.
 *
 *   store.c           init, open and close; the root; the server table;
 *                     statistics; the helpers below
 *   store_object.c    objects and their attributes
 *   store_bytes.c     byte streams: reads, writes, unstable writes, COMMIT,
 *                     chunk digests, the scrub's reads
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
#include "server/kv.h"
#include "server/store.h"

#define STORE_NLOCKS 1024
#define STORE_PREFETCH_MIN (1u << 20)   /* reads this large prefetch the next */
#define STORE_MAX_PENDING 1024          /* objects with unstable writes */

struct store {
	char *datadir;                      /* owned */
	struct kv *kv;
	bool read_only;
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

/* Finish or drop the installs a crash interrupted (store_incoming.c). */
int st_recover(struct store *s);

/* Digest of an object's content as recorded: its size, its chunk digests
 * (dfile) and its key-value part, in key order (store_walk.c). Fill oid,
 * a (scratch) and cs (a fresh stream); seq NULL or zeroed for a batch. */
struct st_summary_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
	struct checksum_stream *cs;
	bool dirdata, corrupt;
	struct kv_seq *seq;              /* many in OID order: [0] chunks, [1] key-values */
};
int st_summary_txn(struct kv_txn *t, void *arg);

#endif
