/*
 * test_sidtab.c - the server table (server/sidtab.c) on a real store:
 * the own entry, newest-wins merging, what a server keeps of its own entry
 * and of roots, operator changes, root offers, persistence.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto.h"
#include "sidtab.h"
#include "store.h"

struct fixture {
	char dir[64];
	char data[2][96];
	struct store *s[2];
	struct sidtab *t[2];
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	static const char *const attrs[] = { "rack=r1", "building=b2" };

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ofs-test-sidtab-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	for (int i = 0; i < 2; i++) {
		struct ofs_sid sid;
		snprintf(fx->data[i], sizeof(fx->data[i]), "%s/d%d", fx->dir, i);
		if (store_init(fx->data[i], 1 << 20, attrs, i == 0 ? 2 : 0, &sid) ||
		    store_open(fx->data[i], false, &fx->s[i]) ||
		    sidtab_open(fx->s[i], i == 0 ? "127.0.0.1:7001" : "127.0.0.1:7002", &fx->t[i]))
			return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 2; i++) {
		sidtab_close(fx->t[i]);
		store_close(fx->s[i]);
	}
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* Close and reopen server i's store and table. */
static void reopen(struct fixture *fx, int i)
{
	sidtab_close(fx->t[i]);
	store_close(fx->s[i]);
	assert_int_equal(store_open(fx->data[i], false, &fx->s[i]), 0);
	assert_int_equal(sidtab_open(fx->s[i], "127.0.0.1:7009", &fx->t[i]), 0);
}

static struct ofs_server peer(uint8_t seed, uint64_t version, uint32_t weight_milli)
{
	struct ofs_server e;

	memset(&e, 0, sizeof(e));
	memset(e.sid.b, seed, sizeof(e.sid.b));
	snprintf(e.address, sizeof(e.address), "127.0.0.1:%u", 8000u + seed);
	e.state = OFS_SERVER_IN;
	e.weight_milli = weight_milli;
	e.version = version;
	e.nattrs = 1;
	snprintf(e.attrs[0], sizeof(e.attrs[0]), "rack=p%u", seed);
	return e;
}

static struct ofs_handle mk_root(uint8_t seed)
{
	struct ofs_handle h;

	memset(&h, 0, sizeof(h));
	memset(h.oid.b, seed, sizeof(h.oid.b));
	h.nsids = 1;
	memset(h.sids[0].b, seed + 1, sizeof(h.sids[0].b));
	return h;
}

static void test_open_fresh_lists_own_entry_first_with_init_attributes(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server *e = NULL;
	size_t n = 0;

	assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
	assert_int_equal(n, 1);
	assert_memory_equal(e[0].sid.b, store_sid(fx->s[0]).b, OFS_OID_LEN);
	assert_memory_equal(sidtab_self(fx->t[0]).b, e[0].sid.b, OFS_OID_LEN);
	assert_string_equal(e[0].address, "127.0.0.1:7001");
	assert_int_equal(e[0].state, OFS_SERVER_IN);
	assert_int_equal(e[0].weight_milli, 1000);
	assert_int_equal(e[0].nattrs, 2);
	assert_string_equal(e[0].attrs[0], "rack=r1");
	assert_string_equal(e[0].attrs[1], "building=b2");
	assert_true(e[0].version > 0);
	free(e);
}

static void test_merge_adds_unknown_takes_newer_ignores_older(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x21, 5, 1000), got;

	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), -ENOENT);
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.version, 5);
	/* Older: ignored, nothing changed. */
	a.version = 4;
	a.weight_milli = 7000;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 0);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.weight_milli, 1000);
	/* The same again: nothing changed. */
	a.version = 5;
	a.weight_milli = 1000;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 0);
	/* Newer: taken. Two entries in one merge count two. */
	a.version = 6;
	a.state = OFS_SERVER_DRAINING;
	{
		struct ofs_server two[2] = { a, peer(0x22, 1, 1000) };
		assert_int_equal(sidtab_merge(fx->t[0], two, 2), 2);
	}
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	assert_int_equal(got.version, 6);
}

static void test_equal_versions_settle_on_one_entry_whatever_the_order(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server x = peer(0x31, 9, 1000), y = peer(0x31, 9, 2000), g0, g1;

	assert_int_equal(sidtab_merge(fx->t[0], &x, 1), 1);
	sidtab_merge(fx->t[0], &y, 1);
	assert_int_equal(sidtab_merge(fx->t[1], &y, 1), 1);
	sidtab_merge(fx->t[1], &x, 1);
	assert_int_equal(sidtab_get(fx->t[0], x.sid, &g0), 0);
	assert_int_equal(sidtab_get(fx->t[1], x.sid, &g1), 0);
	assert_int_equal(g0.weight_milli, g1.weight_milli);
}

static void test_merged_entries_survive_a_restart(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x41, 3, 1500), got, *e = NULL;
	size_t n = 0;
	uint64_t v_before;

	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
	v_before = e[0].version;
	free(e);
	reopen(fx, 0);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.weight_milli, 1500);
	assert_string_equal(got.address, a.address);
	/* Own entry: still first, the new address, a newer version. */
	assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(e[0].sid.b, store_sid(fx->s[0]).b, OFS_OID_LEN);
	assert_string_equal(e[0].address, "127.0.0.1:7009");
	assert_true(e[0].version > v_before);
	free(e);
}

