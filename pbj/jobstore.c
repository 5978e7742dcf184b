/* jobstore.c - the job store of ofs-pbj in SQLite (see jobstore.h). */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"

#define PBJ_APP_ID 0x4F46534A        /* "OFSJ": marks the file as ours */
#define BUSY_MS 5000

struct pbj_db {
	sqlite3 *db;
	char err[256];
};

static const char *const state_names[] = {
	"queued", "running", "paused", "succeeded", "failed", "cancelled"
};

const char *pbj_state_name(int state)
{
	return state >= PBJ_QUEUED && state <= PBJ_CANCELLED ? state_names[state] : NULL;
}

int pbj_state_parse(const char *name, int *state)
{
	for (int i = PBJ_QUEUED; i <= PBJ_CANCELLED; i++)
		if (!strcmp(name, state_names[i])) {
			*state = i;
			return 0;
		}
	return -EINVAL;
}

const char *pbj_type_name(int type)
{
	const struct pbj_jobtype *t = pbj_jobtype(type);

	return t ? t->name : NULL;
}

int pbj_type_parse(const char *name, int *type)
{
	const struct pbj_jobtype *t = pbj_jobtype_named(name);

	if (!t)
		return -EINVAL;
	*type = t->type;
	return 0;
}

bool pbj_state_final(int state)
{
	return state == PBJ_SUCCEEDED || state == PBJ_FAILED || state == PBJ_CANCELLED;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An SQLite result as one of our codes; the message is kept. */
static int fail(struct pbj_db *d, int src)
{
	int base = src & 0xff;

	snprintf(d->err, sizeof(d->err), "%s", d->db ? sqlite3_errmsg(d->db) : sqlite3_errstr(src));
	if (base == SQLITE_CORRUPT || base == SQLITE_NOTADB)
		return -OFS_ECORRUPT;
	if (base == SQLITE_BUSY || base == SQLITE_LOCKED)
		return -EBUSY;
	if (base == SQLITE_CONSTRAINT)
		return -EEXIST;
	return -EIO;
}

const char *pbj_errmsg(struct pbj_db *d)
{
	return d ? d->err : "";
}

static int exec(struct pbj_db *d, const char *sql)
{
	int rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(d, rc);
}

static int prepare(struct pbj_db *d, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(d->db, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : fail(d, rc);
}

/* Step a statement that returns no rows, and finalize it. */
static int run(struct pbj_db *d, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	rc = rc == SQLITE_DONE ? 0 : fail(d, rc);
	sqlite3_finalize(st);
	return rc;
}

static int pragma_int(struct pbj_db *d, const char *sql, int64_t *v)
{
	sqlite3_stmt *st;
	int rc = prepare(d, sql, &st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = fail(d, rc);
	}
	sqlite3_finalize(st);
	return rc;
}

/* ---- schema ------------------------------------------------------------- */

/* Migration steps: step[i] takes the schema from version i to i + 1. */
static const char *const steps[PBJ_SCHEMA_VERSION] = {
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  type TEXT NOT NULL, state INTEGER NOT NULL, priority INTEGER NOT NULL,"
	"  flags INTEGER NOT NULL, rate INTEGER NOT NULL, args TEXT NOT NULL,"
	"  schedule TEXT NOT NULL, submitted INTEGER NOT NULL, started INTEGER NOT NULL,"
	"  finished INTEGER NOT NULL, reason TEXT NOT NULL);"
	"CREATE INDEX jobs_queue ON jobs(state, priority DESC, id);"
	"CREATE TABLE tasks ("
	"  job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  server BLOB NOT NULL, state INTEGER NOT NULL,"
	"  objects_done INTEGER NOT NULL, objects_total INTEGER NOT NULL,"
	"  bytes_done INTEGER NOT NULL, bytes_total INTEGER NOT NULL,"
	"  cursor BLOB NOT NULL, retries INTEGER NOT NULL, reason TEXT NOT NULL,"
	"  updated INTEGER NOT NULL, PRIMARY KEY (job, server));"
	"CREATE TABLE findings ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  server BLOB NOT NULL, oid BLOB NOT NULL, kind TEXT NOT NULL,"
	"  detail TEXT NOT NULL, repaired INTEGER NOT NULL, repair TEXT NOT NULL);"
	"CREATE INDEX findings_job ON findings(job, id);"
	"CREATE INDEX findings_server ON findings(job, server);"
	"CREATE INDEX findings_kind ON findings(job, kind);"
	"CREATE INDEX findings_oid ON findings(oid);"
	"CREATE TABLE schedules ("
	"  name TEXT PRIMARY KEY, cron TEXT NOT NULL, args TEXT NOT NULL,"
	"  last_fired INTEGER NOT NULL, last_job INTEGER NOT NULL);"
	"CREATE TABLE lease ("
	"  id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL,"
	"  expires INTEGER NOT NULL);",
	/* 2: repair outcomes per finding; site settings */
	"ALTER TABLE findings ADD COLUMN repair_state INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE findings ADD COLUMN source BLOB;"
	"ALTER TABLE findings ADD COLUMN ref BLOB;"
	"UPDATE findings SET repair_state = 1 WHERE repaired != 0;"
	"CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);",
};

/* The store is ours and its schema this code's: nothing to write. Read
 * outside any write transaction, so that opening a current store takes
 * no lock another process could be holding (a submit that creates the
 * store while an `ofs-pbj status` opens it, say, would otherwise wait
 * out the other's transaction, a slow sync and all). */
static bool current(struct pbj_db *d)
{
	int64_t app = 0, ver = 0;

	return pragma_int(d, "PRAGMA application_id", &app) == 0 &&
	       pragma_int(d, "PRAGMA user_version", &ver) == 0 && app == PBJ_APP_ID &&
	       ver == PBJ_SCHEMA_VERSION;
}

static int migrate(struct pbj_db *d)
{
	int64_t app = 0, ver = 0, tables = 0;
	char sql[64];
	int rc;

	if (current(d))
		return 0;
	rc = exec(d, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	if ((rc = pragma_int(d, "PRAGMA application_id", &app)) ||
	    (rc = pragma_int(d, "PRAGMA user_version", &ver)) ||
	    (rc = pragma_int(d, "SELECT count(*) FROM sqlite_master", &tables)))
		goto out;
	if (app != PBJ_APP_ID && (app != 0 || tables != 0 || ver != 0)) {
		snprintf(d->err, sizeof(d->err), "an SQLite database of another application");
		rc = -OFS_ECORRUPT;
		goto out;
	}
	if (ver > PBJ_SCHEMA_VERSION) {
		snprintf(d->err, sizeof(d->err), "schema version %lld, this ofs-pbj knows %d",
			 (long long)ver, PBJ_SCHEMA_VERSION);
		rc = -OFS_EVERSION;
		goto out;
	}
	for (int64_t v = ver; v < PBJ_SCHEMA_VERSION && !rc; v++)
		rc = exec(d, steps[v]);
	if (!rc && ver < PBJ_SCHEMA_VERSION) {
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", PBJ_APP_ID);
		rc = exec(d, sql);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", PBJ_SCHEMA_VERSION);
		if (!rc)
			rc = exec(d, sql);
	}
out:
	if (rc)
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	else
		rc = exec(d, "COMMIT");
	return rc;
}

int pbj_open(const char *path, struct pbj_db **out)
{
	struct pbj_db *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return -ENOMEM;
	rc = sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(d, rc);
		pbj_close(d);
		return rc;
	}
	sqlite3_busy_timeout(d->db, BUSY_MS);
	/* The header check: reading the schema fails on a file that is not
	 * SQLite at all (before WAL mode could write anything to it). */
	rc = exec(d, "SELECT count(*) FROM sqlite_master");
	if (!rc)
		rc = migrate(d);
	if (!rc)
		rc = exec(d, "PRAGMA journal_mode = WAL");
	if (!rc)
		rc = exec(d, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL");
	if (rc) {
		pbj_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

void pbj_close(struct pbj_db *d)
{
	if (!d)
		return;
	sqlite3_close(d->db);
	free(d);
}

/* ---- rows ---------------------------------------------------------------- */

static void col_text(sqlite3_stmt *st, int i, char *out, size_t n)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, n, "%s", t ? (const char *)t : "");
}

static int col_id(sqlite3_stmt *st, int i, uint8_t out[OFS_OID_LEN])
{
	const void *b = sqlite3_column_blob(st, i);

	if (sqlite3_column_bytes(st, i) != OFS_OID_LEN || !b)
		return -OFS_ECORRUPT;
	memcpy(out, b, OFS_OID_LEN);
	return 0;
}

#define JOB_COLS "id, type, state, priority, flags, rate, args, schedule, submitted, " \
		 "started, finished, reason"

static void read_job(sqlite3_stmt *st, struct pbj_job *j)
{
	char type[32];

	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	col_text(st, 1, type, sizeof(type));
	if (pbj_type_parse(type, &j->type))
		j->type = PBJ_TYPE_NONE;         /* (not one this build knows) */
	j->state = sqlite3_column_int(st, 2);
	j->priority = sqlite3_column_int(st, 3);
	j->flags = (uint32_t)sqlite3_column_int64(st, 4);
	j->rate = (uint64_t)sqlite3_column_int64(st, 5);
	col_text(st, 6, j->args, sizeof(j->args));
	col_text(st, 7, j->schedule, sizeof(j->schedule));
	j->submitted_ns = sqlite3_column_int64(st, 8);
	j->started_ns = sqlite3_column_int64(st, 9);
	j->finished_ns = sqlite3_column_int64(st, 10);
	col_text(st, 11, j->reason, sizeof(j->reason));
}

int pbj_submit(struct pbj_db *d, const struct pbj_job *j, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	if (!pbj_type_name(j->type))
		return -EINVAL;
	rc = prepare(d, "INSERT INTO jobs (type, state, priority, flags, rate, args, schedule, "
		     "submitted, started, finished, reason) VALUES (?,?,?,?,?,?,?,?,0,0,'')", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, pbj_type_name(j->type), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, PBJ_QUEUED);
	sqlite3_bind_int(st, 3, j->priority);
	sqlite3_bind_int64(st, 4, j->flags);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)j->rate);
	sqlite3_bind_text(st, 6, j->args, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, j->schedule, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 8, now_ns());
	rc = run(d, st);
	if (!rc)
		*id = sqlite3_last_insert_rowid(d->db);
	return rc;
}

/* Run a SELECT of jobs, calling fn per row (one row: fn may be NULL and
 * the row goes to *one). */
static int select_jobs(struct pbj_db *d, sqlite3_stmt *st, pbj_job_fn fn, void *arg,
		       struct pbj_job *one)
{
	struct pbj_job *j = one ? one : malloc(sizeof(*j));
	int rc, found = 0;

	if (!j) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_job(st, j);
		found++;
		if (one)
			break;
		rc = fn(j, arg);
		if (rc)
			break;
	}
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = 0;
	else if (rc > 0)
		rc = fail(d, rc);
	sqlite3_finalize(st);
	if (!one)
		free(j);
	if (!rc && one && !found)
		rc = -ENOENT;
	return rc;
}

