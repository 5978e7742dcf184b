/* recover.c - catching up copies that missed changes (see recover.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/backoff.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "server/recover.h"
#include "server/taskhost.h"
#include "server/repair.h"
#include "store/records.h"

#define TICK_MS 200                  /* look for marks this often when idle */
#define RETRY_MS 500                 /* a pass that left copies waiting (a sibling
                                        down or refusing) or failed: the next
                                        after this, doubled each time in a row ... */
#define RETRY_CAP_MS 4000            /* ... up to this, with jitter */
#define PAGE 64                      /* marks read per store call */
#define HOLD_MS 15000                /* a copy held still for a fetch, at most */
#define MAX_ASK 64                   /* servers asked about one object */
#define WORKERS 8                    /* copies caught up at once */
#define SWEEP_MS 2000                /* records of other copies checked this often */
#define SWEEP_SEEN_MS 10000          /* ... on servers heard from this lately */

struct recover {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	pthread_t th;
	bool running;
	pthread_mutex_t mu;          /* guards the fields below */
	pthread_cond_t cv;
	bool stop, kicked;
	bool paused;                 /* count the marks, catch nothing up */
	struct recover_status st;
	/* What it did, for the job store (recover_poll): seq from 1. */
	struct ofs_task_finding *f;
	uint32_t nf;
	uint64_t seq, unlisted;
};

/* What became of one mark. */
enum outcome {
	CAUGHT_UP,                   /* current now; the mark is gone */
	GONE,                        /* no other copy holds it: mark dropped */
	LATER,                       /* a server did not answer, or it moved */
	STUCK,                       /* no copy is current */
};

/* The servers to ask about oid: its copies as this server's record names
 * them, or (no record here: it missed the creation) every server. */
static int servers_of(struct recover *rv, struct ofs_oid oid, struct ofs_sid *out, size_t *n)
{
	struct ofs_sid self = store_sid(rv->s);
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	*n = 0;
	if (!a)
		return -ENOMEM;
	rc = store_getattr(rv->s, oid, a);
	if (rc == 0 && a->nsids > 1) {
		for (uint8_t i = 0; i < a->nsids && *n < MAX_ASK; i++)
			if (!sid_eq(a->sids[i], self))
				out[(*n)++] = a->sids[i];
		free(a);
		return 0;
	}
	free(a);
	if (rc && rc != -ENOENT && rc != -OFS_ECORRUPT)
		return rc;
	struct ofs_server *e = NULL;
	size_t ne = 0;
	rc = sidtab_snapshot(rv->t, &e, &ne);
	if (rc)
		return rc;
	for (size_t i = 0; i < ne && *n < MAX_ASK; i++)
		if (!sid_eq(e[i].sid, self))
			out[(*n)++] = e[i].sid;
	free(e);
	return 0;
}

static int ask(struct replicator *r, struct ofs_oid oid, const struct ofs_sid *sids, size_t n,
	       struct ofs_summary *sm, int *rcs)
{
	return repair_ask(r, OFS_OP_SUMMARY, oid, sids, n, sm, rcs);
}

/* Fetch the newest current copy, holding the copies still on a retry. */
static int fetch(struct recover *rv, struct ofs_oid oid, const struct ofs_sid *sids, size_t n,
		 struct ofs_fetch_reply *fr)
{
	struct ofs_sid self = store_sid(rv->s);
	int rc = repair_fetch(rv->s, rv->t, rv->r, oid, sids, n, OFS_FETCH_LOCALBAD, "catch-up",
			      NULL, NULL, fr);

	if (rc != -EAGAIN)
		return rc;
	/* Changed while it was fetched (a busy directory): hold every copy
	 * still for the fetch. Clients wait out OFS_EMOVING. */
	rc = replica_freeze(rv->r, oid, sids, n, HOLD_MS, self);
	if (!rc)
		rc = repair_fetch(rv->s, rv->t, rv->r, oid, sids, n, OFS_FETCH_LOCALBAD,
				  "catch-up", NULL, NULL, fr);
	(void)replica_freeze(rv->r, oid, sids, n, 0, self);
	return rc;
}

/* Every copy the record here names answered and none holds the object:
 * it was removed while this copy was away (repair_drop_removed). */
static int gone(struct recover *rv, struct ofs_oid oid, const struct ofs_sid *named,
		size_t nnamed, enum outcome *out)
{
	int rc = repair_drop_removed(rv->s, rv->t, rv->r, oid, named, nnamed);

	if (rc == 1)
		*out = GONE;
	return rc < 0 ? rc : 0;
}

