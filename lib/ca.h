/*
 * ca.h - the cluster's certificate authority (DESIGN.md section 7): its
 * key and certificate, the identities it issues, and the capability key.
 *
 * A CA directory holds ca.key (Ed25519), ca.crt (self-signed, ten
 * years) and cap.key (the first capability key: "ID HEX"). An identity
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

#include "lib/ident.h"
#include "lib/tls.h"

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

/* Merge the CA's revocation list (CADIR/revoked, crl.h; none: nothing)
 * into dir/revoked. */
int ca_copy_revoked(const char *cadir, const char *dir, char *why);

/* Copy the CA's current capability key file into dir as cap.key (0600;
 * -EEXIST when dir holds one already). */
int ca_copy_capkey(const char *cadir, const char *dir, char *why);

#endif
