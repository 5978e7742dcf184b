/*
 * ofs.c - libofs: paths, files and directories over the object protocol
 * (see ofs.h).
 *
 * Namespace. The root directory's handle comes from the server (GET_ROOT).
 * A directory object lists its dirdata objects; an entry lives in dirdata
 * number hash(name) % ndirdata. A file is a metafile that lists its dfiles
 * in stripe order; byte x of a file with strip size S and N dfiles is in
 * dfile (x / S) % N at offset (x / (S*N)) * S + x % S (simple stripe).
 *
 * Ordering. Objects are created before the entry that makes them visible,
 * and an entry is removed before the objects it named, so a crash leaves
 * at worst unreferenced objects (orphans, which scrub finds), never a
 * visible name that points at nothing. A put builds a whole new file
 * (metafile and dfiles) and switches the entry to it in one atomic
 * DIRENT_CREATE with OFS_DIRENT_REPLACE; only then are the old objects
 * removed. That is why readers see the old or the new file, never a mix.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ofs.h"
#include "lib/conn.h"
#include "lib/frame.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/path.h"
#include "lib/placement.h"

#define OFS_DEFAULT_STRIP (1u << 20)
#define OFS_IO_PIECE OFS_MAX_IO           /* bytes per READ/WRITE */
#define GET_RETRIES 3                     /* restarts when a file is replaced */
#define MOVE_WAIT_MS 60000                /* waits for an object held still by a move */

/* A server as this client knows it. */
struct peer {
	struct ofs_server e;        /* from the server table */
	struct conn *conn;          /* opened on first use */
	bool down;                  /* it failed to answer: try it last */
};

struct ofs_client {
	struct peer *peers;         /* the server table, learned on open */
	size_t npeers;
	struct ofs_handle root;     /* the root directory */
	char fault[32];             /* a fault-injection step, or "" */
};

/* ---- servers and calls --------------------------------------------------- */

static int map_transport(int rc)
{
	if (conn_is_transport_error(rc) || rc == -ETIMEDOUT || rc == -ECONNREFUSED)
		return -OFS_EUNREACHABLE;
	return rc;
}

/* A server the answering server has not heard from for this long is
 * taken as down until it answers this client (tried last). */
#define PEER_QUIET_NS (5 * 1000000000LL)

/* Replace the peer table with entries (keeping open connections). now_ns:
 * the answering server's time, against which each entry's last_seen_ns
 * (when it last heard from that server) is read; 0: no such hint. */
static int set_peers(struct ofs_client *c, const struct ofs_server *e, size_t n, int64_t now_ns)
{
	struct peer *p = calloc(n ? n : 1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		p[i].e = e[i];
		p[i].down = now_ns > 0 && e[i].last_seen_ns > 0 &&
			    now_ns - e[i].last_seen_ns > PEER_QUIET_NS;
		for (size_t j = 0; j < c->npeers; j++) {
			if (sid_eq(c->peers[j].e.sid, e[i].sid) &&
			    strcmp(c->peers[j].e.address, e[i].address) == 0) {
				p[i].conn = c->peers[j].conn;
				p[i].down = c->peers[j].down;
				c->peers[j].conn = NULL;
			}
		}
	}
	for (size_t j = 0; j < c->npeers; j++)
		conn_close(c->peers[j].conn);
	free(c->peers);
	c->peers = p;
	c->npeers = n;
	return 0;
}

/* Ask a server for the table (with a connection already open). */
static int fetch_table(struct ofs_client *c, struct conn *cn)
{
	struct ofs_server *e = NULL;
	struct ofs_sid who;
	size_t n = 0;
	int64_t now = 0;
	int rc = conn_table(cn, &who, &e, &n);

	for (size_t i = 0; !rc && i < n; i++)
		if (sid_eq(e[i].sid, who))
			now = e[i].last_seen_ns;      /* (its own entry: now) */
	if (!rc)
		rc = set_peers(c, e, n, now);
	free(e);
	return rc;
}

static struct peer *find_peer(struct ofs_client *c, struct ofs_sid sid)
{
	for (size_t i = 0; i < c->npeers; i++)
		if (sid_eq(c->peers[i].e.sid, sid))
			return &c->peers[i];
	return NULL;
}

/* Resolution: a SID not in our table is asked of up to RESOLVE_ASK
 * servers we know, until one knows it. */
#define RESOLVE_ASK 3
static struct peer *peer_for(struct ofs_client *c, struct ofs_sid sid)
{
	struct peer *p = find_peer(c, sid);
	size_t asked = 0;

	for (size_t i = 0; !p && i < c->npeers && asked < RESOLVE_ASK; i++) {
		struct peer *k = &c->peers[i];
		if (k->down)
			continue;
		if (!k->conn && conn_open(k->e.address, &k->conn)) {
			k->down = true;
			continue;
		}
		asked++;
		/* (fetch_table may move c->peers: k is not used after it) */
		if (fetch_table(c, c->peers[i].conn) == 0)
			p = find_peer(c, sid);
	}
	return p;
}

static struct conn *conn_of(struct ofs_client *c, struct ofs_sid sid)
{
	struct peer *p = peer_for(c, sid);

	if (!p)
		return NULL;
	if (!p->conn && conn_open(p->e.address, &p->conn)) {
		p->down = true;
		return NULL;
	}
	return p->conn;
}

static void mark_down(struct ofs_client *c, struct ofs_sid sid)
{
	struct peer *p = find_peer(c, sid);

	if (p) {
		p->down = true;
		conn_close(p->conn);
		p->conn = NULL;
	}
}

/* Tell a server that a copy was skipped, for its log. Best effort. */
static void report(struct ofs_client *c, struct ofs_sid to, struct ofs_oid oid,
		   struct ofs_sid bad, const char *why)
{
	struct ofs_req q = { .op = OFS_OP_REPORT, .oid = oid, .sid = bad };
	struct conn *cn = conn_of(c, to);

	snprintf(q.reason, sizeof(q.reason), "%s", why);
	if (cn && conn_call(cn, &q, NULL, NULL) && conn_is_transport_error(0))
		mark_down(c, to);
}

/* The copies of h in the order to try them: as listed, but servers known
 * to be down last. */
static size_t try_order(struct ofs_client *c, const struct ofs_handle *h, struct ofs_sid *out)
{
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (uint8_t i = 0; i < h->nsids && i < OFS_MAX_REPLICAS; i++) {
			struct peer *p = find_peer(c, h->sids[i]);
			bool down = p && p->down;
			if (down == (pass == 1))
				out[n++] = h->sids[i];
		}
	}
	return n;
}

/*
 * Send q about object h to its primary, or, when that server does not
 * answer, to the next copy (which then acts as primary and forwards the
 * change to the rest). Reads fail over the same way, and also past a copy
 * whose checksums do not verify, that lacks the object or that knows it
 * missed changes; skipped copies are reported to the server that answered. -OFS_EUNREACHABLE when no copy answered.
 */
/*
 * One request to the copies of h, in try_order, until one answers.
 * *failed_over (may be NULL): a copy tried before the one that answered
 * stopped answering mid-call - it may have applied the request (and
 * forwarded it) before it died, so a change that is not idempotent may
 * find itself already made.
 */
