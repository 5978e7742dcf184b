/*
 * test_sidtab.c - the server table (server/sidtab.c) on a real store:
 * the own entry, newest-wins merging of each part (the operator's, the
 * server's own), what a server keeps of its own entry and of roots,
 * operator changes a restart does not undo, root offers and moves,
 * persistence, versions that never go back, a server that speaks for its
 * own entry only (sidtab_merge_from); and one pull of the table
 * before serving (server/gossip.c) from a peer that speaks the protocol.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/conn.h"
#include "lib/net.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "server/gossip.h"
#include "server/sidtab.h"
#include "store/store.h"

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

/* A peer whose ping went unanswered is silent until it is heard from
 * again; only that peer, and never one the table does not know. */
static void test_an_unanswered_peer_is_silent_until_heard_from(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x41, 1, 1000), b = peer(0x42, 1, 1000);
	struct ofs_server two[2] = { a, b };

	assert_int_equal(sidtab_merge(fx->t[0], two, 2), 2);
	assert_false(sidtab_silent(fx->t[0], a.sid));
	assert_true(sidtab_unanswered(fx->t[0], a.sid));     /* (newly silent) */
	assert_true(sidtab_silent(fx->t[0], a.sid));
	assert_false(sidtab_unanswered(fx->t[0], a.sid));    /* (still) */
	assert_false(sidtab_silent(fx->t[0], b.sid));
	sidtab_seen(fx->t[0], a.sid);
	assert_false(sidtab_silent(fx->t[0], a.sid));
	assert_true(sidtab_unanswered(fx->t[0], a.sid));
	assert_true(sidtab_silent(fx->t[0], a.sid));
	/* More silent peers than are remembered: one gives way, none
	 * unknown to the table is ever silent. */
	for (int i = 0; i < 2 * SIDTAB_SILENT; i++) {
		struct ofs_server x = peer((uint8_t)(0x80 + i), 1, 1000);
		assert_false(sidtab_unanswered(fx->t[0], x.sid));
		assert_false(sidtab_silent(fx->t[0], x.sid));
	}
	sidtab_unanswered(fx->t[0], b.sid);
	assert_true(sidtab_silent(fx->t[0], b.sid));
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
	uint64_t sv_before;

	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
	v_before = e[0].version;
	sv_before = e[0].self_version;
	free(e);
	reopen(fx, 0);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_int_equal(got.weight_milli, 1500);
	assert_string_equal(got.address, a.address);
	/* Own entry: still first, the new address with a newer version of
	 * the server's own part; the operator's part as it was. */
	assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(e[0].sid.b, store_sid(fx->s[0]).b, OFS_OID_LEN);
	assert_string_equal(e[0].address, "127.0.0.1:7009");
	assert_true(e[0].self_version > sv_before);
	assert_true(e[0].version == v_before);
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
	assert_true(got.version == theirs.version);
	assert_string_equal(got.address, "127.0.0.1:7001");
	assert_memory_equal(got.root.oid.b, root.oid.b, OFS_OID_LEN);
	assert_int_equal(got.root_birth_ns, 1000);
	/* (that copy's own part was as new as ours: ours goes out again,
	 * newer) */
	assert_true(got.self_version > theirs.self_version);
	/* Our own part is never taken from a peer, even a newer copy of it
	 * (our store was restored): ours gets newer still. */
	theirs = got;
	theirs.self_version = got.self_version + 1000;
	snprintf(theirs.address, sizeof(theirs.address), "127.0.0.1:2");
	assert_int_equal(sidtab_merge(fx->t[0], &theirs, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &got), 0);
	assert_string_equal(got.address, "127.0.0.1:7001");
	assert_true(got.self_version > theirs.self_version);
	/* An older copy changes nothing. */
	theirs.self_version = 1;
	assert_int_equal(sidtab_merge(fx->t[0], &theirs, 1), 0);
}

