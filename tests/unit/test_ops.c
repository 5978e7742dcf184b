/*
 * test_ops.c - the operation table (lib/ops.def, lib/optable.h) and the
 * server's handlers (server/ops.h), walked row by row: every operation
 * the protocol defines has a row and, once the parts above the server
 * register theirs, a handler; no server-to-server or maintenance
 * operation is open to users; the flags say what each operation is; and,
 * through the real service on a real store, a caller whose role a row
 * does not name is refused before anything is decoded, and a user
 * without the right a row names - a request of the row's form on an
 * object whose mode gives her nothing - is refused (EACCES); every reply
 * the service gives is of its row's reply shape; and every reply shape's
 * codec round trips a sample. The request codec's round trip of every
 * row is test_proto's (test_req_round_trips_every_op).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backref/points.h"
#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "rebalancer/drain.h"
#include "server/ops.h"
#include "server/service.h"
#include "server/sidtab.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"

static void test_every_operation_has_a_row_and_a_handler(void **state)
{
	(void)state;
	/* before the background parts register theirs: only theirs lack one */
	assert_null(ops_handler(OFS_OP_STOP_CHECK));
	assert_null(ops_handler(OFS_OP_POINTS));
	assert_non_null(ops_handler(OFS_OP_GETATTR));
	assert_int_equal(points_register_ops(), 0);
	assert_int_equal(drain_register_ops(), 0);
	/* once only */
	assert_int_equal(drain_register_ops(), -EINVAL);
	assert_int_equal(ops_register(OFS_OP_READ, ops_handler(OFS_OP_READ)), -EINVAL);
	assert_int_equal(ops_register(OFS_OP_MAX, ops_handler(OFS_OP_READ)), -EINVAL);
	assert_int_equal(ops_register(OFS_OP_READ | 0x8000, ops_handler(OFS_OP_READ)), -EINVAL);
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		const struct op_def *d = op_def(op);
		if (!d)
			fail_msg("operation %u has no row", op);
		assert_non_null(ops_handler(op));
		assert_non_null(d->name);
		assert_true(d->form >= RQ_NONE && d->form <= RQ_JOIN);
		assert_int_not_equal(d->roles, 0);
		assert_int_equal(d->roles & ~(OPR_USER | OPR_ADMIN | OPR_SERVER), 0);
		/* a right is a user's, on the object the request names */
		if (d->right)
			assert_true((d->roles & OPR_USER) && (d->flags & OPF_OBJECT));
		/* a count carried has its bound */
		if (d->form == RQ_OIDS || d->form == RQ_KEY_MAX || d->form == RQ_NAME_MAX ||
		    d->form == RQ_STOP_CHECK)
			assert_int_not_equal(d->most, 0);
		assert_ptr_equal(ops_handler(op | OFS_OP_FORWARDED), ops_handler(op));
	}
}

static void test_unknown_operations_have_no_row(void **state)
{
	(void)state;
	assert_null(op_def(0));
	assert_null(op_def(OFS_OP_MAX));
	assert_null(op_def(0x3fff));
	assert_null(ops_handler(0));
	assert_null(ops_handler(OFS_OP_MAX));
	assert_null(ops_handler(0x3fff));
	assert_null(ops_handler(0xffff));
	assert_string_equal(ofs_op_name(0x3fff), "unknown");
}

static void test_server_to_server_operations_are_for_servers_only(void **state)
{
	static const uint16_t peer[] = {
		OFS_OP_BEHIND, OFS_OP_STALE_FOR, OFS_OP_SUMMARY, OFS_OP_SUMMARY_MANY,
		OFS_OP_VERIFY, OFS_OP_POINTS, OFS_OP_REPAIR_FETCH, OFS_OP_STALE_CLEAR,
		OFS_OP_FREEZE, OFS_OP_CHANGES, OFS_OP_JOIN,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(peer) / sizeof(peer[0]); i++)
		assert_int_equal(op_def(peer[i])->roles, OPR_SERVER);
}

