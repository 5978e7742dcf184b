/* test_backoff.c - exponential waits with a cap and jitter (lib/backoff.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/backoff.h"

/* The steps double from the base up to the cap; each wait lies in the
 * upper half of its step. */
static void test_waits_double_up_to_the_cap_within_their_step(void **state)
{
	struct backoff b;
	int step = 100;
	int64_t sum = 0;

	(void)state;
	backoff_init(&b, 100, 1000);
	for (int i = 0; i < 12; i++) {
		int w = backoff_next(&b);
		if (w < step / 2 || w > step)
			fail_msg("wait %d of failure %d is outside [%d, %d]", w, i + 1, step / 2, step);
		sum += w;
		step = step * 2 > 1000 ? 1000 : step * 2;
	}
	assert_int_equal(b.tries, 12);
	assert_int_equal(b.waited_ms, sum);
	/* capped: never past it, however many failures */
	for (int i = 0; i < 1000; i++)
		assert_in_range(backoff_next(&b), 500, 1000);
}

/* The waits vary (jitter): a thousand failures at the cap do not all
 * wait the same. */
static void test_waits_at_the_cap_are_spread(void **state)
{
	struct backoff b;
	int lo = 1 << 30, hi = 0;

	(void)state;
	backoff_init(&b, 1000, 1000);
	for (int i = 0; i < 1000; i++) {
		int w = backoff_next(&b);
		lo = w < lo ? w : lo;
		hi = w > hi ? w : hi;
	}
	assert_true(lo < 600);
	assert_true(hi > 900);
}

/* A success starts the steps over, and the counts with them. */
static void test_reset_starts_from_the_base_again(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 10, 10000);
	for (int i = 0; i < 8; i++)
		backoff_next(&b);
	assert_true(backoff_next(&b) >= 640);
	backoff_reset(&b);
	assert_int_equal(b.tries, 0);
	assert_int_equal(b.waited_ms, 0);
	assert_in_range(backoff_next(&b), 5, 10);
}

/* Bounds that make no sense are made sensible: never a wait of 0, never a
 * cap below the base. */
static void test_odd_bounds_still_wait(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 0, 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(backoff_next(&b), 1);
	backoff_init(&b, 50, 10);
	for (int i = 0; i < 10; i++)
		assert_in_range(backoff_next(&b), 25, 50);
}

/* A step near INT_MAX does not overflow. */
static void test_a_huge_cap_does_not_overflow(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 1 << 29, 0x7fffffff);
	for (int i = 0; i < 10; i++)
		assert_true(backoff_next(&b) >= 1 << 28);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_double_up_to_the_cap_within_their_step),
		cmocka_unit_test(test_waits_at_the_cap_are_spread),
		cmocka_unit_test(test_reset_starts_from_the_base_again),
		cmocka_unit_test(test_odd_bounds_still_wait),
		cmocka_unit_test(test_a_huge_cap_does_not_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
