/*
 * serve.h - the scheduler's loop (`ofs-pbj serve`, docs/design.md "Background jobs and scrub").
 *
 * One scheduler runs jobs for a job store at a time: it holds the store's
 * lease (pbj_lease_take; the caller takes it first) and renews it every
 * round. Each round it records the servers' catch-up (catchup.h), lets
 * the caller fire its schedules (`between`), and runs one job to its end
 * (runner.h): first a job a dead scheduler left running or paused - it
 * goes on from its tasks' cursors - then the queue, by priority and age.
 * While a job runs, the catch-up and the schedules are looked at after
 * each poll round, so a long job holds neither up. A run reads the server
 * table from the cluster addresses given and, after them, from the
 * servers of the catch-up's last table: servers that restarted on other
 * addresses are still found.
 *
 * Nothing here spins. A job that cannot start for good (the cluster
 * refuses this scheduler, its arguments are wrong) ends failed with the
 * reason (runner.h) and the next job runs. A run that fails for a reason
 * a later one may get past (no server answers) leaves the job as it is,
 * and the queue waits a backoff - 500 ms, doubled up to a minute, with
 * jitter - before a job is taken again; a job that runs to its end starts
 * the steps over. The schedules, the catch-up and the lease are looked
 * at every round meanwhile. A refused catch-up poll backs off on its own
 * (catchup.h).
 */
#ifndef OFS_PBJ_SERVE_H
#define OFS_PBJ_SERVE_H

#include "pbj/jobstore.h"
#include "pbj/runner.h"

struct pbj_serve_opts {
	struct pbj_runner_opts run;      /* how each job runs: cluster, stop, retries
	                                    (its lease_holder, progress and arg are
	                                    the loop's) */
	const char *holder;              /* the lease the caller took */
	void (*between)(struct pbj_db *db, void *arg);   /* each round (NULL: none) */
	void *arg;
	/* A job's run failed before it could end (NULL: none): the job is
	 * left as it was, and no job is taken for retry_ms. */
	void (*job_error)(int64_t id, int rc, int retry_ms, void *arg);
	/* A job's run ended: j is final (NULL: none). */
	void (*job_ended)(const struct pbj_job *j, void *arg);
	/* The catch-up poll was refused (NULL: none): rc why, times the polls
	 * refused in a row, retry_ms the wait before the next. */
	void (*catchup_refused)(int rc, unsigned times, int retry_ms, void *arg);
};

/* Run jobs until *o->run.stop is set (0), another scheduler holds the
 * lease (-EBUSY), or the store fails (its error). */
int pbj_serve(struct pbj_db *db, const struct pbj_serve_opts *o);

#endif
