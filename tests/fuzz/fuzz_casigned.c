/*
 * fuzz_casigned.c - libFuzzer target for the decoders of what the CA
 * signs (lib/crl.c, lib/cap.c): the REVOKED and CAPKEYS bodies and
 * answers a server reads from any peer - a CRL's DER, a pull, the
 * previous release's unsigned list, an answer, a signed key set.
 *
 * A CA of its own is made at the start; the input is offered to a list
 * and a key ring that trust it. Whatever the input, neither may take it:
 * the fuzzer cannot sign with the CA's key, so a CRL or key set taken
 * aborts, as does any sanitizer report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ca.h"
#include "lib/cap.h"
#include "lib/crl.h"
#include "lib/fdio.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/fuzz_casigned.XXXXXX";
static struct crl *list;
static struct cap_ring *ring;

static void cleanup(void)
{
	char cmd[128];

	crl_close(list);
	cap_ring_close(ring);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_casigned: could not remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char cadir[128], capath[160], keys[160], why[TLS_WHY_MAX];
	static const char one[] = "1 00000000000000000000000000000000000000000000000000000000000000aa\n";

	(void)argc;
	(void)argv;
	snprintf(cadir, sizeof(cadir), "%s/ca", mkdtemp(dir) ? dir : "/nonexistent");
	snprintf(capath, sizeof(capath), "%s/ca.crt", cadir);
	snprintf(keys, sizeof(keys), "%s/cap.key", dir);
	if (ca_init(cadir, why) || crl_open(NULL, capath, &list) ||
	    fdio_write_file(keys, one, sizeof(one) - 1, 0600) || cap_ring_open(keys, capath, &ring)) {
		fprintf(stderr, "fuzz_casigned: cannot make its CA in %s: %s\n", dir, why);
		abort();
	}
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *der = NULL;
	uint64_t number = 0;
	uint32_t held = 0;
	size_t derlen = 0;

	(void)crl_pull_decode(data, size, &number);
	(void)crl_is_unsigned(data, size);
	if (crl_is_der(data, size) && crl_offer(list, data, size, NULL) == 1) {
		fprintf(stderr, "fuzz_casigned: a CRL the fuzzer made was taken\n");
		abort();
	}
	if (crl_answer_decode(data, size, &number, &der, &derlen) == 0 && der &&
	    (der < data || der + derlen != data + size || crl_offer(list, der, derlen, NULL) == 1)) {
		fprintf(stderr, "fuzz_casigned: an answer's CRL was taken, or not its tail\n");
		abort();
	}
	(void)cap_keys_pull_decode(data, size, &held);
	if (cap_ring_offer(ring, data, size) == 1) {
		fprintf(stderr, "fuzz_casigned: a key set the fuzzer made was taken\n");
		abort();
	}
	return 0;
}
