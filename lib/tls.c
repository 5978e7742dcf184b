/* tls.c - TLS 1.3, mutual authentication, the peer's identity (see tls.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/frame.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

#define COALESCE_MAX 16384   /* small frames go out as one record */
#define TLS_READ_BUFFER (256 * 1024)

struct tls_conf {
	SSL_CTX *ctx;
	struct ident self;
	struct crl *crl;             /* NULL: nothing revoked here */
};

/*
 * The socket under a session (the BIO's state). A large write - a READ's
 * reply - goes out in batches of records (BATCH_BYTES per send) rather
 * than a send per 16 KiB record: on loopback each send also runs the
 * receiver's TCP, and a record per call tripled the syscalls and the
 * wake-ups of both ends. Outside a large write the batch is empty.
 */
#define BATCH_MIN (64 * 1024)        /* a write this large is batched */
#define BATCH_BYTES (256 * 1024)     /* records held for one send, at most */
struct sock {
	int fd;
	uint8_t first[OFS_FRAME_HDR];  /* the first bytes read: an OFS frame in
	                                  plaintext, when a server refused us
	                                  before TLS (busy, TLS only) */
	size_t nfirst;
	bool batch;                  /* hold records (during a large write) */
	uint8_t *buf;                /* BATCH_BYTES, made at the first one */
	size_t off, len;             /* not yet sent: buf[off..len) */
};

struct tls_sess {
	SSL *ssl;
	struct sock *sock;           /* (owned by the SSL's BIO) */
	int fd;
	struct ident peer;
	struct crl_serial serial;    /* of the peer's certificate */
	bool client;                 /* we connected (the peer is a server) */
};

/* x's serial number as bytes (big-endian, no leading zero byte). */
static int serial_of(X509 *x, struct crl_serial *s)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	int n = bn ? BN_num_bytes(bn) : -1;

	if (n <= 0 || n > CRL_SERIAL_MAX) {
		BN_free(bn);
		return -EINVAL;
	}
	s->len = (uint8_t)BN_bn2bin(bn, s->b);
	BN_free(bn);
	return 0;
}

/* OpenSSL's verification, then: is the peer's certificate revoked? */
static int verify_cb(int ok, X509_STORE_CTX *x)
{
	SSL *ssl;
	struct tls_conf *c;
	struct crl_serial s;

	if (!ok || X509_STORE_CTX_get_error_depth(x) != 0)
		return ok;
	ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
	c = ssl ? SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)) : NULL;
	if (!c || !c->crl)
		return 1;
	if (serial_of(X509_STORE_CTX_get_current_cert(x), &s) || crl_has(c->crl, &s)) {
		X509_STORE_CTX_set_error(x, X509_V_ERR_CERT_REVOKED);
		return 0;
	}
	return 1;
}

void tls_conf_set_crl(struct tls_conf *c, struct crl *crl)
{
	c->crl = crl;
}

int tls_peer_revoked(const struct tls_sess *t, struct crl *crl)
{
	return crl && crl_has(crl, &t->serial);
}

int tls_cert_serial(const char *path, const char *ca_path, struct crl_serial *s)
{
	FILE *f = fopen(path, "re");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL, *ca = NULL;
	int rc;

	if (f)
		fclose(f);
	if (!f)
		return -errno;
	rc = x ? serial_of(x, s) : -EINVAL;
	if (!rc) {
		f = fopen(ca_path, "re");
		ca = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
		if (f)
			fclose(f);
		if (!ca) {
			rc = -EINVAL;
		} else {
			EVP_PKEY *k = X509_get0_pubkey(ca);
			rc = k && X509_verify(x, k) == 1 ? 0 : -OFS_EUNTRUSTED;
		}
	}
	X509_free(x);
	X509_free(ca);
	ERR_clear_error();
	return rc;
}

const struct ident *tls_conf_self(const struct tls_conf *c)
{
	return &c->self;
}

