/*
 * replica.c - a pool of connections to peers and parallel forwarding
 * (see replica.h).
 *
 * Lock: replicator.mu guards the pool (idle connections by SID). A
 * connection taken from the pool belongs to one forwarding call until it
 * is put back, so no lock is held while it is used.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/conn.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "server/replica.h"

#define POOL_MAX 64            /* idle connections kept in all */
#define RESOLVE_ASK 3          /* peers asked about an unknown SID */
#define RESOLVE_TIMEOUT_MS 2000
#define GONE_MAX 64            /* unreachable peers remembered */

struct idle {
	struct ofs_sid sid;
	struct conn *c;
};

/* A peer that stopped answering, and since when. */
struct gone {
	struct ofs_sid sid;
	int64_t since_ns;
};

struct replicator {
	struct sidtab *t;
	pthread_mutex_t mu;
	struct idle pool[POOL_MAX];    /* guarded by mu */
	size_t npool;                  /* guarded by mu */
	struct gone gone[GONE_MAX];    /* guarded by mu */
	size_t ngone;                  /* guarded by mu */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Unreachable peers. A peer that failed to connect, to take a request or
 * to answer one in time is not sent to again until the server table says
 * it was heard from after that (gossip asks every peer about once a
 * second): while a server is cut off, each change costs it a stale record
 * at once instead of a timeout (see replica.h).
 */
static void mark_gone(struct replicator *r, struct ofs_sid sid)
{
	size_t i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < r->ngone && !sid_eq(r->gone[i].sid, sid); i++)
		;
	if (i == r->ngone && r->ngone < GONE_MAX)
		r->gone[r->ngone++].sid = sid;
	if (i < r->ngone) {
		char hex[OFS_OID_HEX];
		r->gone[i].since_ns = now_ns();
		sid_to_hex(sid, hex);
		log_info("peer %s does not answer: changes skip it until it is heard from", hex);
	}
	pthread_mutex_unlock(&r->mu);
}

/* sid answered: it is not skipped any more. */
static void answered(struct replicator *r, struct ofs_sid sid)
{
	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->ngone; i++)
		if (sid_eq(r->gone[i].sid, sid))
			r->gone[i] = r->gone[--r->ngone];
	pthread_mutex_unlock(&r->mu);
}

/* Is sid skipped now: marked gone (a request to it failed), and not
 * heard from since - or, with silent_too, its gossip ping unanswered
 * (sidtab_silent)? */
static bool is_gone(struct replicator *r, struct ofs_sid sid, bool silent_too)
{
	struct ofs_server e;
	int64_t since = 0;
	size_t i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < r->ngone; i++)
		if (sid_eq(r->gone[i].sid, sid))
			since = r->gone[i].since_ns;
	pthread_mutex_unlock(&r->mu);
	if (since && sidtab_get(r->t, sid, &e) == 0 && e.last_seen_ns <= since)
		return true;
	return silent_too && sidtab_silent(r->t, sid);
}

/* Failures that say the peer itself is not there (not an answer of it). */
static bool says_gone(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -EHOSTUNREACH ||
	       rc == -ENETUNREACH || rc == -OFS_EUNREACHABLE || rc == -OFS_ELATE;
}

int replica_open(struct sidtab *t, struct replicator **out)
{
	struct replicator *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->t = t;
	pthread_mutex_init(&r->mu, NULL);
	*out = r;
	return 0;
}

void replica_close(struct replicator *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->npool; i++)
		conn_close(r->pool[i].c);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/*
 * Resolution: a SID not in our table (a handle names a server we have not
 * heard of yet) is asked of up to RESOLVE_ASK servers we know, by one
 * table exchange each, until one knows it. 0 once the table has it.
 */
static int resolve(struct replicator *r, struct ofs_sid sid, struct ofs_server *e)
{
	struct ofs_server *mine = NULL;
	struct ofs_sid self = sidtab_self(r->t);
	size_t n = 0, asked = 0;
	int rc = sidtab_snapshot(r->t, &mine, &n);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (size_t i = 0; i < n && asked < RESOLVE_ASK && rc; i++) {
		struct ofs_req q = { .op = OFS_OP_SERVERS, .servers = mine, .nservers = n };
		struct ofs_server *theirs = NULL;
		struct ofs_sid who;
		struct conn *c = NULL;
		uint8_t *b = NULL;
		size_t bn = 0, nt = 0;

		if (sid_eq(mine[i].sid, self) || conn_open_sid(mine[i].address, &mine[i].sid, &c))
			continue;
		asked++;
		conn_set_timeout(c, RESOLVE_TIMEOUT_MS);
		/* (its answer speaks for itself only: sidtab.h) */
		if (conn_call(c, &q, &b, &bn) == 0 &&
		    proto_decode_servers(b, bn, true, &who, &theirs, &nt) == 0 &&
		    sid_eq(who, mine[i].sid) && sidtab_merge_from(r->t, theirs, nt, &who) >= 0)
			rc = sidtab_get(r->t, sid, e);
		free(theirs);
		free(b);
		conn_close(c);
	}
	free(mine);
	if (!rc) {
		char hex[OFS_OID_HEX];
		sid_to_hex(sid, hex);
		log_info("resolved server %s at %s", hex, e->address);
	}
	return rc;
}

