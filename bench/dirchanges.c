/*
 * dirchanges.c - catching a directory's copy up by the changes it missed
 * (changelog.h) against fetching the copy whole, the two ways the
 * catch-up has, in one process on one disk.
 *
 *   dirchanges DIR
 *
 * Three fresh stores under DIR: a current copy and two copies of one
 * dirdata holding OFS_BENCH_DIRCU_ENTRIES (default 100 000) entries, all
 * three equal at one version (installed as a whole fetch installs them).
 * The current copy then takes OFS_BENCH_DIRCU_MISSED (default 100) new
 * entries that the other two miss. One copy is caught up by changes:
 * CHANGES read at the current copy (store_changes) and replayed
 * (store_catch_up_changes). The other is fetched whole the way repair's
 * fetch does it: the current copy's entries listed in pages of
 * OFS_MAX_LIST, received (store_incoming_kv), compared by digest,
 * committed. Both end equal to the current copy (checked). What the
 * network would carry is reported as bytes: the notes against every
 * entry's key and value. It prints one line
 *
 *   dirchanges: entries=N missed=M changes_s=.. whole_s=.. ratio=..
 *               notes_bytes=.. whole_bytes=..
 *
 * (ratio = whole_s / changes_s). Exit 0, 1 when a step fails, 2 on usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/checksum.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "store/records.h"
#include "store/store.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long env_num(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n == 0) {
		fprintf(stderr, "dirchanges: %s=%s: not a positive number\n", name, v);
		exit(2);
	}
	return n;
}

#define TRY(what, call)                                                                  \
	do {                                                                             \
		int rc_ = (call);                                                        \
		if (rc_) {                                                               \
			fprintf(stderr, "dirchanges: %s: %s\n", what, ofs_strerror(rc_)); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static struct store *new_store(const char *dir, const char *name)
{
	char p[4096];
	struct ofs_sid sid;
	struct store *s;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	TRY("store_init", store_init(p, 4096, NULL, 0, &sid));
	TRY("store_open", store_open(p, false, &s));
	return s;
}

static struct ofs_dirent entry(unsigned long i)
{
	struct ofs_dirent d;

	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	for (int b = 0; b < OFS_OID_LEN; b++)
		d.handle.oid.b[b] = (uint8_t)((i >> ((b % 4) * 8)) + b + 1);
	d.handle.nsids = 3;
	for (int c = 0; c < 3; c++)
		memset(d.handle.sids[c].b, 0x51 + c, OFS_OID_LEN);
	return d;
}

/* The dirdata with n entries, installed in s in one transaction. */
static void install(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
		    unsigned long n)
{
	struct store_incoming *in;
	char name[32];

	TRY("store_incoming_begin", store_incoming_begin(s, oid, a, &in));
	for (unsigned long i = 0; i < n; i++) {
		struct ofs_dirent d = entry(i);
		struct wbuf w;
		wbuf_init(&w);
		snprintf(name, sizeof(name), "e%09lu", i);
		TRY("rec_encode_dirent", rec_encode_dirent(&w, &d));
		TRY("store_incoming_kv", store_incoming_kv(in, name, strlen(name), w.data, w.len));
		wbuf_free(&w);
	}
	TRY("store_incoming_commit", store_incoming_commit(in, "bench"));
	store_incoming_free(in);
}

/* A whole fetch of src's copy into s, as repair's fetch receives one. */
struct whole {
	struct store_incoming *in;
	size_t bytes;
	char last[OFS_MAX_KEY + 1];
	size_t lastn;
	unsigned long got;
};

static int take(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct whole *wh = arg;

	wh->bytes += kn + vn;
	memcpy(wh->last, k, kn);
	wh->lastn = kn;
	wh->got++;
	return store_incoming_kv(wh->in, k, kn, v, vn);
}

static size_t fetch_whole(struct store *src, struct store *s, struct ofs_oid oid)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_summary sm;
	struct ofs_digest d;
	struct whole wh = { 0 };
	bool more = true;

	if (!a)
		exit(1);
	TRY("store_getattr", store_getattr(src, oid, a));
	TRY("store_summary", store_summary(src, oid, &sm));
	TRY("store_incoming_begin", store_incoming_begin(s, oid, a, &wh.in));
	while (more) {
		wh.got = 0;
		TRY("store_kv_list", store_kv_list(src, oid, wh.lastn ? wh.last : NULL, wh.lastn,
						   OFS_MAX_LIST, take, &wh, &more));
		if (wh.got == 0)
			break;
	}
	TRY("store_incoming_summary", store_incoming_summary(wh.in, &d));
	if (!digest_eq(d, sm.digest)) {
		fprintf(stderr, "dirchanges: the whole copy differs from its source\n");
		exit(1);
	}
	TRY("store_incoming_commit", store_incoming_commit(wh.in, "bench"));
	store_incoming_free(wh.in);
	free(a);
	return wh.bytes;
}

static void same(struct store *a, struct store *b, struct ofs_oid oid, const char *what)
{
	struct ofs_summary x, y;

	TRY("store_summary", store_summary(a, oid, &x));
	TRY("store_summary", store_summary(b, oid, &y));
	if (x.version != y.version || !digest_eq(x.digest, y.digest)) {
		fprintf(stderr, "dirchanges: the copy caught up %s is not the current one\n", what);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned long n = env_num("OFS_BENCH_DIRCU_ENTRIES", 100000);
	unsigned long m = env_num("OFS_BENCH_DIRCU_MISSED", 100);
	struct store *src, *bych, *whole;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_summary base;
	struct ofs_oid oid;
	struct ofs_digest d;
	struct wbuf notes;
	uint64_t version;
	size_t whole_bytes;
	char name[32];
	double t0, t1, t2;

	if (argc != 2) {
		fprintf(stderr, "usage: dirchanges DIR\n");
		return 2;
	}
	if (!a)
		return 1;
	src = new_store(argv[1], "src");
	bych = new_store(argv[1], "bychanges");
	whole = new_store(argv[1], "whole");
	a->type = OFS_OBJ_DIRDATA;
	a->mode = 0755;
	a->version = 1;
	TRY("oid_generate", oid_generate(&oid));
	install(src, oid, a, n);
	install(bych, oid, a, n);
	install(whole, oid, a, n);
	TRY("store_summary", store_summary(src, oid, &base));
	for (unsigned long i = 0; i < m; i++) {
		struct ofs_dirent e = entry(n + i);
		bool replaced;
		snprintf(name, sizeof(name), "new%06lu", i);
		TRY("store_dirent_create", store_dirent_create(src, oid, name, &e, 0, &replaced, NULL));
	}

	t0 = now();
	wbuf_init(&notes);
	TRY("store_changes", store_changes(src, oid, base.version, &notes, &version, &d));
	TRY("store_catch_up_changes", store_catch_up_changes(bych, oid, base.version, base.version,
							     notes.data, notes.len, version, &d));
	t1 = now();
	whole_bytes = fetch_whole(src, whole, oid);
	t2 = now();
	same(src, bych, oid, "by changes");
	same(src, whole, oid, "whole");
	printf("dirchanges: entries=%lu missed=%lu changes_s=%.4f whole_s=%.4f ratio=%.1f "
	       "notes_bytes=%zu whole_bytes=%zu\n", n, m, t1 - t0, t2 - t1,
	       (t2 - t1) / (t1 - t0 > 0 ? t1 - t0 : 1e-9), notes.len, whole_bytes);
	wbuf_free(&notes);
	store_close(src);
	store_close(bych);
	store_close(whole);
	free(a);
	return 0;
}
