/*
 * test_changelog.c - catching a copy up by the changes it missed
 * (changelog.h, store_changes, store_catch_up_changes), on two real
 * stores holding copies of one dirdata: the copy that missed changes
 * replays the current copy's notes and ends equal to it; a copy that
 * differs in any other way, a log that no longer reaches back, a version
 * with no note, a copy changed meanwhile and malformed notes all leave
 * the copy exactly as it was, for a whole fetch.
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
#include <unistd.h>

#include <cmocka.h>

#include "lib/checksum.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "store/changelog.h"
#include "store/records.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"

struct fixture {
	struct tmpstore src_ts, copy_ts;   /* their stores and folders */
	struct store *src, *copy;  /* a current copy and one that falls behind */
	struct ofs_oid dd;         /* the dirdata both hold */
};

static struct ofs_dirent mk_dirent(uint32_t seed)
{
	struct ofs_dirent d;

	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	for (int i = 0; i < OFS_OID_LEN; i++)
		d.handle.oid.b[i] = (uint8_t)((seed >> ((i % 4) * 8)) + i + 1);
	d.handle.nsids = 1;
	memset(d.handle.sids[0].b, 0x5a, OFS_OID_LEN);
	return d;
}

static void create(struct store *s, struct ofs_oid dd, const char *name, uint32_t seed,
		   uint32_t flags)
{
	struct ofs_dirent d = mk_dirent(seed);
	bool replaced;

	assert_int_equal(store_dirent_create(s, dd, name, &d, flags, &replaced, NULL), 0);
}

static void both_create(struct fixture *fx, const char *name, uint32_t seed)
{
	create(fx->src, fx->dd, name, seed, 0);
	create(fx->copy, fx->dd, name, seed, 0);
}

/* Both stores hold the dirdata with the same ten entries, at one version. */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct ofs_attr *a = calloc(1, sizeof(*a));
	char name[16];

	if (!fx || !a)
		return -1;
	assert_int_equal(tmpstore_make("changelog", 4096, &fx->src_ts), 0);
	assert_int_equal(tmpstore_make("changelog", 4096, &fx->copy_ts), 0);
	fx->src = fx->src_ts.s;
	fx->copy = fx->copy_ts.s;
	a->type = OFS_OBJ_DIRDATA;
	a->mode = 0755;
	assert_int_equal(oid_generate(&fx->dd), 0);
	assert_int_equal(store_create_oid(fx->src, a, fx->dd, &fx->dd), 0);
	assert_int_equal(store_create_oid(fx->copy, a, fx->dd, &fx->dd), 0);
	free(a);
	for (uint32_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		both_create(fx, name, i);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	tmpstore_remove(&fx->src_ts);
	tmpstore_remove(&fx->copy_ts);
	free(fx);
	return 0;
}

static struct ofs_summary summary(struct store *s, struct ofs_oid oid)
{
	struct ofs_summary sm;

	assert_int_equal(store_summary(s, oid, &sm), 0);
	return sm;
}

/* The source takes changes the copy misses: a create, a replace and a
 * removal. Returns the version the copy is known equal at. */
static uint64_t miss_three(struct fixture *fx)
{
	uint64_t since = summary(fx->src, fx->dd).version;
	struct ofs_dirent old;

	assert_int_equal(summary(fx->copy, fx->dd).version, since);
	create(fx->src, fx->dd, "new", 100, 0);
	create(fx->src, fx->dd, "f1", 101, OFS_DIRENT_REPLACE);
	assert_int_equal(store_dirent_remove(fx->src, fx->dd, "f2", &old), 0);
	assert_int_equal(store_behind_mark(fx->copy, fx->dd, "missed version 12: test"), 0);
	return since;
}

/* Ask src for its changes after since and replay them on copy. */
static int catch_up(struct fixture *fx, uint64_t since)
{
	struct wbuf w;
	struct ofs_digest d;
	uint64_t version;
	int rc;

	wbuf_init(&w);
	rc = store_changes(fx->src, fx->dd, since, &w, &version, &d);
	if (!rc)
		rc = store_catch_up_changes(fx->copy, fx->dd, summary(fx->copy, fx->dd).version,
					    since, w.data, w.len, version, &d);
	wbuf_free(&w);
	return rc;
}

static void assert_unchanged(struct fixture *fx, const struct ofs_summary *before)
{
	struct ofs_summary now = summary(fx->copy, fx->dd);

	assert_int_equal(now.version, before->version);
	assert_true(digest_eq(now.digest, before->digest));
	assert_int_equal(store_behind(fx->copy, fx->dd), 1);
}

