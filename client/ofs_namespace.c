/*
 * ofs_namespace.c - libofs's namespace (ofs.h, ofs_impl.h): directories
 * made, listed in name order and removed; a file's name unlinked; a name
 * renamed, or moved into another directory; the attributes of what a
 * path or a handle names, read (stat, getattr, getattr_many: one request
 * per server) and changed (chmod, chown). Each change keeps the order
 * that leaves a crash at worst orphans (ofs.c, "Ordering").
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ofs_impl.h"
#include "lib/cap.h"

/* ---- directories -------------------------------------------------------- */

int ofs_mkdir(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd, dir, data;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	bool created_dir = false, created_data = false;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EEXIST;     /* mkdir / */
	if (!rc)
		rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (rc)
		goto out;
	/* Directory first, then its dirdata (whose back reference names it),
	 * then the layout, then the entry that makes it visible. */
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	cl_owner(&a->uid, &a->gid);
	a->backref.owner = r.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
	cl_dir_layout(c, a);
	rc = cl_obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	created_dir = true;
	memset(&a->backref, 0, sizeof(a->backref));
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = cl_obj_create(c, a, a->replicas, NULL, &data);
	if (rc)
		goto out;
	created_data = true;
	a->type = OFS_OBJ_DIRECTORY;
	a->nparts = 1;
	a->parts[0] = data;
	rc = cl_obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	if (rc)
		goto out;
	ent.type = OFS_OBJ_DIRECTORY;
	ent.handle = dir;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, 0, NULL, NULL);
	if (!rc)
		created_dir = created_data = false;   /* now owned by the entry */
out:
	if (created_data)
		cl_obj_remove(c, &data);
	if (created_dir)
		cl_obj_remove(c, &dir);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

struct dlist {
	size_t n, cap;
	char (*names)[OFS_NAME_MAX + 1];
	struct ofs_dirent *ents;
};

static int dlist_add(struct dlist *l, const char *name, const struct ofs_dirent *d)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char (*nn)[OFS_NAME_MAX + 1] = realloc(l->names, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		l->names = nn;
		struct ofs_dirent *ne = realloc(l->ents, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		l->ents = ne;
		l->cap = cap;
	}
	snprintf(l->names[l->n], OFS_NAME_MAX + 1, "%s", name);
	l->ents[l->n++] = *d;
	return 0;
}

/* Every entry of one dirdata object, following the list cursor. */
static int list_dirdata(struct ofs_client *c, const struct ofs_handle *dd, uint32_t max,
			struct dlist *l)
{
	struct ofs_req *q = cl_req_new(OFS_OP_DIRENT_LIST, dd->oid);
	int rc = 0;
	bool more = true;

	if (!q)
		return -ENOMEM;
	q->max = max;
	while (more && !rc) {
		struct ofs_list_reader lr = { 0 };
		struct ofs_dirent d;
		char name[OFS_NAME_MAX + 1];
		uint8_t *b = NULL;
		size_t n = 0;

		rc = cl_call(c, dd, q, &b, &n);
		if (!rc)
			rc = proto_list_open_dirent(&lr, b, n);
		while (!rc && proto_list_next_dirent(&lr, name, &d) == 1) {
			rc = dlist_add(l, name, &d);
			snprintf(q->name, sizeof(q->name), "%s", name);
		}
		more = !rc && lr.more && max == OFS_MAX_LIST;
		free(b);
	}
	free(q);
	return rc;
}

static void dlist_free(struct dlist *l)
{
	free(l->names);
	free(l->ents);
}

/* Entries of several dirdata objects are merged by sorting an index.
 * qsort has no context argument; sort_list is set just before it and the
 * client is used by one thread at a time, but two clients in two threads
 * could race, so the sort holds sort_mu. */
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct dlist *sort_list;   /* guarded by sort_mu */
static int idx_cmp(const void *a, const void *b)
{
	return strcmp(sort_list->names[*(const size_t *)a], sort_list->names[*(const size_t *)b]);
}

