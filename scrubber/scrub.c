/* scrub.c - scrub tasks inside ofs-server (see scrub.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/ofs.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "rebalancer/move.h"
#include "server/repair.h"
#include "scrubber/scrub.h"
#include "server/points.h"
#include "server/records.h"
#include "server/taskhost.h"

/* What repair needs to mend a structure finding (repair mode only). */
enum { MEND_NONE, MEND_BACKREF, MEND_DANGLING_ENTRY, MEND_DANGLING_PART, MEND_ORPHAN,
       MEND_MOVE, MEND_SECOND_OWNER, MEND_ENTRY_TYPE, MEND_REPOINT };
struct mend {
	int what;
	struct ofs_handle child;         /* BACKREF: the object; DANGLING: what was named */
	struct ofs_backref want;         /* BACKREF: what the forward pointer says */
	char name[OFS_NAME_MAX + 1];     /* DANGLING_ENTRY: the entry */
	struct ofs_oid ref;              /* the finding's other object */
	struct ofs_sid from;             /* MOVE: the server out of service */
	bool relink;                     /* ORPHAN: its owner is there to point again */
	struct ofs_sid owner_at;         /* ORPHAN, SECOND_OWNER: a server holding the owner */
	uint8_t type;                    /* ENTRY_TYPE: the object's type */
	uint32_t stripe;                 /* SECOND_OWNER: the owner's stripe (slot) */
	uint64_t size;                   /* SECOND_OWNER: the shared dfile's length */
};

/*
 * Settling. A finding that compares this copy with others, or an object
 * with its owner or parts, may be a change caught half done: a write on
 * its way to the copies, a create between its objects and its entry, a
 * rename between its entry and its back reference, a remove between its
 * entry and its objects. Such a finding is a suspect until a second look
 * SETTLE_S later sees it again with the same evidence (for a copy behind:
 * still behind the version the first look saw elsewhere); a second look
 * that sees different evidence (the object kept changing) looks again, up
 * to SETTLE_ROUNDS times, and then lets it go for the next scrub. Every
 * client step of such a change follows the one before in milliseconds.
 */
#define SETTLE_S 1.0
#define SETTLE_ROUNDS 5
#define SUSPECT_SEEN 8           /* findings remembered per suspect object */
enum { PH_REPORT, PH_FIRST, PH_CONFIRM };
struct seen {
	struct ofs_sid server;
	uint8_t kind;                    /* enum ofs_finding_kind */
	char detail[OFS_TASK_DETAIL_LEN];
	uint64_t ahead;                  /* stale_replica: the newer version seen */
};
struct suspect {
	struct ofs_oid oid;
	struct ofs_oid prev;             /* the task's cursor when it was first seen */
	double due;
	int rounds;
	uint8_t n;
	struct seen s[SUSPECT_SEEN];
};

/*
 * The sibling copies' summaries of a walked batch, asked for with one
 * SUMMARY_MANY per sibling server (all at once) instead of one SUMMARY
 * per object: the first look at each object of the batch compares with
 * these. ok[i][j]: the answer for batch object i from the server named
 * by its handle's sids[j]. A second look always asks afresh.
 */
struct prefetched {
	struct ofs_summary sm[TASKHOST_BATCH][OFS_MAX_REPLICAS];
	bool ok[TASKHOST_BATCH][OFS_MAX_REPLICAS];
	struct ofs_summary mine[TASKHOST_BATCH];     /* this server's copies it leads */
	bool mine_ok[TASKHOST_BATCH];
	bool lead_alive[TASKHOST_BATCH];             /* another server leads it, and
	                                            answered: it compares */
	uint8_t owner[TASKHOST_BATCH];               /* its owner points back, as this
	                                            server's records show it
	                                            (STORE_POINTS_*; UNSURE: ask) */
};
_Static_assert((int)STORE_POINTS_YES == (int)POINTS_YES &&
	       (int)STORE_POINTS_ELSEWHERE == (int)POINTS_ELSEWHERE &&
	       (int)STORE_POINTS_BUILDING == (int)POINTS_BUILDING, "store and POINTS answers agree");

/* Children's summaries asked ahead (SUMMARY_MANY of each child's primary),
 * sorted by OID: what locate would find first, for a first look. */
struct kid {
	struct ofs_oid oid;
	struct ofs_sid from;             /* the child's primary, which answered */
	struct ofs_summary sm;
};
struct kidtab {
	struct kid *v;
	size_t n, cap;
};

/* A scrub task's own state (the host keeps the rest: server/taskhost.h). */
struct scrub_task {
	struct task *t;                  /* the host's handle */
	struct scrubber *sc;
	uint32_t flags;                  /* OFS_TASK_F_* */
	struct ofs_oid cur;              /* object being scrubbed */
	bool holding;                    /* repair mode: findings of the object
	                                    wait in held until it is repaired */
	struct ofs_task_finding *held;
	struct mend *hm;                 /* held[i]'s mending information */
	size_t nheld, capheld;
	const struct mend *next_mend;    /* for the finding being added */
	int phase;                       /* PH_*: how settling findings are taken */
	struct suspect fresh;            /* the object being walked, first look */
	struct suspect *sus;             /* waiting for their second look, due order */
	size_t nsus, capsus;
	struct suspect *look;            /* PH_FIRST: being filled; PH_CONFIRM: the
	                                    first look's */
	struct suspect *again;           /* PH_CONFIRM: seen again, but changed */
	uint64_t ev_ahead;               /* stale_replica being added: the newer
	                                    version; ev_lag: this copy's */
	uint64_t ev_lag;
	bool copies_differ;              /* compare_siblings: this copy's content
	                                    is in question (no structure check) */
	struct ofs_client *client;       /* to this server, for structure repairs */
	uint32_t part_at;                /* check_structure: the part being checked */
	struct prefetched *pre;          /* the walked batch's sibling summaries */
	struct kidtab kids;              /* the batch's parts, asked ahead */
	struct kidtab page_kids;         /* a dirdata's page of entries, asked ahead */
	long pre_at;                     /* the object being scrubbed: its index in
	                                    the batch (-1: none, ask) */
	struct server_state {            /* the server table's states, read once */
		struct ofs_sid sid;      /* per batch for its first looks */
		uint8_t state;
	} *states;
	size_t nstates;
};

struct scrubber {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	long long quarantine_s;          /* keep quarantined copies this long */
	long long orphan_grace_s;        /* orphans younger than this are left */
	struct task_kind kind;           /* registered with the host */
};

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

int scrubber_add_kind(struct scrubber *sc, struct taskhost *h)
{
	return taskhost_add_kind(h, &sc->kind);
}

void scrubber_close(struct scrubber *sc)
{
	free(sc);
}

/* ---- inside the task thread ------------------------------------------- */

static double now_s(const struct scrub_task *k)
{
	return task_now(k->t);
}

