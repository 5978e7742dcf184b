/*
 * fuzz_crl.c - libFuzzer target for the revocation list's decoders
 * (lib/crl.h): the file's text (CADIR/revoked, identity/revoked) and the
 * wire form a peer sends (REVOKED).
 *
 * The wire form is canonical: what decodes encodes back to its bytes. The
 * text is read leniently (empty lines, a last line without its newline,
 * any order, repeats), so what decodes must be the input's non-empty
 * lines, each spelt as crl_serial_hex spells it. A mismatch aborts, as
 * does any sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crl.h"
#include "lib/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

static void fuzz_text(const char *text, size_t len)
{
	struct crl_serial *s = NULL;
	size_t n = 0, pos = 0, i = 0;

	if (crl_text_decode(text, len, &s, &n) != 0)
		return;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - text - pos) : len - pos;
		if (ll) {
			char hex[2 * CRL_SERIAL_MAX + 1];
			CHECK(i < n);
			crl_serial_hex(&s[i++], hex);
			CHECK(strlen(hex) == ll && memcmp(hex, text + pos, ll) == 0);
		}
		pos += ll + 1;
	}
	CHECK(i == n);
	free(s);
}

static void fuzz_wire(const uint8_t *b, size_t len)
{
	struct crl_serial *s = NULL;
	struct wbuf w;
	size_t n = 0;

	if (crl_decode(b, len, &s, &n) != 0)
		return;
	CHECK(n <= CRL_MAX);
	wbuf_init(&w);
	crl_encode_serials(&w, s, n);
	CHECK(wbuf_error(&w) == 0 && w.len == len && memcmp(w.data, b, len) == 0);
	wbuf_free(&w);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_text((const char *)data, size);
	fuzz_wire(data, size);
	return 0;
}
