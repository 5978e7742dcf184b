/* timefmt.h - the clocks, and times as operators read them: ISO-8601 in
 * UTC. */
#ifndef OFS_TIMEFMT_H
#define OFS_TIMEFMT_H

#include <stdint.h>

#define OFS_TIME_LEN 32

/* "2026-12-03T06:00:00Z" for a time in ns since the epoch. */
void time_format(int64_t ns, char buf[OFS_TIME_LEN]);

/* The wall clock in Unix milliseconds (what a change's deadline is in,
 * lib/frame.h: comparable between hosts whose clocks agree). */
uint64_t time_now_ms(void);
/* A monotonic clock in nanoseconds (for how long something has taken). */
int64_t time_mono_ns(void);

#endif
