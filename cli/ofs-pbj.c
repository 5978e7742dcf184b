/*
 * ofs-pbj - parallel background jobs: the operator's tool. This release
 * has the server table commands (servers, server set); the job commands
 * come with the scheduler. See ofs-pbj(8).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/common.h"
#include "cli/pbj-ca.h"
#include "cli/pbj-jobs.h"
#include "cli/pbj-servers.h"
#include "lib/conn.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "pbj/jobopts.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3

/* The usage: its head, each job type's submit line from the job-type
 * and options tables (pbj/jobopts.h), then the rest (usage_make). */
static const char usage_head[] =
	"usage: ofs-pbj [--cluster HOST:PORT]... [--identity IDDIR | --insecure] [--db FILE]\n"
	"               COMMAND [ARGS]\n";
static const char usage_rest[] =
	"      every submit: [--dry-run] [--rate BYTES/s] [--priority N] [--wait] [--json];\n"
	"      submit TYPE --help: its options and their defaults\n"
	"  serve                         run the scheduler in the foreground\n"
	"  list [--state STATE] [--json]\n"
	"  status JOB [--json]\n"
	"  report JOB [--kind KIND] [--server SID] [--oid OID] [--json]   findings\n"
	"  pause JOB | resume JOB | cancel JOB\n"
	"  wait JOB [--json]             wait for a job to end (runs it here when no\n"
	"                                scheduler runs); exit status as submit --wait\n"
	"  config list [--json] | config get NAME | config set NAME VALUE | config unset NAME\n"
	"                                site settings: scrub.auto_repair (true|false),\n"
	"                                repair.max_objects (N, 0: no cap; default 1000)\n"
	"  schedule add NAME --cron \"MIN HOUR DOM MON DOW\" -- scrub [options]\n"
	"  schedule list [--json] | schedule rm NAME\n"
	"  servers [--json]\n"
	"  health [--detail] [--json]    whether the cluster is healthy, and if not why:\n"
	"                                exit 0 healthy, 1 warnings, 3 errors\n"
	"  server set SID --state in|draining|out | --attr KEY=VALUE | --weight W\n"
	"  ok-to-stop SID [--json]       0 when stopping SID now leaves every object it holds\n"
	"                                with its write confidence of good copies elsewhere\n"
	"  ca init CADIR                 a new cluster CA and capability key in CADIR\n"
	"  ca issue CADIR --out IDDIR (--user NAME --uid N [--gid N[,N]...] | --admin NAME)\n"
	"           [--days D]           an identity (key, certificate, CA) in IDDIR\n"
	"  ca revoke CADIR CERT.pem      that certificate refused from now on, cluster-wide\n"
	"  ca rotate CADIR [--resend]    a new capability key, sent to every server in service\n"
	"The cluster is --cluster or OFS_CLUSTER=HOST:PORT[,HOST:PORT...]; the identity\n"
	"--identity IDDIR or OFS_IDENTITY=IDDIR (--insecure: a cluster run --insecure); the job\n"
	"database is --db or OFS_PBJ_DB (default ./pbj.db). Exit status: 0 success\n"
	"(a job finished clean), 1 findings left, 2 bad usage, 3 failure.\n";

static char usage_text[4096];
static const struct cli_prog prog = { "ofs-pbj", usage_text };

