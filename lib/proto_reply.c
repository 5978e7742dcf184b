/*
 * proto_reply.c - the bodies of replies: handles, entries, lists, the
 * server table, statistics, stale lists, task status and findings,
 * summaries, changes, fetch and stop-check replies (see proto.h). Every
 * decoder reads through an rbuf, so no length is trusted before it is
 * checked.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "lib/proto.h"
#include "lib/proto_impl.h"

void proto_encode_ping(struct wbuf *w, const struct ofs_ping_reply *p)
{
	wbuf_sid(w, p->sid);
	wbuf_str(w, p->version);
}

int proto_decode_ping(const uint8_t *b, size_t n, struct ofs_ping_reply *p)
{
	struct rbuf r;
	struct ofs_ping_reply t;

	rbuf_init(&r, b, n);
	t.sid = rbuf_sid(&r);
	rbuf_str(&r, t.version, sizeof(t.version));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*p = t;
	return 0;
}

void proto_encode_handle_reply(struct wbuf *w, const struct ofs_handle *h)
{
	wbuf_handle(w, h);
}

int proto_decode_handle_reply(const uint8_t *b, size_t n, struct ofs_handle *h)
{
	struct rbuf r;
	struct ofs_handle t;

	rbuf_init(&r, b, n);
	rbuf_handle(&r, &t);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*h = t;
	return 0;
}

void proto_encode_oid_reply(struct wbuf *w, struct ofs_oid oid)
{
	wbuf_oid(w, oid);
}

int proto_decode_oid_reply(const uint8_t *b, size_t n, struct ofs_oid *oid)
{
	struct rbuf r;
	struct ofs_oid t;

	rbuf_init(&r, b, n);
	t = rbuf_oid(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*oid = t;
	return 0;
}

int proto_decode_attr_reply(const uint8_t *b, size_t n, struct ofs_attr *a)
{
	struct rbuf r;

	rbuf_init(&r, b, n);
	proto_decode_attr(&r, a);
	return rbuf_done(&r);
}

void proto_encode_small_reply(struct wbuf *w, const struct ofs_attr *a, const void *data,
			      size_t len)
{
	proto_encode_attr(w, a);
	wbuf_u8(w, data != NULL);
	if (data)
		wbuf_blob(w, data, len);
}

int proto_decode_small_reply(const uint8_t *b, size_t n, struct ofs_attr *a,
			     const uint8_t **data, size_t *len)
{
	struct rbuf r;
	uint8_t has;

	*data = NULL;
	*len = 0;
	rbuf_init(&r, b, n);
	proto_decode_attr(&r, a);
	has = rbuf_u8(&r);
	if (!rbuf_error(&r) && has > 1)
		rbuf_fail(&r, -OFS_ECORRUPT);
	if (!rbuf_error(&r) && has) {
		*data = rbuf_blob(&r, OFS_SMALL_MAX, len);
		if (!rbuf_error(&r) && (a->type != OFS_OBJ_METAFILE || *len != a->size))
			rbuf_fail(&r, -OFS_ECORRUPT);
	}
	return rbuf_done(&r);
}

void proto_encode_write_reply(struct wbuf *w, const struct ofs_write_reply *p)
{
	wbuf_u64(w, p->version);
	wbuf_u64(w, p->size);
}

int proto_decode_write_reply(const uint8_t *b, size_t n, struct ofs_write_reply *p)
{
	struct rbuf r;
	struct ofs_write_reply t;

	rbuf_init(&r, b, n);
	t.version = rbuf_u64(&r);
	t.size = rbuf_u64(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*p = t;
	return 0;
}

void proto_encode_dirent_reply(struct wbuf *w, bool present, const struct ofs_dirent *d)
{
	wbuf_u8(w, present ? 1 : 0);
	if (present)
		proto_encode_dirent(w, d);
}

int proto_decode_dirent_reply(const uint8_t *b, size_t n, bool *present, struct ofs_dirent *d)
{
	struct rbuf r;
	struct ofs_dirent t;
	uint8_t p;

	memset(&t, 0, sizeof(t));
	rbuf_init(&r, b, n);
	p = rbuf_u8(&r);
	if (p > 1)
		rbuf_fail(&r, -OFS_ECORRUPT);
	if (p == 1)
		proto_decode_dirent(&r, &t);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*present = p == 1;
	*d = t;
	return 0;
}

void proto_list_begin(struct ofs_list_writer *lw, struct wbuf *w)
{
	lw->w = w;
	lw->count_off = w->len;
	lw->count = 0;
	wbuf_u32(w, 0);
}

void proto_list_add_kv(struct ofs_list_writer *lw, const void *k, size_t kn,
		       const void *v, size_t vn)
{
	wbuf_blob(lw->w, k, kn);
	wbuf_blob(lw->w, v, vn);
	lw->count++;
}

void proto_list_add_dirent(struct ofs_list_writer *lw, const char *name,
			   const struct ofs_dirent *d)
{
	wbuf_str(lw->w, name);
	proto_encode_dirent(lw->w, d);
	lw->count++;
}

void proto_list_end(struct ofs_list_writer *lw, bool more)
{
	wbuf_patch_u32(lw->w, lw->count_off, lw->count);
	wbuf_u8(lw->w, more ? 1 : 0);
}

/* Walk a list body once to prove every entry decodes, then rewind. */
static int list_open(struct ofs_list_reader *lr, const uint8_t *b, size_t n, bool kv)
{
	struct rbuf r;
	uint32_t count;
	uint8_t more;

	rbuf_init(&r, b, n);
	count = rbuf_u32(&r);
	if (!rbuf_error(&r) && count > OFS_MAX_LIST)
		return -OFS_ECORRUPT;
	for (uint32_t i = 0; i < count && !rbuf_error(&r); i++) {
		size_t l;
		if (kv) {
			rbuf_blob(&r, OFS_MAX_KEY, &l);
			rbuf_blob(&r, OFS_MAX_VALUE, &l);
		} else {
			char name[OFS_NAME_MAX + 1];
			struct ofs_dirent d;
			proto_decode_name(&r, name, false);
			proto_decode_dirent(&r, &d);
		}
	}
	more = rbuf_u8(&r);
	if (more > 1)
		rbuf_fail(&r, -OFS_ECORRUPT);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	rbuf_init(&lr->r, b, n);
	lr->left = rbuf_u32(&lr->r);
	lr->more = more == 1;
	return 0;
}

