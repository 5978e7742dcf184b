/*
 * scrub.h - background tasks inside ofs-server: scrub (DESIGN.md section 8).
 *
 * The job scheduler (ofs-pbj) starts a task on every server that holds
 * copies (TASK_START), polls it for progress and findings (TASK_POLL) and
 * pauses, resumes or cancels it (TASK_CTL). A scrub task walks this
 * server's objects in OID order from a cursor and, for each:
 *   - a record that does not decode: record_corrupt;
 *   - a copy known to have missed changes (store_behind): stale_replica;
 *   - a dfile: every chunk re-read and checked against its digest
 *     (checksum_mismatch, naming the chunk), the stream's length against
 *     the recorded size (size_mismatch), a missing byte-stream file
 *     (missing_replica), an I/O error (unreadable);
 *   - with sibling copies: their summaries (version, size, digest of the
 *     recorded content; a few dozen bytes each, OFS_OP_SUMMARY): a sibling
 *     with a newer version makes this copy stale_replica; a sibling that
 *     does not hold the object is missing_replica; same version, different
 *     content is replica_conflict. A problem between copies is reported by
 *     one server only: the copy at fault reports itself when it can see
 *     it (stale), otherwise the first copy in the handle that answers.
 * Reads are paced to the task's rate (bytes per second; the server's
 * default when the job gives none).
 *
 * Repair mode (OFS_TASK_F_REPAIR, repair.h): the task first repairs the
 * copies known to have missed writes (this server's behind marks, then
 * the stale records it holds), then walks as a scrub does; an object's
 * findings wait until the object is repaired (one fetch for a bad copy
 * here; a fetch on the sibling for a copy missing there) and are then
 * queued with what was done (repair, source, action). With
 * OFS_TASK_F_DRYRUN nothing changes and the actions say what would be
 * done. Each repair takes one unit of the task's budget (START, raised by
 * POLL); a task without budget waits (status: starved) until the
 * scheduler grants more or pauses the job. Structure findings are mended
 * through libofs, as a client of this server: a backref_mismatch's back
 * reference is rewritten from the forward pointer; a dangling directory
 * entry is removed (a dangling stripe or dirdata is left: its data is
 * lost); an orphan older than the orphan grace is moved to /lost+found
 * under a name that says what and where it was (a dfile or dirdata gets a
 * new one-part owner there).
 *
 * Findings wait in the task until the scheduler acknowledges them (it
 * stores them, then acks their sequence numbers); the task stops reading
 * while OFS_MAX_TASK_FINDINGS are unacknowledged, so none is lost and the
 * cursor a poll reports never runs ahead of the findings it returned.
 */
#ifndef OFS_SCRUB_H
#define OFS_SCRUB_H

#include <stdint.h>

#include "lib/proto.h"
#include "lib/wire.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "server/store.h"

#define SCRUB_DEFAULT_RATE ((uint64_t)64 << 20)   /* bytes/s per server */
#define SCRUB_MAX_TASKS 2                        /* tasks running at once */
#define SCRUB_ORPHAN_GRACE_S 600                 /* orphans younger are left */

struct scrubber;

int scrubber_open(struct store *s, struct sidtab *t, struct replicator *r,
		  uint64_t default_rate, struct scrubber **out);
/* Quarantined copies older than this many seconds are removed after each
 * repair task (and at start by the server). Default 7 days. */
void scrubber_set_quarantine(struct scrubber *sc, long long max_age_s);
/* Repair moves an orphan to /lost+found only when it has not changed for
 * this many seconds (an object caught between its creation and its entry
 * looks like an orphan). Default SCRUB_ORPHAN_GRACE_S. */
void scrubber_set_orphan_grace(struct scrubber *sc, long long seconds);
/* The server's catch-up (recover.h): while it has copies to catch up,
 * every task gives it the disks first - each batch waits up to
 * SCRUB_YIELD_MS for it to finish. NULL: none. */
struct recover;
#define SCRUB_YIELD_MS 2000
void scrubber_set_recover(struct scrubber *sc, struct recover *rv);
/* Cancel every task, wait for them, free everything. NULL: no-op. */
void scrubber_close(struct scrubber *sc);

/* Start (or, when it failed or was cancelled, restart) the task of a job.
 * 0 when it runs (also when it already did); -EBUSY when SCRUB_MAX_TASKS
 * run already (try later). */
int scrubber_start(struct scrubber *sc, const struct ofs_task_req *q);
/* The task's status and its unacknowledged findings (those up to ack are
 * dropped first), encoded as a TASK_POLL reply. -ENOENT: no such task. */
int scrubber_poll(struct scrubber *sc, uint64_t job, uint64_t ack, uint64_t budget,
		  struct wbuf *reply);
/* Pause, resume, cancel, or forget (cancel and drop) a task. -ENOENT. */
int scrubber_ctl(struct scrubber *sc, uint64_t job, uint8_t action);

#endif
