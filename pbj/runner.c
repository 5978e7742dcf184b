/* runner.c - running one job to its end (see runner.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "ofs.h"
#include "ofs_error.h"
#include "proto.h"
#include "runner.h"

#define CALL_MS 10000                /* one request to a server */
#define LEASE_TTL_MS 10000

/* What the runner keeps per task between polls. */
struct live {
	struct pbj_task t;
	char address[OFS_SERVER_ADDR_LEN];
	struct conn *c;
	bool started;                    /* TASK_START accepted by this server run */
	uint64_t acked;                  /* findings stored up to this seq */
	int64_t retry_at_ns;             /* do not try before */
	uint8_t sent_ctl;                /* last pause/resume sent */
	struct ofs_oid *only;            /* --path: the objects on this server */
	uint32_t nonly;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int fetch_table(const struct pbj_runner_opts *o, struct ofs_server **e, size_t *n)
{
	int rc = -OFS_EUNREACHABLE;

	for (size_t i = 0; i < o->ncluster; i++) {
		struct ofs_req q = { .op = OFS_OP_SERVERS };
		struct conn *c = NULL;
		uint8_t *b = NULL;
		size_t bn = 0;

		if (conn_open(o->cluster[i], &c))
			continue;
		conn_set_timeout(c, CALL_MS);
		rc = conn_call(c, &q, &b, &bn);
		if (!rc)
			rc = proto_decode_servers(b, bn, true, NULL, e, n);
		free(b);
		conn_close(c);
		if (!rc)
			return 0;
	}
	return conn_is_transport_error(rc) ? -OFS_EUNREACHABLE : rc;
}

/* The SIDs a job is limited to (its args' "servers"), or n = 0: all. */
static int job_servers(const struct pbj_job *j, struct ofs_sid *out, size_t max, size_t *n)
{
	json_t *root, *arr, *v;
	size_t i;

	*n = 0;
	if (!j->args[0])
		return 0;
	root = json_loads(j->args, 0, NULL);
	if (!root)
		return -OFS_ECORRUPT;
	arr = json_object_get(root, "servers");
	json_array_foreach(arr, i, v) {
		if (*n < max && json_is_string(v) && sid_from_hex(json_string_value(v), &out[*n]) == 0)
			(*n)++;
	}
	json_decref(root);
	return 0;
}

/* ---- --path: the objects of some files and directories ---------------------- */

struct objset {
	struct live *l;                  /* one per server, as make_tasks builds them */
	size_t n;
	int rc;
};

static void objset_add(struct objset *os, const struct ofs_handle *h)
{
	for (uint8_t i = 0; i < h->nsids && i < OFS_MAX_REPLICAS && !os->rc; i++) {
		for (size_t k = 0; k < os->n; k++) {
			struct live *l = &os->l[k];
			struct ofs_oid *p;
			if (!sid_eq(l->t.server, h->sids[i]))
				continue;
			if (l->nonly == OFS_MAX_TASK_OIDS) {
				os->rc = -OFS_ETOOBIG;
				return;
			}
			p = realloc(l->only, ((size_t)l->nonly + 1) * sizeof(*p));
			if (!p) {
				os->rc = -ENOMEM;
				return;
			}
			l->only = p;
			l->only[l->nonly++] = h->oid;
		}
	}
}

struct walk_ctx {
	struct ofs_client *c;
	struct objset *os;
	const char *dir;
	int depth;
};

static int collect(struct ofs_client *c, const char *path, struct objset *os, int depth);

static int collect_entry(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct walk_ctx *wc = arg;
	char *child;
	int rc;

	(void)d;
	if (asprintf(&child, "%s%s%s", wc->dir, strcmp(wc->dir, "/") ? "/" : "", name) < 0)
		return -ENOMEM;
	rc = collect(wc->c, child, wc->os, wc->depth + 1);
	free(child);
	return rc == -ENOENT ? 0 : rc;       /* (removed meanwhile) */
}

/* The objects of path: a file's metafile and dfiles; a directory, its
 * dirdata and, recursively, everything under it. */
static int collect(struct ofs_client *c, const char *path, struct objset *os, int depth)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_handle h;
	int rc;

