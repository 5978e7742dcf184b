/* records.c - LMDB record layout (see records.h). */
#include <errno.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "store/records.h"

int rec_encode_object(struct wbuf *w, const struct ofs_attr *a)
{
	wbuf_u8(w, REC_FORMAT);
	proto_encode_attr(w, a);
	return wbuf_error(w);
}

int rec_decode_object(const void *v, size_t n, struct ofs_attr *a)
{
	struct rbuf r;
	uint8_t fmt;
	int rc;

	rbuf_init(&r, v, n);
	fmt = rbuf_u8(&r);
	if (rbuf_error(&r))
		return -OFS_ECORRUPT;
	if (fmt != REC_FORMAT)
		return -OFS_EVERSION;
	proto_decode_attr(&r, a);
	rc = rbuf_done(&r);
	if (rc)
		return -OFS_ECORRUPT;
	if (!ofs_type_valid(a->type))
		return -OFS_ECORRUPT;
	return 0;
}

void rec_chunk_key(struct ofs_oid oid, uint64_t idx, uint8_t key[REC_CHUNK_KEY])
{
	memcpy(key, oid.b, OFS_OID_LEN);
	for (int i = 7; i >= 0; i--) {
		key[OFS_OID_LEN + i] = (uint8_t)idx;
		idx >>= 8;
	}
}

int rec_chunk_key_index(const void *k, size_t kn, uint64_t *idx)
{
	const uint8_t *p = k;
	uint64_t v = 0;

	if (kn != REC_CHUNK_KEY)
		return -OFS_ECORRUPT;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[OFS_OID_LEN + i];
	*idx = v;
	return 0;
}

int rec_decode_digest(const void *v, size_t n, struct ofs_digest *d)
{
	if (n != OFS_DIGEST_LEN)
		return -OFS_ECORRUPT;
	memcpy(d->b, v, OFS_DIGEST_LEN);
	return 0;
}

size_t rec_kv_key(struct ofs_oid oid, const void *key, size_t kn, uint8_t *out)
{
	if (kn > OFS_MAX_KEY)
		kn = OFS_MAX_KEY;
	memcpy(out, oid.b, OFS_OID_LEN);
	if (kn)
		memcpy(out + OFS_OID_LEN, key, kn);
	return OFS_OID_LEN + kn;
}

int rec_encode_dirent(struct wbuf *w, const struct ofs_dirent *d)
{
	proto_encode_dirent(w, d);
	return wbuf_error(w);
}

int rec_decode_dirent(const void *v, size_t n, struct ofs_dirent *d)
{
	struct rbuf r;

	rbuf_init(&r, v, n);
	proto_decode_dirent(&r, d);
	return rbuf_done(&r) ? -OFS_ECORRUPT : 0;
}

