/*
 * test_access.c - a user's rights from the mode bits, and the
 * capabilities that carry them to the data objects (server/access.h),
 * over a real store and real capability keys.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ca.h"
#include "lib/cap.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "server/access.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"

#define NOW 2000000000u
#define TTL 600u

static struct ident user(uint32_t uid, uint32_t gid0, uint32_t gid1, uint8_t fprbyte)
{
	struct ident u;

	memset(&u, 0, sizeof(u));
	u.role = IDENT_USER;
	u.uid = uid;
	u.gids[0] = gid0;
	u.gids[1] = gid1;
	u.ngids = gid1 ? 2 : 1;
	memset(u.fpr, fprbyte, sizeof(u.fpr));
	return u;
}

static struct ofs_attr obj(uint8_t type, uint32_t uid, uint32_t gid, uint32_t mode)
{
	struct ofs_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.uid = uid;
	a.gid = gid;
	a.mode = mode;
	return a;
}

static void rights_of_files(void **state)
{
	struct ident ann = user(10, 100, 0, 1), gus = user(11, 11, 100, 2), ola = user(12, 12, 0, 3);
	struct ofs_attr f = obj(OFS_OBJ_METAFILE, 10, 100, 0640);

	(void)state;
	/* (REMOVE is never the object's own to give: its directory's) */
	assert_int_equal(access_rights(&f, &ann), CAP_READ | CAP_WRITE);
	assert_int_equal(access_rights(&f, &gus), CAP_READ);
	assert_int_equal(access_rights(&f, &ola), 0);
	/* a class is not helped by another with more bits */
	f.mode = 0604;
	assert_int_equal(access_rights(&f, &gus), 0);
	assert_int_equal(access_rights(&f, &ola), CAP_READ);
	f.mode = 0066;
	assert_int_equal(access_rights(&f, &ann), 0);
	assert_int_equal(access_rights(&f, &gus), CAP_READ | CAP_WRITE);
	/* the setuid, setgid and sticky bits give nothing */
	f.mode = 07000;
	assert_int_equal(access_rights(&f, &gus), 0);
}

static void rights_of_directories(void **state)
{
	struct ident gus = user(11, 11, 100, 2);
	struct ofs_attr d = obj(OFS_OBJ_DIRECTORY, 10, 100, 0750);

	(void)state;
	assert_int_equal(access_rights(&d, &gus), CAP_READ | CAP_SEARCH);
	d.mode = 0710;
	assert_int_equal(access_rights(&d, &gus), CAP_SEARCH);
	d.mode = 0720;      /* w without x: no entry may be made */
	assert_int_equal(access_rights(&d, &gus), 0);
	d.mode = 0730;
	assert_int_equal(access_rights(&d, &gus), CAP_WRITE | CAP_SEARCH);
}

/* ---- over a store ---------------------------------------------------------------- */

struct fix {
	struct tmpstore ts;          /* the store (s: ts.s) and its folder */
	struct store *s;
	struct cap_ring *keys;
	struct ofs_oid file, dfile, other, other_dfile, dir_oid, dirdata;
};

static struct ofs_oid make(struct store *s, struct ofs_attr a)
{
	struct ofs_oid oid;

	assert_int_equal(store_create(s, &a, &oid), 0);
	return oid;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct cap_key k[1] = { { .id = 7 } };
	char path[128], text[CAP_KEYS_TEXT_MAX];
	struct ofs_attr a;
	size_t n;
	FILE *fp;

