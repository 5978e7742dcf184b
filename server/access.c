/* access.c - users' rights and their capabilities (see access.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "server/access.h"

static bool carries_mode(uint8_t type)
{
	return type == OFS_OBJ_METAFILE || type == OFS_OBJ_DIRECTORY;
}

uint32_t access_rights(const struct ofs_attr *a, const struct ident *who)
{
	bool owner = who->uid == a->uid, group = false;
	uint32_t bits, r = 0;

	for (uint8_t i = 0; i < who->ngids && !group; i++)
		group = who->gids[i] == a->gid;
	bits = owner ? (a->mode >> 6) & 7 : group ? (a->mode >> 3) & 7 : a->mode & 7;
	if (bits & 4)
		r |= CAP_READ;
	if (a->type == OFS_OBJ_DIRECTORY) {
		if (bits & 1)
			r |= CAP_SEARCH;
		if ((bits & 3) == 3)
			r |= CAP_WRITE;
	} else if (bits & 2) {
		r |= CAP_WRITE;
	}
	return r;        /* (REMOVE: from the directory, access_removal) */
}

/*
 * The right a user's request needs on its object (0: none): its row's
 * (lib/ops.def), or for a SETATTR what its mask changes. Default deny: an
 * operation whose row does not name users is not a user's to make.
 */
static int need_of(const struct ofs_req *q, uint32_t *need, const char **why)
{
	const struct op_def *d = op_def(q->op);

	*need = 0;
	if (!d || !(d->roles & OPR_USER)) {
		*why = "not a user's operation";
		return -EACCES;
	}
	if (!(d->flags & OPF_BY_MASK)) {
		*need = d->right;
		return 0;
	}
	/* (MODE: the owner's, OWNER: an admin's - service.c's owner check;
	 * where copies live: the maintenance jobs') */
	if (q->mask & (OFS_ATTR_OWNER | OFS_ATTR_SIDS | OFS_ATTR_STALE | OFS_ATTR_PART)) {
		*why = "only an admin or a server changes owners and copies";
		return -EACCES;
	}
	if (q->mask & (OFS_ATTR_SIZE | OFS_ATTR_MTIME | OFS_ATTR_LAYOUT))
		*need |= CAP_WRITE;
	if (q->mask & OFS_ATTR_BACKREF)
		*need |= CAP_REMOVE;
	if (!q->mask)
		*need = CAP_WRITE;   /* (touches nothing, but as any change) */
	return 0;
}

static bool is_create(const struct ofs_req *q)
{
	return q->op == OFS_OP_CREATE || q->op == OFS_OP_CREATE_SMALL;
}

/* Does q set the parts of a file or directory? */
static bool makes_layout(const struct ofs_req *q)
{
	return is_create(q) || (q->op == OFS_OP_SETATTR && (q->mask & OFS_ATTR_LAYOUT));
}

static void remember(struct access_cache *ch, struct ofs_oid oid)
{
	for (size_t i = 0; i < ch->nreach; i++)
		if (oid_eq(ch->reach[i], oid))
			return;
	if (ch->nreach < ACCESS_CACHE_OIDS)
		ch->reach[ch->nreach++] = oid;
	else
		ch->reach[oid.b[0] % ACCESS_CACHE_OIDS] = oid;
}

static bool same_cap(const struct access_cache *ch, const struct access_req *ar, uint64_t gen)
{
	return ch && ch->len && ch->len == ar->cap_len && ch->keygen == gen &&
	       memcmp(ch->bytes, ar->cap, ar->cap_len) == 0;
}

static const char *why_cap(int rc)
{
	return rc == -OFS_ECAPEXPIRED ? "its capability expired" :
	       rc == -OFS_ECAPBAD ? "its capability is not valid" :
	       "its capability does not allow it";
}

/*
 * Does the request's capability allow need on cover, to reach the
 * object reach (cover itself, or an object cover owns)? The MAC and the
 * binding are checked once per connection and capability (the cache).
 */
static int by_cap(struct cap_ring *keys, const struct access_req *ar, struct ofs_oid cover,
		  struct ofs_oid reach, uint32_t need, const char **why, uint32_t *ops)
{
	uint64_t gen = cap_ring_generation(keys);
	struct access_cache *ch = ar->cache;
	struct cap_key k[CAP_MAX_KEYS];
	struct ofs_cap *c;
	size_t n;
	int rc;

