/*
 * bstream.h - byte streams: the file-data part of a dfile, one plain file
 * per object under DATA/bstreams/XX/YY/OIDHEX (XX, YY the OID's first two
 * bytes in hex), so no folder ever holds more than a few files per 65 536.
 *
 * Storage I/O goes through an ops table (pread, pwrite, fdatasync, fsync)
 * that a test can replace to inject failures, as SQLite's VFS does.
 * Creation is durable when bstream_create returns: the file, and the
 * folder entries leading to it, are fsync'd.
 */
#ifndef OFS_BSTREAM_H
#define OFS_BSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oid.h"

#define BSTREAM_PATH_MAX 4096

struct bstream_ops {
	ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
	ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
	int (*fdatasync)(int fd);
	int (*fsync)(int fd);
};

/* The ops in use; tests may replace them (not thread-safe to swap while
 * the store runs). bstream_ops_reset() restores the system calls. */
extern struct bstream_ops bstream_ops;
void bstream_ops_reset(void);

/* DATA/bstreams/XX/YY/OIDHEX into buf. -ENAMETOOLONG if it does not fit. */
int bstream_path(const char *datadir, struct ofs_oid oid, char *buf, size_t len);

/* Create an empty stream, durably. -EEXIST if it exists. */
int bstream_create(const char *datadir, struct ofs_oid oid);
/* Remove a stream (a missing one is not an error); the removal is synced. */
int bstream_remove(const char *datadir, struct ofs_oid oid);
/* Open for reading (and writing if rw); -ENOENT when missing. */
int bstream_open(const char *datadir, struct ofs_oid oid, int rw, int *fd);

/* Exactly n bytes at off, retrying short transfers. A read that meets end
 * of file returns the bytes read in *got (may be < n). -errno on error. */
int bstream_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got);
int bstream_pwrite(int fd, const void *buf, size_t n, uint64_t off);
int bstream_datasync(int fd);
/* Ask the kernel to start reading [off, off+len) into the page cache. */
void bstream_prefetch(int fd, uint64_t off, uint64_t len);
/* Cut the stream to len bytes if it is longer (no-op otherwise). */
int bstream_trim(int fd, uint64_t len);

#endif