static int take(struct replicator *r, struct ofs_sid sid, struct conn **c)
{
	struct ofs_server e;
	int rc;

	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->npool;) {
		if (sid_eq(r->pool[i].sid, sid)) {
			struct conn *pc = r->pool[i].c;
			r->pool[i] = r->pool[--r->npool];
			if (conn_idle_dead(pc)) {
				/* its server restarted since: a new connection
				 * (a change sent into this one would be lost) */
				conn_close(pc);
				continue;
			}
			*c = pc;
			pthread_mutex_unlock(&r->mu);
			return 0;
		}
		i++;
	}
	pthread_mutex_unlock(&r->mu);
	rc = sidtab_get(r->t, sid, &e);
	if (rc == -ENOENT)
		rc = resolve(r, sid, &e);
	if (rc)
		return -OFS_EUNREACHABLE;     /* a server nobody we asked knows */
	rc = conn_open_within_sid(e.address, &sid, REPLICA_CONNECT_MS, c);
	if (rc)
		return rc;
	conn_set_timeout(*c, REPLICA_TIMEOUT_MS);
	return 0;
}

static void give_back(struct replicator *r, struct ofs_sid sid, struct conn *c)
{
	pthread_mutex_lock(&r->mu);
	if (r->npool < POOL_MAX) {
		r->pool[r->npool].sid = sid;
		r->pool[r->npool].c = c;
		r->npool++;
		c = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	conn_close(c);
}

/* How long to wait for an answer to a request with deadline_ms (0: none). */
static int wait_ms(uint64_t deadline_ms)
{
	uint64_t now = time_now_ms();

	if (!deadline_ms)
		return REPLICA_TIMEOUT_MS;
	return (int)((deadline_ms > now ? deadline_ms - now : 0) + REPLICA_GRACE_MS);
}

/*
 * Which of sids to skip: those gone. A change with a deadline (a
 * client's) skips the silent ones too - but none at all when what is left
 * is fewer than need, the copies it must reach to count: a server just
 * healed from a partition finds every peer silent until gossip hears from
 * them, and skipping them would refuse a change they would take.
 */
static void pick_skipped(struct replicator *r, uint64_t deadline_ms, size_t need,
			 const struct ofs_sid *sids, size_t n, bool *skip)
{
	size_t left = n;

	for (size_t i = 0; i < n; i++) {
		skip[i] = is_gone(r, sids[i], deadline_ms != 0);
		left -= skip[i];
	}
	if (deadline_ms && left < need)
		memset(skip, 0, n * sizeof(*skip));
}

static void send_wire(struct replicator *r, uint16_t wire_op, const uint8_t *body, size_t len,
		      uint64_t deadline_ms, size_t need, const struct ofs_sid *sids, size_t n,
		      struct replica_sent *sent, struct replica_result *res)
{
	bool skip[OFS_MAX_REPLICAS];

	memset(sent, 0, sizeof(*sent));
	memset(res, 0, n * sizeof(*res));
	sent->n = n;
	pick_skipped(r, deadline_ms, need, sids, n, skip);
	for (size_t i = 0; i < n; i++) {
		sent->sids[i] = sids[i];
		if (skip[i]) {
			res[i].rc = -OFS_EUNREACHABLE;
			continue;
		}
		res[i].rc = take(r, sids[i], &sent->c[i]);
		if (!res[i].rc) {
			conn_set_timeout(sent->c[i], wait_ms(deadline_ms));
			res[i].rc = conn_send_raw_by(sent->c[i], wire_op, body, len, deadline_ms,
						     &sent->id[i]);
		}
		if (says_gone(res[i].rc))
			mark_gone(r, sids[i]);
		if (res[i].rc && sent->c[i]) {
			conn_close(sent->c[i]);
			sent->c[i] = NULL;
		}
	}
}

void replica_send(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		  const struct ofs_sid *sids, size_t n, struct replica_sent *sent,
		  struct replica_result *res)
{
	send_wire(r, (uint16_t)(op | OFS_OP_FORWARDED), body, len, 0, 0, sids, n, sent, res);
}

void replica_send_by(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		     uint64_t deadline_ms, size_t need, const struct ofs_sid *sids, size_t n,
		     struct replica_sent *sent, struct replica_result *res)
{
	send_wire(r, (uint16_t)(op | OFS_OP_FORWARDED), body, len, deadline_ms, need, sids, n,
		  sent, res);
}

void replica_collect(struct replicator *r, struct replica_sent *sent, struct replica_result *res)
{
	for (size_t i = 0; i < sent->n; i++) {
		struct conn *c = sent->c[i];
		if (!c)
			continue;
		res[i].rc = conn_recv(c, sent->id[i], &res[i].body, &res[i].len);
		if (says_gone(res[i].rc))
			mark_gone(r, sent->sids[i]);
		else if (!conn_is_transport_error(res[i].rc))
			answered(r, sent->sids[i]);
		if (conn_is_transport_error(res[i].rc))
			conn_close(c);
		else
			give_back(r, sent->sids[i], c);
		sent->c[i] = NULL;
	}
}

/* Questions that change nothing (lib/ops.def: ASKS): asked again when a
 * pooled connection turns out dead (its server restarted since), since
 * nothing can have been applied twice. */
static bool read_only(uint16_t op)
{
	return (op_flags(op) & OPF_ASKS) != 0;
}

/* Close every idle connection to sid (after one of them was found dead). */
static void drop_pooled(struct replicator *r, struct ofs_sid sid)
{
	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->npool;) {
		if (sid_eq(r->pool[i].sid, sid)) {
			conn_close(r->pool[i].c);
			r->pool[i] = r->pool[--r->npool];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&r->mu);
}

int replica_forward(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		    const struct ofs_sid *sids, size_t n, struct replica_result *res)
{
	return replica_forward_by(r, op, body, len, 0, 0, sids, n, res);
}

int replica_forward_by(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		       uint64_t deadline_ms, size_t need, const struct ofs_sid *sids, size_t n,
		       struct replica_result *res)
{
	struct replica_sent sent;

	/* Send to a batch first, so the servers work in parallel, then
	 * collect; OFS_MAX_REPLICAS at a time. */
	for (size_t at = 0; at < n; at += OFS_MAX_REPLICAS) {
		size_t m = n - at < OFS_MAX_REPLICAS ? n - at : OFS_MAX_REPLICAS;
		replica_send_by(r, op, body, len, deadline_ms, need, sids + at, m, &sent, res + at);
		replica_collect(r, &sent, res + at);
	}
	for (size_t i = 0; i < n && read_only(op); i++) {
		if (!conn_is_transport_error(res[i].rc))
			continue;
		drop_pooled(r, sids[i]);
		free(res[i].body);
		replica_send(r, op, body, len, sids + i, 1, &sent, res + i);
		replica_collect(r, &sent, res + i);
	}
	return 0;
}

int replica_request(struct replicator *r, struct ofs_sid sid, uint16_t op, const uint8_t *body,
		    size_t len, struct replica_result *res)
{
	struct replica_sent sent;

	send_wire(r, op, body, len, 0, 0, &sid, 1, &sent, res);
	replica_collect(r, &sent, res);
	return 0;
}

int replica_freeze(struct replicator *r, struct ofs_oid oid, const struct ofs_sid *to, size_t n,
		     uint32_t ms, struct ofs_sid holder)
{
	struct replica_result rr[OFS_MAX_REPLICAS + 1];
	struct ofs_req *q;
	struct wbuf body;
	int rc;

	if (n == 0)
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->op = OFS_OP_FREEZE;
	q->oid = oid;
	q->ms = ms;
	q->sid = holder;
	memset(rr, 0, sizeof(rr));
	wbuf_init(&body);
	rc = proto_encode_req(&body, q);
	if (!rc)
		rc = replica_forward(r, OFS_OP_FREEZE, body.data, body.len, to, n, rr);
	wbuf_free(&body);
	for (size_t i = 0; i < n; i++) {   /* (every body freed) */
		if (rr[i].rc && !rc)
			rc = rr[i].rc;
		free(rr[i].body);
	}
	free(q);
	return rc;
}
