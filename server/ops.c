/* ops.c - the operation table and its handlers (see ops.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "lib/optable.h"
#include "lib/proto.h"
#include "server/mailbox.h"
#include "server/ops.h"
#include "server/repair.h"
#include "server/service.h"
#include "server/suspect.h"
#include "server/taskhost.h"

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

/*
 * A request that names its sender's SID (a table it vouches for, a
 * teller, a holder) is believed only from that server's certificate: a
 * server cannot speak as another, and no one else speaks as a server.
 * (NULL who: --insecure.)
 */
static int speaks_as(const struct ofs_req *q, struct ofs_sid sid)
{
	char hex[OFS_OID_HEX], by[128];

	if (!q->who || (q->who->role == IDENT_SERVER && sid_eq(q->who->sid, sid)))
		return 0;
	sid_to_hex(sid, hex);
	ident_describe(q->who, by, sizeof(by));
	log_warn("refused %s from %s: it speaks as server %s", ofs_op_name(q->op), by, hex);
	return -EACCES;
}

static int do_servers(struct service *sv, const struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_server *in = NULL, *all = NULL;
	struct ofs_sid self = sidtab_self(sv->tab);
	size_t nin = 0, nall = 0;
	int rc;

	rc = proto_decode_servers(q->data, q->data_len, false, NULL, &in, &nin);

	if (!rc && nin)
		rc = speaks_as(q, in[0].sid);
	if (!rc && nin && store_down(sv->store))
		rc = -OFS_EBUSY;   /* a peer's gossip: not heard, as if down (store.h) */
	if (!rc && nin) {
		rc = sidtab_merge_from(sv->tab, in, nin, &in[0].sid);
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
	char why[OFS_MAX_STALE_LIST][256];
};

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
static int op_get_root(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	bool forwarded = q->forwarded;
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

static int op_ping(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_ping_reply p;

	(void)q;
	memset(&p, 0, sizeof(p));
	p.sid = store_sid(sv->store);
	strncpy(p.version, OFS_VERSION, sizeof(p.version) - 1);
	proto_encode_ping(reply, &p);
	return 0;
}

static int op_create(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_oid oid;
	int rc = store_create_oid(sv->store, &q->attr, q->oid, &oid);

	if (!rc)
		proto_encode_oid_reply(reply, oid);
	return rc;
}

static int op_create_small(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	int rc = store_create_small(sv->store, q->oid, &q->attr, q->data, q->data_len);

	if (!rc)
		proto_encode_oid_reply(reply, q->oid);
	return rc;
}

static int op_remove(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return store_remove(sv->store, q->oid);
}

static int op_attr(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	if (q->op == OFS_OP_GETATTR)
		rc = store_getattr(sv->store, q->oid, a);
	else
		rc = store_setattr(sv->store, q->oid, q->mask, &q->attr, a);
	if (!rc)
		proto_encode_attr(reply, a);
	free(a);
	return rc;
}

static int op_read(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	return do_read(sv->store, q, reply);
}

static int op_write(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_write_reply w;
	int rc;

	if (q->flags & OFS_WRITE_UNSTABLE)
		rc = store_write_unstable(sv->store, q->oid, q->offset, q->data, q->data_len,
					  &w.version, &w.size);
	else
		rc = store_write(sv->store, q->oid, q->offset, q->data, q->data_len, &w.version,
				 &w.size);
	if (!rc)
		proto_encode_write_reply(reply, &w);
	return rc;
}

static int op_commit(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_write_reply w;
	int rc = store_commit(sv->store, q->oid, &w.version, &w.size);

	if (!rc)
		proto_encode_write_reply(reply, &w);
	return rc;
}

static int op_kv_get(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	void *v = NULL;
	size_t vn = 0;
	int rc = store_kv_get(sv->store, q->oid, q->key, q->key_len, &v, &vn);

	if (!rc)
		wbuf_blob(reply, v, vn);
	free(v);
	return rc;
}

static int op_kv_put(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return store_kv_put(sv->store, q->oid, q->key, q->key_len, q->data, q->data_len);
}

static int op_kv_del(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return store_kv_del(sv->store, q->oid, q->key, q->key_len);
}

static int op_kv_list(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct list_ctx lc;
	bool more = false;
	int rc;

	proto_list_begin(&lc.lw, reply);
	rc = store_kv_list(sv->store, q->oid, q->key, q->key_len, q->max, add_kv, &lc, &more);
	if (!rc)
		proto_list_end(&lc.lw, more);
	return rc;
}

static int op_dirent_create(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_dirent d;
	bool present = false;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = store_dirent_create(sv->store, q->oid, q->name, &q->dirent, q->flags, &present, &d);
	if (!rc)
		proto_encode_dirent_reply(reply, present, &d);
	return rc;
}

static int op_dirent_remove(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_dirent d;
	int rc = store_dirent_remove(sv->store, q->oid, q->name, &d);

	if (!rc)
		proto_encode_dirent_reply(reply, true, &d);
	return rc;
}

static int op_dirent_lookup(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_dirent d;
	int rc = store_dirent_lookup(sv->store, q->oid, q->name, &d);

	if (!rc)
		proto_encode_dirent_reply(reply, true, &d);
	return rc;
}

static int op_dirent_list(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct list_ctx lc;
	bool more = false;
	int rc;

	proto_list_begin(&lc.lw, reply);
	rc = store_dirent_list(sv->store, q->oid, q->name[0] ? q->name : NULL, q->max, add_dirent,
			       &lc, &more);
	if (!rc)
		proto_list_end(&lc.lw, more);
	return rc;
}

static int op_servers(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	return do_servers(sv, q, reply);
}

static int op_server_set(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_server e;
	char hex[OFS_OID_HEX];
	int rc = sidtab_set(sv->tab, &q->set, &e);

	if (rc)
		return rc;
	sid_to_hex(e.sid, hex);
	log_info("server table: %s set to state %s, weight %.3f%s%s", hex,
		 ofs_server_state_name(e.state), e.weight_milli / 1000.0,
		 (q->set.mask & OFS_SET_ATTR) ? ", attribute " : "",
		 (q->set.mask & OFS_SET_ATTR) ? q->set.attr : "");
	proto_encode_server(reply, &e);
	return 0;
}

static int op_set_root(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_handle used;
	int64_t birth;
	int rc = sidtab_offer_root(sv->tab, &q->root, q->birth_ns, &used, &birth);

	if (!rc)
		proto_encode_root(reply, &used, birth);
	return rc;
}

static int op_root_move(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_handle used;
	int64_t birth;
	int rc = sidtab_move_root(sv->tab, &q->root, q->birth_ns, &used, &birth);

	if (!rc)
		proto_encode_root(reply, &used, birth);
	return rc;
}

static int op_stats(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_stats st;
	int rc;

	(void)q;
	if (store_down(sv->store))
		return -EIO;       /* (its disk hangs: it is down, store.h) */
	rc = store_stats(sv->store, &st);
	if (!rc && sv->hooks.stats)
		sv->hooks.stats(sv->hooks.arg, &st);
	if (!rc)
		proto_encode_stats(reply, &st);
	return rc;
}

/* Whether a client's REPORT says a copy is bad (the words of client/ofs_io.c):
 * not a server down ("unreachable") or a copy behind (the catch-up's). */
static bool report_says_bad(const char *why)
{
	return !strcmp(why, "checksum mismatch on read") || !strcmp(why, "short read") ||
	       !strcmp(why, "copy missing");
}

static int op_report(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	char oh[OFS_OID_HEX], sh[OFS_OID_HEX];
	int rc = -EINVAL;

	(void)reply;
	oid_to_hex(q->oid, oh);
	sid_to_hex(q->sid, sh);
	if (sv->suspects && report_says_bad(q->reason))
		rc = suspects_add(sv->suspects, q->oid, q->sid, q->reason);
	log_limited(LOG_WARN, NULL, "client report: copy of %s on %s skipped: %s%s", oh, sh, q->reason,
		    rc == 0 ? "; asked to verify and mend it" :
		    rc == -EALREADY ? "; asked lately" :
		    rc == -ENOSPC ? "; too many suspects waiting: left to the next scrub" : "");
	return 0;
}

static int op_summary(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_summary sm;
	int rc = summary_of(sv->store, q->oid, &sm);

	if (!rc)
		proto_encode_summary(reply, &sm);
	return rc;
}

static int op_summary_many(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	/* (1..OFS_SUMMARY_MANY_MAX OIDs: the decoder checked) */
	uint32_t n = (uint32_t)(q->data_len / OFS_OID_LEN);
	struct ofs_oid oids[OFS_SUMMARY_MANY_MAX];
	struct ofs_summary *sm = malloc(n * sizeof(*sm));
	int rc;

	if (!sm)
		return -ENOMEM;
	memcpy(oids, q->data, q->data_len);
	rc = store_summary_many(sv->store, oids, n, sm);
	if (!rc)
		proto_encode_summaries(reply, sm, n);
	free(sm);
	return rc;
}

/* The bytes of small file a (a metafile) when its one dfile is held here,
 * current, and reads back whole and verified: malloc'd into *b, or NULL
 * (the client then reads the usual way, failing over as it does). */
static uint8_t *small_bytes(struct store *s, const struct ofs_attr *a)
{
	struct ofs_oid df = a->parts[0].oid;
	uint8_t *b;
	size_t got = 0;

	if (a->type != OFS_OBJ_METAFILE || a->nparts != 1 || a->size > OFS_SMALL_MAX ||
	    store_behind(s, df) != 0)
		return NULL;
	b = malloc(a->size ? (size_t)a->size : 1);
	if (b && (store_read(s, df, 0, b, (size_t)a->size, &got) != 0 || got != a->size)) {
		free(b);
		b = NULL;
	}
	return b;
}

static int op_get_small(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	uint8_t *b = NULL;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = store_getattr(sv->store, q->oid, a);
	if (!rc && a->type != OFS_OBJ_METAFILE)
		rc = -OFS_ETYPE;
	if (!rc) {
		b = small_bytes(sv->store, a);
		proto_encode_small_reply(reply, a, b, (size_t)a->size);
	}
	free(b);
	free(a);
	return rc;
}

/* GETATTR of each object asked (1..OFS_GETATTR_MANY_MAX: the decoder
 * checked): a copy marked behind says so for itself (OFS_EBEHIND), and
 * the client asks another copy of that one. A user stats files and
 * directories this way (stat needs no right on them); a data object's
 * attributes need its capability, so a user is answered EACCES for one. */
static int op_getattr_many(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	uint32_t n = (uint32_t)(q->data_len / OFS_OID_LEN);
	struct ofs_attr *a = malloc(n * sizeof(*a));
	int32_t st[OFS_GETATTR_MANY_MAX];
	bool user = q->who && q->who->role == IDENT_USER && !q->forwarded;

	if (!a)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct ofs_oid oid;
		int rc;
		memcpy(oid.b, q->data + (size_t)i * OFS_OID_LEN, OFS_OID_LEN);
		rc = store_behind(sv->store, oid);
		if (rc > 0)
			rc = -OFS_EBEHIND;
		if (!rc)
			rc = store_getattr(sv->store, oid, &a[i]);
		if (!rc && user && a[i].type != OFS_OBJ_METAFILE && a[i].type != OFS_OBJ_DIRECTORY)
			rc = -EACCES;      /* (a data object: its GETATTR, with a capability) */
		st[i] = rc == -ENOENT ? -OFS_ENOOBJ : rc;
	}
	proto_encode_attrs_many(reply, st, a, n);
	free(a);
	return 0;
}

static int op_changes(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	return changes_of(sv->store, q->oid, q->version, reply);
}

/* Who sent q, for the log. */
static void sender(const struct ofs_req *q, char *by, size_t n)
{
	snprintf(by, n, "an --insecure peer");
	if (q->who)
		ident_describe(q->who, by, n);
}

/* The previous release's unsigned list or key set: refused, since only
 * the CA speaks for the cluster; quietly from a server (a peer not yet
 * upgraded gossips it every round), aloud from anyone else. */
static int refuse_unsigned(const struct ofs_req *q, const char *what)
{
	char by[128];

	sender(q, by, sizeof(by));
	if (q->who && q->who->role == IDENT_SERVER)
		log_debug("%s from %s refused: unsigned (the previous release's form)", what, by);
	else
		log_warn("%s from %s refused: unsigned (the previous release's form): %s", what, by,
			 ofs_strerror(-OFS_ENOTCA));
	return -OFS_ENOTCA;
}

/*
 * REVOKED: a CRL, taken when the CA signed it and its number is higher
 * than the one held (crl_offer: whoever sends it, the signature is what
 * is believed), or a pull; the answer is the number held now and, when
 * higher than the one the request named, the CRL.
 */
static int op_revoked(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	uint64_t asked = 0, before;
	char by[128];
	int rc;

	if (!sv->crl)
		return -OFS_EUNKNOWNOP;
	/* (a pull is anyone's: a client checks servers against the CRL too;
	 * giving one is an admin's or a server's) */
	if (crl_pull_decode(q->data, q->data_len, &asked))
		return crl_answer(sv->crl, asked, reply);
	if (q->who && q->who->role == IDENT_USER)
		return -EACCES;
	if (!crl_is_der(q->data, q->data_len))
		return refuse_unsigned(q, "revocation list");
	sender(q, by, sizeof(by));
	before = crl_number(sv->crl);
	rc = crl_offer(sv->crl, q->data, q->data_len, &asked);
	if (rc == 1)
		log_warn("revocation list: CRL %llu from %s, %zu certificate(s) revoked "
			 "(in place of CRL %llu)", (unsigned long long)asked, by,
			 crl_count(sv->crl), (unsigned long long)before);
	else if (rc < 0)
		log_warn("revocation list from %s refused: %s", by, ofs_strerror(rc));
	return rc < 0 ? rc : crl_answer(sv->crl, asked, reply);
}

/*
 * CAPKEYS, the pull (gossip; cap.h): the asking server names the current
 * key of the signed set it holds; the answer is this server's signed set
 * when newer, else empty. Asked by servers only: the keys go to no one
 * else over the wire.
 */
static int capkeys_pull(struct service *sv, const struct ofs_req *q, uint32_t held,
			struct wbuf *reply)
{
	if (q->who && q->who->role != IDENT_SERVER)
		return -EACCES;
	(void)cap_ring_answer(sv->capkeys, held, reply);
	return wbuf_error(reply);
}

/* CAPKEYS: a key set the CA signed (a rotation, or a server relaying it):
 * held from now on when newer than the set held (cap_ring_offer). */
static int op_capkeys(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct cap_key k[CAP_MAX_KEYS];
	size_t n;
	uint32_t held;
	char by[128];
	int rc;

	if (!sv->capkeys)
		return -OFS_EUNKNOWNOP;
	if (cap_keys_pull_decode(q->data, q->data_len, &held))
		return capkeys_pull(sv, q, held, reply);
	if (!q->data_len || q->data[0] != CAP_KEYS_SIGNED)
		return refuse_unsigned(q, "capability keys");
	sender(q, by, sizeof(by));
	rc = cap_ring_offer(sv->capkeys, q->data, q->data_len);
	n = cap_ring_get(sv->capkeys, k);
	if (rc == 1 && n > 1)
		log_warn("capability keys from %s: current key %u, previous key %u", by,
			 (unsigned)k[0].id, (unsigned)k[1].id);
	else if (rc == 1)
		log_warn("capability keys from %s: current key %u", by, (unsigned)k[0].id);
	else if (rc == 0)
		log_info("capability keys from %s: current key %u, held already", by,
			 (unsigned)k[0].id);
	else
		log_warn("capability keys from %s refused: %s", by, ofs_strerror(rc));
	OPENSSL_cleanse(k, sizeof(k));
	return rc < 0 ? rc : 0;
}

static int op_freeze(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	int rc = speaks_as(q, q->sid);

	(void)reply;
	return rc ? rc : service_freeze(sv, q->oid, q->ms, q->sid);
}

static int op_behind(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	char oh[OFS_OID_HEX], sh[OFS_OID_HEX], why[256];
	int rc;

	(void)reply;
	if ((rc = speaks_as(q, q->sid)) != 0)
		return rc;
	oid_to_hex(q->oid, oh);
	sid_to_hex(q->sid, sh);
	snprintf(why, sizeof(why), "behind per %.32s: %.200s", sh, q->reason);
	rc = store_behind(sv->store, q->oid);
	if (rc == 1)
		return 0;                /* known already (told at start, say) */
	if (!rc)
		rc = store_behind_mark(sv->store, q->oid, why);
	if (!rc)
		log_warn("copy of %s here missed changes (told by %s: %s); "
			 "not served until caught up", oh, sh, q->reason);
	if (sv->hooks.behind)
		sv->hooks.behind(sv->hooks.arg);
	return rc;
}

static int op_stale_for(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	struct stale_page *pg = calloc(1, sizeof(*pg));
	struct store_stale_page sp = { .cap = OFS_MAX_STALE_LIST };
	bool later = false;
	int rc;

	if (!pg)
		return -ENOMEM;
	sp.oids = pg->oids;
	sp.why = pg->why;
	rc = store_stale_for(sv->store, q->sid, oid_is_zero(q->oid) ? NULL : &q->oid,
			     OFS_MAX_STALE_LIST, store_stale_page_add, &sp, &later);
	if (!rc)
		proto_encode_stale_list(reply, pg->oids, pg->why, sp.n, later);
	free(pg);
	return rc;
}

/* ---- background tasks and repair ------------------------------------------- */

static int op_task_start(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return sv->tasks ? taskhost_start(sv->tasks, &q->task) : -OFS_EUNKNOWNOP;
}

static int op_task_poll(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	return sv->tasks ? taskhost_poll(sv->tasks, q->task.job, q->task.ack, q->task.budget, reply)
			 : -OFS_EUNKNOWNOP;
}

static int op_task_ctl(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	(void)reply;
	return sv->tasks ? taskhost_ctl(sv->tasks, q->task.job, q->task.action) : -OFS_EUNKNOWNOP;
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

/* Another server's task's records for this server's task of the job
 * (mailbox.h). */
static int op_join(struct service *sv, struct ofs_req *q, struct wbuf *reply)
{
	bool end = (q->flags & OFS_JOIN_END) != 0;
	int rc;

	(void)reply;
	if (!sv->mailbox)
		return -OFS_EUNKNOWNOP;
	rc = speaks_as(q, q->sid);
	if (!rc)
		rc = mailbox_put(sv->mailbox, q->task.job, q->sid, q->epoch,
				 q->flags & (OFS_JOIN_CHANNELS - 1), q->reclen, q->data, q->data_len,
				 end, q->count);
	return rc;
}

/* ---- the handlers, by operation (the rest of each row: lib/ops.def) ---- */

/* (the rows with no handler here are filled in by ops_register) */
static ops_fn handlers[OFS_OP_MAX] = {
	[OFS_OP_PING] = op_ping,
	[OFS_OP_GET_ROOT] = op_get_root,
	[OFS_OP_CREATE] = op_create,
	[OFS_OP_REMOVE] = op_remove,
	[OFS_OP_CREATE_SMALL] = op_create_small,
	[OFS_OP_GETATTR_MANY] = op_getattr_many,
	[OFS_OP_GET_SMALL] = op_get_small,
	[OFS_OP_GETATTR] = op_attr,
	[OFS_OP_SETATTR] = op_attr,
	[OFS_OP_READ] = op_read,
	[OFS_OP_WRITE] = op_write,
	[OFS_OP_COMMIT] = op_commit,
	[OFS_OP_KV_GET] = op_kv_get,
	[OFS_OP_KV_PUT] = op_kv_put,
	[OFS_OP_KV_DEL] = op_kv_del,
	[OFS_OP_KV_LIST] = op_kv_list,
	[OFS_OP_DIRENT_CREATE] = op_dirent_create,
	[OFS_OP_DIRENT_REMOVE] = op_dirent_remove,
	[OFS_OP_DIRENT_LOOKUP] = op_dirent_lookup,
	[OFS_OP_DIRENT_LIST] = op_dirent_list,
	[OFS_OP_SERVERS] = op_servers,
	[OFS_OP_STATS] = op_stats,
	[OFS_OP_REPORT] = op_report,
	[OFS_OP_SET_ROOT] = op_set_root,
	[OFS_OP_SERVER_SET] = op_server_set,
	[OFS_OP_ROOT_MOVE] = op_root_move,
	[OFS_OP_TASK_START] = op_task_start,
	[OFS_OP_TASK_POLL] = op_task_poll,
	[OFS_OP_TASK_CTL] = op_task_ctl,
	[OFS_OP_BEHIND] = op_behind,
	[OFS_OP_STALE_FOR] = op_stale_for,
	[OFS_OP_SUMMARY] = op_summary,
	[OFS_OP_SUMMARY_MANY] = op_summary_many,
	[OFS_OP_JOIN] = op_join,
	[OFS_OP_VERIFY] = op_verify,
	[OFS_OP_REPAIR_FETCH] = op_repair_fetch,
	[OFS_OP_STALE_CLEAR] = op_stale_clear,
	[OFS_OP_FREEZE] = op_freeze,
	[OFS_OP_CHANGES] = op_changes,
	[OFS_OP_REVOKED] = op_revoked,
	[OFS_OP_CAPKEYS] = op_capkeys,
};

ops_fn ops_handler(uint16_t op)
{
	op &= (uint16_t)~OFS_OP_FORWARDED;
	return op < OFS_OP_MAX && op_def(op) ? handlers[op] : NULL;
}

int ops_register(uint16_t op, ops_fn fn)
{
	if (op >= OFS_OP_MAX || !op_def(op) || handlers[op] || !fn)
		return -EINVAL;
	handlers[op] = fn;
	return 0;
}
