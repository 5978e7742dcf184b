/* serve.c - the scrubber's operations and hooks in ofs-server (see serve.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/ofs_error.h"
#include "scrubber/recover.h"
#include "scrubber/repair.h"
#include "scrubber/scrub.h"
#include "scrubber/serve.h"
#include "server/ops.h"

static int op_task_start(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return sv->scrub ? scrubber_start(sv->scrub, &q->task) : -OFS_EUNKNOWNOP;
}

static int op_task_poll(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	if (q->task.job == RECOVER_JOB)
		return recover_poll(sv->recover, q->task.ack, reply);
	return sv->scrub ? scrubber_poll(sv->scrub, q->task.job, q->task.ack, q->task.budget, reply)
			 : -OFS_EUNKNOWNOP;
}

static int op_task_ctl(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return sv->scrub ? scrubber_ctl(sv->scrub, q->task.job, q->task.action) : -OFS_EUNKNOWNOP;
}

static int op_verify(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_summary sm;
	int rc = repair_verify(sv->store, q->oid, &sm);

	if (!rc)
		proto_encode_summary(reply, &sm);
	return rc;
}

static int op_repair_fetch(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_fetch_reply fr;
	struct repair_pacer pc = { .rate = q->rate };
	int rc;

	if (!sv->rep)
		return -OFS_EUNKNOWNOP;
	rc = repair_fetch(sv->store, sv->tab, sv->rep, q->oid, q->cands, q->ncands, q->flags,
			  q->reason[0] ? q->reason : "repair", repair_pace_rate, &pc, &fr);
	if (!rc)
		proto_encode_fetch_reply(reply, &fr);
	return rc;
}

static int op_stale_clear(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return repair_stale_clear(sv->store, q->oid, q->sid, q->version);
}

int scrubber_register_ops(void)
{
	static const struct {
		uint16_t op;
		ops_fn fn;
	} mine[] = {
		{ OFS_OP_TASK_START, op_task_start }, { OFS_OP_TASK_POLL, op_task_poll },
		{ OFS_OP_TASK_CTL, op_task_ctl }, { OFS_OP_VERIFY, op_verify },
		{ OFS_OP_REPAIR_FETCH, op_repair_fetch }, { OFS_OP_STALE_CLEAR, op_stale_clear },
	};

	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		int rc = ops_register(mine[i].op, mine[i].fn);
		if (rc)
			return rc;
	}
	return 0;
}

static void hook_behind(void *arg)
{
	recover_kick(arg);
}

static void hook_stats(void *arg, struct ofs_stats *st)
{
	struct recover_status rs;

	recover_status(arg, &rs);
	st->behind = rs.behind;
	st->stuck = rs.stuck < rs.behind ? rs.stuck : rs.behind;
	st->caught_up = rs.caught_up;
	st->recovering = rs.active;
}

void scrubber_hook_recover(struct service *sv)
{
	sv->hooks.behind = hook_behind;
	sv->hooks.stats = hook_stats;
	sv->hooks.arg = sv->recover;
}
