/*
 * wire.h - the one codec for untrusted bytes.
 *
 * Everything that crosses the network or comes back from disk is encoded
 * with a wbuf and decoded with an rbuf. Integers are big-endian. A reader
 * checks every length against what is left in its buffer before touching a
 * byte; the first failure latches (rbuf.err) and every later read returns
 * zeros, so a decoder can read a whole struct and check rbuf_error() once.
 * Decoded strings and byte ranges point into the reader's buffer: they live
 * as long as that buffer does.
 */
#ifndef OFS_WIRE_H
#define OFS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/checksum.h"
#include "lib/oid.h"

struct wbuf {
	uint8_t *data;   /* owned, grown with realloc */
	size_t len;      /* bytes written */
	size_t cap;      /* bytes allocated */
	int err;         /* first error (-ENOMEM), latched */
};

struct rbuf {
	const uint8_t *data;  /* not owned */
	size_t len;           /* total bytes */
	size_t pos;           /* next byte to read */
	int err;              /* first error (-OFS_ECORRUPT), latched */
};

void wbuf_init(struct wbuf *w);
/* Frees w's buffer; wbuf_free of a zeroed wbuf does nothing. */
void wbuf_free(struct wbuf *w);
/* Make room for n more bytes; returns a pointer to them or NULL (err set). */
uint8_t *wbuf_reserve(struct wbuf *w, size_t n);
void wbuf_u8(struct wbuf *w, uint8_t v);
void wbuf_u16(struct wbuf *w, uint16_t v);
void wbuf_u32(struct wbuf *w, uint32_t v);
void wbuf_u64(struct wbuf *w, uint64_t v);
void wbuf_i64(struct wbuf *w, int64_t v);
void wbuf_bytes(struct wbuf *w, const void *p, size_t n);   /* raw, no length */
void wbuf_blob(struct wbuf *w, const void *p, size_t n);    /* u32 length + bytes */
void wbuf_str(struct wbuf *w, const char *s);                /* u16 length + bytes */
void wbuf_oid(struct wbuf *w, struct ofs_oid oid);
void wbuf_sid(struct wbuf *w, struct ofs_sid sid);
void wbuf_digest(struct wbuf *w, struct ofs_digest d);
void wbuf_handle(struct wbuf *w, const struct ofs_handle *h);
/* Overwrite a u32 already written at offset off (for lengths known late). */
void wbuf_patch_u32(struct wbuf *w, size_t off, uint32_t v);
/* 0 or the latched error. */
int wbuf_error(const struct wbuf *w);

void rbuf_init(struct rbuf *r, const void *data, size_t len);
/* n raw bytes; returns a pointer into the buffer or NULL (err set). */
const uint8_t *rbuf_bytes(struct rbuf *r, size_t n);

/* The fixed-size readers are inline: a record decode calls them dozens of
 * times, and the namespace check decodes millions of records. */
static inline uint64_t rbuf_be_(struct rbuf *r, size_t n)
{
	uint64_t v = 0;

	if (r->err || n > r->len - r->pos) {
		(void)rbuf_bytes(r, n);   /* latches the error */
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->data[r->pos + i];
	r->pos += n;
	return v;
}
static inline uint8_t rbuf_u8(struct rbuf *r) { return (uint8_t)rbuf_be_(r, 1); }
static inline uint16_t rbuf_u16(struct rbuf *r) { return (uint16_t)rbuf_be_(r, 2); }
static inline uint32_t rbuf_u32(struct rbuf *r) { return (uint32_t)rbuf_be_(r, 4); }
static inline uint64_t rbuf_u64(struct rbuf *r) { return rbuf_be_(r, 8); }
static inline int64_t rbuf_i64(struct rbuf *r) { return (int64_t)rbuf_be_(r, 8); }
/* u32 length + bytes, length at most max; *n receives the length. */
const uint8_t *rbuf_blob(struct rbuf *r, size_t max, size_t *n);
/* u16 length + bytes copied into out (outlen bytes incl. NUL). Fails when
 * the string is longer than outlen-1 or holds a NUL byte. */
void rbuf_str(struct rbuf *r, char *out, size_t outlen);
struct ofs_oid rbuf_oid(struct rbuf *r);
struct ofs_sid rbuf_sid(struct rbuf *r);
/* (zero when it could not be read: the error is latched) */
struct ofs_digest rbuf_digest(struct rbuf *r);
/* A handle; fails if nsids > OFS_MAX_REPLICAS. */
void rbuf_handle(struct rbuf *r, struct ofs_handle *h);
size_t rbuf_left(const struct rbuf *r);
/* 0 or the latched error (-OFS_ECORRUPT by default). */
int rbuf_error(const struct rbuf *r);
/* Latch err (if none yet) - for a decoder's own semantic checks. */
void rbuf_fail(struct rbuf *r, int err);
/* 0 when every byte was consumed and nothing failed, else -OFS_ECORRUPT. */
int rbuf_done(const struct rbuf *r);

#endif
