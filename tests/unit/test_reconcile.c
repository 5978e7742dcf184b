/* test_reconcile.c - the rules that reconcile copies when none is current
 * (server/reconcile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "server/reconcile.h"

/* Three copies, confidence 2: an acknowledged create leaves at least 2,
 * an acknowledged remove at most 1. */
static void test_verdict_majority(void **state)
{
	(void)state;
	assert_int_equal(reconcile_entry_verdict(3, 0, 3, 2, true), 1);
	assert_int_equal(reconcile_entry_verdict(2, 0, 3, 2, true), 1);     /* made while one was down */
	assert_int_equal(reconcile_entry_verdict(1, 0, 3, 2, true), 0);     /* removed while one was down */
	assert_int_equal(reconcile_entry_verdict(0, 0, 3, 2, true), 0);     /* removed everywhere */
}

/* A rename or a replace: the object exists but names another entry. */
static void test_verdict_backref(void **state)
{
	(void)state;
	assert_int_equal(reconcile_entry_verdict(3, 0, 3, 2, false), 0);
	assert_int_equal(reconcile_entry_verdict(2, 0, 3, 2, false), 0);
}

/* A copy that did not answer may tip it either way: ask later; when it
 * cannot, decide. */
static void test_verdict_quiet(void **state)
{
	(void)state;
	assert_int_equal(reconcile_entry_verdict(1, 1, 3, 2, true), -OFS_EUNREACHABLE);
	assert_int_equal(reconcile_entry_verdict(2, 1, 3, 2, true), 1);
	assert_int_equal(reconcile_entry_verdict(0, 1, 3, 2, true), 0);     /* 0 + 1 < 2 */
}

/* Confidence at most half the copies: a create and a remove can leave
 * the same count - a conflict, never a guess. */
static void test_verdict_overlap(void **state)
{
	(void)state;
	assert_int_equal(reconcile_entry_verdict(2, 0, 4, 2, true), -1);
	assert_int_equal(reconcile_entry_verdict(1, 0, 3, 1, true), -1);
	assert_int_equal(reconcile_entry_verdict(3, 0, 4, 2, true), 1);
	assert_int_equal(reconcile_entry_verdict(1, 0, 1, 1, true), 1);     /* one copy */
}

static void test_lead_is_smallest(void **state)
{
	struct ofs_sid s[3];

	(void)state;
	memset(s, 0, sizeof(s));
	s[0].b[0] = 0x90;
	s[1].b[0] = 0x10;
	s[2].b[0] = 0x10;
	s[2].b[15] = 1;
	assert_memory_equal(reconcile_lead(s, 3).b, s[1].b, OFS_OID_LEN);
	assert_memory_equal(reconcile_lead(s, 1).b, s[0].b, OFS_OID_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_majority),
		cmocka_unit_test(test_verdict_backref),
		cmocka_unit_test(test_verdict_quiet),
		cmocka_unit_test(test_verdict_overlap),
		cmocka_unit_test(test_lead_is_smallest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
