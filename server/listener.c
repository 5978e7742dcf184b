/*
 * listener.c - connection threads, their limits, and clean shutdown (see
 * listener.h).
 *
 * Lock: listener.mu guards conns (the open connections), the counts and
 * each connection's slot fields (shaking, evicted, admitted). A
 * connection thread takes it when its handshake ends, to take a slot, and
 * to unlink itself.
 */
#include <errno.h>
#include <stdatomic.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/crl.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"
#include "lib/wire.h"
#include "server/access.h"
#include "server/listener.h"
#include "server/service.h"
#include "server/stopping.h"

#define REPLY_TIMEOUT_MS 30000
#define DRAIN_MS 5000            /* grace for idle readers at shutdown */

struct conn {
	struct net_io io;
	uint32_t src;                /* the peer's IPv4 address (host order) */
	uint64_t seq;                /* accept order: the oldest handshake goes first */
	bool shaking;                /* in its handshake (mu) */
	bool evicted;                /* its handshake was cut short for a newer one (mu) */
	bool admitted;               /* holds a slot (mu) */
	bool user;                   /* a user's: counted against per_user (mu) */
	uint8_t fpr[IDENT_FPR_LEN];  /* its certificate's, once admitted (mu) */
	uint64_t crl_gen;            /* the revocation list's, when last checked */
	struct access_cache cache;   /* the capability last verified on it */
	_Atomic uint16_t op;         /* the request being handled (0: none) */
	_Atomic int64_t op_since_ms; /* since when (log_now_ms) */
	pthread_t thread;
	struct listener *l;
	struct conn *prev, *next;    /* in listener.conns, guarded by mu */
};

struct listener {
	struct service *sv;
	struct tls_conf *tls;        /* NULL: plaintext (--insecure) */
	int wake_fd;                 /* eventfd: readable once stopping */
	pthread_mutex_t mu;
	pthread_cond_t gone;         /* signalled when a connection ends */
	struct conn *conns;          /* guarded by mu */
	struct conn *ended;          /* threads done serving, to be joined
	                                (guarded by mu): joined, not detached,
	                                so that a thread's own exit - OpenSSL
	                                frees its per-thread state there - is
	                                over before the server exits */
	int nconns;                  /* threads, guarded by mu */
	int nshaking;                /* of them in a handshake (mu) */
	int nadmitted;               /* of them holding a slot (mu) */
	uint64_t seq;                /* accepts so far (mu) */
	struct listener_limits lim;
	_Atomic uint64_t busy;       /* connections answered busy, for the log */
	_Atomic int64_t busy_logged; /* when that was last logged (Unix s) */
};

static void send_error(struct net_io *io, uint16_t op, uint64_t reqid, int status)
{
	struct ofs_frame_hdr h = {
		.version = OFS_PROTO_VERSION,
		.op = (uint16_t)(op | OFS_OP_RESPONSE),
		.reqid = reqid,
		.status = status,
	};

	(void)net_send_frame(io, &h, NULL, NULL, NULL, 1000);
}

/* The peer's address, for the log. */
static void peer_name(int fd, char buf[OFS_ADDR_MAX])
{
	struct sockaddr_in sa;
	socklen_t n = sizeof(sa);

	if (getpeername(fd, (struct sockaddr *)&sa, &n) == 0 && sa.sin_family == AF_INET)
		net_format_addr(&sa, buf);
	else
		snprintf(buf, OFS_ADDR_MAX, "?");
}

/* After refusing a peer: say no more, read what it still sends (a
 * second or 64 KiB at most), then close. Closing with its bytes unread
 * would reset the connection and could destroy the refusal before the
 * peer reads it. */
static void linger_close(int fd)
{
	uint8_t sink[4096];
	size_t total = 0;

	shutdown(fd, SHUT_WR);
	while (total < 65536) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 1000) <= 0)
			break;
		r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (r <= 0)
			break;
		total += (size_t)r;
	}
	close(fd);
}

/* A refused peer's line: once per LOG_REPEAT_MS per host and reason, with
 * the count of those not written - a peer that retries a refusal in a
 * loop does not flood the log (its port changes with every connection,
 * so the key is its host). */
static void log_refusal(const char *what, const char *who, int rc, const char *why)
{
	char key[OFS_ADDR_MAX + 64];
	const char *colon = strrchr(who, ':');
	int hostlen = colon ? (int)(colon - who) : (int)strlen(who);

	snprintf(key, sizeof(key), "listener refused %.*s %d", hostlen, who, rc);
	log_limited(LOG_INFO, key, "refused %s from %s: %s", what, who, why);
}

/*
 * TLS before any frame: a peer whose first byte is not a TLS handshake
 * record is told in plaintext that this server speaks TLS only; then the
 * handshake, which refuses a peer without a certificate of the cluster
 * CA. 0, or the refusal (the caller closes with linger_close).
 */
