/* prepare.c - a job type's preparation at submit (see prepare.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/ofs.h"
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
		fprintf(say, "ofs-pbj: --server %s: %s\n", sidarg, c.why);
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
	/* (what the checks found: not an error, so not "ofs-pbj:") */
	fprintf(say, "drain %s: checked: it holds %llu objects, %llu bytes of file data; %zu "
		"other server%s in service and answering (%zu rack%s), %llu bytes free there\n", sidhex,
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

/* Refuse, on p->say, a submit that needs the cluster and has none. */
static bool no_cluster(struct pbj_prep *p, const char *what)
{
	if (p->ncluster)
		return false;
	fprintf(p->say, "ofs-pbj: %s needs the cluster: --cluster HOST:PORT or OFS_CLUSTER\n",
		what);
	return true;
}

/* Each --server a server of the table, a prefix made whole. */
static int scope_servers(struct pbj_prep *p, struct pbj_job_args *a)
{
	struct ofs_server *e = NULL;
	const char *via = NULL;
	size_t n = 0;
	int rc = pbj_fetch_table(p->cluster, p->ncluster, &e, &n, &via), ret = PBJ_PREP_OK;

	if (rc) {
		fprintf(p->say, "ofs-pbj: cannot read the server table from %s: %s\n",
			p->cluster[0], ofs_strerror(rc));
		return PBJ_PREP_FAILED;
	}
	for (size_t i = 0; i < a->nservers && ret == PBJ_PREP_OK; i++) {
		char why[PBJ_SID_WHY_LEN];
		const struct ofs_server *f = pbj_server_named(a->servers[i], e, n, &rc, why);
		if (!f) {
			fprintf(p->say, "ofs-pbj: --server %s: %s\n", a->servers[i], why);
			ret = PBJ_PREP_REFUSED;
			break;
		}
		sid_to_hex(f->sid, p->sids[i]);
		a->servers[i] = p->sids[i];
	}
	free(e);
	return ret;
}

/* Each --path a file or directory of the cluster. */
static int scope_paths(struct pbj_prep *p, const struct pbj_job_args *a)
{
	struct ofs_attr *at = malloc(sizeof(*at));
	struct ofs_client *c = NULL;
	int rc = at ? ofs_client_open(p->cluster, p->ncluster, &c) : -ENOMEM, ret = PBJ_PREP_OK;

	if (rc) {
		fprintf(p->say, "ofs-pbj: cannot reach the cluster at %s: %s\n", p->cluster[0],
			ofs_strerror(rc));
		ret = PBJ_PREP_FAILED;
	}
	for (size_t i = 0; i < a->npaths && ret == PBJ_PREP_OK; i++) {
		struct ofs_handle h;
		rc = ofs_stat(c, a->paths[i], at, &h);
		if (rc == 0)
			continue;
		fprintf(p->say, "ofs-pbj: --path %s: %s\n", a->paths[i], ofs_strerror(rc));
		ret = rc == -ENOENT || rc == -ENOTDIR || rc == -EINVAL || rc == -ENAMETOOLONG
			? PBJ_PREP_REFUSED : PBJ_PREP_FAILED;
	}
	ofs_client_close(c);
	free(at);
	return ret;
}

int pbj_prepare_scope(struct pbj_prep *p, struct pbj_job_args *a)
{
	bool whole = true;
	int rc = PBJ_PREP_OK;

	for (size_t i = 0; i < a->nservers; i++) {
		struct ofs_sid sid;
		whole &= sid_from_hex(a->servers[i], &sid) == 0;
	}
	if (a->npaths == 0 && (a->nservers == 0 || (whole && !p->ncluster)))
		return PBJ_PREP_OK;
	if (no_cluster(p, a->npaths ? "checking --path" : "a --server prefix"))
		return PBJ_PREP_REFUSED;
	if (a->nservers)
		rc = scope_servers(p, a);
	if (rc == PBJ_PREP_OK && a->npaths)
		rc = scope_paths(p, a);
	return rc;
}

int pbj_prepare_drain(struct pbj_prep *p, struct pbj_job_args *a)
{
	int rc;

	if (a->nservers != 1)
		return PBJ_PREP_REFUSED;     /* (the parser takes exactly one) */
	if (no_cluster(p, "submit drain"))
		return PBJ_PREP_REFUSED;
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
	int rc, ret = PBJ_PREP_OK;

	if (no_cluster(p, "submit rebalance")) {
		free(pl);
		return PBJ_PREP_REFUSED;
	}
	rc = pl ? pbj_plan_now(&o, threshold, pl, &ps, &n) : -ENOMEM;
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
	if (pl->balanced) {
		fprintf(out, "every server is within the threshold: nothing to move\n");
		if (p->dry_run)
			ret = PBJ_PREP_DONE;
	} else
		fprintf(out, "bytes to move: %llu (the least any plan must move: %llu)\n",
			(unsigned long long)pl->bytes, (unsigned long long)pl->min_bytes);
out:
	free(pl);
	free(ps);
	return ret;
}
