/*
 * ofs - the data client: mkdir, put, get, ls, stat, rm, rmdir, mv.
 * main() parses arguments and calls libofs; see ofs(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/common.h"
#include "client/ofs.h"
#include "lib/attr_json.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "lib/path.h"
#include "lib/timefmt.h"
#include "lib/tls.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3

static const char usage_text[] =
	"usage: ofs [--cluster HOST:PORT]... [--identity IDDIR | --insecure] COMMAND [ARGS]\n"
	"  mkdir PATH\n"
	"  put LOCAL|- PATH [--replicas N] [--confidence K] [--strip-size BYTES] [--stripes N]\n"
	"  get PATH LOCAL|-\n"
	"  ls [-l] [--json] PATH\n"
	"  stat PATH [--json]\n"
	"  rm PATH\n"
	"  rmdir PATH\n"
	"  mv OLD NEW\n"
	"  chmod MODE PATH           permission bits (octal): the owner's or an admin's\n"
	"  chown UID[:GID] PATH      owner (and group): an admin's\n"
	"  whoami [--json]           the identity this program connects as\n"
	"The cluster is --cluster or OFS_CLUSTER=HOST:PORT[,HOST:PORT...]; the identity\n"
	"(a directory with key.pem, cert.pem and ca.pem, from 'ofs-pbj ca issue') is\n"
	"--identity IDDIR or OFS_IDENTITY=IDDIR; --insecure speaks plaintext to a cluster\n"
	"run --insecure (loopback only). A request the cluster refuses exits 3 with the\n"
	"reason (permission denied, certificate not trusted, ...).\n";

static const struct cli_prog prog = { "ofs", usage_text };

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

/* Report a library error about what; bad input exits 2, the rest 3. */
static int fail(const char *what, int rc)
{
	const char *why = ofs_strerror(rc);

	if (rc == -EEXIST)
		why = "already exists";
	else if (rc == -ENOENT)
		why = "no such file or directory";
	else if (rc == -ENOTEMPTY)
		why = "directory not empty";
	else if (rc == -ENOTDIR)
		why = "not a directory";
	else if (rc == -EISDIR)
		why = "is a directory";
	fprintf(stderr, "ofs: %s: %s\n", what, why);
	if (rc == -EINVAL || rc == -ENAMETOOLONG || rc == -OFS_ENAME || rc == -OFS_ETOOBIG)
		return EXIT_USAGE;
	return EXIT_FAIL;
}

struct opts {
	bool json, longfmt;
	struct ofs_put_opts put;
	int nargs;
	char *args[4];
};

enum { OPT_JSON = 1000, OPT_REPLICAS, OPT_CONFIDENCE, OPT_STRIP, OPT_STRIPES, OPT_HELP };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "replicas", required_argument, NULL, OPT_REPLICAS },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "strip-size", required_argument, NULL, OPT_STRIP },
	{ "stripes", required_argument, NULL, OPT_STRIPES },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Parse a command's options; allowed lists the options it takes. */