	if (!ar->cap_len) {
		*why = "it has no capability for the object";
		return -EACCES;
	}
	if (same_cap(ch, ar, gen)) {
		rc = cap_allows(&ch->cap, cover, need, ar->now);
		if (!rc)
			remember(ch, reach);
		if (ops)
			*ops = ch->cap.ops;
		*why = why_cap(rc);
		return rc;
	}
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	n = cap_ring_get(keys, k);
	rc = cap_decode(ar->cap, ar->cap_len, c) ? -OFS_ECAPBAD :
	     cap_check(c, k, n, ar->who->fpr, cover, need, ar->now);
	OPENSSL_cleanse(k, sizeof(k));
	if (ops)
		*ops = c->ops;
	if (!rc && ch && ar->cap_len <= sizeof(ch->bytes)) {
		memcpy(ch->bytes, ar->cap, ar->cap_len);
		ch->len = ar->cap_len;
		ch->cap = *c;
		ch->keygen = gen;
		ch->nreach = 0;
		remember(ch, reach);
	}
	free(c);
	*why = why_cap(rc);
	return rc;
}

/* Was the connection's capability already checked to reach oid, and
 * does it still allow need there? */
static bool reached(struct cap_ring *keys, const struct access_req *ar, struct ofs_oid oid,
		    uint32_t need)
{
	const struct access_cache *ch = ar->cache;

	if (!same_cap(ch, ar, cap_ring_generation(keys)) || ar->now >= ch->cap.expires ||
	    (ch->cap.ops & need) != need || (ch->cap.ops & CAP_STICKY))
		return false;    /* (a sticky directory's: each entry checked) */
	for (size_t i = 0; i < ch->nreach; i++)
		if (oid_eq(ch->reach[i], oid))
			return true;
	return false;
}

/* Was oid one of a's parts? */
static bool is_part(const struct ofs_attr *a, struct ofs_oid oid)
{
	for (uint16_t i = 0; i < a->nparts; i++)
		if (oid_eq(a->parts[i].oid, oid))
			return true;
	return false;
}

/*
 * The objects a user's request names beyond its own: a create's OID and
 * the parts of a layout it sets must be ones this user made (cap.h's
 * proof), or parts the object's layout names already (a file of an
 * earlier release, whose OIDs carry no proof). A layout is never evidence
 * of a right: naming another's objects in it would at least confuse the
 * namespace check and repair, though it grants nothing (a capability
 * covers its subject alone: access_grant).
 */
static int names_check(struct store *s, const struct access_req *ar, const struct ofs_req *q,
		       const char **why)
{
	bool layout = makes_layout(q);
	struct ofs_attr *have = NULL;
	int rc = 0;

	if (is_create(q) && !oid_is_zero(q->oid) && !cap_oid_made_by(q->oid, ar->who->uid)) {
		*why = "its object ID is not one this user made";
		return -EACCES;
	}
	for (uint16_t i = 0; layout && !rc && i < q->attr.nparts; i++) {
		struct ofs_oid p = q->attr.parts[i].oid;
		if (cap_oid_made_by(p, ar->who->uid))
			continue;
		if (!have && !is_create(q)) {
			have = malloc(sizeof(*have));
			rc = !have ? -ENOMEM : store_getattr(s, q->oid, have);
			if (rc == -ENOENT)
				rc = 0, have->nparts = 0;
		}
		if (!rc && (!have || !is_part(have, p))) {
			*why = "its layout names an object this user did not make";
			rc = -EACCES;
		}
	}
	free(have);
	return rc;
}

/*
 * Removing or replacing an entry of the directory dir (q: a DIRENT_REMOVE
 * or DIRENT_CREATE on one of its dirdata). WRITE on the directory allows
 * it, unless the directory is sticky for this user (CAP_STICKY): then a
 * removal needs the entry's own REMOVE (which its server grants only to
 * the entry's owner: access_removal), and a replacement an entry this
 * user made (its OID's proof: the dirdata server knows no owner).
 * Making a new entry needs WRITE alone.
 */
static int entry_check(struct store *s, struct cap_ring *keys, const struct access_req *ar,
		       const struct ofs_req *q, struct ofs_oid dir, const char **why)
{
	struct ofs_dirent d;
	uint32_t ops = 0;
	int rc, got;

	if (!keys) {
		*why = "this server holds no capability key";
		return -EACCES;
	}
	rc = by_cap(keys, ar, dir, q->oid, CAP_WRITE, why, &ops);
	if (!rc && !(ops & CAP_STICKY))
		return 0;
	got = store_dirent_lookup(s, q->oid, q->name, &d);
	if (got == -ENOENT)
		return rc;                  /* (nothing to remove or replace) */
	if (got)
		return rc ? rc : got;
	if (q->op == OFS_OP_DIRENT_REMOVE)
		return by_cap(keys, ar, d.handle.oid, d.handle.oid, CAP_REMOVE, why, NULL);
	if (!rc && (q->flags & OFS_DIRENT_REPLACE) && !oid_eq(d.handle.oid, q->dirent.handle.oid) &&
	    !cap_oid_made_by(d.handle.oid, ar->who->uid)) {
		*why = "the directory is sticky and the entry it replaces is not this user's";
		rc = -EACCES;
	}
	return rc;
}

