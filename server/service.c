/* service.c - request handlers (see service.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "lib/cap.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "lib/timefmt.h"
#include "server/access.h"
#include "server/ops.h"
#include "server/service.h"
#include "store/records.h"

/* Apply q to this server alone, through its row of the table. */
static int apply(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	ops_fn fn = ops_handler(q->op);
	int rc = fn ? fn(sv, q, reply) : -OFS_EUNKNOWNOP;

	return rc ? rc : wbuf_error(reply);
}

void service_init(struct service *sv, struct store *s, struct sidtab *t, struct replicator *r,
		  struct taskhost *tasks)
{
	sv->store = s;
	sv->tab = t;
	sv->rep = r;
	sv->tasks = tasks;
	sv->recover = NULL;
	memset(&sv->hooks, 0, sizeof(sv->hooks));
	for (int i = 0; i < SERVICE_NLOCKS; i++)
		pthread_mutex_init(&sv->locks[i], NULL);
	pthread_mutex_init(&sv->fmu, NULL);
	memset(sv->frozen, 0, sizeof(sv->frozen));
	sv->exit_after_op = 0;
	sv->crl = NULL;
	sv->capkeys = NULL;
	sv->cap_ttl_s = CAP_DEFAULT_TTL_S;
}

void service_fini(struct service *sv)
{
	for (int i = 0; i < SERVICE_NLOCKS; i++)
		pthread_mutex_destroy(&sv->locks[i]);
	pthread_mutex_destroy(&sv->fmu);
}

/* Is oid held still? (Call with its change lock held.) */
static bool is_frozen(struct service *sv, struct ofs_oid oid)
{
	int64_t now = time_mono_ns();
	bool held = false;

	pthread_mutex_lock(&sv->fmu);
	for (int i = 0; i < SERVICE_NFROZEN; i++)
		if (sv->frozen[i].until_ns > now && oid_eq(sv->frozen[i].oid, oid))
			held = true;
	pthread_mutex_unlock(&sv->fmu);
	return held;
}

int service_freeze(struct service *sv, struct ofs_oid oid, uint32_t ms, struct ofs_sid holder)
{
	pthread_mutex_t *l = &sv->locks[oid_hash(oid) % SERVICE_NLOCKS];
	int64_t now = time_mono_ns();
	int slot = -1, rc = 0;

	pthread_mutex_lock(l);
	pthread_mutex_lock(&sv->fmu);
	for (int i = 0; i < SERVICE_NFROZEN; i++) {
		if (sv->frozen[i].until_ns > now && oid_eq(sv->frozen[i].oid, oid)) {
			slot = i;
			break;
		}
		if (slot < 0 && sv->frozen[i].until_ns <= now)
			slot = i;
	}
	if (slot < 0) {
		rc = ms ? -EBUSY : 0;
	} else if (sv->frozen[slot].until_ns > now && !sid_eq(sv->frozen[slot].holder, holder)) {
		rc = ms ? -EBUSY : 0;            /* another's: not lifted either */
	} else if (ms) {
		sv->frozen[slot].oid = oid;
		sv->frozen[slot].holder = holder;
		sv->frozen[slot].until_ns = now + (int64_t)ms * 1000000;
	} else if (oid_eq(sv->frozen[slot].oid, oid)) {
		sv->frozen[slot].until_ns = 0;
	}
	pthread_mutex_unlock(&sv->fmu);
	pthread_mutex_unlock(l);
	return rc;
}

/* The size a WRITE or COMMIT reply reports, or UINT64_MAX. */
static uint64_t reply_size(const uint8_t *b, size_t n)
{
	struct ofs_write_reply w;

	return proto_decode_write_reply(b, n, &w) ? UINT64_MAX : w.size;
}

/* A request that makes its objects (the copies named in it, not read). */
static bool makes(const struct ofs_req *q)
{
	return (op_flags(q->op) & OPF_MAKES) != 0;
}

