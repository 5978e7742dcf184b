/*
 * crl.c - the cluster's revocation list (see crl.h): an X.509 CRL the CA
 * signed, decoded once into a sorted array of serials for the lookups of
 * every handshake and request; the DER bytes kept to answer the pulls of
 * peers; the file in PEM. OpenSSL's errors stop here: every failure is
 * one of crl.h's codes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"

/* The file at most: a CRL of CRL_MAX_DER bytes in PEM (base64, 64 to a
 * line), or the previous release's list (4096 serials, 41 bytes each). */
#define CRL_FILE_MAX ((CRL_MAX_DER / 3 + 1) * 4 / 64 * 65 + 256)
#define PEM_BEGIN "-----BEGIN X509 CRL-----"

struct crl {
	pthread_mutex_t wmu;         /* one writer of the file at a time */
	pthread_mutex_t mu;
	char *path;                  /* NULL: in memory only */
	X509 *ca;                    /* verifies offers (NULL: none taken) */
	struct crl_entry *e;         /* sorted, unique; guarded by mu */
	size_t n;                    /* guarded by mu */
	uint8_t *der;                /* the signed CRL held (NULL: none); mu */
	size_t derlen;               /* guarded by mu */
	uint64_t number;             /* its CRL number (0: none); mu */
	_Atomic uint64_t gen;        /* bumped by every change */
};

/* What a CRL (or the previous release's list) decodes to. */
struct parsed {
	struct crl_entry *e;
	size_t n;
	uint64_t number;
};

int crl_serial_cmp(const struct crl_serial *a, const struct crl_serial *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->b, b->b, a->len);
}

static int entry_cmp(const void *a, const void *b)
{
	return crl_serial_cmp(&((const struct crl_entry *)a)->serial,
			      &((const struct crl_entry *)b)->serial);
}

static bool serial_ok(const struct crl_serial *s)
{
	return s->len > 0 && s->len <= CRL_SERIAL_MAX && (s->len == 1 || s->b[0] != 0);
}

void crl_serial_hex(const struct crl_serial *s, char buf[2 * CRL_SERIAL_MAX + 1])
{
	for (uint8_t i = 0; i < s->len && i < CRL_SERIAL_MAX; i++)
		snprintf(buf + 2 * i, 3, "%02x", s->b[i]);
	buf[2 * (s->len <= CRL_SERIAL_MAX ? s->len : 0)] = '\0';
}

int crl_serial_from_hex(const char *hex, size_t n, struct crl_serial *s)
{
	if (n == 0 || n % 2 || n / 2 > CRL_SERIAL_MAX)
		return -EINVAL;
	s->len = (uint8_t)(n / 2);
	if (parse_hex_lower(hex, s->len, s->b))
		return -EINVAL;
	return serial_ok(s) ? 0 : -EINVAL;
}

/* Sort p's entries and drop repeated serials (the first date kept). */
static void sort_unique(struct parsed *p)
{
	size_t k = 0;

	if (p->n)
		qsort(p->e, p->n, sizeof(p->e[0]), entry_cmp);
	for (size_t i = 0; i < p->n; i++)
		if (k == 0 || entry_cmp(&p->e[k - 1], &p->e[i]) != 0)
			p->e[k++] = p->e[i];
	p->n = k;
}

/* ---- decoding ------------------------------------------------------------ */

/* One revoked certificate's serial and date. */
static int entry_of(X509_REVOKED *r, struct crl_entry *e)
{
	const ASN1_INTEGER *ai = X509_REVOKED_get0_serialNumber(r);
	BIGNUM *bn = ai && ASN1_STRING_type(ai) == V_ASN1_INTEGER ? ASN1_INTEGER_to_BN(ai, NULL) : NULL;
	int nb = bn ? BN_num_bytes(bn) : -1;
	struct tm tm;

	memset(e, 0, sizeof(*e));
	if (nb < 0 || nb > CRL_SERIAL_MAX) {
		BN_free(bn);
		return -OFS_ECORRUPT;
	}
	e->serial.len = nb ? (uint8_t)BN_bn2bin(bn, e->serial.b) : 1;   /* (0: one zero byte) */
	BN_free(bn);
	if (ASN1_TIME_to_tm(X509_REVOKED_get0_revocationDate(r), &tm) != 1)
		return -OFS_ECORRUPT;
	e->when = (int64_t)timegm(&tm);
	return 0;
}

