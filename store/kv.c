/*
 * kv.c - LMDB with group commit (see kv.h). The only file that sees MDB_*.
 *
 * Lock: kv.mu guards the queue (head, tail), stop and every request's done
 * flag and rc. The writer thread holds no lock while it runs transactions.
 */
#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/ofs_error.h"
#include "lib/timefmt.h"
#include "store/kv.h"

#define KV_MAPSIZE ((size_t)256 << 30)   /* virtual; the file grows as used */
#define KV_MAXREADERS 4096               /* one per concurrent request */

static const char *db_names[KV_NDB] = { "objects", "chunks", "keyval", "meta",
					 "servers", "stale", "intents", "moves",
					 "changes", "inline" };
#define KV_NDB_V1 4     /* sub-databases every data dir has had */

struct kv_req {
	kv_fn fn;              /* the update */
	void *arg;
	int rc;                /* its result, valid once done */
	bool done;
	struct kv_req *next;   /* queue link */
};

static void (*commit_hook)(void);   /* kv_set_commit_hook: tests only */

void kv_set_commit_hook(void (*fn)(void))
{
	commit_hook = fn;
}

struct kv {
	MDB_env *env;
	MDB_dbi dbi[KV_NDB];
	bool present[KV_NDB];        /* false: absent from a read-only env */
	bool read_only;
	pthread_mutex_t mu;
	pthread_cond_t work;     /* signalled when the queue gains a request */
	pthread_cond_t done;     /* broadcast when a batch is finished */
	struct kv_req *head, *tail;  /* guarded by mu */
	bool stop;                   /* guarded by mu */
	bool writer_running;
	pthread_t writer;
	_Atomic int64_t batch_since_ns;  /* CLOCK_MONOTONIC its batch began (0: idle) */
};

int64_t kv_busy_ms(struct kv *kv)
{
	int64_t since = atomic_load(&kv->batch_since_ns);

	return since ? (time_mono_ns() - since) / 1000000 : 0;
}

struct kv_txn {
	struct kv *kv;
	MDB_txn *txn;
	bool rdonly;       /* a kv_view transaction */
	/* A view keeps one cursor per sub-database for its gets and scans:
	 * LMDB looks for a key on the cursor's current leaf page before it
	 * descends from the root, so lookups in key order (a batch of
	 * sorted OIDs) mostly cost one page search. busy: a scan is using
	 * it (a get or scan from inside that scan takes a cursor of its own). */
	MDB_cursor *cur[KV_NDB];
	bool busy[KV_NDB];
	/* An update that shares its batch's transaction logs what each of its
	 * writes replaced, newest first, so that its failure can undo them. */
	bool logging;
	struct undo *undo;
};

/* What one write replaced: the key's value before it (had: there was one). */
struct undo {
	struct undo *next;
	enum kv_db db;
	bool had;
	size_t kn, vn;
	unsigned char data[];    /* the key, then the old value */
};

static int mdb_to_ofs(int rc)
{
	switch (rc) {
	case MDB_SUCCESS: return 0;
	case MDB_NOTFOUND: return -ENOENT;
	case MDB_KEYEXIST: return -EEXIST;
	case MDB_MAP_FULL: return -ENOSPC;
	case MDB_TXN_FULL: return -ENOSPC;
	case MDB_READERS_FULL: return -EAGAIN;
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_VERSION_MISMATCH:
	case MDB_INCOMPATIBLE:
		return -OFS_ECORRUPT;
	case MDB_BAD_TXN: return -EIO;
	default:
		if (rc > 0 && rc < 4096)
			return -rc;
		return -EIO;
	}
}

/* Log what writing key k of db is about to replace (see struct kv_txn). */
static int push_undo(struct kv_txn *t, enum kv_db db, const void *k, size_t kn,
		     const void *old, size_t vn, bool had)
{
	struct undo *u;

	if (!t->logging)
		return 0;
	u = malloc(sizeof(*u) + kn + (had ? vn : 0));
	if (!u)
		return -ENOMEM;
	u->db = db;
	u->had = had;
	u->kn = kn;
	u->vn = had ? vn : 0;
	memcpy(u->data, k, kn);
	if (had && vn)
		memcpy(u->data + kn, old, vn);
	u->next = t->undo;
	t->undo = u;
	return 0;
}

