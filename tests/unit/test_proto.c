/*
 * test_proto.c - request and reply bodies: every op and every reply type
 * round-trips exactly, and every malformed body a peer could send is
 * rejected with the code proto.h promises (truncation at every length,
 * trailing bytes, bad names, counts, types, flags and limits).
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

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"

/* ---- sample values ------------------------------------------------- */

static struct ofs_oid mk_oid(uint8_t seed)
{
	struct ofs_oid o;

	for (int i = 0; i < OFS_OID_LEN; i++)
		o.b[i] = (uint8_t)(seed + i * 7);
	return o;
}

static struct ofs_sid mk_sid(uint8_t seed)
{
	struct ofs_sid s;

	for (int i = 0; i < OFS_OID_LEN; i++)
		s.b[i] = (uint8_t)(seed ^ (i * 13));
	return s;
}

static struct ofs_handle mk_handle(uint8_t seed, uint8_t nsids)
{
	struct ofs_handle h;

	memset(&h, 0, sizeof(h));
	h.oid = mk_oid(seed);
	h.nsids = nsids;
	for (uint8_t i = 0; i < nsids; i++)
		h.sids[i] = mk_sid((uint8_t)(seed + 100 + i));
	return h;
}

static void mk_attr(struct ofs_attr *a, uint8_t type)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->version = UINT64_C(0x1122334455667788);
	a->size = UINT64_C(0xfedcba9876543210);
	a->mode = 0644;
	a->uid = 1000;
	a->gid = 0xfffffffe;
	a->ctime_ns = -5;
	a->mtime_ns = INT64_MAX;
	a->chunk_size = 1u << 20;
	a->backref.owner = mk_oid(0x40);
	a->backref.stripe = 7;
	strcpy(a->backref.name, "report.txt");
	a->nsids = 3;
	for (int i = 0; i < 3; i++)
		a->sids[i] = mk_sid((uint8_t)(0x50 + i));
	a->nstale = 1;
	a->stale[0] = mk_sid(0x51);
	strcpy(a->dist, "simple_stripe");
	a->strip_size = 65536;
	a->replicas = 3;
	a->confidence = 2;
	a->nparts = 5;
	for (int i = 0; i < 5; i++)
		a->parts[i] = mk_handle((uint8_t)(0x60 + i), (uint8_t)(i % 5));
}

static void assert_handle_equal(const struct ofs_handle *a, const struct ofs_handle *b)
{
	assert_memory_equal(a->oid.b, b->oid.b, OFS_OID_LEN);
	assert_int_equal(a->nsids, b->nsids);
	for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		assert_memory_equal(a->sids[i].b, b->sids[i].b, OFS_OID_LEN);
}

static void assert_dirent_equal(const struct ofs_dirent *a, const struct ofs_dirent *b)
{
	assert_int_equal(a->type, b->type);
	assert_handle_equal(&a->handle, &b->handle);
}

static void assert_attr_equal(const struct ofs_attr *a, const struct ofs_attr *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_true(a->ctime_ns == b->ctime_ns);
	assert_true(a->mtime_ns == b->mtime_ns);
	assert_int_equal(a->chunk_size, b->chunk_size);
	assert_memory_equal(a->backref.owner.b, b->backref.owner.b, OFS_OID_LEN);
	assert_int_equal(a->backref.stripe, b->backref.stripe);
	assert_string_equal(a->backref.name, b->backref.name);
	assert_int_equal(a->nsids, b->nsids);
	for (uint8_t i = 0; i < a->nsids; i++)
		assert_memory_equal(a->sids[i].b, b->sids[i].b, OFS_OID_LEN);
	assert_int_equal(a->nstale, b->nstale);
	for (uint8_t i = 0; i < a->nstale; i++)
		assert_memory_equal(a->stale[i].b, b->stale[i].b, OFS_OID_LEN);
	assert_string_equal(a->dist, b->dist);
	assert_int_equal(a->strip_size, b->strip_size);
	assert_int_equal(a->replicas, b->replicas);
	assert_int_equal(a->confidence, b->confidence);
	assert_int_equal(a->nparts, b->nparts);
	for (uint16_t i = 0; i < a->nparts; i++)
		assert_handle_equal(&a->parts[i], &b->parts[i]);
}

static const uint8_t sample_key[] = "user.color";
static const uint8_t sample_value[] = { 0, 1, 2, 0xff, 0 };
static const uint8_t sample_oids[2 * OFS_OID_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
							 13, 14, 15, 16, 17, 18, 19, 20 };
static const uint8_t sample_data[] = "hello, object store";

/* A valid request for op, with only the fields op uses set. */
static struct ofs_server sample_servers[2];

static void mk_servers(void)
{
	memset(sample_servers, 0, sizeof(sample_servers));
	for (int i = 0; i < 2; i++) {
		struct ofs_server *e = &sample_servers[i];
		memset(e->sid.b, 0x40 + i, sizeof(e->sid.b));
		snprintf(e->address, sizeof(e->address), "127.0.0.1:%d", 7001 + i);
		e->state = (uint8_t)i;
		e->weight_milli = 1000u + (uint32_t)i;
		e->nattrs = 2;
		snprintf(e->attrs[0], sizeof(e->attrs[0]), "rack=r%d", i + 1);
		snprintf(e->attrs[1], sizeof(e->attrs[1]), "building=b1");
		e->version = UINT64_C(1) << 40 | (uint64_t)i;
		e->last_seen_ns = 1234567890 + i;
		e->root.oid = mk_oid((uint8_t)(30 + i));
		e->root.nsids = 2;
		memset(e->root.sids[0].b, 0x50 + i, sizeof(e->root.sids[0].b));
		memset(e->root.sids[1].b, 0x60 + i, sizeof(e->root.sids[1].b));
		e->root_birth_ns = 987654321 + i;
		e->self_version = UINT64_C(1) << 50 | (uint64_t)(7 + i);
		e->root_version = UINT64_C(1) << 55 | (uint64_t)(9 + i);
	}
}

/* The SERVERS entries carry both parts' versions and the root's SID list
 * version; an entry without them (16 bytes short) is refused whole. */
static void test_servers_round_trip_self_and_root_versions(void **state)
{
	struct ofs_server *e = NULL;
	struct ofs_sid who, me;
	struct wbuf w;
	size_t n = 0;

	(void)state;
	mk_servers();
	memset(me.b, 0x77, sizeof(me.b));
	wbuf_init(&w);
	proto_encode_servers(&w, &me, sample_servers, 2);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(proto_decode_servers(w.data, w.len, true, &who, &e, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(who.b, me.b, OFS_OID_LEN);
	for (size_t i = 0; i < n; i++) {
		assert_true(e[i].self_version == sample_servers[i].self_version);
		assert_true(e[i].root_version == sample_servers[i].root_version);
		assert_memory_equal(&e[i], &sample_servers[i], sizeof(e[i]));
	}
	free(e);
	e = NULL;
	assert_int_not_equal(proto_decode_servers(w.data, w.len - 16, true, &who, &e, &n), 0);
	assert_null(e);
	wbuf_free(&w);
}

static void mk_req(struct ofs_req *q, uint16_t op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
	switch (op) {
	case OFS_OP_PING:
	case OFS_OP_GET_ROOT:
		break;
	case OFS_OP_CREATE:
		q->oid = mk_oid(7);
		mk_attr(&q->attr, OFS_OBJ_METAFILE);
		break;
	case OFS_OP_CREATE_SMALL:
		q->oid = mk_oid(7);
		mk_attr(&q->attr, OFS_OBJ_METAFILE);
		q->attr.nparts = 1;
		q->data = sample_data;
		q->data_len = sizeof(sample_data) - 1;
		q->attr.size = q->data_len;
		break;
	case OFS_OP_REMOVE:
	case OFS_OP_GETATTR:
	case OFS_OP_GET_SMALL:
	case OFS_OP_COMMIT:
		q->oid = mk_oid(1);
		break;
	case OFS_OP_SERVERS:
		mk_servers();
		q->servers = sample_servers;
		q->nservers = 2;
		break;
	case OFS_OP_SERVER_SET:
		memset(q->set.sid.b, 0x41, sizeof(q->set.sid.b));
		q->set.mask = OFS_SET_STATE | OFS_SET_ATTR;
		q->set.state = OFS_SERVER_DRAINING;
		q->set.weight_milli = 2500;
		snprintf(q->set.attr, sizeof(q->set.attr), "rack=r9");
		break;
	case OFS_OP_STATS:
		break;
	case OFS_OP_FREEZE:
		q->oid = mk_oid(18);
		q->ms = 20000;
		break;
	case OFS_OP_STOP_CHECK:
		q->max = 10;
		break;
	case OFS_OP_SUMMARY_MANY:
	case OFS_OP_GETATTR_MANY:
		q->data = sample_oids;
		q->data_len = sizeof(sample_oids);
		break;
	case OFS_OP_JOIN:
		q->task.job = 80;
		q->epoch = 0x1122334455667788ull;
		q->sid = mk_sid(6);
		q->flags = 2;
		q->reclen = OFS_OID_LEN;
		q->data = sample_oids;
		q->data_len = sizeof(sample_oids);
		break;
	case OFS_OP_SET_ROOT:
	case OFS_OP_ROOT_MOVE:
		q->root.oid = mk_oid(3);
		q->root.nsids = 1;
		memset(q->root.sids[0].b, 0x43, sizeof(q->root.sids[0].b));
		q->birth_ns = 1234567;
		break;
	case OFS_OP_SUMMARY:
	case OFS_OP_VERIFY:
		q->oid = mk_oid(12);
		break;
	case OFS_OP_REPAIR_FETCH:
		q->oid = mk_oid(16);
		q->flags = OFS_FETCH_DRYRUN;
		q->rate = 64u << 20;
		q->ncands = 2;
		q->cands[0] = mk_sid(3);
		q->cands[1] = mk_sid(4);
		snprintf(q->reason, sizeof(q->reason), "repair");
		break;
	case OFS_OP_CHANGES:
		q->oid = mk_oid(19);
		q->version = 7;
		break;
	case OFS_OP_CAPKEYS: {
		/* one key, id 5 (cap.h's wire form) */
		static uint8_t keys[1 + 4 + 32] = { 1, 0, 0, 0, 5 };
		q->data = keys;
		q->data_len = sizeof(keys);
		break;
	}
	case OFS_OP_REVOKED: {
		/* two serials: 05 and 7f01 (crl.h's wire form) */
		static const uint8_t list[] = { 0, 2, 1, 0x05, 2, 0x7f, 0x01 };
		q->data = list;
		q->data_len = sizeof(list);
		break;
	}
	case OFS_OP_STALE_CLEAR:
		q->oid = mk_oid(17);
		q->sid = mk_sid(5);
		q->version = 42;
		break;
	case OFS_OP_POINTS:
		q->oid = mk_oid(14);
		q->child = mk_oid(15);
		q->offset = 2;
		strcpy(q->name, "notes.md");
		break;
	case OFS_OP_TASK_START:
		q->task.job = 77;
		q->task.kind = OFS_TASK_SCRUB;
		q->task.rate = 50u << 20;
		q->task.cursor = mk_oid(13);
		q->task.objects_base = 40;
		q->task.bytes_base = 1 << 20;
		q->task.noids = 2;
		q->task.oids = sample_oids;
		q->task.flags = OFS_TASK_F_REPAIR | OFS_TASK_F_DRYRUN;
		q->task.budget = 16;
		break;
	case OFS_OP_TASK_POLL:
		q->task.job = 78;
		q->task.ack = 12345;
		q->task.budget = 3;
		break;
	case OFS_OP_TASK_CTL:
		q->task.job = 79;
		q->task.action = OFS_TASK_PAUSE;
		break;
	case OFS_OP_REPORT:
	case OFS_OP_BEHIND:
	case OFS_OP_STALE_FOR:
		q->oid = mk_oid(9);
		memset(q->sid.b, 0x42, sizeof(q->sid.b));
		snprintf(q->reason, sizeof(q->reason), "checksum mismatch at chunk 3");
		break;
	case OFS_OP_SETATTR:
		q->oid = mk_oid(2);
		q->mask = OFS_ATTR_SIZE | OFS_ATTR_LAYOUT;
		mk_attr(&q->attr, OFS_OBJ_DFILE);
		break;
	case OFS_OP_READ:
		q->oid = mk_oid(3);
		q->offset = UINT64_C(0x0000000100000000);
		q->length = OFS_MAX_IO;
		break;
	case OFS_OP_WRITE:
		q->oid = mk_oid(4);
		q->offset = 12345;
		q->flags = OFS_WRITE_UNSTABLE;
		q->data = sample_data;
		q->data_len = sizeof(sample_data) - 1;
		break;
	case OFS_OP_KV_GET:
	case OFS_OP_KV_DEL:
		q->oid = mk_oid(5);
		q->key = sample_key;
		q->key_len = sizeof(sample_key) - 1;
		break;
	case OFS_OP_KV_PUT:
		q->oid = mk_oid(6);
		q->key = sample_key;
		q->key_len = sizeof(sample_key) - 1;
		q->data = sample_value;
		q->data_len = sizeof(sample_value);
		break;
	case OFS_OP_KV_LIST:
		q->oid = mk_oid(7);
		q->key = sample_key;
		q->key_len = sizeof(sample_key) - 1;
		q->max = OFS_MAX_LIST;
		break;
	case OFS_OP_DIRENT_CREATE:
		q->oid = mk_oid(8);
		strcpy(q->name, "notes.md");
		q->dirent.type = OFS_OBJ_DIRECTORY;
		q->dirent.handle = mk_handle(9, 4);
		q->flags = OFS_DIRENT_REPLACE;
		break;
	case OFS_OP_DIRENT_REMOVE:
	case OFS_OP_DIRENT_LOOKUP:
		q->oid = mk_oid(10);
		strcpy(q->name, "...");
		break;
	case OFS_OP_DIRENT_LIST:
		q->oid = mk_oid(11);
		strcpy(q->name, "m");
		q->max = 1;
		break;
	default:
		fail_msg("no sample for op %u", op);
	}
}

static void assert_req_equal(const struct ofs_req *a, const struct ofs_req *b)
{
	assert_int_equal(a->op, b->op);
	assert_memory_equal(a->oid.b, b->oid.b, OFS_OID_LEN);
	assert_int_equal(a->mask, b->mask);
	assert_attr_equal(&a->attr, &b->attr);
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->length, b->length);
	if (a->op == OFS_OP_SERVERS) {
		/* Kept raw for the handler: decode it and compare entries. */
		struct ofs_server *e = NULL;
		size_t n = 0;
		assert_int_equal(proto_decode_servers(b->data, b->data_len, false, NULL, &e, &n), 0);
		assert_int_equal(n, a->nservers);
		for (size_t i = 0; i < n; i++)
			assert_memory_equal(&e[i], &a->servers[i], sizeof(e[i]));
		free(e);
	} else {
		assert_int_equal(a->data_len, b->data_len);
		if (a->data_len)
			assert_memory_equal(a->data, b->data, a->data_len);
	}
	assert_int_equal(a->key_len, b->key_len);
	if (a->key_len)
		assert_memory_equal(a->key, b->key, a->key_len);
	assert_string_equal(a->name, b->name);
	assert_dirent_equal(&a->dirent, &b->dirent);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->max, b->max);
	assert_int_equal(a->nservers, b->nservers);
	assert_memory_equal(&a->set, &b->set, sizeof(a->set));
	assert_memory_equal(a->sid.b, b->sid.b, OFS_OID_LEN);
	assert_string_equal(a->reason, b->reason);
	assert_memory_equal(&a->root, &b->root, sizeof(a->root));
	assert_int_equal(a->birth_ns, b->birth_ns);
	assert_int_equal(a->ncands, b->ncands);
	if (a->ncands)
		assert_memory_equal(a->cands, b->cands, a->ncands * sizeof(a->cands[0]));
	assert_int_equal(a->rate, b->rate);
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->task.budget, b->task.budget);
	assert_int_equal(a->task.flags, b->task.flags);
	assert_int_equal(a->task.job, b->task.job);
	assert_int_equal(a->epoch, b->epoch);
	assert_int_equal(a->reclen, b->reclen);
	assert_int_equal(a->count, b->count);
}

