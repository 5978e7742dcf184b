/*
 * gossip.c - periodic push-pull of the server table (see gossip.h).
 *
 * Lock: gossip.mu guards stop; the thread waits on gossip.cv between
 * rounds so that gossip_stop ends it at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "lib/conn.h"
#include <openssl/crypto.h>

#include "lib/backoff.h"
#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/log.h"
#include "lib/ofs_error.h"
#include "server/gossip.h"

struct gossip {
	struct sidtab *t;
	struct gossip_trust tr;    /* the revocation list and capability keys */
	char **seeds;              /* "HOST:PORT", owned */
	size_t nseeds;
	bool seeded;               /* a seed has answered once */
	gossip_contact_fn contact;
	void *contact_arg;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;                 /* guarded by mu */
	/* Connections kept from round to round (the gossip thread's own):
	 * with TLS a connection costs a handshake at both ends, and a round
	 * a second would otherwise make three of them. */
	struct kept {
		char addr[OFS_SERVER_ADDR_LEN];
		bool has_sid;            /* the server meant there: sid */
		struct ofs_sid sid;
		struct conn *c;
		/* A peer that refused this server (its certificate revoked
		 * or expired, say) is not asked again every round: each
		 * refusal in a row doubles the rounds it is left out. */
		struct backoff bo;
		int64_t retry_at_ms;     /* not asked before (0: any time) */
	} kept[GOSSIP_KEPT];
	size_t nkept, next_evict;
};

static uint32_t rnd(void)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)time(NULL) * 2654435761u;
	return r;
}

/* After the table, on the same connection: the revocation list, pulled
 * (crl.h: the number held here; a peer holding a newer CRL answers with
 * it, which is taken when the CA signed it - whichever server relays
 * it). A server that holds the newer one gives it in its peers' rounds. */
static void exchange_crl(struct conn *c, struct crl *crl, const char *addr)
{
	struct ofs_req q = { .op = OFS_OP_REVOKED };
	const uint8_t *der = NULL;
	uint64_t theirs = 0, number = 0;
	struct wbuf w;
	uint8_t *b = NULL;
	size_t bn = 0, derlen = 0;
	int rc;

	if (!crl)
		return;
	wbuf_init(&w);
	crl_pull_encode(&w, crl_number(crl));
	q.data = w.data;
	q.data_len = w.len;
	rc = wbuf_error(&w) ? wbuf_error(&w) : conn_call(c, &q, &b, &bn);
	if (!rc)
		rc = crl_answer_decode(b, bn, &theirs, &der, &derlen);
	if (!rc && der)
		rc = crl_offer(crl, der, derlen, &number);
	if (rc == 1)
		log_warn("gossip: revocation list CRL %llu learned from %s, %zu certificate(s) revoked",
			 (unsigned long long)number, addr, crl_count(crl));
	else if (rc == -OFS_ENOTCA)
		log_warn("gossip: revocation list from %s refused: %s", addr, ofs_strerror(rc));
	else if (rc < 0)
		log_debug("gossip: revocation list with %s: %s", addr, ofs_strerror(rc));
	free(b);
	wbuf_free(&w);
}

/* Then the capability keys: a pull (CAPKEYS naming the current key of
 * the signed set held here, cap.h; a peer holding a newer one answers
 * with it, taken when the CA signed it), so a server that was down or
 * cut off at a rotation holds the keys the others sign with from its
 * start or its next round on - never an older set. */