int ofs_readdir(struct ofs_client *c, const char *path, ofs_readdir_fn fn, void *arg)
{
	struct resolved r;
	struct dlist l = { 0 };
	size_t *idx = NULL;
	int rc = cl_resolve(c, path, &r);

	if (rc)
		goto out;
	if (r.ent.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = cl_obj_getattr(c, &r.ent.handle, r.pattr);
	if (rc)
		goto out;
	for (uint16_t i = 0; i < r.pattr->nparts && !rc; i++)
		rc = list_dirdata(c, &r.pattr->parts[i], OFS_MAX_LIST, &l);
	if (rc)
		goto out;
	idx = malloc((l.n ? l.n : 1) * sizeof(*idx));
	if (!idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < l.n; i++)
		idx[i] = i;
	if (r.pattr->nparts > 1) {
		pthread_mutex_lock(&sort_mu);
		sort_list = &l;
		qsort(idx, l.n, sizeof(*idx), idx_cmp);
		pthread_mutex_unlock(&sort_mu);
	}
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = fn(l.names[idx[i]], &l.ents[idx[i]], arg);
out:
	free(idx);
	dlist_free(&l);
	cl_resolved_free(&r);
	return rc;
}

int ofs_rmdir(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_attr *da = malloc(sizeof(*da));
	struct ofs_dirent gone;
	char name[OFS_NAME_MAX + 1];
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!da)
		return -ENOMEM;
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc)
		goto out;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &gone);
	if (rc)
		goto out;
	if (gone.type != OFS_OBJ_DIRECTORY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &r.ent.handle, &gone.handle);
	if (!rc)
		rc = cl_obj_getattr(c, &gone.handle, da);
	if (rc)
		goto out;
	for (uint16_t i = 0; i < da->nparts && !rc; i++) {
		struct dlist l = { 0 };
		rc = list_dirdata(c, &da->parts[i], 1, &l);
		if (!rc && l.n)
			rc = -ENOTEMPTY;
		dlist_free(&l);
	}
	if (rc)
		goto out;
	{
		struct ofs_oid by = gone.handle.oid;
		rc = cl_dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &gone, NULL,
				       cl_caps_sticky(c, r.ent.handle.oid) ? &by : NULL);
	}
	if (rc)
		goto out;
	for (uint16_t i = 0; i < da->nparts; i++)
		cl_obj_remove(c, &da->parts[i]);
	cl_obj_remove(c, &gone.handle);
out:
	cl_resolved_free(&r);
	free(da);
	return rc;
}

int ofs_stat(struct ofs_client *c, const char *path, struct ofs_attr *attr, struct ofs_handle *h)
{
	struct resolved r;
	int rc = cl_resolve(c, path, &r);

	if (!rc)
		rc = cl_obj_getattr(c, &r.ent.handle, attr);
	if (!rc && h)
		*h = r.ent.handle;
	cl_resolved_free(&r);
	return rc;
}

int ofs_chmod(struct ofs_client *c, const char *path, uint32_t mode)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct resolved r;
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!a)
		return -ENOMEM;
	if (mode & ~07777u) {
		free(a);
		return -EINVAL;
	}
	rc = cl_resolve(c, path, &r);
	a->mode = mode;
	if (!rc)
		rc = cl_obj_setattr(c, &r.ent.handle, OFS_ATTR_MODE, a);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

int ofs_chown(struct ofs_client *c, const char *path, uint32_t uid, uint32_t gid, bool keep_gid)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct resolved r;
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	if (!a)
		return -ENOMEM;
	rc = cl_resolve(c, path, &r);
	if (!rc && keep_gid)
		rc = cl_obj_getattr(c, &r.ent.handle, a);
	a->uid = uid;
	if (!keep_gid)
		a->gid = gid;
	if (!rc)
		rc = cl_obj_setattr(c, &r.ent.handle, OFS_ATTR_OWNER, a);
	cl_resolved_free(&r);
	free(a);
	return rc;
}

int ofs_getattr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *attr)
{
	return cl_obj_getattr(c, h, attr);
}

/* GETATTR_MANY to one server for objects idx[0..n) of hs: the statuses
 * into rcs (those it answered), attributes into out. */