static int call_ex(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		   uint8_t **body, size_t *blen, bool *failed_over)
{
	struct ofs_sid order[OFS_MAX_REPLICAS], skipped[OFS_MAX_REPLICAS];
	const char *why[OFS_MAX_REPLICAS];
	size_t n = try_order(c, h, order), nskipped = 0;
	int rc = -OFS_EUNREACHABLE, waited_ms = 0;

	if (failed_over)
		*failed_over = false;
	for (size_t i = 0; i < n; i++) {
		struct conn *cn = conn_of(c, order[i]);
		if (!cn) {
			rc = -OFS_EUNREACHABLE;
			skipped[nskipped] = order[i];
			why[nskipped++] = "unreachable";
			continue;
		}
		rc = conn_call(cn, q, body, blen);
		if (rc == -OFS_EMOVING && waited_ms < MOVE_WAIT_MS) {
			/* Held still while a copy moves: a moment, then again. */
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000000L };
			nanosleep(&ts, NULL);
			waited_ms += 50;
			i--;
			continue;
		}
		if (conn_is_transport_error(rc)) {
			mark_down(c, order[i]);
			if (failed_over)
				*failed_over = true;
			rc = -OFS_EUNREACHABLE;
			skipped[nskipped] = order[i];
			why[nskipped++] = "unreachable";
			continue;
		}
		if (rc == -OFS_ECHECKSUM && q->op == OFS_OP_READ && i + 1 < n) {
			skipped[nskipped] = order[i];
			why[nskipped++] = "checksum mismatch on read";
			continue;
		}
		if (rc == -OFS_EBEHIND && i + 1 < n) {
			skipped[nskipped] = order[i];
			why[nskipped++] = "copy behind";
			continue;
		}
		/* A handle names this object, so a copy without it missed its
		 * creation (it was down) or moved away: ask the next one. */
		if ((rc == -OFS_ENOOBJ ||
		     (rc == -ENOENT && (q->op == OFS_OP_READ || q->op == OFS_OP_GETATTR))) &&
		    i + 1 < n) {
			skipped[nskipped] = order[i];
			why[nskipped++] = "copy missing";
			continue;
		}
		if (q->op == OFS_OP_READ || q->op == OFS_OP_GETATTR ||
		    q->op == OFS_OP_DIRENT_LOOKUP || q->op == OFS_OP_DIRENT_LIST ||
		    q->op == OFS_OP_KV_GET || q->op == OFS_OP_KV_LIST)
			for (size_t k = 0; k < nskipped; k++)
				report(c, order[i], q->oid, skipped[k], why[k]);
		return rc == -OFS_ENOOBJ ? -ENOENT : rc;
	}
	return rc == -OFS_ENOOBJ ? -ENOENT : rc;
}

static int call(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		uint8_t **body, size_t *blen)
{
	return call_ex(c, h, q, body, blen, NULL);
}

static struct ofs_req *req_new(uint16_t op, struct ofs_oid oid)
{
	struct ofs_req *q = calloc(1, sizeof(*q));

	if (q) {
		q->op = op;
		q->oid = oid;
	}
	return q;
}

static int obj_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a)
{
	struct ofs_req *q = req_new(OFS_OP_GETATTR, h->oid);
	uint8_t *b = NULL;
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = call(c, h, q, &b, &n);
	if (!rc)
		rc = proto_decode_attr_reply(b, n, a);
	free(b);
	free(q);
	return rc;
}

static int obj_setattr(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a)
{
	struct ofs_req *q = req_new(OFS_OP_SETATTR, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	q->mask = mask;
	q->attr = *a;
	rc = call(c, h, q, NULL, NULL);
	free(q);
	return rc;
}

/* The servers that may receive new objects, as placement wants them. */
static size_t placeable(struct ofs_client *c, struct place_server *ps)
{
	size_t n = 0;

	for (size_t i = 0; i < c->npeers && n < OFS_MAX_SERVERS; i++) {
		const struct ofs_server *e = &c->peers[i].e;
		ps[n].sid = e->sid;
		ps[n].weight = e->weight_milli / 1000.0;
		ps[n].state = e->state == OFS_SERVER_IN ? PLACE_IN :
			      e->state == OFS_SERVER_DRAINING ? PLACE_DRAINING : PLACE_OUT;
		ofs_server_attr(e, PLACE_DOMAIN_ATTR, ps[n].domain, sizeof(ps[n].domain));
		n++;
	}
	return n;
}

/*
 * Create an object with `copies` copies where placement puts them (first
 * on `fixed` if given) and fill *h with its handle. The OID is chosen here,
 * since placement depends on it. When the chosen primary does not answer,
 * the next copy becomes primary (the unreachable one stays in the list, so
 * the new primary records it as stale). -OFS_ENOSERVERS when fewer servers
 * are in service than copies asked.
 */
static int obj_remove(struct ofs_client *c, const struct ofs_handle *h);

static int obj_create(struct ofs_client *c, const struct ofs_attr *a, unsigned copies,
		      const struct ofs_sid *fixed, struct ofs_handle *h)
{
	struct ofs_req *q = req_new(OFS_OP_CREATE, (struct ofs_oid){ { 0 } });
	struct place_server *ps = calloc(c->npeers ? c->npeers : 1, sizeof(*ps));
	struct ofs_sid chosen[OFS_MAX_REPLICAS];
	struct ofs_handle t;
	uint8_t *b = NULL;
	size_t n = 0;
	int rc, got;

	if (!q || !ps) {
		rc = -ENOMEM;
		goto out;
	}
	rc = oid_generate(&q->oid);
	if (rc)
		goto out;
	got = place_choose(PLACE_DEFAULT, q->oid, ps, placeable(c, ps), copies, fixed, chosen);
	if (got < 0) {
		rc = got;
		goto out;
	}
	if ((unsigned)got < copies) {
		rc = -OFS_ENOSERVERS;
		goto out;
	}
	memset(&t, 0, sizeof(t));
	t.oid = q->oid;
	t.nsids = (uint8_t)got;
	memcpy(t.sids, chosen, (size_t)got * sizeof(chosen[0]));
	/* Servers known down go last, so a live one is primary. */
	{
		struct ofs_sid order[OFS_MAX_REPLICAS];
		try_order(c, &t, order);
		memcpy(t.sids, order, (size_t)got * sizeof(order[0]));
	}
	q->attr = *a;
	q->attr.nsids = t.nsids;
	memcpy(q->attr.sids, t.sids, sizeof(t.sids));
	if (!q->attr.replicas)
		q->attr.replicas = t.nsids;
	/* To each copy in turn until one answers; it acts as primary. The
	 * request stays the same, copies in the same order: a copy that a
	 * dead primary already forwarded the create to finds it made by this
	 * very create (and would refuse one that differs: EEXIST). */
	for (int attempt = 0; attempt < got; attempt++) {
		struct conn *cn = conn_of(c, t.sids[attempt]);
		rc = cn ? conn_call(cn, q, &b, &n) : -ECONNREFUSED;
		if (!conn_is_transport_error(rc))
			break;
		mark_down(c, t.sids[attempt]);
		rc = -OFS_EUNREACHABLE;
	}
	if (!rc)
		rc = proto_decode_oid_reply(b, n, &t.oid);
	if (!rc)
		*h = t;
	else if (rc != -EEXIST && rc != -EINVAL && rc != -ENOMEM)
		obj_remove(c, &t);     /* what copies made of it, best effort */
out:
	free(b);
	free(ps);
	free(q);
	return map_transport(rc);
}

static int obj_remove(struct ofs_client *c, const struct ofs_handle *h)
{
	struct ofs_req *q = req_new(OFS_OP_REMOVE, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	rc = call(c, h, q, NULL, NULL);
	free(q);
	return rc;
}

/* Remove a file's dfiles, then its metafile. Missing parts are fine. */
static int file_destroy(struct ofs_client *c, const struct ofs_handle *mf)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = obj_getattr(c, mf, a);
	if (rc == 0) {
		for (uint16_t i = 0; i < a->nparts; i++) {
			int r = obj_remove(c, &a->parts[i]);
			if (r && r != -ENOENT && !rc)
				rc = r;
		}
	}
	if (rc == -ENOENT)
		rc = 0;
	if (!rc) {
		rc = obj_remove(c, mf);
		if (rc == -ENOENT)
			rc = 0;
	}
	free(a);
	return rc;
}

/* The dirdata object that holds name in directory dir (attrs da). */
static int dirdata_for(const struct ofs_attr *da, const char *name, struct ofs_handle *dd)
{
	if (da->type != OFS_OBJ_DIRECTORY)
		return -ENOTDIR;
	if (da->nparts == 0)
		return -OFS_ECORRUPT;
	*dd = da->parts[ofs_name_hash(name) % da->nparts];
	return 0;
}

static int dirent_call_ex(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
			  const char *name, const struct ofs_dirent *d, uint32_t flags,
			  bool *present, struct ofs_dirent *out, bool *failed_over)
{
	struct ofs_req *q = req_new(op, dd->oid);
	uint8_t *b = NULL;
	size_t n = 0;
	bool p = false;
	struct ofs_dirent t;
	int rc;

	memset(&t, 0, sizeof(t));

	if (!q)
		return -ENOMEM;
	snprintf(q->name, sizeof(q->name), "%s", name);
	if (d)
		q->dirent = *d;
	q->flags = flags;
	rc = call_ex(c, dd, q, &b, &n, failed_over);
	if (!rc)
		rc = proto_decode_dirent_reply(b, n, &p, &t);
	if (!rc) {
		if (present)
			*present = p;
		if (out && p)
			*out = t;
	}
	free(b);
	free(q);
	return rc;
}

static int dirent_call(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
		       const char *name, const struct ofs_dirent *d, uint32_t flags,
		       bool *present, struct ofs_dirent *out)
{
	return dirent_call_ex(c, op, dd, name, d, flags, present, out, NULL);
}

/* ---- resolution --------------------------------------------------------- */

/* What a path names: its entry (type, handle) and, unless it is the root,
 * its parent directory's handle and attributes. */
struct resolved {
	struct ofs_dirent ent;        /* the object itself */
	struct ofs_handle parent;     /* its directory (not for the root) */
	struct ofs_attr *pattr;       /* that directory's attributes (owned) */
	char name[OFS_NAME_MAX + 1];  /* last component ("" for the root) */
	size_t depth;
	struct ofs_oid chain[OFS_PATH_DEPTH + 1];  /* directories walked */
};

static void resolved_free(struct resolved *r)
{
	free(r->pattr);
	r->pattr = NULL;
}

/* Walk p's first n components. On success r->ent is the object the n-th
 * component names (the root for n = 0). */
static int walk(struct ofs_client *c, const struct ofs_path *p, size_t n, struct resolved *r)
{
	struct ofs_dirent cur = { .type = OFS_OBJ_DIRECTORY, .handle = c->root };
	int rc;

	memset(r, 0, sizeof(*r));
	r->pattr = malloc(sizeof(*r->pattr));
	if (!r->pattr)
		return -ENOMEM;
	r->chain[0] = c->root.oid;
	for (size_t i = 0; i < n; i++) {
		struct ofs_handle dd;

		if (cur.type != OFS_OBJ_DIRECTORY)
			return -ENOTDIR;
		rc = obj_getattr(c, &cur.handle, r->pattr);
		if (rc)
			return rc == -ENOENT ? -ENOENT : rc;
		rc = dirdata_for(r->pattr, p->comp[i], &dd);
		if (rc)
			return rc;
		r->parent = cur.handle;
		rc = dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, p->comp[i], NULL, 0, NULL, &cur);
		if (rc)
			return rc;
		r->chain[i + 1] = cur.handle.oid;
	}
	r->ent = cur;
	r->depth = n;
	if (n)
		snprintf(r->name, sizeof(r->name), "%s", p->comp[n - 1]);
	return 0;
}

