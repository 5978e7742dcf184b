/*
 * test_records.c - the LMDB record layout: an object record round-trips
 * every field, every truncation and every bad format or type byte is
 * rejected (records read back from disk are untrusted), chunk keys sort
 * by index in memcmp order, dirent values round-trip and reject a bad
 * type, and the store's other records (site attributes, server-table
 * entries old and new, stale records, moves, change notes) round-trip
 * and reject what their writers never write.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "store/records.h"

static struct ofs_oid mk_oid(uint8_t seed)
{
	struct ofs_oid o;

	for (int i = 0; i < OFS_OID_LEN; i++)
		o.b[i] = (uint8_t)(seed + i * 11 + 1);
	return o;
}

static struct ofs_sid mk_sid(uint8_t seed)
{
	struct ofs_sid s;

	for (int i = 0; i < OFS_OID_LEN; i++)
		s.b[i] = (uint8_t)(seed ^ (i * 29 + 3));
	return s;
}

/* Every field set, every list at its maximum, the longest valid name. */
static void mk_full_attr(struct ofs_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = OFS_OBJ_METAFILE;
	a->version = UINT64_C(0x0102030405060708);
	a->size = UINT64_MAX - 1;
	a->mode = 0640;
	a->uid = 4242;
	a->gid = UINT32_MAX;
	a->ctime_ns = INT64_MIN + 1;
	a->mtime_ns = INT64_MAX;
	a->chunk_size = 1u << 20;
	a->backref.owner = mk_oid(0x90);
	a->backref.stripe = 63;
	memset(a->backref.name, 'n', OFS_NAME_MAX);
	a->backref.name[OFS_NAME_MAX] = '\0';
	a->nsids = OFS_MAX_REPLICAS;
	for (int i = 0; i < OFS_MAX_REPLICAS; i++)
		a->sids[i] = mk_sid((uint8_t)(0x10 + i));
	a->nstale = 2;
	a->stale[0] = mk_sid(0x11);
	a->stale[1] = mk_sid(0x13);
	strcpy(a->dist, "simple_stripe");
	a->strip_size = 1u << 16;
	a->replicas = 3;
	a->confidence = 2;
	a->nparts = OFS_MAX_STRIPES;
	for (int i = 0; i < OFS_MAX_STRIPES; i++) {
		a->parts[i].oid = mk_oid((uint8_t)(0x20 + i));
		a->parts[i].nsids = (uint8_t)(1 + i % OFS_MAX_REPLICAS);
		for (int j = 0; j < a->parts[i].nsids; j++)
			a->parts[i].sids[j] = mk_sid((uint8_t)(0x80 + i + j));
	}
}

static void assert_attr_equal(const struct ofs_attr *x, const struct ofs_attr *y)
{
	assert_int_equal(x->type, y->type);
	assert_true(x->version == y->version);
	assert_true(x->size == y->size);
	assert_int_equal(x->mode, y->mode);
	assert_int_equal(x->uid, y->uid);
	assert_int_equal(x->gid, y->gid);
	assert_true(x->ctime_ns == y->ctime_ns);
	assert_true(x->mtime_ns == y->mtime_ns);
	assert_int_equal(x->chunk_size, y->chunk_size);
	assert_memory_equal(x->backref.owner.b, y->backref.owner.b, OFS_OID_LEN);
	assert_int_equal(x->backref.stripe, y->backref.stripe);
	assert_string_equal(x->backref.name, y->backref.name);
	assert_int_equal(x->nsids, y->nsids);
	for (int i = 0; i < x->nsids; i++)
		assert_memory_equal(x->sids[i].b, y->sids[i].b, OFS_OID_LEN);
	assert_int_equal(x->nstale, y->nstale);
	for (int i = 0; i < x->nstale; i++)
		assert_memory_equal(x->stale[i].b, y->stale[i].b, OFS_OID_LEN);
	assert_string_equal(x->dist, y->dist);
	assert_int_equal(x->strip_size, y->strip_size);
	assert_int_equal(x->replicas, y->replicas);
	assert_int_equal(x->confidence, y->confidence);
	assert_int_equal(x->nparts, y->nparts);
	for (int i = 0; i < x->nparts; i++) {
		assert_memory_equal(x->parts[i].oid.b, y->parts[i].oid.b, OFS_OID_LEN);
		assert_int_equal(x->parts[i].nsids, y->parts[i].nsids);
		for (int j = 0; j < x->parts[i].nsids; j++)
			assert_memory_equal(x->parts[i].sids[j].b, y->parts[i].sids[j].b,
					    OFS_OID_LEN);
	}
}

