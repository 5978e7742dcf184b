/*
 * test_gossip.c - gossip's rounds against a peer that refuses this
 * server (server/gossip.c): a fake peer on 127.0.0.1:0 answers every
 * SERVERS with a refusal, and the test watches when it is asked. Rounds
 * are GOSSIP_PERIOD_MS apart; a refused peer must be left out of more and
 * more of them, not asked every round.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ofs_error.h"
#include "server/gossip.h"
#include "server/sidtab.h"
#include "store/store.h"
#include "tests/unit/fake_server.h"

#define ASKED_MAX 8

struct peer {
	int64_t asked_ms[ASKED_MAX]; /* when it was asked (under the fake's lock) */
	int nasked;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int refuse(void *arg, uint16_t op, bool forwarded, const struct ofs_req *q,
		  struct wbuf *reply)
{
	struct peer *p = arg;

	(void)forwarded;
	(void)q;
	(void)reply;
	if (op == OFS_OP_SERVERS && p->nasked < ASKED_MAX)
		p->asked_ms[p->nasked++] = mono_ms();
	return -EACCES;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(path);
}

static int asked(struct fake_server *f, struct peer *p)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = p->nasked;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* A seed that refuses: asked at the first round, then after waits that
 * double (about 1, 2, 4 rounds), not every round as a seed that does
 * not answer is. */
static void test_a_peer_that_refuses_is_asked_less_and_less_often(void **state)
{
	char dir[] = "/tmp/ofs-test-gossip-XXXXXX", data[64];
	struct peer p = { .nasked = 0 };
	struct fake_server *f;
	struct gossip *g = NULL;
	struct sidtab *t = NULL;
	struct store *s = NULL;
	struct ofs_sid sid;
	const char *seeds[1];
	int64_t deadline;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/d", dir);
	assert_int_equal(store_init(data, 1 << 20, NULL, 0, &sid), 0);
	assert_int_equal(store_open(data, false, &s), 0);
	assert_int_equal(sidtab_open(s, "127.0.0.1:7001", &t), 0);
	f = fake_server_start(refuse, &p);
	assert_non_null(f);
	seeds[0] = f->addr;
	assert_int_equal(gossip_start(t, NULL, seeds, 1, NULL, NULL, &g), 0);
	deadline = mono_ms() + 30000;
	while (asked(f, &p) < 4 && mono_ms() < deadline) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	gossip_stop(g);
	fake_server_stop(f);
	assert_true(p.nasked >= 4);
	/* The third refusal's wait is at least 2 s (its step: 4 s, drawn
	 * from its upper half), so two rounds at least go by without it;
	 * asked every round, the gap would be one round. */
	if (p.asked_ms[3] - p.asked_ms[2] < 2 * GOSSIP_PERIOD_MS - 100)
		fail_msg("asked again %lld ms after its third refusal: not left out of rounds",
			 (long long)(p.asked_ms[3] - p.asked_ms[2]));
	sidtab_close(t);
	store_close(s);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_peer_that_refuses_is_asked_less_and_less_often),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
