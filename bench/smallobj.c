/*
 * smallobj.c - small-object rate benchmark for bench/run.
 *
 *   smallobj [--size BYTES] [--replicas N] ADDR THREADS COUNT
 *   smallobj [--size BYTES] --baseline-fsync DIR COUNT [THREADS]
 *
 * DESIGN. The first form measures how many small files (1 KiB, or --size
 * BYTES, at most 64 KiB) a cluster stores and returns per second. THREADS
 * threads each open their own struct ofs_client (a client serves one
 * thread at a time), wait at a barrier, and put COUNT/THREADS files of
 * distinct paths into a directory of their own (made before the clock
 * starts, so only puts are timed); after a second barrier they get every
 * file back and check its bytes. One line of key=value pairs reports the
 * rates:
 *
 *   threads=16 count=2000 put_s=0.812 put_per_s=2463.1 get_s=0.201 get_per_s=9950.2
 *
 * With one thread every put waits for its own commit; with many, a server
 * that commits in groups answers several puts per disk sync, so the ratio
 * of the two rates shows group commit at work. --replicas N stores every
 * file (metafile and dfile) with N copies, write confidence N. A phase
 * lasts from the first thread's start to the last thread's end, each
 * thread reading the clock itself.
 *
 * The second form is the disk's baseline for the same work: THREADS
 * threads (default 1), each with a directory of its own under DIR (made
 * before the clock starts), write BYTES (1 KiB) to COUNT/THREADS new files
 * each, every file followed by fdatasync (for a new file that writes its
 * inode and, on ext4, commits the journal that holds its directory entry:
 * a durable create); after a barrier they read every file back (open,
 * read, close; from the page cache, as the gets of the first form mostly
 * are) and check its bytes. It prints
 *
 *   threads=16 count=2000 fsync_s=0.700 fsync_per_s=2857.1 read_s=0.020 read_per_s=100000.0
 *
 * The files are removed afterwards (not timed). Exit status 0 on success,
 * 2 on bad usage, 3 when an operation failed (the failure is printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3
#define OBJ_SIZE 1024          /* default object size, and the fsync baseline's */
#define OBJ_MAX 65536
static size_t obj_size = OBJ_SIZE;   /* --size */
#define MAX_THREADS 256
#define MAX_COUNT 10000000L

static const char usage_text[] =
	"usage: smallobj [--size BYTES] [--replicas N] ADDR THREADS COUNT\n"
	"       smallobj [--size BYTES] --baseline-fsync DIR COUNT [THREADS]\n";

