/*
 * test_kv.c - the LMDB wrapper: open and reopen, updates that commit or
 * leave nothing behind (also when failing and succeeding updates share a
 * group-commit batch), prefix scans with an after-cursor, prefix deletion,
 * and the refusals of a read-only environment.
 *
 * Each test gets a fresh folder under /tmp, removed in teardown.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "store/kv.h"

struct fixture {
	char dir[64];        /* the mkdtemp folder */
	char path[96];       /* dir/kv: the environment */
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ofs-test-kv-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/kv", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rm_rf(fx->dir);
	free(fx);
	return 0;
}

/* ---- update and view helpers ------------------------------------------ */

struct put_args {
	enum kv_db db;
	const char *k;
	const char *v;
	int ret;             /* returned after the put (0 keeps it) */
};

static int put_fn(struct kv_txn *t, void *arg)
{
	struct put_args *pa = arg;
	int rc = kv_put(t, pa->db, pa->k, strlen(pa->k), pa->v, strlen(pa->v));

	return rc ? rc : pa->ret;
}

static int put(struct kv *kv, enum kv_db db, const char *k, const char *v)
{
	struct put_args pa = { db, k, v, 0 };

	return kv_update(kv, put_fn, &pa);
}

struct get_args {
	enum kv_db db;
	const char *k;
	char v[256];
};

static int get_fn(struct kv_txn *t, void *arg)
{
	struct get_args *ga = arg;
	const void *v;
	size_t vn;
	int rc = kv_get(t, ga->db, ga->k, strlen(ga->k), &v, &vn);

	if (rc)
		return rc;
	if (vn >= sizeof(ga->v))
		return -E2BIG;
	memcpy(ga->v, v, vn);
	ga->v[vn] = '\0';
	return 0;
}

/* 0 and the value into out (256 bytes), or the error. */
static int get(struct kv *kv, enum kv_db db, const char *k, char *out)
{
	struct get_args ga = { .db = db, .k = k };
	int rc = kv_view(kv, get_fn, &ga);

	if (!rc && out)
		strcpy(out, ga.v);
	return rc;
}

/* Keys a scan visited, joined with ',' ("" for none). */
struct scan_args {
	enum kv_db db;
	const char *prefix;
	const char *after;       /* NULL: from the start */
	int stop_after;          /* return 1 after this many (0: never) */
	int count;
	char keys[1024];
};

static int scan_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct scan_args *sa = arg;
	size_t len = strlen(sa->keys);

	(void)v; (void)vn;
	if (len + kn + 2 > sizeof(sa->keys))
		return -E2BIG;
	if (len)
		sa->keys[len++] = ',';
	memcpy(sa->keys + len, k, kn);
	sa->keys[len + kn] = '\0';
	sa->count++;
	return sa->stop_after && sa->count == sa->stop_after ? 1 : 0;
}

static int scan_fn(struct kv_txn *t, void *arg)
{
	struct scan_args *sa = arg;

	return kv_scan(t, sa->db, sa->prefix, strlen(sa->prefix), sa->after,
		       sa->after ? strlen(sa->after) : 0, scan_visit, sa);
}

static const char *scan(struct kv *kv, struct scan_args *sa)
{
	sa->keys[0] = '\0';
	sa->count = 0;
	assert_int_equal(kv_view(kv, scan_fn, sa), 0);
	return sa->keys;
}

/* ---- key order ---------------------------------------------------------- */

/* Binary keys of 1..40 bytes, with shared prefixes and high bytes. */
#define ORDER_N 600
struct bin_keys {
	unsigned char k[ORDER_N][40];
	size_t n[ORDER_N];
	size_t seen;
	unsigned char last[40];
	size_t lastn;
	bool ordered;
};

/* LMDB's default order: memcmp over the shorter, then the shorter first. */
static int ref_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : (an > bn) - (an < bn);
}

static int put_bin_fn(struct kv_txn *t, void *arg)
{
	struct bin_keys *bk = arg;

	for (int i = 0; i < ORDER_N; i++) {
		int rc = kv_put(t, KV_KEYVAL, bk->k[i], bk->n[i], "v", 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int order_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct bin_keys *bk = arg;

	(void)v; (void)vn;
	if (kn > sizeof(bk->last))
		return -E2BIG;
	if (bk->seen && ref_cmp(bk->last, bk->lastn, k, kn) >= 0)
		bk->ordered = false;
	memcpy(bk->last, k, kn);
	bk->lastn = kn;
	bk->seen++;
	return 0;
}

static int order_scan_fn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_KEYVAL, NULL, 0, NULL, 0, order_visit, arg);
}

