/* prepare.c - a job type's preparation at submit (see prepare.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "pbj/plan.h"
#include "pbj/prepare.h"
#include "pbj/runner.h"
#include "pbj/servers.h"

/* The drain's checks, said on p->say. */
static int drain_checks(struct pbj_prep *p, const char *sidarg)
{
	const char *const *cluster = p->cluster;
	const char *sidhex = p->sidhex;
	FILE *say = p->say;
	struct pbj_drain_check c;

	pbj_drain_check(cluster, p->ncluster, sidarg, p->dry_run, &c);
	sid_to_hex(c.sid, p->sidhex);
	switch (c.verdict) {
	case PBJ_DRAIN_NO_TABLE:
		fprintf(say, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(c.rc));
		return PBJ_PREP_FAILED;
	case PBJ_DRAIN_BAD_SERVER:
		fprintf(say, "ofs-pbj: --server %s: %s\n", sidarg, pbj_sid_why(c.rc));
		return PBJ_PREP_REFUSED;
	case PBJ_DRAIN_OUT:
		fprintf(say, "ofs-pbj: drain %s: the server is out of service already; "
			"`ofs-pbj server set %s --state in` returns it\n", sidhex, sidhex);
		return PBJ_PREP_REFUSED;
	case PBJ_DRAIN_SILENT:
		fprintf(say, "ofs-pbj: drain %s: the server does not answer (%s); a drain "
			"copies from it, so it must run\n", sidhex, ofs_strerror(c.rc));
		return PBJ_PREP_FAILED;
	default:
		break;
	}
	fprintf(say, "ofs-pbj: drain %s: %llu objects, %llu bytes of file data; %zu other "
		"server%s in service and answering (%zu rack%s), %llu bytes free there\n", sidhex,
		(unsigned long long)c.objects, (unsigned long long)c.bytes, c.others,
		c.others == 1 ? "" : "s", c.racks, c.racks == 1 ? "" : "s",
		(unsigned long long)c.avail);
	switch (c.verdict) {
	case PBJ_DRAIN_TOO_FEW:
		fprintf(say, "ofs-pbj: drain %s refused: some of its objects have %u copies, and "
			"only %zu other server%s in service can hold them; add a server first\n",
			sidhex, c.max_copies, c.others, c.others == 1 ? "" : "s");
		return PBJ_PREP_REFUSED;
	case PBJ_DRAIN_NO_ROOM:
		fprintf(say, "ofs-pbj: drain %s refused: it holds %llu bytes and the servers in "
			"service besides it have %llu bytes free (a drain leaves 5%% spare)\n", sidhex,
			(unsigned long long)c.bytes, (unsigned long long)c.avail);
		return PBJ_PREP_REFUSED;
	case PBJ_DRAIN_MARK_FAILED:
		fprintf(say, "ofs-pbj: drain %s: marking it draining failed: %s\n", sidhex,
			ofs_strerror(c.rc));
		return PBJ_PREP_FAILED;
	default:
		return PBJ_PREP_OK;
	}
}

int pbj_prepare_drain(struct pbj_prep *p, struct pbj_job_args *a)
{
	int rc;

	if (a->nservers != 1)
		return PBJ_PREP_REFUSED;     /* (the parser takes exactly one) */
	rc = drain_checks(p, a->servers[0]);
	if (rc == PBJ_PREP_OK)
		a->servers[0] = p->sidhex;
	return rc;
}

int pbj_prepare_rebalance(struct pbj_prep *p, struct pbj_job_args *a)
{
	int threshold = a->threshold ? (int)a->threshold : PBJ_DEFAULT_THRESHOLD;
	struct pbj_runner_opts o = { .cluster = p->cluster, .ncluster = p->ncluster };
	struct plan_server *ps = NULL;
	struct plan *pl = malloc(sizeof(*pl));
	FILE *out = p->preview;
	size_t n = 0;
	int rc = pl ? pbj_plan_now(&o, threshold, pl, &ps, &n) : -ENOMEM, ret = PBJ_PREP_OK;

	if (rc) {
		fprintf(p->say, "ofs-pbj: planning the rebalance from %s: %s\n", p->cluster[0],
			ofs_strerror(rc));
		ret = PBJ_PREP_FAILED;
		goto out;
	}
	fprintf(out, "rebalance plan: threshold %d points around the mean, %.1f%% used\n",
		threshold, pl->mean * 100);
	for (size_t i = 0; i < n; i++) {
		char hex[OFS_OID_HEX];
		sid_to_hex(ps[i].sid, hex);
		if (!ps[i].in)
			fprintf(out, "  %s  (not in service or not answering: left out)\n", hex);
		else
			fprintf(out, "  %s  %llu of %llu bytes, %.1f%%\n", hex,
				(unsigned long long)ps[i].used, (unsigned long long)ps[i].capacity,
				ps[i].capacity ? 100.0 * (double)ps[i].used / (double)ps[i].capacity : 0);
	}
	for (size_t k = 0; k < pl->nmoves; k++) {
		char from[OFS_OID_HEX], to[OFS_OID_HEX];
		sid_to_hex(pl->moves[k].from, from);
		sid_to_hex(pl->moves[k].to, to);
		fprintf(out, "  move %llu bytes from %s to %s\n",
			(unsigned long long)pl->moves[k].bytes, from, to);
	}
	if (pl->balanced)
		fprintf(out, "every server is within the threshold: nothing to move\n");
	else
		fprintf(out, "bytes to move: %llu (the least any plan must move: %llu)\n",
			(unsigned long long)pl->bytes, (unsigned long long)pl->min_bytes);
out:
	free(pl);
	free(ps);
	return ret;
}
