/*
 * test_store.c - the storage engine against its contract in store.h:
 * init and open of data dirs, objects of every type with their back
 * references, chunk digests after every shape of write (compared with
 * digests computed here from an independent image of the bytes), reads
 * that verify, detect damage and stop at the end, type checks, removal,
 * directory entries and key-value parts, durability across a reopen,
 * concurrent writers (group commit), and injected I/O failures through
 * the bstream ops table that must leave objects as they were.
 *
 * Each test gets a fresh folder under /tmp (removed in teardown), a data
 * dir in it with the smallest chunk size (4 KiB) so that small writes
 * cross chunks, and the real I/O ops restored afterwards.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "lib/checksum.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "backref/points.h"
#include "store/bstream.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"

#define CS 4096u     /* the chunk size of every test store */

struct fixture {
	char dir[64];            /* the mkdtemp folder */
	char data[96];           /* dir/data: the data dir */
	struct store *s;         /* open store, closed in teardown */
	struct ofs_sid sid;      /* from store_init */
};

/* ---- files ------------------------------------------------------------- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int nfiles;

static int count_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p; (void)st; (void)f;
	if (flag == FTW_F)
		nfiles++;
	return 0;
}

/* Regular files under DATA/bstreams. */
static int count_streams(const struct fixture *fx)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/bstreams", fx->data);
	nfiles = 0;
	assert_int_equal(nftw(p, count_one, 16, FTW_PHYS), 0);
	return nfiles;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ofs-test-store-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->data, sizeof(fx->data), "%s/data", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	bstream_ops_reset();
	store_close(fx->s);
	rm_rf(fx->dir);
	free(fx);
	return 0;
}

/* Init a data dir with 4 KiB chunks and open it writable into fx->s. */
static struct store *open_new(struct fixture *fx)
{
	assert_int_equal(store_init(fx->data, CS, NULL, 0, &fx->sid), 0);
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	/* (byte streams: inline dfiles have test_store_inline.c) */
	assert_int_equal(store_set_inline_max(fx->s, 0), 0);
	return fx->s;
}

static void reopen(struct fixture *fx)
{
	store_close(fx->s);
	fx->s = NULL;
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	assert_int_equal(store_set_inline_max(fx->s, 0), 0);
}

/* ---- objects ------------------------------------------------------------- */

static struct ofs_oid mk_oid(uint8_t seed)
{
	struct ofs_oid o;

	for (int i = 0; i < OFS_OID_LEN; i++)
		o.b[i] = (uint8_t)(seed * 3 + i + 1);
	return o;
}

static struct ofs_sid mk_sid(uint8_t seed)
{
	struct ofs_sid s;

	for (int i = 0; i < OFS_OID_LEN; i++)
		s.b[i] = (uint8_t)(seed * 5 + i + 2);
	return s;
}

static struct ofs_oid create_type(struct store *s, uint8_t type)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_oid oid;

	assert_non_null(a);
	a->type = type;
	a->mode = 0644;
	assert_int_equal(store_create(s, a, &oid), 0);
	free(a);
	return oid;
}

static struct ofs_oid create_dfile(struct store *s)
{
	return create_type(s, OFS_OBJ_DFILE);
}

static void getattr(struct store *s, struct ofs_oid oid, struct ofs_attr *a)
{
	assert_int_equal(store_getattr(s, oid, a), 0);
}

static uint64_t version_of(struct store *s, struct ofs_oid oid)
{
	struct ofs_attr a;

	getattr(s, oid, &a);
	return a.version;
}

/* ---- an independent image of a dfile's bytes ----------------------------- */

struct image {
	uint8_t *b;
	size_t size;
};

static void image_write(struct image *im, uint64_t off, const void *buf, size_t len)
{
	size_t end = (size_t)off + len;

	if (end > im->size) {
		im->b = realloc(im->b, end);
		assert_non_null(im->b);
		memset(im->b + im->size, 0, end - im->size);
		im->size = end;
	}
	memcpy(im->b + off, buf, len);
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

/* Write len pseudo-random bytes (seeded) at off to both the store and the
 * image, and check the version rose by exactly one and the size. */
static void write_both(struct store *s, struct ofs_oid oid, struct image *im,
		       uint64_t off, size_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len);
	uint64_t before = version_of(s, oid), v = 0, sz = 0;
	struct ofs_attr a;

	assert_non_null(buf);
	fill(buf, len, seed);
	assert_int_equal(store_write(s, oid, off, buf, len, &v, &sz), 0);
	image_write(im, off, buf, len);
	assert_true(v == before + 1);
	assert_true(sz == im->size);
	getattr(s, oid, &a);
	assert_true(a.version == before + 1);
	assert_true(a.size == im->size);
	free(buf);
}

struct chunk_list {
	size_t n;
	uint64_t idx[256];
	struct ofs_digest d[256];
};

static int collect_chunk(uint64_t idx, struct ofs_digest d, void *arg)
{
	struct chunk_list *cl = arg;

	if (cl->n == 256)
		return -E2BIG;
	cl->idx[cl->n] = idx;
	cl->d[cl->n] = d;
	cl->n++;
	return 0;
}

static void get_chunks(struct store *s, struct ofs_oid oid, struct chunk_list *cl)
{
	memset(cl, 0, sizeof(*cl));
	assert_int_equal(store_chunks(s, oid, collect_chunk, cl), 0);
}

/* Stored digests are exactly the digests of the image's chunks, but for
 * holes: a chunk without a record is all zeros in the image
 * (docs/design.md, "Holes"); the last chunk always has one. */
static void check_chunks(struct store *s, struct ofs_oid oid, const struct image *im)
{
	struct chunk_list *cl = malloc(sizeof(*cl));
	size_t want = (im->size + CS - 1) / CS, r = 0;

	assert_non_null(cl);
	get_chunks(s, oid, cl);
	assert_true(cl->n <= want);
	for (size_t i = 0; i < want; i++) {
		size_t c0 = i * CS, n = im->size - c0 < CS ? im->size - c0 : CS;

		if (r < cl->n && cl->idx[r] == i) {
			if (!digest_eq(cl->d[r], checksum_buf(im->b + c0, n)))
				fail_msg("chunk %zu digest does not match the bytes", i);
			r++;
			continue;
		}
		if (i == want - 1)
			fail_msg("the last chunk (%zu) has no record", i);
		for (size_t j = 0; j < n; j++)
			if (im->b[c0 + j])
				fail_msg("chunk %zu has no record but is not zeros", i);
	}
	assert_int_equal(r, cl->n);       /* (no record past the size) */
	free(cl);
}

/* The whole stream reads back as the image. */
static void check_read(struct store *s, struct ofs_oid oid, const struct image *im)
{
	uint8_t *buf = malloc(im->size + 1);
	size_t got = 12345;

	assert_non_null(buf);
	assert_int_equal(store_read(s, oid, 0, buf, im->size + 1, &got), 0);
	assert_int_equal(got, im->size);
	if (im->size)
		assert_memory_equal(buf, im->b, im->size);
	free(buf);
}

static void check_all(struct store *s, struct ofs_oid oid, const struct image *im)
{
	check_chunks(s, oid, im);
	check_read(s, oid, im);
}

static void stream_path(struct fixture *fx, struct ofs_oid oid, char *p)
{
	assert_int_equal(bstream_path(fx->data, oid, p, BSTREAM_PATH_MAX), 0);
}

/* ---- init and open -------------------------------------------------------- */

static void test_init_returns_sid_and_open_reports_it(void **state)
{
	struct fixture *fx = *state;
	const char *attrs[] = { "rack=r1", "zone=z2" };
	const char *const *got;
	struct ofs_sid sid;

	assert_int_equal(store_init(fx->data, 1u << 16, attrs, 2, &sid), 0);
	assert_false(sid_is_zero(sid));
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	assert_true(sid_eq(store_sid(fx->s), sid));
	assert_int_equal(store_chunk_size(fx->s), 1u << 16);
	assert_string_equal(store_datadir(fx->s), fx->data);
	assert_int_equal(store_attrs(fx->s, &got), 2);
	assert_string_equal(got[0], "rack=r1");
	assert_string_equal(got[1], "zone=z2");
}

static void test_init_accepts_existing_empty_dir(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid sid;
	struct stat st;

	assert_int_equal(mkdir(fx->data, 0755), 0);
	assert_int_equal(store_init(fx->data, CS, NULL, 0, &sid), 0);
	assert_int_equal(stat(fx->data, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);        /* made the server's alone */
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
}

static void test_init_refuses_non_empty_dir(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid sid = { { 0 } }, first;
	char p[160];

	assert_int_equal(mkdir(fx->data, 0755), 0);
	snprintf(p, sizeof(p), "%s/stray", fx->data);
	write_text(p, "x");
	assert_int_equal(store_init(fx->data, CS, NULL, 0, &sid), -EEXIST);
	assert_true(sid_is_zero(sid));
	snprintf(p, sizeof(p), "%s/format", fx->data);
	assert_int_equal(access(p, F_OK), -1);
	/* An initialised data dir is not empty either. */
	rm_rf(fx->data);
	assert_int_equal(store_init(fx->data, CS, NULL, 0, &first), 0);
	assert_int_equal(store_init(fx->data, CS, NULL, 0, &sid), -EEXIST);
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	assert_true(sid_eq(store_sid(fx->s), first));
}

static void test_init_refuses_bad_chunk_sizes(void **state)
{
	static const uint32_t bad[] = { 0, 1, 1000, STORE_MIN_CHUNK / 2, STORE_MIN_CHUNK + 1,
					6144, (1u << 20) + 4096, STORE_MAX_CHUNK * 2,
					UINT32_MAX };
	struct fixture *fx = *state;
	struct ofs_sid sid;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(store_init(fx->data, bad[i], NULL, 0, &sid), -EINVAL);
		assert_int_equal(access(fx->data, F_OK), -1);
	}
	assert_int_equal(store_init(fx->data, STORE_MAX_CHUNK, NULL, 0, &sid), 0);
}

static void test_init_refuses_bad_attributes(void **state)
{
	struct fixture *fx = *state;
	const char *noeq[] = { "rack" };
	const char *empty_key[] = { "=v" };
	const char *space[] = { "rack=r 1" };
	struct ofs_sid sid;

	assert_int_equal(store_init(fx->data, CS, noeq, 1, &sid), -EINVAL);
	assert_int_equal(store_init(fx->data, CS, empty_key, 1, &sid), -EINVAL);
	assert_int_equal(store_init(fx->data, CS, space, 1, &sid), -EINVAL);
	assert_int_equal(access(fx->data, F_OK), -1);
}

static void test_open_missing_dir_is_enoent(void **state)
{
	struct fixture *fx = *state;
	struct store *s = NULL;

	assert_int_equal(store_open(fx->data, false, &s), -ENOENT);
	assert_int_equal(store_open(fx->data, true, &s), -ENOENT);
	/* A folder that is not a data dir. */
	assert_int_equal(store_open(fx->dir, false, &s), -ENOENT);
	assert_null(s);
}

static void test_open_foreign_format_is_ecorrupt(void **state)
{
	struct fixture *fx = *state;
	struct store *s = NULL;
	char p[160];

	open_new(fx);
	store_close(fx->s);
	fx->s = NULL;
	snprintf(p, sizeof(p), "%s/format", fx->data);
	write_text(p, "something else\n");
	assert_int_equal(store_open(fx->data, false, &s), -OFS_ECORRUPT);
	write_text(p, "");
	assert_int_equal(store_open(fx->data, false, &s), -OFS_ECORRUPT);
	assert_null(s);
}

static void test_open_unknown_format_version_is_eversion(void **state)
{
	struct fixture *fx = *state;
	struct store *s = NULL;
	char p[160];

	open_new(fx);
	store_close(fx->s);
	fx->s = NULL;
	snprintf(p, sizeof(p), "%s/format", fx->data);
	write_text(p, "ofs-data 9\n");
	assert_int_equal(store_open(fx->data, false, &s), -OFS_EVERSION);
	assert_int_equal(store_open(fx->data, true, &s), -OFS_EVERSION);
	assert_null(s);
}

static void test_second_writable_open_is_ebusy_read_only_works(void **state)
{
	struct fixture *fx = *state;
	struct store *s2 = NULL, *ro = NULL;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_oid oid;

	assert_non_null(a);
	open_new(fx);
	assert_int_equal(store_open(fx->data, false, &s2), -EBUSY);
	assert_null(s2);
	oid = create_dfile(fx->s);
	assert_int_equal(store_open(fx->data, true, &ro), 0);
	getattr(ro, oid, a);
	assert_int_equal(a->type, OFS_OBJ_DFILE);
	/* Read-only changes nothing. */
	a->type = OFS_OBJ_METAFILE;
	assert_int_equal(store_create(ro, a, &oid), -EROFS);
	store_close(ro);
	/* The first open still works, and once closed the lock is free. */
	getattr(fx->s, oid, a);
	store_close(fx->s);
	fx->s = NULL;
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	free(a);
}

static void test_store_close_null_is_noop(void **state)
{
	(void)state;
	store_close(NULL);
}

/* ---- root and create ------------------------------------------------------ */

static int count_dirent(const char *name, const struct ofs_dirent *d, void *arg)
{
	(void)name; (void)d;
	(*(int *)arg)++;
	return 0;
}

static void test_fresh_store_has_no_root_until_one_is_adopted(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in, a;
	struct ofs_handle h, got;
	struct ofs_oid dir, dd;
	int64_t birth = 0;
	bool replaced, more = true;
	int n = 0;

	/* store.h: the root comes from the cluster's first client. */
	assert_int_equal(store_root(s, &got), -ENOENT);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRECTORY;
	in.nparts = 1;
	in.parts[0].oid = mk_oid(50);        /* placeholder, set below */
	assert_int_equal(store_create(s, &in, &dir), 0);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRDATA;
	in.backref.owner = dir;
	assert_int_equal(store_create(s, &in, &dd), 0);
	memset(&in, 0, sizeof(in));
	in.nparts = 1;
	in.parts[0].oid = dd;
	in.parts[0].nsids = 1;
	in.parts[0].sids[0] = fx->sid;
	assert_int_equal(store_setattr(s, dir, OFS_ATTR_LAYOUT, &in, NULL), 0);
	memset(&h, 0, sizeof(h));
	h.oid = dir;
	h.nsids = 1;
	h.sids[0] = fx->sid;
	assert_int_equal(store_adopt_root(s, &h, 12345), 0);

	reopen(fx);
	s = fx->s;
	assert_int_equal(store_root(s, &got), 0);
	assert_true(oid_eq(got.oid, dir));
	assert_int_equal(got.nsids, 1);
	assert_true(sid_eq(got.sids[0], fx->sid));
	assert_int_equal(store_root_info(s, &got, &birth), 0);
	assert_true(birth == 12345);
	getattr(s, dir, &a);
	assert_int_equal(a.type, OFS_OBJ_DIRECTORY);
	assert_int_equal(a.nparts, 1);
	assert_true(oid_eq(a.parts[0].oid, dd));
	getattr(s, dd, &a);
	assert_int_equal(a.type, OFS_OBJ_DIRDATA);
	assert_true(oid_eq(a.backref.owner, dir));
	assert_int_equal(store_dirent_list(s, dd, NULL, 10, count_dirent, &n, &more), 0);
	assert_int_equal(n, 0);
	assert_false(more);
	(void)replaced;
}