static void encode_req(struct wbuf *w, const struct ofs_req *q)
{
	wbuf_init(w);
	assert_int_equal(proto_encode_req(w, q), 0);
}

static int decode_wbuf(uint16_t op, const struct wbuf *w, struct ofs_req *q)
{
	return proto_decode_req(op, w->data, w->len, q);
}

/*
 * The attribute layout written field by field with the counts given on the
 * wire (which may exceed the maximum), so tests can build bodies the real
 * encoder refuses to produce. Extra sids and parts are zero-filled.
 */
static void put_attr_raw(struct wbuf *w, const struct ofs_attr *a, uint8_t nsids,
			 uint8_t nstale, uint16_t nparts)
{
	struct ofs_sid zs;
	struct ofs_handle zh;

	memset(&zs, 0, sizeof(zs));
	memset(&zh, 0, sizeof(zh));
	wbuf_u8(w, a->type);
	wbuf_u64(w, a->version);
	wbuf_u64(w, a->size);
	wbuf_u32(w, a->mode);
	wbuf_u32(w, a->uid);
	wbuf_u32(w, a->gid);
	wbuf_i64(w, a->ctime_ns);
	wbuf_i64(w, a->mtime_ns);
	wbuf_u32(w, a->chunk_size);
	wbuf_oid(w, a->backref.owner);
	wbuf_u32(w, a->backref.stripe);
	wbuf_str(w, a->backref.name);
	wbuf_u8(w, nsids);
	for (int i = 0; i < nsids; i++)
		wbuf_sid(w, i < OFS_MAX_REPLICAS ? a->sids[i] : zs);
	wbuf_u8(w, nstale);
	for (int i = 0; i < nstale; i++)
		wbuf_sid(w, i < OFS_MAX_REPLICAS ? a->stale[i] : zs);
	wbuf_str(w, a->dist);
	wbuf_u32(w, a->strip_size);
	wbuf_u8(w, a->replicas);
	wbuf_u8(w, a->confidence);
	wbuf_u16(w, nparts);
	for (int i = 0; i < nparts; i++)
		wbuf_handle(w, i < OFS_MAX_STRIPES ? &a->parts[i] : &zh);
}

/* Body of a DIRENT_* request with a raw name of n bytes. */
static void put_dirent_req_raw(struct wbuf *w, uint16_t op, const void *name, uint16_t n)
{
	struct ofs_dirent d;

	d.type = OFS_OBJ_METAFILE;
	d.handle = mk_handle(3, 1);
	wbuf_init(w);
	wbuf_oid(w, mk_oid(1));
	wbuf_u16(w, n);
	wbuf_bytes(w, name, n);
	if (op == OFS_OP_DIRENT_CREATE) {
		proto_encode_dirent(w, &d);
		wbuf_u32(w, 0);
	} else if (op == OFS_OP_DIRENT_LIST) {
		wbuf_u32(w, 10);
	}
	assert_int_equal(wbuf_error(w), 0);
}

/* ---- names, types, op names ---------------------------------------- */

static void test_name_valid_accepts_ordinary_names(void **state)
{
	char max[OFS_NAME_MAX + 1];

	(void)state;
	memset(max, 'n', OFS_NAME_MAX);
	max[OFS_NAME_MAX] = '\0';
	assert_true(ofs_name_valid("a"));
	assert_true(ofs_name_valid("..."));
	assert_true(ofs_name_valid(".hidden"));
	assert_true(ofs_name_valid("a b\tc"));
	assert_true(ofs_name_valid(max));
}

static void test_name_valid_rejects_bad_names(void **state)
{
	char over[OFS_NAME_MAX + 2];

	(void)state;
	memset(over, 'n', OFS_NAME_MAX + 1);
	over[OFS_NAME_MAX + 1] = '\0';
	assert_false(ofs_name_valid(""));
	assert_false(ofs_name_valid("."));
	assert_false(ofs_name_valid(".."));
	assert_false(ofs_name_valid("/"));
	assert_false(ofs_name_valid("a/b"));
	assert_false(ofs_name_valid("a/"));
	assert_false(ofs_name_valid(over));
}

static void test_type_valid_and_names(void **state)
{
	(void)state;
	assert_false(ofs_type_valid(OFS_OBJ_NONE));
	assert_true(ofs_type_valid(OFS_OBJ_METAFILE));
	assert_true(ofs_type_valid(OFS_OBJ_DFILE));
	assert_true(ofs_type_valid(OFS_OBJ_DIRECTORY));
	assert_true(ofs_type_valid(OFS_OBJ_DIRDATA));
	assert_false(ofs_type_valid(5));
	assert_false(ofs_type_valid(255));
	assert_string_equal(ofs_type_name(OFS_OBJ_METAFILE), "metafile");
	assert_string_equal(ofs_type_name(OFS_OBJ_DFILE), "dfile");
	assert_string_equal(ofs_type_name(OFS_OBJ_DIRECTORY), "directory");
	assert_string_equal(ofs_type_name(OFS_OBJ_DIRDATA), "dirdata");
	assert_string_equal(ofs_type_name(OFS_OBJ_NONE), "none");
	assert_string_equal(ofs_type_name(200), "none");
}

static void test_op_name_covers_every_op_and_ignores_response_bit(void **state)
{
	(void)state;
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		assert_string_not_equal(ofs_op_name(op), "unknown");
		assert_string_equal(ofs_op_name(op),
				    ofs_op_name((uint16_t)(op | OFS_OP_RESPONSE)));
	}
	assert_string_equal(ofs_op_name(OFS_OP_PING), "ping");
	assert_string_equal(ofs_op_name(OFS_OP_DIRENT_LIST), "dirent_list");
	assert_string_equal(ofs_op_name(0), "unknown");
	assert_string_equal(ofs_op_name(OFS_OP_MAX), "unknown");
	assert_string_equal(ofs_op_name(0xffff), "unknown");
}

/* ---- attributes and dirents ---------------------------------------- */

static void test_attr_round_trips_every_field(void **state)
{
	struct ofs_attr a, b;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	assert_int_equal(wbuf_error(&w), 0);
	rbuf_init(&r, w.data, w.len);
	proto_decode_attr(&r, &b);
	assert_int_equal(rbuf_done(&r), 0);
	assert_attr_equal(&a, &b);
	wbuf_free(&w);
}

static void test_attr_layout_matches_documented_field_order(void **state)
{
	struct ofs_attr a;
	struct wbuf w, raw;

	(void)state;
	mk_attr(&a, OFS_OBJ_DIRECTORY);
	wbuf_init(&w);
	wbuf_init(&raw);
	proto_encode_attr(&w, &a);
	put_attr_raw(&raw, &a, a.nsids, a.nstale, a.nparts);
	assert_int_equal(w.len, raw.len);
	assert_memory_equal(w.data, raw.data, w.len);
	wbuf_free(&w);
	wbuf_free(&raw);
}

static void test_attr_empty_round_trips_at_minimum_size(void **state)
{
	struct ofs_attr a, b;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	memset(&a, 0, sizeof(a));
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	/* 49 fixed + oid 16 + stripe 4 + name 2 + 2 counts + dist 2 +
	 * strip 4 + replicas 1 + confidence 1 + nparts 2 */
	assert_int_equal(w.len, 83);
	rbuf_init(&r, w.data, w.len);
	proto_decode_attr(&r, &b);
	assert_int_equal(rbuf_done(&r), 0);
	assert_attr_equal(&a, &b);
	wbuf_free(&w);
}

static void test_attr_encode_clamps_counts_to_max(void **state)
{
	struct ofs_attr a, b;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	a.nsids = OFS_MAX_REPLICAS + 1;
	a.nstale = 200;
	a.nparts = OFS_MAX_STRIPES + 10;
	for (int i = 0; i < OFS_MAX_STRIPES; i++)
		a.parts[i] = mk_handle((uint8_t)i, 1);
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	rbuf_init(&r, w.data, w.len);
	proto_decode_attr(&r, &b);
	assert_int_equal(rbuf_done(&r), 0);
	assert_int_equal(b.nsids, OFS_MAX_REPLICAS);
	assert_int_equal(b.nstale, OFS_MAX_REPLICAS);
	assert_int_equal(b.nparts, OFS_MAX_STRIPES);
	a.nsids = OFS_MAX_REPLICAS;
	a.nstale = OFS_MAX_REPLICAS;
	a.nparts = OFS_MAX_STRIPES;
	assert_attr_equal(&a, &b);
	wbuf_free(&w);
}

static int decode_raw_attr(const struct ofs_attr *a, uint8_t nsids, uint8_t nstale,
			   uint16_t nparts)
{
	struct ofs_attr b;
	struct wbuf w;
	struct rbuf r;
	int rc;

	wbuf_init(&w);
	put_attr_raw(&w, a, nsids, nstale, nparts);
	assert_int_equal(wbuf_error(&w), 0);
	rbuf_init(&r, w.data, w.len);
	proto_decode_attr(&r, &b);
	rc = rbuf_done(&r);
	wbuf_free(&w);
	return rc;
}

static void test_attr_rejects_nsids_over_max(void **state)
{
	struct ofs_attr a;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	assert_int_equal(decode_raw_attr(&a, OFS_MAX_REPLICAS, 1, 5), 0);
	assert_int_equal(decode_raw_attr(&a, OFS_MAX_REPLICAS + 1, 1, 5), -OFS_ECORRUPT);
	assert_int_equal(decode_raw_attr(&a, 255, 1, 5), -OFS_ECORRUPT);
}

static void test_attr_rejects_nstale_over_max(void **state)
{
	struct ofs_attr a;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	assert_int_equal(decode_raw_attr(&a, 3, OFS_MAX_REPLICAS, 5), 0);
	assert_int_equal(decode_raw_attr(&a, 3, OFS_MAX_REPLICAS + 1, 5), -OFS_ECORRUPT);
}