static void test_maintenance_is_not_open_to_users(void **state)
{
	static const uint16_t maint[] = {
		OFS_OP_SERVER_SET, OFS_OP_ROOT_MOVE, OFS_OP_STOP_CHECK, OFS_OP_TASK_START,
		OFS_OP_TASK_POLL, OFS_OP_TASK_CTL, OFS_OP_CAPKEYS, OFS_OP_SET_ROOT,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(maint) / sizeof(maint[0]); i++) {
		assert_int_equal(op_def(maint[i])->roles & OPR_USER, 0);
		assert_true(op_def(maint[i])->roles & OPR_ADMIN);
	}
	/* An operator's change to the server table is an admin's word: a
	 * server speaks for its own entry only (docs/design.md, "Security") */
	assert_int_equal(op_def(OFS_OP_SERVER_SET)->roles, OPR_ADMIN);
	/* Anyone pulls the CRL (a client checks servers against it); only an
	 * admin or a server gives one (op_revoked refuses a user's) */
	assert_true(op_def(OFS_OP_REVOKED)->roles & OPR_USER);
}

static void test_flags_say_what_each_operation_is(void **state)
{
	static const uint16_t reads[] = {
		OFS_OP_GETATTR, OFS_OP_READ, OFS_OP_KV_GET, OFS_OP_KV_LIST,
		OFS_OP_DIRENT_LOOKUP, OFS_OP_DIRENT_LIST, OFS_OP_GET_SMALL,
	};
	static const uint16_t changes[] = {
		OFS_OP_REMOVE, OFS_OP_SETATTR, OFS_OP_WRITE, OFS_OP_COMMIT, OFS_OP_KV_PUT,
		OFS_OP_KV_DEL, OFS_OP_DIRENT_CREATE, OFS_OP_DIRENT_REMOVE,
	};
	const uint32_t kind = OPF_OBJECT | OPF_READS | OPF_CHANGES | OPF_MAKES;
	size_t nr = 0, nc = 0, ng = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		assert_int_equal(op_flags(reads[i]) & kind, OPF_OBJECT | OPF_READS);
		assert_true(op_flags(reads[i]) & OPF_ASKS);     /* (a read changes nothing) */
	}
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		assert_int_equal(op_flags(changes[i]) & kind, OPF_OBJECT | OPF_CHANGES);
		assert_false(op_flags(changes[i]) & OPF_ASKS);
	}
	/* a create is a replicated change of an object that does not exist
	 * yet, and so is a small file's (its metafile and dfile) */
	assert_int_equal(op_flags(OFS_OP_CREATE) & kind, OPF_CHANGES | OPF_MAKES);
	assert_int_equal(op_flags(OFS_OP_CREATE_SMALL) & kind, OPF_CHANGES | OPF_MAKES);
	/* and nothing else is either; what grants a capability is a read of a
	 * file's or directory's attributes, or a create */
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		nr += (op_flags(op) & OPF_READS) != 0;
		nc += (op_flags(op) & OPF_CHANGES) != 0;
		ng += (op_flags(op) & OPF_GRANTS) != 0;
		if (op_flags(op) & OPF_GRANTS)
			assert_true(op == OFS_OP_GETATTR || op == OFS_OP_GET_SMALL ||
				    (op_flags(op) & OPF_MAKES));
		if (op_flags(op) & OPF_BY_MASK)
			assert_int_equal(op, OFS_OP_SETATTR);
	}
	assert_int_equal(nr, sizeof(reads) / sizeof(reads[0]));
	assert_int_equal(nc, sizeof(changes) / sizeof(changes[0]) + 2);
	assert_int_equal(ng, 4);
}

/* ---- through the service, row by row ------------------------------------ */

struct fixture {
	struct tmpstore ts;          /* the store (s: ts.s) */
	struct store *s;
	struct sidtab *tab;
	struct service sv;
	struct ofs_oid none;         /* a directory, mode 0, another user's */
	struct ofs_oid all;          /* a directory, mode 0777, ann's own */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct ofs_attr in;

