/*
 * fuzz_frame.c - libFuzzer target for every decoder of untrusted bytes in
 * lib/: the frame header, each request body, each reply body and the list
 * readers.
 *
 * The input is read as a frame (header, credential, capability, body). The
 * body goes to proto_decode_req for the header's op and to the decoder
 * of every reply shape (op_reply_check); the whole input also goes to
 * every reply shape, and, after a
 * one-byte op selector, to proto_decode_req, so the fuzzer reaches the body
 * decoders without first having to learn the header.
 *
 * Every encoding is canonical, so whatever decodes must re-encode to
 * exactly the bytes it came from; a mismatch aborts, as does any sanitizer
 * report.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "lib/wire.h"
#include "tests/fuzz/fuzz_check.h"

/* w holds exactly the n bytes at b. */
static void check_same(struct wbuf *w, const uint8_t *b, size_t n)
{
	CHECK(wbuf_error(w) == 0);
	CHECK(w->len == n);
	CHECK(n == 0 || memcmp(w->data, b, n) == 0);
	wbuf_free(w);
}

/* A failing decoder returns one of the codes proto.h lists. */
static void check_code(int rc)
{
	CHECK(rc == 0 || rc == -OFS_ECORRUPT || rc == -OFS_ETOOBIG ||
	      rc == -OFS_ENAME || rc == -OFS_EUNKNOWNOP);
}

static void fuzz_req(uint16_t op, const uint8_t *b, size_t n)
{
	struct ofs_req q, q2;
	struct wbuf w;
	int rc;

	rc = proto_decode_req(op, b, n, &q);
	check_code(rc);
	if (rc)
		return;
	CHECK(q.op == op);
	CHECK(q.max <= OFS_MAX_LIST);
	CHECK(q.attr.nparts <= OFS_MAX_STRIPES);
	CHECK(q.attr.nsids <= OFS_MAX_REPLICAS);
	CHECK(q.attr.nstale <= OFS_MAX_REPLICAS);
	CHECK(q.dirent.handle.nsids <= OFS_MAX_REPLICAS);
	CHECK(q.key_len <= OFS_MAX_KEY);
	if (op == OFS_OP_SERVERS) {
		/* The body is checked, then kept raw for the handler. */
		struct ofs_server *e = NULL;
		size_t cnt = 0;
		CHECK(q.data == b && q.data_len == n && q.nservers <= OFS_MAX_SERVERS);
		CHECK(proto_decode_servers(q.data, q.data_len, false, NULL, &e, &cnt) == 0);
		CHECK(cnt == q.nservers);
		q.servers = e;
		wbuf_init(&w);
		CHECK(proto_encode_req(&w, &q) == 0);
		check_same(&w, b, n);
		free(e);
		return;
	}
	CHECK(q.data_len <= OFS_MAX_IO);
	wbuf_init(&w);
	CHECK(proto_encode_req(&w, &q) == 0);
	CHECK(proto_decode_req(op, w.data, w.len, &q2) == 0);
	check_same(&w, b, n);
}

/* b as a reply of every shape (op_reply_check: the reply codec by the
 * rows' reply column, lib/optable.h); the count a shape of n entries
 * takes (its request's) from the first byte. */
static void fuzz_replies(const uint8_t *b, size_t n)
{
	for (uint8_t rp = RP_NONE; rp < RP_MAX_; rp++) {
		struct wbuf w;
		int rc;

		wbuf_init(&w);
		rc = op_reply_check(rp, b, n, n ? b[0] % 9 : 0, &w);
		check_code(rc);
		if (rc == 0)
			check_same(&w, b, n);
		else
			wbuf_free(&w);
	}
}

static void fuzz_frame(const uint8_t *data, size_t size)
{
	struct ofs_frame_hdr h, h2;
	uint8_t again[OFS_FRAME_HDR];
	const uint8_t *body;
	size_t left, body_len;
	int rc;

	if (size < OFS_FRAME_HDR)
		return;
	rc = frame_decode_hdr(data, &h);
	CHECK(rc == 0 || rc == -OFS_EPROTO || rc == -OFS_EVERSION ||
	      rc == -OFS_ETOOBIG);
	if (rc)
		return;
	CHECK(h.version == OFS_PROTO_VERSION);
	CHECK(h.cred_len <= OFS_MAX_CRED && h.cap_len <= OFS_MAX_CAP &&
	      h.body_len <= OFS_MAX_BODY);
	CHECK(frame_payload_len(&h) <= OFS_FRAME_MAX - OFS_FRAME_HDR);
	CHECK((h.op & OFS_OP_RESPONSE) || h.status == 0);
	frame_encode_hdr(&h, again);
	CHECK(memcmp(again, data, OFS_FRAME_HDR) == 0);
	CHECK(frame_decode_hdr(again, &h2) == 0);

	/* The body is what follows the credential and capability, cut to
	 * what the input holds, as a reader with a short frame would see. */
	left = size - OFS_FRAME_HDR;
	if ((size_t)h.cred_len + h.cap_len > left)
		return;
	body = data + OFS_FRAME_HDR + h.cred_len + h.cap_len;
	left -= (size_t)h.cred_len + h.cap_len;
	body_len = h.body_len < left ? h.body_len : left;

	if (!(h.op & OFS_OP_RESPONSE))
		fuzz_req(h.op, body, body_len);
	fuzz_replies(body, body_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_frame(data, size);
	fuzz_replies(data, size);
	if (size >= 1)
		fuzz_req((uint16_t)(data[0] % (OFS_OP_MAX + 1)), data + 1, size - 1);
	return 0;
}
