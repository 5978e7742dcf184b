/*
 * ofs-server - the storage server: init a data dir, run it, inspect it.
 * main() parses arguments and calls the library; see ofs-server(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "cli/common.h"
#include "lib/ca.h"
#include "lib/cap.h"
#include "lib/conn.h"
#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/log.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/parse.h"
#include "lib/tls.h"
#include "backref/points.h"
#include "rebalancer/drain.h"
#include "rebalancer/kinds.h"
#include "scrubber/scrub.h"
#include "server/ops.h"
#include "server/server.h"
#include "server/tool.h"
#include "store/inspect.h"
#include "store/store.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3

static const char usage_text[] =
	"usage: ofs-server init --data DIR [--ca CADIR] [--attr KEY=VALUE]... [--chunk-size BYTES]\n"
	"       ofs-server certify --data DIR --ca CADIR\n"
	"       ofs-server run --data DIR --listen HOST:PORT [--peer HOST:PORT]... [--log FILE]\n"
	"                  [--max-conns N] [--max-conns-per-user N] [--idle-timeout SECONDS]\n"
	"                  [--scrub-rate BYTES/s] [--quarantine-days N]\n"
	"                  [--orphan-grace SECONDS] [--capacity BYTES] [--no-catch-up]\n"
	"                  [--settle-ms MS] [--cap-ttl SECONDS] [--inline-max BYTES] [--no-join]\n"
	"                  [--insecure]\n"
	"       ofs-server inspect --data DIR OID [--json]\n"
	"       ofs-server ops [--json]       every operation and the roles that may call it\n"
	"       ofs-server tool --data DIR list|keys|get-key|set-key|rm-key|set-version|set-backref|set-part|\n"
	"                                     mark-behind|flip-byte|lose-bytes|remove ...\n"
	"       ofs-server --help | --version\n";

static const struct cli_prog prog = { "ofs-server", usage_text };

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs-server: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "ofs-server: %s: %s\n", what, ofs_strerror(rc));
	return EXIT_FAIL;
}

enum { OPT_DATA = 1, OPT_ATTR, OPT_CHUNK, OPT_LISTEN, OPT_LOG, OPT_MAXCONNS, OPT_JSON,
       OPT_PEER, OPT_SCRUB_RATE, OPT_QUARANTINE, OPT_ORPHAN_GRACE, OPT_HELP, OPT_CAPACITY, OPT_NO_CATCH_UP,
       OPT_SETTLE, OPT_CA, OPT_INSECURE, OPT_CAP_TTL, OPT_INLINE_MAX, OPT_NO_JOIN,
       OPT_PERUSER, OPT_IDLE };

#define MAX_PEERS 16

static const struct option long_opts[] = {
	{ "data", required_argument, NULL, OPT_DATA },
	{ "attr", required_argument, NULL, OPT_ATTR },
	{ "chunk-size", required_argument, NULL, OPT_CHUNK },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "max-conns", required_argument, NULL, OPT_MAXCONNS },
	{ "max-conns-per-user", required_argument, NULL, OPT_PERUSER },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "scrub-rate", required_argument, NULL, OPT_SCRUB_RATE },
	{ "quarantine-days", required_argument, NULL, OPT_QUARANTINE },
	{ "orphan-grace", required_argument, NULL, OPT_ORPHAN_GRACE },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "no-catch-up", no_argument, NULL, OPT_NO_CATCH_UP },
	{ "settle-ms", required_argument, NULL, OPT_SETTLE },
	{ "ca", required_argument, NULL, OPT_CA },
	{ "insecure", no_argument, NULL, OPT_INSECURE },
	{ "cap-ttl", required_argument, NULL, OPT_CAP_TTL },
	{ "inline-max", required_argument, NULL, OPT_INLINE_MAX },
	{ "no-join", no_argument, NULL, OPT_NO_JOIN },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char *data, *listen, *log, *ca;
	const char *attrs[STORE_MAX_ATTRS];
	size_t nattrs;
	const char *peers[MAX_PEERS];
	size_t npeers;
	uint64_t chunk, max_conns, per_user, idle_s, scrub_rate, quarantine_days, orphan_grace, capacity,
		 settle_ms, cap_ttl, inline_max;
	bool json, no_catch_up, insecure, no_join;
	const char *operand;
};

/* The options of ofs-server that are a whole number in a range: one row
 * each (the value's field, its bounds, and what the refusal says). */
