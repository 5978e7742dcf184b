/* catchup.c - the servers' catch-up as a system job (see catchup.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/conn.h"
#include "pbj/catchup.h"

#define POLL_EVERY_NS 1000000000LL
#define POLL_TIMEOUT_MS 2000
#define CATCHUP_TABLE_MS 10000      /* reading the server table (from memory) */
#define REFUSED_FIRST_MS 1000       /* after a refused poll, then doubled ... */
#define REFUSED_CAP_MS 60000        /* ... up to a minute */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t *ack_of(struct pbj_catchup *cu, struct ofs_sid sid)
{
	for (size_t i = 0; i < cu->nacks; i++)
		if (sid_eq(cu->acks[i].sid, sid))
			return &cu->acks[i].ack;
	if (cu->nacks == OFS_MAX_SERVERS)
		return NULL;
	cu->acks[cu->nacks].sid = sid;
	cu->acks[cu->nacks].ack = 0;
	return &cu->acks[cu->nacks++].ack;
}

/* Findings of one poll, as the job store keeps them. */
struct batch {
	struct pbj_finding *f;
	size_t n, cap;
	uint64_t last_seq;
};

static int add_finding(const struct ofs_task_finding *tf, void *arg)
{
	struct batch *b = arg;
	struct pbj_finding *f;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct pbj_finding *p = realloc(b->f, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		b->f = p;
		b->cap = cap;
	}
	f = &b->f[b->n++];
	memset(f, 0, sizeof(*f));
	f->server = tf->server;
	f->oid = tf->oid;
	f->kind = tf->kind;
	snprintf(f->detail, sizeof(f->detail), "%s", tf->detail);
	f->repair_state = tf->repair;
	f->repaired = tf->repair == OFS_REPAIR_DONE;
	snprintf(f->repair, sizeof(f->repair), "%s", tf->action);
	f->source = tf->source;
	f->ref = tf->ref;
	if (tf->seq > b->last_seq)
		b->last_seq = tf->seq;
	return 0;
}

static int find_running(const struct pbj_job *j, void *arg)
{
	int64_t *id = arg;

	if (j->type == PBJ_TYPE_CATCHUP && !*id)
		*id = j->id;
	return 0;
}

/* The open catch-up job: adopted (one a dead scheduler left) or new. */
static int open_job(struct pbj_db *db, struct pbj_catchup *cu)
{
	struct pbj_job j;
	int rc;

	if (cu->job)
		return 0;
	rc = pbj_job_list(db, PBJ_RUNNING, find_running, &cu->job);
	if (rc || cu->job)
		return rc;
	memset(&j, 0, sizeof(j));
	j.type = PBJ_TYPE_CATCHUP;
	rc = pbj_submit(db, &j, &cu->job);
	if (!rc)
		rc = pbj_job_set_state(db, cu->job, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL);
	if (rc)
		cu->job = 0;
	return rc;
}

/* Ask one server; its task row in *t, its findings appended to b. 1 when
 * it is catching up or had something to say, 0 when idle, <0 when it did
 * not answer. */
static int ask(const struct ofs_server *e, struct pbj_catchup *cu, struct pbj_task *t,
	       struct batch *b)
{
	struct ofs_req q;
	struct ofs_task_status st;
	uint64_t *ack = ack_of(cu, e->sid);
	uint8_t *body = NULL;
	size_t bn = 0, before = b->n;
	int rc;

	if (!ack)
		return -ENOMEM;
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_TASK_POLL;
	q.task.job = 0;
	q.task.ack = *ack;
	rc = conn_call_once_sid(e->address, &e->sid, &q, POLL_TIMEOUT_MS, &body, &bn);
	if (!rc)
		rc = proto_decode_task_status(body, bn, &st, add_finding, b);
	free(body);
	if (rc)
		return rc;
	memset(t, 0, sizeof(*t));
	t->server = e->sid;
	t->state = st.state == OFS_TASK_RUNNING ? PBJ_RUNNING : PBJ_SUCCEEDED;
	t->objects_done = st.objects_done;
	t->objects_total = st.objects_total;
	t->bytes_done = st.bytes_done;
	t->bytes_total = st.bytes_total;
	snprintf(t->reason, sizeof(t->reason), "%s", st.reason);
	return st.state == OFS_TASK_RUNNING || b->n > before;
}

