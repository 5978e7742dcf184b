/*
 * test_runner.c - the job runner (pbj/runner.h) against a fake server: a
 * thread on 127.0.0.1:0 that speaks the real frames and answers SERVERS
 * (a table of itself) and TASK_START/POLL/CTL from a scripted task - so
 * what the runner sends and stores is seen exactly:
 *   - a job runs to its end: its START says the job's kind, flags and
 *     rate; every finding is stored once, and acknowledged only after;
 *   - a task that fails is started again from its stored cursor, with
 *     its counts going on from there; one that keeps failing fails the
 *     job with the server's reason, after the retries allowed;
 *   - a server that no longer knows the task (it restarted) gets it
 *     again, from the cursor;
 *   - a repair job stops at its cap: paused, with the cap's reason;
 *   - a job cancelled in the store is forgotten on the server;
 *   - the scheduler's loop (pbj/serve.h) runs a job a dead scheduler left
 *     running first, then the queue by priority, never a catch-up job,
 *     and gives up when another scheduler holds the lease;
 *   - a refusal ends the attempt: a job the cluster refuses at its start,
 *     and a task its server refuses, fail at once with the reason, and
 *     the refusing server is not asked again; the scheduler goes on to
 *     the next job, and waits longer and longer for a cluster it cannot
 *     reach instead of taking the job again at once.
 * The job store is a real SQLite file.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "lib/frame.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "pbj/jobstore.h"
#include "pbj/runner.h"
#include "pbj/serve.h"
#include "tests/unit/fake_server.h"
#include "tests/unit/tmpstore.h"

/* ---- the fake server ------------------------------------------------------- */

#define NOBJ 40                  /* objects its task walks */
#define PER_POLL 8               /* ... per poll */
#define FINDING_EVERY 5          /* a finding every 5th object */
#define MAX_STARTS 8

struct fake {
	struct fake_server *srv;
	struct ofs_sid sid;
	/* the script */
	int fail_runs;               /* the first runs fail at object 20 */
	bool forget_once;            /* the first poll after 16 objects: ENOENT */
	bool budgeted;               /* a repair per object, against the budget */
	int refuse_servers;          /* SERVERS answered with this (0: the table) */
	int refuse_start;            /* TASK_START answered with this (0: started) */
	int fail_error;              /* the code a failed run says it failed with */
	/* the task as the fake runs it */
	bool have_task;
	uint8_t state;
	uint64_t done, from, base, allow, repairs;   /* done: objects walked of
	                                                the NOBJ, from: at its start */
	struct ofs_oid cursor;
	struct ofs_task_finding f[NOBJ];
	uint32_t nf;
	uint64_t next_seq;
	/* what the runner sent */
	struct ofs_task_req starts[MAX_STARTS];
	int nstarts;
	uint64_t acked;
	uint8_t last_ctl;
	int runs;
	int nservers;                /* SERVERS asked */
	int nrequests;               /* requests of any kind */
};

static struct ofs_oid obj(uint64_t i)
{
	struct ofs_oid o;

	memset(&o, 0, sizeof(o));
	o.b[14] = (uint8_t)(i >> 8);
	o.b[15] = (uint8_t)(i + 1);  /* (never zero: zero is "from the start") */
	return o;
}

static void task_start(struct fake *fk, const struct ofs_task_req *q)
{
	if (fk->nstarts < MAX_STARTS) {
		fk->starts[fk->nstarts] = *q;
		fk->starts[fk->nstarts].oids = NULL;
		fk->nstarts++;
	}
	fk->have_task = true;
	fk->state = OFS_TASK_RUNNING;
	fk->base = q->objects_base;
	fk->done = 0;
	for (uint64_t i = 0; i < NOBJ && !oid_is_zero(q->cursor); i++)
		if (oid_eq(obj(i), q->cursor))
			fk->done = i + 1;
	fk->from = fk->done;
	fk->cursor = q->cursor;
	fk->allow = q->budget;
	fk->nf = 0;
	fk->next_seq = 1;
	fk->runs++;
}