const struct ident *tls_peer(const struct tls_sess *t)
{
	return &t->peer;
}

bool tls_is_refusal(int rc)
{
	return rc == -OFS_EUNTRUSTED || rc == -OFS_ECERTEXPIRED || rc == -OFS_ECERTREVOKED ||
	       rc == -OFS_ETLS || rc == -OFS_ETLSONLY;
}

int tls_key_mode_ok(const char *path, char *why)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, TLS_WHY_MAX, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, TLS_WHY_MAX, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_mode & 077) {
		snprintf(why, TLS_WHY_MAX,
			 "%s: a private key its group or others may read (mode %03o) is refused: chmod 600 it",
			 path, (unsigned)(st.st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

/* The one cluster identity x's subjectAltName URI holds, and x's SHA-256. */
static int ident_of_cert(X509 *x, struct ident *id)
{
	GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	unsigned int mdlen = 0;
	int rc = -OFS_EUNTRUSTED, found = 0;

	if (!names)
		return -OFS_EUNTRUSTED;
	for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		if (g->type != GEN_URI)
			continue;
		found++;
		rc = ident_decode((const char *)ASN1_STRING_get0_data(g->d.uniformResourceIdentifier),
				  (size_t)ASN1_STRING_length(g->d.uniformResourceIdentifier), id)
			     ? -OFS_EUNTRUSTED
			     : 0;
	}
	GENERAL_NAMES_free(names);
	if (found != 1)
		return -OFS_EUNTRUSTED;
	if (!rc && (!X509_digest(x, EVP_sha256(), id->fpr, &mdlen) || mdlen != IDENT_FPR_LEN))
		rc = -OFS_EUNTRUSTED;
	return rc;
}

/* Map a verification result to our codes. */
static int verify_code(long v)
{
	switch (v) {
	case X509_V_OK:
		return 0;
	case X509_V_ERR_CERT_HAS_EXPIRED:
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return -OFS_ECERTEXPIRED;
	case X509_V_ERR_CERT_REVOKED:
		return -OFS_ECERTREVOKED;
	default:
		return -OFS_EUNTRUSTED;
	}
}

/* The certificate at SSL_CTX's own slot, checked against its own CA now:
 * a configuration that could never connect says so when loaded. */
static int check_own_cert(SSL_CTX *ctx, char *why, const char *dir)
{
	X509 *x = SSL_CTX_get0_certificate(ctx);
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	int rc;

	if (!vc)
		return -ENOMEM;
	if (X509_STORE_CTX_init(vc, SSL_CTX_get_cert_store(ctx), x, NULL) != 1) {
		X509_STORE_CTX_free(vc);
		return -ENOMEM;
	}
	rc = X509_verify_cert(vc) == 1 ? 0 : verify_code(X509_STORE_CTX_get_error(vc));
	if (rc)
		snprintf(why, TLS_WHY_MAX, "%s/cert.pem: %s (%s)", dir, ofs_strerror(rc),
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(vc)));
	X509_STORE_CTX_free(vc);
	return rc;
}

static int load_key(SSL_CTX *ctx, const char *path, char *why)
{
	FILE *f;
	EVP_PKEY *k;
	int rc = tls_key_mode_ok(path, why);

	if (rc)
		return rc;
	f = fopen(path, "re");
	if (!f) {
		snprintf(why, TLS_WHY_MAX, "%s: %s", path, strerror(errno));
		return -errno;
	}
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!k) {
		snprintf(why, TLS_WHY_MAX, "%s: not a PEM private key", path);
		return -EINVAL;
	}
	rc = SSL_CTX_use_PrivateKey(ctx, k) == 1 ? 0 : -EINVAL;
	EVP_PKEY_free(k);
	if (rc)
		snprintf(why, TLS_WHY_MAX, "%s: key not usable", path);
	return rc;
}

static int exists(const char *path, char *why)
{
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(why, TLS_WHY_MAX, "%s: %s", path, strerror(errno));
	return -errno;
}

