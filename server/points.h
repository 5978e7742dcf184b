/*
 * points.h - the forward-pointer side of a back reference (POINTS).
 *
 * Given an owner (q->oid), an object (q->child) and where the object's
 * back reference says it sits (q->offset: stripe; q->name: entry name),
 * answer whether this server's copy of the owner points at it: a
 * metafile by its stripes, a directory by its dirdata or by an entry of
 * its dirdata (asked of the dirdata's servers, through rep, when not
 * local and not forwarded), a dirdata by its entry.
 */
#ifndef OFS_POINTS_H
#define OFS_POINTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/proto.h"
#include "server/replica.h"
#include "server/store.h"

/* The owner does not point at it; points at it where its back reference
 * says; points at it under another stripe or entry name; is still being
 * built (a metafile or directory whose layout is not set yet: a put or
 * mkdir in progress, or one whose client died - the caller weighs its
 * age). */
enum { POINTS_NO = 0, POINTS_YES = 1, POINTS_ELSEWHERE = 2, POINTS_BUILDING = 3 };

/* 0 and *ans, or -ENOENT when this server holds no copy of the owner, or
 * a store or transport error. */
int points_check(struct store *s, struct replicator *rep, const struct ofs_req *q,
		 bool forwarded, uint8_t *ans);

#endif
