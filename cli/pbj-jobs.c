/*
 * pbj-jobs.c - the job commands of ofs-pbj: submit, status, report, list,
 * pause, resume, cancel (ofs-pbj(8); schedules, serve and config:
 * pbj-sched.c). The job store is pbj/jobstore, the running of a job
 * pbj/runner.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/pbj-jobs.h"
#include "cli/pbj-jobs-impl.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "pbj/cron.h"
#include "pbj/health.h"
#include "pbj/jobargs.h"
#include "pbj/jobopts.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"
#include "pbj/prepare.h"
#include "pbj/runner.h"
#include "pbj/servers.h"


/* A finding's kind as reports spell it ("unknown" for one this build
 * does not know). */
static const char *kind_name(int kind)
{
	const char *n = ofs_finding_name(kind);

	return n ? n : "unknown";
}

/* A job's type as the store spells it ("unknown" for one this build does
 * not know). */
static const char *type_name(int type)
{
	const char *n = pbj_type_name(type);

	return n ? n : "unknown";
}

volatile sig_atomic_t jobs_stop_flag;

void jobs_on_signal(int sig)
{
	(void)sig;
	jobs_stop_flag = 1;
}

int jobs_usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs-pbj: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(see ofs-pbj --help)\n");
	return EXIT_USAGE;
}

int jobs_store_err(struct pbj_db *db, const char *what, int rc)
{
	fprintf(stderr, "ofs-pbj: %s: %s%s%s\n", what, ofs_strerror(rc),
		db && pbj_errmsg(db)[0] ? ": " : "", db ? pbj_errmsg(db) : "");
	return EXIT_FAIL;
}

static const char *db_path(const char *given)
{
	const char *e = getenv("OFS_PBJ_DB");

	if (given)
		return given;
	return e && *e ? e : "./pbj.db";
}

/* The job database's folder must be there: SQLite would say only
 * "Input/output error". 0, or exit 2 said. */
static int db_folder_ok(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		return 0;                    /* (the current folder) */
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	fprintf(stderr, "ofs-pbj: job database %s: its folder %s %s (--db or OFS_PBJ_DB)\n", path,
		dir, stat(dir, &st) == 0 ? "is not a folder" : "does not exist");
	return EXIT_USAGE;
}

static int open_db(const char *path, struct pbj_db **db)
{
	int rc = db_folder_ok(path);

	if (rc)
		return rc;
	rc = pbj_open(path, db);

	if (rc == -OFS_ECORRUPT) {
		fprintf(stderr, "ofs-pbj: %s: not an ofs-pbj job database, or damaged; "
			"it was left as it is (give another --db)\n", path);
		return EXIT_FAIL;
	}
	if (rc == -OFS_EVERSION) {
		fprintf(stderr, "ofs-pbj: %s: made by a newer ofs-pbj; it was left as it is\n", path);
		return EXIT_FAIL;
	}
	if (rc) {
		fprintf(stderr, "ofs-pbj: %s: %s\n", path, ofs_strerror(rc));
		return EXIT_FAIL;
	}
	return 0;
}

static int parse_job_id(const char *s, int64_t *id)
{
	uint64_t v;

	if (parse_uint(s, 1, INT64_MAX, &v))
		return -EINVAL;
	*id = (int64_t)v;
	return 0;
}

/* ---- status and report ---------------------------------------------------- */

struct tasks_json {
	json_t *arr;
};

static int task_json(const struct pbj_task *t, void *arg)
{
	json_t *o = json_object();
	char hex[OFS_OID_HEX];

	sid_to_hex(t->server, hex);
	json_object_set_new(o, "server", json_string(hex));
	json_object_set_new(o, "state", json_string(pbj_state_name(t->state)));
	json_object_set_new(o, "objects_done", json_integer((json_int_t)t->objects_done));
	json_object_set_new(o, "bytes_done", json_integer((json_int_t)t->bytes_done));
	oid_to_hex(t->cursor, hex);
	json_object_set_new(o, "cursor", oid_is_zero(t->cursor) ? json_null() : json_string(hex));
	json_object_set_new(o, "retries", json_integer(t->retries));
	json_object_set_new(o, "reason", t->reason[0] ? json_string(t->reason) : json_null());
	json_array_append_new(((struct tasks_json *)arg)->arr, o);
	return 0;
}

struct kinds {
	json_t *by_kind;
	int64_t total, repaired;
};

static int count_kind(const struct pbj_finding *f, void *arg)
{
	struct kinds *k = arg;
	json_t *v = json_object_get(k->by_kind, kind_name(f->kind));

	json_object_set_new(k->by_kind, kind_name(f->kind),
			    json_integer(v ? json_integer_value(v) + 1 : 1));
	k->total++;
	k->repaired += f->repaired;
	return 0;
}

static json_t *time_json(int64_t ns)
{
	char t[OFS_TIME_LEN];

	if (!ns)
		return json_null();
	time_format(ns, t);
	return json_string(t);
}

/* What a job was asked to do beyond its type, as JSON: "dry_run" and
 * "repair" always, then the arguments it has ("servers", "paths",
 * "from_job", "threshold", "max_repairs", "metadata_only"). Arguments
 * that do not decode are left out. */
