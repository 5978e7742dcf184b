/*
 * ofs_cap.c - the capabilities this client holds (ofs_impl.h).
 *
 * A user's GETATTR or CREATE of a file or directory is answered with a
 * capability (server/access.h); the client keeps it with the objects it
 * reaches - the ones it names (the file or directory and its parts) and
 * the data objects this client made under it (a put's dfiles, before the
 * layout names them) - and sends it with every request on one of them.
 * One about to expire is renewed first, by another GETATTR; one a server
 * calls expired or not valid (a key rotated twice) is renewed and the
 * request sent once more. REMOVE is its directory's to give (server/
 * access.h): a GETATTR showing the directory's capability asks for it
 * (cl_may_remove), and a renewal of one that had it shows it again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/ofs_impl.h"
#include "lib/cap.h"

#define CAPS_N 32                    /* capabilities held, at most */
#define CAPS_MADE 16                 /* data objects made under one */
#define CAPS_RENEW_MAX_S 60          /* renew this long before expiry, at most */

_Static_assert(CAP_MAX_LEN <= CONN_REPLY_CAP_MAX, "a reply's capability slot holds any");

struct capent {
	struct ofs_handle of;            /* granted for (oid zero: free slot) */
	uint8_t bytes[CAP_MAX_LEN];
	size_t len;
	uint64_t got, expires;           /* Unix seconds */
	struct ofs_oid names[CAP_MAX_OIDS];   /* what it covers */
	uint16_t nnames;
	struct ofs_oid made[CAPS_MADE];  /* data objects made under it here */
	uint16_t nmade;
	uint32_t ops;                    /* what it allows (enum cap_op) */
	struct ofs_oid parent;           /* the directory naming it (zero: unknown) */
	uint64_t used;                   /* for eviction: least recently used goes */
};

struct cl_caps {
	pthread_mutex_t mu;
	uint64_t tick;
	struct capent e[CAPS_N];
};

int cl_caps_new(struct cl_caps **out)
{
	struct cl_caps *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->mu, NULL);
	*out = k;
	return 0;
}

void cl_caps_free(struct cl_caps *k)
{
	if (!k)
		return;
	pthread_mutex_destroy(&k->mu);
	free(k);
}

bool cl_is_user(void)
{
	const struct ident *me = conn_identity();

	return me && me->role == IDENT_USER;
}

static bool reaches(const struct capent *e, struct ofs_oid oid)
{
	if (oid_is_zero(e->of.oid))
		return false;
	if (oid_eq(e->of.oid, oid))
		return true;
	for (uint16_t i = 0; i < e->nnames; i++)
		if (oid_eq(e->names[i], oid))
			return true;
	for (uint16_t i = 0; i < e->nmade; i++)
		if (oid_eq(e->made[i], oid))
			return true;
	return false;
}

/* Is e within an eighth of its life (at least 1 s, at most a minute) of
 * expiry? */
static bool stale(const struct capent *e, uint64_t now)
{
	uint64_t margin = (e->expires > e->got ? e->expires - e->got : 0) / 8;

	margin = margin < 1 ? 1 : margin > CAPS_RENEW_MAX_S ? CAPS_RENEW_MAX_S : margin;
	return now + margin >= e->expires;
}

/* The entry reaching oid (the latest to expire), or NULL. Call locked. */
static struct capent *find(struct cl_caps *k, struct ofs_oid oid)
{
	struct capent *best = NULL;

	for (size_t i = 0; i < CAPS_N; i++)
		if (reaches(&k->e[i], oid) && (!best || k->e[i].expires > best->expires))
			best = &k->e[i];
	return best;
}

void cl_caps_take(struct ofs_client *c, const struct ofs_handle *h, struct conn *cn)
{
	struct cl_caps *k = c->caps;
	size_t len = 0;
	const uint8_t *p = conn_reply_cap(cn, &len);
	struct ofs_cap *cap;
	struct capent *e = NULL;

	if (!len || !k || len > CAP_MAX_LEN)
		return;
	cap = malloc(sizeof(*cap));
	if (!cap || cap_decode(p, len, cap)) {
		free(cap);
		return;
	}
	pthread_mutex_lock(&k->mu);
	for (size_t i = 0; i < CAPS_N && !e; i++)
		if (oid_eq(k->e[i].of.oid, h->oid))
			e = &k->e[i];
	if (e && (e->ops & ~cap->ops & CAP_ALL_OPS) && !stale(e, (uint64_t)time(NULL))) {
		/* (a plain GETATTR's answer lacks the REMOVE or creator's rights
		 * held: those stay until they are about to expire) */
		pthread_mutex_unlock(&k->mu);
		free(cap);
		return;
	}
	if (!e) {
		e = &k->e[0];
		for (size_t i = 1; i < CAPS_N; i++)
			if (k->e[i].used < e->used)
				e = &k->e[i];
		e->nmade = 0;
		e->parent = (struct ofs_oid){ { 0 } };
	}
	e->of = *h;
	memcpy(e->bytes, p, len);
	e->len = len;
	e->got = (uint64_t)time(NULL);
	e->expires = cap->expires;
	e->ops = cap->ops;
	e->nnames = cap->noids;
	memcpy(e->names, cap->oids, cap->noids * sizeof(cap->oids[0]));
	e->used = ++k->tick;
	pthread_mutex_unlock(&k->mu);
	free(cap);
}

