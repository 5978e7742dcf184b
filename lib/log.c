/* log.c - timestamped, single-write log lines (see log.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static int log_fd = 2;
static enum log_level log_max = LOG_INFO;
static char log_tag[20];                 /* "[NAME] " or "" */

void log_init(int fd, enum log_level level)
{
	log_fd = fd;
	log_max = level;
}

void log_name(const char *name)
{
	if (name && *name)
		snprintf(log_tag, sizeof(log_tag), "[%.16s] ", name);
	else
		log_tag[0] = '\0';
}

/* One line: the time, the level, the message and suffix (may be ""). */
static void log_vmsg(enum log_level level, const char *suffix, const char *fmt, va_list ap)
{
	static const char *names[] = { "ERROR", "WARN", "INFO", "DEBUG" };
	char line[2048];
	struct tm tm;
	time_t now = time(NULL);
	size_t n;
	int r;

	gmtime_r(&now, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	r = snprintf(line + n, sizeof(line) - n, "%s%s ", log_tag, names[level]);
	if (r > 0)
		n += (size_t)r;
	r = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r : sizeof(line) - n - 2;
	r = snprintf(line + n, sizeof(line) - n - 1, "%s", suffix);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r : sizeof(line) - n - 2;
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		/* Nowhere left to report a failed log write. */
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	log_vmsg(level, "", fmt, ap);
	va_end(ap);
}

/* ---- lines a loop repeats ------------------------------------------------------ */

/* Lock: repeat_mu guards repeat_keys. */
static pthread_mutex_t repeat_mu = PTHREAD_MUTEX_INITIALIZER;
static struct repeat_key {
	uint64_t hash;               /* of the key; 0: a free slot */
	int64_t said_ms;             /* when its line was last written */
	uint64_t quiet;              /* lines kept back since */
} repeat_keys[LOG_REPEAT_KEYS];

static uint64_t key_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull;      /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h ? h : 1;
}

bool log_repeat(const char *key, int64_t now_ms, uint64_t *quiet, int64_t *since_ms)
{
	uint64_t h = key_hash(key);
	struct repeat_key *k = NULL, *oldest = &repeat_keys[0];
	bool say = true;

	*quiet = 0;
	if (since_ms)
		*since_ms = 0;
	pthread_mutex_lock(&repeat_mu);
	for (size_t i = 0; i < LOG_REPEAT_KEYS && !k; i++) {
		if (repeat_keys[i].hash == h)
			k = &repeat_keys[i];
		else if (repeat_keys[i].hash == 0 || (oldest->hash != 0 &&
						       repeat_keys[i].said_ms < oldest->said_ms))
			oldest = &repeat_keys[i];
	}
	if (!k) {
		k = oldest;              /* a free slot, or the key said longest ago */
		k->hash = h;
		k->quiet = 0;
	} else if (now_ms - k->said_ms < LOG_REPEAT_MS) {
		k->quiet++;
		say = false;
	} else {
		*quiet = k->quiet;
		k->quiet = 0;
		if (since_ms)
			*since_ms = now_ms - k->said_ms;
	}
	if (say)
		k->said_ms = now_ms;
	pthread_mutex_unlock(&repeat_mu);
	return say;
}

int64_t log_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void log_limited(enum log_level level, const char *key, const char *fmt, ...)
{
	char line[1024], suffix[96] = "";
	uint64_t quiet;
	int64_t since;
	va_list ap;

	if (level > log_max)
		return;
	if (!key) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		key = line;
	}
	if (!log_repeat(key, log_now_ms(), &quiet, &since))
		return;
	if (quiet)
		snprintf(suffix, sizeof(suffix), " (and %llu more like it in the last %lld s)",
			 (unsigned long long)quiet, (long long)(since + 500) / 1000);
	va_start(ap, fmt);
	log_vmsg(level, suffix, fmt, ap);
	va_end(ap);
}
