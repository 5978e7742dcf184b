/*
 * ofs_client.c - a libofs client (ofs.h, ofs_impl.h): the process's
 * identity; a client opened on the cluster - its server table, its root
 * directory (made when the cluster has none) - and closed; how many
 * copies directories get; its test steps (fault injection, the pause
 * step) and its count of requests sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/ofs_impl.h"
#include "lib/conn.h"
#include "lib/tls.h"

/* ---- open and close ----------------------------------------------------- */

/* How many copies directories get: up to DIR_COPIES, as servers allow. */
#define DIR_COPIES 3

unsigned cl_servers_in(const struct ofs_client *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->npeers; i++)
		n += c->peers[i].e.state == OFS_SERVER_IN;
	return n;
}

/* Directory objects: as many copies as DIR_COPIES and the servers in
 * service allow, a majority of them durable before an answer. */
void cl_dir_layout(const struct ofs_client *c, struct ofs_attr *a)
{
	unsigned in = cl_servers_in(c);

	a->replicas = (uint8_t)(in < DIR_COPIES ? (in ? in : 1) : DIR_COPIES);
	a->confidence = (uint8_t)(a->replicas / 2 + 1);
}

/*
 * The cluster has no namespace yet (no server knows a root): make a root
 * directory and its dirdata, replicated, and offer it. The server answers
 * with the root it serves - ours, or an older one another client made
 * first, in which case ours is removed.
 */
static int make_root(struct ofs_client *c, struct conn *cn)
{
	struct ofs_attr *a = calloc(1, sizeof(*a));
	struct ofs_handle dir, data, used;
	struct ofs_req q = { .op = OFS_OP_SET_ROOT };
	struct timespec ts;
	uint8_t *b = NULL;
	size_t n = 0;
	int64_t birth;
	int rc;

	if (!a)
		return -ENOMEM;
	if (c->caps) {
		free(a);           /* (a user: the root is an admin's to make) */
		return -EACCES;
	}
	memset(&used, 0, sizeof(used));
	cl_dir_layout(c, a);
	a->type = OFS_OBJ_DIRECTORY;
	a->mode = 0755;
	cl_owner(&a->uid, &a->gid);
	rc = cl_obj_create(c, a, a->replicas, NULL, &dir);
	if (rc)
		goto out;
	a->type = OFS_OBJ_DIRDATA;
	a->backref.owner = dir.oid;
	rc = cl_obj_create(c, a, a->replicas, NULL, &data);
	if (rc) {
		cl_obj_remove(c, &dir);
		goto out;
	}
	a->type = OFS_OBJ_DIRECTORY;
	memset(&a->backref, 0, sizeof(a->backref));
	a->nparts = 1;
	a->parts[0] = data;
	rc = cl_obj_setattr(c, &dir, OFS_ATTR_LAYOUT, a);
	clock_gettime(CLOCK_REALTIME, &ts);
	q.root = dir;
	q.birth_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (!rc)
		rc = conn_call(cn, &q, &b, &n);
	if (!rc)
		rc = proto_decode_root(b, n, &used, &birth);
	if (rc || !oid_eq(used.oid, dir.oid)) {
		cl_obj_remove(c, &data);
		cl_obj_remove(c, &dir);
	}
	if (!rc && oid_eq(used.oid, dir.oid)) {
		/* Every other server takes it now rather than a gossip round
		 * later: a server lost in that round must not leave the others
		 * without a root (a client would make a second one). Best
		 * effort; a server down now learns it by gossip. */
		q.root = used;
		q.birth_ns = birth;
		for (size_t i = 0; i < c->npeers; i++) {
			struct conn *pc = cl_conn_of(c, c->peers[i].e.sid);
			uint8_t *pb = NULL;
			size_t pn = 0;
			if (pc && conn_is_transport_error(conn_call(pc, &q, &pb, &pn)))
				cl_mark_down(c, c->peers[i].e.sid);
			free(pb);
		}
	}
	if (!rc)
		c->root = used;
out:
	free(b);
	free(a);
	return cl_map_transport(rc);
}

static struct tls_conf *identity;   /* ofs_client_identity's, for the process */

