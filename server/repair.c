/* repair.c - making one copy of an object good again (see repair.h). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "server/reconcile.h"
#include "server/repair.h"

#define FETCH_PIECE ((uint32_t)4 << 20)    /* bytes per READ (OFS_MAX_IO) */
#ifndef FETCH_DEPTH
#define FETCH_DEPTH 4                      /* READs in flight */
#endif
#define MAX_CANDS 64                       /* copies compared at most */

static int found_bad(int kind, const char *detail, void *arg)
{
	(void)kind;
	(void)detail;
	*(bool *)arg = true;
	return 0;
}

int repair_verify(struct store *s, struct ofs_oid oid, struct ofs_summary *sm)
{
	uint64_t bytes;
	bool bad = false;
	int rc;

	memset(sm, 0, sizeof(*sm));
	rc = store_summary(s, oid, sm);
	if (rc == -ENOENT) {
		memset(sm, 0, sizeof(*sm));
		return 0;
	}
	if (rc == -OFS_ECORRUPT) {
		memset(sm, 0, sizeof(*sm));
		sm->present = sm->corrupt = sm->checked = sm->bad = true;
		return 0;
	}
	if (rc)
		return rc;
	rc = store_behind(s, oid);
	if (rc < 0)
		return rc;
	sm->behind = rc == 1;
	if (sm->type == OFS_OBJ_DFILE) {
		rc = store_scrub_dfile(s, oid, found_bad, NULL, &bad, &bytes);
		if (rc == -ENOENT) {
			memset(sm, 0, sizeof(*sm));
			return 0;
		}
		if (rc)
			return rc;
	}
	sm->checked = true;     /* (a dirdata entry that does not decode: corrupt) */
	sm->bad = bad || sm->corrupt;
	return 0;
}

/* One request to one server; the reply body in *res (caller frees). */
static int call1(struct replicator *r, struct ofs_sid sid, const struct ofs_req *q,
		 struct replica_result *res)
{
	struct wbuf body;
	int rc;

	wbuf_init(&body);
	rc = proto_encode_req(&body, q);
	if (!rc)
		rc = replica_forward(r, q->op, body.data, body.len, &sid, 1, res);
	wbuf_free(&body);
	if (!rc && res->rc) {
		free(res->body);
		res->body = NULL;
		rc = res->rc;
	}
	return rc;
}

struct cand {
	struct ofs_sid sid;
	struct ofs_summary sm;
	bool bad;                    /* found not to verify */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->sm.version < y->sm.version ? 1 : x->sm.version > y->sm.version ? -1 : 0;
}

int repair_ask(struct replicator *r, uint16_t op, struct ofs_oid oid, const struct ofs_sid *sids,
	       size_t n, struct ofs_summary *sm, int *rcs)
{
	struct wbuf body;
	int rc;

	wbuf_init(&body);
	wbuf_oid(&body, oid);
	rc = wbuf_error(&body);
	if (!rc) {
		struct replica_result *res = calloc(n ? n : 1, sizeof(*res));
		rc = res ? replica_forward(r, op, body.data, body.len, sids, n, res) : -ENOMEM;
		for (size_t i = 0; !rc && i < n; i++) {
			rcs[i] = res[i].rc;
			if (!res[i].rc)
				rcs[i] = proto_decode_summary(res[i].body, res[i].len, &sm[i]);
		}
		for (size_t i = 0; res && i < n; i++)
			free(res[i].body);
		free(res);
	}
	wbuf_free(&body);
	return rc;
}

/* Tell the other copies' servers that this copy is current at version, so
 * that their stale records of it go. Only once it is: after the install
 * committed (durably) - a record cleared for an install then refused would
 * leave the copy here behind with no other server's account of it. A
 * clear that does not arrive leaves a record that the holder's sweep
 * settles by asking this copy (recover.c; docs/design.md, "Repair"). */
static void clear_records(struct replicator *r, struct ofs_oid oid, struct ofs_sid me,
			  uint64_t version, const struct ofs_sid *sids, size_t n)
{
	struct ofs_req q;
	struct wbuf body;

	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_STALE_CLEAR;
	q.oid = oid;
	q.sid = me;
	q.version = version;
	wbuf_init(&body);
	if (proto_encode_req(&body, &q) == 0) {
		struct replica_result *res = calloc(n ? n : 1, sizeof(*res));
		if (res && replica_forward(r, OFS_OP_STALE_CLEAR, body.data, body.len, sids, n, res) == 0)
			for (size_t i = 0; i < n; i++)
				free(res[i].body);
		free(res);
	}
	wbuf_free(&body);
}

/* Send READ of the piece at off (paced); its length in *len. */
static int send_read(struct replicator *r, struct ofs_sid sid, struct ofs_req *q, uint64_t off,
		     uint64_t size, repair_pace_fn pace, void *arg, struct replica_sent *sent,
		     struct replica_result *res, uint32_t *len)
{
	struct wbuf body;
	int rc;

