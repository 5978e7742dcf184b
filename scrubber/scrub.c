/* scrub.c - scrub tasks inside ofs-server (see scrub.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "points.h"
#include "records.h"
#include "ofs_error.h"
#include "scrub.h"

#define TASKS_KEPT 64            /* finished tasks remembered for their poll */
#define WALK_BATCH 64            /* objects read from the index at once */

struct walked {
	struct ofs_oid oid;
	struct ofs_attr a;
	int decode_rc;
};

struct task {
	bool used;
	uint64_t job;
	uint64_t rate;
	struct ofs_oid start;            /* cursor it started from */
	struct ofs_oid *only;            /* sorted: scrub only these (--path) */
	uint32_t nonly;
	pthread_t thread;
	bool joined;
	struct scrubber *sc;
	/* guarded by scrubber.mu */
	uint8_t state;                   /* enum ofs_task_state */
	bool pause, cancel;
	struct ofs_task_status st;
	struct ofs_task_finding *f;      /* unacknowledged, in seq order */
	uint32_t nf;
	uint64_t next_seq;
	/* the reading thread's own */
	struct walked *batch;
	double pace_t0;                  /* pacing: start of the current run */
	uint64_t pace_bytes;             /* bytes read since pace_t0 */
	struct ofs_oid cur;              /* object being scrubbed */
};

struct scrubber {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	uint64_t default_rate;
	pthread_mutex_t mu;
	pthread_cond_t cv;               /* state, pause, cancel, acks changed */
	struct task tasks[TASKS_KEPT];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int scrubber_open(struct store *s, struct sidtab *t, struct replicator *r,
		  uint64_t default_rate, struct scrubber **out)
{
	struct scrubber *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return -ENOMEM;
	sc->s = s;
	sc->t = t;
	sc->r = r;
	sc->default_rate = default_rate ? default_rate : SCRUB_DEFAULT_RATE;
	pthread_mutex_init(&sc->mu, NULL);
	pthread_cond_init(&sc->cv, NULL);
	*out = sc;
	return 0;
}

static void task_free(struct task *k)
{
	free(k->only);
	free(k->f);
	free(k->batch);
	memset(k, 0, sizeof(*k));
}

void scrubber_close(struct scrubber *sc)
{
	if (!sc)
		return;
	pthread_mutex_lock(&sc->mu);
	for (int i = 0; i < TASKS_KEPT; i++)
		sc->tasks[i].cancel = true;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
	for (int i = 0; i < TASKS_KEPT; i++) {
		struct task *k = &sc->tasks[i];
		if (k->used && !k->joined)
			pthread_join(k->thread, NULL);
		if (k->used)
			task_free(k);
	}
	pthread_cond_destroy(&sc->cv);
	pthread_mutex_destroy(&sc->mu);
	free(sc);
}

/* ---- inside the task thread ------------------------------------------- */

/*
 * Wait while paused or while the findings queue is full; true when the
 * task must stop (cancelled). Caller holds mu.
 */
static bool hold(struct task *k)
{
	struct scrubber *sc = k->sc;

	while (!k->cancel && (k->pause || k->nf >= OFS_MAX_TASK_FINDINGS)) {
		if (k->pause && k->state == OFS_TASK_RUNNING)
			k->state = OFS_TASK_PAUSED;
		pthread_cond_wait(&sc->cv, &sc->mu);
	}
	if (k->state == OFS_TASK_PAUSED && !k->cancel) {
		k->state = OFS_TASK_RUNNING;
		k->pace_t0 = now_s();        /* a pause does not earn a burst */
		k->pace_bytes = 0;
	}
	return k->cancel;
}

static int add_finding(struct task *k, struct ofs_sid server, struct ofs_oid oid,
		       const char *kind, const char *detail)
{
	struct scrubber *sc = k->sc;
	struct ofs_task_finding *f;
	int rc = 0;

	pthread_mutex_lock(&sc->mu);
	if (hold(k)) {
		rc = -ECANCELED;
	} else {
		f = &k->f[k->nf++];
		memset(f, 0, sizeof(*f));
		f->seq = k->next_seq++;
		f->server = server;
		f->oid = oid;
		snprintf(f->kind, sizeof(f->kind), "%s", kind);
		snprintf(f->detail, sizeof(f->detail), "%s", detail);
	}
	pthread_mutex_unlock(&sc->mu);
	return rc;
}

static int local_finding(const char *kind, const char *detail, void *arg)
{
	struct task *k = arg;

	return add_finding(k, store_sid(k->sc->s), k->cur, kind, detail);
}

/* Pace reads to k->rate; -ECANCELED when cancelled meanwhile. */
static int throttle(uint64_t bytes, void *arg)
{
	struct task *k = arg;
	struct scrubber *sc = k->sc;
	bool stop;

	for (;;) {
		double due = k->pace_t0 + (double)k->pace_bytes / (double)k->rate;
		double wait = due - now_s();
		pthread_mutex_lock(&sc->mu);
		stop = hold(k);
		pthread_mutex_unlock(&sc->mu);
		if (stop)
			return -ECANCELED;
		if (wait <= 0)
			break;
		if (wait > 0.1)
			wait = 0.1;          /* look at pause and cancel often */
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)(wait * 1e9) };
		nanosleep(&ts, NULL);
	}
	k->pace_bytes += bytes;
	return 0;
}

