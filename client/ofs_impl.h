/*
 * ofs_impl.h - what libofs's files share (client/ofs.h is its promise):
 * the client's state, the calls to a server with failover, one object's
 * operations, path resolution. The parts:
 *   ofs.c            servers and calls: the server table, failover,
 *                    objects made, removed, asked; dirent calls;
 *   ofs_resolve.c    paths resolved;
 *   ofs_client.c     a client opened and closed, its identity, the
 *                    root, its test steps;
 *   ofs_namespace.c  directories, unlink, rename, stat, chmod, chown;
 *   ofs_io.c         files: dfile I/O, put and get;
 *   ofs_repair.c     the calls repair makes (ofs_repair.h);
 *   ofs_cap.c        the capabilities a user's requests carry;
 *   ofs_dcache.c     the directories a put walked lately.
 */
#ifndef OFS_CLIENT_IMPL_H
#define OFS_CLIENT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/ofs.h"
#include "lib/backoff.h"
#include "lib/conn.h"
#include "lib/frame.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/path.h"
#include "lib/placement.h"

#define OFS_DEFAULT_STRIP (1u << 20)
#define OFS_IO_PIECE OFS_MAX_IO           /* bytes per READ/WRITE */
#define GET_RETRIES 3                     /* restarts when a file is replaced */
#define MOVE_WAIT_MS 60000                /* waits for an object held still by a move */
/* How long a server has to answer op (a hung server is a down server:
 * past it, the next copy is asked). A question (a read, a lookup, a
 * listing) gets CL_ANSWER_MS. A change carries a deadline (frame.h),
 * CL_CHANGE_MS from its sending (a WRITE of 4 MiB CL_WRITE_MS, a COMMIT,
 * whose sync may be long, CONN_REPLY_MS; each more than its primary gives
 * its copies: replica.h), which its primary keeps and passes to them: a
 * server hung past it refuses the change when it continues, rather than
 * apply it after its client went on to the next copy. The client waits
 * CL_LATE_MS more than the deadline, so a server's clock a little behind
 * ours cannot apply what we gave up on. cl_change_ms: 0 for a question. */
#define CL_ANSWER_MS 5000
#define CL_CHANGE_MS 4000
#define CL_WRITE_MS 15000
#define CL_LATE_MS 1000
int cl_answer_ms(uint16_t op);
int cl_change_ms(uint16_t op);
/* q, about to go on cn: cn waits cl_answer_ms for its answer, and a
 * change carries its deadline from now (cl_change_ms). */
void cl_bound(struct conn *cn, struct ofs_req *q);
#define MOVE_WAIT_FIRST_MS 50             /* ... the first, then doubled ... */
#define MOVE_WAIT_CAP_MS 1000             /* ... up to this, with jitter */

/* A server as this client knows it. */
struct peer {
	struct ofs_server e;        /* from the server table */
	struct conn *conn;          /* opened on first use */
	bool down;                  /* it failed to answer: try it last */
};

struct cl_caps;

struct ofs_client {
	struct cl_caps *caps;       /* capabilities held (a user's; ofs_cap.c) */
	struct peer *peers;         /* the server table, learned on open */
	size_t npeers;
	struct ofs_handle root;     /* the root directory */
	char fault[32];             /* a fault-injection step, or "" */
	char *pause_dir;            /* the pause step's directory (NULL: none) */
	struct cl_dcache *dcache;   /* directories walked lately (ofs_dcache.c;
	                               NULL: none yet) */
	int conn_err;               /* why cl_conn_of's last connect failed */
};

/* What a path names: its entry (type, handle) and, unless it is the root,
 * its parent directory's handle and attributes. */
struct resolved {
	struct ofs_dirent ent;        /* the object itself */
	struct ofs_handle parent;     /* its directory (not for the root) */
	struct ofs_attr *pattr;       /* that directory's attributes (owned) */
	char name[OFS_NAME_MAX + 1];  /* last component ("" for the root) */
	size_t depth;
	struct ofs_oid chain[OFS_PATH_DEPTH + 1];  /* directories walked */
};

/* ---- across the parts ---------------------------------------------------- */

