/* mailbox.c - records for another server's task of the same job (see
 * mailbox.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/mailbox.h"

struct chan {
	uint8_t *b;
	size_t len, cap;
	uint32_t reclen;                 /* 0: none put yet */
};

struct sender {
	struct mailbox_peer p;
	struct chan ch[OFS_JOIN_CHANNELS];
};

struct job {
	uint64_t job;
	double touched;                  /* monotonic seconds */
	struct sender *s;
	size_t ns, caps;
	struct job *next;
};

struct mailbox {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t max, bytes;
	uint64_t seq;
	struct job *jobs;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mailbox_open(size_t max_bytes, struct mailbox **out)
{
	struct mailbox *mb = calloc(1, sizeof(*mb));
	pthread_condattr_t ca;

	if (!mb)
		return -ENOMEM;
	pthread_mutex_init(&mb->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mb->cv, &ca);
	pthread_condattr_destroy(&ca);
	mb->max = max_bytes;
	*out = mb;
	return 0;
}

static void sender_clear(struct mailbox *mb, struct sender *s)
{
	for (unsigned c = 0; c < OFS_JOIN_CHANNELS; c++) {
		mb->bytes -= s->ch[c].len;
		free(s->ch[c].b);
		s->ch[c].b = NULL;
		s->ch[c].len = s->ch[c].cap = 0;
	}
}

static void job_free(struct mailbox *mb, struct job *j)
{
	for (size_t i = 0; i < j->ns; i++)
		sender_clear(mb, &j->s[i]);
	free(j->s);
	free(j);
}

void mailbox_close(struct mailbox *mb)
{
	if (!mb)
		return;
	while (mb->jobs) {
		struct job *j = mb->jobs;
		mb->jobs = j->next;
		job_free(mb, j);
	}
	pthread_cond_destroy(&mb->cv);
	pthread_mutex_destroy(&mb->mu);
	free(mb);
}

/* Drop the jobs untouched for MAILBOX_TTL_S (under mu). */
static void expire(struct mailbox *mb, double now)
{
	struct job **pp = &mb->jobs;

	while (*pp) {
		struct job *j = *pp;
		if (now - j->touched > MAILBOX_TTL_S) {
			*pp = j->next;
			job_free(mb, j);
		} else {
			pp = &j->next;
		}
	}
}

static struct job *job_find(struct mailbox *mb, uint64_t job, bool make)
{
	struct job *j;