static void test_create_dfile_keeps_owner_and_stripe(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in, a;
	struct ofs_oid oid;
	char p[BSTREAM_PATH_MAX];
	struct stat st;

	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DFILE;
	in.mode = 0600;
	in.uid = 77;
	in.gid = 88;
	in.size = 999;               /* ignored: a new stream is empty */
	in.chunk_size = 12345;       /* ignored: the server's */
	in.backref.owner = mk_oid(1);
	in.backref.stripe = 63;
	assert_int_equal(store_create(s, &in, &oid), 0);
	getattr(s, oid, &a);
	assert_int_equal(a.type, OFS_OBJ_DFILE);
	assert_true(a.version == 1);
	assert_true(a.size == 0);
	assert_int_equal(a.chunk_size, CS);
	assert_int_equal(a.mode, 0600);
	assert_int_equal(a.uid, 77);
	assert_int_equal(a.gid, 88);
	assert_true(oid_eq(a.backref.owner, in.backref.owner));
	assert_int_equal(a.backref.stripe, 63);
	assert_string_equal(a.backref.name, "");
	assert_int_equal(a.nsids, 1);
	assert_true(sid_eq(a.sids[0], fx->sid));
	assert_int_equal(a.nstale, 0);
	stream_path(fx, oid, p);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
}

static void test_create_metafile_keeps_owner_name_and_layout(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr *in = calloc(1, sizeof(*in)), *a = calloc(1, sizeof(*a));
	struct ofs_oid oid;

	assert_non_null(in);
	assert_non_null(a);
	in->type = OFS_OBJ_METAFILE;
	in->backref.owner = mk_oid(2);
	memset(in->backref.name, 'm', OFS_NAME_MAX);
	in->backref.name[OFS_NAME_MAX] = '\0';
	in->nsids = 2;
	in->sids[0] = fx->sid;
	memset(in->sids[1].b, 0x42, OFS_OID_LEN);
	strcpy(in->dist, "simple_stripe");
	in->strip_size = 1u << 16;
	in->replicas = 2;
	in->confidence = 1;
	in->nparts = 3;
	for (int i = 0; i < 3; i++) {
		in->parts[i].oid = mk_oid((uint8_t)(10 + i));
		in->parts[i].nsids = 1;
		in->parts[i].sids[0] = fx->sid;
	}
	assert_int_equal(store_create(s, in, &oid), 0);
	getattr(s, oid, a);
	assert_int_equal(a->type, OFS_OBJ_METAFILE);
	assert_true(oid_eq(a->backref.owner, in->backref.owner));
	assert_string_equal(a->backref.name, in->backref.name);
	assert_int_equal(a->nsids, 2);
	assert_true(sid_eq(a->sids[1], in->sids[1]));
	assert_string_equal(a->dist, "simple_stripe");
	assert_int_equal(a->strip_size, 1u << 16);
	assert_int_equal(a->replicas, 2);
	assert_int_equal(a->confidence, 1);
	assert_int_equal(a->nparts, 3);
	for (int i = 0; i < 3; i++)
		assert_true(oid_eq(a->parts[i].oid, in->parts[i].oid));
	assert_int_equal(a->chunk_size, 0);
	free(in);
	free(a);
}

static void test_create_directory_and_dirdata_keep_owner(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in, a;
	struct ofs_oid dir, dd;
	char p[BSTREAM_PATH_MAX];

	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRECTORY;
	in.backref.owner = mk_oid(3);
	strcpy(in.backref.name, "docs");
	in.nparts = 1;
	in.parts[0].oid = mk_oid(4);
	assert_int_equal(store_create(s, &in, &dir), 0);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRDATA;
	in.backref.owner = dir;
	assert_int_equal(store_create(s, &in, &dd), 0);

	getattr(s, dir, &a);
	assert_int_equal(a.type, OFS_OBJ_DIRECTORY);
	assert_true(oid_eq(a.backref.owner, mk_oid(3)));
	assert_string_equal(a.backref.name, "docs");
	assert_int_equal(a.nparts, 1);
	assert_true(oid_eq(a.parts[0].oid, mk_oid(4)));
	getattr(s, dd, &a);
	assert_int_equal(a.type, OFS_OBJ_DIRDATA);
	assert_true(oid_eq(a.backref.owner, dir));
	/* Only dfiles have byte streams. */
	stream_path(fx, dd, p);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(count_streams(fx), 0);
}

static void test_create_refuses_invalid_type_and_layout(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in;
	struct ofs_oid oid = mk_oid(99), keep = oid;

	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_NONE;
	assert_int_equal(store_create(s, &in, &oid), -EINVAL);
	in.type = 9;
	assert_int_equal(store_create(s, &in, &oid), -EINVAL);
	in.type = OFS_OBJ_DFILE;
	in.nparts = 1;
	in.parts[0].oid = mk_oid(5);
	assert_int_equal(store_create(s, &in, &oid), -EINVAL);
	in.type = OFS_OBJ_METAFILE;
	in.nparts = OFS_MAX_STRIPES + 1;
	assert_int_equal(store_create(s, &in, &oid), -EINVAL);
	assert_true(oid_eq(oid, keep));
	assert_int_equal(count_streams(fx), 0);
}

/* A metafile's layout and size within their limits (docs/design.md,
 * "Limits"): strip size 0 (unset) or OFS_STRIP_MIN to OFS_STRIP_MAX,
 * replicas and write confidence at most OFS_MAX_REPLICAS, a size its
 * dfiles can hold (each at most OFS_DFILE_MAX bytes) - at create and at
 * SETATTR, each value at the limit taken, one past it refused. */
static void test_metafile_layout_and_size_limits(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in, out;
	struct ofs_oid oid, meta;
	static const struct { uint32_t strip; uint8_t replicas, confidence; int want; } c[] = {
		{ 0, 0, 0, 0 },
		{ OFS_STRIP_MIN, OFS_MAX_REPLICAS, OFS_MAX_REPLICAS, 0 },
		{ OFS_STRIP_MAX, 1, 1, 0 },
		{ OFS_STRIP_MIN - 1, 1, 1, -EINVAL },
		{ 1, 1, 1, -EINVAL },
		{ OFS_STRIP_MAX + 1, 1, 1, -EINVAL },
		{ UINT32_MAX, 1, 1, -EINVAL },
		{ OFS_STRIP_MIN, OFS_MAX_REPLICAS + 1, 1, -EINVAL },
		{ OFS_STRIP_MIN, 1, OFS_MAX_REPLICAS + 1, -EINVAL },
		{ OFS_STRIP_MIN, 1, 255, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&in, 0, sizeof(in));
		in.type = OFS_OBJ_METAFILE;
		in.strip_size = c[i].strip;
		in.replicas = c[i].replicas;
		in.confidence = c[i].confidence;
		in.nparts = 1;
		in.parts[0].oid = mk_oid(7);
		assert_int_equal(store_create(s, &in, &oid), c[i].want);
		meta = create_type(s, OFS_OBJ_METAFILE);
		assert_int_equal(store_setattr(s, meta, OFS_ATTR_LAYOUT, &in, NULL), c[i].want);
	}
	/* Size: one dfile holds OFS_DFILE_MAX bytes; two, twice that. */
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_METAFILE;
	in.nparts = 1;
	in.parts[0].oid = mk_oid(7);
	in.size = OFS_DFILE_MAX;
	assert_int_equal(store_create(s, &in, &oid), 0);
	in.size = OFS_DFILE_MAX + 1;
	assert_int_equal(store_create(s, &in, &oid), -EFBIG);
	in.size = UINT64_MAX;
	assert_int_equal(store_create(s, &in, &oid), -EFBIG);
	meta = create_type(s, OFS_OBJ_METAFILE);     /* (no parts yet: one dfile's) */
	in.size = OFS_DFILE_MAX;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIZE, &in, &out), 0);
	in.size = OFS_DFILE_MAX + 1;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIZE, &in, &out), -EFBIG);
	in.nparts = 2;
	in.parts[1].oid = mk_oid(8);
	in.size = 2 * OFS_DFILE_MAX;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_LAYOUT | OFS_ATTR_SIZE, &in, &out), 0);
	in.size = 2 * OFS_DFILE_MAX + 1;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIZE, &in, &out), -EFBIG);
	getattr(s, meta, &out);
	assert_true(out.size == 2 * OFS_DFILE_MAX);
}

static void test_create_oid_of_existing_object_is_eexist_and_keeps_it(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s), meta = create_type(s, OFS_OBJ_METAFILE), got;
	struct ofs_oid want = mk_oid(42);
	struct image im = { 0 };
	struct ofs_attr in, a;

	write_both(s, oid, &im, 0, CS + 5, 1);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DFILE;
	assert_int_equal(store_create_oid(s, &in, oid, &got), -EEXIST);
	assert_int_equal(store_create_oid(s, &in, meta, &got), -EEXIST);
	check_all(s, oid, &im);
	getattr(s, meta, &a);
	assert_int_equal(a.type, OFS_OBJ_METAFILE);
	assert_int_equal(count_streams(fx), 1);
	/* A chosen OID is used as given. */
	assert_int_equal(store_create_oid(s, &in, want, &got), 0);
	assert_true(oid_eq(got, want));
	getattr(s, want, &a);
	assert_int_equal(a.type, OFS_OBJ_DFILE);
	free(im.b);
}

static void test_getattr_of_unknown_oid_is_enoent(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr a;

	assert_int_equal(store_getattr(s, mk_oid(7), &a), -ENOENT);
}

/* ---- chunk digests after writes -------------------------------------------- */

static void test_aligned_full_chunk_writes_set_exact_digests(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };

	write_both(s, oid, &im, 0, CS, 1);
	check_all(s, oid, &im);
	write_both(s, oid, &im, CS, 2 * CS, 2);
	check_all(s, oid, &im);
	/* Rewrite a whole middle chunk. */
	write_both(s, oid, &im, CS, CS, 3);
	check_all(s, oid, &im);
	assert_true(version_of(s, oid) == 4);
	free(im.b);
}

static void test_unaligned_write_inside_one_chunk_updates_its_digest(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };

	write_both(s, oid, &im, 0, 3 * CS, 1);
	write_both(s, oid, &im, CS + 100, 1000, 2);
	check_all(s, oid, &im);
	/* One byte at the very end of a chunk, and at the very start. */
	write_both(s, oid, &im, 2 * CS - 1, 1, 3);
	write_both(s, oid, &im, 2 * CS, 1, 4);
	check_all(s, oid, &im);
	free(im.b);
}

static void test_write_crossing_chunk_boundaries_updates_every_chunk(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };

	write_both(s, oid, &im, 0, 3 * CS, 1);
	write_both(s, oid, &im, CS - 10, CS + 20, 2);        /* chunks 0..2 */
	check_all(s, oid, &im);
	write_both(s, oid, &im, 2 * CS + 5, 3 * CS, 3);      /* 2..5, past the end */
	check_all(s, oid, &im);
	free(im.b);
}

static void test_overwrite_in_the_middle_keeps_other_digests(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	struct chunk_list *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));

	assert_non_null(before);
	assert_non_null(after);
	write_both(s, oid, &im, 0, 5 * CS, 1);
	get_chunks(s, oid, before);
	write_both(s, oid, &im, 2 * CS + 7, 300, 2);
	check_all(s, oid, &im);
	get_chunks(s, oid, after);
	assert_int_equal(after->n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(digest_eq(before->d[i], after->d[i]), i != 2);
	free(before);
	free(after);
	free(im.b);
}

static void test_append_lengthens_last_chunk_and_rehashes_it(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };

	write_both(s, oid, &im, 0, 100, 1);
	check_all(s, oid, &im);
	write_both(s, oid, &im, 100, 100, 2);
	check_all(s, oid, &im);
	write_both(s, oid, &im, 200, CS, 3);       /* fills chunk 0, starts 1 */
	check_all(s, oid, &im);
	write_both(s, oid, &im, im.size, CS - (im.size % CS), 4);   /* to a boundary */
	assert_int_equal(im.size % CS, 0);
	check_all(s, oid, &im);
	write_both(s, oid, &im, im.size, 1, 5);
	check_all(s, oid, &im);
	free(im.b);
}

static void test_write_past_end_leaves_gap_of_zeros(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint8_t buf[CS * 2], zeros[CS * 2];
	size_t got;

	/* Unaligned old end, gap over whole chunks, unaligned write: the
	 * old last chunk and the written one are recorded, the two whole
	 * chunks between are holes (no record). */
	write_both(s, oid, &im, 0, 100, 1);
	write_both(s, oid, &im, 3 * CS + 50, 10, 2);
	check_all(s, oid, &im);
	{
		struct chunk_list cl;

		get_chunks(s, oid, &cl);
		assert_int_equal(cl.n, 2);
		assert_true(cl.idx[0] == 0 && cl.idx[1] == 3);
	}
	memset(zeros, 0, sizeof(zeros));
	assert_int_equal(store_read(s, oid, 100, buf, CS * 2, &got), 0);
	assert_int_equal(got, CS * 2);
	assert_memory_equal(buf, zeros, CS * 2);
	/* Aligned old end, gap inside one chunk. */
	write_both(s, oid, &im, 4 * CS, CS, 3);
	write_both(s, oid, &im, 5 * CS + 1000, 10, 4);
	check_all(s, oid, &im);
	/* A write into a fresh stream at a distance. */
	{
		struct ofs_oid o2 = create_dfile(s);
		struct image im2 = { 0 };

		write_both(s, o2, &im2, 7 * CS + 1, CS, 5);
		check_all(s, o2, &im2);
		free(im2.b);
	}
	free(im.b);
}

static void test_empty_write_changes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint64_t v = 0, sz = 0;

	write_both(s, oid, &im, 0, 100, 1);
	assert_int_equal(store_write(s, oid, 5000, "", 0, &v, &sz), 0);
	assert_true(v == 2);
	assert_true(sz == 100);
	assert_true(version_of(s, oid) == 2);
	check_all(s, oid, &im);
	free(im.b);
}

static void test_write_past_max_stream_is_efbig(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	uint64_t v = 7, sz = 7;

	assert_int_equal(store_write(s, oid, STORE_MAX_STREAM, "x", 1, &v, &sz), -EFBIG);
	assert_int_equal(store_write(s, oid, UINT64_MAX, "x", 1, &v, &sz), -EFBIG);
	assert_true(v == 7 && sz == 7);
	assert_true(version_of(s, oid) == 1);
}

/* ---- holes (docs/design.md, "Holes") ------------------------------------------ */

static void incoming_from(struct store *src, struct store *dst, struct ofs_oid oid,
			  struct store_incoming **out);

/* DATA/format as text (static buffer). */
static const char *format_of(const struct fixture *fx)
{
	static char buf[64];
	char p[700];
	size_t got = 0;

	snprintf(p, sizeof(p), "%s/format", fx->data);
	assert_int_equal(fdio_read_file(p, buf, sizeof(buf) - 1, &got), 0);
	buf[got] = '\0';
	return buf;
}

struct hole_findings {
	int n, kind;
	char detail[256];
};

