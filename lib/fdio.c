/* fdio.c - whole reads and writes on a file descriptor (see fdio.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"

#define FDIO_PATH_MAX 4096
#define AT_POSITION UINT64_MAX   /* no offset: read/write at the fd's position */

static ssize_t read_at(fdio_pread_fn pr, int fd, void *buf, size_t n, uint64_t off)
{
	if (off == AT_POSITION)
		return read(fd, buf, n);
	return pr ? pr(fd, buf, n, (off_t)off) : pread(fd, buf, n, (off_t)off);
}

static ssize_t write_at(fdio_pwrite_fn pw, int fd, const void *buf, size_t n, uint64_t off)
{
	if (off == AT_POSITION)
		return write(fd, buf, n);
	return pw ? pw(fd, buf, n, (off_t)off) : pwrite(fd, buf, n, (off_t)off);
}

int fdio_pread_all(fdio_pread_fn pr, int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = read_at(pr, fd, (char *)buf + done, n - done,
				    off == AT_POSITION ? off : off + done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

int fdio_pwrite_all(fdio_pwrite_fn pw, int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write_at(pw, fd, (const char *)buf + done, n - done,
				     off == AT_POSITION ? off : off + done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

int fdio_read_all(int fd, void *buf, size_t n, size_t *got)
{
	return fdio_pread_all(NULL, fd, buf, n, AT_POSITION, got);
}

int fdio_write_all(int fd, const void *buf, size_t n)
{
	return fdio_pwrite_all(NULL, fd, buf, n, AT_POSITION);
}

/* buf into a new temporary file beside path, synced, its name in tmp. */
static int write_tmp(const char *path, const void *buf, size_t n, unsigned mode, char *tmp,
		     size_t tmplen)
{
	int fd = -1, rc;

	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -EIO;
		if (snprintf(tmp, tmplen, "%s.tmp-%08x", path, (unsigned)r) >= (int)tmplen)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* (fchmod: the mode asked, whatever the umask took away) */
	rc = fchmod(fd, (mode_t)mode) < 0 ? -errno : fdio_write_all(fd, buf, n);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Sync the directory that holds path. */
static int sync_parent(const char *path)
{
	char dir[FDIO_PATH_MAX];
	char *slash;
	int fd, rc = 0;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';            /* (a file in /) */
	else if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* tmp to path; noreplace: only where nothing is. */
static int place(const char *tmp, const char *path, bool noreplace)
{
	if (!noreplace)
		return rename(tmp, path) < 0 ? -errno : 0;
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* (a file system without RENAME_NOREPLACE: link fails on any name
	 * that exists, and follows no symbolic link) */
	if (link(tmp, path) < 0)
		return -errno;
	(void)unlink(tmp);              /* (placed: a stray name at worst) */
	return 0;
}

static int write_whole(const char *path, const void *buf, size_t n, unsigned mode, bool noreplace)
{
	char tmp[FDIO_PATH_MAX + 16];
	struct stat st;
	int rc;

	if (noreplace && lstat(path, &st) == 0)
		return -EEXIST;                 /* (before the work; place checks again) */
	rc = write_tmp(path, buf, n, mode, tmp, sizeof(tmp));
	if (rc)
		return rc;
	rc = place(tmp, path, noreplace);
	if (rc) {
		unlink(tmp);
		return rc;
	}
	return sync_parent(path);
}

int fdio_write_file(const char *path, const void *buf, size_t n, unsigned mode)
{
	return write_whole(path, buf, n, mode, false);
}

int fdio_write_new(const char *path, const void *buf, size_t n, unsigned mode)
{
	return write_whole(path, buf, n, mode, true);
}

int fdio_read_file(const char *path, void *buf, size_t cap, size_t *got)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char more;
	size_t extra = 0;
	int rc;

	*got = 0;
	if (fd < 0)
		return -errno;
	rc = fdio_read_all(fd, buf, cap, got);
	if (!rc && *got == cap)
		rc = fdio_read_all(fd, &more, 1, &extra);
	close(fd);
	return rc ? rc : extra ? -EFBIG : 0;
}

int fdio_dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return -errno;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}
