/*
 * ofs_io.c - libofs's files: a file's bytes striped over its dfiles,
 * written to each dfile's primary in rounds with PIPE_DEPTH requests in
 * flight, read back the same way; put and get (see ofs.h, ofs_impl.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ofs_impl.h"
#include "lib/cap.h"
#include "lib/fdio.h"

/* ---- files -------------------------------------------------------------- */

struct layout {
	uint64_t strip;      /* S */
	uint16_t n;          /* N */
};


/*
 * Move n bytes at dfile offset off in OFS_IO_PIECE requests, keeping
 * PIPE_DEPTH of them in flight so that the transfer of one overlaps the
 * server's disk work on the one before. write: from p; read: into p, or,
 * streamed (a piece_sink), into a ring of PIPE_DEPTH pieces, each handed
 * on in order as it arrives and its slot reused for the next request -
 * so a long read keeps the pipe full from its first byte to its last
 * instead of emptying it at every round. *done: the bytes moved in order
 * before any error (a retry on another copy goes on from there).
 */
#define PIPE_DEPTH 4

struct piece_sink {
	uint8_t *ring;                      /* PIPE_DEPTH * OFS_IO_PIECE bytes */
	int (*deliver)(void *arg, const uint8_t *p, size_t n);
	void *arg;
};

static int dfile_io_one(struct conn *cn, const struct ofs_handle *h, const uint8_t *cap,
			size_t caplen, bool write, uint64_t off, uint8_t *p, size_t n,
			const struct piece_sink *ps, size_t *done)
{
	struct ofs_req *q = cl_req_new(write ? OFS_OP_WRITE : OFS_OP_READ, h->oid);
	uint64_t ids[PIPE_DEPTH];
	uint8_t *dst[PIPE_DEPTH];
	size_t len[PIPE_DEPTH];
	int head = 0, inflight = 0, rc = 0;

	*done = 0;
	if (!q)
		return -ENOMEM;
	q->cap = cap;
	q->cap_len = (uint16_t)caplen;
	while ((n && !rc) || inflight) {
		if (n && !rc && inflight < PIPE_DEPTH) {
			int slot = (head + inflight) % PIPE_DEPTH;
			size_t piece = n < OFS_IO_PIECE ? n : OFS_IO_PIECE;
			q->offset = off;
			if (write) {
				q->data = p;
				q->data_len = piece;
				q->flags = OFS_WRITE_UNSTABLE;
			} else {
				q->length = (uint32_t)piece;
			}
			cl_bound(cn, q);
			rc = conn_send(cn, q, &ids[slot]);
			if (rc) {
				if (conn_is_transport_error(rc))
					break;   /* the socket is gone, and the replies */
				continue;
			}
			dst[slot] = ps ? ps->ring + (size_t)slot * OFS_IO_PIECE : p;
			len[slot] = piece;
			inflight++;
			off += piece;
			if (!ps)
				p += piece;
			n -= piece;
			continue;
		}
		size_t got = 0;
		int r;
		if (write) {
			r = conn_recv(cn, ids[head], NULL, NULL);
		} else {
			r = conn_recv_data(cn, ids[head], dst[head], len[head], &got);
			if (!r && got < len[head])
				r = -EIO;   /* the dfile is shorter than its file says */
		}
		if (!r && !rc && ps)
			r = ps->deliver(ps->arg, dst[head], len[head]);
		if (!r && !rc)
			*done += len[head];
		if (r && !rc)
			rc = r;
		head = (head + 1) % PIPE_DEPTH;
		inflight--;
		if (r && conn_is_transport_error(r))
			break;
	}
	free(q);
	return rc;
}

/*
 * Writes go to the primary only (it forwards them; a put whose primary
 * fails is failed). Reads go to the first copy that answers, and move to
 * the next when one does not answer or does not verify; the skipped copy
 * is reported to the server that served the read.
 */