static int parse_cmd(int argc, char **argv, const char *allowed, int nargs, struct opts *o)
{
	int c, idx = 0;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "l", long_opts, &idx)) != -1) {
		const char *name = c == 'l' ? "l" : long_opts[idx].name;
		char key[4], opt[32];
		int st;

		if (c == '?')
			return usage("unknown or incomplete option '%s'", argv[optind - 1]);
		if (c == OPT_HELP) {
			fputs(usage_text, stdout);
			exit(0);
		}
		snprintf(opt, sizeof(opt), "--%s", name);
		if (optarg && !cli_value_ok(&prog, opt, optarg, 0, &st)) {
			if (st == 0)
				exit(0);
			return st;
		}
		snprintf(key, sizeof(key), "%c", c == 'l' ? 'l' : 'a' + (c - OPT_JSON));
		if (!strchr(allowed, key[0]))
			return usage("option '%s' does not apply to this command", name);
		switch (c) {
		case 'l': o->longfmt = true; break;
		case OPT_JSON: o->json = true; break;
		case OPT_REPLICAS:
			if (parse_uint(optarg, 1, 4, &v))
				return usage("--replicas %s: must be 1 to 4", optarg);
			o->put.replicas = (uint8_t)v;
			break;
		case OPT_CONFIDENCE:
			if (parse_uint(optarg, 1, 4, &v))
				return usage("--confidence %s: must be 1 to 4", optarg);
			o->put.confidence = (uint8_t)v;
			break;
		case OPT_STRIP:
			if (parse_size(optarg, &v) || v < OFS_STRIP_MIN || v > OFS_STRIP_MAX)
				return usage("--strip-size %s: must be 4K to 4M", optarg);
			o->put.strip_size = (uint32_t)v;
			break;
		case OPT_STRIPES:
			if (parse_uint(optarg, 1, OFS_MAX_STRIPES, &v))
				return usage("--stripes %s: must be 1 to 64", optarg);
			o->put.stripes = (uint16_t)v;
			break;
		default:
			break;
		}
	}
	if (argc - optind != nargs) {
		char what[64];
		snprintf(what, sizeof(what), "%d", nargs);
		return usage(argc - optind < nargs ? "missing arguments (this command takes %s)" :
			     "too many arguments (this command takes %s)", what);
	}
	for (int i = 0; i < nargs; i++) {
		int st;
		/* ("-": standard input or output, where a LOCAL file goes) */
		if (!cli_value_ok(&prog, argv[0], argv[optind + i], CLI_VALUE_DASH, &st)) {
			if (st == 0)
				exit(0);
			return st;
		}
		o->args[i] = argv[optind + i];
	}
	o->nargs = nargs;
	if (o->put.confidence && o->put.confidence > (o->put.replicas ? o->put.replicas : 1))
		return usage("--confidence %s: cannot exceed --replicas", "K");
	return 0;
}

static int print_json(json_t *o)
{
	int rc = json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(o);
	fputc('\n', stdout);
	return rc < 0 ? EXIT_FAIL : 0;
}

static const char *kind(uint8_t type)
{
	return type == OFS_OBJ_DIRECTORY ? "directory" : "file";
}

/* 0, or a message and EXIT_USAGE when s is not a usable cluster path. */
static int check_path(const char *s)
{
	struct ofs_path *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return EXIT_FAIL;
	rc = path_parse(s, p);
	free(p);
	switch (rc) {
	case 0:
		return 0;
	case -EINVAL:
		fprintf(stderr, "ofs: %s: not an absolute path (paths in the cluster start with /)\n", s);
		break;
	case -ENAMETOOLONG:
		fprintf(stderr, "ofs: %s: path or name too long (4096 and 255 bytes at most)\n", s);
		break;
	default:
		fprintf(stderr, "ofs: %s: %s\n", s, ofs_strerror(rc));
		break;
	}
	return EXIT_USAGE;
}

/* ---- commands ---------------------------------------------------------- */

static int cmd_mkdir(struct ofs_client *c, struct opts *o)
{
	int rc = ofs_mkdir(c, o->args[0]);

	return rc ? fail(o->args[0], rc) : 0;
}

static int cmd_put(struct ofs_client *c, struct opts *o)
{
	const char *local = o->args[0];
	int fd = strcmp(local, "-") == 0 ? 0 : open(local, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int rc;

	if (fd < 0)
		return fail(local, -errno);
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(local, -EISDIR);
	}
	rc = ofs_put_fd(c, fd, o->args[1], &o->put);
	if (fd)
		close(fd);
	return rc ? fail(o->args[1], rc) : 0;
}