struct num_opt {
	int opt;
	size_t field;                /* offsetof(struct args, ...) */
	uint64_t lo, hi;
	const char *what;            /* after "--NAME VALUE: " */
};

static const struct num_opt num_opts[] = {
	{ OPT_ORPHAN_GRACE, offsetof(struct args, orphan_grace), 0, 31536000,
	  "seconds from 0 to 31536000" },
	{ OPT_SETTLE, offsetof(struct args, settle_ms), 0, 60000, "milliseconds from 0 to 60000" },
	{ OPT_QUARANTINE, offsetof(struct args, quarantine_days), 0, 36500, "days from 0 to 36500" },
	{ OPT_CAP_TTL, offsetof(struct args, cap_ttl), 1, 86400, "seconds from 1 to 86400" },
	{ OPT_PERUSER, offsetof(struct args, per_user), 1, 65536, "must be 1 to 65536" },
	{ OPT_IDLE, offsetof(struct args, idle_s), 1, 86400, "must be 1 to 86400 seconds" },
	{ OPT_MAXCONNS, offsetof(struct args, max_conns), 1, 65536, "must be 1 to 65536" },
};

/* A whole-number option c (num_opts) into a. 0 or EXIT_USAGE. */
static int set_number(int c, const char *v, struct args *a)
{
	for (size_t i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		const struct num_opt *n = &num_opts[i];
		char msg[96] = "%s: out of range";
		if (n->opt != c)
			continue;
		if (!parse_uint(v, n->lo, n->hi, (uint64_t *)((char *)a + n->field)))
			return 0;
		for (size_t j = 0; long_opts[j].name; j++)
			if (long_opts[j].val == c)
				snprintf(msg, sizeof(msg), "--%s %%s: %s", long_opts[j].name, n->what);
		usage_error(msg, v);
		return EXIT_USAGE;
	}
	return 0;
}

/* Option c with its value v (NULL: none) into a. 0 or EXIT_USAGE. */
static int set_option(int c, const char *v, struct args *a)
{
	switch (c) {
	case OPT_DATA: a->data = v; break;
	case OPT_LISTEN: a->listen = v; break;
	case OPT_LOG: a->log = v; break;
	case OPT_JSON: a->json = true; break;
	case OPT_NO_CATCH_UP: a->no_catch_up = true; break;
	case OPT_NO_JOIN: a->no_join = true; break;
	case OPT_CA: a->ca = v; break;
	case OPT_INSECURE: a->insecure = true; break;
	case OPT_PEER: {
		struct sockaddr_in sa;
		if (a->npeers == MAX_PEERS) {
			usage_error("at most 16 --peer%s", "");
			return EXIT_USAGE;
		}
		if (net_parse_addr(v, &sa)) {
			usage_error("--peer %s: not an IPv4 HOST:PORT", v);
			return EXIT_USAGE;
		}
		a->peers[a->npeers++] = v;
		break;
	}
	case OPT_ATTR:
		if (a->nattrs == STORE_MAX_ATTRS) {
			usage_error("at most 16 --attr%s", "");
			return EXIT_USAGE;
		}
		a->attrs[a->nattrs++] = v;
		break;
	case OPT_CHUNK:
		if (parse_size(v, &a->chunk) || a->chunk < STORE_MIN_CHUNK ||
		    a->chunk > STORE_MAX_CHUNK || (a->chunk & (a->chunk - 1))) {
			usage_error("--chunk-size %s: must be a power of two from 4K to 16M", v);
			return EXIT_USAGE;
		}
		break;
	case OPT_SCRUB_RATE:
		if (parse_size(v, &a->scrub_rate) || a->scrub_rate < 4096) {
			usage_error("--scrub-rate %s: bytes per second, at least 4K (suffixes K, M, G)",
				    v);
			return EXIT_USAGE;
		}
		break;
	case OPT_CAPACITY:
		if (parse_size(v, &a->capacity) || a->capacity < (1u << 20)) {
			usage_error("--capacity %s: bytes this server may hold, at least 1M "
				    "(suffixes K, M, G)", v);
			return EXIT_USAGE;
		}
		break;
	default:
		return set_number(c, v, a);
	}
	return 0;
}

