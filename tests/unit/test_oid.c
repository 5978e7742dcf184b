/*
 * test_oid.c - OIDs and SIDs: generation, hex form, comparison, hashing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/oid.h"

static const char sample_hex[] = "00112233445566778899aabbccddeeff";

static struct ofs_oid sample_oid(void)
{
	struct ofs_oid o;

	for (int i = 0; i < OFS_OID_LEN; i++)
		o.b[i] = (uint8_t)(i * 0x11);
	return o;
}

static void test_oid_to_hex_is_lowercase_big_endian(void **state)
{
	char buf[OFS_OID_HEX];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	oid_to_hex(sample_oid(), buf);
	assert_string_equal(buf, sample_hex);
	assert_int_equal(buf[32], '\0');
}

static void test_oid_from_hex_round_trips(void **state)
{
	struct ofs_oid o, want = sample_oid();
	char buf[OFS_OID_HEX];

	(void)state;
	assert_int_equal(oid_from_hex(sample_hex, &o), 0);
	assert_memory_equal(o.b, want.b, OFS_OID_LEN);
	oid_to_hex(o, buf);
	assert_string_equal(buf, sample_hex);
}

static void test_oid_from_hex_accepts_uppercase(void **state)
{
	struct ofs_oid o, want = sample_oid();

	(void)state;
	assert_int_equal(oid_from_hex("00112233445566778899AABBCCDDEEFF", &o), 0);
	assert_memory_equal(o.b, want.b, OFS_OID_LEN);
}

static void test_oid_from_hex_rejects_bad_input(void **state)
{
	static const char *bad[] = {
		"",
		"0",
		"00112233445566778899aabbccddeef",    /* 31 digits */
		"00112233445566778899aabbccddeeff0",  /* 33 digits */
		"00112233445566778899aabbccddeefg",   /* not hex */
		"0x112233445566778899aabbccddeeff",   /* prefix */
		" 0112233445566778899aabbccddeeff",   /* space */
		"00112233445566778899aabbccddeef:",   /* just past '9' */
		"00112233445566778899aabbccddeef@",   /* just before 'A' */
		"00112233445566778899aabbccddeef`",   /* just before 'a' */
		"-0112233445566778899aabbccddeeff",
	};
	struct ofs_oid o;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(o.b, 0xa5, sizeof(o.b));
		assert_int_equal(oid_from_hex(bad[i], &o), -EINVAL);
		for (int j = 0; j < OFS_OID_LEN; j++)
			assert_int_equal(o.b[j], 0xa5);   /* untouched */
	}
	assert_int_equal(oid_from_hex(NULL, &o), -EINVAL);
}

static void test_oid_from_hex_rejects_embedded_nul(void **state)
{
	char s[OFS_OID_HEX + 1];
	struct ofs_oid o;

	(void)state;
	memcpy(s, sample_hex, sizeof(sample_hex));
	s[10] = '\0';
	assert_int_equal(oid_from_hex(s, &o), -EINVAL);
}

static void test_sid_hex_round_trips(void **state)
{
	struct ofs_sid s;
	char buf[OFS_OID_HEX];

	(void)state;
	assert_int_equal(sid_from_hex(sample_hex, &s), 0);
	assert_int_equal(s.b[0], 0x00);
	assert_int_equal(s.b[15], 0xff);
	sid_to_hex(s, buf);
	assert_string_equal(buf, sample_hex);
	assert_int_equal(sid_from_hex("zz112233445566778899aabbccddeeff", &s), -EINVAL);
}

static void test_oid_generate_is_nonzero_and_distinct(void **state)
{
	struct ofs_oid a, b;
	struct ofs_sid s, t;

	(void)state;
	assert_int_equal(oid_generate(&a), 0);
	assert_int_equal(oid_generate(&b), 0);
	assert_false(oid_is_zero(a));
	assert_false(oid_is_zero(b));
	assert_false(oid_eq(a, b));
	assert_int_equal(sid_generate(&s), 0);
	assert_int_equal(sid_generate(&t), 0);
	assert_false(sid_is_zero(s));
	assert_false(sid_eq(s, t));
}

static void test_oid_cmp_orders_by_big_endian_bytes(void **state)
{
	struct ofs_oid lo, hi;

	(void)state;
	memset(&lo, 0, sizeof(lo));
	memset(&hi, 0, sizeof(hi));
	lo.b[15] = 0xff;   /* low byte large */
	hi.b[0] = 0x01;    /* high byte small */
	assert_true(oid_cmp(lo, hi) < 0);
	assert_true(oid_cmp(hi, lo) > 0);
	assert_int_equal(oid_cmp(lo, lo), 0);
	assert_true(oid_eq(hi, hi));
	assert_false(oid_eq(lo, hi));
}

static void test_oid_is_zero_only_for_all_zero(void **state)
{
	struct ofs_oid o;
	struct ofs_sid s;

	(void)state;
	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	assert_true(oid_is_zero(o));
	assert_true(sid_is_zero(s));
	o.b[15] = 1;
	s.b[0] = 1;
	assert_false(oid_is_zero(o));
	assert_false(sid_is_zero(s));
}

static void test_oid_hash_is_low_eight_bytes(void **state)
{
	struct ofs_oid o = sample_oid();

	(void)state;
	assert_int_equal(oid_hash(o), UINT64_C(0x8899aabbccddeeff));
	o.b[0] = 0xee;   /* high bytes do not matter */
	assert_int_equal(oid_hash(o), UINT64_C(0x8899aabbccddeeff));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oid_to_hex_is_lowercase_big_endian),
		cmocka_unit_test(test_oid_from_hex_round_trips),
		cmocka_unit_test(test_oid_from_hex_accepts_uppercase),
		cmocka_unit_test(test_oid_from_hex_rejects_bad_input),
		cmocka_unit_test(test_oid_from_hex_rejects_embedded_nul),
		cmocka_unit_test(test_sid_hex_round_trips),
		cmocka_unit_test(test_oid_generate_is_nonzero_and_distinct),
		cmocka_unit_test(test_oid_cmp_orders_by_big_endian_bytes),
		cmocka_unit_test(test_oid_is_zero_only_for_all_zero),
		cmocka_unit_test(test_oid_hash_is_low_eight_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
