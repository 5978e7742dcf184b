/*
 * test_jobopts.c - submit's options table (pbj/jobopts.h), row by row:
 * each row is whole (a word, a value with its name and its check, what
 * it sets, help); every type takes what its usage shows and refuses what
 * it does not, naming the word; each value check refuses a bad value
 * and one out of range, naming the option; help shows every option a
 * type takes with its default; and settling applies the site's defaults
 * and the checks across options.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pbj/jobargs.h"
#include "pbj/jobopts.h"
#include "pbj/jobstore.h"
#include "pbj/jobtype.h"
#include "tests/unit/tmpstore.h"

#define SID_HEX "0123456789abcdef0123456789abcdef"

/* A good value for o, as a word. */
static const char *good_value(const struct pbj_option *o, char *buf, size_t len)
{
	switch (o->value) {
	case PBJ_VAL_BYTES:      return "1M";
	case PBJ_VAL_INT:        snprintf(buf, len, "%lld", (long long)o->min); return buf;
	case PBJ_VAL_PATH:       return "/a/b";
	case PBJ_VAL_SID_PREFIX: return "abcd";
	case PBJ_VAL_JOB:        return "7";
	default:                 return NULL;
	}
}

/* parse TYPE WORD [VALUE]: its result, why in why. */
static int parse3(struct pbj_submit *s, const char *type, const char *word, const char *value,
		  char *why, size_t len)
{
	char *argv[3] = { (char *)type, (char *)word, (char *)value };

	why[0] = '\0';
	return pbj_submit_parse(value ? 3 : 2, argv, s, why, len);
}

static void test_every_row_is_whole(void **state)
{
	size_t n;
	const struct pbj_option *o = pbj_options(&n);
	uint32_t bits = 0;

	(void)state;
	assert_true(n > 0 && n < 32);
	for (size_t i = 0; i < n; i++) {
		assert_true(!strncmp(o[i].word, "--", 2));
		assert_non_null(o[i].help);
		assert_true(strlen(o[i].help) > 0);
		assert_int_not_equal(o[i].sets, PBJ_SETS_NONE);
		/* a flag has no value name nor check; a value has both */
		assert_int_equal(o[i].value == PBJ_VAL_FLAG, o[i].meta == NULL);
		assert_int_equal(o[i].value == PBJ_VAL_FLAG, o[i].bad == NULL);
		if (o[i].value == PBJ_VAL_INT)
			assert_true(o[i].min <= o[i].max);
		/* one bit or none */
		assert_int_equal(o[i].opt & (o[i].opt - 1), 0);
		bits |= o[i].opt;
		/* a needed option has no default, and is a value */
		if (o[i].needed) {
			assert_null(o[i].dflt);
			assert_int_not_equal(o[i].value, PBJ_VAL_FLAG);
		}
	}
	/* every bit a type names has its rows */
	for (size_t i = 0; pbj_jobtype_at(i); i++)
		assert_int_equal(pbj_jobtype_at(i)->opts & ~bits, 0);
}

