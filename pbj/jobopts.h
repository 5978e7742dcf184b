/*
 * jobopts.h - submit's options, one row each (pbj/jobopts.c): the word,
 * the types that take it (every type, or those whose row in
 * pbj/jobtype.h names its bit), what value follows it and how that value
 * is checked, how many times it may be given, its default, and a line of
 * help. A submit's words are parsed by the table, and a type's usage and
 * help are written from it, so what help says and what submit takes
 * cannot disagree. A new option costs its row and the member it sets.
 * ofs-pbj(8), the submit commands.
 */
#ifndef OFS_PBJ_JOBOPTS_H
#define OFS_PBJ_JOBOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pbj/jobargs.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"

/* What follows an option word, and how it is checked. */
enum pbj_optval {
	PBJ_VAL_FLAG = 0,      /* nothing */
	PBJ_VAL_BYTES,         /* a size (K, M, G), at least min */
	PBJ_VAL_INT,           /* a decimal integer, min to max */
	PBJ_VAL_PATH,          /* an absolute path in the cluster */
	PBJ_VAL_SID_PREFIX,    /* a SID or a prefix of one (4 to 32 hex
	                          digits), looked up at submit (pbj/prepare.h) */
	PBJ_VAL_JOB,           /* a job id, 1 or more */
};

/* How many times an option may be given. */
enum pbj_optcount {
	PBJ_COUNT_LAST = 0,    /* any; the last counts */
	PBJ_COUNT_ONCE,        /* at most once */
	PBJ_COUNT_MANY,        /* repeated, each adds one (PBJ_ARGS_MAX at most) */
};

/* The member of struct pbj_submit an option sets. */
enum pbj_optsets {
	PBJ_SETS_NONE = 0, PBJ_SETS_WAIT, PBJ_SETS_DRY_RUN, PBJ_SETS_RATE, PBJ_SETS_PRIORITY,
	PBJ_SETS_PATHS, PBJ_SETS_SERVERS, PBJ_SETS_THRESHOLD, PBJ_SETS_REPAIR_ON,
	PBJ_SETS_REPAIR_OFF, PBJ_SETS_METADATA_ONLY, PBJ_SETS_FROM_JOB, PBJ_SETS_MAX_REPAIRS,
};

struct pbj_option {
	const char *word;      /* "--rate" */
	uint32_t opt;          /* the enum pbj_opt bit a type's row names to
	                          take it; 0: every type takes it */
	uint8_t value;         /* enum pbj_optval */
	const char *meta;      /* the value's name in usage ("BYTES"); NULL
	                          for a flag */
	int64_t min, max;      /* a number's range */
	uint8_t count;         /* enum pbj_optcount */
	bool needed;           /* a type that takes it must be given it */
	uint8_t sets;          /* enum pbj_optsets */
	const char *bad;       /* what the value must be, for the error:
	                          "WORD VALUE: BAD" */
	const char *dflt;      /* its default as help says it; NULL: none */
	const char *help;      /* what it does, one line */
};

/* A submit's words, parsed. */
struct pbj_submit {
	const struct pbj_jobtype *type;
	bool wait, dry_run;
	uint64_t rate;           /* bytes/s; 0: the servers' default */
	int priority;
	int repair;              /* --repair 1, --no-repair 0; -1: not given */
	int64_t max_repairs;     /* -1: not given */
	struct pbj_job_args args;
};

/* The rows, in the order usage shows them; *n their number. */
const struct pbj_option *pbj_options(size_t *n);
/* Whether type t takes option o. */
bool pbj_option_taken(const struct pbj_jobtype *t, const struct pbj_option *o);

#define PBJ_SUBMIT_HELP 1        /* pbj_submit_parse: --help or -h was given */

/*
 * Parse "TYPE [OPTION]..." (argc >= 0 words; the strings must outlive
 * *s, which points at them) by the table into *s (about 5 KiB: the
 * caller allocates it). 0; PBJ_SUBMIT_HELP when a --help or -h was
 * given (s->type is set when TYPE was known, else NULL); -EINVAL with
 * why (len bytes) saying which word is at fault and what it must be.
 * Checks across options are pbj_submit_settle's.
 */
int pbj_submit_parse(int argc, char *const *argv, struct pbj_submit *s, char *why, size_t len);

/*
 * Make a parsed submit a job: the defaults a site setting gives (db may
 * be NULL: the built-in ones), the checks across options (a needed one
 * missing, a repair cap without repairing, --job with --path), and *j
 * filled (type, flags, rate, priority, the arguments' text). 0; -EINVAL
 * with why; -OFS_ETOOBIG or another -errno from encoding, with why.
 */
int pbj_submit_settle(struct pbj_db *db, struct pbj_submit *s, struct pbj_job *j, char *why,
		      size_t len);

/*
 * Type t's options, as usage shows them, into out (len bytes, cut short
 * if it must be): its own first, then every type's ("--server SID
 * [--dry-run] [--rate BYTES] [--priority N] [--wait]").
 */
void pbj_submit_usage(const struct pbj_jobtype *t, char *out, size_t len);

/*
 * `submit TYPE --help`: the usage line and one line per option (what it
 * does, its default) to f. With t NULL: every submitted type's usage.
 */
void pbj_submit_help(const struct pbj_jobtype *t, FILE *f);

#endif
