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

#define EXIT_NOTOK 1
#define EXIT_USAGE 2
#define EXIT_FAIL 3
#define TABLE_MS 10000            /* SERVERS answers from memory */
#define STATS_MS 30000            /* STATS walks the server's records */
#define STOP_CHECK_MS 600000      /* STOP_CHECK asks about every object */
#define SHOWN 10                  /* short objects named in plain output */

/* The server table as the first cluster address to answer sees it. */
int pbj_fetch_table(const char *const *cluster, size_t n, struct ofs_server **e, size_t *ne,
		    const char **via)
{
	return conn_fetch_table(cluster, n, TABLE_MS, e, ne, via);
}

int pbj_resolve_sid(const char *arg, const struct ofs_server *e, size_t n, struct ofs_sid *out)
{
	size_t len = strlen(arg), found = 0;

	if (sid_from_hex(arg, out) == 0)
		return 0;
	if (len < 4 || len > 32 || strspn(arg, "0123456789abcdefABCDEF") != len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char hex[OFS_OID_HEX];
		sid_to_hex(e[i].sid, hex);
		if (strncasecmp(hex, arg, len) == 0) {
			*out = e[i].sid;
			found++;
		}
	}
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}


/* The entry of e[0..n-1] that arg names (a SID or a unique prefix); NULL
 * after saying on stderr why none ("ofs-pbj: WHAT ARG: ..."). */
static const struct ofs_server *server_named(const char *what, const char *arg,
					     const struct ofs_server *e, size_t n)
{
	struct ofs_sid sid;
	int rc = pbj_resolve_sid(arg, e, n, &sid);

	for (size_t i = 0; !rc && i < n; i++)
		if (sid_eq(e[i].sid, sid))
			return &e[i];
	fprintf(stderr, "ofs-pbj: %s %s: %s\n", what, arg,
		rc == -EINVAL ? "not a SID (32 hex digits, or a unique prefix of 4 or more)" :
		rc == -EEXIST ? "prefix matches several servers" : "no such server");
	return NULL;
}

static const char *rack_of(const struct ofs_server *e, char *buf, size_t n)
{
	buf[0] = '\0';
	for (uint8_t i = 0; i < e->nattrs; i++)
		if (strncmp(e->attrs[i], "rack=", 5) == 0)
			snprintf(buf, n, "%s", e->attrs[i] + 5);
	return buf;
}

static int stats_of(const struct ofs_server *e, struct ofs_stats *st)
{
	struct ofs_req q = { .op = OFS_OP_STATS };
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc = conn_call_once_sid(e->address, &e->sid, &q, STATS_MS, &b, &bn);

	if (!rc)
		rc = proto_decode_stats(b, bn, st);
	free(b);
	return rc;
}

