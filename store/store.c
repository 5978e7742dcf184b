/*
 * store.c - the storage engine: init, open and close of a data dir, the
 * namespace root, the server table and statistics, and the record helpers
 * the other parts share (see store.h; the parts: store_impl.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/removed.h"
#include "store/replaced.h"
#include "store/store.h"
#include "store/store_impl.h"

/* DATA/format (docs/design.md, "On disk"): 1, every chunk inside a
 * dfile's size has a digest record; 2, a chunk may be a hole (none). A
 * store is made at 1 and moves to 2 before its first hole is recorded, so
 * that a release that knows only 1 refuses it (OFS_EVERSION) rather than
 * read a hole as a corrupt chunk; this one reads both. */
#define STORE_FORMAT "ofs-data 1\n"
#define STORE_FORMAT_HOLES "ofs-data 2\n"

_Static_assert(STORE_MAX_ATTRS == REC_MAX_ATTRS && STORE_ATTR_MAX == REC_ATTR_LEN,
	       "the site attributes as stored (records.h) are the store's");

int64_t st_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The digests of whole zero chunks, one per power-of-two chunk size,
 * made once (docs/design.md, "Holes"). */
static pthread_mutex_t zero_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ofs_digest zero_d[32];
static bool zero_known[32];

struct ofs_digest st_zero_digest(uint32_t cs)
{
	static const uint8_t zeros[64 << 10];
	struct ofs_digest d;
	unsigned lg = 0;

	while (lg < 31 && ((uint32_t)1 << lg) < cs)
		lg++;
	pthread_mutex_lock(&zero_mu);
	if (((uint32_t)1 << lg) != cs) {
		pthread_mutex_unlock(&zero_mu);
		memset(&d, 0, sizeof(d));         /* (no chunk size: matches no record) */
		return d;
	}
	if (!zero_known[lg]) {
		struct checksum_stream *z = checksum_stream_new();
		if (!z) {
			pthread_mutex_unlock(&zero_mu);
			return checksum_buf(NULL, 0);   /* (matches no whole chunk: nothing skipped) */
		}
		for (uint32_t done = 0; done < cs; done += sizeof(zeros))
			checksum_stream_update(z, zeros, cs - done < sizeof(zeros) ? cs - done : sizeof(zeros));
		zero_d[lg] = checksum_stream_final(z);
		checksum_stream_free(z);
		zero_known[lg] = true;
	}
	d = zero_d[lg];
	pthread_mutex_unlock(&zero_mu);
	return d;
}

int st_allow_holes(struct store *s)
{
	char path[BSTREAM_PATH_MAX];
	int rc = 0;

	if (atomic_load(&s->holes))
		return 0;
	pthread_mutex_lock(&s->holes_mu);
	if (!atomic_load(&s->holes)) {
		if (snprintf(path, sizeof(path), "%s/format", s->datadir) >= (int)sizeof(path))
			rc = -ENAMETOOLONG;
		else
			rc = fdio_write_file(path, STORE_FORMAT_HOLES, strlen(STORE_FORMAT_HOLES), 0600);
		if (!rc)
			atomic_store(&s->holes, true);
	}
	pthread_mutex_unlock(&s->holes_mu);
	return rc;
}

bool st_zero_chunk_record(const void *v, size_t vn)
{
	if (vn != OFS_DIGEST_LEN)
		return false;
	for (uint32_t cs = STORE_MIN_CHUNK; cs && cs <= STORE_MAX_CHUNK; cs <<= 1) {
		struct ofs_digest z = st_zero_digest(cs);
		if (memcmp(z.b, v, OFS_DIGEST_LEN) == 0)
			return true;
	}
	return false;
}

bool st_is_hole(const struct ofs_digest *d)
{
	static const struct ofs_digest none;

	return memcmp(d->b, none.b, sizeof(none.b)) == 0;
}

bool st_chunk_ok(const uint8_t *b, size_t n, const struct ofs_digest *d)
{
	if (st_is_hole(d)) {
		for (size_t i = 0; i < n; i++)
			if (b[i])
				return false;
		return true;
	}
	return digest_eq(checksum_buf(b, n), *d);
}

pthread_rwlock_t *st_obj_lock(struct store *s, struct ofs_oid oid)
{
	return &s->locks[oid_hash(oid) % STORE_NLOCKS];
}

/* ---- records in a transaction ---------------------------------------- */

