/*
 * store.h - the storage engine: dataspaces on one server.
 *
 * A data dir holds
 *   DATA/format      "ofs-data 1": what this folder is
 *   DATA/lock        held (flock) by the running server
 *   DATA/kv/         the LMDB environment (kv.h): object records, chunk
 *                    digests, key-value parts, server records
 *   DATA/bstreams/   dfile byte streams (bstream.h)
 * and it is its server's alone: every directory OFS makes in it is 0700
 * and every file 0600 (a umask only takes bits away), and a data dir
 * that lets group or others in is not opened (store_check_modes).
 *
 * Guarantees. Every function that changes something returns only once the
 * change is durable (byte streams fdatasync'd before the records that
 * describe them are committed), so a crash loses nothing acknowledged, and
 * no record ever describes bytes that were not yet on disk. A rejected
 * request changes nothing. Reads verify every chunk they touch against its
 * stored XXH3-128 digest. Writes to one object are serialized; reads run
 * in parallel with each other.
 *
 * Errors common to all: -ENOENT (no such object), -OFS_ETYPE (operation
 * not valid for the object's type), -OFS_ECORRUPT (a record failed to
 * decode), -ENOMEM, -EIO and other -errno from the disk.
 */
#ifndef OFS_STORE_H
#define OFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/checksum.h"
#include "lib/oid.h"
#include "lib/proto.h"

#define STORE_MIN_CHUNK (4u << 10)
#define STORE_MAX_CHUNK (16u << 20)
#define STORE_MAX_STREAM OFS_DFILE_MAX  /* bytes in one byte stream */
#define STORE_MAX_ATTRS 16          /* site attributes (rack=r1, ...) */
#define STORE_ATTR_MAX 128          /* bytes in one "key=value" */

struct store;

/*
 * Create a data dir at datadir (which must not exist, or be empty; it is
 * made 0700, an empty one too): a new
 * SID, the given chunk size (a power of two in [STORE_MIN_CHUNK,
 * STORE_MAX_CHUNK]) and site attributes ("key=value"). The namespace root
 * comes later, from the cluster's first client (store_adopt_root). Returns 0 and the SID, or -EEXIST (not empty),
 * -EINVAL (bad chunk size or attribute), -errno.
 */
int store_init(const char *datadir, uint32_t chunk_size, const char *const *attrs,
	       size_t nattrs, struct ofs_sid *sid);

/*
 * Open a data dir. A writable open takes DATA/lock and fails with -EBUSY
 * while another server holds it; read_only opens beside a running server
 * (for inspect) and may not change anything. -ENOENT: not a data dir;
 * -OFS_EVERSION: a format this program does not know; -EPERM: the data
 * dir lets group or others in (store_check_modes says where).
 */
int store_open(const char *datadir, bool read_only, struct store **out);
/*
 * Refuse a data dir others may use: 0 when datadir and every directory
 * directly in it (identity/, kv/, bstreams/, incoming/, quarantine/, and
 * any other) grant group and others no permission at all (mode & 077 is
 * 0); -EPERM when one does, with why (whylen bytes) naming it, its mode
 * and the chmod command that mends the data dir; -errno when datadir
 * cannot be read. Deeper directories and the files are not looked at:
 * behind a 0700 directory no one else reaches them.
 */
int store_check_modes(const char *datadir, char *why, size_t whylen);
/* Waits for queued updates, then closes. store_close(NULL) is a no-op. */
void store_close(struct store *s);

struct ofs_sid store_sid(const struct store *s);
/* Has the store's current commit been waiting longer than
 * STORE_STALL_MS (a disk whose syncs hang)? Such a server tells its peers
 * nothing and refuses their gossip, so they take it as down until its
 * disk is back (docs/design.md, "A hung server"). Thread-safe. */
#define STORE_STALL_MS 4000
bool store_stalled(struct store *s);
/* Stalled, or held down after a stall until this server has learned what
 * it missed meanwhile (store_hold): what peers and STATS are told. */
