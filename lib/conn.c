/* conn.c - request/reply over one TCP connection (see conn.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/conn.h"
#include "lib/crl.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"
#include "lib/wire.h"

struct conn {
	char addr[OFS_ADDR_MAX];   /* where to (re)connect */
	struct net_io io;          /* io.fd -1 when not connected */
	uint64_t next_id;          /* request ids */
	uint16_t ops[CONN_WINDOW]; /* op of each request in flight, by id */
	int reply_ms;              /* bound on every wait for a reply */
	int connect_ms;            /* bound on every connect */
	struct wbuf req;           /* reused request body */
	uint8_t rcap[CONN_REPLY_CAP_MAX];  /* the last reply's capability */
	uint16_t rcap_len;
	uint64_t sent[OFS_OP_MAX];  /* requests sent, by op (conn_sent) */
	uint32_t inflight;         /* requests sent and not yet answered */
	bool want_sid;             /* the server meant is known: sid */
	struct ofs_sid sid;
};

static struct tls_conf *sec_conf;   /* set once at start (conn_security) */
static bool sec_plain;
static struct crl *sec_crl;         /* a client's, pulled (conn_trust_crl) */

void conn_security(struct tls_conf *conf, bool plaintext)
{
	sec_conf = conf;
	sec_plain = !conf && plaintext;
}

const struct ident *conn_identity(void)
{
	return sec_conf ? tls_conf_self(sec_conf) : NULL;
}

void conn_trust_crl(struct crl *crl)
{
	sec_crl = crl;
	if (sec_conf)
		tls_conf_set_crl(sec_conf, crl);
}

int conn_trust_dir(const char *iddir)
{
	char crlp[4096], cap[4096];
	struct crl *crl = NULL;
	int rc;

	if (!sec_conf || sec_crl)
		return sec_crl ? 0 : -OFS_ENOIDENT;
	if ((size_t)snprintf(crlp, sizeof(crlp), "%s/revoked", iddir) >= sizeof(crlp) ||
	    (size_t)snprintf(cap, sizeof(cap), "%s/ca.pem", iddir) >= sizeof(cap))
		return -ENAMETOOLONG;
	/* (a list kept in the identity directory, when there is one: else in
	 * memory, learned from the first server asked) */
	rc = access(crlp, F_OK) == 0 ? crl_open(crlp, cap, &crl) : -ENOENT;
	if (rc)
		rc = crl_open(NULL, cap, &crl);
	if (rc)
		return rc;
	conn_trust_crl(crl);      /* (held for the process's life) */
	return 0;
}

const struct ident *conn_peer(const struct conn *c)
{
	return c && c->io.tls ? tls_peer(c->io.tls) : NULL;
}

/* Connect c (net_connect, then the TLS handshake). */
/* One TCP connect and TLS handshake (see connect_io). */
static int connect_once(struct conn *c)
{
	int rc = net_connect(c->addr, c->connect_ms, &c->io.fd);

	if (rc || !sec_conf)
		return rc;
	/* (a peer that accepted and then says nothing - a server stopped, whose
	 * kernel still completes the TCP connect - is given the handshake's
	 * bound, not TLS_HANDSHAKE_MS: a hung server is a down server) */
	rc = tls_connect(sec_conf, c->io.fd,
			 c->connect_ms < CONN_HANDSHAKE_MIN_MS ? CONN_HANDSHAKE_MIN_MS : c->connect_ms,
			 &c->io.tls);
	/* The server meant, by its certificate: a table that points a SID
	 * at another server's address (stale, or lying) reaches nobody
	 * (docs/design.md, "Security"). */
	if (!rc && c->want_sid && !sid_eq(tls_peer(c->io.tls)->sid, c->sid)) {
		tls_free(c->io.tls);
		c->io.tls = NULL;
		rc = -OFS_EWRONGPEER;
	}
	if (rc) {
		close(c->io.fd);
		c->io.fd = -1;
	}
	return rc;
}