static void test_own_entry_changed_elsewhere_keeps_own_address_and_root(void **state)
{
	struct fixture *fx = *state;
	struct ofs_handle root = mk_root(0x51), used;
	struct ofs_server me, theirs, got;
	int64_t birth;

	assert_int_equal(sidtab_offer_root(fx->t[0], &root, 1000, &used, &birth), 0);
	assert_int_equal(sidtab_get(fx->t[0], sidtab_self(fx->t[0]), &me), 0);
	/* A peer's copy of our entry: an operator drained us there, but that
	 * copy has an old address and no root. */
	theirs = me;
	theirs.version = me.version + 10;
	theirs.state = OFS_SERVER_DRAINING;
	snprintf(theirs.address, sizeof(theirs.address), "127.0.0.1:1");
	memset(&theirs.root, 0, sizeof(theirs.root));
	theirs.root_birth_ns = 0;
	assert_int_equal(sidtab_merge(fx->t[0], &theirs, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	assert_string_equal(got.address, "127.0.0.1:7001");
	assert_memory_equal(got.root.oid.b, root.oid.b, OFS_OID_LEN);
	assert_int_equal(got.root_birth_ns, 1000);
	assert_true(got.version > theirs.version);   /* so ours spreads again */
}

static void test_newer_entry_without_a_root_keeps_the_known_root(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x61, 2, 1000), got;

	a.root = mk_root(0x62);
	a.root_birth_ns = 500;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	a.version = 3;
	a.state = OFS_SERVER_OUT;
	memset(&a.root, 0, sizeof(a.root));
	a.root_birth_ns = 0;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_OUT);
	assert_memory_equal(got.root.oid.b, mk_root(0x62).oid.b, OFS_OID_LEN);
	assert_int_equal(got.root_birth_ns, 500);
}

static void test_set_changes_state_weight_attr_with_a_new_version(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x71, 4, 1000), e;
	struct ofs_server_set set;

	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	memset(&set, 0, sizeof(set));
	memset(set.sid.b, 0x72, sizeof(set.sid.b));
	set.mask = OFS_SET_STATE;
	set.state = OFS_SERVER_OUT;
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), -ENOENT);

	set.sid = a.sid;
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), 0);
	assert_int_equal(e.state, OFS_SERVER_OUT);
	assert_true(e.version > 4);
	set.mask = OFS_SET_WEIGHT;
	set.weight_milli = 2500;
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), 0);
	assert_int_equal(e.weight_milli, 2500);
	assert_int_equal(e.state, OFS_SERVER_OUT);
	/* An attribute with a known key replaces it; a new key is added. */
	set.mask = OFS_SET_ATTR;
	snprintf(set.attr, sizeof(set.attr), "rack=r9");
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), 0);
	assert_int_equal(e.nattrs, 1);
	assert_string_equal(e.attrs[0], "rack=r9");
	snprintf(set.attr, sizeof(set.attr), "building=b7");
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), 0);
	assert_int_equal(e.nattrs, 2);
	/* And it reaches another table by merge. */
	assert_int_equal(sidtab_merge(fx->t[1], &e, 1), 1);
	{
		struct ofs_server got;
		assert_int_equal(sidtab_get(fx->t[1], a.sid, &got), 0);
		assert_int_equal(got.weight_milli, 2500);
		assert_int_equal(got.nattrs, 2);
	}
}

static void test_offer_root_takes_first_and_older_keeps_against_younger(void **state)
{
	struct fixture *fx = *state;
	struct ofs_handle r1 = mk_root(0x81), r2 = mk_root(0x82), r0 = mk_root(0x80), used, h;
	int64_t birth, b;

	assert_int_equal(store_root(fx->s[0], &h), -ENOENT);
	assert_int_equal(sidtab_offer_root(fx->t[0], &r1, 2000, &used, &birth), 0);
	assert_memory_equal(used.oid.b, r1.oid.b, OFS_OID_LEN);
	assert_int_equal(birth, 2000);
	assert_int_equal(store_root_info(fx->s[0], &h, &b), 0);
	assert_memory_equal(h.oid.b, r1.oid.b, OFS_OID_LEN);
	/* A younger root is not taken: the one served comes back. */
	assert_int_equal(sidtab_offer_root(fx->t[0], &r2, 3000, &used, &birth), 0);
	assert_memory_equal(used.oid.b, r1.oid.b, OFS_OID_LEN);
	assert_int_equal(birth, 2000);
	/* An older one (ours is not a local directory with entries) is. */
	assert_int_equal(sidtab_offer_root(fx->t[0], &r0, 1000, &used, &birth), 0);
	assert_memory_equal(used.oid.b, r0.oid.b, OFS_OID_LEN);
	reopen(fx, 0);
	assert_int_equal(store_root_info(fx->s[0], &h, &b), 0);
	assert_memory_equal(h.oid.b, r0.oid.b, OFS_OID_LEN);
	assert_int_equal(b, 1000);
}

static void test_merge_adopts_the_oldest_root_a_peer_serves(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x91, 1, 1000);
	struct ofs_handle h;
	int64_t b;

	a.root = mk_root(0x92);
	a.root_birth_ns = 777;
	assert_int_equal(sidtab_merge(fx->t[1], &a, 1), 1);
	assert_int_equal(store_root_info(fx->s[1], &h, &b), 0);
	assert_memory_equal(h.oid.b, mk_root(0x92).oid.b, OFS_OID_LEN);
	assert_int_equal(b, 777);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_open_fresh_lists_own_entry_first_with_init_attributes),
		T(test_merge_adds_unknown_takes_newer_ignores_older),
		T(test_equal_versions_settle_on_one_entry_whatever_the_order),
		T(test_merged_entries_survive_a_restart),
		T(test_own_entry_changed_elsewhere_keeps_own_address_and_root),
		T(test_newer_entry_without_a_root_keeps_the_known_root),
		T(test_set_changes_state_weight_attr_with_a_new_version),
		T(test_offer_root_takes_first_and_older_keeps_against_younger),
		T(test_merge_adopts_the_oldest_root_a_peer_serves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