/* Parse options allowed for cmd (a string of OPT_ letters). 0 or exit code. */
static int parse(int argc, char **argv, const char *cmd, const char *allowed, struct args *a)
{
	int c, idx = 0;

	memset(a, 0, sizeof(*a));
	a->chunk = 1u << 20;
	a->max_conns = LISTENER_DEFAULT_MAX_CONNS;
	a->per_user = LISTENER_DEFAULT_PER_USER;
	a->idle_s = LISTENER_DEFAULT_IDLE_S;
	a->scrub_rate = TASKHOST_DEFAULT_RATE;
	a->quarantine_days = 7;
	a->orphan_grace = SCRUB_ORPHAN_GRACE_S;
	a->settle_ms = SCRUB_SETTLE_MS;
	a->cap_ttl = CAP_DEFAULT_TTL_S;
	a->inline_max = STORE_INLINE_DEFAULT;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		char opt[32];
		int st;

		if (c == '?') {
			usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
		if (c == OPT_HELP || c == 'h') {
			cli_usage_for(usage_text, "ofs-server", cmd, NULL);
			exit(0);
		}
		/* (no option of ofs-server takes a value that begins with '-') */
		snprintf(opt, sizeof(opt), "--%s", long_opts[idx].name);
		if (optarg && !cli_value_ok(&prog, opt, optarg, 0, &st)) {
			if (st == 0)
				exit(0);
			return st;
		}
		if (c != OPT_DATA && !strchr(allowed, c + '0')) {
			usage_error("option '--%s' does not apply to this command", long_opts[idx].name);
			return EXIT_USAGE;
		}
		st = set_option(c, optarg, a);
		if (st)
			return st;
	}
	if (!a->data) {
		usage_error("%s needs --data DIR", cmd);
		return EXIT_USAGE;
	}
	if (optind < argc) {
		int st;
		if (!cli_value_ok(&prog, cmd, argv[optind], 0, &st)) {
			if (st == 0)
				exit(0);
			return st;
		}
		a->operand = argv[optind++];
	}
	if (optind < argc) {
		usage_error("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

/* store_open, its refusals said: 0, or the exit status. */
/* store_open's failure on data (rc), said: the exit status. */
static int data_failed(const char *data, int rc)
{
	char why[2 * 4096 + 256];

	if (rc == -EPERM && store_check_modes(data, why, sizeof(why)) == -EPERM) {
		fprintf(stderr, "ofs-server: %s\n", why);
		return EXIT_USAGE;
	}
	if (rc == -EBUSY) {
		fprintf(stderr, "ofs-server: %s: another server is running on this data dir\n", data);
		return EXIT_FAIL;
	}
	return fail(data, rc);
}

static int open_data(const char *data, bool read_only, struct store **s)
{
	int rc = store_open(data, read_only, s);

	return rc ? data_failed(data, rc) : 0;
}

/* Where a data dir keeps the server's identity (tls.h). */
static void identity_dir(const char *data, char buf[4096])
{
	snprintf(buf, 4096, "%s/identity", data);
}

/* The server identity of sid, issued by the CA in cadir into data's
 * identity directory, with the CA's capability key (replace: the one
 * there is removed first). */
static int certify(const char *data, const char *cadir, struct ofs_sid sid, bool replace)
{
	struct ident id = { .role = IDENT_SERVER, .sid = sid };
	char dir[4096], why[TLS_WHY_MAX];
	int rc;

	identity_dir(data, dir);
	if (replace) {
		/* (a new identity replaces a lost, expired or revoked one; the
		 * key goes first, so a crash leaves none rather than a mix) */
		static const char *const files[] = { "key.pem", "cert.pem", "ca.pem", "cap.key" };
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char p[4200];
			snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
			if (unlink(p) < 0 && errno != ENOENT) {
				fprintf(stderr, "ofs-server: %s: %s\n", p, strerror(errno));
				return EXIT_FAIL;
			}
		}
	}
	rc = ca_issue(cadir, &id, CA_DAYS_MAX / 10, 0, dir, CA_ISSUE_BESIDE, why);
	if (!rc)
		rc = ca_copy_capkey(cadir, dir, why);
	if (!rc)
		rc = ca_copy_revoked(cadir, dir, why);
	if (rc) {
		fprintf(stderr, "ofs-server: %s\n", why);
		return EXIT_FAIL;
	}
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	return f->level == 0 ? 0 : remove(p);
}

/* Whether dir is missing or an empty directory: all init may undo. */
static bool missing_or_empty(const char *dir, bool *existed)
{
	int rc = fdio_dir_is_empty(dir);

	*existed = rc != -ENOENT;
	return rc == 1 || rc == -ENOENT;
}

/* A failed init leaves nothing behind: what it made under dir goes, and
 * dir too when init made it (an empty one given stays, empty). Only for
 * a dir that was missing or empty before (missing_or_empty). */
static void init_undo(const char *dir, bool existed)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (!existed)
		rmdir(dir);
}

static int cmd_init(int argc, char **argv)
{
	struct args a;
	struct ofs_sid sid;
	char hex[OFS_OID_HEX];
	bool existed, undoable;
	int rc = parse(argc, argv, "init", "123@", &a);

	if (rc)
		return rc;
	if (a.operand) {
		usage_error("unexpected argument '%s'", a.operand);
		return EXIT_USAGE;
	}
	undoable = missing_or_empty(a.data, &existed);
	rc = store_init(a.data, (uint32_t)a.chunk, a.attrs, a.nattrs, &sid);
	if (rc == -EEXIST) {             /* (not empty: not ours to undo) */
		fprintf(stderr, "ofs-server: %s: exists and is not empty\n", a.data);
		return EXIT_FAIL;
	}
	if (rc && undoable)
		init_undo(a.data, existed);
	if (rc == -EINVAL) {
		usage_error("%s", "an --attr must be KEY=VALUE of printable characters");
		return EXIT_USAGE;
	}
	if (rc)
		return fail(a.data, rc);
	sid_to_hex(sid, hex);
	if (a.ca && (rc = certify(a.data, a.ca, sid, false)) != 0) {
		if (undoable)
			init_undo(a.data, existed);
		fprintf(stderr, "ofs-server: %s: not made (a server is made with its identity; "
			"fix the CA and run init again)\n", a.data);
		return rc;
	}
	printf("%s\n", hex);
	return 0;
}

/* certify: a data dir made without --ca gets its server identity; one
 * that has an identity (lost, expired, revoked, another server's) gets a
 * new one in its place. */
static int cmd_certify(int argc, char **argv)
{
	struct args a;
	struct store *s = NULL;
	struct ofs_sid sid;
	int rc = parse(argc, argv, "certify", "@", &a);

	if (rc)
		return rc;
	if (a.operand || !a.ca) {
		usage_error("%s", a.operand ? "unexpected argument" : "certify needs --ca CADIR");
		return EXIT_USAGE;
	}
	rc = open_data(a.data, true, &s);
	if (rc)
		return rc;
	sid = store_sid(s);
	store_close(s);
	return certify(a.data, a.ca, sid, true);
}


/* What a running server is made of, besides server/server.h's: the
 * process's log and signals, and the identity it serves with. */
struct running {
	struct args a;
	struct server *srv;
	struct tls_conf *tls;               /* NULL: --insecure */
	struct crl *crl;                    /* the revocation list (NULL: --insecure) */
	struct cap_ring *capkeys;           /* the capability keys (NULL: --insecure) */
	char sidhex[OFS_OID_HEX];
	int sfd, logfd;
};

/* run's arguments: 0, or the exit status of a usage error. */
static int run_args(struct running *r, struct sockaddr_in *addr)
{
	if (r->a.operand) {
		usage_error("unexpected argument '%s'", r->a.operand);
		return EXIT_USAGE;
	}
	if (!r->a.listen) {
		usage_error("%s needs --listen HOST:PORT", "run");
		return EXIT_USAGE;
	}
	if (net_parse_addr(r->a.listen, addr)) {
		usage_error("--listen %s: not an IPv4 HOST:PORT", r->a.listen);
		return EXIT_USAGE;
	}
	if (r->a.insecure) {
		/* Plaintext is for benchmarks' baselines, on this machine only. */
		struct sockaddr_in pa;
		bool local = (ntohl(addr->sin_addr.s_addr) >> 24) == 127;
		for (size_t i = 0; i < r->a.npeers && local; i++)
			local = !net_parse_addr(r->a.peers[i], &pa) &&
				(ntohl(pa.sin_addr.s_addr) >> 24) == 127;
		if (!local) {
			usage_error("%s", "--insecure serves loopback (127.x.x.x) only, to peers on it");
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* This server's identity (data dir's identity/), for both ends of its
 * connections; --insecure: none, plaintext. */
static int run_identity(struct running *r)
{
	char dir[4096], capath[4200], why[TLS_WHY_MAX];
	int rc;

	if (r->a.insecure) {
		conn_security(NULL, true);
		return 0;
	}
	identity_dir(r->a.data, dir);
	rc = tls_conf_load(dir, &r->tls, why);
	if (rc == -ENOENT) {
		fprintf(stderr, "ofs-server: %s has no identity (%s): give it one with "
			"'ofs-server certify --data %s --ca CADIR' (or run --insecure on "
			"loopback, for benchmarks)\n", r->a.data, why, r->a.data);
		return EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "ofs-server: identity: %s\n", why);
		return EXIT_USAGE;
	}
	if (tls_conf_self(r->tls)->role != IDENT_SERVER ||
	    !sid_eq(tls_conf_self(r->tls)->sid, server_sid(r->srv))) {
		fprintf(stderr, "ofs-server: %s/cert.pem is not this server's (SID %s): "
			"'ofs-server certify --data %s --ca CADIR' issues it\n", dir, r->sidhex,
			r->a.data);
		return EXIT_USAGE;
	}
	/* (what the CA signs - the revocation list, the capability keys - is
	 * believed when the CA certificate this server trusts verifies it) */
	snprintf(capath, sizeof(capath), "%s/ca.pem", dir);
	snprintf(dir + strlen(dir), 4096 - strlen(dir), "/revoked");
	rc = crl_open(dir, capath, &r->crl);
	if (rc) {
		fprintf(stderr, "ofs-server: %s: %s\n", dir, ofs_strerror(rc));
		return EXIT_FAIL;
	}
	tls_conf_set_crl(r->tls, r->crl);
	identity_dir(r->a.data, dir);
	snprintf(dir + strlen(dir), 4096 - strlen(dir), "/cap.key");
	rc = tls_key_mode_ok(dir, why);
	if (!rc)
		rc = cap_ring_open(dir, capath, &r->capkeys);
	if (rc) {
		fprintf(stderr, "ofs-server: capability keys %s: %s\n", dir,
			rc == -EPERM ? why : ofs_strerror(rc));
		return EXIT_USAGE;
	}
	conn_security(r->tls, false);
	return 0;
}

/* The log file, and SIGTERM and SIGINT through a signalfd (every thread
 * started from here on inherits the blocked mask). */
static int run_log_and_signals(struct running *r)
{
	sigset_t mask;

	if (r->a.log) {
		r->logfd = open(r->a.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (r->logfd < 0)
			return fail(r->a.log, -errno);
		log_init(r->logfd, LOG_INFO);
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, SIGPIPE);
	r->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	return r->sfd < 0 ? fail("signalfd", -errno) : 0;
}

/* The store and the listening socket (server_open). */
static int run_store(struct running *r, const struct sockaddr_in *addr)
{
	struct server_opts o = {
		.data = r->a.data, .listen = *addr, .peers = r->a.peers, .npeers = r->a.npeers,
		.capacity = r->a.capacity, .inline_max = (uint32_t)r->a.inline_max,
		.scrub_rate = r->a.scrub_rate, .quarantine_days = (uint32_t)r->a.quarantine_days,
		.cap_ttl_s = (uint32_t)r->a.cap_ttl,
		.limits = { .max_conns = (int)r->a.max_conns, .per_user = (int)r->a.per_user,
			    .idle_s = (int)r->a.idle_s },
		.no_catch_up = r->a.no_catch_up, .no_join = r->a.no_join,
		.mailbox_max = SCRUB_JOIN_MAILBOX_MAX,
	};
	const char *what = NULL;
	int rc = server_open(&o, &r->srv, &what);

	if (rc)
		return what == r->a.data ? data_failed(r->a.data, rc) : fail(r->a.listen, rc);
	sid_to_hex(server_sid(r->srv), r->sidhex);
	{
		char tag[9];                 /* (the short SID: 8 hex digits) */
		snprintf(tag, sizeof(tag), "%.8s", r->sidhex);
		log_name(tag);
	}
	return 0;
}

/* ---- the parts of the server above server/ (server_part rows) --------------- */

static int scrubber_part_open(struct server *srv, void *arg, void **state)
{
	const struct args *a = arg;
	struct scrubber *sc = NULL;
	int rc = scrubber_open(server_store(srv), server_sidtab(srv), server_replicator(srv), &sc);

	if (rc)
		return rc;
	scrubber_set_mailbox(sc, server_mailbox(srv));
	scrubber_set_quarantine(sc, (long long)a->quarantine_days * 86400);
	scrubber_set_orphan_grace(sc, (long long)a->orphan_grace);
	scrubber_set_settle(sc, (long)a->settle_ms);
	rc = scrubber_add_kind(sc, server_tasks(srv));
	if (rc) {
		scrubber_close(sc);
		return rc;
	}
	*state = sc;
	return 0;
}

static void scrubber_part_close(void *state)
{
	scrubber_close(state);
}

static int rebalancer_part_open(struct server *srv, void *arg, void **state)
{
	(void)arg;
	*state = NULL;
	return rebalancer_add_kinds(server_tasks(srv));
}

static int ops_part_open(struct server *srv, void *arg, void **state)
{
	int rc = points_register_ops();

	(void)srv;
	(void)arg;
	*state = NULL;
	return rc ? rc : drain_register_ops();
}

/* This server's identity, for both ends of its connections (run_identity,
 * after the store: the certificate must name its SID). */
static int run_identity_of(struct running *r)
{
	int rc = run_identity(r);

	if (!rc)
		server_secure(r->srv, r->tls, r->crl, r->capkeys);
	return rc;
}

static int run_start(struct running *r)
{
	const struct server_part parts[] = {
		{ "the scrubber", scrubber_part_open, scrubber_part_close, &r->a },
		{ "the rebalancer's kinds", rebalancer_part_open, NULL, NULL },
		{ "the back references' and drain's operations", ops_part_open, NULL, NULL },
	};
	const char *what = NULL;
	int rc = server_start(r->srv, parts, sizeof(parts) / sizeof(parts[0]), &what);

	return rc ? fail(what, rc) : 0;
}

/* (served: it served and stopped without an error - said once all is
 * closed, so that a stop that hangs after it hangs in the exit itself) */
static void run_close(struct running *r, bool served)
{
	server_close(r->srv);
	if (served)
		log_info("stopped cleanly");
	tls_conf_free(r->tls);
	crl_close(r->crl);
	cap_ring_close(r->capkeys);
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->logfd >= 0)
		close(r->logfd);
}

static int cmd_run(int argc, char **argv)
{
	struct running *r = calloc(1, sizeof(*r));
	struct sockaddr_in addr;
	bool served = false;
	int rc;

	if (!r)
		return fail("run", -ENOMEM);
	r->sfd = r->logfd = -1;
	rc = parse(argc, argv, "run", "45689:;=>?ABCDEF", &r->a);   /* (OPT_ letters: + '0') */
	if (!rc)
		rc = run_args(r, &addr);
	if (rc) {
		free(r);
		return rc;
	}
	if (!(rc = run_log_and_signals(r)) && !(rc = run_store(r, &addr)) &&
	    !(rc = run_identity_of(r)) && !(rc = run_start(r))) {
		log_info("serving %s on %s (data %s)", r->sidhex, server_where(r->srv), r->a.data);
		printf("ready %s %s\n", r->sidhex, server_where(r->srv));
		fflush(stdout);
		rc = server_serve(r->srv, r->sfd);
		if (rc)
			rc = fail("accept", rc);
		served = rc == 0;
	}
	run_close(r, served);
	free(r);
	return rc;
}

static int cmd_inspect(int argc, char **argv)
{
	struct args a;
	struct store *s = NULL;
	struct ofs_oid oid;
	int rc = parse(argc, argv, "inspect", "17", &a);

	if (rc)
		return rc;
	if (!a.operand) {
		usage_error("%s needs an OID", "inspect");
		return EXIT_USAGE;
	}
	if (oid_from_hex(a.operand, &oid)) {
		usage_error("'%s' is not an OID (32 hex digits)", a.operand);
		return EXIT_USAGE;
	}
	rc = open_data(a.data, true, &s);
	if (rc)
		return rc;
	rc = inspect_object(s, oid, a.json, stdout);
	store_close(s);
	if (rc == -ENOENT) {
		fprintf(stderr, "ofs-server: %s: no such object in %s\n", a.operand, a.data);
		return EXIT_FAIL;
	}
	if (rc)
		return fail(a.operand, rc);
	return 0;
}

/* ops [--json]: the operation table's roles (docs/design.md, "Security"), for
 * operators and for the tests that try every operation as every role. */
static int cmd_ops(int argc, char **argv)
{
	bool json = argc == 2 && !strcmp(argv[1], "--json");
	json_t *all;
	int rc = 0;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_usage_for(usage_text, "ofs-server", "ops", NULL);
			return 0;
		}
	all = json_array();
	if (argc > 2 || (argc == 2 && !json)) {
		usage_error("%s", "ops takes only --json");
		json_decref(all);
		return EXIT_USAGE;
	}
	if (!all)
		return EXIT_FAIL;
	for (uint16_t op = 1; op < OFS_OP_MAX; op++) {
		const struct op_def *r = op_def(op);
		json_t *roles = json_array();
		if (!r || !roles) {
			json_decref(roles);
			continue;
		}
		if (r->roles & OPR_USER)
			json_array_append_new(roles, json_string("user"));
		if (r->roles & OPR_ADMIN)
			json_array_append_new(roles, json_string("admin"));
		if (r->roles & OPR_SERVER)
			json_array_append_new(roles, json_string("server"));
		if (json) {
			json_array_append_new(all, json_pack("{s:i, s:s, s:o}", "op", op, "name",
							     ofs_op_name(op), "roles", roles));
		} else {
			printf("%-14s %s%s%s\n", ofs_op_name(op), (r->roles & OPR_USER) ? "user " : "",
			       (r->roles & OPR_ADMIN) ? "admin " : "",
			       (r->roles & OPR_SERVER) ? "server" : "");
			json_decref(roles);
		}
	}
	if (json) {
		json_t *top = json_pack("{s:o}", "ops", all);
		if (!top || json_dumpf(top, stdout, JSON_COMPACT))
			rc = EXIT_FAIL;
		printf("\n");
		json_decref(top);
	} else {
		json_decref(all);
	}
	return rc;
}

/* tool --data DIR [--json] COMMAND ARGS: options first, then the command. */
static int cmd_tool(int argc, char **argv)
{
	const char *data = NULL;
	bool json = false;
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int nrest = 0, rc;

	if (!rest)
		return EXIT_FAIL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--data") && i + 1 < argc)
			data = argv[++i];
		else if (!strncmp(argv[i], "--data=", 7))
			data = argv[i] + 7;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			free(rest);
			tool_help();
			return 0;
		} else
			rest[nrest++] = argv[i];
	}
	/* (the tool's words are OIDs, numbers, keys and names: none is an
	 * option word, --json and --help aside) */
	if (data && !cli_value_ok(&prog, "--data", data, 0, &rc)) {
		free(rest);
		return rc;
	}
	for (int i = 0; i < nrest; i++) {
		if (!cli_value_ok(&prog, "tool", rest[i], 0, &rc)) {
			free(rest);
			return rc;
		}
	}
	if (!data) {
		free(rest);
		usage_error("%s needs --data DIR", "tool");
		return EXIT_USAGE;
	}
	rc = tool_main(data, nrest, rest, json);
	free(rest);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {          /* help [COMMAND] */
		cli_usage_for(usage_text, "ofs-server", argc > 2 ? argv[2] : NULL, NULL);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ofs-server %s\n", OFS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "init"))
		return cmd_init(argc - 1, argv + 1);
	if (!strcmp(argv[1], "certify"))
		return cmd_certify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "inspect"))
		return cmd_inspect(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ops"))
		return cmd_ops(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tool"))
		return cmd_tool(argc - 1, argv + 1);
	usage_error("unknown command '%s'", argv[1]);
	return EXIT_USAGE;
}
