/*
 * pbj-sched.c - ofs-pbj's schedules (cron rows that submit jobs), the
 * serve loop (the scheduler: runs queued jobs, fires schedules, records
 * the servers' catch-up) and the site settings (config) (ofs-pbj(8)).
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/pbj-jobs-impl.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "pbj/catchup.h"
#include "pbj/cron.h"
#include "pbj/jobargs.h"
#include "pbj/jobstore.h"
#include "pbj/runner.h"
#include "pbj/serve.h"

/* ---- schedules --------------------------------------------------------------- */

/* Seconds in a cron "minute": 60, or OFS_PBJ_CRON_UNIT_S (tests). */
static int64_t cron_unit_s(void)
{
	long v = jobs_test_hook("OFS_PBJ_CRON_UNIT_S");

	return v > 0 && v <= 60 ? v : 60;
}

struct sched_ctx {
	struct pbj_db *db;
	int64_t now_ns;
	const char *const *cluster;      /* serve's, for the job's preparation */
	size_t ncluster;
};

/* The cluster serve runs with, for the schedules' jobs (serve_fire). */
struct sched_cluster {
	const char *const *cluster;
	size_t ncluster;
};

static int fire_one(const struct pbj_schedule *sc, void *arg)
{
	struct sched_ctx *c = arg;
	struct pbj_sched_args *a = malloc(sizeof(*a));
	struct pbj_job *j = NULL;
	struct pbj_submit *sub = NULL;
	int64_t id = 0;
	int rc;

	/* (arguments that do not decode: the schedule is not run) */
	if (!a || pbj_sched_args_decode(sc->args, a) != 0 ||
	    !pbj_cron_due(sc->cron, sc->last_fired_ns / 1000000000, c->now_ns / 1000000000,
			  cron_unit_s())) {
		free(a);
		return 0;
	}
	j = malloc(sizeof(*j));
	sub = malloc(sizeof(*sub));
	if (!sub) {
		free(j);
		j = NULL;
	}
	if (j && sc->last_job) {
		/* Not again while the last one from this schedule has not ended. */
		if (pbj_job_get(c->db, sc->last_job, j) == 0 && !pbj_state_final(j->state)) {
			pbj_schedule_fired(c->db, sc->name, c->now_ns, sc->last_job);
			fprintf(stderr, "ofs-pbj: schedule %s: job %lld still runs; not submitting again\n",
				sc->name, (long long)sc->last_job);
			free(sub);
			free(j);
			free(a);
			return 0;
		}
	}
	/* (checked and made whole as a submit is: a --path gone since is
	 * said, and this time is skipped) */
	if (j && jobs_parse_submit(c->db, a->argc, (char **)a->argv, sub, j) == 0 &&
	    jobs_prepare(c->db, j, &sub->args, c->cluster, c->ncluster, false) == 0) {
		snprintf(j->schedule, sizeof(j->schedule), "%s", sc->name);
		rc = pbj_submit(c->db, j, &id);
		if (!rc)
			fprintf(stderr, "ofs-pbj: schedule %s: submitted job %lld\n", sc->name, (long long)id);
	}
	pbj_schedule_fired(c->db, sc->name, c->now_ns, id ? id : sc->last_job);
	free(sub);
	free(j);
	free(a);
	return 0;
}

/* Submit the jobs whose schedules are due (serve calls this often). */
static void fire_schedules(struct pbj_db *db, const struct sched_cluster *sc)
{
	struct timespec ts;
	struct sched_ctx c = { .db = db, .cluster = sc->cluster, .ncluster = sc->ncluster };

	clock_gettime(CLOCK_REALTIME, &ts);
	c.now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	pbj_schedule_list(db, fire_one, &c);
}

struct sched_print {
	json_t *arr;
	bool json;
};