static json_t *asked_json(const struct pbj_job *j)
{
	struct pbj_job_args *a = malloc(sizeof(*a));
	json_t *o = json_object();

	json_object_set_new(o, "dry_run", json_boolean(j->flags & PBJ_DRY_RUN));
	json_object_set_new(o, "repair", json_boolean(j->flags & PBJ_REPAIR));
	if (a && pbj_job_args_decode(j->args, a) == 0) {
		if (a->nservers) {
			json_t *arr = json_array();
			for (size_t i = 0; i < a->nservers; i++)
				json_array_append_new(arr, json_string(a->servers[i]));
			json_object_set_new(o, "servers", arr);
		}
		if (a->npaths) {
			json_t *arr = json_array();
			for (size_t i = 0; i < a->npaths; i++)
				json_array_append_new(arr, json_string(a->paths[i]));
			json_object_set_new(o, "paths", arr);
		}
		if (a->from_job)
			json_object_set_new(o, "from_job", json_integer(a->from_job));
		if (a->threshold)
			json_object_set_new(o, "threshold", json_integer(a->threshold));
		if (a->max_repairs)
			json_object_set_new(o, "max_repairs", json_integer(a->max_repairs));
		if (a->metadata_only)
			json_object_set_new(o, "metadata_only", json_true());
	}
	free(a);
	return o;
}

/* asked_json's document in a line a person reads ("" for a plain job):
 * "dry run, repair, servers 3f0c..., paths /a /b". */
static void asked_text(const json_t *asked, char *out, size_t len)
{
	static const char *const lists[] = { "servers", "paths" };
	size_t at = 0;
	int n;

	out[0] = '\0';
#define ADD(...) do { n = snprintf(out + at, len - at, __VA_ARGS__); \
		      if (n > 0 && (size_t)n < len - at) at += (size_t)n; } while (0)
	if (json_is_true(json_object_get(asked, "dry_run")))
		ADD("%sdry run", at ? ", " : "");
	if (json_is_true(json_object_get(asked, "repair")))
		ADD("%srepair", at ? ", " : "");
	if (json_is_true(json_object_get(asked, "metadata_only")))
		ADD("%smetadata only", at ? ", " : "");
	for (size_t k = 0; k < 2; k++) {
		const json_t *arr = json_object_get(asked, lists[k]), *v;
		size_t i;
		if (json_array_size(arr))          /* ("server X", "servers X Y") */
			ADD("%s%.*s", at ? ", " : "", (int)strlen(lists[k]) -
			    (json_array_size(arr) == 1), lists[k]);
		json_array_foreach(arr, i, v)
			ADD(" %s", json_string_value(v));
	}
	if (json_object_get(asked, "from_job"))
		ADD("%sfindings of job %lld", at ? ", " : "",
		    (long long)json_integer_value(json_object_get(asked, "from_job")));
	if (json_object_get(asked, "threshold"))
		ADD("%sthreshold %lld", at ? ", " : "",
		    (long long)json_integer_value(json_object_get(asked, "threshold")));
#undef ADD
}

/* The status document (ofs-pbj(8), status --json). */
static int status_json(struct pbj_db *db, const struct pbj_job *j, json_t **out)
{
	json_t *o = json_object(), *p = json_object(), *fo = json_object();
	struct tasks_json tj = { .arr = json_array() };
	struct kinds k = { .by_kind = json_object() };
	struct pbj_sum sum;
	double secs, rate = 0;
	int rc = pbj_summarize(db, j->id, &sum);

	if (!rc)
		rc = pbj_task_list(db, j->id, task_json, &tj);
	if (!rc)
		rc = pbj_finding_list(db, j->id, NULL, OFS_FINDING_NONE, NULL, count_kind, &k);
	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "type", json_string(type_name(j->type)));
	json_object_set_new(o, "state", json_string(pbj_state_name(j->state)));
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "submitted", time_json(j->submitted_ns));
	json_object_set_new(o, "started", time_json(j->started_ns));
	json_object_set_new(o, "finished", time_json(j->finished_ns));
	if (j->reason[0])
		json_object_set_new(o, "reason", json_string(j->reason));
	if (j->schedule[0])
		json_object_set_new(o, "schedule", json_string(j->schedule));
	json_object_set_new(o, "dry_run", json_boolean(j->flags & PBJ_DRY_RUN));
	json_object_set_new(o, "asked", asked_json(j));
	json_object_set_new(p, "objects_done", json_integer((json_int_t)sum.objects_done));
	json_object_set_new(p, "objects_total", json_integer((json_int_t)sum.objects_total));
	json_object_set_new(p, "bytes_done", json_integer((json_int_t)sum.bytes_done));
	json_object_set_new(p, "bytes_total", json_integer((json_int_t)sum.bytes_total));
	if (j->started_ns) {
		int64_t end = j->finished_ns;
		if (!end) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		}
		secs = (double)(end - j->started_ns) / 1e9;
		if (secs > 0)
			rate = (double)sum.bytes_done / secs;
	}
	json_object_set_new(p, "rate_bytes_per_s", json_integer((json_int_t)rate));
	if (rate > 0 && sum.bytes_total > sum.bytes_done && !pbj_state_final(j->state))
		json_object_set_new(p, "eta_s",
				    json_integer((json_int_t)((double)(sum.bytes_total - sum.bytes_done) / rate)));
	else
		json_object_set_new(p, "eta_s", pbj_state_final(j->state) ? json_integer(0) : json_null());
	json_object_set_new(o, "progress", p);
	json_object_set_new(o, "tasks", tj.arr);
	json_object_set_new(fo, "total", json_integer(k.total));
	json_object_set_new(fo, "repaired", json_integer(k.repaired));
	json_object_set_new(fo, "by_kind", k.by_kind);
	json_object_set_new(o, "findings", fo);
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

void jobs_print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

