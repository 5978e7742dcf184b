/*
 * scrub_join.c - the namespace check as a join (see scrub_impl.h).
 *
 * A metadata-only scrub of every object, from the start, checks what is
 * common - copies that agree, pointers whose objects point back - by
 * streams, not by a question per record:
 *
 *   walk   Each server walks its records once (the host's cursor walk) and
 *          reads its copies' summaries a batch at a time. The summary of
 *          a copy another server leads goes to that lead (channel SUM);
 *          each forward pointer of an object this server is primary of -
 *          a stripe, a dirdata, an entry - goes to the child's primary as
 *          a tuple (child, the object holding the pointer, owner, slot,
 *          name digest, type) (channel FWD). Each channel ends with the
 *          count sent on it.
 *   meet   When every peer's streams have ended (or stopped: a peer
 *          silent for JOIN_WAIT_S is left), each server meets them with
 *          its own records, both in OID order: a copy it leads agrees
 *          when every sibling sent the same summary; a tuple meets its
 *          partner when the child's record here names that owner, slot,
 *          name and type - which is the object's own owner check passed
 *          (its owner points at it) as well as the pointer's.
 *   return The tuples without a partner, and the summaries sent to a lead
 *          that does not hold the object as lead, go back to their sender
 *          (channel RET), with an acknowledgement of how many of the
 *          sender's records were met (channel ACK).
 *   redo   Every object whose check did not close - a copy that differs or
 *          is missing, a tuple without its partner, an owner that did not
 *          point back, a record that does not decode, a copy behind, a
 *          server out of service, a peer that did not answer or whose
 *          acknowledgement does not count every record it was sent - is
 *          checked the way every object used to be (scrub_one: questions,
 *          settling, repair), which finds and reports. The join itself
 *          reports nothing, so it adds no finding the old check would not
 *          make; it only spares the questions for what agrees.
 *
 * A task run again (a restart, a retry) has a new epoch: its peers stop
 * believing its records (mailbox.h) and redo what depended on them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "lib/checksum.h"
#include "scrubber/scrub_impl.h"
#include "server/mailbox.h"

enum { CH_SUM, CH_FWD, CH_RET, CH_ACK, CH_N };

#define SUM_LEN (OFS_OID_LEN + 8 + 8 + OFS_DIGEST_LEN + 1)
#define FWD_LEN (3 * OFS_OID_LEN + 4 + OFS_DIGEST_LEN + 1 + 1)
#define RET_LEN OFS_OID_LEN
#define ACK_LEN 16
static const uint32_t reclen[CH_N] = { SUM_LEN, FWD_LEN, RET_LEN, ACK_LEN };

#define NO_STRIPE 0xffffffffu
#define NO_TYPE 0xffu
#define F_NAME 1u                     /* FWD flags: the name is judged */
#define S_PRESENT 1u                  /* SUM flags */
#define S_BEHIND 2u
#define S_CORRUPT 4u

/* jobj flags */
#define J_LEAD 1u                     /* this server compares its copies */
#define J_PRIM 2u                     /* this server is its primary */
#define J_ASK 4u                      /* its owner must point back (BRO_ASK) */
#define J_MET 8u                      /* ... and a tuple showed it does */
#define J_REDO 16u                    /* checked the old way at the end */
#define J_SENT 32u                    /* its summary went to its lead */

/* One object copy walked here. */
struct jobj {
	struct ofs_oid oid;
	struct ofs_oid owner;             /* J_ASK: its back reference */
	struct ofs_digest name;           /* ... entry name's digest */
	struct ofs_digest digest;         /* J_LEAD: its summary */
	uint64_t version, size;
	uint64_t kids;                    /* bit p: a pointer of it went to peer p */
	uint64_t sibs;                    /* J_LEAD: bit p: peer p holds a sibling */
	uint32_t stripe;
	uint8_t flags, type;
	uint8_t lead;                     /* J_SENT: the peer it went to */
};

struct jpeer {
	struct ofs_sid sid;
	struct wbuf out[CH_N];            /* records not yet sent */
	uint64_t sent[CH_N];              /* records sent (or queued) */
	uint64_t met_sum, met_fwd;        /* its records this server took */
	bool failed;                      /* a send to it failed */
	bool ended1;                      /* it ended its walk's channels whole */
	bool ok;                          /* its acknowledgement counts all */
};

