/* health.c - the cluster's health, check by check (see health.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ofs_error.h"
#include "lib/timefmt.h"
#include "pbj/health.h"
#include "pbj/jobargs.h"
#include "pbj/jobtype.h"
#include "pbj/runner.h"
#include "pbj/servers.h"

#define QUEUED_STUCK_S 60            /* a queued job no scheduler takes */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A check that found count things: appended to checks. */
static json_t *add_check(json_t *checks, const char *name, int severity, uint64_t count,
			 const char *detail)
{
	json_t *c = json_object(), *items = json_array();

	json_object_set_new(c, "name", json_string(name));
	json_object_set_new(c, "severity", json_string(severity == PBJ_HEALTH_ERROR ? "error" : "warn"));
	json_object_set_new(c, "count", json_integer((json_int_t)count));
	json_object_set_new(c, "detail", json_string(detail));
	json_object_set_new(c, "items", items);
	json_array_append_new(checks, c);
	return items;
}

/* servers_down and servers_recovering, from the table and each server. */
static void check_servers(const struct ofs_server *e, size_t n, json_t *checks, int *status)
{
	json_t *down = json_array(), *rec = json_array();
	char first_down[160] = "", first_rec[160] = "", detail[256];

	for (size_t i = 0; i < n; i++) {
		struct ofs_stats st;
		char sid[OFS_OID_HEX], seen[OFS_TIME_LEN] = "never";
		int rc;
		if (e[i].state == OFS_SERVER_OUT)
			continue;                /* (out of service: not counted on) */
		sid_to_hex(e[i].sid, sid);
		memset(&st, 0, sizeof(st));
		rc = pbj_server_stats(&e[i], PBJ_STATS_UP_MS, &st);
		if (rc) {
			json_t *o = json_object();
			if (e[i].last_seen_ns > 0)
				time_format(e[i].last_seen_ns, seen);
			json_object_set_new(o, "sid", json_string(sid));
			json_object_set_new(o, "address", json_string(e[i].address));
			json_object_set_new(o, "last_seen", json_string(seen));
			json_object_set_new(o, "error", json_string(ofs_strerror(rc)));
			json_array_append_new(down, o);
			if (!first_down[0])
				snprintf(first_down, sizeof(first_down), "%s (%s, last seen %s)", sid,
					 e[i].address, seen);
		} else if (st.behind) {
			json_t *o = json_object();
			json_object_set_new(o, "sid", json_string(sid));
			json_object_set_new(o, "behind", json_integer((json_int_t)st.behind));
			json_object_set_new(o, "no_current_copy", json_integer((json_int_t)st.stuck));
			json_array_append_new(rec, o);
			if (!first_rec[0])
				snprintf(first_rec, sizeof(first_rec), "%s (%llu copies to catch up)", sid,
					 (unsigned long long)st.behind);
		}
	}
	if (json_array_size(down)) {
		snprintf(detail, sizeof(detail), "%zu server%s in service do%s not answer: %s%s",
			 json_array_size(down), json_array_size(down) == 1 ? "" : "s",
			 json_array_size(down) == 1 ? "es" : "", first_down,
			 json_array_size(down) > 1 ? ", ..." : "");
		json_array_extend(add_check(checks, "servers_down", PBJ_HEALTH_ERROR,
					    json_array_size(down), detail), down);
		*status = PBJ_HEALTH_ERROR;
	}
	if (json_array_size(rec)) {
		snprintf(detail, sizeof(detail), "%zu server%s catching up: %s%s",
			 json_array_size(rec), json_array_size(rec) == 1 ? "" : "s", first_rec,
			 json_array_size(rec) > 1 ? ", ..." : "");
		json_array_extend(add_check(checks, "servers_recovering", PBJ_HEALTH_WARN,
					    json_array_size(rec), detail), rec);
		if (*status < PBJ_HEALTH_WARN)
			*status = PBJ_HEALTH_WARN;
	}
	json_decref(down);
	json_decref(rec);
}

/* The last job of a finding type over the whole cluster (no --path,
 * --server or --job), ended: its id in *id (0: none). */
struct last_ctx {
	int64_t id;
};

static int pick_last_whole(const struct pbj_job *j, void *arg)
{
	struct last_ctx *lc = arg;
	const struct pbj_jobtype *t = pbj_jobtype(j->type);
	struct pbj_job_args *a;

	if (!t || t->kind == 0 || t->ends != PBJ_ENDS_BY_FINDINGS || (j->flags & PBJ_DRY_RUN) ||
	    j->id < lc->id)
		return 0;
	a = malloc(sizeof(*a));
	if (a && pbj_job_args_decode(j->args, a) == 0 && !a->nservers && !a->npaths && !a->from_job)
		lc->id = j->id;
	free(a);
	return 0;
}

struct unrepaired_ctx {
	json_t *items;
	uint64_t n;
};

static int count_unrepaired(const struct pbj_finding *f, void *arg)
{
	struct unrepaired_ctx *u = arg;
	char oh[OFS_OID_HEX], sh[OFS_OID_HEX];

	if (f->repaired)
		return 0;
	if (u->n++ < PBJ_HEALTH_ITEMS) {
		json_t *o = json_object();
		oid_to_hex(f->oid, oh);
		sid_to_hex(f->server, sh);
		json_object_set_new(o, "job", json_integer(f->job));
		json_object_set_new(o, "kind", json_string(ofs_finding_name(f->kind)));
		json_object_set_new(o, "oid", json_string(oh));
		json_object_set_new(o, "server", json_string(sh));
		json_array_append_new(u->items, o);
	}
	return 0;
}