/* The objects a change changes: its own, and a small file's dfile. */
static size_t changed(const struct ofs_req *q, struct ofs_oid oids[2])
{
	oids[0] = q->oid;
	if (q->op != OFS_OP_CREATE_SMALL)
		return 1;
	oids[1] = q->attr.parts[0].oid;
	return 2;
}

/*
 * Changes the primary may apply while its copies apply them: unstable
 * writes (new bytes past the recorded end, not visible until COMMIT) and
 * COMMIT itself (three fsyncs at once instead of one then two).
 */
static bool overlaps(const struct ofs_req *q)
{
	return (q->op == OFS_OP_WRITE && (q->flags & OFS_WRITE_UNSTABLE)) ||
	       q->op == OFS_OP_COMMIT;
}

/*
 * A change to an object with other copies: apply it here, forward it to
 * the others, count, and record the copies left behind.
 */
/* Record each copy that did not apply an acknowledged change as behind,
 * with the version it missed (for a REMOVE: a note, so that the copy
 * learns it was removed). */
static void record_missed(struct service *sv, const struct ofs_req *q,
			  const struct ofs_sid *others, size_t nothers, const bool *failed,
			  char whys[][200])
{
	for (size_t i = 0; i < nothers; i++) {
		char hex[OFS_OID_HEX], shex[OFS_OID_HEX], what[256];
		struct ofs_attr *now;

		if (!failed[i])
			continue;
		oid_to_hex(q->oid, hex);
		sid_to_hex(others[i], shex);
		log_warn("copy of %s on %s is behind: %s", hex, shex, whys[i]);
		if (q->op == OFS_OP_REMOVE) {
			store_stale_note(sv->store, q->oid, others[i], whys[i]);
			continue;
		}
		struct ofs_oid oids[2];
		for (size_t k = 0, n = changed(q, oids); k < n; k++) {
			/* which change it missed: the version it made here (the
			 * copy was good up to the one before, on this lineage) */
			now = malloc(sizeof(*now));
			if (now && store_getattr(sv->store, oids[k], now) == 0)
				snprintf(what, sizeof(what), REC_MISSED_FMT "%.200s",
					 (unsigned long long)now->version, whys[i]);
			else
				snprintf(what, sizeof(what), "%.200s", whys[i]);
			free(now);
			store_stale_add(sv->store, oids[k], others[i], what);
		}
	}
}

/*
 * Only this copy applied a change that is not acknowledged (no other copy
 * answered): the others hold the last acknowledged state, so this copy is
 * the one behind - marked so, it is not served and catches up from them
 * (a create only here is dropped) - and they are not told they missed
 * anything. Recording them behind instead would spread the refused change
 * to them when they are reached again, and bring back what a later
 * acknowledged change removed. (Not for a REMOVE: a removal is a
 * client's cleanup, and the copies that missed it are told to finish it.)
 */
static void hold_unacknowledged(struct service *sv, const struct ofs_req *q)
{
	char hex[OFS_OID_HEX], why[160];

	struct ofs_oid oids[2];

	snprintf(why, sizeof(why), "holds a %s that was not acknowledged (no other copy "
		 "answered)", ofs_op_name(q->op));
	for (size_t k = 0, n = changed(q, oids); k < n; k++) {
		if (store_behind_mark(sv->store, oids[k], why) != 0)
			continue;
		oid_to_hex(oids[k], hex);
		log_warn("copy of %s here %s: not served until caught up", hex, why);
		if (sv->hooks.behind)
			sv->hooks.behind(sv->hooks.arg);
	}
}

/* Has q's deadline (its sender's: frame.h) passed? */
static bool late(const struct ofs_req *q)
{
	return q->deadline_ms && time_now_ms() > q->deadline_ms;
}

/* The deadline a change forwarded now carries: REPLICA_CHANGE_MS for a
 * copy to apply it (replica.h: longer for a WRITE and a COMMIT), never
 * past its own sender's. */
