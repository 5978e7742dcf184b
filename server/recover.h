/*
 * recover.h - catching up, by itself, the copies this server holds that
 * missed changes.
 *
 * A copy misses changes while its server is down, partitioned or crashed
 * mid-write; the primary that could not reach it records it stale, and the
 * copy learns it (behind.h) before its server serves or on the next gossip
 * contact, and is marked behind: it answers no client read and takes no
 * client change (OFS_EBEHIND: the client goes to the next copy, which acts
 * as primary).
 *
 * A recovery thread in every server brings each copy marked behind here
 * up to date from a current copy, with no job submitted, as soon as the
 * mark appears (pull by the returning server; the primary's stale record
 * is what tells it):
 *
 *  - a sibling's copy that is current (not marked behind, record decodes)
 *    at the same version and digest as this one: the mark is dropped, no
 *    bytes move (the change that was missed never reached anyone, or was
 *    applied here later);
 *  - otherwise the newest current copy is fetched and swapped in
 *    (repair_fetch, the same verified fetch as repair: every chunk
 *    verifies on the way, what arrives must match the source's digest);
 *    copies changing under the fetch are held still (FREEZE) for the
 *    retry, so a directory written without pause still catches up;
 *  - every other copy that answered lacks the object: it was removed
 *    while this server was away; the copy here is left for the scrub
 *    (an orphan) and is not counted as behind;
 *  - a sibling that does not answer or refuses this server, or a copy held
 *    still by a move: the object is tried again on the next pass; passes
 *    that leave copies waiting come 0.5 s apart, then twice that each
 *    time in a row up to 4 s (with jitter), until one makes progress or
 *    a new mark arrives;
 *  - no copy is current (every copy missed something): left marked for
 *    reconciliation by repair, counted as stuck.
 *
 * Catch-up runs ahead of every other background task: the server's scrub,
 * repair, drain and rebalance tasks hold while copies here are being
 * caught up (recover_busy; each batch waits at most TASKHOST_YIELD_MS, so a
 * catch-up waiting on a server that is down does not stop them).
 */
#ifndef OFS_RECOVER_H
#define OFS_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/wire.h"
#include "server/replica.h"
#include "server/service.h"
#include "server/sidtab.h"
#include "store/store.h"

struct recover;

/* What `ofs-pbj servers` shows (STATS). */
struct recover_status {
	uint64_t behind;             /* copies here marked behind, at the last pass */
	uint64_t stuck;              /* ... of which no copy is current */
	uint64_t caught_up;          /* copies brought up to date since start */
	uint64_t bytes;              /* bytes fetched for them */
	bool active;                 /* a pass is under way or copies are left */
};

/* Start the recovery thread; paused: it only counts the marks (for
 * STATS), and the copies wait for a repair job. -ENOMEM, -EAGAIN (no
 * thread). */
int recover_start(struct store *s, struct sidtab *t, struct replicator *r, bool paused,
		  struct recover **out);
/* Stop it (waits for the object in hand); recover_stop(NULL) is a no-op. */
void recover_stop(struct recover *rv);
/* A copy here was just marked behind: look now rather than at the next
 * tick. Thread-safe; rv may be NULL. */
void recover_kick(struct recover *rv);
/* The counts above; rv NULL: all zero. Thread-safe. */
void recover_status(struct recover *rv, struct recover_status *st);
/* True while copies here are left to catch up (other than stuck ones):
 * background tasks hold. rv may be NULL. */
bool recover_busy(struct recover *rv);

/*
 * TASK_POLL of job RECOVER_JOB: the catch-up as a task - its status
 * (running while copies are left, objects_done: caught up since start,
 * objects_total: that plus the copies left) and what it did, one finding
 * a copy (stale_replica, repaired or left), those after ack; findings up
 * to ack are forgotten. ofs-pbj serve records them as a system job.
 */
#define RECOVER_JOB 0
int recover_poll(struct recover *rv, uint64_t ack, struct wbuf *reply);

/* Wire the catch-up into the service (its hooks: a copy just marked
 * behind kicks it; STATS carries its counts) and into the task host
 * (tasks yield to it; TASK_POLL of RECOVER_JOB is its). */
struct taskhost;
void recover_attach(struct recover *rv, struct service *sv, struct taskhost *h);

/* One pass over the marks, in the caller's thread (tests): the number of
 * copies caught up, or a negative store error. */
int recover_pass(struct recover *rv);

#endif