static int dfile_io(struct ofs_client *c, const struct ofs_handle *h, bool write,
		    uint64_t off, uint8_t *p, size_t n, const struct piece_sink *ps)
{
	struct ofs_sid order[OFS_MAX_REPLICAS];
	size_t norder = cl_try_order(c, h, order);
	int rc = -OFS_EUNREACHABLE;
	size_t bad = 0;
	struct ofs_sid badsid[OFS_MAX_REPLICAS];
	const char *badwhy[OFS_MAX_REPLICAS];

	struct cl_moving moving = { .started = false };
	uint8_t cap[CAP_MAX_LEN];
	size_t caplen = c->caps ? cl_caps_for(c, h->oid, cap) : 0;
	bool renewed = false;

	for (size_t i = 0; i < norder; i++) {
		struct conn *cn = cl_conn_of(c, order[i]);
		size_t done = 0;
		rc = cn ? dfile_io_one(cn, h, cap, caplen, write, off, p, n, ps, &done) :
			  -ECONNREFUSED;
		if (!write && done) {
			/* (what arrived in order stays: the rest from the next try) */
			off += done;
			if (!ps)
				p += done;
			n -= done;
		}
		if (caplen && CL_CAP_RENEW(rc) && !renewed) {
			/* Expired, or its key rotated away mid-file: a new one. */
			renewed = true;
			if (cl_caps_renew(c, h->oid) == 0)
				caplen = cl_caps_for(c, h->oid, cap);
			i--;
			continue;
		}
		if (rc == -OFS_EMOVING && cl_moving_wait(&moving)) {
			/* Held still while a copy moves: a moment, then again. */
			i--;
			continue;
		}
		if (rc == -OFS_ENOOBJ && i + 1 < norder) {
			badsid[bad] = order[i];
			badwhy[bad++] = "copy moved away";
			continue;            /* (a write too: the next copy takes it) */
		}
		if (rc == -OFS_ENOOBJ)
			rc = -ENOENT;
		if (conn_is_transport_error(rc) || rc == -ECONNREFUSED) {
			cl_mark_down(c, order[i]);
			rc = -OFS_EUNREACHABLE;
			badsid[bad] = order[i];
			badwhy[bad++] = "unreachable";
		} else if (!write && (rc == -OFS_ECHECKSUM || rc == -EIO ||
				      ((rc == -ENOENT || rc == -OFS_EBEHIND) && i + 1 < norder))) {
			badsid[bad] = order[i];
			badwhy[bad++] = rc == -EIO ? "short read" :
					rc == -ENOENT ? "copy missing" :
					rc == -OFS_EBEHIND ? "copy behind" : "checksum mismatch on read";
		} else {
			if (!rc)
				for (size_t k = 0; k < bad; k++)
					cl_report(c, order[i], h->oid, badsid[k], badwhy[k]);
			return rc;
		}
		if (write)
			break;
	}
	return cl_map_transport(rc);
}

/* Unstable writes (see OFS_WRITE_UNSTABLE): a put fills new dfiles this
 * way and makes them durable with one COMMIT each (dfile_commit). */
int cl_dfile_write(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		       const uint8_t *p, size_t n)
{
	return dfile_io(c, h, true, off, (uint8_t *)p, n, NULL);
}

int cl_dfile_read(struct ofs_client *c, const struct ofs_handle *h, uint64_t off,
		      uint8_t *p, size_t n)
{
	return dfile_io(c, h, false, off, p, n, NULL);
}

/* Make a dfile's unstable writes durable; *size receives its length. */
int cl_dfile_commit(struct ofs_client *c, const struct ofs_handle *h, uint64_t *size)
{
	struct ofs_req *q = cl_req_new(OFS_OP_COMMIT, h->oid);
	struct ofs_write_reply wr = { 0 };
	uint8_t *b = NULL;
	size_t n = 0;
	int rc;

	if (!q)
		return -ENOMEM;
	rc = cl_call(c, h, q, &b, &n);
	if (!rc)
		rc = proto_decode_write_reply(b, n, &wr);
	if (!rc)
		*size = wr.size;
	free(b);
	free(q);
	return rc;
}