static int parse_path(const char *s, struct ofs_path **p)
{
	struct ofs_path *t = malloc(sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	rc = path_parse(s, t);
	if (rc) {
		free(t);
		return rc;
	}
	*p = t;
	return 0;
}

/* Resolve the whole path. */
static int resolve(struct ofs_client *c, const char *path, struct resolved *r)
{
	struct ofs_path *p;
	int rc = parse_path(path, &p);

	if (rc)
		return rc;
	rc = walk(c, p, p->n, r);
	free(p);
	return rc;
}

/* Resolve the parent of path (which must be a directory) and return the
 * last name; -EEXIST-free: the entry itself is not looked up. */
static int resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd)
{
	struct ofs_path *p;
	int rc = parse_path(path, &p);

	if (rc)
		return rc;
	if (p->n == 0) {
		free(p);
		return -EBUSY;          /* the root has no parent */
	}
	if (!ofs_name_valid(p->comp[p->n - 1])) {
		free(p);
		return -OFS_ENAME;
	}
	rc = walk(c, p, p->n - 1, r);
	if (!rc && r->ent.type != OFS_OBJ_DIRECTORY)
		rc = -ENOTDIR;
	if (!rc)
		rc = obj_getattr(c, &r->ent.handle, r->pattr);
	if (!rc)
		rc = dirdata_for(r->pattr, p->comp[p->n - 1], dd);
	if (!rc)
		snprintf(name, OFS_NAME_MAX + 1, "%s", p->comp[p->n - 1]);
	free(p);
	return rc;
}

/* ---- open and close ----------------------------------------------------- */

/* How many copies directories get: up to DIR_COPIES, as servers allow. */
#define DIR_COPIES 3

static unsigned servers_in(const struct ofs_client *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->npeers; i++)
		n += c->peers[i].e.state == OFS_SERVER_IN;
	return n;
}

/* Directory objects: as many copies as DIR_COPIES and the servers in
 * service allow, a majority of them durable before an answer. */
static void dir_layout(const struct ofs_client *c, struct ofs_attr *a)
{
	unsigned in = servers_in(c);

	a->replicas = (uint8_t)(in < DIR_COPIES ? (in ? in : 1) : DIR_COPIES);
	a->confidence = (uint8_t)(a->replicas / 2 + 1);
}

/*
 * The cluster has no namespace yet (no server knows a root): make a root
 * directory and its dirdata, replicated, and offer it. The server answers
 * with the root it serves - ours, or an older one another client made
 * first, in which case ours is removed.
 */
static int make_root(struct ofs_client *c, struct conn *cn)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle dir, data, used;
	struct ofs_req q = { .op = OFS_OP_SET_ROOT };
	struct timespec ts;
	uint8_t *b = NULL;
	size_t n = 0;
	int64_t birth;
	int rc;

	if (!a)
		return -ENOMEM;
	memset(&used, 0, sizeof(used));
	dir_layout(c, a);
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	rc = obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = obj_create(c, a, a->replicas, NULL, &data);
	if (rc) {
		obj_remove(c, &dir);
		goto out;
	}
	a->type = OFS_OBJ_DIRECTORY;
	memset(&a->backref, 0, sizeof(a->backref));
	a->nparts = 1;
	a->parts[0] = data;
	rc = obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	clock_gettime(CLOCK_REALTIME, &ts);
	q.root = dir;
	q.birth_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (!rc)
		rc = conn_call(cn, &q, &b, &n);
	if (!rc)
		rc = proto_decode_root(b, n, &used, &birth);
	if (rc || !oid_eq(used.oid, dir.oid)) {
		obj_remove(c, &data);
		obj_remove(c, &dir);
	}
	if (!rc && oid_eq(used.oid, dir.oid)) {
		/* Every other server takes it now rather than a gossip round
		 * later: a server lost in that round must not leave the others
		 * without a root (a client would make a second one). Best
		 * effort; a server down now learns it by gossip. */
		q.root = used;
		q.birth_ns = birth;
		for (size_t i = 0; i < c->npeers; i++) {
			struct conn *pc = conn_of(c, c->peers[i].e.sid);
			uint8_t *pb = NULL;
			size_t pn = 0;
			if (pc && conn_is_transport_error(conn_call(pc, &q, &pb, &pn)))
				mark_down(c, c->peers[i].e.sid);
			free(pb);
		}
	}
	if (!rc)
		c->root = used;
