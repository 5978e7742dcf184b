/*
 * test_suspect.c - what a REPORT may queue (server/suspect.h), on a real
 * store: only an object this server holds and a copy its record names,
 * never this server's own; nothing is queued otherwise and the refusals
 * are counted. (The worker's mending is t_suspect's: it needs peers.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/proto.h"
#include "server/suspect.h"
#include "store/store.h"
#include "tests/unit/tmpstore.h"

static void test_a_report_queues_only_a_copy_of_ours_named_by_its_record(void **state)
{
	struct tmpstore ts;
	struct suspects *q = NULL;
	struct suspect_counts c;
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_oid oid, absent;
	struct ofs_sid other, stranger;

	(void)state;
	assert_non_null(a);
	assert_int_equal(tmpstore_make("suspect", 1u << 20, &ts), 0);
	memset(&other, 0x11, sizeof(other));
	memset(&stranger, 0x22, sizeof(stranger));
	memset(&absent, 0x33, sizeof(absent));
	a->type = OFS_OBJ_DFILE;
	a->nsids = 2;
	a->sids[0] = ts.sid;
	a->sids[1] = other;
	assert_int_equal(store_create(ts.s, a, &oid), 0);
	/* (no table, no replicator: nothing here reaches the worker) */
	assert_int_equal(suspects_start(ts.s, NULL, NULL, 0, &q), 0);
	assert_int_equal(suspects_add(q, absent, other, "checksum mismatch on read"), -EINVAL);
	assert_int_equal(suspects_add(q, oid, stranger, "checksum mismatch on read"), -EINVAL);
	assert_int_equal(suspects_add(q, oid, ts.sid, "checksum mismatch on read"), -EINVAL);
	suspects_counts(q, &c);
	assert_int_equal(c.queued, 0);
	assert_int_equal(c.mended + c.good + c.failed, 0);
	suspects_stop(q);
	tmpstore_remove(&ts);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_report_queues_only_a_copy_of_ours_named_by_its_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