/* The server table as a batch sees it: each server's state and its place
 * in the join (-1: not in it), looked up once per SID of an object. */
struct sidmap {
	uint64_t k0, k1;                  /* the SID's bytes */
	uint8_t state;
	int8_t peer;
};

struct join {
	struct jpeer p[JOIN_MAX_PEERS];
	struct sidmap *map;
	size_t nmap;
	size_t np, me;
	uint64_t epoch;
	struct jobj *o;
	size_t no, capo;
	struct wbuf self;                 /* FWD tuples to this server itself */
	uint64_t nself;
	uint64_t redone, met;             /* (the log line) */
	double t0;                        /* when the walk began (task_now) */
};

/* ---- records ------------------------------------------------------------- */

static void put_sum(struct wbuf *w, struct ofs_oid oid, const struct ofs_summary *sm)
{
	wbuf_oid(w, oid);
	wbuf_u64(w, sm->version);
	wbuf_u64(w, sm->size);
	wbuf_digest(w, sm->digest);
	wbuf_u8(w, (uint8_t)((sm->present ? S_PRESENT : 0) | (sm->behind ? S_BEHIND : 0) |
			     (sm->corrupt ? S_CORRUPT : 0)));
}

struct fwd {
	struct ofs_oid child, from, owner;
	uint32_t stripe;
	struct ofs_digest name;
	uint8_t type, flags;
	uint8_t peer;                     /* who sent it (np: this server) */
};

static void put_fwd(struct wbuf *w, const struct fwd *f)
{
	wbuf_oid(w, f->child);
	wbuf_oid(w, f->from);
	wbuf_oid(w, f->owner);
	wbuf_u32(w, f->stripe);
	wbuf_digest(w, f->name);
	wbuf_u8(w, f->type);
	wbuf_u8(w, f->flags);
}

static int get_fwd(struct rbuf *r, struct fwd *f)
{
	f->child = rbuf_oid(r);
	f->from = rbuf_oid(r);
	f->owner = rbuf_oid(r);
	f->stripe = rbuf_u32(r);
	f->name = rbuf_digest(r);
	f->type = rbuf_u8(r);
	f->flags = rbuf_u8(r);
	return rbuf_error(r);
}

struct sum {
	struct ofs_oid oid;
	uint64_t version, size;
	struct ofs_digest digest;
	uint8_t flags, peer;
};

static int get_sum(struct rbuf *r, struct sum *s)
{
	s->oid = rbuf_oid(r);
	s->version = rbuf_u64(r);
	s->size = rbuf_u64(r);
	s->digest = rbuf_digest(r);
	s->flags = rbuf_u8(r);
	return rbuf_error(r);
}

/* ---- sending --------------------------------------------------------------- */

/* Send peer p's records on channel c (end: then the channel's end). */
static void send_ch(struct scrub_task *k, struct jpeer *p, unsigned c, bool end)
{
	struct ofs_req q;
	struct wbuf body;

	if (p->failed) {
		wbuf_free(&p->out[c]);
		wbuf_init(&p->out[c]);
		return;
	}
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_JOIN;
	q.task.job = task_job(k->t);
	q.epoch = k->j->epoch;
	q.sid = store_sid(k->sc->s);
	q.reclen = reclen[c];
	for (int last = 0; !last && !p->failed;) {
		struct replica_result res;
		size_t off = 0;
		if (p->out[c].len) {
			q.flags = c;
			q.data = p->out[c].data;
			q.data_len = p->out[c].len;
			off = p->out[c].len;
		} else if (end) {
			q.flags = c | OFS_JOIN_END;
			q.data = NULL;
			q.data_len = 0;
			q.count = p->sent[c];
			last = 1;
		} else {
			break;
		}
		wbuf_init(&body);
		memset(&res, 0, sizeof(res));
		if (wbuf_error(&p->out[c]) || proto_encode_req(&body, &q) != 0 ||
		    replica_forward(k->sc->r, OFS_OP_JOIN, body.data, body.len, &p->sid, 1, &res) != 0 ||
		    res.rc != 0)
			p->failed = true;
		free(res.body);
		wbuf_free(&body);
		p->out[c].len -= off;        /* (all of it: one frame's worth at most) */
	}
}

/* Queue a record for peer p on channel c; sent when a frame's worth is
 * queued. */