int pbj_job_get(struct pbj_db *d, int64_t id, struct pbj_job *j)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "SELECT " JOB_COLS " FROM jobs WHERE id = ?", &st);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	return select_jobs(d, st, NULL, NULL, j);
}

int pbj_job_list(struct pbj_db *d, int state, pbj_job_fn fn, void *arg)
{
	sqlite3_stmt *st;
	int rc = prepare(d, state < 0 ? "SELECT " JOB_COLS " FROM jobs ORDER BY id DESC" :
			 "SELECT " JOB_COLS " FROM jobs WHERE state = ? ORDER BY id DESC", &st);

	if (rc)
		return rc;
	if (state >= 0)
		sqlite3_bind_int(st, 1, state);
	return select_jobs(d, st, fn, arg, NULL);
}

int pbj_job_next(struct pbj_db *d, struct pbj_job *j)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "SELECT " JOB_COLS " FROM jobs WHERE state = ? "
			 "ORDER BY priority DESC, id LIMIT 1", &st);

	if (rc)
		return rc;
	sqlite3_bind_int(st, 1, PBJ_QUEUED);
	return select_jobs(d, st, NULL, NULL, j);
}

/* (the UPDATE below spells the states by number) */
_Static_assert(PBJ_QUEUED == 0 && PBJ_RUNNING == 1 && PBJ_SUCCEEDED == 3 && PBJ_CANCELLED == 5,
	       "the states' numbers");