static void encode_full(struct wbuf *w, struct ofs_attr *a)
{
	mk_full_attr(a);
	wbuf_init(w);
	assert_int_equal(rec_encode_object(w, a), 0);
}

static void test_object_record_round_trips_every_field(void **state)
{
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	encode_full(&w, a);
	assert_int_equal(w.data[0], REC_FORMAT);
	memset(b, 0xa5, sizeof(*b));
	assert_int_equal(rec_decode_object(w.data, w.len, b), 0);
	assert_attr_equal(a, b);
	wbuf_free(&w);
	free(a);
	free(b);
}

static void test_object_record_round_trips_every_type(void **state)
{
	static const uint8_t types[] = { OFS_OBJ_METAFILE, OFS_OBJ_DFILE,
					 OFS_OBJ_DIRECTORY, OFS_OBJ_DIRDATA };
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < sizeof(types); i++) {
		struct wbuf w;

		encode_full(&w, a);
		wbuf_free(&w);
		a->type = types[i];
		wbuf_init(&w);
		assert_int_equal(rec_encode_object(&w, a), 0);
		assert_int_equal(rec_decode_object(w.data, w.len, b), 0);
		assert_attr_equal(a, b);
		wbuf_free(&w);
	}
	free(a);
	free(b);
}

static void test_object_record_rejects_every_truncation(void **state)
{
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	encode_full(&w, a);
	for (size_t n = 0; n < w.len; n++) {
		/* A copy of exactly n bytes, so ASan sees any read past it. */
		uint8_t *cut = malloc(n ? n : 1);
		int rc;

		assert_non_null(cut);
		memcpy(cut, w.data, n);
		rc = rec_decode_object(cut, n, b);
		if (rc != -OFS_ECORRUPT && rc != -OFS_ETOOBIG && rc != -OFS_ENAME)
			fail_msg("truncation to %zu of %zu bytes gave %d", n, w.len, rc);
		free(cut);
	}
	wbuf_free(&w);
	free(a);
	free(b);
}

static void test_object_record_rejects_trailing_byte(void **state)
{
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	encode_full(&w, a);
	wbuf_u8(&w, 0);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(rec_decode_object(w.data, w.len, b), -OFS_ECORRUPT);
	wbuf_free(&w);
	free(a);
	free(b);
}

static void test_object_record_unknown_format_is_eversion(void **state)
{
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	encode_full(&w, a);
	w.data[0] = REC_FORMAT + 1;
	assert_int_equal(rec_decode_object(w.data, w.len, b), -OFS_EVERSION);
	w.data[0] = 0;
	assert_int_equal(rec_decode_object(w.data, w.len, b), -OFS_EVERSION);
	w.data[0] = 0xff;
	assert_int_equal(rec_decode_object(w.data, w.len, b), -OFS_EVERSION);
	/* The format byte alone, unknown: still a version, not a corruption. */
	assert_int_equal(rec_decode_object(w.data, 1, b), -OFS_EVERSION);
	wbuf_free(&w);
	free(a);
	free(b);
}