/* Bytes of a file of `size` bytes that land in dfile k. */
static uint64_t dfile_len(const struct layout *lo, uint64_t size, uint16_t k)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t rest = size % round, start = (uint64_t)k * lo->strip;
	uint64_t len = size / round * lo->strip;

	if (rest > start)
		len += rest - start < lo->strip ? rest - start : lo->strip;
	return len;
}

/* How many bytes to move per round: whole stripes, about ROUND_PER_DFILE
 * per dfile (several pipelined requests), at most ROUND_MAX in all. */
#define ROUND_PER_DFILE (4 * (uint64_t)OFS_IO_PIECE)
#define ROUND_MAX ((uint64_t)64 << 20)
static size_t round_bytes(const struct layout *lo)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t want = ROUND_PER_DFILE * lo->n > ROUND_MAX ? ROUND_MAX : ROUND_PER_DFILE * lo->n;
	uint64_t per = want / round;

	return (size_t)(round * (per ? per : 1));
}

/* Scatter buf (file bytes [base, base+len), base a multiple of the round)
 * into per-dfile runs and write each. */
static int write_round(struct ofs_client *c, const struct layout *lo,
		       const struct ofs_handle *dfiles, uint64_t base,
		       const uint8_t *buf, size_t len, uint8_t *scratch)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t dbase = base / round * lo->strip;
	int rc = 0;

	if (lo->n == 1)
		return cl_dfile_write(c, &dfiles[0], base, buf, len);
	for (uint16_t k = 0; k < lo->n && !rc; k++) {
		size_t got = 0;
		for (uint64_t x = (uint64_t)k * lo->strip; x < len; x += round) {
			size_t take = len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
			memcpy(scratch + got, buf + x, take);
			got += take;
		}
		if (got)
			rc = cl_dfile_write(c, &dfiles[k], dbase, scratch, got);
	}
	return rc;
}

static int read_round(struct ofs_client *c, const struct layout *lo,
		      const struct ofs_handle *dfiles, uint64_t base,
		      uint8_t *buf, size_t len, uint8_t *scratch)
{
	uint64_t round = lo->strip * lo->n;
	uint64_t dbase = base / round * lo->strip;
	int rc = 0;

	if (lo->n == 1)
		return cl_dfile_read(c, &dfiles[0], base, buf, len);
	for (uint16_t k = 0; k < lo->n && !rc; k++) {
		size_t want = 0, at = 0;
		for (uint64_t x = (uint64_t)k * lo->strip; x < len; x += round)
			want += len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
		if (!want)
			continue;
		rc = cl_dfile_read(c, &dfiles[k], dbase, scratch, want);
		for (uint64_t x = (uint64_t)k * lo->strip; !rc && x < len; x += round) {
			size_t take = len - x < lo->strip ? (size_t)(len - x) : (size_t)lo->strip;
			memcpy(buf + x, scratch + at, take);
			at += take;
		}
	}
	return rc;
}

struct put_src {
	int fd;                 /* read from fd, or */
	const uint8_t *buf;     /* from memory */
	size_t len, at;
};

static int src_read(struct put_src *s, uint8_t *out, size_t n, size_t *got)
{
	if (s->fd >= 0)
		return fdio_read_all(s->fd, out, n, got);
	*got = s->len - s->at < n ? s->len - s->at : n;
	memcpy(out, s->buf + s->at, *got);
	s->at += *got;
	return 0;
}

/* How many bytes a put's first round needs: the source's length (and one
 * more, to see its end) when it is known and shorter than a round. A
 * small file's put then holds a few bytes, not a whole round's buffers. */