/* Walk PER_POLL more objects of the task (or fail, or starve). */
static void task_advance(struct fake *fk)
{
	for (int k = 0; k < PER_POLL && fk->state == OFS_TASK_RUNNING; k++) {
		if (fk->done == NOBJ) {
			fk->state = OFS_TASK_DONE;
			break;
		}
		if (fk->runs <= fk->fail_runs && fk->done == 20) {
			fk->state = OFS_TASK_FAILED;
			break;
		}
		if (fk->budgeted && fk->allow == 0)
			break;               /* starved: the status says so */
		if (fk->budgeted) {
			if (fk->allow != UINT64_MAX)
				fk->allow--;
			fk->repairs++;
		}
		if (fk->done % FINDING_EVERY == 0 && fk->nf < NOBJ) {
			struct ofs_task_finding *f = &fk->f[fk->nf++];
			memset(f, 0, sizeof(*f));
			f->seq = fk->next_seq++;
			f->server = fk->sid;
			f->oid = obj(fk->done);
			f->kind = OFS_FINDING_CHECKSUM_MISMATCH;
			snprintf(f->detail, sizeof(f->detail), "object %llu",
				 (unsigned long long)fk->done);
		}
		fk->cursor = obj(fk->done);
		fk->done++;
	}
}

static int task_poll(struct fake *fk, const struct ofs_task_req *q, struct wbuf *reply)
{
	struct ofs_task_status st;
	uint32_t drop = 0;

	if (!fk->have_task)
		return -ENOENT;
	if (fk->forget_once && fk->done >= 16) {
		fk->forget_once = false;     /* the server restarted */
		fk->have_task = false;
		return -ENOENT;
	}
	if (q->ack > fk->acked)
		fk->acked = q->ack;
	while (drop < fk->nf && fk->f[drop].seq <= q->ack)
		drop++;
	memmove(fk->f, fk->f + drop, (fk->nf - drop) * sizeof(fk->f[0]));
	fk->nf -= drop;
	if (q->budget && fk->allow != UINT64_MAX)
		fk->allow = q->budget == UINT64_MAX ? UINT64_MAX : fk->allow + q->budget;
	if (fk->state == OFS_TASK_RUNNING)
		task_advance(fk);
	memset(&st, 0, sizeof(st));
	st.state = fk->state;
	st.objects_done = fk->base + fk->done - fk->from;   /* (counts go on from the base) */
	st.objects_total = fk->base + NOBJ - fk->from;
	st.cursor = fk->cursor;
	st.repairs = fk->repairs;
	st.starved = fk->budgeted && fk->allow == 0 && fk->state == OFS_TASK_RUNNING;
	if (fk->state == OFS_TASK_FAILED) {
		snprintf(st.reason, sizeof(st.reason), "scrub stopped at an object: %s",
			 fk->fail_error ? "certificate revoked" : "Input/output error");
		st.error = fk->fail_error ? fk->fail_error : -EIO;
	}
	proto_encode_task_status(reply, &st, fk->f, fk->nf);
	return 0;
}

static int answer(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
		  struct wbuf *reply)
{
	struct fake *fk = arg;

	(void)forwarded;
	fk->nrequests++;
	switch (op) {
	case OFS_OP_SERVERS: {
		struct ofs_server e;
		fk->nservers++;
		if (fk->refuse_servers)
			return fk->refuse_servers;
		fake_server_entry(fk->srv, NULL, &e);
		proto_encode_servers(reply, &fk->srv->sid, &e, 1);
		return 0;
	}
	case OFS_OP_TASK_START:
		if (fk->refuse_start)
			return fk->refuse_start;
		task_start(fk, &q->task);
		return 0;
	case OFS_OP_TASK_POLL:
		return task_poll(fk, &q->task, reply);
	case OFS_OP_TASK_CTL:
		fk->last_ctl = q->task.action;
		if (q->task.action == OFS_TASK_PAUSE && fk->state == OFS_TASK_RUNNING)
			fk->state = OFS_TASK_PAUSED;
		else if (q->task.action == OFS_TASK_RESUME && fk->state == OFS_TASK_PAUSED)
			fk->state = OFS_TASK_RUNNING;
		else if (q->task.action == OFS_TASK_CANCEL || q->task.action == OFS_TASK_FORGET)
			fk->state = OFS_TASK_CANCELLED;
		return 0;
	default:
		return -OFS_EUNKNOWNOP;
	}
}

static struct fake *fake_start(void)
{
	struct fake *fk = calloc(1, sizeof(*fk));

