/*
 * proto.h - operations, object attributes and the bodies of every request
 * and response.
 *
 * The same attribute codec is used on the wire and in the server's LMDB
 * records, so there is one decoder of untrusted attribute bytes. Decoders
 * check every length, every count against its maximum and every name
 * against the name rules; they never read past the body and reject trailing
 * bytes. Decoded byte ranges (write data, keys, values) point into the body
 * they were decoded from.
 */
#ifndef OFS_PROTO_H
#define OFS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/checksum.h"
#include "lib/ident.h"
#include "lib/oid.h"
#include "lib/wire.h"

#define OFS_NAME_MAX 255          /* bytes in one entry name */
#define OFS_MAX_STRIPES 64        /* dfiles per file, dirdata per directory */
#define OFS_MAX_KEY 1024          /* bytes in one key-value key */
#define OFS_MAX_VALUE (1u << 20)  /* bytes in one key-value value */
#define OFS_MAX_LIST 1000         /* entries in one list reply */
#define OFS_SMALL_MAX (64u << 10) /* bytes of a file made by CREATE_SMALL */
#define OFS_SUMMARY_MANY_MAX 512  /* objects asked of in one SUMMARY_MANY */
#define OFS_GETATTR_MANY_MAX 256  /* objects asked of in one GETATTR_MANY */
#define OFS_DIST_MAX 31           /* bytes in a distribution name */
#define OFS_STRIP_MIN (4u << 10)  /* a metafile's strip size (0: unset), */
#define OFS_STRIP_MAX (4u << 20)  /* bytes, when set */
#define OFS_DFILE_MAX ((uint64_t)1 << 40)  /* bytes in one dfile: its last
                                     byte at offset 2^40 - 1; a file of n
                                     stripes holds at most n times this */
#define OFS_JOIN_MAX_BYTES (256u << 10)  /* record bytes in one JOIN */
#define OFS_JOIN_MAX_RECLEN 256   /* bytes in one JOIN record */
#define OFS_JOIN_CHANNELS 8       /* JOIN channels (flags' low bits) */
#define OFS_JOIN_END 0x100u       /* JOIN flags: the channel's end; max
                                     is then the count sent on it */

/* Every operation, in wire order: one row each in lib/ops.def, where what
 * each request carries and its reply says stands beside its row (the rest
 * of the row: lib/optable.h). */
enum ofs_op {
	OFS_OP_NONE_ = 0,       /* (no operation has number 0) */
#define OP(id, ...) OFS_OP_##id,
#include "lib/ops.def"
#undef OP
	OFS_OP_MAX
};

/*
 * A request a primary forwards to the other copies of an object carries
 * OFS_OP_FORWARDED in its op: the receiver applies it to its own copy only
 * and forwards nothing.
 */
#define OFS_OP_FORWARDED 0x4000u

enum ofs_objtype {
	OFS_OBJ_NONE = 0,
	OFS_OBJ_METAFILE = 1,
	OFS_OBJ_DFILE = 2,
	OFS_OBJ_DIRECTORY = 3,
	OFS_OBJ_DIRDATA = 4,
};

/* Who points at an object (docs/design.md, "Objects"). */
struct ofs_backref {
	struct ofs_oid owner;          /* dfile: its metafile; metafile and
	                                  directory: parent directory; dirdata:
	                                  its directory; zero for the root */
	uint32_t stripe;               /* dfile: stripe index in the metafile */
	char name[OFS_NAME_MAX + 1];   /* metafile, directory: entry name */
};