static void test_newer_entry_without_a_root_keeps_the_known_root(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0x61, 2, 1000), got;

	a.root = mk_root(0x62);
	a.root_birth_ns = 500;
	a.self_version = 2;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	a.version = 3;
	a.self_version = 3;
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

/* Push-pull between tables a and b, as one gossip exchange does: a's
 * table to b, then b's (merged) back to a. */
static void exchange(struct fixture *fx, int a, int b)
{
	struct ofs_server *e = NULL;
	size_t n = 0;

	assert_int_equal(sidtab_snapshot(fx->t[a], &e, &n), 0);
	assert_true(sidtab_merge(fx->t[b], e, n) >= 0);
	free(e);
	assert_int_equal(sidtab_snapshot(fx->t[b], &e, &n), 0);
	assert_true(sidtab_merge(fx->t[a], e, n) >= 0);
	free(e);
}

static void assert_same_entry(struct fixture *fx, struct ofs_sid sid)
{
	struct ofs_server g0, g1;

	assert_int_equal(sidtab_get(fx->t[0], sid, &g0), 0);
	assert_int_equal(sidtab_get(fx->t[1], sid, &g1), 0);
	assert_int_equal(g0.state, g1.state);
	assert_int_equal(g0.weight_milli, g1.weight_milli);
	assert_string_equal(g0.address, g1.address);
	assert_true(g0.version == g1.version);
	assert_true(g0.self_version == g1.self_version);
	assert_true(g0.root_version == g1.root_version);
}

static void test_a_restart_does_not_undo_a_set_made_elsewhere(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid x = sidtab_self(fx->t[0]);
	struct ofs_server_set set;
	struct ofs_server e, got;

	exchange(fx, 0, 1);
	/* Server 0 is down; the operator drains it through server 1. */
	memset(&set, 0, sizeof(set));
	set.sid = x;
	set.mask = OFS_SET_STATE;
	set.state = OFS_SERVER_DRAINING;
	assert_int_equal(sidtab_set(fx->t[1], &set, &e), 0);
	/* It comes back on another port: its own table says what it
	 * remembered (in) until it hears from a peer. */
	reopen(fx, 0);
	assert_int_equal(sidtab_get(fx->t[0], x, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_IN);
	assert_string_equal(got.address, "127.0.0.1:7009");
	/* Whichever table speaks first, both end with the operator's state
	 * and the new address. */
	exchange(fx, 0, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sidtab_get(fx->t[i], x, &got), 0);
		assert_int_equal(got.state, OFS_SERVER_DRAINING);
		assert_string_equal(got.address, "127.0.0.1:7009");
	}
	assert_same_entry(fx, x);
	/* And so it stays: more rounds, another restart. */
	exchange(fx, 1, 0);
	reopen(fx, 0);
	exchange(fx, 0, 1);
	exchange(fx, 1, 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sidtab_get(fx->t[i], x, &got), 0);
		assert_int_equal(got.state, OFS_SERVER_DRAINING);
	}
	assert_same_entry(fx, x);
	/* The operator can still undo it, through the restarted server. */
	set.state = OFS_SERVER_IN;
	assert_int_equal(sidtab_set(fx->t[0], &set, &e), 0);
	exchange(fx, 0, 1);
	assert_int_equal(sidtab_get(fx->t[1], x, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_IN);
}

static void test_each_part_merges_by_its_own_version(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server a = peer(0xb1, 5, 1000), got;

	a.self_version = 5;
	a.state = OFS_SERVER_OUT;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	/* A new address (the server restarted) with an older operator's
	 * part: the address is taken, the state kept. */
	a.version = 4;
	a.self_version = 6;
	a.state = OFS_SERVER_IN;
	snprintf(a.address, sizeof(a.address), "127.0.0.1:9100");
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_string_equal(got.address, "127.0.0.1:9100");
	assert_int_equal(got.state, OFS_SERVER_OUT);
	assert_true(got.version == 5);
	assert_true(got.self_version == 6);
	/* A newer operator's part with an older address: the state is
	 * taken, the address kept. */
	a.version = 7;
	a.self_version = 5;
	a.state = OFS_SERVER_DRAINING;
	snprintf(a.address, sizeof(a.address), "127.0.0.1:9000");
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], a.sid, &got), 0);
	assert_string_equal(got.address, "127.0.0.1:9100");
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	/* Both older: nothing. */
	a.version = 6;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 0);
}

