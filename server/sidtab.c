/*
 * sidtab.c - the server-ID database in memory, persisted in the store
 * (see sidtab.h).
 *
 * Locks, always taken in this order: root_mu makes each change of the
 * root this server serves (the decision and its writes) one step, so two
 * threads cannot apply two decisions in the opposite order; put_mu orders
 * the writes of entries to the store (see persist); mu guards n, cap and
 * e and is never held while calling into the store.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "server/sidtab.h"

struct sidtab {
	struct store *s;
	struct ofs_sid self;
	pthread_mutex_t root_mu;
	pthread_mutex_t put_mu;
	pthread_mutex_t mu;
	size_t n, cap;            /* guarded by mu */
	struct ofs_server *e;     /* guarded by mu; e[0] is this server */
	bool refused;             /* guarded by root_mu: the cluster's root
	                             was refused (logged) */
	struct vouch *v;          /* guarded by mu: what peers said of other
	                             servers' operator's parts (sidtab_merge_from) */
	size_t nv, capv;
	struct ofs_sid lead_sid[SIDTAB_LEADS];     /* guarded by mu: addresses */
	char lead_addr[SIDTAB_LEADS][OFS_SERVER_ADDR_LEN]; /* relayed, to be asked */
	size_t nleads;
	struct ofs_sid silent_sid[SIDTAB_SILENT];  /* guarded by mu: peers whose */
	int64_t silent_ns[SIDTAB_SILENT];          /* ping went unanswered, when */
	size_t nsilent;
};

/* A peer said sid is at addr (not ours): keep it to ask (call locked). */
static void keep_lead(struct sidtab *t, struct ofs_sid sid, const char *addr)
{
	size_t i;

	for (i = 0; i < t->nleads; i++)
		if (sid_eq(t->lead_sid[i], sid) && strcmp(t->lead_addr[i], addr) == 0)
			return;
	if (t->nleads == SIDTAB_LEADS)
		i = sid.b[0] % SIDTAB_LEADS;      /* (full: one gives way) */
	else
		i = t->nleads++;
	t->lead_sid[i] = sid;
	snprintf(t->lead_addr[i], OFS_SERVER_ADDR_LEN, "%s", addr);
}

size_t sidtab_leads(struct sidtab *t, struct ofs_sid *sids, char (*addrs)[OFS_SERVER_ADDR_LEN],
		    size_t max)
{
	size_t n;

	pthread_mutex_lock(&t->mu);
	n = t->nleads < max ? t->nleads : max;
	for (size_t i = 0; i < n; i++) {
		sids[i] = t->lead_sid[i];
		snprintf(addrs[i], OFS_SERVER_ADDR_LEN, "%s", t->lead_addr[i]);
	}
	t->nleads -= n;
	memmove(t->lead_sid, t->lead_sid + n, t->nleads * sizeof(t->lead_sid[0]));
	memmove(t->lead_addr, t->lead_addr + n, t->nleads * sizeof(t->lead_addr[0]));
	pthread_mutex_unlock(&t->mu);
	return n;
}

/* One peer's word about another server's operator's part: the newest it
 * said, by its version and the SHA-256 of its encoding. In memory only. */