	assert_non_null(fk);
	fk->srv = fake_server_start(answer, fk);
	assert_non_null(fk->srv);
	fk->sid = fk->srv->sid;
	return fk;
}

static void fake_stop(struct fake *fk)
{
	fake_server_stop(fk->srv);
	free(fk);
}

/* ---- fixture ------------------------------------------------------------------- */

struct fixture {
	struct tmpdb jobs;
	struct pbj_db *db;               /* jobs.db */
	struct fake *fk;
	struct pbj_runner_opts o;
	const char *addr[1];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(tmpdb_make("runner", &fx->jobs), 0);
	fx->db = fx->jobs.db;
	fx->fk = fake_start();
	fx->addr[0] = fx->fk->srv->addr;
	fx->o.cluster = fx->addr;
	fx->o.ncluster = 1;
	fx->o.max_retries = 3;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	tmpdb_remove(&fx->jobs);
	fake_stop(fx->fk);
	free(fx);
	return 0;
}

static int64_t submit(struct fixture *fx, uint32_t flags, const char *args)
{
	struct pbj_job j;
	int64_t id = 0;

	memset(&j, 0, sizeof(j));
	j.type = PBJ_TYPE_SCRUB;
	j.flags = flags;
	j.rate = 12345;
	snprintf(j.args, sizeof(j.args), "%s", args ? args : "");
	assert_int_equal(pbj_submit(fx->db, &j, &id), 0);
	return id;
}

static int count_one(const struct pbj_finding *f, void *arg)
{
	(void)f;
	(*(int *)arg)++;
	return 0;
}

static int findings_of(struct fixture *fx, int64_t id)
{
	int n = 0;

	assert_int_equal(pbj_finding_list(fx->db, id, NULL, -1, NULL, count_one, &n), 0);
	return n;
}

static int take_task(const struct pbj_task *t, void *arg)
{
	*(struct pbj_task *)arg = *t;
	return 0;
}

static struct pbj_task task_of(struct fixture *fx, int64_t id)
{
	struct pbj_task t;

	memset(&t, 0, sizeof(t));
	assert_int_equal(pbj_task_list(fx->db, id, take_task, &t), 0);
	return t;
}

static struct pbj_job job_of(struct fixture *fx, int64_t id)
{
	struct pbj_job j;

	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	return j;
}

/* ---- tests --------------------------------------------------------------------- */

static void test_a_job_runs_to_its_end_and_stores_every_finding_once(void **state)
{
	struct fixture *fx = *state;
	int64_t id = submit(fx, 0, NULL);
	struct pbj_task t;

	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	assert_int_equal(job_of(fx, id).state, PBJ_SUCCEEDED);
	assert_int_equal(fx->fk->nstarts, 1);
	assert_int_equal(fx->fk->starts[0].kind, OFS_TASK_SCRUB);
	assert_int_equal(fx->fk->starts[0].flags, 0);
	assert_int_equal(fx->fk->starts[0].rate, 12345);
	assert_true(oid_is_zero(fx->fk->starts[0].cursor));
	assert_int_equal(findings_of(fx, id), NOBJ / FINDING_EVERY);
	/* every finding acknowledged, after it was stored */
	assert_int_equal(fx->fk->acked, NOBJ / FINDING_EVERY);
	t = task_of(fx, id);
	assert_int_equal(t.state, PBJ_SUCCEEDED);
	assert_int_equal(t.objects_done, NOBJ);
	assert_true(oid_eq(t.cursor, obj(NOBJ - 1)));
	assert_int_equal(fx->fk->last_ctl, OFS_TASK_FORGET);   /* forgotten at the end */
}

static void test_repair_flags_reach_the_task(void **state)
{
	struct fixture *fx = *state;
	int64_t id = submit(fx, PBJ_REPAIR | PBJ_DRY_RUN, "{\"metadata_only\": 1}");

	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	assert_int_equal(fx->fk->starts[0].flags,
			 OFS_TASK_F_REPAIR | OFS_TASK_F_DRYRUN | OFS_TASK_F_NODATA);
	assert_int_equal(fx->fk->starts[0].budget, UINT64_MAX);   /* no cap: any */
}

