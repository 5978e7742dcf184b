/* test_crl.c - the revocation list: CRLs the CA signs (lib/crl.c, lib/ca.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ca.h"
#include "lib/crl.h"
#include "lib/ofs_error.h"

static char dir[256], path[300], cadir[300], capath[320], otherdir[300];
static struct ca *ca, *other;

static int setup(void **state)
{
	char why[TLS_WHY_MAX];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_crl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/revoked", dir);
	snprintf(cadir, sizeof(cadir), "%s/ca", dir);
	snprintf(capath, sizeof(capath), "%s/ca.crt", cadir);
	snprintf(otherdir, sizeof(otherdir), "%s/other", dir);
	assert_int_equal(ca_init(cadir, why), 0);
	assert_int_equal(ca_init(otherdir, why), 0);
	assert_int_equal(ca_open(cadir, &ca, why), 0);
	assert_int_equal(ca_open(otherdir, &other, why), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	ca_close(ca);
	ca_close(other);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static struct crl_serial ser(const char *hex)
{
	struct crl_serial s;

	assert_int_equal(crl_serial_from_hex(hex, strlen(hex), &s), 0);
	return s;
}

static struct crl_entry ent(const char *hex)
{
	return (struct crl_entry){ .serial = ser(hex), .when = 1700000000 };
}

/* The DER of by's CRL numbered number revoking e[0..n). */
static void sign(struct ca *by, const struct crl_entry *e, size_t n, uint64_t number,
		 struct wbuf *w)
{
	wbuf_init(w);
	assert_int_equal(ca_sign_crl(by, e, n, number, w), 0);
}

static void test_a_signed_crl_is_taken_kept_and_read_back(void **state)
{
	struct crl_entry two[2] = { ent("7f01"), ent("01") }, *got = NULL;
	struct crl *c = NULL, *d = NULL;
	struct wbuf w, a;
	const uint8_t *der;
	uint64_t num = 0;
	size_t n = 0, derlen = 0;
	char head[32] = "";
	FILE *f;

	(void)state;
	assert_int_equal(crl_open(path, capath, &c), 0);   /* no file yet: empty */
	assert_int_equal(crl_count(c), 0);
	assert_int_equal(crl_number(c), 0);
	assert_int_equal(access(path, F_OK), -1);
	sign(ca, two, 2, 1, &w);
	assert_int_equal(crl_offer(c, w.data, w.len, &num), 1);
	assert_int_equal(num, 1);
	assert_int_equal(crl_number(c), 1);
	assert_int_equal(crl_generation(c), 1);
	assert_true(crl_has(c, &two[0].serial));
	assert_false(crl_has(c, &(struct crl_serial){ 1, { 0x02 } }));
	/* the same again changes nothing */
	assert_int_equal(crl_offer(c, w.data, w.len, NULL), 0);
	assert_int_equal(crl_generation(c), 1);
	crl_close(c);
	/* kept on disk, in PEM, and read back (verified again) */
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(head, sizeof(head), f));
	fclose(f);
	assert_string_equal(head, "-----BEGIN X509 CRL-----\n");
	assert_int_equal(crl_open(path, capath, &d), 0);
	assert_int_equal(crl_count(d), 2);
	assert_int_equal(crl_number(d), 1);
	assert_int_equal(crl_entries(d, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].serial.len, 1);           /* shortest first, then bytes */
	assert_int_equal(got[0].when, 1700000000);
	free(got);
	/* the answers: the number, and the CRL when newer than the one named */
	wbuf_init(&a);
	assert_int_equal(crl_answer(d, 0, &a), 0);
	assert_int_equal(crl_answer_decode(a.data, a.len, &num, &der, &derlen), 0);
	assert_int_equal(num, 1);
	assert_int_equal(derlen, w.len);
	assert_memory_equal(der, w.data, w.len);
	a.len = 0;
	assert_int_equal(crl_answer(d, 1, &a), 0);
	assert_int_equal(a.len, 8);
	assert_int_equal(crl_answer_decode(a.data, a.len, &num, &der, &derlen), 0);
	assert_null(der);
	assert_int_equal(crl_answer_decode(a.data, 7, &num, &der, &derlen), -OFS_ECORRUPT);
	wbuf_free(&a);
	wbuf_free(&w);
	crl_close(d);
}

