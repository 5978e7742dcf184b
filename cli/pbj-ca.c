/* pbj-ca.c - ofs-pbj ca init | issue | revoke | rotate (see pbj-ca.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli/common.h"
#include "cli/pbj-ca.h"
#include "lib/ca.h"
#include "lib/cap.h"
#include "lib/conn.h"
#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"
#include "lib/proto.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 3

static const char ca_usage_text[] =
	"usage: ofs-pbj ca init CADIR\n"
	"       ofs-pbj ca issue CADIR --out IDDIR (--user NAME --uid N [--gid N[,N]...] | "
	"--admin NAME) [--days D]\n"
	"       ofs-pbj ca revoke CADIR CERT.pem\n"
	"       ofs-pbj ca rotate CADIR [--resend]\n";

static const struct cli_prog ca_prog = { "ofs-pbj ca", ca_usage_text };

static int ca_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofs-pbj ca: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", ca_usage_text);
	return EXIT_USAGE;
}

/* "N[,N]..." into the identity's gids. */
static int parse_gids(const char *s, struct ident *id)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	id->ngids = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (id->ngids == IDENT_GIDS_MAX || parse_uint(tok, 0, UINT32_MAX - 1, &v)) {
			rc = -EINVAL;
			break;
		}
		id->gids[id->ngids++] = (uint32_t)v;
	}
	free(copy);
	return rc || id->ngids == 0 ? -EINVAL : 0;
}

struct issue_args {
	const char *out, *user, *admin, *gids;
	uint64_t uid, days;
	bool have_uid;
	bool helped;            /* --help in place of a value: usage printed */
};

static int issue_parse(int argc, char **argv, struct issue_args *a)
{
	a->days = CA_DAYS_DEFAULT;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int st;
		if (!v)
			return ca_usage("%s needs a value", o);
		if (!cli_value_ok(&ca_prog, o, v, 0, &st)) {
			a->helped = st == 0;
			return st;
		}
		if (!strcmp(o, "--out"))
			a->out = v;
		else if (!strcmp(o, "--user"))
			a->user = v;
		else if (!strcmp(o, "--admin"))
			a->admin = v;
		else if (!strcmp(o, "--gid"))
			a->gids = v;
		else if (!strcmp(o, "--uid")) {
			if (parse_uint(v, 0, UINT32_MAX - 1, &a->uid))
				return ca_usage("--uid %s: a number from 0 to 4294967294", v);
			a->have_uid = true;
		} else if (!strcmp(o, "--days")) {
			if (parse_uint(v, 1, CA_DAYS_MAX, &a->days))
				return ca_usage("--days %s: from 1 to 36500", v);
		} else
			return ca_usage("unknown option '%s'", o);
		i++;
	}
	if (!a->out)
		return ca_usage("issue needs --out IDDIR%s", "");
	if (!a->user == !a->admin)
		return ca_usage("issue needs one of --user NAME or --admin NAME%s", "");
	if (a->admin && (a->have_uid || a->gids))
		return ca_usage("--uid and --gid go with --user%s", "");
	if (a->user && !a->have_uid)
		return ca_usage("--user needs --uid N%s", "");
	return 0;
}

/* Tests issue certificates that have already expired: OFS_CA_VALID_SECS
 * (seconds from now; negative: in the past). Left out of release builds. */
static long test_valid_secs(void)
{
#ifndef OFS_NO_TEST_HOOKS
	const char *e = getenv("OFS_CA_VALID_SECS");
	if (e && *e)
		return strtol(e, NULL, 10);
#endif
	return 0;
}