static uint64_t forward_deadline(const struct ofs_req *q)
{
	uint64_t d = time_now_ms() + (q->op == OFS_OP_COMMIT ? REPLICA_TIMEOUT_MS :
				       q->op == OFS_OP_WRITE ? REPLICA_WRITE_MS : REPLICA_CHANGE_MS);

	return q->deadline_ms && q->deadline_ms < d ? q->deadline_ms : d;
}

/*
 * A change forwarded by its primary, applied to this copy alone - only
 * before its deadline: after it, the primary has counted this copy
 * behind and gone on, and a change applied now could land after the
 * catch-up that follows. One that passed the check and then took past
 * the deadline (a hang or a stalled disk in between) marks this copy
 * behind itself.
 */
static int apply_forwarded(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	char hex[OFS_OID_HEX];
	struct ofs_oid oids[2];
	int rc;

	oid_to_hex(q->oid, hex);
	if (late(q)) {
		log_limited(LOG_WARN, NULL, "forwarded %s of %s came after its deadline: refused",
			    ofs_op_name(q->op), hex);
		return -OFS_ELATE;
	}
	rc = apply(sv, q, reply);
	if (rc || !late(q) || q->op == OFS_OP_REMOVE)
		return rc;
	for (size_t k = 0, n = changed(q, oids); k < n; k++)
		if (store_behind_mark(sv->store, oids[k], "applied a forwarded change after its "
				      "deadline") == 0)
			log_warn("copy of %s here applied a forwarded %s after its deadline: not "
				 "served until caught up", hex, ofs_op_name(q->op));
	if (sv->hooks.behind)
		sv->hooks.behind(sv->hooks.arg);
	return rc;
}

/* What one copy's DIRENT_CREATE answered: whether the name was there, and
 * what it named. */
struct dirent_said {
	bool ok;                     /* answered, and the answer decodes */
	bool present;
	struct ofs_dirent old;
};

static bool said_same(const struct dirent_said *x, const struct dirent_said *y)
{
	return x->present == y->present &&
	       (!x->present || oid_eq(x->old.handle.oid, y->old.handle.oid));
}

/*
 * Every copy that applied a DIRENT_CREATE answers what the name named
 * before it; copies that hold the same entries answer the same. One that
 * answers otherwise missed a change of that name (a server just healed
 * from a partition serves until its peers tell it what it missed, within
 * a second or two). The answer most copies gave (this one's on a tie
 * that remains after ask_the_rest) is the one the client gets - it destroys the file replaced, which the
 * answer of a copy that missed the change would leave, an orphan - and a
 * copy that answered otherwise is marked behind: this one by itself, the
 * others by a stale record here (docs/design.md, "Partitions"). An
 * answer that names the file being linked (the create was applied there
 * already: sent again after its first primary died) has no vote.
 * mine/theirs: this copy's answer and the copies'; disagree[i] is set for
 * a copy that answered otherwise. Returns true when this copy's answer
 * was outvoted (the reply is rewritten with the winning one).
 */
