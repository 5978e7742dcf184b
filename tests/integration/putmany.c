/*
 * putmany - many puts through one libofs client, for tests that need a
 * cluster full of files without paying a process start per file.
 *
 *   putmany HOST:PORT < LIST
 *
 * Each line of LIST is "LOCAL PATH REPLICAS STRIPES STRIP_SIZE": the local
 * file LOCAL is stored as PATH with those options (as `ofs put` would);
 * or "mkdir PATH": the directory PATH is made (as `ofs mkdir` would).
 * Exit 0 when every put succeeded; 1 at the first failure (named on
 * stderr); 2 on bad arguments or a malformed line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ofs.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

int main(int argc, char **argv)
{
	const char *addrs[1];
	struct ofs_client *c = NULL;
	char line[8192], local[4096], path[4096];
	unsigned replicas, stripes, strip;
	long n = 0;
	int rc;
	char idwhy[TLS_WHY_MAX];
	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "putmany: %s\n", idwhy);
		return 2;
	}

	if (argc != 2) {
		fprintf(stderr, "usage: putmany HOST:PORT < LIST\n");
		return 2;
	}
	addrs[0] = argv[1];
	rc = ofs_client_open(addrs, 1, &c);
	if (rc) {
		fprintf(stderr, "putmany: %s: %s\n", argv[1], ofs_strerror(rc));
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		struct ofs_put_opts o;
		int fd;
		if (strncmp(line, "mkdir ", 6) == 0 && sscanf(line + 6, "%4095s", path) == 1) {
			rc = ofs_mkdir(c, path);
			if (rc) {
				fprintf(stderr, "putmany: mkdir %s: %s\n", path, ofs_strerror(rc));
				ofs_client_close(c);
				return 1;
			}
			n++;
			continue;
		}
		if (sscanf(line, "%4095s %4095s %u %u %u", local, path, &replicas, &stripes,
			   &strip) != 5) {
			fprintf(stderr, "putmany: malformed line %ld\n", n + 1);
			ofs_client_close(c);
			return 2;
		}
		memset(&o, 0, sizeof(o));
		o.replicas = (uint8_t)replicas;
		o.stripes = (uint16_t)stripes;
		o.strip_size = strip;
		fd = open(local, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "putmany: %s: %s\n", local, strerror(errno));
			ofs_client_close(c);
			return 1;
		}
		rc = ofs_put_fd(c, fd, path, &o);
		close(fd);
		if (rc) {
			fprintf(stderr, "putmany: put %s: %s\n", path, ofs_strerror(rc));
			ofs_client_close(c);
			return 1;
		}
		n++;
	}
	ofs_client_close(c);
	return 0;
}
