/* bstream.c - byte-stream files and their I/O ops table (see bstream.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/parse.h"
#include "store/bstream.h"

static int sys_fdatasync(int fd) { return fdatasync(fd); }
static int sys_fsync(int fd) { return fsync(fd); }

struct bstream_ops bstream_ops = { pread, pwrite, sys_fdatasync, sys_fsync };

void bstream_ops_reset(void)
{
	bstream_ops.pread = pread;
	bstream_ops.pwrite = pwrite;
	bstream_ops.fdatasync = sys_fdatasync;
	bstream_ops.fsync = sys_fsync;
}

int bstream_path(const char *datadir, struct ofs_oid oid, char *buf, size_t len)
{
	char hex[OFS_OID_HEX];
	int r;

	oid_to_hex(oid, hex);
	r = snprintf(buf, len, "%s/bstreams/%.2s/%.2s/%s", datadir, hex, hex + 2, hex);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (bstream_ops.fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* mkdir (0700, the data dir's alone) that tolerates an existing folder;
 * a new one is made durable by syncing its parent. */
static int ensure_dir(const char *path, const char *parent)
{
	int rc;

	if (mkdir(path, 0700) < 0)
		return errno == EEXIST ? 0 : -errno;
	rc = sync_dir(parent);
	if (rc)
		rmdir(path);    /* so that the next create makes and syncs it again */
	return rc;
}

int bstream_create(const char *datadir, struct ofs_oid oid)
{
	char p[BSTREAM_PATH_MAX], d1[BSTREAM_PATH_MAX], d2[BSTREAM_PATH_MAX], top[BSTREAM_PATH_MAX];
	char hex[OFS_OID_HEX];
	int fd, rc;

	oid_to_hex(oid, hex);
	if (snprintf(top, sizeof(top), "%s/bstreams", datadir) >= (int)sizeof(top) ||
	    snprintf(d1, sizeof(d1), "%s/%.2s", top, hex) >= (int)sizeof(d1) ||
	    snprintf(d2, sizeof(d2), "%s/%.2s", d1, hex + 2) >= (int)sizeof(d2))
		return -ENAMETOOLONG;
	rc = bstream_path(datadir, oid, p, sizeof(p));
	if (rc)
		return rc;
	if ((rc = ensure_dir(d1, top)) || (rc = ensure_dir(d2, d1)))
		return rc;
	fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (bstream_ops.fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc)
		rc = sync_dir(d2);
	if (rc)
		unlink(p);
	return rc;
}

int bstream_remove(const char *datadir, struct ofs_oid oid)
{
	char p[BSTREAM_PATH_MAX];
	char *slash;
	int rc = bstream_path(datadir, oid, p, sizeof(p));

	if (rc)
		return rc;
	if (unlink(p) < 0)
		return errno == ENOENT ? 0 : -errno;
	slash = strrchr(p, '/');
	*slash = '\0';
	return sync_dir(p);
}

int bstream_open(const char *datadir, struct ofs_oid oid, int rw, int *fd)
{
	char p[BSTREAM_PATH_MAX];
	int rc = bstream_path(datadir, oid, p, sizeof(p));
	int f;

	if (rc)
		return rc;
	f = open(p, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (f < 0)
		return -errno;
	*fd = f;
	return 0;
}

int bstream_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	return fdio_pread_all(bstream_ops.pread, fd, buf, n, off, got);
}

int bstream_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	return fdio_pwrite_all(bstream_ops.pwrite, fd, buf, n, off);
}

