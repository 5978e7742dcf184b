/*
 * store.c - the storage engine (see store.h).
 *
 * Order of durable steps, so that a crash at any instant leaves no record
 * pointing at bytes that do not exist:
 *   create dfile: byte stream created and fsync'd, then its record committed
 *   write:        bytes pwritten and fdatasync'd, then digests, size and
 *                 version committed
 *   remove:       records deleted and committed, then the byte stream
 *                 unlinked (a crash in between leaves an unreferenced file,
 *                 which scrub reports; never a record without bytes)
 * Records are committed through kv_update, which group-commits.
 *
 * Locks: locks[] are per-object reader/writer locks picked by OID hash.
 * Writes and removes of a dfile hold it exclusively, reads shared, so a
 * reader never sees bytes and digests from different writes. No other
 * lock is held while one is taken; kv.c's own lock is taken inside.
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

#include "bstream.h"
#include "changelog.h"
#include "kv.h"
#include "log.h"
#include "ofs_error.h"
#include "records.h"
#include "replaced.h"
#include "store.h"

#define STORE_NLOCKS 1024
#define STORE_PREFETCH_MIN (1u << 20)   /* reads this large prefetch the next */
#define STORE_MAX_PENDING 1024          /* objects with unstable writes */
#define STORE_FORMAT "ofs-data 1\n"

struct store {
	char *datadir;                      /* owned */
	struct kv *kv;
	bool read_only;
	uint64_t capacity;                  /* bytes it may hold; 0: its disk's size */
	int lock_fd;                        /* DATA/lock, flock'd; -1 read-only */
	struct ofs_sid sid;
	uint32_t chunk_size;
	size_t nattrs;
	char *attrs[STORE_MAX_ATTRS];       /* "key=value", owned */
	pthread_rwlock_t locks[STORE_NLOCKS];
	pthread_mutex_t pend_mu;            /* guards which pend[] are in use */
	struct pending *pend;               /* STORE_MAX_PENDING slots */
	atomic_bool behind_any;             /* some copy here is marked behind */
	struct replaced *replaced;          /* recent entry replacements */
};

/*
 * Unstable writes of one dfile not yet committed (see OFS_WRITE_UNSTABLE).
 * A slot is taken and released under store.pend_mu; its contents are
 * read and changed only by a thread holding the object's lock
 * exclusively.
 */
struct pending {
	bool used;
	struct ofs_oid oid;
	uint64_t base;               /* the recorded size when it began */
	uint64_t end;                /* one past the last byte written */
	uint64_t first;              /* chunk index of base */
	size_t cap;                  /* entries in d and known */
	struct ofs_digest *d;        /* digest of chunk first + i */
	bool *known;                 /* d[i] is valid (else read back) */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static pthread_rwlock_t *obj_lock(struct store *s, struct ofs_oid oid)
{
	return &s->locks[oid_hash(oid) % STORE_NLOCKS];
}

static bool is_pow2(uint32_t v)
{
	return v && (v & (v - 1)) == 0;
}

/* ---- records in a transaction ---------------------------------------- */

static int get_object(struct kv_txn *t, struct ofs_oid oid, struct ofs_attr *a)
{
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_OBJECTS, oid.b, sizeof(oid.b), &v, &vn);

	if (rc)
		return rc;
	return rec_decode_object(v, vn, a);
}

static int put_object(struct kv_txn *t, struct ofs_oid oid, const struct ofs_attr *a)
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