struct batch_ctx {
	struct walked *w;
	size_t n;
};

static int batch_add(struct ofs_oid oid, const struct ofs_attr *a, int decode_rc, void *arg)
{
	struct batch_ctx *b = arg;
	struct walked *w = &b->w[b->n++];

	w->oid = oid;
	w->decode_rc = decode_rc;
	if (a)
		w->a = *a;
	return 0;
}

/* Is me the copy that reports a problem between copies: the first SID in
 * the handle that is neither the copy at fault nor one that did not
 * answer? */
static bool reporter(const struct ofs_attr *a, struct ofs_sid me, const struct ofs_sid *skip,
		     size_t nskip)
{
	for (uint8_t i = 0; i < a->nsids; i++) {
		bool skipped = false;
		for (size_t j = 0; j < nskip; j++)
			skipped |= sid_eq(a->sids[i], skip[j]);
		if (!skipped)
			return sid_eq(a->sids[i], me);
	}
	return false;
}

static int compare_siblings(struct task *k, const struct walked *w)
{
	struct scrubber *sc = k->sc;
	struct ofs_sid me = store_sid(sc->s), others[OFS_MAX_REPLICAS], quiet[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	struct ofs_summary mine, theirs[OFS_MAX_REPLICAS];
	bool ok[OFS_MAX_REPLICAS] = { false };
	size_t n = 0, nquiet = 0;
	char detail[OFS_TASK_DETAIL_LEN], hex[OFS_OID_HEX];
	struct wbuf body;
	int rc;

	for (uint8_t i = 0; i < w->a.nsids && n < OFS_MAX_REPLICAS; i++)
		if (!sid_eq(w->a.sids[i], me))
			others[n++] = w->a.sids[i];
	if (n == 0)
		return 0;
	rc = store_summary(sc->s, w->oid, &mine);
	if (rc == -ENOENT)
		return 0;                    /* removed meanwhile */
	if (rc)
		return rc;
	wbuf_init(&body);
	wbuf_oid(&body, w->oid);
	rc = wbuf_error(&body);
	if (!rc)
		rc = replica_forward(sc->r, OFS_OP_SUMMARY, body.data, body.len, others, n, res);
	wbuf_free(&body);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (!res[i].rc && proto_decode_summary(res[i].body, res[i].len, &theirs[i]) == 0 &&
		    !theirs[i].corrupt && !theirs[i].behind)
			ok[i] = true;
		else
			quiet[nquiet++] = others[i];     /* no answer, or it reports itself */
		free(res[i].body);
	}
	/* This copy behind a sibling: it says so itself. */
	for (size_t i = 0; i < n; i++) {
		if (ok[i] && theirs[i].present && theirs[i].version > mine.version) {
			sid_to_hex(others[i], hex);
			snprintf(detail, sizeof(detail), "version %llu here, %llu on %s",
				 (unsigned long long)mine.version,
				 (unsigned long long)theirs[i].version, hex);
			return add_finding(k, me, w->oid, "stale_replica", detail);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct ofs_sid skip[OFS_MAX_REPLICAS * 2];
		size_t ns = 0;
		if (!ok[i])
			continue;
		memcpy(skip, quiet, nquiet * sizeof(quiet[0]));
		ns = nquiet;
		skip[ns++] = others[i];
		sid_to_hex(others[i], hex);
		if (!theirs[i].present) {
			if (!reporter(&w->a, me, skip, ns))
				continue;
			snprintf(detail, sizeof(detail), "the handle names %s, which does not hold it", hex);
			rc = add_finding(k, others[i], w->oid, "missing_replica", detail);
		} else if (theirs[i].version == mine.version &&
			   (theirs[i].size != mine.size || !digest_eq(theirs[i].digest, mine.digest))) {
			if (!reporter(&w->a, me, skip, ns))
				continue;
			snprintf(detail, sizeof(detail),
				 "version %llu on both, recorded contents differ from %s",
				 (unsigned long long)mine.version, hex);
			rc = add_finding(k, me, w->oid, "replica_conflict", detail);
		}
		if (rc)
			return rc;
	}
	return 0;
}

struct dirent_check {
	struct task *k;
	char bad[OFS_NAME_MAX + 1];
	int nbad;
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
};

static int check_dirent(const void *key, size_t kn, const void *v, size_t vn, void *arg)
{
	struct dirent_check *dc = arg;
	struct ofs_dirent d;

	memcpy(dc->last, key, kn);
	dc->lastn = kn;
	if (rec_decode_dirent(v, vn, &d) != 0) {
		if (dc->nbad++ == 0)
			snprintf(dc->bad, sizeof(dc->bad), "%.*s", (int)kn, (const char *)key);
	}
	return 0;
}

/* A dirdata's entries must decode: record_corrupt otherwise (one finding
 * per object, naming the first bad entry and the count). */
static int check_dirdata(struct task *k, const struct walked *w, bool *bad)
{
	struct dirent_check dc = { .k = k };
	char detail[OFS_TASK_DETAIL_LEN];
	bool more = true;
	int rc = 0;

	*bad = false;
	while (more && !rc)
		rc = store_kv_list(k->sc->s, w->oid, dc.lastn ? dc.last : NULL, dc.lastn,
				   OFS_MAX_LIST, check_dirent, &dc, &more);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	if (dc.nbad) {
		*bad = true;
		snprintf(detail, sizeof(detail), "directory entry '%s' does not decode (%d bad entr%s)",
			 dc.bad, dc.nbad, dc.nbad == 1 ? "y" : "ies");
		return local_finding("record_corrupt", detail, k);
	}
	return 0;
}

/* ---- back references (the object's primary checks them) ------------------ */

enum { WHERE_NOWHERE, WHERE_FOUND, WHERE_UNKNOWN };

/* The summary of the object h names, from the first of its servers that
 * holds it; WHERE_NOWHERE only when every one of them answered "not here". */
static int locate(struct task *k, const struct ofs_handle *h, struct ofs_summary *sm,
		  struct ofs_sid *where, int *state)
{
	struct replica_result res[OFS_MAX_REPLICAS];
	size_t n = h->nsids < OFS_MAX_REPLICAS ? h->nsids : OFS_MAX_REPLICAS;
	bool quiet = false;
	struct wbuf body;
	int rc;

	*state = WHERE_UNKNOWN;
	if (n == 0)
		return 0;
	wbuf_init(&body);
	wbuf_oid(&body, h->oid);
	rc = wbuf_error(&body);
	if (!rc)
		rc = replica_forward(k->sc->r, OFS_OP_SUMMARY, body.data, body.len, h->sids, n, res);
	wbuf_free(&body);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct ofs_summary t;
		if (!res[i].rc && proto_decode_summary(res[i].body, res[i].len, &t) == 0) {
			if (t.present && *state != WHERE_FOUND) {
				*sm = t;
				*where = h->sids[i];
				*state = WHERE_FOUND;
			}
		} else {
			quiet = true;
		}
		free(res[i].body);
	}
	if (*state != WHERE_FOUND && !quiet)
		*state = WHERE_NOWHERE;
	return 0;
}