static void test_a_newer_crl_replaces_the_list_whole_and_an_older_one_changes_nothing(void **state)
{
	struct crl_entry one[1] = { ent("7f01") }, next[2] = { ent("01"), ent("0a0b") };
	struct crl *c = NULL;
	struct wbuf w1, w2, w3;

	(void)state;
	assert_int_equal(crl_open(path, capath, &c), 0);
	sign(ca, one, 1, 5, &w1);
	sign(ca, next, 2, 6, &w2);
	sign(ca, next, 2, 4, &w3);
	assert_int_equal(crl_offer(c, w1.data, w1.len, NULL), 1);
	assert_int_equal(crl_offer(c, w2.data, w2.len, NULL), 1);
	/* whole: 7f01 left the list with CRL 6 */
	assert_false(crl_has(c, &one[0].serial));
	assert_true(crl_has(c, &next[1].serial));
	assert_int_equal(crl_number(c), 6);
	/* lower (5, 4) and equal (6): ignored, not even rewritten */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(crl_offer(c, w1.data, w1.len, NULL), 0);
	assert_int_equal(crl_offer(c, w3.data, w3.len, NULL), 0);
	assert_int_equal(crl_offer(c, w2.data, w2.len, NULL), 0);
	assert_int_equal(crl_number(c), 6);
	assert_int_equal(crl_generation(c), 2);
	assert_int_equal(access(path, F_OK), -1);
	assert_false(crl_has(c, &one[0].serial));
	wbuf_free(&w1);
	wbuf_free(&w2);
	wbuf_free(&w3);
	crl_close(c);
}

static void test_a_crl_the_ca_did_not_sign_is_refused(void **state)
{
	struct crl_entry mine[1] = { ent("01") }, forged[2] = { ent("01"), ent("0203") };
	struct crl *c = NULL;
	struct wbuf w, f;
	uint8_t *big;

	(void)state;
	assert_int_equal(crl_open(path, capath, &c), 0);
	sign(ca, mine, 1, 1, &w);
	assert_int_equal(crl_offer(c, w.data, w.len, NULL), 1);
	/* another CA's, with a higher number */
	sign(other, forged, 2, 99, &f);
	assert_int_equal(crl_offer(c, f.data, f.len, NULL), -OFS_ENOTCA);
	/* the CA's own, changed after signing: a byte of the signature, of
	 * the list; cut short; with a byte after it */
	wbuf_free(&f);
	sign(ca, forged, 2, 99, &f);
	f.data[f.len - 1] ^= 1;
	assert_int_equal(crl_offer(c, f.data, f.len, NULL), -OFS_ENOTCA);
	f.data[f.len - 1] ^= 1;
	for (size_t i = 0; i + 1 < f.len; i++)
		if (f.data[i] == 0x02 && f.data[i + 1] == 0x03)
			f.data[i + 1] = 0x04;             /* serial 0203 becomes 0204 */
	assert_int_equal(crl_offer(c, f.data, f.len, NULL), -OFS_ENOTCA);
	assert_int_equal(crl_offer(c, f.data, f.len - 1, NULL), -OFS_ECORRUPT);
	wbuf_u8(&f, 0);
	assert_int_equal(crl_offer(c, f.data, f.len, NULL), -OFS_ECORRUPT);
	assert_int_equal(crl_offer(c, (const uint8_t *)"\x30\x00", 2, NULL), -OFS_ECORRUPT);
	big = calloc(CRL_MAX_DER + 1, 1);
	assert_non_null(big);
	big[0] = 0x30;
	assert_int_equal(crl_offer(c, big, CRL_MAX_DER + 1, NULL), -OFS_ETOOBIG);
	free(big);
	/* nothing changed */
	assert_int_equal(crl_number(c), 1);
	assert_false(crl_has(c, &forged[1].serial));
	assert_int_equal(crl_generation(c), 1);
	/* a holder that trusts no CA takes nothing */
	{
		struct crl *none = NULL;
		assert_int_equal(crl_open(NULL, NULL, &none), 0);
		assert_int_equal(crl_offer(none, w.data, w.len, NULL), -OFS_ENOTCA);
		crl_close(none);
	}
	wbuf_free(&f);
	wbuf_free(&w);
	crl_close(c);
}

/* The previous release capped the list at 4096 serials; a CRL is bounded
 * by its bytes alone (CRL_MAX_DER). */
