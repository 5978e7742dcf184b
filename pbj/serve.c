/* serve.c - the scheduler's loop (see serve.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pbj/catchup.h"
#include "pbj/serve.h"

#define LEASE_TTL_MS 10000
#define IDLE_MS 500                  /* a round with no job to run */

struct serve_ctx {
	struct pbj_db *db;
	const struct pbj_serve_opts *o;
	struct pbj_catchup *cu;
};

/* What the loop does besides running a job: also while it runs one. */
static void between(struct serve_ctx *sc)
{
	if (sc->o->between)
		sc->o->between(sc->db, sc->o->arg);
	pbj_catchup_poll(sc->db, sc->o->run.cluster, sc->o->run.ncluster, sc->cu);
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

	if (j->type == PBJ_TYPE_CATCHUP)
		return 0;                    /* recorded, not run */
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

int pbj_serve(struct pbj_db *db, const struct pbj_serve_opts *o)
{
	struct serve_ctx sc = { .db = db, .o = o, .cu = calloc(1, sizeof(struct pbj_catchup)) };
	struct pbj_runner_opts run = o->run;
	struct pbj_job *j = malloc(sizeof(*j));
	int rc = 0;

	if (!j || !sc.cu) {
		free(j);
		free(sc.cu);
		return -ENOMEM;
	}
	run.lease_holder = o->holder;
	run.progress = on_progress;
	run.arg = &sc;
	while (!(o->run.stop && *o->run.stop)) {
		int64_t id;
		bool still = false;
		between(&sc);
		rc = next_job(db, j, &id);
		if (rc)
			break;
		if (id) {
			rc = pbj_run(db, id, &run);
			if (rc == -EINTR) {
				rc = 0;
				break;
			}
			if (rc == -EBUSY)
				break;
			if (rc && o->job_error)
				o->job_error(id, rc, o->arg);
			rc = 0;
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
