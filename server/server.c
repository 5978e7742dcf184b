/*
 * server.c - one running server, put together (see server.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/net.h"
#include "lib/optable.h"
#include "server/behind.h"
#include "server/gossip.h"
#include "server/listener.h"
#include "server/mailbox.h"
#include "server/recover.h"
#include "server/suspect.h"
#include "server/replica.h"
#include "server/server.h"
#include "server/service.h"
#include "server/sidtab.h"
#include "server/stopping.h"
#include "server/taskhost.h"
#include "store/kv.h"
#include "store/store.h"

#define SERVER_PARTS_MAX 8

struct opened_part {
	struct server_part p;               /* (a copy: the caller's rows may go) */
	void *state;
};

struct server {
	struct server_opts o;
	struct store *s;
	struct sidtab *tab;
	struct gossip *g;
	struct replicator *rep;
	struct behind *bh;
	struct taskhost *tasks;
	struct mailbox *mb;                 /* the namespace check's join records */
	struct recover *rv;
	struct suspects *sus;               /* copies readers found bad */
	struct service sv;
	bool sv_ready;
	struct tls_conf *tls;               /* NULL: --insecure */
	struct crl *crl;                    /* the revocation list (NULL: --insecure) */
	struct cap_ring *capkeys;           /* the capability keys (NULL: --insecure) */
	struct opened_part parts[SERVER_PARTS_MAX];
	size_t nparts;
	char where[OFS_ADDR_MAX];
	int lfd;
};

struct ofs_sid server_sid(const struct server *srv) { return store_sid(srv->s); }
const char *server_where(const struct server *srv) { return srv->where; }
struct store *server_store(const struct server *srv) { return srv->s; }
struct sidtab *server_sidtab(const struct server *srv) { return srv->tab; }
struct replicator *server_replicator(const struct server *srv) { return srv->rep; }
struct taskhost *server_tasks(const struct server *srv) { return srv->tasks; }
struct mailbox *server_mailbox(const struct server *srv) { return srv->o.no_join ? NULL : srv->mb; }

int server_open(const struct server_opts *o, struct server **out, const char **what)
{
	struct server *srv = calloc(1, sizeof(*srv));
	struct sockaddr_in bound;
	int rc;

	*out = NULL;
	if (!srv)
		return -ENOMEM;
	srv->o = *o;
	srv->lfd = -1;
	*what = o->data;
	rc = store_open(o->data, false, &srv->s);
	if (!rc) {
		store_set_capacity(srv->s, o->capacity);
		(void)store_set_inline_max(srv->s, o->inline_max);   /* (the program checked it) */
		*what = SERVER_LISTENING;
		rc = net_listen(&o->listen, &srv->lfd, &bound);
	}
	if (rc) {
		server_close(srv);
		return rc;
	}
	net_format_addr(&bound, srv->where);
	*out = srv;
	return 0;
}

void server_secure(struct server *srv, struct tls_conf *tls, struct crl *crl,
		   struct cap_ring *capkeys)
{
	srv->tls = tls;
	srv->crl = crl;
	srv->capkeys = capkeys;
}

static void on_contact(struct ofs_sid peer, void *arg)
{
	int rc = behind_tell(arg, peer);

	if (rc > 0) {
		char hex[OFS_OID_HEX];
		sid_to_hex(peer, hex);
		log_info("told %s that %d of its copies missed changes", hex, rc);
	}
}

/*
 * gossip's question, each round: is this server down because its store
 * does not commit? Once a stall ends it stays down (store_hold) until it
 * has asked its peers which of its copies missed changes meanwhile, as a
 * server does at start (behind_catch_up) - so that it serves none of
 * them stale in the second before their gossip would tell it.
 */
static bool store_stalled_fn(void *arg)
{
	struct server *srv = arg;

	if (store_stalled(srv->s)) {
		store_hold(srv->s, true);
		return true;
	}
	if (store_down(srv->s)) {
		if (behind_catch_up(srv->s, srv->tab, SERVER_CATCH_UP_TIMEOUT_MS) < 0)
			return true;
		store_hold(srv->s, false);
		log_info("the store commits again: copies that missed changes meanwhile are "
			 "marked behind; serving its peers again");
	}
	return false;
}

/* The server table, replication, and - before serving - what changed
 * while this server was away: the table as the peers have it (an
 * operator's change, a root move) and which of its copies they saw fall
 * behind. Then gossip. */
static int start_cluster(struct server *srv, const char **what)
{
	const struct server_opts *o = &srv->o;
	int rc;

	*what = "server table";
	if ((rc = sidtab_open(srv->s, srv->where, &srv->tab)))
		return rc;
	*what = "replication";
	if ((rc = replica_open(srv->tab, &srv->rep)) || (rc = behind_open(srv->s, srv->rep, &srv->bh)))
		return rc;
	*what = "learning the server table";
	rc = gossip_pull_once(srv->tab, &(struct gossip_trust){ srv->crl, srv->capkeys, NULL, NULL },
			      o->peers, o->npeers, SERVER_CATCH_UP_TIMEOUT_MS);
	if (rc < 0)
		return rc;
	*what = "catching up with peers";
	rc = behind_catch_up(srv->s, srv->tab, SERVER_CATCH_UP_TIMEOUT_MS);
	if (rc < 0)
		return rc;
	if (rc > 0)
		log_warn("%d copies here missed changes while this server was away; "
			 "they are not served until caught up", rc);
	*what = "gossip";
	return gossip_start(srv->tab,
			    &(struct gossip_trust){ srv->crl, srv->capkeys, store_stalled_fn, srv },
			    o->peers, o->npeers, on_contact, srv->bh, &srv->g);
}

#ifndef OFS_NO_TEST_HOOKS
static char stall_path[4096];           /* "stall-syncs:PATH" */

