/*
 * test_path.c - user paths: normalization of slashes, "." and "..", and the
 * limits on absolute form, total length, component length and depth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/path.h"

static struct ofs_path path;   /* 64 KiB: too big for a test's stack */

/* Parse s, expect success, and check the formatted result. */
static void assert_normalizes(const char *s, size_t n, const char *want)
{
	char buf[OFS_PATH_MAX + 1];

	memset(&path, 0x5a, sizeof(path));
	if (path_parse(s, &path) != 0)
		fail_msg("path_parse(\"%s\") failed", s);
	assert_int_equal(path.n, n);
	assert_int_equal(path_format(&path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_path_root(void **state)
{
	(void)state;
	assert_normalizes("/", 0, "/");
	assert_normalizes("///", 0, "/");
}

static void test_path_simple_components(void **state)
{
	(void)state;
	assert_normalizes("/a/b", 2, "/a/b");
	assert_string_equal(path.comp[0], "a");
	assert_string_equal(path.comp[1], "b");
	assert_normalizes("/dir/file.txt", 2, "/dir/file.txt");
	assert_string_equal(path.comp[1], "file.txt");
}

static void test_path_collapses_repeated_and_trailing_slashes(void **state)
{
	(void)state;
	assert_normalizes("//a//b/", 2, "/a/b");
	assert_string_equal(path.comp[0], "a");
	assert_string_equal(path.comp[1], "b");
	assert_normalizes("/a/////b////", 2, "/a/b");
}

static void test_path_drops_dot(void **state)
{
	(void)state;
	assert_normalizes("/.", 0, "/");
	assert_normalizes("/./a/./b/.", 2, "/a/b");
	assert_normalizes("/a/.//./b", 2, "/a/b");
}

static void test_path_dotdot_removes_previous_component(void **state)
{
	(void)state;
	assert_normalizes("/a/b/..", 1, "/a");
	assert_normalizes("/a/b/../c", 2, "/a/c");
	assert_normalizes("/a/../b/../c/d/../../e", 1, "/e");
	assert_string_equal(path.comp[0], "e");
}

static void test_path_dotdot_at_root_stays_at_root(void **state)
{
	(void)state;
	assert_normalizes("/..", 0, "/");
	assert_normalizes("/../..", 0, "/");
	assert_normalizes("/../../a", 1, "/a");
	assert_normalizes("/a/../../..", 0, "/");
	assert_normalizes("/a/../../b", 1, "/b");
}

static void test_path_keeps_names_that_only_look_special(void **state)
{
	(void)state;
	assert_normalizes("/.../..a/a../.b", 4, "/.../..a/a../.b");
	assert_string_equal(path.comp[0], "...");
	assert_string_equal(path.comp[3], ".b");
}

static void test_path_rejects_relative_and_empty(void **state)
{
	static const char *bad[] = { "", "a", "a/b", ".", "..", "./a", " /a" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(path_parse(bad[i], &path), -EINVAL);
	assert_int_equal(path_parse(NULL, &path), -EINVAL);
}

/* A path of exactly len bytes made of 200-byte components. */
static void long_path(char *buf, size_t len)
{
	size_t at = 0;

	while (at < len) {
		buf[at] = '/';
		at++;
		for (int i = 0; i < 200 && at < len; i++)
			buf[at++] = 'p';
	}
	buf[len] = '\0';
}

static void test_path_rejects_over_max_length(void **state)
{
	static char buf[OFS_PATH_MAX + 2];

	(void)state;
	long_path(buf, OFS_PATH_MAX);
	assert_int_equal(strlen(buf), OFS_PATH_MAX);
	assert_int_equal(path_parse(buf, &path), 0);
	assert_int_equal(path.n, 21);   /* 4096 = 20 * 201 + 76 */
	assert_int_equal(strlen(path.comp[20]), 75);
	long_path(buf, OFS_PATH_MAX + 1);
	assert_int_equal(path_parse(buf, &path), -ENAMETOOLONG);
}

static void test_path_rejects_component_over_255(void **state)
{
	char buf[OFS_NAME_MAX + 8];

	(void)state;
	buf[0] = '/';
	memset(buf + 1, 'c', OFS_NAME_MAX);
	buf[1 + OFS_NAME_MAX] = '\0';
	assert_int_equal(path_parse(buf, &path), 0);
	assert_int_equal(path.n, 1);
	assert_int_equal(strlen(path.comp[0]), OFS_NAME_MAX);
	buf[1 + OFS_NAME_MAX] = 'c';
	buf[2 + OFS_NAME_MAX] = '\0';
	assert_int_equal(path_parse(buf, &path), -ENAMETOOLONG);
	/* Even when a later ".." would remove it. */
	strcat(buf, "/..");
	assert_int_equal(path_parse(buf, &path), -ENAMETOOLONG);
}

static void test_path_rejects_deeper_than_max_depth(void **state)
{
	static char buf[2 * (OFS_PATH_DEPTH + 1) + 8];
	size_t at = 0;

	(void)state;
	for (int i = 0; i < OFS_PATH_DEPTH; i++) {
		buf[at++] = '/';
		buf[at++] = 'd';
	}
	buf[at] = '\0';
	assert_int_equal(path_parse(buf, &path), 0);
	assert_int_equal(path.n, OFS_PATH_DEPTH);
	/* ".." then a new name keeps it at the limit. */
	strcpy(buf + at, "/../e");
	assert_int_equal(path_parse(buf, &path), 0);
	assert_int_equal(path.n, OFS_PATH_DEPTH);
	assert_string_equal(path.comp[OFS_PATH_DEPTH - 1], "e");
	strcpy(buf + at, "/d");
	assert_int_equal(path_parse(buf, &path), -OFS_ETOOBIG);
}

static void test_path_format_rejects_small_buffer(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(path_parse("/a/b", &path), 0);
	assert_int_equal(path_format(&path, buf, 5), 0);   /* "/a/b" + NUL */
	assert_string_equal(buf, "/a/b");
	assert_int_equal(path_format(&path, buf, 4), -ENAMETOOLONG);
	assert_int_equal(path_format(&path, buf, 1), -ENAMETOOLONG);
	assert_int_equal(path_parse("/", &path), 0);
	assert_int_equal(path_format(&path, buf, 2), 0);
	assert_string_equal(buf, "/");
	assert_int_equal(path_format(&path, buf, 1), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_root),
		cmocka_unit_test(test_path_simple_components),
		cmocka_unit_test(test_path_collapses_repeated_and_trailing_slashes),
		cmocka_unit_test(test_path_drops_dot),
		cmocka_unit_test(test_path_dotdot_removes_previous_component),
		cmocka_unit_test(test_path_dotdot_at_root_stays_at_root),
		cmocka_unit_test(test_path_keeps_names_that_only_look_special),
		cmocka_unit_test(test_path_rejects_relative_and_empty),
		cmocka_unit_test(test_path_rejects_over_max_length),
		cmocka_unit_test(test_path_rejects_component_over_255),
		cmocka_unit_test(test_path_rejects_deeper_than_max_depth),
		cmocka_unit_test(test_path_format_rejects_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
