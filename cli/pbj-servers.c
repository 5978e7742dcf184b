/* pbj-servers.c - ofs-pbj's calls to the servers (see pbj-servers.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/pbj-servers.h"
#include "lib/conn.h"
#include "lib/ofs_error.h"
#include "pbj/plan.h"
#include "pbj/runner.h"
#include "pbj/servers.h"

#define EXIT_NOTOK 1
#define EXIT_USAGE 2
#define EXIT_FAIL 3
#define SHOWN 10                  /* short objects named in plain output */

/* Why arg names no one server (pbj_resolve_sid's rc), on stderr. */
static void say_not_named(const char *what, const char *arg, int rc)
{
	fprintf(stderr, "ofs-pbj: %s %s: %s\n", what, arg,
		rc == -EINVAL ? "not a SID (32 hex digits, or a unique prefix of 4 or more)" :
		rc == -EEXIST ? "prefix matches several servers" : "no such server");
}

int pbj_drain_prepare(const char *const *cluster, size_t ncluster, const char *sidarg,
		      bool dry_run, char sidhex[OFS_OID_HEX])
{
	struct pbj_drain_check c;

	pbj_drain_check(cluster, ncluster, sidarg, dry_run, &c);
	sid_to_hex(c.sid, sidhex);
	switch (c.verdict) {
	case PBJ_DRAIN_NO_TABLE:
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(c.rc));
		return EXIT_FAIL;
	case PBJ_DRAIN_BAD_SERVER:
		say_not_named("--server", sidarg, c.rc);
		return EXIT_USAGE;
	case PBJ_DRAIN_OUT:
		fprintf(stderr, "ofs-pbj: drain %s: the server is out of service already; "
			"`ofs-pbj server set %s --state in` returns it\n", sidhex, sidhex);
		return EXIT_USAGE;
	case PBJ_DRAIN_SILENT:
		fprintf(stderr, "ofs-pbj: drain %s: the server does not answer (%s); a drain "
			"copies from it, so it must run\n", sidhex, ofs_strerror(c.rc));
		return EXIT_FAIL;
	default:
		break;
	}
	fprintf(stderr, "ofs-pbj: drain %s: %llu objects, %llu bytes of file data; %zu other "
		"server%s in service and answering (%zu rack%s), %llu bytes free there\n", sidhex,
		(unsigned long long)c.objects, (unsigned long long)c.bytes, c.others,
		c.others == 1 ? "" : "s", c.racks, c.racks == 1 ? "" : "s",
		(unsigned long long)c.avail);
	switch (c.verdict) {
	case PBJ_DRAIN_TOO_FEW:
		fprintf(stderr, "ofs-pbj: drain %s refused: some of its objects have %u copies, and "
			"only %zu other server%s in service can hold them; add a server first\n",
			sidhex, c.max_copies, c.others, c.others == 1 ? "" : "s");
		return EXIT_USAGE;
	case PBJ_DRAIN_NO_ROOM:
		fprintf(stderr, "ofs-pbj: drain %s refused: it holds %llu bytes and the servers in "
			"service besides it have %llu bytes free (a drain leaves 5%% spare)\n", sidhex,
			(unsigned long long)c.bytes, (unsigned long long)c.avail);
		return EXIT_USAGE;
	case PBJ_DRAIN_MARK_FAILED:
		fprintf(stderr, "ofs-pbj: drain %s: marking it draining failed: %s\n", sidhex,
			ofs_strerror(c.rc));
		return EXIT_FAIL;
	default:
		return 0;
	}
}

/* ok-to-stop's answer as JSON, on stdout. */
static void print_stop_json(const char *hex, const struct ofs_stop_reply *sr)
{
	json_t *doc = json_object(), *arr = json_array();
	char *text;

	json_object_set_new(doc, "sid", json_string(hex));
	json_object_set_new(doc, "ok", json_boolean(sr->nshort == 0));
	json_object_set_new(doc, "objects", json_integer((json_int_t)sr->objects));
	json_object_set_new(doc, "short", json_integer((json_int_t)sr->nshort));
	for (uint32_t i = 0; i < sr->n; i++) {
		char oh[OFS_OID_HEX];
		json_t *o = json_object();
		oid_to_hex(sr->list[i].oid, oh);
		json_object_set_new(o, "oid", json_string(oh));
		json_object_set_new(o, "good_elsewhere", json_integer(sr->list[i].good));
		json_object_set_new(o, "confidence", json_integer(sr->list[i].need));
		json_array_append_new(arr, o);
	}
	json_object_set_new(doc, "first", arr);
	text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(doc);
}