static void print_status_text(const json_t *o)
{
	const json_t *p = json_object_get(o, "progress"), *f = json_object_get(o, "findings");
	const char *key;
	json_t *v;
	size_t i;

	char asked[512];

	printf("job %lld: %s %s", (long long)json_integer_value(json_object_get(o, "id")),
	       json_string_value(json_object_get(o, "type")),
	       json_string_value(json_object_get(o, "state")));
	if (json_object_get(o, "reason"))
		printf(" (%s)", json_string_value(json_object_get(o, "reason")));
	asked_text(json_object_get(o, "asked"), asked, sizeof(asked));
	if (asked[0])
		printf("\n  asked: %s", asked);
	printf("\n  objects %lld of %lld",
	       (long long)json_integer_value(json_object_get(p, "objects_done")),
	       (long long)json_integer_value(json_object_get(p, "objects_total")));
	if (json_integer_value(json_object_get(p, "bytes_total")))   /* (none: metadata only) */
		printf(", bytes %lld of %lld, %.1f MB/s",
		       (long long)json_integer_value(json_object_get(p, "bytes_done")),
		       (long long)json_integer_value(json_object_get(p, "bytes_total")),
		       (double)json_integer_value(json_object_get(p, "rate_bytes_per_s")) / 1e6);
	if (json_is_integer(json_object_get(p, "eta_s")) &&
	    strcmp(json_string_value(json_object_get(o, "state")), "running") == 0)
		printf(", ETA %llds", (long long)json_integer_value(json_object_get(p, "eta_s")));
	printf("\n  findings %lld", (long long)json_integer_value(json_object_get(f, "total")));
	json_object_foreach((json_t *)json_object_get(f, "by_kind"), key, v)
		printf(", %s %lld", key, (long long)json_integer_value(v));
	printf("\n");
	json_array_foreach(json_object_get(o, "tasks"), i, v) {
		printf("  task on %s: %s, %lld objects", json_string_value(json_object_get(v, "server")),
		       json_string_value(json_object_get(v, "state")),
		       (long long)json_integer_value(json_object_get(v, "objects_done")));
		if (json_is_string(json_object_get(v, "reason")))
			printf(" (%s)", json_string_value(json_object_get(v, "reason")));
		printf("\n");
	}
}

/* A job that succeeded with nothing to say, in one line ("job 7: scrub
 * succeeded, no findings: 5120 objects, 5368709120 bytes in 25.1 s"):
 * true when it was one, else false (and nothing printed). */
static bool print_clean_line(const json_t *o)
{
	const json_t *p = json_object_get(o, "progress"), *f = json_object_get(o, "findings");
	const char *state = json_string_value(json_object_get(o, "state"));
	const struct pbj_jobtype *t;
	char asked[512];
	double secs = 0;

	if (!state || strcmp(state, "succeeded") || json_integer_value(json_object_get(f, "total")) ||
	    json_object_get(o, "reason"))
		return false;
	asked_text(json_object_get(o, "asked"), asked, sizeof(asked));
	if (json_is_integer(json_object_get(p, "rate_bytes_per_s")) &&
	    json_integer_value(json_object_get(p, "rate_bytes_per_s")) > 0)
		secs = (double)json_integer_value(json_object_get(p, "bytes_done")) /
		       (double)json_integer_value(json_object_get(p, "rate_bytes_per_s"));
	t = pbj_jobtype_named(json_string_value(json_object_get(o, "type")));
	printf("job %lld: %s succeeded%s: %lld objects, %lld bytes%s",
	       (long long)json_integer_value(json_object_get(o, "id")),
	       json_string_value(json_object_get(o, "type")),
	       t && t->ends == PBJ_ENDS_BY_MOVING ? "" : ", no findings",
	       (long long)json_integer_value(json_object_get(p, "objects_done")),
	       (long long)json_integer_value(json_object_get(p, "bytes_done")),
	       t && t->ends == PBJ_ENDS_BY_MOVING ? " moved" : "");
	if (secs > 0)
		printf(" in %.1f s", secs);
	printf("%s%s%s\n", asked[0] ? " (" : "", asked, asked[0] ? ")" : "");
	return true;
}

/* Exit status for a finished job (ofs-pbj(8), EXIT STATUS). */
static int job_exit(const json_t *st)
{
	const char *state = json_string_value(json_object_get(st, "state"));
	const json_t *f = json_object_get(st, "findings");
	int type;

	if (!strcmp(state, "paused") && json_is_string(json_object_get(st, "reason")) &&
	    !strncmp(json_string_value(json_object_get(st, "reason")), PBJ_CAP_REASON,
		     strlen(PBJ_CAP_REASON)))
		return EXIT_FINDINGS;        /* stopped at its repair cap: a human decides */
	if (strcmp(state, "succeeded") != 0)
		return EXIT_FAIL;
	if (json_is_string(json_object_get(st, "reason")) &&
	    !strncmp(json_string_value(json_object_get(st, "reason")), PBJ_SKIPPED_REASON,
		     strlen(PBJ_SKIPPED_REASON)))
		return EXIT_FINDINGS;        /* checked what it reached: not all */
	if (pbj_type_parse(json_string_value(json_object_get(st, "type")), &type) == 0 &&
	    pbj_jobtype(type)->ends == PBJ_ENDS_BY_MOVING)
		return 0;                    /* moved what it had to (or, dry: the plan) */
	return json_integer_value(json_object_get(f, "total")) >
	       json_integer_value(json_object_get(f, "repaired")) ? EXIT_FINDINGS : 0;
}