/* Which attribute fields a SETATTR changes. */
enum {
	OFS_ATTR_SIZE = 1u << 0,     /* size */
	OFS_ATTR_MODE = 1u << 1,     /* mode */
	OFS_ATTR_OWNER = 1u << 2,    /* uid, gid */
	OFS_ATTR_MTIME = 1u << 3,    /* mtime_ns */
	OFS_ATTR_BACKREF = 1u << 4,  /* backref */
	OFS_ATTR_SIDS = 1u << 5,     /* nsids, sids */
	OFS_ATTR_STALE = 1u << 6,    /* nstale, stale */
	OFS_ATTR_LAYOUT = 1u << 7,   /* dist, strip_size, replicas,
	                                confidence, nparts, parts */
	OFS_ATTR_PART = 1u << 8,     /* one part: parts[0] replaces the stored
	                                part with its OID - the one at index
	                                backref.stripe if that is it, else the
	                                first (-ENOENT: none). Each copy applies
	                                it to its own layout, so two changes of
	                                different parts cannot undo each other,
	                                as a whole-layout rewrite can. With
	                                nparts 2: parts[0] goes into slot
	                                backref.stripe if it still holds the
	                                OID parts[1] names (-ENOENT if not): a
	                                new object in a slot. Not with
	                                OFS_ATTR_LAYOUT. */
	OFS_ATTR_ALL = (1u << 9) - 1,
};

/* An object's attributes: the fixed records of its key-value part. */
struct ofs_attr {
	uint8_t type;                  /* enum ofs_objtype */
	uint64_t version;              /* bumped on every change */
	uint64_t size;                 /* dfile: stream length; metafile: file size */
	uint32_t mode;                 /* permission bits */
	uint32_t uid, gid;             /* owner */
	int64_t ctime_ns, mtime_ns;    /* creation and change times */
	uint32_t chunk_size;           /* dfile: checksum chunk, bytes */
	struct ofs_backref backref;    /* who points at this object */
	uint8_t nsids;                 /* copies of this object */
	struct ofs_sid sids[OFS_MAX_REPLICAS];   /* primary first; the others
	                                            are the sibling copies */
	uint8_t nstale;                /* siblings known to be behind */
	struct ofs_sid stale[OFS_MAX_REPLICAS];
	char dist[OFS_DIST_MAX + 1];   /* metafile: distribution name */
	uint32_t strip_size;           /* metafile: bytes per strip */
	uint8_t replicas;              /* metafile: copies per object */
	uint8_t confidence;            /* metafile: write confidence K */
	uint16_t nparts;               /* metafile: dfiles; directory: dirdata */
	struct ofs_handle parts[OFS_MAX_STRIPES];  /* in stripe order */
};

/* A directory entry: what a name in a dirdata object points at. */
struct ofs_dirent {
	uint8_t type;                  /* OFS_OBJ_METAFILE or OFS_OBJ_DIRECTORY */
	struct ofs_handle handle;      /* the object named */
};

enum { OFS_DIRENT_REPLACE = 1u << 0 };  /* DIRENT_CREATE may replace */

/*
 * WRITE flags. An unstable write (as NFS has them) is answered once its
 * bytes are in the server's page cache; it is neither durable nor visible
 * to readers (the object's recorded size and version do not change) until
 * a COMMIT of the object, which syncs the bytes and then commits their
 * chunk digests, size and version, and is answered only when all of that
 * is durable. A crash before the COMMIT loses the unstable writes and
 * leaves the object as it was. Unstable writes are meant for filling a new
 * object (ofs put); a server may treat any write as stable.
 */
enum { OFS_WRITE_UNSTABLE = 1u << 0 };

/* ---- the server table (docs/design.md, "Cluster") ---- */

#define OFS_MAX_SERVERS 1024        /* entries in one SERVERS message */
#define OFS_SERVER_ATTRS 16         /* site attributes per server */
#define OFS_SERVER_ATTR_LEN 128     /* bytes in one "key=value", with NUL */
#define OFS_SERVER_ADDR_LEN 64      /* bytes in "HOST:PORT", with NUL */

enum ofs_server_state { OFS_SERVER_IN = 0, OFS_SERVER_DRAINING = 1, OFS_SERVER_OUT = 2 };

/* One server as the cluster knows it. Entries merge newest-wins by
 * version; last_seen is the sender's own observation, not merged. */
