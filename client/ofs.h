/*
 * ofs.h - libofs, the client library.
 *
 * Users see paths; libofs turns them into objects. A path is resolved from
 * the cluster's root directory through directory objects and their dirdata;
 * a file's bytes live in the dfile(s) its metafile names. Every function
 * returns 0 or a negative code (ofs_strerror names it):
 *   -ENOENT            a path component does not exist
 *   -ENOTDIR           a component that must be a directory is not one
 *   -EISDIR / -EEXIST  as POSIX uses them
 *   -ENOTEMPTY         rmdir of a directory with entries
 *   -EINVAL, -ENAMETOOLONG, -OFS_ETOOBIG   a malformed path or option
 *   -OFS_EUNREACHABLE  no server answered
 *   any error a server returned (-EIO, -OFS_ECHECKSUM, ...)
 * A struct ofs_client may be used by one thread at a time; open one per
 * thread for parallel work.
 */
#ifndef OFS_CLIENT_H
#define OFS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"

struct ofs_client;

/* Connect to the cluster through the first of addrs ("HOST:PORT") that
 * answers. Returns 0 and *out (free with ofs_client_close), or
 * -OFS_EUNREACHABLE, -EINVAL (bad address), -ENOMEM. */
int ofs_client_open(const char *const *addrs, size_t naddrs, struct ofs_client **out);
void ofs_client_close(struct ofs_client *c);
/* For fault-injection tests: the client kills its own process (SIGKILL)
 * at the step named point, as a crash there would (the steps: ofs(1),
 * OFS_FAULT). NULL or "" sets none. */
void ofs_client_set_fault(struct ofs_client *c, const char *point);

/* Layout of a new file; zero fields take the defaults (1 copy,
 * confidence = replicas, 1 stripe, 1 MiB strips). */
struct ofs_put_opts {
	uint8_t replicas;       /* copies of every object, 1..OFS_MAX_REPLICAS */
	uint8_t confidence;     /* copies durable before a write is answered */
	uint32_t strip_size;    /* bytes per strip */
	uint16_t stripes;       /* dfiles, 1..OFS_MAX_STRIPES */
};

int ofs_mkdir(struct ofs_client *c, const char *path);

/* Store the bytes read from fd until EOF as file path. An existing file is
 * replaced atomically: readers see the old or the new contents, and on
 * failure the old file is intact. -EISDIR when path is a directory. A
 * server that dies during the put makes it start again, as a new file,
 * when fd seeks (up to three attempts); from a pipe it fails instead. */
int ofs_put_fd(struct ofs_client *c, int fd, const char *path, const struct ofs_put_opts *o);
int ofs_put_buf(struct ofs_client *c, const void *buf, size_t len, const char *path,
		const struct ofs_put_opts *o);

/* Write file path's bytes to fd (which must be at offset 0 of an empty
 * file or a pipe); returns the byte count in *len if len is not NULL. */
int ofs_get_fd(struct ofs_client *c, const char *path, int fd, uint64_t *len);
/* The whole file in a malloc'd buffer (caller frees). */
int ofs_get_buf(struct ofs_client *c, const char *path, void **buf, size_t *len);

/* Attributes of what path names and its handle. For a file the attr's
 * parts are its dfiles; for a directory, its dirdata objects. */
int ofs_stat(struct ofs_client *c, const char *path, struct ofs_attr *attr,
	     struct ofs_handle *h);

/* Call fn for every entry of directory path, in name order. fn returns 0
 * to go on or non-zero to stop (that value is returned). */
typedef int (*ofs_readdir_fn)(const char *name, const struct ofs_dirent *d, void *arg);
int ofs_readdir(struct ofs_client *c, const char *path, ofs_readdir_fn fn, void *arg);

/* Attributes of one object by handle (for ls -l and stat of parts). */
int ofs_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *attr);

int ofs_unlink(struct ofs_client *c, const char *path);
int ofs_rmdir(struct ofs_client *c, const char *path);
/* Rename; when newpath is an existing directory the entry moves into it.
 * An existing file at newpath is replaced. */
int ofs_rename(struct ofs_client *c, const char *oldpath, const char *newpath);

/*
 * For repair (ofs-server's repair tasks use these; they change structure
 * and are not for ordinary clients):
 * ofs_link_object makes an entry at path (its directory must exist; an
 *   existing name is -EEXIST) for an existing metafile or directory h,
 *   then rewrites the object's back reference to name that entry;
 * ofs_adopt_part gives a dfile (with size bytes) or a dirdata whose owner
 *   is gone a new owner - a one-stripe metafile or a directory with that
 *   one dirdata - linked at path, and rewrites the part's back reference;
 * ofs_unlink_entry removes entry name from dirdata (the objects it named
 *   stay), returning what it named;
 * ofs_set_backref rewrites an object's back reference on every copy;
 * ofs_setattr_handle and ofs_relink_entry rewrite handles (the move step).
 */
int ofs_link_object(struct ofs_client *c, const char *path, const struct ofs_handle *h,
		    uint8_t type);
int ofs_adopt_part(struct ofs_client *c, const char *path, const struct ofs_handle *part,
		   uint8_t type, uint64_t size);
int ofs_unlink_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		     struct ofs_dirent *removed);
/* For repair, a second owner's own part in place of a shared one: a new
 * object of type (as many copies as part, placed afresh) with back
 * reference br - a dfile holding part's first size bytes, durable; a
 * dirdata empty (the entries stay with the owner their back references
 * name). On failure nothing of it is left. ofs_remove_part removes one
 * object (all its copies). */
int ofs_copy_part(struct ofs_client *c, const struct ofs_handle *part, uint8_t type,
		  uint64_t size, const struct ofs_backref *br, struct ofs_handle *out);
int ofs_remove_part(struct ofs_client *c, const struct ofs_handle *part);
/* DIRENT_CREATE of name -> d in dirdata itself (flags as ofs_relink_entry). */
int ofs_set_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		  const struct ofs_dirent *d, uint32_t flags);
int ofs_set_backref(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_backref *br);
/* SETATTR of the fields mask selects, through the object's primary. */
int ofs_setattr_handle(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a);
/* The dirdata of directory dir (its attributes) that holds entry name. */
int ofs_dirdata_for(const struct ofs_attr *dir, const char *name, struct ofs_handle *dd);
/* Point entry name of directory dir at d: flags OFS_DIRENT_REPLACE
 * replaces what it named; 0 makes it only when the name is free
 * (-EEXIST otherwise). -ENOENT: the dirdata exists nowhere. */
int ofs_relink_entry(struct ofs_client *c, const struct ofs_handle *dir, const char *name,
		     const struct ofs_dirent *d, uint32_t flags);
/* Create object h (its OID, on its servers) with attributes a: for
 * repair, a lost part recreated empty where its owner expects it.
 * -EEXIST when a copy holds it already. */
int ofs_recreate(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_attr *a);

#endif
