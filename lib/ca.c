/* ca.c - the cluster CA: keys, certificates, the capability keys and the
 * revocation list it signs (see ca.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "lib/ca.h"
#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"

#define CA_DAYS 3650

/* rc, with "WHAT: REASON" in why (REASON NULL: rc's description). */
static int fail(char *why, int rc, const char *what, const char *reason)
{
	snprintf(why, TLS_WHY_MAX, "%s: %s", what,
		 reason ? reason : rc < 0 ? ofs_strerror(rc) : "failed");
	ERR_clear_error();
	return rc;
}

/* A PEM object (key or certificate) as a new file, 0600. */
static int write_pem(const char *path, EVP_PKEY *k, X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int rc = -ENOMEM;

	if (!b)
		return -ENOMEM;
	if ((k && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1) ||
	    (x && PEM_write_bio_X509(b, x) == 1)) {
		n = BIO_get_mem_data(b, &data);
		rc = n > 0 ? fdio_write_new(path, data, (size_t)n, 0600) : -EIO;
	}
	BIO_free(b);
	return rc;
}

/* dir's parents, as mkdir -p makes them (0700). */
static void make_parents(const char *dir)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		(void)mkdir(p, 0700);
		*s = '/';
	}
}

/*
 * A directory of the caller's own to write a CA or an identity into:
 * made 0700, or one that exists and is the caller's (-EPERM: another's)
 * and, with empty, empty (-EEXIST); then made 0700 if it was looser.
 */
static int own_dir(const char *dir, bool empty)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int n = 0;

	make_parents(dir);
	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	d = empty ? opendir(dir) : NULL;
	if (empty && !d)
		return -errno;
	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	if (n)
		return -EEXIST;
	if ((st.st_mode & 077) && chmod(dir, 0700) < 0)
		return -errno;
	return 0;
}

/* own_dir's refusal, in why. */
static int dir_refused(char *why, int rc, const char *dir, const char *full)
{
	char reason[160];

	if (rc == -EEXIST)
		return fail(why, rc, dir, full);
	if (rc == -EPERM) {
		snprintf(reason, sizeof(reason), "not yours (you are uid %u): it is written only "
			 "into a directory of your own", (unsigned)geteuid());
		return fail(why, rc, dir, reason);
	}
	return fail(why, rc, dir, NULL);
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return -EINVAL;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok == 1 ? 0 : -ENOMEM;
}

/* A certificate for key k named cn, valid from now for secs (may be < 0). */
static X509 *new_cert(EVP_PKEY *k, const char *cn, long secs)
{
	X509 *x = X509_new();
	ASN1_INTEGER *serial;
	uint8_t rnd[16];
	BIGNUM *bn;

	if (!x)
		return NULL;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		X509_free(x);
		return NULL;
	}
	rnd[0] &= 0x7f;      /* a positive serial */
	bn = BN_bin2bn(rnd, sizeof(rnd), NULL);
	serial = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	BN_free(bn);
	if (!serial || X509_set_version(x, 2) != 1 || X509_set_serialNumber(x, serial) != 1 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), secs < 0 ? secs - 60 : -60) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), secs) || X509_set_pubkey(x, k) != 1 ||
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
				       (const unsigned char *)cn, -1, -1, 0) != 1) {
		ASN1_INTEGER_free(serial);
		X509_free(x);
		return NULL;
	}
	ASN1_INTEGER_free(serial);
	return x;
}

