/*
 * sidtab.h - the server-ID database: every server this server knows, with
 * its address, site attributes, state (in, draining, out) and weight.
 *
 * Each entry has two parts, each versioned on its own and merged
 * newest-wins, so that neither writer can undo the other: the operator's
 * part (state, weight, attributes; `version`), which any server sets on
 * an admin's request (the admin's tool asks every server), and the
 * server's own part (address, root; `self_version`), which only that
 * server writes - at every start, and when its address or root changes.
 * A restart therefore never undoes an operator's decision. A server
 * speaks for its own entry only (sidtab_merge_from): a server that
 * missed an admin's change learns it from the server it is about, or
 * from two other servers that agree, when they next talk (gossip.h). The table is kept in memory and persisted in the store
 * (KV_SERVERS) before a change is acknowledged. last_seen (when this
 * server last heard from each one) is local: it is sent along but never
 * merged. All functions are thread-safe.
 */
#ifndef OFS_SIDTAB_H
#define OFS_SIDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"
#include "store/store.h"

struct sidtab;

/*
 * Load the table from the store and make sure this server's own entry says
 * what it is now: its own part (address, the store's root) gets a new
 * self_version; the operator's part stays as remembered (a new server's:
 * in, weight 1, the attributes from init). Returns 0, -ENOMEM, or a store
 * error.
 */
int sidtab_open(struct store *s, const char *self_addr, struct sidtab **out);
void sidtab_close(struct sidtab *t);

struct ofs_sid sidtab_self(const struct sidtab *t);

/*
 * Merge entries received from a peer, each part on its own: the
 * operator's part replaces ours when its version is higher, the server's
 * own part when its self_version is (equal versions: the larger encoding
 * of the part wins, so every server settles on the same one). Our own
 * entry's own part is never taken: a peer's copy as new or newer that
 * differs makes ours newer still. A root once seen in an entry stays
 * there. Then the oldest root any server serves is adopted, and of the
 * servers serving ours, the newest SID list (root_version) is taken: a
 * server that missed a ROOT_MOVE catches up. Returns the number of
 * entries that changed, or a store error.
 */
int sidtab_merge(struct sidtab *t, const struct ofs_server *e, size_t n);
/*
 * sidtab_merge of what server *from says (its SERVERS push, or its answer
 * to ours; from NULL: every entry is believed, as sidtab_merge). A server
 * speaks for its own entry only (docs/design.md, "Security"): its entry
 * is merged as above, both parts; an entry for a server not known yet is
 * taken whole (how a new server becomes known). Of an entry for another
 * server already known (ours included), the own part (address, root) is
 * never taken - that server says where it is and what it serves itself
 * (a newer copy of ours that differs gets ours past it) - and the
 * operator's part (an admin's SERVER_SET, which the admin's tool sends
 * to every server) only once two distinct peers have said the very same
 * one, newer than ours: one server alone cannot change another's entry,
 * and a server that was down when an admin changed it learns the change
 * from the others. The caller has checked that *from is who sent it (its
 * certificate). A relayed address that differs from ours is not taken
 * but kept as a lead (sidtab_leads): gossip asks the server there, and
 * only the server itself, its certificate naming that SID, says it moved
 * - so all the servers of a cluster may restart on new addresses.
 */
int sidtab_merge_from(struct sidtab *t, const struct ofs_server *e, size_t n,
		      const struct ofs_sid *from);

/* Take the oldest leads kept (at most max; a lead is given once): a
 * server known here and the address a peer said it is at now. Their
 * number. */
#define SIDTAB_LEADS 16
size_t sidtab_leads(struct sidtab *t, struct ofs_sid *sids, char (*addrs)[OFS_SERVER_ADDR_LEN],
		    size_t max);

/* A copy of the whole table (caller frees *out), own entry first. */
int sidtab_snapshot(struct sidtab *t, struct ofs_server **out, size_t *n);

/* One entry; -ENOENT when unknown. */
int sidtab_get(struct sidtab *t, struct ofs_sid sid, struct ofs_server *e);
/* Only its state (enum ofs_server_state), without copying the entry;
 * -ENOENT when unknown. */
int sidtab_state(struct sidtab *t, struct ofs_sid sid, uint8_t *state);

/* Apply an operator's change with a new version of the operator's part;
 * *e receives the entry. -ENOENT: unknown SID; -EINVAL: an attribute table
 * already full. */
int sidtab_set(struct sidtab *t, const struct ofs_server_set *set, struct ofs_server *e);

/*
 * A client made a root (the cluster had none it knew of): take it unless
 * an older one is known; *used and *used_birth receive the root this
 * server now serves. Errors: those of store_adopt_root.
 */
int sidtab_offer_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		      struct ofs_handle *used, int64_t *used_birth);

/*
 * ROOT_MOVE: the root's copies moved. h names the same root as this server
 * serves (the same OID and birth) with its new SID list: take that list,
 * with a root_version newer than any this server knows for that root (so
 * servers that missed the move take the list from us by gossip).
 * -ESTALE when this server serves another root (or none): nothing changes.
 * *used and *used_birth receive the root this server now serves.
 */
int sidtab_move_root(struct sidtab *t, const struct ofs_handle *h, int64_t birth_ns,
		      struct ofs_handle *used, int64_t *used_birth);

/* Record that sid answered just now. */
void sidtab_seen(struct sidtab *t, struct ofs_sid sid);

/*
 * A hung server is a down server (docs/design.md, "A hung server"):
 * gossip records a ping of sid that got no answer in time (or no
 * connection); sid is silent from then until it is heard from again
 * (sidtab_seen), and changes skip it (replica.h) without each primary
 * waiting out a request of its own first. SIDTAB_SILENT peers are
 * remembered (full: one gives way). sidtab_unanswered returns true when
 * sid, a server the table knows, was not silent before (to be logged).
 */
#define SIDTAB_SILENT 64
bool sidtab_unanswered(struct sidtab *t, struct ofs_sid sid);
bool sidtab_silent(struct sidtab *t, struct ofs_sid sid);

#endif
