/*
 * parse.h - numbers from the command line and config.
 */
#ifndef OFS_PARSE_H
#define OFS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A size with an optional suffix K, M, G or T (powers of 1024, either
 * case, an optional trailing "B" or "iB"): "64K", "1M", "1048576".
 * Returns 0, or -EINVAL (not a size) or -ERANGE (over 2^63). */
int parse_size(const char *s, uint64_t *out);

/* A decimal integer in [min, max]. Returns 0, -EINVAL or -ERANGE. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Exactly 2 * n lowercase hex digits at s (not NUL-terminated) into n
 * bytes at out. Returns 0 or -EINVAL (out may be part written). Key and
 * serial files use it: one spelling per value. */
int parse_hex_lower(const char *s, size_t n, uint8_t *out);

#endif
