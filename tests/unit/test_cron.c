/*
 * test_cron.c - schedules' cron expressions (pbj/cron.h): each field form,
 * lists, ranges and steps, Sunday as 0 and 7, cron's either-day rule, every
 * malformed form refused, and "is one due" across minutes, days and a
 * month's look-back, in real minutes and in the tests' shorter units.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "pbj/cron.h"

/* 2026-12-06 is a Sunday. */
static struct tm at(int mday, int hour, int min)
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = 2026 - 1900;
	tm.tm_mon = 11;
	tm.tm_mday = mday;
	tm.tm_hour = hour;
	tm.tm_min = min;
	t = timegm(&tm);
	gmtime_r(&t, &tm);           /* (fills in the day of week) */
	return tm;
}

static int64_t epoch(int mday, int hour, int min)
{
	struct tm tm = at(mday, hour, min);

	return (int64_t)timegm(&tm);
}

static void test_each_field_form_matches_what_it_says(void **state)
{
	struct tm t = at(6, 3, 15);      /* Sunday 03:15 */

	(void)state;
	assert_int_equal(pbj_cron_match("* * * * *", &t), 1);
	assert_int_equal(pbj_cron_match("15 3 * * *", &t), 1);
	assert_int_equal(pbj_cron_match("16 3 * * *", &t), 0);
	assert_int_equal(pbj_cron_match("10-20 3 * * *", &t), 1);
	assert_int_equal(pbj_cron_match("16-20 3 * * *", &t), 0);
	assert_int_equal(pbj_cron_match("*/5 * * * *", &t), 1);
	assert_int_equal(pbj_cron_match("*/7 * * * *", &t), 0);
	assert_int_equal(pbj_cron_match("0-30/15 * * * *", &t), 1);
	assert_int_equal(pbj_cron_match("5/10 * * * *", &t), 1);     /* 5, 15, 25, ... */
	assert_int_equal(pbj_cron_match("6/10 * * * *", &t), 0);
	assert_int_equal(pbj_cron_match("1,2,15 3 * * *", &t), 1);
	assert_int_equal(pbj_cron_match("1,2,16 3 * * *", &t), 0);
	assert_int_equal(pbj_cron_match("15 3 6 12 *", &t), 1);
	assert_int_equal(pbj_cron_match("15 3 6 11 *", &t), 0);
}

static void test_sunday_is_0_and_7(void **state)
{
	struct tm sun = at(6, 0, 0), mon = at(7, 0, 0);

	(void)state;
	assert_int_equal(pbj_cron_match("0 0 * * 0", &sun), 1);
	assert_int_equal(pbj_cron_match("0 0 * * 7", &sun), 1);
	assert_int_equal(pbj_cron_match("0 0 * * 7", &mon), 0);
	assert_int_equal(pbj_cron_match("0 0 * * 1-5", &mon), 1);
	assert_int_equal(pbj_cron_match("0 0 * * 1-5", &sun), 0);
}

static void test_either_day_field_matches_when_both_are_restricted(void **state)
{
	struct tm sun6 = at(6, 0, 0), mon7 = at(7, 0, 0), tue1 = at(1, 0, 0);

	(void)state;
	/* day 1 of the month, or any Sunday */
	assert_int_equal(pbj_cron_match("0 0 1 * 0", &sun6), 1);
	assert_int_equal(pbj_cron_match("0 0 1 * 0", &tue1), 1);
	assert_int_equal(pbj_cron_match("0 0 1 * 0", &mon7), 0);
	/* one restricted: both must match */
	assert_int_equal(pbj_cron_match("0 0 1 * *", &sun6), 0);
}

static void test_malformed_expressions_are_refused(void **state)
{
	static const char *const bad[] = {
		"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
		"* * 32 * *", "* * * 13 *", "* * * * 8", "x * * * *", "1- * * * *",
		"5-1 * * * *", "*/0 * * * *", "*/61 * * * *", "1x * * * *", "1,,2 * * * *x",
		"-1 * * * *",
	};
	struct tm t = at(6, 3, 15);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pbj_cron_match(bad[i], &t) != -1)
			fail_msg("'%s' was taken", bad[i]);
}

static void test_due_when_a_matching_minute_lies_in_the_window(void **state)
{
	(void)state;
	/* daily at 03:15 */
	assert_true(pbj_cron_due("15 3 * * *", epoch(6, 3, 14), epoch(6, 3, 15), 60));
	assert_false(pbj_cron_due("15 3 * * *", epoch(6, 3, 15), epoch(6, 3, 16), 60));
	assert_true(pbj_cron_due("15 3 * * *", epoch(5, 4, 0), epoch(6, 4, 0), 60));
	assert_false(pbj_cron_due("15 3 * * *", epoch(6, 3, 16), epoch(7, 3, 14), 60));
	/* the window's end is in, its start is not */
	assert_true(pbj_cron_due("0 * * * *", epoch(6, 0, 59), epoch(6, 1, 0), 60));
	assert_false(pbj_cron_due("0 * * * *", epoch(6, 1, 0), epoch(6, 1, 59), 60));
	/* a schedule last fired long ago looks back a month, not further */
	assert_true(pbj_cron_due("0 0 1 * *", 0, epoch(6, 0, 0), 60));
	assert_false(pbj_cron_due("0 0 * 1 *", 0, epoch(6, 0, 0), 60));
	/* a malformed one is never due */
	assert_false(pbj_cron_due("61 * * * *", 0, epoch(6, 0, 0), 60));
}

static void test_a_shorter_unit_makes_each_second_a_minute(void **state)
{
	(void)state;
	/* unit 1: minute m of the clock is second m; "every 2nd minute" is
	 * due at every even second */
	assert_true(pbj_cron_due("*/2 * * * *", 1000, 1002, 1));
	assert_false(pbj_cron_due("*/2 * * * *", 1000, 1001, 1));
	/* a unit out of range is a real minute */
	assert_false(pbj_cron_due("*/2 * * * *", epoch(6, 0, 0), epoch(6, 0, 0) + 50, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_field_form_matches_what_it_says),
		cmocka_unit_test(test_sunday_is_0_and_7),
		cmocka_unit_test(test_either_day_field_matches_when_both_are_restricted),
		cmocka_unit_test(test_malformed_expressions_are_refused),
		cmocka_unit_test(test_due_when_a_matching_minute_lies_in_the_window),
		cmocka_unit_test(test_a_shorter_unit_makes_each_second_a_minute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