/* The store's key order (kv.c's eight-bytes-at-a-time compare) is LMDB's
 * default one, bytes unsigned and a prefix first, on keys that differ in
 * any byte of an 8-byte word, in the tail, or only in length. */
static void test_kv_key_order_is_lmdb_default(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct bin_keys *bk = calloc(1, sizeof(*bk));
	uint32_t x = 12345;
	size_t distinct = 0;

	assert_non_null(bk);
	for (int i = 0; i < ORDER_N; i++) {
		x = x * 1103515245u + 12345u;
		bk->n[i] = 1 + (x >> 8) % 40;
		for (size_t j = 0; j < bk->n[i]; j++) {
			x = x * 1103515245u + 12345u;
			/* few byte values: many shared prefixes */
			bk->k[i][j] = (unsigned char)((x >> 16) % 3 == 0 ? 0x80 + (x >> 20) % 3
									  : (x >> 20) % 2);
		}
	}
	for (int i = 0; i < ORDER_N; i++) {
		bool dup = false;
		for (int j = 0; j < i && !dup; j++)
			dup = ref_cmp(bk->k[i], bk->n[i], bk->k[j], bk->n[j]) == 0;
		distinct += !dup;
	}
	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(kv_update(kv, put_bin_fn, bk), 0);
	bk->ordered = true;
	assert_int_equal(kv_view(kv, order_scan_fn, bk), 0);
	assert_true(bk->ordered);
	assert_int_equal(bk->seen, distinct);
	kv_close(kv);
	free(bk);
}

/* ---- open ------------------------------------------------------------- */

static void test_kv_open_creates_and_reopens_with_data(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	char v[256];

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_non_null(kv);
	assert_int_equal(put(kv, KV_META, "sid", "one"), 0);
	assert_int_equal(put(kv, KV_OBJECTS, "sid", "other db"), 0);
	kv_close(kv);

	kv = NULL;
	assert_int_equal(kv_open(fx->path, false, false, &kv), 0);
	assert_int_equal(get(kv, KV_META, "sid", v), 0);
	assert_string_equal(v, "one");
	/* Sub-databases are separate key spaces. */
	assert_int_equal(get(kv, KV_OBJECTS, "sid", v), 0);
	assert_string_equal(v, "other db");
	assert_int_equal(get(kv, KV_CHUNKS, "sid", v), -ENOENT);
	kv_close(kv);
}

static void test_kv_open_missing_without_create_is_enoent(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct stat st;

	assert_int_equal(kv_open(fx->path, false, false, &kv), -ENOENT);
	assert_int_equal(kv_open(fx->path, false, true, &kv), -ENOENT);
	assert_null(kv);
	assert_int_equal(stat(fx->path, &st), -1);
}

static void test_kv_close_null_is_noop(void **state)
{
	(void)state;
	kv_close(NULL);
}

/* ---- updates ---------------------------------------------------------- */

static void test_kv_update_commits_and_returns_fn_result(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	char v[256];

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(put(kv, KV_KEYVAL, "a", "1"), 0);
	assert_int_equal(get(kv, KV_KEYVAL, "a", v), 0);
	assert_string_equal(v, "1");
	/* Overwrite. */
	assert_int_equal(put(kv, KV_KEYVAL, "a", "2"), 0);
	assert_int_equal(get(kv, KV_KEYVAL, "a", v), 0);
	assert_string_equal(v, "2");
	kv_close(kv);
}

/* A commit held in the test hook (as a stalled disk's sync would hold
 * it): kv_busy_ms grows while it waits and is 0 again once it is done. */
static volatile int hold_commit;

static void holding_hook(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 5 * 1000000L };

	while (hold_commit)
		nanosleep(&ts, NULL);
}

struct held_args {
	struct kv *kv;
	int rc;
};

static void *held_main(void *arg)
{
	struct held_args *pa = arg;

	pa->rc = put(pa->kv, KV_KEYVAL, "held", "1");
	return NULL;
}

