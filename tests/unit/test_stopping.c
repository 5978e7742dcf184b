/* test_stopping.c - a stop's steps, watched (server/stopping.c): one that
 * lasts is reported, naming it; one that ends at once is not. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/log.h"
#include "server/stopping.h"

static char logpath[] = "/tmp/ofs-test-stopping.XXXXXX";
static int logfd = -1;

static int setup(void **state)
{
	(void)state;
	logfd = mkstemp(logpath);
	if (logfd < 0)
		return -1;
	log_init(logfd, LOG_INFO);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	log_init(2, LOG_INFO);
	close(logfd);
	unlink(logpath);
	return 0;
}

/* Whether the log holds s. */
static int logged(const char *s)
{
	char buf[8192];
	ssize_t n = pread(logfd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

static void test_a_step_that_lasts_is_reported_by_name(void **state)
{
	struct stopping *w = NULL;
	struct timespec nap = { 0, 20 * 1000000L };

	(void)state;
	stopping_start(1, &w);
	assert_non_null(w);
	stopping_step(w, "the quick part");
	stopping_step(w, "the slow part");
	/* reported within its interval (1 s) of starting; bounded at 30 s */
	for (int i = 0; i < 1500 && !logged("still stopping the slow part after"); i++)
		nanosleep(&nap, NULL);
	stopping_end(w);
	assert_true(logged("shutdown: still stopping the slow part after "));
	assert_false(logged("the quick part"));
}

static void test_a_stop_that_ends_at_once_logs_nothing(void **state)
{
	struct stopping *w = NULL;

	(void)state;
	assert_int_equal(ftruncate(logfd, 0), 0);
	stopping_start(1, &w);
	stopping_step(w, "everything");
	stopping_end(w);
	assert_false(logged("shutdown"));
	/* and a watch that could not start does nothing */
	stopping_step(NULL, "x");
	stopping_end(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_step_that_lasts_is_reported_by_name),
		cmocka_unit_test(test_a_stop_that_ends_at_once_logs_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