static struct wbuf *queue(struct scrub_task *k, size_t p, unsigned c)
{
	struct jpeer *pe = &k->j->p[p];

	if (pe->out[c].len + reclen[c] > OFS_JOIN_MAX_BYTES)
		send_ch(k, pe, c, false);
	pe->sent[c]++;
	return &pe->out[c];
}

/* ---- the walk -------------------------------------------------------------- */

static long peer_of(const struct join *j, struct ofs_sid sid)
{
	for (size_t i = 0; i < j->np; i++)
		if (sid_eq(j->p[i].sid, sid))
			return (long)i;
	return -1;
}

static void sid_key(struct ofs_sid s, uint64_t *k0, uint64_t *k1)
{
	_Static_assert(sizeof(s.b) == 16, "a SID is 16 bytes");
	memcpy(k0, s.b, 8);
	memcpy(k1, s.b + 8, 8);
}

/* The batch's view of the server table (from scrub_take_states). */
static void map_states(struct scrub_task *k)
{
	struct join *j = k->j;
	struct sidmap *m = k->nstates ? realloc(j->map, k->nstates * sizeof(*m)) : j->map;

	j->nmap = 0;
	if (!m)
		return;
	j->map = m;
	for (size_t i = 0; i < k->nstates; i++) {
		sid_key(k->states[i].sid, &m[i].k0, &m[i].k1);
		m[i].state = k->states[i].state;
		m[i].peer = (int8_t)peer_of(j, k->states[i].sid);
	}
	j->nmap = k->nstates;
}

/* sid's place in the join when it is in service (else -1). */
static long in_join(const struct join *j, struct ofs_sid sid)
{
	uint64_t k0, k1;

	sid_key(sid, &k0, &k1);
	for (size_t i = 0; i < j->nmap; i++)
		if (j->map[i].k0 == k0 && j->map[i].k1 == k1)
			return j->map[i].state == OFS_SERVER_OUT ? -1 : j->map[i].peer;
	return -1;
}

static struct jobj *jobj_new(struct join *j, struct ofs_oid oid)
{
	struct jobj *o;

	if (j->no == j->capo) {
		size_t cap = j->capo ? j->capo * 2 : 4096;
		struct jobj *n = realloc(j->o, cap * sizeof(*n));
		if (!n)
			return NULL;
		j->o = n;
		j->capo = cap;
	}
	o = &j->o[j->no++];
	memset(o, 0, sizeof(*o));
	o->oid = oid;
	return o;
}

/* A forward pointer of o (walked object from) to child, expecting e. */
static void emit_fwd(struct scrub_task *k, struct jobj *o, struct ofs_oid from,
		     const struct ofs_handle *child, const struct br_expect *e)
{
	struct join *j = k->j;
	struct fwd f;
	long p = child->nsids ? in_join(j, child->sids[0]) : -1;

	/* (a copy out of service: check_pointer_sids; its primary not in the
	 * join: nobody to meet it) */
	for (uint8_t i = 1; i < child->nsids && i < OFS_MAX_REPLICAS && p >= 0; i++)
		if (in_join(j, child->sids[i]) < 0)
			p = -1;
	if (p < 0) {
		o->flags |= J_REDO;
		return;
	}
	memset(&f, 0, sizeof(f));
	f.child = child->oid;
	f.from = from;
	f.owner = e->owner;
	f.stripe = e->stripe >= 0 ? (uint32_t)e->stripe : NO_STRIPE;
	if (e->name) {
		f.name = checksum_buf(e->name, strlen(e->name));
		f.flags |= F_NAME;
	}
	f.type = e->type >= 0 ? (uint8_t)e->type : NO_TYPE;
	if ((size_t)p == j->me) {
		put_fwd(&j->self, &f);
		j->nself++;
		return;
	}
	put_fwd(queue(k, (size_t)p, CH_FWD), &f);
	o->kids |= 1ull << p;
}

struct entry_walk {
	struct scrub_task *k;
	struct jobj *o;
	const struct task_obj *w;
	bool prim;
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
};

