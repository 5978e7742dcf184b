/*
 * tmpstore.h - a real store in a temporary folder, for the unit tests that
 * need one (the service, the access checks, the change log, gossip, the
 * move step), and a real job database likewise (the job store, the
 * runner, submit's options): made fresh for each test, removed whole
 * after it.
 */
#ifndef OFS_TEST_TMPSTORE_H
#define OFS_TEST_TMPSTORE_H

#include <stdint.h>

#include "lib/oid.h"

struct store;
struct pbj_db;

struct tmpstore {
	char dir[64];                /* the temporary folder */
	char data[96];               /* the store's data dir, inside it */
	struct store *s;             /* open, read-write */
	struct ofs_sid sid;          /* its server's SID */
};

/* Make and open a store of chunk-byte chunks under a new folder named
 * after name ("/tmp/ofs-test-NAME.XXXXXX"). 0, or -errno (nothing is left
 * behind then). */
int tmpstore_make(const char *name, uint32_t chunk, struct tmpstore *t);

/* Close the store (when still open) and remove the folder whole. */
void tmpstore_remove(struct tmpstore *t);

struct tmpdb {
	char dir[64];                /* the temporary folder */
	char path[96];               /* the database file, inside it */
	struct pbj_db *db;           /* open */
};

/* Make and open a job database under a new folder named after name. 0,
 * or -errno (nothing is left behind then). */
int tmpdb_make(const char *name, struct tmpdb *t);

/* Close the database (when still open) and remove the folder whole. */
void tmpdb_remove(struct tmpdb *t);

#endif