	*len = size - off < FETCH_PIECE ? (uint32_t)(size - off) : FETCH_PIECE;
	if (pace && (rc = pace(*len, arg)) != 0)
		return rc;
	q->op = OFS_OP_READ;
	q->offset = off;
	q->length = *len;
	wbuf_init(&body);
	rc = proto_encode_req(&body, q);
	if (!rc) {
		replica_send(r, OFS_OP_READ, body.data, body.len, &sid, 1, sent, res);
		rc = 0;      /* (a send that failed is in res: replica_collect says) */
	}
	wbuf_free(&body);
	return rc;
}

/* Read the copy on src into an incoming copy here and swap it in. */
static int fetch_from(struct store *s, struct replicator *r, struct ofs_oid oid,
		      const struct cand *c, const char *tag, repair_pace_fn pace, void *arg,
		      uint64_t *bytes, const struct ofs_sid *others, size_t nothers)
{
	struct store_incoming *in = NULL;
	struct replica_result res;
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_req *q = calloc(1, sizeof(*q));
	struct ofs_summary after;
	struct ofs_digest mine;
	int rc;

	*bytes = 0;
	if (!a || !q) {
		rc = -ENOMEM;
		goto out;
	}
	q->op = OFS_OP_GETATTR;
	q->oid = oid;
	rc = call1(r, c->sid, q, &res);
	if (rc)
		goto out;
	rc = proto_decode_attr_reply(res.body, res.len, a);
	free(res.body);
	if (rc)
		goto out;
	if (a->version != c->sm.version || a->type != c->sm.type) {
		rc = -EAGAIN;                /* changed since its summary */
		goto out;
	}
	rc = store_incoming_begin(s, oid, a, &in);
	if (rc)
		goto out;
	if (a->type == OFS_OBJ_DFILE) {
		/* FETCH_DEPTH reads in flight: the source reads and verifies
		 * the next pieces while this one is written here. */
		struct replica_sent sent[FETCH_DEPTH];
		struct replica_result res2[FETCH_DEPTH];
		uint32_t lens[FETCH_DEPTH] = { 0 };
		bool inflight[FETCH_DEPTH] = { false };
		uint64_t next = 0;
		int cur = 0;
		for (int i = 0; i < FETCH_DEPTH && next < a->size && !rc; i++) {
			rc = send_read(r, c->sid, q, next, a->size, pace, arg, &sent[i], &res2[i], &lens[i]);
			inflight[i] = !rc;
			next += lens[i];
		}
		while (!rc && inflight[cur]) {
			struct rbuf rb;
			const uint8_t *p;
			uint32_t n;
			replica_collect(r, &sent[cur], &res2[cur]);
			inflight[cur] = false;
			rc = res2[cur].rc;
			if (!rc) {
				rbuf_init(&rb, res2[cur].body, res2[cur].len);
				n = rbuf_u32(&rb);
				p = rbuf_bytes(&rb, n);
				rc = rbuf_done(&rb);
				if (!rc && n != lens[cur])
					rc = -EIO;   /* shorter than its recorded size */
				if (!rc)
					rc = store_incoming_write(in, p, n);
				*bytes += n;
			}
			free(res2[cur].body);
			res2[cur].body = NULL;
			if (!rc && next < a->size) {
				rc = send_read(r, c->sid, q, next, a->size, pace, arg, &sent[cur],
					       &res2[cur], &lens[cur]);
				inflight[cur] = !rc;
				next += lens[cur];
			}
			cur = (cur + 1) % FETCH_DEPTH;
		}
		for (int i = 0; i < FETCH_DEPTH; i++) {
			if (inflight[i]) {
				replica_collect(r, &sent[i], &res2[i]);
				free(res2[i].body);
			}
		}
	} else {
		uint8_t last[OFS_MAX_KEY];
		size_t lastn = 0;
		bool more = true;
		while (more && !rc) {
			struct ofs_list_reader lr;
			const uint8_t *k, *v;
			size_t kn, vn;
			q->op = OFS_OP_KV_LIST;
			q->key = lastn ? last : NULL;
			q->key_len = lastn;
			q->max = OFS_MAX_LIST;
			rc = call1(r, c->sid, q, &res);
			if (rc)
				break;
			rc = proto_list_open_kv(&lr, res.body, res.len);
			while (!rc && proto_list_next_kv(&lr, &k, &kn, &v, &vn) == 1) {
				rc = store_incoming_kv(in, k, kn, v, vn);
				if (!rc && kn <= sizeof(last)) {
					memcpy(last, k, kn);
					lastn = kn;
				}
				*bytes += kn + vn;
			}
			more = lr.more;
			free(res.body);
		}
	}
	if (rc)
		goto out;
	/* The copy as fetched must be the copy the source holds now, and the
	 * one whose summary chose it. */
	q->op = OFS_OP_SUMMARY;
	rc = call1(r, c->sid, q, &res);
	if (rc)
		goto out;
	rc = proto_decode_summary(res.body, res.len, &after);
	free(res.body);
	if (!rc && (!after.present || after.version != a->version ||
		    !digest_eq(after.digest, c->sm.digest)))
		rc = -EAGAIN;
	if (!rc)
		rc = store_incoming_summary(in, &mine);
	if (!rc && !digest_eq(mine, c->sm.digest))
		rc = -OFS_ECHECKSUM;         /* what arrived is not what it records */
	if (!rc)
		rc = store_incoming_commit(in, tag);
	if (!rc)
		clear_records(r, oid, store_sid(s), a->version, others, nothers);
out:
	store_incoming_free(in);
	free(q);
	free(a);
	return rc;
}