static int hole_found(int kind, const char *detail, void *arg)
{
	struct hole_findings *f = arg;

	f->n++;
	f->kind = kind;
	snprintf(f->detail, sizeof(f->detail), "%s", detail);
	return 0;
}

/* One byte written at the last offset a stream may hold: one chunk
 * record, a sparse stream, a hole that reads as zeros and scrubs clean
 * without being read; a byte put into the hole on disk is found by reads
 * and by the scrub. (Before holes, the write recorded a digest for each
 * of the 2^28 chunks in between.) */
static void test_write_far_past_end_records_nothing_for_the_hole(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	const uint64_t last = STORE_MAX_STREAM - 1, mid = STORE_MAX_STREAM / 2 + 5;
	struct hole_findings f = { 0 };
	struct chunk_list cl;
	uint8_t buf[3 * CS], zeros[3 * CS] = { 0 };
	uint64_t v = 0, sz = 0, bytes = 0;
	char path[BSTREAM_PATH_MAX];
	struct stat st;
	size_t got;
	int fd;

	/* A store is at format 1 until its first hole (a release that knows
	 * only 1 then refuses the data dir, rather than read a hole as a
	 * corrupt chunk). */
	assert_string_equal(format_of(fx), "ofs-data 1\n");
	assert_int_equal(store_write(s, create_dfile(s), 0, "abc", 3, &v, &sz), 0);
	assert_string_equal(format_of(fx), "ofs-data 1\n");
	assert_int_equal(store_write(s, oid, last, "\x5a", 1, &v, &sz), 0);
	assert_true(sz == STORE_MAX_STREAM && v == 2);
	assert_string_equal(format_of(fx), "ofs-data 2\n");
	reopen(fx);
	s = fx->s;
	assert_int_equal(store_write(s, oid, STORE_MAX_STREAM, "x", 1, &v, &sz), -EFBIG);
	get_chunks(s, oid, &cl);
	assert_int_equal(cl.n, 1);
	assert_true(cl.idx[0] == last / CS);
	assert_int_equal(bstream_path(fx->data, oid, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true((uint64_t)st.st_size == STORE_MAX_STREAM);
	assert_true((uint64_t)st.st_blocks * 512 <= 64 * 1024);   /* sparse */
	/* The hole reads as zeros, the byte as itself. */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(store_read(s, oid, mid - 7, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, sizeof(buf));
	assert_memory_equal(buf, zeros, sizeof(buf));
	assert_int_equal(store_read(s, oid, last - 1, buf, 10, &got), 0);
	assert_int_equal(got, 2);
	assert_true(buf[0] == 0 && buf[1] == 0x5a);
	/* A scrub is clean, and reads little more than the one chunk. */
	assert_int_equal(store_scrub_dfile(s, oid, hole_found, NULL, &f, &bytes), 0);
	assert_int_equal(f.n, 0);
	assert_true(bytes <= (1u << 20));
	/* A byte that is not zero, put in the hole on disk. */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x01", 1, (off_t)mid), 1);
	assert_int_equal(close(fd), 0);
	assert_int_equal(store_read(s, oid, mid - 7, buf, 10, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(s, oid, last - 1, buf, 2, &got), 0);  /* (another chunk) */
	assert_int_equal(store_scrub_dfile(s, oid, hole_found, NULL, &f, &bytes), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.kind, OFS_FINDING_CHECKSUM_MISMATCH);
	assert_non_null(strstr(f.detail, "hole"));
	/* A write over the bad chunk is refused (it never blesses bytes
	 * that do not verify). */
	assert_int_equal(store_write(s, oid, mid - 1, "y", 1, &v, &sz), -OFS_ECHECKSUM);
}

/* A copy fetched from a sibling of a file with holes: the same summary
 * as its source (whole zero chunks count as holes, recorded or not), no
 * records for them, and a sparse stream. */
static void test_incoming_copy_of_a_file_with_holes_keeps_them(void **state)
{
	struct fixture *fx = *state;
	struct store *src = open_new(fx), *dst;
	struct ofs_oid oid = create_dfile(src);
	struct store_incoming *in = NULL;
	struct ofs_summary sm, sm2;
	struct ofs_digest mine;
	struct image im = { 0 };
	struct chunk_list cl;
	struct ofs_sid sid2;
	char data2[600], path[BSTREAM_PATH_MAX];
	struct stat st;

	write_both(src, oid, &im, 0, 100, 1);
	write_both(src, oid, &im, 200 * CS + 3, 10, 2);   /* 199 whole chunks of hole */
	get_chunks(src, oid, &cl);
	assert_int_equal(cl.n, 2);
	snprintf(data2, sizeof(data2), "%s/data2", fx->dir);
	assert_int_equal(store_init(data2, CS, NULL, 0, &sid2), 0);
	assert_int_equal(store_open(data2, false, &dst), 0);
	assert_int_equal(store_set_inline_max(dst, 0), 0);
	incoming_from(src, dst, oid, &in);
	assert_int_equal(store_summary(src, oid, &sm), 0);
	assert_int_equal(store_incoming_summary(in, &mine), 0);
	assert_true(digest_eq(mine, sm.digest));
	assert_int_equal(store_incoming_commit(in, "test"), 0);
	store_incoming_free(in);
	{
		char f[700], buf[32] = { 0 };
		size_t got;
		snprintf(f, sizeof(f), "%s/format", data2);
		assert_int_equal(fdio_read_file(f, buf, sizeof(buf) - 1, &got), 0);
		assert_string_equal(buf, "ofs-data 2\n");    /* (it holds holes now) */
	}
	assert_int_equal(store_summary(dst, oid, &sm2), 0);
	assert_true(digest_eq(sm2.digest, sm.digest));
	get_chunks(dst, oid, &cl);
	assert_int_equal(cl.n, 2);
	check_all(dst, oid, &im);
	assert_int_equal(bstream_path(data2, oid, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true((uint64_t)st.st_size == im.size);
	assert_true((uint64_t)st.st_blocks * 512 < im.size / 4);
	/* A copy that records a whole zero chunk (written as zeros) and one
	 * that has a hole there summarize the same. */
	{
		uint8_t z[CS] = { 0 };
		uint64_t v, sz;
		assert_int_equal(store_write(src, oid, 50 * CS, z, CS, &v, &sz), 0);
		get_chunks(src, oid, &cl);
		assert_int_equal(cl.n, 3);               /* (chunk 50 recorded, as zeros) */
		get_chunks(dst, oid, &cl);
		assert_int_equal(cl.n, 2);               /* (a hole there) */
		assert_int_equal(store_summary(src, oid, &sm), 0);
		assert_int_equal(store_summary(dst, oid, &sm2), 0);
		assert_true(digest_eq(sm2.digest, sm.digest));
	}
	store_close(dst);
	free(im.b);
}

/* Unstable appends wait in memory (a digest per chunk) up to
 * STORE_PENDING_MAX_BYTES; the append that would go past goes stable and
 * commits those before it, so a writer that never COMMITs holds no more
 * than that. */
static void test_unstable_appends_bounded_in_bytes(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	const size_t piece = 4u << 20;
	uint8_t *b = malloc(piece);
	struct ofs_attr a;
	uint64_t v = 0, sz = 0, off = 0;

	assert_non_null(b);
	fill(b, piece, 31);
	while (off < STORE_PENDING_MAX_BYTES) {
		assert_int_equal(store_write_unstable(s, oid, off, b, piece, &v, &sz), 0);
		off += piece;
		assert_true(v == 1 && sz == off);
	}
	getattr(s, oid, &a);
	assert_true(a.version == 1 && a.size == 0);      /* all of it still waits */
	assert_int_equal(store_write_unstable(s, oid, off, b, 1, &v, &sz), 0);
	getattr(s, oid, &a);
	assert_true(a.size == STORE_PENDING_MAX_BYTES + 1);   /* committed, then written */
	assert_true(a.version == 3 && v == 3 && sz == a.size);
	/* The next append waits again, from the new end. */
	assert_int_equal(store_write_unstable(s, oid, off + 1, b, 10, &v, &sz), 0);
	assert_true(v == 3 && sz == off + 11);
	assert_int_equal(store_commit(s, oid, &v, &sz), 0);
	assert_true(v == 4 && sz == off + 11);
	free(b);
}

/* A copy's key-value part waits in memory for its commit: at most
 * STORE_INCOMING_KV_MAX_BYTES of it, refused past (-EFBIG) before more is
 * held; a pair that still fits is taken after a refusal. */
static void test_incoming_kv_part_bounded_in_bytes(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = mk_oid(77);
	struct store_incoming *in = NULL;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	uint8_t *v = calloc(1, OFS_MAX_VALUE);
	size_t taken = 0;
	int rc = 0;

	assert_non_null(a);
	assert_non_null(v);
	a->type = OFS_OBJ_METAFILE;
	a->version = 1;
	assert_int_equal(store_incoming_begin(s, oid, a, &in), 0);
	while (taken <= STORE_INCOMING_KV_MAX_BYTES / OFS_MAX_VALUE) {
		uint8_t k[8];
		for (int i = 0; i < 8; i++)
			k[i] = (uint8_t)(taken >> (56 - 8 * i));
		rc = store_incoming_kv(in, k, sizeof(k), v, OFS_MAX_VALUE);
		if (rc)
			break;
		taken++;
	}
	assert_int_equal(rc, -EFBIG);
	/* (each pair costs its bytes and a slot: one fewer than 512 fit) */
	assert_true(taken == STORE_INCOMING_KV_MAX_BYTES / OFS_MAX_VALUE - 1);
	assert_int_equal(store_incoming_kv(in, "zz", 2, v, 100), 0);
	store_incoming_free(in);
	free(v);
	free(a);
}

/* ---- reads -------------------------------------------------------------------- */

static void test_read_returns_exact_bytes_short_at_eof_zero_past(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint8_t buf[3 * CS];
	size_t got;

	/* An empty stream. */
	assert_int_equal(store_read(s, oid, 0, buf, 10, &got), 0);
	assert_int_equal(got, 0);
	write_both(s, oid, &im, 0, 2 * CS + 500, 1);
	/* Unaligned range across chunks. */
	assert_int_equal(store_read(s, oid, 10, buf, CS + 20, &got), 0);
	assert_int_equal(got, CS + 20);
	assert_memory_equal(buf, im.b + 10, CS + 20);
	/* Aligned whole chunk. */
	assert_int_equal(store_read(s, oid, CS, buf, CS, &got), 0);
	assert_int_equal(got, CS);
	assert_memory_equal(buf, im.b + CS, CS);
	/* Short at the end. */
	assert_int_equal(store_read(s, oid, 2 * CS + 400, buf, 1000, &got), 0);
	assert_int_equal(got, 100);
	assert_memory_equal(buf, im.b + 2 * CS + 400, 100);
	/* At and past the end. */
	assert_int_equal(store_read(s, oid, 2 * CS + 500, buf, 10, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(store_read(s, oid, UINT64_MAX, buf, 10, &got), 0);
	assert_int_equal(got, 0);
	/* Zero length. */
	got = 99;
	assert_int_equal(store_read(s, oid, 0, buf, 0, &got), 0);
	assert_int_equal(got, 0);
	free(im.b);
}

static void flip_byte(struct fixture *fx, struct ofs_oid oid, off_t off)
{
	char p[BSTREAM_PATH_MAX];
	uint8_t b;
	int fd;

	stream_path(fx, oid, p);
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x01;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	assert_int_equal(close(fd), 0);
}

static void test_flipped_byte_fails_reads_of_its_chunk_only(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint8_t buf[4 * CS];
	size_t got;

	write_both(s, oid, &im, 0, 3 * CS + 10, 1);
	flip_byte(fx, oid, CS + 1234);
	/* Ranges touching chunk 1, however little. */
	got = 4242;
	assert_int_equal(store_read(s, oid, CS + 1234, buf, 1, &got), -OFS_ECHECKSUM);
	assert_int_equal(got, 4242);
	assert_int_equal(store_read(s, oid, CS, buf, CS, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(s, oid, CS - 1, buf, 2, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(s, oid, 2 * CS - 1, buf, 1, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(s, oid, 0, buf, sizeof(buf), &got), -OFS_ECHECKSUM);
	assert_int_equal(got, 4242);
	/* Other chunks read fine. */
	assert_int_equal(store_read(s, oid, 0, buf, CS, &got), 0);
	assert_int_equal(got, CS);
	assert_memory_equal(buf, im.b, CS);
	assert_int_equal(store_read(s, oid, 2 * CS, buf, CS + 10, &got), 0);
	assert_int_equal(got, CS + 10);
	assert_memory_equal(buf, im.b + 2 * CS, CS + 10);
	/* A flip in the short last chunk too. */
	flip_byte(fx, oid, 3 * CS + 9);
	assert_int_equal(store_read(s, oid, 3 * CS, buf, 10, &got), -OFS_ECHECKSUM);
	assert_int_equal(store_read(s, oid, 2 * CS, buf, CS, &got), 0);
	free(im.b);
}

static void test_truncated_stream_fails_reads_not_garbage(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	char p[BSTREAM_PATH_MAX];
	uint8_t buf[3 * CS];
	size_t got = 4242;
	int rc;

	write_both(s, oid, &im, 0, 3 * CS, 1);
	stream_path(fx, oid, p);
	assert_int_equal(truncate(p, CS + 100), 0);
	rc = store_read(s, oid, 2 * CS, buf, CS, &got);
	assert_true(rc < 0);
	rc = store_read(s, oid, CS, buf, 200, &got);
	assert_true(rc < 0);
	rc = store_read(s, oid, 0, buf, sizeof(buf), &got);
	assert_true(rc < 0);
	assert_int_equal(got, 4242);
	/* The intact chunk still reads. */
	assert_int_equal(store_read(s, oid, 0, buf, CS, &got), 0);
	assert_memory_equal(buf, im.b, CS);
	assert_int_equal(truncate(p, 0), 0);
	got = 4242;
	assert_true(store_read(s, oid, 0, buf, 10, &got) < 0);
	assert_int_equal(got, 4242);
	free(im.b);
}

static void test_missing_stream_fails_reads(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	char p[BSTREAM_PATH_MAX];
	uint8_t buf[16];
	size_t got = 4242;

	write_both(s, oid, &im, 0, 100, 1);
	stream_path(fx, oid, p);
	assert_int_equal(unlink(p), 0);
	assert_true(store_read(s, oid, 0, buf, sizeof(buf), &got) < 0);
	assert_int_equal(got, 4242);
	free(im.b);
}

/* ---- wrong types ----------------------------------------------------------------- */

static void test_setting_handles_and_entries_to_what_they_are_keeps_the_version(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA), meta = create_type(s, OFS_OBJ_METAFILE);
	struct ofs_dirent d = { .type = OFS_OBJ_METAFILE }, old;
	struct ofs_attr in, a;
	bool replaced;
	uint64_t v0;

	memset(&in, 0, sizeof(in));
	in.nsids = 2;
	in.sids[0] = mk_sid(3);
	in.sids[1] = mk_sid(4);
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIDS, &in, NULL), 0);
	assert_int_equal(store_getattr(s, meta, &a), 0);
	v0 = a.version;
	/* the same list again (a move's switch run a second time): no change */
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIDS, &in, &a), 0);
	assert_int_equal(a.version, v0);
	assert_int_equal(store_getattr(s, meta, &a), 0);
	assert_int_equal(a.version, v0);
	/* another list: a change */
	in.sids[1] = mk_sid(5);
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIDS, &in, NULL), 0);
	assert_int_equal(store_getattr(s, meta, &a), 0);
	assert_int_equal(a.version, v0 + 1);

	d.handle.oid = mk_oid(1);
	d.handle.nsids = 1;
	d.handle.sids[0] = mk_sid(3);
	assert_int_equal(store_dirent_create(s, dd, "x", &d, 0, &replaced, &old), 0);
	assert_int_equal(store_getattr(s, dd, &a), 0);
	v0 = a.version;
	assert_int_equal(store_dirent_create(s, dd, "x", &d, OFS_DIRENT_REPLACE, &replaced, &old), 0);
	assert_int_equal(store_getattr(s, dd, &a), 0);
	assert_int_equal(a.version, v0);
	d.handle.sids[0] = mk_sid(6);
	assert_int_equal(store_dirent_create(s, dd, "x", &d, OFS_DIRENT_REPLACE, &replaced, &old), 0);
	assert_true(replaced);
	assert_int_equal(store_getattr(s, dd, &a), 0);
	assert_int_equal(a.version, v0 + 1);
}

/* A put over a name whose create is sent again (its first primary died
 * before it answered, after the change was made) still learns which file
 * it replaced, so it can destroy that file and leave no orphan. */
static void test_retried_replace_reports_what_the_first_replaced(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent first = { .type = OFS_OBJ_METAFILE }, second, old;
	bool replaced = false;

	first.handle.oid = mk_oid(11);
	first.handle.nsids = 1;
	first.handle.sids[0] = mk_sid(3);
	second = first;
	second.handle.oid = mk_oid(12);
	assert_int_equal(store_dirent_create(s, dd, "n4", &first, 0, &replaced, &old), 0);
	assert_false(replaced);
	assert_int_equal(store_dirent_create(s, dd, "n4", &second, OFS_DIRENT_REPLACE,
					 &replaced, &old), 0);
	assert_true(replaced);
	assert_memory_equal(old.handle.oid.b, first.handle.oid.b, OFS_OID_LEN);
	/* the same create again: the entry is already the new file */
	memset(&old, 0, sizeof(old));
	assert_int_equal(store_dirent_create(s, dd, "n4", &second, OFS_DIRENT_REPLACE,
					 &replaced, &old), 0);
	assert_true(replaced);
	assert_memory_equal(old.handle.oid.b, first.handle.oid.b, OFS_OID_LEN);
	/* a create of a new name sent again replaced nothing: it says so */
	second.handle.oid = mk_oid(13);
	assert_int_equal(store_dirent_create(s, dd, "n5", &second, OFS_DIRENT_REPLACE,
					 &replaced, &old), 0);
	assert_false(replaced);
	assert_int_equal(store_dirent_create(s, dd, "n5", &second, OFS_DIRENT_REPLACE,
					 &replaced, &old), 0);
	assert_true(replaced);
	assert_memory_equal(old.handle.oid.b, second.handle.oid.b, OFS_OID_LEN);
}

/* OFS_ATTR_PART: one part replaced in place (a move's pointer rewrite), so
 * that two moves of different parts of one owner cannot undo each other
 * the way two whole-layout rewrites, each from its own read, can. */
static void test_setattr_part_replaces_only_that_part(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid meta = create_type(s, OFS_OBJ_METAFILE), dfile = create_dfile(s);
	struct ofs_attr lay, first, second, a;
	uint64_t v0;

	memset(&lay, 0, sizeof(lay));
	snprintf(lay.dist, sizeof(lay.dist), "simple_stripe");
	lay.strip_size = 65536;
	lay.replicas = 2;
	lay.nparts = 3;
	for (uint16_t i = 0; i < 3; i++) {
		lay.parts[i].oid = mk_oid(10 + i);
		lay.parts[i].nsids = 2;
		lay.parts[i].sids[0] = mk_sid(1);
		lay.parts[i].sids[1] = mk_sid(2);
	}
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_LAYOUT, &lay, NULL), 0);
	v0 = version_of(s, meta);

	/* two movers, each read the layout before the other's change */
	memset(&first, 0, sizeof(first));
	first.nparts = 1;
	first.parts[0] = lay.parts[0];
	first.parts[0].sids[0] = mk_sid(7);
	memset(&second, 0, sizeof(second));
	second.nparts = 1;
	second.parts[0] = lay.parts[2];
	second.parts[0].sids[1] = mk_sid(8);
	second.backref.stripe = 2;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &first, NULL), 0);
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, &a), 0);
	assert_int_equal(a.version, v0 + 2);
	getattr(s, meta, &a);
	assert_int_equal(a.nparts, 3);
	assert_true(sid_eq(a.parts[0].sids[0], mk_sid(7)));    /* the first change kept */
	assert_true(sid_eq(a.parts[0].sids[1], mk_sid(2)));
	assert_true(sid_eq(a.parts[1].sids[0], mk_sid(1)));    /* untouched */
	assert_true(sid_eq(a.parts[2].sids[1], mk_sid(8)));    /* the second */
	assert_true(oid_eq(a.parts[2].oid, mk_oid(12)));
	assert_string_equal(a.dist, "simple_stripe");
	assert_int_equal(a.strip_size, 65536);

	/* the same again: no change, not even the version */
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), 0);
	assert_int_equal(version_of(s, meta), v0 + 2);
	/* a part the layout does not have */
	second.parts[0].oid = mk_oid(99);
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), -ENOENT);
	/* with no part, or with a whole layout too: refused */
	second.parts[0].oid = mk_oid(11);
	second.nparts = 0;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), -EINVAL);
	second.nparts = 1;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART | OFS_ATTR_LAYOUT, &second, NULL),
			 -EINVAL);
	/* a dfile has no parts */
	assert_int_equal(store_setattr(s, dfile, OFS_ATTR_PART, &second, NULL), -OFS_ETYPE);
	assert_int_equal(version_of(s, meta), v0 + 2);

	/* another object into a slot (a relink, a part of its own), only
	 * while the slot holds the one it replaces */
	memset(&second, 0, sizeof(second));
	second.nparts = 2;
	second.parts[0].oid = mk_oid(40);
	second.parts[0].nsids = 1;
	second.parts[0].sids[0] = mk_sid(3);
	second.parts[1].oid = mk_oid(11);                 /* slot 1 holds it */
	second.backref.stripe = 1;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), 0);
	getattr(s, meta, &a);
	assert_int_equal(a.nparts, 3);
	assert_true(oid_eq(a.parts[1].oid, mk_oid(40)));
	assert_true(sid_eq(a.parts[1].sids[0], mk_sid(3)));
	assert_true(sid_eq(a.parts[0].sids[0], mk_sid(7)));  /* the others kept */
	assert_true(sid_eq(a.parts[2].sids[1], mk_sid(8)));
	assert_int_equal(a.version, v0 + 3);
	/* the slot holds something else now: refused, nothing changed */
	second.parts[0].oid = mk_oid(41);
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), -ENOENT);
	/* (the slot is the one named: mk_oid(12) is in slot 2, not 0) */
	second.parts[1].oid = mk_oid(12);
	second.backref.stripe = 0;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), -ENOENT);
	second.nparts = 3;
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_PART, &second, NULL), -EINVAL);
	getattr(s, meta, &a);
	assert_true(oid_eq(a.parts[1].oid, mk_oid(40)));
	assert_true(oid_eq(a.parts[0].oid, mk_oid(10)));
	assert_int_equal(version_of(s, meta), v0 + 3);
}

