/*
 * pbj-jobs-impl.h - what ofs-pbj's job commands (pbj-jobs.c) and its
 * schedules, serve loop and settings (pbj-sched.c) share.
 */
#ifndef OFS_PBJ_JOBS_IMPL_H
#define OFS_PBJ_JOBS_IMPL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbj/jobopts.h"
#include "pbj/jobstore.h"
#include "pbj/runner.h"

#define EXIT_FINDINGS 1
#define EXIT_USAGE 2
#define EXIT_FAIL 3

/* Set by SIGINT/SIGTERM (jobs_on_signal): a wait or serve loop ends. */
extern volatile sig_atomic_t jobs_stop_flag;

void jobs_on_signal(int sig);
int jobs_usage_err(const char *fmt, const char *arg);
int jobs_store_err(struct pbj_db *db, const char *what, int rc);
void jobs_print_json(json_t *o);
bool jobs_holder_dead(const char *who);
void jobs_holder_name(char *buf, size_t n, const char *what);
long jobs_test_hook(const char *name);
int jobs_test_max_retries(void);
#define JOBS_HELP_SHOWN (-1)    /* jobs_parse_submit: --help shown; exit 0 */
/* Parse and settle a submit's words (pbj/jobopts.h) into *s and the job
 * *j; site settings (db, may be NULL) give the defaults. 0,
 * JOBS_HELP_SHOWN, or the exit status of a usage error (printed). */
int jobs_parse_submit(struct pbj_db *db, int argc, char **argv, struct pbj_submit *s,
		      struct pbj_job *j);
#define JOBS_PREP_DONE (-2)     /* jobs_prepare: a dry run answered whole */
/* The job type's preparation at submit (pbj/prepare.h) on *j and its
 * arguments a, re-encoded into j when it made them whole. 0,
 * JOBS_PREP_DONE, or an exit status (said on stderr). */
int jobs_prepare(struct pbj_db *db, struct pbj_job *j, struct pbj_job_args *a,
		 const char *const *cluster, size_t ncluster, bool json);
int jobs_cmd_schedule(struct pbj_db *db, int argc, char **argv, bool json);
int jobs_cmd_serve(struct pbj_db *db, const char *const *cluster, size_t ncluster);
int jobs_cmd_config(struct pbj_db *db, int argc, char **argv, bool json);

#endif