struct worker {
	pthread_t tid;               /* the thread */
	int index;                   /* 0..threads-1, names its directory */
	long count;                  /* files this thread puts and gets */
	const char *addr;            /* cluster address */
	const char *base;            /* run's top directory (in OFS, or the
	                              * local DIR of the baseline) */
	pthread_barrier_t *barrier;  /* shared start line of each phase */
	const struct ofs_put_opts *opts;   /* copies of each file */
	double t[4];                 /* its clock at the start and end of
	                              * each phase (writes, then reads) */
	int rc;                      /* first error, 0 if none */
	char what[200];              /* the operation that failed */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The obj_size bytes of file i of thread t: distinct per file, so a get
 * that returned the wrong file is noticed. (Only obj_size bytes: at
 * thousands of files a second, filling 64 KiB each would take a good
 * part of a core from the servers being measured.) */
static void fill(unsigned char *buf, int t, long i)
{
	uint64_t x = ((uint64_t)(unsigned)t << 40) ^ (uint64_t)i ^ 0x9e3779b97f4a7c15ull;

	for (size_t k = 0; k < obj_size; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[k] = (unsigned char)x;
	}
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Every thread must reach each barrier, even one that failed, or the
 * others would wait forever; a failed thread just skips the work. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct ofs_client *c = NULL;
	const char *addrs[1] = { w->addr };
	unsigned char want[OBJ_MAX];
	char path[128];
	void *got;
	size_t len;
	int rc;

	rc = ofs_client_open(addrs, 1, &c);
	if (rc) {
		snprintf(w->what, sizeof(w->what), "connect %s", w->addr);
	} else {
		snprintf(path, sizeof(path), "%s/t%d", w->base, w->index);
		rc = ofs_mkdir(c, path);
		if (rc)
			snprintf(w->what, sizeof(w->what), "mkdir %s", path);
	}
	pthread_barrier_wait(w->barrier);
	w->t[0] = now();
	for (long i = 0; !rc && i < w->count; i++) {
		snprintf(path, sizeof(path), "%s/t%d/f%ld", w->base, w->index, i);
		fill(want, w->index, i);
		rc = ofs_put_buf(c, want, obj_size, path, w->opts);
		if (rc)
			snprintf(w->what, sizeof(w->what), "put %s", path);
	}
	w->t[1] = now();
	pthread_barrier_wait(w->barrier);   /* puts done */
	pthread_barrier_wait(w->barrier);   /* gets start */
	w->t[2] = now();
	for (long i = 0; !rc && i < w->count; i++) {
		snprintf(path, sizeof(path), "%s/t%d/f%ld", w->base, w->index, i);
		rc = ofs_get_buf(c, path, &got, &len);
		if (rc) {
			snprintf(w->what, sizeof(w->what), "get %s", path);
			break;
		}
		fill(want, w->index, i);
		if (len != obj_size || memcmp(got, want, len)) {
			snprintf(w->what, sizeof(w->what), "get %s: %zu bytes, not the ones put",
				 path, len);
			rc = -EIO;
		}
		free(got);
	}
	w->t[3] = now();
	pthread_barrier_wait(w->barrier);   /* gets done */
	ofs_client_close(c);
	w->rc = rc;
	return NULL;
}

/* The phases' times from the threads' own clocks: each phase runs from
 * the first thread's start to the last one's end. (Not the main thread's
 * clock at the barriers: on two cores it may wake well after the others
 * have started, or even finished, a short phase.) */
static void phases(const struct worker *ws, long threads, double *t0, double *t1,
		   double *t2, double *t3)
{
	*t0 = ws[0].t[0];
	*t1 = ws[0].t[1];
	*t2 = ws[0].t[2];
	*t3 = ws[0].t[3];
	for (long t = 1; t < threads; t++) {
		*t0 = ws[t].t[0] < *t0 ? ws[t].t[0] : *t0;
		*t1 = ws[t].t[1] > *t1 ? ws[t].t[1] : *t1;
		*t2 = ws[t].t[2] < *t2 ? ws[t].t[2] : *t2;
		*t3 = ws[t].t[3] > *t3 ? ws[t].t[3] : *t3;
	}
}

/*
 * Start fn in each of the threads workers (their other fields set by the
 * caller), pass the four barriers of the two phases with them, join them
 * and take the phases' times. -1 when a thread could not start: the
 * started ones wait at a barrier sized for all, and there is no clean way
 * to release them, so the caller leaves and exit ends them.
 */
static int run_workers(struct worker *ws, long threads, void *(*fn)(void *), double *t0,
		       double *t1, double *t2, double *t3)
{
	pthread_barrier_t barrier;

	/* The main thread joins every barrier too. */
	if (pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1)) {
		fprintf(stderr, "smallobj: pthread_barrier_init failed\n");
		return -1;
	}
	for (long t = 0; t < threads; t++) {
		int rc;
		ws[t].index = (int)t;
		ws[t].barrier = &barrier;
		rc = pthread_create(&ws[t].tid, NULL, fn, &ws[t]);
		if (rc) {
			fprintf(stderr, "smallobj: pthread_create: %s\n", strerror(rc));
			return -1;
		}
	}
	for (int b = 0; b < 4; b++)
		pthread_barrier_wait(&barrier);
	phases(ws, threads, t0, t1, t2, t3);
	for (long t = 0; t < threads; t++)
		pthread_join(ws[t].tid, NULL);
	pthread_barrier_destroy(&barrier);
	return 0;
}