static size_t src_first_round(const struct put_src *s, size_t rb)
{
	struct stat st;
	off_t pos;

	if (s->fd < 0)
		return s->len - s->at < rb ? s->len - s->at + 1 : rb;
	if (fstat(s->fd, &st) || !S_ISREG(st.st_mode) || (pos = lseek(s->fd, 0, SEEK_CUR)) < 0 ||
	    st.st_size < pos || (uint64_t)(st.st_size - pos) >= rb)
		return rb;
	return (size_t)(st.st_size - pos) + 1;
}

/* buf (keeping its bytes) and, with stripes, scratch, to n bytes. */
static int grow_bufs(uint8_t **buf, uint8_t **scratch, size_t n, bool striped)
{
	uint8_t *b = realloc(*buf, n), *sc;

	if (!b)
		return -ENOMEM;
	*buf = b;
	if (!striped)
		return 0;
	sc = realloc(*scratch, n);
	if (!sc)
		return -ENOMEM;
	*scratch = sc;
	return 0;
}

/* Read the next round of src into *buf (cap bytes held, grown to a whole
 * round rb when the source is longer than it said). */
static int read_src_round(struct put_src *src, uint8_t **buf, uint8_t **scratch, size_t *cap,
			  size_t rb, bool striped, size_t *got)
{
	size_t more = 0;
	int rc = src_read(src, *buf, *cap, got);

	if (rc || *got < *cap || *cap == rb)
		return rc;
	rc = grow_bufs(buf, scratch, rb, striped);
	*cap = rb;
	if (!rc)
		rc = src_read(src, *buf + *got, rb - *got, &more);
	*got += more;
	return rc;
}

static int check_put_opts(const struct ofs_put_opts *o, struct layout *lo, uint8_t *rep,
			  uint8_t *conf)
{
	*rep = o && o->replicas ? o->replicas : 1;
	*conf = o && o->confidence ? o->confidence : *rep;
	lo->strip = o && o->strip_size ? o->strip_size : OFS_DEFAULT_STRIP;
	lo->n = o && o->stripes ? o->stripes : 1;
	if (*rep > OFS_MAX_REPLICAS || *conf > *rep)
		return -EINVAL;
	if (lo->n > OFS_MAX_STRIPES || lo->strip < 4096 || lo->strip > OFS_IO_PIECE)
		return -EINVAL;
	return 0;
}