/*
 * Catch this server's copy of oid up by the changes it missed, read from
 * the current copy src (changelog.h): 1 when it is current now (at
 * *version, by the changes after *since), 0 when it cannot be this way (the mark does not say which
 * change it missed, src's log no longer reaches back, the result would
 * differ from src) - it is then fetched whole - or an error.
 */
static int by_changes(struct recover *rv, struct ofs_oid oid, const char *why,
		      const struct ofs_summary *mine, struct ofs_sid src, uint64_t *since,
		      uint64_t *version, uint64_t *bytes)
{
	uint64_t missed = rec_missed_version(why);
	struct ofs_req q = { .op = OFS_OP_CHANGES, .oid = oid };
	struct replica_result res = { 0 };
	struct ofs_digest d;
	const uint8_t *notes;
	struct wbuf w;
	size_t n;
	int rc;

	if (missed == 0 || mine->type == OFS_OBJ_DFILE)
		return 0;                        /* (a dfile's change is its bytes) */
	q.version = *since = missed - 1;
	wbuf_init(&w);
	rc = proto_encode_req(&w, &q);
	if (!rc)
		rc = replica_forward(rv->r, OFS_OP_CHANGES, w.data, w.len, &src, 1, &res);
	wbuf_free(&w);
	if (rc)
		return rc;
	rc = res.rc;
	if (!rc)
		rc = proto_decode_changes(res.body, res.len, version, &d, &notes, &n);
	if (!rc)
		rc = store_catch_up_changes(rv->s, oid, mine->version, q.version, notes, n,
					    *version, &d);
	free(res.body);
	if (!rc) {
		char hex[OFS_OID_HEX];
		oid_to_hex(oid, hex);
		log_debug("caught up copy of %s by the changes after version %llu: now version "
			  "%llu", hex, (unsigned long long)q.version, (unsigned long long)*version);
		*bytes = n;
		return 1;
	}
	if (rc != -ERANGE) {
		char hex[OFS_OID_HEX];
		oid_to_hex(oid, hex);
		log_debug("catch-up of %s by changes after version %llu: %s; fetched whole", hex,
			  (unsigned long long)q.version, ofs_strerror(rc));
	}
	return rc == -ENOMEM ? rc : 0;
}

/* Bring this server's copy of oid (marked behind: why) up to date;
 * *bytes: bytes fetched. */
static int catch_up(struct recover *rv, struct ofs_oid oid, const char *why, enum outcome *out,
		    uint64_t *bytes, struct ofs_task_finding *f)
{
	struct ofs_sid sids[MAX_ASK], self = store_sid(rv->s);
	struct ofs_summary sm[MAX_ASK], mine;
	struct ofs_fetch_reply fr;
	int rcs[MAX_ASK], best = -1, rc;
	size_t n = 0;
	bool quiet = false, elsewhere = false, have;
	char hex[OFS_OID_HEX];

	*bytes = 0;
	*out = LATER;
	oid_to_hex(oid, hex);
	rc = servers_of(rv, oid, sids, &n);
	if (!rc)
		rc = ask(rv->r, oid, sids, n, sm, rcs);
	if (rc)
		return rc;
	memset(&mine, 0, sizeof(mine));
	rc = store_summary(rv->s, oid, &mine);
	have = rc == 0;
	if (rc && rc != -ENOENT && rc != -OFS_ECORRUPT)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (rcs[i]) {
			quiet |= rcs[i] != -OFS_ECORRUPT;
			continue;
		}
		elsewhere |= sm[i].present;
		if (sm[i].present && !sm[i].behind && !sm[i].corrupt &&
		    (best < 0 || sm[i].version > sm[best].version))
			best = (int)i;
	}
	if (best < 0) {
		if (quiet)
			return 0;                /* a silent one may hold it current */
		if (elsewhere)
			goto fetch;              /* none current: repair_fetch reconciles */
		return gone(rv, oid, sids, n, out);
	}
	if (have && mine.version == sm[best].version && digest_eq(mine.digest, sm[best].digest)) {
		/* Same as a current copy: nothing was missed after all. */
		log_debug("copy of %s is the same as the current one (version %llu)", hex,
			  (unsigned long long)mine.version);
		rc = store_stale_del(rv->s, oid, self, mine.version);
		if (!rc && store_behind(rv->s, oid) == 0) {
			*out = CAUGHT_UP;
			f->source = sids[best];
			snprintf(f->action, sizeof(f->action), "caught up: the same as the current "
				 "copy (version %llu); the mark dropped",
				 (unsigned long long)mine.version);
			repair_tell_current(rv->r, oid, self, mine.version, sids, n);
		}
		return rc;
	}
	if (have) {
		uint64_t version = 0, since = 0;
		rc = by_changes(rv, oid, why, &mine, sids[best], &since, &version, bytes);
		if (rc < 0)
			return rc;
		if (rc == 1 && store_behind(rv->s, oid) == 0) {
			*out = CAUGHT_UP;
			f->source = sids[best];
			snprintf(f->action, sizeof(f->action), "caught up by the %llu changes "
				 "after version %llu (now version %llu)",
				 (unsigned long long)(version - since), (unsigned long long)since,
				 (unsigned long long)version);
			repair_tell_current(rv->r, oid, self, version, sids, n);
			return 0;
		}
	}