static int run_objects(const char *addr, long threads, long count,
		       const struct ofs_put_opts *opts)
{
	struct worker *ws = NULL;
	struct ofs_client *c = NULL;
	const char *addrs[1] = { addr };
	char base[64];
	double t0, t1, t2, t3;
	int rc, ret = EXIT_FAIL;

	snprintf(base, sizeof(base), "/smallobj-%ld-%ld-%ld", (long)getpid(), threads,
		 (long)time(NULL));
	rc = ofs_client_open(addrs, 1, &c);
	if (rc) {
		fprintf(stderr, "smallobj: connect %s: %s\n", addr, ofs_strerror(rc));
		return EXIT_FAIL;
	}
	rc = ofs_mkdir(c, base);
	ofs_client_close(c);
	if (rc) {
		fprintf(stderr, "smallobj: mkdir %s: %s\n", base, ofs_strerror(rc));
		return EXIT_FAIL;
	}
	ws = calloc((size_t)threads, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "smallobj: out of memory\n");
		return EXIT_FAIL;
	}
	for (long t = 0; t < threads; t++) {
		ws[t].count = count / threads + (t < count % threads ? 1 : 0);
		ws[t].addr = addr;
		ws[t].base = base;
		ws[t].opts = opts;
	}
	if (run_workers(ws, threads, work, &t0, &t1, &t2, &t3))
		goto out_free;
	ret = 0;
	for (long t = 0; t < threads; t++) {
		if (ws[t].rc) {
			fprintf(stderr, "smallobj: thread %ld: %s: %s\n", t, ws[t].what,
				ofs_strerror(ws[t].rc));
			ret = EXIT_FAIL;
		}
	}
	if (ret == 0)
		printf("threads=%ld count=%ld put_s=%.3f put_per_s=%.1f get_s=%.3f get_per_s=%.1f\n",
		       threads, count, t1 - t0, (double)count / (t1 - t0), t3 - t2,
		       (double)count / (t3 - t2));
out_free:
	free(ws);
	return ret;
}

/* Write buf (obj_size bytes) to the new file path and fdatasync it. */
static int write_synced(const char *path, const unsigned char *buf)
{
	int fd, rc = 0;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, obj_size);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != obj_size)
		rc = -EIO;
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* Read the file path back into buf (up to OBJ_MAX bytes); its length in
 * *len. */
static int read_back(const char *path, unsigned char *buf, size_t *len)
{
	int fd, rc = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, OBJ_MAX);
	if (n < 0)
		rc = -errno;
	else
		*len = (size_t)n;
	close(fd);
	return rc;
}

/* One thread of the baseline: its files under base/t<index>, written and
 * synced, then read back; the same barriers as work(). */
static void *work_fsync(void *arg)
{
	struct worker *w = arg;
	unsigned char want[OBJ_MAX], got[OBJ_MAX];
	char path[4096 + 64];
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/t%d", w->base, w->index);
	rc = mkdir(path, 0755) ? -errno : 0;
	if (rc)
		snprintf(w->what, sizeof(w->what), "mkdir t%d", w->index);
	pthread_barrier_wait(w->barrier);
	w->t[0] = now();
	for (long i = 0; !rc && i < w->count; i++) {
		snprintf(path, sizeof(path), "%s/t%d/f%ld", w->base, w->index, i);
		fill(want, w->index, i);
		rc = write_synced(path, want);
		if (rc)
			snprintf(w->what, sizeof(w->what), "write t%d/f%ld", w->index, i);
	}
	w->t[1] = now();
	pthread_barrier_wait(w->barrier);   /* writes done */
	pthread_barrier_wait(w->barrier);   /* reads start */
	w->t[2] = now();
	for (long i = 0; !rc && i < w->count; i++) {
		snprintf(path, sizeof(path), "%s/t%d/f%ld", w->base, w->index, i);
		rc = read_back(path, got, &len);
		if (rc) {
			snprintf(w->what, sizeof(w->what), "read t%d/f%ld", w->index, i);
			break;
		}
		fill(want, w->index, i);
		if (len != obj_size || memcmp(got, want, len)) {
			snprintf(w->what, sizeof(w->what), "read t%d/f%ld: %zu bytes, not the ones written",
				 w->index, i, len);
			rc = -EIO;
		}
	}
	w->t[3] = now();
	pthread_barrier_wait(w->barrier);   /* reads done */
	w->rc = rc;
	return NULL;
}