static void test_attr_rejects_nparts_over_max(void **state)
{
	struct ofs_attr a;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	for (int i = 0; i < OFS_MAX_STRIPES; i++)
		a.parts[i] = mk_handle((uint8_t)i, 2);
	assert_int_equal(decode_raw_attr(&a, 3, 1, OFS_MAX_STRIPES), 0);
	assert_int_equal(decode_raw_attr(&a, 3, 1, OFS_MAX_STRIPES + 1), -OFS_ECORRUPT);
	assert_int_equal(decode_raw_attr(&a, 3, 1, UINT16_MAX), -OFS_ECORRUPT);
}

static void test_attr_rejects_part_handle_with_nsids_over_max(void **state)
{
	struct ofs_attr a;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	a.nparts = 1;
	a.parts[0].nsids = OFS_MAX_REPLICAS;
	{
		struct wbuf w;
		struct rbuf r;
		struct ofs_attr b;

		wbuf_init(&w);
		proto_encode_attr(&w, &a);
		/* The handle's nsids is the byte after its 16-byte OID, which
		 * starts 16 + 1 + 4 * 16 bytes before the end. */
		w.data[w.len - (1 + 4 * 16)] = OFS_MAX_REPLICAS + 1;
		rbuf_init(&r, w.data, w.len);
		proto_decode_attr(&r, &b);
		assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_attr_rejects_unknown_type(void **state)
{
	struct ofs_attr a;

	(void)state;
	mk_attr(&a, OFS_OBJ_DIRDATA + 1);
	assert_int_equal(decode_raw_attr(&a, 3, 1, 5), -OFS_ECORRUPT);
	mk_attr(&a, 0xff);
	assert_int_equal(decode_raw_attr(&a, 3, 1, 5), -OFS_ECORRUPT);
	mk_attr(&a, OFS_OBJ_NONE);   /* "none" is a legal record value */
	assert_int_equal(decode_raw_attr(&a, 3, 1, 5), 0);
}

static void test_attr_rejects_bad_backref_name(void **state)
{
	static const char *bad[] = { "a/b", ".", "..", "/" };
	struct ofs_attr a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mk_attr(&a, OFS_OBJ_METAFILE);
		strcpy(a.backref.name, bad[i]);
		assert_int_equal(decode_raw_attr(&a, 3, 1, 5), -OFS_ENAME);
	}
	mk_attr(&a, OFS_OBJ_METAFILE);
	a.backref.name[0] = '\0';   /* the root has no name */
	assert_int_equal(decode_raw_attr(&a, 3, 1, 5), 0);
}

static void test_attr_rejects_backref_name_over_255(void **state)
{
	struct ofs_attr a, b;
	char name[OFS_NAME_MAX + 2];
	struct wbuf w;
	struct rbuf r;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	/* Rebuild with a 256-byte name spliced in at the name's offset. */
	{
		struct wbuf v;

		wbuf_init(&v);
		wbuf_bytes(&v, w.data, 69);
		wbuf_str(&v, name);
		wbuf_bytes(&v, w.data + 69 + 2 + strlen(a.backref.name),
			   w.len - 69 - 2 - strlen(a.backref.name));
		rbuf_init(&r, v.data, v.len);
		proto_decode_attr(&r, &b);
		assert_int_equal(rbuf_error(&r), -OFS_ETOOBIG);
		wbuf_free(&v);
	}
	wbuf_free(&w);
}

/* A REPORT's reason (a user may send one; it goes into a log line): 255
 * bytes at most. */
static void test_report_reason_at_most_255_bytes(void **state)
{
	char reason[257], got[256];
	struct ofs_oid oid;
	struct ofs_sid sid = { .b = { 1 } };
	struct wbuf w;

	(void)state;
	memset(&oid, 7, sizeof(oid));
	memset(reason, 'r', 255);
	reason[255] = '\0';
	wbuf_init(&w);
	proto_encode_report(&w, oid, sid, reason);
	assert_int_equal(proto_decode_report(w.data, w.len, &oid, &sid, got), 0);
	assert_string_equal(got, reason);
	wbuf_free(&w);
	/* (the encoder cuts a reason to 255 bytes: a hostile sender's 256
	 * by hand) */
	reason[255] = 'r';
	reason[256] = '\0';
	wbuf_init(&w);
	wbuf_oid(&w, oid);
	wbuf_sid(&w, sid);
	wbuf_str(&w, reason);
	assert_int_equal(proto_decode_report(w.data, w.len, &oid, &sid, got), -OFS_ETOOBIG);
	wbuf_free(&w);
}

static void test_attr_rejects_dist_over_31_bytes(void **state)
{
	struct ofs_attr a, b;
	struct wbuf w;
	struct rbuf r;
	char dist[OFS_DIST_MAX + 2];

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(dist, 'd', sizeof(dist) - 1);
	dist[sizeof(dist) - 1] = '\0';
	/* Offsets from test_attr_empty_round_trips_at_minimum_size: the
	 * dist string starts at byte 73 of an empty attribute. */
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	{
		struct wbuf v;

		wbuf_init(&v);
		wbuf_bytes(&v, w.data, 73);
		wbuf_str(&v, dist);
		wbuf_bytes(&v, w.data + 75, w.len - 75);
		rbuf_init(&r, v.data, v.len);
		proto_decode_attr(&r, &b);
		assert_int_equal(rbuf_error(&r), -OFS_ETOOBIG);
		/* Exactly 31 bytes fit. */
		dist[OFS_DIST_MAX] = '\0';
		wbuf_free(&v);
		wbuf_init(&v);
		wbuf_bytes(&v, w.data, 73);
		wbuf_str(&v, dist);
		wbuf_bytes(&v, w.data + 75, w.len - 75);
		rbuf_init(&r, v.data, v.len);
		proto_decode_attr(&r, &b);
		assert_int_equal(rbuf_done(&r), 0);
		assert_string_equal(b.dist, dist);
		wbuf_free(&v);
	}
	wbuf_free(&w);
}

static void test_dirent_round_trips(void **state)
{
	struct ofs_dirent d, e;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	d.type = OFS_OBJ_METAFILE;
	d.handle = mk_handle(0x33, 2);
	wbuf_init(&w);
	proto_encode_dirent(&w, &d);
	assert_int_equal(w.len, 1 + 16 + 1 + 2 * 16);
	assert_int_equal(w.data[0], OFS_OBJ_METAFILE);
	rbuf_init(&r, w.data, w.len);
	proto_decode_dirent(&r, &e);
	assert_int_equal(rbuf_done(&r), 0);
	assert_dirent_equal(&d, &e);
	wbuf_free(&w);
}

static void test_dirent_rejects_types_other_than_file_and_directory(void **state)
{
	static const uint8_t bad[] = {
		OFS_OBJ_NONE, OFS_OBJ_DFILE, OFS_OBJ_DIRDATA, 5, 0xff,
	};
	struct ofs_dirent d, e;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		d.type = bad[i];
		d.handle = mk_handle(1, 1);
		wbuf_init(&w);
		proto_encode_dirent(&w, &d);
		rbuf_init(&r, w.data, w.len);
		proto_decode_dirent(&r, &e);
		assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

/* ---- requests ------------------------------------------------------- */

static void test_req_round_trips_every_op(void **state)
{
	(void)state;
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		struct ofs_req q, d;
		struct wbuf w;

		mk_req(&q, op);
		encode_req(&w, &q);
		memset(&d, 0xcc, sizeof(d));
		assert_int_equal(decode_wbuf(op, &w, &d), 0);
		assert_req_equal(&q, &d);
		wbuf_free(&w);
	}
}

static void test_req_body_sizes_are_exact(void **state)
{
	static const struct {
		uint16_t op;
		size_t len;
	} want[] = {
		{ OFS_OP_PING, 0 },
		{ OFS_OP_GET_ROOT, 0 },
		{ OFS_OP_REMOVE, 16 },
		{ OFS_OP_GETATTR, 16 },
		{ OFS_OP_READ, 16 + 8 + 4 },
		{ OFS_OP_WRITE, 16 + 8 + 4 + 4 + sizeof(sample_data) - 1 },
		{ OFS_OP_COMMIT, 16 },
		{ OFS_OP_KV_GET, 16 + 4 + sizeof(sample_key) - 1 },
		{ OFS_OP_KV_DEL, 16 + 4 + sizeof(sample_key) - 1 },
		{ OFS_OP_KV_PUT, 16 + 4 + sizeof(sample_key) - 1 + 4 + sizeof(sample_value) },
		{ OFS_OP_KV_LIST, 16 + 4 + sizeof(sample_key) - 1 + 4 },
		{ OFS_OP_DIRENT_CREATE, 16 + 2 + 8 + 1 + 16 + 1 + 4 * 16 + 4 },
		{ OFS_OP_DIRENT_REMOVE, 16 + 2 + 3 },
		{ OFS_OP_DIRENT_LOOKUP, 16 + 2 + 3 },
		{ OFS_OP_DIRENT_LIST, 16 + 2 + 1 + 4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ofs_req q;
		struct wbuf w;

		mk_req(&q, want[i].op);
		encode_req(&w, &q);
		assert_int_equal(w.len, want[i].len);
		wbuf_free(&w);
	}
}

static void test_req_read_exact_bytes(void **state)
{
	static const uint8_t tail[] = {
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,   /* offset */
		0x00, 0x40, 0x00, 0x00,                           /* 4 MiB */
	};
	struct ofs_req q;
	struct ofs_oid o = mk_oid(3);
	struct wbuf w;

	(void)state;
	mk_req(&q, OFS_OP_READ);
	encode_req(&w, &q);
	assert_memory_equal(w.data, o.b, 16);
	assert_memory_equal(w.data + 16, tail, sizeof(tail));
	wbuf_free(&w);
}

static void test_req_decoded_data_points_into_body(void **state)
{
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	mk_req(&q, OFS_OP_KV_PUT);
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_KV_PUT, &w, &d), 0);
	assert_ptr_equal(d.key, w.data + 16 + 4);
	assert_ptr_equal(d.data, w.data + 16 + 4 + d.key_len + 4);
	wbuf_free(&w);
}

static void test_req_rejects_truncated_body_at_every_length(void **state)
{
	(void)state;
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		struct ofs_req q, d;
		struct wbuf w;

		mk_req(&q, op);
		encode_req(&w, &q);
		for (size_t n = 0; n < w.len; n++) {
			/* A private copy, so ASan sees any read past n. */
			uint8_t *copy = malloc(n ? n : 1);

			assert_non_null(copy);
			if (n)
				memcpy(copy, w.data, n);
			if (proto_decode_req(op, copy, n, &d) != -OFS_ECORRUPT)
				fail_msg("op %s: prefix %zu of %zu accepted or wrong code",
					 ofs_op_name(op), n, w.len);
			free(copy);
		}
		wbuf_free(&w);
	}
}

static void test_req_rejects_trailing_bytes(void **state)
{
	(void)state;
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		struct ofs_req q, d;
		struct wbuf w;

		mk_req(&q, op);
		encode_req(&w, &q);
		wbuf_u8(&w, 0);
		assert_int_equal(decode_wbuf(op, &w, &d), -OFS_ECORRUPT);
		wbuf_u32(&w, 0);
		assert_int_equal(decode_wbuf(op, &w, &d), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_req_rejects_unknown_op(void **state)
{
	static const uint16_t bad[] = {
		0, OFS_OP_MAX, OFS_OP_MAX + 1, 0x7fff,
		OFS_OP_PING | OFS_OP_RESPONSE, 0xffff,
	};
	struct ofs_req q;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(proto_decode_req(bad[i], NULL, 0, &q), -OFS_EUNKNOWNOP);
		assert_int_equal(proto_decode_req(bad[i], (const uint8_t *)"x", 1, &q),
				 -OFS_EUNKNOWNOP);
		memset(&q, 0, sizeof(q));
		q.op = bad[i];
		wbuf_init(&w);
		assert_int_equal(proto_encode_req(&w, &q), -OFS_EUNKNOWNOP);
		assert_int_equal(w.len, 0);
		wbuf_free(&w);
	}
}

static void test_req_create_rejects_bad_object_type(void **state)
{
	static const uint8_t bad[] = { OFS_OBJ_NONE, OFS_OBJ_DIRDATA + 1, 0xff };
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		mk_req(&q, OFS_OP_CREATE);
		q.attr.type = bad[i];
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(OFS_OP_CREATE, &w, &d), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
	for (uint8_t t = OFS_OBJ_METAFILE; t <= OFS_OBJ_DIRDATA; t++) {
		mk_req(&q, OFS_OP_CREATE);
		q.attr.type = t;
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(OFS_OP_CREATE, &w, &d), 0);
		assert_int_equal(d.attr.type, t);
		wbuf_free(&w);
	}
}