/* Check one forward pointer of this owner: the child exists somewhere and
 * its back reference names this owner (and stripe, or entry name). */
static int check_pointer(struct task *k, const struct walked *w, const struct ofs_handle *child,
			 const char *what, struct ofs_oid want_owner, long want_stripe,
			 const char *want_name)
{
	struct ofs_summary sm;
	struct ofs_sid where;
	char detail[OFS_TASK_DETAIL_LEN], ch[OFS_OID_HEX], oh[OFS_OID_HEX];
	int state, rc = locate(k, child, &sm, &where, &state);

	if (rc || state == WHERE_UNKNOWN)
		return rc;
	oid_to_hex(child->oid, ch);
	if (state == WHERE_NOWHERE) {
		snprintf(detail, sizeof(detail), "%s names %s, which none of its servers holds",
			 what, ch);
		return add_finding(k, store_sid(k->sc->s), w->oid, "dangling_pointer", detail);
	}
	if (!oid_eq(sm.backref.owner, want_owner) ||
	    (want_stripe >= 0 && sm.backref.stripe != (uint32_t)want_stripe) ||
	    (want_name && strcmp(sm.backref.name, want_name) != 0)) {
		oid_to_hex(sm.backref.owner, oh);
		snprintf(detail, sizeof(detail),
			 "its back reference says owner %s stripe %u name '%s'; %s points at it",
			 oh, sm.backref.stripe, sm.backref.name, what);
		return add_finding(k, where, child->oid, "backref_mismatch", detail);
	}
	return 0;
}

