/*
 * proto.c - names, the attribute codec shared with the server's records,
 * and the bodies of requests (see proto.h; replies: proto_reply.c). Every
 * decoder here reads through an rbuf, so no length is trusted before it is
 * checked.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "lib/proto_impl.h"

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
	const struct op_def *d = op_def(op);

	return d ? d->name : "unknown";
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
static int encode_data_req(struct wbuf *w, const struct ofs_req *q, const struct op_def *d)
{
	switch (d->form) {
	case RQ_NONE:
		break;
	case RQ_CREATE:
		wbuf_oid(w, q->oid);
		proto_encode_attr(w, &q->attr);
		break;
	case RQ_CREATE_SMALL:
		wbuf_oid(w, q->oid);
		proto_encode_attr(w, &q->attr);
		wbuf_blob(w, q->data, q->data_len);
		break;
	case RQ_OID:
		wbuf_oid(w, q->oid);
		break;
	case RQ_SETATTR:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->mask);
		proto_encode_attr(w, &q->attr);
		break;
	case RQ_READ:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->offset);
		wbuf_u32(w, q->length);
		break;
	case RQ_WRITE:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->offset);
		wbuf_u32(w, q->flags);
		wbuf_blob(w, q->data, q->data_len);
		break;
	case RQ_KEY:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		break;
	case RQ_KEY_VALUE:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		wbuf_blob(w, q->data, q->data_len);
		break;
	case RQ_KEY_MAX:
		wbuf_oid(w, q->oid);
		wbuf_blob(w, q->key, q->key_len);
		wbuf_u32(w, q->max);
		break;
	case RQ_DIRENT:
		wbuf_oid(w, q->oid);
		wbuf_str(w, q->name);
		proto_encode_dirent(w, &q->dirent);
		wbuf_u32(w, q->flags);
		break;
	case RQ_NAME:
		wbuf_oid(w, q->oid);
		wbuf_str(w, q->name);
		break;
	case RQ_NAME_MAX:
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
static int encode_peer_req(struct wbuf *w, const struct ofs_req *q, const struct op_def *d)
{
	switch (d->form) {
	case RQ_SERVERS:
		proto_encode_servers(w, NULL, q->servers, q->nservers);
		break;
	case RQ_CRL:
	case RQ_CAPKEYS:
		wbuf_bytes(w, q->data, q->data_len);   /* (crl.h's, cap.h's forms) */
		break;
	case RQ_SERVER_SET:
		proto_encode_server_set(w, &q->set);
		break;
	case RQ_REPORT:
		proto_encode_report(w, q->oid, q->sid, q->reason);
		break;
	case RQ_ROOT:
		proto_encode_root(w, &q->root, q->birth_ns);
		break;
	case RQ_FREEZE:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->ms);
		wbuf_sid(w, q->sid);
		break;
	case RQ_STOP_CHECK:
		wbuf_u32(w, q->max);
		break;
	case RQ_REPAIR_FETCH:
		wbuf_oid(w, q->oid);
		wbuf_u32(w, q->flags);
		wbuf_u64(w, q->rate);
		wbuf_u8(w, q->ncands);
		for (uint8_t i = 0; i < q->ncands && i < OFS_MAX_REPLICAS; i++)
			wbuf_sid(w, q->cands[i]);
		wbuf_str(w, q->reason);
		break;
	case RQ_STALE_CLEAR:
		wbuf_oid(w, q->oid);
		wbuf_sid(w, q->sid);
		wbuf_u64(w, q->version);
		break;
	case RQ_CHANGES:
		wbuf_oid(w, q->oid);
		wbuf_u64(w, q->version);
		break;
	case RQ_TASK_START:
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
	case RQ_TASK_POLL:
		wbuf_u64(w, q->task.job);
		wbuf_u64(w, q->task.ack);
		wbuf_u64(w, q->task.budget);
		break;
	case RQ_TASK_CTL:
		wbuf_u64(w, q->task.job);
		wbuf_u8(w, q->task.action);
		break;
	case RQ_JOIN:
		if ((q->flags & ~(OFS_JOIN_END | (OFS_JOIN_CHANNELS - 1))) ||
		    q->reclen == 0 || q->reclen > OFS_JOIN_MAX_RECLEN ||
		    (q->flags & OFS_JOIN_END ? q->data_len != 0
		     : q->data_len == 0 || q->data_len % q->reclen || q->data_len > OFS_JOIN_MAX_BYTES))
			return -EINVAL;
		wbuf_u64(w, q->task.job);
		wbuf_u64(w, q->epoch);
		wbuf_sid(w, q->sid);
		wbuf_u32(w, q->flags);
		wbuf_u32(w, q->reclen);
		if (q->flags & OFS_JOIN_END) {
			wbuf_u64(w, q->count);
		} else {
			wbuf_u32(w, (uint32_t)(q->data_len / q->reclen));
			wbuf_bytes(w, q->data, q->data_len);
		}
		break;
	case RQ_OIDS:
		if (q->data_len % OFS_OID_LEN || q->data_len / OFS_OID_LEN > d->most)
			return -EINVAL;
		wbuf_u32(w, (uint32_t)(q->data_len / OFS_OID_LEN));
		wbuf_bytes(w, q->data, q->data_len);
		break;
	case RQ_POINTS:
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
	const struct op_def *d = op_def(q->op);
	int rc;

	if (!d || (q->op & (OFS_OP_RESPONSE | OFS_OP_FORWARDED)))
		return -OFS_EUNKNOWNOP;
	rc = encode_data_req(w, q, d);
	if (rc == 1)
		rc = encode_peer_req(w, q, d);
	if (rc == 1)
		return -OFS_EUNKNOWNOP;
	return rc ? rc : wbuf_error(w);
}

