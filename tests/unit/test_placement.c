/*
 * test_placement.c - placement: minimal movement, failure domains, states,
 * weights, the fixed primary, determinism and argument checks.
 *
 * OIDs and SIDs come from a seeded splitmix64, not getrandom, so every run
 * places the same objects and the statistical bounds are checked against
 * the same figures each time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/oid.h"
#include "lib/placement.h"

#define NOBJ 100000             /* objects in the statistical tests */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fill16(uint8_t b[16], uint64_t *rng)
{
	uint64_t hi = splitmix64(rng), lo = splitmix64(rng);

	for (int i = 0; i < 8; i++) {
		b[i] = (uint8_t)(hi >> (56 - 8 * i));
		b[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

static struct ofs_oid next_oid(uint64_t *rng)
{
	struct ofs_oid o;

	fill16(o.b, rng);
	return o;
}

/* Fill s[0..n-1] with in-service weight-1 servers whose racks are racks[i]
 * (NULL: "r<i/2+1>", two per rack). SIDs are seeded, distinct. */
static void make_servers(struct place_server *s, size_t n,
			 const char *const *racks, uint64_t seed)
{
	uint64_t rng = seed;

	memset(s, 0, n * sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		fill16(s[i].sid.b, &rng);
		s[i].weight = 1.0;
		s[i].state = PLACE_IN;
		if (racks)
			snprintf(s[i].domain, sizeof(s[i].domain), "%s",
				 racks[i]);
		else
			snprintf(s[i].domain, sizeof(s[i].domain), "r%zu",
				 i / 2 + 1);
	}
}

static size_t index_of(const struct place_server *s, size_t n,
		       struct ofs_sid sid)
{
	for (size_t i = 0; i < n; i++)
		if (sid_eq(s[i].sid, sid))
			return i;
	fail_msg("placement returned a SID not in the table");
	return n;
}

static bool contains(const struct ofs_sid *set, int k, struct ofs_sid sid)
{
	for (int i = 0; i < k; i++)
		if (sid_eq(set[i], sid))
			return true;
	return false;
}

static void assert_no_duplicate(const struct ofs_sid *out, int k)
{
	for (int i = 0; i < k; i++)
		assert_false(contains(out, i, out[i]));
}

/* Count distinct domains among the chosen servers. */
static int distinct_domains(const struct place_server *s, size_t n,
			    const struct ofs_sid *out, int k)
{
	int d = 0;

	for (int i = 0; i < k; i++) {
		const char *dom = s[index_of(s, n, out[i])].domain;
		bool seen = false;

		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(s[index_of(s, n, out[j])].domain,
				      dom) == 0;
		if (!seen)
			d++;
	}
	return d;
}

/* Place NOBJ objects on 10 servers (5 racks of 2), then on the same 10
 * plus one in a new rack r6; return the fraction of (object, copy) slots
 * whose server is new, and check every move goes to the new server. */
static double movement_on_add(unsigned copies)
{
	struct place_server s[11];
	uint64_t rng = 42;
	long moved = 0;

	make_servers(s, 11, NULL, 7);
	snprintf(s[10].domain, sizeof(s[10].domain), "r6");
	for (long i = 0; i < NOBJ; i++) {
		struct ofs_oid oid = next_oid(&rng);
		struct ofs_sid before[OFS_MAX_REPLICAS], after[OFS_MAX_REPLICAS];

		assert_int_equal(place_choose("hrw", oid, s, 10, copies, NULL,
					      before), (int)copies);
		assert_int_equal(place_choose("hrw", oid, s, 11, copies, NULL,
					      after), (int)copies);
		for (unsigned j = 0; j < copies; j++) {
			if (contains(before, (int)copies, after[j]))
				continue;
			/* Only the newcomer takes data; nothing shuffles
			 * between the old servers. */
			assert_true(sid_eq(after[j], s[10].sid));
			moved++;
		}
	}
	return (double)moved / ((double)copies * NOBJ);
}

static void test_adding_server_moves_close_to_minimum_primaries(void **state)
{
	double f;

	(void)state;
	f = movement_on_add(1);
	print_message("copies=1: primaries moved %.4f (minimum 1/11 = %.4f)\n",
		      f, 1.0 / 11);
	assert_true(f <= 1.1 * (1.0 / 11));
}

/*
 * With copies=3 the plain bound, 1.1 x 1/11, does not hold under the rack
 * rule, and this test asserts the bound that does, with the same 10%
 * slack. The newcomer is alone in rack r6, while each old server shares
 * its rack with a partner that shuts it out whenever the partner ranks
 * higher. The old set is the first three servers of distinct racks in the
 * ranking of the 10; the newcomer, whose rank among the 11 is uniform,
 * joins whenever it ranks above the third of them, which sits at position
 * 71/21 = 3.381 on average (an exact count over all 10! orderings) rather
 * than at 3. So the expected fraction of slots moved is
 * E[position of third pick] / 11 / 3 = 71/693 = 0.1025, i.e. 1.127 x 1/11:
 * a lone rack carries more than its weight share, since it never loses a
 * slot to a rack-mate. Movement is still minimal in the sense that matters
 * (checked in movement_on_add): every moved slot lands on the newcomer and
 * nothing shuffles between old servers. Measured: 0.1020.
 */
#define REPLICA_MOVE_EXPECTED (71.0 / 693)

static void test_adding_server_moves_close_to_minimum_replicas(void **state)
{
	double f;

	(void)state;
	f = movement_on_add(3);
	print_message("copies=3: slots moved %.4f (expected with racks %.4f, "
		      "1/11 = %.4f)\n", f, REPLICA_MOVE_EXPECTED, 1.0 / 11);
	assert_true(f <= 1.1 * REPLICA_MOVE_EXPECTED);
}

static void test_copies_land_in_distinct_racks(void **state)
{
	static const char *const racks[] = { "r1", "r1", "r2", "r3" };
	struct place_server s[4];
	uint64_t rng = 1;

	(void)state;
	make_servers(s, 4, racks, 11);
	for (int i = 0; i < 10000; i++) {
		struct ofs_sid out[3];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 4, 3,
					      NULL, out), 3);
		assert_no_duplicate(out, 3);
		assert_int_equal(distinct_domains(s, 4, out, 3), 3);
	}
}

static void test_copies_share_racks_only_when_racks_run_out(void **state)
{
	static const char *const racks[] = { "r1", "r1", "r1", "r2" };
	struct place_server s[4];
	uint64_t rng = 2;

	(void)state;
	make_servers(s, 4, racks, 12);
	for (int i = 0; i < 10000; i++) {
		struct ofs_sid out[3];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 4, 3,
					      NULL, out), 3);
		assert_no_duplicate(out, 3);
		/* The first two slots take both racks; the third, a second
		 * r1 server. */
		assert_int_equal(distinct_domains(s, 4, out, 2), 2);
		assert_int_equal(distinct_domains(s, 4, out, 3), 2);
		assert_true(contains(out, 3, s[3].sid));
	}
}

