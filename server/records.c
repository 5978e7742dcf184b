/* records.c - LMDB record layout (see records.h). */
#include <string.h>

#include "lib/ofs_error.h"
#include "server/records.h"

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