/* No type takes two rows of one word: a word means one thing to it. */
static void test_a_word_is_one_row_to_each_type(void **state)
{
	size_t n;
	const struct pbj_option *o = pbj_options(&n);
	const struct pbj_jobtype *t;

	(void)state;
	for (size_t k = 0; (t = pbj_jobtype_at(k)) != NULL; k++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (!strcmp(o[i].word, o[j].word))
					assert_false(pbj_option_taken(t, &o[i]) &&
						     pbj_option_taken(t, &o[j]));
}

/* What a type's usage shows it takes, each with a good value; what its
 * usage does not show it refuses, naming the word. */
static void test_each_type_takes_what_its_usage_shows(void **state)
{
	struct pbj_submit *s = malloc(sizeof(*s));
	size_t n;
	const struct pbj_option *o = pbj_options(&n);
	const struct pbj_jobtype *t;

	(void)state;
	assert_non_null(s);
	for (size_t k = 0; (t = pbj_jobtype_at(k)) != NULL; k++) {
		char usage[512], why[512], buf[32], shown[80];
		if (!t->submitted)
			continue;
		pbj_submit_usage(t, usage, sizeof(usage));
		for (size_t i = 0; i < n; i++) {
			const char *v = good_value(&o[i], buf, sizeof(buf));
			int rc = parse3(s, t->name, o[i].word, v, why, sizeof(why));
			snprintf(shown, sizeof(shown), "%s%s", o[i].word,
				 o[i].meta ? " " : "");
			if (pbj_option_taken(t, &o[i])) {
				assert_int_equal(rc, 0);
				assert_ptr_equal(s->type, t);
				assert_non_null(strstr(usage, shown));
			} else if (!strstr(usage, shown)) {
				/* (a word another row of the type takes is shown) */
				assert_int_equal(rc, -EINVAL);
				assert_non_null(strstr(why, "unknown option"));
				assert_non_null(strstr(why, o[i].word));
			}
		}
	}
	free(s);
}

/* Each value is checked: a bad one and one past either end of a range are
 * refused, naming the option and the value; a missing one names what it
 * needs. */
static void test_each_value_is_checked(void **state)
{
	struct pbj_submit *s = malloc(sizeof(*s));
	size_t n;
	const struct pbj_option *o = pbj_options(&n);

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		const struct pbj_jobtype *t = NULL, *r;
		char why[512], v[64];
		if (o[i].value == PBJ_VAL_FLAG)
			continue;
		for (size_t k = 0; (r = pbj_jobtype_at(k)) != NULL && !t; k++)
			if (pbj_option_taken(r, &o[i]))
				t = r;
		assert_non_null(t);
		assert_int_equal(parse3(s, t->name, o[i].word, "-x", why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, o[i].word));
		assert_non_null(strstr(why, "-x"));
		assert_int_equal(parse3(s, t->name, o[i].word, NULL, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "needs"));
		assert_non_null(strstr(why, o[i].meta));
		if (o[i].value == PBJ_VAL_INT) {
			snprintf(v, sizeof(v), "%lld", (long long)o[i].min - 1);
			assert_int_equal(parse3(s, t->name, o[i].word, v, why, sizeof(why)), -EINVAL);
			assert_non_null(strstr(why, v));
			snprintf(v, sizeof(v), "%lld", (long long)o[i].max + 1);
			assert_int_equal(parse3(s, t->name, o[i].word, v, why, sizeof(why)), -EINVAL);
			snprintf(v, sizeof(v), "%lld", (long long)o[i].max);
			assert_int_equal(parse3(s, t->name, o[i].word, v, why, sizeof(why)), 0);
		}
		if (o[i].value == PBJ_VAL_BYTES) {
			snprintf(v, sizeof(v), "%lld", (long long)o[i].min - 1);
			assert_int_equal(parse3(s, t->name, o[i].word, v, why, sizeof(why)), -EINVAL);
			snprintf(v, sizeof(v), "%lld", (long long)o[i].min);
			assert_int_equal(parse3(s, t->name, o[i].word, v, why, sizeof(why)), 0);
		}
	}
	free(s);
}

