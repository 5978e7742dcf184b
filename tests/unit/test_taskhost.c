/*
 * test_taskhost.c - the host of the background tasks (taskhost.h), with a
 * kind of the test's own over a real store: every object handed over once
 * in OID order, the counts and cursor; pause between objects and resume;
 * cancel; a full findings queue holding the task until the scheduler
 * acknowledges, with no finding lost; pacing to the rate on a fake clock;
 * the repair budget; the limit on tasks running at once; a walk made
 * again at the kind's word; a failure's reason; the system job's poll.
 *
 * Waits are for an observable state (a poll's status, the kind reaching a
 * gate), each bounded.
 */
#include <errno.h>
#include <ftw.h>
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

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "server/taskhost.h"
#include "store/store.h"

#define FAKE_KIND 9
#define WAIT_MS 20000            /* the bound of every wait */

/* ---- the test's kind --------------------------------------------------------- */

struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long gate_at;                /* one() of this object (0-based) waits for
	                                the gate (-1: none; -2: every one) */
	bool gate_open, at_gate;
	long seen;                   /* objects handed over */
	struct ofs_oid last;         /* the last one */
	bool in_order;               /* every object after the one before */
	int findings_each;
	uint64_t bytes_each;         /* task_throttle per object */
	bool budget_each;            /* task_take_budget + count per object */
	long fail_at;                /* one() of this object fails (-1: none) */
	int again;                   /* walks end asks for again */
	int begins, ends, releases;
	long backoff_at;             /* one() of this object retries with
	                                task_backoff until it gives up (-1: none) */
	int backoffs, backoff_rc;    /* ... how many waits, and how it ended */
	double backoff_spent;        /* ... the clock's time they took */
	int64_t backoff_waited;      /* ... what the backoff counted */
};

static struct fake F;

static void fake_reset(void)
{
	pthread_mutex_lock(&F.mu);
	F.gate_at = -1;
	F.fail_at = -1;
	F.gate_open = F.at_gate = false;
	F.seen = 0;
	memset(&F.last, 0, sizeof(F.last));
	F.in_order = true;
	F.findings_each = 0;
	F.bytes_each = 0;
	F.budget_each = false;
	F.again = 0;
	F.begins = F.ends = F.releases = 0;
	F.backoff_at = -1;
	F.backoffs = F.backoff_rc = 0;
	pthread_mutex_unlock(&F.mu);
}

static int fake_init(struct task *t, void *arg, const struct ofs_task_req *q, void **state)
{
	(void)t;
	(void)q;
	*state = arg;
	return 0;
}

static int fake_begin(struct task *t, void *state)
{
	(void)t;
	(void)state;
	pthread_mutex_lock(&F.mu);
	F.begins++;
	pthread_mutex_unlock(&F.mu);
	return 0;
}

static int fake_one(struct task *t, void *state, const struct task_obj *w, size_t at,
		    uint64_t *bytes)
{
	long me;
	int rc = 0;

	(void)state;
	(void)at;
	pthread_mutex_lock(&F.mu);
	me = F.seen++;
	if (me > 0 && memcmp(w->oid.b, F.last.b, OFS_OID_LEN) <= 0 && F.ends == 0)
		F.in_order = false;
	F.last = w->oid;
	if (me == F.gate_at || F.gate_at == -2) {
		F.at_gate = true;
		pthread_cond_broadcast(&F.cv);
		while (!F.gate_open)
			pthread_cond_wait(&F.cv, &F.mu);
	}
	pthread_mutex_unlock(&F.mu);
	if (me == F.fail_at)
		return -EIO;
	if (me == F.backoff_at) {
		struct backoff bo;
		double t0 = task_now(t);
		int r;
		backoff_init(&bo, 100, 400);
		while ((r = task_backoff(t, &bo, 2000)) == 0)
			F.backoffs++;
		F.backoff_rc = r;
		F.backoff_spent = task_now(t) - t0;
		F.backoff_waited = bo.waited_ms;
	}
	for (int i = 0; i < F.findings_each && !rc; i++) {
		struct ofs_task_finding f;
		memset(&f, 0, sizeof(f));
		f.oid = w->oid;
		f.kind = OFS_FINDING_ORPHAN;
		snprintf(f.detail, sizeof(f.detail), "object %ld, finding %d", me, i);
		rc = task_enqueue(t, &f);
	}
	if (!rc && F.bytes_each)
		rc = task_throttle(t, F.bytes_each);
	if (!rc && F.budget_each) {
		rc = task_take_budget(t);
		if (!rc)
			task_count_repair(t);
	}
	*bytes = F.bytes_each;
	return rc;
}