void pbj_catchup_init(struct pbj_catchup *cu)
{
	memset(cu, 0, sizeof(*cu));
	backoff_init(&cu->bo, REFUSED_FIRST_MS, REFUSED_CAP_MS);
}

/* A refused poll: the next waits out a backoff. Returns the refusal. */
static int refused(struct pbj_catchup *cu, int rc)
{
	cu->retry_ms = backoff_next(&cu->bo);
	cu->refused = cu->bo.tries;
	cu->next_ns = now_ns() + (int64_t)cu->retry_ms * 1000000;
	return rc;
}

/* The server table, from the cluster addresses or else from the servers
 * of the last table read. */
static int read_table(const char *const *cluster, size_t ncluster, struct pbj_catchup *cu,
		      struct ofs_server **e, size_t *ne)
{
	const char *alt[PBJ_CATCHUP_KNOWN];
	int rc = conn_fetch_table(cluster, ncluster, CATCHUP_TABLE_MS, e, ne, NULL);

	if (rc == 0 || conn_is_refusal(rc) || !cu->nknown)
		return rc;
	for (size_t i = 0; i < cu->nknown; i++)
		alt[i] = cu->known[i];
	return conn_fetch_table(alt, cu->nknown, CATCHUP_TABLE_MS, e, ne, NULL);
}

int pbj_catchup_poll(struct pbj_db *db, const char *const *cluster, size_t ncluster,
		     struct pbj_catchup *cu)
{
	struct ofs_server *e = NULL;
	struct pbj_task *t = NULL;
	uint64_t *seqs = NULL;
	struct batch b = { 0 };
	size_t ne = 0, nt = 0;
	bool busy = false;
	int64_t now = now_ns();
	int rc;

	if ((cu->last_ns && now - cu->last_ns < POLL_EVERY_NS) || now < cu->next_ns)
		return 0;
	cu->last_ns = now;
	rc = read_table(cluster, ncluster, cu, &e, &ne);
	if (conn_is_refusal(rc))
		return refused(cu, rc);
	if (rc)
		return 0;                /* unreachable: again in a second */
	cu->nknown = 0;
	for (size_t i = 0; i < ne && cu->nknown < PBJ_CATCHUP_KNOWN; i++)
		if (e[i].address[0])
			snprintf(cu->known[cu->nknown++], OFS_SERVER_ADDR_LEN, "%s", e[i].address);
	t = calloc(ne ? ne : 1, sizeof(*t));
	seqs = calloc(ne ? ne : 1, sizeof(*seqs));
	if (!t || !seqs)
		goto out;
	for (size_t i = 0; i < ne; i++) {
		int r;
		if (e[i].address[0] == '\0' || e[i].state == OFS_SERVER_OUT)
			continue;
		b.last_seq = 0;
		r = ask(&e[i], cu, &t[nt], &b);
		if (conn_is_refusal(r)) {
			rc = refused(cu, r);
			goto out;
		}
		if (r < 0)
			continue;        /* down: it catches up once back */
		busy |= r == 1;
		seqs[nt++] = b.last_seq;
	}
	backoff_reset(&cu->bo);
	cu->refused = 0;
	if (!busy && !cu->job)
		goto out;
	if (open_job(db, cu) != 0)
		goto out;
	for (size_t i = 0; i < nt; i++)
		t[i].job = cu->job;
	for (size_t i = 0; i < b.n; i++)
		b.f[i].job = cu->job;
	if (pbj_progress(db, t, nt, b.f, b.n) != 0)
		goto out;
	/* (stored: the servers may forget them on the next poll) */
	for (size_t i = 0; i < nt; i++) {
		uint64_t *ack = ack_of(cu, t[i].server);
		if (ack && seqs[i] > *ack)
			*ack = seqs[i];
	}
	if (!busy) {
		pbj_job_set_state(db, cu->job, PBJ_SUCCEEDED, 1u << PBJ_RUNNING, NULL);
		cu->job = 0;
	}
out:
	free(b.f);
	free(seqs);
	free(t);
	free(e);
	return rc;
}