/* The CRL's number and entries, once its signature was verified. */
static int content_of(X509_CRL *x, struct parsed *p)
{
	STACK_OF(X509_REVOKED) *rs = X509_CRL_get_REVOKED(x);
	ASN1_INTEGER *num;
	int crit = 0, n = rs ? sk_X509_REVOKED_num(rs) : 0, rc = 0;

	if (X509_CRL_get_version(x) != X509_CRL_VERSION_2)
		return -OFS_ECORRUPT;
	num = X509_CRL_get_ext_d2i(x, NID_crl_number, &crit, NULL);
	if (!num || ASN1_INTEGER_get_uint64(&p->number, num) != 1)
		rc = -OFS_ECORRUPT;
	ASN1_INTEGER_free(num);
	if (rc)
		return rc;
	p->e = calloc(n ? (size_t)n : 1, sizeof(p->e[0]));
	if (!p->e)
		return -ENOMEM;
	for (int i = 0; i < n && !rc; i++)
		rc = entry_of(sk_X509_REVOKED_value(rs, i), &p->e[i]);
	p->n = rc ? 0 : (size_t)n;
	if (!rc)
		sort_unique(p);
	return rc;
}

/* Decode der[0..len) and check that ca signed it: the whole of it, and
 * nothing of it believed before the signature is. */
static int parse_der(X509 *ca, const uint8_t *der, size_t len, struct parsed *p)
{
	const unsigned char *q = der;
	X509_CRL *x;
	int rc;

	memset(p, 0, sizeof(*p));
	if (len > CRL_MAX_DER)
		return -OFS_ETOOBIG;
	if (!ca)
		return -OFS_ENOTCA;
	x = len ? d2i_X509_CRL(NULL, &q, (long)len) : NULL;
	if (!x || q != der + len)
		rc = -OFS_ECORRUPT;
	else if (X509_NAME_cmp(X509_CRL_get_issuer(x), X509_get_subject_name(ca)) != 0 ||
		 X509_CRL_verify(x, X509_get0_pubkey(ca)) != 1)
		rc = -OFS_ENOTCA;
	else
		rc = content_of(x, p);
	X509_CRL_free(x);
	ERR_clear_error();
	if (rc) {
		free(p->e);
		memset(p, 0, sizeof(*p));
	}
	return rc;
}

/* The previous release's file: one serial a line. */
static int parse_unsigned(const char *text, size_t len, struct parsed *p)
{
	size_t pos = 0, lines = 1;

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	p->e = calloc(lines, sizeof(p->e[0]));
	if (!p->e)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - text - pos) : len - pos;

		if (ll && crl_serial_from_hex(text + pos, ll, &p->e[p->n++].serial)) {
			free(p->e);
			memset(p, 0, sizeof(*p));
			return -EINVAL;
		}
		pos += ll + 1;
	}
	sort_unique(p);
	return 0;
}

/* A PEM CRL's DER bytes (*der malloc'd). */
static int pem_to_der(const char *text, size_t len, uint8_t **der, size_t *derlen)
{
	BIO *b = BIO_new_mem_buf(text, (int)len);
	X509_CRL *x = b ? PEM_read_bio_X509_CRL(b, NULL, NULL, NULL) : NULL;
	int n = x ? i2d_X509_CRL(x, NULL) : -1;
	unsigned char *q;
	int rc = 0;

	if (!b)
		rc = -ENOMEM;
	else if (!x || n <= 0)
		rc = -EINVAL;
	else if (!(*der = malloc((size_t)n)))
		rc = -ENOMEM;
	if (!rc) {
		q = *der;
		*derlen = (size_t)i2d_X509_CRL(x, &q);
	}
	X509_CRL_free(x);
	BIO_free(b);
	ERR_clear_error();
	return rc;
}

/* ---- the file -------------------------------------------------------------- */

static int write_pem(const char *path, const uint8_t *der, size_t len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int rc = -ENOMEM;

	if (b && PEM_write_bio(b, "X509 CRL", "", der, (long)len) > 0) {
		n = BIO_get_mem_data(b, &data);
		rc = n > 0 ? fdio_write_file(path, data, (size_t)n, 0600) : -EIO;
	}
	BIO_free(b);
	ERR_clear_error();
	return rc;
}

static int write_unsigned(const char *path, const struct crl_entry *e, size_t n)
{
	char *text = malloc(n * (2 * CRL_SERIAL_MAX + 1) + 1);
	size_t len = 0;
	int rc;

	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		crl_serial_hex(&e[i].serial, text + len);
		len += strlen(text + len);
		text[len++] = '\n';
	}
	rc = fdio_write_file(path, text, len, 0600);
	free(text);
	return rc;
}

