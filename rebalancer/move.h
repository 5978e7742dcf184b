/*
 * move.h - the move step: give one copy of an object a new server
 * (DESIGN.md section 8). Built once, used by repair (a copy whose server
 * is out of service or gone) and, later, by rebalance and drain.
 *
 * A move of oid's copy from server `from` to a new server:
 *   1. the target: the best server by placement among those in service
 *      that hold no copy, in a rack no other copy uses when there is one;
 *   2. the target fetches a verified copy from the other copies and swaps
 *      it in (repair_fetch_at; a target that holds a good copy already
 *      answers so);
 *   3. every copy kept, and the new one, gets the new handle (the SID list
 *      with `from` replaced by the target: the siblings' view of each
 *      other);
 *   4. the owner's forward pointer (found through the back reference: a
 *      metafile's stripe, a directory's dirdata, the entry in the parent's
 *      dirdata) is rewritten.
 * Steps 3 and 4 tell each copy in service directly (forwarded), every one
 * of them must take it: a copy on a server out of service cannot hold the
 * change up (the primary's write confidence would), and is itself moved
 * from the copies that took it.
 * The source copy is left where it is (repair: its server is out or gone;
 * drain removes it once the move is recorded). Each step sets a value, so
 * running a move again after a crash finishes it: the target says its copy
 * is good, the handles are set to the same list again.
 */
#ifndef OFS_MOVE_H
#define OFS_MOVE_H

#include <stdbool.h>
#include <stddef.h>

#include "ofs.h"
#include "proto.h"
#include "repair.h"
#include "replica.h"
#include "sidtab.h"
#include "store.h"

struct move_result {
	struct ofs_sid target;           /* where the copy went */
	struct ofs_sid source;           /* the copy it was fetched from */
	uint64_t bytes;
	char detail[256];
};

/*
 * Move oid's copy away from `from`. a: the object's attributes as a copy
 * holds them (its handle, type, back reference). dry_run chooses the
 * target and changes nothing.
 * Returns 0 and *res, -OFS_ENOSERVERS when no server in service can take
 * it, -OFS_ECONFLICT/-ENODATA style errors from the fetch as negative
 * codes, or a transport error (-OFS_EUNREACHABLE).
 */
int move_copy(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid, const struct ofs_attr *a, struct ofs_sid from, bool dry_run,
	      uint64_t rate, repair_pace_fn pace, void *arg, struct move_result *res);

#endif
