/*
 * gossip.h - spreading the server table.
 *
 * A background thread, once a second, exchanges the whole table with a
 * few peers chosen at random (push-pull in one SERVERS round trip) and
 * merges what comes back - and, on the same connection, pulls the
 * revocation list and the capability keys (a REVOKED and a CAPKEYS round
 * trip, each answered with the peer's when newer, believed when the
 * cluster CA signed it: crl.h, cap.h) - so a change made on any server,
 * a revocation, a rotation, or a server joining through any one peer
 * reaches every server in a few rounds.
 * Seeds (--peer) are contacted every round until one has answered.
 * A peer that refuses this server (conn_is_refusal: its certificate
 * revoked or expired, another cluster's CA) is left out of the rounds
 * for a while that doubles with each refusal in a row, up to a minute
 * (lib/backoff.h), and the refusal is logged once per 10 s at most; a
 * peer that does not answer is simply tried when it is picked again.
 */
#ifndef OFS_GOSSIP_H
#define OFS_GOSSIP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/sidtab.h"

#define GOSSIP_PERIOD_MS 1000
#define GOSSIP_FANOUT 3          /* peers per round */
#define GOSSIP_TIMEOUT_MS 3000   /* a peer that does not answer is skipped */
#define GOSSIP_KEPT 32           /* connections kept between rounds */
#define GOSSIP_REFUSED_CAP_MS 60000  /* a peer that refuses this server is
                                        asked every round, then ever less
                                        often, down to once a minute */

struct gossip;

/* Called from the gossip thread after each successful exchange, with the
 * SID of the peer that answered. */
typedef void (*gossip_contact_fn)(struct ofs_sid peer, void *arg);

/* What gossip carries besides the table (either may be NULL: --insecure):
 * the revocation list and the capability keys, each pulled from a peer
 * holding a newer one the CA signed. */
struct crl;
struct cap_ring;
struct gossip_trust {
	struct crl *crl;
	struct cap_ring *keys;
	bool (*stalled)(void *arg);   /* (may be NULL) true: this server's disk
	                                 hangs - no round now, so that its peers
	                                 take it as down */
	void *stalled_arg;
};

/* Start gossiping for t (and tr, may be NULL); seeds are "HOST:PORT" strings (copied);
 * contact (may be NULL) hears of every peer that answered. Returns 0,
 * -ENOMEM or -EAGAIN (no thread). */
int gossip_start(struct sidtab *t, const struct gossip_trust *tr, const char *const *seeds, size_t nseeds,
		 gossip_contact_fn contact, void *contact_arg, struct gossip **out);
/* Stop the thread and free everything; gossip_stop(NULL) is a no-op. */
void gossip_stop(struct gossip *g);

/*
 * One push-pull exchange, now, with every server in t and every seed
 * ("HOST:PORT"), GOSSIP_PULL_THREADS at a time, each answer merged: a
 * server about to serve after a restart learns what changed while it was
 * away (an operator's decisions, a moved root) before a client can see
 * its old table, and tells the others its own new address. No exchange
 * starts after timeout_ms; one started waits at most the time left for
 * its answer (plus its connect, CONN_CONNECT_MS at worst for a host that
 * does not answer one). Returns how many answered (0: none did, which
 * is no error: gossip goes on later), or -ENOMEM.
 */
#define GOSSIP_PULL_THREADS 16
/* (tr may be NULL) */
int gossip_pull_once(struct sidtab *t, const struct gossip_trust *tr, const char *const *seeds, size_t nseeds,
		     int timeout_ms);

#endif
