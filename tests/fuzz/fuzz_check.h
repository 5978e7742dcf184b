/*
 * fuzz_check.h - what every fuzz target shares: CHECK(cond) aborts,
 * naming the file, line and condition, when a property of a decoder
 * fails (a decoded record that does not encode back to its bytes, ...),
 * so libFuzzer records the input as a crash as it does a sanitizer's
 * report.
 */
#ifndef OFS_FUZZ_CHECK_H
#define OFS_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

#endif
