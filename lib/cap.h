/*
 * cap.h - capabilities (docs/design.md, "Security"): what a metadata server
 * grants a client for a while, and how a data server checks it.
 *
 * A capability names its issuer (SID), the key it was signed with (key
 * id), when it expires, the operations it allows, the objects it covers
 * (a file's dfiles, and its metafile) and the fingerprint of the client
 * certificate it was issued to. It is authenticated with HMAC-SHA256
 * under the cluster's capability key over its canonical encoding - the
 * bytes below, never host memory:
 *
 *   version u8 (1) | issuer SID (16) | key id u32 | expires u64 (Unix s) |
 *   ops u32 | fingerprint (32) | n u16 | n OIDs (16 each, strictly
 *   ascending) | MAC (32)
 *
 * Every field has one spelling (OIDs sorted, no duplicates, no unknown
 * op bits, no trailing bytes), so a decoded capability re-encodes to the
 * bytes it came from and the MAC covers exactly what is checked.
 */
#ifndef OFS_CAP_H
#define OFS_CAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/ident.h"
#include "lib/oid.h"
#include "lib/proto.h"
#include "lib/wire.h"

#define CAP_VERSION 1
#define CAP_MAX_OIDS (OFS_MAX_STRIPES + 1)     /* the dfiles and the metafile */
#define CAP_KEY_LEN 32
#define CAP_MAC_LEN 32
#define CAP_MAX_KEYS 2                         /* the current and the previous */
#define CAP_DEFAULT_TTL_S 2          /* a chmod or chown holds everywhere within
                                        this (docs/design.md, "Security") */
#define CAP_MAX_LEN (1 + 16 + 4 + 8 + 4 + IDENT_FPR_LEN + 2 + 16 * CAP_MAX_OIDS + CAP_MAC_LEN)

/*
 * What a capability allows on the objects it covers and on the data
 * objects they own (a file's dfiles, a directory's dirdata): the rights
 * the file's or directory's mode bits give the holder (server/access.h).
 */
enum cap_op {
	CAP_READ = 1u << 0,       /* read bytes and attributes; list a directory */
	CAP_WRITE = 1u << 1,      /* write, commit, set size and layout; make and
	                             remove a directory's entries (w and x) */
	CAP_SEARCH = 1u << 2,     /* look a name up in a directory (x) */
	CAP_REMOVE = 1u << 3,     /* remove or move the object, and its parts:
	                             granted to its creator, and to whoever shows
	                             WRITE on its directory (server/access.h) */
	CAP_ALL_OPS = (1u << 4) - 1,
	CAP_STICKY = 1u << 4,     /* not a right but a limit, on a directory's:
	                             its WRITE removes and replaces only entries
	                             of the holder's own (the directory's sticky
	                             bit, for one not its owner) */
	CAP_KNOWN_BITS = (1u << 5) - 1,
};

struct ofs_cap {
	struct ofs_sid issuer;
	uint32_t key_id;
	uint64_t expires;                      /* Unix seconds */
	uint32_t ops;                          /* enum cap_op bits */
	uint8_t fpr[IDENT_FPR_LEN];            /* the client certificate's SHA-256 */
	uint16_t noids;
	struct ofs_oid oids[CAP_MAX_OIDS];     /* strictly ascending */
	uint8_t mac[CAP_MAC_LEN];
};

/* One capability key: its id (never 0) and its bytes. */
struct cap_key {
	uint32_t id;
	uint8_t key[CAP_KEY_LEN];
};

/* Sort and deduplicate c's OIDs (the canonical order): call before
 * cap_sign after filling them in any order. */
void cap_sort_oids(struct ofs_cap *c);
/* Compute c's MAC under k (and set c->key_id). 0, -EINVAL (c not
 * canonical), -ENOMEM. */
int cap_sign(struct ofs_cap *c, const struct cap_key *k);
/* The wire bytes of a signed capability. */
void cap_encode(struct wbuf *w, const struct ofs_cap *c);
/* Decode exactly n bytes. 0 or -OFS_ECORRUPT. */
int cap_decode(const uint8_t *p, size_t n, struct ofs_cap *c);