/* usage_text from its parts (cut short, never overrun, if it must be). */
static void usage_make(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	snprintf(usage_text, sizeof(usage_text), "%s%s", usage_head, usage_rest);
	if (!f)
		return;
	fputs(usage_head, f);
	pbj_submit_help(NULL, f);
	fputs(usage_rest, f);
	if (fclose(f) == 0)
		snprintf(usage_text, sizeof(usage_text), "%s", buf);
	free(buf);
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs-pbj: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static json_t *attrs_json(const struct ofs_server *e)
{
	json_t *o = json_object();

	for (uint8_t i = 0; i < e->nattrs; i++) {
		char k[OFS_SERVER_ATTR_LEN];
		char *eq;
		snprintf(k, sizeof(k), "%s", e->attrs[i]);
		eq = strchr(k, '=');
		if (!eq)
			continue;
		*eq = '\0';
		json_object_set_new(o, k, json_string(eq + 1));
	}
	return o;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ofs_server *x = a, *y = b;

	return strcmp(x->address, y->address);
}

static int cmd_servers(const char *const *cluster, size_t ncluster, bool json)
{
	struct ofs_server *e = NULL;
	const char *via = NULL;
	size_t n = 0;
	json_t *arr = json_array();
	int rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);

	if (rc) {
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(rc));
		json_decref(arr);
		return EXIT_FAIL;
	}
	qsort(e, n, sizeof(*e), cmp_addr);
	if (!json)
		printf("%-32s  %-21s  %-8s  %-4s  %8s  %12s  %6s  %-20s  %-16s  %s\n", "SID",
		       "ADDRESS", "STATE", "UP", "OBJECTS", "BYTES", "WEIGHT", "LAST SEEN",
		       "CATCH-UP", "ATTRIBUTES");
	for (size_t i = 0; i < n; i++) {
		struct ofs_stats st = { 0 };
		char sid[OFS_OID_HEX], seen[OFS_TIME_LEN] = "never";
		int64_t last = e[i].last_seen_ns;
		int src = pbj_server_stats(&e[i], PBJ_STATS_UP_MS, &st);
		bool up = src == 0;

		if (up)
			last = now_ns();
		if (last > 0)
			time_format(last, seen);
		sid_to_hex(e[i].sid, sid);
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "sid", json_string(sid));
			json_object_set_new(o, "address", json_string(e[i].address));
			json_object_set_new(o, "attrs", attrs_json(&e[i]));
			json_object_set_new(o, "state", json_string(ofs_server_state_name(e[i].state)));
			json_object_set_new(o, "up", json_boolean(up));
			json_object_set_new(o, "error", src ? json_string(ofs_strerror(src)) : json_null());
			json_object_set_new(o, "last_seen", last > 0 ? json_string(seen) : json_null());
			json_object_set_new(o, "weight", json_real(e[i].weight_milli / 1000.0));
			json_object_set_new(o, "objects", up ? json_integer((json_int_t)st.objects) : json_null());
			json_object_set_new(o, "bytes_used", up ? json_integer((json_int_t)st.bytes) : json_null());
			json_object_set_new(o, "capacity", up ? json_integer((json_int_t)st.capacity) : json_null());
			json_object_set_new(o, "recovering", up ? json_boolean(st.recovering) : json_null());
			json_object_set_new(o, "behind", up ? json_integer((json_int_t)st.behind) : json_null());
			json_object_set_new(o, "behind_no_current_copy",
					    up ? json_integer((json_int_t)st.stuck) : json_null());
			json_object_set_new(o, "caught_up", up ? json_integer((json_int_t)st.caught_up) : json_null());
			json_array_append_new(arr, o);
		} else {
			char objs[24] = "-", bytes[24] = "-", attrs[OFS_SERVER_ATTRS * OFS_SERVER_ATTR_LEN];
			char cu[48] = "-";
			size_t at = 0;
			if (up) {
				snprintf(objs, sizeof(objs), "%llu", (unsigned long long)st.objects);
				snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)st.bytes);
				if (st.behind > st.stuck)
					snprintf(cu, sizeof(cu), "%llu left",
						 (unsigned long long)st.behind);
				else if (st.stuck)
					snprintf(cu, sizeof(cu), "%llu need repair",
						 (unsigned long long)st.stuck);
				else
					snprintf(cu, sizeof(cu), "current");
			}
			attrs[0] = '\0';
			for (uint8_t k = 0; k < e[i].nattrs; k++)
				at += (size_t)snprintf(attrs + at, sizeof(attrs) - at, "%s%s",
						       k ? "," : "", e[i].attrs[k]);
			printf("%-32s  %-21s  %-8s  %-4s  %8s  %12s  %6.3f  %-20s  %-16s  %s\n", sid,
			       e[i].address, ofs_server_state_name(e[i].state), up ? "yes" : "DOWN",
			       objs, bytes, e[i].weight_milli / 1000.0, seen, cu, attrs);
		}
	}
	free(e);
	if (json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "servers", arr);
		rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
		return rc < 0 ? EXIT_FAIL : 0;
	}
	json_decref(arr);
	return 0;
}