bool rec_attr_valid(const char *a)
{
	const char *eq = strchr(a, '=');

	if (!eq || eq == a || strlen(a) >= REC_ATTR_LEN)
		return false;
	for (const char *c = a; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	return true;
}

int rec_encode_attrs(struct wbuf *w, const char *const *attrs, size_t n)
{
	if (n > REC_MAX_ATTRS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!rec_attr_valid(attrs[i]))
			return -EINVAL;
	wbuf_u16(w, (uint16_t)n);
	for (size_t i = 0; i < n; i++)
		wbuf_str(w, attrs[i]);
	return wbuf_error(w);
}

int rec_decode_attrs(const void *v, size_t n, char out[REC_MAX_ATTRS][REC_ATTR_LEN],
		     size_t *count)
{
	char a[REC_MAX_ATTRS][REC_ATTR_LEN];
	struct rbuf r;
	uint16_t cnt;

	rbuf_init(&r, v, n);
	cnt = rbuf_u16(&r);
	if (cnt > REC_MAX_ATTRS)
		return -OFS_ECORRUPT;
	for (uint16_t i = 0; i < cnt && !rbuf_error(&r); i++) {
		rbuf_str(&r, a[i], sizeof(a[i]));
		if (!rbuf_error(&r) && !rec_attr_valid(a[i]))
			rbuf_fail(&r, -OFS_ECORRUPT);
	}
	if (rbuf_done(&r))
		return -OFS_ECORRUPT;
	memcpy(out, a, cnt * sizeof(a[0]));
	*count = cnt;
	return 0;
}

int rec_encode_server(struct wbuf *w, const struct ofs_server *e)
{
	proto_encode_server(w, e);
	return wbuf_error(w);
}

#define REC_SERVER_LEGACY_MAX 4096         /* larger than any entry */

int rec_decode_server(const void *v, size_t n, struct ofs_server *e)
{
	uint8_t old[REC_SERVER_LEGACY_MAX + 16];
	struct rbuf r;

	rbuf_init(&r, v, n);
	proto_decode_server(&r, e);
	if (rbuf_done(&r) == 0)
		return 0;
	if (n > REC_SERVER_LEGACY_MAX)
		return -OFS_ECORRUPT;
	/* From before the per-part versions: the last two counters, zero. */
	if (n)
		memcpy(old, v, n);
	memset(old + n, 0, 16);
	rbuf_init(&r, old, n + 16);
	proto_decode_server(&r, e);
	return rbuf_done(&r) ? -OFS_ECORRUPT : 0;
}

void rec_stale_key(struct ofs_oid oid, struct ofs_sid sid, uint8_t key[REC_STALE_KEY])
{
	memcpy(key, oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, sid.b, OFS_OID_LEN);
}

int rec_decode_stale_key(const void *k, size_t kn, struct ofs_oid *oid, struct ofs_sid *sid)
{
	if (kn != REC_STALE_KEY)
		return -OFS_ECORRUPT;
	memcpy(oid->b, k, OFS_OID_LEN);
	memcpy(sid->b, (const uint8_t *)k + OFS_OID_LEN, OFS_OID_LEN);
	return 0;
}

void rec_decode_stale(const void *v, size_t n, char reason[REC_REASON_LEN])
{
	const char *nul = n ? memchr(v, '\0', n) : NULL;

	if (nul)
		n = (size_t)(nul - (const char *)v);
	if (n > REC_REASON_LEN - 1)
		n = REC_REASON_LEN - 1;
	if (n)
		memcpy(reason, v, n);
	reason[n] = '\0';
}

uint64_t rec_missed_version(const char *reason)
{
	const char *p = strstr(reason, "missed version ");
	uint64_t v = 0;

	if (!p)
		return 0;
	p += strlen("missed version ");
	if (*p < '1' || *p > '9')
		return 0;                          /* (no sign, space or leading zero) */
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;                  /* (more than a version holds) */
		v = v * 10 + d;
	}
	return *p == ':' ? v : 0;
}

int rec_decode_move(const void *v, size_t n, struct ofs_sid *target)
{
	if (n != OFS_OID_LEN)
		return -OFS_ECORRUPT;
	memcpy(target->b, v, OFS_OID_LEN);
	return 0;
}

static bool note_valid(const struct rec_note *n)
{
	return (n->kind == REC_NOTE_SET || n->kind == REC_NOTE_REMOVED) && n->kn > 0 &&
	       n->kn <= OFS_MAX_KEY && n->vn <= OFS_MAX_VALUE &&
	       (n->kind == REC_NOTE_SET || n->vn == 0);
}

int rec_encode_note(struct wbuf *w, const struct rec_note *n)
{
	if (!note_valid(n))
		return -EINVAL;
	wbuf_u8(w, n->kind);
	wbuf_u16(w, (uint16_t)n->kn);
	wbuf_bytes(w, n->k, n->kn);
	wbuf_blob(w, n->vn ? n->v : (const uint8_t *)"", n->vn);
	return wbuf_error(w);
}

void rec_read_note(struct rbuf *r, struct rec_note *n)
{
	n->vn = 0;
	n->kind = rbuf_u8(r);
	n->kn = rbuf_u16(r);
	n->k = rbuf_bytes(r, n->kn);
	n->v = rbuf_blob(r, OFS_MAX_VALUE, &n->vn);
	if (!rbuf_error(r) && !note_valid(n))
		rbuf_fail(r, -OFS_ECORRUPT);
}

int rec_decode_note(const void *v, size_t n, struct rec_note *note)
{
	struct rec_note t;
	struct rbuf r;

	rbuf_init(&r, v, n);
	rec_read_note(&r, &t);
	if (rbuf_done(&r))
		return -OFS_ECORRUPT;
	*note = t;
	return 0;
}
