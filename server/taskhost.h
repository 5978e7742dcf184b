/*
 * taskhost.h - the host of the background tasks inside each server
 * (docs/design.md, "Background jobs and scrub").
 *
 * The job scheduler (ofs-pbj) starts a task on every server that holds
 * copies (TASK_START), polls it for progress and findings (TASK_POLL) and
 * pauses, resumes, cancels or forgets it (TASK_CTL). Each task is a
 * thread that walks this server's objects in OID order from a cursor
 * (or only the objects the job names) and hands them to its kind, a batch
 * at a time. The host owns what every kind shares:
 *   - the table of tasks (TASKHOST_MAX_RUNNING at once; TASKHOST_KEPT
 *     remembered for their last polls) and their start, poll and control;
 *   - pause and cancel, looked at between objects and wherever a kind
 *     waits (task_hold, task_throttle, task_sleep);
 *   - pacing to the task's rate (task_throttle: bytes per second, the
 *     server's default when the job gives none);
 *   - the repair budget (task_take_budget; a task without budget waits,
 *     status "starved", until the scheduler grants more or pauses it);
 *   - the findings queue: findings wait in the task until the scheduler
 *     acknowledges them (it stores them, then acks their sequence
 *     numbers); the task stops while OFS_MAX_TASK_FINDINGS are
 *     unacknowledged, so none is lost and the cursor a poll reports never
 *     runs ahead of the findings it returned;
 *   - the cursor and the counts of objects and bytes done;
 *   - giving the disks to the catch-up first (taskhost_set_yield).
 *
 * A kind (scrub, drain, rebalance) is a row of functions - {init, begin,
 * one object, end} and its own state - registered by the program that
 * wires the server (taskhost_add_kind). The host knows no kind.
 */
#ifndef OFS_TASKHOST_H
#define OFS_TASKHOST_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/backoff.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

#define TASKHOST_DEFAULT_RATE ((uint64_t)64 << 20)   /* bytes/s of a task */
#define TASKHOST_MAX_RUNNING 2     /* tasks running at once */
#define TASKHOST_KEPT 64           /* tasks remembered (finished: for their poll) */
#define TASKHOST_BATCH 1024        /* objects handed to a kind at once */
#define TASKHOST_YIELD_MS 2000     /* a batch waits this long at most for the
                                      catch-up to finish */

struct taskhost;
struct task;

/* One object of the walk: its record, as this server holds it. */
struct task_obj {
	struct ofs_oid oid;
	struct ofs_attr a;             /* (its used parts only) */
	int decode_rc;                 /* -OFS_ECORRUPT: the record does not decode */
};

/* one: stop the walk (the kind wants no more objects); end: walk again. */
#define TASK_STOP 1
#define TASK_AGAIN 1

struct task_kind {
	uint8_t kind;                  /* enum ofs_task_kind */
	const char *name;              /* "scrub": in logs and failure reasons */
	void *arg;                     /* the kind's own, for init */
	/* At TASK_START, under the host's lock: take what the kind needs
	 * from the request (it is freed after) into a new *state. */
	int (*init)(struct task *t, void *arg, const struct ofs_task_req *q, void **state);
	/* In the task's thread, before the walk (NULL: nothing). */
	int (*begin)(struct task *t, void *state);
	/* Each batch, before its objects are handed over one by one (NULL:
	 * nothing): a kind asks its questions about the batch at once. */
	void (*batch)(struct task *t, void *state, const struct task_obj *w, size_t n);
	/* One object, w = the batch's at-th. *bytes: what it read or moved.
	 * 0, TASK_STOP, or an error that fails the task (-ECANCELED: it was
	 * cancelled). */
	int (*one)(struct task *t, void *state, const struct task_obj *w, size_t at,
		   uint64_t *bytes);
	/* The cursor a poll may report when done is the last object done
	 * (NULL: done itself): a kind with findings still to settle reports
	 * less. */
	struct ofs_oid (*cursor)(void *state, struct ofs_oid done);
	/* After the walk, with its outcome rc and the last object done (NULL:
	 * rc). Returns the task's outcome: 0 done, TASK_AGAIN (only when rc
	 * was 0) to walk again from the start, or an error. Frees what a
	 * finished task need not keep. */
	int (*end)(struct task *t, void *state, int rc, struct ofs_oid last);
	/* Free the state (the task's slot is reused or the host closes). */
	void (*release)(void *state);
};

