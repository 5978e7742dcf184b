/* move.c - the move step (see move.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conn.h"
#include "lib/ofs_error.h"
#include "lib/placement.h"
#include "lib/wire.h"
#include "client/ofs_repair.h"
#include "rebalancer/move.h"

#define RANKED 16                    /* targets ranked by placement */

static bool in_list(const struct ofs_sid *l, size_t n, struct ofs_sid s)
{
	for (size_t i = 0; i < n; i++)
		if (sid_eq(l[i], s))
			return true;
	return false;
}

/* A server-table entry as placement sees it. */
static void place_entry(const struct ofs_server *e, struct place_server *p)
{
	p->sid = e->sid;
	p->weight = e->weight_milli / 1000.0;
	p->state = e->state == OFS_SERVER_IN ? PLACE_IN :
		   e->state == OFS_SERVER_DRAINING ? PLACE_DRAINING : PLACE_OUT;
	ofs_server_attr(e, PLACE_DOMAIN_ATTR, p->domain, sizeof(p->domain));
}

/* Step 1: the target. */
static int choose_target(struct sidtab *t, struct ofs_oid oid, const struct ofs_attr *a,
			 struct ofs_sid from, struct ofs_sid *target)
{
	struct ofs_server *e = NULL;
	struct place_server *ps;
	struct ofs_sid ranked[RANKED];
	char used[OFS_MAX_REPLICAS][PLACE_DOMAIN_LEN];
	size_t ne = 0, np = 0, nused = 0;
	int got, rc = sidtab_snapshot(t, &e, &ne);

	if (rc)
		return rc;
	ps = calloc(ne ? ne : 1, sizeof(*ps));
	if (!ps) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++) {
		bool kept = in_list(a->sids, a->nsids, e[i].sid) && !sid_eq(e[i].sid, from);
		if (kept && nused < OFS_MAX_REPLICAS)
			ofs_server_attr(&e[i], PLACE_DOMAIN_ATTR, used[nused++], PLACE_DOMAIN_LEN);
		if (in_list(a->sids, a->nsids, e[i].sid) || sid_eq(e[i].sid, from))
			continue;            /* holds a copy, or is the one left */
		place_entry(&e[i], &ps[np++]);
	}
	got = np ? place_choose(PLACE_DEFAULT, oid, ps, np, np < RANKED ? (unsigned)np : RANKED,
				NULL, ranked) : 0;
	if (got < 0)
		rc = got;
	else if (got == 0)
		rc = -OFS_ENOSERVERS;
	if (!rc) {
		/* the best ranked in a rack no kept copy uses, else the best */
		*target = ranked[0];
		for (int i = 0; i < got; i++) {
			char dom[PLACE_DOMAIN_LEN] = "";
			bool taken = false;
			for (size_t k = 0; k < np; k++)
				if (sid_eq(ps[k].sid, ranked[i]))
					snprintf(dom, sizeof(dom), "%s", ps[k].domain);
			for (size_t k = 0; k < nused; k++)
				taken |= strcmp(used[k], dom) == 0;
			if (!taken) {
				*target = ranked[i];
				break;
			}
		}
	}
	free(ps);
	free(e);
	return rc;
}

int move_getattr_newest(struct replicator *r, struct ofs_oid oid, const struct ofs_sid *to,
			size_t n, struct ofs_attr *a)
{
	struct replica_result *res = calloc(n ? n : 1, sizeof(*res));
	struct ofs_attr *x = malloc(sizeof(*x));
	struct wbuf body;
	bool found = false;
	int rc = res && x ? 0 : -ENOMEM;

	wbuf_init(&body);
	wbuf_oid(&body, oid);
	if (!rc)
		rc = wbuf_error(&body);
	if (!rc && n)
		rc = replica_forward(r, OFS_OP_GETATTR, body.data, body.len, to, n, res);
	for (size_t i = 0; !rc && i < n; i++)
		if (!res[i].rc && proto_decode_attr_reply(res[i].body, res[i].len, x) == 0 &&
		    (!found || x->version > a->version)) {
			*a = *x;
			found = true;
		}
	for (size_t i = 0; res && i < n; i++)
		free(res[i].body);
	free(res);
	free(x);
	wbuf_free(&body);
	return rc ? rc : found ? 0 : -ENOENT;
}

/* The handle of the object oid names as its owner: asked of every server
 * in service, the newest copy's answer. (Not the first to answer: a copy
 * out of service, or one a version behind, can name servers the owner
 * has since moved from.) */