static int walk_entry(const void *key, size_t kn, const void *v, size_t vn, void *arg)
{
	struct entry_walk *ew = arg;
	char name[OFS_NAME_MAX + 1];
	struct ofs_dirent d;
	struct br_expect e;

	if (kn > sizeof(ew->last)) {
		ew->o->flags |= J_REDO;      /* (not a key the store writes) */
		return 1;
	}
	memcpy(ew->last, key, kn);
	ew->lastn = kn;
	if (rec_decode_dirent(v, vn, &d) != 0 || kn > OFS_NAME_MAX) {
		ew->o->flags |= J_REDO;      /* record_corrupt: said by scrub_one */
		return 0;
	}
	if (!ew->prim)
		return 0;
	memcpy(name, key, kn);
	name[kn] = '\0';
	br_expect_entry(&ew->w->a, name, &d, &e);
	emit_fwd(ew->k, ew->o, ew->w->oid, &d.handle, &e);
	return 0;
}

/* A dirdata's entries: each must decode (every copy), and each is a
 * forward pointer (its primary). */
static void walk_entries(struct scrub_task *k, struct jobj *o, const struct task_obj *w, bool prim)
{
	struct entry_walk ew = { .k = k, .o = o, .w = w, .prim = prim };
	bool more = true;
	int rc = 0;

	while (more && !rc)
		rc = store_kv_list(k->sc->s, w->oid, ew.lastn ? ew.last : NULL, ew.lastn,
				   OFS_MAX_LIST, walk_entry, &ew, &more);
	if (rc)
		o->flags |= J_REDO;
}

/* One walked object copy, its summary sm read with the batch's. */
static void walk_one(struct scrub_task *k, const struct task_obj *w, const struct ofs_summary *sm)
{
	struct join *j = k->j;
	struct jobj *o = jobj_new(j, w->oid);
	long lead = -1;
	bool prim;

	if (!o) {
		k->join_failed = true;
		return;
	}
	if (w->decode_rc || !sm->present || sm->behind || sm->corrupt || w->a.nsids == 0) {
		o->flags |= J_REDO;
		return;
	}
	o->type = w->a.type;
	/* (every copy in the join, so its lead is the first: scrub_lead_of) */
	for (uint8_t i = 0; i < w->a.nsids; i++) {
		long p = in_join(j, w->a.sids[i]);
		if (p < 0)
			o->flags |= J_REDO;  /* (a copy out of service or not in the join) */
		else if (i == 0)
			lead = p;
		else
			o->sibs |= 1ull << p;
	}
	if ((size_t)lead == j->me) {
		o->flags |= J_LEAD;
		o->version = sm->version;
		o->size = sm->size;
		o->digest = sm->digest;
	} else if (!(o->flags & J_REDO)) {
		put_sum(queue(k, (size_t)lead, CH_SUM), w->oid, sm);
		o->flags |= J_SENT;
		o->lead = (uint8_t)lead;
	}
	prim = lead >= 0 && (size_t)lead == j->me;
	if (prim) {
		o->flags |= J_PRIM;
		if (br_judge_owner(&w->a, scrub_young(k->sc, &w->a), NULL) == BRO_ASK) {
			o->flags |= J_ASK;
			o->owner = w->a.backref.owner;
			o->stripe = w->a.backref.stripe;
			o->name = checksum_buf(w->a.backref.name, strlen(w->a.backref.name));
		}
		if (w->a.type == OFS_OBJ_METAFILE || w->a.type == OFS_OBJ_DIRECTORY) {
			for (uint16_t i = 0; i < w->a.nparts; i++) {
				struct br_expect e;
				if (br_expect_part(&w->a, w->oid, i, &e) == 0)
					emit_fwd(k, o, w->oid, &w->a.parts[i], &e);
				else
					o->flags |= J_REDO;
			}
		}
	}
	if (w->a.type == OFS_OBJ_DIRDATA)
		walk_entries(k, o, w, prim);
}

/* The batch's summaries: each record as the walk read it, with its
 * content digest read by cursor steps (store_content_many). */
static int batch_summaries(struct scrub_task *k, const struct task_obj *w, size_t nw,
			   struct ofs_summary *sm)
{
	struct ofs_oid *oids = malloc(nw * sizeof(*oids));
	struct ofs_digest *d = malloc(nw * sizeof(*d));
	uint64_t *size = malloc(nw * sizeof(*size));
	uint8_t *type = malloc(nw);
	bool *bad = malloc(nw * sizeof(*bad));
	size_t n = 0;
	int rc = 0;

