/* test_cli_common.c - the words the programs read the same way
 * (cli/common.c): a word that begins with '-' is never a value. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/common.h"

static const struct cli_prog prog = { "prog", "usage: prog THING\n" };

/* What cli_value_ok printed on stdout and stderr, and its result. */
struct said {
	bool ok;
	int status;
	char out[512], err[512];
};

static void slurp(FILE *f, char *buf, size_t n)
{
	size_t got;

	rewind(f);
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
}

static struct said value(const char *what, const char *w, unsigned flags)
{
	struct said s = { .status = -1 };
	FILE *out = tmpfile(), *err = tmpfile();
	int o = dup(1), e = dup(2);

	assert_non_null(out);
	assert_non_null(err);
	fflush(stdout);
	fflush(stderr);
	assert_int_equal(dup2(fileno(out), 1), 1);
	assert_int_equal(dup2(fileno(err), 2), 2);
	s.ok = cli_value_ok(&prog, what, w, flags, &s.status);
	fflush(stdout);
	fflush(stderr);
	assert_int_equal(dup2(o, 1), 1);
	assert_int_equal(dup2(e, 2), 2);
	close(o);
	close(e);
	slurp(out, s.out, sizeof(s.out));
	slurp(err, s.err, sizeof(s.err));
	return s;
}

static void test_a_word_that_does_not_begin_with_a_dash_is_a_value(void **state)
{
	static const char *const words[] = { "dir", "./-x", "a-b", "/tmp/--help", "x-", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct said s = value("CADIR", words[i], 0);
		assert_true(s.ok);
		assert_int_equal(s.status, -1);          /* untouched */
		assert_string_equal(s.out, "");
		assert_string_equal(s.err, "");
	}
}

static void test_an_option_word_is_refused_with_exit_2_naming_it(void **state)
{
	static const char *const words[] = { "-x", "--out", "--", "-", "--help=1" };

	(void)state;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct said s = value("--data", words[i], 0);
		char want[64];
		assert_false(s.ok);
		assert_int_equal(s.status, 2);
		snprintf(want, sizeof(want), "prog: --data '%s': ", words[i]);
		assert_non_null(strstr(s.err, want));
		assert_non_null(strstr(s.err, "usage: prog THING"));
		assert_string_equal(s.out, "");
	}
}

static void test_help_where_a_value_goes_prints_the_usage_and_exits_0(void **state)
{
	struct said s;

	(void)state;
	s = value("CADIR", "--help", 0);
	assert_false(s.ok);
	assert_int_equal(s.status, 0);
	assert_string_equal(s.out, "usage: prog THING\n");
	assert_string_equal(s.err, "");
	s = value("NAME", "-h", 0);
	assert_false(s.ok);
	assert_int_equal(s.status, 0);
	assert_string_equal(s.out, "usage: prog THING\n");
	/* where the caller cannot stop there: refused as any option word */
	s = value("--server", "--help", CLI_VALUE_NO_HELP);
	assert_false(s.ok);
	assert_int_equal(s.status, 2);
	assert_string_equal(s.out, "");
	assert_non_null(strstr(s.err, "--server '--help'"));
}

static void test_a_lone_dash_is_a_value_only_where_it_means_standard_io(void **state)
{
	struct said s;

	(void)state;
	s = value("LOCAL", "-", CLI_VALUE_DASH);
	assert_true(s.ok);
	s = value("LOCAL", "-", 0);
	assert_false(s.ok);
	assert_int_equal(s.status, 2);
	s = value("LOCAL", "-x", CLI_VALUE_DASH);
	assert_false(s.ok);
	assert_int_equal(s.status, 2);
}

/* cli_line_parse of the words (argv[0] "prog"). */
static int line(struct cli_line *l, const char **why, unsigned flags, int n, ...)
{
	static char *argv[16];
	va_list ap;

	argv[0] = "prog";
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		argv[i + 1] = va_arg(ap, char *);
	va_end(ap);
	argv[n + 1] = NULL;
	return cli_line_parse(n + 1, argv, flags, l, why);
}

static void test_the_common_options_take_no_option_word_for_their_value(void **state)
{
	struct cli_line l;
	const char *why = NULL;

	(void)state;
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 2, "--db", "--help"), 0);
	assert_true(l.help);
	assert_null(l.db);
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 3, "--db", "-x", "list"), -EINVAL);
	assert_non_null(strstr(why, "--db needs FILE, not '-x'"));
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 2, "--db=-x", "list"), -EINVAL);
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, 0, 3, "--identity", "-h", "ls"), 0);
	assert_true(l.help);
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, 0, 3, "--cluster", "--insecure", "ls"), -EINVAL);
	assert_non_null(strstr(why, "--cluster needs HOST:PORT, not '--insecure'"));
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 3, "--db", "j.db", "list"), 0);
	assert_string_equal(l.db, "j.db");
	assert_false(l.help);
	cli_line_free(&l);
}

static void test_help_anywhere_before_a_double_dash_is_help(void **state)
{
	struct cli_line l;
	const char *why = NULL;

	(void)state;
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 3, "ca", "init", "--help"), 0);
	assert_true(l.help);
	cli_line_free(&l);
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 4, "schedule", "add", "-h", "x"), 0);
	assert_true(l.help);
	cli_line_free(&l);
	/* after "--" a word is the command's (submit arguments) */
	assert_int_equal(line(&l, &why, CLI_LINE_PBJ, 4, "schedule", "add", "--", "--help"), 0);
	assert_false(l.help);
	assert_int_equal(l.nrest, 5);
	assert_string_equal(l.rest[4], "--help");
	cli_line_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_word_that_does_not_begin_with_a_dash_is_a_value),
		cmocka_unit_test(test_an_option_word_is_refused_with_exit_2_naming_it),
		cmocka_unit_test(test_help_where_a_value_goes_prints_the_usage_and_exits_0),
		cmocka_unit_test(test_a_lone_dash_is_a_value_only_where_it_means_standard_io),
		cmocka_unit_test(test_the_common_options_take_no_option_word_for_their_value),
		cmocka_unit_test(test_help_anywhere_before_a_double_dash_is_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