void cl_caps_parts(struct ofs_client *c, struct ofs_oid oid, const struct ofs_attr *a)
{
	struct cl_caps *k = c->caps;

	if (!k || (a->type != OFS_OBJ_METAFILE && a->type != OFS_OBJ_DIRECTORY))
		return;
	pthread_mutex_lock(&k->mu);
	for (size_t i = 0; i < CAPS_N; i++) {
		struct capent *e = &k->e[i];
		if (!oid_eq(e->of.oid, oid))
			continue;
		e->parent = a->backref.owner;
		e->nnames = 0;
		e->names[e->nnames++] = oid;
		for (uint16_t j = 0; j < a->nparts && e->nnames < CAP_MAX_OIDS; j++)
			e->names[e->nnames++] = a->parts[j].oid;
	}
	pthread_mutex_unlock(&k->mu);
}

int cl_new_oid(struct ofs_oid *out)
{
	const struct ident *me = conn_identity();

	if (me && me->role == IDENT_USER)
		return cap_oid_generate(me->uid, out);
	return oid_generate(out);
}

void cl_caps_alias(struct ofs_client *c, struct ofs_oid owner, struct ofs_oid obj)
{
	struct cl_caps *k = c->caps;
	struct capent *e;

	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	e = find(k, owner);
	if (e && !reaches(e, obj)) {
		if (e->nmade < CAPS_MADE)
			e->made[e->nmade++] = obj;
		else
			e->made[obj.b[0] % CAPS_MADE] = obj;
	}
	pthread_mutex_unlock(&k->mu);
}

/* Copy the capability reaching oid into buf; its length (0: none), and
 * whether it should be renewed first (*old), for what (*of) and showing
 * which directory's (*show: zero, none). */
static size_t copy_for(struct cl_caps *k, struct ofs_oid oid, uint8_t *buf, bool *old,
		       struct ofs_handle *of, struct ofs_oid *show)
{
	uint64_t now = (uint64_t)time(NULL);
	struct capent *e;
	size_t len = 0;

	pthread_mutex_lock(&k->mu);
	e = find(k, oid);
	if (e) {
		*old = stale(e, now);
		*of = e->of;
		*show = (e->ops & CAP_REMOVE) ? e->parent : (struct ofs_oid){ { 0 } };
		memcpy(buf, e->bytes, e->len);
		len = e->len;
		e->used = ++k->tick;
	}
	pthread_mutex_unlock(&k->mu);
	return len;
}

int cl_caps_renew(struct ofs_client *c, struct ofs_oid oid)
{
	struct ofs_attr *a = malloc(sizeof(*a));
	struct ofs_handle of;
	struct ofs_oid show;
	uint8_t buf[CAP_MAX_LEN];
	bool old = false;
	int rc;

	if (!a)
		return -ENOMEM;
	rc = copy_for(c->caps, oid, buf, &old, &of, &show) ?
	     cl_obj_getattr_showing(c, &of, a, show) : -ENOENT;
	free(a);
	return rc;
}

size_t cl_caps_for(struct ofs_client *c, struct ofs_oid oid, uint8_t *buf)
{
	struct ofs_handle of;
	struct ofs_oid show;
	bool old = false;
	size_t len;

	if (!c->caps)
		return 0;
	len = copy_for(c->caps, oid, buf, &old, &of, &show);
	if (len && old) {
		struct ofs_attr *a = malloc(sizeof(*a));
		if (a && cl_obj_getattr_showing(c, &of, a, show) == 0)
			len = copy_for(c->caps, oid, buf, &old, &of, &show);
		free(a);
	}
	return len;
}

void cl_caps_parent(struct ofs_client *c, struct ofs_oid oid, struct ofs_oid dir)
{
	struct cl_caps *k = c->caps;

	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	for (size_t i = 0; i < CAPS_N; i++)
		if (oid_eq(k->e[i].of.oid, oid))
			k->e[i].parent = dir;
	pthread_mutex_unlock(&k->mu);
}

bool cl_caps_sticky(struct ofs_client *c, struct ofs_oid dir)
{
	struct cl_caps *k = c->caps;
	bool yes = false;

	if (!k)
		return false;
	pthread_mutex_lock(&k->mu);
	for (size_t i = 0; i < CAPS_N; i++)
		if (oid_eq(k->e[i].of.oid, dir) && (k->e[i].ops & CAP_STICKY))
			yes = true;
	pthread_mutex_unlock(&k->mu);
	return yes;
}

/* The rights held for h itself (0: none held). */
static uint32_t held(struct cl_caps *k, struct ofs_oid oid)
{
	uint64_t now = (uint64_t)time(NULL);
	uint32_t ops = 0;

	pthread_mutex_lock(&k->mu);
	for (size_t i = 0; i < CAPS_N; i++)
		if (oid_eq(k->e[i].of.oid, oid) && now < k->e[i].expires)
			ops = k->e[i].ops;
	pthread_mutex_unlock(&k->mu);
	return ops;
}

int cl_may(struct ofs_client *c, const struct ofs_handle *h, uint32_t ops)
{
	struct ofs_attr *a;
	int rc;

	if (!c->caps || (held(c->caps, h->oid) & ops) == ops)
		return 0;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	rc = cl_obj_getattr(c, h, a);      /* (answered with the capability) */
	free(a);
	if (!rc && (held(c->caps, h->oid) & ops) != ops)
		rc = -EACCES;
	return rc;
}

int cl_may_remove(struct ofs_client *c, const struct ofs_handle *dir, const struct ofs_handle *h)
{
	struct ofs_attr *a;
	int rc;

	if (!c->caps || (held(c->caps, h->oid) & CAP_REMOVE))
		return 0;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	rc = cl_obj_getattr_showing(c, h, a, dir->oid);   /* (answered with REMOVE, or not) */
	free(a);
	if (!rc && !(held(c->caps, h->oid) & CAP_REMOVE))
		rc = -EACCES;
	return rc;
}