static int attrs_from(struct ofs_client *c, struct ofs_sid sid, const struct ofs_handle *hs,
		      const size_t *idx, size_t n, struct ofs_attr *out, int *rcs)
{
	struct conn *cn = cl_conn_of(c, sid);
	struct ofs_req *q = cl_req_new(OFS_OP_GETATTR_MANY, (struct ofs_oid){ { 0 } });
	uint8_t oids[OFS_GETATTR_MANY_MAX * OFS_OID_LEN], *b = NULL;
	struct ofs_attr *a = malloc(n * sizeof(*a));
	int32_t st[OFS_GETATTR_MANY_MAX];
	size_t blen = 0;
	int rc;

	if (!q || !a) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(oids + i * OFS_OID_LEN, hs[idx[i]].oid.b, OFS_OID_LEN);
	q->data = oids;
	q->data_len = n * OFS_OID_LEN;
	rc = cn ? conn_call(cn, q, &b, &blen) : -OFS_EUNREACHABLE;
	if (conn_is_transport_error(rc))
		cl_mark_down(c, sid);
	if (!rc)
		rc = proto_decode_attrs_many(b, blen, st, a, (uint32_t)n);
	for (size_t i = 0; !rc && i < n; i++) {
		rcs[idx[i]] = st[i];
		if (st[i] == 0)
			out[idx[i]] = a[i];
	}
out:
	free(b);
	free(a);
	free(q);
	return rc;
}

int ofs_getattr_many(struct ofs_client *c, const struct ofs_handle *hs, size_t n,
		     struct ofs_attr *out, int *rcs)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct ofs_sid *first = malloc((n ? n : 1) * sizeof(*first));
	bool *sent = calloc(n ? n : 1, sizeof(*sent));
	int rc = idx && first && sent ? 0 : -ENOMEM;

	/* Each object's first copy to try; one without copies is asked of
	 * no one here (the one-by-one pass below says why). */
	for (size_t i = 0; !rc && i < n; i++) {
		struct ofs_sid order[OFS_MAX_REPLICAS];
		rcs[i] = -OFS_EUNREACHABLE;
		if (hs[i].nsids && cl_try_order(c, &hs[i], order))
			first[i] = order[0];
		else
			sent[i] = true;
	}
	/* Each server once per batch of up to OFS_GETATTR_MANY_MAX objects. */
	for (size_t i = 0; !rc && i < n; i++) {
		size_t k = 0;
		if (sent[i])
			continue;
		for (size_t j = i; j < n && k < OFS_GETATTR_MANY_MAX; j++)
			if (!sent[j] && sid_eq(first[j], first[i])) {
				idx[k++] = j;
				sent[j] = true;
			}
		rc = attrs_from(c, first[i], hs, idx, k, out, rcs);
		if (rc != -ENOMEM)
			rc = 0;                  /* (what it did not answer: below) */
	}
	/* What the first copy could not say (down, behind, moved): one by
	 * one, through every copy. */
	for (size_t i = 0; !rc && i < n; i++)
		if (rcs[i] != 0)
			rcs[i] = cl_obj_getattr(c, &hs[i], &out[i]);
	free(idx);
	free(first);
	free(sent);
	return rc;
}

/* Does the file mf's back reference still name entry `name` of dir? (A
 * rename that took the file elsewhere has rewritten it.) */
static bool still_named(struct ofs_client *c, const struct ofs_handle *mf, struct ofs_oid dir,
			const char *name)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	bool yes = a && cl_obj_getattr(c, mf, a) == 0 && oid_eq(a->backref.owner, dir) &&
		   strcmp(a->backref.name, name) == 0;

	free(a);
	return yes;
}

int ofs_unlink(struct ofs_client *c, const char *path)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	int rc;

	memset(&ent, 0, sizeof(ent));
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EISDIR;
	if (!rc)
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, name, NULL, 0, NULL, &ent);
	if (!rc && ent.type != OFS_OBJ_METAFILE)
		rc = -EISDIR;
	if (!rc)
		rc = cl_may(c, &r.ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &r.ent.handle, &ent.handle);
	if (!rc) {
		struct ofs_dirent gone = ent;
		struct ofs_oid by = gone.handle.oid;
		bool failed_over = false;
		rc = cl_dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &dd, name, NULL, 0, NULL, &ent,
				       &failed_over, cl_caps_sticky(c, r.ent.handle.oid) ? &by : NULL);
		if (rc == -ENOENT && failed_over && still_named(c, &gone.handle, r.ent.handle.oid, name)) {
			/* The copy asked first removed the entry and died before
			 * it answered: this remove is done; its file goes too. */
			ent = gone;
			rc = 0;
		}
	}
	if (!rc && ent.type == OFS_OBJ_METAFILE)
		cl_file_destroy(c, &ent.handle);
	cl_resolved_free(&r);
	return rc;
}

/* Fault injection (ofs_client_set_fault): die here, as a crash would. */
static void fault_point(struct ofs_client *c, const char *name)
{
	if (c->fault[0] && strcmp(c->fault, name) == 0)
		raise(SIGKILL);
}

