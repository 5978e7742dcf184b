/*
 * mailbox.h - records one server's task sends to another server's task
 * of the same job (OFS_OP_JOIN), held here until that task takes them.
 *
 * The namespace check is a join across servers (scrubber/scrub_join.c):
 * each server's task streams records to the others - copies' summaries to
 * the copy that compares them, forward pointers to the child's primary -
 * and each reads what it was sent. The tasks of one job start at
 * different moments, so what arrives before the receiver's task runs is
 * kept: per job, per sender, per channel (OFS_JOIN_CHANNELS), as the
 * sender's bytes. The mailbox does not read the records; their reader
 * checks each one (they come from the network).
 *
 * A sender's records are believed only whole: each run of a sender's task
 * has an epoch, and a channel ends with the count of records the sender
 * put on it. A sender seen under a second epoch, one whose end count
 * differs from what arrived, or one a record of which was refused (the
 * mailbox full) is marked broken, and its records are dropped: the reader
 * then checks what that sender would have told it the slow way.
 *
 * Memory is bounded (max_bytes over all jobs; a put beyond it is refused
 * with -ENOSPC), and a job nobody has touched for MAILBOX_TTL_S is
 * dropped (a sender whose receiver's task already ended, or never ran).
 */
#ifndef OFS_MAILBOX_H
#define OFS_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"
#include "lib/proto.h"

#define MAILBOX_TTL_S 600
#define MAILBOX_MAX_PEERS 256    /* senders per job */

struct mailbox;

/* What a job's sender has put, as mailbox_peers reports it. */
struct mailbox_peer {
	struct ofs_sid from;
	uint64_t epoch;
	bool broken;                   /* not to be believed (see above) */
	uint32_t ended;                /* bit c: channel c has ended */
	uint64_t count[OFS_JOIN_CHANNELS];   /* records put (taken ones too) */
	uint64_t seq;                  /* the mailbox's put counter at its last put */
};

int mailbox_open(size_t max_bytes, struct mailbox **out);
void mailbox_close(struct mailbox *mb);   /* NULL: no-op */

/*
 * Records (len bytes, a whole number of reclen-byte records) from sender
 * `from` (its task's run `epoch`) on channel `channel` of job; with end,
 * the channel's end instead, end_count the records sent on it in all.
 * -EINVAL: a record length other than the channel's; -ENOSPC: the
 * mailbox is full (the sender is marked broken); -ENOMEM. A broken
 * sender's puts are taken and dropped (0).
 */
int mailbox_put(struct mailbox *mb, uint64_t job, struct ofs_sid from, uint64_t epoch,
		unsigned channel, uint32_t reclen, const uint8_t *recs, size_t len, bool end,
		uint64_t end_count);

/* The job's senders so far (up to max into out; *n: how many), and the
 * mailbox's put counter (it grows with every put of any job): a reader
 * waiting for more compares it. */
int mailbox_peers(struct mailbox *mb, uint64_t job, struct mailbox_peer *out, size_t max,
		  size_t *n, uint64_t *seq);

/* Wait up to ms for a put after seq (any job). */
void mailbox_wait(struct mailbox *mb, uint64_t seq, long ms);

/* Move the records sender `from` has put on channel (since the last take)
 * to the caller: *recs malloc'd (NULL when none), *len bytes, *reclen. */
int mailbox_take(struct mailbox *mb, uint64_t job, struct ofs_sid from, unsigned channel,
		 uint8_t **recs, size_t *len, uint32_t *reclen);

/* Forget the job (its task ended). */
void mailbox_drop(struct mailbox *mb, uint64_t job);

/* Bytes held over all jobs (tests). */
size_t mailbox_bytes(struct mailbox *mb);

#endif