static int write_file_durably(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t n = strlen(text);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		rc = errno ? -errno : -EIO;
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

static int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

static bool attr_valid(const char *a)
{
	const char *eq = strchr(a, '=');

	if (!eq || eq == a || strlen(a) >= STORE_ATTR_MAX)
		return false;
	for (const char *c = a; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	return true;
}

struct init_args {
	struct ofs_sid sid;
	uint32_t chunk_size;
	const char *const *attrs;
	size_t nattrs;
};

/* The server's own records. The namespace root is not made here: the
 * first client of a cluster makes it, replicated across the servers it
 * has then (ofs.c), and every server learns it (store_adopt_root). */
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
	wbuf_u16(&w, (uint16_t)ia->nattrs);
	for (size_t i = 0; i < ia->nattrs; i++)
		wbuf_str(&w, ia->attrs[i]);
	rc = wbuf_error(&w);
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

	if (!is_pow2(chunk_size) || chunk_size < STORE_MIN_CHUNK || chunk_size > STORE_MAX_CHUNK)
		return -EINVAL;
	if (nattrs > STORE_MAX_ATTRS)
		return -EINVAL;
	for (size_t i = 0; i < nattrs; i++)
		if (!attr_valid(attrs[i]))
			return -EINVAL;
	if (mkdir(datadir, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		rc = dir_is_empty(datadir);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return -EEXIST;
	}
	memset(&ia, 0, sizeof(ia));
	ia.chunk_size = chunk_size;
	ia.attrs = attrs;
	ia.nattrs = nattrs;
	if ((rc = sid_generate(&ia.sid)))
		return rc;
	if (snprintf(path, sizeof(path), "%s/bstreams", datadir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
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
	rc = write_file_durably(path, STORE_FORMAT);
	if (rc)
		return rc;
	*sid = ia.sid;
	return 0;
}

static int load_meta(struct kv_txn *t, void *arg)
{
	struct store *s = arg;
	const void *v;
	size_t vn;
	struct rbuf r;
	uint16_t n;
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
	if (rbuf_done(&r) || !is_pow2(s->chunk_size) || s->chunk_size < STORE_MIN_CHUNK ||
	    s->chunk_size > STORE_MAX_CHUNK)
		return -OFS_ECORRUPT;
	rc = kv_get(t, KV_META, "attrs", 5, &v, &vn);
	if (rc)
		return rc == -ENOENT ? -OFS_ECORRUPT : rc;
	rbuf_init(&r, v, vn);
	n = rbuf_u16(&r);
	if (n > STORE_MAX_ATTRS)
		return -OFS_ECORRUPT;
	for (uint16_t i = 0; i < n; i++) {
		char a[STORE_ATTR_MAX];
		rbuf_str(&r, a, sizeof(a));
		if (rbuf_error(&r))
			return -OFS_ECORRUPT;
		s->attrs[i] = strdup(a);
		if (!s->attrs[i])
			return -ENOMEM;
		s->nattrs = i + 1u;
	}
	return rbuf_done(&r) ? -OFS_ECORRUPT : 0;
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

static int store_recover(struct store *s);

int store_open(const char *datadir, bool read_only, struct store **out)
{
	char path[BSTREAM_PATH_MAX], fmt[64];
	struct store *s;
	ssize_t n;
	int fd, rc;

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
	if (strcmp(fmt, STORE_FORMAT) != 0)
		return -OFS_EVERSION;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = -1;
	s->read_only = read_only;
	for (int i = 0; i < STORE_NLOCKS; i++)
		pthread_rwlock_init(&s->locks[i], NULL);
	pthread_mutex_init(&s->pend_mu, NULL);
	s->pend = calloc(STORE_MAX_PENDING, sizeof(*s->pend));
	s->replaced = replaced_new();
	if (!s->pend || !s->replaced) {
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
		s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
		rc = store_recover(s);
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
	}
	free(s->pend);
	replaced_free(s->replaced);
	pthread_mutex_destroy(&s->pend_mu);
	free(s->datadir);
	free(s);
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

/* ---- objects ---------------------------------------------------------- */

struct create_args {
	struct ofs_oid oid;
	const struct ofs_attr *a;
};

static int create_txn(struct kv_txn *t, void *arg)
{
	struct create_args *ca = arg;
	const void *v;
	size_t vn;

	if (kv_get(t, KV_OBJECTS, ca->oid.b, sizeof(ca->oid.b), &v, &vn) == 0)
		return -EEXIST;
	return put_object(t, ca->oid, ca->a);
}

static bool layout_valid(const struct ofs_attr *a)
{
	if (a->nparts > OFS_MAX_STRIPES)
		return false;
	for (uint16_t i = 0; i < a->nparts; i++)
		if (a->parts[i].nsids > OFS_MAX_REPLICAS || oid_is_zero(a->parts[i].oid))
			return false;
	if (a->nsids > OFS_MAX_REPLICAS || a->nstale > OFS_MAX_REPLICAS)
		return false;
	if (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA)
		return a->nparts == 0;
	if (a->type == OFS_OBJ_METAFILE && a->replicas > OFS_MAX_REPLICAS)
		return false;
	return true;
}

/* Does oid exist as the create of a would make it, untouched since? */
static bool same_create(struct store *s, struct ofs_oid oid, const struct ofs_attr *a)
{
	struct ofs_attr *have = malloc(sizeof(*have));
	bool same;

	if (!have)
		return false;
	same = store_getattr(s, oid, have) == 0 && have->version == 1 &&
	       have->type == a->type && have->nsids == a->nsids &&
	       !memcmp(have->sids, a->sids, sizeof(a->sids[0]) * a->nsids) &&
	       oid_eq(have->backref.owner, a->backref.owner) &&
	       have->backref.stripe == a->backref.stripe &&
	       !strcmp(have->backref.name, a->backref.name) && have->nparts == a->nparts;
	free(have);
	return same;
}

int store_create(struct store *s, const struct ofs_attr *init, struct ofs_oid *oid)
{
	return store_create_oid(s, init, (struct ofs_oid){ { 0 } }, oid);
}

int store_create_oid(struct store *s, const struct ofs_attr *init, struct ofs_oid want,
		     struct ofs_oid *oid)
{
	struct ofs_attr *a;
	struct create_args ca;
	int64_t now = now_ns();
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_type_valid(init->type) || !layout_valid(init))
		return -EINVAL;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = *init;
	a->version = 1;
	a->ctime_ns = a->mtime_ns = now;
	a->nstale = 0;
	if (a->type == OFS_OBJ_DFILE) {
		a->size = 0;
		a->chunk_size = s->chunk_size;
	} else {
		a->chunk_size = 0;
	}
	if (a->nsids == 0) {
		a->nsids = 1;
		a->sids[0] = s->sid;
	}
	if (oid_is_zero(want)) {
		rc = oid_generate(&ca.oid);
		if (rc)
			goto out;
	} else {
		ca.oid = want;
		if (same_create(s, want, a)) {
			/* Made already by this very create, forwarded by a
			 * primary that died before it answered; the client asks
			 * again here: done. */
			*oid = want;
			rc = 0;
			goto out;
		}
	}
	ca.a = a;
	if (a->type == OFS_OBJ_DFILE) {
		rc = bstream_create(s->datadir, ca.oid);
		if (rc)
			goto out;
	}
	rc = kv_update(s->kv, create_txn, &ca);
	if (rc && a->type == OFS_OBJ_DFILE)
		bstream_remove(s->datadir, ca.oid);
	if (!rc)
		*oid = ca.oid;
out:
	free(a);
	return rc;
}

/* ---- unstable writes ---------------------------------------------------- */

static struct pending *pending_find(struct store *s, struct ofs_oid oid)
{
	struct pending *p = NULL;

	pthread_mutex_lock(&s->pend_mu);
	for (int i = 0; i < STORE_MAX_PENDING && !p; i++)
		if (s->pend[i].used && oid_eq(s->pend[i].oid, oid))
			p = &s->pend[i];
	pthread_mutex_unlock(&s->pend_mu);
	return p;
}

/* A free slot for oid, or NULL when every slot is taken. */
static struct pending *pending_take(struct store *s, struct ofs_oid oid, uint64_t base,
				    uint32_t cs)
{
	struct pending *p = NULL;

	pthread_mutex_lock(&s->pend_mu);
	for (int i = 0; i < STORE_MAX_PENDING && !p; i++)
		if (!s->pend[i].used)
			p = &s->pend[i];
	if (p) {
		p->used = true;
		p->oid = oid;
		p->base = p->end = base;
		p->first = base / cs;
		if (p->cap)
			memset(p->known, 0, p->cap * sizeof(*p->known));
	}
	pthread_mutex_unlock(&s->pend_mu);
	return p;
}

static int commit_locked(struct store *s, struct ofs_oid oid, struct pending *p,
			 uint32_t cs, uint64_t *version, uint64_t *size);

static void pending_drop(struct store *s, struct pending *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&s->pend_mu);
	p->used = false;
	pthread_mutex_unlock(&s->pend_mu);
}

/* Room for chunk index idx. */
static int pending_grow(struct pending *p, uint64_t idx)
{
	size_t need = (size_t)(idx - p->first + 1), cap;
	struct ofs_digest *d;
	bool *k;

	if (need <= p->cap)
		return 0;
	cap = p->cap ? p->cap : 64;
	while (cap < need)
		cap *= 2;
	d = realloc(p->d, cap * sizeof(*d));
	if (!d)
		return -ENOMEM;
	p->d = d;
	k = realloc(p->known, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	memset(k + p->cap, 0, (cap - p->cap) * sizeof(*k));
	p->known = k;
	p->cap = cap;
	return 0;
}

struct remove_args {
	struct ofs_oid oid;
	uint8_t type;          /* out: the removed object's type */
};

static int has_any(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	(void)k; (void)kn; (void)v; (void)vn;
	*(bool *)arg = true;
	return 1;
}

static int remove_txn(struct kv_txn *t, void *arg)
{
	struct remove_args *ra = arg;
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = get_object(t, ra->oid, a);
	if (rc)
		goto out;
	ra->type = a->type;
	if (a->type == OFS_OBJ_DIRDATA) {
		bool any = false;
		rc = kv_scan(t, KV_KEYVAL, ra->oid.b, sizeof(ra->oid.b), NULL, 0, has_any, &any);
		if (rc)
			goto out;
		if (any) {
			rc = -ENOTEMPTY;
			goto out;
		}
	}
	if ((rc = kv_del(t, KV_OBJECTS, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = kv_del_prefix(t, KV_CHUNKS, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = kv_del_prefix(t, KV_STALE, ra->oid.b, sizeof(ra->oid.b))) ||
	    (rc = changelog_forget(t, ra->oid)))
		goto out;
out:
	free(a);
	return rc;
}

int store_remove(struct store *s, struct ofs_oid oid)
{
	struct remove_args ra = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	int rc;

	if (s->read_only)
		return -EROFS;
	pthread_rwlock_wrlock(l);
	rc = kv_update(s->kv, remove_txn, &ra);
	if (!rc && ra.type == OFS_OBJ_DFILE) {
		pending_drop(s, pending_find(s, oid));
		rc = bstream_remove(s->datadir, oid);
	}
	pthread_rwlock_unlock(l);
	return rc;
}

struct move_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	bool drop;                   /* store_drop_copy */
	uint8_t type;
};

static int move_note_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;

	return kv_put(t, KV_MOVES, ma->oid.b, OFS_OID_LEN, ma->sid.b, OFS_OID_LEN);
}

int store_move_note(struct store *s, struct ofs_oid oid, struct ofs_sid target)
{
	struct move_args ma = { .oid = oid, .sid = target };

	if (s->read_only)
		return -EROFS;
	return kv_update(s->kv, move_note_txn, &ma);
}

static int move_get_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_MOVES, ma->oid.b, OFS_OID_LEN, &v, &vn);

	if (rc)
		return rc;
	if (vn != OFS_OID_LEN)
		return -OFS_ECORRUPT;
	memcpy(ma->sid.b, v, OFS_OID_LEN);
	return 0;
}

int store_move_get(struct store *s, struct ofs_oid oid, struct ofs_sid *target)
{
	struct move_args ma = { .oid = oid };
	int rc = kv_view(s->kv, move_get_txn, &ma);

	if (!rc)
		*target = ma.sid;
	return rc;
}

static int drop_txn(struct kv_txn *t, void *arg)
{
	struct move_args *ma = arg;
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = get_object(t, ma->oid, a);
	if (rc == -OFS_ECORRUPT)
		rc = 0;                  /* a record that does not decode goes too */
	else if (!rc)
		ma->type = a->type;
	free(a);
	if (rc)
		return rc;
	if ((rc = kv_del(t, KV_OBJECTS, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_CHUNKS, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_STALE, ma->oid.b, OFS_OID_LEN)) ||
	    (rc = changelog_forget(t, ma->oid)))
		return rc;
	rc = kv_del(t, KV_MOVES, ma->oid.b, OFS_OID_LEN);
	return rc == -ENOENT ? 0 : rc;
}

int store_drop_copy(struct store *s, struct ofs_oid oid)
{
	struct move_args ma = { .oid = oid, .drop = true };
	pthread_rwlock_t *l = obj_lock(s, oid);
	int rc;

	if (s->read_only)
		return -EROFS;
	pthread_rwlock_wrlock(l);
	rc = kv_update(s->kv, drop_txn, &ma);
	if (!rc) {
		/* Any type: a copy whose record was garbled may have bytes too. */
		pending_drop(s, pending_find(s, oid));
		rc = bstream_remove(s->datadir, oid);
		if (rc == -ENOENT)
			rc = 0;
	}
	pthread_rwlock_unlock(l);
	return rc;
}

struct getattr_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
};

static int getattr_txn(struct kv_txn *t, void *arg)
{
	struct getattr_args *ga = arg;

	return get_object(t, ga->oid, ga->a);
}

int store_getattr(struct store *s, struct ofs_oid oid, struct ofs_attr *a)
{
	struct getattr_args ga = { .oid = oid };
	int rc;

	ga.a = malloc(sizeof(*ga.a));
	if (!ga.a)
		return -ENOMEM;
	rc = kv_view(s->kv, getattr_txn, &ga);
	if (!rc)   /* (the parts in use: a whole attr is 5 KB; past nparts unspecified) */
		memcpy(a, ga.a, offsetof(struct ofs_attr, parts) +
				(size_t)ga.a->nparts * sizeof(ga.a->parts[0]));
	free(ga.a);
	return rc;
}

static bool same_handle(const struct ofs_handle *a, const struct ofs_handle *b)
{
	if (!oid_eq(a->oid, b->oid) || a->nsids != b->nsids)
		return false;
	for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		if (!sid_eq(a->sids[i], b->sids[i]))
			return false;
	return true;
}

struct setattr_args {
	struct ofs_oid oid;
	uint32_t mask;
	const struct ofs_attr *in;
	struct ofs_attr *cur;      /* scratch, and the result */
	bool unchanged;            /* the change sets what is there: no-op */
	long part_at;              /* OFS_ATTR_PART: the slot it replaces */
};

static int setattr_txn(struct kv_txn *t, void *arg)
{
	struct setattr_args *sa = arg;
	struct ofs_attr *a = sa->cur;
	const struct ofs_attr *in = sa->in;
	int rc = get_object(t, sa->oid, a);

	if (rc)
		return rc;
	if ((sa->mask & OFS_ATTR_SIZE) && a->type == OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	if ((sa->mask & (OFS_ATTR_LAYOUT | OFS_ATTR_PART)) &&
	    (a->type == OFS_OBJ_DFILE || a->type == OFS_OBJ_DIRDATA))
		return -OFS_ETYPE;
	if (sa->mask & OFS_ATTR_PART) {
		/* (the slot is found here, under this copy's own write lock) */
		uint32_t hint = in->backref.stripe;
		long at = -1;
		if ((sa->mask & OFS_ATTR_LAYOUT) || in->nparts < 1 || in->nparts > 2)
			return -EINVAL;
		if (in->nparts == 2) {
			/* another object into slot hint, which must still
			 * hold the one parts[1] names */
			if (hint < a->nparts && oid_eq(a->parts[hint].oid, in->parts[1].oid))
				at = hint;
		} else if (hint < a->nparts && oid_eq(a->parts[hint].oid, in->parts[0].oid)) {
			at = hint;
		}
		for (uint16_t i = 0; in->nparts == 1 && at < 0 && i < a->nparts && i < OFS_MAX_STRIPES; i++)
			if (oid_eq(a->parts[i].oid, in->parts[0].oid))
				at = i;
		if (at < 0)
			return -ENOENT;
		sa->part_at = at;
	}
	/* Handles set to what they are already (a move's switch run again on
	 * every copy, after one missed it) change nothing, not even the
	 * version: the copies stay at one version. */
	sa->unchanged = !(sa->mask & ~(uint32_t)(OFS_ATTR_SIDS | OFS_ATTR_LAYOUT | OFS_ATTR_PART)) &&
			sa->mask;
	if (sa->unchanged && (sa->mask & OFS_ATTR_SIDS)) {
		struct ofs_handle x = { .nsids = a->nsids }, y = { .nsids = in->nsids };
		memcpy(x.sids, a->sids, sizeof(x.sids));
		memcpy(y.sids, in->sids, sizeof(y.sids));
		sa->unchanged = same_handle(&x, &y);
	}
	if (sa->unchanged && (sa->mask & OFS_ATTR_LAYOUT)) {
		sa->unchanged = strncmp(a->dist, in->dist, sizeof(a->dist)) == 0 &&
				a->strip_size == in->strip_size && a->replicas == in->replicas &&
				a->confidence == in->confidence && a->nparts == in->nparts;
		for (uint16_t i = 0; sa->unchanged && i < a->nparts && i < OFS_MAX_STRIPES; i++)
			sa->unchanged = same_handle(&a->parts[i], &in->parts[i]);
	}
	if (sa->unchanged && (sa->mask & OFS_ATTR_PART))
		sa->unchanged = same_handle(&a->parts[sa->part_at], &in->parts[0]);
	if (sa->unchanged)
		return 0;                /* (cur: the attributes as stored) */
	if (sa->mask & OFS_ATTR_SIZE)
		a->size = in->size;
	if (sa->mask & OFS_ATTR_MODE)
		a->mode = in->mode;
	if (sa->mask & OFS_ATTR_OWNER) {
		a->uid = in->uid;
		a->gid = in->gid;
	}
	a->mtime_ns = (sa->mask & OFS_ATTR_MTIME) ? in->mtime_ns : now_ns();
	if (sa->mask & OFS_ATTR_BACKREF)
		a->backref = in->backref;
	if (sa->mask & OFS_ATTR_SIDS) {
		a->nsids = in->nsids;
		memcpy(a->sids, in->sids, sizeof(a->sids));
	}
	if (sa->mask & OFS_ATTR_STALE) {
		a->nstale = in->nstale;
		memcpy(a->stale, in->stale, sizeof(a->stale));
	}
	if (sa->mask & OFS_ATTR_LAYOUT) {
		memcpy(a->dist, in->dist, sizeof(a->dist));
		a->strip_size = in->strip_size;
		a->replicas = in->replicas;
		a->confidence = in->confidence;
		a->nparts = in->nparts;
		memcpy(a->parts, in->parts, sizeof(a->parts));
	}
	if (sa->mask & OFS_ATTR_PART)
		a->parts[sa->part_at] = in->parts[0];
	if (!layout_valid(a))
		return -EINVAL;
	a->version++;
	return put_object(t, sa->oid, a);
}

int store_setattr(struct store *s, struct ofs_oid oid, uint32_t mask,
		  const struct ofs_attr *in, struct ofs_attr *out)
{
	struct setattr_args sa = { .oid = oid, .mask = mask, .in = in };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (mask & ~(uint32_t)OFS_ATTR_ALL)
		return -EINVAL;
	sa.cur = malloc(sizeof(*sa.cur));
	if (!sa.cur)
		return -ENOMEM;
	rc = kv_update(s->kv, setattr_txn, &sa);
	if (!rc && out)
		*out = *sa.cur;
	free(sa.cur);
	return rc;
}

/* ---- byte streams ------------------------------------------------------ */

/* Digests of chunks [first, last] of a dfile, with its attributes. */
struct chunkview_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
	uint64_t first, last;       /* in: wanted chunks (set after attr) */
	struct ofs_digest *digests; /* out: last-first+1 entries */
	bool want_digests;
};

static int chunkview_txn(struct kv_txn *t, void *arg)
{
	struct chunkview_args *cv = arg;
	int rc = get_object(t, cv->oid, cv->a);

	if (rc)
		return rc;
	if (cv->a->type != OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	if (!cv->want_digests)
		return 0;
	if (cv->a->chunk_size == 0)
		return -OFS_ECORRUPT;
	for (uint64_t i = cv->first; i <= cv->last; i++) {
		uint8_t key[REC_CHUNK_KEY];
		const void *v;
		size_t vn;

		rec_chunk_key(cv->oid, i, key);
		rc = kv_get(t, KV_CHUNKS, key, sizeof(key), &v, &vn);
		if (rc)
			return rc == -ENOENT ? -OFS_ECORRUPT : rc;
		rc = rec_decode_digest(v, vn, &cv->digests[i - cv->first]);
		if (rc)
			return rc;
	}
	return 0;
}

int store_read(struct store *s, struct ofs_oid oid, uint64_t off, void *buf,
	       size_t len, size_t *got)
{
	struct chunkview_args cv = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	uint8_t *span = NULL;
	uint64_t span_off, span_end, end;
	size_t n;
	int fd = -1, rc;
	uint32_t cs;

	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_rdlock(l);
	/* First the attributes alone, to learn the size and chunk size. */
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (rc)
		goto out;
	if (len == 0 || off >= cv.a->size) {
		*got = 0;
		goto out;
	}
	end = cv.a->size - off < len ? cv.a->size : off + len;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	checksum_chunk_span(off, end - off, cs, &cv.first, &cv.last);
	cv.digests = calloc((size_t)(cv.last - cv.first + 1), sizeof(*cv.digests));
	if (!cv.digests) {
		rc = -ENOMEM;
		goto out;
	}
	cv.want_digests = true;
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (rc)
		goto out;
	span_off = cv.first * cs;
	span_end = (cv.last + 1) * cs;
	if (span_end > cv.a->size)
		span_end = cv.a->size;
	/* Read whole chunks straight into buf when the range is aligned to
	 * them; otherwise into a span buffer first. */
	if (span_off == off && span_end == end) {
		span = buf;
	} else {
		span = malloc((size_t)(span_end - span_off));
		if (!span) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = bstream_open(s->datadir, oid, 0, &fd);
	if (rc) {
		rc = rc == -ENOENT ? -EIO : rc;
		goto out;
	}
	rc = bstream_pread(fd, span, (size_t)(span_end - span_off), span_off, &n);
	if (rc)
		goto out;
	/* A large read is most likely part of a sequential one: start
	 * reading the next piece from disk while this one is checked and
	 * sent (each request opens the stream afresh, so the kernel's own
	 * readahead cannot see the pattern). */
	if (span_end - span_off >= STORE_PREFETCH_MIN && span_end < cv.a->size)
		bstream_prefetch(fd, span_end, span_end - span_off);
	if (n != span_end - span_off) {
		rc = -OFS_ECHECKSUM;    /* the stream is shorter than recorded */
		goto out;
	}
	for (uint64_t i = cv.first; i <= cv.last; i++) {
		uint64_t c0 = i * cs - span_off;
		uint64_t c1 = (i + 1) * cs - span_off;
		if (c1 > span_end - span_off)
			c1 = span_end - span_off;
		if (!digest_eq(checksum_buf(span + c0, (size_t)(c1 - c0)),
			       cv.digests[i - cv.first])) {
			rc = -OFS_ECHECKSUM;
			goto out;
		}
	}
	if (span != buf)
		memcpy(buf, span + (off - span_off), (size_t)(end - off));
	*got = (size_t)(end - off);
out:
	pthread_rwlock_unlock(l);
	if (fd >= 0)
		close(fd);
	if (span != buf)
		free(span);
	free(cv.digests);
	free(cv.a);
	return rc;
}

struct write_args {
	struct ofs_oid oid;
	uint64_t first;              /* first chunk whose digest changes */
	uint64_t nchunks;            /* digests to store */
	struct ofs_digest *digests;
	uint64_t new_size;
	struct ofs_attr *a;          /* scratch; result */
};

static int write_txn(struct kv_txn *t, void *arg)
{
	struct write_args *wa = arg;
	int rc = get_object(t, wa->oid, wa->a);

	if (rc)
		return rc;
	if (wa->a->type != OFS_OBJ_DFILE)
		return -OFS_ETYPE;
	for (uint64_t i = 0; i < wa->nchunks; i++) {
		uint8_t key[REC_CHUNK_KEY];

		rec_chunk_key(wa->oid, wa->first + i, key);
		rc = kv_put(t, KV_CHUNKS, key, sizeof(key), wa->digests[i].b, OFS_DIGEST_LEN);
		if (rc)
			return rc;
	}
	if (wa->new_size > wa->a->size)
		wa->a->size = wa->new_size;
	wa->a->version++;
	wa->a->mtime_ns = now_ns();
	return put_object(t, wa->oid, wa->a);
}

/*
 * Read [off, off+len) of a stream (off on a chunk boundary, len within the
 * recorded size) into a malloc'd *out and check every chunk in it against
 * its stored digest: -OFS_ECHECKSUM when one does not match.
 */
static int read_verified(struct store *s, struct ofs_oid oid, int fd, uint32_t cs,
			 uint64_t off, uint64_t len, uint8_t **out)
{
	struct chunkview_args cv = { .oid = oid, .want_digests = true };
	uint8_t *b = malloc((size_t)len);
	size_t n;
	int rc;

	cv.a = malloc(sizeof(*cv.a));
	cv.first = off / cs;
	cv.last = (off + len - 1) / cs;
	cv.digests = calloc((size_t)(cv.last - cv.first + 1), sizeof(*cv.digests));
	if (!b || !cv.a || !cv.digests) {
		rc = -ENOMEM;
		goto out;
	}
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (!rc)
		rc = bstream_pread(fd, b, (size_t)len, off, &n);
	if (!rc && n != len)
		rc = -OFS_ECHECKSUM;
	for (uint64_t i = cv.first; !rc && i <= cv.last; i++) {
		uint64_t c0 = i * cs - off, c1 = c0 + cs > len ? len : c0 + cs;
		if (!digest_eq(checksum_buf(b + c0, (size_t)(c1 - c0)), cv.digests[i - cv.first]))
			rc = -OFS_ECHECKSUM;
	}
out:
	free(cv.digests);
	free(cv.a);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int store_write(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
		size_t len, uint64_t *version, uint64_t *size)
{
	struct chunkview_args cv = { .oid = oid };
	struct write_args wa = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	uint8_t *chunk = NULL, *undo = NULL;
	uint64_t old_size, new_size, first, last, undo_off = 0, undo_len = 0;
	struct ofs_digest zero;
	bool have_zero = false;
	uint32_t cs;
	int fd = -1, rc;

	if (s->read_only)
		return -EROFS;
	if (off > STORE_MAX_STREAM || len > STORE_MAX_STREAM - off)
		return -EFBIG;
	cv.a = malloc(sizeof(*cv.a));
	wa.a = malloc(sizeof(*wa.a));
	if (!cv.a || !wa.a) {
		rc = -ENOMEM;
		goto out_free;
	}
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (rc)
		goto out;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	/* Unstable writes before this one are committed first, so that the
	 * recorded state never skips over them. */
	{
		struct pending *p = pending_find(s, oid);
		uint64_t v, sz;
		if (p) {
			rc = commit_locked(s, oid, p, cs, &v, &sz);
			if (rc < 0)
				goto out;
			rc = kv_view(s->kv, chunkview_txn, &cv);
			if (rc)
				goto out;
		}
	}
	old_size = cv.a->size;
	if (len == 0) {
		*version = cv.a->version;
		*size = old_size;
		goto out;
	}
	new_size = off + len > old_size ? off + len : old_size;
	rc = bstream_open(s->datadir, oid, 1, &fd);
	if (rc) {
		rc = rc == -ENOENT ? -EIO : rc;
		goto out;
	}
	/* Chunks whose digest changes: those the write touches, and those of
	 * a gap between the old end and the write (which reads as zeros). */
	first = (off < old_size ? off : old_size) / cs;
	last = (off + len - 1) / cs;

	/* The recorded bytes of those chunks are read first: they must match
	 * their digests (a write never blesses bytes that do not, such as
	 * those of an earlier write that failed), and they undo this write if
	 * it fails. */
	undo_off = first * cs;
	undo_len = (last + 1) * cs < old_size ? (last + 1) * cs - undo_off :
		   old_size > undo_off ? old_size - undo_off : 0;
	if (undo_len) {
		rc = read_verified(s, oid, fd, cs, undo_off, undo_len, &undo);
		if (rc)
			goto out;
	}
	/* Bytes past the recorded end (left by a write that was never
	 * recorded) must not show through a gap as old data. */
	if (off + len > old_size)
		rc = bstream_trim(fd, old_size);
	if (!rc)
		rc = bstream_pwrite(fd, buf, len, off);
	if (!rc)
		rc = bstream_datasync(fd);
	if (rc) {
		/* Put the recorded bytes back, as far as the disk lets us. */
		if (undo_len && bstream_pwrite(fd, undo, (size_t)undo_len, undo_off) == 0)
			(void)bstream_trim(fd, old_size);
		(void)bstream_datasync(fd);
		goto out;
	}
	wa.first = first;
	wa.nchunks = last - first + 1;
	wa.digests = calloc((size_t)wa.nchunks, sizeof(*wa.digests));
	chunk = malloc(cs);
	if (!wa.digests || !chunk) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t i = first; i <= last; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs;
		size_t n;
		if (c1 > new_size)
			c1 = new_size;
		if (c0 >= off && c1 <= off + len) {
			/* Entirely inside the written bytes: hash from memory. */
			wa.digests[i - first] = checksum_buf((const uint8_t *)buf + (c0 - off),
							     (size_t)(c1 - c0));
			continue;
		}
		if (c0 >= old_size && c1 == c0 + cs && c1 <= off) {
			/* A whole chunk of the gap: zeros (the stream was cut to
			 * its recorded end above), digested once per write. */
			if (!have_zero) {
				memset(chunk, 0, cs);
				zero = checksum_buf(chunk, cs);
				have_zero = true;
			}
			wa.digests[i - first] = zero;
			continue;
		}
		rc = bstream_pread(fd, chunk, (size_t)(c1 - c0), c0, &n);
		if (rc)
			goto out;
		if (n != c1 - c0) {
			rc = -EIO;
			goto out;
		}
		wa.digests[i - first] = checksum_buf(chunk, n);
	}
	wa.new_size = new_size;
	rc = kv_update(s->kv, write_txn, &wa);
	if (!rc) {
		*version = wa.a->version;
		*size = wa.a->size;
	}
out:
	pthread_rwlock_unlock(l);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
out_free:
	free(undo);
	free(chunk);
	free(wa.digests);
	free(wa.a);
	free(cv.a);
	return rc;
}

/* Make oid's unstable writes durable and visible: sync the stream, digest
 * the chunks not yet known, commit digests, size and version. The caller
 * holds the object's lock exclusively. */
static int commit_locked(struct store *s, struct ofs_oid oid, struct pending *p,
			 uint32_t cs, uint64_t *version, uint64_t *size)
{
	struct write_args wa = { .oid = oid };
	uint8_t *chunk = NULL;
	uint64_t last;
	int fd = -1, rc;

	if (p->end == p->base) {
		pending_drop(s, p);
		return 1;     /* nothing was written: nothing to commit */
	}
	rc = bstream_open(s->datadir, oid, 0, &fd);
	if (rc)
		goto out;
	rc = bstream_datasync(fd);
	if (rc)
		goto out;
	last = (p->end - 1) / cs;
	wa.first = p->first;
	wa.nchunks = last - p->first + 1;
	wa.digests = calloc((size_t)wa.nchunks, sizeof(*wa.digests));
	wa.a = malloc(sizeof(*wa.a));
	chunk = malloc(cs);
	if (!wa.digests || !wa.a || !chunk || (rc = pending_grow(p, last))) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	for (uint64_t i = p->first; i <= last; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs > p->end ? p->end : c0 + cs;
		size_t n;
		/* A chunk digested at write time is exact only if it was
		 * complete then; the last chunk may have been short. */
		if (p->known[i - p->first] && c1 == c0 + cs) {
			wa.digests[i - p->first] = p->d[i - p->first];
			continue;
		}
		rc = bstream_pread(fd, chunk, (size_t)(c1 - c0), c0, &n);
		if (rc)
			goto out;
		if (n != c1 - c0) {
			rc = -EIO;
			goto out;
		}
		wa.digests[i - p->first] = checksum_buf(chunk, n);
	}
	wa.new_size = p->end;
	rc = kv_update(s->kv, write_txn, &wa);
	if (!rc) {
		*version = wa.a->version;
		*size = wa.a->size;
	}
out:
	/* Committed or failed, the unstable state is done with: on failure
	 * the object stays as it was recorded and the writer must start
	 * again. */
	pending_drop(s, p);
	if (fd >= 0)
		close(fd);
	free(chunk);
	free(wa.digests);
	free(wa.a);
	return rc;
}

int store_commit(struct store *s, struct ofs_oid oid, uint64_t *version, uint64_t *size)
{
	struct chunkview_args cv = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	struct pending *p;
	int rc;

	if (s->read_only)
		return -EROFS;
	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (rc)
		goto out;
	p = pending_find(s, oid);
	if (p && cv.a->chunk_size)
		rc = commit_locked(s, oid, p, cv.a->chunk_size, version, size);
	else
		rc = 1;
	if (rc == 1) {
		*version = cv.a->version;
		*size = cv.a->size;
		rc = 0;
	}
out:
	pthread_rwlock_unlock(l);
	free(cv.a);
	return rc;
}

int store_write_unstable(struct store *s, struct ofs_oid oid, uint64_t off, const void *buf,
			 size_t len, uint64_t *version, uint64_t *size)
{
	struct chunkview_args cv = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	struct pending *p;
	uint32_t cs;
	int fd = -1, rc;
	bool stable = false;

	if (s->read_only)
		return -EROFS;
	if (off > STORE_MAX_STREAM || len > STORE_MAX_STREAM - off)
		return -EFBIG;
	cv.a = malloc(sizeof(*cv.a));
	if (!cv.a)
		return -ENOMEM;
	pthread_rwlock_wrlock(l);
	rc = kv_view(s->kv, chunkview_txn, &cv);
	if (rc)
		goto out;
	cs = cv.a->chunk_size;
	if (cs == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	/* Only appends - each write starting where the last one ended, the
	 * first at the recorded end - may wait for a commit: an overwrite of
	 * recorded bytes would leave their digests wrong until then, and a
	 * gap would have to be read back. Other writes, and writes when every
	 * slot is taken, go stable (which commits what waited first). */
	p = pending_find(s, oid);
	if (off < cv.a->size || len == 0 || (p && off != p->end) ||
	    (!p && (off != cv.a->size || !(p = pending_take(s, oid, cv.a->size, cs))))) {
		stable = true;
		goto out;
	}
	rc = pending_grow(p, (off + len - 1) / cs);
	if (!rc)
		rc = bstream_open(s->datadir, oid, 1, &fd);
	if (!rc && p->end == p->base) {
		/* As in store_write: the recorded part of the chunk this
		 * append continues must verify, and nothing past it may
		 * linger. */
		if (p->base % cs) {
			uint8_t *old = NULL;
			rc = read_verified(s, oid, fd, cs, p->base / cs * cs, p->base % cs, &old);
			free(old);
		}
		if (!rc)
			rc = bstream_trim(fd, p->base);
	}
	if (!rc)
		rc = bstream_pwrite(fd, buf, len, off);
	if (rc) {
		pending_drop(s, p);
		goto out;
	}
	for (uint64_t i = off / cs; i <= (off + len - 1) / cs; i++) {
		uint64_t c0 = i * cs, c1 = c0 + cs;
		bool whole = c0 >= off && c1 <= off + len;
		if (i < p->first)
			continue;
		p->known[i - p->first] = whole;
		if (whole)
			p->d[i - p->first] = checksum_buf((const uint8_t *)buf + (c0 - off), cs);
	}
	if (off + len > p->end)
		p->end = off + len;
	*version = cv.a->version;
	*size = p->end;
out:
	pthread_rwlock_unlock(l);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	free(cv.a);
	if (stable && !rc)
		return store_write(s, oid, off, buf, len, version, size);
	return rc;
}

struct chunks_args {
	struct ofs_oid oid;
	store_chunk_fn fn;
	void *arg;
};

static int chunks_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct chunks_args *ca = arg;
	struct ofs_digest d;
	uint64_t idx;
	int rc;

	if ((rc = rec_chunk_key_index(k, kn, &idx)) || (rc = rec_decode_digest(v, vn, &d)))
		return rc;
	return ca->fn(idx, d, ca->arg);
}

static int chunks_txn(struct kv_txn *t, void *arg)
{
	struct chunks_args *ca = arg;

	return kv_scan(t, KV_CHUNKS, ca->oid.b, sizeof(ca->oid.b), NULL, 0, chunks_scan, ca);
}

int store_chunks(struct store *s, struct ofs_oid oid, store_chunk_fn fn, void *arg)
{
	struct chunks_args ca = { .oid = oid, .fn = fn, .arg = arg };

	return kv_view(s->kv, chunks_txn, &ca);
}

/* ---- key-value parts and directory entries ----------------------------- */

struct kvop_args {
	struct ofs_oid oid;
	const void *k;
	size_t kn;
	const void *v;           /* put: value */
	size_t vn;
	void *out;               /* get: malloc'd copy */
	size_t outn;
	uint8_t need_type;       /* 0: any type */
	bool refuse_dirdata;
	/* dirents */
	const struct ofs_dirent *d;
	uint32_t flags;
	bool present;
	bool unchanged;          /* dirent create: the entry was already this */
	struct ofs_dirent old;
	struct ofs_attr *a;      /* scratch */
};

/* Fetch the object, check its type, and (for changes) bump its version. */
static int kvop_object(struct kv_txn *t, struct kvop_args *ka, bool change)
{
	int rc = get_object(t, ka->oid, ka->a);

	if (rc)
		return rc;
	if (ka->need_type && ka->a->type != ka->need_type)
		return -OFS_ETYPE;
	if (ka->refuse_dirdata && ka->a->type == OFS_OBJ_DIRDATA)
		return -OFS_ETYPE;
	if (!change)
		return 0;
	ka->a->version++;
	ka->a->mtime_ns = now_ns();
	return put_object(t, ka->oid, ka->a);
}

static int kvget_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	const void *v;
	size_t vn;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = kv_get(t, KV_KEYVAL, key, kn, &v, &vn);
	if (rc)
		return rc;
	ka->out = malloc(vn ? vn : 1);
	if (!ka->out)
		return -ENOMEM;
	memcpy(ka->out, v, vn);
	ka->outn = vn;
	return 0;
}

static int kvput_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (!rc)
		rc = kv_put(t, KV_KEYVAL, key, kn, ka->v, ka->vn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, ka->v, ka->vn, false);
	return rc;
}

static int kvdel_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (!rc)
		rc = kv_del(t, KV_KEYVAL, key, kn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, NULL, 0, true);
	return rc;
}

static int kv_key_ok(size_t kn)
{
	return kn > 0 && kn <= OFS_MAX_KEY ? 0 : -EINVAL;
}

static int kvop(struct store *s, kv_fn fn, struct kvop_args *ka, bool update)
{
	int rc;

	ka->a = malloc(sizeof(*ka->a));
	if (!ka->a)
		return -ENOMEM;
	rc = update ? kv_update(s->kv, fn, ka) : kv_view(s->kv, fn, ka);
	free(ka->a);
	ka->a = NULL;
	return rc;
}

int store_kv_get(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 void **v, size_t *vn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn };
	int rc = kv_key_ok(kn);

	if (rc)
		return rc;
	rc = kvop(s, kvget_txn, &ka, false);
	if (rc) {
		free(ka.out);
		return rc;
	}
	*v = ka.out;
	*vn = ka.outn;
	return 0;
}

