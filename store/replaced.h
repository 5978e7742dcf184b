/*
 * replaced.h - what recent directory-entry replacements replaced, so that
 * a create retried after its first primary died learns what it replaced.
 *
 * A put over an existing name switches the entry to the new file, and the
 * client then destroys the file it replaced. When the primary that made
 * the switch dies before it answers, the client sends the create again to
 * the next copy, which finds the new file already in place (the first
 * primary forwarded the change) and on its own could only say "present,
 * this very file": the file replaced would be left, an orphan. Every copy
 * that applies a replacement notes it here (dirdata, name, the new
 * object, the entry it replaced); the copy that finds the entry already
 * in place answers with the noted entry instead.
 *
 * In memory, a fixed number of the latest notes, per server: a note lost
 * to a restart or pushed out leaves at worst the orphan that scrub
 * reports and repair relinks or collects. Thread-safe.
 */
#ifndef OFS_REPLACED_H
#define OFS_REPLACED_H

#include <stdbool.h>

#include "lib/proto.h"

#define REPLACED_NOTES 512

struct replaced;

/* A new, empty set of notes; NULL when out of memory. */
struct replaced *replaced_new(void);
void replaced_free(struct replaced *r);

/* Note that in dirdata, name now names `now`, where it named *old. */
void replaced_note(struct replaced *r, struct ofs_oid dirdata, const char *name,
		   struct ofs_oid now, const struct ofs_dirent *old);

/* The entry that `now` replaced at (dirdata, name), if noted: true and
 * *old set; false otherwise. */
bool replaced_find(struct replaced *r, struct ofs_oid dirdata, const char *name,
		   struct ofs_oid now, struct ofs_dirent *old);

#endif
