/* timefmt.c - ISO-8601 UTC times (see timefmt.h). */
#include <time.h>

#include "lib/timefmt.h"

void time_format(int64_t ns, char buf[OFS_TIME_LEN])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, OFS_TIME_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm))
		buf[0] = '\0';
}
