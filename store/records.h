/*
 * records.h - how the server's records are laid out in LMDB.
 *
 * Keys are built here and values are encoded and decoded here, with the
 * same bounds-checked codec as the wire (wire.h, proto.h): a record read
 * back from disk is as untrusted as a frame. Every decoder returns 0 or
 * -OFS_ECORRUPT (or -OFS_EVERSION for a record format it does not know),
 * and each has a libFuzzer target (tests/fuzz/fuzz_records.c).
 */
#ifndef OFS_RECORDS_H
#define OFS_RECORDS_H

#include <stdbool.h>
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

/*
 * The server's site attributes (KV_META "attrs"): a u16 count, then each
 * "key=value" as a string. An attribute is valid when it is printable
 * ASCII without spaces, has a key before its '=' and is shorter than
 * REC_ATTR_LEN. encode: 0, -EINVAL (more than REC_MAX_ATTRS, or one not
 * valid) or the wbuf's error. decode: exactly n bytes, each attribute
 * valid, into out[0..*count); the out-parameters are written only on
 * success.
 */
#define REC_MAX_ATTRS 16
#define REC_ATTR_LEN 128                   /* bytes in one, with its NUL */
bool rec_attr_valid(const char *a);
int rec_encode_attrs(struct wbuf *w, const char *const *attrs, size_t n);
int rec_decode_attrs(const void *v, size_t n, char out[REC_MAX_ATTRS][REC_ATTR_LEN],
		     size_t *count);

/*
 * A server-table entry (KV_SERVERS, key its SID): proto_encode_server's
 * encoding. An entry written before the table's per-part versions lacks
 * the last two counters (self_version, root_version) and decodes with
 * them zero, so it re-encodes 16 bytes longer.
 */
int rec_encode_server(struct wbuf *w, const struct ofs_server *e);
int rec_decode_server(const void *v, size_t n, struct ofs_server *e);

/*
 * A stale record (KV_STALE): key OID | SID (the copy on SID of OID is
 * behind), value why, as text without its NUL. decode_stale_key:
 * -OFS_ECORRUPT unless the key is REC_STALE_KEY bytes. decode_stale
 * never fails: the reason is the value's first REC_REASON_LEN - 1 bytes,
 * cut at a NUL byte, so it is always a string.
 */
#define REC_STALE_KEY (2 * OFS_OID_LEN)
#define REC_REASON_LEN 256
void rec_stale_key(struct ofs_oid oid, struct ofs_sid sid, uint8_t key[REC_STALE_KEY]);
int rec_decode_stale_key(const void *k, size_t kn, struct ofs_oid *oid, struct ofs_sid *sid);
void rec_decode_stale(const void *v, size_t n, char reason[REC_REASON_LEN]);

/*
 * A reason starts with the change the copy missed first, as
 * REC_MISSED_FMT (the primary's version after that change: the copy was
 * known equal to it at the version before). The reason travels as text
 * (BEHIND, STALE_FOR) and the copy's own mark quotes it, so the version
 * is read back from its first "missed version " anywhere in it:
 * rec_missed_version returns it - decimal digits without a sign, space
 * or leading zero, at most UINT64_MAX, then ':', as REC_MISSED_FMT
 * spells it - or 0 when the reason does not say (a create or removal
 * missed, a change only the copy itself applied).
 */
#define REC_MISSED_FMT "missed version %llu: "
uint64_t rec_missed_version(const char *reason);

/* A move record (KV_MOVES, key OID): the SID the copy is moving to.
 * -OFS_ECORRUPT unless it is exactly a SID. */
int rec_decode_move(const void *v, size_t n, struct ofs_sid *target);

/*
 * A change note (KV_CHANGES, key OID | version u64 BE; changelog.h): u8
 * kind, the key (u16 length, 1..OFS_MAX_KEY bytes), the value (u32
 * length, at most OFS_MAX_VALUE bytes; none for a removal). k and v point
 * into the bytes decoded. encode: 0, -EINVAL (a note not valid) or the
 * wbuf's error. rec_read_note reads one from a stream (the CHANGES reply
 * carries notes as stored), latching -OFS_ECORRUPT in r; rec_decode_note
 * reads exactly n bytes: 0 or -OFS_ECORRUPT.
 */
enum { REC_NOTE_SET = 1, REC_NOTE_REMOVED = 2 };
struct rec_note {
	uint8_t kind;                      /* REC_NOTE_SET or REC_NOTE_REMOVED */
	const uint8_t *k, *v;              /* the key and (set) its new value */
	size_t kn, vn;
};
int rec_encode_note(struct wbuf *w, const struct rec_note *n);
void rec_read_note(struct rbuf *r, struct rec_note *n);
int rec_decode_note(const void *v, size_t n, struct rec_note *note);

#endif