/*
 * Check c before an operation op on oid by the peer whose certificate
 * has fingerprint fpr, at time now (Unix seconds), with the keys a
 * server holds (keys[0..nkeys)): 0, or
 *   -OFS_ECAPBAD      no key has c's id, or its MAC does not match
 *                     (compared in constant time)
 *   -OFS_ECAPEXPIRED  expired
 *   -EACCES           bound to another certificate, oid not covered, or
 *                     op not allowed
 * The MAC is checked first: nothing of an unauthenticated capability is
 * believed.
 */
int cap_check(const struct ofs_cap *c, const struct cap_key *keys, size_t nkeys,
	      const uint8_t fpr[IDENT_FPR_LEN], struct ofs_oid oid, uint32_t op, uint64_t now);
/* The checks after the MAC, for a capability whose MAC and binding were
 * verified before (a connection's cache): expiry, coverage of oid, op.
 * 0, -OFS_ECAPEXPIRED, -EACCES. */
int cap_allows(const struct ofs_cap *c, struct ofs_oid oid, uint32_t op, uint64_t now);
/* Does c name oid? */
bool cap_covers(const struct ofs_cap *c, struct ofs_oid oid);

/*
 * OIDs a user makes carry proof of their maker, so that no user can
 * create, anywhere, an object under another's OID and be granted a
 * capability over it (a capability covers its subject's OID, and a data
 * server reaches a file's dfiles through that OID: server/access.h). The
 * first 8 bytes are random (the nonce), the last 8 the first 8 bytes of
 * SHA-256("ofs-oid-1" | uid (u32, big-endian) | nonce). To name an OID
 * another uid made, a user must find a 64-bit second preimage; OIDs that
 * one uid makes are unique as their 64-bit nonces are (a collision is
 * refused at create as an OID that exists). Objects made by admins and
 * servers, and by earlier releases, have plain random OIDs, which no user
 * can name at create either.
 *
 * cap_oid_generate: a new OID for uid (0, or -errno from getrandom).
 * cap_oid_made_by: does oid carry uid's proof?
 */
int cap_oid_generate(uint32_t uid, struct ofs_oid *out);
bool cap_oid_made_by(struct ofs_oid oid, uint32_t uid);

/*
 * A capability key file: one key per line, "ID HEX" (ID: decimal
 * without a leading zero; HEX: 64 lowercase digits), the current key
 * first, then the previous one. 0 and *n keys, or
 * -EINVAL (a malformed line; never names the key bytes): keys and *n are
 * written only on success, and no key of a refused file is left behind.
 */
int cap_keys_parse(const char *text, size_t len, struct cap_key keys[CAP_MAX_KEYS], size_t *n);
/* The key file of keys[0..n) into buf (CAP_KEYS_TEXT_MAX bytes). */
#define CAP_KEYS_TEXT_MAX (CAP_MAX_KEYS * (11 + 2 * CAP_KEY_LEN + 1) + 1)
size_t cap_keys_format(const struct cap_key *keys, size_t n, char *buf);

/* A key set's bytes: u8 n (1..2), then n times u32 id + the key bytes.
 * Decode: 0 or -OFS_ECORRUPT (ids 0 or equal). Unsigned, this was the
 * previous release's CAPKEYS body: recognised only to be refused. */
void cap_keys_encode(struct wbuf *w, const struct cap_key *keys, size_t n);
int cap_keys_decode(const uint8_t *p, size_t len, struct cap_key keys[CAP_MAX_KEYS], size_t *n);

