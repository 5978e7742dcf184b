/* scrub.c - the scrub kind: its rows for the task host, findings and their
 * settling, one object walked (see scrub.h, scrub_impl.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scrubber/scrub_impl.h"

static int scrub_init(struct task *t, void *arg, const struct ofs_task_req *q, void **state);
static int scrub_begin(struct task *t, void *state);
static void scrub_batch(struct task *t, void *state, const struct task_obj *w, size_t n);
static int scrub_step(struct task *t, void *state, const struct task_obj *w, size_t at,
		      uint64_t *bytes);
static struct ofs_oid scrub_cursor(void *state, struct ofs_oid done);
static int scrub_end(struct task *t, void *state, int rc, struct ofs_oid last);
static void scrub_release(void *state);

int scrubber_open(struct store *s, struct sidtab *t, struct replicator *r, struct scrubber **out)
{
	struct scrubber *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return -ENOMEM;
	sc->s = s;
	sc->t = t;
	sc->r = r;
	sc->quarantine_s = 7LL * 86400;
	sc->orphan_grace_s = SCRUB_ORPHAN_GRACE_S;
	sc->settle_s = SCRUB_SETTLE_MS / 1000.0;
	sc->kind = (struct task_kind){
		.kind = OFS_TASK_SCRUB, .name = "scrub", .arg = sc,
		.init = scrub_init, .begin = scrub_begin, .batch = scrub_batch, .one = scrub_step,
		.cursor = scrub_cursor, .end = scrub_end, .release = scrub_release,
	};
	*out = sc;
	return 0;
}

void scrubber_set_quarantine(struct scrubber *sc, long long max_age_s)
{
	sc->quarantine_s = max_age_s;
}

void scrubber_set_orphan_grace(struct scrubber *sc, long long seconds)
{
	sc->orphan_grace_s = seconds;
}

void scrubber_set_settle(struct scrubber *sc, long ms)
{
	sc->settle_s = (double)ms / 1000.0;
}

void scrubber_set_mailbox(struct scrubber *sc, struct mailbox *mb)
{
	sc->mb = mb;
}

int scrubber_add_kind(struct scrubber *sc, struct taskhost *h)
{
	return taskhost_add_kind(h, &sc->kind);
}

void scrubber_close(struct scrubber *sc)
{
	free(sc);
}

/* ---- inside the task thread ------------------------------------------- */

double scrub_now(const struct scrub_task *k)
{
	return task_now(k->t);
}

/* The object being scrubbed: the one its local findings name. */
void scrub_at(struct scrub_task *k, struct ofs_oid oid)
{
	k->cur = oid;
	task_at(k->t, oid);
}

static const struct seen *seen_in(const struct suspect *sp, struct ofs_sid server,
				  int kind)
{
	for (uint8_t i = 0; sp && i < sp->n; i++)
		if (sid_eq(sp->s[i].server, server) && sp->s[i].kind == kind)
			return &sp->s[i];
	return NULL;
}

/* Does a second look confirm the first? A copy behind must still be
 * behind what the first look saw; a missing copy or differing contents
 * at one version do not come from a change in flight; anything else must
 * be seen with the same evidence. */
static bool confirms(const struct seen *first, int kind, const char *detail, uint64_t lag)
{
	if (kind == OFS_FINDING_STALE_REPLICA)
		return lag < first->ahead;
	if (kind == OFS_FINDING_MISSING_REPLICA || kind == OFS_FINDING_REPLICA_CONFLICT ||
	    kind == OFS_FINDING_KEYVAL_MISMATCH)
		return true;
	return strcmp(first->detail, detail) == 0;
}

static int suspect_note(struct suspect *sp, struct ofs_sid server, int kind,
			const char *detail, uint64_t ahead)
{
	struct seen *e;

	if (!sp || sp->n >= SUSPECT_SEEN || seen_in(sp, server, kind))
		return 0;
	e = &sp->s[sp->n++];
	e->server = server;
	e->kind = (uint8_t)kind;
	snprintf(e->detail, sizeof(e->detail), "%s", detail);
	e->ahead = ahead;
	return 0;
}

/* A finding about server's copy of oid; other: the copy it was compared
 * with (repair mode uses it; not reported). */