	if (!oids || !d || !size || !type || !bad)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < nw; i++) {
		memset(&sm[i], 0, sizeof(sm[i]));
		if (w[i].decode_rc) {
			sm[i].present = sm[i].corrupt = true;
			continue;
		}
		oids[n] = w[i].oid;
		size[n] = w[i].a.size;
		type[n++] = w[i].a.type;
	}
	if (!rc && n)
		rc = store_content_many(k->sc->s, oids, size, type, n, d, bad);
	for (size_t i = 0, x = 0; !rc && i < nw; i++) {
		if (w[i].decode_rc)
			continue;
		sm[i].present = true;
		sm[i].version = w[i].a.version;
		sm[i].size = w[i].a.size;
		sm[i].digest = d[x];
		sm[i].corrupt = bad[x++];
		rc = store_behind(k->sc->s, w[i].oid);
		sm[i].behind = rc == 1;
		rc = rc < 0 ? rc : 0;
	}
	free(bad);
	free(type);
	free(size);
	free(d);
	free(oids);
	return rc;
}

void scrub_join_batch(struct scrub_task *k, const struct task_obj *w, size_t nw)
{
	struct ofs_summary *sm = malloc(nw * sizeof(*sm));

	if (!sm || batch_summaries(k, w, nw, sm) != 0) {
		k->join_failed = true;
		free(sm);
		return;
	}
	scrub_take_states(k);
	map_states(k);
	for (size_t i = 0; i < nw && !k->join_failed; i++)
		walk_one(k, &w[i], &sm[i]);
	free(sm);
}

/* ---- waiting for the peers --------------------------------------------------- */

/* Wait until every peer (of those marked `ended1`, when only1) has
 * ended the channels in mask (or broke, or its send failed), or none of
 * them has said anything for JOIN_WAIT_S (not counting a pause). Then
 * with !only1, mark the peers that ended them whole (ended1). */
static int wait_peers(struct scrub_task *k, uint32_t mask, bool only1)
{
	struct join *j = k->j;
	struct mailbox_peer *mp = malloc(MAILBOX_MAX_PEERS * sizeof(*mp));
	double quiet_since = scrub_now(k);
	uint64_t seen = 0;
	size_t n = 0;
	int rc = 0;

	if (!mp)
		return -ENOMEM;
	for (;;) {
		double before = scrub_now(k);
		size_t left = 0;
		uint64_t seq;
		rc = task_hold(k->t);
		if (rc)
			break;
		if (scrub_now(k) - before > 0.5)
			quiet_since = scrub_now(k);   /* (paused: every task of the job was) */
		mailbox_peers(k->sc->mb, task_job(k->t), mp, MAILBOX_MAX_PEERS, &n, &seq);
		for (size_t p = 0; p < j->np; p++) {
			bool done = p == j->me || j->p[p].failed || (only1 && !j->p[p].ended1);
			for (size_t x = 0; x < n && !done; x++)
				if (sid_eq(mp[x].from, j->p[p].sid))
					done = mp[x].broken || (mp[x].ended & mask) == mask;
			left += !done;
		}
		if (!left)
			break;
		if (seq != seen) {
			seen = seq;
			quiet_since = scrub_now(k);
		} else if (scrub_now(k) - quiet_since > JOIN_WAIT_S) {
			log_info("job %llu: %zu server(s) said nothing for %d s; what they would "
				 "have told is checked the old way", (unsigned long long)task_job(k->t),
				 left, JOIN_WAIT_S);
			break;
		}
		mailbox_wait(k->sc->mb, seq, 100);
	}
	for (size_t p = 0; !rc && !only1 && p < j->np; p++)
		for (size_t x = 0; x < n; x++)
			if (sid_eq(mp[x].from, j->p[p].sid))
				j->p[p].ended1 = !mp[x].broken && (mp[x].ended & mask) == mask;
	free(mp);
	return rc;
}

/* ---- the meeting ------------------------------------------------------------- */

static int cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, OFS_OID_LEN);
}

static struct jobj *jobj_find(struct join *j, struct ofs_oid oid)
{
	/* (walk order is OID order) */
	return j->no ? bsearch(&oid, j->o, j->no, sizeof(*j->o), cmp_oid) : NULL;
}

/* The merge: the walked object oid, looking on from *at (the OIDs asked
 * come in order, so the two sorted lists are each read once). */
static struct jobj *jobj_seek(struct join *j, size_t *at, struct ofs_oid oid)
{
	int c = 1;