static int conf_files(SSL_CTX *ctx, const char *dir, char *why)
{
	char p[4096];
	int rc;

	snprintf(p, sizeof(p), "%s/cert.pem", dir);
	if ((rc = exists(p, why)) != 0)
		return rc;
	if (SSL_CTX_use_certificate_file(ctx, p, SSL_FILETYPE_PEM) != 1) {
		snprintf(why, TLS_WHY_MAX, "%s: not a PEM certificate", p);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s/key.pem", dir);
	if ((rc = load_key(ctx, p, why)) != 0)
		return rc;
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(why, TLS_WHY_MAX, "%s: not the key of %s/cert.pem", p, dir);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s/ca.pem", dir);
	if ((rc = exists(p, why)) != 0)
		return rc;
	if (SSL_CTX_load_verify_locations(ctx, p, NULL) != 1) {
		snprintf(why, TLS_WHY_MAX, "%s: not a PEM certificate", p);
		return -EINVAL;
	}
	return 0;
}

int tls_conf_load(const char *dir, struct tls_conf **out, char *why)
{
	struct tls_conf *c = calloc(1, sizeof(*c));
	int rc = -ENOMEM;

	why[0] = '\0';
	if (!c)
		return -ENOMEM;
	/* (the system's openssl.cnf has nothing for us: every setting is
	 * made here, and not reading it saves each program's start) */
	OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
	c->ctx = SSL_CTX_new(TLS_method());
	if (!c->ctx)
		goto fail;
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_3_VERSION);
	SSL_CTX_set_max_proto_version(c->ctx, TLS1_3_VERSION);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verify_cb);
	SSL_CTX_set_app_data(c->ctx, c);
	SSL_CTX_set_num_tickets(c->ctx, 0);
	SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET);
	/* Read as much as the socket holds, not one record's header and
	 * then its body: a 4 MiB reply is 256 records. */
	SSL_CTX_set_read_ahead(c->ctx, 1);
	SSL_CTX_set_default_read_buffer_len(c->ctx, TLS_READ_BUFFER);
	rc = conf_files(c->ctx, dir, why);
	if (!rc)
		rc = check_own_cert(c->ctx, why, dir);
	if (!rc && ident_of_cert(SSL_CTX_get0_certificate(c->ctx), &c->self)) {
		snprintf(why, TLS_WHY_MAX, "%s/cert.pem: names no cluster identity", dir);
		rc = -OFS_EUNTRUSTED;
	}
	if (rc)
		goto fail;
	ERR_clear_error();
	*out = c;
	return 0;
fail:
	if (!why[0])
		snprintf(why, TLS_WHY_MAX, "%s: %s", dir, ofs_strerror(rc));
	ERR_clear_error();
	tls_conf_free(c);
	return rc;
}

void tls_conf_free(struct tls_conf *c)
{
	if (!c)
		return;
	SSL_CTX_free(c->ctx);
	free(c);
}

/* ---- under AddressSanitizer ------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
/*
 * OpenSSL is not built with the sanitizer, so it gains nothing from
 * ASan's allocator but its cost: every handshake makes hundreds of small
 * allocations, each with redzones and fresh shadow pages, which made a
 * handshake in the test builds several times its cost. In those builds
 * OpenSSL allocates from libc directly (before its first allocation);
 * everything OpenSSL allocates it also frees, and our own allocations are
 * checked as before.
 */
extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static void *crypto_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return __libc_malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return __libc_realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	__libc_free(p);
}

__attribute__((constructor)) static void crypto_plain_malloc(void)
{
	(void)CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free);
}
#endif

/* ---- sessions ----------------------------------------------------------- */

/*
 * The socket under a session, as a BIO of our own: OpenSSL's socket BIO
 * writes with write(), and a peer gone away would raise SIGPIPE in the
 * writer - which kills a client program. These send with MSG_NOSIGNAL
 * (as net.c does) and report EAGAIN as "retry", for the deadlines above.
 */
