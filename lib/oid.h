/*
 * oid.h - object IDs, server IDs and handles.
 *
 * An OID names a dataspace; a SID names a server. Both are 128-bit values
 * drawn from the kernel's strong random source and printed as 32 lowercase
 * hex digits. A handle is an OID plus the servers holding its copies,
 * primary first. All three are small values passed by copy.
 */
#ifndef OFS_OID_H
#define OFS_OID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OFS_OID_LEN 16
#define OFS_OID_HEX 33          /* 32 hex digits and a NUL */
#define OFS_MAX_REPLICAS 4      /* SIDs in one handle */

struct ofs_oid {
	uint8_t b[OFS_OID_LEN];  /* big-endian bytes; byte order is OID order */
};

struct ofs_sid {
	uint8_t b[OFS_OID_LEN];  /* same representation as an OID */
};

struct ofs_handle {
	struct ofs_oid oid;                      /* the object */
	uint8_t nsids;                           /* 1..OFS_MAX_REPLICAS; 0 = none */
	struct ofs_sid sids[OFS_MAX_REPLICAS];   /* copies, primary first */
};

/* Fill *out with 128 random bits (getrandom). Returns 0 or -errno. Never
 * returns the all-zero value, which means "none". */
int oid_generate(struct ofs_oid *out);
int sid_generate(struct ofs_sid *out);

/* Write 32 lowercase hex digits and a NUL into buf (OFS_OID_HEX bytes). */
void oid_to_hex(struct ofs_oid oid, char buf[OFS_OID_HEX]);
void sid_to_hex(struct ofs_sid sid, char buf[OFS_OID_HEX]);

/* Parse exactly 32 hex digits (either case). Returns 0, or -EINVAL on any
 * other input; *out is written only on success. */
int oid_from_hex(const char *s, struct ofs_oid *out);
int sid_from_hex(const char *s, struct ofs_sid *out);

int oid_cmp(struct ofs_oid a, struct ofs_oid b);
bool oid_is_zero(struct ofs_oid a);
bool oid_eq(struct ofs_oid a, struct ofs_oid b);
bool sid_eq(struct ofs_sid a, struct ofs_sid b);
bool sid_is_zero(struct ofs_sid a);

/* A 64-bit hash of an OID (its low bytes; OIDs are already random). */
uint64_t oid_hash(struct ofs_oid a);

#endif
