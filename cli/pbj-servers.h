/* pbj-servers.h - ofs-pbj's server commands that print what pbj/servers.h
 * finds (pbj-servers.c): the checks before a drain, ok-to-stop, and the
 * rebalance preview. */
#ifndef OFS_CLI_PBJ_SERVERS_H
#define OFS_CLI_PBJ_SERVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/proto.h"
#include "pbj/servers.h"

/*
 * Before a drain of sidarg: the server exists, is not out, answers; the
 * servers in service besides it can keep the most copies any of its
 * objects has and have room for its bytes. Unless dry_run, it is marked
 * draining (no new objects). sidhex receives its SID. Prints what it
 * found on stderr. Returns 0 or an exit status (2: refused, 3: failure).
 */
int pbj_drain_prepare(const char *const *cluster, size_t ncluster, const char *sidarg,
		      bool dry_run, char sidhex[OFS_OID_HEX]);

/* ofs-pbj ok-to-stop SID [--json]: exit 0 when stopping it now leaves
 * every object it holds with at least its write confidence of good copies
 * elsewhere, 1 (naming the first objects) when not. */
int pbj_ok_to_stop(const char *const *cluster, size_t ncluster, int argc, char **argv, bool json);

/* Print the rebalance plan for the cluster as it is now (threshold in
 * points) on out. 0 or an exit status. */
int pbj_rebalance_preview(const char *const *cluster, size_t ncluster, int threshold, FILE *out);

#endif
