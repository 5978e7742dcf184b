/*
 * proto.c - bodies of requests and replies, and the attribute codec shared
 * with the server's records (see proto.h). Every decoder here reads through
 * an rbuf, so no length is trusted before it is checked.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"

uint64_t ofs_name_hash(const char *name)
{
	uint64_t h = 1469598103934665603ull;    /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	return h;
}

bool ofs_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > OFS_NAME_MAX)
		return false;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	return memchr(name, '/', n) == NULL;
}

bool ofs_type_valid(uint8_t type)
{
	return type >= OFS_OBJ_METAFILE && type <= OFS_OBJ_DIRDATA;
}

const char *ofs_type_name(uint8_t type)
{
	switch (type) {
	case OFS_OBJ_METAFILE: return "metafile";
	case OFS_OBJ_DFILE: return "dfile";
	case OFS_OBJ_DIRECTORY: return "directory";
	case OFS_OBJ_DIRDATA: return "dirdata";
	default: return "none";
	}
}

const char *ofs_op_name(uint16_t op)
{
	static const char *names[] = {
		[OFS_OP_PING] = "ping", [OFS_OP_GET_ROOT] = "get_root",
		[OFS_OP_CREATE] = "create", [OFS_OP_REMOVE] = "remove",
		[OFS_OP_GETATTR] = "getattr", [OFS_OP_SETATTR] = "setattr",
		[OFS_OP_READ] = "read", [OFS_OP_WRITE] = "write",
		[OFS_OP_KV_GET] = "kv_get", [OFS_OP_KV_PUT] = "kv_put",
		[OFS_OP_KV_DEL] = "kv_del", [OFS_OP_KV_LIST] = "kv_list",
		[OFS_OP_DIRENT_CREATE] = "dirent_create",
		[OFS_OP_DIRENT_REMOVE] = "dirent_remove",
		[OFS_OP_DIRENT_LOOKUP] = "dirent_lookup",
		[OFS_OP_DIRENT_LIST] = "dirent_list",
		[OFS_OP_COMMIT] = "commit",
		[OFS_OP_SERVERS] = "servers", [OFS_OP_SERVER_SET] = "server_set",
		[OFS_OP_STATS] = "stats", [OFS_OP_REPORT] = "report",
		[OFS_OP_SET_ROOT] = "set_root", [OFS_OP_BEHIND] = "behind",
		[OFS_OP_STALE_FOR] = "stale_for", [OFS_OP_SUMMARY] = "summary",
		[OFS_OP_TASK_START] = "task_start", [OFS_OP_TASK_POLL] = "task_poll",
		[OFS_OP_TASK_CTL] = "task_ctl", [OFS_OP_POINTS] = "points",
		[OFS_OP_VERIFY] = "verify", [OFS_OP_SUMMARY_MANY] = "summary_many", [OFS_OP_REPAIR_FETCH] = "repair_fetch",
		[OFS_OP_STALE_CLEAR] = "stale_clear", [OFS_OP_FREEZE] = "freeze",
		[OFS_OP_ROOT_MOVE] = "root_move", [OFS_OP_STOP_CHECK] = "stop_check",
		[OFS_OP_CHANGES] = "changes",
	};
	op &= (uint16_t)~(OFS_OP_RESPONSE | OFS_OP_FORWARDED);
	if (op >= OFS_OP_PING && op < OFS_OP_MAX)
		return names[op];
	return "unknown";
}

/* Clamp the count as wbuf_handle does, so the count written always
 * matches the SIDs that follow it. */
static void encode_sids(struct wbuf *w, uint8_t n, const struct ofs_sid *s)
{
	if (n > OFS_MAX_REPLICAS)
		n = OFS_MAX_REPLICAS;
	wbuf_u8(w, n);
	for (uint8_t i = 0; i < n; i++)
		wbuf_sid(w, s[i]);
}

static uint8_t decode_sids(struct rbuf *r, struct ofs_sid *s)
{
	uint8_t n = rbuf_u8(r);

	if (n > OFS_MAX_REPLICAS) {
		rbuf_fail(r, -OFS_ECORRUPT);
		return 0;
	}
	for (uint8_t i = 0; i < n; i++)
		s[i] = rbuf_sid(r);
	return n;
}

void proto_encode_attr(struct wbuf *w, const struct ofs_attr *a)
{
	uint16_t np = a->nparts > OFS_MAX_STRIPES ? OFS_MAX_STRIPES : a->nparts;

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
	encode_sids(w, a->nsids, a->sids);
	encode_sids(w, a->nstale, a->stale);
	wbuf_str(w, a->dist);
	wbuf_u32(w, a->strip_size);
	wbuf_u8(w, a->replicas);
	wbuf_u8(w, a->confidence);
	wbuf_u16(w, np);
	for (uint16_t i = 0; i < np; i++)
		wbuf_handle(w, &a->parts[i]);
}

void proto_decode_attr(struct rbuf *r, struct ofs_attr *a)
{
	/* (parts past nparts are not written: 5 KB of zeros per decode) */
	memset(a, 0, offsetof(struct ofs_attr, parts));
	a->type = rbuf_u8(r);
	a->version = rbuf_u64(r);
	a->size = rbuf_u64(r);
	a->mode = rbuf_u32(r);
	a->uid = rbuf_u32(r);
	a->gid = rbuf_u32(r);
	a->ctime_ns = rbuf_i64(r);
	a->mtime_ns = rbuf_i64(r);
	a->chunk_size = rbuf_u32(r);
	a->backref.owner = rbuf_oid(r);
	a->backref.stripe = rbuf_u32(r);
	rbuf_str(r, a->backref.name, sizeof(a->backref.name));
	a->nsids = decode_sids(r, a->sids);
	a->nstale = decode_sids(r, a->stale);
	rbuf_str(r, a->dist, sizeof(a->dist));
	a->strip_size = rbuf_u32(r);
	a->replicas = rbuf_u8(r);
	a->confidence = rbuf_u8(r);
	a->nparts = rbuf_u16(r);
	if (a->nparts > OFS_MAX_STRIPES) {
		rbuf_fail(r, -OFS_ECORRUPT);
		a->nparts = 0;
	}
	for (uint16_t i = 0; i < a->nparts; i++)
		rbuf_handle(r, &a->parts[i]);
	if (rbuf_error(r))
		return;
	if (a->type != OFS_OBJ_NONE && !ofs_type_valid(a->type))
		rbuf_fail(r, -OFS_ECORRUPT);
	if (a->backref.name[0] && !ofs_name_valid(a->backref.name))
		rbuf_fail(r, -OFS_ENAME);
}