int store_kv_put(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		 const void *v, size_t vn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn, .v = v, .vn = vn,
				.refuse_dirdata = true };
	int rc = kv_key_ok(kn);

	if (s->read_only)
		return -EROFS;
	if (rc)
		return rc;
	if (vn > OFS_MAX_VALUE)
		return -OFS_ETOOBIG;
	return kvop(s, kvput_txn, &ka, true);
}

int store_kv_del(struct store *s, struct ofs_oid oid, const void *k, size_t kn)
{
	struct kvop_args ka = { .oid = oid, .k = k, .kn = kn, .refuse_dirdata = true };
	int rc = kv_key_ok(kn);

	if (s->read_only)
		return -EROFS;
	if (rc)
		return rc;
	return kvop(s, kvdel_txn, &ka, true);
}

struct list_args {
	struct kvop_args ka;
	const void *after;
	size_t an;
	uint32_t max, count;
	bool more;
	bool dirents;
	store_kv_fn kfn;
	store_dirent_fn dfn;
	void *arg;
};

static int list_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct list_args *la = arg;
	const uint8_t *key = (const uint8_t *)k + OFS_OID_LEN;
	size_t keyn = kn - OFS_OID_LEN;

	if (la->count == la->max) {
		la->more = true;
		return 1;
	}
	la->count++;
	if (la->dirents) {
		char name[OFS_NAME_MAX + 1];
		struct ofs_dirent d;
		if (keyn == 0 || keyn > OFS_NAME_MAX || memchr(key, '\0', keyn))
			return -OFS_ECORRUPT;
		memcpy(name, key, keyn);
		name[keyn] = '\0';
		if (rec_decode_dirent(v, vn, &d))
			return -OFS_ECORRUPT;
		return la->dfn(name, &d, la->arg);
	}
	return la->kfn(key, keyn, v, vn, la->arg);
}