#define VOUCH_MAX 4096
#define VOUCHERS 2                /* distinct peers whose word is taken */
struct vouch {
	struct ofs_sid about, by;
	uint64_t version;
	uint8_t h[32];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A version newer than old: the wall clock in ns, or old + 1 (a clock
 * stepped back never makes a version go down). */
static uint64_t next_version(uint64_t old)
{
	uint64_t now = (uint64_t)now_ns();

	return now > old ? now : old + 1;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static struct ofs_server *find(struct sidtab *t, struct ofs_sid sid)
{
	for (size_t i = 0; i < t->n; i++)
		if (sid_eq(t->e[i].sid, sid))
			return &t->e[i];
	return NULL;
}

static int add(struct sidtab *t, const struct ofs_server *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct ofs_server *p;
		if (cap > OFS_MAX_SERVERS)
			cap = OFS_MAX_SERVERS;
		if (t->n == cap)
			return -OFS_ETOOBIG;
		p = realloc(t->e, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->e = p;
		t->cap = cap;
	}
	t->e[t->n++] = *e;
	return 0;
}

struct load {
	struct sidtab *t;
	struct ofs_server was;     /* our own entry as the store remembers it */
	bool found;
};

static int load_one(const struct ofs_server *e, void *arg)
{
	struct load *l = arg;

	if (sid_eq(e->sid, l->t->self)) {
		l->was = *e;
		l->found = true;
		return 0;
	}
	if (find(l->t, e->sid))
		return 0;
	return add(l->t, e);
}

/*
 * An entry has two parts, each with its own version and its own writer,
 * so that neither can undo the other's change:
 *   the operator's part - state, weight, attributes; version - is set by
 *     any server on an operator's request (sidtab_set);
 *   the server's own part - address, root, root birth, root_version;
 *     self_version - is written only by the server itself (at every start,
 *     and when it takes another root or another SID list for it).
 * Each part merges newest-version-wins; equal versions: the larger
 * encoding of the part, so every server settles on the same one.
 */
enum part { PART_OPERATOR, PART_SELF };

static void encode_part(struct wbuf *w, const struct ofs_server *e, enum part p)
{
	if (p == PART_OPERATOR) {
		uint8_t n = e->nattrs > OFS_SERVER_ATTRS ? OFS_SERVER_ATTRS : e->nattrs;
		wbuf_u8(w, e->state);
		wbuf_u32(w, e->weight_milli);
		wbuf_u8(w, n);
		for (uint8_t i = 0; i < n; i++)
			wbuf_str(w, e->attrs[i]);
	} else {
		wbuf_str(w, e->address);
		wbuf_handle(w, &e->root);
		wbuf_i64(w, e->root_birth_ns);
		wbuf_u64(w, e->root_version);
	}
}

/* Compare what two wbufs hold: the shorter first, then bytewise. */
static int cmp_wbuf(const struct wbuf *a, const struct wbuf *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->len ? memcmp(a->data, b->data, a->len) : 0;
}

/* Compare one part of two entries: by its version, then its encoding.
 * (An encoding that could not be made compares as empty: both sides
 * would fail alike.) */
static int cmp_part(const struct ofs_server *a, const struct ofs_server *b, enum part p)
{
	uint64_t va = p == PART_OPERATOR ? a->version : a->self_version;
	uint64_t vb = p == PART_OPERATOR ? b->version : b->self_version;
	struct wbuf wa, wb;
	int r;

	if (va != vb)
		return va < vb ? -1 : 1;
	wbuf_init(&wa);
	wbuf_init(&wb);
	encode_part(&wa, a, p);
	encode_part(&wb, b, p);
	r = cmp_wbuf(&wa, &wb);
	wbuf_free(&wa);
	wbuf_free(&wb);
	return r;
}

/* Compare two SID lists of one root by their encoding. */
static int cmp_handle(const struct ofs_handle *a, const struct ofs_handle *b)
{
	struct wbuf wa, wb;
	int r;

	wbuf_init(&wa);
	wbuf_init(&wb);
	wbuf_handle(&wa, a);
	wbuf_handle(&wb, b);
	r = cmp_wbuf(&wa, &wb);
	wbuf_free(&wa);
	wbuf_free(&wb);
	return r;
}

static bool same_handle(const struct ofs_handle *a, const struct ofs_handle *b)
{
	return cmp_handle(a, b) == 0;
}

/* True when e serves root oid born at birth_ns. */
static bool serves(const struct ofs_server *e, struct ofs_oid oid, int64_t birth_ns)
{
	return !oid_is_zero(e->root.oid) && oid_eq(e->root.oid, oid) && e->root_birth_ns == birth_ns;
}

/* True when a's SID list of the root both serve is newer than b's: a
 * larger root_version (equal: the larger encoding, so all settle on one). */
static bool newer_list(const struct ofs_server *a, const struct ofs_server *b)
{
	if (a->root_version != b->root_version)
		return a->root_version > b->root_version;
	return cmp_handle(&a->root, &b->root) > 0;
}

/*
 * Write sid's entry to the store as it is now. put_mu orders the writes:
 * each copies the entry after the change that asked for it, so the last
 * write holds the newest state whichever thread changed it last.
 */
static int persist(struct sidtab *t, struct ofs_sid sid)
{
	struct ofs_server e, *cur;
	int rc = 0;

	pthread_mutex_lock(&t->put_mu);
	pthread_mutex_lock(&t->mu);
	cur = find(t, sid);
	if (cur)
		e = *cur;
	pthread_mutex_unlock(&t->mu);
	if (cur)
		rc = store_server_put(t->s, &e);
	pthread_mutex_unlock(&t->put_mu);
	return rc;
}

int sidtab_open(struct store *s, const char *self_addr, struct sidtab **out)
{
	struct sidtab *t = calloc(1, sizeof(*t));
	struct ofs_server me;
	const char *const *attrs;
	size_t nattrs;
	int rc;

	if (!t)
		return -ENOMEM;
	t->s = s;
	t->self = store_sid(s);
	pthread_mutex_init(&t->root_mu, NULL);
	pthread_mutex_init(&t->put_mu, NULL);
	pthread_mutex_init(&t->mu, NULL);
	memset(&me, 0, sizeof(me));
	me.sid = t->self;
	snprintf(me.address, sizeof(me.address), "%s", self_addr);
	me.state = OFS_SERVER_IN;
	me.weight_milli = 1000;
	me.version = next_version(0);
	rc = store_root_info(s, &me.root, &me.root_birth_ns);
	if (rc == -ENOENT)
		rc = 0;         /* no namespace yet */
	if (rc)
		goto fail;
	nattrs = store_attrs(s, &attrs);
	for (size_t i = 0; i < nattrs && i < OFS_SERVER_ATTRS; i++)
		snprintf(me.attrs[me.nattrs++], OFS_SERVER_ATTR_LEN, "%s", attrs[i]);
	/* Own entry first, then what the store remembers. */
	rc = add(t, &me);
	if (!rc) {
		struct load *l = calloc(1, sizeof(*l));
		if (!l) {
			rc = -ENOMEM;
			goto fail;
		}
		l->t = t;
		rc = store_servers(s, load_one, l);
		/*
		 * A remembered own entry keeps the operator's part as it
		 * was, its version too: a restart decides nothing, so it must
		 * not undo what an operator decided (elsewhere, maybe while
		 * this server was down). Our own part is this run's: the
		 * address it serves on and the root the store holds.
		 */
		if (!rc && l->found) {
			const struct ofs_server *was = &l->was;
			me.state = was->state;
			me.weight_milli = was->weight_milli;
			me.nattrs = was->nattrs;
			memcpy(me.attrs, was->attrs, sizeof(me.attrs));
			me.version = was->version;
			me.self_version = was->self_version;
			/* (a root_version counts only for the root it was
			 * given with: another root in the store - adopted, the
			 * entry not yet written - starts from 0 and takes the
			 * list its servers have by gossip) */
			if (serves(was, me.root.oid, me.root_birth_ns))
				me.root_version = was->root_version;
		}
		free(l);
	}
	if (rc)
		goto fail;
	/* A new version of our own part on every start, so peers learn the
	 * current address. */
	me.self_version = next_version(me.self_version);
	t->e[0] = me;
	rc = store_server_put(s, &t->e[0]);
	if (rc)
		goto fail;
	*out = t;
	return 0;
fail:
	sidtab_close(t);
	return rc;
}

void sidtab_close(struct sidtab *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->put_mu);
	pthread_mutex_destroy(&t->root_mu);
	free(t->v);
	free(t->e);
	free(t);
}

struct ofs_sid sidtab_self(const struct sidtab *t)
{
	return t->self;
}

/* True when root a (born at ba) is older than b (born at bb). */
static bool older(const struct ofs_handle *a, int64_t ba, const struct ofs_handle *b, int64_t bb)
{
	if (oid_is_zero(a->oid))
		return false;
	if (oid_is_zero(b->oid))
		return true;
	if (ba != bb)
		return ba < bb;
	return oid_cmp(a->oid, b->oid) < 0;
}

/*
 * Serve root h (born birth_ns) with SID list version root_version from
 * now on: the store's root record (unless it says so already), then this
 * server's own entry, its own part with a new version, persisted. The
 * caller holds root_mu. Errors: those of store_adopt_root (-ENOTEMPTY:
 * our own root has entries).
 */
static int take_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		     uint64_t root_version)
{
	struct ofs_server me;
	int rc = 0;

	pthread_mutex_lock(&t->mu);
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	if (me.root_birth_ns != birth_ns || !same_handle(&me.root, h))
		rc = store_adopt_root(t->s, h, birth_ns);
	if (rc)
		return rc;
	pthread_mutex_lock(&t->mu);
	t->e[0].root = *h;
	t->e[0].root_birth_ns = birth_ns;
	t->e[0].root_version = root_version;
	t->e[0].self_version = next_version(t->e[0].self_version);
	pthread_mutex_unlock(&t->mu);
	return persist(t, t->self);
}