fetch:
	memset(&fr, 0, sizeof(fr));
	rc = fetch(rv, oid, sids, n, &fr);
	if (rc == -EAGAIN || rc == -EBUSY || rc == -OFS_EUNREACHABLE || rc == -OFS_EMOVING ||
	    rc == -EEXIST || rc == -ENOENT)
		return 0;                    /* again on the next pass */
	if (rc)
		return rc;
	if (fr.outcome == OFS_FETCH_DONE || fr.outcome == OFS_FETCH_RECONCILED ||
	    (fr.outcome == OFS_FETCH_GOOD && store_behind(rv->s, oid) == 0)) {
		log_debug("caught up copy of %s: %s", hex, fr.detail);
		*bytes = fr.bytes;
		*out = CAUGHT_UP;
		f->source = fr.source;
		snprintf(f->action, sizeof(f->action), "caught up: %s", fr.detail);
	} else if (fr.outcome == OFS_FETCH_CONFLICT || fr.outcome == OFS_FETCH_NONE) {
		*out = STUCK;
		snprintf(f->action, sizeof(f->action), "left for a repair: %s", fr.detail);
	}
	return 0;
}

/* One page of stale records: this server's marks, or its records of
 * another server's copies. */
struct page {
	struct ofs_oid oids[PAGE];
	char why[PAGE][256];
	uint32_t n;
};

/* The next page after `after` (first: from the start) of the records
 * naming sid. */
static int next_page(struct recover *rv, struct ofs_sid sid, const struct ofs_oid *after,
		     struct page *p, bool *more)
{
	struct store_stale_page sp = { .oids = p->oids, .why = p->why, .cap = PAGE };
	int rc = store_stale_for(rv->s, sid, after, PAGE, store_stale_page_add, &sp, more);

	p->n = sp.n;
	return rc;
}

/* Keep f for the job store (at most OFS_MAX_TASK_FINDINGS wait; past
 * that they are counted, not listed). */
static void record(struct recover *rv, struct ofs_task_finding *f)
{
	pthread_mutex_lock(&rv->mu);
	if (!rv->f)
		rv->f = calloc(OFS_MAX_TASK_FINDINGS, sizeof(*rv->f));
	if (rv->f && rv->nf < OFS_MAX_TASK_FINDINGS) {
		f->seq = ++rv->seq;
		rv->f[rv->nf++] = *f;
	} else {
		rv->unlisted++;
	}
	pthread_mutex_unlock(&rv->mu);
}

/* How many copies here are marked behind. */
static int count_marks(struct recover *rv, uint64_t *n)
{
	struct ofs_sid self = store_sid(rv->s);
	struct ofs_oid after;
	struct page *p = malloc(sizeof(*p));
	bool more = true, first = true;
	int rc = 0;

	*n = 0;
	if (!p)
		return -ENOMEM;
	while (more && !rc) {
		uint64_t before = *n;
		rc = next_page(rv, self, first ? NULL : &after, p, &more);
		first = false;
		*n = before + p->n;
		if (p->n)
			after = p->oids[p->n - 1];
	}
	free(p);
	return rc;
}

/* One object of a page, by one worker: its outcome, accounted at once. */
struct page_work {
	struct recover *rv;
	struct page *p;
	pthread_mutex_t mu;          /* guards next and the tallies */
	uint32_t next;
	uint64_t left, stuck, done;
	int err;                     /* -ENOMEM: the pass stops */
};

