/* test_ident.c - the identity a certificate carries (lib/ident.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ident.h"

static int dec(const char *s, struct ident *id)
{
	return ident_decode(s, strlen(s), id);
}

/* s decodes, and encodes back to exactly s. */
static void roundtrip(const char *s, struct ident *id)
{
	char buf[IDENT_URI_MAX];

	assert_int_equal(dec(s, id), 0);
	assert_int_equal(ident_encode(id, buf), 0);
	assert_string_equal(buf, s);
}

static void test_each_role_decodes_and_encodes_back(void **state)
{
	struct ident id;
	char desc[160];

	(void)state;
	roundtrip("urn:ofs:server:0123456789abcdef0123456789abcdef", &id);
	assert_int_equal(id.role, IDENT_SERVER);
	assert_int_equal(id.sid.b[0], 0x01);
	assert_int_equal(id.sid.b[15], 0xef);

	roundtrip("urn:ofs:admin:ops-team.1", &id);
	assert_int_equal(id.role, IDENT_ADMIN);
	assert_string_equal(id.name, "ops-team.1");

	roundtrip("urn:ofs:user:alice:1000:1000,27,4294967294", &id);
	assert_int_equal(id.role, IDENT_USER);
	assert_string_equal(id.name, "alice");
	assert_int_equal(id.uid, 1000);
	assert_int_equal(id.ngids, 3);
	assert_int_equal(id.gids[0], 1000);
	assert_int_equal(id.gids[2], 4294967294u);
	ident_describe(&id, desc, sizeof(desc));
	assert_string_equal(desc, "user alice (uid 1000)");

	roundtrip("urn:ofs:user:root:0:0", &id);
	assert_int_equal(id.uid, 0);
}

static void test_every_other_spelling_is_refused(void **state)
{
	static const char *const bad[] = {
		"", "urn:ofs:", "urn:ofs:server:", "urn:ofs:admin:", "urn:ofs:user:",
		"URN:ofs:admin:x", "urn:ofs:Admin:x", "urn:ofs:root:x",
		"urn:ofs:server:0123456789ABCDEF0123456789abcdef",     /* upper case */
		"urn:ofs:server:0123456789abcdef0123456789abcde",      /* 31 digits */
		"urn:ofs:server:0123456789abcdef0123456789abcdef0",    /* 33 */
		"urn:ofs:server:00000000000000000000000000000000",     /* no SID */
		"urn:ofs:admin:-x", "urn:ofs:admin:.x", "urn:ofs:admin:a b", "urn:ofs:admin:a/b",
		"urn:ofs:admin:a:b",
		"urn:ofs:user:alice", "urn:ofs:user:alice:1000", "urn:ofs:user:alice:1000:",
		"urn:ofs:user:alice::1000", "urn:ofs:user:alice:01000:1000",
		"urn:ofs:user:alice:1000:1000,", "urn:ofs:user:alice:1000:,1000",
		"urn:ofs:user:alice:4294967295:1", "urn:ofs:user:alice:1:4294967295",
		"urn:ofs:user:alice:99999999999:1", "urn:ofs:user:alice:+1:1",
		"urn:ofs:user:alice:1:1:1", "urn:ofs:user::1:1",
	};
	struct ident id;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&id, 0xab, sizeof(id));
		if (dec(bad[i], &id) != -22)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(id.role, IDENT_NONE);
	}
}

static void test_limits_of_names_and_groups(void **state)
{
	char s[IDENT_URI_MAX * 2];
	struct ident id;
	size_t n;

	(void)state;
	/* a name of 64 bytes is taken, 65 is not */
	n = (size_t)snprintf(s, sizeof(s), "urn:ofs:admin:");
	memset(s + n, 'x', IDENT_NAME_MAX);
	s[n + IDENT_NAME_MAX] = '\0';
	assert_int_equal(dec(s, &id), 0);
	strcat(s, "x");
	assert_int_equal(dec(s, &id), -22);

	/* 32 groups are taken, 33 are not */
	n = (size_t)snprintf(s, sizeof(s), "urn:ofs:user:bob:7:1");
	for (int i = 1; i < IDENT_GIDS_MAX; i++)
		n += (size_t)snprintf(s + n, sizeof(s) - n, ",%d", i + 1);
	assert_int_equal(dec(s, &id), 0);
	assert_int_equal(id.ngids, IDENT_GIDS_MAX);
	snprintf(s + n, sizeof(s) - n, ",99");
	assert_int_equal(dec(s, &id), -22);

	/* the bytes are a length, not a C string: a NUL inside is refused */
	assert_int_equal(ident_decode("urn:ofs:admin:a\0b", 17, &id), -22);
	/* and bytes past the length are not read */
	assert_int_equal(ident_decode("urn:ofs:admin:abXXX", 16, &id), 0);
	assert_string_equal(id.name, "ab");
}

static void test_encode_refuses_what_decode_would(void **state)
{
	struct ident id;
	char buf[IDENT_URI_MAX];

	(void)state;
	memset(&id, 0, sizeof(id));
	assert_int_equal(ident_encode(&id, buf), -22);          /* no role */
	id.role = IDENT_SERVER;
	assert_int_equal(ident_encode(&id, buf), -22);          /* zero SID */
	id.role = IDENT_ADMIN;
	strcpy(id.name, "a b");
	assert_int_equal(ident_encode(&id, buf), -22);
	id.role = IDENT_USER;
	strcpy(id.name, "carol");
	id.uid = 5;
	assert_int_equal(ident_encode(&id, buf), -22);          /* no group */
	id.ngids = 1;
	id.gids[0] = 5;
	assert_int_equal(ident_encode(&id, buf), 0);
	assert_string_equal(buf, "urn:ofs:user:carol:5:5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_role_decodes_and_encodes_back),
		cmocka_unit_test(test_every_other_spelling_is_refused),
		cmocka_unit_test(test_limits_of_names_and_groups),
		cmocka_unit_test(test_encode_refuses_what_decode_would),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