static void test_kv_busy_ms_shows_a_held_commit(void **state)
{
	struct fixture *fx = *state;
	struct held_args pa = { 0 };
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000000L };
	pthread_t th;
	int i;

	assert_int_equal(kv_open(fx->path, true, false, &pa.kv), 0);
	assert_int_equal(kv_busy_ms(pa.kv), 0);
	hold_commit = 1;
	kv_set_commit_hook(holding_hook);
	assert_int_equal(pthread_create(&th, NULL, held_main, &pa), 0);
	for (i = 0; i < 1000 && kv_busy_ms(pa.kv) < 50; i++)     /* (10 s at most) */
		nanosleep(&ts, NULL);
	assert_true(kv_busy_ms(pa.kv) >= 50);
	hold_commit = 0;
	assert_int_equal(pthread_join(th, NULL), 0);
	kv_set_commit_hook(NULL);
	assert_int_equal(pa.rc, 0);
	assert_int_equal(kv_busy_ms(pa.kv), 0);
	kv_close(pa.kv);
}

static void test_kv_update_failing_fn_leaves_nothing(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct put_args bad = { KV_KEYVAL, "gone", "x", -EINVAL };
	struct put_args bad2 = { KV_KEYVAL, "keep", "changed", -OFS_ECORRUPT };
	char v[256];

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(put(kv, KV_KEYVAL, "keep", "orig"), 0);
	assert_int_equal(kv_update(kv, put_fn, &bad), -EINVAL);
	assert_int_equal(kv_update(kv, put_fn, &bad2), -OFS_ECORRUPT);
	assert_int_equal(get(kv, KV_KEYVAL, "gone", v), -ENOENT);
	assert_int_equal(get(kv, KV_KEYVAL, "keep", v), 0);
	assert_string_equal(v, "orig");
	kv_close(kv);
	/* Nor after a reopen. */
	assert_int_equal(kv_open(fx->path, false, false, &kv), 0);
	assert_int_equal(get(kv, KV_KEYVAL, "gone", v), -ENOENT);
	assert_int_equal(get(kv, KV_KEYVAL, "keep", v), 0);
	assert_string_equal(v, "orig");
	kv_close(kv);
}

#define MIX_THREADS 16
#define MIX_UPDATES 40

struct mix_thread {
	struct kv *kv;
	int id;
	int failures;        /* updates that did not return what was expected */
};

/* Update j of thread i puts key "t<i>-<j>" and fails when j is odd. */
static void *mix_main(void *arg)
{
	struct mix_thread *mt = arg;

	for (int j = 0; j < MIX_UPDATES; j++) {
		char k[32];
		struct put_args pa = { KV_KEYVAL, k, "v", (j & 1) ? -EINVAL : 0 };
		int rc;

		snprintf(k, sizeof(k), "t%02d-%03d", mt->id, j);
		rc = kv_update(mt->kv, put_fn, &pa);
		if (rc != pa.ret)
			mt->failures++;
	}
	return NULL;
}

static int count_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	char key[32];
	int id, j;

	(void)v; (void)vn;
	if (kn >= sizeof(key))
		return -E2BIG;
	memcpy(key, k, kn);
	key[kn] = '\0';
	if (sscanf(key, "t%d-%d", &id, &j) != 2 || (j & 1))
		return -EINVAL;    /* a failed update's key survived */
	(*(int *)arg)++;
	return 0;
}

static int count_fn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_KEYVAL, "t", 1, NULL, 0, count_visit, arg);
}

static void test_kv_update_failures_in_a_batch_do_not_undo_successes(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	pthread_t th[MIX_THREADS];
	struct mix_thread mt[MIX_THREADS];
	int n = 0;

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	for (int i = 0; i < MIX_THREADS; i++) {
		mt[i] = (struct mix_thread){ .kv = kv, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, mix_main, &mt[i]), 0);
	}
	for (int i = 0; i < MIX_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(mt[i].failures, 0);
	}
	/* Exactly the successful keys, and every one of them. */
	assert_int_equal(kv_view(kv, count_fn, &n), 0);
	assert_int_equal(n, MIX_THREADS * MIX_UPDATES / 2);
	for (int i = 0; i < MIX_THREADS; i++) {
		for (int j = 0; j < MIX_UPDATES; j++) {
			char k[32];

			snprintf(k, sizeof(k), "t%02d-%03d", i, j);
			assert_int_equal(get(kv, KV_KEYVAL, k, NULL), (j & 1) ? -ENOENT : 0);
		}
	}
	kv_close(kv);
	/* Durable: the same after a reopen. */
	n = 0;
	assert_int_equal(kv_open(fx->path, false, false, &kv), 0);
	assert_int_equal(kv_view(kv, count_fn, &n), 0);
	assert_int_equal(n, MIX_THREADS * MIX_UPDATES / 2);
	kv_close(kv);
}

