/* cap.c - capabilities: canonical encoding, HMAC-SHA256, checks; the
 * capability keys and the CA's signature on them (see cap.h). */
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "lib/cap.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"

static int oid_order(const void *a, const void *b)
{
	return oid_cmp(*(const struct ofs_oid *)a, *(const struct ofs_oid *)b);
}

void cap_sort_oids(struct ofs_cap *c)
{
	uint16_t n = 0;

	if (c->noids > CAP_MAX_OIDS)
		c->noids = CAP_MAX_OIDS;
	qsort(c->oids, c->noids, sizeof(c->oids[0]), oid_order);
	for (uint16_t i = 0; i < c->noids; i++)
		if (n == 0 || !oid_eq(c->oids[n - 1], c->oids[i]))
			c->oids[n++] = c->oids[i];
	c->noids = n;
}

static bool canonical(const struct ofs_cap *c)
{
	if (c->noids == 0 || c->noids > CAP_MAX_OIDS || c->ops == 0 || (c->ops & ~CAP_KNOWN_BITS) ||
	    c->key_id == 0)
		return false;
	for (uint16_t i = 1; i < c->noids; i++)
		if (oid_cmp(c->oids[i - 1], c->oids[i]) >= 0)
			return false;
	return true;
}

/* Everything the MAC covers. */
static void encode_body(struct wbuf *w, const struct ofs_cap *c)
{
	wbuf_u8(w, CAP_VERSION);
	wbuf_sid(w, c->issuer);
	wbuf_u32(w, c->key_id);
	wbuf_u64(w, c->expires);
	wbuf_u32(w, c->ops);
	wbuf_bytes(w, c->fpr, IDENT_FPR_LEN);
	wbuf_u16(w, c->noids);
	for (uint16_t i = 0; i < c->noids; i++)
		wbuf_oid(w, c->oids[i]);
}

/* HMAC-SHA256 of c's body under key into mac. */
static int mac_of(const struct ofs_cap *c, const uint8_t key[CAP_KEY_LEN],
		  uint8_t mac[CAP_MAC_LEN])
{
	uint8_t body[CAP_MAX_LEN];
	struct wbuf w;
	unsigned int n = 0;
	int rc = 0;

	wbuf_init(&w);
	encode_body(&w, c);
	if (wbuf_error(&w) || w.len > sizeof(body))
		rc = -ENOMEM;
	else
		memcpy(body, w.data, w.len);
	if (!rc && (!HMAC(EVP_sha256(), key, CAP_KEY_LEN, body, w.len, mac, &n) || n != CAP_MAC_LEN))
		rc = -ENOMEM;
	wbuf_free(&w);
	return rc;
}

int cap_sign(struct ofs_cap *c, const struct cap_key *k)
{
	c->key_id = k->id;
	if (!canonical(c))
		return -EINVAL;
	return mac_of(c, k->key, c->mac);
}

void cap_encode(struct wbuf *w, const struct ofs_cap *c)
{
	encode_body(w, c);
	wbuf_bytes(w, c->mac, CAP_MAC_LEN);
}

int cap_decode(const uint8_t *p, size_t n, struct ofs_cap *c)
{
	struct rbuf r;
	const uint8_t *b;

	memset(c, 0, sizeof(*c));
	rbuf_init(&r, p, n);
	if (rbuf_u8(&r) != CAP_VERSION)
		rbuf_fail(&r, -OFS_ECORRUPT);
	c->issuer = rbuf_sid(&r);
	c->key_id = rbuf_u32(&r);
	c->expires = rbuf_u64(&r);
	c->ops = rbuf_u32(&r);
	b = rbuf_bytes(&r, IDENT_FPR_LEN);
	if (b)
		memcpy(c->fpr, b, IDENT_FPR_LEN);
	c->noids = rbuf_u16(&r);
	if (c->noids > CAP_MAX_OIDS)
		rbuf_fail(&r, -OFS_ECORRUPT);
	for (uint16_t i = 0; i < c->noids && !rbuf_error(&r); i++)
		c->oids[i] = rbuf_oid(&r);
	b = rbuf_bytes(&r, CAP_MAC_LEN);
	if (b)
		memcpy(c->mac, b, CAP_MAC_LEN);
	if (rbuf_done(&r) || !canonical(c)) {
		memset(c, 0, sizeof(*c));
		return -OFS_ECORRUPT;
	}
	return 0;
}

