/*
 * access.h - what a user may do to an object, and the capabilities that
 * say so (docs/design.md, "Security").
 *
 * A file's metafile and a directory carry their owner, group and mode
 * bits; their server checks a user's request against those bits itself.
 * The objects they own - a file's dfiles, a directory's dirdata - live on
 * other servers that do not know those bits: a user's request to one of
 * them must carry a capability (cap.h) covering its owner (the object
 * its back reference names) with the right the request needs. A server
 * grants one in the reply to a user's GETATTR of a metafile or directory
 * (the rights its mode bits give that user) and CREATE of one (every
 * right: the creator fills what it made, as creat(2) gives a writable
 * descriptor whatever the mode). Capabilities live seconds
 * (CAP_DEFAULT_TTL_S): a right taken away by chmod or chown is gone from
 * every server within that, with no revocation to deliver.
 *
 * Rights (enum cap_op) from the mode bits - the owner's class if the
 * user is the owner, else the group's if one of its groups is the
 * object's, else the others':
 *   file:       r READ; w WRITE
 *   directory:  r READ (list); x SEARCH (look up); w and x WRITE (make,
 *               remove and rename entries)
 *   both:       REMOVE (remove the object or move it, and its parts) is
 *               not the object's to give but its directory's, as in
 *               POSIX: a GETATTR carrying a capability with WRITE on the
 *               directory its back reference names is granted REMOVE too
 *               (access_removal); in a sticky directory (mode 01000) only
 *               for the object's owner or the directory's.
 * An admin and a server are not checked here (their role is: ops.h).
 */
#ifndef OFS_ACCESS_H
#define OFS_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cap.h"
#include "lib/ident.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "store/store.h"

#define ACCESS_CACHE_OIDS 16

/*
 * One connection's verified capability: a request carrying the same
 * bytes again skips the MAC and the owner lookup for an object it was
 * already checked to reach (the binding, to the connection's certificate,
 * cannot change on a connection). Verified again after a key change.
 * Zeroed: empty. Owned by one connection's thread.
 */
struct access_cache {
	uint8_t bytes[CAP_MAX_LEN];
	size_t len;                          /* 0: empty */
	struct ofs_cap cap;
	uint64_t keygen;                     /* cap_ring_generation it was checked at */
	struct ofs_oid reach[ACCESS_CACHE_OIDS];  /* objects it was checked to reach */
	size_t nreach;
};

/* What a user's request brings: its capability slot, and where the
 * connection keeps the last one verified (NULL: no cache). */
struct access_req {
	const struct ident *who;             /* a user */
	const uint8_t *cap;
	size_t cap_len;
	struct access_cache *cache;
	uint64_t now;                        /* Unix seconds */
};

/* The rights a's mode bits give who (enum cap_op bits). */
uint32_t access_rights(const struct ofs_attr *a, const struct ident *who);

/*
 * May the user make request q (decoded; not forwarded)? 0, or
 *   -EACCES           the mode bits or the capability do not allow it
 *                     (*why says which, for the log)
 *   -OFS_ECAPEXPIRED  its capability expired (the client asks again)
 *   -OFS_ECAPBAD      its capability is not one a key here signed
 *   a store error reading the object's attributes
 * An object not stored here passes: the operation answers that itself.
 */
int access_check(struct store *s, struct cap_ring *keys, const struct access_req *ar,
		 const struct ofs_req *q, const char **why);

/*
 * Does the capability of ar show that its user may remove or move the
 * object with attributes a (a metafile or directory)? WRITE on the
 * directory a's back reference names, and - that directory sticky for
 * the user (CAP_STICKY) - a is the user's own. 0, or -EACCES,
 * -OFS_ECAPEXPIRED, -OFS_ECAPBAD with *why.
 */
int access_removal(struct cap_ring *keys, const struct access_req *ar, const struct ofs_attr *a,
		   const char **why);

/*
 * The capability for who on the object oid with attributes a (a metafile
 * or directory): the rights its mode bits give who, and more (enum
 * cap_op: every right for its creator, REMOVE when access_removal said
 * so), marked CAP_STICKY on a sticky directory not who's own; issued by
 * self under the current key, valid ttl_s seconds from now: its bytes
 * appended to out. 0 (and nothing appended when who has no right),
 * -ENOKEY (no key held), -ENOMEM.
 */
int access_grant(struct cap_ring *keys, struct ofs_sid self, uint32_t ttl_s, uint64_t now,
		 const struct ident *who, struct ofs_oid oid, const struct ofs_attr *a, uint32_t more,
		 struct wbuf *out);

#endif