static int secure(struct conn *c)
{
	char who[OFS_ADDR_MAX];
	uint8_t first = 0;
	int rc;

	if (!c->l->tls)
		return 0;
	{
		struct pollfd p = { .fd = c->io.fd, .events = POLLIN };
		if (poll(&p, 1, LISTENER_HANDSHAKE_MS) <= 0 ||
		    recv(c->io.fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
			return -ECONNRESET;
	}
	peer_name(c->io.fd, who);
	if (first != 0x16) {            /* TLS record type: handshake */
		send_error(&c->io, 0, 0, -OFS_ETLSONLY);
		log_refusal("a plaintext connection", who, -OFS_ETLSONLY, "TLS only");
		return -OFS_ETLSONLY;
	}
	rc = tls_accept(c->l->tls, c->io.fd, LISTENER_HANDSHAKE_MS, &c->io.tls);
	if (rc && rc != -ECONNRESET && rc != -ETIMEDOUT)
		log_refusal("a connection", who, rc, ofs_strerror(rc));
	return rc;
}

/* Wait for the next frame's first byte, for shutdown, or until the
 * connection has been idle too long. 1: data; 0: close it. */
static int wait_next(struct conn *c)
{
	struct pollfd p[2] = {
		{ .fd = c->io.fd, .events = POLLIN },
		{ .fd = c->l->wake_fd, .events = POLLIN },
	};

	if (c->io.tls && tls_pending(c->io.tls))
		return 1;       /* a frame already read and decrypted */
	for (;;) {
		int r = poll(p, 2, c->l->lim.idle_s * 1000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (r == 0) {
			log_debug("closed a connection idle for %d s", c->l->lim.idle_s);
			return 0;
		}
		if (p[0].revents)
			return 1;
		if (p[1].revents)
			return 0;
	}
}

/* Count one connection answered busy; log how many, at most every 10 s
 * (a flood must not flood the log too). */
static void note_busy(struct listener *l, const char *why)
{
	uint64_t n = atomic_fetch_add(&l->busy, 1) + 1;
	int64_t now = (int64_t)time(NULL), last = atomic_load(&l->busy_logged);

	if (now - last >= 10 && atomic_compare_exchange_strong(&l->busy_logged, &last, now))
		log_warn("answered a connection busy: %s (%llu so far)", why,
			 (unsigned long long)n);
}

/* Its handshake is over: leave the handshakes, and take a slot if one is
 * free (mu held). NULL, or why not. */
static const char *admit(struct conn *c)
{
	struct listener *l = c->l;
	const struct ident *who = c->io.tls ? tls_peer(c->io.tls) : NULL;
	int mine = 0;

	if (c->shaking) {
		c->shaking = false;
		l->nshaking--;
	}
	if (c->evicted)
		return "its handshake was cut short";
	if (l->nadmitted >= l->lim.max_conns)
		return "every connection slot taken (--max-conns)";
	c->user = who && who->role == IDENT_USER;
	if (c->user) {
		memcpy(c->fpr, who->fpr, sizeof(c->fpr));
		for (struct conn *o = l->conns; o; o = o->next)
			mine += o->admitted && o->user && !memcmp(o->fpr, c->fpr, sizeof(c->fpr));
		if (mine >= l->lim.per_user)
			return "this user holds its share of connections (--max-conns-per-user)";
	}
	c->admitted = true;
	l->nadmitted++;
	return NULL;
}

/* A peer whose certificate was revoked since its handshake is cut off:
 * the list is looked at again only when it changed. */
static bool revoked_since(struct conn *c)
{
	struct crl *crl = c->l->sv->crl;
	uint64_t g;

	if (!c->io.tls || !crl || (g = crl_generation(crl)) == c->crl_gen)
		return false;
	c->crl_gen = g;
	if (!tls_peer_revoked(c->io.tls, crl))
		return false;
	{
		char by[128];
		ident_describe(tls_peer(c->io.tls), by, sizeof(by));
		log_warn("closed a connection of %s: its certificate was revoked", by);
	}
	send_error(&c->io, 0, 0, -OFS_ECERTREVOKED);
	return true;
}

static void serve(struct conn *c)
{
	struct wbuf reply, grant;

	wbuf_init(&reply);
	wbuf_init(&grant);
	c->crl_gen = UINT64_MAX;       /* (looked at before the first request) */
	while (wait_next(c) && !revoked_since(c)) {
		struct ofs_frame_hdr h, rh;
		uint8_t *payload = NULL;
		const uint8_t *body;
		int rc = net_recv_frame(&c->io, &h, &payload, LISTENER_STALL_MS, LISTENER_STALL_MS);

		if (rc) {
			if (rc != -ECONNRESET && rc != -ETIMEDOUT && !tls_is_refusal(rc))
				send_error(&c->io, 0, 0, rc);
			if (rc != -ECONNRESET)
				log_debug("connection dropped: %s", ofs_strerror(rc));
			free(payload);
			break;
		}
		if (h.op & OFS_OP_RESPONSE) {
			send_error(&c->io, h.op, h.reqid, -OFS_EPROTO);
			free(payload);
			break;
		}
		body = payload ? payload + h.cred_len + h.cap_len : NULL;
		reply.len = 0;
		reply.err = 0;
		grant.len = 0;
		grant.err = 0;
		{
			struct service_call call = {
				.who = c->io.tls ? tls_peer(c->io.tls) : NULL,
				.cap = payload ? payload + h.cred_len : NULL,
				.cap_len = h.cap_len,
				.cache = &c->cache,
				.grant = &grant,
			};
			if (payload)
				(void)frame_deadline_decode(payload, h.cred_len, &call.deadline_ms);
			atomic_store(&c->op_since_ms, log_now_ms());
			atomic_store(&c->op, h.op);
			rc = service_handle(c->l->sv, &call, h.op, body, h.body_len, &reply);
			atomic_store(&c->op, 0);
		}
		free(payload);
		memset(&rh, 0, sizeof(rh));
		rh.version = OFS_PROTO_VERSION;
		rh.op = (uint16_t)(h.op | OFS_OP_RESPONSE);
		rh.reqid = h.reqid;
		rh.status = rc;
		rh.body_len = rc ? 0 : (uint32_t)reply.len;
		rh.cap_len = rc || grant.err ? 0 : (uint16_t)grant.len;
		if (net_send_frame(&c->io, &rh, NULL, rh.cap_len ? grant.data : NULL, reply.data,
				   REPLY_TIMEOUT_MS))
			break;
	}
	wbuf_free(&grant);
	wbuf_free(&reply);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct listener *l = c->l;

	if (secure(c) == 0) {
		const char *busy;
		pthread_mutex_lock(&l->mu);
		busy = admit(c);
		pthread_mutex_unlock(&l->mu);
		if (busy) {
			send_error(&c->io, 0, 0, -OFS_EBUSY);
			note_busy(l, busy);
		} else {
			serve(c);
		}
		tls_free(c->io.tls);
		close(c->io.fd);
	} else {
		linger_close(c->io.fd);
	}
	pthread_mutex_lock(&l->mu);
	if (c->shaking)
		l->nshaking--;
	if (c->admitted)
		l->nadmitted--;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	l->nconns--;
	c->next = l->ended;
	l->ended = c;
	pthread_cond_signal(&l->gone);
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* Join and free the threads that have ended. */
static void reap(struct listener *l)
{
	struct conn *c;

	pthread_mutex_lock(&l->mu);
	c = l->ended;
	l->ended = NULL;
	pthread_mutex_unlock(&l->mu);
	while (c) {
		struct conn *next = c->next;
		pthread_join(c->thread, NULL);
		free(c);
		c = next;
	}
}

/* The peer's IPv4 address, host order (0: not IPv4). */
static uint32_t source_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t n = sizeof(sa);

	if (getpeername(fd, (struct sockaddr *)&sa, &n) == 0 && sa.sin_family == AF_INET)
		return ntohl(sa.sin_addr.s_addr);
	return 0;
}

/* Cut src's oldest handshake short (mu held). */
static void evict_oldest(struct listener *l, uint32_t src)
{
	struct conn *old = NULL;

	for (struct conn *c = l->conns; c; c = c->next)
		if (c->shaking && c->src == src && (!old || c->seq < old->seq))
			old = c;
	if (!old)
		return;
	old->shaking = false;
	old->evicted = true;
	l->nshaking--;
	shutdown(old->io.fd, SHUT_RDWR);     /* (its thread's reads end now) */
}

/* Room for one more handshake (mu held): when all are taken, the oldest
 * of the address with the most in flight goes - a flood's, not a client's
 * (a burst of one host's own clients is taken whole until the table is
 * full). */
static void make_room(struct listener *l)
{
	uint32_t heavy = 0;
	int most = 0;

	if (l->nshaking < LISTENER_HANDSHAKES)
		return;
	for (struct conn *c = l->conns; c; c = c->next) {
		int n = 0;
		if (!c->shaking)
			continue;
		for (struct conn *o = l->conns; o; o = o->next)
			n += o->shaking && o->src == c->src;
		if (n > most) {
			most = n;
			heavy = c->src;
		}
	}
	evict_oldest(l, heavy);
}

/* A stop that waits on connections says which, and what each does (mu
 * held): a hung stop names where it hangs (stopping.h). */
static void report_busy(struct listener *l, int waited_s)
{
	int64_t now = log_now_ms();
	int shown = 0;

	log_warn("shutdown: still waiting for %d connection(s) after %d s", l->nconns, waited_s);
	for (struct conn *c = l->conns; c && shown < 8; c = c->next, shown++) {
		char who[OFS_ADDR_MAX];
		uint16_t op = atomic_load(&c->op);
		peer_name(c->io.fd, who);
		if (op)
			log_warn("shutdown:   %s: handling %s for %lld ms", who, ofs_op_name(op),
				 (long long)(now - atomic_load(&c->op_since_ms)));
		else
			log_warn("shutdown:   %s: %s", who,
				 c->shaking ? "in its handshake" : "between requests");
	}
}

static int start_conn(struct listener *l, int fd)
{
	uint32_t src = source_of(fd);
	struct conn *c;
	int rc;

	pthread_mutex_lock(&l->mu);
	if (l->nconns >= l->lim.max_conns + 2 * LISTENER_HANDSHAKES) {
		/* (threads still ending: no room even for a handshake) */
		pthread_mutex_unlock(&l->mu);
		struct net_io io = { .fd = fd };
		send_error(&io, 0, 0, -OFS_EBUSY);
		close(fd);
		note_busy(l, "too many connections still closing");
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&l->mu);
		close(fd);
		return -ENOMEM;
	}
	if (l->tls) {
		make_room(l);
		c->shaking = true;
		l->nshaking++;
	}
	c->src = src;
	c->seq = ++l->seq;
	c->io.fd = fd;
	c->l = l;
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	l->nconns++;
	rc = pthread_create(&c->thread, NULL, conn_main, c);
	if (rc) {
		l->conns = c->next;
		if (c->next)
			c->next->prev = NULL;
		l->nconns--;
		if (c->shaking)
			l->nshaking--;
		pthread_mutex_unlock(&l->mu);
		close(fd);
		free(c);
		log_warn("cannot start a connection thread: %s", strerror(rc));
		return 0;
	}
	pthread_mutex_unlock(&l->mu);
	return 0;
}

int listener_run(struct service *sv, struct tls_conf *tls, int listen_fd, int stop_fd,
		 const struct listener_limits *lim)
{
	struct listener l;
	struct timespec deadline;
	uint64_t one = 1;
	int rc = 0;

	memset(&l, 0, sizeof(l));
	l.sv = sv;
	l.tls = tls;
	l.lim = *lim;
	l.wake_fd = eventfd(0, EFD_CLOEXEC);
	if (l.wake_fd < 0)
		return -errno;
	pthread_mutex_init(&l.mu, NULL);
	pthread_cond_init(&l.gone, NULL);

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = listen_fd, .events = POLLIN },
			{ .fd = stop_fd, .events = POLLIN },
		};
		int r = poll(p, 2, -1);

		reap(&l);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (p[1].revents) {
			log_info("shutdown: asked to stop; closing the connections");
			break;
		}
		if (p[0].revents) {
			int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0) {
				if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
					continue;
				if (errno == EMFILE || errno == ENFILE || errno == ENOMEM ||
				    errno == ENOBUFS) {
					log_warn("accept: %s", strerror(errno));
					poll(NULL, 0, 100);
					continue;
				}
				rc = -errno;
				break;
			}
			net_set_nodelay(fd);
			start_conn(&l, fd);
		}
	}

	/* Stop: idle connections see wake_fd; busy ones finish their request
	 * first. After DRAIN_MS, connections stuck in a half-sent frame are
	 * shut down for reading, which ends their read at once. */
	if (write(l.wake_fd, &one, sizeof(one)) < 0)
		log_warn("shutdown: cannot wake connections: %s", strerror(errno));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += DRAIN_MS / 1000;
	pthread_mutex_lock(&l.mu);
	for (int waits = 0; l.nconns > 0;) {
		if (pthread_cond_timedwait(&l.gone, &l.mu, &deadline) != ETIMEDOUT)
			continue;
		/* (DRAIN_MS: readers shut down; a second later, what is still
		 * busy is named, and every STOPPING_REPORT_S after that) */
		if (!waits++) {
			for (struct conn *c = l.conns; c; c = c->next)
				shutdown(c->io.fd, SHUT_RD);
			deadline.tv_sec += 1;
			continue;
		}
		report_busy(&l, DRAIN_MS / 1000 + 1 + (waits - 2) * STOPPING_REPORT_S);
		deadline.tv_sec += STOPPING_REPORT_S;
	}
	pthread_mutex_unlock(&l.mu);
	reap(&l);
	close(l.wake_fd);
	pthread_cond_destroy(&l.gone);
	pthread_mutex_destroy(&l.mu);
	return rc;
}
