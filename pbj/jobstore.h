/*
 * jobstore.h - the job store of ofs-pbj: jobs, tasks, findings, schedules
 * and the scheduler lease, in one SQLite database (docs/design.md, "Background jobs and scrub").
 *
 * One file (--db / OFS_PBJ_DB), WAL mode, foreign keys on, a busy timeout
 * so several ofs-pbj processes can use it at once (one submits while the
 * scheduler runs). The schema carries a version (PRAGMA user_version plus
 * an application_id that marks the file as ours); pbj_open creates a new
 * database, migrates an older schema in one transaction, and refuses a
 * file that is not ours or is newer than this code - never resetting it.
 * Opening a store whose schema is current takes no write lock.
 *
 * Every function returns 0 or a negative code: -ENOENT (no such row),
 * -EINVAL (bad argument), -EBUSY (locked beyond the busy timeout),
 * -OFS_ECORRUPT (not an SQLite file, a foreign SQLite file, or SQLite
 * says the file is damaged), -OFS_EVERSION (a schema newer than this
 * code), -EIO (any other SQLite failure). pbj_errmsg says more about the
 * last failure on that handle. A handle is used by one thread at a time.
 */
#ifndef OFS_PBJ_JOBSTORE_H
#define OFS_PBJ_JOBSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"

#define PBJ_SCHEMA_VERSION 2
#define PBJ_REASON_LEN 256
#define PBJ_DETAIL_LEN 512
#define PBJ_NAME_LEN 64
#define PBJ_CRON_LEN 128
#define PBJ_ARGS_LEN 1024

enum pbj_state {
	PBJ_QUEUED = 0,
	PBJ_RUNNING,
	PBJ_PAUSED,
	PBJ_SUCCEEDED,
	PBJ_FAILED,
	PBJ_CANCELLED
};

/* "queued", "running", ... ; NULL for a bad value. */
const char *pbj_state_name(int state);
/* 0 and the state, or -EINVAL. */
int pbj_state_parse(const char *name, int *state);
/* True for succeeded, failed, cancelled. */
bool pbj_state_final(int state);

/* The types of job, spelled in the store and on the command line as
 * pbj_type_name says ("scrub", "repair", "drain", "rebalance", "catch-up":
 * the catch-up is recorded by ofs-pbj serve, never submitted or run). */
enum pbj_type {
	PBJ_TYPE_NONE = 0,
	PBJ_TYPE_SCRUB,
	PBJ_TYPE_REPAIR,
	PBJ_TYPE_DRAIN,
	PBJ_TYPE_REBALANCE,
	PBJ_TYPE_CATCHUP
};

/* "scrub", ... ; NULL for a bad value. */
const char *pbj_type_name(int type);
/* 0 and the type, or -EINVAL. */
int pbj_type_parse(const char *name, int *type);

/* Job flags. */
#define PBJ_DRY_RUN  (1u << 0)
#define PBJ_REPAIR   (1u << 1)

struct pbj_job {
	int64_t id;                     /* set by pbj_submit */
	int type;                       /* enum pbj_type */
	int state;                      /* enum pbj_state */
	int priority;                   /* higher runs first */
	uint32_t flags;                 /* PBJ_* */
	uint64_t rate;                  /* bytes/s per server, 0 = server default */
	char args[PBJ_ARGS_LEN];        /* the rest of the request, JSON text ("" = none) */
	char schedule[PBJ_NAME_LEN];    /* the schedule that submitted it, "" if none */
	int64_t submitted_ns, started_ns, finished_ns;   /* wall clock; 0 = not yet */
	char reason[PBJ_REASON_LEN];    /* why it failed or was cancelled */
};

struct pbj_task {
	int64_t job;
	struct ofs_sid server;
	int state;                      /* enum pbj_state */
	uint64_t objects_done, objects_total;
	uint64_t bytes_done, bytes_total;
	struct ofs_oid cursor;          /* last OID done; zero = from the start */
	int retries;                    /* failed attempts so far */
	char reason[PBJ_REASON_LEN];    /* last failure */
	int64_t updated_ns;
};

struct pbj_finding {
	int64_t id;                     /* set when stored */
	int64_t job;
	struct ofs_sid server;
	struct ofs_oid oid;
	uint8_t kind;                   /* enum ofs_finding_kind (proto.h) */
	char detail[PBJ_DETAIL_LEN];
	bool repaired;                  /* repair_state == OFS_REPAIR_DONE */
	char repair[PBJ_DETAIL_LEN];    /* how (or why not); "" if not attempted */
	uint8_t repair_state;           /* enum ofs_repair_state (proto.h) */
	struct ofs_sid source;          /* the copy repaired from; zero = none */
	struct ofs_oid ref;             /* the other object (proto.h); zero = none */
};

struct pbj_schedule {
	char name[PBJ_NAME_LEN];
	char cron[PBJ_CRON_LEN];        /* "MIN HOUR DOM MON DOW", as given */
	char args[PBJ_ARGS_LEN];        /* the submit arguments, JSON array of strings */
	int64_t last_fired_ns;          /* 0 = never */
	int64_t last_job;               /* job it submitted last, 0 = none */
};