/* The object being scrubbed: the one its local findings name. */
static void at(struct scrub_task *k, struct ofs_oid oid)
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
static int add_finding_other(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
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

static int add_finding(struct scrub_task *k, struct ofs_sid server, struct ofs_oid oid,
		       int kind, const char *detail)
{
	struct ofs_sid none;

	memset(&none, 0, sizeof(none));
	return add_finding_other(k, server, oid, kind, detail, none);
}

static int local_finding(int kind, const char *detail, void *arg)
{
	struct scrub_task *k = arg;
	int rc = add_finding(k, store_sid(k->sc->s), k->cur, kind, detail);

	/* Repair replaces a bad copy whole: the rest of it need not be read. */
	if (!rc && k->holding && kind == OFS_FINDING_CHECKSUM_MISMATCH)
		return 1;
	return rc;
}

/* Pace reads to the task's rate; -ECANCELED when cancelled meanwhile. */
static int throttle(uint64_t bytes, void *arg)
{
	struct scrub_task *k = arg;

	return task_throttle(k->t, bytes);
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

/*
 * One question each to up to OFS_MAX_REPLICAS servers, asked at once:
 * fill(y) writes the OIDs to ask sid[y] into oids and returns their count
 * (SUMMARY_MANY; 0: only whether it answers, PING); take(y) gets its
 * answers, in that order, when it gave them all. alive[y]: it answered.
 */
typedef uint32_t (*ask_fill_fn)(size_t y, uint8_t *oids, void *arg);
typedef void (*ask_take_fn)(size_t y, const struct ofs_summary *got, uint32_t n, void *arg);
static void ask_servers(struct scrub_task *k, const struct ofs_sid *sid, size_t m, ask_fill_fn fill,
			ask_take_fn take, void *arg, bool *alive)
{
	struct replica_sent sent[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	uint32_t cnt[OFS_MAX_REPLICAS];
	uint8_t *oids = malloc((size_t)OFS_SUMMARY_MANY_MAX * OFS_OID_LEN);
	struct ofs_summary *got = malloc(OFS_SUMMARY_MANY_MAX * sizeof(*got));

	for (size_t y = 0; y < m; y++) {
		struct ofs_req q;
		struct wbuf body;
		alive[y] = false;
		sent[y].n = 0;
		memset(&res[y], 0, sizeof(res[y]));
		if (!oids || !got)
			continue;
		memset(&q, 0, sizeof(q));
		cnt[y] = fill(y, oids, arg);
		q.op = cnt[y] ? OFS_OP_SUMMARY_MANY : OFS_OP_PING;
		q.data = oids;
		q.data_len = (size_t)cnt[y] * OFS_OID_LEN;
		wbuf_init(&body);
		if (proto_encode_req(&body, &q) == 0)
			replica_send(k->sc->r, q.op, body.data, body.len, &sid[y], 1, &sent[y], &res[y]);
		wbuf_free(&body);
	}
	for (size_t y = 0; y < m; y++) {
		if (!sent[y].n)
			continue;
		replica_collect(k->sc->r, &sent[y], &res[y]);
		alive[y] = !res[y].rc;
		if (alive[y] && cnt[y] && proto_decode_summaries(res[y].body, res[y].len, got, cnt[y]) == 0)
			take(y, got, cnt[y], arg);
		free(res[y].body);
	}
	free(got);
	free(oids);
}

/* The server table's states for the batch's first looks (one lock, not
 * one per object copy); the table changes rarely, and a second look reads
 * it afresh. */
static void take_states(struct scrub_task *k)
{
	struct ofs_server *e = NULL;
	struct server_state *v;
	size_t n = 0;

	k->nstates = 0;
	if (sidtab_snapshot(k->sc->t, &e, &n) != 0 || n == 0 ||
	    !(v = realloc(k->states, n * sizeof(*v)))) {
		free(e);
		return;
	}
	k->states = v;
	for (size_t i = 0; i < n; i++) {
		v[i].sid = e[i].sid;
		v[i].state = e[i].state;
	}
	k->nstates = n;
	free(e);
}

/* A server's state: from the batch's table (batch, and it was read), else
 * asked of the table. */
static int server_state(const struct scrub_task *k, struct ofs_sid sid, bool batch, uint8_t *state)
{
	if (!batch || !k->nstates)
		return sidtab_state(k->sc->t, sid, state);
	for (size_t i = 0; i < k->nstates; i++)
		if (sid_eq(k->states[i].sid, sid)) {
			*state = k->states[i].state;
			return 0;
		}
	return -ENOENT;
}

/* The copy that compares an object's copies: the first of its servers in
 * service (its primary, unless that one is out). */
static bool lead_of(const struct scrub_task *k, const struct ofs_attr *a, struct ofs_sid *lead)
{
	for (uint8_t j = 0; j < a->nsids && j < OFS_MAX_REPLICAS; j++) {
		uint8_t st;
		if (server_state(k, a->sids[j], true, &st) == 0 && st != OFS_SERVER_OUT) {
			*lead = a->sids[j];
			return true;
		}
	}
	return false;
}

/* prefetch's questions: for sibling server x, the batch's objects this
 * server leads that x holds a copy of (none: x leads some, only PING). */
struct batch_ask {
	struct scrub_task *k;
	const struct task_obj *w;
	size_t lo, hi;                   /* the window of the batch asked about */
	const struct ofs_sid *sid;       /* the servers asked, this round's first */
	const struct ofs_sid *lead;      /* each object's lead ... */
	const bool *has_lead;            /* ... when it has one */
	const bool *asks;                /* per server: summaries (else PING) */
};

static bool led_here(const struct batch_ask *ba, size_t i)
{
	return ba->has_lead[i] && sid_eq(ba->lead[i], store_sid(ba->k->sc->s));
}

static uint32_t batch_fill(size_t y, uint8_t *oids, void *arg)
{
	const struct batch_ask *ba = arg;
	uint32_t c = 0;

	for (size_t i = ba->lo; ba->asks[y] && i < ba->hi; i++)
		for (uint8_t j = 0; led_here(ba, i) && j < ba->w[i].a.nsids; j++)
			if (sid_eq(ba->w[i].a.sids[j], ba->sid[y]))
				memcpy(oids + OFS_OID_LEN * c++, ba->w[i].oid.b, OFS_OID_LEN);
	return c;
}

static void batch_take(size_t y, const struct ofs_summary *got, uint32_t n, void *arg)
{
	const struct batch_ask *ba = arg;
	uint32_t c = 0;

	for (size_t i = ba->lo; i < ba->hi; i++)
		for (uint8_t j = 0; led_here(ba, i) && j < ba->w[i].a.nsids; j++)
			if (sid_eq(ba->w[i].a.sids[j], ba->sid[y]) && c < n) {
				ba->k->pre->sm[i][j] = got[c++];
				ba->k->pre->ok[i][j] = true;
			}
}

/*
 * Ahead of the batch's first looks. The copies of an object are compared
 * by its lead copy (lead_of): for the batch's objects this server leads,
 * every sibling server is asked once for the summaries of all of them it
 * holds (SUMMARY_MANY, all servers at once), and this server's own copies
 * are read in one transaction at the same moment. For the objects another
 * server leads, that server is only asked whether it answers (PING); when
 * it does, it compares them (nothing is asked of this copy's summary
 * twice), and when it does not, this copy compares them itself, the old
 * way. A server that does not answer SUMMARY_MANY leaves its entries
 * unset: those objects are asked one by one.
 */
static void prefetch(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct scrubber *sc = k->sc;
	struct ofs_sid me = store_sid(sc->s);
	struct ofs_sid sid[TASKHOST_BATCH * OFS_MAX_REPLICAS], lead[TASKHOST_BATCH];
	bool has_lead[TASKHOST_BATCH], asks[TASKHOST_BATCH * OFS_MAX_REPLICAS], alive[TASKHOST_BATCH * OFS_MAX_REPLICAS];
	struct batch_ask ba = { .k = k, .w = w, .lead = lead, .has_lead = has_lead };
	struct ofs_summary *got;
	size_t nsid = 0;

	if (!k->pre)
		return;
	take_states(k);
	memset(k->pre->ok, 0, sizeof(k->pre->ok));
	memset(k->pre->mine_ok, 0, sizeof(k->pre->mine_ok));
	memset(k->pre->lead_alive, 0, sizeof(k->pre->lead_alive));
	memset(asks, 0, sizeof(asks));
	/* the servers to ask: siblings of what this server leads (summaries),
	 * leads of the rest (alive?) */
	for (size_t i = 0; i < nw; i++) {
		has_lead[i] = !w[i].decode_rc && lead_of(k, &w[i].a, &lead[i]);
		if (!has_lead[i])
			continue;
		for (uint8_t j = 0; j < w[i].a.nsids; j++) {
			struct ofs_sid t = w[i].a.sids[j];
			bool mine = sid_eq(lead[i], me);
			size_t x = 0;
			if (sid_eq(t, me) || (!mine && !sid_eq(t, lead[i])))
				continue;
			while (x < nsid && !sid_eq(sid[x], t))
				x++;
			if (x == nsid)
				sid[nsid++] = t;
			asks[x] |= mine;
		}
	}
	/* this server's own copies of what it leads, read at one moment */
	if ((got = malloc(TASKHOST_BATCH * sizeof(*got))) != NULL) {
		struct ofs_oid o[TASKHOST_BATCH];
		size_t at[TASKHOST_BATCH], n = 0;
		for (size_t i = 0; i < nw; i++)
			if (led_here(&ba, i)) {
				at[n] = i;
				o[n++] = w[i].oid;
			}
		if (n && store_summary_many(sc->s, o, n, got) == 0)
			for (size_t x = 0; x < n; x++) {
				k->pre->mine[at[x]] = got[x];
				k->pre->mine_ok[at[x]] = true;
			}
		free(got);
	}
	/* (a window of the batch per question: at most OFS_SUMMARY_MANY_MAX
	 * objects are asked of a server at once) */
	for (ba.lo = 0; ba.lo < nw; ba.lo = ba.hi) {
		ba.hi = nw - ba.lo < OFS_SUMMARY_MANY_MAX ? nw : ba.lo + OFS_SUMMARY_MANY_MAX;
		for (size_t x0 = 0; x0 < nsid; x0 += OFS_MAX_REPLICAS) {
			ba.sid = sid + x0;
			ba.asks = asks + x0;
			ask_servers(k, sid + x0,
				    nsid - x0 < OFS_MAX_REPLICAS ? nsid - x0 : OFS_MAX_REPLICAS,
				    batch_fill, batch_take, &ba, alive + x0);
		}
		for (size_t i = ba.lo; i < ba.hi; i++) {
			if (!has_lead[i] || sid_eq(lead[i], me))
				continue;
			for (size_t x = 0; x < nsid; x++)
				if (sid_eq(sid[x], lead[i]))
					k->pre->lead_alive[i] = alive[x];
		}
	}
}

/* The batch index of the object being scrubbed, when its first look may
 * use what prefetch asked (-1: ask now). */
static long first_look(const struct scrub_task *k)
{
	return k->pre && k->phase == PH_FIRST ? k->pre_at : -1;
}

/* The prefetched summaries of the object being scrubbed from each of the
 * n servers in others, if the batch has them all (first look only). */
static bool prefetched_for(const struct scrub_task *k, const struct task_obj *w,
			   const struct ofs_sid *others, size_t n, struct ofs_summary *theirs)
{
	long at = first_look(k);

	if (at < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t j = 0;
		while (j < w->a.nsids && !sid_eq(w->a.sids[j], others[i]))
			j++;
		if (j == w->a.nsids || !k->pre->ok[at][j])
			return false;
		theirs[i] = k->pre->sm[at][j];
	}
	return true;
}

static int cmp_kid(const void *a, const void *b)
{
	return memcmp(((const struct kid *)a)->oid.b, ((const struct kid *)b)->oid.b, OFS_OID_LEN);
}

/* prefetch_kids' questions: for server y, the children in which[y]. */
struct kids_ask {
	const struct ofs_handle *h;
	struct kidtab *kt;
	const struct ofs_sid *sid;
	size_t *which[OFS_MAX_REPLICAS];
	uint32_t cnt[OFS_MAX_REPLICAS];
};

static uint32_t kids_fill(size_t y, uint8_t *oids, void *arg)
{
	const struct kids_ask *ka = arg;

	for (uint32_t c = 0; c < ka->cnt[y]; c++)
		memcpy(oids + OFS_OID_LEN * c, ka->h[ka->which[y][c]].oid.b, OFS_OID_LEN);
	return ka->cnt[y];
}

static void kids_take(size_t y, const struct ofs_summary *got, uint32_t n, void *arg)
{
	struct kids_ask *ka = arg;
	struct kidtab *kt = ka->kt;

	for (uint32_t c = 0; c < n; c++) {
		if (!got[c].present || got[c].corrupt)
			continue;
		kt->v[kt->n].oid = ka->h[ka->which[y][c]].oid;
		kt->v[kt->n].from = ka->sid[y];
		kt->v[kt->n].sm = got[c];
		kt->n++;
	}
}

/*
 * Ask the primaries of the n children in h (those not on this server: the
 * caller looks at its own copies) for their summaries, one SUMMARY_MANY
 * per server, OFS_MAX_REPLICAS servers at a time, into kt (replacing what
 * it held). A child whose primary does not answer, or does not hold it,
 * is not in kt: it is located the old way.
 */
static void prefetch_kids(struct scrub_task *k, struct kidtab *kt, const struct ofs_handle *h, size_t n)
{
	struct ofs_sid me = store_sid(k->sc->s), sid[OFS_MAX_REPLICAS];
	struct kids_ask ka = { .h = h, .kt = kt, .sid = sid };
	bool alive[OFS_MAX_REPLICAS], ok;
	size_t *todo = NULL, ntodo = 0;

	kt->n = 0;
	if (!k->pre || n == 0)
		return;
	ok = (todo = malloc(n * sizeof(*todo))) != NULL;
	for (size_t y = 0; y < OFS_MAX_REPLICAS; y++)
		ok &= (ka.which[y] = malloc(OFS_SUMMARY_MANY_MAX * sizeof(size_t))) != NULL;
	if (ok && kt->cap < n) {
		struct kid *v = realloc(kt->v, n * sizeof(*v));
		ok = v != NULL;
		if (ok) {
			kt->v = v;
			kt->cap = n;
		}
	}
	if (!ok)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (h[i].nsids && !sid_eq(h[i].sids[0], me))
			todo[ntodo++] = i;
	while (ntodo) {
		size_t m = 0, left = 0;
		/* up to OFS_MAX_REPLICAS servers, up to the most one asks */
		for (size_t t = 0; t < ntodo; t++) {
			const struct ofs_sid *p = &h[todo[t]].sids[0];
			size_t y = 0;
			while (y < m && !sid_eq(sid[y], *p))
				y++;
			if (y == m && m < OFS_MAX_REPLICAS) {
				sid[m] = *p;
				ka.cnt[m++] = 0;
			}
			if (y < m && ka.cnt[y] < OFS_SUMMARY_MANY_MAX)
				ka.which[y][ka.cnt[y]++] = todo[t];
			else
				todo[left++] = todo[t];   /* the next round */
		}
		ntodo = left;
		ask_servers(k, sid, m, kids_fill, kids_take, &ka, alive);
	}
	qsort(kt->v, kt->n, sizeof(*kt->v), cmp_kid);
out:
	for (size_t y = 0; y < OFS_MAX_REPLICAS; y++)
		free(ka.which[y]);
	free(todo);
}

/* The parts (stripes, dirdata) of the batch's metafiles and directories
 * this server checks (it is their primary), asked ahead. */
static void prefetch_parts(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct ofs_sid me = store_sid(k->sc->s);
	struct ofs_handle *h;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < nw; i++)
		if (!w[i].decode_rc && w[i].a.nsids && sid_eq(w[i].a.sids[0], me) &&
		    (w[i].a.type == OFS_OBJ_METAFILE || w[i].a.type == OFS_OBJ_DIRECTORY))
			cap += w[i].a.nparts;
	k->kids.n = 0;
	if (cap == 0 || !(h = malloc(cap * sizeof(*h))))
		return;
	for (size_t i = 0; i < nw; i++)
		if (!w[i].decode_rc && w[i].a.nsids && sid_eq(w[i].a.sids[0], me) &&
		    (w[i].a.type == OFS_OBJ_METAFILE || w[i].a.type == OFS_OBJ_DIRECTORY))
			for (uint16_t j = 0; j < w[i].a.nparts && n < cap; j++)
				h[n++] = w[i].a.parts[j];
	prefetch_kids(k, &k->kids, h, n);
	free(h);
}

struct owner_q {
	struct store_points_q q;
	size_t at;                       /* its object's batch index */
};

static int cmp_owner_q(const void *a, const void *b)
{
	const struct owner_q *x = a, *y = b;
	int c = memcmp(x->q.owner.b, y->q.owner.b, OFS_OID_LEN);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Whether the owners of the batch's objects this server checks (it is
 * their primary) point back, as this server's records show it: one read
 * transaction, the questions in owner order (a directory's record is
 * decoded once for all its files in the batch). An answer this server
 * cannot give alone is left UNSURE, and check_owner asks the full way. */
static void prefetch_owners(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct ofs_sid me = store_sid(k->sc->s);
	struct owner_q *oq;
	uint8_t *ans;
	size_t n = 0;

	if (!k->pre)
		return;
	memset(k->pre->owner, STORE_POINTS_UNSURE, sizeof(k->pre->owner));
	oq = malloc(nw * sizeof(*oq));
	ans = malloc(nw);
	for (size_t i = 0; oq && ans && i < nw; i++) {
		if (w[i].decode_rc || !w[i].a.nsids || !sid_eq(w[i].a.sids[0], me) ||
		    oid_is_zero(w[i].a.backref.owner))
			continue;
		oq[n].q.owner = w[i].a.backref.owner;
		oq[n].q.child = w[i].oid;
		oq[n].q.stripe = w[i].a.backref.stripe;
		oq[n].q.name = w[i].a.backref.name;
		oq[n++].at = i;
	}
	if (n) {
		struct store_points_q *q = malloc(n * sizeof(*q));
		qsort(oq, n, sizeof(*oq), cmp_owner_q);
		for (size_t x = 0; q && x < n; x++)
			q[x] = oq[x].q;
		if (q && store_points_many(k->sc->s, q, n, ans) == 0)
			for (size_t x = 0; x < n; x++)
				k->pre->owner[oq[x].at] = ans[x];
		free(q);
	}
	free(ans);
	free(oq);
}

/* The child's summary asked ahead from its primary (first look only). */
static const struct kid *kid_of(const struct scrub_task *k, const struct ofs_handle *child)
{
	const struct kidtab *tabs[2] = { &k->page_kids, &k->kids };

	if (k->phase != PH_FIRST || child->nsids == 0)
		return NULL;
	for (int t = 0; t < 2; t++) {
		struct kid key = { .oid = child->oid };
		const struct kid *f = tabs[t]->n ? bsearch(&key, tabs[t]->v, tabs[t]->n,
							   sizeof(key), cmp_kid) : NULL;
		if (f && sid_eq(f->from, child->sids[0]))
			return f;
	}
	return NULL;
}

static int compare_siblings(struct scrub_task *k, const struct task_obj *w)
{
	struct scrubber *sc = k->sc;
	struct ofs_sid me = store_sid(sc->s), others[OFS_MAX_REPLICAS], quiet[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	struct ofs_summary mine, theirs[OFS_MAX_REPLICAS];
	bool ok[OFS_MAX_REPLICAS] = { false }, said_differ = false, lead;
	struct ofs_sid gone[OFS_MAX_REPLICAS];
	size_t n = 0, nquiet = 0, ngone = 0;
	long at;
	char detail[OFS_TASK_DETAIL_LEN], hex[OFS_OID_HEX], mehex[OFS_OID_HEX];
	struct wbuf body;
	int rc;

	/* A copy on a server out of service (or no longer in the table) is
	 * missing for the cluster: reported by the first copy in service. */
	{
		for (uint8_t i = 0; i < w->a.nsids && ngone < OFS_MAX_REPLICAS; i++) {
			uint8_t st = 0;
			int g = server_state(k, w->a.sids[i], first_look(k) >= 0, &st);
			if (g == -ENOENT || (g == 0 && st == OFS_SERVER_OUT))
				gone[ngone++] = w->a.sids[i];
		}
		for (size_t i = 0; i < ngone; i++) {
			struct ofs_server e;
			struct mend m = { .what = MEND_MOVE, .from = gone[i] };
			int g = sidtab_get(sc->t, gone[i], &e);
			if (!reporter(&w->a, me, gone, ngone))
				break;
			sid_to_hex(gone[i], hex);
			snprintf(detail, sizeof(detail), "the handle names %s, which is %s", hex,
				 g == -ENOENT ? "not in the server table" : "out of service");
			k->next_mend = &m;
			rc = add_finding(k, gone[i], w->oid, OFS_FINDING_MISSING_REPLICA, detail);
			k->next_mend = NULL;
			if (rc)
				return rc;
		}
		for (uint8_t i = 0; i < w->a.nsids && n < OFS_MAX_REPLICAS; i++) {
			bool out = false;
			for (size_t j = 0; j < ngone; j++)
				out |= sid_eq(w->a.sids[i], gone[j]);
			if (!sid_eq(w->a.sids[i], me) && !out)
				others[n++] = w->a.sids[i];
		}
	}
	if (n == 0)
		return 0;
	at = first_look(k);
	if (at >= 0 && k->pre->lead_alive[at])
		return 0;                    /* its lead copy compares them (it answers) */
	lead = reporter(&w->a, me, gone, ngone);
	if (at >= 0 && k->pre->mine_ok[at] && k->pre->mine[at].present && !k->pre->mine[at].corrupt) {
		mine = k->pre->mine[at];
	} else {
		rc = store_summary(sc->s, w->oid, &mine);
		if (rc == -ENOENT)
			return 0;            /* removed meanwhile */
		if (rc)
			return rc;
	}
	if (prefetched_for(k, w, others, n, theirs)) {
		for (size_t i = 0; i < n; i++) {
			if (theirs[i].corrupt || theirs[i].behind)
				quiet[nquiet++] = others[i];     /* it reports itself */
			else
				ok[i] = true;
		}
	} else {
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
	}
	/* This copy behind a sibling: it says so itself. */
	for (size_t i = 0; i < n; i++) {
		if (ok[i] && theirs[i].present && theirs[i].version > mine.version) {
			sid_to_hex(others[i], hex);
			snprintf(detail, sizeof(detail), "version %llu here, %llu on %s",
				 (unsigned long long)mine.version,
				 (unsigned long long)theirs[i].version, hex);
			k->copies_differ = true;
			k->ev_lag = mine.version;
			k->ev_ahead = theirs[i].version;
			rc = add_finding(k, me, w->oid, OFS_FINDING_STALE_REPLICA, detail);
			k->ev_lag = k->ev_ahead = 0;
			return rc;
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
			rc = add_finding(k, others[i], w->oid, OFS_FINDING_MISSING_REPLICA, detail);
		} else if (theirs[i].version == mine.version &&
			   (theirs[i].size != mine.size || !digest_eq(theirs[i].digest, mine.digest))) {
			bool kv = w->a.type != OFS_OBJ_DFILE;
			k->copies_differ = true;
			/* (no copy can be shown at fault: the first that
			 * answers says it, once) */
			if (said_differ || !reporter(&w->a, me, quiet, nquiet))
				continue;
			said_differ = true;
			snprintf(detail, sizeof(detail),
				 kv ? "version %llu on both, key-value parts differ from %s's "
				      "(a value changed, a key lost or added)"
				    : "version %llu on both, recorded contents differ from %s",
				 (unsigned long long)mine.version, hex);
			rc = add_finding_other(k, me, w->oid, kv ? OFS_FINDING_KEYVAL_MISMATCH : OFS_FINDING_REPLICA_CONFLICT,
					       detail, others[i]);
		} else if (lead && theirs[i].version < mine.version) {
			/* A sibling behind: its lead says so, for it (the
			 * sibling does not compare while its lead answers). */
			sid_to_hex(me, mehex);
			snprintf(detail, sizeof(detail), "version %llu here, %llu on %s",
				 (unsigned long long)theirs[i].version,
				 (unsigned long long)mine.version, mehex);
			k->ev_lag = theirs[i].version;
			k->ev_ahead = mine.version;
			rc = add_finding(k, others[i], w->oid, OFS_FINDING_STALE_REPLICA, detail);
			k->ev_lag = k->ev_ahead = 0;
		}
		if (rc)
			return rc;
	}
	return 0;
}

struct dirent_check {
	struct scrub_task *k;
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
static int check_dirdata(struct scrub_task *k, const struct task_obj *w, bool *bad)
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
		return local_finding(OFS_FINDING_RECORD_CORRUPT, detail, k);
	}
	return 0;
}

/* ---- back references (the object's primary checks them) ------------------ */

enum { WHERE_NOWHERE, WHERE_FOUND, WHERE_UNKNOWN };

/* The summary of the object h names, from the first of its servers that
 * holds it; WHERE_NOWHERE only when every one of them answered "not here". */
static int locate(struct scrub_task *k, const struct ofs_handle *h, struct ofs_summary *sm,
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
/* What an owner says about a child (POINTS): asked of this server, then
 * of the servers in near (the child's own), then of every other one in
 * service, until one holds the owner. */
struct points_answer {
	bool held;                       /* some server holds the owner */
	bool quiet;                      /* some server did not answer */
	uint8_t ans;                     /* POINTS_*, from the one that holds it */
	struct ofs_sid where;            /* that server */
};

static int ask_points(struct scrub_task *k, struct ofs_oid owner, struct ofs_oid child,
		      uint32_t stripe, const char *name, const struct ofs_sid *near, size_t nnear,
		      struct points_answer *pa);

/* "; bytes lost: A-B, C-D, ..." - the file's byte ranges that lay in
 * stripe i of metafile a (simple stripe: strip S of every N*S). */
static void lost_ranges(const struct ofs_attr *a, uint32_t i, char *out, size_t n)
{
	uint64_t S = a->strip_size ? a->strip_size : 1, N = a->nparts ? a->nparts : 1;
	uint64_t total = 0, count = 0;
	size_t at;

	if (!n)
		return;
	at = (size_t)snprintf(out, n, "; the file's bytes lost:");
	for (uint64_t off = (uint64_t)i * S; off < a->size; off += N * S) {
		uint64_t end = off + S < a->size ? off + S : a->size;
		total += end - off;
		if (count++ < 8 && at < n)
			at += (size_t)snprintf(out + at, n - at, " %llu-%llu",
					       (unsigned long long)off, (unsigned long long)end - 1);
	}
	if (at < n && count > 8)
		at += (size_t)snprintf(out + at, n - at, " and %llu more ranges",
				       (unsigned long long)(count - 8));
	if (at < n)
		snprintf(out + at, n - at, count ? " (%llu bytes in all)" : " none (it held no bytes)",
			 (unsigned long long)total);
}

/* Is this server the child's primary, and does its copy show the pointer
 * right (back reference and type)? Then it is, with no question asked:
 * locate would have taken this copy, the first of the child's servers
 * that holds it (a back reference is not part of a copy's digest, so
 * another copy may differ, and the primary's is the one judged).
 * Anything else is asked of the child's servers. */
static bool right_here(struct scrub_task *k, const struct ofs_handle *child, struct ofs_oid want_owner,
		       long want_stripe, const char *want_name, int want_type)
{
	struct ofs_attr *a;
	bool right;

	if (child->nsids == 0 || !sid_eq(child->sids[0], store_sid(k->sc->s)) ||
	    !(a = malloc(sizeof(*a))))
		return false;
	right = store_getattr(k->sc->s, child->oid, a) == 0 && oid_eq(a->backref.owner, want_owner) &&
		(want_stripe < 0 || a->backref.stripe == (uint32_t)want_stripe) &&
		(!want_name || strcmp(a->backref.name, want_name) == 0) &&
		(want_type < 0 || a->type == want_type);
	free(a);
	return right;
}

/* The object's own record: this server's copy, else the newest of its
 * servers in service. */
static int child_attr(struct scrub_task *k, const struct ofs_handle *child, struct ofs_attr *a)
{
	struct ofs_sid to[OFS_MAX_REPLICAS];
	size_t n = 0;
	int rc = store_getattr(k->sc->s, child->oid, a);

	if (rc != -ENOENT)
		return rc;
	for (uint8_t i = 0; i < child->nsids && i < OFS_MAX_REPLICAS; i++) {
		uint8_t st;
		if (!sid_eq(child->sids[i], store_sid(k->sc->s)) &&
		    server_state(k, child->sids[i], false, &st) == 0 && st != OFS_SERVER_OUT)
			to[n++] = child->sids[i];
	}
	return move_getattr_newest(k->sc->r, child->oid, to, n, a);
}

/* A pointer that names a server out of service while the object's own
 * record no longer does (the copy was moved; the rewrite of this pointer
 * did not happen): missing_replica, mended by pointing the owner at the
 * object's own handle. An object whose record still names that server is
 * moved by its own lead, which rewrites the pointer too. */
static int check_pointer_sids(struct scrub_task *k, const struct task_obj *w,
			      const struct ofs_handle *child, const char *what)
{
	char detail[OFS_TASK_DETAIL_LEN], xh[OFS_OID_HEX], ch[OFS_OID_HEX];
	struct ofs_attr *a;
	struct ofs_sid x;
	bool named = false, still = false;
	int rc;

	for (uint8_t i = 0; i < child->nsids && i < OFS_MAX_REPLICAS && !named; i++) {
		uint8_t st;
		if (server_state(k, child->sids[i], true, &st) == 0 && st == OFS_SERVER_OUT) {
			x = child->sids[i];
			named = true;
		}
	}
	if (!named)
		return 0;
	if (!(a = malloc(sizeof(*a))))
		return -ENOMEM;
	rc = child_attr(k, child, a);
	if (rc) {
		free(a);
		return rc == -ENOENT || rc == -OFS_ECORRUPT ? 0 : rc;   /* (no verdict) */
	}
	for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		still |= sid_eq(a->sids[i], x);
	if (still || a->nsids == 0 || !oid_eq(a->backref.owner, w->oid)) {
		free(a);
		return 0;
	}
	sid_to_hex(x, xh);
	oid_to_hex(child->oid, ch);
	{
		struct mend m = { .what = MEND_REPOINT, .child = *child, .ref = w->oid, .from = x };
		size_t dn = (size_t)snprintf(detail, sizeof(detail),
					     "%s names %.32s, which is out of service; %.32s's own "
					     "record names", what, xh, ch);
		for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS && dn < sizeof(detail); i++) {
			char sh[OFS_OID_HEX];
			sid_to_hex(a->sids[i], sh);
			dn += (size_t)snprintf(detail + dn, sizeof(detail) - dn, " %.32s", sh);
		}
		k->next_mend = &m;
		rc = add_finding(k, x, child->oid, OFS_FINDING_MISSING_REPLICA, detail);
		k->next_mend = NULL;
	}
	free(a);
	return rc;
}

static int check_pointer(struct scrub_task *k, const struct task_obj *w, const struct ofs_handle *child,
			 const char *what, struct ofs_oid want_owner, long want_stripe,
			 const char *want_name, int want_type)
{
	struct ofs_summary sm;
	struct ofs_sid where;
	char detail[OFS_TASK_DETAIL_LEN], ch[OFS_OID_HEX], oh[OFS_OID_HEX];
	const struct kid *kd;
	int state, rc;

	if (right_here(k, child, want_owner, want_stripe, want_name, want_type))
		return check_pointer_sids(k, w, child, what);
	if ((kd = kid_of(k, child)) != NULL) {
		sm = kd->sm;                 /* what locate would find first */
		where = kd->from;
		state = WHERE_FOUND;
		rc = 0;
	} else {
		rc = locate(k, child, &sm, &where, &state);
	}

	if (rc || state == WHERE_UNKNOWN)
		return rc;
	oid_to_hex(child->oid, ch);
	if (state == WHERE_NOWHERE) {
		struct mend m = { .what = want_name && w->a.type == OFS_OBJ_DIRDATA
					  ? MEND_DANGLING_ENTRY : MEND_DANGLING_PART,
				  .child = *child, .ref = child->oid };
		size_t dn;
		snprintf(m.name, sizeof(m.name), "%s", want_name ? want_name : "");
		dn = (size_t)snprintf(detail, sizeof(detail), "%s names %s, which none of its servers holds",
				      what, ch);
		if (w->a.type == OFS_OBJ_METAFILE && want_stripe >= 0 && dn < sizeof(detail))
			lost_ranges(&w->a, (uint32_t)want_stripe, detail + dn, sizeof(detail) - dn);
		k->next_mend = &m;
		rc = add_finding(k, store_sid(k->sc->s), w->oid, OFS_FINDING_DANGLING_POINTER, detail);
		k->next_mend = NULL;
		return rc;
	}
	if (!oid_is_zero(sm.backref.owner) && !oid_eq(sm.backref.owner, want_owner)) {
		/* Named by another owner: does that one point at it too? */
		struct points_answer pa;
		rc = ask_points(k, sm.backref.owner, child->oid, sm.backref.stripe, sm.backref.name,
				child->sids, child->nsids, &pa);
		if (rc)
			return rc;
		if (!pa.held && pa.quiet)
			return 0;            /* no verdict while a server is silent */
		if (pa.held && (pa.ans == POINTS_YES || pa.ans == POINTS_ELSEWHERE)) {
			struct mend m = { .what = MEND_SECOND_OWNER, .child = *child,
					  .ref = w->oid, .owner_at = pa.where,
					  .stripe = k->part_at, .size = sm.size };
			snprintf(m.name, sizeof(m.name), "%s", want_name ? want_name : "");
			oid_to_hex(sm.backref.owner, oh);
			oid_to_hex(w->oid, ch);
			snprintf(detail, sizeof(detail),
				 "owners %s (stripe %u, name '%s': its back reference) and %s (%s) both "
				 "point at it; the first keeps it",
				 oh, sm.backref.stripe, sm.backref.name, ch, what);
			k->next_mend = &m;
			rc = add_finding(k, where, child->oid, OFS_FINDING_MULTIPLE_OWNERS, detail);
			k->next_mend = NULL;
			return rc;
		}
	}
	if (!oid_eq(sm.backref.owner, want_owner) ||
	    (want_stripe >= 0 && sm.backref.stripe != (uint32_t)want_stripe) ||
	    (want_name && strcmp(sm.backref.name, want_name) != 0)) {
		oid_to_hex(sm.backref.owner, oh);
		struct mend m = { .what = MEND_BACKREF, .child = *child, .ref = want_owner };
		m.want.owner = want_owner;
		m.want.stripe = want_stripe >= 0 ? (uint32_t)want_stripe : 0;
		snprintf(m.want.name, sizeof(m.want.name), "%s", want_name ? want_name : "");
		snprintf(detail, sizeof(detail),
			 "its back reference says owner %s stripe %u name '%s'; %s points at it",
			 oh, sm.backref.stripe, sm.backref.name, what);
		k->next_mend = &m;
		rc = add_finding(k, where, child->oid, OFS_FINDING_BACKREF_MISMATCH, detail);
		k->next_mend = NULL;
		return rc;
	}
	if (want_type >= 0 && sm.type != want_type) {
		/* The object's own record says what it is. */
		struct mend m = { .what = MEND_ENTRY_TYPE, .child = *child, .ref = child->oid,
				  .type = sm.type };
		snprintf(m.name, sizeof(m.name), "%s", want_name ? want_name : "");
		snprintf(detail, sizeof(detail), "%s says %s, but %s is a %s", what,
			 ofs_type_name((uint8_t)want_type), ch, ofs_type_name(sm.type));
		k->next_mend = &m;
		rc = add_finding(k, store_sid(k->sc->s), w->oid, OFS_FINDING_BACKREF_MISMATCH, detail);
		k->next_mend = NULL;
		return rc;
	}
	return check_pointer_sids(k, w, child, what);
}

/* A page of a dirdata's entries, read first, checked after (their
 * children asked ahead all at once). */
#define ENTRY_PAGE OFS_SUMMARY_MANY_MAX
struct entries_ctx {
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
	size_t n;
	char (*name)[OFS_NAME_MAX + 1];
	struct ofs_dirent *d;
	struct ofs_handle *h;
};

static int take_entry(const void *key, size_t kn, const void *v, size_t vn, void *arg)
{
	struct entries_ctx *ec = arg;

	memcpy(ec->last, key, kn);
	ec->lastn = kn;
	if (rec_decode_dirent(v, vn, &ec->d[ec->n]) != 0)
		return 0;                    /* record_corrupt, said elsewhere */
	snprintf(ec->name[ec->n], sizeof(ec->name[0]), "%.*s", (int)kn, (const char *)key);
	ec->h[ec->n] = ec->d[ec->n].handle;
	ec->n++;
	return 0;
}

/* Every entry of a dirdata names an object whose back reference names
 * the dirdata's directory and the entry's name. */
static int check_entries(struct scrub_task *k, const struct task_obj *w)
{
	struct entries_ctx ec = { .lastn = 0 };
	bool more = true;
	int rc = 0;

	ec.name = malloc(ENTRY_PAGE * sizeof(*ec.name));
	ec.d = malloc(ENTRY_PAGE * sizeof(*ec.d));
	ec.h = malloc(ENTRY_PAGE * sizeof(*ec.h));
	if (!ec.name || !ec.d || !ec.h)
		rc = -ENOMEM;
	while (more && !rc) {
		ec.n = 0;
		rc = store_kv_list(k->sc->s, w->oid, ec.lastn ? ec.last : NULL, ec.lastn,
				   ENTRY_PAGE, take_entry, &ec, &more);
		if (rc == -ENOENT) {
			rc = 0;                  /* removed meanwhile */
			break;
		}
		if (rc)
			break;
		if (k->phase == PH_FIRST)
			prefetch_kids(k, &k->page_kids, ec.h, ec.n);
		for (size_t i = 0; i < ec.n && !rc; i++) {
			char what[OFS_NAME_MAX + 32];
			snprintf(what, sizeof(what), "entry '%s'", ec.name[i]);
			rc = check_pointer(k, w, &ec.d[i].handle, what, w->a.backref.owner, -1,
					   ec.name[i], ec.d[i].type);
		}
	}
	k->page_kids.n = 0;
	free(ec.name);
	free(ec.d);
	free(ec.h);
	return rc;
}

/* A metafile or directory whose layout is not set: a put or mkdir in
 * progress (or abandoned by its client). */
static bool building(const struct ofs_attr *a)
{
	return (a->type == OFS_OBJ_METAFILE || a->type == OFS_OBJ_DIRECTORY) && a->nparts == 0;
}

/* Changed within the orphan grace? */
static bool young(const struct scrubber *sc, const struct ofs_attr *a)
{
	int64_t t = a->mtime_ns > a->ctime_ns ? a->mtime_ns : a->ctime_ns;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - t <
	       sc->orphan_grace_s * 1000000000LL;
}

static int ask_points(struct scrub_task *k, struct ofs_oid owner, struct ofs_oid child,
		      uint32_t stripe, const char *name, const struct ofs_sid *near, size_t nnear,
		      struct points_answer *pa)
{
	struct scrubber *sc = k->sc;
	struct ofs_server *e = NULL;
	struct ofs_sid order[OFS_MAX_SERVERS + OFS_MAX_REPLICAS + 1];
	size_t n = 0, ne = 0;
	struct ofs_req q;
	struct wbuf body;
	int rc;

	memset(pa, 0, sizeof(*pa));
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_POINTS;
	q.oid = owner;
	q.child = child;
	q.offset = stripe;
	snprintf(q.name, sizeof(q.name), "%s", name);
	/* The owner here and pointing: the common case, no round trip. A
	 * "no" is asked of the others too (a copy may lack what the others
	 * hold, and a server that holds a directory but not its dirdata
	 * answers a forwarded question from what it holds). */
	if (points_check(sc->s, sc->r, &q, false, &pa->ans) == 0) {
		pa->held = true;
		pa->where = store_sid(sc->s);
		if (pa->ans != POINTS_NO)
			return 0;
	}
	rc = sidtab_snapshot(sc->t, &e, &ne);
	if (rc)
		return rc;
	order[n++] = store_sid(sc->s);
	for (size_t i = 0; i < nnear && i < OFS_MAX_REPLICAS; i++)
		if (!sid_eq(near[i], order[0]))
			order[n++] = near[i];
	for (size_t i = 0; i < ne; i++) {
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup |= sid_eq(order[j], e[i].sid);
		if (!dup && e[i].state != OFS_SERVER_OUT && n < sizeof(order) / sizeof(order[0]))
			order[n++] = e[i].sid;
	}
	free(e);
	wbuf_init(&body);
	rc = proto_encode_req(&body, &q);
	/* (order[0] is this server, answered above) */
	for (size_t at = 1; !rc && at < n && pa->ans == POINTS_NO; at += OFS_MAX_REPLICAS) {
		struct replica_result res[OFS_MAX_REPLICAS];
		size_t m = n - at < OFS_MAX_REPLICAS ? n - at : OFS_MAX_REPLICAS;
		rc = replica_forward(sc->r, OFS_OP_POINTS, body.data, body.len, order + at, m, res);
		for (size_t i = 0; !rc && i < m; i++) {
			if (!res[i].rc && res[i].len == 1) {
				uint8_t a = res[i].body[0];
				/* any holder that points (or builds) outweighs a "no" */
				if (!pa->held || (pa->ans == POINTS_NO && a != POINTS_NO) ||
				    (pa->ans == POINTS_BUILDING && (a == POINTS_YES || a == POINTS_ELSEWHERE))) {
					pa->ans = a;
					pa->where = order[at + i];
				}
				pa->held = true;
			} else if (res[i].rc != -ENOENT) {
				pa->quiet = true;
			}
			free(res[i].body);
		}
	}
	wbuf_free(&body);
	return rc;
}

/* Does the owner its back reference names point back at this object? */
static int check_owner(struct scrub_task *k, const struct task_obj *w)
{
	struct scrubber *sc = k->sc;
	struct points_answer pa;
	char detail[OFS_TASK_DETAIL_LEN], oh[OFS_OID_HEX];
	bool unfinished;
	int rc;

	if (oid_is_zero(w->a.backref.owner))
		return 0;                    /* the root */
	if (building(&w->a) && young(sc, &w->a))
		return 0;                    /* a put or mkdir in progress */
	if (first_look(k) >= 0 && k->pre->owner[first_look(k)] != STORE_POINTS_UNSURE) {
		/* answered ahead, from this server's records (prefetch_owners) */
		memset(&pa, 0, sizeof(pa));
		pa.held = true;
		pa.where = store_sid(sc->s);
		pa.ans = k->pre->owner[first_look(k)];
	} else {
		rc = ask_points(k, w->a.backref.owner, w->oid, w->a.backref.stripe,
				w->a.backref.name, w->a.sids, w->a.nsids, &pa);
		if (rc)
			return rc;
	}
	if (!pa.held && pa.quiet)
		return 0;                    /* some server did not answer: no verdict */
	/* Points back (or elsewhere: the owner reports that), or is being built. */
	unfinished = pa.held && pa.ans == POINTS_BUILDING && !young(sc, &w->a);
	if (pa.held && pa.ans != POINTS_NO && !unfinished)
		return 0;
	oid_to_hex(w->a.backref.owner, oh);
	if (unfinished) {
		snprintf(detail, sizeof(detail), "its owner %s was never finished (a put or mkdir "
			 "whose client stopped): it has no layout", oh);
	} else if (building(&w->a)) {
		snprintf(detail, sizeof(detail), "it was never finished (a put or mkdir whose client "
			 "stopped): it has no layout and no entry names it");
	} else if (pa.held) {
		snprintf(detail, sizeof(detail), "its owner %s (stripe %u, name '%s') does not point at it",
			 oh, w->a.backref.stripe, w->a.backref.name);
	} else {
		snprintf(detail, sizeof(detail), "its owner %s (name '%s') exists nowhere",
			 oh, w->a.backref.name);
	}
	{
		struct mend m = { .what = MEND_ORPHAN, .ref = w->a.backref.owner };
		/* Relinked from the back reference when its owner is there and
		 * finished; /lost+found only when there is nothing to relink to. */
		if (pa.held && !unfinished && !building(&w->a)) {
			m.owner_at = pa.where;
			m.relink = true;
		}
		k->next_mend = &m;
		rc = add_finding(k, store_sid(sc->s), w->oid, OFS_FINDING_ORPHAN, detail);
		k->next_mend = NULL;
	}
	return rc;
}

static int check_structure(struct scrub_task *k, const struct task_obj *w)
{
	char what[64];
	int rc = 0;

	if (w->a.nsids == 0 || !sid_eq(w->a.sids[0], store_sid(k->sc->s)))
		return 0;                    /* the primary checks, once */
	if (w->a.type == OFS_OBJ_METAFILE || w->a.type == OFS_OBJ_DIRECTORY) {
		for (uint16_t i = 0; i < w->a.nparts && !rc; i++) {
			k->part_at = i;
			snprintf(what, sizeof(what), "%s %u",
				 w->a.type == OFS_OBJ_METAFILE ? "stripe" : "dirdata", (unsigned)i);
			rc = check_pointer(k, w, &w->a.parts[i], what, w->oid,
					   w->a.type == OFS_OBJ_METAFILE ? (long)i : -1, NULL,
					   w->a.type == OFS_OBJ_METAFILE ? OFS_OBJ_DFILE : OFS_OBJ_DIRDATA);
		}
	} else if (w->a.type == OFS_OBJ_DIRDATA) {
		rc = check_entries(k, w);
	}
	if (!rc)
		rc = check_owner(k, w);
	return rc;
}

/* The object's copies, then (while they agree) its structure, with the
 * findings taken as phase says (settling). */
static int look_around(struct scrub_task *k, const struct task_obj *w, int phase)
{
	int rc;

	k->phase = phase;
	k->copies_differ = false;
	rc = compare_siblings(k, w);
	if (!rc && !k->copies_differ)
		rc = check_structure(k, w);   /* (from a copy in question: after repair) */
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
	at(k, w->oid);
	if (w->decode_rc) {
		snprintf(detail, sizeof(detail), "the object's record does not decode: %s",
			 ofs_strerror(w->decode_rc));
		return local_finding(OFS_FINDING_RECORD_CORRUPT, detail, k);
	}
	rc = store_behind(sc->s, w->oid);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return local_finding(OFS_FINDING_STALE_REPLICA, "this copy missed changes while its server "
				     "was away (known since then)", k);
	if (w->a.type == OFS_OBJ_DFILE && !(k->flags & OFS_TASK_F_NODATA)) {
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
		k->fresh.due = now_s(k) + SETTLE_S;
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

static int repair_object(struct scrub_task *k, const struct task_obj *w);

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
	at(k, sp->oid);
	k->look = (struct suspect *)sp;
	k->again = again;
	k->holding = (k->flags & OFS_TASK_F_REPAIR) != 0;
	k->nheld = 0;
	rc = look_around(k, w, PH_CONFIRM);
	k->holding = false;
	k->look = k->again = NULL;
	if (!rc && k->nheld)
		rc = repair_object(k, w);
	k->nheld = 0;
	if (!rc && again->n) {
		char hex[OFS_OID_HEX];
		oid_to_hex(sp->oid, hex);
		if (again->rounds < SETTLE_ROUNDS) {
			again->due = now_s(k) + SETTLE_S;
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
		double left = k->sus[0].due - now_s(k);
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

/* ---- repair mode -------------------------------------------------------- */

static bool dry(const struct scrub_task *k)
{
	return (k->flags & OFS_TASK_F_DRYRUN) != 0;
}

/* The outcome of a fetch as a finding's repair state and action. */
static void set_outcome(struct ofs_task_finding *f, int rc, const struct ofs_fetch_reply *fr,
			const char *where)
{
	memset(&f->source, 0, sizeof(f->source));
	if (rc) {
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "fetching a good copy %s failed: %s", where,
			 ofs_strerror(rc));
		return;
	}
	switch (fr->outcome) {
	case OFS_FETCH_DONE:
		f->repair = OFS_REPAIR_DONE;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "copy %s replaced: %s", where, fr->detail);
		break;
	case OFS_FETCH_GOOD:
		f->repair = OFS_REPAIR_DONE;
		snprintf(f->action, sizeof(f->action), "nothing to do %s: %s", where, fr->detail);
		break;
	case OFS_FETCH_RECONCILED:
		f->repair = OFS_REPAIR_DONE;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "no copy was current; reconciled %s: %s",
			 where, fr->detail);
		break;
	case OFS_FETCH_WOULD:
		f->repair = OFS_REPAIR_WOULD;
		f->source = fr->source;
		snprintf(f->action, sizeof(f->action), "would replace the copy %s: %s", where,
			 fr->detail);
		break;
	default:
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action), "left %s: %s", where, fr->detail);
		break;
	}
}

/* A kind a copy fetched from a good one repairs. */
static bool is_copy_kind(int kind)
{
	switch (kind) {
	case OFS_FINDING_CHECKSUM_MISMATCH: case OFS_FINDING_SIZE_MISMATCH:
	case OFS_FINDING_UNREADABLE: case OFS_FINDING_MISSING_REPLICA:
	case OFS_FINDING_STALE_REPLICA: case OFS_FINDING_RECORD_CORRUPT:
	case OFS_FINDING_REPLICA_CONFLICT: case OFS_FINDING_KEYVAL_MISMATCH:
		return true;
	default:
		return false;
	}
}

/* Fetch a good copy onto target (this server or a sibling); a finding's
 * outcome. Unreachable servers stop the task (it is retried later). */
static int fix_copy(struct scrub_task *k, struct ofs_oid oid, const struct ofs_attr *a, bool have_attr,
		    struct ofs_sid target, struct ofs_task_finding *f, struct ofs_fetch_reply *fr,
		    bool known_bad)
{
	unsigned flags = (dry(k) ? OFS_FETCH_DRYRUN : 0) | (known_bad ? OFS_FETCH_LOCALBAD : 0);
	struct scrubber *sc = k->sc;
	char hex[OFS_OID_HEX], where[64];
	int rc;

	sid_to_hex(target, hex);
	snprintf(where, sizeof(where), "on %.32s", hex);
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	for (int attempt = 0; attempt < 20; attempt++) {
		rc = repair_fetch_at(sc->s, sc->t, sc->r, target, oid, have_attr ? a->sids : NULL,
				     have_attr ? a->nsids : 0, flags, task_rate(k->t), "repair",
				     throttle, k, fr);
		if (rc != -EAGAIN && rc != -EBUSY)
			break;
		/* changed meanwhile, or another fetch of it runs there: again */
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 250000000 };
		nanosleep(&ts, NULL);
	}
	if (rc == -OFS_EUNREACHABLE || rc == -ETIMEDOUT || rc == -ECONNREFUSED ||
	    rc == -ECONNRESET || rc == -ECANCELED)
		return rc;
	set_outcome(f, rc, fr, where);
	if (!rc && (fr->outcome == OFS_FETCH_DONE || fr->outcome == OFS_FETCH_GOOD ||
		    fr->outcome == OFS_FETCH_RECONCILED) && !dry(k))
		store_stale_del(sc->s, oid, target, fr->version);   /* (the target told the others) */
	if (!rc && (fr->outcome == OFS_FETCH_DONE || fr->outcome == OFS_FETCH_RECONCILED))
		task_count_repair(k->t);
	return 0;
}

