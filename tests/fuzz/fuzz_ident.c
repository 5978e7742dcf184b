/*
 * fuzz_ident.c - libFuzzer target for the certificate identity decoder
 * (lib/ident.c): the bytes of a subjectAltName URI, which come from a
 * peer's certificate.
 *
 * Whatever decodes must name a role, and encode back to exactly the bytes
 * it came from (one spelling per identity); a mismatch aborts, as does
 * any sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ident.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ident id;
	char buf[IDENT_URI_MAX];

	if (ident_decode((const char *)data, size, &id) != 0)
		return 0;
	if (id.role == IDENT_NONE || ident_encode(&id, buf) != 0 || strlen(buf) != size ||
	    memcmp(buf, data, size) != 0) {
		fprintf(stderr, "fuzz_ident: '%.*s' does not encode back\n", (int)size, data);
		abort();
	}
	return 0;
}