/* findings_unrepaired: the last whole-cluster scrub's or repair's. */
static int check_findings(struct pbj_db *db, json_t *checks, int *status)
{
	struct last_ctx lc = { 0 };
	struct unrepaired_ctx u = { .items = json_array() };
	char detail[256];
	int rc = pbj_job_list(db, PBJ_SUCCEEDED, pick_last_whole, &lc);

	if (!rc && lc.id)
		rc = pbj_finding_list(db, lc.id, NULL, OFS_FINDING_NONE, NULL, count_unrepaired, &u);
	if (!rc && u.n) {
		snprintf(detail, sizeof(detail), "%llu finding%s of job %lld (the last scrub of the "
			 "whole cluster) not repaired: ofs-pbj report %lld; ofs-pbj submit repair "
			 "--job %lld", (unsigned long long)u.n, u.n == 1 ? "" : "s", (long long)lc.id,
			 (long long)lc.id, (long long)lc.id);
		json_array_extend(add_check(checks, "findings_unrepaired", PBJ_HEALTH_WARN, u.n, detail),
				  u.items);
		if (*status < PBJ_HEALTH_WARN)
			*status = PBJ_HEALTH_WARN;
	}
	json_decref(u.items);
	return rc;
}

/* jobs_stuck: a job paused at its repair cap, one retrying a server that
 * does not answer, one queued a minute with no scheduler to take it. */
struct stuck_ctx {
	json_t *items;
	uint64_t n;
	bool scheduler;                  /* a scheduler holds the lease */
	struct pbj_db *db;
	char first[200];
};

struct retry_ctx {
	char why[PBJ_REASON_LEN];
};

static int task_retrying(const struct pbj_task *t, void *arg)
{
	struct retry_ctx *r = arg;

	if (!r->why[0] && !pbj_state_final(t->state) && t->retries > 0 && t->reason[0])
		snprintf(r->why, sizeof(r->why), "retrying: %.200s", t->reason);
	return 0;
}

static int stuck_one(const struct pbj_job *j, void *arg)
{
	struct stuck_ctx *s = arg;
	struct retry_ctx r = { "" };
	const char *why = NULL;
	char buf[PBJ_REASON_LEN + 64];

	if (j->state == PBJ_PAUSED && !strncmp(j->reason, PBJ_CAP_REASON, strlen(PBJ_CAP_REASON))) {
		why = "its repair cap reached: ofs-pbj resume or cancel it";
	} else if (j->state == PBJ_RUNNING || j->state == PBJ_PAUSED) {
		if (pbj_task_list(s->db, j->id, task_retrying, &r) == 0 && r.why[0])
			why = r.why;
	} else if (j->state == PBJ_QUEUED && !s->scheduler &&
		   now_ns() - j->submitted_ns > (int64_t)QUEUED_STUCK_S * 1000000000) {
		why = "queued, and no scheduler runs: start ofs-pbj serve, or ofs-pbj wait it";
	}
	if (!why || !pbj_jobtype(j->type) || !pbj_jobtype(j->type)->kind)
		return 0;
	snprintf(buf, sizeof(buf), "%s", why);
	if (s->n++ < PBJ_HEALTH_ITEMS) {
		json_t *o = json_object();
		json_object_set_new(o, "job", json_integer(j->id));
		json_object_set_new(o, "type", json_string(pbj_type_name(j->type)));
		json_object_set_new(o, "state", json_string(pbj_state_name(j->state)));
		json_object_set_new(o, "why", json_string(buf));
		json_array_append_new(s->items, o);
	}
	if (!s->first[0])
		snprintf(s->first, sizeof(s->first), "job %lld: %.160s", (long long)j->id, buf);
	return 0;
}

static int check_jobs(struct pbj_db *db, json_t *checks, int *status)
{
	struct stuck_ctx s = { .items = json_array(), .db = db };
	char who[PBJ_REASON_LEN], detail[256];
	bool got = false;
	int rc;

	/* (a scheduler holds the lease: probe it, and give it back at once) */
	rc = pbj_lease_take(db, "ofs-pbj health (probe)", 1, &got, who);
	if (!rc && got)
		pbj_lease_drop(db, "ofs-pbj health (probe)");
	s.scheduler = !rc && !got;
	for (int st = PBJ_QUEUED; !rc && st <= PBJ_PAUSED; st++)
		rc = pbj_job_list(db, st, stuck_one, &s);
	if (!rc && s.n) {
		snprintf(detail, sizeof(detail), "%llu job%s not moving: %s%s", (unsigned long long)s.n,
			 s.n == 1 ? "" : "s", s.first, s.n > 1 ? "; ..." : "");
		json_array_extend(add_check(checks, "jobs_stuck", PBJ_HEALTH_WARN, s.n, detail), s.items);
		if (*status < PBJ_HEALTH_WARN)
			*status = PBJ_HEALTH_WARN;
	}
	json_decref(s.items);
	return rc;
}

int pbj_health(const char *const *cluster, size_t ncluster, struct pbj_db *db, json_t **doc,
	       int *status)
{
	static const char *const names[] = { "ok", "warn", "error" };
	struct ofs_server *e = NULL;
	const char *via = NULL;
	size_t n = 0;
	json_t *checks;
	int rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);

	if (rc)
		return rc;
	*status = PBJ_HEALTH_OK;
	checks = json_array();
	check_servers(e, n, checks, status);
	free(e);
	if (db) {
		rc = check_findings(db, checks, status);
		if (!rc)
			rc = check_jobs(db, checks, status);
	}
	if (rc) {
		json_decref(checks);
		return rc;
	}
	*doc = json_object();
	json_object_set_new(*doc, "status", json_string(names[*status]));
	json_object_set_new(*doc, "checks", checks);
	return 0;
}