struct pbj_db;

/* Open (creating if absent) the database at path. */
int pbj_open(const char *path, struct pbj_db **out);
void pbj_close(struct pbj_db *db);       /* NULL: no-op */
const char *pbj_errmsg(struct pbj_db *db);

/* ---- jobs ---- */
/* Store a new job in state queued (j->state ignored), submitted now; *id
 * receives its id (ids grow, never reused). */
int pbj_submit(struct pbj_db *db, const struct pbj_job *j, int64_t *id);
int pbj_job_get(struct pbj_db *db, int64_t id, struct pbj_job *j);
/* Jobs in state (-1: any), newest first; fn returns non-zero to stop
 * (that value is returned). */
typedef int (*pbj_job_fn)(const struct pbj_job *j, void *arg);
int pbj_job_list(struct pbj_db *db, int state, pbj_job_fn fn, void *arg);
/* The queued job to run next: highest priority, then oldest; -ENOENT if
 * none. */
int pbj_job_next(struct pbj_db *db, struct pbj_job *j);
/*
 * Move a job to state, atomically checking it is in one of the states of
 * from_mask (bit 1 << state; 0 = any): -EAGAIN when it is not (another
 * process moved it). running sets started (first time), a final state
 * sets finished; reason may be NULL. PBJ_RESUMED is running for a job
 * that has started and queued for one that has not (a job paused while
 * queued goes back to the queue).
 */
#define PBJ_RESUMED 100
int pbj_job_set_state(struct pbj_db *db, int64_t id, int state, unsigned from_mask,
		      const char *reason);

/* ---- tasks (one per server per job) ---- */
/* Insert or replace the task (job, server). */
int pbj_task_put(struct pbj_db *db, const struct pbj_task *t);
typedef int (*pbj_task_fn)(const struct pbj_task *t, void *arg);
int pbj_task_list(struct pbj_db *db, int64_t job, pbj_task_fn fn, void *arg);

/*
 * A batch of progress in one transaction, so that SQLite is never the
 * bottleneck: n tasks (replacing their rows) and nf findings (appended;
 * one the job already holds word for word - same copy, kind, detail and
 * repair state - is not stored twice).
 */
int pbj_progress(struct pbj_db *db, const struct pbj_task *tasks, size_t n,
		 const struct pbj_finding *f, size_t nf);

/* ---- findings ---- */
/* Findings of a job in id order, filtered: server (NULL = any), kind
 * (enum ofs_finding_kind; OFS_FINDING_NONE = any), oid (NULL = any). */
typedef int (*pbj_finding_fn)(const struct pbj_finding *f, void *arg);
int pbj_finding_list(struct pbj_db *db, int64_t job, const struct ofs_sid *server,
		     int kind, const struct ofs_oid *oid, pbj_finding_fn fn, void *arg);
/* Record what became of finding id: its repair state, how (or why not),
 * and the copy repaired from (NULL: none). */
int pbj_finding_repaired(struct pbj_db *db, int64_t id, uint8_t state, const char *how,
			 const struct ofs_sid *source);

/* ---- site settings (`ofs-pbj config`) ---- */
/* The value of name into buf (len bytes); -ENOENT when not set. */
int pbj_setting_get(struct pbj_db *db, const char *name, char *buf, size_t len);
/* Set (value non-NULL) or remove (NULL; -ENOENT when not set) a setting. */
int pbj_setting_set(struct pbj_db *db, const char *name, const char *value);
typedef int (*pbj_setting_fn)(const char *name, const char *value, void *arg);
int pbj_setting_list(struct pbj_db *db, pbj_setting_fn fn, void *arg);

/* ---- schedules ---- */
int pbj_schedule_add(struct pbj_db *db, const struct pbj_schedule *s);   /* -EEXIST */
int pbj_schedule_rm(struct pbj_db *db, const char *name);                /* -ENOENT */
typedef int (*pbj_schedule_fn)(const struct pbj_schedule *s, void *arg);
int pbj_schedule_list(struct pbj_db *db, pbj_schedule_fn fn, void *arg);
int pbj_schedule_fired(struct pbj_db *db, const char *name, int64_t at_ns, int64_t job);

/* ---- the scheduler lease ---- */
/*
 * Exactly one scheduler runs at a time. pbj_lease_take takes the lease
 * for holder (a unique string: host, pid, start time) for ttl_ms if it is
 * free, expired, or already holder's (renewal), atomically; *got says
 * whether it did, and *who (if not NULL, PBJ_REASON_LEN bytes) names the
 * current holder when not. pbj_lease_drop gives it up if held by holder.
 */
int pbj_lease_take(struct pbj_db *db, const char *holder, int64_t ttl_ms, bool *got,
		   char *who);
int pbj_lease_drop(struct pbj_db *db, const char *holder);

#endif
