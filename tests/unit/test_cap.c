/* test_cap.c - capabilities: encoding, MAC, checks, key files and the
 * CA's signature on key sets (lib/cap.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lib/ca.h"
#include "lib/cap.h"
#include "lib/ofs_error.h"

#define NOW 1800000000u

static struct cap_key key(uint32_t id, uint8_t fill)
{
	struct cap_key k = { .id = id };

	memset(k.key, fill, sizeof(k.key));
	return k;
}

static struct ofs_oid oid_n(uint8_t n)
{
	struct ofs_oid o;

	memset(o.b, 0, sizeof(o.b));
	o.b[15] = n;
	o.b[0] = 0x40;
	return o;
}

/* A capability for oids 3, 1, 2 (given out of order), read, bound to fpr 0x11... */
static struct ofs_cap make(const struct cap_key *k)
{
	struct ofs_cap c;

	memset(&c, 0, sizeof(c));
	memset(c.issuer.b, 0x22, sizeof(c.issuer.b));
	c.expires = NOW + CAP_DEFAULT_TTL_S;
	c.ops = CAP_READ;
	memset(c.fpr, 0x11, sizeof(c.fpr));
	c.oids[0] = oid_n(3);
	c.oids[1] = oid_n(1);
	c.oids[2] = oid_n(2);
	c.oids[3] = oid_n(1);       /* a duplicate */
	c.noids = 4;
	cap_sort_oids(&c);
	assert_int_equal(cap_sign(&c, k), 0);
	return c;
}

static void test_a_signed_capability_checks_and_round_trips(void **state)
{
	struct cap_key k = key(7, 0xaa);
	struct ofs_cap c = make(&k), d;
	uint8_t fpr[IDENT_FPR_LEN];
	struct wbuf w, w2;

	(void)state;
	memset(fpr, 0x11, sizeof(fpr));
	assert_int_equal(c.noids, 3);
	assert_int_equal(c.key_id, 7);
	wbuf_init(&w);
	cap_encode(&w, &c);
	assert_int_equal(w.len, 1 + 16 + 4 + 8 + 4 + 32 + 2 + 3 * 16 + 32);
	assert_int_equal(cap_decode(w.data, w.len, &d), 0);
	wbuf_init(&w2);
	cap_encode(&w2, &d);
	assert_int_equal(w2.len, w.len);
	assert_memory_equal(w2.data, w.data, w.len);
	for (uint8_t i = 1; i <= 3; i++)
		assert_int_equal(cap_check(&d, &k, 1, fpr, oid_n(i), CAP_READ, NOW), 0);
	wbuf_free(&w);
	wbuf_free(&w2);
}

static void test_every_refusal_says_why(void **state)
{
	struct cap_key k = key(7, 0xaa);
	struct ofs_cap c = make(&k);
	uint8_t fpr[IDENT_FPR_LEN], other[IDENT_FPR_LEN];

	(void)state;
	memset(fpr, 0x11, sizeof(fpr));
	memset(other, 0x12, sizeof(other));
	/* for file A, used on file B */
	assert_int_equal(cap_check(&c, &k, 1, fpr, oid_n(4), CAP_READ, NOW), -EACCES);
	/* taken from one client's connection, shown on another's */
	assert_int_equal(cap_check(&c, &k, 1, other, oid_n(1), CAP_READ, NOW), -EACCES);
	/* an operation it does not allow */
	assert_int_equal(cap_check(&c, &k, 1, fpr, oid_n(1), CAP_WRITE, NOW), -EACCES);
	assert_int_equal(cap_check(&c, &k, 1, fpr, oid_n(1), 0, NOW), -EACCES);
	/* expired: at its expiry and after */
	assert_int_equal(cap_check(&c, &k, 1, fpr, oid_n(1), CAP_READ, NOW + CAP_DEFAULT_TTL_S),
			 -OFS_ECAPEXPIRED);
	assert_int_equal(cap_check(&c, &k, 1, fpr, oid_n(1), CAP_READ, NOW + 100000),
			 -OFS_ECAPEXPIRED);
}

