/* test_plan.c - the rebalance plan (pbj/plan.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "pbj/plan.h"

static struct ofs_sid sid_n(uint8_t n)
{
	struct ofs_sid s;

	memset(&s, 0, sizeof(s));
	s.b[15] = n;
	return s;
}

static void mk(struct plan_server *s, uint8_t n, uint64_t used, uint64_t cap)
{
	memset(s, 0, sizeof(*s));
	s->sid = sid_n(n);
	s->used = used;
	s->capacity = cap;
	s->in = true;
}

/* Apply p to sv and check every server in service ends within t. */
static void assert_within_after(struct plan_server *sv, size_t n, const struct plan *p)
{
	double used = 0, cap = 0;

	for (size_t k = 0; k < p->nmoves; k++)
		for (size_t i = 0; i < n; i++) {
			if (sid_eq(sv[i].sid, p->moves[k].from))
				sv[i].used -= p->moves[k].bytes;
			if (sid_eq(sv[i].sid, p->moves[k].to))
				sv[i].used += p->moves[k].bytes;
		}
	for (size_t i = 0; i < n; i++)
		if (sv[i].in) {
			used += (double)sv[i].used;
			cap += (double)sv[i].capacity;
		}
	for (size_t i = 0; i < n; i++) {
		double f = (double)sv[i].used / (double)sv[i].capacity;
		if (!sv[i].in)
			continue;
		assert_true(f <= used / cap + p->threshold + 1e-9);
		assert_true(f >= used / cap - p->threshold - 1e-9);
	}
}

static void test_a_new_empty_server_gets_close_to_the_least_bytes(void **state)
{
	struct plan_server sv[5];
	struct plan p;

	(void)state;
	for (uint8_t i = 0; i < 4; i++)
		mk(&sv[i], i + 1, 60000000, 100000000);
	mk(&sv[4], 5, 0, 100000000);
	assert_int_equal(plan_rebalance(sv, 5, 10, &p), 0);
	assert_false(p.balanced);
	/* mean 48%: the new server needs 38% of its capacity at least */
	assert_int_equal(p.min_bytes, 38000000);
	assert_true(p.bytes >= p.min_bytes);
	assert_true((double)p.bytes <= 1.25 * (double)p.min_bytes);
	for (size_t k = 0; k < p.nmoves; k++)
		assert_true(sid_eq(p.moves[k].to, sid_n(5)));
	assert_within_after(sv, 5, &p);
}

static void test_a_balanced_cluster_moves_nothing(void **state)
{
	struct plan_server sv[3];
	struct plan p;

	(void)state;
	mk(&sv[0], 1, 50, 100);
	mk(&sv[1], 2, 55, 100);
	mk(&sv[2], 3, 45, 100);
	assert_int_equal(plan_rebalance(sv, 3, 10, &p), 0);
	assert_true(p.balanced);
	assert_int_equal(p.nmoves, 0);
	assert_int_equal(p.min_bytes, 0);
}

static void test_uneven_capacities_and_servers_out_of_service(void **state)
{
	struct plan_server sv[4];
	struct plan p;

	(void)state;
	mk(&sv[0], 1, 900000, 1000000);     /* 90% */
	mk(&sv[1], 2, 100000, 2000000);     /*  5% */
	mk(&sv[2], 3, 500000, 1000000);     /* 50% */
	mk(&sv[3], 4, 999999, 1000000);     /* out: neither gives nor takes */
	sv[3].in = false;
	assert_int_equal(plan_rebalance(sv, 4, 5, &p), 0);
	assert_false(p.balanced);
	assert_true(p.bytes >= p.min_bytes);
	assert_true((double)p.bytes <= 1.25 * (double)p.min_bytes + 1);
	for (size_t k = 0; k < p.nmoves; k++) {
		assert_false(sid_eq(p.moves[k].from, sid_n(4)));
		assert_false(sid_eq(p.moves[k].to, sid_n(4)));
	}
	assert_within_after(sv, 4, &p);
	{
		struct plan_move m[8];
		size_t got = plan_moves_from(&p, sid_n(1), m, 8);
		assert_true(got >= 1);
		for (size_t k = 0; k < got; k++)
			assert_true(sid_eq(m[k].from, sid_n(1)));
	}
}

static void test_bad_arguments_are_refused(void **state)
{
	struct plan_server sv[1];
	struct plan p;

	(void)state;
	mk(&sv[0], 1, 1, 2);
	assert_int_equal(plan_rebalance(sv, 1, 0, &p), -EINVAL);
	assert_int_equal(plan_rebalance(sv, 1, 101, &p), -EINVAL);
	assert_int_equal(plan_rebalance(sv, 0, 10, &p), -EINVAL);
	assert_int_equal(plan_rebalance(NULL, 1, 10, &p), -EINVAL);
	assert_int_equal(plan_rebalance(sv, 1, 10, &p), 0);
	assert_true(p.balanced);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_empty_server_gets_close_to_the_least_bytes),
		cmocka_unit_test(test_a_balanced_cluster_moves_nothing),
		cmocka_unit_test(test_uneven_capacities_and_servers_out_of_service),
		cmocka_unit_test(test_bad_arguments_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
