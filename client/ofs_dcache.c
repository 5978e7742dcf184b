/*
 * ofs_dcache.c - the directories a client walked, remembered for a
 * moment (see ofs_impl.h): a put of many files into one directory walks
 * its path once every CL_DCACHE_TTL_MS, not once per file. Two tables,
 * each a fixed number of slots picked by hash (a newer entry replaces an
 * older one in its slot): (directory, name) -> the directory it names,
 * and directory -> its attributes as far as its dirdata (which dirdata a
 * name is in). Only directories are remembered, never files.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/ofs_impl.h"

#define DC_NAMES 256
#define DC_DIRS 64

struct dc_name {
	struct ofs_oid parent;
	char name[OFS_NAME_MAX + 1];
	struct ofs_dirent d;
	int64_t until;                   /* 0: empty */
};

struct dc_dir {
	struct ofs_oid oid;
	struct ofs_attr *a;              /* (its used parts only) */
	int64_t until;
};

struct cl_dcache {
	struct dc_name names[DC_NAMES];
	struct dc_dir dirs[DC_DIRS];
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t slot(struct ofs_oid oid, const char *name, size_t n)
{
	uint64_t h = oid_hash(oid) ^ (name ? ofs_name_hash(name) : 0);

	return (size_t)(h % n);
}

static struct cl_dcache *dc(struct ofs_client *c)
{
	if (!c->dcache)
		c->dcache = calloc(1, sizeof(*c->dcache));
	return c->dcache;
}

bool cl_dcache_name(struct ofs_client *c, struct ofs_oid parent, const char *name,
		    struct ofs_dirent *d)
{
	struct dc_name *e;

	if (!c->dcache)
		return false;
	e = &c->dcache->names[slot(parent, name, DC_NAMES)];
	if (e->until <= mono_ns() || !oid_eq(e->parent, parent) || strcmp(e->name, name) != 0)
		return false;
	*d = e->d;
	return true;
}

void cl_dcache_put_name(struct ofs_client *c, struct ofs_oid parent, const char *name,
			const struct ofs_dirent *d)
{
	struct cl_dcache *k = dc(c);
	struct dc_name *e;

	if (!k || d->type != OFS_OBJ_DIRECTORY || strlen(name) > OFS_NAME_MAX)
		return;
	e = &k->names[slot(parent, name, DC_NAMES)];
	e->parent = parent;
	memcpy(e->name, name, strlen(name) + 1);
	e->d = *d;
	e->until = mono_ns() + (int64_t)CL_DCACHE_TTL_MS * 1000000;
}

bool cl_dcache_attr(struct ofs_client *c, struct ofs_oid oid, struct ofs_attr *a)
{
	struct dc_dir *e;
	uint16_t np;

	if (!c->dcache)
		return false;
	e = &c->dcache->dirs[slot(oid, NULL, DC_DIRS)];
	if (!e->a || e->until <= mono_ns() || !oid_eq(e->oid, oid))
		return false;
	np = e->a->nparts < OFS_MAX_STRIPES ? e->a->nparts : OFS_MAX_STRIPES;
	memcpy(a, e->a, offsetof(struct ofs_attr, parts) + np * sizeof(a->parts[0]));
	return true;
}

void cl_dcache_put_attr(struct ofs_client *c, struct ofs_oid oid, const struct ofs_attr *a)
{
	struct cl_dcache *k = dc(c);
	uint16_t np = a->nparts < OFS_MAX_STRIPES ? a->nparts : OFS_MAX_STRIPES;
	size_t len = offsetof(struct ofs_attr, parts) + np * sizeof(a->parts[0]);
	struct dc_dir *e;
	struct ofs_attr *copy;

	if (!k || a->type != OFS_OBJ_DIRECTORY || !(copy = malloc(len)))
		return;
	memcpy(copy, a, len);
	e = &k->dirs[slot(oid, NULL, DC_DIRS)];
	free(e->a);
	e->oid = oid;
	e->a = copy;
	e->until = mono_ns() + (int64_t)CL_DCACHE_TTL_MS * 1000000;
}

void cl_dcache_clear(struct ofs_client *c)
{
	if (!c->dcache)
		return;
	for (size_t i = 0; i < DC_DIRS; i++)
		free(c->dcache->dirs[i].a);
	free(c->dcache);
	c->dcache = NULL;
}