static int list_txn(struct kv_txn *t, void *arg)
{
	struct list_args *la = arg;
	uint8_t after[REC_KV_KEY_MAX];
	size_t an = la->an ? rec_kv_key(la->ka.oid, la->after, la->an, after) : 0;
	int rc = kvop_object(t, &la->ka, false);

	if (rc)
		return rc;
	return kv_scan(t, KV_KEYVAL, la->ka.oid.b, OFS_OID_LEN, an ? after : NULL, an,
		       list_scan, la);
}

int store_kv_list(struct store *s, struct ofs_oid oid, const void *after, size_t an,
		  uint32_t max, store_kv_fn fn, void *arg, bool *more)
{
	struct list_args la = { .ka = { .oid = oid }, .after = after, .an = an,
				.max = max, .kfn = fn, .arg = arg };
	int rc;

	if (an > OFS_MAX_KEY || max == 0)
		return -EINVAL;
	/* kvop hands list_txn &la.ka, which is la's first member. */
	rc = kvop(s, list_txn, &la.ka, false);
	if (rc)
		return rc;
	*more = la.more;
	return 0;
}

int store_dirent_list(struct store *s, struct ofs_oid dirdata, const char *after,
		      uint32_t max, store_dirent_fn fn, void *arg, bool *more)
{
	struct list_args la = { .ka = { .oid = dirdata, .need_type = OFS_OBJ_DIRDATA },
				.after = after, .an = after ? strlen(after) : 0,
				.max = max, .dirents = true, .dfn = fn, .arg = arg };
	int rc;

	if (la.an > OFS_NAME_MAX || max == 0)
		return -EINVAL;
	rc = kvop(s, list_txn, &la.ka, false);
	if (rc)
		return rc;
	*more = la.more;
	return 0;
}

static int dirent_get(struct kv_txn *t, struct kvop_args *ka, bool *present, struct ofs_dirent *d)
{
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_KEYVAL, key, kn, &v, &vn);

	if (rc == -ENOENT) {
		*present = false;
		return 0;
	}
	if (rc)
		return rc;
	*present = true;
	return rec_decode_dirent(v, vn, d);
}

static int dirent_create_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	struct wbuf w;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	/* Replacing an entry with itself changes nothing, not even the
	 * version: a move that sets it again on every copy (after one copy
	 * missed the first time) leaves the copies at one version. */
	if (ka->present && (ka->flags & OFS_DIRENT_REPLACE) && ka->old.type == ka->d->type &&
	    same_handle(&ka->old.handle, &ka->d->handle)) {
		ka->unchanged = true;
		return 0;
	}
	rc = kvop_object(t, ka, true);
	if (rc)
		return rc;
	if (ka->present) {
		if (!(ka->flags & OFS_DIRENT_REPLACE))
			return -EEXIST;
		/* The same object with a new handle (a copy moved), or its
		 * type set right (repair, from the object's own record): any
		 * type. */
		bool same = oid_eq(ka->old.handle.oid, ka->d->handle.oid);
		if (!same && ka->old.type != OFS_OBJ_METAFILE)
			return -EISDIR;
		if (!same && ka->d->type != OFS_OBJ_METAFILE)
			return -ENOTDIR;
	}
	wbuf_init(&w);
	rc = rec_encode_dirent(&w, ka->d);
	if (!rc)
		rc = kv_put(t, KV_KEYVAL, key, kn, w.data, w.len);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, w.data, w.len,
				    false);
	wbuf_free(&w);
	return rc;
}

static int dirent_remove_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ka->oid, ka->k, ka->kn, key);
	int rc = kvop_object(t, ka, true);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	if (!ka->present)
		return -ENOENT;
	rc = kv_del(t, KV_KEYVAL, key, kn);
	if (!rc)
		rc = changelog_note(t, ka->oid, ka->a->version, ka->k, ka->kn, NULL, 0, true);
	return rc;
}

static int dirent_lookup_txn(struct kv_txn *t, void *arg)
{
	struct kvop_args *ka = arg;
	int rc = kvop_object(t, ka, false);

	if (rc)
		return rc;
	rc = dirent_get(t, ka, &ka->present, &ka->old);
	if (rc)
		return rc;
	return ka->present ? 0 : -ENOENT;
}

int store_dirent_create(struct store *s, struct ofs_oid dirdata, const char *name,
			const struct ofs_dirent *d, uint32_t flags, bool *replaced,
			struct ofs_dirent *old)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name), .d = d,
				.flags = flags, .need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	if (d->type != OFS_OBJ_METAFILE && d->type != OFS_OBJ_DIRECTORY)
		return -EINVAL;
	rc = kvop(s, dirent_create_txn, &ka, true);
	if (rc)
		return rc;
	if (ka.unchanged) {
		/* (a create sent again: say what the first one replaced) */
		replaced_find(s->replaced, dirdata, name, d->handle.oid, &ka.old);
	} else if (ka.present && !oid_eq(ka.old.handle.oid, d->handle.oid)) {
		replaced_note(s->replaced, dirdata, name, d->handle.oid, &ka.old);
	}
	*replaced = ka.present;
	if (ka.present && old)
		*old = ka.old;
	return 0;
}

int store_dirent_remove(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *old)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name),
				.need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	rc = kvop(s, dirent_remove_txn, &ka, true);
	if (!rc && old)
		*old = ka.old;
	return rc;
}

int store_dirent_lookup(struct store *s, struct ofs_oid dirdata, const char *name,
			struct ofs_dirent *d)
{
	struct kvop_args ka = { .oid = dirdata, .k = name, .kn = strlen(name),
				.need_type = OFS_OBJ_DIRDATA };
	int rc;