	assert_non_null(f);
	assert_int_equal(tmpstore_make("access", 65536, &f->ts), 0);
	f->s = f->ts.s;
	memset(k[0].key, 0x5a, sizeof(k[0].key));
	n = cap_keys_format(k, 1, text);
	snprintf(path, sizeof(path), "%s/cap.key", f->ts.dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, n, fp), n);
	fclose(fp);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(cap_ring_open(path, NULL, &f->keys), 0);
	f->file = make(f->s, obj(OFS_OBJ_METAFILE, 10, 100, 0640));
	a = obj(OFS_OBJ_DFILE, 10, 100, 0644);
	a.backref.owner = f->file;
	f->dfile = make(f->s, a);
	f->other = make(f->s, obj(OFS_OBJ_METAFILE, 10, 100, 0644));
	a.backref.owner = f->other;
	f->other_dfile = make(f->s, a);
	f->dir_oid = make(f->s, obj(OFS_OBJ_DIRECTORY, 10, 100, 0750));
	a = obj(OFS_OBJ_DIRDATA, 10, 100, 0755);
	a.backref.owner = f->dir_oid;
	f->dirdata = make(f->s, a);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	cap_ring_close(f->keys);
	tmpstore_remove(&f->ts);
	free(f);
	return 0;
}

/* The capability granted to who by a GETATTR of oid, into w. */
static void grant(struct fix *f, const struct ident *who, struct ofs_oid oid, struct wbuf *w)
{
	struct ofs_attr a;

	assert_int_equal(store_getattr(f->s, oid, &a), 0);
	wbuf_init(w);
	assert_int_equal(access_grant(f->keys, (struct ofs_sid){ { 1 } }, TTL, NOW, who, oid, &a,
				      0, w),
			 0);
}

static int check(struct fix *f, const struct ident *who, const struct wbuf *cap, uint16_t op,
		 struct ofs_oid oid, struct access_cache *cache, uint64_t now)
{
	struct access_req ar = { .who = who, .cap = cap ? cap->data : NULL,
				 .cap_len = cap ? cap->len : 0, .cache = cache, .now = now };
	struct ofs_req q;
	const char *why = "";

	memset(&q, 0, sizeof(q));
	q.op = op;
	q.oid = oid;
	return access_check(f->s, f->keys, &ar, &q, &why);
}

static void data_objects_need_a_capability(void **state)
{
	struct fix *f = *state;
	struct ident gus = user(11, 11, 100, 2), ola = user(12, 12, 0, 3);
	struct wbuf cap, other;

	grant(f, &gus, f->file, &cap);
	assert_true(cap.len > 0);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, NULL, NOW), 0);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_WRITE, f->dfile, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &gus, NULL, OFS_OP_READ, f->dfile, NULL, NOW), -EACCES);
	/* another file's dfile; another certificate; expired */
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->other_dfile, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &ola, &cap, OFS_OP_READ, f->dfile, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, NULL, NOW + TTL),
			 -OFS_ECAPEXPIRED);
	/* a byte changed */
	cap.data[cap.len - 1] ^= 1;
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, NULL, NOW), -OFS_ECAPBAD);
	/* ola's bits (640: none) grant nothing */
	grant(f, &ola, f->file, &other);
	assert_int_equal(other.len, 0);
	wbuf_free(&other);
	wbuf_free(&cap);
}

static void the_file_itself_by_its_bits(void **state)
{
	struct fix *f = *state;
	struct ident ann = user(10, 100, 0, 1), gus = user(11, 11, 100, 2), ola = user(12, 12, 0, 3);

	assert_int_equal(check(f, &ola, NULL, OFS_OP_GETATTR, f->file, NULL, NOW), 0);
	assert_int_equal(check(f, &gus, NULL, OFS_OP_KV_GET, f->file, NULL, NOW), 0);
	/* removal is the directory's to allow, not the owner's: */
	assert_int_equal(check(f, &gus, NULL, OFS_OP_REMOVE, f->file, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &ann, NULL, OFS_OP_REMOVE, f->file, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &ola, NULL, OFS_OP_KV_GET, f->file, NULL, NOW), -EACCES);
	/* default deny: an operation the check does not name */
	assert_int_equal(check(f, &ann, NULL, OFS_OP_FREEZE, f->file, NULL, NOW), -EACCES);
	/* a pull of the CRL is anyone's: a client checks servers against it
	 * (a CRL given by a user is refused by the operation: ops.c) */
	assert_int_equal(check(f, &ola, NULL, OFS_OP_REVOKED, f->file, NULL, NOW), 0);
	/* a copy's placement is not a user's to set */
	{
		struct access_req ar = { .who = &ann, .now = NOW };
		struct ofs_req q;
		const char *why = "";
		memset(&q, 0, sizeof(q));
		q.op = OFS_OP_SETATTR;
		q.oid = f->file;
		q.mask = OFS_ATTR_SIDS;
		assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), -EACCES);
		q.mask = OFS_ATTR_SIZE;
		assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), 0);
	}
}