static int note_undo(struct kv_txn *t, enum kv_db db, const void *k, size_t kn)
{
	MDB_val key = { kn, (void *)k }, val = { 0, NULL };
	int r;

	if (!t->logging)
		return 0;
	r = mdb_get(t->txn, t->kv->dbi[db], &key, &val);
	if (r && r != MDB_NOTFOUND)
		return mdb_to_ofs(r);
	return push_undo(t, db, k, kn, val.mv_data, val.mv_size, r == 0);
}

/* Put back what the logged writes replaced, newest first; drop the log.
 * Not 0: the transaction can no longer be trusted. */
static int undo_all(struct kv_txn *t, bool apply)
{
	int rc = 0;

	while (t->undo) {
		struct undo *u = t->undo;
		MDB_val key = { u->kn, u->data }, val = { u->vn, u->data + u->kn };
		int r = 0;

		t->undo = u->next;
		if (apply && !rc && u->had)
			r = mdb_put(t->txn, t->kv->dbi[u->db], &key, &val, 0);
		else if (apply && !rc)
			r = mdb_del(t->txn, t->kv->dbi[u->db], &key, NULL);
		if (r && r != MDB_NOTFOUND)
			rc = mdb_to_ofs(r);
		free(u);
	}
	return rc;
}

/*
 * One transaction for the whole batch, one commit (one fsync). Each update
 * runs in it directly, logging what its writes replace; an update that
 * fails has them put back, so the others' changes stand and its own do
 * not. (LMDB's nested transactions would do the same at about three
 * megabytes of fresh lists allocated and freed per update.) When putting
 * back fails (an LMDB error that poisons the transaction), the batch is
 * aborted and every update of it fails.
 */
static void run_batch(struct kv *kv, struct kv_req *batch)
{
	MDB_txn *txn = NULL;
	int rc = mdb_to_ofs(mdb_txn_begin(kv->env, NULL, 0, &txn));

	for (struct kv_req *r = batch; r && !rc; r = r->next) {
		struct kv_txn t;

		memset(&t, 0, sizeof(t));
		t.kv = kv;
		t.txn = txn;
		t.rdonly = false;
		t.logging = batch->next != NULL;   /* (alone: its failure aborts) */
		r->rc = r->fn(&t, r->arg);
		if (r->rc && !t.logging)
			rc = r->rc;
		else if (r->rc)
			rc = undo_all(&t, true);
		else
			undo_all(&t, false);
	}
	if (!rc && commit_hook)
		commit_hook();
	if (!rc)
		rc = mdb_to_ofs(mdb_txn_commit(txn));
	else if (txn)
		mdb_txn_abort(txn);
	if (rc) {
		for (struct kv_req *r = batch; r; r = r->next)
			if (r->rc == 0)
				r->rc = rc;
	}
}

static void *writer_main(void *arg)
{
	struct kv *kv = arg;

	pthread_mutex_lock(&kv->mu);
	for (;;) {
		struct kv_req *batch;

		while (!kv->head && !kv->stop)
			pthread_cond_wait(&kv->work, &kv->mu);
		if (!kv->head && kv->stop)
			break;
		batch = kv->head;
		kv->head = kv->tail = NULL;
		pthread_mutex_unlock(&kv->mu);

		atomic_store(&kv->batch_since_ns, time_mono_ns());
		run_batch(kv, batch);
		atomic_store(&kv->batch_since_ns, 0);

		pthread_mutex_lock(&kv->mu);
		for (struct kv_req *r = batch, *next; r; r = next) {
			next = r->next;
			r->done = true;
		}
		pthread_cond_broadcast(&kv->done);
	}
	pthread_mutex_unlock(&kv->mu);
	return NULL;
}

/*
 * The key order: LMDB's own (bytes compared as unsigned, a key that is a
 * prefix of another sorts first), eight bytes at a time. Keys here are
 * OIDs and OID prefixes, and a B-tree search compares many of them: this
 * spares a call to memcmp per compare. The order is the default one, so a
 * program that opens the store without it (bench/kvwalk) reads the same.
 */