static void test_operations_on_the_wrong_type_are_etype(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dfile = create_dfile(s), dir = create_type(s, OFS_OBJ_DIRECTORY);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA), meta = create_type(s, OFS_OBJ_METAFILE);
	struct ofs_dirent d = { .type = OFS_OBJ_METAFILE }, old;
	struct ofs_attr in, a;
	uint64_t v, sz;
	uint8_t buf[8];
	size_t got;
	bool replaced, more;
	int n = 0;

	d.handle.oid = mk_oid(1);
	d.handle.nsids = 1;
	assert_int_equal(store_write(s, dir, 0, "abc", 3, &v, &sz), -OFS_ETYPE);
	assert_int_equal(store_write(s, meta, 0, "abc", 3, &v, &sz), -OFS_ETYPE);
	assert_int_equal(store_read(s, dd, 0, buf, 3, &got), -OFS_ETYPE);
	assert_int_equal(store_dirent_create(s, dfile, "x", &d, 0, &replaced, &old), -OFS_ETYPE);
	assert_int_equal(store_dirent_create(s, dir, "x", &d, 0, &replaced, &old), -OFS_ETYPE);
	assert_int_equal(store_dirent_lookup(s, dfile, "x", &old), -OFS_ETYPE);
	assert_int_equal(store_dirent_remove(s, dfile, "x", &old), -OFS_ETYPE);
	assert_int_equal(store_dirent_list(s, dfile, NULL, 10, count_dirent, &n, &more), -OFS_ETYPE);
	assert_int_equal(store_kv_put(s, dd, "k", 1, "v", 1), -OFS_ETYPE);
	assert_int_equal(store_kv_del(s, dd, "k", 1), -OFS_ETYPE);
	memset(&in, 0, sizeof(in));
	in.size = 5;
	assert_int_equal(store_setattr(s, dfile, OFS_ATTR_SIZE, &in, NULL), -OFS_ETYPE);
	assert_int_equal(store_setattr(s, dfile, OFS_ATTR_LAYOUT, &in, NULL), -OFS_ETYPE);
	assert_int_equal(store_setattr(s, dd, OFS_ATTR_LAYOUT, &in, NULL), -OFS_ETYPE);
	/* Nothing changed. */
	getattr(s, dfile, &a);
	assert_true(a.version == 1 && a.size == 0);
	assert_true(version_of(s, dir) == 1);
	assert_true(version_of(s, dd) == 1);
	assert_true(version_of(s, meta) == 1);
	/* SIZE is fine on a metafile. */
	assert_int_equal(store_setattr(s, meta, OFS_ATTR_SIZE, &in, &a), 0);
	assert_true(a.size == 5 && a.version == 2);
}

/* ---- remove ------------------------------------------------------------------------ */

static int count_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	(*(int *)arg)++;
	return 0;
}

struct prefix_count {
	struct ofs_oid oid;
	int chunks, keyval, objects;
};

static int prefix_count_fn(struct kv_txn *t, void *arg)
{
	struct prefix_count *pc = arg;
	int rc;

	if ((rc = kv_scan(t, KV_CHUNKS, pc->oid.b, OFS_OID_LEN, NULL, 0, count_scan, &pc->chunks)) ||
	    (rc = kv_scan(t, KV_KEYVAL, pc->oid.b, OFS_OID_LEN, NULL, 0, count_scan, &pc->keyval)))
		return rc;
	return kv_scan(t, KV_OBJECTS, "", 0, NULL, 0, count_scan, &pc->objects);
}

/* Count, with the store closed, the records of oid and all object records. */
static struct prefix_count count_records(struct fixture *fx, struct ofs_oid oid)
{
	struct prefix_count pc = { .oid = oid };
	struct kv *kv = NULL;
	char p[160];

	store_close(fx->s);
	fx->s = NULL;
	snprintf(p, sizeof(p), "%s/kv", fx->data);
	assert_int_equal(kv_open(p, false, true, &kv), 0);
	assert_int_equal(kv_view(kv, prefix_count_fn, &pc), 0);
	kv_close(kv);
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
	assert_int_equal(store_set_inline_max(fx->s, 0), 0);
	return pc;
}

static void test_remove_deletes_records_chunks_kv_and_stream(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s), other = create_dfile(s);
	struct image im = { 0 }, im2 = { 0 };
	struct chunk_list cl;
	struct prefix_count pc;
	struct ofs_attr a;
	char p[BSTREAM_PATH_MAX];
	void *v;
	size_t vn;

	write_both(s, oid, &im, 0, 3 * CS, 1);
	write_both(s, other, &im2, 0, 2 * CS, 2);
	assert_int_equal(store_kv_put(s, oid, "k1", 2, "v1", 2), 0);
	assert_int_equal(store_kv_put(s, oid, "k2", 2, "v2", 2), 0);
	assert_int_equal(store_kv_put(s, other, "k1", 2, "o1", 2), 0);
	pc = count_records(fx, oid);
	s = fx->s;
	assert_int_equal(pc.chunks, 3);
	assert_int_equal(pc.keyval, 2);
	assert_int_equal(pc.objects, 2);

	assert_int_equal(store_remove(s, oid), 0);
	assert_int_equal(store_getattr(s, oid, &a), -ENOENT);
	get_chunks(s, oid, &cl);
	assert_int_equal(cl.n, 0);
	assert_int_equal(store_kv_get(s, oid, "k1", 2, &v, &vn), -ENOENT);
	stream_path(fx, oid, p);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(store_remove(s, oid), -ENOENT);
	pc = count_records(fx, oid);
	s = fx->s;
	assert_int_equal(pc.chunks, 0);
	assert_int_equal(pc.keyval, 0);
	assert_int_equal(pc.objects, 1);
	/* The other dfile is untouched. */
	check_all(s, other, &im2);
	assert_int_equal(store_kv_get(s, other, "k1", 2, &v, &vn), 0);
	assert_int_equal(vn, 2);
	assert_memory_equal(v, "o1", 2);
	free(v);
	assert_int_equal(count_streams(fx), 1);
	free(im.b);
	free(im2.b);
}

static struct ofs_dirent mk_dirent(uint8_t type, uint32_t seed)
{
	struct ofs_dirent d;

	memset(&d, 0, sizeof(d));
	d.type = type;
	for (int i = 0; i < OFS_OID_LEN; i++)
		d.handle.oid.b[i] = (uint8_t)((seed >> ((i % 4) * 8)) + i + 1);
	d.handle.nsids = 1;
	memset(d.handle.sids[0].b, 0x5a, OFS_OID_LEN);
	return d;
}

static void test_remove_of_non_empty_dirdata_is_enotempty(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d = mk_dirent(OFS_OBJ_METAFILE, 1), got;
	struct ofs_attr before, after;
	bool replaced;

	assert_int_equal(store_dirent_create(s, dd, "f", &d, 0, &replaced, NULL), 0);
	getattr(s, dd, &before);
	assert_int_equal(store_remove(s, dd), -ENOTEMPTY);
	getattr(s, dd, &after);
	assert_true(after.version == before.version);
	assert_int_equal(store_dirent_lookup(s, dd, "f", &got), 0);
	assert_true(oid_eq(got.handle.oid, d.handle.oid));
	/* Emptied, it goes. */
	assert_int_equal(store_dirent_remove(s, dd, "f", NULL), 0);
	assert_int_equal(store_remove(s, dd), 0);
	assert_int_equal(store_getattr(s, dd, &after), -ENOENT);
}

/* ---- directory entries ---------------------------------------------------------------- */

#define NDIRENTS 2500
#define DIRENT_THREADS 8

static void dirent_name(int i, char *out)
{
	/* Unpadded, so key order is not numeric order. */
	sprintf(out, "e%d", i);
}

