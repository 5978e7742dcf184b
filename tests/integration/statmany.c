/*
 * statmany - many stats through one libofs client, for tests that look at
 * where many objects' copies are without paying a process start per path.
 *
 *   statmany HOST:PORT < PATHS
 *
 * Each line of PATHS is a path in the cluster. For each, one line of JSON
 * is printed with the keys `ofs stat --json` gives for where the objects
 * live: path, oid, sids (the copies, the primary first), type, and a
 * file's dfiles or a directory's dirdata (each with its oid and sids). A
 * path that cannot be stat'ed is named on stderr, and the others go on.
 * Exit 0 when every stat succeeded; 1 when one failed or the cluster could
 * not be opened; 2 on bad arguments or a malformed line.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "client/ofs.h"
#include "lib/attr_json.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

int main(int argc, char **argv)
{
	const char *addrs[1];
	struct ofs_client *c = NULL;
	struct ofs_attr *a;
	char line[4200], path[4096], hex[OFS_OID_HEX];
	long n = 0;
	int rc, ret = 0;
	char idwhy[TLS_WHY_MAX];

	if (ofs_client_identity(NULL, false, idwhy)) {
		fprintf(stderr, "statmany: %s\n", idwhy);
		return 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: statmany HOST:PORT < PATHS\n");
		return 2;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return 1;
	addrs[0] = argv[1];
	rc = ofs_client_open(addrs, 1, &c);
	if (rc) {
		fprintf(stderr, "statmany: %s: %s\n", argv[1], ofs_strerror(rc));
		free(a);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		struct ofs_handle h;
		json_t *doc;
		char *s;

		n++;
		if (sscanf(line, "%4095s", path) != 1) {
			fprintf(stderr, "statmany: malformed line %ld\n", n);
			ret = 2;
			break;
		}
		rc = ofs_stat(c, path, a, &h);
		if (rc) {
			fprintf(stderr, "statmany: %s: %s\n", path, ofs_strerror(rc));
			ret = 1;
			continue;
		}
		doc = json_object();
		oid_to_hex(h.oid, hex);
		json_object_set_new(doc, "path", json_string(path));
		json_object_set_new(doc, "oid", json_string(hex));
		json_object_set_new(doc, "sids", attr_json_sids(h.nsids, h.sids));
		json_object_set_new(doc, "type", json_string(a->type == OFS_OBJ_DIRECTORY ? "directory"
											    : "file"));
		attr_json_layout(doc, a);
		s = json_dumps(doc, JSON_COMPACT);
		json_decref(doc);
		if (!s) {
			ret = 1;
			break;
		}
		printf("%s\n", s);
		free(s);
		fflush(stdout);
	}
	ofs_client_close(c);
	free(a);
	return ret;
}
