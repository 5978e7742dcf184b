/*
 * replica.h - forwarding a change from an object's primary to its other
 * copies (docs/design.md, "Cluster").
 *
 * The primary applies a change locally, then sends the same request,
 * marked OFS_OP_FORWARDED, to every other copy at once and waits for all
 * of them (each within its deadline, below). The caller counts the copies
 * that succeeded against the object's write confidence and records the
 * others as stale. Connections to peers are pooled per server; a peer's
 * address comes from the server table.
 *
 * A peer that does not connect (within REPLICA_CONNECT_MS), take a request
 * or answer in time is remembered as unreachable: nothing is sent to it
 * (its result is -OFS_EUNREACHABLE at once) until the server table says
 * it was heard from since (gossip, about every second; a server whose
 * disk stalls does not gossip). So a server cut off or hung costs the
 * first change sent to it its deadline (a change carries one: a copy
 * applies it only before it, replica_send_by), and the next ones nothing
 * but their stale records.
 */
#ifndef OFS_REPLICA_H
#define OFS_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"
#include "server/sidtab.h"

#define REPLICA_TIMEOUT_MS 30000
#define REPLICA_CONNECT_MS 2000
#define REPLICA_CHANGE_MS 2500    /* a copy's time to apply a forwarded change
                                     (a WRITE's 4 MiB get REPLICA_WRITE_MS, a
                                     COMMIT, whose sync may be long,
                                     REPLICA_TIMEOUT_MS) */
#define REPLICA_WRITE_MS 10000
#define REPLICA_GRACE_MS 500      /* for its answer to come back after that */

struct replicator;

int replica_open(struct sidtab *t, struct replicator **out);
/* Closes every pooled connection; replica_close(NULL) is a no-op. */
void replica_close(struct replicator *r);

/* The outcome for one copy. */
struct replica_result {
	int rc;                      /* 0, a server's error, or a transport error */
	uint8_t *body;               /* the reply body on success (caller frees) */
	size_t len;
};

/*
 * Send op (without OFS_OP_FORWARDED: it is added) with body to each of the
 * n servers in sids, in parallel (OFS_MAX_REPLICAS at a time), and fill
 * res[i] (n entries) for each. Returns 0; the per-server results say what
 * happened.
 */
int replica_forward(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		    const struct ofs_sid *sids, size_t n, struct replica_result *res);

/*
 * One request to one server as a client sends it (no OFS_OP_FORWARDED):
 * sent to an object's primary, a change is applied there and replicated
 * to every copy (repair uses it to mend structure). Returns 0; res says.
 */
int replica_request(struct replicator *r, struct ofs_sid sid, uint16_t op, const uint8_t *body,
		    size_t len, struct replica_result *res);

/*
 * replica_forward in two halves, so the caller can work (apply the change
 * locally) while the copies apply it: replica_send sends to each of
 * n <= OFS_MAX_REPLICAS servers (res[i].rc set for those it could not
 * send to), replica_collect waits for the answers of the others. Every
 * replica_send must be followed by one replica_collect.
 */
struct replica_sent {
	struct conn *c[OFS_MAX_REPLICAS];
	uint64_t id[OFS_MAX_REPLICAS];
	struct ofs_sid sids[OFS_MAX_REPLICAS];
	size_t n;
};
void replica_send(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		  const struct ofs_sid *sids, size_t n, struct replica_sent *sent,
		  struct replica_result *res);
/*
 * replica_send of a change with a deadline (Unix ms, frame.h; 0: none):
 * a copy applies it only before the deadline (else it answers
 * OFS_ELATE), and its answer is awaited until REPLICA_GRACE_MS after it -
 * so a copy that hung with the change in its socket cannot apply it after
 * its primary counted it missed (docs/design.md, "A hung server"). Copies
 * gone or silent (sidtab_silent) are skipped, answering
 * OFS_EUNREACHABLE at once - unless fewer than need of sids would be left,
 * need being how many must apply the change for it to count: then all
 * are tried.
 */
void replica_send_by(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		     uint64_t deadline_ms, size_t need, const struct ofs_sid *sids, size_t n,
		     struct replica_sent *sent, struct replica_result *res);
/* replica_forward with a deadline and need (as replica_send_by). */
int replica_forward_by(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		       uint64_t deadline_ms, size_t need, const struct ofs_sid *sids, size_t n,
		       struct replica_result *res);
void replica_collect(struct replicator *r, struct replica_sent *sent, struct replica_result *res);

/* Hold oid still (ms > 0) or let it go (ms == 0) on each server of to, as
 * holder: those servers refuse changes of it (OFS_EMOVING, which clients
 * wait out) until ms have passed or the holder lets go. -EBUSY: another
 * holder holds it somewhere. */
int replica_freeze(struct replicator *r, struct ofs_oid oid, const struct ofs_sid *to, size_t n,
		uint32_t ms, struct ofs_sid holder);

#endif