static void one(struct page_work *w, uint32_t i)
{
	struct recover *rv = w->rv;
	struct ofs_task_finding f;
	enum outcome o;
	uint64_t b = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = catch_up(rv, w->p->oids[i], w->p->why[i], &o, &b, &f);
	if (rc && rc != -ENOMEM) {
		/* this object only: the next pass tries it again */
		char hex[OFS_OID_HEX];
		oid_to_hex(w->p->oids[i], hex);
		log_debug("catch-up of %s: %s; again later", hex, ofs_strerror(rc));
		o = LATER;
		b = 0;
		rc = 0;
	}
	if (rc) {
		pthread_mutex_lock(&w->mu);
		w->err = rc;
		pthread_mutex_unlock(&w->mu);
		return;
	}
	if (o == CAUGHT_UP || o == GONE) {   /* (a conflict: repair says it) */
		f.server = store_sid(rv->s);
		f.oid = w->p->oids[i];
		f.kind = OFS_FINDING_STALE_REPLICA;
		snprintf(f.detail, sizeof(f.detail), "this copy missed changes: %s", w->p->why[i]);
		f.repair = OFS_REPAIR_DONE;
		if (o == GONE)
			snprintf(f.action, sizeof(f.action), "removed while this copy was away: "
				 "removed here too, its bytes kept in quarantine");
		record(rv, &f);
	}
	pthread_mutex_lock(&w->mu);
	w->done += o == CAUGHT_UP;
	w->left += o == LATER || o == STUCK;
	w->stuck += o == STUCK;
	pthread_mutex_unlock(&w->mu);
	pthread_mutex_lock(&rv->mu);
	rv->st.caught_up += o == CAUGHT_UP;
	rv->st.bytes += b;
	if ((o == CAUGHT_UP || o == GONE) && rv->st.behind)
		rv->st.behind--;
	pthread_mutex_unlock(&rv->mu);
}

static void *worker(void *arg)
{
	struct page_work *w = arg;

	for (;;) {
		uint32_t i;
		pthread_mutex_lock(&w->rv->mu);
		bool stop = w->rv->stop;
		pthread_mutex_unlock(&w->rv->mu);
		pthread_mutex_lock(&w->mu);
		i = w->next++;
		if (w->err || stop)
			i = w->p->n;
		pthread_mutex_unlock(&w->mu);
		if (i >= w->p->n)
			return NULL;
		one(w, i);
	}
}

/* The objects of a page, WORKERS at a time: each copy's catch-up is a few
 * round trips and syncs, and concurrent ones share the group commits. */
static int run_page(struct recover *rv, struct page *p, uint64_t *left, uint64_t *stuck,
		    uint64_t *done)
{
	struct page_work w = { .rv = rv, .p = p };
	pthread_t th[WORKERS];
	int started = 0;

	pthread_mutex_init(&w.mu, NULL);
	for (int i = 0; i < WORKERS && (uint32_t)i < p->n; i++)
		if (pthread_create(&th[started], NULL, worker, &w) == 0)
			started++;
	if (!started)
		worker(&w);              /* (no thread: this one does it all) */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&w.mu);
	*left += w.left;
	*stuck += w.stuck;
	*done += w.done;
	return w.err;
}

int recover_pass(struct recover *rv)
{
	struct ofs_sid self = store_sid(rv->s);
	struct ofs_oid after;
	struct page *p = malloc(sizeof(*p));
	uint64_t left = 0, stuck = 0, done = 0, total = 0;
	bool more = true, first = true;
	int rc;

	if (!p)
		return -ENOMEM;
	rc = count_marks(rv, &total);
	pthread_mutex_lock(&rv->mu);
	rv->st.behind = total;
	rv->st.active = !rv->paused && total > rv->st.stuck;
	if (rv->paused)
		total = 0;
	pthread_mutex_unlock(&rv->mu);
	while (more && !rc && total) {
		rc = next_page(rv, self, first ? NULL : &after, p, &more);
		first = false;
		if (!rc && p->n)
			rc = run_page(rv, p, &left, &stuck, &done);
		pthread_mutex_lock(&rv->mu);
		if (rv->stop)
			more = false;
		pthread_mutex_unlock(&rv->mu);
		if (p->n)
			after = p->oids[p->n - 1];
	}
	free(p);
	if (rc)
		return rc;
	pthread_mutex_lock(&rv->mu);
	if (!rv->paused) {
		rv->st.behind = left;
		rv->st.stuck = stuck;
		rv->st.active = left > stuck;
	}
	pthread_mutex_unlock(&rv->mu);
	if (done || stuck)
		log_info("catch-up: %llu cop%s brought up to date, %llu left behind%s",
			 (unsigned long long)done, done == 1 ? "y" : "ies",
			 (unsigned long long)left,
			 stuck ? " (some with no current copy: repair reconciles them)" : "");
	return (int)(done > (uint64_t)0x7fffffff ? 0x7fffffff : done);
}

