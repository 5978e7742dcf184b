/*
 * rules.h - the rules of back references, as pure functions (no I/O: the
 * caller gathers the facts, from its store or by asking servers).
 *
 * Every object but the root has one owner, and two references join them:
 * the owner's forward pointer (a metafile's stripe names a dfile, a
 * directory's layout names a dirdata, a dirdata's entry names a metafile
 * or directory) and the object's back reference (owner, stripe, entry
 * name). Lustre's LFSCK checks a namespace by pairing the two; so does
 * OFS's namespace and layout check (scrub, and scrub --metadata-only):
 *   - from the owner's side, each forward pointer is judged against the
 *     object it names (br_judge_pointer);
 *   - from the object's side, its back reference is judged by what the
 *     owner it names says about it (br_judge_owner; the owner answers
 *     with br_points).
 * Each verdict names the one fix that is proven right; when the facts do
 * not prove one (a server did not answer, a create may be in progress),
 * the verdict is to wait.
 */
#ifndef OFS_BACKREF_RULES_H
#define OFS_BACKREF_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/proto.h"

/* What an owner says of an object (the POINTS answer): it does not point
 * at it; points at it where the object's back reference says; points at
 * it under another stripe or entry name; is still being built (a
 * metafile or directory whose layout is not set: a put or mkdir in
 * progress, or one whose client died - the caller weighs its age). */
enum { POINTS_NO = 0, POINTS_YES = 1, POINTS_ELSEWHERE = 2, POINTS_BUILDING = 3 };

/* What a forward pointer expects of the object it names. */
struct br_expect {
	struct ofs_oid owner;          /* its back reference's owner */
	long stripe;                   /* ... stripe (-1: not judged) */
	const char *name;              /* ... entry name (NULL: not judged) */
	int type;                      /* the object's type (-1: not judged) */
};

/* Part i of owner (OID owner_oid; a metafile's stripe i: a dfile that
 * names it at stripe i; a directory's dirdata i: a dirdata that names
 * it). -EINVAL for another type or no such part. */
int br_expect_part(const struct ofs_attr *owner, struct ofs_oid owner_oid, uint16_t i,
		   struct br_expect *e);
/* An entry `name` -> d of a dirdata whose back reference names its
 * directory: an object of d's type that names that directory and name. */
void br_expect_entry(const struct ofs_attr *dirdata, const char *name,
		     const struct ofs_dirent *d, struct br_expect *e);

/* Where the object a pointer names was found. */
enum br_where {
	BR_FOUND,                      /* a server holds it (its record below) */
	BR_NOWHERE,                    /* every one of its servers said: not here */
	BR_UNKNOWN,                    /* a server did not answer */
};

/* What an owner said about an object (POINTS, asked of its servers). */
struct br_says {
	bool held;                     /* a server holding the owner answered */
	bool quiet;                    /* some server did not answer */
	uint8_t ans;                   /* POINTS_*, when held */
};

enum br_pointer_verdict {
	BRP_OK,            /* the object's back reference names this owner, slot
	                      and type */
	BRP_WAIT,          /* no verdict: a server was silent */
	BRP_DANGLING,      /* dangling_pointer: nobody holds the object; fix: a
	                      dangling entry is removed, a lost dirdata made
	                      again empty, a lost stripe left (its bytes are
	                      gone: never truncated silently) */
	BRP_ASK_OTHER,     /* its back reference names another owner: ask that
	                      one (POINTS) and judge again with its answer */
	BRP_SECOND_OWNER,  /* multiple_owners: the owner its back reference
	                      names points at it too, and keeps it; fix: this
	                      owner gets its own copy of the part (an entry:
	                      the entry goes) */
	BRP_BACKREF,       /* backref_mismatch: the back reference is wrong;
	                      fix: rewrite it from this pointer */
	BRP_TYPE,          /* backref_mismatch: the pointer says another type
	                      than the object's record; fix: rewrite the entry
	                      from the record */
};

/*
 * Judge a forward pointer. where: where the object is; br, type: its
 * back reference and type (when found); other: what the owner its back
 * reference names says about it (NULL: not asked yet - the verdict may be
 * BRP_ASK_OTHER).
 */
enum br_pointer_verdict br_judge_pointer(const struct br_expect *e, enum br_where where,
					 const struct ofs_backref *br, uint8_t type,
					 const struct br_says *other);

enum br_owner_verdict {
	BRO_OK,            /* its owner points at it (or at it elsewhere: that
	                      is the owner's pointer's to judge) */
	BRO_SKIP,          /* not judged: the root, or an object being built
	                      within the grace */
	BRO_ASK,           /* ask the owner (POINTS) and judge again with its
	                      answer */
	BRO_WAIT,          /* no verdict: nobody holding the owner answered and
	                      some server was silent */
	BRO_OWNER_UNFINISHED, /* orphan: its owner was never finished (no
	                      layout, older than the grace) */
	BRO_UNFINISHED,    /* orphan: it was never finished itself */
	BRO_NOT_POINTED,   /* orphan: its owner holds no pointer to it; fix:
	                      point the owner at it again (relink) */
	BRO_NO_OWNER,      /* orphan: its owner exists nowhere; fix: move it to
	                      /lost+found */
};

/* A metafile or directory whose layout is not set: a put or mkdir in
 * progress, or abandoned by its client. */
bool br_building(const struct ofs_attr *a);
/* Judge an object's back reference by what its owner says (owner NULL:
 * not asked yet - the verdict may be BRO_ASK). young: it changed within
 * the orphan grace. */
enum br_owner_verdict br_judge_owner(const struct ofs_attr *a, bool young,
				     const struct br_says *owner);

/* The owner's side (POINTS) for a metafile or directory owner: does a
 * point at child, and at slot (a stripe; -1: any)? POINTS_BUILDING when
 * its layout is not set; for a directory, POINTS_NO means: not one of
 * its dirdata (an entry is looked for in them by the caller). */
uint8_t br_points(const struct ofs_attr *a, struct ofs_oid child, long slot);

#endif