static int cmd_issue(const char *cadir, int argc, char **argv)
{
	struct issue_args a = { 0 };
	struct ident id = { 0 };
	char why[TLS_WHY_MAX], desc[160];
	int rc = issue_parse(argc, argv, &a);

	if (rc || a.helped)
		return rc;
	if (a.admin) {
		id.role = IDENT_ADMIN;
		snprintf(id.name, sizeof(id.name), "%s", a.admin);
	} else {
		id.role = IDENT_USER;
		snprintf(id.name, sizeof(id.name), "%s", a.user);
		id.uid = (uint32_t)a.uid;
		id.gids[0] = id.uid;
		id.ngids = 1;
		if (a.gids && parse_gids(a.gids, &id))
			return ca_usage("--gid %s: numbers from 0 to 4294967294, comma-separated "
					"(at most 32)", a.gids);
	}
	if (!ident_name_ok(id.name) || strlen(a.user ? a.user : a.admin) > IDENT_NAME_MAX)
		return ca_usage("'%s': a name is 1 to 64 of A-Z a-z 0-9 . _ -, not starting "
				"with . or -", a.user ? a.user : a.admin);
	rc = ca_issue(cadir, &id, (int)a.days, test_valid_secs(), a.out, 0, why);
	if (rc) {
		fprintf(stderr, "ofs-pbj: %s\n", why);
		return EXIT_FAIL;
	}
	ident_describe(&id, desc, sizeof(desc));
	printf("%s: %s, for %llu days\n", a.out, desc, (unsigned long long)a.days);
	return 0;
}

#define REVOKE_MS 5000

/* Send op with body w to every server not out of service: how many took
 * it; missed (may be NULL) lists the addresses of those that did not. */
static int send_all(uint16_t op, struct wbuf *w, const char *const *cluster, size_t ncluster,
		    size_t *sent, size_t *asked, char *missed, size_t mlen)
{
	struct ofs_req q = { .op = op, .data = w->data, .data_len = w->len };
	struct ofs_server *e = NULL;
	size_t ne = 0;
	int rc = conn_fetch_table(cluster, ncluster, REVOKE_MS, &e, &ne, NULL);

	*sent = *asked = 0;
	if (missed)
		missed[0] = '\0';
	if (rc)
		return rc;
	for (size_t i = 0; i < ne && !wbuf_error(w); i++) {
		int one;
		if (e[i].state == OFS_SERVER_OUT || !e[i].address[0])
			continue;
		(*asked)++;
		one = conn_call_once_sid(e[i].address, &e[i].sid, &q, REVOKE_MS, NULL, NULL);
		if (!one)
			(*sent)++;
		else if (!conn_is_transport_error(one))
			rc = one;      /* (refused: the caller says why) */
		if (one && missed)
			snprintf(missed + strlen(missed), mlen - strlen(missed), " %s",
				 e[i].address);
	}
	rc = rc ? rc : wbuf_error(w);
	free(e);
	return rc;
}

/* CADIR/cap.key's keys (0600 required). */
static int read_keys(const char *path, struct cap_key keys[CAP_MAX_KEYS], size_t *n, char *why)
{
	struct cap_ring *r = NULL;
	int rc = tls_key_mode_ok(path, why);

	if (!rc && (rc = cap_ring_open(path, NULL, &r)) != 0)
		snprintf(why, TLS_WHY_MAX, "%s: %s", path,
			 rc == -EINVAL ? "not a capability key file" : ofs_strerror(rc));
	if (!rc)
		*n = cap_ring_get(r, keys);
	cap_ring_close(r);
	return rc;
}

/* A new current key, the current one kept as the previous, written to
 * path (0600, whole) before anything is sent. */
static int rotate_file(const char *path, struct cap_key keys[CAP_MAX_KEYS], size_t *n)
{
	char text[CAP_KEYS_TEXT_MAX];
	int rc;

	keys[1] = keys[0];
	keys[0].id = keys[1].id + 1;
	*n = 2;
	if (keys[0].id == 0 || getrandom(keys[0].key, CAP_KEY_LEN, 0) != CAP_KEY_LEN) {
		fprintf(stderr, "ofs-pbj: %s: cannot make a new key\n", path);
		return -EIO;
	}
	rc = fdio_write_file(path, text, cap_keys_format(keys, *n, text), 0600);
	OPENSSL_cleanse(text, sizeof(text));
	if (rc)
		fprintf(stderr, "ofs-pbj: %s: %s\n", path, ofs_strerror(rc));
	return rc;
}

