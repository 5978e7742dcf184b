/*
 * repair.h - making one copy of an object good again (docs/design.md, "Background jobs and scrub").
 *
 * "If a copy goes bad, throw it away and recreate it": the server that must
 * hold a copy fetches the object from a good sibling and swaps it in
 * (store_incoming_*: written aside, digest checked, installed atomically,
 * the old copy quarantined).
 *
 * Which copy is good: one whose chunks all verify against their own
 * digests and, among those, the highest version. Candidates are first
 * compared by SUMMARY (a few dozen bytes each); a copy is verified by
 * reading it (the fetch reads through the source's verifying read path,
 * so a fetched copy has verified). Where two copies at the top version
 * differ, each is verified on its server (VERIFY); if more than one
 * verifies, the outcome is OFS_FETCH_CONFLICT and nothing changes; if none
 * verifies at any version, OFS_FETCH_NONE and nothing changes. Never a
 * guess.
 */
#ifndef OFS_REPAIR_H
#define OFS_REPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/proto.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

/* Pace fetched bytes; non-zero stops the fetch with that status. */
typedef int (*repair_pace_fn)(uint64_t bytes, void *arg);

/* VERIFY: the summary of this server's copy after re-reading every chunk
 * (sm->checked set, sm->bad when something did not verify). Not present:
 * 0 with sm->present false. A record that does not decode: present and
 * corrupt. */
int repair_verify(struct store *s, struct ofs_oid oid, struct ofs_summary *sm);

/*
 * Make this server's copy of oid good: compare it with the copies on
 * cands (ncands 0: every server in the table), fetch the good one unless
 * this copy is it. flags: OFS_FETCH_DRYRUN decides and fetches nothing;
 * OFS_FETCH_LOCALBAD skips re-reading this copy (known bad). tag goes into the
 * quarantine name of the copy thrown away. Returns 0 with *out filled (the
 * outcome, the source, the version, bytes fetched, a detail an operator
 * can act on), or an error when the decision could not be made (a
 * candidate did not answer: -OFS_EUNREACHABLE; the copies kept changing:
 * -EAGAIN).
 */
int repair_fetch(struct store *s, struct sidtab *t, struct replicator *r, struct ofs_oid oid,
		 const struct ofs_sid *cands, size_t ncands, unsigned flags, const char *tag,
		 repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out);

/* Ask target to run repair_fetch on its copy (REPAIR_FETCH); for target
 * == this server, runs it here. */
int repair_fetch_at(struct store *s, struct sidtab *t, struct replicator *r,
		    struct ofs_sid target, struct ofs_oid oid, const struct ofs_sid *cands,
		    size_t ncands, unsigned flags, uint64_t rate, const char *tag,
		    repair_pace_fn pace, void *arg, struct ofs_fetch_reply *out);

/* A plain pacer for REPAIR_FETCH's rate (bytes/s; 0: unpaced). */
struct repair_pacer {
	uint64_t rate, bytes;
	double t0;
};
int repair_pace_rate(uint64_t bytes, void *arg);

/*
 * This server's copy of oid is marked behind and no copy it names holds
 * the object: it was removed while this copy was away (the mark proves a
 * primary held it then). Every server is asked (the copies may have
 * moved); if none holds it, this copy goes too (store_drop_removed: its
 * bytes into quarantine) and named are told so. 1: dropped, 0: some server
 * holds it or did not answer, or an error.
 */
int repair_drop_removed(struct store *s, struct sidtab *t, struct replicator *r,
			struct ofs_oid oid, const struct ofs_sid *named, size_t nnamed);

/* Tell each of sids that this server's copy of oid is current at version
 * (STALE_CLEAR): their stale records of it go where their copy is not
 * newer. */
void repair_tell_current(struct replicator *r, struct ofs_oid oid, struct ofs_sid me,
			 uint64_t version, const struct ofs_sid *sids, size_t n);

/* SUMMARY (or VERIFY: op) of oid from each of sids, in parallel; rcs[i]
 * says whether sm[i] is an answer. */
int repair_ask(struct replicator *r, uint16_t op, struct ofs_oid oid, const struct ofs_sid *sids,
	       size_t n, struct ofs_summary *sm, int *rcs);

/* STALE_CLEAR: drop this server's stale record of sid's copy of oid if
 * this copy is not newer than version. */
int repair_stale_clear(struct store *s, struct ofs_oid oid, struct ofs_sid sid, uint64_t version);

#endif
