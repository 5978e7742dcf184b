/*
 * test_ops.c - the operation table (ops.h): every operation the protocol
 * defines has a row with a handler and the roles that may call it; no
 * server-to-server or maintenance operation is open to users; what the
 * service reads from the flags (which requests name one object, which are
 * reads a copy marked behind refuses, which changes are replicated) is
 * what each operation is; the operations the parts above the server
 * serve have no handler until those parts register theirs, and then
 * every operation has one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/proto.h"
#include "backref/points.h"
#include "rebalancer/drain.h"
#include "server/ops.h"

static void test_every_operation_has_a_handler_and_roles(void **state)
{
	(void)state;
	/* before the background parts register theirs: only theirs lack one */
	assert_null(ops_row(OFS_OP_STOP_CHECK)->fn);
	assert_null(ops_row(OFS_OP_POINTS)->fn);
	assert_non_null(ops_row(OFS_OP_GETATTR)->fn);
	assert_int_equal(points_register_ops(), 0);
	assert_int_equal(drain_register_ops(), 0);
	/* once only */
	assert_int_equal(drain_register_ops(), -EINVAL);
	assert_int_equal(ops_register(OFS_OP_READ, ops_row(OFS_OP_READ)->fn), -EINVAL);
	assert_int_equal(ops_register(OFS_OP_MAX, ops_row(OFS_OP_READ)->fn), -EINVAL);
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		const struct ops_row *r = ops_row(op);
		if (!r)
			fail_msg("operation %u (%s) has no row", op, ofs_op_name(op));
		assert_non_null(r->fn);
		assert_int_not_equal(r->roles, 0);
		assert_int_equal(r->roles & ~(OPS_USER | OPS_ADMIN | OPS_SERVER), 0);
	}
}

static void test_unknown_operations_have_no_row(void **state)
{
	(void)state;
	assert_null(ops_row(0));
	assert_null(ops_row(OFS_OP_MAX));
	assert_null(ops_row(0x3fff));
	assert_null(ops_row(0xffff));
}

static void test_server_to_server_operations_are_for_servers_only(void **state)
{
	static const uint16_t peer[] = {
		OFS_OP_BEHIND, OFS_OP_STALE_FOR, OFS_OP_SUMMARY, OFS_OP_SUMMARY_MANY,
		OFS_OP_VERIFY, OFS_OP_POINTS, OFS_OP_REPAIR_FETCH, OFS_OP_STALE_CLEAR,
		OFS_OP_FREEZE, OFS_OP_CHANGES,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(peer) / sizeof(peer[0]); i++)
		assert_int_equal(ops_row(peer[i])->roles, OPS_SERVER);
}

static void test_maintenance_is_not_open_to_users(void **state)
{
	static const uint16_t maint[] = {
		OFS_OP_SERVER_SET, OFS_OP_ROOT_MOVE, OFS_OP_STOP_CHECK, OFS_OP_TASK_START,
		OFS_OP_TASK_POLL, OFS_OP_TASK_CTL, OFS_OP_CAPKEYS,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(maint) / sizeof(maint[0]); i++) {
		assert_int_equal(ops_row(maint[i])->roles & OPS_USER, 0);
		assert_true(ops_row(maint[i])->roles & OPS_ADMIN);
	}
	/* An operator's change to the server table is an admin's word: a
	 * server speaks for its own entry only (docs/design.md, "Security") */
	assert_int_equal(ops_row(OFS_OP_SERVER_SET)->roles, OPS_ADMIN);
	/* Anyone pulls the CRL (a client checks servers against it); only an
	 * admin or a server gives one (op_revoked refuses a user's) */
	assert_true(ops_row(OFS_OP_REVOKED)->roles & OPS_USER);
}

static void test_flags_say_what_each_operation_is(void **state)
{
	static const uint16_t reads[] = {
		OFS_OP_GETATTR, OFS_OP_READ, OFS_OP_KV_GET, OFS_OP_KV_LIST,
		OFS_OP_DIRENT_LOOKUP, OFS_OP_DIRENT_LIST, OFS_OP_GET_SMALL,
	};
	static const uint16_t changes[] = {
		OFS_OP_REMOVE, OFS_OP_SETATTR, OFS_OP_WRITE, OFS_OP_COMMIT, OFS_OP_KV_PUT,
		OFS_OP_KV_DEL, OFS_OP_DIRENT_CREATE, OFS_OP_DIRENT_REMOVE,
	};
	size_t nr = 0, nc = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		assert_int_equal(ops_row(reads[i])->flags, OPS_OBJECT | OPS_READ);
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		assert_int_equal(ops_row(changes[i])->flags, OPS_OBJECT | OPS_CHANGE);
	/* a create is a replicated change of an object that does not exist
	 * yet, and so is a small file's (its metafile and dfile) */
	assert_int_equal(ops_row(OFS_OP_CREATE)->flags, OPS_CHANGE);
	assert_int_equal(ops_row(OFS_OP_CREATE_SMALL)->flags, OPS_CHANGE);
	/* and nothing else is either */
	for (uint16_t op = OFS_OP_PING; op < OFS_OP_MAX; op++) {
		nr += (ops_row(op)->flags & OPS_READ) != 0;
		nc += (ops_row(op)->flags & OPS_CHANGE) != 0;
	}
	assert_int_equal(nr, sizeof(reads) / sizeof(reads[0]));
	assert_int_equal(nc, sizeof(changes) / sizeof(changes[0]) + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_operation_has_a_handler_and_roles),
		cmocka_unit_test(test_unknown_operations_have_no_row),
		cmocka_unit_test(test_server_to_server_operations_are_for_servers_only),
		cmocka_unit_test(test_maintenance_is_not_open_to_users),
		cmocka_unit_test(test_flags_say_what_each_operation_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
