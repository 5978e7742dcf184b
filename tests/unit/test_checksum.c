/*
 * test_checksum.c - XXH3-128 chunk digests: known answers (from
 * `xxhsum -H2`), canonical byte order, streaming equals one-shot, and the
 * chunk span of aligned, unaligned and cross-chunk ranges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/checksum.h"

/* printf '' | xxhsum -H2 ; printf 'abc' | xxhsum -H2 */
#define XXH128_EMPTY "99aa06d3014798d86001c324468d497f"
#define XXH128_ABC "06b05ab6733a618578af5f94892f3950"

static void test_checksum_empty_known_answer(void **state)
{
	char hex[OFS_DIGEST_HEX];
	struct ofs_digest d;

	(void)state;
	d = checksum_buf(NULL, 0);
	digest_to_hex(d, hex);
	assert_string_equal(hex, XXH128_EMPTY);
	d = checksum_buf("ignored", 0);
	digest_to_hex(d, hex);
	assert_string_equal(hex, XXH128_EMPTY);
}

static void test_checksum_abc_known_answer(void **state)
{
	char hex[OFS_DIGEST_HEX];
	struct ofs_digest d = checksum_buf("abc", 3);

	(void)state;
	digest_to_hex(d, hex);
	assert_string_equal(hex, XXH128_ABC);
	/* Canonical form is big-endian: the first byte is the top byte. */
	assert_int_equal(d.b[0], 0x06);
	assert_int_equal(d.b[15], 0x50);
}

static void test_digest_eq_compares_every_byte(void **state)
{
	struct ofs_digest a = checksum_buf("abc", 3);
	struct ofs_digest b = checksum_buf("abc", 3);

	(void)state;
	assert_true(digest_eq(a, b));
	for (int i = 0; i < OFS_DIGEST_LEN; i++) {
		struct ofs_digest c = a;

		c.b[i] ^= 0x80;
		assert_false(digest_eq(a, c));
	}
}

static void test_chunk_checksum_detects_flipped_bit(void **state)
{
	uint8_t buf[4096];
	struct ofs_digest a, b;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	a = checksum_buf(buf, sizeof(buf));
	buf[2000] ^= 0x01;
	b = checksum_buf(buf, sizeof(buf));
	assert_false(digest_eq(a, b));
	buf[2000] ^= 0x01;
	b = checksum_buf(buf, sizeof(buf));
	assert_true(digest_eq(a, b));
	/* A shorter buffer is a different chunk. */
	b = checksum_buf(buf, sizeof(buf) - 1);
	assert_false(digest_eq(a, b));
}

static void test_checksum_stream_equals_one_shot(void **state)
{
	static uint8_t buf[300000];
	static const size_t cuts[] = { 0, 1, 63, 64, 65, 240, 1000, 65536, 299999 };
	struct ofs_digest want, got;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i ^ (i >> 8));
	want = checksum_buf(buf, sizeof(buf));
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		struct checksum_stream *s = checksum_stream_new();

		assert_non_null(s);
		checksum_stream_update(s, buf, cuts[c]);
		checksum_stream_update(s, NULL, 0);
		checksum_stream_update(s, buf + cuts[c], sizeof(buf) - cuts[c]);
		got = checksum_stream_final(s);
		assert_true(digest_eq(want, got));
		checksum_stream_free(s);
	}
}

static void test_checksum_stream_of_nothing_is_empty_digest(void **state)
{
	struct checksum_stream *s = checksum_stream_new();
	char hex[OFS_DIGEST_HEX];

	(void)state;
	assert_non_null(s);
	digest_to_hex(checksum_stream_final(s), hex);
	assert_string_equal(hex, XXH128_EMPTY);
	checksum_stream_free(s);
	checksum_stream_free(NULL);
}

static void test_checksum_stream_abc_in_pieces(void **state)
{
	struct checksum_stream *s = checksum_stream_new();
	char hex[OFS_DIGEST_HEX];

	(void)state;
	assert_non_null(s);
	checksum_stream_update(s, "a", 1);
	checksum_stream_update(s, "bc", 2);
	digest_to_hex(checksum_stream_final(s), hex);
	assert_string_equal(hex, XXH128_ABC);
	checksum_stream_free(s);
}

static void span(uint64_t off, uint64_t len, uint32_t chunk, uint64_t want_first,
		 uint64_t want_last)
{
	uint64_t first = 0xdead, last = 0xbeef;

	checksum_chunk_span(off, len, chunk, &first, &last);
	assert_int_equal(first, want_first);
	assert_int_equal(last, want_last);
}

static void test_chunk_span_aligned_range(void **state)
{
	(void)state;
	span(0, 4096, 4096, 0, 0);
	span(4096, 4096, 4096, 1, 1);
	span(0, 3 * 4096, 4096, 0, 2);
	span(0, OFS_DEFAULT_CHUNK, OFS_DEFAULT_CHUNK, 0, 0);
	span(5ull * OFS_DEFAULT_CHUNK, 2ull * OFS_DEFAULT_CHUNK, OFS_DEFAULT_CHUNK, 5, 6);
}

static void test_chunk_span_unaligned_within_one_chunk(void **state)
{
	(void)state;
	span(1, 1, 4096, 0, 0);
	span(100, 3000, 4096, 0, 0);
	span(4095, 1, 4096, 0, 0);
	span(4096 + 17, 4096 - 17, 4096, 1, 1);
}

static void test_chunk_span_cross_chunk_write(void **state)
{
	(void)state;
	span(4095, 2, 4096, 0, 1);
	span(4000, 4096, 4096, 0, 1);
	span(4000, 8192 + 97, 4096, 0, 3);   /* last byte 12288 */
	span(4000, 8192 + 96, 4096, 0, 2);   /* last byte 12287 */
	span(1, 4096, 4096, 0, 1);
	span(OFS_DEFAULT_CHUNK - 1, OFS_DEFAULT_CHUNK + 2, OFS_DEFAULT_CHUNK, 0, 2);
}

static void test_chunk_span_far_offsets(void **state)
{
	(void)state;
	span(UINT64_C(1) << 40, 1, OFS_DEFAULT_CHUNK, UINT64_C(1) << 20, UINT64_C(1) << 20);
	span(UINT64_MAX - 9, 10, 1, UINT64_MAX - 9, UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum_empty_known_answer),
		cmocka_unit_test(test_checksum_abc_known_answer),
		cmocka_unit_test(test_digest_eq_compares_every_byte),
		cmocka_unit_test(test_chunk_checksum_detects_flipped_bit),
		cmocka_unit_test(test_checksum_stream_equals_one_shot),
		cmocka_unit_test(test_checksum_stream_of_nothing_is_empty_digest),
		cmocka_unit_test(test_checksum_stream_abc_in_pieces),
		cmocka_unit_test(test_chunk_span_aligned_range),
		cmocka_unit_test(test_chunk_span_unaligned_within_one_chunk),
		cmocka_unit_test(test_chunk_span_cross_chunk_write),
		cmocka_unit_test(test_chunk_span_far_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