static void test_object_record_invalid_type_is_ecorrupt(void **state)
{
	static const uint8_t bad[] = { OFS_OBJ_NONE, OFS_OBJ_DIRDATA + 1, 0x7f, 0xff };
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	encode_full(&w, a);
	/* The type is the first byte of the attribute, right after the format. */
	assert_int_equal(w.data[1], OFS_OBJ_METAFILE);
	for (size_t i = 0; i < sizeof(bad); i++) {
		w.data[1] = bad[i];
		assert_int_equal(rec_decode_object(w.data, w.len, b), -OFS_ECORRUPT);
	}
	wbuf_free(&w);
	free(a);
	free(b);
}

static void test_object_record_rejects_bad_backref_name(void **state)
{
	struct ofs_attr *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	static const char *bad[] = { ".", "..", "a/b" };

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wbuf w;
		int rc;

		mk_full_attr(a);
		strcpy(a->backref.name, bad[i]);
		wbuf_init(&w);
		assert_int_equal(rec_encode_object(&w, a), 0);
		rc = rec_decode_object(w.data, w.len, b);
		assert_true(rc == -OFS_ECORRUPT || rc == -OFS_ENAME);
		wbuf_free(&w);
	}
	free(a);
	free(b);
}

static void test_chunk_key_round_trips_index(void **state)
{
	static const uint64_t idx[] = { 0, 1, 255, 256, 65535, UINT64_C(1) << 32,
					UINT64_MAX };
	struct ofs_oid oid = mk_oid(3);

	(void)state;
	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		uint8_t key[REC_CHUNK_KEY];
		uint64_t got = 12345;

		rec_chunk_key(oid, idx[i], key);
		assert_memory_equal(key, oid.b, OFS_OID_LEN);
		assert_int_equal(rec_chunk_key_index(key, sizeof(key), &got), 0);
		assert_true(got == idx[i]);
	}
}

static void test_chunk_key_sorts_by_index_in_memcmp_order(void **state)
{
	struct ofs_oid oid = mk_oid(9);
	uint8_t k1[REC_CHUNK_KEY], k256[REC_CHUNK_KEY], k2[REC_CHUNK_KEY], kbig[REC_CHUNK_KEY];

	(void)state;
	rec_chunk_key(oid, 1, k1);
	rec_chunk_key(oid, 2, k2);
	rec_chunk_key(oid, 256, k256);
	rec_chunk_key(oid, UINT64_C(1) << 40, kbig);
	assert_true(memcmp(k1, k256, REC_CHUNK_KEY) < 0);
	assert_true(memcmp(k1, k2, REC_CHUNK_KEY) < 0);
	assert_true(memcmp(k2, k256, REC_CHUNK_KEY) < 0);
	assert_true(memcmp(k256, kbig, REC_CHUNK_KEY) < 0);
}

static void test_chunk_key_index_rejects_wrong_length(void **state)
{
	uint8_t key[REC_CHUNK_KEY + 1];
	uint64_t got = 77;

	(void)state;
	rec_chunk_key(mk_oid(1), 5, key);
	assert_int_equal(rec_chunk_key_index(key, REC_CHUNK_KEY - 1, &got), -OFS_ECORRUPT);
	assert_int_equal(rec_chunk_key_index(key, REC_CHUNK_KEY + 1, &got), -OFS_ECORRUPT);
	assert_int_equal(rec_chunk_key_index(key, 0, &got), -OFS_ECORRUPT);
	assert_true(got == 77);
}

static void test_digest_decode_requires_exact_length(void **state)
{
	struct ofs_digest d = checksum_buf("abc", 3), out;

	(void)state;
	assert_int_equal(rec_decode_digest(d.b, OFS_DIGEST_LEN, &out), 0);
	assert_true(digest_eq(d, out));
	assert_int_equal(rec_decode_digest(d.b, OFS_DIGEST_LEN - 1, &out), -OFS_ECORRUPT);
	assert_int_equal(rec_decode_digest(d.b, 0, &out), -OFS_ECORRUPT);
}