static void test_five_thousand_serials(void **state)
{
	enum { N = 5000 };
	struct crl_entry *e = calloc(N, sizeof(*e));
	struct crl *c = NULL, *d = NULL;
	struct wbuf w;

	(void)state;
	assert_non_null(e);
	for (size_t i = 0; i < N; i++) {
		e[i].serial.len = 16;
		memset(e[i].serial.b, 0x5a, 16);
		e[i].serial.b[14] = (uint8_t)(i >> 8);
		e[i].serial.b[15] = (uint8_t)i;
		e[i].when = 1700000000 + (int64_t)i;
	}
	sign(ca, e, N, 1, &w);
	assert_true(w.len <= CRL_MAX_DER);
	assert_int_equal(crl_open(path, capath, &c), 0);
	assert_int_equal(crl_offer(c, w.data, w.len, NULL), 1);
	assert_int_equal(crl_count(c), N);
	crl_close(c);
	assert_int_equal(crl_open(path, capath, &d), 0);
	assert_int_equal(crl_count(d), N);
	for (size_t i = 0; i < N; i++)
		assert_true(crl_has(d, &e[i].serial));
	crl_close(d);
	wbuf_free(&w);
	free(e);
}

/* Signing refuses a CRL over what a frame carries. */
static void test_a_crl_too_large_for_a_frame_is_not_signed(void **state)
{
	enum { N = 110000 };     /* 20-byte serials: about 41 bytes each in DER */
	struct crl_entry *e = calloc(N, sizeof(*e));
	struct wbuf w;

	(void)state;
	assert_non_null(e);
	for (size_t i = 0; i < N; i++) {
		e[i].serial.len = 20;
		memset(e[i].serial.b, 0x11, 20);
		e[i].serial.b[17] = (uint8_t)(i >> 16);
		e[i].serial.b[18] = (uint8_t)(i >> 8);
		e[i].serial.b[19] = (uint8_t)i;
	}
	wbuf_init(&w);
	assert_int_equal(ca_sign_crl(ca, e, N, 1, &w), -OFS_ETOOBIG);
	assert_int_equal(ca_sign_crl(ca, e, 1, 0, &w), -EINVAL);   /* number 0: never */
	wbuf_free(&w);
	free(e);
}

static void test_the_previous_release_list_is_held_until_the_first_signed_crl(void **state)
{
	struct crl_entry next[1] = { ent("05") };
	struct crl *c = NULL, *src = NULL;
	struct wbuf w, a;
	FILE *f;

	(void)state;
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0a\n7f01\n", f);
	fclose(f);
	assert_int_equal(crl_open(path, capath, &c), 0);
	assert_int_equal(crl_count(c), 2);
	assert_int_equal(crl_number(c), 0);
	assert_true(crl_has(c, &(struct crl_serial){ 1, { 0x0a } }));
	/* never given to anyone: the answer names number 0 alone */
	wbuf_init(&a);
	assert_int_equal(crl_answer(c, 0, &a), 0);
	assert_int_equal(a.len, 8);
	wbuf_free(&a);
	/* an unsigned list joins an unsigned one (init of a server from a
	 * CA directory of the previous release) */
	assert_int_equal(crl_open(NULL, capath, &src), 0);
	{
		char p2[320];
		snprintf(p2, sizeof(p2), "%s/revoked.old", dir);
		f = fopen(p2, "w");
		assert_non_null(f);
		fputs("0b\n", f);
		fclose(f);
		crl_close(src);
		assert_int_equal(crl_open(p2, capath, &src), 0);
	}
	assert_int_equal(crl_take(c, src), 1);
	assert_int_equal(crl_count(c), 3);
	/* the first signed CRL replaces it whatever it held */
	sign(ca, next, 1, 1, &w);
	assert_int_equal(crl_offer(c, w.data, w.len, NULL), 1);
	assert_false(crl_has(c, &(struct crl_serial){ 1, { 0x0a } }));
	assert_true(crl_has(c, &next[0].serial));
	/* and an unsigned list never goes over a signed one */
	assert_int_equal(crl_take(c, src), 0);
	assert_int_equal(crl_count(c), 1);
	crl_close(c);
	crl_close(src);
	assert_int_equal(crl_open(path, capath, &c), 0);
	assert_int_equal(crl_number(c), 1);
	crl_close(c);
	wbuf_free(&w);
}

/* What the CA signs next: above both lists, every serial of both, each
 * at its earliest date. */
