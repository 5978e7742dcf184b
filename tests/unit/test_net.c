/* test_net.c - racing connects to several addresses (lib/net.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/net.h"

/* A listening socket on a free loopback port; its address in buf. */
static int listener(char buf[OFS_ADDR_MAX])
{
	struct sockaddr_in sa, bound;
	int fd = -1;

	assert_int_equal(net_parse_addr("127.0.0.1:0", &sa), 0);
	assert_int_equal(net_listen(&sa, &fd, &bound), 0);
	net_format_addr(&bound, buf);
	return fd;
}

/* An address nobody listens on: a port that was free a moment ago. */
static void refused(char buf[OFS_ADDR_MAX])
{
	close(listener(buf));
}

static void test_race_picks_the_one_that_answers(void **state)
{
	char a[OFS_ADDR_MAX], b[OFS_ADDR_MAX], c[OFS_ADDR_MAX];
	int fd;
	size_t first = 99;

	(void)state;
	refused(a);
	refused(c);
	fd = listener(b);
	{
		const char *addrs[] = { a, b, c };
		assert_int_equal(net_connect_race(addrs, 3, 2000, &first), 0);
		assert_int_equal(first, 1);
	}
	close(fd);
}

static void test_race_with_none_listening_fails(void **state)
{
	char a[OFS_ADDR_MAX], b[OFS_ADDR_MAX];
	size_t first = 99;

	(void)state;
	refused(a);
	refused(b);
	{
		const char *addrs[] = { a, b };
		assert_int_equal(net_connect_race(addrs, 2, 2000, &first), -ECONNREFUSED);
		assert_int_equal(first, 99);
	}
}

static void test_race_rejects_a_bad_address(void **state)
{
	const char *addrs[] = { "127.0.0.1:1", "not an address" };
	size_t first = 99;

	(void)state;
	assert_int_equal(net_connect_race(addrs, 2, 2000, &first), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_race_picks_the_one_that_answers),
		cmocka_unit_test(test_race_with_none_listening_fails),
		cmocka_unit_test(test_race_rejects_a_bad_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