static int cmd_status(struct pbj_db *db, int64_t id, bool json)
{
	struct pbj_job *j = malloc(sizeof(*j));
	json_t *o = NULL;
	int rc;

	if (!j)
		return EXIT_FAIL;
	rc = pbj_job_get(db, id, j);
	if (rc == -ENOENT) {
		free(j);
		fprintf(stderr, "ofs-pbj: no job %lld\n", (long long)id);
		return EXIT_USAGE;
	}
	if (!rc)
		rc = status_json(db, j, &o);
	free(j);
	if (rc)
		return jobs_store_err(db, "status", rc);
	if (json)
		jobs_print_json(o);
	else
		print_status_text(o);
	json_decref(o);
	return 0;
}

struct report_ctx {
	json_t *arr;
	bool json;
	size_t n;                         /* findings shown */
};

static int report_one(const struct pbj_finding *f, void *arg)
{
	struct report_ctx *r = arg;
	char sh[OFS_OID_HEX], oh[OFS_OID_HEX];

	sid_to_hex(f->server, sh);
	oid_to_hex(f->oid, oh);
	r->n++;
	if (!r->json) {
		static const char *const how[] = { "", "; repaired: ", "; would: ", "; repair failed: ",
						   "; not repaired: " };
		printf("%-18s %s on %s: %s%s%s\n", kind_name(f->kind), oh, sh, f->detail,
		       f->repair[0] ? how[f->repair_state] : "", f->repair[0] ? f->repair : "");
		return 0;
	}
	json_t *o = json_object();
	json_object_set_new(o, "server", json_string(sh));
	json_object_set_new(o, "oid", json_string(oh));
	json_object_set_new(o, "kind", json_string(kind_name(f->kind)));
	json_object_set_new(o, "detail", json_string(f->detail));
	json_object_set_new(o, "repaired", json_boolean(f->repaired));
	if (f->repair_state != OFS_REPAIR_NONE) {
		static const char *const names[] = { "none", "repaired", "would", "failed", "left" };
		json_object_set_new(o, "repair_state", json_string(names[f->repair_state]));
		json_object_set_new(o, "repair", json_string(f->repair));
		if (!sid_is_zero(f->source)) {
			char src[OFS_OID_HEX];
			sid_to_hex(f->source, src);
			json_object_set_new(o, "source", json_string(src));
		}
	}
	json_array_append_new(r->arr, o);
	return 0;
}

/* The servers of a job's tasks, for a SID prefix (add_task_sid). */
struct task_sids {
	struct ofs_sid *s;
	size_t n, cap;
};

static int add_task_sid(const struct pbj_task *t, void *arg)
{
	struct task_sids *ts = arg;

	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? 2 * ts->cap : 16;
		struct ofs_sid *p = realloc(ts->s, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ts->s = p;
		ts->cap = cap;
	}
	ts->s[ts->n++] = t->server;
	return 0;
}

/* report --server: a SID, or a prefix of one of the job's servers. 0 or
 * an exit status (said). */
static int report_server(struct pbj_db *db, int64_t id, const char *arg, struct ofs_sid *out)
{
	struct task_sids ts = { 0 };
	char why[PBJ_SID_WHY_LEN];
	int rc;

	if (sid_from_hex(arg, out) == 0)
		return 0;
	rc = pbj_task_list(db, id, add_task_sid, &ts);
	if (rc) {
		free(ts.s);
		return jobs_store_err(db, "report", rc);
	}
	rc = pbj_resolve_sid_in(arg, ts.s, ts.n, out);
	if (rc) {
		pbj_sid_why_in(arg, rc, ts.s, ts.n, why);
		fprintf(stderr, "ofs-pbj: --server %s: %s%s\n", arg, why,
			rc == -ENOENT ? " among the job's servers" : "");
		rc = EXIT_USAGE;
	}
	free(ts.s);
	return rc;
}

/* report JOB [--kind KIND] [--server SID] [--oid OID]: the findings of a
 * job, filtered. */
static int cmd_report(struct pbj_db *db, int64_t id, int argc, char **argv, bool json)
{
	struct pbj_job *j;
	struct report_ctx r = { .json = json };
	struct ofs_sid server;
	struct ofs_oid oid;
	const char *server_arg = NULL;
	int kind = OFS_FINDING_NONE;
	bool by_oid = false;
	int rc;

	for (int i = 0; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--kind") && v) {
			kind = ofs_finding_parse(v);
			if (kind == OFS_FINDING_NONE)
				return jobs_usage_err("--kind %s: not a finding kind (see ofs-pbj(8), FINDINGS)",
						 v);
		} else if (!strcmp(argv[i], "--server") && v) {
			if (sid_from_hex(v, &server) && pbj_resolve_sid_in(v, NULL, 0, &server) == -EINVAL)
				return jobs_usage_err("--server %s: not a SID (32 hex digits, or a prefix "
						 "of 4 or more)", v);
			server_arg = v;
		} else if (!strcmp(argv[i], "--oid") && v) {
			if (oid_from_hex(v, &oid))
				return jobs_usage_err("--oid %s: not an OID (32 hex digits)", v);
			by_oid = true;
		} else {
			return jobs_usage_err("report: unknown or incomplete option '%s'", argv[i]);
		}
		i++;
	}
	j = malloc(sizeof(*j));
	if (!j)
		return EXIT_FAIL;
	rc = pbj_job_get(db, id, j);
	free(j);
	if (rc == -ENOENT) {
		fprintf(stderr, "ofs-pbj: no job %lld\n", (long long)id);
		return EXIT_USAGE;
	}
	if (!rc && server_arg) {
		rc = report_server(db, id, server_arg, &server);
		if (rc)
			return rc;
	}
	if (json)
		r.arr = json_array();
	if (!rc)
		rc = pbj_finding_list(db, id, server_arg ? &server : NULL, kind,
				      by_oid ? &oid : NULL, report_one, &r);
	if (rc) {
		json_decref(r.arr);
		return jobs_store_err(db, "report", rc);
	}
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "job", json_integer(id));
		json_object_set_new(o, "findings", r.arr);
		jobs_print_json(o);
		json_decref(o);
	} else if (r.n == 0) {
		printf("job %lld: no findings%s\n", (long long)id,
		       server_arg || by_oid || kind != OFS_FINDING_NONE ? " match" : "");
	}
	return 0;
}

