/*
 * catchload.c - the writer and the latency probe of bench/catchup.
 *
 *   catchload write [--threads T] ADDR DIR SMALL MB
 *   catchload probe [--size BYTES] [--until FILE] ADDR DIR COUNT
 *
 * DESIGN. Every file is stored with 3 copies, write confidence 2 (as
 * `ofs put --replicas 3 --confidence 2`), so puts go on while one of the
 * three servers is down and the copies it misses are recorded stale.
 *
 * write: one process makes directory DIR, then SMALL small files of 1 KiB
 * to 4 KiB (sizes spread evenly, fixed by the file's number) under
 * DIR/small/tN/ by T threads (default 16, each with its own client), then
 * MB MiB of large files of 64 MiB (the last one holds what is left) as
 * DIR/large/LN, one after the other. Every file's bytes are distinct. One
 * line of key=value pairs:
 *
 *   small=10000 small_bytes=25600000 large=16 large_bytes=1073741824 small_s=3.1 large_s=9.8
 *
 * probe: puts of BYTES (default 1024) bytes, one after the other through
 * one client, as DIR/pN (DIR must exist), each timed on its own. It stops
 * after COUNT puts, or with --until FILE as soon as FILE exists (checked
 * before each put; at least one put is made; COUNT is then a bound). One
 * line:
 *
 *   count=200 p50_ms=1.234 p99_ms=4.567 max_ms=5.012 mean_ms=1.400
 *
 * Exit status 0 on success, 2 on bad usage, 3 when an operation failed
 * (the failure is printed).
 */
#include <errno.h>
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
#include "lib/parse.h"
#include "lib/tls.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3
#define SMALL_MIN 1024
#define SMALL_MAX 4096
#define LARGE_SIZE (64UL << 20)
#define MAX_THREADS 256
#define MAX_COUNT 10000000L
#define PROBE_MAX 65536

static const char usage_text[] =
	"usage: catchload write [--threads T] ADDR DIR SMALL MB\n"
	"       catchload probe [--size BYTES] [--until FILE] ADDR DIR COUNT\n";

static const struct ofs_put_opts put_opts = { .replicas = 3, .confidence = 2 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n pseudo-random bytes, distinct for every seed. */
static void fill(unsigned char *buf, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ 0xd1b54a32d192ed03ull;
	size_t k = 0;

	if (!x)
		x = 1;
	for (; k + 8 <= n; k += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + k, &x, 8);
	}
	for (; k < n; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[k] = (unsigned char)x;
	}
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	uint64_t v;
	int rc = parse_uint(s, (uint64_t)lo, (uint64_t)hi, &v);

	if (!rc)
		*out = (long)v;
	return rc;
}

static int connect_to(const char *addr, struct ofs_client **c)
{
	const char *addrs[1] = { addr };
	int rc = ofs_client_open(addrs, 1, c);

	if (rc)
		fprintf(stderr, "catchload: connect %s: %s\n", addr, ofs_strerror(rc));
	return rc;
}

/* ---- write -------------------------------------------------------------- */

struct writer {
	pthread_t tid;
	int index;                   /* names its directory */
	long first, count;           /* its files: first .. first+count-1 */
	const char *addr, *dir;
	uint64_t bytes;              /* bytes it stored */
	int rc;
	char what[200];              /* the operation that failed */
};

static size_t small_size(long i)
{
	return SMALL_MIN + (size_t)((uint64_t)i * 2654435761u % (SMALL_MAX - SMALL_MIN + 1));
}