static void test_req_setattr_rejects_bad_type_and_unknown_mask_bits(void **state)
{
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	mk_req(&q, OFS_OP_SETATTR);
	q.attr.type = 9;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_SETATTR, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);

	mk_req(&q, OFS_OP_SETATTR);
	q.mask = OFS_ATTR_ALL + 1;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_SETATTR, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);

	mk_req(&q, OFS_OP_SETATTR);
	q.mask = OFS_ATTR_ALL;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_SETATTR, &w, &d), 0);
	assert_int_equal(d.mask, OFS_ATTR_ALL);
	wbuf_free(&w);
}

static void test_req_create_rejects_nsids_over_max(void **state)
{
	struct ofs_req d;
	struct ofs_attr a;
	struct wbuf w;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	wbuf_init(&w);
	wbuf_oid(&w, mk_oid(1));
	put_attr_raw(&w, &a, OFS_MAX_REPLICAS + 1, 1, 5);
	assert_int_equal(decode_wbuf(OFS_OP_CREATE, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_req_create_rejects_nparts_over_max(void **state)
{
	struct ofs_req d;
	struct ofs_attr a;
	struct wbuf w;

	(void)state;
	mk_attr(&a, OFS_OBJ_METAFILE);
	wbuf_init(&w);
	wbuf_oid(&w, mk_oid(1));
	put_attr_raw(&w, &a, 3, 1, OFS_MAX_STRIPES + 1);
	assert_int_equal(decode_wbuf(OFS_OP_CREATE, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
	wbuf_init(&w);
	wbuf_oid(&w, mk_oid(1));
	put_attr_raw(&w, &a, 3, 1, OFS_MAX_STRIPES);
	assert_int_equal(decode_wbuf(OFS_OP_CREATE, &w, &d), 0);
	assert_int_equal(d.attr.nparts, OFS_MAX_STRIPES);
	wbuf_free(&w);
}

static void test_req_read_rejects_length_over_max_io(void **state)
{
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	mk_req(&q, OFS_OP_READ);
	q.length = OFS_MAX_IO + 1;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_READ, &w, &d), -OFS_ETOOBIG);
	wbuf_free(&w);
	q.length = UINT32_MAX;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_READ, &w, &d), -OFS_ETOOBIG);
	wbuf_free(&w);
	q.length = 0;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_READ, &w, &d), 0);
	assert_int_equal(d.length, 0);
	wbuf_free(&w);
}

static void test_req_write_accepts_max_io_and_rejects_more(void **state)
{
	uint8_t *big = calloc(1, OFS_MAX_IO + 1);
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	assert_non_null(big);
	big[OFS_MAX_IO - 1] = 0x77;
	mk_req(&q, OFS_OP_WRITE);
	q.data = big;
	q.data_len = OFS_MAX_IO;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_WRITE, &w, &d), 0);
	assert_int_equal(d.data_len, OFS_MAX_IO);
	assert_int_equal(d.data[OFS_MAX_IO - 1], 0x77);
	wbuf_free(&w);
	q.data_len = OFS_MAX_IO + 1;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_WRITE, &w, &d), -OFS_ETOOBIG);
	wbuf_free(&w);
	q.data_len = 0;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_WRITE, &w, &d), 0);
	assert_int_equal(d.data_len, 0);
	wbuf_free(&w);
	free(big);
}

/* CREATE_SMALL carries at most OFS_SMALL_MAX bytes: exactly that many
 * are taken, one more refused before anything is made. */
static void test_req_create_small_takes_64k_and_refuses_more(void **state)
{
	uint8_t *big = calloc(1, OFS_SMALL_MAX + 1);
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	assert_non_null(big);
	big[OFS_SMALL_MAX - 1] = 0x5a;
	mk_req(&q, OFS_OP_CREATE_SMALL);
	q.attr.parts[0].oid = mk_oid(8);
	q.data = big;
	q.data_len = OFS_SMALL_MAX;
	q.attr.size = q.data_len;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_CREATE_SMALL, &w, &d), 0);
	assert_int_equal(d.data_len, OFS_SMALL_MAX);
	assert_int_equal(d.data[OFS_SMALL_MAX - 1], 0x5a);
	wbuf_free(&w);
	q.data_len = OFS_SMALL_MAX + 1;
	q.attr.size = q.data_len;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_CREATE_SMALL, &w, &d), -OFS_ETOOBIG);
	wbuf_free(&w);
	free(big);
}

/* SERVERS (which a user may send) names at most OFS_MAX_SERVERS entries;
 * a count over it is refused before anything is allocated, and a count
 * the body cannot hold is refused too. */
static void test_servers_at_most_1024_entries(void **state)
{
	struct ofs_server *e = calloc(OFS_MAX_SERVERS, sizeof(*e)), *got = NULL;
	size_t n = 0;
	struct wbuf w;

	(void)state;
	assert_non_null(e);
	for (size_t i = 0; i < OFS_MAX_SERVERS; i++) {
		e[i].sid.b[0] = (uint8_t)(i >> 8);
		e[i].sid.b[1] = (uint8_t)i;
		e[i].sid.b[15] = 1;
		snprintf(e[i].address, sizeof(e[i].address), "10.0.%zu.%zu:7000", i >> 8, i & 255);
	}
	wbuf_init(&w);
	proto_encode_servers(&w, NULL, e, OFS_MAX_SERVERS);
	assert_int_equal(proto_decode_servers(w.data, w.len, false, NULL, &got, &n), 0);
	assert_int_equal(n, OFS_MAX_SERVERS);
	free(got);
	got = NULL;
	/* One more: the count alone says no. */
	w.data[0] = (uint8_t)((OFS_MAX_SERVERS + 1) >> 24);
	w.data[1] = (uint8_t)((OFS_MAX_SERVERS + 1) >> 16);
	w.data[2] = (uint8_t)((OFS_MAX_SERVERS + 1) >> 8);
	w.data[3] = (uint8_t)(OFS_MAX_SERVERS + 1);
	assert_int_equal(proto_decode_servers(w.data, w.len, false, NULL, &got, &n), -OFS_ETOOBIG);
	assert_null(got);
	/* A count the body does not hold: refused, nothing allocated for it. */
	w.data[0] = w.data[1] = 0;
	w.data[2] = (uint8_t)(OFS_MAX_SERVERS >> 8);
	w.data[3] = (uint8_t)OFS_MAX_SERVERS;
	assert_int_equal(proto_decode_servers(w.data, 4 + 81 * 3, false, NULL, &got, &n),
			 -OFS_ECORRUPT);
	assert_null(got);
	wbuf_free(&w);
	free(e);
}

static void test_req_write_rejects_unknown_flags(void **state)
{
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	mk_req(&q, OFS_OP_WRITE);
	q.flags = 2;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_WRITE, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
	q.flags = OFS_WRITE_UNSTABLE;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_WRITE, &w, &d), 0);
	assert_int_equal(d.flags, OFS_WRITE_UNSTABLE);
	wbuf_free(&w);
}

static void test_req_kv_rejects_key_over_max(void **state)
{
	static const uint16_t ops[] = {
		OFS_OP_KV_GET, OFS_OP_KV_DEL, OFS_OP_KV_PUT, OFS_OP_KV_LIST,
	};
	uint8_t key[OFS_MAX_KEY + 1];
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	memset(key, 'k', sizeof(key));
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		mk_req(&q, ops[i]);
		q.key = key;
		q.key_len = OFS_MAX_KEY;
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(ops[i], &w, &d), 0);
		assert_int_equal(d.key_len, OFS_MAX_KEY);
		wbuf_free(&w);
		q.key_len = OFS_MAX_KEY + 1;
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(ops[i], &w, &d), -OFS_ETOOBIG);
		wbuf_free(&w);
	}
}

static void test_req_kv_rejects_empty_key_except_list(void **state)
{
	static const uint16_t ops[] = { OFS_OP_KV_GET, OFS_OP_KV_DEL, OFS_OP_KV_PUT };
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		mk_req(&q, ops[i]);
		q.key = NULL;
		q.key_len = 0;
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(ops[i], &w, &d), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
	mk_req(&q, OFS_OP_KV_LIST);
	q.key = NULL;
	q.key_len = 0;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_KV_LIST, &w, &d), 0);
	assert_int_equal(d.key_len, 0);
	wbuf_free(&w);
}

static void test_req_kv_put_rejects_value_over_max(void **state)
{
	uint8_t *big = calloc(1, OFS_MAX_VALUE + 1);
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	assert_non_null(big);
	mk_req(&q, OFS_OP_KV_PUT);
	q.data = big;
	q.data_len = OFS_MAX_VALUE;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_KV_PUT, &w, &d), 0);
	assert_int_equal(d.data_len, OFS_MAX_VALUE);
	wbuf_free(&w);
	q.data_len = OFS_MAX_VALUE + 1;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_KV_PUT, &w, &d), -OFS_ETOOBIG);
	wbuf_free(&w);
	q.data_len = 0;   /* an empty value is a value */
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_KV_PUT, &w, &d), 0);
	assert_int_equal(d.data_len, 0);
	wbuf_free(&w);
	free(big);
}

static void test_req_list_rejects_max_zero_or_over_limit(void **state)
{
	static const uint16_t ops[] = { OFS_OP_KV_LIST, OFS_OP_DIRENT_LIST };
	static const uint32_t bad[] = { 0, OFS_MAX_LIST + 1, UINT32_MAX };
	static const uint32_t good[] = { 1, 2, OFS_MAX_LIST };
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			mk_req(&q, ops[i]);
			q.max = bad[j];
			encode_req(&w, &q);
			assert_int_equal(decode_wbuf(ops[i], &w, &d), -OFS_ETOOBIG);
			wbuf_free(&w);
		}
		for (size_t j = 0; j < sizeof(good) / sizeof(good[0]); j++) {
			mk_req(&q, ops[i]);
			q.max = good[j];
			encode_req(&w, &q);
			assert_int_equal(decode_wbuf(ops[i], &w, &d), 0);
			assert_int_equal(d.max, good[j]);
			wbuf_free(&w);
		}
	}
}

static void test_req_dirent_rejects_bad_names(void **state)
{
	static const uint16_t ops[] = {
		OFS_OP_DIRENT_CREATE, OFS_OP_DIRENT_REMOVE,
		OFS_OP_DIRENT_LOOKUP, OFS_OP_DIRENT_LIST,
	};
	static const struct {
		const char *s;
		uint16_t n;
	} bad[] = {
		{ "a/b", 3 }, { "/", 1 }, { "abc/", 4 },
		{ "a\0b", 3 }, { "\0", 1 }, { "ab\0", 3 },
		{ ".", 1 }, { "..", 2 },
	};
	struct ofs_req d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			put_dirent_req_raw(&w, ops[i], bad[j].s, bad[j].n);
			if (decode_wbuf(ops[i], &w, &d) != -OFS_ENAME)
				fail_msg("%s accepted name %zu", ofs_op_name(ops[i]), j);
			wbuf_free(&w);
		}
	}
}

static void test_req_dirent_rejects_empty_name_except_list(void **state)
{
	struct ofs_req d;
	struct wbuf w;

	(void)state;
	put_dirent_req_raw(&w, OFS_OP_DIRENT_CREATE, "", 0);
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_CREATE, &w, &d), -OFS_ENAME);
	wbuf_free(&w);
	put_dirent_req_raw(&w, OFS_OP_DIRENT_REMOVE, "", 0);
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_REMOVE, &w, &d), -OFS_ENAME);
	wbuf_free(&w);
	put_dirent_req_raw(&w, OFS_OP_DIRENT_LOOKUP, "", 0);
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_LOOKUP, &w, &d), -OFS_ENAME);
	wbuf_free(&w);
	/* An empty after-name lists from the start. */
	put_dirent_req_raw(&w, OFS_OP_DIRENT_LIST, "", 0);
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_LIST, &w, &d), 0);
	assert_string_equal(d.name, "");
	assert_int_equal(d.max, 10);
	wbuf_free(&w);
}

static void test_req_dirent_name_limit_is_255_bytes(void **state)
{
	static const uint16_t ops[] = {
		OFS_OP_DIRENT_CREATE, OFS_OP_DIRENT_REMOVE,
		OFS_OP_DIRENT_LOOKUP, OFS_OP_DIRENT_LIST,
	};
	char name[OFS_NAME_MAX + 2];
	struct ofs_req d;
	struct wbuf w;

	(void)state;
	memset(name, 'n', sizeof(name));
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		put_dirent_req_raw(&w, ops[i], name, OFS_NAME_MAX);
		assert_int_equal(decode_wbuf(ops[i], &w, &d), 0);
		assert_int_equal(strlen(d.name), OFS_NAME_MAX);
		wbuf_free(&w);
		put_dirent_req_raw(&w, ops[i], name, OFS_NAME_MAX + 1);
		assert_int_equal(decode_wbuf(ops[i], &w, &d), -OFS_ENAME);
		wbuf_free(&w);
	}
}

static void test_req_dirent_create_rejects_bad_dirent_flags(void **state)
{
	static const uint32_t bad[] = { 2, 3, 0x80000000u, UINT32_MAX };
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mk_req(&q, OFS_OP_DIRENT_CREATE);
		q.flags = bad[i];
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(OFS_OP_DIRENT_CREATE, &w, &d), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
	mk_req(&q, OFS_OP_DIRENT_CREATE);
	q.flags = 0;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_CREATE, &w, &d), 0);
	assert_int_equal(d.flags, 0);
	wbuf_free(&w);
}