/* ---- mending structure (through libofs, as a client of this server) --------- */

static int task_client(struct scrub_task *k, struct ofs_client **out)
{
	struct ofs_server e;
	int rc;

	if (!k->client) {
		rc = sidtab_get(k->sc->t, store_sid(k->sc->s), &e);
		if (rc)
			return rc;
		const char *addr = e.address;
		rc = ofs_client_open(&addr, 1, &k->client);
		if (rc)
			return rc;
	}
	*out = k->client;
	return 0;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A name in /lost+found that says what the object was and where. */
static void lost_name(const struct task_obj *w, char *out, size_t n)
{
	char oh[OFS_OID_HEX], ow[OFS_OID_HEX];

	oid_to_hex(w->oid, oh);
	oid_to_hex(w->a.backref.owner, ow);
	switch (w->a.type) {
	case OFS_OBJ_DFILE:
		snprintf(out, n, "stripe%u.%s.of-%s", w->a.backref.stripe, oh, ow);
		break;
	case OFS_OBJ_DIRDATA:
		snprintf(out, n, "dirdata.%s.of-%s", oh, ow);
		break;
	default:
		snprintf(out, n, "%.150s.%s.in-%.16s", w->a.backref.name[0] ? w->a.backref.name : "noname",
			 oh, ow);
		break;
	}
}

/* A finding's outcome once its action is written: done (or would be,
 * in a dry run), or failed with the reason in front of the action. An
 * unreachable server stops the task (it is retried). */
static int mend_outcome(struct scrub_task *k, struct ofs_task_finding *f, int rc)
{
	if (rc) {
		char why[OFS_TASK_DETAIL_LEN];
		snprintf(why, sizeof(why), "%s", f->action);
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "failed (%s): %.400s", ofs_strerror(rc), why);
		return rc == -OFS_EUNREACHABLE ? rc : 0;
	}
	if (dry(k)) {
		f->repair = OFS_REPAIR_WOULD;
		return 0;
	}
	f->repair = OFS_REPAIR_DONE;
	task_count_repair(k->t);
	return 0;
}

