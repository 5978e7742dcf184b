/*
 * test_jobstore.c - the ofs-pbj job store (pbj/jobstore.c) on real SQLite
 * files: persistence, queue order, state moves, tasks, progress batches,
 * findings filters, schedules, the lease, and refusing foreign files.
 */
#include <errno.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "pbj/jobstore.h"
#include "tests/unit/tmpstore.h"

static int setup(void **state)
{
	struct tmpdb *fx = calloc(1, sizeof(*fx));

	if (!fx || tmpdb_make("jobstore", fx)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	tmpdb_remove(*state);
	free(*state);
	return 0;
}

static int64_t submit(struct pbj_db *db, int priority)
{
	struct pbj_job j;
	int64_t id = 0;

	memset(&j, 0, sizeof(j));
	j.type = PBJ_TYPE_SCRUB;
	j.priority = priority;
	j.rate = 1 << 20;
	assert_int_equal(pbj_submit(db, &j, &id), 0);
	return id;
}

static void test_submit_grows_ids_and_survives_reopen(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_job j;
	int64_t a = submit(fx->db, 0), b = submit(fx->db, 0);

	assert_true(b > a);
	pbj_close(fx->db);
	assert_int_equal(pbj_open(fx->path, &fx->db), 0);
	assert_int_equal(pbj_job_get(fx->db, b, &j), 0);
	assert_int_equal(j.type, PBJ_TYPE_SCRUB);
	assert_int_equal(j.state, PBJ_QUEUED);
	assert_int_equal(j.rate, 1 << 20);
	assert_true(j.submitted_ns > 0);
	assert_int_equal(j.started_ns, 0);
	assert_int_equal(pbj_job_get(fx->db, b + 100, &j), -ENOENT);
}

static void test_next_job_by_priority_then_age(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_job j;
	int64_t low = submit(fx->db, 0), high1 = submit(fx->db, 5), high2 = submit(fx->db, 5);

	(void)high2;
	assert_int_equal(pbj_job_next(fx->db, &j), 0);
	assert_int_equal(j.id, high1);
	assert_int_equal(pbj_job_set_state(fx->db, high1, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL), 0);
	assert_int_equal(pbj_job_next(fx->db, &j), 0);
	assert_int_equal(j.id, high2);
	assert_int_equal(pbj_job_set_state(fx->db, high2, PBJ_CANCELLED, 0, "test"), 0);
	assert_int_equal(pbj_job_next(fx->db, &j), 0);
	assert_int_equal(j.id, low);
	assert_int_equal(pbj_job_set_state(fx->db, low, PBJ_RUNNING, 0, NULL), 0);
	assert_int_equal(pbj_job_next(fx->db, &j), -ENOENT);
}

static void test_set_state_checks_from_and_stamps_times(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_job j;
	int64_t id = submit(fx->db, 0);

	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_PAUSED, 1u << PBJ_RUNNING, NULL), -EAGAIN);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL), 0);
	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	assert_true(j.started_ns > 0);
	assert_int_equal(j.finished_ns, 0);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_FAILED, 1u << PBJ_RUNNING, "server gone"), 0);
	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	assert_int_equal(j.state, PBJ_FAILED);
	assert_true(j.finished_ns >= j.started_ns);
	assert_string_equal(j.reason, "server gone");
	assert_int_equal(pbj_job_set_state(fx->db, id + 50, PBJ_RUNNING, 0, NULL), -ENOENT);
	assert_int_equal(pbj_job_set_state(fx->db, id, 42, 0, NULL), -EINVAL);
}

/* A job resumed goes back to what is true: the queue when it had not
 * started, running when it had; neither stamps it finished. */
static void test_resumed_is_queued_until_started(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_job j;
	int64_t id = submit(fx->db, 0);
	unsigned paused = 1u << PBJ_PAUSED;

	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_PAUSED, 1u << PBJ_QUEUED, NULL), 0);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_RESUMED, paused, ""), 0);
	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	assert_int_equal(j.state, PBJ_QUEUED);
	assert_int_equal(j.started_ns, 0);
	assert_int_equal(j.finished_ns, 0);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_RESUMED, paused, ""), -EAGAIN);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_RUNNING, 1u << PBJ_QUEUED, NULL), 0);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_PAUSED, 1u << PBJ_RUNNING, NULL), 0);
	assert_int_equal(pbj_job_set_state(fx->db, id, PBJ_RESUMED, paused, ""), 0);
	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	assert_int_equal(j.state, PBJ_RUNNING);
	assert_int_equal(j.finished_ns, 0);
}