out:
	free(b);
	free(a);
	return map_transport(rc);
}

int ofs_client_open(const char *const *addrs, size_t naddrs, struct ofs_client **out)
{
	struct ofs_client *c;
	size_t first = 0;
	int rc = -OFS_EUNREACHABLE;

	if (naddrs == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* The address that connects first goes first (one of a server cut
	 * off costs a connect timeout, not a wait per put); then the rest in
	 * the order given. */
	if (naddrs > 1 && net_connect_race(addrs, naddrs, CONN_CONNECT_MS, &first) != 0)
		first = 0;
	for (size_t k = 0; k < naddrs; k++) {
		size_t i = net_race_nth(k, first);
		struct ofs_req q = { .op = OFS_OP_GET_ROOT };
		struct conn *cn = NULL;
		uint8_t *b = NULL;
		size_t n = 0;

		rc = conn_open(addrs[i], &cn);
		if (rc == -EINVAL) {
			free(c);
			return rc;
		}
		if (rc)
			continue;
		/* The server table first: it names every server we may need. */
		rc = fetch_table(c, cn);
		if (!rc)
			rc = conn_call(cn, &q, &b, &n);
		if (!rc)
			rc = proto_decode_handle_reply(b, n, &c->root);
		else if (rc == -ENOENT)
			rc = make_root(c, cn);
		free(b);
		conn_close(cn);
		if (!rc) {
			*out = c;
			return 0;
		}
		if (!conn_is_transport_error(rc) && rc != -OFS_EUNREACHABLE)
			break;
	}
	ofs_client_close(c);
	return map_transport(rc);
}

void ofs_client_close(struct ofs_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npeers; i++)
		conn_close(c->peers[i].conn);
	free(c->peers);
	free(c);
}

/* ---- directories -------------------------------------------------------- */

int ofs_mkdir(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd, dir, data;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	bool created_dir = false, created_data = false;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EEXIST;     /* mkdir / */
	if (rc)
		goto out;
	/* Directory first, then its dirdata (whose back reference names it),
	 * then the layout, then the entry that makes it visible. */
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	a->backref.owner = r.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
	dir_layout(c, a);
	rc = obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	created_dir = true;
	memset(&a->backref, 0, sizeof(a->backref));
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = obj_create(c, a, a->replicas, NULL, &data);
	if (rc)
		goto out;
	created_data = true;
	a->type = OFS_OBJ_DIRECTORY;
	a->nparts = 1;
	a->parts[0] = data;
	rc = obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	if (rc)
		goto out;
	ent.type = OFS_OBJ_DIRECTORY;
	ent.handle = dir;
	rc = dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, 0, NULL, NULL);
	if (!rc)
		created_dir = created_data = false;   /* now owned by the entry */
out:
	if (created_data)
		obj_remove(c, &data);
	if (created_dir)
		obj_remove(c, &dir);
	resolved_free(&r);
	free(a);
	return rc;
}

struct dlist {
	size_t n, cap;
	char (*names)[OFS_NAME_MAX + 1];
	struct ofs_dirent *ents;
};

static int dlist_add(struct dlist *l, const char *name, const struct ofs_dirent *d)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char (*nn)[OFS_NAME_MAX + 1] = realloc(l->names, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		l->names = nn;
		struct ofs_dirent *ne = realloc(l->ents, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		l->ents = ne;
		l->cap = cap;
	}
	snprintf(l->names[l->n], OFS_NAME_MAX + 1, "%s", name);
	l->ents[l->n++] = *d;
	return 0;
}

/* Every entry of one dirdata object, following the list cursor. */
static int list_dirdata(struct ofs_client *c, const struct ofs_handle *dd, uint32_t max,
			struct dlist *l)
{
	struct ofs_req *q = req_new(OFS_OP_DIRENT_LIST, dd->oid);
	int rc = 0;
	bool more = true;

	if (!q)
		return -ENOMEM;
	q->max = max;
	while (more && !rc) {
		struct ofs_list_reader lr = { 0 };
		struct ofs_dirent d;
		char name[OFS_NAME_MAX + 1];
		uint8_t *b = NULL;
		size_t n = 0;

		rc = call(c, dd, q, &b, &n);
		if (!rc)
			rc = proto_list_open_dirent(&lr, b, n);
		while (!rc && proto_list_next_dirent(&lr, name, &d) == 1) {
			rc = dlist_add(l, name, &d);
			snprintf(q->name, sizeof(q->name), "%s", name);
		}
		more = !rc && lr.more && max == OFS_MAX_LIST;
		free(b);
	}
	free(q);
	return rc;
}

static void dlist_free(struct dlist *l)
{
	free(l->names);
	free(l->ents);
}

/* Entries of several dirdata objects are merged by sorting an index.
 * qsort has no context argument; sort_list is set just before it and the
 * client is used by one thread at a time, but two clients in two threads
 * could race, so the sort holds sort_mu. */
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct dlist *sort_list;   /* guarded by sort_mu */
static int idx_cmp(const void *a, const void *b)
{
	return strcmp(sort_list->names[*(const size_t *)a], sort_list->names[*(const size_t *)b]);
}

