/*
 * casign - what a CA signs, made for tests that send it by hand
 * (rawframe.py send): a CRL numbered as the test wants (an older one, or
 * one another CA signed), or a key set with the ids it wants.
 *
 *   casign crl CADIR NUMBER [SERIAL...]   the DER of a CRL the CA in CADIR
 *                                         signs, numbered NUMBER, revoking
 *                                         each SERIAL (lowercase hex)
 *   casign keys CADIR ID [ID]             the CAPKEYS body of a key set the
 *                                         CA signs (lib/cap.h): keys of
 *                                         those ids, of random bytes
 *
 * The bytes go to stdout. Exit 0, 2 on bad arguments, 3 on failure (the
 * reason on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lib/ca.h"
#include "lib/crl.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"

static int usage(void)
{
	fprintf(stderr, "usage: casign crl CADIR NUMBER [SERIAL...]\n"
			"       casign keys CADIR ID [ID]\n");
	return 2;
}

static int crl(struct ca *ca, int argc, char **argv, struct wbuf *w)
{
	struct crl_entry *e = calloc((size_t)argc + 1, sizeof(*e));
	uint64_t number;
	int rc = 0;

	if (!e)
		return -ENOMEM;
	if (argc < 1 || parse_uint(argv[0], 1, UINT64_MAX, &number))
		rc = -EINVAL;
	for (int i = 1; i < argc && !rc; i++) {
		rc = crl_serial_from_hex(argv[i], strlen(argv[i]), &e[i - 1].serial);
		e[i - 1].when = 1700000000;
	}
	if (!rc)
		rc = ca_sign_crl(ca, e, (size_t)argc - 1, number, w);
	free(e);
	return rc;
}

static int keys(struct ca *ca, int argc, char **argv, struct wbuf *w)
{
	struct cap_key k[CAP_MAX_KEYS];

	if (argc < 1 || argc > CAP_MAX_KEYS)
		return -EINVAL;
	for (int i = 0; i < argc; i++) {
		uint64_t id;
		if (parse_uint(argv[i], 1, UINT32_MAX, &id))
			return -EINVAL;
		k[i].id = (uint32_t)id;
		if (getrandom(k[i].key, sizeof(k[i].key), 0) != (ssize_t)sizeof(k[i].key))
			return -EIO;
	}
	return ca_sign_keys(ca, k, (size_t)argc, w);
}

int main(int argc, char **argv)
{
	char why[TLS_WHY_MAX];
	struct ca *ca = NULL;
	struct wbuf w;
	int rc;

	if (argc < 4 || (strcmp(argv[1], "crl") && strcmp(argv[1], "keys")))
		return usage();
	rc = ca_open(argv[2], &ca, why);
	if (rc) {
		fprintf(stderr, "casign: %s\n", why);
		return 3;
	}
	wbuf_init(&w);
	rc = !strcmp(argv[1], "crl") ? crl(ca, argc - 3, argv + 3, &w)
				     : keys(ca, argc - 3, argv + 3, &w);
	ca_close(ca);
	if (!rc && fwrite(w.data, 1, w.len, stdout) != w.len)
		rc = -EIO;
	wbuf_free(&w);
	if (rc == -EINVAL)
		return usage();
	if (rc) {
		fprintf(stderr, "casign: %s\n", ofs_strerror(rc));
		return 3;
	}
	return 0;
}
