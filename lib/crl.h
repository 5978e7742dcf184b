/*
 * crl.h - the cluster's revocation list: the serial numbers of
 * certificates refused cluster-wide (docs/design.md, "Security"), as the
 * cluster CA signed them.
 *
 * The list is an X.509 v2 CRL (RFC 5280) signed by the CA's key, with a
 * CRL number (the crlNumber extension). Only the CA speaks for the
 * cluster: a list is believed because the CA certificate this holder
 * trusts (its identity's ca.pem, or CADIR/ca.crt) verifies its signature,
 * never because of who sent it - so any server may relay it. A CRL with
 * a higher number replaces the one held whole (serials may leave it as
 * well as join it); one with the same number or a lower one changes
 * nothing. There is no cap on the serials: a CRL is bounded by its size
 * (CRL_MAX_DER bytes, what a frame's body carries: about 100000 serials
 * of 16 bytes).
 *
 * The CA's directory and every server's identity directory hold it in a
 * file named "revoked": the CRL in PEM (`openssl crl -in revoked -text`
 * reads it). The previous release wrote the same file as a plain list,
 * one serial a line in lowercase hex, unsigned: such a file still opens,
 * and its serials are refused as before, but the list is held only until
 * the first signed CRL arrives (its number counts as 0), which replaces
 * it; it is never sent to anyone.
 *
 * A server checks the list at every handshake (tls.h) and, when it
 * changes (crl_generation), against the connections already open.
 * Thread-safe. Lock order: wmu (one writer of the file at a time), then
 * mu (the list in memory).
 */
#ifndef OFS_CRL_H
#define OFS_CRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/wire.h"

#define CRL_SERIAL_MAX 20           /* bytes in a serial number (RFC 5280) */
#define CRL_MAX_DER (4u << 20)      /* bytes of a CRL (DER): what a frame carries */
#define CRL_PULL_LEN 9              /* u8 0, u64 number */

struct crl_serial {
	uint8_t len;
	uint8_t b[CRL_SERIAL_MAX];   /* big-endian, no leading zero byte */
};

/* One revoked certificate: its serial and when it was revoked. */
struct crl_entry {
	struct crl_serial serial;
	int64_t when;                /* Unix seconds (the CRL's revocationDate) */
};

struct crl;

/*
 * The list in file path (NULL: none, the list lives in memory only),
 * whose signatures the CA certificate in ca_path (PEM) verifies (NULL:
 * none can be verified, so no signed CRL is taken or opened). A missing
 * file is an empty list. Returns 0, or -EINVAL (not a CRL nor the
 * previous release's list, or ca_path is not a certificate),
 * -OFS_ENOTCA (a CRL the CA in ca_path did not sign), -ENOMEM, -errno.
 */
int crl_open(const char *path, const char *ca_path, struct crl **out);
void crl_close(struct crl *c);

/* Is s revoked? */
bool crl_has(struct crl *c, const struct crl_serial *s);
/* Changes so far: a caller that saw the same number has nothing new. */
uint64_t crl_generation(struct crl *c);
size_t crl_count(struct crl *c);
/* The number of the CRL held: 0 when none is held (nothing, or the
 * previous release's unsigned list). */
uint64_t crl_number(struct crl *c);

/*
 * Take the CRL in der[0..len) when the CA signed it and its number is
 * higher than the one held: the list is replaced whole, the file written
 * (PEM, whole, synced) before the new list is believed. *number (may be
 * NULL) is set to the CRL's number once its signature verified. 1 (taken),
 * 0 (its number is not higher: nothing changes), -OFS_ENOTCA (not signed
 * by the CA, or issued by another name), -OFS_ECORRUPT (not a v2 CRL with
 * a CRL number that fits 64 bits, or a serial that is not a positive
 * number of at most 20 bytes), -OFS_ETOOBIG (over CRL_MAX_DER), -ENOMEM,
 * -errno (the file: nothing changes).
 */
int crl_offer(struct crl *c, const uint8_t *der, size_t len, uint64_t *number);

/* dst takes what src holds: src's CRL when it is newer (crl_offer), or,
 * when neither holds a signed CRL, the union of their unsigned lists
 * (the previous release's, written in its format). 1 when dst changed,
 * 0, or crl_offer's errors. */
int crl_take(struct crl *dst, struct crl *src);

/* A copy of the entries held (sorted by serial; *e malloc'd, the caller
 * frees it): 0 or -ENOMEM. */
int crl_entries(struct crl *c, struct crl_entry **e, size_t *n);

/*
 * The REVOKED operation (proto.h) carries, in its request, either a CRL
 * (its DER: the first byte is 0x30) or a pull: u8 0, then the u64 number
 * the asker holds (0: none). The answer to either is the u64 number held
 * after the request and, when that is higher than the number the request
 * named (a pull's, or the CRL's it carried), the held CRL's DER.
 * The previous release sent its whole list, unsigned: u16 n, then n times
 * u8 len + len bytes - recognised (crl_is_unsigned) only to be refused.
 */
void crl_pull_encode(struct wbuf *w, uint64_t held);
bool crl_pull_decode(const uint8_t *p, size_t len, uint64_t *held);
bool crl_is_der(const uint8_t *p, size_t len);
bool crl_is_unsigned(const uint8_t *p, size_t len);
/* The answer: the number held and, when above asked, the CRL. */
int crl_answer(struct crl *c, uint64_t asked, struct wbuf *w);
/* An answer's bytes: number, and der when not NULL. */
void crl_answer_encode(struct wbuf *w, uint64_t number, const uint8_t *der, size_t derlen);
/* Decode an answer: *number, and the CRL's bytes inside p (*der NULL,
 * *derlen 0 when it carries none). 0 or -OFS_ECORRUPT. */
int crl_answer_decode(const uint8_t *p, size_t len, uint64_t *number, const uint8_t **der,
		      size_t *derlen);

/* Hex (2 * len digits and a NUL) and back; from_hex: 0 or -EINVAL. */
void crl_serial_hex(const struct crl_serial *s, char buf[2 * CRL_SERIAL_MAX + 1]);
int crl_serial_from_hex(const char *hex, size_t n, struct crl_serial *s);
/* Order of serials (shortest first, then by bytes): the list's order. */
int crl_serial_cmp(const struct crl_serial *a, const struct crl_serial *b);

#endif