static bool dirent_vote(struct service *sv, const struct ofs_req *q, struct wbuf *reply,
			size_t start, const struct dirent_said *theirs, size_t n, bool *disagree)
{
	struct dirent_said mine = { .ok = true };
	const struct dirent_said *win = &mine;
	size_t best;
	char hex[OFS_OID_HEX], why[200];

	for (size_t i = 0; i < n; i++)
		disagree[i] = false;
	if (proto_decode_dirent_reply(reply->data + start, reply->len - start, &mine.present,
				      &mine.old))
		return false;
	/* (an answer naming the file being linked says only "done already"
	 * - a create sent again - and has no vote) */
	mine.ok = !(mine.present && oid_eq(mine.old.handle.oid, q->dirent.handle.oid));
	best = mine.ok;
	for (size_t k = 0; k < n && mine.ok; k++)
		best += theirs[k].ok && said_same(&theirs[k], &mine);
	for (size_t i = 0; i < n; i++) {
		size_t votes = 0;
		if (!theirs[i].ok || said_same(&theirs[i], &mine))
			continue;
		for (size_t k = 0; k < n; k++)
			votes += theirs[k].ok && said_same(&theirs[k], &theirs[i]);
		if (votes > best) {
			best = votes;
			win = &theirs[i];
		}
	}
	for (size_t i = 0; i < n; i++)
		disagree[i] = theirs[i].ok && !said_same(&theirs[i], win);
	if (win == &mine)
		return false;
	/* The entry the others replaced is the one to report; and outvoted,
	 * this copy missed a change. */
	reply->len = start;
	proto_encode_dirent_reply(reply, win->present, &win->old);
	if (!mine.ok)
		return true;
	oid_to_hex(q->oid, hex);
	snprintf(why, sizeof(why), "answered a %s of '%.60s' unlike the other copies (missed a "
		 "change of it)", ofs_op_name(q->op), q->name);
	log_warn("copy of %s here %s: not served until caught up", hex, why);
	if (store_behind_mark(sv->store, q->oid, why) == 0 && sv->hooks.behind)
		sv->hooks.behind(sv->hooks.arg);
	return true;
}

/* Apply q here and forward it to the copies others (nothers > 0), filling
 * res: at once for a change whose effect is not visible before its COMMIT
 * (overlaps), else applied here first and forwarded only when it applied
 * - and in time: one applied after its client's deadline (this server
 * hung in between) is not forwarded, the copies the client went on with
 * hold the state, and this one catches up from them. need: the copies,
 * this one included, that must apply q for it to count (replica.h: the
 * silent ones are skipped only when the rest can make it). 0, or this
 * copy's error (then no result is left to free). Call under q's lock. */
static int apply_and_forward(struct service *sv, struct ofs_req *q, const uint8_t *body,
			     size_t len, struct wbuf *reply, size_t start, unsigned need,
			     const struct ofs_sid *others, size_t nothers,
			     struct replica_result *res)
{
	size_t need_others = need > 1 ? need - 1 : 0;
	int rc;

	if (overlaps(q)) {
		struct replica_sent sent;
		replica_send_by(sv->rep, q->op, body, len, forward_deadline(q), need_others,
				others, nothers, &sent, res);
		rc = apply(sv, q, reply);
		replica_collect(sv->rep, &sent, res);
		for (size_t i = 0; rc && i < nothers; i++)
			free(res[i].body);
		return rc;
	}
	rc = apply(sv, q, reply);
	if (!rc && late(q) && q->op != OFS_OP_REMOVE) {
		hold_unacknowledged(sv, q);
		reply->len = start;
		rc = -OFS_ELATE;
	}
	return rc ? rc : replica_forward_by(sv->rep, q->op, body, len, forward_deadline(q),
					    need_others, others, nothers, res);
}

/*
 * A DIRENT_CREATE that some copy answered unlike this one, while others
 * were not reached (skipped as silent, or unreachable): with one answer
 * against another there is no majority, and the copy that missed a change
 * of the name may be this one - a server back from a partition, which
 * has heard from one peer again but not yet from the other. Ask the
 * copies not reached once more, none skipped (replica.h), so that the
 * vote (dirent_vote) has every answer it can get.
 */
