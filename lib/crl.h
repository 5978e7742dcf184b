/*
 * crl.h - the cluster's revocation list: the serial numbers of
 * certificates refused cluster-wide (DESIGN.md section 7).
 *
 * The CA's directory and every server's identity directory hold it as a
 * file ("revoked": one serial per line, lowercase hex). A list only grows:
 * two lists merge to their union, so servers that exchange theirs (by
 * gossip, crl_encode / crl_merge) agree without an order. A server
 * checks it at every handshake (tls.h) and when it changes, against the
 * connections already open. Thread-safe.
 */
#ifndef OFS_CRL_H
#define OFS_CRL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/wire.h"

#define CRL_SERIAL_MAX 20        /* bytes in a serial number (RFC 5280) */
#define CRL_MAX 4096             /* serials in one list */

struct crl_serial {
	uint8_t len;
	uint8_t b[CRL_SERIAL_MAX];   /* big-endian, no leading zero byte */
};

struct crl;

/* The list in file path (a missing file: an empty list, written on the
 * first merge). 0, -EINVAL (a malformed file), -ENOMEM, -errno. */
int crl_open(const char *path, struct crl **out);
void crl_close(struct crl *c);

/* Is s revoked? */
int crl_has(struct crl *c, const struct crl_serial *s);
/* Changes so far: a caller that saw the same number has nothing new. */
uint64_t crl_generation(struct crl *c);
size_t crl_count(struct crl *c);

/* Add these serials, and write the file (synced, whole) when any was
 * new. Returns how many were new, or -ENOSPC (the list would pass
 * CRL_MAX), -errno. */
int crl_merge(struct crl *c, const struct crl_serial *s, size_t n);

/* The wire form: u16 n, then n times u8 len + len bytes; of the whole
 * list, or of s[0..n) (n at most CRL_MAX). */
void crl_encode(struct crl *c, struct wbuf *w);
void crl_encode_serials(struct wbuf *w, const struct crl_serial *s, size_t n);
/* Decode exactly len bytes into a malloc'd array (*out, *n; free it).
 * 0, -OFS_ECORRUPT, -ENOMEM. */
int crl_decode(const uint8_t *p, size_t len, struct crl_serial **out, size_t *n);

/*
 * The file's text: one serial per line in lowercase hex (crl_serial_hex),
 * each line ended by a newline when written; read back, empty lines and
 * a last line without its newline are taken too. Decode len bytes into a
 * malloc'd array (*out, *n, in the file's order, duplicates kept; free
 * it): 0, -EINVAL (a line that is not a serial), -ENOMEM.
 */
int crl_text_decode(const char *text, size_t len, struct crl_serial **out, size_t *n);

/* Hex (2 * len digits and a NUL) and back; from_hex: 0 or -EINVAL. */
void crl_serial_hex(const struct crl_serial *s, char buf[2 * CRL_SERIAL_MAX + 1]);
int crl_serial_from_hex(const char *hex, size_t n, struct crl_serial *s);

#endif
