/*
 * test_wire.c - the bounds-checked codec: exact big-endian layout, every
 * length checked before a read, and the first error latching.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/wire.h"

static void test_wbuf_integers_are_big_endian(void **state)
{
	static const uint8_t want[] = {
		0xab,
		0x12, 0x34,
		0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
	};
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_u8(&w, 0xab);
	wbuf_u16(&w, 0x1234);
	wbuf_u32(&w, 0xdeadbeef);
	wbuf_u64(&w, UINT64_C(0x0102030405060708));
	wbuf_i64(&w, -2);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.data, want, sizeof(want));
	wbuf_free(&w);
	assert_null(w.data);
	assert_int_equal(w.len, 0);
}

static void test_wbuf_free_of_zeroed_wbuf_is_safe(void **state)
{
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_free(&w);
	wbuf_free(&w);
	assert_null(w.data);
}

static void test_wbuf_blob_and_str_carry_length_prefix(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x03, 'x', 'y', 'z',
		0x00, 0x02, 'h', 'i',
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00,
		'r', 'a', 'w',
	};
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_blob(&w, "xyz", 3);
	wbuf_str(&w, "hi");
	wbuf_blob(&w, NULL, 0);
	wbuf_str(&w, "");
	wbuf_bytes(&w, "raw", 3);
	wbuf_bytes(&w, NULL, 0);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.data, want, sizeof(want));
	wbuf_free(&w);
}

static void test_wbuf_str_over_u16_latches_toobig(void **state)
{
	static char big[70000];
	struct wbuf w;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	wbuf_init(&w);
	wbuf_str(&w, big);
	assert_int_equal(wbuf_error(&w), -OFS_ETOOBIG);
	assert_int_equal(w.len, 0);
	wbuf_u8(&w, 1);   /* later writes do nothing */
	assert_int_equal(w.len, 0);
	wbuf_free(&w);
}

static void test_wbuf_reserve_huge_latches_enomem(void **state)
{
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_u32(&w, 7);
	assert_null(wbuf_reserve(&w, SIZE_MAX));
	assert_int_equal(wbuf_error(&w), -ENOMEM);
	assert_int_equal(w.len, 4);
	wbuf_u64(&w, 1);
	wbuf_blob(&w, "abc", 3);
	assert_int_equal(w.len, 4);
	assert_null(wbuf_reserve(&w, 1));
	assert_int_equal(wbuf_error(&w), -ENOMEM);
	wbuf_free(&w);
}

static void test_wbuf_grows_past_initial_capacity(void **state)
{
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	for (uint32_t i = 0; i < 10000; i++)
		wbuf_u32(&w, i);
	assert_int_equal(wbuf_error(&w), 0);
	assert_int_equal(w.len, 40000);
	assert_true(w.cap >= w.len);
	assert_int_equal(w.data[4 * 9999 + 2], 0x27);   /* 9999 = 0x270f */
	assert_int_equal(w.data[4 * 9999 + 3], 0x0f);
	wbuf_free(&w);
}

static void test_wbuf_patch_u32_overwrites_in_place(void **state)
{
	static const uint8_t want[] = { 0xaa, 0x11, 0x22, 0x33, 0x44, 0xbb };
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wbuf_u8(&w, 0xaa);
	wbuf_u32(&w, 0);
	wbuf_u8(&w, 0xbb);
	wbuf_patch_u32(&w, 1, 0x11223344);
	wbuf_patch_u32(&w, 3, 0xffffffff);   /* would run past the end */
	wbuf_patch_u32(&w, 7, 0xffffffff);   /* past the end */
	wbuf_patch_u32(&w, SIZE_MAX, 0xffffffff);
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.data, want, sizeof(want));
	wbuf_free(&w);
}