	assert_non_null(fx);
	assert_int_equal(tmpstore_make("ops", 4096, &fx->ts), 0);
	fx->s = fx->ts.s;
	assert_int_equal(sidtab_open(fx->s, "127.0.0.1:1", &fx->tab), 0);
	service_init(&fx->sv, fx->s, fx->tab, NULL, NULL);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRECTORY;    /* (the mode gives every right) */
	in.mode = 0;
	in.uid = 999;
	in.gid = 999;
	in.nsids = 1;
	in.sids[0] = fx->ts.sid;
	in.replicas = 1;
	assert_int_equal(store_create(fx->s, &in, &fx->none), 0);
	in.mode = 0777;
	in.uid = in.gid = 1000;
	assert_int_equal(store_create(fx->s, &in, &fx->all), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	service_fini(&fx->sv);
	sidtab_close(fx->tab);
	tmpstore_remove(&fx->ts);
	free(fx);
	return 0;
}

/* op as who; a reply it answers (rc 0) must be of its row's reply shape,
 * decoded and encoded again to the same bytes (op_reply_check). *checked
 * counts the replies so checked. */
static size_t checked;

static int call_as(struct fixture *fx, const struct ident *who, uint16_t op, const uint8_t *body,
		   size_t len)
{
	struct service_call call = { .who = who };
	struct wbuf reply, again;
	int rc;

	wbuf_init(&reply);
	wbuf_init(&again);
	rc = service_handle(&fx->sv, &call, op, body, len, &reply);
	if (rc == 0) {
		int shape = op_reply_check(op_def(op)->reply, reply.data, reply.len, 1, &again);
		if (shape)
			fail_msg("%s's reply (%zu bytes) is not of its row's shape: %d",
				 op_def(op)->name, reply.len, shape);
		assert_int_equal(again.len, reply.len);
		assert_true(reply.len == 0 || memcmp(again.data, reply.data, reply.len) == 0);
		checked++;
	}
	wbuf_free(&again);
	wbuf_free(&reply);
	return rc;
}

static void test_a_role_a_row_does_not_name_is_refused(void **state)
{
	struct fixture *fx = *state;
	static const struct { uint8_t role; uint8_t bit; } roles[] = {
		{ IDENT_USER, OPR_USER }, { IDENT_ADMIN, OPR_ADMIN }, { IDENT_SERVER, OPR_SERVER },
	};

	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
			struct ident who = { .role = roles[i].role, .uid = 1000, .ngids = 1,
					     .gids = { 1000 } };
			int rc = call_as(fx, &who, op, NULL, 0);   /* (refused before decoding) */
			if (op_def(op)->roles & roles[i].bit)
				assert_int_not_equal(rc, -EACCES);
			else
				assert_int_equal(rc, -EACCES);
		}
	}
}

/* A request of form f on oid: every field plausible, so that only its
 * right stands in the way. */
static void request_of_form(struct ofs_req *q, uint16_t op, struct ofs_oid oid)
{
	static const uint8_t key[] = "user.k", value[] = "v", bytes[] = "x";
	const struct op_def *d = op_def(op);

	memset(q, 0, sizeof(*q));
	q->op = op;
	q->oid = oid;
	switch (d->form) {
	case RQ_READ:
		q->length = 1;
		break;
	case RQ_WRITE:
		q->data = bytes;
		q->data_len = 1;
		break;
	case RQ_KEY_VALUE:
		q->data = value;
		q->data_len = 1;
		/* fall through */
	case RQ_KEY:
		q->key = key;
		q->key_len = sizeof(key) - 1;
		break;
	case RQ_KEY_MAX:
	case RQ_NAME_MAX:
		q->max = 1;
		break;
	case RQ_DIRENT:
		q->dirent.type = OFS_OBJ_METAFILE;
		q->dirent.handle.oid = oid;
		/* fall through */
	case RQ_NAME:
		snprintf(q->name, sizeof(q->name), "n");
		break;
	case RQ_OIDS:
		q->data = q->oid.b;        /* (one oid: the count call_as checks by) */
		q->data_len = OFS_OID_LEN;
		break;
	default:
		break;                   /* (RQ_OID, RQ_SETATTR with no mask) */
	}
}

/* Each row a user may call that names a right, as ann: on an object whose
 * mode gives her nothing, refused; on one whose mode gives her all, not -
 * but for the two the mode does not decide: GETATTR, which needs
 * no right on it (as stat(2)), and REMOVE, whose right only her
 * capability for the directory proves (docs/design.md "Security"). */