/*
 * The cluster's namespace root is the oldest any server serves. When a
 * peer serves an older one than ours, adopt it (store_adopt_root refuses
 * if our own root has entries; then we keep ours and say why, once). Of
 * the servers that serve it, the one with the newest SID list
 * (root_version) gives the list: a server that missed a ROOT_MOVE (it was
 * down) takes the moved list from any peer that did not.
 */
static int adopt_oldest_root(struct sidtab *t)
{
	struct ofs_server best, me;
	char hex[OFS_OID_HEX];
	int rc;

	pthread_mutex_lock(&t->root_mu);
	pthread_mutex_lock(&t->mu);
	best = t->e[0];
	for (size_t i = 1; i < t->n; i++)
		if (older(&t->e[i].root, t->e[i].root_birth_ns, &best.root, best.root_birth_ns))
			best = t->e[i];
	for (size_t i = 0; i < t->n; i++)
		if (serves(&t->e[i], best.root.oid, best.root_birth_ns) && newer_list(&t->e[i], &best))
			best = t->e[i];
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	rc = 0;
	if (oid_is_zero(best.root.oid))
		goto out;
	oid_to_hex(best.root.oid, hex);
	if (oid_eq(best.root.oid, me.root.oid)) {
		/* Ours: only a newer SID list of it is taken. */
		if (!serves(&me, best.root.oid, best.root_birth_ns) || !newer_list(&best, &me))
			goto out;
		rc = take_root(t, &best.root, best.root_birth_ns, best.root_version);
		if (!rc && !same_handle(&best.root, &me.root))
			log_info("the namespace root %s has moved (this server missed the move): "
				 "took its copies' new list from a peer", hex);
		goto out;
	}
	rc = take_root(t, &best.root, best.root_birth_ns, best.root_version);
	if (rc == -ENOTEMPTY) {
		if (!t->refused) {
			log_error("not joining the cluster's namespace (root %s): this server's "
				  "own root directory has entries", hex);
			t->refused = true;
		}
		rc = 0;
		goto out;
	}
	if (!rc)
		log_info("joined the cluster's namespace: root %s", hex);
out:
	pthread_mutex_unlock(&t->root_mu);
	return rc;
}