static void test_a_failed_task_runs_again_from_its_cursor(void **state)
{
	struct fixture *fx = *state;
	int64_t id;
	struct pbj_task t;

	fx->fk->fail_runs = 1;
	id = submit(fx, 0, NULL);
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	assert_int_equal(job_of(fx, id).state, PBJ_SUCCEEDED);
	assert_int_equal(fx->fk->nstarts, 2);
	/* the second run goes on after the last object stored, counts too */
	assert_true(oid_eq(fx->fk->starts[1].cursor, obj(19)));
	assert_int_equal(fx->fk->starts[1].objects_base, 20);
	t = task_of(fx, id);
	assert_int_equal(t.retries, 1);
	assert_int_equal(t.objects_done, NOBJ);
	/* no finding stored twice, none lost */
	assert_int_equal(findings_of(fx, id), NOBJ / FINDING_EVERY);
}

static void test_a_task_that_keeps_failing_fails_the_job(void **state)
{
	struct fixture *fx = *state;
	int64_t id;
	struct pbj_job j;

	fx->fk->fail_runs = 100;
	id = submit(fx, 0, NULL);
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	j = job_of(fx, id);
	assert_int_equal(j.state, PBJ_FAILED);
	assert_non_null(strstr(j.reason, "Input/output error"));
	assert_int_equal(fx->fk->nstarts, fx->o.max_retries);
	assert_int_equal(task_of(fx, id).retries, fx->o.max_retries);
}

/* A run that failed because the server's peers refused it (its own
 * certificate revoked, say) is not run again: no run would be let in. */
static void test_a_task_its_peers_refused_is_not_run_again(void **state)
{
	struct fixture *fx = *state;
	int64_t id;
	struct pbj_job j;

	fx->o.max_retries = 20;
	fx->fk->fail_runs = 100;
	fx->fk->fail_error = -OFS_ECERTREVOKED;
	id = submit(fx, 0, NULL);
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	j = job_of(fx, id);
	assert_int_equal(j.state, PBJ_FAILED);
	assert_string_equal(j.reason, "scrub stopped at an object: certificate revoked");
	assert_int_equal(fx->fk->nstarts, 1);
	assert_int_equal(task_of(fx, id).retries, 1);
}

static void test_a_restarted_server_gets_the_task_again_from_the_cursor(void **state)
{
	struct fixture *fx = *state;
	int64_t id;

	fx->fk->forget_once = true;
	id = submit(fx, 0, NULL);
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	assert_int_equal(job_of(fx, id).state, PBJ_SUCCEEDED);
	assert_int_equal(fx->fk->nstarts, 2);
	assert_false(oid_is_zero(fx->fk->starts[1].cursor));
	assert_int_equal(task_of(fx, id).retries, 0);    /* not a failure */
	assert_int_equal(findings_of(fx, id), NOBJ / FINDING_EVERY);
}

static void test_a_repair_job_pauses_at_its_cap(void **state)
{
	struct fixture *fx = *state;
	int64_t id;
	struct pbj_job j;

	fx->fk->budgeted = true;
	fx->o.return_on_cap = true;
	id = submit(fx, PBJ_REPAIR, "{\"max_repairs\": 6}");
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	j = job_of(fx, id);
	assert_int_equal(j.state, PBJ_PAUSED);
	assert_non_null(strstr(j.reason, PBJ_CAP_REASON));
	assert_int_equal(fx->fk->starts[0].budget, 0);   /* granted as it asks */
	assert_int_equal(fx->fk->repairs, 6);            /* the cap, not one more */
	assert_int_equal(fx->fk->last_ctl, OFS_TASK_PAUSE);
}

static void cancel_it(const struct pbj_job *j, const struct pbj_sum *s, void *arg)
{
	struct fixture *fx = arg;

	if (s->objects_done >= 8)
		pbj_job_set_state(fx->db, j->id, PBJ_CANCELLED, 1u << PBJ_RUNNING, "by the test");
}

static void test_a_job_cancelled_in_the_store_is_forgotten_on_the_server(void **state)
{
	struct fixture *fx = *state;
	int64_t id = submit(fx, 0, NULL);

	fx->o.progress = cancel_it;
	fx->o.arg = fx;
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	assert_int_equal(job_of(fx, id).state, PBJ_CANCELLED);
	assert_int_equal(task_of(fx, id).state, PBJ_CANCELLED);
	assert_int_equal(fx->fk->last_ctl, OFS_TASK_FORGET);
	assert_true(fx->fk->done < NOBJ);
}