static void test_equal_self_versions_settle_on_one_address_whatever_the_order(void **state)
{
	struct fixture *fx = *state;
	struct ofs_server x = peer(0xc1, 9, 1000), y = x, g0, g1;

	x.self_version = y.self_version = 4;
	snprintf(y.address, sizeof(y.address), "127.0.0.1:9999");
	assert_int_equal(sidtab_merge(fx->t[0], &x, 1), 1);
	sidtab_merge(fx->t[0], &y, 1);
	assert_int_equal(sidtab_merge(fx->t[1], &y, 1), 1);
	sidtab_merge(fx->t[1], &x, 1);
	assert_int_equal(sidtab_get(fx->t[0], x.sid, &g0), 0);
	assert_int_equal(sidtab_get(fx->t[1], x.sid, &g1), 0);
	assert_string_equal(g0.address, g1.address);
}

static void assert_root(struct fixture *fx, int i, const struct ofs_handle *want, int64_t birth)
{
	struct ofs_handle h;
	struct ofs_server me;
	int64_t b;

	assert_int_equal(store_root_info(fx->s[i], &h, &b), 0);
	assert_int_equal(b, birth);
	assert_memory_equal(h.oid.b, want->oid.b, OFS_OID_LEN);
	assert_int_equal(h.nsids, want->nsids);
	assert_memory_equal(h.sids, want->sids, want->nsids * sizeof(want->sids[0]));
	/* (the own entry, which peers see, says the same) */
	assert_int_equal(sidtab_get(fx->t[i], sidtab_self(fx->t[i]), &me), 0);
	assert_int_equal(me.root.nsids, want->nsids);
	assert_memory_equal(me.root.sids, want->sids, want->nsids * sizeof(want->sids[0]));
}

