/*
 * test_jobtype.c - the job types' table (pbj/jobtype.h), row by row: a
 * name each, found again by it and spelled by pbj_type_name; a type that
 * is submitted runs a task kind the servers know, and one recorded only
 * runs none; its options agree with what it does (a repair cap only where
 * it repairs, --repair only where that is a choice, one --server or many,
 * never both); a type that empties its server ends by what it moved; and
 * submit's list of types is the submitted rows'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/proto.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"

static void test_every_type_has_one_row_found_by_its_name(void **state)
{
	(void)state;
	for (int type = PBJ_TYPE_NONE + 1; type <= PBJ_TYPE_CATCHUP; type++) {
		const struct pbj_jobtype *t = pbj_jobtype(type);
		int back = 0;
		assert_non_null(t);
		assert_int_equal(t->type, type);
		assert_ptr_equal(pbj_jobtype_named(t->name), t);
		assert_string_equal(pbj_type_name(type), t->name);
		assert_int_equal(pbj_type_parse(t->name, &back), 0);
		assert_int_equal(back, type);
		assert_non_null(t->usage);
	}
	assert_null(pbj_jobtype(PBJ_TYPE_NONE));
	assert_null(pbj_jobtype(PBJ_TYPE_CATCHUP + 1));
	assert_null(pbj_jobtype_named("bogus"));
	assert_null(pbj_jobtype_named(NULL));
	assert_null(pbj_type_name(PBJ_TYPE_NONE));
}

static void test_each_rows_columns_agree(void **state)
{
	(void)state;
	for (int type = PBJ_TYPE_NONE + 1; type <= PBJ_TYPE_CATCHUP; type++) {
		const struct pbj_jobtype *t = pbj_jobtype(type);
		if (t->submitted)
			assert_true(t->kind == OFS_TASK_SCRUB || t->kind == OFS_TASK_DRAIN ||
				    t->kind == OFS_TASK_REBALANCE);
		else
			assert_int_equal(t->kind, 0);
		if (t->opts & PBJ_OPT_MAX_REPAIRS)
			assert_int_not_equal(t->repairs, PBJ_REPAIRS_NEVER);
		assert_int_equal((t->opts & PBJ_OPT_REPAIR) != 0,
				 t->repairs == PBJ_REPAIRS_BY_CHOICE);
		assert_false((t->opts & PBJ_OPT_SERVER_ONE) && (t->opts & PBJ_OPT_SERVERS));
		if (t->empties)
			assert_int_equal(t->ends, PBJ_ENDS_BY_MOVING);
		/* (what the servers' task kinds take: repair only by a scrub) */
		if (t->repairs != PBJ_REPAIRS_NEVER)
			assert_int_equal(t->kind, OFS_TASK_SCRUB);
	}
	assert_true(pbj_jobtype(PBJ_TYPE_DRAIN)->empties);
	assert_int_equal(pbj_jobtype(PBJ_TYPE_REPAIR)->repairs, PBJ_REPAIRS_ALWAYS);
}

static void test_submit_names_the_submitted_types(void **state)
{
	char names[128], small[8];

	(void)state;
	pbj_jobtype_submitted_names(names, sizeof(names));
	assert_string_equal(names, "scrub, repair, drain, rebalance");
	pbj_jobtype_submitted_names(small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_has_one_row_found_by_its_name),
		cmocka_unit_test(test_each_rows_columns_agree),
		cmocka_unit_test(test_submit_names_the_submitted_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