struct ofs_server {
	struct ofs_sid sid;
	char address[OFS_SERVER_ADDR_LEN];     /* "HOST:PORT" it serves on */
	uint8_t state;                         /* enum ofs_server_state */
	uint32_t weight_milli;                 /* placement weight x 1000 */
	uint8_t nattrs;
	char attrs[OFS_SERVER_ATTRS][OFS_SERVER_ATTR_LEN];  /* "key=value" */
	uint64_t version;                      /* of the operator's part (state,
	                                          weight, attrs): newest wins */
	int64_t last_seen_ns;                  /* when the sender last heard from it */
	struct ofs_handle root;                /* the namespace root it serves */
	int64_t root_birth_ns;                 /* when that root was made: the
	                                          oldest root in the cluster wins */
	uint64_t self_version;                 /* of the server's own part (address,
	                                          root): only it writes that part */
	uint64_t root_version;                 /* of root's SID list (same root,
	                                          newer list: a ROOT_MOVE) */
};

/* Which fields a SERVER_SET changes. */
enum {
	OFS_SET_STATE = 1u << 0,
	OFS_SET_WEIGHT = 1u << 1,
	OFS_SET_ATTR = 1u << 2,     /* "key=value" sets, "key=" removes */
};

struct ofs_server_set {
	struct ofs_sid sid;
	uint32_t mask;                         /* OFS_SET_* */
	uint8_t state;
	uint32_t weight_milli;
	char attr[OFS_SERVER_ATTR_LEN];
};

struct ofs_stats {
	uint64_t objects;                      /* objects stored */
	uint64_t bytes;                        /* byte-stream bytes stored */
	uint64_t avail;                        /* bytes free for new data on its disk */
	uint64_t capacity;                     /* bytes it may hold (--capacity, else its disk) */
	uint8_t max_copies;                    /* most copies any object it holds has */
	/* Catch-up (server/recover.h): */
	uint64_t behind;                       /* copies here that missed changes */
	uint64_t stuck;                        /* ... of which no copy is current */
	uint64_t caught_up;                    /* copies caught up since it started */
	uint8_t recovering;                    /* 1 while copies are being caught up */
};

/* Background tasks (docs/design.md, "Background jobs and scrub") run inside a server. */
enum ofs_task_kind { OFS_TASK_SCRUB = 1, OFS_TASK_DRAIN = 2, OFS_TASK_REBALANCE = 3 };
#define OFS_TASK_MAX_ALLOC 16          /* REBALANCE: targets of one task */
/* TASK_START flags */
enum {
	OFS_TASK_F_REPAIR = 1u << 0,   /* repair what the scrub finds */
	OFS_TASK_F_DRYRUN = 1u << 1,   /* ... only say what would be done */
	OFS_TASK_F_NODATA = 1u << 2,   /* scrub: records, copies and structure;
	                                  byte streams are not re-read */
	OFS_TASK_F_ALL = (1u << 3) - 1,
};
/* What became of a finding (ofs_task_finding.repair). */
enum ofs_repair_state {
	OFS_REPAIR_NONE = 0,           /* not attempted (a plain scrub) */
	OFS_REPAIR_DONE,               /* repaired: action says how */
	OFS_REPAIR_WOULD,              /* dry run: action says what would be done */
	OFS_REPAIR_FAILED,             /* attempted, failed: action says why */
	OFS_REPAIR_LEFT,               /* left for a human: a conflict, no good
	                                  copy, or the job's repair cap */
	OFS_REPAIR_MAX = OFS_REPAIR_LEFT,
};
enum ofs_task_state {
	OFS_TASK_RUNNING = 1, OFS_TASK_PAUSED, OFS_TASK_DONE, OFS_TASK_FAILED,
	OFS_TASK_CANCELLED
};
enum ofs_task_action { OFS_TASK_PAUSE = 1, OFS_TASK_RESUME, OFS_TASK_CANCEL, OFS_TASK_FORGET };
/* What a task found, spelled in reports and the job store as
 * ofs_finding_name says (ofs-pbj(8)'s finding kinds; "move": a copy a drain
 * or rebalance moved or would move). */
