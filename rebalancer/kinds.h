/*
 * kinds.h - the drain and rebalance tasks (docs/design.md, "Background jobs and scrub"), two kinds
 * of the server's task host (server/taskhost.h).
 *
 * Drain (OFS_TASK_DRAIN): every copy on this server is moved to where
 * placement says and dropped here (move_copy with MOVE_F_DROP_SOURCE).
 * What cannot move is reported and counted; the task then fails at its
 * end and the server stays draining. A copy whose record does not decode,
 * or that its own handle does not name, is left (a scrub with --repair
 * mends it). A server or copy that does not answer is waited for a while;
 * then the task fails and the scheduler runs it again from its cursor.
 * With nothing left unmoved, the walk is made again (up to 10 times)
 * while copies remain: a client that had not yet heard the server is
 * draining may have put one behind the walk.
 *
 * Rebalance (OFS_TASK_REBALANCE): file data moves to the servers the plan
 * names, as many bytes to each as it says (OFS_TASK_MAX_ALLOC targets); a
 * copy goes to a target with room for it, that holds no copy of it, and
 * where the copies keep their spread over racks. First the copies
 * placement wants elsewhere, then, while bytes are left to send, any.
 *
 * Both pace their moves to the task's rate and hold while paused; with
 * OFS_TASK_F_DRYRUN they only say what they would move (finding `move`).
 */
#ifndef OFS_REBALANCER_KINDS_H
#define OFS_REBALANCER_KINDS_H

#include "server/taskhost.h"

/* Register both kinds with the host; 0 or taskhost_add_kind's error. */
int rebalancer_add_kinds(struct taskhost *h);

#endif