static void directories(void **state)
{
	struct fix *f = *state;
	struct ident gus = user(11, 11, 100, 2);
	struct wbuf cap;

	grant(f, &gus, f->dir_oid, &cap);     /* 750: r-x for the group */
	assert_int_equal(check(f, &gus, &cap, OFS_OP_DIRENT_LOOKUP, f->dirdata, NULL, NOW), 0);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_DIRENT_LIST, f->dirdata, NULL, NOW), 0);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_DIRENT_CREATE, f->dirdata, NULL, NOW),
			 -EACCES);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_DIRENT_REMOVE, f->dirdata, NULL, NOW),
			 -EACCES);
	wbuf_free(&cap);
}

/* The ring of f, from now on trusting a CA of its own, which signs the
 * sets rotate gives it (as ofs-pbj ca rotate does). */
static struct ca *trust_a_ca(struct fix *f)
{
	char d[300], p[300], cp[320], why[TLS_WHY_MAX];
	struct ca *ca = NULL;

	snprintf(d, sizeof(d), "%s/ca", f->ts.dir);
	snprintf(p, sizeof(p), "%s/cap.key", f->ts.dir);
	snprintf(cp, sizeof(cp), "%s/ca.crt", d);
	assert_int_equal(ca_init(d, why), 0);
	assert_int_equal(ca_open(d, &ca, why), 0);
	cap_ring_close(f->keys);
	assert_int_equal(cap_ring_open(p, cp, &f->keys), 0);
	return ca;
}

static void rotate(struct fix *f, struct ca *ca, const struct cap_key *k, size_t n)
{
	struct wbuf w;

	wbuf_init(&w);
	assert_int_equal(ca_sign_keys(ca, k, n, &w), 0);
	assert_int_equal(cap_ring_offer(f->keys, w.data, w.len), 1);
	wbuf_free(&w);
}

static void the_cache_skips_the_mac_not_the_rules(void **state)
{
	struct fix *f = *state;
	struct ident gus = user(11, 11, 100, 2);
	struct access_cache *ch = calloc(1, sizeof(*ch));
	struct cap_key k[2] = { { .id = 8 }, { .id = 7 } };
	struct ca *ca;
	struct wbuf cap;

	assert_non_null(ch);
	grant(f, &gus, f->file, &cap);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, ch, NOW), 0);
	assert_int_equal(ch->nreach, 1);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, ch, NOW), 0);
	/* a cached capability still allows only what it says, until it expires */
	assert_int_equal(check(f, &gus, &cap, OFS_OP_WRITE, f->dfile, ch, NOW), -EACCES);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->other_dfile, ch, NOW), -EACCES);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, ch, NOW + TTL),
			 -OFS_ECAPEXPIRED);
	/* two rotations: its key is gone, cached or not */
	ca = trust_a_ca(f);
	memset(k[0].key, 0x6b, sizeof(k[0].key));
	memset(k[1].key, 0x5a, sizeof(k[1].key));
	rotate(f, ca, k, 2);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, ch, NOW), 0);
	k[1] = k[0];
	k[0].id = 9;
	memset(k[0].key, 0x7c, sizeof(k[0].key));
	rotate(f, ca, k, 2);
	assert_int_equal(check(f, &gus, &cap, OFS_OP_READ, f->dfile, ch, NOW), -OFS_ECAPBAD);
	ca_close(ca);
	wbuf_free(&cap);
	free(ch);
}

/* The exploit this closes: a file of her own whose layout names another
 * user's metafile and dfile. Its capability covers her file alone, so
 * the other file's dfile stays out of reach. */
