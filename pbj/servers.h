/*
 * servers.h - what ofs-pbj asks the cluster's servers before it acts on
 * one of them: the server table, a SID argument, the checks before a
 * drain and whether a server may stop now. Each returns what it found in
 * a struct; the command line prints it (cli/pbj-servers.c).
 */
#ifndef OFS_PBJ_SERVERS_H
#define OFS_PBJ_SERVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"

/* The server table as the first reachable cluster address sees it; *via
 * is that address. */
int pbj_fetch_table(const char *const *cluster, size_t n, struct ofs_server **e, size_t *ne,
		    const char **via);
/* A SID argument: 32 hex digits, or a unique prefix of 4 or more of a
 * server in e. -EINVAL (not a SID), -ENOENT, -EEXIST (ambiguous). */
int pbj_resolve_sid(const char *arg, const struct ofs_server *e, size_t n, struct ofs_sid *out);
/* The same among the SIDs sids[0..n-1] (a job's servers, say). */
int pbj_resolve_sid_in(const char *arg, const struct ofs_sid *sids, size_t n,
		       struct ofs_sid *out);
/* Server e's statistics (STATS), asked of it by its SID (another server
 * at its address is not it) within timeout_ms. 0 or -errno. A server
 * that does not answer within PBJ_STATS_UP_MS is down to `servers` and
 * `health`. */
#define PBJ_STATS_UP_MS 2000
int pbj_server_stats(const struct ofs_server *e, int timeout_ms, struct ofs_stats *st);
/* Why an argument names no one server, from pbj_resolve_sid's rc. */
const char *pbj_sid_why(int rc);

#define PBJ_SID_WHY_LEN 384
/* Why arg names no one of sids[0..n-1] (rc from pbj_resolve_sid_in),
 * into out: for an ambiguous prefix, the SIDs it matches, the first 8
 * of them by name. */
void pbj_sid_why_in(const char *arg, int rc, const struct ofs_sid *sids, size_t n,
		    char out[PBJ_SID_WHY_LEN]);
/* The same among the servers e[0..n-1]. */
void pbj_sid_why_of(const char *arg, int rc, const struct ofs_server *e, size_t n,
		    char out[PBJ_SID_WHY_LEN]);
/* The entry of e[0..n-1] that arg names (a whole SID or a unique prefix;
 * a whole SID must be in e too), or NULL with *rc (as pbj_resolve_sid's,
 * -ENOENT for a whole SID not in e) and why (pbj_sid_why_of's). */
const struct ofs_server *pbj_server_named(const char *arg, const struct ofs_server *e,
					  size_t n, int *rc, char why[PBJ_SID_WHY_LEN]);

/* What a drain's checks found, and their verdict. */
enum pbj_drain_verdict {
	PBJ_DRAIN_OK = 0,           /* (and, unless a dry run, marked draining) */
	PBJ_DRAIN_NO_TABLE,         /* the table could not be read: rc */
	PBJ_DRAIN_BAD_SERVER,       /* the argument names no one server: rc as
	                               pbj_resolve_sid's, why says so */
	PBJ_DRAIN_OUT,              /* out of service already */
	PBJ_DRAIN_SILENT,           /* it does not answer: rc */
	PBJ_DRAIN_TOO_FEW,          /* fewer servers besides it than copies */
	PBJ_DRAIN_NO_ROOM,          /* its bytes do not fit elsewhere (5% spare) */
	PBJ_DRAIN_MARK_FAILED,      /* marking it draining failed: rc */
};

struct pbj_drain_check {
	int verdict;                /* enum pbj_drain_verdict */
	int rc;                     /* the error behind it, where there is one */
	struct ofs_sid sid;         /* the server (once named) */
	uint64_t objects, bytes;    /* what it holds */
	uint32_t max_copies;        /* the most copies one of its objects has */
	size_t others;              /* servers in service besides it, answering */
	size_t racks;               /* their racks */
	uint64_t avail;             /* their free bytes */
	char why[PBJ_SID_WHY_LEN];  /* PBJ_DRAIN_BAD_SERVER: pbj_sid_why_of's */
};

/*
 * Before a drain of the server sidarg names: it exists, is not out,
 * answers; the servers in service besides it can keep the most copies
 * any of its objects has and have room for its bytes (5% spare). Unless
 * dry_run, it is then marked draining (no new objects). *out says what
 * was found, its verdict first.
 */
void pbj_drain_check(const char *const *cluster, size_t ncluster, const char *sidarg,
		     bool dry_run, struct pbj_drain_check *out);

/* Whether a server may stop now (STOP_CHECK). */
enum pbj_stop_verdict {
	PBJ_STOP_ANSWERED = 0,      /* *reply says (nshort 0: ok) */
	PBJ_STOP_NO_TABLE,          /* rc */
	PBJ_STOP_BAD_SERVER,        /* rc as pbj_resolve_sid's, why says so */
	PBJ_STOP_SILENT,            /* it does not answer: not known (rc) */
	PBJ_STOP_REFUSED,           /* it refused the question (rc) */
};

struct pbj_stop_check {
	int verdict;                /* enum pbj_stop_verdict */
	int rc;
	struct ofs_sid sid;
	struct ofs_stop_reply reply;
	char why[PBJ_SID_WHY_LEN];  /* PBJ_STOP_BAD_SERVER: pbj_sid_why_of's */
};

/* Ask the server sidarg names whether stopping it now leaves every object
 * it holds with at least its write confidence of good copies elsewhere;
 * *out says (out is large: allocate it). */
void pbj_stop_check(const char *const *cluster, size_t ncluster, const char *sidarg,
		    struct pbj_stop_check *out);

#endif