/*
 * rotate CADIR [--resend]: a new capability key becomes the current one,
 * the current one the previous (older ones are dropped), and both go to
 * every server in service, signed by the CA's key (servers believe the
 * signature, not the sender) - they accept capabilities under either, so
 * a client mid-file is not broken. --resend sends the keys as they are
 * (for servers that were down at the rotation).
 */
static int cmd_rotate(const char *cadir, int argc, char **argv, const char *const *cluster,
		      size_t ncluster)
{
	char path[4200], why[TLS_WHY_MAX], missed[1024];
	struct cap_key keys[CAP_MAX_KEYS];
	size_t n = 0, sent = 0, asked = 0;
	bool resend = argc == 1 && !strcmp(argv[0], "--resend");
	struct ca *ca = NULL;
	struct wbuf w;
	int rc;

	if (argc > 1 || (argc == 1 && !resend))
		return ca_usage("rotate takes CADIR and, to send the keys again, --resend%s", "");
	if (!ncluster)
		return ca_usage("rotate sends to the cluster: give --cluster HOST:PORT or set "
				"OFS_CLUSTER%s", "");
	snprintf(path, sizeof(path), "%s/cap.key", cadir);
	rc = read_keys(path, keys, &n, why);
	if (!rc)
		rc = ca_open(cadir, &ca, why);
	if (rc) {
		fprintf(stderr, "ofs-pbj: %s\n", why);
		OPENSSL_cleanse(keys, sizeof(keys));
		return EXIT_FAIL;
	}
	wbuf_init(&w);
	if (!resend)
		rc = rotate_file(path, keys, &n);
	if (!rc && (rc = ca_sign_keys(ca, keys, n, &w)) != 0)
		fprintf(stderr, "ofs-pbj: %s: cannot sign the capability keys: %s\n", cadir,
			ofs_strerror(rc));
	ca_close(ca);
	if (rc) {
		wbuf_free(&w);
		OPENSSL_cleanse(keys, sizeof(keys));
		return EXIT_FAIL;
	}
	rc = send_all(OFS_OP_CAPKEYS, &w, cluster, ncluster, &sent, &asked, missed, sizeof(missed));
	OPENSSL_cleanse(w.data, w.len);
	wbuf_free(&w);
	if (rc || sent < asked) {
		fprintf(stderr, "ofs-pbj: capability key %u is current in %s, but %zu of %zu servers "
			"in service did not take it%s%s%s: once they are up, run 'ofs-pbj ca rotate "
			"%s --resend'\n", (unsigned)keys[0].id, path, asked - sent, asked,
			missed[0] ? " (" : "", missed[0] ? missed + 1 : "", missed[0] ? ")" : "", cadir);
		if (rc)
			fprintf(stderr, "ofs-pbj: %s\n", ofs_strerror(rc));
		OPENSSL_cleanse(keys, sizeof(keys));
		return EXIT_FAIL;
	}
	printf("capability key %u is current (previous: %u): all %zu servers in service have it\n",
	       (unsigned)keys[0].id, n > 1 ? (unsigned)keys[1].id : 0u, asked);
	OPENSSL_cleanse(keys, sizeof(keys));
	return 0;
}

/* ---- revoke ------------------------------------------------------------------ */

/* What a revoke works with. */
struct revoke {
	char path[4200];             /* CADIR/revoked: the CA's list */
	char capath[4200];           /* CADIR/ca.crt: what verifies a CRL */
	struct ca *ca;
	struct crl *mine;            /* the CA's list */
	struct crl *theirs;          /* the newest CRL the servers hold */
	struct crl *sent;            /* the CRL this revoke sends */
	struct ofs_server *e;        /* the servers in service */
	size_t ne;
};