int pbj_job_set_state(struct pbj_db *d, int64_t id, int state, unsigned from_mask,
		      const char *reason)
{
	sqlite3_stmt *st;
	int64_t cur = 0;
	int rc;

	if (!pbj_state_name(state) && state != PBJ_RESUMED)
		return -EINVAL;
	rc = exec(d, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	rc = prepare(d, "SELECT state FROM jobs WHERE id = ?", &st);
	if (!rc) {
		int s;
		sqlite3_bind_int64(st, 1, id);
		s = sqlite3_step(st);
		if (s == SQLITE_ROW)
			cur = sqlite3_column_int64(st, 0);
		else
			rc = s == SQLITE_DONE ? -ENOENT : fail(d, s);
		sqlite3_finalize(st);
	}
	if (!rc && from_mask && !(from_mask & (1u << cur)))
		rc = -EAGAIN;
	if (!rc)
		rc = prepare(d, "UPDATE jobs SET"
			     " state = CASE WHEN ?1 = 100 THEN (CASE WHEN started = 0 THEN 0 ELSE 1 END)"
			     " ELSE ?1 END,"
			     " started = CASE WHEN ?1 = 1 AND started = 0 THEN ?2 ELSE started END,"
			     " finished = CASE WHEN ?1 BETWEEN 3 AND 5 THEN ?2 ELSE finished END,"
			     " reason = CASE WHEN ?3 IS NULL THEN reason ELSE ?3 END"
			     " WHERE id = ?4", &st);
	if (!rc) {
		sqlite3_bind_int(st, 1, state);
		sqlite3_bind_int64(st, 2, now_ns());
		if (reason)
			sqlite3_bind_text(st, 3, reason, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 3);
		sqlite3_bind_int64(st, 4, id);
		rc = run(d, st);
	}
	if (rc)
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	else
		rc = exec(d, "COMMIT");
	return rc;
}

/* ---- tasks --------------------------------------------------------------- */

static int put_task(struct pbj_db *d, const struct pbj_task *t)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "INSERT OR REPLACE INTO tasks (job, server, state, objects_done,"
			 " objects_total, bytes_done, bytes_total, cursor, retries, reason, updated)"
			 " VALUES (?,?,?,?,?,?,?,?,?,?,?)", &st);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, t->job);
	sqlite3_bind_blob(st, 2, t->server.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, t->state);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)t->objects_done);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)t->objects_total);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)t->bytes_done);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)t->bytes_total);
	sqlite3_bind_blob(st, 8, t->cursor.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 9, t->retries);
	sqlite3_bind_text(st, 10, t->reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 11, t->updated_ns ? t->updated_ns : now_ns());
	return run(d, st);
}

