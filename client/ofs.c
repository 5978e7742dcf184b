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
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ofs_impl.h"
#include "lib/cap.h"
#include "lib/conn.h"
#include "lib/optable.h"
#include "lib/tls.h"
#include "lib/timefmt.h"

/* ---- servers and calls --------------------------------------------------- */

int cl_map_transport(int rc)
{
	if (conn_is_transport_error(rc) || rc == -ETIMEDOUT || rc == -ECONNREFUSED)
		return -OFS_EUNREACHABLE;
	return rc;
}

int cl_change_ms(uint16_t op)
{
	if (!(op_flags(op) & OPF_CHANGES))
		return 0;              /* (a question: lib/ops.def) */
	if (op == OFS_OP_WRITE)
		return CL_WRITE_MS;
	if (op == OFS_OP_COMMIT)
		return CONN_REPLY_MS - CL_LATE_MS;
	return CL_CHANGE_MS;
}

void cl_bound(struct conn *cn, struct ofs_req *q)
{
	if (cn)
		conn_set_timeout(cn, cl_answer_ms(q->op));
	q->deadline_ms = cl_change_ms(q->op) ? time_now_ms() + (uint64_t)cl_change_ms(q->op) : 0;
}

int cl_answer_ms(uint16_t op)
{
	switch (op) {
	case OFS_OP_GETATTR: case OFS_OP_GETATTR_MANY: case OFS_OP_GET_SMALL: case OFS_OP_READ:
	case OFS_OP_KV_GET: case OFS_OP_KV_LIST: case OFS_OP_DIRENT_LOOKUP: case OFS_OP_DIRENT_LIST:
		return CL_ANSWER_MS;
	default:
		return cl_change_ms(op) ? cl_change_ms(op) + CL_LATE_MS : CONN_REPLY_MS;
	}
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
static int fetch_table(struct ofs_client *c, struct conn *cn, struct ofs_sid *answered)
{
	struct ofs_server *e = NULL;
	struct ofs_sid who;
	size_t n = 0;
	int64_t now = 0;
	int rc = conn_table(cn, &who, &e, &n);

	if (!rc && answered)
		*answered = who;

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
		if (!k->conn && conn_open_sid(k->e.address, &k->e.sid, &k->conn)) {
			k->down = true;
			continue;
		}
		asked++;
		/* (fetch_table may move c->peers: k is not used after it) */
		if (fetch_table(c, c->peers[i].conn, NULL) == 0)
			p = find_peer(c, sid);
	}
	return p;
}

struct conn *cl_conn_of(struct ofs_client *c, struct ofs_sid sid)
{
	struct peer *p = peer_for(c, sid);

	c->conn_err = -OFS_EUNREACHABLE;
	if (!p)
		return NULL;
	/* (the server meant: another one at its address is refused) */
	if (!p->conn && (c->conn_err = conn_open_sid(p->e.address, &p->e.sid, &p->conn)) != 0) {
		p->down = true;
		return NULL;
	}
	return p->conn;
}

bool cl_moving_wait(struct cl_moving *m)
{
	if (!m->started) {
		backoff_init(&m->bo, MOVE_WAIT_FIRST_MS, MOVE_WAIT_CAP_MS);
		m->started = true;
	}
	if (m->bo.waited_ms >= MOVE_WAIT_MS)
		return false;
	backoff_sleep(&m->bo);
	return true;
}

void cl_mark_down(struct ofs_client *c, struct ofs_sid sid)
{
	struct peer *p = find_peer(c, sid);

	if (p) {
		p->down = true;
		conn_close(p->conn);
		p->conn = NULL;
	}
}

/* Tell a server that a copy was skipped, for its log. Best effort. */
void cl_report(struct ofs_client *c, struct ofs_sid to, struct ofs_oid oid,
		   struct ofs_sid bad, const char *why)
{
	struct ofs_req q = { .op = OFS_OP_REPORT, .oid = oid, .sid = bad };
	struct conn *cn = cl_conn_of(c, to);

	snprintf(q.reason, sizeof(q.reason), "%s", why);
	if (cn && conn_call(cn, &q, NULL, NULL) && conn_is_transport_error(0))
		cl_mark_down(c, to);
}

/* The copies of h in the order to try them: as listed, but servers known
 * to be down last. */