static void ask_the_rest(struct service *sv, const struct ofs_req *q, const uint8_t *body,
			 size_t len, const struct wbuf *reply, size_t start,
			 const struct ofs_sid *others, size_t nothers, struct replica_result *res)
{
	struct dirent_said mine = { .ok = true }, theirs;
	struct ofs_sid rest[OFS_MAX_REPLICAS];
	struct replica_result again[OFS_MAX_REPLICAS];
	size_t at[OFS_MAX_REPLICAS], nrest = 0;
	bool differ = false;

	if (proto_decode_dirent_reply(reply->data + start, reply->len - start, &mine.present,
				      &mine.old))
		return;
	for (size_t i = 0; i < nothers; i++) {
		if (res[i].rc == -OFS_EUNREACHABLE) {
			at[nrest] = i;
			rest[nrest++] = others[i];
		} else if (!res[i].rc &&
			   proto_decode_dirent_reply(res[i].body, res[i].len, &theirs.present,
						     &theirs.old) == 0 &&
			   !(theirs.present && oid_eq(theirs.old.handle.oid, q->dirent.handle.oid))) {
			differ |= !said_same(&theirs, &mine);
		}
	}
	if (!differ || nrest == 0 || late(q))
		return;
	replica_forward_by(sv->rep, q->op, body, len, forward_deadline(q), nrest, rest, nrest,
			   again);
	for (size_t k = 0; k < nrest; k++)
		res[at[k]] = again[k];
}

/* A copy that answered a DIRENT_CREATE unlike the answer given
 * (dirent_vote) applied it, so it counts; but it missed a change of that
 * name: recorded stale here. */
static void record_disagreeing(struct service *sv, const struct ofs_req *q,
			       const struct ofs_sid *others, size_t nothers, const bool *disagree)
{
	char hex[OFS_OID_HEX], shex[OFS_OID_HEX], why[200];

	oid_to_hex(q->oid, hex);
	snprintf(why, sizeof(why), "answered a %s of '%.60s' unlike the other copies (missed a "
		 "change of it)", ofs_op_name(q->op), q->name);
	for (size_t i = 0; i < nothers; i++) {
		if (!disagree[i])
			continue;
		sid_to_hex(others[i], shex);
		log_warn("copy of %s on %s is behind: %s", hex, shex, why);
		store_stale_add(sv->store, q->oid, others[i], why);
	}
}

/* The copies' answers res (their bodies freed here): failed[i] and
 * whys[i] for a copy that did not apply q or holds other bytes than this
 * one, a DIRENT_CREATE's answers voted on. Returns how many copies hold
 * the change, this one included. */
static unsigned tally(struct service *sv, const struct ofs_req *q, struct wbuf *reply,
		      size_t start, const struct ofs_sid *others, size_t nothers,
		      struct replica_result *res, bool *failed, char whys[][200])
{
	struct dirent_said said[OFS_MAX_REPLICAS];
	bool disagree[OFS_MAX_REPLICAS];
	unsigned ok = 1;

	for (size_t i = 0; i < nothers; i++) {
		int r = res[i].rc;

		if (!r && (q->op == OFS_OP_COMMIT || q->op == OFS_OP_WRITE)) {
			uint64_t mine_sz = reply_size(reply->data + start, reply->len - start);
			uint64_t theirs = reply_size(res[i].body, res[i].len);
			if (mine_sz != theirs) {
				snprintf(whys[i], 200, "%s: copy holds %llu bytes, primary %llu",
					 ofs_op_name(q->op), (unsigned long long)theirs,
					 (unsigned long long)mine_sz);
				r = -EIO;
			}
		} else if (r) {
			snprintf(whys[i], 200, "%s not applied: %s", ofs_op_name(q->op),
				 ofs_strerror(r));
		}
		memset(&said[i], 0, sizeof(said[i]));
		if (!r && q->op == OFS_OP_DIRENT_CREATE)
			said[i].ok = proto_decode_dirent_reply(res[i].body, res[i].len,
							       &said[i].present, &said[i].old) == 0 &&
				     !(said[i].present &&
				       oid_eq(said[i].old.handle.oid, q->dirent.handle.oid));
		free(res[i].body);
		failed[i] = r != 0;
		ok += !failed[i];
	}
	if (q->op == OFS_OP_DIRENT_CREATE) {
		dirent_vote(sv, q, reply, start, said, nothers, disagree);
		record_disagreeing(sv, q, others, nothers, disagree);
	}
	return ok;
}

/* The object's attributes for a change under its lock: q's own for a
 * create, else as stored (nsids 0 when it is not: the handler says why).
 * NULL: no memory. */