/* While PATH exists, every commit waits (a disk whose syncs hang). */
static void stall_syncs(void)
{
	static _Atomic bool said;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000L };

	if (access(stall_path, F_OK) != 0) {
		atomic_store(&said, false);
		return;
	}
	if (!atomic_exchange(&said, true))
		log_warn("test fault: a commit waits while %s exists", stall_path);
	while (access(stall_path, F_OK) == 0)
		nanosleep(&ts, NULL);
}
#endif

/* A test's fault, from OFS_SERVER_FAULT: "exit-after:OP" (an operation's
 * name as ofs_op_name spells it) - the server exits after applying and
 * forwarding a client's OP, before it answers; "stall-syncs:PATH" - while
 * the file PATH exists, every commit of the store waits, as on a disk
 * whose syncs hang. Left out of release builds (make RELEASE=1). */
static void test_fault(struct service *sv)
{
#ifndef OFS_NO_TEST_HOOKS
	const char *e = getenv("OFS_SERVER_FAULT");
	const char *pre = "exit-after:", *stall = "stall-syncs:";

	if (e && strncmp(e, stall, strlen(stall)) == 0 &&
	    strlen(e + strlen(stall)) < sizeof(stall_path)) {
		snprintf(stall_path, sizeof(stall_path), "%s", e + strlen(stall));
		kv_set_commit_hook(stall_syncs);
		log_warn("test fault set: %s", e);
		return;
	}
	if (!e || strncmp(e, pre, strlen(pre)) != 0)
		return;
	for (uint16_t op = 1; op < OFS_OP_MAX; op++)
		if (strcmp(ofs_op_name(op), e + strlen(pre)) == 0)
			sv->exit_after_op = op;
	if (sv->exit_after_op)
		log_warn("test fault set: %s", e);
#else
	(void)sv;
#endif
}

/* The background tasks and the parts that add kinds and operations to
 * them, in order. */
static int start_parts(struct server *srv, const struct server_part *parts, size_t nparts,
		       const char **what)
{
	long long quarantine_s = (long long)srv->o.quarantine_days * 86400;
	unsigned purged = 0;
	int rc;

	if (store_quarantine_purge(srv->s, quarantine_s, &purged) == 0 && purged)
		log_info("quarantine: removed %u cop%s older than %u days", purged,
			 purged == 1 ? "y" : "ies", srv->o.quarantine_days);
	*what = "background tasks";
	rc = taskhost_open(srv->s, srv->tab, srv->rep, srv->o.scrub_rate, &srv->tasks);
	if (!rc)
		rc = mailbox_open(srv->o.mailbox_max, &srv->mb);
	if (rc)
		return rc;
	if (nparts > SERVER_PARTS_MAX)
		return -E2BIG;
	for (size_t i = 0; i < nparts; i++) {
		*what = parts[i].name;
		rc = parts[i].open(srv, parts[i].arg, &srv->parts[i].state);
		if (rc)
			return rc;
		srv->parts[i].p = parts[i];
		srv->nparts = i + 1;
	}
	return 0;
}

int server_start(struct server *srv, const struct server_part *parts, size_t nparts,
		 const char **what)
{
	int rc = start_cluster(srv, what);

	if (!rc)
		rc = start_parts(srv, parts, nparts, what);
	if (rc)
		return rc;
	service_init(&srv->sv, srv->s, srv->tab, srv->rep, srv->tasks);
	srv->sv.crl = srv->crl;
	srv->sv.mailbox = server_mailbox(srv);   /* (NULL: peers leave it out) */
	srv->sv.capkeys = srv->capkeys;
	srv->sv.cap_ttl_s = srv->o.cap_ttl_s;
	test_fault(&srv->sv);
	srv->sv_ready = true;
	*what = "catch-up";
	rc = recover_start(srv->s, srv->tab, srv->rep, srv->o.no_catch_up, &srv->rv);
	if (rc)
		return rc;
	recover_attach(srv->rv, &srv->sv, srv->tasks);
	*what = "the suspects' worker";
	rc = suspects_start(srv->s, srv->tab, srv->rep, srv->o.scrub_rate, &srv->sus);
	if (rc)
		return rc;
	srv->sv.suspects = srv->sus;
	if (srv->o.no_catch_up)
		log_warn("--no-catch-up: copies that missed changes wait for a repair job");
	return 0;
}

int server_serve(struct server *srv, int stop_fd)
{
	return listener_run(&srv->sv, srv->tls, srv->lfd, stop_fd, &srv->o.limits);
}

void server_close(struct server *srv)
{
	struct stopping *w;

	if (!srv)
		return;
	stopping_start(STOPPING_REPORT_S, &w);
	stopping_step(w, "gossip");
	gossip_stop(srv->g);
	stopping_step(w, "the suspects' worker");
	suspects_stop(srv->sus);
	stopping_step(w, "the background tasks");
	taskhost_close(srv->tasks);     /* (its tasks use the catch-up and the parts) */
	stopping_step(w, "the catch-up");
	recover_stop(srv->rv);
	for (size_t i = srv->nparts; i-- > 0;) {
		stopping_step(w, srv->parts[i].p.name);
		if (srv->parts[i].p.close)
			srv->parts[i].p.close(srv->parts[i].state);
	}
	mailbox_close(srv->mb);
	stopping_step(w, "the service");
	if (srv->sv_ready)
		service_fini(&srv->sv);
	behind_close(srv->bh);
	stopping_step(w, "replication");
	replica_close(srv->rep);
	if (srv->lfd >= 0)
		close(srv->lfd);
	sidtab_close(srv->tab);
	stopping_step(w, "the store");
	store_close(srv->s);
	stopping_end(w);
	free(srv);
}
