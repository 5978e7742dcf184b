/*
 * plan.h - the rebalance plan: how many bytes move from which server to
 * which, so that every server's used fraction ends within a threshold of
 * the cluster's mean, moving as few bytes as possible (docs/design.md,
 * "Rebalance"). A pure function of the servers' usage: the scheduler computes it
 * when a rebalance task starts (again after a crash, from the usage as it
 * is then), `submit rebalance --dry-run` prints it.
 *
 * With capacities c_i, used bytes u_i and the mean fraction m = sum u /
 * sum c, server i is within the threshold t when |u_i/c_i - m| <= t. The
 * least any plan can move is max(sum of excesses over (m+t)c_i, sum of
 * shortfalls under (m-t)c_i): every byte over the upper line must leave
 * its server, every byte under the lower line must arrive. The plan aims
 * a little inside the lines (t' = t - min(t/4, 2 points)) so that moving
 * whole objects lands within them, and moves that many bytes: each
 * server over the line sheds its excess, each under it receives its
 * shortfall, and when one side needs more, the servers nearest to it
 * make it up (the fullest shed, the emptiest receive), never crossing the
 * inner lines. Sources and targets are then paired, largest first.
 */
#ifndef OFS_PLAN_H
#define OFS_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"

#define PLAN_MAX_MOVES 64

struct plan_server {
	struct ofs_sid sid;
	uint64_t used;                 /* bytes of file data it holds */
	uint64_t capacity;             /* bytes it may hold; 0: left out */
	bool in;                       /* in service and answering: may give and take */
};

struct plan_move {
	struct ofs_sid from, to;
	uint64_t bytes;
};

struct plan {
	double mean;                   /* the cluster's used fraction */
	double threshold;              /* t, a fraction (0.10 for 10 points) */
	uint64_t min_bytes;            /* the least any plan must move */
	uint64_t bytes;                /* this plan moves */
	bool balanced;                 /* every server within t already */
	size_t nmoves;
	struct plan_move moves[PLAN_MAX_MOVES];
};

/*
 * Plan for servers[0..n-1] with threshold_pct points (0 < pct <= 100).
 * Servers not in service or without capacity neither give nor take (nor
 * count in the mean). -EINVAL for a bad threshold, n 0 or a NULL; 0 with
 * *out filled otherwise (nmoves 0 when balanced).
 */
int plan_rebalance(const struct plan_server *servers, size_t n, double threshold_pct,
		   struct plan *out);

/* The bytes server sid is to send to each target: out[i], up to max;
 * returns how many. */
size_t plan_moves_from(const struct plan *p, struct ofs_sid sid, struct plan_move *out, size_t max);

#endif
