/*
 * capcheck.c - what the capability check costs a data request, on the
 * real code (server/access.c, lib/cap.c, the store), in one process.
 *
 *   capcheck [N]
 *
 * In a fresh directory under $TMPDIR (else /tmp): a store; a metafile M
 * (uid 1000, gid 1000, mode 0644) and a dfile D whose back reference
 * names M; a capability key file (0600) read into a cap_ring; a user
 * (uid 1000, gid 1000, a random certificate fingerprint) and the
 * capability access_grant gives it for M. Then a READ of D is checked N
 * times (N: the argument, else OFS_BENCH_CAP_N, else 200 000) each way:
 *
 *   cap_full    access_check with no cache: decode, key lookup, HMAC-SHA256
 *               and D's attribute read - a connection's first request
 *               with a capability
 *   cap_cached  access_check with one access_cache kept across the calls:
 *               every later request of that connection with the same bytes
 *   getattr     store_getattr of D alone (one LMDB attribute read)
 *   hmac        cap_check of the decoded capability alone (its body encoded
 *               again, OpenSSL's one-shot HMAC over it, then expiry, binding
 *               and coverage)
 *   hmac_raw    the baseline of hmac: HMAC-SHA256 of the same bytes under
 *               the same key through one EVP_MAC_CTX kept across the calls
 *               (the hashing itself, without the per-call setup)
 *
 * getattr and hmac are what cap_full is made of; what is left is the
 * decode, two allocations and the key ring's lock. This is the one place
 * outside lib/cap.c that calls OpenSSL: the baseline is OpenSSL itself.
 * Each way is timed ROUNDS times in turn after a warm-up, the best round
 * kept. Every call must return 0 (one that failed would time the
 * refusal, not the check), and before timing, a capability with one bit
 * of its MAC flipped must be refused, so the timed path is the one that
 * verifies. It prints
 *
 *   cap_full_us=2.927 cap_cached_us=0.010 getattr_us=0.340 hmac_us=1.680 hmac_raw_us=0.301
 *   n=200000 cap_bytes=115                                           (one line)
 *
 * (microseconds per call) and removes its directory. Exit 0, 2 on bad
 * usage, 3 when a step fails (its message printed).
 */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "lib/cap.h"
#include "lib/fdio.h"
#include "lib/ident.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "server/access.h"
#include "store/store.h"

#define ROUNDS 3                 /* timed rounds of each; the best is kept */
#define WARMUP 2000              /* untimed calls before each timed round */
#define BENCH_UID 1000
#define BENCH_GID 1000

/* Everything the timed calls use. */
struct bench {
	char dir[4096];                  /* the fresh directory ("" before mkdtemp) */
	struct store *s;
	struct cap_ring *ring;
	struct ident who;                /* the user */
	struct ofs_oid m, d;             /* the metafile and its dfile */
	struct wbuf cap;                 /* the capability granted for m */
	struct ofs_cap dec;              /* cap, decoded */
	struct cap_key keys[CAP_MAX_KEYS];
	size_t nkeys;
	struct ofs_req *q;               /* READ of d */
	struct access_req ar_full;       /* no cache */
	struct access_req ar_cached;     /* with cache */
	struct access_cache *cache;
	struct ofs_attr *a;              /* getattr's out-parameter */
	uint64_t now;                    /* Unix seconds, fixed for the run */
	EVP_MAC *hmac;                   /* hmac_raw's: HMAC, fetched once */
	EVP_MAC_CTX *mctx;               /* keyed with keys[0] once */
};

/* One way of checking: one call, 0 or its error. */
struct way {
	const char *name;                /* the output key, without "_us" */
	int (*one)(struct bench *b);
};

static int one_full(struct bench *b)
{
	const char *why = NULL;

	return access_check(b->s, b->ring, &b->ar_full, b->q, &why);
}

static int one_cached(struct bench *b)
{
	const char *why = NULL;

	return access_check(b->s, b->ring, &b->ar_cached, b->q, &why);
}

static int one_getattr(struct bench *b)
{
	return store_getattr(b->s, b->d, b->a);
}

static int one_hmac(struct bench *b)
{
	return cap_check(&b->dec, b->keys, b->nkeys, b->who.fpr, b->m, CAP_READ, b->now);
}

/* HMAC-SHA256 of cap's body (all of it but its MAC) into mac. */
static int raw_mac(struct bench *b, uint8_t mac[CAP_MAC_LEN])
{
	size_t got = 0;

	if (!EVP_MAC_init(b->mctx, NULL, 0, NULL) ||
	    !EVP_MAC_update(b->mctx, b->cap.data, b->cap.len - CAP_MAC_LEN) ||
	    !EVP_MAC_final(b->mctx, mac, &got, CAP_MAC_LEN) || got != CAP_MAC_LEN)
		return -ENOMEM;
	return 0;
}

static int one_hmac_raw(struct bench *b)
{
	uint8_t mac[CAP_MAC_LEN];

	return raw_mac(b, mac);
}