static void exchange_keys(struct conn *c, struct cap_ring *keys, const char *addr)
{
	struct ofs_req q = { .op = OFS_OP_CAPKEYS };
	struct cap_key k[CAP_MAX_KEYS];
	struct wbuf w;
	uint8_t *b = NULL;
	size_t bn = 0;
	int rc;

	if (!keys)
		return;
	wbuf_init(&w);
	cap_keys_pull_encode(&w, cap_ring_signed_id(keys));
	q.data = w.data;
	q.data_len = w.len;
	rc = wbuf_error(&w) ? wbuf_error(&w) : conn_call(c, &q, &b, &bn);
	wbuf_free(&w);
	if (!rc && bn) {
		rc = cap_ring_offer(keys, b, bn);
		if (rc == 1 && cap_ring_get(keys, k))
			log_warn("gossip: capability keys from %s: current key %u", addr,
				 (unsigned)k[0].id);
		else if (rc == -OFS_ENOTCA)
			log_warn("gossip: capability keys from %s refused: %s", addr,
				 ofs_strerror(rc));
	}
	if (rc < 0 && rc != -ESTALE && rc != -OFS_ENOTCA)
		log_debug("gossip: capability keys with %s: %s", addr, ofs_strerror(rc));
	OPENSSL_cleanse(k, sizeof(k));
	if (b)
		OPENSSL_cleanse(b, bn);
	free(b);
}

/* One exchange on c (open, to addr), waiting at most timeout_ms for the
 * answer; contact (may be NULL) hears of the peer. 0 when it answered. */
static int exchange_on(struct sidtab *t, const struct gossip_trust *tr, struct conn *c,
		       const char *addr, int timeout_ms, gossip_contact_fn contact,
		       void *contact_arg)
{
	struct ofs_req q = { .op = OFS_OP_SERVERS };
	struct ofs_server *mine = NULL, *theirs = NULL;
	struct ofs_sid who;
	uint8_t *b = NULL;
	size_t nmine = 0, ntheirs = 0, bn = 0;
	int rc;

	rc = sidtab_snapshot(t, &mine, &nmine);
	if (rc)
		return rc;
	conn_set_timeout(c, timeout_ms);
	q.servers = mine;
	q.nservers = nmine;
	rc = conn_call(c, &q, &b, &bn);
	if (!rc)
		rc = proto_decode_servers(b, bn, true, &who, &theirs, &ntheirs);
	/* The answer speaks for the server that gave it (sidtab_merge_from):
	 * the SID it names as its own is its certificate's. */
	if (!rc && conn_peer(c) && !sid_eq(conn_peer(c)->sid, who))
		rc = -OFS_EWRONGPEER;
	if (!rc) {
		rc = sidtab_merge_from(t, theirs, ntheirs, &who);
		if (rc > 0)
			log_info("gossip: learned %d server table change(s) from %s", rc, addr);
		rc = rc < 0 ? rc : 0;
		sidtab_seen(t, who);
		exchange_crl(c, tr->crl, addr);
		exchange_keys(c, tr->keys, addr);
		if (contact)
			contact(who, contact_arg);
	}
	free(b);
	free(theirs);
	free(mine);
	return rc;
}

/* One exchange with addr (the server sid; NULL: whichever is there, a
 * seed) on a connection of its own. */
static int exchange_with(struct sidtab *t, const struct gossip_trust *tr, const char *addr,
			 const struct ofs_sid *sid, int timeout_ms, gossip_contact_fn contact,
			 void *contact_arg)
{
	struct conn *c = NULL;
	int rc = conn_open_sid(addr, sid, &c);

	if (!rc)
		rc = exchange_on(t, tr, c, addr, timeout_ms, contact, contact_arg);
	conn_close(c);
	return rc;
}

/* The kept connection to addr (to server sid; NULL: whichever is there),
 * opened (and kept, evicting the oldest when full) if there is none or it
 * has gone: 0 and *out, -EINVAL, or why it could not be opened (*out is
 * set then too, k->c NULL). */
static int kept_for(struct gossip *g, const char *addr, const struct ofs_sid *sid,
		    struct kept **out)
{
	struct kept *k = NULL;
	int rc = 0;

