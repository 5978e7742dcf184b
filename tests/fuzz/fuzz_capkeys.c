/*
 * fuzz_capkeys.c - libFuzzer target for the capability keys' decoders
 * (lib/cap.h): the key file (identity/cap.key, CADIR/cap.key), the wire
 * form of a key set (CAPKEYS) and of a pull.
 *
 * The wire forms are canonical: what decodes encodes back to its bytes.
 * The key file is what cap_keys_format writes, read back: it must format
 * back to the input (whose last newline may be missing). A mismatch
 * aborts, as does any sanitizer report.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cap.h"
#include "lib/wire.h"
#include "tests/fuzz/fuzz_check.h"

static void fuzz_file(const char *text, size_t len)
{
	struct cap_key keys[CAP_MAX_KEYS];
	char again[CAP_KEYS_TEXT_MAX];
	size_t n, m;

	if (cap_keys_parse(text, len, keys, &n) != 0)
		return;
	CHECK(n >= 1 && n <= CAP_MAX_KEYS);
	for (size_t i = 0; i < n; i++)
		CHECK(keys[i].id != 0);
	m = cap_keys_format(keys, n, again);
	CHECK(m == strlen(again));
	CHECK(m == len || (m == len + 1 && again[len] == '\n'));
	CHECK(memcmp(again, text, len) == 0);
}

static void fuzz_wire(const uint8_t *b, size_t len)
{
	struct cap_key keys[CAP_MAX_KEYS];
	struct wbuf w;
	uint32_t held;
	size_t n;

	if (cap_keys_decode(b, len, keys, &n) == 0) {
		CHECK(n >= 1 && n <= CAP_MAX_KEYS);
		wbuf_init(&w);
		cap_keys_encode(&w, keys, n);
		CHECK(wbuf_error(&w) == 0 && w.len == len && memcmp(w.data, b, len) == 0);
		wbuf_free(&w);
	}
	if (cap_keys_pull_decode(b, len, &held)) {
		wbuf_init(&w);
		cap_keys_pull_encode(&w, held);
		CHECK(wbuf_error(&w) == 0 && w.len == len && memcmp(w.data, b, len) == 0);
		wbuf_free(&w);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file((const char *)data, size);
	fuzz_wire(data, size);
	return 0;
}