static void test_req_dirent_create_rejects_bad_dirent_type(void **state)
{
	static const uint8_t bad[] = {
		OFS_OBJ_NONE, OFS_OBJ_DFILE, OFS_OBJ_DIRDATA, 7,
	};
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		mk_req(&q, OFS_OP_DIRENT_CREATE);
		q.dirent.type = bad[i];
		encode_req(&w, &q);
		assert_int_equal(decode_wbuf(OFS_OP_DIRENT_CREATE, &w, &d), -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_req_dirent_create_rejects_handle_nsids_over_max(void **state)
{
	struct ofs_req q, d;
	struct wbuf w;
	size_t at;

	(void)state;
	mk_req(&q, OFS_OP_DIRENT_CREATE);
	encode_req(&w, &q);
	at = 16 + 2 + strlen(q.name) + 1 + 16;   /* the handle's nsids */
	assert_int_equal(w.data[at], 4);
	w.data[at] = OFS_MAX_REPLICAS + 1;
	assert_int_equal(decode_wbuf(OFS_OP_DIRENT_CREATE, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
}

/* ---- replies -------------------------------------------------------- */

/* Every strict prefix of b is rejected as corrupt by decode. */
#define ASSERT_PREFIXES_CORRUPT(b, n, call)                                 \
	do {                                                                 \
		for (size_t n_ = 0; n_ < (n); n_++) {                        \
			uint8_t *c_ = malloc(n_ ? n_ : 1);                   \
			assert_non_null(c_);                                 \
			if (n_)                                              \
				memcpy(c_, (b), n_);                         \
			{                                                    \
				const uint8_t *p_ = c_;                      \
				size_t l_ = n_;                              \
				if ((call) != -OFS_ECORRUPT)                 \
					fail_msg("prefix %zu of %zu", n_,    \
						 (size_t)(n));               \
			}                                                    \
			free(c_);                                            \
		}                                                            \
	} while (0)

static void test_ping_reply_round_trips(void **state)
{
	struct ofs_ping_reply p, g;
	struct wbuf w;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.sid = mk_sid(0x21);
	strcpy(p.version, "0.1.0");
	wbuf_init(&w);
	proto_encode_ping(&w, &p);
	assert_int_equal(w.len, 16 + 2 + 5);
	memset(&g, 0, sizeof(g));
	assert_int_equal(proto_decode_ping(w.data, w.len, &g), 0);
	assert_memory_equal(g.sid.b, p.sid.b, OFS_OID_LEN);
	assert_string_equal(g.version, "0.1.0");
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_decode_ping(p_, l_, &g));
	wbuf_u8(&w, 0);
	assert_int_equal(proto_decode_ping(w.data, w.len, &g), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_ping_reply_version_limit_is_31_bytes(void **state)
{
	char v[33];
	struct ofs_ping_reply g;
	struct wbuf w;

	(void)state;
	memset(v, 'v', 31);
	v[31] = '\0';
	wbuf_init(&w);
	wbuf_sid(&w, mk_sid(1));
	wbuf_str(&w, v);
	assert_int_equal(proto_decode_ping(w.data, w.len, &g), 0);
	assert_string_equal(g.version, v);
	wbuf_free(&w);
	v[31] = 'v';
	v[32] = '\0';
	wbuf_init(&w);
	wbuf_sid(&w, mk_sid(1));
	wbuf_str(&w, v);
	memset(&g, 0x3c, sizeof(g));
	assert_int_equal(proto_decode_ping(w.data, w.len, &g), -OFS_ETOOBIG);
	assert_int_equal(g.sid.b[0], 0x3c);   /* untouched on failure */
	wbuf_free(&w);
}

static void test_handle_reply_round_trips(void **state)
{
	for (uint8_t n = 0; n <= OFS_MAX_REPLICAS; n++) {
		struct ofs_handle h = mk_handle(0x70, n), g;
		struct wbuf w;

		(void)state;
		wbuf_init(&w);
		proto_encode_handle_reply(&w, &h);
		assert_int_equal(w.len, 16 + 1 + 16 * (size_t)n);
		assert_int_equal(proto_decode_handle_reply(w.data, w.len, &g), 0);
		assert_handle_equal(&h, &g);
		ASSERT_PREFIXES_CORRUPT(w.data, w.len,
					proto_decode_handle_reply(p_, l_, &g));
		wbuf_u8(&w, 0);
		assert_int_equal(proto_decode_handle_reply(w.data, w.len, &g),
				 -OFS_ECORRUPT);
		wbuf_free(&w);
	}
}

static void test_handle_reply_rejects_nsids_over_max(void **state)
{
	uint8_t b[16 + 1 + 5 * 16];
	struct ofs_handle g;

	(void)state;
	memset(b, 1, sizeof(b));
	b[16] = OFS_MAX_REPLICAS + 1;
	memset(&g, 0x3c, sizeof(g));
	assert_int_equal(proto_decode_handle_reply(b, sizeof(b), &g), -OFS_ECORRUPT);
	assert_int_equal(g.nsids, 0x3c);
}

static void test_oid_reply_round_trips(void **state)
{
	struct ofs_oid o = mk_oid(0x99), g;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_encode_oid_reply(&w, o);
	assert_int_equal(w.len, 16);
	assert_int_equal(proto_decode_oid_reply(w.data, w.len, &g), 0);
	assert_true(oid_eq(o, g));
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_decode_oid_reply(p_, l_, &g));
	wbuf_u8(&w, 0);
	assert_int_equal(proto_decode_oid_reply(w.data, w.len, &g), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_attr_reply_round_trips(void **state)
{
	struct ofs_attr a, g;
	struct wbuf w;

	(void)state;
	mk_attr(&a, OFS_OBJ_DFILE);
	wbuf_init(&w);
	proto_encode_attr(&w, &a);
	assert_int_equal(proto_decode_attr_reply(w.data, w.len, &g), 0);
	assert_attr_equal(&a, &g);
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_decode_attr_reply(p_, l_, &g));
	wbuf_u8(&w, 0);
	assert_int_equal(proto_decode_attr_reply(w.data, w.len, &g), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_write_reply_round_trips(void **state)
{
	static const uint8_t want[] = {
		0, 0, 0, 0, 0, 0, 0, 42,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	struct ofs_write_reply p = { 42, UINT64_MAX }, g;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_encode_write_reply(&w, &p);
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.data, want, sizeof(want));
	assert_int_equal(proto_decode_write_reply(w.data, w.len, &g), 0);
	assert_int_equal(g.version, 42);
	assert_int_equal(g.size, UINT64_MAX);
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_decode_write_reply(p_, l_, &g));
	wbuf_u8(&w, 0);
	assert_int_equal(proto_decode_write_reply(w.data, w.len, &g), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_dirent_reply_round_trips_present(void **state)
{
	struct ofs_dirent d, g;
	bool present = false;
	struct wbuf w;

	(void)state;
	d.type = OFS_OBJ_DIRECTORY;
	d.handle = mk_handle(0x12, 3);
	wbuf_init(&w);
	proto_encode_dirent_reply(&w, true, &d);
	assert_int_equal(w.data[0], 1);
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g), 0);
	assert_true(present);
	assert_dirent_equal(&d, &g);
	ASSERT_PREFIXES_CORRUPT(w.data, w.len,
				proto_decode_dirent_reply(p_, l_, &present, &g));
	wbuf_u8(&w, 0);
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g),
			 -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_dirent_reply_round_trips_absent(void **state)
{
	struct ofs_dirent d, g;
	bool present = true;
	struct wbuf w;

	(void)state;
	d.type = OFS_OBJ_DIRECTORY;
	d.handle = mk_handle(0x12, 3);
	wbuf_init(&w);
	proto_encode_dirent_reply(&w, false, &d);
	assert_int_equal(w.len, 1);
	assert_int_equal(w.data[0], 0);
	memset(&g, 0x3c, sizeof(g));
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g), 0);
	assert_false(present);
	assert_int_equal(g.type, 0);
	assert_int_equal(g.handle.nsids, 0);
	assert_true(oid_is_zero(g.handle.oid));
	assert_int_equal(proto_decode_dirent_reply(w.data, 0, &present, &g),
			 -OFS_ECORRUPT);
	/* Absent, but a dirent follows: trailing bytes. */
	proto_encode_dirent(&w, &d);
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g),
			 -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_dirent_reply_rejects_bad_flag_and_type(void **state)
{
	struct ofs_dirent d, g;
	bool present = false;
	struct wbuf w;

	(void)state;
	d.type = OFS_OBJ_METAFILE;
	d.handle = mk_handle(0x12, 1);
	wbuf_init(&w);
	proto_encode_dirent_reply(&w, true, &d);
	w.data[0] = 2;
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g),
			 -OFS_ECORRUPT);
	w.data[0] = 1;
	w.data[1] = OFS_OBJ_DFILE;
	assert_int_equal(proto_decode_dirent_reply(w.data, w.len, &present, &g),
			 -OFS_ECORRUPT);
	assert_false(present);   /* untouched on failure */
	wbuf_free(&w);
}

/* ---- list replies --------------------------------------------------- */

static void test_kv_list_round_trips_and_iterates(void **state)
{
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	const uint8_t *k, *v;
	size_t kn, vn;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_add_kv(&lw, "a", 1, "one", 3);
	proto_list_add_kv(&lw, "bb", 2, NULL, 0);
	proto_list_add_kv(&lw, "ccc", 3, "\0\1", 2);
	proto_list_end(&lw, true);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(w.data[3], 3);   /* count patched in */
	assert_int_equal(w.data[w.len - 1], 1);

	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), 0);
	assert_true(lr.more);
	assert_int_equal(lr.left, 3);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 1);
	assert_int_equal(kn, 1);
	assert_memory_equal(k, "a", 1);
	assert_int_equal(vn, 3);
	assert_memory_equal(v, "one", 3);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 1);
	assert_int_equal(kn, 2);
	assert_memory_equal(k, "bb", 2);
	assert_int_equal(vn, 0);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 1);
	assert_int_equal(kn, 3);
	assert_memory_equal(k, "ccc", 3);
	assert_int_equal(vn, 2);
	assert_memory_equal(v, "\0\1", 2);
	assert_ptr_equal(k, w.data + 4 + 4 + 1 + 4 + 3 + 4 + 2 + 4 + 4);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 0);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 0);
	wbuf_free(&w);
}

static void test_list_empty_round_trips(void **state)
{
	static const uint8_t want[] = { 0, 0, 0, 0, 0 };
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	char name[OFS_NAME_MAX + 1];
	struct ofs_dirent d;
	const uint8_t *k, *v;
	size_t kn, vn;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_end(&lw, false);
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.data, want, sizeof(want));
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), 0);
	assert_false(lr.more);
	assert_int_equal(proto_list_next_kv(&lr, &k, &kn, &v, &vn), 0);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), 0);
	assert_int_equal(proto_list_next_dirent(&lr, name, &d), 0);
	wbuf_free(&w);
}

static void test_list_writer_appends_after_existing_bytes(void **state)
{
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_u32(&w, 0xdeadbeef);   /* something before the list */
	proto_list_begin(&lw, &w);
	proto_list_add_kv(&lw, "k", 1, "v", 1);
	proto_list_add_kv(&lw, "l", 1, "w", 1);
	proto_list_end(&lw, false);
	assert_int_equal(w.data[0], 0xde);
	assert_int_equal(w.data[3], 0xef);
	assert_int_equal(w.data[7], 2);
	assert_int_equal(proto_list_open_kv(&lr, w.data + 4, w.len - 4), 0);
	assert_int_equal(lr.left, 2);
	wbuf_free(&w);
}

static void test_dirent_list_round_trips_and_iterates(void **state)
{
	static const char *names[] = { "alpha", "b", "...", "zeta.txt" };
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	char name[OFS_NAME_MAX + 1];
	struct ofs_dirent d[4], g;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	for (int i = 0; i < 4; i++) {
		d[i].type = i % 2 ? OFS_OBJ_DIRECTORY : OFS_OBJ_METAFILE;
		d[i].handle = mk_handle((uint8_t)(0x80 + i), (uint8_t)i);
		proto_list_add_dirent(&lw, names[i], &d[i]);
	}
	proto_list_end(&lw, false);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), 0);
	assert_false(lr.more);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(proto_list_next_dirent(&lr, name, &g), 1);
		assert_string_equal(name, names[i]);
		assert_dirent_equal(&d[i], &g);
	}
	assert_int_equal(proto_list_next_dirent(&lr, name, &g), 0);
	wbuf_free(&w);
}

static void build_kv_list(struct wbuf *w, int n, bool more)
{
	struct ofs_list_writer lw;

	wbuf_init(w);
	proto_list_begin(&lw, w);
	for (int i = 0; i < n; i++)
		proto_list_add_kv(&lw, "key", 3, "value", 5);
	proto_list_end(&lw, more);
}

