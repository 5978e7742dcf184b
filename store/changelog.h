/*
 * changelog.h - each key-value object's recent changes, so that a copy
 * that missed some can be caught up by them instead of copied whole.
 *
 * Every change that bumps a dirdata's (or another object's) version by
 * setting or deleting one key is noted in the same transaction, under
 * KV_CHANGES: OID | version (u64 BE) -> what the key became (its value,
 * or removed). An object keeps its latest CHANGELOG_KEEP notes; each new
 * one drops the one CHANGELOG_KEEP versions older.
 *
 * A copy whose stale mark says it missed version V was known equal to
 * the copy that recorded the mark at V - 1. It asks a current copy for
 * its notes V..M (OFS_OP_CHANGES) and replays them: each names a key's
 * final value at that version, so after the last one every key changed
 * since V - 1 is as the current copy has it at M. Whatever else differs
 * (a change only this copy applied, a note lost) is caught by comparing
 * the content digest with the current copy's at M; the replay is then
 * undone and the copy fetched whole. So the log is only ever a shortcut:
 * a wrong or missing note costs a whole fetch, never a wrong copy.
 *
 * A version without a note breaks the chain and the log cannot serve a
 * copy that missed it: an attribute-only change, a note trimmed, a copy
 * installed whole (its notes are forgotten: they were another lineage's).
 */
#ifndef OFS_CHANGELOG_H
#define OFS_CHANGELOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"
#include "lib/wire.h"
#include "store/kv.h"
#include "store/records.h"

#define CHANGELOG_KEEP 1024u               /* notes kept per object */
#define CHANGELOG_MAX_BYTES (2u << 20)     /* in one CHANGES reply */

/* Note that at version, key k became v (vn bytes), or was removed. */
int changelog_note(struct kv_txn *t, struct ofs_oid oid, uint64_t version, const void *k,
		   size_t kn, const void *v, size_t vn, bool removed);

/* Forget every note of oid (it was removed, dropped or replaced whole). */
int changelog_forget(struct kv_txn *t, struct ofs_oid oid);

/*
 * Encode the notes of versions since+1..upto into w: a u32 count, then
 * per note its version, kind, key and value. -ERANGE when one of them is
 * missing or they would pass CHANGELOG_MAX_BYTES.
 */
int changelog_encode(struct kv_txn *t, struct ofs_oid oid, uint64_t since, uint64_t upto,
		     struct wbuf *w);

/*
 * Read notes encoded by changelog_encode (untrusted bytes): they must be
 * exactly versions since+1..upto, in order, each a valid note
 * (records.h), and nothing after them. fn (NULL: only check) gets each
 * version and note, k and v pointing into p; a non-zero return stops the
 * reading and is returned. 0, -OFS_ECORRUPT, or fn's code.
 */
typedef int (*changelog_note_fn)(uint64_t version, const struct rec_note *n, void *arg);
int changelog_decode(const uint8_t *p, size_t n, uint64_t since, uint64_t upto,
		     changelog_note_fn fn, void *arg);

/*
 * Replay notes encoded by changelog_encode (untrusted bytes) onto oid's
 * key-value part: they must be exactly versions since+1..upto, in order,
 * each key 1..OFS_MAX_KEY bytes, each value at most OFS_MAX_VALUE. The
 * copy's own notes are forgotten and the replayed ones noted instead.
 * -OFS_ECORRUPT when the encoding is not that; a kv error otherwise.
 */
int changelog_apply(struct kv_txn *t, struct ofs_oid oid, uint64_t since, uint64_t upto,
		    const uint8_t *p, size_t n);

#endif
