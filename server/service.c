/* service.c - request handlers (see service.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ofs_error.h"
#include "proto.h"
#include "service.h"

struct list_ctx {
	struct ofs_list_writer lw;
};

static int add_kv(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct list_ctx *lc = arg;

	proto_list_add_kv(&lc->lw, k, kn, v, vn);
	return wbuf_error(lc->lw.w);
}

static int add_dirent(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct list_ctx *lc = arg;

	proto_list_add_dirent(&lc->lw, name, d);
	return wbuf_error(lc->lw.w);
}

static int do_read(struct store *s, const struct ofs_req *q, struct wbuf *reply)
{
	size_t lenpos = reply->len, got = 0;
	uint8_t *p;
	int rc;

	wbuf_u32(reply, 0);
	p = wbuf_reserve(reply, q->length);
	if (!p && q->length)
		return -ENOMEM;
	rc = store_read(s, q->oid, q->offset, p, q->length, &got);
	if (rc) {
		if (rc == -OFS_ECHECKSUM) {
			char hex[OFS_OID_HEX];
			oid_to_hex(q->oid, hex);
			log_warn("read %s at %llu: checksum mismatch; this copy is bad",
				 hex, (unsigned long long)q->offset);
		}
		return rc;
	}
	reply->len = lenpos + 4 + got;
	wbuf_patch_u32(reply, lenpos, (uint32_t)got);
	return 0;
}

static int handle(struct store *s, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_attr *a = NULL;
	struct ofs_dirent d;
	struct list_ctx lc;
	bool more = false, present = false;
	int rc = 0;

	switch (q->op) {
	case OFS_OP_PING: {
		struct ofs_ping_reply p;
		memset(&p, 0, sizeof(p));
		p.sid = store_sid(s);
		strncpy(p.version, OFS_VERSION, sizeof(p.version) - 1);
		proto_encode_ping(reply, &p);
		break;
	}
	case OFS_OP_GET_ROOT: {
		struct ofs_handle h;
		rc = store_root(s, &h);
		if (!rc)
			proto_encode_handle_reply(reply, &h);
		break;
	}
	case OFS_OP_CREATE: {
		struct ofs_oid oid;
		rc = store_create(s, &q->attr, &oid);
		if (!rc)
			proto_encode_oid_reply(reply, oid);
		break;
	}
	case OFS_OP_REMOVE:
		rc = store_remove(s, q->oid);
		break;
	case OFS_OP_GETATTR:
	case OFS_OP_SETATTR:
		a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		if (q->op == OFS_OP_GETATTR)
			rc = store_getattr(s, q->oid, a);
		else
			rc = store_setattr(s, q->oid, q->mask, &q->attr, a);
		if (!rc)
			proto_encode_attr(reply, a);
		free(a);
		break;
	case OFS_OP_READ:
		rc = do_read(s, q, reply);
		break;
	case OFS_OP_WRITE: {
		struct ofs_write_reply w;
		if (q->flags & OFS_WRITE_UNSTABLE)
			rc = store_write_unstable(s, q->oid, q->offset, q->data, q->data_len,
						  &w.version, &w.size);
		else
			rc = store_write(s, q->oid, q->offset, q->data, q->data_len,
					 &w.version, &w.size);
		if (!rc)
			proto_encode_write_reply(reply, &w);
		break;
	}
	case OFS_OP_COMMIT: {
		struct ofs_write_reply w;
		rc = store_commit(s, q->oid, &w.version, &w.size);
		if (!rc)
			proto_encode_write_reply(reply, &w);
		break;
	}
	case OFS_OP_KV_GET: {
		void *v = NULL;
		size_t vn = 0;
		rc = store_kv_get(s, q->oid, q->key, q->key_len, &v, &vn);
		if (!rc)
			wbuf_blob(reply, v, vn);
		free(v);
		break;
	}
	case OFS_OP_KV_PUT:
		rc = store_kv_put(s, q->oid, q->key, q->key_len, q->data, q->data_len);
		break;
	case OFS_OP_KV_DEL:
		rc = store_kv_del(s, q->oid, q->key, q->key_len);
		break;
	case OFS_OP_KV_LIST:
		proto_list_begin(&lc.lw, reply);
		rc = store_kv_list(s, q->oid, q->key, q->key_len, q->max, add_kv, &lc, &more);
		if (!rc)
			proto_list_end(&lc.lw, more);
		break;
	case OFS_OP_DIRENT_CREATE:
		memset(&d, 0, sizeof(d));
		rc = store_dirent_create(s, q->oid, q->name, &q->dirent, q->flags, &present, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, present, &d);
		break;
	case OFS_OP_DIRENT_REMOVE:
		rc = store_dirent_remove(s, q->oid, q->name, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, true, &d);
		break;
	case OFS_OP_DIRENT_LOOKUP:
		rc = store_dirent_lookup(s, q->oid, q->name, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, true, &d);
		break;
	case OFS_OP_DIRENT_LIST:
		proto_list_begin(&lc.lw, reply);
		rc = store_dirent_list(s, q->oid, q->name[0] ? q->name : NULL, q->max,
				       add_dirent, &lc, &more);
		if (!rc)
			proto_list_end(&lc.lw, more);
		break;
	default:
		rc = -OFS_EUNKNOWNOP;
		break;
	}
	if (!rc)
		rc = wbuf_error(reply);
	return rc;
}

int service_handle(struct store *s, uint16_t op, const uint8_t *body, size_t len,
		   struct wbuf *reply)
{
	struct ofs_req *q = malloc(sizeof(*q));
	size_t start = reply->len;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = proto_decode_req(op, body, len, q);
	if (rc) {
		log_debug("rejected %s request: %s", ofs_op_name(op), ofs_strerror(rc));
	} else {
		rc = handle(s, q, reply);
	}
	if (rc)
		reply->len = start;   /* an error reply has no body */
	free(q);
	return rc;
}
