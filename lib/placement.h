/*
 * placement.h - where the copies of a new object go.
 *
 * Given an OID and the servers of the server-ID database (docs/design.md,
 * "Cluster"), a placement function picks the servers that receive the
 * object's copies, primary first. Placement is a pure function of its
 * inputs: every client and server that holds the same table computes the
 * same answer, with no coordination and no state.
 *
 * Functions are chosen by name from a small built-in table, so a site can
 * add its own by adding one row to placement.c. The default, "hrw", is
 * weighted rendezvous (highest random weight) hashing: each server gets a
 * score from a hash of the OID and its SID, scaled by its weight, and the
 * best-scoring servers win. Adding or removing one server therefore moves
 * only the objects that server wins or loses, close to the minimum share.
 * Copies are spread across distinct values of a failure-domain attribute
 * (the rack) while there are enough of them.
 */
#ifndef OFS_PLACEMENT_H
#define OFS_PLACEMENT_H

#include <stddef.h>

#include "lib/oid.h"

#define PLACE_DEFAULT "hrw"     /* name of the default placement function */
#define PLACE_DOMAIN_LEN 64     /* bytes of place_server.domain */
#define PLACE_DOMAIN_ATTR "rack" /* server attribute that names the failure domain */

/* A server's state in the server-ID database. */
enum place_state {
	PLACE_IN = 0,           /* in service: receives new objects */
	PLACE_DRAINING = 1,     /* being emptied: keeps serving, receives nothing new */
	PLACE_OUT = 2           /* out of service: receives nothing */
};

/* One server as placement sees it; the caller fills an array of these. */
struct place_server {
	struct ofs_sid sid;             /* the server; a SID listed twice is chosen at most once */
	double weight;                  /* relative share of new objects; > 0; 0 (or less, or NaN) means never chosen */
	enum place_state state;         /* only PLACE_IN servers receive new objects */
	char domain[PLACE_DOMAIN_LEN];  /* failure-domain value (e.g. the rack), "" if none; compared up to the first NUL or 64 bytes */
};

/*
 * Choose `copies` distinct servers of servers[0..n-1] to hold the copies of
 * oid, best first: out[0] is the primary.
 *
 * A server is eligible when its state is PLACE_IN and its weight is > 0.
 * Eligible servers are ranked by the named function; then the choice is
 * greedy down the ranking:
 *   1. if fixed is not NULL and names an eligible server of the array, that
 *      server is out[0] (file stuffing: a file's first dfile goes on its
 *      metafile's primary). A fixed server that is draining, out, of weight
 *      0 or absent from the array is ignored, and placement proceeds as if
 *      fixed were NULL;
 *   2. the next slots take, in rank order, servers whose domain is not yet
 *      used by a chosen server — copies go to distinct domains while there
 *      are enough distinct domains among eligible servers. "" is a domain
 *      value like any other: all servers without a domain share it;
 *   3. remaining slots take, in rank order, any eligible server not yet
 *      chosen.
 * No server (no SID) appears twice in out.
 *
 * The result depends only on the arguments — the same OID, table and
 * copies give the same answer on every host — and not on the order of the
 * array, except for which entry wins when one SID is listed twice. The
 * function allocates nothing and keeps no state; it is safe to call from
 * any thread.
 *
 * name: a placement function's name (PLACE_DEFAULT for the default).
 * out: room for `copies` SIDs, owned by the caller; written only on success,
 *      and only its first (return value) entries.
 *
 * Returns the number of servers chosen: `copies`, or fewer when fewer
 * servers are eligible (0 when none is; the caller decides whether that
 * is OFS_ENOSERVERS). Errors:
 *   -EINVAL  name, servers or out is NULL, n is 0, or copies is 0 or more
 *            than OFS_MAX_REPLICAS;
 *   -ENOENT  no placement function has that name.
 */
int place_choose(const char *name, struct ofs_oid oid,
		 const struct place_server *servers, size_t n, unsigned copies,
		 const struct ofs_sid *fixed, struct ofs_sid *out);

/*
 * The names of the built-in placement functions, for listing and for
 * checking a configured name: place_name(0), place_name(1), ... until it
 * returns NULL. place_name(0) is PLACE_DEFAULT. The strings are static.
 */
const char *place_name(size_t i);

#endif