static void build_dirent_list(struct wbuf *w, int n, bool more)
{
	struct ofs_list_writer lw;
	struct ofs_dirent d;

	d.type = OFS_OBJ_METAFILE;
	d.handle = mk_handle(5, 2);
	wbuf_init(w);
	proto_list_begin(&lw, w);
	for (int i = 0; i < n; i++)
		proto_list_add_dirent(&lw, "entry", &d);
	proto_list_end(&lw, more);
}

static void test_list_rejects_truncated_body_at_every_length(void **state)
{
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	build_kv_list(&w, 3, true);
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_list_open_kv(&lr, p_, l_));
	wbuf_free(&w);
	build_dirent_list(&w, 3, true);
	ASSERT_PREFIXES_CORRUPT(w.data, w.len, proto_list_open_dirent(&lr, p_, l_));
	wbuf_free(&w);
}

static void test_list_rejects_trailing_bytes(void **state)
{
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	build_kv_list(&w, 2, false);
	wbuf_u8(&w, 0);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
	build_dirent_list(&w, 2, false);
	wbuf_u8(&w, 0);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_list_rejects_more_flag_over_one(void **state)
{
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	build_kv_list(&w, 1, true);
	w.data[w.len - 1] = 2;
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
	build_dirent_list(&w, 1, true);
	w.data[w.len - 1] = 0xff;
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_list_accepts_1000_entries_and_rejects_count_over(void **state)
{
	struct ofs_list_reader lr;
	const uint8_t *k, *v;
	size_t kn, vn;
	struct wbuf w;
	int seen = 0;

	(void)state;
	build_kv_list(&w, OFS_MAX_LIST, true);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), 0);
	while (proto_list_next_kv(&lr, &k, &kn, &v, &vn) == 1)
		seen++;
	assert_int_equal(seen, OFS_MAX_LIST);
	wbuf_free(&w);

	build_kv_list(&w, OFS_MAX_LIST + 1, true);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
	build_dirent_list(&w, OFS_MAX_LIST + 1, true);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
	/* A huge count with no entries behind it. */
	build_kv_list(&w, 0, false);
	wbuf_patch_u32(&w, 0, UINT32_MAX);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_list_rejects_count_larger_than_entries(void **state)
{
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	build_kv_list(&w, 2, false);
	wbuf_patch_u32(&w, 0, 3);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
	build_dirent_list(&w, 2, false);
	wbuf_patch_u32(&w, 0, 3);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_kv_list_rejects_key_or_value_over_max(void **state)
{
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	uint8_t *big = calloc(1, OFS_MAX_VALUE + 1);
	struct wbuf w;

	(void)state;
	assert_non_null(big);
	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_add_kv(&lw, big, OFS_MAX_KEY + 1, "v", 1);
	proto_list_end(&lw, false);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ETOOBIG);
	wbuf_free(&w);

	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_add_kv(&lw, "k", 1, big, OFS_MAX_VALUE + 1);
	proto_list_end(&lw, false);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), -OFS_ETOOBIG);
	wbuf_free(&w);

	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_add_kv(&lw, big, OFS_MAX_KEY, big, OFS_MAX_VALUE);
	proto_list_end(&lw, false);
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len), 0);
	wbuf_free(&w);
	free(big);
}

static void test_dirent_list_rejects_bad_entry_name(void **state)
{
	static const char *bad[] = { "", ".", "..", "a/b" };
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	struct ofs_dirent d;
	struct wbuf w;

	(void)state;
	d.type = OFS_OBJ_METAFILE;
	d.handle = mk_handle(1, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wbuf_init(&w);
		proto_list_begin(&lw, &w);
		proto_list_add_dirent(&lw, "fine", &d);
		proto_list_add_dirent(&lw, bad[i], &d);
		proto_list_end(&lw, false);
		assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ENAME);
		wbuf_free(&w);
	}
}

static void test_dirent_list_rejects_bad_entry_type(void **state)
{
	struct ofs_list_writer lw;
	struct ofs_list_reader lr;
	struct ofs_dirent d;
	struct wbuf w;

	(void)state;
	d.type = OFS_OBJ_DFILE;
	d.handle = mk_handle(1, 1);
	wbuf_init(&w);
	proto_list_begin(&lw, &w);
	proto_list_add_dirent(&lw, "x", &d);
	proto_list_end(&lw, false);
	assert_int_equal(proto_list_open_dirent(&lr, w.data, w.len), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_list_open_leaves_reader_untouched_on_failure(void **state)
{
	struct ofs_list_reader lr;
	struct wbuf w;

	(void)state;
	build_kv_list(&w, 2, true);
	memset(&lr, 0x3c, sizeof(lr));
	assert_int_equal(proto_list_open_kv(&lr, w.data, w.len - 1), -OFS_ECORRUPT);
	assert_int_equal(lr.left, 0x3c3c3c3c);
	wbuf_free(&w);
}

/* ---- BEHIND, STALE_FOR and the stale list --------------------------------- */

struct stale_got {
	struct ofs_oid oids[4];
	char reasons[4][256];
	uint32_t n;
	int stop_at;          /* fn returns -EINTR at this record (-1: never) */
};

static int stale_got_add(struct ofs_oid oid, const char *reason, void *arg)
{
	struct stale_got *g = arg;

	if ((int)g->n == g->stop_at)
		return -EINTR;
	if (g->n == 4)
		return -E2BIG;
	g->oids[g->n] = oid;
	snprintf(g->reasons[g->n], sizeof(g->reasons[g->n]), "%s", reason);
	g->n++;
	return 0;
}

static void test_behind_and_stale_for_requests_round_trip(void **state)
{
	static const uint16_t ops[] = { OFS_OP_BEHIND, OFS_OP_STALE_FOR };
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct ofs_req q = { .op = ops[i], .oid = mk_oid(3), .sid = mk_sid(4) }, back;
		struct wbuf w;
		strcpy(q.reason, "write not applied: Connection refused");
		wbuf_init(&w);
		assert_int_equal(proto_encode_req(&w, &q), 0);
		memset(&back, 0, sizeof(back));
		assert_int_equal(proto_decode_req(ops[i], w.data, w.len, &back), 0);
		assert_memory_equal(back.oid.b, q.oid.b, OFS_OID_LEN);
		assert_memory_equal(back.sid.b, q.sid.b, OFS_OID_LEN);
		assert_string_equal(back.reason, q.reason);
		wbuf_free(&w);
	}
	assert_string_equal(ofs_op_name(OFS_OP_BEHIND), "behind");
	assert_string_equal(ofs_op_name(OFS_OP_STALE_FOR | OFS_OP_FORWARDED), "stale_for");
}

static void test_behind_rejects_control_characters_in_reason(void **state)
{
	struct ofs_req q = { .op = OFS_OP_BEHIND, .oid = mk_oid(3), .sid = mk_sid(4) }, back;
	struct wbuf w;

	(void)state;
	strcpy(q.reason, "line one\nforged log line");
	wbuf_init(&w);
	assert_int_equal(proto_encode_req(&w, &q), 0);
	assert_int_equal(proto_decode_req(OFS_OP_BEHIND, w.data, w.len, &back), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_stale_list_round_trips(void **state)
{
	struct ofs_oid oids[3] = { mk_oid(1), mk_oid(2), mk_oid(3) };
	char reasons[3][256] = { "create not applied: Connection refused", "", "x" };
	struct stale_got g = { .stop_at = -1 };
	bool more = false;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_encode_stale_list(&w, oids, reasons, 3, true);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(proto_decode_stale_list(w.data, w.len, stale_got_add, &g, &more), 0);
	assert_int_equal(g.n, 3);
	assert_true(more);
	for (int i = 0; i < 3; i++) {
		assert_memory_equal(g.oids[i].b, oids[i].b, OFS_OID_LEN);
		assert_string_equal(g.reasons[i], reasons[i]);
	}
	wbuf_free(&w);

	/* An empty list, nothing after it. */
	g.n = 0;
	wbuf_init(&w);
	proto_encode_stale_list(&w, NULL, NULL, 0, false);
	assert_int_equal(proto_decode_stale_list(w.data, w.len, stale_got_add, &g, &more), 0);
	assert_int_equal(g.n, 0);
	assert_false(more);
	wbuf_free(&w);
}

static void test_stale_list_checks_whole_body_before_delivering(void **state)
{
	struct ofs_oid oids[2] = { mk_oid(1), mk_oid(2) };
	char reasons[2][256] = { "a", "b" };
	struct stale_got g = { .stop_at = -1 };
	bool more = false;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	proto_encode_stale_list(&w, oids, reasons, 2, false);
	/* Every truncation fails, and no record reaches fn. */
	for (size_t cut = 0; cut < w.len; cut++) {
		g.n = 0;
		assert_int_not_equal(proto_decode_stale_list(w.data, cut, stale_got_add, &g, &more), 0);
		assert_int_equal(g.n, 0);
	}
	/* A more flag other than 0 or 1 is corrupt. */
	w.data[w.len - 1] = 2;
	g.n = 0;
	assert_int_equal(proto_decode_stale_list(w.data, w.len, stale_got_add, &g, &more),
			 -OFS_ECORRUPT);
	assert_int_equal(g.n, 0);
	w.data[w.len - 1] = 0;
	/* A reason with a control character is corrupt. */
	w.data[4 + 16 + 2] = '\n';
	assert_int_equal(proto_decode_stale_list(w.data, w.len, stale_got_add, &g, &more),
			 -OFS_ECORRUPT);
	assert_int_equal(g.n, 0);
	wbuf_free(&w);
}

static void test_stale_list_rejects_count_over_max_and_stops_on_fn_error(void **state)
{
	struct ofs_oid oids[2] = { mk_oid(1), mk_oid(2) };
	char reasons[2][256] = { "a", "b" };
	struct stale_got g = { .stop_at = 1 };
	bool more = false;
	uint8_t big[5] = { 0, 0, 0x04, 0x01, 0 };   /* 1025 records, none present */
	struct wbuf w;

	(void)state;
	assert_int_equal(proto_decode_stale_list(big, sizeof(big), stale_got_add, &g, &more),
			 -OFS_ETOOBIG);
	wbuf_init(&w);
	proto_encode_stale_list(&w, oids, reasons, 2, false);
	assert_int_equal(proto_decode_stale_list(w.data, w.len, stale_got_add, &g, &more), -EINTR);
	assert_int_equal(g.n, 1);
	wbuf_free(&w);
}

/* ---- task status and summaries ------------------------------------------- */

struct tf_got {
	struct ofs_task_finding f[4];
	int n;
};

static int tf_add(const struct ofs_task_finding *f, void *arg)
{
	struct tf_got *g = arg;

	if (g->n == 4)
		return -E2BIG;
	g->f[g->n++] = *f;
	return 0;
}

static void test_task_status_round_trips_and_checks_before_delivering(void **state)
{
	struct ofs_task_status st = { .state = OFS_TASK_RUNNING, .objects_done = 3,
				      .objects_total = 9, .bytes_done = 1 << 20,
				      .bytes_total = 5 << 20 }, back;
	struct ofs_task_finding f[2];
	struct tf_got g = { .n = 0 };
	struct wbuf w;

	(void)state;
	st.cursor = mk_oid(4);
	memset(f, 0, sizeof(f));
	for (int i = 0; i < 2; i++) {
		f[i].seq = (uint64_t)i + 1;
		f[i].server = mk_sid((uint8_t)(5 + i));
		f[i].oid = mk_oid((uint8_t)(7 + i));
		f[i].kind = OFS_FINDING_CHECKSUM_MISMATCH;
		strcpy(f[i].detail, "chunk 3 (bytes 3145728-4194303) does not match its checksum");
		f[i].repair = OFS_REPAIR_DONE;
		f[i].source = mk_sid(9);
		strcpy(f[i].action, "fetched version 3");
	}
	st.repairs = 2;
	wbuf_init(&w);
	proto_encode_task_status(&w, &st, f, 2);
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(back.objects_total, 9);
	assert_memory_equal(back.cursor.b, st.cursor.b, OFS_OID_LEN);
	assert_string_equal(g.f[1].detail, f[1].detail);
	assert_int_equal(g.f[1].kind, OFS_FINDING_CHECKSUM_MISMATCH);
	assert_int_equal(g.f[1].seq, 2);
	assert_int_equal(g.f[1].repair, OFS_REPAIR_DONE);
	assert_memory_equal(g.f[1].source.b, f[1].source.b, OFS_OID_LEN);
	assert_string_equal(g.f[1].action, f[1].action);
	assert_int_equal(back.repairs, 2);
	assert_int_equal(back.error, 0);
	for (size_t cut = 0; cut < w.len; cut++) {
		g.n = 0;
		assert_int_not_equal(proto_decode_task_status(w.data, cut, &back, tf_add, &g), 0);
		assert_int_equal(g.n, 0);
	}
	/* A bad state, and a control character in a detail, are corrupt. */
	w.data[0] = 9;
	g.n = 0;
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), -OFS_ECORRUPT);
	w.data[0] = OFS_TASK_RUNNING;
	w.data[w.len - 3] = '\n';
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), -OFS_ECORRUPT);
	assert_int_equal(g.n, 0);
	wbuf_free(&w);
	/* A finding of no kind we know is corrupt too. */
	f[1].kind = OFS_FINDING_NONE;
	wbuf_init(&w);
	proto_encode_task_status(&w, &st, f, 2);
	g.n = 0;
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), -OFS_ECORRUPT);
	assert_int_equal(g.n, 0);
	wbuf_free(&w);
}

