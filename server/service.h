/*
 * service.h - the request handlers: one decoded request in, one reply out.
 *
 * The listener hands each frame's body here; the body is decoded once
 * (proto_decode_req), checked, and applied to the store. A request that
 * fails to decode or is refused changes nothing.
 */
#ifndef OFS_SERVICE_H
#define OFS_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "lib/wire.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"

#define SERVICE_NLOCKS 256
#define SERVICE_NFROZEN 256     /* objects held still at once, at most */

/* What the handlers act on. The store, table and replicator are the
 * caller's; service_init/service_fini pair around the locks. */
struct taskhost;
struct recover;
struct mailbox;

struct crl;
struct cap_ring;

struct service {
	struct store *store;
	struct crl *crl;                   /* the revocation list (NULL: none,
	                                      --insecure); set after service_init */
	struct cap_ring *capkeys;          /* the capability keys (NULL: none,
	                                      --insecure); set after service_init */
	uint32_t cap_ttl_s;                /* capabilities granted live this long
	                                      (CAP_DEFAULT_TTL_S by service_init) */
	struct sidtab *tab;
	struct replicator *rep;            /* NULL: no forwarding */
	/* The background tasks (taskhost.h) and the catch-up (recover.h). */
	struct taskhost *tasks;            /* NULL: none */
	struct recover *recover;           /* NULL: none (set after service_init) */
	struct mailbox *mailbox;           /* JOIN's records (NULL: none; set after
	                                      service_init) */
	struct suspects *suspects;         /* copies a reader found bad, mended
	                                      first (NULL: none; set after
	                                      service_init) */
	/* What the catch-up wants to hear (set after service_init; NULL:
	 * nobody): behind - a copy here was just marked behind; stats - add
	 * its counts to a STATS reply. */
	struct service_hooks {
		void (*behind)(void *arg);
		void (*stats)(void *arg, struct ofs_stats *st);
		void *arg;
	} hooks;
	/* A change to a replicated object holds its lock from the local
	 * apply to the last copy's answer, so every copy sees the changes to
	 * one object in the same order. */
	pthread_mutex_t locks[SERVICE_NLOCKS];
	/* Objects held still while a copy of theirs moves (FREEZE): a change
	 * from a client gets -OFS_EMOVING until the hold lifts or lapses.
	 * Held in memory only: a restarted server holds nothing, and the
	 * mover, which froze it, runs the move again. Held by one holder at
	 * a time: two servers moving their copies of one object at once would
	 * each set the SID list from the one they read, and the later would
	 * undo the earlier (the second gets -EBUSY and tries again). */
	pthread_mutex_t fmu;
	struct service_frozen {
		struct ofs_oid oid;
		struct ofs_sid holder;     /* who froze it: one mover at a time */
		int64_t until_ns;          /* 0: free slot */
	} frozen[SERVICE_NFROZEN];
	/* A test's fault (0: none): after a client's request of this
	 * operation is applied here and forwarded, the server exits before
	 * it answers - a crash between a change and its reply. */
	uint16_t exit_after_op;
};

void service_init(struct service *sv, struct store *s, struct sidtab *t, struct replicator *r,
		  struct taskhost *tasks);
void service_fini(struct service *sv);

/* Who makes a request, and what it brings besides its body. */
struct access_cache;
struct service_call {
	const struct ident *who;           /* the peer's certificate identity
	                                      (NULL: the server runs --insecure) */
	const uint8_t *cap;                /* the frame's capability slot */
	size_t cap_len;
	struct access_cache *cache;        /* the connection's (access.h; may be NULL) */
	struct wbuf *grant;                /* receives the capability the reply
	                                      carries, if any (may be NULL) */
	uint64_t deadline_ms;              /* the frame's deadline (frame.h; 0:
	                                      none): a change is applied only
	                                      before it */
};

/*
 * Handle one request: operation op with body (len bytes), from call->who.
 * A user's request is checked against the object's mode bits or its
 * capability (access.h) before it is applied; a user's GETATTR or CREATE
 * of a file or directory is answered with a capability in call->grant.
 * A caller whose role the operation's row does not list, and a forwarded
 * request from anyone but a server, is refused with -EACCES before
 * anything is read or changed (ops.h). The reply body
 * is appended to reply (only on success). Returns the reply status: 0, or
 * a negative code (decode errors from proto_decode_req, store errors, and
 * -ENOMEM). Bad requests are logged once here, at debug level; checksum
 * mismatches at warning level, naming the object.
 *
 * A change (create, remove, setattr, write, commit, kv put/delete, dirent
 * create/remove) to an object with other copies, received from a client,
 * is applied here and forwarded to them; it succeeds when at least the
 * object's write confidence of copies applied it (else -OFS_EQUORUM), and
 * copies that did not are recorded as stale with the reason. A request
 * marked OFS_OP_FORWARDED is applied here only. A change from a client to
 * an object held still (FREEZE) is refused with -OFS_EMOVING, which the
 * client retries.
 */
int service_handle(struct service *sv, const struct service_call *call, uint16_t op,
		   const uint8_t *body, size_t len, struct wbuf *reply);

/* FREEZE: hold oid still for ms (0: lift), once the changes in progress
 * on it here have finished (its change lock); -EBUSY while another holder
 * holds it. */
int service_freeze(struct service *sv, struct ofs_oid oid, uint32_t ms, struct ofs_sid holder);

#endif
