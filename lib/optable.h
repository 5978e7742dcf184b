/*
 * optable.h - what the protocol knows of each operation, from its one row
 * in lib/ops.def: its name, its request's form, who may call it, the right
 * a user needs, and what kind of operation it is - as Redis's command
 * table gives each command its name, arity, flags and ACL categories in one
 * row. The codec (proto.c) dispatches on the form, the server checks roles
 * and rights and decides what a change does from the flags
 * (server/service.c, server/access.c), the replicator asks again only
 * what changes nothing (server/replica.c), and server/ops.c binds a
 * handler to each row by its number. docs/design.md "Protocol".
 */
#ifndef OFS_OPTABLE_H
#define OFS_OPTABLE_H

#include <stdint.h>

#include "lib/proto.h"

/* Who may call an operation: the role its caller's certificate proves
 * (lib/ident.h; docs/design.md "Security"). */
enum op_role {
	OPR_USER = 1u << 0,      /* a client of the namespace */
	OPR_ADMIN = 1u << 1,     /* an operator: ofs-pbj and its jobs */
	OPR_SERVER = 1u << 2,    /* another server of the cluster */
};

/* What kind of operation it is (ops.def says each in words). */
enum op_flag {
	OPF_OBJECT = 1u << 0,    /* names one existing object by its oid */
	OPF_READS = 1u << 1,     /* reads it: a copy marked behind refuses */
	OPF_CHANGES = 1u << 2,   /* changes it: replicated to its copies */
	OPF_MAKES = 1u << 3,     /* makes new objects */
	OPF_GRANTS = 1u << 4,    /* its reply carries a user's capability */
	OPF_ASKS = 1u << 5,      /* changes nothing: safe to ask again */
	OPF_BY_MASK = 1u << 6,   /* the right it needs follows SETATTR's mask */
};

/* A request's fields after its op: one form for each layout, shared by
 * the operations that have it (ops.def). */
enum op_form {
	RQ_NONE = 1,        /* nothing */
	RQ_OID,             /* oid */
	RQ_CREATE,          /* oid, attr */
	RQ_CREATE_SMALL,    /* oid, attr, bytes */
	RQ_SETATTR,         /* oid, mask, attr */
	RQ_READ,            /* oid, offset, length */
	RQ_WRITE,           /* oid, offset, flags, bytes */
	RQ_KEY,             /* oid, key */
	RQ_KEY_VALUE,       /* oid, key, value */
	RQ_KEY_MAX,         /* oid, after-key, max */
	RQ_DIRENT,          /* oid, name, dirent, flags */
	RQ_NAME,            /* oid, name */
	RQ_NAME_MAX,        /* oid, after-name (may be empty), max */
	RQ_SERVERS,         /* server entries */
	RQ_SERVER_SET,      /* SID, mask, state, weight, attr */
	RQ_REPORT,          /* oid, SID, reason */
	RQ_ROOT,            /* root handle, birth */
	RQ_CRL,             /* a signed CRL or a pull (crl.h) */
	RQ_CAPKEYS,         /* a signed key set or a pull (cap.h) */
	RQ_FREEZE,          /* oid, milliseconds, SID */
	RQ_STOP_CHECK,      /* max */
	RQ_REPAIR_FETCH,    /* oid, flags, rate, candidate SIDs, reason */
	RQ_STALE_CLEAR,     /* oid, SID, version */
	RQ_CHANGES,         /* oid, version */
	RQ_TASK_START,      /* job, kind, flags, rate, cursor, bases, budget,
	                       oids, allocations */
	RQ_TASK_POLL,       /* job, findings acknowledged, budget */
	RQ_TASK_CTL,        /* job, action */
	RQ_OIDS,            /* n, n oids */
	RQ_POINTS,          /* owner oid, child oid, stripe, name */
	RQ_JOIN,            /* job, epoch, SID, flags, record length, records */
};

struct op_def {
	const char *name;
	uint8_t form;            /* enum op_form */
	uint32_t most;           /* the largest count its request carries */
	uint8_t roles;           /* enum op_role bits */
	uint32_t right;          /* lib/cap.h rights a user needs */
	uint32_t flags;          /* enum op_flag bits */
};

/* The row of op (OFS_OP_FORWARDED and OFS_OP_RESPONSE cleared), or NULL
 * for an operation the protocol does not define. */
const struct op_def *op_def(uint16_t op);

/* op's flags (0 for an operation not defined). */
uint32_t op_flags(uint16_t op);

#endif