static BIO_METHOD *sock_method;
static pthread_once_t sock_once = PTHREAD_ONCE_INIT;

/* Send what the batch holds, as much as the socket takes now: 0 (*off
 * moved on; all sent: empty again), or -1 and errno. */
static int drain(struct sock *k)
{
	while (k->off < k->len) {
		ssize_t r = send(k->fd, k->buf + k->off, k->len - k->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		k->off += (size_t)r;
	}
	k->off = k->len = 0;
	return 0;
}

/* A record into the batch: 1, 0 (retry: the socket is full), -1. */
static int batch_add(struct sock *k, const char *data, size_t n)
{
	if (k->len + n > BATCH_BYTES) {
		if (drain(k) < 0)
			return -1;
		if (k->off) {
			memmove(k->buf, k->buf + k->off, k->len - k->off);
			k->len -= k->off;
			k->off = 0;
		}
		if (k->len + n > BATCH_BYTES)
			return 0;
	}
	memcpy(k->buf + k->len, data, n);
	k->len += n;
	return 1;
}

static int sock_write(BIO *b, const char *data, size_t n, size_t *done)
{
	struct sock *k = BIO_get_data(b);
	ssize_t r;

	BIO_clear_retry_flags(b);
	if (k->batch && n <= BATCH_BYTES) {
		int added = batch_add(k, data, n);
		if (added == 0)
			BIO_set_retry_write(b);
		if (added <= 0)
			return 0;
		*done = n;
		return 1;
	}
	r = send(k->fd, data, n, MSG_NOSIGNAL);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			BIO_set_retry_write(b);
		return 0;
	}
	*done = (size_t)r;
	return 1;
}

static int sock_read(BIO *b, char *buf, size_t n, size_t *done)
{
	const struct sock *k = BIO_get_data(b);
	ssize_t r = recv(k->fd, buf, n, 0);

	BIO_clear_retry_flags(b);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			BIO_set_retry_read(b);
		return 0;
	}
	if (r == 0)
		return 0;             /* end of stream */
	if (k->nfirst < sizeof(k->first)) {
		size_t m = sizeof(k->first) - k->nfirst;
		m = (size_t)r < m ? (size_t)r : m;
		memcpy(((struct sock *)k)->first + k->nfirst, buf, m);
		((struct sock *)k)->nfirst += m;
	}
	*done = (size_t)r;
	return 1;
}

static long sock_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int sock_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static int sock_destroy(BIO *b)
{
	struct sock *k = BIO_get_data(b);

	if (k) {
		free(k->buf);
		free(k);
		BIO_set_data(b, NULL);
	}
	return 1;
}

static void sock_method_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ofs socket");

	if (m && BIO_meth_set_write_ex(m, sock_write) && BIO_meth_set_read_ex(m, sock_read) &&
	    BIO_meth_set_ctrl(m, sock_ctrl) && BIO_meth_set_create(m, sock_create) &&
	    BIO_meth_set_destroy(m, sock_destroy))
		sock_method = m;
	else
		BIO_meth_free(m);
}

static BIO *sock_bio(int fd, struct sock **state)
{
	struct sock *k = calloc(1, sizeof(*k));
	BIO *b;

	pthread_once(&sock_once, sock_method_make);
	if (!k || !sock_method || !(b = BIO_new(sock_method))) {
		free(k);
		return NULL;
	}
	k->fd = fd;
	BIO_set_data(b, k);
	*state = k;
	return b;
}

static int wait_io(int fd, int err, int timeout_ms)
{
	return net_wait_fd(fd, err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, timeout_ms);
}