static int owner_handle(struct sidtab *t, struct replicator *r, struct ofs_oid owner,
			struct ofs_attr *oa, struct ofs_handle *h)
{
	struct ofs_server *e = NULL;
	struct ofs_sid *all;
	size_t ne = 0, na = 0;
	int rc = sidtab_snapshot(t, &e, &ne);

	if (rc)
		return rc;
	all = calloc(ne ? ne : 1, sizeof(*all));
	rc = all ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < ne; i++)
		if (e[i].state != OFS_SERVER_OUT)
			all[na++] = e[i].sid;
	if (!rc)
		rc = move_getattr_newest(r, owner, all, na, oa);
	free(all);
	free(e);
	if (rc)
		return rc;
	memset(h, 0, sizeof(*h));
	h->oid = owner;
	h->nsids = oa->nsids;
	memcpy(h->sids, oa->sids, sizeof(h->sids));
	return 0;
}

/* Apply q to every copy of h on a server in service, each told directly
 * (forwarded): a copy out of service cannot hold the change up; one in
 * service that does not take it fails the step (it is run again). */
static int apply_to_copies(struct sidtab *t, struct replicator *r, const struct ofs_req *q,
			   const struct ofs_handle *h)
{
	struct ofs_sid to[OFS_MAX_REPLICAS];
	struct replica_result rr[OFS_MAX_REPLICAS];
	struct wbuf body;
	size_t n = 0;
	int rc;

	for (uint8_t i = 0; i < h->nsids && i < OFS_MAX_REPLICAS; i++) {
		struct ofs_server e;
		int g = sidtab_get(t, h->sids[i], &e);
		if (g == 0 && e.state != OFS_SERVER_OUT)
			to[n++] = h->sids[i];
	}
	if (n == 0)
		return -OFS_EUNREACHABLE;
	memset(rr, 0, sizeof(rr));
	wbuf_init(&body);
	rc = proto_encode_req(&body, q);
	if (!rc)
		rc = replica_forward(r, q->op, body.data, body.len, to, n, rr);
	wbuf_free(&body);
	for (size_t i = 0; i < n; i++) {   /* (every body freed) */
		if (rr[i].rc && !rc)
			rc = rr[i].rc;
		free(rr[i].body);
	}
	return rc;
}

/* Step 4: the owner's pointer to oid now names the new handle. */
int move_repoint_owner(struct sidtab *t, struct replicator *r, const struct ofs_attr *a,
			 const struct ofs_handle *nh)
{
	struct ofs_attr *oa = malloc(sizeof(*oa));
	struct ofs_req *q = calloc(1, sizeof(*q));
	struct ofs_handle oh;
	int rc;

	if (!oa || !q) {
		free(oa);
		free(q);
		return -ENOMEM;
	}
	if (oid_is_zero(a->backref.owner)) {
		free(oa);
		free(q);
		return -EOPNOTSUPP;          /* the root: its handle is every server's */
	}
	rc = owner_handle(t, r, a->backref.owner, oa, &oh);
	if (!rc && (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA)) {
		int at = -1;
		for (uint16_t i = 0; i < oa->nparts; i++)
			if (oid_eq(oa->parts[i].oid, nh->oid) && (at < 0 || i == a->backref.stripe))
				at = i;
		if (at < 0) {
			rc = -ENOENT;        /* the owner does not point at it (an orphan) */
		} else {
			/* Only this part: other parts of the owner may be moving
			 * at the same time, from other servers. */
			q->op = OFS_OP_SETATTR;
			q->oid = oh.oid;
			q->mask = OFS_ATTR_PART;
			q->attr.type = oa->type;
			q->attr.nparts = 1;
			q->attr.parts[0] = *nh;
			q->attr.backref.stripe = (uint32_t)at;
			rc = apply_to_copies(t, r, q, &oh);
		}
	} else if (!rc) {
		struct ofs_handle dd;
		rc = ofs_dirdata_for(oa, a->backref.name, &dd);
		if (!rc) {
			q->op = OFS_OP_DIRENT_CREATE;
			q->oid = dd.oid;
			snprintf(q->name, sizeof(q->name), "%s", a->backref.name);
			q->dirent.type = a->type;
			q->dirent.handle = *nh;
			q->flags = OFS_DIRENT_REPLACE;
			rc = apply_to_copies(t, r, q, &dd);
		}
	}
	free(q);
	free(oa);
	return rc;
}