static void revoke_free(struct revoke *v)
{
	ca_close(v->ca);
	crl_close(v->mine);
	crl_close(v->theirs);
	crl_close(v->sent);
	free(v->e);
}

/* The servers in service: not out, with an address. */
static int in_service(const char *const *cluster, size_t ncluster, struct revoke *v)
{
	size_t k = 0;
	int rc = conn_fetch_table(cluster, ncluster, REVOKE_MS, &v->e, &v->ne, NULL);

	if (rc)
		return rc;
	for (size_t i = 0; i < v->ne; i++)
		if (v->e[i].state != OFS_SERVER_OUT && v->e[i].address[0])
			v->e[k++] = v->e[i];
	v->ne = k;
	return 0;
}

/* One REVOKED request (w: a pull or a CRL) to addr: the number its
 * answer names, and the CRL it carries offered to into (NULL: none
 * wanted; one the CA did not sign is refused). */
static int revoked_call(const struct ofs_server *to, const struct wbuf *w, struct crl *into,
			uint64_t *number)
{
	struct ofs_req q = { .op = OFS_OP_REVOKED, .data = w->data, .data_len = w->len };
	const uint8_t *der = NULL;
	uint8_t *b = NULL;
	size_t bn = 0, derlen = 0;
	int rc = wbuf_error(w) ? wbuf_error(w) : conn_call_once_sid(to->address, &to->sid, &q, REVOKE_MS, &b, &bn);

	if (!rc)
		rc = crl_answer_decode(b, bn, number, &der, &derlen);
	if (!rc && der && into)
		rc = crl_offer(into, der, derlen, NULL);
	free(b);
	return rc < 0 ? rc : 0;
}

/*
 * The newest CRL the servers in service hold, into v->theirs (pulls
 * naming the CA's number: those holding a newer one send it); *newest
 * is its number (0: none holds one). When they hold an older one than
 * the CA's (the servers that took the CA's are gone), it is fetched
 * whole, to say what is new to them. 0 once one answered; else the
 * first refusal, or -OFS_EUNREACHABLE.
 */
static int pull_theirs(struct revoke *v, uint64_t *newest)
{
	uint64_t mine = crl_number(v->mine);
	size_t answered = 0, at = 0;
	struct wbuf w;
	int rc = 0, refused = 0;

	*newest = 0;
	wbuf_init(&w);
	crl_pull_encode(&w, mine);
	for (size_t i = 0; i < v->ne; i++) {
		uint64_t num = 0;
		int one = revoked_call(&v->e[i], &w, v->theirs, &num);
		if (one) {
			refused = refused || conn_is_transport_error(one) ? refused : one;
			continue;
		}
		answered++;
		if (num > *newest) {
			*newest = num;
			at = i;
		}
	}
	wbuf_free(&w);
	if (!answered)
		return refused ? refused : -OFS_EUNREACHABLE;
	if (*newest && *newest < mine) {
		uint64_t num = 0;
		wbuf_init(&w);
		crl_pull_encode(&w, 0);
		rc = revoked_call(&v->e[at], &w, v->theirs, &num);
		wbuf_free(&w);
	}
	return rc;
}

/* The CRL der (numbered number) to every server in service: *took how
 * many hold it now; missed lists the others' addresses. The first
 * refusal, or 0. */
static int push(struct revoke *v, const struct wbuf *der, uint64_t number, size_t *took,
		char *missed, size_t mlen)
{
	int rc = 0;

	*took = 0;
	missed[0] = '\0';
	for (size_t i = 0; i < v->ne; i++) {
		uint64_t held = 0;
		int one = revoked_call(&v->e[i], der, NULL, &held);
		if (!one && held == number) {
			(*took)++;
			continue;
		}
		if (one && !rc && !conn_is_transport_error(one))
			rc = one;
		snprintf(missed + strlen(missed), mlen - strlen(missed), " %s", v->e[i].address);
	}
	return rc;
}