/* The candidate servers: cands, or every server in the table. */
static int candidates(struct sidtab *t, struct ofs_sid me, const struct ofs_sid *cands,
		      size_t ncands, struct ofs_sid *out, size_t *n)
{
	*n = 0;
	if (ncands) {
		for (size_t i = 0; i < ncands && *n < MAX_CANDS; i++)
			if (!sid_eq(cands[i], me))
				out[(*n)++] = cands[i];
		return 0;
	}
	struct ofs_server *e = NULL;
	size_t ne = 0;
	int rc = sidtab_snapshot(t, &e, &ne);
	if (rc)
		return rc;
	for (size_t i = 0; i < ne && *n < MAX_CANDS; i++)
		if (!sid_eq(e[i].sid, me))
			out[(*n)++] = e[i].sid;
	free(e);
	return 0;
}

static void say(struct ofs_fetch_reply *out, uint8_t outcome, const struct cand *c,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(struct ofs_fetch_reply *out, uint8_t outcome, const struct cand *c,
		const char *fmt, ...)
{
	va_list ap;

	out->outcome = outcome;
	if (c) {
		out->source = c->sid;
		out->version = c->sm.version;
	}
	va_start(ap, fmt);
	vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
	va_end(ap);
}

/* Re-read candidate c on its server (VERIFY): c->bad unless it verifies
 * at version v with the digest its summary gave. */
static int verify_cand(struct replicator *r, struct ofs_oid oid, struct cand *c, uint64_t v)
{
	struct ofs_summary vs;
	int vrc, rc = repair_ask(r, OFS_OP_VERIFY, oid, &c->sid, 1, &vs, &vrc);

	if (rc)
		return rc;
	c->bad = !(vrc == 0 && vs.present && vs.checked && !vs.bad && vs.version == v &&
		   digest_eq(vs.digest, c->sm.digest));
	return 0;
}

static bool kv_type(const struct ofs_summary *local, const struct ofs_summary *first)
{
	uint8_t type = local->present ? local->type : first->type;
	return type == OFS_OBJ_METAFILE || type == OFS_OBJ_DIRECTORY || type == OFS_OBJ_DIRDATA;
}

/* The vote of the copies at version v (this one when it verifies, and
 * c[at..end) that VERIFY): 1 and *win when one content has more than
 * half the votes, 0 when none has, or an error. Copies that do not verify
 * are marked bad. */
static int kv_vote(struct replicator *r, struct ofs_oid oid, const struct ofs_summary *local,
		   bool local_ok, struct cand *c, size_t at, size_t end, uint64_t v,
		   struct ofs_digest *win)
{
	struct ofs_digest dig[MAX_CANDS + 1];
	unsigned votes[MAX_CANDS + 1], total = 0;
	size_t nd = 0;

	for (size_t i = at; i <= end; i++) {
		struct ofs_digest d;
		size_t j;
		if (i == end) {
			if (!local_ok || local->version != v)
				break;
			d = local->digest;
		} else {
			int rc = verify_cand(r, oid, &c[i], v);
			if (rc)
				return rc;
			if (c[i].bad)
				continue;
			d = c[i].sm.digest;
		}
		for (j = 0; j < nd && !digest_eq(dig[j], d); j++)
			;
		if (j == nd) {
			dig[nd] = d;
			votes[nd++] = 0;
		}
		votes[j]++;
		total++;
	}
	for (size_t j = 0; j < nd; j++) {
		if (2 * votes[j] > total) {
			*win = dig[j];
			return 1;
		}
	}
	return 0;
}

/* Tell each of sids that this copy of oid is current at version (their
 * stale records of it go, where their copy is not newer). */
void repair_tell_current(struct replicator *r, struct ofs_oid oid, struct ofs_sid me,
			 uint64_t version, const struct ofs_sid *sids, size_t n)
{
	clear_records(r, oid, me, version, sids, n);
}

int repair_drop_removed(struct store *s, struct sidtab *t, struct replicator *r,
			struct ofs_oid oid, const struct ofs_sid *named, size_t nnamed)
{
	struct ofs_sid all[MAX_CANDS];
	struct ofs_summary sm[MAX_CANDS];
	int rcs[MAX_CANDS], rc;
	size_t n = 0;
	char hex[OFS_OID_HEX];

	rc = candidates(t, store_sid(s), NULL, 0, all, &n);
	if (!rc && n)
		rc = repair_ask(r, OFS_OP_SUMMARY, oid, all, n, sm, rcs);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		if ((rcs[i] == 0 && sm[i].present) || (rcs[i] && rcs[i] != -OFS_ECORRUPT))
			return 0;            /* moved there, or one that did not answer
			                        may hold it */
	rc = store_drop_removed(s, oid);
	if (rc)
		return rc;
	oid_to_hex(oid, hex);
	log_warn("copy of %s here missed its removal (no other server holds it): removed here "
		 "too, its bytes kept in quarantine", hex);
	clear_records(r, oid, store_sid(s), UINT64_MAX, named, nnamed);
	return 1;
}

static int fetch_good(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		      const struct ofs_sid *cands, size_t ncands, unsigned flags, const char *tag,
		      repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out, int depth);

/* One reconcile at a time in this process: the lead's own catch-up and a
 * sibling's REPAIR_FETCH may ask at once. */
static pthread_mutex_t reconcile_mu = PTHREAD_MUTEX_INITIALIZER;

/* By version: the newest copy that verifies, this one or behind[i]
 * (whose summaries are bsm[i]); made this server's copy. */
static int reconcile_versions(struct store *s, struct replicator *r, struct ofs_oid oid,
			      const struct ofs_sid *behind, const struct ofs_summary *bsm,
			      size_t nb, const char *tag, repair_pace_fn pace, void *arg,
			      const struct ofs_sid *sids, size_t n, struct ofs_fetch_reply *out)
{
	struct ofs_summary local;
	struct cand c[MAX_CANDS];
	size_t nc = 0;
	int best = -1, rc = repair_verify(s, oid, &local);
	bool local_ok;
	char hex[OFS_OID_HEX];

	if (rc)
		return rc;
	local_ok = local.present && local.checked && !local.bad && !local.corrupt;
	for (size_t i = 0; i < nb && nc < MAX_CANDS; i++) {
		c[nc].sid = behind[i];
		c[nc].sm = bsm[i];
		rc = verify_cand(r, oid, &c[nc], bsm[i].version);
		if (rc)
			return rc;
		if (!c[nc].bad)
			nc++;
	}
	/* The newest version among the copies that verify; best: the copy
	 * to take (-1: this one). Two that differ there: a conflict. */
	uint64_t top = local_ok ? local.version : 0;
	bool any = local_ok, differ = false;
	struct ofs_digest topd = local.digest;
	for (size_t i = 0; i < nc; i++)
		if (!any || c[i].sm.version > top) {
			top = c[i].sm.version;
			any = true;
		}
	if (!any) {
		say(out, OFS_FETCH_NONE, NULL, "no copy is current and none verifies; nothing changed");
		return 0;
	}
	if (!(local_ok && local.version == top)) {
		for (size_t i = 0; i < nc && best < 0; i++)
			if (c[i].sm.version == top)
				best = (int)i;
		topd = c[best].sm.digest;
	}
	for (size_t i = 0; i < nc; i++)
		differ |= c[i].sm.version == top && !digest_eq(c[i].sm.digest, topd);
	if (differ) {
		say(out, OFS_FETCH_CONFLICT, NULL, "no copy is current, and copies that verify at "
		    "the newest version (%llu) differ; nothing changed", (unsigned long long)top);
		return 0;
	}
	if (best < 0) {
		rc = store_stale_del(s, oid, store_sid(s), UINT64_MAX);
		if (!rc)
			say(out, OFS_FETCH_RECONCILED, NULL, "no copy was current; this one is the "
			    "newest that verifies (version %llu): the others catch up from it",
			    (unsigned long long)top);
		if (!rc)
			out->version = top;
		return rc;
	}
	uint64_t bytes = 0;
	rc = fetch_from(s, r, oid, &c[best], tag, pace, arg, &bytes, sids, n);
	if (rc)
		return rc;
	sid_to_hex(c[best].sid, hex);
	say(out, OFS_FETCH_RECONCILED, &c[best], "no copy was current; fetched version %llu from "
	    "%s, the newest that verifies (%llu bytes): the others catch up from here",
	    (unsigned long long)top, hex, (unsigned long long)bytes);
	out->bytes = bytes;
	return 0;
}

/*
 * No copy is current: behind[0..nb) answered present and marked behind,
 * and so may this copy be (local_behind). The lead reconciles
 * (reconcile.h); a copy that is not the lead asks the lead to, then
 * catches up from it.
 */
static int reconcile(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		     const struct ofs_sid *sids, size_t n, const struct ofs_sid *behind,
		     const struct ofs_summary *bsm, size_t nb, bool local_behind, uint8_t type,
		     unsigned flags, const char *tag, repair_pace_fn pace, void *arg,
		     struct ofs_fetch_reply *out, int depth)
{
	struct ofs_sid all[MAX_CANDS + 1], me = store_sid(s), lead;
	size_t na = 0;
	char hex[OFS_OID_HEX];
	int rc;

	for (size_t i = 0; i < nb && na < MAX_CANDS; i++)
		all[na++] = behind[i];
	if (local_behind)
		all[na++] = me;
	lead = reconcile_lead(all, na);
	sid_to_hex(lead, hex);
	if (flags & OFS_FETCH_DRYRUN) {
		say(out, OFS_FETCH_WOULD, NULL, "no copy is current: would reconcile the %zu copies "
		    "on %s, the lead", na, hex);
		return 0;
	}
	if (!sid_eq(lead, me)) {
		struct ofs_fetch_reply lr;
		struct ofs_sid ask[OFS_MAX_REPLICAS];
		size_t nask = 0;
		if (depth > 0)
			return -EAGAIN;      /* the lead is not done: later */
		/* the lead compares every copy: this one too */
		ask[nask++] = me;
		for (size_t i = 0; i < n && nask < OFS_MAX_REPLICAS; i++)
			if (!sid_eq(sids[i], lead))
				ask[nask++] = sids[i];
		rc = repair_fetch_at(s, t, r, lead, oid, ask, nask, 0, 0, tag, NULL, NULL, &lr);
		if (rc)
			return rc;
		if (lr.outcome != OFS_FETCH_RECONCILED && lr.outcome != OFS_FETCH_GOOD &&
		    lr.outcome != OFS_FETCH_DONE) {
			*out = lr;           /* a conflict, say: left as it is */
			return 0;
		}
		rc = fetch_good(s, t, r, oid, sids, n, flags | OFS_FETCH_LOCALBAD, tag, pace, arg,
				out, depth + 1);
		if (!rc && lr.outcome == OFS_FETCH_RECONCILED &&
		    (out->outcome == OFS_FETCH_DONE || out->outcome == OFS_FETCH_GOOD)) {
			char was[sizeof(out->detail)];
			snprintf(was, sizeof(was), "%s", out->detail);
			say(out, OFS_FETCH_RECONCILED, NULL, "no copy was current: %s reconciled "
			    "them; %.180s", hex, was);
		}
		return rc;
	}
	pthread_mutex_lock(&reconcile_mu);
	rc = store_behind(s, oid);
	if (rc == 0) {
		/* reconciled meanwhile by another caller */
		pthread_mutex_unlock(&reconcile_mu);
		say(out, OFS_FETCH_GOOD, NULL, "reconciled meanwhile");
		return 0;
	}
	if (rc < 0) {
		pthread_mutex_unlock(&reconcile_mu);
		return rc;
	}
	if (type == OFS_OBJ_DIRDATA) {
		struct reconcile_result res;
		rc = reconcile_dirdata(s, r, oid, behind, nb, &res);
		if (!rc)
			say(out, res.conflict ? OFS_FETCH_CONFLICT : OFS_FETCH_RECONCILED, NULL, "%s",
			    res.detail);
	} else {
		rc = reconcile_versions(s, r, oid, behind, bsm, nb, tag, pace, arg, sids, n, out);
	}
	if (!rc && out->outcome == OFS_FETCH_RECONCILED) {
		/* No older than any copy by version: the copies that catch up
		 * from this one then clear every stale record of theirs. */
		uint64_t vmax = 0;
		for (size_t i = 0; i < nb; i++)
			vmax = bsm[i].version > vmax ? bsm[i].version : vmax;
		rc = store_version_at_least(s, oid, vmax);
		struct ofs_summary now;
		if (!rc && store_summary(s, oid, &now) == 0)
			out->version = now.version;
	}
	pthread_mutex_unlock(&reconcile_mu);
	if (!rc && out->outcome == OFS_FETCH_RECONCILED) {
		char oh[OFS_OID_HEX];
		oid_to_hex(oid, oh);
		log_warn("reconciled %s: %s", oh, out->detail);
	}
	return rc;
}

int repair_fetch(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		 const struct ofs_sid *cands, size_t ncands, unsigned flags, const char *tag,
		 repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out)
{
	return fetch_good(s, t, r, oid, cands, ncands, flags, tag, pace, arg, out, 0);
}

/* What the copies say of an object, gathered for one fetch_good. */
struct gathered {
	struct ofs_sid sids[MAX_CANDS];      /* the other servers asked */
	size_t n;
	struct ofs_summary local;            /* this copy */
	bool local_ok;                       /* present, current, verifies */
	struct cand c[MAX_CANDS];            /* current copies, newest first */
	size_t nc;
	struct ofs_sid behind[MAX_CANDS];    /* copies marked behind */
	struct ofs_summary bsm[MAX_CANDS];
	size_t nb;
	bool quiet;                          /* some server did not answer */
};

/* This copy's summary (re-read, unless known bad) and every other's. */
static int gather(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		  const struct ofs_sid *cands, size_t ncands, unsigned flags, struct gathered *g)
{
	struct ofs_summary sm[MAX_CANDS];
	int rcs[MAX_CANDS];
	int rc;

	memset(g, 0, sizeof(*g));
	rc = candidates(t, store_sid(s), cands, ncands, g->sids, &g->n);
	if (!rc && (flags & OFS_FETCH_LOCALBAD)) {
		/* Known bad (a scrub has just read it): its summary only. */
		rc = store_summary(s, oid, &g->local);
		if (rc == -ENOENT || rc == -OFS_ECORRUPT) {
			memset(&g->local, 0, sizeof(g->local));
			g->local.present = rc == -OFS_ECORRUPT;
			rc = 0;
		}
		g->local.checked = g->local.bad = true;
	} else if (!rc) {
		rc = repair_verify(s, oid, &g->local);
	}
	if (!rc && g->n)
		rc = repair_ask(r, OFS_OP_SUMMARY, oid, g->sids, g->n, sm, rcs);
	if (rc)
		return rc;
	for (size_t i = 0; i < g->n; i++) {
		if (rcs[i] == 0 && sm[i].present && !sm[i].behind && !sm[i].corrupt) {
			g->c[g->nc].sid = g->sids[i];
			g->c[g->nc].sm = sm[i];
			g->c[g->nc].bad = false;
			g->nc++;
		} else if (rcs[i] == 0 && sm[i].present && !sm[i].corrupt) {
			g->behind[g->nb] = g->sids[i];
			g->bsm[g->nb++] = sm[i];
		} else if (rcs[i] != 0 && rcs[i] != -OFS_ECORRUPT) {
			g->quiet = true;         /* no answer: it may hold the good copy */
		}
	}
	qsort(g->c, g->nc, sizeof(g->c[0]), cmp_cand);
	g->local_ok = g->local.present && !g->local.behind && !g->local.corrupt && !g->local.bad;
	return 0;
}

/* What one group of copies at the newest version left to do. */
enum group_verdict {
	GROUP_DONE,          /* out says what happened */
	GROUP_LOCAL_GOOD,    /* this copy is the good one */
	GROUP_NEXT,          /* none of these: the next older version */
};

/* Key-value parts differ at the top version: the copies that verify vote,
 * and a majority decides; a tie is a conflict, never a guess. */
static int group_vote(struct replicator *r, struct ofs_oid oid, struct gathered *g, size_t at,
		      size_t end, uint64_t v, struct ofs_fetch_reply *out, enum group_verdict *vd)
{
	struct ofs_digest win;
	int vr = kv_vote(r, oid, &g->local, g->local_ok, g->c, at, end, v, &win);

	if (vr < 0)
		return vr;
	if (vr == 0) {
		say(out, OFS_FETCH_CONFLICT, NULL, "the copies' key-value parts differ at version "
		    "%llu and no version of them has a majority; nothing changed",
		    (unsigned long long)v);
		*vd = GROUP_DONE;
		return 0;
	}
	if (g->local_ok && g->local.version == v && digest_eq(g->local.digest, win)) {
		say(out, OFS_FETCH_GOOD, NULL, "this copy agrees with the majority at version %llu",
		    (unsigned long long)v);
		*vd = GROUP_LOCAL_GOOD;
		return 0;
	}
	for (size_t i = at; i < end; i++)
		g->c[i].bad |= !digest_eq(g->c[i].sm.digest, win);
	*vd = GROUP_NEXT;            /* (the fetch takes the majority's) */
	return 0;
}

/* This copy verifies at the top version: it is good unless a differing
 * sibling verifies too (then: a conflict). */
static int group_local(struct replicator *r, struct ofs_oid oid, struct gathered *g, size_t at,
		       size_t end, uint64_t v, struct ofs_fetch_reply *out)
{
	char hex[OFS_OID_HEX];

	for (size_t i = at; i < end; i++) {
		struct ofs_summary vs;
		int vrc, rc;
		if (digest_eq(g->c[i].sm.digest, g->local.digest))
			continue;
		rc = repair_ask(r, OFS_OP_VERIFY, oid, &g->c[i].sid, 1, &vs, &vrc);
		if (rc)
			return rc;
		if (vrc == 0 && vs.present && vs.checked && !vs.bad &&
		    vs.version == v && !digest_eq(vs.digest, g->local.digest)) {
			sid_to_hex(g->c[i].sid, hex);
			say(out, OFS_FETCH_CONFLICT, NULL, "this copy and the one on %s both verify at "
			    "version %llu but differ; nothing changed", hex, (unsigned long long)v);
			return 1;
		}
	}
	say(out, OFS_FETCH_GOOD, NULL, "this copy verifies at version %llu", (unsigned long long)v);
	return 0;
}

/* Copies at the top version differ: verify each; more than one that
 * verifies and differs is a conflict (1), else the others are bad. */
static int group_verify(struct replicator *r, struct ofs_oid oid, struct gathered *g, size_t at,
			size_t end, uint64_t v, struct ofs_fetch_reply *out)
{
	struct ofs_digest gd[MAX_CANDS];
	size_t good = 0, pick = 0;

	for (size_t i = at; i < end; i++) {
		bool seen = false;
		int rc = verify_cand(r, oid, &g->c[i], v);
		if (rc)
			return rc;
		if (g->c[i].bad)
			continue;
		for (size_t j = 0; j < good; j++)
			seen |= digest_eq(gd[j], g->c[i].sm.digest);
		if (!seen) {
			gd[good++] = g->c[i].sm.digest;
			pick = i;
		}
	}
	if (good > 1) {
		say(out, OFS_FETCH_CONFLICT, NULL, "%zu copies verify at version %llu but differ; "
		    "nothing changed", good, (unsigned long long)v);
		return 1;
	}
	if (good == 1) {
		for (size_t i = at; i < end; i++)
			g->c[i].bad |= !digest_eq(g->c[i].sm.digest, g->c[pick].sm.digest);
	}
	return 0;
}

/* Fetch the first good copy of the group; GROUP_NEXT when none was. */
static int group_fetch(struct store *s, struct replicator *r, struct ofs_oid oid,
		       struct gathered *g, size_t at, size_t end, uint64_t v, unsigned flags,
		       const char *tag, repair_pace_fn pace, void *arg,
		       struct ofs_fetch_reply *out, enum group_verdict *vd)
{
	char hex[OFS_OID_HEX];

	*vd = GROUP_DONE;
	for (size_t i = at; i < end; i++) {
		uint64_t bytes = 0;
		int rc;
		if (g->c[i].bad)
			continue;
		sid_to_hex(g->c[i].sid, hex);
		if (flags & OFS_FETCH_DRYRUN) {
			say(out, OFS_FETCH_WOULD, &g->c[i], "would fetch version %llu from %s",
			    (unsigned long long)v, hex);
			return 0;
		}
		rc = fetch_from(s, r, oid, &g->c[i], tag, pace, arg, &bytes, g->sids, g->n);
		if (rc == 0) {
			say(out, OFS_FETCH_DONE, &g->c[i], "fetched version %llu from %s (%llu bytes)",
			    (unsigned long long)v, hex, (unsigned long long)bytes);
			out->bytes = bytes;
			return 0;
		}
		if (rc != -OFS_ECHECKSUM && rc != -EIO)
			return rc;               /* unreachable, changed meanwhile, ... */
		g->c[i].bad = true;          /* it did not verify: the next one */
		oid_to_hex(oid, hex);
		log_warn("repair of %s: the copy on a sibling did not verify (%s)", hex,
			 ofs_strerror(rc));
	}
	*vd = GROUP_NEXT;
	return 0;
}

/* The copies at version v (g->c[at..end)): which is good, and fetch it. */
static int one_group(struct store *s, struct replicator *r, struct ofs_oid oid,
		     struct gathered *g, size_t at, size_t end, unsigned flags, const char *tag,
		     repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out,
		     enum group_verdict *vd)
{
	uint64_t v = g->c[at].sm.version;
	struct ofs_digest dig[MAX_CANDS];
	size_t ndig = 0;
	int rc;

	if (g->local_ok && g->local.version > v) {
		say(out, OFS_FETCH_GOOD, NULL, "this copy verifies and is the newest (version %llu)",
		    (unsigned long long)g->local.version);
		*vd = GROUP_LOCAL_GOOD;
		return 0;
	}
	for (size_t i = at; i < end; i++) {
		bool seen = false;
		for (size_t j = 0; j < ndig; j++)
			seen |= digest_eq(dig[j], g->c[i].sm.digest);
		if (!seen)
			dig[ndig++] = g->c[i].sm.digest;
	}
	if (kv_type(&g->local, &g->c[at].sm) &&
	    (ndig > 1 || (g->local_ok && g->local.version == v &&
			  !digest_eq(g->local.digest, g->c[at].sm.digest)))) {
		rc = group_vote(r, oid, g, at, end, v, out, vd);
		if (rc || *vd != GROUP_NEXT)
			return rc;
		ndig = 1;                /* the fetch below takes the majority's */
	} else if (g->local_ok && g->local.version == v) {
		rc = group_local(r, oid, g, at, end, v, out);
		*vd = rc == 1 ? GROUP_DONE : GROUP_LOCAL_GOOD;
		return rc < 0 ? rc : 0;
	}
	if (ndig > 1) {
		rc = group_verify(r, oid, g, at, end, v, out);
		if (rc) {
			*vd = GROUP_DONE;
			return rc < 0 ? rc : 0;
		}
	}
	return group_fetch(s, r, oid, g, at, end, v, flags, tag, pace, arg, out, vd);
}

/* No copy is current: reconcile them when some are behind (1: done, out
 * says; 0: not this case). */
static int none_current(struct store *s, struct sidtab *t, struct replicator *r,
			struct ofs_oid oid, struct gathered *g, unsigned flags, const char *tag,
			repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out, int depth)
{
	int lb = g->local.present && !g->local.corrupt ? store_behind(s, oid) : 0;
	int rc;

	if (lb < 0)
		return lb;
	if (lb == 1 && g->nb == 0 && !(flags & OFS_FETCH_DRYRUN)) {
		/* no other copy at all: it was removed while this one was away */
		rc = repair_drop_removed(s, t, r, oid, g->sids, g->n);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return -OFS_EUNREACHABLE;   /* another may hold it: later */
		say(out, OFS_FETCH_RECONCILED, NULL, "it was removed while this copy was away (no "
		    "other server holds it): removed here too, its bytes kept in quarantine");
		return 1;
	}
	if (lb != 1 && g->nb == 0)
		return 0;
	rc = reconcile(s, t, r, oid, g->sids, g->n, g->behind, g->bsm, g->nb, lb == 1,
		       g->local.present ? g->local.type : g->bsm[0].type, flags, tag, pace, arg,
		       out, depth);
	return rc < 0 ? rc : 1;
}

static int fetch_good(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		      const struct ofs_sid *cands, size_t ncands, unsigned flags, const char *tag,
		      repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out, int depth)
{
	struct gathered *g = malloc(sizeof(*g));
	enum group_verdict vd = GROUP_NEXT;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!g)
		return -ENOMEM;
	rc = gather(s, t, r, oid, cands, ncands, flags, g);
	if (!rc && g->nc == 0 && !g->local_ok && !g->quiet) {
		rc = none_current(s, t, r, oid, g, flags, tag, pace, arg, out, depth);
		if (rc) {
			free(g);
			return rc < 0 ? rc : 0;
		}
	}
	for (size_t at = 0, end; !rc && vd == GROUP_NEXT && at < g->nc; at = end) {
		for (end = at; end < g->nc && g->c[end].sm.version == g->c[at].sm.version; end++)
			;
		rc = one_group(s, r, oid, g, at, end, flags, tag, pace, arg, out, &vd);
	}
	if (!rc && vd == GROUP_NEXT) {
		if (g->local_ok) {
			say(out, OFS_FETCH_GOOD, NULL, "this copy verifies (version %llu)",
			    (unsigned long long)g->local.version);
			vd = GROUP_LOCAL_GOOD;
		} else if (g->quiet) {
			rc = -OFS_EUNREACHABLE;  /* a copy that did not answer may be good */
		} else {
			say(out, OFS_FETCH_NONE, NULL, "no copy verifies (%zu other cop%s compared); "
			    "nothing changed", g->nc, g->nc == 1 ? "y" : "ies");
		}
	}
	if (!rc && vd == GROUP_LOCAL_GOOD) {
		out->version = g->local.version;
		if (!(flags & OFS_FETCH_DRYRUN))
			clear_records(r, oid, store_sid(s), g->local.version, g->sids, g->n);
	}
	free(g);
	return rc;
}