static int cmd_get(struct ofs_client *c, struct opts *o)
{
	const char *local = o->args[1];
	char tmp[PATH_MAX + 32], real[PATH_MAX];
	struct stat st;
	int fd, rc;

	if (strcmp(local, "-") == 0) {
		rc = ofs_get_fd(c, o->args[0], 1, NULL);
		return rc ? fail(o->args[0], rc) : 0;
	}
	/* Something that is not a file (/dev/null, a FIFO, a terminal) is
	 * written into as it is: renamed over, it would be replaced. */
	if (stat(local, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return fail(local, -EISDIR);
		fd = open(local, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return fail(local, -errno);
		rc = ofs_get_fd(c, o->args[0], fd, NULL);
		if (close(fd) < 0 && !rc)
			return fail(local, -errno);
		return rc ? fail(o->args[0], rc) : 0;
	}
	/* A file is written under a temporary name beside it and renamed:
	 * LOCAL appears whole or not at all (through a symbolic link, the
	 * file it names is replaced, not the link). */
	if (realpath(local, real))
		local = real;
	if (snprintf(tmp, sizeof(tmp), "%s.ofs-part-%ld", local, (long)getpid()) >= (int)sizeof(tmp))
		return fail(local, -ENAMETOOLONG);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(local, -errno);
	rc = ofs_get_fd(c, o->args[0], fd, NULL);
	if (close(fd) < 0 && !rc) {
		unlink(tmp);
		return fail(local, -errno);
	}
	if (rc) {
		unlink(tmp);
		return fail(o->args[0], rc);
	}
	if (rename(tmp, local) < 0) {
		rc = -errno;
		unlink(tmp);
		return fail(local, rc);
	}
	return 0;
}

#define LS_BATCH 1024               /* entries whose attributes are asked at once */

struct ls_ctx {
	struct ofs_client *c;
	struct opts *o;
	json_t *entries;
	size_t n;                        /* entries waiting for their attributes */
	char (*names)[OFS_NAME_MAX + 1];
	struct ofs_dirent *ents;
};

/* One entry, with its attributes a (NULL: removed since the listing -
 * what the entry says is shown). */
/* mode's bits as ls -l shows them, after the type letter: "rwxr-sr-t". */
static void mode_string(char type, uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = type;
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (1u << (8 - i)) ? rwx[i] : '-';
	if (mode & 04000)
		out[3] = mode & 0100 ? 's' : 'S';
	if (mode & 02000)
		out[6] = mode & 0010 ? 's' : 'S';
	if (mode & 01000)
		out[9] = mode & 0001 ? 't' : 'T';
	out[10] = '\0';
}

/* The mode as chmod takes it: "0644". */
static void mode_octal(uint32_t mode, char out[8])
{
	snprintf(out, 8, "%04o", mode & 07777);
}

static void ls_print(struct ls_ctx *lc, const char *name, const struct ofs_dirent *d,
		     const struct ofs_attr *a)
{
	char hex[OFS_OID_HEX], t[OFS_TIME_LEN], perm[11], oct[8];
	uint64_t size = a ? a->size : 0;
	char type = d->type == OFS_OBJ_DIRECTORY ? 'd' : '-';

	time_format(a ? a->mtime_ns : 0, t);
	oid_to_hex(d->handle.oid, hex);
	mode_string(type, a ? a->mode : 0, perm);
	mode_octal(a ? a->mode : 0, oct);
	if (lc->o->json) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(name));
		json_object_set_new(e, "type", json_string(kind(d->type)));
		json_object_set_new(e, "oid", json_string(hex));
		json_object_set_new(e, "size", json_integer((json_int_t)size));
		json_object_set_new(e, "mtime", json_string(t));
		if (a) {
			json_object_set_new(e, "mode", json_integer(a->mode & 07777));
			json_object_set_new(e, "mode_octal", json_string(oct));
			json_object_set_new(e, "uid", json_integer(a->uid));
			json_object_set_new(e, "gid", json_integer(a->gid));
		}
		json_array_append_new(lc->entries, e);
	} else if (a) {
		printf("%s %6u %6u %12llu %s %s%s\n", perm, a->uid, a->gid,
		       (unsigned long long)size, t, name, type == 'd' ? "/" : "");
	} else {                         /* (its attributes could not be read) */
		printf("%c?????????      ?      ? %12s %s %s%s\n", type, "?", t, name,
		       type == 'd' ? "/" : "");
	}
}

/* The waiting entries' attributes, asked together (readdir-plus), then
 * the entries in order. */
static int ls_flush(struct ls_ctx *lc)
{
	struct ofs_handle *hs = malloc((lc->n ? lc->n : 1) * sizeof(*hs));
	struct ofs_attr *a = malloc((lc->n ? lc->n : 1) * sizeof(*a));
	int *rcs = malloc((lc->n ? lc->n : 1) * sizeof(*rcs));
	int rc = hs && a && rcs ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < lc->n; i++)
		hs[i] = lc->ents[i].handle;
	if (!rc)
		rc = ofs_getattr_many(lc->c, hs, lc->n, a, rcs);
	for (size_t i = 0; !rc && i < lc->n; i++)
		ls_print(lc, lc->names[i], &lc->ents[i], rcs[i] == 0 ? &a[i] : NULL);
	lc->n = 0;
	free(hs);
	free(a);
	free(rcs);
	return rc;
}