/* The summary of oid's copy on sid (this server's own: from the store). */
static int summary_of(struct store *s, struct replicator *r, struct ofs_sid sid, struct ofs_oid oid,
		      struct ofs_summary *sm)
{
	struct replica_result rr;
	struct wbuf body;
	int rc;

	memset(sm, 0, sizeof(*sm));
	if (sid_eq(sid, store_sid(s))) {
		rc = store_summary(s, oid, sm);
		return rc == -ENOENT ? 0 : rc;
	}
	wbuf_init(&body);
	wbuf_oid(&body, oid);
	rc = wbuf_error(&body);
	if (!rc)
		rc = replica_forward(r, OFS_OP_SUMMARY, body.data, body.len, &sid, 1, &rr);
	wbuf_free(&body);
	if (rc)
		return rc;
	rc = rr.rc ? rr.rc : proto_decode_summary(rr.body, rr.len, sm);
	free(rr.body);
	return rc;
}

/* Step 4 for the root directory: every server serves the new handle. */
static int repoint_root(struct sidtab *t, struct replicator *r, const struct ofs_handle *nh)
{
	struct ofs_server *e = NULL;
	struct replica_result *rr = NULL;
	struct ofs_sid *to = NULL;
	struct ofs_handle cur;
	struct ofs_req *q = NULL;
	struct wbuf body;
	int64_t birth = 0;
	size_t ne = 0, n = 0;
	int rc = sidtab_snapshot(t, &e, &ne), got = 0;

	if (rc)
		return rc;
	wbuf_init(&body);
	for (size_t i = 0; i < ne; i++)
		if (sid_eq(e[i].sid, sidtab_self(t))) {
			cur = e[i].root;
			birth = e[i].root_birth_ns;
			got = 1;
		}
	if (!got || !oid_eq(cur.oid, nh->oid)) {
		rc = -ESTALE;            /* this server serves another root */
		goto out;
	}
	rr = calloc(ne, sizeof(*rr));
	to = calloc(ne, sizeof(*to));
	q = calloc(1, sizeof(*q));
	if (!rr || !to || !q) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ne; i++)
		if (e[i].state != OFS_SERVER_OUT)
			to[n++] = e[i].sid;
	q->op = OFS_OP_ROOT_MOVE;
	q->root = *nh;
	q->birth_ns = birth;
	rc = proto_encode_req(&body, q);
	if (!rc)
		rc = replica_forward(r, OFS_OP_ROOT_MOVE, body.data, body.len, to, n, rr);
	/* A server that does not answer now (down, unreachable) keeps the
	 * old list: its clients fail over along it, and it takes the new one
	 * from its peers by gossip when it is back (the newer root_version,
	 * sidtab_move_root). Only a server that answered and refused fails
	 * the move. */
	for (size_t i = 0; i < n; i++) {   /* (every body freed) */
		if (rr[i].rc && rr[i].rc != -OFS_EUNREACHABLE &&
		    !conn_is_transport_error(rr[i].rc) && !rc)
			rc = rr[i].rc;
		free(rr[i].body);
	}
out:
	wbuf_free(&body);
	free(q);
	free(to);
	free(rr);
	free(e);
	return rc;
}

/* The servers of h's copies that are in service (not out). */
static size_t in_service(struct sidtab *t, const struct ofs_sid *sids, size_t n, struct ofs_sid *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct ofs_server e;
		if (sidtab_get(t, sids[i], &e) == 0 && e.state != OFS_SERVER_OUT)
			out[k++] = sids[i];
	}
	return k;
}

/* The target of a move noted before: still one to use? */
static bool usable_target(struct sidtab *t, struct ofs_sid from, struct ofs_sid target)
{
	struct ofs_server e;

	return !sid_eq(target, from) && sidtab_get(t, target, &e) == 0 && e.state == OFS_SERVER_IN;
}

/* One run of a move: what it acts on, and what it has learned. */
struct mv {
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	struct ofs_oid oid;
	const struct ofs_attr *a;
	struct ofs_sid from;
	uint64_t rate;
	repair_pace_fn pace;
	void *arg;
	struct move_result *res;
	char th[OFS_OID_HEX], fh[OFS_OID_HEX];   /* target, from: in details */
};

/* 1: the target - the one noted by a run that did not finish, when it can
 * still take it; else `to`, else placement's. (The copies that run
 * switched get the same handle again.) */
