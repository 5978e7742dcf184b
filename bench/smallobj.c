/*
 * smallobj.c - small-object rate benchmark for bench/run.
 *
 *   smallobj [--size BYTES] [--replicas N] ADDR THREADS COUNT
 *   smallobj --baseline-fsync DIR COUNT
 *
 * DESIGN. The first form measures how many 1 KiB files a cluster stores and
 * returns per second. THREADS threads each open their own struct
 * ofs_client (a client serves one thread at a time), wait at a barrier,
 * and put COUNT/THREADS files of distinct paths into a directory of their
 * own (made before the clock starts, so only puts are timed); after a
 * second barrier they get every file back and check its bytes. One line
 * of key=value pairs reports the rates:
 *
 *   threads=16 count=2000 put_s=0.812 put_per_s=2463.1 get_s=0.201 get_per_s=9950.2
 *
 * With one thread every put waits for its own commit; with many, a server
 * that commits in groups answers several puts per disk sync, so the ratio
 * of the two rates shows group commit at work. --replicas N stores every
 * file (metafile and dfile) with N copies, write confidence N.
 *
 * The second form is the disk's baseline: one thread writes 1 KiB to COUNT
 * new files in DIR, each followed by fdatasync, and prints
 *
 *   count=2000 fsync_s=0.700 fsync_per_s=2857.1
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
	"       smallobj --baseline-fsync DIR COUNT\n";

struct worker {
	pthread_t tid;               /* the thread */
	int index;                   /* 0..threads-1, names its directory */
	long count;                  /* files this thread puts and gets */
	const char *addr;            /* cluster address */
	const char *base;            /* run's top directory in OFS */
	pthread_barrier_t *barrier;  /* shared start line of each phase */
	const struct ofs_put_opts *opts;   /* copies of each file */
	int rc;                      /* first error, 0 if none */
	char what[200];              /* the operation that failed */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The bytes of file i of thread t: distinct per file, so a get that
 * returned the wrong file is noticed. */
static void fill(unsigned char *buf, int t, long i)
{
	uint64_t x = ((uint64_t)(unsigned)t << 40) ^ (uint64_t)i ^ 0x9e3779b97f4a7c15ull;

	for (size_t k = 0; k < OBJ_MAX; k++) {
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
	for (long i = 0; !rc && i < w->count; i++) {
		snprintf(path, sizeof(path), "%s/t%d/f%ld", w->base, w->index, i);
		fill(want, w->index, i);
		rc = ofs_put_buf(c, want, obj_size, path, w->opts);
		if (rc)
			snprintf(w->what, sizeof(w->what), "put %s", path);
	}
	pthread_barrier_wait(w->barrier);   /* puts done */
	pthread_barrier_wait(w->barrier);   /* gets start */
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
	pthread_barrier_wait(w->barrier);   /* gets done */
	ofs_client_close(c);
	w->rc = rc;
	return NULL;
}

static int run_objects(const char *addr, long threads, long count,
		       const struct ofs_put_opts *opts)
{
	struct worker *ws = NULL;
	struct ofs_client *c = NULL;
	pthread_barrier_t barrier;
	const char *addrs[1] = { addr };
	char base[64];
	double t0, t1, t2, t3;
	long started = 0;
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
	/* The main thread joins every barrier too, to read the clock. */
	if (pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1)) {
		fprintf(stderr, "smallobj: pthread_barrier_init failed\n");
		goto out_free;
	}
	for (long t = 0; t < threads; t++) {
		struct worker *w = &ws[t];

		w->index = (int)t;
		w->count = count / threads + (t < count % threads ? 1 : 0);
		w->addr = addr;
		w->base = base;
		w->barrier = &barrier;
		w->opts = opts;
		rc = pthread_create(&w->tid, NULL, work, w);
		if (rc) {
			fprintf(stderr, "smallobj: pthread_create: %s\n", strerror(rc));
			break;
		}
		started++;
	}
	if (started < threads) {
		/* The started threads wait at a barrier sized for all; there is
		 * no clean way to release them, so leave and let exit end them. */
		goto out_free;
	}
	pthread_barrier_wait(&barrier);
	t0 = now();
	pthread_barrier_wait(&barrier);
	t1 = now();
	pthread_barrier_wait(&barrier);
	t2 = now();
	pthread_barrier_wait(&barrier);
	t3 = now();
	ret = 0;
	for (long t = 0; t < threads; t++) {
		pthread_join(ws[t].tid, NULL);
		if (ws[t].rc) {
			fprintf(stderr, "smallobj: thread %ld: %s: %s\n", t, ws[t].what,
				ofs_strerror(ws[t].rc));
			ret = EXIT_FAIL;
		}
	}
	pthread_barrier_destroy(&barrier);
	if (ret == 0)
		printf("threads=%ld count=%ld put_s=%.3f put_per_s=%.1f get_s=%.3f get_per_s=%.1f\n",
		       threads, count, t1 - t0, (double)count / (t1 - t0), t3 - t2,
		       (double)count / (t3 - t2));
out_free:
	free(ws);
	return ret;
}