int st_get_object(struct kv_txn *t, struct ofs_oid oid, struct ofs_attr *a)
{
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_OBJECTS, oid.b, sizeof(oid.b), &v, &vn);

	if (rc)
		return rc;
	return rec_decode_object(v, vn, a);
}

int st_put_object(struct kv_txn *t, struct ofs_oid oid, const struct ofs_attr *a)
{
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	rc = rec_encode_object(&w, a);
	if (!rc)
		rc = kv_put(t, KV_OBJECTS, oid.b, sizeof(oid.b), w.data, w.len);
	wbuf_free(&w);
	return rc;
}

static int put_meta(struct kv_txn *t, const char *key, const void *v, size_t vn)
{
	return kv_put(t, KV_META, key, strlen(key), v, vn);
}

/* ---- init and open --------------------------------------------------- */

struct init_args {
	struct ofs_sid sid;
	uint32_t chunk_size;
	const char *const *attrs;
	size_t nattrs;
};

/* The server's own records. The namespace root is not made here: the
 * first client of a cluster makes it, replicated across the servers it
 * has then (client/ofs_client.c), and every server learns it
 * (store_adopt_root). */
static int init_txn(struct kv_txn *t, void *arg)
{
	struct init_args *ia = arg;
	struct wbuf w;
	uint8_t cs[4];
	int rc;

	wbuf_init(&w);
	cs[0] = (uint8_t)(ia->chunk_size >> 24);
	cs[1] = (uint8_t)(ia->chunk_size >> 16);
	cs[2] = (uint8_t)(ia->chunk_size >> 8);
	cs[3] = (uint8_t)ia->chunk_size;
	rc = rec_encode_attrs(&w, ia->attrs, ia->nattrs);
	if (!rc && !(rc = put_meta(t, "sid", ia->sid.b, sizeof(ia->sid.b))) &&
	    !(rc = put_meta(t, "chunk_size", cs, sizeof(cs))))
		rc = put_meta(t, "attrs", w.data, w.len);
	wbuf_free(&w);
	return rc;
}

