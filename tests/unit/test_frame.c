/*
 * test_frame.c - the 28-byte frame header: exact layout, round trip, and
 * every header a peer must not be able to slip past frame_decode_hdr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/timefmt.h"

static struct ofs_frame_hdr sample_req(void)
{
	struct ofs_frame_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = OFS_PROTO_VERSION;
	h.op = OFS_OP_WRITE;
	h.reqid = UINT64_C(0x0102030405060708);
	h.status = 0;
	h.cred_len = 0x0a0b;
	h.cap_len = 0x0c0d;
	h.body_len = 0x00112233;
	return h;
}

static void assert_hdr_equal(const struct ofs_frame_hdr *a, const struct ofs_frame_hdr *b)
{
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->reqid, b->reqid);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->cred_len, b->cred_len);
	assert_int_equal(a->cap_len, b->cap_len);
	assert_int_equal(a->body_len, b->body_len);
}

/* Decode in and check it fails with want, leaving *out untouched. */
static void assert_hdr_rejected(const uint8_t in[OFS_FRAME_HDR], int want)
{
	struct ofs_frame_hdr out;

	memset(&out, 0x5c, sizeof(out));
	assert_int_equal(frame_decode_hdr(in, &out), want);
	assert_int_equal(out.version, 0x5c5c);
	assert_int_equal(out.body_len, 0x5c5c5c5c);
}

static void test_frame_encode_hdr_exact_layout(void **state)
{
	static const uint8_t want[OFS_FRAME_HDR] = {
		'O', 'F', 'S', '1',
		0x00, 0x01,
		0x00, OFS_OP_WRITE,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x00, 0x00, 0x00, 0x00,
		0x0a, 0x0b,
		0x0c, 0x0d,
		0x00, 0x11, 0x22, 0x33,
	};
	struct ofs_frame_hdr h = sample_req();
	uint8_t out[OFS_FRAME_HDR];

	(void)state;
	frame_encode_hdr(&h, out);
	assert_memory_equal(out, want, OFS_FRAME_HDR);
}

static void test_frame_hdr_round_trips_request(void **state)
{
	struct ofs_frame_hdr h = sample_req(), g;
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.cred_len = 17;
	h.cap_len = 0;
	h.body_len = 4096;
	frame_encode_hdr(&h, buf);
	memset(&g, 0, sizeof(g));
	assert_int_equal(frame_decode_hdr(buf, &g), 0);
	assert_hdr_equal(&g, &h);
	assert_int_equal(frame_payload_len(&g), 17 + 4096);
}

static void test_frame_hdr_round_trips_response_with_negative_status(void **state)
{
	struct ofs_frame_hdr h = sample_req(), g;
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.op = OFS_OP_READ | OFS_OP_RESPONSE;
	h.status = -OFS_ECHECKSUM;
	h.cred_len = 0;
	h.cap_len = 0;
	h.body_len = 0;
	frame_encode_hdr(&h, buf);
	assert_int_equal(buf[16], 0xff);   /* two's complement, big-endian */
	assert_int_equal(frame_decode_hdr(buf, &g), 0);
	assert_hdr_equal(&g, &h);
	assert_int_equal(g.status, -OFS_ECHECKSUM);
	assert_int_equal(frame_payload_len(&g), 0);
}

static void test_frame_hdr_accepts_every_limit_exactly(void **state)
{
	struct ofs_frame_hdr h = sample_req(), g;
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.cred_len = OFS_MAX_CRED;
	h.cap_len = OFS_MAX_CAP;
	h.body_len = OFS_MAX_BODY;
	frame_encode_hdr(&h, buf);
	assert_int_equal(frame_decode_hdr(buf, &g), 0);
	assert_int_equal(frame_payload_len(&g),
			 (size_t)OFS_FRAME_MAX - OFS_FRAME_HDR);
}

static void test_frame_rejects_wrong_magic(void **state)
{
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	for (int i = 0; i < 4; i++) {
		frame_encode_hdr(&h, buf);
		buf[i] ^= 0x01;
		assert_hdr_rejected(buf, -OFS_EPROTO);
	}
	frame_encode_hdr(&h, buf);
	memcpy(buf, "1SFO", 4);   /* byte-swapped */
	assert_hdr_rejected(buf, -OFS_EPROTO);
}

static void test_frame_rejects_wrong_version(void **state)
{
	static const uint16_t bad[] = { 0, 2, 0x0100, 0xffff };
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.version = bad[i];
		frame_encode_hdr(&h, buf);
		assert_hdr_rejected(buf, -OFS_EVERSION);
	}
}

