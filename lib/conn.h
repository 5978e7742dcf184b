/*
 * conn.h - one connection to one server: a request out, its reply in.
 *
 * A conn sends a request frame (an empty credential slot: the TLS
 * certificate is the credential; the capability slot carries the request's
 * q->cap), waits for the reply with the same request id, and returns the
 * reply's status and body (and keeps its capability: conn_reply_cap).
 * After a transport error the socket is closed; the next call reconnects
 * before it sends (a request is never sent twice by this layer).
 */
#ifndef OFS_CONN_H
#define OFS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/ident.h"
#include "lib/proto.h"

#define CONN_CONNECT_MS 5000     /* to connect */
#define CONN_HANDSHAKE_MIN_MS 3000  /* a TLS handshake, at least (else the
                                     connect's own bound) */
#define CONN_REPLY_MS 60000      /* a reply may wait behind a large fsync, and
                                    a primary's wait for a copy (at most 30 s,
                                    REPLICA_TIMEOUT_MS) fits in it twice */
#define CONN_WINDOW 4            /* requests in flight on one connection */
#define CONN_REPLY_CAP_MAX 1280  /* a reply's capability slot, at most (a
                                    capability is at most CAP_MAX_LEN) */

struct conn;
struct crl;
struct tls_conf;

/*
 * How this process's connections prove who they are: conf (an identity
 * loaded with tls_conf_load; every connection is TLS 1.3 and the peer
 * must prove a server identity), or, with conf NULL and plaintext true,
 * plaintext to loopback addresses only (--insecure, for benchmark
 * baselines). Until it is set, conn_open fails with -OFS_ENOIDENT. Set
 * once at start, before any thread connects; conf must outlive every
 * connection.
 */
void conn_security(struct tls_conf *conf, bool plaintext);
/* Who this process connects as (NULL: plaintext, or not set). */
const struct ident *conn_identity(void);
/*
 * A client's revocation list (crl.h; NULL: none): every server certificate
 * in it is refused at the handshake (-OFS_EWRONGPEER: not a refusal of
 * who we are, so the caller tries another server), and conn_table pulls
 * the cluster's CRL into it from the server asked (taken when the CA
 * signed it; docs/design.md, "Security"). Set once at start, after
 * conn_security; crl must outlive every connection. Servers hold theirs
 * in their tls_conf and gossip it instead.
 */
void conn_trust_crl(struct crl *crl);
/* conn_trust_crl with the list of the identity in iddir: its file
 * "revoked" when there is one (kept up to date), else one in memory,
 * either verified by iddir/ca.pem. 0, -OFS_ENOIDENT (no conn_security
 * identity), or crl_open's errors. */
int conn_trust_dir(const char *iddir);

/* Connect to addr ("HOST:PORT"), to any server. A handshake the server
 * cuts short after accepting (a flooded server drops, evicts or answers
 * "busy" to new connections) is tried again after 100 ms and 300 ms,
 * within the connect's bound; a refusal, a timeout or a refused connect
 * is not. Returns 0, -EINVAL (bad address), -ECONNREFUSED, -ETIMEDOUT,
 * -errno, a TLS refusal (tls_is_refusal), -OFS_ENOIDENT (no
 * conn_security), -EACCES (plaintext to an address not on loopback). */
int conn_open(const char *addr, struct conn **out);
/* The same, each connect (this one and later reconnects) bounded by
 * connect_ms instead of CONN_CONNECT_MS. */
int conn_open_within(const char *addr, int connect_ms, struct conn **out);
/*
 * conn_open to the server sid (NULL: any server, as conn_open - a first
 * contact, at an address given by hand): the certificate of whoever
 * answers at addr, at this connect and every reconnect, must name server
 * sid, else -OFS_EWRONGPEER (a transport error: the server meant is not
 * there, so the caller tries another copy; docs/design.md, "Security").
 */
int conn_open_sid(const char *addr, const struct ofs_sid *sid, struct conn **out);
int conn_open_within_sid(const char *addr, const struct ofs_sid *sid, int connect_ms,
			 struct conn **out);
void conn_close(struct conn *c);
/* The identity of the server at the other end (NULL: not connected, or
 * plaintext). */
const struct ident *conn_peer(const struct conn *c);
const char *conn_addr(const struct conn *c);
/* Bound every later wait for a reply (default CONN_REPLY_MS). */
void conn_set_timeout(struct conn *c, int reply_ms);