static void test_a_root_move_reaches_a_server_that_missed_it(void **state)
{
	struct fixture *fx = *state;
	struct ofs_handle r = mk_root(0xd1), moved = r, again = r, used;
	struct ofs_server me0, me1;
	int64_t birth;

	/* A client's root, taken by both. */
	assert_int_equal(sidtab_offer_root(fx->t[0], &r, 1000, &used, &birth), 0);
	assert_int_equal(sidtab_offer_root(fx->t[1], &r, 1000, &used, &birth), 0);
	exchange(fx, 0, 1);
	/* Server 0 is down while the root's copies move: only server 1
	 * takes the new list. */
	moved.nsids = 2;
	memset(moved.sids[0].b, 0xd7, sizeof(moved.sids[0].b));
	memset(moved.sids[1].b, 0xd8, sizeof(moved.sids[1].b));
	assert_int_equal(sidtab_move_root(fx->t[1], &moved, 1000, &used, &birth), 0);
	assert_int_equal(used.nsids, 2);
	assert_root(fx, 1, &moved, 1000);
	reopen(fx, 0);
	assert_root(fx, 0, &r, 1000);
	/* Its stale copy reaches server 1 first: the moved list stays. */
	{
		struct ofs_server *e = NULL;
		size_t n = 0;
		assert_int_equal(sidtab_snapshot(fx->t[0], &e, &n), 0);
		assert_true(sidtab_merge(fx->t[1], e, n) >= 0);
		free(e);
	}
	assert_root(fx, 1, &moved, 1000);
	/* Then it hears from server 1 and serves the moved list. */
	exchange(fx, 1, 0);
	assert_root(fx, 0, &moved, 1000);
	assert_int_equal(sidtab_get(fx->t[0], sidtab_self(fx->t[0]), &me0), 0);
	assert_int_equal(sidtab_get(fx->t[1], sidtab_self(fx->t[1]), &me1), 0);
	assert_true(me0.root_version == me1.root_version);
	/* ... across a restart too. */
	reopen(fx, 0);
	assert_root(fx, 0, &moved, 1000);
	assert_int_equal(sidtab_get(fx->t[0], sidtab_self(fx->t[0]), &me0), 0);
	assert_true(me0.root_version == me1.root_version);
	/* A second move, this time server 1 misses it: the older list does
	 * not come back from it, the newer one reaches it. */
	again.nsids = 3;
	memset(again.sids[0].b, 0xd9, sizeof(again.sids[0].b));
	memset(again.sids[1].b, 0xda, sizeof(again.sids[1].b));
	memset(again.sids[2].b, 0xdb, sizeof(again.sids[2].b));
	assert_int_equal(sidtab_move_root(fx->t[0], &again, 1000, &used, &birth), 0);
	exchange(fx, 1, 0);
	assert_root(fx, 0, &again, 1000);
	assert_root(fx, 1, &again, 1000);
	/* A move of another root is refused, nothing changes. */
	{
		struct ofs_handle other = mk_root(0xe1);
		assert_int_equal(sidtab_move_root(fx->t[0], &other, 1000, &used, &birth), -ESTALE);
		assert_int_equal(sidtab_move_root(fx->t[0], &again, 999, &used, &birth), -ESTALE);
	}
	assert_root(fx, 0, &again, 1000);
}

static void test_versions_never_go_back_when_the_clock_steps_back(void **state)
{
	struct fixture *fx = *state;
	/* (far past any wall clock in ns: as if the clock stepped back by
	 * a century after these were written) */
	const uint64_t future = UINT64_C(1) << 62;
	struct ofs_handle r = mk_root(0xf1), moved = r, used;
	struct ofs_server me, theirs, a;
	struct ofs_server_set set;
	int64_t birth;

	assert_int_equal(sidtab_get(fx->t[0], sidtab_self(fx->t[0]), &me), 0);
	me.version = future;
	me.self_version = future;
	assert_int_equal(store_server_put(fx->s[0], &me), 0);
	reopen(fx, 0);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &me), 0);
	assert_true(me.version == future);          /* a restart sets nothing */
	assert_true(me.self_version > future);
	/* An operator's change: newer than the stored one. */
	memset(&set, 0, sizeof(set));
	set.sid = me.sid;
	set.mask = OFS_SET_WEIGHT;
	set.weight_milli = 3000;
	assert_int_equal(sidtab_set(fx->t[0], &set, &me), 0);
	assert_true(me.version > future);
	/* A peer's copy of our entry from the future: ours goes past it. */
	theirs = me;
	theirs.self_version = future + 1000;
	assert_int_equal(sidtab_merge(fx->t[0], &theirs, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &me), 0);
	assert_true(me.self_version > future + 1000);
	/* A root whose list a peer has with a version from the future: a
	 * move here makes a newer one still. */
	assert_int_equal(sidtab_offer_root(fx->t[0], &r, 1000, &used, &birth), 0);
	a = peer(0xf2, 1, 1000);
	a.root = r;
	a.root_birth_ns = 1000;
	a.root_version = future;
	assert_int_equal(sidtab_merge(fx->t[0], &a, 1), 1);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &me), 0);
	assert_true(me.root_version == future);     /* taken: the same list */
	moved.sids[0].b[0] ^= 0xff;
	assert_int_equal(sidtab_move_root(fx->t[0], &moved, 1000, &used, &birth), 0);
	assert_int_equal(sidtab_get(fx->t[0], me.sid, &me), 0);
	assert_true(me.root_version > future);
	assert_memory_equal(me.root.sids[0].b, moved.sids[0].b, OFS_OID_LEN);
}

