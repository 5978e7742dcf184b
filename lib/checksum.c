/* checksum.c - XXH3-128 digests (see checksum.h). Only this file sees xxHash. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "lib/checksum.h"

struct checksum_stream {
	XXH3_state_t *st;   /* xxHash's streaming state */
};

static struct ofs_digest canon(XXH128_hash_t h)
{
	XXH128_canonical_t c;
	struct ofs_digest d;

	XXH128_canonicalFromHash(&c, h);
	memcpy(d.b, c.digest, sizeof(d.b));
	return d;
}

struct ofs_digest checksum_buf(const void *p, size_t n)
{
	return canon(XXH3_128bits(n ? p : "", n));
}

bool digest_eq(struct ofs_digest a, struct ofs_digest b)
{
	return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

void digest_to_hex(struct ofs_digest d, char out[OFS_DIGEST_HEX])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < OFS_DIGEST_LEN; i++) {
		out[2 * i] = digits[d.b[i] >> 4];
		out[2 * i + 1] = digits[d.b[i] & 15];
	}
	out[2 * OFS_DIGEST_LEN] = '\0';
}

struct checksum_stream *checksum_stream_new(void)
{
	struct checksum_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->st = XXH3_createState();
	if (!s->st) {
		free(s);
		return NULL;
	}
	XXH3_128bits_reset(s->st);
	return s;
}

void checksum_stream_update(struct checksum_stream *s, const void *p, size_t n)
{
	if (n)
		XXH3_128bits_update(s->st, p, n);
}

struct ofs_digest checksum_stream_final(struct checksum_stream *s)
{
	return canon(XXH3_128bits_digest(s->st));
}

void checksum_stream_reset(struct checksum_stream *s)
{
	XXH3_128bits_reset(s->st);
}

void checksum_stream_free(struct checksum_stream *s)
{
	if (!s)
		return;
	XXH3_freeState(s->st);
	free(s);
}

void checksum_chunk_span(uint64_t off, uint64_t len, uint32_t chunk,
			 uint64_t *first, uint64_t *last)
{
	*first = off / chunk;
	*last = (off + len - 1) / chunk;
}
