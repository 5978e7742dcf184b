/*
 * getmany - many gets through one libofs client, for tests that read a
 * cluster's files back without paying a process start per file.
 *
 *   getmany HOST:PORT DIR < NAMES
 *
 * Each line of NAMES is a path in the cluster. The Nth is got into the
 * local file DIR/N (N from 1), and one line is printed for it:
 *   "PATH 0 MS DIR/N"            got (MS: how long the get took)
 *   "PATH CODE MS MESSAGE"       failed: CODE is the exit status `ofs get`
 *                                gives that error, MESSAGE what it says
 * A failed get does not stop the others. Exit 0 when every line was
 * handled (whatever the gets' outcomes); 1 when the cluster could not be
 * opened; 2 on bad arguments or a malformed line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* `ofs get`'s exit status for an error: 3 for a path that is not there or
 * a server that cannot be reached, as the CLI says (4: anything else the
 * test did not expect). */
static int exit_code(int rc)
{
	return rc == -ENOENT || rc == -ENOTDIR || rc == -EISDIR || rc == -OFS_EUNREACHABLE ||
			       rc == -ETIMEDOUT || rc == -ECONNREFUSED
		       ? 3
		       : 4;
}

static void get_one(struct ofs_client *c, const char *path, const char *local)
{
	long long t0 = now_ms();
	int fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc;

	if (fd < 0) {
		printf("%s 4 0 %s: %s\n", path, local, strerror(errno));
		return;
	}
	rc = ofs_get_fd(c, path, fd, NULL);
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		printf("%s %d %lld %s\n", path, exit_code(rc), now_ms() - t0, ofs_strerror(rc));
	else
		printf("%s 0 %lld %s\n", path, now_ms() - t0, local);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *addrs[1];
	struct ofs_client *c = NULL;
	char line[4200], path[4096], local[4200];
	long n = 0;
	int rc;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "getmany: %s\n", idwhy);
		return 2;
	}

	if (argc != 3) {
		fprintf(stderr, "usage: getmany HOST:PORT DIR < NAMES\n");
		return 2;
	}
	addrs[0] = argv[1];
	rc = ofs_client_open(addrs, 1, &c);
	if (rc) {
		fprintf(stderr, "getmany: %s: %s\n", argv[1], ofs_strerror(rc));
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%4095s", path) != 1) {
			fprintf(stderr, "getmany: malformed line %ld\n", n + 1);
			ofs_client_close(c);
			return 2;
		}
		n++;
		snprintf(local, sizeof(local), "%s/%ld", argv[2], n);
		get_one(c, path, local);
	}
	ofs_client_close(c);
	return 0;
}
