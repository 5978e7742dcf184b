/*
 * fuzz_cap.c - libFuzzer target for the capability decoder (lib/cap.c):
 * the bytes a client presents with a data request.
 *
 * Whatever decodes must re-encode to exactly the bytes it came from (one
 * spelling per capability, so the MAC covers what is checked), and its
 * check under a key must not accept it unless its MAC was made with that
 * key - a fuzzer cannot find one, so any acceptance aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ofs_cap c;
	struct cap_key k = { .id = 1 };
	struct wbuf w;

	if (cap_decode(data, size, &c) != 0)
		return 0;
	wbuf_init(&w);
	cap_encode(&w, &c);
	if (wbuf_error(&w) || w.len != size || memcmp(w.data, data, size) != 0) {
		fprintf(stderr, "fuzz_cap: a capability that does not encode back\n");
		abort();
	}
	wbuf_free(&w);
	memset(k.key, 0x5a, sizeof(k.key));
	if (cap_check(&c, &k, 1, c.fpr, c.oids[0], c.ops, 0) == 0) {
		fprintf(stderr, "fuzz_cap: a capability the fuzzer made was accepted\n");
		abort();
	}
	return 0;
}