static struct ofs_attr *attrs_for(struct service *sv, const struct ofs_req *q)
{
	struct ofs_attr *a = malloc(sizeof(*a));

	if (a && makes(q))
		*a = q->attr;
	else if (a && store_getattr(sv->store, q->oid, a) != 0)
		a->nsids = 0;
	return a;
}

static int handle_replicated(struct service *sv, struct ofs_req *q, const uint8_t *body,
			     size_t len, struct wbuf *reply)
{
	struct ofs_sid self = store_sid(sv->store), others[OFS_MAX_REPLICAS];
	struct replica_result res[OFS_MAX_REPLICAS];
	struct ofs_attr *a = NULL;
	struct wbuf fw;
	pthread_mutex_t *l;
	size_t start = reply->len, nothers = 0;
	unsigned need, ok;
	bool mine = false, failed[OFS_MAX_REPLICAS] = { false };
	char whys[OFS_MAX_REPLICAS][200];
	int rc = 0;

	wbuf_init(&fw);
	if (makes(q) && q->attr.nsids > 1 && oid_is_zero(q->oid)) {
		/* Every copy needs the same OID: choose it here. */
		rc = oid_generate(&q->oid);
		if (!rc)
			rc = proto_encode_req(&fw, q);
		if (rc)
			goto out_free;
		body = fw.data;
		len = fw.len;
	}
	l = &sv->locks[oid_hash(q->oid) % SERVICE_NLOCKS];
	pthread_mutex_lock(l);
	/* (its copies read under the lock: read before it, a create still
	 * being forwarded would leave this change unforwarded) */
	if (late(q))
		rc = -OFS_ELATE;    /* (waited here past it: its client went on) */
	else if (!(a = attrs_for(sv, q)))
		rc = -ENOMEM;
	else if (!makes(q) && is_frozen(sv, q->oid))
		rc = -OFS_EMOVING;
	for (uint8_t i = 0; !rc && i < a->nsids; i++) {
		if (sid_eq(a->sids[i], self))
			mine = true;
		else
			others[nothers++] = a->sids[i];
	}
	if (!rc && (!mine || nothers == 0)) {
		rc = apply(sv, q, reply);
		pthread_mutex_unlock(l);
		goto out_free;
	}
	need = a && a->confidence ? a->confidence : a ? a->nsids : 0;
	if (!rc)
		rc = apply_and_forward(sv, q, body, len, reply, start, need, others, nothers, res);
	if (rc) {
		pthread_mutex_unlock(l);
		goto out_free;
	}
	if (q->op == OFS_OP_DIRENT_CREATE)
		ask_the_rest(sv, q, body, len, reply, start, others, nothers, res);
	ok = tally(sv, q, reply, start, others, nothers, res, failed, whys);
	if (ok >= need || ok > 1 || q->op == OFS_OP_REMOVE)
		record_missed(sv, q, others, nothers, failed, whys);
	else
		hold_unacknowledged(sv, q);
	pthread_mutex_unlock(l);
	if (ok < need) {
		char hex[OFS_OID_HEX];
		oid_to_hex(q->oid, hex);
		log_warn("%s of %s: %u of %u copies durable, confidence %u", ofs_op_name(q->op),
			 hex, ok, a->nsids, need);
		reply->len = start;
		rc = -OFS_EQUORUM;
	}
out_free:
	wbuf_free(&fw);
	free(a);
	return rc;
}

/* May who call row's operation? (NULL who: --insecure; no row: the
 * decoder refuses it.) A forwarded request applies to one copy only and
 * skips the primary's checks: servers alone send those. */
static int role_check(const struct ident *who, const struct op_def *row, bool forwarded)
{
	unsigned bit;

	if (!who || !row)
		return 0;
	switch (who->role) {
	case IDENT_SERVER:
		bit = OPR_SERVER;
		break;
	case IDENT_ADMIN:
		bit = OPR_ADMIN;
		break;
	case IDENT_USER:
		bit = OPR_USER;
		break;
	default:
		return -EACCES;
	}
	if (forwarded && who->role != IDENT_SERVER)
		return -EACCES;
	return (row->roles & bit) ? 0 : -EACCES;
}