struct dirent_thread {
	struct store *s;
	struct ofs_oid dd;
	int first, step;
	int errors;
};

static void *dirent_thread_main(void *arg)
{
	struct dirent_thread *dt = arg;

	for (int i = dt->first; i < NDIRENTS; i += dt->step) {
		char name[32];
		struct ofs_dirent d = mk_dirent(i % 3 ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY,
						(uint32_t)i);
		bool replaced = true;

		dirent_name(i, name);
		if (store_dirent_create(dt->s, dt->dd, name, &d, 0, &replaced, NULL) || replaced)
			dt->errors++;
	}
	return NULL;
}

struct listing {
	int n;
	char (*names)[32];
	struct ofs_dirent *d;
};

static int list_dirent(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct listing *l = arg;

	if (l->n >= NDIRENTS + 1 || strlen(name) >= 32)
		return -E2BIG;
	strcpy(l->names[l->n], name);
	l->d[l->n] = *d;
	l->n++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void test_dirent_list_pages_through_2500_entries_in_order(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	pthread_t th[DIRENT_THREADS];
	struct dirent_thread dt[DIRENT_THREADS];
	struct listing l = { 0 };
	char (*want)[32] = calloc(NDIRENTS, 32);
	char after[32] = "";
	int pages = 0;
	bool more = true;

	l.names = calloc(NDIRENTS + 1, 32);
	l.d = calloc(NDIRENTS + 1, sizeof(*l.d));
	assert_non_null(want);
	assert_non_null(l.names);
	assert_non_null(l.d);
	for (int i = 0; i < DIRENT_THREADS; i++) {
		dt[i] = (struct dirent_thread){ .s = s, .dd = dd, .first = i, .step = DIRENT_THREADS };
		assert_int_equal(pthread_create(&th[i], NULL, dirent_thread_main, &dt[i]), 0);
	}
	for (int i = 0; i < DIRENT_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(dt[i].errors, 0);
	}
	/* One version bump per entry. */
	assert_true(version_of(s, dd) == 1 + NDIRENTS);

	while (more) {
		int before = l.n;

		assert_int_equal(store_dirent_list(s, dd, pages ? after : NULL, OFS_MAX_LIST,
						   list_dirent, &l, &more), 0);
		assert_int_equal(l.n - before, more ? OFS_MAX_LIST : NDIRENTS % OFS_MAX_LIST);
		strcpy(after, l.names[l.n - 1]);
		pages++;
		assert_true(pages <= 3);
	}
	assert_int_equal(pages, 3);
	assert_int_equal(l.n, NDIRENTS);
	for (int i = 0; i < NDIRENTS; i++)
		dirent_name(i, want[i]);
	qsort(want, NDIRENTS, 32, cmp_name);
	for (int i = 0; i < NDIRENTS; i++) {
		int idx;
		struct ofs_dirent d;

		assert_string_equal(l.names[i], want[i]);
		assert_int_equal(sscanf(l.names[i], "e%d", &idx), 1);
		d = mk_dirent(idx % 3 ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY, (uint32_t)idx);
		assert_int_equal(l.d[i].type, d.type);
		assert_true(oid_eq(l.d[i].handle.oid, d.handle.oid));
	}
	free(want);
	free(l.names);
	free(l.d);
}

static void test_dirent_list_more_is_false_when_page_ends_exactly(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d = mk_dirent(OFS_OBJ_METAFILE, 1);
	bool replaced, more;
	int n = 0;

	assert_int_equal(store_dirent_create(s, dd, "a", &d, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_create(s, dd, "b", &d, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_create(s, dd, "c", &d, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_list(s, dd, NULL, 3, count_dirent, &n, &more), 0);
	assert_int_equal(n, 3);
	assert_false(more);
	n = 0;
	assert_int_equal(store_dirent_list(s, dd, NULL, 2, count_dirent, &n, &more), 0);
	assert_int_equal(n, 2);
	assert_true(more);
	n = 0;
	assert_int_equal(store_dirent_list(s, dd, "b", 2, count_dirent, &n, &more), 0);
	assert_int_equal(n, 1);
	assert_false(more);
	n = 0;
	assert_int_equal(store_dirent_list(s, dd, "c", 2, count_dirent, &n, &more), 0);
	assert_int_equal(n, 0);
	assert_false(more);
	assert_int_equal(store_dirent_list(s, dd, NULL, 0, count_dirent, &n, &more), -EINVAL);
}

static void test_dirent_create_lookup_remove(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d = mk_dirent(OFS_OBJ_DIRECTORY, 7), got, old;
	bool replaced = true;

	assert_int_equal(store_dirent_lookup(s, dd, "sub", &got), -ENOENT);
	assert_int_equal(store_dirent_create(s, dd, "sub", &d, 0, &replaced, NULL), 0);
	assert_false(replaced);
	assert_int_equal(store_dirent_lookup(s, dd, "sub", &got), 0);
	assert_int_equal(got.type, OFS_OBJ_DIRECTORY);
	assert_true(oid_eq(got.handle.oid, d.handle.oid));
	assert_int_equal(got.handle.nsids, 1);
	assert_true(sid_eq(got.handle.sids[0], d.handle.sids[0]));
	assert_int_equal(store_dirent_remove(s, dd, "sub", &old), 0);
	assert_true(oid_eq(old.handle.oid, d.handle.oid));
	assert_int_equal(store_dirent_lookup(s, dd, "sub", &got), -ENOENT);
	assert_int_equal(store_dirent_remove(s, dd, "sub", &old), -ENOENT);
	/* A dfile or dirdata cannot be named. */
	d.type = OFS_OBJ_DFILE;
	assert_int_equal(store_dirent_create(s, dd, "bad", &d, 0, &replaced, NULL), -EINVAL);
	assert_int_equal(store_dirent_lookup(s, dd, "bad", &got), -ENOENT);
}

static void test_dirent_create_of_existing_name_is_eexist(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d1 = mk_dirent(OFS_OBJ_METAFILE, 1), d2 = mk_dirent(OFS_OBJ_METAFILE, 2);
	struct ofs_dirent got;
	bool replaced;
	uint64_t v;

	assert_int_equal(store_dirent_create(s, dd, "f", &d1, 0, &replaced, NULL), 0);
	v = version_of(s, dd);
	assert_int_equal(store_dirent_create(s, dd, "f", &d2, 0, &replaced, NULL), -EEXIST);
	assert_int_equal(store_dirent_lookup(s, dd, "f", &got), 0);
	assert_true(oid_eq(got.handle.oid, d1.handle.oid));
	assert_true(version_of(s, dd) == v);
}

static void test_dirent_replace_of_file_returns_old_entry(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d1 = mk_dirent(OFS_OBJ_METAFILE, 1), d2 = mk_dirent(OFS_OBJ_METAFILE, 2);
	struct ofs_dirent old, got;
	bool replaced = true;

	/* REPLACE of a missing name simply creates. */
	assert_int_equal(store_dirent_create(s, dd, "f", &d1, OFS_DIRENT_REPLACE, &replaced, &old), 0);
	assert_false(replaced);
	memset(&old, 0, sizeof(old));
	assert_int_equal(store_dirent_create(s, dd, "f", &d2, OFS_DIRENT_REPLACE, &replaced, &old), 0);
	assert_true(replaced);
	assert_int_equal(old.type, OFS_OBJ_METAFILE);
	assert_true(oid_eq(old.handle.oid, d1.handle.oid));
	assert_int_equal(store_dirent_lookup(s, dd, "f", &got), 0);
	assert_true(oid_eq(got.handle.oid, d2.handle.oid));
}

static void test_dirent_replace_onto_directory_is_eisdir(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent dir = mk_dirent(OFS_OBJ_DIRECTORY, 1), file = mk_dirent(OFS_OBJ_METAFILE, 2);
	struct ofs_dirent dir2 = mk_dirent(OFS_OBJ_DIRECTORY, 3), got;
	bool replaced;

	assert_int_equal(store_dirent_create(s, dd, "d", &dir, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_create(s, dd, "d", &file, OFS_DIRENT_REPLACE, &replaced, NULL),
			 -EISDIR);
	assert_int_equal(store_dirent_create(s, dd, "d", &dir2, OFS_DIRENT_REPLACE, &replaced, NULL),
			 -EISDIR);
	assert_int_equal(store_dirent_lookup(s, dd, "d", &got), 0);
	assert_true(oid_eq(got.handle.oid, dir.handle.oid));
	/* A directory does not replace a file either. */
	assert_int_equal(store_dirent_create(s, dd, "f", &file, 0, &replaced, NULL), 0);
	assert_true(store_dirent_create(s, dd, "f", &dir2, OFS_DIRENT_REPLACE, &replaced, NULL) < 0);
	assert_int_equal(store_dirent_lookup(s, dd, "f", &got), 0);
	assert_int_equal(got.type, OFS_OBJ_METAFILE);
	assert_true(oid_eq(got.handle.oid, file.handle.oid));
}

static void test_dirent_invalid_names_are_ename(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d = mk_dirent(OFS_OBJ_METAFILE, 1), got;
	char longest[OFS_NAME_MAX + 2];
	const char *bad[] = { "", ".", "..", "a/b", "/", "ab/", longest };
	bool replaced, more;
	int n = 0;

	memset(longest, 'x', OFS_NAME_MAX + 1);
	longest[OFS_NAME_MAX + 1] = '\0';           /* 256 bytes */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(store_dirent_create(s, dd, bad[i], &d, 0, &replaced, NULL), -OFS_ENAME);
		assert_int_equal(store_dirent_lookup(s, dd, bad[i], &got), -OFS_ENAME);
		assert_int_equal(store_dirent_remove(s, dd, bad[i], &got), -OFS_ENAME);
	}
	assert_int_equal(store_dirent_list(s, dd, NULL, 10, count_dirent, &n, &more), 0);
	assert_int_equal(n, 0);
	assert_true(version_of(s, dd) == 1);
	/* 255 bytes, and names that merely contain dots, are fine. */
	longest[OFS_NAME_MAX] = '\0';
	assert_int_equal(store_dirent_create(s, dd, longest, &d, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_lookup(s, dd, longest, &got), 0);
	assert_int_equal(store_dirent_create(s, dd, "...", &d, 0, &replaced, NULL), 0);
	assert_int_equal(store_dirent_create(s, dd, ".hidden", &d, 0, &replaced, NULL), 0);
}

/* ---- key-value parts -------------------------------------------------------------------- */

static void test_kv_put_get_del(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_type(s, OFS_OBJ_METAFILE);
	const uint8_t bin[] = { 0, 1, 0, 255 };
	void *v = NULL;
	size_t vn = 0;

	assert_int_equal(store_kv_get(s, oid, "k", 1, &v, &vn), -ENOENT);
	assert_int_equal(store_kv_put(s, oid, "k", 1, "value", 5), 0);
	assert_int_equal(store_kv_get(s, oid, "k", 1, &v, &vn), 0);
	assert_int_equal(vn, 5);
	assert_memory_equal(v, "value", 5);
	free(v);
	/* Overwrite, binary key and value, empty value. */
	assert_int_equal(store_kv_put(s, oid, "k", 1, bin, sizeof(bin)), 0);
	assert_int_equal(store_kv_put(s, oid, bin, sizeof(bin), "", 0), 0);
	assert_int_equal(store_kv_get(s, oid, "k", 1, &v, &vn), 0);
	assert_int_equal(vn, sizeof(bin));
	assert_memory_equal(v, bin, sizeof(bin));
	free(v);
	assert_int_equal(store_kv_get(s, oid, bin, sizeof(bin), &v, &vn), 0);
	assert_int_equal(vn, 0);
	free(v);
	assert_int_equal(store_kv_del(s, oid, "k", 1), 0);
	assert_int_equal(store_kv_get(s, oid, "k", 1, &v, &vn), -ENOENT);
	assert_int_equal(store_kv_del(s, oid, "k", 1), -ENOENT);
	/* Bad keys and values; a missing object. */
	assert_int_equal(store_kv_put(s, oid, "", 0, "v", 1), -EINVAL);
	{
		char *big = calloc(1, OFS_MAX_VALUE + 1);
		assert_non_null(big);
		assert_int_equal(store_kv_put(s, oid, "b", 1, big, OFS_MAX_VALUE + 1), -OFS_ETOOBIG);
		free(big);
	}
	assert_int_equal(store_kv_put(s, mk_oid(200), "k", 1, "v", 1), -ENOENT);
}

struct kv_listing {
	int n;
	char keys[64][16];
};

static int list_kv(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct kv_listing *l = arg;

	if (l->n == 64 || kn >= 16 || vn != kn || memcmp(k, v, kn))
		return -EINVAL;
	memcpy(l->keys[l->n], k, kn);
	l->keys[l->n][kn] = '\0';
	l->n++;
	return 0;
}

static void test_kv_list_pages_in_key_order(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_type(s, OFS_OBJ_METAFILE), other = create_type(s, OFS_OBJ_METAFILE);
	struct kv_listing l = { 0 };
	bool more = true;
	int pages = 0;

	for (int i = 24; i >= 0; i--) {
		char k[16];
		int n = snprintf(k, sizeof(k), "key%02d", i);
		assert_int_equal(store_kv_put(s, oid, k, (size_t)n, k, (size_t)n), 0);
	}
	assert_int_equal(store_kv_put(s, other, "key00", 5, "x", 1), 0);
	while (more) {
		int before = l.n;
		const char *after = l.n ? l.keys[l.n - 1] : NULL;
		assert_int_equal(store_kv_list(s, oid, after, after ? strlen(after) : 0, 10,
					       list_kv, &l, &more), 0);
		assert_int_equal(l.n - before, more ? 10 : 5);
		pages++;
		assert_true(pages <= 3);
	}
	assert_int_equal(l.n, 25);
	for (int i = 0; i < 25; i++) {
		char k[16];
		snprintf(k, sizeof(k), "key%02d", i);
		assert_string_equal(l.keys[i], k);
	}
	assert_int_equal(store_kv_list(s, oid, NULL, 0, 0, list_kv, &l, &more), -EINVAL);
}

static int count_bytes(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	size_t *sum = arg;

	(void)k;
	(void)v;
	sum[0] += kn + vn;
	sum[1]++;
	return 0;
}

/* A user may store 1 000 values of 1 MiB: a listing of them is paged by
 * bytes too, so its reply stays within a frame. */
static void test_kv_list_is_bounded_in_bytes(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_type(s, OFS_OBJ_METAFILE);
	char *big = malloc(OFS_MAX_VALUE);
	size_t sum[2] = { 0, 0 }, total = 0;
	char after[8] = "";
	bool more = true;
	int pages = 0;

	assert_non_null(big);
	memset(big, 'v', OFS_MAX_VALUE);
	for (int i = 0; i < 10; i++) {
		char k[8];
		snprintf(k, sizeof(k), "k%02d", i);
		assert_int_equal(store_kv_put(s, oid, k, 3, big, OFS_MAX_VALUE), 0);
	}
	while (more) {
		sum[0] = sum[1] = 0;
		assert_int_equal(store_kv_list(s, oid, pages ? after : NULL, pages ? 3 : 0, OFS_MAX_LIST,
					       count_bytes, sum, &more), 0);
		assert_true(sum[0] <= STORE_LIST_BYTES_MAX);
		assert_true(sum[1] >= 1);
		total += sum[1];
		snprintf(after, sizeof(after), "k%02zu", total - 1);
		pages++;
		assert_true(pages <= 10);
	}
	assert_int_equal(total, 10);
	assert_true(pages >= 3);
	free(big);
}

/* ---- durability ---------------------------------------------------------------------------- */

static void test_data_survives_close_and_reopen(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s), dd = create_type(s, OFS_OBJ_DIRDATA);
	struct ofs_dirent d = mk_dirent(OFS_OBJ_METAFILE, 9), got;
	struct image im = { 0 };
	struct ofs_attr a;
	bool replaced;
	void *v;
	size_t vn;

	write_both(s, oid, &im, 0, 2 * CS + 77, 1);
	write_both(s, oid, &im, 5000, 100, 2);
	assert_int_equal(store_kv_put(s, oid, "k", 1, "v", 1), 0);
	assert_int_equal(store_dirent_create(s, dd, "name", &d, 0, &replaced, NULL), 0);

	reopen(fx);
	s = fx->s;
	assert_true(sid_eq(store_sid(s), fx->sid));
	assert_int_equal(store_chunk_size(s), CS);
	getattr(s, oid, &a);
	assert_true(a.version == 4);         /* create, two writes, kv put */
	assert_true(a.size == im.size);
	check_all(s, oid, &im);
	assert_int_equal(store_kv_get(s, oid, "k", 1, &v, &vn), 0);
	assert_int_equal(vn, 1);
	free(v);
	assert_int_equal(store_dirent_lookup(s, dd, "name", &got), 0);
	assert_true(oid_eq(got.handle.oid, d.handle.oid));
	/* And it goes on working. */
	write_both(s, oid, &im, im.size, 10, 3);
	check_all(s, oid, &im);
	free(im.b);
}

/* ---- concurrency ---------------------------------------------------------------------------- */

#define WRITERS 8
#define CREATORS 8
#define READERS 2
#define CHUNKS_PER_WRITER 8
#define CREATES_PER_THREAD 12

struct conc {
	struct store *s;
	struct ofs_oid oid;
	int id;
	int errors;
	struct ofs_oid made[CREATES_PER_THREAD];
};

/* Chunk j holds fill(seed 1000 + j). */
static void *writer_main(void *arg)
{
	struct conc *c = arg;
	uint8_t buf[CS];

	for (int k = 0; k < CHUNKS_PER_WRITER; k++) {
		int j = k * WRITERS + c->id;
		uint64_t v, sz;

		fill(buf, CS, 1000u + (uint32_t)j);
		if (store_write(c->s, c->oid, (uint64_t)j * CS, buf, CS, &v, &sz))
			c->errors++;
	}
	return NULL;
}

static void *creator_main(void *arg)
{
	struct conc *c = arg;

	for (int k = 0; k < CREATES_PER_THREAD; k++) {
		struct ofs_attr a;

		memset(&a, 0, sizeof(a));
		a.type = k % 2 ? OFS_OBJ_DFILE : OFS_OBJ_METAFILE;
		if (store_create(c->s, &a, &c->made[k]))
			c->errors++;
	}
	return NULL;
}

/* Every read sees each chunk either as zeros (not yet written, inside a
 * gap) or as its writer's bytes, never a checksum failure. */
static void *reader_main(void *arg)
{
	struct conc *c = arg;
	uint8_t *buf = malloc(WRITERS * CHUNKS_PER_WRITER * CS), *want = malloc(CS);
	uint8_t zeros[CS];

	memset(zeros, 0, sizeof(zeros));
	if (!buf || !want) {
		c->errors++;
		goto out;
	}
	for (int r = 0; r < 40; r++) {
		size_t got;

		if (store_read(c->s, c->oid, 0, buf, WRITERS * CHUNKS_PER_WRITER * CS, &got)) {
			c->errors++;
			continue;
		}
		for (size_t j = 0; j * CS < got; j++) {
			fill(want, CS, 1000u + (uint32_t)j);
			if (memcmp(buf + j * CS, want, CS) && memcmp(buf + j * CS, zeros, CS))
				c->errors++;
		}
	}
out:
	free(buf);
	free(want);
	return NULL;
}

static void test_concurrent_writers_and_creators_keep_digests_exact(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	pthread_t th[WRITERS + CREATORS + READERS];
	struct conc c[WRITERS + CREATORS + READERS];
	struct image im = { 0 };
	struct ofs_attr a;
	uint8_t buf[CS];
	int nth = WRITERS + CREATORS + READERS;

	for (int i = 0; i < nth; i++) {
		void *(*fn)(void *) = i < WRITERS ? writer_main :
				      i < WRITERS + CREATORS ? creator_main : reader_main;
		c[i] = (struct conc){ .s = s, .oid = oid, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, fn, &c[i]), 0);
	}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nth; i++)
		assert_int_equal(c[i].errors, 0);

	for (int j = 0; j < WRITERS * CHUNKS_PER_WRITER; j++) {
		fill(buf, CS, 1000u + (uint32_t)j);
		image_write(&im, (uint64_t)j * CS, buf, CS);
	}
	getattr(s, oid, &a);
	assert_true(a.size == im.size);
	assert_true(a.version == 1 + WRITERS * CHUNKS_PER_WRITER);
	check_all(s, oid, &im);
	for (int i = WRITERS; i < WRITERS + CREATORS; i++) {
		for (int k = 0; k < CREATES_PER_THREAD; k++) {
			getattr(s, c[i].made[k], &a);
			assert_int_equal(a.type, k % 2 ? OFS_OBJ_DFILE : OFS_OBJ_METAFILE);
		}
	}
	assert_int_equal(count_streams(fx), 1 + CREATORS * CREATES_PER_THREAD / 2);
	free(im.b);
}

/* ---- injected failures ------------------------------------------------------------------------ */

static int fail_eio(int fd)
{
	(void)fd;
	errno = EIO;
	return -1;
}

static ssize_t fail_pwrite_enospc(int fd, const void *buf, size_t n, off_t off)
{
	(void)fd; (void)buf; (void)n; (void)off;
	errno = ENOSPC;
	return -1;
}

static ssize_t fail_pread_eio(int fd, void *buf, size_t n, off_t off)
{
	(void)fd; (void)buf; (void)n; (void)off;
	errno = EIO;
	return -1;
}

/* Version, size and every chunk digest of oid are what they were. */
struct snapshot {
	struct ofs_attr a;
	struct chunk_list cl;
};

static void take_snapshot(struct store *s, struct ofs_oid oid, struct snapshot *sn)
{
	getattr(s, oid, &sn->a);
	get_chunks(s, oid, &sn->cl);
}

static void assert_unchanged(struct store *s, struct ofs_oid oid, const struct snapshot *sn)
{
	struct snapshot *now = malloc(sizeof(*now));

	assert_non_null(now);
	take_snapshot(s, oid, now);
	assert_true(now->a.version == sn->a.version);
	assert_true(now->a.size == sn->a.size);
	assert_int_equal(now->cl.n, sn->cl.n);
	for (size_t i = 0; i < sn->cl.n; i++) {
		assert_true(now->cl.idx[i] == sn->cl.idx[i]);
		assert_true(digest_eq(now->cl.d[i], sn->cl.d[i]));
	}
	free(now);
}

/* Each failing write: an overwrite, an append across chunks, and a write
 * leaving a gap, starting from a stream of 2.5 chunks. */
static void failing_writes_change_nothing(struct fixture *fx, int want, bool recover)
{
	struct store *s = fx->s;
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	struct snapshot *sn = malloc(sizeof(*sn));
	uint8_t buf[2 * CS];
	uint64_t v = 77, sz = 77;
	const uint64_t offs[] = { CS + 10, 2 * CS + 100, 6 * CS };

	assert_non_null(sn);
	memset(buf, 0xee, sizeof(buf));
	bstream_ops_reset();
	write_both(s, oid, &im, 0, 2 * CS + CS / 2, 1);
	take_snapshot(s, oid, sn);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		if (want == -EIO)
			bstream_ops.fdatasync = fail_eio;
		else
			bstream_ops.pwrite = fail_pwrite_enospc;
		assert_int_equal(store_write(s, oid, offs[i], buf, sizeof(buf), &v, &sz), want);
		assert_true(v == 77 && sz == 77);
		bstream_ops_reset();
		assert_unchanged(s, oid, sn);
	}
	/* Once the disk recovers the object works, with no trace of the
	 * failed writes: a later write that re-digests the old last chunk
	 * and leaves a gap must see the recorded bytes and zeros. */
	if (recover) {
		write_both(s, oid, &im, 8 * CS + 3, 10, 2);
		check_all(s, oid, &im);
	}
	free(sn);
	free(im.b);
}

static void test_failed_fdatasync_fails_write_and_changes_no_record(void **state)
{
	struct fixture *fx = *state;

	open_new(fx);
	failing_writes_change_nothing(fx, -EIO, false);
}

static void test_failed_fdatasync_bytes_are_not_adopted_by_a_later_write(void **state)
{
	struct fixture *fx = *state;

	open_new(fx);
	failing_writes_change_nothing(fx, -EIO, true);
}

static void test_failed_pwrite_enospc_fails_write_and_changes_nothing(void **state)
{
	struct fixture *fx = *state;

	open_new(fx);
	failing_writes_change_nothing(fx, -ENOSPC, true);
	/* pwrite failed before touching the stream: every byte reads as it
	 * was (checked by check_all above through the final write). */
}

static void test_failed_fdatasync_of_overwrite_leaves_old_bytes_readable(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint8_t buf[CS];
	uint64_t v, sz;

	/* store.h: "A rejected request changes nothing." */
	write_both(s, oid, &im, 0, 3 * CS, 1);
	memset(buf, 0xee, sizeof(buf));
	bstream_ops.fdatasync = fail_eio;
	assert_int_equal(store_write(s, oid, CS + 10, buf, 100, &v, &sz), -EIO);
	bstream_ops_reset();
	check_read(s, oid, &im);
	free(im.b);
}

static void test_failed_pread_fails_read_and_returns_nothing(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct image im = { 0 };
	uint8_t buf[CS];
	size_t got = 4242;

	write_both(s, oid, &im, 0, 2 * CS, 1);
	bstream_ops.pread = fail_pread_eio;
	assert_int_equal(store_read(s, oid, 10, buf, 100, &got), -EIO);
	assert_int_equal(got, 4242);
	/* A partial overwrite needs the old bytes back: it fails too. */
	{
		struct snapshot *sn = malloc(sizeof(*sn));
		uint64_t v, sz;

		assert_non_null(sn);
		bstream_ops_reset();
		take_snapshot(s, oid, sn);
		bstream_ops.pread = fail_pread_eio;
		assert_int_equal(store_write(s, oid, 10, "abc", 3, &v, &sz), -EIO);
		bstream_ops_reset();
		assert_unchanged(s, oid, sn);
		free(sn);
	}
	free(im.b);
}

static void test_failed_fsync_fails_dfile_create_and_leaves_nothing(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_attr in;
	struct ofs_oid oid = mk_oid(1), keep = oid;
	struct prefix_count pc;

	create_dfile(s);
	assert_int_equal(count_streams(fx), 1);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DFILE;
	for (int i = 0; i < 5; i++) {
		bstream_ops.fsync = fail_eio;
		assert_int_equal(store_create(s, &in, &oid), -EIO);
		bstream_ops_reset();
		assert_true(oid_eq(oid, keep));
		assert_int_equal(count_streams(fx), 1);
	}
	pc = count_records(fx, oid);
	assert_int_equal(pc.objects, 1);     /* the first dfile only */
	/* And creation works again. */
	create_dfile(fx->s);
	assert_int_equal(count_streams(fx), 2);
}

/* Paths of the folders and files fsync'd, for the test below. */
static char synced[32][BSTREAM_PATH_MAX];
static int nsynced;
static int fsync_fail_once;

static int recording_fsync(int fd)
{
	char link[64];
	ssize_t n;

	if (fsync_fail_once) {
		fsync_fail_once = 0;
		errno = EIO;
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (nsynced < 32) {
		n = readlink(link, synced[nsynced], BSTREAM_PATH_MAX - 1);
		synced[nsynced][n > 0 ? n : 0] = '\0';
		nsynced++;
	}
	return fsync(fd);
}

static void test_stream_folder_entry_is_synced_after_a_failed_folder_sync(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid a = mk_oid(1), b = a;
	char top[256], d1[300], real[PATH_MAX];
	char hex[OFS_OID_HEX];
	bool synced_top = false;

	/* bstream.h: "Creation is durable when bstream_create returns: the
	 * file, and the folder entries leading to it, are fsync'd." The first
	 * create makes DATA/bstreams/XX, then fails to sync DATA/bstreams.
	 * A later create in the same XX that succeeds must have synced that
	 * entry (or the failed create must not have left XX behind). */
	open_new(fx);
	b.b[15] ^= 0xff;             /* same first two bytes, another OID */
	snprintf(top, sizeof(top), "%s/bstreams", fx->data);
	assert_non_null(realpath(top, real));
	oid_to_hex(a, hex);
	snprintf(d1, sizeof(d1), "%s/%.2s", top, hex);

	nsynced = 0;
	fsync_fail_once = 1;
	bstream_ops.fsync = recording_fsync;
	assert_int_equal(bstream_create(fx->data, a), -EIO);
	if (access(d1, F_OK) != 0)
		return;              /* nothing left behind: fine */
	nsynced = 0;
	assert_int_equal(bstream_create(fx->data, b), 0);
	bstream_ops_reset();
	for (int i = 0; i < nsynced; i++)
		if (strcmp(synced[i], real) == 0)
			synced_top = true;
	assert_true(synced_top);
}

/* ---- copies behind, and stale records by server ---------------------------- */

struct stale_seen {
	struct ofs_oid oids[8];
	char reasons[8][256];
	int n;
};

static int stale_seen_add(struct ofs_oid oid, const char *reason, void *arg)
{
	struct stale_seen *ss = arg;

	assert_true(ss->n < 8);
	ss->oids[ss->n] = oid;
	snprintf(ss->reasons[ss->n], sizeof(ss->reasons[ss->n]), "%s", reason);
	ss->n++;
	return 0;
}

static void test_behind_mark_is_durable_keeps_first_reason_and_needs_no_object(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid have = create_dfile(s), missing = mk_oid(77);

	assert_int_equal(store_behind(s, have), 0);
	assert_int_equal(store_behind(s, missing), 0);
	assert_int_equal(store_behind_mark(s, have, "write not applied"), 0);
	assert_int_equal(store_behind_mark(s, have, "a later reason"), 0);
	assert_int_equal(store_behind_mark(s, missing, "create not applied"), 0);
	reopen(fx);
	s = fx->s;
	assert_int_equal(store_behind(s, have), 1);
	assert_int_equal(store_behind(s, missing), 1);
	assert_int_equal(store_behind(s, mk_oid(78)), 0);
	{
		/* The mark is a stale record naming this server itself. */
		struct ofs_sid self = store_sid(s);
		struct stale_seen ss = { 0 };
		bool more = true;
		assert_int_equal(store_stale_for(s, self, NULL, 8, stale_seen_add, &ss, &more), 0);
		assert_int_equal(ss.n, 2);
		assert_false(more);
		for (int i = 0; i < 2; i++)
			if (memcmp(ss.oids[i].b, have.b, OFS_OID_LEN) == 0)
				assert_string_equal(ss.reasons[i], "write not applied");
	}
	/* Removing the object clears its mark. */
	assert_int_equal(store_remove(s, have), 0);
	assert_int_equal(store_behind(s, have), 0);
}

static void test_stale_for_lists_only_that_server_in_pages(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_sid x, y;
	struct ofs_oid o[5];
	struct stale_seen ss = { 0 };
	bool more = false;

	memset(x.b, 0x11, sizeof(x.b));
	memset(y.b, 0x22, sizeof(y.b));
	for (int i = 0; i < 5; i++) {
		o[i] = create_dfile(s);
		assert_int_equal(store_stale_add(s, o[i], x, "x missed it"), 0);
		if (i % 2 == 0)
			assert_int_equal(store_stale_add(s, o[i], y, "y missed it"), 0);
	}
	/* y: three records, all at once. */
	assert_int_equal(store_stale_for(s, y, NULL, 8, stale_seen_add, &ss, &more), 0);
	assert_int_equal(ss.n, 3);
	assert_false(more);
	for (int i = 0; i < 3; i++)
		assert_string_equal(ss.reasons[i], "y missed it");
	/* x: five records, two per page, each page after the last OID of
	 * the one before, in OID order with none twice. */
	{
		struct ofs_oid seen[5];
		int total = 0, pages = 0;
		const struct ofs_oid *after = NULL;
		struct ofs_oid cursor;
		do {
			ss.n = 0;
			assert_int_equal(store_stale_for(s, x, after, 2, stale_seen_add, &ss, &more), 0);
			assert_true(ss.n <= 2);
			for (int i = 0; i < ss.n; i++) {
				if (total)
					assert_true(memcmp(seen[total - 1].b, ss.oids[i].b, OFS_OID_LEN) < 0);
				seen[total++] = ss.oids[i];
			}
			if (ss.n) {
				cursor = ss.oids[ss.n - 1];
				after = &cursor;
			}
			pages++;
		} while (more && pages < 10);
		assert_int_equal(total, 5);
		assert_int_equal(pages, 3);
	}
	assert_int_equal(store_stale_for(s, x, NULL, 0, stale_seen_add, &ss, &more), -EINVAL);
}

/* ---- incoming copies (repair) ----------------------------------------------- */

static int put_intent_fn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;

	return kv_put(t, KV_INTENT, oid->b, OFS_OID_LEN, "install", 7);
}

/* A second store whose copy of oid is fetched into fx's store. */
static void incoming_from(struct store *src, struct store *dst, struct ofs_oid oid,
			  struct store_incoming **out)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	uint8_t buf[CS];
	uint64_t off = 0;
	size_t got;

	assert_non_null(a);
	getattr(src, oid, a);
	assert_int_equal(store_incoming_begin(dst, oid, a, out), 0);
	while (off < a->size) {
		assert_int_equal(store_read(src, oid, off, buf, sizeof(buf), &got), 0);
		assert_int_equal(store_incoming_write(*out, buf, got), 0);
		off += got;
	}
	free(a);
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

/* SUMMARY_MANY's answers are store_summary's, one transaction for all. */
static void test_summary_many_agrees_with_summary(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oids[4];
	struct ofs_summary many[4], one;
	struct image im = { 0 };

	oids[0] = create_dfile(s);
	write_both(s, oids[0], &im, 0, 2 * CS + 5, 1);
	oids[1] = create_dfile(s);
	memset(&oids[2], 0x5a, sizeof(oids[2]));          /* not here */
	oids[3] = create_type(s, OFS_OBJ_DIRDATA);
	assert_int_equal(store_tool_set_key(s, oids[3], "bad", 3, "x", 1), 0);
	assert_int_equal(store_behind_mark(s, oids[1], "test"), 0);
	assert_int_equal(store_summary_many(s, oids, 4, many), 0);
	for (int i = 0; i < 4; i++) {
		if (i == 2) {
			assert_int_equal(store_summary(s, oids[i], &one), -ENOENT);
			assert_false(many[i].present);
			continue;
		}
		assert_int_equal(store_summary(s, oids[i], &one), 0);
		assert_true(many[i].present);
		assert_int_equal(many[i].version, one.version);
		assert_int_equal(many[i].size, one.size);
		assert_int_equal(many[i].type, one.type);
		assert_memory_equal(many[i].digest.b, one.digest.b, sizeof(one.digest.b));
		assert_int_equal(many[i].corrupt, one.corrupt);
	}
	assert_false(many[0].behind);
	assert_true(many[1].behind);
	assert_true(many[3].corrupt);                      /* an entry that does not decode */
	assert_false(many[0].corrupt);
	free(im.b);
}

static int cmp_oid_t(const void *a, const void *b)
{
	return memcmp(a, b, OFS_OID_LEN);
}

/* The join's content digests, from records the caller read, are the
 * summaries' digests. */
static void test_content_many_agrees_with_summary(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oids[5];
	struct ofs_digest d[5];
	struct ofs_summary one;
	uint64_t size[5];
	uint8_t type[5];
	bool bad[5];
	struct image im = { 0 };
	struct ofs_attr *a = malloc(sizeof(*a));

	assert_non_null(a);
	oids[0] = create_dfile(s);
	write_both(s, oids[0], &im, 0, 2 * CS + 5, 1);
	oids[1] = create_dfile(s);
	oids[2] = create_type(s, OFS_OBJ_DIRDATA);
	assert_int_equal(store_tool_set_key(s, oids[2], "bad", 3, "x", 1), 0);
	oids[3] = create_type(s, OFS_OBJ_DIRDATA);
	oids[4] = create_type(s, OFS_OBJ_METAFILE);
	assert_int_equal(store_kv_put(s, oids[4], "user.k", 6, "v", 1), 0);
	qsort(oids, 5, sizeof(oids[0]), cmp_oid_t);        /* (a walk's order) */
	for (int i = 0; i < 5; i++) {
		getattr(s, oids[i], a);
		size[i] = a->size;
		type[i] = a->type;
	}
	assert_int_equal(store_content_many(s, oids, size, type, 5, d, bad), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(store_summary(s, oids[i], &one), 0);
		assert_memory_equal(d[i].b, one.digest.b, sizeof(one.digest.b));
		assert_int_equal(bad[i], one.corrupt);
	}
	/* a size other than the record's: another digest */
	size[0]++;
	assert_int_equal(store_content_many(s, oids, size, type, 1, d, bad), 0);
	assert_int_equal(store_summary(s, oids[0], &one), 0);
	assert_memory_not_equal(d[0].b, one.digest.b, sizeof(one.digest.b));
	free(a);
	free(im.b);
}

/* An owner with the given parts (a metafile's stripes, a directory's dirdata). */
static struct ofs_oid create_owner(struct store *s, uint8_t type, const struct ofs_oid *parts,
				   uint16_t n)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_oid oid;

	assert_non_null(a);
	a->type = type;
	a->mode = 0755;
	a->nparts = n;
	for (uint16_t i = 0; i < n; i++) {
		a->parts[i].oid = parts[i];
		a->parts[i].nsids = 1;
	}
	assert_int_equal(store_create(s, a, &oid), 0);
	free(a);
	return oid;
}

