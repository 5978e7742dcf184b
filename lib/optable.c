/*
 * optable.c - the operation table, built from lib/ops.def (optable.h).
 */
#include <stddef.h>

#include "lib/cap.h"
#include "lib/frame.h"
#include "lib/optable.h"

#define USER OPR_USER
#define ADMIN OPR_ADMIN
#define ANYONE (OPR_USER | OPR_ADMIN | OPR_SERVER)
#define OPERATOR (OPR_ADMIN | OPR_SERVER)      /* maintenance */
#define PEER OPR_SERVER                          /* server to server */
#define OBJECT OPF_OBJECT
#define READS OPF_READS
#define CHANGES OPF_CHANGES
#define MAKES OPF_MAKES
#define GRANTS OPF_GRANTS
#define ASKS OPF_ASKS
#define BY_MASK OPF_BY_MASK

static const struct op_def table[OFS_OP_MAX] = {
#define OP(id, nm, fm, rp, mo, ro, ri, fl) \
	[OFS_OP_##id] = { .name = nm, .form = fm, .reply = rp, .most = mo, .roles = ro, .right = ri, \
			  .flags = fl },
#include "lib/ops.def"
#undef OP
};

const struct op_def *op_def(uint16_t op)
{
	op &= (uint16_t)~(OFS_OP_RESPONSE | OFS_OP_FORWARDED);
	if (op >= OFS_OP_MAX || !table[op].name)
		return NULL;
	return &table[op];
}

uint32_t op_flags(uint16_t op)
{
	const struct op_def *d = op_def(op);

	return d ? d->flags : 0;
}