/*
 * What a user may say about ownership (docs/design.md, "Security"): the objects
 * it creates are its own (its certificate's uid, one of its groups); it
 * changes the permission bits only of what it owns, and never an owner
 * (an admin's). Checked where a client's request arrives; the copies
 * believe their primary (a forwarded request is a server's).
 */
static int owner_check(struct service *sv, const struct ident *who, const struct ofs_req *q)
{
	bool in_group = false;

	if (q->op == OFS_OP_SETATTR && (q->mask & OFS_ATTR_MODE) && (q->attr.mode & ~07777u))
		return -EINVAL;
	if (!who || who->role != IDENT_USER)
		return 0;
	if (makes(q)) {
		for (uint8_t i = 0; i < who->ngids && !in_group; i++)
			in_group = who->gids[i] == q->attr.gid;
		return q->attr.uid == who->uid && in_group ? 0 : -EACCES;
	}
	if (q->op != OFS_OP_SETATTR || !(q->mask & (OFS_ATTR_OWNER | OFS_ATTR_MODE)))
		return 0;
	if (q->mask & OFS_ATTR_OWNER)
		return -EACCES;
	{
		struct ofs_attr *a = malloc(sizeof(*a));
		int rc = a ? store_getattr(sv->store, q->oid, a) : -ENOMEM;
		if (!rc && a->uid != who->uid)
			rc = -EACCES;
		free(a);
		return rc;
	}
}

/* A user's request: may it? (Logged when not, with why.) */
static int user_check(struct service *sv, const struct service_call *call,
		      const struct ofs_req *q)
{
	struct access_req ar = {
		.who = call->who, .cap = call->cap, .cap_len = call->cap_len,
		.cache = call->cache, .now = (uint64_t)time(NULL),
	};
	const char *why = "";
	int rc = access_check(sv->store, sv->capkeys, &ar, q, &why);

	if (rc == -EACCES || rc == -OFS_ECAPBAD || rc == -OFS_ECAPEXPIRED) {
		char by[128], hex[OFS_OID_HEX];
		ident_describe(call->who, by, sizeof(by));
		oid_to_hex(q->oid, hex);
		if (rc == -OFS_ECAPEXPIRED)
			log_debug("refused %s of %s from %s: %s", ofs_op_name(q->op), hex, by, why);
		else
			log_limited(LOG_INFO, NULL, "refused %s of %s from %s: %s", ofs_op_name(q->op),
				    hex, by, why);
	}
	return rc;
}

/* CAP_REMOVE when a user's GETATTR carries a capability showing that it
 * may remove the object (access_removal), else 0. */
static uint32_t removal(struct service *sv, const struct service_call *call,
			const struct ofs_req *q, const struct ofs_attr *a)
{
	struct access_req ar = {
		.who = call->who, .cap = call->cap, .cap_len = call->cap_len,
		.cache = call->cache, .now = (uint64_t)time(NULL),
	};
	const char *why = "";

	if (q->op != OFS_OP_GETATTR || !call->cap_len)
		return 0;
	return access_removal(sv->capkeys, &ar, a, &why) == 0 ? CAP_REMOVE : 0;
}

/* The capability a user's GETATTR or CREATE of a file or directory is
 * answered with (its reply body is at reply->data + start). */