int pbj_task_put(struct pbj_db *d, const struct pbj_task *t)
{
	return put_task(d, t);
}

int pbj_task_list(struct pbj_db *d, int64_t job, pbj_task_fn fn, void *arg)
{
	sqlite3_stmt *st;
	struct pbj_task t;
	int rc = prepare(d, "SELECT job, server, state, objects_done, objects_total, bytes_done,"
			 " bytes_total, cursor, retries, reason, updated FROM tasks WHERE job = ?"
			 " ORDER BY server", &st);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, job);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&t, 0, sizeof(t));
		t.job = sqlite3_column_int64(st, 0);
		if (col_id(st, 1, t.server.b) || col_id(st, 7, t.cursor.b)) {
			rc = -OFS_ECORRUPT;
			break;
		}
		t.state = sqlite3_column_int(st, 2);
		t.objects_done = (uint64_t)sqlite3_column_int64(st, 3);
		t.objects_total = (uint64_t)sqlite3_column_int64(st, 4);
		t.bytes_done = (uint64_t)sqlite3_column_int64(st, 5);
		t.bytes_total = (uint64_t)sqlite3_column_int64(st, 6);
		t.retries = sqlite3_column_int(st, 8);
		col_text(st, 9, t.reason, sizeof(t.reason));
		t.updated_ns = sqlite3_column_int64(st, 10);
		rc = fn(&t, arg);
		if (rc)
			break;
	}
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = 0;
	else if (rc > 0)
		rc = fail(d, rc);
	sqlite3_finalize(st);
	return rc;
}

