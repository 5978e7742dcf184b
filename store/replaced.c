/*
 * replaced.c - a ring of the latest replacements (see replaced.h).
 */
#include "store/replaced.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/oid.h"

struct note {
	bool used;
	struct ofs_oid dirdata, now;
	char name[OFS_NAME_MAX + 1];
	struct ofs_dirent old;
};

struct replaced {
	pthread_mutex_t mu;
	size_t next;                        /* the slot the next note takes */
	struct note notes[REPLACED_NOTES];
};

struct replaced *replaced_new(void)
{
	struct replaced *r = calloc(1, sizeof(*r));

	if (r)
		pthread_mutex_init(&r->mu, NULL);
	return r;
}

void replaced_free(struct replaced *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void replaced_note(struct replaced *r, struct ofs_oid dirdata, const char *name,
		   struct ofs_oid now, const struct ofs_dirent *old)
{
	struct note *n;

	if (!r || strlen(name) > OFS_NAME_MAX)
		return;
	pthread_mutex_lock(&r->mu);
	n = &r->notes[r->next];
	r->next = (r->next + 1) % REPLACED_NOTES;
	n->used = true;
	n->dirdata = dirdata;
	n->now = now;
	strcpy(n->name, name);
	n->old = *old;
	pthread_mutex_unlock(&r->mu);
}

bool replaced_find(struct replaced *r, struct ofs_oid dirdata, const char *name,
		   struct ofs_oid now, struct ofs_dirent *old)
{
	bool found = false;

	if (!r)
		return false;
	pthread_mutex_lock(&r->mu);
	/* newest first: a name replaced twice by the same object cannot
	 * happen (each put makes a new one), but the latest note is the one */
	for (size_t k = 1; k <= REPLACED_NOTES && !found; k++) {
		const struct note *n = &r->notes[(r->next + REPLACED_NOTES - k) % REPLACED_NOTES];
		if (n->used && oid_eq(n->dirdata, dirdata) && oid_eq(n->now, now) &&
		    strcmp(n->name, name) == 0) {
			*old = n->old;
			found = true;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return found;
}
