/* changelog.c - each key-value object's recent changes (see changelog.h). */
#include <errno.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "store/changelog.h"
#include "store/records.h"

#define NOTE_KEY (OFS_OID_LEN + 8)         /* OID | u64 BE version */

static void note_key(struct ofs_oid oid, uint64_t version, uint8_t key[NOTE_KEY])
{
	memcpy(key, oid.b, OFS_OID_LEN);
	for (int i = 0; i < 8; i++)
		key[OFS_OID_LEN + i] = (uint8_t)(version >> (56 - 8 * i));
}

int changelog_note(struct kv_txn *t, struct ofs_oid oid, uint64_t version, const void *k,
		   size_t kn, const void *v, size_t vn, bool removed)
{
	struct rec_note n = { .kind = removed ? REC_NOTE_REMOVED : REC_NOTE_SET,
			      .k = k, .kn = kn, .v = v, .vn = removed ? 0 : vn };
	uint8_t key[NOTE_KEY];
	struct wbuf w;
	int rc;

	if (vn > OFS_MAX_VALUE)
		return -EINVAL;
	wbuf_init(&w);
	rc = rec_encode_note(&w, &n);
	note_key(oid, version, key);
	if (!rc)
		rc = kv_put(t, KV_CHANGES, key, sizeof(key), w.data, w.len);
	wbuf_free(&w);
	if (rc || version <= CHANGELOG_KEEP)
		return rc;
	note_key(oid, version - CHANGELOG_KEEP, key);
	rc = kv_del(t, KV_CHANGES, key, sizeof(key));
	return rc == -ENOENT ? 0 : rc;
}

int changelog_forget(struct kv_txn *t, struct ofs_oid oid)
{
	return kv_del_prefix(t, KV_CHANGES, oid.b, OFS_OID_LEN);
}

struct encode_args {
	uint64_t next, upto;                   /* the version expected next */
	uint32_t n;
	struct wbuf *w;
};

static int encode_scan(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct encode_args *ea = arg;
	const uint8_t *kb = k;
	uint64_t version = 0;
	struct rec_note note;

	if (kn != NOTE_KEY)
		return -OFS_ECORRUPT;
	for (int i = 0; i < 8; i++)
		version = version << 8 | kb[OFS_OID_LEN + i];
	if (version > ea->upto)
		return 1;
	if (version != ea->next)
		return -ERANGE;                    /* a gap: the chain is broken */
	if (rec_decode_note(v, vn, &note))
		return -OFS_ECORRUPT;
	if (ea->w->len + 8 + vn > CHANGELOG_MAX_BYTES)
		return -ERANGE;
	wbuf_u64(ea->w, version);
	wbuf_bytes(ea->w, v, vn);
	ea->n++;
	ea->next++;
	return 0;
}

int changelog_encode(struct kv_txn *t, struct ofs_oid oid, uint64_t since, uint64_t upto,
		     struct wbuf *w)
{
	struct encode_args ea = { .next = since + 1, .upto = upto, .w = w };
	uint8_t after[NOTE_KEY];
	size_t start = w->len;
	int rc;

	if (upto < since)
		return -ERANGE;
	wbuf_u32(w, 0);
	note_key(oid, since, after);
	rc = kv_scan(t, KV_CHANGES, oid.b, OFS_OID_LEN, after, sizeof(after), encode_scan, &ea);
	if (!rc && ea.next != upto + 1)
		rc = -ERANGE;                      /* the newest ones are missing */
	if (!rc)
		rc = wbuf_error(w);
	if (rc) {
		w->len = start;
		return rc;
	}
	wbuf_patch_u32(w, start, ea.n);
	return 0;
}

int changelog_decode(const uint8_t *p, size_t len, uint64_t since, uint64_t upto,
		     changelog_note_fn fn, void *arg)
{
	struct rbuf r;
	uint32_t count;
	int rc = 0;

	if (upto < since)
		return -OFS_ECORRUPT;
	rbuf_init(&r, p, len);
	count = rbuf_u32(&r);
	if (rbuf_error(&r) || count != upto - since)
		return -OFS_ECORRUPT;
	for (uint64_t want = since + 1; !rc && want <= upto; want++) {
		struct rec_note n;
		if (rbuf_u64(&r) != want)
			return -OFS_ECORRUPT;
		rec_read_note(&r, &n);
		if (rbuf_error(&r))
			return -OFS_ECORRUPT;
		if (fn)
			rc = fn(want, &n, arg);
	}
	if (!rc && rbuf_done(&r))
		rc = -OFS_ECORRUPT;
	return rc;
}

struct replay_args {
	struct kv_txn *t;
	struct ofs_oid oid;
};

static int replay(uint64_t version, const struct rec_note *n, void *arg)
{
	struct replay_args *ra = arg;
	uint8_t key[REC_KV_KEY_MAX];
	size_t kn = rec_kv_key(ra->oid, n->k, n->kn, key);
	int rc;

	if (n->kind == REC_NOTE_SET)
		rc = kv_put(ra->t, KV_KEYVAL, key, kn, n->v, n->vn);
	else if ((rc = kv_del(ra->t, KV_KEYVAL, key, kn)) == -ENOENT)
		rc = 0;                            /* removed here already */
	if (!rc)
		rc = changelog_note(ra->t, ra->oid, version, n->k, n->kn, n->v, n->vn,
				    n->kind == REC_NOTE_REMOVED);
	return rc;
}

int changelog_apply(struct kv_txn *t, struct ofs_oid oid, uint64_t since, uint64_t upto,
		    const uint8_t *p, size_t len)
{
	struct replay_args ra = { .t = t, .oid = oid };
	int rc = changelog_decode(p, len, since, upto, NULL, NULL);

	/* (checked whole first: a corrupt list changes nothing) */
	if (!rc)
		rc = changelog_forget(t, oid);
	if (!rc)
		rc = changelog_decode(p, len, since, upto, replay, &ra);
	return rc;
}