static int add_finding(struct pbj_db *d, const struct pbj_finding *f)
{
	sqlite3_stmt *st;
	/* The same finding about the same copy, said again, is stored once:
	 * two copies may both say it when one could not hear the other (a
	 * lead that did not answer in time compares, and so does a sibling),
	 * and a finding can come twice when a scheduler restarts polling a
	 * task whose ack it had not yet sent. */
	int rc = prepare(d, "INSERT INTO findings (job, server, oid, kind, detail, repaired, repair,"
			 " repair_state, source, ref) SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9,?10"
			 " WHERE NOT EXISTS (SELECT 1 FROM findings WHERE oid = ?3 AND job = ?1"
			 " AND server = ?2 AND kind = ?4 AND detail = ?5 AND repair_state = ?8)", &st);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, f->job);
	sqlite3_bind_blob(st, 2, f->server.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, 3, f->oid.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, ofs_finding_name(f->kind) ? ofs_finding_name(f->kind) : "unknown", -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(st, 5, f->detail, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 6, f->repair_state == OFS_REPAIR_DONE);
	sqlite3_bind_text(st, 7, f->repair, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 8, f->repair_state);
	if (!sid_is_zero(f->source))
		sqlite3_bind_blob(st, 9, f->source.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	if (!oid_is_zero(f->ref))
		sqlite3_bind_blob(st, 10, f->ref.b, OFS_OID_LEN, SQLITE_TRANSIENT);
	return run(d, st);
}

int pbj_progress(struct pbj_db *d, const struct pbj_task *tasks, size_t n,
		 const struct pbj_finding *f, size_t nf)
{
	int rc = exec(d, "BEGIN IMMEDIATE");

	if (rc)
		return rc;
	for (size_t i = 0; i < n && !rc; i++)
		rc = put_task(d, &tasks[i]);
	for (size_t i = 0; i < nf && !rc; i++)
		rc = add_finding(d, &f[i]);
	if (rc)
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	else
		rc = exec(d, "COMMIT");
	return rc;
}

/* ---- findings ------------------------------------------------------------- */

int pbj_finding_list(struct pbj_db *d, int64_t job, const struct ofs_sid *server,
		     int kind, const struct ofs_oid *oid, pbj_finding_fn fn, void *arg)
{
	sqlite3_stmt *st;
	struct pbj_finding *f = malloc(sizeof(*f));
	char kind_text[32];
	int rc;

	if (!f)
		return -ENOMEM;
	rc = prepare(d, "SELECT id, job, server, oid, kind, detail, repaired, repair,"
		     " repair_state, source, ref FROM findings"
		     " WHERE job = ?1 AND (?2 IS NULL OR server = ?2) AND (?3 IS NULL OR kind = ?3)"
		     " AND (?4 IS NULL OR oid = ?4) ORDER BY id", &st);
	if (rc) {
		free(f);
		return rc;
	}
	sqlite3_bind_int64(st, 1, job);
	if (server)
		sqlite3_bind_blob(st, 2, server->b, OFS_OID_LEN, SQLITE_TRANSIENT);
	if (ofs_finding_name(kind))
		sqlite3_bind_text(st, 3, ofs_finding_name(kind), -1, SQLITE_STATIC);
	if (oid)
		sqlite3_bind_blob(st, 4, oid->b, OFS_OID_LEN, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(st, 0);
		f->job = sqlite3_column_int64(st, 1);
		if (col_id(st, 2, f->server.b) || col_id(st, 3, f->oid.b)) {
			rc = -OFS_ECORRUPT;
			break;
		}
		col_text(st, 4, kind_text, sizeof(kind_text));
		f->kind = (uint8_t)ofs_finding_parse(kind_text);   /* (NONE: not one we know) */
		col_text(st, 5, f->detail, sizeof(f->detail));
		f->repaired = sqlite3_column_int(st, 6) != 0;
		col_text(st, 7, f->repair, sizeof(f->repair));
		{
			int rs = sqlite3_column_int(st, 8);
			f->repair_state = rs >= 0 && rs <= OFS_REPAIR_MAX ? (uint8_t)rs : OFS_REPAIR_NONE;
		}
		if ((sqlite3_column_type(st, 9) != SQLITE_NULL && col_id(st, 9, f->source.b)) ||
		    (sqlite3_column_type(st, 10) != SQLITE_NULL && col_id(st, 10, f->ref.b))) {
			rc = -OFS_ECORRUPT;
			break;
		}
		rc = fn(f, arg);
		if (rc)
			break;
	}
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = 0;
	else if (rc > 0)
		rc = fail(d, rc);
	sqlite3_finalize(st);
	free(f);
	return rc;
}

int pbj_finding_repaired(struct pbj_db *d, int64_t id, uint8_t state, const char *how,
			 const struct ofs_sid *source)
{
	sqlite3_stmt *st;
	int rc;

	if (state > OFS_REPAIR_MAX)
		return -EINVAL;
	rc = prepare(d, "UPDATE findings SET repaired = ?, repair = ?, repair_state = ?, source = ?"
		     " WHERE id = ?", &st);
	if (rc)
		return rc;
	sqlite3_bind_int(st, 1, state == OFS_REPAIR_DONE);
	sqlite3_bind_text(st, 2, how ? how : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, state);
	if (source && !sid_is_zero(*source))
		sqlite3_bind_blob(st, 4, source->b, OFS_OID_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, id);
	rc = run(d, st);
	if (!rc && sqlite3_changes(d->db) == 0)
		rc = -ENOENT;
	return rc;
}

/* ---- settings ---------------------------------------------------------------- */

int pbj_setting_get(struct pbj_db *d, const char *name, char *buf, size_t len)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "SELECT value FROM settings WHERE name = ?", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		col_text(st, 0, buf, len);
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = -ENOENT;
	} else {
		rc = fail(d, rc);
	}
	sqlite3_finalize(st);
	return rc;
}