/* Make dirdata dd of directory dir again, empty, on its servers: the
 * entries come back from their objects' back references. */
static int remake_dirdata(struct ofs_client *c, const struct ofs_handle *dd, struct ofs_oid dir)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	a->type = OFS_OBJ_DIRDATA;
	a->mode = 0755;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	a->backref.owner = dir;
	a->replicas = dd->nsids;
	a->confidence = (uint8_t)(dd->nsids / 2 + 1);
	rc = ofs_recreate(c, dd, a);
	free(a);
	return rc == -EEXIST ? 0 : rc;
}

/* Put part in slot of the owner's layout, if the slot still holds was:
 * that one part, on each copy under its own lock (OFS_ATTR_PART with the
 * part it replaces), so a change of another part of the owner meanwhile
 * (a move, another mend) is not undone, as a rewrite of the whole layout
 * read earlier would undo it. -ENOENT: the slot holds something else now. */
static int put_in_slot(struct ofs_client *c, const struct ofs_handle *owner, uint32_t slot,
		       const struct ofs_handle *part, const struct ofs_handle *was)
{
	struct ofs_attr *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->nparts = 2;
	q->parts[0] = *part;
	q->parts[1] = *was;
	q->backref.stripe = slot;
	rc = ofs_setattr_handle(c, owner, OFS_ATTR_PART, q);
	free(q);
	return rc;
}

