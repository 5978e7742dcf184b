/*
 * tool.c - `ofs-server tool`: the low-level object tool (ofs-server(8)), for
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
#include "server/tool.h"
#include "store/store.h"

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

/* One command of the tool: argv[0] its name, argv[1] the OID (parsed
 * into oid, but for list); returns the exit status. */
struct tool_call {
	struct store *s;
	struct ofs_oid oid;
	int argc;
	char **argv;
	bool json;
};

/* Print {"KEY": arr} (arr consumed). */
static void print_json_list(const char *key, json_t *arr)
{
	json_t *o = json_object();

	json_object_set_new(o, key, arr);
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

static int t_list(struct tool_call *t)
{
	struct list_ctx l = { .json = t->json };
	bool more = true, started = false;
	int rc = 0;

	if (t->json)
		l.arr = json_array();
	while (more && !rc) {
		struct ofs_oid after = l.last;
		l.n = 0;
		rc = store_walk(t->s, started ? &after : NULL, 1024, list_one, &l, &more);
		started = true;
		if (l.n == 0)
			break;
	}
	if (!rc && t->json) {
		print_json_list("objects", l.arr);
		l.arr = NULL;
	}
	json_decref(l.arr);
	return rc ? tfail("list", rc) : 0;
}

static int t_keys(struct tool_call *t)
{
	struct keys_ctx kc = { .json = t->json };
	bool more = true;
	int rc = 0;

	if (t->json)
		kc.arr = json_array();
	while (more && !rc)
		rc = store_kv_list(t->s, t->oid, kc.lastn ? kc.last : NULL, kc.lastn, OFS_MAX_LIST,
				   key_one, &kc, &more);
	if (!rc && t->json) {
		print_json_list("keys", kc.arr);
		kc.arr = NULL;
	}
	json_decref(kc.arr);
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_get_key(struct tool_call *t)
{
	void *v = NULL;
	size_t vn = 0;
	int rc = store_kv_get(t->s, t->oid, t->argv[2], strlen(t->argv[2]), &v, &vn);

	if (!rc && fwrite(v, 1, vn, stdout) != vn)
		rc = -EIO;
	free(v);
	return rc ? tfail(t->argv[2], rc) : 0;
}

static int t_set_key(struct tool_call *t)
{
	uint8_t *v = NULL;
	size_t vn = 0;
	int rc = read_stdin(&v, &vn);

	if (!rc)
		rc = store_tool_set_key(t->s, t->oid, t->argv[2], strlen(t->argv[2]), v, vn);
	free(v);
	if (rc)
		return rc == -EINVAL ? tusage("key or value too long%s", "") : tfail(t->argv[2], rc);
	return 0;
}

static int t_rm_key(struct tool_call *t)
{
	int rc = store_tool_rm_key(t->s, t->oid, t->argv[2], strlen(t->argv[2]));

	return rc ? tfail(t->argv[2], rc) : 0;
}

static int t_set_version(struct tool_call *t)
{
	uint64_t n;
	int rc;

	if (parse_uint(t->argv[2], 0, UINT64_MAX, &n))
		return tusage("set-version %s: not a version number", t->argv[2]);
	rc = store_tool_set_version(t->s, t->oid, n);
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_set_backref(struct tool_call *t)
{
	struct ofs_backref br;
	uint64_t stripe;
	int rc;

	memset(&br, 0, sizeof(br));
	if (oid_from_hex(t->argv[2], &br.owner) || parse_uint(t->argv[3], 0, UINT32_MAX, &stripe) ||
	    (t->argc == 5 && strlen(t->argv[4]) > OFS_NAME_MAX))
		return tusage("set-backref OID OWNER STRIPE [NAME]: bad OWNER, STRIPE or NAME%s", "");
	br.stripe = (uint32_t)stripe;
	if (t->argc == 5)
		snprintf(br.name, sizeof(br.name), "%s", t->argv[4]);
	rc = store_tool_set_backref(t->s, t->oid, &br);
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_set_part(struct tool_call *t)
{
	struct ofs_oid part;
	struct ofs_sid sids[OFS_MAX_REPLICAS];
	size_t nsids = (size_t)t->argc - 4;
	uint64_t index;
	bool bad = parse_uint(t->argv[2], 0, UINT16_MAX, &index) || oid_from_hex(t->argv[3], &part);
	int rc;

	for (size_t i = 0; i < nsids && !bad; i++)
		bad = sid_from_hex(t->argv[4 + i], &sids[i]) != 0;
	if (bad)
		return tusage("set-part OID INDEX PART [SID...]: bad INDEX, PART or SID%s", "");
	rc = store_tool_set_part(t->s, t->oid, (uint32_t)index, part, sids, nsids);
	if (rc == -EINVAL) {
		fprintf(stderr, "ofs-server: tool: %s: not a metafile or directory with part %s\n",
			t->argv[1], t->argv[2]);
		return EXIT_FAIL;
	}
	return rc ? tfail(t->argv[1], rc) : 0;
}

/* As if a primary had told this copy it missed a change. */
static int t_mark_behind(struct tool_call *t)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc = a ? store_getattr(t->s, t->oid, a) : -ENOMEM;

	free(a);
	if (!rc)
		rc = store_behind_mark(t->s, t->oid, "marked behind by ofs-server tool");
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_remove(struct tool_call *t)
{
	int rc = store_remove(t->s, t->oid);

	if (rc == -ENOTEMPTY) {
		fprintf(stderr, "ofs-server: tool: %s: a dirdata with entries; rm-key them first\n",
			t->argv[1]);
		return EXIT_FAIL;
	}
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_flip_byte(struct tool_call *t)
{
	uint64_t off;
	int rc;

	if (parse_uint(t->argv[2], 0, UINT64_MAX, &off))
		return tusage("flip-byte %s: not a byte offset", t->argv[2]);
	rc = store_tool_flip_byte(t->s, t->oid, off);
	if (rc == -ERANGE) {
		fprintf(stderr, "ofs-server: tool: %s: offset %s is past its bytes\n", t->argv[1],
			t->argv[2]);
		return EXIT_FAIL;
	}
	return rc ? tfail(t->argv[1], rc) : 0;
}

static int t_lose_bytes(struct tool_call *t)
{
	int rc = store_tool_lose_bytes(t->s, t->oid);

	return rc ? tfail(t->argv[1], rc) : 0;
}

/* The commands: name, arguments with the command (least, most), whether
 * the store is opened read-only, and a usage line for a wrong count. */
static const struct tool_cmd {
	const char *name;
	int min, max;
	bool ro;
	int (*fn)(struct tool_call *t);
	const char *usage;
} tool_cmds[] = {
	{ "list", 1, 1, true, t_list, NULL },
	{ "keys", 2, 2, true, t_keys, NULL },
	{ "get-key", 3, 3, true, t_get_key, NULL },
	{ "set-key", 3, 3, false, t_set_key, NULL },
	{ "rm-key", 3, 3, false, t_rm_key, NULL },
	{ "set-version", 3, 3, false, t_set_version, NULL },
	{ "remove", 2, 2, false, t_remove, NULL },
	{ "set-backref", 4, 5, false, t_set_backref, "set-backref OID OWNER STRIPE [NAME]" },
	{ "set-part", 4, 4 + OFS_MAX_REPLICAS, false, t_set_part,
	  "set-part OID INDEX PART [SID...]: at most 4 SIDs" },
	{ "mark-behind", 2, 2, false, t_mark_behind, NULL },
	{ "flip-byte", 3, 3, false, t_flip_byte, NULL },
	{ "lose-bytes", 2, 2, false, t_lose_bytes, NULL },
};

int tool_main(const char *data, int argc, char **argv, bool json)
{
	const struct tool_cmd *c = NULL;
	struct tool_call t = { .argc = argc, .argv = argv, .json = json };
	char why[2 * 4096 + 256];
	int rc, ret;

	if (argc == 0)
		return tusage("missing command%s", "");
	for (size_t i = 0; i < sizeof(tool_cmds) / sizeof(tool_cmds[0]); i++)
		if (!strcmp(argv[0], tool_cmds[i].name))
			c = &tool_cmds[i];
	if (c && c->fn != t_list && (argc < 2 || oid_from_hex(argv[1], &t.oid)))
		return tusage("%s needs an OID (32 hex digits)", argv[0]);
	if (c && (argc < c->min || argc > c->max))
		return c->usage ? tusage("%s", c->usage) : tusage("wrong number of arguments for %s",
								   argv[0]);
	if (!c)
		return tusage("unknown command '%s'", argv[0]);
	rc = store_open(data, c->ro, &t.s);
	if (rc == -EPERM && store_check_modes(data, why, sizeof(why)) == -EPERM) {
		fprintf(stderr, "ofs-server: tool: %s\n", why);
		return EXIT_USAGE;
	}
	if (rc)
		return tfail(data, rc);
	ret = c->fn(&t);
	store_close(t.s);
	return ret;
}