struct list_ctx {
	json_t *arr;
	bool json;
};

static int list_one(const struct pbj_job *j, void *arg)
{
	struct list_ctx *l = arg;
	char t[OFS_TIME_LEN];

	time_format(j->submitted_ns, t);
	if (!l->json) {
		json_t *asked = asked_json(j);
		char what[512];
		asked_text(asked, what, sizeof(what));
		json_decref(asked);
		printf("%6lld  %-9s %-9s %4d  %s%s%s\n", (long long)j->id, type_name(j->type),
		       pbj_state_name(j->state), j->priority, t, what[0] ? "  " : "", what);
		return 0;
	}
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "type", json_string(type_name(j->type)));
	json_object_set_new(o, "state", json_string(pbj_state_name(j->state)));
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "submitted", json_string(t));
	json_object_set_new(o, "dry_run", json_boolean(j->flags & PBJ_DRY_RUN));
	json_object_set_new(o, "asked", asked_json(j));
	json_array_append_new(l->arr, o);
	return 0;
}

/* ---- running ----------------------------------------------------------------- */

struct tty_ctx {
	bool tty;
	int64_t t0_ns;
};

static void progress_line(const struct pbj_job *j, const struct pbj_sum *s, void *arg)
{
	struct tty_ctx *t = arg;
	struct timespec ts;
	double secs, rate, pct;

	if (!t->tty)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	secs = ((double)ts.tv_sec * 1e9 + ts.tv_nsec - (double)t->t0_ns) / 1e9;
	rate = secs > 0 ? (double)s->bytes_done / secs : 0;
	pct = s->bytes_total ? 100.0 * (double)s->bytes_done / (double)s->bytes_total :
	      s->objects_total ? 100.0 * (double)s->objects_done / (double)s->objects_total : 0;
	if (pct > 100)
		pct = 100;
	fprintf(stderr, "\r%s job %lld: %5.1f%%  %7.1f MB/s  ", type_name(j->type), (long long)j->id, pct,
		rate / 1e6);
	if (rate > 0 && s->bytes_total > s->bytes_done)
		fprintf(stderr, "ETA %5.0fs  ", (double)(s->bytes_total - s->bytes_done) / rate);
	else
		fprintf(stderr, "           ");
	fprintf(stderr, "%llu finding%s  %s", (unsigned long long)s->findings,
		s->findings == 1 ? "" : "s", pbj_state_name(j->state));
	fflush(stderr);
}

/* A lease holder named "WHAT HOST pid N" on this host whose process is
 * gone. */