/* Every serial of the CRL sent that base (the list the servers had)
 * does not hold, a line each. */
static void print_new(struct revoke *v, struct crl *base, uint64_t number)
{
	struct crl_entry *e = NULL;
	char hex[2 * CRL_SERIAL_MAX + 1];
	size_t n = 0;

	if (crl_entries(v->sent, &e, &n)) {
		fprintf(stderr, "ofs-pbj: %s\n", ofs_strerror(-ENOMEM));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (crl_has(base, &e[i].serial))
			continue;
		crl_serial_hex(&e[i].serial, hex);
		printf("new in CRL %llu: %s\n", (unsigned long long)number, hex);
	}
	free(e);
}

/* The CA's key, its list, and the servers in service. */
static int revoke_open(const char *cadir, const char *const *cluster, size_t ncluster,
		       struct revoke *v, char *why)
{
	int rc;

	snprintf(v->path, sizeof(v->path), "%s/revoked", cadir);
	snprintf(v->capath, sizeof(v->capath), "%s/ca.crt", cadir);
	rc = ca_open(cadir, &v->ca, why);
	if (!rc && (rc = crl_open(v->path, v->capath, &v->mine)) != 0)
		snprintf(why, TLS_WHY_MAX, "%s: %s", v->path,
			 rc == -EINVAL ? "not a revocation list" : ofs_strerror(rc));
	if (!rc && ((rc = crl_open(NULL, v->capath, &v->theirs)) != 0 ||
		    (rc = crl_open(NULL, v->capath, &v->sent)) != 0))
		snprintf(why, TLS_WHY_MAX, "%s: %s", v->capath, ofs_strerror(rc));
	if (!rc && (rc = in_service(cluster, ncluster, v)) != 0)
		snprintf(why, TLS_WHY_MAX, "%s", ofs_strerror(rc));
	return rc;
}

/*
 * revoke CADIR CERT.pem: the CA signs a CRL numbered above every list it
 * and the servers hold, revoking what both revoke and this certificate;
 * it goes to every server in service, and CADIR/revoked records it only
 * once one of them holds it - a revoke that reached no server (refused,
 * or none up) records nothing. It prints every serial of the CRL that the
 * list the servers had did not hold.
 */
