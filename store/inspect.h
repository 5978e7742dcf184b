/*
 * inspect.h - one object as stored, for operators and tests
 * (`ofs-server inspect`): type, version, size, byte-stream path, chunk
 * digests, back references, replica and stale SIDs.
 */
#ifndef OFS_INSPECT_H
#define OFS_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "store/store.h"

/* Print oid's record to out, as text or as one JSON document. Returns 0,
 * -ENOENT (no such object), or another store error. */
int inspect_object(struct store *s, struct ofs_oid oid, bool json, FILE *out);

#endif
