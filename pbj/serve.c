/* serve.c - the scheduler's loop (see serve.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/backoff.h"
#include "pbj/catchup.h"
#include "pbj/jobtype.h"
#include "pbj/serve.h"

#define LEASE_TTL_MS 10000
#define IDLE_MS 500                  /* a round with no job to run */
#define HOLD_FIRST_MS 500            /* a run that failed: the queue waits this, */
#define HOLD_CAP_MS 60000            /* doubled up to this, with jitter */

struct serve_ctx {
	struct pbj_db *db;
	const struct pbj_serve_opts *o;
	struct pbj_catchup *cu;
};

/* What the loop does besides running a job: also while it runs one. */
static void between(struct serve_ctx *sc)
{
	int rc;

	if (sc->o->between)
		sc->o->between(sc->db, sc->o->arg);
	rc = pbj_catchup_poll(sc->db, sc->o->run.cluster, sc->o->run.ncluster, sc->cu);
	if (rc && sc->o->catchup_refused)
		sc->o->catchup_refused(rc, sc->cu->refused, sc->cu->retry_ms, sc->o->arg);
}

static void on_progress(const struct pbj_job *j, const struct pbj_sum *s, void *arg)
{
	(void)j;
	(void)s;
	between(arg);
}

static int pick_oldest(const struct pbj_job *j, void *arg)
{
	int64_t *id = arg;

	if (!pbj_jobtype(j->type) || !pbj_jobtype(j->type)->kind)
		return 0;                    /* recorded (a catch-up), not run */
	if (*id == 0 || j->id < *id)
		*id = j->id;
	return 0;
}

/* The job to run next: 0 in *id when none. */
static int next_job(struct pbj_db *db, struct pbj_job *j, int64_t *id)
{
	int rc;

	*id = 0;
	/* Jobs a dead scheduler left running or paused first (they go on
	 * from their cursors), then the queue. */
	rc = pbj_job_list(db, PBJ_RUNNING, pick_oldest, id);
	if (!rc && !*id)
		rc = pbj_job_list(db, PBJ_PAUSED, pick_oldest, id);
	if (!rc && !*id) {
		rc = pbj_job_next(db, j);
		if (rc == 0)
			*id = j->id;
		else if (rc == -ENOENT)
			rc = 0;
	}
	return rc;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The addresses a run reads the server table from: the cluster's given,
 * then the servers of the catch-up's last table (servers that restart
 * elsewhere leave the given ones behind). addrs holds room for both. */
static size_t run_addresses(const struct serve_ctx *sc, const char **addrs)
{
	const struct pbj_runner_opts *run = &sc->o->run;
	size_t n = 0;

	for (size_t i = 0; i < run->ncluster; i++)
		addrs[n++] = run->cluster[i];
	for (size_t k = 0; k < sc->cu->nknown; k++) {
		bool dup = false;
		for (size_t i = 0; i < run->ncluster && !dup; i++)
			dup = strcmp(run->cluster[i], sc->cu->known[k]) == 0;
		if (!dup)
			addrs[n++] = sc->cu->known[k];
	}
	return n;
}

/* Run job id. 0 to go on (its run ended, or failed and the queue holds
 * until *hold_until), or why the loop stops (-EINTR: stopped, as 0 to the
 * caller; -EBUSY: the lease lost). */
static int run_one(struct serve_ctx *sc, struct pbj_runner_opts *run, int64_t id,
		   struct backoff *bo, int64_t *hold_until, struct pbj_job *j)
{
	const struct pbj_serve_opts *o = sc->o;
	const char **addrs = malloc((o->run.ncluster + PBJ_CATCHUP_KNOWN) * sizeof(*addrs));
	int rc;

	if (!addrs)
		return -ENOMEM;
	run->cluster = addrs;
	run->ncluster = run_addresses(sc, addrs);
	rc = pbj_run(sc->db, id, run);
	free(addrs);
	run->cluster = o->run.cluster;
	run->ncluster = o->run.ncluster;

	if (rc == -EINTR || rc == -EBUSY)
		return rc;
	if (rc) {
		/* Not started, for a reason a later run may get past (the
		 * cluster unreachable, the store busy): the job stays as it is
		 * and the queue waits, longer each time, so that the loop does
		 * not take it again at once. */
		int wait = backoff_next(bo);
		*hold_until = now_ms() + wait;
		if (o->job_error)
			o->job_error(id, rc, wait, o->arg);
		return 0;
	}
	backoff_reset(bo);
	if (o->job_ended && pbj_job_get(sc->db, id, j) == 0 && pbj_state_final(j->state))
		o->job_ended(j, o->arg);
	return 0;
}

int pbj_serve(struct pbj_db *db, const struct pbj_serve_opts *o)
{
	struct serve_ctx sc = { .db = db, .o = o, .cu = malloc(sizeof(struct pbj_catchup)) };
	struct pbj_runner_opts run = o->run;
	struct pbj_job *j = malloc(sizeof(*j));
	struct backoff bo;
	int64_t hold_until = 0;
	int rc = 0;

	if (!j || !sc.cu) {
		free(j);
		free(sc.cu);
		return -ENOMEM;
	}
	pbj_catchup_init(sc.cu);
	backoff_init(&bo, HOLD_FIRST_MS, HOLD_CAP_MS);
	run.lease_holder = o->holder;
	run.progress = on_progress;
	run.arg = &sc;
	while (!(o->run.stop && *o->run.stop)) {
		int64_t id = 0;
		bool still = false;
		between(&sc);
		if (now_ms() >= hold_until) {
			rc = next_job(db, j, &id);
			if (rc)
				break;
		}
		if (id) {
			rc = run_one(&sc, &run, id, &bo, &hold_until, j);
			if (rc == -EINTR) {
				rc = 0;
				break;
			}
			if (rc)
				break;
			continue;
		}
		rc = pbj_lease_take(db, o->holder, LEASE_TTL_MS, &still, NULL);
		if (rc)
			break;
		if (!still) {
			rc = -EBUSY;
			break;
		}
		struct timespec nap = { .tv_sec = 0, .tv_nsec = IDLE_MS * 1000000L };
		nanosleep(&nap, NULL);
	}
	free(j);
	free(sc.cu);
	return rc;
}