/* Connect and shake hands. A handshake the server cut short after
 * accepting - a server flooded with connections drops or answers "busy"
 * to new ones, or evicts a handshake - is tried again, after 100 ms then
 * 300 ms, while the connect's bound lasts; a refusal, a timeout or no
 * server at all is not. */
static int connect_io(struct conn *c)
{
	struct sockaddr_in sa;
	int64_t until = log_now_ms() + c->connect_ms;
	int rc;

	if (!sec_conf && !sec_plain)
		return -OFS_ENOIDENT;
	if (!sec_conf) {
		if (net_parse_addr(c->addr, &sa))
			return -EINVAL;
		if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127)
			return -EACCES;
	}
	for (int attempt = 0;; attempt++) {
		int wait_ms = attempt == 0 ? 100 : 300;
		rc = connect_once(c);
		if (!rc || !sec_conf || attempt == 2 || rc == -ETIMEDOUT || rc == -ECONNREFUSED ||
		    rc == -EHOSTUNREACH || rc == -ENETUNREACH || rc == -EINVAL || rc == -ENOMEM ||
		    tls_is_refusal(rc) || rc == -OFS_EWRONGPEER || log_now_ms() + wait_ms >= until)
			return rc;
		poll(NULL, 0, wait_ms);
	}
}

/* A failed (re)connect's code for the caller: refusals as they are. */
static int connect_error(int rc)
{
	if (rc == -ETIMEDOUT || tls_is_refusal(rc) || rc == -OFS_ENOIDENT || rc == -EACCES ||
	    rc == -EINVAL || rc == -ENOMEM || rc == -OFS_EWRONGPEER)
		return rc;
	return -ECONNREFUSED;
}

int conn_open(const char *addr, struct conn **out)
{
	return conn_open_within_sid(addr, NULL, CONN_CONNECT_MS, out);
}

int conn_open_within(const char *addr, int connect_ms, struct conn **out)
{
	return conn_open_within_sid(addr, NULL, connect_ms, out);
}

int conn_open_sid(const char *addr, const struct ofs_sid *sid, struct conn **out)
{
	return conn_open_within_sid(addr, sid, CONN_CONNECT_MS, out);
}

int conn_open_within_sid(const char *addr, const struct ofs_sid *sid, int connect_ms,
			 struct conn **out)
{
	struct conn *c;
	int rc;

