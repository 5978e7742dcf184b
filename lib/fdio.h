/*
 * fdio.h - whole reads and writes on a file descriptor: a short transfer
 * goes on where it stopped, EINTR is tried again, and any other error is
 * returned as -errno. Every loop of that kind in OFS is these.
 */
#ifndef OFS_FDIO_H
#define OFS_FDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef ssize_t (*fdio_pread_fn)(int fd, void *buf, size_t n, off_t off);
typedef ssize_t (*fdio_pwrite_fn)(int fd, const void *buf, size_t n, off_t off);

/* Up to n bytes at off through pr (NULL: pread), stopping early only at
 * end of file; *got says how many. */
int fdio_pread_all(fdio_pread_fn pr, int fd, void *buf, size_t n, uint64_t off, size_t *got);
/* n bytes at off through pw (NULL: pwrite); a write of 0 bytes is -EIO. */
int fdio_pwrite_all(fdio_pwrite_fn pw, int fd, const void *buf, size_t n, uint64_t off);
/* The same at the descriptor's own position (read, write: pipes too). */
int fdio_read_all(int fd, void *buf, size_t n, size_t *got);
int fdio_write_all(int fd, const void *buf, size_t n);

/* Whether the directory path holds nothing but "." and "..": 1 or 0;
 * -errno (-ENOENT: no such directory). */
int fdio_dir_is_empty(const char *path);

/* The whole of file path into buf (cap bytes): *got says how many.
 * -EFBIG when it holds more than cap; -errno (-ENOENT: no such file). */
int fdio_read_file(const char *path, void *buf, size_t cap, size_t *got);

/*
 * path holds exactly n bytes of buf, with exactly mode (the umask does not
 * apply), whole or not at all: written to a temporary name beside it
 * ("path.tmp-" and 8 random hex digits, made by open(O_CREAT | O_EXCL |
 * O_NOFOLLOW): a file or symbolic link planted under that name is never
 * written through), synced, renamed over path (a symbolic link at path is
 * replaced, not followed), and its directory synced. -errno; on an error
 * the temporary file is gone and path is as it was.
 */
int fdio_write_file(const char *path, const void *buf, size_t n, unsigned mode);
/* The same for a file that must be new: -EEXIST, and nothing written,
 * when path exists - a file, a directory or a symbolic link (dangling or
 * not). Placed by renameat2(RENAME_NOREPLACE), or by link(2) where the
 * file system lacks it. */
int fdio_write_new(const char *path, const void *buf, size_t n, unsigned mode);

#endif