static void test_a_copy_replays_what_it_missed_and_equals_the_source(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = miss_three(fx);
	struct ofs_summary a, b;
	struct ofs_dirent d;

	assert_int_equal(catch_up(fx, since), 0);
	a = summary(fx->src, fx->dd);
	b = summary(fx->copy, fx->dd);
	assert_int_equal(b.version, a.version);
	assert_int_equal(b.version, since + 3);
	assert_true(digest_eq(a.digest, b.digest));
	assert_int_equal(store_behind(fx->copy, fx->dd), 0);   /* the mark went */
	assert_int_equal(store_dirent_lookup(fx->copy, fx->dd, "new", &d), 0);
	assert_int_equal(store_dirent_lookup(fx->copy, fx->dd, "f1", &d), 0);
	assert_true(oid_eq(d.handle.oid, mk_dirent(101).handle.oid));
	assert_int_equal(store_dirent_lookup(fx->copy, fx->dd, "f2", &d), -ENOENT);
	/* The copy's log now serves a third copy from where it was. */
	{
		struct wbuf w;
		struct ofs_digest dg;
		uint64_t v;
		wbuf_init(&w);
		assert_int_equal(store_changes(fx->copy, fx->dd, since, &w, &v, &dg), 0);
		assert_int_equal(v, since + 3);
		assert_true(digest_eq(dg, a.digest));
		wbuf_free(&w);
	}
}

static void test_changes_after_the_current_version_are_none(void **state)
{
	struct fixture *fx = *state;
	struct ofs_summary s = summary(fx->src, fx->dd);
	struct ofs_digest d;
	struct wbuf w;
	uint64_t v;

	wbuf_init(&w);
	assert_int_equal(store_changes(fx->src, fx->dd, s.version, &w, &v, &d), 0);
	assert_int_equal(v, s.version);
	assert_true(digest_eq(d, s.digest));
	assert_int_equal(w.len, 4);              /* a count of zero */
	assert_int_equal(store_changes(fx->src, fx->dd, s.version + 1, &w, &v, &d), -ERANGE);
	assert_int_equal(store_changes(fx->src, mk_dirent(7).handle.oid, 0, &w, &v, &d), -ENOENT);
	wbuf_free(&w);
}

static void test_a_change_only_the_copy_applied_is_caught_and_nothing_changes(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = miss_three(fx);
	struct ofs_summary before;

	create(fx->copy, fx->dd, "only-here", 200, 0);
	before = summary(fx->copy, fx->dd);
	assert_int_equal(catch_up(fx, since), -ESTALE);
	assert_unchanged(fx, &before);
	assert_int_equal(store_dirent_lookup(fx->copy, fx->dd, "new", &(struct ofs_dirent){ 0 }),
			 -ENOENT);
}

static void test_a_log_that_no_longer_reaches_back_is_erange(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = summary(fx->src, fx->dd).version;
	struct ofs_summary before = summary(fx->copy, fx->dd);
	char name[16];

	assert_int_equal(store_behind_mark(fx->copy, fx->dd, "missed"), 0);
	for (uint32_t i = 0; i < CHANGELOG_KEEP + 2; i++) {
		snprintf(name, sizeof(name), "g%u", i % 7);
		create(fx->src, fx->dd, name, 1000 + i, OFS_DIRENT_REPLACE);
	}
	assert_int_equal(catch_up(fx, since), -ERANGE);
	assert_unchanged(fx, &before);
	/* ... while the latest CHANGELOG_KEEP are still there. */
	{
		struct wbuf w;
		struct ofs_digest d;
		uint64_t v;
		wbuf_init(&w);
		assert_int_equal(store_changes(fx->src, fx->dd, since + 3, &w, &v, &d), 0);
		assert_int_equal(store_changes(fx->src, fx->dd, since + 1, &w, &v, &d), -ERANGE);
		wbuf_free(&w);
	}
}

static void test_a_version_without_a_note_breaks_the_chain(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = miss_three(fx);
	struct ofs_summary before = summary(fx->copy, fx->dd);

	assert_int_equal(store_version_at_least(fx->src, fx->dd, since + 4), 0);
	assert_int_equal(catch_up(fx, since), -ERANGE);
	assert_unchanged(fx, &before);
}

