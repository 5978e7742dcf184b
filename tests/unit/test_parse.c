/*
 * test_parse.c - sizes and bounded integers from the command line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/parse.h"

static void assert_size(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;

	if (parse_size(s, &v) != 0)
		fail_msg("parse_size(\"%s\") failed", s);
	assert_int_equal(v, want);
}

static void assert_size_fails(const char *s, int want)
{
	uint64_t v = 0xdeadbeef;

	if (parse_size(s, &v) != want)
		fail_msg("parse_size(\"%s\") did not return %d", s, want);
	assert_int_equal(v, 0xdeadbeef);   /* untouched */
}

static void test_parse_size_plain_number(void **state)
{
	(void)state;
	assert_size("0", 0);
	assert_size("1", 1);
	assert_size("1048576", 1048576);
	assert_size("007", 7);
	assert_size("5B", 5);
	assert_size("5b", 5);
}

static void test_parse_size_suffixes_k_m_g_t(void **state)
{
	(void)state;
	assert_size("64K", 65536);
	assert_size("64k", 65536);
	assert_size("1M", UINT64_C(1) << 20);
	assert_size("1m", UINT64_C(1) << 20);
	assert_size("3G", UINT64_C(3) << 30);
	assert_size("3g", UINT64_C(3) << 30);
	assert_size("2T", UINT64_C(2) << 40);
	assert_size("2t", UINT64_C(2) << 40);
	assert_size("0K", 0);
}

static void test_parse_size_accepts_b_and_ib_endings(void **state)
{
	(void)state;
	assert_size("1MiB", UINT64_C(1) << 20);
	assert_size("1mib", UINT64_C(1) << 20);
	assert_size("1MIB", UINT64_C(1) << 20);
	assert_size("4KB", 4096);
	assert_size("4kb", 4096);
	assert_size("4KiB", 4096);
	assert_size("7GiB", UINT64_C(7) << 30);
	assert_size("1TB", UINT64_C(1) << 40);
}

static void test_parse_size_rejects_bad_input(void **state)
{
	static const char *bad[] = {
		"", "K", "MiB", "-1", "+1", " 1", "1 ", "1 K", "1KK", "1X", "1.5M",
		"1iB", "1Ki", "1Bi", "1BB", "1MiBs", "0x10", "1e3", "1P", "1E",
		"12abc",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_size_fails(bad[i], -EINVAL);
	assert_size_fails(NULL, -EINVAL);
}

static void test_parse_size_rejects_overflow(void **state)
{
	(void)state;
	/* 2^63 itself is the largest size accepted. */
	assert_size("9223372036854775808", UINT64_C(1) << 63);
	assert_size("8388608T", UINT64_C(1) << 63);
	assert_size("8589934592G", UINT64_C(1) << 63);
	assert_size("8796093022208M", UINT64_C(1) << 63);
	assert_size("9007199254740992K", UINT64_C(1) << 63);
	assert_size_fails("9223372036854775809", -ERANGE);
	assert_size_fails("18446744073709551615", -ERANGE);
	assert_size_fails("18446744073709551616", -ERANGE);
	assert_size_fails("99999999999999999999999999", -ERANGE);
	assert_size_fails("8388609T", -ERANGE);
	assert_size_fails("8589934593G", -ERANGE);
	assert_size_fails("9007199254740993K", -ERANGE);
	assert_size_fails("18446744073709551615T", -ERANGE);
}

static void test_parse_uint_accepts_range_bounds(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_uint("1", 1, 10, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_uint("10", 1, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void test_parse_uint_rejects_out_of_range(void **state)
{
	uint64_t v = 42;

	(void)state;
	assert_int_equal(parse_uint("0", 1, 10, &v), -ERANGE);
	assert_int_equal(parse_uint("11", 1, 10, &v), -ERANGE);
	assert_int_equal(parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 42);
}

static void test_parse_uint_rejects_bad_input(void **state)
{
	static const char *bad[] = { "", "-1", "+1", " 1", "1 ", "1K", "0x1", "a", "1.0" };
	uint64_t v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_uint(bad[i], 0, 100, &v) != -EINVAL)
			fail_msg("parse_uint(\"%s\") accepted", bad[i]);
	}
	assert_int_equal(parse_uint(NULL, 0, 100, &v), -EINVAL);
	assert_int_equal(v, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_plain_number),
		cmocka_unit_test(test_parse_size_suffixes_k_m_g_t),
		cmocka_unit_test(test_parse_size_accepts_b_and_ib_endings),
		cmocka_unit_test(test_parse_size_rejects_bad_input),
		cmocka_unit_test(test_parse_size_rejects_overflow),
		cmocka_unit_test(test_parse_uint_accepts_range_bounds),
		cmocka_unit_test(test_parse_uint_rejects_out_of_range),
		cmocka_unit_test(test_parse_uint_rejects_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