int proto_list_open_kv(struct ofs_list_reader *lr, const uint8_t *b, size_t n)
{
	return list_open(lr, b, n, true);
}

int proto_list_open_dirent(struct ofs_list_reader *lr, const uint8_t *b, size_t n)
{
	return list_open(lr, b, n, false);
}

int proto_list_next_kv(struct ofs_list_reader *lr, const uint8_t **k, size_t *kn,
		       const uint8_t **v, size_t *vn)
{
	if (lr->left == 0)
		return 0;
	lr->left--;
	*k = rbuf_blob(&lr->r, OFS_MAX_KEY, kn);
	*v = rbuf_blob(&lr->r, OFS_MAX_VALUE, vn);
	return rbuf_error(&lr->r) ? 0 : 1;
}

int proto_list_next_dirent(struct ofs_list_reader *lr, char name[OFS_NAME_MAX + 1],
			   struct ofs_dirent *d)
{
	if (lr->left == 0)
		return 0;
	lr->left--;
	proto_decode_name(&lr->r, name, false);
	proto_decode_dirent(&lr->r, d);
	return rbuf_error(&lr->r) ? 0 : 1;
}

/* ---- the server table --------------------------------------------------- */

const char *ofs_server_state_name(uint8_t state)
{
	switch (state) {
	case OFS_SERVER_IN: return "in";
	case OFS_SERVER_DRAINING: return "draining";
	case OFS_SERVER_OUT: return "out";
	default: return "unknown";
	}
}