int sidtab_offer_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		      struct ofs_handle *used, int64_t *used_birth)
{
	struct ofs_server me;
	int rc;

	pthread_mutex_lock(&t->root_mu);
	pthread_mutex_lock(&t->mu);
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	if (!older(h, birth_ns, &me.root, me.root_birth_ns)) {
		pthread_mutex_unlock(&t->root_mu);
		*used = me.root;
		*used_birth = me.root_birth_ns;
		return 0;
	}
	/* (a new root: its first SID list, version 0, the same on every
	 * server it is offered to) */
	rc = take_root(t, h, birth_ns, 0);
	pthread_mutex_unlock(&t->root_mu);
	if (rc)
		return rc;
	*used = *h;
	*used_birth = birth_ns;
	{
		char hex[OFS_OID_HEX];
		oid_to_hex(h->oid, hex);
		log_info("took the namespace root a client made: %s", hex);
	}
	return 0;
}

int sidtab_move_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		     struct ofs_handle *used, int64_t *used_birth)
{
	struct ofs_server me;
	uint64_t known = 0;
	int rc = 0;

	pthread_mutex_lock(&t->root_mu);
	pthread_mutex_lock(&t->mu);
	me = t->e[0];
	/* (newer than every list of this root we know of, so the moved list
	 * wins over each of them, whatever the clocks) */
	for (size_t i = 0; i < t->n; i++)
		if (serves(&t->e[i], me.root.oid, me.root_birth_ns))
			known = max_u64(known, t->e[i].root_version);
	pthread_mutex_unlock(&t->mu);
	if (oid_is_zero(me.root.oid) || !oid_eq(me.root.oid, h->oid) ||
	    me.root_birth_ns != birth_ns || h->nsids == 0) {
		rc = -ESTALE;
		goto out;
	}
	if (!same_handle(&me.root, h)) {
		rc = take_root(t, h, birth_ns, next_version(known));
		if (rc)
			goto out;
		me.root = *h;
	}
	*used = me.root;
	*used_birth = me.root_birth_ns;
out:
	pthread_mutex_unlock(&t->root_mu);
	return rc;
}