size_t cl_try_order(struct ofs_client *c, const struct ofs_handle *h, struct ofs_sid *out)
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
static int call_cov(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		    struct ofs_oid cover, uint8_t **body, size_t *blen, bool *failed_over)
{
	struct ofs_sid order[OFS_MAX_REPLICAS], skipped[OFS_MAX_REPLICAS];
	const char *why[OFS_MAX_REPLICAS];
	size_t n = cl_try_order(c, h, order), nskipped = 0;
	int rc = -OFS_EUNREACHABLE;
	struct cl_moving moving = { .started = false };
	struct ofs_req *qc = NULL;
	bool renewed = false;

	if (failed_over)
		*failed_over = false;
	if ((c->caps && !oid_is_zero(cover)) || cl_change_ms(q->op)) {
		/* A user's request carries its capability, a change its
		 * deadline (a copy of q does). */
		qc = malloc(sizeof(*qc) + CAP_MAX_LEN);
		if (!qc)
			return -ENOMEM;
		*qc = *q;
		qc->cap = (const uint8_t *)(qc + 1);
		qc->cap_len = c->caps && !oid_is_zero(cover) ?
			      (uint16_t)cl_caps_for(c, cover, (uint8_t *)(qc + 1)) : 0;
		q = qc;
	}
	for (size_t i = 0; i < n; i++) {
		struct conn *cn = cl_conn_of(c, order[i]);
		if (!cn) {
			rc = -OFS_EUNREACHABLE;
			skipped[nskipped] = order[i];
			/* (a server not the one meant is said as such: the
			 * answering server logs it, docs/design.md "Security") */
			why[nskipped++] = c->conn_err == -OFS_EWRONGPEER ? ofs_strerror(c->conn_err)
									: "unreachable";
			continue;
		}
		if (qc)
			cl_bound(cn, qc);
		else
			conn_set_timeout(cn, cl_answer_ms(q->op));   /* (a question as given) */
		rc = conn_call(cn, q, body, blen);
		if (qc && qc->cap_len && CL_CAP_RENEW(rc) && !renewed) {
			/* Expired, or under a key rotated away: a new one, then again. */
			renewed = true;
			if (cl_caps_renew(c, cover) == 0)
				qc->cap_len = (uint16_t)cl_caps_for(c, cover, (uint8_t *)(qc + 1));
			i--;
			continue;
		}
		if (!rc && c->caps)
			cl_caps_take(c, h, cn);
		if (rc == -OFS_EMOVING && cl_moving_wait(&moving)) {
			/* Held still while a copy moves: a moment, then again. */
			i--;
			continue;
		}
		if (conn_is_transport_error(rc)) {
			cl_mark_down(c, order[i]);
			if (failed_over)
				*failed_over = true;
			skipped[nskipped] = order[i];
			why[nskipped++] = rc == -OFS_EWRONGPEER ? ofs_strerror(rc) : "unreachable";
			rc = -OFS_EUNREACHABLE;
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
				cl_report(c, order[i], q->oid, skipped[k], why[k]);
		break;
	}
	free(qc);
	return rc == -OFS_ENOOBJ ? -ENOENT : rc;
}

/* As call_cov, with the capability for q's own object (none with a
 * GETATTR: its reply grants one). */
static int call_ex(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		   uint8_t **body, size_t *blen, bool *failed_over)
{
	struct ofs_oid none = { { 0 } };

	return call_cov(c, h, q, q->op == OFS_OP_GETATTR ? none : q->oid, body, blen, failed_over);
}

int cl_call(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		uint8_t **body, size_t *blen)
{
	return call_ex(c, h, q, body, blen, NULL);
}

struct ofs_req *cl_req_new(uint16_t op, struct ofs_oid oid)
{
	struct ofs_req *q = calloc(1, sizeof(*q));

	if (q) {
		q->op = op;
		q->oid = oid;
	}
	return q;
}

int cl_obj_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a)
{
	return cl_obj_getattr_showing(c, h, a, (struct ofs_oid){ { 0 } });
}

int cl_obj_getattr_showing(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
			   struct ofs_oid dir)
{
	struct ofs_req *q = cl_req_new(OFS_OP_GETATTR, h->oid);
	uint8_t *b = NULL;
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = call_cov(c, h, q, dir, &b, &n, NULL);
	if (!rc)
		rc = proto_decode_attr_reply(b, n, a);
	if (!rc)
		cl_caps_parts(c, h->oid, a);
	free(b);
	free(q);
	return rc;
}

int cl_get_small(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
		 uint8_t **bytes)
{
	struct ofs_req *q = cl_req_new(OFS_OP_GET_SMALL, h->oid);
	const uint8_t *d = NULL;
	uint8_t *b = NULL;
	size_t n = 0, dn = 0;
	int rc;

	*bytes = NULL;
	if (!q)
		return -ENOMEM;
	rc = cl_call(c, h, q, &b, &n);
	if (!rc)
		rc = proto_decode_small_reply(b, n, a, &d, &dn);
	if (!rc)
		cl_caps_parts(c, h->oid, a);
	if (!rc && d) {
		*bytes = malloc(dn ? dn : 1);
		if (*bytes)
			memcpy(*bytes, d, dn);
		else
			rc = -ENOMEM;
	}
	free(b);
	free(q);
	return rc;
}

void cl_owner(uint32_t *uid, uint32_t *gid)
{
	const struct ident *me = conn_identity();

	if (!me) {
		*uid = (uint32_t)getuid();
		*gid = (uint32_t)getgid();
	} else if (me->role == IDENT_USER) {
		*uid = me->uid;
		*gid = me->gids[0];
	} else {
		*uid = 0;
		*gid = 0;
	}
}

