/*
 * test_repair.c - a fetch of a good copy (server/repair.h, repair_fetch)
 * and the other servers' records of this copy (STALE_CLEAR), with this
 * server's real store and fake peers (fake_server.h): X, a dfile with
 * copies here (old), on P (current: the source, answering from a real
 * store of its own through the real operation handlers) and on O (which
 * holds none). docs/design.md, "Repair":
 *   - a fetch whose install commits tells P and O that this copy is
 *     current, and only once it is installed here (their records of it
 *     go only when nothing can undo the install);
 *   - a fetch whose install is refused (the copy here changed while the
 *     bytes were on their way) tells nobody anything: their records of
 *     this copy, the only account elsewhere that it missed changes, stay.
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
#include "server/ops.h"
#include "server/repair.h"
#include "server/replica.h"
#include "server/service.h"
#include "server/sidtab.h"
#include "store/store.h"
#include "tests/unit/fake_server.h"

#define XLEN 20000

struct peer {
	struct fake_server *srv;
	struct fixture *fx;
	bool source;                 /* answers from the source store */
	int summaries;               /* SUMMARYs answered */
	int clears;                  /* STALE_CLEARs taken */
	uint64_t clear_version;
	uint64_t here_at_clear;      /* the version of this server's copy then */
};

struct fixture {
	char dir[64];
	struct store *s;             /* this server's */
	struct store *src;           /* P's */
	struct service psv;          /* P's handlers, on src */
	struct sidtab *t;
	struct replicator *r;
	struct peer p, o;
	struct ofs_oid x;
	bool change_here;            /* at P's second SUMMARY: change the copy here */
};

static int answer(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
		  struct wbuf *reply)
{
	struct peer *pe = arg;
	struct fixture *fx = pe->fx;
	struct ofs_attr *a;

