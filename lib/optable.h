/*
 * optable.h - what the protocol knows of each operation, from its one row
 * in lib/ops.def: its name, its request's form and its reply's, who may
 * call it, the right a user needs, and what kind of operation it is - as Redis's command
 * table gives each command its name, arity, flags and ACL categories in one
 * row. The codec (proto.c) dispatches on the form, proto_reply_check
 * (proto.h) checks a reply against its row's reply, the server checks roles
 * and rights and decides what a change does from the flags
 * (server/service.c, server/access.c), the replicator asks again only
 * what changes nothing (server/replica.c), and server/ops.c binds a
 * handler to each row by its number. docs/design.md "Protocol".
 */
#ifndef OFS_OPTABLE_H
#define OFS_OPTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/proto.h"
#include "lib/wire.h"

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

/* A reply body's shape (to a client's request): one for each layout,
 * shared by the operations that answer with it (ops.def). */
enum op_reply {
	RP_NONE = 1,        /* nothing */
	RP_PING,            /* server SID, version */
	RP_HANDLE,          /* a handle */
	RP_OID,             /* an oid */
	RP_ATTR,            /* attributes */
	RP_BYTES,           /* bytes, as they are (any length the frame allows) */
	RP_WRITE,           /* version, size */
	RP_KV_LIST,         /* keys and values, more */
	RP_DIRENT,          /* present, dirent */
	RP_DIRENT_LIST,     /* names and dirents, more */
	RP_SERVERS,         /* responder SID, server entries */
	RP_SERVER,          /* one server entry */
	RP_STATS,           /* objects and bytes */
	RP_ROOT,            /* root handle, birth */
	RP_STALE_LIST,      /* oids and reasons, more */
	RP_SUMMARY,         /* one copy's summary */
	RP_TASK_STATUS,     /* task status, findings */
	RP_U8,              /* one byte: an answer its caller reads (POINTS:
	                       backref/rules.h) */
	RP_FETCH,           /* what a repair fetch did */
	RP_STOP,            /* objects a stop would leave short */
	RP_SUMMARIES,       /* n summaries (n: the request's) */
	RP_CHANGES,         /* version, digest, change notes */
	RP_CRL,             /* CRL number, and the CRL when newer (crl.h) */
	RP_CAPKEYS,         /* nothing, or a signed key set (cap.h) */
	RP_SMALL,           /* attributes and a small file's bytes */
	RP_ATTRS_MANY,      /* n statuses, each with attributes when 0 (n: the
	                       request's) */
	RP_MAX_
};

struct op_def {
	const char *name;
	uint8_t form;            /* enum op_form */
	uint8_t reply;           /* enum op_reply */
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

/*
 * Whether b[0..n) is a reply body of shape reply (enum op_reply; count:
 * the request's count, for RP_SUMMARIES and RP_ATTRS_MANY). When out is
 * not NULL, what was decoded is encoded again into it: every encoding is
 * canonical, so a reply that checks comes out as the same bytes. 0, the
 * decoder's error (-OFS_ECORRUPT, -OFS_ETOOBIG, -OFS_ENAME), -EINVAL (no
 * such shape), -ENOMEM. (lib/proto_check.c)
 */
int op_reply_check(uint8_t reply, const uint8_t *b, size_t n, uint32_t count, struct wbuf *out);

#endif
