/*
 * replica.h - forwarding a change from an object's primary to its other
 * copies (DESIGN.md section 5).
 *
 * The primary applies a change locally, then sends the same request,
 * marked OFS_OP_FORWARDED, to every other copy at once and waits for all
 * of them (each within REPLICA_TIMEOUT_MS). The caller counts the copies
 * that succeeded against the object's write confidence and records the
 * others as stale. Connections to peers are pooled per server; a peer's
 * address comes from the server table.
 */
#ifndef OFS_REPLICA_H
#define OFS_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "sidtab.h"

#define REPLICA_TIMEOUT_MS 30000
#define REPLICA_CONNECT_MS 2000

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
 * n servers in sids, in parallel, and fill res[i] for each. Returns 0; the
 * per-copy results say what happened. -ENOMEM only when nothing could be
 * tried.
 */
int replica_forward(struct replicator *r, uint16_t op, const uint8_t *body, size_t len,
		    const struct ofs_sid *sids, size_t n, struct replica_result *res);

#endif