bool store_down(struct store *s);
void store_hold(struct store *s, bool held);
uint32_t store_chunk_size(const struct store *s);
const char *store_datadir(const struct store *s);
/* Site attributes, as "key=value" strings owned by the store. */
size_t store_attrs(const struct store *s, const char *const **attrs);
/* The root directory's handle; -ENOENT until the cluster has one. */
int store_root(struct store *s, struct ofs_handle *h);
/* The root with its birth time (when the cluster's root was made). */
int store_root_info(struct store *s, struct ofs_handle *h, int64_t *birth_ns);
/*
 * Adopt another root (a server joining a cluster takes the cluster's,
 * the oldest). Refused with -ENOTEMPTY when this server's own root
 * directory, still local, has entries: a server with its own namespace
 * cannot silently hide it. The old, empty, local root objects are removed.
 */
int store_adopt_root(struct store *s, const struct ofs_handle *h, int64_t birth_ns);

/*
 * Create an object from init (type, backref, sids, mode, uid, gid and, for
 * a metafile or directory, layout). The store sets version 1, size 0, the
 * times and, for a dfile, its chunk size and an empty byte stream; an
 * empty sids list means "this server only". *oid receives the new OID.
 * -EINVAL: invalid type or layout.
 */
int store_create(struct store *s, const struct ofs_attr *init, struct ofs_oid *oid);
/* The same with a given OID (a copy of an object made elsewhere, or an OID
 * the client chose for placement); a zero want picks one. -EEXIST when an
 * object with that OID exists. */
int store_create_oid(struct store *s, const struct ofs_attr *init, struct ofs_oid want,
		     struct ofs_oid *oid);
/* Remove an object with its records and byte stream. -ENOTEMPTY for a
 * dirdata that still has entries. */
int store_remove(struct store *s, struct ofs_oid oid);
/*
 * Moves (rebalancer/move.c). A copy about to move away is noted with its
 * target, durably, before anything else happens, so that a move
 * interrupted anywhere is run again to the same target. store_move_get:
 * -ENOENT when none is noted. store_drop_copy removes this server's copy
 * whatever it holds (a dirdata's entries too: they live on in the copy that
 * took its place) together with its move note; -ENOENT when there is none.
 */
int store_move_note(struct store *s, struct ofs_oid oid, struct ofs_sid target);
int store_move_get(struct store *s, struct ofs_oid oid, struct ofs_sid *target);
int store_drop_copy(struct store *s, struct ofs_oid oid);
int store_getattr(struct store *s, struct ofs_oid oid, struct ofs_attr *a);
/* Change the fields mask selects (OFS_ATTR_*), bump the version; *out
 * (may be NULL) receives the attributes as stored. OFS_ATTR_SIZE is
 * refused for a dfile (its size is its byte stream's), OFS_ATTR_LAYOUT and
 * OFS_ATTR_PART for a dfile or dirdata: -OFS_ETYPE. OFS_ATTR_PART replaces
 * the one part in->parts[0] names (proto.h); -ENOENT when the layout has
 * no part with that OID. With in->nparts 2 it puts parts[0] in slot
 * in->backref.stripe if that slot still holds parts[1]'s OID (-ENOENT if
 * not); more than 2: -EINVAL. */
int store_setattr(struct store *s, struct ofs_oid oid, uint32_t mask,
		  const struct ofs_attr *in, struct ofs_attr *out);

/* Read up to len bytes at off of a dfile into buf; *got is short at the
 * end of the stream (0 at or past it). -OFS_ECHECKSUM when a chunk does not
 * match its digest (nothing is returned then). */
int store_read(struct store *s, struct ofs_oid oid, uint64_t off, void *buf,
	       size_t len, size_t *got);
/* Write len bytes at off of a dfile (a gap past the end reads as zeros),
 * durably; returns the new version and size. Unstable writes waiting for
 * a commit are committed first. -EFBIG past STORE_MAX_STREAM. */
int store_write(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
		size_t len, uint64_t *version, uint64_t *size);

/*
 * An unstable write (OFS_WRITE_UNSTABLE): the bytes are written but not
 * synced, and the object's recorded size, version and digests do not change
 * until store_commit; readers do not see them before. Returns the recorded
 * version and the size the object will have once committed. Only appends
 * (starting at the recorded end, then each where the last ended) are kept
 * unstable; any other write (and any write when STORE_MAX_PENDING objects
 * already wait, or one that would take an object's unstable bytes past
 * STORE_PENDING_MAX_BYTES) is done as store_write, which commits those
 * waiting first: what the server holds in memory for an object's
 * unstable writes (a digest per chunk) stays bounded however long a
 * writer goes on without a COMMIT.
 * A crash or a failed commit drops the unstable writes.
 */