static int put_once(struct ofs_client *c, struct put_src *src, const char *path,
		    const struct ofs_put_opts *o, bool *cached)
{
	struct resolved r;
	struct ofs_handle dd, mf;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent, old;
	struct layout lo;
	char name[OFS_NAME_MAX + 1];
	uint8_t *buf = NULL, *scratch = NULL;
	uint8_t rep, conf;
	uint64_t size = 0;
	uint16_t made = 0;
	bool have_mf = false, replaced = false;
	size_t rb, cap, got = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	rc = check_put_opts(o, &lo, &rep, &conf);
	if (rc)
		goto out;
	rc = cl_resolve_parent_cached(c, path, &r, name, &dd, cached);
	if (rc == -EBUSY)
		rc = -EISDIR;
	if (rc)
		goto out;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &old);
	if (rc == 0 && old.type == OFS_OBJ_DIRECTORY)
		rc = -EISDIR;
	else if (rc == 0 && (rc = cl_may(c, &old.handle, CAP_WRITE)) == 0)   /* (it replaces it) */
		rc = cl_may_remove(c, &r.ent.handle, &old.handle);
	else if (rc == -ENOENT)
		rc = 0;
	if (!rc)
		rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (rc)
		goto out;

	/* A new metafile and its dfiles, invisible until the entry switch. */
	a->type = OFS_OBJ_METAFILE;
	a->mode = 0644;
	cl_owner(&a->uid, &a->gid);
	a->backref.owner = r.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
	snprintf(a->dist, sizeof(a->dist), "simple_stripe");
	a->strip_size = (uint32_t)lo.strip;
	a->replicas = rep;
	a->confidence = conf;
	if (cl_servers_in(c) < rep) {
		rc = -OFS_ENOSERVERS;
		goto out;
	}
	/* The first round of bytes before anything is made: a small file,
	 * read whole, is made in one request (metafile, dfile, bytes). */
	rb = round_bytes(&lo);
	cap = src_first_round(src, rb);
	rc = grow_bufs(&buf, &scratch, cap, lo.n > 1);
	if (!rc)
		rc = read_src_round(src, &buf, &scratch, &cap, rb, lo.n > 1, &got);
	if (rc)
		goto out;
	if (lo.n == 1 && got < cap && got <= OFS_SMALL_MAX) {
		rc = cl_create_small(c, a, rep, buf, got, &mf);
		if (rc)
			goto out;
		have_mf = true;
		made = 1;                    /* (a->parts[0]: its dfile) */
		goto link;
	}
	rc = cl_obj_create(c, a, rep, NULL, &mf);
	if (rc)
		goto out;
	have_mf = true;
	for (made = 0; made < lo.n; made++) {
		struct ofs_attr *d = calloc(1, sizeof(*d));
		if (!d) {
			rc = -ENOMEM;
			goto out;
		}
		d->type = OFS_OBJ_DFILE;
		d->mode = 0644;
		d->uid = a->uid;
		d->gid = a->gid;
		d->backref.owner = mf.oid;
		d->backref.stripe = made;
		d->replicas = rep;
		d->confidence = conf;
		/* File stuffing: the first dfile on the metafile's primary. */
		rc = cl_obj_create(c, d, rep, made == 0 ? &mf.sids[0] : NULL, &a->parts[made]);
		free(d);
		if (rc)
			goto out;
	}
	a->nparts = lo.n;

	for (bool first = true;; first = false) {
		if (!first)
			rc = read_src_round(src, &buf, &scratch, &cap, rb, lo.n > 1, &got);
		if (rc || got == 0)
			break;
		rc = write_round(c, &lo, a->parts, size, buf, got, scratch);
		if (rc)
			break;
		size += got;
		if (got < rb)
			break;
	}
	if (rc)
		goto out;
	/* Every dfile durable, and exactly as long as the layout says, before
	 * the metafile records the size and the name shows the file. */
	for (uint16_t k = 0; k < lo.n && !rc; k++) {
		uint64_t len = 0;
		rc = cl_dfile_commit(c, &a->parts[k], &len);
		if (!rc && len != dfile_len(&lo, size, k))
			rc = -EIO;
	}
	if (rc)
		goto out;
	a->size = size;
	rc = cl_obj_setattr(c, &mf, OFS_ATTR_SIZE | OFS_ATTR_LAYOUT, a);
	if (rc)
		goto out;
link:
	ent.type = OFS_OBJ_METAFILE;
	ent.handle = mf;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, OFS_DIRENT_REPLACE,
			 &replaced, &old);
	if (rc)
		goto out;
	have_mf = false;
	made = 0;
	/* (the entry it replaced: not this file itself, which a create
	 * retried after its primary died finds in place) */
	if (replaced && !oid_eq(old.handle.oid, mf.oid))
		cl_file_destroy(c, &old.handle);   /* the name already shows the new file */
out:
	for (uint16_t i = 0; i < made; i++)
		cl_obj_remove(c, &a->parts[i]);
	if (have_mf)
		cl_obj_remove(c, &mf);
	free(scratch);
	free(buf);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

/*
 * A put's bytes go to each new dfile's primary only: when that server dies
 * during the put, the put is made again from the start, as a new file, if
 * its source can be read again (memory, or a file that seeks), at most
 * PUT_ATTEMPTS times. Its objects of the attempt before were removed by
 * it (best effort: scrub reports what a crash leaves, repair collects it),
 * and the server that stopped answering is tried last from then on.
 */
#define PUT_ATTEMPTS 3

