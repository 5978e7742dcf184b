/*
 * test_move.c - the move step (rebalancer/move.h) as a state machine,
 * with this server's real store and fake peers (fake_server.h) that
 * record what they are sent: a dfile copy here (SIDs [me, P], owner M on
 * P) moved away to T, with MOVE_F_DROP_SOURCE as drain and rebalance do.
 *   - in full: the target fetches a verified copy (REPAIR_FETCH, from the
 *     others and this copy); every copy in service is held still (FREEZE)
 *     and let go after; the copies kept and the new one get the new
 *     handle, `me` replaced by T in its place; the owner's pointer to it
 *     is rewritten (that one part); the copy here and the note go;
 *   - a run that stops after the target is noted (a peer refuses to hold
 *     it still) leaves the copy here, and the next run goes to the same
 *     target though placement would choose another;
 *   - a target behind the others after its fetch is fetched again, as a
 *     bad copy;
 *   - a dry run changes nothing and sends nothing;
 *   - the SID list changed by another move since it was read: run again
 *     with the list as it is.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "rebalancer/move.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "store/store.h"
#include "tests/unit/fake_server.h"

#define MAXREC 64

/* What one fake peer was sent. */
struct rec {
	uint16_t op;
	struct ofs_oid oid;
	uint32_t mask, ms, flags;
	uint8_t nsids;
	struct ofs_sid sids[OFS_MAX_REPLICAS];
	struct ofs_handle part;      /* SETATTR PART: the part written */
	uint32_t slot;
	uint8_t ncands;
	struct ofs_sid cands[OFS_MAX_REPLICAS];
};

struct peer {
	const char *name;
	struct fake_server *srv;
	struct rec rec[MAXREC];
	int nrec;
	/* the script */
	bool holds_x;                /* has a copy of X (SUMMARY) */
	uint64_t x_version;
	bool holds_m;                /* has the owner M (GETATTR) */
	bool refuse_freeze;
	int behind_summaries;        /* SUMMARY of X says one version behind, this many times */
	struct fixture *fx;
};

struct fixture {
	char dir[64];
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	struct peer me, p, tg, u;    /* me: this server's own address (FREEZE to itself) */
	struct ofs_oid x, m;
	struct ofs_attr *xa;         /* X's record here */
};

static const struct ofs_digest D = { { 7 } };

static int answer(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
		  struct wbuf *reply)
{
	struct peer *pe = arg;
	struct fixture *fx = pe->fx;
	struct rec *r = pe->nrec < MAXREC ? &pe->rec[pe->nrec++] : &pe->rec[MAXREC - 1];

	(void)forwarded;
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->oid = q->oid;
	r->mask = q->mask;
	r->ms = q->ms;
	r->flags = q->flags;
	r->nsids = q->attr.nsids;
	memcpy(r->sids, q->attr.sids, sizeof(r->sids));
	r->part = q->attr.parts[0];
	r->slot = q->attr.backref.stripe;
	r->ncands = q->ncands;
	memcpy(r->cands, q->cands, sizeof(r->cands));
	switch (op) {
	case OFS_OP_FREEZE:
		return pe->refuse_freeze && q->ms ? -EIO : 0;
	case OFS_OP_REPAIR_FETCH: {
		struct ofs_fetch_reply fr = { .outcome = OFS_FETCH_DONE, .version = 5, .bytes = 4096 };
		fr.source = fx->p.srv->sid;
		pe->holds_x = true;
		pe->x_version = 5;
		proto_encode_fetch_reply(reply, &fr);
		return 0;
	}
	case OFS_OP_SUMMARY: {
		struct ofs_summary sm;
		memset(&sm, 0, sizeof(sm));
		sm.present = pe->holds_x && oid_eq(q->oid, fx->x);
		sm.type = OFS_OBJ_DFILE;
		sm.version = pe->x_version;
		if (pe->behind_summaries > 0) {
			pe->behind_summaries--;
			sm.version--;
		}
		sm.digest = D;
		proto_encode_summary(reply, &sm);
		return 0;
	}
	case OFS_OP_GETATTR: {
		struct ofs_attr *a;
		if (!pe->holds_m || !oid_eq(q->oid, fx->m))
			return -ENOENT;
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->type = OFS_OBJ_METAFILE;
		a->version = 3;
		a->nsids = 1;
		a->sids[0] = fx->p.srv->sid;
		a->nparts = 1;
		a->parts[0].oid = fx->x;
		a->parts[0].nsids = 2;
		a->parts[0].sids[0] = store_sid(fx->s);
		a->parts[0].sids[1] = fx->p.srv->sid;
		proto_encode_attr(reply, a);
		free(a);
		return 0;
	}
	case OFS_OP_SETATTR:
		return 0;
	default:
		return -OFS_EUNKNOWNOP;
	}
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static void peer_start(struct fixture *fx, struct peer *pe, const char *name)
{
	pe->name = name;
	pe->fx = fx;
	pe->srv = fake_server_start(answer, pe);
	assert_non_null(pe->srv);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char p[128];
	struct ofs_sid sid;

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/ofs-move.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(p, sizeof(p), "%s/me", fx->dir);
	assert_int_equal(store_init(p, 4096, NULL, 0, &sid), 0);
	assert_int_equal(store_open(p, false, &fx->s), 0);
	peer_start(fx, &fx->me, "me");
	peer_start(fx, &fx->p, "P");
	peer_start(fx, &fx->tg, "T");
	peer_start(fx, &fx->u, "U");
	/* this server answers on the address its fake does (FREEZE to itself) */
	assert_int_equal(fake_table(fx->s, fx->me.srv->addr, (struct fake_server *[]){ fx->p.srv,
				    fx->tg.srv, fx->u.srv }, 3, &fx->t, &fx->r), 0);
	/* X: a dfile, copies here and on P; its owner M (stripe 0) on P */
	assert_int_equal(oid_generate(&fx->m), 0);
	fx->xa = calloc(1, sizeof(*fx->xa));
	assert_non_null(fx->xa);
	fx->xa->type = OFS_OBJ_DFILE;
	fx->xa->nsids = 2;
	fx->xa->sids[0] = store_sid(fx->s);
	fx->xa->sids[1] = fx->p.srv->sid;
	fx->xa->replicas = 2;
	fx->xa->confidence = 1;
	fx->xa->backref.owner = fx->m;
	fx->xa->backref.stripe = 0;
	assert_int_equal(store_create(fx->s, fx->xa, &fx->x), 0);
	assert_int_equal(store_getattr(fx->s, fx->x, fx->xa), 0);
	fx->p.holds_x = true;
	fx->p.x_version = 5;
	fx->p.holds_m = true;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	replica_close(fx->r);
	fake_server_stop(fx->me.srv);
	fake_server_stop(fx->p.srv);
	fake_server_stop(fx->tg.srv);
	fake_server_stop(fx->u.srv);
	sidtab_close(fx->t);
	store_close(fx->s);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx->xa);
	free(fx);
	return 0;
}