enum ofs_finding_kind {
	OFS_FINDING_NONE = 0,
	OFS_FINDING_CHECKSUM_MISMATCH,
	OFS_FINDING_SIZE_MISMATCH,
	OFS_FINDING_UNREADABLE,
	OFS_FINDING_MISSING_REPLICA,
	OFS_FINDING_STALE_REPLICA,
	OFS_FINDING_KEYVAL_MISMATCH,
	OFS_FINDING_REPLICA_CONFLICT,
	OFS_FINDING_ORPHAN,
	OFS_FINDING_DANGLING_POINTER,
	OFS_FINDING_BACKREF_MISMATCH,
	OFS_FINDING_MULTIPLE_OWNERS,
	OFS_FINDING_RECORD_CORRUPT,
	OFS_FINDING_MOVE,
	OFS_FINDING_MAX
};
/* "checksum_mismatch", ... ; NULL for a bad value. */
const char *ofs_finding_name(int kind);
/* The kind spelled name, or OFS_FINDING_NONE. */
int ofs_finding_parse(const char *name);
#define OFS_TASK_DETAIL_LEN 512
#define OFS_MAX_TASK_FINDINGS 1024    /* findings held for one poll at most */
#define OFS_MAX_TASK_OIDS 65536       /* objects a TASK_START may name */

struct ofs_task_req {
	uint64_t job;
	uint8_t kind;                  /* START: enum ofs_task_kind */
	uint32_t flags;                /* START: reserved, 0 */
	uint64_t rate;                 /* START: bytes/s read, 0 = server default */
	struct ofs_oid cursor;         /* START: resume after this OID (zero: start) */
	uint64_t objects_base, bytes_base;   /* START: done before the cursor (the
	                                        task's counts go on from there) */
	uint32_t noids;                /* START: only these objects (0: all) */
	const uint8_t *oids;           /* START: noids OIDs, 16 bytes each, into
	                                  the body when decoded */
	uint64_t ack;                  /* POLL: findings up to this seq are stored */
	uint64_t budget;               /* START: repairs the task may do (UINT64_MAX:
	                                  any); POLL: this many more (0: none) */
	uint8_t action;                /* CTL: enum ofs_task_action */
	uint8_t nalloc;                /* START (REBALANCE): bytes to send to each */
	struct ofs_sid alloc_sid[OFS_TASK_MAX_ALLOC];
	uint64_t alloc_bytes[OFS_TASK_MAX_ALLOC];
};

struct ofs_task_status {
	uint8_t state;                 /* enum ofs_task_state */
	uint64_t objects_done, objects_total, bytes_done, bytes_total;
	struct ofs_oid cursor;         /* last OID done (findings up to it included) */
	char reason[256];              /* why it failed */
	uint64_t repairs;              /* repairs done (counted against the budget) */
	bool starved;                  /* waiting for more repair budget */
	int32_t error;                 /* FAILED: the code it failed with, 0 or
	                                  negative (a refusal is not retried) */
};

struct ofs_task_finding {
	uint64_t seq;                  /* per task, from 1 */
	struct ofs_sid server;         /* the server holding the copy at fault */
	struct ofs_oid oid;
	uint8_t kind;                  /* enum ofs_finding_kind */
	char detail[OFS_TASK_DETAIL_LEN];
	uint8_t repair;                /* enum ofs_repair_state */
	struct ofs_sid source;         /* the copy repaired from (zero: none) */
	struct ofs_oid ref;            /* the other object (zero: none): the owner
	                                  of an orphan or of a wrong back reference,
	                                  what a dangling pointer names */
	char action[OFS_TASK_DETAIL_LEN];   /* how it was (or would be) repaired */
};