struct entries_ctx {
	struct task *k;
	const struct walked *w;
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
	int rc;
};

static int check_entry(const void *key, size_t kn, const void *v, size_t vn, void *arg)
{
	struct entries_ctx *ec = arg;
	struct ofs_dirent d;
	char name[OFS_NAME_MAX + 1], what[OFS_NAME_MAX + 32];

	memcpy(ec->last, key, kn);
	ec->lastn = kn;
	if (rec_decode_dirent(v, vn, &d) != 0)
		return 0;                    /* record_corrupt, said elsewhere */
	snprintf(name, sizeof(name), "%.*s", (int)kn, (const char *)key);
	snprintf(what, sizeof(what), "entry '%s'", name);
	ec->rc = check_pointer(ec->k, ec->w, &d.handle, what, ec->w->a.backref.owner, -1, name);
	return ec->rc;
}

/* Does an owner point back at this object? Ask this server, then the
 * object's siblings' servers, then every other one, until one holds the
 * owner. */
static int check_owner(struct task *k, const struct walked *w)
{
	struct scrubber *sc = k->sc;
	struct ofs_server *e = NULL;
	struct ofs_sid order[OFS_MAX_SERVERS + OFS_MAX_REPLICAS + 1];
	size_t n = 0, ne = 0;
	struct ofs_req q;
	struct wbuf body;
	bool quiet = false, held = false;
	int rc;
	char detail[OFS_TASK_DETAIL_LEN], oh[OFS_OID_HEX];

	if (oid_is_zero(w->a.backref.owner))
		return 0;                    /* the root */
	rc = sidtab_snapshot(sc->t, &e, &ne);
	if (rc)
		return rc;
	order[n++] = store_sid(sc->s);
	for (uint8_t i = 0; i < w->a.nsids; i++)
		if (!sid_eq(w->a.sids[i], order[0]))
			order[n++] = w->a.sids[i];
	for (size_t i = 0; i < ne; i++) {
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup |= sid_eq(order[j], e[i].sid);
		if (!dup && e[i].state != OFS_SERVER_OUT && n < sizeof(order) / sizeof(order[0]))
			order[n++] = e[i].sid;
	}
	free(e);
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_POINTS;
	q.oid = w->a.backref.owner;
	q.child = w->oid;
	q.offset = w->a.backref.stripe;
	snprintf(q.name, sizeof(q.name), "%s", w->a.backref.name);
	{
		/* The owner here and pointing back: the common case, no round
		 * trip. Anything else is asked of every server below. */
		uint8_t ans = POINTS_NO;
		if (points_check(sc->s, sc->r, &q, false, &ans) == 0 && ans != POINTS_NO)
			return 0;
	}
	wbuf_init(&body);
	rc = proto_encode_req(&body, &q);
	for (size_t at = 0; !rc && at < n && !held; at += OFS_MAX_REPLICAS) {
		struct replica_result res[OFS_MAX_REPLICAS];
		size_t m = n - at < OFS_MAX_REPLICAS ? n - at : OFS_MAX_REPLICAS;
		rc = replica_forward(sc->r, OFS_OP_POINTS, body.data, body.len, order + at, m, res);
		for (size_t i = 0; !rc && i < m; i++) {
			if (!res[i].rc && res[i].len == 1) {
				held = true;
				if (res[i].body[0] != 0) {     /* points back (or elsewhere: */
					free(res[i].body);     /* the owner reports that) */
					for (size_t j = i + 1; j < m; j++)
						free(res[j].body);
					wbuf_free(&body);
					return 0;
				}
			} else if (res[i].rc != -ENOENT) {
				quiet = true;
			}
			free(res[i].body);
		}
	}
	wbuf_free(&body);
	if (rc)
		return rc;
	oid_to_hex(w->a.backref.owner, oh);
	if (held) {
		snprintf(detail, sizeof(detail), "its owner %s (stripe %u, name '%s') does not point at it",
			 oh, w->a.backref.stripe, w->a.backref.name);
	} else if (!quiet) {
		snprintf(detail, sizeof(detail), "its owner %s (name '%s') exists nowhere",
			 oh, w->a.backref.name);
	} else {
		return 0;                    /* some server did not answer: no verdict */
	}
	return add_finding(k, store_sid(sc->s), w->oid, "orphan", detail);
}