#define STORE_PENDING_MAX_BYTES (64u << 20)
int store_write_unstable(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
			 size_t len, uint64_t *version, uint64_t *size);
/* Sync and record oid's unstable writes; returns the recorded version and
 * size (also when there was nothing to commit). */
int store_commit(struct store *s, struct ofs_oid oid, uint64_t *version, uint64_t *size);

/* Key-value part. Values are malloc'd for the caller. Dirdata keys are
 * entries: kv_put and kv_del refuse a dirdata (-OFS_ETYPE); use dirents. */
int store_kv_get(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 void **v, size_t *vn);
int store_kv_put(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 const void *v, size_t vn);
int store_kv_del(struct store *s, struct ofs_oid oid, const void *k, size_t kn);
/* Up to max pairs with key > after (an = 0: from the first), in key
 * order, and no more than STORE_LIST_BYTES_MAX bytes of keys and values
 * (at least one pair: a reply stays within a frame whatever a user
 * stored - 1 000 values of 1 MiB would be a gigabyte); *more says
 * whether any follow. fn returns 0 to go on. */
#define STORE_LIST_BYTES_MAX (4u << 20)
typedef int (*store_kv_fn)(const void *k, size_t kn, const void *v, size_t vn, void *arg);
int store_kv_list(struct store *s, struct ofs_oid oid, const void *after, size_t an,
		  uint32_t max, store_kv_fn fn, void *arg, bool *more);

/* Directory entries of a dirdata object. create: -EEXIST when the name is
 * taken, unless flags has OFS_DIRENT_REPLACE and both the old and new
 * entries are files (then *replaced is set and *old receives the old
 * entry). -OFS_ETYPE when oid is not a dirdata. */
int store_dirent_create(struct store *s, struct ofs_oid dirdata, const char *name,
			const struct ofs_dirent *d, uint32_t flags, bool *replaced,
			struct ofs_dirent *old);
int store_dirent_remove(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *old);
int store_dirent_lookup(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *d);
typedef int (*store_dirent_fn)(const char *name, const struct ofs_dirent *d, void *arg);
int store_dirent_list(struct store *s, struct ofs_oid dirdata, const char *after,
		      uint32_t max, store_dirent_fn fn, void *arg, bool *more);

/*
 * Record that the copy of oid on sid is behind (a forwarded change did not
 * reach it), with why: sid joins the object's stale list and the first reason is
 * kept under KV_STALE until the object is removed or repaired.
 */
int store_stale_add(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason);
/* A stale record's reason may say which change the copy missed first
 * (REC_MISSED_FMT, rec_missed_version: records.h). */
/* The same for a change that left no object to list sid in (a REMOVE
 * that did not reach sid's copy): only the record. */
int store_stale_note(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason);
/* This copy missed the remove of its object (no other copy holds it any
 * more): its bytes go to quarantine (tag "removed-elsewhere") and the copy
 * goes, with its mark. Not held here: only the mark goes. */
int store_drop_removed(struct store *s, struct ofs_oid oid);
typedef int (*store_stale_fn)(struct ofs_sid sid, const char *reason, void *arg);
int store_stale_list(struct store *s, struct ofs_oid oid, store_stale_fn fn, void *arg);
/* Drop the stale record of sid's copy of oid, unless the copy here is
 * newer than version (then that copy is still behind). */
int store_stale_del(struct store *s, struct ofs_oid oid, struct ofs_sid sid, uint64_t version);

/*
 * Copies known to be behind. A copy here that missed changes (its primary
 * could not reach this server, and said so later: OFS_OP_BEHIND) is marked
 * under KV_STALE with this server's own SID, with why; the object need not
 * exist here (a copy that missed its creation). A marked copy is not
 * served to clients until repair replaces it; removing the object clears
 * the mark. store_behind_mark keeps the first reason.
 * store_behind: 1 marked, 0 not, or a store error.
 */
int store_behind_mark(struct store *s, struct ofs_oid oid, const char *reason);
/* The same for n copies in one commit (a returning server's marks). */
int store_behind_mark_many(struct store *s, const struct ofs_oid *oids,
			   const char *const *reasons, size_t n);
