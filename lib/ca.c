/* ca.c - the cluster CA: keys, certificates, the capability key (see ca.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "lib/ca.h"
#include "lib/crl.h"
#include "lib/fdio.h"

#define CA_DAYS 3650

/* rc, with "WHAT: REASON" in why (REASON NULL: rc's description). */
static int fail(char *why, int rc, const char *what, const char *reason)
{
	snprintf(why, TLS_WHY_MAX, "%s: %s", what,
		 reason ? reason : rc < 0 && rc > -4096 ? strerror(-rc) : "failed");
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

int ca_copy_capkey(const char *cadir, const char *dir, char *why)
{
	char path[4200], buf[256];
	size_t got = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/cap.key", cadir);
	rc = tls_key_mode_ok(path, why);
	if (rc)
		return rc;
	rc = fdio_read_file(path, buf, sizeof(buf), &got);
	if (rc == -EFBIG || (!rc && got == 0))
		return fail(why, -EINVAL, path, "not a capability key file");
	if (rc)
		return fail(why, rc, path, NULL);
	snprintf(path, sizeof(path), "%s/cap.key", dir);
	rc = fdio_write_new(path, buf, got, 0600);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc)
		return fail(why, rc, path, NULL);
	return 0;
}

int ca_copy_revoked(const char *cadir, const char *dir, char *why)
{
	char from[4200], to[4200];
	struct crl *src = NULL, *dst = NULL;
	struct wbuf w;
	struct crl_serial *s = NULL;
	size_t n = 0;
	int rc;

	snprintf(from, sizeof(from), "%s/revoked", cadir);
	snprintf(to, sizeof(to), "%s/revoked", dir);
	rc = crl_open(from, &src);
	if (rc)
		return fail(why, rc, from, NULL);
	wbuf_init(&w);
	crl_encode(src, &w);
	rc = wbuf_error(&w);
	if (!rc)
		rc = crl_decode(w.data, w.len, &s, &n);
	if (!rc && n && !(rc = crl_open(to, &dst)))
		rc = crl_merge(dst, s, n);
	crl_close(src);
	crl_close(dst);
	wbuf_free(&w);
	free(s);
	return rc < 0 ? fail(why, rc, to, NULL) : 0;
}
