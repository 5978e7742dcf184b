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
		fprintf(stderr, "ofs-pbj: ok-to-stop %s: %s\n", argv[0], c->why);
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
