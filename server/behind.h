/*
 * behind.h - telling a copy that it fell behind.
 *
 * When a primary cannot reach a copy, it records the copy as stale (with
 * why) under its own KV_STALE, for repair. But the copy's server comes
 * back not knowing that it missed changes, and would serve its old bytes
 * or entries. So:
 *
 *  - on contact (every successful gossip exchange), a server tells each
 *    peer, with OFS_OP_BEHIND, about every stale record that names it and
 *    that it has not told it of since it started (behind_tell);
 *  - on start, before it serves, a server asks every peer in its table for
 *    the stale records that name it (OFS_OP_STALE_FOR) and marks those
 *    copies behind (behind_catch_up), closing the window until the peers'
 *    next gossip round.
 *
 * A copy marked behind (store_behind_mark) answers client reads with
 * OFS_EBEHIND, so clients read another copy, until repair replaces it.
 */
#ifndef OFS_BEHIND_H
#define OFS_BEHIND_H

#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

struct behind;

int behind_open(struct store *s, struct replicator *r, struct behind **out);
/* behind_close(NULL) is a no-op. */
void behind_close(struct behind *b);

/*
 * Tell sid about the stale records that name it and that were not told
 * yet (by this process). Returns the number told, or a negative error
 * (the rest is tried again on the next contact). Thread-safe.
 */
int behind_tell(struct behind *b, struct ofs_sid sid);

/*
 * Ask every other server in t for the stale records naming this server
 * and mark those copies behind. A peer that does not answer within
 * timeout_ms is skipped (it will tell on contact). Returns the number of
 * copies marked, or a negative store error.
 */
int behind_catch_up(struct store *s, struct sidtab *t, int timeout_ms);

#endif
