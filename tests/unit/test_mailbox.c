/* test_mailbox.c - records held for another server's task (server/mailbox.c). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/mailbox.h"

static struct ofs_sid sid(uint8_t b)
{
	struct ofs_sid s;

	memset(&s, b, sizeof(s));
	return s;
}

static const struct mailbox_peer *peer(const struct mailbox_peer *v, size_t n, struct ofs_sid s)
{
	for (size_t i = 0; i < n; i++)
		if (sid_eq(v[i].from, s))
			return &v[i];
	return NULL;
}

static void test_records_are_kept_per_sender_and_channel_until_taken(void **state)
{
	struct mailbox *mb = NULL;
	struct mailbox_peer v[4];
	const struct mailbox_peer *a;
	uint8_t r[24], *got;
	size_t n, len;
	uint64_t seq;
	uint32_t rl;

	(void)state;
	for (size_t i = 0; i < sizeof(r); i++)
		r[i] = (uint8_t)i;
	assert_int_equal(mailbox_open(1 << 20, &mb), 0);
	/* before the receiver's task runs: kept */
	assert_int_equal(mailbox_put(mb, 7, sid(1), 99, 0, 8, r, 16, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 7, sid(1), 99, 0, 8, r + 16, 8, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 7, sid(1), 99, 1, 12, r, 24, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 8, sid(2), 5, 0, 8, r, 8, false, 0), 0);
	assert_int_equal(mailbox_bytes(mb), 56);
	assert_int_equal(mailbox_peers(mb, 7, v, 4, &n, &seq), 0);
	assert_int_equal(n, 1);                   /* (job 8's sender is not job 7's) */
	assert_int_equal(seq, 4);
	a = peer(v, n, sid(1));
	assert_non_null(a);
	assert_int_equal(a->count[0], 3);
	assert_int_equal(a->count[1], 2);
	assert_int_equal(a->ended, 0);
	assert_false(a->broken);
	/* ended with the right count */
	assert_int_equal(mailbox_put(mb, 7, sid(1), 99, 0, 8, NULL, 0, true, 3), 0);
	assert_int_equal(mailbox_peers(mb, 7, v, 4, &n, &seq), 0);
	assert_int_equal(peer(v, n, sid(1))->ended, 1u);
	/* taken: moved to the caller, in the order put */
	assert_int_equal(mailbox_take(mb, 7, sid(1), 0, &got, &len, &rl), 0);
	assert_int_equal(len, 24);
	assert_int_equal(rl, 8);
	assert_memory_equal(got, r, 24);
	free(got);
	assert_int_equal(mailbox_take(mb, 7, sid(1), 0, &got, &len, &rl), 0);
	assert_null(got);
	assert_int_equal(len, 0);
	assert_int_equal(mailbox_bytes(mb), 32);
	/* another record length on a channel: refused */
	assert_int_equal(mailbox_put(mb, 7, sid(1), 99, 1, 8, r, 8, false, 0), -EINVAL);
	mailbox_drop(mb, 7);
	assert_int_equal(mailbox_bytes(mb), 8);
	assert_int_equal(mailbox_peers(mb, 7, v, 4, &n, &seq), 0);
	assert_int_equal(n, 0);
	mailbox_close(mb);
}