	(void)forwarded;
	if (op == OFS_OP_STALE_CLEAR) {
		a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		pe->clears++;
		pe->clear_version = q->version;
		pe->here_at_clear = store_getattr(fx->s, fx->x, a) == 0 ? a->version : 0;
		free(a);
		return 0;
	}
	if (op == OFS_OP_SUMMARY && !pe->source) {
		struct ofs_summary sm;
		memset(&sm, 0, sizeof(sm));  /* (holds none) */
		proto_encode_summary(reply, &sm);
		return 0;
	}
	if (!pe->source)
		return -OFS_EUNKNOWNOP;
	if (op == OFS_OP_SUMMARY && ++pe->summaries == 2 && fx->change_here) {
		/* the fetch's last look at the source: meanwhile a change
		 * reached the copy here */
		struct ofs_attr in;
		memset(&in, 0, sizeof(in));
		in.mode = 0600;
		assert_int_equal(store_setattr(fx->s, fx->x, OFS_ATTR_MODE, &in, NULL), 0);
	}
	if (op != OFS_OP_SUMMARY && op != OFS_OP_GETATTR && op != OFS_OP_READ &&
	    op != OFS_OP_VERIFY)
		return -OFS_EUNKNOWNOP;
	{
		struct ofs_req *c = malloc(sizeof(*c));
		int rc;
		if (!c)
			return -ENOMEM;
		*c = *q;
		rc = ops_handler(op)(&fx->psv, c, reply);
		free(c);
		return rc;
	}
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static struct store *new_store(struct fixture *fx, const char *name)
{
	char p[128];
	struct ofs_sid sid;
	struct store *s = NULL;

	snprintf(p, sizeof(p), "%s/%s", fx->dir, name);
	assert_int_equal(store_init(p, 4096, NULL, 0, &sid), 0);
	assert_int_equal(store_open(p, false, &s), 0);
	return s;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct ofs_attr *xa = calloc(1, sizeof(*xa));
	uint8_t *bytes = malloc(XLEN);
	uint64_t v, size;

	assert_non_null(fx);
	assert_non_null(xa);
	assert_non_null(bytes);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/ofs-repair.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->s = new_store(fx, "me");
	fx->src = new_store(fx, "p");
	fx->p.fx = fx->o.fx = fx;
	fx->p.source = true;
	fx->p.srv = fake_server_start(answer, &fx->p);
	fx->o.srv = fake_server_start(answer, &fx->o);
	assert_non_null(fx->p.srv);
	assert_non_null(fx->o.srv);
	assert_int_equal(fake_table(fx->s, "127.0.0.1:1", (struct fake_server *[]){ fx->p.srv,
				    fx->o.srv }, 2, &fx->t, &fx->r), 0);
	service_init(&fx->psv, fx->src, fx->t, NULL, NULL);
	/* X: the same dfile here (empty, version 1) and on P (written since) */
	xa->type = OFS_OBJ_DFILE;
	xa->nsids = 3;
	xa->sids[0] = store_sid(fx->s);
	xa->sids[1] = fx->p.srv->sid;
	xa->sids[2] = fx->o.srv->sid;
	xa->replicas = 3;
	xa->confidence = 2;
	assert_int_equal(oid_generate(&fx->x), 0);
	assert_int_equal(store_create_oid(fx->s, xa, fx->x, &fx->x), 0);
	assert_int_equal(store_create_oid(fx->src, xa, fx->x, &fx->x), 0);
	for (size_t i = 0; i < XLEN; i++)
		bytes[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(store_write(fx->src, fx->x, 0, bytes, XLEN, &v, &size), 0);
	assert_true(v > 1);
	free(bytes);
	free(xa);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	replica_close(fx->r);
	fake_server_stop(fx->p.srv);
	fake_server_stop(fx->o.srv);
	service_fini(&fx->psv);
	sidtab_close(fx->t);
	store_close(fx->s);
	store_close(fx->src);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static int fetch(struct fixture *fx, struct ofs_fetch_reply *fr)
{
	struct ofs_sid cands[2] = { fx->p.srv->sid, fx->o.srv->sid };

	return repair_fetch(fx->s, fx->t, fx->r, fx->x, cands, 2, OFS_FETCH_LOCALBAD, "test",
			    NULL, NULL, fr);
}

/* ---- tests --------------------------------------------------------------------- */

static void test_the_records_go_once_the_install_is_done(void **state)
{
	struct fixture *fx = *state;
	struct ofs_summary mine, theirs;
	struct ofs_fetch_reply fr;

	assert_int_equal(fetch(fx, &fr), 0);
	assert_int_equal(fr.outcome, OFS_FETCH_DONE);
	assert_int_equal(store_summary(fx->s, fx->x, &mine), 0);
	assert_int_equal(store_summary(fx->src, fx->x, &theirs), 0);
	assert_int_equal(mine.version, theirs.version);
	assert_true(digest_eq(mine.digest, theirs.digest));
	/* both told, of the version installed, once it was installed here */
	for (struct peer *pe = &fx->p; pe; pe = pe == &fx->p ? &fx->o : NULL) {
		assert_int_equal(pe->clears, 1);
		assert_int_equal(pe->clear_version, theirs.version);
		assert_int_equal(pe->here_at_clear, theirs.version);
	}
}

static void test_a_refused_install_keeps_the_records(void **state)
{
	struct fixture *fx = *state;
	struct ofs_fetch_reply fr;
	struct ofs_attr a;

	fx->change_here = true;
	assert_int_equal(fetch(fx, &fr), -EAGAIN);
	/* the copy here is as the change left it, not the fetched one ... */
	assert_int_equal(store_getattr(fx->s, fx->x, &a), 0);
	assert_int_equal(a.size, 0);
	assert_int_equal(a.mode, 0600);
	/* ... and nobody was told it is current */
	assert_int_equal(fx->p.clears, 0);
	assert_int_equal(fx->o.clears, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_the_records_go_once_the_install_is_done, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_refused_install_keeps_the_records, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
