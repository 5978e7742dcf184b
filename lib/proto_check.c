/*
 * proto_check.c - a reply body checked against its row's reply shape
 * (op_reply_check, optable.h): the reply codec dispatched by the shape,
 * as proto.c dispatches requests by their form. Each case decodes with
 * the shape's decoder (proto_reply.c, crl.c, cap.c) and encodes what it
 * read again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "lib/wire.h"

/* A list's records as decoded, encoded again one by one. */
struct records_again {
	struct wbuf w;
	uint32_t n;
};

static int stale_again(struct ofs_oid oid, const char *reason, void *arg)
{
	struct records_again *g = arg;

	proto_encode_stale_record(&g->w, oid, reason);
	g->n++;
	return 0;
}

static int finding_again(const struct ofs_task_finding *f, void *arg)
{
	struct records_again *g = arg;

	proto_encode_finding(&g->w, f);
	g->n++;
	return 0;
}

static int check_lists(uint8_t reply, const uint8_t *b, size_t n, struct wbuf *w)
{
	struct ofs_list_reader lr;
	struct ofs_list_writer lw;
	int rc = reply == RP_KV_LIST ? proto_list_open_kv(&lr, b, n)
				     : proto_list_open_dirent(&lr, b, n);
	bool more;

	if (rc)
		return rc;
	more = lr.more;
	proto_list_begin(&lw, w);
	if (reply == RP_KV_LIST) {
		const uint8_t *k, *v;
		size_t kn, vn;
		while (proto_list_next_kv(&lr, &k, &kn, &v, &vn) == 1)
			proto_list_add_kv(&lw, k, kn, v, vn);
	} else {
		char name[OFS_NAME_MAX + 1];
		struct ofs_dirent d;
		while (proto_list_next_dirent(&lr, name, &d) == 1)
			proto_list_add_dirent(&lw, name, &d);
	}
	proto_list_end(&lw, more);
	return rbuf_error(&lr.r) ? -OFS_ECORRUPT : 0;
}

/* The shapes of fixed size, decoded into a local and encoded again. */
static int check_small(uint8_t reply, const uint8_t *b, size_t n, struct wbuf *w)
{
	union {
		struct ofs_ping_reply ping;
		struct ofs_handle h;
		struct ofs_oid oid;
		struct ofs_write_reply wr;
		struct ofs_stats st;
		struct ofs_summary sm;
		struct ofs_fetch_reply fr;
	} u;
	struct ofs_dirent d;
	int64_t birth;
	bool present;
	int rc = -EINVAL;

	switch (reply) {
	case RP_PING:
		if (!(rc = proto_decode_ping(b, n, &u.ping)))
			proto_encode_ping(w, &u.ping);
		break;
	case RP_HANDLE:
		if (!(rc = proto_decode_handle_reply(b, n, &u.h)))
			proto_encode_handle_reply(w, &u.h);
		break;
	case RP_OID:
		if (!(rc = proto_decode_oid_reply(b, n, &u.oid)))
			proto_encode_oid_reply(w, u.oid);
		break;
	case RP_WRITE:
		if (!(rc = proto_decode_write_reply(b, n, &u.wr)))
			proto_encode_write_reply(w, &u.wr);
		break;
	case RP_DIRENT:
		if (!(rc = proto_decode_dirent_reply(b, n, &present, &d)))
			proto_encode_dirent_reply(w, present, &d);
		break;
	case RP_STATS:
		if (!(rc = proto_decode_stats(b, n, &u.st)))
			proto_encode_stats(w, &u.st);
		break;
	case RP_ROOT:
		if (!(rc = proto_decode_root(b, n, &u.h, &birth)))
			proto_encode_root(w, &u.h, birth);
		break;
	case RP_SUMMARY:
		if (!(rc = proto_decode_summary(b, n, &u.sm)))
			proto_encode_summary(w, &u.sm);
		break;
	case RP_FETCH:
		if (!(rc = proto_decode_fetch_reply(b, n, &u.fr)))
			proto_encode_fetch_reply(w, &u.fr);
		break;
	case RP_U8:
		rc = n == 1 ? 0 : -OFS_ECORRUPT;
		if (!rc)
			wbuf_u8(w, b[0]);
		break;
	default:
		break;
	}
	return rc;
}

/* The shapes with attributes, a count or a table: on the heap. */
static int check_large(uint8_t reply, const uint8_t *b, size_t n, uint32_t count,
		       struct wbuf *w)
{
	int rc = -EINVAL;

