/* taskhost.c - the host of the background tasks (see taskhost.h). */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "server/taskhost.h"

#define MAX_KINDS 8

struct task {
	bool used;
	struct taskhost *h;
	const struct task_kind *kd;
	void *state;                     /* the kind's */
	uint64_t job;
	uint64_t rate;
	uint32_t flags;                  /* OFS_TASK_F_* */
	uint64_t allow;                  /* repairs it may still do (UINT64_MAX:
	                                    any; guarded by mu) */
	struct ofs_oid start;            /* cursor it started from */
	struct ofs_oid *only;            /* sorted: only these (--path) */
	uint32_t nonly;
	pthread_t thread;
	bool joined;
	/* guarded by taskhost.mu */
	uint8_t state_now;               /* enum ofs_task_state */
	bool pause, cancel;
	struct ofs_task_status st;
	struct ofs_task_finding *f;      /* unacknowledged, in seq order */
	uint32_t nf;
	uint64_t next_seq;
	/* the task thread's own */
	struct task_obj *batch;
	double pace_t0;                  /* pacing: start of the current run */
	uint64_t pace_bytes;             /* bytes read since pace_t0 */
	struct ofs_oid cur;              /* object being worked on */
	struct ofs_oid prev;             /* the cursor before it */
	char reason[sizeof(((struct ofs_task_status *)0)->reason)];
};

struct taskhost {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	uint64_t default_rate;
	const struct task_kind *kinds[MAX_KINDS];
	size_t nkinds;
	bool (*busy)(void *arg);         /* the catch-up has work */
	void *busy_arg;
	uint64_t sys_job;
	int (*sys_poll)(void *arg, uint64_t ack, struct wbuf *reply);
	void *sys_arg;
	struct taskhost_clock clock;
	pthread_mutex_t mu;
	pthread_cond_t cv;               /* state, pause, cancel, acks changed */
	struct task tasks[TASKHOST_KEPT];
};

