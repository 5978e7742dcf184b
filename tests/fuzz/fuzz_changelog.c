/*
 * fuzz_changelog.c - libFuzzer target for the change log's decoders: one
 * note as stored under KV_CHANGES (rec_decode_note), and a list of notes
 * as a CHANGES reply carries it to the copy that replays it
 * (changelog_decode, which changelog_apply runs before it writes).
 *
 * The input is since (u64 BE), upto (u64 BE), then the list; the list
 * alone also goes to rec_decode_note. Both encodings are canonical: a
 * note that decodes re-encodes to its bytes, and a list that decodes
 * holds exactly versions since+1..upto and re-encodes (count, then each
 * version and note) to its bytes. A mismatch aborts, as does any
 * sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/wire.h"
#include "store/changelog.h"
#include "store/records.h"
#include "tests/fuzz/fuzz_check.h"

struct again {
	struct wbuf w;                   /* the list, encoded again */
	uint64_t next;                   /* the version expected next */
	uint64_t n;                      /* notes seen */
};

static int collect(uint64_t version, const struct rec_note *n, void *arg)
{
	struct again *ag = arg;

	CHECK(version == ag->next);
	ag->next++;
	ag->n++;
	wbuf_u64(&ag->w, version);
	CHECK(rec_encode_note(&ag->w, n) == 0);
	return 0;
}

static void fuzz_note(const uint8_t *b, size_t n)
{
	struct rec_note note;
	struct wbuf w;

	if (rec_decode_note(b, n, &note) != 0)
		return;
	wbuf_init(&w);
	CHECK(rec_encode_note(&w, &note) == 0);
	CHECK(w.len == n && memcmp(w.data, b, n) == 0);
	wbuf_free(&w);
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct again ag;
	uint64_t since, upto;
	const uint8_t *p;
	size_t n;
	int rc;

	fuzz_note(data, size);
	if (size < 16)
		return 0;
	since = be64(data);
	upto = be64(data + 8);
	p = data + 16;
	n = size - 16;
	fuzz_note(p, n);
	memset(&ag, 0, sizeof(ag));
	wbuf_init(&ag.w);
	ag.next = since + 1;
	wbuf_u32(&ag.w, 0);
	rc = changelog_decode(p, n, since, upto, collect, &ag);
	CHECK(rc == 0 || rc == -OFS_ECORRUPT);
	CHECK(rc == changelog_decode(p, n, since, upto, NULL, NULL));   /* (check only) */
	if (rc == 0) {
		CHECK(upto >= since && ag.n == upto - since);
		wbuf_patch_u32(&ag.w, 0, (uint32_t)ag.n);
		CHECK(wbuf_error(&ag.w) == 0);
		CHECK(ag.w.len == n && memcmp(ag.w.data, p, n) == 0);
	}
	wbuf_free(&ag.w);
	return 0;
}