bool jobs_holder_dead(const char *who)
{
	char host[64] = "?", theirs[64];
	const char *p = strstr(who, " pid ");
	long pid;

	gethostname(host, sizeof(host) - 1);
	if (!p || sscanf(who, "%*s %63s", theirs) != 1)
		return false;
	/* (the holder's first word may be "submit --wait": host is after it) */
	if (!strncmp(who, "submit --wait ", 14) && sscanf(who + 14, "%63s", theirs) != 1)
		return false;
	if (strcmp(theirs, host) != 0)
		return false;
	pid = strtol(p + 5, NULL, 10);
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void jobs_holder_name(char *buf, size_t n, const char *what)
{
	char host[64] = "?";

	gethostname(host, sizeof(host) - 1);
	snprintf(buf, n, "%s %s pid %ld", what, host, (long)getpid());
}

/* A test hook's number from the environment: 0 when it is not set, or
 * in builds made with OFS_NO_TEST_HOOKS (make RELEASE=1). */
long jobs_test_hook(const char *name)
{
#ifndef OFS_NO_TEST_HOOKS
	const char *e = getenv(name);
	return e ? strtol(e, NULL, 10) : 0;
#else
	(void)name;
	return 0;
#endif
}

/* The attempts a task gets before its job fails: the runner's own (0),
 * or OFS_PBJ_MAX_RETRIES (tests). */
int jobs_test_max_retries(void)
{
	long v = jobs_test_hook("OFS_PBJ_MAX_RETRIES");

	return v > 0 && v < 1000 ? (int)v : 0;
}

/* Wait for job id to end: run it here when no scheduler holds the lease,
 * else follow the store while the scheduler runs it. */
static int wait_job(struct pbj_db *db, int64_t id, const char *const *cluster, size_t ncluster,
		    bool json)
{
	struct tty_ctx tc = { .tty = isatty(2) == 1 };
	struct pbj_runner_opts o = { .cluster = cluster, .ncluster = ncluster,
				     .progress = progress_line, .arg = &tc, .stop = &jobs_stop_flag,
				     .return_on_cap = true, .max_retries = jobs_test_max_retries() };
	struct pbj_job *j = malloc(sizeof(*j));
	char holder[PBJ_REASON_LEN], who[PBJ_REASON_LEN];
	struct timespec ts;
	json_t *st = NULL;
	bool got = false;
	int rc = 0;

	if (!j)
		return EXIT_FAIL;
	clock_gettime(CLOCK_REALTIME, &ts);
	tc.t0_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	signal(SIGINT, jobs_on_signal);
	signal(SIGTERM, jobs_on_signal);
	jobs_holder_name(holder, sizeof(holder), "submit --wait");
	/* Run it here when no scheduler holds the lease; else follow the
	 * store while one runs it, and take over if it dies (its lease runs
	 * out). */
	while (!rc && !jobs_stop_flag) {
		rc = pbj_lease_take(db, holder, 10000, &got, who);
		if (rc)
			break;
		if (got) {
			o.lease_holder = holder;
			if (ncluster == 0) {
				rc = -OFS_EUNREACHABLE;
				fprintf(stderr, "ofs-pbj: no scheduler runs and no cluster is given "
					"(--cluster or OFS_CLUSTER) to run the job here\n");
			} else {
				rc = pbj_run(db, id, &o);
			}
			pbj_lease_drop(db, holder);
			break;
		}
		{
			struct pbj_sum sum;
			rc = pbj_job_get(db, id, j);
			if (rc || pbj_state_final(j->state))
				break;
			if (j->state == PBJ_PAUSED &&
			    !strncmp(j->reason, PBJ_CAP_REASON, strlen(PBJ_CAP_REASON)))
				break;               /* stopped at its repair cap */
			if (pbj_summarize(db, id, &sum) == 0)
				progress_line(j, &sum, &tc);
			struct timespec nap = { .tv_sec = 0, .tv_nsec = 500000000 };
			nanosleep(&nap, NULL);
		}
	}
	if (jobs_stop_flag)
		rc = -EINTR;
	if (tc.tty)
		fputc('\n', stderr);
	if (rc == -EINTR) {
		fprintf(stderr, "ofs-pbj: interrupted; job %lld continues when a scheduler runs "
			"(ofs-pbj serve) or resumes with submit --wait\n", (long long)id);
		free(j);
		return EXIT_FAIL;
	}
	if (!rc)
		rc = pbj_job_get(db, id, j);
	if (!rc)
		rc = status_json(db, j, &st);
	free(j);
	if (rc) {
		if (rc == -OFS_EUNREACHABLE)
			return EXIT_FAIL;
		return jobs_store_err(db, "running the job", rc);
	}
	if (json)
		jobs_print_json(st);
	else if (!print_clean_line(st))
		print_status_text(st);
	rc = job_exit(st);
	json_decref(st);
	return rc;
}

/* submit's help: type t's options and their defaults, or (t NULL) every
 * type's usage. From the tables, as parsing is (pbj/jobopts.h). */
static void submit_help(const struct pbj_jobtype *t)
{
	if (t) {
		pbj_submit_help(t, stdout);
		printf("  %-20s %s\n", "--json", "print the job id (with --wait, its status) as JSON");
		return;
	}
	printf("usage: ofs-pbj submit TYPE [options]; the types:\n");
	pbj_submit_help(NULL, stdout);
	printf("every submit: [--dry-run] [--rate BYTES/s] [--priority N] [--wait] [--json];\n"
	       "submit TYPE --help: its options and their defaults\n");
}

/* A submit's usage error: why, and where help is. */
static int submit_usage_err(const struct pbj_submit *s, const char *why)
{
	fprintf(stderr, "ofs-pbj: %s\n(see ofs-pbj submit %s%s--help)\n", why,
		s->type ? s->type->name : "", s->type ? " " : "");
	return EXIT_USAGE;
}

int jobs_submit_help(const char *type)
{
	struct pbj_submit *s = malloc(sizeof(*s));
	char *argv[] = { (char *)(type ? type : "--help"), "--help" };
	char why[256];
	int rc;

	if (!s)
		return EXIT_FAIL;
	/* (the parser names the type, or says why it is none) */
	rc = pbj_submit_parse(2, argv, s, why, sizeof(why));
	if (rc == PBJ_SUBMIT_HELP) {
		submit_help(s->type);
		rc = 0;
	} else {
		rc = submit_usage_err(s, why);
	}
	free(s);
	return rc;
}

/* submit's words by the options' table (pbj/jobopts.h) into *s: 0,
 * JOBS_HELP_SHOWN (help asked for and shown), or the exit status of a
 * usage error (printed). */
static int submit_words(int argc, char **argv, struct pbj_submit *s)
{
	char why[768];
	int rc = pbj_submit_parse(argc, argv, s, why, sizeof(why));

	if (rc == PBJ_SUBMIT_HELP) {
		submit_help(s->type);
		return JOBS_HELP_SHOWN;
	}
	return rc ? submit_usage_err(s, why) : 0;
}

/* A parsed submit made the job *j: the site's defaults (db may be NULL)
 * and the checks across options. 0 or an exit status (printed). */
static int submit_settle(struct pbj_db *db, struct pbj_submit *s, struct pbj_job *j)
{
	char why[768];
	int rc = pbj_submit_settle(db, s, j, why, sizeof(why));

	if (rc == -EINVAL)
		return submit_usage_err(s, why);
	if (rc) {
		fprintf(stderr, "ofs-pbj: %s\n", why);
		return EXIT_FAIL;
	}
	return 0;
}

int jobs_parse_submit(struct pbj_db *db, int argc, char **argv, struct pbj_submit *s,
		      struct pbj_job *j)
{
	int rc = submit_words(argc, argv, s);

	return rc ? rc : submit_settle(db, s, j);
}

/* submit --job N: job N must exist and have ended. 0 or an exit status. */
static int check_from_job(struct pbj_db *db, int64_t from)
{
	struct pbj_job *src = malloc(sizeof(*src));
	int rc = src ? pbj_job_get(db, from, src) : -ENOMEM;

	if (rc == -ENOENT) {
		fprintf(stderr, "ofs-pbj: --job %lld: no such job\n", (long long)from);
		rc = EXIT_USAGE;
	} else if (rc) {
		rc = jobs_store_err(db, "submit", rc);
	} else if (!pbj_state_final(src->state)) {
		fprintf(stderr, "ofs-pbj: --job %lld: the job is %s; repair what it found "
			"once it has ended\n", (long long)from, pbj_state_name(src->state));
		rc = EXIT_USAGE;
	}
	free(src);
	return rc;
}

/* submit: the type's preparation (pbj/prepare.h), when it has one; the
 * arguments it made whole are encoded again. 0, JOBS_PREP_DONE (a dry
 * run it answered whole: queue nothing), or an exit status. */
int jobs_prepare(struct pbj_db *db, struct pbj_job *j, struct pbj_job_args *a,
		 const char *const *cluster, size_t ncluster, bool json)
{
	const struct pbj_jobtype *t = pbj_jobtype(j->type);
	struct pbj_prep *p;
	int rc;

	if (!t || !t->prepare)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return EXIT_FAIL;
	p->cluster = cluster;
	p->ncluster = ncluster;
	p->dry_run = (j->flags & PBJ_DRY_RUN) != 0;
	p->say = stderr;
	p->preview = p->dry_run && !json ? stdout : stderr;
	rc = t->prepare(p, a);
	if (rc == PBJ_PREP_OK) {
		rc = pbj_job_args_encode(a, j->args);
		rc = rc ? jobs_store_err(db, "submit", rc) : 0;
	} else {
		rc = rc == PBJ_PREP_DONE ? JOBS_PREP_DONE :
		     rc == PBJ_PREP_REFUSED ? EXIT_USAGE : EXIT_FAIL;
	}
	free(p);
	return rc;
}

/* submit: parsed before the job database is opened (a word at fault or
 * --help makes no database); then settled by the site's settings,
 * checked, prepared and queued. */
static int cmd_submit(const char *db_arg, int argc, char **argv, const char *const *cluster,
		      size_t ncluster, bool json)
{
	struct pbj_job *j = calloc(1, sizeof(*j));
	struct pbj_submit *s = malloc(sizeof(*s));
	struct pbj_db *db = NULL;
	int64_t id;
	int rc;

	if (!j || !s) {
		free(j);
		free(s);
		return EXIT_FAIL;
	}
	rc = submit_words(argc, argv, s);
	if (!rc)
		rc = open_db(db_path(db_arg), &db);
	if (!rc)
		rc = submit_settle(db, s, j);
	if (!rc && s->args.from_job)
		rc = check_from_job(db, s->args.from_job);
	if (!rc)
		rc = jobs_prepare(db, j, &s->args, cluster, ncluster, json);
	if (rc == JOBS_PREP_DONE) {      /* (nothing to queue: said) */
		if (json)
			printf("{\"id\": null, \"dry_run\": true}\n");
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	rc = pbj_submit(db, j, &id);
	if (rc) {
		rc = jobs_store_err(db, "submit", rc);
		goto out;
	}
	/* A dry run is waited for: never a job left in the queue. */
	if (s->wait || s->dry_run) {
		rc = wait_job(db, id, cluster, ncluster, json);
	} else {
		if (json)
			printf("{\"id\": %lld}\n", (long long)id);
		else
			printf("%lld\n", (long long)id);
		rc = 0;
	}
out:
	if (rc == JOBS_HELP_SHOWN)
		rc = 0;
	pbj_close(db);
	free(s);
	free(j);
	return rc;
}

int pbj_jobs_main(int argc, char **argv, const char *db_arg, const char *const *cluster,
		  size_t ncluster, bool json)
{
	struct pbj_db *db = NULL;
	const char *cmd = argv[0];
	int64_t id = 0;
	int rc;

	if ((!strcmp(cmd, "status") || !strcmp(cmd, "report") || !strcmp(cmd, "pause") ||
	     !strcmp(cmd, "resume") || !strcmp(cmd, "cancel") || !strcmp(cmd, "wait"))) {
		if (argc != 2 && !(argc > 2 && !strcmp(cmd, "report")))
			return jobs_usage_err("%s takes one job id", cmd);
		if (parse_job_id(argv[1], &id))
			return jobs_usage_err("'%s' is not a job id", argv[1]);
		/* No store, no job: not made here for a question (an `ofs-pbj
		 * status` that made it would race a submit making it too). */
		if (access(db_path(db_arg), F_OK) != 0 && errno == ENOENT) {
			fprintf(stderr, "ofs-pbj: no job %lld\n", (long long)id);
			return EXIT_USAGE;
		}
	}
	if (!strcmp(cmd, "submit"))
		return cmd_submit(db_arg, argc - 1, argv + 1, cluster, ncluster, json);
	rc = open_db(db_path(db_arg), &db);
	if (rc)
		return rc;
	if (!strcmp(cmd, "status")) {
		rc = cmd_status(db, id, json);
	} else if (!strcmp(cmd, "report")) {
		rc = cmd_report(db, id, argc - 2, argv + 2, json);
	} else if (!strcmp(cmd, "list")) {
		struct list_ctx l = { .json = json };
		int state = -1;
		if (argc == 3 && !strcmp(argv[1], "--state")) {
			if (pbj_state_parse(argv[2], &state)) {
				rc = jobs_usage_err("--state %s: queued, running, paused, succeeded, failed "
					       "or cancelled", argv[2]);
				goto out;
			}
		} else if (argc != 1) {
			rc = jobs_usage_err("list takes only --state STATE%s", "");
			goto out;
		}
		if (json)
			l.arr = json_array();
		rc = pbj_job_list(db, state, list_one, &l);
		if (rc) {
			json_decref(l.arr);
			rc = jobs_store_err(db, "list", rc);
			goto out;
		}
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "jobs", l.arr);
			jobs_print_json(o);
			json_decref(o);
		}
	} else if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume") || !strcmp(cmd, "cancel")) {
		int to = !strcmp(cmd, "pause") ? PBJ_PAUSED :
			 !strcmp(cmd, "resume") ? PBJ_RESUMED : PBJ_CANCELLED;
		unsigned from = !strcmp(cmd, "pause") ? (1u << PBJ_RUNNING) | (1u << PBJ_QUEUED) :
				!strcmp(cmd, "resume") ? (1u << PBJ_PAUSED) :
				(1u << PBJ_RUNNING) | (1u << PBJ_QUEUED) | (1u << PBJ_PAUSED);
		rc = pbj_job_set_state(db, id, to, from, !strcmp(cmd, "cancel") ? "cancelled by the operator"
					: !strcmp(cmd, "resume") ? "" : NULL);
		if (rc == -ENOENT) {
			fprintf(stderr, "ofs-pbj: no job %lld\n", (long long)id);
			rc = EXIT_USAGE;
		} else if (rc == -EAGAIN) {
			struct pbj_job j;
			pbj_job_get(db, id, &j);
			fprintf(stderr, "ofs-pbj: job %lld is %s: cannot %s it\n", (long long)id,
				pbj_state_name(j.state), cmd);
			rc = EXIT_USAGE;
		} else if (rc) {
			rc = jobs_store_err(db, cmd, rc);
		}
	} else if (!strcmp(cmd, "schedule")) {
		rc = jobs_cmd_schedule(db, argc - 1, argv + 1, json);
	} else if (!strcmp(cmd, "wait")) {
		struct pbj_job *wj = malloc(sizeof(*wj));
		rc = wj ? pbj_job_get(db, id, wj) : -ENOMEM;
		free(wj);
		if (rc == -ENOENT) {
			fprintf(stderr, "ofs-pbj: no job %lld\n", (long long)id);
			rc = EXIT_USAGE;
		} else if (rc) {
			rc = jobs_store_err(db, "wait", rc);
		} else {
			rc = wait_job(db, id, cluster, ncluster, json);
		}
	} else if (!strcmp(cmd, "config")) {
		rc = jobs_cmd_config(db, argc - 1, argv + 1, json);
	} else if (!strcmp(cmd, "serve")) {
		rc = argc == 1 ? jobs_cmd_serve(db, cluster, ncluster) : jobs_usage_err("serve takes no arguments%s", "");
	} else {
		rc = jobs_usage_err("unknown command '%s'", cmd);
	}