static void test_one_byte_changed_anywhere_is_refused(void **state)
{
	struct cap_key k = key(7, 0xaa);
	struct ofs_cap c = make(&k), d;
	uint8_t fpr[IDENT_FPR_LEN];
	struct wbuf w;

	(void)state;
	memset(fpr, 0x11, sizeof(fpr));
	wbuf_init(&w);
	cap_encode(&w, &c);
	for (size_t i = 0; i < w.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			w.data[i] ^= (uint8_t)(1u << bit);
			if (cap_decode(w.data, w.len, &d) == 0) {
				/* decodes (a field still canonical): its check fails,
				 * whatever the field (expiry, ops, OIDs, MAC...) */
				int rc = cap_check(&d, &k, 1, fpr, oid_n(1), CAP_READ, NOW);
				int rc2 = cap_check(&d, &k, 1, fpr, d.oids[0], d.ops, NOW);
				if (rc == 0 || rc2 == 0)
					fail_msg("byte %zu bit %d changed: still accepted", i, bit);
			}
			w.data[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* truncated and extended */
	assert_int_equal(cap_decode(w.data, w.len - 1, &d), -OFS_ECORRUPT);
	wbuf_u8(&w, 0);
	assert_int_equal(cap_decode(w.data, w.len, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
}

static void test_keys_current_and_previous_but_not_older(void **state)
{
	struct cap_key k1 = key(1, 0x01), k2 = key(2, 0x02), k3 = key(3, 0x03);
	struct cap_key held[2];
	struct ofs_cap c1 = make(&k1), c2 = make(&k2), c3 = make(&k3);
	uint8_t fpr[IDENT_FPR_LEN];

	(void)state;
	memset(fpr, 0x11, sizeof(fpr));
	/* after two rotations the servers hold 3 (current) and 2 (previous) */
	held[0] = k3;
	held[1] = k2;
	assert_int_equal(cap_check(&c3, held, 2, fpr, oid_n(1), CAP_READ, NOW), 0);
	assert_int_equal(cap_check(&c2, held, 2, fpr, oid_n(1), CAP_READ, NOW), 0);
	assert_int_equal(cap_check(&c1, held, 2, fpr, oid_n(1), CAP_READ, NOW), -OFS_ECAPBAD);
	/* a capability claiming a held key id but made under another key */
	c1.key_id = 3;
	assert_int_equal(cap_check(&c1, held, 2, fpr, oid_n(1), CAP_READ, NOW), -OFS_ECAPBAD);
}

static void test_only_canonical_capabilities_are_signed_or_decoded(void **state)
{
	struct cap_key k = key(7, 0xaa);
	struct ofs_cap c = make(&k), d;
	struct wbuf w;

	(void)state;
	d = c;
	d.noids = 0;
	assert_int_equal(cap_sign(&d, &k), -EINVAL);
	d = c;
	d.ops = 1u << 5;
	assert_int_equal(cap_sign(&d, &k), -EINVAL);
	d = c;
	d.oids[0] = d.oids[1];          /* out of order */
	assert_int_equal(cap_sign(&d, &k), -EINVAL);
	/* a hand-made out-of-order encoding does not decode */
	d = c;
	d.oids[0] = c.oids[1];
	d.oids[1] = c.oids[0];
	wbuf_init(&w);
	cap_encode(&w, &d);
	assert_int_equal(cap_decode(w.data, w.len, &d), -OFS_ECORRUPT);
	wbuf_free(&w);
	{
		struct cap_key zero = key(0, 1);
		d = c;
		assert_int_equal(cap_sign(&d, &zero), -EINVAL);
	}
}

static void test_key_files(void **state)
{
	char text[300];
	struct cap_key keys[CAP_MAX_KEYS];
	size_t n = 9;

	(void)state;
	snprintf(text, sizeof(text), "2 %064d\n1 %s\n", 0,
		 "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
	assert_int_equal(cap_keys_parse(text, strlen(text), keys, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(keys[0].id, 2);
	assert_int_equal(keys[1].id, 1);
	assert_int_equal(keys[1].key[0], 0xff);
	assert_int_equal(keys[1].key[31], 0x00);
	/* no newline at the end is fine */
	assert_int_equal(cap_keys_parse(text, strlen(text) - 1, keys, &n), 0);
	assert_int_equal(n, 2);
	static const char *const bad[] = {
		"", "\n", "0 0000000000000000000000000000000000000000000000000000000000000000\n",
		"1 000000000000000000000000000000000000000000000000000000000000000\n",
		"1 00000000000000000000000000000000000000000000000000000000000000000\n",
		"1 000000000000000000000000000000000000000000000000000000000000000G\n",
		"1 00000000000000000000000000000000000000000000000000000000000000AA\n",
		"x 0000000000000000000000000000000000000000000000000000000000000000\n",
		"1 0000000000000000000000000000000000000000000000000000000000000000\n"
		"1 0000000000000000000000000000000000000000000000000000000000000000\n",
		"1 0000000000000000000000000000000000000000000000000000000000000000\n"
		"2 0000000000000000000000000000000000000000000000000000000000000000\n"
		"3 0000000000000000000000000000000000000000000000000000000000000000\n",
		"99999999999 0000000000000000000000000000000000000000000000000000000000000000\n",
		/* one spelling per id, as cap_keys_format writes it (found by fuzz_capkeys) */
		"07 0000000000000000000000000000000000000000000000000000000000000000\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(keys, 0x5a, sizeof(keys));
		n = 9;
		if (cap_keys_parse(bad[i], strlen(bad[i]), keys, &n) != -EINVAL)
			fail_msg("accepted key file %zu", i);
		/* nothing of a refused file reaches the caller */
		assert_int_equal(n, 9);
		assert_int_equal(keys[0].key[0], 0x5a);
		assert_int_equal(keys[1].id, 0x5a5a5a5a);
	}
}

/* A directory with two CAs: the cluster's (ca) and another (other). */
struct cas {
	char dir[256], path[300], capath[320];
	struct ca *ca, *other;
};

static void cas_make(struct cas *t)
{
	char d[300], why[TLS_WHY_MAX];

	snprintf(t->dir, sizeof(t->dir), "%s/test_cap.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/cap.key", t->dir);
	snprintf(d, sizeof(d), "%s/ca", t->dir);
	assert_int_equal(ca_init(d, why), 0);
	assert_int_equal(ca_open(d, &t->ca, why), 0);
	snprintf(t->capath, sizeof(t->capath), "%s/ca.crt", d);
	snprintf(d, sizeof(d), "%s/other", t->dir);
	assert_int_equal(ca_init(d, why), 0);
	assert_int_equal(ca_open(d, &t->other, why), 0);
}

static void cas_free(struct cas *t)
{
	char cmd[400];

	ca_close(t->ca);
	ca_close(t->other);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
}

/* path holds keys[0..n), unsigned (the previous release's file). */
static void write_unsigned(const char *path, const struct cap_key *keys, size_t n)
{
	char text[CAP_KEYS_TEXT_MAX];
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, cap_keys_format(keys, n, text), f) > 0, 1);
	fclose(f);
}

/* by's signed set of keys[0..n) into w (fresh). */
static void sign_set(struct ca *by, const struct cap_key *keys, size_t n, struct wbuf *w)
{
	wbuf_init(w);
	assert_int_equal(ca_sign_keys(by, keys, n, w), 0);
}

static void test_a_ring_takes_newer_signed_sets_only_and_keeps_its_file(void **state)
{
	struct cap_key k1 = key(1, 0x01), k2 = key(2, 0x02), k3 = key(3, 0x03), got[CAP_MAX_KEYS];
	struct cap_key two[2] = { k2, k1 }, three[2] = { k3, k2 }, back[1] = { k1 };
	struct cap_ring *r = NULL, *r2 = NULL;
	struct wbuf w2, w3, wb, a;
	struct cas t;
	struct stat st;

	(void)state;
	cas_make(&t);
	write_unsigned(t.path, &k1, 1);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r), 0);
	assert_int_equal(cap_ring_get(r, got), 1);
	assert_int_equal(got[0].id, 1);
	assert_int_equal(cap_ring_signed_id(r), 0);
	/* a rotation: 2 current, 1 previous; written whole, 0600, signed */
	sign_set(t.ca, two, 2, &w2);
	assert_int_equal(cap_ring_offer(r, w2.data, w2.len), 1);
	assert_int_equal(cap_ring_get(r, got), 2);
	assert_int_equal(got[0].id, 2);
	assert_memory_equal(got[1].key, k1.key, CAP_KEY_LEN);
	assert_int_equal(cap_ring_signed_id(r), 2);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r2), 0);
	assert_int_equal(cap_ring_get(r2, got), 2);
	assert_int_equal(cap_ring_signed_id(r2), 2);
	cap_ring_close(r2);
	assert_int_equal(stat(t.path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* the same set again (a resend): nothing changes */
	assert_int_equal(cap_ring_offer(r, w2.data, w2.len), 0);
	assert_int_equal(cap_ring_generation(r), 1);
	/* never back */
	sign_set(t.ca, back, 1, &wb);
	assert_int_equal(cap_ring_offer(r, wb.data, wb.len), -ESTALE);
	assert_int_equal(cap_ring_signed_id(r), 2);
	/* again: 3 current, 2 previous (1 dropped) */
	sign_set(t.ca, three, 2, &w3);
	assert_int_equal(cap_ring_offer(r, w3.data, w3.len), 1);
	assert_int_equal(cap_ring_get(r, got), 2);
	assert_int_equal(got[1].id, 2);
	/* the signed set is what a peer gets, when newer than its own */
	wbuf_init(&a);
	assert_int_equal(cap_ring_answer(r, 3, &a), 0);
	assert_int_equal(a.len, 0);
	assert_int_equal(cap_ring_answer(r, 2, &a), 1);
	assert_int_equal(a.len, w3.len);
	assert_memory_equal(a.data, w3.data, w3.len);
	wbuf_free(&a);
	wbuf_free(&w2);
	wbuf_free(&w3);
	wbuf_free(&wb);
	cap_ring_close(r);
	cas_free(&t);
}

/* Only the CA speaks for the cluster: a set it did not sign - unsigned
 * (as the previous release sent them, and as any server certificate could
 * push one with id 0xFFFFFFFF), another CA's, or changed after signing -
 * changes nothing, and later rotations still go through. */
static void test_a_set_the_ca_did_not_sign_is_refused(void **state)
{
	struct cap_key k1 = key(1, 0x01), k2 = key(2, 0x02), got[CAP_MAX_KEYS];
	struct cap_key evil[1] = { key(0xFFFFFFFFu, 0x66) }, two[2] = { k2, k1 };
	struct cap_ring *r = NULL;
	struct wbuf w, u;
	struct cas t;

	(void)state;
	cas_make(&t);
	write_unsigned(t.path, &k1, 1);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r), 0);
	wbuf_init(&u);
	cap_keys_encode(&u, evil, 1);
	assert_int_equal(cap_ring_offer(r, u.data, u.len), -OFS_ECORRUPT);
	sign_set(t.other, evil, 1, &w);
	assert_int_equal(cap_ring_offer(r, w.data, w.len), -OFS_ENOTCA);
	wbuf_free(&w);
	sign_set(t.ca, evil, 1, &w);
	w.data[w.len - 1] ^= 1;                                  /* the signature */
	assert_int_equal(cap_ring_offer(r, w.data, w.len), -OFS_ENOTCA);
	w.data[w.len - 1] ^= 1;
	w.data[10] ^= 1;                                         /* a key byte */
	assert_int_equal(cap_ring_offer(r, w.data, w.len), -OFS_ENOTCA);
	assert_int_equal(cap_ring_offer(r, w.data, w.len - 1), -OFS_ECORRUPT);
	assert_int_equal(cap_ring_get(r, got), 1);
	assert_int_equal(got[0].id, 1);
	assert_int_equal(cap_ring_generation(r), 0);
	wbuf_free(&w);
	/* a rotation the CA signed still goes through */
	sign_set(t.ca, two, 2, &w);
	assert_int_equal(cap_ring_offer(r, w.data, w.len), 1);
	assert_int_equal(cap_ring_signed_id(r), 2);
	wbuf_free(&w);
	wbuf_free(&u);
	cap_ring_close(r);
	/* a ring that trusts no CA takes nothing */
	assert_int_equal(cap_ring_open(t.path, NULL, &r), 0);
	assert_int_equal(cap_ring_signed_id(r), 0);
	sign_set(t.ca, two, 2, &w);
	assert_int_equal(cap_ring_offer(r, w.data, w.len), -OFS_ENOTCA);
	wbuf_free(&w);
	cap_ring_close(r);
	cas_free(&t);
}

/* The previous release's file opens, unsigned, and is never given to a
 * peer; the first signed set replaces it whatever its ids - even the
 * 0xFFFFFFFF a server could push before. */
static void test_an_unsigned_set_gives_way_to_the_first_signed_one(void **state)
{
	struct cap_key planted = key(0xFFFFFFFFu, 0x66), k1 = key(1, 0x01), got[CAP_MAX_KEYS];
	struct cap_ring *r = NULL;
	struct wbuf w, a;
	struct cas t;

	(void)state;
	cas_make(&t);
	write_unsigned(t.path, &planted, 1);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r), 0);
	wbuf_init(&a);
	assert_int_equal(cap_ring_answer(r, 0, &a), 0);
	assert_int_equal(a.len, 0);
	wbuf_free(&a);
	sign_set(t.ca, &k1, 1, &w);
	assert_int_equal(cap_ring_offer(r, w.data, w.len), 1);
	assert_int_equal(cap_ring_get(r, got), 1);
	assert_int_equal(got[0].id, 1);
	wbuf_free(&w);
	cap_ring_close(r);
	cas_free(&t);
}