/* store_points_many answers what points_check answers from this store
 * alone, and UNSURE where points_check would have to look further. */
static void test_points_many_agrees_with_points_check(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid st[2], dd[2], mf, dir, building, nowhere, stray;
	struct ofs_dirent d = { .type = OFS_OBJ_METAFILE };
	const char *name = "a-file";
	struct store_points_q q[8];
	uint8_t ans[8];
	bool replaced;
	struct ofs_dirent old;

	st[0] = create_dfile(s);
	st[1] = create_dfile(s);
	mf = create_owner(s, OFS_OBJ_METAFILE, st, 2);
	dd[0] = create_type(s, OFS_OBJ_DIRDATA);
	dd[1] = create_type(s, OFS_OBJ_DIRDATA);
	dir = create_owner(s, OFS_OBJ_DIRECTORY, dd, 2);
	building = create_owner(s, OFS_OBJ_METAFILE, NULL, 0);
	memset(&nowhere, 0x6b, sizeof(nowhere));
	stray = create_dfile(s);
	d.handle.oid = mf;
	d.handle.nsids = 1;
	/* the entry lives in the dirdata its name hashes to */
	assert_int_equal(store_dirent_create(s, dd[ofs_name_hash(name) % 2], name, &d, 0,
					     &replaced, &old), 0);
	q[0] = (struct store_points_q){ .owner = mf, .child = st[1], .stripe = 1 };
	q[1] = (struct store_points_q){ .owner = mf, .child = st[1], .stripe = 0 };
	q[2] = (struct store_points_q){ .owner = mf, .child = stray, .stripe = 0 };
	q[3] = (struct store_points_q){ .owner = dir, .child = mf, .name = name };
	q[4] = (struct store_points_q){ .owner = dir, .child = dd[1], .name = "" };
	q[5] = (struct store_points_q){ .owner = dir, .child = stray, .name = "other" };
	q[6] = (struct store_points_q){ .owner = building, .child = st[0], .stripe = 0 };
	q[7] = (struct store_points_q){ .owner = nowhere, .child = st[0], .stripe = 0 };
	assert_int_equal(store_points_many(s, q, 8, br_points, ans), 0);
	assert_int_equal(ans[0], STORE_POINTS_YES);
	assert_int_equal(ans[1], STORE_POINTS_ELSEWHERE);     /* held at stripe 1, not 0 */
	assert_int_equal(ans[2], STORE_POINTS_UNSURE);        /* not held: ask further */
	assert_int_equal(ans[3], STORE_POINTS_YES);           /* the entry, by its name */
	assert_int_equal(ans[4], STORE_POINTS_YES);           /* one of its dirdata */
	assert_int_equal(ans[5], STORE_POINTS_UNSURE);
	assert_int_equal(ans[6], STORE_POINTS_BUILDING);
	assert_int_equal(ans[7], STORE_POINTS_UNSURE);        /* the owner is not here */
	for (int i = 0; i < 7; i++) {
		struct ofs_req r;
		uint8_t a = 99;
		memset(&r, 0, sizeof(r));
		r.op = OFS_OP_POINTS;
		r.oid = q[i].owner;
		r.child = q[i].child;
		r.offset = q[i].stripe;
		snprintf(r.name, sizeof(r.name), "%s", q[i].name ? q[i].name : "");
		assert_int_equal(points_check(s, NULL, &r, false, &a), 0);
		/* the same answer, or a "no" points_check gives where the batch
		 * is unsure (the check then asks the full way) */
		assert_int_equal(a, ans[i] == STORE_POINTS_UNSURE ? POINTS_NO : ans[i]);
	}
}

