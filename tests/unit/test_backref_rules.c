/*
 * test_backref_rules.c - the rules of back references (backref/rules.h)
 * as pure functions, one case per row of the check's matrix: a forward
 * pointer judged against the object it names (agreeing, an object held
 * nowhere or by a silent server, a back reference naming another owner
 * that does or does not point at it too, a wrong stripe or name, a wrong
 * type), an object's back reference judged by what its owner says (the
 * root, objects being built, owners pointing, pointing elsewhere, being
 * built, not pointing, held nowhere, silent), and the owner's side of the
 * answer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backref/rules.h"

static struct ofs_oid oid_of(uint8_t n)
{
	struct ofs_oid o;

	memset(&o, 0, sizeof(o));
	o.b[0] = n;
	o.b[15] = 0x5a;
	return o;
}

static struct ofs_attr *attr_new(uint8_t type, uint16_t nparts)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));

	assert_non_null(a);
	a->type = type;
	a->nparts = nparts;
	for (uint16_t i = 0; i < nparts; i++)
		a->parts[i].oid = oid_of((uint8_t)(100 + i));
	return a;
}

static struct ofs_backref backref(uint8_t owner, uint32_t stripe, const char *name)
{
	struct ofs_backref b;

	memset(&b, 0, sizeof(b));
	if (owner)
		b.owner = oid_of(owner);
	b.stripe = stripe;
	snprintf(b.name, sizeof(b.name), "%s", name);
	return b;
}

static const struct br_says SAYS_YES = { .held = true, .ans = POINTS_YES };
static const struct br_says SAYS_ELSEWHERE = { .held = true, .ans = POINTS_ELSEWHERE };
static const struct br_says SAYS_NO = { .held = true, .ans = POINTS_NO };
static const struct br_says SAYS_BUILDING = { .held = true, .ans = POINTS_BUILDING };
static const struct br_says SILENT = { .held = false, .quiet = true };
static const struct br_says NOWHERE = { .held = false, .quiet = false };

/* ---- what a pointer expects ------------------------------------------------- */

static void test_expect_parts_and_entries(void **state)
{
	struct ofs_attr *mf = attr_new(OFS_OBJ_METAFILE, 3), *dir = attr_new(OFS_OBJ_DIRECTORY, 2);
	struct ofs_attr *dd = attr_new(OFS_OBJ_DIRDATA, 0), *df = attr_new(OFS_OBJ_DFILE, 0);
	struct ofs_dirent d = { .type = OFS_OBJ_DIRECTORY };
	struct br_expect e;

	(void)state;
	assert_int_equal(br_expect_part(mf, oid_of(1), 2, &e), 0);
	assert_true(oid_eq(e.owner, oid_of(1)));
	assert_int_equal(e.stripe, 2);
	assert_null(e.name);
	assert_int_equal(e.type, OFS_OBJ_DFILE);
	assert_int_equal(br_expect_part(dir, oid_of(2), 1, &e), 0);
	assert_int_equal(e.stripe, -1);          /* a dirdata's slot is not judged */
	assert_int_equal(e.type, OFS_OBJ_DIRDATA);
	assert_int_equal(br_expect_part(mf, oid_of(1), 3, &e), -EINVAL);   /* no such part */
	assert_int_equal(br_expect_part(df, oid_of(1), 0, &e), -EINVAL);   /* no parts at all */
	dd->backref = backref(7, 0, "");
	br_expect_entry(dd, "x", &d, &e);
	assert_true(oid_eq(e.owner, oid_of(7)));  /* the directory, not the dirdata */
	assert_string_equal(e.name, "x");
	assert_int_equal(e.type, OFS_OBJ_DIRECTORY);
	free(mf); free(dir); free(dd); free(df);
}

/* ---- a forward pointer judged ------------------------------------------------- */

static const struct br_expect STRIPE1 = { .stripe = 1, .name = NULL, .type = OFS_OBJ_DFILE };

static struct br_expect stripe1_of(uint8_t owner)
{
	struct br_expect e = STRIPE1;

	e.owner = oid_of(owner);
	return e;
}

static void test_pointer_agreeing_is_ok(void **state)
{
	struct br_expect e = stripe1_of(1);
	struct ofs_backref b = backref(1, 1, "");

	(void)state;
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, NULL), BRP_OK);
}

