/*
 * fake_server.h - a server for unit tests: a thread on 127.0.0.1:0 that
 * speaks the real frames and answers each request through the test's
 * function, one connection per thread. Tests of code that calls servers
 * (the job runner, the move step) script what each answers and record
 * what each was sent.
 */
#ifndef OFS_TEST_FAKE_SERVER_H
#define OFS_TEST_FAKE_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/net.h"
#include "lib/proto.h"
#include "lib/wire.h"

/* Answer one request (op without OFS_OP_FORWARDED; forwarded says
 * whether it carried it): append the reply body, return its status. The
 * fake's lock is held. */
typedef int (*fake_answer_fn)(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
			      struct wbuf *reply);

struct fake_server {
	char addr[OFS_ADDR_MAX];
	struct ofs_sid sid;
	fake_answer_fn answer;
	void *arg;
	pthread_mutex_t mu;
	/* (the fake's own) */
	int lfd;
	pthread_t acceptor;
	volatile bool stop;
	int conns;                   /* connection threads running (under mu) */
};

/* Start one (its SID random); NULL on failure. */
struct fake_server *fake_server_start(fake_answer_fn answer, void *arg);
/* Stop accepting, wait (bounded) for its connections to end - close
 * the clients first - and free it. */
void fake_server_stop(struct fake_server *f);
/* f as a server table entry (in service, weight 1, attribute attr). */
void fake_server_entry(const struct fake_server *f, const char *attr, struct ofs_server *e);

/* The server table of a test's own store s (this server at self_addr)
 * naming the n fakes (n <= 8), in racks r2, r3, ..., and a replicator
 * over it: 0 or the first error. */
struct store;
struct sidtab;
struct replicator;
int fake_table(struct store *s, const char *self_addr, struct fake_server *const *fakes,
	       size_t n, struct sidtab **t, struct replicator **r);

#endif
