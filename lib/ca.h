/*
 * ca.h - the cluster's certificate authority (docs/design.md, "Security"): its
 * key and certificate, the identities it issues, the capability keys and
 * the revocation list it signs.
 *
 * A CA directory holds ca.key (Ed25519), ca.crt (self-signed, ten
 * years), cap.key (the capability keys: "ID HEX" lines) and, once a
 * revocation reached the cluster, revoked (its CRL, crl.h). An identity
 * directory holds key.pem (Ed25519), cert.pem (signed by the CA; its one
 * subjectAltName URI is the identity, ident.h) and ca.pem (the CA's
 * certificate) - what tls_conf_load reads. Both are directories of the
 * caller's own, 0700, every file in them 0600, and every file ca_init
 * and ca_issue write is new: written under a temporary name made by
 * open(O_EXCL | O_NOFOLLOW), synced, renamed where nothing is
 * (fdio_write_new), and the directory synced. A crash leaves a file
 * whole or absent, and no file or link planted in the directory is ever
 * written through.
 */
#ifndef OFS_CA_H
#define OFS_CA_H

#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/ident.h"
#include "lib/tls.h"
#include "lib/wire.h"

#define CA_DAYS_DEFAULT 365        /* an identity's certificate */
#define CA_DAYS_MAX 36500
#define CA_CAPKEY_LEN 32           /* bytes of a capability key */

/* A new CA in cadir: made 0700 if absent (its parents too, as mkdir -p
 * makes them); an existing directory must be the caller's (-EPERM) and
 * empty (-EEXIST), and is made 0700. 0 or a negative code with a
 * message in why (TLS_WHY_MAX bytes). */
int ca_init(const char *cadir, char *why);

/*
 * Issue id's identity into outdir - made 0700 if absent; an existing one
 * must be the caller's (-EPERM) and empty (-EEXIST: why says whether it
 * holds an identity already), or with CA_ISSUE_BESIDE hold none of an
 * identity's files (key.pem, cert.pem, ca.pem) - valid from now for days
 * (1..CA_DAYS_MAX), or valid_secs seconds when that is not 0 (tests: a
 * certificate that has expired is issued with valid_secs -1: its end is
 * before now). The CA's key must be 0600 (tls_key_mode_ok).
 */
#define CA_ISSUE_BESIDE 1u    /* outdir may hold other files: a server's
                                 identity/ keeps its revocation list */
int ca_issue(const char *cadir, const struct ident *id, int days, long valid_secs,
	     const char *outdir, unsigned flags, char *why);

/*
 * The CA directory opened to sign: its key (ca.key, which must be 0600)
 * and certificate. What it signs speaks for the cluster: servers believe
 * a revocation list or a capability key set because the CA's key signed
 * it (crl.h, cap.h), whoever delivers it. 0 or a negative code with a
 * message in why.
 */
struct ca;
int ca_open(const char *cadir, struct ca **out, char *why);
void ca_close(struct ca *ca);

/*
 * The CA's CRL (crl.h) numbered number, revoking e[0..n) (any order; a
 * serial listed twice is revoked once, at its earliest date): its DER
 * appended to w. 0, -OFS_ETOOBIG (over CRL_MAX_DER: about 100000
 * serials), -EINVAL (a malformed serial, or number 0), -ENOMEM.
 */
int ca_sign_crl(struct ca *ca, const struct crl_entry *e, size_t n, uint64_t number,
		struct wbuf *w);

/*
 * The CRL that follows what the CA and the cluster hold: numbered one
 * above the higher of mine's and theirs' numbers, revoking every serial
 * either holds and s[0..ns) (revoked now when new). Its DER is appended
 * to w and its number put in *number. ca_sign_crl's errors.
 */
int ca_next_crl(struct ca *ca, struct crl *mine, struct crl *theirs, const struct crl_serial *s,
		size_t ns, struct wbuf *w, uint64_t *number);

/* The signed key set (cap.h) of keys[0..n), appended to w: 0, -EINVAL,
 * -ENOMEM. */
int ca_sign_keys(struct ca *ca, const struct cap_key *keys, size_t n, struct wbuf *w);

/* dir/revoked takes the CA's revocation list (CADIR/revoked; none:
 * nothing) when it is newer (crl_take). */
int ca_copy_revoked(const char *cadir, const char *dir, char *why);

/* dir/cap.key: the CA's current capability keys, signed by the CA
 * (0600). */
int ca_copy_capkey(const char *cadir, const char *dir, char *why);

#endif