/*
 * Directories walked lately (ofs_dcache.c), for a put's walk to its
 * parent: a name that named a directory, and a directory's attributes,
 * are taken as they were for CL_DCACHE_TTL_MS. So a directory renamed
 * within that time may receive a file put through its old path (as if
 * the put had walked just before the rename), and one removed fails the
 * put, which then walks again (cl_dcache_clear) and is tried once more.
 */
#define CL_DCACHE_TTL_MS 2000
struct cl_dcache;
bool cl_dcache_name(struct ofs_client *c, struct ofs_oid parent, const char *name,
		    struct ofs_dirent *d);
void cl_dcache_put_name(struct ofs_client *c, struct ofs_oid parent, const char *name,
			const struct ofs_dirent *d);
bool cl_dcache_attr(struct ofs_client *c, struct ofs_oid oid, struct ofs_attr *a);
void cl_dcache_put_attr(struct ofs_client *c, struct ofs_oid oid, const struct ofs_attr *a);
void cl_dcache_clear(struct ofs_client *c);

/* Capabilities (ofs_cap.c). A user's requests carry them; an admin's
 * need none (cl_is_user). */
int cl_caps_new(struct cl_caps **out);
void cl_caps_free(struct cl_caps *k);
bool cl_is_user(void);
/* The reply to a GETATTR or CREATE of h just came on cn: keep the
 * capability it carried, if any. */
void cl_caps_take(struct ofs_client *c, const struct ofs_handle *h, struct conn *cn);
/* The attributes a of the file or directory oid were just read: the
 * capability held for oid reaches its parts (a's layout) - a capability
 * names its subject alone (server/access.h), the client knows the rest. */
void cl_caps_parts(struct ofs_client *c, struct ofs_oid oid, const struct ofs_attr *a);
/* A new OID for an object this client makes: a user's carries its proof
 * (lib/cap.h: cap_oid_generate), an admin's is random. 0 or -errno. */
int cl_new_oid(struct ofs_oid *out);
/* obj was made under owner (its back reference names owner): owner's
 * capability reaches it. */
void cl_caps_alias(struct ofs_client *c, struct ofs_oid owner, struct ofs_oid obj);
/* The capability for a request on oid, renewed first when it is about to
 * expire, copied into buf (CAP_MAX_LEN bytes); its length, 0 if none. */
size_t cl_caps_for(struct ofs_client *c, struct ofs_oid oid, uint8_t *buf);
/* A server called the capability for oid expired or not valid: ask for
 * a new one (a GETATTR). 0, or that GETATTR's error. */
int cl_caps_renew(struct ofs_client *c, struct ofs_oid oid);
/* May this client do ops (enum cap_op) to the file or directory h, as
 * its mode bits say (a GETATTR unless a capability for h is held)? 0
 * (always for an admin), -EACCES, or the GETATTR's error. Asked before a
 * change of several steps, so that one refused midway leaves nothing
 * half done. */
int cl_may(struct ofs_client *c, const struct ofs_handle *h, uint32_t ops);
/* May this client remove or move h, named in the directory dir (WRITE
 * on dir, shown to h's server in a GETATTR that is then answered with
 * REMOVE: server/access.h)? 0 (always for an admin), -EACCES, or the
 * GETATTR's error. */
int cl_may_remove(struct ofs_client *c, const struct ofs_handle *dir, const struct ofs_handle *h);
/* The capability held for dir is limited by its sticky bit (CAP_STICKY):
 * an entry is removed there with the entry's own REMOVE. */
bool cl_caps_sticky(struct ofs_client *c, struct ofs_oid dir);
/* The object oid (a file or directory this client made) is named in dir:
 * its capability's renewal shows dir's, to keep REMOVE. */
void cl_caps_parent(struct ofs_client *c, struct ofs_oid oid, struct ofs_oid dir);
/* A GETATTR of h carrying the capability held for dir (zero: none), so
 * that its answer may grant REMOVE (cl_may_remove). */
int cl_obj_getattr_showing(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
			   struct ofs_oid dir);
/* Is rc a server's "ask for a new capability"? */
#define CL_CAP_RENEW(rc) ((rc) == -OFS_ECAPEXPIRED || (rc) == -OFS_ECAPBAD)

/* The owner of a new object: the uid and primary group of the caller's
 * user certificate (a server believes no other); root for an admin's;
 * the local ids under --insecure. */
