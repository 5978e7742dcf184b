/*
 * removed.h - which objects were removed here lately, so that a copy
 * fetched meanwhile is not installed after its removal.
 *
 * A copy that a catch-up or a repair fetches from another server is
 * installed here when it has arrived whole and its source still holds it
 * as fetched. A client's remove that reaches the servers after that last
 * look - and reaches this one while the copy is still incoming, where
 * there is nothing yet to remove - would be undone by the install: a copy
 * that only this server holds, which the namespace check reports as an
 * orphan. So every remove applied here (of an object held here or not)
 * is noted with a sequence number, and an install refuses (-EAGAIN: the
 * copy is fetched again, or found removed everywhere) when its object was
 * removed after its fetch began.
 *
 * In memory, the latest REMOVED_NOTES removals: an install that began
 * before the oldest note still kept cannot tell and refuses too; a
 * restart drops every incoming copy anyway. Thread-safe.
 */
#ifndef OFS_REMOVED_H
#define OFS_REMOVED_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/oid.h"

#define REMOVED_NOTES 4096

struct removed;

/* A new, empty set of notes; NULL when out of memory. */
struct removed *removed_new(void);
void removed_free(struct removed *r);

/* Note that oid was removed here now. */
void removed_note(struct removed *r, struct ofs_oid oid);
/* The sequence number of the latest note (0: none yet): taken when a
 * fetch begins, before it looks at the object. */
uint64_t removed_seq(struct removed *r);
/* Was oid removed after `since` (a removed_seq), or at any time the notes
 * kept remember (a remove forwarded here just before a fetch began, while
 * its source had not had it yet)? True also when notes after `since`
 * were pushed out (it cannot tell). */
bool removed_since(struct removed *r, struct ofs_oid oid, uint64_t since);

#endif
