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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"

struct ofs_client;

/*
 * The identity this process connects with (docs/design.md, "Security"), once,
 * before the first ofs_client_open: the one in directory iddir (NULL:
 * $OFS_IDENTITY), or, when there is none and insecure is true (or
 * $OFS_INSECURE is 1), plaintext to loopback servers run --insecure.
 * 0, or a negative code (-OFS_ENOIDENT: none given) with a message in
 * why (TLS_WHY_MAX bytes, tls.h). The ofs(1) program does this with its
 * own words (--identity, --insecure); libofs's other programs call this.
 */
int ofs_client_identity(const char *iddir, bool insecure, char *why);

/* Connect to the cluster through the first of addrs ("HOST:PORT") that
 * answers. Returns 0 and *out (free with ofs_client_close), or
 * -OFS_EUNREACHABLE, -EINVAL (bad address), -ENOMEM. */
int ofs_client_open(const char *const *addrs, size_t naddrs, struct ofs_client **out);
void ofs_client_close(struct ofs_client *c);
/* For fault-injection tests: the client kills its own process (SIGKILL)
 * at the step named point, as a crash there would (the steps: ofs(1),
 * OFS_FAULT) - or, at the step "get-paused" (after a get's first round),
 * waits for its test (DIR/paused, then DIR/resume: the pause dir). NULL
 * or "" sets none. */
void ofs_client_set_fault(struct ofs_client *c, const char *point);
/* Where the pause step speaks to its test (NULL: the step does not pause). */
void ofs_client_set_pause_dir(struct ofs_client *c, const char *dir);

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
 * when fd seeks (up to three attempts); from a pipe it fails instead.
 * The client remembers the directories a put walked for two seconds, so
 * many puts into one directory walk its path once: a directory another
 * client renames within that time may receive a file put through its old
 * path (as if the put had walked just before the rename); one removed
 * fails the put, which walks again and is tried once more. */
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
/* Attributes of n objects (a listing's entries: readdir-plus): one
 * request per server for up to 256 of them (each asked of its first copy
 * to try), then, one by one through every copy, those that copy could not
 * answer. rcs[i]: 0 (out[i] set) or why not. Returns 0, or -ENOMEM. */
int ofs_getattr_many(struct ofs_client *c, const struct ofs_handle *hs, size_t n,
		     struct ofs_attr *out, int *rcs);
/* Requests of operation op (enum ofs_op) this client has sent so far. */
uint64_t ofs_client_sent(const struct ofs_client *c, uint16_t op);

int ofs_unlink(struct ofs_client *c, const char *path);
int ofs_rmdir(struct ofs_client *c, const char *path);
/* The permission bits (at most 07777) of what path names: its owner's
 * or an admin's to change (-EACCES for anyone else; -EINVAL: bits over
 * 07777). */
int ofs_chmod(struct ofs_client *c, const char *path, uint32_t mode);
/* The owner of what path names, and its group unless keep_gid: an
 * admin's to change (-EACCES for a user). */
int ofs_chown(struct ofs_client *c, const char *path, uint32_t uid, uint32_t gid, bool keep_gid);

/* Rename; when newpath is an existing directory the entry moves into it.
 * An existing file at newpath is replaced. */
int ofs_rename(struct ofs_client *c, const char *oldpath, const char *newpath);

#endif