/*
 * Point an orphan's owner at it again, from its back reference: a
 * metafile or directory gets its entry back under its recorded name; a
 * dfile (dirdata) takes back its stripe (its directory's slot) when what
 * is there now exists nowhere. 1: nothing to relink to (the name or the
 * slot is taken): /lost+found instead.
 */
static int relink(struct scrub_task *k, struct ofs_client *c, const struct task_obj *w,
		  const struct mend *m, char *act, size_t n)
{
	struct ofs_attr *oa = malloc(sizeof(*oa));
	struct ofs_handle own = { .oid = w->a.backref.owner, .nsids = 1 };
	struct ofs_handle me = { .oid = w->oid, .nsids = w->a.nsids };
	char hex[OFS_OID_HEX];
	int rc;

	if (!oa)
		return -ENOMEM;
	own.sids[0] = m->owner_at;
	memcpy(me.sids, w->a.sids, sizeof(me.sids));
	oid_to_hex(own.oid, hex);
	rc = ofs_getattr(c, &own, oa);
	if (rc)
		goto out;
	own.nsids = oa->nsids;
	memcpy(own.sids, oa->sids, sizeof(own.sids));
	if (w->a.type == OFS_OBJ_METAFILE || w->a.type == OFS_OBJ_DIRECTORY) {
		struct ofs_dirent d = { .type = w->a.type, .handle = me };
		struct ofs_handle dd, dd1;
		const char *name = w->a.backref.name;
		rc = 1;
		if (oa->type != OFS_OBJ_DIRECTORY || !name[0])
			goto out;
		snprintf(act, n, "%sentry '%s' in directory %s made again from its back reference",
			 dry(k) ? "would have its " : "", name, hex);
		if (dry(k)) {
			rc = 0;
			goto out;
		}
		/* Through the dirdata's primary only: a copy that answers in
		 * its place while the primary says "not here" (the dirdata
		 * being made again by another repair, below) would apply the
		 * entry to copies that do not hold the dirdata yet. */
		rc = ofs_dirdata_for(oa, name, &dd);
		dd1 = dd;
		dd1.nsids = 1;
		if (!rc)
			rc = ofs_set_entry(c, &dd1, name, &d, 0);
		if (rc == -ENOENT) {
			/* its dirdata is gone too: made again, empty */
			rc = remake_dirdata(c, &dd, own.oid);
			if (!rc)
				rc = ofs_set_entry(c, &dd1, name, &d, 0);
		}
		if (rc == -EEXIST)
			rc = 1;              /* the name is taken: lost+found */
	} else {
		uint16_t slot = UINT16_MAX;
		uint8_t want = w->a.type == OFS_OBJ_DFILE ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY;
		rc = 1;
		if (oa->type != want)
			goto out;
		for (uint16_t i = 0; i < oa->nparts; i++) {
			struct ofs_summary sm;
			struct ofs_sid where;
			int state;
			if (w->a.type == OFS_OBJ_DFILE && i != w->a.backref.stripe)
				continue;
			rc = locate(k, &oa->parts[i], &sm, &where, &state);
			if (rc)
				goto out;
			rc = 1;
			if (state == WHERE_NOWHERE) {
				slot = i;
				break;
			}
		}
		if (slot == UINT16_MAX)
			goto out;            /* its place is taken: lost+found */
		snprintf(act, n, "%s%s %u of %s again (what was there exists nowhere)",
			 dry(k) ? "would be " : "", want == OFS_OBJ_METAFILE ? "stripe" : "dirdata",
			 slot, hex);
		if (dry(k)) {
			rc = 0;
			goto out;
		}
		rc = put_in_slot(c, &own, slot, &me, &oa->parts[slot]);
	}
out:
	free(oa);
	return rc;
}