int scrub_add_finding_other(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
			     int kind, const char *detail, struct ofs_sid other)
{
	struct ofs_task_finding f;

	memset(&f, 0, sizeof(f));
	f.server = server;
	f.oid = oid;
	f.kind = (uint8_t)kind;
	snprintf(f.detail, sizeof(f.detail), "%s", detail);
	if (k->next_mend)
		f.ref = k->next_mend->ref;
	if (k->phase != PH_REPORT) {
		const struct seen *first = k->phase == PH_CONFIRM ? seen_in(k->look, server, kind) : NULL;
		if (!first || !confirms(first, kind, detail, k->ev_lag))
			return suspect_note(k->phase == PH_FIRST ? k->look : k->again, server, kind,
					    detail, k->ev_ahead);
		/* seen twice, the same: reported */
	}
	if (!k->holding)
		return task_enqueue(k->t, &f);
	if (k->nheld == k->capheld) {
		size_t cap = k->capheld ? k->capheld * 2 : 8;
		struct ofs_task_finding *n = realloc(k->held, cap * sizeof(*n));
		struct mend *m;
		if (!n)
			return -ENOMEM;
		k->held = n;
		m = realloc(k->hm, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		k->hm = m;
		k->capheld = cap;
	}
	f.source = other;
	if (k->next_mend)
		k->hm[k->nheld] = *k->next_mend;
	else
		memset(&k->hm[k->nheld], 0, sizeof(k->hm[0]));
	k->held[k->nheld++] = f;
	return 0;
}

int scrub_add_finding(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
		       int kind, const char *detail)
{
	struct ofs_sid none;

	memset(&none, 0, sizeof(none));
	return scrub_add_finding_other(k, server, oid, kind, detail, none);
}

int scrub_local_finding(int kind, const char *detail, void *arg)
{
	struct scrub_task *k = arg;
	int rc = scrub_add_finding(k, store_sid(k->sc->s), k->cur, kind, detail);

	/* Repair replaces a bad copy whole: the rest of it need not be read. */
	if (!rc && k->holding && kind == OFS_FINDING_CHECKSUM_MISMATCH)
		return 1;
	return rc;
}

/* Pace reads to the task's rate; -ECANCELED when cancelled meanwhile. */
int scrub_throttle(uint64_t bytes, void *arg)
{
	struct scrub_task *k = arg;

	return task_throttle(k->t, bytes);
}

/* The object's copies, then (while they agree) its structure, with the
 * findings taken as phase says (settling). */
static int look_around(struct scrub_task *k, const struct task_obj *w, int phase)
{
	int rc;

	k->phase = phase;
	k->copies_differ = false;
	rc = scrub_compare_siblings(k, w);
	if (!rc && !k->copies_differ)
		rc = scrub_check_structure(k, w);   /* (from a copy in question: after repair) */
	k->phase = PH_REPORT;
	return rc;
}

static int suspect_push(struct scrub_task *k, const struct suspect *sp);

static int scrub_one(struct scrub_task *k, const struct task_obj *w, uint64_t *bytes)
{
	struct scrubber *sc = k->sc;
	char detail[OFS_TASK_DETAIL_LEN];
	int rc;

	*bytes = 0;
	scrub_at(k, w->oid);
	if (w->decode_rc) {
		snprintf(detail, sizeof(detail), "the object's record does not decode: %s",
			 ofs_strerror(w->decode_rc));
		return scrub_local_finding(OFS_FINDING_RECORD_CORRUPT, detail, k);
	}
	rc = store_behind(sc->s, w->oid);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return scrub_local_finding(OFS_FINDING_STALE_REPLICA, "this copy missed changes while its server "
				     "was away (known since then)", k);
	if (w->a.type == OFS_OBJ_DFILE && !(k->flags & OFS_TASK_F_NODATA)) {
		rc = store_scrub_dfile(sc->s, w->oid, scrub_local_finding, scrub_throttle, k, bytes);
		if (rc == -ENOENT)
			return 0;            /* removed meanwhile */
		if (rc)
			return rc;
	} else if (w->a.type == OFS_OBJ_DIRDATA) {
		bool bad;
		rc = scrub_check_dirdata(k, w, &bad);
		if (rc || bad)
			return rc;           /* (a corrupt copy differs from its siblings: said once) */
	}
	/* (not a memset: the 8 remembered findings are 4.5 KB, and only the
	 * first n of them are ever read) */
	k->fresh.n = 0;
	k->fresh.rounds = 0;
	k->fresh.due = 0;
	k->fresh.oid = w->oid;
	k->fresh.prev = task_prev(k->t);
	k->look = &k->fresh;
	rc = look_around(k, w, PH_FIRST);
	k->look = NULL;
	if (!rc && k->fresh.n) {
		k->fresh.due = scrub_now(k) + k->sc->settle_s;
		rc = suspect_push(k, &k->fresh);
	}
	return rc;
}

/* ---- settling: the second look ------------------------------------------ */

#define SUSPECTS_MAX 1024        /* waiting at once; more: the oldest is looked at early */

static int suspect_push(struct scrub_task *k, const struct suspect *sp)
{
	if (k->nsus == k->capsus) {
		size_t cap = k->capsus ? k->capsus * 2 : 16;
		struct suspect *n = realloc(k->sus, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->sus = n;
		k->capsus = cap;
	}
	k->sus[k->nsus++] = *sp;
	return 0;
}

/* The cursor a restart may resume after: not past an object still
 * waiting for its second look. */
static struct ofs_oid safe_cursor(const struct scrub_task *k, struct ofs_oid cursor)
{
	for (size_t i = 0; i < k->nsus; i++)
		if (memcmp(k->sus[i].prev.b, cursor.b, OFS_OID_LEN) < 0)
			cursor = k->sus[i].prev;
	return cursor;
}


static int second_look(struct scrub_task *k, const struct suspect *sp)
{
	struct task_obj *w = malloc(sizeof(*w));
	struct suspect *again = calloc(1, sizeof(*again));
	int rc;

	if (!w || !again) {
		free(w);
		free(again);
		return -ENOMEM;
	}
	rc = store_getattr(k->sc->s, sp->oid, &w->a);
	if (rc == -ENOENT || rc == -OFS_ECORRUPT) {
		rc = 0;                      /* gone (or the next scrub's record_corrupt) */
		goto out;
	}
	if (rc)
		goto out;
	w->oid = sp->oid;
	w->decode_rc = 0;
	again->oid = sp->oid;
	again->prev = sp->prev;
	again->rounds = sp->rounds + 1;
	scrub_at(k, sp->oid);
	k->look = (struct suspect *)sp;
	k->again = again;
	k->holding = (k->flags & OFS_TASK_F_REPAIR) != 0;
	k->nheld = 0;
	rc = look_around(k, w, PH_CONFIRM);
	k->holding = false;
	k->look = k->again = NULL;
	if (!rc && k->nheld)
		rc = scrub_repair_object(k, w);
	k->nheld = 0;
	if (!rc && again->n) {
		char hex[OFS_OID_HEX];
		oid_to_hex(sp->oid, hex);
		if (again->rounds < SETTLE_ROUNDS) {
			again->due = scrub_now(k) + k->sc->settle_s;
			rc = suspect_push(k, again);
		} else {
			log_info("job %llu: %s kept changing while it was checked (%s); left for the next scrub",
				 (unsigned long long)task_job(k->t), hex, ofs_finding_name(again->s[0].kind));
		}
	}
out:
	free(again);
	free(w);
	return rc;
}

/* Take the second looks that are due; with wait, all of them (waiting
 * for each one's time). -ECANCELED when cancelled meanwhile. */
static int settle(struct scrub_task *k, bool wait)
{
	struct suspect *sp = malloc(sizeof(*sp));
	int rc = 0;

	if (!sp)
		return -ENOMEM;
	while (k->nsus && !rc) {
		double left = k->sus[0].due - scrub_now(k);
		if (left > 0 && !wait && k->nsus < SUSPECTS_MAX)
			break;
		if (left > 0) {
			rc = task_sleep(k->t, left > 0.1 ? 100 : (long)(left * 1000) + 1);
			continue;
		}
		*sp = k->sus[0];
		memmove(k->sus, k->sus + 1, (k->nsus - 1) * sizeof(*k->sus));
		k->nsus--;
		rc = second_look(k, sp);
	}
	free(sp);
	return rc;
}

/* Repair mode starts with the copies known to have missed writes: this
 * server's own copies marked behind, then the copies its stale records
 * (written when a primary here could not reach a sibling) name. */
struct stale_phase {
	struct scrub_task *k;
	struct ofs_sid sid;
	struct ofs_oid last;
	int rc;
};

static int stale_one(struct ofs_oid oid, const char *reason, void *arg)
{
	struct stale_phase *sp = arg;
	struct scrub_task *k = sp->k;
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_task_finding f;
	struct ofs_fetch_reply fr;
	char detail[OFS_TASK_DETAIL_LEN];
	bool have;
	int rc;

	sp->last = oid;
	if (!task_names(k->t, oid)) {
		free(a);
		return 0;                    /* not one of the objects the job names */
	}
	if (!a)
		return -ENOMEM;
	rc = store_getattr(k->sc->s, oid, a);
	have = rc == 0;
	if (rc && rc != -ENOENT && rc != -OFS_ECORRUPT) {
		free(a);
		return rc;
	}
	if (!have && !sid_eq(sp->sid, store_sid(k->sc->s))) {
		free(a);
		return 0;                    /* removed here since: nothing to repair */
	}
	if (!sid_eq(sp->sid, store_sid(k->sc->s))) {
		/* The copy on a sibling: if it knows it is behind, it repairs
		 * itself (its own pass); if it has caught up, the record goes. */
		struct replica_result res;
		struct ofs_summary sm;
		struct wbuf body;
		bool skip = false;
		wbuf_init(&body);
		wbuf_oid(&body, oid);
		if (!wbuf_error(&body) &&
		    replica_forward(k->sc->r, OFS_OP_SUMMARY, body.data, body.len, &sp->sid, 1, &res) == 0) {
			if (!res.rc && proto_decode_summary(res.body, res.len, &sm) == 0) {
				if (sm.behind) {
					skip = true;
				} else if (have && sm.present && !sm.corrupt && sm.version >= a->version) {
					store_stale_del(k->sc->s, oid, sp->sid, sm.version);
					skip = true;
				}
			}
			free(res.body);
		}
		wbuf_free(&body);
		if (skip) {
			free(a);
			return 0;
		}
	}
	scrub_at(k, oid);
	memset(&f, 0, sizeof(f));
	f.server = sp->sid;
	f.oid = oid;
	f.kind = OFS_FINDING_STALE_REPLICA;
	snprintf(detail, sizeof(detail), "recorded at write time: %s", reason);
	snprintf(f.detail, sizeof(f.detail), "%s", detail);
	memset(&fr, 0, sizeof(fr));
	rc = scrub_fix_copy(k, oid, a, have, sp->sid, &f, &fr, false);
	free(a);
	if (!rc && f.repair == OFS_REPAIR_DONE && fr.outcome == OFS_FETCH_GOOD)
		return 0;                    /* current already (repaired meanwhile): no finding */
	if (!rc)
		rc = task_enqueue(k->t, &f);
	return rc;
}

static int stale_phase(struct scrub_task *k)
{
	struct ofs_server *e = NULL;
	size_t ne = 0;
	int rc = sidtab_snapshot(k->sc->t, &e, &ne);

	if (rc)
		return rc;
	/* own marks first (e includes this server) */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (size_t i = 0; i < ne && !rc; i++) {
			struct stale_phase sp = { .k = k, .sid = e[i].sid };
			bool mine = sid_eq(e[i].sid, store_sid(k->sc->s)), more = true, first = true;
			if (mine != (pass == 0))
				continue;
			while (more && !rc) {
				/* (records repaired meanwhile are gone: page from the last) */
				rc = store_stale_for(k->sc->s, sp.sid, first ? NULL : &sp.last, 64,
						     stale_one, &sp, &more);
				first = false;
			}
		}
	}
	free(e);
	return rc;
}

/* ---- the scrub kind (taskhost.h) ---------------------------------------------- */

static int scrub_init(struct task *t, void *arg, const struct ofs_task_req *q, void **state)
{
	struct scrub_task *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->t = t;
	k->sc = arg;
	k->flags = q->flags;
	k->pre_at = -1;
	k->pre = malloc(sizeof(*k->pre));   /* (without it: one SUMMARY each) */
	k->join_wanted = k->sc->mb && (q->flags & OFS_TASK_F_NODATA) && oid_is_zero(q->cursor) &&
			 q->noids == 0;
	*state = k;
	return 0;
}

static int scrub_begin(struct task *t, void *state)
{
	struct scrub_task *k = state;
	struct ofs_stats stats;
	uint32_t nonly;

	task_only(t, &nonly);
	if (nonly) {
		/* (the host counts the objects named) */
	} else if (k->flags & OFS_TASK_F_NODATA) {
		/* No bytes to read: the count LMDB keeps is the total (a scan
		 * of every record would cost a twentieth of the check). */
		uint64_t n;
		if (store_count_objects(k->sc->s, &n) == 0)
			task_set_totals(t, n, UINT64_MAX);
	} else if (store_stats(k->sc->s, &stats) == 0) {
		task_set_totals(t, stats.objects, stats.bytes);
	}
	if (k->flags & OFS_TASK_F_REPAIR) {
		int rc = stale_phase(k);
		if (rc)
			return rc;
	}
	return k->join_wanted ? scrub_join_begin(k) : 0;
}

static void scrub_batch(struct task *t, void *state, const struct task_obj *w, size_t n)
{
	struct scrub_task *k = state;

	(void)t;
	if (k->j) {
		scrub_join_batch(k, w, n);
		return;
	}
	scrub_prefetch(k, w, n);
	scrub_prefetch_parts(k, w, n);
	scrub_prefetch_owners(k, w, n);
}

/* One object checked as scrub_step does, asking what was not asked
 * ahead (k->pre_at: its batch index, or -1). */
int scrub_check_one(struct scrub_task *k, const struct task_obj *w, uint64_t *bytes)
{
	int rc;

	if (k->flags & OFS_TASK_F_REPAIR) {
		k->holding = true;
		k->nheld = 0;
		rc = scrub_one(k, w, bytes);
		k->holding = false;
		if (!rc && k->nheld)
			rc = scrub_repair_object(k, w);
		k->nheld = 0;
	} else {
		rc = scrub_one(k, w, bytes);
	}
	k->pre_at = -1;
	if (!rc && k->nsus)
		rc = settle(k, false);
	return rc;
}

static int scrub_step(struct task *t, void *state, const struct task_obj *w, size_t i,
		      uint64_t *bytes)
{
	struct scrub_task *k = state;

	(void)t;
	*bytes = 0;
	if (k->j)
		return 0;                    /* (the join checks it at the end) */
	k->pre_at = (long)i;
	return scrub_check_one(k, w, bytes);
}

static struct ofs_oid scrub_cursor(void *state, struct ofs_oid done)
{
	const struct scrub_task *k = state;
	struct ofs_oid none;

	if (k->j) {
		memset(&none, 0, sizeof(none));
		return none;                 /* (nothing is done before the join meets) */
	}
	return safe_cursor(state, done);
}

/* A finished task is kept for its last polls: not its buffers. */
static void scrub_trim(struct scrub_task *k)
{
	free(k->pre);
	free(k->kids.v);
	free(k->page_kids.v);
	free(k->states);
	k->pre = NULL;
	k->states = NULL;
	k->nstates = 0;
	memset(&k->kids, 0, sizeof(k->kids));
	memset(&k->page_kids, 0, sizeof(k->page_kids));
}

static int scrub_end(struct task *t, void *state, int rc, struct ofs_oid last)
{
	struct scrub_task *k = state;

	if (k->j) {
		if (!rc)
			rc = scrub_join_end(k);
		scrub_join_release(k);
	}
	if (!rc && k->nsus) {
		rc = settle(k, true);        /* the last second looks */
		if (!rc)
			task_set_cursor(t, last);
	}
	scrub_trim(k);
	if (k->flags & OFS_TASK_F_REPAIR) {
		unsigned purged = 0;
		if (store_quarantine_purge(k->sc->s, k->sc->quarantine_s, &purged) == 0 && purged)
			log_info("quarantine: removed %u old cop%s", purged, purged == 1 ? "y" : "ies");
	}
	return rc;
}

static void scrub_release(void *state)
{
	struct scrub_task *k = state;

	scrub_join_release(k);
	scrub_trim(k);
	free(k->held);
	free(k->hm);
	free(k->sus);
	ofs_client_close(k->client);
	free(k);
}
