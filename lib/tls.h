/*
 * tls.h - TLS 1.3 with mutual certificate authentication (OpenSSL 3), and
 * who the peer is.
 *
 * A tls_conf is one identity - a directory holding key.pem (the private
 * key, mode 0600: refused when group or others may read it, as ssh
 * refuses), cert.pem (its certificate) and ca.pem (the cluster CA, the
 * only issuer trusted) - and serves both ends: tls_accept for a server's
 * connections, tls_connect for the connections it opens. Both ends must
 * present a certificate the CA signed; the peer's identity (ident.h) is
 * read from its certificate and nothing else. TLS 1.3 only; no session
 * tickets or resumption (every connection is a full handshake).
 *
 * A tls_sess is one TLS connection over a non-blocking socket it does not
 * own. Every wait is bounded as net.h's are: a step that makes no progress
 * for timeout_ms fails with -ETIMEDOUT. A refusal by either end maps to
 * -OFS_EUNTRUSTED, -OFS_ECERTEXPIRED or -OFS_ECERTREVOKED; a peer that
 * does not speak TLS to -OFS_ETLS. One session is used by one thread at a
 * time.
 */
#ifndef OFS_TLS_H
#define OFS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/crl.h"
#include "lib/ident.h"

#define TLS_HANDSHAKE_MS 10000    /* a whole handshake, at most */
#define TLS_WHY_MAX 8704        /* room for two paths and a reason */

struct tls_conf;
struct tls_sess;

/* Load the identity in dir. 0, or a negative code and a message in why
 * (TLS_WHY_MAX bytes) naming the file and what is wrong with it:
 * -ENOENT (no such file), -EPERM (a key file others may read),
 * -OFS_EUNTRUSTED (a certificate without a cluster identity, or one its
 * CA did not sign), -OFS_ECERTEXPIRED, -EINVAL (unreadable PEM). */
int tls_conf_load(const char *dir, struct tls_conf **out, char *why);
void tls_conf_free(struct tls_conf *c);
/* Who this configuration is (its certificate's identity). */
const struct ident *tls_conf_self(const struct tls_conf *c);

/* Refuse, from now on, every peer whose certificate's serial is in crl
 * (at the handshake: -OFS_ECERTREVOKED both ends). crl must outlive c. */
void tls_conf_set_crl(struct tls_conf *c, struct crl *crl);
/* The serial number of the certificate in the PEM file path, and whether
 * the CA certificate in ca_path issued it. 0, -ENOENT, -EINVAL (not a
 * certificate), -OFS_EUNTRUSTED (another issuer). */
int tls_cert_serial(const char *path, const char *ca_path, struct crl_serial *s);
/* Whether the peer's certificate is in crl now (for connections opened
 * before it was revoked). */
int tls_peer_revoked(const struct tls_sess *t, struct crl *crl);

/* Refuse a private key file that group or others may read, or that is
 * not a regular file: 0, or -EPERM / -errno with a message in why. */
int tls_key_mode_ok(const char *path, char *why);

/* The TLS handshake as a client of a server: the peer must prove a
 * server identity. */
int tls_connect(struct tls_conf *c, int fd, int timeout_ms, struct tls_sess **out);
/* The handshake as a server: the peer must prove any identity. */
int tls_accept(struct tls_conf *c, int fd, int timeout_ms, struct tls_sess **out);
/* The peer's identity, with its certificate's fingerprint. */
const struct ident *tls_peer(const struct tls_sess *t);
/* Bytes already decrypted and waiting to be read. */
bool tls_pending(const struct tls_sess *t);
/* Free the session (sending close_notify, without waiting); the socket
 * stays open for the caller to close. */
void tls_free(struct tls_sess *t);

/* Read or write exactly n bytes (iov is consumed). 0, -ECONNRESET when the
 * peer closed, -ETIMEDOUT, or a TLS refusal. */
int tls_read_full(struct tls_sess *t, void *buf, size_t n, int timeout_ms);
int tls_writev_full(struct tls_sess *t, struct iovec *iov, int n, int timeout_ms);

/* True for the codes that mean a certificate was refused (either way). */
bool tls_is_refusal(int rc);

#endif
