/* jobtype.c - the job types, one row each (see jobtype.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/proto.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"
#include "pbj/prepare.h"

static const struct pbj_jobtype types[] = {
	{
		.type = PBJ_TYPE_SCRUB, .name = "scrub", .kind = OFS_TASK_SCRUB,
		.submitted = true,
		.opts = PBJ_OPT_PATH | PBJ_OPT_SERVERS | PBJ_OPT_REPAIR | PBJ_OPT_METADATA_ONLY |
			PBJ_OPT_MAX_REPAIRS,
		.repairs = PBJ_REPAIRS_BY_CHOICE, .ends = PBJ_ENDS_BY_FINDINGS,
		.about = "check every copy of every object against its checksums",
		.prepare = pbj_prepare_scope, .scheduled = true,
	},
	{
		.type = PBJ_TYPE_REPAIR, .name = "repair", .kind = OFS_TASK_SCRUB,
		.submitted = true,
		.opts = PBJ_OPT_PATH | PBJ_OPT_SERVERS | PBJ_OPT_METADATA_ONLY | PBJ_OPT_FROM_JOB |
			PBJ_OPT_MAX_REPAIRS,
		.repairs = PBJ_REPAIRS_ALWAYS, .ends = PBJ_ENDS_BY_FINDINGS,
		.about = "scrub and repair from a good copy in one pass, or repair what a job found",
		.prepare = pbj_prepare_scope,
	},
	{
		.type = PBJ_TYPE_DRAIN, .name = "drain", .kind = OFS_TASK_DRAIN,
		.submitted = true, .opts = PBJ_OPT_SERVER_ONE,
		.repairs = PBJ_REPAIRS_NEVER, .ends = PBJ_ENDS_BY_MOVING, .empties = true,
		.about = "move every copy off a server, then mark it out",
		.prepare = pbj_prepare_drain,
	},
	{
		.type = PBJ_TYPE_REBALANCE, .name = "rebalance", .kind = OFS_TASK_REBALANCE,
		.submitted = true, .opts = PBJ_OPT_THRESHOLD,
		.repairs = PBJ_REPAIRS_NEVER, .ends = PBJ_ENDS_BY_MOVING,
		.about = "move file data until every server's used fraction is near the mean",
		.prepare = pbj_prepare_rebalance,
	},
	{
		/* (recorded by ofs-pbj serve for a server's catch-up) */
		.type = PBJ_TYPE_CATCHUP, .name = "catch-up", .kind = 0,
		.submitted = false, .repairs = PBJ_REPAIRS_NEVER, .ends = PBJ_ENDS_BY_FINDINGS,
		.about = "a server's catch-up, recorded by ofs-pbj serve",
	},
};

const struct pbj_jobtype *pbj_jobtype(int type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}

const struct pbj_jobtype *pbj_jobtype_at(size_t i)
{
	return i < sizeof(types) / sizeof(types[0]) ? &types[i] : NULL;
}

const struct pbj_jobtype *pbj_jobtype_named(const char *name)
{
	for (size_t i = 0; name && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].name, name))
			return &types[i];
	return NULL;
}

void pbj_jobtype_submitted_names(char *out, size_t len)
{
	size_t at = 0;

	if (len)
		out[0] = '\0';
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int n;
		if (!types[i].submitted || at >= len)
			continue;
		n = snprintf(out + at, len - at, "%s%s", at ? ", " : "", types[i].name);
		if (n > 0)
			at += (size_t)n;
	}
}
