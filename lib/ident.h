/*
 * ident.h - who a peer is: the identity a cluster certificate carries.
 *
 * A certificate issued by the cluster CA names its holder in one
 * subjectAltName URI (docs/design.md, "Security"), in one of three forms:
 *
 *   urn:ofs:server:<SID, 32 hex digits>
 *   urn:ofs:admin:<name>
 *   urn:ofs:user:<name>:<uid>:<gid>[,<gid>]...     (the first gid is the
 *                                                  primary group)
 *
 * A name is 1..IDENT_NAME_MAX bytes of [A-Za-z0-9._-], not starting with
 * '-' or '.'; a uid or gid is a decimal number below 2^32 - 1 without
 * leading zeros. ident_decode is the one reader of these bytes, which come
 * from the network: it checks every one of them and accepts each identity
 * in exactly one spelling, so ident_encode gives back the same bytes.
 */
#ifndef OFS_IDENT_H
#define OFS_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"

#define IDENT_NAME_MAX 64
#define IDENT_GIDS_MAX 32
#define IDENT_URI_MAX 512          /* bytes of the longest valid URI, with NUL */
#define IDENT_FPR_LEN 32           /* SHA-256 of the certificate */

enum ident_role {
	IDENT_NONE = 0,
	IDENT_SERVER = 1,
	IDENT_ADMIN = 2,
	IDENT_USER = 3,
};

struct ident {
	uint8_t role;                       /* enum ident_role */
	char name[IDENT_NAME_MAX + 1];      /* admin, user: the holder's name */
	struct ofs_sid sid;                 /* server: its SID */
	uint32_t uid;                       /* user */
	uint32_t gids[IDENT_GIDS_MAX];      /* user: primary first */
	uint8_t ngids;
	uint8_t fpr[IDENT_FPR_LEN];         /* the certificate's SHA-256 (set by
	                                       whoever read the certificate) */
};

/* Decode the n bytes at s (not NUL-terminated). 0 or -EINVAL. */
int ident_decode(const char *s, size_t n, struct ident *id);
/* The URI of id into buf (IDENT_URI_MAX bytes). 0 or -EINVAL (id is not
 * one ident_decode would give). */
int ident_encode(const struct ident *id, char buf[IDENT_URI_MAX]);
/* A name ident_decode accepts. */
bool ident_name_ok(const char *name);
/* "server", "admin", "user" or "none". */
const char *ident_role_name(uint8_t role);
/* "server SIDHEX", "admin NAME", "user NAME (uid N)" into buf. */
void ident_describe(const struct ident *id, char *buf, size_t len);

#endif