static int print_schedule(const struct pbj_schedule *sc, void *arg)
{
	struct sched_print *p = arg;
	struct pbj_sched_args *a = malloc(sizeof(*a));
	char t[OFS_TIME_LEN];

	if (!a)
		return -ENOMEM;
	if (pbj_sched_args_decode(sc->args, a) != 0)
		a->argc = 0;                 /* (shown without its arguments) */
	time_format(sc->last_fired_ns, t);
	if (p->json) {
		json_t *o = json_object(), *arr = json_array();
		for (int i = 0; i < a->argc; i++)
			json_array_append_new(arr, json_string(a->argv[i]));
		json_object_set_new(o, "name", json_string(sc->name));
		json_object_set_new(o, "cron", json_string(sc->cron));
		json_object_set_new(o, "args", arr);
		json_object_set_new(o, "last_checked", json_string(t));
		json_object_set_new(o, "last_job", sc->last_job ? json_integer(sc->last_job) : json_null());
		json_array_append_new(p->arr, o);
		free(a);
		return 0;
	}
	printf("%-16s %-20s", sc->name, sc->cron);
	for (int i = 0; i < a->argc; i++)
		printf(" %s", a->argv[i]);
	if (sc->last_job)
		printf("   (last job %lld)", (long long)sc->last_job);
	printf("\n");
	free(a);
	return 0;
}

static const struct cli_prog sched_prog = { "ofs-pbj", NULL };

int jobs_cmd_schedule(struct pbj_db *db, int argc, char **argv, bool json)
{
	int st;

	/* (add and rm: argv[1] is the schedule's NAME) */
	if (argc >= 2 && (!strcmp(argv[0], "add") || !strcmp(argv[0], "rm")) &&
	    !cli_value_ok(&sched_prog, "schedule NAME", argv[1], 0, &st))
		return st;
	if (argc >= 1 && !strcmp(argv[0], "list")) {
		struct sched_print p = { .json = json };
		int rc;
		if (argc != 1)
			return jobs_usage_err("schedule list takes no arguments%s", "");
		if (json)
			p.arr = json_array();
		rc = pbj_schedule_list(db, print_schedule, &p);
		if (rc) {
			json_decref(p.arr);
			return jobs_store_err(db, "schedule list", rc);
		}
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "schedules", p.arr);
			jobs_print_json(o);
			json_decref(o);
		}
		return 0;
	}
	if (argc >= 1 && !strcmp(argv[0], "rm")) {
		int rc;
		if (argc != 2)
			return jobs_usage_err("schedule rm takes one NAME%s", "");
		rc = pbj_schedule_rm(db, argv[1]);
		if (rc == -ENOENT) {
			fprintf(stderr, "ofs-pbj: no schedule %s\n", argv[1]);
			return EXIT_USAGE;
		}
		return rc ? jobs_store_err(db, "schedule rm", rc) : 0;
	}
	if (argc >= 1 && !strcmp(argv[0], "add")) {
		struct pbj_schedule sc;
		struct pbj_job *j = malloc(sizeof(*j));
		struct pbj_submit *sub = malloc(sizeof(*sub));
		const char *cron = NULL;
		struct tm tm;
		time_t now = time(NULL);
		int sep = -1, rc;

		if (!j || !sub) {
			free(j);
			free(sub);
			return EXIT_FAIL;
		}
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--cron") && i + 1 < argc && !cron) {
				cron = argv[++i];
				if (cli_value_ok(&sched_prog, "--cron", cron, 0, &st))
					continue;
				free(sub);
				free(j);
				return st;
			} else if (!strcmp(argv[i], "--")) {
				sep = i;
				break;
			} else {
				free(sub);
				free(j);
				return jobs_usage_err("schedule add: unexpected '%s' (NAME --cron \"...\" -- "
						 "scrub ...)", argv[i]);
			}
		}
		gmtime_r(&now, &tm);
		if (argc < 2 || !cron || sep < 0 || sep + 1 >= argc) {
			rc = jobs_usage_err("usage: schedule add NAME --cron \"MIN HOUR DOM MON DOW\" -- "
				       "scrub [options]%s", "");
		} else if (strlen(argv[1]) >= PBJ_NAME_LEN || !argv[1][0]) {
			rc = jobs_usage_err("schedule name '%s': 1 to 63 bytes", argv[1]);
		} else if (strlen(cron) >= PBJ_CRON_LEN || pbj_cron_match(cron, &tm) < 0) {
			rc = jobs_usage_err("--cron '%s': five fields MIN HOUR DOM MON DOW, each *, N, "
				       "A-B, */S or a list of those", cron);
		} else if ((rc = jobs_parse_submit(NULL, argc - sep - 1, argv + sep + 1, sub, j)) == 0) {
			if (sub->wait)
				rc = jobs_usage_err("a schedule's job cannot --wait%s", "");
			else if (!sub->type->scheduled)
				rc = jobs_usage_err("a schedule submits scrubs; submit %s as an operator "
						    "does (see ofs-pbj(8), schedule)", sub->type->name);
		}
		if (!rc) {
			struct timespec ts;
			memset(&sc, 0, sizeof(sc));
			snprintf(sc.name, sizeof(sc.name), "%s", argv[1]);
			snprintf(sc.cron, sizeof(sc.cron), "%s", cron);
			rc = pbj_sched_args_encode(argc - sep - 1, (const char *const *)argv + sep + 1,
						   sc.args);
			if (rc) {
				rc = jobs_usage_err("the job's arguments are too long or not UTF-8%s", "");
			} else {
				rc = pbj_schedule_add(db, &sc);
				clock_gettime(CLOCK_REALTIME, &ts);
				if (!rc)        /* due times count from now */
					rc = pbj_schedule_fired(db, sc.name,
								(int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, 0);
				if (rc == -EEXIST) {
					fprintf(stderr, "ofs-pbj: schedule %s exists (rm it first)\n", sc.name);
					rc = EXIT_USAGE;
				} else if (rc) {
					rc = jobs_store_err(db, "schedule add", rc);
				}
			}
		}
		free(sub);
		free(j);
		return rc == JOBS_HELP_SHOWN ? 0 : rc;
	}
	return jobs_usage_err("schedule add|list|rm%s", "");
}

