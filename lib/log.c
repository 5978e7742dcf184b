/* log.c - timestamped, single-write log lines (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static int log_fd = 2;
static enum log_level log_max = LOG_INFO;

void log_init(int fd, enum log_level level)
{
	log_fd = fd;
	log_max = level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = { "ERROR", "WARN", "INFO", "DEBUG" };
	char line[2048];
	struct tm tm;
	time_t now = time(NULL);
	size_t n;
	va_list ap;
	int r;

	if (level > log_max)
		return;
	gmtime_r(&now, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	r = snprintf(line + n, sizeof(line) - n, "%s ", names[level]);
	if (r > 0)
		n += (size_t)r;
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r : sizeof(line) - n - 2;
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		/* Nowhere left to report a failed log write. */
	}
}
