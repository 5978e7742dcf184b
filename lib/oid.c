/* oid.c - 128-bit OIDs and SIDs: generation, hex form, comparison. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "lib/oid.h"

static int random_bytes(uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(b + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	return 0;
}

int oid_generate(struct ofs_oid *out)
{
	struct ofs_oid o = { { 0 } };
	int rc;

	do {
		rc = random_bytes(o.b, sizeof(o.b));
		if (rc)
			return rc;
	} while (oid_is_zero(o));
	*out = o;
	return 0;
}

int sid_generate(struct ofs_sid *out)
{
	struct ofs_oid o;
	int rc = oid_generate(&o);

	if (rc)
		return rc;
	memcpy(out->b, o.b, sizeof(out->b));
	return 0;
}

static void hex16(const uint8_t *b, char *buf)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < OFS_OID_LEN; i++) {
		buf[2 * i] = digits[b[i] >> 4];
		buf[2 * i + 1] = digits[b[i] & 15];
	}
	buf[2 * OFS_OID_LEN] = '\0';
}

void oid_to_hex(struct ofs_oid oid, char buf[OFS_OID_HEX])
{
	hex16(oid.b, buf);
}

void sid_to_hex(struct ofs_sid sid, char buf[OFS_OID_HEX])
{
	hex16(sid.b, buf);
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int unhex16(const char *s, uint8_t *out)
{
	uint8_t b[OFS_OID_LEN];

	if (!s || strlen(s) != 2 * OFS_OID_LEN)
		return -EINVAL;
	for (int i = 0; i < OFS_OID_LEN; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(out, b, sizeof(b));
	return 0;
}

int oid_from_hex(const char *s, struct ofs_oid *out)
{
	return unhex16(s, out->b);
}

int sid_from_hex(const char *s, struct ofs_sid *out)
{
	return unhex16(s, out->b);
}

int oid_cmp(struct ofs_oid a, struct ofs_oid b)
{
	return memcmp(a.b, b.b, sizeof(a.b));
}

bool oid_eq(struct ofs_oid a, struct ofs_oid b)
{
	return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

bool sid_eq(struct ofs_sid a, struct ofs_sid b)
{
	return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

bool oid_is_zero(struct ofs_oid a)
{
	static const uint8_t zero[OFS_OID_LEN];

	return memcmp(a.b, zero, sizeof(zero)) == 0;
}

bool sid_is_zero(struct ofs_sid a)
{
	static const uint8_t zero[OFS_OID_LEN];

	return memcmp(a.b, zero, sizeof(zero)) == 0;
}

uint64_t oid_hash(struct ofs_oid a)
{
	uint64_t h = 0;

	for (int i = 8; i < OFS_OID_LEN; i++)
		h = h << 8 | a.b[i];
	return h;
}