int ofs_readdir(struct ofs_client *c, const char *path, ofs_readdir_fn fn, void *arg)
{
	struct resolved r;
	struct dlist l = { 0 };
	size_t *idx = NULL;
	int rc = resolve(c, path, &r);

	if (rc)
		goto out;
	if (r.ent.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = obj_getattr(c, &r.ent.handle, r.pattr);
	if (rc)
		goto out;
	for (uint16_t i = 0; i < r.pattr->nparts && !rc; i++)
		rc = list_dirdata(c, &r.pattr->parts[i], OFS_MAX_LIST, &l);
	if (rc)
		goto out;
	idx = malloc((l.n ? l.n : 1) * sizeof(*idx));
	if (!idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < l.n; i++)
		idx[i] = i;
	if (r.pattr->nparts > 1) {
		pthread_mutex_lock(&sort_mu);
		sort_list = &l;
		qsort(idx, l.n, sizeof(*idx), idx_cmp);
		pthread_mutex_unlock(&sort_mu);
	}
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = fn(l.names[idx[i]], &l.ents[idx[i]], arg);
out:
	free(idx);
	dlist_free(&l);
	resolved_free(&r);
	return rc;
}

int ofs_rmdir(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_attr *da = malloc(sizeof(*da));
	struct ofs_dirent gone;
	char name[OFS_NAME_MAX + 1];
	int rc;

	if (!da)
		return -ENOMEM;
	rc = resolve_parent(c, path, &r, name, &dd);
	if (rc)
		goto out;
	rc = dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &gone);
	if (rc)
		goto out;
	if (gone.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = obj_getattr(c, &gone.handle, da);
	if (rc)
		goto out;
	for (uint16_t i = 0; i < da->nparts && !rc; i++) {
		struct dlist l = { 0 };
		rc = list_dirdata(c, &da->parts[i], 1, &l);
		if (!rc && l.n)
			rc = -ENOTEMPTY;
		dlist_free(&l);
	}
	if (rc)
		goto out;
	rc = dirent_call(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &gone);
	if (rc)
		goto out;
	for (uint16_t i = 0; i < da->nparts; i++)
		obj_remove(c, &da->parts[i]);
	obj_remove(c, &gone.handle);
out:
	resolved_free(&r);
	free(da);
	return rc;
}

/* ---- files -------------------------------------------------------------- */

struct layout {
	uint64_t strip;      /* S */
	uint16_t n;          /* N */
};


/*
 * Move n bytes at dfile offset off in OFS_IO_PIECE requests, keeping
 * PIPE_DEPTH of them in flight so that the transfer of one overlaps the
 * server's disk work on the one before. write: from p; read: into p.
 */
#define PIPE_DEPTH 2

static int dfile_io_one(struct conn *cn, const struct ofs_handle *h,
			bool write, uint64_t off, uint8_t *p, size_t n)
{
	struct ofs_req *q = req_new(write ? OFS_OP_WRITE : OFS_OP_READ, h->oid);
	uint64_t ids[PIPE_DEPTH];
	uint8_t *dst[PIPE_DEPTH];
	size_t len[PIPE_DEPTH];
	int head = 0, inflight = 0, rc = 0;

	if (!q)
		return -ENOMEM;
	while ((n && !rc) || inflight) {
		if (n && !rc && inflight < PIPE_DEPTH) {
			int slot = (head + inflight) % PIPE_DEPTH;
			size_t piece = n < OFS_IO_PIECE ? n : OFS_IO_PIECE;
			q->offset = off;
			if (write) {
				q->data = p;
				q->data_len = piece;
				q->flags = OFS_WRITE_UNSTABLE;
			} else {
				q->length = (uint32_t)piece;
			}
			rc = conn_send(cn, q, &ids[slot]);
			if (rc) {
				if (conn_is_transport_error(rc))
					break;   /* the socket is gone, and the replies */
				continue;
			}
			dst[slot] = p;
			len[slot] = piece;
			inflight++;
			off += piece;
			p += piece;
			n -= piece;
			continue;
		}
		size_t got = 0;
		int r;
		if (write) {
			r = conn_recv(cn, ids[head], NULL, NULL);
		} else {
			r = conn_recv_data(cn, ids[head], dst[head], len[head], &got);
			if (!r && got < len[head])
				r = -EIO;   /* the dfile is shorter than its file says */
		}
		if (r && !rc)
			rc = r;
		head = (head + 1) % PIPE_DEPTH;
		inflight--;
		if (r && conn_is_transport_error(r))
			break;
	}
	free(q);
	return rc;
}

/*
 * Writes go to the primary only (it forwards them; a put whose primary
 * fails is failed). Reads go to the first copy that answers, and move to
 * the next when one does not answer or does not verify; the skipped copy
 * is reported to the server that served the read.
 */
static int dfile_io(struct ofs_client *c, const struct ofs_handle *h, bool write,
		    uint64_t off, uint8_t *p, size_t n)
{
	struct ofs_sid order[OFS_MAX_REPLICAS];
	size_t norder = try_order(c, h, order);
	int rc = -OFS_EUNREACHABLE;
	size_t bad = 0;
	struct ofs_sid badsid[OFS_MAX_REPLICAS];
	const char *badwhy[OFS_MAX_REPLICAS];

	int waited_ms = 0;

	for (size_t i = 0; i < norder; i++) {
		struct conn *cn = conn_of(c, order[i]);
		rc = cn ? dfile_io_one(cn, h, write, off, p, n) : -ECONNREFUSED;
		if (rc == -OFS_EMOVING && waited_ms < MOVE_WAIT_MS) {
			/* Held still while a copy moves: a moment, then again. */
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000000L };
			nanosleep(&ts, NULL);
			waited_ms += 50;
			i--;
			continue;
		}
		if (rc == -OFS_ENOOBJ && i + 1 < norder) {
			badsid[bad] = order[i];
			badwhy[bad++] = "copy moved away";
			continue;            /* (a write too: the next copy takes it) */
		}
		if (rc == -OFS_ENOOBJ)
			rc = -ENOENT;
		if (conn_is_transport_error(rc) || rc == -ECONNREFUSED) {
			mark_down(c, order[i]);
			rc = -OFS_EUNREACHABLE;
			badsid[bad] = order[i];
			badwhy[bad++] = "unreachable";
		} else if (!write && (rc == -OFS_ECHECKSUM || rc == -EIO ||
				      ((rc == -ENOENT || rc == -OFS_EBEHIND) && i + 1 < norder))) {
			badsid[bad] = order[i];
			badwhy[bad++] = rc == -EIO ? "short read" :
					rc == -ENOENT ? "copy missing" :
					rc == -OFS_EBEHIND ? "copy behind" : "checksum mismatch on read";
		} else {
			if (!rc)
				for (size_t k = 0; k < bad; k++)
					report(c, order[i], h->oid, badsid[k], badwhy[k]);
			return rc;
		}
		if (write)
			break;
	}
	return map_transport(rc);
}

/* Unstable writes (see OFS_WRITE_UNSTABLE): a put fills new dfiles this
 * way and makes them durable with one COMMIT each (dfile_commit). */
static int dfile_write(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		       const uint8_t *p, size_t n)
{
	return dfile_io(c, h, true, off, (uint8_t *)p, n);
}

static int dfile_read(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		      uint8_t *p, size_t n)
{
	return dfile_io(c, h, false, off, p, n);
}

/* Make a dfile's unstable writes durable; *size receives its length. */
static int dfile_commit(struct ofs_client *c, const struct ofs_handle *h, uint64_t *size)
{
	struct ofs_req *q = req_new(OFS_OP_COMMIT, h->oid);
	struct ofs_write_reply wr = { 0 };
	uint8_t *b = NULL;
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = call(c, h, q, &b, &n);
	if (!rc)
		rc = proto_decode_write_reply(b, n, &wr);
	if (!rc)
		*size = wr.size;
	free(b);
	free(q);
	return rc;
}

/* Bytes of a file of `size` bytes that land in dfile k. */
static uint64_t dfile_len(const struct layout *lo, uint64_t size, uint16_t k)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t rest = size % round, start = (uint64_t)k * lo->strip;
	uint64_t len = size / round * lo->strip;

	if (rest > start)
		len += rest - start < lo->strip ? rest - start : lo->strip;
	return len;
}

/* How many bytes to move per round: whole stripes, about ROUND_PER_DFILE
 * per dfile (several pipelined requests), at most ROUND_MAX in all. */
#define ROUND_PER_DFILE (4 * (uint64_t)OFS_IO_PIECE)
#define ROUND_MAX ((uint64_t)64 << 20)
static size_t round_bytes(const struct layout *lo)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t want = ROUND_PER_DFILE * lo->n > ROUND_MAX ? ROUND_MAX : ROUND_PER_DFILE * lo->n;
	uint64_t per = want / round;

	return (size_t)(round * (per ? per : 1));
}

/* Scatter buf (file bytes [base, base+len), base a multiple of the round)
 * into per-dfile runs and write each. */
