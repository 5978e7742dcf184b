/*
 * sidtab.c - the server-ID database in memory, persisted in the store
 * (see sidtab.h).
 *
 * Lock: sidtab.mu guards n, cap and e. It is never held while calling
 * into the store except for store_server_put, which takes no lock of ours.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "ofs_error.h"
#include "sidtab.h"
#include "wire.h"

struct sidtab {
	struct store *s;
	struct ofs_sid self;
	pthread_mutex_t mu;
	size_t n, cap;            /* guarded by mu */
	struct ofs_server *e;     /* guarded by mu; e[0] is this server */
	bool refused;             /* the cluster's root was refused (logged) */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A version newer than old: the wall clock in ns, or old + 1. */
static uint64_t next_version(uint64_t old)
{
	uint64_t now = (uint64_t)now_ns();

	return now > old ? now : old + 1;
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

static int load_one(const struct ofs_server *e, void *arg)
{
	struct sidtab *t = arg;

	if (find(t, e->sid))
		return 0;
	return add(t, e);
}

/* Compare two entries' table state (not last_seen) by their encoding. */
static int cmp_encoding(const struct ofs_server *a, const struct ofs_server *b)
{
	struct ofs_server x = *a, y = *b;
	struct wbuf wa, wb;
	int r;

	x.last_seen_ns = y.last_seen_ns = 0;
	wbuf_init(&wa);
	wbuf_init(&wb);
	proto_encode_server(&wa, &x);
	proto_encode_server(&wb, &y);
	if (wa.len != wb.len)
		r = wa.len < wb.len ? -1 : 1;
	else
		r = wa.len ? memcmp(wa.data, wb.data, wa.len) : 0;
	wbuf_free(&wa);
	wbuf_free(&wb);
	return r;
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
	pthread_mutex_init(&t->mu, NULL);
	memset(&me, 0, sizeof(me));
	me.sid = t->self;
	snprintf(me.address, sizeof(me.address), "%s", self_addr);
	me.state = OFS_SERVER_IN;
	me.weight_milli = 1000;
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
	if (!rc)
		rc = store_servers(s, load_one, t);
	if (rc)
		goto fail;
	/* A remembered own entry keeps the operator's state, weight and
	 * attributes; the address is the one this run serves on. */
	for (size_t i = 1; i < t->n; i++) {
		if (sid_eq(t->e[i].sid, t->self)) {
			struct ofs_handle root = me.root;
			int64_t birth = me.root_birth_ns;
			me = t->e[i];
			snprintf(me.address, sizeof(me.address), "%s", self_addr);
			me.root = root;
			me.root_birth_ns = birth;
			t->e[0] = me;
			memmove(&t->e[i], &t->e[i + 1], (t->n - i - 1) * sizeof(t->e[i]));
			t->n--;
			break;
		}
	}
	/* A new version on every start, so peers learn the current address. */
	t->e[0].version = next_version(t->e[0].version);
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

/* Serve root h (born birth_ns) from now on: the store's root record, then
 * this server's own entry, a new version of it, persisted. Errors: those
 * of store_adopt_root (-ENOTEMPTY: our own root has entries). */
static int take_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns)
{
	struct ofs_server me;
	int rc = store_adopt_root(t->s, h, birth_ns);

	if (rc)
		return rc;
	pthread_mutex_lock(&t->mu);
	t->e[0].root = *h;
	t->e[0].root_birth_ns = birth_ns;
	t->e[0].version = next_version(t->e[0].version);
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	return store_server_put(t->s, &me);
}

/*
 * The cluster's namespace root is the oldest any server serves. When a
 * peer serves an older one than ours, adopt it (store_adopt_root refuses
 * if our own root has entries; then we keep ours and say why, once).
 */
static int adopt_oldest_root(struct sidtab *t)
{
	struct ofs_handle best;
	int64_t best_birth;
	struct ofs_server me;
	int rc;

	pthread_mutex_lock(&t->mu);
	best = t->e[0].root;
	best_birth = t->e[0].root_birth_ns;
	for (size_t i = 1; i < t->n; i++) {
		if (older(&t->e[i].root, t->e[i].root_birth_ns, &best, best_birth)) {
			best = t->e[i].root;
			best_birth = t->e[i].root_birth_ns;
		}
	}
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	if (oid_eq(best.oid, me.root.oid))
		return 0;
	rc = take_root(t, &best, best_birth);
	if (rc == -ENOTEMPTY) {
		if (!t->refused) {
			char hex[OFS_OID_HEX];
			oid_to_hex(best.oid, hex);
			log_error("not joining the cluster's namespace (root %s): this server's "
				  "own root directory has entries", hex);
			t->refused = true;
		}
		return 0;
	}
	if (rc)
		return rc;
	{
		char hex[OFS_OID_HEX];
		oid_to_hex(best.oid, hex);
		log_info("joined the cluster's namespace: root %s", hex);
	}
	return 0;
}

int sidtab_offer_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		      struct ofs_handle *used, int64_t *used_birth)
{
	struct ofs_server me;
	int rc;

	pthread_mutex_lock(&t->mu);
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	if (!older(h, birth_ns, &me.root, me.root_birth_ns)) {
		*used = me.root;
		*used_birth = me.root_birth_ns;
		return 0;
	}
	rc = take_root(t, h, birth_ns);
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
	int rc;

	pthread_mutex_lock(&t->mu);
	me = t->e[0];
	pthread_mutex_unlock(&t->mu);
	if (oid_is_zero(me.root.oid) || !oid_eq(me.root.oid, h->oid) ||
	    me.root_birth_ns != birth_ns || h->nsids == 0)
		return -ESTALE;
	if (me.root.nsids != h->nsids ||
	    memcmp(me.root.sids, h->sids, sizeof(h->sids[0]) * h->nsids) != 0) {
		rc = take_root(t, h, birth_ns);
		if (rc)
			return rc;
		me.root = *h;
	}
	*used = me.root;
	*used_birth = me.root_birth_ns;
	return 0;
}

