/* test_cap.c - capabilities: encoding, MAC, checks, key files (lib/cap.c). */
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

static void test_a_ring_rotates_forward_only_and_keeps_its_file(void **state)
{
	char dir[256], path[300], cmd[400];
	struct cap_key k1 = key(1, 0x01), k2 = key(2, 0x02), k3 = key(3, 0x03), got[CAP_MAX_KEYS];
	struct cap_key two[2] = { k2, k1 }, back[2] = { k1, k2 }, dec[CAP_MAX_KEYS];
	struct cap_ring *r = NULL, *r2 = NULL;
	char text[CAP_KEYS_TEXT_MAX];
	struct wbuf w;
	size_t n;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_cap.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cap.key", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(text, 1, cap_keys_format(&k1, 1, text), f);
	fclose(f);
	assert_int_equal(cap_ring_open(path, &r), 0);
	assert_int_equal(cap_ring_get(r, got), 1);
	assert_int_equal(got[0].id, 1);
	/* a rotation: 2 current, 1 previous; written whole, 0600 */
	assert_int_equal(cap_ring_set(r, two, 2), 0);
	assert_int_equal(cap_ring_get(r, got), 2);
	assert_int_equal(got[0].id, 2);
	assert_memory_equal(got[1].key, k1.key, CAP_KEY_LEN);
	assert_int_equal(cap_ring_open(path, &r2), 0);
	assert_int_equal(cap_ring_get(r2, got), 2);
	assert_int_equal(got[0].id, 2);
	cap_ring_close(r2);
	{
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	/* never back */
	assert_int_equal(cap_ring_set(r, back, 2), -ESTALE);
	assert_int_equal(cap_ring_get(r, got), 2);
	assert_int_equal(got[0].id, 2);
	/* again: 3 current, 2 previous (1 dropped) */
	two[0] = k3;
	two[1] = k2;
	assert_int_equal(cap_ring_set(r, two, 2), 0);
	/* the wire form, and its refusals */
	wbuf_init(&w);
	cap_keys_encode(&w, two, 2);
	assert_int_equal(cap_keys_decode(w.data, w.len, dec, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(dec[0].id, 3);
	assert_memory_equal(dec[1].key, k2.key, CAP_KEY_LEN);
	assert_int_equal(cap_keys_decode(w.data, w.len - 1, dec, &n), -OFS_ECORRUPT);
	w.data[0] = 3;
	assert_int_equal(cap_keys_decode(w.data, w.len, dec, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	cap_ring_close(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
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
		cmocka_unit_test(test_a_ring_rotates_forward_only_and_keeps_its_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