static void test_the_next_crl_follows_the_ca_and_the_cluster(void **state)
{
	struct crl_entry m[2] = { ent("01"), ent("02") }, t[2] = { ent("02"), ent("03") };
	struct crl *mine = NULL, *theirs = NULL, *got = NULL;
	struct crl_serial s = ser("04");
	struct crl_entry *e = NULL;
	struct wbuf wm, wt, w;
	uint64_t num = 0;
	size_t n = 0;

	(void)state;
	t[0].when = 1600000000;
	assert_int_equal(crl_open(NULL, capath, &mine), 0);
	assert_int_equal(crl_open(NULL, capath, &theirs), 0);
	assert_int_equal(crl_open(NULL, capath, &got), 0);
	sign(ca, m, 2, 3, &wm);
	sign(ca, t, 2, 7, &wt);
	assert_int_equal(crl_offer(mine, wm.data, wm.len, NULL), 1);
	assert_int_equal(crl_offer(theirs, wt.data, wt.len, NULL), 1);
	wbuf_init(&w);
	assert_int_equal(ca_next_crl(ca, mine, theirs, &s, 1, &w, &num), 0);
	assert_int_equal(num, 8);
	assert_int_equal(crl_offer(got, w.data, w.len, NULL), 1);
	assert_int_equal(crl_entries(got, &e, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(e[1].serial.b[0], 0x02);
	assert_int_equal(e[1].when, 1600000000);
	assert_true(e[3].when > 1700000000);             /* 04: now */
	free(e);
	crl_close(mine);
	crl_close(theirs);
	crl_close(got);
	wbuf_free(&wm);
	wbuf_free(&wt);
	wbuf_free(&w);
}

static void test_malformed_serials_and_files_are_refused(void **state)
{
	struct crl_entry one[1] = { ent("01") };
	struct crl_serial s;
	struct crl *c = NULL;
	struct wbuf w;
	FILE *f;

	(void)state;
	assert_int_equal(crl_serial_from_hex("", 0, &s), -EINVAL);
	assert_int_equal(crl_serial_from_hex("abc", 3, &s), -EINVAL);
	assert_int_equal(crl_serial_from_hex("0012", 4, &s), -EINVAL);   /* leading zero */
	assert_int_equal(crl_serial_from_hex("AB", 2, &s), -EINVAL);     /* one spelling */
	assert_int_equal(crl_serial_from_hex("00", 2, &s), 0);
	assert_int_equal(crl_serial_from_hex("0102030405060708090a0b0c0d0e0f101112131415", 42, &s),
			 -EINVAL);                                      /* 21 bytes */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0a\nnot hex\n", f);
	fclose(f);
	assert_int_equal(crl_open(path, capath, &c), -EINVAL);
	assert_null(c);
	/* a CRL file another CA signed */
	assert_int_equal(unlink(path), 0);
	{
		char op[320];
		struct crl *o = NULL;
		snprintf(op, sizeof(op), "%s/ca.crt", otherdir);
		assert_int_equal(crl_open(path, op, &o), 0);
		sign(other, one, 1, 1, &w);
		assert_int_equal(crl_offer(o, w.data, w.len, NULL), 1);
		crl_close(o);
		wbuf_free(&w);
	}
	assert_int_equal(crl_open(path, capath, &c), -OFS_ENOTCA);
	assert_null(c);
	/* the CA certificate must be one */
	assert_int_equal(crl_open(NULL, path, &c), -EINVAL);
}

/* A pull, a CRL and the previous release's list never read as each other. */
static void test_the_wire_forms_are_told_apart(void **state)
{
	static const uint8_t unsigned_list[] = { 0, 2, 1, 0x05, 2, 0x7f, 0x01 };
	struct crl_entry one[1] = { ent("01") };
	struct wbuf p, w;
	uint64_t held = 0;

	(void)state;
	wbuf_init(&p);
	crl_pull_encode(&p, 0x0102030405060708ull);
	assert_true(crl_pull_decode(p.data, p.len, &held));
	assert_int_equal(held, 0x0102030405060708ull);
	assert_false(crl_is_der(p.data, p.len));
	assert_false(crl_pull_decode(p.data, p.len - 1, &held));
	sign(ca, one, 1, 1, &w);
	assert_true(crl_is_der(w.data, w.len));
	assert_false(crl_pull_decode(w.data, w.len, &held));
	assert_false(crl_is_unsigned(w.data, w.len));
	assert_true(crl_is_unsigned(unsigned_list, sizeof(unsigned_list)));
	assert_false(crl_is_unsigned(unsigned_list, sizeof(unsigned_list) - 1));
	assert_false(crl_is_der(unsigned_list, sizeof(unsigned_list)));
	wbuf_free(&p);
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_signed_crl_is_taken_kept_and_read_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_newer_crl_replaces_the_list_whole_and_an_older_one_changes_nothing,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_crl_the_ca_did_not_sign_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_five_thousand_serials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_crl_too_large_for_a_frame_is_not_signed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_the_previous_release_list_is_held_until_the_first_signed_crl, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_the_next_crl_follows_the_ca_and_the_cluster,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_serials_and_files_are_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_wire_forms_are_told_apart, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
