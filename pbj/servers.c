/* servers.c - what ofs-pbj asks the servers before it acts on one (see
 * servers.h). Nothing here prints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/conn.h"
#include "lib/ofs_error.h"
#include "pbj/runner.h"
#include "pbj/servers.h"

#define TABLE_MS 10000            /* SERVERS answers from memory */
#define STATS_MS 30000            /* STATS walks the server's records */
#define STOP_CHECK_MS 600000      /* STOP_CHECK asks about every object */

int pbj_fetch_table(const char *const *cluster, size_t n, struct ofs_server **e, size_t *ne,
		    const char **via)
{
	return conn_fetch_table(cluster, n, TABLE_MS, e, ne, via);
}

int pbj_resolve_sid_in(const char *arg, const struct ofs_sid *sids, size_t n,
		       struct ofs_sid *out)
{
	size_t len = strlen(arg), found = 0;

	if (sid_from_hex(arg, out) == 0)
		return 0;
	if (len < 4 || len > 32 || strspn(arg, "0123456789abcdefABCDEF") != len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char hex[OFS_OID_HEX];
		sid_to_hex(sids[i], hex);
		if (strncasecmp(hex, arg, len) == 0) {
			*out = sids[i];
			found++;
		}
	}
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

/* The SIDs of e[0..n-1], in a new array (NULL: no memory). */
static struct ofs_sid *sids_of(const struct ofs_server *e, size_t n)
{
	struct ofs_sid *s = malloc((n ? n : 1) * sizeof(*s));

	for (size_t i = 0; s && i < n; i++)
		s[i] = e[i].sid;
	return s;
}

int pbj_resolve_sid(const char *arg, const struct ofs_server *e, size_t n, struct ofs_sid *out)
{
	struct ofs_sid *s = sids_of(e, n);
	int rc = s ? pbj_resolve_sid_in(arg, s, n, out) : -ENOMEM;

	free(s);
	return rc;
}

void pbj_sid_why_in(const char *arg, int rc, const struct ofs_sid *sids, size_t n,
		    char out[PBJ_SID_WHY_LEN])
{
	size_t len = strlen(arg), at, shown = 0, more = 0;
	int k = snprintf(out, PBJ_SID_WHY_LEN, "%s", pbj_sid_why(rc));

	if (rc != -EEXIST || k < 0)
		return;
	at = (size_t)k;
	for (size_t i = 0; i < n; i++) {
		char hex[OFS_OID_HEX];
		sid_to_hex(sids[i], hex);
		if (strncasecmp(hex, arg, len) != 0)
			continue;
		if (shown == 8) {
			more++;
			continue;
		}
		k = snprintf(out + at, PBJ_SID_WHY_LEN - at, "%s%s", shown ? ", " : ": ", hex);
		if (k > 0 && (size_t)k < PBJ_SID_WHY_LEN - at)
			at += (size_t)k;
		shown++;
	}
	if (more)
		snprintf(out + at, PBJ_SID_WHY_LEN - at, " and %zu more", more);
}

void pbj_sid_why_of(const char *arg, int rc, const struct ofs_server *e, size_t n,
		    char out[PBJ_SID_WHY_LEN])
{
	struct ofs_sid *s = sids_of(e, n);

	pbj_sid_why_in(arg, rc, s, s ? n : 0, out);
	free(s);
}

const struct ofs_server *pbj_server_named(const char *arg, const struct ofs_server *e,
					  size_t n, int *rc, char why[PBJ_SID_WHY_LEN])
{
	struct ofs_sid sid;

	*rc = pbj_resolve_sid(arg, e, n, &sid);
	for (size_t i = 0; !*rc && i < n; i++)
		if (sid_eq(e[i].sid, sid))
			return &e[i];
	if (!*rc)
		*rc = -ENOENT;
	pbj_sid_why_of(arg, *rc, e, n, why);
	return NULL;
}

static const char *rack_of(const struct ofs_server *e, char *buf, size_t n)
{
	buf[0] = '\0';
	for (uint8_t i = 0; i < e->nattrs; i++)
		if (strncmp(e->attrs[i], "rack=", 5) == 0)
			snprintf(buf, n, "%s", e->attrs[i] + 5);
	return buf;
}

int pbj_server_stats(const struct ofs_server *e, int timeout_ms, struct ofs_stats *st)
{
	struct ofs_req q = { .op = OFS_OP_STATS };
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc = conn_call_once_sid(e->address, &e->sid, &q, timeout_ms, &b, &bn);

	if (!rc)
		rc = proto_decode_stats(b, bn, st);
	free(b);
	return rc;
}

static int stats_of(const struct ofs_server *e, struct ofs_stats *st)
{
	return pbj_server_stats(e, STATS_MS, st);
}

/* The servers in service besides f that answer: how many, their racks,
 * their free bytes. */
static void others_of(const struct ofs_server *e, size_t n, const struct ofs_server *f,
		      struct pbj_drain_check *out)
{
	char racks[OFS_MAX_SERVERS][64];
	struct ofs_stats os;

