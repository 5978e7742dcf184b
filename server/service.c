/* service.c - request handlers (see service.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "ofs_error.h"
#include "proto.h"
#include "drain.h"
#include "points.h"
#include "scrub.h"
#include "recover.h"
#include "repair.h"
#include "service.h"

struct list_ctx {
	struct ofs_list_writer lw;
};

static int add_kv(const void *k, size_t kn, const void *v, size_t vn, void *arg)
{
	struct list_ctx *lc = arg;

	proto_list_add_kv(&lc->lw, k, kn, v, vn);
	return wbuf_error(lc->lw.w);
}

static int add_dirent(const char *name, const struct ofs_dirent *d, void *arg)
{
	struct list_ctx *lc = arg;

	proto_list_add_dirent(&lc->lw, name, d);
	return wbuf_error(lc->lw.w);
}

static int do_read(struct store *s, const struct ofs_req *q, struct wbuf *reply)
{
	size_t lenpos = reply->len, got = 0;
	uint8_t *p;
	int rc;

	wbuf_u32(reply, 0);
	p = wbuf_reserve(reply, q->length);
	if (!p && q->length)
		return -ENOMEM;
	rc = store_read(s, q->oid, q->offset, p, q->length, &got);
	if (rc) {
		if (rc == -OFS_ECHECKSUM) {
			char hex[OFS_OID_HEX];
			oid_to_hex(q->oid, hex);
			log_warn("read %s at %llu: checksum mismatch; this copy is bad",
				 hex, (unsigned long long)q->offset);
		}
		return rc;
	}
	reply->len = lenpos + 4 + got;
	wbuf_patch_u32(reply, lenpos, (uint32_t)got);
	return 0;
}

static int do_servers(struct service *sv, const struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_server *in = NULL, *all = NULL;
	struct ofs_sid self = sidtab_self(sv->tab);
	size_t nin = 0, nall = 0;
	int rc = proto_decode_servers(q->data, q->data_len, false, NULL, &in, &nin);

	if (!rc && nin) {
		rc = sidtab_merge(sv->tab, in, nin);
		if (rc > 0)
			log_info("server table: %d change(s) from a peer", rc);
		rc = rc < 0 ? rc : 0;
		/* Whoever sends its table is alive: its own entry comes first. */
		sidtab_seen(sv->tab, in[0].sid);
	}
	if (!rc)
		rc = sidtab_snapshot(sv->tab, &all, &nall);
	if (!rc)
		proto_encode_servers(reply, &self, all, nall);
	free(all);
	free(in);
	return rc;
}

/* One STALE_FOR reply's records. */
struct stale_page {
	struct ofs_oid oids[OFS_MAX_STALE_LIST];
	char reasons[OFS_MAX_STALE_LIST][256];
	uint32_t n;
};

static int stale_page_add(struct ofs_oid oid, const char *reason, void *arg)
{
	struct stale_page *pg = arg;

	if (pg->n == OFS_MAX_STALE_LIST)
		return -OFS_ETOOBIG;
	pg->oids[pg->n] = oid;
	snprintf(pg->reasons[pg->n], sizeof(pg->reasons[pg->n]), "%s", reason);
	pg->n++;
	return 0;
}

/* Client reads that a copy marked behind must not answer. */
static bool is_read(uint16_t op)
{
	switch (op) {
	case OFS_OP_GETATTR:
	case OFS_OP_READ:
	case OFS_OP_KV_GET:
	case OFS_OP_KV_LIST:
	case OFS_OP_DIRENT_LOOKUP:
	case OFS_OP_DIRENT_LIST:
		return true;
	default:
		return false;
	}
}

static int freeze(struct service *sv, struct ofs_oid oid, uint32_t ms, struct ofs_sid holder);

/* What SUMMARY answers for one object: "not here" is an answer (not
 * present), not an error. */
static int summary_of(struct store *s, struct ofs_oid oid, struct ofs_summary *sm)
{
	int rc = store_summary(s, oid, sm);

	if (rc == -ENOENT) {
		memset(sm, 0, sizeof(*sm));
		return 0;
	}
	if (rc)
		return rc;
	rc = store_behind(s, oid);
	sm->behind = rc == 1;
	return rc < 0 ? rc : 0;
}

