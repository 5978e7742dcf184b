/*
 * checksum.h - XXH3-128 digests of byte-stream chunks and of replicas.
 *
 * A dfile's stream is cut into fixed chunks (the server's chunk size); each
 * chunk's digest is XXH3-128 of its bytes (the last chunk may be short).
 * Digests are stored and compared in canonical (big-endian) byte form.
 */
#ifndef OFS_CHECKSUM_H
#define OFS_CHECKSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OFS_DIGEST_LEN 16
#define OFS_DIGEST_HEX 33
#define OFS_DEFAULT_CHUNK (1u << 20)

struct ofs_digest {
	uint8_t b[OFS_DIGEST_LEN];   /* canonical XXH128 bytes */
};

/* XXH3-128 of n bytes. */
struct ofs_digest checksum_buf(const void *p, size_t n);
bool digest_eq(struct ofs_digest a, struct ofs_digest b);
void digest_to_hex(struct ofs_digest d, char out[OFS_DIGEST_HEX]);

/* Streaming XXH3-128 over several pieces. */
struct checksum_stream;
/* NULL when out of memory. */
struct checksum_stream *checksum_stream_new(void);
void checksum_stream_update(struct checksum_stream *s, const void *p, size_t n);
struct ofs_digest checksum_stream_final(struct checksum_stream *s);
void checksum_stream_free(struct checksum_stream *s);
/* Start over, as if new (no allocation). */
void checksum_stream_reset(struct checksum_stream *s);

/* The chunks [first, last] that bytes [off, off+len) touch; len > 0. */
void checksum_chunk_span(uint64_t off, uint64_t len, uint32_t chunk,
			 uint64_t *first, uint64_t *last);

#endif