static void test_wbuf_handle_clamps_nsids(void **state)
{
	struct ofs_handle h;
	struct wbuf w;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.nsids = 9;
	wbuf_init(&w);
	wbuf_handle(&w, &h);
	assert_int_equal(w.len, 16 + 1 + 4 * 16);
	assert_int_equal(w.data[16], OFS_MAX_REPLICAS);
	wbuf_free(&w);
}

static void test_rbuf_reads_big_endian(void **state)
{
	static const uint8_t in[] = {
		0xab, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
	};
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	assert_int_equal(rbuf_u8(&r), 0xab);
	assert_int_equal(rbuf_u16(&r), 0x1234);
	assert_int_equal(rbuf_u32(&r), 0xdeadbeef);
	assert_int_equal(rbuf_u64(&r), UINT64_C(0x0102030405060708));
	assert_true(rbuf_i64(&r) == -2);
	assert_int_equal(rbuf_left(&r), 0);
	assert_int_equal(rbuf_done(&r), 0);
}

static void test_rbuf_short_read_latches_and_returns_zero(void **state)
{
	static const uint8_t in[] = { 0x01, 0x02, 0x03, 0x04, 0x05 };
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	assert_int_equal(rbuf_u16(&r), 0x0102);
	assert_int_equal(rbuf_u32(&r), 0);   /* only 3 bytes left */
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	assert_int_equal(rbuf_left(&r), 3);   /* nothing consumed */
	assert_int_equal(rbuf_u8(&r), 0);     /* would fit, but latched */
	assert_int_equal(rbuf_u16(&r), 0);
	assert_null(rbuf_bytes(&r, 1));
	assert_null(rbuf_bytes(&r, 0));
	assert_int_equal(rbuf_left(&r), 3);
	assert_int_equal(rbuf_done(&r), -OFS_ECORRUPT);
}

