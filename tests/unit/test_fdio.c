/* test_fdio.c - whole files written beside their place and renamed into
 * it (lib/fdio.c): never through a name planted in the way. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/fdio.h"

struct fx {
	char dir[256];
};

static char *at(struct fx *f, const char *rel)
{
	static char buf[4][512];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, 512, "%s/%s", f->dir, rel);
	return b;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "%s/test_fdio.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The file's bytes as a string ("" when it cannot be read). */
static const char *contents(const char *path)
{
	static char buf[256];
	size_t got = 0;

	if (fdio_read_file(path, buf, sizeof(buf) - 1, &got))
		got = 0;
	buf[got] = '\0';
	return buf;
}

/* How many names f's directory holds. */
static int names(struct fx *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void put(const char *path, const char *text)
{
	assert_int_equal(fdio_write_file(path, text, strlen(text), 0600), 0);
}

static void test_write_file_never_writes_through_a_link_planted_at_its_old_temporary_name(void **state)
{
	struct fx *f = *state;

	put(at(f, "victim"), "victim's bytes");
	/* (an earlier release wrote to "PATH.tmp" opened with O_TRUNC: a
	 * link planted there received the key) */
	assert_int_equal(symlink(at(f, "victim"), at(f, "key.tmp")), 0);
	put(at(f, "key"), "secret");
	assert_string_equal(contents(at(f, "victim")), "victim's bytes");
	assert_string_equal(contents(at(f, "key")), "secret");
}

static void test_write_file_replaces_a_link_at_its_path_and_not_its_target(void **state)
{
	struct fx *f = *state;
	struct stat st;

	put(at(f, "victim"), "victim's bytes");
	assert_int_equal(symlink(at(f, "victim"), at(f, "key")), 0);
	put(at(f, "key"), "secret");
	assert_string_equal(contents(at(f, "victim")), "victim's bytes");
	assert_int_equal(lstat(at(f, "key"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(contents(at(f, "key")), "secret");
	assert_int_equal(names(f), 2);              /* no temporary file left */
}

static void test_write_new_refuses_any_name_that_exists_and_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct stat st;

	put(at(f, "file"), "old");
	assert_int_equal(fdio_write_new(at(f, "file"), "new", 3, 0600), -EEXIST);
	assert_string_equal(contents(at(f, "file")), "old");
	/* a link to a file: the file is not touched */
	assert_int_equal(symlink(at(f, "file"), at(f, "link")), 0);
	assert_int_equal(fdio_write_new(at(f, "link"), "new", 3, 0600), -EEXIST);
	assert_string_equal(contents(at(f, "file")), "old");
	/* a dangling link: its target is not made */
	assert_int_equal(symlink(at(f, "absent"), at(f, "dangling")), 0);
	assert_int_equal(fdio_write_new(at(f, "dangling"), "new", 3, 0600), -EEXIST);
	assert_int_equal(lstat(at(f, "absent"), &st), -1);
	assert_int_equal(names(f), 3);              /* file, link, dangling */
	/* and a new name is written */
	assert_int_equal(fdio_write_new(at(f, "fresh"), "new", 3, 0600), 0);
	assert_string_equal(contents(at(f, "fresh")), "new");
	assert_int_equal(names(f), 4);
}

static void test_a_file_has_exactly_the_mode_asked_whatever_the_umask(void **state)
{
	struct fx *f = *state;
	mode_t old = umask(0);
	struct stat st;

	assert_int_equal(fdio_write_new(at(f, "open"), "x", 1, 0600), 0);
	umask(0277);
	assert_int_equal(fdio_write_file(at(f, "tight"), "x", 1, 0600), 0);
	umask(old);
	assert_int_equal(stat(at(f, "open"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(at(f, "tight"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_a_failed_write_leaves_the_place_as_it_was_and_no_temporary_file(void **state)
{
	struct fx *f = *state;

	/* the place is a directory: the rename fails */
	assert_int_equal(mkdir(at(f, "d"), 0700), 0);
	assert_int_equal(fdio_write_file(at(f, "d"), "x", 1, 0600), -EISDIR);
	assert_int_equal(names(f), 1);
	/* no such directory: nothing made */
	assert_int_equal(fdio_write_file(at(f, "none/x"), "x", 1, 0600), -ENOENT);
	assert_int_equal(fdio_write_new(at(f, "none/x"), "x", 1, 0600), -ENOENT);
	assert_int_equal(names(f), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_write_file_never_writes_through_a_link_planted_at_its_old_temporary_name,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_write_file_replaces_a_link_at_its_path_and_not_its_target, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_write_new_refuses_any_name_that_exists_and_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_file_has_exactly_the_mode_asked_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_failed_write_leaves_the_place_as_it_was_and_no_temporary_file, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