/*
 * Thread i's update j writes its own keys "u<i>-<j>-*": overwrites
 * "-keep" (made before), deletes "-gone" and every "-p*" (a prefix),
 * adds "-new", and then fails when j is odd. A failed update must leave
 * every one of those as it was, whatever else its batch held.
 */
struct undo_args {
	int i, j;
	bool fail;
};

static int undo_fn(struct kv_txn *t, void *arg)
{
	struct undo_args *ua = arg;
	char k[48], p[48];
	int rc;

	snprintf(k, sizeof(k), "u%02d-%03d-keep", ua->i, ua->j);
	if ((rc = kv_put(t, KV_KEYVAL, k, strlen(k), "changed", 7)) != 0)
		return rc;
	snprintf(k, sizeof(k), "u%02d-%03d-gone", ua->i, ua->j);
	if ((rc = kv_del(t, KV_KEYVAL, k, strlen(k))) != 0)
		return rc;
	snprintf(p, sizeof(p), "u%02d-%03d-p", ua->i, ua->j);
	if ((rc = kv_del_prefix(t, KV_KEYVAL, p, strlen(p))) != 0)
		return rc;
	snprintf(k, sizeof(k), "u%02d-%03d-new", ua->i, ua->j);
	if ((rc = kv_put(t, KV_KEYVAL, k, strlen(k), "new", 3)) != 0)
		return rc;
	/* the same key twice: undone to the first value, not the second */
	snprintf(k, sizeof(k), "u%02d-%03d-keep", ua->i, ua->j);
	if ((rc = kv_put(t, KV_KEYVAL, k, strlen(k), "twice", 5)) != 0)
		return rc;
	return ua->fail ? -EINVAL : 0;
}

static void *undo_main(void *arg)
{
	struct mix_thread *mt = arg;

	for (int j = 0; j < MIX_UPDATES; j++) {
		struct undo_args ua = { mt->id, j, (j & 1) != 0 };
		if (kv_update(mt->kv, undo_fn, &ua) != (ua.fail ? -EINVAL : 0))
			mt->failures++;
	}
	return NULL;
}

static void test_kv_failed_update_in_a_batch_has_every_write_undone(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	pthread_t th[MIX_THREADS];
	struct mix_thread mt[MIX_THREADS];
	char k[48], v[256];

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	for (int i = 0; i < MIX_THREADS; i++) {
		for (int j = 0; j < MIX_UPDATES; j++) {
			const char *sfx[] = { "keep", "gone", "p1", "p2" };
			for (size_t x = 0; x < 4; x++) {
				snprintf(k, sizeof(k), "u%02d-%03d-%s", i, j, sfx[x]);
				assert_int_equal(put(kv, KV_KEYVAL, k, "orig"), 0);
			}
		}
	}
	for (int i = 0; i < MIX_THREADS; i++) {
		mt[i] = (struct mix_thread){ .kv = kv, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, undo_main, &mt[i]), 0);
	}
	for (int i = 0; i < MIX_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(mt[i].failures, 0);
	}
	for (int i = 0; i < MIX_THREADS; i++) {
		for (int j = 0; j < MIX_UPDATES; j++) {
			bool failed = (j & 1) != 0;
			snprintf(k, sizeof(k), "u%02d-%03d-keep", i, j);
			assert_int_equal(get(kv, KV_KEYVAL, k, v), 0);
			assert_string_equal(v, failed ? "orig" : "twice");
			snprintf(k, sizeof(k), "u%02d-%03d-gone", i, j);
			assert_int_equal(get(kv, KV_KEYVAL, k, v), failed ? 0 : -ENOENT);
			snprintf(k, sizeof(k), "u%02d-%03d-p2", i, j);
			assert_int_equal(get(kv, KV_KEYVAL, k, v), failed ? 0 : -ENOENT);
			snprintf(k, sizeof(k), "u%02d-%03d-new", i, j);
			assert_int_equal(get(kv, KV_KEYVAL, k, v), failed ? -ENOENT : 0);
		}
	}
	kv_close(kv);
}

