/* catchup.h - the servers' catch-up, as a system job in the job store.
 *
 * Every server catches up its own copies that missed changes by itself
 * (server/recover.h), with no job. So that operators see it where they
 * see every other background job, `ofs-pbj serve` polls each server's
 * catch-up (TASK_POLL of job 0) about once a second and, while any server
 * is catching up or has something to say, keeps one job of type
 * "catch-up" running in the job store: a task row per server (copies
 * caught up and left) and a finding per copy caught up (stale_replica,
 * repaired, with how) or left for a repair. The job succeeds when no
 * server has anything left. It is never queued or run by the scheduler:
 * it only records. A catch-up job left running by a scheduler that died is
 * adopted by the next.
 *
 * A poll the cluster refuses (conn_is_refusal: this scheduler's
 * certificate revoked or expired, ...) is not tried again a second later:
 * the next one waits a backoff (1 s doubled up to a minute, with
 * jitter), so that a refused scheduler does not knock on every server
 * once a second. The first poll answered starts the steps over.
 */
#ifndef OFS_PBJ_CATCHUP_H
#define OFS_PBJ_CATCHUP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/backoff.h"
#include "lib/proto.h"
#include "pbj/jobstore.h"


#define PBJ_CATCHUP_KNOWN 64

struct pbj_catchup {
	int64_t job;                 /* the open catch-up job; 0: none */
	/* Addresses from the last table read, tried when the cluster
	 * addresses given no longer answer (servers restart elsewhere). */
	char known[PBJ_CATCHUP_KNOWN][OFS_SERVER_ADDR_LEN];
	size_t nknown;
	int64_t last_ns;             /* when the servers were last asked */
	int64_t next_ns;             /* not asked again before (a refusal's backoff) */
	struct backoff bo;           /* the refusals' backoff */
	unsigned refused;            /* polls refused in a row */
	int retry_ms;                /* the wait after the last refusal */
	size_t nacks;
	struct {
		struct ofs_sid sid;
		uint64_t ack;        /* findings up to this are stored */
	} acks[OFS_MAX_SERVERS];
};

/* A catch-up follower with nothing asked yet. */
void pbj_catchup_init(struct pbj_catchup *cu);

/* Ask the servers (at most once a second, or once the backoff after a
 * refusal is over) and record what they did. Returns 0, or the refusal
 * that ended this poll (cu->refused: polls refused in a row; cu->retry_ms:
 * the wait before the next). A server that does not answer is not an
 * error: it catches up once it is back. */
int pbj_catchup_poll(struct pbj_db *db, const char *const *cluster, size_t ncluster,
		     struct pbj_catchup *cu);

#endif
