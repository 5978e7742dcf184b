/* pbj-servers.h - ofs-pbj's calls to the cluster's servers (pbj-servers.c):
 * the server table, one call to one server, SID arguments, and the server
 * commands that need more than one call (ok-to-stop, the checks before a
 * drain). */
#ifndef OFS_PBJ_SERVERS_H
#define OFS_PBJ_SERVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/proto.h"

/* The server table as the first reachable cluster address sees it; *via
 * is that address. */
int pbj_fetch_table(const char *const *cluster, size_t n, struct ofs_server **e, size_t *ne,
		    const char **via);
/* A SID argument: 32 hex digits, or a unique prefix of 4 or more of a
 * server in e. -EINVAL (not a SID), -ENOENT, -EEXIST (ambiguous). */
int pbj_resolve_sid(const char *arg, const struct ofs_server *e, size_t n, struct ofs_sid *out);

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
