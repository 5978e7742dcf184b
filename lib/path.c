/* path.c - normalizing user paths (see path.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/ofs_error.h"
#include "lib/path.h"

int path_parse(const char *s, struct ofs_path *p)
{
	size_t len = s ? strlen(s) : 0;
	const char *c = s;

	if (len == 0 || s[0] != '/')
		return -EINVAL;
	if (len > OFS_PATH_MAX)
		return -ENAMETOOLONG;
	p->n = 0;
	while (*c) {
		const char *e;
		size_t n;

		while (*c == '/')
			c++;
		if (!*c)
			break;
		e = strchr(c, '/');
		n = e ? (size_t)(e - c) : strlen(c);
		if (n > OFS_NAME_MAX)
			return -ENAMETOOLONG;
		if (n == 1 && c[0] == '.') {
			/* "." names the directory itself */
		} else if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (p->n > 0)
				p->n--;
		} else {
			if (p->n >= OFS_PATH_DEPTH)
				return -OFS_ETOOBIG;
			memcpy(p->comp[p->n], c, n);
			p->comp[p->n][n] = '\0';
			p->n++;
		}
		c += n;
	}
	return 0;
}

int path_format(const struct ofs_path *p, char *buf, size_t len)
{
	size_t at = 0;

	if (len < 2)
		return -ENAMETOOLONG;
	if (p->n == 0) {
		snprintf(buf, len, "/");
		return 0;
	}
	for (size_t i = 0; i < p->n; i++) {
		int r = snprintf(buf + at, len - at, "/%s", p->comp[i]);
		if (r < 0 || (size_t)r >= len - at)
			return -ENAMETOOLONG;
		at += (size_t)r;
	}
	return 0;
}
