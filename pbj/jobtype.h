/*
 * jobtype.h - what each type of job is, one row per type (pbj/jobtype.c):
 * its name, the task kind it runs on every server, which of submit's
 * options it takes, whether it repairs, how its result maps to an exit
 * status, what it does to its server when it ends, what it checks and
 * shows before it is queued (pbj/prepare.h), and which kinds it may run
 * beside. The submit parser, the runner, `status` and `wait` read
 * the row; a job's arguments are one typed struct (pbj/jobargs.h). A new
 * type costs its row, its task kind's code on the server, and its
 * preparation when it has one. docs/design.md "Jobs".
 */
#ifndef OFS_PBJ_JOBTYPE_H
#define OFS_PBJ_JOBTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The options of submit's a type takes beyond every type's (--wait,
 * --dry-run, --rate, --priority): their words, values, checks and
 * defaults are rows of pbj/jobopts.h, which name these bits. */
enum pbj_opt {
	PBJ_OPT_PATH = 1u << 0,          /* --path P, repeated: under these only */
	PBJ_OPT_SERVERS = 1u << 1,       /* --server SID, repeated: on these only */
	PBJ_OPT_SERVER_ONE = 1u << 2,    /* --server SID: exactly one, a prefix
	                                    of a SID resolved at submit */
	PBJ_OPT_THRESHOLD = 1u << 3,     /* --threshold PCT */
	PBJ_OPT_REPAIR = 1u << 4,        /* --repair, --no-repair */
	PBJ_OPT_METADATA_ONLY = 1u << 5, /* --metadata-only */
	PBJ_OPT_FROM_JOB = 1u << 6,      /* --job N: the findings of job N */
	PBJ_OPT_MAX_REPAIRS = 1u << 7,   /* --max-repairs N */
};

/* Whether a type repairs what it finds. */
enum pbj_repairs {
	PBJ_REPAIRS_NEVER = 0,
	PBJ_REPAIRS_ALWAYS,
	PBJ_REPAIRS_BY_CHOICE,           /* --repair, else the setting
	                                    scrub.auto_repair */
};

/* How a finished job's result maps to `wait`'s exit status (beyond
 * "failed": 3, and a repair cap reached: 1). */
enum pbj_ending {
	PBJ_ENDS_BY_FINDINGS = 0,        /* 1 while findings are not repaired */
	PBJ_ENDS_BY_MOVING,              /* 0: it moved what it had to */
};

struct pbj_prep;
struct pbj_job_args;

struct pbj_jobtype {
	int type;                        /* enum pbj_type (pbj/jobstore.h) */
	const char *name;                /* in the store and on the command line */
	uint8_t kind;                    /* the task kind it runs (enum
	                                    ofs_task_kind; 0: none - recorded,
	                                    not run) */
	bool submitted;                  /* submit takes it */
	bool scheduled;                  /* a schedule may submit it */
	uint32_t opts;                   /* enum pbj_opt */
	uint8_t repairs;                 /* enum pbj_repairs */
	uint8_t ends;                    /* enum pbj_ending */
	bool empties;                    /* once done (not a dry run) its
	                                    server is marked out of service */
	const char *about;               /* what it does, for help: one line */
	int (*prepare)(struct pbj_prep *p, struct pbj_job_args *a);
	                                 /* at submit, before it is queued
	                                    (NULL: nothing): pbj/prepare.h */
	uint32_t beside;                 /* task kinds it may run beside (bit
	                                    1 << kind; 0: every kind) */
};

/* The row of type, or NULL. */
const struct pbj_jobtype *pbj_jobtype(int type);
/* Row i (0, 1, ...: every type in turn), or NULL past the last. */
const struct pbj_jobtype *pbj_jobtype_at(size_t i);
/* The row named name, or NULL. */
const struct pbj_jobtype *pbj_jobtype_named(const char *name);
/* The types submit takes, "scrub, repair, ...", into out (len bytes,
 * cut short if it must be). */
void pbj_jobtype_submitted_names(char *out, size_t len);

#endif