/* A user's rename: both directories writable, the object movable (its
 * owner or a writer), and a file it replaces removable. */
static int may_rename(struct ofs_client *c, const struct resolved *ro, const struct resolved *rn,
		      const struct ofs_dirent *ent, const struct ofs_handle *ndd, const char *nname)
{
	struct ofs_dirent there;
	int rc;

	if (!c->caps)
		return 0;
	rc = cl_may(c, &ro->ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may(c, &rn->ent.handle, CAP_WRITE);
	if (!rc)
		rc = cl_may_remove(c, &ro->ent.handle, &ent->handle);
	if (!rc && cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, ndd, nname, NULL, 0, NULL, &there) == 0 &&
	    there.type == OFS_OBJ_METAFILE)
		rc = cl_may_remove(c, &rn->ent.handle, &there.handle);
	return rc;
}

int ofs_rename(struct ofs_client *c, const char *oldpath, const char *newpath)
{
	struct resolved ro, rn, rt;
	struct ofs_handle odd, ndd;
	struct ofs_dirent ent, old;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	char oname[OFS_NAME_MAX + 1], nname[OFS_NAME_MAX + 1], target[OFS_PATH_MAX + 1];
	bool replaced = false;
	int rc;

	cl_dcache_clear(c);     /* (this client's own change is seen at once) */

	memset(&ro, 0, sizeof(ro));
	memset(&rn, 0, sizeof(rn));
	memset(&rt, 0, sizeof(rt));
	if (!a)
		return -ENOMEM;
	rc = cl_resolve_parent(c, oldpath, &ro, oname, &odd);
	if (!rc)
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &odd, oname, NULL, 0, NULL, &ent);
	if (rc)
		goto out;
	/* An existing directory as the target: move into it. */
	snprintf(target, sizeof(target), "%s", newpath);
	if (cl_resolve(c, newpath, &rt) == 0 && rt.ent.type == OFS_OBJ_DIRECTORY) {
		if (snprintf(target, sizeof(target), "%s/%s", newpath, oname) >= (int)sizeof(target)) {
			rc = -ENAMETOOLONG;
			goto out;
		}
	}
	rc = cl_resolve_parent(c, target, &rn, nname, &ndd);
	if (rc == -EBUSY)
		rc = -EEXIST;
	if (rc)
		goto out;
	/* A directory may not move below itself. */
	if (ent.type == OFS_OBJ_DIRECTORY) {
		for (size_t i = 0; i <= rn.depth; i++)
			if (oid_eq(rn.chain[i], ent.handle.oid)) {
				rc = -EINVAL;
				goto out;
			}
	}
	if (oid_eq(odd.oid, ndd.oid) && strcmp(oname, nname) == 0)
		goto out;     /* renaming onto itself */
	rc = may_rename(c, &ro, &rn, &ent, &ndd, nname);
	if (rc)
		goto out;
	rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &ndd, nname, &ent,
			 ent.type == OFS_OBJ_METAFILE ? OFS_DIRENT_REPLACE : 0, &replaced, &old);
	if (rc)
		goto out;
	fault_point(c, "rename-entry-made");
	a->backref.owner = rn.ent.handle.oid;
	snprintf(a->backref.name, sizeof(a->backref.name), "%s", nname);
	rc = cl_obj_setattr(c, &ent.handle, OFS_ATTR_BACKREF, a);
	if (!rc)
		fault_point(c, "rename-backref-set");
	if (!rc) {
		bool failed_over = false;
		struct ofs_oid by = ent.handle.oid;
		rc = cl_dirent_call_ex(c, OFS_OP_DIRENT_REMOVE, &odd, oname, NULL, 0, NULL, NULL,
				       &failed_over, cl_caps_sticky(c, ro.ent.handle.oid) ? &by : NULL);
		/* The copy asked first removed the old name and died before it
		 * answered, so the next copy no longer has it: this rename's
		 * own remove, done (as for ofs_remove). */
		if (rc == -ENOENT && failed_over)
			rc = 0;
	}
	if (!rc && replaced && !oid_eq(old.handle.oid, ent.handle.oid))
		cl_file_destroy(c, &old.handle);
out:
	cl_resolved_free(&ro);
	cl_resolved_free(&rn);
	cl_resolved_free(&rt);
	free(a);
	return rc;
}