int repair_fetch_at(struct store *s, struct sidtab *t, struct replicator *r,
		    struct ofs_sid target, struct ofs_oid oid, const struct ofs_sid *cands,
		    size_t ncands, unsigned flags, uint64_t rate, const char *tag,
		    repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out)
{
	struct replica_result res;
	struct ofs_req *q;
	int rc;

	if (sid_eq(target, store_sid(s)))
		return repair_fetch(s, t, r, oid, cands, ncands, flags, tag, pace, arg, out);
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->op = OFS_OP_REPAIR_FETCH;
	q->oid = oid;
	q->flags = flags;
	q->rate = rate;
	q->ncands = (uint8_t)(ncands < OFS_MAX_REPLICAS ? ncands : OFS_MAX_REPLICAS);
	memcpy(q->cands, cands, q->ncands * sizeof(cands[0]));
	snprintf(q->reason, sizeof(q->reason), "%s", tag);
	rc = call1(r, target, q, &res);
	free(q);
	if (rc)
		return rc;
	rc = proto_decode_fetch_reply(res.body, res.len, out);
	free(res.body);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int repair_pace_rate(uint64_t bytes, void *arg)
{
	struct repair_pacer *p = arg;
	double due, wait;

	if (!p->rate)
		return 0;
	if (p->t0 == 0)
		p->t0 = now_s();
	due = p->t0 + (double)p->bytes / (double)p->rate;
	wait = due - now_s();
	if (wait > 0) {
		struct timespec ts = { .tv_sec = (time_t)wait,
				       .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9) };
		nanosleep(&ts, NULL);
	}
	p->bytes += bytes;
	return 0;
}

int repair_stale_clear(struct store *s, struct ofs_oid oid, struct ofs_sid sid, uint64_t version)
{
	return store_stale_del(s, oid, sid, version);
}