	for (size_t i = 0; i < g->nkept && !k; i++)
		if (strcmp(g->kept[i].addr, addr) == 0)
			k = &g->kept[i];
	if (!k) {
		if (strlen(addr) >= sizeof(k->addr))
			return -EINVAL;
		if (g->nkept < GOSSIP_KEPT) {
			k = &g->kept[g->nkept++];
		} else {
			k = &g->kept[g->next_evict];
			g->next_evict = (g->next_evict + 1) % GOSSIP_KEPT;
			conn_close(k->c);
			k->c = NULL;
		}
		snprintf(k->addr, sizeof(k->addr), "%s", addr);
		backoff_init(&k->bo, GOSSIP_PERIOD_MS, GOSSIP_REFUSED_CAP_MS);
		k->retry_at_ms = 0;
	}
	*out = k;
	if (k->retry_at_ms && log_now_ms() < k->retry_at_ms)
		return 0;                /* (refused lately: not opened now) */
	if (k->c && (conn_idle_dead(k->c) || k->has_sid != (sid != NULL) ||
		     (sid && !sid_eq(k->sid, *sid)))) {
		conn_close(k->c);    /* (gone, or another server is meant there now) */
		k->c = NULL;
	}
	if (!k->c) {
		k->has_sid = sid != NULL;
		if (sid)
			k->sid = *sid;
		if ((rc = conn_open_sid(addr, sid, &k->c)) != 0)
			k->c = NULL;
	}
	return rc;
}

/* One exchange with addr (server sid; NULL: a seed) on its kept
 * connection. -EAGAIN: a peer that refused this server lately, left out
 * of this round. */
static int exchange(struct gossip *g, const char *addr, const struct ofs_sid *sid)
{
	struct kept *k = NULL;
	int rc = kept_for(g, addr, sid, &k);

	if (rc == -EINVAL)
		return rc;
	if (k->retry_at_ms && log_now_ms() < k->retry_at_ms)
		return -EAGAIN;
	if (!rc)
		rc = exchange_on(g->t, &g->tr, k->c, addr, GOSSIP_TIMEOUT_MS, g->contact,
				 g->contact_arg);
	if (rc && k->c) {
		conn_close(k->c);       /* (a fresh one next round) */
		k->c = NULL;
	}
	if (conn_is_refusal(rc)) {
		int wait = backoff_next(&k->bo);
		k->retry_at_ms = log_now_ms() + wait;
		log_limited(LOG_WARN, NULL, "gossip: %s refused this server: %s (asked again "
			    "less and less often)", addr, ofs_strerror(rc));
	} else if (!rc) {
		backoff_reset(&k->bo);
		k->retry_at_ms = 0;
	}
	return rc;
}

/* Where peers said a known server moved: ask there, on a connection of
 * its own that takes only that server's certificate (conn_open_sid); its
 * answer, its own entry, moves it here (sidtab_merge_from). GOSSIP_LEADS
 * a round, so that leads a rogue peer plants cost a round little. */
#define GOSSIP_LEADS 2
static void ask_leads(struct gossip *g)
{
	struct ofs_sid sids[GOSSIP_LEADS];
	char addrs[GOSSIP_LEADS][OFS_SERVER_ADDR_LEN];
	size_t n = sidtab_leads(g->t, sids, addrs, GOSSIP_LEADS);

	for (size_t i = 0; i < n; i++) {
		struct conn *c = NULL;
		int rc = conn_open_sid(addrs[i], &sids[i], &c);
		if (!rc)
			rc = exchange_on(g->t, &g->tr, c, addrs[i], GOSSIP_TIMEOUT_MS, g->contact,
					 g->contact_arg);
		conn_close(c);
		if (rc)
			log_debug("gossip: a peer said a server moved to %s; not there: %s",
				  addrs[i], ofs_strerror(rc));
	}
}

/* Failures that say the peer does not answer (a hung or stopped server,
 * or one whose store is down, which answers that it is busy). */
static bool unanswered(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -EHOSTUNREACH ||
	       rc == -ENETUNREACH || rc == -OFS_EUNREACHABLE || rc == -OFS_EBUSY;
}