int cap_check(const struct ofs_cap *c, const struct cap_key *keys, size_t nkeys,
	      const uint8_t fpr[IDENT_FPR_LEN], struct ofs_oid oid, uint32_t op, uint64_t now)
{
	const struct cap_key *k = NULL;
	uint8_t mac[CAP_MAC_LEN];
	int rc;

	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].id == c->key_id)
			k = &keys[i];
	if (!k || !canonical(c))
		return -OFS_ECAPBAD;
	rc = mac_of(c, k->key, mac);
	if (rc)
		return rc;
	if (CRYPTO_memcmp(mac, c->mac, CAP_MAC_LEN) != 0)
		return -OFS_ECAPBAD;
	if (now >= c->expires)
		return -OFS_ECAPEXPIRED;
	if (CRYPTO_memcmp(fpr, c->fpr, IDENT_FPR_LEN) != 0)
		return -EACCES;
	return cap_allows(c, oid, op, now);
}

bool cap_covers(const struct ofs_cap *c, struct ofs_oid oid)
{
	size_t lo = 0, hi = c->noids;

	/* (the OIDs are strictly ascending: canonical) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = oid_cmp(c->oids[mid], oid);
		if (d == 0)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int cap_allows(const struct ofs_cap *c, struct ofs_oid oid, uint32_t op, uint64_t now)
{
	if (now >= c->expires)
		return -OFS_ECAPEXPIRED;
	if (!cap_covers(c, oid) || (c->ops & op) != op || op == 0)
		return -EACCES;
	return 0;
}

/* The proof half of an OID uid makes with nonce (cap.h). */
static void oid_proof(uint32_t uid, const uint8_t nonce[8], uint8_t proof[8])
{
	static const char tag[] = "ofs-oid-1";
	uint8_t in[sizeof(tag) - 1 + 4 + 8], md[SHA256_DIGEST_LENGTH];

	memcpy(in, tag, sizeof(tag) - 1);
	in[sizeof(tag) - 1] = (uint8_t)(uid >> 24);
	in[sizeof(tag)] = (uint8_t)(uid >> 16);
	in[sizeof(tag) + 1] = (uint8_t)(uid >> 8);
	in[sizeof(tag) + 2] = (uint8_t)uid;
	memcpy(in + sizeof(tag) + 3, nonce, 8);
	SHA256(in, sizeof(in), md);
	memcpy(proof, md, 8);
}

int cap_oid_generate(uint32_t uid, struct ofs_oid *out)
{
	struct ofs_oid o;
	int rc = oid_generate(&o);

	if (rc)
		return rc;
	oid_proof(uid, o.b, o.b + 8);
	if (oid_is_zero(o))
		return -EAGAIN;      /* (2^-128: never) */
	*out = o;
	return 0;
}

bool cap_oid_made_by(struct ofs_oid oid, uint32_t uid)
{
	uint8_t proof[8];

	oid_proof(uid, oid.b, proof);
	return CRYPTO_memcmp(proof, oid.b + 8, 8) == 0;
}

/* One "ID HEX" line of n bytes (no newline), ID in decimal without a
 * leading zero: one spelling per key, as cap_keys_format writes it. */
static int parse_line(const char *s, size_t n, struct cap_key *k)
{
	uint64_t id = 0;
	size_t i = 0;

	if (n && s[0] == '0')
		return -EINVAL;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i < 10)
		id = id * 10 + (uint64_t)(s[i++] - '0');
	if (i == 0 || id == 0 || id > UINT32_MAX || i >= n || s[i] != ' ' ||
	    n - i - 1 != 2 * CAP_KEY_LEN)
		return -EINVAL;
	if (parse_hex_lower(s + i + 1, CAP_KEY_LEN, k->key))
		return -EINVAL;
	k->id = (uint32_t)id;
	return 0;
}

int cap_keys_parse(const char *text, size_t len, struct cap_key keys[CAP_MAX_KEYS], size_t *n)
{
	struct cap_key t[CAP_MAX_KEYS];
	size_t pos = 0, cnt = 0;
	int rc = 0;

	while (!rc && pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (ll == 0 && !nl)
			break;
		if (cnt == CAP_MAX_KEYS || (rc = parse_line(text + pos, ll, &t[cnt])) != 0) {
			rc = -EINVAL;
			break;
		}
		for (size_t i = 0; i < cnt; i++)
			if (t[i].id == t[cnt].id)
				rc = -EINVAL;
		cnt++;
		pos += ll + (nl ? 1 : 0);
	}
	if (!rc && cnt == 0)
		rc = -EINVAL;
	if (!rc) {
		memcpy(keys, t, cnt * sizeof(t[0]));
		*n = cnt;
	}
	OPENSSL_cleanse(t, sizeof(t));
	return rc;
}

size_t cap_keys_format(const struct cap_key *keys, size_t n, char *buf)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < CAP_MAX_KEYS; i++) {
		len += (size_t)snprintf(buf + len, CAP_KEYS_TEXT_MAX - len, "%u ", (unsigned)keys[i].id);
		for (size_t j = 0; j < CAP_KEY_LEN; j++)
			len += (size_t)snprintf(buf + len, CAP_KEYS_TEXT_MAX - len, "%02x",
						keys[i].key[j]);
		len += (size_t)snprintf(buf + len, CAP_KEYS_TEXT_MAX - len, "\n");
	}
	return len;
}

