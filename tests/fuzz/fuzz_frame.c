/*
 * fuzz_frame.c - libFuzzer target for every decoder of untrusted bytes in
 * lib/: the frame header, each request body, each reply body and the list
 * readers.
 *
 * The input is read as a frame (header, credential, capability, body). The
 * body goes to proto_decode_req for the header's op and to every reply
 * decoder; the whole input also goes to every reply decoder, and, after a
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

/* The records of a stale list, as decoded. */
struct stale_fuzz {
	struct ofs_oid oids[OFS_MAX_STALE_LIST];
	char reasons[OFS_MAX_STALE_LIST][256];
	uint32_t n;
};

static int stale_collect(struct ofs_oid oid, const char *reason, void *arg)
{
	struct stale_fuzz *sf = arg;

	if (sf->n == OFS_MAX_STALE_LIST)
		return -OFS_ETOOBIG;
	sf->oids[sf->n] = oid;
	snprintf(sf->reasons[sf->n], sizeof(sf->reasons[sf->n]), "%s", reason);
	sf->n++;
	return 0;
}

/* The findings of a task status, as decoded. */
struct tf_fuzz {
	struct ofs_task_finding *f;
	uint32_t n;
};

static int tf_collect(const struct ofs_task_finding *f, void *arg)
{
	struct tf_fuzz *t = arg;

	if (t->n == OFS_MAX_TASK_FINDINGS)
		return -OFS_ETOOBIG;
	t->f[t->n++] = *f;
	return 0;
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

static void fuzz_replies(const uint8_t *b, size_t n)
{
	struct ofs_ping_reply ping;
	struct ofs_handle h;
	struct ofs_oid oid;
	struct ofs_attr *attr;
	struct ofs_write_reply wr;
	struct ofs_dirent d;
	struct ofs_list_reader lr;
	struct ofs_list_writer lw;
	bool present;
	struct wbuf w;
	int rc;

	rc = proto_decode_ping(b, n, &ping);
	check_code(rc);
	if (rc == 0) {
		wbuf_init(&w);
		proto_encode_ping(&w, &ping);
		check_same(&w, b, n);
	}

	rc = proto_decode_handle_reply(b, n, &h);
	check_code(rc);
	if (rc == 0) {
		CHECK(h.nsids <= OFS_MAX_REPLICAS);
		wbuf_init(&w);
		proto_encode_handle_reply(&w, &h);
		check_same(&w, b, n);
	}

	rc = proto_decode_oid_reply(b, n, &oid);
	check_code(rc);
	if (rc == 0) {
		wbuf_init(&w);
		proto_encode_oid_reply(&w, oid);
		check_same(&w, b, n);
	}

	attr = malloc(sizeof(*attr));
	if (attr) {
		rc = proto_decode_attr_reply(b, n, attr);
		check_code(rc);
		if (rc == 0) {
			wbuf_init(&w);
			proto_encode_attr(&w, attr);
			check_same(&w, b, n);
		}
		free(attr);
	}

	rc = proto_decode_write_reply(b, n, &wr);
	check_code(rc);
	if (rc == 0) {
		wbuf_init(&w);
		proto_encode_write_reply(&w, &wr);
		check_same(&w, b, n);
	}

	rc = proto_decode_dirent_reply(b, n, &present, &d);
	check_code(rc);
	if (rc == 0) {
		wbuf_init(&w);
		proto_encode_dirent_reply(&w, present, &d);
		check_same(&w, b, n);
	}

	rc = proto_list_open_kv(&lr, b, n);
	check_code(rc);
	if (rc == 0) {
		const uint8_t *k, *v;
		size_t kn, vn;
		uint32_t count = lr.left;
		bool more = lr.more;

		CHECK(count <= OFS_MAX_LIST);
		wbuf_init(&w);
		proto_list_begin(&lw, &w);
		while (proto_list_next_kv(&lr, &k, &kn, &v, &vn) == 1) {
			CHECK(kn <= OFS_MAX_KEY && vn <= OFS_MAX_VALUE);
			proto_list_add_kv(&lw, k, kn, v, vn);
		}
		CHECK(rbuf_error(&lr.r) == 0);
		CHECK(lw.count == count);
		proto_list_end(&lw, more);
		check_same(&w, b, n);
	}

	{
		static struct stale_fuzz sfbuf;   /* (too big to allocate per input) */
		struct stale_fuzz *sf = &sfbuf;
		bool more = false;

		sf->n = 0;
		rc = proto_decode_stale_list(b, n, stale_collect, sf, &more);
		check_code(rc);
		if (rc == 0) {
			CHECK(sf->n <= OFS_MAX_STALE_LIST);
			wbuf_init(&w);
			proto_encode_stale_list(&w, sf->oids, sf->reasons, sf->n, more);
			check_same(&w, b, n);
		}
	}

	{
		static struct ofs_task_finding tfs[OFS_MAX_TASK_FINDINGS];
		struct tf_fuzz tf = { .f = tfs };
		struct ofs_task_status tst;
		struct ofs_summary sm;

		rc = proto_decode_task_status(b, n, &tst, tf_collect, &tf);
		check_code(rc);
		if (rc == 0) {
			wbuf_init(&w);
			proto_encode_task_status(&w, &tst, tfs, tf.n);
			check_same(&w, b, n);
		}
		rc = proto_decode_summary(b, n, &sm);
		check_code(rc);
		if (rc == 0) {
			wbuf_init(&w);
			proto_encode_summary(&w, &sm);
			check_same(&w, b, n);
		}
		{
			struct ofs_stop_reply *sr = malloc(sizeof(*sr));
			if (sr) {
				rc = proto_decode_stop_reply(b, n, sr);
				check_code(rc);
				if (rc == 0) {
					wbuf_init(&w);
					proto_encode_stop_reply(&w, sr);
					check_same(&w, b, n);
				}
				free(sr);
			}
		}
		{
			struct ofs_stats st;
			rc = proto_decode_stats(b, n, &st);
			check_code(rc);
			if (rc == 0) {
				wbuf_init(&w);
				proto_encode_stats(&w, &st);
				check_same(&w, b, n);
			}
		}
		{
			struct ofs_digest dg;
			const uint8_t *notes;
			uint64_t version;
			size_t nn;
			rc = proto_decode_changes(b, n, &version, &dg, &notes, &nn);
			check_code(rc);
			if (rc == 0) {
				CHECK(nn <= OFS_MAX_IO);
				wbuf_init(&w);
				proto_encode_changes(&w, version, dg, notes, nn);
				check_same(&w, b, n);
			}
		}
		{
			struct ofs_fetch_reply fr;
			rc = proto_decode_fetch_reply(b, n, &fr);
			check_code(rc);
			if (rc == 0) {
				wbuf_init(&w);
				proto_encode_fetch_reply(&w, &fr);
				check_same(&w, b, n);
			}
		}
	}

	rc = proto_list_open_dirent(&lr, b, n);
	check_code(rc);
	if (rc == 0) {
		char name[OFS_NAME_MAX + 1];
		uint32_t count = lr.left;
		bool more = lr.more;

		CHECK(count <= OFS_MAX_LIST);
		wbuf_init(&w);
		proto_list_begin(&lw, &w);
		while (proto_list_next_dirent(&lr, name, &d) == 1) {
			CHECK(ofs_name_valid(name));
			proto_list_add_dirent(&lw, name, &d);
		}
		CHECK(rbuf_error(&lr.r) == 0);
		CHECK(lw.count == count);
		proto_list_end(&lw, more);
		check_same(&w, b, n);
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
