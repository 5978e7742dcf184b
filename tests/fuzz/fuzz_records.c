/*
 * fuzz_records.c - libFuzzer target for the decoders of the server's LMDB
 * values (store/records.h): object records, dirents, chunk digests and
 * keys, the site attributes and the root (KV_META), server-table entries
 * (KV_SERVERS, the old form too), stale records and the missed version
 * their reason may name, and move records.
 *
 * Every decoder gets the whole input. Each encoding is canonical, so what
 * decodes must re-encode to exactly the bytes it came from (a server
 * entry of the old form: those bytes and the 16 zero bytes it lacked); a
 * mismatch aborts, as does any sanitizer report.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "store/records.h"
#include "tests/fuzz/fuzz_check.h"

/* w holds exactly the n bytes at b (then, when tail, 16 zero bytes). */
static void check_same(struct wbuf *w, const uint8_t *b, size_t n, bool tail)
{
	static const uint8_t zero[16];

	CHECK(wbuf_error(w) == 0);
	CHECK(w->len == n + (tail ? 16 : 0));
	CHECK(n == 0 || memcmp(w->data, b, n) == 0);
	CHECK(!tail || memcmp(w->data + n, zero, 16) == 0);
	wbuf_free(w);
}

static void fuzz_object(const uint8_t *b, size_t n)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct wbuf w;
	int rc;

	if (!a)
		return;
	rc = rec_decode_object(b, n, a);
	CHECK(rc == 0 || rc == -OFS_ECORRUPT || rc == -OFS_EVERSION);
	if (rc == 0) {
		CHECK(a->nparts <= OFS_MAX_STRIPES && a->nsids <= OFS_MAX_REPLICAS &&
		      a->nstale <= OFS_MAX_REPLICAS);
		wbuf_init(&w);
		CHECK(rec_encode_object(&w, a) == 0);
		check_same(&w, b, n, false);
	}
	free(a);
}

static void fuzz_dirent_digest(const uint8_t *b, size_t n)
{
	struct ofs_dirent d;
	struct ofs_digest dg;
	struct ofs_handle h;
	struct wbuf w;
	uint64_t idx;

	if (rec_decode_dirent(b, n, &d) == 0) {
		CHECK(d.handle.nsids <= OFS_MAX_REPLICAS);
		wbuf_init(&w);
		CHECK(rec_encode_dirent(&w, &d) == 0);
		check_same(&w, b, n, false);
	}
	if (rec_decode_digest(b, n, &dg) == 0) {
		CHECK(n == OFS_DIGEST_LEN && memcmp(dg.b, b, n) == 0);
	}
	if (rec_chunk_key_index(b, n, &idx) == 0) {
		uint8_t key[REC_CHUNK_KEY];
		struct ofs_oid oid;

		CHECK(n == REC_CHUNK_KEY);
		memcpy(oid.b, b, OFS_OID_LEN);
		rec_chunk_key(oid, idx, key);
		CHECK(memcmp(key, b, n) == 0);
	}
	/* The root (KV_META "root"): a handle. */
	if (proto_decode_handle_reply(b, n, &h) == 0) {
		wbuf_init(&w);
		wbuf_handle(&w, &h);
		check_same(&w, b, n, false);
	}
}

static void fuzz_attrs_move(const uint8_t *b, size_t n)
{
	char attrs[REC_MAX_ATTRS][REC_ATTR_LEN];
	const char *p[REC_MAX_ATTRS];
	struct ofs_sid sid;
	struct wbuf w;
	size_t cnt;

	if (rec_decode_attrs(b, n, attrs, &cnt) == 0) {
		CHECK(cnt <= REC_MAX_ATTRS);
		for (size_t i = 0; i < cnt; i++) {
			CHECK(rec_attr_valid(attrs[i]));
			p[i] = attrs[i];
		}
		wbuf_init(&w);
		CHECK(rec_encode_attrs(&w, p, cnt) == 0);
		check_same(&w, b, n, false);
	}
	if (rec_decode_move(b, n, &sid) == 0)
		CHECK(n == OFS_OID_LEN && memcmp(sid.b, b, n) == 0);
}

static void fuzz_server(const uint8_t *b, size_t n)
{
	struct ofs_server *e = malloc(sizeof(*e));
	struct wbuf w;
	int rc;

	if (!e)
		return;
	rc = rec_decode_server(b, n, e);
	CHECK(rc == 0 || rc == -OFS_ECORRUPT);
	if (rc == 0) {
		CHECK(e->nattrs <= OFS_SERVER_ATTRS && e->state <= OFS_SERVER_OUT);
		wbuf_init(&w);
		CHECK(rec_encode_server(&w, e) == 0);
		/* the new form, or the old one read with two zero counters */
		check_same(&w, b, n, w.len == n + 16);
	}
	free(e);
}

static void fuzz_stale(const uint8_t *b, size_t n)
{
	char reason[REC_REASON_LEN], want[64];
	struct ofs_oid oid;
	struct ofs_sid sid;
	const char *at;
	uint64_t v;

	if (rec_decode_stale_key(b, n, &oid, &sid) == 0) {
		uint8_t key[REC_STALE_KEY];
		rec_stale_key(oid, sid, key);
		CHECK(n == REC_STALE_KEY && memcmp(key, b, n) == 0);
	}
	rec_decode_stale(b, n, reason);
	CHECK(strlen(reason) < REC_REASON_LEN && strlen(reason) <= n);
	CHECK(memcmp(reason, b, strlen(reason)) == 0);
	/* A missed version is read back as its writer spelt it. */
	v = rec_missed_version(reason);
	if (v) {
		at = strstr(reason, "missed version ");
		CHECK(at != NULL);
		snprintf(want, sizeof(want), "missed version %llu:", (unsigned long long)v);
		CHECK(strncmp(at, want, strlen(want)) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_object(data, size);
	fuzz_dirent_digest(data, size);
	fuzz_attrs_move(data, size);
	fuzz_server(data, size);
	fuzz_stale(data, size);
	return 0;
}