/* A failed task says the code it failed with, so that the runner can
 * tell a refusal (not retried) from a failure that may pass; a code that
 * is no error code is corrupt. */
static void test_task_status_carries_the_code_it_failed_with(void **state)
{
	struct ofs_task_status st = { .state = OFS_TASK_FAILED, .error = -OFS_ECERTREVOKED }, back;
	struct tf_got g = { .n = 0 };
	struct wbuf w;
	size_t at;

	(void)state;
	strcpy(st.reason, "drain stopped at 0011: certificate revoked");
	wbuf_init(&w);
	proto_encode_task_status(&w, &st, NULL, 0);
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), 0);
	assert_int_equal(back.error, -OFS_ECERTREVOKED);
	assert_string_equal(back.reason, st.reason);
	/* (the code: the 4 bytes before the findings' count) */
	at = w.len - 8;
	w.data[at] = 0;              /* a positive code */
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), -OFS_ECORRUPT);
	w.data[at] = 0x80;           /* far below every code */
	assert_int_equal(proto_decode_task_status(w.data, w.len, &back, tf_add, &g), -OFS_ECORRUPT);
	wbuf_free(&w);
}

/* Finding kinds: one name table, ofs-pbj(8)'s spellings. */
static void test_finding_kinds_round_trip_by_name(void **state)
{
	static const char *const spelled[] = {
		"checksum_mismatch", "size_mismatch", "unreadable", "missing_replica",
		"stale_replica", "keyval_mismatch", "replica_conflict", "orphan",
		"dangling_pointer", "backref_mismatch", "multiple_owners", "record_corrupt", "move",
	};

	(void)state;
	assert_int_equal(sizeof(spelled) / sizeof(spelled[0]), OFS_FINDING_MAX - 1);
	for (int k = OFS_FINDING_NONE + 1; k < OFS_FINDING_MAX; k++) {
		assert_string_equal(ofs_finding_name(k), spelled[k - 1]);
		assert_int_equal(ofs_finding_parse(spelled[k - 1]), k);
	}
	assert_null(ofs_finding_name(OFS_FINDING_NONE));
	assert_null(ofs_finding_name(OFS_FINDING_MAX));
	assert_int_equal(ofs_finding_parse("bit_rot"), OFS_FINDING_NONE);
	assert_int_equal(ofs_finding_parse(""), OFS_FINDING_NONE);
}

static void test_summary_round_trips_and_rejects_unknown_flags(void **state)
{
	struct ofs_summary s = { .present = true, .behind = false, .corrupt = true,
				 .version = 7, .size = 4096, .type = OFS_OBJ_DFILE }, back;
	struct wbuf w;

	(void)state;
	memset(s.digest.b, 0xab, sizeof(s.digest.b));
	s.backref.owner = mk_oid(3);
	s.backref.stripe = 5;
	wbuf_init(&w);
	proto_encode_summary(&w, &s);
	assert_int_equal(proto_decode_summary(w.data, w.len, &back), 0);
	assert_int_equal(back.type, OFS_OBJ_DFILE);
	assert_int_equal(back.backref.stripe, 5);
	assert_memory_equal(back.backref.owner.b, s.backref.owner.b, OFS_OID_LEN);
	assert_true(back.present && back.corrupt && !back.behind);
	assert_int_equal(back.version, 7);
	assert_memory_equal(back.digest.b, s.digest.b, sizeof(s.digest.b));
	w.data[0] = 1 | 8 | 16;              /* VERIFY's answer: checked, bad */
	assert_int_equal(proto_decode_summary(w.data, w.len, &back), 0);
	assert_true(back.checked && back.bad);
	w.data[0] = 16;                      /* bad without checked */
	assert_int_equal(proto_decode_summary(w.data, w.len, &back), -OFS_ECORRUPT);
	w.data[0] = 32;
	assert_int_equal(proto_decode_summary(w.data, w.len, &back), -OFS_ECORRUPT);
	assert_int_not_equal(proto_decode_summary(w.data, w.len - 1, &back), 0);
	wbuf_free(&w);
}