/* ---- the records this server holds of other copies ------------------------ */

/* Tell sid that its copy of oid missed changes (BEHIND). */
static void tell_behind(struct recover *rv, struct ofs_sid sid, struct ofs_oid oid,
			const char *reason)
{
	struct replica_result res = { 0 };
	struct wbuf w;

	wbuf_init(&w);
	proto_encode_report(&w, oid, store_sid(rv->s), reason);
	if (!wbuf_error(&w))
		replica_forward(rv->r, OFS_OP_BEHIND, w.data, w.len, &sid, 1, &res);
	free(res.body);
	wbuf_free(&w);
}

/* One record of sid's copy of oid: settle it by asking that copy. */
static void settle_record(struct recover *rv, struct ofs_sid sid, struct ofs_oid oid,
			  const char *reason)
{
	struct ofs_summary mine, theirs;
	int rc, trc = 0;

	memset(&mine, 0, sizeof(mine));
	if (store_summary(rv->s, oid, &mine) != 0 || store_behind(rv->s, oid) != 0)
		return;                  /* gone here (its records went with it), or
		                            this copy is behind itself: no judge */
	rc = ask(rv->r, oid, &sid, 1, &theirs, &trc);
	if (rc || trc)
		return;                  /* no answer: next time */
	if (theirs.present && !theirs.behind && !theirs.corrupt && theirs.version >= mine.version)
		store_stale_del(rv->s, oid, sid, UINT64_MAX);   /* current: the record goes */
	else if (!theirs.behind)
		tell_behind(rv, sid, oid, reason);   /* it does not know: again */
}

/*
 * Every SWEEP_MS, the stale records this server holds of copies on
 * servers heard from lately are checked against those copies: a copy
 * current now (its STALE_CLEAR lost a race with a write here, or never
 * arrived) loses its record; a copy that does not know it is behind (its
 * BEHIND was lost) is told again. So no record outlives its reason, and
 * none is left untold.
 */
static void sweep_records(struct recover *rv)
{
	struct ofs_server *e = NULL;
	struct page *p;
	size_t ne = 0;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (sidtab_snapshot(rv->t, &e, &ne) != 0)
		return;
	p = malloc(sizeof(*p));
	for (size_t i = 0; p && i < ne; i++) {
		struct ofs_oid after;
		bool more = true, first = true;
		if (sid_eq(e[i].sid, store_sid(rv->s)) ||
		    now_ns - e[i].last_seen_ns > (int64_t)SWEEP_SEEN_MS * 1000000)
			continue;            /* not heard from lately: it may be down */
		while (more) {
			if (next_page(rv, e[i].sid, first ? NULL : &after, p, &more) != 0 || p->n == 0)
				break;
			first = false;
			for (uint32_t j = 0; j < p->n; j++)
				settle_record(rv, e[i].sid, p->oids[j], p->why[j]);
			after = p->oids[p->n - 1];
		}
	}
	free(p);
	free(e);
}

static void *run(void *arg)
{
	struct recover *rv = arg;
	struct timespec last = { 0 };
	struct backoff bo;

	backoff_init(&bo, RETRY_MS, RETRY_CAP_MS);
	for (;;) {
		struct recover_status st;
		struct timespec ts;
		long wait_ms;
		int rc;

		pthread_mutex_lock(&rv->mu);
		bool stop = rv->stop, kicked = rv->kicked;
		rv->kicked = false;
		pthread_mutex_unlock(&rv->mu);
		if (stop)
			break;
		if (kicked)
			backoff_reset(&bo);     /* a new mark: not held back by old failures */
		rc = recover_pass(rv);
		if (rc < 0)
			log_limited(LOG_WARN, NULL, "catch-up: %s; trying again", ofs_strerror(rc));
		{
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - last.tv_sec) * 1000 + (t.tv_nsec - last.tv_nsec) / 1000000 >=
			    SWEEP_MS) {
				sweep_records(rv);
				last = t;
			}
		}
		recover_status(rv, &st);
		if (rc > 0 || !(st.behind > st.stuck || rc < 0))
			backoff_reset(&bo);     /* progress, or nothing waits */
		if (rc > 0)
			continue;               /* progress: look again at once */
		wait_ms = st.behind > st.stuck || rc < 0 ? backoff_next(&bo) : TICK_MS;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += wait_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&rv->mu);
		while (!rv->stop && !rv->kicked &&
		       pthread_cond_timedwait(&rv->cv, &rv->mu, &ts) == 0)
			;
		pthread_mutex_unlock(&rv->mu);
	}
	return NULL;
}

