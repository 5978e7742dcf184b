/*
 * removed.c - a ring of the latest removals (see removed.h).
 */
#include "store/removed.h"

#include <pthread.h>
#include <stdlib.h>

struct note {
	uint64_t seq;                       /* 0: unused */
	struct ofs_oid oid;
};

struct removed {
	pthread_mutex_t mu;
	uint64_t seq;                       /* of the latest note */
	struct note notes[REMOVED_NOTES];   /* note seq lives at seq % REMOVED_NOTES */
};

struct removed *removed_new(void)
{
	struct removed *r = calloc(1, sizeof(*r));

	if (r)
		pthread_mutex_init(&r->mu, NULL);
	return r;
}

void removed_free(struct removed *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void removed_note(struct removed *r, struct ofs_oid oid)
{
	struct note *n;

	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->seq++;
	n = &r->notes[r->seq % REMOVED_NOTES];
	n->seq = r->seq;
	n->oid = oid;
	pthread_mutex_unlock(&r->mu);
}

uint64_t removed_seq(struct removed *r)
{
	uint64_t seq;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->mu);
	seq = r->seq;
	pthread_mutex_unlock(&r->mu);
	return seq;
}

bool removed_since(struct removed *r, struct ofs_oid oid, uint64_t since)
{
	bool found = false;

	if (!r)
		return false;
	pthread_mutex_lock(&r->mu);
	if (r->seq - since > REMOVED_NOTES) {
		found = true;                /* pushed out: cannot tell */
	} else {
		/* every note kept, also those before since: a remove forwarded
		 * here a moment before the fetch began, while its source had not
		 * had it yet, counts too (an object a client removed never comes
		 * back: OIDs are not reused) */
		uint64_t oldest = r->seq > REMOVED_NOTES ? r->seq - REMOVED_NOTES + 1 : 1;
		for (uint64_t k = oldest; k <= r->seq && !found; k++)
			found = oid_eq(r->notes[k % REMOVED_NOTES].oid, oid);
	}
	pthread_mutex_unlock(&r->mu);
	return found;
}