static int put(struct ofs_client *c, struct put_src *src, const char *path,
	       const struct ofs_put_opts *o)
{
	off_t start = src->fd >= 0 ? lseek(src->fd, 0, SEEK_CUR) : 0;
	int rc;

	for (int attempt = 1;; attempt++) {
		bool cached = false;
		rc = put_once(c, src, path, o, &cached);
		if (rc && cached && start >= 0) {
			/* (a directory walked lately may be gone or moved: walk
			 * again, asking every step) */
			cl_dcache_clear(c);
			attempt--;
		} else if (rc != -OFS_EUNREACHABLE || attempt == PUT_ATTEMPTS || start < 0) {
			return rc;
		}
		if (src->fd >= 0 && lseek(src->fd, start, SEEK_SET) != start)
			return rc;
		src->at = 0;
	}
}

int ofs_put_fd(struct ofs_client *c, int fd, const char *path, const struct ofs_put_opts *o)
{
	struct put_src s = { .fd = fd };

	return put(c, &s, path, o);
}

int ofs_put_buf(struct ofs_client *c, const void *buf, size_t len, const char *path,
		const struct ofs_put_opts *o)
{
	struct put_src s = { .fd = -1, .buf = buf, .len = len };

	return put(c, &s, path, o);
}

struct get_sink {
	int fd;                 /* write to fd, or */
	uint8_t *buf;           /* into memory */
	size_t len;
};

/* A streamed get's pieces, in order, to its file descriptor. */
struct stream_to_fd {
	struct ofs_client *c;
	int fd;
	uint64_t delivered;
};

static int deliver_to_fd(void *arg, const uint8_t *p, size_t n)
{
	struct stream_to_fd *st = arg;
	int rc = fdio_write_all(st->fd, p, n);

	if (!rc && st->delivered == 0)
		cl_pause_point(st->c, "get-paused");   /* (a test's: a long get) */
	st->delivered += n;
	return rc;
}

/*
 * A file of one dfile, streamed: its pieces go straight into memory, or
 * through a ring of PIPE_DEPTH pieces to the descriptor, with the pipe
 * kept full from the first byte to the last.
 */
static int get_streamed(struct ofs_client *c, const struct ofs_handle *dfile, uint64_t size,
			struct get_sink *sink)
{
	struct stream_to_fd st = { .c = c, .fd = sink->fd };
	struct piece_sink ps = { .deliver = deliver_to_fd, .arg = &st };
	int rc;

	if (sink->fd < 0)
		return cl_dfile_read(c, dfile, 0, sink->buf, (size_t)size);
	ps.ring = malloc((size_t)PIPE_DEPTH * OFS_IO_PIECE);
	if (!ps.ring)
		return -ENOMEM;
	rc = dfile_io(c, dfile, false, 0, NULL, (size_t)size, &ps);
	free(ps.ring);
	return rc;
}