static volatile sig_atomic_t serve_stop;

struct serve_watch {
	struct fixture *fx;
	int64_t ids[3];
	int rounds;
	bool keep_on;                /* never stop (it must end by itself) */
};

/* Between rounds: stop once every job the test made has ended. */
static void watch(struct pbj_db *db, void *arg)
{
	struct serve_watch *w = arg;
	bool all = true;

	for (int i = 0; i < 3; i++) {
		struct pbj_job j;
		if (w->ids[i] && pbj_job_get(db, w->ids[i], &j) == 0)
			all &= pbj_state_final(j.state);
	}
	if ((all && !w->keep_on) || ++w->rounds > 200)
		serve_stop = 1;
}

static void test_serve_runs_the_left_job_then_the_queue_by_priority(void **state)
{
	struct fixture *fx = *state;
	struct serve_watch w = { .fx = fx };
	struct pbj_serve_opts o = { .holder = "test", .between = watch, .arg = &w };
	struct pbj_job j;
	bool got = false;
	int64_t cu = 0;

	w.ids[0] = submit(fx, 0, NULL);                 /* queued, priority 0 */
	memset(&j, 0, sizeof(j));
	j.type = PBJ_TYPE_SCRUB;
	j.priority = 5;
	assert_int_equal(pbj_submit(fx->db, &j, &w.ids[1]), 0);   /* queued, priority 5 */
	w.ids[2] = submit(fx, 0, NULL);                 /* left running by a dead scheduler */
	assert_int_equal(pbj_job_set_state(fx->db, w.ids[2], PBJ_RUNNING, 1u << PBJ_QUEUED, NULL), 0);
	memset(&j, 0, sizeof(j));
	j.type = PBJ_TYPE_CATCHUP;                      /* recorded, never run */
	assert_int_equal(pbj_submit(fx->db, &j, &cu), 0);
	assert_int_equal(pbj_job_set_state(fx->db, cu, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL), 0);
	assert_int_equal(pbj_lease_take(fx->db, "test", 10000, &got, NULL), 0);
	assert_true(got);
	o.run = fx->o;
	o.run.stop = &serve_stop;
	serve_stop = 0;
	assert_int_equal(pbj_serve(fx->db, &o), 0);
	assert_int_equal(fx->fk->nstarts, 3);
	assert_int_equal(fx->fk->starts[0].job, (uint64_t)w.ids[2]);
	assert_int_equal(fx->fk->starts[1].job, (uint64_t)w.ids[1]);
	assert_int_equal(fx->fk->starts[2].job, (uint64_t)w.ids[0]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(job_of(fx, w.ids[i]).state, PBJ_SUCCEEDED);
	assert_int_equal(job_of(fx, cu).state, PBJ_RUNNING);
	/* another scheduler holds the lease now: this one gives up */
	assert_int_equal(pbj_lease_drop(fx->db, "test"), 0);
	assert_int_equal(pbj_lease_take(fx->db, "other", 10000, &got, NULL), 0);
	serve_stop = 0;
	w.keep_on = true;
	w.rounds = 0;
	assert_int_equal(pbj_serve(fx->db, &o), -EBUSY);
	assert_true(w.rounds <= 2);
}

/* The cluster refuses who runs the job (here: permission denied to its
 * table): no later run would be let in, so the job ends failed at once,
 * with what failed and why, and pbj_run says it ended (0). */
static void test_a_job_refused_at_its_start_fails_at_once_with_the_reason(void **state)
{
	struct fixture *fx = *state;
	int64_t id = submit(fx, 0, NULL);
	struct pbj_job j;

	fx->fk->refuse_servers = -EACCES;
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	j = job_of(fx, id);
	assert_int_equal(j.state, PBJ_FAILED);
	assert_string_equal(j.reason, "reading the server table: permission denied");
	assert_int_equal(fx->fk->nservers, 1);
	assert_int_equal(fx->fk->nstarts, 0);
}

/* A server refuses the task: it fails at once (one attempt, whatever
 * the retries allowed), so does the job, and that server is not asked
 * anything again - not even to forget the task. */
static void test_a_task_refused_by_its_server_fails_at_once_and_is_not_asked_again(void **state)
{
	struct fixture *fx = *state;
	int64_t id = submit(fx, 0, NULL);
	struct pbj_task t;

	fx->o.max_retries = 20;
	fx->fk->refuse_start = -OFS_ECERTREVOKED;
	assert_int_equal(pbj_run(fx->db, id, &fx->o), 0);
	t = task_of(fx, id);
	assert_int_equal(t.state, PBJ_FAILED);
	assert_int_equal(t.retries, 1);
	assert_non_null(strstr(t.reason, "starting the task on "));
	assert_non_null(strstr(t.reason, ": certificate revoked"));
	assert_int_equal(job_of(fx, id).state, PBJ_FAILED);
	/* SERVERS, then the one TASK_START: nothing after the refusal */
	assert_int_equal(fx->fk->nrequests, 2);
}

static int watched;

/* Stop serving once every job the test made has ended and three more
 * rounds went by, or after 200 rounds (a loop that takes a refused job
 * again and again never ends it). */
static void watch_ended(struct pbj_db *db, void *arg)
{
	struct serve_watch *w = arg;
	bool all = true;

	for (int i = 0; i < 3; i++) {
		struct pbj_job j;
		if (w->ids[i] && pbj_job_get(db, w->ids[i], &j) == 0)
			all &= pbj_state_final(j.state);
	}
	w->rounds = all ? w->rounds + 1 : 0;
	if (w->rounds > 3 || ++watched > 200)
		serve_stop = 1;
}

static int ended;

static void count_ended(const struct pbj_job *j, void *arg)
{
	(void)arg;
	if (j->state == PBJ_FAILED)
		ended++;
}

/* The scheduler as a refused admin: each job fails at once with the
 * reason, the next one runs, and the refusing server is asked about once
 * per job - not taken again and again (which asked it ~400 times a second
 * and never ended the job). */
static void test_serve_fails_a_refused_job_and_goes_on(void **state)
{
	struct fixture *fx = *state;
	struct serve_watch w = { .fx = fx };
	struct pbj_serve_opts o = { .holder = "test", .between = watch_ended, .arg = &w,
				    .job_ended = count_ended };
	bool got = false;

	w.ids[0] = submit(fx, 0, NULL);
	w.ids[1] = submit(fx, 0, NULL);
	fx->fk->refuse_servers = -OFS_ECERTREVOKED;
	assert_int_equal(pbj_lease_take(fx->db, "test", 10000, &got, NULL), 0);
	o.run = fx->o;
	o.run.stop = &serve_stop;
	serve_stop = 0;
	ended = 0;
	watched = 0;
	assert_int_equal(pbj_serve(fx->db, &o), 0);
	for (int i = 0; i < 2; i++) {
		struct pbj_job j = job_of(fx, w.ids[i]);
		assert_int_equal(j.state, PBJ_FAILED);
		assert_string_equal(j.reason, "reading the server table: certificate revoked");
	}
	assert_int_equal(ended, 2);
	/* one table read per job, and the catch-up polls' (refused: each
	 * waits longer than the one before) */
	assert_in_range(fx->fk->nservers, 2, 6);
}

static int nerrors;
static int retry_ms[3];
static int64_t error_at_ms[3];

static void record_error(int64_t id, int rc, int wait_ms, void *arg)
{
	struct timespec ts;

	(void)id;
	(void)arg;
	assert_int_equal(rc, -OFS_EUNREACHABLE);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (nerrors < 3) {
		retry_ms[nerrors] = wait_ms;
		error_at_ms[nerrors] = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if (++nerrors == 3)
		serve_stop = 1;
}

/* A cluster that cannot be reached may answer later: the job stays
 * queued, and the queue waits - 500 ms, then twice that, each with
 * jitter - before the job is taken again. */
static void test_serve_backs_off_while_the_cluster_cannot_be_reached(void **state)
{
	struct fixture *fx = *state;
	struct pbj_serve_opts o = { .holder = "test", .job_error = record_error };
	const char *nowhere[1];
	char addr[OFS_ADDR_MAX];
	struct sockaddr_in sa;
	socklen_t n = sizeof(sa);
	bool got = false;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int64_t id = submit(fx, 0, NULL);

	/* a port nobody listens on: bound, its number read, closed */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &n), 0);
	close(fd);
	net_format_addr(&sa, addr);
	nowhere[0] = addr;
	assert_int_equal(pbj_lease_take(fx->db, "test", 10000, &got, NULL), 0);
	o.run = fx->o;
	o.run.cluster = nowhere;
	o.run.stop = &serve_stop;
	serve_stop = 0;
	nerrors = 0;
	assert_int_equal(pbj_serve(fx->db, &o), 0);
	assert_int_equal(nerrors, 3);
	assert_int_equal(job_of(fx, id).state, PBJ_QUEUED);
	for (int i = 0; i < 3; i++)
		assert_in_range(retry_ms[i], 250 << i, 500 << i);
	for (int i = 0; i < 2; i++)
		if (error_at_ms[i + 1] - error_at_ms[i] < retry_ms[i])
			fail_msg("run %d came %lld ms after the one before, not after its wait of %d ms",
				 i + 2, (long long)(error_at_ms[i + 1] - error_at_ms[i]), retry_ms[i]);
}