struct seen {
	int n;
	int kinds[8];
	struct pbj_task t[4];
	uint8_t rs[8];
	bool repaired[8];
	struct ofs_sid src[8];
};

static int see_finding(const struct pbj_finding *f, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->kinds[s->n] = f->kind;
	s->n++;
	return 0;
}

static int see_repair(const struct pbj_finding *f, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->rs[s->n] = f->repair_state;
		s->repaired[s->n] = f->repaired;
		s->src[s->n] = f->source;
	}
	s->n++;
	return 0;
}

static int count_setting(const char *name, const char *value, void *arg)
{
	(void)name;
	(void)value;
	(*(int *)arg)++;
	return 0;
}

static int see_task(const struct pbj_task *t, void *arg)
{
	struct seen *s = arg;

	if (s->n < 4)
		s->t[s->n] = *t;
	s->n++;
	return 0;
}

/* A finding the job already holds word for word (same copy, kind and
 * detail) is stored once; one that differs in anything is stored. */
static void test_progress_stores_a_finding_said_twice_once(void **state)
{
	struct tmpdb *fx = *state;
	int64_t id = submit(fx->db, 0);
	struct pbj_finding f[4];
	struct seen s = { 0 };

	memset(f, 0, sizeof(f));
	for (int i = 0; i < 4; i++) {
		f[i].job = id;
		memset(f[i].server.b, 0x10, OFS_OID_LEN);
		memset(f[i].oid.b, 0x30, OFS_OID_LEN);
		f[i].kind = OFS_FINDING_STALE_REPLICA;
		strcpy(f[i].detail, "version 1 here, 2 on X");
	}
	strcpy(f[2].detail, "version 1 here, 3 on X");     /* differs: its own */
	memset(f[3].server.b, 0x11, OFS_OID_LEN);          /* another copy */
	assert_int_equal(pbj_progress(fx->db, NULL, 0, f, 2), 0);   /* said twice at once */
	assert_int_equal(pbj_progress(fx->db, NULL, 0, f, 4), 0);   /* and again, later */
	assert_int_equal(pbj_finding_list(fx->db, id, NULL, OFS_FINDING_NONE, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 3);
	/* another job's identical finding is that job's */
	f[0].job = submit(fx->db, 0);
	assert_int_equal(pbj_progress(fx->db, NULL, 0, f, 1), 0);
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, f[0].job, NULL, OFS_FINDING_NONE, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 1);
}