static int pick_target(struct mv *m, const struct ofs_sid *to, bool drop)
{
	const struct ofs_attr *a = m->a;
	struct ofs_sid noted;

	if (drop && store_move_get(m->s, m->oid, &noted) == 0 && usable_target(m->t, m->from, noted) &&
	    !(in_list(a->sids, a->nsids, noted) && in_list(a->sids, a->nsids, m->from))) {
		m->res->target = noted;
	} else if (to) {
		/* (a target that holds a copy already - another server moved its
		 * copy there meanwhile - would take two copies in one) */
		if (in_list(a->sids, a->nsids, *to) && in_list(a->sids, a->nsids, m->from))
			return -EEXIST;
		if (!usable_target(m->t, m->from, *to) || in_list(a->sids, a->nsids, *to))
			return -EINVAL;
		m->res->target = *to;
	} else {
		int rc = choose_target(m->t, m->oid, a, m->from, &m->res->target);
		if (rc)
			return rc;
	}
	sid_to_hex(m->res->target, m->th);
	sid_to_hex(m->from, m->fh);
	return 0;
}

static bool fetched(const struct ofs_fetch_reply *fr)
{
	return fr->outcome == OFS_FETCH_DONE || fr->outcome == OFS_FETCH_GOOD ||
	       fr->outcome == OFS_FETCH_RECONCILED;
}

/* The servers in service that hold a copy, and `from`: those held still. */
static size_t hold_set(const struct mv *m, struct ofs_sid *hold)
{
	struct ofs_sid all[OFS_MAX_REPLICAS + 1];
	size_t nall = 0;

	for (uint8_t i = 0; i < m->a->nsids; i++)
		all[nall++] = m->a->sids[i];
	if (!in_list(all, nall, m->from))
		all[nall++] = m->from;
	return in_service(m->t, all, nall, hold);
}

/* Held: no other move of it runs now. One that ran since a was read
 * changed the SID list; the new handle is made from the list as it is,
 * so run again with it (-EAGAIN). */
static int same_copies(struct mv *m)
{
	struct ofs_attr *cur = malloc(sizeof(*cur));
	int rc = 0;

	if (!cur)
		return -ENOMEM;
	if (store_getattr(m->s, m->oid, cur) == 0 &&
	    (cur->nsids != m->a->nsids ||
	     memcmp(cur->sids, m->a->sids, m->a->nsids * sizeof(cur->sids[0])) != 0))
		rc = -EAGAIN;
	free(cur);
	if (rc)
		snprintf(m->res->detail, sizeof(m->res->detail), "its copies changed meanwhile "
			 "(another move): run again");
	return rc;
}

/* Held still, the target fetched again until it is as new as every copy
 * kept (at most 3 more fetches). */
static int catch_up_target(struct mv *m, const struct ofs_sid *keep, size_t nkeep,
			   struct ofs_fetch_reply *fr)
{
	int rc = 0;

	for (int again = 0; again < 3; again++) {
		struct ofs_summary ts, ks;
		bool behind = false;
		rc = summary_of(m->s, m->r, m->res->target, m->oid, &ts);
		for (size_t i = 0; !rc && i < nkeep; i++) {
			struct ofs_server e;
			if (sidtab_get(m->t, keep[i], &e) != 0 || e.state == OFS_SERVER_OUT)
				continue;
			if (summary_of(m->s, m->r, keep[i], m->oid, &ks) != 0 || !ks.present || ks.behind)
				continue;
			behind |= !ts.present || ts.version < ks.version ||
				  (ts.version == ks.version && !digest_eq(ts.digest, ks.digest));
		}
		if (rc || !behind)
			break;
		rc = repair_fetch_at(m->s, m->t, m->r, m->res->target, m->oid, keep, nkeep,
				     OFS_FETCH_LOCALBAD, m->rate, "move", m->pace, m->arg, fr);
		if (!rc && !fetched(fr))
			rc = -EIO;
		if (!rc)
			m->res->bytes += fr->bytes;
	}
	if (rc)
		snprintf(m->res->detail, sizeof(m->res->detail), "copied to %.32s, could not catch "
			 "it up: %s", m->th, ofs_strerror(rc));
	return rc;
}

/* 4-6: every copy kept, and the new one, gets the new handle; the owner
 * points at it; with drop, the copy here goes (still held: nobody reads
 * it old). fr: the last fetch, for the detail. */
