/* scrub_structure.c - back references and forward pointers checked (see
 * scrub_impl.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scrubber/scrub_impl.h"

/* ---- back references (the object's primary checks them) ------------------ */

/* The summary of the object h names, from the first of its servers that
 * holds it; WHERE_NOWHERE only when every one of them answered "not here". */
int scrub_locate(struct scrub_task *k, const struct ofs_handle *h, struct ofs_summary *sm,
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
int scrub_child_attr(struct scrub_task *k, const struct ofs_handle *child, struct ofs_attr *a)
{
	struct ofs_sid to[OFS_MAX_REPLICAS];
	size_t n = 0;
	int rc = store_getattr(k->sc->s, child->oid, a);

	if (rc != -ENOENT)
		return rc;
	for (uint8_t i = 0; i < child->nsids && i < OFS_MAX_REPLICAS; i++) {
		uint8_t st;
		if (!sid_eq(child->sids[i], store_sid(k->sc->s)) &&
		    scrub_server_state(k, child->sids[i], false, &st) == 0 && st != OFS_SERVER_OUT)
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
		if (scrub_server_state(k, child->sids[i], true, &st) == 0 && st == OFS_SERVER_OUT) {
			x = child->sids[i];
			named = true;
		}
	}
	if (!named)
		return 0;
	if (!(a = malloc(sizeof(*a))))
		return -ENOMEM;
	rc = scrub_child_attr(k, child, a);
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
		rc = scrub_add_finding(k, x, child->oid, OFS_FINDING_MISSING_REPLICA, detail);
		k->next_mend = NULL;
	}
	free(a);
	return rc;
}

/* A dangling_pointer: none of the object's servers holds it. */
static int found_dangling(struct scrub_task *k, const struct task_obj *w,
			  const struct ofs_handle *child, const char *what, const struct br_expect *e)
{
	struct mend m = { .what = e->name && w->a.type == OFS_OBJ_DIRDATA ? MEND_DANGLING_ENTRY
									 : MEND_DANGLING_PART,
			  .child = *child, .ref = child->oid };
	char detail[OFS_TASK_DETAIL_LEN], ch[OFS_OID_HEX];
	size_t dn;
	int rc;

	oid_to_hex(child->oid, ch);
	snprintf(m.name, sizeof(m.name), "%s", e->name ? e->name : "");
	dn = (size_t)snprintf(detail, sizeof(detail), "%s names %s, which none of its servers holds",
			      what, ch);
	if (w->a.type == OFS_OBJ_METAFILE && e->stripe >= 0 && dn < sizeof(detail))
		lost_ranges(&w->a, (uint32_t)e->stripe, detail + dn, sizeof(detail) - dn);
	k->next_mend = &m;
	rc = scrub_add_finding(k, store_sid(k->sc->s), w->oid, OFS_FINDING_DANGLING_POINTER, detail);
	k->next_mend = NULL;
	return rc;
}

/* What a verdict other than OK, WAIT and DANGLING reports, and the fix
 * it proves (the object's record sm, found on `where`; pa: what the owner
 * its back reference names said). */
static int found_mismatch(struct scrub_task *k, const struct task_obj *w,
			  const struct ofs_handle *child, const char *what, const struct br_expect *e,
			  enum br_pointer_verdict v, const struct ofs_summary *sm, struct ofs_sid where,
			  const struct points_answer *pa)
{
	char detail[OFS_TASK_DETAIL_LEN], ch[OFS_OID_HEX], oh[OFS_OID_HEX];
	struct mend m = { .child = *child };
	struct ofs_sid at = where;
	uint8_t kind = OFS_FINDING_BACKREF_MISMATCH;
	struct ofs_oid about = child->oid;
	int rc;

	oid_to_hex(child->oid, ch);
	oid_to_hex(sm->backref.owner, oh);
	snprintf(m.name, sizeof(m.name), "%s", e->name ? e->name : "");
	if (v == BRP_SECOND_OWNER) {
		char wh[OFS_OID_HEX];
		m.what = MEND_SECOND_OWNER;
		m.ref = w->oid;
		m.owner_at = pa->where;
		m.stripe = k->part_at;
		m.size = sm->size;
		oid_to_hex(w->oid, wh);
		snprintf(detail, sizeof(detail),
			 "owners %s (stripe %u, name '%s': its back reference) and %s (%s) both "
			 "point at it; the first keeps it",
			 oh, sm->backref.stripe, sm->backref.name, wh, what);
		kind = OFS_FINDING_MULTIPLE_OWNERS;
	} else if (v == BRP_BACKREF) {
		m.what = MEND_BACKREF;
		m.ref = e->owner;
		m.want.owner = e->owner;
		m.want.stripe = e->stripe >= 0 ? (uint32_t)e->stripe : 0;
		snprintf(m.want.name, sizeof(m.want.name), "%s", e->name ? e->name : "");
		snprintf(detail, sizeof(detail),
			 "its back reference says owner %s stripe %u name '%s'; %s points at it",
			 oh, sm->backref.stripe, sm->backref.name, what);
	} else {
		/* BRP_TYPE: the object's own record says what it is. */
		m.what = MEND_ENTRY_TYPE;
		m.ref = child->oid;
		m.type = sm->type;
		snprintf(detail, sizeof(detail), "%s says %s, but %s is a %s", what,
			 ofs_type_name((uint8_t)e->type), ch, ofs_type_name(sm->type));
		at = store_sid(k->sc->s);
		about = w->oid;
	}
	k->next_mend = &m;
	rc = scrub_add_finding(k, at, about, kind, detail);
	k->next_mend = NULL;
	return rc;
}