int recover_start(struct store *s, struct sidtab *t, struct replicator *r, bool paused,
		  struct recover **out)
{
	struct recover *rv = calloc(1, sizeof(*rv));

	if (!rv)
		return -ENOMEM;
	rv->paused = paused;
	rv->s = s;
	rv->t = t;
	rv->r = r;
	pthread_mutex_init(&rv->mu, NULL);
	pthread_cond_init(&rv->cv, NULL);
	if (pthread_create(&rv->th, NULL, run, rv) != 0) {
		pthread_cond_destroy(&rv->cv);
		pthread_mutex_destroy(&rv->mu);
		free(rv);
		return -EAGAIN;
	}
	rv->running = true;
	*out = rv;
	return 0;
}

void recover_stop(struct recover *rv)
{
	if (!rv)
		return;
	pthread_mutex_lock(&rv->mu);
	rv->stop = true;
	pthread_cond_broadcast(&rv->cv);
	pthread_mutex_unlock(&rv->mu);
	if (rv->running)
		pthread_join(rv->th, NULL);
	pthread_cond_destroy(&rv->cv);
	pthread_mutex_destroy(&rv->mu);
	free(rv->f);
	free(rv);
}

int recover_poll(struct recover *rv, uint64_t ack, struct wbuf *reply)
{
	struct ofs_task_status st;
	uint32_t drop = 0;

	memset(&st, 0, sizeof(st));
	if (!rv) {
		st.state = OFS_TASK_DONE;
		proto_encode_task_status(reply, &st, NULL, 0);
		return wbuf_error(reply);
	}
	pthread_mutex_lock(&rv->mu);
	while (drop < rv->nf && rv->f[drop].seq <= ack)
		drop++;
	if (drop) {
		memmove(rv->f, rv->f + drop, (rv->nf - drop) * sizeof(*rv->f));
		rv->nf -= drop;
	}
	st.state = rv->st.active ? OFS_TASK_RUNNING : OFS_TASK_DONE;
	st.objects_done = rv->st.caught_up;
	st.objects_total = rv->st.caught_up + rv->st.behind;
	st.bytes_done = st.bytes_total = rv->st.bytes;
	st.repairs = rv->st.caught_up;
	if (rv->unlisted)
		snprintf(st.reason, sizeof(st.reason), "%llu more not listed (the findings "
			 "queue was full)", (unsigned long long)rv->unlisted);
	proto_encode_task_status(reply, &st, rv->f, rv->nf);
	pthread_mutex_unlock(&rv->mu);
	return wbuf_error(reply);
}

void recover_kick(struct recover *rv)
{
	if (!rv)
		return;
	pthread_mutex_lock(&rv->mu);
	rv->kicked = true;
	pthread_cond_broadcast(&rv->cv);
	pthread_mutex_unlock(&rv->mu);
}

void recover_status(struct recover *rv, struct recover_status *st)
{
	memset(st, 0, sizeof(*st));
	if (!rv)
		return;
	pthread_mutex_lock(&rv->mu);
	*st = rv->st;
	pthread_mutex_unlock(&rv->mu);
}

bool recover_busy(struct recover *rv)
{
	struct recover_status st;

	recover_status(rv, &st);
	return st.behind > st.stuck;
}

static void hook_behind(void *arg)
{
	recover_kick(arg);
}

static void hook_stats(void *arg, struct ofs_stats *st)
{
	struct recover_status rs;

	recover_status(arg, &rs);
	st->behind = rs.behind;
	st->stuck = rs.stuck < rs.behind ? rs.stuck : rs.behind;
	st->caught_up = rs.caught_up;
	st->recovering = rs.active;
}

static bool hook_busy(void *arg)
{
	return recover_busy(arg);
}

static int hook_poll(void *arg, uint64_t ack, struct wbuf *reply)
{
	return recover_poll(arg, ack, reply);
}

void recover_attach(struct recover *rv, struct service *sv, struct taskhost *h)
{
	sv->recover = rv;
	sv->hooks.behind = hook_behind;
	sv->hooks.stats = hook_stats;
	sv->hooks.arg = rv;
	if (h) {
		taskhost_set_yield(h, hook_busy, rv);
		taskhost_set_system_job(h, RECOVER_JOB, hook_poll, rv);
	}
}