static double real_now(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void real_sleep(void *arg, double s)
{
	struct timespec ts;

	(void)arg;
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

int taskhost_open(struct store *s, struct sidtab *t, struct replicator *r,
		  uint64_t default_rate, struct taskhost **out)
{
	struct taskhost *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->s = s;
	h->t = t;
	h->r = r;
	h->default_rate = default_rate ? default_rate : TASKHOST_DEFAULT_RATE;
	h->clock.now = real_now;
	h->clock.sleep = real_sleep;
	h->sys_job = UINT64_MAX;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	*out = h;
	return 0;
}

int taskhost_add_kind(struct taskhost *h, const struct task_kind *k)
{
	if (!k->init || !k->one || !k->release || !k->name)
		return -EINVAL;
	for (size_t i = 0; i < h->nkinds; i++)
		if (h->kinds[i]->kind == k->kind)
			return -EEXIST;
	if (h->nkinds == MAX_KINDS)
		return -ENOSPC;
	h->kinds[h->nkinds++] = k;
	return 0;
}

void taskhost_set_yield(struct taskhost *h, bool (*busy)(void *arg), void *arg)
{
	h->busy = busy;
	h->busy_arg = arg;
}

void taskhost_set_system_job(struct taskhost *h, uint64_t job,
			     int (*poll)(void *arg, uint64_t ack, struct wbuf *reply), void *arg)
{
	h->sys_job = job;
	h->sys_poll = poll;
	h->sys_arg = arg;
}

void taskhost_set_clock(struct taskhost *h, const struct taskhost_clock *c)
{
	h->clock.now = c && c->now ? c->now : real_now;
	h->clock.sleep = c && c->sleep ? c->sleep : real_sleep;
	h->clock.arg = c ? c->arg : NULL;
}

static void task_free(struct task *k)
{
	if (k->kd && k->state)
		k->kd->release(k->state);
	free(k->only);
	free(k->f);
	free(k->batch);
	memset(k, 0, sizeof(*k));
}

void taskhost_close(struct taskhost *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	for (int i = 0; i < TASKHOST_KEPT; i++)
		h->tasks[i].cancel = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	for (int i = 0; i < TASKHOST_KEPT; i++) {
		struct task *k = &h->tasks[i];
		if (k->used && !k->joined)
			pthread_join(k->thread, NULL);
		if (k->used)
			task_free(k);
	}
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* ---- for the kinds --------------------------------------------------------- */

struct store *task_store(const struct task *t) { return t->h->s; }
struct sidtab *task_sidtab(const struct task *t) { return t->h->t; }
struct replicator *task_replicator(const struct task *t) { return t->h->r; }
uint64_t task_job(const struct task *t) { return t->job; }
uint32_t task_flags(const struct task *t) { return t->flags; }
uint64_t task_rate(const struct task *t) { return t->rate; }
struct ofs_oid task_prev(const struct task *t) { return t->prev; }
void task_at(struct task *t, struct ofs_oid oid) { t->cur = oid; }
double task_now(const struct task *t) { return t->h->clock.now(t->h->clock.arg); }

const struct ofs_oid *task_only(const struct task *t, uint32_t *n)
{
	*n = t->nonly;
	return t->only;
}

static int cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, OFS_OID_LEN);
}

bool task_names(const struct task *t, struct ofs_oid oid)
{
	return !t->nonly || bsearch(&oid, t->only, t->nonly, sizeof(*t->only), cmp_oid);
}

/* Wait while paused or the queue is full; true when cancelled. Caller
 * holds mu. */
static bool hold(struct task *k)
{
	struct taskhost *h = k->h;

	while (!k->cancel && (k->pause || k->nf >= OFS_MAX_TASK_FINDINGS)) {
		if (k->pause && k->state_now == OFS_TASK_RUNNING)
			k->state_now = OFS_TASK_PAUSED;
		pthread_cond_wait(&h->cv, &h->mu);
	}
	if (k->state_now == OFS_TASK_PAUSED && !k->cancel) {
		k->state_now = OFS_TASK_RUNNING;
		k->pace_t0 = task_now(k);    /* a pause does not earn a burst */
		k->pace_bytes = 0;
	}
	return k->cancel;
}

int task_hold(struct task *t)
{
	bool stop;

	pthread_mutex_lock(&t->h->mu);
	stop = hold(t);
	pthread_mutex_unlock(&t->h->mu);
	return stop ? -ECANCELED : 0;
}

int task_throttle(struct task *t, uint64_t bytes)
{
	for (;;) {
		double due = t->pace_t0 + (double)t->pace_bytes / (double)t->rate;
		double wait = due - task_now(t);
		if (task_hold(t))
			return -ECANCELED;
		if (wait <= 0)
			break;
		/* (look at pause and cancel often) */
		t->h->clock.sleep(t->h->clock.arg, wait > 0.1 ? 0.1 : wait);
	}
	t->pace_bytes += bytes;
	return 0;
}

int task_sleep(struct task *t, long ms)
{
	for (long left = ms; left > 0; left -= 100) {
		if (task_hold(t))
			return -ECANCELED;
		t->h->clock.sleep(t->h->clock.arg, (left < 100 ? left : 100) / 1000.0);
	}
	return task_hold(t);
}

int task_backoff(struct task *t, struct backoff *bo, long budget_ms)
{
	if (bo->waited_ms >= budget_ms)
		return -ETIMEDOUT;
	return task_sleep(t, backoff_next(bo));
}

int task_enqueue(struct task *t, const struct ofs_task_finding *in)
{
	int rc = 0;

	pthread_mutex_lock(&t->h->mu);
	if (hold(t)) {
		rc = -ECANCELED;
	} else {
		struct ofs_task_finding *f = &t->f[t->nf++];
		*f = *in;
		f->seq = t->next_seq++;
	}
	pthread_mutex_unlock(&t->h->mu);
	return rc;
}

int task_take_budget(struct task *t)
{
	int rc = 0;

	if (t->flags & OFS_TASK_F_DRYRUN)
		return 0;
	pthread_mutex_lock(&t->h->mu);
	for (;;) {
		if (hold(t)) {
			rc = -ECANCELED;
			break;
		}
		if (t->allow > 0)
			break;
		t->st.starved = true;        /* the scheduler sees it and grants
		                                more, or pauses the job */
		pthread_cond_wait(&t->h->cv, &t->h->mu);
	}
	t->st.starved = false;
	pthread_mutex_unlock(&t->h->mu);
	return rc;
}

void task_count_repair(struct task *t)
{
	pthread_mutex_lock(&t->h->mu);
	t->st.repairs++;
	if (t->allow != UINT64_MAX && t->allow > 0)
		t->allow--;
	pthread_mutex_unlock(&t->h->mu);
}

void task_set_totals(struct task *t, uint64_t objects, uint64_t bytes)
{
	pthread_mutex_lock(&t->h->mu);
	if (objects != UINT64_MAX)
		t->st.objects_total = objects;
	if (bytes != UINT64_MAX)
		t->st.bytes_total = bytes;
	pthread_mutex_unlock(&t->h->mu);
}

void task_set_cursor(struct task *t, struct ofs_oid cursor)
{
	pthread_mutex_lock(&t->h->mu);
	t->st.cursor = cursor;
	pthread_mutex_unlock(&t->h->mu);
}

void task_set_reason(struct task *t, const char *why)
{
	snprintf(t->reason, sizeof(t->reason), "%s", why);
}

/* ---- the task thread --------------------------------------------------------- */

/* Copies behind here are caught up first: wait (bounded) while the
 * catch-up has work. */
static void yield_to_catch_up(struct task *k)
{
	struct taskhost *h = k->h;

	for (int waited = 0; h->busy && waited < TASKHOST_YIELD_MS && h->busy(h->busy_arg);
	     waited += 100) {
		if (task_hold(k))
			return;
		h->clock.sleep(h->clock.arg, 0.1);
	}
}

struct batch_ctx {
	struct task_obj *w;
	size_t n;
};

static int batch_add(struct ofs_oid oid, const struct ofs_attr *a, int decode_rc, void *arg)
{
	struct batch_ctx *b = arg;
	struct task_obj *w = &b->w[b->n++];

	w->oid = oid;
	w->decode_rc = decode_rc;
	if (a) {
		/* (the used parts only: a whole attr is 5 KB) */
		uint16_t np = a->nparts < OFS_MAX_STRIPES ? a->nparts : OFS_MAX_STRIPES;
		memcpy(&w->a, a, offsetof(struct ofs_attr, parts) + np * sizeof(a->parts[0]));
	}
	return 0;
}

/* The next batch of the task's own list (--path) after cursor: the
 * objects of it this server holds. */
static int walk_list(struct task *k, const struct ofs_oid *after, struct batch_ctx *b, bool *more)
{
	uint32_t i = 0;

	if (after) {
		while (i < k->nonly && memcmp(k->only[i].b, after->b, OFS_OID_LEN) <= 0)
			i++;
	}
	for (; i < k->nonly && b->n < TASKHOST_BATCH; i++) {
		struct task_obj *w = &b->w[b->n];
		int rc = store_getattr(k->h->s, k->only[i], &w->a);
		if (rc == -ENOENT)
			continue;            /* not one of this server's copies */
		if (rc && rc != -OFS_ECORRUPT)
			return rc;
		w->oid = k->only[i];
		w->decode_rc = rc;
		b->n++;
	}
	*more = i < k->nonly;
	return 0;
}

static void progress(struct task *k, struct ofs_oid done, uint64_t bytes)
{
	struct ofs_oid shown = k->kd->cursor ? k->kd->cursor(k->state, done) : done;

	pthread_mutex_lock(&k->h->mu);
	k->st.objects_done++;
	k->st.bytes_done += bytes;
	k->st.cursor = shown;
	if (k->st.objects_done > k->st.objects_total)
		k->st.objects_total = k->st.objects_done;
	if (k->st.bytes_done > k->st.bytes_total)
		k->st.bytes_total = k->st.bytes_done;
	pthread_mutex_unlock(&k->h->mu);
}

/* Walk from the cursor (*started: after it; else from the start) to the
 * end, or until the kind stops it. */
static int walk(struct task *k, struct ofs_oid *cursor, bool *started)
{
	bool more = true;
	int rc = 0;

	while (more && !rc) {
		struct batch_ctx b = { .w = k->batch };
		yield_to_catch_up(k);
		if (k->nonly)
			rc = walk_list(k, *started ? cursor : NULL, &b, &more);
		else
			rc = store_walk(k->h->s, *started ? cursor : NULL, TASKHOST_BATCH, batch_add,
					&b, &more);
		if (!rc && b.n && k->kd->batch)
			k->kd->batch(k, k->state, b.w, b.n);
		for (size_t i = 0; i < b.n && !rc; i++) {
			uint64_t bytes = 0;
			rc = task_hold(k);       /* (pause and cancel between objects too) */
			k->prev = *started ? *cursor : (struct ofs_oid){ { 0 } };
			k->cur = b.w[i].oid;
			if (!rc)
				rc = k->kd->one(k, k->state, &b.w[i], i, &bytes);
			if (rc == TASK_STOP)
				return 0;
			if (rc)
				break;
			*cursor = b.w[i].oid;
			*started = true;
			progress(k, *cursor, bytes);
		}
		if (b.n == 0 && (!k->nonly || !more))
			break;
	}
	return rc;
}

static void finish(struct task *k, uint8_t state, const char *reason, int rc)
{
	struct taskhost *h = k->h;

	pthread_mutex_lock(&h->mu);
	k->state_now = state;
	k->st.state = state;
	k->st.error = rc;
	if (reason)
		snprintf(k->st.reason, sizeof(k->st.reason), "%s", reason);
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static void *task_main(void *arg)
{
	struct task *k = arg;
	struct ofs_oid cursor = k->start;
	bool started = !oid_is_zero(cursor);
	double t_begin = task_now(k);
	int rc = 0;

	if (k->nonly)
		task_set_totals(k, k->nonly, UINT64_MAX);   /* (at most: some are elsewhere) */
	k->pace_t0 = task_now(k);
	if (k->kd->begin)
		rc = k->kd->begin(k, k->state);
	for (;;) {
		if (!rc)
			rc = walk(k, &cursor, &started);
		if (k->kd->end)
			rc = k->kd->end(k, k->state, rc, cursor);
		if (rc != TASK_AGAIN)
			break;
		started = false;             /* again, from the start */
		rc = 0;
	}
	if (rc == -ECANCELED) {
		finish(k, OFS_TASK_CANCELLED, "cancelled", 0);
	} else if (rc) {
		char why[sizeof(k->reason)], hex[OFS_OID_HEX];
		oid_to_hex(k->cur, hex);
		if (k->reason[0])
			snprintf(why, sizeof(why), "%s", k->reason);
		else
			snprintf(why, sizeof(why), "%s stopped at %s: %s", k->kd->name, hex,
				 ofs_strerror(rc));
		log_error("job %llu: %s", (unsigned long long)k->job, why);
		finish(k, OFS_TASK_FAILED, why, rc);
	} else {
		log_info("job %llu: %s done, %llu objects, %llu bytes, in %.3f s",
			 (unsigned long long)k->job, k->kd->name,
			 (unsigned long long)k->st.objects_done, (unsigned long long)k->st.bytes_done,
			 task_now(k) - t_begin);
		finish(k, OFS_TASK_DONE, NULL, 0);
	}
	free(k->batch);              /* a finished task is kept for its last polls */
	k->batch = NULL;
	return NULL;
}

/* ---- the table ---------------------------------------------------------------- */

static struct task *find(struct taskhost *h, uint64_t job)
{
	for (int i = 0; i < TASKHOST_KEPT; i++)
		if (h->tasks[i].used && h->tasks[i].job == job)
			return &h->tasks[i];
	return NULL;
}

static bool active(const struct task *k)
{
	return k->used && (k->state_now == OFS_TASK_RUNNING || k->state_now == OFS_TASK_PAUSED);
}

/* A slot for a new task: a free one, or the oldest finished one. Caller
 * holds mu. */
static struct task *slot(struct taskhost *h)
{
	struct task *best = NULL;

	for (int i = 0; i < TASKHOST_KEPT; i++) {
		struct task *k = &h->tasks[i];
		if (!k->used)
			return k;
		if (!active(k) && (!best || k->job < best->job))
			best = k;
	}
	return best;
}

static const struct task_kind *kind_of(const struct taskhost *h, uint8_t kind)
{
	for (size_t i = 0; i < h->nkinds; i++)
		if (h->kinds[i]->kind == kind)
			return h->kinds[i];
	return NULL;
}

/* Fill a free slot for q and start its thread. Caller holds mu. */
static int launch(struct taskhost *h, struct task *k, const struct task_kind *kd,
		  const struct ofs_task_req *q)
{
	int rc;

	k->used = true;
	k->h = h;
	k->kd = kd;
	k->job = q->job;
	k->rate = q->rate ? q->rate : h->default_rate;
	k->flags = q->flags;
	k->allow = q->budget;        /* (UINT64_MAX: no cap; 0: none yet) */
	k->start = q->cursor;
	k->state_now = OFS_TASK_RUNNING;
	k->st.state = OFS_TASK_RUNNING;
	k->st.cursor = q->cursor;
	k->st.objects_done = q->objects_base;   /* counts go on from the cursor */
	k->st.bytes_done = q->bytes_base;
	k->next_seq = 1;
	k->f = calloc(OFS_MAX_TASK_FINDINGS, sizeof(*k->f));
	k->batch = calloc(TASKHOST_BATCH, sizeof(*k->batch));
	if (q->noids && k->f && k->batch) {
		k->only = malloc((size_t)q->noids * sizeof(*k->only));
		if (k->only) {
			memcpy(k->only, q->oids, (size_t)q->noids * OFS_OID_LEN);
			qsort(k->only, q->noids, sizeof(*k->only), cmp_oid);
			k->nonly = q->noids;
		}
	}
	if (!k->f || !k->batch || (q->noids && !k->only))
		rc = -ENOMEM;
	else
		rc = kd->init(k, kd->arg, q, &k->state);
	if (!rc && pthread_create(&k->thread, NULL, task_main, k) != 0)
		rc = -EAGAIN;
	if (rc)
		task_free(k);
	return rc;
}

int taskhost_start(struct taskhost *h, const struct ofs_task_req *q)
{
	const struct task_kind *kd = kind_of(h, q->kind);
	struct task *k;
	int running = 0, rc;

	if (!kd)
		return -EINVAL;
	pthread_mutex_lock(&h->mu);
	k = find(h, q->job);
	if (k && (active(k) || k->state_now == OFS_TASK_DONE)) {
		k->allow = q->budget;        /* a new scheduler's word on repairs stands */
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		return 0;                    /* already running, or done: poll it */
	}
	for (int i = 0; i < TASKHOST_KEPT; i++)
		running += active(&h->tasks[i]);
	if (!k && running < TASKHOST_MAX_RUNNING)
		k = slot(h);
	if (running >= TASKHOST_MAX_RUNNING || !k) {
		pthread_mutex_unlock(&h->mu);
		return -EBUSY;
	}
	if (k->used) {
		if (!k->joined)
			pthread_join(k->thread, NULL);   /* finished: returns at once */
		task_free(k);
	}
	rc = launch(h, k, kd, q);
	pthread_mutex_unlock(&h->mu);
	if (!rc)
		log_info("job %llu: %s task started, %llu bytes/s%s%s", (unsigned long long)q->job,
			 kd->name, (unsigned long long)(q->rate ? q->rate : h->default_rate),
			 q->flags & OFS_TASK_F_REPAIR ? ", repair" : "",
			 q->flags & OFS_TASK_F_DRYRUN ? " (dry run)" : "");
	return rc;
}

int taskhost_poll(struct taskhost *h, uint64_t job, uint64_t ack, uint64_t budget,
		  struct wbuf *reply)
{
	struct task *k;
	uint32_t drop = 0;

	if (h->sys_poll && job == h->sys_job)
		return h->sys_poll(h->sys_arg, ack, reply);
	pthread_mutex_lock(&h->mu);
	k = find(h, job);
	if (!k) {
		pthread_mutex_unlock(&h->mu);
		return -ENOENT;
	}
	if (budget && k->allow != UINT64_MAX) {
		k->allow = budget == UINT64_MAX || k->allow + budget < k->allow ? UINT64_MAX
										: k->allow + budget;
		pthread_cond_broadcast(&h->cv);
	}
	while (drop < k->nf && k->f[drop].seq <= ack)
		drop++;
	if (drop) {
		memmove(k->f, k->f + drop, (k->nf - drop) * sizeof(*k->f));
		k->nf -= drop;
		pthread_cond_broadcast(&h->cv);
	}
	k->st.state = k->state_now;
	proto_encode_task_status(reply, &k->st, k->f, k->nf);
	pthread_mutex_unlock(&h->mu);
	return wbuf_error(reply);
}

int taskhost_ctl(struct taskhost *h, uint64_t job, uint8_t action)
{
	struct task *k;

	pthread_mutex_lock(&h->mu);
	k = find(h, job);
	if (!k) {
		pthread_mutex_unlock(&h->mu);
		return -ENOENT;
	}
	switch (action) {
	case OFS_TASK_PAUSE:
		k->pause = true;
		if (k->state_now == OFS_TASK_RUNNING)
			k->state_now = OFS_TASK_PAUSED;
		break;
	case OFS_TASK_RESUME:
		k->pause = false;
		break;
	case OFS_TASK_CANCEL:
	case OFS_TASK_FORGET:
		k->cancel = true;
		break;
	default:
		pthread_mutex_unlock(&h->mu);
		return -EINVAL;
	}
	pthread_cond_broadcast(&h->cv);
	if (action == OFS_TASK_FORGET) {
		pthread_t th = k->thread;
		bool join = !k->joined;
		k->joined = true;
		pthread_mutex_unlock(&h->mu);
		if (join)
			pthread_join(th, NULL);
		pthread_mutex_lock(&h->mu);
		task_free(k);
	}
	pthread_mutex_unlock(&h->mu);
	return 0;
}
