/* backoff.c - exponential waits with a cap and jitter (see backoff.h). */
#include <errno.h>
#include <sys/random.h>
#include <time.h>

#include "lib/backoff.h"

void backoff_init(struct backoff *b, int base_ms, int cap_ms)
{
	struct timespec ts;

	b->base_ms = base_ms < 1 ? 1 : base_ms;
	b->cap_ms = cap_ms < b->base_ms ? b->base_ms : cap_ms;
	b->rng = 0;
	if (getrandom(&b->rng, sizeof(b->rng), GRND_NONBLOCK) != (ssize_t)sizeof(b->rng)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		b->rng = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b;
	}
	if (b->rng == 0)
		b->rng = 0x2545f4914f6cdd1dull;  /* (xorshift never leaves 0) */
	backoff_reset(b);
}

void backoff_reset(struct backoff *b)
{
	b->step_ms = b->base_ms;
	b->tries = 0;
	b->waited_ms = 0;
}

static uint64_t next_rand(struct backoff *b)
{
	uint64_t x = b->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	b->rng = x;
	return x;
}

int backoff_next(struct backoff *b)
{
	int step = b->step_ms, half = step / 2, wait;

	wait = half + (int)(next_rand(b) % (uint64_t)(step - half + 1));
	if (wait < 1)
		wait = 1;
	b->step_ms = step > b->cap_ms / 2 ? b->cap_ms : step * 2;
	b->tries++;
	b->waited_ms += wait;
	return wait;
}

int backoff_sleep(struct backoff *b)
{
	int ms = backoff_next(b);
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return ms;
}