void proto_encode_dirent(struct wbuf *w, const struct ofs_dirent *d)
{
	wbuf_u8(w, d->type);
	wbuf_handle(w, &d->handle);
}

void proto_decode_dirent(struct rbuf *r, struct ofs_dirent *d)
{
	memset(d, 0, sizeof(*d));
	d->type = rbuf_u8(r);
	rbuf_handle(r, &d->handle);
	if (!rbuf_error(r) && d->type != OFS_OBJ_METAFILE && d->type != OFS_OBJ_DIRECTORY)
		rbuf_fail(r, -OFS_ECORRUPT);
}

/* The namespace's and the data's operations: 0, or 1 when op is not one
 * of them. */
static int encode_data_req(struct wbuf *w, const struct ofs_req *q)
{
	switch (q->op) {
	case OFS_OP_PING:
	case OFS_OP_GET_ROOT:
		break;
	case OFS_OP_CREATE:
		wbuf_oid(w, q->oid);
		proto_encode_attr(w, &q->attr);
		break;
	case OFS_OP_REMOVE:
	case OFS_OP_GETATTR:
	case OFS_OP_COMMIT:
		wbuf_oid(w, q->oid);
		break;
	case OFS_OP_SETATTR:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->mask);
		proto_encode_attr(w, &q->attr);
		break;
	case OFS_OP_READ:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->offset);
		wbuf_u32(w, q->length);
		break;
	case OFS_OP_WRITE:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->offset);
		wbuf_u32(w, q->flags);
		wbuf_blob(w, q->data, q->data_len);
		break;
	case OFS_OP_KV_GET:
	case OFS_OP_KV_DEL:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		break;
	case OFS_OP_KV_PUT:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		wbuf_blob(w, q->data, q->data_len);
		break;
	case OFS_OP_KV_LIST:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		wbuf_u32(w, q->max);
		break;
	case OFS_OP_DIRENT_CREATE:
		wbuf_oid(w, q->oid);
		wbuf_str(w, q->name);
		proto_encode_dirent(w, &q->dirent);
		wbuf_u32(w, q->flags);
		break;
	case OFS_OP_DIRENT_REMOVE:
	case OFS_OP_DIRENT_LOOKUP:
		wbuf_oid(w, q->oid);
		wbuf_str(w, q->name);
		break;
	case OFS_OP_DIRENT_LIST:
		wbuf_oid(w, q->oid);
		wbuf_str(w, q->name);
		wbuf_u32(w, q->max);
		break;
	default:
		return 1;
	}
	return 0;
}

/* The cluster's, repair's and the tasks' operations: 0, 1 when op is not
 * one of them, or -EINVAL. */
static int encode_peer_req(struct wbuf *w, const struct ofs_req *q)
{
	switch (q->op) {
	case OFS_OP_SERVERS:
		proto_encode_servers(w, NULL, q->servers, q->nservers);
		break;
	case OFS_OP_SERVER_SET:
		proto_encode_server_set(w, &q->set);
		break;
	case OFS_OP_STATS:
		break;
	case OFS_OP_REPORT:
	case OFS_OP_BEHIND:
	case OFS_OP_STALE_FOR:
		proto_encode_report(w, q->oid, q->sid, q->reason);
		break;
	case OFS_OP_SET_ROOT:
	case OFS_OP_ROOT_MOVE:
		proto_encode_root(w, &q->root, q->birth_ns);
		break;
	case OFS_OP_FREEZE:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->ms);
		wbuf_sid(w, q->sid);
		break;
	case OFS_OP_STOP_CHECK:
		wbuf_u32(w, q->max);
		break;
	case OFS_OP_SUMMARY:
	case OFS_OP_VERIFY:
		wbuf_oid(w, q->oid);
		break;
	case OFS_OP_REPAIR_FETCH:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->flags);
		wbuf_u64(w, q->rate);
		wbuf_u8(w, q->ncands);
		for (uint8_t i = 0; i < q->ncands && i < OFS_MAX_REPLICAS; i++)
			wbuf_sid(w, q->cands[i]);
		wbuf_str(w, q->reason);
		break;
	case OFS_OP_STALE_CLEAR:
		wbuf_oid(w, q->oid);
		wbuf_sid(w, q->sid);
		wbuf_u64(w, q->version);
		break;
	case OFS_OP_CHANGES:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->version);
		break;
	case OFS_OP_TASK_START:
		wbuf_u64(w, q->task.job);
		wbuf_u8(w, q->task.kind);
		wbuf_u32(w, q->task.flags);
		wbuf_u64(w, q->task.rate);
		wbuf_oid(w, q->task.cursor);
		wbuf_u64(w, q->task.objects_base);
		wbuf_u64(w, q->task.bytes_base);
		wbuf_u64(w, q->task.budget);
		wbuf_u32(w, q->task.noids);
		if (q->task.noids)
			wbuf_bytes(w, q->task.oids, (size_t)q->task.noids * OFS_OID_LEN);
		wbuf_u8(w, q->task.nalloc);
		for (uint8_t i = 0; i < q->task.nalloc && i < OFS_TASK_MAX_ALLOC; i++) {
			wbuf_sid(w, q->task.alloc_sid[i]);
			wbuf_u64(w, q->task.alloc_bytes[i]);
		}
		break;
	case OFS_OP_TASK_POLL:
		wbuf_u64(w, q->task.job);
		wbuf_u64(w, q->task.ack);
		wbuf_u64(w, q->task.budget);
		break;
	case OFS_OP_TASK_CTL:
		wbuf_u64(w, q->task.job);
		wbuf_u8(w, q->task.action);
		break;
	case OFS_OP_SUMMARY_MANY:
		if (q->data_len % OFS_OID_LEN || q->data_len / OFS_OID_LEN > OFS_SUMMARY_MANY_MAX)
			return -EINVAL;
		wbuf_u32(w, (uint32_t)(q->data_len / OFS_OID_LEN));
		wbuf_bytes(w, q->data, q->data_len);
		break;
	case OFS_OP_POINTS:
		wbuf_oid(w, q->oid);
		wbuf_oid(w, q->child);
		wbuf_u32(w, (uint32_t)q->offset);
		wbuf_str(w, q->name);
		break;
	default:
		return 1;
	}
	return 0;
}

int proto_encode_req(struct wbuf *w, const struct ofs_req *q)
{
	int rc = encode_data_req(w, q);

	if (rc == 1)
		rc = encode_peer_req(w, q);
	if (rc == 1)
		return -OFS_EUNKNOWNOP;
	return rc ? rc : wbuf_error(w);
}