int cl_obj_setattr(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a)
{
	struct ofs_req *q = cl_req_new(OFS_OP_SETATTR, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	q->mask = mask;
	q->attr = *a;
	rc = cl_call(c, h, q, NULL, NULL);
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

/* Where a new object oid with `copies` copies goes (first on `fixed` if
 * given), servers known down last so that a live one is primary. */
static int place_new(struct ofs_client *c, struct ofs_oid oid, unsigned copies,
		     const struct ofs_sid *fixed, struct ofs_handle *t)
{
	struct place_server *ps = calloc(c->npeers ? c->npeers : 1, sizeof(*ps));
	struct ofs_sid chosen[OFS_MAX_REPLICAS], order[OFS_MAX_REPLICAS];
	int got;

	if (!ps)
		return -ENOMEM;
	got = place_choose(PLACE_DEFAULT, oid, ps, placeable(c, ps), copies, fixed, chosen);
	free(ps);
	if (got < 0)
		return got;
	if ((unsigned)got < copies)
		return -OFS_ENOSERVERS;
	memset(t, 0, sizeof(*t));
	t->oid = oid;
	t->nsids = (uint8_t)got;
	memcpy(t->sids, chosen, (size_t)got * sizeof(chosen[0]));
	cl_try_order(c, t, order);
	memcpy(t->sids, order, (size_t)got * sizeof(order[0]));
	return 0;
}

/* Send a create (q, for the copies t) to each copy in turn until one
 * answers; it acts as primary. The request stays the same, copies in the
 * same order: a copy that a dead primary already forwarded the create to
 * finds it made by this very create (and would refuse one that differs:
 * EEXIST). *b, *n: the reply. cover: the capability renewed on
 * ECAPEXPIRED (zero: the request carries none). */
static int send_create(struct ofs_client *c, struct ofs_req *q, struct ofs_handle *t,
		       struct ofs_oid cover, uint8_t *capbuf, uint8_t **b, size_t *n)
{
	int rc = -OFS_EUNREACHABLE;

	for (int attempt = 0; attempt < t->nsids; attempt++) {
		struct conn *cn = cl_conn_of(c, t->sids[attempt]);
		cl_bound(cn, q);
		rc = cn ? conn_call(cn, q, b, n) : -ECONNREFUSED;
		if (q->cap_len && CL_CAP_RENEW(rc) && cl_caps_renew(c, cover) == 0) {
			q->cap_len = (uint16_t)cl_caps_for(c, cover, capbuf);
			cl_bound(cn, q);
			rc = conn_call(cn, q, b, n);
		}
		if (!rc && c->caps) {
			t->oid = q->oid;
			cl_caps_take(c, t, cn);
		}
		if (!conn_is_transport_error(rc))
			break;
		cl_mark_down(c, t->sids[attempt]);
		rc = -OFS_EUNREACHABLE;
	}
	return rc;
}

/*
 * Create an object with `copies` copies where placement puts them (first
 * on `fixed` if given) and fill *h with its handle. The OID is chosen here,
 * since placement depends on it. When the chosen primary does not answer,
 * the next copy becomes primary (the unreachable one stays in the list, so
 * the new primary records it as stale). -OFS_ENOSERVERS when fewer servers
 * are in service than copies asked.
 */
int cl_obj_create(struct ofs_client *c, const struct ofs_attr *a, unsigned copies,
		      const struct ofs_sid *fixed, struct ofs_handle *h)
{
	struct ofs_req *q = cl_req_new(OFS_OP_CREATE, (struct ofs_oid){ { 0 } });
	struct ofs_handle t;
	uint8_t *b = NULL, capbuf[CAP_MAX_LEN];
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = cl_new_oid(&q->oid);
	if (!rc)
		rc = place_new(c, q->oid, copies, fixed, &t);
	if (rc)
		goto out;
	q->attr = *a;
	if (c->caps && (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA)) {
		/* Made under a file or directory: through its capability. */
		q->cap = capbuf;
		q->cap_len = (uint16_t)cl_caps_for(c, a->backref.owner, capbuf);
	}
	q->attr.nsids = t.nsids;
	memcpy(q->attr.sids, t.sids, sizeof(t.sids));
	if (!q->attr.replicas)
		q->attr.replicas = t.nsids;
	rc = send_create(c, q, &t, a->backref.owner, capbuf, &b, &n);
	if (!rc)
		rc = proto_decode_oid_reply(b, n, &t.oid);
	if (!rc && c->caps && q->cap_len)
		cl_caps_alias(c, a->backref.owner, t.oid);
	else if (!rc && c->caps)
		cl_caps_parent(c, t.oid, a->backref.owner);   /* (a file's or directory's) */
	if (!rc)
		*h = t;
	else if (rc != -EEXIST && rc != -EINVAL && rc != -ENOMEM)
		cl_obj_remove(c, &t);     /* what copies made of it, best effort */
out:
	free(b);
	free(q);
	return cl_map_transport(rc);
}

int cl_create_small(struct ofs_client *c, struct ofs_attr *a, unsigned copies,
		    const void *bytes, size_t len, struct ofs_handle *h)
{
	struct ofs_req *q = cl_req_new(OFS_OP_CREATE_SMALL, (struct ofs_oid){ { 0 } });
	struct ofs_handle t, df;
	uint8_t *b = NULL;
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	if (len > OFS_SMALL_MAX) {
		rc = -EFBIG;
		goto out;
	}
	rc = cl_new_oid(&q->oid);
	if (!rc)
		rc = cl_new_oid(&df.oid);
	if (!rc)
		rc = place_new(c, q->oid, copies, NULL, &t);
	if (rc)
		goto out;
	/* File stuffing: the dfile on the metafile's servers, in its order. */
	df.nsids = t.nsids;
	memcpy(df.sids, t.sids, sizeof(t.sids));
	a->nsids = t.nsids;
	memcpy(a->sids, t.sids, sizeof(t.sids));
	a->nparts = 1;
	a->parts[0] = df;
	a->size = len;
	if (!a->replicas)
		a->replicas = t.nsids;
	q->attr = *a;
	q->data = bytes;
	q->data_len = len;
	rc = send_create(c, q, &t, (struct ofs_oid){ { 0 } }, NULL, &b, &n);
	if (!rc)
		rc = proto_decode_oid_reply(b, n, &t.oid);
	if (!rc && !oid_eq(t.oid, q->oid))
		rc = -OFS_ECORRUPT;      /* (the server made another file) */
	if (!rc && c->caps)
		cl_caps_parent(c, t.oid, a->backref.owner);
	if (!rc)
		*h = t;
	else if (rc != -EEXIST && rc != -EINVAL && rc != -ENOMEM) {
		cl_obj_remove(c, &df);    /* what copies made of it, best effort */
		cl_obj_remove(c, &t);
	}
out:
	free(b);
	free(q);
	return cl_map_transport(rc);
}

int cl_obj_remove(struct ofs_client *c, const struct ofs_handle *h)
{
	struct ofs_req *q = cl_req_new(OFS_OP_REMOVE, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	rc = cl_call(c, h, q, NULL, NULL);
	free(q);
	return rc;
}

/*
 * A remove that needs nothing more from its caller: the object is gone
 * (ENOENT), or its primary removed it and noted every copy that did not
 * (OFS_EQUORUM: fewer copies than the confidence answered - one down, one
 * that no longer held it - and those copies are told to finish it, and
 * catch up by removing).
 */
static bool removed_or_noted(int rc)
{
	return rc == 0 || rc == -ENOENT || rc == -OFS_EQUORUM;
}

/* Remove a file's dfiles, then its metafile. Missing parts are fine. A
 * dfile that no copy could remove keeps the metafile, so that what is
 * left is a whole file that no name reaches (an orphan scrub reports),
 * never a metafile naming bytes that are gone. */
int cl_file_destroy(struct ofs_client *c, const struct ofs_handle *mf)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = cl_obj_getattr(c, mf, a);
	if (rc == 0) {
		for (uint16_t i = 0; i < a->nparts; i++) {
			int r = cl_obj_remove(c, &a->parts[i]);
			if (!removed_or_noted(r) && !rc)
				rc = r;
		}
	}
	if (rc == -ENOENT)
		rc = 0;
	if (!rc) {
		rc = cl_obj_remove(c, mf);
		if (removed_or_noted(rc))
			rc = 0;
	}
	free(a);
	return rc;
}

/* The dirdata object that holds name in directory dir (attrs da). */
int cl_dirdata_for(const struct ofs_attr *da, const char *name, struct ofs_handle *dd)
{
	if (da->type != OFS_OBJ_DIRECTORY)
		return -ENOTDIR;
	if (da->nparts == 0)
		return -OFS_ECORRUPT;
	*dd = da->parts[ofs_name_hash(name) % da->nparts];
	return 0;
}

/* A dirent call on dd. by: the object whose capability it carries (NULL:
 * the directory's, reaching dd; an entry's own REMOVE for a removal in a
 * directory sticky for this user). */
static int dirent_call_ex(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
			  const char *name, const struct ofs_dirent *d, uint32_t flags,
			  bool *present, struct ofs_dirent *out, bool *failed_over,
			  const struct ofs_oid *by)
{
	struct ofs_req *q = cl_req_new(op, dd->oid);
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
	rc = call_cov(c, dd, q, by ? *by : dd->oid, &b, &n, failed_over);
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

int cl_dirent_call(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
		       const char *name, const struct ofs_dirent *d, uint32_t flags,
		       bool *present, struct ofs_dirent *out)
{
	return dirent_call_ex(c, op, dd, name, d, flags, present, out, NULL, NULL);
}

/* ---- resolution --------------------------------------------------------- */

void cl_resolved_free(struct resolved *r)
{
	free(r->pattr);
	r->pattr = NULL;
}

/* A directory's attributes: from the directories walked lately (when
 * *cached is not NULL: then set if so), else asked (and remembered). */
static int dir_attr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
		    bool *cached)
{
	int rc;

	if (cached && cl_dcache_attr(c, h->oid, a)) {
		*cached = true;
		return 0;
	}
	rc = cl_obj_getattr(c, h, a);
	if (!rc && cached)
		cl_dcache_put_attr(c, h->oid, a);
	return rc;
}

/* Walk p's first n components. On success r->ent is the object the n-th
 * component names (the root for n = 0). cached: through the directories
 * walked lately (NULL: every step asked). */
static int walk(struct ofs_client *c, const struct ofs_path *p, size_t n, struct resolved *r,
		bool *cached)
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
		struct ofs_dirent next;

		if (cur.type != OFS_OBJ_DIRECTORY)
			return -ENOTDIR;
		r->parent = cur.handle;
		if (cached && cl_dcache_name(c, cur.handle.oid, p->comp[i], &next)) {
			/* (r->pattr: resolve_parent fills it, for the last one) */
			*cached = true;
			cur = next;
			r->chain[i + 1] = cur.handle.oid;
			continue;
		}
		rc = dir_attr(c, &cur.handle, r->pattr, cached);
		if (rc)
			return rc == -ENOENT ? -ENOENT : rc;
		rc = cl_dirdata_for(r->pattr, p->comp[i], &dd);
		if (rc)
			return rc;
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, p->comp[i], NULL, 0, NULL, &cur);
		if (rc)
			return rc;
		if (cached)
			cl_dcache_put_name(c, r->parent.oid, p->comp[i], &cur);
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
int cl_resolve(struct ofs_client *c, const char *path, struct resolved *r)
{
	struct ofs_path *p;
	int rc = parse_path(path, &p);

	if (rc)
		return rc;
	rc = walk(c, p, p->n, r, NULL);
	free(p);
	return rc;
}

static int resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd, bool *cached)
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
	rc = walk(c, p, p->n - 1, r, cached);
	if (!rc && r->ent.type != OFS_OBJ_DIRECTORY)
		rc = -ENOTDIR;
	if (!rc)
		rc = dir_attr(c, &r->ent.handle, r->pattr, cached);
	if (!rc)
		rc = cl_dirdata_for(r->pattr, p->comp[p->n - 1], dd);
	if (!rc)
		snprintf(name, OFS_NAME_MAX + 1, "%s", p->comp[p->n - 1]);
	free(p);
	return rc;
}

