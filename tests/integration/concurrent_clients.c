/*
 * concurrent_clients - many libofs clients at once against one cluster.
 *
 *   concurrent_clients HOST:PORT N DIR
 *
 * Opens N clients (ofs_client_open) and keeps every one of them open, then
 * starts N threads that wait on a barrier so they all go at once; thread i
 * puts a small file of its own (distinct contents) as DIR/cI through its
 * own client, reads it back and compares. DIR is created if missing. Exit
 * 0 only when every open, put, get and comparison succeeded; 1 otherwise
 * (each failure named on stderr); 2 on bad arguments.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

struct worker {
	struct ofs_client *c;
	pthread_barrier_t *start;
	const char *dir;
	unsigned idx;
	int ok;
};

/* Distinct contents for client i: its index, then bytes derived from it,
 * 1000 + 37*i bytes long. */
static size_t fill(unsigned i, unsigned char **out)
{
	size_t n = 1000 + 37 * (size_t)i;
	unsigned char *b = malloc(n);
	uint32_t x = 2463534242u ^ (i * 2654435761u);

	if (!b)
		return 0;
	snprintf((char *)b, n, "client %u\n", i);
	for (size_t k = strlen((char *)b); k < n; k++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[k] = (unsigned char)x;
	}
	*out = b;
	return n;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char path[512];
	unsigned char *want = NULL;
	void *got = NULL;
	size_t n, gn = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/c%u", w->dir, w->idx);
	n = fill(w->idx, &want);
	pthread_barrier_wait(w->start);
	if (!n) {
		fprintf(stderr, "concurrent_clients: %s: out of memory\n", path);
		return NULL;
	}
	rc = ofs_put_buf(w->c, want, n, path, NULL);
	if (rc) {
		fprintf(stderr, "concurrent_clients: put %s: %s\n", path, ofs_strerror(rc));
		goto out;
	}
	rc = ofs_get_buf(w->c, path, &got, &gn);
	if (rc) {
		fprintf(stderr, "concurrent_clients: get %s: %s\n", path, ofs_strerror(rc));
		goto out;
	}
	if (gn != n || memcmp(got, want, n)) {
		fprintf(stderr, "concurrent_clients: %s: read back %zu bytes that differ from the %zu put\n",
			path, gn, n);
		goto out;
	}
	w->ok = 1;
out:
	free(got);
	free(want);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *addr;
	struct worker *w;
	pthread_t *th;
	pthread_barrier_t start;
	struct ofs_client *admin = NULL;
	unsigned n, good = 0, opened = 0;
	int rc;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "concurrent_clients: %s\n", idwhy);
		return 2;
	}

	if (argc != 4 || atoi(argv[2]) <= 0 || argv[3][0] != '/') {
		fprintf(stderr, "usage: concurrent_clients HOST:PORT N /DIR\n");
		return 2;
	}
	addr = argv[1];
	n = (unsigned)atoi(argv[2]);
	w = calloc(n, sizeof(*w));
	th = calloc(n, sizeof(*th));
	if (!w || !th)
		return 1;

	rc = ofs_client_open(&addr, 1, &admin);
	if (rc) {
		fprintf(stderr, "concurrent_clients: open %s: %s\n", addr, ofs_strerror(rc));
		return 1;
	}
	rc = ofs_mkdir(admin, argv[3]);
	if (rc && rc != -EEXIST) {
		fprintf(stderr, "concurrent_clients: mkdir %s: %s\n", argv[3], ofs_strerror(rc));
		return 1;
	}
	ofs_client_close(admin);

	/* Every connection open at the same time before anyone works. */
	for (unsigned i = 0; i < n; i++) {
		rc = ofs_client_open(&addr, 1, &w[i].c);
		if (rc) {
			fprintf(stderr, "concurrent_clients: open client %u of %u: %s\n", i, n,
				ofs_strerror(rc));
			break;
		}
		opened++;
	}
	if (opened < n) {
		for (unsigned i = 0; i < opened; i++)
			ofs_client_close(w[i].c);
		return 1;
	}
	printf("opened %u clients\n", n);
	fflush(stdout);

	pthread_barrier_init(&start, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		w[i].start = &start;
		w[i].dir = argv[3];
		w[i].idx = i;
		rc = pthread_create(&th[i], NULL, work, &w[i]);
		if (rc) {
			/* The barrier counts n threads: without them all no one
			 * starts, so give up at once. */
			fprintf(stderr, "concurrent_clients: thread %u: %s\n", i, strerror(rc));
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		good += (unsigned)w[i].ok;
	}
	for (unsigned i = 0; i < n; i++)
		ofs_client_close(w[i].c);
	pthread_barrier_destroy(&start);
	printf("%u of %u clients put and read back their file\n", good, n);
	free(w);
	free(th);
	return good == n ? 0 : 1;
}