static void test_pointer_to_an_object_nobody_holds_dangles(void **state)
{
	struct br_expect e = stripe1_of(1);
	struct ofs_backref b = backref(0, 0, "");

	(void)state;
	assert_int_equal(br_judge_pointer(&e, BR_NOWHERE, &b, 0, NULL), BRP_DANGLING);
	/* a server that did not answer may hold it: no verdict */
	assert_int_equal(br_judge_pointer(&e, BR_UNKNOWN, &b, 0, NULL), BRP_WAIT);
}

static void test_pointer_to_an_object_of_another_owner(void **state)
{
	struct br_expect e = stripe1_of(1);
	struct ofs_backref b = backref(2, 0, "");

	(void)state;
	/* first ask the owner its back reference names */
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, NULL), BRP_ASK_OTHER);
	/* it points at it too (where its back reference says, or elsewhere):
	 * two owners, the one the back reference names keeps it */
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &SAYS_YES),
			 BRP_SECOND_OWNER);
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &SAYS_ELSEWHERE),
			 BRP_SECOND_OWNER);
	/* it does not (or is still being built, or exists nowhere): the back
	 * reference is what is wrong */
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &SAYS_NO), BRP_BACKREF);
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &SAYS_BUILDING),
			 BRP_BACKREF);
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &NOWHERE), BRP_BACKREF);
	/* nobody holding it answered and a server was silent: wait */
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, &SILENT), BRP_WAIT);
}

static void test_pointer_to_an_object_with_no_owner_set(void **state)
{
	struct br_expect e = stripe1_of(1);
	struct ofs_backref b = backref(0, 0, "");

	(void)state;
	/* nobody else to ask: its back reference is rewritten */
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, NULL), BRP_BACKREF);
}

static void test_pointer_at_the_wrong_stripe_or_name(void **state)
{
	struct br_expect e = stripe1_of(1), any = stripe1_of(1);
	struct ofs_backref b = backref(1, 2, "");
	struct br_expect ent = { .owner = oid_of(1), .stripe = -1, .name = "a", .type = -1 };
	struct ofs_backref nb = backref(1, 0, "b");

	(void)state;
	assert_int_equal(br_judge_pointer(&e, BR_FOUND, &b, OFS_OBJ_DFILE, NULL), BRP_BACKREF);
	any.stripe = -1;                         /* (a dirdata: its slot is not judged) */
	assert_int_equal(br_judge_pointer(&any, BR_FOUND, &b, OFS_OBJ_DFILE, NULL), BRP_OK);
	assert_int_equal(br_judge_pointer(&ent, BR_FOUND, &nb, OFS_OBJ_METAFILE, NULL), BRP_BACKREF);
	nb = backref(1, 0, "a");
	assert_int_equal(br_judge_pointer(&ent, BR_FOUND, &nb, OFS_OBJ_METAFILE, NULL), BRP_OK);
}

static void test_pointer_saying_another_type(void **state)
{
	struct br_expect ent = { .owner = oid_of(1), .stripe = -1, .name = "a",
				 .type = OFS_OBJ_DIRECTORY };
	struct ofs_backref b = backref(1, 0, "a");

	(void)state;
	assert_int_equal(br_judge_pointer(&ent, BR_FOUND, &b, OFS_OBJ_METAFILE, NULL), BRP_TYPE);
	assert_int_equal(br_judge_pointer(&ent, BR_FOUND, &b, OFS_OBJ_DIRECTORY, NULL), BRP_OK);
	/* a wrong back reference is said first: the type is judged once the
	 * two references agree */
	b = backref(1, 0, "z");
	assert_int_equal(br_judge_pointer(&ent, BR_FOUND, &b, OFS_OBJ_METAFILE, NULL), BRP_BACKREF);
}

/* ---- a back reference judged by its owner ---------------------------------------- */

static void test_owner_side_skips_the_root_and_young_builds(void **state)
{
	struct ofs_attr *root = attr_new(OFS_OBJ_DIRECTORY, 1), *mf = attr_new(OFS_OBJ_METAFILE, 0);

	(void)state;
	assert_int_equal(br_judge_owner(root, false, NULL), BRO_SKIP);
	mf->backref = backref(3, 0, "f");
	assert_int_equal(br_judge_owner(mf, true, NULL), BRO_SKIP);    /* a put in progress */
	assert_int_equal(br_judge_owner(mf, false, NULL), BRO_ASK);
	free(root); free(mf);
}