/* Resolve the parent of path (which must be a directory) and return the
 * last name; -EEXIST-free: the entry itself is not looked up. */
int cl_resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd)
{
	return resolve_parent(c, path, r, name, dd, NULL);
}

int cl_resolve_parent_cached(struct ofs_client *c, const char *path, struct resolved *r,
			     char name[OFS_NAME_MAX + 1], struct ofs_handle *dd, bool *cached)
{
	*cached = false;
	return resolve_parent(c, path, r, name, dd, cached);
}

/* ---- open and close ----------------------------------------------------- */

/* How many copies directories get: up to DIR_COPIES, as servers allow. */
#define DIR_COPIES 3

unsigned cl_servers_in(const struct ofs_client *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->npeers; i++)
		n += c->peers[i].e.state == OFS_SERVER_IN;
	return n;
}

/* Directory objects: as many copies as DIR_COPIES and the servers in
 * service allow, a majority of them durable before an answer. */
void cl_dir_layout(const struct ofs_client *c, struct ofs_attr *a)
{
	unsigned in = cl_servers_in(c);

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
	if (c->caps) {
		free(a);           /* (a user: the root is an admin's to make) */
		return -EACCES;
	}
	memset(&used, 0, sizeof(used));
	cl_dir_layout(c, a);
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	cl_owner(&a->uid, &a->gid);
	rc = cl_obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = cl_obj_create(c, a, a->replicas, NULL, &data);
	if (rc) {
		cl_obj_remove(c, &dir);
		goto out;
	}
	a->type = OFS_OBJ_DIRECTORY;
	memset(&a->backref, 0, sizeof(a->backref));
	a->nparts = 1;
	a->parts[0] = data;
	rc = cl_obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	clock_gettime(CLOCK_REALTIME, &ts);
	q.root = dir;
	q.birth_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (!rc)
		rc = conn_call(cn, &q, &b, &n);
	if (!rc)
		rc = proto_decode_root(b, n, &used, &birth);
	if (rc || !oid_eq(used.oid, dir.oid)) {
		cl_obj_remove(c, &data);
		cl_obj_remove(c, &dir);
	}
	if (!rc && oid_eq(used.oid, dir.oid)) {
		/* Every other server takes it now rather than a gossip round
		 * later: a server lost in that round must not leave the others
		 * without a root (a client would make a second one). Best
		 * effort; a server down now learns it by gossip. */
		q.root = used;
		q.birth_ns = birth;
		for (size_t i = 0; i < c->npeers; i++) {
			struct conn *pc = cl_conn_of(c, c->peers[i].e.sid);
			uint8_t *pb = NULL;
			size_t pn = 0;
			if (pc && conn_is_transport_error(conn_call(pc, &q, &pb, &pn)))
				cl_mark_down(c, c->peers[i].e.sid);
			free(pb);
		}
	}
	if (!rc)
		c->root = used;
out:
	free(b);
	free(a);
	return cl_map_transport(rc);
}