	while (*at < j->no && (c = memcmp(j->o[*at].oid.b, oid.b, OFS_OID_LEN)) < 0)
		(*at)++;
	return *at < j->no && c == 0 ? &j->o[*at] : NULL;
}

/* Each of the n OIDs in b (sorted here) that names a walked object: to
 * be checked the old way. */
static void redo_all(struct join *j, uint8_t *b, size_t n)
{
	if (n)
		qsort(b, n, OFS_OID_LEN, cmp_oid);
	for (size_t i = 0, at = 0; i < n; i++) {
		struct ofs_oid oid;
		struct jobj *o;
		memcpy(oid.b, b + i * OFS_OID_LEN, OFS_OID_LEN);
		if ((o = jobj_seek(j, &at, oid)) != NULL)
			o->flags |= J_REDO;
	}
}

/* The records peer p (or this server, p == np) sent on channel c: a
 * malloc'd buffer of *n records, each checked for length. */
static uint8_t *take(struct scrub_task *k, size_t p, unsigned c, size_t *n)
{
	struct join *j = k->j;
	uint8_t *b = NULL;
	size_t len = 0;
	uint32_t rl = 0;

	*n = 0;
	mailbox_take(k->sc->mb, task_job(k->t), j->p[p].sid, c, &b, &len, &rl);
	if (b && (rl != reclen[c] || len % reclen[c])) {
		free(b);                 /* (not what this version sends) */
		return NULL;
	}
	*n = b ? len / reclen[c] : 0;
	return b;
}

static void ret_to(struct scrub_task *k, size_t p, struct ofs_oid from)
{
	struct join *j = k->j;
	struct jobj *o;

	if (p == j->me) {
		if ((o = jobj_find(j, from)) != NULL)
			o->flags |= J_REDO;
		return;
	}
	wbuf_oid(queue(k, p, CH_RET), from);
}

static int cmp_sum(const void *a, const void *b)
{
	return memcmp(((const struct sum *)a)->oid.b, ((const struct sum *)b)->oid.b, OFS_OID_LEN);
}

/* The siblings' summaries against the copies this server leads. */
static int meet_sums(struct scrub_task *k)
{
	struct join *j = k->j;
	struct sum *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t *agree;                  /* per walked object: the siblings that agree */

	for (size_t p = 0; p < j->np; p++) {
		size_t n;
		uint8_t *b = p == j->me ? NULL : take(k, p, CH_SUM, &n);
		struct rbuf r;
		if (!b)
			continue;
		if (nv + n > cap) {
			struct sum *x = realloc(v, (nv + n) * sizeof(*x));
			if (!x) {
				free(b);
				free(v);
				return -ENOMEM;
			}
			v = x;
			cap = nv + n;
		}
		rbuf_init(&r, b, n * SUM_LEN);
		for (size_t i = 0; i < n; i++)
			if (get_sum(&r, &v[nv]) == 0) {
				v[nv++].peer = (uint8_t)p;
				j->p[p].met_sum++;
			}
		free(b);
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_sum);
	agree = calloc(j->no ? j->no : 1, sizeof(*agree));
	if (!agree) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0, at = 0; i < nv; i++) {
		struct jobj *o = jobj_seek(j, &at, v[i].oid);
		if (!o || !(o->flags & J_LEAD)) {
			ret_to(k, v[i].peer, v[i].oid);   /* no lead here: its sender checks */
			continue;
		}
		if (v[i].flags == S_PRESENT && v[i].version == o->version && v[i].size == o->size &&
		    digest_eq(v[i].digest, o->digest))
			agree[o - j->o] |= 1ull << v[i].peer;   /* (a sender the handle
			                                           does not name counts for nothing) */
		else
			o->flags |= J_REDO;
	}
	for (size_t i = 0; i < j->no; i++)
		if ((j->o[i].flags & J_LEAD) && (agree[i] & j->o[i].sibs) != j->o[i].sibs)
			j->o[i].flags |= J_REDO;
	free(agree);
	free(v);
	return 0;
}

static int cmp_fwd(const void *a, const void *b)
{
	return memcmp(((const struct fwd *)a)->child.b, ((const struct fwd *)b)->child.b, OFS_OID_LEN);
}

