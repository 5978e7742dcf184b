/*
 * ops.h - the operation table: one row per operation a server answers,
 * with its handler, what kind of operation it is, and who may call it -
 * as Redis's command table gives each command its handler and flags in
 * one row that its ACL checks read.
 *
 * A handler applies one decoded request to this server alone (the
 * service decides, from the row's flags, whether a change is forwarded to
 * the object's other copies first, and whether a copy marked behind may
 * answer it) and appends its reply body. It returns 0 or a negative code;
 * on an error the service drops what it appended.
 *
 * The roles column says who may call each operation: a client's user, an
 * operator (admin: ofs-pbj and its jobs), or another server - the role
 * the caller's TLS certificate proves (service_handle checks it before
 * anything is decoded; docs/design.md "Security").
 */
#ifndef OFS_OPS_H
#define OFS_OPS_H

#include <stdint.h>

#include "lib/proto.h"
#include "lib/wire.h"

enum ops_role {
	OPS_USER = 1u << 0,      /* a client of the namespace */
	OPS_ADMIN = 1u << 1,     /* an operator: ofs-pbj and its jobs */
	OPS_SERVER = 1u << 2,    /* another server of the cluster */
};

enum ops_flag {
	OPS_OBJECT = 1u << 0,    /* on one existing object named by its oid */
	OPS_READ = 1u << 1,      /* reads it: a copy marked behind refuses */
	OPS_CHANGE = 1u << 2,    /* changes it: replicated to its copies */
};

struct service;
typedef int (*ops_fn)(struct service *sv, struct ofs_req *q, struct wbuf *reply);

struct ops_row {
	ops_fn fn;
	uint8_t roles;           /* enum ops_role bits: who may call it */
	uint8_t flags;           /* enum ops_flag bits */
};

/* The row of op (OFS_OP_FORWARDED cleared), or NULL for an operation the
 * protocol does not define. A row's fn is NULL until registered. */
const struct ops_row *ops_row(uint16_t op);

/*
 * The operations served by the parts above the server - the owner's
 * side of a back reference (POINTS), the drain check (STOP_CHECK) - have
 * rows here with their roles, and their handlers are registered by the
 * program that links those parts, at start, before it serves
 * (points_register_ops, drain_register_ops). Until then they answer OFS_EUNKNOWNOP. The
 * server never includes those parts. -EINVAL: no such row, or one already
 * has a handler.
 */
int ops_register(uint16_t op, ops_fn fn);

#endif