/*
 * A metafile (directory) whose stripe (dirdata) is another owner's - the
 * one its back reference names, which keeps it - gets its own: a copy of
 * the dfile's bytes (a new, empty dirdata: the entries belong to the
 * owner their back references name), put in its slot if the slot still
 * holds the shared part.
 */
static int own_part(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
		    const struct mend *m)
{
	bool file = w->a.type == OFS_OBJ_METAFILE;
	struct ofs_handle self = { .oid = w->oid, .nsids = w->a.nsids }, fresh = { .nsids = 0 };
	struct ofs_backref br = { .owner = w->oid, .stripe = file ? m->stripe : 0 };
	struct ofs_client *c = NULL;
	struct ofs_attr *a;
	char oh[OFS_OID_HEX], nh[OFS_OID_HEX];
	int rc;

	memcpy(self.sids, w->a.sids, sizeof(self.sids));
	oid_to_hex(m->child.oid, oh);
	if (dry(k)) {
		if (file)
			snprintf(f->action, sizeof(f->action), "would be: stripe %u of this file given "
				 "its own copy of %s's %llu bytes; the owner its back reference names "
				 "keeps %s", m->stripe, oh, (unsigned long long)m->size, oh);
		else
			snprintf(f->action, sizeof(f->action), "would be: dirdata %u of this directory "
				 "made anew, empty; the owner its back reference names keeps %s and the "
				 "entries in it", m->stripe, oh);
		return mend_outcome(k, f, 0);
	}
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	if (!(a = malloc(sizeof(*a))))
		return -ENOMEM;
	rc = task_client(k, &c);
	if (!rc)
		rc = ofs_getattr(c, &self, a);
	if (!rc && (m->stripe >= a->nparts || !oid_eq(a->parts[m->stripe].oid, m->child.oid))) {
		free(a);
		snprintf(f->action, sizeof(f->action), "nothing to do: slot %u no longer names %s",
			 m->stripe, oh);
		return mend_outcome(k, f, 0);
	}
	if (!rc)
		rc = ofs_copy_part(c, &m->child, file ? OFS_OBJ_DFILE : OFS_OBJ_DIRDATA, m->size,
				   &br, &fresh);
	if (!rc) {
		rc = put_in_slot(c, &self, m->stripe, &fresh, &m->child);
		if (rc)
			ofs_remove_part(c, &fresh);
	}
	free(a);
	snprintf(nh, sizeof(nh), "?");
	if (!rc)
		oid_to_hex(fresh.oid, nh);
	if (file)
		snprintf(f->action, sizeof(f->action), "stripe %u of this file given its own copy of "
			 "%s (%llu bytes): %s; the owner its back reference names keeps %s",
			 m->stripe, oh, (unsigned long long)m->size, nh, oh);
	else
		snprintf(f->action, sizeof(f->action), "dirdata %u of this directory made anew, empty "
			 "(%s); the owner its back reference names keeps %s and the entries in it",
			 m->stripe, nh, oh);
	return mend_outcome(k, f, rc);
}