int store_behind(struct store *s, struct ofs_oid oid);


/*
 * The stale records naming sid (copies on sid that this server, as
 * primary, saw fall behind), in OID order after *after (NULL: from the
 * start), at most max (>= 1) of them; *more says whether others follow.
 */
typedef int (*store_stale_for_fn)(struct ofs_oid oid, const char *reason, void *arg);
int store_stale_for(struct store *s, struct ofs_sid sid, const struct ofs_oid *after,
		    uint32_t max, store_stale_for_fn fn, void *arg, bool *more);
/* A page of those records, gathered by store_stale_page_add (a
 * store_stale_for_fn; -OFS_ETOOBIG past cap): oids and why point at cap
 * entries each, n counts them. */
struct store_stale_page {
	struct ofs_oid *oids;
	char (*why)[256];
	uint32_t n, cap;
};
int store_stale_page_add(struct ofs_oid oid, const char *reason, void *arg);

/* The server table as persisted (sidtab.h keeps it in memory). */
int store_server_put(struct store *s, const struct ofs_server *e);
typedef int (*store_server_fn)(const struct ofs_server *e, void *arg);
int store_servers(struct store *s, store_server_fn fn, void *arg);

/* Objects stored and byte-stream bytes they hold (a scan of the object
 * records: cost grows with the object count). */
int store_stats(struct store *s, struct ofs_stats *st);
/* Only how many object records there are: no scan. */
int store_count_objects(struct store *s, uint64_t *n);
/* The bytes of file data this server may hold (--capacity): what STATS
 * reports as its capacity, and its free bytes at most that less what it
 * holds. 0 (the default): its disk's size and free space. */
void store_set_capacity(struct store *s, uint64_t bytes);

/*
 * Small dfiles inline (--inline-max): a dfile made from now on keeps its
 * bytes in the key-value store, with its chunk digests as ever, until a
 * write takes it past max bytes, when it moves to a byte stream first.
 * Reads, scrub, summaries and copies from siblings (store_incoming_*)
 * treat both kinds alike; a copy fetched of at most max bytes is
 * installed inline. 0: every dfile has a byte stream. At most
 * STORE_INLINE_MAX_LIMIT (-EINVAL past it). Set before serving.
 */
#define STORE_INLINE_DEFAULT (64u << 10)
/*
 * A small file whole (CREATE_SMALL): metafile mf as init describes it (its
 * one dfile in parts[0], on the metafile's servers; its size n) and that
 * dfile holding bytes, in one commit - the bytes inline when n is within
 * the limit, else in a stream written and synced first. -EEXIST when
 * either object exists, unless both were made by this very request (a
 * create sent again): then 0. -EINVAL for another layout.
 */
int store_create_small(struct store *s, struct ofs_oid mf, const struct ofs_attr *init,
		       const void *bytes, size_t n);
#define STORE_INLINE_MAX_LIMIT (1u << 20)
int store_set_inline_max(struct store *s, uint32_t max);
/* Is dfile oid held inline? 1 yes, 0 no (a stream), or an error. */
int store_is_inline(struct store *s, struct ofs_oid oid);

/* The chunk digests of a dfile in order (for inspect and scrub). */
typedef int (*store_chunk_fn)(uint64_t idx, struct ofs_digest d, void *arg);
int store_chunks(struct store *s, struct ofs_oid oid, store_chunk_fn fn, void *arg);

/* ---- scrub support -------------------------------------------------------- */

/*
 * Visit up to max objects in OID order after *after (NULL: from the
 * first): fn gets the OID and its attributes, or NULL and the decode
 * error when the record does not decode (record_corrupt). *more says
 * whether objects follow.
 */
typedef int (*store_walk_fn)(struct ofs_oid oid, const struct ofs_attr *a, int decode_rc,
			     void *arg);
int store_walk(struct store *s, const struct ofs_oid *after, uint32_t max,
	       store_walk_fn fn, void *arg, bool *more);