out:
	pbj_close(db);
	return rc;
}

/* ---- health ---------------------------------------------------------------- */

/* The checks in words: "health: error", then a line a check, and with
 * detail its items. */
static void print_health_text(const json_t *doc, bool detail)
{
	const json_t *c;
	size_t i;

	printf("health: %s\n", json_string_value(json_object_get(doc, "status")));
	json_array_foreach(json_object_get(doc, "checks"), i, c) {
		const json_t *it;
		size_t k;
		printf("  %-5s %s: %s\n", json_string_value(json_object_get(c, "severity")),
		       json_string_value(json_object_get(c, "name")),
		       json_string_value(json_object_get(c, "detail")));
		if (!detail)
			continue;
		json_array_foreach(json_object_get(c, "items"), k, it) {
			char *s = json_dumps(it, JSON_COMPACT | JSON_PRESERVE_ORDER);
			printf("        %s\n", s ? s : "?");
			free(s);
		}
	}
}

int pbj_health_main(int argc, char **argv, const char *db_arg, const char *const *cluster,
		    size_t ncluster, bool json)
{
	struct pbj_db *db = NULL;
	const char *path = db_path(db_arg);
	json_t *doc = NULL;
	bool detail = false;
	int status = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--detail") != 0)
			return jobs_usage_err("health takes only --detail (and --json): '%s'", argv[i]);
		detail = true;
	}
	/* (no job database: the checks of the cluster only; none is made) */
	if (access(path, F_OK) == 0 && (rc = open_db(path, &db)) != 0)
		return rc;
	rc = pbj_health(cluster, ncluster, db, &doc, &status);
	pbj_close(db);
	if (rc) {
		fprintf(stderr, "ofs-pbj: health: cannot read the server table from %s: %s\n",
			cluster[0], ofs_strerror(rc));
		return EXIT_FAIL;
	}
	if (json)
		jobs_print_json(doc);
	else
		print_health_text(doc, detail);
	json_decref(doc);
	return status == PBJ_HEALTH_ERROR ? EXIT_FAIL : status == PBJ_HEALTH_WARN ? EXIT_FINDINGS : 0;
}