/* The "sibling": a second data dir (fx->dir/data2) holding a copy of
 * s's oid with im's bytes. */
static struct store *sibling_of(struct fixture *fx, struct store *s, struct ofs_oid oid,
				const struct image *im)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct store *src = NULL;
	char data2[600];
	uint64_t v, sz;

	assert_non_null(a);
	snprintf(data2, sizeof(data2), "%s/data2", fx->dir);
	assert_int_equal(store_init(data2, CS, NULL, 0, &fx->sid), 0);
	assert_int_equal(store_open(data2, false, &src), 0);
	getattr(s, oid, a);
	assert_int_equal(store_create_oid(src, a, oid, &oid), 0);
	assert_int_equal(store_write(src, oid, 0, im->b, im->size, &v, &sz), 0);
	free(a);
	return src;
}

static void test_incoming_copy_replaces_a_bad_one_and_keeps_it_aside(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx), *src;
	struct ofs_oid oid = create_dfile(s);
	struct store_incoming *in = NULL;
	struct ofs_summary sa, sb;
	struct ofs_digest d;
	struct image im = { 0 };
	char q[600];

	write_both(s, oid, &im, 0, 2 * CS + 77, 5);
	src = sibling_of(fx, s, oid, &im);
	flip_byte(fx, oid, CS + 3);
	incoming_from(src, s, oid, &in);
	assert_int_equal(store_incoming_summary(in, &d), 0);
	assert_int_equal(store_summary(src, oid, &sb), 0);
	assert_memory_equal(d.b, sb.digest.b, sizeof(d.b));   /* same records as the source */
	assert_int_equal(store_incoming_commit(in, "test"), 0);
	store_incoming_free(in);
	check_all(s, oid, &im);
	assert_int_equal(store_summary(s, oid, &sa), 0);
	assert_int_equal(sa.version, sb.version);
	snprintf(q, sizeof(q), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(q), 1);                    /* the bad bytes, kept */
	snprintf(q, sizeof(q), "%s/incoming", fx->data);
	assert_int_equal(count_dir(q), 0);
	unsigned purged = 9;
	assert_int_equal(store_quarantine_purge(s, 3600, &purged), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(store_quarantine_purge(s, -1, &purged), 0);
	assert_int_equal(purged, 1);
	store_close(src);
	free(im.b);
}

/* nftw: a directory that is not 0700 or a file that is not 0600. */
static int loose_modes;

static int note_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	unsigned want = S_ISDIR(st->st_mode) ? 0700 : 0600;

	(void)flag;
	(void)ftw;
	if ((st->st_mode & 07777) != want) {
		print_message("%s: mode %04o, not %04o\n", path, (unsigned)(st->st_mode & 07777), want);
		loose_modes++;
	}
	return 0;
}

static void test_a_data_dir_is_its_servers_alone_whatever_the_umask(void **state)
{
	struct fixture *fx = *state;
	mode_t old = umask(0);
	struct store *s = open_new(fx), *src;
	struct ofs_oid oid = create_dfile(s);
	struct store_incoming *in = NULL;
	struct image im = { 0 };
	char q[600];

	/* a stream, an incoming copy and the one it replaced, quarantined */
	write_both(s, oid, &im, 0, 2 * CS + 77, 5);
	src = sibling_of(fx, s, oid, &im);
	flip_byte(fx, oid, 3);
	incoming_from(src, s, oid, &in);
	assert_int_equal(store_incoming_commit(in, "test"), 0);
	store_incoming_free(in);
	store_close(src);
	free(im.b);
	umask(old);
	snprintf(q, sizeof(q), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(q), 1);
	loose_modes = 0;
	assert_int_equal(nftw(fx->data, note_mode, 16, FTW_PHYS), 0);
	assert_int_equal(loose_modes, 0);
}

