/*
 * test_jobargs.c - a job's and a schedule's arguments as JSON
 * (pbj/jobargs.c): what ofs-pbj writes decodes back, nothing set is "",
 * and a text read back from the database that is not what is written
 * (wrong types, out of range, a relative path, an empty string) is
 * refused rather than half believed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "pbj/jobargs.h"

static void test_job_args_round_trip_sorted_and_compact(void **state)
{
	struct pbj_job_args *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char text[PBJ_ARGS_LEN];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	a->servers[a->nservers++] = "0a0b0c0d0e0f10111213141516171819";
	a->paths[a->npaths++] = "/data";
	a->max_repairs = 1000;
	a->metadata_only = true;
	assert_int_equal(pbj_job_args_encode(a, text), 0);
	assert_string_equal(text, "{\"max_repairs\":1000,\"metadata_only\":1,\"paths\":[\"/data\"],"
			    "\"servers\":[\"0a0b0c0d0e0f10111213141516171819\"]}");
	assert_int_equal(pbj_job_args_decode(text, b), 0);
	assert_int_equal(b->max_repairs, 1000);
	assert_true(b->metadata_only);
	assert_int_equal(b->nservers, 1);
	assert_string_equal(b->servers[0], "0a0b0c0d0e0f10111213141516171819");
	assert_int_equal(b->npaths, 1);
	assert_string_equal(b->paths[0], "/data");
	assert_int_equal(b->from_job, 0);
	memset(a, 0, sizeof(*a));
	assert_int_equal(pbj_job_args_encode(a, text), 0);
	assert_string_equal(text, "");
	assert_int_equal(pbj_job_args_decode("", b), 0);
	assert_int_equal(b->nservers + b->npaths, 0);
	/* members a newer ofs-pbj may add are skipped */
	assert_int_equal(pbj_job_args_decode("{\"threshold\":5,\"later\":[1]}", b), 0);
	assert_int_equal(b->threshold, 5);
	free(a);
	free(b);
}

static void test_job_args_refuse_what_is_never_written(void **state)
{
	static const char *const bad[] = {
		"not json", "[]", "{\"from_job\":\"12\"}", "{\"from_job\":-1}",
		"{\"threshold\":101}", "{\"metadata_only\":2}", "{\"paths\":[\"data\"]}",
		"{\"paths\":\"/data\"}", "{\"servers\":[\"\"]}", "{\"servers\":[7]}",
		"{\"threshold\":1,\"threshold\":2}",
	};
	struct pbj_job_args *a = calloc(1, sizeof(*a));
	struct pbj_job_args *keep = calloc(1, sizeof(*keep));

	(void)state;
	assert_non_null(a);
	assert_non_null(keep);
	a->from_job = 77;
	memcpy(keep, a, sizeof(*a));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pbj_job_args_decode(bad[i], a), -OFS_ECORRUPT);
		assert_int_equal(a->from_job, 77);          /* untouched */
	}
	a->threshold = 200;
	{
		char text[PBJ_ARGS_LEN];
		assert_int_equal(pbj_job_args_encode(a, text), -EINVAL);
	}
	free(a);
	free(keep);
}

static void test_sched_args_round_trip(void **state)
{
	static const char *const argv[] = { "scrub", "--rate", "10M" };
	struct pbj_sched_args *a = calloc(1, sizeof(*a));
	char text[PBJ_ARGS_LEN];

	(void)state;
	assert_non_null(a);
	assert_int_equal(pbj_sched_args_encode(3, argv, text), 0);
	assert_string_equal(text, "[\"scrub\",\"--rate\",\"10M\"]");
	assert_int_equal(pbj_sched_args_decode(text, a), 0);
	assert_int_equal(a->argc, 3);
	assert_string_equal(a->argv[2], "10M");
	assert_int_equal(pbj_sched_args_decode("[]", a), -OFS_ECORRUPT);
	assert_int_equal(pbj_sched_args_decode("[\"scrub\",null]", a), -OFS_ECORRUPT);
	assert_int_equal(pbj_sched_args_decode("{}", a), -OFS_ECORRUPT);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_args_round_trip_sorted_and_compact),
		cmocka_unit_test(test_job_args_refuse_what_is_never_written),
		cmocka_unit_test(test_sched_args_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