/*
 * Merge a peer's copy of an entry into ours (cur); own: the entry is this
 * server's. Returns true when cur changed.
 */
static bool merge_entry(struct ofs_server *cur, const struct ofs_server *in, bool own)
{
	bool changed = false;

	/* The operator's part: the newest, whichever server set it. */
	if (cmp_part(in, cur, PART_OPERATOR) > 0) {
		cur->state = in->state;
		cur->weight_milli = in->weight_milli;
		cur->nattrs = in->nattrs;
		memcpy(cur->attrs, in->attrs, sizeof(cur->attrs));
		cur->version = in->version;
		changed = true;
	}
	if (own) {
		/*
		 * Where we are and which root we serve only we know: our own
		 * part is never taken from a peer. A copy of it as new as ours
		 * or newer that says otherwise (our store was restored, or an
		 * older run's copy came back) gets ours past it, so ours
		 * spreads. (A copy that differs only by an older root the peer
		 * keeps on purpose, below, would get it again: not counted.)
		 */
		struct ofs_server theirs = *in;
		if (older(&in->root, in->root_birth_ns, &cur->root, cur->root_birth_ns)) {
			theirs.root = cur->root;
			theirs.root_birth_ns = cur->root_birth_ns;
			theirs.root_version = cur->root_version;
		}
		if (in->self_version >= cur->self_version && cmp_part(&theirs, cur, PART_SELF) != 0) {
			cur->self_version = next_version(max_u64(in->self_version, cur->self_version));
			changed = true;
		}
	} else if (cmp_part(in, cur, PART_SELF) > 0) {
		memcpy(cur->address, in->address, sizeof(cur->address));
		cur->self_version = in->self_version;
		/* A root once seen stays known (adopt_oldest_root needs
		 * it; an older copy may carry it, a newer one not yet). */
		if (!older(&cur->root, cur->root_birth_ns, &in->root, in->root_birth_ns)) {
			cur->root = in->root;
			cur->root_birth_ns = in->root_birth_ns;
			cur->root_version = in->root_version;
		}
		changed = true;
	}
	return changed;
}

/*
 * Peer `by` says in's operator's part, newer than ours (cur's): recorded
 * as its word about in->sid, in place of what it said before. True when
 * another peer has said the very same part (its bytes: each server gives
 * an admin's change its own version), also newer than ours: VOUCHERS
 * distinct servers agree, so one server alone cannot change another's
 * entry. *version receives the lower of the two versions (one server
 * cannot push a version past what the other said). The caller holds mu.
 */
static bool vouched(struct sidtab *t, const struct ofs_server *in, const struct ofs_server *cur,
		    struct ofs_sid by, uint64_t *version)
{
	struct vouch w = { .about = in->sid, .by = by, .version = in->version };
	struct wbuf b;
	unsigned int hl = 0;
	size_t agree = 1, slot = t->nv;
	bool ok;

