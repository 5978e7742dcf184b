/*
 * test_store_inline.c - small dfiles held in the key-value store
 * (store.h, store_set_inline_max): made without a byte stream; written
 * stable and unstable, read back and digested exactly as a stream copy of
 * the same bytes (the same summary, so copies of either kind compare
 * equal); moved to a stream when a write takes them past the limit, with
 * their bytes intact; a damaged or lost inline value found by reads and
 * scrub; copies fetched from a sibling installed inline when small (and a
 * stream they replace removed, the old bytes quarantined) or as a stream
 * when not; removal and removed-elsewhere drops leaving nothing; a small
 * file made whole (store_create_small: metafile, dfile and bytes in one
 * commit), made again by the same request, refused for another layout.
 *
 * Each test gets a fresh folder under /tmp with 4 KiB chunks (so a small
 * value spans several) and an inline limit of 16 KiB.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/checksum.h"
#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/store.h"

#define CS 4096u
#define LIMIT (16u << 10)

struct fixture {
	char dir[64];
	char data[96];
	char data2[96];
	struct store *s, *s2;
	struct ofs_sid sid;
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ofs-test-inline-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->data, sizeof(fx->data), "%s/a", fx->dir);
	snprintf(fx->data2, sizeof(fx->data2), "%s/b", fx->dir);
	if (store_init(fx->data, CS, NULL, 0, &fx->sid) || store_open(fx->data, false, &fx->s) ||
	    store_set_inline_max(fx->s, LIMIT)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	store_close(fx->s);
	store_close(fx->s2);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* A second store (the sibling), inline limit max. */
static struct store *second(struct fixture *fx, uint32_t max)
{
	struct ofs_sid sid;

	assert_int_equal(store_init(fx->data2, CS, NULL, 0, &sid), 0);
	assert_int_equal(store_open(fx->data2, false, &fx->s2), 0);
	assert_int_equal(store_set_inline_max(fx->s2, max), 0);
	return fx->s2;
}

static struct ofs_oid make_dfile_oid(struct store *s, struct ofs_oid want)
{
	struct ofs_attr a;
	struct ofs_oid oid;

	memset(&a, 0, sizeof(a));
	a.type = OFS_OBJ_DFILE;
	a.mode = 0644;
	assert_int_equal(store_create_oid(s, &a, want, &oid), 0);
	return oid;
}