static void test_owner_side_verdicts(void **state)
{
	struct ofs_attr *df = attr_new(OFS_OBJ_DFILE, 0), *mf = attr_new(OFS_OBJ_METAFILE, 0);

	(void)state;
	df->backref = backref(3, 0, "");
	mf->backref = backref(4, 0, "f");
	assert_int_equal(br_judge_owner(df, false, NULL), BRO_ASK);
	assert_int_equal(br_judge_owner(df, false, &SAYS_YES), BRO_OK);
	assert_int_equal(br_judge_owner(df, false, &SAYS_ELSEWHERE), BRO_OK);
	/* an owner being built: fine while young, abandoned when old */
	assert_int_equal(br_judge_owner(df, true, &SAYS_BUILDING), BRO_OK);
	assert_int_equal(br_judge_owner(df, false, &SAYS_BUILDING), BRO_OWNER_UNFINISHED);
	assert_int_equal(br_judge_owner(df, false, &SILENT), BRO_WAIT);
	/* the owner is there and does not point at it: relink */
	assert_int_equal(br_judge_owner(df, false, &SAYS_NO), BRO_NOT_POINTED);
	/* nobody holds the owner: /lost+found */
	assert_int_equal(br_judge_owner(df, false, &NOWHERE), BRO_NO_OWNER);
	/* an object never finished itself is that, whoever holds its owner */
	assert_int_equal(br_judge_owner(mf, false, &SAYS_NO), BRO_UNFINISHED);
	assert_int_equal(br_judge_owner(mf, false, &NOWHERE), BRO_UNFINISHED);
	free(df); free(mf);
}

/* ---- the owner's answer -------------------------------------------------------- */

static void test_points_answers(void **state)
{
	struct ofs_attr *mf = attr_new(OFS_OBJ_METAFILE, 3), *dir = attr_new(OFS_OBJ_DIRECTORY, 2);
	struct ofs_attr *building = attr_new(OFS_OBJ_METAFILE, 0), *dd = attr_new(OFS_OBJ_DIRDATA, 0);

	(void)state;
	assert_true(br_building(building));
	assert_false(br_building(mf));
	assert_false(br_building(dd));
	assert_int_equal(br_points(building, oid_of(100), 0), POINTS_BUILDING);
	assert_int_equal(br_points(mf, oid_of(101), 1), POINTS_YES);
	assert_int_equal(br_points(mf, oid_of(101), 2), POINTS_ELSEWHERE);
	assert_int_equal(br_points(mf, oid_of(101), -1), POINTS_YES);
	assert_int_equal(br_points(mf, oid_of(9), 0), POINTS_NO);
	/* the same dfile in two stripes: where the back reference says wins */
	mf->parts[2].oid = oid_of(101);
	assert_int_equal(br_points(mf, oid_of(101), 2), POINTS_YES);
	assert_int_equal(br_points(mf, oid_of(101), 0), POINTS_ELSEWHERE);
	assert_int_equal(br_points(dir, oid_of(101), -1), POINTS_YES);
	assert_int_equal(br_points(dir, oid_of(9), -1), POINTS_NO);
	assert_int_equal(br_points(dd, oid_of(101), -1), POINTS_NO);   /* (entries: the caller) */
	free(mf); free(dir); free(building); free(dd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expect_parts_and_entries),
		cmocka_unit_test(test_pointer_agreeing_is_ok),
		cmocka_unit_test(test_pointer_to_an_object_nobody_holds_dangles),
		cmocka_unit_test(test_pointer_to_an_object_of_another_owner),
		cmocka_unit_test(test_pointer_to_an_object_with_no_owner_set),
		cmocka_unit_test(test_pointer_at_the_wrong_stripe_or_name),
		cmocka_unit_test(test_pointer_saying_another_type),
		cmocka_unit_test(test_owner_side_skips_the_root_and_young_builds),
		cmocka_unit_test(test_owner_side_verdicts),
		cmocka_unit_test(test_points_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
