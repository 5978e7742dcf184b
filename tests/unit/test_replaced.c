/* test_replaced.c - the notes that let a retried create say what the first
 * one replaced (store/replaced.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/oid.h"
#include "store/replaced.h"

static struct ofs_oid oid_n(unsigned n)
{
	struct ofs_oid o;

	memset(&o, 0, sizeof(o));
	memcpy(o.b, &n, sizeof(n));
	o.b[OFS_OID_LEN - 1] = 0x5a;
	return o;
}

static struct ofs_dirent file_n(unsigned n)
{
	struct ofs_dirent d;

	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	d.handle.oid = oid_n(n);
	return d;
}

static void test_noted_replacement_is_found(void **state)
{
	struct replaced *r = replaced_new();
	struct ofs_dirent old = file_n(7), got;

	(void)state;
	assert_non_null(r);
	replaced_note(r, oid_n(1), "n4", oid_n(8), &old);
	memset(&got, 0, sizeof(got));
	assert_true(replaced_find(r, oid_n(1), "n4", oid_n(8), &got));
	assert_true(oid_eq(got.handle.oid, oid_n(7)));
	assert_int_equal(got.type, OFS_OBJ_METAFILE);
	replaced_free(r);
}

/* Another directory, another name or another new object: not this one. */
static void test_only_the_exact_replacement_matches(void **state)
{
	struct replaced *r = replaced_new();
	struct ofs_dirent old = file_n(7), got = file_n(99);

	(void)state;
	replaced_note(r, oid_n(1), "n4", oid_n(8), &old);
	assert_false(replaced_find(r, oid_n(2), "n4", oid_n(8), &got));
	assert_false(replaced_find(r, oid_n(1), "n5", oid_n(8), &got));
	assert_false(replaced_find(r, oid_n(1), "n4", oid_n(9), &got));
	assert_true(oid_eq(got.handle.oid, oid_n(99)));     /* untouched */
	replaced_free(r);
}

/* The ring keeps the latest REPLACED_NOTES notes and forgets older ones. */
static void test_oldest_notes_are_pushed_out(void **state)
{
	struct replaced *r = replaced_new();
	struct ofs_dirent got;
	char name[16];

	(void)state;
	for (unsigned i = 0; i < REPLACED_NOTES + 10; i++) {
		struct ofs_dirent old = file_n(100000 + i);
		snprintf(name, sizeof(name), "f%u", i);
		replaced_note(r, oid_n(1), name, oid_n(200000 + i), &old);
	}
	assert_false(replaced_find(r, oid_n(1), "f0", oid_n(200000), &got));
	assert_false(replaced_find(r, oid_n(1), "f9", oid_n(200009), &got));
	assert_true(replaced_find(r, oid_n(1), "f10", oid_n(200010), &got));
	assert_true(oid_eq(got.handle.oid, oid_n(100010)));
	snprintf(name, sizeof(name), "f%u", REPLACED_NOTES + 9);
	assert_true(replaced_find(r, oid_n(1), name, oid_n(200000 + REPLACED_NOTES + 9), &got));
	replaced_free(r);
}

static void test_null_set_finds_nothing(void **state)
{
	struct ofs_dirent old = file_n(1), got;

	(void)state;
	replaced_note(NULL, oid_n(1), "a", oid_n(2), &old);
	assert_false(replaced_find(NULL, oid_n(1), "a", oid_n(2), &got));
	replaced_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noted_replacement_is_found),
		cmocka_unit_test(test_only_the_exact_replacement_matches),
		cmocka_unit_test(test_oldest_notes_are_pushed_out),
		cmocka_unit_test(test_null_set_finds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