static void test_a_user_without_a_rows_right_is_refused(void **state)
{
	struct fixture *fx = *state;
	struct ident ann = { .role = IDENT_USER, .uid = 1000, .ngids = 1, .gids = { 1000 } };
	size_t tried = 0;

	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		const struct op_def *d = op_def(op);
		struct ofs_req q;
		struct wbuf body;
		int rc;

		if (!(d->roles & OPR_USER) || !(d->right || (d->flags & OPF_BY_MASK)))
			continue;
		request_of_form(&q, op, fx->none);
		wbuf_init(&body);
		assert_int_equal(proto_encode_req(&body, &q), 0);
		rc = call_as(fx, &ann, op, body.data, body.len);
		wbuf_free(&body);
		if (op == OFS_OP_GETATTR)
			assert_int_not_equal(rc, -EACCES);
		else if (rc != -EACCES)
			fail_msg("%s without its right: %d, not refused", d->name, rc);
		request_of_form(&q, op, fx->all);
		wbuf_init(&body);
		assert_int_equal(proto_encode_req(&body, &q), 0);
		rc = call_as(fx, &ann, op, body.data, body.len);
		wbuf_free(&body);
		if (op == OFS_OP_REMOVE)
			assert_int_equal(rc, -EACCES);
		else if (rc == -EACCES)
			fail_msg("%s with its right: refused", d->name);
		tried++;
	}
	assert_int_equal(tried, 15);
}

/* Every row the service answers here - a request of its form, from a
 * server, on an object it may reach - answers in its row's reply shape
 * (call_as checks each). Rows that need a peer, a task or a signed body
 * are answered with an error here and left to the integration tests. */
static void test_each_rows_reply_has_its_rows_shape(void **state)
{
	struct fixture *fx = *state;
	struct ident srv = { .role = IDENT_SERVER };
	struct ident admin = { .role = IDENT_ADMIN };
	struct ofs_oid dfile, dirdata, spare;
	struct ofs_attr in;

	/* objects of the types the rows act on, and a spare one that the
	 * rows marking a copy (behind, frozen, stale) are given */
	memset(&in, 0, sizeof(in));
	in.mode = 0777;
	in.uid = in.gid = 1000;
	in.nsids = 1;
	in.sids[0] = store_sid(fx->s);
	in.replicas = 1;
	in.type = OFS_OBJ_DFILE;
	assert_int_equal(store_create(fx->s, &in, &dfile), 0);
	in.type = OFS_OBJ_DIRDATA;
	assert_int_equal(store_create(fx->s, &in, &dirdata), 0);
	in.type = OFS_OBJ_DIRECTORY;
	assert_int_equal(store_create(fx->s, &in, &spare), 0);
	checked = 0;
	for (uint16_t i = OFS_OP_PING; i <= OFS_OP_MAX; i++) {
		/* (REMOVE last: it removes the object the others name) */
		uint16_t op = i == OFS_OP_REMOVE ? OFS_OP_CREATE : i == OFS_OP_MAX ? OFS_OP_REMOVE : i;
		const struct op_def *d = op_def(op);
		struct ofs_oid oid = fx->all;
		struct ofs_req q;
		struct wbuf body;

		if (i == OFS_OP_CREATE)
			continue;        /* (asked in REMOVE's place) */
		if (d->form == RQ_READ || d->form == RQ_WRITE || op == OFS_OP_COMMIT)
			oid = dfile;
		else if (d->form == RQ_DIRENT || d->form == RQ_NAME || d->form == RQ_NAME_MAX)
			oid = dirdata;
		else if (d->form == RQ_REPORT || d->form == RQ_FREEZE || d->form == RQ_STALE_CLEAR)
			oid = spare;
		request_of_form(&q, op, oid);
		wbuf_init(&body);
		if (proto_encode_req(&body, &q) == 0)
			(void)call_as(fx, d->roles & OPR_ADMIN ? &admin : &srv, op, body.data,
				      body.len);
		wbuf_free(&body);
	}
	/* 26 answer here; those needing a peer, a task, a root, a key before
	 * it is put or a signed body answer an error, and are left to the
	 * integration tests */
	if (checked < 26)
		fail_msg("only %zu rows answered, and were checked", checked);
}