static int check_structure(struct task *k, const struct walked *w)
{
	char what[64];
	int rc = 0;

	if (w->a.nsids == 0 || !sid_eq(w->a.sids[0], store_sid(k->sc->s)))
		return 0;                    /* the primary checks, once */
	if (w->a.type == OFS_OBJ_METAFILE || w->a.type == OFS_OBJ_DIRECTORY) {
		for (uint16_t i = 0; i < w->a.nparts && !rc; i++) {
			snprintf(what, sizeof(what), "%s %u",
				 w->a.type == OFS_OBJ_METAFILE ? "stripe" : "dirdata", (unsigned)i);
			rc = check_pointer(k, w, &w->a.parts[i], what, w->oid,
					   w->a.type == OFS_OBJ_METAFILE ? (long)i : -1, NULL);
		}
	} else if (w->a.type == OFS_OBJ_DIRDATA) {
		struct entries_ctx ec = { .k = k, .w = w };
		bool more = true;
		while (more && !rc && !ec.rc)
			rc = store_kv_list(k->sc->s, w->oid, ec.lastn ? ec.last : NULL, ec.lastn,
					   OFS_MAX_LIST, check_entry, &ec, &more);
		if (rc == -ENOENT)
			rc = 0;
		if (!rc)
			rc = ec.rc;
	}
	if (!rc)
		rc = check_owner(k, w);
	return rc;
}

static int scrub_one(struct task *k, const struct walked *w, uint64_t *bytes)
{
	struct scrubber *sc = k->sc;
	char detail[OFS_TASK_DETAIL_LEN];
	int rc;

	*bytes = 0;
	k->cur = w->oid;
	if (w->decode_rc) {
		snprintf(detail, sizeof(detail), "the object's record does not decode: %s",
			 ofs_strerror(w->decode_rc));
		return local_finding("record_corrupt", detail, k);
	}
	rc = store_behind(sc->s, w->oid);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return local_finding("stale_replica", "this copy missed changes while its server "
				     "was away (known since then)", k);
	if (w->a.type == OFS_OBJ_DFILE) {
		rc = store_scrub_dfile(sc->s, w->oid, local_finding, throttle, k, bytes);
		if (rc == -ENOENT)
			return 0;            /* removed meanwhile */
		if (rc)
			return rc;
	} else if (w->a.type == OFS_OBJ_DIRDATA) {
		bool bad;
		rc = check_dirdata(k, w, &bad);
		if (rc || bad)
			return rc;           /* (a corrupt copy differs from its siblings: said once) */
	}
	rc = compare_siblings(k, w);
	if (!rc)
		rc = check_structure(k, w);
	return rc;
}

static void finish(struct task *k, uint8_t state, const char *reason)
{
	struct scrubber *sc = k->sc;

	pthread_mutex_lock(&sc->mu);
	k->state = state;
	k->st.state = state;
	if (reason)
		snprintf(k->st.reason, sizeof(k->st.reason), "%s", reason);
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
}