	if (!ofs_name_valid(name))
		return -OFS_ENAME;
	rc = kvop(s, dirent_lookup_txn, &ka, false);
	if (!rc)
		*d = ka.old;
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
	proto_encode_server(&w, &copy);
	rc = wbuf_error(&w);
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
	struct rbuf r;
	int rc;

	(void)k;
	(void)kn;
	if (!e)
		return -ENOMEM;
	rbuf_init(&r, v, vn);
	proto_decode_server(&r, e);
	rc = rbuf_done(&r) ? -OFS_ECORRUPT : 0;
	if (rc && vn <= 4096) {
		/* A record from before the table's per-part versions: the same
		 * encoding without the last two counters, read as zero. */
		uint8_t old[4096 + 16];
		memcpy(old, v, vn);
		memset(old + vn, 0, 16);
		rbuf_init(&r, old, vn + 16);
		proto_decode_server(&r, e);
		rc = rbuf_done(&r) ? -OFS_ECORRUPT : 0;
	}
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

/* ---- stale copies --------------------------------------------------------- */

struct stale_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	const char *reason;
	struct ofs_attr *a;
};

static int stale_txn(struct kv_txn *t, void *arg)
{
	struct stale_args *sa = arg;
	uint8_t key[OFS_OID_LEN * 2];
	bool listed = false;
	const void *v;
	size_t vn;
	int rc = get_object(t, sa->oid, sa->a);

	if (rc)
		return rc;
	memcpy(key, sa->oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, sa->sid.b, OFS_OID_LEN);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* the first reason is the one that explains it */
	/* (the record, not the list, says whether it is known: a cleared
	 * record may have left the SID listed) */
	for (uint8_t i = 0; i < sa->a->nstale; i++)
		listed |= sid_eq(sa->a->stale[i], sa->sid);
	if (!listed && sa->a->nstale < OFS_MAX_REPLICAS) {
		sa->a->stale[sa->a->nstale++] = sa->sid;
		rc = put_object(t, sa->oid, sa->a);
		if (rc)
			return rc;
	}
	return kv_put(t, KV_STALE, key, sizeof(key), sa->reason, strlen(sa->reason));
}

int store_stale_add(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct stale_args sa = { .oid = oid, .sid = sid, .reason = reason };
	int rc;

	if (s->read_only)
		return -EROFS;
	sa.a = malloc(sizeof(*sa.a));
	if (!sa.a)
		return -ENOMEM;
	rc = kv_update(s->kv, stale_txn, &sa);
	free(sa.a);
	return rc;
}

static int stale_note_txn(struct kv_txn *t, void *arg)
{
	struct stale_args *sa = arg;
	uint8_t key[OFS_OID_LEN * 2];
	const void *v;
	size_t vn;

	memcpy(key, sa->oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, sa->sid.b, OFS_OID_LEN);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* the first reason stays */
	return kv_put(t, KV_STALE, key, sizeof(key), sa->reason, strlen(sa->reason));
}

uint64_t store_missed_version(const char *reason)
{
	const char *p = strstr(reason, "missed version ");
	unsigned long long v = 0;
	char colon = 0;

	if (p && sscanf(p, "missed version %llu%c", &v, &colon) == 2 && colon == ':')
		return (uint64_t)v;
	return 0;
}

int store_stale_note(struct store *s, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	struct stale_args sa = { .oid = oid, .sid = sid, .reason = reason };

	if (s->read_only)
		return -EROFS;
	return kv_update(s->kv, stale_note_txn, &sa);
}

int store_drop_removed(struct store *s, struct ofs_oid oid)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, oid, a);
	if (rc == -ENOENT) {
		free(a);             /* never held here: only the mark goes */
		return store_stale_del(s, oid, s->sid, UINT64_MAX);
	}
	if (!rc && a->type == OFS_OBJ_DFILE)
		rc = bstream_quarantine(s->datadir, oid, a->version, "removed-elsewhere");
	free(a);
	if (!rc || rc == -OFS_ECORRUPT)
		rc = store_drop_copy(s, oid);
	return rc;
}

struct stale_list_args {
	struct ofs_oid oid;
	store_stale_fn fn;
	void *arg;
};

static int stale_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct stale_list_args *sl = arg;
	struct ofs_sid sid;
	char reason[256];

	if (kn != OFS_OID_LEN * 2)
		return -OFS_ECORRUPT;
	memcpy(sid.b, (const uint8_t *)k + OFS_OID_LEN, OFS_OID_LEN);
	snprintf(reason, sizeof(reason), "%.*s", (int)(vn < 255 ? vn : 255), (const char *)v);
	return sl->fn(sid, reason, sl->arg);
}

static int stale_list_txn(struct kv_txn *t, void *arg)
{
	struct stale_list_args *sl = arg;

	return kv_scan(t, KV_STALE, sl->oid.b, OFS_OID_LEN, NULL, 0, stale_scan, sl);
}

int store_stale_list(struct store *s, struct ofs_oid oid, store_stale_fn fn, void *arg)
{
	struct stale_list_args sl = { .oid = oid, .fn = fn, .arg = arg };

	return kv_view(s->kv, stale_list_txn, &sl);
}

/* ---- copies known to be behind -------------------------------------------- */

struct behind_args {
	struct ofs_oid oid;
	struct ofs_sid self;
	const char *reason;
};

static int behind_mark_txn(struct kv_txn *t, void *arg)
{
	struct behind_args *ba = arg;
	uint8_t key[OFS_OID_LEN * 2];
	const void *v;
	size_t vn;

	memcpy(key, ba->oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, ba->self.b, OFS_OID_LEN);
	if (kv_get(t, KV_STALE, key, sizeof(key), &v, &vn) == 0)
		return 0;   /* already marked: the first reason stays */
	return kv_put(t, KV_STALE, key, sizeof(key), ba->reason, strlen(ba->reason));
}

int store_behind_mark(struct store *s, struct ofs_oid oid, const char *reason)
{
	struct behind_args ba = { .oid = oid, .self = s->sid, .reason = reason };
	int rc;

	if (s->read_only)
		return -EROFS;
	rc = kv_update(s->kv, behind_mark_txn, &ba);
	if (!rc)
		atomic_store(&s->behind_any, true);
	return rc;
}

struct behind_many_args {
	const struct ofs_oid *oids;
	const char *const *reasons;
	size_t n;
	struct ofs_sid self;
};

static int behind_many_txn(struct kv_txn *t, void *arg)
{
	struct behind_many_args *bm = arg;

	for (size_t i = 0; i < bm->n; i++) {
		struct behind_args ba = { .oid = bm->oids[i], .self = bm->self,
					  .reason = bm->reasons[i] };
		int rc = behind_mark_txn(t, &ba);
		if (rc)
			return rc;
	}
	return 0;
}

int store_behind_mark_many(struct store *s, const struct ofs_oid *oids,
			   const char *const *reasons, size_t n)
{
	struct behind_many_args bm = { .oids = oids, .reasons = reasons, .n = n, .self = s->sid };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (n == 0)
		return 0;
	rc = kv_update(s->kv, behind_many_txn, &bm);
	if (!rc)
		atomic_store(&s->behind_any, true);
	return rc;
}

static int behind_get_txn(struct kv_txn *t, void *arg)
{
	struct behind_args *ba = arg;
	uint8_t key[OFS_OID_LEN * 2];
	const void *v;
	size_t vn;

	memcpy(key, ba->oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, ba->self.b, OFS_OID_LEN);
	return kv_get(t, KV_STALE, key, sizeof(key), &v, &vn);
}

int store_behind(struct store *s, struct ofs_oid oid)
{
	struct behind_args ba = { .oid = oid, .self = s->sid };
	int rc;

	if (!atomic_load(&s->behind_any))
		return 0;
	rc = kv_view(s->kv, behind_get_txn, &ba);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

struct stale_for_args {
	struct ofs_sid sid;
	const struct ofs_oid *after;
	uint32_t max, n;
	store_stale_for_fn fn;
	void *arg;
	bool more;
};

static int stale_for_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct stale_for_args *sf = arg;
	struct ofs_oid oid;
	char reason[256];
	int rc;

	if (kn != OFS_OID_LEN * 2)
		return -OFS_ECORRUPT;
	if (memcmp((const uint8_t *)k + OFS_OID_LEN, sf->sid.b, OFS_OID_LEN) != 0)
		return 0;
	memcpy(oid.b, k, OFS_OID_LEN);
	if (sf->after && memcmp(oid.b, sf->after->b, OFS_OID_LEN) <= 0)
		return 0;
	if (sf->n == sf->max) {
		sf->more = true;
		return 1;
	}
	snprintf(reason, sizeof(reason), "%.*s", (int)(vn < 255 ? vn : 255), (const char *)v);
	rc = sf->fn(oid, reason, sf->arg);
	if (rc)
		return rc;
	sf->n++;
	return 0;
}

static int stale_for_txn(struct kv_txn *t, void *arg)
{
	struct stale_for_args *sf = arg;
	uint8_t after[OFS_OID_LEN * 2];

	sf->n = 0;
	sf->more = false;
	if (!sf->after)
		return kv_scan(t, KV_STALE, NULL, 0, NULL, 0, stale_for_scan, sf);
	memcpy(after, sf->after->b, OFS_OID_LEN);
	memset(after + OFS_OID_LEN, 0xff, OFS_OID_LEN);
	return kv_scan(t, KV_STALE, NULL, 0, after, sizeof(after), stale_for_scan, sf);
}

int store_stale_for(struct store *s, struct ofs_sid sid, const struct ofs_oid *after,
		    uint32_t max, store_stale_for_fn fn, void *arg, bool *more)
{
	struct stale_for_args sf = { .sid = sid, .after = after, .max = max, .fn = fn, .arg = arg };
	int rc;

	if (max == 0)
		return -EINVAL;
	rc = kv_view(s->kv, stale_for_txn, &sf);
	if (!rc && more)
		*more = sf.more;
	return rc;
}

/* ---- scrub support ------------------------------------------------------- */

struct walk_args {
	const struct ofs_oid *after;
	uint32_t max, n;
	store_walk_fn fn;
	void *arg;
	bool more;
	struct ofs_attr *a;
};

static int walk_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct walk_args *wa = arg;
	struct ofs_oid oid;
	int rc;

	if (kn != OFS_OID_LEN)
		return 0;             /* not an object key: not ours to judge here */
	memcpy(oid.b, k, OFS_OID_LEN);
	if (wa->n == wa->max) {
		wa->more = true;
		return 1;
	}
	rc = rec_decode_object(v, vn, wa->a);
	rc = wa->fn(oid, rc ? NULL : wa->a, rc, wa->arg);
	if (rc)
		return rc;
	wa->n++;
	return 0;
}

static int walk_txn(struct kv_txn *t, void *arg)
{
	struct walk_args *wa = arg;

	wa->n = 0;
	wa->more = false;
	return kv_scan(t, KV_OBJECTS, NULL, 0, wa->after ? wa->after->b : NULL,
		       wa->after ? OFS_OID_LEN : 0, walk_scan, wa);
}

int store_walk(struct store *s, const struct ofs_oid *after, uint32_t max,
	       store_walk_fn fn, void *arg, bool *more)
{
	struct walk_args wa = { .after = after, .max = max, .fn = fn, .arg = arg };
	int rc;

	if (max == 0)
		return -EINVAL;
	wa.a = malloc(sizeof(*wa.a));
	if (!wa.a)
		return -ENOMEM;
	rc = kv_view(s->kv, walk_txn, &wa);
	free(wa.a);
	if (!rc && more)
		*more = wa.more;
	return rc;
}

/* The attributes and the digests of chunks [first, last] of one dfile. */
struct piece_args {
	struct ofs_oid oid;
	uint64_t first, last;
	struct ofs_digest *d;
	struct ofs_attr *a;
	bool missing_digest;         /* some chunk of the range has none */
};

static int piece_txn(struct kv_txn *t, void *arg)
{
	struct piece_args *pa = arg;
	int rc = get_object(t, pa->oid, pa->a);

	if (rc)
		return rc;
	pa->missing_digest = false;
	for (uint64_t i = pa->first; i <= pa->last; i++) {
		uint8_t key[REC_CHUNK_KEY];
		const void *v;
		size_t vn;

		rec_chunk_key(pa->oid, i, key);
		rc = kv_get(t, KV_CHUNKS, key, sizeof(key), &v, &vn);
		if (rc == -ENOENT) {
			memset(&pa->d[i - pa->first], 0, sizeof(pa->d[0]));
			pa->missing_digest = true;
			continue;
		}
		if (rc || (rc = rec_decode_digest(v, vn, &pa->d[i - pa->first])) != 0)
			return rc;
	}
	return 0;
}

