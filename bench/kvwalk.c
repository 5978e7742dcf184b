/*
 * kvwalk.c - the baseline of the namespace-check benchmark: a plain LMDB
 * cursor walk over a server's records.
 *
 *   kvwalk [--all] DATADIR
 *
 * Opens DATADIR/kv read-only (also while its server runs: LMDB readers
 * do not block the writer), walks the "objects" sub-database with one
 * cursor from the first record to the last, touching every key and value
 * byte (a sum, so the walk cannot be optimised away). With --all it then
 * walks "chunks" and "keyval" the same way: every record a check without
 * data reads (an object's record, its chunk digests, its key-value part
 * and directory entries). It prints
 *
 *   objects=2000000 records=4000000 walk_s=0.812 records_per_s=4926108.4 objects_per_s=2463054.2
 *
 * This is the one place outside store/kv.c that sees LMDB: the baseline
 * is LMDB itself, with nothing of OFS on top. Exit 0, 2 on bad usage, 3
 * when LMDB fails (its message printed).
 */
#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Walk one sub-database: its record count and byte sum added. */
static int walk(MDB_txn *txn, const char *name, uint64_t *n, uint64_t *sum)
{
	MDB_cursor *cur = NULL;
	MDB_dbi dbi;
	MDB_val k, v;
	int rc = mdb_dbi_open(txn, name, 0, &dbi);

	if (!rc)
		rc = mdb_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const unsigned char *kb = k.mv_data, *vb = v.mv_data;
		for (size_t i = 0; i < k.mv_size; i++)
			*sum += kb[i];
		for (size_t i = 0; i < v.mv_size; i++)
			*sum += vb[i];
		(*n)++;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int main(int argc, char **argv)
{
	static const char *more[] = { "chunks", "keyval" };
	char path[4096];
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	uint64_t nobj = 0, n = 0, sum = 0;
	bool all = argc == 3 && strcmp(argv[1], "--all") == 0;
	const char *dir = argv[argc - 1];
	double t0, t1;
	int rc;

	if (argc != 2 && !all) {
		fprintf(stderr, "usage: kvwalk [--all] DATADIR\n");
		return 2;
	}
	if (snprintf(path, sizeof(path), "%s/kv", dir) >= (int)sizeof(path)) {
		fprintf(stderr, "kvwalk: %s: path too long\n", dir);
		return 2;
	}
	rc = mdb_env_create(&env);
	if (!rc)
		rc = mdb_env_set_maxdbs(env, 16);
	if (!rc)
		rc = mdb_env_open(env, path, MDB_RDONLY, 0);
	if (!rc)
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc) {
		fprintf(stderr, "kvwalk: %s: %s\n", path, mdb_strerror(rc));
		mdb_env_close(env);
		return 3;
	}
	t0 = now();
	rc = walk(txn, "objects", &nobj, &sum);
	n = nobj;
	for (size_t i = 0; !rc && all && i < sizeof(more) / sizeof(more[0]); i++)
		rc = walk(txn, more[i], &n, &sum);
	t1 = now();
	mdb_txn_abort(txn);
	mdb_env_close(env);
	if (rc) {
		fprintf(stderr, "kvwalk: %s: %s\n", path, mdb_strerror(rc));
		return 3;
	}
	printf("objects=%llu records=%llu walk_s=%.3f records_per_s=%.1f objects_per_s=%.1f sum=%llu\n",
	       (unsigned long long)nobj, (unsigned long long)n, t1 - t0,
	       t1 > t0 ? (double)n / (t1 - t0) : 0.0, t1 > t0 ? (double)nobj / (t1 - t0) : 0.0,
	       (unsigned long long)sum);
	return 0;
}