static int del_fn(struct kv_txn *t, void *arg)
{
	return kv_del(t, KV_KEYVAL, arg, strlen(arg));
}

static void test_kv_del_removes_and_missing_is_enoent(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(put(kv, KV_KEYVAL, "x", "1"), 0);
	assert_int_equal(kv_update(kv, del_fn, "x"), 0);
	assert_int_equal(get(kv, KV_KEYVAL, "x", NULL), -ENOENT);
	assert_int_equal(kv_update(kv, del_fn, "x"), -ENOENT);
	kv_close(kv);
}

/* ---- scans -------------------------------------------------------------- */

static void fill_scan_keys(struct kv *kv)
{
	static const char *keys[] = { "a", "ab", "ab1", "ab2", "abc", "ab\xff", "ac", "b", "aa" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(put(kv, KV_KEYVAL, keys[i], "v"), 0);
	/* The same keys in another sub-database must not show. */
	assert_int_equal(put(kv, KV_CHUNKS, "ab0", "v"), 0);
}

static void test_kv_scan_visits_prefix_in_key_order(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "ab" };

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_string_equal(scan(kv, &sa), "ab,ab1,ab2,abc,ab\xff");
	sa.prefix = "a";
	assert_string_equal(scan(kv, &sa), "a,aa,ab,ab1,ab2,abc,ab\xff,ac");
	sa.prefix = "";
	assert_string_equal(scan(kv, &sa), "a,aa,ab,ab1,ab2,abc,ab\xff,ac,b");
	sa.prefix = "zz";
	assert_string_equal(scan(kv, &sa), "");
	sa.prefix = "ab";
	sa.db = KV_CHUNKS;
	assert_string_equal(scan(kv, &sa), "ab0");
	kv_close(kv);
}

static void test_kv_scan_after_cursor_skips_to_greater_keys(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "ab" };

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	/* An existing key is skipped itself. */
	sa.after = "ab1";
	assert_string_equal(scan(kv, &sa), "ab2,abc,ab\xff");
	/* A key between existing ones. */
	sa.after = "ab10";
	assert_string_equal(scan(kv, &sa), "ab2,abc,ab\xff");
	/* The last key: nothing follows. */
	sa.after = "ab\xff";
	assert_string_equal(scan(kv, &sa), "");
	/* Past the prefix: nothing, never keys outside it. */
	sa.after = "ac";
	assert_string_equal(scan(kv, &sa), "");
	/* The prefix itself as cursor skips the key equal to it. */
	sa.after = "ab";
	assert_string_equal(scan(kv, &sa), "ab1,ab2,abc,ab\xff");
	kv_close(kv);
}

static void test_kv_scan_after_cursor_below_prefix_visits_whole_prefix(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "ab" };

	/* kv.h: the records that start with prefix and are greater than
	 * after; every "ab..." key is greater than "a" and than "aa". */
	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	sa.after = "aa";
	assert_string_equal(scan(kv, &sa), "ab,ab1,ab2,abc,ab\xff");
	sa.after = "a";
	assert_string_equal(scan(kv, &sa), "ab,ab1,ab2,abc,ab\xff");
	kv_close(kv);
}

static void test_kv_scan_stops_when_fn_returns_one(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "a", .stop_after = 2 };

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_string_equal(scan(kv, &sa), "a,aa");
	assert_int_equal(sa.count, 2);
	kv_close(kv);
}

static int fail_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	(*(int *)arg)++;
	return -ENOSPC;
}

static int fail_scan_fn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_KEYVAL, "a", 1, NULL, 0, fail_visit, arg);
}

static void test_kv_scan_returns_fn_error(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	int calls = 0;

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_int_equal(kv_view(kv, fail_scan_fn, &calls), -ENOSPC);
	assert_int_equal(calls, 1);
	kv_close(kv);
}

static int del_prefix_fn(struct kv_txn *t, void *arg)
{
	return kv_del_prefix(t, KV_KEYVAL, arg, strlen(arg));
}

static void test_kv_del_prefix_removes_exactly_the_prefix(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "" };

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_int_equal(kv_update(kv, del_prefix_fn, "ab"), 0);
	assert_string_equal(scan(kv, &sa), "a,aa,ac,b");
	/* Other sub-databases are untouched. */
	sa.db = KV_CHUNKS;
	assert_string_equal(scan(kv, &sa), "ab0");
	/* A prefix matching nothing is not an error. */
	assert_int_equal(kv_update(kv, del_prefix_fn, "zz"), 0);
	sa.db = KV_KEYVAL;
	assert_string_equal(scan(kv, &sa), "a,aa,ac,b");
	/* The last keys of the database. */
	assert_int_equal(kv_update(kv, del_prefix_fn, "b"), 0);
	assert_string_equal(scan(kv, &sa), "a,aa,ac");
	kv_close(kv);
}