/* Why an SSL call failed with err, as our code. */
static int ssl_code(struct tls_sess *t, int err)
{
	unsigned long e;
	int reason;

	if (err == SSL_ERROR_ZERO_RETURN)
		return -ECONNRESET;
	if (err == SSL_ERROR_SYSCALL) {
		int sys = errno;
		ERR_clear_error();
		return sys == EPIPE || sys == 0 || sys == EAGAIN ? -ECONNRESET : -sys;
	}
	e = ERR_peek_last_error();
	reason = ERR_GET_REASON(e);
	ERR_clear_error();
	switch (reason) {
	case SSL_R_UNEXPECTED_EOF_WHILE_READING:
		return -ECONNRESET;   /* the peer went away: a transport error */
	case SSL_R_CERTIFICATE_VERIFY_FAILED: {
		int v = verify_code(SSL_get_verify_result(t->ssl));
		/* A server whose certificate we hold revoked is not the server
		 * meant: not a refusal of who we are, so the caller tries
		 * another one (docs/design.md, "Security"). */
		if (v == -OFS_ECERTREVOKED && t->client)
			return -OFS_EWRONGPEER;
		return v ? v : -OFS_EUNTRUSTED;
	}
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
		return -OFS_ECERTEXPIRED;
	case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
		return -OFS_ECERTREVOKED;
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
	case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		return -OFS_EUNTRUSTED;
	default:
		return -OFS_ETLS;
	}
}

/* What a server said in plaintext instead of a handshake: an OFS error
 * frame (the server is busy, or speaks TLS only, ...) is its status, not
 * "the peer does not speak TLS". Else rc. */
static int plaintext_refusal(const struct sock *k, int rc)
{
	struct ofs_frame_hdr h;

	if (!k || k->nfirst < sizeof(k->first) || frame_decode_hdr(k->first, &h) != 0 ||
	    h.status >= 0 || h.reqid != 0)
		return rc;
	if (h.status == -EBUSY || h.status == -OFS_EBUSY)
		return -OFS_EBUSY;
	return h.status == -OFS_ETLSONLY ? -OFS_ETLSONLY : rc;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run fn (SSL_connect or SSL_accept) to the end within timeout_ms in
 * all: a peer that trickles its handshake a byte at a time holds a
 * server's thread no longer than one that sends nothing. */
static int handshake(struct tls_sess *t, int (*fn)(SSL *), int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;

	for (;;) {
		int r, err;

		ERR_clear_error();
		r = fn(t->ssl);
		if (r == 1)
			return 0;
		err = SSL_get_error(t->ssl, r);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
			int64_t left = deadline - mono_ms();
			int rc = left > 0 ? wait_io(t->fd, err, (int)left) : -ETIMEDOUT;
			if (rc)
				return rc;
			continue;
		}
		return ssl_code(t, err);
	}
}

static int start(struct tls_conf *c, int fd, int (*fn)(SSL *), int timeout_ms,
		 struct tls_sess **out)
{
	struct tls_sess *t = calloc(1, sizeof(*t));
	X509 *peer;
	BIO *bio;
	int rc;

	if (!t)
		return -ENOMEM;
	t->fd = fd;
	t->client = fn == SSL_connect;
	t->ssl = SSL_new(c->ctx);
	bio = t->ssl ? sock_bio(fd, &t->sock) : NULL;
	if (!bio) {
		rc = -ENOMEM;
		goto fail;
	}
	SSL_set_bio(t->ssl, bio, bio);    /* (one reference, taken by ssl) */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = handshake(t, fn, timeout_ms);
	if (rc == -OFS_ETLS)
		rc = plaintext_refusal(t->sock, rc);
	if (rc)
		goto fail;
	peer = SSL_get0_peer_certificate(t->ssl);
	rc = peer ? ident_of_cert(peer, &t->peer) : -OFS_EUNTRUSTED;
	if (!rc && serial_of(peer, &t->serial))
		rc = -OFS_EUNTRUSTED;
	if (rc)
		goto fail;
	*out = t;
	return 0;
fail:
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t);
	return rc;
}