static int count(const struct peer *pe, uint16_t op)
{
	int n = 0;

	for (int i = 0; i < pe->nrec; i++)
		n += pe->rec[i].op == op;
	return n;
}

static const struct rec *nth(const struct peer *pe, uint16_t op, int k)
{
	for (int i = 0; i < pe->nrec; i++)
		if (pe->rec[i].op == op && k-- == 0)
			return &pe->rec[i];
	fail_msg("%s was not sent op %u that many times", pe->name, op);
	return NULL;
}

static bool has(const struct ofs_sid *v, uint8_t n, struct ofs_sid s)
{
	for (uint8_t i = 0; i < n; i++)
		if (sid_eq(v[i], s))
			return true;
	return false;
}

static int move_to(struct fixture *fx, const struct ofs_sid *to, unsigned flags,
		   struct move_result *mr)
{
	return move_copy(fx->s, fx->t, fx->r, fx->x, fx->xa, store_sid(fx->s), to,
			 flags | MOVE_F_DROP_SOURCE, 0, NULL, NULL, mr);
}

/* ---- tests --------------------------------------------------------------------- */

static void test_a_move_in_full(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid me = store_sid(fx->s), T = fx->tg.srv->sid, P = fx->p.srv->sid, noted;
	struct move_result mr;
	const struct rec *r;

	assert_int_equal(move_to(fx, &T, 0, &mr), 0);
	assert_true(sid_eq(mr.target, T));
	/* the target fetched a verified copy from the others and this one */
	r = nth(&fx->tg, OFS_OP_REPAIR_FETCH, 0);
	assert_true(oid_eq(r->oid, fx->x));
	assert_true(has(r->cands, r->ncands, P) && has(r->cands, r->ncands, me));
	/* held still on every copy in service, then let go (T too) */
	assert_int_equal(nth(&fx->me, OFS_OP_FREEZE, 0)->ms, MOVE_HOLD_MS);
	assert_int_equal(nth(&fx->p, OFS_OP_FREEZE, 0)->ms, MOVE_HOLD_MS);
	assert_int_equal(nth(&fx->me, OFS_OP_FREEZE, 1)->ms, 0);
	assert_int_equal(nth(&fx->p, OFS_OP_FREEZE, 1)->ms, 0);
	assert_int_equal(nth(&fx->tg, OFS_OP_FREEZE, 0)->ms, 0);
	/* the new handle on P and T: me replaced by T in its place */
	for (struct peer *pe = &fx->p; pe; pe = pe == &fx->p ? &fx->tg : NULL) {
		r = NULL;
		for (int i = 0; i < pe->nrec; i++)
			if (pe->rec[i].op == OFS_OP_SETATTR && (pe->rec[i].mask & OFS_ATTR_SIDS))
				r = &pe->rec[i];
		assert_non_null(r);
		assert_int_equal(r->nsids, 2);
		assert_true(sid_eq(r->sids[0], T));
		assert_true(sid_eq(r->sids[1], P));
	}
	/* the owner's pointer: that one part, to the new handle */
	r = NULL;
	for (int i = 0; i < fx->p.nrec; i++)
		if (fx->p.rec[i].op == OFS_OP_SETATTR && (fx->p.rec[i].mask & OFS_ATTR_PART))
			r = &fx->p.rec[i];
	assert_non_null(r);
	assert_true(oid_eq(r->oid, fx->m));
	assert_int_equal(r->slot, 0);
	assert_true(oid_eq(r->part.oid, fx->x));
	assert_true(sid_eq(r->part.sids[0], T));
	/* the copy here and the note are gone */
	assert_int_equal(store_getattr(fx->s, fx->x, fx->xa), -ENOENT);
	assert_int_equal(store_move_get(fx->s, fx->x, &noted), -ENOENT);
	assert_int_equal(count(&fx->u, OFS_OP_REPAIR_FETCH), 0);
}