/* Check one forward pointer of this owner against the object it names
 * (backref/rules.h, br_judge_pointer). */
static int check_pointer(struct scrub_task *k, const struct task_obj *w, const struct ofs_handle *child,
			 const char *what, const struct br_expect *e)
{
	struct ofs_summary sm;
	struct ofs_sid where;
	struct points_answer pa;
	struct br_says says;
	const struct kid *kd;
	enum br_pointer_verdict v;
	int state = WHERE_UNKNOWN, rc = 0;

	if (right_here(k, child, e->owner, e->stripe, e->name, e->type))
		return check_pointer_sids(k, w, child, what);
	memset(&sm, 0, sizeof(sm));
	memset(&pa, 0, sizeof(pa));
	if ((kd = scrub_kid_of(k, child)) != NULL) {
		sm = kd->sm;                 /* what locate would find first */
		where = kd->from;
		state = WHERE_FOUND;
	} else {
		rc = scrub_locate(k, child, &sm, &where, &state);
		if (rc)
			return rc;
	}
	v = br_judge_pointer(e, state == WHERE_FOUND ? BR_FOUND : state == WHERE_NOWHERE
				? BR_NOWHERE : BR_UNKNOWN, &sm.backref, sm.type, NULL);
	if (v == BRP_ASK_OTHER) {
		/* Named by another owner: does that one point at it too? */
		rc = ask_points(k, sm.backref.owner, child->oid, sm.backref.stripe, sm.backref.name,
				child->sids, child->nsids, &pa);
		if (rc)
			return rc;
		says = (struct br_says){ .held = pa.held, .quiet = pa.quiet, .ans = pa.ans };
		v = br_judge_pointer(e, BR_FOUND, &sm.backref, sm.type, &says);
	}
	switch (v) {
	case BRP_WAIT:
		return 0;
	case BRP_DANGLING:
		return found_dangling(k, w, child, what, e);
	case BRP_OK:
		return check_pointer_sids(k, w, child, what);
	default:
		return found_mismatch(k, w, child, what, e, v, &sm, where, &pa);
	}
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
			scrub_prefetch_kids(k, &k->page_kids, ec.h, ec.n);
		for (size_t i = 0; i < ec.n && !rc; i++) {
			char what[OFS_NAME_MAX + 32];
			snprintf(what, sizeof(what), "entry '%s'", ec.name[i]);
			struct br_expect e;
			br_expect_entry(&w->a, ec.name[i], &ec.d[i], &e);
			rc = check_pointer(k, w, &ec.d[i].handle, what, &e);
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
/* Changed within the orphan grace? */
bool scrub_young(const struct scrubber *sc, const struct ofs_attr *a)
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
	struct br_says says;
	char detail[OFS_TASK_DETAIL_LEN], oh[OFS_OID_HEX];
	bool young = scrub_young(sc, &w->a);
	enum br_owner_verdict v = br_judge_owner(&w->a, young, NULL);
	int rc;

	if (v != BRO_ASK)
		return 0;                    /* the root, or one being built */
	if (scrub_first_look(k) >= 0 && k->pre->owner[scrub_first_look(k)] != STORE_POINTS_UNSURE) {
		/* answered ahead, from this server's records (prefetch_owners) */
		memset(&pa, 0, sizeof(pa));
		pa.held = true;
		pa.where = store_sid(sc->s);
		pa.ans = k->pre->owner[scrub_first_look(k)];
	} else {
		rc = ask_points(k, w->a.backref.owner, w->oid, w->a.backref.stripe,
				w->a.backref.name, w->a.sids, w->a.nsids, &pa);
		if (rc)
			return rc;
	}
	says = (struct br_says){ .held = pa.held, .quiet = pa.quiet, .ans = pa.ans };
	v = br_judge_owner(&w->a, young, &says);
	if (v == BRO_OK || v == BRO_WAIT || v == BRO_SKIP)
		return 0;
	oid_to_hex(w->a.backref.owner, oh);
	if (v == BRO_OWNER_UNFINISHED)
		snprintf(detail, sizeof(detail), "its owner %s was never finished (a put or mkdir "
			 "whose client stopped): it has no layout", oh);
	else if (v == BRO_UNFINISHED)
		snprintf(detail, sizeof(detail), "it was never finished (a put or mkdir whose client "
			 "stopped): it has no layout and no entry names it");
	else if (v == BRO_NOT_POINTED)
		snprintf(detail, sizeof(detail), "its owner %s (stripe %u, name '%s') does not point at it",
			 oh, w->a.backref.stripe, w->a.backref.name);
	else
		snprintf(detail, sizeof(detail), "its owner %s (name '%s') exists nowhere",
			 oh, w->a.backref.name);
	{
		struct mend m = { .what = MEND_ORPHAN, .ref = w->a.backref.owner };
		/* Relinked from the back reference when its owner is there and
		 * finished; /lost+found only when there is nothing to relink to. */
		if (v == BRO_NOT_POINTED) {
			m.owner_at = pa.where;
			m.relink = true;
		}
		k->next_mend = &m;
		rc = scrub_add_finding(k, store_sid(sc->s), w->oid, OFS_FINDING_ORPHAN, detail);
		k->next_mend = NULL;
	}
	return rc;
}

int scrub_check_structure(struct scrub_task *k, const struct task_obj *w)
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
			struct br_expect e;
			rc = br_expect_part(&w->a, w->oid, i, &e);
			if (!rc)
				rc = check_pointer(k, w, &w->a.parts[i], what, &e);
		}
	} else if (w->a.type == OFS_OBJ_DIRDATA) {
		rc = check_entries(k, w);
	}
	if (!rc)
		rc = check_owner(k, w);
	return rc;
}
