/*
 * cron.h - cron expressions for schedules: "MIN HOUR DOM MON DOW", each
 * field "*", "N", "A-B", "*\/S", "A-B/S", "N/S" (from N on) or a list of
 * those; day of week 0-7 (0 and 7 are Sunday); when both day fields are
 * restricted either may match, as cron does. Times are UTC.
 */
#ifndef OFS_PBJ_CRON_H
#define OFS_PBJ_CRON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Does cron match tm? 1, 0, or -1 when it is malformed. */
int pbj_cron_match(const char *cron, const struct tm *tm);

/*
 * Is there a time cron matches in (after_s, upto_s] (seconds since the
 * epoch)? unit_s is the length of a "minute": 60, or less for tests (each
 * unit then stands for a minute: minute m of the clock is second m*unit).
 * At most a month back from upto_s is looked at.
 */
bool pbj_cron_due(const char *cron, int64_t after_s, int64_t upto_s, int64_t unit_s);

#endif