static void test_a_stopped_run_goes_on_to_the_same_target(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid noted, chosen, other;
	struct move_result mr;
	struct ofs_attr *a = malloc(sizeof(*a));
	struct peer *op;

	assert_non_null(a);
	/* what placement would choose (T or U): the run goes to the other */
	assert_int_equal(move_to(fx, NULL, MOVE_F_DRYRUN, &mr), 0);
	chosen = mr.target;
	assert_true(sid_eq(chosen, fx->tg.srv->sid) || sid_eq(chosen, fx->u.srv->sid));
	op = sid_eq(chosen, fx->tg.srv->sid) ? &fx->u : &fx->tg;
	other = op->srv->sid;
	fx->p.refuse_freeze = true;
	assert_int_not_equal(move_to(fx, &other, 0, &mr), 0);
	/* stopped after the fetch: the copy stays here, the target noted */
	assert_int_equal(count(op, OFS_OP_REPAIR_FETCH), 1);
	assert_int_equal(store_getattr(fx->s, fx->x, a), 0);
	assert_int_equal(store_move_get(fx->s, fx->x, &noted), 0);
	assert_true(sid_eq(noted, other));
	assert_int_equal(nth(&fx->me, OFS_OP_FREEZE, 1)->ms, 0);   /* let go */
	/* again, placement's choice asked for (to NULL): the noted target */
	fx->p.refuse_freeze = false;
	assert_int_equal(move_to(fx, NULL, 0, &mr), 0);
	assert_true(sid_eq(mr.target, other));
	assert_int_equal(count(op == &fx->tg ? &fx->u : &fx->tg, OFS_OP_REPAIR_FETCH), 0);
	assert_int_equal(store_getattr(fx->s, fx->x, a), -ENOENT);
	assert_int_equal(store_move_get(fx->s, fx->x, &noted), -ENOENT);
	free(a);
}

static void test_a_target_behind_is_fetched_again(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid T = fx->tg.srv->sid;
	struct move_result mr;

	fx->tg.behind_summaries = 1;     /* a change landed after its fetch */
	assert_int_equal(move_to(fx, &T, 0, &mr), 0);
	assert_int_equal(count(&fx->tg, OFS_OP_REPAIR_FETCH), 2);
	assert_true(nth(&fx->tg, OFS_OP_REPAIR_FETCH, 1)->flags & OFS_FETCH_LOCALBAD);
	assert_int_equal(mr.bytes, 2 * 4096);
}

static void test_a_dry_run_changes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid T = fx->tg.srv->sid, noted;
	struct move_result mr;
	struct ofs_attr *a = malloc(sizeof(*a));

	assert_non_null(a);
	assert_int_equal(move_to(fx, &T, MOVE_F_DRYRUN, &mr), 0);
	assert_non_null(strstr(mr.detail, "would copy it to"));
	assert_int_equal(fx->me.nrec + fx->p.nrec + fx->tg.nrec + fx->u.nrec, 0);
	assert_int_equal(store_getattr(fx->s, fx->x, a), 0);
	assert_int_equal(store_move_get(fx->s, fx->x, &noted), -ENOENT);
	free(a);
}

static void test_copies_changed_meanwhile_run_again_with_the_list_as_it_is(void **state)
{
	struct fixture *fx = *state;
	struct ofs_sid T = fx->tg.srv->sid, P = fx->p.srv->sid;
	struct move_result mr;
	const struct rec *r = NULL;

	/* the caller read the list before another move put P where U was */
	fx->xa->sids[1] = fx->u.srv->sid;
	assert_int_equal(move_to(fx, &T, 0, &mr), 0);
	for (int i = 0; i < fx->tg.nrec; i++)
		if (fx->tg.rec[i].op == OFS_OP_SETATTR && (fx->tg.rec[i].mask & OFS_ATTR_SIDS))
			r = &fx->tg.rec[i];
	assert_non_null(r);
	assert_true(sid_eq(r->sids[0], T));
	assert_true(sid_eq(r->sids[1], P));    /* the list as it is, not as it was read */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_move_in_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_stopped_run_goes_on_to_the_same_target, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_target_behind_is_fetched_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_dry_run_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_copies_changed_meanwhile_run_again_with_the_list_as_it_is, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