static X509 *load_ca(const char *path)
{
	FILE *f = fopen(path, "re");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;

	if (f)
		fclose(f);
	ERR_clear_error();
	return x;
}

/* The file's list into c (empty, not yet shared). */
static int load(struct crl *c)
{
	char *text = malloc(CRL_FILE_MAX);
	struct parsed p = { 0 };
	size_t got = 0;
	int rc;

	if (!text)
		return -ENOMEM;
	rc = fdio_read_file(c->path, text, CRL_FILE_MAX, &got);
	if (rc == -ENOENT) {
		free(text);
		return 0;                /* (no list yet: empty) */
	}
	if (rc == -EFBIG)
		rc = -EINVAL;
	if (!rc && got >= strlen(PEM_BEGIN) && !memcmp(text, PEM_BEGIN, strlen(PEM_BEGIN))) {
		rc = pem_to_der(text, got, &c->der, &c->derlen);
		if (!rc)
			rc = parse_der(c->ca, c->der, c->derlen, &p);
		if (!rc && p.number == 0)
			rc = -OFS_ECORRUPT;     /* (never taken, so never written) */
	} else if (!rc) {
		rc = parse_unsigned(text, got, &p);
	}
	free(text);
	if (rc)
		return rc == -OFS_ECORRUPT || rc == -OFS_ETOOBIG ? -EINVAL : rc;
	c->e = p.e;
	c->n = p.n;
	c->number = p.number;
	return 0;
}

