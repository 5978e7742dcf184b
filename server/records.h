/*
 * records.h - how the server's records are laid out in LMDB.
 *
 * Keys are built here and values are encoded and decoded here, with the
 * same bounds-checked codec as the wire (wire.h, proto.h): a record read
 * back from disk is as untrusted as a frame. Every decoder returns 0 or
 * -OFS_ECORRUPT (or -OFS_EVERSION for a record format it does not know).
 */
#ifndef OFS_RECORDS_H
#define OFS_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/checksum.h"
#include "lib/oid.h"
#include "lib/proto.h"
#include "lib/wire.h"

#define REC_FORMAT 1                       /* object record format */
#define REC_CHUNK_KEY (OFS_OID_LEN + 8)    /* OID | u64 BE chunk index */
#define REC_KV_KEY_MAX (OFS_OID_LEN + OFS_MAX_KEY)

/* Object record: a format byte then the attribute encoding. */
int rec_encode_object(struct wbuf *w, const struct ofs_attr *a);
int rec_decode_object(const void *v, size_t n, struct ofs_attr *a);

void rec_chunk_key(struct ofs_oid oid, uint64_t idx, uint8_t key[REC_CHUNK_KEY]);
/* Chunk index of a chunk key; -OFS_ECORRUPT when the key is malformed. */
int rec_chunk_key_index(const void *k, size_t kn, uint64_t *idx);
int rec_decode_digest(const void *v, size_t n, struct ofs_digest *d);

/* OID | key into out (REC_KV_KEY_MAX bytes); returns the key length. */
size_t rec_kv_key(struct ofs_oid oid, const void *key, size_t kn, uint8_t *out);

/* A dirent value (type and handle). */
int rec_encode_dirent(struct wbuf *w, const struct ofs_dirent *d);
int rec_decode_dirent(const void *v, size_t n, struct ofs_dirent *d);

#endif