/* A full SID, or a unique prefix of at least 4 hex digits of one. */
static int cmd_server_set(const char *const *cluster, size_t ncluster, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "attr", required_argument, NULL, 'a' },
		{ "weight", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct ofs_req q = { .op = OFS_OP_SERVER_SET };
	struct ofs_server *e = NULL, got;
	const char *via = NULL, *sidarg;
	size_t n = 0;
	uint8_t *b = NULL;
	size_t bn = 0;
	int c, rc, idx = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		char opt[16];
		/* (--attr's KEY is a name; --state and --weight never begin with '-') */
		snprintf(opt, sizeof(opt), "--%s", opts[idx].name);
		if (c != '?' && optarg && !cli_value_ok(&prog, opt, optarg, 0, &rc))
			return rc;
		switch (c) {
		case 's':
			if (ofs_server_state_parse(optarg, &q.set.state))
				return usage("--state %s: must be in, draining or out", optarg);
			q.set.mask |= OFS_SET_STATE;
			break;
		case 'a': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || strlen(optarg) >= OFS_SERVER_ATTR_LEN ||
			    strpbrk(optarg, " \t\n"))
				return usage("--attr %s: must be KEY=VALUE (KEY= removes KEY)", optarg);
			if (q.set.mask & OFS_SET_ATTR)
				return usage("give one --attr at a time%s", "");
			snprintf(q.set.attr, sizeof(q.set.attr), "%s", optarg);
			q.set.mask |= OFS_SET_ATTR;
			break;
		}
		case 'w': {
			char *end;
			double w = strtod(optarg, &end);
			if (*end || !(w >= 0 && w <= 1000000))
				return usage("--weight %s: must be a number from 0 to 1000000", optarg);
			q.set.weight_milli = (uint32_t)(w * 1000 + 0.5);
			q.set.mask |= OFS_SET_WEIGHT;
			break;
		}
		default:
			return usage("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return usage("server set takes one SID%s", "");
	if (!q.set.mask)
		return usage("server set needs --state, --attr or --weight%s", "");
	sidarg = argv[optind];
	rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);
	if (rc) {
		fprintf(stderr, "ofs-pbj: cannot read the server table from %s: %s\n", cluster[0],
			ofs_strerror(rc));
		return EXIT_FAIL;
	}
	rc = pbj_resolve_sid(sidarg, e, n, &q.set.sid);
	if (rc) {
		char why[PBJ_SID_WHY_LEN];
		pbj_sid_why_of(sidarg, rc, e, n, why);
		free(e);
		if (rc == -EINVAL)
			return usage("'%s' is not a SID (32 hex digits, or a unique prefix of 4 or more)",
				     sidarg);
		fprintf(stderr, "ofs-pbj: %s: %s\n", sidarg, why);
		return EXIT_USAGE;
	}
	/* Every server is told, the one it is about first: a server speaks
	 * for its own entry only, so none takes an operator's change from
	 * another's gossip (docs/design.md, "Security"); one missed here
	 * learns it from the server it is about. */
	rc = -OFS_EUNREACHABLE;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			int one;
			if (sid_eq(e[i].sid, q.set.sid) != (pass == 0) || !e[i].address[0])
				continue;
			one = conn_call_once_sid(e[i].address, &e[i].sid, &q, 10000,
						 rc ? &b : NULL, rc ? &bn : NULL);
			if (one && !conn_is_transport_error(one) && rc &&
			    (one != -ENOENT || rc == -OFS_EUNREACHABLE))
				rc = one;        /* (refused: said below unless another took it) */
			else if (!one && rc)
				rc = 0;          /* (b: its answer) */
			if (one && conn_is_transport_error(one))
				fprintf(stderr, "ofs-pbj: server set: %s did not answer (%s): it learns "
					"the change from server %s\n", e[i].address, ofs_strerror(one),
					sidarg);
		}
	}
	free(e);
	(void)via;
	if (!rc) {
		struct rbuf r;
		rbuf_init(&r, b, bn);
		proto_decode_server(&r, &got);
		rc = rbuf_done(&r);
	}
	free(b);
	if (rc == -ENOENT) {
		fprintf(stderr, "ofs-pbj: %s: no such server\n", sidarg);
		return EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "ofs-pbj: server set %s: %s\n", sidarg, ofs_strerror(rc));
		return rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	{
		char hex[OFS_OID_HEX];
		sid_to_hex(got.sid, hex);
		printf("%s state %s weight %.3f", hex, ofs_server_state_name(got.state),
		       got.weight_milli / 1000.0);
		for (uint8_t i = 0; i < got.nattrs; i++)
			printf(" %s", got.attrs[i]);
		printf("\n");
	}
	return 0;
}

