/*
 * ofs_resolve.c - libofs's paths: a path resolved from the root directory,
 * one component at a time through each directory's dirdata (cl_resolve),
 * or up to its parent directory and the dirdata that holds its last name
 * (cl_resolve_parent) - for a put, through the directories walked lately
 * (cl_resolve_parent_cached, ofs_dcache.c). See ofs_impl.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ofs_impl.h"

/* ---- resolution --------------------------------------------------------- */

void cl_resolved_free(struct resolved *r)
{
	free(r->pattr);
	r->pattr = NULL;
}

/* A directory's attributes: from the directories walked lately (when
 * *cached is not NULL: then set if so), else asked (and remembered). */
static int dir_attr(struct ofs_client *c, const struct ofs_handle *h, struct ofs_attr *a,
		    bool *cached)
{
	int rc;

	if (cached && cl_dcache_attr(c, h->oid, a)) {
		*cached = true;
		return 0;
	}
	rc = cl_obj_getattr(c, h, a);
	if (!rc && cached)
		cl_dcache_put_attr(c, h->oid, a);
	return rc;
}

/* Walk p's first n components. On success r->ent is the object the n-th
 * component names (the root for n = 0). cached: through the directories
 * walked lately (NULL: every step asked). */
static int walk(struct ofs_client *c, const struct ofs_path *p, size_t n, struct resolved *r,
		bool *cached)
{
	struct ofs_dirent cur = { .type = OFS_OBJ_DIRECTORY, .handle = c->root };
	int rc;

	memset(r, 0, sizeof(*r));
	r->pattr = malloc(sizeof(*r->pattr));
	if (!r->pattr)
		return -ENOMEM;
	r->chain[0] = c->root.oid;
	for (size_t i = 0; i < n; i++) {
		struct ofs_handle dd;
		struct ofs_dirent next;

		if (cur.type != OFS_OBJ_DIRECTORY)
			return -ENOTDIR;
		r->parent = cur.handle;
		if (cached && cl_dcache_name(c, cur.handle.oid, p->comp[i], &next)) {
			/* (r->pattr: resolve_parent fills it, for the last one) */
			*cached = true;
			cur = next;
			r->chain[i + 1] = cur.handle.oid;
			continue;
		}
		rc = dir_attr(c, &cur.handle, r->pattr, cached);
		if (rc)
			return rc == -ENOENT ? -ENOENT : rc;
		rc = cl_dirdata_for(r->pattr, p->comp[i], &dd);
		if (rc)
			return rc;
		rc = cl_dirent_call(c, OFS_OP_DIRENT_LOOKUP, &dd, p->comp[i], NULL, 0, NULL, &cur);
		if (rc)
			return rc;
		if (cached)
			cl_dcache_put_name(c, r->parent.oid, p->comp[i], &cur);
		r->chain[i + 1] = cur.handle.oid;
	}
	r->ent = cur;
	r->depth = n;
	if (n)
		snprintf(r->name, sizeof(r->name), "%s", p->comp[n - 1]);
	return 0;
}

static int parse_path(const char *s, struct ofs_path **p)
{
	struct ofs_path *t = malloc(sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	rc = path_parse(s, t);
	if (rc) {
		free(t);
		return rc;
	}
	*p = t;
	return 0;
}

/* Resolve the whole path. */
int cl_resolve(struct ofs_client *c, const char *path, struct resolved *r)
{
	struct ofs_path *p;
	int rc = parse_path(path, &p);

	if (rc)
		return rc;
	rc = walk(c, p, p->n, r, NULL);
	free(p);
	return rc;
}

static int resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd, bool *cached)
{
	struct ofs_path *p;
	int rc = parse_path(path, &p);

	if (rc)
		return rc;
	if (p->n == 0) {
		free(p);
		return -EBUSY;          /* the root has no parent */
	}
	if (!ofs_name_valid(p->comp[p->n - 1])) {
		free(p);
		return -OFS_ENAME;
	}
	rc = walk(c, p, p->n - 1, r, cached);
	if (!rc && r->ent.type != OFS_OBJ_DIRECTORY)
		rc = -ENOTDIR;
	if (!rc)
		rc = dir_attr(c, &r->ent.handle, r->pattr, cached);
	if (!rc)
		rc = cl_dirdata_for(r->pattr, p->comp[p->n - 1], dd);
	if (!rc)
		snprintf(name, OFS_NAME_MAX + 1, "%s", p->comp[p->n - 1]);
	free(p);
	return rc;
}

/* Resolve the parent of path (which must be a directory) and return the
 * last name; -EEXIST-free: the entry itself is not looked up. */
int cl_resolve_parent(struct ofs_client *c, const char *path, struct resolved *r,
			  char name[OFS_NAME_MAX + 1], struct ofs_handle *dd)
{
	return resolve_parent(c, path, r, name, dd, NULL);
}

int cl_resolve_parent_cached(struct ofs_client *c, const char *path, struct resolved *r,
			     char name[OFS_NAME_MAX + 1], struct ofs_handle *dd, bool *cached)
{
	*cached = false;
	return resolve_parent(c, path, r, name, dd, cached);
}