static int cmd_revoke(const char *cadir, int argc, char **argv, const char *const *cluster,
		      size_t ncluster)
{
	char path[4200], hex[2 * CRL_SERIAL_MAX + 1], why[TLS_WHY_MAX], missed[1024];
	struct revoke v = { 0 };
	struct crl_serial s;
	uint64_t newest = 0, number = 0;
	size_t took = 0;
	struct wbuf der;
	int rc;

	if (argc != 1)
		return ca_usage("revoke takes CADIR and one CERT.pem%s", "");
	if (!cli_value_ok(&ca_prog, "CERT.pem", argv[0], 0, &rc))
		return rc;
	if (!ncluster)
		return ca_usage("revoke sends to the cluster: give --cluster HOST:PORT or set "
				"OFS_CLUSTER%s", "");
	snprintf(path, sizeof(path), "%s/ca.crt", cadir);
	/* (each file named on its own: which of the two is missing) */
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "ofs-pbj: %s: not a CA directory (%s: %s)\n", cadir, path,
			strerror(errno));
		return EXIT_USAGE;
	}
	if (access(argv[0], R_OK) != 0) {
		fprintf(stderr, "ofs-pbj: %s: %s\n", argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	rc = tls_cert_serial(argv[0], path, &s);
	if (rc) {
		fprintf(stderr, "ofs-pbj: %s: %s\n", argv[0],
			rc == -OFS_EUNTRUSTED ? "not a certificate this CA issued"
			: rc == -EINVAL	      ? "not a PEM certificate"
					      : ofs_strerror(rc));
		return EXIT_FAIL;
	}
	crl_serial_hex(&s, hex);
	wbuf_init(&der);
	rc = revoke_open(cadir, cluster, ncluster, &v, why);
	if (!rc && (rc = pull_theirs(&v, &newest)) != 0)
		snprintf(why, sizeof(why), "%s", ofs_strerror(rc));
	if (!rc && (rc = ca_next_crl(v.ca, v.mine, v.theirs, &s, 1, &der, &number)) != 0)
		snprintf(why, sizeof(why), "cannot sign the revocation list: %s", ofs_strerror(rc));
	if (!rc && (rc = crl_offer(v.sent, der.data, der.len, NULL)) < 0)
		snprintf(why, sizeof(why), "the CRL made does not verify: %s", ofs_strerror(rc));
	if (rc >= 0) {
		rc = push(&v, &der, number, &took, missed, sizeof(missed));
		/* (refused everywhere - a user's pull is answered, its CRL is
		 * not taken - or no server up: says which) */
		if (!took)
			snprintf(why, sizeof(why), "no server took CRL %llu%s%s%s",
				 (unsigned long long)number, rc ? " (" : "",
				 rc ? ofs_strerror(rc) : "", rc ? ")" : "");
	}
	if (!took) {
		fprintf(stderr, "ofs-pbj: revoke of %s: %s: nothing recorded in %s/revoked\n", hex,
			why, cadir);
		goto out;
	}
	printf("revoked %s: %zu of %zu servers in service have CRL %llu, %zu serial(s) (the "
	       "others learn it by gossip)\n", hex, took, v.ne, (unsigned long long)number,
	       crl_count(v.sent));
	print_new(&v, newest && newest == crl_number(v.mine) ? v.mine : v.theirs, number);
	if (took < v.ne)
		fprintf(stderr, "ofs-pbj: CRL %llu did not reach%s%s%s\n", (unsigned long long)number,
			missed, rc < 0 ? ": " : "", rc < 0 ? ofs_strerror(rc) : "");
	rc = crl_offer(v.mine, der.data, der.len, NULL);
	if (rc < 0)
		fprintf(stderr, "ofs-pbj: %s: %s: the servers have CRL %llu, but it is not recorded "
			"there (the next revoke learns it from them)\n", v.path, ofs_strerror(rc),
			(unsigned long long)number);
out:
	wbuf_free(&der);
	revoke_free(&v);
	return took && rc >= 0 ? 0 : EXIT_FAIL;
}

int pbj_ca_main(int argc, char **argv, const char *const *cluster, size_t ncluster)
{
	char why[TLS_WHY_MAX];
	int rc;

	if (argc < 3)
		return ca_usage("%s", argc < 2 ? "missing command" : "missing CADIR");
	if (!cli_value_ok(&ca_prog, "CADIR", argv[2], 0, &rc))
		return rc;
	if (!strcmp(argv[1], "init")) {
		if (argc != 3)
			return ca_usage("init takes CADIR only%s", "");
		rc = ca_init(argv[2], why);
		if (rc) {
			fprintf(stderr, "ofs-pbj: %s\n", why);
			return EXIT_FAIL;
		}
		printf("%s: a new cluster CA (ca.key, ca.crt) and capability key (cap.key)\n",
		       argv[2]);
		return 0;
	}
	if (!strcmp(argv[1], "issue"))
		return cmd_issue(argv[2], argc - 3, argv + 3);
	if (!strcmp(argv[1], "revoke"))
		return cmd_revoke(argv[2], argc - 3, argv + 3, cluster, ncluster);
	if (!strcmp(argv[1], "rotate"))
		return cmd_rotate(argv[2], argc - 3, argv + 3, cluster, ncluster);
	return ca_usage("unknown command '%s'", argv[1]);
}
