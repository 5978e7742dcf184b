/* reconcile.c - when every copy of an object missed something (see reconcile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "server/reconcile.h"

#define MAX_COPIES (OFS_MAX_REPLICAS + 1)

struct ofs_sid reconcile_lead(const struct ofs_sid *sids, size_t n)
{
	struct ofs_sid lead;

	memset(&lead, 0, sizeof(lead));
	for (size_t i = 0; i < n; i++)
		if (i == 0 || memcmp(sids[i].b, lead.b, OFS_OID_LEN) < 0)
			lead = sids[i];
	return lead;
}

/* One copy's entries, in name order. */
struct ent {
	char *name;
	struct ofs_dirent d;
};

struct entries {
	struct ent *e;
	size_t n, cap, at;           /* at: the merge's cursor */
};

static int add_ent(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct entries *es = arg;

	if (es->n == es->cap) {
		size_t cap = es->cap ? es->cap * 2 : 256;
		struct ent *p = realloc(es->e, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		es->e = p;
		es->cap = cap;
	}
	es->e[es->n].name = strdup(name);
	if (!es->e[es->n].name)
		return -ENOMEM;
	es->e[es->n].d = *d;
	es->n++;
	return 0;
}

static void free_entries(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++)
		free(es->e[i].name);
	free(es->e);
	memset(es, 0, sizeof(*es));
}

/* Every entry of this server's copy. */
static int list_local(struct store *s, struct ofs_oid oid, struct entries *es)
{
	bool more = true;
	int rc = 0;

	while (more && !rc) {
		const char *after = es->n ? es->e[es->n - 1].name : NULL;
		rc = store_dirent_list(s, oid, after, OFS_MAX_LIST, add_ent, es, &more);
	}
	return rc;
}

/* One request to one server, forwarded (a copy marked behind answers it);
 * the reply body in *body (caller frees). */
static int ask1(struct replicator *r, struct ofs_sid sid, const struct ofs_req *q,
		uint8_t **body, size_t *len)
{
	struct replica_result res = { 0 };
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	rc = proto_encode_req(&w, q);
	if (!rc)
		rc = replica_forward(r, q->op, w.data, w.len, &sid, 1, &res);
	wbuf_free(&w);
	if (!rc)
		rc = res.rc;
	if (rc) {
		free(res.body);
		return rc;
	}
	*body = res.body;
	*len = res.len;
	return 0;
}

/* Every entry of the copy on sid. */
static int list_remote(struct replicator *r, struct ofs_sid sid, struct ofs_oid oid,
		       struct entries *es)
{
	struct ofs_req *q = calloc(1, sizeof(*q));
	bool more = true;
	int rc = q ? 0 : -ENOMEM;

	while (more && !rc) {
		struct ofs_list_reader lr;
		struct ofs_dirent d;
		char name[OFS_NAME_MAX + 1];
		uint8_t *b = NULL;
		size_t bn = 0;
		int got;
		memset(q, 0, sizeof(*q));
		q->op = OFS_OP_DIRENT_LIST;
		q->oid = oid;
		q->max = OFS_MAX_LIST;
		if (es->n)
			snprintf(q->name, sizeof(q->name), "%s", es->e[es->n - 1].name);
		rc = ask1(r, sid, q, &b, &bn);
		if (rc)
			break;
		rc = proto_list_open_dirent(&lr, b, bn);
		while (!rc && (got = proto_list_next_dirent(&lr, name, &d)) == 1)
			rc = add_ent(name, &d, es);
		more = lr.more;
		free(b);
	}
	free(q);
	return rc;
}

/* What the object an entry names says of itself. */
struct named {
	unsigned present, quiet, nsids, confidence;
	bool backref_ok;             /* names this directory and name */
	struct ofs_attr a;           /* the newest copy's record */
};

