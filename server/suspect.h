/*
 * suspect.h - a copy a reader found bad is mended first, with no job
 * submitted (docs/design.md, "Suspects first").
 *
 * A client that read past a bad copy - a checksum that did not match, a
 * short read, a copy missing - tells the server it then read from
 * (REPORT, naming the object and the bad copy's server). That server holds
 * a good copy: it queues the suspect here, and one worker asks the bad
 * copy's server to verify its copy and, when it is bad, replace it from a
 * good one (REPAIR_FETCH, as a repair job does; the copy thrown away goes
 * to quarantine). Ahead of every background task: it is one object.
 *
 * A REPORT may come from any user, so what one can make a server spend is
 * bounded: only an object this server holds and a copy its record names
 * is queued; at most SUSPECT_MAX wait (the rest are dropped, said in the
 * log); each (object, copy) at most once per SUSPECT_AGAIN_MS; one at a
 * time, paced at the server's task rate; and a verify changes nothing when
 * the copy is good.
 */
#ifndef OFS_SERVER_SUSPECT_H
#define OFS_SERVER_SUSPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/oid.h"

#define SUSPECT_MAX 256            /* suspects waiting, at most */
#define SUSPECT_AGAIN_MS 10000     /* the same copy not again sooner */

struct store;
struct sidtab;
struct replicator;
struct suspects;

/* What the worker did, for STATS and tests. */
struct suspect_counts {
	uint64_t queued;               /* taken into the queue */
	uint64_t dropped;              /* not taken: again too soon, or full */
	uint64_t mended;               /* a bad copy replaced */
	uint64_t good;                 /* the copy verified good after all */
	uint64_t failed;               /* could not be decided or mended */
};

/* Start the worker over this server's store, table and replicator; rate
 * paces what it fetches (bytes/s, 0: unpaced). 0 or -errno. */
int suspects_start(struct store *s, struct sidtab *t, struct replicator *r, uint64_t rate,
		   struct suspects **out);

/*
 * A reader found this server's sibling bad's copy of oid bad (why: the
 * client's words, for the log). 0: queued; -EINVAL: the object is not
 * held here or bad is not one of its copies (or is this server);
 * -EALREADY: queued or mended within SUSPECT_AGAIN_MS; -ENOSPC: the queue
 * is full.
 */
int suspects_add(struct suspects *q, struct ofs_oid oid, struct ofs_sid bad, const char *why);

/* The counts so far. */
void suspects_counts(struct suspects *q, struct suspect_counts *out);

/* Stop the worker (the suspect it works on is finished first) and free. */
void suspects_stop(struct suspects *q);

#endif
