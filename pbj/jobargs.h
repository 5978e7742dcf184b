/*
 * jobargs.h - the JSON texts the job database keeps beside its columns: a
 * job's arguments (pbj_job.args) and a schedule's submit arguments
 * (pbj_schedule.args). Both are written by ofs-pbj and read back from
 * the database, a file, so reading them is decoding untrusted bytes: it
 * happens here, once, into a struct, and checks every member's type.
 *
 * A job's arguments are one JSON object, its keys sorted, written only
 * when it has any ("" otherwise):
 *   "from_job"       integer > 0   repair --job: the job whose findings
 *   "max_repairs"    integer > 0   --max-repairs
 *   "metadata_only"  1             --metadata-only
 *   "paths"          [string]      --path, each absolute
 *   "servers"        [string]      --server: a SID in hex once submitted
 *                                  (a drain's, as given, before)
 *   "threshold"      1..100        rebalance --threshold
 * A member not listed is skipped (a newer ofs-pbj may write more).
 *
 * A schedule's arguments are a JSON array of strings: the words of the
 * submit it makes ("scrub", "--rate", "10M", ...).
 */
#ifndef OFS_PBJ_JOBARGS_H
#define OFS_PBJ_JOBARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbj/jobstore.h"

#define PBJ_ARGS_MAX 256                  /* strings in one text (a 1 KiB text holds fewer) */

/*
 * A decoded text's strings point into its buf: the struct is filled in
 * place and not copied. To encode, the strings may point anywhere.
 */
struct pbj_job_args {
	int64_t from_job;                 /* 0: none */
	int64_t max_repairs;              /* 0: none */
	int64_t threshold;                /* 0: none (the default) */
	bool metadata_only;
	size_t nservers, npaths;
	const char *servers[PBJ_ARGS_MAX];
	const char *paths[PBJ_ARGS_MAX];
	char buf[PBJ_ARGS_LEN];           /* decode: the strings, each with its NUL */
};

struct pbj_sched_args {
	int argc;
	const char *argv[PBJ_ARGS_MAX];   /* point into buf */
	char buf[PBJ_ARGS_LEN];
};

/*
 * Decode text (a NUL-terminated string) into *a: 0, or -OFS_ECORRUPT
 * when it is not what the comment above says (not JSON, a member of the
 * wrong type or out of range, a string that is empty or holds a NUL, a
 * path not absolute, more than PBJ_ARGS_MAX strings or more string bytes
 * than buf holds). *a is written only on success. -ENOMEM.
 */
int pbj_job_args_decode(const char *text, struct pbj_job_args *a);
/*
 * Encode *a into out (PBJ_ARGS_LEN bytes): "" when nothing is set, else
 * compact JSON with sorted keys. 0, -EINVAL (a member out of range, as
 * above), -OFS_ETOOBIG (it does not fit), -ENOMEM.
 */
int pbj_job_args_encode(const struct pbj_job_args *a, char out[PBJ_ARGS_LEN]);

/* The same for a schedule's arguments (at least one word). */
int pbj_sched_args_decode(const char *text, struct pbj_sched_args *a);
int pbj_sched_args_encode(int argc, const char *const *argv, char out[PBJ_ARGS_LEN]);

#endif