static int mend_structure(struct scrub_task *k, const struct task_obj *w, struct ofs_task_finding *f,
			  const struct mend *m)
{
	struct ofs_client *c = NULL;
	char oh[OFS_OID_HEX], name[OFS_NAME_MAX + 1], path[OFS_NAME_MAX + 16];
	int rc = 0;

	memset(&f->source, 0, sizeof(f->source));
	oid_to_hex(m->child.oid, oh);
	if (m->what == MEND_NONE ||
	    (m->what == MEND_DANGLING_PART && w->a.type == OFS_OBJ_METAFILE)) {
		f->repair = OFS_REPAIR_LEFT;
		snprintf(f->action, sizeof(f->action), "%s",
			 m->what == MEND_NONE ? "not repaired: no action for it"
			 : "left: that stripe's bytes are lost; restore the file from elsewhere "
			   "(it is never truncated silently)");
		return 0;
	}
	if (m->what == MEND_SECOND_OWNER && w->a.type != OFS_OBJ_DIRDATA)
		return own_part(k, w, f, m);
	if (m->what == MEND_DANGLING_PART || m->what == MEND_SECOND_OWNER ||
	    m->what == MEND_ENTRY_TYPE) {
		struct ofs_handle self = { .oid = w->oid, .nsids = w->a.nsids };
		memcpy(self.sids, w->a.sids, sizeof(self.sids));
		if (m->what == MEND_DANGLING_PART)
			snprintf(f->action, sizeof(f->action), "%sdirdata %s made again, empty; its "
				 "entries come back from their objects' back references",
				 dry(k) ? "would be: " : "", oh);
		else if (m->what == MEND_SECOND_OWNER)
			snprintf(f->action, sizeof(f->action), "%sentry '%s' removed from this "
				 "directory; the owner its back reference names keeps %s",
				 dry(k) ? "would be: " : "", m->name, oh);
		else
			snprintf(f->action, sizeof(f->action), "%sentry '%s' rewritten as a %s, "
				 "what the object's own record says", dry(k) ? "would be: " : "",
				 m->name, ofs_type_name(m->type));
		if (dry(k))
			return mend_outcome(k, f, 0);
		if ((rc = task_take_budget(k->t)) != 0)
			return rc;
		rc = task_client(k, &c);
		if (!rc && m->what == MEND_DANGLING_PART) {
			rc = remake_dirdata(c, &m->child, w->oid);
		} else if (!rc && m->what == MEND_SECOND_OWNER) {
			struct ofs_dirent gone;
			rc = ofs_unlink_entry(c, &self, m->name, &gone);
			if (rc == -ENOENT)
				rc = 0;      /* removed meanwhile */
		} else if (!rc) {
			struct ofs_dirent d = { .type = m->type, .handle = m->child };
			rc = ofs_set_entry(c, &self, m->name, &d, OFS_DIRENT_REPLACE);
		}
		return mend_outcome(k, f, rc);
	}
	if (m->what == MEND_MOVE) {
		struct move_result mr;
		struct ofs_server fe;
		if (sidtab_get(k->sc->t, m->from, &fe) == -ENOENT) {
			/* Unknown here: it may be new (not gossiped yet) rather
			 * than gone. Moving copies off a live server is not undone
			 * easily; a human says which by marking it out. */
			f->repair = OFS_REPAIR_LEFT;
			snprintf(f->action, sizeof(f->action),
				 "left: that server is not in this server's table; if it was retired, "
				 "mark it out (ofs-pbj server set SID --state out) and repair again");
			return 0;
		}
		if (w->decode_rc || w->a.nsids == 0) {
			f->repair = OFS_REPAIR_LEFT;
			snprintf(f->action, sizeof(f->action), "%s", "left: its record does not decode here");
			return 0;
		}
		if (!dry(k) && (rc = task_take_budget(k->t)) != 0)
			return rc;
		for (int attempt = 0; attempt < 20; attempt++) {
			rc = move_copy(k->sc->s, k->sc->t, k->sc->r, w->oid, &w->a, m->from, NULL,
				       dry(k) ? MOVE_F_DRYRUN : 0, task_rate(k->t), throttle, k, &mr);
			if (rc != -EAGAIN && rc != -EBUSY)
				break;
			/* (another move of it holds it: 250-500 ms, apart
			 * from a server waiting for this one) */
			if (task_sleep(k->t, 250 + (long)(now_s(k) * 1000.0) % 250))
				return -ECANCELED;
		}
		if (rc == -OFS_EUNREACHABLE || rc == -ECANCELED)
			return rc;
		if (rc) {
			f->repair = OFS_REPAIR_FAILED;
			snprintf(f->action, sizeof(f->action), "move failed (%s): %.400s", ofs_strerror(rc),
				 mr.detail);
			return 0;
		}
		f->repair = dry(k) ? OFS_REPAIR_WOULD : OFS_REPAIR_DONE;
		f->source = mr.source;
		snprintf(f->action, sizeof(f->action), "%s", mr.detail);
		if (!dry(k))
			task_count_repair(k->t);
		return 0;
	}
	if (m->what == MEND_REPOINT) {
		/* (the object's record read again: it may have moved on) */
		struct ofs_attr *a = malloc(sizeof(*a));
		struct ofs_handle nh = { .oid = m->child.oid };
		if (!a)
			return -ENOMEM;
		rc = child_attr(k, &m->child, a);
		if (!rc) {
			nh.nsids = a->nsids;
			memcpy(nh.sids, a->sids, sizeof(nh.sids));
		}
		snprintf(f->action, sizeof(f->action), "%sthe pointer rewritten to name the servers "
			 "of the object's own record", dry(k) ? "would be: " : "");
		if (!rc && !dry(k) && (rc = task_take_budget(k->t)) == 0)
			rc = move_repoint_owner(k->sc->t, k->sc->r, a, &nh);
		free(a);
		if (rc == -OFS_EUNREACHABLE || rc == -ECANCELED)
			return rc;
		return mend_outcome(k, f, rc);
	}
	if (m->what == MEND_ORPHAN) {
		int64_t t = w->a.mtime_ns > w->a.ctime_ns ? w->a.mtime_ns : w->a.ctime_ns;
		if (young(k->sc, &w->a)) {
			f->repair = OFS_REPAIR_LEFT;
			snprintf(f->action, sizeof(f->action),
				 "left: changed %llds ago, within the %llds grace (a create may be "
				 "in progress); a later repair moves it",
				 (long long)((wall_ns() - t) / 1000000000LL), k->sc->orphan_grace_s);
			return 0;
		}
		if (m->relink) {
			if (!dry(k) && (rc = task_take_budget(k->t)) != 0)
				return rc;
			rc = task_client(k, &c);
			if (!rc)
				rc = relink(k, c, w, m, f->action, sizeof(f->action));
			if (rc != 1)
				return mend_outcome(k, f, rc);
			rc = 0;              /* nothing to relink to: lost+found */
		}
		lost_name(w, name, sizeof(name));
		snprintf(path, sizeof(path), "/lost+found/%s", name);
	}
	if (dry(k)) {
		f->repair = OFS_REPAIR_WOULD;
		if (m->what == MEND_BACKREF)
			snprintf(f->action, sizeof(f->action),
				 "would rewrite its back reference from the forward pointer (stripe %u, name '%s')",
				 m->want.stripe, m->want.name);
		else if (m->what == MEND_DANGLING_ENTRY)
			snprintf(f->action, sizeof(f->action), "would remove entry '%s' (it names %s)",
				 m->name, oh);
		else
			snprintf(f->action, sizeof(f->action), "would move it to %s", path);
		return 0;
	}
	if ((rc = task_take_budget(k->t)) != 0)
		return rc;
	rc = task_client(k, &c);
	if (!rc && m->what == MEND_BACKREF) {
		rc = ofs_set_backref(c, &m->child, &m->want);
		snprintf(f->action, sizeof(f->action),
			 "back reference rewritten from the forward pointer (stripe %u, name '%s')",
			 m->want.stripe, m->want.name);
	} else if (!rc && m->what == MEND_DANGLING_ENTRY) {
		struct ofs_handle dd = { .oid = w->oid, .nsids = w->a.nsids };
		struct ofs_dirent gone;
		memcpy(dd.sids, w->a.sids, sizeof(dd.sids));
		rc = ofs_unlink_entry(c, &dd, m->name, &gone);
		if (rc == -ENOENT)
			rc = 0;              /* removed meanwhile */
		snprintf(f->action, sizeof(f->action), "entry '%s' removed from its directory (it named %s)",
			 m->name, oh);
	} else if (!rc) {
		struct ofs_handle h = { .oid = w->oid, .nsids = w->a.nsids };
		memcpy(h.sids, w->a.sids, sizeof(h.sids));
		rc = ofs_mkdir(c, "/lost+found");
		if (rc == -EEXIST)
			rc = 0;
		if (!rc && (w->a.type == OFS_OBJ_DFILE || w->a.type == OFS_OBJ_DIRDATA))
			rc = ofs_adopt_part(c, path, &h, w->a.type, w->a.size);
		else if (!rc)
			rc = ofs_link_object(c, path, &h, w->a.type);
		snprintf(f->action, sizeof(f->action), "moved to %s", path);
	}
	if (rc) {
		char why[OFS_TASK_DETAIL_LEN];
		snprintf(why, sizeof(why), "%s", f->action);
		f->repair = OFS_REPAIR_FAILED;
		snprintf(f->action, sizeof(f->action), "failed (%s): %.400s", ofs_strerror(rc), why);
		if (rc == -OFS_EUNREACHABLE)
			return rc;           /* the task is retried */
		return 0;
	}
	f->repair = OFS_REPAIR_DONE;
	task_count_repair(k->t);
	return 0;
}