static struct ofs_oid make_dfile(struct store *s)
{
	return make_dfile_oid(s, (struct ofs_oid){ { 0 } });
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static bool stream_exists(const char *data, struct ofs_oid oid)
{
	char p[BSTREAM_PATH_MAX];
	struct stat st;

	assert_int_equal(bstream_path(data, oid, p, sizeof(p)), 0);
	return stat(p, &st) == 0;
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* oid reads back as want (n bytes), and its digests are those of want. */
static void check_bytes(struct store *s, struct ofs_oid oid, const uint8_t *want, size_t n)
{
	uint8_t *b = malloc(n + 10);
	size_t got = 0;
	struct ofs_attr a;

	assert_non_null(b);
	assert_int_equal(store_read(s, oid, 0, b, n + 10, &got), 0);
	assert_int_equal(got, n);
	if (n)
		assert_memory_equal(b, want, n);
	assert_int_equal(store_getattr(s, oid, &a), 0);
	assert_true(a.size == n);
	free(b);
}

/* The summary two copies compare by (size, chunk digests, pairs). */
static struct ofs_digest digest_of(struct store *s, struct ofs_oid oid)
{
	struct ofs_summary sm;

	assert_int_equal(store_summary(s, oid, &sm), 0);
	return sm.digest;
}

/* ---- made and written inline ------------------------------------------- */

static void test_small_dfile_has_no_stream_and_reads_like_one(void **state)
{
	struct fixture *fx = *state;
	struct store *st = second(fx, 0);           /* the same bytes as a stream */
	struct ofs_oid oid = make_dfile(fx->s);
	uint8_t b[3 * CS + 100], one;
	uint64_t v, sz, v2, sz2;
	size_t got;

	make_dfile_oid(st, oid);
	assert_false(stream_exists(fx->data, oid));
	assert_int_equal(store_is_inline(fx->s, oid), 1);
	assert_true(stream_exists(fx->data2, oid));
	assert_int_equal(store_is_inline(st, oid), 0);
	check_bytes(fx->s, oid, b, 0);
	fill(b, sizeof(b), 1);
	/* Two writes, the second past the end (a gap of zeros between). */
	assert_int_equal(store_write(fx->s, oid, 0, b, 1000, &v, &sz), 0);
	assert_int_equal(store_write(st, oid, 0, b, 1000, &v2, &sz2), 0);
	memset(b + 1000, 0, 2000);
	assert_int_equal(store_write(fx->s, oid, 3000, b + 3000, sizeof(b) - 3000, &v, &sz), 0);
	assert_int_equal(store_write(st, oid, 3000, b + 3000, sizeof(b) - 3000, &v2, &sz2), 0);
	assert_true(v == 3 && v2 == 3 && sz == sizeof(b) && sz2 == sizeof(b));
	check_bytes(fx->s, oid, b, sizeof(b));
	assert_int_equal(store_is_inline(fx->s, oid), 1);
	assert_false(stream_exists(fx->data, oid));
	assert_true(digest_eq(digest_of(fx->s, oid), digest_of(st, oid)));
	/* An overwrite in the middle, and a read of part of a chunk. */
	fill(b + 5000, 300, 2);
	assert_int_equal(store_write(fx->s, oid, 5000, b + 5000, 300, &v, &sz), 0);
	check_bytes(fx->s, oid, b, sizeof(b));
	assert_int_equal(store_read(fx->s, oid, 4999, &one, 1, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(one, b[4999]);
	/* Durable across a reopen. */
	store_close(fx->s);
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	check_bytes(fx->s, oid, b, sizeof(b));
}

static void test_unstable_appends_wait_in_memory_until_commit(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid oid = make_dfile(fx->s);
	uint8_t b[10000];
	uint64_t v, sz;
	size_t got = 99;

	fill(b, sizeof(b), 3);
	assert_int_equal(store_write_unstable(fx->s, oid, 0, b, 6000, &v, &sz), 0);
	assert_int_equal(store_write_unstable(fx->s, oid, 6000, b + 6000, 4000, &v, &sz), 0);
	assert_true(sz == sizeof(b));
	/* Not visible before the COMMIT. */
	assert_int_equal(store_read(fx->s, oid, 0, b, 10, &got), 0);
	assert_int_equal(got, 0);
	fill(b, sizeof(b), 3);
	assert_int_equal(store_commit(fx->s, oid, &v, &sz), 0);
	assert_true(v == 2 && sz == sizeof(b));
	check_bytes(fx->s, oid, b, sizeof(b));
	assert_int_equal(store_is_inline(fx->s, oid), 1);
	assert_false(stream_exists(fx->data, oid));
}

/* ---- growing past the limit ------------------------------------------- */

static void test_stable_write_past_the_limit_moves_it_to_a_stream(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid oid = make_dfile(fx->s);
	size_t n = LIMIT + 5000;
	uint8_t *b = malloc(n);
	uint64_t v, sz;

	assert_non_null(b);
	fill(b, n, 4);
	assert_int_equal(store_write(fx->s, oid, 0, b, 7000, &v, &sz), 0);
	assert_int_equal(store_is_inline(fx->s, oid), 1);
	/* A stray stream a crash left beside the value is emptied first. */
	{
		char p[BSTREAM_PATH_MAX];
		int fd;
		assert_int_equal(bstream_create(fx->data, oid), 0);
		assert_int_equal(bstream_path(fx->data, oid, p, sizeof(p)), 0);
		fd = open(p, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "garbage, longer than the value is....", 37), 37);
		close(fd);
	}
	check_bytes(fx->s, oid, b, 7000);          /* (the value counts) */
	assert_int_equal(store_write(fx->s, oid, 7000, b + 7000, n - 7000, &v, &sz), 0);
	assert_true(v == 3 && sz == n);
	assert_int_equal(store_is_inline(fx->s, oid), 0);
	assert_true(stream_exists(fx->data, oid));
	check_bytes(fx->s, oid, b, n);
	free(b);
}

static void test_unstable_appends_past_the_limit_move_it_to_a_stream(void **state)
{
	struct fixture *fx = *state;
	struct store *st = second(fx, 0);
	struct ofs_oid oid = make_dfile(fx->s);
	size_t n = 3 * LIMIT;
	uint8_t *b = malloc(n);
	uint64_t v, sz;

	assert_non_null(b);
	make_dfile_oid(st, oid);
	fill(b, n, 5);
	/* 5000-byte appends: some wait in memory, then the move, then the
	 * rest go to the stream, all unstable until the COMMIT. */
	for (size_t off = 0; off < n; off += 5000) {
		size_t len = n - off < 5000 ? n - off : 5000;
		assert_int_equal(store_write_unstable(fx->s, oid, off, b + off, len, &v, &sz), 0);
		assert_int_equal(store_write_unstable(st, oid, off, b + off, len, &v, &sz), 0);
	}
	assert_int_equal(store_commit(fx->s, oid, &v, &sz), 0);
	assert_int_equal(store_commit(st, oid, &v, &sz), 0);
	assert_true(v == 2 && sz == n);
	assert_int_equal(store_is_inline(fx->s, oid), 0);
	check_bytes(fx->s, oid, b, n);
	assert_true(digest_eq(digest_of(fx->s, oid), digest_of(st, oid)));
	free(b);
}

/* ---- damage ------------------------------------------------------------- */

struct findings {
	int n;
	int kind[8];
};

static int found(int kind, const char *detail, void *arg)
{
	struct findings *f = arg;

	(void)detail;
	if (f->n < 8)
		f->kind[f->n++] = kind;
	return 0;
}

static void test_a_changed_byte_fails_reads_and_scrub_finds_it(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid oid = make_dfile(fx->s);
	uint8_t b[2 * CS + 10];
	struct findings f = { 0 };
	uint64_t v, sz, bytes;
	size_t got;

	fill(b, sizeof(b), 6);
	assert_int_equal(store_write(fx->s, oid, 0, b, sizeof(b), &v, &sz), 0);
	assert_int_equal(store_tool_flip_byte(fx->s, oid, CS + 1), 0);   /* (behind its digest) */
	assert_int_equal(store_read(fx->s, oid, CS, b, 10, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(fx->s, oid, 0, b, 10, &got), 0);   /* chunk 0 is fine */
	assert_int_equal(store_scrub_dfile(fx->s, oid, found, NULL, &f, &bytes), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.kind[0], OFS_FINDING_CHECKSUM_MISMATCH);
	assert_true(bytes == sizeof(b));
	/* A write never blesses the bad bytes: refused, nothing changed. */
	assert_int_equal(store_write(fx->s, oid, 5, b, 5, &v, &sz), -OFS_ECHECKSUM);
	assert_true(v == 2);
}

static void test_a_lost_value_is_a_missing_copy(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid oid = make_dfile(fx->s);
	uint8_t b[500];
	struct findings f = { 0 };
	uint64_t v, sz, bytes;
	size_t got;

	fill(b, sizeof(b), 7);
	assert_int_equal(store_write(fx->s, oid, 0, b, sizeof(b), &v, &sz), 0);
	assert_int_equal(store_tool_lose_bytes(fx->s, oid), 0);
	assert_int_equal(store_is_inline(fx->s, oid), 0);
	assert_int_equal(store_read(fx->s, oid, 0, b, 10, &got), -EIO);
	assert_int_equal(store_scrub_dfile(fx->s, oid, found, NULL, &f, &bytes), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.kind[0], OFS_FINDING_MISSING_REPLICA);
}

/* ---- copies from a sibling -------------------------------------------- */

/* Fetch src's copy of oid into dst and install it. */
static void fetch(struct store *src, struct store *dst, struct ofs_oid oid)
{
	struct store_incoming *in = NULL;
	struct ofs_attr a;
	uint8_t buf[CS];
	uint64_t off = 0;
	size_t got;

	assert_int_equal(store_getattr(src, oid, &a), 0);
	assert_int_equal(store_incoming_begin(dst, oid, &a, &in), 0);
	{
		struct store_incoming *in2 = NULL;       /* one fetch at a time */
		assert_int_equal(store_incoming_begin(dst, oid, &a, &in2), -EBUSY);
	}
	while (off < a.size) {
		assert_int_equal(store_read(src, oid, off, buf, sizeof(buf), &got), 0);
		assert_int_equal(store_incoming_write(in, buf, got), 0);
		off += got;
	}
	assert_int_equal(store_incoming_commit(in, "test"), 0);
	store_incoming_free(in);
}

static void test_small_copy_is_installed_inline_over_a_stream(void **state)
{
	struct fixture *fx = *state;
	struct store *st = second(fx, 0);
	struct ofs_oid oid = make_dfile(st);
	uint8_t b[9000], bad[9000];
	uint64_t v, sz;
	char q[160];

	fill(b, sizeof(b), 8);
	fill(bad, sizeof(bad), 9);
	assert_int_equal(store_write(st, oid, 0, b, sizeof(b), &v, &sz), 0);
	/* fx's copy: a stream, with other bytes (made while its limit was 0). */
	assert_int_equal(store_set_inline_max(fx->s, 0), 0);
	make_dfile_oid(fx->s, oid);
	assert_int_equal(store_write(fx->s, oid, 0, bad, sizeof(bad), &v, &sz), 0);
	assert_int_equal(store_set_inline_max(fx->s, LIMIT), 0);
	assert_true(stream_exists(fx->data, oid));
	fetch(st, fx->s, oid);
	assert_int_equal(store_is_inline(fx->s, oid), 1);
	assert_false(stream_exists(fx->data, oid));
	check_bytes(fx->s, oid, b, sizeof(b));
	assert_true(digest_eq(digest_of(fx->s, oid), digest_of(st, oid)));
	snprintf(q, sizeof(q), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(q), 1);                    /* the old bytes, kept */
	snprintf(q, sizeof(q), "%s/incoming", fx->data);
	assert_int_equal(count_dir(q), 0);
}

static void test_large_copy_replaces_an_inline_one_as_a_stream(void **state)
{
	struct fixture *fx = *state;
	struct store *st = second(fx, 0);
	struct ofs_oid oid = make_dfile(st);
	size_t n = LIMIT + 1;
	uint8_t *b = malloc(n), small[100];
	uint64_t v, sz;
	char q[160];

	assert_non_null(b);
	fill(b, n, 10);
	fill(small, sizeof(small), 11);
	assert_int_equal(store_write(st, oid, 0, b, n, &v, &sz), 0);
	make_dfile_oid(fx->s, oid);
	assert_int_equal(store_write(fx->s, oid, 0, small, sizeof(small), &v, &sz), 0);
	fetch(st, fx->s, oid);
	assert_int_equal(store_is_inline(fx->s, oid), 0);
	check_bytes(fx->s, oid, b, n);
	snprintf(q, sizeof(q), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(q), 1);                    /* the inline bytes, kept */
	/* Removed elsewhere: the copy goes, its bytes to quarantine. */
	assert_int_equal(store_drop_removed(fx->s, oid), 0);
	assert_int_equal(count_dir(q), 2);
	assert_false(stream_exists(fx->data, oid));
	free(b);
}

static void test_remove_and_drop_leave_nothing(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid a = make_dfile(fx->s), b = make_dfile(fx->s);
	uint8_t x[300];
	uint64_t v, sz;
	char q[160];

	fill(x, sizeof(x), 12);
	assert_int_equal(store_write(fx->s, a, 0, x, sizeof(x), &v, &sz), 0);
	assert_int_equal(store_write(fx->s, b, 0, x, sizeof(x), &v, &sz), 0);
	assert_int_equal(store_remove(fx->s, a), 0);
	assert_int_equal(store_is_inline(fx->s, a), 0);
	assert_int_equal(store_getattr(fx->s, a, &(struct ofs_attr){ 0 }), -ENOENT);
	assert_int_equal(store_drop_removed(fx->s, b), 0);
	assert_int_equal(store_is_inline(fx->s, b), 0);
	snprintf(q, sizeof(q), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(q), 1);                    /* b's bytes */
	snprintf(q, sizeof(q), "%s/bstreams", fx->data);
	assert_int_equal(count_dir(q), 0);
}

/* ---- a small file in one request ------------------------------------- */

static void small_attr(struct ofs_attr *a, struct ofs_sid sid, struct ofs_oid df, size_t n)
{
	memset(a, 0, sizeof(*a));
	a->type = OFS_OBJ_METAFILE;
	a->mode = 0640;
	a->uid = 7;
	a->gid = 8;
	a->backref.owner.b[0] = 0xd1;
	strcpy(a->backref.name, "small");
	strcpy(a->dist, "simple_stripe");
	a->strip_size = 1u << 20;
	a->replicas = 1;
	a->nsids = 1;
	a->sids[0] = sid;
	a->nparts = 1;
	a->parts[0].oid = df;
	a->parts[0].nsids = 1;
	a->parts[0].sids[0] = sid;
	a->size = n;
}

static void test_small_file_made_whole_in_one_commit(void **state)
{
	struct fixture *fx = *state;
	struct store *st = second(fx, 0);
	struct ofs_oid mf = { { 0x11 } }, df = { { 0x22 } }, ref;
	struct ofs_attr a, got;
	uint8_t b[3 * CS + 9];
	uint64_t v, sz;

	fill(b, sizeof(b), 13);
	small_attr(&a, fx->sid, df, sizeof(b));
	assert_int_equal(store_create_small(fx->s, mf, &a, b, sizeof(b)), 0);
	assert_int_equal(store_getattr(fx->s, mf, &got), 0);
	assert_int_equal(got.type, OFS_OBJ_METAFILE);
	assert_true(got.size == sizeof(b) && got.version == 1 && got.nparts == 1);
	assert_true(oid_eq(got.parts[0].oid, df));
	assert_int_equal(store_getattr(fx->s, df, &got), 0);
	assert_int_equal(got.type, OFS_OBJ_DFILE);
	assert_true(oid_eq(got.backref.owner, mf) && got.backref.stripe == 0);
	assert_true(got.mode == 0640 && got.uid == 7 && got.gid == 8);
	assert_int_equal(store_is_inline(fx->s, df), 1);
	assert_false(stream_exists(fx->data, df));
	check_bytes(fx->s, df, b, sizeof(b));
	/* The same bytes as a dfile made and written the usual way: the same
	 * content digest, so the copies compare equal. */
	ref = make_dfile_oid(st, df);
	assert_int_equal(store_write(st, ref, 0, b, sizeof(b), &v, &sz), 0);
	assert_true(digest_eq(digest_of(fx->s, df), digest_of(st, df)));
	/* Sent again (its primary died before it answered): done already.
	 * Another file with those OIDs: refused, nothing changed. */
	assert_int_equal(store_create_small(fx->s, mf, &a, b, sizeof(b)), 0);
	b[0] ^= 1;
	strcpy(a.backref.name, "other");
	assert_int_equal(store_create_small(fx->s, mf, &a, b, sizeof(b)), -EEXIST);
	b[0] ^= 1;
	check_bytes(fx->s, df, b, sizeof(b));
}

static void test_small_file_past_the_limit_gets_a_stream(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid mf = { { 0x31 } }, df = { { 0x32 } };
	struct ofs_attr a;
	size_t n = LIMIT + 10;
	uint8_t *b = malloc(n);

	assert_non_null(b);
	fill(b, n, 14);
	small_attr(&a, fx->sid, df, n);
	assert_int_equal(store_create_small(fx->s, mf, &a, b, n), 0);
	assert_int_equal(store_is_inline(fx->s, df), 0);
	assert_true(stream_exists(fx->data, df));
	check_bytes(fx->s, df, b, n);
	assert_int_equal(store_create_small(fx->s, mf, &a, b, n), 0);   /* sent again */
	check_bytes(fx->s, df, b, n);
	free(b);
}

static void test_small_file_refuses_another_layout(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid mf = { { 0x41 } }, df = { { 0x42 } };
	struct ofs_attr a;
	struct ofs_sid other = { { 0x99 } };

	small_attr(&a, fx->sid, df, 5);
	a.parts[0].sids[0] = other;               /* (its dfile elsewhere) */
	assert_int_equal(store_create_small(fx->s, mf, &a, "hello", 5), -EINVAL);
	small_attr(&a, fx->sid, df, 6);           /* (a size not the bytes') */
	assert_int_equal(store_create_small(fx->s, mf, &a, "hello", 5), -EINVAL);
	small_attr(&a, fx->sid, mf, 5);           /* (the dfile is the metafile) */
	assert_int_equal(store_create_small(fx->s, mf, &a, "hello", 5), -EINVAL);
	assert_int_equal(store_getattr(fx->s, mf, &a), -ENOENT);
	assert_int_equal(store_getattr(fx->s, df, &a), -ENOENT);
}

static void test_limit_is_bounded(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(store_set_inline_max(fx->s, STORE_INLINE_MAX_LIMIT + 1), -EINVAL);
	assert_int_equal(store_set_inline_max(fx->s, STORE_INLINE_MAX_LIMIT), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_small_dfile_has_no_stream_and_reads_like_one),
		T(test_unstable_appends_wait_in_memory_until_commit),
		T(test_stable_write_past_the_limit_moves_it_to_a_stream),
		T(test_unstable_appends_past_the_limit_move_it_to_a_stream),
		T(test_a_changed_byte_fails_reads_and_scrub_finds_it),
		T(test_a_lost_value_is_a_missing_copy),
		T(test_small_copy_is_installed_inline_over_a_stream),
		T(test_large_copy_replaces_an_inline_one_as_a_stream),
		T(test_remove_and_drop_leave_nothing),
		T(test_small_file_made_whole_in_one_commit),
		T(test_small_file_past_the_limit_gets_a_stream),
		T(test_small_file_refuses_another_layout),
		T(test_limit_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