int taskhost_open(struct store *s, struct sidtab *t, struct replicator *r,
		  uint64_t default_rate, struct taskhost **out);
/* -EEXIST: that kind is registered; -ENOSPC: too many kinds. */
int taskhost_add_kind(struct taskhost *h, const struct task_kind *k);
/* busy(arg): the catch-up has copies to bring up to date; each batch
 * waits for it, up to TASKHOST_YIELD_MS (a catch-up waiting on a server
 * that is down must not stop every task). */
void taskhost_set_yield(struct taskhost *h, bool (*busy)(void *arg), void *arg);
/* A job answered by someone else: TASK_POLL of `job` calls poll (the
 * catch-up as a system job). */
void taskhost_set_system_job(struct taskhost *h, uint64_t job,
			     int (*poll)(void *arg, uint64_t ack, struct wbuf *reply), void *arg);
/* The clock the host paces and sleeps by (tests give a fake one): now()
 * in seconds, monotonic; sleep(s). NULL: the real ones. */
struct taskhost_clock {
	double (*now)(void *arg);
	void (*sleep)(void *arg, double s);
	void *arg;
};
void taskhost_set_clock(struct taskhost *h, const struct taskhost_clock *c);
/* Cancel every task, wait for them, free everything. NULL: no-op. */
void taskhost_close(struct taskhost *h);

/* Start (or, when it failed or was cancelled, restart) the task of a job.
 * 0 when it runs (also when it already did: a new budget is taken);
 * -EBUSY when TASKHOST_MAX_RUNNING run already (try later); -EINVAL: no
 * such kind here. */
int taskhost_start(struct taskhost *h, const struct ofs_task_req *q);
/* The task's status and its unacknowledged findings (those up to ack are
 * dropped first; budget more repairs granted), encoded as a TASK_POLL
 * reply. -ENOENT: no such task. */
int taskhost_poll(struct taskhost *h, uint64_t job, uint64_t ack, uint64_t budget,
		  struct wbuf *reply);
/* Pause, resume, cancel, or forget (cancel and drop) a task. -ENOENT. */
int taskhost_ctl(struct taskhost *h, uint64_t job, uint8_t action);

/* ---- for the kinds, inside a task ------------------------------------- */

struct store *task_store(const struct task *t);
struct sidtab *task_sidtab(const struct task *t);
struct replicator *task_replicator(const struct task *t);
uint64_t task_job(const struct task *t);
uint32_t task_flags(const struct task *t);         /* OFS_TASK_F_* */
uint64_t task_rate(const struct task *t);          /* bytes/s */
/* The objects the job names, sorted (n = 0: every object). */
const struct ofs_oid *task_only(const struct task *t, uint32_t *n);
bool task_names(const struct task *t, struct ofs_oid oid);  /* every one when none named */
/* The cursor before the object being handed over (zero: the walk's start). */
struct ofs_oid task_prev(const struct task *t);
/* The object being worked on, for a failure's reason. */
void task_at(struct task *t, struct ofs_oid oid);
/* Wait while paused or while the findings queue is full; -ECANCELED
 * when the task is cancelled. */
int task_hold(struct task *t);
/* Pace: returns when `bytes` more keep the task at its rate. -ECANCELED. */
int task_throttle(struct task *t, uint64_t bytes);
/* Sleep ms (looking at cancel every 100 ms); -ECANCELED. */
int task_sleep(struct task *t, long ms);
/* A kind's retry of a transient error (an object another move holds, a
 * server away): task_sleep the next wait of bo (lib/backoff.h). 0, or
 * -ECANCELED; -ETIMEDOUT without sleeping once bo has waited budget_ms in
 * all (the caller gives up and reports the last error). */
int task_backoff(struct task *t, struct backoff *bo, long budget_ms);
double task_now(const struct task *t);
/* Queue a finding (its seq is set); waits while the queue is full. */
int task_enqueue(struct task *t, const struct ofs_task_finding *f);
/* Wait until the budget allows one more repair (a dry run needs none). */
int task_take_budget(struct task *t);
void task_count_repair(struct task *t);
/* The totals a poll shows (UINT64_MAX: leave that one). */
void task_set_totals(struct task *t, uint64_t objects, uint64_t bytes);
void task_set_cursor(struct task *t, struct ofs_oid cursor);
/* Why the task fails, when its outcome is an error (else "<kind>
 * stopped at <object>: <error>"). */
void task_set_reason(struct task *t, const char *why);

#endif