/* A server that answers SERVERS with the table of another (the first
 * fake): the address serve is given, for a cluster that then moves. */
static int answer_table_of(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
			   struct wbuf *reply)
{
	struct fake *fk = arg;
	struct ofs_server e;

	(void)forwarded;
	(void)q;
	if (op != OFS_OP_SERVERS)
		return -OFS_EUNKNOWNOP;
	fake_server_entry(fk->srv, NULL, &e);
	proto_encode_servers(reply, &fk->srv->sid, &e, 1);
	return 0;
}

struct moved_watch {
	struct fixture *fx;
	struct fake_server *given;   /* stopped at the second round */
	int64_t id;
	int rounds;
};

static void watch_moved(struct pbj_db *db, void *arg)
{
	struct moved_watch *w = arg;
	struct pbj_job j;

	if (++w->rounds == 2) {
		fake_server_stop(w->given);  /* the address given answers no more */
		w->given = NULL;
		w->id = submit(w->fx, 0, NULL);
	}
	if ((w->id && pbj_job_get(db, w->id, &j) == 0 && pbj_state_final(j.state)) ||
	    w->rounds > 200)
		serve_stop = 1;
}

/* The address serve was given stops answering (its servers restarted
 * elsewhere): a job still runs, through the servers the catch-up's last
 * table named - rather than waiting for an address that will not come
 * back. */