static void test_a_sender_is_believed_only_whole(void **state)
{
	struct mailbox *mb = NULL;
	struct mailbox_peer v[4];
	uint8_t r[16] = { 1 }, *got;
	size_t n, len;
	uint64_t seq;
	uint32_t rl;

	(void)state;
	assert_int_equal(mailbox_open(1 << 20, &mb), 0);
	/* an end whose count is not what arrived: broken, its records dropped */
	assert_int_equal(mailbox_put(mb, 1, sid(1), 10, 0, 8, r, 16, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 1, sid(1), 10, 0, 8, NULL, 0, true, 3), 0);
	/* a second epoch (its task ran again): broken */
	assert_int_equal(mailbox_put(mb, 1, sid(2), 10, 0, 8, r, 8, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 1, sid(2), 11, 0, 8, r, 8, false, 0), 0);
	/* records after their channel's end: broken */
	assert_int_equal(mailbox_put(mb, 1, sid(3), 10, 2, 8, NULL, 0, true, 0), 0);
	assert_int_equal(mailbox_put(mb, 1, sid(3), 10, 2, 8, r, 8, false, 0), 0);
	assert_int_equal(mailbox_peers(mb, 1, v, 4, &n, &seq), 0);
	assert_int_equal(n, 3);
	for (uint8_t s = 1; s <= 3; s++)
		assert_true(peer(v, n, sid(s))->broken);
	assert_int_equal(mailbox_bytes(mb), 0);
	assert_int_equal(mailbox_take(mb, 1, sid(2), 0, &got, &len, &rl), 0);
	assert_null(got);
	/* later puts of a broken sender are dropped */
	assert_int_equal(mailbox_put(mb, 1, sid(2), 11, 0, 8, r, 8, false, 0), 0);
	assert_int_equal(mailbox_bytes(mb), 0);
	mailbox_close(mb);
}

static void test_a_full_mailbox_refuses_and_breaks_the_sender(void **state)
{
	struct mailbox *mb = NULL;
	struct mailbox_peer v[2];
	uint8_t r[64] = { 0 };
	size_t n;
	uint64_t seq;

	(void)state;
	assert_int_equal(mailbox_open(100, &mb), 0);
	assert_int_equal(mailbox_put(mb, 1, sid(1), 1, 0, 8, r, 64, false, 0), 0);
	assert_int_equal(mailbox_put(mb, 1, sid(2), 1, 0, 8, r, 64, false, 0), -ENOSPC);
	assert_int_equal(mailbox_peers(mb, 1, v, 2, &n, &seq), 0);
	assert_true(peer(v, n, sid(2))->broken);
	assert_false(peer(v, n, sid(1))->broken);
	assert_int_equal(mailbox_bytes(mb), 64);
	/* bad arguments */
	assert_int_equal(mailbox_put(mb, 1, sid(1), 1, OFS_JOIN_CHANNELS, 8, r, 8, false, 0), -EINVAL);
	assert_int_equal(mailbox_put(mb, 1, sid(1), 1, 0, 0, r, 8, false, 0), -EINVAL);
	assert_int_equal(mailbox_put(mb, 1, sid(1), 1, 0, 8, r, 12, false, 0), -EINVAL);
	mailbox_close(mb);
}

struct later {
	struct mailbox *mb;
};

static void *put_later(void *arg)
{
	struct later *l = arg;
	uint8_t r[8] = { 0 };

	mailbox_put(l->mb, 3, sid(9), 1, 0, 8, r, 8, false, 0);
	return NULL;
}

static void test_a_waiter_wakes_on_a_put(void **state)
{
	struct mailbox *mb = NULL;
	struct mailbox_peer v[2];
	struct later l;
	pthread_t th;
	size_t n = 0;
	uint64_t seq;

	(void)state;
	assert_int_equal(mailbox_open(1 << 20, &mb), 0);
	assert_int_equal(mailbox_peers(mb, 3, v, 2, &n, &seq), 0);
	l.mb = mb;
	assert_int_equal(pthread_create(&th, NULL, put_later, &l), 0);
	/* (bounded: 30 s; returns as soon as the put lands) */
	for (int i = 0; i < 300 && n == 0; i++) {
		mailbox_wait(mb, seq, 100);
		assert_int_equal(mailbox_peers(mb, 3, v, 2, &n, &seq), 0);
	}
	pthread_join(th, NULL);
	assert_int_equal(n, 1);
	mailbox_wait(mb, seq - 1, 1000);          /* already past: returns at once */
	mailbox_close(mb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_are_kept_per_sender_and_channel_until_taken),
		cmocka_unit_test(test_a_sender_is_believed_only_whole),
		cmocka_unit_test(test_a_full_mailbox_refuses_and_breaks_the_sender),
		cmocka_unit_test(test_a_waiter_wakes_on_a_put),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