int pbj_setting_set(struct pbj_db *d, const char *name, const char *value)
{
	sqlite3_stmt *st;
	int rc = prepare(d, value ? "INSERT OR REPLACE INTO settings (name, value) VALUES (?1, ?2)"
				  : "DELETE FROM settings WHERE name = ?1", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (value)
		sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	rc = run(d, st);
	if (!rc && !value && sqlite3_changes(d->db) == 0)
		rc = -ENOENT;
	return rc;
}

int pbj_setting_list(struct pbj_db *d, pbj_setting_fn fn, void *arg)
{
	sqlite3_stmt *st;
	char name[PBJ_NAME_LEN], value[PBJ_ARGS_LEN];
	int rc = prepare(d, "SELECT name, value FROM settings ORDER BY name", &st);

	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		col_text(st, 0, name, sizeof(name));
		col_text(st, 1, value, sizeof(value));
		rc = fn(name, value, arg);
		if (rc)
			break;
	}
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = 0;
	else if (rc > 0)
		rc = fail(d, rc);
	sqlite3_finalize(st);
	return rc;
}

/* ---- schedules ------------------------------------------------------------ */

int pbj_schedule_add(struct pbj_db *d, const struct pbj_schedule *s)
{
	sqlite3_stmt *st;
	int rc;

	if (!s->name[0] || !s->cron[0])
		return -EINVAL;
	rc = prepare(d, "INSERT INTO schedules (name, cron, args, last_fired, last_job)"
		     " VALUES (?,?,?,0,0)", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, s->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, s->cron, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s->args, -1, SQLITE_TRANSIENT);
	return run(d, st);
}