/* Ask each copy of d's object for its record. */
static int ask_named(struct store *s, struct replicator *r, const struct ofs_dirent *d,
		     struct ofs_oid dir, const char *name, struct named *nm)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	uint64_t newest = 0;
	bool any = false;

	if (!a)
		return -ENOMEM;
	memset(nm, 0, sizeof(*nm));
	nm->nsids = d->handle.nsids;
	for (uint8_t i = 0; i < d->handle.nsids && i < OFS_MAX_REPLICAS; i++) {
		int rc;
		if (sid_eq(d->handle.sids[i], store_sid(s))) {
			rc = store_getattr(s, d->handle.oid, a);
		} else {
			struct ofs_req q;
			uint8_t *b = NULL;
			size_t bn = 0;
			memset(&q, 0, sizeof(q));
			q.op = OFS_OP_GETATTR;
			q.oid = d->handle.oid;
			rc = ask1(r, d->handle.sids[i], &q, &b, &bn);
			if (!rc)
				rc = proto_decode_attr_reply(b, bn, a);
			free(b);
		}
		if (rc == -ENOENT || rc == -OFS_ENOOBJ)
			continue;
		if (rc) {
			nm->quiet++;
			continue;
		}
		nm->present++;
		if (!any || a->version > newest) {
			nm->a = *a;
			newest = a->version;
			any = true;
		}
	}
	free(a);
	if (any) {
		nm->nsids = nm->a.nsids ? nm->a.nsids : nm->nsids;
		nm->confidence = nm->a.confidence ? nm->a.confidence : nm->nsids;
		nm->backref_ok = oid_eq(nm->a.backref.owner, dir) && !strcmp(nm->a.backref.name, name);
	}
	return 0;
}

int reconcile_entry_verdict(unsigned present, unsigned quiet, unsigned nsids, unsigned confidence,
			    bool backref_ok)
{
	unsigned conf = confidence ? confidence : 1;

	if (present < conf && present + quiet >= conf)
		return -OFS_EUNREACHABLE;
	if (present < conf)
		return 0;                /* never acknowledged, or removed */
	if (present + conf <= nsids)
		return -1;               /* as many as a create leaves, and as
		                            many as a remove may */
	return backref_ok ? 1 : 0;
}

static int verdict(const struct named *nm)
{
	return reconcile_entry_verdict(nm->present, nm->quiet, nm->nsids, nm->confidence,
				       nm->backref_ok);
}

/* One change to this server's copy. */
struct change {
	char name[OFS_NAME_MAX + 1];
	bool remove, create;
	struct ofs_dirent d;
};

struct merge {
	struct store *s;
	struct replicator *r;
	struct ofs_oid oid, dir;         /* the dirdata, its directory */
	struct entries es[MAX_COPIES];   /* [0]: this server's copy */
	size_t ncopies;
	struct change *ch;
	size_t nch;
	struct reconcile_result *res;
};

static bool same_entry(const struct ofs_dirent *x, const struct ofs_dirent *y)
{
	return x->type == y->type && oid_eq(x->handle.oid, y->handle.oid) &&
	       x->handle.nsids == y->handle.nsids &&
	       !memcmp(x->handle.sids, y->handle.sids, sizeof(x->handle.sids[0]) * x->handle.nsids);
}

/* Decide one name the copies disagree on: cand[0..nc) are the distinct
 * objects named, mine this copy's entry (NULL: none). */
