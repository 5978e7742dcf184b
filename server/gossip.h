/*
 * gossip.h - spreading the server table.
 *
 * A background thread, once a second, exchanges the whole table with a
 * few peers chosen at random (push-pull in one SERVERS round trip) and
 * merges what comes back, so a change made on any server, or a server
 * joining through any one peer, reaches every server in a few rounds.
 * Seeds (--peer) are contacted every round until one has answered.
 */
#ifndef OFS_GOSSIP_H
#define OFS_GOSSIP_H

#include <stddef.h>

#include "sidtab.h"

#define GOSSIP_PERIOD_MS 1000
#define GOSSIP_FANOUT 3          /* peers per round */
#define GOSSIP_TIMEOUT_MS 3000   /* a peer that does not answer is skipped */

struct gossip;

/* Called from the gossip thread after each successful exchange, with the
 * SID of the peer that answered. */
typedef void (*gossip_contact_fn)(struct ofs_sid peer, void *arg);

/* Start gossiping for t; seeds are "HOST:PORT" strings (copied); contact
 * (may be NULL) hears of every peer that answered. Returns 0, -ENOMEM or
 * -EAGAIN (no thread). */
int gossip_start(struct sidtab *t, const char *const *seeds, size_t nseeds,
		 gossip_contact_fn contact, void *contact_arg, struct gossip **out);
/* Stop the thread and free everything; gossip_stop(NULL) is a no-op. */
void gossip_stop(struct gossip *g);

#endif