static void test_kv_key_is_oid_then_key(void **state)
{
	uint8_t out[REC_KV_KEY_MAX];
	struct ofs_oid oid = mk_oid(5);
	size_t n = rec_kv_key(oid, "name", 4, out);

	(void)state;
	assert_int_equal(n, OFS_OID_LEN + 4);
	assert_memory_equal(out, oid.b, OFS_OID_LEN);
	assert_memory_equal(out + OFS_OID_LEN, "name", 4);
	assert_int_equal(rec_kv_key(oid, NULL, 0, out), OFS_OID_LEN);
}

static void test_dirent_round_trips(void **state)
{
	static const uint8_t types[] = { OFS_OBJ_METAFILE, OFS_OBJ_DIRECTORY };

	(void)state;
	for (size_t t = 0; t < sizeof(types); t++) {
		struct ofs_dirent d, out;
		struct wbuf w;

		memset(&d, 0, sizeof(d));
		d.type = types[t];
		d.handle.oid = mk_oid(0x33);
		d.handle.nsids = OFS_MAX_REPLICAS;
		for (int i = 0; i < OFS_MAX_REPLICAS; i++)
			d.handle.sids[i] = mk_sid((uint8_t)(0x44 + i));
		wbuf_init(&w);
		assert_int_equal(rec_encode_dirent(&w, &d), 0);
		assert_int_equal(rec_decode_dirent(w.data, w.len, &out), 0);
		assert_int_equal(out.type, d.type);
		assert_memory_equal(out.handle.oid.b, d.handle.oid.b, OFS_OID_LEN);
		assert_int_equal(out.handle.nsids, d.handle.nsids);
		for (int i = 0; i < OFS_MAX_REPLICAS; i++)
			assert_memory_equal(out.handle.sids[i].b, d.handle.sids[i].b, OFS_OID_LEN);
		/* Every truncation and a trailing byte are rejected. */
		for (size_t n = 0; n < w.len; n++)
			assert_int_equal(rec_decode_dirent(w.data, n, &out), -OFS_ECORRUPT);
		wbuf_u8(&w, 0);
		assert_int_equal(rec_decode_dirent(w.data, w.len, &out), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_dirent_rejects_bad_type(void **state)
{
	static const uint8_t bad[] = { OFS_OBJ_NONE, OFS_OBJ_DFILE, OFS_OBJ_DIRDATA, 9, 0xff };
	struct ofs_dirent d, out;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	d.handle.oid = mk_oid(0x21);
	d.handle.nsids = 1;
	d.handle.sids[0] = mk_sid(0x22);
	for (size_t i = 0; i < sizeof(bad); i++) {
		struct wbuf w;

		wbuf_init(&w);
		assert_int_equal(rec_encode_dirent(&w, &d), 0);
		w.data[0] = bad[i];
		assert_int_equal(rec_decode_dirent(w.data, w.len, &out), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_dirent_rejects_nsids_over_max(void **state)
{
	struct ofs_dirent d, out;
	struct wbuf w;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_DIRECTORY;
	d.handle.oid = mk_oid(0x21);
	d.handle.nsids = 1;
	d.handle.sids[0] = mk_sid(0x22);
	wbuf_init(&w);
	assert_int_equal(rec_encode_dirent(&w, &d), 0);
	/* type u8, oid 16 bytes, then the count. */
	assert_int_equal(w.data[1 + OFS_OID_LEN], 1);
	w.data[1 + OFS_OID_LEN] = OFS_MAX_REPLICAS + 1;
	assert_int_equal(rec_decode_dirent(w.data, w.len, &out), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_attrs_round_trip_and_reject_invalid(void **state)
{
	const char *attrs[] = { "rack=r1", "zone=z2" };
	const char *bad[] = { "=r1", "rack", "ra ck=1" };
	char out[REC_MAX_ATTRS][REC_ATTR_LEN];
	size_t n = 99;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	assert_int_equal(rec_encode_attrs(&w, attrs, 2), 0);
	assert_int_equal(rec_decode_attrs(w.data, w.len, out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0], "rack=r1");
	assert_string_equal(out[1], "zone=z2");
	for (size_t i = 0; i < w.len; i++)
		assert_int_equal(rec_decode_attrs(w.data, i, out, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wbuf_init(&w);
		assert_int_equal(rec_encode_attrs(&w, &bad[i], 1), -EINVAL);
		/* the same bytes written by hand do not decode either */
		w.len = 0;
		wbuf_u16(&w, 1);
		wbuf_str(&w, bad[i]);
		assert_int_equal(rec_decode_attrs(w.data, w.len, out, &n), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_server_record_round_trips_and_reads_legacy(void **state)
{
	struct ofs_server e, out;
	struct wbuf w;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.sid = mk_sid(0x71);
	snprintf(e.address, sizeof(e.address), "127.0.0.1:7000");
	e.weight_milli = 1000;
	e.nattrs = 1;
	snprintf(e.attrs[0], sizeof(e.attrs[0]), "rack=r1");
	e.version = 3;
	e.self_version = 4;
	e.root_version = 5;
	wbuf_init(&w);
	assert_int_equal(rec_encode_server(&w, &e), 0);
	assert_int_equal(rec_decode_server(w.data, w.len, &out), 0);
	assert_int_equal(out.self_version, 4);
	assert_int_equal(out.root_version, 5);
	/* without the last two counters: read as zero */
	assert_int_equal(rec_decode_server(w.data, w.len - 16, &out), 0);
	assert_string_equal(out.address, "127.0.0.1:7000");
	assert_int_equal(out.version, 3);
	assert_int_equal(out.self_version, 0);
	assert_int_equal(out.root_version, 0);
	assert_int_equal(rec_decode_server(w.data, w.len - 8, &out), -OFS_ECORRUPT);
	assert_int_equal(rec_decode_server(w.data, w.len - 17, &out), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_stale_record_key_and_reason(void **state)
{
	uint8_t key[REC_STALE_KEY];
	char reason[REC_REASON_LEN], longer[400];
	struct ofs_oid oid;
	struct ofs_sid sid;

	(void)state;
	rec_stale_key(mk_oid(1), mk_sid(2), key);
	assert_int_equal(rec_decode_stale_key(key, sizeof(key), &oid, &sid), 0);
	assert_memory_equal(oid.b, mk_oid(1).b, OFS_OID_LEN);
	assert_memory_equal(sid.b, mk_sid(2).b, OFS_OID_LEN);
	assert_int_equal(rec_decode_stale_key(key, sizeof(key) - 1, &oid, &sid), -OFS_ECORRUPT);
	rec_decode_stale("why\0not", 7, reason);
	assert_string_equal(reason, "why");
	rec_decode_stale(NULL, 0, reason);
	assert_string_equal(reason, "");
	memset(longer, 'x', sizeof(longer));
	rec_decode_stale(longer, sizeof(longer), reason);
	assert_int_equal(strlen(reason), REC_REASON_LEN - 1);
}

static void test_move_record_is_a_sid(void **state)
{
	struct ofs_sid sid = mk_sid(9), out;

	(void)state;
	assert_int_equal(rec_decode_move(sid.b, OFS_OID_LEN, &out), 0);
	assert_memory_equal(out.b, sid.b, OFS_OID_LEN);
	assert_int_equal(rec_decode_move(sid.b, OFS_OID_LEN - 1, &out), -OFS_ECORRUPT);
}

static void test_note_round_trips_and_rejects_invalid(void **state)
{
	struct rec_note set = { .kind = REC_NOTE_SET, .k = (const uint8_t *)"key", .kn = 3,
				.v = (const uint8_t *)"value", .vn = 5 };
	struct rec_note del = { .kind = REC_NOTE_REMOVED, .k = (const uint8_t *)"key", .kn = 3 };
	struct rec_note out;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	assert_int_equal(rec_encode_note(&w, &set), 0);
	assert_int_equal(rec_decode_note(w.data, w.len, &out), 0);
	assert_int_equal(out.kind, REC_NOTE_SET);
	assert_int_equal(out.kn, 3);
	assert_memory_equal(out.k, "key", 3);
	assert_int_equal(out.vn, 5);
	assert_memory_equal(out.v, "value", 5);
	for (size_t i = 0; i < w.len; i++)
		assert_int_equal(rec_decode_note(w.data, i, &out), -OFS_ECORRUPT);
	w.data[0] = 3;                       /* not a kind */
	assert_int_equal(rec_decode_note(w.data, w.len, &out), -OFS_ECORRUPT);
	w.data[0] = REC_NOTE_REMOVED;        /* a removal with a value */
	assert_int_equal(rec_decode_note(w.data, w.len, &out), -OFS_ECORRUPT);
	w.len = 0;
	assert_int_equal(rec_encode_note(&w, &del), 0);
	assert_int_equal(rec_decode_note(w.data, w.len, &out), 0);
	assert_int_equal(out.kind, REC_NOTE_REMOVED);
	assert_int_equal(out.vn, 0);
	del.kn = 0;
	assert_int_equal(rec_encode_note(&w, &del), -EINVAL);
	wbuf_free(&w);
}

/* The missed version is read back only as REC_MISSED_FMT writes it:
 * sscanf's %llu also took leading spaces, a sign (a "-1" read as
 * 2^64 - 1), leading zeros, and saturated on overflow. */
static void test_missed_version_is_read_only_as_written(void **state)
{
	static const char *const bad[] = {
		"missed version  43: x", "missed version -1: x", "missed version +5: x",
		"missed version 05: x", "missed version 0: x", "missed version 18446744073709551616: x",
		"missed version 99999999999999999999999: x", "missed version 7 : x",
	};
	char r[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rec_missed_version(bad[i]), 0);
	snprintf(r, sizeof(r), REC_MISSED_FMT "x", 18446744073709551615ULL);
	assert_true(rec_missed_version(r) == UINT64_MAX);
	assert_int_equal(rec_missed_version("behind per 0a0b: missed version 42: x"), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object_record_round_trips_every_field),
		cmocka_unit_test(test_object_record_round_trips_every_type),
		cmocka_unit_test(test_object_record_rejects_every_truncation),
		cmocka_unit_test(test_object_record_rejects_trailing_byte),
		cmocka_unit_test(test_object_record_unknown_format_is_eversion),
		cmocka_unit_test(test_object_record_invalid_type_is_ecorrupt),
		cmocka_unit_test(test_object_record_rejects_bad_backref_name),
		cmocka_unit_test(test_chunk_key_round_trips_index),
		cmocka_unit_test(test_chunk_key_sorts_by_index_in_memcmp_order),
		cmocka_unit_test(test_chunk_key_index_rejects_wrong_length),
		cmocka_unit_test(test_digest_decode_requires_exact_length),
		cmocka_unit_test(test_kv_key_is_oid_then_key),
		cmocka_unit_test(test_dirent_round_trips),
		cmocka_unit_test(test_dirent_rejects_bad_type),
		cmocka_unit_test(test_dirent_rejects_nsids_over_max),
		cmocka_unit_test(test_attrs_round_trip_and_reject_invalid),
		cmocka_unit_test(test_server_record_round_trips_and_reads_legacy),
		cmocka_unit_test(test_stale_record_key_and_reason),
		cmocka_unit_test(test_move_record_is_a_sid),
		cmocka_unit_test(test_note_round_trips_and_rejects_invalid),
		cmocka_unit_test(test_missed_version_is_read_only_as_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
