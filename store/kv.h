/*
 * kv.h - the server's key-value store: one LMDB environment, named
 * sub-databases per record kind, and group commit.
 *
 * Only kv.c sees LMDB. Updates are functions run inside a write
 * transaction: kv_update() queues one and waits. A single writer thread
 * takes every queued update, runs them in one transaction (one failing
 * update does not undo the others: its own writes are put back from an
 * undo log, and only when that fails does the whole batch fail), commits
 * the batch once
 * (one fsync for all), and only then wakes the callers. So kv_update()
 * returning 0 means the update is durable, and N concurrent updates cost
 * one fsync, not N. Reads (kv_view) run in read-only transactions that
 * never wait for the writer.
 *
 * Values returned by kv_get/kv_scan point into LMDB's map and are valid
 * only inside the function given to kv_update/kv_view.
 */
#ifndef OFS_KV_H
#define OFS_KV_H

#include <stdbool.h>
#include <stddef.h>

enum kv_db {
	KV_OBJECTS,   /* OID -> object record (records.h) */
	KV_CHUNKS,    /* OID | chunk index (u64 BE) -> 16-byte digest */
	KV_KEYVAL,    /* OID | key -> value (user keys; dirents of a dirdata) */
	KV_META,      /* server-wide records: "sid", "root", "chunk_size", ... */
	KV_SERVERS,   /* SID -> server table entry */
	KV_STALE,     /* OID | SID -> why that copy is behind (text) */
	KV_INTENT,    /* OID -> "install DATA/incoming/OID" (a copy being swapped in) */
	KV_MOVES,     /* OID -> target SID: this server's copy is moving there */
	KV_CHANGES,   /* OID | version (u64 BE) -> the key it changed (changelog.h) */
	KV_INLINE,    /* OID -> a small dfile's bytes, held here instead of a stream */
	KV_NDB
};

struct kv;
struct kv_txn;

/*
 * Open (creating if create is set) the environment in directory path.
 * read_only opens for inspection beside a running server. A writable open
 * adds the sub-databases a newer version introduced (the first four must
 * exist); a read-only open sees those as empty. Returns 0, or -ENOENT (no
 * environment and !create), -OFS_ECORRUPT (not an LMDB environment of
 * ours), -errno.
 */
int kv_open(const char *path, bool create, bool read_only, struct kv **out);
/* Stop the writer after the queued updates and close. kv_close(NULL) is a
 * no-op. */
void kv_close(struct kv *kv);

typedef int (*kv_fn)(struct kv_txn *t, void *arg);

/* Run fn in a write transaction and return once it is durable. fn returns
 * 0 to keep its changes or a negative code to drop them (that code is
 * returned). -EROFS on a read-only store; -ENOSPC when the map is full. */
int kv_update(struct kv *kv, kv_fn fn, void *arg);
/* A test's fault: fn runs before every commit of kv_update's batches
 * (and may block there, as a stalled disk's sync would). Set once, before
 * the server serves; NULL: none. */
void kv_set_commit_hook(void (*fn)(void));
/* How long the batch being written now has been at it, in ms (0: none
 * under way): a commit whose sync hangs shows here. Thread-safe. */
int64_t kv_busy_ms(struct kv *kv);
/* Run fn in a read-only transaction; returns fn's result or -errno. */
int kv_view(struct kv *kv, kv_fn fn, void *arg);

/* 0 and the value, or -ENOENT. */
int kv_get(struct kv_txn *t, enum kv_db db, const void *k, size_t kn,
	   const void **v, size_t *vn);
/* -ENOSPC when the map is full, -EROFS in a view. */
int kv_put(struct kv_txn *t, enum kv_db db, const void *k, size_t kn,
	   const void *v, size_t vn);
/* 0 or -ENOENT. */
int kv_del(struct kv_txn *t, enum kv_db db, const void *k, size_t kn);

/*
 * Visit, in key order, the records whose key starts with prefix (pn bytes)
 * and is greater than after (an, 0 = from the start of the prefix). fn
 * returns 0 to go on, 1 to stop (kv_scan then returns 0), or a negative
 * code to stop with it. Deleting during a scan is not allowed; use
 * kv_del_prefix.
 */
typedef int (*kv_scan_fn)(const void *k, size_t kn, const void *v, size_t vn, void *arg);
int kv_scan(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn,
	    const void *after, size_t an, kv_scan_fn fn, void *arg);
/*
 * kv_scan of a prefix, for many prefixes asked in increasing key order in
 * one transaction (a sorted batch of OIDs): seq remembers the first key
 * after the last prefix's records, so a prefix that sorts before it has
 * none, and is answered without a lookup (most objects have no chunk
 * digests or key-value part to scan). A prefix asked out of order is
 * scanned the plain way. Zero seq before the first; it is valid only in
 * the transaction it was used in. Prefixes longer than KV_SEQ_KEY bytes
 * are scanned the plain way.
 */
#define KV_SEQ_KEY 64
struct kv_seq {
	unsigned char last[KV_SEQ_KEY];    /* the last prefix asked */
	size_t nlast;
	unsigned char next[KV_SEQ_KEY];    /* the first key after its records */
	size_t nnext;                      /* (its first KV_SEQ_KEY bytes) */
	bool valid, end;                   /* next is known; no key follows */
};
int kv_scan_seq(struct kv_txn *t, enum kv_db db, struct kv_seq *seq, const void *prefix,
		size_t pn, kv_scan_fn fn, void *arg);
/* How many records db holds (LMDB keeps the count: no walk). */
int kv_count(struct kv_txn *t, enum kv_db db, size_t *n);
/* Delete every record whose key starts with prefix. */
int kv_del_prefix(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn);

#endif
