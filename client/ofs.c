/*
 * ofs.c - libofs: paths, files and directories over the object protocol
 * (see ofs.h), in parts (ofs_impl.h). This one: its calls to servers -
 * the server table as this client knows it, a request sent to an
 * object's copies in turn until one answers (cl_call), and the object
 * calls made that way: getattr, setattr, create where placement puts the
 * object, remove (a file's parts, then its metafile), dirent calls.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ofs_impl.h"
#include "lib/cap.h"
#include "lib/conn.h"
#include "lib/optable.h"
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
int cl_fetch_table(struct ofs_client *c, struct conn *cn, struct ofs_sid *answered)
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

struct peer *cl_find_peer(struct ofs_client *c, struct ofs_sid sid)
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
	struct peer *p = cl_find_peer(c, sid);
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
		/* (cl_fetch_table may move c->peers: k is not used after it) */
		if (cl_fetch_table(c, c->peers[i].conn, NULL) == 0)
			p = cl_find_peer(c, sid);
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
	struct peer *p = cl_find_peer(c, sid);

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
			struct peer *p = cl_find_peer(c, h->sids[i]);
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
int cl_dirent_call_ex(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
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
	return cl_dirent_call_ex(c, op, dd, name, d, flags, present, out, NULL, NULL);
}