void cl_owner(uint32_t *uid, uint32_t *gid);

int cl_call(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_req *q,
		uint8_t **body, size_t *blen);
struct conn *cl_conn_of(struct ofs_client *c, struct ofs_sid sid);
int cl_dfile_commit(struct ofs_client *c, const struct ofs_handle *h, uint64_t *size);
int cl_dfile_read(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		      uint8_t *p, size_t n);
int cl_dfile_write(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		       const uint8_t *p, size_t n);
void cl_dir_layout(const struct ofs_client *c, struct ofs_attr *a);
int cl_dirdata_for(const struct ofs_attr *da, const char *name, struct ofs_handle *dd);
int cl_dirent_call(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
		       const char *name, const struct ofs_dirent *d, uint32_t flags,
		       bool *present, struct ofs_dirent *out);
/* cl_dirent_call; *failed_over: a copy died mid-call; by: whose capability it carries (NULL: dd's). */
int cl_dirent_call_ex(struct ofs_client *c, uint16_t op, const struct ofs_handle *dd,
		      const char *name, const struct ofs_dirent *d, uint32_t flags,
		      bool *present, struct ofs_dirent *out, bool *failed_over,
		      const struct ofs_oid *by);
/* Ask the server on cn for the server table and take it (*answered: that server, if not NULL). */
int cl_fetch_table(struct ofs_client *c, struct conn *cn, struct ofs_sid *answered);
int cl_file_destroy(struct ofs_client *c, const struct ofs_handle *mf);
/* The server sid as this client knows it (its table's entry), or NULL. */
struct peer *cl_find_peer(struct ofs_client *c, struct ofs_sid sid);
int cl_map_transport(int rc);
void cl_mark_down(struct ofs_client *c, struct ofs_sid sid);

/* Waiting out OFS_EMOVING (the object held still while a copy of it
 * moves) before asking again: MOVE_WAIT_FIRST_MS, doubled up to
 * MOVE_WAIT_CAP_MS with jitter - many clients held by one move do not
 * all come back at once - and MOVE_WAIT_MS in all. Zero it first. */
struct cl_moving {
	struct backoff bo;
	bool started;                /* bo initialised (at the first wait) */
};
/* Sleep the next wait: true, or false (no sleep) once MOVE_WAIT_MS have
 * been waited. */
bool cl_moving_wait(struct cl_moving *m);
int cl_obj_create(struct ofs_client *c, const struct ofs_attr *a, unsigned copies,
		      const struct ofs_sid *fixed, struct ofs_handle *h);
/* A whole small file (at most OFS_SMALL_MAX bytes, one stripe) in one
 * request: a (the metafile's attributes) gets its copies, its one dfile
 * (on the same servers, file stuffing) and its size; *h its handle. */
int cl_create_small(struct ofs_client *c, struct ofs_attr *a, unsigned copies,
		    const void *bytes, size_t len, struct ofs_handle *h);
void cl_pause_point(struct ofs_client *c, const char *name);
int cl_obj_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a);
/* A file's attributes (h: its metafile) and, when it is small and its
 * dfile is held current where it asked, its bytes in one round trip
 * (*bytes malloc'd, a->size of them; NULL: read them the usual way). */
int cl_get_small(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
		 uint8_t **bytes);
int cl_obj_remove(struct ofs_client *c, const struct ofs_handle *h);
int cl_obj_setattr(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a);
void cl_report(struct ofs_client *c, struct ofs_sid to, struct ofs_oid oid,
		   struct ofs_sid bad, const char *why);
struct ofs_req *cl_req_new(uint16_t op, struct ofs_oid oid);
int cl_resolve(struct ofs_client *c, const char *path, struct resolved *r);
int cl_resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd);
/* cl_resolve_parent through the directories walked lately (a put's):
 * *cached says whether any was taken from there. */
int cl_resolve_parent_cached(struct ofs_client *c, const char *path, struct resolved *r,
			     char name[OFS_NAME_MAX + 1], struct ofs_handle *dd, bool *cached);
void cl_resolved_free(struct resolved *r);
unsigned cl_servers_in(const struct ofs_client *c);
size_t cl_try_order(struct ofs_client *c, const struct ofs_handle *h, struct ofs_sid *out);

#endif