static bool is_job_command(const char *c)
{
	static const char *const jobcmds[] = { "submit", "serve", "list", "status", "report",
					       "pause", "resume", "cancel", "schedule", "wait",
					       "config", NULL };

	for (int k = 0; jobcmds[k]; k++)
		if (!strcmp(c, jobcmds[k]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct cli_line l;
	const char *why = NULL;
	int rc;

	usage_make();
	rc = cli_line_parse(argc, argv, CLI_LINE_PBJ, &l, &why);
	if (rc) {
		cli_line_free(&l);
		return rc == -EINVAL ? usage("%s", why) : EXIT_FAIL;
	}
	if (l.help && l.nrest > 1 && !strcmp(l.rest[1], "submit")) {
		rc = jobs_submit_help(l.nrest > 2 ? l.rest[2] : NULL);
		cli_line_free(&l);
		return rc;
	}
	if (cli_line_help(&l, "ofs-pbj", usage_text)) {
		cli_line_free(&l);
		return 0;
	}
	if (!strcmp(l.rest[1], "ca")) {
		if (l.nrest >= 3 && (!strcmp(l.rest[2], "revoke") || !strcmp(l.rest[2], "rotate"))) {
			if (cli_line_cluster(&l) == -EINVAL) {
				rc = usage("%s", l.why);
				goto out;
			}
			rc = cli_line_security(&l, "ofs-pbj", l.ncluster > 0);
			if (rc)
				goto out;
		}
		rc = pbj_ca_main(l.nrest - 1, l.rest + 1, l.cluster, l.ncluster);
		goto out;
	}
	if (is_job_command(l.rest[1])) {
		/* (a job command may need none) */
		if (cli_line_cluster(&l) == -EINVAL) {
			rc = usage("%s", l.why);
			goto out;
		}
		/* (those that run jobs or look at servers need an identity) */
		rc = cli_line_security(&l, "ofs-pbj",
				       l.ncluster && (!strcmp(l.rest[1], "submit") ||
						      !strcmp(l.rest[1], "serve") ||
						      !strcmp(l.rest[1], "wait")));
		if (rc)
			goto out;
		rc = pbj_jobs_main(l.nrest - 1, l.rest + 1, l.db, l.cluster, l.ncluster, l.json);
		goto out;
	}
	if (strcmp(l.rest[1], "servers") && strcmp(l.rest[1], "ok-to-stop") &&
	    strcmp(l.rest[1], "health") &&
	    !(l.nrest >= 3 && !strcmp(l.rest[1], "server") && !strcmp(l.rest[2], "set"))) {
		rc = usage("unknown command '%s'", l.rest[1]);
		goto out;
	}
	rc = cli_line_cluster(&l);
	if (rc) {
		rc = rc == -ENOENT ? usage("no cluster: give --cluster HOST:PORT or set OFS_CLUSTER%s", "")
		   : rc == -EINVAL ? usage("%s", l.why) : EXIT_FAIL;
		goto out;
	}
	rc = cli_line_security(&l, "ofs-pbj", true);
	if (rc)
		goto out;
	if (!strcmp(l.rest[1], "health")) {
		rc = pbj_health_main(l.nrest - 1, l.rest + 1, l.db, l.cluster, l.ncluster, l.json);
	} else if (!strcmp(l.rest[1], "ok-to-stop")) {
		rc = pbj_ok_to_stop(l.cluster, l.ncluster, l.nrest - 2, l.rest + 2, l.json);
	} else if (!strcmp(l.rest[1], "servers")) {
		if (l.nrest != 2) {
			rc = usage("servers takes no arguments%s", "");
			goto out;
		}
		rc = cmd_servers(l.cluster, l.ncluster, l.json);
	} else {
		if (l.json) {
			rc = usage("server set has no --json%s", "");
			goto out;
		}
		rc = cmd_server_set(l.cluster, l.ncluster, l.nrest - 2, l.rest + 2);
	}
out:
	cli_line_free(&l);
	return rc;
}