/* A string that goes into logs and reports: no control characters. */
static bool printable(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			return false;
	return true;
}

static void decode_name(struct rbuf *r, char *name, bool allow_empty)
{
	uint16_t n;
	const uint8_t *p;

	if (rbuf_error(r))
		return;
	n = rbuf_u16(r);
	if (rbuf_error(r))
		return;
	if (n > OFS_NAME_MAX) {
		rbuf_fail(r, -OFS_ENAME);
		return;
	}
	p = rbuf_bytes(r, n);
	if (!p)
		return;
	if (memchr(p, '\0', n)) {
		rbuf_fail(r, -OFS_ENAME);
		return;
	}
	memcpy(name, p, n);
	name[n] = '\0';
	if (n == 0 && allow_empty)
		return;
	if (!ofs_name_valid(name))
		rbuf_fail(r, -OFS_ENAME);
}

static void decode_max(struct rbuf *r, uint32_t *max)
{
	*max = rbuf_u32(r);
	if (!rbuf_error(r) && (*max == 0 || *max > OFS_MAX_LIST))
		rbuf_fail(r, -OFS_ETOOBIG);
}

/* A TASK_START's kind and flags agree: a known kind; a dry run only of a
 * repairing scrub; repair only by a scrub; allocations only for a
 * rebalance. */
static bool task_start_valid(const struct ofs_task_req *t)
{
	if (t->kind != OFS_TASK_SCRUB && t->kind != OFS_TASK_DRAIN && t->kind != OFS_TASK_REBALANCE)
		return false;
	if (t->flags & ~(uint32_t)OFS_TASK_F_ALL)
		return false;
	if (t->kind == OFS_TASK_SCRUB && (t->flags & OFS_TASK_F_DRYRUN) &&
	    !(t->flags & OFS_TASK_F_REPAIR))
		return false;
	if (t->kind != OFS_TASK_SCRUB && (t->flags & OFS_TASK_F_REPAIR))
		return false;
	return t->kind == OFS_TASK_REBALANCE || t->nalloc == 0;
}

/* The namespace's and the data's operations, field by field from r: 0
 * (the caller checks r), or 1 when op is not one of them. */
static int decode_data_req(uint16_t op, struct rbuf *r, struct ofs_req *q)
{
	switch (op) {
	case OFS_OP_PING:
	case OFS_OP_GET_ROOT:
		break;
	case OFS_OP_CREATE:
		q->oid = rbuf_oid(r);
		proto_decode_attr(r, &q->attr);
		if (!rbuf_error(r) && !ofs_type_valid(q->attr.type))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_REMOVE:
	case OFS_OP_GETATTR:
	case OFS_OP_COMMIT:
		q->oid = rbuf_oid(r);
		break;
	case OFS_OP_SETATTR:
		q->oid = rbuf_oid(r);
		q->mask = rbuf_u32(r);
		proto_decode_attr(r, &q->attr);
		if (!rbuf_error(r) && (q->mask & ~(uint32_t)OFS_ATTR_ALL))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_READ:
		q->oid = rbuf_oid(r);
		q->offset = rbuf_u64(r);
		q->length = rbuf_u32(r);
		if (!rbuf_error(r) && q->length > OFS_MAX_IO)
			rbuf_fail(r, -OFS_ETOOBIG);
		break;
	case OFS_OP_WRITE:
		q->oid = rbuf_oid(r);
		q->offset = rbuf_u64(r);
		q->flags = rbuf_u32(r);
		q->data = rbuf_blob(r, OFS_MAX_IO, &q->data_len);
		if (!rbuf_error(r) && (q->flags & ~(uint32_t)OFS_WRITE_UNSTABLE))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_KV_GET:
	case OFS_OP_KV_DEL:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		if (!rbuf_error(r) && q->key_len == 0)
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_KV_PUT:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		q->data = rbuf_blob(r, OFS_MAX_VALUE, &q->data_len);
		if (!rbuf_error(r) && q->key_len == 0)
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_KV_LIST:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		decode_max(r, &q->max);
		break;
	case OFS_OP_DIRENT_CREATE:
		q->oid = rbuf_oid(r);
		decode_name(r, q->name, false);
		proto_decode_dirent(r, &q->dirent);
		q->flags = rbuf_u32(r);
		if (!rbuf_error(r) && (q->flags & ~(uint32_t)OFS_DIRENT_REPLACE))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case OFS_OP_DIRENT_REMOVE:
	case OFS_OP_DIRENT_LOOKUP:
		q->oid = rbuf_oid(r);
		decode_name(r, q->name, false);
		break;
	case OFS_OP_DIRENT_LIST:
		q->oid = rbuf_oid(r);
		decode_name(r, q->name, true);
		decode_max(r, &q->max);
		break;
	default:
		return 1;
	}
	return 0;
}

/* The cluster's, repair's and the tasks' operations decoded field by
 * field: 0 (the caller checks r), 1 when op is not one of them, or a
 * negative code. */