#define SCRUB_PIECE_CHUNKS_BYTES (1u << 20)   /* read about this much at once */

int store_scrub_dfile(struct store *s, struct ofs_oid oid, store_scrub_finding_fn found,
		      store_scrub_throttle_fn throttle, void *arg, uint64_t *bytes_read)
{
	struct piece_args pa = { .oid = oid };
	pthread_rwlock_t *l = obj_lock(s, oid);
	uint8_t *buf = NULL;
	uint64_t size, next = 0;
	uint32_t cs, per;
	char detail[256];
	struct stat st;
	bool stop = false;
	int fd = -1, rc;

	*bytes_read = 0;
	pa.a = malloc(sizeof(*pa.a));
	if (!pa.a)
		return -ENOMEM;
	pthread_rwlock_rdlock(l);
	pa.first = 1;
	pa.last = 0;                 /* no digests: the record alone */
	rc = kv_view(s->kv, piece_txn, &pa);
	if (rc == 0 && pa.a->type != OFS_OBJ_DFILE)
		rc = -OFS_ETYPE;
	if (rc == 0 && pa.a->chunk_size == 0)
		rc = -OFS_ECORRUPT;
	if (rc == 0) {
		rc = bstream_open(s->datadir, oid, 0, &fd);
		if (rc == -ENOENT && kv_view(s->kv, piece_txn, &pa) == -ENOENT)
			goto out_locked;      /* removed meanwhile (rc: -ENOENT) */
		if (rc == -ENOENT) {
			rc = found("missing_replica", "the byte stream file is missing", arg);
			goto out_locked;
		}
		if (rc) {
			snprintf(detail, sizeof(detail), "cannot open the byte stream: %s",
				 ofs_strerror(rc));
			rc = found("unreadable", detail, arg);
			goto out_locked;
		}
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size < pa.a->size) {
			snprintf(detail, sizeof(detail), "byte stream holds %llu bytes, record says %llu",
				 (unsigned long long)st.st_size, (unsigned long long)pa.a->size);
			rc = found("size_mismatch", detail, arg);
			stop = true;      /* (the chunks past its end would say it again) */
			goto out_locked;
		}
	}
out_locked:
	pthread_rwlock_unlock(l);
	if (rc || fd < 0 || stop)
		goto out;
	size = pa.a->size;
	if (size == 0)
		goto out;             /* no chunks: nothing to read */
	/* The disk reads ahead while a piece is hashed: the kernel's own
	 * readahead, asynchronous and growing with a sequential reader, keeps
	 * reads in flight. (An explicit WILLNEED per piece was measured to
	 * halve the scrub rate from disk: it allocates and submits the pages
	 * in this thread, in small batches, and defeats the async window.) */
	bstream_sequential(fd);
	cs = pa.a->chunk_size;
	per = cs >= SCRUB_PIECE_CHUNKS_BYTES ? 1 : SCRUB_PIECE_CHUNKS_BYTES / cs;
	/* A piece is never longer than the stream: a small file gets a small
	 * buffer (a megabyte per file scrubbed was most of a scrub's time in
	 * the allocator, and more under a sanitizer). */
	buf = malloc((size_t)((uint64_t)per * cs < size ? (uint64_t)per * cs : size));
	pa.d = calloc(per, sizeof(*pa.d));
	if (!buf || !pa.d) {
		rc = -ENOMEM;
		goto out;
	}
	/* Piece by piece, each under the object's read lock (a writer waits
	 * for one piece, not for the whole object). */
	while (next * (uint64_t)cs < size && !rc) {
		uint64_t off = next * (uint64_t)cs, len, got64;
		size_t got = 0;

		pa.first = next;
		pa.last = next + per - 1;
		if ((pa.last + 1) * (uint64_t)cs > size)
			pa.last = (size - 1) / cs;
		len = (pa.last + 1) * (uint64_t)cs > size ? size - off : (pa.last - pa.first + 1) * (uint64_t)cs;
		if (throttle && (rc = throttle(len, arg)) != 0)
			break;
		pthread_rwlock_rdlock(l);
		rc = kv_view(s->kv, piece_txn, &pa);
		if (!rc && pa.a->size < size)
			size = pa.a->size;    /* (shrunk meanwhile: check what is left) */
		if (!rc)
			rc = bstream_pread(fd, buf, (size_t)len, off, &got);
		else if (rc == -ENOENT)
			stop = true;          /* removed meanwhile: nothing to say */
		pthread_rwlock_unlock(l);
		if (stop)
			break;
		if (rc) {
			snprintf(detail, sizeof(detail), "read error at offset %llu: %s",
				 (unsigned long long)off, ofs_strerror(rc));
			rc = found("unreadable", detail, arg);
			break;
		}
		got64 = got;
		*bytes_read += got64;
		for (uint64_t i = pa.first; i <= pa.last; i++) {
			uint64_t c0 = (i - pa.first) * cs, c1 = c0 + cs;
			if (c1 > len)
				c1 = len;
			if (c1 > got64) {
				snprintf(detail, sizeof(detail), "chunk %llu: byte stream ends at %llu",
					 (unsigned long long)i, (unsigned long long)(off + got64));
				rc = found("size_mismatch", detail, arg);
				break;
			}
			if (!digest_eq(checksum_buf(buf + c0, (size_t)(c1 - c0)), pa.d[i - pa.first])) {
				snprintf(detail, sizeof(detail), "chunk %llu (bytes %llu-%llu) does not match its checksum",
					 (unsigned long long)i, (unsigned long long)(off + c0),
					 (unsigned long long)(off + c1 - 1));
				rc = found("checksum_mismatch", detail, arg);
				if (rc)
					break;
			}
		}
		if (got64 < len)
			break;
		next = pa.last + 1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(pa.d);
	free(pa.a);
	return rc == 1 ? 0 : rc;     /* 1: the caller had seen enough */
}

/* Digest of an object's content as recorded: its chunk digests (dfile) and
 * its key-value part, in key order. */
struct summary_args {
	struct ofs_oid oid;
	struct ofs_attr *a;
	struct checksum_stream *cs;
	bool dirdata, corrupt;
	struct kv_seq *seq;              /* many in OID order: [0] chunks, [1] key-values */
};

static int sum_chunk(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct summary_args *sa = arg;
	struct ofs_dirent d;

	checksum_stream_update(sa->cs, k, kn);
	checksum_stream_update(sa->cs, v, vn);
	if (sa->dirdata && rec_decode_dirent(v, vn, &d) != 0)
		sa->corrupt = true;
	return 0;
}

static int summary_txn(struct kv_txn *t, void *arg)
{
	struct summary_args *sa = arg;
	int rc = get_object(t, sa->oid, sa->a);
	uint8_t sz[8];

	if (rc)
		return rc;
	for (int i = 0; i < 8; i++)
		sz[i] = (uint8_t)(sa->a->size >> (56 - 8 * i));
	checksum_stream_update(sa->cs, sz, sizeof(sz));
	sa->dirdata = false;
	rc = sa->seq ? kv_scan_seq(t, KV_CHUNKS, &sa->seq[0], sa->oid.b, OFS_OID_LEN, sum_chunk, sa)
		     : kv_scan(t, KV_CHUNKS, sa->oid.b, OFS_OID_LEN, NULL, 0, sum_chunk, sa);
	sa->dirdata = sa->a->type == OFS_OBJ_DIRDATA;
	if (!rc)
		rc = sa->seq ? kv_scan_seq(t, KV_KEYVAL, &sa->seq[1], sa->oid.b, OFS_OID_LEN,
					   sum_chunk, sa)
			     : kv_scan(t, KV_KEYVAL, sa->oid.b, OFS_OID_LEN, NULL, 0, sum_chunk, sa);
	return rc;
}

/* The summary summary_txn read (present). */
static void summary_fill(const struct summary_args *sa, struct ofs_summary *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->present = true;
	sm->version = sa->a->version;
	sm->size = sa->a->size;
	sm->digest = checksum_stream_final(sa->cs);
	sm->corrupt = sa->corrupt;
	sm->type = sa->a->type;
	sm->backref = sa->a->backref;
}

int store_summary(struct store *s, struct ofs_oid oid, struct ofs_summary *sm)
{
	struct summary_args sa = { .oid = oid };
	int rc;

	sa.a = malloc(sizeof(*sa.a));
	sa.cs = checksum_stream_new();
	if (!sa.a || !sa.cs) {
		free(sa.a);
		checksum_stream_free(sa.cs);
		return -ENOMEM;
	}
	pthread_rwlock_rdlock(obj_lock(s, oid));
	rc = kv_view(s->kv, summary_txn, &sa);
	pthread_rwlock_unlock(obj_lock(s, oid));
	if (!rc)
		summary_fill(&sa, sm);
	checksum_stream_free(sa.cs);
	free(sa.a);
	return rc;
}

/* ---- catching up by changes ------------------------------------------------ */

struct changes_args {
	struct summary_args sa;
	uint64_t since, base, version;
	struct wbuf *w;
	const uint8_t *notes;
	size_t n;
	const struct ofs_digest *want;
	struct ofs_sid sid;              /* this server (its mark goes) */
	struct ofs_digest got;           /* the content digest read */
};

static int changes_txn(struct kv_txn *t, void *arg)
{
	struct changes_args *ca = arg;
	int rc = get_object(t, ca->sa.oid, ca->sa.a);

	if (rc)
		return rc;
	ca->version = ca->sa.a->version;
	if (ca->version < ca->since)
		return -ERANGE;
	rc = changelog_encode(t, ca->sa.oid, ca->since, ca->version, ca->w);
	if (!rc)
		rc = summary_txn(t, &ca->sa);
	if (!rc)
		ca->got = checksum_stream_final(ca->sa.cs);
	return rc;
}

static int changes_run(struct store *s, kv_fn fn, struct changes_args *ca, bool update)
{
	int rc;

	ca->sa.a = malloc(sizeof(*ca->sa.a));
	ca->sa.cs = checksum_stream_new();
	if (!ca->sa.a || !ca->sa.cs)
		rc = -ENOMEM;
	else
		rc = update ? kv_update(s->kv, fn, ca) : kv_view(s->kv, fn, ca);
	checksum_stream_free(ca->sa.cs);
	free(ca->sa.a);
	return rc;
}

int store_changes(struct store *s, struct ofs_oid oid, uint64_t since, struct wbuf *w,
		  uint64_t *version, struct ofs_digest *digest)
{
	struct changes_args ca = { .sa.oid = oid, .since = since, .w = w };
	size_t start = w->len;
	int rc = changes_run(s, changes_txn, &ca, false);

	if (rc) {
		w->len = start;
		return rc;
	}
	*version = ca.version;
	*digest = ca.got;
	return 0;
}

static int catch_up_txn(struct kv_txn *t, void *arg)
{
	struct changes_args *ca = arg;
	struct ofs_attr *a = ca->sa.a;
	uint8_t mark[OFS_OID_LEN * 2];
	int rc = get_object(t, ca->sa.oid, a);

	if (rc)
		return rc;
	if (a->version != ca->base)
		return -EAGAIN;
	rc = changelog_apply(t, ca->sa.oid, ca->since, ca->version, ca->notes, ca->n);
	if (rc)
		return rc;
	a->version = ca->version;
	if ((rc = put_object(t, ca->sa.oid, a)) || (rc = summary_txn(t, &ca->sa)))
		return rc;
	ca->got = checksum_stream_final(ca->sa.cs);
	if (!digest_eq(ca->got, *ca->want))
		return -ESTALE;              /* kv_update puts every write back */
	memcpy(mark, ca->sa.oid.b, OFS_OID_LEN);
	memcpy(mark + OFS_OID_LEN, ca->sid.b, OFS_OID_LEN);
	rc = kv_del(t, KV_STALE, mark, sizeof(mark));
	return rc == -ENOENT ? 0 : rc;
}

int store_catch_up_changes(struct store *s, struct ofs_oid oid, uint64_t base, uint64_t since,
			   const uint8_t *notes, size_t n, uint64_t version,
			   const struct ofs_digest *digest)
{
	struct changes_args ca = { .sa.oid = oid, .base = base, .since = since, .notes = notes,
				   .n = n, .version = version, .want = digest, .sid = s->sid };

	if (s->read_only)
		return -EROFS;
	return changes_run(s, catch_up_txn, &ca, true);
}

/* Many at once, in one read transaction (a snapshot: each summary is of
 * a committed state of its object). */
struct summary_many_args {
	const struct ofs_oid *oids;
	size_t n;
	struct ofs_summary *sm;
	struct summary_args sa;
	struct kv_seq seq[2];            /* (the OIDs come sorted: a batch's) */
};