static int fill_many_fn(struct kv_txn *t, void *arg)
{
	int n = *(int *)arg;

	for (int i = 0; i < n; i++) {
		char k[16];
		int rc;

		snprintf(k, sizeof(k), "p%05d", i);
		rc = kv_put(t, KV_KEYVAL, k, strlen(k), "v", 1);
		if (rc)
			return rc;
	}
	return 0;
}

static void test_kv_del_prefix_over_many_keys(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct scan_args sa = { .db = KV_KEYVAL, .prefix = "" };
	int n = 5000;

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(put(kv, KV_KEYVAL, "o", "before"), 0);
	assert_int_equal(put(kv, KV_KEYVAL, "q", "after"), 0);
	assert_int_equal(kv_update(kv, fill_many_fn, &n), 0);
	assert_int_equal(kv_update(kv, del_prefix_fn, "p"), 0);
	assert_string_equal(scan(kv, &sa), "o,q");
	kv_close(kv);
}

/* ---- read-only ---------------------------------------------------------- */

static int put_in_view_fn(struct kv_txn *t, void *arg)
{
	(void)arg;
	return kv_put(t, KV_KEYVAL, "k", 1, "v", 1);
}

static void test_kv_read_only_open_cannot_update(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL, *ro = NULL;
	char v[256];

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(put(kv, KV_META, "x", "1"), 0);
	kv_close(kv);

	assert_int_equal(kv_open(fx->path, false, true, &ro), 0);
	assert_int_equal(put(ro, KV_META, "y", "2"), -EROFS);
	assert_int_equal(kv_view(ro, put_in_view_fn, NULL), -EROFS);
	assert_int_equal(get(ro, KV_META, "x", v), 0);
	assert_string_equal(v, "1");
	assert_int_equal(get(ro, KV_META, "y", v), -ENOENT);
	kv_close(ro);
}

static void test_kv_put_in_view_of_writable_env_is_erofs(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;

	/* kv.h: kv_put returns -EROFS in a view. */
	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	assert_int_equal(kv_view(kv, put_in_view_fn, NULL), -EROFS);
	assert_int_equal(get(kv, KV_KEYVAL, "k", NULL), -ENOENT);
	kv_close(kv);
}

static int count_scan_all(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	(*(int *)arg)++;
	return 0;
}

static int scan_all_fn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_KEYVAL, NULL, 0, NULL, 0, count_scan_all, arg);
}

static void test_kv_scan_without_prefix_visits_everything(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	int n = 0;

	/* No prefix (NULL, 0), as store.c's whole-table scans pass it. */
	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_int_equal(kv_view(kv, scan_all_fn, &n), 0);
	assert_int_equal(n, 9);
	kv_close(kv);
}

/* Inside a scan of KV_KEYVAL, a get and a whole nested scan of the same
 * sub-database (the view's kept cursor is busy: they take their own), and
 * gets before and after it (on the kept cursor, out of key order). */
struct nested_args {
	struct kv_txn *t;
	struct scan_args sa;     /* the outer scan's keys (scan_visit) */
	int inner, gets;
};

static int nested_count_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	(*(int *)arg)++;
	return 0;
}

static int nested_visit(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct nested_args *na = arg;
	const void *gv;
	size_t gvn;
	int rc = scan_visit(k, kn, v, vn, &na->sa);

	if (rc)
		return rc;
	if (kv_get(na->t, KV_KEYVAL, "b", 1, &gv, &gvn) == 0 && gvn == 1)
		na->gets++;
	return kv_scan(na->t, KV_KEYVAL, NULL, 0, NULL, 0, nested_count_visit, &na->inner);
}

