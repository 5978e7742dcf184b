/* suspect.c - copies a reader found bad, mended first (see suspect.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "server/repair.h"
#include "server/suspect.h"
#include "store/store.h"

#define RECENT 64                  /* copies remembered for SUSPECT_AGAIN_MS */

struct suspect {
	struct ofs_oid oid;
	struct ofs_sid bad;
	char why[64];
};

/* Lock: mu guards everything below it; the worker sleeps on cv. */
struct suspects {
	struct store *store;
	struct sidtab *tab;
	struct replicator *rep;
	uint64_t rate;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct suspect q[SUSPECT_MAX];     /* a ring: head, n */
	size_t head, n;
	struct recent {
		struct ofs_oid oid;
		struct ofs_sid bad;
		int64_t at_ms;                 /* 0: a free slot */
	} recent[RECENT];
	struct suspect_counts counts;
};

/* Whether (oid, bad) was taken lately; if not, it is remembered now (the
 * oldest slot goes). mu held. */
static bool seen_lately(struct suspects *q, struct ofs_oid oid, struct ofs_sid bad)
{
	int64_t now = log_now_ms();
	size_t oldest = 0;

	for (size_t i = 0; i < RECENT; i++) {
		struct recent *r = &q->recent[i];
		if (r->at_ms && oid_eq(r->oid, oid) && sid_eq(r->bad, bad) &&
		    now - r->at_ms < SUSPECT_AGAIN_MS)
			return true;
		if (r->at_ms < q->recent[oldest].at_ms)
			oldest = i;
	}
	q->recent[oldest] = (struct recent){ .oid = oid, .bad = bad, .at_ms = now };
	return false;
}

/* Whether this server holds oid and its record names bad as a copy. */
static bool ours_to_report(struct suspects *q, struct ofs_oid oid, struct ofs_sid bad)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	bool named = false;

	if (!a || sid_eq(bad, store_sid(q->store)) || store_getattr(q->store, oid, a) != 0) {
		free(a);
		return false;
	}
	for (uint8_t i = 0; i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		named |= sid_eq(a->sids[i], bad);
	free(a);
	return named;
}

int suspects_add(struct suspects *q, struct ofs_oid oid, struct ofs_sid bad, const char *why)
{
	int rc = 0;

	if (!ours_to_report(q, oid, bad))
		return -EINVAL;
	pthread_mutex_lock(&q->mu);
	if (q->n == SUSPECT_MAX)
		rc = -ENOSPC;
	else if (seen_lately(q, oid, bad))
		rc = -EALREADY;
	if (!rc) {
		struct suspect *s = &q->q[(q->head + q->n++) % SUSPECT_MAX];
		s->oid = oid;
		s->bad = bad;
		snprintf(s->why, sizeof(s->why), "%s", why);
		q->counts.queued++;
		pthread_cond_signal(&q->cv);
	} else {
		q->counts.dropped++;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Ask bad's server to verify its copy and mend it from the others. */
static void mend(struct suspects *q, const struct suspect *s)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_sid cands[OFS_MAX_REPLICAS];
	struct ofs_fetch_reply out;
	char oh[OFS_OID_HEX], sh[OFS_OID_HEX];
	struct repair_pacer pacer = { .rate = q->rate };
	size_t n = 0;
	int rc = a ? store_getattr(q->store, s->oid, a) : -ENOMEM;

	for (uint8_t i = 0; !rc && i < a->nsids && i < OFS_MAX_REPLICAS; i++)
		if (!sid_eq(a->sids[i], s->bad))
			cands[n++] = a->sids[i];
	free(a);
	memset(&out, 0, sizeof(out));
	if (!rc && n == 0)
		rc = -ENOENT;              /* (no other copy to mend it from) */
	if (!rc)
		rc = repair_fetch_at(q->store, q->tab, q->rep, s->bad, s->oid, cands, n, 0, q->rate,
				     "suspect", repair_pace_rate, &pacer, &out);
	oid_to_hex(s->oid, oh);
	sid_to_hex(s->bad, sh);
	pthread_mutex_lock(&q->mu);
	if (!rc && out.outcome == OFS_FETCH_DONE)
		q->counts.mended++;
	else if (!rc && out.outcome == OFS_FETCH_GOOD)
		q->counts.good++;
	else
		q->counts.failed++;
	pthread_mutex_unlock(&q->mu);
	if (rc)
		log_warn("suspect: copy of %s on %s (a reader: %s): not mended: %s", oh, sh, s->why,
			 ofs_strerror(rc));
	else
		log_info("suspect: copy of %s on %s (a reader: %s): %s", oh, sh, s->why,
			 out.detail[0] ? out.detail : "done");
}

static void *worker(void *arg)
{
	struct suspects *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		struct suspect s;
		while (!q->stop && q->n == 0)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop)
			break;
		s = q->q[q->head];
		q->head = (q->head + 1) % SUSPECT_MAX;
		q->n--;
		pthread_mutex_unlock(&q->mu);
		mend(q, &s);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int suspects_start(struct store *s, struct sidtab *t, struct replicator *r, uint64_t rate,
		   struct suspects **out)
{
	struct suspects *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->store = s;
	q->tab = t;
	q->rep = r;
	q->rate = rate;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	rc = pthread_create(&q->thread, NULL, worker, q);
	if (rc) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return -rc;
	}
	*out = q;
	return 0;
}

void suspects_counts(struct suspects *q, struct suspect_counts *out)
{
	pthread_mutex_lock(&q->mu);
	*out = q->counts;
	pthread_mutex_unlock(&q->mu);
}

void suspects_stop(struct suspects *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}