static void a_layout_is_not_evidence(void **state)
{
	struct fix *f = *state;
	struct ident ola = user(12, 12, 0, 3);
	struct ofs_attr a = obj(OFS_OBJ_METAFILE, 12, 12, 0600);
	struct ofs_oid mine;
	struct wbuf cap;
	struct ofs_cap c;

	a.nparts = 2;
	a.parts[0].oid = f->file;
	a.parts[0].nsids = 1;
	a.parts[1].oid = f->dfile;
	a.parts[1].nsids = 1;
	assert_int_equal(cap_oid_generate(12, &mine), 0);
	wbuf_init(&cap);
	assert_int_equal(access_grant(f->keys, (struct ofs_sid){ { 1 } }, TTL, NOW, &ola, mine,
				      &a, CAP_ALL_OPS, &cap),
			 0);
	assert_int_equal(cap_decode(cap.data, cap.len, &c), 0);
	assert_int_equal(c.noids, 1);
	assert_true(oid_eq(c.oids[0], mine));
	assert_int_equal(check(f, &ola, &cap, OFS_OP_READ, f->dfile, NULL, NOW), -EACCES);
	assert_int_equal(check(f, &ola, &cap, OFS_OP_KV_GET, f->file, NULL, NOW), -EACCES);
	wbuf_free(&cap);
}

static int create_check(struct fix *f, const struct ident *who, uint16_t op, struct ofs_oid oid,
			const struct ofs_attr *a)
{
	struct access_req ar = { .who = who, .now = NOW };
	struct ofs_req q;
	const char *why = "";

	memset(&q, 0, sizeof(q));
	q.op = op;
	q.oid = oid;
	q.attr = *a;
	return access_check(f->s, f->keys, &ar, &q, &why);
}

static void a_user_creates_only_oids_she_made(void **state)
{
	struct fix *f = *state;
	struct ident ola = user(12, 12, 0, 3);
	struct ofs_attr a = obj(OFS_OBJ_METAFILE, 12, 12, 0644);
	struct ofs_oid mine, hers, dfile;

	assert_int_equal(cap_oid_generate(12, &mine), 0);
	assert_int_equal(cap_oid_generate(10, &hers), 0);
	assert_true(cap_oid_made_by(mine, 12));
	assert_false(cap_oid_made_by(mine, 10));
	/* another's OID, proven or random, anywhere: refused */
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE, hers, &a), -EACCES);
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE, f->file, &a), -EACCES);
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE, mine, &a), 0);
	/* a server chooses it: nothing to prove */
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE, (struct ofs_oid){ { 0 } }, &a), 0);
	/* CREATE_SMALL: both its OIDs */
	assert_int_equal(cap_oid_generate(12, &dfile), 0);
	a.nparts = 1;
	a.parts[0].oid = dfile;
	a.parts[0].nsids = 1;
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE_SMALL, mine, &a), 0);
	a.parts[0].oid = f->dfile;
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE_SMALL, mine, &a), -EACCES);
	a.parts[0].oid = dfile;
	assert_int_equal(create_check(f, &ola, OFS_OP_CREATE_SMALL, hers, &a), -EACCES);
}

static void a_layout_names_only_parts_she_made_or_had(void **state)
{
	struct fix *f = *state;
	struct ident ann = user(10, 100, 0, 1);
	struct ofs_attr a = obj(OFS_OBJ_METAFILE, 10, 100, 0640), had;
	struct access_req ar = { .who = &ann, .now = NOW };
	struct ofs_req q;
	struct ofs_oid made;
	const char *why = "";

	/* f->file (ann's, 0640) is given f->dfile as its layout first */
	assert_int_equal(store_getattr(f->s, f->file, &had), 0);
	had.nparts = 1;
	had.parts[0].oid = f->dfile;
	had.parts[0].nsids = 1;
	assert_int_equal(store_setattr(f->s, f->file, OFS_ATTR_LAYOUT, &had, NULL), 0);
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_SETATTR;
	q.oid = f->file;
	q.mask = OFS_ATTR_LAYOUT;
	/* her old part (a random OID, made before proofs) and a new one of hers */
	assert_int_equal(cap_oid_generate(10, &made), 0);
	a.nparts = 2;
	a.parts[0] = had.parts[0];
	a.parts[1].oid = made;
	a.parts[1].nsids = 1;
	q.attr = a;
	assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), 0);
	/* another file's dfile */
	a.parts[1].oid = f->other_dfile;
	q.attr = a;
	assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), -EACCES);
}