/* Does the child's record here show the pointer right? */
static bool partners(const struct jobj *c, const struct fwd *f)
{
	return (c->flags & J_ASK) && oid_eq(c->owner, f->owner) &&
	       (f->stripe == NO_STRIPE || c->stripe == f->stripe) &&
	       (!(f->flags & F_NAME) || digest_eq(c->name, f->name)) &&
	       (f->type == NO_TYPE || c->type == f->type);
}

static int add_fwds(struct join *j, struct fwd **v, size_t *nv, const uint8_t *b, size_t n,
		    size_t p)
{
	struct fwd *x = realloc(*v, (*nv + n + 1) * sizeof(*x));
	struct rbuf r;

	if (!x)
		return -ENOMEM;
	*v = x;
	rbuf_init(&r, b, n * FWD_LEN);
	for (size_t i = 0; i < n; i++)
		if (get_fwd(&r, &x[*nv]) == 0) {
			x[(*nv)++].peer = (uint8_t)p;
			if (p != j->me)
				j->p[p].met_fwd++;
		}
	return 0;
}

/* The forward pointers sent here against the objects this server is
 * primary of. */
static int meet_fwds(struct scrub_task *k)
{
	struct join *j = k->j;
	struct fwd *v = NULL;
	size_t nv = 0;
	int rc = add_fwds(j, &v, &nv, j->self.data, j->nself, j->me);

	for (size_t p = 0; p < j->np && !rc; p++) {
		size_t n;
		uint8_t *b = p == j->me ? NULL : take(k, p, CH_FWD, &n);
		if (b)
			rc = add_fwds(j, &v, &nv, b, n, p);
		free(b);
	}
	if (rc) {
		free(v);
		return rc;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_fwd);
	for (size_t i = 0, at = 0; i < nv; i++) {
		struct jobj *c = jobj_seek(j, &at, v[i].child);
		if (c && (c->flags & J_PRIM) && partners(c, &v[i])) {
			c->flags |= J_MET;
			j->met++;
		} else {
			ret_to(k, v[i].peer, v[i].from);
		}
	}
	for (size_t i = 0; i < j->no; i++)
		if ((j->o[i].flags & J_ASK) && !(j->o[i].flags & J_MET))
			j->o[i].flags |= J_REDO;
	free(v);
	return 0;
}

/* Each peer's returns, and whether it took every record it was sent. */
static void take_returns(struct scrub_task *k)
{
	struct join *j = k->j;

	for (size_t p = 0; p < j->np; p++) {
		struct jpeer *pe = &j->p[p];
		size_t n = 0, na = 0;
		uint8_t *b, *a;
		struct rbuf r;
		if (p == j->me)
			continue;
		a = take(k, p, CH_ACK, &na);
		b = take(k, p, CH_RET, &n);
		if (a && na == 1) {
			rbuf_init(&r, a, ACK_LEN);
			pe->ok = rbuf_u64(&r) == pe->sent[CH_SUM] && rbuf_u64(&r) == pe->sent[CH_FWD] &&
				 !rbuf_error(&r) && !pe->failed;
		}
		if (pe->ok)
			redo_all(j, b, n);    /* (RET_LEN: an OID each) */
		free(a);
		free(b);
	}
	/* A peer that did not take all: what it would have checked is
	 * checked here. */
	for (size_t i = 0; i < j->no; i++) {
		struct jobj *o = &j->o[i];
		if ((o->flags & J_SENT) && !j->p[o->lead].ok)
			o->flags |= J_REDO;
		for (size_t p = 0; p < j->np && o->kids; p++)
			if ((o->kids >> p & 1) && !j->p[p].ok)
				o->flags |= J_REDO;
	}
}

/* ---- the task's side ------------------------------------------------------------ */