/* CHANGES: this copy's notes after since (changelog.h). */
static int changes_of(struct store *s, struct ofs_oid oid, uint64_t since, struct wbuf *reply)
{
	struct ofs_digest d;
	struct wbuf notes;
	uint64_t version;
	int rc;

	wbuf_init(&notes);
	rc = store_changes(s, oid, since, &notes, &version, &d);
	if (!rc)
		proto_encode_changes(reply, version, d, notes.data, notes.len);
	wbuf_free(&notes);
	return rc;
}

static int handle(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct store *s = sv->store;
	struct ofs_attr *a = NULL;
	struct ofs_dirent d;
	struct list_ctx lc;
	bool more = false, present = false;
	int rc = 0;

	switch (q->op) {
	case OFS_OP_PING: {
		struct ofs_ping_reply p;
		memset(&p, 0, sizeof(p));
		p.sid = store_sid(s);
		strncpy(p.version, OFS_VERSION, sizeof(p.version) - 1);
		proto_encode_ping(reply, &p);
		break;
	}
	case OFS_OP_CREATE: {
		struct ofs_oid oid;
		rc = store_create_oid(s, &q->attr, q->oid, &oid);
		if (!rc)
			proto_encode_oid_reply(reply, oid);
		break;
	}
	case OFS_OP_REMOVE:
		rc = store_remove(s, q->oid);
		break;
	case OFS_OP_GETATTR:
	case OFS_OP_SETATTR:
		a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		if (q->op == OFS_OP_GETATTR)
			rc = store_getattr(s, q->oid, a);
		else
			rc = store_setattr(s, q->oid, q->mask, &q->attr, a);
		if (!rc)
			proto_encode_attr(reply, a);
		free(a);
		break;
	case OFS_OP_READ:
		rc = do_read(s, q, reply);
		break;
	case OFS_OP_WRITE: {
		struct ofs_write_reply w;
		if (q->flags & OFS_WRITE_UNSTABLE)
			rc = store_write_unstable(s, q->oid, q->offset, q->data, q->data_len,
						  &w.version, &w.size);
		else
			rc = store_write(s, q->oid, q->offset, q->data, q->data_len,
					 &w.version, &w.size);
		if (!rc)
			proto_encode_write_reply(reply, &w);
		break;
	}
	case OFS_OP_COMMIT: {
		struct ofs_write_reply w;
		rc = store_commit(s, q->oid, &w.version, &w.size);
		if (!rc)
			proto_encode_write_reply(reply, &w);
		break;
	}
	case OFS_OP_KV_GET: {
		void *v = NULL;
		size_t vn = 0;
		rc = store_kv_get(s, q->oid, q->key, q->key_len, &v, &vn);
		if (!rc)
			wbuf_blob(reply, v, vn);
		free(v);
		break;
	}
	case OFS_OP_KV_PUT:
		rc = store_kv_put(s, q->oid, q->key, q->key_len, q->data, q->data_len);
		break;
	case OFS_OP_KV_DEL:
		rc = store_kv_del(s, q->oid, q->key, q->key_len);
		break;
	case OFS_OP_KV_LIST:
		proto_list_begin(&lc.lw, reply);
		rc = store_kv_list(s, q->oid, q->key, q->key_len, q->max, add_kv, &lc, &more);
		if (!rc)
			proto_list_end(&lc.lw, more);
		break;
	case OFS_OP_DIRENT_CREATE:
		memset(&d, 0, sizeof(d));
		rc = store_dirent_create(s, q->oid, q->name, &q->dirent, q->flags, &present, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, present, &d);
		break;
	case OFS_OP_DIRENT_REMOVE:
		rc = store_dirent_remove(s, q->oid, q->name, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, true, &d);
		break;
	case OFS_OP_DIRENT_LOOKUP:
		rc = store_dirent_lookup(s, q->oid, q->name, &d);
		if (!rc)
			proto_encode_dirent_reply(reply, true, &d);
		break;
	case OFS_OP_DIRENT_LIST:
		proto_list_begin(&lc.lw, reply);
		rc = store_dirent_list(s, q->oid, q->name[0] ? q->name : NULL, q->max,
				       add_dirent, &lc, &more);
		if (!rc)
			proto_list_end(&lc.lw, more);
		break;
	case OFS_OP_SERVERS:
		rc = do_servers(sv, q, reply);
		break;
	case OFS_OP_SERVER_SET: {
		struct ofs_server e;
		char hex[OFS_OID_HEX];
		rc = sidtab_set(sv->tab, &q->set, &e);
		if (!rc) {
			sid_to_hex(e.sid, hex);
			log_info("server table: %s set to state %s, weight %.3f%s%s", hex,
				 ofs_server_state_name(e.state), e.weight_milli / 1000.0,
				 (q->set.mask & OFS_SET_ATTR) ? ", attribute " : "",
				 (q->set.mask & OFS_SET_ATTR) ? q->set.attr : "");
			proto_encode_server(reply, &e);
		}
		break;
	}
	case OFS_OP_SET_ROOT: {
		struct ofs_handle used;
		int64_t birth;
		rc = sidtab_offer_root(sv->tab, &q->root, q->birth_ns, &used, &birth);
		if (!rc)
			proto_encode_root(reply, &used, birth);
		break;
	}
	case OFS_OP_STATS: {
		struct ofs_stats st;
		struct recover_status rs;
		rc = store_stats(s, &st);
		recover_status(sv->recover, &rs);
		st.behind = rs.behind;
		st.stuck = rs.stuck < rs.behind ? rs.stuck : rs.behind;
		st.caught_up = rs.caught_up;
		st.recovering = rs.active;
		if (!rc)
			proto_encode_stats(reply, &st);
		break;
	}
	case OFS_OP_POINTS: {
		uint8_t ans = 0;
		rc = points_check(sv->store, sv->rep, q, q->forwarded, &ans);
		if (!rc)
			wbuf_u8(reply, ans);
		break;
	}
	case OFS_OP_SUMMARY: {
		struct ofs_summary sm;
		rc = summary_of(s, q->oid, &sm);
		if (!rc)
			proto_encode_summary(reply, &sm);
		break;
	}
	case OFS_OP_SUMMARY_MANY: {
		/* (1..OFS_SUMMARY_MANY_MAX OIDs: the decoder checked) */
		uint32_t n = (uint32_t)(q->data_len / OFS_OID_LEN);
		struct ofs_oid oids[OFS_SUMMARY_MANY_MAX];
		struct ofs_summary *sm = malloc(n * sizeof(*sm));
		if (!sm) {
			rc = -ENOMEM;
			break;
		}
		memcpy(oids, q->data, q->data_len);
		rc = store_summary_many(s, oids, n, sm);
		if (!rc)
			proto_encode_summaries(reply, sm, n);
		free(sm);
		break;
	}
	case OFS_OP_VERIFY: {
		struct ofs_summary sm;
		rc = repair_verify(s, q->oid, &sm);
		if (!rc)
			proto_encode_summary(reply, &sm);
		break;
	}
	case OFS_OP_REPAIR_FETCH: {
		struct ofs_fetch_reply fr;
		struct repair_pacer pc = { .rate = q->rate };
		if (!sv->rep) {
			rc = -OFS_EUNKNOWNOP;
			break;
		}
		rc = repair_fetch(s, sv->tab, sv->rep, q->oid, q->cands, q->ncands,
				  q->flags, q->reason[0] ? q->reason : "repair",
				  repair_pace_rate, &pc, &fr);
		if (!rc)
			proto_encode_fetch_reply(reply, &fr);
		break;
	}
	case OFS_OP_STALE_CLEAR:
		rc = repair_stale_clear(s, q->oid, q->sid, q->version);
		break;
	case OFS_OP_CHANGES:
		rc = changes_of(s, q->oid, q->version, reply);
		break;
	case OFS_OP_FREEZE:
		rc = freeze(sv, q->oid, q->ms, q->sid);
		break;
	case OFS_OP_ROOT_MOVE: {
		struct ofs_handle used;
		int64_t birth;
		rc = sidtab_move_root(sv->tab, &q->root, q->birth_ns, &used, &birth);
		if (!rc)
			proto_encode_root(reply, &used, birth);
		break;
	}
	case OFS_OP_STOP_CHECK: {
		struct ofs_stop_reply *sr = malloc(sizeof(*sr));
		if (!sr) {
			rc = -ENOMEM;
			break;
		}
		rc = drain_stop_check(s, sv->tab, sv->rep, q->max, sr);
		if (!rc)
			proto_encode_stop_reply(reply, sr);
		free(sr);
		break;
	}
	case OFS_OP_TASK_START:
		rc = sv->scrub ? scrubber_start(sv->scrub, &q->task) : -OFS_EUNKNOWNOP;
		break;
	case OFS_OP_TASK_POLL:
		if (q->task.job == RECOVER_JOB) {
			rc = recover_poll(sv->recover, q->task.ack, reply);
			break;
		}
		rc = sv->scrub ? scrubber_poll(sv->scrub, q->task.job, q->task.ack, q->task.budget, reply)
			       : -OFS_EUNKNOWNOP;
		break;
	case OFS_OP_TASK_CTL:
		rc = sv->scrub ? scrubber_ctl(sv->scrub, q->task.job, q->task.action)
			       : -OFS_EUNKNOWNOP;
		break;
	case OFS_OP_BEHIND: {
		char oh[OFS_OID_HEX], sh[OFS_OID_HEX], why[256];
		oid_to_hex(q->oid, oh);
		sid_to_hex(q->sid, sh);
		snprintf(why, sizeof(why), "behind per %.32s: %.200s", sh, q->reason);
		rc = store_behind(s, q->oid);
		if (rc == 1) {
			rc = 0;                  /* known already (told at start, say) */
			break;
		}
		if (!rc)
			rc = store_behind_mark(s, q->oid, why);
		if (!rc)
			log_warn("copy of %s here missed changes (told by %s: %s); "
				 "not served until caught up", oh, sh, q->reason);
		recover_kick(sv->recover);
		break;
	}
	case OFS_OP_STALE_FOR: {
		struct stale_page *pg = calloc(1, sizeof(*pg));
		bool later = false;
		if (!pg) {
			rc = -ENOMEM;
			break;
		}
		rc = store_stale_for(s, q->sid, oid_is_zero(q->oid) ? NULL : &q->oid,
				     OFS_MAX_STALE_LIST, stale_page_add, pg, &later);
		if (!rc)
			proto_encode_stale_list(reply, pg->oids, pg->reasons, pg->n, later);
		free(pg);
		break;
	}
	case OFS_OP_REPORT: {
		char oh[OFS_OID_HEX], sh[OFS_OID_HEX];
		oid_to_hex(q->oid, oh);
		sid_to_hex(q->sid, sh);
		log_warn("client report: copy of %s on %s skipped: %s", oh, sh, q->reason);
		break;
	}
	default:
		rc = -OFS_EUNKNOWNOP;
		break;
	}
	if (!rc)
		rc = wbuf_error(reply);
	return rc;
}

