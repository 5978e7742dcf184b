/*
 * log.h - the daemon's and tools' log lines.
 *
 * Programs log; libraries return codes. A line is
 *   2026-12-03T06:00:00Z [NAME] LEVEL message
 * written with one write(2) so concurrent threads never interleave; the
 * [NAME] (a server's short SID, so that servers sharing a terminal are
 * told apart) only once log_name set one.
 */
#ifndef OFS_LOG_H
#define OFS_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Send log lines to fd (default 2). Lines above level are dropped. */
void log_init(int fd, enum log_level level);
/* Tag every line from now on with name (up to 16 bytes; "" for none).
 * Call it before other threads log. */
void log_name(const char *name);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Lines a loop would repeat. A server refused by a peer, a client
 * refused again and again, a store error met on every pass: each would
 * write the same line as often as its loop turns. log_repeat says
 * whether a line with this key is to be written now: true the first time
 * and again once LOG_REPEAT_MS have passed since it was last written,
 * with *quiet the times it was kept back in between and *since_ms (may
 * be NULL) the time since it was last written; false otherwise (and the
 * time is counted). The most recent LOG_REPEAT_KEYS keys are
 * remembered (by a 64-bit hash); an older one counts as new. now_ms is
 * any monotonic clock in milliseconds (log_now_ms). Thread-safe.
 */
#define LOG_REPEAT_MS 10000
#define LOG_REPEAT_KEYS 64

bool log_repeat(const char *key, int64_t now_ms, uint64_t *quiet, int64_t *since_ms);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t log_now_ms(void);

/* log_msg of a line a loop may repeat: written at most once per
 * LOG_REPEAT_MS per key (NULL: the line itself is the key), with
 * " (and N more like it in the last S s)" when some were kept back. */
void log_limited(enum log_level level, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
