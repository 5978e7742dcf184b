/*
 * ca.h - the cluster's certificate authority (DESIGN.md section 7): its
 * key and certificate, the identities it issues, and the capability key.
 *
 * A CA directory holds ca.key (Ed25519, 0600), ca.crt (self-signed, ten
 * years) and cap.key (the first capability key: "ID HEX", 0600). An
 * identity directory holds key.pem (Ed25519, 0600), cert.pem (signed by
 * the CA; its one subjectAltName URI is the identity, ident.h) and ca.pem
 * (the CA's certificate) - what tls_conf_load reads. Every file is
 * written to a temporary name, synced and renamed, and the directory
 * synced: a crash leaves a file whole or absent.
 */
#ifndef OFS_CA_H
#define OFS_CA_H

#include "lib/ident.h"
#include "lib/tls.h"

#define CA_DAYS_DEFAULT 365        /* an identity's certificate */
#define CA_DAYS_MAX 36500
#define CA_CAPKEY_LEN 32           /* bytes of a capability key */

/* A new CA in cadir (made 0700 if absent; an existing directory must be
 * empty: -EEXIST). 0 or a negative code with a message in why
 * (TLS_WHY_MAX bytes). */
int ca_init(const char *cadir, char *why);

/*
 * Issue id's identity into outdir (made 0700 if absent; -EEXIST when it
 * already holds key.pem), valid from now for days (1..CA_DAYS_MAX), or
 * valid_secs seconds when that is not 0 (tests: a certificate that has
 * expired is issued with valid_secs -1: its end is before now). The
 * CA's key must be 0600 (tls_key_mode_ok).
 */
int ca_issue(const char *cadir, const struct ident *id, int days, long valid_secs,
	     const char *outdir, char *why);

/* Merge the CA's revocation list (CADIR/revoked, crl.h; none: nothing)
 * into dir/revoked. */
int ca_copy_revoked(const char *cadir, const char *dir, char *why);

/* Copy the CA's current capability key file into dir as cap.key (0600). */
int ca_copy_capkey(const char *cadir, const char *dir, char *why);

#endif
