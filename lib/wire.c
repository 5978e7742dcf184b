/* wire.c - bounds-checked big-endian encoder and decoder (see wire.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/wire.h"

void wbuf_init(struct wbuf *w)
{
	memset(w, 0, sizeof(*w));
}

void wbuf_free(struct wbuf *w)
{
	free(w->data);
	memset(w, 0, sizeof(*w));
}

uint8_t *wbuf_reserve(struct wbuf *w, size_t n)
{
	if (w->err)
		return NULL;
	if (n > SIZE_MAX / 2 - w->len) {
		w->err = -ENOMEM;
		return NULL;
	}
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n)
			cap *= 2;
		uint8_t *p = realloc(w->data, cap);
		if (!p) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->data = p;
		w->cap = cap;
	}
	uint8_t *p = w->data + w->len;
	w->len += n;
	return p;
}

static void put_be(struct wbuf *w, uint64_t v, int n)
{
	uint8_t *p = wbuf_reserve(w, (size_t)n);

	if (!p)
		return;
	for (int i = n - 1; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

void wbuf_u8(struct wbuf *w, uint8_t v) { put_be(w, v, 1); }
void wbuf_u16(struct wbuf *w, uint16_t v) { put_be(w, v, 2); }
void wbuf_u32(struct wbuf *w, uint32_t v) { put_be(w, v, 4); }
void wbuf_u64(struct wbuf *w, uint64_t v) { put_be(w, v, 8); }
void wbuf_i64(struct wbuf *w, int64_t v) { put_be(w, (uint64_t)v, 8); }

void wbuf_bytes(struct wbuf *w, const void *p, size_t n)
{
	uint8_t *d;

	if (n == 0)
		return;
	d = wbuf_reserve(w, n);
	if (d)
		memcpy(d, p, n);
}

void wbuf_blob(struct wbuf *w, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		w->err = w->err ? w->err : -OFS_ETOOBIG;
		return;
	}
	wbuf_u32(w, (uint32_t)n);
	wbuf_bytes(w, p, n);
}

void wbuf_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	if (n > UINT16_MAX) {
		w->err = w->err ? w->err : -OFS_ETOOBIG;
		return;
	}
	wbuf_u16(w, (uint16_t)n);
	wbuf_bytes(w, s, n);
}

void wbuf_oid(struct wbuf *w, struct ofs_oid oid) { wbuf_bytes(w, oid.b, sizeof(oid.b)); }
void wbuf_sid(struct wbuf *w, struct ofs_sid sid) { wbuf_bytes(w, sid.b, sizeof(sid.b)); }
void wbuf_digest(struct wbuf *w, struct ofs_digest d) { wbuf_bytes(w, d.b, sizeof(d.b)); }

void wbuf_handle(struct wbuf *w, const struct ofs_handle *h)
{
	uint8_t n = h->nsids > OFS_MAX_REPLICAS ? OFS_MAX_REPLICAS : h->nsids;

	wbuf_oid(w, h->oid);
	wbuf_u8(w, n);
	for (uint8_t i = 0; i < n; i++)
		wbuf_sid(w, h->sids[i]);
}

void wbuf_patch_u32(struct wbuf *w, size_t off, uint32_t v)
{
	if (w->err || off > w->len || w->len - off < 4)
		return;
	for (int i = 3; i >= 0; i--) {
		w->data[off + (size_t)i] = (uint8_t)v;
		v >>= 8;
	}
}

int wbuf_error(const struct wbuf *w) { return w->err; }

void rbuf_init(struct rbuf *r, const void *data, size_t len)
{
	r->data = data;
	r->len = data ? len : 0;
	r->pos = 0;
	r->err = 0;
}

void rbuf_fail(struct rbuf *r, int err)
{
	if (!r->err)
		r->err = err;
}

const uint8_t *rbuf_bytes(struct rbuf *r, size_t n)
{
	const uint8_t *p;

	if (r->err)
		return NULL;
	if (n == 0)
		return r->data ? r->data + r->pos : (const uint8_t *)"";
	if (n > r->len - r->pos) {
		r->err = -OFS_ECORRUPT;
		return NULL;
	}
	p = r->data + r->pos;
	r->pos += n;
	return p;
}

const uint8_t *rbuf_blob(struct rbuf *r, size_t max, size_t *n)
{
	uint32_t len = rbuf_u32(r);

	if (r->err)
		return NULL;
	if (len > max) {
		r->err = -OFS_ETOOBIG;
		return NULL;
	}
	const uint8_t *p = rbuf_bytes(r, len);
	if (p)
		*n = len;
	return p;
}

void rbuf_str(struct rbuf *r, char *out, size_t outlen)
{
	uint16_t len = rbuf_u16(r);
	const uint8_t *p;

	if (r->err)
		return;
	if (outlen == 0 || len > outlen - 1) {
		r->err = -OFS_ETOOBIG;
		return;
	}
	p = rbuf_bytes(r, len);
	if (!p)
		return;
	if (memchr(p, '\0', len)) {
		r->err = -OFS_ECORRUPT;
		return;
	}
	memcpy(out, p, len);
	out[len] = '\0';
}

struct ofs_oid rbuf_oid(struct rbuf *r)
{
	struct ofs_oid o;
	const uint8_t *p = rbuf_bytes(r, sizeof(o.b));

	if (p)
		memcpy(o.b, p, sizeof(o.b));
	else
		memset(&o, 0, sizeof(o));
	return o;
}

struct ofs_digest rbuf_digest(struct rbuf *r)
{
	struct ofs_digest d;
	const uint8_t *p = rbuf_bytes(r, sizeof(d.b));

	if (p)
		memcpy(d.b, p, sizeof(d.b));
	else
		memset(&d, 0, sizeof(d));
	return d;
}

struct ofs_sid rbuf_sid(struct rbuf *r)
{
	struct ofs_sid s;
	const uint8_t *p = rbuf_bytes(r, sizeof(s.b));

	if (p)
		memcpy(s.b, p, sizeof(s.b));
	else
		memset(&s, 0, sizeof(s));
	return s;
}

void rbuf_handle(struct rbuf *r, struct ofs_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->oid = rbuf_oid(r);
	h->nsids = rbuf_u8(r);
	if (h->nsids > OFS_MAX_REPLICAS) {
		rbuf_fail(r, -OFS_ECORRUPT);
		h->nsids = 0;
		return;
	}
	for (uint8_t i = 0; i < h->nsids; i++)
		h->sids[i] = rbuf_sid(r);
}

size_t rbuf_left(const struct rbuf *r) { return r->len - r->pos; }
int rbuf_error(const struct rbuf *r) { return r->err; }

int rbuf_done(const struct rbuf *r)
{
	if (r->err)
		return r->err;
	return r->pos == r->len ? 0 : -OFS_ECORRUPT;
}