/* Repair what scrub_one found about w (held), then queue the findings
 * with what was done. */
static int repair_object(struct scrub_task *k, const struct task_obj *w)
{
	struct ofs_sid me = store_sid(k->sc->s);
	bool have_attr = w->decode_rc == 0, local_done = false;
	struct ofs_fetch_reply local_fr;
	int local_rc = 0, rc = 0;

	for (size_t i = 0; i < k->nheld && !rc; i++) {
		struct ofs_task_finding *f = &k->held[i];
		struct ofs_sid other = f->source;
		struct ofs_fetch_reply fr;

		if (!is_copy_kind(f->kind) || k->hm[i].what == MEND_MOVE ||
		    k->hm[i].what == MEND_REPOINT) {
			rc = mend_structure(k, w, f, &k->hm[i]);
			continue;
		}
		if (!sid_eq(f->server, me)) {
			rc = fix_copy(k, w->oid, &w->a, have_attr, f->server, f, &fr, false);
			continue;
		}
		/* This server's copy: one fetch for all its findings. */
		if (!local_done) {
			/* a copy this scrub has just seen fail its checksums
			 * or lack bytes is not read a second time */
			bool bad = f->kind == OFS_FINDING_CHECKSUM_MISMATCH ||
				   f->kind == OFS_FINDING_SIZE_MISMATCH ||
				   f->kind == OFS_FINDING_UNREADABLE ||
				   f->kind == OFS_FINDING_MISSING_REPLICA;
			local_rc = fix_copy(k, w->oid, &w->a, have_attr, me, f, &local_fr, bad);
			if (local_rc)
				return local_rc;
			local_done = true;
			if ((f->kind == OFS_FINDING_REPLICA_CONFLICT || f->kind == OFS_FINDING_KEYVAL_MISMATCH) &&
			    local_fr.outcome == OFS_FETCH_GOOD && !sid_is_zero(other)) {
				/* This copy verifies: the differing one is the bad one. */
				rc = fix_copy(k, w->oid, &w->a, have_attr, other, f, &fr, false);
			}
			continue;
		}
		{
			char hex[OFS_OID_HEX], where[64];
			sid_to_hex(me, hex);
			snprintf(where, sizeof(where), "on %.32s", hex);
			set_outcome(f, 0, &local_fr, where);
		}
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < k->nheld && !rc; i++)
		rc = task_enqueue(k->t, &k->held[i]);
	k->nheld = 0;
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
	at(k, oid);
	memset(&f, 0, sizeof(f));
	f.server = sp->sid;
	f.oid = oid;
	f.kind = OFS_FINDING_STALE_REPLICA;
	snprintf(detail, sizeof(detail), "recorded at write time: %s", reason);
	snprintf(f.detail, sizeof(f.detail), "%s", detail);
	memset(&fr, 0, sizeof(fr));
	rc = fix_copy(k, oid, a, have, sp->sid, &f, &fr, false);
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
	return k->flags & OFS_TASK_F_REPAIR ? stale_phase(k) : 0;
}

static void scrub_batch(struct task *t, void *state, const struct task_obj *w, size_t n)
{
	struct scrub_task *k = state;

	(void)t;
	prefetch(k, w, n);
	prefetch_parts(k, w, n);
	prefetch_owners(k, w, n);
}

static int scrub_step(struct task *t, void *state, const struct task_obj *w, size_t i,
		      uint64_t *bytes)
{
	struct scrub_task *k = state;
	int rc;

	(void)t;
	k->pre_at = (long)i;
	if (k->flags & OFS_TASK_F_REPAIR) {
		k->holding = true;
		k->nheld = 0;
		rc = scrub_one(k, w, bytes);
		k->holding = false;
		if (!rc && k->nheld)
			rc = repair_object(k, w);
		k->nheld = 0;
	} else {
		rc = scrub_one(k, w, bytes);
	}
	k->pre_at = -1;
	if (!rc && k->nsus)
		rc = settle(k, false);
	return rc;
}

static struct ofs_oid scrub_cursor(void *state, struct ofs_oid done)
{
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

	scrub_trim(k);
	free(k->held);
	free(k->hm);
	free(k->sus);
	ofs_client_close(k->client);
	free(k);
}