static struct tls_conf *identity;   /* ofs_client_identity's, for the process */

int ofs_client_identity(const char *iddir, bool insecure, char *why)
{
	const char *ins = getenv("OFS_INSECURE");
	int rc;

	why[0] = '\0';
	if (!iddir || !*iddir)
		iddir = getenv("OFS_IDENTITY");
	if (!iddir || !*iddir) {
		if (insecure || (ins && !strcmp(ins, "1"))) {
			conn_security(NULL, true);
			return 0;
		}
		snprintf(why, TLS_WHY_MAX, "no identity: set OFS_IDENTITY=IDDIR (or OFS_INSECURE=1)");
		return -OFS_ENOIDENT;
	}
	if (identity)
		return -EBUSY;
	rc = tls_conf_load(iddir, &identity, why);
	if (!rc)
		conn_security(identity, false);
	/* Servers are checked against the cluster's CRL too (conn.h) */
	if (!rc && (rc = conn_trust_dir(iddir)) != 0)
		snprintf(why, TLS_WHY_MAX, "%s/ca.pem: %s", iddir, ofs_strerror(rc));
	return rc;
}

int ofs_client_open(const char *const *addrs, size_t naddrs, struct ofs_client **out)
{
	struct ofs_client *c;
	size_t first = 0;
	int rc = -OFS_EUNREACHABLE, wrong = 0;

	if (naddrs == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (cl_is_user() && cl_caps_new(&c->caps)) {
		free(c);
		return -ENOMEM;
	}
	/* The address that connects first goes first (one of a server cut
	 * off costs a connect timeout, not a wait per put); then the rest in
	 * the order given. */
	if (naddrs > 1 && net_connect_race(addrs, naddrs, CONN_CONNECT_MS, &first) != 0)
		first = 0;
	for (size_t k = 0; k < naddrs; k++) {
		size_t i = net_race_nth(k, first);
		struct ofs_req q = { .op = OFS_OP_GET_ROOT };
		struct conn *cn = NULL;
		struct ofs_sid who;
		struct peer *p;
		uint8_t *b = NULL;
		size_t n = 0;

		rc = conn_open(addrs[i], &cn);
		if (rc == -EINVAL) {
			ofs_client_close(c);
			return rc;
		}
		if (rc)
			continue;
		/* The server table first: it names every server we may need. */
		rc = fetch_table(c, cn, &who);
		if (!rc)
			rc = conn_call(cn, &q, &b, &n);
		if (!rc)
			rc = proto_decode_handle_reply(b, n, &c->root);
		else if (rc == -ENOENT)
			rc = make_root(c, cn);
		free(b);
		/* (the connection stays, as that server's: one handshake fewer) */
		p = rc ? NULL : find_peer(c, who);
		if (p && !p->conn)
			p->conn = cn;
		else
			conn_close(cn);
		if (!rc) {
			*out = c;
			return 0;
		}
		if (rc == -OFS_EWRONGPEER)
			wrong = rc;
		if (!conn_is_transport_error(rc) && rc != -OFS_EUNREACHABLE)
			break;
	}
	ofs_client_close(c);
	rc = cl_map_transport(rc);
	/* (none answered, and one was not the server meant: say that) */
	return rc == -OFS_EUNREACHABLE && wrong ? wrong : rc;
}

void ofs_client_close(struct ofs_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npeers; i++)
		conn_close(c->peers[i].conn);
	free(c->peers);
	free(c->pause_dir);
	cl_caps_free(c->caps);
	cl_dcache_clear(c);
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
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EEXIST;     /* mkdir / */
	if (!rc)
		rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (rc)
		goto out;
	/* Directory first, then its dirdata (whose back reference names it),
	 * then the layout, then the entry that makes it visible. */
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	cl_owner(&a->uid, &a->gid);
	a->backref.owner = r.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
	cl_dir_layout(c, a);
	rc = cl_obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	created_dir = true;
	memset(&a->backref, 0, sizeof(a->backref));
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = cl_obj_create(c, a, a->replicas, NULL, &data);
	if (rc)
		goto out;
	created_data = true;
	a->type = OFS_OBJ_DIRECTORY;
	a->nparts = 1;
	a->parts[0] = data;
	rc = cl_obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	if (rc)
		goto out;
	ent.type = OFS_OBJ_DIRECTORY;
	ent.handle = dir;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, 0, NULL, NULL);
	if (!rc)
		created_dir = created_data = false;   /* now owned by the entry */