	if (!a)
		return -ENOMEM;
	if (depth > 256) {
		free(a);
		return -ELOOP;
	}
	rc = ofs_stat(c, path, a, &h);
	if (!rc) {
		objset_add(os, &h);
		for (uint16_t i = 0; i < a->nparts; i++)
			objset_add(os, &a->parts[i]);
		rc = os->rc;
	}
	if (!rc && a->type == OFS_OBJ_DIRECTORY) {
		struct walk_ctx wc = { .c = c, .os = os, .dir = path, .depth = depth };
		rc = ofs_readdir(c, path, collect_entry, &wc);
	}
	free(a);
	return rc;
}

/* Limit the tasks to the objects of the job's "paths"; tasks of servers
 * that hold none of them are dropped. No paths: nothing to do. */
static int apply_paths(struct pbj_db *db, const struct pbj_job *j,
		       const struct pbj_runner_opts *o, struct live *l, size_t *n)
{
	json_t *root, *paths, *v;
	struct ofs_client *c = NULL;
	struct objset os = { .l = l, .n = *n };
	size_t i, kept = 0;
	int rc = 0;

	if (!j->args[0])
		return 0;
	root = json_loads(j->args, 0, NULL);
	if (!root)
		return -OFS_ECORRUPT;
	paths = json_object_get(root, "paths");
	if (!json_array_size(paths)) {
		json_decref(root);
		return 0;
	}
	rc = ofs_client_open(o->cluster, o->ncluster, &c);
	json_array_foreach(paths, i, v) {
		if (rc)
			break;
		if (json_is_string(v))
			rc = collect(c, json_string_value(v), &os, 0);
	}
	ofs_client_close(c);
	json_decref(root);
	if (rc)
		return rc;
	/* A server that holds none of the objects has nothing to do: its
	 * task ends at once (stored, so that status shows it). */
	for (i = 0; i < *n && !rc; i++) {
		if (l[i].nonly) {
			l[kept++] = l[i];
			continue;
		}
		if (!pbj_state_final(l[i].t.state)) {
			l[i].t.state = PBJ_SUCCEEDED;
			snprintf(l[i].t.reason, sizeof(l[i].t.reason),
				 "holds none of the objects of the paths");
			rc = pbj_task_put(db, &l[i].t);
		}
	}
	*n = kept;
	return rc;
}

struct load_ctx {
	struct live *l;
	size_t n, cap;
};

static int load_task(const struct pbj_task *t, void *arg)
{
	struct load_ctx *lc = arg;

	if (lc->n == lc->cap)
		return 0;
	memset(&lc->l[lc->n], 0, sizeof(lc->l[0]));
	lc->l[lc->n++].t = *t;
	return 0;
}

/* The tasks of a job: those stored, else one per server in service. */
static int make_tasks(struct pbj_db *db, const struct pbj_job *j, const struct pbj_runner_opts *o,
		      struct live **out, size_t *nout)
{
	struct ofs_server *e = NULL;
	struct ofs_sid only[OFS_MAX_SERVERS];
	size_t ne = 0, nonly = 0;
	struct load_ctx lc = { 0 };
	int rc = fetch_table(o, &e, &ne);