struct cap_ring {
	pthread_mutex_t mu;
	char *path;
	EVP_PKEY *ca;                        /* verifies signed sets (NULL: none) */
	struct cap_key keys[CAP_MAX_KEYS];   /* guarded by mu */
	size_t n;                            /* guarded by mu */
	bool is_signed;                      /* sig holds the CA's; mu */
	uint8_t sig[CAP_SIG_LEN];            /* guarded by mu */
	_Atomic uint64_t gen;                /* bumped by every set taken */
};

uint64_t cap_ring_generation(struct cap_ring *r)
{
	return atomic_load(&r->gen);
}

/* Did the CA (ca) sign keys[0..n) with sig? */
static bool signed_by(EVP_PKEY *ca, const struct cap_key *keys, size_t n,
		      const uint8_t sig[CAP_SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	struct wbuf m;
	bool ok;

	wbuf_init(&m);
	cap_keys_to_sign(&m, keys, n);
	ok = ca && ctx && !wbuf_error(&m) && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, ca) == 1 &&
	     EVP_DigestVerify(ctx, sig, CAP_SIG_LEN, m.data, m.len) == 1;
	OPENSSL_cleanse(m.data, m.len);
	wbuf_free(&m);
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

static EVP_PKEY *load_ca_key(const char *path)
{
	FILE *f = fopen(path, "re");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	EVP_PKEY *k = x ? X509_get_pubkey(x) : NULL;

	if (f)
		fclose(f);
	X509_free(x);
	ERR_clear_error();
	return k;
}

/* The file's text: the key lines, then "sig HEX" when signed. */
static int ring_parse(struct cap_ring *r, char *text, size_t len)
{
	static const char tag[] = "sig ";
	size_t end = len, at;
	int rc;

	while (end > 0 && text[end - 1] == '\n')
		end--;
	at = end;
	while (at > 0 && text[at - 1] != '\n')
		at--;
	if (end - at == sizeof(tag) - 1 + 2 * CAP_SIG_LEN && !memcmp(text + at, tag, sizeof(tag) - 1)) {
		if (parse_hex_lower(text + at + sizeof(tag) - 1, CAP_SIG_LEN, r->sig))
			return -EINVAL;
		r->is_signed = r->ca != NULL;
		len = at;
	}
	rc = cap_keys_parse(text, len, r->keys, &r->n);
	if (!rc && r->is_signed && !signed_by(r->ca, r->keys, r->n, r->sig))
		rc = -OFS_ENOTCA;
	return rc;
}

int cap_ring_open(const char *path, const char *ca_path, struct cap_ring **out)
{
	struct cap_ring *r = calloc(1, sizeof(*r));
	char text[CAP_KEYS_TEXT_MAX + 4 + 2 * CAP_SIG_LEN + 64];
	size_t got = 0;
	int rc = 0;

	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	if (ca_path && !(r->ca = load_ca_key(ca_path)))
		rc = -EINVAL;
	if (!rc)
		rc = fdio_read_file(path, text, sizeof(text), &got);
	if (!rc)
		rc = ring_parse(r, text, got);
	else if (rc == -EFBIG)
		rc = -EINVAL;
	OPENSSL_cleanse(text, sizeof(text));
	if (rc) {
		cap_ring_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void cap_ring_close(struct cap_ring *r)
{
	if (!r)
		return;
	OPENSSL_cleanse(r->keys, sizeof(r->keys));
	EVP_PKEY_free(r->ca);
	pthread_mutex_destroy(&r->mu);
	free(r->path);
	free(r);
}

size_t cap_ring_get(struct cap_ring *r, struct cap_key keys[CAP_MAX_KEYS])
{
	size_t n;

	pthread_mutex_lock(&r->mu);
	n = r->n;
	memcpy(keys, r->keys, n * sizeof(keys[0]));
	pthread_mutex_unlock(&r->mu);
	return n;
}

uint32_t cap_ring_signed_id(struct cap_ring *r)
{
	uint32_t id;

	pthread_mutex_lock(&r->mu);
	id = r->is_signed && r->n ? r->keys[0].id : 0;
	pthread_mutex_unlock(&r->mu);
	return id;
}

/* The file of a signed set (mu held). */
static int ring_write(struct cap_ring *r, const struct cap_key *keys, size_t n,
		      const uint8_t sig[CAP_SIG_LEN])
{
	char text[CAP_KEYS_TEXT_MAX + 4 + 2 * CAP_SIG_LEN + 2];
	size_t len = cap_keys_format(keys, n, text);
	int rc;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "sig ");
	for (size_t i = 0; i < CAP_SIG_LEN; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%02x", sig[i]);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "\n");
	rc = fdio_write_file(r->path, text, len, 0600);
	OPENSSL_cleanse(text, sizeof(text));
	return rc;
}

int cap_ring_offer(struct cap_ring *r, const uint8_t *p, size_t len)
{
	struct cap_key keys[CAP_MAX_KEYS];
	uint8_t sig[CAP_SIG_LEN];
	size_t n = 0;
	int rc = cap_keys_signed_decode(p, len, keys, &n, sig);

	if (!rc && !signed_by(r->ca, keys, n, sig))
		rc = -OFS_ENOTCA;
	if (rc)
		goto out;
	pthread_mutex_lock(&r->mu);
	if (r->is_signed && keys[0].id == r->keys[0].id)
		rc = 0;                  /* (the set held: nothing changes) */
	else if (r->is_signed && keys[0].id < r->keys[0].id)
		rc = -ESTALE;
	else if ((rc = ring_write(r, keys, n, sig)) == 0) {
		memcpy(r->keys, keys, n * sizeof(keys[0]));
		r->n = n;
		memcpy(r->sig, sig, CAP_SIG_LEN);
		r->is_signed = true;
		atomic_fetch_add(&r->gen, 1);
		rc = 1;
	}
	pthread_mutex_unlock(&r->mu);
out:
	OPENSSL_cleanse(keys, sizeof(keys));
	return rc;
}

int cap_ring_answer(struct cap_ring *r, uint32_t newer_than, struct wbuf *w)
{
	int rc = 0;

	pthread_mutex_lock(&r->mu);
	if (r->is_signed && r->n && r->keys[0].id > newer_than) {
		cap_keys_signed_encode(w, r->keys, r->n, r->sig);
		rc = 1;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

void cap_keys_to_sign(struct wbuf *w, const struct cap_key *keys, size_t n)
{
	wbuf_bytes(w, CAP_KEYS_CONTEXT, sizeof(CAP_KEYS_CONTEXT));   /* (its NUL too) */
	wbuf_u8(w, CAP_KEYS_SIGNED);
	cap_keys_encode(w, keys, n);
}

void cap_keys_signed_encode(struct wbuf *w, const struct cap_key *keys, size_t n,
			    const uint8_t sig[CAP_SIG_LEN])
{
	wbuf_u8(w, CAP_KEYS_SIGNED);
	cap_keys_encode(w, keys, n);
	wbuf_bytes(w, sig, CAP_SIG_LEN);
}

int cap_keys_signed_decode(const uint8_t *p, size_t len, struct cap_key keys[CAP_MAX_KEYS],
			   size_t *n, uint8_t sig[CAP_SIG_LEN])
{
	if (len < 1 + CAP_SIG_LEN || p[0] != CAP_KEYS_SIGNED)
		return -OFS_ECORRUPT;
	if (cap_keys_decode(p + 1, len - 1 - CAP_SIG_LEN, keys, n))
		return -OFS_ECORRUPT;
	memcpy(sig, p + len - CAP_SIG_LEN, CAP_SIG_LEN);
	return 0;
}

void cap_keys_encode(struct wbuf *w, const struct cap_key *keys, size_t n)
{
	wbuf_u8(w, (uint8_t)n);
	for (size_t i = 0; i < n; i++) {
		wbuf_u32(w, keys[i].id);
		wbuf_bytes(w, keys[i].key, CAP_KEY_LEN);
	}
}

void cap_keys_pull_encode(struct wbuf *w, uint32_t held)
{
	wbuf_u8(w, 0);
	wbuf_u32(w, held);
}

bool cap_keys_pull_decode(const uint8_t *p, size_t len, uint32_t *held)
{
	struct rbuf r;

	if (len != 5 || p[0] != 0)
		return false;
	rbuf_init(&r, p + 1, 4);
	*held = rbuf_u32(&r);
	return true;
}

int cap_keys_decode(const uint8_t *p, size_t len, struct cap_key keys[CAP_MAX_KEYS], size_t *n)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*n = rbuf_u8(&r);
	if (*n == 0 || *n > CAP_MAX_KEYS)
		rbuf_fail(&r, -OFS_ECORRUPT);
	for (size_t i = 0; i < *n && !rbuf_error(&r); i++) {
		const uint8_t *b;
		keys[i].id = rbuf_u32(&r);
		b = rbuf_bytes(&r, CAP_KEY_LEN);
		if (b)
			memcpy(keys[i].key, b, CAP_KEY_LEN);
		if (keys[i].id == 0 || (i == 1 && keys[1].id == keys[0].id))
			rbuf_fail(&r, -OFS_ECORRUPT);
	}
	if (rbuf_done(&r)) {
		OPENSSL_cleanse(keys, sizeof(keys[0]) * CAP_MAX_KEYS);
		*n = 0;
		return -OFS_ECORRUPT;
	}
	return 0;
}