int tls_connect(struct tls_conf *c, int fd, int timeout_ms, struct tls_sess **out)
{
	int rc = start(c, fd, SSL_connect, timeout_ms, out);

	if (!rc && (*out)->peer.role != IDENT_SERVER) {
		/* Only a server's certificate may answer as a server. */
		tls_free(*out);
		*out = NULL;
		rc = -OFS_EUNTRUSTED;
	}
	return rc;
}

int tls_accept(struct tls_conf *c, int fd, int timeout_ms, struct tls_sess **out)
{
	return start(c, fd, SSL_accept, timeout_ms, out);
}

bool tls_pending(const struct tls_sess *t)
{
	/* (with read-ahead, whole records may wait undecrypted too) */
	return SSL_has_pending(t->ssl) == 1;
}

void tls_free(struct tls_sess *t)
{
	if (!t)
		return;
	ERR_clear_error();
	(void)SSL_shutdown(t->ssl);
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t);
}

/* After an SSL call that did not complete: 0 once the socket is ready to
 * try again (within timeout_ms), or why it failed. */
static int retry_or_fail(struct tls_sess *t, int timeout_ms)
{
	int err = SSL_get_error(t->ssl, 0);

	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return wait_io(t->fd, err, timeout_ms);
	return ssl_code(t, err);
}

int tls_read_full(struct tls_sess *t, void *buf, size_t n, int timeout_ms)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < n) {
		size_t k = 0;
		int err;

		ERR_clear_error();
		if (SSL_read_ex(t->ssl, p + got, n - got, &k) == 1) {
			got += k;
			continue;
		}
		err = retry_or_fail(t, timeout_ms);
		if (err)
			return err;
	}
	return 0;
}

static int write_all(struct tls_sess *t, const void *buf, size_t n, int timeout_ms)
{
	while (n > 0) {
		size_t k = 0;
		int err;

		ERR_clear_error();
		if (SSL_write_ex(t->ssl, buf, n, &k) == 1)
			return 0;    /* (without partial writes: all of it) */
		err = retry_or_fail(t, timeout_ms);
		if (err)
			return err;
	}
	return 0;
}

/* Send what a batched write left in the batch, waiting for room. */
static int flush_batch(struct tls_sess *t, int timeout_ms)
{
	struct sock *k = t->sock;

	while (k->off < k->len) {
		int rc;
		if (drain(k) < 0)
			return errno == EPIPE ? -ECONNRESET : -errno;
		if (k->off < k->len && (rc = net_wait_fd(k->fd, POLLOUT, timeout_ms)) != 0)
			return rc;
	}
	return 0;
}

/* A large write, its records sent in batches. */
static int write_batched(struct tls_sess *t, struct iovec *iov, int n, int timeout_ms)
{
	struct sock *k = t->sock;
	int rc = 0;

	k->batch = true;
	for (int i = 0; i < n && !rc; i++)
		rc = iov[i].iov_len ? write_all(t, iov[i].iov_base, iov[i].iov_len, timeout_ms) : 0;
	if (!rc)
		rc = flush_batch(t, timeout_ms);
	k->batch = false;
	if (rc)
		k->off = k->len = 0;    /* (the session is not used after an error) */
	return rc;
}

int tls_writev_full(struct tls_sess *t, struct iovec *iov, int n, int timeout_ms)
{
	uint8_t small[COALESCE_MAX];
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (total <= sizeof(small)) {
		size_t off = 0;
		for (int i = 0; i < n; i++) {
			if (iov[i].iov_len)
				memcpy(small + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
		return total ? write_all(t, small, total, timeout_ms) : 0;
	}
	if (total >= BATCH_MIN && (t->sock->buf || (t->sock->buf = malloc(BATCH_BYTES))))
		return write_batched(t, iov, n, timeout_ms);
	for (int i = 0; i < n; i++) {
		int rc = iov[i].iov_len ? write_all(t, iov[i].iov_base, iov[i].iov_len, timeout_ms) : 0;
		if (rc)
			return rc;
	}
	return 0;
}
