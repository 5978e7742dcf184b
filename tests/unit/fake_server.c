/* fake_server.c - a server for unit tests (see fake_server.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/conn.h"
#include "lib/frame.h"
#include "lib/ofs_error.h"
#include "server/replica.h"
#include "server/sidtab.h"
#include "tests/unit/fake_server.h"

struct conn_ctx {
	struct fake_server *f;
	int fd;
};

static int answer_one(struct fake_server *f, const struct ofs_frame_hdr *h, const uint8_t *body,
		      struct wbuf *reply)
{
	struct ofs_req *q = malloc(sizeof(*q));
	uint16_t op = (uint16_t)(h->op & ~OFS_OP_FORWARDED);
	int rc;

	if (!q)
		return -ENOMEM;
	rc = proto_decode_req(op, body, h->body_len, q);
	if (!rc) {
		pthread_mutex_lock(&f->mu);
		rc = f->answer(f->arg, op, (h->op & OFS_OP_FORWARDED) != 0, q, reply);
		pthread_mutex_unlock(&f->mu);
	}
	free(q);
	return rc;
}

static void *serve_conn(void *arg)
{
	struct conn_ctx *cc = arg;
	struct fake_server *f = cc->f;

	while (!f->stop) {
		struct ofs_frame_hdr h, r;
		uint8_t *payload = NULL;
		struct wbuf reply;
		struct net_io io = { .fd = cc->fd };
		int rc = net_recv_frame(&io, &h, &payload, 200, 2000);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc)
			break;
		wbuf_init(&reply);
		rc = answer_one(f, &h, payload ? payload + h.cred_len + h.cap_len : NULL, &reply);
		free(payload);
		memset(&r, 0, sizeof(r));
		r.version = OFS_PROTO_VERSION;
		r.op = (uint16_t)(h.op | OFS_OP_RESPONSE);
		r.reqid = h.reqid;
		r.status = rc;
		r.body_len = rc ? 0 : (uint32_t)reply.len;
		rc = net_send_frame(&io, &r, NULL, NULL, rc ? NULL : reply.data, 2000);
		wbuf_free(&reply);
		if (rc)
			break;
	}
	close(cc->fd);
	free(cc);
	pthread_mutex_lock(&f->mu);
	f->conns--;
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct fake_server *f = arg;

	while (!f->stop) {
		struct pollfd p = { .fd = f->lfd, .events = POLLIN };
		struct conn_ctx *cc;
		pthread_t th;
		int fd;

		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		cc = malloc(sizeof(*cc));
		if (!cc) {
			close(fd);
			continue;
		}
		cc->f = f;
		cc->fd = fd;
		pthread_mutex_lock(&f->mu);
		f->conns++;
		pthread_mutex_unlock(&f->mu);
		if (pthread_create(&th, NULL, serve_conn, cc) != 0) {
			pthread_mutex_lock(&f->mu);
			f->conns--;
			pthread_mutex_unlock(&f->mu);
			close(fd);
			free(cc);
			continue;
		}
		pthread_detach(th);
	}
	return NULL;
}

struct fake_server *fake_server_start(fake_answer_fn answer, void *arg)
{
	struct fake_server *f = calloc(1, sizeof(*f));
	struct sockaddr_in a, bound;

	if (!f)
		return NULL;
	/* Fake servers speak plaintext on loopback; so must their clients. */
	conn_security(NULL, true);
	f->answer = answer;
	f->arg = arg;
	pthread_mutex_init(&f->mu, NULL);
	if (net_parse_addr("127.0.0.1:0", &a) || net_listen(&a, &f->lfd, &bound) ||
	    oid_generate((struct ofs_oid *)&f->sid)) {
		free(f);
		return NULL;
	}
	net_format_addr(&bound, f->addr);
	if (pthread_create(&f->acceptor, NULL, accept_loop, f) != 0) {
		close(f->lfd);
		free(f);
		return NULL;
	}
	return f;
}

void fake_server_stop(struct fake_server *f)
{
	if (!f)
		return;
	f->stop = true;
	pthread_join(f->acceptor, NULL);
	close(f->lfd);
	/* (each connection thread looks at stop every 200 ms) */
	for (int waited = 0; waited < 5000; waited += 10) {
		pthread_mutex_lock(&f->mu);
		int n = f->conns;
		pthread_mutex_unlock(&f->mu);
		if (n == 0)
			break;
		usleep(10 * 1000);
	}
	pthread_mutex_destroy(&f->mu);
	free(f);
}

void fake_server_entry(const struct fake_server *f, const char *attr, struct ofs_server *e)
{
	memset(e, 0, sizeof(*e));
	e->sid = f->sid;
	snprintf(e->address, sizeof(e->address), "%s", f->addr);
	e->state = OFS_SERVER_IN;
	e->weight_milli = 1000;
	e->version = 1;
	if (attr) {
		snprintf(e->attrs[0], sizeof(e->attrs[0]), "%s", attr);
		e->nattrs = 1;
	}
}

int fake_table(struct store *s, const char *self_addr, struct fake_server *const *fakes,
	       size_t n, struct sidtab **t, struct replicator **r)
{
	struct ofs_server e[8];
	char rack[16];
	int rc;

	if (n > 8)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		snprintf(rack, sizeof(rack), "rack=r%zu", i + 2);
		fake_server_entry(fakes[i], rack, &e[i]);
	}
	rc = sidtab_open(s, self_addr, t);
	if (rc)
		return rc;
	rc = sidtab_merge(*t, e, n);
	if (rc != (int)n)
		return rc < 0 ? rc : -EIO;
	return replica_open(*t, r);
}
