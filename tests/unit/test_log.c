/* test_log.c - lines a loop repeats, said once in a while, and a named
 * log's tag (lib/log.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/log.h"

/* The first line is said; its repeats within LOG_REPEAT_MS are not, and
 * are counted into the next one said after it. */
static void test_a_repeated_line_is_said_once_per_interval_with_a_count(void **state)
{
	uint64_t quiet = 99;
	int64_t since = 99, t = 1000000;

	(void)state;
	assert_true(log_repeat("refused peer", t, &quiet, &since));
	assert_int_equal(quiet, 0);
	for (int i = 1; i <= 400; i++)
		assert_false(log_repeat("refused peer", t + i * 10, &quiet, &since));
	assert_true(log_repeat("refused peer", t + LOG_REPEAT_MS, &quiet, &since));
	assert_int_equal(quiet, 400);
	assert_int_equal(since, LOG_REPEAT_MS);
	/* and the count starts over */
	assert_false(log_repeat("refused peer", t + LOG_REPEAT_MS + 1, &quiet, NULL));
	assert_true(log_repeat("refused peer", t + 3 * LOG_REPEAT_MS, &quiet, NULL));
	assert_int_equal(quiet, 1);
}

/* Different lines do not hold each other back. */
static void test_different_keys_are_said_apart(void **state)
{
	uint64_t quiet;
	int64_t t = 5000000;

	(void)state;
	assert_true(log_repeat("key a", t, &quiet, NULL));
	assert_true(log_repeat("key b", t, &quiet, NULL));
	assert_false(log_repeat("key a", t + 1, &quiet, NULL));
	assert_false(log_repeat("key b", t + 1, &quiet, NULL));
}

/* More keys than are remembered: the oldest is forgotten and counts as
 * new, the recent ones are still held back. */
static void test_the_oldest_key_is_forgotten_first(void **state)
{
	char key[32];
	uint64_t quiet;
	int64_t t = 9000000;

	(void)state;
	for (int i = 0; i < LOG_REPEAT_KEYS + 1; i++) {
		snprintf(key, sizeof(key), "many %d", i);
		assert_true(log_repeat(key, t + i, &quiet, NULL));
	}
	assert_true(log_repeat("many 0", t + 100, &quiet, NULL));   /* forgotten */
	snprintf(key, sizeof(key), "many %d", LOG_REPEAT_KEYS);
	assert_false(log_repeat(key, t + 101, &quiet, NULL));
}

/* Log lines go to a fresh unlinked file from now on: its descriptor. */
static int log_to_tmp(void)
{
	char path[] = "/tmp/test_log.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	log_init(fd, LOG_INFO);
	return fd;
}

/* What was logged to fd (into buf, len bytes); logging goes back to
 * stderr and fd is closed. */
static void log_read_back(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	assert_true(n > 0);
	buf[n] = '\0';
	log_init(2, LOG_INFO);
	close(fd);
}

/* log_limited writes the first of fifty same lines and none of the
 * rest (their count goes out with the next one after the interval:
 * log_repeat's test); a level not logged is not even counted. */
static void test_log_limited_writes_a_repeated_line_once(void **state)
{
	char buf[4096];
	int fd = log_to_tmp();

	(void)state;
	for (int i = 0; i < 50; i++)
		log_limited(LOG_INFO, NULL, "refused a connection from %s: %s", "127.0.0.1",
			    "certificate revoked");
	log_limited(LOG_DEBUG, NULL, "not written at level info %d", 1);
	log_read_back(fd, buf, sizeof(buf));
	assert_non_null(strstr(buf, "INFO refused a connection from 127.0.0.1: certificate revoked\n"));
	assert_null(strchr(strchr(buf, '\n') + 1, '\n'));      /* one line */
	assert_null(strstr(buf, "not written"));
}

/* A named log tags every line with the name before its level (servers
 * sharing a terminal told apart); unnamed again, none. */
static void test_a_name_tags_every_line(void **state)
{
	char buf[4096];
	int fd = log_to_tmp();

	(void)state;
	log_name("3f0c9d2a");
	log_info("serving %s", "x");
	log_name("");
	log_warn("after %d", 1);
	log_read_back(fd, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Z [3f0c9d2a] INFO serving x\n"));
	assert_non_null(strstr(buf, "Z WARN after 1\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_repeated_line_is_said_once_per_interval_with_a_count),
		cmocka_unit_test(test_different_keys_are_said_apart),
		cmocka_unit_test(test_the_oldest_key_is_forgotten_first),
		cmocka_unit_test(test_log_limited_writes_a_repeated_line_once),
		cmocka_unit_test(test_a_name_tags_every_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
