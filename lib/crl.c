/* crl.c - the cluster's revocation list (see crl.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crl.h"
#include "lib/fdio.h"
#include "lib/ofs_error.h"
#include "lib/parse.h"

struct crl {
	pthread_mutex_t mu;
	char *path;
	struct crl_serial *s;        /* sorted (crl_cmp), guarded by mu */
	size_t n;
	uint64_t gen;
};

static int crl_cmp(const void *a, const void *b)
{
	const struct crl_serial *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->b, y->b, x->len);
}

static bool serial_ok(const struct crl_serial *s)
{
	return s->len > 0 && s->len <= CRL_SERIAL_MAX && (s->len == 1 || s->b[0] != 0);
}

void crl_serial_hex(const struct crl_serial *s, char buf[2 * CRL_SERIAL_MAX + 1])
{
	for (uint8_t i = 0; i < s->len && i < CRL_SERIAL_MAX; i++)
		snprintf(buf + 2 * i, 3, "%02x", s->b[i]);
	buf[2 * (s->len <= CRL_SERIAL_MAX ? s->len : 0)] = '\0';
}

int crl_serial_from_hex(const char *hex, size_t n, struct crl_serial *s)
{
	if (n == 0 || n % 2 || n / 2 > CRL_SERIAL_MAX)
		return -EINVAL;
	s->len = (uint8_t)(n / 2);
	if (parse_hex_lower(hex, s->len, s->b))
		return -EINVAL;
	return serial_ok(s) ? 0 : -EINVAL;
}

int crl_text_decode(const char *text, size_t len, struct crl_serial **out, size_t *n)
{
	struct crl_serial *s = calloc(len / 3 + 1, sizeof(*s));   /* ("01\n" at least) */
	size_t pos = 0, cnt = 0;

	if (!s)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - text - pos) : len - pos;

		if (ll && crl_serial_from_hex(text + pos, ll, &s[cnt++])) {
			free(s);
			return -EINVAL;
		}
		pos += ll + 1;
	}
	*out = s;
	*n = cnt;
	return 0;
}

int crl_open(const char *path, struct crl **out)
{
	struct crl *c = calloc(1, sizeof(*c));
	size_t cap = CRL_MAX * (2 * CRL_SERIAL_MAX + 1), got = 0;
	char *text = malloc(cap);
	int rc;

	if (!c || !text || !(c->path = strdup(path))) {
		free(c);
		free(text);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->mu, NULL);
	rc = fdio_read_file(path, text, cap, &got);
	if (rc == -ENOENT) {
		rc = 0;                  /* (no list yet: empty) */
	} else if (rc == -EFBIG) {
		rc = -EINVAL;
	} else if (!rc) {
		/* (loaded without writing: the path is set once merged) */
		struct crl_serial *s = NULL;
		size_t n = 0;
		char *p = c->path;
		c->path = NULL;
		rc = crl_text_decode(text, got, &s, &n);
		if (!rc && (rc = crl_merge(c, s, n)) > 0)
			rc = 0;
		c->path = p;
		free(s);
	}
	free(text);
	if (rc) {
		crl_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void crl_close(struct crl *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c->s);
	free(c->path);
	free(c);
}

int crl_has(struct crl *c, const struct crl_serial *s)
{
	int found;

	pthread_mutex_lock(&c->mu);
	found = c->n && bsearch(s, c->s, c->n, sizeof(*s), crl_cmp) != NULL;
	pthread_mutex_unlock(&c->mu);
	return found;
}

uint64_t crl_generation(struct crl *c)
{
	uint64_t g;

	pthread_mutex_lock(&c->mu);
	g = c->gen;
	pthread_mutex_unlock(&c->mu);
	return g;
}

size_t crl_count(struct crl *c)
{
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = c->n;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* Write the list as c->path, whole (mu held). */
static int save(struct crl *c)
{
	char *text = malloc(c->n * (2 * CRL_SERIAL_MAX + 1) + 1);
	size_t len = 0;
	int rc;

	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		crl_serial_hex(&c->s[i], text + len);
		len += strlen(text + len);
		text[len++] = '\n';
	}
	rc = fdio_write_file(c->path, text, len, 0644);
	free(text);
	return rc;
}

int crl_merge(struct crl *c, const struct crl_serial *s, size_t n)
{
	size_t added = 0;
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < n && !rc; i++) {
		struct crl_serial *grown;
		size_t at = 0;

		if (!serial_ok(&s[i])) {
			rc = -EINVAL;
			break;
		}
		if (c->n && bsearch(&s[i], c->s, c->n, sizeof(s[i]), crl_cmp))
			continue;
		if (c->n == CRL_MAX) {
			rc = -ENOSPC;
			break;
		}
		grown = realloc(c->s, (c->n + 1) * sizeof(*grown));
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		c->s = grown;
		while (at < c->n && crl_cmp(&c->s[at], &s[i]) < 0)
			at++;
		memmove(&c->s[at + 1], &c->s[at], (c->n - at) * sizeof(c->s[0]));
		c->s[at] = s[i];
		c->n++;
		added++;
	}
	if (added) {
		c->gen++;
		if (c->path) {
			int wrc = save(c);
			rc = rc ? rc : wrc;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return rc ? rc : (int)added;
}

void crl_encode_serials(struct wbuf *w, const struct crl_serial *s, size_t n)
{
	wbuf_u16(w, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		wbuf_u8(w, s[i].len);
		wbuf_bytes(w, s[i].b, s[i].len);
	}
}

void crl_encode(struct crl *c, struct wbuf *w)
{
	pthread_mutex_lock(&c->mu);
	crl_encode_serials(w, c->s, c->n);
	pthread_mutex_unlock(&c->mu);
}

int crl_decode(const uint8_t *p, size_t len, struct crl_serial **out, size_t *n)
{
	struct rbuf r;
	struct crl_serial *s;
	size_t count;

	rbuf_init(&r, p, len);
	count = rbuf_u16(&r);
	if (rbuf_error(&r) || count > CRL_MAX)
		return -OFS_ECORRUPT;
	s = calloc(count ? count : 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < count && !rbuf_error(&r); i++) {
		const uint8_t *b;
		s[i].len = rbuf_u8(&r);
		if (s[i].len == 0 || s[i].len > CRL_SERIAL_MAX) {
			rbuf_fail(&r, -OFS_ECORRUPT);
			break;
		}
		b = rbuf_bytes(&r, s[i].len);
		if (b)
			memcpy(s[i].b, b, s[i].len);
		if (b && !serial_ok(&s[i]))
			rbuf_fail(&r, -OFS_ECORRUPT);
	}
	if (rbuf_done(&r)) {
		free(s);
		return -OFS_ECORRUPT;
	}
	*out = s;
	*n = count;
	return 0;
}
