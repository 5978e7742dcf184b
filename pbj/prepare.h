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
	PBJ_PREP_DONE,                    /* a dry run the preparation answered
	                                     whole: nothing is queued (0) */
};

struct pbj_prep {
	const char *const *cluster;       /* its addresses (at least one) */
	size_t ncluster;
	bool dry_run;
	FILE *say;                        /* the checks' findings and refusals */
	FILE *preview;                    /* a plan shown before it runs */
	char sidhex[OFS_OID_HEX];         /* room for a SID made whole (the
	                                     arguments may point here) */
	char sids[PBJ_ARGS_MAX][OFS_OID_HEX];   /* the same for many */
};

/* Every preparation that must ask the cluster refuses a submit without
 * one (PBJ_PREP_REFUSED, said on p->say). */

/* submit scrub, repair: each --server names a server of the table (a
 * prefix is made its full SID), and each --path a file or directory in
 * the cluster. With neither, or only whole SIDs and no cluster given,
 * nothing is asked. */
int pbj_prepare_scope(struct pbj_prep *p, struct pbj_job_args *a);

/* submit drain: the one server must exist, answer, and fit elsewhere; it
 * is then marked draining (not on a dry run), and a->servers[0] becomes
 * its full SID. */
int pbj_prepare_drain(struct pbj_prep *p, struct pbj_job_args *a);

/* submit rebalance: the plan as the cluster stands, on p->preview; a dry
 * run of a plan with nothing to move is PBJ_PREP_DONE. */
int pbj_prepare_rebalance(struct pbj_prep *p, struct pbj_job_args *a);

#endif