/* Write buf to a new file dir/name and fdatasync it. */
static int write_synced(const char *dir, long i, const unsigned char *buf, char *path, size_t plen)
{
	int fd, rc = 0;

	snprintf(path, plen, "%s/f%ld", dir, i);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, OBJ_SIZE) != OBJ_SIZE)
		rc = errno ? -errno : -EIO;
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

static int run_fsync(const char *dir, long count)
{
	unsigned char buf[OBJ_MAX];
	char path[4096 + 32];
	double t0, t1;
	long done = 0;
	int rc = 0;

	if (strlen(dir) > 4096) {
		fprintf(stderr, "smallobj: %s: name too long\n", dir);
		return EXIT_USAGE;
	}
	t0 = now();
	for (; done < count; done++) {
		fill(buf, 0, done);
		errno = 0;
		rc = write_synced(dir, done, buf, path, sizeof(path));
		if (rc) {
			fprintf(stderr, "smallobj: %s: %s\n", path, strerror(-rc));
			break;
		}
	}
	t1 = now();
	for (long i = 0; i < done + (rc ? 1 : 0); i++) {
		snprintf(path, sizeof(path), "%s/f%ld", dir, i);
		unlink(path);
	}
	if (rc)
		return EXIT_FAIL;
	printf("count=%ld fsync_s=%.3f fsync_per_s=%.1f\n", count, t1 - t0,
	       (double)count / (t1 - t0));
	return 0;
}

int main(int argc, char **argv)
{
	struct ofs_put_opts opts = { 0 };
	long threads, count, replicas;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "smallobj: %s\n", idwhy);
		return 2;
	}

	if (argc == 4 && !strcmp(argv[1], "--baseline-fsync")) {
		if (parse_long(argv[3], 1, MAX_COUNT, &count)) {
			fprintf(stderr, "smallobj: COUNT must be 1 to %ld\n%s", MAX_COUNT, usage_text);
			return EXIT_USAGE;
		}
		return run_fsync(argv[2], count);
	}
	if (argc >= 6 && !strcmp(argv[1], "--size")) {
		long sz;
		if (parse_long(argv[2], 1, OBJ_MAX, &sz)) {
			fprintf(stderr, "smallobj: --size must be 1 to %d\n%s", OBJ_MAX, usage_text);
			return EXIT_USAGE;
		}
		obj_size = (size_t)sz;
		argv += 2;
		argc -= 2;
	}
	if (argc == 6 && !strcmp(argv[1], "--replicas")) {
		if (parse_long(argv[2], 1, 4, &replicas)) {
			fprintf(stderr, "smallobj: --replicas must be 1 to 4\n%s", usage_text);
			return EXIT_USAGE;
		}
		opts.replicas = (uint8_t)replicas;
		argv += 2;
		argc -= 2;
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
	return run_objects(argv[1], threads, count, &opts);
}