static const struct way ways[] = {
	{ "cap_full", one_full },
	{ "cap_cached", one_cached },
	{ "getattr", one_getattr },
	{ "hmac", one_hmac },
	{ "hmac_raw", one_hmac_raw },
};
#define NWAYS (sizeof(ways) / sizeof(ways[0]))

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* N from argv[1], else OFS_BENCH_CAP_N, else 200 000: 0 and *n, or
 * -EINVAL (not a positive number). */
static int parse_n(int argc, char **argv, unsigned long *n)
{
	const char *v = argc > 1 ? argv[1] : getenv("OFS_BENCH_CAP_N");
	unsigned long x;
	char *end;

	if (!v || !*v) {
		*n = 200000;
		return 0;
	}
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x == 0 || v[0] == '-')
		return -EINVAL;
	*n = x;
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p) ? -errno : 0;
}

/* hmac_raw's context: HMAC-SHA256 keyed with the current key. 0 or
 * -ENOMEM (OpenSSL's errors are not told apart here). */
static int mac_open(struct bench *b)
{
	char digest[] = "SHA256";
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};

	b->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	b->mctx = b->hmac ? EVP_MAC_CTX_new(b->hmac) : NULL;
	if (!b->mctx || !EVP_MAC_init(b->mctx, b->keys[0].key, CAP_KEY_LEN, p))
		return -ENOMEM;
	return 0;
}

/* Make the store, the objects, the key, the user and its capability.
 * 0, or an error with *what naming the step. */
static int setup(struct bench *b, const char **what)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200], text[CAP_KEYS_TEXT_MAX];
	struct cap_key k = { .id = 1 };
	struct ofs_sid sid;
	size_t len;
	int rc;

	*what = "temporary directory";
	if (snprintf(b->dir, sizeof(b->dir), "%s/capcheck.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    (int)sizeof(b->dir)) {
		b->dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(b->dir)) {
		rc = -errno;
		b->dir[0] = '\0';
		return rc;
	}
	*what = "allocation";
	b->q = calloc(1, sizeof(*b->q));
	b->a = calloc(1, sizeof(*b->a));
	b->cache = calloc(1, sizeof(*b->cache));
	if (!b->q || !b->a || !b->cache)
		return -ENOMEM;

	*what = "store_init";
	snprintf(path, sizeof(path), "%s/data", b->dir);
	rc = store_init(path, 64 << 10, NULL, 0, &sid);
	if (rc)
		return rc;
	*what = "store_open";
	rc = store_open(path, false, &b->s);
	if (rc)
		return rc;

	/* M, then D owned by it (as a put makes them, without their bytes). */
	*what = "store_create_oid of the metafile";
	memset(b->a, 0, sizeof(*b->a));
	b->a->type = OFS_OBJ_METAFILE;
	b->a->uid = BENCH_UID;
	b->a->gid = BENCH_GID;
	b->a->mode = 0644;
	rc = store_create_oid(b->s, b->a, (struct ofs_oid){ { 0 } }, &b->m);
	if (rc)
		return rc;
	*what = "store_create_oid of the dfile";
	memset(b->a, 0, sizeof(*b->a));
	b->a->type = OFS_OBJ_DFILE;
	b->a->backref.owner = b->m;
	rc = store_create_oid(b->s, b->a, (struct ofs_oid){ { 0 } }, &b->d);
	if (rc)
		return rc;

	/* The key file, 0600, and the ring read from it. */
	*what = "getrandom of the key";
	if (getrandom(k.key, sizeof(k.key), 0) != (ssize_t)sizeof(k.key))
		return -EIO;
	*what = "writing the key file";
	len = cap_keys_format(&k, 1, text);
	explicit_bzero(&k, sizeof(k));
	snprintf(path, sizeof(path), "%s/cap.key", b->dir);
	rc = fdio_write_file(path, text, len, 0600);
	explicit_bzero(text, sizeof(text));
	if (rc)
		return rc;
	*what = "cap_ring_open";
	rc = cap_ring_open(path, NULL, &b->ring);
	if (rc)
		return rc;
	b->nkeys = cap_ring_get(b->ring, b->keys);

	/* The user, and the capability its GETATTR of M would bring. */
	b->who.role = IDENT_USER;
	snprintf(b->who.name, sizeof(b->who.name), "bench");
	b->who.uid = BENCH_UID;
	b->who.gids[0] = BENCH_GID;
	b->who.ngids = 1;
	*what = "getrandom of the fingerprint";
	if (getrandom(b->who.fpr, sizeof(b->who.fpr), 0) != (ssize_t)sizeof(b->who.fpr))
		return -EIO;
	b->now = (uint64_t)time(NULL);
	*what = "store_getattr of the metafile";
	rc = store_getattr(b->s, b->m, b->a);
	if (rc)
		return rc;
	*what = "access_grant";
	wbuf_init(&b->cap);
	rc = access_grant(b->ring, sid, CAP_DEFAULT_TTL_S, b->now, &b->who, b->m, b->a, false,
			  &b->cap);
	if (rc)
		return rc;
	if (b->cap.len == 0)
		return -EACCES;      /* (mode 0644 gives the owner rights) */
	*what = "cap_decode";
	rc = cap_decode(b->cap.data, b->cap.len, &b->dec);
	if (rc)
		return rc;
	*what = "EVP_MAC of HMAC-SHA256";
	rc = mac_open(b);
	if (rc)
		return rc;

	b->q->op = OFS_OP_READ;
	b->q->oid = b->d;
	b->q->length = 4096;
	b->q->cap = b->cap.data;
	b->q->cap_len = (uint16_t)b->cap.len;
	b->q->who = &b->who;
	b->ar_full = (struct access_req){ .who = &b->who, .cap = b->cap.data,
					  .cap_len = b->cap.len, .cache = NULL, .now = b->now };
	b->ar_cached = b->ar_full;
	b->ar_cached.cache = b->cache;
	return 0;
}

