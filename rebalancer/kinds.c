/* kinds.c - the drain and rebalance tasks (see kinds.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/ofs_error.h"
#include "rebalancer/kinds.h"
#include "rebalancer/move.h"

#define DRAIN_PASSES 10          /* walks while copies remain */

struct mover {
	struct task *t;
	uint64_t left;               /* drain: copies that could not move */
	int pass;                    /* drain: walks made; rebalance: 1 misplaced
	                                copies, 2 any */
	uint8_t nalloc;              /* rebalance: bytes still to send to each */
	struct ofs_sid alloc_sid[OFS_TASK_MAX_ALLOC];
	uint64_t alloc_left[OFS_TASK_MAX_ALLOC];
};

static int mover_init(struct task *t, void *arg, const struct ofs_task_req *q, void **state)
{
	struct mover *m = calloc(1, sizeof(*m));

	(void)arg;
	if (!m)
		return -ENOMEM;
	m->t = t;
	m->nalloc = q->nalloc < OFS_TASK_MAX_ALLOC ? q->nalloc : OFS_TASK_MAX_ALLOC;
	for (uint8_t i = 0; i < m->nalloc; i++) {
		m->alloc_sid[i] = q->alloc_sid[i];
		m->alloc_left[i] = q->alloc_bytes[i];
	}
	*state = m;
	return 0;
}

static void mover_release(void *state)
{
	free(state);
}

static bool dry(const struct mover *m)
{
	return (task_flags(m->t) & OFS_TASK_F_DRYRUN) != 0;
}

static int pace(uint64_t bytes, void *arg)
{
	return task_throttle(arg, bytes);
}

#define MOVE_RETRY_FIRST_MS 250
#define MOVE_RETRY_CAP_MS 2000
#define MOVE_RETRY_BUDGET_MS 10000

/* Move this server's copy of w's object away (to `to`, NULL: where
 * placement says) and drop it here. A copy or server that does not
 * answer, or an object held still by another move, is tried again after
 * a backoff (250 ms doubled up to 2 s, jittered: two servers waiting for
 * each other try again apart) for about 10 s; a refusal is not retried.
 * -ECANCELED when the task is cancelled. */
static int move_away(struct mover *m, const struct task_obj *w, const struct ofs_sid *to,
		     struct move_result *mr)
{
	struct task *t = m->t;
	struct store *s = task_store(t);
	unsigned flags = MOVE_F_DROP_SOURCE | (dry(m) ? MOVE_F_DRYRUN : 0);
	struct backoff bo;
	int rc = 0, wr;

	backoff_init(&bo, MOVE_RETRY_FIRST_MS, MOVE_RETRY_CAP_MS);
	for (;;) {
		if (task_hold(t))
			return -ECANCELED;
		rc = move_copy(s, task_sidtab(t), task_replicator(t), w->oid, &w->a, store_sid(s), to,
			       flags, task_rate(t), pace, t, mr);
		if (rc != -OFS_EUNREACHABLE && rc != -OFS_EMOVING && rc != -EAGAIN && rc != -EBUSY &&
		    rc != -OFS_EQUORUM)
			break;
		/* (-EBUSY: another server moving its copy of it) */
		wr = task_backoff(t, &bo, MOVE_RETRY_BUDGET_MS);
		if (wr == -ECANCELED)
			return wr;
		if (wr)
			break;           /* (spent: the last error stands) */
	}
	return rc;
}

static void finding_init(struct ofs_task_finding *f, const struct mover *m, struct ofs_oid oid)
{
	memset(f, 0, sizeof(*f));
	f->server = store_sid(task_store(m->t));
	f->oid = oid;
}

/* ---- drain ---------------------------------------------------------------- */

static int drain_begin(struct task *t, void *state)
{
	struct ofs_stats st;

	(void)state;
	if (store_stats(task_store(t), &st) == 0)
		task_set_totals(t, st.objects, st.bytes);
	return 0;
}

/* A copy that cannot be moved as it is: left, and counted. */
static int drain_leave(struct mover *m, const struct task_obj *w)
{
	struct ofs_task_finding f;

	finding_init(&f, m, w->oid);
	f.kind = w->decode_rc ? OFS_FINDING_RECORD_CORRUPT : OFS_FINDING_ORPHAN;
	snprintf(f.detail, sizeof(f.detail), "%s",
		 w->decode_rc ? "this copy's record does not decode: it cannot be moved"
			      : "this copy is not named by its own handle (a stray copy)");
	f.repair = OFS_REPAIR_LEFT;
	snprintf(f.action, sizeof(f.action), "left here: a scrub with --repair mends it, "
		 "then drain again");
	m->left++;
	return task_enqueue(m->t, &f);
}