/* A key file whose signature does not verify does not open. */
static void test_a_key_file_the_ca_did_not_sign_does_not_open(void **state)
{
	struct cap_key k2 = key(2, 0x02), k1 = key(1, 0x01), two[2] = { k2, k1 };
	struct cap_ring *r = NULL;
	char text[400];
	size_t got = 0;
	struct wbuf w;
	struct cas t;
	FILE *f;

	(void)state;
	cas_make(&t);
	write_unsigned(t.path, &k1, 1);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r), 0);
	sign_set(t.ca, two, 2, &w);
	assert_int_equal(cap_ring_offer(r, w.data, w.len), 1);
	cap_ring_close(r);
	r = NULL;
	f = fopen(t.path, "r");
	assert_non_null(f);
	got = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[got] = '\0';
	assert_non_null(strstr(text, "\nsig "));
	text[2] = text[2] == '0' ? '1' : '0';                  /* a digit of key 2 */
	f = fopen(t.path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(cap_ring_open(t.path, t.capath, &r), -OFS_ENOTCA);
	assert_null(r);
	wbuf_free(&w);
	cas_free(&t);
}

/* The key set's bytes, and their refusals. */
static void test_key_set_wire_form(void **state)
{
	struct cap_key two[2] = { key(3, 0x03), key(2, 0x02) }, dec[CAP_MAX_KEYS];
	uint8_t sig[CAP_SIG_LEN];
	struct wbuf w;
	size_t n;

	(void)state;
	wbuf_init(&w);
	cap_keys_encode(&w, two, 2);
	assert_int_equal(cap_keys_decode(w.data, w.len, dec, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(dec[0].id, 3);
	assert_memory_equal(dec[1].key, two[1].key, CAP_KEY_LEN);
	assert_int_equal(cap_keys_decode(w.data, w.len - 1, dec, &n), -OFS_ECORRUPT);
	assert_int_equal(cap_keys_signed_decode(w.data, w.len, dec, &n, sig), -OFS_ECORRUPT);
	w.data[0] = 3;
	assert_int_equal(cap_keys_decode(w.data, w.len, dec, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	memset(sig, 0x44, sizeof(sig));
	wbuf_init(&w);
	cap_keys_signed_encode(&w, two, 2, sig);
	assert_int_equal(w.data[0], CAP_KEYS_SIGNED);
	memset(sig, 0, sizeof(sig));
	assert_int_equal(cap_keys_signed_decode(w.data, w.len, dec, &n, sig), 0);
	assert_int_equal(sig[63], 0x44);
	assert_int_equal(cap_keys_decode(w.data, w.len, dec, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
}

/* cap_allows: the checks after the MAC (for a connection's cache). */
static void test_allows_after_a_verified_mac(void **state)
{
	struct cap_key k = key(7, 0xaa);
	struct ofs_cap c = make(&k);

	(void)state;
	assert_true(cap_covers(&c, oid_n(1)));
	assert_true(cap_covers(&c, oid_n(3)));
	assert_false(cap_covers(&c, oid_n(4)));
	assert_int_equal(cap_allows(&c, oid_n(2), CAP_READ, NOW), 0);
	assert_int_equal(cap_allows(&c, oid_n(4), CAP_READ, NOW), -EACCES);
	assert_int_equal(cap_allows(&c, oid_n(2), CAP_READ | CAP_WRITE, NOW), -EACCES);
	assert_int_equal(cap_allows(&c, oid_n(2), 0, NOW), -EACCES);
	assert_int_equal(cap_allows(&c, oid_n(2), CAP_READ, NOW + CAP_DEFAULT_TTL_S),
			 -OFS_ECAPEXPIRED);
	/* every right is a known bit: signed, and decoded back */
	c.ops = CAP_READ | CAP_WRITE | CAP_SEARCH | CAP_REMOVE;
	assert_int_equal(cap_sign(&c, &k), 0);
	assert_int_equal(cap_allows(&c, oid_n(3), CAP_SEARCH | CAP_REMOVE, NOW), 0);
}

/* The pull and a key set never read as each other. */
static void test_a_pull_is_never_a_key_set(void **state)
{
	struct cap_key k[CAP_MAX_KEYS] = { key(9, 0x01), key(8, 0x02) }, d[CAP_MAX_KEYS];
	struct wbuf w;
	uint32_t held = 0;
	size_t n = 0;

	(void)state;
	wbuf_init(&w);
	cap_keys_pull_encode(&w, 0x01020304);
	assert_true(cap_keys_pull_decode(w.data, w.len, &held));
	assert_int_equal(held, 0x01020304);
	assert_int_not_equal(cap_keys_decode(w.data, w.len, d, &n), 0);
	assert_false(cap_keys_pull_decode(w.data, w.len - 1, &held));
	wbuf_free(&w);
	wbuf_init(&w);
	cap_keys_encode(&w, k, 2);
	for (size_t len = 0; len <= w.len; len++)
		assert_false(cap_keys_pull_decode(w.data, len, &held));
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_signed_capability_checks_and_round_trips),
		cmocka_unit_test(test_every_refusal_says_why),
		cmocka_unit_test(test_one_byte_changed_anywhere_is_refused),
		cmocka_unit_test(test_keys_current_and_previous_but_not_older),
		cmocka_unit_test(test_only_canonical_capabilities_are_signed_or_decoded),
		cmocka_unit_test(test_key_files),
		cmocka_unit_test(test_allows_after_a_verified_mac),
		cmocka_unit_test(test_a_pull_is_never_a_key_set),
		cmocka_unit_test(test_a_ring_takes_newer_signed_sets_only_and_keeps_its_file),
		cmocka_unit_test(test_a_set_the_ca_did_not_sign_is_refused),
		cmocka_unit_test(test_an_unsigned_set_gives_way_to_the_first_signed_one),
		cmocka_unit_test(test_a_key_file_the_ca_did_not_sign_does_not_open),
		cmocka_unit_test(test_key_set_wire_form),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
