/*
 * reconcile.h - when every copy of an object missed something.
 *
 * Normally a copy marked behind is caught up from a current copy
 * (recover.h, repair.h). When no copy is current - each was marked behind
 * by a primary that could not reach it, and the ones that were current
 * are gone - the copies are reconciled, never abandoned, by the lead: the
 * present copy with the smallest SID (one server decides, so two do not
 * reconcile one object two ways). The lead makes its own copy the
 * reconciled one and drops its mark; the other copies then catch up from
 * it the usual way. While no copy is current no copy takes a client
 * change (each answers OFS_EBEHIND), so the copies hold still meanwhile.
 *
 *  - A byte stream, a metafile or a directory record: by version. Every
 *    copy is re-read (VERIFY); the newest version among those that verify
 *    wins. No version is invented: the winner is a copy that exists. Two
 *    copies that verify at the newest version and differ are a conflict
 *    (`replica_conflict`): nothing changes.
 *  - A dirdata (directory entries): by entry. Names on which the copies
 *    agree stay. For a name the copies disagree on (some lack it, or they
 *    name different objects), each object named is asked for: an entry is
 *    kept when its object is held by at least its write confidence of its
 *    copies - an acknowledged create leaves at least that many, an
 *    acknowledged remove (the client removes an entry before its objects)
 *    at most copies minus confidence - and its back reference names this
 *    directory and this name (so a rename or a replace keeps the new
 *    entry, not the old). So nothing acknowledged is lost and a removed
 *    entry does not come back. Two objects that both qualify for one
 *    name, or an object whose count lies where a create and a remove
 *    overlap (confidence at most half the copies), is a conflict: nothing
 *    changes.
 */
#ifndef OFS_RECONCILE_H
#define OFS_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/proto.h"
#include "server/replica.h"
#include "store/store.h"

/* Outcome of reconcile_dirdata. */
struct reconcile_result {
	unsigned kept, added, removed;   /* entries */
	bool conflict;                   /* nothing changed; detail says why */
	char detail[256];
};

/*
 * Merge the entries of the copies of dirdata oid on others (each present
 * and marked behind) into this server's copy, which must be present, by
 * the rule above; then drop this copy's behind mark. Returns 0 with *res
 * filled, -OFS_EUNREACHABLE when a copy, or every server of an object
 * named, did not answer (try again later), or a store error.
 */
int reconcile_dirdata(struct store *s, struct replicator *r, struct ofs_oid oid,
		      const struct ofs_sid *others, size_t n, struct reconcile_result *res);

/*
 * The rule for one entry the copies disagree on, as a pure function: the
 * object it names is held by present of its nsids copies, quiet did not
 * answer, its write confidence is confidence, and backref_ok says whether
 * its back reference names this directory and name. 1: the entry stays;
 * 0: it goes (never acknowledged, removed, or renamed/replaced away); -1:
 * a conflict (as many copies as a create leaves and a remove may);
 * -OFS_EUNREACHABLE: the quiet ones decide, ask later.
 */
int reconcile_entry_verdict(unsigned present, unsigned quiet, unsigned nsids, unsigned confidence,
			    bool backref_ok);

/* The lead of a set of SIDs: the smallest. */
struct ofs_sid reconcile_lead(const struct ofs_sid *sids, size_t n);

#endif
