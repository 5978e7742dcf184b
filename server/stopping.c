/*
 * stopping.c - a server's shutdown, watched (see stopping.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "lib/log.h"
#include "server/stopping.h"

struct stopping {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *step;            /* (mu) */
	struct timespec since;       /* when step began, CLOCK_MONOTONIC (mu) */
	bool over;                   /* (mu) */
	int report_s;
};

static long seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(((now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000 +
		       500) / 1000);
}

static void *watch(void *arg)
{
	struct stopping *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->over) {
		struct timespec until;
		const char *was = s->step;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += s->report_s;
		while (!s->over && s->step == was &&
		       pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
			;
		if (!s->over && s->step == was && was)
			log_warn("shutdown: still stopping %s after %ld s", was,
				 seconds_since(&s->since));
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

void stopping_start(int report_s, struct stopping **out)
{
	struct stopping *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	*out = NULL;
	if (!s)
		return;
	s->report_s = report_s > 0 ? report_s : STOPPING_REPORT_S;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, watch, s) != 0) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return;
	}
	*out = s;
}

void stopping_step(struct stopping *s, const char *step)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->step = step;
	clock_gettime(CLOCK_MONOTONIC, &s->since);
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void stopping_end(struct stopping *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->over = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