static int get_once(struct ofs_client *c, const char *path, struct get_sink *sink, uint64_t *total,
		    struct ofs_oid *used)
{
	struct resolved r;
	struct ofs_attr *a = malloc(sizeof(*a));
	struct layout lo;
	uint8_t *buf = NULL, *scratch = NULL, *small = NULL;
	size_t rb;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	rc = cl_resolve(c, path, &r);
	if (rc)
		goto out;
	*used = r.ent.handle.oid;
	if (r.ent.type != OFS_OBJ_METAFILE) {
		rc = -EISDIR;
		goto out;
	}
	/* Its attributes - and a small file's bytes, in the same round trip */
	rc = cl_get_small(c, &r.ent.handle, a, &small);
	if (rc == -OFS_EUNKNOWNOP)
		rc = cl_obj_getattr(c, &r.ent.handle, a);   /* (a server before it) */
	if (rc)
		goto out;
	if (a->type != OFS_OBJ_METAFILE || a->nparts == 0 || a->strip_size == 0) {
		rc = -OFS_ECORRUPT;
		goto out;
	}
	if (small) {
		if (sink->fd >= 0) {
			rc = fdio_write_all(sink->fd, small, (size_t)a->size);
		} else {
			sink->buf = small;
			sink->len = (size_t)a->size;
			small = NULL;
		}
		if (!rc)
			*total = a->size;
		goto out;
	}
	lo.strip = a->strip_size;
	lo.n = a->nparts;
	if (sink->fd < 0) {
		sink->buf = malloc(a->size ? (size_t)a->size : 1);
		if (!sink->buf) {
			rc = -ENOMEM;
			goto out;
		}
		sink->len = (size_t)a->size;
	}
	if (lo.n == 1) {
		rc = get_streamed(c, &a->parts[0], a->size, sink);
		if (!rc)
			*total = a->size;
		goto out;
	}
	rb = round_bytes(&lo);
	if (a->size < rb)
		rb = a->size ? (size_t)a->size : 1;     /* (a small file: its bytes) */
	buf = sink->fd >= 0 ? malloc(rb) : NULL;    /* (into memory: read in place) */
	scratch = lo.n > 1 ? malloc(rb) : NULL;
	if ((sink->fd >= 0 && !buf) || (lo.n > 1 && !scratch)) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t at = 0; at < a->size && !rc; at += rb) {
		size_t n = a->size - at < rb ? (size_t)(a->size - at) : rb;
		uint8_t *dst = sink->fd < 0 ? sink->buf + at : buf;
		if (at)
			cl_pause_point(c, "get-paused");   /* (a test's: a long get) */
		rc = read_round(c, &lo, a->parts, at, dst, n, scratch);
		if (!rc && sink->fd >= 0)
			rc = fdio_write_all(sink->fd, buf, n);
	}
	if (!rc)
		*total = a->size;
out:
	free(small);
	free(scratch);
	free(buf);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

/*
 * Was the file replaced under a get that failed with rc (its objects
 * gone)? Its objects report themselves missing (-ENOENT); or, with a copy
 * down, the copies up said "not here" and the one down could not say
 * (-OFS_EUNREACHABLE) - then the path names another file now than the
 * one the get read (used).
 */
static bool replaced_under(struct ofs_client *c, const char *path, int rc, struct ofs_oid used)
{
	struct ofs_attr *a;
	struct ofs_handle h;
	bool yes;

	if (rc == -ENOENT)
		return true;
	if (rc != -OFS_EUNREACHABLE || oid_is_zero(used) || !(a = malloc(sizeof(*a))))
		return false;
	yes = ofs_stat(c, path, a, &h) == 0 && !oid_eq(h.oid, used);
	free(a);
	return yes;
}

int ofs_get_fd(struct ofs_client *c, const char *path, int fd, uint64_t *len)
{
	struct stat st;
	bool rewindable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	uint64_t total = 0;
	int rc = 0;

	for (int attempt = 0; attempt < GET_RETRIES; attempt++) {
		struct get_sink sink = { .fd = fd };
		struct ofs_oid used = { { 0 } };
		rc = get_once(c, path, &sink, &total, &used);
		/* The file was replaced under us (its objects are gone): start
		 * over on the new version when the output can be rewound. */
		if (!rc || !rewindable || attempt == GET_RETRIES - 1 ||
		    !replaced_under(c, path, rc, used))
			break;
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
			rc = -errno;
			break;
		}
	}
	if (!rc && len)
		*len = total;
	return rc;
}

int ofs_get_buf(struct ofs_client *c, const char *path, void **buf, size_t *len)
{
	uint64_t total = 0;
	int rc = 0;

	for (int attempt = 0; attempt < GET_RETRIES; attempt++) {
		struct get_sink sink = { .fd = -1 };
		struct ofs_oid used = { { 0 } };
		rc = get_once(c, path, &sink, &total, &used);
		if (!rc) {
			*buf = sink.buf;
			*len = sink.len;
			return 0;
		}
		free(sink.buf);
		if (!replaced_under(c, path, rc, used))
			break;
	}
	return rc;
}