static void test_progress_batch_stores_tasks_and_findings_filterable(void **state)
{
	struct tmpdb *fx = *state;
	int64_t id = submit(fx->db, 0);
	struct pbj_task t[2];
	struct pbj_finding f[3];
	struct seen s = { 0 };

	memset(t, 0, sizeof(t));
	memset(f, 0, sizeof(f));
	for (int i = 0; i < 2; i++) {
		t[i].job = id;
		memset(t[i].server.b, 0x10 + i, OFS_OID_LEN);
		t[i].state = PBJ_RUNNING;
		t[i].objects_done = 10u * (unsigned)(i + 1);
		memset(t[i].cursor.b, 0x20 + i, OFS_OID_LEN);
	}
	for (int i = 0; i < 3; i++) {
		f[i].job = id;
		f[i].server = t[i % 2].server;
		memset(f[i].oid.b, 0x30 + i, OFS_OID_LEN);
		f[i].kind = i == 2 ? OFS_FINDING_SIZE_MISMATCH : OFS_FINDING_CHECKSUM_MISMATCH;
		strcpy(f[i].detail, "detail");
	}
	assert_int_equal(pbj_progress(fx->db, t, 2, f, 3), 0);
	assert_int_equal(pbj_task_list(fx->db, id, see_task, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[1].objects_done, 20);
	assert_memory_equal(s.t[1].cursor.b, t[1].cursor.b, OFS_OID_LEN);
	/* The task row is replaced, not added. */
	t[0].objects_done = 99;
	assert_int_equal(pbj_task_put(fx->db, &t[0]), 0);
	s.n = 0;
	assert_int_equal(pbj_task_list(fx->db, id, see_task, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[0].objects_done, 99);
	/* Findings by job, server, kind, oid. */
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, id, NULL, OFS_FINDING_NONE, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 3);
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, id, &t[0].server, OFS_FINDING_NONE, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 2);
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, id, NULL, OFS_FINDING_SIZE_MISMATCH, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 1);
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, id, NULL, OFS_FINDING_NONE, &f[1].oid, see_finding, &s), 0);
	assert_int_equal(s.n, 1);
	s.n = 0;
	assert_int_equal(pbj_finding_list(fx->db, id + 1, NULL, OFS_FINDING_NONE, NULL, see_finding, &s), 0);
	assert_int_equal(s.n, 0);
	{
		struct ofs_sid src;
		memset(&src, 0x5a, sizeof(src));
		assert_int_equal(pbj_finding_repaired(fx->db, 1, OFS_REPAIR_DONE, "from copy X", &src), 0);
		assert_int_equal(pbj_finding_repaired(fx->db, 999, OFS_REPAIR_DONE, "x", NULL), -ENOENT);
		assert_int_equal(pbj_finding_repaired(fx->db, 2, OFS_REPAIR_MAX + 1, "x", NULL), -EINVAL);
		assert_int_equal(pbj_finding_repaired(fx->db, 2, OFS_REPAIR_LEFT, "no good copy", NULL), 0);
		s.n = 0;
		assert_int_equal(pbj_finding_list(fx->db, id, NULL, OFS_FINDING_NONE, NULL, see_repair, &s), 0);
		assert_int_equal(s.n, 3);
		assert_int_equal(s.rs[0], OFS_REPAIR_DONE);
		assert_true(s.repaired[0]);
		assert_memory_equal(s.src[0].b, src.b, sizeof(src.b));
		assert_int_equal(s.rs[1], OFS_REPAIR_LEFT);
		assert_false(s.repaired[1]);
		assert_true(sid_is_zero(s.src[1]));
		assert_int_equal(s.rs[2], OFS_REPAIR_NONE);
	}
}