static int write_round(struct ofs_client *c, const struct layout *lo,
		       const struct ofs_handle *dfiles, uint64_t base,
		       const uint8_t *buf, size_t len, uint8_t *scratch)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t dbase = base / round * lo->strip;
	int rc = 0;

	if (lo->n == 1)
		return dfile_write(c, &dfiles[0], base, buf, len);
	for (uint16_t k = 0; k < lo->n && !rc; k++) {
		size_t got = 0;
		for (uint64_t x = (uint64_t)k * lo->strip; x < len; x += round) {
			size_t take = len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
			memcpy(scratch + got, buf + x, take);
			got += take;
		}
		if (got)
			rc = dfile_write(c, &dfiles[k], dbase, scratch, got);
	}
	return rc;
}

static int read_round(struct ofs_client *c, const struct layout *lo,
		      const struct ofs_handle *dfiles, uint64_t base,
		      uint8_t *buf, size_t len, uint8_t *scratch)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t dbase = base / round * lo->strip;
	int rc = 0;

	if (lo->n == 1)
		return dfile_read(c, &dfiles[0], base, buf, len);
	for (uint16_t k = 0; k < lo->n && !rc; k++) {
		size_t want = 0, at = 0;
		for (uint64_t x = (uint64_t)k * lo->strip; x < len; x += round)
			want += len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
		if (!want)
			continue;
		rc = dfile_read(c, &dfiles[k], dbase, scratch, want);
		for (uint64_t x = (uint64_t)k * lo->strip; !rc && x < len; x += round) {
			size_t take = len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
			memcpy(buf + x, scratch + at, take);
			at += take;
		}
	}
	return rc;
}

/* Read exactly n bytes from fd unless it ends first; *got says how many. */
static int read_fd(int fd, uint8_t *buf, size_t n, size_t *got)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, buf + done, n - done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static int write_fd(int fd, const uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t r = write(fd, buf, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

struct put_src {
	int fd;                 /* read from fd, or */
	const uint8_t *buf;     /* from memory */
	size_t len, at;
};

static int src_read(struct put_src *s, uint8_t *out, size_t n, size_t *got)
{
	if (s->fd >= 0)
		return read_fd(s->fd, out, n, got);
	*got = s->len - s->at < n ? s->len - s->at : n;
	memcpy(out, s->buf + s->at, *got);
	s->at += *got;
	return 0;
}

static int check_put_opts(const struct ofs_put_opts *o, struct layout *lo, uint8_t *rep,
			  uint8_t *conf)
{
	*rep = o && o->replicas ? o->replicas : 1;
	*conf = o && o->confidence ? o->confidence : *rep;
	lo->strip = o && o->strip_size ? o->strip_size : OFS_DEFAULT_STRIP;
	lo->n = o && o->stripes ? o->stripes : 1;
	if (*rep > OFS_MAX_REPLICAS || *conf > *rep)
		return -EINVAL;
	if (lo->n > OFS_MAX_STRIPES || lo->strip < 4096 || lo->strip > OFS_IO_PIECE)
		return -EINVAL;
	return 0;
}

static int put_once(struct ofs_client *c, struct put_src *src, const char *path,
		    const struct ofs_put_opts *o)
{
	struct resolved r;
	struct ofs_handle dd, mf;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent, old;
	struct layout lo;
	char name[OFS_NAME_MAX + 1];
	uint8_t *buf = NULL, *scratch = NULL;
	uint8_t rep, conf;
	uint64_t size = 0;
	uint16_t made = 0;
	bool have_mf = false, replaced = false;
	size_t rb;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	rc = check_put_opts(o, &lo, &rep, &conf);
	if (rc)
		goto out;
	rc = resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EISDIR;
	if (rc)
		goto out;
	rc = dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &old);
	if (rc == 0 && old.type == OFS_OBJ_DIRECTORY)
		rc = -EISDIR;
	else if (rc == -ENOENT)
		rc = 0;
	if (rc)
		goto out;

	/* A new metafile and its dfiles, invisible until the entry switch. */
	a->type = OFS_OBJ_METAFILE;
	a->mode = 0644;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	a->backref.owner = r.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
	snprintf(a->dist, sizeof(a->dist), "simple_stripe");
	a->strip_size = (uint32_t)lo.strip;
	a->replicas = rep;
	a->confidence = conf;
	if (servers_in(c) < rep) {
		rc = -OFS_ENOSERVERS;
		goto out;
	}
	rc = obj_create(c, a, rep, NULL, &mf);
	if (rc)
		goto out;
	have_mf = true;
	for (made = 0; made < lo.n; made++) {
		struct ofs_attr *d = calloc(1, sizeof(*d));
		if (!d) {
			rc = -ENOMEM;
			goto out;
		}
		d->type = OFS_OBJ_DFILE;
		d->mode = 0644;
		d->uid = a->uid;
		d->gid = a->gid;
		d->backref.owner = mf.oid;
		d->backref.stripe = made;
		d->replicas = rep;
		d->confidence = conf;
		/* File stuffing: the first dfile on the metafile's primary. */
		rc = obj_create(c, d, rep, made == 0 ? &mf.sids[0] : NULL, &a->parts[made]);
		free(d);
		if (rc)
			goto out;
	}
	a->nparts = lo.n;

	rb = round_bytes(&lo);
	buf = malloc(rb);
	scratch = lo.n > 1 ? malloc(rb) : NULL;
	if (!buf || (lo.n > 1 && !scratch)) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		size_t got = 0;
		rc = src_read(src, buf, rb, &got);
		if (rc || got == 0)
			break;
		rc = write_round(c, &lo, a->parts, size, buf, got, scratch);
		if (rc)
			break;
		size += got;
		if (got < rb)
			break;
	}
	if (rc)
		goto out;
	/* Every dfile durable, and exactly as long as the layout says, before
	 * the metafile records the size and the name shows the file. */
	for (uint16_t k = 0; k < lo.n && !rc; k++) {
		uint64_t got = 0;
		rc = dfile_commit(c, &a->parts[k], &got);
		if (!rc && got != dfile_len(&lo, size, k))
			rc = -EIO;
	}
	if (rc)
		goto out;
	a->size = size;
	rc = obj_setattr(c, &mf, OFS_ATTR_SIZE | OFS_ATTR_LAYOUT, a);
	if (rc)
		goto out;
	ent.type = OFS_OBJ_METAFILE;
	ent.handle = mf;
	rc = dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, OFS_DIRENT_REPLACE,
			 &replaced, &old);
	if (rc)
		goto out;
	have_mf = false;
	made = 0;
	/* (the entry it replaced: not this file itself, which a create
	 * retried after its primary died finds in place) */
	if (replaced && !oid_eq(old.handle.oid, mf.oid))
		file_destroy(c, &old.handle);   /* the name already shows the new file */
out:
	for (uint16_t i = 0; i < made; i++)
		obj_remove(c, &a->parts[i]);
	if (have_mf)
		obj_remove(c, &mf);
	free(scratch);
	free(buf);
	resolved_free(&r);
	free(a);
	return rc;
}

/*
 * A put's bytes go to each new dfile's primary only: when that server dies
 * during the put, the put is made again from the start, as a new file, if
 * its source can be read again (memory, or a file that seeks), at most
 * PUT_ATTEMPTS times. Its objects of the attempt before were removed by
 * it (best effort: scrub reports what a crash leaves, repair collects it),
 * and the server that stopped answering is tried last from then on.
 */
#define PUT_ATTEMPTS 3

static int put(struct ofs_client *c, struct put_src *src, const char *path,
	       const struct ofs_put_opts *o)
{
	off_t start = src->fd >= 0 ? lseek(src->fd, 0, SEEK_CUR) : 0;
	int rc;

	for (int attempt = 1;; attempt++) {
		rc = put_once(c, src, path, o);
		if (rc != -OFS_EUNREACHABLE || attempt == PUT_ATTEMPTS || start < 0)
			return rc;
		if (src->fd >= 0 && lseek(src->fd, start, SEEK_SET) != start)
			return rc;
		src->at = 0;
	}
}