static void serve_fire(struct pbj_db *db, void *arg)
{
	fire_schedules(db, arg);
}

static void serve_job_error(int64_t id, int rc, int retry_ms, void *arg)
{
	(void)arg;
	fprintf(stderr, "ofs-pbj: job %lld: %s; the queue waits %d.%d s\n", (long long)id,
		ofs_strerror(rc), retry_ms / 1000, retry_ms % 1000 / 100);
}

static void serve_job_ended(const struct pbj_job *j, void *arg)
{
	(void)arg;
	if (j->state == PBJ_FAILED)
		fprintf(stderr, "ofs-pbj: job %lld failed: %s\n", (long long)j->id,
			j->reason[0] ? j->reason : "(no reason given)");
}

/* Said each time: the polls back off (a minute at most), so these lines
 * do too. */
static void serve_catchup_refused(int rc, unsigned times, int retry_ms, void *arg)
{
	(void)arg;
	fprintf(stderr, "ofs-pbj: catch-up: the cluster refused this scheduler: %s "
		"(refused %u time%s in a row; next try in %d s)\n", ofs_strerror(rc), times,
		times == 1 ? "" : "s", (retry_ms + 500) / 1000);
}

/* Take the scheduler lease: 0 and *got, or a store error. A holder whose
 * process is gone (SIGKILL, a crash) need not be waited for. */
static int take_lease(struct pbj_db *db, const char *holder, bool *got)
{
	char who[PBJ_REASON_LEN];
	int rc = pbj_lease_take(db, holder, 10000, got, who);

	if (!rc && !*got && jobs_holder_dead(who)) {
		fprintf(stderr, "ofs-pbj: the last scheduler (%s) is gone; taking over\n", who);
		pbj_lease_drop(db, who);
		rc = pbj_lease_take(db, holder, 10000, got, who);
	}
	if (!rc && !*got)
		fprintf(stderr, "ofs-pbj: another scheduler runs (%s); not starting\n", who);
	return rc;
}