static void test_what_the_words_set(void **state)
{
	struct pbj_submit *s = malloc(sizeof(*s));
	char *scrub[] = { "scrub", "--path", "/a", "--path", "/b", "--server", SID_HEX,
			  "--no-repair", "--rate", "64K", "--priority", "-5", "--wait",
			  "--dry-run", "--metadata-only" };
	char *drain[] = { "drain", "--server", "abcd", "--server", "cdef" };
	char why[512];

	(void)state;
	assert_non_null(s);
	assert_int_equal(pbj_submit_parse(15, scrub, s, why, sizeof(why)), 0);
	assert_int_equal(s->args.npaths, 2);
	assert_string_equal(s->args.paths[1], "/b");
	assert_int_equal(s->args.nservers, 1);
	assert_int_equal(s->repair, 0);
	assert_int_equal(s->rate, 64 * 1024);
	assert_int_equal(s->priority, -5);
	assert_true(s->wait && s->dry_run && s->args.metadata_only);
	assert_int_equal(s->max_repairs, -1);
	/* a prefix is 4 to 32 hex digits */
	assert_int_equal(parse3(s, "scrub", "--server", "abc", why, sizeof(why)), -EINVAL);
	assert_int_equal(parse3(s, "scrub", "--server", "abcg", why, sizeof(why)), -EINVAL);
	assert_int_equal(parse3(s, "scrub", "--server", SID_HEX "0", why, sizeof(why)), -EINVAL);
	assert_int_equal(parse3(s, "scrub", "--server", "ABCD", why, sizeof(why)), 0);
	/* drain's --server: once */
	assert_int_equal(pbj_submit_parse(5, drain, s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "one --server at a time"));
	/* unknown type, none, and help anywhere */
	assert_int_equal(parse3(s, "bogus", "--wait", NULL, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unknown job type (scrub, repair, drain, rebalance)"));
	assert_int_equal(pbj_submit_parse(0, scrub, s, why, sizeof(why)), -EINVAL);
	assert_int_equal(parse3(s, "rebalance", "--threshold", "5", why, sizeof(why)), 0);
	assert_int_equal(s->args.threshold, 5);
	assert_int_equal(parse3(s, "rebalance", "--help", NULL, why, sizeof(why)), PBJ_SUBMIT_HELP);
	assert_ptr_equal(s->type, pbj_jobtype(PBJ_TYPE_REBALANCE));
	assert_int_equal(parse3(s, "-h", NULL, NULL, why, sizeof(why)), PBJ_SUBMIT_HELP);
	assert_null(s->type);
	free(s);
}

/* A repeated option holds PBJ_ARGS_MAX values, and says so past that. */
static void test_a_repeated_option_is_bounded(void **state)
{
	struct pbj_submit *s = malloc(sizeof(*s));
	char **argv = calloc(1 + 2 * (PBJ_ARGS_MAX + 1), sizeof(char *));
	char why[512];
	int argc = 1;

	(void)state;
	assert_non_null(s);
	assert_non_null(argv);
	argv[0] = "scrub";
	for (int i = 0; i < PBJ_ARGS_MAX; i++) {
		argv[argc++] = "--path";
		argv[argc++] = "/p";
	}
	assert_int_equal(pbj_submit_parse(argc, argv, s, why, sizeof(why)), 0);
	argv[argc++] = "--path";
	argv[argc++] = "/p";
	assert_int_equal(pbj_submit_parse(argc, argv, s, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "too many --path arguments (1 KiB at most)");
	free(argv);
	free(s);
}

/* Help shows every option a type takes, its default, and no other. */
static void test_help_shows_each_option_and_its_default(void **state)
{
	size_t n;
	const struct pbj_option *o = pbj_options(&n);
	const struct pbj_jobtype *t;

	(void)state;
	for (size_t k = 0; (t = pbj_jobtype_at(k)) != NULL; k++) {
		char text[8192], flat[8192];
		FILE *f = tmpfile();
		size_t got, m = 0;
		if (!t->submitted)
			continue;
		assert_non_null(f);
		pbj_submit_help(t, f);
		rewind(f);
		got = fread(text, 1, sizeof(text) - 1, f);
		text[got] = '\0';
		fclose(f);
		/* (wrapped lines joined again: one space for each run of space) */
		for (size_t i = 0; i < got; i++)
			if (!(text[i] == ' ' || text[i] == '\n') || (m && flat[m - 1] != ' '))
				flat[m++] = text[i] == '\n' ? ' ' : text[i];
		flat[m] = '\0';
		assert_non_null(strstr(flat, t->about));
		for (size_t i = 0; i < n; i++) {
			char line[128];
			snprintf(line, sizeof(line), " %s%s%s ", o[i].word, o[i].meta ? " " : "",
				 o[i].meta ? o[i].meta : "");
			if (!pbj_option_taken(t, &o[i]))
				continue;
			assert_non_null(strstr(flat, line));
			if (o[i].dflt)
				assert_non_null(strstr(flat, o[i].dflt));
		}
	}
}

struct settle_fx {
	struct tmpdb t;
	struct pbj_submit s;
	struct pbj_job j;
	struct pbj_job_args back;
	char why[512];
};

static int settle_setup(void **state)
{
	struct settle_fx *fx = calloc(1, sizeof(*fx));

	if (!fx || tmpdb_make("jobopts", &fx->t)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int settle_teardown(void **state)
{
	struct settle_fx *fx = *state;

	tmpdb_remove(&fx->t);
	free(fx);
	return 0;
}

/* parse words then settle with db: the settle's result. */
static int settle(struct settle_fx *fx, struct pbj_db *db, int argc, char **argv)
{
	int rc = pbj_submit_parse(argc, argv, &fx->s, fx->why, sizeof(fx->why));

	assert_int_equal(rc, 0);
	rc = pbj_submit_settle(db, &fx->s, &fx->j, fx->why, sizeof(fx->why));
	if (!rc)
		assert_int_equal(pbj_job_args_decode(fx->j.args, &fx->back), 0);
	return rc;
}

static void test_settling_applies_the_sites_defaults(void **state)
{
	struct settle_fx *fx = *state;
	char *scrub[] = { "scrub", "--rate", "8K", "--priority", "3", "--dry-run" };
	char *repair[] = { "repair", "--max-repairs", "0" };
	char *capped[] = { "scrub", "--max-repairs", "5" };
	char *norep[] = { "scrub", "--no-repair" };

	/* built in: a scrub does not repair; a repair caps at 1000 */
	assert_int_equal(settle(fx, NULL, 6, scrub), 0);
	assert_int_equal(fx->j.type, PBJ_TYPE_SCRUB);
	assert_int_equal(fx->j.flags, PBJ_DRY_RUN);
	assert_int_equal(fx->j.rate, 8192);
	assert_int_equal(fx->j.priority, 3);
	assert_string_equal(fx->j.args, "");
	assert_int_equal(settle(fx, NULL, 1, repair), 0);
	assert_int_equal(fx->j.flags, PBJ_REPAIR);
	assert_int_equal(fx->back.max_repairs, 1000);
	assert_int_equal(settle(fx, NULL, 3, repair), 0);
	assert_int_equal(fx->back.max_repairs, 0);
	/* a cap without repairing is refused, unless the site repairs */
	assert_int_equal(settle(fx, fx->t.db, 3, capped), -EINVAL);
	assert_non_null(strstr(fx->why, "--max-repairs"));
	assert_int_equal(pbj_setting_set(fx->t.db, "scrub.auto_repair", "true"), 0);
	assert_int_equal(pbj_setting_set(fx->t.db, "repair.max_objects", "9"), 0);
	assert_int_equal(settle(fx, fx->t.db, 3, capped), 0);
	assert_int_equal(fx->j.flags, PBJ_REPAIR);
	assert_int_equal(fx->back.max_repairs, 5);
	assert_int_equal(settle(fx, fx->t.db, 1, scrub), 0);
	assert_int_equal(fx->j.flags, PBJ_REPAIR);
	assert_int_equal(fx->back.max_repairs, 9);
	assert_int_equal(settle(fx, fx->t.db, 2, norep), 0);
	assert_int_equal(fx->j.flags, 0);
}

static void test_settling_checks_across_options(void **state)
{
	struct settle_fx *fx = *state;
	char *drain[] = { "drain", "--server", "abcd" };
	char *both[] = { "repair", "--job", "3", "--path", "/a" };

	assert_int_equal(settle(fx, NULL, 1, drain), -EINVAL);
	assert_string_equal(fx->why, "submit drain needs --server SID");
	assert_int_equal(settle(fx, NULL, 3, drain), 0);
	assert_int_equal(fx->j.type, PBJ_TYPE_DRAIN);
	assert_int_equal(fx->back.nservers, 1);
	assert_string_equal(fx->back.servers[0], "abcd");
	assert_int_equal(settle(fx, NULL, 5, both), -EINVAL);
	assert_non_null(strstr(fx->why, "--job"));
	assert_int_equal(settle(fx, NULL, 3, both), 0);
	assert_int_equal(fx->back.from_job, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_is_whole),
		cmocka_unit_test(test_a_word_is_one_row_to_each_type),
		cmocka_unit_test(test_each_type_takes_what_its_usage_shows),
		cmocka_unit_test(test_each_value_is_checked),
		cmocka_unit_test(test_what_the_words_set),
		cmocka_unit_test(test_a_repeated_option_is_bounded),
		cmocka_unit_test(test_help_shows_each_option_and_its_default),
		cmocka_unit_test_setup_teardown(test_settling_applies_the_sites_defaults,
						settle_setup, settle_teardown),
		cmocka_unit_test_setup_teardown(test_settling_checks_across_options,
						settle_setup, settle_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