	if (rc)
		return rc;
	rc = job_servers(j, only, OFS_MAX_SERVERS, &nonly);
	lc.cap = ne ? ne : 1;
	lc.l = calloc(lc.cap, sizeof(*lc.l));
	if (!lc.l)
		rc = -ENOMEM;
	if (!rc)
		rc = pbj_task_list(db, j->id, load_task, &lc);
	if (!rc && lc.n == 0) {
		for (size_t i = 0; i < ne; i++) {
			bool want = nonly == 0 ? e[i].state != OFS_SERVER_OUT : false;
			for (size_t k = 0; k < nonly; k++)
				want |= sid_eq(only[k], e[i].sid);
			if (!want)
				continue;
			memset(&lc.l[lc.n], 0, sizeof(lc.l[0]));
			lc.l[lc.n].t.job = j->id;
			lc.l[lc.n].t.server = e[i].sid;
			lc.l[lc.n].t.state = PBJ_QUEUED;
			rc = pbj_task_put(db, &lc.l[lc.n].t);
			if (rc)
				break;
			lc.n++;
		}
	}
	/* Addresses from the table (a task's server may have moved). */
	for (size_t k = 0; k < lc.n && !rc; k++)
		for (size_t i = 0; i < ne; i++)
			if (sid_eq(e[i].sid, lc.l[k].t.server))
				snprintf(lc.l[k].address, sizeof(lc.l[k].address), "%s", e[i].address);
	free(e);
	if (!rc)
		rc = apply_paths(db, j, o, lc.l, &lc.n);
	if (rc) {
		free(lc.l);
		return rc;
	}
	*out = lc.l;
	*nout = lc.n;
	return 0;
}

static void drop_conn(struct live *l)
{
	conn_close(l->c);
	l->c = NULL;
	l->started = false;
}

static int call(struct live *l, struct ofs_req *q, uint8_t **b, size_t *bn)
{
	int rc;

	if (!l->c) {
		if (!l->address[0])
			return -OFS_EUNREACHABLE;
		rc = conn_open(l->address, &l->c);
		if (rc)
			return rc;
		conn_set_timeout(l->c, CALL_MS);
	}
	rc = conn_call(l->c, q, b, bn);
	if (conn_is_transport_error(rc))
		drop_conn(l);
	return rc;
}

/* PBJ_MAX_RETRIES, or OFS_PBJ_MAX_RETRIES from the environment (tests). */
static int max_retries(void)
{
	const char *e = getenv("OFS_PBJ_MAX_RETRIES");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v < 1000 ? (int)v : PBJ_MAX_RETRIES;
}

/* A failed attempt: try again later, or give up. */
static void attempt_failed(struct live *l, const char *what, int rc)
{
	char hex[OFS_OID_HEX];

	sid_to_hex(l->t.server, hex);
	l->t.retries++;
	snprintf(l->t.reason, sizeof(l->t.reason), "%s on %.32s: %s", what, hex, ofs_strerror(rc));
	if (l->t.retries >= max_retries())
		l->t.state = PBJ_FAILED;
	l->retry_at_ns = now_ns() + (int64_t)(l->t.retries < 6 ? 1 << l->t.retries : 32) * 100000000;
	drop_conn(l);
}

struct poll_ctx {
	struct live *l;
	struct pbj_finding *f;
	size_t n;
	uint64_t max_seq;
};

static int take_finding(const struct ofs_task_finding *tf, void *arg)
{
	struct poll_ctx *pc = arg;
	struct pbj_finding *f;

	if (tf->seq <= pc->l->acked)
		return 0;                    /* stored already (its ack was lost) */
	f = &pc->f[pc->n++];
	memset(f, 0, sizeof(*f));
	f->job = pc->l->t.job;
	f->server = tf->server;
	f->oid = tf->oid;
	snprintf(f->kind, sizeof(f->kind), "%s", tf->kind);
	snprintf(f->detail, sizeof(f->detail), "%s", tf->detail);
	if (tf->seq > pc->max_seq)
		pc->max_seq = tf->seq;
	return 0;
}

/* One round for one task: start it if needed, send pause/resume, poll. */
static int step(struct pbj_db *db, const struct pbj_job *j, struct live *l,
		struct pbj_finding *fbuf)
{
	struct ofs_req q;
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc;

