/* runner.c - running one job to its end (see runner.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/ofs.h"
#include "lib/backoff.h"
#include "lib/conn.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "pbj/jobargs.h"
#include "pbj/jobtype.h"
#include "pbj/plan.h"
#include "pbj/runner.h"

#define STATS_MS 30000                   /* STATS walks a server's records */
#define CALL_MS 10000                /* one request to a server */
#define LEASE_TTL_MS 10000
#define RETRY_FIRST_MS 200               /* a task's first retry, then doubled ... */
#define RETRY_CAP_MS 4000                /* ... up to this (PBJ_MAX_RETRIES of them:
                                            about a minute) */

/* What the runner keeps per task between polls. */
struct live {
	struct pbj_task t;
	char address[OFS_SERVER_ADDR_LEN];
	struct conn *c;
	bool started;                    /* TASK_START accepted by this server run */
	uint64_t acked;                  /* findings stored up to this seq */
	int64_t retry_at_ns;             /* do not try before */
	struct backoff bo;               /* how long after a failed attempt */
	int refused;                     /* the refusal that failed the task (0:
	                                    none): its server is not asked again */
	uint8_t sent_ctl;                /* last pause/resume sent */
	struct ofs_oid *only;            /* --path: the objects on this server */
	uint32_t nonly;
	bool none;                       /* the job names no object at all */
	int max_retries;                 /* attempts before the job fails */
	uint64_t owed;                   /* repairs granted and not yet seen done */
	uint64_t granted;                /* repairs granted to this run of the task */
	uint64_t repairs_seen;           /* the run's repairs, as its last poll said */
	uint64_t repairs_base;           /* ... as its first poll said (a task
	                                    adopted from a scheduler that died
	                                    counts from there) */
	bool polled;                     /* this run of the task polled once */
	bool starved;                    /* waiting for more */
	bool unlimited;                  /* no cap */
	bool ran;                        /* started once in this run (rebalance:
	                                    a restart plans again) */
	bool silent;                     /* the last failed attempt: the server
	                                    did not answer (a transport error) */
	int64_t silent_since_ns;         /* wall clock of the first of those in a
	                                    row (0: it answered last) */
};

#define GRANT_CHUNK 16                   /* repairs granted to a task at once */

/* The job's repair cap, shared out among its tasks in chunks so that the
 * whole job never repairs more than the cap before a human says so. */
struct cap {
	uint64_t allowed;                /* 0: no cap */
	uint64_t stored;                 /* repairs done (at the start: repaired
	                                    findings in the store) */
	uint64_t step;                   /* the cap as submitted */
	bool hit;                        /* the job was paused at the cap */
	/* rebalance: the plan the tasks start with (planned again from the
	 * usage as it is when a task starts over) */
	const struct pbj_runner_opts *o;
	struct plan *plan;
	bool planned;
	int poll_ms;                     /* the wait after this round */
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
	return conn_fetch_table(o->cluster, o->ncluster, CALL_MS, e, n, NULL);
}

/* The job's numeric arguments; 0 when they do not decode (the job then
 * runs without them, as it always did). */
struct job_ints {
	int64_t from_job, max_repairs, threshold;
	bool metadata_only;
};

static struct job_ints job_ints(const struct pbj_job *j)
{
	struct pbj_job_args *a = malloc(sizeof(*a));
	struct job_ints v = { 0 };

	if (a && pbj_job_args_decode(j->args, a) == 0) {
		v.from_job = a->from_job;
		v.max_repairs = a->max_repairs;
		v.threshold = a->threshold;
		v.metadata_only = a->metadata_only;
	}
	free(a);
	return v;
}