out:
	if (created_data)
		cl_obj_remove(c, &data);
	if (created_dir)
		cl_obj_remove(c, &dir);
	cl_resolved_free(&r);
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
	struct ofs_req *q = cl_req_new(OFS_OP_DIRENT_LIST, dd->oid);
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

		rc = cl_call(c, dd, q, &b, &n);
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
	int rc = cl_resolve(c, path, &r);

	if (rc)
		goto out;
	if (r.ent.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = cl_obj_getattr(c, &r.ent.handle, r.pattr);
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
	cl_resolved_free(&r);
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

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!da)
		return -ENOMEM;
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc)
		goto out;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &gone);
	if (rc)
		goto out;
	if (gone.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &r.ent.handle, &gone.handle);
	if (!rc)
		rc = cl_obj_getattr(c, &gone.handle, da);
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
	{
		struct ofs_oid by = gone.handle.oid;
		rc = dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &gone, NULL,
				    cl_caps_sticky(c, r.ent.handle.oid) ? &by : NULL);
	}
	if (rc)
		goto out;
	for (uint16_t i = 0; i < da->nparts; i++)
		cl_obj_remove(c, &da->parts[i]);
	cl_obj_remove(c, &gone.handle);
out:
	cl_resolved_free(&r);
	free(da);
	return rc;
}