int jobs_cmd_serve(struct pbj_db *db, const char *const *cluster, size_t ncluster)
{
	char holder[PBJ_REASON_LEN];
	struct sched_cluster scl = { cluster, ncluster };
	struct pbj_serve_opts o = {
		.run = { .cluster = cluster, .ncluster = ncluster, .stop = &jobs_stop_flag,
			 .max_retries = jobs_test_max_retries() },
		.holder = holder, .between = serve_fire, .job_error = serve_job_error,
		.job_ended = serve_job_ended, .catchup_refused = serve_catchup_refused,
		.arg = &scl,
	};
	bool got = false;
	int rc;

	signal(SIGINT, jobs_on_signal);
	signal(SIGTERM, jobs_on_signal);
	jobs_holder_name(holder, sizeof(holder), "serve");
	rc = take_lease(db, holder, &got);
	if (rc)
		return jobs_store_err(db, "taking the scheduler lease", rc);
	if (!got)
		return EXIT_FAIL;
	fprintf(stderr, "ofs-pbj: scheduler running (%s)\n", holder);
	rc = pbj_serve(db, &o);
	pbj_lease_drop(db, holder);
	if (rc == -EBUSY) {
		fprintf(stderr, "ofs-pbj: another scheduler took over; stopping\n");
		return EXIT_FAIL;
	}
	if (rc && rc != -ENOENT)
		return jobs_store_err(db, "serve", rc);
	return 0;
}

/* ---- site settings ------------------------------------------------------------ */

static const char *const settings_known[] = { "scrub.auto_repair", "repair.max_objects", NULL };

static int setting_valid(const char *name, const char *value)
{
	if (!strcmp(name, "scrub.auto_repair"))
		return !strcmp(value, "true") || !strcmp(value, "false") || !strcmp(value, "on") ||
		       !strcmp(value, "off") || !strcmp(value, "yes") || !strcmp(value, "no") ||
		       !strcmp(value, "1") || !strcmp(value, "0");
	if (!strcmp(name, "repair.max_objects")) {
		char *end;
		long long n = strtoll(value, &end, 10);
		return *value && !*end && n >= 0 && n <= 1000000000;
	}
	return 0;
}

static int print_setting(const char *name, const char *value, void *arg)
{
	json_t *o = arg;

	if (o)
		json_object_set_new(o, name, json_string(value));
	else
		printf("%s = %s\n", name, value);
	return 0;
}

int jobs_cmd_config(struct pbj_db *db, int argc, char **argv, bool json)
{
	char v[PBJ_ARGS_LEN];
	bool known = false;
	int rc;

	if (argc == 1 && !strcmp(argv[0], "list")) {
		json_t *o = json ? json_object() : NULL;
		rc = pbj_setting_list(db, print_setting, o);
		if (rc) {
			json_decref(o);
			return jobs_store_err(db, "config list", rc);
		}
		if (o) {
			json_t *w = json_object();
			json_object_set_new(w, "settings", o);
			jobs_print_json(w);
			json_decref(w);
		}
		return 0;
	}
	if (argc < 2 || (strcmp(argv[0], "get") && strcmp(argv[0], "set") && strcmp(argv[0], "unset")) ||
	    (!strcmp(argv[0], "set") ? argc != 3 : argc != 2))
		return jobs_usage_err("usage: config list | get NAME | set NAME VALUE | unset NAME%s", "");
	for (int i = 0; settings_known[i]; i++)
		known |= !strcmp(argv[1], settings_known[i]);
	if (!known)
		return jobs_usage_err("config: unknown setting '%s' (scrub.auto_repair, repair.max_objects)",
				 argv[1]);
	if (!strcmp(argv[0], "get")) {
		rc = pbj_setting_get(db, argv[1], v, sizeof(v));
		if (rc == -ENOENT) {
			fprintf(stderr, "ofs-pbj: %s is not set (the default applies)\n", argv[1]);
			return EXIT_FINDINGS;
		}
		if (rc)
			return jobs_store_err(db, "config get", rc);
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, argv[1], json_string(v));
			jobs_print_json(o);
			json_decref(o);
		} else {
			printf("%s\n", v);
		}
		return 0;
	}
	if (!strcmp(argv[0], "set") && !setting_valid(argv[1], argv[2]))
		return jobs_usage_err(!strcmp(argv[1], "scrub.auto_repair")
				 ? "config set scrub.auto_repair %s: true or false"
				 : "config set repair.max_objects %s: a count (0: no cap)", argv[2]);
	rc = pbj_setting_set(db, argv[1], !strcmp(argv[0], "set") ? argv[2] : NULL);
	if (rc == -ENOENT)
		return 0;                    /* unset of what was not set */
	return rc ? jobs_store_err(db, "config", rc) : 0;
}