static void test_small_reply_round_trips_and_checks_its_bytes(void **state)
{
	struct ofs_attr *a = calloc(1, sizeof(*a)), *back = calloc(1, sizeof(*back));
	const uint8_t *d;
	size_t n;
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(back);
	mk_attr(a, OFS_OBJ_METAFILE);
	a->size = 5;
	wbuf_init(&w);
	proto_encode_small_reply(&w, a, "hello", 5);
	assert_int_equal(proto_decode_small_reply(w.data, w.len, back, &d, &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(d, "hello", 5);
	assert_true(back->size == 5);
	assert_int_not_equal(proto_decode_small_reply(w.data, w.len - 1, back, &d, &n), 0);
	wbuf_free(&w);
	/* without bytes */
	wbuf_init(&w);
	proto_encode_small_reply(&w, a, NULL, 0);
	assert_int_equal(proto_decode_small_reply(w.data, w.len, back, &d, &n), 0);
	assert_null(d);
	wbuf_free(&w);
	/* bytes other than the size say, or for a directory: refused */
	a->size = 6;
	wbuf_init(&w);
	proto_encode_small_reply(&w, a, "hello", 5);
	assert_int_equal(proto_decode_small_reply(w.data, w.len, back, &d, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	mk_attr(a, OFS_OBJ_DIRECTORY);
	a->size = 5;
	wbuf_init(&w);
	proto_encode_small_reply(&w, a, "hello", 5);
	assert_int_equal(proto_decode_small_reply(w.data, w.len, back, &d, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	free(a);
	free(back);
}

static void test_attrs_many_round_trip_with_their_statuses(void **state)
{
	struct ofs_attr *a = calloc(3, sizeof(*a)), *back = calloc(3, sizeof(*back));
	int32_t st[3] = { 0, -OFS_ENOOBJ, 0 }, bst[3];
	uint8_t oids[OFS_OID_LEN * (OFS_GETATTR_MANY_MAX + 1)] = { 0 };
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	assert_non_null(a);
	assert_non_null(back);
	mk_attr(&a[0], OFS_OBJ_METAFILE);
	mk_attr(&a[2], OFS_OBJ_DIRECTORY);
	a[2].size = 7;
	wbuf_init(&w);
	proto_encode_attrs_many(&w, st, a, 3);
	assert_int_equal(proto_decode_attrs_many(w.data, w.len, bst, back, 3), 0);
	assert_int_equal(bst[0], 0);
	assert_int_equal(bst[1], -OFS_ENOOBJ);
	assert_int_equal(bst[2], 0);
	assert_int_equal(back[0].nparts, a[0].nparts);
	assert_true(back[2].size == 7 && back[2].type == OFS_OBJ_DIRECTORY);
	/* a count other than asked, a short body, a long one */
	assert_int_equal(proto_decode_attrs_many(w.data, w.len, bst, back, 2), -OFS_ECORRUPT);
	assert_int_not_equal(proto_decode_attrs_many(w.data, w.len - 1, bst, back, 3), 0);
	wbuf_u8(&w, 0);
	assert_int_not_equal(proto_decode_attrs_many(w.data, w.len, bst, back, 3), 0);
	wbuf_free(&w);
	/* a positive status is no status */
	wbuf_init(&w);
	wbuf_u32(&w, 1);
	wbuf_u32(&w, 5);
	assert_int_equal(proto_decode_attrs_many(w.data, w.len, bst, back, 1), -OFS_ECORRUPT);
	wbuf_free(&w);
	/* the request: 1..OFS_GETATTR_MANY_MAX oids */
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_GETATTR_MANY;
	q.data = oids;
	q.data_len = sizeof(oids);
	wbuf_init(&w);
	assert_int_equal(proto_encode_req(&w, &q), -EINVAL);
	wbuf_free(&w);
	q.data_len = OFS_GETATTR_MANY_MAX * OFS_OID_LEN;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_GETATTR_MANY, &w, &d), 0);
	assert_int_equal(d.data_len, OFS_GETATTR_MANY_MAX * OFS_OID_LEN);
	wbuf_free(&w);
	free(a);
	free(back);
}

static void test_summary_many_round_trips_and_is_bounded(void **state)
{
	struct ofs_summary s[3], back[3];
	uint8_t oids[OFS_OID_LEN * (OFS_SUMMARY_MANY_MAX + 1)];
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	memset(s, 0, sizeof(s));
	s[0].present = true;
	s[0].version = 3;
	s[0].type = OFS_OBJ_METAFILE;
	snprintf(s[0].backref.name, sizeof(s[0].backref.name), "f1");
	s[2].present = s[2].behind = true;
	s[2].type = OFS_OBJ_DFILE;
	s[2].backref.stripe = 2;
	wbuf_init(&w);
	proto_encode_summaries(&w, s, 3);
	assert_int_equal(proto_decode_summaries(w.data, w.len, back, 3), 0);
	assert_true(back[0].present && !back[1].present && back[2].behind);
	assert_string_equal(back[0].backref.name, "f1");
	assert_int_equal(back[2].backref.stripe, 2);
	/* a count other than asked, a short body, a long one */
	assert_int_equal(proto_decode_summaries(w.data, w.len, back, 2), -OFS_ECORRUPT);
	assert_int_not_equal(proto_decode_summaries(w.data, w.len - 1, back, 3), 0);
	wbuf_u8(&w, 0);                     /* one byte too many */
	assert_int_equal(proto_decode_summaries(w.data, w.len, back, 3), -OFS_ECORRUPT);
	wbuf_free(&w);

	/* the request: n oids, 1..OFS_SUMMARY_MANY_MAX of them */
	for (size_t i = 0; i < sizeof(oids); i++)
		oids[i] = (uint8_t)i;
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_SUMMARY_MANY;
	q.data = oids;
	q.data_len = 2 * OFS_OID_LEN;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_SUMMARY_MANY, &w, &d), 0);
	assert_int_equal(d.data_len, 2 * OFS_OID_LEN);
	assert_memory_equal(d.data, oids, 2 * OFS_OID_LEN);
	w.data[3] = 3;                       /* claims three, carries two */
	assert_int_not_equal(decode_wbuf(OFS_OP_SUMMARY_MANY, &w, &d), 0);
	w.data[3] = 0;                       /* claims none */
	assert_int_equal(decode_wbuf(OFS_OP_SUMMARY_MANY, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
	q.data_len = (OFS_SUMMARY_MANY_MAX + 1) * OFS_OID_LEN;
	wbuf_init(&w);
	assert_int_not_equal(proto_encode_req(&w, &q), 0);   /* too many to ask */
	wbuf_free(&w);
	wbuf_init(&w);
	wbuf_u32(&w, OFS_SUMMARY_MANY_MAX + 1);
	wbuf_bytes(&w, oids, (OFS_SUMMARY_MANY_MAX + 1) * OFS_OID_LEN);
	assert_int_equal(decode_wbuf(OFS_OP_SUMMARY_MANY, &w, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_join_round_trips_and_is_bounded(void **state)
{
	static uint8_t recs[OFS_JOIN_MAX_BYTES + 64];
	struct ofs_req q, d;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i < sizeof(recs); i++)
		recs[i] = (uint8_t)(i * 7);
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_JOIN;
	q.task.job = 5;
	q.epoch = 9;
	q.sid = mk_sid(2);
	q.flags = 1;
	q.reclen = 62;
	q.data = recs;
	q.data_len = 62 * 3;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_JOIN, &w, &d), 0);
	assert_req_equal(&q, &d);
	wbuf_free(&w);
	/* an end: a count, no records */
	q.flags = 1 | OFS_JOIN_END;
	q.data = NULL;
	q.data_len = 0;
	q.count = 123456789012ull;
	encode_req(&w, &q);
	assert_int_equal(decode_wbuf(OFS_OP_JOIN, &w, &d), 0);
	assert_int_equal(d.count, q.count);
	assert_int_equal(d.flags, q.flags);
	assert_int_equal(d.data_len, 0);
	wbuf_free(&w);
	/* what the encoder refuses: records with an end, none without, a
	 * part of a record, too many bytes, an unknown flag, a record length
	 * of 0 or past the limit */
	struct { uint32_t flags, reclen; size_t len; } bad[] = {
		{ OFS_JOIN_END, 16, 16 }, { 0, 16, 0 }, { 0, 16, 24 },
		{ 0, 16, OFS_JOIN_MAX_BYTES + 16 }, { 0x200, 16, 16 }, { OFS_JOIN_CHANNELS, 16, 16 },
		{ 0, 0, 16 }, { 0, OFS_JOIN_MAX_RECLEN + 1, OFS_JOIN_MAX_RECLEN + 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q.flags = bad[i].flags;
		q.reclen = bad[i].reclen;
		q.data = recs;
		q.data_len = bad[i].len;
		wbuf_init(&w);
		assert_int_equal(proto_encode_req(&w, &q), -EINVAL);
		wbuf_free(&w);
	}
	/* what the decoder refuses: a count of records past the bytes there,
	 * zero records, more bytes than allowed, a bad record length */
	struct { uint32_t flags, reclen, n; size_t len; } dbad[] = {
		{ 0, 16, 3, 32 }, { 0, 16, 0, 0 }, { 0, 16, OFS_JOIN_MAX_BYTES / 16 + 1, OFS_JOIN_MAX_BYTES + 16 },
		{ 0, 0, 1, 0 }, { 0, OFS_JOIN_MAX_RECLEN + 1, 1, OFS_JOIN_MAX_RECLEN + 1 },
		{ 0x8000, 16, 1, 16 },
	};
	for (size_t i = 0; i < sizeof(dbad) / sizeof(dbad[0]); i++) {
		wbuf_init(&w);
		wbuf_u64(&w, 1);
		wbuf_u64(&w, 2);
		wbuf_sid(&w, mk_sid(3));
		wbuf_u32(&w, dbad[i].flags);
		wbuf_u32(&w, dbad[i].reclen);
		wbuf_u32(&w, dbad[i].n);
		wbuf_bytes(&w, recs, dbad[i].len);
		assert_int_not_equal(decode_wbuf(OFS_OP_JOIN, &w, &d), 0);
		wbuf_free(&w);
	}
}

static void test_fetch_reply_round_trips_and_rejects_bad_outcomes(void **state)
{
	struct ofs_fetch_reply f = { .outcome = OFS_FETCH_DONE, .version = 9, .bytes = 4096 }, back;
	struct wbuf w;

	(void)state;
	f.source = mk_sid(7);
	strcpy(f.detail, "fetched version 9");
	wbuf_init(&w);
	proto_encode_fetch_reply(&w, &f);
	assert_int_equal(proto_decode_fetch_reply(w.data, w.len, &back), 0);
	assert_int_equal(back.outcome, OFS_FETCH_DONE);
	assert_int_equal(back.version, 9);
	assert_int_equal(back.bytes, 4096);
	assert_memory_equal(back.source.b, f.source.b, OFS_OID_LEN);
	assert_string_equal(back.detail, f.detail);
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_not_equal(proto_decode_fetch_reply(w.data, cut, &back), 0);
	w.data[0] = 0;
	assert_int_equal(proto_decode_fetch_reply(w.data, w.len, &back), -OFS_ECORRUPT);
	w.data[0] = OFS_FETCH_MAX + 1;
	assert_int_equal(proto_decode_fetch_reply(w.data, w.len, &back), -OFS_ECORRUPT);
	w.data[0] = OFS_FETCH_DONE;
	w.data[w.len - 2] = '\t';
	assert_int_equal(proto_decode_fetch_reply(w.data, w.len, &back), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_stop_reply_round_trips_and_rejects_bad_counts(void **state)
{
	struct ofs_stop_reply *s = calloc(1, sizeof(*s)), *back = calloc(1, sizeof(*back));
	struct wbuf w;

	(void)state;
	assert_non_null(s);
	assert_non_null(back);
	s->objects = 10;
	s->nshort = 3;
	s->n = 2;
	s->list[0].oid = mk_oid(1);
	s->list[0].good = 0;
	s->list[0].need = 1;
	s->list[1].oid = mk_oid(2);
	s->list[1].good = 2;
	s->list[1].need = 3;
	wbuf_init(&w);
	proto_encode_stop_reply(&w, s);
	assert_int_equal(proto_decode_stop_reply(w.data, w.len, back), 0);
	assert_int_equal(back->objects, 10);
	assert_int_equal(back->nshort, 3);
	assert_int_equal(back->n, 2);
	assert_memory_equal(back->list[1].oid.b, s->list[1].oid.b, OFS_OID_LEN);
	assert_int_equal(back->list[1].good, 2);
	assert_int_equal(back->list[1].need, 3);
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_not_equal(proto_decode_stop_reply(w.data, cut, back), 0);
	/* more named than short */
	s->nshort = 1;
	w.len = 0;
	proto_encode_stop_reply(&w, s);
	assert_int_equal(proto_decode_stop_reply(w.data, w.len, back), -OFS_ECORRUPT);
	/* more short than held */
	s->nshort = 11;
	w.len = 0;
	proto_encode_stop_reply(&w, s);
	assert_int_equal(proto_decode_stop_reply(w.data, w.len, back), -OFS_ECORRUPT);
	wbuf_free(&w);
	free(s);
	free(back);
}

static void test_freeze_request_round_trips_and_caps_its_time(void **state)
{
	struct ofs_req q = { .op = OFS_OP_FREEZE }, back;
	struct wbuf w;

	(void)state;
	q.oid = mk_oid(5);
	q.ms = 20000;
	q.sid = mk_sid(7);               /* the holder */
	wbuf_init(&w);
	assert_int_equal(proto_encode_req(&w, &q), 0);
	assert_int_equal(proto_decode_req(OFS_OP_FREEZE, w.data, w.len, &back), 0);
	assert_int_equal(back.ms, 20000);
	assert_memory_equal(back.oid.b, q.oid.b, OFS_OID_LEN);
	assert_memory_equal(back.sid.b, q.sid.b, OFS_OID_LEN);
	/* without its holder: short */
	assert_int_equal(proto_decode_req(OFS_OP_FREEZE, w.data, w.len - 1, &back), -OFS_ECORRUPT);
	q.ms = 600001;
	w.len = 0;
	assert_int_equal(proto_encode_req(&w, &q), 0);
	assert_int_equal(proto_decode_req(OFS_OP_FREEZE, w.data, w.len, &back), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_task_requests_reject_unknown_kind_and_action(void **state)
{
	struct ofs_req q = { .op = OFS_OP_TASK_START }, back;
	struct wbuf w;

	(void)state;
	q.task.job = 1;
	q.task.kind = 9;
	wbuf_init(&w);
	assert_int_equal(proto_encode_req(&w, &q), 0);
	assert_int_equal(proto_decode_req(OFS_OP_TASK_START, w.data, w.len, &back), -OFS_ECORRUPT);
	wbuf_free(&w);
	q.op = OFS_OP_TASK_CTL;
	q.task.action = 0;
	wbuf_init(&w);
	assert_int_equal(proto_encode_req(&w, &q), 0);
	assert_int_equal(proto_decode_req(OFS_OP_TASK_CTL, w.data, w.len, &back), -OFS_ECORRUPT);
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid_accepts_ordinary_names),
		cmocka_unit_test(test_name_valid_rejects_bad_names),
		cmocka_unit_test(test_type_valid_and_names),
		cmocka_unit_test(test_op_name_covers_every_op_and_ignores_response_bit),
		cmocka_unit_test(test_attr_round_trips_every_field),
		cmocka_unit_test(test_servers_round_trip_self_and_root_versions),
		cmocka_unit_test(test_attr_layout_matches_documented_field_order),
		cmocka_unit_test(test_attr_empty_round_trips_at_minimum_size),
		cmocka_unit_test(test_attr_encode_clamps_counts_to_max),
		cmocka_unit_test(test_attr_rejects_nsids_over_max),
		cmocka_unit_test(test_attr_rejects_nstale_over_max),
		cmocka_unit_test(test_attr_rejects_nparts_over_max),
		cmocka_unit_test(test_attr_rejects_part_handle_with_nsids_over_max),
		cmocka_unit_test(test_attr_rejects_unknown_type),
		cmocka_unit_test(test_attr_rejects_bad_backref_name),
		cmocka_unit_test(test_attr_rejects_backref_name_over_255),
		cmocka_unit_test(test_attr_rejects_dist_over_31_bytes),
		cmocka_unit_test(test_report_reason_at_most_255_bytes),
		cmocka_unit_test(test_req_create_small_takes_64k_and_refuses_more),
		cmocka_unit_test(test_servers_at_most_1024_entries),
		cmocka_unit_test(test_dirent_round_trips),
		cmocka_unit_test(test_dirent_rejects_types_other_than_file_and_directory),
		cmocka_unit_test(test_req_round_trips_every_op),
		cmocka_unit_test(test_req_body_sizes_are_exact),
		cmocka_unit_test(test_req_read_exact_bytes),
		cmocka_unit_test(test_req_decoded_data_points_into_body),
		cmocka_unit_test(test_req_rejects_truncated_body_at_every_length),
		cmocka_unit_test(test_req_rejects_trailing_bytes),
		cmocka_unit_test(test_req_rejects_unknown_op),
		cmocka_unit_test(test_req_create_rejects_bad_object_type),
		cmocka_unit_test(test_req_setattr_rejects_bad_type_and_unknown_mask_bits),
		cmocka_unit_test(test_req_create_rejects_nsids_over_max),
		cmocka_unit_test(test_req_create_rejects_nparts_over_max),
		cmocka_unit_test(test_req_read_rejects_length_over_max_io),
		cmocka_unit_test(test_req_write_accepts_max_io_and_rejects_more),
		cmocka_unit_test(test_req_kv_rejects_key_over_max),
		cmocka_unit_test(test_req_kv_rejects_empty_key_except_list),
		cmocka_unit_test(test_req_kv_put_rejects_value_over_max),
		cmocka_unit_test(test_req_list_rejects_max_zero_or_over_limit),
		cmocka_unit_test(test_req_dirent_rejects_bad_names),
		cmocka_unit_test(test_req_dirent_rejects_empty_name_except_list),
		cmocka_unit_test(test_req_dirent_name_limit_is_255_bytes),
		cmocka_unit_test(test_req_dirent_create_rejects_bad_dirent_flags),
		cmocka_unit_test(test_req_dirent_create_rejects_bad_dirent_type),
		cmocka_unit_test(test_req_dirent_create_rejects_handle_nsids_over_max),
		cmocka_unit_test(test_ping_reply_round_trips),
		cmocka_unit_test(test_ping_reply_version_limit_is_31_bytes),
		cmocka_unit_test(test_handle_reply_round_trips),
		cmocka_unit_test(test_handle_reply_rejects_nsids_over_max),
		cmocka_unit_test(test_oid_reply_round_trips),
		cmocka_unit_test(test_attr_reply_round_trips),
		cmocka_unit_test(test_write_reply_round_trips),
		cmocka_unit_test(test_req_write_rejects_unknown_flags),
		cmocka_unit_test(test_dirent_reply_round_trips_present),
		cmocka_unit_test(test_dirent_reply_round_trips_absent),
		cmocka_unit_test(test_dirent_reply_rejects_bad_flag_and_type),
		cmocka_unit_test(test_kv_list_round_trips_and_iterates),
		cmocka_unit_test(test_list_empty_round_trips),
		cmocka_unit_test(test_list_writer_appends_after_existing_bytes),
		cmocka_unit_test(test_dirent_list_round_trips_and_iterates),
		cmocka_unit_test(test_list_rejects_truncated_body_at_every_length),
		cmocka_unit_test(test_list_rejects_trailing_bytes),
		cmocka_unit_test(test_list_rejects_more_flag_over_one),
		cmocka_unit_test(test_list_accepts_1000_entries_and_rejects_count_over),
		cmocka_unit_test(test_list_rejects_count_larger_than_entries),
		cmocka_unit_test(test_kv_list_rejects_key_or_value_over_max),
		cmocka_unit_test(test_dirent_list_rejects_bad_entry_name),
		cmocka_unit_test(test_dirent_list_rejects_bad_entry_type),
		cmocka_unit_test(test_list_open_leaves_reader_untouched_on_failure),
		cmocka_unit_test(test_behind_and_stale_for_requests_round_trip),
		cmocka_unit_test(test_task_status_round_trips_and_checks_before_delivering),
		cmocka_unit_test(test_task_status_carries_the_code_it_failed_with),
		cmocka_unit_test(test_summary_round_trips_and_rejects_unknown_flags),
		cmocka_unit_test(test_summary_many_round_trips_and_is_bounded),
		cmocka_unit_test(test_join_round_trips_and_is_bounded),
		cmocka_unit_test(test_attrs_many_round_trip_with_their_statuses),
		cmocka_unit_test(test_small_reply_round_trips_and_checks_its_bytes),
		cmocka_unit_test(test_fetch_reply_round_trips_and_rejects_bad_outcomes),
		cmocka_unit_test(test_stop_reply_round_trips_and_rejects_bad_counts),
		cmocka_unit_test(test_freeze_request_round_trips_and_caps_its_time),
		cmocka_unit_test(test_task_requests_reject_unknown_kind_and_action),
		cmocka_unit_test(test_finding_kinds_round_trip_by_name),
		cmocka_unit_test(test_behind_rejects_control_characters_in_reason),
		cmocka_unit_test(test_stale_list_round_trips),
		cmocka_unit_test(test_stale_list_checks_whole_body_before_delivering),
		cmocka_unit_test(test_stale_list_rejects_count_over_max_and_stops_on_fn_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
