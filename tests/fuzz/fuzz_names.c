/*
 * fuzz_names.c - libFuzzer target for the names the store reads back from
 * its own folders (store/bstream.h): DATA/incoming/OIDHEX and
 * DATA/quarantine/OIDHEX.SECONDS.vVERSION.TAG[.N].
 *
 * The input, up to a NUL byte (a name holds none), is a name. Each has
 * one spelling, so a name that decodes encodes back to itself; a mismatch
 * aborts, as does any sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/oid.h"
#include "store/bstream.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), again[4096], hex[OFS_OID_HEX];
	struct bstream_qname q;
	struct ofs_oid oid;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	if (bstream_incoming_name_decode(name, &oid) == 0) {
		oid_to_hex(oid, hex);
		CHECK(strcmp(hex, name) == 0);
	}
	if (bstream_quarantine_name_decode(name, &q) == 0) {
		CHECK(q.seconds >= 0 && q.rest > name && q.rest < name + strlen(name));
		CHECK(bstream_quarantine_name(&q, again, sizeof(again)) == 0);
		CHECK(strcmp(again, name) == 0);
	}
	free(name);
	return 0;
}