struct ofs_summary {
	bool present;                  /* this server holds the object */
	bool behind;                   /* ... and knows its copy missed changes */
	bool corrupt;                  /* ... and a record of it does not decode */
	uint8_t type;                  /* the object's type */
	struct ofs_backref backref;    /* its back reference */
	uint64_t version, size;
	struct ofs_digest digest;
	bool checked;                  /* VERIFY: every chunk was re-read ... */
	bool bad;                      /* ... and some did not verify */
};

/* REPAIR_FETCH outcome */
enum ofs_fetch_outcome {
	OFS_FETCH_DONE = 1,            /* a good copy was fetched and swapped in */
	OFS_FETCH_GOOD,                /* this copy is already good: nothing to do */
	OFS_FETCH_WOULD,               /* dry run: would fetch from source */
	OFS_FETCH_CONFLICT,            /* copies verify but differ: nothing changed */
	OFS_FETCH_NONE,                /* no copy verifies: nothing changed */
	OFS_FETCH_RECONCILED,          /* no copy was current: the copies were
	                                  reconciled (server/reconcile.h) and
	                                  this one is current now */
	OFS_FETCH_MAX = OFS_FETCH_RECONCILED,
};
#define OFS_FETCH_DRYRUN 1u            /* REPAIR_FETCH flags: decide only */
#define OFS_FETCH_LOCALBAD 2u          /* the receiver's copy is known bad (a
                                          scrub just read it): not re-read */
struct ofs_fetch_reply {
	uint8_t outcome;               /* enum ofs_fetch_outcome */
	struct ofs_sid source;
	uint64_t version, bytes;
	char detail[256];
};

/* A decoded request body. Pointers refer into the decoded body. */
struct ofs_req {
	uint16_t op;                   /* enum ofs_op */
	struct ofs_oid oid;            /* object acted on (not PING, GET_ROOT) */
	uint32_t mask;                 /* SETATTR: OFS_ATTR_* */
	struct ofs_attr attr;          /* CREATE, SETATTR, CREATE_SMALL */
	uint64_t offset;               /* READ, WRITE */
	uint32_t length;               /* READ: at most OFS_MAX_IO */
	const uint8_t *data;           /* WRITE and CREATE_SMALL bytes, KV_PUT
	                                  value, SUMMARY_MANY:
	                                  the oids (OFS_OID_LEN each) */
	size_t data_len;
	const uint8_t *key;            /* KV_*: key; KV_LIST: list after it */
	size_t key_len;
	char name[OFS_NAME_MAX + 1];   /* DIRENT_*: name; DIRENT_LIST: after */
	struct ofs_dirent dirent;      /* DIRENT_CREATE */
	uint32_t flags;                /* DIRENT_CREATE: OFS_DIRENT_REPLACE;
	                                  WRITE: OFS_WRITE_UNSTABLE */
	uint32_t max;                  /* *_LIST: 1..OFS_MAX_LIST */
	const struct ofs_server *servers;  /* SERVERS (encode): entries sent */
	size_t nservers;               /* SERVERS: entry count (decode: the
	                                  checked body is in data/data_len) */
	struct ofs_server_set set;     /* SERVER_SET */
	struct ofs_sid sid;            /* REPORT: the copy reported; FREEZE: the
	                                  holder (the server moving a copy) */
	char reason[256];              /* REPORT: what went wrong */
	const uint8_t *cap;            /* not in the body: the frame's capability
	                                  slot (a user's, for its data requests) */
	uint16_t cap_len;
	uint64_t deadline_ms;          /* not in the body: the frame's credential
	                                  slot (frame.h; 0: none) - a change is
	                                  applied only before it */
	bool forwarded;                /* not on the wire: the server sets it when the
	                                  op carried OFS_OP_FORWARDED */
	const struct ident *who;       /* not on the wire: the caller as its
	                                  certificate proved it (NULL: a server
	                                  run --insecure, which believes all) */
	struct ofs_task_req task;      /* TASK_*: the task */
	struct ofs_oid child;          /* POINTS: the object pointed at (oid: the
	                                  owner; name; offset: the stripe) */
	struct ofs_handle root;        /* SET_ROOT: a root made by a client */
	int64_t birth_ns;              /* SET_ROOT: when it was made */
	uint8_t ncands;                /* REPAIR_FETCH: copies to fetch from (0: ask */
	struct ofs_sid cands[OFS_MAX_REPLICAS];   /* every server) */
	uint64_t rate;                 /* REPAIR_FETCH: bytes/s (0: unpaced) */
	uint64_t version;              /* STALE_CLEAR: the copy is current at this */
	uint64_t epoch;                /* JOIN: the sender task's run */
	uint32_t reclen;               /* JOIN: bytes per record (data: n of them;
	                                  END: none, and count is the total) */
	uint64_t count;                /* JOIN END: records sent on the channel */
	uint32_t ms;                   /* FREEZE: how long (0: lift). Held by
	                                  another holder: -EBUSY (a lift of
	                                  another's hold changes nothing) */
};