static int ls_entry(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct ls_ctx *lc = arg;

	if (!lc->o->json && !lc->o->longfmt) {
		printf("%s%s\n", name, d->type == OFS_OBJ_DIRECTORY ? "/" : "");
		return 0;
	}
	if (!lc->names) {
		lc->names = malloc(LS_BATCH * sizeof(*lc->names));
		lc->ents = malloc(LS_BATCH * sizeof(*lc->ents));
		if (!lc->names || !lc->ents)
			return -ENOMEM;
	}
	snprintf(lc->names[lc->n], sizeof(lc->names[0]), "%s", name);
	lc->ents[lc->n++] = *d;
	return lc->n == LS_BATCH ? ls_flush(lc) : 0;
}

static int cmd_ls(struct ofs_client *c, struct opts *o)
{
	struct ls_ctx lc = { .c = c, .o = o };
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_handle h;
	int rc;

	if (!a)
		return fail(o->args[0], -ENOMEM);
	rc = ofs_stat(c, o->args[0], a, &h);
	if (rc) {
		free(a);
		return fail(o->args[0], rc);
	}
	if (o->json)
		lc.entries = json_array();
	if (a->type == OFS_OBJ_DIRECTORY) {
		rc = ofs_readdir(c, o->args[0], ls_entry, &lc);
	} else {
		struct ofs_dirent d = { .type = a->type, .handle = h };
		const char *base = strrchr(o->args[0], '/');
		rc = ls_entry(base ? base + 1 : o->args[0], &d, &lc);
	}
	if (!rc && lc.n)
		rc = ls_flush(&lc);
	free(lc.names);
	free(lc.ents);
	free(a);
	if (rc) {
		json_decref(lc.entries);
		return fail(o->args[0], rc);
	}
	if (o->json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "path", json_string(o->args[0]));
		json_object_set_new(doc, "entries", lc.entries);
		return print_json(doc);
	}
	return 0;
}

static int cmd_stat(struct ofs_client *c, struct opts *o)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_handle h;
	char hex[OFS_OID_HEX], t[OFS_TIME_LEN];
	json_t *doc;
	int rc;

	if (!a)
		return fail(o->args[0], -ENOMEM);
	rc = ofs_stat(c, o->args[0], a, &h);
	if (rc) {
		free(a);
		return fail(o->args[0], rc);
	}
	doc = json_object();
	oid_to_hex(h.oid, hex);
	json_object_set_new(doc, "path", json_string(o->args[0]));
	json_object_set_new(doc, "oid", json_string(hex));
	json_object_set_new(doc, "sids", attr_json_sids(h.nsids, h.sids));
	json_object_set_new(doc, "type", json_string(kind(a->type)));
	json_object_set_new(doc, "size", json_integer((json_int_t)a->size));
	json_object_set_new(doc, "version", json_integer((json_int_t)a->version));
	{
		char oct[8];
		mode_octal(a->mode, oct);
		json_object_set_new(doc, "mode", json_integer(a->mode));
		json_object_set_new(doc, "mode_octal", json_string(oct));
	}
	json_object_set_new(doc, "uid", json_integer(a->uid));
	json_object_set_new(doc, "gid", json_integer(a->gid));
	time_format(a->mtime_ns, t);
	json_object_set_new(doc, "mtime", json_string(t));
	attr_json_layout(doc, a);
	free(a);
	if (o->json)
		return print_json(doc);
	{
		const char *key;
		json_t *v;
		json_object_foreach(doc, key, v) {
			if (!strcmp(key, "mode"))
				continue;            /* (as chmod takes it: mode_octal) */
			if (!strcmp(key, "mode_octal"))
				printf("%-11s %s\n", "mode", json_string_value(v));
			else if (json_is_string(v))
				printf("%-11s %s\n", key, json_string_value(v));
			else if (json_is_integer(v))
				printf("%-11s %lld\n", key, (long long)json_integer_value(v));
			else if (json_is_array(v) && !strcmp(key, "sids")) {
				size_t i;
				json_t *e;
				printf("%-11s", key);
				json_array_foreach(v, i, e)
					printf(" %s", json_string_value(e));
				printf("\n");
			} else if (json_is_array(v)) {
				size_t i;
				json_t *e;
				json_array_foreach(v, i, e) {
					json_t *s = json_object_get(e, "sids");
					printf("%-11s %s on", i == 0 ? key : "",
					       json_string_value(json_object_get(e, "oid")));
					size_t j;
					json_t *sid;
					json_array_foreach(s, j, sid)
						printf(" %s", json_string_value(sid));
					printf("\n");
				}
			}
		}
	}
	json_decref(doc);
	return 0;
}