int pbj_drain_prepare(const char *const *cluster, size_t ncluster, const char *sidarg,
		      bool dry_run, char sidhex[OFS_OID_HEX])
{
	struct ofs_server *e = NULL;
	const struct ofs_server *f = NULL;
	struct ofs_stats fs, os;
	struct ofs_sid sid;
	const char *via = NULL;
	uint64_t avail = 0;
	size_t n = 0, nin = 0, nracks = 0;
	char racks[OFS_MAX_SERVERS][64];
	int rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via), ret = 0;

	if (rc) {
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(rc));
		return EXIT_FAIL;
	}
	f = server_named("--server", sidarg, e, n);
	if (!f) {
		free(e);
		return EXIT_USAGE;
	}
	sid = f->sid;
	sid_to_hex(sid, sidhex);
	if (f->state == OFS_SERVER_OUT) {
		fprintf(stderr, "ofs-pbj: drain %s: the server is out of service already; "
			"`ofs-pbj server set %s --state in` returns it\n", sidhex, sidhex);
		ret = EXIT_USAGE;
		goto out;
	}
	rc = stats_of(f, &fs);
	if (rc) {
		fprintf(stderr, "ofs-pbj: drain %s: the server does not answer (%s); a drain "
			"copies from it, so it must run\n", sidhex, ofs_strerror(rc));
		ret = EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char rack[64];
		bool seen = false;
		if (&e[i] == f || e[i].state != OFS_SERVER_IN || stats_of(&e[i], &os) != 0)
			continue;
		nin++;
		avail += os.avail;
		rack_of(&e[i], rack, sizeof(rack));
		for (size_t k = 0; k < nracks; k++)
			seen |= strcmp(racks[k], rack) == 0;
		if (!seen && nracks < OFS_MAX_SERVERS)
			snprintf(racks[nracks++], sizeof(racks[0]), "%s", rack);
	}
	fprintf(stderr, "ofs-pbj: drain %s: %llu objects, %llu bytes of file data; %zu other "
		"server%s in service and answering (%zu rack%s), %llu bytes free there\n", sidhex,
		(unsigned long long)fs.objects, (unsigned long long)fs.bytes, nin, nin == 1 ? "" : "s",
		nracks, nracks == 1 ? "" : "s", (unsigned long long)avail);
	if (nin < fs.max_copies) {
		fprintf(stderr, "ofs-pbj: drain %s refused: some of its objects have %u copies, and "
			"only %zu other server%s in service can hold them; add a server first\n",
			sidhex, fs.max_copies, nin, nin == 1 ? "" : "s");
		ret = EXIT_USAGE;
		goto out;
	}
	if (fs.bytes > avail / 100 * 95) {
		fprintf(stderr, "ofs-pbj: drain %s refused: it holds %llu bytes and the servers in "
			"service besides it have %llu bytes free (a drain leaves 5%% spare)\n", sidhex,
			(unsigned long long)fs.bytes, (unsigned long long)avail);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!dry_run && f->state != OFS_SERVER_DRAINING) {
		struct pbj_runner_opts o = { .cluster = cluster, .ncluster = ncluster };
		rc = pbj_server_state(&o, f->address, sid, OFS_SERVER_DRAINING);
		if (rc) {
			fprintf(stderr, "ofs-pbj: drain %s: marking it draining failed: %s\n", sidhex,
				ofs_strerror(rc));
			ret = EXIT_FAIL;
			goto out;
		}
	}
out:
	free(e);
	return ret;
}

int pbj_ok_to_stop(const char *const *cluster, size_t ncluster, int argc, char **argv, bool json)
{
	struct ofs_server *e = NULL;
	struct ofs_stop_reply *sr = NULL;
	struct ofs_req q = { .op = OFS_OP_STOP_CHECK };
	const char *via = NULL, *addr = NULL;
	char hex[OFS_OID_HEX];
	uint8_t *b = NULL;
	size_t n = 0, bn = 0;
	int rc, ret;

	if (argc != 1) {
		fprintf(stderr, "ofs-pbj: ok-to-stop takes one SID (see ofs-pbj --help)\n");
		return EXIT_USAGE;
	}
	rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);
	if (rc) {
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(rc));
		return EXIT_FAIL;
	}
	{
		const struct ofs_server *f = server_named("ok-to-stop", argv[0], e, n);
		if (!f) {
			free(e);
			return EXIT_USAGE;
		}
		sid_to_hex(f->sid, hex);
		addr = f->address;
	}
	q.max = OFS_STOP_LIST_MAX;
	sr = malloc(sizeof(*sr));
	rc = sr ? conn_call_once(addr, &q, STOP_CHECK_MS, &b, &bn) : -ENOMEM;
	if (!rc)
		rc = proto_decode_stop_reply(b, bn, sr);
	free(b);
	if (rc && !conn_is_transport_error(rc) && rc != -OFS_EUNREACHABLE && rc != -ENOMEM) {
		/* Refused (who we are, or what we asked): say so, no answer. */
		fprintf(stderr, "ofs-pbj: ok-to-stop %s: %s\n", hex, ofs_strerror(rc));
		ret = EXIT_FAIL;
		goto out;
	}
	if (rc) {
		/* Not answering: what it holds cannot be known, so "no". */
		if (json)
			printf("{\"sid\": \"%s\", \"ok\": false, \"error\": \"%s\"}\n", hex, ofs_strerror(rc));
		else
			printf("not known whether %s can stop: it does not answer (%s)\n", hex,
			       ofs_strerror(rc));
		ret = conn_is_transport_error(rc) || rc == -OFS_EUNREACHABLE ? EXIT_NOTOK : EXIT_FAIL;
		goto out;
	}
	ret = sr->nshort ? EXIT_NOTOK : 0;
	if (json) {
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
	} else if (sr->nshort == 0) {
		printf("ok to stop %s: each of the %llu objects it holds has at least its write "
		       "confidence of good copies elsewhere\n", hex, (unsigned long long)sr->objects);
	} else {
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
out:
	free(sr);
	free(e);
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