/* STOP_CHECK reply: what stopping the server now would leave short. */
#define OFS_STOP_LIST_MAX 64           /* objects named at most */
struct ofs_stop_short {
	struct ofs_oid oid;
	uint8_t good, need;            /* good copies elsewhere, write confidence */
};
struct ofs_stop_reply {
	uint64_t objects;              /* objects this server holds */
	uint64_t nshort;               /* of them, left short */
	uint32_t n;                    /* named below (the first ones) */
	struct ofs_stop_short list[OFS_STOP_LIST_MAX];
};
void proto_encode_stop_reply(struct wbuf *w, const struct ofs_stop_reply *s);
int proto_decode_stop_reply(const uint8_t *b, size_t n, struct ofs_stop_reply *s);

/* True when name is a valid entry name: 1..255 bytes, no '/', not "." or
 * "..". (A NUL cannot occur inside a C string; the decoders reject it.) */
bool ofs_name_valid(const char *name);
/* The hash that picks a name's dirdata in a directory of N of them:
 * parts[ofs_name_hash(name) % N] (FNV-1a, 64-bit). */
uint64_t ofs_name_hash(const char *name);
bool ofs_type_valid(uint8_t type);
const char *ofs_type_name(uint8_t type);

void proto_encode_attr(struct wbuf *w, const struct ofs_attr *a);
/* Decode an attr; on failure the reader's error is latched. Only
 * parts[0 .. nparts-1] are written: the entries past them are left as
 * they were (read none of them). */
void proto_decode_attr(struct rbuf *r, struct ofs_attr *a);
void proto_encode_dirent(struct wbuf *w, const struct ofs_dirent *d);
void proto_decode_dirent(struct rbuf *r, struct ofs_dirent *d);

/* Encode a request body for q->op (only the fields that op uses). */
int proto_encode_req(struct wbuf *w, const struct ofs_req *q);
/*
 * Decode the body of a request with operation op into *q. Returns 0, or
 *   -OFS_EUNKNOWNOP  op is not a known operation
 *   -OFS_ECORRUPT    truncated body, trailing bytes, bad count or type
 *   -OFS_ETOOBIG     a length over its limit
 *   -OFS_ENAME       an entry name that breaks the name rules
 */
int proto_decode_req(uint16_t op, const uint8_t *body, size_t len, struct ofs_req *q);

/* Replies. Each encode appends to w; each decode reads a whole body and
 * returns 0 or -OFS_ECORRUPT / -OFS_ETOOBIG. */
struct ofs_ping_reply {
	struct ofs_sid sid;            /* the server's SID */
	char version[32];              /* its software version */
};
void proto_encode_ping(struct wbuf *w, const struct ofs_ping_reply *p);
int proto_decode_ping(const uint8_t *b, size_t n, struct ofs_ping_reply *p);