static void test_settings_set_get_list_unset(void **state)
{
	struct tmpdb *fx = *state;
	char v[64];
	int n = 0;

	assert_int_equal(pbj_setting_get(fx->db, "scrub.auto_repair", v, sizeof(v)), -ENOENT);
	assert_int_equal(pbj_setting_set(fx->db, "scrub.auto_repair", "true"), 0);
	assert_int_equal(pbj_setting_set(fx->db, "repair.max_objects", "7"), 0);
	assert_int_equal(pbj_setting_set(fx->db, "repair.max_objects", "9"), 0);
	assert_int_equal(pbj_setting_get(fx->db, "repair.max_objects", v, sizeof(v)), 0);
	assert_string_equal(v, "9");
	assert_int_equal(pbj_setting_list(fx->db, count_setting, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pbj_setting_set(fx->db, "scrub.auto_repair", NULL), 0);
	assert_int_equal(pbj_setting_set(fx->db, "scrub.auto_repair", NULL), -ENOENT);
	assert_int_equal(pbj_setting_get(fx->db, "scrub.auto_repair", v, sizeof(v)), -ENOENT);
}

/* A version 1 file (before repair outcomes and settings) is migrated on
 * open: its findings keep what they said, repaired ones become DONE. */
static void test_version_1_file_is_migrated(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_db *db = NULL;
	struct seen s = { 0 };
	char path[600], v[16];
	sqlite3 *raw;

	snprintf(path, sizeof(path), "%s/v1.db", fx->dir);
	assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw,
		"CREATE TABLE findings (id INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL,"
		" server BLOB NOT NULL, oid BLOB NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL,"
		" repaired INTEGER NOT NULL, repair TEXT NOT NULL);"
		"INSERT INTO findings VALUES (1, 4, zeroblob(16), zeroblob(16), 'orphan', 'd', 1, 'how');"
		"INSERT INTO findings VALUES (2, 4, zeroblob(16), zeroblob(16), 'orphan', 'd', 0, '');"
		"PRAGMA application_id = 1330008906; PRAGMA user_version = 1;",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(pbj_open(path, &db), 0);
	assert_int_equal(pbj_finding_list(db, 4, NULL, OFS_FINDING_NONE, NULL, see_repair, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.rs[0], OFS_REPAIR_DONE);
	assert_int_equal(s.rs[1], OFS_REPAIR_NONE);
	assert_int_equal(pbj_setting_set(db, "repair.max_objects", "3"), 0);
	assert_int_equal(pbj_setting_get(db, "repair.max_objects", v, sizeof(v)), 0);
	pbj_close(db);
}

static int count_sched(const struct pbj_schedule *sc, void *arg)
{
	(void)sc;
	(*(int *)arg)++;
	return 0;
}

static void test_schedules_add_list_fire_remove(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_schedule sc;
	int n = 0;

	memset(&sc, 0, sizeof(sc));
	strcpy(sc.name, "nightly");
	strcpy(sc.cron, "30 2 * * *");
	strcpy(sc.args, "[\"scrub\"]");
	assert_int_equal(pbj_schedule_add(fx->db, &sc), 0);
	assert_int_equal(pbj_schedule_add(fx->db, &sc), -EEXIST);
	assert_int_equal(pbj_schedule_list(fx->db, count_sched, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pbj_schedule_fired(fx->db, "nightly", 5, 7), 0);
	assert_int_equal(pbj_schedule_fired(fx->db, "weekly", 5, 7), -ENOENT);
	assert_int_equal(pbj_schedule_rm(fx->db, "nightly"), 0);
	assert_int_equal(pbj_schedule_rm(fx->db, "nightly"), -ENOENT);
}

static void test_lease_one_holder_renewal_expiry_drop(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_db *other;
	char who[PBJ_REASON_LEN] = "";
	bool got = false;

	assert_int_equal(pbj_open(fx->path, &other), 0);
	assert_int_equal(pbj_lease_take(fx->db, "A", 60000, &got, who), 0);
	assert_true(got);
	assert_int_equal(pbj_lease_take(other, "B", 60000, &got, who), 0);
	assert_false(got);
	assert_string_equal(who, "A");
	assert_int_equal(pbj_lease_take(fx->db, "A", 1, &got, NULL), 0);   /* renewal, 1 ms */
	assert_true(got);
	usleep(20000);
	assert_int_equal(pbj_lease_take(other, "B", 60000, &got, who), 0);  /* expired */
	assert_true(got);
	assert_int_equal(pbj_lease_drop(fx->db, "A"), 0);                  /* not A's: no-op */
	assert_int_equal(pbj_lease_take(fx->db, "A", 60000, &got, who), 0);
	assert_false(got);
	assert_int_equal(pbj_lease_drop(other, "B"), 0);
	assert_int_equal(pbj_lease_take(fx->db, "A", 60000, &got, who), 0);
	assert_true(got);
	pbj_close(other);
}

static void test_two_handles_see_each_others_jobs(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_db *other;
	struct pbj_job j;
	int64_t id;

	assert_int_equal(pbj_open(fx->path, &other), 0);
	id = submit(other, 3);
	assert_int_equal(pbj_job_get(fx->db, id, &j), 0);
	assert_int_equal(j.priority, 3);
	pbj_close(other);
}

/* Another process in a write transaction (a submit creating the store,
 * a scheduler storing progress) does not hold up opening a current store:
 * the open only reads. (It used to take the write lock on every open, and
 * waited out the other's transaction - failing after the busy timeout.) */
static void test_opening_a_current_store_waits_for_no_writer(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_db *other = NULL;
	sqlite3 *w;
	struct pbj_job j;
	int64_t id = submit(fx->db, 1);

	assert_int_equal(sqlite3_open(fx->path, &w), SQLITE_OK);
	assert_int_equal(sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(pbj_open(fx->path, &other), 0);
	assert_int_equal(pbj_job_get(other, id, &j), 0);
	assert_int_equal(sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(w);
	pbj_close(other);
}

/* Bytes of a file, for checking it was not touched. */
static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void test_foreign_damaged_and_newer_files_are_refused_untouched(void **state)
{
	struct tmpdb *fx = *state;
	char path[128], before[8192], after[8192];
	struct pbj_db *db = NULL;
	sqlite3 *raw;
	size_t n;
	FILE *f;

	/* Random bytes. */
	snprintf(path, sizeof(path), "%s/random.db", fx->dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	for (int i = 0; i < 4096; i++)
		fputc((i * 7919 + 13) & 0xff, f);
	fclose(f);
	n = slurp(path, before, sizeof(before));
	assert_int_equal(pbj_open(path, &db), -OFS_ECORRUPT);
	assert_int_equal(slurp(path, after, sizeof(after)), n);
	assert_memory_equal(before, after, n);

	/* Another application's SQLite file. */
	snprintf(path, sizeof(path), "%s/other.db", fx->dir);
	assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "CREATE TABLE mine (x); INSERT INTO mine VALUES (1)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	n = slurp(path, before, sizeof(before));
	assert_int_equal(pbj_open(path, &db), -OFS_ECORRUPT);
	assert_int_equal(slurp(path, after, sizeof(after)), n);
	assert_memory_equal(before, after, n);

	/* Ours, from a newer ofs-pbj. */
	pbj_close(fx->db);
	fx->db = NULL;
	assert_int_equal(sqlite3_open(fx->path, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(pbj_open(fx->path, &db), -OFS_EVERSION);
	assert_int_equal(sqlite3_open(fx->path, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 2", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(pbj_open(fx->path, &fx->db), 0);
}

static void test_state_names_round_trip(void **state)
{
	int s;

	(void)state;
	for (int i = PBJ_QUEUED; i <= PBJ_CANCELLED; i++) {
		assert_int_equal(pbj_state_parse(pbj_state_name(i), &s), 0);
		assert_int_equal(s, i);
	}
	assert_null(pbj_state_name(17));
	assert_int_equal(pbj_state_parse("sleeping", &s), -EINVAL);
	assert_true(pbj_state_final(PBJ_CANCELLED));
	assert_false(pbj_state_final(PBJ_PAUSED));
}

/* The type names are the store's and ofs-pbj(8)'s spellings, one table. */
static void test_type_names_round_trip(void **state)
{
	static const char *const spelled[] = { "scrub", "repair", "drain", "rebalance",
						"catch-up" };
	int t;

	(void)state;
	for (int i = PBJ_TYPE_SCRUB; i <= PBJ_TYPE_CATCHUP; i++) {
		assert_string_equal(pbj_type_name(i), spelled[i - PBJ_TYPE_SCRUB]);
		assert_int_equal(pbj_type_parse(pbj_type_name(i), &t), 0);
		assert_int_equal(t, i);
	}
	assert_null(pbj_type_name(PBJ_TYPE_NONE));
	assert_null(pbj_type_name(PBJ_TYPE_CATCHUP + 1));
	assert_int_equal(pbj_type_parse("fsck", &t), -EINVAL);
	assert_int_equal(pbj_type_parse("", &t), -EINVAL);
}

static void test_a_job_of_no_known_type_is_refused(void **state)
{
	struct tmpdb *fx = *state;
	struct pbj_job j;
	int64_t id = 0;

	memset(&j, 0, sizeof(j));
	assert_int_equal(pbj_submit(fx->db, &j, &id), -EINVAL);
	j.type = 99;
	assert_int_equal(pbj_submit(fx->db, &j, &id), -EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_submit_grows_ids_and_survives_reopen),
		T(test_next_job_by_priority_then_age),
		T(test_set_state_checks_from_and_stamps_times),
		T(test_resumed_is_queued_until_started),
		T(test_progress_batch_stores_tasks_and_findings_filterable),
		T(test_progress_stores_a_finding_said_twice_once),
		T(test_schedules_add_list_fire_remove),
		T(test_lease_one_holder_renewal_expiry_drop),
		T(test_two_handles_see_each_others_jobs),
		T(test_opening_a_current_store_waits_for_no_writer),
		T(test_foreign_damaged_and_newer_files_are_refused_untouched),
		T(test_settings_set_get_list_unset),
		T(test_version_1_file_is_migrated),
		cmocka_unit_test(test_state_names_round_trip),
		cmocka_unit_test(test_type_names_round_trip),
		T(test_a_job_of_no_known_type_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