static int decode_peer_req(uint16_t op, struct rbuf *r, struct ofs_req *q)
{
	switch (op) {
	case OFS_OP_STATS:
		break;
	case OFS_OP_FREEZE:
		q->oid = rbuf_oid(r);
		q->ms = rbuf_u32(r);
		q->sid = rbuf_sid(r);
		if (!rbuf_error(r) && q->ms > 600000)
			return -OFS_ECORRUPT;    /* ten minutes at most */
		break;
	case OFS_OP_STOP_CHECK:
		q->max = rbuf_u32(r);
		if (!rbuf_error(r) && q->max > OFS_STOP_LIST_MAX)
			return -OFS_ECORRUPT;
		break;
	case OFS_OP_SUMMARY:
	case OFS_OP_VERIFY:
		q->oid = rbuf_oid(r);
		break;
	case OFS_OP_REPAIR_FETCH:
		q->oid = rbuf_oid(r);
		q->flags = rbuf_u32(r);
		q->rate = rbuf_u64(r);
		q->ncands = rbuf_u8(r);
		if (!rbuf_error(r) && (q->ncands > OFS_MAX_REPLICAS || (q->flags & ~(OFS_FETCH_DRYRUN | OFS_FETCH_LOCALBAD))))
			return -OFS_ECORRUPT;
		for (uint8_t i = 0; i < q->ncands && !rbuf_error(r); i++)
			q->cands[i] = rbuf_sid(r);
		rbuf_str(r, q->reason, sizeof(q->reason));
		if (!rbuf_error(r) && !printable(q->reason))
			return -OFS_ECORRUPT;
		break;
	case OFS_OP_STALE_CLEAR:
		q->oid = rbuf_oid(r);
		q->sid = rbuf_sid(r);
		q->version = rbuf_u64(r);
		break;
	case OFS_OP_CHANGES:
		q->oid = rbuf_oid(r);
		q->version = rbuf_u64(r);
		break;
	case OFS_OP_TASK_START:
		q->task.job = rbuf_u64(r);
		q->task.kind = rbuf_u8(r);
		q->task.flags = rbuf_u32(r);
		q->task.rate = rbuf_u64(r);
		q->task.cursor = rbuf_oid(r);
		q->task.objects_base = rbuf_u64(r);
		q->task.bytes_base = rbuf_u64(r);
		q->task.budget = rbuf_u64(r);
		q->task.noids = rbuf_u32(r);
		if (!rbuf_error(r) && q->task.noids > OFS_MAX_TASK_OIDS)
			return -OFS_ETOOBIG;
		q->task.oids = q->task.noids ? rbuf_bytes(r, (size_t)q->task.noids * OFS_OID_LEN) : NULL;
		q->task.nalloc = rbuf_u8(r);
		if (!rbuf_error(r) && q->task.nalloc > OFS_TASK_MAX_ALLOC)
			return -OFS_ECORRUPT;
		for (uint8_t i = 0; i < q->task.nalloc && !rbuf_error(r); i++) {
			q->task.alloc_sid[i] = rbuf_sid(r);
			q->task.alloc_bytes[i] = rbuf_u64(r);
		}
		if (!rbuf_error(r) && !task_start_valid(&q->task))
			return -OFS_ECORRUPT;
		break;
	case OFS_OP_TASK_POLL:
		q->task.job = rbuf_u64(r);
		q->task.ack = rbuf_u64(r);
		q->task.budget = rbuf_u64(r);
		break;
	case OFS_OP_SUMMARY_MANY: {
		uint32_t n = rbuf_u32(r);
		if (rbuf_error(r) || n == 0 || n > OFS_SUMMARY_MANY_MAX)
			return -OFS_ECORRUPT;
		q->data = rbuf_bytes(r, (size_t)n * OFS_OID_LEN);
		q->data_len = (size_t)n * OFS_OID_LEN;
		break;
	}
	case OFS_OP_POINTS:
		q->oid = rbuf_oid(r);
		q->child = rbuf_oid(r);
		q->offset = rbuf_u32(r);
		decode_name(r, q->name, true);
		break;
	case OFS_OP_TASK_CTL:
		q->task.job = rbuf_u64(r);
		q->task.action = rbuf_u8(r);
		if (!rbuf_error(r) && (q->task.action < OFS_TASK_PAUSE || q->task.action > OFS_TASK_FORGET))
			return -OFS_ECORRUPT;
		break;
	default:
		return 1;
	}
	return 0;
}

int proto_decode_req(uint16_t op, const uint8_t *body, size_t len, struct ofs_req *q)
{
	struct rbuf r;
	int rc;

	memset(q, 0, sizeof(*q));
	q->op = op;
	/* the operations whose body has a decoder of its own */
	switch (op) {
	case OFS_OP_SERVERS: {
		struct ofs_server *e = NULL;
		int src = proto_decode_servers(body, len, false, NULL, &e, &q->nservers);
		free(e);
		if (src)
			return src;
		q->data = body;
		q->data_len = len;
		return 0;
	}
	case OFS_OP_SERVER_SET:
		return proto_decode_server_set(body, len, &q->set);
	case OFS_OP_REPORT:
	case OFS_OP_BEHIND:
	case OFS_OP_STALE_FOR:
		return proto_decode_report(body, len, &q->oid, &q->sid, q->reason);
	case OFS_OP_SET_ROOT:
	case OFS_OP_ROOT_MOVE:
		return proto_decode_root(body, len, &q->root, &q->birth_ns);
	default:
		break;
	}
	rbuf_init(&r, body, len);
	rc = decode_data_req(op, &r, q);
	if (rc == 1)
		rc = decode_peer_req(op, &r, q);
	if (rc == 1)
		return -OFS_EUNKNOWNOP;
	return rc ? rc : rbuf_done(&r);
}

void proto_encode_ping(struct wbuf *w, const struct ofs_ping_reply *p)
{
	wbuf_sid(w, p->sid);
	wbuf_str(w, p->version);
}

int proto_decode_ping(const uint8_t *b, size_t n, struct ofs_ping_reply *p)
{
	struct rbuf r;
	struct ofs_ping_reply t;

	rbuf_init(&r, b, n);
	t.sid = rbuf_sid(&r);
	rbuf_str(&r, t.version, sizeof(t.version));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*p = t;
	return 0;
}

void proto_encode_handle_reply(struct wbuf *w, const struct ofs_handle *h)
{
	wbuf_handle(w, h);
}

int proto_decode_handle_reply(const uint8_t *b, size_t n, struct ofs_handle *h)
{
	struct rbuf r;
	struct ofs_handle t;

	rbuf_init(&r, b, n);
	rbuf_handle(&r, &t);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*h = t;
	return 0;
}

void proto_encode_oid_reply(struct wbuf *w, struct ofs_oid oid)
{
	wbuf_oid(w, oid);
}

