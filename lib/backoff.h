/*
 * backoff.h - how long a loop waits before it tries again.
 *
 * Every loop in OFS that retries a transient error (a server that does
 * not answer, an object held still by a move, a cluster not reachable
 * yet) waits longer after each failure in a row: base, 2 base, 4 base,
 * ... up to cap. Each wait is drawn at random from the upper half of that
 * step, [step/2, step], so that many processes that failed together do
 * not come back together. A success resets the steps.
 *
 * A refusal - the peer's answer to who we are (conn_is_refusal: permission
 * denied, a certificate not trusted, expired or revoked) - is never
 * retried, with or without a backoff: every try would get the same
 * answer. The loop ends the attempt and reports it.
 *
 * A struct backoff is a plain value owned by its loop; it is not
 * thread-safe (one loop, one thread).
 */
#ifndef OFS_BACKOFF_H
#define OFS_BACKOFF_H

#include <stdint.h>

struct backoff {
	int base_ms;                 /* the first step (at least 1) */
	int cap_ms;                  /* no step is longer (at least base_ms) */
	int step_ms;                 /* the next failure's step, before jitter */
	unsigned tries;              /* failures in a row since the last reset */
	int64_t waited_ms;           /* the waits handed out since the last reset */
	uint64_t rng;                /* the jitter's state (xorshift64), never 0 */
};

/* A backoff of steps base_ms, 2 base_ms, ... up to cap_ms (base_ms is
 * raised to 1, cap_ms to base_ms). Its jitter is seeded from the kernel's
 * random source (or the clock when that fails). Never fails. */
void backoff_init(struct backoff *b, int base_ms, int cap_ms);

/* One more failure: the milliseconds to wait before the next try, in
 * [step/2, step] of this failure's step (at least 1), and the step after
 * doubled up to the cap. Counted in tries and waited_ms. */
int backoff_next(struct backoff *b);

/* A success: the next failure waits the first step again. */
void backoff_reset(struct backoff *b);

/* Sleep backoff_next(b) milliseconds (whole: a signal does not cut it
 * short) and return how long that was. */
int backoff_sleep(struct backoff *b);

#endif