/* A request on oid carrying cap, with q's name and dirent. */
static int check_q(struct fix *f, const struct ident *who, const struct wbuf *cap,
		   struct ofs_req *q)
{
	struct access_req ar = { .who = who, .cap = cap ? cap->data : NULL,
				 .cap_len = cap ? cap->len : 0, .now = NOW };
	const char *why = "";

	return access_check(f->s, f->keys, &ar, q, &why);
}

/* Who may remove (REMOVE granted by a GETATTR showing the directory's
 * capability) and take an entry out, with and without the sticky bit. */
/* who's capability for the directory dir, into cap, and ar carrying it. */
static void dir_cap(struct fix *f, const struct ident *who, struct ofs_oid dir, struct wbuf *cap,
		    struct access_req *ar)
{
	grant(f, who, dir, cap);
	ar->who = who;
	ar->cap = cap->data;
	ar->cap_len = cap->len;
}

/* dir's mode, set to mode. */
static void set_mode(struct fix *f, struct ofs_oid dir, uint32_t mode)
{
	struct ofs_attr d;

	memset(&d, 0, sizeof(d));
	d.mode = mode;
	assert_int_equal(store_setattr(f->s, dir, OFS_ATTR_MODE, &d, NULL), 0);
}

static void removal_is_the_directorys(void **state)
{
	struct fix *f = *state;
	struct ident ann = user(10, 100, 0, 1), gus = user(11, 11, 100, 2), ola = user(12, 12, 0, 3);
	struct ofs_attr d = obj(OFS_OBJ_DIRECTORY, 10, 100, 0777), m, got;
	struct ofs_oid dir, dd, gm, om, gdf;
	struct wbuf dcap, mcap, ocap;
	struct ofs_dirent e = { .type = OFS_OBJ_METAFILE };
	struct access_req ar = { .now = NOW };
	struct ofs_req q;
	const char *why = "";
	bool replaced;
	struct ofs_dirent old;

	dir = make(f->s, d);
	m = obj(OFS_OBJ_DIRDATA, 10, 100, 0755);
	m.backref.owner = dir;
	dd = make(f->s, m);
	m = obj(OFS_OBJ_METAFILE, 11, 11, 0600);    /* gus's, in ann's directory */
	m.backref.owner = dir;
	gm = make(f->s, m);
	m.uid = 12;                                  /* ola's */
	om = make(f->s, m);
	m = obj(OFS_OBJ_DFILE, 11, 11, 0644);
	m.backref.owner = gm;
	gdf = make(f->s, m);
	e.handle.oid = gm;
	assert_int_equal(store_dirent_create(f->s, dd, "g", &e, 0, &replaced, &old), 0);

	/* 0777: ola may remove gus's file (w and x on the directory) */
	dir_cap(f, &ola, dir, &dcap, &ar);
	assert_int_equal(store_getattr(f->s, gm, &got), 0);
	assert_int_equal(access_removal(f->keys, &ar, &got, &why), 0);
	wbuf_init(&mcap);
	assert_int_equal(access_grant(f->keys, (struct ofs_sid){ { 1 } }, TTL, NOW, &ola, gm, &got,
				      CAP_REMOVE, &mcap), 0);
	assert_int_equal(check(f, &ola, &mcap, OFS_OP_REMOVE, gm, NULL, NOW), 0);
	assert_int_equal(check(f, &ola, &mcap, OFS_OP_REMOVE, gdf, NULL, NOW), 0);
	assert_int_equal(check(f, &ola, &mcap, OFS_OP_READ, gdf, NULL, NOW), -EACCES);
	/* the directory's capability itself is not a removal of the file */
	assert_int_equal(check(f, &ola, &dcap, OFS_OP_REMOVE, gm, NULL, NOW), -EACCES);
	wbuf_free(&mcap);
	wbuf_free(&dcap);

	/* 0755: the directory gives ola no WRITE, so no REMOVE */
	set_mode(f, dir, 0755);
	dir_cap(f, &ola, dir, &dcap, &ar);
	assert_int_equal(access_removal(f->keys, &ar, &got, &why), -EACCES);
	wbuf_free(&dcap);

	/* 01777: ola removes her own, not gus's; ann, the directory's owner, both */
	set_mode(f, dir, 01777);
	dir_cap(f, &ola, dir, &dcap, &ar);
	assert_int_equal(access_removal(f->keys, &ar, &got, &why), -EACCES);
	assert_int_equal(store_getattr(f->s, om, &m), 0);
	assert_int_equal(access_removal(f->keys, &ar, &m, &why), 0);
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_DIRENT_REMOVE;
	q.oid = dd;
	snprintf(q.name, sizeof(q.name), "g");
	assert_int_equal(check_q(f, &ola, &dcap, &q), -EACCES);        /* gus's entry */
	q.op = OFS_OP_DIRENT_CREATE;
	q.flags = OFS_DIRENT_REPLACE;
	q.dirent.type = OFS_OBJ_METAFILE;
	q.dirent.handle.oid = om;
	assert_int_equal(check_q(f, &ola, &dcap, &q), -EACCES);        /* replacing it */
	snprintf(q.name, sizeof(q.name), "new");
	assert_int_equal(check_q(f, &ola, &dcap, &q), 0);              /* a new name */
	wbuf_free(&dcap);
	/* gus, with his file's REMOVE, takes his entry out */
	dir_cap(f, &gus, dir, &dcap, &ar);
	assert_int_equal(access_removal(f->keys, &ar, &got, &why), 0);
	wbuf_init(&ocap);
	assert_int_equal(access_grant(f->keys, (struct ofs_sid){ { 1 } }, TTL, NOW, &gus, gm, &got,
				      CAP_REMOVE, &ocap), 0);
	q.op = OFS_OP_DIRENT_REMOVE;
	snprintf(q.name, sizeof(q.name), "g");
	assert_int_equal(check_q(f, &gus, &dcap, &q), -EACCES);
	assert_int_equal(check_q(f, &gus, &ocap, &q), 0);
	wbuf_free(&ocap);
	wbuf_free(&dcap);
	dir_cap(f, &ann, dir, &dcap, &ar);                               /* not sticky for her */
	assert_int_equal(check_q(f, &ann, &dcap, &q), 0);
	assert_int_equal(access_removal(f->keys, &ar, &got, &why), 0);
	wbuf_free(&dcap);
}

