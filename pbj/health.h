/*
 * health.h - whether the cluster is healthy and, if not, why
 * (`ofs-pbj health`, ofs-pbj(8)). Each check names what it found:
 *   servers_down        error  a server in service that does not answer
 *   servers_recovering  warn   a server catching up copies that missed changes
 *   findings_unrepaired warn   findings of the last whole-cluster scrub or
 *                              repair not repaired
 *   jobs_stuck          warn   a job that does not move, with why
 * The checks of copies not verified within their interval and of objects
 * below their write confidence come with issue 34's stamps.
 */
#ifndef OFS_PBJ_HEALTH_H
#define OFS_PBJ_HEALTH_H

#include <jansson.h>
#include <stddef.h>

#include "pbj/jobstore.h"

enum pbj_health_status { PBJ_HEALTH_OK = 0, PBJ_HEALTH_WARN, PBJ_HEALTH_ERROR };

#define PBJ_HEALTH_ITEMS 20          /* items listed in a check, at most */

/*
 * Run the checks against the cluster (its table and each server's
 * statistics) and, when db is not NULL, the job database. *doc is
 * {"status": "ok"|"warn"|"error", "checks": [{"name", "severity",
 * "count", "detail", "items": [...]}]}, only the checks that found
 * something; *status the worst. 0, or the error that kept the table from
 * being read (-errno; nothing made).
 */
int pbj_health(const char *const *cluster, size_t ncluster, struct pbj_db *db, json_t **doc,
	       int *status);

#endif
