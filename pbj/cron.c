/* cron.c - cron expressions for schedules (see cron.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbj/cron.h"
#include "pbj/jobstore.h"

/* Does one cron field ("*", "N", "A-B", "*\/S", "A-B/S", lists of those)
 * match value v in [lo, hi]? -1 when the field is malformed. */
static int field(const char *f, int v, int lo, int hi)
{
	char buf[PBJ_CRON_LEN], *save = NULL;
	int match = 0;

	snprintf(buf, sizeof(buf), "%s", f);
	for (char *part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		long a = lo, b = hi, step = 1;
		char *slash = strchr(part, '/'), *end;
		if (slash) {
			*slash = '\0';
			step = strtol(slash + 1, &end, 10);
			if (*end || step < 1 || step > hi)
				return -1;
		}
		if (strcmp(part, "*") != 0) {
			a = strtol(part, &end, 10);
			if (end == part)
				return -1;
			b = a;
			if (*end == '-') {
				char *e2;
				b = strtol(end + 1, &e2, 10);
				if (e2 == end + 1 || *e2)
					return -1;
			} else if (*end) {
				return -1;
			} else if (slash) {
				b = hi;              /* "N/S": from N on */
			}
			if (a < lo || b > hi || a > b)
				return -1;
		}
		if (v >= a && v <= b && (v - a) % step == 0)
			match = 1;
	}
	return match;
}

int pbj_cron_match(const char *cron, const struct tm *tm)
{
	char f[5][PBJ_CRON_LEN];
	static const int lo[5] = { 0, 0, 1, 1, 0 }, hi[5] = { 59, 23, 31, 12, 7 };
	int vals[5], r[5];

	if (sscanf(cron, "%127s %127s %127s %127s %127s", f[0], f[1], f[2], f[3], f[4]) != 5)
		return -1;
	{
		char extra[8];
		if (sscanf(cron, "%*s %*s %*s %*s %*s %7s", extra) == 1)
			return -1;
	}
	vals[0] = tm->tm_min;
	vals[1] = tm->tm_hour;
	vals[2] = tm->tm_mday;
	vals[3] = tm->tm_mon + 1;
	vals[4] = tm->tm_wday;
	for (int i = 0; i < 5; i++) {
		r[i] = field(f[i], vals[i], lo[i], hi[i]);
		if (r[i] < 0)
			return -1;
	}
	if (!r[4] && tm->tm_wday == 0)
		r[4] = field(f[4], 7, lo[4], hi[4]) == 1;   /* 7 is Sunday too */
	/* As cron: when both day fields are restricted, either may match. */
	if (strcmp(f[2], "*") && strcmp(f[4], "*"))
		return r[0] && r[1] && r[3] && (r[2] || r[4]);
	return r[0] && r[1] && r[2] && r[3] && r[4];
}

bool pbj_cron_due(const char *cron, int64_t after_s, int64_t upto_s, int64_t unit)
{
	int64_t t;

	if (unit < 1 || unit > 60)
		unit = 60;
	t = (after_s / unit + 1) * unit;

	if (upto_s - t > 31LL * 24 * 3600)
		t = upto_s - 31LL * 24 * 3600;       /* (a month away: look back a month) */
	for (; t <= upto_s; t += unit) {
		struct tm tm;
		time_t m = unit == 60 ? (time_t)t : (time_t)(t / unit * 60);  /* test unit: seconds act as minutes */
		gmtime_r(&m, &tm);
		if (pbj_cron_match(cron, &tm) == 1)
			return true;
	}
	return false;
}
