/*
 * test_dirent_vote.c - a DIRENT_CREATE that replaces a name, taken by this
 * server as primary (server/service.c, handle_replicated) with its real
 * store and two fake copies P and O that answer the forwarded create as
 * scripted: the client is told the entry most copies replaced, a primary
 * that is outvoted marks its own copy behind, a copy that answered
 * otherwise is recorded stale here, an answer naming the file being
 * linked has no vote, and a copy skipped as silent is asked after all
 * when the answers disagree (docs/design.md, "Partitions").
 */
#include <errno.h>
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
#include "server/replica.h"
#include "server/service.h"
#include "server/sidtab.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"
#include "tests/unit/fake_server.h"

/* What a fake copy answers to the forwarded DIRENT_CREATE. */
struct peer {
	struct fake_server *srv;
	bool present;
	struct ofs_oid old;
	int creates;
};

struct fixture {
	struct tmpstore ts;          /* the store (s: ts.s) */
	struct store *s;
	struct sidtab *t;
	struct replicator *r;
	struct service sv;
	struct peer p, o;
	struct ofs_oid dd;           /* the dirdata: copies here, on P and on O */
	struct ofs_oid m0, m1;       /* the file named now, the file linked */
};

static int answer(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
		  struct wbuf *reply)
{
	struct peer *pe = arg;
	struct ofs_dirent d;

	(void)q;
	if (op != OFS_OP_DIRENT_CREATE || !forwarded)
		return -OFS_EUNKNOWNOP;
	pe->creates++;
	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	d.handle.oid = pe->old;
	d.handle.nsids = 1;
	d.handle.sids[0] = pe->srv->sid;
	proto_encode_dirent_reply(reply, pe->present, &d);
	return 0;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct ofs_attr in;
	struct ofs_oid dir;

	assert_non_null(fx);
	assert_int_equal(tmpstore_make("vote", 4096, &fx->ts), 0);
	fx->s = fx->ts.s;
	fx->p.srv = fake_server_start(answer, &fx->p);
	fx->o.srv = fake_server_start(answer, &fx->o);
	assert_non_null(fx->p.srv);
	assert_non_null(fx->o.srv);
	assert_int_equal(fake_table(fx->s, "127.0.0.1:1", (struct fake_server *[]){ fx->p.srv,
				    fx->o.srv }, 2, &fx->t, &fx->r), 0);
	service_init(&fx->sv, fx->s, fx->t, fx->r, NULL);
	assert_int_equal(oid_generate(&dir), 0);
	assert_int_equal(oid_generate(&fx->m0), 0);
	assert_int_equal(oid_generate(&fx->m1), 0);
	memset(&in, 0, sizeof(in));
	in.type = OFS_OBJ_DIRDATA;
	in.backref.owner = dir;
	in.nsids = 3;
	in.sids[0] = store_sid(fx->s);
	in.sids[1] = fx->p.srv->sid;
	in.sids[2] = fx->o.srv->sid;
	in.replicas = 3;
	in.confidence = 2;
	assert_int_equal(store_create(fx->s, &in, &fx->dd), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	replica_close(fx->r);
	fake_server_stop(fx->p.srv);
	fake_server_stop(fx->o.srv);
	service_fini(&fx->sv);
	sidtab_close(fx->t);
	tmpstore_remove(&fx->ts);
	free(fx);
	return 0;
}

/* Name "f" names oid here (directly in this copy's store). */
static void name_here(struct fixture *fx, struct ofs_oid oid)
{
	struct ofs_dirent d;
	bool replaced;

	memset(&d, 0, sizeof(d));
	d.type = OFS_OBJ_METAFILE;
	d.handle.oid = oid;
	d.handle.nsids = 1;
	d.handle.sids[0] = store_sid(fx->s);
	assert_int_equal(store_dirent_create(fx->s, fx->dd, "f", &d, OFS_DIRENT_REPLACE, &replaced,
					     NULL), 0);
}

/* A client's put links m1 at "f": the answer, *present and *old; P and
 * O were each asked asked_p and asked_o times. */
static void link_m1_asking(struct fixture *fx, bool *present, struct ofs_oid *old, int asked_p,
			   int asked_o)
{
	struct ofs_req q;
	struct service_call call = { .who = NULL };
	struct ofs_dirent d;
	struct wbuf body, reply;

	memset(&q, 0, sizeof(q));
	q.op = OFS_OP_DIRENT_CREATE;
	q.oid = fx->dd;
	snprintf(q.name, sizeof(q.name), "f");
	q.dirent.type = OFS_OBJ_METAFILE;
	q.dirent.handle.oid = fx->m1;
	q.dirent.handle.nsids = 1;
	q.dirent.handle.sids[0] = store_sid(fx->s);
	q.flags = OFS_DIRENT_REPLACE;
	wbuf_init(&body);
	wbuf_init(&reply);
	assert_int_equal(proto_encode_req(&body, &q), 0);
	assert_int_equal(service_handle(&fx->sv, &call, OFS_OP_DIRENT_CREATE, body.data, body.len,
					&reply), 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(proto_decode_dirent_reply(reply.data, reply.len, present, &d), 0);
	*old = d.handle.oid;
	wbuf_free(&body);
	wbuf_free(&reply);
	assert_int_equal(fx->p.creates, asked_p);
	assert_int_equal(fx->o.creates, asked_o);
}

static void link_m1(struct fixture *fx, bool *present, struct ofs_oid *old)
{
	link_m1_asking(fx, present, old, 1, 1);
}

struct stale_seen {
	struct ofs_sid sid;
	bool found;
};

static int stale_match(struct ofs_sid sid, const char *reason, void *arg)
{
	struct stale_seen *ss = arg;

	(void)reason;
	ss->found |= sid_eq(sid, ss->sid);
	return 0;
}

static bool recorded_stale(struct fixture *fx, const struct peer *pe)
{
	struct stale_seen ss = { .sid = pe->srv->sid };

	assert_int_equal(store_stale_list(fx->s, fx->dd, stale_match, &ss), 0);
	return ss.found;
}

/* ---- tests --------------------------------------------------------------------- */

/* This copy missed the name (a server just healed): the others' answer. */
static void test_an_outvoted_primary_answers_what_the_others_replaced(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	fx->p.present = fx->o.present = true;
	fx->p.old = fx->o.old = fx->m0;
	link_m1(fx, &present, &old);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 1);
	assert_false(recorded_stale(fx, &fx->p));
	assert_false(recorded_stale(fx, &fx->o));
}

/* A copy that missed it is outvoted by this one and the other. */
static void test_a_copy_that_answers_otherwise_is_recorded_stale(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	name_here(fx, fx->m0);
	fx->p.present = true;
	fx->p.old = fx->m0;
	fx->o.present = false;
	link_m1(fx, &present, &old);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 0);
	assert_false(recorded_stale(fx, &fx->p));
	assert_true(recorded_stale(fx, &fx->o));
}

