/*
 * store_tool.c - the object tool's surgery and fault injection, and
 * raising a reconciled copy's version (see store.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "store/bstream.h"
#include "store/changelog.h"
#include "store/kv.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_impl.h"

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
	int rc = st_get_object(t, ta->oid, ta->a);

	if (!rc)
		rc = changelog_forget(t, ta->oid);   /* (a version set by hand) */
	if (rc)
		return rc;
	ta->a->version = ta->version;
	return st_put_object(t, ta->oid, ta->a);
}

static int tool_backref_txn(struct kv_txn *t, void *arg)
{
	struct tool_args *ta = arg;
	const struct ofs_backref *br = ta->v;
	int rc = st_get_object(t, ta->oid, ta->a);

	if (rc)
		return rc;
	ta->a->backref = *br;
	return st_put_object(t, ta->oid, ta->a);
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
	int rc = st_get_object(t, ta->oid, ta->a);

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
	return st_put_object(t, ta->oid, ta->a);
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
	int rc = st_get_object(t, ta->oid, ta->a);

	if (rc)
		return rc;
	if (ta->a->version >= ta->version)
		return 0;
	ta->a->version = ta->version;
	return st_put_object(t, ta->oid, ta->a);
}

int store_version_at_least(struct store *s, struct ofs_oid oid, uint64_t version)
{
	struct tool_args ta = { .oid = oid, .version = version };
	pthread_rwlock_t *l = st_obj_lock(s, oid);
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

/* ---- a dfile's bytes, wherever they are (stream or inline) -------------- */

struct tool_bytes_args {
	struct ofs_oid oid;
	uint64_t off;
	bool lose;                   /* delete the value, else flip one byte */
};

static int tool_bytes_txn(struct kv_txn *t, void *arg)
{
	struct tool_bytes_args *tb = arg;
	const void *v;
	size_t vn;
	uint8_t *b;
	int rc = st_inline_get(t, tb->oid, &v, &vn);

	if (rc || tb->lose)
		return rc ? rc : st_inline_del(t, tb->oid);
	if (tb->off >= vn)
		return -ERANGE;
	b = malloc(vn);
	if (!b)
		return -ENOMEM;
	memcpy(b, v, vn);
	b[tb->off] ^= 0x01;
	rc = st_inline_put(t, tb->oid, b, vn);
	free(b);
	return rc;
}

/* The same on a stream: one byte inverted in place, or the file gone. */
static int tool_stream_bytes(struct store *s, const struct tool_bytes_args *tb)
{
	uint8_t c;
	size_t got;
	int fd, rc;

	if (tb->lose)
		return bstream_remove(s->datadir, tb->oid);
	rc = bstream_open(s->datadir, tb->oid, 1, &fd);
	if (rc)
		return rc;
	rc = bstream_pread(fd, &c, 1, tb->off, &got);
	if (!rc && got != 1)
		rc = -ERANGE;
	c ^= 0x01;
	if (!rc)
		rc = bstream_pwrite(fd, &c, 1, tb->off);
	if (!rc)
		rc = bstream_datasync(fd);
	close(fd);
	return rc;
}

static int tool_bytes(struct store *s, struct ofs_oid oid, uint64_t off, bool lose)
{
	struct tool_bytes_args tb = { .oid = oid, .off = off, .lose = lose };
	struct ofs_attr *a;
	int rc;

	if (s->read_only)
		return -EROFS;
	a = malloc(sizeof(*a));
	rc = a ? store_getattr(s, oid, a) : -ENOMEM;
	if (!rc && a->type != OFS_OBJ_DFILE)
		rc = -OFS_ETYPE;
	free(a);
	if (rc)
		return rc;
	rc = kv_update(s->kv, tool_bytes_txn, &tb);
	if (rc == -ENOENT)
		rc = tool_stream_bytes(s, &tb);   /* (not inline) */
	return rc;
}

int store_tool_flip_byte(struct store *s, struct ofs_oid oid, uint64_t off)
{
	return tool_bytes(s, oid, off, false);
}

int store_tool_lose_bytes(struct store *s, struct ofs_oid oid)
{
	return tool_bytes(s, oid, 0, true);
}
