/* ofs_repair.c - the calls repair makes (see ofs_repair.h). */
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
#include "client/ofs_repair.h"

/* ---- repair: giving objects without an owner a place ----------------------- */

int ofs_link_object(struct ofs_client *c, const char *path, const struct ofs_handle *h,
		    uint8_t type)
{
	struct resolved r;
	struct ofs_handle dd;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_dirent ent;
	char name[OFS_NAME_MAX + 1];
	int rc;

	memset(&r, 0, sizeof(r));
	if (!a)
		return -ENOMEM;
	if (type != OFS_OBJ_METAFILE && type != OFS_OBJ_DIRECTORY) {
		free(a);
		return -EINVAL;
	}
	rc = cl_resolve_parent(c, path, &r, name, &dd);
	if (rc == -EBUSY)
		rc = -EEXIST;
	if (!rc) {
		/* The entry first (flags 0: an existing name is -EEXIST), then
		 * the back reference that says where the object now lives. */
		ent.type = type;
		ent.handle = *h;
		rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, &ent, 0, NULL, NULL);
	}
	if (!rc) {
		a->backref.owner = r.ent.handle.oid;
		snprintf(a->backref.name, sizeof(a->backref.name), "%s", name);
		rc = cl_obj_setattr(c, h, OFS_ATTR_BACKREF, a);
	}
	cl_resolved_free(&r);
	free(a);
	return rc;
}

int ofs_adopt_part(struct ofs_client *c, const char *path, const struct ofs_handle *part,
		   uint8_t type, uint64_t size)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle owner;
	int rc;

	if (!a)
		return -ENOMEM;
	if ((type != OFS_OBJ_DFILE && type != OFS_OBJ_DIRDATA) || part->nsids == 0) {
		free(a);
		return -EINVAL;
	}
	/* An owner around the part (one stripe, or one dirdata), with as many
	 * copies as the part has; linked, then the part's back reference. */
	a->type = type == OFS_OBJ_DFILE ? OFS_OBJ_METAFILE : OFS_OBJ_DIRECTORY;
	a->mode = type == OFS_OBJ_DFILE ? 0644 : 0755;
	cl_owner(&a->uid, &a->gid);
	if (type == OFS_OBJ_DFILE) {
		snprintf(a->dist, sizeof(a->dist), "simple_stripe");
		a->strip_size = 1u << 20;
		a->replicas = part->nsids;
		a->confidence = part->nsids;
	} else {
		cl_dir_layout(c, a);
	}
	rc = cl_obj_create(c, a, a->replicas ? a->replicas : part->nsids, NULL, &owner);
	if (rc) {
		free(a);
		return rc;
	}
	a->nparts = 1;
	a->parts[0] = *part;
	a->size = type == OFS_OBJ_DFILE ? size : 0;
	rc = cl_obj_setattr(c, &owner, (type == OFS_OBJ_DFILE ? OFS_ATTR_SIZE : 0) | OFS_ATTR_LAYOUT, a);
	if (!rc)
		rc = ofs_link_object(c, path, &owner, a->type);
	if (!rc) {
		memset(&a->backref, 0, sizeof(a->backref));
		a->backref.owner = owner.oid;
		a->backref.stripe = 0;
		rc = cl_obj_setattr(c, part, OFS_ATTR_BACKREF, a);
	} else {
		cl_obj_remove(c, &owner);
	}
	free(a);
	return rc;
}

int ofs_copy_part(struct ofs_client *c, const struct ofs_handle *part, uint8_t type,
		  uint64_t size, const struct ofs_backref *br, struct ofs_handle *out)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	uint8_t *buf = NULL;
	uint64_t got = 0;
	int rc;

	if (!a)
		return -ENOMEM;
	if (part->nsids == 0 || (type != OFS_OBJ_DFILE && type != OFS_OBJ_DIRDATA)) {
		free(a);
		return -EINVAL;
	}
	if (type == OFS_OBJ_DIRDATA)
		size = 0;                    /* a new dirdata starts empty */
	a->type = type;
	a->mode = type == OFS_OBJ_DFILE ? 0644 : 0755;
	cl_owner(&a->uid, &a->gid);
	a->backref = *br;
	a->replicas = part->nsids;
	a->confidence = (uint8_t)(part->nsids / 2 + 1);   /* a majority, as remade dirdata */
	rc = cl_obj_create(c, a, part->nsids, NULL, out);
	free(a);
	if (rc)
		return rc;
	if (size && !(buf = malloc(size < OFS_MAX_IO ? (size_t)size : OFS_MAX_IO)))
		rc = -ENOMEM;
	for (uint64_t off = 0; !rc && off < size;) {
		size_t n = size - off < OFS_MAX_IO ? (size_t)(size - off) : OFS_MAX_IO;
		rc = cl_dfile_read(c, part, off, buf, n);
		if (!rc)
			rc = cl_dfile_write(c, out, off, buf, n);
		off += n;
	}
	if (!rc && type == OFS_OBJ_DFILE)
		rc = cl_dfile_commit(c, out, &got);
	if (!rc && got != size)
		rc = -EIO;                   /* (the source changed size meanwhile) */
	free(buf);
	if (rc)
		cl_obj_remove(c, out);
	return rc;
}

int ofs_remove_part(struct ofs_client *c, const struct ofs_handle *part)
{
	return cl_obj_remove(c, part);
}

int ofs_set_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		  const struct ofs_dirent *d, uint32_t flags)
{
	return cl_dirent_call(c, OFS_OP_DIRENT_CREATE, dirdata, name, d, flags, NULL, NULL);
}

int ofs_unlink_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		     struct ofs_dirent *removed)
{
	return cl_dirent_call(c, OFS_OP_DIRENT_REMOVE, dirdata, name, NULL, 0, NULL, removed);
}

int ofs_set_backref(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_backref *br)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	a->backref = *br;
	rc = cl_obj_setattr(c, h, OFS_ATTR_BACKREF, a);
	free(a);
	return rc;
}

int ofs_dirdata_for(const struct ofs_attr *dir, const char *name, struct ofs_handle *dd)
{
	return cl_dirdata_for(dir, name, dd);
}

int ofs_setattr_handle(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a)
{
	return cl_obj_setattr(c, h, mask, a);
}

int ofs_recreate(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_attr *a)
{
	struct ofs_req *q = cl_req_new(OFS_OP_CREATE, h->oid);
	int rc;

	if (!q)
		return -ENOMEM;
	if (h->nsids == 0 || h->nsids > OFS_MAX_REPLICAS) {
		free(q);
		return -EINVAL;
	}
	q->attr = *a;
	q->attr.nsids = h->nsids;
	memcpy(q->attr.sids, h->sids, sizeof(h->sids));
	if (!q->attr.replicas)
		q->attr.replicas = h->nsids;
	rc = cl_call(c, h, q, NULL, NULL);
	free(q);
	return rc;
}

int ofs_relink_entry(struct ofs_client *c, const struct ofs_handle *dir, const char *name,
		     const struct ofs_dirent *d, uint32_t flags)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle dd;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = cl_obj_getattr(c, dir, a);
	if (!rc && a->type != OFS_OBJ_DIRECTORY)
		rc = -ENOTDIR;
	if (!rc)
		rc = cl_dirdata_for(a, name, &dd);
	if (!rc)
		rc = cl_dirent_call(c, OFS_OP_DIRENT_CREATE, &dd, name, d, flags, NULL, NULL);
	free(a);
	return rc;
}