static void round_once(struct gossip *g)
{
	struct ofs_server *e = NULL;
	size_t n = 0;
	struct ofs_sid self = sidtab_self(g->t);

	if (g->tr.stalled && g->tr.stalled(g->tr.stalled_arg)) {
		log_limited(LOG_WARN, NULL, "gossip: this server's store has not committed for "
			    "seconds (a stalled disk?): its peers are not told it is here");
		return;
	}

	if (!g->seeded) {
		for (size_t i = 0; i < g->nseeds; i++) {
			int rc = exchange(g, g->seeds[i], NULL);
			if (rc == 0)
				g->seeded = true;
			else
				log_debug("gossip: seed %s: %s", g->seeds[i], ofs_strerror(rc));
		}
	}
	if (sidtab_snapshot(g->t, &e, &n))
		return;
	/* A partial shuffle picks GOSSIP_FANOUT peers other than self. */
	for (size_t k = 0, left = n; k < GOSSIP_FANOUT && left > 0; k++, left--) {
		size_t j = rnd() % left;
		struct ofs_server pick = e[j];
		e[j] = e[left - 1];
		e[left - 1] = pick;
		if (sid_eq(pick.sid, self)) {
			k--;
			continue;
		}
		int rc = exchange(g, pick.address, &pick.sid);
		if (unanswered(rc) && sidtab_unanswered(g->t, pick.sid)) {
			char hex[OFS_OID_HEX];
			sid_to_hex(pick.sid, hex);
			log_info("gossip: peer %s at %s does not answer (%s): changes skip it "
				 "until it is heard from", hex, pick.address,
				 rc == -OFS_EBUSY ? "busy: its store stalled, or full" : ofs_strerror(rc));
		}
		if (rc && rc != -EAGAIN && !conn_is_refusal(rc))
			log_debug("gossip: %s did not answer", pick.address);
	}
	free(e);
	ask_leads(g);
}

static void *gossip_main(void *arg)
{
	struct gossip *g = arg;

	for (;;) {
		struct timespec at;

		round_once(g);
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += (long)GOSSIP_PERIOD_MS * 1000000L;
		at.tv_sec += at.tv_nsec / 1000000000L;
		at.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&g->mu);
		while (!g->stop && pthread_cond_timedwait(&g->cv, &g->mu, &at) != ETIMEDOUT)
			;
		if (g->stop) {
			pthread_mutex_unlock(&g->mu);
			break;
		}
		pthread_mutex_unlock(&g->mu);
	}
	return NULL;
}

int gossip_start(struct sidtab *t, const struct gossip_trust *tr, const char *const *seeds, size_t nseeds,
		 gossip_contact_fn contact, void *contact_arg, struct gossip **out)
{
	struct gossip *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->t = t;
	if (tr)
		g->tr = *tr;
	g->contact = contact;
	g->contact_arg = contact_arg;
	g->seeds = calloc(nseeds ? nseeds : 1, sizeof(*g->seeds));
	if (!g->seeds) {
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nseeds; i++) {
		g->seeds[i] = strdup(seeds[i]);
		if (!g->seeds[i]) {
			g->nseeds = i;
			gossip_stop(g);
			return -ENOMEM;
		}
	}
	g->nseeds = nseeds;
	g->seeded = nseeds == 0;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if (pthread_create(&g->thread, NULL, gossip_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		for (size_t i = 0; i < g->nseeds; i++)
			free(g->seeds[i]);
		free(g->seeds);
		free(g);
		return -EAGAIN;
	}
	*out = g;
	return 0;
}

void gossip_stop(struct gossip *g)
{
	if (!g)
		return;
	if (g->thread) {
		pthread_mutex_lock(&g->mu);
		g->stop = true;
		pthread_cond_signal(&g->cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->thread, NULL);
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
	}
	for (size_t i = 0; i < g->nseeds; i++)
		free(g->seeds[i]);
	for (size_t i = 0; i < g->nkept; i++)
		conn_close(g->kept[i].c);
	free(g->seeds);
	free(g);
}

/* ---- one pull, before serving ------------------------------------------ */

struct pull {
	struct sidtab *t;
	struct gossip_trust tr;
	struct pull_to {
		char addr[OFS_SERVER_ADDR_LEN];
		bool has_sid;          /* a known server's (else a seed) */
		struct ofs_sid sid;
	} *addrs;
	size_t n;
	struct timespec deadline;  /* CLOCK_MONOTONIC: no exchange starts after */
	pthread_mutex_t mu;
	size_t next;               /* guarded by mu: the next address to ask */
	size_t answered;           /* guarded by mu */
};

/* Milliseconds left until p's deadline (<= 0: none). */
static long pull_left_ms(const struct pull *p)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (p->deadline.tv_sec - now.tv_sec) * 1000L +
	       (p->deadline.tv_nsec - now.tv_nsec) / 1000000L;
}