int sidtab_merge(struct sidtab *t, const struct ofs_server *e, size_t n)
{
	int changed = 0, rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		struct ofs_server in = e[i], *cur;
		bool take;

		in.last_seen_ns = 0;
		pthread_mutex_lock(&t->mu);
		cur = find(t, in.sid);
		if (!cur)
			take = true;
		else if (in.version != cur->version)
			take = in.version > cur->version;
		else
			take = cmp_encoding(&in, cur) > 0;
		if (take && cur && sid_eq(in.sid, t->self)) {
			/*
			 * Our own entry, changed elsewhere (an operator's
			 * server set): take its state, weight and attributes,
			 * but where we are and which root we serve only we
			 * know. If the peer's copy had those wrong, ours goes
			 * out again with a newer version.
			 */
			if (strcmp(in.address, cur->address) != 0 ||
			    !oid_eq(in.root.oid, cur->root.oid) ||
			    in.root_birth_ns != cur->root_birth_ns) {
				memcpy(in.address, cur->address, sizeof(in.address));
				in.root = cur->root;
				in.root_birth_ns = cur->root_birth_ns;
				in.version = next_version(in.version);
			}
		} else if (take && cur &&
			   older(&cur->root, cur->root_birth_ns, &in.root, in.root_birth_ns)) {
			/* A root once seen stays known (an older entry
			 * version may carry it, a newer one not yet). */
			in.root = cur->root;
			in.root_birth_ns = cur->root_birth_ns;
		}
		if (take) {
			if (cur) {
				int64_t seen = cur->last_seen_ns;
				*cur = in;
				cur->last_seen_ns = seen;
			} else {
				rc = add(t, &in);
			}
		}
		pthread_mutex_unlock(&t->mu);
		if (take && !rc) {
			rc = store_server_put(t->s, &in);
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
		next.version = next_version(cur->version);
		*cur = next;
	}
	pthread_mutex_unlock(&t->mu);
	if (!rc)
		rc = store_server_put(t->s, &next);
	if (!rc)
		*e = next;
	return rc;
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