/* One against one: this copy's answer stands. */
static void test_on_a_tie_the_primary_answer_stands(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	name_here(fx, fx->m0);
	fx->p.present = false;
	fx->o.present = true;            /* (no vote: it names the new file) */
	fx->o.old = fx->m1;
	link_m1(fx, &present, &old);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 0);
	assert_true(recorded_stale(fx, &fx->p));
	assert_false(recorded_stale(fx, &fx->o));
}

/* O silent (its ping unanswered: skipped, the copies left being enough)
 * while this copy, back from a partition, missed the name: P's answer
 * against this one's is no majority, so O is asked after all, and the
 * others' answer wins. */
static void test_a_disagreement_asks_the_copy_skipped_as_silent(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	sidtab_unanswered(fx->t, fx->o.srv->sid);
	assert_true(sidtab_silent(fx->t, fx->o.srv->sid));
	fx->p.present = fx->o.present = true;
	fx->p.old = fx->o.old = fx->m0;
	link_m1(fx, &present, &old);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 1);
}

/* O silent, and this copy and P agree: O is not asked. */
static void test_a_silent_copy_is_skipped_when_the_answers_agree(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	sidtab_unanswered(fx->t, fx->o.srv->sid);
	name_here(fx, fx->m0);
	fx->p.present = true;
	fx->p.old = fx->m0;
	link_m1_asking(fx, &present, &old, 1, 0);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 0);
	assert_true(recorded_stale(fx, &fx->o));       /* (it missed the change) */
}

/* The create applied here already (sent again after its first primary
 * died; no note of what it replaced): the copies' answer says it. */
static void test_an_answer_naming_the_new_file_has_no_vote(void **state)
{
	struct fixture *fx = *state;
	struct ofs_oid old;
	bool present;

	name_here(fx, fx->m1);
	fx->p.present = fx->o.present = true;
	fx->p.old = fx->o.old = fx->m0;
	link_m1(fx, &present, &old);
	assert_true(present);
	assert_true(oid_eq(old, fx->m0));
	assert_int_equal(store_behind(fx->s, fx->dd), 0);   /* (not outvoted: it had no say) */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_an_outvoted_primary_answers_what_the_others_replaced),
		T(test_a_copy_that_answers_otherwise_is_recorded_stale),
		T(test_on_a_tie_the_primary_answer_stands),
		T(test_an_answer_naming_the_new_file_has_no_vote),
		T(test_a_disagreement_asks_the_copy_skipped_as_silent),
		T(test_a_silent_copy_is_skipped_when_the_answers_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