	switch (reply) {
	case RP_ATTR: {
		struct ofs_attr *a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		if (!(rc = proto_decode_attr_reply(b, n, a)))
			proto_encode_attr(w, a);
		free(a);
		break;
	}
	case RP_SMALL: {
		struct ofs_attr *a = malloc(sizeof(*a));
		const uint8_t *data;
		size_t len;
		if (!a)
			return -ENOMEM;
		if (!(rc = proto_decode_small_reply(b, n, a, &data, &len)))
			proto_encode_small_reply(w, a, data, len);
		free(a);
		break;
	}
	case RP_ATTRS_MANY: {
		int32_t *st = calloc(count ? count : 1, sizeof(*st));
		struct ofs_attr *a = calloc(count ? count : 1, sizeof(*a));
		if (count > OFS_GETATTR_MANY_MAX)
			rc = -OFS_ETOOBIG;
		else if (!st || !a)
			rc = -ENOMEM;
		else if (!(rc = proto_decode_attrs_many(b, n, st, a, count)))
			proto_encode_attrs_many(w, st, a, count);
		free(st);
		free(a);
		break;
	}
	case RP_SUMMARIES: {
		struct ofs_summary *s = calloc(count ? count : 1, sizeof(*s));
		if (count > OFS_SUMMARY_MANY_MAX)
			rc = -OFS_ETOOBIG;
		else if (!s)
			rc = -ENOMEM;
		else if (!(rc = proto_decode_summaries(b, n, s, count)))
			proto_encode_summaries(w, s, count);
		free(s);
		break;
	}
	case RP_STALE_LIST: {
		struct records_again g = { .n = 0 };
		bool more = false;
		wbuf_init(&g.w);
		if (!(rc = proto_decode_stale_list(b, n, stale_again, &g, &more))) {
			wbuf_u32(w, g.n);
			wbuf_bytes(w, g.w.data, g.w.len);
			wbuf_u8(w, more ? 1 : 0);
		}
		wbuf_free(&g.w);
		break;
	}
	case RP_TASK_STATUS: {
		struct records_again g = { .n = 0 };
		struct ofs_task_status st;
		wbuf_init(&g.w);
		if (!(rc = proto_decode_task_status(b, n, &st, finding_again, &g))) {
			proto_encode_task_status(w, &st, NULL, 0);
			if (w->len >= 4)
				wbuf_patch_u32(w, w->len - 4, g.n);   /* (the count, last) */
			wbuf_bytes(w, g.w.data, g.w.len);
		}
		wbuf_free(&g.w);
		break;
	}
	case RP_STOP: {
		struct ofs_stop_reply *s = malloc(sizeof(*s));
		if (!s)
			return -ENOMEM;
		if (!(rc = proto_decode_stop_reply(b, n, s)))
			proto_encode_stop_reply(w, s);
		free(s);
		break;
	}
	default:
		break;
	}
	return rc;
}

/* The shapes that carry what other modules define: the server table, a
 * CRL, a key set, change notes, raw bytes. */
static int check_other(uint8_t reply, const uint8_t *b, size_t n, struct wbuf *w)
{
	int rc = -EINVAL;

	switch (reply) {
	case RP_NONE:
		rc = n == 0 ? 0 : -OFS_ECORRUPT;
		break;
	case RP_BYTES:
		rc = n <= OFS_MAX_IO ? 0 : -OFS_ETOOBIG;
		if (!rc)
			wbuf_bytes(w, b, n);
		break;
	case RP_SERVERS: {
		struct ofs_server *e = NULL;
		struct ofs_sid responder;
		size_t ne = 0;
		if (!(rc = proto_decode_servers(b, n, true, &responder, &e, &ne)))
			proto_encode_servers(w, &responder, e, ne);
		free(e);
		break;
	}
	case RP_SERVER: {
		struct ofs_server *e = malloc(sizeof(*e));
		struct rbuf r;
		if (!e)
			return -ENOMEM;
		rbuf_init(&r, b, n);
		proto_decode_server(&r, e);
		rc = rbuf_error(&r) || rbuf_left(&r) ? -OFS_ECORRUPT : 0;
		if (!rc)
			proto_encode_server(w, e);
		free(e);
		break;
	}
	case RP_CHANGES: {
		struct ofs_digest dg;
		const uint8_t *notes;
		uint64_t version;
		size_t nn;
		if (!(rc = proto_decode_changes(b, n, &version, &dg, &notes, &nn)))
			proto_encode_changes(w, version, dg, notes, nn);
		break;
	}
	case RP_CRL: {
		const uint8_t *der;
		uint64_t number;
		size_t derlen;
		if (!(rc = crl_answer_decode(b, n, &number, &der, &derlen)))
			crl_answer_encode(w, number, der, derlen);
		break;
	}
	case RP_CAPKEYS: {
		struct cap_key keys[CAP_MAX_KEYS];
		uint8_t sig[CAP_SIG_LEN];
		size_t nk = 0;
		if (n == 0)
			return 0;
		if (!(rc = cap_keys_signed_decode(b, n, keys, &nk, sig)))
			cap_keys_signed_encode(w, keys, nk, sig);
		memset(keys, 0, sizeof(keys));   /* (secret) */
		break;
	}
	default:
		break;
	}
	return rc;
}

int op_reply_check(uint8_t reply, const uint8_t *b, size_t n, uint32_t count, struct wbuf *out)
{
	struct wbuf scratch;
	struct wbuf *w;
	int rc;

	wbuf_init(&scratch);
	w = out ? out : &scratch;
	switch (reply) {
	case RP_PING: case RP_HANDLE: case RP_OID: case RP_WRITE: case RP_DIRENT:
	case RP_STATS: case RP_ROOT: case RP_SUMMARY: case RP_FETCH: case RP_U8:
		rc = check_small(reply, b, n, w);
		break;
	case RP_ATTR: case RP_SMALL: case RP_ATTRS_MANY: case RP_SUMMARIES:
	case RP_STALE_LIST: case RP_TASK_STATUS: case RP_STOP:
		rc = check_large(reply, b, n, count, w);
		break;
	case RP_KV_LIST: case RP_DIRENT_LIST:
		rc = check_lists(reply, b, n, w);
		break;
	case RP_NONE: case RP_BYTES: case RP_SERVERS: case RP_SERVER: case RP_CHANGES:
	case RP_CRL: case RP_CAPKEYS:
		rc = check_other(reply, b, n, w);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (!rc && wbuf_error(w))
		rc = wbuf_error(w);
	wbuf_free(&scratch);
	return rc;
}