static int switch_over(struct mv *m, const struct ofs_handle *nh, bool drop,
		       const struct ofs_fetch_reply *fr)
{
	struct ofs_req *q = calloc(1, sizeof(*q));
	struct move_result *res = m->res;
	int rc;

	if (!q)
		return -ENOMEM;
	q->op = OFS_OP_SETATTR;
	q->oid = m->oid;
	q->mask = OFS_ATTR_SIDS;
	q->attr.nsids = nh->nsids;
	memcpy(q->attr.sids, nh->sids, sizeof(nh->sids));
	rc = apply_to_copies(m->t, m->r, q, nh);
	free(q);
	if (rc) {
		snprintf(res->detail, sizeof(res->detail), "copied to %.32s but not every copy "
			 "took the new handle: %s", m->th, ofs_strerror(rc));
		return rc;
	}
	rc = oid_is_zero(m->a->backref.owner) && m->a->type == OFS_OBJ_DIRECTORY
		     ? repoint_root(m->t, m->r, nh)
		     : move_repoint_owner(m->t, m->r, m->a, nh);
	if (rc) {
		snprintf(res->detail, sizeof(res->detail), "copied to %.32s, handle rewritten, but "
			 "the owner's pointer was not: %s", m->th, ofs_strerror(rc));
		return rc;
	}
	if (drop) {
		rc = store_drop_copy(m->s, m->oid);
		if (rc == -ENOENT)
			rc = 0;
		if (rc) {
			snprintf(res->detail, sizeof(res->detail), "moved to %.32s; removing the copy "
				 "here failed: %s", m->th, ofs_strerror(rc));
			return rc;
		}
	}
	if (sid_is_zero(fr->source)) {
		snprintf(res->detail, sizeof(res->detail), "recreated on %.32s (its copy was already "
			 "good); handle and owner now name it instead of %.32s", m->th, m->fh);
	} else {
		char sh[OFS_OID_HEX];
		sid_to_hex(fr->source, sh);
		snprintf(res->detail, sizeof(res->detail), "recreated on %.32s from %.32s (%llu "
			 "bytes); handle and owner now name it instead of %.32s", m->th, sh,
			 (unsigned long long)res->bytes, m->fh);
	}
	return 0;
}

/* One run of the move; -EAGAIN when, once held, the object's SID list is
 * not the one in a (move_copy reads it again and runs once more). */
static int move_once(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		     const struct ofs_attr *a, struct ofs_sid from, const struct ofs_sid *to,
		     unsigned flags, uint64_t rate, repair_pace_fn pace, void *arg,
		     struct move_result *res)
{
	struct mv m = { .s = s, .t = t, .r = r, .oid = oid, .a = a, .from = from, .rate = rate,
			.pace = pace, .arg = arg, .res = res };
	bool drop = (flags & MOVE_F_DROP_SOURCE) != 0;
	struct ofs_handle nh;
	struct ofs_fetch_reply fr;
	struct ofs_sid keep[OFS_MAX_REPLICAS + 1], hold[OFS_MAX_REPLICAS + 2];
	size_t nkeep = 0, nhold;
	int rc;

	memset(res, 0, sizeof(*res));
	if (drop && !sid_eq(from, store_sid(s)))
		return -EINVAL;          /* only this server's own copy is dropped */
	rc = pick_target(&m, to, drop);
	if (rc)
		return rc;
	memset(&nh, 0, sizeof(nh));
	nh.oid = oid;
	nh.nsids = a->nsids;
	for (uint8_t i = 0; i < a->nsids; i++)
		nh.sids[i] = sid_eq(a->sids[i], from) ? res->target : a->sids[i];
	for (uint8_t i = 0; i < nh.nsids; i++)
		if (!sid_eq(nh.sids[i], res->target) && !sid_eq(nh.sids[i], from))
			keep[nkeep++] = nh.sids[i];
	if (flags & MOVE_F_DRYRUN) {
		snprintf(res->detail, sizeof(res->detail), "would copy it to %.32s (placement) "
			 "and point the handle there instead of %.32s", m.th, m.fh);
		return 0;
	}
	if (drop) {
		rc = store_move_note(s, oid, res->target);
		if (rc)
			return rc;
		keep[nkeep++] = from;    /* a draining copy is good to copy from */
	}
	/* 2: the target fetches a verified copy (the object keeps changing
	 * meanwhile; the catch-up below is done held still). */
	rc = repair_fetch_at(s, t, r, res->target, oid, keep, nkeep, 0, rate, "move", pace, arg, &fr);
	if (rc)
		return rc;
	if (!fetched(&fr)) {
		snprintf(res->detail, sizeof(res->detail), "no copy to recreate it from: %.200s", fr.detail);
		return -EIO;
	}
	res->source = fr.source;
	res->bytes = fr.bytes;
	/* 3: hold the object still on every copy in service (a change in
	 * progress finishes first), and bring the target up to the newest. */
	nhold = hold_set(&m, hold);
	rc = replica_freeze(r, oid, hold, nhold, MOVE_HOLD_MS, store_sid(s));
	if (rc) {
		(void)replica_freeze(r, oid, hold, nhold, 0, store_sid(s));
		snprintf(res->detail, sizeof(res->detail), "could not hold it still: %s", ofs_strerror(rc));
		return rc;
	}
	rc = same_copies(&m);
	if (!rc)
		rc = catch_up_target(&m, keep, nkeep, &fr);
	if (!rc)
		rc = switch_over(&m, &nh, drop, &fr);
	if (!in_list(hold, nhold, res->target))
		hold[nhold++] = res->target;
	(void)replica_freeze(r, oid, hold, nhold, 0, store_sid(s));   /* (else it lapses) */
	return rc;
}