void proto_encode_handle_reply(struct wbuf *w, const struct ofs_handle *h);
int proto_decode_handle_reply(const uint8_t *b, size_t n, struct ofs_handle *h);
void proto_encode_oid_reply(struct wbuf *w, struct ofs_oid oid);
int proto_decode_oid_reply(const uint8_t *b, size_t n, struct ofs_oid *oid);
int proto_decode_attr_reply(const uint8_t *b, size_t n, struct ofs_attr *a);
/* GET_SMALL's reply: the attributes, then u8 1 and the bytes (a blob of
 * at most OFS_SMALL_MAX, exactly the file's size) or u8 0. *data points
 * into b (NULL when none came). */
void proto_encode_small_reply(struct wbuf *w, const struct ofs_attr *a, const void *data,
			      size_t len);
int proto_decode_small_reply(const uint8_t *b, size_t n, struct ofs_attr *a,
			     const uint8_t **data, size_t *len);

struct ofs_write_reply {
	uint64_t version;              /* object version after the write */
	uint64_t size;                 /* stream length after the write */
};
void proto_encode_write_reply(struct wbuf *w, const struct ofs_write_reply *p);
int proto_decode_write_reply(const uint8_t *b, size_t n, struct ofs_write_reply *p);

/* DIRENT_CREATE / REMOVE / LOOKUP reply: a flag (an entry was there) and
 * the entry. */
void proto_encode_dirent_reply(struct wbuf *w, bool present, const struct ofs_dirent *d);
int proto_decode_dirent_reply(const uint8_t *b, size_t n, bool *present, struct ofs_dirent *d);

/*
 * List replies (KV_LIST, DIRENT_LIST): u32 count, entries, u8 more. Built
 * with list_begin / list_add_* / list_end; read back with a list reader.
 */
struct ofs_list_writer {
	struct wbuf *w;                /* where entries go */
	size_t count_off;              /* offset of the count */
	uint32_t count;                /* entries so far */
};
void proto_list_begin(struct ofs_list_writer *lw, struct wbuf *w);
void proto_list_add_kv(struct ofs_list_writer *lw, const void *k, size_t kn, const void *v, size_t vn);
void proto_list_add_dirent(struct ofs_list_writer *lw, const char *name, const struct ofs_dirent *d);
void proto_list_end(struct ofs_list_writer *lw, bool more);

struct ofs_list_reader {
	struct rbuf r;                 /* over the reply body */
	uint32_t left;                 /* entries not yet read */
	bool more;                     /* the server has entries after these */
};
/* Check the whole body once (counts, lengths, names) and set up reading. */
int proto_list_open_kv(struct ofs_list_reader *lr, const uint8_t *b, size_t n);
int proto_list_open_dirent(struct ofs_list_reader *lr, const uint8_t *b, size_t n);
/* Next entry; returns 1 with an entry, 0 at the end. Pointers refer into b. */
int proto_list_next_kv(struct ofs_list_reader *lr, const uint8_t **k, size_t *kn,
		       const uint8_t **v, size_t *vn);
int proto_list_next_dirent(struct ofs_list_reader *lr, char name[OFS_NAME_MAX + 1],
			   struct ofs_dirent *d);

const char *ofs_server_state_name(uint8_t state);
/* 0 and the state for "in", "draining", "out"; -EINVAL otherwise. */
int ofs_server_state_parse(const char *s, uint8_t *state);
/* The value of attribute key in e ("" when absent) into out. */
void ofs_server_attr(const struct ofs_server *e, const char *key, char *out, size_t len);

void proto_encode_server(struct wbuf *w, const struct ofs_server *e);
void proto_decode_server(struct rbuf *r, struct ofs_server *e);
/* SERVERS request and reply bodies: [sid (reply only)] u32 count, entries.
 * decode allocates *entries (caller frees; NULL when count is 0). */
void proto_encode_servers(struct wbuf *w, const struct ofs_sid *responder,
			  const struct ofs_server *e, size_t n);
int proto_decode_servers(const uint8_t *b, size_t n, bool reply, struct ofs_sid *responder,
			 struct ofs_server **entries, size_t *count);