int ofs_put_fd(struct ofs_client *c, int fd, const char *path, const struct ofs_put_opts *o)
{
	struct put_src s = { .fd = fd };

	return put(c, &s, path, o);
}

int ofs_put_buf(struct ofs_client *c, const void *buf, size_t len, const char *path,
		const struct ofs_put_opts *o)
{
	struct put_src s = { .fd = -1, .buf = buf, .len = len };

	return put(c, &s, path, o);
}

struct get_sink {
	int fd;                 /* write to fd, or */
	uint8_t *buf;           /* into memory */
	size_t len;
};

static int get_once(struct ofs_client *c, const char *path, struct get_sink *sink, uint64_t *total)
{
	struct resolved r;
	struct ofs_attr *a = malloc(sizeof(*a));
	struct layout lo;
	uint8_t *buf = NULL, *scratch = NULL;
	size_t rb;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	rc = resolve(c, path, &r);
	if (rc)
		goto out;
	if (r.ent.type != OFS_OBJ_METAFILE) {
		rc = -EISDIR;
		goto out;
	}
	rc = obj_getattr(c, &r.ent.handle, a);
	if (rc)
		goto out;
	if (a->type != OFS_OBJ_METAFILE || a->nparts == 0 || a->strip_size == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	lo.strip = a->strip_size;
	lo.n = a->nparts;
	if (sink->fd < 0) {
		sink->buf = malloc(a->size ? (size_t)a->size : 1);
		if (!sink->buf) {
			rc = -ENOMEM;
			goto out;
		}
		sink->len = (size_t)a->size;
	}
	rb = round_bytes(&lo);
	buf = malloc(rb);
	scratch = lo.n > 1 ? malloc(rb) : NULL;
	if (!buf || (lo.n > 1 && !scratch)) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t at = 0; at < a->size && !rc; at += rb) {
		size_t n = a->size - at < rb ? (size_t)(a->size - at) : rb;
		uint8_t *dst = sink->fd < 0 ? sink->buf + at : buf;
		rc = read_round(c, &lo, a->parts, at, dst, n, scratch);
		if (!rc && sink->fd >= 0)
			rc = write_fd(sink->fd, buf, n);
	}
	if (!rc)
		*total = a->size;
out:
	free(scratch);
	free(buf);
	resolved_free(&r);
	free(a);
	return rc;
}

int ofs_get_fd(struct ofs_client *c, const char *path, int fd, uint64_t *len)
{
	struct stat st;
	bool rewindable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	uint64_t total = 0;
	int rc = 0;

	for (int attempt = 0; attempt < GET_RETRIES; attempt++) {
		struct get_sink sink = { .fd = fd };
		rc = get_once(c, path, &sink, &total);
		/* The file was replaced under us (its objects are gone): start
		 * over on the new version when the output can be rewound. */
		if (rc != -ENOENT || !rewindable || attempt == GET_RETRIES - 1)
			break;
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
			rc = -errno;
			break;
		}
	}
	if (!rc && len)
		*len = total;
	return rc;
}

int ofs_get_buf(struct ofs_client *c, const char *path, void **buf, size_t *len)
{
	uint64_t total = 0;
	int rc = 0;

	for (int attempt = 0; attempt < GET_RETRIES; attempt++) {
		struct get_sink sink = { .fd = -1 };
		rc = get_once(c, path, &sink, &total);
		if (!rc) {
			*buf = sink.buf;
			*len = sink.len;
			return 0;
		}
		free(sink.buf);
		if (rc != -ENOENT)
			break;
	}
	return rc;
}

int ofs_stat(struct ofs_client *c, const char *path, struct ofs_attr *attr, struct ofs_handle *h)
{
	struct resolved r;
	int rc = resolve(c, path, &r);

	if (!rc)
		rc = obj_getattr(c, &r.ent.handle, attr);
	if (!rc && h)
		*h = r.ent.handle;
	resolved_free(&r);
	return rc;
}

int ofs_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *attr)
{
	return obj_getattr(c, h, attr);
}

/* Does the file mf's back reference still name entry `name` of dir? (A
 * rename that took the file elsewhere has rewritten it.) */
static bool still_named(struct ofs_client *c, const struct ofs_handle *mf, struct ofs_oid dir,
			const char *name)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	bool yes = a && obj_getattr(c, mf, a) == 0 && oid_eq(a->backref.owner, dir) &&
		   strcmp(a->backref.name, name) == 0;

	free(a);
	return yes;
}

int ofs_unlink(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	int rc;

	memset(&ent, 0, sizeof(ent));
	rc = resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EISDIR;
	if (!rc)
		rc = dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &ent);
	if (!rc && ent.type != OFS_OBJ_METAFILE)
		rc = -EISDIR;
	if (!rc) {
		struct ofs_dirent gone = ent;
		bool failed_over = false;
		rc = dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &ent,
				    &failed_over);
		if (rc == -ENOENT && failed_over && still_named(c, &gone.handle, r.ent.handle.oid, name)) {
			/* The copy asked first removed the entry and died before
			 * it answered: this remove is done; its file goes too. */
			ent = gone;
			rc = 0;
		}
	}
	if (!rc && ent.type == OFS_OBJ_METAFILE)
		file_destroy(c, &ent.handle);
	resolved_free(&r);
	return rc;
}

void ofs_client_set_fault(struct ofs_client *c, const char *point)
{
	snprintf(c->fault, sizeof(c->fault), "%s", point ? point : "");
}

/* Fault injection (ofs_client_set_fault): die here, as a crash would. */
static void fault_point(struct ofs_client *c, const char *name)
{
	if (c->fault[0] && strcmp(c->fault, name) == 0)
		raise(SIGKILL);
}

int ofs_rename(struct ofs_client *c, const char *oldpath, const char *newpath)
{
	struct resolved ro, rn, rt;
	struct ofs_handle odd, ndd;
	struct ofs_dirent ent, old;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	char oname[OFS_NAME_MAX + 1], nname[OFS_NAME_MAX + 1], target[OFS_PATH_MAX + 1];
	bool replaced = false;
	int rc;

	memset(&ro, 0, sizeof(ro));
	memset(&rn, 0, sizeof(rn));
	memset(&rt, 0, sizeof(rt));
	if (!a)
		return -ENOMEM;
	rc = resolve_parent(c, oldpath, &ro, oname, &odd);
	if (!rc)
		rc = dirent_call(c, OFS_OP_DIRENT_LOOKUP, &odd, oname, NULL, 0, NULL, &ent);
	if (rc)
		goto out;
	/* An existing directory as the target: move into it. */
	snprintf(target, sizeof(target), "%s", newpath);
	if (resolve(c, newpath, &rt) == 0 && rt.ent.type == OFS_OBJ_DIRECTORY) {
		if (snprintf(target, sizeof(target), "%s/%s", newpath, oname) >= (int)sizeof(target)) {
			rc = -ENAMETOOLONG;
			goto out;
		}
	}
	rc = resolve_parent(c, target, &rn, nname, &ndd);
	if (rc == -EBUSY)
		rc = -EEXIST;
	if (rc)
		goto out;
	/* A directory may not move below itself. */
	if (ent.type == OFS_OBJ_DIRECTORY) {
		for (size_t i = 0; i <= rn.depth; i++)
			if (oid_eq(rn.chain[i], ent.handle.oid)) {
				rc = -EINVAL;
				goto out;
			}
	}
	if (oid_eq(odd.oid, ndd.oid) && strcmp(oname, nname) == 0)
		goto out;     /* renaming onto itself */
	rc = dirent_call(c, OFS_OP_DIRENT_CREATE, &ndd, nname, &ent,
			 ent.type == OFS_OBJ_METAFILE ? OFS_DIRENT_REPLACE : 0, &replaced, &old);
	if (rc)
		goto out;
	fault_point(c, "rename-entry-made");
	a->backref.owner = rn.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", nname);
	rc = obj_setattr(c, &ent.handle, OFS_ATTR_BACKREF, a);
	if (!rc)
		fault_point(c, "rename-backref-set");
	if (!rc)
		rc = dirent_call(c, OFS_OP_DIRENT_REMOVE, &odd, oname, NULL, 0, NULL, NULL);
	if (!rc && replaced && !oid_eq(old.handle.oid, ent.handle.oid))
		file_destroy(c, &old.handle);
out:
	resolved_free(&ro);
	resolved_free(&rn);
	resolved_free(&rt);
	free(a);
	return rc;
}

