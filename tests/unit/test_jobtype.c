/*
 * test_jobtype.c - the job types' table (pbj/jobtype.h), row by row: a
 * name each, found again by it and spelled by pbj_type_name; a type that
 * is submitted runs a task kind the servers know, and one recorded only
 * runs none; its options agree with what it does (a repair cap only where
 * it repairs, --repair only where that is a choice, one --server or many,
 * never both); a type that empties its server ends by what it moved; and
 * submit's list of types is the submitted rows'.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/proto.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"
#include "pbj/prepare.h"
#include "pbj/servers.h"

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
		assert_non_null(t->about);
		assert_ptr_equal(pbj_jobtype_at((size_t)(type - 1)), t);
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
	/* a type that empties its server is checked before it marks it;
	 * one that is not submitted is not prepared */
	for (int type = PBJ_TYPE_NONE + 1; type <= PBJ_TYPE_CATCHUP; type++) {
		const struct pbj_jobtype *t = pbj_jobtype(type);
		if (t->empties)
			assert_non_null(t->prepare);
		if (!t->submitted)
			assert_null(t->prepare);
	}
	assert_non_null(pbj_jobtype(PBJ_TYPE_REBALANCE)->prepare);
	/* a type that takes --path or --server checks them at submit */
	for (int type = PBJ_TYPE_NONE + 1; type <= PBJ_TYPE_CATCHUP; type++) {
		const struct pbj_jobtype *t = pbj_jobtype(type);
		if (t->opts & (PBJ_OPT_PATH | PBJ_OPT_SERVERS))
			assert_ptr_equal(t->prepare, pbj_prepare_scope);
		if (t->scheduled)
			assert_true(t->submitted);
	}
	assert_true(pbj_jobtype(PBJ_TYPE_SCRUB)->scheduled);
	assert_false(pbj_jobtype(PBJ_TYPE_DRAIN)->scheduled);
}

/* Without a cluster, a scope of whole SIDs is taken unchecked; a prefix
 * or a path, which only the cluster can check, is refused, saying so;
 * nothing asked is nothing refused. */
static void test_a_scope_the_cluster_must_check_needs_one(void **state)
{
	struct pbj_prep *p = calloc(1, sizeof(*p));
	struct pbj_job_args *a = calloc(1, sizeof(*a));
	char said[512];

	(void)state;
	assert_non_null(p);
	assert_non_null(a);
	p->say = p->preview = tmpfile();
	assert_non_null(p->say);
	assert_int_equal(pbj_prepare_scope(p, a), PBJ_PREP_OK);
	a->nservers = 1;
	a->servers[0] = "0123456789abcdef0123456789abcdef";
	assert_int_equal(pbj_prepare_scope(p, a), PBJ_PREP_OK);
	a->servers[0] = "0123";
	assert_int_equal(pbj_prepare_scope(p, a), PBJ_PREP_REFUSED);
	a->nservers = 0;
	a->npaths = 1;
	a->paths[0] = "/a";
	assert_int_equal(pbj_prepare_scope(p, a), PBJ_PREP_REFUSED);
	rewind(p->say);
	said[fread(said, 1, sizeof(said) - 1, p->say)] = '\0';
	assert_non_null(strstr(said, "a --server prefix needs the cluster"));
	assert_non_null(strstr(said, "checking --path needs the cluster"));
	fclose(p->say);
	free(a);
	free(p);
}

/* A preparation that cannot reach the cluster fails (submit's exit 3),
 * saying why on its say stream, and leaves the arguments as given. */
static void test_a_preparation_without_the_cluster_fails_and_says_so(void **state)
{
	const char *const cluster[] = { "127.0.0.1:1" };   /* (nothing listens there) */
	struct pbj_prep p = { .cluster = cluster, .ncluster = 1 };
	struct pbj_job_args *a = calloc(1, sizeof(*a));
	char said[512];

	(void)state;
	assert_non_null(a);
	a->nservers = 1;
	a->servers[0] = "abcd";
	p.say = p.preview = tmpfile();
	assert_non_null(p.say);
	assert_int_equal(pbj_jobtype(PBJ_TYPE_DRAIN)->prepare(&p, a), PBJ_PREP_FAILED);
	assert_string_equal(a->servers[0], "abcd");
	assert_int_equal(pbj_jobtype(PBJ_TYPE_REBALANCE)->prepare(&p, a), PBJ_PREP_FAILED);
	rewind(p.say);
	said[fread(said, 1, sizeof(said) - 1, p.say)] = '\0';
	assert_non_null(strstr(said, "cannot read the server table from 127.0.0.1:1"));
	assert_non_null(strstr(said, "planning the rebalance from 127.0.0.1:1"));
	fclose(p.say);
	free(a);
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

/* A SID prefix names one server or none; an ambiguous one is refused
 * naming the SIDs it matches, the first 8 of them and how many more. */
static void test_an_ambiguous_prefix_names_its_candidates(void **state)
{
	struct ofs_sid sids[12], got;
	char why[PBJ_SID_WHY_LEN], hex[OFS_OID_HEX];

	(void)state;
	memset(sids, 0, sizeof(sids));
	for (int i = 0; i < 12; i++) {
		sids[i].b[0] = 0xab;
		sids[i].b[1] = 0xcd;
		sids[i].b[15] = (uint8_t)(i + 1);
	}
	sids[11].b[1] = 0xce;             /* abce...: the only one */
	assert_int_equal(pbj_resolve_sid_in("abce", sids, 12, &got), 0);
	assert_true(sid_eq(got, sids[11]));
	assert_int_equal(pbj_resolve_sid_in("ABCE", sids, 12, &got), 0);
	assert_int_equal(pbj_resolve_sid_in("abcf", sids, 12, &got), -ENOENT);
	assert_int_equal(pbj_resolve_sid_in("abc", sids, 12, &got), -EINVAL);
	assert_int_equal(pbj_resolve_sid_in("abcx", sids, 12, &got), -EINVAL);
	assert_int_equal(pbj_resolve_sid_in("abcd", sids, 12, &got), -EEXIST);
	pbj_sid_why_in("abcd", -EEXIST, sids, 12, why);
	sid_to_hex(sids[0], hex);
	assert_non_null(strstr(why, "prefix matches several servers: "));
	assert_non_null(strstr(why, hex));
	sid_to_hex(sids[7], hex);
	assert_non_null(strstr(why, hex));
	sid_to_hex(sids[8], hex);
	assert_null(strstr(why, hex));    /* (the ninth: counted, not named) */
	assert_non_null(strstr(why, " and 3 more"));
	sid_to_hex(sids[11], hex);
	assert_null(strstr(why, hex));    /* (abce: not a match) */
	pbj_sid_why_in("abcf", -ENOENT, sids, 12, why);
	assert_string_equal(why, "no such server");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_has_one_row_found_by_its_name),
		cmocka_unit_test(test_each_rows_columns_agree),
		cmocka_unit_test(test_submit_names_the_submitted_types),
		cmocka_unit_test(test_a_preparation_without_the_cluster_fails_and_says_so),
		cmocka_unit_test(test_a_scope_the_cluster_must_check_needs_one),
		cmocka_unit_test(test_an_ambiguous_prefix_names_its_candidates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