/* ---- a server speaks for its own entry only ---- */

/* What server 1 (from) says: its own entry, changed, and entries about
 * server 0, a known peer Y and an unknown Z, each changed with versions
 * far ahead. Only its own entry and the unknown one are taken; another
 * server's operator's part once a second server says the same. */
static void test_a_server_speaks_for_its_own_entry_only(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid me = sidtab_self(fx->t[0]), from = sidtab_self(fx->t[1]);
	struct ofs_server y = peer(0x31, 5, 1000), z = peer(0x32, 5, 1000), said[4], got, mine;

	/* Y and server 1 become known, each from itself. */
	assert_int_equal(sidtab_merge_from(fx->t[0], &y, 1, &y.sid), 1);
	assert_int_equal(sidtab_get(fx->t[1], from, &said[0]), 0);
	assert_int_equal(sidtab_merge_from(fx->t[0], &said[0], 1, &from), 1);
	assert_int_equal(sidtab_get(fx->t[0], me, &mine), 0);

	/* Server 1 moves and drains itself: its own word, taken. */
	snprintf(said[0].address, sizeof(said[0].address), "127.0.0.1:7102");
	said[0].self_version += 10;
	said[0].state = OFS_SERVER_DRAINING;
	said[0].version += 10;
	/* ... and says Y moved and is out, and that server 0 is out. */
	said[1] = y;
	snprintf(said[1].address, sizeof(said[1].address), "127.0.0.1:9999");
	said[1].self_version = UINT64_MAX / 2;
	said[1].state = OFS_SERVER_OUT;
	said[1].version = UINT64_MAX / 2;
	said[2] = mine;
	said[2].state = OFS_SERVER_OUT;
	said[2].version = UINT64_MAX / 2;
	said[3] = z;
	assert_int_equal(sidtab_merge_from(fx->t[0], said, 4, &from), 2);

	assert_int_equal(sidtab_get(fx->t[0], from, &got), 0);
	assert_string_equal(got.address, "127.0.0.1:7102");
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	assert_int_equal(sidtab_get(fx->t[0], y.sid, &got), 0);
	assert_string_equal(got.address, y.address);
	assert_int_equal(got.state, OFS_SERVER_IN);
	assert_true(got.version == y.version);
	/* ... where Y was said to be is kept as a lead to ask Y there, once */
	{
		struct ofs_sid ls[SIDTAB_LEADS];
		char la[SIDTAB_LEADS][OFS_SERVER_ADDR_LEN];
		assert_int_equal(sidtab_leads(fx->t[0], ls, la, SIDTAB_LEADS), 1);
		assert_memory_equal(ls[0].b, y.sid.b, OFS_OID_LEN);
		assert_string_equal(la[0], "127.0.0.1:9999");
		assert_int_equal(sidtab_leads(fx->t[0], ls, la, SIDTAB_LEADS), 0);
	}
	assert_int_equal(sidtab_get(fx->t[0], me, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_IN);
	assert_true(got.version == mine.version);
	assert_int_equal(sidtab_get(fx->t[0], z.sid, &got), 0);    /* (unknown: learned) */
	assert_string_equal(got.address, z.address);

	/* Server 1 again, the same: still one server's word. */
	assert_int_equal(sidtab_merge_from(fx->t[0], &said[1], 2, &from), 0);
	assert_int_equal(sidtab_get(fx->t[0], y.sid, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_IN);
	/* A second server W says the very same operator's parts (an admin's
	 * change W and server 1 both took): taken - the operator's part
	 * only, never the address. Said otherwise (another weight), not. */
	{
		struct ofs_server w = peer(0x33, 5, 1000), two[3];
		assert_int_equal(sidtab_merge_from(fx->t[0], &w, 1, &w.sid), 1);
		two[0] = w;
		two[1] = said[1];
		two[2] = said[2];
		two[2].weight_milli = 7;
		assert_int_equal(sidtab_merge_from(fx->t[0], two, 3, &w.sid), 1);
		assert_int_equal(sidtab_get(fx->t[0], y.sid, &got), 0);
		assert_int_equal(got.state, OFS_SERVER_OUT);
		assert_true(got.version == said[1].version);
		assert_string_equal(got.address, y.address);
		assert_int_equal(sidtab_get(fx->t[0], me, &got), 0);
		assert_int_equal(got.state, OFS_SERVER_IN);
		/* ... and then said as server 1 did: two agree on our own */
		two[2].weight_milli = said[2].weight_milli;
		assert_int_equal(sidtab_merge_from(fx->t[0], two, 3, &w.sid), 1);
		assert_int_equal(sidtab_get(fx->t[0], me, &got), 0);
		assert_int_equal(got.state, OFS_SERVER_OUT);
		assert_string_equal(got.address, mine.address);
	}

	/* What Y says about itself is taken. */
	y.state = OFS_SERVER_DRAINING;
	y.version = UINT64_MAX / 2 + 1;
	assert_int_equal(sidtab_merge_from(fx->t[0], &y, 1, &y.sid), 1);
	assert_int_equal(sidtab_get(fx->t[0], y.sid, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	/* (a restart keeps it: nothing was taken from server 1 about Y's
	 * address) */
	reopen(fx, 0);
	assert_int_equal(sidtab_get(fx->t[0], y.sid, &got), 0);
	assert_string_equal(got.address, y.address);
}

/* ---- one pull of the table, from a peer that speaks the protocol ---- */

struct fake_peer {
	int lfd;
	char addr[OFS_ADDR_MAX];
	struct sidtab *t;
	pthread_t th;
};

/* Answer one SERVERS exchange as a server does: merge, reply with ours. */
static void *fake_peer_main(void *arg)
{
	struct fake_peer *p = arg;
	struct ofs_frame_hdr h, rh;
	struct ofs_server *in = NULL, *all = NULL;
	struct ofs_sid self = sidtab_self(p->t);
	uint8_t *payload = NULL;
	size_t nin = 0, nall = 0;
	struct wbuf w;
	int fd = accept(p->lfd, NULL, NULL);
	struct net_io io = { .fd = fd };

	if (fd < 0)
		return NULL;
	wbuf_init(&w);
	if (net_recv_frame(&io, &h, &payload, 5000, 5000) == 0 && h.op == OFS_OP_SERVERS &&
	    proto_decode_servers(payload + h.cred_len + h.cap_len, h.body_len, false, NULL,
				 &in, &nin) == 0 &&
	    sidtab_merge(p->t, in, nin) >= 0 && sidtab_snapshot(p->t, &all, &nall) == 0) {
		proto_encode_servers(&w, &self, all, nall);
		memset(&rh, 0, sizeof(rh));
		rh.version = OFS_PROTO_VERSION;
		rh.op = (uint16_t)(h.op | OFS_OP_RESPONSE);
		rh.reqid = h.reqid;
		rh.body_len = (uint32_t)w.len;
		(void)net_send_frame(&io, &rh, NULL, NULL, w.data, 5000);
	}
	wbuf_free(&w);
	free(all);
	free(in);
	free(payload);
	close(fd);
	return NULL;
}

/* A listening socket on a free loopback port; its address in addr. */
static int listen_any(char addr[OFS_ADDR_MAX])
{
	struct sockaddr_in a, bound;
	int fd;

	assert_int_equal(net_parse_addr("127.0.0.1:0", &a), 0);
	assert_int_equal(net_listen(&a, &fd, &bound), 0);
	net_format_addr(&bound, addr);
	return fd;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_pull_learns_the_table_before_serving(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid x = sidtab_self(fx->t[0]);
	struct ofs_server_set set;
	struct ofs_server e, got;
	struct fake_peer p;
	char dead[OFS_ADDR_MAX], mute[OFS_ADDR_MAX];
	const char *seeds[3];
	int mfd;
	int64_t t0;

	exchange(fx, 0, 1);
	memset(&set, 0, sizeof(set));
	set.sid = x;
	set.mask = OFS_SET_STATE;
	set.state = OFS_SERVER_DRAINING;
	assert_int_equal(sidtab_set(fx->t[1], &set, &e), 0);
	reopen(fx, 0);
	/* Three seeds: server 1 (answers), one where nothing listens any
	 * more, one that takes the connection and never answers. */
	memset(&p, 0, sizeof(p));
	p.t = fx->t[1];
	p.lfd = listen_any(p.addr);
	close(listen_any(dead));
	mfd = listen_any(mute);
	assert_int_equal(pthread_create(&p.th, NULL, fake_peer_main, &p), 0);
	seeds[0] = dead;
	seeds[1] = p.addr;
	seeds[2] = mute;
	t0 = mono_ms();
	assert_int_equal(gossip_pull_once(fx->t[0], NULL, seeds, 3, 1500), 1);
	/* (bounded by its timeout, not by the one that never answers;
	 * generous for a loaded machine) */
	assert_true(mono_ms() - t0 < 10000);
	pthread_join(p.th, NULL);
	close(p.lfd);
	close(mfd);
	/* The peer learned the restarted server's new address (from that
	 * server itself). The restarted server keeps its own operator's part:
	 * one peer's word about another server's entry is not taken
	 * (sidtab_merge_from: two must agree). */
	assert_int_equal(sidtab_get(fx->t[0], x, &got), 0);
	assert_int_equal(got.state, OFS_SERVER_IN);
	assert_int_equal(sidtab_get(fx->t[1], x, &got), 0);
	assert_string_equal(got.address, "127.0.0.1:7009");
	assert_int_equal(got.state, OFS_SERVER_DRAINING);
	/* Nobody to ask: nothing to do. */
	{
		struct sidtab *t = NULL;
		struct store *s = NULL;
		char d[128];
		struct ofs_sid sid;
		snprintf(d, sizeof(d), "%s/lonely", fx->dir);
		assert_int_equal(store_init(d, 1 << 20, NULL, 0, &sid), 0);
		assert_int_equal(store_open(d, false, &s), 0);
		assert_int_equal(sidtab_open(s, "127.0.0.1:7010", &t), 0);
		assert_int_equal(gossip_pull_once(t, NULL, NULL, 0, 100), 0);
		sidtab_close(t);
		store_close(s);
	}
}

int main(void)
{
	conn_security(NULL, true);    /* its peers speak plaintext on loopback */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_open_fresh_lists_own_entry_first_with_init_attributes),
		T(test_merge_adds_unknown_takes_newer_ignores_older),
		T(test_an_unanswered_peer_is_silent_until_heard_from),
		T(test_equal_versions_settle_on_one_entry_whatever_the_order),
		T(test_merged_entries_survive_a_restart),
		T(test_own_entry_changed_elsewhere_keeps_own_address_and_root),
		T(test_newer_entry_without_a_root_keeps_the_known_root),
		T(test_set_changes_state_weight_attr_with_a_new_version),
		T(test_offer_root_takes_first_and_older_keeps_against_younger),
		T(test_merge_adopts_the_oldest_root_a_peer_serves),
		T(test_a_restart_does_not_undo_a_set_made_elsewhere),
		T(test_each_part_merges_by_its_own_version),
		T(test_equal_self_versions_settle_on_one_address_whatever_the_order),
		T(test_a_root_move_reaches_a_server_that_missed_it),
		T(test_versions_never_go_back_when_the_clock_steps_back),
		T(test_pull_learns_the_table_before_serving),
		T(test_a_server_speaks_for_its_own_entry_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