static void test_serve_finds_servers_that_moved_through_the_last_table(void **state)
{
	struct fixture *fx = *state;
	struct moved_watch w = { .fx = fx };
	struct pbj_serve_opts o = { .holder = "test", .between = watch_moved, .arg = &w };
	char addr[OFS_ADDR_MAX];
	const char *given[1] = { addr };
	bool got = false;

	w.given = fake_server_start(answer_table_of, fx->fk);
	assert_non_null(w.given);
	snprintf(addr, sizeof(addr), "%s", w.given->addr);
	assert_int_equal(pbj_lease_take(fx->db, "test", 10000, &got, NULL), 0);
	o.run = fx->o;
	o.run.cluster = given;
	o.run.stop = &serve_stop;
	serve_stop = 0;
	assert_int_equal(pbj_serve(fx->db, &o), 0);
	fake_server_stop(w.given);
	assert_true(w.id > 0);
	assert_int_equal(job_of(fx, w.id).state, PBJ_SUCCEEDED);
	assert_int_equal(fx->fk->nstarts, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_job_runs_to_its_end_and_stores_every_finding_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_flags_reach_the_task, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_failed_task_runs_again_from_its_cursor, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_task_that_keeps_failing_fails_the_job, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_task_its_peers_refused_is_not_run_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_restarted_server_gets_the_task_again_from_the_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_repair_job_pauses_at_its_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_job_cancelled_in_the_store_is_forgotten_on_the_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve_runs_the_left_job_then_the_queue_by_priority,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_job_refused_at_its_start_fails_at_once_with_the_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_task_refused_by_its_server_fails_at_once_and_is_not_asked_again, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_serve_fails_a_refused_job_and_goes_on, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_serve_backs_off_while_the_cluster_cannot_be_reached, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_serve_finds_servers_that_moved_through_the_last_table, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
