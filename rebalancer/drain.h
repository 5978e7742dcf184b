/*
 * drain.h - emptying a server so that it can be stopped, and telling when
 * stopping it loses nothing (docs/design.md "Background jobs and scrub", `ofs-pbj ok-to-stop`).
 *
 * The drain itself is a task (scrubber/scrub.c runs it next to the data,
 * object by object, through move_copy with MOVE_F_DROP_SOURCE); what it
 * needs from here is the check below.
 */
#ifndef OFS_DRAIN_H
#define OFS_DRAIN_H

#include <stdint.h>

#include "lib/proto.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

/*
 * STOP_CHECK: walk this server's copies; for each, count the good copies
 * elsewhere - a sibling in service that answers now and holds the object
 * at this copy's version or newer, not behind, its record readable, and
 * of which this server holds no stale record. An object whose good copies
 * elsewhere are fewer than its write confidence (or its copy count when
 * that is smaller) is short: counted, and `max` of them named in *out,
 * those with the most copies missing first.
 * A copy whose own record does not decode is not counted (stopping its
 * server loses nothing that is not lost).
 */
int drain_stop_check(struct store *s, struct sidtab *t, struct replicator *r, uint32_t max,
		     struct ofs_stop_reply *out);

/* Register STOP_CHECK's handler in the server's operation table (ops.h);
 * once, before the server serves. 0 or -EINVAL. */
int drain_register_ops(void);

#endif