static void test_a_copy_changed_since_it_was_read_is_eagain(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = miss_three(fx), version;
	struct ofs_summary before;
	struct ofs_digest d;
	struct wbuf w;

	wbuf_init(&w);
	assert_int_equal(store_changes(fx->src, fx->dd, since, &w, &version, &d), 0);
	create(fx->copy, fx->dd, "meanwhile", 300, 0);
	before = summary(fx->copy, fx->dd);
	assert_int_equal(store_catch_up_changes(fx->copy, fx->dd, since, since, w.data, w.len,
						version, &d), -EAGAIN);
	assert_unchanged(fx, &before);
	wbuf_free(&w);
}

static void test_malformed_notes_are_refused_and_change_nothing(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = miss_three(fx), version;
	struct ofs_summary before = summary(fx->copy, fx->dd);
	struct ofs_digest d;
	struct wbuf w;

	wbuf_init(&w);
	assert_int_equal(store_changes(fx->src, fx->dd, since, &w, &version, &d), 0);
	/* every truncation */
	for (size_t n = 0; n < w.len; n++)
		assert_int_equal(store_catch_up_changes(fx->copy, fx->dd, before.version, since,
							w.data, n, version, &d),
				 -OFS_ECORRUPT);
	/* one byte too many */
	{
		uint8_t *longer = malloc(w.len + 1);
		assert_non_null(longer);
		memcpy(longer, w.data, w.len);
		longer[w.len] = 0;
		assert_int_equal(store_catch_up_changes(fx->copy, fx->dd, before.version, since,
							longer, w.len + 1, version, &d),
				 -OFS_ECORRUPT);
		free(longer);
	}
	/* notes for other versions than asked */
	assert_int_equal(store_catch_up_changes(fx->copy, fx->dd, before.version, since + 1,
						w.data, w.len, version + 1, &d), -OFS_ECORRUPT);
	/* every single byte flipped: refused, or (a value byte) a digest that
	 * does not match */
	for (size_t i = 0; i < w.len; i++) {
		w.data[i] ^= 0x41;
		int rc = store_catch_up_changes(fx->copy, fx->dd, before.version, since, w.data,
						w.len, version, &d);
		assert_true(rc == -OFS_ECORRUPT || rc == -ESTALE);
		w.data[i] ^= 0x41;
	}
	assert_unchanged(fx, &before);
	/* and the intact notes still work */
	assert_int_equal(store_catch_up_changes(fx->copy, fx->dd, before.version, since, w.data,
						w.len, version, &d), 0);
	wbuf_free(&w);
}

static void test_a_copy_installed_whole_forgets_its_notes(void **state)
{
	struct fixture *fx = *state;
	uint64_t since = summary(fx->copy, fx->dd).version;
	struct store_incoming *in;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_digest d;
	struct wbuf w;
	uint64_t v;

	assert_non_null(a);
	create(fx->copy, fx->dd, "x", 400, 0);
	assert_int_equal(store_getattr(fx->copy, fx->dd, a), 0);
	assert_int_equal(store_incoming_begin(fx->copy, fx->dd, a, &in), 0);
	assert_int_equal(store_incoming_commit(in, "test"), 0);
	store_incoming_free(in);
	wbuf_init(&w);
	assert_int_equal(store_changes(fx->copy, fx->dd, since, &w, &v, &d), -ERANGE);
	wbuf_free(&w);
	free(a);
}

static void test_missed_version_is_read_from_a_reason(void **state)
{
	char r[128];

	(void)state;
	snprintf(r, sizeof(r), "behind per 0a0b: " REC_MISSED_FMT "dirent_create not applied",
		 42ULL);
	assert_int_equal(rec_missed_version(r), 42);
	assert_int_equal(rec_missed_version("missed version 7: x"), 7);
	assert_int_equal(rec_missed_version("dirent_create not applied"), 0);
	assert_int_equal(rec_missed_version("missed version x: y"), 0);
	assert_int_equal(rec_missed_version("missed version 9"), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_a_copy_replays_what_it_missed_and_equals_the_source),
		T(test_changes_after_the_current_version_are_none),
		T(test_a_change_only_the_copy_applied_is_caught_and_nothing_changes),
		T(test_a_log_that_no_longer_reaches_back_is_erange),
		T(test_a_version_without_a_note_breaks_the_chain),
		T(test_a_copy_changed_since_it_was_read_is_eagain),
		T(test_malformed_notes_are_refused_and_change_nothing),
		T(test_a_copy_installed_whole_forgets_its_notes),
		cmocka_unit_test(test_missed_version_is_read_from_a_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