/* A string that goes into logs and reports: no control characters. */
bool proto_printable(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			return false;
	return true;
}

void proto_decode_name(struct rbuf *r, char *name, bool allow_empty)
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

/* A list's max: 1 to most. */
static void decode_max(struct rbuf *r, uint32_t *max, uint32_t most)
{
	*max = rbuf_u32(r);
	if (!rbuf_error(r) && (*max == 0 || *max > most))
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
static int decode_data_req(const struct op_def *d, struct rbuf *r, struct ofs_req *q)
{
	switch (d->form) {
	case RQ_NONE:
		break;
	case RQ_CREATE:
		q->oid = rbuf_oid(r);
		proto_decode_attr(r, &q->attr);
		if (!rbuf_error(r) && !ofs_type_valid(q->attr.type))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_CREATE_SMALL:
		/* (a metafile with its one dfile on its own servers, both
		 * named, and its size the bytes') */
		q->oid = rbuf_oid(r);
		proto_decode_attr(r, &q->attr);
		q->data = rbuf_blob(r, OFS_SMALL_MAX, &q->data_len);
		if (!rbuf_error(r) &&
		    (q->attr.type != OFS_OBJ_METAFILE || q->attr.nparts != 1 ||
		     oid_is_zero(q->oid) || oid_is_zero(q->attr.parts[0].oid) ||
		     oid_eq(q->oid, q->attr.parts[0].oid) || q->attr.size != q->data_len))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_OID:
		q->oid = rbuf_oid(r);
		break;
	case RQ_SETATTR:
		q->oid = rbuf_oid(r);
		q->mask = rbuf_u32(r);
		proto_decode_attr(r, &q->attr);
		if (!rbuf_error(r) && (q->mask & ~(uint32_t)OFS_ATTR_ALL))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_READ:
		q->oid = rbuf_oid(r);
		q->offset = rbuf_u64(r);
		q->length = rbuf_u32(r);
		if (!rbuf_error(r) && q->length > OFS_MAX_IO)
			rbuf_fail(r, -OFS_ETOOBIG);
		break;
	case RQ_WRITE:
		q->oid = rbuf_oid(r);
		q->offset = rbuf_u64(r);
		q->flags = rbuf_u32(r);
		q->data = rbuf_blob(r, OFS_MAX_IO, &q->data_len);
		if (!rbuf_error(r) && (q->flags & ~(uint32_t)OFS_WRITE_UNSTABLE))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_KEY:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		if (!rbuf_error(r) && q->key_len == 0)
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_KEY_VALUE:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		q->data = rbuf_blob(r, OFS_MAX_VALUE, &q->data_len);
		if (!rbuf_error(r) && q->key_len == 0)
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_KEY_MAX:
		q->oid = rbuf_oid(r);
		q->key = rbuf_blob(r, OFS_MAX_KEY, &q->key_len);
		decode_max(r, &q->max, d->most);
		break;
	case RQ_DIRENT:
		q->oid = rbuf_oid(r);
		proto_decode_name(r, q->name, false);
		proto_decode_dirent(r, &q->dirent);
		q->flags = rbuf_u32(r);
		if (!rbuf_error(r) && (q->flags & ~(uint32_t)OFS_DIRENT_REPLACE))
			rbuf_fail(r, -OFS_ECORRUPT);
		break;
	case RQ_NAME:
		q->oid = rbuf_oid(r);
		proto_decode_name(r, q->name, false);
		break;
	case RQ_NAME_MAX:
		q->oid = rbuf_oid(r);
		proto_decode_name(r, q->name, true);
		decode_max(r, &q->max, d->most);
		break;
	default:
		return 1;
	}
	return 0;
}

/* The cluster's, repair's and the tasks' operations decoded field by
 * field: 0 (the caller checks r), 1 when op is not one of them, or a
 * negative code. */
static int decode_peer_req(const struct op_def *d, struct rbuf *r, struct ofs_req *q)
{
	switch (d->form) {
	case RQ_FREEZE:
		q->oid = rbuf_oid(r);
		q->ms = rbuf_u32(r);
		q->sid = rbuf_sid(r);
		if (!rbuf_error(r) && q->ms > 600000)
			return -OFS_ECORRUPT;    /* ten minutes at most */
		break;
	case RQ_STOP_CHECK:
		q->max = rbuf_u32(r);
		if (!rbuf_error(r) && q->max > d->most)
			return -OFS_ECORRUPT;
		break;
	case RQ_REPAIR_FETCH:
		q->oid = rbuf_oid(r);
		q->flags = rbuf_u32(r);
		q->rate = rbuf_u64(r);
		q->ncands = rbuf_u8(r);
		if (!rbuf_error(r) && (q->ncands > OFS_MAX_REPLICAS || (q->flags & ~(OFS_FETCH_DRYRUN | OFS_FETCH_LOCALBAD))))
			return -OFS_ECORRUPT;
		for (uint8_t i = 0; i < q->ncands && !rbuf_error(r); i++)
			q->cands[i] = rbuf_sid(r);
		rbuf_str(r, q->reason, sizeof(q->reason));
		if (!rbuf_error(r) && !proto_printable(q->reason))
			return -OFS_ECORRUPT;
		break;
	case RQ_STALE_CLEAR:
		q->oid = rbuf_oid(r);
		q->sid = rbuf_sid(r);
		q->version = rbuf_u64(r);
		break;
	case RQ_CHANGES:
		q->oid = rbuf_oid(r);
		q->version = rbuf_u64(r);
		break;
	case RQ_TASK_START:
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
	case RQ_TASK_POLL:
		q->task.job = rbuf_u64(r);
		q->task.ack = rbuf_u64(r);
		q->task.budget = rbuf_u64(r);
		break;
	case RQ_OIDS: {
		uint32_t n = rbuf_u32(r);
		if (rbuf_error(r) || n == 0 || n > d->most)
			return -OFS_ECORRUPT;
		q->data = rbuf_bytes(r, (size_t)n * OFS_OID_LEN);
		q->data_len = (size_t)n * OFS_OID_LEN;
		break;
	}
	case RQ_POINTS:
		q->oid = rbuf_oid(r);
		q->child = rbuf_oid(r);
		q->offset = rbuf_u32(r);
		proto_decode_name(r, q->name, true);
		break;
	case RQ_TASK_CTL:
		q->task.job = rbuf_u64(r);
		q->task.action = rbuf_u8(r);
		if (!rbuf_error(r) && (q->task.action < OFS_TASK_PAUSE || q->task.action > OFS_TASK_FORGET))
			return -OFS_ECORRUPT;
		break;
	case RQ_JOIN:
		q->task.job = rbuf_u64(r);
		q->epoch = rbuf_u64(r);
		q->sid = rbuf_sid(r);
		q->flags = rbuf_u32(r);
		q->reclen = rbuf_u32(r);
		if (rbuf_error(r) || (q->flags & ~(OFS_JOIN_END | (OFS_JOIN_CHANNELS - 1))) ||
		    q->reclen == 0 || q->reclen > OFS_JOIN_MAX_RECLEN)
			return -OFS_ECORRUPT;
		if (q->flags & OFS_JOIN_END) {
			q->count = rbuf_u64(r);
		} else {
			uint32_t n = rbuf_u32(r);
			if (rbuf_error(r) || n == 0 || (uint64_t)n * q->reclen > OFS_JOIN_MAX_BYTES)
				return -OFS_ECORRUPT;
			q->data_len = (size_t)n * q->reclen;
			q->data = rbuf_bytes(r, q->data_len);
		}
		break;
	default:
		return 1;
	}
	return 0;
}

int proto_decode_req(uint16_t op, const uint8_t *body, size_t len, struct ofs_req *q)
{
	const struct op_def *d = op_def(op);
	struct rbuf r;
	int rc;

	memset(q, 0, sizeof(*q));
	q->op = op;
	if (!d || (op & (OFS_OP_RESPONSE | OFS_OP_FORWARDED)))
		return -OFS_EUNKNOWNOP;
	/* the forms that have a decoder of their own */
	switch (d->form) {
	case RQ_CRL: {
		/* a pull, a CRL (checked whole, signature first, by the
		 * receiver's list: crl_offer), or the previous release's
		 * unsigned list (kept to be refused as such) */
		uint64_t held;
		if (!crl_pull_decode(body, len, &held) && !crl_is_der(body, len) &&
		    !crl_is_unsigned(body, len))
			return -OFS_ECORRUPT;
		q->data = body;
		q->data_len = len;
		return 0;
	}
	case RQ_CAPKEYS: {
		/* a pull, a signed key set, or the previous release's unsigned
		 * one (kept to be refused as such); cap.h */
		struct cap_key k[CAP_MAX_KEYS];
		uint8_t sig[CAP_SIG_LEN];
		size_t n = 0;
		uint32_t held;
		int src = cap_keys_pull_decode(body, len, &held) ? 0 :
			  len && body[0] == CAP_KEYS_SIGNED ?
				 cap_keys_signed_decode(body, len, k, &n, sig) :
				 cap_keys_decode(body, len, k, &n);
		OPENSSL_cleanse(k, sizeof(k));
		if (src)
			return src;
		q->data = body;
		q->data_len = len;
		return 0;
	}
	case RQ_SERVERS: {
		struct ofs_server *e = NULL;
		int src = proto_decode_servers(body, len, false, NULL, &e, &q->nservers);
		free(e);
		if (src)
			return src;
		q->data = body;
		q->data_len = len;
		return 0;
	}
	case RQ_SERVER_SET:
		return proto_decode_server_set(body, len, &q->set);
	case RQ_REPORT:
		return proto_decode_report(body, len, &q->oid, &q->sid, q->reason);
	case RQ_ROOT:
		return proto_decode_root(body, len, &q->root, &q->birth_ns);
	default:
		break;
	}
	rbuf_init(&r, body, len);
	rc = decode_data_req(d, &r, q);
	if (rc == 1)
		rc = decode_peer_req(d, &r, q);
	if (rc == 1)
		return -OFS_EUNKNOWNOP;
	return rc ? rc : rbuf_done(&r);
}
