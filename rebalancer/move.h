/*
 * move.h - the move step: give one copy of an object a new server
 * (docs/design.md, "Background jobs and scrub"). Built once, used by repair (a copy whose server
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
 *      dirdata) is rewritten: that one part or entry alone (OFS_ATTR_PART),
 *      so that parts of one owner moved at once by different servers do
 *      not undo each other's change. The owner's copies are those its
 *      newest copy in service names.
 * Steps 3 and 4 tell each copy in service directly (forwarded), every one
 * of them must take it: a copy on a server out of service cannot hold the
 * change up (the primary's write confidence would), and is itself moved
 * from the copies that took it.
 *
 * In full, with MOVE_F_DROP_SOURCE (drain, rebalance: `from` is this
 * server, whose copy goes):
 *   0. the target is noted in this server's store (durably), before
 *      anything else, so that a run interrupted anywhere is run again to
 *      the same target (unless that server left service meanwhile);
 *   1-2. as above; this server's copy is a source too;
 *   3. the object is held still (FREEZE, MOVE_HOLD_MS) on every copy in
 *      service: a change in progress finishes, a client's next change is
 *      refused with OFS_EMOVING and retried by the client. The target,
 *      fetched while the object kept changing, is compared with the
 *      others (SUMMARY) and fetched again until it is the newest;
 *   4-5. the switch (handles, then the owner's pointer; for the root
 *      directory, every server's root handle: ROOT_MOVE);
 *   6. this server's copy and the note are removed, in one transaction,
 *      still held: nobody reads the old copy once the new one serves;
 *   7. the hold is lifted (or lapses).
 * A client that still holds the old handle finds the copy gone on `from`
 * and goes on to the next copy it names, which serves the new handle.
 * Without MOVE_F_DROP_SOURCE (repair: `from` is out or gone) the source
 * copy is left where it is. Each step sets a value, so running a move
 * again after a crash finishes it: the target says its copy is good, the
 * handles are set to the same list again.
 */
#ifndef OFS_MOVE_H
#define OFS_MOVE_H

#include <stdbool.h>
#include <stddef.h>

#include "client/ofs.h"
#include "lib/proto.h"
#include "server/repair.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

enum {
	MOVE_F_DRYRUN = 1u << 0,         /* choose the target, change nothing */
	MOVE_F_DROP_SOURCE = 1u << 1,    /* from is this server: its copy goes */
};
#define MOVE_HOLD_MS 20000           /* a hold lapses after this (a mover died) */

struct move_result {
	struct ofs_sid target;           /* where the copy went */
	struct ofs_sid source;           /* the copy it was fetched from */
	uint64_t bytes;
	char detail[256];
};

/*
 * Move oid's copy away from `from`. a: the object's attributes as a copy
 * holds them (its handle, type, back reference). to: the target (NULL:
 * placement's; -EEXIST when it holds another copy of the object already,
 * -EINVAL when it is out of service); a target noted by an unfinished run
 * wins, unless it holds another copy now. flags: MOVE_F_*.
 * Returns 0 and *res, -OFS_ENOSERVERS when no server in service can take
 * it, -EIO when no copy could be fetched (res->detail says why), -EBUSY
 * while another server moves a copy of it (FREEZE: wait, run again), or
 * a transport error (-OFS_EUNREACHABLE): then run it again. When the SID
 * list, once the object is held, is not a's (another move ran since a was
 * read), the move reads this server's copy again and runs with that; a
 * copy from `from` that another run moved meanwhile is done (0).
 */
int move_copy(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
	      const struct ofs_attr *a, struct ofs_sid from, const struct ofs_sid *to, unsigned flags,
	      uint64_t rate, repair_pace_fn pace, void *arg, struct move_result *res);

/* GETATTR of oid from each of the n servers to; the newest answer (highest
 * version) in *a. -ENOENT when none answers with it. */
int move_getattr_newest(struct replicator *r, struct ofs_oid oid, const struct ofs_sid *to,
			size_t n, struct ofs_attr *a);

/* Step 4 alone: the pointer of a's owner (a->backref) to the object names
 * nh. -ENOENT when the owner is nowhere or does not point at it;
 * -EOPNOTSUPP for the root. */
int move_repoint_owner(struct sidtab *t, struct replicator *r, const struct ofs_attr *a,
		       const struct ofs_handle *nh);

/* Would placement, over the servers in service now, put one of an object's
 * `copies` copies on sid? (Rebalance moves the copies it would not
 * first.) */
bool move_placed_on(struct sidtab *t, struct ofs_oid oid, unsigned copies, struct ofs_sid sid);

/* Does moving a's copy from `from` to `to` keep its failure-domain spread
 * (as many distinct racks among its copies as before, or more)? */
bool move_keeps_spread(struct sidtab *t, const struct ofs_attr *a, struct ofs_sid from,
		       struct ofs_sid to);


#endif