static int cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, OFS_OID_LEN);
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
	for (; i < k->nonly && b->n < WALK_BATCH; i++) {
		struct walked *w = &b->w[b->n];
		int rc = store_getattr(k->sc->s, k->only[i], &w->a);
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

static void *task_main(void *arg)
{
	struct task *k = arg;
	struct scrubber *sc = k->sc;
	struct ofs_oid cursor = k->start;
	bool started = !oid_is_zero(cursor), more = true;
	struct ofs_stats stats;
	int rc = 0;

	if (k->nonly) {
		pthread_mutex_lock(&sc->mu);
		k->st.objects_total = k->nonly;     /* (at most: some are elsewhere) */
		pthread_mutex_unlock(&sc->mu);
	} else if (store_stats(sc->s, &stats) == 0) {
		pthread_mutex_lock(&sc->mu);
		k->st.objects_total = stats.objects;
		k->st.bytes_total = stats.bytes;
		pthread_mutex_unlock(&sc->mu);
	}
	k->pace_t0 = now_s();
	while (more && !rc) {
		struct batch_ctx b = { .w = k->batch };
		if (k->nonly)
			rc = walk_list(k, started ? &cursor : NULL, &b, &more);
		else
			rc = store_walk(sc->s, started ? &cursor : NULL, WALK_BATCH, batch_add, &b, &more);
		for (size_t i = 0; i < b.n && !rc; i++) {
			uint64_t bytes = 0;
			pthread_mutex_lock(&sc->mu);
			if (hold(k))
				rc = -ECANCELED;     /* (pause and cancel between objects too) */
			pthread_mutex_unlock(&sc->mu);
			if (!rc)
				rc = scrub_one(k, &b.w[i], &bytes);
			if (rc)
				break;
			cursor = b.w[i].oid;
			started = true;
			pthread_mutex_lock(&sc->mu);
			k->st.objects_done++;
			k->st.bytes_done += bytes;
			k->st.cursor = cursor;
			if (k->st.objects_done > k->st.objects_total)
				k->st.objects_total = k->st.objects_done;
			pthread_mutex_unlock(&sc->mu);
		}
		if (b.n == 0 && !k->nonly)
			break;
		if (b.n == 0 && k->nonly && !more)
			break;
	}
	if (rc == -ECANCELED) {
		finish(k, OFS_TASK_CANCELLED, "cancelled");
	} else if (rc) {
		char why[200], hex[OFS_OID_HEX];
		oid_to_hex(k->cur, hex);
		snprintf(why, sizeof(why), "scrub stopped at %s: %s", hex, ofs_strerror(rc));
		log_error("job %llu: %s", (unsigned long long)k->job, why);
		finish(k, OFS_TASK_FAILED, why);
	} else {
		log_info("job %llu: scrub done, %llu objects, %llu bytes read",
			 (unsigned long long)k->job, (unsigned long long)k->st.objects_done,
			 (unsigned long long)k->st.bytes_done);
		finish(k, OFS_TASK_DONE, NULL);
	}
	return NULL;
}

/* ---- the registry --------------------------------------------------------- */

static struct task *find(struct scrubber *sc, uint64_t job)
{
	for (int i = 0; i < TASKS_KEPT; i++)
		if (sc->tasks[i].used && sc->tasks[i].job == job)
			return &sc->tasks[i];
	return NULL;
}

static bool active(const struct task *k)
{
	return k->used && (k->state == OFS_TASK_RUNNING || k->state == OFS_TASK_PAUSED);
}

/* A slot for a new task: a free one, or the oldest finished one. Caller
 * holds mu. */
static struct task *slot(struct scrubber *sc)
{
	struct task *best = NULL;

	for (int i = 0; i < TASKS_KEPT; i++) {
		struct task *k = &sc->tasks[i];
		if (!k->used)
			return k;
		if (!active(k) && (!best || k->job < best->job))
			best = k;
	}
	return best;
}

int scrubber_start(struct scrubber *sc, const struct ofs_task_req *q)
{
	struct task *k;
	int running = 0, rc = 0;

	pthread_mutex_lock(&sc->mu);
	k = find(sc, q->job);
	if (k && (active(k) || k->state == OFS_TASK_DONE)) {
		pthread_mutex_unlock(&sc->mu);
		return 0;                    /* already running, or done: poll it */
	}
	for (int i = 0; i < TASKS_KEPT; i++)
		running += active(&sc->tasks[i]);
	if (running >= SCRUB_MAX_TASKS) {
		pthread_mutex_unlock(&sc->mu);
		return -EBUSY;
	}
	if (!k)
		k = slot(sc);
	if (!k) {
		pthread_mutex_unlock(&sc->mu);
		return -EBUSY;
	}
	if (k->used) {
		if (!k->joined)
			pthread_join(k->thread, NULL);   /* finished: returns at once */
		task_free(k);
	}
	k->used = true;
	k->sc = sc;
	k->job = q->job;
	k->rate = q->rate ? q->rate : sc->default_rate;
	k->start = q->cursor;
	k->state = OFS_TASK_RUNNING;
	k->st.state = OFS_TASK_RUNNING;
	k->st.cursor = q->cursor;
	k->st.objects_done = q->objects_base;   /* counts go on from the cursor */
	k->st.bytes_done = q->bytes_base;
	k->next_seq = 1;
	k->f = calloc(OFS_MAX_TASK_FINDINGS, sizeof(*k->f));
	k->batch = calloc(WALK_BATCH, sizeof(*k->batch));
	if (q->noids && k->f && k->batch) {
		k->only = malloc((size_t)q->noids * sizeof(*k->only));
		if (k->only) {
			memcpy(k->only, q->oids, (size_t)q->noids * OFS_OID_LEN);
			qsort(k->only, q->noids, sizeof(*k->only), cmp_oid);
			k->nonly = q->noids;
		}
	}
	if (!k->f || !k->batch || (q->noids && !k->only)) {
		task_free(k);
		rc = -ENOMEM;
	} else if (pthread_create(&k->thread, NULL, task_main, k) != 0) {
		task_free(k);
		rc = -EAGAIN;
	}
	pthread_mutex_unlock(&sc->mu);
	if (!rc)
		log_info("job %llu: scrub task started, %llu bytes/s", (unsigned long long)q->job,
			 (unsigned long long)(q->rate ? q->rate : sc->default_rate));
	return rc;
}

int scrubber_poll(struct scrubber *sc, uint64_t job, uint64_t ack, struct wbuf *reply)
{
	struct task *k;
	uint32_t drop = 0;

	pthread_mutex_lock(&sc->mu);
	k = find(sc, job);
	if (!k) {
		pthread_mutex_unlock(&sc->mu);
		return -ENOENT;
	}
	while (drop < k->nf && k->f[drop].seq <= ack)
		drop++;
	if (drop) {
		memmove(k->f, k->f + drop, (k->nf - drop) * sizeof(*k->f));
		k->nf -= drop;
		pthread_cond_broadcast(&sc->cv);
	}
	k->st.state = k->state;
	proto_encode_task_status(reply, &k->st, k->f, k->nf);
	pthread_mutex_unlock(&sc->mu);
	return wbuf_error(reply);
}

int scrubber_ctl(struct scrubber *sc, uint64_t job, uint8_t action)
{
	struct task *k;

	pthread_mutex_lock(&sc->mu);
	k = find(sc, job);
	if (!k) {
		pthread_mutex_unlock(&sc->mu);
		return -ENOENT;
	}
	switch (action) {
	case OFS_TASK_PAUSE:
		k->pause = true;
		if (k->state == OFS_TASK_RUNNING)
			k->state = OFS_TASK_PAUSED;
		break;
	case OFS_TASK_RESUME:
		k->pause = false;
		break;
	case OFS_TASK_CANCEL:
	case OFS_TASK_FORGET:
		k->cancel = true;
		break;
	default:
		pthread_mutex_unlock(&sc->mu);
		return -EINVAL;
	}
	pthread_cond_broadcast(&sc->cv);
	if (action == OFS_TASK_FORGET) {
		pthread_t th = k->thread;
		bool join = !k->joined;
		k->joined = true;
		pthread_mutex_unlock(&sc->mu);
		if (join)
			pthread_join(th, NULL);
		pthread_mutex_lock(&sc->mu);
		task_free(k);
	}
	pthread_mutex_unlock(&sc->mu);
	return 0;
}
