/*
 * prepare.h - what a job type does at submit, before the job is queued
 * (its row's prepare column, pbj/jobtype.h): look at the cluster as it
 * stands, refuse a job that could not run, make its arguments whole (a
 * SID prefix made a full SID), and say what it found - a drain's checks,
 * a rebalance's plan. A preparation may change the cluster: a drain's
 * server is marked draining, unless it is a dry run. docs/design.md
 * "Jobs".
 */
#ifndef OFS_PBJ_PREPARE_H
#define OFS_PBJ_PREPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/oid.h"
#include "pbj/jobargs.h"

/* What a preparation found: submit's exit status follows. */
enum pbj_prep_result {
	PBJ_PREP_OK = 0,                  /* queue it */
	PBJ_PREP_REFUSED,                 /* the job could never run as given (2) */
	PBJ_PREP_FAILED,                  /* the cluster could not be asked (3) */
};

struct pbj_prep {
	const char *const *cluster;       /* its addresses (at least one) */
	size_t ncluster;
	bool dry_run;
	FILE *say;                        /* the checks' findings and refusals */
	FILE *preview;                    /* a plan shown before it runs */
	char sidhex[OFS_OID_HEX];         /* room for a SID made whole (the
	                                     arguments may point here) */
};

/* submit drain: the one server must exist, answer, and fit elsewhere; it
 * is then marked draining (not on a dry run), and a->servers[0] becomes
 * its full SID. */
int pbj_prepare_drain(struct pbj_prep *p, struct pbj_job_args *a);

/* submit rebalance: the plan as the cluster stands, on p->preview. */
int pbj_prepare_rebalance(struct pbj_prep *p, struct pbj_job_args *a);

#endif