int ofs_stat(struct ofs_client *c, const char *path, struct ofs_attr *attr, struct ofs_handle *h)
{
	struct resolved r;
	int rc = cl_resolve(c, path, &r);

	if (!rc)
		rc = cl_obj_getattr(c, &r.ent.handle, attr);
	if (!rc && h)
		*h = r.ent.handle;
	cl_resolved_free(&r);
	return rc;
}

int ofs_chmod(struct ofs_client *c, const char *path, uint32_t mode)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct resolved r;
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!a)
		return -ENOMEM;
	if (mode & ~07777u) {
		free(a);
		return -EINVAL;
	}
	rc = cl_resolve(c, path, &r);
	a->mode = mode;
	if (!rc)
		rc = cl_obj_setattr(c, &r.ent.handle, OFS_ATTR_MODE, a);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

int ofs_chown(struct ofs_client *c, const char *path, uint32_t uid, uint32_t gid, bool keep_gid)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct resolved r;
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!a)
		return -ENOMEM;
	rc = cl_resolve(c, path, &r);
	if (!rc && keep_gid)
		rc = cl_obj_getattr(c, &r.ent.handle, a);
	a->uid = uid;
	if (!keep_gid)
		a->gid = gid;
	if (!rc)
		rc = cl_obj_setattr(c, &r.ent.handle, OFS_ATTR_OWNER, a);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

uint64_t ofs_client_sent(const struct ofs_client *c, uint16_t op)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->npeers; i++)
		n += conn_sent(c->peers[i].conn, op);
	return n;
}

int ofs_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *attr)
{
	return cl_obj_getattr(c, h, attr);
}

/* GETATTR_MANY to one server for objects idx[0..n) of hs: the statuses
 * into rcs (those it answered), attributes into out. */
static int attrs_from(struct ofs_client *c, struct ofs_sid sid, const struct ofs_handle *hs,
		      const size_t *idx, size_t n, struct ofs_attr *out, int *rcs)
{
	struct conn *cn = cl_conn_of(c, sid);
	struct ofs_req *q = cl_req_new(OFS_OP_GETATTR_MANY, (struct ofs_oid){ { 0 } });
	uint8_t oids[OFS_GETATTR_MANY_MAX * OFS_OID_LEN], *b = NULL;
	struct ofs_attr *a = malloc(n * sizeof(*a));
	int32_t st[OFS_GETATTR_MANY_MAX];
	size_t blen = 0;
	int rc;

	if (!q || !a) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(oids + i * OFS_OID_LEN, hs[idx[i]].oid.b, OFS_OID_LEN);
	q->data = oids;
	q->data_len = n * OFS_OID_LEN;
	rc = cn ? conn_call(cn, q, &b, &blen) : -OFS_EUNREACHABLE;
	if (conn_is_transport_error(rc))
		cl_mark_down(c, sid);
	if (!rc)
		rc = proto_decode_attrs_many(b, blen, st, a, (uint32_t)n);
	for (size_t i = 0; !rc && i < n; i++) {
		rcs[idx[i]] = st[i];
		if (st[i] == 0)
			out[idx[i]] = a[i];
	}
out:
	free(b);
	free(a);
	free(q);
	return rc;
}

int ofs_getattr_many(struct ofs_client *c, const struct ofs_handle *hs, size_t n,
		     struct ofs_attr *out, int *rcs)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct ofs_sid *first = malloc((n ? n : 1) * sizeof(*first));
	bool *sent = calloc(n ? n : 1, sizeof(*sent));
	int rc = idx && first && sent ? 0 : -ENOMEM;

	/* Each object's first copy to try; one without copies is asked of
	 * no one here (the one-by-one pass below says why). */
	for (size_t i = 0; !rc && i < n; i++) {
		struct ofs_sid order[OFS_MAX_REPLICAS];
		rcs[i] = -OFS_EUNREACHABLE;
		if (hs[i].nsids && cl_try_order(c, &hs[i], order))
			first[i] = order[0];
		else
			sent[i] = true;
	}
	/* Each server once per batch of up to OFS_GETATTR_MANY_MAX objects. */
	for (size_t i = 0; !rc && i < n; i++) {
		size_t k = 0;
		if (sent[i])
			continue;
		for (size_t j = i; j < n && k < OFS_GETATTR_MANY_MAX; j++)
			if (!sent[j] && sid_eq(first[j], first[i])) {
				idx[k++] = j;
				sent[j] = true;
			}
		rc = attrs_from(c, first[i], hs, idx, k, out, rcs);
		if (rc != -ENOMEM)
			rc = 0;                  /* (what it did not answer: below) */
	}
	/* What the first copy could not say (down, behind, moved): one by
	 * one, through every copy. */
	for (size_t i = 0; !rc && i < n; i++)
		if (rcs[i] != 0)
			rcs[i] = cl_obj_getattr(c, &hs[i], &out[i]);
	free(idx);
	free(first);
	free(sent);
	return rc;
}

/* Does the file mf's back reference still name entry `name` of dir? (A
 * rename that took the file elsewhere has rewritten it.) */