/* Remove what work_fsync made under dir (not timed; errors ignored). */
static void remove_fsync_files(const char *dir, const struct worker *ws, long threads)
{
	char path[4096 + 64];

	for (long t = 0; t < threads; t++) {
		for (long i = 0; i < ws[t].count; i++) {
			snprintf(path, sizeof(path), "%s/t%ld/f%ld", dir, t, i);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/t%ld", dir, t);
		rmdir(path);
	}
}

static int run_fsync(const char *dir, long threads, long count)
{
	struct worker *ws;
	double t0, t1, t2, t3;
	int ret = EXIT_FAIL;

	if (strlen(dir) > 4096) {
		fprintf(stderr, "smallobj: %s: name too long\n", dir);
		return EXIT_USAGE;
	}
	ws = calloc((size_t)threads, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "smallobj: out of memory\n");
		return EXIT_FAIL;
	}
	for (long t = 0; t < threads; t++) {
		ws[t].count = count / threads + (t < count % threads ? 1 : 0);
		ws[t].base = dir;
	}
	if (run_workers(ws, threads, work_fsync, &t0, &t1, &t2, &t3))
		return EXIT_FAIL;       /* (exit ends the started threads) */
	ret = 0;
	for (long t = 0; t < threads; t++) {
		if (ws[t].rc) {
			fprintf(stderr, "smallobj: %s/%s: %s\n", dir, ws[t].what, strerror(-ws[t].rc));
			ret = EXIT_FAIL;
		}
	}
	remove_fsync_files(dir, ws, threads);
	free(ws);
	if (ret == 0)
		printf("threads=%ld count=%ld fsync_s=%.3f fsync_per_s=%.1f read_s=%.3f read_per_s=%.1f\n",
		       threads, count, t1 - t0, (double)count / (t1 - t0), t3 - t2,
		       (double)count / (t3 - t2));
	return ret;
}

int main(int argc, char **argv)
{
	struct ofs_put_opts opts = { 0 };
	long threads = 1, count, replicas, sz;
	char idwhy[TLS_WHY_MAX];

	/* Options first, in any order. */
	while (argc >= 3 && (!strcmp(argv[1], "--size") || !strcmp(argv[1], "--replicas"))) {
		if (!strcmp(argv[1], "--size")) {
			if (parse_long(argv[2], 1, OBJ_MAX, &sz)) {
				fprintf(stderr, "smallobj: --size must be 1 to %d\n%s", OBJ_MAX, usage_text);
				return EXIT_USAGE;
			}
			obj_size = (size_t)sz;
		} else {
			if (parse_long(argv[2], 1, 4, &replicas)) {
				fprintf(stderr, "smallobj: --replicas must be 1 to 4\n%s", usage_text);
				return EXIT_USAGE;
			}
			opts.replicas = (uint8_t)replicas;
		}
		argv += 2;
		argc -= 2;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--baseline-fsync")) {
		if (opts.replicas) {
			fprintf(stderr, "smallobj: --replicas means nothing to the baseline\n%s", usage_text);
			return EXIT_USAGE;
		}
		if (parse_long(argv[3], 1, MAX_COUNT, &count) ||
		    (argc == 5 && parse_long(argv[4], 1, MAX_THREADS, &threads)) || count < threads) {
			fprintf(stderr, "smallobj: COUNT must be 1 to %ld, THREADS 1 to %d and COUNT"
				" at least THREADS\n%s", MAX_COUNT, MAX_THREADS, usage_text);
			return EXIT_USAGE;
		}
		return run_fsync(argv[2], threads, count);
	}
	if (argc != 4 || argv[1][0] == '-') {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (parse_long(argv[2], 1, MAX_THREADS, &threads) ||
	    parse_long(argv[3], 1, MAX_COUNT, &count) || count < threads) {
		fprintf(stderr, "smallobj: THREADS must be 1 to %d and COUNT at least THREADS\n%s",
			MAX_THREADS, usage_text);
		return EXIT_USAGE;
	}
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "smallobj: %s\n", idwhy);
		return 2;
	}
	return run_objects(argv[1], threads, count, &opts);
}