static void test_rbuf_every_width_fails_on_short_buffer(void **state)
{
	static const uint8_t in[8] = { 0 };
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, 0);
	assert_int_equal(rbuf_u8(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	rbuf_init(&r, in, 1);
	assert_int_equal(rbuf_u16(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	rbuf_init(&r, in, 3);
	assert_int_equal(rbuf_u32(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	rbuf_init(&r, in, 7);
	assert_int_equal(rbuf_u64(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	rbuf_init(&r, in, 7);
	assert_true(rbuf_i64(&r) == 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	rbuf_init(&r, in, 15 - 8);
	(void)rbuf_oid(&r);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
}

static void test_rbuf_fail_keeps_first_error(void **state)
{
	struct rbuf r;

	(void)state;
	rbuf_init(&r, "ab", 2);
	rbuf_fail(&r, -OFS_ENAME);
	rbuf_fail(&r, -OFS_ETOOBIG);
	assert_int_equal(rbuf_error(&r), -OFS_ENAME);
	assert_int_equal(rbuf_u8(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ENAME);
	assert_int_equal(rbuf_done(&r), -OFS_ENAME);
}

static void test_rbuf_done_rejects_trailing_bytes(void **state)
{
	struct rbuf r;

	(void)state;
	rbuf_init(&r, "abc", 3);
	(void)rbuf_u16(&r);
	assert_int_equal(rbuf_error(&r), 0);
	assert_int_equal(rbuf_left(&r), 1);
	assert_int_equal(rbuf_done(&r), -OFS_ECORRUPT);
	(void)rbuf_u8(&r);
	assert_int_equal(rbuf_done(&r), 0);
}

static void test_rbuf_null_buffer_is_empty(void **state)
{
	struct rbuf r;

	(void)state;
	rbuf_init(&r, NULL, 100);
	assert_int_equal(rbuf_left(&r), 0);
	assert_int_equal(rbuf_done(&r), 0);
	assert_non_null(rbuf_bytes(&r, 0));
	assert_int_equal(rbuf_u8(&r), 0);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
}

static void test_rbuf_bytes_huge_length_fails_without_overflow(void **state)
{
	static const uint8_t in[4] = { 1, 2, 3, 4 };
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	(void)rbuf_u8(&r);
	assert_null(rbuf_bytes(&r, SIZE_MAX));
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	assert_int_equal(rbuf_left(&r), 3);
}

static void test_rbuf_blob_reads_length_and_bytes(void **state)
{
	static const uint8_t in[] = { 0, 0, 0, 3, 'x', 'y', 'z', 0, 0, 0, 0 };
	const uint8_t *p;
	size_t n = 99;
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	p = rbuf_blob(&r, 3, &n);
	assert_ptr_equal(p, in + 4);
	assert_int_equal(n, 3);
	p = rbuf_blob(&r, 0, &n);
	assert_non_null(p);
	assert_int_equal(n, 0);
	assert_int_equal(rbuf_done(&r), 0);
}

static void test_rbuf_blob_over_max_latches_toobig(void **state)
{
	static const uint8_t in[] = { 0, 0, 0, 4, 'a', 'b', 'c', 'd' };
	size_t n = 99;
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	assert_null(rbuf_blob(&r, 3, &n));
	assert_int_equal(n, 99);
	assert_int_equal(rbuf_error(&r), -OFS_ETOOBIG);
}

static void test_rbuf_blob_length_past_end_is_corrupt(void **state)
{
	static const uint8_t in[] = { 0xff, 0xff, 0xff, 0xff, 'a' };
	size_t n = 99;
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	assert_null(rbuf_blob(&r, SIZE_MAX, &n));
	assert_int_equal(n, 99);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
}

static void test_rbuf_str_copies_and_terminates(void **state)
{
	static const uint8_t in[] = { 0, 3, 'a', 'b', 'c', 0, 0 };
	char out[4];
	struct rbuf r;

	(void)state;
	memset(out, 'x', sizeof(out));
	rbuf_init(&r, in, sizeof(in));
	rbuf_str(&r, out, sizeof(out));
	assert_int_equal(rbuf_error(&r), 0);
	assert_string_equal(out, "abc");
	rbuf_str(&r, out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(rbuf_done(&r), 0);
}

static void test_rbuf_str_longer_than_out_latches_toobig(void **state)
{
	static const uint8_t in[] = { 0, 4, 'a', 'b', 'c', 'd' };
	char out[4] = "zzz";
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	rbuf_str(&r, out, sizeof(out));
	assert_int_equal(rbuf_error(&r), -OFS_ETOOBIG);
	assert_string_equal(out, "zzz");
	rbuf_init(&r, in, sizeof(in));
	rbuf_str(&r, out, 0);
	assert_int_equal(rbuf_error(&r), -OFS_ETOOBIG);
}

static void test_rbuf_str_with_nul_is_corrupt(void **state)
{
	static const uint8_t in[] = { 0, 3, 'a', 0, 'c' };
	char out[8] = "zzz";
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	rbuf_str(&r, out, sizeof(out));
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	assert_string_equal(out, "zzz");
}

static void test_rbuf_str_truncated_is_corrupt(void **state)
{
	static const uint8_t in[] = { 0, 5, 'a', 'b' };
	char out[8];
	struct rbuf r;

	(void)state;
	rbuf_init(&r, in, sizeof(in));
	rbuf_str(&r, out, sizeof(out));
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
}

static void test_handle_round_trips(void **state)
{
	struct ofs_handle h, g;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < OFS_OID_LEN; i++)
		h.oid.b[i] = (uint8_t)(0xf0 + i);
	h.nsids = 3;
	for (int s = 0; s < 3; s++)
		memset(h.sids[s].b, 0x10 * (s + 1), OFS_OID_LEN);
	wbuf_init(&w);
	wbuf_handle(&w, &h);
	assert_int_equal(w.len, 16 + 1 + 3 * 16);
	assert_int_equal(w.data[16], 3);
	rbuf_init(&r, w.data, w.len);
	memset(&g, 0xee, sizeof(g));
	rbuf_handle(&r, &g);
	assert_int_equal(rbuf_done(&r), 0);
	assert_memory_equal(&g, &h, sizeof(h));
	wbuf_free(&w);
}

static void test_rbuf_handle_rejects_nsids_over_max(void **state)
{
	uint8_t in[16 + 1 + 5 * 16];
	struct ofs_handle h;
	struct rbuf r;

	(void)state;
	memset(in, 0x11, sizeof(in));
	in[16] = OFS_MAX_REPLICAS + 1;
	rbuf_init(&r, in, sizeof(in));
	rbuf_handle(&r, &h);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	assert_int_equal(h.nsids, 0);
	in[16] = 255;
	rbuf_init(&r, in, sizeof(in));
	rbuf_handle(&r, &h);
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
}

static void test_oid_and_sid_round_trip(void **state)
{
	struct ofs_oid o, o2;
	struct ofs_sid s, s2;
	struct wbuf w;
	struct rbuf r;

	(void)state;
	memset(o.b, 0x5a, sizeof(o.b));
	o.b[0] = 1;
	memset(s.b, 0xa5, sizeof(s.b));
	s.b[15] = 2;
	wbuf_init(&w);
	wbuf_oid(&w, o);
	wbuf_sid(&w, s);
	assert_int_equal(w.len, 32);
	assert_memory_equal(w.data, o.b, 16);
	rbuf_init(&r, w.data, w.len);
	o2 = rbuf_oid(&r);
	s2 = rbuf_sid(&r);
	assert_int_equal(rbuf_done(&r), 0);
	assert_true(oid_eq(o, o2));
	assert_true(sid_eq(s, s2));
	/* Reading past the end yields the zero value. */
	o2 = rbuf_oid(&r);
	s2 = rbuf_sid(&r);
	assert_true(oid_is_zero(o2));
	assert_true(sid_is_zero(s2));
	assert_int_equal(rbuf_error(&r), -OFS_ECORRUPT);
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wbuf_integers_are_big_endian),
		cmocka_unit_test(test_wbuf_free_of_zeroed_wbuf_is_safe),
		cmocka_unit_test(test_wbuf_blob_and_str_carry_length_prefix),
		cmocka_unit_test(test_wbuf_str_over_u16_latches_toobig),
		cmocka_unit_test(test_wbuf_reserve_huge_latches_enomem),
		cmocka_unit_test(test_wbuf_grows_past_initial_capacity),
		cmocka_unit_test(test_wbuf_patch_u32_overwrites_in_place),
		cmocka_unit_test(test_wbuf_handle_clamps_nsids),
		cmocka_unit_test(test_rbuf_reads_big_endian),
		cmocka_unit_test(test_rbuf_short_read_latches_and_returns_zero),
		cmocka_unit_test(test_rbuf_every_width_fails_on_short_buffer),
		cmocka_unit_test(test_rbuf_fail_keeps_first_error),
		cmocka_unit_test(test_rbuf_done_rejects_trailing_bytes),
		cmocka_unit_test(test_rbuf_null_buffer_is_empty),
		cmocka_unit_test(test_rbuf_bytes_huge_length_fails_without_overflow),
		cmocka_unit_test(test_rbuf_blob_reads_length_and_bytes),
		cmocka_unit_test(test_rbuf_blob_over_max_latches_toobig),
		cmocka_unit_test(test_rbuf_blob_length_past_end_is_corrupt),
		cmocka_unit_test(test_rbuf_str_copies_and_terminates),
		cmocka_unit_test(test_rbuf_str_longer_than_out_latches_toobig),
		cmocka_unit_test(test_rbuf_str_with_nul_is_corrupt),
		cmocka_unit_test(test_rbuf_str_truncated_is_corrupt),
		cmocka_unit_test(test_handle_round_trips),
		cmocka_unit_test(test_rbuf_handle_rejects_nsids_over_max),
		cmocka_unit_test(test_oid_and_sid_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