/* The reply shapes refuse what is not theirs: an empty body is a reply
 * of nothing only, a byte too many is refused, an unknown shape is
 * -EINVAL. */
static void test_a_reply_not_of_its_shape_is_refused(void **state)
{
	static const uint8_t junk[3] = { 1, 2, 3 };
	struct wbuf w;

	(void)state;
	assert_int_equal(op_reply_check(RP_NONE, NULL, 0, 0, NULL), 0);
	assert_int_not_equal(op_reply_check(RP_NONE, junk, 1, 0, NULL), 0);
	assert_int_not_equal(op_reply_check(RP_OID, junk, sizeof(junk), 0, NULL), 0);
	assert_int_not_equal(op_reply_check(RP_U8, junk, 2, 0, NULL), 0);
	assert_int_equal(op_reply_check(RP_U8, junk, 1, 0, NULL), 0);
	assert_int_equal(op_reply_check(RP_MAX_, junk, 1, 0, NULL), -EINVAL);
	assert_int_equal(op_reply_check(0, junk, 1, 0, NULL), -EINVAL);
	wbuf_init(&w);
	proto_encode_oid_reply(&w, (struct ofs_oid){ { 7 } });
	wbuf_u8(&w, 0);                  /* (a byte too many) */
	assert_int_not_equal(op_reply_check(RP_OID, w.data, w.len, 0, NULL), 0);
	assert_int_equal(op_reply_check(RP_OID, w.data, w.len - 1, 0, NULL), 0);
	wbuf_free(&w);
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++)
		assert_true(op_def(op)->reply >= RP_NONE && op_def(op)->reply < RP_MAX_);
}

/* A sample of reply shape rp, encoded by that shape's encoder, into w;
 * *count: the request count it needs. */
static void sample_reply(uint8_t rp, struct wbuf *w, uint32_t *count)
{
	static const uint8_t bytes[] = "abc";
	struct ofs_handle h = { .nsids = 1 };
	struct ofs_dirent d = { .type = OFS_OBJ_METAFILE };
	struct ofs_attr *a = calloc(2, sizeof(*a));
	struct ofs_server *e = calloc(1, sizeof(*e));
	struct ofs_stop_reply *sr = calloc(1, sizeof(*sr));
	struct ofs_summary sm[2] = { { .present = true, .type = OFS_OBJ_DFILE, .version = 3 } };
	struct ofs_task_status st = { .state = OFS_TASK_RUNNING, .objects_done = 2 };
	struct ofs_task_finding f = { .seq = 1, .kind = 1, .repair = 0 };
	struct ofs_list_writer lw;
	struct cap_key keys[1] = { { .id = 7 } };
	uint8_t sig[CAP_SIG_LEN] = { 1 };
	char reasons[1][256] = { "missed a change" };
	int32_t sts[2] = { 0, -EACCES };

	assert_true(a && e && sr);
	h.oid.b[0] = h.sids[0].b[0] = 1;
	d.handle = h;
	a[0].type = a[1].type = OFS_OBJ_DIRECTORY;
	a[0].nsids = a[1].nsids = 1;
	a[0].replicas = a[1].replicas = 1;
	snprintf(e->address, sizeof(e->address), "127.0.0.1:1");
	e->sid.b[0] = 2;
	e->weight_milli = 1000;
	sr->objects = 3;
	sr->nshort = sr->n = 1;
	sr->list[0].good = 1;
	sr->list[0].need = 2;
	*count = 0;
	switch (rp) {
	case RP_NONE: break;
	case RP_PING: proto_encode_ping(w, &(struct ofs_ping_reply){ .version = "0.1.0" }); break;
	case RP_HANDLE: proto_encode_handle_reply(w, &h); break;
	case RP_OID: proto_encode_oid_reply(w, h.oid); break;
	case RP_ATTR: proto_encode_attr(w, a); break;
	case RP_BYTES: wbuf_bytes(w, bytes, 3); break;
	case RP_WRITE: proto_encode_write_reply(w, &(struct ofs_write_reply){ 2, 4096 }); break;
	case RP_KV_LIST:
		proto_list_begin(&lw, w);
		proto_list_add_kv(&lw, "user.k", 6, "v", 1);
		proto_list_end(&lw, true);
		break;
	case RP_DIRENT: proto_encode_dirent_reply(w, true, &d); break;
	case RP_DIRENT_LIST:
		proto_list_begin(&lw, w);
		proto_list_add_dirent(&lw, "name", &d);
		proto_list_end(&lw, false);
		break;
	case RP_SERVERS: proto_encode_servers(w, &h.sids[0], e, 1); break;
	case RP_SERVER: proto_encode_server(w, e); break;
	case RP_STATS: proto_encode_stats(w, &(struct ofs_stats){ .objects = 5, .bytes = 9 }); break;
	case RP_ROOT: proto_encode_root(w, &h, 12345); break;
	case RP_STALE_LIST: proto_encode_stale_list(w, &h.oid, reasons, 1, true); break;
	case RP_SUMMARY: proto_encode_summary(w, &sm[0]); break;
	case RP_TASK_STATUS: proto_encode_task_status(w, &st, &f, 1); break;
	case RP_U8: wbuf_u8(w, 2); break;
	case RP_FETCH:
		proto_encode_fetch_reply(w, &(struct ofs_fetch_reply){ .outcome = OFS_FETCH_DONE, .version = 1,
								.detail = "ok" });
		break;
	case RP_STOP: proto_encode_stop_reply(w, sr); break;
	case RP_SUMMARIES: proto_encode_summaries(w, sm, 2); *count = 2; break;
	case RP_CHANGES: proto_encode_changes(w, 4, (struct ofs_digest){ { 0 } }, bytes, 3); break;
	case RP_CRL: crl_answer_encode(w, 9, NULL, 0); break;
	case RP_CAPKEYS: cap_keys_signed_encode(w, keys, 1, sig); break;
	case RP_SMALL:
		a[1].type = OFS_OBJ_METAFILE;
		a[1].size = 3;
		proto_encode_small_reply(w, &a[1], bytes, 3);
		break;
	case RP_ATTRS_MANY: proto_encode_attrs_many(w, sts, a, 2); *count = 2; break;
	default: fail_msg("reply shape %u has no sample here", rp);
	}
	free(a);
	free(e);
	free(sr);
}