	if (strlen(addr) >= OFS_ADDR_MAX)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	strcpy(c->addr, addr);
	c->next_id = 1;
	c->reply_ms = CONN_REPLY_MS;
	c->connect_ms = connect_ms;
	if (sid) {
		c->want_sid = true;
		c->sid = *sid;
	}
	wbuf_init(&c->req);
	c->io.fd = -1;
	rc = connect_io(c);
	if (rc) {
		wbuf_free(&c->req);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void conn_close(struct conn *c)
{
	if (!c)
		return;
	tls_free(c->io.tls);
	if (c->io.fd >= 0)
		close(c->io.fd);
	wbuf_free(&c->req);
	free(c);
}

void conn_set_timeout(struct conn *c, int reply_ms)
{
	c->reply_ms = reply_ms;
}

const char *conn_addr(const struct conn *c)
{
	return c->addr;
}

int conn_is_transport_error(int rc)
{
	return rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -OFS_EPROTO ||
	       rc == -ECONNREFUSED || rc == -EPIPE || rc == -OFS_EUNREACHABLE ||
	       rc == -EHOSTUNREACH || rc == -ENETUNREACH || rc == -OFS_EBUSY ||
	       rc == -OFS_EWRONGPEER || rc == -OFS_ELATE;
}

bool conn_is_refusal(int rc)
{
	return rc == -EACCES || tls_is_refusal(rc) || rc == -OFS_ENOIDENT;
}

static void drop(struct conn *c)
{
	tls_free(c->io.tls);
	c->io.tls = NULL;
	if (c->io.fd >= 0)
		close(c->io.fd);
	c->io.fd = -1;
	c->inflight = 0;
}

int conn_send(struct conn *c, const struct ofs_req *q, uint64_t *reqid)
{
	struct ofs_frame_hdr h = { 0 };
	uint8_t cred[FRAME_DEADLINE_LEN];
	int rc;

	c->req.len = 0;
	c->req.err = 0;
	rc = proto_encode_req(&c->req, q);
	if (rc)
		return rc;
	/* After a transport error the socket was closed, and a server closes
	 * one idle too long: reconnect first. */
	if (c->io.fd >= 0 && c->inflight == 0 && conn_idle_dead(c))
		drop(c);
	if (c->io.fd < 0) {
		rc = connect_io(c);
		if (rc)
			return connect_error(rc);
	}
	h.version = OFS_PROTO_VERSION;
	h.op = q->op;
	h.reqid = c->next_id++;
	h.body_len = (uint32_t)c->req.len;
	h.cap_len = q->cap_len <= OFS_MAX_CAP ? q->cap_len : 0;
	if (q->deadline_ms) {
		frame_deadline_encode(q->deadline_ms, cred);
		h.cred_len = FRAME_DEADLINE_LEN;
	}
	rc = net_send_frame(&c->io, &h, h.cred_len ? cred : NULL, h.cap_len ? q->cap : NULL,
			    c->req.data, c->reply_ms);
	if (rc) {
		drop(c);
		return rc == -ETIMEDOUT || tls_is_refusal(rc) ? rc : -ECONNRESET;
	}
	*reqid = h.reqid;
	c->inflight++;
	c->ops[h.reqid % CONN_WINDOW] = q->op;
	if (q->op < OFS_OP_MAX)
		c->sent[q->op]++;
	return 0;
}

uint64_t conn_sent(const struct conn *c, uint16_t op)
{
	return c && op < OFS_OP_MAX ? c->sent[op] : 0;
}

int conn_send_raw(struct conn *c, uint16_t op, const uint8_t *body, size_t len, uint64_t *reqid)
{
	return conn_send_raw_by(c, op, body, len, 0, reqid);
}

int conn_send_raw_by(struct conn *c, uint16_t op, const uint8_t *body, size_t len,
		     uint64_t deadline_ms, uint64_t *reqid)
{
	struct ofs_frame_hdr h = { 0 };
	uint8_t cred[FRAME_DEADLINE_LEN];
	int rc;

	if (len > OFS_MAX_BODY)
		return -OFS_ETOOBIG;
	if (c->io.fd >= 0 && c->inflight == 0 && conn_idle_dead(c))
		drop(c);
	if (c->io.fd < 0) {
		rc = connect_io(c);
		if (rc)
			return connect_error(rc);
	}
	h.version = OFS_PROTO_VERSION;
	h.op = op;
	h.reqid = c->next_id++;
	h.body_len = (uint32_t)len;
	if (deadline_ms) {
		frame_deadline_encode(deadline_ms, cred);
		h.cred_len = FRAME_DEADLINE_LEN;
	}
	rc = net_send_frame(&c->io, &h, h.cred_len ? cred : NULL, NULL, body, c->reply_ms);
	if (rc) {
		drop(c);
		return rc == -ETIMEDOUT || tls_is_refusal(rc) ? rc : -ECONNRESET;
	}
	*reqid = h.reqid;
	c->inflight++;
	c->ops[h.reqid % CONN_WINDOW] = op;
	return 0;
}

int conn_recv(struct conn *c, uint64_t reqid, uint8_t **body, size_t *blen)
{
	struct ofs_frame_hdr rh;
	uint8_t *payload = NULL;
	uint16_t op = c->ops[reqid % CONN_WINDOW];
	int rc;

	c->rcap_len = 0;
	if (c->io.fd < 0)
		return -ECONNRESET;
	if (c->inflight)
		c->inflight--;       /* (this reply, or the connection is dropped) */
	rc = net_recv_frame(&c->io, &rh, &payload, c->reply_ms, c->reply_ms);
	if (rc)
		goto broken;
	if (rh.reqid == 0 && rh.status < 0) {
		/* The server refused the stream itself (and closed it). */
		free(payload);
		drop(c);
		return rh.status;
	}
	if (rh.reqid != reqid || rh.op != (op | OFS_OP_RESPONSE) || rh.cred_len ||
	    rh.cap_len > CONN_REPLY_CAP_MAX || (rh.cap_len && rh.status)) {
		rc = -OFS_EPROTO;
		goto broken;
	}
	c->rcap_len = rh.cap_len;
	if (rh.cap_len) {
		/* The capability the reply grants, then its body. */
		memcpy(c->rcap, payload, rh.cap_len);
		memmove(payload, payload + rh.cap_len, rh.body_len);
	}
	if (rh.status) {
		free(payload);
		return rh.status;
	}
	if (body) {
		*body = payload;
		*blen = rh.body_len;
	} else {
		free(payload);
	}
	return 0;
broken:
	free(payload);
	drop(c);
	if (rc != -ENOMEM && rc != -OFS_EPROTO && !tls_is_refusal(rc))
		rc = rc == -ETIMEDOUT ? rc : -ECONNRESET;
	return rc;
}

int conn_recv_data(struct conn *c, uint64_t reqid, uint8_t *dst, size_t cap, size_t *got)
{
	uint8_t hdr[OFS_FRAME_HDR], len4[4];
	struct ofs_frame_hdr rh;
	uint16_t op = c->ops[reqid % CONN_WINDOW];
	uint32_t n;
	int rc;

	if (c->io.fd < 0)
		return -ECONNRESET;
	if (c->inflight)
		c->inflight--;
	rc = net_io_read_full(&c->io, hdr, sizeof(hdr), c->reply_ms);
	if (!rc)
		rc = frame_decode_hdr(hdr, &rh);
	if (rc)
		goto broken;
	if (rh.reqid != reqid || rh.op != (op | OFS_OP_RESPONSE) || rh.cred_len || rh.cap_len) {
		rc = (rh.reqid == 0 && rh.status < 0) ? rh.status : -OFS_EPROTO;
		goto broken;
	}
	if (rh.status) {
		/* An error reply has no body; anything else is a broken peer. */
		if (rh.body_len) {
			rc = -OFS_EPROTO;
			goto broken;
		}
		return rh.status;
	}
	if (rh.body_len < 4) {
		rc = -OFS_EPROTO;
		goto broken;
	}
	rc = net_io_read_full(&c->io, len4, sizeof(len4), c->reply_ms);
	if (rc)
		goto broken;
	n = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | (uint32_t)len4[2] << 8 | len4[3];
	if (n != rh.body_len - 4 || n > cap) {
		rc = -OFS_EPROTO;
		goto broken;
	}
	rc = net_io_read_full(&c->io, dst, n, c->reply_ms);
	if (rc)
		goto broken;
	*got = n;
	return 0;
broken:
	drop(c);
	if (rc == -ETIMEDOUT || rc == -OFS_EPROTO || rc < -OFS_EBASE)
		return rc;
	return -ECONNRESET;
}

const uint8_t *conn_reply_cap(const struct conn *c, size_t *len)
{
	*len = c->rcap_len;
	return c->rcap;
}

int conn_call(struct conn *c, const struct ofs_req *q, uint8_t **body, size_t *blen)
{
	uint64_t id;
	int rc = conn_send(c, q, &id);

	return rc ? rc : conn_recv(c, id, body, blen);
}

bool conn_idle_dead(struct conn *c)
{
	struct pollfd p;

	if (!c || c->io.fd < 0)
		return true;
	if (c->io.tls && tls_pending(c->io.tls))
		return true;
	p.fd = c->io.fd;
	p.events = POLLIN;
	p.revents = 0;
	/* Nothing is in flight: readable means EOF, a reset or a stray
	 * byte - either way not a connection to send a request into. */
	return poll(&p, 1, 0) != 0;
}

int conn_call_once(const char *addr, const struct ofs_req *q, int reply_ms, uint8_t **body,
		   size_t *blen)
{
	return conn_call_once_sid(addr, NULL, q, reply_ms, body, blen);
}

int conn_call_once_sid(const char *addr, const struct ofs_sid *sid, const struct ofs_req *q,
		       int reply_ms, uint8_t **body, size_t *blen)
{
	struct conn *c = NULL;
	int rc = conn_open_sid(addr, sid, &c);

	if (rc)
		return rc;
	conn_set_timeout(c, reply_ms);
	rc = conn_call(c, q, body, blen);
	conn_close(c);
	return rc;
}

/* After the table: the cluster's CRL, pulled (crl.h) from the server that
 * gave it, and taken when the CA in our identity's ca.pem signed it and it
 * is newer than ours. A server of the previous release refuses a client's
 * pull: nothing is learned then, and nothing fails. */
static void pull_crl(struct conn *c)
{
	struct ofs_req q = { .op = OFS_OP_REVOKED };
	const uint8_t *der = NULL;
	uint64_t theirs = 0;
	struct wbuf w;
	uint8_t *b = NULL;
	size_t bn = 0, derlen = 0;
	int rc;

	wbuf_init(&w);
	crl_pull_encode(&w, crl_number(sec_crl));
	q.data = w.data;
	q.data_len = w.len;
	rc = wbuf_error(&w) ? wbuf_error(&w) : conn_call(c, &q, &b, &bn);
	if (!rc && crl_answer_decode(b, bn, &theirs, &der, &derlen) == 0 && der)
		(void)crl_offer(sec_crl, der, derlen, NULL);
	free(b);
	wbuf_free(&w);
}

int conn_table(struct conn *c, struct ofs_sid *who, struct ofs_server **e, size_t *ne)
{
	struct ofs_req q = { .op = OFS_OP_SERVERS };
	struct ofs_sid said;
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc = conn_call(c, &q, &b, &bn);

	if (!rc)
		rc = proto_decode_servers(b, bn, true, &said, e, ne);
	free(b);
	if (rc)
		return rc;
	/* The table speaks for the server that gave it: the SID it names as
	 * its own is its certificate's. */
	if (c->io.tls && !sid_eq(said, tls_peer(c->io.tls)->sid))
		rc = -OFS_EWRONGPEER;
	if (!rc && c->io.tls && sec_crl) {
		pull_crl(c);
		if (c->io.tls && tls_peer_revoked(c->io.tls, sec_crl))
			rc = -OFS_EWRONGPEER;     /* (first contact: a server revoked) */
	}
	if (rc) {
		drop(c);
		free(*e);
		*e = NULL;
		*ne = 0;
		return rc;
	}
	if (who)
		*who = said;
	return 0;
}

int conn_fetch_table(const char *const *addrs, size_t n, int reply_ms, struct ofs_server **e,
		     size_t *ne, const char **via)
{
	size_t first = 0;
	int rc = -OFS_EUNREACHABLE, wrong = 0;

	if (n > 1 && net_connect_race(addrs, n, CONN_CONNECT_MS, &first) != 0)
		first = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = net_race_nth(k, first);
		struct conn *c = NULL;

		rc = conn_open(addrs[i], &c);
		if (rc == -EINVAL || conn_is_refusal(rc))
			return rc;
		if (rc == -OFS_EWRONGPEER)
			wrong = rc;
		if (rc)
			continue;
		conn_set_timeout(c, reply_ms);
		rc = conn_table(c, NULL, e, ne);
		conn_close(c);
		if (!rc) {
			if (via)
				*via = addrs[i];
			return 0;
		}
		if (conn_is_refusal(rc))
			return rc;       /* who we are: the next server says the same */
		if (rc == -OFS_EWRONGPEER)
			wrong = rc;
	}
	/* (none answered, and one was not the server meant: say that) */
	if (wrong && conn_is_transport_error(rc))
		return wrong;
	return conn_is_transport_error(rc) ? -OFS_EUNREACHABLE : rc;
}