static void test_never_places_on_draining_or_out_server(void **state)
{
	struct place_server s[6];
	uint64_t rng = 3;

	(void)state;
	make_servers(s, 6, NULL, 13);
	s[1].state = PLACE_DRAINING;
	s[4].state = PLACE_OUT;
	for (int i = 0; i < 10000; i++) {
		struct ofs_sid out[4];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 6, 4,
					      NULL, out), 4);
		assert_no_duplicate(out, 4);
		assert_false(contains(out, 4, s[1].sid));
		assert_false(contains(out, 4, s[4].sid));
	}
}

static void test_fewer_eligible_than_copies_returns_eligible_count(void **state)
{
	struct place_server s[4];
	struct ofs_sid out[4];
	uint64_t rng = 4;

	(void)state;
	make_servers(s, 4, NULL, 14);
	s[0].state = PLACE_DRAINING;
	s[2].weight = 0;
	assert_int_equal(place_choose("hrw", next_oid(&rng), s, 4, 4, NULL,
				      out), 2);
	assert_no_duplicate(out, 2);
	assert_true(contains(out, 2, s[1].sid));
	assert_true(contains(out, 2, s[3].sid));

	s[1].state = PLACE_OUT;
	s[3].state = PLACE_OUT;
	assert_int_equal(place_choose("hrw", next_oid(&rng), s, 4, 3, NULL,
				      out), 0);
}

static void test_weight_zero_never_chosen(void **state)
{
	struct place_server s[5];
	uint64_t rng = 5;

	(void)state;
	make_servers(s, 5, NULL, 15);
	s[2].weight = 0;
	for (int i = 0; i < 10000; i++) {
		struct ofs_sid out[4];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 5, 4,
					      NULL, out), 4);
		assert_false(contains(out, 4, s[2].sid));
	}
}

