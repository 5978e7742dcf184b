/* pbj-servers.h - ofs-pbj's server commands that print what pbj/servers.h
 * finds (pbj-servers.c): ok-to-stop. */
#ifndef OFS_CLI_PBJ_SERVERS_H
#define OFS_CLI_PBJ_SERVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/proto.h"
#include "pbj/servers.h"

/* ofs-pbj ok-to-stop SID [--json]: exit 0 when stopping it now leaves
 * every object it holds with at least its write confidence of good copies
 * elsewhere, 1 (naming the first objects) when not. */
int pbj_ok_to_stop(const char *const *cluster, size_t ncluster, int argc, char **argv, bool json);

#endif
