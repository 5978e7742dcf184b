/* behind.c - telling a copy that it fell behind (see behind.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conn.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "server/behind.h"

/* One record already told: (oid, sid, a hash of its reason), kept sorted
 * for bsearch. The reason is part of it because a record cleared (the
 * copy caught up) and written again for a later miss (another version
 * missed) must be told again. */
struct told {
	uint8_t k[OFS_OID_LEN * 2 + 8];
};

struct behind {
	struct store *s;
	struct replicator *r;
	pthread_mutex_t mu;          /* guards told, n, cap */
	struct told *told;
	size_t n, cap;
};

int behind_open(struct store *s, struct replicator *r, struct behind **out)
{
	struct behind *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->s = s;
	b->r = r;
	pthread_mutex_init(&b->mu, NULL);
	*out = b;
	return 0;
}

void behind_close(struct behind *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b->told);
	free(b);
}

static void told_key(struct told *t, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	uint64_t h = 1469598103934665603ULL;     /* FNV-1a */

	for (const char *p = reason; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	memcpy(t->k, oid.b, OFS_OID_LEN);
	memcpy(t->k + OFS_OID_LEN, sid.b, OFS_OID_LEN);
	memcpy(t->k + 2 * OFS_OID_LEN, &h, sizeof(h));
}

/* Index where key is or would go; *found says which. Caller holds mu. */
static size_t told_find(const struct behind *b, const struct told *key, bool *found)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(b->told[mid].k, key->k, sizeof(key->k));
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static bool was_told(struct behind *b, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct told key;
	bool found;

	told_key(&key, oid, sid, reason);
	pthread_mutex_lock(&b->mu);
	told_find(b, &key, &found);
	pthread_mutex_unlock(&b->mu);
	return found;
}

static int remember(struct behind *b, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct told key;
	bool found;
	size_t at;
	int rc = 0;

	told_key(&key, oid, sid, reason);
	pthread_mutex_lock(&b->mu);
	at = told_find(b, &key, &found);
	if (!found) {
		if (b->n == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 64;
			struct told *p = realloc(b->told, cap * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				goto out;
			}
			b->told = p;
			b->cap = cap;
		}
		memmove(&b->told[at + 1], &b->told[at], (b->n - at) * sizeof(*b->told));
		b->told[at] = key;
		b->n++;
	}
out:
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* The records of one page of store_stale_for not yet told. */
struct page {
	struct behind *b;
	struct ofs_sid sid;
	struct ofs_oid oids[OFS_MAX_STALE_LIST];
	char (*reasons)[256];
	uint32_t n;
	struct ofs_oid last;         /* the last record scanned, told or not */
};

static int collect(struct ofs_oid oid, const char *reason, void *arg)
{
	struct page *p = arg;

	p->last = oid;
	if (was_told(p->b, oid, p->sid, reason))
		return 0;
	p->oids[p->n] = oid;
	snprintf(p->reasons[p->n], sizeof(p->reasons[p->n]), "%s", reason);
	p->n++;
	return 0;
}

/* Send one BEHIND to sid; 0 once it has marked its copy. */
static int tell_one(struct behind *b, struct ofs_sid sid, struct ofs_oid oid, const char *reason)
{
	struct replica_result res = { 0 };
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	proto_encode_report(&w, oid, store_sid(b->s), reason);
	rc = wbuf_error(&w);
	if (!rc)
		rc = replica_forward(b->r, OFS_OP_BEHIND, w.data, w.len, &sid, 1, &res);
	wbuf_free(&w);
	free(res.body);
	return rc ? rc : res.rc;
}

int behind_tell(struct behind *b, struct ofs_sid sid)
{
	struct page *p = calloc(1, sizeof(*p));
	bool more = true, started = false;
	struct ofs_oid after;
	int told = 0, rc = 0;

	if (!p)
		return -ENOMEM;
	p->reasons = calloc(OFS_MAX_STALE_LIST, sizeof(*p->reasons));
	if (!p->reasons) {
		free(p);
		return -ENOMEM;
	}
	p->b = b;
	p->sid = sid;
	while (more && !rc) {
		p->n = 0;
		rc = store_stale_for(b->s, sid, started ? &after : NULL, OFS_MAX_STALE_LIST,
				     collect, p, &more);
		for (uint32_t i = 0; i < p->n && !rc; i++) {
			rc = tell_one(b, sid, p->oids[i], p->reasons[i]);
			if (!rc) {
				rc = remember(b, p->oids[i], sid, p->reasons[i]);
				told++;
			}
		}
		after = p->last;
		started = true;
	}
	free(p->reasons);
	free(p);
	return rc ? rc : told;
}

/* ---- catching up at start ------------------------------------------------- */

/* One STALE_FOR page of a peer's records, marked in one commit. */
struct mark_ctx {
	char who[OFS_OID_HEX];
	struct ofs_oid oids[OFS_MAX_STALE_LIST];
	char (*why)[256];
	uint32_t n;                  /* records in this page */
};

static int mark_one(struct ofs_oid oid, const char *reason, void *arg)
{
	struct mark_ctx *m = arg;

	if (m->n == OFS_MAX_STALE_LIST)
		return -OFS_ETOOBIG;
	snprintf(m->why[m->n], sizeof(m->why[m->n]), "behind per %.32s: %.200s", m->who, reason);
	m->oids[m->n++] = oid;
	return 0;
}

/* Mark the page's copies behind; the number marked or a store error. */
static int mark_page(struct store *s, struct mark_ctx *m)
{
	const char **why = malloc((m->n ? m->n : 1) * sizeof(*why));
	int rc;

	if (!why)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n; i++)
		why[i] = m->why[i];
	rc = store_behind_mark_many(s, m->oids, why, m->n);
	free(why);
	return rc ? rc : (int)m->n;
}

int behind_catch_up(struct store *s, struct sidtab *t, int timeout_ms)
{
	struct ofs_server *e = NULL;
	struct ofs_sid self = store_sid(s);
	struct mark_ctx *m = calloc(1, sizeof(*m));
	size_t n = 0;
	int marked = 0, rc;

	if (!m)
		return -ENOMEM;
	m->why = calloc(OFS_MAX_STALE_LIST, sizeof(*m->why));
	rc = m->why ? sidtab_snapshot(t, &e, &n) : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		struct conn *c = NULL;
		struct ofs_req q = { .op = OFS_OP_STALE_FOR, .sid = self };
		bool more = true;

		if (sid_eq(e[i].sid, self) || e[i].address[0] == '\0')
			continue;
		if (conn_open_sid(e[i].address, &e[i].sid, &c))
			continue;            /* down: it tells on contact */
		conn_set_timeout(c, timeout_ms);
		sid_to_hex(e[i].sid, m->who);
		while (more && !rc) {
			uint8_t *b = NULL;
			size_t bn = 0;
			int r;
			m->n = 0;
			r = conn_call(c, &q, &b, &bn);
			if (!r)
				r = proto_decode_stale_list(b, bn, mark_one, m, &more);
			free(b);
			if (r || m->n == 0)
				break;       /* a peer's failure: it tells on contact */
			q.oid = m->oids[m->n - 1];
			r = mark_page(s, m);
			if (r < 0)
				rc = r;
			else
				marked += r;
		}
		conn_close(c);
	}
	free(e);
	if (m)
		free(m->why);
	free(m);
	return rc ? rc : marked;
}