void service_init(struct service *sv, struct store *s, struct sidtab *t, struct replicator *r,
		  struct scrubber *scrub)
{
	sv->store = s;
	sv->tab = t;
	sv->rep = r;
	sv->scrub = scrub;
	sv->recover = NULL;
	for (int i = 0; i < SERVICE_NLOCKS; i++)
		pthread_mutex_init(&sv->locks[i], NULL);
	pthread_mutex_init(&sv->fmu, NULL);
	memset(sv->frozen, 0, sizeof(sv->frozen));
}

void service_fini(struct service *sv)
{
	for (int i = 0; i < SERVICE_NLOCKS; i++)
		pthread_mutex_destroy(&sv->locks[i]);
	pthread_mutex_destroy(&sv->fmu);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Is oid held still? (Call with its change lock held.) */
static bool is_frozen(struct service *sv, struct ofs_oid oid)
{
	int64_t now = mono_ns();
	bool held = false;

	pthread_mutex_lock(&sv->fmu);
	for (int i = 0; i < SERVICE_NFROZEN; i++)
		if (sv->frozen[i].until_ns > now && oid_eq(sv->frozen[i].oid, oid))
			held = true;
	pthread_mutex_unlock(&sv->fmu);
	return held;
}

/* FREEZE: hold oid still for ms (0: lift), once the changes in progress
 * on it here have finished (its change lock); -EBUSY while another holder
 * holds it. */
static int freeze(struct service *sv, struct ofs_oid oid, uint32_t ms, struct ofs_sid holder)
{
	pthread_mutex_t *l = &sv->locks[oid_hash(oid) % SERVICE_NLOCKS];
	int64_t now = mono_ns();
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

/* Operations on one existing object named by q->oid. */
static bool addresses_object(uint16_t op)
{
	switch (op) {
	case OFS_OP_GETATTR: case OFS_OP_SETATTR: case OFS_OP_READ: case OFS_OP_WRITE:
	case OFS_OP_COMMIT: case OFS_OP_REMOVE: case OFS_OP_KV_GET: case OFS_OP_KV_PUT:
	case OFS_OP_KV_DEL: case OFS_OP_KV_LIST: case OFS_OP_DIRENT_CREATE:
	case OFS_OP_DIRENT_REMOVE: case OFS_OP_DIRENT_LOOKUP: case OFS_OP_DIRENT_LIST:
		return true;
	default:
		return false;
	}
}

static bool is_change(uint16_t op)
{
	switch (op) {
	case OFS_OP_CREATE: case OFS_OP_REMOVE: case OFS_OP_SETATTR: case OFS_OP_WRITE:
	case OFS_OP_COMMIT: case OFS_OP_KV_PUT: case OFS_OP_KV_DEL:
	case OFS_OP_DIRENT_CREATE: case OFS_OP_DIRENT_REMOVE:
		return true;
	default:
		return false;
	}
}

/* The size a WRITE or COMMIT reply reports, or UINT64_MAX. */
static uint64_t reply_size(const uint8_t *b, size_t n)
{
	struct ofs_write_reply w;

	return proto_decode_write_reply(b, n, &w) ? UINT64_MAX : w.size;
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
		/* which change it missed: the version it made here (the copy
		 * was good up to the one before, on this lineage) */
		now = malloc(sizeof(*now));
		if (now && store_getattr(sv->store, q->oid, now) == 0)
			snprintf(what, sizeof(what), STORE_MISSED_FMT "%.200s",
				 (unsigned long long)now->version, whys[i]);
		else
			snprintf(what, sizeof(what), "%.200s", whys[i]);
		free(now);
		store_stale_add(sv->store, q->oid, others[i], what);
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

	snprintf(why, sizeof(why), "holds a %s that was not acknowledged (no other copy "
		 "answered)", ofs_op_name(q->op));
	if (store_behind_mark(sv->store, q->oid, why) == 0) {
		oid_to_hex(q->oid, hex);
		log_warn("copy of %s here %s: not served until caught up", hex, why);
		recover_kick(sv->recover);
	}
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
	unsigned need, ok = 1;
	bool mine = false, failed[OFS_MAX_REPLICAS] = { false };
	char whys[OFS_MAX_REPLICAS][200];
	int rc;

	wbuf_init(&fw);
	if (q->op == OFS_OP_CREATE) {
		a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		*a = q->attr;
		if (a->nsids > 1 && oid_is_zero(q->oid)) {
			/* Every copy needs the same OID: choose it here. */
			rc = oid_generate(&q->oid);
			if (!rc)
				rc = proto_encode_req(&fw, q);
			if (rc)
				goto out_free;
			body = fw.data;
			len = fw.len;
		}
	}
	l = &sv->locks[oid_hash(q->oid) % SERVICE_NLOCKS];
	pthread_mutex_lock(l);
	if (q->op != OFS_OP_CREATE) {
		/* Its copies as they are once no other change of it is in
		 * flight here: read before the lock, a create still being
		 * forwarded would leave this change unforwarded. */
		a = malloc(sizeof(*a));
		if (!a) {
			pthread_mutex_unlock(l);
			rc = -ENOMEM;
			goto out_free;
		}
		if (store_getattr(sv->store, q->oid, a) != 0)
			a->nsids = 0;      /* let the local handler say why */
	}
	for (uint8_t i = 0; i < a->nsids; i++) {
		if (sid_eq(a->sids[i], self))
			mine = true;
		else
			others[nothers++] = a->sids[i];
	}
	need = a->confidence ? a->confidence : a->nsids;
	if (q->op != OFS_OP_CREATE && is_frozen(sv, q->oid)) {
		pthread_mutex_unlock(l);
		rc = -OFS_EMOVING;
		goto out_free;
	}
	if (!mine || nothers == 0) {
		rc = handle(sv, q, reply);
		pthread_mutex_unlock(l);
		goto out_free;
	}
	if (overlaps(q)) {
		/* Nothing this changes is visible before its COMMIT, and a put
		 * whose COMMIT fails is undone: the copies may work while we
		 * do. */
		struct replica_sent sent;
		replica_send(sv->rep, q->op, body, len, others, nothers, &sent, res);
		rc = handle(sv, q, reply);
		replica_collect(sv->rep, &sent, res);
		if (rc) {
			for (size_t i = 0; i < nothers; i++)
				free(res[i].body);
			pthread_mutex_unlock(l);
			goto out_free;
		}
	} else {
		rc = handle(sv, q, reply);
		if (rc) {
			pthread_mutex_unlock(l);
			goto out_free;
		}
		rc = replica_forward(sv->rep, q->op, body, len, others, nothers, res);
		if (rc) {
			pthread_mutex_unlock(l);
			goto out_free;
		}
	}
	for (size_t i = 0; i < nothers; i++) {
		int r = res[i].rc;

		if (!r && (q->op == OFS_OP_COMMIT || q->op == OFS_OP_WRITE)) {
			uint64_t mine_sz = reply_size(reply->data + start, reply->len - start);
			uint64_t theirs = reply_size(res[i].body, res[i].len);
			if (mine_sz != theirs) {
				snprintf(whys[i], sizeof(whys[i]), "%s: copy holds %llu bytes, primary %llu",
					 ofs_op_name(q->op), (unsigned long long)theirs,
					 (unsigned long long)mine_sz);
				r = -EIO;
			}
		} else if (r) {
			snprintf(whys[i], sizeof(whys[i]), "%s not applied: %s", ofs_op_name(q->op),
				 ofs_strerror(r));
		}
		free(res[i].body);
		failed[i] = r != 0;
		ok += !failed[i];
	}
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

/* At most this many peers are asked for the root at once. */
#define ROOT_ASK_MAX 16

/*
 * GET_ROOT. A server without a root asks its peers before it answers
 * "none": a client that gets ENOENT makes a new root, and the one another
 * client made a moment ago through another server may not have reached
 * us by gossip yet. Peers answer a forwarded GET_ROOT with the root and
 * its birth time, from their own store only (no further asking). The
 * oldest answer is adopted as if gossip had brought it.
 */
static int get_root(struct service *sv, bool forwarded, struct wbuf *reply)
{
	struct ofs_handle h;
	int64_t birth = 0;
	int rc = store_root_info(sv->store, &h, &birth);

	if (rc == -ENOENT && !forwarded && sv->rep) {
		struct ofs_server *e = NULL;
		struct ofs_sid ask[ROOT_ASK_MAX], self = sidtab_self(sv->tab);
		struct replica_result *res = NULL;
		size_t n = 0, nask = 0;
		struct ofs_handle best;
		int64_t best_birth = 0;
		bool found = false;

		if (sidtab_snapshot(sv->tab, &e, &n))
			return rc;
		for (size_t i = 0; i < n && nask < ROOT_ASK_MAX; i++)
			if (!sid_eq(e[i].sid, self))
				ask[nask++] = e[i].sid;
		free(e);
		res = calloc(nask ? nask : 1, sizeof(*res));
		if (!res)
			return -ENOMEM;
		replica_forward(sv->rep, OFS_OP_GET_ROOT, NULL, 0, ask, nask, res);
		{
			for (size_t i = 0; i < nask; i++) {
				struct ofs_handle ph;
				int64_t pb;
				if (!res[i].rc && !proto_decode_root(res[i].body, res[i].len, &ph, &pb) &&
				    !oid_is_zero(ph.oid) &&
				    (!found || pb < best_birth ||
				     (pb == best_birth && oid_cmp(ph.oid, best.oid) < 0))) {
					best = ph;
					best_birth = pb;
					found = true;
				}
			}
		}
		for (size_t i = 0; i < nask; i++)
			free(res[i].body);
		free(res);
		if (!found)
			return -ENOENT;
		rc = sidtab_offer_root(sv->tab, &best, best_birth, &h, &birth);
		if (rc)
			return rc;
	}
	if (rc)
		return rc;
	if (forwarded)
		proto_encode_root(reply, &h, birth);
	else
		proto_encode_handle_reply(reply, &h);
	return 0;
}

int service_handle(struct service *sv, uint16_t op, const uint8_t *body, size_t len,
		   struct wbuf *reply)
{
	struct ofs_req *q = malloc(sizeof(*q));
	bool forwarded = (op & OFS_OP_FORWARDED) != 0;
	size_t start = reply->len;
	int rc;

	if (!q)
		return -ENOMEM;
	op &= (uint16_t)~OFS_OP_FORWARDED;
	rc = proto_decode_req(op, body, len, q);
	q->forwarded = forwarded;
	if (rc) {
		log_debug("rejected %s request: %s", ofs_op_name(op), ofs_strerror(rc));
	} else if (!forwarded && (is_read(op) || (is_change(op) && op != OFS_OP_CREATE)) &&
		   (rc = store_behind(sv->store, q->oid)) != 0) {
		if (rc > 0)
			rc = -OFS_EBEHIND;
	} else if (op == OFS_OP_GET_ROOT) {
		rc = get_root(sv, forwarded, reply);
	} else if (!forwarded && sv->rep && is_change(op)) {
		rc = handle_replicated(sv, q, body, len, reply);
	} else {
		rc = handle(sv, q, reply);
	}
	if (rc == -ENOENT && !forwarded && addresses_object(op)) {
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
	return rc;
}