	if (pbj_state_final(l->t.state) || now_ns() < l->retry_at_ns)
		return 0;
	if (!l->started) {
		memset(&q, 0, sizeof(q));
		q.op = OFS_OP_TASK_START;
		q.task.job = (uint64_t)j->id;
		q.task.kind = OFS_TASK_SCRUB;
		q.task.rate = j->rate;
		q.task.cursor = l->t.cursor;
		q.task.objects_base = oid_is_zero(l->t.cursor) ? 0 : l->t.objects_done;
		q.task.bytes_base = oid_is_zero(l->t.cursor) ? 0 : l->t.bytes_done;
		q.task.noids = l->nonly;
		q.task.oids = (const uint8_t *)l->only;
		rc = call(l, &q, NULL, NULL);
		if (rc == -EBUSY)
			return 0;            /* the server runs enough tasks: later */
		if (rc) {
			attempt_failed(l, "starting the task", rc);
			return pbj_task_put(db, &l->t);
		}
		l->started = true;
		l->acked = 0;            /* a new task on the server counts from 1 */
		l->sent_ctl = 0;
		l->t.state = PBJ_RUNNING;
	}
	if (j->state == PBJ_PAUSED || j->state == PBJ_RUNNING) {
		uint8_t want = j->state == PBJ_PAUSED ? OFS_TASK_PAUSE : OFS_TASK_RESUME;
		if (l->sent_ctl != want && !(want == OFS_TASK_RESUME && l->sent_ctl == 0)) {
			memset(&q, 0, sizeof(q));
			q.op = OFS_OP_TASK_CTL;
			q.task.job = (uint64_t)j->id;
			q.task.action = want;
			if (call(l, &q, NULL, NULL) == 0)
				l->sent_ctl = want;
		}
	}
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_TASK_POLL;
	q.task.job = (uint64_t)j->id;
	q.task.ack = l->acked;
	rc = call(l, &q, &b, &bn);
	if (rc == -ENOENT) {
		l->started = false;      /* the server restarted: start again from the cursor */
		return 0;
	}
	if (rc) {
		attempt_failed(l, "polling the task", rc);
		return pbj_task_put(db, &l->t);
	}
	{
		struct poll_ctx pc = { .l = l, .f = fbuf };
		struct ofs_task_status st;
		rc = proto_decode_task_status(b, bn, &st, take_finding, &pc);
		free(b);
		if (rc) {
			attempt_failed(l, "reading the task's status", rc);
			return pbj_task_put(db, &l->t);
		}
		l->t.objects_done = st.objects_done;
		l->t.objects_total = st.objects_total;
		l->t.bytes_done = st.bytes_done;
		l->t.bytes_total = st.bytes_total;
		l->t.cursor = st.cursor;
		l->t.updated_ns = now_ns();
		switch (st.state) {
		case OFS_TASK_DONE:
			l->t.state = PBJ_SUCCEEDED;
			break;
		case OFS_TASK_FAILED:
			snprintf(l->t.reason, sizeof(l->t.reason), "%s", st.reason);
			l->t.retries++;
			l->started = false;       /* try again from the cursor... */
			if (l->t.retries >= max_retries())
				l->t.state = PBJ_FAILED;   /* ...a bounded number of times */
			break;
		case OFS_TASK_CANCELLED:
			if (j->state == PBJ_CANCELLED)
				l->t.state = PBJ_CANCELLED;
			else
				l->started = false;
			break;
		case OFS_TASK_PAUSED:
			l->t.state = PBJ_PAUSED;
			break;
		default:
			l->t.state = PBJ_RUNNING;
			break;
		}
		/* Cursor and findings in one transaction, then the ack. */
		rc = pbj_progress(db, &l->t, 1, pc.f, pc.n);
		if (!rc && pc.max_seq > l->acked)
			l->acked = pc.max_seq;
		return rc;
	}
}

static void forget(struct live *l, int64_t job, uint8_t action)
{
	struct ofs_req q;

	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_TASK_CTL;
	q.task.job = (uint64_t)job;
	q.task.action = action;
	(void)call(l, &q, NULL, NULL);
}

