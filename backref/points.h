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
#ifndef OFS_BACKREF_POINTS_H
#define OFS_BACKREF_POINTS_H

#include <stdbool.h>
#include <stdint.h>

#include "backref/rules.h"
#include "lib/proto.h"
#include "server/replica.h"
#include "store/store.h"

/* 0 and *ans (POINTS_*, backref/rules.h), or -ENOENT when this server
 * holds no copy of the owner, or a store or transport error. */
int points_check(struct store *s, struct replicator *rep, const struct ofs_req *q,
		 bool forwarded, uint8_t *ans);
/* Register POINTS's handler in the server's operation table (ops.h);
 * once, before the server serves. 0 or -EINVAL. */
int points_register_ops(void);

#endif
