/* tmpstore.c - a real store, or job database, in a temporary folder (see
 * tmpstore.h). */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pbj/jobstore.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

int tmpstore_make(const char *name, uint32_t chunk, struct tmpstore *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/ofs-test-%.20s.XXXXXX", name);
	if (!mkdtemp(t->dir))
		return -errno;
	snprintf(t->data, sizeof(t->data), "%s/s", t->dir);
	rc = store_init(t->data, chunk, NULL, 0, &t->sid);
	if (!rc)
		rc = store_open(t->data, false, &t->s);
	if (rc)
		tmpstore_remove(t);
	return rc;
}

void tmpstore_remove(struct tmpstore *t)
{
	if (t->s)
		store_close(t->s);
	t->s = NULL;
	if (t->dir[0])
		nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	t->dir[0] = '\0';
}

int tmpdb_make(const char *name, struct tmpdb *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/ofs-test-%.20s.XXXXXX", name);
	if (!mkdtemp(t->dir))
		return -errno;
	snprintf(t->path, sizeof(t->path), "%s/pbj.db", t->dir);
	rc = pbj_open(t->path, &t->db);
	if (rc)
		tmpdb_remove(t);
	return rc;
}

void tmpdb_remove(struct tmpdb *t)
{
	pbj_close(t->db);
	t->db = NULL;
	if (t->dir[0])
		nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	t->dir[0] = '\0';
}
