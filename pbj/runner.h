/*
 * runner.h - running one job to its end (docs/design.md, "Background jobs and scrub").
 *
 * The runner is what the scheduler (`ofs-pbj serve`) does for each job,
 * and what `ofs-pbj submit --wait` does in its own process when no
 * scheduler runs. It splits the job into one task per server (the servers
 * in service that the job names, or all), starts each task on its server
 * from the task's stored cursor, and polls every task five times a second:
 * progress, cursor and findings go to the job store in one transaction,
 * and only then are the findings acknowledged to the server, so a crash
 * of either side loses none and repeats at most the objects after the
 * last stored cursor. It follows the job's state in the store, so pause,
 * resume and cancel given by any ofs-pbj process reach every server
 * within a poll. A task whose server does not answer, or that failed on
 * its server, is started again from its cursor after a backoff (200 ms,
 * doubled up to 4 s, with jitter); after PBJ_MAX_RETRIES failed attempts
 * the task, and the job, end failed with the reason. A task refused
 * (permission denied, a certificate not trusted, expired or revoked) ends
 * failed at once: no attempt would be let in.
 */
#ifndef OFS_PBJ_RUNNER_H
#define OFS_PBJ_RUNNER_H

#include <signal.h>
#include <stddef.h>

#include "pbj/jobstore.h"

#define PBJ_POLL_MS 200          /* between rounds of a job that runs long */
#define PBJ_POLL_FIRST_MS 10     /* the first rounds: doubled up to PBJ_POLL_MS,
                                    so that a short job ends when it is done */
#define PBJ_DEFAULT_THRESHOLD 10   /* rebalance: points from the mean */
#define PBJ_MAX_RETRIES 20           /* about a minute of a server being away */

/* Totals over a job's tasks, for progress lines. */
struct pbj_sum {
	uint64_t objects_done, objects_total, bytes_done, bytes_total;
	uint64_t findings;
	uint64_t repaired;               /* findings repaired from another copy */
	int tasks, tasks_done;
};

struct pbj_runner_opts {
	const char *const *cluster;      /* addresses to learn the server table from */
	size_t ncluster;
	/* Called after each poll round (may be NULL). */
	void (*progress)(const struct pbj_job *j, const struct pbj_sum *sum, void *arg);
	void *arg;
	volatile sig_atomic_t *stop;     /* set by a signal: leave the job as it is */
	const char *lease_holder;        /* renew this scheduler lease each round (NULL: none) */
	bool return_on_cap;              /* return (0) when the job pauses at its repair
	                                    cap, instead of waiting for a resume */
	int max_retries;                 /* attempts a task gets before its job
	                                    fails; 0: PBJ_MAX_RETRIES */
};

/*
 * Set server sid's state on the server itself (at addr) and then on every
 * other server of the table (a server speaks for its own entry only:
 * none takes an operator's change from another's gossip). On the server itself first: a
 * server restarted before gossip brought it an operator's change would
 * announce its old state anew (entries are versioned by the clock) and
 * undo it; and where the operator looks, so that `servers` says so before
 * gossip has spread it. 0, or why the server itself did not take it.
 */
int pbj_server_state(const struct pbj_runner_opts *o, const char *addr, struct ofs_sid sid,
		     uint8_t state);

struct plan;
struct plan_server;
/*
 * The rebalance plan (plan.h) for the cluster as it is now: the table from
 * o->cluster, each in-service server's usage (STATS; one that does not
 * answer is left out), threshold pct points. *out and *nout (when out is not
 * NULL) receive the servers as planned, owned by the caller. 0 or an error.
 */
int pbj_plan_now(const struct pbj_runner_opts *o, double pct, struct plan *p,
		 struct plan_server **out, size_t *nout);

/* The reason a job paused at its repair cap starts with this. */
#define PBJ_CAP_REASON "repair cap reached"
/* The reason a scrub or repair that succeeded keeps when some of its
 * servers did not answer through every attempt starts with this: it
 * checked what it reached, named the servers it did not, and `wait`
 * exits 1 (a job whose every server was silent fails). */
#define PBJ_SKIPPED_REASON "not every server answered"

/*
 * Run job id until it ends (succeeded, failed, cancelled) or *stop is
 * set. Returns 0 (read the job for its outcome), -EINTR when stopped, or a
 * negative error of the store or of the cluster that a later run may get
 * past (unreachable at start): the job is left as it was, and the caller
 * tries again after a backoff. A job that cannot start for a reason no
 * later run undoes - the cluster refuses who runs it (conn_is_refusal), a
 * path it names is not there, its arguments do not decode - ends failed
 * with the reason at once, and pbj_run returns 0.
 */
int pbj_run(struct pbj_db *db, int64_t id, const struct pbj_runner_opts *o);

/* Sum a job's tasks and count its findings. */
int pbj_summarize(struct pbj_db *db, int64_t id, struct pbj_sum *sum);

#endif