	*version = in->version;
	wbuf_init(&b);
	encode_part(&b, in, PART_OPERATOR);
	ok = !wbuf_error(&b) && EVP_Digest(b.data, b.len, w.h, &hl, EVP_sha256(), NULL) == 1 &&
	     hl == sizeof(w.h);
	wbuf_free(&b);
	if (!ok)
		return false;
	for (size_t i = 0; i < t->nv; i++) {
		struct vouch *o = &t->v[i];
		if (!sid_eq(o->about, in->sid))
			continue;
		if (sid_eq(o->by, by))
			slot = i;
		else if (o->version > cur->version && memcmp(o->h, w.h, sizeof(w.h)) == 0) {
			agree++;
			if (o->version < *version)
				*version = o->version;
		}
	}
	if (slot == t->nv) {
		if (t->nv == t->capv) {
			size_t cap = t->capv ? t->capv * 2 : 32;
			struct vouch *p;
			if (cap > VOUCH_MAX)
				cap = VOUCH_MAX;
			if (t->nv == cap) {
				/* (full: the oldest word goes) */
				memmove(t->v, t->v + 1, (t->nv - 1) * sizeof(*t->v));
				t->nv--;
			} else if ((p = realloc(t->v, cap * sizeof(*p))) != NULL) {
				t->v = p;
				t->capv = cap;
			} else {
				return agree >= VOUCHERS;
			}
		}
		slot = t->nv++;
	}
	t->v[slot] = w;
	return agree >= VOUCHERS;
}

/* in, its operator's part replaced by cur's: a copy that can change
 * only the own part. */
static void keep_operator_part(struct ofs_server *in, const struct ofs_server *cur)
{
	in->state = cur->state;
	in->weight_milli = cur->weight_milli;
	in->nattrs = cur->nattrs;
	memcpy(in->attrs, cur->attrs, sizeof(in->attrs));
	in->version = cur->version;
}

int sidtab_merge(struct sidtab *t, const struct ofs_server *e, size_t n)
{
	return sidtab_merge_from(t, e, n, NULL);
}

int sidtab_merge_from(struct sidtab *t, const struct ofs_server *e, size_t n,
		      const struct ofs_sid *from)
{
	int changed = 0, rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		struct ofs_server in = e[i], *cur;
		bool diff;

		in.last_seen_ns = 0;
		pthread_mutex_lock(&t->mu);
		cur = find(t, in.sid);
		if (cur) {
			/*
			 * A server speaks for its own entry only (sidtab.h;
			 * docs/design.md, "Security"): of a known server's
			 * entry relayed by another, the own part is never
			 * taken, and the operator's part only once VOUCHERS
			 * distinct peers have said the same (vouched). Our
			 * own, relayed: a newer copy of our own part that
			 * differs still gets ours past it.
			 */
			bool own = sid_eq(in.sid, t->self);
			if (!from || sid_eq(in.sid, *from)) {
				diff = merge_entry(cur, &in, own);
			} else {
				diff = false;
				uint64_t v;
				/* (the same part under another server's version:
				 * nothing to take) */
				bool same = in.state == cur->state &&
					    in.weight_milli == cur->weight_milli &&
					    in.nattrs == cur->nattrs &&
					    memcmp(in.attrs, cur->attrs, sizeof(in.attrs)) == 0;
				if (!same && in.version > cur->version &&
				    vouched(t, &in, cur, *from, &v)) {
					cur->state = in.state;
					cur->weight_milli = in.weight_milli;
					cur->nattrs = in.nattrs;
					memcpy(cur->attrs, in.attrs, sizeof(cur->attrs));
					cur->version = v;
					diff = true;
				}
				if (own) {
					keep_operator_part(&in, cur);
					diff = merge_entry(cur, &in, true) || diff;
				} else if (in.address[0] && strcmp(in.address, cur->address) != 0) {
					keep_lead(t, in.sid, in.address);
				}
			}
		} else {
			rc = add(t, &in);
			diff = !rc;
		}
		pthread_mutex_unlock(&t->mu);
		if (diff) {
			rc = persist(t, in.sid);
			changed++;
		}
	}
	if (!rc)
		rc = adopt_oldest_root(t);
	return rc ? rc : changed;
}

int sidtab_snapshot(struct sidtab *t, struct ofs_server **out, size_t *n)
{
	struct ofs_server *c;

	pthread_mutex_lock(&t->mu);
	c = malloc((t->n ? t->n : 1) * sizeof(*c));
	if (c) {
		memcpy(c, t->e, t->n * sizeof(*c));
		*n = t->n;
		c[0].last_seen_ns = now_ns();   /* this server: here now */
	}
	pthread_mutex_unlock(&t->mu);
	if (!c)
		return -ENOMEM;
	*out = c;
	return 0;
}

