/* ident.c - the identity in a cluster certificate (see ident.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/ident.h"

#define PFX "urn:ofs:"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static bool name_ok_n(const char *s, size_t n)
{
	if (n == 0 || n > IDENT_NAME_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

bool ident_name_ok(const char *name)
{
	return name && name_ok_n(name, strlen(name));
}

/* A decimal id below 2^32 - 1 (the "no id" value), no leading zeros. */
static bool num_ok(const char *s, size_t n, uint32_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x >= UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

static int decode_sid(const char *s, size_t n, struct ident *id)
{
	char hex[OFS_OID_HEX];

	if (n != OFS_OID_HEX - 1)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EINVAL;
	memcpy(hex, s, n);
	hex[n] = '\0';
	if (sid_from_hex(hex, &id->sid) || sid_is_zero(id->sid))
		return -EINVAL;
	id->role = IDENT_SERVER;
	return 0;
}

/* "<name>:<uid>:<gid>[,<gid>]..." */
static int decode_user(const char *s, size_t n, struct ident *id)
{
	const char *end = s + n, *c1 = memchr(s, ':', n), *c2, *p;

	if (!c1 || !name_ok_n(s, (size_t)(c1 - s)))
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2 || !num_ok(c1 + 1, (size_t)(c2 - c1 - 1), &id->uid))
		return -EINVAL;
	p = c2 + 1;
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;

		if (id->ngids == IDENT_GIDS_MAX || !num_ok(p, (size_t)(e - p), &id->gids[id->ngids]))
			return -EINVAL;
		id->ngids++;
		if (!comma)
			break;
		p = comma + 1;
	}
	memcpy(id->name, s, (size_t)(c1 - s));
	id->name[c1 - s] = '\0';
	id->role = IDENT_USER;
	return 0;
}

int ident_decode(const char *s, size_t n, struct ident *id)
{
	size_t pn = strlen(PFX);
	int rc = -EINVAL;

	memset(id, 0, sizeof(*id));
	if (!s || n < pn || n >= IDENT_URI_MAX || memcmp(s, PFX, pn) != 0)
		return -EINVAL;
	s += pn;
	n -= pn;
	if (n > 7 && memcmp(s, "server:", 7) == 0) {
		rc = decode_sid(s + 7, n - 7, id);
	} else if (n > 6 && memcmp(s, "admin:", 6) == 0) {
		if (name_ok_n(s + 6, n - 6)) {
			memcpy(id->name, s + 6, n - 6);
			id->role = IDENT_ADMIN;
			rc = 0;
		}
	} else if (n > 5 && memcmp(s, "user:", 5) == 0) {
		rc = decode_user(s + 5, n - 5, id);
	}
	if (rc)
		memset(id, 0, sizeof(*id));
	return rc;
}

int ident_encode(const struct ident *id, char buf[IDENT_URI_MAX])
{
	char hex[OFS_OID_HEX];
	size_t len;

	switch (id->role) {
	case IDENT_SERVER:
		if (sid_is_zero(id->sid))
			return -EINVAL;
		sid_to_hex(id->sid, hex);
		snprintf(buf, IDENT_URI_MAX, PFX "server:%s", hex);
		return 0;
	case IDENT_ADMIN:
		if (!ident_name_ok(id->name))
			return -EINVAL;
		snprintf(buf, IDENT_URI_MAX, PFX "admin:%s", id->name);
		return 0;
	case IDENT_USER:
		if (!ident_name_ok(id->name) || id->uid == UINT32_MAX || id->ngids == 0 ||
		    id->ngids > IDENT_GIDS_MAX)
			return -EINVAL;
		len = (size_t)snprintf(buf, IDENT_URI_MAX, PFX "user:%s:%u:", id->name,
				       (unsigned)id->uid);
		for (uint8_t i = 0; i < id->ngids; i++) {
			if (id->gids[i] == UINT32_MAX)
				return -EINVAL;
			len += (size_t)snprintf(buf + len, IDENT_URI_MAX - len, "%s%u",
						i ? "," : "", (unsigned)id->gids[i]);
		}
		return 0;
	default:
		return -EINVAL;
	}
}

const char *ident_role_name(uint8_t role)
{
	switch (role) {
	case IDENT_SERVER:
		return "server";
	case IDENT_ADMIN:
		return "admin";
	case IDENT_USER:
		return "user";
	default:
		return "none";
	}
}

void ident_describe(const struct ident *id, char *buf, size_t len)
{
	char hex[OFS_OID_HEX];

	switch (id->role) {
	case IDENT_SERVER:
		sid_to_hex(id->sid, hex);
		snprintf(buf, len, "server %s", hex);
		break;
	case IDENT_ADMIN:
		snprintf(buf, len, "admin %s", id->name);
		break;
	case IDENT_USER:
		snprintf(buf, len, "user %s (uid %u)", id->name, (unsigned)id->uid);
		break;
	default:
		snprintf(buf, len, "nobody");
	}
}