static void test_weights_are_honoured(void **state)
{
	struct place_server s[10];
	long primaries[10] = { 0 };
	uint64_t rng = 6;
	double avg1 = 0, ratio;

	(void)state;
	make_servers(s, 10, NULL, 16);
	s[0].weight = 2.0;
	for (long i = 0; i < NOBJ; i++) {
		struct ofs_sid out[1];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 10, 1,
					      NULL, out), 1);
		primaries[index_of(s, 10, out[0])]++;
	}
	for (int i = 1; i < 10; i++)
		avg1 += (double)primaries[i] / 9;
	ratio = (double)primaries[0] / avg1;
	print_message("weight 2 vs weight 1: %.3fx the primaries\n", ratio);
	assert_true(ratio >= 1.6 && ratio <= 2.4);
}

static void test_fixed_is_primary_and_rest_keep_distinct_racks(void **state)
{
	struct place_server s[10];
	uint64_t rng = 7;

	(void)state;
	make_servers(s, 10, NULL, 17);
	for (int i = 0; i < 10000; i++) {
		struct ofs_sid fixed = s[i % 10].sid, out[4];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 10, 4,
					      &fixed, out), 4);
		assert_true(sid_eq(out[0], fixed));
		assert_no_duplicate(out, 4);
		assert_int_equal(distinct_domains(s, 10, out, 4), 4);
	}
}

static void test_fixed_draining_is_ignored(void **state)
{
	struct place_server s[10];
	uint64_t rng = 8;

	(void)state;
	make_servers(s, 10, NULL, 18);
	s[3].state = PLACE_DRAINING;
	for (int i = 0; i < 1000; i++) {
		struct ofs_oid oid = next_oid(&rng);
		struct ofs_sid fixed = s[3].sid, out[3], plain[3];

		assert_int_equal(place_choose("hrw", oid, s, 10, 3, &fixed,
					      out), 3);
		assert_int_equal(place_choose("hrw", oid, s, 10, 3, NULL,
					      plain), 3);
		assert_false(contains(out, 3, fixed));
		assert_memory_equal(out, plain, sizeof(out));
	}
}

static void test_fixed_absent_from_table_is_ignored(void **state)
{
	struct place_server s[6];
	struct ofs_sid fixed, out[3], plain[3];
	struct ofs_oid oid;
	uint64_t rng = 13;

	(void)state;
	make_servers(s, 6, NULL, 23);
	fill16(fixed.b, &rng);
	oid = next_oid(&rng);
	assert_int_equal(place_choose("hrw", oid, s, 6, 3, &fixed, out), 3);
	assert_int_equal(place_choose("hrw", oid, s, 6, 3, NULL, plain), 3);
	assert_memory_equal(out, plain, sizeof(out));
}

static void test_sid_listed_twice_is_chosen_once(void **state)
{
	struct place_server s[4];
	uint64_t rng = 14;

	(void)state;
	make_servers(s, 4, NULL, 24);
	s[1].sid = s[0].sid;    /* same server, in two racks */
	snprintf(s[1].domain, sizeof(s[1].domain), "elsewhere");
	for (int i = 0; i < 1000; i++) {
		struct ofs_sid out[4];

		assert_int_equal(place_choose("hrw", next_oid(&rng), s, 4, 4,
					      NULL, out), 3);
		assert_no_duplicate(out, 3);
	}
}

static void test_same_inputs_give_same_output(void **state)
{
	struct place_server s[10], rev[10];
	uint64_t rng = 9;

	(void)state;
	make_servers(s, 10, NULL, 19);
	s[5].weight = 3.5;
	for (int i = 0; i < 10; i++)
		rev[i] = s[9 - i];
	for (int i = 0; i < 1000; i++) {
		struct ofs_oid oid = next_oid(&rng);
		struct ofs_sid a[4], b[4], c[4];

		assert_int_equal(place_choose("hrw", oid, s, 10, 4, NULL, a), 4);
		assert_int_equal(place_choose("hrw", oid, s, 10, 4, NULL, b), 4);
		/* The order of the table does not matter either. */
		assert_int_equal(place_choose("hrw", oid, rev, 10, 4, NULL, c),
				 4);
		assert_memory_equal(a, b, sizeof(a));
		assert_memory_equal(a, c, sizeof(a));
	}
}