/*
 * Before timing: every way answers 0, the cache holds the capability
 * after one check (so cap_cached times the cached path), the same
 * capability with a bit of its MAC flipped is refused (so cap_full times
 * a check that verifies), and hmac_raw's MAC is the capability's (the
 * same bytes under the same key). 0, or an error with *what naming the
 * step.
 */
static int sanity(struct bench *b, const char **what)
{
	struct access_req bad = b->ar_full;
	uint8_t *flipped, mac[CAP_MAC_LEN];
	const char *why = NULL;
	int rc;

	for (size_t i = 0; i < NWAYS; i++) {
		*what = ways[i].name;
		rc = ways[i].one(b);
		if (rc)
			return rc;
	}
	*what = "hmac_raw's MAC against the capability's";
	rc = raw_mac(b, mac);
	if (rc)
		return rc;
	if (CRYPTO_memcmp(mac, b->cap.data + b->cap.len - CAP_MAC_LEN, CAP_MAC_LEN) != 0)
		return -EINVAL;
	*what = "the cache after a check";
	if (b->cache->len != b->cap.len || b->cache->nreach == 0)
		return -OFS_ECORRUPT;
	*what = "a capability with a flipped MAC bit (must be refused)";
	flipped = malloc(b->cap.len);
	if (!flipped)
		return -ENOMEM;
	memcpy(flipped, b->cap.data, b->cap.len);
	flipped[b->cap.len - 1] ^= 1;
	bad.cap = flipped;
	rc = access_check(b->s, b->ring, &bad, b->q, &why);
	free(flipped);
	return rc == -OFS_ECAPBAD ? 0 : rc ? rc : -EINVAL;
}

/* n calls of w, after a warm-up: 0 and *us (microseconds per call), or
 * the first call's error. */
static int time_way(struct bench *b, const struct way *w, unsigned long n, double *us)
{
	double t0, t1;
	int rc = 0;

	for (unsigned long i = 0; i < WARMUP && !rc; i++)
		rc = w->one(b);
	t0 = mono();
	for (unsigned long i = 0; i < n && !rc; i++)
		rc = w->one(b);
	t1 = mono();
	if (rc)
		return rc;
	*us = (t1 - t0) * 1e6 / (double)n;
	return 0;
}

static void teardown(struct bench *b, const char **what, int *rc)
{
	EVP_MAC_CTX_free(b->mctx);
	EVP_MAC_free(b->hmac);
	store_close(b->s);
	cap_ring_close(b->ring);
	explicit_bzero(b->keys, sizeof(b->keys));
	wbuf_free(&b->cap);
	free(b->q);
	free(b->a);
	free(b->cache);
	if (b->dir[0] && nftw(b->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && !*rc) {
		*what = "removing the temporary directory";
		*rc = errno ? -errno : -EIO;
	}
}

int main(int argc, char **argv)
{
	struct bench *b = NULL;
	double best[NWAYS];
	const char *what = "allocation";
	unsigned long n;
	size_t cap_len;
	int rc;

	if (argc > 2 || parse_n(argc, argv, &n)) {
		fprintf(stderr, "usage: capcheck [N]   (N > 0; default OFS_BENCH_CAP_N or 200000)\n");
		return 2;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		fprintf(stderr, "capcheck: %s\n", ofs_strerror(-ENOMEM));
		return 3;
	}
	rc = setup(b, &what);
	if (!rc)
		rc = sanity(b, &what);
	for (size_t i = 0; i < NWAYS; i++)
		best[i] = 0;
	for (int r = 0; r < ROUNDS && !rc; r++) {
		for (size_t i = 0; i < NWAYS && !rc; i++) {
			double us = 0;
			what = ways[i].name;
			rc = time_way(b, &ways[i], n, &us);
			if (!rc && (r == 0 || us < best[i]))
				best[i] = us;
		}
	}
	cap_len = b->cap.len;
	teardown(b, &what, &rc);
	free(b);
	if (rc) {
		fprintf(stderr, "capcheck: %s: %s\n", what, ofs_strerror(rc));
		return 3;
	}
	for (size_t i = 0; i < NWAYS; i++)
		printf("%s_us=%.3f ", ways[i].name, best[i]);
	printf("n=%lu cap_bytes=%zu\n", n, cap_len);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "capcheck: stdout: %s\n", ofs_strerror(-errno));
		return 3;
	}
	return 0;
}
