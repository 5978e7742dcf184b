/* frame.c - encode and validate frame headers (see frame.h). */
#include <errno.h>

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/wire.h"

void frame_encode_hdr(const struct ofs_frame_hdr *h, uint8_t out[OFS_FRAME_HDR])
{
	int i = 0;
	uint64_t id = h->reqid;
	uint32_t st = (uint32_t)h->status;

	out[i++] = (uint8_t)(OFS_MAGIC >> 24); out[i++] = (uint8_t)(OFS_MAGIC >> 16);
	out[i++] = (uint8_t)(OFS_MAGIC >> 8); out[i++] = (uint8_t)OFS_MAGIC;
	out[i++] = (uint8_t)(h->version >> 8); out[i++] = (uint8_t)h->version;
	out[i++] = (uint8_t)(h->op >> 8); out[i++] = (uint8_t)h->op;
	for (int s = 56; s >= 0; s -= 8)
		out[i++] = (uint8_t)(id >> s);
	for (int s = 24; s >= 0; s -= 8)
		out[i++] = (uint8_t)(st >> s);
	out[i++] = (uint8_t)(h->cred_len >> 8); out[i++] = (uint8_t)h->cred_len;
	out[i++] = (uint8_t)(h->cap_len >> 8); out[i++] = (uint8_t)h->cap_len;
	for (int s = 24; s >= 0; s -= 8)
		out[i++] = (uint8_t)(h->body_len >> s);
}

int frame_decode_hdr(const uint8_t in[OFS_FRAME_HDR], struct ofs_frame_hdr *h)
{
	struct rbuf r;
	struct ofs_frame_hdr t;
	uint32_t magic;

	rbuf_init(&r, in, OFS_FRAME_HDR);
	magic = rbuf_u32(&r);
	t.version = rbuf_u16(&r);
	t.op = rbuf_u16(&r);
	t.reqid = rbuf_u64(&r);
	t.status = (int32_t)rbuf_u32(&r);
	t.cred_len = rbuf_u16(&r);
	t.cap_len = rbuf_u16(&r);
	t.body_len = rbuf_u32(&r);
	if (rbuf_done(&r))
		return -OFS_EPROTO;
	if (magic != OFS_MAGIC)
		return -OFS_EPROTO;
	if (t.version != OFS_PROTO_VERSION)
		return -OFS_EVERSION;
	if (!(t.op & OFS_OP_RESPONSE) && t.status != 0)
		return -OFS_EPROTO;
	if (t.cred_len > OFS_MAX_CRED || t.cap_len > OFS_MAX_CAP ||
	    t.body_len > OFS_MAX_BODY)
		return -OFS_ETOOBIG;
	*h = t;
	return 0;
}

size_t frame_payload_len(const struct ofs_frame_hdr *h)
{
	return (size_t)h->cred_len + h->cap_len + h->body_len;
}

void frame_deadline_encode(uint64_t deadline_ms, uint8_t out[FRAME_DEADLINE_LEN])
{
	out[0] = 'D';
	out[1] = 1;
	for (int i = 0; i < 8; i++)
		out[2 + i] = (uint8_t)(deadline_ms >> (56 - 8 * i));
}

int frame_deadline_decode(const uint8_t *cred, size_t n, uint64_t *deadline_ms)
{
	uint64_t v = 0;

	if (!cred || n != FRAME_DEADLINE_LEN || cred[0] != 'D' || cred[1] != 1)
		return -ENOENT;
	for (int i = 0; i < 8; i++)
		v = v << 8 | cred[2 + i];
	if (v == 0)
		return -ENOENT;
	*deadline_ms = v;
	return 0;
}