static int decide(struct merge *m, const char *name, const struct ofs_dirent *cand, size_t nc,
		  const struct ofs_dirent *mine)
{
	struct ofs_dirent kept;
	bool keep = false;
	struct change *c;

	for (size_t i = 0; i < nc; i++) {
		struct named nm;
		int rc = ask_named(m->s, m->r, &cand[i], m->dir, name, &nm), v;
		if (rc)
			return rc;
		v = verdict(&nm);
		if (v == -OFS_EUNREACHABLE)
			return v;
		if (v < 0 || (v == 1 && keep)) {
			m->res->conflict = true;
			snprintf(m->res->detail, sizeof(m->res->detail),
				 "entry '%.60s': %s; nothing changed", name,
				 v < 0 ? "its object is held by as many copies as a create and a "
					 "remove could both leave"
				       : "two objects both claim it");
			return 0;
		}
		if (v == 1) {
			kept = cand[i];
			kept.handle.nsids = nm.a.nsids;     /* as the object says */
			memcpy(kept.handle.sids, nm.a.sids, sizeof(kept.handle.sids));
			keep = true;
		}
	}
	m->res->kept += keep;
	if ((!keep && !mine) || (keep && mine && same_entry(&kept, mine)))
		return 0;
	c = &m->ch[m->nch++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->remove = mine != NULL;
	c->create = keep;
	if (keep)
		c->d = kept;
	return 0;
}

/* Walk the copies' entries in name order, all at once. */
static int merge_walk(struct merge *m)
{
	char name[OFS_NAME_MAX + 1];

	while (!m->res->conflict) {
		struct ofs_dirent cand[MAX_COPIES], mine;
		const struct ofs_dirent *first = NULL;
		const char *least = NULL;
		size_t nc = 0, holders = 0;
		bool same = true, have_mine = false;
		int rc = 0;

		for (size_t i = 0; i < m->ncopies; i++) {
			struct entries *es = &m->es[i];
			if (es->at < es->n && (!least || strcmp(es->e[es->at].name, least) < 0))
				least = es->e[es->at].name;
		}
		if (!least)
			return 0;
		snprintf(name, sizeof(name), "%s", least);
		for (size_t i = 0; i < m->ncopies; i++) {
			struct entries *es = &m->es[i];
			const struct ofs_dirent *d;
			bool seen = false;
			if (es->at >= es->n || strcmp(es->e[es->at].name, name) != 0) {
				same = false;
				continue;
			}
			d = &es->e[es->at].d;
			holders++;
			if (i == 0) {
				mine = *d;
				have_mine = true;
			}
			if (first)
				same &= same_entry(first, d);
			else
				first = d;
			for (size_t j = 0; j < nc; j++)
				seen |= oid_eq(cand[j].handle.oid, d->handle.oid);
			if (!seen)
				cand[nc++] = *d;
		}
		if (same && holders == m->ncopies)
			m->res->kept++;
		else
			rc = decide(m, name, cand, nc, have_mine ? &mine : NULL);
		if (rc)
			return rc;
		for (size_t i = 0; i < m->ncopies; i++) {
			struct entries *es = &m->es[i];
			if (es->at < es->n && strcmp(es->e[es->at].name, name) == 0)
				es->at++;
		}
	}
	return 0;
}

/* Make this server's copy what the merge decided. */
static int apply(struct merge *m)
{
	for (size_t i = 0; i < m->nch; i++) {
		struct change *c = &m->ch[i];
		struct ofs_dirent old;
		bool replaced = false;
		int rc = 0;
		if (c->remove) {
			rc = store_dirent_remove(m->s, m->oid, c->name, &old);
			if (rc == -ENOENT)
				rc = 0;
			m->res->removed += !rc && !c->create;
		}
		if (!rc && c->create) {
			rc = store_dirent_create(m->s, m->oid, c->name, &c->d, 0, &replaced, &old);
			m->res->added += !rc;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int reconcile_dirdata(struct store *s, struct replicator *r, struct ofs_oid oid,
		      const struct ofs_sid *others, size_t n, struct reconcile_result *res)
{
	struct merge *m = calloc(1, sizeof(*m));
	struct ofs_attr *a = malloc(sizeof(*a));
	size_t total = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!m || !a) {
		rc = -ENOMEM;
		goto out;
	}
	rc = store_getattr(s, oid, a);
	if (rc)
		goto out;
	if (a->type != OFS_OBJ_DIRDATA) {
		rc = -OFS_ETYPE;
		goto out;
	}
	m->s = s;
	m->r = r;
	m->oid = oid;
	m->dir = a->backref.owner;
	m->res = res;
	m->ncopies = 1 + (n < OFS_MAX_REPLICAS ? n : OFS_MAX_REPLICAS);
	rc = list_local(s, oid, &m->es[0]);
	for (size_t i = 1; i < m->ncopies && !rc; i++)
		rc = list_remote(r, others[i - 1], oid, &m->es[i]);
	if (rc) {
		if (rc != -ENOMEM && rc < 0 && rc != -OFS_ECORRUPT)
			rc = -OFS_EUNREACHABLE;
		goto out;
	}
	for (size_t i = 0; i < m->ncopies; i++)
		total += m->es[i].n;
	m->ch = calloc(total ? total : 1, sizeof(*m->ch));
	if (!m->ch) {
		rc = -ENOMEM;
		goto out;
	}
	rc = merge_walk(m);
	if (rc || res->conflict)
		goto out;
	rc = apply(m);
	if (!rc)
		rc = store_stale_del(s, oid, store_sid(s), UINT64_MAX);
	if (!rc)
		snprintf(res->detail, sizeof(res->detail),
			 "entries merged from %zu copies: %u kept, %u added here, %u removed here",
			 m->ncopies, res->kept, res->added, res->removed);
out:
	if (m) {
		for (size_t i = 0; i < MAX_COPIES; i++)
			free_entries(&m->es[i]);
		free(m->ch);
	}
	free(m);
	free(a);
	return rc;
}