static int drain_one(struct task *t, void *state, const struct task_obj *w, size_t at,
		     uint64_t *bytes)
{
	struct mover *m = state;
	struct ofs_sid me = store_sid(task_store(t));
	struct ofs_task_finding f;
	struct move_result mr;
	bool named = false;
	int rc;

	(void)at;
	*bytes = 0;
	for (uint8_t i = 0; i < w->a.nsids; i++)
		named |= sid_eq(w->a.sids[i], me);
	if (w->decode_rc || !named)
		return drain_leave(m, w);
	rc = move_away(m, w, NULL, &mr);
	if (rc == -ECANCELED)
		return rc;
	if (rc && rc != -EIO && rc != -EINVAL)
		return rc;               /* a server did not answer, say: the task fails
		                            and runs again (from the start: what moved
		                            is gone from here) */
	finding_init(&f, m, w->oid);
	if (dry(m)) {
		if (rc)
			return rc;
		f.kind = OFS_FINDING_MOVE;
		snprintf(f.detail, sizeof(f.detail), "%s copy of %llu bytes",
			 ofs_type_name(w->a.type), (unsigned long long)w->a.size);
		f.repair = OFS_REPAIR_WOULD;
		snprintf(f.action, sizeof(f.action), "%.500s", mr.detail);
		return task_enqueue(t, &f);
	}
	if (rc) {
		f.kind = OFS_FINDING_UNREADABLE;
		snprintf(f.detail, sizeof(f.detail), "could not be moved: %s", ofs_strerror(rc));
		f.repair = OFS_REPAIR_FAILED;
		snprintf(f.action, sizeof(f.action), "%.500s", mr.detail);
		m->left++;
		return task_enqueue(t, &f);
	}
	*bytes = w->a.type == OFS_OBJ_DFILE ? w->a.size : 0;
	return 0;
}

static int drain_end(struct task *t, void *state, int rc, struct ofs_oid last)
{
	struct mover *m = state;
	struct ofs_stats st;

	(void)last;
	if (rc)
		return rc;
	if (m->left) {
		char why[200];
		snprintf(why, sizeof(why), "%llu object%s could not be moved (see the report); "
			 "the server stays draining", (unsigned long long)m->left,
			 m->left == 1 ? "" : "s");
		task_set_reason(t, why);
		return -EIO;
	}
	if (!dry(m) && m->pass++ < DRAIN_PASSES && store_stats(task_store(t), &st) == 0 &&
	    st.objects > 0) {
		/* A client that had not yet heard the server is draining may
		 * have put an object here behind the walk: walk again until
		 * nothing is left (the placement's view settles in seconds). */
		rc = task_sleep(t, 500);
		return rc ? rc : TASK_AGAIN;
	}
	return 0;
}

static const struct task_kind drain_kind = {
	.kind = OFS_TASK_DRAIN,
	.name = "drain",
	.init = mover_init,
	.begin = drain_begin,
	.one = drain_one,
	.end = drain_end,
	.release = mover_release,
};

/* ---- rebalance -------------------------------------------------------------- */

/* A copy fits what is left to send to a target when it overshoots by at
 * most a 64th of that (at least 4 KiB): what is left is rarely a sum of
 * whole copies, and a small copy sent first must not keep out a large
 * one by a few bytes. */
static bool rebalance_fits(uint64_t size, uint64_t left)
{
	uint64_t slack = left / 64 > 4096 ? left / 64 : 4096;

	return left > 0 && size <= left + slack;
}

static bool bytes_left(const struct mover *m)
{
	for (int i = 0; i < m->nalloc; i++)
		if (m->alloc_left[i] > 0)
			return true;
	return false;
}

static int rebalance_begin(struct task *t, void *state)
{
	struct mover *m = state;
	struct ofs_stats st;
	uint64_t sum = 0;

	for (int i = 0; i < m->nalloc; i++)
		sum += m->alloc_left[i];
	task_set_totals(t, store_stats(task_store(t), &st) == 0 ? st.objects : UINT64_MAX, sum);
	m->pass = 1;
	return 0;
}

/* A target with room for this copy, that holds none and keeps the spread:
 * on pass 1 only a server placement would choose (the copy is misplaced
 * here), on pass 2 any. -1 when none. */