static int cmd_rm(struct ofs_client *c, struct opts *o)
{
	int rc = ofs_unlink(c, o->args[0]);

	return rc ? fail(o->args[0], rc) : 0;
}

static int cmd_rmdir(struct ofs_client *c, struct opts *o)
{
	int rc = ofs_rmdir(c, o->args[0]);

	if (rc == -EBUSY) {
		fprintf(stderr, "ofs: %s: the root directory cannot be removed\n", o->args[0]);
		return EXIT_FAIL;
	}
	return rc ? fail(o->args[0], rc) : 0;
}

/* "0755", "640": octal, at most 07777. */
static int parse_mode(const char *s, uint32_t *mode)
{
	uint32_t m = 0;

	if (!*s || strlen(s) > 5)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return -EINVAL;
		m = m * 8 + (uint32_t)(*s - '0');
	}
	if (m > 07777)
		return -EINVAL;
	*mode = m;
	return 0;
}

static int cmd_chmod(struct ofs_client *c, struct opts *o)
{
	uint32_t mode;
	int rc;

	if (parse_mode(o->args[0], &mode))
		return usage("chmod '%s': a mode is octal, 0 to 7777", o->args[0]);
	rc = ofs_chmod(c, o->args[1], mode);
	return rc ? fail(o->args[1], rc) : 0;
}

static int cmd_chown(struct ofs_client *c, struct opts *o)
{
	char *colon = strchr(o->args[0], ':');
	uint64_t uid, gid = 0;
	int rc;

	if (colon)
		*colon = '\0';
	if (parse_uint(o->args[0], 0, UINT32_MAX - 1, &uid) ||
	    (colon && parse_uint(colon + 1, 0, UINT32_MAX - 1, &gid)))
		return usage("chown: the owner is UID[:GID], numbers from 0 to 4294967294%s", "");
	rc = ofs_chown(c, o->args[1], (uint32_t)uid, (uint32_t)gid, colon == NULL);
	return rc ? fail(o->args[1], rc) : 0;
}

static int cmd_mv(struct ofs_client *c, struct opts *o)
{
	int rc = ofs_rename(c, o->args[0], o->args[1]);

	if (rc == -EINVAL) {
		fprintf(stderr, "ofs: %s: cannot move a directory into itself\n", o->args[0]);
		return EXIT_USAGE;
	}
	return rc ? fail(o->args[0], rc) : 0;
}

struct command {
	const char *name;
	const char *allowed;     /* option keys: l=-l a=--json b..e=put options */
	int nargs;
	unsigned paths;          /* bit i: argument i is a path in the cluster */
	int (*run)(struct ofs_client *c, struct opts *o);
};

static const struct command commands[] = {
	{ "mkdir", "", 1, 1, cmd_mkdir },
	{ "put", "bcde", 2, 2, cmd_put },
	{ "get", "", 2, 1, cmd_get },
	{ "ls", "la", 1, 1, cmd_ls },
	{ "stat", "a", 1, 1, cmd_stat },
	{ "rm", "", 1, 1, cmd_rm },
	{ "rmdir", "", 1, 1, cmd_rmdir },
	{ "mv", "", 2, 3, cmd_mv },
	{ "chmod", "", 2, 2, cmd_chmod },
	{ "chown", "", 2, 2, cmd_chown },
};

/* whoami [--json]: what this program's identity says (its certificate's
 * identity is all a server believes). */