static int summary_many_txn(struct kv_txn *t, void *arg)
{
	struct summary_many_args *ma = arg;

	memset(ma->seq, 0, sizeof(ma->seq));
	ma->sa.seq = ma->seq;

	for (size_t i = 0; i < ma->n; i++) {
		struct ofs_summary *sm = &ma->sm[i];
		int rc;
		memset(sm, 0, sizeof(*sm));
		ma->sa.oid = ma->oids[i];
		ma->sa.corrupt = false;
		checksum_stream_reset(ma->sa.cs);
		rc = summary_txn(t, &ma->sa);
		if (rc == -ENOENT)
			continue;            /* not here: not present */
		if (rc == -OFS_ECORRUPT) {
			sm->present = sm->corrupt = true;   /* its record does not decode */
			continue;
		}
		if (rc)
			return rc;
		summary_fill(&ma->sa, sm);
	}
	return 0;
}

int store_summary_many(struct store *s, const struct ofs_oid *oids, size_t n,
		       struct ofs_summary *sm)
{
	struct summary_many_args ma = { .oids = oids, .n = n, .sm = sm };
	int rc;

	ma.sa.a = malloc(sizeof(*ma.sa.a));
	ma.sa.cs = checksum_stream_new();
	if (!ma.sa.a || !ma.sa.cs)
		rc = -ENOMEM;
	else
		rc = kv_view(s->kv, summary_many_txn, &ma);
	for (size_t i = 0; !rc && i < n; i++) {
		if (!sm[i].present)
			continue;
		rc = store_behind(s, oids[i]);
		sm[i].behind = rc == 1;
		rc = rc < 0 ? rc : 0;
	}
	checksum_stream_free(ma.sa.cs);
	free(ma.sa.a);
	return rc;
}

struct points_many_args {
	const struct store_points_q *q;
	size_t n;
	uint8_t *ans;
	struct ofs_attr *a;              /* the owner last decoded ... */
	struct ofs_oid at;               /* ... this one (zero: none) */
	struct ofs_attr *da;             /* a dirdata's record */
	bool have;                       /* it is here and decoded */
	struct ofs_oid dd_at;            /* the dirdata last looked at ... */
	bool dd_ok;                      /* ... is here, and is one */
};

/* Is name -> child in the local dirdata dd (an object of that type)? */
static bool dirdata_names(struct kv_txn *t, struct points_many_args *pm,
			  const struct ofs_handle *dd, const char *name, struct ofs_oid child)
{
	uint8_t key[REC_KV_KEY_MAX];
	struct ofs_dirent d;
	const void *v;
	size_t vn, kn;

	if (oid_is_zero(pm->dd_at) || !oid_eq(pm->dd_at, dd->oid)) {
		/* (a directory's files in a batch share its few dirdata) */
		pm->dd_at = dd->oid;
		pm->dd_ok = get_object(t, dd->oid, pm->da) == 0 && pm->da->type == OFS_OBJ_DIRDATA;
	}
	if (!pm->dd_ok)
		return false;
	kn = rec_kv_key(dd->oid, name, strlen(name), key);
	return kv_get(t, KV_KEYVAL, key, kn, &v, &vn) == 0 && rec_decode_dirent(v, vn, &d) == 0 &&
	       oid_eq(d.handle.oid, child);
}

static int points_many_txn(struct kv_txn *t, void *arg)
{
	struct points_many_args *pm = arg;

	for (size_t i = 0; i < pm->n; i++) {
		const struct store_points_q *q = &pm->q[i];
		const struct ofs_attr *a = pm->a;
		uint8_t ans = STORE_POINTS_UNSURE;

		if (!oid_eq(q->owner, pm->at) || oid_is_zero(pm->at)) {
			pm->at = q->owner;
			pm->have = get_object(t, q->owner, pm->a) == 0;
		}
		if (pm->have && (a->type == OFS_OBJ_METAFILE || a->type == OFS_OBJ_DIRECTORY) &&
		    a->nparts == 0) {
			ans = STORE_POINTS_BUILDING;
		} else if (pm->have && a->type == OFS_OBJ_METAFILE) {
			for (uint16_t j = 0; j < a->nparts && j < OFS_MAX_STRIPES; j++)
				if (oid_eq(a->parts[j].oid, q->child))
					ans = j == q->stripe ? STORE_POINTS_YES : STORE_POINTS_ELSEWHERE;
		} else if (pm->have && a->type == OFS_OBJ_DIRECTORY) {
			for (uint16_t j = 0; j < a->nparts && j < OFS_MAX_STRIPES; j++)
				if (oid_eq(a->parts[j].oid, q->child))
					ans = STORE_POINTS_YES;          /* one of its dirdata */
			if (!ans && q->name && q->name[0] && ofs_name_valid(q->name) &&
			    dirdata_names(t, pm, &a->parts[ofs_name_hash(q->name) % a->nparts],
					  q->name, q->child))
				ans = STORE_POINTS_YES;
		}
		pm->ans[i] = ans;
	}
	return 0;
}

int store_points_many(struct store *s, const struct store_points_q *q, size_t n, uint8_t *ans)
{
	struct points_many_args pm = { .q = q, .n = n, .ans = ans };
	int rc;

	memset(ans, STORE_POINTS_UNSURE, n);
	pm.a = malloc(sizeof(*pm.a));
	pm.da = malloc(sizeof(*pm.da));
	rc = pm.a && pm.da ? kv_view(s->kv, points_many_txn, &pm) : -ENOMEM;
	free(pm.a);
	free(pm.da);
	return rc;
}

/* ---- expert tools (ofs-server tool): fault injection and surgery ---------- */

struct tool_args {
	struct ofs_oid oid;
	const void *k, *v;
	size_t kn, vn;
	uint64_t version;
	struct ofs_attr *a;
};

static int tool_setkey_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ta->oid, ta->k, ta->kn, key);
	const void *v;
	size_t vn;
	int rc = kv_get(t, KV_OBJECTS, ta->oid.b, OFS_OID_LEN, &v, &vn);

	if (!rc)
		rc = changelog_forget(t, ta->oid);   /* (an edit with no version) */
	if (rc)
		return rc;
	return ta->v ? kv_put(t, KV_KEYVAL, key, kn, ta->v, ta->vn) : kv_del(t, KV_KEYVAL, key, kn);
}

int store_tool_set_key(struct store *s, struct ofs_oid oid, const void *k, size_t kn,
		       const void *v, size_t vn)
{
	struct tool_args ta = { .oid = oid, .k = k, .kn = kn, .v = v ? v : "", .vn = vn };

	if (s->read_only)
		return -EROFS;
	if (kn == 0 || kn > OFS_MAX_KEY || vn > OFS_MAX_VALUE)
		return -EINVAL;
	return kv_update(s->kv, tool_setkey_txn, &ta);
}

int store_tool_rm_key(struct store *s, struct ofs_oid oid, const void *k, size_t kn)
{
	struct tool_args ta = { .oid = oid, .k = k, .kn = kn };

	if (s->read_only)
		return -EROFS;
	if (kn == 0 || kn > OFS_MAX_KEY)
		return -EINVAL;
	return kv_update(s->kv, tool_setkey_txn, &ta);
}

static int tool_version_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	int rc = get_object(t, ta->oid, ta->a);

	if (!rc)
		rc = changelog_forget(t, ta->oid);   /* (a version set by hand) */
	if (rc)
		return rc;
	ta->a->version = ta->version;
	return put_object(t, ta->oid, ta->a);
}

static int tool_backref_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	const struct ofs_backref *br = ta->v;
	int rc = get_object(t, ta->oid, ta->a);

	if (rc)
		return rc;
	ta->a->backref = *br;
	return put_object(t, ta->oid, ta->a);
}

int store_tool_set_backref(struct store *s, struct ofs_oid oid, const struct ofs_backref *br)
{
	struct tool_args ta = { .oid = oid, .v = br };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (br->name[0] && !ofs_name_valid(br->name))
		return -OFS_ENAME;
	ta.a = malloc(sizeof(*ta.a));
	if (!ta.a)
		return -ENOMEM;
	rc = kv_update(s->kv, tool_backref_txn, &ta);
	free(ta.a);
	return rc;
}

static int tool_part_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	int rc = get_object(t, ta->oid, ta->a);

	if (rc)
		return rc;
	if ((ta->a->type != OFS_OBJ_METAFILE && ta->a->type != OFS_OBJ_DIRECTORY) ||
	    ta->version >= ta->a->nparts)
		return -EINVAL;
	memcpy(ta->a->parts[ta->version].oid.b, ta->v, OFS_OID_LEN);
	if (ta->vn) {
		ta->a->parts[ta->version].nsids = (uint8_t)ta->vn;
		memcpy(ta->a->parts[ta->version].sids, ta->k, ta->vn * sizeof(struct ofs_sid));
	}
	return put_object(t, ta->oid, ta->a);
}

int store_tool_set_part(struct store *s, struct ofs_oid oid, uint32_t index, struct ofs_oid part,
			const struct ofs_sid *sids, size_t nsids)
{
	struct tool_args ta = { .oid = oid, .v = part.b, .version = index, .k = sids, .vn = nsids };
	int rc;

	if (s->read_only)
		return -EROFS;
	if (nsids > OFS_MAX_REPLICAS)
		return -EINVAL;
	ta.a = malloc(sizeof(*ta.a));
	if (!ta.a)
		return -ENOMEM;
	rc = kv_update(s->kv, tool_part_txn, &ta);
	free(ta.a);
	return rc;
}

int store_tool_set_version(struct store *s, struct ofs_oid oid, uint64_t version)
{
	struct tool_args ta = { .oid = oid, .version = version };
	int rc;

	if (s->read_only)
		return -EROFS;
	ta.a = malloc(sizeof(*ta.a));
	if (!ta.a)
		return -ENOMEM;
	rc = kv_update(s->kv, tool_version_txn, &ta);
	free(ta.a);
	return rc;
}

static int version_past_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	int rc = get_object(t, ta->oid, ta->a);

	if (rc)
		return rc;
	if (ta->a->version >= ta->version)
		return 0;
	ta->a->version = ta->version;
	return put_object(t, ta->oid, ta->a);
}

int store_version_at_least(struct store *s, struct ofs_oid oid, uint64_t version)
{
	struct tool_args ta = { .oid = oid, .version = version };
	pthread_rwlock_t *l = obj_lock(s, oid);
	int rc;

	if (s->read_only)
		return -EROFS;
	ta.a = malloc(sizeof(*ta.a));
	if (!ta.a)
		return -ENOMEM;
	pthread_rwlock_wrlock(l);
	rc = kv_update(s->kv, version_past_txn, &ta);
	pthread_rwlock_unlock(l);
	free(ta.a);
	return rc;
}

/* ---- receiving a copy from a sibling (repair, moves) ---------------------- */

struct in_kv {
	uint8_t *k, *v;
	size_t kn, vn;
};

struct store_incoming {
	struct store *s;
	struct ofs_oid oid;
	struct ofs_attr a;               /* the copy's attributes, as its source has them */
	int fd;                          /* DATA/incoming/OIDHEX (dfile), else -1 */
	uint64_t written;
	struct checksum_stream *chunk;   /* the chunk being written */
	uint64_t chunk_fill;
	struct ofs_digest *d;            /* digests of the chunks finished */
	size_t nd, capd;
	struct in_kv *kvs;
	size_t nkv, capkv;
	int before;                      /* local state at begin: -ENOENT, -OFS_ECORRUPT or 0 */
	uint64_t before_version;
};

static int incoming_state(struct store *s, struct ofs_oid oid, int *state, uint64_t *version)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, oid, a);
	*version = rc == 0 ? a->version : 0;
	free(a);
	if (rc == 0 || rc == -ENOENT || rc == -OFS_ECORRUPT) {
		*state = rc;
		return 0;
	}
	return rc;
}

int store_incoming_begin(struct store *s, struct ofs_oid oid, const struct ofs_attr *a,
			 struct store_incoming **out)
{
	struct store_incoming *in;
	int rc;

	if (s->read_only)
		return -EROFS;
	if (a->type < OFS_OBJ_METAFILE || a->type > OFS_OBJ_DIRDATA)
		return -EINVAL;
	if (a->type == OFS_OBJ_DFILE &&
	    (!is_pow2(a->chunk_size) || a->chunk_size < STORE_MIN_CHUNK ||
	     a->chunk_size > STORE_MAX_CHUNK || a->size > STORE_MAX_STREAM))
		return -EINVAL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->s = s;
	in->oid = oid;
	in->a = *a;
	in->fd = -1;
	rc = incoming_state(s, oid, &in->before, &in->before_version);
	if (!rc && a->type == OFS_OBJ_DFILE) {
		in->chunk = checksum_stream_new();
		rc = in->chunk ? bstream_incoming_create(s->datadir, oid, &in->fd) : -ENOMEM;
	}
	if (rc) {
		store_incoming_free(in);
		return rc;
	}
	*out = in;
	return 0;
}