int pbj_schedule_rm(struct pbj_db *d, const char *name)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "DELETE FROM schedules WHERE name = ?", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = run(d, st);
	if (!rc && sqlite3_changes(d->db) == 0)
		rc = -ENOENT;
	return rc;
}

int pbj_schedule_list(struct pbj_db *d, pbj_schedule_fn fn, void *arg)
{
	sqlite3_stmt *st;
	struct pbj_schedule *s = malloc(sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = prepare(d, "SELECT name, cron, args, last_fired, last_job FROM schedules"
		     " ORDER BY name", &st);
	if (rc) {
		free(s);
		return rc;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(s, 0, sizeof(*s));
		col_text(st, 0, s->name, sizeof(s->name));
		col_text(st, 1, s->cron, sizeof(s->cron));
		col_text(st, 2, s->args, sizeof(s->args));
		s->last_fired_ns = sqlite3_column_int64(st, 3);
		s->last_job = sqlite3_column_int64(st, 4);
		rc = fn(s, arg);
		if (rc)
			break;
	}
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = 0;
	else if (rc > 0)
		rc = fail(d, rc);
	sqlite3_finalize(st);
	free(s);
	return rc;
}

int pbj_schedule_fired(struct pbj_db *d, const char *name, int64_t at_ns, int64_t job)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "UPDATE schedules SET last_fired = ?, last_job = ? WHERE name = ?", &st);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, at_ns);
	sqlite3_bind_int64(st, 2, job);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
	rc = run(d, st);
	if (!rc && sqlite3_changes(d->db) == 0)
		rc = -ENOENT;
	return rc;
}

/* ---- the scheduler lease ---------------------------------------------------- */

int pbj_lease_take(struct pbj_db *d, const char *holder, int64_t ttl_ms, bool *got, char *who)
{
	sqlite3_stmt *st;
	int64_t now = now_ns();
	int rc = exec(d, "BEGIN IMMEDIATE");

	if (rc)
		return rc;
	*got = false;
	rc = prepare(d, "SELECT holder, expires FROM lease WHERE id = 1", &st);
	if (!rc) {
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW) {
			char h[PBJ_REASON_LEN];
			col_text(st, 0, h, sizeof(h));
			if (!strcmp(h, holder) || sqlite3_column_int64(st, 1) < now)
				*got = true;
			else if (who)
				snprintf(who, PBJ_REASON_LEN, "%s", h);
		} else if (s == SQLITE_DONE) {
			*got = true;
		} else {
			rc = fail(d, s);
		}
		sqlite3_finalize(st);
	}
	if (!rc && *got) {
		rc = prepare(d, "INSERT OR REPLACE INTO lease (id, holder, expires) VALUES (1, ?, ?)", &st);
		if (!rc) {
			sqlite3_bind_text(st, 1, holder, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 2, now + ttl_ms * 1000000);
			rc = run(d, st);
		}
	}
	if (rc)
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	else
		rc = exec(d, "COMMIT");
	if (rc)
		*got = false;
	return rc;
}

int pbj_lease_drop(struct pbj_db *d, const char *holder)
{
	sqlite3_stmt *st;
	int rc = prepare(d, "DELETE FROM lease WHERE id = 1 AND holder = ?", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, holder, -1, SQLITE_TRANSIENT);
	return run(d, st);
}