	for (j = mb->jobs; j; j = j->next)
		if (j->job == job)
			return j;
	if (!make || !(j = calloc(1, sizeof(*j))))
		return NULL;
	j->job = job;
	j->next = mb->jobs;
	mb->jobs = j;
	return j;
}

/* (make: a new sender starts at epoch) */
static struct sender *sender_find(struct job *j, struct ofs_sid from, bool make, uint64_t epoch)
{
	for (size_t i = 0; i < j->ns; i++)
		if (sid_eq(j->s[i].p.from, from))
			return &j->s[i];
	if (!make || j->ns == MAILBOX_MAX_PEERS)
		return NULL;
	if (j->ns == j->caps) {
		size_t cap = j->caps ? j->caps * 2 : 4;
		struct sender *n = realloc(j->s, cap * sizeof(*n));
		if (!n)
			return NULL;
		j->s = n;
		j->caps = cap;
	}
	memset(&j->s[j->ns], 0, sizeof(j->s[0]));
	j->s[j->ns].p.from = from;
	j->s[j->ns].p.epoch = epoch;
	return &j->s[j->ns++];
}

static void broken(struct mailbox *mb, struct sender *s)
{
	s->p.broken = true;
	sender_clear(mb, s);
}

/* Append len bytes to channel c of s (under mu). */
static int append(struct mailbox *mb, struct sender *s, struct chan *c, const uint8_t *recs,
		  size_t len)
{
	if (mb->bytes + len > mb->max) {
		broken(mb, s);
		return -ENOSPC;
	}
	if (c->len + len > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		uint8_t *n;
		while (cap < c->len + len)
			cap *= 2;
		if (!(n = realloc(c->b, cap))) {
			broken(mb, s);
			return -ENOMEM;
		}
		c->b = n;
		c->cap = cap;
	}
	memcpy(c->b + c->len, recs, len);
	c->len += len;
	mb->bytes += len;
	return 0;
}

int mailbox_put(struct mailbox *mb, uint64_t job, struct ofs_sid from, uint64_t epoch,
		unsigned channel, uint32_t reclen, const uint8_t *recs, size_t len, bool end,
		uint64_t end_count)
{
	double now = mono_now();
	struct sender *s;
	struct chan *c;
	struct job *j;
	int rc = 0;

	if (channel >= OFS_JOIN_CHANNELS || reclen == 0 || len % reclen)
		return -EINVAL;
	pthread_mutex_lock(&mb->mu);
	expire(mb, now);
	j = job_find(mb, job, true);
	s = j ? sender_find(j, from, true, epoch) : NULL;
	if (!s) {
		rc = -ENOMEM;
		goto out;
	}
	j->touched = now;
	mb->seq++;
	s->p.seq = mb->seq;
	if (s->p.broken)
		goto out;
	if (s->p.epoch != epoch) {
		broken(mb, s);               /* its task ran again: neither run is whole */
		goto out;
	}
	c = &s->ch[channel];
	if (c->reclen && c->reclen != reclen) {
		rc = -EINVAL;
		goto out;
	}
	c->reclen = reclen;
	if (end) {
		if (s->p.count[channel] != end_count)
			broken(mb, s);       /* some were lost on the way */
		else
			s->p.ended |= 1u << channel;
	} else if (s->p.ended & (1u << channel)) {
		broken(mb, s);               /* records after their end */
	} else if ((rc = append(mb, s, c, recs, len)) == 0) {
		s->p.count[channel] += len / reclen;
	}
out:
	pthread_cond_broadcast(&mb->cv);
	pthread_mutex_unlock(&mb->mu);
	return rc;
}

int mailbox_peers(struct mailbox *mb, uint64_t job, struct mailbox_peer *out, size_t max,
		  size_t *n, uint64_t *seq)
{
	struct job *j;

	pthread_mutex_lock(&mb->mu);
	*n = 0;
	*seq = mb->seq;
	j = job_find(mb, job, false);
	for (size_t i = 0; j && i < j->ns && *n < max; i++)
		out[(*n)++] = j->s[i].p;
	if (j)
		j->touched = mono_now();
	pthread_mutex_unlock(&mb->mu);
	return 0;
}

void mailbox_wait(struct mailbox *mb, uint64_t seq, long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&mb->mu);
	while (mb->seq == seq)
		if (pthread_cond_timedwait(&mb->cv, &mb->mu, &ts) != 0)
			break;
	pthread_mutex_unlock(&mb->mu);
}

int mailbox_take(struct mailbox *mb, uint64_t job, struct ofs_sid from, unsigned channel,
		 uint8_t **recs, size_t *len, uint32_t *reclen)
{
	struct sender *s = NULL;
	struct job *j;

	*recs = NULL;
	*len = 0;
	*reclen = 0;
	if (channel >= OFS_JOIN_CHANNELS)
		return -EINVAL;
	pthread_mutex_lock(&mb->mu);
	j = job_find(mb, job, false);
	if (j)
		s = sender_find(j, from, false, 0);
	if (s && !s->p.broken) {
		struct chan *c = &s->ch[channel];
		*recs = c->b;
		*len = c->len;
		*reclen = c->reclen;
		mb->bytes -= c->len;
		c->b = NULL;
		c->len = c->cap = 0;
	}
	pthread_mutex_unlock(&mb->mu);
	return 0;
}

void mailbox_drop(struct mailbox *mb, uint64_t job)
{
	struct job **pp;

	pthread_mutex_lock(&mb->mu);
	for (pp = &mb->jobs; *pp; pp = &(*pp)->next)
		if ((*pp)->job == job) {
			struct job *j = *pp;
			*pp = j->next;
			job_free(mb, j);
			break;
		}
	pthread_mutex_unlock(&mb->mu);
}

size_t mailbox_bytes(struct mailbox *mb)
{
	size_t b;

	pthread_mutex_lock(&mb->mu);
	b = mb->bytes;
	pthread_mutex_unlock(&mb->mu);
	return b;
}
