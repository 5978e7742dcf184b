/*
 * scrub.h - the scrub task (docs/design.md, "Background jobs and scrub"), a kind of the server's
 * task host (server/taskhost.h: the host walks this server's objects in
 * OID order from a cursor, paces, pauses, cancels and queues findings).
 * For each object the scrub:
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
 * default when the job gives none). A finding that may be a change
 * caught half done (a write on its way to the copies, a create between
 * its objects and its entry) is reported only when a second look a
 * second later sees it again.
 *
 * Repair mode (OFS_TASK_F_REPAIR, server/repair.h): the task first repairs the
 * copies known to have missed writes (this server's behind marks, then
 * the stale records it holds), then walks as a scrub does; an object's
 * findings wait until the object is repaired (one fetch for a bad copy
 * here; a fetch on the sibling for a copy missing there) and are then
 * queued with what was done (repair, source, action). With
 * OFS_TASK_F_DRYRUN nothing changes and the actions say what would be
 * done. Each repair takes one unit of the task's budget
 * (task_take_budget). Structure findings are mended through libofs, as a
 * client of this server: a backref_mismatch's back reference is
 * rewritten from the forward pointer; a dangling directory
 * entry is removed (a dangling stripe or dirdata is left: its data is
 * lost); an orphan older than the orphan grace is moved to /lost+found
 * under a name that says what and where it was (a dfile or dirdata gets a
 * new one-part owner there).
 */
#ifndef OFS_SCRUB_H
#define OFS_SCRUB_H

#include "server/replica.h"
#include "server/sidtab.h"
#include "server/taskhost.h"
#include "store/store.h"

#define SCRUB_ORPHAN_GRACE_S 600                 /* orphans younger are left */
#define SCRUB_SETTLE_MS 1000                     /* a suspect's second look */
#define SCRUB_JOIN_MAILBOX_MAX ((size_t)1 << 30) /* the join's records held */

struct scrubber;

int scrubber_open(struct store *s, struct sidtab *t, struct replicator *r,
		  struct scrubber **out);
/* Quarantined copies older than this many seconds are removed after each
 * repair task (and at start by the server). Default 7 days. */
void scrubber_set_quarantine(struct scrubber *sc, long long max_age_s);
/* Repair moves an orphan to /lost+found only when it has not changed for
 * this many seconds (an object caught between its creation and its entry
 * looks like an orphan). Default SCRUB_ORPHAN_GRACE_S. */
void scrubber_set_orphan_grace(struct scrubber *sc, long long seconds);
/* A finding that may be a client's change caught half done is reported
 * only when a second look this many milliseconds later sees it again
 * (see scrub_impl.h). Default SCRUB_SETTLE_MS: every step of a client's
 * change follows the one before in milliseconds; shorter finishes a
 * check of a quiet cluster sooner. */
void scrubber_set_settle(struct scrubber *sc, long ms);
/* A metadata-only check of every object from the start is a join
 * (scrubber/scrub_join.c) through mb, the mailbox the server's JOIN
 * operation fills (server/mailbox.h); NULL (the default): every object is
 * checked with questions of its own. */
struct mailbox;
void scrubber_set_mailbox(struct scrubber *sc, struct mailbox *mb);
/* Register the scrub kind (OFS_TASK_SCRUB) with the host; sc must outlive
 * the host's tasks (close the host first). */
int scrubber_add_kind(struct scrubber *sc, struct taskhost *h);
/* NULL: no-op. */
void scrubber_close(struct scrubber *sc);

#endif