/* The SIDs a job is limited to (its args' "servers"), or n = 0: all. */
static int job_servers(const struct pbj_job *j, struct ofs_sid *out, size_t max, size_t *n)
{
	struct pbj_job_args *a = malloc(sizeof(*a));
	int rc;

	*n = 0;
	if (!a)
		return -ENOMEM;
	rc = pbj_job_args_decode(j->args, a);
	for (size_t i = 0; !rc && i < a->nservers; i++) {
		if (*n < max && sid_from_hex(a->servers[i], &out[*n]) == 0)
			(*n)++;
	}
	free(a);
	return rc;
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

#define WHAT_LEN 160              /* what failed in making a job's tasks */

/* Limit the tasks to the objects of the job's "paths"; tasks of servers
 * that hold none of them are dropped. No paths: nothing to do. On an
 * error of the cluster or of a path, what names it. */
static int apply_paths(struct pbj_db *db, const struct pbj_job *j,
		       const struct pbj_runner_opts *o, struct live *l, size_t *n, char *what)
{
	struct pbj_job_args *a = malloc(sizeof(*a));
	struct ofs_client *c = NULL;
	struct objset os = { .l = l, .n = *n };
	size_t i, kept = 0;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = pbj_job_args_decode(j->args, a);
	if (rc || a->npaths == 0) {
		free(a);
		return rc;
	}
	rc = ofs_client_open(o->cluster, o->ncluster, &c);
	if (rc)
		snprintf(what, WHAT_LEN, "resolving the job's paths");
	for (i = 0; i < a->npaths && !rc; i++) {
		rc = collect(c, a->paths[i], &os, 0);
		if (rc)
			snprintf(what, WHAT_LEN, "resolving --path %.120s", a->paths[i]);
	}
	ofs_client_close(c);
	free(a);
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

/* repair --job: the objects of that job's findings not repaired yet. A
 * copy's own problem goes to the server holding that copy only; others
 * (a copy missing elsewhere, structure) to every server, with the other
 * object the finding names (an owner is checked where it lives). */
struct from_item {
	struct ofs_oid oid;
	struct ofs_sid server;           /* zero: every server */
};

struct from_ctx {
	struct from_item *it;
	size_t n, cap;
};

/* A kind whose finding is about the copy on its server (a repair job
 * from it goes to that server), not about an object's structure. */
static bool holder_kind(int kind)
{
	switch (kind) {
	case OFS_FINDING_CHECKSUM_MISMATCH: case OFS_FINDING_SIZE_MISMATCH:
	case OFS_FINDING_UNREADABLE: case OFS_FINDING_RECORD_CORRUPT:
	case OFS_FINDING_REPLICA_CONFLICT: case OFS_FINDING_STALE_REPLICA:
		return true;
	default:
		return false;
	}
}

static int from_add(struct from_ctx *fc, struct ofs_oid oid, const struct ofs_sid *server)
{
	if (fc->n == fc->cap) {
		size_t cap = fc->cap ? fc->cap * 2 : 64;
		struct from_item *p = realloc(fc->it, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fc->it = p;
		fc->cap = cap;
	}
	fc->it[fc->n].oid = oid;
	if (server)
		fc->it[fc->n].server = *server;
	else
		memset(&fc->it[fc->n].server, 0, sizeof(fc->it[fc->n].server));
	fc->n++;
	return 0;
}

static int from_finding(const struct pbj_finding *f, void *arg)
{
	struct from_ctx *fc = arg;
	int rc;

	if (f->repaired)
		return 0;
	if (holder_kind(f->kind))
		return from_add(fc, f->oid, &f->server);
	rc = from_add(fc, f->oid, NULL);
	if (!rc && !oid_is_zero(f->ref))
		rc = from_add(fc, f->ref, NULL);
	return rc;
}

static int cmp_oid_p(const void *a, const void *b)
{
	return memcmp(a, b, OFS_OID_LEN);
}

static int apply_from_job(struct pbj_db *db, const struct pbj_job *j, struct live *l, size_t n)
{
	int64_t from = job_ints(j).from_job;
	struct from_ctx fc = { 0 };
	int rc;

	if (from <= 0)
		return 0;
	rc = pbj_finding_list(db, from, NULL, OFS_FINDING_NONE, NULL, from_finding, &fc);
	for (size_t i = 0; i < n && !rc; i++) {
		uint32_t m = 0;
		l[i].only = fc.n ? malloc(fc.n * sizeof(*l[i].only)) : NULL;
		if (fc.n && !l[i].only) {
			rc = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < fc.n; k++)
			if (sid_is_zero(fc.it[k].server) || sid_eq(fc.it[k].server, l[i].t.server))
				l[i].only[m++] = fc.it[k].oid;
		/* sorted, once each (none: a job that found nothing) */
		if (m)
			qsort(l[i].only, m, sizeof(*l[i].only), cmp_oid_p);
		uint32_t u = 0;
		for (uint32_t k = 0; k < m; k++)
			if (u == 0 || !oid_eq(l[i].only[u - 1], l[i].only[k]))
				l[i].only[u++] = l[i].only[k];
		if (u > OFS_MAX_TASK_OIDS)
			rc = -OFS_ETOOBIG;
		l[i].nonly = u;
		l[i].none = u == 0;
	}
	free(fc.it);
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

/* The tasks of a job: those stored, else one per server in service. On
 * an error of the cluster or of the job's arguments (not of the store),
 * what names the step ("" otherwise). */
static int make_tasks(struct pbj_db *db, const struct pbj_job *j, const struct pbj_runner_opts *o,
		      struct live **out, size_t *nout, char what[WHAT_LEN])
{
	struct ofs_server *e = NULL;
	struct ofs_sid only[OFS_MAX_SERVERS];
	size_t ne = 0, nonly = 0;
	struct load_ctx lc = { 0 };
	int rc = fetch_table(o, &e, &ne);

	snprintf(what, WHAT_LEN, "reading the server table");
	if (rc)
		return rc;
	snprintf(what, WHAT_LEN, "reading the job's arguments");
	rc = job_servers(j, only, OFS_MAX_SERVERS, &nonly);
	if (rc) {
		free(e);
		return rc;
	}
	what[0] = '\0';
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
		rc = apply_paths(db, j, o, lc.l, &lc.n, what);
	if (!rc) {
		rc = apply_from_job(db, j, lc.l, lc.n);
		if (rc)
			snprintf(what, WHAT_LEN, "reading the findings of the job it repairs");
	}
	if (rc) {
		free(lc.l);
		return rc;
	}
	for (size_t k = 0; k < lc.n; k++) {
		lc.l[k].max_retries = o->max_retries > 0 ? o->max_retries : PBJ_MAX_RETRIES;
		backoff_init(&lc.l[k].bo, RETRY_FIRST_MS, RETRY_CAP_MS);
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

	if (l->refused)
		return l->refused;       /* (it would refuse again: not asked) */
	if (!l->c) {
		if (!l->address[0])
			return -OFS_EUNREACHABLE;
		rc = conn_open_sid(l->address, &l->t.server, &l->c);
		if (rc)
			return rc;
		conn_set_timeout(l->c, CALL_MS);
	}
	rc = conn_call(l->c, q, b, bn);
	if (conn_is_transport_error(rc))
		drop_conn(l);
	return rc;
}

/* A failed attempt: try again after a backoff, or give up - at once when
 * the server refused who we are (no attempt will be let in). */
static void attempt_failed(struct live *l, const char *what, int rc)
{
	char hex[OFS_OID_HEX];

	sid_to_hex(l->t.server, hex);
	l->t.retries++;
	l->silent = conn_is_transport_error(rc) != 0;
	if (!l->silent)
		l->silent_since_ns = 0;
	else if (!l->silent_since_ns)
		l->silent_since_ns = now_ns();
	snprintf(l->t.reason, sizeof(l->t.reason), "%s on %.32s: %s", what, hex, ofs_strerror(rc));
	if (conn_is_refusal(rc))
		l->refused = rc;
	if (l->t.retries >= l->max_retries || l->refused)
		l->t.state = PBJ_FAILED;
	l->retry_at_ns = now_ns() + (int64_t)backoff_next(&l->bo) * 1000000;
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
	f->kind = tf->kind;
	snprintf(f->detail, sizeof(f->detail), "%s", tf->detail);
	f->ref = tf->ref;
	f->repair_state = tf->repair;
	f->repaired = tf->repair == OFS_REPAIR_DONE;
	f->source = tf->source;
	snprintf(f->repair, sizeof(f->repair), "%s", tf->action);
	if (tf->seq > pc->max_seq)
		pc->max_seq = tf->seq;
	return 0;
}

/* One round for one task: start it if needed, send pause/resume, poll. */
/* Repairs left to grant under the cap (UINT64_MAX: no cap): the cap less
 * what is stored as repaired and what is granted but not yet seen. */
static uint64_t cap_left(const struct cap *cp, const struct live *all, size_t n)
{
	uint64_t used = cp->stored;

	if (!cp->allowed)
		return UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (!pbj_state_final(all[i].t.state))
			used += all[i].owed;     /* (an ended task uses no more) */
	return used >= cp->allowed ? 0 : cp->allowed - used;
}

/* More repairs for a task waiting for them, in chunks; 0 when none. */
static uint64_t grant(struct cap *cp, struct live *l, struct live *all, size_t n)
{
	uint64_t left = cap_left(cp, all, n), g;

	if (left == UINT64_MAX)
		return 0;
	g = left < GRANT_CHUNK ? left : GRANT_CHUNK;
	l->owed += g;
	l->granted += g;
	return g;
}

int pbj_server_state(const struct pbj_runner_opts *o, const char *addr, struct ofs_sid sid,
		     uint8_t state)
{
	struct ofs_req q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_SERVER_SET;
	q.set.sid = sid;
	q.set.mask = OFS_SET_STATE;
	q.set.state = state;
	rc = conn_call_once_sid(addr, &sid, &q, CALL_MS, NULL, NULL);
	/* Then every other server, each from us: a server speaks for its own
	 * entry only, so none takes this from another's gossip
	 * (docs/design.md, "Security"); one missed here learns it from the
	 * server itself. */
	if (!rc) {
		struct ofs_server *e = NULL;
		size_t n = 0;
		if (fetch_table(o, &e, &n) == 0)
			for (size_t i = 0; i < n; i++)
				if (!sid_eq(e[i].sid, sid) && e[i].address[0])
					(void)conn_call_once_sid(e[i].address, &e[i].sid, &q, CALL_MS,
								 NULL, NULL);
		free(e);
	}
	return rc;
}

int pbj_plan_now(const struct pbj_runner_opts *o, double pct, struct plan *p,
		 struct plan_server **out, size_t *nout)
{
	struct ofs_server *e = NULL;
	struct plan_server *ps;
	size_t ne = 0;
	int rc = fetch_table(o, &e, &ne);

	if (rc)
		return rc;
	ps = calloc(ne ? ne : 1, sizeof(*ps));
	if (!ps) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++) {
		struct ofs_req q = { .op = OFS_OP_STATS };
		struct ofs_stats st;
		struct conn *c = NULL;
		uint8_t *b = NULL;
		size_t bn = 0;
		ps[i].sid = e[i].sid;
		if (e[i].state != OFS_SERVER_IN || conn_open_sid(e[i].address, &e[i].sid, &c))
			continue;
		conn_set_timeout(c, STATS_MS);
		if (conn_call(c, &q, &b, &bn) == 0 && proto_decode_stats(b, bn, &st) == 0) {
			ps[i].used = st.bytes;
			ps[i].capacity = st.capacity;
			ps[i].in = true;
		}
		free(b);
		conn_close(c);
	}
	free(e);
	rc = plan_rebalance(ps, ne, pct, p);
	if (!rc && out) {
		*out = ps;
		*nout = ne;
	} else {
		free(ps);
	}
	return rc;
}

/* The rebalance plan of job j from every server's usage now. */
static int make_plan(const struct pbj_runner_opts *o, const struct pbj_job *j, struct plan *p)
{
	int64_t pct = job_ints(j).threshold;

	return pbj_plan_now(o, pct > 0 && pct <= 100 ? (double)pct : PBJ_DEFAULT_THRESHOLD, p,
			    NULL, NULL);
}

/* The TASK_START request of a task's new run, from the job and its row. */
static void start_req(const struct pbj_job *j, const struct live *l, struct ofs_req *q)
{
	memset(q, 0, sizeof(*q));
	q->op = OFS_OP_TASK_START;
	q->task.job = (uint64_t)j->id;
	q->task.kind = pbj_jobtype(j->type) ? pbj_jobtype(j->type)->kind : 0;
	q->task.rate = j->rate;
	q->task.cursor = l->t.cursor;
	q->task.objects_base = oid_is_zero(l->t.cursor) ? 0 : l->t.objects_done;
	q->task.bytes_base = oid_is_zero(l->t.cursor) ? 0 : l->t.bytes_done;
	q->task.noids = l->nonly;
	q->task.oids = (const uint8_t *)l->only;
	if (j->flags & PBJ_REPAIR) {
		q->task.flags = OFS_TASK_F_REPAIR;
		if (j->flags & PBJ_DRY_RUN)
			q->task.flags |= OFS_TASK_F_DRYRUN;
	} else if (q->task.kind != OFS_TASK_SCRUB && (j->flags & PBJ_DRY_RUN)) {
		q->task.flags = OFS_TASK_F_DRYRUN;
	}
	if (q->task.kind == OFS_TASK_SCRUB && job_ints(j).metadata_only)
		q->task.flags |= OFS_TASK_F_NODATA;
	q->task.budget = l->unlimited ? UINT64_MAX : 0;
	if (q->task.kind == OFS_TASK_DRAIN) {
		/* What moved is gone from the server: a drain that runs
		 * again walks what is left from the start, so that a copy
		 * that failed to move is tried again. */
		memset(&q->task.cursor, 0, sizeof(q->task.cursor));
	}
}

/* A rebalance task's allocations: what the plan sends from its server
 * (planned at the job's first start, and again at each new run, from the
 * usage as it is). *nothing: no bytes to send - the task's row is final. */
static int rebalance_alloc(const struct pbj_job *j, struct live *l, struct cap *cp,
			   struct ofs_req *q, bool *nothing)
{
	struct plan_move mv[OFS_TASK_MAX_ALLOC];
	int rc;

	*nothing = false;
	if (!cp->plan)
		return -ENOMEM;
	if (!cp->planned || l->ran) {
		rc = make_plan(cp->o, j, cp->plan);
		if (rc) {
			attempt_failed(l, "planning the moves", rc);
			*nothing = true;
			return 0;
		}
		cp->planned = true;
	}
	/* Planned from the usage as it is: the walk starts over. */
	memset(&q->task.cursor, 0, sizeof(q->task.cursor));
	q->task.objects_base = 0;
	q->task.bytes_base = l->t.bytes_done;
	q->task.nalloc = (uint8_t)plan_moves_from(cp->plan, l->t.server, mv, OFS_TASK_MAX_ALLOC);
	for (uint8_t i = 0; i < q->task.nalloc; i++) {
		q->task.alloc_sid[i] = mv[i].to;
		q->task.alloc_bytes[i] = mv[i].bytes;
	}
	if (q->task.nalloc == 0) {
		l->t.state = PBJ_SUCCEEDED;
		snprintf(l->t.reason, sizeof(l->t.reason), "%s",
			 cp->plan->balanced ? "within the threshold already"
					    : "nothing to send from this server");
		*nothing = true;
	}
	return 0;
}

/* Start a new run of the task on its server. *poll: it runs (poll it
 * now); otherwise the row was changed (to be stored) or the server runs
 * enough tasks (try later: *put false too). */
static int start_task(const struct pbj_job *j, struct live *l, struct cap *cp, bool *poll,
		      bool *put)
{
	struct ofs_req q;
	int rc;

	*poll = *put = false;
	/* A new run of the task: repairs are granted as it asks. */
	l->unlimited = cp->allowed == 0;
	l->owed = 0;
	l->granted = 0;
	l->repairs_seen = 0;
	l->repairs_base = 0;
	l->polled = false;
	start_req(j, l, &q);
	if (q.task.kind == OFS_TASK_REBALANCE) {
		bool nothing;
		rc = rebalance_alloc(j, l, cp, &q, &nothing);
		if (rc || nothing) {
			*put = !rc;
			return rc;
		}
	}
	rc = call(l, &q, NULL, NULL);
	if (rc == -EBUSY)
		return 0;                /* the server runs enough tasks: later */
	if (rc) {
		attempt_failed(l, "starting the task", rc);
		*put = true;
		return 0;
	}
	l->started = true;
	l->ran = true;
	l->acked = 0;                /* a new task on the server counts from 1 */
	l->sent_ctl = 0xff;          /* (it may be paused: say what the job is) */
	l->t.state = PBJ_RUNNING;
	*poll = true;
	return 0;
}

/* Tell the task what the job is: paused or running. */
static void send_ctl(const struct pbj_job *j, struct live *l)
{
	uint8_t want = j->state == PBJ_PAUSED ? OFS_TASK_PAUSE : OFS_TASK_RESUME;
	struct ofs_req q;

	if (j->state != PBJ_PAUSED && j->state != PBJ_RUNNING)
		return;
	if (l->sent_ctl == want || (want == OFS_TASK_RESUME && l->sent_ctl == 0))
		return;
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_TASK_CTL;
	q.task.job = (uint64_t)j->id;
	q.task.action = want;
	if (call(l, &q, NULL, NULL) == 0)
		l->sent_ctl = want;
}

/* The task's row from a poll's status. */
static void take_status(const struct pbj_job *j, struct live *l, const struct ofs_task_status *st)
{
	l->t.objects_done = st->objects_done;
	l->t.objects_total = st->objects_total;
	l->t.bytes_done = st->bytes_done;
	l->t.bytes_total = st->bytes_total;
	l->t.cursor = st->cursor;
	l->t.updated_ns = now_ns();
	l->starved = st->starved;
	switch (st->state) {
	case OFS_TASK_DONE:
		l->t.state = PBJ_SUCCEEDED;
		break;
	case OFS_TASK_FAILED:
		snprintf(l->t.reason, sizeof(l->t.reason), "%s", st->reason);
		l->t.retries++;
		l->silent = false;       /* (it answered: the task itself failed) */
		l->silent_since_ns = 0;
		l->started = false;       /* try again from the cursor, after a
		                             backoff... */
		l->retry_at_ns = now_ns() + (int64_t)backoff_next(&l->bo) * 1000000;
		if (l->t.retries >= l->max_retries || conn_is_refusal(st->error))
			l->t.state = PBJ_FAILED;   /* ...a bounded number of times, and
			                              not when its peers refused the
			                              server (no run would be let in) */
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
}

/* What the task counted against its budget, by its own count: every
 * repair it did, a fetched copy or a mended pointer alike. (Counting
 * repaired findings with a source instead missed the mends: a task that
 * had used its grant then waited for more forever, its grant still seen
 * as unused.) */
static void take_repairs(struct live *l, struct cap *cp, uint64_t repairs)
{
	uint64_t done;

	if (!l->polled) {
		l->polled = true;
		l->repairs_base = l->repairs_seen = repairs;
	}
	if (repairs > l->repairs_seen) {
		cp->stored += repairs - l->repairs_seen;
		l->repairs_seen = repairs;
	}
	done = l->repairs_seen - l->repairs_base;
	l->owed = l->granted > done ? l->granted - done : 0;
}

/* Poll the task: its status and findings stored (cursor and findings in
 * one transaction), then acknowledged. */
static int poll_task(struct pbj_db *db, const struct pbj_job *j, struct live *l,
		     struct pbj_finding *fbuf, struct cap *cp, struct live *all, size_t nall)
{
	struct poll_ctx pc = { .l = l, .f = fbuf };
	struct ofs_task_status st;
	struct ofs_req q;
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc;

	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_TASK_POLL;
	q.task.job = (uint64_t)j->id;
	q.task.ack = l->acked;
	if (l->starved && !l->unlimited && l->owed == 0)
		q.task.budget = grant(cp, l, all, nall);
	rc = call(l, &q, &b, &bn);
	if (rc == -ENOENT) {
		l->started = false;      /* the server restarted: start again from the cursor */
		return 0;
	}
	if (rc) {
		attempt_failed(l, "polling the task", rc);
		return pbj_task_put(db, &l->t);
	}
	rc = proto_decode_task_status(b, bn, &st, take_finding, &pc);
	free(b);
	if (rc) {
		attempt_failed(l, "reading the task's status", rc);
		return pbj_task_put(db, &l->t);
	}
	if (st.state != OFS_TASK_FAILED)
		backoff_reset(&l->bo);   /* (it answers: failures in a row start over) */
	take_status(j, l, &st);
	rc = pbj_progress(db, &l->t, 1, pc.f, pc.n);
	if (!rc && pc.max_seq > l->acked)
		l->acked = pc.max_seq;
	if (!rc)
		take_repairs(l, cp, st.repairs);
	return rc;
}

static int step(struct pbj_db *db, const struct pbj_job *j, struct live *l,
		struct pbj_finding *fbuf, struct cap *cp, struct live *all, size_t nall)
{
	if (pbj_state_final(l->t.state) || now_ns() < l->retry_at_ns)
		return 0;
	if (l->none) {
		l->t.state = PBJ_SUCCEEDED;
		snprintf(l->t.reason, sizeof(l->t.reason), "nothing left to repair");
		return pbj_task_put(db, &l->t);
	}
	if (!l->started) {
		bool poll, put;
		int rc = start_task(j, l, cp, &poll, &put);
		if (rc)
			return rc;
		if (put)
			return pbj_task_put(db, &l->t);
		if (!poll)
			return 0;
	}
	send_ctl(j, l);
	return poll_task(db, j, l, fbuf, cp, all, nall);
}

/* repair --job: what became of each unrepaired finding of the scrub job,
 * from this job's findings of the same copy and kind. */
struct mark_ctx {
	struct pbj_db *db;
	int64_t job;
	struct pbj_finding *mine;
	size_t n, cap;
	int rc;
};

static int mark_collect(const struct pbj_finding *f, void *arg)
{
	struct mark_ctx *mc = arg;

	if (mc->n == mc->cap) {
		size_t cap = mc->cap ? mc->cap * 2 : 64;
		struct pbj_finding *p = realloc(mc->mine, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		mc->mine = p;
		mc->cap = cap;
	}
	mc->mine[mc->n++] = *f;
	return 0;
}

static int mark_one(const struct pbj_finding *f, void *arg)
{
	struct mark_ctx *mc = arg;
	char how[PBJ_DETAIL_LEN];

	if (f->repaired)
		return 0;
	for (size_t i = 0; i < mc->n; i++) {
		const struct pbj_finding *m = &mc->mine[i];
		if (sid_eq(m->server, f->server) && oid_eq(m->oid, f->oid) && m->kind == f->kind) {
			snprintf(how, sizeof(how), "job %lld: %.480s", (long long)mc->job, m->repair);
			return pbj_finding_repaired(mc->db, f->id, m->repair_state, how, &m->source);
		}
	}
	snprintf(how, sizeof(how), "not found again by repair job %lld", (long long)mc->job);
	return pbj_finding_repaired(mc->db, f->id, OFS_REPAIR_DONE, how, NULL);
}

static int mark_source(struct pbj_db *db, int64_t from, int64_t job)
{
	struct mark_ctx mc = { .db = db, .job = job };
	int rc = pbj_finding_list(db, job, NULL, OFS_FINDING_NONE, NULL, mark_collect, &mc);

	if (!rc)
		rc = pbj_finding_list(db, from, NULL, OFS_FINDING_NONE, NULL, mark_one, &mc);
	free(mc.mine);
	return rc;
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

/* The job's repair cap (--max-repairs), resumed after the cap: another
 * cap's worth. */
static int cap_setup(struct pbj_db *db, int64_t id, const struct pbj_job *j, struct cap *cp)
{
	int64_t c = job_ints(j).max_repairs;
	struct pbj_sum s0;
	int rc;

	if (c <= 0 || !(j->flags & PBJ_REPAIR) || (j->flags & PBJ_DRY_RUN))
		return 0;
	cp->step = (uint64_t)c;
	rc = pbj_summarize(db, id, &s0);
	cp->stored = s0.repaired;
	cp->allowed = cp->step * (cp->stored / cp->step + 1);
	return rc;
}

static void cancel_tasks(struct pbj_db *db, int64_t id, struct live *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		forget(&l[i], id, OFS_TASK_FORGET);
		if (!pbj_state_final(l[i].t.state)) {
			l[i].t.state = PBJ_CANCELLED;
			pbj_task_put(db, &l[i].t);
		}
	}
}

enum { CAP_NOT_HIT, CAP_HIT, CAP_RETURN };

/* The cap reached: the job pauses for a human, when a task waits for
 * budget and no other holds some it has not used yet. *hit: CAP_*. */
static int check_cap(struct pbj_db *db, int64_t id, const struct pbj_job *j, struct cap *cp,
		     struct live *l, size_t n, const struct pbj_runner_opts *o, int *hit)
{
	char capwhy[PBJ_REASON_LEN];
	bool starved = false, unused = false;
	int rc;

	*hit = CAP_NOT_HIT;
	if (!cp->allowed || cp->hit || j->state != PBJ_RUNNING || cap_left(cp, l, n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (pbj_state_final(l[i].t.state))
			continue;
		starved |= l[i].starved && l[i].owed == 0;
		unused |= l[i].owed > 0;
	}
	if (!starved || unused)
		return 0;
	snprintf(capwhy, sizeof(capwhy),
		 PBJ_CAP_REASON ": %llu objects repaired; review the "
		 "report, then resume the job to allow %llu more, or cancel it",
		 (unsigned long long)cp->stored, (unsigned long long)cp->step);
	rc = pbj_job_set_state(db, id, PBJ_PAUSED, 1u << PBJ_RUNNING, capwhy);
	if (rc == -EAGAIN)
		rc = 0;
	if (rc)
		return rc;
	cp->hit = true;
	*hit = CAP_HIT;
	if (o->return_on_cap) {
		for (size_t i = 0; i < n; i++)
			forget(&l[i], id, OFS_TASK_PAUSE);
		*hit = CAP_RETURN;
	}
	return 0;
}

/* A job that checks what it reaches (its result is its findings): a task
 * whose server did not answer through every attempt does not fail it
 * while another task ran to its end. Such tasks are said in why (a
 * warning the job keeps as its reason: PBJ_SKIPPED_REASON ...) and
 * their count returned. */
static size_t silent_servers(const struct pbj_job *j, struct live *l, size_t n, char *why,
			     size_t len)
{
	const struct pbj_jobtype *t = pbj_jobtype(j->type);
	size_t silent = 0, done = 0, at;
	int k;

	for (size_t i = 0; i < n; i++) {
		if (l[i].t.state == PBJ_FAILED && !l[i].silent)
			return 0;                /* a real failure: the job fails */
		silent += l[i].t.state == PBJ_FAILED;
		done += l[i].t.state == PBJ_SUCCEEDED;
	}
	if (!t || t->ends != PBJ_ENDS_BY_FINDINGS || !silent || !done)
		return 0;
	k = snprintf(why, len, "%s: %zu server%s did not answer, %s not checked:", PBJ_SKIPPED_REASON,
		     silent, silent == 1 ? "" : "s", silent == 1 ? "its copies" : "their copies");
	at = k > 0 ? (size_t)k : 0;
	for (size_t i = 0; i < n && at < len; i++) {
		char hex[OFS_OID_HEX], since[OFS_TIME_LEN];
		if (l[i].t.state != PBJ_FAILED)
			continue;
		sid_to_hex(l[i].t.server, hex);
		time_format(l[i].silent_since_ns, since);
		k = snprintf(why + at, len - at, " %s (since %s, %llu of %llu objects done)", hex, since,
			     (unsigned long long)l[i].t.objects_done,
			     (unsigned long long)l[i].t.objects_total);
		at += k > 0 ? (size_t)k : 0;
	}
	return silent;
}

/* Every task final: the job's end - the scrub job a repair came from
 * marked, a drained server out of service, the job's state. */
static int finish_job(struct pbj_db *db, int64_t id, const struct pbj_job *j, struct live *l,
		      size_t n, const struct pbj_runner_opts *o)
{
	char skipped[PBJ_REASON_LEN];
	bool any_failed = false;
	size_t silent = silent_servers(j, l, n, skipped, sizeof(skipped));
	const char *why = NULL;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (l[i].t.state == PBJ_FAILED && !silent) {
			any_failed = true;
			why = l[i].t.reason;
		}
		forget(&l[i], id, OFS_TASK_FORGET);
	}
	if (!any_failed && !silent && (j->flags & PBJ_REPAIR) && !(j->flags & PBJ_DRY_RUN) &&
	    job_ints(j).from_job > 0)
		rc = mark_source(db, job_ints(j).from_job, id);
	if (!any_failed && !rc && pbj_jobtype(j->type) && pbj_jobtype(j->type)->empties &&
	    !(j->flags & PBJ_DRY_RUN)) {
		/* Emptied: out of service. (A drain whose task could not move
		 * everything failed above; the server stays draining.) */
		for (size_t i = 0; i < n; i++) {
			if (pbj_server_state(o, l[i].address, l[i].t.server, OFS_SERVER_OUT)) {
				any_failed = true;
				why = "drained, but marking the server out failed: run "
				      "ofs-pbj server set SID --state out";
			}
		}
	}
	if (rc)
		return rc;
	rc = pbj_job_set_state(db, id, any_failed ? PBJ_FAILED : PBJ_SUCCEEDED,
			       (1u << PBJ_RUNNING) | (1u << PBJ_PAUSED) | (1u << PBJ_QUEUED),
			       any_failed ? why : silent ? skipped : "");
	return rc == -EAGAIN ? 0 : rc;   /* (cancelled meanwhile: that stands) */
}

/* Acknowledge what was stored last, so that the next runner does not
 * store those findings again; then let the tasks' connections go. */
static void release_tasks(int64_t id, struct live *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].c && l[i].started && l[i].acked) {
			struct ofs_req q;
			uint8_t *b = NULL;
			size_t bn = 0;
			memset(&q, 0, sizeof(q));
			q.op = OFS_OP_TASK_POLL;
			q.task.job = (uint64_t)id;
			q.task.ack = l[i].acked;
			(void)call(&l[i], &q, &b, &bn);
			free(b);
		}
		conn_close(l[i].c);
		free(l[i].only);
	}
	free(l);
}

/* One round: the lease renewed, the job read again, each task stepped,
 * the cap and the end looked at. *done: the run ends (with the rc). */
static int run_round(struct pbj_db *db, int64_t id, struct pbj_job *j, struct live *l, size_t n,
		     struct pbj_finding *fbuf, struct cap *cp, const struct pbj_runner_opts *o,
		     bool *done)
{
	struct pbj_sum sum;
	bool all_final = true;
	int rc, hit = CAP_NOT_HIT;

	*done = true;
	if (o->stop && *o->stop)
		return -EINTR;
	if (o->lease_holder) {
		bool got = false;
		rc = pbj_lease_take(db, o->lease_holder, LEASE_TTL_MS, &got, NULL);
		if (rc)
			return rc;
		if (!got)
			return -EBUSY;       /* another scheduler took over */
	}
	rc = pbj_job_get(db, id, j);
	if (rc)
		return rc;
	if (j->state == PBJ_CANCELLED) {
		cancel_tasks(db, id, l, n);
		return 0;
	}
	if (j->state == PBJ_QUEUED) {
		/* (held paused before it started, then resumed: it runs now) */
		rc = pbj_job_set_state(db, id, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL);
		if (rc == -EAGAIN) {
			*done = false;       /* moved meanwhile: the next round sees it */
			return 0;
		}
		if (rc)
			return rc;
		j->state = PBJ_RUNNING;
	}
	if (cp->hit && j->state == PBJ_RUNNING) {
		cp->hit = false;             /* resumed by a human: another cap */
		cp->allowed += cp->step;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = step(db, j, &l[i], fbuf, cp, l, n);
	if (!rc)
		rc = check_cap(db, id, j, cp, l, n, o, &hit);
	if (rc || hit == CAP_RETURN)
		return rc;
	*done = false;
	if (hit == CAP_HIT)
		return 0;                    /* the next round pauses the tasks */
	for (size_t i = 0; i < n; i++)
		all_final &= pbj_state_final(l[i].t.state);
	if (o->progress && pbj_summarize(db, id, &sum) == 0)
		o->progress(j, &sum, o->arg);
	if (all_final) {
		*done = true;
		return finish_job(db, id, j, l, n, o);
	}
	sleep_ms(cp->poll_ms);
	cp->poll_ms = cp->poll_ms * 2 < PBJ_POLL_MS ? cp->poll_ms * 2 : PBJ_POLL_MS;
	return 0;
}

/* An error no later attempt undoes: a refusal of who runs the job, or
 * the job's own arguments (a path that is not there, too many objects,
 * arguments that do not decode). */
static bool final_error(int rc)
{
	return conn_is_refusal(rc) || rc == -ENOENT || rc == -ENOTDIR || rc == -ELOOP ||
	       rc == -OFS_ETOOBIG || rc == -OFS_ECORRUPT;
}

static int fail_task_row(const struct pbj_task *t, void *arg)
{
	struct pbj_task *f = arg;

	if (!pbj_state_final(t->state) && f->job == 0)
		*f = *t;                 /* the first task not ended yet */
	return 0;
}

/* The job could not start for a final reason: it fails, with what failed
 * and why, and so do its tasks (no server was asked to run one). */
static int fail_unstarted(struct pbj_db *db, int64_t id, const char *what, int err)
{
	char why[PBJ_REASON_LEN];
	struct pbj_task t;
	int rc = 0;

	snprintf(why, sizeof(why), "%s: %s", what, ofs_strerror(err));
	for (;;) {
		memset(&t, 0, sizeof(t));
		rc = pbj_task_list(db, id, fail_task_row, &t);
		if (rc || t.job == 0)
			break;
		t.state = PBJ_FAILED;
		snprintf(t.reason, sizeof(t.reason), "%s", why);
		rc = pbj_task_put(db, &t);
		if (rc)
			break;
	}
	if (!rc)
		rc = pbj_job_set_state(db, id, PBJ_FAILED,
				       (1u << PBJ_QUEUED) | (1u << PBJ_RUNNING) | (1u << PBJ_PAUSED), why);
	return rc == -EAGAIN ? 0 : rc;   /* (cancelled meanwhile: that stands) */
}

int pbj_run(struct pbj_db *db, int64_t id, const struct pbj_runner_opts *o)
{
	char what[WHAT_LEN] = "";
	struct pbj_job *j = malloc(sizeof(*j));
	struct pbj_finding *fbuf = calloc(OFS_MAX_TASK_FINDINGS, sizeof(*fbuf));
	struct live *l = NULL;
	struct cap cp = { .o = o, .poll_ms = PBJ_POLL_FIRST_MS };
	bool done = false;
	size_t n = 0;
	int rc;

	cp.plan = calloc(1, sizeof(*cp.plan));
	if (!j || !fbuf || !cp.plan) {
		free(j);
		free(fbuf);
		free(cp.plan);
		return -ENOMEM;
	}
	rc = pbj_job_get(db, id, j);
	if (!rc && pbj_state_final(j->state))
		goto out;
	if (!rc && (!pbj_jobtype(j->type) || !pbj_jobtype(j->type)->kind)) {
		rc = -EINVAL;            /* recorded (a catch-up: ofs-pbj serve), never run */
		goto out;
	}
	if (!rc) {
		rc = make_tasks(db, j, o, &l, &n, what);
		if (rc && what[0] && final_error(rc)) {
			rc = fail_unstarted(db, id, what, rc);
			goto out;
		}
	}
	if (!rc)
		rc = cap_setup(db, id, j, &cp);
	if (!rc && j->state == PBJ_QUEUED) {
		rc = pbj_job_set_state(db, id, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL);
		if (rc == -EAGAIN)
			rc = 0;          /* moved by someone else: follow what it says */
	}
	while (!rc && !done)
		rc = run_round(db, id, j, l, n, fbuf, &cp, o, &done);
out:
	release_tasks(id, l, n);
	free(fbuf);
	free(cp.plan);
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
	struct pbj_sum *s = arg;

	s->findings++;
	if (f->repair_state == OFS_REPAIR_DONE && !sid_is_zero(f->source))
		s->repaired++;
	return 0;
}

int pbj_summarize(struct pbj_db *db, int64_t id, struct pbj_sum *sum)
{
	int rc;

	memset(sum, 0, sizeof(*sum));
	rc = pbj_task_list(db, id, sum_task, sum);
	if (!rc)
		rc = pbj_finding_list(db, id, NULL, OFS_FINDING_NONE, NULL, count_finding, sum);
	return rc;
}