/* Every reply shape - so every row's reply - round trips: a sample its
 * encoder writes checks as its shape and comes out as the same bytes,
 * and the sample cut short by a byte does not check (but for the shapes
 * that hold any number of bytes). */
static void test_every_reply_shape_round_trips(void **state)
{
	(void)state;
	for (uint8_t rp = RP_NONE; rp < RP_MAX_; rp++) {
		struct wbuf w, again;
		uint32_t count;
		int rc;

		wbuf_init(&w);
		wbuf_init(&again);
		sample_reply(rp, &w, &count);
		assert_int_equal(wbuf_error(&w), 0);
		rc = op_reply_check(rp, w.data, w.len, count, &again);
		if (rc)
			fail_msg("reply shape %u: its own sample does not check: %d", rp, rc);
		assert_int_equal(again.len, w.len);
		assert_true(w.len == 0 || memcmp(again.data, w.data, w.len) == 0);
		if (w.len && rp != RP_BYTES && rp != RP_CRL)
			if (op_reply_check(rp, w.data, w.len - 1, count, NULL) == 0)
				fail_msg("reply shape %u: cut short by a byte, it still checks", rp);
		wbuf_free(&again);
		wbuf_free(&w);
	}
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_operation_has_a_row_and_a_handler),
		cmocka_unit_test(test_unknown_operations_have_no_row),
		cmocka_unit_test(test_server_to_server_operations_are_for_servers_only),
		cmocka_unit_test(test_maintenance_is_not_open_to_users),
		cmocka_unit_test(test_flags_say_what_each_operation_is),
		T(test_a_role_a_row_does_not_name_is_refused),
		T(test_a_user_without_a_rows_right_is_refused),
		T(test_each_rows_reply_has_its_rows_shape),
		cmocka_unit_test(test_a_reply_not_of_its_shape_is_refused),
		cmocka_unit_test(test_every_reply_shape_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
