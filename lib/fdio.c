/* fdio.c - whole reads and writes on a file descriptor (see fdio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"

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

int fdio_write_file(const char *path, const void *buf, size_t n, unsigned mode)
{
	char tmp[4200], dir[4096];
	char *slash;
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
	if (fd < 0)
		return -errno;
	rc = fchmod(fd, (mode_t)mode) < 0 ? -errno : fdio_write_all(fd, buf, n);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
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
