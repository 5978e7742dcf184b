/* timefmt.c - ISO-8601 UTC times (see timefmt.h). */
#include <time.h>

#include "lib/timefmt.h"

uint64_t time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void time_format(int64_t ns, char buf[OFS_TIME_LEN])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, OFS_TIME_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm))
		buf[0] = '\0';
}