int access_check(struct store *s, struct cap_ring *keys, const struct access_req *ar,
		 const struct ofs_req *q, const char **why)
{
	struct ofs_attr *a;
	uint32_t need;
	int rc = need_of(q, &need, why);

	if (!rc)
		rc = names_check(s, ar, q, why);
	if (rc)
		return rc;
	if (q->op == OFS_OP_CREATE_SMALL)
		return 0;           /* a new file with its dfile (a metafile: decoded so) */
	if (q->op == OFS_OP_CREATE) {
		/* A file's or directory's own: filled through its capability. */
		if (carries_mode(q->attr.type))
			return 0;
		if (!keys) {
			*why = "this server holds no capability key";
			return -EACCES;
		}
		return by_cap(keys, ar, q->attr.backref.owner, q->attr.backref.owner, CAP_WRITE,
			      why, NULL);
	}
	if (!need)
		return 0;
	if (keys && reached(keys, ar, q->oid, need))
		return 0;           /* (anything else: the full check says why) */
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	rc = store_getattr(s, q->oid, a);
	if (rc == -ENOENT) {
		rc = 0;                  /* (the operation says so) */
	} else if (rc) {
		*why = "its attributes could not be read";
	} else if (carries_mode(a->type)) {
		if (q->op != OFS_OP_GETATTR && (access_rights(a, ar->who) & need) != need) {
			rc = keys && ar->cap_len ? by_cap(keys, ar, q->oid, q->oid, need, why, NULL) :
						    -EACCES;
			if (rc == -EACCES && !ar->cap_len)
				*why = "the mode bits do not allow it";
		}
	} else if (!keys) {
		*why = "this server holds no capability key";
		rc = -EACCES;
	} else if (a->type == OFS_OBJ_DIRDATA &&
		   (q->op == OFS_OP_DIRENT_REMOVE || q->op == OFS_OP_DIRENT_CREATE)) {
		rc = entry_check(s, keys, ar, q, a->backref.owner, why);
	} else {
		rc = by_cap(keys, ar, a->backref.owner, q->oid, need, why, NULL);
	}
	free(a);
	return rc;
}

int access_removal(struct cap_ring *keys, const struct access_req *ar, const struct ofs_attr *a,
		   const char **why)
{
	uint32_t ops = 0;
	int rc;

	if (!carries_mode(a->type) || oid_is_zero(a->backref.owner)) {
		*why = "it is not named in a directory";
		return -EACCES;
	}
	if (!keys) {
		*why = "this server holds no capability key";
		return -EACCES;
	}
	rc = by_cap(keys, ar, a->backref.owner, a->backref.owner, CAP_WRITE, why, &ops);
	if (!rc && (ops & CAP_STICKY) && a->uid != ar->who->uid) {
		*why = "its directory is sticky and neither it nor the directory is this user's";
		rc = -EACCES;
	}
	return rc;
}

int access_grant(struct cap_ring *keys, struct ofs_sid self, uint32_t ttl_s, uint64_t now,
		 const struct ident *who, struct ofs_oid oid, const struct ofs_attr *a, uint32_t more,
		 struct wbuf *out)
{
	struct cap_key k[CAP_MAX_KEYS];
	struct ofs_cap *c;
	size_t n;
	int rc;

	if (!carries_mode(a->type))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ops = (access_rights(a, who) | more) & CAP_ALL_OPS;
	if (a->type == OFS_OBJ_DIRECTORY && (a->mode & 01000) && a->uid != who->uid &&
	    (c->ops & CAP_WRITE))
		c->ops |= CAP_STICKY;
	if (!c->ops) {
		free(c);
		return 0;
	}
	c->issuer = self;
	c->expires = now + ttl_s;
	memcpy(c->fpr, who->fpr, sizeof(c->fpr));
	/* Its subject alone: a data object is reached through its owner
	 * (its back reference), and a layout is not evidence of a right. */
	c->oids[c->noids++] = oid;
	n = keys ? cap_ring_get(keys, k) : 0;
	rc = n ? cap_sign(c, &k[0]) : -ENOKEY;
	if (!rc)
		cap_encode(out, c);
	OPENSSL_cleanse(k, sizeof(k));
	free(c);
	return rc ? rc : wbuf_error(out);
}