static int rebalance_target(struct mover *m, const struct task_obj *w)
{
	struct sidtab *tab = task_sidtab(m->t);
	struct ofs_sid me = store_sid(task_store(m->t));
	int best = -1;

	for (int i = 0; i < m->nalloc; i++) {
		bool holds = false;
		if (!rebalance_fits(w->a.size, m->alloc_left[i]) || w->a.size == 0)
			continue;
		for (uint8_t j = 0; j < w->a.nsids; j++)
			holds |= sid_eq(w->a.sids[j], m->alloc_sid[i]);
		if (holds || !move_keeps_spread(tab, &w->a, me, m->alloc_sid[i]))
			continue;
		if (m->pass == 1 && !move_placed_on(tab, w->oid, w->a.nsids, m->alloc_sid[i]))
			continue;
		if (best < 0 || m->alloc_left[i] > m->alloc_left[best])
			best = i;
	}
	return best;
}

/* A server just returned to service: its state may not have reached this
 * server by gossip yet. Wait a little (20 s); then give up on it. */
static int target_in(struct mover *m, int at, bool *in)
{
	for (int wait = 0; wait < 80; wait++) {
		struct ofs_server e;
		if (sidtab_get(task_sidtab(m->t), m->alloc_sid[at], &e) == 0 &&
		    e.state == OFS_SERVER_IN) {
			*in = true;
			return 0;
		}
		if (task_sleep(m->t, 250))
			return -ECANCELED;
	}
	*in = false;
	m->alloc_left[at] = 0;
	return 0;
}

/* Is this copy one to move on this pass? */
static bool rebalance_wants(const struct mover *m, const struct task_obj *w)
{
	struct ofs_sid me = store_sid(task_store(m->t));
	bool named = false;

	if (w->decode_rc || w->a.type != OFS_OBJ_DFILE)
		return false;            /* only file data weighs */
	for (uint8_t i = 0; i < w->a.nsids; i++)
		named |= sid_eq(w->a.sids[i], me);
	if (!named)
		return false;
	/* (where placement wants it: pass 2) */
	return m->pass != 1 || !move_placed_on(task_sidtab(m->t), w->oid, w->a.nsids, me);
}

/* Move this copy where the plan sends bytes, if it fits. TASK_STOP:
 * nothing left to send. */
static int rebalance_one(struct task *t, void *state, const struct task_obj *w, size_t i,
			 uint64_t *bytes)
{
	struct mover *m = state;
	struct ofs_task_finding f;
	struct move_result mr;
	bool in = false;
	int at, rc;

	(void)i;
	*bytes = 0;
	if (!bytes_left(m))
		return TASK_STOP;
	if (!rebalance_wants(m, w) || (at = rebalance_target(m, w)) < 0)
		return 0;
	rc = target_in(m, at, &in);
	if (rc || !in)
		return rc;
	rc = move_away(m, w, &m->alloc_sid[at], &mr);
	if (rc == -ECANCELED || rc == -OFS_EUNREACHABLE)
		return rc;
	if (rc == -EEXIST)
		return 0;                /* another server moved its copy there
		                            meanwhile: this one stays */
	finding_init(&f, m, w->oid);
	if (rc) {
		/* Left where it is: the plan's bytes come from other copies. */
		f.kind = OFS_FINDING_UNREADABLE;
		snprintf(f.detail, sizeof(f.detail), "could not be moved: %s", ofs_strerror(rc));
		f.repair = OFS_REPAIR_FAILED;
		snprintf(f.action, sizeof(f.action), "%.500s", mr.detail);
		return task_enqueue(t, &f);
	}
	m->alloc_left[at] = m->alloc_left[at] > w->a.size ? m->alloc_left[at] - w->a.size : 0;
	*bytes = w->a.size;
	if (dry(m)) {
		f.kind = OFS_FINDING_MOVE;
		snprintf(f.detail, sizeof(f.detail), "file data of %llu bytes%s",
			 (unsigned long long)w->a.size,
			 m->pass == 1 ? " (placement wants it elsewhere)" : "");
		f.repair = OFS_REPAIR_WOULD;
		snprintf(f.action, sizeof(f.action), "%.500s", mr.detail);
		return task_enqueue(t, &f);
	}
	return 0;
}

static int rebalance_end(struct task *t, void *state, int rc, struct ofs_oid last)
{
	struct mover *m = state;

	(void)t;
	(void)last;
	if (!rc && m->pass == 1 && bytes_left(m)) {
		/* The copies placement wants elsewhere went first; now any
		 * copy that fits. */
		m->pass = 2;
		return TASK_AGAIN;
	}
	return rc;
}

static const struct task_kind rebalance_kind = {
	.kind = OFS_TASK_REBALANCE,
	.name = "rebalance",
	.init = mover_init,
	.begin = rebalance_begin,
	.one = rebalance_one,
	.end = rebalance_end,
	.release = mover_release,
};

int rebalancer_add_kinds(struct taskhost *h)
{
	int rc = taskhost_add_kind(h, &drain_kind);

	return rc ? rc : taskhost_add_kind(h, &rebalance_kind);
}