static void every_operation_needs_a_right(void **state)
{
	struct fix *f = *state;
	struct ident ann = user(10, 100, 0, 1), ola = user(12, 12, 0, 3);
	struct access_req ar = { .who = &ola, .now = NOW };
	struct ofs_req q;
	const char *why = "";

	/* a SETATTR that changes nothing is still a change: w on the file */
	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_SETATTR;
	q.oid = f->other;               /* ann's, 0644 */
	assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), -EACCES);
	ar.who = &ann;
	assert_int_equal(access_check(f->s, f->keys, &ar, &q, &why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rights_of_files),
		cmocka_unit_test(rights_of_directories),
		cmocka_unit_test_setup_teardown(a_layout_is_not_evidence, setup, teardown),
		cmocka_unit_test_setup_teardown(a_user_creates_only_oids_she_made, setup, teardown),
		cmocka_unit_test_setup_teardown(a_layout_names_only_parts_she_made_or_had, setup,
						teardown),
		cmocka_unit_test_setup_teardown(every_operation_needs_a_right, setup, teardown),
		cmocka_unit_test_setup_teardown(data_objects_need_a_capability, setup, teardown),
		cmocka_unit_test_setup_teardown(the_file_itself_by_its_bits, setup, teardown),
		cmocka_unit_test_setup_teardown(directories, setup, teardown),
		cmocka_unit_test_setup_teardown(removal_is_the_directorys, setup, teardown),
		cmocka_unit_test_setup_teardown(the_cache_skips_the_mac_not_the_rules, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
