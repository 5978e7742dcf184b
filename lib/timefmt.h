/* timefmt.h - times as operators read them: ISO-8601 in UTC. */
#ifndef OFS_TIMEFMT_H
#define OFS_TIMEFMT_H

#include <stdint.h>

#define OFS_TIME_LEN 32

/* "2026-12-03T06:00:00Z" for a time in ns since the epoch. */
void time_format(int64_t ns, char buf[OFS_TIME_LEN]);

#endif