static int incoming_push_digest(struct store_incoming *in)
{
	if (in->nd == in->capd) {
		size_t cap = in->capd ? in->capd * 2 : 64;
		struct ofs_digest *d = realloc(in->d, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		in->d = d;
		in->capd = cap;
	}
	in->d[in->nd++] = checksum_stream_final(in->chunk);
	checksum_stream_free(in->chunk);
	in->chunk = checksum_stream_new();
	in->chunk_fill = 0;
	return in->chunk ? 0 : -ENOMEM;
}

int store_incoming_write(struct store_incoming *in, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int rc;

	if (in->fd < 0)
		return -OFS_ETYPE;
	if (in->written + len > in->a.size)
		return -EFBIG;
	rc = bstream_pwrite(in->fd, buf, len, in->written);
	if (rc)
		return rc;
	bstream_writeback(in->fd, in->written, len);   /* the disk works during the fetch */
	in->written += len;
	while (len) {
		size_t take = in->a.chunk_size - in->chunk_fill;
		if (take > len)
			take = len;
		checksum_stream_update(in->chunk, p, take);
		in->chunk_fill += take;
		p += take;
		len -= take;
		if (in->chunk_fill == in->a.chunk_size && (rc = incoming_push_digest(in)) != 0)
			return rc;
	}
	return 0;
}

int store_incoming_kv(struct store_incoming *in, const void *k, size_t kn, const void *v,
		      size_t vn)
{
	struct in_kv *e;

	if (kn == 0 || kn > OFS_MAX_KEY || vn > OFS_MAX_VALUE)
		return -EINVAL;
	if (in->nkv) {
		const struct in_kv *p = &in->kvs[in->nkv - 1];
		int c = memcmp(k, p->k, kn < p->kn ? kn : p->kn);
		if (c < 0 || (c == 0 && kn <= p->kn))
			return -EINVAL;      /* keys come in order, once each */
	}
	if (in->nkv == in->capkv) {
		size_t cap = in->capkv ? in->capkv * 2 : 16;
		struct in_kv *n = realloc(in->kvs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		in->kvs = n;
		in->capkv = cap;
	}
	e = &in->kvs[in->nkv];
	e->k = malloc(kn);
	e->v = malloc(vn ? vn : 1);
	if (!e->k || !e->v) {
		free(e->k);
		free(e->v);
		return -ENOMEM;
	}
	memcpy(e->k, k, kn);
	if (vn)
		memcpy(e->v, v, vn);
	e->kn = kn;
	e->vn = vn;
	in->nkv++;
	return 0;
}

/* The last, partial chunk's digest once every byte is in. */
static int incoming_finish_bytes(struct store_incoming *in)
{
	if (in->a.type != OFS_OBJ_DFILE)
		return 0;
	if (in->written != in->a.size)
		return -EIO;                 /* short: the source sent less than its size */
	if (in->chunk_fill && in->nd * (uint64_t)in->a.chunk_size < in->a.size)
		return incoming_push_digest(in);
	return 0;
}

int store_incoming_summary(struct store_incoming *in, struct ofs_digest *d)
{
	struct checksum_stream *cs;
	uint8_t sz[8];
	int rc = incoming_finish_bytes(in);

	if (rc)
		return rc;
	cs = checksum_stream_new();
	if (!cs)
		return -ENOMEM;
	/* As store_summary hashes the records: size, chunk records, pairs. */
	for (int i = 0; i < 8; i++)
		sz[i] = (uint8_t)(in->a.size >> (56 - 8 * i));
	checksum_stream_update(cs, sz, sizeof(sz));
	for (size_t i = 0; i < in->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		rec_chunk_key(in->oid, i, key);
		checksum_stream_update(cs, key, sizeof(key));
		checksum_stream_update(cs, in->d[i].b, OFS_DIGEST_LEN);
	}
	for (size_t i = 0; i < in->nkv; i++) {
		uint8_t key[REC_KV_KEY_MAX];
		size_t kn = rec_kv_key(in->oid, in->kvs[i].k, in->kvs[i].kn, key);
		checksum_stream_update(cs, key, kn);
		checksum_stream_update(cs, in->kvs[i].v, in->kvs[i].vn);
	}
	*d = checksum_stream_final(cs);
	checksum_stream_free(cs);
	return 0;
}

struct install_args {
	struct store_incoming *in;
	bool intent;
};

static int install_txn(struct kv_txn *t, void *arg)
{
	struct install_args *ia = arg;
	struct store_incoming *in = ia->in;
	uint8_t skey[OFS_OID_LEN * 2];
	int rc;

	if (ia->intent &&
	    (rc = kv_put(t, KV_INTENT, in->oid.b, OFS_OID_LEN, "install", 7)) != 0)
		return rc;
	if ((rc = kv_del_prefix(t, KV_CHUNKS, in->oid.b, OFS_OID_LEN)) ||
	    (rc = kv_del_prefix(t, KV_KEYVAL, in->oid.b, OFS_OID_LEN)) ||
	    (rc = changelog_forget(t, in->oid)))
		return rc;
	for (size_t i = 0; i < in->nd; i++) {
		uint8_t key[REC_CHUNK_KEY];
		rec_chunk_key(in->oid, i, key);
		if ((rc = kv_put(t, KV_CHUNKS, key, sizeof(key), in->d[i].b, OFS_DIGEST_LEN)))
			return rc;
	}
	for (size_t i = 0; i < in->nkv; i++) {
		uint8_t key[REC_KV_KEY_MAX];
		size_t kn = rec_kv_key(in->oid, in->kvs[i].k, in->kvs[i].kn, key);
		if ((rc = kv_put(t, KV_KEYVAL, key, kn, in->kvs[i].v, in->kvs[i].vn)))
			return rc;
	}
	/* This copy is current now: it is no longer behind. */
	memcpy(skey, in->oid.b, OFS_OID_LEN);
	memcpy(skey + OFS_OID_LEN, in->s->sid.b, OFS_OID_LEN);
	rc = kv_del(t, KV_STALE, skey, sizeof(skey));
	if (rc && rc != -ENOENT)
		return rc;
	return put_object(t, in->oid, &in->a);
}

static int intent_done_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	int rc = kv_del(t, KV_INTENT, oid->b, OFS_OID_LEN);

	return rc == -ENOENT ? 0 : rc;
}

int store_incoming_commit(struct store_incoming *in, const char *tag)
{
	struct store *s = in->s;
	pthread_rwlock_t *l = obj_lock(s, in->oid);
	struct install_args ia = { .in = in, .intent = in->a.type == OFS_OBJ_DFILE };
	int state, rc = incoming_finish_bytes(in);
	uint64_t version;

	if (rc)
		return rc;
	if (in->fd >= 0) {
		if ((rc = bstream_datasync(in->fd)) || (rc = bstream_incoming_sync(s->datadir)))
			return rc;
	}
	pthread_rwlock_wrlock(l);
	/* The copy here must be as it was when the fetch began: a write that
	 * reached it meanwhile would be lost. */
	rc = incoming_state(s, in->oid, &state, &version);
	if (!rc && (state != in->before || version != in->before_version))
		rc = -EAGAIN;
	if (!rc && pending_find(s, in->oid))
		rc = -EBUSY;                 /* unstable writes wait for a commit */
	/* The old bytes are kept aside first (a wrong repair can be undone). */
	if (!rc && state != -ENOENT)
		rc = bstream_quarantine(s->datadir, in->oid, version, tag);
	if (!rc)
		rc = kv_update(s->kv, install_txn, &ia);
	if (!rc && ia.intent) {
		/* Records first, with the intent; a crash before the rename
		 * is finished by store_open, which installs the file. */
		rc = bstream_install(s->datadir, in->oid);
		if (!rc)
			rc = kv_update(s->kv, intent_done_txn, &in->oid);
		if (rc)
			log_error("installing the copy of an object failed: %s "
				  "(finished when the server next starts)", ofs_strerror(rc));
	}
	pthread_rwlock_unlock(l);
	if (!rc && in->fd >= 0) {
		close(in->fd);
		in->fd = -1;
		in->a.type = OFS_OBJ_NONE;   /* installed: nothing to drop */
	}
	return rc;
}

void store_incoming_free(struct store_incoming *in)
{
	if (!in)
		return;
	if (in->fd >= 0) {
		close(in->fd);
		bstream_incoming_drop(in->s->datadir, in->oid);
	}
	checksum_stream_free(in->chunk);
	free(in->d);
	for (size_t i = 0; i < in->nkv; i++) {
		free(in->kvs[i].k);
		free(in->kvs[i].v);
	}
	free(in->kvs);
	free(in);
}

/* At open: finish installs a crash interrupted, drop incoming files that
 * never got an intent. */
struct recover_args {
	struct store *s;
	int rc;
};

static int intent_exists_txn(struct kv_txn *t, void *arg)
{
	const struct ofs_oid *oid = arg;
	const void *v;
	size_t vn;

	return kv_get(t, KV_INTENT, oid->b, OFS_OID_LEN, &v, &vn);
}

static int recover_one(struct ofs_oid oid, void *arg)
{
	struct recover_args *ra = arg;
	struct ofs_oid o = oid;
	int rc = kv_view(ra->s->kv, intent_exists_txn, &o);
	char hex[OFS_OID_HEX];

	oid_to_hex(oid, hex);
	if (rc == -ENOENT) {
		log_info("dropping an unfinished incoming copy of %s", hex);
		return bstream_incoming_drop(ra->s->datadir, oid);
	}
	if (rc)
		return rc;
	log_info("installing the incoming copy of %s (its records were committed)", hex);
	rc = bstream_install(ra->s->datadir, oid);
	return rc;
}

static int intents_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct ofs_oid *list = arg;
	(void)v;
	(void)vn;
	if (kn == OFS_OID_LEN && list[0].b[0] < 255) {
		memcpy(list[1 + list[0].b[0]].b, k, OFS_OID_LEN);
		list[0].b[0]++;
	}
	return 0;
}

static int intents_txn(struct kv_txn *t, void *arg)
{
	return kv_scan(t, KV_INTENT, NULL, 0, NULL, 0, intents_scan, arg);
}

static int store_recover(struct store *s)
{
	struct recover_args ra = { .s = s };
	struct ofs_oid *list;
	int rc = bstream_incoming_list(s->datadir, recover_one, &ra);

	if (rc)
		return rc;
	/* Intents whose file is gone were installed: forget them. */
	list = calloc(256, sizeof(*list));
	if (!list)
		return -ENOMEM;
	do {
		list[0].b[0] = 0;
		rc = kv_view(s->kv, intents_txn, list);
		for (unsigned i = 0; !rc && i < list[0].b[0]; i++) {
			char hex[OFS_OID_HEX];
			oid_to_hex(list[1 + i], hex);
			log_info("finishing the install of the incoming copy of %s (it was in place)", hex);
			rc = kv_update(s->kv, intent_done_txn, &list[1 + i]);
		}
	} while (!rc && list[0].b[0] == 255);
	free(list);
	return rc;
}

int store_quarantine_purge(struct store *s, long long max_age_s, unsigned *purged)
{
	*purged = 0;
	if (s->read_only)
		return -EROFS;
	return bstream_quarantine_purge(s->datadir, max_age_s, purged);
}

struct stale_del_args {
	struct ofs_oid oid;
	struct ofs_sid sid;
	uint64_t version;
	struct ofs_attr *a;
};

static int stale_del_txn(struct kv_txn *t, void *arg)
{
	struct stale_del_args *sd = arg;
	uint8_t key[OFS_OID_LEN * 2];
	int rc = get_object(t, sd->oid, sd->a);

	if (rc == 0 && sd->a->version > sd->version)
		return 0;                    /* newer here: that copy is still behind */
	if (rc == 0) {
		/* its SID leaves the object's stale list with the record */
		uint8_t n = 0;
		for (uint8_t i = 0; i < sd->a->nstale; i++)
			if (!sid_eq(sd->a->stale[i], sd->sid))
				sd->a->stale[n++] = sd->a->stale[i];
		if (n != sd->a->nstale) {
			sd->a->nstale = n;
			rc = put_object(t, sd->oid, sd->a);
			if (rc)
				return rc;
		}
	}
	memcpy(key, sd->oid.b, OFS_OID_LEN);
	memcpy(key + OFS_OID_LEN, sd->sid.b, OFS_OID_LEN);
	rc = kv_del(t, KV_STALE, key, sizeof(key));
	return rc == -ENOENT ? 0 : rc;
}

int store_stale_del(struct store *s, struct ofs_oid oid, struct ofs_sid sid, uint64_t version)
{
	struct stale_del_args sd = { .oid = oid, .sid = sid, .version = version };
	int rc;

	if (s->read_only)
		return -EROFS;
	sd.a = malloc(sizeof(*sd.a));
	if (!sd.a)
		return -ENOMEM;
	rc = kv_update(s->kv, stale_del_txn, &sd);
	free(sd.a);
	return rc;
}