static bool still_named(struct ofs_client *c, const struct ofs_handle *mf, struct ofs_oid dir,
			const char *name)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	bool yes = a && cl_obj_getattr(c, mf, a) == 0 && oid_eq(a->backref.owner, dir) &&
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
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EISDIR;
	if (!rc)
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &ent);
	if (!rc && ent.type != OFS_OBJ_METAFILE)
		rc = -EISDIR;
	if (!rc)
		rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &r.ent.handle, &ent.handle);
	if (!rc) {
		struct ofs_dirent gone = ent;
		struct ofs_oid by = gone.handle.oid;
		bool failed_over = false;
		rc = dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &ent,
				    &failed_over, cl_caps_sticky(c, r.ent.handle.oid) ? &by : NULL);
		if (rc == -ENOENT && failed_over && still_named(c, &gone.handle, r.ent.handle.oid, name)) {
			/* The copy asked first removed the entry and died before
			 * it answered: this remove is done; its file goes too. */
			ent = gone;
			rc = 0;
		}
	}
	if (!rc && ent.type == OFS_OBJ_METAFILE)
		cl_file_destroy(c, &ent.handle);
	cl_resolved_free(&r);
	return rc;
}

void ofs_client_set_fault(struct ofs_client *c, const char *point)
{
	snprintf(c->fault, sizeof(c->fault), "%s", point ? point : "");
}

/*
 * A test's pause (ofs_client_set_fault): at the step named, the client
 * says so by making the file DIR/paused (its pause dir), and goes on once
 * the test makes DIR/resume (at most 5 minutes later).
 */
void ofs_client_set_pause_dir(struct ofs_client *c, const char *dir)
{
	free(c->pause_dir);
	c->pause_dir = dir && *dir ? strdup(dir) : NULL;
}

void cl_pause_point(struct ofs_client *c, const char *name)
{
	const char *dir = c->pause_dir;
	char paused[4096], resume[4096];
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000L };
	int fd;

	if (!c->fault[0] || strcmp(c->fault, name) != 0 || !dir)
		return;
	snprintf(paused, sizeof(paused), "%s/paused", dir);
	snprintf(resume, sizeof(resume), "%s/resume", dir);
	fd = open(paused, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 5 * 60 * 50 && access(resume, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
}

/* Fault injection (ofs_client_set_fault): die here, as a crash would. */
static void fault_point(struct ofs_client *c, const char *name)
{
	if (c->fault[0] && strcmp(c->fault, name) == 0)
		raise(SIGKILL);
}

/* A user's rename: both directories writable, the object movable (its
 * owner or a writer), and a file it replaces removable. */
static int may_rename(struct ofs_client *c, const struct resolved *ro, const struct resolved *rn,
		      const struct ofs_dirent *ent, const struct ofs_handle *ndd, const char *nname)
{
	struct ofs_dirent there;
	int rc;

	if (!c->caps)
		return 0;
	rc = cl_may(c, &ro->ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may(c, &rn->ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &ro->ent.handle, &ent->handle);
	if (!rc && cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, ndd, nname, NULL, 0, NULL, &there) == 0 &&
	    there.type == OFS_OBJ_METAFILE)
		rc = cl_may_remove(c, &rn->ent.handle, &there.handle);
	return rc;
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

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	memset(&ro, 0, sizeof(ro));
	memset(&rn, 0, sizeof(rn));
	memset(&rt, 0, sizeof(rt));
	if (!a)
		return -ENOMEM;
	rc = cl_resolve_parent(c, oldpath, &ro, oname, &odd);
	if (!rc)
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &odd, oname, NULL, 0, NULL, &ent);
	if (rc)
		goto out;
	/* An existing directory as the target: move into it. */
	snprintf(target, sizeof(target), "%s", newpath);
	if (cl_resolve(c, newpath, &rt) == 0 && rt.ent.type == OFS_OBJ_DIRECTORY) {
		if (snprintf(target, sizeof(target), "%s/%s", newpath, oname) >= (int)sizeof(target)) {
			rc = -ENAMETOOLONG;
			goto out;
		}
	}
	rc = cl_resolve_parent(c, target, &rn, nname, &ndd);
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
	rc = may_rename(c, &ro, &rn, &ent, &ndd, nname);
	if (rc)
		goto out;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &ndd, nname, &ent,
			 ent.type == OFS_OBJ_METAFILE ? OFS_DIRENT_REPLACE : 0, &replaced, &old);
	if (rc)
		goto out;
	fault_point(c, "rename-entry-made");
	a->backref.owner = rn.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", nname);
	rc = cl_obj_setattr(c, &ent.handle, OFS_ATTR_BACKREF, a);
	if (!rc)
		fault_point(c, "rename-backref-set");
	if (!rc) {
		bool failed_over = false;
		struct ofs_oid by = ent.handle.oid;
		rc = dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &odd, oname, NULL, 0, NULL, NULL,
				    &failed_over, cl_caps_sticky(c, ro.ent.handle.oid) ? &by : NULL);
		/* The copy asked first removed the old name and died before it
		 * answered, so the next copy no longer has it: this rename's
		 * own remove, done (as for ofs_remove). */
		if (rc == -ENOENT && failed_over)
			rc = 0;
	}
	if (!rc && replaced && !oid_eq(old.handle.oid, ent.handle.oid))
		cl_file_destroy(c, &old.handle);
out:
	cl_resolved_free(&ro);
	cl_resolved_free(&rn);
	cl_resolved_free(&rt);
	free(a);
	return rc;
}