/* Ask the addresses not taken yet, one at a time, until none is left or
 * the time is up. */
static void *pull_worker(void *arg)
{
	struct pull *p = arg;

	for (;;) {
		size_t i;
		long left = pull_left_ms(p);
		int rc;

		if (left <= 0)
			break;
		pthread_mutex_lock(&p->mu);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i == p->n)
			break;
		rc = exchange_with(p->t, &p->tr, p->addrs[i].addr,
				   p->addrs[i].has_sid ? &p->addrs[i].sid : NULL, (int)left, NULL, NULL);
		if (rc) {
			log_debug("gossip: pull from %s: %s", p->addrs[i].addr, ofs_strerror(rc));
			continue;
		}
		pthread_mutex_lock(&p->mu);
		p->answered++;
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* Add addr to p's list unless it is there already (a seed is often a
 * known server too). */
static void pull_add(struct pull *p, const char *addr, const struct ofs_sid *sid)
{
	if (strlen(addr) >= sizeof(p->addrs[0].addr))
		return;      /* (no server can be there: conn_open refuses it) */
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->addrs[i].addr, addr) == 0)
			return;
	snprintf(p->addrs[p->n].addr, sizeof(p->addrs[0].addr), "%s", addr);
	p->addrs[p->n].has_sid = sid != NULL;
	if (sid)
		p->addrs[p->n].sid = *sid;
	p->n++;
}

int gossip_pull_once(struct sidtab *t, const struct gossip_trust *tr, const char *const *seeds, size_t nseeds,
		     int timeout_ms)
{
	struct ofs_sid self = sidtab_self(t);
	struct ofs_server *e = NULL;
	pthread_t th[GOSSIP_PULL_THREADS];
	struct pull p;
	size_t n = 0, nth = 0;
	int rc = sidtab_snapshot(t, &e, &n);

	if (rc)
		return rc;
	memset(&p, 0, sizeof(p));
	p.t = t;
	if (tr)
		p.tr = *tr;
	p.addrs = calloc(n + nseeds + 1, sizeof(*p.addrs));
	if (!p.addrs) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (!sid_eq(e[i].sid, self) && e[i].address[0])
			pull_add(&p, e[i].address, &e[i].sid);
	for (size_t i = 0; i < nseeds; i++)
		pull_add(&p, seeds[i], NULL);
	free(e);
	clock_gettime(CLOCK_MONOTONIC, &p.deadline);
	p.deadline.tv_sec += timeout_ms / 1000;
	p.deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (p.deadline.tv_nsec >= 1000000000L) {
		p.deadline.tv_sec++;
		p.deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_init(&p.mu, NULL);
	/* Peers are asked in parallel, so one that hangs costs the others
	 * nothing; this thread is one of the askers (and the only one when
	 * no thread could be made). */
	while (nth + 1 < GOSSIP_PULL_THREADS && nth + 1 < p.n &&
	       pthread_create(&th[nth], NULL, pull_worker, &p) == 0)
		nth++;
	pull_worker(&p);
	for (size_t i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.mu);
	free(p.addrs);
	if (p.n)
		log_info("server table: %zu of %zu peer(s) answered before serving", p.answered, p.n);
	return (int)p.answered;
}