int store_init(const char *datadir, uint32_t chunk_size, const char *const *attrs,
	       size_t nattrs, struct ofs_sid *sid)
{
	char path[BSTREAM_PATH_MAX];
	struct init_args ia;
	struct kv *kv = NULL;
	int rc;

	if (!st_is_pow2(chunk_size) || chunk_size < STORE_MIN_CHUNK || chunk_size > STORE_MAX_CHUNK)
		return -EINVAL;
	if (nattrs > STORE_MAX_ATTRS)
		return -EINVAL;
	for (size_t i = 0; i < nattrs; i++)
		if (!rec_attr_valid(attrs[i]))
			return -EINVAL;
	if (mkdir(datadir, 0700) < 0) {
		if (errno != EEXIST)
			return -errno;
		rc = fdio_dir_is_empty(datadir);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return -EEXIST;
		if (chmod(datadir, 0700) < 0)     /* (an empty one made by hand) */
			return -errno;
	}
	memset(&ia, 0, sizeof(ia));
	ia.chunk_size = chunk_size;
	ia.attrs = attrs;
	ia.nattrs = nattrs;
	if ((rc = sid_generate(&ia.sid)))
		return rc;
	if (snprintf(path, sizeof(path), "%s/bstreams", datadir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (snprintf(path, sizeof(path), "%s/kv", datadir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = kv_open(path, true, false, &kv);
	if (rc)
		return rc;
	rc = kv_update(kv, init_txn, &ia);
	kv_close(kv);
	if (rc)
		return rc;
	/* The format file is written last: its presence means "complete". */
	if (snprintf(path, sizeof(path), "%s/format", datadir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = fdio_write_new(path, STORE_FORMAT, strlen(STORE_FORMAT), 0600);
	if (rc)
		return rc;
	*sid = ia.sid;
	return 0;
}

/* The directory path, when it grants group or others anything: -EPERM,
 * with why. */
static int mode_ok(const char *path, const char *datadir, char *why, size_t whylen)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!(st.st_mode & 077))
		return 0;
	snprintf(why, whylen, "%s: group or others may read, write or enter it (mode %04o), and "
		 "a data directory is its server's alone: run 'chmod -R go-rwx %s'", path,
		 (unsigned)(st.st_mode & 07777), datadir);
	return -EPERM;
}

int store_check_modes(const char *datadir, char *why, size_t whylen)
{
	char path[BSTREAM_PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = mode_ok(datadir, datadir, why, whylen);

	if (rc)
		return rc;
	d = opendir(datadir);
	if (!d)
		return -errno;
	while (!rc && (e = readdir(d)) != NULL) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", datadir, e->d_name) >= (int)sizeof(path))
			rc = -ENAMETOOLONG;
		else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = mode_ok(path, datadir, why, whylen);
	}
	closedir(d);
	return rc;
}

static int load_meta(struct kv_txn *t, void *arg)
{
	char attrs[REC_MAX_ATTRS][REC_ATTR_LEN];
	struct store *s = arg;
	const void *v;
	size_t vn, n;
	struct rbuf r;
	int rc;

	rc = kv_get(t, KV_META, "sid", 3, &v, &vn);
	if (rc)
		return rc == -ENOENT ? -OFS_ECORRUPT : rc;
	if (vn != sizeof(s->sid.b))
		return -OFS_ECORRUPT;
	memcpy(s->sid.b, v, vn);
	rc = kv_get(t, KV_META, "chunk_size", 10, &v, &vn);
	if (rc)
		return rc == -ENOENT ? -OFS_ECORRUPT : rc;
	rbuf_init(&r, v, vn);
	s->chunk_size = rbuf_u32(&r);
	if (rbuf_done(&r) || !st_is_pow2(s->chunk_size) || s->chunk_size < STORE_MIN_CHUNK ||
	    s->chunk_size > STORE_MAX_CHUNK)
		return -OFS_ECORRUPT;
	rc = kv_get(t, KV_META, "attrs", 5, &v, &vn);
	if (rc)
		return rc == -ENOENT ? -OFS_ECORRUPT : rc;
	if ((rc = rec_decode_attrs(v, vn, attrs, &n)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		s->attrs[i] = strdup(attrs[i]);
		if (!s->attrs[i])
			return -ENOMEM;
		s->nattrs = i + 1;
	}
	return 0;
}

static int any_behind_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct store *s = arg;

	(void)v; (void)vn;
	if (kn == OFS_OID_LEN * 2 && memcmp((const uint8_t *)k + OFS_OID_LEN, s->sid.b, OFS_OID_LEN) == 0) {
		atomic_store(&s->behind_any, true);
		return 1;
	}
	return 0;
}

/* Whether any copy here is marked behind (a full scan of KV_STALE, which
 * holds only the few copies that missed a change). */
static int find_behind_txn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_STALE, NULL, 0, NULL, 0, any_behind_scan, arg);
}

int store_open(const char *datadir, bool read_only, struct store **out)
{
	char path[BSTREAM_PATH_MAX], fmt[64];
	struct store *s;
	ssize_t n;
	int fd, rc;

	rc = store_check_modes(datadir, path, sizeof(path));
	if (rc)
		return rc;
	if (snprintf(path, sizeof(path), "%s/format", datadir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, fmt, sizeof(fmt) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	fmt[n] = '\0';
	if (strncmp(fmt, "ofs-data ", 9) != 0)
		return -OFS_ECORRUPT;
	if (strcmp(fmt, STORE_FORMAT) != 0 && strcmp(fmt, STORE_FORMAT_HOLES) != 0)
		return -OFS_EVERSION;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = -1;
	s->read_only = read_only;
	s->holes = strcmp(fmt, STORE_FORMAT_HOLES) == 0;
	pthread_mutex_init(&s->holes_mu, NULL);
	s->inline_max = STORE_INLINE_DEFAULT;
	for (int i = 0; i < STORE_NLOCKS; i++)
		pthread_rwlock_init(&s->locks[i], NULL);
	pthread_mutex_init(&s->pend_mu, NULL);
	s->pend = calloc(STORE_MAX_PENDING, sizeof(*s->pend));
	s->replaced = replaced_new();
	s->removed = removed_new();
	if (!s->pend || !s->replaced || !s->removed) {
		rc = -ENOMEM;
		goto fail;
	}
	s->datadir = strdup(datadir);
	if (!s->datadir) {
		rc = -ENOMEM;
		goto fail;
	}
	if (!read_only) {
		snprintf(path, sizeof(path), "%s/lock", datadir);
		s->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (s->lock_fd < 0) {
			rc = -errno;
			goto fail;
		}
		if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
			rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
			goto fail;
		}
	}
	snprintf(path, sizeof(path), "%s/kv", datadir);
	rc = kv_open(path, false, read_only, &s->kv);
	if (rc)
		goto fail;
	rc = kv_view(s->kv, load_meta, s);
	if (rc)
		goto fail;
	rc = kv_view(s->kv, find_behind_txn, s);
	if (rc == -ENOENT || rc == -EINVAL)
		rc = 0;   /* (a read-only open of an old data dir: no KV_STALE) */
	if (!rc && !read_only)
		rc = st_recover(s);
	if (rc)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return rc;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	kv_close(s->kv);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	for (size_t i = 0; i < s->nattrs; i++)
		free(s->attrs[i]);
	for (int i = 0; i < STORE_NLOCKS; i++)
		pthread_rwlock_destroy(&s->locks[i]);
	for (int i = 0; s->pend && i < STORE_MAX_PENDING; i++) {
		free(s->pend[i].d);
		free(s->pend[i].known);
		free(s->pend[i].inl);
	}
	free(s->pend);
	replaced_free(s->replaced);
	removed_free(s->removed);
	pthread_mutex_destroy(&s->pend_mu);
	pthread_mutex_destroy(&s->holes_mu);
	free(s->datadir);
	free(s);
}

bool store_stalled(struct store *s)
{
	return kv_busy_ms(s->kv) > STORE_STALL_MS;
}

bool store_down(struct store *s)
{
	return atomic_load(&s->held) || store_stalled(s);
}

void store_hold(struct store *s, bool held)
{
	atomic_store(&s->held, held);
}

struct ofs_sid store_sid(const struct store *s) { return s->sid; }
uint32_t store_chunk_size(const struct store *s) { return s->chunk_size; }
const char *store_datadir(const struct store *s) { return s->datadir; }

size_t store_attrs(const struct store *s, const char *const **attrs)
{
	*attrs = (const char *const *)s->attrs;
	return s->nattrs;
}

static int root_txn(struct kv_txn *t, void *arg)
{
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_META, "root", 4, &v, &vn);

	if (rc)
		return rc;
	return proto_decode_handle_reply(v, vn, arg) ? -OFS_ECORRUPT : 0;
}

static int root_birth_txn(struct kv_txn *t, void *arg)
{
	const void *v;
	size_t vn;
	struct rbuf r;
	int rc = kv_get(t, KV_META, "root_birth", 10, &v, &vn);

	if (rc)
		return rc;
	rbuf_init(&r, v, vn);
	*(int64_t *)arg = rbuf_i64(&r);
	return rbuf_done(&r) ? -OFS_ECORRUPT : 0;
}

int store_root_info(struct store *s, struct ofs_handle *h, int64_t *birth_ns)
{
	struct ofs_handle t;
	struct ofs_attr *a;
	int64_t birth = 0;
	int rc = kv_view(s->kv, root_txn, &t);

	if (rc)
		return rc;
	rc = kv_view(s->kv, root_birth_txn, &birth);
	if (rc == -ENOENT) {
		/* Made by init on this server: its creation time. */
		a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		rc = store_getattr(s, t.oid, a);
		if (!rc)
			birth = a->ctime_ns;
		free(a);
	}
	if (rc)
		return rc;
	*h = t;
	*birth_ns = birth;
	return 0;
}

struct adopt_args {
	const struct ofs_handle *h;
	int64_t birth;
};

static int adopt_txn(struct kv_txn *t, void *arg)
{
	struct adopt_args *aa = arg;
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	wbuf_handle(&w, aa->h);
	rc = wbuf_error(&w);
	if (!rc)
		rc = put_meta(t, "root", w.data, w.len);
	w.len = 0;
	wbuf_i64(&w, aa->birth);
	if (!rc)
		rc = wbuf_error(&w);
	if (!rc)
		rc = put_meta(t, "root_birth", w.data, w.len);
	wbuf_free(&w);
	return rc;
}

static int any_entry(const char *name, const struct ofs_dirent *d, void *arg)
{
	(void)name;
	(void)d;
	*(bool *)arg = true;
	return 1;
}

int store_adopt_root(struct store *s, const struct ofs_handle *h, int64_t birth_ns)
{
	struct adopt_args aa = { .h = h, .birth = birth_ns };
	struct ofs_handle old;
	struct ofs_attr *a = malloc(sizeof(*a));
	bool local = false, any = false, more = false;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_root(s, &old);
	if (rc == -ENOENT) {
		rc = 0;                   /* no root yet: nothing to give up */
		memset(&old, 0, sizeof(old));
	}
	if (rc)
		goto out;
	if (!oid_is_zero(old.oid) && !oid_eq(old.oid, h->oid) &&
	    store_getattr(s, old.oid, a) == 0 && a->type == OFS_OBJ_DIRECTORY) {
		local = true;
		for (uint16_t i = 0; i < a->nparts && !any && !rc; i++)
			rc = store_dirent_list(s, a->parts[i].oid, NULL, 1, any_entry, &any, &more);
		if (!rc && any)
			rc = -ENOTEMPTY;
	}
	if (!rc)
		rc = kv_update(s->kv, adopt_txn, &aa);
	if (!rc && local) {
		for (uint16_t i = 0; i < a->nparts; i++)
			store_remove(s, a->parts[i].oid);
		store_remove(s, old.oid);
	}
out:
	free(a);
	return rc;
}

int store_root(struct store *s, struct ofs_handle *h)
{
	struct ofs_handle t;
	int rc = kv_view(s->kv, root_txn, &t);

	if (!rc)
		*h = t;
	return rc;
}


/* ---- the server table and statistics ------------------------------------ */

struct server_put_args {
	const struct ofs_server *e;
};

static int server_put_txn(struct kv_txn *t, void *arg)
{
	struct server_put_args *sp = arg;
	struct ofs_server copy = *sp->e;
	struct wbuf w;
	int rc;

	copy.last_seen_ns = 0;        /* an observation, not table state */
	wbuf_init(&w);
	rc = rec_encode_server(&w, &copy);
	if (!rc)
		rc = kv_put(t, KV_SERVERS, copy.sid.b, sizeof(copy.sid.b), w.data, w.len);
	wbuf_free(&w);
	return rc;
}

int store_server_put(struct store *s, const struct ofs_server *e)
{
	struct server_put_args sp = { .e = e };

	if (s->read_only)
		return -EROFS;
	return kv_update(s->kv, server_put_txn, &sp);
}

struct servers_args {
	store_server_fn fn;
	void *arg;
};

static int servers_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct servers_args *sa = arg;
	struct ofs_server *e = malloc(sizeof(*e));
	int rc;

	(void)k;
	(void)kn;
	if (!e)
		return -ENOMEM;
	rc = rec_decode_server(v, vn, e);
	if (!rc)
		rc = sa->fn(e, sa->arg);
	free(e);
	return rc;
}

static int servers_txn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_SERVERS, NULL, 0, NULL, 0, servers_scan, arg);
}

