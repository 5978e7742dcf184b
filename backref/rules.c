/* rules.c - the rules of back references (see rules.h). */
#include <errno.h>
#include <string.h>

#include "backref/rules.h"

int br_expect_part(const struct ofs_attr *owner, struct ofs_oid owner_oid, uint16_t i,
		   struct br_expect *e)
{
	if ((owner->type != OFS_OBJ_METAFILE && owner->type != OFS_OBJ_DIRECTORY) ||
	    i >= owner->nparts || i >= OFS_MAX_STRIPES)
		return -EINVAL;
	e->owner = owner_oid;
	e->stripe = owner->type == OFS_OBJ_METAFILE ? (long)i : -1;
	e->name = NULL;
	e->type = owner->type == OFS_OBJ_METAFILE ? OFS_OBJ_DFILE : OFS_OBJ_DIRDATA;
	return 0;
}

void br_expect_entry(const struct ofs_attr *dirdata, const char *name,
		     const struct ofs_dirent *d, struct br_expect *e)
{
	e->owner = dirdata->backref.owner;   /* (the directory, not the dirdata) */
	e->stripe = -1;
	e->name = name;
	e->type = d->type;
}

enum br_pointer_verdict br_judge_pointer(const struct br_expect *e, enum br_where where,
					 const struct ofs_backref *br, uint8_t type,
					 const struct br_says *other)
{
	if (where == BR_UNKNOWN)
		return BRP_WAIT;
	if (where == BR_NOWHERE)
		return BRP_DANGLING;
	if (!oid_is_zero(br->owner) && !oid_eq(br->owner, e->owner)) {
		/* Named by another owner: does that one point at it too? */
		if (!other)
			return BRP_ASK_OTHER;
		if (!other->held && other->quiet)
			return BRP_WAIT;
		if (other->held && (other->ans == POINTS_YES || other->ans == POINTS_ELSEWHERE))
			return BRP_SECOND_OWNER;
	}
	if (!oid_eq(br->owner, e->owner) || (e->stripe >= 0 && br->stripe != (uint32_t)e->stripe) ||
	    (e->name && strcmp(br->name, e->name) != 0))
		return BRP_BACKREF;
	if (e->type >= 0 && type != e->type)
		return BRP_TYPE;
	return BRP_OK;
}

bool br_building(const struct ofs_attr *a)
{
	return (a->type == OFS_OBJ_METAFILE || a->type == OFS_OBJ_DIRECTORY) && a->nparts == 0;
}

enum br_owner_verdict br_judge_owner(const struct ofs_attr *a, bool young,
				     const struct br_says *owner)
{
	bool unfinished;

	if (oid_is_zero(a->backref.owner))
		return BRO_SKIP;                 /* the root */
	if (br_building(a) && young)
		return BRO_SKIP;                 /* a put or mkdir in progress */
	if (!owner)
		return BRO_ASK;
	if (!owner->held && owner->quiet)
		return BRO_WAIT;                 /* some server did not answer */
	unfinished = owner->held && owner->ans == POINTS_BUILDING && !young;
	if (owner->held && owner->ans != POINTS_NO && !unfinished)
		return BRO_OK;                   /* (or being built, within the grace) */
	if (unfinished)
		return BRO_OWNER_UNFINISHED;
	if (br_building(a))
		return BRO_UNFINISHED;
	return owner->held ? BRO_NOT_POINTED : BRO_NO_OWNER;
}

uint8_t br_points(const struct ofs_attr *a, struct ofs_oid child, long slot)
{
	uint8_t ans = POINTS_NO;

	if (br_building(a))
		return POINTS_BUILDING;
	if (a->type != OFS_OBJ_METAFILE && a->type != OFS_OBJ_DIRECTORY)
		return POINTS_NO;
	for (uint16_t i = 0; i < a->nparts && i < OFS_MAX_STRIPES; i++) {
		if (!oid_eq(a->parts[i].oid, child))
			continue;
		if (a->type == OFS_OBJ_DIRECTORY || slot < 0 || (long)i == slot)
			return POINTS_YES;
		ans = POINTS_ELSEWHERE;
	}
	return ans;
}