static void test_a_data_dir_others_may_enter_is_not_opened(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid sid;
	char why[8400], p[600];
	struct store *s = NULL;

	assert_int_equal(store_init(fx->data, CS, NULL, 0, &sid), 0);
	assert_int_equal(store_check_modes(fx->data, why, sizeof(why)), 0);
	/* the data dir itself, as an earlier release made it */
	assert_int_equal(chmod(fx->data, 0755), 0);
	assert_int_equal(store_open(fx->data, false, &s), -EPERM);
	assert_int_equal(store_open(fx->data, true, &s), -EPERM);
	assert_null(s);
	assert_int_equal(store_check_modes(fx->data, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, fx->data));
	assert_non_null(strstr(why, "mode 0755"));
	assert_non_null(strstr(why, "chmod -R go-rwx"));
	/* a directory in it: its path is named */
	assert_int_equal(chmod(fx->data, 0700), 0);
	snprintf(p, sizeof(p), "%s/identity", fx->data);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, 0710), 0);
	assert_int_equal(store_open(fx->data, false, &s), -EPERM);
	assert_int_equal(store_check_modes(fx->data, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, p));
	assert_non_null(strstr(why, "mode 0710"));
	assert_int_equal(chmod(p, 0700), 0);
	assert_int_equal(store_open(fx->data, false, &fx->s), 0);
}

/* A quarantine name's time is read back from the folder (untrusted): one
 * as far back as a long long goes is skipped, not subtracted from now
 * (which overflowed). */
static void test_quarantine_purge_skips_a_time_before_the_epoch(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	static const char *const names[] = {
		"0102030405060708090a0b0c0d0e0f10.-9223372036854775808.v1.test",
		"0102030405060708090a0b0c0d0e0f10.-1.v1.test",
	};
	unsigned purged = 9;
	char p[600];

	snprintf(p, sizeof(p), "%s/quarantine", fx->data);
	assert_int_equal(mkdir(p, 0755), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd;
		snprintf(p, sizeof(p), "%s/quarantine/%s", fx->data, names[i]);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(store_quarantine_purge(s, 3600, &purged), 0);
	assert_int_equal(purged, 0);
	snprintf(p, sizeof(p), "%s/quarantine", fx->data);
	assert_int_equal(count_dir(p), 2);
}

/* The names of incoming/ and quarantine/ as written decode back; what
 * this server never writes does not. */
static void test_incoming_and_quarantine_names_decode_back(void **state)
{
	struct bstream_qname q = { .seconds = 1700000000, .version = 42, .rest = "repair.1" }, out;
	static const char *const bad[] = {
		"0102030405060708090A0B0C0D0E0F10.1.v1.t", "0102030405060708090a0b0c0d0e0f10.01.v1.t",
		"0102030405060708090a0b0c0d0e0f10.1.v1.", "0102030405060708090a0b0c0d0e0f10.+1.v1.t",
		"0102030405060708090a0b0c0d0e0f10.9223372036854775808.v1.t",
		"0102030405060708090a0b0c0d0e0f10.1.v18446744073709551616.t",
		"0102030405060708090a0b0c0d0e0f10.1.1.t", "0102030405060708090a0b0c0d0e0f10",
	};
	struct ofs_oid oid;
	char name[256];

	(void)state;
	for (int i = 0; i < OFS_OID_LEN; i++)
		q.oid.b[i] = (uint8_t)(i + 1);
	assert_int_equal(bstream_quarantine_name(&q, name, sizeof(name)), 0);
	assert_string_equal(name, "0102030405060708090a0b0c0d0e0f10.1700000000.v42.repair.1");
	assert_int_equal(bstream_quarantine_name_decode(name, &out), 0);
	assert_memory_equal(out.oid.b, q.oid.b, OFS_OID_LEN);
	assert_int_equal(out.seconds, q.seconds);
	assert_int_equal(out.version, q.version);
	assert_string_equal(out.rest, "repair.1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bstream_quarantine_name_decode(bad[i], &out), -EINVAL);
	q.rest = "a/b";
	assert_int_equal(bstream_quarantine_name(&q, name, sizeof(name)), -EINVAL);
	assert_int_equal(bstream_incoming_name_decode("0102030405060708090a0b0c0d0e0f10", &oid), 0);
	assert_memory_equal(oid.b, q.oid.b, OFS_OID_LEN);
	assert_int_equal(bstream_incoming_name_decode("0102030405060708090A0B0C0D0E0F10", &oid), -EINVAL);
	assert_int_equal(bstream_incoming_name_decode("0102030405060708090a0b0c0d0e0f1", &oid), -EINVAL);
}

static void test_incoming_copy_refuses_a_copy_changed_meanwhile(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct store_incoming *in = NULL;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct image im = { 0 };
	uint8_t x[100];

	assert_non_null(a);
	write_both(s, oid, &im, 0, CS, 2);
	getattr(s, oid, a);
	assert_int_equal(store_incoming_begin(s, oid, a, &in), 0);
	assert_int_equal(store_incoming_write(in, im.b, CS), 0);
	/* A second fetch of the same object while this one runs. */
	{
		struct store_incoming *in2 = NULL;
		assert_int_equal(store_incoming_begin(s, oid, a, &in2), -EBUSY);
	}
	fill(x, sizeof(x), 9);
	write_both(s, oid, &im, 10, sizeof(x), 3);  /* a client write reaches the copy */
	assert_int_equal(store_incoming_commit(in, "test"), -EAGAIN);
	store_incoming_free(in);
	check_all(s, oid, &im);                      /* the write stands */
	/* Writing more than the size, or committing short, is refused. */
	getattr(s, oid, a);
	assert_int_equal(store_incoming_begin(s, oid, a, &in), 0);
	assert_int_equal(store_incoming_write(in, im.b, 10), 0);
	assert_int_equal(store_incoming_commit(in, "test"), -EIO);
	store_incoming_free(in);
	free(a);
	free(im.b);
}

/* A copy fetched for an object that a client removes meanwhile - here
 * too, where the copy had not arrived yet - is not installed: it would be
 * a copy only this server holds (removed.h). A removal of another object
 * does not stop it. */
static void test_incoming_copy_not_installed_after_its_removal(void **state)
{
	struct fixture *fx = *state;
	struct store *src = open_new(fx), *dst;
	struct ofs_oid oid = create_dfile(src), other = create_dfile(src);
	struct store_incoming *in = NULL;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct image im = { 0 };
	struct ofs_sid sid2;
	char data2[600];

	assert_non_null(a);
	write_both(src, oid, &im, 0, CS + 99, 4);
	snprintf(data2, sizeof(data2), "%s/data2", fx->dir);
	assert_int_equal(store_init(data2, CS, NULL, 0, &sid2), 0);
	assert_int_equal(store_open(data2, false, &dst), 0);
	incoming_from(src, dst, oid, &in);
	store_remove(dst, other);                    /* (not held here either) */
	store_remove(dst, oid);                      /* forwarded: nothing here yet */
	assert_int_equal(store_incoming_commit(in, "test"), -EAGAIN);
	store_incoming_free(in);
	assert_int_equal(store_getattr(dst, oid, a), -ENOENT);
	/* Nor when it is fetched again after the removal (a remove forwarded
	 * here just before a fetch began, its source not yet told). */
	incoming_from(src, dst, oid, &in);
	assert_int_equal(store_incoming_commit(in, "test"), -EAGAIN);
	store_incoming_free(in);
	/* An object not removed here is installed, whatever else was. */
	{
		struct ofs_oid third = create_dfile(src);
		struct image im3 = { 0 };
		write_both(src, third, &im3, 0, 1000, 6);
		incoming_from(src, dst, third, &in);
		store_remove(dst, other);
		assert_int_equal(store_incoming_commit(in, "test"), 0);
		store_incoming_free(in);
		check_all(dst, third, &im3);
		free(im3.b);
	}
	store_close(dst);
	free(a);
	free(im.b);
}

static void test_incoming_copy_left_by_a_crash_is_dropped_at_open(void **state)
{
	struct fixture *fx = *state;
	struct store *s = open_new(fx);
	struct ofs_oid oid = create_dfile(s);
	struct store_incoming *in = NULL;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct image im = { 0 };
	char p[600], q[700];

	assert_non_null(a);
	write_both(s, oid, &im, 0, CS + 5, 4);
	getattr(s, oid, a);
	assert_int_equal(store_incoming_begin(s, oid, a, &in), 0);
	assert_int_equal(store_incoming_write(in, im.b, 100), 0);
	/* "crash": the incoming file stays (copied aside, as the process
	 * would have left it), the store closes without a commit */
	assert_int_equal(bstream_incoming_path(fx->data, oid, p, sizeof(p)), 0);
	snprintf(q, sizeof(q), "%s.keep", p);
	assert_int_equal(link(p, q), 0);
	store_incoming_free(in);
	assert_int_equal(rename(q, p), 0);
	reopen(fx);
	snprintf(q, sizeof(q), "%s/incoming", fx->data);
	assert_int_equal(count_dir(q), 0);
	check_all(fx->s, oid, &im);                  /* the old copy, whole */
	/* A crash after the records (with their intent) but before the
	 * rename: the stream waits in incoming/, the records are new. The
	 * next open installs it. */
	{
		struct kv *kv;
		char k[600], bs[600];
		store_close(fx->s);
		fx->s = NULL;
		snprintf(k, sizeof(k), "%s/kv", fx->data);
		assert_int_equal(kv_open(k, false, false, &kv), 0);
		assert_int_equal(kv_update(kv, put_intent_fn, &oid), 0);
		kv_close(kv);
		assert_int_equal(bstream_path(fx->data, oid, bs, sizeof(bs)), 0);
		assert_int_equal(rename(bs, p), 0);
		assert_int_equal(store_open(fx->data, false, &fx->s), 0);
		check_all(fx->s, oid, &im);          /* installed at open */
		assert_int_equal(count_dir(q), 0);
		/* and the intent is gone: a second open changes nothing */
		reopen(fx);
		check_all(fx->s, oid, &im);
	}
	/* A metafile's records are replaced in one transaction. */
	{
		struct ofs_oid mf = create_type(fx->s, OFS_OBJ_METAFILE);
		getattr(fx->s, mf, a);
		assert_int_equal(store_kv_put(fx->s, mf, "k", 1, "old", 3), 0);
		assert_int_equal(store_incoming_begin(fx->s, mf, a, &in), 0);
		assert_int_equal(store_incoming_kv(in, "a", 1, "1", 1), 0);
		assert_int_equal(store_incoming_kv(in, "b", 1, "2", 1), 0);
		assert_int_equal(store_incoming_kv(in, "a", 1, "x", 1), -EINVAL);   /* out of order */
		assert_int_equal(store_incoming_write(in, "x", 1), -OFS_ETYPE);
		assert_int_equal(store_incoming_commit(in, "test"), 0);
		store_incoming_free(in);
		void *v = NULL;
		size_t vn;
		assert_int_equal(store_kv_get(fx->s, mf, "k", 1, &v, &vn), -ENOENT);
		assert_int_equal(store_kv_get(fx->s, mf, "b", 1, &v, &vn), 0);
		assert_memory_equal(v, "2", 1);
		free(v);
	}
	free(a);
	free(im.b);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define INCOMING_TESTS \
		T(test_summary_many_agrees_with_summary), \
		T(test_content_many_agrees_with_summary), \
		T(test_points_many_agrees_with_points_check), \
		T(test_incoming_copy_replaces_a_bad_one_and_keeps_it_aside), \
		T(test_quarantine_purge_skips_a_time_before_the_epoch), \
		T(test_incoming_and_quarantine_names_decode_back), \
		T(test_incoming_copy_refuses_a_copy_changed_meanwhile), \
		T(test_incoming_copy_not_installed_after_its_removal), \
		T(test_incoming_copy_left_by_a_crash_is_dropped_at_open),
	const struct CMUnitTest tests[] = {
		INCOMING_TESTS
		T(test_init_returns_sid_and_open_reports_it),
		T(test_behind_mark_is_durable_keeps_first_reason_and_needs_no_object),
		T(test_stale_for_lists_only_that_server_in_pages),
		T(test_init_accepts_existing_empty_dir),
		T(test_a_data_dir_is_its_servers_alone_whatever_the_umask),
		T(test_a_data_dir_others_may_enter_is_not_opened),
		T(test_init_refuses_non_empty_dir),
		T(test_init_refuses_bad_chunk_sizes),
		T(test_init_refuses_bad_attributes),
		T(test_open_missing_dir_is_enoent),
		T(test_open_foreign_format_is_ecorrupt),
		T(test_open_unknown_format_version_is_eversion),
		T(test_second_writable_open_is_ebusy_read_only_works),
		cmocka_unit_test(test_store_close_null_is_noop),
		T(test_fresh_store_has_no_root_until_one_is_adopted),
		T(test_create_dfile_keeps_owner_and_stripe),
		T(test_create_metafile_keeps_owner_name_and_layout),
		T(test_create_directory_and_dirdata_keep_owner),
		T(test_create_refuses_invalid_type_and_layout),
		T(test_create_oid_of_existing_object_is_eexist_and_keeps_it),
		T(test_getattr_of_unknown_oid_is_enoent),
		T(test_aligned_full_chunk_writes_set_exact_digests),
		T(test_unaligned_write_inside_one_chunk_updates_its_digest),
		T(test_write_crossing_chunk_boundaries_updates_every_chunk),
		T(test_overwrite_in_the_middle_keeps_other_digests),
		T(test_append_lengthens_last_chunk_and_rehashes_it),
		T(test_write_past_end_leaves_gap_of_zeros),
		T(test_empty_write_changes_nothing),
		T(test_write_past_max_stream_is_efbig),
		T(test_metafile_layout_and_size_limits),
		T(test_unstable_appends_bounded_in_bytes),
		T(test_incoming_kv_part_bounded_in_bytes),
		T(test_write_far_past_end_records_nothing_for_the_hole),
		T(test_incoming_copy_of_a_file_with_holes_keeps_them),
		T(test_read_returns_exact_bytes_short_at_eof_zero_past),
		T(test_flipped_byte_fails_reads_of_its_chunk_only),
		T(test_truncated_stream_fails_reads_not_garbage),
		T(test_missing_stream_fails_reads),
		T(test_setting_handles_and_entries_to_what_they_are_keeps_the_version),
		T(test_retried_replace_reports_what_the_first_replaced),
		T(test_setattr_part_replaces_only_that_part),
		T(test_operations_on_the_wrong_type_are_etype),
		T(test_remove_deletes_records_chunks_kv_and_stream),
		T(test_remove_of_non_empty_dirdata_is_enotempty),
		T(test_dirent_list_pages_through_2500_entries_in_order),
		T(test_dirent_list_more_is_false_when_page_ends_exactly),
		T(test_dirent_create_lookup_remove),
		T(test_dirent_create_of_existing_name_is_eexist),
		T(test_dirent_replace_of_file_returns_old_entry),
		T(test_dirent_replace_onto_directory_is_eisdir),
		T(test_dirent_invalid_names_are_ename),
		T(test_kv_put_get_del),
		T(test_kv_list_pages_in_key_order),
		T(test_kv_list_is_bounded_in_bytes),
		T(test_data_survives_close_and_reopen),
		T(test_concurrent_writers_and_creators_keep_digests_exact),
		T(test_failed_fdatasync_fails_write_and_changes_no_record),
		T(test_failed_fdatasync_bytes_are_not_adopted_by_a_later_write),
		T(test_failed_pwrite_enospc_fails_write_and_changes_nothing),
		T(test_failed_fdatasync_of_overwrite_leaves_old_bytes_readable),
		T(test_failed_pread_fails_read_and_returns_nothing),
		T(test_failed_fsync_fails_dfile_create_and_leaves_nothing),
		T(test_stream_folder_entry_is_synced_after_a_failed_folder_sync),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
