/*
 * fuzz_jobargs.c - libFuzzer target for the JSON texts ofs-pbj reads back
 * from its job database (pbj/jobargs.h): a job's arguments and a
 * schedule's submit arguments.
 *
 * The input, up to a NUL byte, is the text (SQLite hands it over as a
 * string). JSON has many spellings of one value, so what decodes must
 * satisfy the contract (every member in range, every string not empty,
 * every path absolute) and encode to a text that decodes to the same
 * arguments and encodes to itself again. A mismatch aborts, as does any
 * sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "pbj/jobargs.h"
#include "tests/fuzz/fuzz_check.h"

static void check_strings(const char *const *s, size_t n, const char *buf)
{
	for (size_t i = 0; i < n; i++) {
		CHECK(s[i] >= buf && s[i] < buf + PBJ_ARGS_LEN);
		CHECK(s[i][0] != '\0' && strlen(s[i]) < PBJ_ARGS_LEN);
	}
}

static void same_strings(const char *const *x, const char *const *y, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK(strcmp(x[i], y[i]) == 0);
}

static void fuzz_job(const char *text)
{
	static struct pbj_job_args a, b;
	static char out[PBJ_ARGS_LEN], again[PBJ_ARGS_LEN];
	int rc;

	rc = pbj_job_args_decode(text, &a);
	CHECK(rc == 0 || rc == -OFS_ECORRUPT);
	if (rc)
		return;
	CHECK(a.from_job >= 0 && a.max_repairs >= 0 && a.threshold >= 0 && a.threshold <= 100);
	CHECK(a.nservers <= PBJ_ARGS_MAX && a.npaths <= PBJ_ARGS_MAX);
	check_strings(a.servers, a.nservers, a.buf);
	check_strings(a.paths, a.npaths, a.buf);
	for (size_t i = 0; i < a.npaths; i++)
		CHECK(a.paths[i][0] == '/');
	rc = pbj_job_args_encode(&a, out);
	CHECK(rc == 0 || rc == -OFS_ETOOBIG);
	if (rc)
		return;
	CHECK(pbj_job_args_decode(out, &b) == 0);
	CHECK(a.from_job == b.from_job && a.max_repairs == b.max_repairs &&
	      a.threshold == b.threshold && a.metadata_only == b.metadata_only);
	CHECK(a.nservers == b.nservers && a.npaths == b.npaths);
	same_strings(a.servers, b.servers, a.nservers);
	same_strings(a.paths, b.paths, a.npaths);
	CHECK(pbj_job_args_encode(&b, again) == 0 && strcmp(out, again) == 0);
}

static void fuzz_sched(const char *text)
{
	static struct pbj_sched_args a, b;
	static char out[PBJ_ARGS_LEN], again[PBJ_ARGS_LEN];
	int rc;

	rc = pbj_sched_args_decode(text, &a);
	CHECK(rc == 0 || rc == -OFS_ECORRUPT);
	if (rc)
		return;
	CHECK(a.argc >= 1 && a.argc <= PBJ_ARGS_MAX);
	check_strings(a.argv, (size_t)a.argc, a.buf);
	rc = pbj_sched_args_encode(a.argc, a.argv, out);
	CHECK(rc == 0 || rc == -OFS_ETOOBIG);
	if (rc)
		return;
	CHECK(pbj_sched_args_decode(out, &b) == 0 && b.argc == a.argc);
	same_strings(a.argv, b.argv, (size_t)a.argc);
	CHECK(pbj_sched_args_encode(b.argc, b.argv, again) == 0 && strcmp(out, again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_job(text);
	fuzz_sched(text);
	free(text);
	return 0;
}