int scrub_join_begin(struct scrub_task *k)
{
	struct ofs_server *e = NULL;
	struct ofs_sid me = store_sid(k->sc->s);
	struct timespec ts;
	struct join *j;
	size_t ne = 0;
	int64_t now_ns;

	if (sidtab_snapshot(k->sc->t, &e, &ne) != 0)
		return 0;                    /* (no join: the old way) */
	if (!(j = calloc(1, sizeof(*j)))) {
		free(e);
		return -ENOMEM;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	for (size_t i = 0; i < ne; i++) {
		bool self = sid_eq(e[i].sid, me);
		if (e[i].state == OFS_SERVER_OUT ||
		    (!self && now_ns - e[i].last_seen_ns > (int64_t)JOIN_SEEN_S * 1000000000))
			continue;            /* (not heard from lately: not asked to join) */
		if (j->np == JOIN_MAX_PEERS) {
			free(e);
			free(j);
			return 0;            /* too many for a kids mask: the old way */
		}
		if (self)
			j->me = j->np;
		j->p[j->np++].sid = e[i].sid;
	}
	free(e);
	if (getrandom(&j->epoch, sizeof(j->epoch), 0) != (ssize_t)sizeof(j->epoch))
		j->epoch = (uint64_t)now_ns;
	wbuf_init(&j->self);
	k->j = j;
	j->t0 = scrub_now(k);
	return 0;
}

/* Redo one object the old way (as scrub_step does). */
static int redo_one(struct scrub_task *k, struct ofs_oid oid)
{
	struct task_obj *w = malloc(sizeof(*w));
	uint64_t bytes = 0;
	int rc;

	if (!w)
		return -ENOMEM;
	w->oid = oid;
	rc = store_getattr(k->sc->s, oid, &w->a);
	w->decode_rc = rc == -OFS_ECORRUPT ? rc : 0;
	if (rc == -ENOENT) {
		free(w);
		return 0;                    /* removed meanwhile */
	}
	if (!rc || rc == -OFS_ECORRUPT)
		rc = scrub_check_one(k, w, &bytes);
	free(w);
	return rc;
}

static void join_free(struct scrub_task *k)
{
	struct join *j = k->j;

	if (!j)
		return;
	for (size_t p = 0; p < j->np; p++)
		for (unsigned c = 0; c < CH_N; c++)
			wbuf_free(&j->p[p].out[c]);
	wbuf_free(&j->self);
	free(j->map);
	free(j->o);
	free(j);
	k->j = NULL;
}

void scrub_join_release(struct scrub_task *k)
{
	if (k->j && k->sc->mb)
		mailbox_drop(k->sc->mb, task_job(k->t));
	join_free(k);
}

/* The walk's records to their peers, their ends, and the meeting. */
static int meet(struct scrub_task *k)
{
	struct join *j = k->j;
	int rc;

	for (size_t p = 0; p < j->np; p++)
		if (p != j->me) {
			send_ch(k, &j->p[p], CH_SUM, true);
			send_ch(k, &j->p[p], CH_FWD, true);
		}
	rc = wait_peers(k, 1u << CH_SUM | 1u << CH_FWD, false);
	if (!rc)
		rc = meet_sums(k);
	if (!rc)
		rc = meet_fwds(k);
	for (size_t p = 0; p < j->np && !rc; p++) {
		struct jpeer *pe = &j->p[p];
		struct wbuf *a;
		if (p == j->me)
			continue;
		send_ch(k, pe, CH_RET, true);
		a = queue(k, p, CH_ACK);
		wbuf_u64(a, pe->met_sum);
		wbuf_u64(a, pe->met_fwd);
		send_ch(k, pe, CH_ACK, true);
	}
	if (!rc)
		rc = wait_peers(k, 1u << CH_RET | 1u << CH_ACK, true);
	if (!rc)
		take_returns(k);
	return rc;
}

int scrub_join_end(struct scrub_task *k)
{
	struct join *j = k->j;
	double t1 = scrub_now(k), t2;
	int rc = 0;

	if (k->join_failed) {
		/* (out of memory in the walk: every object the old way) */
		for (size_t i = 0; i < j->no; i++)
			j->o[i].flags |= J_REDO;
		log_warn("job %llu: the join could not keep its records; every object is "
			 "checked the old way", (unsigned long long)task_job(k->t));
	} else {
		rc = meet(k);
	}
	t2 = scrub_now(k);
	for (size_t i = 0; i < j->no && !rc; i++) {
		if (!(j->o[i].flags & J_REDO))
			continue;
		j->redone++;
		rc = task_hold(k->t);
		if (!rc)
			rc = redo_one(k, j->o[i].oid);
	}
	if (!rc)
		log_info("job %llu: join: %zu objects walked, %llu pointers met, %llu checked "
			 "the old way (walk %.3f s, meeting %.3f s, the rest %.3f s)",
			 (unsigned long long)task_job(k->t), j->no, (unsigned long long)j->met,
			 (unsigned long long)j->redone, t1 - j->t0, t2 - t1, scrub_now(k) - t2);
	return rc;
}