void proto_encode_server_set(struct wbuf *w, const struct ofs_server_set *s);
int proto_decode_server_set(const uint8_t *b, size_t n, struct ofs_server_set *s);
void proto_encode_stats(struct wbuf *w, const struct ofs_stats *s);
int proto_decode_stats(const uint8_t *b, size_t n, struct ofs_stats *s);
/* REPORT body: oid, sid, reason (at most 255 bytes). */
void proto_encode_report(struct wbuf *w, struct ofs_oid oid, struct ofs_sid sid, const char *reason);
int proto_decode_report(const uint8_t *b, size_t n, struct ofs_oid *oid, struct ofs_sid *sid,
			char reason[256]);

/*
 * STALE_FOR reply: n records (oid, reason) and whether more follow. The
 * decoder checks the whole body first, then calls fn for each record
 * (fn returning non-zero stops it with that value).
 */
#define OFS_MAX_STALE_LIST 1024
void proto_encode_stale_list(struct wbuf *w, const struct ofs_oid *oids,
			     char (*reasons)[256], uint32_t n, bool more);
/* One record of it, as the list holds it (after its u32 count). */
void proto_encode_stale_record(struct wbuf *w, struct ofs_oid oid, const char *reason);
int proto_decode_stale_list(const uint8_t *b, size_t len,
			    int (*fn)(struct ofs_oid oid, const char *reason, void *arg),
			    void *arg, bool *more);

/* TASK_POLL reply: the status, then findings; the decoder checks the
 * whole body, then calls fn for each finding. */
void proto_encode_task_status(struct wbuf *w, const struct ofs_task_status *st,
			      const struct ofs_task_finding *f, uint32_t n);
/* One finding of it, as the status holds it (after its u32 count). */
void proto_encode_finding(struct wbuf *w, const struct ofs_task_finding *f);
int proto_decode_task_status(const uint8_t *b, size_t len, struct ofs_task_status *st,
			     int (*fn)(const struct ofs_task_finding *f, void *arg), void *arg);
void proto_encode_summary(struct wbuf *w, const struct ofs_summary *s);
void proto_encode_fetch_reply(struct wbuf *w, const struct ofs_fetch_reply *f);
int proto_decode_fetch_reply(const uint8_t *b, size_t len, struct ofs_fetch_reply *f);
int proto_decode_summary(const uint8_t *b, size_t len, struct ofs_summary *s);
/* CHANGES reply: the version and digest the notes lead to, and the notes
 * (a blob of at most OFS_MAX_IO bytes, checked by whoever replays them;
 * *notes points into b). */
void proto_encode_changes(struct wbuf *w, uint64_t version, struct ofs_digest digest,
			  const uint8_t *notes, size_t n);
int proto_decode_changes(const uint8_t *b, size_t len, uint64_t *version,
			 struct ofs_digest *digest, const uint8_t **notes, size_t *n);
/* SUMMARY_MANY reply: n summaries one after another. The decoder takes
 * exactly n (-OFS_ECORRUPT on a short, long or bad body). */
void proto_encode_summaries(struct wbuf *w, const struct ofs_summary *s, uint32_t n);
/* GETATTR_MANY's reply: n statuses (0 or -errno), each 0 followed by the
 * attributes. Decoding needs exactly n. */
void proto_encode_attrs_many(struct wbuf *w, const int32_t *st, const struct ofs_attr *a,
			     uint32_t n);
int proto_decode_attrs_many(const uint8_t *b, size_t len, int32_t *st, struct ofs_attr *a,
			    uint32_t n);
int proto_decode_summaries(const uint8_t *b, size_t len, struct ofs_summary *s, uint32_t n);

/* SET_ROOT reply: the root in use and its birth. */
void proto_encode_root(struct wbuf *w, const struct ofs_handle *h, int64_t birth_ns);
int proto_decode_root(const uint8_t *b, size_t n, struct ofs_handle *h, int64_t *birth_ns);

const char *ofs_op_name(uint16_t op);

#endif