int pbj_run(struct pbj_db *db, int64_t id, const struct pbj_runner_opts *o)
{
	struct pbj_job *j = malloc(sizeof(*j));
	struct pbj_finding *fbuf = calloc(OFS_MAX_TASK_FINDINGS, sizeof(*fbuf));
	struct live *l = NULL;
	size_t n = 0;
	int rc;

	if (!j || !fbuf) {
		free(j);
		free(fbuf);
		return -ENOMEM;
	}
	rc = pbj_job_get(db, id, j);
	if (!rc && pbj_state_final(j->state))
		goto out;
	if (!rc)
		rc = make_tasks(db, j, o, &l, &n);
	if (!rc && j->state == PBJ_QUEUED) {
		rc = pbj_job_set_state(db, id, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL);
		if (rc == -EAGAIN)
			rc = 0;          /* moved by someone else: follow what it says */
	}
	while (!rc) {
		struct pbj_sum sum;
		bool all_final = true, any_failed = false;
		const char *why = NULL;

		if (o->stop && *o->stop) {
			rc = -EINTR;
			break;
		}
		if (o->lease_holder) {
			bool got = false;
			rc = pbj_lease_take(db, o->lease_holder, LEASE_TTL_MS, &got, NULL);
			if (!rc && !got)
				rc = -EBUSY;     /* another scheduler took over */
			if (rc)
				break;
		}
		rc = pbj_job_get(db, id, j);
		if (rc)
			break;
		if (j->state == PBJ_CANCELLED) {
			for (size_t i = 0; i < n; i++) {
				forget(&l[i], id, OFS_TASK_FORGET);
				if (!pbj_state_final(l[i].t.state)) {
					l[i].t.state = PBJ_CANCELLED;
					pbj_task_put(db, &l[i].t);
				}
			}
			break;
		}
		if (j->state == PBJ_QUEUED)
			j->state = PBJ_RUNNING;
		for (size_t i = 0; i < n && !rc; i++)
			rc = step(db, j, &l[i], fbuf);
		if (rc)
			break;
		for (size_t i = 0; i < n; i++) {
			all_final &= pbj_state_final(l[i].t.state);
			if (l[i].t.state == PBJ_FAILED) {
				any_failed = true;
				why = l[i].t.reason;
			}
		}
		if (o->progress && pbj_summarize(db, id, &sum) == 0)
			o->progress(j, &sum, o->arg);
		if (all_final) {
			for (size_t i = 0; i < n; i++)
				forget(&l[i], id, OFS_TASK_FORGET);
			rc = pbj_job_set_state(db, id, any_failed ? PBJ_FAILED : PBJ_SUCCEEDED,
					       (1u << PBJ_RUNNING) | (1u << PBJ_PAUSED) |
					       (1u << PBJ_QUEUED), any_failed ? why : NULL);
			if (rc == -EAGAIN)
				rc = 0;      /* cancelled meanwhile: that stands */
			break;
		}
		sleep_ms(PBJ_POLL_MS);
	}
out:
	for (size_t i = 0; i < n; i++) {
		conn_close(l[i].c);
		free(l[i].only);
	}
	free(l);
	free(fbuf);
	free(j);
	return rc;
}

static int sum_task(const struct pbj_task *t, void *arg)
{
	struct pbj_sum *s = arg;

	s->objects_done += t->objects_done;
	s->objects_total += t->objects_total;
	s->bytes_done += t->bytes_done;
	s->bytes_total += t->bytes_total;
	s->tasks++;
	s->tasks_done += pbj_state_final(t->state);
	return 0;
}

static int count_finding(const struct pbj_finding *f, void *arg)
{
	(void)f;
	((struct pbj_sum *)arg)->findings++;
	return 0;
}

int pbj_summarize(struct pbj_db *db, int64_t id, struct pbj_sum *sum)
{
	int rc;

	memset(sum, 0, sizeof(*sum));
	rc = pbj_task_list(db, id, sum_task, sum);
	if (!rc)
		rc = pbj_finding_list(db, id, NULL, NULL, NULL, count_finding, sum);
	return rc;
}