/* One entry's copy (e) and/or its state, under the lock. */
static int lookup(struct sidtab *t, struct ofs_sid sid, struct ofs_server *e, uint8_t *state)
{
	struct ofs_server *cur;
	int rc = -ENOENT;

	pthread_mutex_lock(&t->mu);
	cur = find(t, sid);
	if (cur) {
		if (e)
			*e = *cur;
		if (state)
			*state = cur->state;
		rc = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int sidtab_get(struct sidtab *t, struct ofs_sid sid, struct ofs_server *e)
{
	return lookup(t, sid, e, NULL);
}

int sidtab_state(struct sidtab *t, struct ofs_sid sid, uint8_t *state)
{
	return lookup(t, sid, NULL, state);
}

static int set_attr(struct ofs_server *e, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t kn = (size_t)(eq - kv);

	for (uint8_t i = 0; i < e->nattrs; i++) {
		if (strncmp(e->attrs[i], kv, kn) == 0 && e->attrs[i][kn] == '=') {
			if (eq[1]) {
				snprintf(e->attrs[i], OFS_SERVER_ATTR_LEN, "%s", kv);
			} else {
				memmove(e->attrs[i], e->attrs[i + 1],
					(size_t)(e->nattrs - i - 1) * OFS_SERVER_ATTR_LEN);
				e->nattrs--;
			}
			return 0;
		}
	}
	if (!eq[1])
		return 0;       /* removing what is not there */
	if (e->nattrs == OFS_SERVER_ATTRS)
		return -EINVAL;
	snprintf(e->attrs[e->nattrs++], OFS_SERVER_ATTR_LEN, "%s", kv);
	return 0;
}

int sidtab_set(struct sidtab *t, const struct ofs_server_set *set, struct ofs_server *e)
{
	struct ofs_server *cur, next;
	int rc = 0;

	pthread_mutex_lock(&t->mu);
	cur = find(t, set->sid);
	if (!cur) {
		pthread_mutex_unlock(&t->mu);
		return -ENOENT;
	}
	next = *cur;
	if (set->mask & OFS_SET_STATE)
		next.state = set->state;
	if (set->mask & OFS_SET_WEIGHT)
		next.weight_milli = set->weight_milli;
	if (set->mask & OFS_SET_ATTR)
		rc = set_attr(&next, set->attr);
	if (!rc) {
		/* (the operator's part and its version only: the server's
		 * own part stays the server's) */
		next.version = next_version(cur->version);
		*cur = next;
	}
	pthread_mutex_unlock(&t->mu);
	if (!rc)
		rc = persist(t, set->sid);
	if (!rc)
		*e = next;
	return rc;
}

bool sidtab_unanswered(struct sidtab *t, struct ofs_sid sid)
{
	struct ofs_server *cur;
	bool was = false;
	size_t i;

	pthread_mutex_lock(&t->mu);
	cur = find(t, sid);
	for (i = 0; i < t->nsilent && !sid_eq(t->silent_sid[i], sid); i++)
		;
	if (i < t->nsilent)
		was = cur && t->silent_ns[i] >= cur->last_seen_ns;
	else if (t->nsilent == SIDTAB_SILENT)
		i = sid.b[0] % SIDTAB_SILENT;      /* (full: one gives way) */
	else
		t->nsilent++;
	t->silent_sid[i] = sid;
	t->silent_ns[i] = now_ns();
	pthread_mutex_unlock(&t->mu);
	return cur && !was;
}

bool sidtab_silent(struct sidtab *t, struct ofs_sid sid)
{
	struct ofs_server *cur;
	bool silent = false;

	pthread_mutex_lock(&t->mu);
	cur = find(t, sid);
	for (size_t i = 0; cur && i < t->nsilent; i++)
		if (sid_eq(t->silent_sid[i], sid))
			silent = t->silent_ns[i] >= cur->last_seen_ns;
	pthread_mutex_unlock(&t->mu);
	return silent;
}

void sidtab_seen(struct sidtab *t, struct ofs_sid sid)
{
	struct ofs_server *cur;

	pthread_mutex_lock(&t->mu);
	cur = find(t, sid);
	if (cur)
		cur->last_seen_ns = now_ns();
	pthread_mutex_unlock(&t->mu);
}
