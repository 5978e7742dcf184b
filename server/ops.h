/*
 * ops.h - the server's handler of each operation. What an operation is -
 * its name, request form, who may call it, the right a user needs, its
 * flags - is its row in lib/ops.def (lib/optable.h); here each row's
 * number is bound to the function that serves it.
 *
 * A handler applies one decoded request to this server alone (the
 * service decides, from the row's flags, whether a change is forwarded to
 * the object's other copies first, and whether a copy marked behind may
 * answer it) and appends its reply body. It returns 0 or a negative code;
 * on an error the service drops what it appended. Roles are checked
 * before anything is decoded (service_handle; docs/design.md "Security").
 */
#ifndef OFS_OPS_H
#define OFS_OPS_H

#include <stdint.h>

#include "lib/proto.h"
#include "lib/wire.h"

struct service;
typedef int (*ops_fn)(struct service *sv, struct ofs_req *q, struct wbuf *reply);

/* The handler of op (OFS_OP_FORWARDED cleared), or NULL: an operation the
 * protocol does not define, or one whose handler is not registered yet. */
ops_fn ops_handler(uint16_t op);

/*
 * The operations served by the parts above the server - the owner's
 * side of a back reference (POINTS), the drain check (STOP_CHECK) - have
 * rows in lib/ops.def, and their handlers are registered by the
 * program that links those parts, at start, before it serves
 * (points_register_ops, drain_register_ops). Until then they answer OFS_EUNKNOWNOP. The
 * server never includes those parts. -EINVAL: no such row, or one already
 * has a handler.
 */
int ops_register(uint16_t op, ops_fn fn);

#endif