/*
 * Scrub one dfile copy: re-read every chunk and compare it with its stored
 * digest, and the stream's length with the recorded size. Each problem is
 * passed to found(kind, detail, arg) - kinds (enum ofs_finding_kind)
 * CHECKSUM_MISMATCH (per chunk), SIZE_MISMATCH, MISSING_REPLICA (the
 * byte-stream file is gone), UNREADABLE (I/O error) - and found's
 * non-zero return stops it.
 * throttle(bytes, arg), if not NULL, is called before each read of about
 * 1 MiB and may sleep; non-zero stops the scrub with that value. Reads
 * take the object's lock one piece at a time. *bytes_read counts the bytes
 * read.
 */
/* A finding about the copy; returns 0 to go on reading, 1 to stop (the
 * copy is bad enough: the scrub returns 0), or an error. */
typedef int (*store_scrub_finding_fn)(int kind, const char *detail, void *arg);
typedef int (*store_scrub_throttle_fn)(uint64_t bytes, void *arg);
int store_scrub_dfile(struct store *s, struct ofs_oid oid, store_scrub_finding_fn found,
		      store_scrub_throttle_fn throttle, void *arg, uint64_t *bytes_read);

/* A copy's summary for comparing siblings: version, size, a digest of its
 * recorded content (chunk digests and key-value part), type and back
 * reference; corrupt when a directory entry of it does not decode (it
 * reports that itself). behind is left false (see store_behind). */
int store_summary(struct store *s, struct ofs_oid oid, struct ofs_summary *sm);

/*
 * Catching a copy up by the changes it missed (changelog.h).
 *
 * store_changes: the notes of oid's changes after version since (as
 * changelog_encode writes them) into w, with the version and content
 * digest (as store_summary's) they lead to, all read in one transaction.
 * -ERANGE when this copy's log does not hold every one of them (the
 * asking copy must be fetched whole), -ENOENT when oid is not here.
 *
 * store_catch_up_changes: replay notes from another copy's store_changes
 * (untrusted) on this server's copy of oid as it is at version base, and
 * keep the result only if its content digest is then digest: the copy
 * takes version and its behind mark goes, in the same transaction.
 * -EAGAIN: the copy is no longer at base; -ESTALE: the result would
 * differ from digest (nothing was changed: fetch the copy whole);
 * -OFS_ECORRUPT: the notes are malformed.
 */
int store_changes(struct store *s, struct ofs_oid oid, uint64_t since, struct wbuf *w,
		  uint64_t *version, struct ofs_digest *digest);
int store_catch_up_changes(struct store *s, struct ofs_oid oid, uint64_t base, uint64_t since,
			   const uint8_t *notes, size_t n, uint64_t version,
			   const struct ofs_digest *digest);

/*
 * Does an owner point at a child, as this server's records alone show it -
 * for many pairs at once, in one read transaction (the namespace check's
 * first look at a batch; backref/points.c answers a single question the
 * full way), by the rule judge gives (backref/rules.h: br_points).
 * q[i].stripe is the child's stripe in a metafile owner, q[i].name its
 * entry name in a directory owner (the entry is looked for in the dirdata
 * the name hashes to). ans[i]: YES, ELSEWHERE (a metafile holds it at
 * another stripe), BUILDING (a metafile or directory with no layout yet),
 * or UNSURE: the owner or that dirdata is not here, or does not show the
 * pointer - the caller asks the full way (other copies, other dirdata).
 * Consecutive questions about one owner decode it once.
 */
enum { STORE_POINTS_UNSURE = 0, STORE_POINTS_YES = 1, STORE_POINTS_ELSEWHERE = 2,
       STORE_POINTS_BUILDING = 3 };
struct store_points_q {
	struct ofs_oid owner, child;
	uint32_t stripe;
	const char *name;
};
/* The rule (backref/rules.h, br_points): what an owner's record says of
 * child at slot (a stripe; -1: any) - STORE_POINTS_UNSURE for "no". */
typedef uint8_t (*store_points_fn)(const struct ofs_attr *owner, struct ofs_oid child, long slot);
int store_points_many(struct store *s, const struct store_points_q *q, size_t n,
		      store_points_fn judge, uint8_t *ans);

/* The content digests of n objects (oids sorted) whose records the caller
 * has read (their sizes and types given), as a summary digests them, in
 * one read transaction by cursor steps over the chunk digests and
 * key-value parts: the namespace check's walk (its record read once).
 * corrupt[i]: a dirdata entry of it does not decode. */
