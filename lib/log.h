/*
 * log.h - the daemon's and tools' log lines.
 *
 * Programs log; libraries return codes. A line is
 *   2026-12-03T06:00:00Z LEVEL message
 * written with one write(2) so concurrent threads never interleave.
 */
#ifndef OFS_LOG_H
#define OFS_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Send log lines to fd (default 2). Lines above level are dropped. */
void log_init(int fd, enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
