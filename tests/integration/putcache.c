/*
 * putcache - a put's walk through the directories a client walked lately
 * (client/ofs_dcache.c), seen from two libofs clients of one cluster.
 *
 *   putcache HOST:PORT DIR N
 *
 * Client A puts N small files into DIR/sub (made here) and the requests
 * it sent are counted: the path is walked about once, not once per file
 * (at most N + 8 DIRENT_LOOKUPs - one per file, for the name itself - and
 * at most 8 GETATTRs). Then client B removes DIR/sub (its files first)
 * and makes it again, and A, whose walk of DIR/sub is still remembered,
 * puts one more file there: the put must succeed, into the new DIR/sub
 * (B sees it), not fail on the old one. Prints one line of counts; exit 0
 * when all of it holds, 1 with the reason on stderr, 2 on bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "putcache: %s: %s\n", what, ofs_strerror(rc));
	return 1;
}

int main(int argc, char **argv)
{
	struct ofs_client *a = NULL, *b = NULL;
	struct ofs_put_opts po;
	struct ofs_attr *st;
	const char *addrs[1];
	char path[4096], sub[4000], idwhy[TLS_WHY_MAX], data[1024];
	long n;
	int rc;

	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "putcache: %s\n", idwhy);
		return 2;
	}
	if (argc != 4 || (n = atol(argv[3])) < 1 || strlen(argv[2]) > 3000) {
		fprintf(stderr, "usage: putcache HOST:PORT DIR N\n");
		return 2;
	}
	addrs[0] = argv[1];
	if ((rc = ofs_client_open(addrs, 1, &a)) != 0 || (rc = ofs_client_open(addrs, 1, &b)) != 0)
		return fail(argv[1], rc);
	if (!(st = malloc(sizeof(*st))))
		return 1;
	memset(data, 'x', sizeof(data));
	memset(&po, 0, sizeof(po));
	po.replicas = 1;
	po.confidence = 1;
	po.strip_size = 1 << 20;
	po.stripes = 1;
	snprintf(sub, sizeof(sub), "%s/sub", argv[2]);
	if ((rc = ofs_mkdir(b, sub)) != 0)
		return fail("mkdir", rc);
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", sub, i);
		if ((rc = ofs_put_buf(a, data, sizeof(data), path, &po)) != 0)
			return fail(path, rc);
	}
	printf("putcache: %ld puts: dirent_lookup=%llu getattr=%llu\n", n,
	       (unsigned long long)ofs_client_sent(a, OFS_OP_DIRENT_LOOKUP),
	       (unsigned long long)ofs_client_sent(a, OFS_OP_GETATTR));
	if (ofs_client_sent(a, OFS_OP_DIRENT_LOOKUP) > (uint64_t)n + 8 ||
	    ofs_client_sent(a, OFS_OP_GETATTR) > 8) {
		fprintf(stderr, "putcache: the path was walked for every put\n");
		return 1;
	}
	/* B makes DIR/sub again; A's remembered walk names the old one */
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", sub, i);
		if ((rc = ofs_unlink(b, path)) != 0)
			return fail(path, rc);
	}
	if ((rc = ofs_rmdir(b, sub)) != 0 || (rc = ofs_mkdir(b, sub)) != 0)
		return fail("rmdir and mkdir again", rc);
	snprintf(path, sizeof(path), "%s/after", sub);
	if ((rc = ofs_put_buf(a, data, sizeof(data), path, &po)) != 0)
		return fail("a put into the directory made again", rc);
	if ((rc = ofs_stat(b, path, st, NULL)) != 0)
		return fail("the file put into the directory made again, seen by another client", rc);
	printf("putcache: a put after its directory was made again: in the new one\n");
	free(st);
	ofs_client_close(a);
	ofs_client_close(b);
	return 0;
}