int crl_open(const char *path, const char *ca_path, struct crl **out)
{
	struct crl *c = calloc(1, sizeof(*c));
	int rc = 0;

	if (!c || (path && !(c->path = strdup(path)))) {
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->wmu, NULL);
	pthread_mutex_init(&c->mu, NULL);
	if (ca_path && !(c->ca = load_ca(ca_path)))
		rc = -EINVAL;
	if (!rc && path)
		rc = load(c);
	if (rc) {
		crl_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void crl_close(struct crl *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->wmu);
	X509_free(c->ca);
	free(c->e);
	free(c->der);
	free(c->path);
	free(c);
}

/* ---- the list ---------------------------------------------------------------- */

bool crl_has(struct crl *c, const struct crl_serial *s)
{
	struct crl_entry key = { .serial = *s };
	bool found;

	pthread_mutex_lock(&c->mu);
	found = c->n && bsearch(&key, c->e, c->n, sizeof(key), entry_cmp) != NULL;
	pthread_mutex_unlock(&c->mu);
	return found;
}

uint64_t crl_generation(struct crl *c)
{
	return atomic_load(&c->gen);
}

size_t crl_count(struct crl *c)
{
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = c->n;
	pthread_mutex_unlock(&c->mu);
	return n;
}

uint64_t crl_number(struct crl *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->mu);
	n = c->number;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int crl_entries(struct crl *c, struct crl_entry **e, size_t *n)
{
	struct crl_entry *copy;

	pthread_mutex_lock(&c->mu);
	copy = malloc((c->n ? c->n : 1) * sizeof(*copy));
	if (copy) {
		if (c->n)
			memcpy(copy, c->e, c->n * sizeof(*copy));
		*n = c->n;
		*e = copy;
	}
	pthread_mutex_unlock(&c->mu);
	return copy ? 0 : -ENOMEM;
}

/* Hold p and der (taking both) in place of what c holds (wmu held). */
static void replace(struct crl *c, struct parsed *p, uint8_t *der, size_t derlen)
{
	struct crl_entry *old_e;
	uint8_t *old_der;

	pthread_mutex_lock(&c->mu);
	old_e = c->e;
	old_der = c->der;
	c->e = p->e;
	c->n = p->n;
	c->der = der;
	c->derlen = derlen;
	c->number = p->number;
	atomic_fetch_add(&c->gen, 1);
	pthread_mutex_unlock(&c->mu);
	free(old_e);
	free(old_der);
}

int crl_offer(struct crl *c, const uint8_t *der, size_t len, uint64_t *number)
{
	struct parsed p;
	uint8_t *copy = NULL;
	int rc = parse_der(c->ca, der, len, &p);

	if (rc)
		return rc;
	if (number)
		*number = p.number;
	pthread_mutex_lock(&c->wmu);
	if (p.number <= crl_number(c))
		rc = 0;                  /* (not newer: nothing changes) */
	else if (!(copy = malloc(len)))
		rc = -ENOMEM;
	else if (!c->path || !(rc = write_pem(c->path, der, len)))
		rc = 1;
	if (rc == 1) {
		memcpy(copy, der, len);
		replace(c, &p, copy, len);
	} else {
		free(copy);
		free(p.e);
	}
	pthread_mutex_unlock(&c->wmu);
	return rc;
}

/* dst's unsigned list and src's, as one (neither holds a CRL). */
static int take_unsigned(struct crl *dst, struct crl *src)
{
	struct parsed p = { 0 };
	struct crl_entry *se = NULL;
	size_t sn = 0, before;
	int rc = crl_entries(src, &se, &sn);

	if (rc)
		return rc;
	pthread_mutex_lock(&dst->wmu);
	before = crl_count(dst);
	rc = crl_number(dst) ? 0 : crl_entries(dst, &p.e, &p.n);
	if (!rc && !crl_number(dst)) {
		struct crl_entry *grown = realloc(p.e, (p.n + sn + 1) * sizeof(*grown));
		rc = grown ? 0 : -ENOMEM;
		if (grown) {
			p.e = grown;
			memcpy(p.e + p.n, se, sn * sizeof(*se));
			p.n += sn;
			sort_unique(&p);
		}
	}
	if (!rc && p.n > before && dst->path)
		rc = write_unsigned(dst->path, p.e, p.n);
	if (!rc && p.n > before) {
		replace(dst, &p, NULL, 0);
		rc = 1;
	} else {
		free(p.e);
	}
	pthread_mutex_unlock(&dst->wmu);
	free(se);
	return rc;
}

int crl_take(struct crl *dst, struct crl *src)
{
	uint8_t *der = NULL;
	size_t len = 0;
	int rc = 0;

	pthread_mutex_lock(&src->mu);
	if (src->der) {
		der = malloc(src->derlen);
		if (der)
			memcpy(der, src->der, len = src->derlen);
		else
			rc = -ENOMEM;
	}
	pthread_mutex_unlock(&src->mu);
	if (!rc && der)
		rc = crl_offer(dst, der, len, NULL);
	else if (!rc && crl_count(src))
		rc = take_unsigned(dst, src);
	free(der);
	return rc;
}

/* ---- the wire ------------------------------------------------------------------ */

void crl_pull_encode(struct wbuf *w, uint64_t held)
{
	wbuf_u8(w, 0);
	wbuf_u64(w, held);
}

bool crl_pull_decode(const uint8_t *p, size_t len, uint64_t *held)
{
	struct rbuf r;

	if (len != CRL_PULL_LEN || p[0] != 0)
		return false;
	rbuf_init(&r, p + 1, 8);
	*held = rbuf_u64(&r);
	return true;
}

bool crl_is_der(const uint8_t *p, size_t len)
{
	return len >= 2 && len <= CRL_MAX_DER && p[0] == 0x30;
}

bool crl_is_unsigned(const uint8_t *p, size_t len)
{
	struct rbuf r;
	size_t count;

	rbuf_init(&r, p, len);
	count = rbuf_u16(&r);
	for (size_t i = 0; i < count && !rbuf_error(&r); i++) {
		uint8_t n = rbuf_u8(&r);
		if (n == 0 || n > CRL_SERIAL_MAX)
			rbuf_fail(&r, -OFS_ECORRUPT);
		(void)rbuf_bytes(&r, n);
	}
	return rbuf_done(&r) == 0;
}

void crl_answer_encode(struct wbuf *w, uint64_t number, const uint8_t *der, size_t derlen)
{
	wbuf_u64(w, number);
	if (der)
		wbuf_bytes(w, der, derlen);
}

int crl_answer(struct crl *c, uint64_t asked, struct wbuf *w)
{
	pthread_mutex_lock(&c->mu);
	crl_answer_encode(w, c->number, c->number > asked ? c->der : NULL, c->derlen);
	pthread_mutex_unlock(&c->mu);
	return wbuf_error(w);
}

int crl_answer_decode(const uint8_t *p, size_t len, uint64_t *number, const uint8_t **der,
		      size_t *derlen)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*number = rbuf_u64(&r);
	if (rbuf_error(&r) || (len > 8 && !crl_is_der(p + 8, len - 8)))
		return -OFS_ECORRUPT;
	*der = len > 8 ? p + 8 : NULL;
	*derlen = len - 8;
	return 0;
}