int move_copy(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
	      const struct ofs_attr *a, struct ofs_sid from, const struct ofs_sid *to, unsigned flags,
	      uint64_t rate, repair_pace_fn pace, void *arg, struct move_result *res)
{
	struct ofs_attr *cur = NULL;
	int rc = -EAGAIN;

	/* Another move of it ran since a was read: again, with the SID list
	 * as that move left it (a few times; then the caller's retry). */
	for (int run = 0; run < 3 && rc == -EAGAIN; run++) {
		if (run) {
			if (!cur && !(cur = malloc(sizeof(*cur))))
				return -ENOMEM;
			if (store_getattr(s, oid, cur) != 0)
				break;
			a = cur;
			if (!(flags & MOVE_F_DROP_SOURCE) && !in_list(a->sids, a->nsids, from)) {
				memset(res, 0, sizeof(*res));
				snprintf(res->detail, sizeof(res->detail), "%s", "moved meanwhile by "
					 "another run: the handle no longer names that server");
				rc = 0;
				break;
			}
		}
		rc = move_once(s, t, r, oid, a, from, to, flags, rate, pace, arg, res);
	}
	free(cur);
	return rc;
}

bool move_placed_on(struct sidtab *t, struct ofs_oid oid, unsigned copies, struct ofs_sid sid)
{
	struct ofs_server *e = NULL;
	struct place_server *ps;
	struct ofs_sid out[OFS_MAX_REPLICAS];
	size_t ne = 0;
	bool on = false;
	int got;

	if (copies == 0 || copies > OFS_MAX_REPLICAS || sidtab_snapshot(t, &e, &ne) != 0)
		return false;
	ps = calloc(ne ? ne : 1, sizeof(*ps));
	if (!ps) {
		free(e);
		return false;
	}
	for (size_t i = 0; i < ne; i++) {
		place_entry(&e[i], &ps[i]);
	}
	got = ne ? place_choose(PLACE_DEFAULT, oid, ps, ne, copies, NULL, out) : 0;
	for (int i = 0; i < got; i++)
		on |= sid_eq(out[i], sid);
	free(ps);
	free(e);
	return on;
}

static size_t racks_of(struct sidtab *t, const struct ofs_sid *sids, size_t n)
{
	char seen[OFS_MAX_REPLICAS + 1][PLACE_DOMAIN_LEN];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct ofs_server e;
		char r[PLACE_DOMAIN_LEN] = "";
		bool dup = false;
		if (sidtab_get(t, sids[i], &e) == 0)
			ofs_server_attr(&e, PLACE_DOMAIN_ATTR, r, sizeof(r));
		for (size_t j = 0; j < k; j++)
			dup |= strcmp(seen[j], r) == 0;
		if (!dup && k <= OFS_MAX_REPLICAS)
			snprintf(seen[k++], sizeof(seen[0]), "%s", r);
	}
	return k;
}

bool move_keeps_spread(struct sidtab *t, const struct ofs_attr *a, struct ofs_sid from,
		       struct ofs_sid to)
{
	struct ofs_sid after[OFS_MAX_REPLICAS];
	size_t n = a->nsids < OFS_MAX_REPLICAS ? a->nsids : OFS_MAX_REPLICAS;

	for (size_t i = 0; i < n; i++)
		after[i] = sid_eq(a->sids[i], from) ? to : a->sids[i];
	return racks_of(t, after, n) >= racks_of(t, a->sids, n);
}