int store_servers(struct store *s, store_server_fn fn, void *arg)
{
	struct servers_args sa = { .fn = fn, .arg = arg };

	return kv_view(s->kv, servers_txn, &sa);
}

struct stats_args {
	struct ofs_stats st;
	struct ofs_attr *a;
};

static int stats_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct stats_args *sa = arg;

	(void)k;
	(void)kn;
	sa->st.objects++;
	if (rec_decode_object(v, vn, sa->a) != 0)
		return 0;
	if (sa->a->type == OFS_OBJ_DFILE)
		sa->st.bytes += sa->a->size;
	if (sa->a->nsids > sa->st.max_copies)
		sa->st.max_copies = sa->a->nsids;
	return 0;
}

static int stats_txn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_OBJECTS, NULL, 0, NULL, 0, stats_scan, arg);
}

void store_set_capacity(struct store *s, uint64_t bytes)
{
	s->capacity = bytes;
}

static int count_txn(struct kv_txn *t, void *arg)
{
	size_t n;
	int rc = kv_count(t, KV_OBJECTS, &n);

	*(uint64_t *)arg = n;
	return rc;
}

int store_count_objects(struct store *s, uint64_t *n)
{
	return kv_view(s->kv, count_txn, n);
}

int store_stats(struct store *s, struct ofs_stats *st)
{
	struct stats_args sa = { .a = malloc(sizeof(struct ofs_attr)) };
	int rc;

	if (!sa.a)
		return -ENOMEM;
	rc = kv_view(s->kv, stats_txn, &sa);
	if (!rc) {
		struct statvfs vfs;
		if (statvfs(s->datadir, &vfs) == 0) {
			sa.st.avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
			sa.st.capacity = (uint64_t)vfs.f_blocks * vfs.f_frsize;
		}
		if (s->capacity) {
			uint64_t left = s->capacity > sa.st.bytes ? s->capacity - sa.st.bytes : 0;
			sa.st.capacity = s->capacity;
			if (left < sa.st.avail)
				sa.st.avail = left;
		}
		*st = sa.st;
	}
	free(sa.a);
	return rc;
}