static int fake_end(struct task *t, void *state, int rc, struct ofs_oid last)
{
	(void)t;
	(void)state;
	(void)last;
	pthread_mutex_lock(&F.mu);
	F.ends++;
	if (!rc && F.again > 0) {
		F.again--;
		rc = TASK_AGAIN;
	}
	pthread_mutex_unlock(&F.mu);
	return rc;
}

static void fake_release(void *state)
{
	(void)state;
	pthread_mutex_lock(&F.mu);
	F.releases++;
	pthread_mutex_unlock(&F.mu);
}

static const struct task_kind fake_kind = {
	.kind = FAKE_KIND, .name = "fake", .arg = &F,
	.init = fake_init, .begin = fake_begin, .one = fake_one, .end = fake_end,
	.release = fake_release,
};

static void open_gate(void)
{
	pthread_mutex_lock(&F.mu);
	F.gate_open = true;
	pthread_cond_broadcast(&F.cv);
	pthread_mutex_unlock(&F.mu);
}

static void wait_gate(void)
{
	struct timespec ts;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&F.mu);
	while (!F.at_gate && rc == 0)
		rc = pthread_cond_timedwait(&F.cv, &F.mu, &ts);
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(rc, 0);
}

/* ---- a fake clock -------------------------------------------------------------- */

static pthread_mutex_t clock_mu = PTHREAD_MUTEX_INITIALIZER;
static double fake_t;

static double fake_now(void *arg)
{
	double t;

	(void)arg;
	pthread_mutex_lock(&clock_mu);
	t = fake_t;
	pthread_mutex_unlock(&clock_mu);
	return t;
}

static void fake_sleep(void *arg, double s)
{
	(void)arg;
	pthread_mutex_lock(&clock_mu);
	fake_t += s;
	pthread_mutex_unlock(&clock_mu);
}

/* ---- fixture ------------------------------------------------------------------- */

#define NOBJ 60

struct fixture {
	char dir[64];
	struct store *s;
	struct taskhost *h;
	struct ofs_oid max;          /* the largest OID */
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct ofs_attr *a = calloc(1, sizeof(*a));
	char p[128];
	struct ofs_sid sid;

	assert_non_null(fx);
	assert_non_null(a);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/ofs-taskhost.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(p, sizeof(p), "%s/s", fx->dir);
	assert_int_equal(store_init(p, 4096, NULL, 0, &sid), 0);
	assert_int_equal(store_open(p, false, &fx->s), 0);
	a->type = OFS_OBJ_METAFILE;
	a->mode = 0644;
	for (int i = 0; i < NOBJ; i++) {
		struct ofs_oid o;
		assert_int_equal(store_create(fx->s, a, &o), 0);
		if (memcmp(o.b, fx->max.b, OFS_OID_LEN) > 0)
			fx->max = o;
	}
	free(a);
	assert_int_equal(taskhost_open(fx->s, NULL, NULL, 0, &fx->h), 0);
	assert_int_equal(taskhost_add_kind(fx->h, &fake_kind), 0);
	fake_reset();
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	open_gate();                 /* (a task left at its gate ends) */
	taskhost_close(fx->h);
	store_close(fx->s);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static struct ofs_task_req req(uint64_t job)
{
	struct ofs_task_req q;

	memset(&q, 0, sizeof(q));
	q.job = job;
	q.kind = FAKE_KIND;
	q.budget = UINT64_MAX;
	return q;
}

static int start(struct fixture *fx, uint64_t job)
{
	struct ofs_task_req q = req(job);

	return taskhost_start(fx->h, &q);
}

/* The findings a poll returned, by seq. */
struct got {
	uint64_t seq[OFS_MAX_TASK_FINDINGS];
	uint32_t n;
};

static int take(const struct ofs_task_finding *f, void *arg)
{
	struct got *g = arg;

	if (g->n < OFS_MAX_TASK_FINDINGS)
		g->seq[g->n++] = f->seq;
	return 0;
}

static void poll_job(struct fixture *fx, uint64_t job, uint64_t ack, uint64_t budget,
		     struct ofs_task_status *st, struct got *g)
{
	struct wbuf w;
	struct got none;