/*
 * Send q and wait for the reply. Returns the server's status when it
 * answered (0 or negative; on 0, *body is the malloc'd reply body, NULL
 * when empty, and *blen its length; the caller frees it), or a transport
 * error: -ECONNRESET, -ETIMEDOUT, -OFS_EPROTO (a reply that does not
 * match), -ENOMEM. body may be NULL when the reply body is not wanted.
 */
int conn_call(struct conn *c, const struct ofs_req *q, uint8_t **body, size_t *blen);
/* One request to the server at addr on a connection of its own, each
 * step bounded by reply_ms; the connection is closed after. */
int conn_call_once(const char *addr, const struct ofs_req *q, int reply_ms, uint8_t **body,
		   size_t *blen);
/* The same to the server sid (conn_open_sid). */
int conn_call_once_sid(const char *addr, const struct ofs_sid *sid, const struct ofs_req *q,
		       int reply_ms, uint8_t **body, size_t *blen);

/* The capability slot of the last reply conn_call or conn_recv returned
 * (a GETATTR or CREATE answered to a user: what it may do with the
 * object; cap.h); *len 0 when it had none. Valid until the next call. */
const uint8_t *conn_reply_cap(const struct conn *c, size_t *len);

/*
 * Pipelining: conn_send puts a request on the wire and returns its id;
 * conn_recv waits for the reply to the oldest request still unanswered,
 * which must be reqid (replies come in order). At most CONN_WINDOW
 * requests may be in flight. Errors as conn_call; after any transport
 * error the replies still in flight are lost with the socket.
 */
int conn_send(struct conn *c, const struct ofs_req *q, uint64_t *reqid);
/* How many requests of op conn_send has put on the wire (0 for NULL). */
uint64_t conn_sent(const struct conn *c, uint16_t op);
int conn_recv(struct conn *c, uint64_t reqid, uint8_t **body, size_t *blen);
/* conn_send of an already encoded body (a request forwarded as is);
 * conn_send_raw_by with a deadline (frame.h; 0: none). */
int conn_send_raw(struct conn *c, uint16_t op, const uint8_t *body, size_t len, uint64_t *reqid);
int conn_send_raw_by(struct conn *c, uint16_t op, const uint8_t *body, size_t len,
		     uint64_t deadline_ms, uint64_t *reqid);

/* conn_recv for a READ reply: the data goes straight into dst (cap bytes)
 * without an intermediate copy; *got receives its length. */
int conn_recv_data(struct conn *c, uint64_t reqid, uint8_t *dst, size_t cap, size_t *got);

/*
 * The server table: conn_table asks the server at the other end of c
 * (SERVERS); *who (may be NULL) receives its SID. Over TLS that SID must
 * be the one its certificate names, and with conn_trust_crl the cluster's
 * CRL is pulled from it too: a server whose certificate it revokes gives
 * no table (-OFS_EWRONGPEER, the connection closed). conn_fetch_table asks
 * the first of addrs (n of them) that answers: the one that connects
 * first is asked first (a server cut off costs one connect timeout, not
 * one per address), then the rest in the order given, each call bounded
 * by reply_ms; *via (may be NULL) receives the address that answered.
 * *e is malloc'd (the caller frees it). conn_fetch_table returns 0,
 * -EINVAL (a malformed address), -OFS_EUNREACHABLE (none answered), a
 * refusal (conn_is_refusal: the first one ends the fetch, since the next
 * server would refuse the same identity) or a server's error.
 */
int conn_table(struct conn *c, struct ofs_sid *who, struct ofs_server **e, size_t *ne);
int conn_fetch_table(const char *const *addrs, size_t n, int reply_ms, struct ofs_server **e,
		     size_t *ne, const char **via);

/* True when rc is a transport error rather than a server's answer (a
 * TLS refusal is not one: it is the peer's answer to who we are). A
 * server busy (OFS_EBUSY: no connection slot for us) counts as one: the
 * caller tries another server, as for one that does not answer; so does
 * a server that is not the one meant (OFS_EWRONGPEER), and a change
 * refused as late (OFS_ELATE: the server was hung past its deadline). */
int conn_is_transport_error(int rc);
/* True when rc is a refusal of who we are: permission denied (-EACCES), a
 * TLS refusal (tls_is_refusal: a certificate not trusted, expired or
 * revoked, TLS required) or no identity to connect with. No retry and no
 * other server would answer otherwise: a loop ends the attempt and
 * reports it (backoff.h). */
bool conn_is_refusal(int rc);
/* An idle connection whose peer has gone (closed it, or restarted): its
 * socket reads as ready with nothing asked of it. Checked before reusing
 * a pooled connection, so that a change is never sent into a dead one. */
bool conn_idle_dead(struct conn *c);

#endif