static int cmd_whoami(struct cli_line *l)
{
	bool json = l->nrest == 3 && !strcmp(l->rest[2], "--json");
	const struct ident *id;
	char fpr[2 * IDENT_FPR_LEN + 1], desc[160];
	int rc;

	if (l->nrest > 3 || (l->nrest == 3 && !json))
		return usage("whoami takes only --json%s", "");
	rc = cli_line_security(l, "ofs", true);
	if (rc)
		return rc;
	if (!l->tls) {
		printf(json ? "{\"role\":\"none\",\"insecure\":true}\n" : "nobody (--insecure)\n");
		return 0;
	}
	id = tls_conf_self(l->tls);
	for (int i = 0; i < IDENT_FPR_LEN; i++)
		snprintf(fpr + 2 * i, 3, "%02x", id->fpr[i]);
	if (!json) {
		ident_describe(id, desc, sizeof(desc));
		printf("%s\n", desc);
		return 0;
	}
	{
		json_t *o = json_pack("{s:s, s:s}", "role", ident_role_name(id->role), "fingerprint", fpr);
		json_t *gids = json_array();
		char hex[OFS_OID_HEX];
		if (!o || !gids) {
			json_decref(o);
			json_decref(gids);
			return EXIT_FAIL;
		}
		if (id->role == IDENT_SERVER) {
			sid_to_hex(id->sid, hex);
			json_object_set_new(o, "sid", json_string(hex));
		} else {
			json_object_set_new(o, "name", json_string(id->name));
		}
		if (id->role == IDENT_USER) {
			json_object_set_new(o, "uid", json_integer(id->uid));
			for (uint8_t i = 0; i < id->ngids; i++)
				json_array_append_new(gids, json_integer(id->gids[i]));
			json_object_set_new(o, "gids", gids);
		} else {
			json_decref(gids);
		}
		rc = json_dumpf(o, stdout, JSON_COMPACT) ? EXIT_FAIL : 0;
		printf("\n");
		json_decref(o);
		return rc;
	}
}

int main(int argc, char **argv)
{
	struct cli_line l;
	const char *why = NULL;
	const struct command *cmd = NULL;
	struct ofs_client *c = NULL;
	struct opts o;
	int rc = cli_line_parse(argc, argv, 0, &l, &why);

	if (rc) {
		cli_line_free(&l);
		return rc == -EINVAL ? usage("%s", why) : EXIT_FAIL;
	}
	if (cli_line_help(&l, "ofs", usage_text)) {
		cli_line_free(&l);
		return 0;
	}
	if (!strcmp(l.rest[1], "whoami")) {
		rc = cmd_whoami(&l);
		cli_line_free(&l);
		return rc;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(l.rest[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		rc = usage("unknown command '%s'", l.rest[1]);
		cli_line_free(&l);
		return rc;
	}
	rc = parse_cmd(l.nrest - 1, l.rest + 1, cmd->allowed, cmd->nargs, &o);
	if (rc)
		goto out;
	/* Bad paths are the user's to fix: say so before any network. */
	for (int i = 0; i < cmd->nargs; i++) {
		if (cmd->paths & (1u << i)) {
			rc = check_path(o.args[i]);
			if (rc)
				goto out;
		}
	}
	rc = cli_line_cluster(&l);
	if (rc) {
		rc = rc == -ENOENT ? usage("no cluster: give --cluster HOST:PORT or set OFS_CLUSTER%s", "")
		   : rc == -EINVAL ? usage("%s", l.why) : EXIT_FAIL;
		goto out;
	}
	rc = cli_line_security(&l, "ofs", true);
	if (rc)
		goto out;
	rc = ofs_client_open(l.cluster, l.ncluster, &c);
	if (rc == -EINVAL) {
		rc = usage("bad cluster address (want HOST:PORT)%s", "");
		goto out;
	}
	if (rc) {
		fprintf(stderr, "ofs: cannot reach the cluster at %s%s: %s\n", l.cluster[0],
			l.ncluster > 1 ? " (or the others given)" : "", ofs_strerror(rc));
		rc = EXIT_FAIL;
		goto out;
	}
#ifndef OFS_NO_TEST_HOOKS
	ofs_client_set_fault(c, getenv("OFS_FAULT"));
	ofs_client_set_pause_dir(c, getenv("OFS_FAULT_DIR"));
#endif
	rc = cmd->run(c, &o);
#ifndef OFS_NO_TEST_HOOKS
	if (getenv("OFS_COUNT_REQUESTS")) {
		/* (tests: how many requests of each kind the command sent) */
		fprintf(stderr, "ofs: requests sent:");
		for (uint16_t op = 1; op < OFS_OP_MAX; op++)
			if (ofs_client_sent(c, op))
				fprintf(stderr, " %s=%llu", ofs_op_name(op),
					(unsigned long long)ofs_client_sent(c, op));
		fputc('\n', stderr);
	}
#endif
out:
	ofs_client_close(c);
	cli_line_free(&l);
	if (fflush(stdout) != 0 && rc == 0)
		rc = EXIT_FAIL;
	return rc;
}