static void grant(struct service *sv, const struct service_call *call, const struct ofs_req *q,
		  const struct wbuf *reply, size_t start)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_oid oid = q->oid;
	int rc = a ? 0 : -ENOMEM;

	if (!rc && makes(q)) {
		*a = q->attr;
		rc = proto_decode_oid_reply(reply->data + start, reply->len - start, &oid);
	} else if (!rc && q->op == OFS_OP_GET_SMALL) {
		const uint8_t *d;
		size_t n;
		rc = proto_decode_small_reply(reply->data + start, reply->len - start, a, &d, &n);
	} else if (!rc) {
		rc = proto_decode_attr_reply(reply->data + start, reply->len - start, a);
	}
	if (!rc)
		rc = access_grant(sv->capkeys, sidtab_self(sv->tab), sv->cap_ttl_s,
				  (uint64_t)time(NULL), call->who, oid, a,
				  makes(q) ? CAP_ALL_OPS : removal(sv, call, q, a), call->grant);
	if (rc) {
		call->grant->len = 0;
		log_warn("no capability granted with %s: %s", ofs_op_name(q->op), ofs_strerror(rc));
	}
	free(a);
}

int service_handle(struct service *sv, const struct service_call *call, uint16_t op,
		   const uint8_t *body, size_t len, struct wbuf *reply)
{
	const struct ident *who = call->who;
	struct ofs_req *q = malloc(sizeof(*q));
	bool forwarded = (op & OFS_OP_FORWARDED) != 0;
	bool user = who && who->role == IDENT_USER && !forwarded;
	const struct op_def *row;
	size_t start = reply->len;
	unsigned flags;
	int rc;

	if (!q)
		return -ENOMEM;
	op &= (uint16_t)~OFS_OP_FORWARDED;
	row = op_def(op);
	flags = row ? row->flags : 0;
	rc = role_check(who, row, forwarded);
	if (rc) {
		char by[128];
		ident_describe(who, by, sizeof(by));
		log_limited(LOG_INFO, NULL, "refused %s%s from %s: permission denied",
			    forwarded ? "forwarded " : "", ofs_op_name(op), by);
		free(q);
		return rc;
	}
	rc = proto_decode_req(op, body, len, q);
	q->forwarded = forwarded;
	q->who = who;
	q->deadline_ms = (flags & OPF_CHANGES) ? call->deadline_ms : 0;
	if (rc) {
		log_debug("rejected %s request: %s", ofs_op_name(op), ofs_strerror(rc));
	} else if (!forwarded && (rc = owner_check(sv, who, q)) != 0) {
		if (rc == -EACCES) {
			char by[128];
			ident_describe(who, by, sizeof(by));
			log_limited(LOG_INFO, NULL, "refused %s from %s: permission denied (not the owner)",
				    ofs_op_name(op), by);
		}
	} else if (user && (rc = user_check(sv, call, q)) != 0) {
		/* (logged there) */
	} else if (!forwarded && (flags & (OPF_READS | OPF_CHANGES)) && !makes(q) &&
		   (rc = store_behind(sv->store, q->oid)) != 0) {
		if (rc > 0)
			rc = -OFS_EBEHIND;
	} else if (!forwarded && sv->rep && (flags & OPF_CHANGES)) {
		rc = handle_replicated(sv, q, body, len, reply);
	} else if (forwarded && (flags & OPF_CHANGES)) {
		rc = apply_forwarded(sv, q, reply);
	} else if (late(q)) {
		rc = -OFS_ELATE;     /* (a change to this copy alone, past its deadline) */
	} else {
		rc = apply(sv, q, reply);
	}
	if (!rc && user && call->grant &&
	    (flags & OPF_GRANTS))
		grant(sv, call, q, reply, start);
	if (rc == -ENOENT && !forwarded && (flags & OPF_OBJECT)) {
		/* No such entry, or no such object here? A client asks another
		 * copy for the second (this one may have moved away). */
		struct ofs_attr *a = malloc(sizeof(*a));
		if (a && store_getattr(sv->store, q->oid, a) == -ENOENT)
			rc = -OFS_ENOOBJ;
		free(a);
	}
	if (rc)
		reply->len = start;   /* an error reply has no body */
	free(q);
	if (!rc && !forwarded && sv->exit_after_op == op) {
		log_warn("test fault: exiting after %s, before its reply", ofs_op_name(op));
		_exit(70);
	}
	return rc;
}
