/* test_crl.c - the revocation list (lib/crl.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/crl.h"
#include "lib/ofs_error.h"

static char dir[256], path[300];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_crl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/revoked", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static struct crl_serial ser(const char *hex)
{
	struct crl_serial s;

	assert_int_equal(crl_serial_from_hex(hex, strlen(hex), &s), 0);
	return s;
}

static void test_a_list_grows_is_kept_and_merges_as_a_union(void **state)
{
	struct crl *c = NULL, *d = NULL;
	struct crl_serial two[2] = { ser("7f01"), ser("01") }, *got = NULL;
	struct crl_serial s3 = ser("1234567890abcdef1234567890abcdef");
	struct wbuf w;
	size_t n = 0;
	char hex[2 * CRL_SERIAL_MAX + 1];

	(void)state;
	assert_int_equal(crl_open(path, &c), 0);          /* no file yet: empty */
	assert_int_equal(crl_count(c), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(crl_merge(c, two, 2), 2);
	assert_int_equal(crl_merge(c, two, 2), 0);        /* known: nothing new */
	assert_int_equal(crl_generation(c), 1);
	assert_true(crl_has(c, &two[0]));
	assert_false(crl_has(c, &s3));
	crl_close(c);
	/* kept on disk */
	assert_int_equal(crl_open(path, &d), 0);
	assert_int_equal(crl_count(d), 2);
	assert_true(crl_has(d, &two[1]));
	assert_int_equal(crl_merge(d, &s3, 1), 1);
	/* the wire form, and back */
	wbuf_init(&w);
	crl_encode(d, &w);
	assert_int_equal(crl_decode(w.data, w.len, &got, &n), 0);
	assert_int_equal(n, 3);
	crl_serial_hex(&got[0], hex);
	assert_string_equal(hex, "01");                   /* shortest first, then bytes */
	crl_serial_hex(&got[2], hex);
	assert_string_equal(hex, "1234567890abcdef1234567890abcdef");
	free(got);
	got = NULL;
	/* bad wire input */
	assert_int_equal(crl_decode(w.data, w.len - 1, &got, &n), -OFS_ECORRUPT);
	w.data[2] = 0;                                    /* a serial of length 0 */
	assert_int_equal(crl_decode(w.data, w.len, &got, &n), -OFS_ECORRUPT);
	wbuf_free(&w);
	crl_close(d);
}

static void test_malformed_serials_and_files_are_refused(void **state)
{
	struct crl_serial s;
	struct crl *c = NULL;
	FILE *f;

	(void)state;
	assert_int_equal(crl_serial_from_hex("", 0, &s), -EINVAL);
	assert_int_equal(crl_serial_from_hex("abc", 3, &s), -EINVAL);
	assert_int_equal(crl_serial_from_hex("0012", 4, &s), -EINVAL);   /* leading zero */
	assert_int_equal(crl_serial_from_hex("AB", 2, &s), -EINVAL);     /* one spelling */
	assert_int_equal(crl_serial_from_hex("00", 2, &s), 0);
	assert_int_equal(crl_serial_from_hex("0102030405060708090a0b0c0d0e0f101112131415", 42, &s),
			 -EINVAL);                                      /* 21 bytes */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0a\nnot hex\n", f);
	fclose(f);
	assert_int_equal(crl_open(path, &c), -EINVAL);
	assert_null(c);
}

static void test_text_decodes_in_file_order_skipping_empty_lines(void **state)
{
	static const char text[] = "0a\n\nff01\n0a\n7f";
	struct crl_serial *s = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(crl_text_decode(text, strlen(text), &s, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].len, 1);
	assert_int_equal(s[0].b[0], 0x0a);
	assert_int_equal(s[1].len, 2);
	assert_int_equal(s[2].b[0], 0x0a);
	assert_int_equal(s[3].b[0], 0x7f);
	free(s);
	assert_int_equal(crl_text_decode("", 0, &s, &n), 0);
	assert_int_equal(n, 0);
	free(s);
	assert_int_equal(crl_text_decode("0a\n0A\n", 6, &s, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_list_grows_is_kept_and_merges_as_a_union, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed_serials_and_files_are_refused, setup,
						teardown),
		cmocka_unit_test(test_text_decodes_in_file_order_skipping_empty_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