/*
 * Only the cluster CA speaks for the cluster: a key set is believed only
 * when the CA's key signed it, whoever delivers it (an admin's rotation,
 * or any server relaying it). The signed set, CAPKEYS's body (inside TLS
 * only: the keys are secret):
 *
 *   u8 CAP_KEYS_SIGNED | the key set (cap_keys_encode) |
 *   Ed25519 signature (CAP_SIG_LEN bytes)
 *
 * signed (EVP_DigestSign, Ed25519: no digest of its own) over
 * CAP_KEYS_CONTEXT, its NUL included, then every byte before the
 * signature - a message that no certificate or CRL the same key signs
 * can be (those are DER, starting 0x30). Its version is the id of its
 * current key, which every rotation raises by one: a holder takes a set
 * whose current id is higher than the one it holds, and never goes back.
 * The first byte is one the previous release refuses (it reads 1 or 2:
 * a count).
 */
#define CAP_KEYS_SIGNED 0x80
#define CAP_SIG_LEN 64
#define CAP_KEYS_CONTEXT "ofs capability keys 1"
/* The message the CA signs for keys[0..n) (ca_sign_keys). */
void cap_keys_to_sign(struct wbuf *w, const struct cap_key *keys, size_t n);
void cap_keys_signed_encode(struct wbuf *w, const struct cap_key *keys, size_t n,
			    const uint8_t sig[CAP_SIG_LEN]);
/* The structure alone (the signature is checked by the ring that takes
 * it): 0 or -OFS_ECORRUPT. */
int cap_keys_signed_decode(const uint8_t *p, size_t len, struct cap_key keys[CAP_MAX_KEYS],
			   size_t *n, uint8_t sig[CAP_SIG_LEN]);

/* The pull (a server asking a peer for a newer key set): u8 0, then the
 * u32 id of the current key of the signed set it holds (0: none, or an
 * unsigned one) - never read as a key set. The answer: the peer's signed
 * set when its id is higher, else nothing. cap_keys_pull_decode: true,
 * and *held, when p is one. */
void cap_keys_pull_encode(struct wbuf *w, uint32_t held);
bool cap_keys_pull_decode(const uint8_t *p, size_t len, uint32_t *held);

/*
 * A server's capability keys (its identity/cap.key): read at start,
 * replaced by a newer signed set (cap_ring_offer), read by every check.
 * The file: the key lines (cap_keys_parse) and, for a signed set, a last
 * line "sig HEX" (the signature, 128 digits), written whole, 0600. The
 * previous release's file, and the CA's own cap.key, have no signature:
 * such a set signs and checks capabilities as any other, but is never
 * sent to a peer, and the first signed set replaces it whatever its ids.
 * Thread-safe. The key bytes are never logged.
 */
struct cap_ring;
/* The keys in path, a signature verified with the CA certificate in
 * ca_path (NULL: none; no signed set is opened or taken then). 0,
 * -EINVAL (malformed, or ca_path not a certificate), -OFS_ENOTCA (a
 * signature the CA did not make), -ENOMEM, -errno. */
int cap_ring_open(const char *path, const char *ca_path, struct cap_ring **out);
void cap_ring_close(struct cap_ring *r);
/* Copy the keys held now (current first) into keys; returns how many. */
size_t cap_ring_get(struct cap_ring *r, struct cap_key keys[CAP_MAX_KEYS]);
/* Changes with every set taken: a capability verified under the
 * generation before must be verified again. */
uint64_t cap_ring_generation(struct cap_ring *r);
/* The current key's id when the set held is signed; 0 when not. */
uint32_t cap_ring_signed_id(struct cap_ring *r);
/*
 * Take the signed set in p[0..len) (cap_keys_signed_encode): 1 when
 * taken (the file written first, whole, synced), 0 when it is the set
 * held (its current id is the held one's: nothing changes), -ESTALE
 * (older than the signed set held), -OFS_ENOTCA (the CA did not sign
 * it), -OFS_ECORRUPT, -errno (the file: nothing changes).
 */
int cap_ring_offer(struct cap_ring *r, const uint8_t *p, size_t len);
/* Append the signed set held to w when its id is above newer_than:
 * 1 when appended, 0 when not (none held, or not newer). */
int cap_ring_answer(struct cap_ring *r, uint32_t newer_than, struct wbuf *w);

#endif