int ofs_server_state_parse(const char *s, uint8_t *state)
{
	for (uint8_t i = OFS_SERVER_IN; i <= OFS_SERVER_OUT; i++) {
		if (strcmp(s, ofs_server_state_name(i)) == 0) {
			*state = i;
			return 0;
		}
	}
	return -EINVAL;
}

void ofs_server_attr(const struct ofs_server *e, const char *key, char *out, size_t len)
{
	size_t kn = strlen(key);

	if (len)
		out[0] = '\0';
	for (uint8_t i = 0; i < e->nattrs && i < OFS_SERVER_ATTRS; i++) {
		if (strncmp(e->attrs[i], key, kn) == 0 && e->attrs[i][kn] == '=') {
			snprintf(out, len, "%s", e->attrs[i] + kn + 1);
			return;
		}
	}
}

/* "key=value": a non-empty key, printable ASCII, no spaces. */
static bool attr_ok(const char *a, bool allow_empty_value)
{
	const char *eq = strchr(a, '=');

	if (!eq || eq == a || (!allow_empty_value && !eq[1]))
		return false;
	for (const char *c = a; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	return true;
}

void proto_encode_server(struct wbuf *w, const struct ofs_server *e)
{
	uint8_t n = e->nattrs > OFS_SERVER_ATTRS ? OFS_SERVER_ATTRS : e->nattrs;

	wbuf_sid(w, e->sid);
	wbuf_str(w, e->address);
	wbuf_u8(w, e->state);
	wbuf_u32(w, e->weight_milli);
	wbuf_u8(w, n);
	for (uint8_t i = 0; i < n; i++)
		wbuf_str(w, e->attrs[i]);
	wbuf_u64(w, e->version);
	wbuf_i64(w, e->last_seen_ns);
	wbuf_handle(w, &e->root);
	wbuf_i64(w, e->root_birth_ns);
	wbuf_u64(w, e->self_version);
	wbuf_u64(w, e->root_version);
}

void proto_decode_server(struct rbuf *r, struct ofs_server *e)
{
	memset(e, 0, sizeof(*e));
	e->sid = rbuf_sid(r);
	rbuf_str(r, e->address, sizeof(e->address));
	e->state = rbuf_u8(r);
	e->weight_milli = rbuf_u32(r);
	e->nattrs = rbuf_u8(r);
	if (!rbuf_error(r) && e->nattrs > OFS_SERVER_ATTRS)
		rbuf_fail(r, -OFS_ECORRUPT);
	for (uint8_t i = 0; i < e->nattrs && !rbuf_error(r); i++) {
		rbuf_str(r, e->attrs[i], sizeof(e->attrs[i]));
		if (!rbuf_error(r) && !attr_ok(e->attrs[i], false))
			rbuf_fail(r, -OFS_ECORRUPT);
	}
	e->version = rbuf_u64(r);
	e->last_seen_ns = rbuf_i64(r);
	rbuf_handle(r, &e->root);
	e->root_birth_ns = rbuf_i64(r);
	e->self_version = rbuf_u64(r);
	e->root_version = rbuf_u64(r);
	if (!rbuf_error(r) && (e->state > OFS_SERVER_OUT || sid_is_zero(e->sid)))
		rbuf_fail(r, -OFS_ECORRUPT);
}

void proto_encode_servers(struct wbuf *w, const struct ofs_sid *responder,
			  const struct ofs_server *e, size_t n)
{
	if (n > OFS_MAX_SERVERS)
		n = OFS_MAX_SERVERS;
	if (responder)
		wbuf_sid(w, *responder);
	wbuf_u32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		proto_encode_server(w, &e[i]);
}

int proto_decode_servers(const uint8_t *b, size_t n, bool reply, struct ofs_sid *responder,
			 struct ofs_server **entries, size_t *count)
{
	struct rbuf r;
	struct ofs_server *e = NULL;
	struct ofs_sid who;
	uint32_t cnt;
	int rc;

	rbuf_init(&r, b, n);
	if (reply)
		who = rbuf_sid(&r);
	cnt = rbuf_u32(&r);
	if (rbuf_error(&r))
		return -OFS_ECORRUPT;
	if (cnt > OFS_MAX_SERVERS)
		return -OFS_ETOOBIG;
	/* Each entry is at least 16 + 2 + 1 + 4 + 1 + 8 + 8 + 17 + 8 + 8 + 8
	 * bytes. */
	if ((size_t)cnt * 81 > rbuf_left(&r))
		return -OFS_ECORRUPT;
	if (cnt) {
		e = calloc(cnt, sizeof(*e));
		if (!e)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < cnt; i++)
		proto_decode_server(&r, &e[i]);
	rc = rbuf_done(&r);
	if (rc) {
		free(e);
		return rc;
	}
	if (reply && responder)
		*responder = who;
	*entries = e;
	*count = cnt;
	return 0;
}

void proto_encode_server_set(struct wbuf *w, const struct ofs_server_set *s)
{
	wbuf_sid(w, s->sid);
	wbuf_u32(w, s->mask);
	wbuf_u8(w, s->state);
	wbuf_u32(w, s->weight_milli);
	wbuf_str(w, s->attr);
}

int proto_decode_server_set(const uint8_t *b, size_t n, struct ofs_server_set *s)
{
	struct rbuf r;
	struct ofs_server_set t;

	memset(&t, 0, sizeof(t));
	rbuf_init(&r, b, n);
	t.sid = rbuf_sid(&r);
	t.mask = rbuf_u32(&r);
	t.state = rbuf_u8(&r);
	t.weight_milli = rbuf_u32(&r);
	rbuf_str(&r, t.attr, sizeof(t.attr));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	if (t.mask == 0 || (t.mask & ~(uint32_t)(OFS_SET_STATE | OFS_SET_WEIGHT | OFS_SET_ATTR)) ||
	    t.state > OFS_SERVER_OUT || ((t.mask & OFS_SET_ATTR) && !attr_ok(t.attr, true)))
		return -OFS_ECORRUPT;
	*s = t;
	return 0;
}

void proto_encode_stats(struct wbuf *w, const struct ofs_stats *s)
{
	wbuf_u64(w, s->objects);
	wbuf_u64(w, s->bytes);
	wbuf_u64(w, s->avail);
	wbuf_u64(w, s->capacity);
	wbuf_u8(w, s->max_copies);
	wbuf_u64(w, s->behind);
	wbuf_u64(w, s->stuck);
	wbuf_u64(w, s->caught_up);
	wbuf_u8(w, s->recovering);
}

int proto_decode_stats(const uint8_t *b, size_t n, struct ofs_stats *s)
{
	struct rbuf r;
	struct ofs_stats t;

	rbuf_init(&r, b, n);
	t.objects = rbuf_u64(&r);
	t.bytes = rbuf_u64(&r);
	t.avail = rbuf_u64(&r);
	t.capacity = rbuf_u64(&r);
	t.max_copies = rbuf_u8(&r);
	t.behind = rbuf_u64(&r);
	t.stuck = rbuf_u64(&r);
	t.caught_up = rbuf_u64(&r);
	t.recovering = rbuf_u8(&r);
	if (!rbuf_error(&r) && (t.max_copies > OFS_MAX_REPLICAS || t.recovering > 1 ||
				t.stuck > t.behind))
		return -OFS_ECORRUPT;
	if (rbuf_done(&r))
		return rbuf_done(&r);
	*s = t;
	return 0;
}

void proto_encode_report(struct wbuf *w, struct ofs_oid oid, struct ofs_sid sid, const char *reason)
{
	char r[256];

	snprintf(r, sizeof(r), "%s", reason);
	wbuf_oid(w, oid);
	wbuf_sid(w, sid);
	wbuf_str(w, r);
}

int proto_decode_report(const uint8_t *b, size_t n, struct ofs_oid *oid, struct ofs_sid *sid,
			char reason[256])
{
	struct rbuf r;
	struct ofs_oid o;
	struct ofs_sid s;
	char t[256];

	rbuf_init(&r, b, n);
	o = rbuf_oid(&r);
	s = rbuf_sid(&r);
	rbuf_str(&r, t, sizeof(t));
	if (rbuf_done(&r))
		return rbuf_done(&r);
	for (const char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return -OFS_ECORRUPT;   /* it goes into a log line */
	*oid = o;
	*sid = s;
	memcpy(reason, t, sizeof(t));
	return 0;
}

void proto_encode_root(struct wbuf *w, const struct ofs_handle *h, int64_t birth_ns)
{
	wbuf_handle(w, h);
	wbuf_i64(w, birth_ns);
}

int proto_decode_root(const uint8_t *b, size_t n, struct ofs_handle *h, int64_t *birth_ns)
{
	struct rbuf r;
	struct ofs_handle t;
	int64_t birth;

	rbuf_init(&r, b, n);
	rbuf_handle(&r, &t);
	birth = rbuf_i64(&r);
	if (rbuf_done(&r))
		return rbuf_done(&r);
	if (oid_is_zero(t.oid) || t.nsids == 0)
		return -OFS_ECORRUPT;
	*h = t;
	*birth_ns = birth;
	return 0;
}

void proto_encode_stale_record(struct wbuf *w, struct ofs_oid oid, const char *reason)
{
	wbuf_oid(w, oid);
	wbuf_str(w, reason);
}

void proto_encode_stale_list(struct wbuf *w, const struct ofs_oid *oids,
			     char (*reasons)[256], uint32_t n, bool more)
{
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		proto_encode_stale_record(w, oids[i], reasons[i]);
	wbuf_u8(w, more ? 1 : 0);
}

int proto_decode_stale_list(const uint8_t *b, size_t len,
			    int (*fn)(struct ofs_oid oid, const char *reason, void *arg),
			    void *arg, bool *more)
{
	struct rbuf r;
	char reason[256];
	uint32_t n;
	uint8_t m;
	int rc;

	/* Pass 1: check everything; pass 2: deliver. */
	for (int pass = 0; pass < 2; pass++) {
		rbuf_init(&r, b, len);
		n = rbuf_u32(&r);
		if (!rbuf_error(&r) && n > OFS_MAX_STALE_LIST)
			return -OFS_ETOOBIG;
		for (uint32_t i = 0; i < n && !rbuf_error(&r); i++) {
			struct ofs_oid oid = rbuf_oid(&r);
			rbuf_str(&r, reason, sizeof(reason));
			for (const char *c = reason; !rbuf_error(&r) && *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					return -OFS_ECORRUPT;   /* it goes into logs */
			if (pass == 1 && !rbuf_error(&r) && (rc = fn(oid, reason, arg)) != 0)
				return rc;
		}
		m = rbuf_u8(&r);
		if (rbuf_done(&r))
			return rbuf_done(&r);
		if (m > 1)
			return -OFS_ECORRUPT;
	}
	*more = m == 1;
	return 0;
}

static const char *const finding_names[OFS_FINDING_MAX] = {
	[OFS_FINDING_CHECKSUM_MISMATCH] = "checksum_mismatch",
	[OFS_FINDING_SIZE_MISMATCH] = "size_mismatch",
	[OFS_FINDING_UNREADABLE] = "unreadable",
	[OFS_FINDING_MISSING_REPLICA] = "missing_replica",
	[OFS_FINDING_STALE_REPLICA] = "stale_replica",
	[OFS_FINDING_KEYVAL_MISMATCH] = "keyval_mismatch",
	[OFS_FINDING_REPLICA_CONFLICT] = "replica_conflict",
	[OFS_FINDING_ORPHAN] = "orphan",
	[OFS_FINDING_DANGLING_POINTER] = "dangling_pointer",
	[OFS_FINDING_BACKREF_MISMATCH] = "backref_mismatch",
	[OFS_FINDING_MULTIPLE_OWNERS] = "multiple_owners",
	[OFS_FINDING_RECORD_CORRUPT] = "record_corrupt",
	[OFS_FINDING_MOVE] = "move",
};

const char *ofs_finding_name(int kind)
{
	return kind > OFS_FINDING_NONE && kind < OFS_FINDING_MAX ? finding_names[kind] : NULL;
}

int ofs_finding_parse(const char *name)
{
	for (int k = OFS_FINDING_NONE + 1; k < OFS_FINDING_MAX; k++)
		if (!strcmp(name, finding_names[k]))
			return k;
	return OFS_FINDING_NONE;
}

void proto_encode_task_status(struct wbuf *w, const struct ofs_task_status *st,
			      const struct ofs_task_finding *f, uint32_t n)
{
	wbuf_u8(w, st->state);
	wbuf_u64(w, st->objects_done);
	wbuf_u64(w, st->objects_total);
	wbuf_u64(w, st->bytes_done);
	wbuf_u64(w, st->bytes_total);
	wbuf_oid(w, st->cursor);
	wbuf_str(w, st->reason);
	wbuf_u64(w, st->repairs);
	wbuf_u8(w, st->starved ? 1 : 0);
	wbuf_u32(w, (uint32_t)st->error);
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		proto_encode_finding(w, &f[i]);
}

void proto_encode_finding(struct wbuf *w, const struct ofs_task_finding *f)
{
	wbuf_u64(w, f->seq);
	wbuf_sid(w, f->server);
	wbuf_oid(w, f->oid);
	wbuf_str(w, ofs_finding_name(f->kind) ? ofs_finding_name(f->kind) : "");
	wbuf_str(w, f->detail);
	wbuf_u8(w, f->repair);
	wbuf_sid(w, f->source);
	wbuf_oid(w, f->ref);
	wbuf_str(w, f->action);
}

int proto_decode_task_status(const uint8_t *b, size_t len, struct ofs_task_status *st,
			     int (*fn)(const struct ofs_task_finding *f, void *arg), void *arg)
{
	struct ofs_task_finding *f = malloc(sizeof(*f));
	struct ofs_task_status t;
	struct rbuf r;
	char kind[32];
	int rc = 0;

	if (!f)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		uint32_t n;
		rbuf_init(&r, b, len);
		t.state = rbuf_u8(&r);
		t.objects_done = rbuf_u64(&r);
		t.objects_total = rbuf_u64(&r);
		t.bytes_done = rbuf_u64(&r);
		t.bytes_total = rbuf_u64(&r);
		t.cursor = rbuf_oid(&r);
		rbuf_str(&r, t.reason, sizeof(t.reason));
		t.repairs = rbuf_u64(&r);
		uint8_t starved = rbuf_u8(&r);
		t.starved = starved != 0;
		t.error = (int32_t)rbuf_u32(&r);
		n = rbuf_u32(&r);
		if (!rbuf_error(&r) && (t.state < OFS_TASK_RUNNING || t.state > OFS_TASK_CANCELLED ||
					!proto_printable(t.reason) || starved > 1 || t.error > 0 ||
					t.error <= -OFS_ELAST)) {
			rc = -OFS_ECORRUPT;
			break;
		}
		if (!rbuf_error(&r) && n > OFS_MAX_TASK_FINDINGS) {
			rc = -OFS_ETOOBIG;
			break;
		}
		for (uint32_t i = 0; i < n && !rbuf_error(&r) && !rc; i++) {
			f->seq = rbuf_u64(&r);
			f->server = rbuf_sid(&r);
			f->oid = rbuf_oid(&r);
			rbuf_str(&r, kind, sizeof(kind));
			f->kind = (uint8_t)ofs_finding_parse(kind);
			rbuf_str(&r, f->detail, sizeof(f->detail));
			f->repair = rbuf_u8(&r);
			f->source = rbuf_sid(&r);
			f->ref = rbuf_oid(&r);
			rbuf_str(&r, f->action, sizeof(f->action));
			if (rbuf_error(&r))
				break;
			if (f->kind == OFS_FINDING_NONE || !proto_printable(f->detail) ||
			    !proto_printable(f->action) || f->repair > OFS_REPAIR_MAX)
				rc = -OFS_ECORRUPT;
			else if (pass == 1 && fn)
				rc = fn(f, arg);
		}
		if (!rc)
			rc = rbuf_done(&r);
	}
	free(f);
	if (!rc)
		*st = t;
	return rc;
}

void proto_encode_summary(struct wbuf *w, const struct ofs_summary *s)
{
	wbuf_u8(w, (uint8_t)((s->present ? 1 : 0) | (s->behind ? 2 : 0) | (s->corrupt ? 4 : 0) |
			     (s->checked ? 8 : 0) | (s->bad ? 16 : 0)));
	wbuf_u64(w, s->version);
	wbuf_u64(w, s->size);
	wbuf_digest(w, s->digest);
	wbuf_u8(w, s->type);
	wbuf_oid(w, s->backref.owner);
	wbuf_u32(w, s->backref.stripe);
	wbuf_str(w, s->backref.name);
}

static int decode_summary(struct rbuf *r, struct ofs_summary *s)
{
	struct ofs_summary t;
	uint8_t fl;

	fl = rbuf_u8(r);
	t.version = rbuf_u64(r);
	t.size = rbuf_u64(r);
	t.digest = rbuf_digest(r);
	memset(&t.backref, 0, sizeof(t.backref));
	t.type = rbuf_u8(r);
	t.backref.owner = rbuf_oid(r);
	t.backref.stripe = rbuf_u32(r);
	proto_decode_name(r, t.backref.name, true);
	if (rbuf_error(r))
		return rbuf_error(r);
	if (t.type != 0 && !ofs_type_valid(t.type))
		return -OFS_ECORRUPT;
	if (fl > 31 || ((fl & 16) && !(fl & 8)))
		return -OFS_ECORRUPT;
	t.checked = (fl & 8) != 0;
	t.bad = (fl & 16) != 0;
	t.present = fl & 1;
	t.behind = (fl & 2) != 0;
	t.corrupt = (fl & 4) != 0;
	*s = t;
	return 0;
}

int proto_decode_summary(const uint8_t *b, size_t len, struct ofs_summary *s)
{
	struct rbuf r;
	struct ofs_summary t;
	int rc;

	rbuf_init(&r, b, len);
	rc = decode_summary(&r, &t);
	if (!rc)
		rc = rbuf_done(&r);
	if (!rc)
		*s = t;
	return rc;
}

void proto_encode_changes(struct wbuf *w, uint64_t version, struct ofs_digest digest,
			  const uint8_t *notes, size_t n)
{
	wbuf_u64(w, version);
	wbuf_digest(w, digest);
	wbuf_blob(w, notes, n);
}

int proto_decode_changes(const uint8_t *b, size_t len, uint64_t *version,
			 struct ofs_digest *digest, const uint8_t **notes, size_t *n)
{
	struct rbuf r;
	struct ofs_digest d;
	uint64_t v;
	int rc;

	rbuf_init(&r, b, len);
	v = rbuf_u64(&r);
	d = rbuf_digest(&r);
	*notes = rbuf_blob(&r, OFS_MAX_IO, n);
	rc = rbuf_done(&r);
	if (rc)
		return rc;
	*version = v;
	*digest = d;
	return 0;
}

void proto_encode_summaries(struct wbuf *w, const struct ofs_summary *s, uint32_t n)
{
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		proto_encode_summary(w, &s[i]);
}

int proto_decode_summaries(const uint8_t *b, size_t len, struct ofs_summary *s, uint32_t n)
{
	struct rbuf r;
	int rc = 0;

	rbuf_init(&r, b, len);
	if (rbuf_u32(&r) != n)
		return rbuf_error(&r) ? rbuf_error(&r) : -OFS_ECORRUPT;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = decode_summary(&r, &s[i]);
	return rc ? rc : rbuf_done(&r);
}

void proto_encode_attrs_many(struct wbuf *w, const int32_t *st, const struct ofs_attr *a,
			     uint32_t n)
{
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		wbuf_u32(w, (uint32_t)st[i]);
		if (st[i] == 0)
			proto_encode_attr(w, &a[i]);
	}
}

int proto_decode_attrs_many(const uint8_t *b, size_t len, int32_t *st, struct ofs_attr *a,
			    uint32_t n)
{
	struct rbuf r;

	rbuf_init(&r, b, len);
	if (rbuf_u32(&r) != n)
		return rbuf_error(&r) ? rbuf_error(&r) : -OFS_ECORRUPT;
	for (uint32_t i = 0; i < n && !rbuf_error(&r); i++) {
		st[i] = (int32_t)rbuf_u32(&r);
		if (!rbuf_error(&r) && st[i] > 0)
			rbuf_fail(&r, -OFS_ECORRUPT);     /* (statuses are 0 or -errno) */
		if (!rbuf_error(&r) && st[i] == 0)
			proto_decode_attr(&r, &a[i]);
	}
	return rbuf_done(&r);
}

void proto_encode_fetch_reply(struct wbuf *w, const struct ofs_fetch_reply *f)
{
	wbuf_u8(w, f->outcome);
	wbuf_sid(w, f->source);
	wbuf_u64(w, f->version);
	wbuf_u64(w, f->bytes);
	wbuf_str(w, f->detail);
}

int proto_decode_fetch_reply(const uint8_t *b, size_t len, struct ofs_fetch_reply *f)
{
	struct ofs_fetch_reply t;
	struct rbuf r;
	int rc;

	rbuf_init(&r, b, len);
	t.outcome = rbuf_u8(&r);
	t.source = rbuf_sid(&r);
	t.version = rbuf_u64(&r);
	t.bytes = rbuf_u64(&r);
	rbuf_str(&r, t.detail, sizeof(t.detail));
	rc = rbuf_done(&r);
	if (rc)
		return rc;
	if (t.outcome < OFS_FETCH_DONE || t.outcome > OFS_FETCH_MAX || !proto_printable(t.detail))
		return -OFS_ECORRUPT;
	*f = t;
	return 0;
}

void proto_encode_stop_reply(struct wbuf *w, const struct ofs_stop_reply *s)
{
	uint32_t n = s->n > OFS_STOP_LIST_MAX ? OFS_STOP_LIST_MAX : s->n;

	wbuf_u64(w, s->objects);
	wbuf_u64(w, s->nshort);
	wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		wbuf_oid(w, s->list[i].oid);
		wbuf_u8(w, s->list[i].good);
		wbuf_u8(w, s->list[i].need);
	}
}

int proto_decode_stop_reply(const uint8_t *b, size_t len, struct ofs_stop_reply *s)
{
	struct rbuf r;
	int rc;

	memset(s, 0, sizeof(*s));
	rbuf_init(&r, b, len);
	s->objects = rbuf_u64(&r);
	s->nshort = rbuf_u64(&r);
	s->n = rbuf_u32(&r);
	if (!rbuf_error(&r) && (s->n > OFS_STOP_LIST_MAX || s->n > s->nshort || s->nshort > s->objects))
		return -OFS_ECORRUPT;
	for (uint32_t i = 0; i < s->n && !rbuf_error(&r); i++) {
		s->list[i].oid = rbuf_oid(&r);
		s->list[i].good = rbuf_u8(&r);
		s->list[i].need = rbuf_u8(&r);
	}
	rc = rbuf_done(&r);
	if (rc)
		memset(s, 0, sizeof(*s));
	return rc;
}