static int nested_fn(struct kv_txn *t, void *arg)
{
	struct nested_args *na = arg;
	const void *v;
	size_t vn;
	int rc;

	na->t = t;
	if (kv_get(t, KV_KEYVAL, "b", 1, &v, &vn) != 0 || kv_get(t, KV_KEYVAL, "a", 1, &v, &vn) != 0)
		return -EIO;
	if (kv_get(t, KV_KEYVAL, "zz", 2, &v, &vn) != -ENOENT)
		return -EIO;
	rc = kv_scan(t, KV_KEYVAL, "ab", 2, NULL, 0, nested_visit, na);
	if (!rc && (kv_get(t, KV_KEYVAL, "ac", 2, &v, &vn) != 0 || vn != 1))
		rc = -EIO;
	return rc;
}

static int kv_count_fn(struct kv_txn *t, void *arg)
{
	size_t *n = arg;
	int rc = kv_count(t, KV_KEYVAL, &n[0]);

	return rc ? rc : kv_count(t, KV_CHUNKS, &n[1]);
}

static void test_kv_gets_and_scans_inside_a_scan_of_the_same_db(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	struct nested_args na = { 0 };
	size_t n[2] = { 0, 0 };

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	fill_scan_keys(kv);
	assert_int_equal(kv_view(kv, nested_fn, &na), 0);
	assert_string_equal(na.sa.keys, "ab,ab1,ab2,abc,ab\xff");   /* the outer scan is whole */
	assert_int_equal(na.sa.count, 5);
	assert_int_equal(na.gets, 5);
	assert_int_equal(na.inner, 5 * 9);                       /* each nested scan too */
	assert_int_equal(kv_view(kv, kv_count_fn, n), 0);
	assert_int_equal(n[0], 9);                               /* kv_count */
	assert_int_equal(n[1], 1);
	kv_close(kv);
}

/* kv_scan_seq over prefixes in key order (and some not) visits exactly
 * what kv_scan of each prefix visits. */
static int seq_fn(struct kv_txn *t, void *arg)
{
	static const char *ask[] = { "b0", "b1", "b2", "b3", "b3", "b4", "b5", "b7", "b3", "b8",
				     "b9", "a", "b7" };
	static const int want[] = { 0, 1, 0, 2, 2, 0, 0, 1, 2, 0, 0, 0, 1 };
	struct kv_seq seq;
	int *bad = arg;

	memset(&seq, 0, sizeof(seq));
	for (size_t i = 0; i < sizeof(ask) / sizeof(ask[0]); i++) {
		int n = 0, m = 0;
		size_t pn = strlen(ask[i]);
		if (kv_scan_seq(t, KV_KEYVAL, &seq, ask[i], pn, nested_count_visit, &n) != 0 ||
		    kv_scan(t, KV_KEYVAL, ask[i], pn, NULL, 0, nested_count_visit, &m) != 0)
			return -EIO;
		/* ("a" is a prefix of none of these keys: 0 by the table) */
		if (n != m || (pn == 2 && n != want[i]))
			(*bad)++;
	}
	return 0;
}

static void test_kv_scan_seq_agrees_with_kv_scan(void **state)
{
	struct fixture *fx = *state;
	struct kv *kv = NULL;
	static const char *keys[] = { "b1x", "b3y", "b3z", "b7q", "c" };
	int bad = 0;

	assert_int_equal(kv_open(fx->path, true, false, &kv), 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(put(kv, KV_KEYVAL, keys[i], "v"), 0);
	assert_int_equal(kv_view(kv, seq_fn, &bad), 0);
	assert_int_equal(bad, 0);
	kv_close(kv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kv_open_creates_and_reopens_with_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_open_missing_without_create_is_enoent, setup, teardown),
		cmocka_unit_test(test_kv_close_null_is_noop),
		cmocka_unit_test_setup_teardown(test_kv_busy_ms_shows_a_held_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_update_commits_and_returns_fn_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_update_failing_fn_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_update_failures_in_a_batch_do_not_undo_successes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_failed_update_in_a_batch_has_every_write_undone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_del_removes_and_missing_is_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_gets_and_scans_inside_a_scan_of_the_same_db, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_seq_agrees_with_kv_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_visits_prefix_in_key_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_after_cursor_skips_to_greater_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_after_cursor_below_prefix_visits_whole_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_stops_when_fn_returns_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_scan_returns_fn_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_del_prefix_removes_exactly_the_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_del_prefix_over_many_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_read_only_open_cannot_update, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_put_in_view_of_writable_env_is_erofs, setup, teardown),
		/* Last: under UBSan a failure here ends the program. */
		cmocka_unit_test_setup_teardown(test_kv_scan_without_prefix_visits_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_key_order_is_lmdb_default, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