int proto_decode_oid_reply(const uint8_t *b, size_t n, struct ofs_oid *oid)
{
	struct rbuf r;
	struct ofs_oid t;

	rbuf_init(&r, b, n);
	t = rbuf_oid(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*oid = t;
	return 0;
}

int proto_decode_attr_reply(const uint8_t *b, size_t n, struct ofs_attr *a)
{
	struct rbuf r;

	rbuf_init(&r, b, n);
	proto_decode_attr(&r, a);
	return rbuf_done(&r);
}

void proto_encode_write_reply(struct wbuf *w, const struct ofs_write_reply *p)
{
	wbuf_u64(w, p->version);
	wbuf_u64(w, p->size);
}

int proto_decode_write_reply(const uint8_t *b, size_t n, struct ofs_write_reply *p)
{
	struct rbuf r;
	struct ofs_write_reply t;

	rbuf_init(&r, b, n);
	t.version = rbuf_u64(&r);
	t.size = rbuf_u64(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*p = t;
	return 0;
}

void proto_encode_dirent_reply(struct wbuf *w, bool present, const struct ofs_dirent *d)
{
	wbuf_u8(w, present ? 1 : 0);
	if (present)
		proto_encode_dirent(w, d);
}

int proto_decode_dirent_reply(const uint8_t *b, size_t n, bool *present, struct ofs_dirent *d)
{
	struct rbuf r;
	struct ofs_dirent t;
	uint8_t p;

	memset(&t, 0, sizeof(t));
	rbuf_init(&r, b, n);
	p = rbuf_u8(&r);
	if (p > 1)
		rbuf_fail(&r, -OFS_ECORRUPT);
	if (p == 1)
		proto_decode_dirent(&r, &t);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*present = p == 1;
	*d = t;
	return 0;
}

void proto_list_begin(struct ofs_list_writer *lw, struct wbuf *w)
{
	lw->w = w;
	lw->count_off = w->len;
	lw->count = 0;
	wbuf_u32(w, 0);
}

void proto_list_add_kv(struct ofs_list_writer *lw, const void *k, size_t kn,
		       const void *v, size_t vn)
{
	wbuf_blob(lw->w, k, kn);
	wbuf_blob(lw->w, v, vn);
	lw->count++;
}

void proto_list_add_dirent(struct ofs_list_writer *lw, const char *name,
			   const struct ofs_dirent *d)
{
	wbuf_str(lw->w, name);
	proto_encode_dirent(lw->w, d);
	lw->count++;
}

void proto_list_end(struct ofs_list_writer *lw, bool more)
{
	wbuf_patch_u32(lw->w, lw->count_off, lw->count);
	wbuf_u8(lw->w, more ? 1 : 0);
}

/* Walk a list body once to prove every entry decodes, then rewind. */
static int list_open(struct ofs_list_reader *lr, const uint8_t *b, size_t n, bool kv)
{
	struct rbuf r;
	uint32_t count;
	uint8_t more;

	rbuf_init(&r, b, n);
	count = rbuf_u32(&r);
	if (!rbuf_error(&r) && count > OFS_MAX_LIST)
		return -OFS_ECORRUPT;
	for (uint32_t i = 0; i < count && !rbuf_error(&r); i++) {
		size_t l;
		if (kv) {
			rbuf_blob(&r, OFS_MAX_KEY, &l);
			rbuf_blob(&r, OFS_MAX_VALUE, &l);
		} else {
			char name[OFS_NAME_MAX + 1];
			struct ofs_dirent d;
			decode_name(&r, name, false);
			proto_decode_dirent(&r, &d);
		}
	}
	more = rbuf_u8(&r);
	if (more > 1)
		rbuf_fail(&r, -OFS_ECORRUPT);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	rbuf_init(&lr->r, b, n);
	lr->left = rbuf_u32(&lr->r);
	lr->more = more == 1;
	return 0;
}

int proto_list_open_kv(struct ofs_list_reader *lr, const uint8_t *b, size_t n)
{
	return list_open(lr, b, n, true);
}

int proto_list_open_dirent(struct ofs_list_reader *lr, const uint8_t *b, size_t n)
{
	return list_open(lr, b, n, false);
}

int proto_list_next_kv(struct ofs_list_reader *lr, const uint8_t **k, size_t *kn,
		       const uint8_t **v, size_t *vn)
{
	if (lr->left == 0)
		return 0;
	lr->left--;
	*k = rbuf_blob(&lr->r, OFS_MAX_KEY, kn);
	*v = rbuf_blob(&lr->r, OFS_MAX_VALUE, vn);
	return rbuf_error(&lr->r) ? 0 : 1;
}

int proto_list_next_dirent(struct ofs_list_reader *lr, char name[OFS_NAME_MAX + 1],
			   struct ofs_dirent *d)
{
	if (lr->left == 0)
		return 0;
	lr->left--;
	decode_name(&lr->r, name, false);
	proto_decode_dirent(&lr->r, d);
	return rbuf_error(&lr->r) ? 0 : 1;
}

/* ---- the server table --------------------------------------------------- */

const char *ofs_server_state_name(uint8_t state)
{
	switch (state) {
	case OFS_SERVER_IN: return "in";
	case OFS_SERVER_DRAINING: return "draining";
	case OFS_SERVER_OUT: return "out";
	default: return "unknown";
	}
}

int ofs_server_state_parse(const char *s, uint8_t *state)
{
	for (uint8_t i = OFS_SERVER_IN; i <= OFS_SERVER_OUT; i++) {
		if (strcmp(s, ofs_server_state_name(i)) == 0) {
			*state = i;
			return 0;
		}
	}
	return -EINVAL;
}

void ofs_server_attr(const struct ofs_server *e, const char *key, char *out, size_t len)
{
	size_t kn = strlen(key);

	if (len)
		out[0] = '\0';
	for (uint8_t i = 0; i < e->nattrs && i < OFS_SERVER_ATTRS; i++) {
		if (strncmp(e->attrs[i], key, kn) == 0 && e->attrs[i][kn] == '=') {
			snprintf(out, len, "%s", e->attrs[i] + kn + 1);
			return;
		}
	}
}

/* "key=value": a non-empty key, printable ASCII, no spaces. */
static bool attr_ok(const char *a, bool allow_empty_value)
{
	const char *eq = strchr(a, '=');

	if (!eq || eq == a || (!allow_empty_value && !eq[1]))
		return false;
	for (const char *c = a; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	return true;
}

void proto_encode_server(struct wbuf *w, const struct ofs_server *e)
{
	uint8_t n = e->nattrs > OFS_SERVER_ATTRS ? OFS_SERVER_ATTRS : e->nattrs;

	wbuf_sid(w, e->sid);
	wbuf_str(w, e->address);
	wbuf_u8(w, e->state);
	wbuf_u32(w, e->weight_milli);
	wbuf_u8(w, n);
	for (uint8_t i = 0; i < n; i++)
		wbuf_str(w, e->attrs[i]);
	wbuf_u64(w, e->version);
	wbuf_i64(w, e->last_seen_ns);
	wbuf_handle(w, &e->root);
	wbuf_i64(w, e->root_birth_ns);
	wbuf_u64(w, e->self_version);
	wbuf_u64(w, e->root_version);
}

void proto_decode_server(struct rbuf *r, struct ofs_server *e)
{
	memset(e, 0, sizeof(*e));
	e->sid = rbuf_sid(r);
	rbuf_str(r, e->address, sizeof(e->address));
	e->state = rbuf_u8(r);
	e->weight_milli = rbuf_u32(r);
	e->nattrs = rbuf_u8(r);
	if (!rbuf_error(r) && e->nattrs > OFS_SERVER_ATTRS)
		rbuf_fail(r, -OFS_ECORRUPT);
	for (uint8_t i = 0; i < e->nattrs && !rbuf_error(r); i++) {
		rbuf_str(r, e->attrs[i], sizeof(e->attrs[i]));
		if (!rbuf_error(r) && !attr_ok(e->attrs[i], false))
			rbuf_fail(r, -OFS_ECORRUPT);
	}
	e->version = rbuf_u64(r);
	e->last_seen_ns = rbuf_i64(r);
	rbuf_handle(r, &e->root);
	e->root_birth_ns = rbuf_i64(r);
	e->self_version = rbuf_u64(r);
	e->root_version = rbuf_u64(r);
	if (!rbuf_error(r) && (e->state > OFS_SERVER_OUT || sid_is_zero(e->sid)))
		rbuf_fail(r, -OFS_ECORRUPT);
}

void proto_encode_servers(struct wbuf *w, const struct ofs_sid *responder,
			  const struct ofs_server *e, size_t n)
{
	if (n > OFS_MAX_SERVERS)
		n = OFS_MAX_SERVERS;
	if (responder)
		wbuf_sid(w, *responder);
	wbuf_u32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		proto_encode_server(w, &e[i]);
}

int proto_decode_servers(const uint8_t *b, size_t n, bool reply, struct ofs_sid *responder,
			 struct ofs_server **entries, size_t *count)
{
	struct rbuf r;
	struct ofs_server *e = NULL;
	struct ofs_sid who;
	uint32_t cnt;
	int rc;

	rbuf_init(&r, b, n);
	if (reply)
		who = rbuf_sid(&r);
	cnt = rbuf_u32(&r);
	if (rbuf_error(&r))
		return -OFS_ECORRUPT;
	if (cnt > OFS_MAX_SERVERS)
		return -OFS_ETOOBIG;
	/* Each entry is at least 16 + 2 + 1 + 4 + 1 + 8 + 8 + 17 + 8 + 8 + 8
	 * bytes. */
	if ((size_t)cnt * 81 > rbuf_left(&r))
		return -OFS_ECORRUPT;
	if (cnt) {
		e = calloc(cnt, sizeof(*e));
		if (!e)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < cnt; i++)
		proto_decode_server(&r, &e[i]);
	rc = rbuf_done(&r);
	if (rc) {
		free(e);
		return rc;
	}
	if (reply && responder)
		*responder = who;
	*entries = e;
	*count = cnt;
	return 0;
}

void proto_encode_server_set(struct wbuf *w, const struct ofs_server_set *s)
{
	wbuf_sid(w, s->sid);
	wbuf_u32(w, s->mask);
	wbuf_u8(w, s->state);
	wbuf_u32(w, s->weight_milli);
	wbuf_str(w, s->attr);
}

int proto_decode_server_set(const uint8_t *b, size_t n, struct ofs_server_set *s)
{
	struct rbuf r;
	struct ofs_server_set t;

	memset(&t, 0, sizeof(t));
	rbuf_init(&r, b, n);
	t.sid = rbuf_sid(&r);
	t.mask = rbuf_u32(&r);
	t.state = rbuf_u8(&r);
	t.weight_milli = rbuf_u32(&r);
	rbuf_str(&r, t.attr, sizeof(t.attr));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	if (t.mask == 0 || (t.mask & ~(uint32_t)(OFS_SET_STATE | OFS_SET_WEIGHT | OFS_SET_ATTR)) ||
	    t.state > OFS_SERVER_OUT || ((t.mask & OFS_SET_ATTR) && !attr_ok(t.attr, true)))
		return -OFS_ECORRUPT;
	*s = t;
	return 0;
}

void proto_encode_stats(struct wbuf *w, const struct ofs_stats *s)
{
	wbuf_u64(w, s->objects);
	wbuf_u64(w, s->bytes);
	wbuf_u64(w, s->avail);
	wbuf_u64(w, s->capacity);
	wbuf_u8(w, s->max_copies);
	wbuf_u64(w, s->behind);
	wbuf_u64(w, s->stuck);
	wbuf_u64(w, s->caught_up);
	wbuf_u8(w, s->recovering);
}

int proto_decode_stats(const uint8_t *b, size_t n, struct ofs_stats *s)
{
	struct rbuf r;
	struct ofs_stats t;

	rbuf_init(&r, b, n);
	t.objects = rbuf_u64(&r);
	t.bytes = rbuf_u64(&r);
	t.avail = rbuf_u64(&r);
	t.capacity = rbuf_u64(&r);
	t.max_copies = rbuf_u8(&r);
	t.behind = rbuf_u64(&r);
	t.stuck = rbuf_u64(&r);
	t.caught_up = rbuf_u64(&r);
	t.recovering = rbuf_u8(&r);
	if (!rbuf_error(&r) && (t.max_copies > OFS_MAX_REPLICAS || t.recovering > 1 ||
				t.stuck > t.behind))
		return -OFS_ECORRUPT;
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*s = t;
	return 0;
}

void proto_encode_report(struct wbuf *w, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	char r[256];

	snprintf(r, sizeof(r), "%s", reason);
	wbuf_oid(w, oid);
	wbuf_sid(w, sid);
	wbuf_str(w, r);
}

int proto_decode_report(const uint8_t *b, size_t n, struct ofs_oid *oid, struct ofs_sid *sid,
			char reason[256])
{
	struct rbuf r;
	struct ofs_oid o;
	struct ofs_sid s;
	char t[256];

	rbuf_init(&r, b, n);
	o = rbuf_oid(&r);
	s = rbuf_sid(&r);
	rbuf_str(&r, t, sizeof(t));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	for (const char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return -OFS_ECORRUPT;   /* it goes into a log line */
	*oid = o;
	*sid = s;
	memcpy(reason, t, sizeof(t));
	return 0;
}

void proto_encode_root(struct wbuf *w, const struct ofs_handle *h, int64_t birth_ns)
{
	wbuf_handle(w, h);
	wbuf_i64(w, birth_ns);
}

int proto_decode_root(const uint8_t *b, size_t n, struct ofs_handle *h, int64_t *birth_ns)
{
	struct rbuf r;
	struct ofs_handle t;
	int64_t birth;

	rbuf_init(&r, b, n);
	rbuf_handle(&r, &t);
	birth = rbuf_i64(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	if (oid_is_zero(t.oid) || t.nsids == 0)
		return -OFS_ECORRUPT;
	*h = t;
	*birth_ns = birth;
	return 0;
}

void proto_encode_stale_list(struct wbuf *w, const struct ofs_oid *oids,
			     char (*reasons)[256], uint32_t n, bool more)
{
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		wbuf_oid(w, oids[i]);
		wbuf_str(w, reasons[i]);
	}
	wbuf_u8(w, more ? 1 : 0);
}

int proto_decode_stale_list(const uint8_t *b, size_t len,
			    int (*fn)(struct ofs_oid oid, const char *reason, void *arg),
			    void *arg, bool *more)
{
	struct rbuf r;
	char reason[256];
	uint32_t n;
	uint8_t m;
	int rc;

	/* Pass 1: check everything; pass 2: deliver. */
	for (int pass = 0; pass < 2; pass++) {
		rbuf_init(&r, b, len);
		n = rbuf_u32(&r);
		if (!rbuf_error(&r) && n > OFS_MAX_STALE_LIST)
			return -OFS_ETOOBIG;
		for (uint32_t i = 0; i < n && !rbuf_error(&r); i++) {
			struct ofs_oid oid = rbuf_oid(&r);
			rbuf_str(&r, reason, sizeof(reason));
			for (const char *c = reason; !rbuf_error(&r) && *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					return -OFS_ECORRUPT;   /* it goes into logs */
			if (pass == 1 && !rbuf_error(&r) && (rc = fn(oid, reason, arg)) != 0)
				return rc;
		}
		m = rbuf_u8(&r);
		if (rbuf_done(&r))
			return rbuf_done(&r);
		if (m > 1)
			return -OFS_ECORRUPT;
	}
	*more = m == 1;
	return 0;
}

static const char *const finding_names[OFS_FINDING_MAX] = {
	[OFS_FINDING_CHECKSUM_MISMATCH] = "checksum_mismatch",
	[OFS_FINDING_SIZE_MISMATCH] = "size_mismatch",
	[OFS_FINDING_UNREADABLE] = "unreadable",
	[OFS_FINDING_MISSING_REPLICA] = "missing_replica",
	[OFS_FINDING_STALE_REPLICA] = "stale_replica",
	[OFS_FINDING_KEYVAL_MISMATCH] = "keyval_mismatch",
	[OFS_FINDING_REPLICA_CONFLICT] = "replica_conflict",
	[OFS_FINDING_ORPHAN] = "orphan",
	[OFS_FINDING_DANGLING_POINTER] = "dangling_pointer",
	[OFS_FINDING_BACKREF_MISMATCH] = "backref_mismatch",
	[OFS_FINDING_MULTIPLE_OWNERS] = "multiple_owners",
	[OFS_FINDING_RECORD_CORRUPT] = "record_corrupt",
	[OFS_FINDING_MOVE] = "move",
};

const char *ofs_finding_name(int kind)
{
	return kind > OFS_FINDING_NONE && kind < OFS_FINDING_MAX ? finding_names[kind] : NULL;
}

int ofs_finding_parse(const char *name)
{
	for (int k = OFS_FINDING_NONE + 1; k < OFS_FINDING_MAX; k++)
		if (!strcmp(name, finding_names[k]))
			return k;
	return OFS_FINDING_NONE;
}

void proto_encode_task_status(struct wbuf *w, const struct ofs_task_status *st,
			      const struct ofs_task_finding *f, uint32_t n)
{
	wbuf_u8(w, st->state);
	wbuf_u64(w, st->objects_done);
	wbuf_u64(w, st->objects_total);
	wbuf_u64(w, st->bytes_done);
	wbuf_u64(w, st->bytes_total);
	wbuf_oid(w, st->cursor);
	wbuf_str(w, st->reason);
	wbuf_u64(w, st->repairs);
	wbuf_u8(w, st->starved ? 1 : 0);
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		wbuf_u64(w, f[i].seq);
		wbuf_sid(w, f[i].server);
		wbuf_oid(w, f[i].oid);
		wbuf_str(w, ofs_finding_name(f[i].kind) ? ofs_finding_name(f[i].kind) : "");
		wbuf_str(w, f[i].detail);
		wbuf_u8(w, f[i].repair);
		wbuf_sid(w, f[i].source);
		wbuf_oid(w, f[i].ref);
		wbuf_str(w, f[i].action);
	}
}

int proto_decode_task_status(const uint8_t *b, size_t len, struct ofs_task_status *st,
			     int (*fn)(const struct ofs_task_finding *f, void *arg), void *arg)
{
	struct ofs_task_finding *f = malloc(sizeof(*f));
	struct ofs_task_status t;
	struct rbuf r;
	char kind[32];
	int rc = 0;

	if (!f)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		uint32_t n;
		rbuf_init(&r, b, len);
		t.state = rbuf_u8(&r);
		t.objects_done = rbuf_u64(&r);
		t.objects_total = rbuf_u64(&r);
		t.bytes_done = rbuf_u64(&r);
		t.bytes_total = rbuf_u64(&r);
		t.cursor = rbuf_oid(&r);
		rbuf_str(&r, t.reason, sizeof(t.reason));
		t.repairs = rbuf_u64(&r);
		uint8_t starved = rbuf_u8(&r);
		t.starved = starved != 0;
		n = rbuf_u32(&r);
		if (!rbuf_error(&r) && (t.state < OFS_TASK_RUNNING || t.state > OFS_TASK_CANCELLED ||
					!printable(t.reason) || starved > 1)) {
			rc = -OFS_ECORRUPT;
			break;
		}
		if (!rbuf_error(&r) && n > OFS_MAX_TASK_FINDINGS) {
			rc = -OFS_ETOOBIG;
			break;
		}
		for (uint32_t i = 0; i < n && !rbuf_error(&r) && !rc; i++) {
			f->seq = rbuf_u64(&r);
			f->server = rbuf_sid(&r);
			f->oid = rbuf_oid(&r);
			rbuf_str(&r, kind, sizeof(kind));
			f->kind = (uint8_t)ofs_finding_parse(kind);
			rbuf_str(&r, f->detail, sizeof(f->detail));
			f->repair = rbuf_u8(&r);
			f->source = rbuf_sid(&r);
			f->ref = rbuf_oid(&r);
			rbuf_str(&r, f->action, sizeof(f->action));
			if (rbuf_error(&r))
				break;
			if (f->kind == OFS_FINDING_NONE || !printable(f->detail) ||
			    !printable(f->action) || f->repair > OFS_REPAIR_MAX)
				rc = -OFS_ECORRUPT;
			else if (pass == 1 && fn)
				rc = fn(f, arg);
		}
		if (!rc)
			rc = rbuf_done(&r);
	}
	free(f);
	if (!rc)
		*st = t;
	return rc;
}

void proto_encode_summary(struct wbuf *w, const struct ofs_summary *s)
{
	wbuf_u8(w, (uint8_t)((s->present ? 1 : 0) | (s->behind ? 2 : 0) | (s->corrupt ? 4 : 0) |
			     (s->checked ? 8 : 0) | (s->bad ? 16 : 0)));
	wbuf_u64(w, s->version);
	wbuf_u64(w, s->size);
	wbuf_bytes(w, s->digest.b, sizeof(s->digest.b));
	wbuf_u8(w, s->type);
	wbuf_oid(w, s->backref.owner);
	wbuf_u32(w, s->backref.stripe);
	wbuf_str(w, s->backref.name);
}

static int decode_summary(struct rbuf *r, struct ofs_summary *s)
{
	struct ofs_summary t;
	const uint8_t *d;
	uint8_t fl;

	fl = rbuf_u8(r);
	t.version = rbuf_u64(r);
	t.size = rbuf_u64(r);
	d = rbuf_bytes(r, sizeof(t.digest.b));
	memset(&t.backref, 0, sizeof(t.backref));
	t.type = rbuf_u8(r);
	t.backref.owner = rbuf_oid(r);
	t.backref.stripe = rbuf_u32(r);
	decode_name(r, t.backref.name, true);
	if (rbuf_error(r))
		return rbuf_error(r);
	if (t.type != 0 && !ofs_type_valid(t.type))
		return -OFS_ECORRUPT;
	if (fl > 31 || ((fl & 16) && !(fl & 8)))
		return -OFS_ECORRUPT;
	t.checked = (fl & 8) != 0;
	t.bad = (fl & 16) != 0;
	t.present = fl & 1;
	t.behind = (fl & 2) != 0;
	t.corrupt = (fl & 4) != 0;
	memcpy(t.digest.b, d, sizeof(t.digest.b));
	*s = t;
	return 0;
}

int proto_decode_summary(const uint8_t *b, size_t len, struct ofs_summary *s)
{
	struct rbuf r;
	struct ofs_summary t;
	int rc;

	rbuf_init(&r, b, len);
	rc = decode_summary(&r, &t);
	if (!rc)
		rc = rbuf_done(&r);
	if (!rc)
		*s = t;
	return rc;
}

void proto_encode_changes(struct wbuf *w, uint64_t version, struct ofs_digest digest,
			  const uint8_t *notes, size_t n)
{
	wbuf_u64(w, version);
	wbuf_bytes(w, digest.b, sizeof(digest.b));
	wbuf_blob(w, notes, n);
}

int proto_decode_changes(const uint8_t *b, size_t len, uint64_t *version,
			 struct ofs_digest *digest, const uint8_t **notes, size_t *n)
{
	struct rbuf r;
	const uint8_t *d;
	uint64_t v;
	int rc;

	rbuf_init(&r, b, len);
	v = rbuf_u64(&r);
	d = rbuf_bytes(&r, sizeof(digest->b));
	*notes = rbuf_blob(&r, OFS_MAX_IO, n);
	rc = rbuf_done(&r);
	if (rc)
		return rc;
	*version = v;
	memcpy(digest->b, d, sizeof(digest->b));
	return 0;
}

void proto_encode_summaries(struct wbuf *w, const struct ofs_summary *s, uint32_t n)
{
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		proto_encode_summary(w, &s[i]);
}

int proto_decode_summaries(const uint8_t *b, size_t len, struct ofs_summary *s, uint32_t n)
{
	struct rbuf r;
	int rc = 0;

	rbuf_init(&r, b, len);
	if (rbuf_u32(&r) != n)
		return rbuf_error(&r) ? rbuf_error(&r) : -OFS_ECORRUPT;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = decode_summary(&r, &s[i]);
	return rc ? rc : rbuf_done(&r);
}

void proto_encode_fetch_reply(struct wbuf *w, const struct ofs_fetch_reply *f)
{
	wbuf_u8(w, f->outcome);
	wbuf_sid(w, f->source);
	wbuf_u64(w, f->version);
	wbuf_u64(w, f->bytes);
	wbuf_str(w, f->detail);
}

int proto_decode_fetch_reply(const uint8_t *b, size_t len, struct ofs_fetch_reply *f)
{
	struct ofs_fetch_reply t;
	struct rbuf r;
	int rc;

	rbuf_init(&r, b, len);
	t.outcome = rbuf_u8(&r);
	t.source = rbuf_sid(&r);
	t.version = rbuf_u64(&r);
	t.bytes = rbuf_u64(&r);
	rbuf_str(&r, t.detail, sizeof(t.detail));
	rc = rbuf_done(&r);
	if (rc)
		return rc;
	if (t.outcome < OFS_FETCH_DONE || t.outcome > OFS_FETCH_MAX || !printable(t.detail))
		return -OFS_ECORRUPT;
	*f = t;
	return 0;
}

void proto_encode_stop_reply(struct wbuf *w, const struct ofs_stop_reply *s)
{
	uint32_t n = s->n > OFS_STOP_LIST_MAX ? OFS_STOP_LIST_MAX : s->n;

	wbuf_u64(w, s->objects);
	wbuf_u64(w, s->nshort);
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		wbuf_oid(w, s->list[i].oid);
		wbuf_u8(w, s->list[i].good);
		wbuf_u8(w, s->list[i].need);
	}
}

int proto_decode_stop_reply(const uint8_t *b, size_t len, struct ofs_stop_reply *s)
{
	struct rbuf r;
	int rc;

	memset(s, 0, sizeof(*s));
	rbuf_init(&r, b, len);
	s->objects = rbuf_u64(&r);
	s->nshort = rbuf_u64(&r);
	s->n = rbuf_u32(&r);
	if (!rbuf_error(&r) && (s->n > OFS_STOP_LIST_MAX || s->n > s->nshort || s->nshort > s->objects))
		return -OFS_ECORRUPT;
	for (uint32_t i = 0; i < s->n && !rbuf_error(&r); i++) {
		s->list[i].oid = rbuf_oid(&r);
		s->list[i].good = rbuf_u8(&r);
		s->list[i].need = rbuf_u8(&r);
	}
	rc = rbuf_done(&r);
	if (rc)
		memset(s, 0, sizeof(*s));
	return rc;
}