static void test_frame_rejects_request_with_nonzero_status(void **state)
{
	static const int32_t bad[] = { 1, -1, -OFS_ECORRUPT, INT32_MIN, INT32_MAX };
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.status = bad[i];
		frame_encode_hdr(&h, buf);
		assert_hdr_rejected(buf, -OFS_EPROTO);
	}
}

static void test_frame_rejects_cred_over_limit(void **state)
{
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.cap_len = 0;
	h.body_len = 0;
	h.cred_len = OFS_MAX_CRED + 1;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
	h.cred_len = UINT16_MAX;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
}

static void test_frame_rejects_cap_over_limit(void **state)
{
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.cred_len = 0;
	h.body_len = 0;
	h.cap_len = OFS_MAX_CAP + 1;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
	h.cap_len = UINT16_MAX;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
}

static void test_frame_rejects_body_over_limit(void **state)
{
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.cred_len = 0;
	h.cap_len = 0;
	h.body_len = OFS_MAX_BODY + 1;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
	h.body_len = UINT32_MAX;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
	/* A response is held to the same limit. */
	h.op |= OFS_OP_RESPONSE;
	frame_encode_hdr(&h, buf);
	assert_hdr_rejected(buf, -OFS_ETOOBIG);
}

static void test_frame_magic_checked_before_version(void **state)
{
	struct ofs_frame_hdr h = sample_req();
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	h.version = 9;
	h.body_len = UINT32_MAX;
	frame_encode_hdr(&h, buf);
	buf[0] = 'X';
	assert_hdr_rejected(buf, -OFS_EPROTO);
}

static void test_frame_does_not_judge_op(void **state)
{
	struct ofs_frame_hdr h = sample_req(), g;
	uint8_t buf[OFS_FRAME_HDR];

	(void)state;
	/* Unknown operations are proto's business, not the header's. */
	h.op = 0x7fff;
	frame_encode_hdr(&h, buf);
	assert_int_equal(frame_decode_hdr(buf, &g), 0);
	assert_int_equal(g.op, 0x7fff);
	assert_string_equal(ofs_op_name(g.op), "unknown");
}

/* A deadline in the credential slot: its exact bytes, the round trip,
 * and every other credential ignored (as an old server ignores ours). */
static void test_frame_deadline_round_trips_and_ignores_others(void **state)
{
	uint8_t b[FRAME_DEADLINE_LEN], want[FRAME_DEADLINE_LEN] = { 'D', 1, 0, 0, 1, 0x8c, 0x2d,
								     0x3e, 0x4f, 0x50 };
	uint64_t ms = 0;

	(void)state;
	frame_deadline_encode(0x18c2d3e4f50ull, b);
	assert_memory_equal(b, want, sizeof(b));
	assert_int_equal(frame_deadline_decode(b, sizeof(b), &ms), 0);
	assert_int_equal(ms, 0x18c2d3e4f50ull);
	assert_int_equal(frame_deadline_decode(NULL, 0, &ms), -ENOENT);
	assert_int_equal(frame_deadline_decode(b, sizeof(b) - 1, &ms), -ENOENT);
	b[1] = 2;                                    /* another version */
	assert_int_equal(frame_deadline_decode(b, sizeof(b), &ms), -ENOENT);
	b[1] = 1;
	b[0] = 'X';                                  /* another kind */
	assert_int_equal(frame_deadline_decode(b, sizeof(b), &ms), -ENOENT);
	frame_deadline_encode(0, b);                 /* none */
	assert_int_equal(frame_deadline_decode(b, sizeof(b), &ms), -ENOENT);
	assert_true(time_now_ms() > 1700000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_deadline_round_trips_and_ignores_others),
		cmocka_unit_test(test_frame_encode_hdr_exact_layout),
		cmocka_unit_test(test_frame_hdr_round_trips_request),
		cmocka_unit_test(test_frame_hdr_round_trips_response_with_negative_status),
		cmocka_unit_test(test_frame_hdr_accepts_every_limit_exactly),
		cmocka_unit_test(test_frame_rejects_wrong_magic),
		cmocka_unit_test(test_frame_rejects_wrong_version),
		cmocka_unit_test(test_frame_rejects_request_with_nonzero_status),
		cmocka_unit_test(test_frame_rejects_cred_over_limit),
		cmocka_unit_test(test_frame_rejects_cap_over_limit),
		cmocka_unit_test(test_frame_rejects_body_over_limit),
		cmocka_unit_test(test_frame_magic_checked_before_version),
		cmocka_unit_test(test_frame_does_not_judge_op),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
