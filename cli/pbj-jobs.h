/* pbj-jobs.h - the job commands of ofs-pbj (pbj-jobs.c). */
#ifndef OFS_PBJ_JOBS_H
#define OFS_PBJ_JOBS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Run the job command argv[0] (submit, status, report, list, pause,
 * resume, cancel, serve) with its arguments; db_arg is --db (NULL: the
 * OFS_PBJ_DB environment variable, else ./pbj.db). Returns the exit status.
 */
int pbj_jobs_main(int argc, char **argv, const char *db_arg, const char *const *cluster,
		  size_t ncluster, bool json);

/*
 * `ofs-pbj submit [TYPE] --help`: type's options, their defaults and
 * what each does, or (type NULL) every job type's usage, on stdout.
 * Returns 0, or 2 for a type submit does not take (said on stderr).
 */
int jobs_submit_help(const char *type);

/*
 * `ofs-pbj health [--detail]` (argv[0] "health"): the cluster's checks
 * (pbj/health.h), and the job database's when there is one (none is
 * made). Exit 0 healthy, 1 warnings, 3 errors or no table.
 */
int pbj_health_main(int argc, char **argv, const char *db_arg, const char *const *cluster,
		    size_t ncluster, bool json);

#endif