int ca_init(const char *cadir, char *why)
{
	char path[4200], cn[64], line[16 + 2 * CA_CAPKEY_LEN + 2];
	uint8_t rnd[CA_CAPKEY_LEN];
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	int rc;

	rc = own_dir(cadir, true);
	if (rc)
		return dir_refused(why, rc, cadir, "not empty: a CA directory is made only once, "
				   "into a new or empty directory");
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return fail(why, -EIO, cadir, "no randomness");
	snprintf(cn, sizeof(cn), "OFS cluster CA %02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
	k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	x = k ? new_cert(k, cn, (long)CA_DAYS * 86400) : NULL;
	rc = x ? 0 : -ENOMEM;
	if (!rc)
		X509_set_issuer_name(x, X509_get_subject_name(x));
	if (!rc)
		rc = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
	if (!rc)
		rc = add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
	if (!rc)
		rc = add_ext(x, x, NID_subject_key_identifier, "hash");
	if (!rc && X509_sign(x, k, NULL) <= 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "%s/ca.key", cadir);
	if (!rc)
		rc = write_pem(path, k, NULL);
	snprintf(path, sizeof(path), "%s/ca.crt", cadir);
	if (!rc)
		rc = write_pem(path, NULL, x);
	if (!rc) {
		size_t n = (size_t)snprintf(line, sizeof(line), "1 ");
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			rc = -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%02x", rnd[i]);
		snprintf(line + n, sizeof(line) - n, "\n");
		snprintf(path, sizeof(path), "%s/cap.key", cadir);
		if (!rc)
			rc = fdio_write_new(path, line, n + 1, 0600);
		OPENSSL_cleanse(line, sizeof(line));
		OPENSSL_cleanse(rnd, sizeof(rnd));
	}
	EVP_PKEY_free(k);
	X509_free(x);
	if (rc)
		return fail(why, rc, cadir, "cannot make the CA");
	return 0;
}

static int load_ca(const char *cadir, EVP_PKEY **k, X509 **x, char *why)
{
	char path[4200];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/ca.key", cadir);
	rc = tls_key_mode_ok(path, why);
	if (rc)
		return rc;
	f = fopen(path, "re");
	*k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	if (!*k)
		return fail(why, -EINVAL, path, "not a PEM private key");
	snprintf(path, sizeof(path), "%s/ca.crt", cadir);
	f = fopen(path, "re");
	*x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	if (!*x || X509_check_private_key(*x, *k) != 1) {
		EVP_PKEY_free(*k);
		X509_free(*x);
		return fail(why, -EINVAL, path, "not the certificate of ca.key");
	}
	return 0;
}

/* x's subjectAltName: the one URI (built directly: a URI may hold commas,
 * which the configuration-string parser would split). */
static int add_san_uri(X509 *x, const char *uri)
{
	GENERAL_NAMES *names = GENERAL_NAMES_new();
	GENERAL_NAME *g = GENERAL_NAME_new();
	ASN1_IA5STRING *s = ASN1_IA5STRING_new();
	int rc = -ENOMEM;

	if (names && g && s && ASN1_STRING_set(s, uri, (int)strlen(uri)) == 1) {
		GENERAL_NAME_set0_value(g, GEN_URI, s);
		s = NULL;
		if (sk_GENERAL_NAME_push(names, g) > 0) {
			g = NULL;
			rc = X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1
				     ? 0
				     : -EINVAL;
		}
	}
	ASN1_IA5STRING_free(s);
	GENERAL_NAME_free(g);
	GENERAL_NAMES_free(names);
	return rc;
}

/* The identity's certificate, signed by the CA. */
static X509 *issue_cert(EVP_PKEY *cak, X509 *cax, EVP_PKEY *k, const struct ident *id,
			long secs)
{
	char uri[IDENT_URI_MAX], cn[IDENT_URI_MAX];
	X509 *x;
	int rc;

	if (ident_encode(id, uri))
		return NULL;
	if (id->role == IDENT_SERVER) {
		char hex[OFS_OID_HEX];
		sid_to_hex(id->sid, hex);
		snprintf(cn, sizeof(cn), "server %s", hex);
	} else {
		snprintf(cn, sizeof(cn), "%s %s", ident_role_name(id->role), id->name);
	}
	x = new_cert(k, cn, secs);
	if (!x)
		return NULL;
	rc = X509_set_issuer_name(x, X509_get_subject_name(cax)) == 1 ? 0 : -ENOMEM;
	if (!rc)
		rc = add_ext(x, cax, NID_basic_constraints, "critical,CA:FALSE");
	if (!rc)
		rc = add_ext(x, cax, NID_key_usage, "critical,digitalSignature");
	if (!rc)
		rc = add_ext(x, cax, NID_ext_key_usage, "clientAuth,serverAuth");
	if (!rc)
		rc = add_san_uri(x, uri);
	if (!rc)
		rc = add_ext(x, cax, NID_authority_key_identifier, "keyid:always");
	if (!rc && X509_sign(x, cak, NULL) <= 0)
		rc = -EINVAL;
	if (rc) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* The files of an identity. */
static const char *const id_files[] = { "key.pem", "cert.pem", "ca.pem" };

int ca_issue(const char *cadir, const struct ident *id, int days, long valid_secs,
	     const char *outdir, unsigned flags, char *why)
{
	char path[4200], uri[IDENT_URI_MAX];
	EVP_PKEY *cak = NULL, *k = NULL;
	X509 *cax = NULL, *x = NULL;
	struct stat st;
	int rc;

	if (ident_encode(id, uri))
		return fail(why, -EINVAL, "issue", "not an identity a certificate can name");
	if (days < 1 || days > CA_DAYS_MAX)
		return fail(why, -EINVAL, "issue", "days from 1 to 36500");
	rc = load_ca(cadir, &cak, &cax, why);
	if (rc)
		return rc;
	rc = own_dir(outdir, !(flags & CA_ISSUE_BESIDE));
	for (size_t i = 0; !rc && i < sizeof(id_files) / sizeof(id_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", outdir, id_files[i]);
		rc = lstat(path, &st) == 0 ? -EEXIST : 0;
	}
	snprintf(path, sizeof(path), "%s/key.pem", outdir);
	if (rc) {
		rc = dir_refused(why, rc, outdir, lstat(path, &st) == 0
			? "holds an identity already (key.pem)"
			: "not empty: an identity is issued into a new or empty directory");
		goto out;
	}
	k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	x = k ? issue_cert(cak, cax, k, id, valid_secs ? valid_secs : (long)days * 86400) : NULL;
	rc = x ? 0 : -ENOMEM;
	/* (the key last: a directory with key.pem is a whole identity) */
	snprintf(path, sizeof(path), "%s/cert.pem", outdir);
	if (!rc)
		rc = write_pem(path, NULL, x);
	snprintf(path, sizeof(path), "%s/ca.pem", outdir);
	if (!rc)
		rc = write_pem(path, NULL, cax);
	snprintf(path, sizeof(path), "%s/key.pem", outdir);
	if (!rc)
		rc = write_pem(path, k, NULL);
	if (rc)
		fail(why, rc, outdir, NULL);
out:
	EVP_PKEY_free(cak);
	EVP_PKEY_free(k);
	X509_free(cax);
	X509_free(x);
	return rc;
}

struct ca {
	EVP_PKEY *key;               /* ca.key */
	X509 *cert;                  /* ca.crt */
};

int ca_open(const char *cadir, struct ca **out, char *why)
{
	struct ca *ca = calloc(1, sizeof(*ca));
	int rc;

	if (!ca)
		return fail(why, -ENOMEM, cadir, NULL);
	rc = load_ca(cadir, &ca->key, &ca->cert, why);
	if (rc) {
		free(ca);
		return rc;
	}
	*out = ca;
	return 0;
}

void ca_close(struct ca *ca)
{
	if (!ca)
		return;
	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	free(ca);
}

/* One revoked certificate, as the CRL lists it. */
static X509_REVOKED *revoked_of(const struct crl_entry *e)
{
	X509_REVOKED *r = X509_REVOKED_new();
	BIGNUM *bn = BN_bin2bn(e->serial.b, e->serial.len, NULL);
	ASN1_INTEGER *ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	ASN1_TIME *t = ASN1_TIME_set(NULL, (time_t)e->when);
	bool ok = r && ai && t && X509_REVOKED_set_serialNumber(r, ai) == 1 &&
		  X509_REVOKED_set_revocationDate(r, t) == 1;

	BN_free(bn);
	ASN1_INTEGER_free(ai);
	ASN1_TIME_free(t);
	if (!ok) {
		X509_REVOKED_free(r);
		return NULL;
	}
	return r;
}

/* The CRL's fields before its entries: v2, issuer, this update, number. */
static int crl_head(struct ca *ca, X509_CRL *x, uint64_t number)
{
	ASN1_TIME *now = ASN1_TIME_set(NULL, time(NULL));
	ASN1_INTEGER *num = ASN1_INTEGER_new();
	int rc = -ENOMEM;

	if (now && num && ASN1_INTEGER_set_uint64(num, number) == 1 &&
	    X509_CRL_set_version(x, X509_CRL_VERSION_2) == 1 &&
	    X509_CRL_set_issuer_name(x, X509_get_subject_name(ca->cert)) == 1 &&
	    X509_CRL_set1_lastUpdate(x, now) == 1 &&
	    X509_CRL_add1_ext_i2d(x, NID_crl_number, num, 0, X509V3_ADD_DEFAULT) == 1)
		rc = 0;
	ASN1_TIME_free(now);
	ASN1_INTEGER_free(num);
	return rc;
}

int ca_sign_crl(struct ca *ca, const struct crl_entry *e, size_t n, uint64_t number,
		struct wbuf *w)
{
	X509_CRL *x = X509_CRL_new();
	unsigned char *p;
	int rc = x ? crl_head(ca, x, number) : -ENOMEM, len;

	if (number == 0)
		rc = -EINVAL;
	for (size_t i = 0; i < n && !rc; i++) {
		X509_REVOKED *r;
		if (e[i].serial.len == 0 || e[i].serial.len > CRL_SERIAL_MAX)
			rc = -EINVAL;
		else if (!(r = revoked_of(&e[i])))
			rc = -ENOMEM;
		else if (X509_CRL_add0_revoked(x, r) != 1) {
			X509_REVOKED_free(r);
			rc = -ENOMEM;
		}
	}
	if (!rc && (X509_CRL_sort(x) != 1 || X509_CRL_sign(x, ca->key, NULL) <= 0))
		rc = -ENOMEM;
	len = rc ? -1 : i2d_X509_CRL(x, NULL);
	if (!rc && (len <= 0 || (size_t)len > CRL_MAX_DER))
		rc = len <= 0 ? -ENOMEM : -OFS_ETOOBIG;
	if (!rc && (p = wbuf_reserve(w, (size_t)len)) != NULL)
		(void)i2d_X509_CRL(x, &p);
	X509_CRL_free(x);
	ERR_clear_error();
	return rc ? rc : wbuf_error(w);
}

/* By serial, then the earliest first. */
static int entry_date_cmp(const void *a, const void *b)
{
	const struct crl_entry *x = a, *y = b;
	int d = crl_serial_cmp(&x->serial, &y->serial);

	if (d)
		return d;
	return x->when < y->when ? -1 : x->when > y->when;
}

int ca_next_crl(struct ca *ca, struct crl *mine, struct crl *theirs, const struct crl_serial *s,
		size_t ns, struct wbuf *w, uint64_t *number)
{
	struct crl_entry *a = NULL, *b = NULL, *all = NULL;
	size_t na = 0, nb = 0, n = 0, k = 0;
	uint64_t num = crl_number(mine) > crl_number(theirs) ? crl_number(mine) : crl_number(theirs);
	int rc = crl_entries(mine, &a, &na);

	if (!rc)
		rc = crl_entries(theirs, &b, &nb);
	if (!rc && !(all = malloc((na + nb + ns + 1) * sizeof(*all))))
		rc = -ENOMEM;
	if (!rc) {
		memcpy(all, a, na * sizeof(*a));
		memcpy(all + na, b, nb * sizeof(*b));
		n = na + nb;
		for (size_t i = 0; i < ns; i++)
			all[n++] = (struct crl_entry){ .serial = s[i], .when = (int64_t)time(NULL) };
		qsort(all, n, sizeof(*all), entry_date_cmp);
		for (size_t i = 0; i < n; i++)
			if (k == 0 || crl_serial_cmp(&all[k - 1].serial, &all[i].serial) != 0)
				all[k++] = all[i];
		rc = ca_sign_crl(ca, all, k, num + 1, w);
	}
	if (!rc)
		*number = num + 1;
	free(a);
	free(b);
	free(all);
	return rc;
}

int ca_sign_keys(struct ca *ca, const struct cap_key *keys, size_t n, struct wbuf *w)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t sig[CAP_SIG_LEN];
	size_t siglen = sizeof(sig);
	struct wbuf m;
	int rc = -ENOMEM;

	if (n == 0 || n > CAP_MAX_KEYS) {
		EVP_MD_CTX_free(ctx);
		return -EINVAL;
	}
	wbuf_init(&m);
	cap_keys_to_sign(&m, keys, n);
	if (ctx && !wbuf_error(&m) && EVP_DigestSignInit(ctx, NULL, NULL, NULL, ca->key) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, m.data, m.len) == 1 && siglen == CAP_SIG_LEN) {
		cap_keys_signed_encode(w, keys, n, sig);
		rc = wbuf_error(w);
	}
	OPENSSL_cleanse(m.data, m.len);
	wbuf_free(&m);
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

int ca_copy_capkey(const char *cadir, const char *dir, char *why)
{
	char path[4200], capath[4200], buf[256];
	struct cap_key keys[CAP_MAX_KEYS];
	struct cap_ring *r = NULL;
	struct ca *ca = NULL;
	struct wbuf w;
	size_t got = 0, n = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/cap.key", cadir);
	rc = tls_key_mode_ok(path, why);
	if (rc)
		return rc;
	rc = fdio_read_file(path, buf, sizeof(buf), &got);
	if (rc == -EFBIG || (!rc && cap_keys_parse(buf, got, keys, &n)))
		rc = fail(why, -EINVAL, path, "not a capability key file");
	else if (rc)
		rc = fail(why, rc, path, NULL);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (!rc)
		rc = ca_open(cadir, &ca, why);
	/* (the keys as they are, then the set signed in their place: the
	 * ring writes the signed file as a server keeps it) */
	snprintf(path, sizeof(path), "%s/cap.key", dir);
	snprintf(capath, sizeof(capath), "%s/ca.crt", cadir);
	wbuf_init(&w);
	if (!rc && (rc = fdio_write_file(path, buf, cap_keys_format(keys, n, buf), 0600)) != 0)
		rc = fail(why, rc, path, NULL);
	if (!rc && (rc = cap_ring_open(path, capath, &r)) != 0)
		rc = fail(why, rc, path, NULL);
	if (!rc && (rc = ca_sign_keys(ca, keys, n, &w)) != 0)
		rc = fail(why, rc, cadir, "cannot sign the capability keys");
	if (!rc && (rc = cap_ring_offer(r, w.data, w.len)) < 0)
		rc = fail(why, rc, path, NULL);
	OPENSSL_cleanse(buf, sizeof(buf));
	OPENSSL_cleanse(keys, sizeof(keys));
	if (w.data)
		OPENSSL_cleanse(w.data, w.len);
	wbuf_free(&w);
	cap_ring_close(r);
	ca_close(ca);
	return rc < 0 ? rc : 0;
}

int ca_copy_revoked(const char *cadir, const char *dir, char *why)
{
	char from[4200], to[4200], capath[4200];
	struct crl *src = NULL, *dst = NULL;
	int rc;

	snprintf(from, sizeof(from), "%s/revoked", cadir);
	snprintf(to, sizeof(to), "%s/revoked", dir);
	snprintf(capath, sizeof(capath), "%s/ca.crt", cadir);
	rc = crl_open(from, capath, &src);
	if (rc)
		return fail(why, rc, from, NULL);
	rc = crl_open(to, capath, &dst);
	if (rc) {
		crl_close(src);
		return fail(why, rc, to, NULL);
	}
	rc = crl_take(dst, src);
	crl_close(src);
	crl_close(dst);
	return rc < 0 ? fail(why, rc, to, NULL) : 0;
}