static void test_known_answer_is_stable(void **state)
{
	struct place_server s[10];
	struct ofs_sid out[3];
	struct ofs_oid oid;
	uint64_t rng = 10;
	size_t idx[3];

	(void)state;
	/* Placement must agree across hosts and releases: pin one answer.
	 * If this changes, every stored object's expected home changes. */
	make_servers(s, 10, NULL, 20);
	oid = next_oid(&rng);
	assert_int_equal(place_choose(PLACE_DEFAULT, oid, s, 10, 3, NULL, out),
			 3);
	for (int i = 0; i < 3; i++)
		idx[i] = index_of(s, 10, out[i]);
	assert_int_equal(idx[0], 2);
	assert_int_equal(idx[1], 6);
	assert_int_equal(idx[2], 0);
}

static void test_bad_arguments_return_einval(void **state)
{
	struct place_server s[4];
	struct ofs_sid out[OFS_MAX_REPLICAS + 1], sentinel;
	struct ofs_oid oid;
	uint64_t rng = 11;

	(void)state;
	make_servers(s, 4, NULL, 21);
	oid = next_oid(&rng);
	memset(out, 0xa5, sizeof(out));
	sentinel = out[0];
	assert_int_equal(place_choose("hrw", oid, s, 4, 0, NULL, out), -EINVAL);
	assert_int_equal(place_choose("hrw", oid, s, 4, OFS_MAX_REPLICAS + 1,
				      NULL, out), -EINVAL);
	assert_int_equal(place_choose("hrw", oid, s, 0, 1, NULL, out), -EINVAL);
	assert_int_equal(place_choose("hrw", oid, NULL, 4, 1, NULL, out),
			 -EINVAL);
	assert_int_equal(place_choose("hrw", oid, s, 4, 1, NULL, NULL),
			 -EINVAL);
	assert_int_equal(place_choose(NULL, oid, s, 4, 1, NULL, out), -EINVAL);
	/* Out is written only on success. */
	for (int i = 0; i <= OFS_MAX_REPLICAS; i++)
		assert_memory_equal(&out[i], &sentinel, sizeof(sentinel));
}

static void test_unknown_name_returns_enoent(void **state)
{
	struct place_server s[4];
	struct ofs_sid out[1], sentinel;
	uint64_t rng = 12;

	(void)state;
	make_servers(s, 4, NULL, 22);
	memset(out, 0xa5, sizeof(out));
	sentinel = out[0];
	assert_int_equal(place_choose("crush", next_oid(&rng), s, 4, 1, NULL,
				      out), -ENOENT);
	assert_int_equal(place_choose("", next_oid(&rng), s, 4, 1, NULL,
				      out), -ENOENT);
	assert_memory_equal(&out[0], &sentinel, sizeof(sentinel));
}

static void test_names_list_default_first(void **state)
{
	size_t i;

	(void)state;
	assert_non_null(place_name(0));
	assert_string_equal(place_name(0), PLACE_DEFAULT);
	for (i = 0; place_name(i); i++)
		assert_true(strlen(place_name(i)) > 0);
	assert_null(place_name(i));
	assert_null(place_name((size_t)-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adding_server_moves_close_to_minimum_primaries),
		cmocka_unit_test(test_adding_server_moves_close_to_minimum_replicas),
		cmocka_unit_test(test_copies_land_in_distinct_racks),
		cmocka_unit_test(test_copies_share_racks_only_when_racks_run_out),
		cmocka_unit_test(test_never_places_on_draining_or_out_server),
		cmocka_unit_test(test_fewer_eligible_than_copies_returns_eligible_count),
		cmocka_unit_test(test_weight_zero_never_chosen),
		cmocka_unit_test(test_weights_are_honoured),
		cmocka_unit_test(test_fixed_is_primary_and_rest_keep_distinct_racks),
		cmocka_unit_test(test_fixed_draining_is_ignored),
		cmocka_unit_test(test_fixed_absent_from_table_is_ignored),
		cmocka_unit_test(test_sid_listed_twice_is_chosen_once),
		cmocka_unit_test(test_same_inputs_give_same_output),
		cmocka_unit_test(test_known_answer_is_stable),
		cmocka_unit_test(test_bad_arguments_return_einval),
		cmocka_unit_test(test_unknown_name_returns_enoent),
		cmocka_unit_test(test_names_list_default_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
