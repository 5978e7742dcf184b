/*
 * tool.c - `ofs-server tool`: the low-level object tool (CLI.md), for
 * experts and for fault-injection tests, the way Ceph has
 * ceph-objectstore-tool. list, keys and get-key open the data dir
 * read-only and work while its server runs; the others change it and
 * need the server stopped (the data dir's lock says so otherwise).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "server/store.h"
#include "server/tool.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3

static const char tool_usage[] =
	"usage: ofs-server tool --data DIR list [--json]\n"
	"       ofs-server tool --data DIR keys OID [--json]\n"
	"       ofs-server tool --data DIR get-key OID KEY\n"
	"       ofs-server tool --data DIR set-key OID KEY      (value from stdin)\n"
	"       ofs-server tool --data DIR rm-key OID KEY\n"
	"       ofs-server tool --data DIR set-version OID N\n"
	"       ofs-server tool --data DIR set-backref OID OWNER STRIPE [NAME]\n"
	"       ofs-server tool --data DIR set-part OID INDEX PART [SID...]\n"
	"       ofs-server tool --data DIR mark-behind OID\n"
	"       ofs-server tool --data DIR remove OID\n";

_Static_assert(OFS_MAX_REPLICAS == 4, "set-part's usage says at most 4 SIDs");

static int tusage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs-server: tool: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", tool_usage);
	return EXIT_USAGE;
}

static int tfail(const char *what, int rc)
{
	if (rc == -EBUSY)
		fprintf(stderr, "ofs-server: tool: %s: its server is running; stop it first\n", what);
	else if (rc == -ENOENT)
		fprintf(stderr, "ofs-server: tool: %s: no such object or key\n", what);
	else
		fprintf(stderr, "ofs-server: tool: %s: %s\n", what, ofs_strerror(rc));
	return EXIT_FAIL;
}

struct list_ctx {
	json_t *arr;
	bool json;
	struct ofs_oid last;
	uint32_t n;
};

static int list_one(struct ofs_oid oid, const struct ofs_attr *a, int decode_rc, void *arg)
{
	struct list_ctx *l = arg;
	char hex[OFS_OID_HEX];

	l->last = oid;
	l->n++;
	oid_to_hex(oid, hex);
	if (l->json) {
		json_t *o = json_object();
		json_object_set_new(o, "oid", json_string(hex));
		if (a) {
			json_object_set_new(o, "type", json_string(ofs_type_name(a->type)));
			json_object_set_new(o, "version", json_integer((json_int_t)a->version));
			json_object_set_new(o, "size", json_integer((json_int_t)a->size));
		} else {
			json_object_set_new(o, "error", json_string(ofs_strerror(decode_rc)));
		}
		json_array_append_new(l->arr, o);
	} else if (a) {
		printf("%s %-9s %8llu %llu\n", hex, ofs_type_name(a->type),
		       (unsigned long long)a->version, (unsigned long long)a->size);
	} else {
		printf("%s (record does not decode: %s)\n", hex, ofs_strerror(decode_rc));
	}
	return 0;
}

static void print_key(const void *k, size_t kn)
{
	const unsigned char *p = k;
	bool text = true;

	for (size_t i = 0; i < kn; i++)
		text &= p[i] >= 0x20 && p[i] < 0x7f;
	if (text) {
		fwrite(k, 1, kn, stdout);
	} else {
		fputs("0x", stdout);
		for (size_t i = 0; i < kn; i++)
			printf("%02x", p[i]);
	}
}

struct keys_ctx {
	json_t *arr;
	bool json;
	uint8_t last[OFS_MAX_KEY];
	size_t lastn;
};

static int key_one(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct keys_ctx *kc = arg;

	(void)v;
	memcpy(kc->last, k, kn);
	kc->lastn = kn;
	if (kc->json) {
		json_t *o = json_object();
		json_object_set_new(o, "key", json_stringn(k, kn));
		json_object_set_new(o, "value_bytes", json_integer((json_int_t)vn));
		json_array_append_new(kc->arr, o);
	} else {
		print_key(k, kn);
		printf("\t%zu bytes\n", vn);
	}
	return 0;
}

static int read_stdin(uint8_t **out, size_t *n)
{
	size_t cap = 4096, len = 0;
	uint8_t *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;
		if (len == cap) {
			uint8_t *nb;
			if (cap >= OFS_MAX_VALUE + 1) {
				free(b);
				return -OFS_ETOOBIG;
			}
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(0, b + len, cap - len);
		if (r < 0) {
			free(b);
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > OFS_MAX_VALUE) {
		free(b);
		return -OFS_ETOOBIG;
	}
	*out = b;
	*n = len;
	return 0;
}

void tool_help(void)
{
	fputs(tool_usage, stdout);
}

int tool_main(const char *data, int argc, char **argv, bool json)
{
	const char *cmd = argc ? argv[0] : NULL;
	bool ro;
	struct store *s = NULL;
	struct ofs_oid oid;
	int rc, ret = 0;

	if (!cmd)
		return tusage("missing command%s", "");
	ro = !strcmp(cmd, "list") || !strcmp(cmd, "keys") || !strcmp(cmd, "get-key");
	if (strcmp(cmd, "list") && (argc < 2 || oid_from_hex(argv[1], &oid)))
		return tusage("%s needs an OID (32 hex digits)", cmd);
	if (!strcmp(cmd, "set-backref") && argc != 4 && argc != 5)
		return tusage("set-backref OID OWNER STRIPE [NAME]%s", "");
	if (!strcmp(cmd, "set-part") && (argc < 4 || argc > 4 + OFS_MAX_REPLICAS))
		return tusage("set-part OID INDEX PART [SID...]: at most 4 SIDs%s", "");
	if ((!strcmp(cmd, "list") && argc != 1) ||
	    ((!strcmp(cmd, "keys") || !strcmp(cmd, "remove") || !strcmp(cmd, "mark-behind")) &&
	     argc != 2) ||
	    ((!strcmp(cmd, "get-key") || !strcmp(cmd, "set-key") || !strcmp(cmd, "rm-key") ||
	      !strcmp(cmd, "set-version")) && argc != 3))
		return tusage("wrong number of arguments for %s", cmd);
	if (strcmp(cmd, "list") && strcmp(cmd, "keys") && strcmp(cmd, "get-key") &&
	    strcmp(cmd, "set-key") && strcmp(cmd, "rm-key") && strcmp(cmd, "set-version") &&
	    strcmp(cmd, "remove") && strcmp(cmd, "set-backref") && strcmp(cmd, "set-part") &&
	    strcmp(cmd, "mark-behind"))
		return tusage("unknown command '%s'", cmd);
	rc = store_open(data, ro, &s);
	if (rc)
		return tfail(data, rc);
	if (!strcmp(cmd, "list")) {
		struct list_ctx l = { .json = json };
		bool more = true, started = false;
		if (json)
			l.arr = json_array();
		while (more && !rc) {
			struct ofs_oid after = l.last;
			l.n = 0;
			rc = store_walk(s, started ? &after : NULL, 1024, list_one, &l, &more);
			started = true;
			if (l.n == 0)
				break;
		}
		if (!rc && json) {
			json_t *o = json_object();
			json_object_set_new(o, "objects", l.arr);
			l.arr = NULL;
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
		}
		json_decref(l.arr);
		if (rc)
			ret = tfail("list", rc);
	} else if (!strcmp(cmd, "keys")) {
		struct keys_ctx kc = { .json = json };
		bool more = true;
		if (json)
			kc.arr = json_array();
		while (more && !rc)
			rc = store_kv_list(s, oid, kc.lastn ? kc.last : NULL, kc.lastn, OFS_MAX_LIST,
					   key_one, &kc, &more);
		if (!rc && json) {
			json_t *o = json_object();
			json_object_set_new(o, "keys", kc.arr);
			kc.arr = NULL;
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
		}
		json_decref(kc.arr);
		if (rc)
			ret = tfail(argv[1], rc);
	} else if (!strcmp(cmd, "get-key")) {
		void *v = NULL;
		size_t vn = 0;
		rc = store_kv_get(s, oid, argv[2], strlen(argv[2]), &v, &vn);
		if (!rc && fwrite(v, 1, vn, stdout) != vn)
			rc = -EIO;
		free(v);
		if (rc)
			ret = tfail(argv[2], rc);
	} else if (!strcmp(cmd, "set-key")) {
		uint8_t *v = NULL;
		size_t vn = 0;
		rc = read_stdin(&v, &vn);
		if (!rc)
			rc = store_tool_set_key(s, oid, argv[2], strlen(argv[2]), v, vn);
		free(v);
		if (rc)
			ret = rc == -EINVAL ? tusage("key or value too long%s", "") : tfail(argv[2], rc);
	} else if (!strcmp(cmd, "rm-key")) {
		rc = store_tool_rm_key(s, oid, argv[2], strlen(argv[2]));
		if (rc)
			ret = tfail(argv[2], rc);
	} else if (!strcmp(cmd, "set-version")) {
		uint64_t n;
		if (parse_uint(argv[2], 0, UINT64_MAX, &n))
			ret = tusage("set-version %s: not a version number", argv[2]);
		else if ((rc = store_tool_set_version(s, oid, n)) != 0)
			ret = tfail(argv[1], rc);
	} else if (!strcmp(cmd, "set-backref")) {
		struct ofs_backref br;
		uint64_t stripe;
		memset(&br, 0, sizeof(br));
		if (oid_from_hex(argv[2], &br.owner) || parse_uint(argv[3], 0, UINT32_MAX, &stripe) ||
		    (argc == 5 && strlen(argv[4]) > OFS_NAME_MAX)) {
			ret = tusage("set-backref OID OWNER STRIPE [NAME]: bad OWNER, STRIPE or NAME%s", "");
		} else {
			br.stripe = (uint32_t)stripe;
			if (argc == 5)
				snprintf(br.name, sizeof(br.name), "%s", argv[4]);
			rc = store_tool_set_backref(s, oid, &br);
			if (rc)
				ret = tfail(argv[1], rc);
		}
	} else if (!strcmp(cmd, "set-part")) {
		struct ofs_oid part;
		struct ofs_sid sids[OFS_MAX_REPLICAS];
		size_t nsids = (size_t)argc - 4;
		uint64_t index;
		bool bad = parse_uint(argv[2], 0, UINT16_MAX, &index) || oid_from_hex(argv[3], &part);
		for (size_t i = 0; i < nsids && !bad; i++)
			bad = sid_from_hex(argv[4 + i], &sids[i]) != 0;
		if (bad) {
			ret = tusage("set-part OID INDEX PART [SID...]: bad INDEX, PART or SID%s", "");
		} else if ((rc = store_tool_set_part(s, oid, (uint32_t)index, part, sids, nsids)) != 0) {
			if (rc == -EINVAL)
				fprintf(stderr, "ofs-server: tool: %s: not a metafile or directory with "
					"part %s\n", argv[1], argv[2]);
			ret = rc == -EINVAL ? EXIT_FAIL : tfail(argv[1], rc);
		}
	} else if (!strcmp(cmd, "mark-behind")) {
		/* as if a primary had told this copy it missed a change */
		struct ofs_attr *a = malloc(sizeof(*a));
		rc = a ? store_getattr(s, oid, a) : -ENOMEM;
		free(a);
		if (!rc)
			rc = store_behind_mark(s, oid, "marked behind by ofs-server tool");
		if (rc)
			ret = tfail(argv[1], rc);
	} else {
		rc = store_remove(s, oid);
		if (rc == -ENOTEMPTY)
			fprintf(stderr, "ofs-server: tool: %s: a dirdata with entries; rm-key them first\n",
				argv[1]);
		if (rc)
			ret = rc == -ENOTEMPTY ? EXIT_FAIL : tfail(argv[1], rc);
	}
	store_close(s);
	return ret;
}