	wbuf_init(&w);
	assert_int_equal(taskhost_poll(fx->h, job, ack, budget, &w), 0);
	memset(&none, 0, sizeof(none));
	if (g)
		g->n = 0;
	assert_int_equal(proto_decode_task_status(w.data, w.len, st, take, g ? g : &none), 0);
	wbuf_free(&w);
}

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll until the task is in state (bounded). */
static void await_state(struct fixture *fx, uint64_t job, uint8_t state, struct ofs_task_status *st)
{
	for (int waited = 0;; waited++) {
		poll_job(fx, job, 0, 0, st, NULL);
		if (st->state == state)
			return;
		if (waited * 2 > WAIT_MS)
			fail_msg("job %llu: state %u, waited for %u", (unsigned long long)job, st->state,
				 state);
		nap_ms(2);
	}
}

/* ---- tests --------------------------------------------------------------------- */

static void test_every_object_once_in_order_with_counts_and_cursor(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;

	assert_int_equal(start(fx, 1), 0);
	await_state(fx, 1, OFS_TASK_DONE, &st);
	assert_int_equal(F.seen, NOBJ);
	assert_true(F.in_order);
	assert_int_equal(st.objects_done, NOBJ);
	assert_true(st.objects_total >= st.objects_done);
	assert_memory_equal(st.cursor.b, fx->max.b, OFS_OID_LEN);
	assert_int_equal(F.begins, 1);
	assert_int_equal(F.ends, 1);
	assert_int_equal(F.releases, 0);     /* kept for its polls */
	/* a job done is not started again: it is polled */
	assert_int_equal(start(fx, 1), 0);
	assert_int_equal(F.seen, NOBJ);
	assert_int_equal(taskhost_ctl(fx->h, 1, OFS_TASK_FORGET), 0);
	assert_int_equal(F.releases, 1);
	assert_int_equal(taskhost_poll(fx->h, 1, 0, 0, &(struct wbuf){ 0 }), -ENOENT);
}

static void test_a_cursor_resumes_after_it(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_req q = req(2);
	struct ofs_task_status st;

	q.cursor = fx->max;              /* nothing after the largest */
	q.objects_base = 7;
	assert_int_equal(taskhost_start(fx->h, &q), 0);
	await_state(fx, 2, OFS_TASK_DONE, &st);
	assert_int_equal(F.seen, 0);
	assert_int_equal(st.objects_done, 7);
}

static void test_pause_holds_between_objects_and_resume_goes_on(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;

	F.gate_at = 5;
	assert_int_equal(start(fx, 3), 0);
	wait_gate();
	assert_int_equal(taskhost_ctl(fx->h, 3, OFS_TASK_PAUSE), 0);
	poll_job(fx, 3, 0, 0, &st, NULL);
	assert_int_equal(st.state, OFS_TASK_PAUSED);
	open_gate();
	/* object 5 ends; the task holds before object 6 */
	for (int waited = 0; st.objects_done < 6; waited++) {
		assert_true(waited * 2 < WAIT_MS);
		nap_ms(2);
		poll_job(fx, 3, 0, 0, &st, NULL);
	}
	assert_int_equal(st.objects_done, 6);
	assert_int_equal(st.state, OFS_TASK_PAUSED);
	assert_int_equal(F.seen, 6);
	assert_int_equal(taskhost_ctl(fx->h, 3, OFS_TASK_RESUME), 0);
	await_state(fx, 3, OFS_TASK_DONE, &st);
	assert_int_equal(F.seen, NOBJ);
	assert_int_equal(st.objects_done, NOBJ);
}

static void test_cancel_stops_before_the_next_object(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;

	F.gate_at = 3;
	assert_int_equal(start(fx, 4), 0);
	wait_gate();
	assert_int_equal(taskhost_ctl(fx->h, 4, OFS_TASK_CANCEL), 0);
	open_gate();
	await_state(fx, 4, OFS_TASK_CANCELLED, &st);
	assert_string_equal(st.reason, "cancelled");
	assert_int_equal(F.seen, 4);
	assert_int_equal(F.ends, 1);
	/* a cancelled task starts again when asked */
	fake_reset();
	assert_int_equal(start(fx, 4), 0);
	await_state(fx, 4, OFS_TASK_DONE, &st);
	assert_int_equal(F.seen, NOBJ);
	assert_int_equal(taskhost_ctl(fx->h, 4, 99), -EINVAL);
	assert_int_equal(taskhost_ctl(fx->h, 77, OFS_TASK_CANCEL), -ENOENT);
}

static void test_a_full_queue_holds_the_task_and_loses_nothing(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;
	struct got *g = calloc(1, sizeof(*g));
	uint64_t acked = 0, want = (uint64_t)NOBJ * 20;

	assert_non_null(g);
	F.findings_each = 20;            /* 1 200 in all: more than the queue holds */
	assert_int_equal(start(fx, 5), 0);
	for (int waited = 0;; waited++) {
		poll_job(fx, 5, 0, 0, &st, g);
		if (g->n == OFS_MAX_TASK_FINDINGS)
			break;
		assert_true(waited * 2 < WAIT_MS);
		nap_ms(2);
	}
	/* held: never more than the queue, and the cursor not past them */
	assert_int_equal(st.state, OFS_TASK_RUNNING);
	assert_true(st.objects_done * 20 <= OFS_MAX_TASK_FINDINGS);
	for (int waited = 0; acked < want; waited++) {
		poll_job(fx, 5, acked, 0, &st, g);
		for (uint32_t i = 0; i < g->n; i++)
			assert_int_equal(g->seq[i], acked + 1 + i);   /* in order, none missing */
		acked += g->n;
		if (acked < want) {
			assert_true(waited * 2 < WAIT_MS);
			nap_ms(2);
		}
	}
	await_state(fx, 5, OFS_TASK_DONE, &st);
	poll_job(fx, 5, acked, 0, &st, g);
	assert_int_equal(g->n, 0);
	free(g);
}

static void test_pacing_keeps_the_rate_on_the_clock(void **state)
{
	struct fixture *fx = *state;
	struct taskhost_clock c = { .now = fake_now, .sleep = fake_sleep };
	struct ofs_task_req q = req(6);
	struct ofs_task_status st;
	double t0, spent, want;

	taskhost_set_clock(fx->h, &c);
	t0 = fake_now(NULL);
	F.bytes_each = 1000;
	q.rate = 10000;                  /* 10 objects a second */
	assert_int_equal(taskhost_start(fx->h, &q), 0);
	await_state(fx, 6, OFS_TASK_DONE, &st);
	spent = fake_now(NULL) - t0;
	/* the first object's bytes go at once; each later one waits its share */
	want = (double)(NOBJ - 1) * 1000 / 10000;
	assert_true(spent >= want - 1e-6);
	assert_true(spent <= want + 0.1 + 1e-6);   /* (sleeps of 0.1 s at most) */
	assert_int_equal(st.bytes_done, (uint64_t)NOBJ * 1000);
	taskhost_set_clock(fx->h, NULL);
}

/* A kind's retries wait lib/backoff's growing steps on the task's clock,
 * and give up once they have waited their budget. */
static void test_a_kinds_retries_back_off_and_give_up_past_their_budget(void **state)
{
	struct fixture *fx = *state;
	struct taskhost_clock c = { .now = fake_now, .sleep = fake_sleep };
	struct ofs_task_status st;

	taskhost_set_clock(fx->h, &c);
	F.backoff_at = 3;
	assert_int_equal(start(fx, 8), 0);
	await_state(fx, 8, OFS_TASK_DONE, &st);
	taskhost_set_clock(fx->h, NULL);
	assert_int_equal(F.backoff_rc, -ETIMEDOUT);
	assert_true(F.backoff_waited >= 2000 && F.backoff_waited < 2000 + 400);
	/* slept what the backoff handed out (to the ms), in waits of 50 ms
	 * up to 400 ms: more than 2000 / 400 of them, fewer than 2000 / 50 */
	assert_true(F.backoff_spent * 1000 > (double)F.backoff_waited - 1);
	assert_true(F.backoff_spent * 1000 < (double)F.backoff_waited + 1);
	assert_in_range(F.backoffs, 6, 39);
}

static void test_without_budget_a_task_starves_until_granted(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_req q = req(7);
	struct ofs_task_status st;

	F.budget_each = true;
	q.budget = 3;
	assert_int_equal(taskhost_start(fx->h, &q), 0);
	for (int waited = 0;; waited++) {
		poll_job(fx, 7, 0, 0, &st, NULL);
		if (st.starved)
			break;
		assert_true(waited * 2 < WAIT_MS);
		nap_ms(2);
	}
	assert_int_equal(st.repairs, 3);
	assert_int_equal(st.state, OFS_TASK_RUNNING);
	poll_job(fx, 7, 0, 10, &st, NULL);          /* ten more */
	for (int waited = 0; st.repairs < 13 || !st.starved; waited++) {
		assert_true(waited * 2 < WAIT_MS);
		nap_ms(2);
		poll_job(fx, 7, 0, 0, &st, NULL);
	}
	assert_int_equal(st.repairs, 13);
	poll_job(fx, 7, 0, UINT64_MAX, &st, NULL);  /* any */
	await_state(fx, 7, OFS_TASK_DONE, &st);
	assert_int_equal(st.repairs, NOBJ);
}

static void test_at_most_max_running_and_known_kinds_only(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_req q = req(10);
	struct ofs_task_status st;

	F.gate_at = -2;                          /* every task held at its first object */
	for (uint64_t j = 0; j < TASKHOST_MAX_RUNNING; j++)
		assert_int_equal(start(fx, 10 + j), 0);
	assert_int_equal(start(fx, 20), -EBUSY);
	q.kind = OFS_TASK_SCRUB;                 /* not registered here */
	assert_int_equal(taskhost_start(fx->h, &q), -EINVAL);
	assert_int_equal(taskhost_add_kind(fx->h, &fake_kind), -EEXIST);
	open_gate();
	for (uint64_t j = 0; j < TASKHOST_MAX_RUNNING; j++)
		await_state(fx, 10 + j, OFS_TASK_DONE, &st);
	assert_int_equal(start(fx, 20), 0);
	await_state(fx, 20, OFS_TASK_DONE, &st);
}

static void test_the_kind_may_walk_again(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;

	F.again = 2;
	assert_int_equal(start(fx, 30), 0);
	await_state(fx, 30, OFS_TASK_DONE, &st);
	assert_int_equal(F.seen, 3 * NOBJ);
	assert_int_equal(F.ends, 3);
	assert_int_equal(F.begins, 1);
}

/* An error fails the task, its reason naming the object, its status
 * saying the code (the runner retries a failure, not a refusal). */
static void test_an_error_fails_the_task_naming_the_object(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;
	char hex[OFS_OID_HEX];

	F.fail_at = 7;
	assert_int_equal(start(fx, 40), 0);
	await_state(fx, 40, OFS_TASK_FAILED, &st);
	assert_int_equal(st.objects_done, 7);
	oid_to_hex(F.last, hex);
	assert_non_null(strstr(st.reason, "fake stopped at"));
	assert_non_null(strstr(st.reason, hex));
	assert_non_null(strstr(st.reason, ofs_strerror(-EIO)));
	assert_int_equal(st.error, -EIO);
}

static int sys_poll(void *arg, uint64_t ack, struct wbuf *reply)
{
	struct ofs_task_status st;

	memset(&st, 0, sizeof(st));
	st.state = OFS_TASK_RUNNING;
	st.objects_done = ack + 1000;
	*(int *)arg += 1;
	proto_encode_task_status(reply, &st, NULL, 0);
	return 0;
}

static void test_the_system_job_is_polled_where_it_lives(void **state)
{
	struct fixture *fx = *state;
	struct ofs_task_status st;
	int calls = 0;

	taskhost_set_system_job(fx->h, 0, sys_poll, &calls);
	poll_job(fx, 0, 5, 0, &st, NULL);
	assert_int_equal(calls, 1);
	assert_int_equal(st.objects_done, 1005);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_object_once_in_order_with_counts_and_cursor,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_cursor_resumes_after_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pause_holds_between_objects_and_resume_goes_on,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_stops_before_the_next_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_full_queue_holds_the_task_and_loses_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_pacing_keeps_the_rate_on_the_clock, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_kinds_retries_back_off_and_give_up_past_their_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_budget_a_task_starves_until_granted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_at_most_max_running_and_known_kinds_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_kind_may_walk_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_error_fails_the_task_naming_the_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_system_job_is_polled_where_it_lives, setup,
						teardown),
	};

	pthread_mutex_init(&F.mu, NULL);
	pthread_cond_init(&F.cv, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
