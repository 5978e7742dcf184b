/*
 * server.h - one running server, put together: its store, the server
 * table and gossip, replication, the catch-up, the background tasks and
 * their kinds, the service and its listener; opened in that order and
 * closed in reverse (docs/design.md, "Parts").
 *
 * The program (cli/ofs-server.c) parses the command line, owns the
 * process's log and signals, loads the server's identity, and calls:
 *
 *   server_open      the store, and the listening socket
 *   server_secure    the identity it serves with (none: --insecure)
 *   server_start     what changed while it was away, gossip, the tasks
 *                    and the parts above this folder, the catch-up
 *   server_serve     until the stop descriptor is readable
 *   server_close     everything, each step watched (stopping.h)
 *
 * The parts above server/ - the scrubber, the rebalancer's kinds, the
 * back references' and drain's operations - are not named here: the
 * program hands them in as server_part rows, each opened once the task
 * host and the mailbox are, and closed after the tasks have stopped.
 */
#ifndef OFS_SERVER_SERVER_H
#define OFS_SERVER_SERVER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/oid.h"
#include "server/listener.h"

struct server;
struct store;
struct sidtab;
struct replicator;
struct taskhost;
struct mailbox;
struct tls_conf;
struct crl;
struct cap_ring;

/* How long a start waits for each peer's list of its stale copies, and
 * for its table. */
#define SERVER_CATCH_UP_TIMEOUT_MS 2000

/* What ofs-server run's options set (ofs-server(8)); checked by the
 * program. */
struct server_opts {
	const char *data;                 /* the data dir */
	struct sockaddr_in listen;        /* port 0: any free one */
	const char *const *peers;         /* "HOST:PORT" to learn the cluster from */
	size_t npeers;
	uint64_t capacity;                /* 0: the file system's */
	uint32_t inline_max;              /* bytes a small file keeps inline */
	uint64_t scrub_rate;              /* the tasks' default pace, bytes/s */
	uint32_t quarantine_days;         /* removed copies kept this long */
	uint32_t cap_ttl_s;               /* capabilities granted live this long */
	struct listener_limits limits;
	bool no_catch_up;                 /* copies that missed changes wait for
	                                     a repair job */
	bool no_join;                     /* no JOIN mailbox: peers leave this
	                                     server out of the namespace join */
	size_t mailbox_max;               /* JOIN's records held, bytes */
};

/* A part of the server from a folder above this one (the rows are
 * copied; name must outlive the server). open runs once the
 * task host and the mailbox are open (server_tasks, server_mailbox) and
 * may register task kinds and operations; close (NULL: none) runs after
 * the tasks have stopped. 0 or -errno. */
struct server_part {
	const char *name;                 /* for errors: "the scrubber" */
	int (*open)(struct server *srv, void *arg, void **state);
	void (*close)(void *state);
	void *arg;
};

/* The store (its capacity and inline limit set) and the listening
 * socket. 0, or -errno with *what naming the step: o->data itself for
 * the store (-EBUSY: another server runs on it; -EPERM: its modes are
 * wrong, store_check_modes says how), SERVER_LISTENING for the socket. */
#define SERVER_LISTENING "listening"
int server_open(const struct server_opts *o, struct server **out, const char **what);

/* Its SID, and the address it listens on ("HOST:PORT"). */
struct ofs_sid server_sid(const struct server *srv);
const char *server_where(const struct server *srv);

/* The identity it serves with and believes the CA by (all NULL:
 * --insecure, plaintext); the caller keeps them and frees them after
 * server_close. */
void server_secure(struct server *srv, struct tls_conf *tls, struct crl *crl,
		   struct cap_ring *capkeys);

/* Everything between an open store and serving: the table as the peers
 * have it and the copies they saw fall behind, gossip, the tasks and the
 * parts (in order), the service, the catch-up. 0, or -errno with *what
 * naming the step. */
int server_start(struct server *srv, const struct server_part *parts, size_t nparts,
		 const char **what);

/* Serve until stop_fd is readable (listener.h). 0 after a clean stop. */
int server_serve(struct server *srv, int stop_fd);

/* Stop and free what server_open and server_start made (NULL: nothing). */
void server_close(struct server *srv);

/* For the parts: what they build on. server_mailbox is NULL under
 * no_join. */
struct store *server_store(const struct server *srv);
struct sidtab *server_sidtab(const struct server *srv);
struct replicator *server_replicator(const struct server *srv);
struct taskhost *server_tasks(const struct server *srv);
struct mailbox *server_mailbox(const struct server *srv);

#endif