void bstream_writeback(int fd, uint64_t off, uint64_t len)
{
	/* Advice only, like prefetch: the durable sync comes later. */
	(void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

void bstream_prefetch(int fd, uint64_t off, uint64_t len)
{
	/* Advice only: a failure costs nothing but speed. */
	(void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
}

void bstream_sequential(int fd)
{
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

int bstream_trim(int fd, uint64_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size <= len)
		return 0;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

int bstream_datasync(int fd)
{
	return bstream_ops.fdatasync(fd) < 0 ? -errno : 0;
}

/* ---- incoming copies and quarantine (repair, move) ------------------- */

static int sub_path(const char *datadir, const char *sub, struct ofs_oid oid, char *buf,
		    size_t len)
{
	char hex[OFS_OID_HEX];
	int r;

	oid_to_hex(oid, hex);
	r = snprintf(buf, len, "%s/%s/%s", datadir, sub, hex);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

int bstream_incoming_path(const char *datadir, struct ofs_oid oid, char *buf, size_t len)
{
	return sub_path(datadir, "incoming", oid, buf, len);
}

int bstream_incoming_create(const char *datadir, struct ofs_oid oid, int *fd)
{
	char dir[BSTREAM_PATH_MAX], p[BSTREAM_PATH_MAX];
	int rc, f;

	if (snprintf(dir, sizeof(dir), "%s/incoming", datadir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	rc = bstream_incoming_path(datadir, oid, p, sizeof(p));
	if (rc || (rc = ensure_dir(dir, datadir)))
		return rc;
	f = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f < 0)
		return errno == EEXIST ? -EBUSY : -errno;   /* a fetch of it is running */
	*fd = f;
	return 0;
}

int bstream_incoming_sync(const char *datadir)
{
	char dir[BSTREAM_PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s/incoming", datadir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	return sync_dir(dir);
}

int bstream_install(const char *datadir, struct ofs_oid oid)
{
	char p[BSTREAM_PATH_MAX], in[BSTREAM_PATH_MAX], d1[BSTREAM_PATH_MAX], d2[BSTREAM_PATH_MAX],
		top[BSTREAM_PATH_MAX], hex[OFS_OID_HEX];
	int rc;

	oid_to_hex(oid, hex);
	if (snprintf(top, sizeof(top), "%s/bstreams", datadir) >= (int)sizeof(top) ||
	    snprintf(d1, sizeof(d1), "%s/%.2s", top, hex) >= (int)sizeof(d1) ||
	    snprintf(d2, sizeof(d2), "%s/%.2s", d1, hex + 2) >= (int)sizeof(d2))
		return -ENAMETOOLONG;
	if ((rc = bstream_path(datadir, oid, p, sizeof(p))) ||
	    (rc = bstream_incoming_path(datadir, oid, in, sizeof(in))))
		return rc;
	if ((rc = ensure_dir(d1, top)) || (rc = ensure_dir(d2, d1)))
		return rc;
	if (rename(in, p) < 0)
		return -errno;
	rc = sync_dir(d2);
	if (!rc)
		rc = bstream_incoming_sync(datadir);
	return rc;
}

int bstream_incoming_drop(const char *datadir, struct ofs_oid oid)
{
	char p[BSTREAM_PATH_MAX];
	int rc = bstream_incoming_path(datadir, oid, p, sizeof(p));

	if (rc)
		return rc;
	if (unlink(p) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

int bstream_incoming_list(const char *datadir, int (*fn)(struct ofs_oid oid, void *arg),
			  void *arg)
{
	char dir[BSTREAM_PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (snprintf(dir, sizeof(dir), "%s/incoming", datadir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && (e = readdir(d)) != NULL) {
		struct ofs_oid oid;
		if (bstream_incoming_name_decode(e->d_name, &oid) == 0)
			rc = fn(oid, arg);
	}
	closedir(d);
	return rc;
}

/* Keep oid's bytes under a fresh name in DATA/quarantine: the stream
 * linked there (b NULL), or b written to a new file and synced. */
static int quarantine(const char *datadir, struct ofs_oid oid, uint64_t version,
		      const char *tag, const void *b, size_t n)
{
	char p[BSTREAM_PATH_MAX], q[BSTREAM_PATH_MAX], dir[BSTREAM_PATH_MAX], rest[NAME_MAX + 1];
	long long now = (long long)time(NULL);
	int rc, fd = -1;

	if (snprintf(dir, sizeof(dir), "%s/quarantine", datadir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	rc = bstream_path(datadir, oid, p, sizeof(p));
	if (rc || (rc = ensure_dir(dir, datadir)))
		return rc;
	for (int i = 0;; i++) {
		struct bstream_qname qn = { .oid = oid, .seconds = now, .version = version,
					    .rest = rest };
		char name[NAME_MAX + 1];
		int r = i ? snprintf(rest, sizeof(rest), "%s.%d", tag, i)
			  : snprintf(rest, sizeof(rest), "%s", tag);
		if (r < 0 || (size_t)r >= sizeof(rest))
			return -ENAMETOOLONG;
		if ((rc = bstream_quarantine_name(&qn, name, sizeof(name))) != 0)
			return rc;
		if (snprintf(q, sizeof(q), "%s/%s", dir, name) >= (int)sizeof(q))
			return -ENAMETOOLONG;
		if (b ? (fd = open(q, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) >= 0
		      : link(p, q) == 0)
			break;
		if (!b && errno == ENOENT)
			return 0;            /* no stream: nothing to keep */
		if (errno != EEXIST || i > 100)
			return -errno;
	}
	if (b) {
		rc = bstream_pwrite(fd, b, n, 0);
		if (!rc)
			rc = bstream_ops.fsync(fd) < 0 ? -errno : 0;
		if (close(fd) < 0 && !rc)
			rc = -errno;
		if (rc)
			return rc;
	}
	return sync_dir(dir);
}

int bstream_quarantine(const char *datadir, struct ofs_oid oid, uint64_t version,
		       const char *tag)
{
	return quarantine(datadir, oid, version, tag, NULL, 0);
}

int bstream_quarantine_bytes(const char *datadir, struct ofs_oid oid, uint64_t version,
			     const char *tag, const void *b, size_t n)
{
	return quarantine(datadir, oid, version, tag, b ? b : "", n);
}

int bstream_quarantine_purge(const char *datadir, long long max_age_s, unsigned *purged)
{
	char dir[BSTREAM_PATH_MAX], p[BSTREAM_PATH_MAX];
	long long now = (long long)time(NULL);
	struct dirent *e;
	DIR *d;

	*purged = 0;
	if (snprintf(dir, sizeof(dir), "%s/quarantine", datadir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		struct bstream_qname qn;
		/* (seconds in [0, now] first: now - seconds may not overflow) */
		if (bstream_quarantine_name_decode(e->d_name, &qn) || qn.seconds > now ||
		    now - qn.seconds < max_age_s)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (unlink(p) == 0)
			(*purged)++;
	}
	closedir(d);
	return 0;
}

/* ---- the names in incoming/ and quarantine/ ------------------------------ */

int bstream_incoming_name_decode(const char *name, struct ofs_oid *oid)
{
	struct ofs_oid o = { .b = { 0 } };

	if (strlen(name) != 2 * OFS_OID_LEN || parse_hex_lower(name, OFS_OID_LEN, o.b))
		return -EINVAL;
	*oid = o;
	return 0;
}

/* Decimal digits at *p up to a '.', without sign or leading zero, at most
 * max; *p moves past the '.'. */
static int name_number(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] != '.'))
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (*s != '.')
		return -EINVAL;
	*p = s + 1;
	*out = v;
	return 0;
}

int bstream_quarantine_name_decode(const char *name, struct bstream_qname *q)
{
	struct bstream_qname t = { .rest = NULL };
	const char *p = name + 2 * OFS_OID_LEN + 1;
	uint64_t secs;

	if (strnlen(name, 2 * OFS_OID_LEN + 1) != 2 * OFS_OID_LEN + 1 ||
	    name[2 * OFS_OID_LEN] != '.' || parse_hex_lower(name, OFS_OID_LEN, t.oid.b))
		return -EINVAL;
	if (name_number(&p, LLONG_MAX, &secs) || *p++ != 'v' ||
	    name_number(&p, UINT64_MAX, &t.version) || !*p || strchr(p, '/'))
		return -EINVAL;
	t.seconds = (long long)secs;
	t.rest = p;
	*q = t;
	return 0;
}

int bstream_quarantine_name(const struct bstream_qname *q, char *buf, size_t len)
{
	char hex[OFS_OID_HEX];
	int r;

	if (q->seconds < 0 || !q->rest[0] || strchr(q->rest, '/'))
		return -EINVAL;
	oid_to_hex(q->oid, hex);
	r = snprintf(buf, len, "%s.%lld.v%llu.%s", hex, q->seconds,
		     (unsigned long long)q->version, q->rest);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}