/* ok-to-stop's answer in words, on stdout. */
static void print_stop_text(const char *hex, const struct ofs_stop_reply *sr)
{
	if (sr->nshort == 0) {
		printf("ok to stop %s: each of the %llu objects it holds has at least its write "
		       "confidence of good copies elsewhere\n", hex, (unsigned long long)sr->objects);
		return;
	}
	printf("not ok to stop %s: %llu of the %llu objects it holds would be left with fewer "
	       "good copies than their write confidence:\n", hex,
	       (unsigned long long)sr->nshort, (unsigned long long)sr->objects);
	for (uint32_t i = 0; i < sr->n && i < SHOWN; i++) {
		char oh[OFS_OID_HEX];
		oid_to_hex(sr->list[i].oid, oh);
		printf("  %s  %u good cop%s elsewhere, write confidence %u\n", oh,
		       sr->list[i].good, sr->list[i].good == 1 ? "y" : "ies", sr->list[i].need);
	}
	if (sr->nshort > SHOWN)
		printf("  (and %llu more; --json names the first %u)\n",
		       (unsigned long long)(sr->nshort - SHOWN), (unsigned)OFS_STOP_LIST_MAX);
}

int pbj_ok_to_stop(const char *const *cluster, size_t ncluster, int argc, char **argv, bool json)
{
	struct pbj_stop_check *c;
	char hex[OFS_OID_HEX];
	int ret = 0;

	if (argc != 1) {
		fprintf(stderr, "ofs-pbj: ok-to-stop takes one SID (see ofs-pbj --help)\n");
		return EXIT_USAGE;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		fprintf(stderr, "ofs-pbj: ok-to-stop: %s\n", ofs_strerror(-ENOMEM));
		return EXIT_FAIL;
	}
	pbj_stop_check(cluster, ncluster, argv[0], c);
	sid_to_hex(c->sid, hex);
	switch (c->verdict) {
	case PBJ_STOP_NO_TABLE:
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(c->rc));
		ret = EXIT_FAIL;
		break;
	case PBJ_STOP_BAD_SERVER:
		say_not_named("ok-to-stop", argv[0], c->rc);
		ret = EXIT_USAGE;
		break;
	case PBJ_STOP_REFUSED:
		/* Refused (who we are, or what we asked): say so, no answer. */
		fprintf(stderr, "ofs-pbj: ok-to-stop %s: %s\n", hex, ofs_strerror(c->rc));
		ret = EXIT_FAIL;
		break;
	case PBJ_STOP_SILENT:
		/* Not answering: what it holds cannot be known, so "no". */
		if (json)
			printf("{\"sid\": \"%s\", \"ok\": false, \"error\": \"%s\"}\n", hex,
			       ofs_strerror(c->rc));
		else
			printf("not known whether %s can stop: it does not answer (%s)\n", hex,
			       ofs_strerror(c->rc));
		ret = c->rc == -ENOMEM ? EXIT_FAIL : EXIT_NOTOK;
		break;
	default:
		ret = c->reply.nshort ? EXIT_NOTOK : 0;
		if (json)
			print_stop_json(hex, &c->reply);
		else
			print_stop_text(hex, &c->reply);
	}
	free(c);
	return ret;
}

int pbj_rebalance_preview(const char *const *cluster, size_t ncluster, int threshold, FILE *out)
{
	struct pbj_runner_opts o = { .cluster = cluster, .ncluster = ncluster };
	struct plan_server *ps = NULL;
	struct plan *p = malloc(sizeof(*p));
	size_t n = 0;
	int rc = p ? pbj_plan_now(&o, threshold, p, &ps, &n) : -ENOMEM, ret = 0;

	if (rc) {
		fprintf(stderr, "ofs-pbj: planning the rebalance from %s: %s\n", cluster[0],
			ofs_strerror(rc));
		ret = EXIT_FAIL;
		goto out;
	}
	fprintf(out, "rebalance plan: threshold %d points around the mean, %.1f%% used\n", threshold,
		p->mean * 100);
	for (size_t i = 0; i < n; i++) {
		char hex[OFS_OID_HEX];
		sid_to_hex(ps[i].sid, hex);
		if (!ps[i].in)
			fprintf(out, "  %s  (not in service or not answering: left out)\n", hex);
		else
			fprintf(out, "  %s  %llu of %llu bytes, %.1f%%\n", hex,
				(unsigned long long)ps[i].used, (unsigned long long)ps[i].capacity,
				ps[i].capacity ? 100.0 * (double)ps[i].used / (double)ps[i].capacity : 0);
	}
	for (size_t k = 0; k < p->nmoves; k++) {
		char a[OFS_OID_HEX], b[OFS_OID_HEX];
		sid_to_hex(p->moves[k].from, a);
		sid_to_hex(p->moves[k].to, b);
		fprintf(out, "  move %llu bytes from %s to %s\n", (unsigned long long)p->moves[k].bytes, a, b);
	}
	if (p->balanced)
		fprintf(out, "every server is within the threshold: nothing to move\n");
	else
		fprintf(out, "bytes to move: %llu (the least any plan must move: %llu)\n",
			(unsigned long long)p->bytes, (unsigned long long)p->min_bytes);
out:
	free(p);
	free(ps);
	return ret;
}