	for (size_t i = 0; i < n; i++) {
		char rack[64];
		bool seen = false;
		if (&e[i] == f || e[i].state != OFS_SERVER_IN || stats_of(&e[i], &os) != 0)
			continue;
		out->others++;
		out->avail += os.avail;
		rack_of(&e[i], rack, sizeof(rack));
		for (size_t k = 0; k < out->racks; k++)
			seen |= strcmp(racks[k], rack) == 0;
		if (!seen && out->racks < OFS_MAX_SERVERS)
			snprintf(racks[out->racks++], sizeof(racks[0]), "%s", rack);
	}
}

void pbj_drain_check(const char *const *cluster, size_t ncluster, const char *sidarg,
		     bool dry_run, struct pbj_drain_check *out)
{
	struct ofs_server *e = NULL;
	const struct ofs_server *f;
	struct ofs_stats fs;
	const char *via = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);
	if (out->rc) {
		out->verdict = PBJ_DRAIN_NO_TABLE;
		return;
	}
	f = pbj_server_named(sidarg, e, n, &out->rc, out->why);
	if (!f) {
		out->verdict = PBJ_DRAIN_BAD_SERVER;
		goto out;
	}
	out->sid = f->sid;
	if (f->state == OFS_SERVER_OUT) {
		out->verdict = PBJ_DRAIN_OUT;
		goto out;
	}
	out->rc = stats_of(f, &fs);
	if (out->rc) {
		out->verdict = PBJ_DRAIN_SILENT;
		goto out;
	}
	out->objects = fs.objects;
	out->bytes = fs.bytes;
	out->max_copies = fs.max_copies;
	others_of(e, n, f, out);
	if (out->others < fs.max_copies) {
		out->verdict = PBJ_DRAIN_TOO_FEW;
	} else if (fs.bytes > out->avail / 100 * 95) {
		out->verdict = PBJ_DRAIN_NO_ROOM;
	} else if (!dry_run && f->state != OFS_SERVER_DRAINING) {
		struct pbj_runner_opts o = { .cluster = cluster, .ncluster = ncluster };
		out->rc = pbj_server_state(&o, f->address, f->sid, OFS_SERVER_DRAINING);
		if (out->rc)
			out->verdict = PBJ_DRAIN_MARK_FAILED;
	}
out:
	free(e);
}

void pbj_stop_check(const char *const *cluster, size_t ncluster, const char *sidarg,
		    struct pbj_stop_check *out)
{
	struct ofs_server *e = NULL;
	const struct ofs_server *f;
	struct ofs_req q = { .op = OFS_OP_STOP_CHECK };
	const char *via = NULL;
	uint8_t *b = NULL;
	size_t n = 0, bn = 0;

	memset(out, 0, sizeof(*out));
	out->rc = pbj_fetch_table(cluster, ncluster, &e, &n, &via);
	if (out->rc) {
		out->verdict = PBJ_STOP_NO_TABLE;
		return;
	}
	f = pbj_server_named(sidarg, e, n, &out->rc, out->why);
	if (!f) {
		out->verdict = PBJ_STOP_BAD_SERVER;
		free(e);
		return;
	}
	out->sid = f->sid;
	q.max = OFS_STOP_LIST_MAX;
	out->rc = conn_call_once(f->address, &q, STOP_CHECK_MS, &b, &bn);
	if (!out->rc)
		out->rc = proto_decode_stop_reply(b, bn, &out->reply);
	free(b);
	free(e);
	if (out->rc)
		out->verdict = conn_is_transport_error(out->rc) || out->rc == -OFS_EUNREACHABLE ||
			       out->rc == -ENOMEM ? PBJ_STOP_SILENT : PBJ_STOP_REFUSED;
}

const char *pbj_sid_why(int rc)
{
	return rc == -EINVAL ? "not a SID (32 hex digits, or a unique prefix of 4 or more)" :
	       rc == -EEXIST ? "prefix matches several servers" :
	       rc == -ENOMEM ? "out of memory" : "no such server";
}