static int key_cmp(const MDB_val *a, const MDB_val *b)
{
	const unsigned char *x = a->mv_data, *y = b->mv_data;
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;

	for (; n >= 8; n -= 8, x += 8, y += 8) {
		uint64_t u, v;
		memcpy(&u, x, 8);
		memcpy(&v, y, 8);
		if (u != v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			u = __builtin_bswap64(u);
			v = __builtin_bswap64(v);
#endif
			return u < v ? -1 : 1;
		}
	}
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

int kv_open(const char *path, bool create, bool read_only, struct kv **out)
{
	struct kv *kv;
	struct stat st;
	MDB_txn *txn = NULL;
	unsigned flags = MDB_NOTLS | (read_only ? MDB_RDONLY : 0);
	int rc;

	if (stat(path, &st) < 0) {
		if (errno != ENOENT || !create || read_only)
			return -errno;
		if (mkdir(path, 0700) < 0)
			return -errno;
	}
	kv = calloc(1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->read_only = read_only;
	pthread_mutex_init(&kv->mu, NULL);
	pthread_cond_init(&kv->work, NULL);
	pthread_cond_init(&kv->done, NULL);

	rc = mdb_to_ofs(mdb_env_create(&kv->env));
	if (rc)
		goto fail;
	if ((rc = mdb_to_ofs(mdb_env_set_maxdbs(kv->env, KV_NDB))) ||
	    (rc = mdb_to_ofs(mdb_env_set_mapsize(kv->env, KV_MAPSIZE))) ||
	    (rc = mdb_to_ofs(mdb_env_set_maxreaders(kv->env, KV_MAXREADERS))))
		goto fail;
	rc = mdb_env_open(kv->env, path, flags, 0600);   /* (data.mdb, lock.mdb) */
	if (rc) {
		rc = rc == ENOENT ? -ENOENT : mdb_to_ofs(rc);
		goto fail;
	}
	/* An existing store must have the original sub-databases; later
	 * ones are created by a writable open and seen empty otherwise. */
	rc = mdb_to_ofs(mdb_txn_begin(kv->env, NULL, read_only ? MDB_RDONLY : 0, &txn));
	if (rc)
		goto fail;
	for (int i = 0; i < KV_NDB && !rc; i++) {
		unsigned f = read_only || (!create && i < KV_NDB_V1) ? 0 : MDB_CREATE;
		int r = mdb_dbi_open(txn, db_names[i], f, &kv->dbi[i]);
		if (r == MDB_NOTFOUND && i >= KV_NDB_V1)
			continue;
		if (!r)
			r = mdb_set_compare(txn, kv->dbi[i], key_cmp);
		rc = r == MDB_NOTFOUND ? -OFS_ECORRUPT : mdb_to_ofs(r);
		kv->present[i] = rc == 0;
	}
	if (rc) {
		mdb_txn_abort(txn);
		goto fail;
	}
	rc = mdb_to_ofs(mdb_txn_commit(txn));
	if (rc)
		goto fail;
	if (!read_only) {
		if (pthread_create(&kv->writer, NULL, writer_main, kv) != 0) {
			rc = -EAGAIN;
			goto fail;
		}
		kv->writer_running = true;
	}
	*out = kv;
	return 0;
fail:
	if (kv->env)
		mdb_env_close(kv->env);
	pthread_cond_destroy(&kv->done);
	pthread_cond_destroy(&kv->work);
	pthread_mutex_destroy(&kv->mu);
	free(kv);
	return rc;
}

void kv_close(struct kv *kv)
{
	if (!kv)
		return;
	if (kv->writer_running) {
		pthread_mutex_lock(&kv->mu);
		kv->stop = true;
		pthread_cond_signal(&kv->work);
		pthread_mutex_unlock(&kv->mu);
		pthread_join(kv->writer, NULL);
	}
	mdb_env_close(kv->env);
	pthread_cond_destroy(&kv->done);
	pthread_cond_destroy(&kv->work);
	pthread_mutex_destroy(&kv->mu);
	free(kv);
}

int kv_update(struct kv *kv, kv_fn fn, void *arg)
{
	struct kv_req r = { .fn = fn, .arg = arg };

	if (kv->read_only)
		return -EROFS;
	pthread_mutex_lock(&kv->mu);
	if (kv->stop) {
		pthread_mutex_unlock(&kv->mu);
		return -ESHUTDOWN;
	}
	/* r lives on this stack until the writer marks it done, and this
	 * function does not return before that. */
	if (kv->tail)
		kv->tail->next = &r;
	else
		kv->head = &r; // cppcheck-suppress autoVariables
	kv->tail = &r; // cppcheck-suppress autoVariables
	pthread_cond_signal(&kv->work);
	while (!r.done)
		pthread_cond_wait(&kv->done, &kv->mu);
	pthread_mutex_unlock(&kv->mu);
	return r.rc;
}

int kv_view(struct kv *kv, kv_fn fn, void *arg)
{
	MDB_txn *txn;
	struct kv_txn t;
	int rc = mdb_to_ofs(mdb_txn_begin(kv->env, NULL, MDB_RDONLY, &txn));

	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	t.kv = kv;
	t.txn = txn;
	t.rdonly = true;
	rc = fn(&t, arg);
	for (int i = 0; i < KV_NDB; i++)
		if (t.cur[i])
			mdb_cursor_close(t.cur[i]);
	mdb_txn_abort(txn);
	return rc;
}

/* The view's own cursor on db, opened on first use; NULL when the
 * transaction writes, the cursor is busy, or it cannot be opened (the
 * caller then uses a cursor of its own, or mdb_get). */
static MDB_cursor *kept_cursor(struct kv_txn *t, enum kv_db db)
{
	if (!t->rdonly || t->busy[db])
		return NULL;
	if (!t->cur[db] && mdb_cursor_open(t->txn, t->kv->dbi[db], &t->cur[db]) != 0)
		t->cur[db] = NULL;
	return t->cur[db];
}

int kv_get(struct kv_txn *t, enum kv_db db, const void *k, size_t kn,
	   const void **v, size_t *vn)
{
	MDB_val key = { kn, (void *)k }, val;
	MDB_cursor *cur;
	int rc;

	if (!t->kv->present[db])
		return -ENOENT;
	cur = kept_cursor(t, db);
	if (cur)
		rc = mdb_to_ofs(mdb_cursor_get(cur, &key, &val, MDB_SET));
	else
		rc = mdb_to_ofs(mdb_get(t->txn, t->kv->dbi[db], &key, &val));
	if (rc)
		return rc;
	*v = val.mv_data;
	*vn = val.mv_size;
	return 0;
}

int kv_put(struct kv_txn *t, enum kv_db db, const void *k, size_t kn,
	   const void *v, size_t vn)
{
	MDB_val key = { kn, (void *)k }, val = { vn, (void *)v };

	int rc;

	if (t->kv->read_only || t->rdonly)
		return -EROFS;
	if ((rc = note_undo(t, db, k, kn)) != 0)
		return rc;
	return mdb_to_ofs(mdb_put(t->txn, t->kv->dbi[db], &key, &val, 0));
}

int kv_del(struct kv_txn *t, enum kv_db db, const void *k, size_t kn)
{
	MDB_val key = { kn, (void *)k };

	int rc;

	if (t->kv->read_only || t->rdonly)
		return -EROFS;
	if (!t->kv->present[db])
		return -ENOENT;
	if ((rc = note_undo(t, db, k, kn)) != 0)
		return rc;
	return mdb_to_ofs(mdb_del(t->txn, t->kv->dbi[db], &key, NULL));
}

static bool has_prefix(const MDB_val *k, const void *prefix, size_t pn)
{
	return pn == 0 || (k->mv_size >= pn && memcmp(k->mv_data, prefix, pn) == 0);
}

/* a < b in LMDB's default key order (bytes, then length). */
static bool key_less(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	return c < 0 || (c == 0 && an < bn);
}

static int scan(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn,
		const void *after, size_t an, kv_scan_fn fn, void *arg, struct kv_seq *seq);

int kv_scan(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn,
	    const void *after, size_t an, kv_scan_fn fn, void *arg)
{
	return scan(t, db, prefix, pn, after, an, fn, arg, NULL);
}

int kv_scan_seq(struct kv_txn *t, enum kv_db db, struct kv_seq *seq, const void *prefix,
		size_t pn, kv_scan_fn fn, void *arg)
{
	MDB_val nk = { seq->nnext, seq->next };

	if (pn == 0 || pn > KV_SEQ_KEY)
		return kv_scan(t, db, prefix, pn, NULL, 0, fn, arg);
	if (seq->valid && pn == seq->nlast && key_less(seq->last, pn, prefix, pn) &&
	    (seq->end || (key_less(prefix, pn, seq->next, seq->nnext) && !has_prefix(&nk, prefix, pn)))) {
		/* The keys from the last prefix up to next are that prefix's
		 * own; this one (as long, and after it) starts no key there,
		 * and next and what follows sort after all of its keys: none. */
		memcpy(seq->last, prefix, pn);
		seq->nlast = pn;
		return 0;
	}
	seq->valid = false;
	memcpy(seq->last, prefix, pn);
	seq->nlast = pn;
	return scan(t, db, prefix, pn, NULL, 0, fn, arg, seq);
}

static int scan(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn,
		const void *after, size_t an, kv_scan_fn fn, void *arg, struct kv_seq *seq)
{
	MDB_cursor *cur;
	bool own;
	MDB_val k, v;
	int rc = 0, r;

	if (!t->kv->present[db])
		return 0;
	cur = kept_cursor(t, db);
	own = cur == NULL;
	if (own)
		rc = mdb_to_ofs(mdb_cursor_open(t->txn, t->kv->dbi[db], &cur));
	if (rc)
		return rc;
	t->busy[db] |= !own;
	if (an && pn && key_less(after, an, prefix, pn)) {
		/* The cursor sorts before the prefix: start at the prefix. */
		an = 0;
	}
	if (an) {
		k.mv_size = an;
		k.mv_data = (void *)after;
		r = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		/* SET_RANGE lands on a key >= after; skip an exact match. */
		if (r == 0 && k.mv_size == an && memcmp(k.mv_data, after, an) == 0)
			r = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	} else if (pn) {
		k.mv_size = pn;
		k.mv_data = (void *)prefix;
		r = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	} else {
		r = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	}
	while (r == 0 && has_prefix(&k, prefix, pn)) {
		rc = fn(k.mv_data, k.mv_size, v.mv_data, v.mv_size, arg);
		if (rc)
			break;
		r = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	if (seq && rc == 0 && (r == 0 || r == MDB_NOTFOUND)) {
		/* where the prefix's records end: the next one's key, or none */
		seq->end = r == MDB_NOTFOUND;
		seq->nnext = 0;
		if (r == 0) {
			seq->nnext = k.mv_size < KV_SEQ_KEY ? k.mv_size : KV_SEQ_KEY;
			memcpy(seq->next, k.mv_data, seq->nnext);
		}
		seq->valid = true;
	}
	if (own)
		mdb_cursor_close(cur);
	else
		t->busy[db] = false;
	if (rc < 0)
		return rc;
	if (rc > 0)
		return 0;
	return r == MDB_NOTFOUND ? 0 : mdb_to_ofs(r);
}

int kv_count(struct kv_txn *t, enum kv_db db, size_t *n)
{
	MDB_stat st;
	int rc;

	*n = 0;
	if (!t->kv->present[db])
		return 0;
	rc = mdb_to_ofs(mdb_stat(t->txn, t->kv->dbi[db], &st));
	if (!rc)
		*n = st.ms_entries;
	return rc;
}

int kv_del_prefix(struct kv_txn *t, enum kv_db db, const void *prefix, size_t pn)
{
	MDB_cursor *cur;
	MDB_val k = { pn, (void *)prefix }, v;
	int rc, r;

	if (!t->kv->present[db])
		return 0;
	rc = mdb_to_ofs(mdb_cursor_open(t->txn, t->kv->dbi[db], &cur));
	if (rc)
		return rc;
	r = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (r == 0 && has_prefix(&k, prefix, pn)) {
		if ((rc = push_undo(t, db, k.mv_data, k.mv_size, v.mv_data, v.mv_size, true)) != 0) {
			mdb_cursor_close(cur);
			return rc;
		}
		r = mdb_cursor_del(cur, 0);
		if (r)
			break;
		/* After a delete, NEXT yields the record that followed it. */
		r = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	return r == MDB_NOTFOUND || r == 0 ? 0 : mdb_to_ofs(r);
}