int store_content_many(struct store *s, const struct ofs_oid *oids, const uint64_t *size,
		       const uint8_t *type, size_t n, struct ofs_digest *d, bool *corrupt);

/* The summaries of n objects (as SUMMARY_MANY answers them), read in one
 * transaction: an object not here is not present; one whose record does
 * not decode is present and corrupt; behind is set from store_behind. */
int store_summary_many(struct store *s, const struct ofs_oid *oids, size_t n,
		       struct ofs_summary *sm);

/*
 * Expert tools (ofs-server tool), for surgery and fault injection on a
 * stopped server: change the key-value part without the checks and the
 * version bump of store_kv_put (any object type, dirdata included; the
 * value is stored as given, even if it does not decode), and set an
 * object's version. -ENOENT when the object does not exist.
 */
int store_tool_set_key(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		       const void *v, size_t vn);
int store_tool_rm_key(struct store *s, struct ofs_oid oid, const void *k, size_t kn);
int store_tool_set_version(struct store *s, struct ofs_oid oid, uint64_t version);
/* Raise oid's version to at least version (a reconciled copy is made the
 * newest by version, so that its siblings' stale records of the copies
 * that catch up from it go). */
int store_version_at_least(struct store *s, struct ofs_oid oid, uint64_t version);
int store_tool_set_backref(struct store *s, struct ofs_oid oid, const struct ofs_backref *br);
/* Point part index of a metafile or directory at another OID; its SIDs
 * kept, or (nsids > 0) set to sids. -EINVAL: not one, no such part, or more
 * than OFS_MAX_REPLICAS SIDs. */
int store_tool_set_part(struct store *s, struct ofs_oid oid, uint32_t index, struct ofs_oid part,
			const struct ofs_sid *sids, size_t nsids);
/* A dfile's bytes, inline or in its stream, behind the digests' back:
 * invert the low bit of the byte at off (-ERANGE past the end), or lose
 * them all (the value deleted, the stream file removed). -OFS_ETYPE: not
 * a dfile. */
int store_tool_flip_byte(struct store *s, struct ofs_oid oid, uint64_t off);
int store_tool_lose_bytes(struct store *s, struct ofs_oid oid);

/*
 * Receiving a whole copy of an object from a sibling (repair; the move
 * step): begin with the copy's attributes as its source holds them; for a
 * dfile, write its bytes in order (chunk digests are computed here); add
 * its key-value pairs in key order; compare store_incoming_summary with the
 * source's SUMMARY digest; then commit. The commit swaps the copy in
 * atomically under the object's lock: the old stream is kept in
 * DATA/quarantine (tag names why), the records are replaced in one
 * transaction together with an intent, the new stream is renamed into
 * place, the intent is dropped. A crash leaves the old copy or the new
 * one, never a mix: store_open finishes an install whose records were
 * committed and drops an incoming file that has none. The commit refuses
 * with -EAGAIN when the copy here changed since begin (a write reached
 * it) and -EBUSY while it has unstable writes. The copy is no longer
 * marked behind once committed. free drops an uncommitted copy.
 * The key-value pairs wait in memory until the commit installs them in
 * one transaction: at most STORE_INCOMING_KV_MAX_BYTES of keys and
 * values, each pair counted with its slot (-EFBIG past it, before
 * anything more is held). An object whose key-value part is larger -
 * a directory's dirdata of some millions of entries - cannot be fetched
 * whole (repaired or moved) until it is smaller (docs/design.md,
 * "Protocol", Limits).
 */
#define STORE_INCOMING_KV_MAX_BYTES ((size_t)512 << 20)
struct store_incoming;
int store_incoming_begin(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
			 struct store_incoming **out);
int store_incoming_write(struct store_incoming *in, const void *buf, size_t len);
int store_incoming_kv(struct store_incoming *in, const void *k, size_t kn, const void *v,
		      size_t vn);
int store_incoming_summary(struct store_incoming *in, struct ofs_digest *d);
int store_incoming_commit(struct store_incoming *in, const char *tag);
void store_incoming_free(struct store_incoming *in);
/* Remove quarantined streams older than max_age_s seconds. */
int store_quarantine_purge(struct store *s, long long max_age_s, unsigned *purged);

#endif