int ofs_client_identity(const char *iddir, bool insecure, char *why)
{
	const char *ins = getenv("OFS_INSECURE");
	int rc;

	why[0] = '\0';
	if (!iddir || !*iddir)
		iddir = getenv("OFS_IDENTITY");
	if (!iddir || !*iddir) {
		if (insecure || (ins && !strcmp(ins, "1"))) {
			conn_security(NULL, true);
			return 0;
		}
		snprintf(why, TLS_WHY_MAX, "no identity: set OFS_IDENTITY=IDDIR (or OFS_INSECURE=1)");
		return -OFS_ENOIDENT;
	}
	if (identity)
		return -EBUSY;
	rc = tls_conf_load(iddir, &identity, why);
	if (!rc)
		conn_security(identity, false);
	/* Servers are checked against the cluster's CRL too (conn.h) */
	if (!rc && (rc = conn_trust_dir(iddir)) != 0)
		snprintf(why, TLS_WHY_MAX, "%s/ca.pem: %s", iddir, ofs_strerror(rc));
	return rc;
}

int ofs_client_open(const char *const *addrs, size_t naddrs, struct ofs_client **out)
{
	struct ofs_client *c;
	size_t first = 0;
	int rc = -OFS_EUNREACHABLE, wrong = 0;

	if (naddrs == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (cl_is_user() && cl_caps_new(&c->caps)) {
		free(c);
		return -ENOMEM;
	}
	/* The address that connects first goes first (one of a server cut
	 * off costs a connect timeout, not a wait per put); then the rest in
	 * the order given. */
	if (naddrs > 1 && net_connect_race(addrs, naddrs, CONN_CONNECT_MS, &first) != 0)
		first = 0;
	for (size_t k = 0; k < naddrs; k++) {
		size_t i = net_race_nth(k, first);
		struct ofs_req q = { .op = OFS_OP_GET_ROOT };
		struct conn *cn = NULL;
		struct ofs_sid who;
		struct peer *p;
		uint8_t *b = NULL;
		size_t n = 0;

		rc = conn_open(addrs[i], &cn);
		if (rc == -EINVAL) {
			ofs_client_close(c);
			return rc;
		}
		if (rc)
			continue;
		/* The server table first: it names every server we may need. */
		rc = cl_fetch_table(c, cn, &who);
		if (!rc)
			rc = conn_call(cn, &q, &b, &n);
		if (!rc)
			rc = proto_decode_handle_reply(b, n, &c->root);
		else if (rc == -ENOENT)
			rc = make_root(c, cn);
		free(b);
		/* (the connection stays, as that server's: one handshake fewer) */
		p = rc ? NULL : cl_find_peer(c, who);
		if (p && !p->conn)
			p->conn = cn;
		else
			conn_close(cn);
		if (!rc) {
			*out = c;
			return 0;
		}
		if (rc == -OFS_EWRONGPEER)
			wrong = rc;
		if (!conn_is_transport_error(rc) && rc != -OFS_EUNREACHABLE)
			break;
	}
	ofs_client_close(c);
	rc = cl_map_transport(rc);
	/* (none answered, and one was not the server meant: say that) */
	return rc == -OFS_EUNREACHABLE && wrong ? wrong : rc;
}

void ofs_client_close(struct ofs_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npeers; i++)
		conn_close(c->peers[i].conn);
	free(c->peers);
	free(c->pause_dir);
	cl_caps_free(c->caps);
	cl_dcache_clear(c);
	free(c);
}

void ofs_client_set_fault(struct ofs_client *c, const char *point)
{
	snprintf(c->fault, sizeof(c->fault), "%s", point ? point : "");
}

/*
 * A test's pause (ofs_client_set_fault): at the step named, the client
 * says so by making the file DIR/paused (its pause dir), and goes on once
 * the test makes DIR/resume (at most 5 minutes later).
 */
void ofs_client_set_pause_dir(struct ofs_client *c, const char *dir)
{
	free(c->pause_dir);
	c->pause_dir = dir && *dir ? strdup(dir) : NULL;
}

void cl_pause_point(struct ofs_client *c, const char *name)
{
	const char *dir = c->pause_dir;
	char paused[4096], resume[4096];
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000L };
	int fd;

	if (!c->fault[0] || strcmp(c->fault, name) != 0 || !dir)
		return;
	snprintf(paused, sizeof(paused), "%s/paused", dir);
	snprintf(resume, sizeof(resume), "%s/resume", dir);
	fd = open(paused, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 5 * 60 * 50 && access(resume, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
}

uint64_t ofs_client_sent(const struct ofs_client *c, uint16_t op)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->npeers; i++)
		n += conn_sent(c->peers[i].conn, op);
	return n;
}