static void *write_small(void *arg)
{
	struct writer *w = arg;
	struct ofs_client *c = NULL;
	unsigned char buf[SMALL_MAX];
	char path[4200];
	int rc;

	rc = connect_to(w->addr, &c);
	if (rc) {
		snprintf(w->what, sizeof(w->what), "connect %s", w->addr);
		w->rc = rc;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/small/t%d", w->dir, w->index);
	rc = ofs_mkdir(c, path);
	if (rc)
		snprintf(w->what, sizeof(w->what), "mkdir %.150s", path);
	for (long i = w->first; !rc && i < w->first + w->count; i++) {
		size_t n = small_size(i);
		snprintf(path, sizeof(path), "%s/small/t%d/f%ld", w->dir, w->index, i);
		fill(buf, n, (uint64_t)i + 1);
		rc = ofs_put_buf(c, buf, n, path, &put_opts);
		if (rc)
			snprintf(w->what, sizeof(w->what), "put %.150s", path);
		else
			w->bytes += n;
	}
	ofs_client_close(c);
	w->rc = rc;
	return NULL;
}

static int run_write(const char *addr, const char *dir, long threads, long small, long mb)
{
	struct ofs_client *c = NULL;
	struct writer *ws;
	char path[4200];
	unsigned char *big = NULL;
	uint64_t small_bytes = 0, large_bytes = 0, left = (uint64_t)mb << 20;
	long nlarge = 0, started = 0;
	double t0, t1, t2;
	int rc, ret = EXIT_FAIL;

	if (strlen(dir) > 4000) {
		fprintf(stderr, "catchload: %s: name too long\n", dir);
		return EXIT_USAGE;
	}
	if (threads > small && small > 0)
		threads = small;
	if (connect_to(addr, &c))
		return EXIT_FAIL;
	rc = ofs_mkdir(c, dir);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/small", dir);
		rc = ofs_mkdir(c, path);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/large", dir);
		rc = ofs_mkdir(c, path);
	}
	if (rc) {
		fprintf(stderr, "catchload: mkdir under %s: %s\n", dir, ofs_strerror(rc));
		ofs_client_close(c);
		return EXIT_FAIL;
	}
	ws = calloc((size_t)(threads ? threads : 1), sizeof(*ws));
	if (!ws) {
		ofs_client_close(c);
		return EXIT_FAIL;
	}
	t0 = now();
	for (long t = 0, first = 0; small && t < threads; t++) {
		struct writer *w = &ws[t];
		w->index = (int)t;
		w->first = first;
		w->count = small / threads + (t < small % threads ? 1 : 0);
		first += w->count;
		w->addr = addr;
		w->dir = dir;
		rc = pthread_create(&w->tid, NULL, write_small, w);
		if (rc) {
			fprintf(stderr, "catchload: pthread_create: %s\n", strerror(rc));
			break;
		}
		started++;
	}
	ret = started == (small ? threads : 0) ? 0 : EXIT_FAIL;
	for (long t = 0; t < started; t++) {
		pthread_join(ws[t].tid, NULL);
		if (ws[t].rc) {
			fprintf(stderr, "catchload: thread %ld: %s: %s\n", t, ws[t].what,
				ofs_strerror(ws[t].rc));
			ret = EXIT_FAIL;
		}
		small_bytes += ws[t].bytes;
	}
	t1 = now();
	if (!ret && left) {
		big = malloc(LARGE_SIZE);
		if (!big) {
			fprintf(stderr, "catchload: out of memory\n");
			ret = EXIT_FAIL;
		}
	}
	while (!ret && left) {
		size_t n = left < LARGE_SIZE ? (size_t)left : LARGE_SIZE;
		fill(big, n, 0x1000000000ull + (uint64_t)nlarge);
		snprintf(path, sizeof(path), "%s/large/L%ld", dir, nlarge);
		rc = ofs_put_buf(c, big, n, path, &put_opts);
		if (rc) {
			fprintf(stderr, "catchload: put %s: %s\n", path, ofs_strerror(rc));
			ret = EXIT_FAIL;
			break;
		}
		nlarge++;
		large_bytes += n;
		left -= n;
	}
	t2 = now();
	free(big);
	free(ws);
	ofs_client_close(c);
	if (!ret)
		printf("small=%ld small_bytes=%llu large=%ld large_bytes=%llu small_s=%.3f large_s=%.3f\n",
		       small, (unsigned long long)small_bytes, nlarge,
		       (unsigned long long)large_bytes, t1 - t0, t2 - t1);
	return ret;
}

/* ---- probe -------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values. */
static double percentile(const double *v, long n, double p)
{
	long k = (long)(p * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static int run_probe(const char *addr, const char *dir, long size, const char *until, long count)
{
	struct ofs_client *c = NULL;
	unsigned char buf[PROBE_MAX];
	char path[4200];
	double *ms, sum = 0;
	long n = 0;
	int rc = 0;

	if (strlen(dir) > 4000) {
		fprintf(stderr, "catchload: %s: name too long\n", dir);
		return EXIT_USAGE;
	}
	ms = malloc((size_t)count * sizeof(*ms));
	if (!ms)
		return EXIT_FAIL;
	if (connect_to(addr, &c)) {
		free(ms);
		return EXIT_FAIL;
	}
	while (n < count) {
		struct stat sb;
		double t0, t1;
		if (n > 0 && until && stat(until, &sb) == 0)
			break;
		fill(buf, (size_t)size, 0x2000000000ull + (uint64_t)n);
		snprintf(path, sizeof(path), "%s/p%ld", dir, n);
		t0 = now();
		rc = ofs_put_buf(c, buf, (size_t)size, path, &put_opts);
		t1 = now();
		if (rc) {
			fprintf(stderr, "catchload: put %s: %s\n", path, ofs_strerror(rc));
			break;
		}
		ms[n++] = (t1 - t0) * 1e3;
		sum += (t1 - t0) * 1e3;
	}
	ofs_client_close(c);
	if (!rc) {
		qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
		printf("count=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f\n", n,
		       percentile(ms, n, 0.50), percentile(ms, n, 0.99), ms[n - 1], sum / (double)n);
	}
	free(ms);
	return rc ? EXIT_FAIL : 0;
}

int main(int argc, char **argv)
{
	long threads = 16, small, mb, size = 1024, count;
	const char *until = NULL;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "catchload: %s\n", idwhy);
		return 2;
	}

	if (argc >= 2 && !strcmp(argv[1], "write")) {
		argv++;
		argc--;
		if (argc >= 3 && !strcmp(argv[1], "--threads")) {
			if (parse_long(argv[2], 1, MAX_THREADS, &threads)) {
				fprintf(stderr, "catchload: --threads must be 1 to %d\n", MAX_THREADS);
				return EXIT_USAGE;
			}
			argv += 2;
			argc -= 2;
		}
		if (argc != 5 || argv[1][0] == '-' || parse_long(argv[3], 0, MAX_COUNT, &small) ||
		    parse_long(argv[4], 0, 1L << 30, &mb)) {
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
		return run_write(argv[1], argv[2], threads, small, mb);
	}
	if (argc >= 2 && !strcmp(argv[1], "probe")) {
		argv++;
		argc--;
		while (argc >= 3 && argv[1][0] == '-') {
			if (!strcmp(argv[1], "--size")) {
				if (parse_long(argv[2], 1, PROBE_MAX, &size)) {
					fprintf(stderr, "catchload: --size must be 1 to %d\n", PROBE_MAX);
					return EXIT_USAGE;
				}
			} else if (!strcmp(argv[1], "--until")) {
				until = argv[2];
			} else {
				break;
			}
			argv += 2;
			argc -= 2;
		}
		if (argc != 4 || argv[1][0] == '-' || parse_long(argv[3], 1, MAX_COUNT, &count)) {
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
		return run_probe(argv[1], argv[2], size, until, count);
	}
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}