/* ---- repair: giving objects without an owner a place ----------------------- */

int ofs_link_object(struct ofs_client *c, const char *path, const struct ofs_handle *h,
		    uint8_t type)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	if (type != OFS_OBJ_METAFILE && type != OFS_OBJ_DIRECTORY) {
		free(a);
		return -EINVAL;
	}
	rc = resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EEXIST;
	if (!rc) {
		/* The entry first (flags 0: an existing name is -EEXIST), then
		 * the back reference that says where the object now lives. */
		ent.type = type;
		ent.handle = *h;
		rc = dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, 0, NULL, NULL);
	}
	if (!rc) {
		a->backref.owner = r.ent.handle.oid;
		snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
		rc = obj_setattr(c, h, OFS_ATTR_BACKREF, a);
	}
	resolved_free(&r);
	free(a);
	return rc;
}

int ofs_adopt_part(struct ofs_client *c, const char *path, const struct ofs_handle *part,
		   uint8_t type, uint64_t size)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle owner;
	int rc;

	if (!a)
		return -ENOMEM;
	if ((type != OFS_OBJ_DFILE && type != OFS_OBJ_DIRDATA) || part->nsids == 0) {
		free(a);
		return -EINVAL;
	}
	/* An owner around the part (one stripe, or one dirdata), with as many
	 * copies as the part has; linked, then the part's back reference. */
	a->type = type == OFS_OBJ_DFILE ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY;
	a->mode = type == OFS_OBJ_DFILE ? 0644 : 0755;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	if (type == OFS_OBJ_DFILE) {
		snprintf(a->dist, sizeof(a->dist), "simple_stripe");
		a->strip_size = 1u << 20;
		a->replicas = part->nsids;
		a->confidence = part->nsids;
	} else {
		dir_layout(c, a);
	}
	rc = obj_create(c, a, a->replicas ? a->replicas : part->nsids, NULL, &owner);
	if (rc) {
		free(a);
		return rc;
	}
	a->nparts = 1;
	a->parts[0] = *part;
	a->size = type == OFS_OBJ_DFILE ? size : 0;
	rc = obj_setattr(c, &owner, (type == OFS_OBJ_DFILE ? OFS_ATTR_SIZE : 0) | OFS_ATTR_LAYOUT, a);
	if (!rc)
		rc = ofs_link_object(c, path, &owner, a->type);
	if (!rc) {
		memset(&a->backref, 0, sizeof(a->backref));
		a->backref.owner = owner.oid;
		a->backref.stripe = 0;
		rc = obj_setattr(c, part, OFS_ATTR_BACKREF, a);
	} else {
		obj_remove(c, &owner);
	}
	free(a);
	return rc;
}

int ofs_copy_part(struct ofs_client *c, const struct ofs_handle *part, uint8_t type,
		  uint64_t size, const struct ofs_backref *br, struct ofs_handle *out)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	uint8_t *buf = NULL;
	uint64_t got = 0;
	int rc;

	if (!a)
		return -ENOMEM;
	if (part->nsids == 0 || (type != OFS_OBJ_DFILE && type != OFS_OBJ_DIRDATA)) {
		free(a);
		return -EINVAL;
	}
	if (type == OFS_OBJ_DIRDATA)
		size = 0;                    /* a new dirdata starts empty */
	a->type = type;
	a->mode = type == OFS_OBJ_DFILE ? 0644 : 0755;
	a->uid = (uint32_t)getuid();
	a->gid = (uint32_t)getgid();
	a->backref = *br;
	a->replicas = part->nsids;
	a->confidence = (uint8_t)(part->nsids / 2 + 1);   /* a majority, as remade dirdata */
	rc = obj_create(c, a, part->nsids, NULL, out);
	free(a);
	if (rc)
		return rc;
	if (size && !(buf = malloc(size < OFS_MAX_IO ? (size_t)size : OFS_MAX_IO)))
		rc = -ENOMEM;
	for (uint64_t off = 0; !rc && off < size;) {
		size_t n = size - off < OFS_MAX_IO ? (size_t)(size - off) : OFS_MAX_IO;
		rc = dfile_read(c, part, off, buf, n);
		if (!rc)
			rc = dfile_write(c, out, off, buf, n);
		off += n;
	}
	if (!rc && type == OFS_OBJ_DFILE)
		rc = dfile_commit(c, out, &got);
	if (!rc && got != size)
		rc = -EIO;                   /* (the source changed size meanwhile) */
	free(buf);
	if (rc)
		obj_remove(c, out);
	return rc;
}

int ofs_remove_part(struct ofs_client *c, const struct ofs_handle *part)
{
	return obj_remove(c, part);
}

int ofs_set_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		  const struct ofs_dirent *d, uint32_t flags)
{
	return dirent_call(c, OFS_OP_DIRENT_CREATE, dirdata, name, d, flags, NULL, NULL);
}

int ofs_unlink_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		     struct ofs_dirent *removed)
{
	return dirent_call(c, OFS_OP_DIRENT_REMOVE, dirdata, name, NULL, 0, NULL, removed);
}

int ofs_set_backref(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_backref *br)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	a->backref = *br;
	rc = obj_setattr(c, h, OFS_ATTR_BACKREF, a);
	free(a);
	return rc;
}

int ofs_dirdata_for(const struct ofs_attr *dir, const char *name, struct ofs_handle *dd)
{
	return dirdata_for(dir, name, dd);
}

int ofs_setattr_handle(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a)
{
	return obj_setattr(c, h, mask, a);
}

int ofs_recreate(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_attr *a)
{
	struct ofs_req *q = req_new(OFS_OP_CREATE, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	if (h->nsids == 0 || h->nsids > OFS_MAX_REPLICAS) {
		free(q);
		return -EINVAL;
	}
	q->attr = *a;
	q->attr.nsids = h->nsids;
	memcpy(q->attr.sids, h->sids, sizeof(h->sids));
	if (!q->attr.replicas)
		q->attr.replicas = h->nsids;
	rc = call(c, h, q, NULL, NULL);
	free(q);
	return rc;
}

int ofs_relink_entry(struct ofs_client *c, const struct ofs_handle *dir, const char *name,
		     const struct ofs_dirent *d, uint32_t flags)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle dd;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = obj_getattr(c, dir, a);
	if (!rc && a->type != OFS_OBJ_DIRECTORY)
		rc = -ENOTDIR;
	if (!rc)
		rc = dirdata_for(a, name, &dd);
	if (!rc)
		rc = dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, d, flags, NULL, NULL);
	free(a);
	return rc;
}
